/* target.h: what a session counts, behind one interface: a command spanstat
 * spawns (launch.h), or tasks and CPUs it attaches to (attach.h), bounded by
 * a command it runs uncounted or by their own end.  A target opens the
 * counters on what it is, is let go, names the fds whose readiness may mean
 * its end, takes the signals sent to spanstat, and finishes with what it can
 * know of how it ended.  The session's loop is the same for every kind. */
#ifndef SPANSTAT_TARGET_H
#define SPANSTAT_TARGET_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/types.h>

#include "attach.h"
#include "counters.h"
#include "evlist.h"
#include "launch.h"

/* How a target ended. */
struct target_end {
	bool has_status;   /* a command ended: wstatus is its status */
	int wstatus;	   /* as wait4 gives it */
	bool rusage_known; /* ru is the counted command's, from wait4 */
	struct rusage ru;
};

/* What a signal sent to spanstat did. */
enum target_signal {
	TARGET_SIGNAL_RELAYED, /* passed on to the command: it decides */
	TARGET_SIGNAL_STOP,    /* no command to pass it to: the count ends now */
};

struct target;
struct target_ops {
	/* Opens the events of evl on what the target counts, held (spawn) or
	 * enabled now (attach).  0 or -errno with *cause. */
	int (*open)(struct target *t, struct counters *cs, const struct evlist *evl, char **cause);
	/* Lets it run: the spawned command execs, the bounding command starts,
	 * the processes whose end ends the count are watched.  0, or -errno
	 * (a command that could not be executed: its errno). */
	int (*go)(struct target *t);
	/* Up to max fds to poll beside the session's; their readiness may mean
	 * the end. */
	size_t (*fds)(struct target *t, struct pollfd *pfd, size_t max);
	enum target_signal (*signal)(struct target *t, const struct signalfd_siginfo *si);
	/* Whether it has ended, given the fds polled (pfd[n] as fds() gave
	 * them); fills *end once it has. */
	bool (*ended)(struct target *t, const struct pollfd *pfd, size_t n, struct target_end *end);
	/* The count ends (before the counters are read). */
	void (*stop)(struct target *t);
	/* Releases it; a command never let go is killed and reaped. */
	void (*close)(struct target *t);
};

struct target {
	const struct target_ops *ops;
	pid_t pid;	   /* the command spanstat runs (counted or bounding), or -1 */
	char *const *argv; /* that command, or NULL */
	struct launch l;
	bool held;    /* l forked, not let go yet */
	bool delayed; /* set before open: the counters stay disabled until the
		       * session enables them (counters_enable) */
	/* attach */
	const struct attach *at;
	struct counters *cs; /* what open() opened: enabled by go(), disabled by stop() */
	int *pidfd;	     /* at->watch[i]'s, -1 once ended; only without a command */
	size_t live;
};

/* A command spawned held with envp (keep_fd, if >= 0, stays open in it):
 * counted from its exec with everything it starts.  0 or -errno. */
int target_spawn(struct target *t, char *const argv[], char *const envp[], int keep_fd);
/* The tasks or CPUs of at, counted from now until argv (NULL: none), run
 * as is in spanstat's environment, exits, or else until every task watched
 * has exited or a signal asks to stop.  0 or -errno. */
int target_attach(struct target *t, const struct attach *at, char *const argv[]);

#endif
