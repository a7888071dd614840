/* test_offcpu.c: per-thread off-CPU time from context-switch records
 * (lib/offcpu.c), fed as the kernel writes them: intervals and the running
 * sum, threads interleaved, a thread still switched out, records out of
 * order or malformed, lost records; then a real child that sleeps and
 * spins, when the kernel gives switch records. */
#include <linux/perf_event.h>
#include <signal.h>
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

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
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
	int r = offcpu_open(&o, pid, &cause);
	if (r < 0) {
		skip(4, "the kernel gives no switch records here");
		free(cause);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return;
	}
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
	offcpu_close(o);
}

int main(void)
{
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
	test_live();
	return tap_done();
}
