/* evinfo.h: one event as a listing shows it (spanstat --list), and the
 * callback every lister calls: shared by the lists of evlist.c and of
 * libpfm4 (pfm.c), below both. */
#ifndef SPANSTAT_EVINFO_H
#define SPANSTAT_EVINFO_H

#include <stdbool.h>

/* One listed event. */
struct event_info {
	const char *name;
	const char *desc;
	const char *kind; /* "hardware", "software", "cache", "raw", or a PMU name */
	bool usable;	  /* the kernel here has the PMU (sysfs) */
};
typedef int (*event_list_fn)(void *arg, const struct event_info *info);

#endif
