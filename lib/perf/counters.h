/* counters.h: perf_event counters opened on a (stopped) child, grouped as the
 * evlist says, enabled on exec, inherited by its threads and children; or on
 * running threads (attach) or CPUs (system-wide), one set per thread or CPU,
 * whose counts add up as perf stat adds them.  Reads with
 * TOTAL_TIME_ENABLED/RUNNING and scales multiplexed counts as perf.
 */
#ifndef SPANSTAT_COUNTERS_H
#define SPANSTAT_COUNTERS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "evlist.h"

enum count_state {
	COUNT_OK = 0,
	COUNT_NOT_SUPPORTED, /* could not be opened here */
	COUNT_NOT_COUNTED,   /* opened but never ran (time_running 0) */
	COUNT_UNKNOWN,	     /* not known: no run's results hold it (a damaged
			      * record); every field but the state means nothing */
};

struct count {
	enum count_state state;
	uint64_t raw;	  /* as read */
	uint64_t enabled; /* ns */
	uint64_t running; /* ns */
	double value;	  /* raw scaled by enabled/running, times event scale */
	int err;	  /* errno of the failed open (NOT_SUPPORTED) */
	bool user_only;	  /* kernel excluded by the perf_event_paranoid fallback */
};

struct counter {
	int fd;	 /* -1 when not open */
	int err; /* open's errno */
	uint64_t id;
	uint64_t prev_raw, prev_enabled, prev_running; /* for interval deltas */
	int leader;	/* index of the event whose fd leads this one's group */
	bool user_only; /* opened with exclude_kernel/hv after EACCES/EPERM */
};

/* Where a set of counters counts. */
struct counters_at {
	pid_t pid; /* a thread or process, or -1 (every task: with a cpu) */
	int cpu;   /* a CPU, or -1 (wherever pid runs) */
};

/* An event of the uprobe PMU counted with inherit: the same probe made in
 * tracefs, counted as its tracepoint (err: why it could not be made). */
struct counters_probe {
	char name[64];
	uint64_t id;
	int err; /* 0: made; -errno: not; 1: not a uprobe */
};

struct counters {
	const struct evlist *evl;
	struct counter *c;   /* evl->n: the set being opened or read */
	struct counter *all; /* nat sets of evl->n */
	struct counters_at *at;
	bool *gone; /* nat: the set's task ended before it could be counted */
	size_t nat;
	bool on_exec;		      /* a held child: enabled at its exec */
	bool held;		      /* running tasks or CPUs: enabled by counters_enable */
	bool inherit;		      /* children of the counted tasks count too */
	struct count *tmp;	      /* one set's counts */
	int *cgfd;		      /* evl->n: event i's cgroup directory (cgroup.h), -1: none;
				       * NULL when no event has one */
	bool group_read;	      /* PERF_FORMAT_GROUP accepted with inherit */
	struct counters_probe *probe; /* evl->n: inherited uprobes as tracefs made
				       * them (uprobe.h); NULL when none */
	/* private: one group read's buffer */
	uint64_t *buf;
	size_t nbuf;
};

/* Opens every event on pid.  Unsupported events are recorded, not fatal.
 * Fatal (-EACCES/-EPERM with a perf_event_paranoid explanation in *cause,
 * -ENOMEM) only when nothing can be counted for that reason. */
int counters_open(struct counters *cs, const struct evlist *evl, pid_t pid, char **cause);
/* As counters_open, but held disabled at the exec too, until
 * counters_enable (perf stat's --delay). */
int counters_open_held(struct counters *cs, const struct evlist *evl, pid_t pid, char **cause);
/* Opens every event on each of at[n] (running tasks or CPUs), disabled
 * until counters_enable; an event with a cgroup (evlist.h) counts only the
 * tasks of that cgroup, which needs CPUs (at[].pid -1); inherit: what those tasks start is counted
 * too.  A task that has exited (ESRCH) is skipped; -ESRCH only when none is left. */
int counters_open_at(struct counters *cs, const struct evlist *evl, const struct counters_at *at,
		     size_t n, bool inherit, char **cause);
/* Totals since exec into out[evl->n]. */
int counters_read(struct counters *cs, struct count *out);
/* As counters_read and counters_delta, and each set added into the row
 * of its unit too: unit_of[k] for set k (aggr.h), units nunits rows of
 * evl->n.  A unit none of whose sets could be counted is <not counted>.
 * 0, -EBADF or -ENOMEM. */
int counters_read_units(struct counters *cs, struct count *out, const size_t *unit_of,
			size_t nunits, struct count *units);
int counters_delta_units(struct counters *cs, struct count *out, const size_t *unit_of,
			 size_t nunits, struct count *units);
/* Starts and stops the count of counters_open_at's sets (every group at
 * once), so that it covers the session's interval and nothing of setting
 * it up: perf stat's enable after opening, disable before reading. */
void counters_enable(struct counters *cs);
void counters_disable(struct counters *cs);
/* Counts since the previous counters_delta() (or the start). */
int counters_delta(struct counters *cs, struct count *out);
/* Fills the counts of evl's tool events (evlist.h) in out with what the
 * session measured, as perf shows them: enabled and running time equal to
 * the value, so that a 0 (no rusage within an interval) is <not counted>. */
void counters_tools(const struct evlist *evl, struct count *out, uint64_t duration_ns,
		    uint64_t user_ns, uint64_t system_ns);
/* The tool events' rows per unit: a whole-session measure, so the first
 * unit carries it (out's, from counters_tools) and the others are <not
 * counted> there, as perf shows duration_time on the first CPU or core. */
void counters_tools_units(const struct evlist *evl, const struct count *out, struct count *units,
			  size_t nunits);
void counters_close(struct counters *cs);

#endif
