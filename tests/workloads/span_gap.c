/* span_gap.c: a drop in the middle of a thread's stack, for the span tests.
 * Build: cc -O2 -g span_gap.c -o span_gap -lspanstat
 *
 *   span_gap N M [K]
 * Opens "outer" and inside it "mid", stops the spanstat process named in
 * $SPANSTAT_PIPE (/proc/PID/fd/N) so that its ring fills and events are
 * dropped, records N x "inner" in "mid", ends "mid", opens "mid2" and records
 * N x "inner" in it, all while stopped; then sends SIGCONT, sleeps 100 ms so
 * that spanstat drains, records M x "after" inside "mid2" and ends "mid2"
 * and "outer".  Whatever the drop took, "outer" spans the whole run, "mid2"
 * holds the M "after", and nothing after the drop nests under "mid".
 * With K, mid2 also opens K nested "deep" spans among the dropped events,
 * which hold the "after" spans and end before mid2.
 * With a fourth argument "exec", it execs /bin/true right after SIGCONT,
 * while its ring is still full: the drop must be told all the same.
 * Without $SPANSTAT_PIPE it stops nobody.  Exits 0, or 2 on bad arguments. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <spanstat.h>

#include "reader.h"

static void nap_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
	while (nanosleep(&ts, &ts) != 0)
		;
}

static void inner(long n)
{
	for (long i = 0; i < n; i++) {
		spanstat_begin("inner");
		spanstat_end("inner");
	}
}

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 5)
		return 2;
	long n = atol(argv[1]), m = atol(argv[2]), k = argc > 3 ? atol(argv[3]) : 0;
	int reader = reader_pid();
	spanstat_begin("outer");
	spanstat_begin("mid");
	nap_ms(5);
	reader_signal(reader, SIGSTOP);
	inner(n);
	spanstat_end("mid");
	spanstat_begin("mid2");
	inner(n);
	for (long i = 0; i < k; i++)
		spanstat_begin("deep");
	reader_signal(reader, SIGCONT);
	if (argc > 4 && strcmp(argv[4], "exec") == 0) {
		execl("/bin/true", "true", (char *)NULL);
		return 1;
	}
	nap_ms(100);
	for (long i = 0; i < m; i++) {
		spanstat_begin("after");
		spanstat_end("after");
	}
	for (long i = 0; i < k; i++)
		spanstat_end("deep");
	spanstat_end("mid2");
	spanstat_end("outer");
	return 0;
}
