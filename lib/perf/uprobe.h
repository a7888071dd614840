/* uprobe.h: bpftrace's uprobe:PATH:SYMBOL and uretprobe:PATH:SYMBOL as
 * perf_event_attr for the kernel's uprobe PMU (no tracefs write, no perf
 * probe): the function's entry (or return) in any ELF object, counted like
 * any event.  Reads the object with libelf; never prints; errors come back
 * as -errno plus a message in *cause that the caller frees.
 */
#ifndef SPANSTAT_UPROBE_H
#define SPANSTAT_UPROBE_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether term is written as a uprobe (uprobe:... or uretprobe:...). */
bool uprobe_is_spec(const char *term);

/* Resolves term, one of
 *   uprobe:PATH:SYMBOL   uprobe:PATH:SYMBOL+OFFSET   uprobe:PATH:0xADDR
 * (and the same with uretprobe:), into attr: the uprobe PMU's type, its
 * retprobe bit, config1 the object's real path and config2 the file offset
 * of the instruction.  PATH is a path (symlinks followed, so the kernel gets
 * the file itself), or a bare name looked up in $PATH and then in the
 * standard library directories (c, libc and libc.so.6 all find libc.so.6).
 * SYMBOL is looked up in .symtab, then .dynsym (malloc matches
 * malloc@@GLIBC_2.2.5); 0xADDR is a virtual address of the object.
 * *path gets the malloc'd real path that attr->config1 points at: the
 * caller owns it and keeps it until the event is opened. */
int uprobe_resolve(const char *term, struct perf_event_attr *attr, char **path, char **cause);

/* The same probe (attr as uprobe_resolve made it, path its object) made in
 * tracefs's uprobe_events, as perf probe makes one, for counting that
 * follows the target's threads and children: the kernel reads the uprobe
 * PMU's path pointer again in each fork of an inherited event, in the forking
 * task, where it means nothing, and the fork fails (EFAULT).  A tracepoint
 * reads nothing.  Writes the probe's name into name (for uprobe_tracefs_del)
 * and its tracepoint id into *id: 0 or -errno. */
int uprobe_tracefs_add(const struct perf_event_attr *attr, const char *path, char *name,
		       size_t size, uint64_t *id);
/* Removes a probe uprobe_tracefs_add made (its events closed first). */
void uprobe_tracefs_del(const char *name);

#endif
