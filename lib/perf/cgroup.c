/* cgroup.c: events bound to cgroups (see cgroup.h). */
#include "config.h"

#include "cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cause.h"

/* The next comma-separated name of *s (may be empty), malloc'd; *s moves
 * past it, to NULL after the last. */
static char *cgroup_next(const char **s)
{
	const char *p = *s, *comma = strchr(p, ',');
	size_t n = comma ? (size_t)(comma - p) : strlen(p);
	*s = comma ? comma + 1 : NULL;
	return strndup(p, n);
}

int cgroup_assign(struct evlist *evl, const char *names, unsigned *next, char **cause)
{
	if (evl->n == 0)
		return cause_set(cause, -EINVAL,
				 "invalid --cgroup '%s': give the events first (-e before -G), "
				 "as perf does",
				 names);
	unsigned first = *next, k = first;
	for (const char *s = names; s; k++) {
		char *name = cgroup_next(&s);
		if (!name)
			return -ENOMEM;
		if (k >= evl->n) {
			free(name);
			return cause_set(cause, -EINVAL,
					 "invalid --cgroup '%s': more cgroups than events (the "
					 "k-th cgroup is the k-th event's)",
					 names);
		}
		free(evl->ev[k].cgroup);
		evl->ev[k].cgroup = *name ? name : NULL;
		if (!*name)
			free(name);
	}
	*next = k;
	/* one cgroup in all: every event's, as perf's nr_cgroups == 1 */
	if (first == 0 && k == 1 && evl->ev[0].cgroup)
		for (size_t i = 1; i < evl->n; i++) {
			free(evl->ev[i].cgroup);
			if (!(evl->ev[i].cgroup = strdup(evl->ev[0].cgroup)))
				return -ENOMEM;
		}
	return 0;
}

int cgroup_expand(struct evlist *evl, const char *names, char **cause)
{
	size_t ncg = 1;
	for (const char *p = names; (p = strchr(p, ',')); p++)
		ncg++;
	for (size_t i = 0; i < evl->n; i++)
		if (evl->ev[i].cgroup)
			return cause_set(cause, -EINVAL,
					 "--for-each-cgroup cannot be combined with --cgroup (-G)");
	struct event *ev = calloc(evl->n ? ncg * evl->n : 1, sizeof *ev);
	if (!ev)
		return -ENOMEM;
	size_t n = 0;
	int r = 0;
	const char *s = names;
	for (size_t k = 0; k < ncg && r == 0; k++) {
		char *name = cgroup_next(&s);
		if (!name) {
			r = -ENOMEM;
			break;
		}
		if (!*name) {
			r = cause_set(cause, -EINVAL,
				      "invalid --for-each-cgroup '%s': expected cgroup names "
				      "separated by commas",
				      names);
			free(name);
			break;
		}
		for (size_t i = 0; i < evl->n && r == 0; i++) {
			ev[n] = evl->ev[i];
			ev[n].group = evl->ev[i].group + (int)k * evl->ngroups;
			ev[n].name = strdup(evl->ev[i].name);
			ev[n].cgroup = strdup(name);
			if (!ev[n].name || !ev[n].cgroup) {
				free(ev[n].name);
				free(ev[n].cgroup);
				r = -ENOMEM;
				break;
			}
			n++;
		}
		free(name);
	}
	if (r < 0) {
		for (size_t i = 0; i < n; i++) {
			free(ev[i].name);
			free(ev[i].cgroup);
		}
		free(ev);
		return r;
	}
	int ngroups = evl->ngroups * (int)ncg;
	evlist_release(evl);
	evl->ev = ev;
	evl->n = n;
	evl->ngroups = ngroups;
	return 0;
}

int cgroup_check(const struct evlist *evl, char **cause)
{
	for (size_t i = 0; i < evl->n; i++) {
		if (!evl->ev[i].cgroup)
			continue;
		int fd = cgroup_open(evl->ev[i].cgroup, cause);
		if (fd < 0)
			return fd;
		close(fd);
	}
	return 0;
}

/* Where the hierarchy perf_event counts in is mounted, in buf: a cgroup
 * (v1) mount with the perf_event option, else the cgroup2 mount. */
static int cgroup_root(char *buf, size_t size)
{
	FILE *f = setmntent("/proc/self/mounts", "re");
	if (!f)
		return -errno;
	struct mntent *m;
	bool v1 = false, v2 = false;
	while ((m = getmntent(f))) {
		if (strcmp(m->mnt_type, "cgroup") == 0 && hasmntopt(m, "perf_event") && !v1) {
			snprintf(buf, size, "%s", m->mnt_dir);
			v1 = true;
		} else if (strcmp(m->mnt_type, "cgroup2") == 0 && !v1 && !v2) {
			snprintf(buf, size, "%s", m->mnt_dir);
			v2 = true;
		}
	}
	endmntent(f);
	return v1 || v2 ? 0 : -ENOENT;
}

int cgroup_open(const char *name, char **cause)
{
	char root[4096], path[8192];
	int r = cgroup_root(root, sizeof root);
	if (r < 0)
		return cause_set(cause, r,
				 "cannot open cgroup '%s': no cgroup2 mount nor cgroup mount with "
				 "perf_event",
				 name);
	snprintf(path, sizeof path, "%s/%s", root, name[0] == '/' ? name + 1 : name);
	/* a name is a path under the root: '..' would leave the hierarchy,
	 * and a directory that is no cgroup the kernel refuses (EBADF), which
	 * would pass for an event it does not support */
	for (const char *p = name; (p = strstr(p, "..")); p += 2)
		if ((p == name || p[-1] == '/') && (p[2] == '\0' || p[2] == '/'))
			return cause_set(cause, -EINVAL,
					 "invalid cgroup '%s': a path under %s, without '..'", name,
					 root);
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		return cause_set(cause, -e, "cannot open cgroup '%s' (%s): %s", name, path,
				 strerror(e));
	}
	if (faccessat(fd, "cgroup.procs", F_OK, 0) < 0) {
		close(fd);
		return cause_set(cause, -ENOTDIR, "cannot open cgroup '%s' (%s): not a cgroup",
				 name, path);
	}
	return fd;
}
