/* span_cost.c: the span library's cost benchmark (driven by span-bench), plus
 * a small driver that plays spanstat's part of the transport while the CLI
 * is not at hand.  Build with -finstrument-functions and link libspanstat:
 *   cc -O2 -finstrument-functions span_cost.c -o span_cost -lspanstat
 * Only instr_leaf() is instrumented; everything else opts out.
 *
 *   span_cost pairs N    N begin/end pairs through spanstat_begin/end, timed
 *                        between two runs of a null recorder (two TSC reads and
 *                        two stores into a thread-local array) in this process;
 *                        prints "null NS" and "spanstat NS" per pair; then
 *                        N pairs through spanstat_begin_text/end_text of
 *                        "work" in a stack buffer, and of a 32-byte route:
 *                        "text NS", "text32 NS" (issue 24: against spanstat)
 *   span_cost args N     N pairs each with a u64 argument (spanstat_arg_u64,
 *                        issue 24), between two runs of plain pairs: "arg NS"
 *                        and "pair NS" (run it with events streaming:
 *                        --span-args)
 *   span_cost finstr N   N calls of an instrumented function and N calls of an
 *                        identical uninstrumented one; prints "instr NS",
 *                        "plain NS" per call
 *   span_cost drive [-v] [-c CLOCK] [-o FILE] [-s MS] -- CMD ARGS
 *                        runs CMD connected to a pipe as spanstat would (sets
 *                        SPANSTAT_*; preload the library yourself), reads the
 *                        stream, with -v validates it (headers, lengths, ids
 *                        defined before use, nesting), with -o saves the raw
 *                        stream, with -s stalls MS ms before reading (to make
 *                        the target drop), prints counts to stderr and exits
 *                        with CMD's status.
 * Results go to stdout as "KEY VALUE" lines for the script to parse. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "spanstat.h"
#include "wire.h"

#define NOI __attribute__((no_instrument_function))
#define NOINLINE __attribute__((noinline))

static NOI uint64_t cost_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- the null recorder ---------------------------------------------------- */

#define NULL_RING 1024u
static __thread uint64_t null_ring[NULL_RING];
static __thread unsigned null_pos;

static NOI NOINLINE void null_begin(const char *name)
{
	unsigned p = null_pos;
	null_ring[p] = __rdtsc() ^ (uintptr_t)name;
	null_pos = (p + 1) & (NULL_RING - 1);
}

static NOI NOINLINE void null_end(const char *name)
{
	unsigned p = null_pos;
	null_ring[p] = __rdtsc() ^ (uintptr_t)name;
	null_pos = (p + 1) & (NULL_RING - 1);
}

/* Two timestamp reads back to back: the floor of any timestamped pair. */
static NOI double cost_tsc2(long n)
{
	uint64_t t0 = cost_now(), sink = 0;
	for (long i = 0; i < n; i++) {
		sink += __rdtsc();
		sink ^= __rdtsc();
	}
	null_ring[0] = sink;
	return (double)(cost_now() - t0) / (double)n;
}

static NOI double cost_null(long n)
{
	uint64_t t0 = cost_now();
	for (long i = 0; i < n; i++) {
		null_begin("work");
		null_end("work");
	}
	return (double)(cost_now() - t0) / (double)n;
}

static NOI double cost_spans(long n)
{
	uint64_t t0 = cost_now();
	for (long i = 0; i < n; i++) {
		spanstat_begin("work");
		spanstat_end("work");
	}
	return (double)(cost_now() - t0) / (double)n;
}

/* Pairs named by text: the text is looked up by content at each call. */
static NOI double cost_text(long n, const char *name)
{
	char buf[64];
	size_t len = strlen(name);
	memcpy(buf, name, len + 1);
	uint64_t t0 = cost_now();
	for (long i = 0; i < n; i++) {
		spanstat_begin_text(buf, len);
		spanstat_end_text(buf, len);
	}
	return (double)(cost_now() - t0) / (double)n;
}

