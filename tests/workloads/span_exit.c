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
 * Every span ends before the process does. */
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

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "_exit";
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
