/* pmu.c: perf's PMU/term=value,.../ events for every PMU sysfs lists
 * (pmu.h): reading a PMU's type, format terms and event aliases (with their
 * scale and unit), placing each term's value into config, config1 or
 * config2 bit by bit as perf does, the errors that name what is known, and
 * the listing.  Nothing is cached: a PMU is read when a name needs it.
 */
#include "config.h"

#include "pmu.h"

#include <dirent.h>
#include <errno.h>
#include <locale.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cause.h"
#include "grow.h"

/* Where one format term's value goes. */
struct pmu_format {
	char *name;
	char *spec; /* as sysfs gives it: "config1:0-3,8" */
	int word;   /* 0 config, 1 config1, 2 config2; -1 unreadable */
	uint64_t mask;
};

/* One PMU as sysfs describes it (aliases by name only: their terms are
 * read when used). */
struct pmu {
	char dir[4096];
	const char *name;
	uint32_t type;
	struct pmu_format *fmt;
	size_t nfmt, fmt_cap;
	char **alias;
	size_t nalias, alias_cap;
};

/* perf's terms that every PMU takes (the counting ones). */
static const char *const pmu_generic[] = {"config", "config1", "config2", "name"};

static void pmu_release(struct pmu *p)
{
	for (size_t i = 0; i < p->nfmt; i++) {
		free(p->fmt[i].name);
		free(p->fmt[i].spec);
	}
	free(p->fmt);
	for (size_t i = 0; i < p->nalias; i++)
		free(p->alias[i]);
	free(p->alias);
	memset(p, 0, sizeof *p);
}

void pmu_event_release(struct pmu_event *pe)
{
	free(pe->name);
	free(pe->unit);
	pe->name = pe->unit = NULL;
}

/* Reads dir/file (a short sysfs file) into buf without trailing white
 * space: 0 or -errno. */
static int pmu_read(const char *dir, const char *file, char *buf, size_t size)
{
	char path[8192];
	snprintf(path, sizeof path, "%s/%s", dir, file);
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	size_t n = fread(buf, 1, size - 1, f);
	int err = ferror(f) ? -EIO : 0;
	fclose(f);
	buf[n] = 0;
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' ' || buf[n - 1] == '\t'))
		buf[--n] = 0;
	return err;
}

static bool pmu_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-' || c == '.';
}

bool pmu_like(const char *spec)
{
	size_t n = 0;
	while (pmu_name_char(spec[n]))
		n++;
	return n > 0 && spec[n] == '/' && spec[0] != '.';
}

size_t pmu_span(const char *spec)
{
	if (!pmu_like(spec))
		return 0;
	const char *open = strchr(spec, '/'), *close = strchr(open + 1, '/');
	return close ? (size_t)(close - spec) + 1 : 0;
}

/* "config:0-7", "config1:0-3,8", "config2:21" into f->word and f->mask. */
static int pmu_format_parse(struct pmu_format *f)
{
	const char *s = f->spec;
	size_t wl = strcspn(s, ":");
	if (!s[wl])
		return -EINVAL;
	if (wl == 6 && strncmp(s, "config", 6) == 0)
		f->word = 0;
	else if (wl == 7 && strncmp(s, "config1", 7) == 0)
		f->word = 1;
	else if (wl == 7 && strncmp(s, "config2", 7) == 0)
		f->word = 2;
	else
		return -EINVAL;
	s += wl + 1;
	f->mask = 0;
	for (;;) {
		char *end;
		unsigned long lo = strtoul(s, &end, 10), hi = lo;
		if (end == s || lo > 63)
			return -EINVAL;
		s = end;
		if (*s == '-') {
			hi = strtoul(++s, &end, 10);
			if (end == s || hi > 63 || hi < lo)
				return -EINVAL;
			s = end;
		}
		for (unsigned long b = lo; b <= hi; b++)
			f->mask |= 1ull << b;
		if (!*s)
			return 0;
		if (*s++ != ',')
			return -EINVAL;
	}
}

static bool pmu_alias_file(const char *name)
{
	static const char *const meta[] = {".scale", ".unit", ".per-pkg", ".snapshot"};
	size_t n = strlen(name);
	for (size_t i = 0; i < sizeof meta / sizeof meta[0]; i++) {
		size_t m = strlen(meta[i]);
		if (n > m && strcmp(name + n - m, meta[i]) == 0)
			return false;
	}
	return name[0] != '.';
}

