/* span_execdrop.c: an exec while another thread is in the middle of a drop.
 * Build: cc -O2 -g -pthread span_execdrop.c -o span_execdrop -lspanstat
 *
 * Stops spanstat ($SPANSTAT_PIPE, reader.h), starts a thread that makes
 * begin/end pairs of "p" without pause (its ring fills: it drops), waits
 * 300 ms, wakes spanstat and execs /bin/true at once, the thread still
 * dropping.  Without $SPANSTAT_PIPE it stops nobody.  Exits as /bin/true. */
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <spanstat.h>

#include "reader.h"

static void *spin(void *arg)
{
	(void)arg;
	for (;;) {
		spanstat_begin("p");
		spanstat_end("p");
	}
	return NULL;
}

int main(void)
{
	int reader = reader_pid();
	spanstat_begin("p"); /* defined before the drop */
	spanstat_end("p");
	spanstat_begin("outer");
	reader_signal(reader, SIGSTOP);
	pthread_t th;
	if (pthread_create(&th, NULL, spin, NULL) != 0)
		return 2;
	struct timespec ts = {0, 300000000};
	nanosleep(&ts, NULL);
	reader_signal(reader, SIGCONT);
	char *av[] = {"/bin/true", NULL};
	execv("/bin/true", av);
	return 1;
}
