/* evlist.c: the -e parser (perf's syntax: "a,b", "{a,b}", "{a,b}:u",
 * "name:mods", raw "rNNNN", tracepoints "sys:event[:mods]" with globs),
 * name resolution (built-in names from evtable.c first, then tracepoints
 * that tracefs.c finds, libpfm4 through pfm.c only when those miss), "did
 * you mean" suggestions, perf stat's default set and --list.
 *
 * A tracepoint is SYS:EVENT without "::" whose EVENT is not only modifier
 * letters (cycles:u stays cycles with :u); a glob in either part expands,
 * as perf's does, into one event per match in tracefs order, each in a group
 * of its own unless inside braces.
 *
 * A sysfs PMU's event is PMU/terms/MODS (pmu.c resolves the terms): its
 * commas belong to it, not to the list, and its modifiers follow the
 * closing '/' with no ':' (msr/tsc/u), as in perf.
 *
 * Modifiers, after the last single ':' of a name or after a group's '}':
 *   u k h  count only user / kernel / hypervisor (combinable, as in perf:
 *          the first one excludes all levels, each one re-includes its own)
 *   G H    count only in guest / only in host (same scheme, exclude_host /
 *          exclude_guest); accepted because they are one attr bit each
 *   I      exclude_idle
 *   p      precise_ip, once per p, at most 3
 *   D      pinned
 *   e      exclusive
 * Everything else perf knows (P, S, W, b, R ...) is rejected as unknown:
 * they concern sampling or perf's own group handling, not counting.
 * Built-in names match exactly first and then ignoring case (perf would
 * find most of them case-insensitively through sysfs anyway); libpfm4's names
 * ignore case; modifiers are case-sensitive (h is not H).
 */
#include "config.h"

#include "evlist.h"

#include "cause.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>

#include "evtable.h"
#include "grow.h"
#include "pfm.h"
#include "pmu.h"
#include "tracefs.h"
#include "uprobe.h"

void evlist_init(struct evlist *evl)
{
	memset(evl, 0, sizeof *evl);
}

/* Frees what one event owns. */
static void events_free(struct event *ev)
{
	free(ev->name);
	free(ev->unit_own);
	free(ev->probe_path);
	free(ev->cgroup);
	free(ev->written);
}

void evlist_release(struct evlist *evl)
{
	for (size_t i = 0; i < evl->n; i++)
		events_free(&evl->ev[i]);
	free(evl->ev);
	evlist_init(evl);
}

/* --- modifiers ------------------------------------------------------------ */

static bool events_is_modchar(char c)
{
	return c && strchr("ukhGHIpDe", c);
}

static bool events_all_modchars(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!events_is_modchar(*s))
			return false;
	return true;
}

/* Apply modifiers to attr, on top of what it already excludes (so group
 * modifiers combine with a member's own).  With levels false, u/k/h are
 * skipped (libpfm4 already encoded them).  subject names the text in errors. */
static int events_apply_mods(struct perf_event_attr *attr, const char *mods, bool levels,
			     const char *subject, char **cause)
{
	bool exclude = attr->exclude_user || attr->exclude_kernel || attr->exclude_hv;
	bool exclude_gh = attr->exclude_guest || attr->exclude_host;
	unsigned precise = attr->precise_ip;
	for (const char *m = mods; *m; m++) {
		switch (*m) {
		case 'u':
		case 'k':
		case 'h':
			if (!levels)
				break;
			if (!exclude) {
				attr->exclude_user = attr->exclude_kernel = attr->exclude_hv = 1;
				exclude = true;
			}
			if (*m == 'u')
				attr->exclude_user = 0;
			else if (*m == 'k')
				attr->exclude_kernel = 0;
			else
				attr->exclude_hv = 0;
			break;
		case 'G':
		case 'H':
			if (!exclude_gh) {
				attr->exclude_guest = attr->exclude_host = 1;
				exclude_gh = true;
			}
			if (*m == 'G')
				attr->exclude_guest = 0;
			else
				attr->exclude_host = 0;
			break;
		case 'I':
			attr->exclude_idle = 1;
			break;
		case 'p':
			if (++precise > 3)
				return cause_set(cause, -EINVAL, "too many 'p' modifiers in '%s'",
						 subject);
			break;
		case 'D':
			attr->pinned = 1;
			break;
		case 'e':
			attr->exclusive = 1;
			break;
		default:
			return cause_set(cause, -EINVAL, "unknown modifier '%c' in '%s'", *m,
					 subject);
		}
	}
	attr->precise_ip = precise;
	return 0;
}

static unsigned events_levels(const char *mods)
{
	unsigned levels = 0;
	for (const char *m = mods; *m; m++)
		levels |= *m == 'u'   ? PFM_LEVEL_USER
			  : *m == 'k' ? PFM_LEVEL_KERNEL
			  : *m == 'h' ? PFM_LEVEL_HV
				      : 0;
	return levels;
}

