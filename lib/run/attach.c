/* attach.c: the tasks and CPUs of -p, -t, -a and -C (attach.h).  A
 * process's threads come from /proc/PID/task at the moment of attaching;
 * each gets its own counters with inherit, so the threads and processes
 * they start later count too (as for a command spanstat starts).  A thread
 * that ends between the listing and the opening is skipped by counters.c. */
#include "config.h"
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach.h"
#include "cause.h"

/* A thread's name now, from /proc/PID/task/TID/comm (pid 0: /proc/TID),
 * or "" when it cannot be read; malloc'd, NULL out of memory. */
static char *attach_comm(pid_t pid, pid_t tid)
{
	char path[96], buf[64] = "";
	if (pid > 0)
		snprintf(path, sizeof path, "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	else
		snprintf(path, sizeof path, "/proc/%d/comm", (int)tid);
	FILE *f = fopen(path, "re");
	if (f) {
		size_t n = fread(buf, 1, sizeof buf - 1, f);
		buf[n] = 0;
		fclose(f);
		if (n && buf[n - 1] == '\n') /* the kernel's; a newline in the name stays */
			buf[n - 1] = 0;
	}
	return strdup(buf);
}

/* Adds a task or CPU once: a list that names one twice (-p 7,7, -C 0,0-1,
 * or a process and one of its threads) must not count it twice.  A task's
 * name is read as it is added (owner: the pid whose task it is, or 0). */
static int attach_add(struct attach *a, pid_t pid, int cpu, pid_t owner)
{
	for (size_t i = 0; i < a->n; i++)
		if (a->at[i].pid == pid && a->at[i].cpu == cpu)
			return 0;
	struct counters_at *at = realloc(a->at, (a->n + 1) * sizeof *at);
	if (!at)
		return -ENOMEM;
	a->at = at;
	char **comm = realloc(a->comm, (a->n + 1) * sizeof *comm);
	if (!comm)
		return -ENOMEM;
	a->comm = comm;
	a->comm[a->n] = NULL;
	if (pid > 0 && !(a->comm[a->n] = attach_comm(owner, pid)))
		return -ENOMEM;
	a->at[a->n++] = (struct counters_at){pid, cpu};
	return 0;
}

/* The ids of a comma-separated list, each positive; ranges "a-b" when
 * ranges.  *n ids into *out (malloc'd); -EINVAL when malformed. */
static int attach_list(const char *s, bool ranges, long max, long **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (!s || !*s)
		return -EINVAL;
	for (const char *p = s; *p;) {
		char *end;
		errno = 0;
		if (*p < '0' || *p > '9') /* strtol would skip spaces and take signs */
			goto bad;
		long lo = strtol(p, &end, 10), hi;
		if (end == p || errno || lo < 0 || lo > max || (!ranges && lo == 0))
			goto bad;
		hi = lo;
		if (ranges && *end == '-') {
			p = end + 1;
			if (*p < '0' || *p > '9')
				goto bad;
			hi = strtol(p, &end, 10);
			if (end == p || errno || hi < lo || hi > max)
				goto bad;
		}
		for (long v = lo; v <= hi; v++) {
			long *o = realloc(*out, (*n + 1) * sizeof *o);
			if (!o) {
				free(*out);
				*out = NULL;
				return -ENOMEM;
			}
			*out = o;
			(*out)[(*n)++] = v;
		}
		if (*end == ',' && end[1])
			p = end + 1;
		else if (*end)
			goto bad;
		else
			p = end;
	}
	return 0;
bad:
	free(*out);
	*out = NULL;
	*n = 0;
	return -EINVAL;
}

/* "process id '1,2'" and the like. */
static int attach_name(struct attach *a, const char *kind, const char *list)
{
	return asprintf(&a->what, "%s'%s'", kind, list) < 0 ? -ENOMEM : 0;
}

int attach_tasks(struct attach *a, const char *list, bool threads, char **cause)
{
	long *ids;
	size_t n;
	memset(a, 0, sizeof *a);
	int r = attach_list(list, false, 0x3fffffff, &ids, &n);
	if (r == -EINVAL)
		return cause_set(cause, r, "invalid %s '%s': expected ids separated by commas",
				 threads ? "--tid" : "--pid", list);
	if (r < 0)
		return r;
	a->inherit = !threads;
	a->watch = calloc(n, sizeof *a->watch);
	if (!a->watch || attach_name(a, threads ? "thread id " : "process id ", list) < 0) {
		free(ids);
		attach_release(a);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n && r == 0; i++) {
		char path[64];
		pid_t id = (pid_t)ids[i];
		bool again = false;
		for (size_t k = 0; k < a->nwatch && !again; k++)
			again = a->watch[k] == id;
		if (again)
			continue;
		a->watch[a->nwatch++] = id;
		if (threads) {
			snprintf(path, sizeof path, "/proc/%d/status", (int)id); /* any thread */
			if (access(path, F_OK) != 0) {
				r = cause_set(cause, -ESRCH, "cannot count thread %d: %s", (int)id,
					      strerror(ESRCH));
				break;
			}
			r = attach_add(a, id, -1, 0);
			continue;
		}
		snprintf(path, sizeof path, "/proc/%d/task", (int)id);
		DIR *d = opendir(path);
		if (!d) {
			r = cause_set(cause, -ESRCH, "cannot count process %d: %s", (int)id,
				      strerror(errno == ENOENT ? ESRCH : errno));
			break;
		}
		for (struct dirent *e; r == 0 && (e = readdir(d));) {
			char *end;
			long tid = strtol(e->d_name, &end, 10);
			if (*end || tid <= 0)
				continue;
			r = attach_add(a, (pid_t)tid, -1, id);
		}
		closedir(d);
	}
	free(ids);
	if (r < 0)
		attach_release(a);
	return r;
}

int attach_cpus(struct attach *a, const char *list, char **cause)
{
	char online[4096] = "";
	memset(a, 0, sizeof *a);
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	if (f) {
		if (!fgets(online, sizeof online, f))
			online[0] = '\0';
		fclose(f);
	}
	online[strcspn(online, "\n")] = '\0';
	if (!online[0])
		snprintf(online, sizeof online, "0-%ld", sysconf(_SC_NPROCESSORS_ONLN) - 1);
	long *on, *want;
	size_t non, nwant;
	int r = attach_list(online, true, 1 << 20, &on, &non);
	if (r < 0)
		return cause_set(cause, r, "cannot read the online CPUs ('%s')", online);
	r = attach_list(list ? list : online, true, 1 << 20, &want, &nwant);
	if (r == -EINVAL) {
		free(on);
		return cause_set(cause, r, "invalid --cpu '%s': expected CPUs such as 0,2-3", list);
	}
	for (size_t i = 0; r == 0 && i < nwant; i++) {
		bool ok = false;
		for (size_t j = 0; j < non && !ok; j++)
			ok = on[j] == want[i];
		if (!ok)
			r = cause_set(cause, -ENODEV, "invalid --cpu '%s': CPU %ld is not online",
				      list, want[i]);
		else
			r = attach_add(a, -1, (int)want[i], 0);
	}
	free(on);
	free(want);
	if (r == 0 && (list ? asprintf(&a->what, "'CPU(s) %s'", list)
			    : asprintf(&a->what, "%s", "'system wide'")) < 0)
		r = -ENOMEM;
	if (r < 0)
		attach_release(a);
	return r;
}

int attach_all_threads(struct attach *a, char **cause)
{
	memset(a, 0, sizeof *a);
	DIR *d = opendir("/proc");
	if (!d)
		return cause_set(cause, -errno, "cannot list the threads in /proc: %s",
				 strerror(errno));
	int r = 0;
	a->inherit = true;
	for (struct dirent *e; r == 0 && (e = readdir(d));) {
		char *end, path[64];
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 0)
			continue;
		snprintf(path, sizeof path, "/proc/%ld/task", pid);
		DIR *t = opendir(path);
		for (struct dirent *f; r == 0 && t && (f = readdir(t));) {
			long tid = strtol(f->d_name, &end, 10);
			if (!*end && tid > 0)
				r = attach_add(a, (pid_t)tid, -1, (pid_t)pid);
		}
		if (t)
			closedir(t);
	}
	closedir(d);
	if (r == 0 && asprintf(&a->what, "%s", "'system wide'") < 0)
		r = -ENOMEM;
	if (r < 0)
		attach_release(a);
	return r;
}

void attach_release(struct attach *a)
{
	for (size_t i = 0; a->comm && i < a->n; i++)
		free(a->comm[i]);
	free(a->comm);
	free(a->at);
	free(a->watch);
	free(a->what);
	memset(a, 0, sizeof *a);
}
