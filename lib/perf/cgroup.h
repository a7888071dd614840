/* cgroup.h: perf stat's -G (--cgroup) and --for-each-cgroup: which events
 * count only in which cgroup (struct event's cgroup, a name under the
 * cgroup hierarchy perf_event is bound to), and the cgroup's directory that
 * perf_event_open takes with PERF_FLAG_PID_CGROUP.  Never prints; errors
 * come back as -errno and a message in *cause the caller frees. */
#ifndef SPANSTAT_CGROUP_H
#define SPANSTAT_CGROUP_H

#include "evlist.h"

/* -G NAMES, as perf parses it: the k-th name given over all -G options
 * (*next counts them, from 0) applies to the k-th event of evl; an empty
 * name leaves its event counting everywhere.  When the first -G holds one
 * name, it applies to every event defined so far.  -EINVAL with *cause when
 * evl has no event yet, or fewer events than names. */
int cgroup_assign(struct evlist *evl, const char *names, unsigned *next, char **cause);
/* --for-each-cgroup NAMES: evl repeated once per name (in the order given),
 * each copy counting in that cgroup, its groups kept as groups.  -EINVAL
 * with *cause for an empty name or an event that already has a cgroup,
 * -ENOMEM. */
int cgroup_expand(struct evlist *evl, const char *names, char **cause);
/* Whether any event of evl has a cgroup. */
static inline bool cgroup_any(const struct evlist *evl)
{
	for (size_t i = 0; i < evl->n; i++)
		if (evl->ev[i].cgroup)
			return true;
	return false;
}
/* Opens the directory of cgroup name (relative to the root of the
 * hierarchy perf_event is bound to: a cgroup v1 mount with perf_event, else
 * the cgroup v2 mount) for PERF_FLAG_PID_CGROUP.  The fd, or -errno with
 * *cause. */
int cgroup_open(const char *name, char **cause);
/* Whether every event's cgroup opens (cgroup_open): 0, or its -errno with
 * *cause, so that a bad name is refused before anything runs (--pre). */
int cgroup_check(const struct evlist *evl, char **cause);

#endif
