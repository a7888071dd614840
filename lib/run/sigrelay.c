/* sigrelay.c: which signals spanstat relays to its target, blocking them,
 * telling its own SIGPIPE from a sent one, and naming them. */
#include "config.h"

#include "sigrelay.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sigmask.h"

/* Every standard signal whose default action is to terminate or dump core.
 * A fault (a real SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP or SIGSYS in
 * spanstat itself) is forced through the block by the kernel and cannot be
 * relayed; blocking those only catches the ones sent with kill(). */
static const struct {
	int signo;
	const char *name;
} sigrelay_std[] = {
	{SIGHUP, "HUP"},       {SIGINT, "INT"},	  {SIGQUIT, "QUIT"},	 {SIGILL, "ILL"},
	{SIGTRAP, "TRAP"},     {SIGABRT, "ABRT"}, {SIGBUS, "BUS"},	 {SIGFPE, "FPE"},
	{SIGUSR1, "USR1"},     {SIGSEGV, "SEGV"}, {SIGUSR2, "USR2"},	 {SIGPIPE, "PIPE"},
	{SIGALRM, "ALRM"},     {SIGTERM, "TERM"},
#ifdef SIGSTKFLT
	{SIGSTKFLT, "STKFLT"},
#endif
	{SIGXCPU, "XCPU"},     {SIGXFSZ, "XFSZ"}, {SIGVTALRM, "VTALRM"}, {SIGPROF, "PROF"},
	{SIGIO, "IO"},
#ifdef SIGPWR
	{SIGPWR, "PWR"},
#endif
	{SIGSYS, "SYS"},
};

#define SIGRELAY_NSTD (sizeof sigrelay_std / sizeof *sigrelay_std)

/* Adds signo to set as the kernel reads it: sigaddset() refuses the C
 * library's reserved signals (32 to SIGRTMIN-1), whose default action still
 * ends a process.  A sigset_t starts with the kernel's bits, one per signal
 * from bit 0, in unsigned longs. */
static void sigrelay_set_bit(sigset_t *set, int signo)
{
	unsigned long *w = (unsigned long *)(void *)set;
	const unsigned bits = 8 * sizeof *w;
	w[(unsigned)(signo - 1) / bits] |= 1UL << ((unsigned)(signo - 1) % bits);
}

/* Whether signo is ignored.  sigaction() refuses the reserved signals: then
 * the kernel is asked, whose struct sigaction starts with the handler. */
static bool sigrelay_ignored(int signo)
{
	struct sigaction sa;
	unsigned long ksa[16];
	if (sigaction(signo, NULL, &sa) == 0)
		return sa.sa_handler == SIG_IGN;
	return syscall(SYS_rt_sigaction, signo, NULL, ksa, SIGMASK_KSETSIZE) == 0 &&
	       ksa[0] == (unsigned long)(uintptr_t)SIG_IGN;
}

static void sigrelay_add(sigset_t *set, int signo)
{
	/* Ignored at start (nohup): it stays ignored, for the target too. */
	if (!sigrelay_ignored(signo))
		sigrelay_set_bit(set, signo);
}

int sigrelay_block(struct sigrelay *sr)
{
	sigset_t mask;

	sigemptyset(&sr->set);
	for (size_t i = 0; i < SIGRELAY_NSTD; i++)
		sigrelay_add(&sr->set, sigrelay_std[i].signo);
	/* Every real-time signal, the C library's reserved ones (32 to
	 * SIGRTMIN-1) too: all of them terminate by default. */
	for (int s = 32; s <= SIGRTMAX; s++)
		sigrelay_add(&sr->set, s);
	mask = sr->set;
	sigaddset(&mask, SIGCHLD);
	return sigmask_set(SIG_BLOCK, &mask, &sr->oldmask);
}

void sigrelay_unblock(const struct sigrelay *sr)
{
	sigmask_set(SIG_SETMASK, &sr->oldmask, NULL);
}

bool sigrelay_foreign(int signo, int code, pid_t sender)
{
	if (signo == SIGCHLD)
		return false;
	/* A write to a broken pipe or socket queues SIGPIPE as if spanstat had
	 * sent it to itself; the write also fails with EPIPE, which is what
	 * spanstat reports. */
	if (signo == SIGPIPE && code == SI_USER && sender == getpid())
		return false;
	return true;
}

int sigrelay_take(const struct sigrelay *sr)
{
	const struct timespec now = {0, 0};
	siginfo_t si;
	int first = 0;

	for (;;) {
		int s = sigtimedwait(&sr->set, &si, &now);
		if (s < 0 && errno == EINTR)
			continue;
		if (s <= 0)
			break;
		if (!first && sigrelay_foreign(s, si.si_code, si.si_pid))
			first = s;
	}
	return first;
}

const char *sigrelay_name(int signo, char *buf, size_t size)
{
	for (size_t i = 0; i < SIGRELAY_NSTD; i++)
		if (sigrelay_std[i].signo == signo)
			return sigrelay_std[i].name;
	if (signo >= SIGRTMIN && signo <= SIGRTMAX)
		snprintf(buf, size, signo == SIGRTMIN ? "RTMIN" : "RTMIN+%d", signo - SIGRTMIN);
	else
		snprintf(buf, size, "%d", signo);
	return buf;
}