/* Index of the last ':' that is not part of "::" (libpfm4's pmu::event), or
 * -1. */
static ssize_t events_mod_colon(const char *s)
{
	ssize_t at = -1;
	for (size_t i = 0; s[i]; i++)
		if (s[i] == ':' && (i == 0 || s[i - 1] != ':') && s[i + 1] != ':')
			at = (ssize_t)i;
	return at;
}

/* --- tool events --------------------------------------------------------- */

/* perf's names for what spanstat measures itself (evlist.h). */
static const char *const events_tools[] = {
	[EVENT_TOOL_DURATION] = "duration_time",
	[EVENT_TOOL_USER] = "user_time",
	[EVENT_TOOL_SYSTEM] = "system_time",
};

static bool events_tool(const char *name, uint64_t *config)
{
	for (size_t i = 0; i < sizeof events_tools / sizeof events_tools[0]; i++)
		if (strcasecmp(name, events_tools[i]) == 0) {
			*config = i;
			return true;
		}
	return false;
}

/* --- suggestions ---------------------------------------------------------- */

#define EVENTS_NSUGGEST 3

struct events_suggest {
	const char *want;
	bool qualified; /* the user wrote pmu::event: compare against those */
	int best;
	int limit;
	char *names[EVENTS_NSUGGEST];
	int dist[EVENTS_NSUGGEST];
	int n;
	bool nomem;
};

static int events_lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

/* Edit distance ignoring case, with transpositions counted as one edit
 * (cylces -> cycles), or limit+1 once it is known to exceed limit. */
static int events_distance(const char *a, const char *b, int limit)
{
	size_t na = strlen(a), nb = strlen(b);
	if ((na > nb ? na - nb : nb - na) > (size_t)limit || nb > 255)
		return limit + 1;
	int rows[3][256];
	int *pp = rows[0], *prev = rows[1], *cur = rows[2];
	for (size_t j = 0; j <= nb; j++)
		prev[j] = (int)j;
	for (size_t i = 1; i <= na; i++) {
		cur[0] = (int)i;
		int rowmin = cur[0];
		for (size_t j = 1; j <= nb; j++) {
			int cost = events_lower(a[i - 1]) != events_lower(b[j - 1]);
			int d = prev[j - 1] + cost;
			if (prev[j] + 1 < d)
				d = prev[j] + 1;
			if (cur[j - 1] + 1 < d)
				d = cur[j - 1] + 1;
			if (i > 1 && j > 1 && events_lower(a[i - 1]) == events_lower(b[j - 2]) &&
			    events_lower(a[i - 2]) == events_lower(b[j - 1]) && pp[j - 2] + 1 < d)
				d = pp[j - 2] + 1;
			cur[j] = d;
			if (d < rowmin)
				rowmin = d;
		}
		if (rowmin > limit)
			return limit + 1;
		int *t = pp;
		pp = prev;
		prev = cur;
		cur = t;
	}
	return prev[nb];
}

/* Keeps name as a suggestion d edits away, if it is among the closest. */
static void events_keep(struct events_suggest *s, const char *name, int d);

static void events_consider(struct events_suggest *s, const char *name)
{
	int d = events_distance(s->want, name, s->limit);
	if (d <= s->limit)
		events_keep(s, name, d);
}

static void events_keep(struct events_suggest *s, const char *name, int d)
{
	for (int i = 0; i < s->n; i++)
		if (strcasecmp(s->names[i], name) == 0)
			return;
	/* keep the EVENTS_NSUGGEST closest, earlier candidates winning ties */
	int at = s->n;
	while (at > 0 && s->dist[at - 1] > d)
		at--;
	if (at >= EVENTS_NSUGGEST)
		return;
	char *copy = strdup(name);
	if (!copy) {
		s->nomem = true;
		return;
	}
	if (s->n == EVENTS_NSUGGEST)
		free(s->names[--s->n]);
	memmove(&s->names[at + 1], &s->names[at], (size_t)(s->n - at) * sizeof s->names[0]);
	memmove(&s->dist[at + 1], &s->dist[at], (size_t)(s->n - at) * sizeof s->dist[0]);
	s->names[at] = copy;
	s->dist[at] = d;
	s->n++;
}

static int events_suggest_builtin(void *arg, const struct evtable_entry *e)
{
	events_consider(arg, e->name);
	return 0;
}

static void events_suggest_pfm(void *arg, const char *name, const char *pmu)
{
	struct events_suggest *s = arg;
	if (!s->qualified) {
		events_consider(s, name);
		return;
	}
	char q[256];
	snprintf(q, sizeof q, "%s::%s", pmu, name);
	events_consider(s, q);
}

/* A PMU's alias close to the name wanted (tsx: msr/tsc/), suggested in
 * the PMU's spelling. */
