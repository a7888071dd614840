/* span_heldopen.c: spans open at the end that --min-duration holds back.
 * Build: cc -O2 -g -pthread span_heldopen.c -o span_heldopen -lspanstat
 *
 * A thread opens "thread-whole", sleeps 100 ms and returns with it open;
 * main opens "whole", joins the thread, sleeps 100 ms more, opens "brief"
 * and ends at once with both open: by exit(0) (argv[1] "exit" or none),
 * _exit(0) ("_exit"), abort() ("abort") or an exec of /bin/true ("exec").
 * Under --min-duration=1ms, "whole" (about 200 ms) and "thread-whole"
 * (100 ms) lasted long enough to be sent, unfinished; "brief" did not. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <spanstat.h>

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0)
		;
}

static void *thread_main(void *arg)
{
	(void)arg;
	spanstat_begin("thread-whole");
	sleep_ms(100);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "exit";
	pthread_t t;
	spanstat_begin("whole");
	if (pthread_create(&t, NULL, thread_main, NULL) != 0)
		return 1;
	pthread_join(t, NULL);
	sleep_ms(100);
	spanstat_begin("brief");
	if (!strcmp(how, "_exit"))
		_exit(0);
	if (!strcmp(how, "abort"))
		abort();
	if (!strcmp(how, "exec"))
		execl("/bin/true", "true", (char *)NULL);
	exit(0);
}
