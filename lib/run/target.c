/* target.c: the spawn and attach targets (target.h).  A process's end is
 * seen through a pidfd; a thread's too where the kernel has PIDFD_THREAD
 * (Linux 6.9), and otherwise by looking for it in /proc at each wakeup of
 * the session (at least once a second). */
#include "config.h"
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cause.h"
#include "target.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD 0x80 /* O_EXCL: a pidfd for a thread (Linux 6.9) */
#endif

enum { WATCH_ENDED = -1, WATCH_PROC = -2 };

extern char **environ;

/* A foreign signal sent to spanstat, passed on to the command.  A
 * terminal's signal reaches the whole foreground group, the command
 * included: only what was sent with kill() and the like is relayed.  A
 * kill() to the process group cannot be told from one to spanstat alone:
 * the command gets that one twice. */
static void target_relay(pid_t pid, const struct signalfd_siginfo *si)
{
	if (si->ssi_code == SI_QUEUE) /* keep sigqueue()'s value */
		sigqueue(pid, (int)si->ssi_signo,
			 (union sigval){.sival_ptr = (void *)(uintptr_t)si->ssi_ptr});
	else if (si->ssi_code != SI_KERNEL)
		kill(pid, (int)si->ssi_signo);
}

/* Reaps the command if it has exited. */
static bool target_reaped(struct target *t, struct target_end *end)
{
	if (wait4(t->pid, &end->wstatus, WNOHANG, &end->ru) != t->pid)
		return false;
	end->has_status = true;
	return true;
}

static void target_unhold(struct target *t)
{
	if (t->held)
		launch_abort(&t->l);
	t->held = false;
}

/* --- spawn ------------------------------------------------------------------ */

static int spawn_open(struct target *t, struct counters *cs, const struct evlist *evl, char **cause)
{
	if (t->delayed)
		return counters_open_held(cs, evl, t->pid, cause);
	return counters_open(cs, evl, t->pid, cause);
}

static int spawn_go(struct target *t)
{
	t->held = false;
	return launch_go(&t->l);
}

static size_t spawn_fds(struct target *t, struct pollfd *pfd, size_t max)
{
	(void)t, (void)pfd, (void)max;
	return 0; /* its end comes as SIGCHLD, on the session's signalfd */
}

static enum target_signal spawn_signal(struct target *t, const struct signalfd_siginfo *si)
{
	target_relay(t->pid, si);
	return TARGET_SIGNAL_RELAYED;
}

static bool spawn_ended(struct target *t, const struct pollfd *pfd, size_t n,
			struct target_end *end)
{
	(void)pfd, (void)n;
	if (!target_reaped(t, end))
		return false;
	end->rusage_known = true;
	return true;
}

static void spawn_stop(struct target *t)
{
	(void)t; /* the counters stopped with the last task */
}

static const struct target_ops spawn_ops = {
	.open = spawn_open,
	.go = spawn_go,
	.fds = spawn_fds,
	.signal = spawn_signal,
	.ended = spawn_ended,
	.stop = spawn_stop,
	.close = target_unhold,
};

int target_spawn(struct target *t, char *const argv[], char *const envp[], int keep_fd)
{
	memset(t, 0, sizeof *t);
	t->ops = &spawn_ops;
	t->argv = argv;
	int r = launch_start(&t->l, argv, envp, keep_fd);
	if (r < 0)
		return r;
	t->held = true;
	t->pid = t->l.pid;
	return 0;
}

/* --- attach ----------------------------------------------------------------- */

static int attach_open(struct target *t, struct counters *cs, const struct evlist *evl,
		       char **cause)
{
	int r = counters_open_at(cs, evl, t->at->at, t->at->n, t->at->inherit, cause);
	if (r >= 0) {
		t->cs = cs;
		return r;
	}
	char *why = cause ? *cause : NULL;
	if (cause)
		*cause = NULL;
	cause_set(cause, r, "cannot count %s: %s", t->at->what, why ? why : strerror(-r));
	free(why);
	return r;
}