static int events_suggest_pmu(void *arg, const struct event_info *info)
{
	struct events_suggest *s = arg;
	const char *alias = strchr(info->name, '/') + 1;
	char bare[256];
	snprintf(bare, sizeof bare, "%.*s", (int)strcspn(alias, "/"), alias);
	int d = events_distance(s->want, bare, s->limit);
	if (d <= s->limit)
		events_keep(s, info->name, d);
	return 0;
}

/* How far (edits) a suggestion for want may be: a third of its length,
 * between 1 and 3. */
static int events_suggest_limit(const char *want)
{
	int len = (int)strlen(want);
	return len / 3 < 1 ? 1 : len / 3 > 3 ? 3 : len / 3;
}

/* The suggestions s gathered as " (did you mean 'a', 'b' or 'c'?)" in hint
 * ("" without any); frees them. */
static void events_hint(struct events_suggest *s, char *hint, size_t size)
{
	size_t used = 0;
	hint[0] = 0;
	for (int i = 0; i < s->n && used < size; i++) {
		const char *sep = i == 0 ? " (did you mean " : i == s->n - 1 ? " or " : ", ";
		used += (size_t)snprintf(hint + used, size - used, "%s'%s'%s", sep, s->names[i],
					 i == s->n - 1 ? "?)" : "");
	}
	for (int i = 0; i < s->n; i++)
		free(s->names[i]);
	s->n = 0;
}

/* The message for an unknown name, with up to three close known names:
 * built-in ones, and libpfm4's when it is initialised (resolution needed it
 * before a name could be called unknown). */
static int events_unknown(const char *name, char **cause)
{
	if (!cause)
		return -EINVAL;
	struct events_suggest s = {.want = name, .qualified = strstr(name, "::") != NULL};
	s.limit = events_suggest_limit(name);
	evtable_foreach(events_suggest_builtin, &s);
	for (size_t i = 0; i < sizeof events_tools / sizeof events_tools[0]; i++)
		events_consider(&s, events_tools[i]);
	pfm_each_name(events_suggest_pfm, &s);
	pmu_list(PMU_SYSFS, events_suggest_pmu, &s);
	char hint[1024];
	events_hint(&s, hint, sizeof hint);
	return cause_set(cause, -EINVAL, "unknown event '%s'%s", name, hint);
}

/* --- tracepoints ---------------------------------------------------------- */

/* A term perf reads as a tracepoint: SYS:EVENT or SYS:EVENT:MODS, without
 * libpfm4's "::", and not NAME:MODS ("cycles:u").  Fills the parts (the
 * caller frees sys and event); mods points into term, or is NULL. */
static bool events_tp_split(const char *term, char **sys, char **event, const char **mods)
{
	const char *c1 = strchr(term, ':');
	if (!c1 || c1 == term || strstr(term, "::"))
		return false;
	const char *rest = c1 + 1, *c2 = strchr(rest, ':');
	size_t evlen = c2 ? (size_t)(c2 - rest) : strlen(rest);
	if (!evlen || (!c2 && events_all_modchars(rest)) || (c2 && strchr(c2 + 1, ':')))
		return false;
	*sys = strndup(term, (size_t)(c1 - term));
	*event = strndup(rest, evlen);
	*mods = c2 ? c2 + 1 : NULL;
	if (*sys && *event)
		return true;
	free(*sys);
	free(*event);
	*sys = *event = NULL;
	return false;
}

static bool events_is_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

static int events_tracefs_error(int err, const char *what, char **cause)
{
	if (err == -ENOENT)
		return cause_set(
			cause, -EINVAL,
			"cannot resolve tracepoint '%s': no tracefs at /sys/kernel/tracing "
			"or /sys/kernel/debug/tracing (mount -t tracefs nodev "
			"/sys/kernel/tracing)",
			what);
	if (err == -EACCES || err == -EPERM)
		return cause_set(cause, -EINVAL,
				 "cannot resolve tracepoint '%s': tracefs is not readable: %s "
				 "(run as root, or make /sys/kernel/tracing and its events' id "
				 "files readable)",
				 what, strerror(-err));
	return cause_set(cause, -EINVAL, "cannot resolve tracepoint '%s': %s", what,
			 strerror(-err));
}

static int events_suggest_tp(void *arg, const char *sys, const char *event)
{
	char q[512];
	snprintf(q, sizeof q, "%s:%s", sys, event);
	events_consider(arg, q);
	return 0;
}

/* The message for SYS:EVENT that tracefs does not hold, naming up to three
 * close tracepoints. */
