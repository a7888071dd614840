/* perfev.c: the perf_event_open system call and perf_event_paranoid (see
 * perfev.h). */
#include "config.h"

#include "perfev.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int perfev_open_cpu(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd)
{
	long fd = syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : (int)fd;
}

int perfev_open_cgroup(struct perf_event_attr *attr, int cgroup_fd, int cpu, int group_fd)
{
	long fd = syscall(SYS_perf_event_open, attr, cgroup_fd, cpu, group_fd,
			  PERF_FLAG_FD_CLOEXEC | PERF_FLAG_PID_CGROUP);

	return fd < 0 ? -errno : (int)fd;
}

int perfev_open(struct perf_event_attr *attr, pid_t pid, int group_fd)
{
	return perfev_open_cpu(attr, pid, -1, group_fd);
}

int perfev_open_self(uint32_t type, uint64_t config)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof attr);
	attr.size = sizeof attr;
	attr.type = type;
	attr.config = config;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	return perfev_open(&attr, 0, -1);
}

int perfev_paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	int v = INT_MIN;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = INT_MIN;
		fclose(f);
	}
	return v;
}
