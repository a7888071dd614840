/* test_offcpu.c: per-thread off-CPU time from context-switch records
 * (lib/perf/offcpu.c), fed as the kernel writes them: intervals and the running
 * sum, threads interleaved, a thread still switched out, records out of
 * order or malformed, lost records; threads' exits and processes' execs
 * and when each thread ended; then a real child that sleeps, spins and
 * exits, when the kernel gives switch records. */
#include <linux/perf_event.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "offcpu.h"
#include "tap.h"

struct buf {
	uint8_t b[65536];
	size_t len;
};

static void sw(struct buf *b, uint32_t pid, uint32_t tid, uint64_t ts, int out)
{
	struct perf_event_header h = {PERF_RECORD_SWITCH,
				      (uint16_t)(out ? PERF_RECORD_MISC_SWITCH_OUT : 0), 24};
	uint32_t id[2] = {pid, tid};
	memcpy(b->b + b->len, &h, 8);
	memcpy(b->b + b->len + 8, id, 8);
	memcpy(b->b + b->len + 16, &ts, 8);
	b->len += 24;
}

static void lost(struct buf *b, uint64_t n)
{
	struct perf_event_header h = {PERF_RECORD_LOST, 0, 24};
	uint64_t id = 0;
	memcpy(b->b + b->len, &h, 8);
	memcpy(b->b + b->len + 8, &id, 8);
	memcpy(b->b + b->len + 16, &n, 8);
	b->len += 24;
}

/* PERF_RECORD_EXIT of thread (pid, tid) at ts, and its sample_id. */
static void texit(struct buf *b, uint32_t pid, uint32_t tid, uint64_t ts)
{
	struct perf_event_header h = {PERF_RECORD_EXIT, 0, 48};
	uint32_t id[4] = {pid, 1, tid, 1};
	memcpy(b->b + b->len, &h, 8);
	memcpy(b->b + b->len + 8, id, 16);
	memcpy(b->b + b->len + 24, &ts, 8);
	memcpy(b->b + b->len + 32, id, 8); /* sample_id: pid, tid, time */
	memcpy(b->b + b->len + 40, &ts, 8);
	b->len += 48;
}

/* PERF_RECORD_COMM of process pid named "sh" at ts: an exec's, or a rename. */
static void comm(struct buf *b, uint32_t pid, uint64_t ts, int exec)
{
	struct perf_event_header h = {PERF_RECORD_COMM,
				      (uint16_t)(exec ? PERF_RECORD_MISC_COMM_EXEC : 0), 40};
	uint32_t id[2] = {pid, pid};
	memcpy(b->b + b->len, &h, 8);
	memcpy(b->b + b->len + 8, id, 8);
	memcpy(b->b + b->len + 16, "sh\0\0\0\0\0\0", 8);
	memcpy(b->b + b->len + 24, id, 8);
	memcpy(b->b + b->len + 32, &ts, 8);
	b->len += 40;
}