static int events_tp_unknown(const char *sys, const char *event, char **cause)
{
	char want[512];
	snprintf(want, sizeof want, "%s:%s", sys, event);
	char dir[256];
	int err = tracefs_events_dir(dir, sizeof dir);
	if (err)
		return events_tracefs_error(err, want, cause);
	if (!cause)
		return -EINVAL;
	struct events_suggest s = {.want = want};
	s.limit = events_suggest_limit(want);
	tracefs_each(NULL, NULL, events_suggest_tp, &s);
	char hint[1024];
	events_hint(&s, hint, sizeof hint);
	if (events_is_glob(want))
		return cause_set(cause, -EINVAL, "no tracepoint matches '%s'", want);
	return cause_set(cause, -EINVAL, "unknown tracepoint '%s'%s", want, hint);
}

/* ev->attr for tracepoint SYS:EVENT with modifiers mods (or NULL). */
static int events_tp_attr(struct event *ev, const char *sys, const char *event, const char *mods,
			  const char *subject, char **cause)
{
	uint64_t id;
	int err = tracefs_id(sys, event, &id);
	if (err == -ENOENT)
		return events_tp_unknown(sys, event, cause);
	if (err)
		return events_tracefs_error(err, subject, cause);
	memset(&ev->attr, 0, sizeof ev->attr);
	ev->attr.size = sizeof ev->attr;
	ev->attr.type = PERF_TYPE_TRACEPOINT;
	ev->attr.config = id;
	if (mods && !*mods)
		return cause_set(cause, -EINVAL, "empty modifier in '%s'", subject);
	return mods ? events_apply_mods(&ev->attr, mods, true, subject, cause) : 0;
}

/* --- resolving one name --------------------------------------------------- */

/* Whether sys reads as a tracefs subsystem (sched, syscalls, probe_libc):
 * lower case, digits, '_' and '-'.  libpfm4's names with a unit mask
 * (RETIRED_UOPS:ANY) are upper case: their errors stay libpfm4's. */
static bool events_tp_like(const char *sys)
{
	return *sys && strspn(sys, "abcdefghijklmnopqrstuvwxyz0123456789_-") == strlen(sys);
}

static bool events_raw(const char *s, uint64_t *config)
{
	if (s[0] != 'r' || !s[1] || strspn(s + 1, "0123456789abcdefABCDEF") != strlen(s + 1) ||
	    strlen(s + 1) > 16)
		return false;
	*config = strtoull(s + 1, NULL, 16);
	return true;
}

static void events_unit(struct event *ev)
{
	if (event_is_tool(ev)) {
		ev->unit = "ns";
		ev->scale = 1.0;
		return;
	}
	bool clock = ev->attr.type == PERF_TYPE_SOFTWARE &&
		     (ev->attr.config == PERF_COUNT_SW_TASK_CLOCK ||
		      ev->attr.config == PERF_COUNT_SW_CPU_CLOCK);
	ev->unit = clock ? "msec" : "";
	ev->scale = clock ? 1e-6 : 1.0;
}

/* A sysfs PMU's event, PMU/terms/MODS (pmu.c), into ev: its attr, the
 * unit and scale of its alias, and a name=NAME term's name. */
static int events_pmu(const char *term, struct event *ev, char **cause)
{
	struct pmu_event pe;
	const char *mods;
	int err = pmu_resolve(PMU_SYSFS, term, &pe, &mods, cause);
	if (!err) {
		ev->attr = pe.attr;
		if (*mods)
			err = events_apply_mods(&ev->attr, mods, true, term, cause);
	}
	if (!err) {
		events_unit(ev);
		ev->sysfs_scaled = pe.scale != 1.0 || pe.unit;
		if (pe.scale != 1.0)
			ev->scale = pe.scale;
		if (pe.unit) {
			ev->unit = ev->unit_own = pe.unit;
			pe.unit = NULL;
		}
		ev->name = pe.name; /* NULL: the caller names it as written */
		pe.name = NULL;
		/* its own modifiers, which a group's add to, are in the term */
		if (ev->name && !(ev->written = strdup(term)))
			err = -ENOMEM;
	}
	pmu_event_release(&pe);
	return err;
}

/* The PMUs whose alias is a bare name (tsc: msr/tsc/), as perf finds them. */
struct events_bare {
	const char *want;
	char found[2][256]; /* the first two "PMU/ALIAS/" */
	int n;
};

static int events_bare_one(void *arg, const struct event_info *info)
{
	struct events_bare *b = arg;
	const char *alias = strchr(info->name, '/') + 1;
	size_t n = strlen(b->want);
	if (strncasecmp(alias, b->want, n) != 0 || strcmp(alias + n, "/") != 0)
		return 0;
	if (b->n < 2)
		snprintf(b->found[b->n], sizeof b->found[b->n], "%s", info->name);
	b->n++;
	return 0;
}

/* A bare name no table knows that one PMU's alias gives (perf takes "tsc"
 * for msr/tsc/), its modifiers after a ':' (tsc:u): 1 and ev resolved, 0
 * when no PMU has it, or -EINVAL when several do (perf opens one event per
 * PMU and adds them; spanstat asks which). */
