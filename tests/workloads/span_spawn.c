/* span_spawn.c: children started without fork(): posix_spawn() (whose exec
 * the library cannot wrap) and vfork() + execv(), for the exec tests.
 * Build: cc -O2 -g span_spawn.c -o span_spawn -lspanstat
 *
 *   span_spawn         records "parent" 1x, inside it starts itself as
 *                      `span_spawn child` once with posix_spawn() and once
 *                      with vfork() + execv(), waiting for each
 *   span_spawn child   records "spawned" 1x containing "spawn-step" 2x
 * So "parent" 1, "spawned" 2, "spawned;spawn-step" 4.  Exits 0, or 1 when a
 * child could not be started or failed. */
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <spanstat.h>

extern char **environ;

static volatile unsigned long sink;

static int child(void)
{
	spanstat_begin("spawned");
	for (int i = 0; i < 2; i++) {
		spanstat_begin("spawn-step");
		for (int k = 0; k < 10000; k++)
			sink += (unsigned long)k;
		spanstat_end("spawn-step");
	}
	spanstat_end("spawned");
	return 0;
}

static int ok(pid_t pid)
{
	int status;
	return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	       WEXITSTATUS(status) == 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "child") == 0)
		return child();
	char *args[] = {argv[0], "child", NULL};
	int good = 1;
	spanstat_begin("parent");
	pid_t pid;
	good &= posix_spawn(&pid, "/proc/self/exe", NULL, NULL, args, environ) == 0 && ok(pid);
	pid = vfork();
	if (pid == 0) {
		execv("/proc/self/exe", args);
		_exit(127);
	}
	good &= ok(pid);
	spanstat_end("parent");
	return good ? 0 : 1;
}
