/* sigmask.c: the raw signal mask (see sigmask.h). */
#include "config.h"

#include "sigmask.h"

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

int sigmask_set(int how, const sigset_t *set, sigset_t *old)
{
	/* The raw call: the C library's sigprocmask() silently leaves its
	 * reserved signals unblocked, also when restoring a mask that has
	 * them. */
	return syscall(SYS_rt_sigprocmask, how, set, old, SIGMASK_KSETSIZE) < 0 ? -errno : 0;
}
