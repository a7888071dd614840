/* ringsrc.h: spanstat's side of the shared-memory span transport (ring.h).
 * It creates the ring file, and turns the words threads store in their rings
 * back into wire records (WIRE_EVENTS, WIRE_THREAD_EXIT) handed to a callback,
 * in each thread's order.  It trusts nothing in the file. */
#ifndef SPANSTAT_RINGSRC_H
#define SPANSTAT_RINGSRC_H

#include <stddef.h>
#include <stdint.h>

#include "ring.h"

struct ringsrc; /* opaque: ringsrc.c */

/* Receives one whole wire record (header included); non-zero stops a drain
 * and is returned by it. */
typedef int (*ringsrc_fn)(void *ctx, const void *rec, size_t len);

/* A thread's call tree from a slot in aggregate mode (ring.h), checked:
 * node[0] is the root, every other node's parent comes before it; frame[0..
 * depth) are its open spans, outermost first, a frame whose node is >= n
 * belongs to a span the tree had no room for.  Times in the thread's clock. */
struct ringsrc_tree {
	uint32_t pid, tid;
	uint64_t first_ts, last_ts;
	uint64_t instants, counters, unmatched, untracked, deep, dropped;
	uint64_t args; /* arguments it could not keep (ring.h) */
	uint32_t n, depth;
	const struct ring_agg_node *node;
	const struct ring_agg_frame *frame;
	unsigned nvals;			   /* the file's values per span (0: none) */
	const uint64_t *vals;		   /* n rows of nvals sums, then depth rows of the
					    * open spans' begin values, then one more (or
					    * with depth RING_AGG_DEPTH, none): the values
					    * at the last end at that depth (ring.h) */
	const struct ringsrc_switched *sw; /* spans it was switched out in */
	size_t nsw;
	int ended; /* the thread said it ended (its slot DONE): last_ts is
		    * when; else it went with its process */
};

/* A span of an aggregating thread that was switched out (RING_CTL_SWITCHED):
 * its node (checked < n only by the receiver) and times, thread's clock. */
struct ringsrc_switched {
	uint32_t node;
	uint64_t begin, end;
};

/* Receives a thread's tree when the thread or its process is gone. */
typedef int (*ringsrc_tree_fn)(void *ctx, const struct ringsrc_tree *t);

/* A new, empty ring file (a memfd) whose begins and ends carry nvals
 * values (ring.h).  Returns 0 or -errno. */
int ringsrc_new(struct ringsrc **out, unsigned nvals);
/* Which values they are: spanstat_values_id() of the target's
 * SPANSTAT_VALUES (spanenv.h; 0, the default: none).  A process whose own
 * differs does not take the file (it sends through the pipe, where the
 * decoder sees its WIRE_VALUES).  Before the target starts. */
void ringsrc_set_layout(struct ringsrc *r, uint32_t layout);
void ringsrc_free(struct ringsrc *r);
/* The file's descriptor (close-on-exec; the target opens it by path). */
int ringsrc_fd(const struct ringsrc *r);

/* A live drain, in two steps around reading the pipe: ringsrc_snapshot()
 * reads how far each ring is published, then (after the pipe was read, so
 * that every name those words use is known) ringsrc_drain_live() consumes
 * each ring up to there and frees the rings of threads that ended. */
void ringsrc_snapshot(struct ringsrc *r);
/* Where the trees of aggregating threads go (the drains hand them over). */
void ringsrc_set_tree_fn(struct ringsrc *r, ringsrc_tree_fn fn, void *ctx);
int ringsrc_drain_live(struct ringsrc *r, ringsrc_fn fn, void *ctx);

/* Process pid is gone (its EXIT, or a new image's HELLO with timestamp
 * `keep`, was read from the pipe): consumes every word its rings hold and
 * frees them; with keep, only rings of images older than it.  pid 0: every
 * ring (the stream ended). */
int ringsrc_drain_gone(struct ringsrc *r, uint32_t pid, uint64_t keep, ringsrc_fn fn, void *ctx);

/* Rings in use right now (the session polls more often while some are). */
unsigned ringsrc_active(const struct ringsrc *r);
/* Events the target's processes recorded after their exit path had run
 * (ring_file.late): the count, once they are gone. */
uint64_t ringsrc_late(const struct ringsrc *r);
/* The mapped file (RING_FILE_BYTES), for tests and the fuzzer to write into
 * as a target would. */
void *ringsrc_file(struct ringsrc *r);

#endif
