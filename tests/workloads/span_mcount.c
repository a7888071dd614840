/* span_mcount.c: one program for the tests of -pg and -pg -mfentry builds
 * against the same program built with -finstrument-functions (mcount.bats).
 * Build: cc -O2 -pg [-mfentry] span_mcount.c -o span_mcount -pthread
 *   (or -finstrument-functions instead of -pg)
 *
 * main runs, in this order, each once:
 *   recurse   recursion 6 deep (recurse under recurse ...)
 *   jumper    setjmp()s, then jump_a -> jump_b, which longjmp()s back
 *   tail_a    tail-calls tail_b (a tail call under -O2 -pg: one return)
 *   values    checks what functions return through the return trampoline:
 *             int pair (rax:rdx), double pair (xmm0:xmm1), long double
 *             (st0), a variadic sum of doubles (al and xmm arguments)
 *   threads   two threads, each runs worker, which calls leaf 3 times
 *   forker    fork()s: the child runs child_work, then returns through
 *             the frames it inherited (forker, main), the parent waits
 *   finish    calls exit() from inside its span (main and finish stay open)
 * span_mcount deep N: recurse N deep instead, then finish.
 * span_mcount pexit: a thread runs exiter, which calls exit_inner, which
 * calls pthread_exit() (both stay open), and leaf after it is joined.
 * span_mcount sig N: calls tick N times while a 50 us real-time timer's
 * SIGALRM handler calls leaf (each tick spins; how often the handler ran,
 * and where, varies), then finish.
 * Exit status: 0, or 1 when a value came back wrong (the message says
 * which).  Every function is noinline (and noipa) and has a side effect,
 * so that every build has the same functions, called as often. */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__clang__)
#define FN __attribute__((noinline))
#else
#define FN __attribute__((noinline, noipa))
#endif

static jmp_buf env;
static volatile int sink;
static int bad;

/* through a pointer the compiler cannot follow: no loop made of it */
FN static int recurse(int n);
static int (*volatile recurse_p)(int) = recurse;

FN static int recurse(int n)
{
	return n ? recurse_p(n - 1) + 1 : 0;
}

FN static void jump_b(void)
{
	longjmp(env, 1);
}

FN static void jump_a(void)
{
	jump_b();
	sink++;
}

FN static void jumper(void)
{
	if (setjmp(env) == 0)
		jump_a();
}

FN int tail_b(int x)
{
	sink += x;
	return x * 3;
}

FN int tail_a(int x)
{
	return tail_b(x + 1);
}

struct pair {
	long a, b;
};
struct dpair {
	double x, y;
};

FN static struct pair ipair(long a)
{
	sink++; /* not a pure function: its call stays */
	return (struct pair){a, a * 2};
}

FN static struct dpair dpair(double x)
{
	sink++; /* not a pure function: its call stays */
	return (struct dpair){x, x * 2};
}

FN static long double ldouble(long double x)
{
	sink++; /* not a pure function: its call stays */
	return x / 3;
}

FN static double sumv(int n, ...)
{
	sink++; /* not a pure function: its call stays */
	va_list ap;
	double s = 0;
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		s += va_arg(ap, double);
	va_end(ap);
	return s;
}

FN static void values(void)
{
	struct pair p = ipair(21);
	struct dpair d = dpair(1.5);
	long double l = ldouble(1.0L);
	double s = sumv(4, 0.5, 1.5, 2.5, 3.5);
	if (p.a != 21 || p.b != 42) {
		fprintf(stderr, "span_mcount: ipair returned %ld %ld\n", p.a, p.b);
		bad = 1;
	}
	if (d.x != 1.5 || d.y != 3.0) {
		fprintf(stderr, "span_mcount: dpair returned %g %g\n", d.x, d.y);
		bad = 1;
	}
	if (l != 1.0L / 3) {
		fprintf(stderr, "span_mcount: ldouble returned %Lg\n", l);
		bad = 1;
	}
	if (s != 8.0) {
		fprintf(stderr, "span_mcount: sumv returned %g\n", s);
		bad = 1;
	}
}

FN static void leaf(int i)
{
	sink += i;
}

FN static void *worker(void *arg)
{
	for (int i = 0; i < 3; i++)
		leaf(i);
	return arg;
}

FN static void threads(void)
{
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, worker, NULL) != 0)
			exit(2);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
}

FN static void child_work(void)
{
	leaf(7);
}

FN static void forker(void)
{
	pid_t pid = fork();
	if (pid == 0)
		child_work();
	else if (pid > 0)
		waitpid(pid, NULL, 0);
}

FN static void on_prof(int sig)
{
	leaf(sig);
}

FN static void tick(void)
{
	for (int i = 0; i < 2000; i++)
		sink += i;
	leaf(1);
}

FN static void ticks(int n)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_prof;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, 50}, {0, 50}};
	setitimer(ITIMER_REAL, &it, NULL);
	for (int i = 0; i < n; i++)
		tick();
	memset(&it, 0, sizeof it);
	setitimer(ITIMER_REAL, &it, NULL);
}

FN static void finish(void)
{
	fflush(stdout);
	exit(bad);
}

FN static void exit_inner(void)
{
	sink++;
	pthread_exit(NULL);
}

FN static void *exiter(void *arg)
{
	exit_inner();
	return arg;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "deep") == 0) {
		int n = atoi(argv[2]);
		if (recurse(n) != n)
			bad = 1;
		finish();
	}
	if (argc == 2 && strcmp(argv[1], "pexit") == 0) {
		pthread_t t;
		if (pthread_create(&t, NULL, exiter, NULL) != 0 || pthread_join(t, NULL) != 0)
			exit(2);
		leaf(0);
		finish();
	}
	if (argc == 3 && strcmp(argv[1], "sig") == 0) {
		ticks(atoi(argv[2]));
		finish();
	}
	if (recurse(5) != 5)
		bad = 1;
	jumper();
	if (tail_a(1) != 6)
		bad = 1;
	values();
	threads();
	forker();
	finish();
	return 0;
}
