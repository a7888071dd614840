/* values.c: per-span values inside the target (values.h).  Events are
 * opened on the calling thread (pid 0, any CPU) as one group, so one read()
 * takes them all at one instant; when the kernel lets user space read every
 * one of them (cap_user_rdpmc and an index in its mmap'd page), they are read
 * with rdpmc under the page's seqlock as perf_event_mmap_page documents,
 * without a system call.  Software events have no index: read().  The switch
 * mark is the seqlock of a task-clock page: the kernel rewrites the page when
 * it schedules the thread in, so the word moves across any switch. */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "values.h"

#include "arch.h"

#define RECV_NOI __attribute__((no_instrument_function))

static RECV_NOI int recv_hex(const char **s, uint64_t *v)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(*s, &end, 16);
	if (end == *s || errno)
		return -1;
	*v = x;
	*s = end;
	return 0;
}

static RECV_NOI int recv_nibble(char c)
{
	return c >= '0' && c <= '9'   ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
				      : -1;
}

/* The hex bytes of a path at *s (up to ',' or the end) into out->paths:
 * 1 + where it starts, or 0 when malformed, empty, or too long. */
static RECV_NOI unsigned recv_path(const char **s, struct recv_spec *out)
{
	unsigned at = out->npaths;
	const char *p = *s;
	while (*p && *p != ',') {
		int hi = recv_nibble(p[0]), lo = hi < 0 ? -1 : recv_nibble(p[1]);
		if (lo < 0 || (hi == 0 && lo == 0) || out->npaths + 1 >= RECV_PATHS)
			return 0;
		out->paths[out->npaths++] = (char)(hi << 4 | lo);
		p += 2;
	}
	if (out->npaths == at)
		return 0;
	out->paths[out->npaths++] = 0;
	*s = p;
	return at + 1;
}

RECV_NOI int recv_parse(const char *s, struct recv_spec *out)
{
	memset(out, 0, sizeof *out);
	if (!s || !*s)
		return 0;
	while (*s) {
		if (s[0] == 'a' && (s[1] == ',' || !s[1])) {
			if (out->allocs)
				goto bad;
			out->allocs = 1;
			s++;
		} else if (s[0] == 'e' && s[1] == ':') {
			uint64_t f[5];
			s += 2;
			for (int i = 0; i < 5; i++)
				if (recv_hex(&s, &f[i]) != 0 || (i < 4 && *s++ != ':'))
					goto bad;
			if (out->nev + (out->allocs ? RECV_ALLOCS : 0) >= RECV_MAX ||
			    f[0] > UINT32_MAX || f[4] > 7 || out->allocs)
				goto bad; /* events come first */
			struct recv_event *e = &out->ev[out->nev++];
			e->type = (uint32_t)f[0];
			e->config = f[1];
			e->config1 = f[2];
			e->config2 = f[3];
			e->excl = (unsigned)f[4];
			e->path = 0;
			if (*s == ':') {
				s++;
				if (!(e->path = recv_path(&s, out)))
					goto bad;
			}
		} else {
			goto bad;
		}
		if (*s == ',' && s[1])
			s++;
		else if (*s)
			goto bad;
	}
	out->n = out->nev + (out->allocs ? RECV_ALLOCS : 0);
	if (out->n > RECV_MAX)
		goto bad;
	return 0;
bad:
	memset(out, 0, sizeof *out);
	return -1;
}

static inline int recv_alone(const struct recv_thread *vt, unsigned i)
{
	return (vt->alone >> i) & 1u;
}

static inline int recv_member(const struct recv_thread *vt, unsigned i)
{
	return (vt->member >> i) & 1u;
}

static RECV_NOI int recv_perf_open(struct perf_event_attr *a, int group)
{
	return (int)syscall(SYS_perf_event_open, a, 0, -1, group, PERF_FLAG_FD_CLOEXEC);
}