static int events_bare_alias(const char *term, const char *base, const char *mods, struct event *ev,
			     char **cause)
{
	struct events_bare b = {.want = base};
	pmu_list(PMU_SYSFS, events_bare_one, &b);
	if (b.n == 0)
		return 0;
	if (b.n > 1)
		return cause_set(cause, -EINVAL,
				 "'%s' is an event of %d PMUs (%s, %s%s): name one, as %s", term,
				 b.n, b.found[0], b.found[1], b.n > 2 ? ", ..." : "", b.found[0]);
	if (mods && !*mods)
		return cause_set(cause, -EINVAL, "empty modifier in '%s'", term);
	char *spec;
	if (asprintf(&spec, "%s%s", b.found[0], mods ? mods : "") < 0)
		return -ENOMEM;
	int err = events_pmu(spec, ev, cause);
	free(spec);
	return err ? err : 1;
}

/* Resolve one name (as written, modifiers included) into ev->attr. */
static int events_resolve(const char *term, struct event *ev, char **cause)
{
	if (uprobe_is_spec(term)) {
		int err = uprobe_resolve(term, &ev->attr, &ev->probe_path, cause);
		if (!err)
			events_unit(ev);
		return err;
	}
	if (pmu_like(term))
		return events_pmu(term, ev, cause);
	int err = 0;
	size_t len = strlen(term);
	ssize_t colon = events_mod_colon(term);
	char *base = strndup(term, colon < 0 ? len : (size_t)colon);
	const char *mods = colon < 0 ? NULL : term + colon + 1;
	if (!base)
		return -ENOMEM;

	memset(&ev->attr, 0, sizeof ev->attr);
	ev->attr.size = sizeof ev->attr;
	uint32_t type;
	uint64_t config;
	bool raw = events_raw(base, &config), tool = !raw && events_tool(base, &config);
	if (raw || tool || evtable_lookup(base, &type, &config)) {
		ev->attr.type = raw ? PERF_TYPE_RAW : tool ? EVENT_TYPE_TOOL : type;
		ev->attr.config = config;
		if (mods && !*mods)
			err = cause_set(cause, -EINVAL, "empty modifier in '%s'", term);
		else if (mods)
			err = events_apply_mods(&ev->attr, mods, true, term, cause);
		goto out;
	}

	/* a tracepoint tracefs knows (sched:sched_switch, probe_libc:malloc) */
	char *sys = NULL, *event = NULL;
	const char *tpmods;
	if (events_tp_split(term, &sys, &event, &tpmods)) {
		uint64_t id;
		int tperr = tracefs_id(sys, event, &id);
		bool known = tperr == 0;
		if (known)
			err = events_tp_attr(ev, sys, event, tpmods, term, cause);
		else if ((tperr == -EACCES || tperr == -EPERM) && events_tp_like(sys))
			err = events_tracefs_error(tperr, term, cause); /* never "unknown" */
		free(sys);
		free(event);
		if (known || err)
			goto out;
	}

	/* libpfm4: a trailing perf-style modifier is ours, anything else after
	 * a ':' is libpfm4's (a unit mask, or its own u=1 style attributes) */
	bool ours = mods && events_all_modchars(mods);
	err = pfm_encode(ours ? base : term, ours ? events_levels(mods) : 0, &ev->attr, cause);
	if (err == -ENOENT && ours)
		err = pfm_encode(term, 0, &ev->attr, cause);
	else if (!err && ours) {
		/* libpfm4 sets guest/host bits of its own: G/H start afresh */
		if (strpbrk(mods, "GH"))
			ev->attr.exclude_guest = ev->attr.exclude_host = 0;
		err = events_apply_mods(&ev->attr, mods, false, term, cause);
	}
	if (err == -ENOENT) { /* not even with what follows the ':': name the rest */
		char *sys = NULL, *event = NULL;
		const char *tpmods;
		if (events_tp_split(term, &sys, &event, &tpmods) && events_tp_like(sys))
			err = events_tp_unknown(sys, event, cause);
		else if ((!mods || !*mods || events_all_modchars(mods)) &&
			 (err = events_bare_alias(term, base, mods, ev, cause)) != 0) {
			free(sys);
			free(event);
			free(base);
			return err < 0 ? err : 0; /* events_pmu set the unit */
		} else
			err = events_unknown(base, cause);
		free(sys);
		free(event);
	}
out:
	free(base);
	if (!err)
		events_unit(ev);
	return err;
}

/* --- the list parser ------------------------------------------------------ */

static int events_grow(struct evlist *evl)
{
	if (evl->n % 8)
		return 0;
	struct event *p = realloc(evl->ev, (evl->n + 8) * sizeof *p);
	if (!p)
		return -ENOMEM;
	evl->ev = p;
	return 0;
}