static int pmu_dirent_file(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

/* The sorted names of dir's files (none when dir is missing). */
static int pmu_names(const char *dir, struct dirent ***list)
{
	int n = scandir(dir, list, pmu_dirent_file, alphasort);
	if (n < 0) {
		*list = NULL;
		return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
	}
	return n;
}

static void pmu_names_free(struct dirent **list, int n)
{
	for (int i = 0; i < n; i++)
		free(list[i]);
	free(list);
}

/* Reads PMU name under sysfs: -ENOENT when there is none. */
static int pmu_load(const char *sysfs, const char *name, struct pmu *p)
{
	memset(p, 0, sizeof *p);
	if (!*name || name[0] == '.' || strchr(name, '/') ||
	    (size_t)snprintf(p->dir, sizeof p->dir, "%s/%s", sysfs, name) >= sizeof p->dir)
		return -ENOENT;
	p->name = strrchr(p->dir, '/') + 1;
	char buf[64], *end;
	int err = pmu_read(p->dir, "type", buf, sizeof buf);
	if (err)
		return err == -ENOTDIR ? -ENOENT : err;
	unsigned long t = strtoul(buf, &end, 10);
	if (end == buf || *end || t > UINT32_MAX)
		return -EINVAL;
	p->type = (uint32_t)t;

	char sub[8192];
	struct dirent **list;
	snprintf(sub, sizeof sub, "%s/format", p->dir);
	int n = pmu_names(sub, &list);
	for (int i = 0; i < n && !err; i++) {
		if (GROW(p->fmt, p->nfmt + 1, p->fmt_cap, 8)) {
			err = -ENOMEM;
			break;
		}
		char spec[256];
		struct pmu_format *f = &p->fmt[p->nfmt];
		memset(f, 0, sizeof *f);
		if (pmu_read(sub, list[i]->d_name, spec, sizeof spec))
			spec[0] = 0;
		f->name = strdup(list[i]->d_name);
		f->spec = strdup(spec);
		if (!f->name || !f->spec) {
			free(f->name);
			free(f->spec);
			err = -ENOMEM;
			break;
		}
		if (pmu_format_parse(f))
			f->word = -1;
		p->nfmt++;
	}
	pmu_names_free(list, n);
	if (n < 0 || err)
		return n < 0 ? n : err;

	snprintf(sub, sizeof sub, "%s/events", p->dir);
	n = pmu_names(sub, &list);
	for (int i = 0; i < n && !err; i++) {
		if (!pmu_alias_file(list[i]->d_name))
			continue;
		if (GROW(p->alias, p->nalias + 1, p->alias_cap, 16) ||
		    !(p->alias[p->nalias] = strdup(list[i]->d_name)))
			err = -ENOMEM;
		else
			p->nalias++;
	}
	pmu_names_free(list, n);
	return n < 0 ? n : err;
}

static const struct pmu_format *pmu_find_format(const struct pmu *p, const char *term)
{
	for (size_t i = 0; i < p->nfmt; i++)
		if (strcmp(p->fmt[i].name, term) == 0)
			return &p->fmt[i];
	return NULL;
}

static const char *pmu_find_alias(const struct pmu *p, const char *term)
{
	for (size_t i = 0; i < p->nalias; i++)
		if (strcasecmp(p->alias[i], term) == 0)
			return p->alias[i];
	return NULL;
}

/* --- errors ----------------------------------------------------------------- */

/* Edit distance ignoring case, or limit+1 once it exceeds limit. */
static int pmu_distance(const char *a, const char *b, int limit)
{
	size_t na = strlen(a), nb = strlen(b);
	if (nb > 63 || (na > nb ? na - nb : nb - na) > (size_t)limit)
		return limit + 1;
	int prev[64], cur[64];
	for (size_t j = 0; j <= nb; j++)
		prev[j] = (int)j;
	for (size_t i = 1; i <= na; i++) {
		cur[0] = (int)i;
		for (size_t j = 1; j <= nb; j++) {
			int d = prev[j - 1] + (strncasecmp(a + i - 1, b + j - 1, 1) != 0);
			if (prev[j] + 1 < d)
				d = prev[j] + 1;
			if (cur[j - 1] + 1 < d)
				d = cur[j - 1] + 1;
			cur[j] = d;
		}
		memcpy(prev, cur, (nb + 1) * sizeof cur[0]);
	}
	return prev[nb] > limit ? limit + 1 : prev[nb];
}

/* Appends to buf what follows, within size. */
static void pmu_cat(char *buf, size_t size, const char *fmt, const char *s)
{
	size_t used = strlen(buf);
	if (used < size)
		snprintf(buf + used, size - used, fmt, s);
}

/* The message for PMU name that sysfs does not list: the closest PMUs (up
 * to three within a third of the name's length), else every PMU here. */
static int pmu_unknown(const char *sysfs, const char *name, const char *spec, char **cause)
{
	struct dirent **list;
	int n = pmu_names(sysfs, &list);
	int limit = (int)strlen(name) / 3 < 1	? 1
		    : (int)strlen(name) / 3 > 3 ? 3
						: (int)strlen(name) / 3;
	char hint[1024] = "";
	int shown = 0;
	for (int i = 0; i < n; i++) { /* PMUs only: a directory with a type */
		char type[8192];
		snprintf(type, sizeof type, "%s/%s/type", sysfs, list[i]->d_name);
		if (access(type, F_OK)) {
			free(list[i]);
			list[i] = NULL;
		}
	}
	for (int d = 0; d <= limit && shown < 3; d++)
		for (int i = 0; i < n && shown < 3; i++)
			if (list[i] && pmu_distance(name, list[i]->d_name, limit) == d)
				pmu_cat(hint, sizeof hint,
					shown++ ? ", '%s'" : " (did you mean '%s'",
					list[i]->d_name);
	if (shown)
		pmu_cat(hint, sizeof hint, "%s", "?)");
	for (int i = 0, k = 0; i < n && !shown; i++)
		if (list[i])
			pmu_cat(hint, sizeof hint, k++ ? ", %s" : " (PMUs here: %s",
				list[i]->d_name);
	if (*hint && !shown)
		pmu_cat(hint, sizeof hint, "%s", ")");
	pmu_names_free(list, n);
	return cause_set(cause, -ENOENT, "%s: unknown PMU '%s'%s", spec, name, hint);
}

#define PMU_ALIASES_SHOWN 16

static int pmu_unknown_term(const struct pmu *p, const char *term, const char *spec, char **cause)
{
	char known[2048] = "";
	int k = 0;
	for (size_t i = 0; i < p->nfmt; i++)
		pmu_cat(known, sizeof known, k++ ? ", %s" : "%s", p->fmt[i].name);
	for (size_t i = 0; i < p->nalias && i < PMU_ALIASES_SHOWN; i++)
		pmu_cat(known, sizeof known, k++ ? ", %s" : "%s", p->alias[i]);
	if (p->nalias > PMU_ALIASES_SHOWN) {
		char more[128];
		snprintf(more, sizeof more, ", %zu more events: spanstat --list %s/",
			 p->nalias - PMU_ALIASES_SHOWN, p->name);
		pmu_cat(known, sizeof known, "%s", more);
	}
	for (size_t i = 0; i < sizeof pmu_generic / sizeof pmu_generic[0]; i++)
		pmu_cat(known, sizeof known, k++ ? ", %s" : "%s", pmu_generic[i]);
	return cause_set(cause, -EINVAL, "%s: unknown term '%s' (known: %s)", spec, term, known);
}

/* --- terms ------------------------------------------------------------------ */

static __u64 *pmu_word(struct perf_event_attr *attr, int word)
{
	return word == 0 ? &attr->config : word == 1 ? &attr->config1 : &attr->config2;
}

/* VALUE as perf reads it: 0x hex or decimal, 64 bits at most. */
static int pmu_number(const char *s, uint64_t *v)
{
	bool hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	const char *digits = hex ? s + 2 : s;
	if (!*digits ||
	    strspn(digits, hex ? "0123456789abcdefABCDEF" : "0123456789") != strlen(digits))
		return -EINVAL;
	errno = 0;
	*v = strtoull(digits, NULL, hex ? 16 : 10);
	return errno == ERANGE ? -ERANGE : 0;
}

/* Spreads v over mask's bits, lowest first (perf's pmu_format_value). */
static uint64_t pmu_deposit(uint64_t v, uint64_t mask)
{
	uint64_t out = 0;
	for (int b = 0, k = 0; b < 64; b++)
		if (mask >> b & 1)
			out |= (v >> k++ & 1) << b;
	return out;
}

static int pmu_popcount(uint64_t m)
{
	return __builtin_popcountll(m);
}

static char *pmu_trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = 0;
	return s;
}

