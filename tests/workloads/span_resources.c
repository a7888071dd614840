/* span_resources.c: what recording costs the target in descriptors and
 * address space, for the resource tests.
 * Build: cc -O2 -g -pthread span_resources.c -o span_resources -lspanstat
 *
 * Usage: span_resources THREADS MIB: THREADS threads each begin a span
 * "t" and wait until all are inside theirs; then the main thread counts its
 * process's open descriptors and prints "fds=N"; the threads end their spans
 * and are joined; then one malloc of MIB MiB is tried and touched, printed as
 * "alloc=ok" or "alloc=failed".  Exits 0. */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <spanstat.h>

static pthread_barrier_t inside, done;

static void *run(void *arg)
{
	(void)arg;
	spanstat_begin("t");
	pthread_barrier_wait(&inside);
	pthread_barrier_wait(&done);
	spanstat_end("t");
	return NULL;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	if (!d)
		return -1;
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own */
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;
	size_t mib = argc > 2 ? strtoul(argv[2], NULL, 10) : 0;
	pthread_t *th = calloc((size_t)n, sizeof *th);
	if (!th || n < 0)
		return 2;
	pthread_barrier_init(&inside, NULL, (unsigned)n + 1);
	pthread_barrier_init(&done, NULL, (unsigned)n + 1);
	for (int i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, run, NULL) != 0)
			return 2;
	pthread_barrier_wait(&inside);
	printf("fds=%d\n", count_fds());
	pthread_barrier_wait(&done);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	if (mib) {
		char *p = malloc(mib << 20);
		if (p)
			memset(p, 1, 4096);
		printf("alloc=%s\n", p ? "ok" : "failed");
		free(p);
	}
	return 0;
}
