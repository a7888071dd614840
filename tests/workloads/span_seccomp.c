/* span_seccomp.c: a program whose seccomp filter refuses the recorder's
 * system calls halfway, for the test that what could not be sent is counted.
 * Build: cc -O2 -g span_seccomp.c -o span_seccomp -lspanstat
 *
 * Records "before" 10x, then installs a filter under which write(2) to any
 * descriptor but 0-2 fails with EPERM (the recorder's pipe among them), then
 * records 5 spans of names never used before ("after-1".."after-5": their
 * definitions cannot be sent, so the events are dropped) and "before" 10x
 * more (a known name: its events need no system call in a ring).  Exits 0. */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <spanstat.h>

static const char *after[] = {"after-1", "after-2", "after-3", "after-4", "after-5"};

int main(void)
{
	for (int i = 0; i < 10; i++) {
		spanstat_begin("before");
		spanstat_end("before");
	}
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_write, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, 2, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof f / sizeof f[0], f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
		perror("span_seccomp");
		return 2;
	}
	for (int i = 0; i < 5; i++) {
		spanstat_begin(after[i]);
		spanstat_end(after[i]);
	}
	for (int i = 0; i < 10; i++) {
		spanstat_begin("before");
		spanstat_end("before");
	}
	return 0;
}