/* Pairs with a typed argument each. */
static NOI double cost_args(long n)
{
	uint64_t t0 = cost_now();
	for (long i = 0; i < n; i++) {
		spanstat_begin("work");
		spanstat_arg_u64("bytes", (uint64_t)i);
		spanstat_end("work");
	}
	return (double)(cost_now() - t0) / (double)n;
}

/* ---- -finstrument-functions ------------------------------------------------ */

static volatile long cost_sink;

NOINLINE void instr_leaf(long i);
NOINLINE void instr_leaf(long i)
{
	cost_sink = i;
}

NOI NOINLINE void plain_leaf(long i);
NOI NOINLINE void plain_leaf(long i)
{
	cost_sink = i;
}

static NOI double cost_calls(long n, void (*fn)(long))
{
	uint64_t t0 = cost_now();
	for (long i = 0; i < n; i++)
		fn(i);
	return (double)(cost_now() - t0) / (double)n;
}

/* ---- the driver ------------------------------------------------------------ */

#define DRV_MAXPID 64

struct drv_proc {
	uint32_t pid;
	uint8_t *defined;   /* bitmap over ids */
	uint32_t depth[64]; /* per tid slot: open spans (rough nesting check) */
	uint32_t tids[64];
};

struct drv {
	int validate;
	uint64_t bytes, records, events, begins, ends, dropped, bad, undefined, unmatched;
	uint64_t bytype[8];
	struct drv_proc procs[DRV_MAXPID];
	unsigned nprocs;
	uint8_t buf[1u << 16];
	size_t have;
};

static NOI struct drv_proc *drv_proc(struct drv *d, uint32_t pid, int fresh)
{
	struct drv_proc *p = NULL;
	for (unsigned i = 0; i < d->nprocs; i++)
		if (d->procs[i].pid == pid)
			p = &d->procs[i];
	if (!p) {
		if (d->nprocs == DRV_MAXPID)
			return NULL;
		p = &d->procs[d->nprocs++];
		p->pid = pid;
		p->defined = calloc((WIRE_ID_MAX + 1) / 8 + 1, 1);
		fresh = 1;
	}
	if (fresh) {
		memset(p->defined, 0, (WIRE_ID_MAX + 1) / 8 + 1);
		memset(p->depth, 0, sizeof p->depth);
		memset(p->tids, 0, sizeof p->tids);
	}
	return p;
}

static NOI uint32_t *drv_depth(struct drv_proc *p, uint32_t tid)
{
	for (unsigned i = 0; i < 64; i++) {
		if (p->tids[i] == tid || !p->tids[i]) {
			p->tids[i] = tid;
			return &p->depth[i];
		}
	}
	return &p->depth[63];
}

static NOI void drv_record(struct drv *d, const uint8_t *r, const struct wire_hdr *h)
{
	d->records++;
	d->bytype[h->type & 7]++;
	if (!d->validate)
		return;
	struct drv_proc *p = drv_proc(d, h->pid, h->type == WIRE_HELLO);
	if (!p)
		return;
	if (h->type == WIRE_NAME) {
		struct wire_name n;
		memcpy(&n, r + WIRE_HDR_SIZE, sizeof n);
		if (n.id == 0 || n.id > WIRE_ID_MAX || WIRE_HDR_SIZE + sizeof n + n.len > h->len)
			d->bad++;
		else
			p->defined[n.id / 8] |= (uint8_t)(1u << (n.id % 8));
	} else if (h->type == WIRE_EVENTS) {
		uint32_t *depth = drv_depth(p, h->tid);
		for (size_t off = WIRE_HDR_SIZE + 8; off + 8 <= h->len; off += 8) {
			uint64_t w;
			memcpy(&w, r + off, 8);
			uint32_t id = (uint32_t)(w >> WIRE_ID_SHIFT) & WIRE_ID_MAX;
			unsigned op = (unsigned)(w >> WIRE_OP_SHIFT);
			d->events++;
			if (!(p->defined[id / 8] & (1u << (id % 8))))
				d->undefined++;
			if (op == WIRE_OP_BEGIN) {
				d->begins++;
				++*depth;
			} else if (op == WIRE_OP_END) {
				d->ends++;
				if (*depth)
					--*depth;
				else
					d->unmatched++;
			} else if (op == WIRE_OP_COUNTER) {
				off += 8;
			}
		}
	} else if (h->type == WIRE_DROPPED) {
		uint64_t n;
		memcpy(&n, r + WIRE_HDR_SIZE, 8);
		d->dropped += n;
	} else if (h->type == WIRE_THREAD_EXIT) {
		*drv_depth(p, h->tid) = 0;
	}
}