/* A double in the C locale (sysfs's .scale), whatever LC_NUMERIC says. */
static int pmu_scale(const char *s, double *v)
{
	locale_t c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
	if (!c)
		return -ENOMEM;
	char *end;
	*v = strtod_l(s, &end, c);
	freelocale(c);
	return end != s && !*end && *v > 0 ? 0 : -EINVAL;
}

/* A term an alias leaves to the user (umask=?), by name. */
#define PMU_NEED 64

/* One event's terms being applied, in perf's order: a first pass sets
 * config, config1, config2 (the whole word, the last one given) and name
 * (the first one given); a second ORs every format term's bits into its
 * word, an alias's where the alias stands, as perf 6.1's pmu_config_term
 * does: bits are never cleared, so msr/event=1,event=0/ is config 1. */
struct pmu_job {
	const struct pmu *p;
	const char *spec;
	struct pmu_event *pe;
	int pass;
	const char *alias;   /* the alias the user's terms name, if one */
	char need[PMU_NEED]; /* a term an alias leaves to the user (umask=?) */
};

static int pmu_terms(struct pmu_job *job, const char *terms, const char *alias, char **cause);

/* Alias's terms applied, and in the last pass its scale and unit. */
static int pmu_apply_alias(struct pmu_job *job, const char *alias, char **cause)
{
	const struct pmu *p = job->p;
	char dir[8192], terms[4096], file[512];
	snprintf(dir, sizeof dir, "%s/events", p->dir);
	int err = pmu_read(dir, alias, terms, sizeof terms);
	if (err)
		return cause_set(cause, -EINVAL, "%s: cannot read event '%s' of PMU '%s': %s",
				 job->spec, alias, p->name, strerror(-err));
	err = pmu_terms(job, terms, alias, cause);
	if (err || job->pass == 0)
		return err;
	struct pmu_event *pe = job->pe;
	char buf[256];
	snprintf(file, sizeof file, "%s.scale", alias);
	if (pmu_read(dir, file, buf, sizeof buf) == 0 && (err = pmu_scale(buf, &pe->scale)))
		return err == -ENOMEM ? err
				      : cause_set(cause, -EINVAL,
						  "%s: the scale '%s' of event '%s' of PMU '%s' "
						  "is not a positive number",
						  job->spec, buf, alias, p->name);
	snprintf(file, sizeof file, "%s.unit", alias);
	if (pmu_read(dir, file, buf, sizeof buf) == 0 && *buf) {
		free(pe->unit);
		if (!(pe->unit = strdup(buf)))
			return -ENOMEM;
	}
	return 0;
}

