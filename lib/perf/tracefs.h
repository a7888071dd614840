/* tracefs.h: the kernel's tracepoints as tracefs lists them (events/SYS/EVENT/id
 * under /sys/kernel/tracing, else /sys/kernel/debug/tracing), the static ones
 * and the dynamic ones perf probe and kprobe_events add alike.  Reads only;
 * never prints; returns 0 or -errno.  Names passed to callbacks live only for
 * the call.
 */
#ifndef SPANSTAT_TRACEFS_H
#define SPANSTAT_TRACEFS_H

#include <stddef.h>
#include <stdint.h>

/* The events directory in use, in buf: 0, -ENOENT when no tracefs is
 * mounted at either place, -EACCES when it cannot be read. */
int tracefs_events_dir(char *buf, size_t size);

/* The id of SYS:EVENT (perf_event_attr.config for PERF_TYPE_TRACEPOINT):
 * 0, -ENOENT when there is no such tracepoint, or the directory's error. */
int tracefs_id(const char *sys, const char *event, uint64_t *id);

typedef int (*tracefs_fn)(void *arg, const char *sys, const char *event);

/* Calls fn for every tracepoint whose subsystem and event match the shell
 * globs (NULL matches all), in tracefs's directory order as perf walks it.
 * Stops at fn's first nonzero return and returns it; -errno when the
 * directory cannot be read. */
int tracefs_each(const char *sysglob, const char *evglob, tracefs_fn fn, void *arg);

#endif
