/* span_vfork.c: a vfork()ed child that makes spans of every kind before
 * it exits or execs, for truespans.bats:
 *   span_vfork _exit|exec|exit [side]
 * main calls vf_parent() 3 times, opens "outer", vforks; the child calls
 * vf_child() 5 times, then _exit(0), execl("/bin/true") or exit(0) (which
 * POSIX leaves undefined, and programs do: it runs the exit handlers, the
 * span library's among them, on the parent's memory); the parent,
 * resumed, ends "outer" and calls vf_parent() 3 times more.  vf_parent
 * makes a "parent" span and calls getppid(), vf_child a "child" span and
 * calls getpid(): with -finstrument-functions or -pg, and --lib-calls, the
 * child makes spans of each kind (the API's, its functions', its library
 * calls), none of which belongs in the parent's tree.  With `side`, the
 * child also declares the category "vf" for "parent" and sends the message
 * "from the child": neither is the parent's.  Built with the span library
 * (-lspanstat). */
#include <spanstat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) static void vf_parent(void)
{
	spanstat_begin("parent");
	getppid();
	spanstat_end("parent");
}

__attribute__((noinline)) static void vf_child(void)
{
	spanstat_begin("child");
	getpid();
	spanstat_end("child");
}

int main(int argc, char **argv)
{
	int ex = argc > 1 && strcmp(argv[1], "exec") == 0;
	int ex_ = argc > 1 && strcmp(argv[1], "exit") == 0;
	int side = argc > 2 && strcmp(argv[2], "side") == 0;
	for (int i = 0; i < 3; i++)
		vf_parent();
	spanstat_begin("outer");
	pid_t pid = vfork();
	if (pid == 0) {
		for (int i = 0; i < 5; i++)
			vf_child();
		if (side) {
			spanstat_category("parent", "vf");
			spanstat_message("from the child");
		}
		if (ex)
			execl("/bin/true", "true", (char *)NULL);
		if (ex_)
			exit(0);
		_exit(0);
	}
	int st = 1;
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 2;
	spanstat_end("outer");
	for (int i = 0; i < 3; i++)
		vf_parent();
	printf("child %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return 0;
}