/* name=NAME's NAME as perf takes it: "..." quotes dropped, and nothing
 * that would break a line of output. */
static int pmu_name(struct pmu_job *job, const char *value, char **cause)
{
	size_t n = strlen(value);
	if (n >= 2 && value[0] == '"' && value[n - 1] == '"')
		value++, n -= 2;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)value[i] < 0x20 || value[i] == 0x7f)
			return cause_set(cause, -EINVAL,
					 "%s: the name '%.*s' has a control character", job->spec,
					 (int)n, value);
	if (!n)
		return cause_set(cause, -EINVAL, "%s: term 'name' has an empty name", job->spec);
	return (job->pe->name = strndup(value, n)) ? 0 : -ENOMEM;
}

/* One term, KEY or KEY=VALUE (value NULL for a bare KEY).  alias, when
 * not NULL, names the alias whose expansion it comes from. */
static int pmu_term(struct pmu_job *job, const char *key, const char *value, const char *alias,
		    char **cause)
{
	const struct pmu *p = job->p;
	const char *spec = job->spec;
	char from[300] = "";
	if (alias)
		snprintf(from, sizeof from, " (from event '%s')", alias);
	if (!*key)
		return cause_set(cause, -EINVAL, "%s: empty term%s", spec, from);
	if (value && !*value)
		return cause_set(cause, -EINVAL, "%s: term '%s' has no value after '='%s", spec,
				 key, from);
	if (strcmp(key, "name") == 0) {
		if (!value)
			return cause_set(cause, -EINVAL,
					 "%s: term 'name' needs a value (name=NAME)", spec);
		/* the first name= names the event, as perf's get_config_name */
		return job->pass == 0 && !job->pe->name ? pmu_name(job, value, cause) : 0;
	}
	uint64_t v = 1;
	const struct pmu_format *f = pmu_find_format(p, key);
	/* an alias is a bare term or one set to 1 (perf: msr/tsc=1/) */
	const char *a = !f && !alias && (!value || (pmu_number(value, &v) == 0 && v == 1))
				? pmu_find_alias(p, key)
				: NULL;
	if (a) {
		if (job->pass == 0 && job->alias)
			return cause_set(cause, -EINVAL,
					 "%s: more than one event ('%s' and '%s'): one PMU event "
					 "names at most one",
					 spec, job->alias, a);
		job->alias = a;
		return pmu_apply_alias(job, a, cause);
	}
	int word = -1;
	uint64_t mask = ~0ull;
	for (int w = 0; w < 3; w++)
		if (strcmp(key, pmu_generic[w]) == 0)
			word = w;
	bool generic = word >= 0; /* config, config1, config2: the whole word */
	if (!generic && f) {
		if (f->word < 0)
			return cause_set(cause, -EINVAL,
					 "%s: cannot read the format of term '%s' of PMU '%s' "
					 "('%s')",
					 spec, key, p->name, f->spec);
		word = f->word;
		mask = f->mask;
	}
	if (word < 0) {
		if (value && pmu_find_alias(p, key))
			return cause_set(cause, -EINVAL, "%s: event '%s' takes no value but 1",
					 spec, key);
		return pmu_unknown_term(p, key, spec, cause);
	}
	v = 1;
	if (value) {
		if (strcmp(value, "?") == 0 && alias) { /* the user's to give */
			snprintf(job->need, PMU_NEED, "%s", key);
			return 0;
		}
		int err = pmu_number(value, &v);
		if (err == -ERANGE)
			return cause_set(cause, -EINVAL,
					 "%s: value '%s' of term '%s' is too big: "
					 "at most 64 bits",
					 spec, value, key);
		if (err)
			return cause_set(cause, -EINVAL,
					 "%s: value '%s' of term '%s'%s is not a number (decimal "
					 "or 0x hex)",
					 spec, value, key, from);
	}
	int width = pmu_popcount(mask);
	if (width < 64 && v >> width)
		return cause_set(cause, -EINVAL,
				 "%s: value %#llx of term '%s'%s is too big for its %d bit%s "
				 "(%s): at most %#llx",
				 spec, (unsigned long long)v, key, from, width,
				 width == 1 ? "" : "s", f ? f->spec : "",
				 (unsigned long long)((1ull << width) - 1));
	__u64 *w = pmu_word(&job->pe->attr, word);
	if (generic && job->pass == 0)
		*w = v;
	else if (!generic && job->pass == 1)
		*w |= pmu_deposit(v, mask);
	return 0;
}

