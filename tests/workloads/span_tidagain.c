/* span_tidagain.c: threads, one after the other, that the kernel gives the
 * same tid, for the test that a tid given again is no loss of records.
 * Build: cc -O2 -g span_tidagain.c -o span_tidagain -lspanstat -lpthread
 *
 *   span_tidagain ROUNDS PAIRS [TID SHORT [raw]]
 *
 * Run in a pid namespace of its own (it writes ns_last_pid there): ROUNDS
 * threads, each started once the one before was joined, each a span
 * "thread" around PAIRS spans "pair"; from the second on, each is given the
 * first one's tid.  With TID, the first one is given TID too (from 255 on
 * the slots the threads claim wrap past the table's end), and only every
 * third thread (the first included) makes PAIRS pairs, the others SHORT:
 * several end between two reads of the rings.  With "raw", every second
 * thread (the second, the fourth...) ends through the exit system call,
 * its spans closed but its end never said (its slot stays owned).  Exits 1
 * when it cannot ask for a tid, 2 when a thread did not get it a thousand
 * times (one given another tid, the one before not reaped yet, makes no
 * span and is tried again). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <spanstat.h>

static long pairs, nshort = -1;
static pid_t tid, first;
static int nround, raw;

static void *work(void *arg)
{
	(void)arg;
	tid = (pid_t)syscall(SYS_gettid);
	if (first && tid != first)
		return NULL; /* the tid is not free yet: no span, tried again */
	long n = nshort >= 0 && nround % 3 ? nshort : pairs;
	spanstat_begin("thread");
	for (long i = 0; i < n; i++) {
		spanstat_begin("pair");
		spanstat_end("pair");
	}
	spanstat_end("thread");
	if (raw && nround % 2)
		syscall(SYS_exit, 0);
	return NULL;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 20;
	pairs = argc > 2 ? atol(argv[2]) : 20000;
	first = argc > 3 ? (pid_t)atoi(argv[3]) : 0;
	if (argc > 4)
		nshort = atol(argv[4]);
	raw = argc > 5 && strcmp(argv[5], "raw") == 0;
	for (int r = 0, tries = 0; r < rounds; r++) {
		nround = r;
		if (first) {
			FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "w");
			if (!f || fprintf(f, "%d", (int)first - 1) < 0 || fclose(f) != 0) {
				perror("span_tidagain: ns_last_pid");
				return 1;
			}
		}
		pthread_t t;
		if (pthread_create(&t, NULL, work, NULL) != 0 || pthread_join(t, NULL) != 0)
			return 1;
		if (!first)
			first = tid;
		else if (tid != first) { /* the one before is not reaped yet */
			if (++tries > 1000) {
				fprintf(stderr, "span_tidagain: round %d got tid %d, not %d\n", r,
					(int)tid, (int)first);
				return 2;
			}
			usleep(100);
			r--;
		}
	}
	return 0;
}