RECV_NOI void recv_open(const struct recv_spec *sp, struct recv_thread *vt,
			const uint64_t *(*alloc_fn)(void))
{
	recv_close(vt);
	vt->open = 1;
	vt->alone = 0;
	vt->rdpmc = sp->nev > 0;
	for (unsigned i = 0; i < sp->nev; i++) {
		const struct recv_event *e = &sp->ev[i];
		struct perf_event_attr a;
		memset(&a, 0, sizeof a);
		a.size = sizeof a;
		a.type = e->type;
		a.config = e->config;
		a.config1 = e->path ? (uint64_t)(uintptr_t)&sp->paths[e->path - 1] : e->config1;
		a.config2 = e->config2;
		a.exclude_user = !!(e->excl & 1);
		a.exclude_kernel = !!(e->excl & 2);
		a.exclude_hv = !!(e->excl & 4);
		a.read_format = PERF_FORMAT_GROUP;
		a.disabled = !i; /* the group starts whole, below */
		int lead = vt->fd[0];
		vt->fd[i] = i && lead < 0 ? -1 : recv_perf_open(&a, i ? lead : -1);
		if (vt->fd[i] < 0 && i) { /* counts alone, read apart */
			vt->fd[i] = recv_perf_open(&a, -1);
			if (vt->fd[i] >= 0)
				vt->alone |= 1u << i;
		}
	}
	/* A member of another PMU (task-clock beside page-faults) joining a
	 * running group would not count until the thread's next switch in:
	 * the group is enabled once complete. */
	if (sp->nev && vt->fd[0] >= 0)
		ioctl(vt->fd[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
	vt->member = 0;
	for (unsigned i = 0; i < sp->nev; i++) {
		vt->pg[i] = NULL;
		if (vt->fd[i] >= 0) {
			vt->member |= 1u << i;
			void *m = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED,
				       vt->fd[i], 0);
			vt->pg[i] = m == MAP_FAILED ? NULL : m;
		}
		if (!vt->pg[i] || !vt->pg[i]->cap_user_rdpmc || !vt->pg[i]->index)
			vt->rdpmc = 0;
	}
	/* The target's descriptors are its own: a group member, read through
	 * its leader, needs no fd of its own once its page holds it. */
	for (unsigned i = 1; i < sp->nev; i++)
		if (vt->fd[i] >= 0 && vt->pg[i] && !recv_alone(vt, i)) {
			close(vt->fd[i]);
			vt->fd[i] = -1;
		}
	vt->ac = sp->allocs && alloc_fn ? alloc_fn() : NULL;
}

RECV_NOI void recv_close(struct recv_thread *vt)
{
	if (!vt->open) {
		for (unsigned i = 0; i < RECV_MAX; i++)
			vt->fd[i] = -1;
		return;
	}
	for (unsigned i = 0; i < RECV_MAX; i++) {
		if (vt->pg[i])
			munmap(vt->pg[i], (size_t)sysconf(_SC_PAGESIZE));
		if (vt->fd[i] >= 0)
			close(vt->fd[i]);
		vt->fd[i] = -1;
		vt->pg[i] = NULL;
	}
	vt->ac = NULL;
	vt->member = 0;
	vt->open = 0;
}

/* The documented user-space read of one counter; -1: it must be read(). */
static RECV_NOI int recv_read_user(const struct perf_event_mmap_page *pc, uint64_t *out)
{
#if ARCH_HAVE_RDPMC
	const volatile struct perf_event_mmap_page *p = pc;
	uint32_t seq, idx;
	uint64_t count;
	do {
		seq = p->lock;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		idx = p->index;
		count = (uint64_t)p->offset;
		if (!p->cap_user_rdpmc || !idx)
			return -1;
		unsigned width = p->pmc_width;
		uint64_t pmc = arch_rdpmc(idx - 1);
		if (width && width < 64) { /* sign-extend the counter's width */
			pmc <<= 64 - width;
			pmc = (uint64_t)((int64_t)pmc >> (64 - width));
		}
		count += pmc;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
	} while (p->lock != seq);
	*out = count;
	return 0;
#else
	(void)pc;
	(void)out;
	return -1;
#endif
}

RECV_NOI void recv_read(const struct recv_spec *sp, struct recv_thread *vt, uint64_t *v)
{
	unsigned k = 0;
	if (sp->nev) {
		uint64_t buf[1 + RECV_MAX];
		int done = 0;
		if (vt->rdpmc) {
			done = 1;
			for (unsigned i = 0; i < sp->nev && done; i++)
				done = recv_read_user(vt->pg[i], &v[i]) == 0;
		}
		if (!done) {
			memset(v, 0, sp->nev * sizeof *v);
			/* the group in one read; members that opened alone apart */
			if (vt->fd[0] >= 0 && read(vt->fd[0], buf, sizeof buf) >= 16) {
				unsigned nr = buf[0] < sp->nev ? (unsigned)buf[0] : sp->nev;
				for (unsigned i = 0, j = 0; i < sp->nev && j < nr; i++)
					if (recv_member(vt, i) && (i == 0 || !recv_alone(vt, i)))
						v[i] = buf[1 + j++];
			}
			for (unsigned i = 1; i < sp->nev; i++)
				if (vt->fd[i] >= 0 && recv_alone(vt, i) &&
				    read(vt->fd[i], buf, sizeof buf) >= 16)
					v[i] = buf[1];
		}
		k = sp->nev;
	}
	if (sp->allocs) {
		if (vt->ac)
			memcpy(&v[k], vt->ac, RECV_ALLOCS * sizeof *v);
		else
			memset(&v[k], 0, RECV_ALLOCS * sizeof *v);
	}
}

RECV_NOI const volatile uint32_t *recv_switch_mark(struct recv_thread *vt)
{
	if (vt->swpage)
		return &((const struct perf_event_mmap_page *)vt->swpage)->lock;
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	vt->swfd = recv_perf_open(&a, -1);
	if (vt->swfd < 0)
		return NULL;
	void *m = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED, vt->swfd, 0);
	if (m == MAP_FAILED) {
		close(vt->swfd);
		vt->swfd = -1;
		return NULL;
	}
	vt->swpage = m;
	close(vt->swfd); /* the mapping keeps the event: no descriptor of the target's */
	vt->swfd = -1;
	return &((const struct perf_event_mmap_page *)m)->lock;
}

RECV_NOI void recv_switch_close(struct recv_thread *vt)
{
	if (vt->swpage) /* its descriptor was closed when it was mapped */
		munmap(vt->swpage, (size_t)sysconf(_SC_PAGESIZE));
	vt->swpage = NULL;
	vt->swfd = -1;
}
