/* sigrelay.c: which signals spanstat relays to its target, blocking them,
 * telling its own SIGPIPE from a sent one, and naming them. */
#include "config.h"

#include "sigrelay.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

static void sigrelay_add(sigset_t *set, int signo)
{
	struct sigaction sa;
	/* Ignored at start (nohup): it stays ignored, for the target too. */
	if (sigaction(signo, NULL, &sa) == 0 && sa.sa_handler != SIG_IGN)
		sigaddset(set, signo);
}

int sigrelay_block(struct sigrelay *sr)
{
	sigset_t mask;

	sigemptyset(&sr->set);
	for (size_t i = 0; i < SIGRELAY_NSTD; i++)
		sigrelay_add(&sr->set, sigrelay_std[i].signo);
	/* The real-time signals the C library leaves to programs; all of them
	 * terminate by default. */
	for (int s = SIGRTMIN; s <= SIGRTMAX; s++)
		sigrelay_add(&sr->set, s);
	mask = sr->set;
	sigaddset(&mask, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &mask, &sr->oldmask) < 0)
		return -errno;
	return 0;
}

void sigrelay_unblock(const struct sigrelay *sr)
{
	sigprocmask(SIG_SETMASK, &sr->oldmask, NULL);
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