/* Consumes whole records from d->buf; skips bytes that are no header. */
static NOI void drv_parse(struct drv *d)
{
	size_t off = 0;
	while (d->have - off >= WIRE_HDR_SIZE) {
		struct wire_hdr h;
		memcpy(&h, d->buf + off, sizeof h);
		if (h.magic != WIRE_MAGIC || h.check != wire_check(&h) || h.len < WIRE_HDR_SIZE ||
		    h.len > WIRE_MAX_RECORD || h.len % 8) {
			d->bad++;
			off++;
			continue;
		}
		if (d->have - off < h.len)
			break;
		drv_record(d, d->buf + off, &h);
		off += h.len;
	}
	memmove(d->buf, d->buf + off, d->have - off);
	d->have -= off;
}

static NOI int cost_drive(int argc, char **argv)
{
	struct drv *d = calloc(1, sizeof *d);
	const char *clock = "tsc";
	FILE *raw = NULL;
	long stall_ms = 0;
	int i = 2;
	for (; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "-v"))
			d->validate = 1;
		else if (!strcmp(argv[i], "-c") && i + 1 < argc)
			clock = argv[++i];
		else if (!strcmp(argv[i], "-o") && i + 1 < argc)
			raw = fopen(argv[++i], "w");
		else if (!strcmp(argv[i], "-s") && i + 1 < argc)
			stall_ms = atol(argv[++i]);
	}
	if (i + 1 >= argc) {
		fprintf(stderr, "span_cost: drive needs -- COMMAND\n");
		return 2;
	}
	int p[2];
	if (pipe2(p, O_CLOEXEC) != 0)
		return 2;
	int wfd = fcntl(p[1], F_DUPFD, 3); /* inheritable */
	close(p[1]);
	fcntl(p[0], F_SETPIPE_SZ, 1 << 20);
	fcntl(wfd, F_SETFL, O_NONBLOCK);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	struct stat st;
	fstat(p[0], &st);
	char v[128];
	snprintf(v, sizeof v, "%d", wfd);
	setenv("SPANSTAT_FD", v, 1);
	snprintf(v, sizeof v, "%ju:%ju", (uintmax_t)st.st_dev, (uintmax_t)st.st_ino);
	setenv("SPANSTAT_PIPE_ID", v, 1);
	snprintf(v, sizeof v, "/proc/%d/fd/%d", (int)getpid(), p[0]);
	setenv("SPANSTAT_PIPE", v, 1);
	setenv("SPANSTAT_CLOCK", clock, 1);
	/* We keep a write end ourselves: a target that closes all its fds must
	 * not look like the end of the stream; the child's exit ends it. */
	int hold = fcntl(wfd, F_DUPFD_CLOEXEC, 3);
	pid_t pid = fork();
	if (pid == 0) { /* the target gets 0..2 and the pipe, nothing else of ours */
		for (int fd = 3; fd < 1024; fd++)
			if (fd != wfd)
				close(fd);
		execvp(argv[i + 1], argv + i + 1);
		_exit(127);
	}
	close(wfd);
	if (stall_ms > 0) {
		struct timespec ts = {stall_ms / 1000, (stall_ms % 1000) * 1000000};
		nanosleep(&ts, NULL);
	}
	int status = 0, exited = 0;
	uint64_t quit_at = 0;
	/* Drain, then let the pipe fill for a while before polling again: a
	 * reader woken by every record would cost the writer a wakeup each. */
	for (int got = 0;;) {
		ssize_t n = read(p[0], d->buf + d->have, sizeof d->buf - d->have);
		if (n > 0) {
			if (raw)
				fwrite(d->buf + d->have, 1, (size_t)n, raw);
			d->bytes += (uint64_t)n;
			d->have += (size_t)n;
			drv_parse(d);
			got = 1;
			continue;
		}
		if (n == 0)
			break; /* cannot happen while we hold a write end */
		if (got) {
			struct timespec ts = {0, 500000};
			nanosleep(&ts, NULL);
			got = 0;
			continue;
		}
		if (!exited && waitpid(pid, &status, WNOHANG) == pid) {
			exited = 1;
			quit_at = cost_now() + 100000000u; /* stragglers, then stop */
		}
		if (exited && cost_now() > quit_at)
			break;
		struct pollfd pfd = {p[0], POLLIN, 0};
		poll(&pfd, 1, 50);
	}
	if (!exited)
		waitpid(pid, &status, 0);
	if (raw)
		fclose(raw);
	close(hold);
	fprintf(stderr,
		"drive: bytes %" PRIu64 " records %" PRIu64 " events %" PRIu64 " begins %" PRIu64
		" ends %" PRIu64 " dropped %" PRIu64 " bad %" PRIu64 " undefined %" PRIu64
		" unmatched %" PRIu64 " leftover %zu\n",
		d->bytes, d->records, d->events, d->begins, d->ends, d->dropped, d->bad,
		d->undefined, d->unmatched, d->have);
	fprintf(stderr,
		"drive: types events %" PRIu64 " hello %" PRIu64 " name %" PRIu64 " tname %" PRIu64
		" texit %" PRIu64 " exit %" PRIu64 " dropped %" PRIu64 "\n",
		d->bytype[1], d->bytype[2], d->bytype[3], d->bytype[4], d->bytype[5], d->bytype[6],
		d->bytype[7]);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

