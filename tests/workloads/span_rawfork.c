/* span_rawfork.c: processes made without fork(), for the span tests.
 * Build: cc -O2 -g span_rawfork.c -o span_rawfork -lspanstat
 *
 * Usage: span_rawfork HOW, HOW one of _Fork (glibc's, which runs no
 * pthread_atfork handlers), clone (a raw clone(SIGCHLD) system call) or fork.
 * The parent records "parent" 1x holding "before" 10x, then makes a child and
 * records "after" 20x in it while the child runs, then waits; the child
 * records "child" 1x holding "child-step" 30x (its own tid) and ends with
 * _exit(0).  Each process also spins a little in every span so that the
 * spans have a length.  Prints "parent PID child PID" on stdout.  The parent
 * exits with the child's status (0). */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <spanstat.h>

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
extern pid_t _Fork(void);
#define HAVE_UFORK 1
#endif

static volatile unsigned long sink;

static void busy(int n)
{
	for (int i = 0; i < n; i++)
		sink += (unsigned long)i;
}

static void spans(const char *name, int n)
{
	for (int i = 0; i < n; i++) {
		spanstat_begin(name);
		busy(20000);
		spanstat_end(name);
	}
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "fork";
	spanstat_begin("parent");
	spans("before", 10);
	pid_t pid;
	if (strcmp(how, "_Fork") == 0) {
#ifdef HAVE_UFORK
		pid = _Fork();
#else
		fprintf(stderr, "span_rawfork: no _Fork in this C library\n");
		return 2;
#endif
	} else if (strcmp(how, "clone") == 0) {
		pid = (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
	} else {
		pid = fork();
	}
	if (pid < 0) {
		perror("span_rawfork");
		return 2;
	}
	if (pid == 0) {
		spanstat_begin("child");
		spans("child-step", 30);
		spanstat_end("child");
		_exit(0);
	}
	spans("after", 20);
	int st;
	if (waitpid(pid, &st, 0) != pid)
		return 2;
	spanstat_end("parent");
	printf("parent %d child %d\n", (int)getpid(), (int)pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
