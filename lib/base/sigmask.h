/* sigmask.h: the thread's signal mask as the kernel keeps it, the C
 * library's reserved signals (32 to SIGRTMIN-1) included. */
#ifndef SPANSTAT_SIGMASK_H
#define SPANSTAT_SIGMASK_H

#include <signal.h>

/* The kernel's size of a signal set, as the C library passes it. */
#define SIGMASK_KSETSIZE ((size_t)(_NSIG / 8))

/* sigprocmask() that also blocks and restores the C library's reserved
 * signals.  Returns 0 or -errno. */
int sigmask_set(int how, const sigset_t *set, sigset_t *old);

#endif