NOI int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "drive"))
		return cost_drive(argc, argv);
	long n = argc >= 3 ? atol(argv[2]) : 10000000L;
	if (argc < 2 || n <= 0) {
		fprintf(stderr, "usage: span_cost pairs|args|finstr N | drive [-v] -- CMD\n");
		return 2;
	}
	if (!strcmp(argv[1], "pairs")) {
		cost_spans(n / 10); /* warm up: thread buffer, name, page faults */
		double a = cost_null(n), s = cost_spans(n), b = cost_null(n);
		printf("null %.2f\nspanstat %.2f\n", (a + b) / 2, s);
		cost_text(n / 10, "work"); /* warm up: the text's copy */
		cost_text(n / 10, "/api/v1/users/{id}/items/{item}");
		double t = cost_text(n, "work"), s2 = cost_spans(n);
		double t32 = cost_text(n, "/api/v1/users/{id}/items/{item}");
		printf("text %.2f\ntext32 %.2f\nspanstat2 %.2f\n", t, t32, s2);
	} else if (!strcmp(argv[1], "args")) {
		cost_args(n / 10); /* warm up: the key's definition */
		double a = cost_spans(n), g = cost_args(n), b = cost_spans(n);
		printf("pair %.2f\narg %.2f\n", (a + b) / 2, g);
	} else if (!strcmp(argv[1], "finstr")) {
		cost_calls(n / 10, instr_leaf);
		double a = cost_calls(n, plain_leaf), s = cost_calls(n, instr_leaf);
		double b = cost_calls(n, plain_leaf);
		printf("plain %.2f\ninstr %.2f\ntsc2 %.2f\n", (a + b) / 2, s, cost_tsc2(n));
	} else {
		fprintf(stderr, "span_cost: unknown mode '%s'\n", argv[1]);
		return 2;
	}
	return 0;
}
