/* tracefs.c: finds tracefs's events directory and walks it: a subsystem is a
 * directory of events/, an event a directory with an id file, both in
 * readdir order (perf's order when it expands "sched:*"). */
#include "config.h"

#include "tracefs.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const tracefs_roots[] = {
	"/sys/kernel/tracing/events",
	"/sys/kernel/debug/tracing/events",
};

int tracefs_events_dir(char *buf, size_t size)
{
	int err = -ENOENT;
	for (size_t i = 0; i < sizeof tracefs_roots / sizeof tracefs_roots[0]; i++) {
		if (access(tracefs_roots[i], R_OK | X_OK) == 0) {
			if ((size_t)snprintf(buf, size, "%s", tracefs_roots[i]) >= size)
				return -ENAMETOOLONG;
			return 0;
		}
		if (errno != ENOENT && err == -ENOENT)
			err = -errno; /* EACCES: say so, unless the other one works */
	}
	return err;
}

int tracefs_id(const char *sys, const char *event, uint64_t *id)
{
	char dir[256], path[4096];
	int err = tracefs_events_dir(dir, sizeof dir);
	if (err)
		return err;
	if (strchr(sys, '/') || strchr(event, '/') || sys[0] == '.' || event[0] == '.')
		return -ENOENT;
	snprintf(path, sizeof path, "%s/%s/%s/id", dir, sys, event);
	FILE *f = fopen(path, "re");
	if (!f)
		return errno == ENOTDIR ? -ENOENT : -errno;
	int ok = fscanf(f, "%" SCNu64, id) == 1;
	fclose(f);
	return ok ? 0 : -EINVAL;
}

static bool tracefs_isdir(int dfd, const struct dirent *d)
{
	if (d->d_name[0] == '.')
		return false;
	if (d->d_type == DT_DIR)
		return true;
	struct stat st;
	return d->d_type == DT_UNKNOWN && fstatat(dfd, d->d_name, &st, 0) == 0 &&
	       S_ISDIR(st.st_mode);
}

static int tracefs_each_event(const char *dir, const char *sys, const char *evglob, tracefs_fn fn,
			      void *arg)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, sys);
	DIR *d = opendir(path);
	if (!d) /* gone meanwhile: nothing there; not ours to read: said */
		return errno == EACCES || errno == EPERM ? -errno : 0;
	int r = 0;
	struct dirent *e;
	while (r == 0 && (e = readdir(d))) {
		if (!tracefs_isdir(dirfd(d), e) || (evglob && fnmatch(evglob, e->d_name, 0)))
			continue;
		char id[4096];
		snprintf(id, sizeof id, "%s/id", e->d_name);
		if (faccessat(dirfd(d), id, R_OK, 0) == 0)
			r = fn(arg, sys, e->d_name);
		else if (errno == EACCES || errno == EPERM)
			r = -errno; /* a match we may not read: never "no match" */
	}
	closedir(d);
	return r;
}

int tracefs_each(const char *sysglob, const char *evglob, tracefs_fn fn, void *arg)
{
	char dir[256];
	int err = tracefs_events_dir(dir, sizeof dir);
	if (err)
		return err;
	DIR *d = opendir(dir);
	if (!d)
		return -errno;
	int r = 0;
	struct dirent *e;
	while (r == 0 && (e = readdir(d)))
		if (tracefs_isdir(dirfd(d), e) && !(sysglob && fnmatch(sysglob, e->d_name, 0)))
			r = tracefs_each_event(dir, e->d_name, evglob, fn, arg);
	closedir(d);
	return r;
}