/* Applies terms ("a=1,b,c=0x2") to job's event. */
static int pmu_terms(struct pmu_job *job, const char *terms, const char *alias, char **cause)
{
	char *copy = strdup(terms);
	if (!copy)
		return -ENOMEM;
	int err = 0;
	if (!*pmu_trim(copy)) {
		free(copy);
		return 0; /* "msr//": config 0, as perf */
	}
	for (char *rest = pmu_trim(copy); !err;) {
		char *one = strsep(&rest, ",");
		if (!one)
			break;
		char *eq = strchr(one, '=');
		if (eq)
			*eq = 0;
		err = pmu_term(job, pmu_trim(one), eq ? pmu_trim(eq + 1) : NULL, alias, cause);
	}
	free(copy);
	return err;
}

/* Whether the user's terms give key a value. */
static bool pmu_user_sets(char *terms, const char *key)
{
	char *save = NULL;
	for (char *t = terms, *one; (one = strtok_r(t, ",", &save)); t = NULL) {
		char *eq = strchr(one, '=');
		if (eq) {
			*eq = 0;
			if (strcmp(pmu_trim(one), key) == 0)
				return true;
		}
	}
	return false;
}

int pmu_resolve(const char *sysfs, const char *spec, struct pmu_event *pe, const char **mods,
		char **cause)
{
	memset(pe, 0, sizeof *pe);
	pe->attr.size = sizeof pe->attr;
	pe->scale = 1.0;
	*mods = spec + strlen(spec);
	if (!pmu_like(spec))
		return cause_set(cause, -EINVAL, "%s: not a PMU event (PMU/term=value,.../)", spec);
	size_t span = pmu_span(spec);
	if (!span)
		return cause_set(cause, -EINVAL, "%s: no '/' closes the terms", spec);
	const char *slash = strchr(spec, '/');
	char *name = strndup(spec, (size_t)(slash - spec));
	char *terms = strndup(slash + 1, span - (size_t)(slash - spec) - 2);
	struct pmu p = {.fmt = NULL};
	int err = name && terms ? pmu_load(sysfs, name, &p) : -ENOMEM;
	if (err == -ENOENT)
		err = pmu_unknown(sysfs, name, spec, cause);
	else if (err == -ENOMEM)
		;
	else if (err)
		err = cause_set(cause, -EINVAL, "%s: cannot read PMU '%s' in %s: %s", spec, name,
				sysfs, strerror(-err));
	else {
		struct pmu_job job = {.p = &p, .spec = spec, .pe = pe};
		pe->attr.type = p.type;
		err = pmu_terms(&job, terms, NULL, cause);
		job.pass = 1;
		if (!err)
			err = pmu_terms(&job, terms, NULL, cause);
		if (!err && *job.need && !pmu_user_sets(terms, job.need))
			err = cause_set(cause, -EINVAL, "%s: term '%s' needs a value: add %s=VALUE",
					spec, job.need, job.need);
	}
	pmu_release(&p);
	free(name);
	free(terms);
	*mods = spec + span;
	return err;
}

