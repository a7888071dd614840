/* values.h: what a span carries besides its times, read inside the target
 * (the recorder's side of spanmetric.h): the perf events of --span-events,
 * counted by each thread on itself in one group, and the allocation counts of
 * --span-allocs kept by libspanstat-alloc; plus the mark that tells whether a
 * thread was switched out (off-CPU) between two instants.  Nothing here
 * prints, exits or allocates on the reading path. */
#ifndef SPANSTAT_SPAN_VALUES_H
#define SPANSTAT_SPAN_VALUES_H

#include <linux/perf_event.h>
#include <stdint.h>

#include "spanenv.h"

#define RECV_MAX 16   /* values per begin and end (SPANMETRIC_MAX) */
#define RECV_ALLOCS 4 /* allocs, frees, alloc bytes, free bytes */

/* One event to count, as spanstat resolved it. */
struct recv_event {
	uint32_t type;
	uint64_t config, config1, config2;
	unsigned excl; /* 1: exclude_user, 2: exclude_kernel, 4: exclude_hv */
	unsigned path; /* a uprobe: 1 + where its object's path starts in the
			* spec's paths (config1 points there when it opens); 0: none */
};

/* Room for the uprobes' paths: half the spec's hex digits, and their NULs. */
#define RECV_PATHS (SPANSTAT_VALUES_MAX / 2 + RECV_MAX)

/* The process's list, from SPANSTAT_VALUES. */
struct recv_spec {
	unsigned nev;
	struct recv_event ev[RECV_MAX];
	int allocs; /* the RECV_ALLOCS counts follow the events */
	unsigned n; /* values in all */
	char paths[RECV_PATHS];
	unsigned npaths; /* bytes of paths used */
};

/* A thread's counters. */
struct recv_thread {
	int fd[RECV_MAX];			   /* the group (fd[0] leads); -1: not counting */
	struct perf_event_mmap_page *pg[RECV_MAX]; /* for rdpmc, or NULL */
	int rdpmc;				   /* every event readable with rdpmc */
	uint32_t alone;				   /* events counting outside the group (bit i) */
	uint32_t member;    /* events counting (bit i); a group member's fd is closed
			     * once its page is mapped, which keeps it counting */
	const uint64_t *ac; /* the thread's allocation counts, or NULL */
	int open;	    /* opened for this thread (and process) */
	/* off-CPU: the thread's own task-clock page, whose seqlock moves at
	 * every switch in (its fd is closed once mapped: the mapping keeps the
	 * event, and the target keeps its descriptors) */
	int swfd;
	void *swpage;
};

/* "e:TYPE:CONFIG:CONFIG1:CONFIG2:EXCL[:PATH],...,a" (hex numbers; PATH, a
 * uprobe's object, as the hex of its bytes, stands for CONFIG1; "a": the
 * allocation counts); 0, or -1 when malformed or too long (then empty). */
int recv_parse(const char *s, struct recv_spec *out);
/* Opens the calling thread's counters; what cannot open reads as 0 (see
 * recv_uncounted). */
void recv_open(const struct recv_spec *sp, struct recv_thread *vt,
	       const uint64_t *(*alloc_fn)(void));
void recv_close(struct recv_thread *vt);
/* The events of sp that the thread's recv_open could not open (bit i). */
static inline uint32_t recv_uncounted(const struct recv_spec *sp, const struct recv_thread *vt)
{
	uint32_t all = sp->nev >= 32 ? UINT32_MAX : (UINT32_C(1) << sp->nev) - 1;
	return vt->open ? all & ~vt->member : all;
}
/* The calling thread's values now, sp->n of them. */
void recv_read(const struct recv_spec *sp, struct recv_thread *vt, uint64_t *v);
/* The thread's switch mark (see ring.h's frames): the address of a word
 * that changes whenever the thread was switched out and back in; NULL when
 * no page could be had. */
const volatile uint32_t *recv_switch_mark(struct recv_thread *vt);
void recv_switch_close(struct recv_thread *vt);

#endif