/* Append one resolved event; group < 0 gives it a group of its own. */
static struct event *events_push(struct evlist *evl, int group, bool leader, int *next_group)
{
	if (events_grow(evl))
		return NULL;
	struct event *ev = &evl->ev[evl->n];
	memset(ev, 0, sizeof *ev);
	ev->group = group < 0 ? (*next_group)++ : group;
	ev->leader = group < 0 || leader;
	return ev;
}

struct events_glob {
	struct evlist *evl;
	const char *mods;
	const char *subject;
	int group;
	bool leader;
	int *next_group;
	char **cause;
	size_t n;
};

/* One tracepoint a glob matched: a counter of its own, named SYS:EVENT[:MODS]. */
static int events_glob_one(void *arg, const char *sys, const char *event)
{
	struct events_glob *g = arg;
	struct event *ev = events_push(g->evl, g->group, g->leader && g->n == 0, g->next_group);
	if (!ev)
		return -ENOMEM;
	int err = events_tp_attr(ev, sys, event, g->mods, g->subject, g->cause);
	if (err)
		return err;
	events_unit(ev);
	size_t len = strlen(sys) + strlen(event) + (g->mods ? strlen(g->mods) + 1 : 0) + 2;
	ev->name = malloc(len);
	if (!ev->name)
		return -ENOMEM;
	snprintf(ev->name, len, "%s:%s%s%s", sys, event, g->mods ? ":" : "",
		 g->mods ? g->mods : "");
	g->evl->n++;
	g->n++;
	return 0;
}

/* Expand a tracepoint glob (sched:*, syscalls:sys_enter_*, *:sched_switch)
 * as perf does: every match in tracefs order, each counted apart. */
static int events_add_glob(struct evlist *evl, const char *term, const char *sys, const char *event,
			   const char *mods, int group, bool leader, int *next_group, char **cause)
{
	if (mods && !*mods)
		return cause_set(cause, -EINVAL, "empty modifier in '%s'", term);
	struct events_glob g = {evl, mods, term, group, leader, next_group, cause, 0};
	int err = tracefs_each(sys, event, events_glob_one, &g);
	if (err < 0 && cause && !*cause && err != -ENOMEM)
		return events_tracefs_error(err, term, cause);
	if (!err && g.n == 0)
		return events_tp_unknown(sys, event, cause);
	return err;
}

static int events_add(struct evlist *evl, const char *term, int group, bool leader, int *next_group,
		      char **cause)
{
	char *sys = NULL, *event = NULL;
	const char *mods = NULL;
	if (!pmu_like(term) && !uprobe_is_spec(term) &&
	    events_tp_split(term, &sys, &event, &mods)) {
		int err = 0;
		bool glob = events_is_glob(sys) || events_is_glob(event);
		if (glob)
			err = events_add_glob(evl, term, sys, event, mods, group, leader,
					      next_group, cause);
		free(sys);
		free(event);
		if (glob)
			return err;
	}
	struct event *ev = events_push(evl, group, leader, next_group);
	if (!ev)
		return -ENOMEM;
	int err = events_resolve(term, ev, cause);
	if (!err && !ev->name && !(ev->name = strdup(term)))
		err = -ENOMEM;
	if (err) {
		events_free(ev); /* not counted in evl->n: nobody else frees it */
		return err;
	}
	evl->n++;
	return 0;
}

/* Apply a group's modifiers to its members and show them in their names,
 * as perf does ({cycles,instructions}:u shows cycles:u, instructions:u). */
static int events_group_mods(struct evlist *evl, size_t first, const char *mods,
			     const char *subject, char **cause)
{
	for (size_t i = first; i < evl->n; i++) {
		struct event *ev = &evl->ev[i];
		const char *written = ev->written ? ev->written : ev->name;
		size_t pmu = pmu_span(written); /* PMU/terms/MODS: no ':' */
		ssize_t colon = pmu ? -1 : events_mod_colon(written);
		bool has_mods = pmu || (colon >= 0 && events_all_modchars(written + colon + 1));
		const char *own = pmu ? written + pmu : has_mods ? written + colon + 1 : "";
		/* A member without its own levels may still exclude some (libpfm4
		 * excludes the hypervisor by default): the group's levels are then
		 * the member's, not added to that default.  Likewise for G/H. */
		if (strpbrk(mods, "ukh") && !strpbrk(own, "ukh"))
			ev->attr.exclude_user = ev->attr.exclude_kernel = ev->attr.exclude_hv = 0;
		if (strpbrk(mods, "GH") && !strpbrk(own, "GH"))
			ev->attr.exclude_guest = ev->attr.exclude_host = 0;
		int err = events_apply_mods(&ev->attr, mods, true, subject, cause);
		if (err)
			return err;
		if (i > first) /* D pins the group through its leader: the kernel
				* refuses a pinned member, perf pins the leader only */
			ev->attr.pinned = 0;
		size_t n = strlen(ev->name);
		char *name = realloc(ev->name, n + strlen(mods) + 2);
		if (!name)
			return -ENOMEM;
		snprintf(name + n, strlen(mods) + 2, "%s%s", has_mods && !ev->written ? "" : ":",
			 mods);
		ev->name = name;
	}
	return 0;
}

