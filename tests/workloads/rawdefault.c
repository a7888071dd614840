/* rawdefault.c: runs a command with the C library's reserved signals (32 to
 * SIGRTMIN-1) at their default action.  Their disposition survives exec
 * when ignored (GNU make's children get them ignored), and glibc's
 * sigaction() refuses them, so this asks the kernel directly.
 * usage: rawdefault CMD [ARG...] */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	/* An all-zero kernel sigaction is SIG_DFL, no flags, nothing masked,
	 * whatever the architecture's layout. */
	unsigned long act[16];
	memset(act, 0, sizeof act);
	if (argc < 2) {
		fprintf(stderr, "usage: rawdefault CMD [ARG...]\n");
		return 2;
	}
	for (int s = 32; s < SIGRTMIN; s++)
		if (syscall(SYS_rt_sigaction, s, act, NULL, (size_t)(_NSIG / 8)) < 0) {
			perror("rawdefault: rt_sigaction");
			return 2;
		}
	execvp(argv[1], argv + 1);
	perror("rawdefault: exec");
	return 127;
}
