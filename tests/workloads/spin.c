/* spin.c: burns CPU in T threads for MS milliseconds each, in child
 * processes too when asked, so counts must cover threads and children.
 * Usage: spin MS [THREADS] [CHILDREN] */
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long ms;

static void *burn(void *arg)
{
	struct timespec t0, t;
	volatile unsigned long x = 0;
	(void)arg;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do {
		for (int i = 0; i < 10000; i++)
			x += (unsigned long)i;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
	return NULL;
}

int main(int argc, char **argv)
{
	ms = argc > 1 ? atol(argv[1]) : 100;
	int threads = argc > 2 ? atoi(argv[2]) : 1;
	int children = argc > 3 ? atoi(argv[3]) : 0;
	for (int c = 0; c < children; c++)
		if (fork() == 0) {
			burn(NULL);
			_exit(0);
		}
	pthread_t t[64];
	if (threads > 64)
		threads = 64;
	for (int i = 1; i < threads; i++)
		pthread_create(&t[i], NULL, burn, NULL);
	burn(NULL);
	for (int i = 1; i < threads; i++)
		pthread_join(t[i], NULL);
	while (wait(NULL) > 0)
		;
	return 0;
}
