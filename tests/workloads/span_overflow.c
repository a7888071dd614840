/* span_overflow.c: a target that dies of a stack overflow inside open
 * spans, for the lossless-ending tests.
 * Build: cc -O0 -g span_overflow.c -o span_overflow -lspanstat
 * "outer" 1x, then "recurse" nested deeper and deeper (one span per level,
 * 16 KiB of stack each) until the stack runs out and SIGSEGV kills it; every
 * span is still open then.  A thread of its own, so its stack is small
 * (1 MiB) and the depth reached is about 60. */
#include <pthread.h>
#include <spanstat.h>
#include <string.h>

static volatile char sink;

static void recurse(int n)
{
	volatile char pad[16384];
	spanstat_begin("recurse");
	memset((char *)pad, n, sizeof pad);
	recurse(n + 1);
	sink = pad[n % sizeof pad];
	spanstat_end("recurse");
}

static void *run(void *arg)
{
	(void)arg;
	spanstat_begin("outer");
	recurse(0);
	spanstat_end("outer");
	return NULL;
}

int main(void)
{
	pthread_attr_t a;
	pthread_t t;
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 1u << 20);
	pthread_create(&t, &a, run, NULL);
	pthread_join(t, NULL);
	return 0;
}
