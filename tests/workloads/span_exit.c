/* span_exit.c: processes that end without running destructors, for the
 * lossless-ending tests.
 * Build: cc -O2 -g span_exit.c -o span_exit -lspanstat
 *
 *   span_exit _exit    100x "work", then _exit(3)
 *   span_exit _Exit    100x "work", then _Exit(3)
 *   span_exit fork     forks a child that records 50x "child" and calls
 *                      _exit(0); the parent waits, records 10x "parent" and
 *                      returns the child's status
 *   span_exit vfork    records 10x "parent", vforks a child that calls
 *                      _exit(0) at once, then records 10x "parent" again and
 *                      returns 0 (the vfork child must not send the parent's
 *                      buffered events a second time)
 *   span_exit kill     3 threads record 1000x "thread-work" each and wait;
 *                      main records 1000x "work", begins "open" and kills
 *                      the whole process with SIGKILL
 *   span_exit orphan   forks a child that records 10x "child", begins
 *                      "held", tells the parent so and lives on after it
 *                      for 5 s (its stdio closed), then ends "held" and
 *                      records 10x "later"; the parent records 10x
 *                      "parent", sleeps 200 ms and returns 0
 *   span_exit quiet    as orphan, but the child records nothing before
 *                      it tells the parent (no "child", no "held"): only
 *                      its 10x "later", 5 s on
 *   span_exit leader   forks a child whose second thread records 10x
 *                      "thread", tells the parent so and lives on 5 s (its
 *                      stdio closed) while the child's main thread ends
 *                      with pthread_exit (the process runs on: /proc shows
 *                      its leader a zombie); the parent records 10x
 *                      "parent" and returns 0
 *   span_exit threads N
 *                      N threads alive at once record 10x "t" each (more
 *                      threads than spanstat has rings: the rest use the
 *                      pipe), then all end and the process returns 0
 * Every span ends before the process does, but "open" in kill mode. */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <spanstat.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile unsigned long sink;

static void spans(const char *name, int n)
{
	for (int i = 0; i < n; i++) {
		spanstat_begin(name);
		sink += (unsigned long)i;
		spanstat_end(name);
	}
}

static pthread_barrier_t bar;
static int told_fd;

/* leader mode's thread: records, tells, lives on after the process's main
 * thread ended */
static void *outliver(void *arg)
{
	(void)arg;
	spans("thread", 10);
	if (write(told_fd, "x", 1) != 1)
		_exit(1);
	sleep(5);
	spans("later", 10);
	return NULL;
}

static void *worker(void *arg)
{
	spans(arg, strcmp(arg, "t") == 0 ? 10 : 1000);
	pthread_barrier_wait(&bar); /* every thread has recorded */
	pthread_barrier_wait(&bar); /* kill mode: never passed */
	return NULL;
}

/* n threads record, wait until all did, then (unless kill) all end. */
static int threads(const char *name, int n, int kill_after)
{
	pthread_t *t = calloc((size_t)n, sizeof *t);
	if (!t || pthread_barrier_init(&bar, NULL, (unsigned)n + 1) != 0)
		return 1;
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)name) != 0)
			return 1;
	pthread_barrier_wait(&bar);
	if (kill_after) {
		spans("work", 1000);
		spanstat_begin("open");
		kill(getpid(), SIGKILL);
	}
	pthread_barrier_wait(&bar);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "_exit";
	if (strcmp(mode, "kill") == 0)
		return threads("thread-work", 3, 1);
	if (strcmp(mode, "threads") == 0)
		return threads("t", argc > 2 ? atoi(argv[2]) : 300, 0);
	if (strcmp(mode, "fork") == 0) {
		pid_t pid = fork();
		if (pid == 0) {
			spans("child", 50);
			_exit(0);
		}
		int st = 0;
		waitpid(pid, &st, 0);
		spans("parent", 10);
		return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
	}
	if (strcmp(mode, "orphan") == 0 || strcmp(mode, "quiet") == 0) {
		int told[2];
		if (pipe(told) != 0)
			return 1;
		bool quiet = mode[0] == 'q';
		pid_t pid = fork();
		if (pid == 0) {
			if (!quiet) {
				spans("child", 10);
				spanstat_begin("held"); /* open, asleep, when the run ends */
			}
			for (int fd = 0; fd <= 2; fd++) /* nothing of the caller's held */
				close(fd);
			if (write(told[1], "x", 1) != 1)
				_exit(1);
			sleep(5); /* the parent is long gone */
			if (!quiet)
				spanstat_end("held");
			spans("later", 10);
			_exit(0);
		}
		close(told[1]);
		char c;
		if (read(told[0], &c, 1) != 1)
			return 1;
		spans("parent", 10);
		usleep(200000); /* "held" is open, off the CPU, all this time */
		return 0;
	}
	if (strcmp(mode, "leader") == 0) {
		int told[2];
		if (pipe(told) != 0)
			return 1;
		if (fork() == 0) {
			pthread_t t;
			for (int fd = 0; fd <= 2; fd++) /* nothing of the caller's held */
				close(fd);
			told_fd = told[1];
			if (pthread_create(&t, NULL, outliver, NULL) != 0)
				_exit(1);
			pthread_exit(NULL);
		}
		close(told[1]);
		char c;
		if (read(told[0], &c, 1) != 1)
			return 1;
		spans("parent", 10);
		return 0;
	}
	if (strcmp(mode, "vfork") == 0) {
		spans("parent", 10);
		pid_t pid = vfork();
		if (pid == 0)
			_exit(0);
		waitpid(pid, NULL, 0);
		spans("parent", 10);
		return 0;
	}
	spans("work", 100);
	if (strcmp(mode, "_Exit") == 0)
		_Exit(3);
	_exit(3);
}