/* --- listing ---------------------------------------------------------------- */

static int pmu_list_one(const char *sysfs, const char *name, event_list_fn fn, void *arg)
{
	struct pmu p;
	if (pmu_load(sysfs, name, &p)) {
		pmu_release(&p);
		return 0; /* not a PMU, or one we may not read: not listed */
	}
	int r = 0;
	char ev[512], desc[4096], terms[2048];
	char dir[8192];
	snprintf(dir, sizeof dir, "%s/events", p.dir);
	for (size_t i = 0; r == 0 && i < p.nalias; i++) {
		char file[512], unit[128] = "";
		if (pmu_read(dir, p.alias[i], terms, sizeof terms))
			continue;
		snprintf(file, sizeof file, "%s.unit", p.alias[i]);
		if (pmu_read(dir, file, unit, sizeof unit))
			unit[0] = 0;
		snprintf(ev, sizeof ev, "%s/%s/", p.name, p.alias[i]);
		snprintf(desc, sizeof desc, "[Kernel PMU event] %s%s%s", terms,
			 *unit ? ", in " : "", unit);
		struct event_info info = {ev, desc, p.name, true};
		r = fn(arg, &info);
	}
	if (r == 0 && p.nfmt) {
		size_t e = (size_t)snprintf(ev, sizeof ev, "%s/", p.name);
		size_t d = (size_t)snprintf(desc, sizeof desc, "[PMU terms, type %u]", p.type);
		for (size_t i = 0; i < p.nfmt; i++) {
			if (e < sizeof ev)
				e += (size_t)snprintf(ev + e, sizeof ev - e, "%s%s=N", i ? "," : "",
						      p.fmt[i].name);
			if (d < sizeof desc)
				d += (size_t)snprintf(desc + d, sizeof desc - d, "%s %s: %s",
						      i ? "," : "", p.fmt[i].name, p.fmt[i].spec);
		}
		if (e < sizeof ev)
			snprintf(ev + e, sizeof ev - e, "/");
		struct event_info info = {ev, desc, p.name, true};
		r = fn(arg, &info);
	}
	pmu_release(&p);
	return r;
}

int pmu_list(const char *sysfs, event_list_fn fn, void *arg)
{
	struct dirent **list;
	int n = pmu_names(sysfs, &list), r = 0;
	for (int i = 0; i < n && r == 0; i++)
		r = pmu_list_one(sysfs, list[i]->d_name, fn, arg);
	pmu_names_free(list, n);
	return r;
}
