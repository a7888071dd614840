/* uprobe_fork.c: calls of known number in a thread and a forked child too,
 * for uprobe:PATH:SYMBOL counted with inherit.
 * usage: uprobe_fork N
 *   calls uprobe_target() N times in main, N times in a thread and N times
 *   in a child; exits 3 when the thread or the fork cannot be made (what an
 *   inherited counter must never cause). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline, used)) int uprobe_target(int x)
{
	__asm__ volatile("" ::: "memory"); /* a body the compiler keeps */
	return x * 3 + 1;
}

static long n;

static void *calls(void *arg)
{
	int (*volatile target)(int) = uprobe_target;
	for (long i = 0; i < n; i++)
		target((int)i);
	return arg;
}

int main(int argc, char **argv)
{
	n = argc > 1 ? strtol(argv[1], NULL, 10) : 10;
	calls(NULL);
	pthread_t t;
	int e = pthread_create(&t, NULL, calls, NULL);
	if (e) {
		fprintf(stderr, "uprobe_fork: pthread_create: %s\n", strerror(e));
		return 3;
	}
	pthread_join(t, NULL);
	pid_t p = fork();
	if (p < 0) {
		fprintf(stderr, "uprobe_fork: fork: %s\n", strerror(errno));
		return 3;
	}
	if (p == 0) {
		calls(NULL);
		_exit(0);
	}
	int st;
	return waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 3;
}
