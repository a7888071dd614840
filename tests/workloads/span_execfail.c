/* span_execfail.c: threads whose execs fail, inside spans, for the exec tests.
 * Build: cc -O2 -g -pthread span_execfail.c -o span_execfail -lspanstat
 *
 *   span_execfail T N   T threads (at most 64), each N times: begin "try",
 *                       execv of a path that does not exist, end "try";
 *                       all inside "outer".  Every exec's flush holds the
 *                       other threads' buffers a moment.  Exits 0, or 2 on
 *                       bad arguments. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include <spanstat.h>

static int iters;

static void *failer(void *arg)
{
	(void)arg;
	char *av[] = {"nope", NULL};
	for (int i = 0; i < iters; i++) {
		spanstat_begin("try");
		execv("/nonexistent/span_execfail", av);
		spanstat_end("try");
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc == 3 ? atoi(argv[1]) : 0;
	iters = argc == 3 ? atoi(argv[2]) : 0;
	if (n < 1 || n > 64 || iters < 1)
		return 2;
	pthread_t t[64];
	spanstat_begin("outer");
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, failer, NULL) != 0)
			return 2;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	spanstat_end("outer");
	return 0;
}