static bool events_blank(const char *s)
{
	for (; *s; s++)
		if (*s != ' ' && *s != '\t' && *s != ',')
			return false;
	return true;
}

/* Copy s[from, to) without surrounding blanks. */
static char *events_trimdup(const char *s, size_t from, size_t to)
{
	while (from < to && (s[from] == ' ' || s[from] == '\t'))
		from++;
	while (to > from && (s[to - 1] == ' ' || s[to - 1] == '\t'))
		to--;
	return strndup(s + from, to - from);
}

/* Parse spec.  With dry set, only its syntax is checked (braces, empty
 * names, group modifiers) and nothing is resolved or appended, so a syntax
 * error is reported as such, before any name, and never costs libpfm4's
 * initialisation. */
static int events_parse_list(struct evlist *evl, const char *spec, bool dry, char **cause)
{
	bool in_group = false;
	int next_group = evl->ngroups, group = 0;
	size_t members = 0, first = 0, open_at = 0;
	size_t p = 0;
	for (;;) {
		while (spec[p] == ' ' || spec[p] == '\t')
			p++;
		if (spec[p] == '{') {
			if (in_group)
				return cause_set(cause, -EINVAL, "nested '{' in event list '%s'",
						 spec);
			in_group = true;
			group = next_group++;
			members = 0;
			first = evl->n;
			open_at = p++;
			continue;
		}
		size_t start = p;
		p += pmu_span(spec + p); /* PMU/a=1,b=2/: its commas are its own */
		p += strcspn(spec + p, ",{}");
		char *term = events_trimdup(spec, start, p);
		if (!term)
			return -ENOMEM;
		int err = 0;
		if (!*term && !spec[p] && in_group)
			err = cause_set(cause, -EINVAL, "unbalanced '{' in event list '%s'", spec);
		else if (!*term && spec[p] == '}' && in_group && members == 0)
			err = cause_set(cause, -EINVAL, "empty group in '%s'", spec);
		else if (!*term)
			err = cause_set(cause, -EINVAL, "empty event name in '%s'", spec);
		else if (spec[p] == '{')
			err = cause_set(cause, -EINVAL,
					"unexpected '{' after '%s' in event list '%s'", term, spec);
		else if (spec[p] == '}' && !in_group)
			err = cause_set(cause, -EINVAL, "unbalanced '}' in event list '%s'", spec);
		else if (in_group)
			err = dry ? (members++, 0)
				  : events_add(evl, term, group, members++ == 0, &next_group,
					       cause);
		else
			err = dry ? (next_group++, 0)
				  : events_add(evl, term, -1, true, &next_group, cause);
		free(term);
		if (err)
			return err;

		if (spec[p] == '}') {
			in_group = false;
			p++;
			if (spec[p] == ':') {
				size_t mstart = ++p;
				p += strcspn(spec + p, ",{} \t");
				char *mods = strndup(spec + mstart, p - mstart);
				char *subject = strndup(spec + open_at, p - open_at);
				struct perf_event_attr scratch = {0};
				if (!mods || !subject)
					err = -ENOMEM;
				else if (!*mods)
					err = cause_set(cause, -EINVAL, "empty modifier in '%s'",
							subject);
				else if (dry)
					err = events_apply_mods(&scratch, mods, true, subject,
								cause);
				else
					err = events_group_mods(evl, first, mods, subject, cause);
				free(mods);
				free(subject);
				if (err)
					return err;
			}
			while (spec[p] == ' ' || spec[p] == '\t')
				p++;
			if (spec[p] == '}')
				return cause_set(cause, -EINVAL,
						 "unbalanced '}' in event list '%s'", spec);
			if (spec[p] && spec[p] != ',')
				return cause_set(cause, -EINVAL,
						 "unexpected '%c' after '}' in event list '%s'",
						 spec[p], spec);
		}
		if (!spec[p]) {
			if (in_group)
				return cause_set(cause, -EINVAL,
						 "unbalanced '{' in event list '%s'", spec);
			if (!dry)
				evl->ngroups = next_group;
			return 0;
		}
		p++; /* the ',' */
	}
}

int evlist_parse(struct evlist *evl, const char *spec, char **cause)
{
	if (cause)
		*cause = NULL;
	if (events_blank(spec) || strcmp(spec, "{}") == 0)
		return cause_set(cause, -EINVAL, "empty event list");
	size_t n0 = evl->n;
	int err = events_parse_list(evl, spec, true, cause);
	if (!err)
		err = events_parse_list(evl, spec, false, cause);
	if (err) {
		for (size_t i = n0; i < evl->n; i++)
			events_free(&evl->ev[i]);
		evl->n = n0;
		if (cause && !*cause)
			cause_set(cause, -EINVAL, "cannot parse event list '%s': %s", spec,
				  strerror(-err));
	}
	return err;
}

