/* span_fork.c: spans across fork and exec, for the span tests.
 * Build: cc -O2 -g span_fork.c -o span_fork -lspanstat
 *
 *   span_fork        parent: "parent" 1x containing "fork" 1x and "wait" 1x;
 *                    it forks one child, which records "child" 1x containing
 *                    3x "child-step", then begins "at-exec" and execs itself
 *                    as `span_fork exec` with "at-exec" still open (spanstat
 *                    closes it as unfinished)
 *   span_fork exec   the new image: "exec-image" 1x containing 2x "exec-step",
 *                    then exits 0
 * So three processes appear (parent, child, exec'd child with the child's
 * pid); the parent exits with the child's status (0). */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <spanstat.h>

static volatile unsigned long sink;

static void busy(int n)
{
	for (int i = 0; i < n; i++)
		sink += (unsigned long)i;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "exec") == 0) {
		spanstat_begin("exec-image");
		for (int i = 0; i < 2; i++) {
			spanstat_begin("exec-step");
			busy(100000);
			spanstat_end("exec-step");
		}
		spanstat_end("exec-image");
		return 0;
	}
	spanstat_begin("parent");
	spanstat_begin("fork");
	pid_t pid = fork();
	if (pid == 0) {
		spanstat_begin("child");
		for (int i = 0; i < 3; i++) {
			spanstat_begin("child-step");
			busy(100000);
			spanstat_end("child-step");
		}
		spanstat_end("child");
		spanstat_begin("at-exec");
		execl("/proc/self/exe", argv[0], "exec", (char *)NULL);
		perror("span_fork: exec");
		_exit(126);
	}
	spanstat_end("fork");
	int status = 1;
	spanstat_begin("wait");
	if (pid > 0)
		waitpid(pid, &status, 0);
	spanstat_end("wait");
	spanstat_end("parent");
	return pid > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
