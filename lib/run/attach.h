/* attach.h: what -p, -t, -a and -C count: tasks spanstat did not start
 * (every thread of the processes named, or the threads named) or CPUs, as
 * counters.h's sets, and what to wait for when no command bounds the count.
 * The other side of launch.h's spawn: the session runs either. */
#ifndef SPANSTAT_ATTACH_H
#define SPANSTAT_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "counters.h"

struct attach {
	struct counters_at *at; /* a set per thread or CPU */
	char **comm;		/* n: each thread's name when attached ("" unknown,
				 * NULL for a CPU) */
	size_t n;
	pid_t *watch; /* processes (or threads) whose end ends the count */
	size_t nwatch;
	bool inherit; /* what the tasks start counts too (processes) */
	char *what;   /* as perf stat's header names it: "process id '1,2'" */
};

/* -p LIST (threads false: every thread of each process, and what they
 * start) or -t LIST (only those threads): comma-separated ids.  0, or
 * -EINVAL (a bad list), -ESRCH (no such process or thread), -ENOMEM, with
 * *cause. */
int attach_tasks(struct attach *a, const char *list, bool threads, char **cause);
/* -a (list NULL: every online CPU) or -C LIST ("0,2-3"): every task on
 * those CPUs.  0, or -EINVAL, -ENODEV (a CPU not online), -ENOMEM. */
int attach_cpus(struct attach *a, const char *list, char **cause);
/* Every thread of every process running now, each counted on its own
 * (with inherit), until a command or a signal ends the count: perf stat's
 * --per-thread -a.  0, or -ENOMEM, or an error reading /proc, with *cause. */
int attach_all_threads(struct attach *a, char **cause);
void attach_release(struct attach *a);

#endif