int evlist_add_defaults(struct evlist *evl, char **cause)
{
	return evlist_parse(evl,
			    "task-clock,context-switches,cpu-migrations,page-faults,"
			    "cycles,instructions,branches,branch-misses",
			    cause);
}

/* --- listing -------------------------------------------------------------- */

/* Case-insensitive substring match; NULL or "" matches everything. */
static bool events_match(const char *name, const char *pattern)
{
	if (!pattern || !*pattern)
		return true;
	size_t np = strlen(pattern);
	for (; *name; name++)
		if (strncasecmp(name, pattern, np) == 0)
			return true;
	return false;
}

struct evlist_lister {
	const char *pattern;
	event_list_fn fn;
	void *arg;
	int ret; /* fn's nonzero return, which stops a listing */
};

static int evlist_known_builtin(void *arg, const struct evtable_entry *e)
{
	struct evlist_lister *l = arg;
	if (!events_match(e->name, l->pattern))
		return 0;
	struct event_info info = {e->name, e->desc, e->kind, evtable_usable(e->type, e->config)};
	return l->fn(l->arg, &info);
}

static int evlist_known_pfm(void *arg, const struct event_info *info)
{
	struct evlist_lister *l = arg;
	return events_match(info->name, l->pattern) ? (l->ret = l->fn(l->arg, info)) : 0;
}

/* The tracepoints a listing shows, gathered to be sorted as perf list sorts
 * them (tracefs's own order is kept for expanding globs). */
struct evlist_tps {
	const char *pattern;
	char **name;
	size_t n, cap;
};

static int evlist_known_tp(void *arg, const char *sys, const char *event)
{
	struct evlist_tps *t = arg;
	char name[512];
	snprintf(name, sizeof name, "%s:%s", sys, event);
	if (!events_match(name, t->pattern))
		return 0;
	if (GROW(t->name, t->n + 1, t->cap, 256) || !(t->name[t->n] = strdup(name)))
		return -ENOMEM;
	t->n++;
	return 0;
}

static int evlist_strcmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Lists the tracepoints whose names contain l->pattern, sorted; a tracefs
 * that is not there or not readable lists none. */
static int evlist_known_tps(struct evlist_lister *l)
{
	struct evlist_tps t = {.pattern = l->pattern};
	int r = tracefs_each(NULL, NULL, evlist_known_tp, &t);
	if (r != -ENOMEM) {
		r = 0;
		if (t.n) /* qsort takes no NULL, even for none */
			qsort(t.name, t.n, sizeof *t.name, evlist_strcmp);
	}
	for (size_t i = 0; i < t.n; i++) {
		struct event_info info = {t.name[i], "[Tracepoint event]", "tracepoint", true};
		if (r == 0)
			r = l->fn(l->arg, &info);
		free(t.name[i]);
	}
	free(t.name);
	return r;
}

int evlist_known(const char *pattern, event_list_fn fn, void *arg, char **cause)
{
	if (cause)
		*cause = NULL;
	struct evlist_lister l = {pattern, fn, arg, 0};
	int r = evtable_foreach(evlist_known_builtin, &l);
	if (r)
		return r;
	for (size_t i = 0; i < sizeof events_tools / sizeof events_tools[0]; i++) {
		static const char *const desc[] = {
			[EVENT_TOOL_DURATION] = "wall-clock time of the run (or interval), in ns",
			[EVENT_TOOL_USER] = "user CPU time of the command, in ns",
			[EVENT_TOOL_SYSTEM] = "system CPU time of the command, in ns",
		};
		struct event_info tool = {events_tools[i], desc[i], "tool", true};
		if (events_match(tool.name, pattern) && (r = fn(arg, &tool)) != 0)
			return r;
	}
	if (events_match("rNNNN", pattern)) {
		struct event_info raw = {"rNNNN",
					 "raw event: the hex config the CPU's manual gives", "raw",
					 pfm_kernel_core_pmu()};
		r = fn(arg, &raw);
		if (r)
			return r;
	}
	/* the kernel's PMUs and tracepoints: a sysfs or tracefs that cannot
	 * be read lists nothing, as perf list */
	r = pmu_list(PMU_SYSFS, evlist_known_pfm, &l);
	if (r == 0 && !l.ret)
		r = evlist_known_tps(&l);
	if (r < 0 && !l.ret)
		return cause_set(cause, r, "cannot list PMU events and tracepoints: %s",
				 strerror(-r));
	if (r || l.ret)
		return r ? r : l.ret;
	r = pfm_list(evlist_known_pfm, &l, cause);
	if (r < 0 && cause && !*cause)
		cause_set(cause, -EINVAL, "cannot list libpfm4 events: %s", strerror(-r));
	return r;
}
