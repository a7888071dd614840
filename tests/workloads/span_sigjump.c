/* span_sigjump.c: a timer's handler records a span and siglongjmp()s out of
 * whatever the thread was doing (often a recorder call), many times a
 * second, while the thread records spans in a loop.
 * Build: cc -O2 -g span_sigjump.c -o span_sigjump -lspanstat
 * (-DFUNCS -finstrument-functions without -lspanstat: the same with
 * functions leaf, tick and round instead of API spans)
 *
 * Usage: span_sigjump ROUNDS [HZ]: "main" holds ROUNDS "round"s; each
 * sigsetjmp()s, then records "leaf" spans until a SIGALRM handler (HZ,
 * default 2000), after its span "tick", siglongjmp()s back (every second
 * tick; the others return).  Prints "rounds=R ticks=T leaves=L" on stdout:
 * L counts the leaves whose begin returned; the one a jump interrupted may be
 * recorded too, so leaf is L to L + R.  Expected: exactly R round, T tick,
 * every one under main;round, nothing unmatched or unfinished. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#ifdef FUNCS
#define BEGIN(n) ((void)0)
#define END(n) ((void)0)
#else
#include <spanstat.h>
#define BEGIN(n) spanstat_begin(n)
#define END(n) spanstat_end(n)
#endif

static sigjmp_buf env;
static volatile sig_atomic_t ticks, armed; /* armed: env was filled */
static volatile unsigned long leaves, sink;

static __attribute__((noinline)) void tick(void)
{
	BEGIN("tick");
	sink++;
	END("tick");
}

static void on_alarm(int sig)
{
	(void)sig;
	ticks++;
	tick();
	if (armed && ticks % 2 == 0)
		siglongjmp(env, 1);
}

static __attribute__((noinline)) void leaf(void)
{
	BEGIN("leaf");
	leaves++;
	sink++;
	END("leaf");
}

static sigset_t alarm_set; /* SIGALRM alone */

/* Ticks come only once the round's span has begun: the mask saved by
 * sigsetjmp blocks them, and a jump restores it, so none lands between a
 * jump and the next round's begin (it would skip a round unrecorded). */
static __attribute__((noinline)) void round_(void)
{
	BEGIN("round");
	armed = 1;
	sigprocmask(SIG_UNBLOCK, &alarm_set, NULL);
	for (;;)
		leaf();
}

static __attribute__((noinline)) void run(unsigned rounds)
{
	sigprocmask(SIG_BLOCK, &alarm_set, NULL);
	for (volatile unsigned r = 0; r < rounds; r++)
		if (sigsetjmp(env, 1) == 0)
			round_();
}

int main(int argc, char **argv)
{
	unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 200;
	long hz = argc > 2 ? strtol(argv[2], NULL, 10) : 2000;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	sigemptyset(&alarm_set);
	sigaddset(&alarm_set, SIGALRM);
	BEGIN("main");
	struct itimerval it = {{0, 1000000 / hz}, {0, 1000000 / hz}};
	setitimer(ITIMER_REAL, &it, NULL);
	run(rounds);
	sigprocmask(SIG_BLOCK, &alarm_set, NULL); /* no tick after the last round */
	END("main");
	printf("rounds=%u ticks=%d leaves=%lu\n", rounds, (int)ticks, leaves);
	return 0;
}
