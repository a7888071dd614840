/* evlist.h: event lists in perf's -e syntax, resolved to perf_event_attr.
 * Owns parsing ("a,b", "{a,b}", modifiers, raw rNNNN), perf's generic names
 * (evtable.c), tracepoints (tracefs.c: sys:event, globs expanded), libpfm4's
 * names (pfm.c, initialised only when a name needs it), sysfs PMUs' events
 * (pmu.c: pmu/term=value,.../modifiers), uprobes (uprobe.c),
 * default events and listing.  Never prints; errors come back as -errno plus
 * a message in *cause that the caller frees.
 */
#ifndef SPANSTAT_EVLIST_H
#define SPANSTAT_EVLIST_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>

#include "evinfo.h"

struct event {
	char *name;		     /* as written by the user, e.g. "cycles:u" */
	struct perf_event_attr attr; /* size set; disabled/inherit left to counters.c */
	int group;		     /* events of one {...} share it; a bare name has its own */
	bool leader;		     /* first event of its group */
	const char *unit;	     /* "msec" for task-clock/cpu-clock, else "" */
	char *unit_own;	   /* a PMU alias's unit from sysfs (unit points at it), or NULL */
	double scale;	   /* value shown = count * scale (1e-6 for ns clocks) */
	char *probe_path;  /* a uprobe's object, which attr.config1 points at */
	char *cgroup;	   /* counted only in this cgroup (cgroup.h), NULL: everywhere */
	char *written;	   /* a PMU event that name= renamed: its term as written, else NULL */
	bool sysfs_scaled; /* a PMU alias's .scale or .unit is applied (unit, scale) */
};

/* perf's tool events (duration_time, user_time, system_time) are not opened:
 * spanstat measures them itself (counters_tools), in ns.  Their attr.type is
 * EVENT_TYPE_TOOL, outside the kernel's PMU types, and attr.config one of
 * enum event_tool. */
#define EVENT_TYPE_TOOL 0xfffffffeu
enum event_tool {
	EVENT_TOOL_DURATION, /* wall time: the run's, or the interval's */
	EVENT_TOOL_USER,     /* the command's user CPU time, from its rusage */
	EVENT_TOOL_SYSTEM,   /* and its system CPU time */
};

static inline bool event_is_tool(const struct event *ev)
{
	return ev->attr.type == EVENT_TYPE_TOOL;
}

/* Whether sysfs gave the event a scale or a unit (RAPL's Joules). */
static inline bool event_is_sysfs_scaled(const struct event *ev)
{
	return ev->sysfs_scaled;
}

struct evlist {
	struct event *ev;
	size_t n;
	int ngroups;
};

void evlist_init(struct evlist *evl);
void evlist_release(struct evlist *evl);
/* Append the events of one -e argument.  On error nothing is appended. */
int evlist_parse(struct evlist *evl, const char *spec, char **cause);
/* perf stat's default set. */
int evlist_add_defaults(struct evlist *evl, char **cause);

/* Calls fn for every known event whose name contains pattern (NULL: all). */
int evlist_known(const char *pattern, event_list_fn fn, void *arg, char **cause);

#endif
