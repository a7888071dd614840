/* pmu.h: the kernel's PMUs as sysfs describes them, and perf's syntax for
 * their events, PMU/term=value,.../ (pmu.c).  Under the sysfs directory
 * (PMU_SYSFS on a real machine; tests pass a fake tree) each PMU is a
 * directory holding
 *   type             its perf_event_attr.type
 *   format/TERM      where TERM's value lands: "config:0-7", "config1:0-3,8",
 *                    "config2:21" (bits in order, lowest first)
 *   events/ALIAS     a term string ALIAS stands for ("event=0x3c,umask=0"),
 *                    with ALIAS.scale and ALIAS.unit when the kernel gives
 *                    them (RAPL's energy-pkg: 2.3283064365386962890625e-10
 *                    Joules)
 * Reads only; never prints; returns 0 or -errno with a message in *cause
 * that the caller frees.  struct pmu_event owns its strings (pmu_event_release).
 */
#ifndef SPANSTAT_PMU_H
#define SPANSTAT_PMU_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>

#include "evinfo.h"

#define PMU_SYSFS "/sys/bus/event_source/devices"

/* One PMU event, resolved. */
struct pmu_event {
	struct perf_event_attr attr; /* size, type, config, config1, config2 */
	char *name;		     /* a name=NAME term's NAME, or NULL */
	char *unit;		     /* the alias's .unit, or NULL */
	double scale;		     /* the alias's .scale, else 1 */
};

/* Length of the "PMU/terms/" that starts spec (a name of letters, digits,
 * '_', '-' and '.', then '/', then anything up to the next '/'), or 0 when
 * spec does not start so or the terms are not closed.  What follows is
 * modifiers; the -e list parser uses this to keep the terms' commas. */
size_t pmu_span(const char *spec);

/* Whether spec starts as a PMU event does ("PMU/"), closed or not. */
bool pmu_like(const char *spec);

/* Resolves spec, "PMU/terms/MODS", against the PMUs under sysfs into *pe
 * (which it initialises; release it even on error).  *mods points at MODS
 * in spec (perhaps ""): the caller applies them.  Terms, separated by ',':
 *   TERM=VALUE   a format term (VALUE decimal or 0x hex, at most as wide as
 *                the term's bits), or config, config1, config2 (the whole
 *                word), or name (the event's name as shown)
 *   TERM         a format term set to 1, or an alias (case ignored) that
 *                expands to its terms and brings its scale and unit (also
 *                TERM=1; at most one alias an event)
 * As perf 6.1: config, config1, config2 set their words first (the last
 * one given wins), then each format term ORs its bits in, clearing none;
 * the first name= names the event ("..." dropped; no control character).
 * Errors (-EINVAL, -ENOENT for an unknown PMU) say what was wrong with
 * which part of spec: an unknown PMU (naming the closest ones), an unknown
 * term (naming the known ones), a value too wide for its term. */
int pmu_resolve(const char *sysfs, const char *spec, struct pmu_event *pe, const char **mods,
		char **cause);

void pmu_event_release(struct pmu_event *pe);

/* Lists, PMU by PMU in name order, each alias as "PMU/ALIAS/" (kind: the
 * PMU's name; desc: "[Kernel PMU event]", its terms, its unit) and, for a
 * PMU with format terms, one line "PMU/TERM=N,.../" whose desc gives each
 * term's bits.  Stops at fn's first nonzero return and returns it; a
 * missing or unreadable sysfs directory lists nothing. */
int pmu_list(const char *sysfs, event_list_fn fn, void *arg);

#endif