/* Ends: a thread's exit, the first exec after a time, the last switch. */
static void test_ends(void)
{
	struct offcpu *o = offcpu_new();
	struct buf b = {.len = 0};
	sw(&b, 7, 8, 100, 1);
	sw(&b, 7, 8, 200, 0);
	texit(&b, 7, 8, 250);
	comm(&b, 7, 900, 1);
	comm(&b, 7, 400, 1); /* read out of order: kept in order */
	comm(&b, 7, 500, 0); /* a rename, not an end */
	sw(&b, 7, 7, 50, 1);
	sw(&b, 7, 7, 60, 0);
	sw(&b, 9, 9, 70, 1);
	ok(offcpu_feed(o, b.b, b.len) == 0, "exit and comm records feed");
	is_int(offcpu_end(o, 7, 8, 100), 250, "a thread that exited: its exit");
	is_int(offcpu_end(o, 7, 8, 260), 400, "after its exit: the process's next exec");
	is_int(offcpu_end(o, 7, 7, 60), 400,
	       "the main thread: the first exec after its last event");
	is_int(offcpu_end(o, 7, 7, 450), 900, "a later image: the exec that replaced it");
	is_int(offcpu_end(o, 7, 12, 0), 400, "a thread never seen ends with its process's image");
	is_int(offcpu_end(o, 9, 9, 10), 70, "no exit known: the thread's last switch");
	is_int(offcpu_end(o, 9, 9, 80), 0, "nothing known after the time asked: 0");
	is_int(offcpu_end(o, 5, 5, 0), 0, "an unknown process: 0");
	is_int(offcpu_end(NULL, 5, 5, 0), 0, "no records at all: 0");
	is_int(offcpu_at(o, 7, 8, 1000), 100, "exits change no off-CPU time");
	uint64_t bad = offcpu_stats(o)->bad;
	b.len = 0;
	struct perf_event_header h = {PERF_RECORD_EXIT, 0, 24};
	memcpy(b.b, &h, 8);
	memset(b.b + 8, 0, 16);
	h.type = PERF_RECORD_COMM;
	h.misc = PERF_RECORD_MISC_COMM_EXEC;
	memcpy(b.b + 24, &h, 8);
	memset(b.b + 32, 0, 16);
	b.len = 48;
	offcpu_feed(o, b.b, b.len);
	is_int(offcpu_stats(o)->bad, bad + 2, "short exit and exec records: bad");
	offcpu_close(o);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The records the live table took (offcpu_set_tap), for a replay. */
static struct buf tapped;
static unsigned tap_over;

static void tap_rec(void *ctx, const void *rec, size_t len)
{
	(void)ctx;
	if (tapped.len + len > sizeof tapped.b) {
		tap_over++;
		return;
	}
	memcpy(tapped.b + tapped.len, rec, len);
	tapped.len += len;
}

/* The tapped records fed one by one to a fresh table: it answers as o
 * does, for thread (pid, pid) from t0 to t1. */
static bool replay_same(struct offcpu *o, uint32_t pid, uint64_t t0, uint64_t t1)
{
	struct offcpu *r = offcpu_new();
	bool same = tap_over == 0;
	for (size_t off = 0; same && off < tapped.len;) {
		struct perf_event_header h;
		memcpy(&h, tapped.b + off, sizeof h);
		same = offcpu_feed(r, tapped.b + off, h.size) == 0;
		off += h.size;
	}
	for (uint64_t ns = t0; same && ns <= t1; ns += (t1 - t0) / 997 + 1)
		same = offcpu_at(r, pid, pid, ns) == offcpu_at(o, pid, pid, ns) &&
		       offcpu_end(r, pid, pid, ns) == offcpu_end(o, pid, pid, ns);
	offcpu_close(r);
	return same;
}

static void test_live(void)
{
	int go[2], back[2];
	if (pipe(go) || pipe(back))
		return;
	pid_t pid = fork();
	if (pid == 0) { /* waits, then execs a shell that sleeps 50 ms and spins ~50 ms */
		char c;
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		execl("/bin/sh", "sh", "-c",
		      "sleep 0.05; i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done", (char *)NULL);
		_exit(127);
	}
	struct offcpu *o = NULL;
	char *cause = NULL;
	int r = offcpu_open(&o, pid, true, &cause);
	if (r < 0) {
		skip(8, "the kernel gives no switch records here");
		free(cause);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return;
	}
	offcpu_set_tap(o, tap_rec, NULL);
	uint64_t t0 = now_ns();
	if (write(go[1], "x", 1) != 1)
		return;
	int st;
	waitpid(pid, &st, 0);
	uint64_t t1 = now_ns();
	ok(offcpu_drain(o) == 0, "a live child's records drain");
	uint64_t off = offcpu_at(o, (uint32_t)pid, (uint32_t)pid, t1) -
		       offcpu_at(o, (uint32_t)pid, (uint32_t)pid, t0);
	diag("child %d: off-CPU %llu ns of %llu", (int)pid, (unsigned long long)off,
	     (unsigned long long)(t1 - t0));
	ok(off >= 45000000, "a 50 ms sleep (and a fork's wait) shows at least 45 ms off-CPU");
	ok(off <= t1 - t0, "never more than the wall time");
	ok(offcpu_stats(o)->threads >= 1, "the child's thread was seen");
	/* the held child's image ends at the exec of sh, sh's at its exit */
	uint64_t ex = offcpu_end(o, (uint32_t)pid, (uint32_t)pid, t0);
	uint64_t end = offcpu_end(o, (uint32_t)pid, (uint32_t)pid, ex + 1);
	diag("child %d: exec %lld ns, exit %lld ns after the start", (int)pid, (long long)(ex - t0),
	     (long long)(end - t0));
	ok(ex > t0 && end >= t0 + 50000000 && end <= t1,
	   "its exec, then its exit after the 50 ms sleep, as the kernel reports them");
	/* the next child (a next run) without the switches: the ends still
	 * come, and the first child's records stay */
	pid_t first = pid;
	uint64_t first_end = end, first_t1 = t1;
	uint64_t first_off = offcpu_at(o, (uint32_t)first, (uint32_t)first, first_t1);
	if (pipe(go) || (pid = fork()) < 0)
		return;
	if (pid == 0) {
		char c;
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		execl("/bin/sh", "sh", "-c", "sleep 0.05; true", (char *)NULL);
		_exit(127);
	}
	r = offcpu_follow(o, pid, false, NULL);
	t0 = now_ns();
	if (r < 0 || write(go[1], "x", 1) != 1) {
		ok(0, "an event for the ends alone opens");
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return;
	}
	waitpid(pid, &st, 0);
	t1 = now_ns();
	offcpu_drain(o);
	ex = offcpu_end(o, (uint32_t)pid, (uint32_t)pid, t0);
	end = offcpu_end(o, (uint32_t)pid, (uint32_t)pid, ex + 1);
	ok(ex > t0 && end >= t0 + 50000000 && end <= t1 &&
		   offcpu_at(o, (uint32_t)pid, (uint32_t)pid, t1) == 0,
	   "without switches: the exec and the exit, and no off-CPU time");
	ok(offcpu_end(o, (uint32_t)first, (uint32_t)first, first_end) == first_end &&
		   offcpu_at(o, (uint32_t)first, (uint32_t)first, first_t1) == first_off,
	   "the first child's exit and off-CPU time stay");
	ok(tapped.len > 0 && replay_same(o, (uint32_t)first, first_t1 - 200000000, first_t1) &&
		   replay_same(o, (uint32_t)pid, t0, t1),
	   "the records it took, fed again one by one, make a table that answers the same");
	offcpu_close(o);
}

/* The off-CPU time before ns of a thread switched out at 1000 i and back at
 * 1000 i + 300, i < n: as offcpu_at must give it. */
static uint64_t brute(unsigned n, uint64_t ns)
{
	uint64_t off = 0;
	for (unsigned i = 0; i < n; i++) {
		uint64_t out = 1000 * (uint64_t)i + 1000, in = out + 300;
		off += ns <= out ? 0 : ns < in ? ns - out : in - out;
	}
	return off;
}

/* offcpu_at starts where its last answer was: in order, backwards, at
 * random, and while more intervals arrive, it answers as a search would. */
static void test_cursor(void)
{
	struct offcpu *o = offcpu_new();
	static struct buf b;
	unsigned n = 0, bad = 0;
	for (unsigned round = 0; round < 4; round++) {
		b.len = 0;
		for (unsigned i = 0; i < 500; i++, n++) {
			sw(&b, 4, 4, 1000 * (uint64_t)n + 1000, 1);
			sw(&b, 4, 4, 1000 * (uint64_t)n + 1300, 0);
		}
		if (offcpu_feed(o, b.b, b.len) != 0)
			bad++;
		for (uint64_t ns = 0; ns < 1000 * (uint64_t)n + 2000; ns += 37) /* in order */
			bad += offcpu_at(o, 4, 4, ns) != brute(n, ns);
		for (uint64_t ns = 1000 * (uint64_t)n + 2000; ns >= 41; ns -= 41) /* backwards */
			bad += offcpu_at(o, 4, 4, ns - 41) != brute(n, ns - 41);
		srand(round + 1);
		for (unsigned k = 0; k < 5000; k++) {
			uint64_t ns = (uint64_t)rand() % (1000 * (uint64_t)n + 2000);
			bad += offcpu_at(o, 4, 4, ns) != brute(n, ns);
		}
	}
	is_int(bad, 0,
	       "offcpu_at answers alike in order, backwards, at random and as intervals come");
	offcpu_close(o);
}

int main(void)
{
	test_cursor();
	struct offcpu *o = offcpu_new();
	struct buf b = {.len = 0};
	sw(&b, 1, 1, 100, 1);
	sw(&b, 1, 2, 150, 1);
	sw(&b, 1, 1, 200, 0);
	sw(&b, 1, 1, 300, 1);
	sw(&b, 1, 1, 350, 0);
	sw(&b, 1, 2, 400, 0);
	ok(offcpu_feed(o, b.b, b.len) == 0, "records feed");
	is_int(offcpu_at(o, 1, 1, 50), 0, "nothing before the first switch");
	is_int(offcpu_at(o, 1, 1, 150), 50, "inside an interval: up to the time asked");
	is_int(offcpu_at(o, 1, 1, 250), 100, "after it: all of it");
	is_int(offcpu_at(o, 1, 1, 325), 125, "inside the second: the first and part of it");
	is_int(offcpu_at(o, 1, 1, 1000), 150, "after both: the sum");
	is_int(offcpu_at(o, 1, 2, 1000), 250, "another thread, interleaved, its own");
	is_int(offcpu_at(o, 1, 3, 1000), 0, "an unknown thread: none");
	is_int(offcpu_at(o, 1, 1, 300) - offcpu_at(o, 1, 1, 200), 0, "a span between: 0");
	/* switched out, not back yet */
	b.len = 0;
	sw(&b, 1, 1, 500, 1);
	offcpu_feed(o, b.b, b.len);
	is_int(offcpu_at(o, 1, 1, 600), 250, "still out: counted up to the time asked");
	/* in any order across one feed (records of several CPUs), sorted */
	b.len = 0;
	sw(&b, 2, 5, 80, 0);
	sw(&b, 2, 5, 60, 1);
	offcpu_feed(o, b.b, b.len);
	is_int(offcpu_at(o, 2, 5, 100), 20, "records sorted by time before they are taken");
	/* older than the thread's last: skipped */
	uint64_t bad = offcpu_stats(o)->bad;
	b.len = 0;
	sw(&b, 2, 5, 10, 1);
	sw(&b, 2, 5, 20, 0);
	offcpu_feed(o, b.b, b.len);
	is_int(offcpu_stats(o)->bad, bad + 2, "records older than their thread's last are skipped");
	is_int(offcpu_at(o, 2, 5, 100), 20, "and change nothing");
	/* malformed */
	b.len = 0;
	lost(&b, 7);
	struct perf_event_header h = {PERF_RECORD_SWITCH, 0, 12};
	memcpy(b.b + b.len, &h, 8);
	b.len += 12;
	h.size = 4;
	memcpy(b.b + b.len, &h, 8);
	b.len += 8;
	offcpu_feed(o, b.b, b.len);
	is_int(offcpu_stats(o)->lost, 7, "lost records are counted");
	ok(offcpu_stats(o)->bad >= bad + 4, "a short record and a size below the header: bad");
	offcpu_close(o);
	test_ends();
	test_live();
	return tap_done();
}
