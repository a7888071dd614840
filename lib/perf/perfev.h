/* perfev.h: the perf_event_open system call, as every part of spanstat
 * uses it: close-on-exec, any CPU; a user-space-only probe on the calling
 * process (works under perf_event_paranoid 2); and the paranoid level. */
#ifndef SPANSTAT_PERFEV_H
#define SPANSTAT_PERFEV_H

#include <linux/perf_event.h>
#include <stdint.h>
#include <sys/types.h>

/* Opens attr on pid (any CPU) in group_fd's group; returns the fd or -errno. */
int perfev_open(struct perf_event_attr *attr, pid_t pid, int group_fd);
/* The same on one cpu (or -1: any), pid -1 for every task on it. */
int perfev_open_cpu(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd);
/* The same for the tasks of a cgroup on one cpu: cgroup_fd is the cgroup's
 * directory (PERF_FLAG_PID_CGROUP). */
int perfev_open_cgroup(struct perf_event_attr *attr, int cgroup_fd, int cpu, int group_fd);
/* Opens a disabled, user-space-only event of type/config on the caller;
 * returns the fd or -errno. */
int perfev_open_self(uint32_t type, uint64_t config);
/* /proc/sys/kernel/perf_event_paranoid, or INT_MIN when it cannot be read. */
int perfev_paranoid(void);

#endif
