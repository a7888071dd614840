/* pfm.h: spanstat's only door to libpfm4: lazy initialisation (about 2 ms,
 * paid only when a name is not one of perf's built-in names, or for a
 * listing), encoding libpfm4 names (pmu::event:umask, and perf-style
 * event.umask) into perf_event_attr, enumerating libpfm4's events, and
 * checking libpfm4's PMUs against the PMUs the kernel really has (sysfs),
 * because libpfm4 marks PMUs present from CPUID alone.
 */
#ifndef SPANSTAT_PFM_H
#define SPANSTAT_PFM_H

#include <linux/perf_event.h>
#include <stdbool.h>

#include "evinfo.h"

/* Privilege levels for pfm_encode; 0 means libpfm4's default (user+kernel). */
#define PFM_LEVEL_USER 1u
#define PFM_LEVEL_KERNEL 2u
#define PFM_LEVEL_HV 4u

/* Whether libpfm4 has been initialised in this process. */
bool pfm_initialised(void);

/* Initialise libpfm4 once; later calls return the first outcome. */
int pfm_setup(char **cause);

/* Encode a libpfm4 event name into *attr (type, config, config1, config2,
 * exclude bits, and whatever libpfm4 attributes the name sets; size set).
 * A name with '.' that libpfm4 does not know is retried with ':' for '.'
 * (inst_retired.any -> inst_retired:any).  Returns 0, -ENOENT when libpfm4
 * knows no such event (no cause), or -EINVAL/-EIO with *cause. */
int pfm_encode(const char *name, unsigned levels, struct perf_event_attr *attr, char **cause);

/* Calls fn(arg, name, pmu) for every event of every PMU libpfm4 considers
 * present, if libpfm4 is initialised (it does not initialise it). */
void pfm_each_name(void (*fn)(void *arg, const char *name, const char *pmu), void *arg);

/* Lists every event (pmu::event, and pmu::event:umask for each unit mask)
 * of the PMUs libpfm4 considers present, marking usable those on a PMU the
 * kernel has.  Initialises libpfm4.  Stops when fn returns non-zero. */
int pfm_list(event_list_fn fn, void *arg, char **cause);

/* Whether the kernel has a core (CPU) PMU: a sysfs event source of type
 * PERF_TYPE_RAW, or cpu_core / cpu_atom on hybrid machines. */
bool pfm_kernel_core_pmu(void);

#endif
