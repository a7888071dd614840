/* span_signal.c: instrumented code running inside signal handlers while the
 * main thread makes many instrumented calls, for the signal tests.
 * Build: cc -O2 -g -finstrument-functions span_signal.c -o span_signal
 * (-lspanstat and -DAPI for the API mode; spanstat preloads otherwise.)
 *
 * Usage: span_signal CALLS [HZ]: main -> work -> leaf CALLS times, while a
 * SIGALRM timer at HZ (default 1000) runs tick -> leaf in the handler (with
 * -DAPI: spanstat_begin("tick") ... "leaf" ... spanstat_end pairs, and main's
 * loop spans "work" and "leaf" likewise).  A second signal (SIGUSR1, raised
 * by every 4th tick from inside the handler) nests one handler in another:
 * usr1 -> leaf.  Prints "ticks=T usr1=U calls=C" on stdout: the folded
 * stacks must hold tick exactly T times, usr1 U times and leaf C + T + U
 * times, tick never under tick, and no span outside main (SIGALRM is
 * blocked until work has begun and again before it ends, so that every tick
 * lands inside it, never during the thread's start).  Exits 0. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#ifdef API
#include <spanstat.h>
#define BEGIN(n) spanstat_begin(n)
#define END(n) spanstat_end(n)
#else
#define BEGIN(n) ((void)0)
#define END(n) ((void)0)
#endif

static volatile unsigned long sink;
static volatile sig_atomic_t ticks, usr1;

static __attribute__((noinline)) void leaf(unsigned long i)
{
	BEGIN("leaf");
	sink += i;
	END("leaf");
}

static __attribute__((noinline)) void on_usr1_body(void)
{
	BEGIN("usr1");
	leaf(7);
	END("usr1");
}

static void on_usr1(int sig)
{
	(void)sig;
	usr1++;
	on_usr1_body();
}

static __attribute__((noinline)) void tick(void)
{
	BEGIN("tick");
	leaf(3);
	if (ticks % 4 == 0)
		raise(SIGUSR1); /* delivered at once, inside this handler */
	END("tick");
}

static void on_alarm(int sig)
{
	(void)sig;
	ticks++;
	tick();
}

static __attribute__((noinline)) void work(unsigned long calls)
{
	BEGIN("work");
	sigset_t set; /* ticks only inside work: every one nests in it */
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	for (unsigned long i = 0; i < calls; i++)
		leaf(i);
	sigprocmask(SIG_BLOCK, &set, NULL);
	END("work");
}

int main(int argc, char **argv)
{
	unsigned long calls = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
	long hz = argc > 2 ? strtol(argv[2], NULL, 10) : 1000;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	sigset_t set; /* until work has begun (work unblocks it) */
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	struct itimerval it = {{0, 1000000 / hz}, {0, 1000000 / hz}};
	setitimer(ITIMER_REAL, &it, NULL);
	work(calls);
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL); /* SIGALRM stays blocked (work) */
	printf("ticks=%d usr1=%d calls=%lu\n", (int)ticks, (int)usr1, calls);
	return 0;
}