static int attach_go(struct target *t)
{
	if (!t->delayed)
		counters_enable(t->cs); /* from now, not from their opening */
	if (t->argv) {			/* bounded by a command, run as is */
		int r = launch_start(&t->l, t->argv, environ, -1);
		if (r < 0)
			return r;
		t->pid = t->l.pid;
		return launch_go(&t->l);
	}
	t->pidfd = calloc(t->at->nwatch ? t->at->nwatch : 1, sizeof *t->pidfd);
	if (!t->pidfd)
		return -ENOMEM;
	for (size_t i = 0; i < t->at->nwatch; i++) {
		pid_t id = t->at->watch[i];
		int fd = (int)syscall(SYS_pidfd_open, id, 0);
		/* a thread that leads no process: EINVAL before Linux 6.9,
		 * ENOENT since (without PIDFD_THREAD) */
		if (fd < 0 && (errno == EINVAL || errno == ENOENT))
			fd = (int)syscall(SYS_pidfd_open, id, PIDFD_THREAD);
		t->pidfd[i] = fd >= 0 ? fd : WATCH_PROC;
		t->live++;
	}
	return 0;
}

static size_t attach_fds(struct target *t, struct pollfd *pfd, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; t->pidfd && i < t->at->nwatch && n < max; i++)
		pfd[n++] = (struct pollfd){t->pidfd[i], POLLIN, 0}; /* < 0: poll skips it */
	return n;
}

static enum target_signal attach_signal(struct target *t, const struct signalfd_siginfo *si)
{
	if (t->pid <= 0)
		return TARGET_SIGNAL_STOP;
	target_relay(t->pid, si);
	return TARGET_SIGNAL_RELAYED;
}

static bool attach_ended(struct target *t, const struct pollfd *pfd, size_t n,
			 struct target_end *end)
{
	if (t->pid > 0) {
		if (!target_reaped(t, end))
			return false;
		end->rusage_known = false; /* the bounding command's, not the tasks' */
		return true;
	}
	for (size_t i = 0; t->pidfd && i < t->at->nwatch; i++) {
		bool gone = false;
		if (t->pidfd[i] >= 0 && i < n) {
			gone = pfd[i].revents != 0;
		} else if (t->pidfd[i] != WATCH_ENDED) { /* no pidfd, or beyond max */
			char path[64];
			snprintf(path, sizeof path, "/proc/%d/stat", (int)t->at->watch[i]);
			gone = access(path, F_OK) != 0;
		}
		if (gone) {
			if (t->pidfd[i] >= 0)
				close(t->pidfd[i]);
			t->pidfd[i] = WATCH_ENDED;
			t->live--;
		}
	}
	/* CPUs watch nothing: only a signal ends their count */
	return t->at->nwatch && t->live == 0;
}

static void attach_close(struct target *t)
{
	for (size_t i = 0; t->pidfd && i < t->at->nwatch; i++)
		if (t->pidfd[i] >= 0)
			close(t->pidfd[i]);
	free(t->pidfd);
	t->pidfd = NULL;
	if (t->pid > 0) {
		/* a bounding command whose end was not seen: reaped so it is no
		 * zombie (it runs on as spanstat's orphan otherwise) */
		int st;
		waitpid(t->pid, &st, WNOHANG);
	}
}

static void attach_stop(struct target *t)
{
	counters_disable(t->cs);
}

static const struct target_ops attach_ops = {
	.open = attach_open,
	.go = attach_go,
	.fds = attach_fds,
	.signal = attach_signal,
	.ended = attach_ended,
	.stop = attach_stop,
	.close = attach_close,
};

int target_attach(struct target *t, const struct attach *at, char *const argv[])
{
	memset(t, 0, sizeof *t);
	t->ops = &attach_ops;
	t->pid = -1;
	t->at = at;
	t->argv = argv;
	return 0;
}
