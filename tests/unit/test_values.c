/* test_values.c: the span library's per-span values (lib/span/values.c):
 * the SPANSTAT_VALUES parser, and a thread's group of software events read
 * around work whose cost is known, whichever PMU leads the group. */
#include "config.h"
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>

#include "tap.h"
#include "values.h"

#define TV_PAGES 2000

static void test_parse(void)
{
	struct recv_spec s;
	is_int(recv_parse("e:1:2:0:0:0,a", &s), 0, "events then allocations parse");
	is_int((int)s.nev, 1, "one event");
	is_int((int)s.n, 1 + RECV_ALLOCS, "its value and the allocation counts");
	is_int(recv_parse("a,e:1:2:0:0:0", &s), -1, "events after the allocations are refused");
	is_int((int)s.n, 0, "a refused spec is empty");

	/* a uprobe's object travels as the hex of its path */
	is_int(recv_parse("e:8:0:0:1040:0:2f62696e2f78,e:8:1:0:20:0:2f61,a", &s), 0,
	       "events with paths parse");
	is_int((int)s.nev, 2, "both events");
	is_str(&s.paths[s.ev[0].path - 1], "/bin/x", "the first path, decoded");
	is_str(&s.paths[s.ev[1].path - 1], "/a", "the second, after it");
	ok(s.ev[0].config2 == 0x1040 && s.ev[1].config == 1, "the other fields as before");
	is_int(recv_parse("e:1:2:0:0:0", &s), 0, "an event without a path");
	is_int((int)s.ev[0].path, 0, "has none");
	is_int(recv_parse("e:8:0:0:0:0:2f6", &s), -1, "an odd number of hex digits is refused");
	is_int(recv_parse("e:8:0:0:0:0:", &s), -1, "an empty path is refused");
	is_int(recv_parse("e:8:0:0:0:0:2f00", &s), -1, "a NUL inside a path is refused");
	is_int(recv_parse("e:8:0:0:0:0:2fzz", &s), -1, "a non-hex digit is refused");
	static char big[2 * RECV_PATHS + 32];
	int n = snprintf(big, sizeof big, "e:8:0:0:0:0:");
	for (int i = 0; i < RECV_PATHS; i++)
		n += snprintf(big + n, sizeof big - (size_t)n, "61");
	is_int(recv_parse(big, &s), -1, "paths past the room for them are refused");
}

/* An event that cannot open is told by recv_uncounted; the rest count. */
static void test_uncounted(void)
{
	char spec[64];
	snprintf(spec, sizeof spec, "e:%x:%x:0:0:0,e:ffff:0:0:0:0", PERF_TYPE_SOFTWARE,
		 PERF_COUNT_SW_PAGE_FAULTS);
	struct recv_spec s;
	struct recv_thread vt = {.open = 0};
	is_int(recv_parse(spec, &s), 0, "a spec with an event of no PMU parses");
	recv_close(&vt);
	is_int((int)recv_uncounted(&s, &vt), 3, "before opening, nothing counts");
	recv_open(&s, &vt, NULL);
	if (vt.fd[0] < 0) {
		skip(1, "perf_event_open refused software events here");
	} else {
		is_int((int)recv_uncounted(&s, &vt), 2, "only the event of no PMU is uncounted");
	}
	recv_close(&vt);
}

/* Touches TV_PAGES fresh pages: that many page faults. */
static void tv_touch(void)
{
	size_t len = (size_t)TV_PAGES * 4096;
	volatile char *m =
		mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return;
	for (size_t i = 0; i < len; i += 4096)
		m[i] = 1;
	munmap((void *)m, len);
}

static uint64_t tv_thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A group of task-clock and page-faults (two PMUs), in the given order,
 * counts from its first read: the member of the other PMU too. */
static void test_group(int clock_first)
{
	char spec[64];
	snprintf(spec, sizeof spec, "e:%x:%x:0:0:0,e:%x:%x:0:0:0", PERF_TYPE_SOFTWARE,
		 clock_first ? PERF_COUNT_SW_TASK_CLOCK : PERF_COUNT_SW_PAGE_FAULTS,
		 PERF_TYPE_SOFTWARE,
		 clock_first ? PERF_COUNT_SW_PAGE_FAULTS : PERF_COUNT_SW_TASK_CLOCK);
	struct recv_spec s;
	struct recv_thread vt = {.open = 0};
	recv_parse(spec, &s);
	recv_close(&vt);
	recv_open(&s, &vt, NULL);
	if (vt.fd[0] < 0 ||
	    !(vt.member & 2u)) { /* the member counts; its fd is closed once mapped */
		skip(2, "perf_event_open refused software events here");
		recv_close(&vt);
		return;
	}
	uint64_t b[RECV_MAX], e[RECV_MAX];
	unsigned tc = clock_first ? 0 : 1, pf = 1 - tc;
	uint64_t c0 = tv_thread_cpu_ns();
	recv_read(&s, &vt, b);
	tv_touch();
	recv_read(&s, &vt, e);
	uint64_t cpu = tv_thread_cpu_ns() - c0;
	const char *order = clock_first ? "task-clock leading" : "page-faults leading";
	ok(e[pf] - b[pf] >= TV_PAGES, "%s: page faults %llu of %d pages touched", order,
	   (unsigned long long)(e[pf] - b[pf]), TV_PAGES);
	ok(e[tc] - b[tc] >= cpu / 2, "%s: task-clock %llu ns of the thread's %llu", order,
	   (unsigned long long)(e[tc] - b[tc]), (unsigned long long)cpu);
	recv_close(&vt);
}

int main(void)
{
	test_parse();
	test_uncounted();
	test_group(1);
	test_group(0);
	return tap_done();
}
