/* test_pmu.c: unit tests for perf's PMU/term=value,.../ syntax (lib/perf/pmu.c)
 * against a fake sysfs tree made in a temporary directory: a "cpu" PMU with
 * event/umask/edge/cmask/any/ldlat style formats, a scattered one
 * (config2:0-3,8) and aliases, a "power" PMU whose alias has a scale and a
 * unit (RAPL's energy-pkg), and a directory that is no PMU.  Every error
 * message is checked whole, and the listing.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pmu.h"
#include "tap.h"

static char root[64];

/* Writes root/path (its directories made) with text. */
static void put(const char *path, const char *text)
{
	char full[512];
	snprintf(full, sizeof full, "%s/%s", root, path);
	for (char *s = full + strlen(root) + 1; (s = strchr(s, '/')); s++) {
		*s = 0;
		mkdir(full, 0755);
		*s = '/';
	}
	FILE *f = fopen(full, "w");
	if (!f) {
		perror(full);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
}

static void make_tree(void)
{
	snprintf(root, sizeof root, "/tmp/spanstat-pmu-XXXXXX");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		exit(1);
	}
	put("cpu/type", "4\n");
	put("cpu/format/event", "config:0-7\n");
	put("cpu/format/umask", "config:8-15\n");
	put("cpu/format/edge", "config:18\n");
	put("cpu/format/any", "config:21\n");
	put("cpu/format/cmask", "config:24-31\n");
	put("cpu/format/ldlat", "config1:0-15\n");
	put("cpu/format/split", "config2:0-3,8\n");
	put("cpu/format/weird", "confog:0-3\n");
	put("cpu/events/cycles", "event=0x3c\n");
	put("cpu/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n");
	put("cpu/events/needs", "event=0x1,umask=?\n");
	put("cpu/events/mem-loads.snapshot", "1\n");
	put("power/type", "20\n");
	put("power/format/event", "config:0-7\n");
	put("power/events/energy-pkg", "event=0x02\n");
	put("power/events/energy-pkg.scale", "2.3283064365386962890625e-10\n");
	put("power/events/energy-pkg.unit", "Joules\n");
	put("power/events/energy-pkg.per-pkg", "1\n");
	put("notapmu/readme", "no type file here\n");
}

static void remove_tree(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	if (system(cmd) != 0)
		diag("could not remove %s", root);
}

/* Resolves spec; expects success with these words. */
static void one(const char *spec, uint32_t type, uint64_t config, uint64_t config1,
		uint64_t config2)
{
	struct pmu_event pe;
	const char *mods;
	char *cause = NULL;
	int r = pmu_resolve(root, spec, &pe, &mods, &cause);
	if (!ok(r == 0 && pe.attr.type == type && pe.attr.config == config &&
			pe.attr.config1 == config1 && pe.attr.config2 == config2 &&
			pe.attr.size == sizeof pe.attr,
		"'%s' is type %u config %#llx config1 %#llx config2 %#llx", spec, type,
		(unsigned long long)config, (unsigned long long)config1,
		(unsigned long long)config2))
		diag("r=%d cause=%s type=%u config=%#llx config1=%#llx config2=%#llx", r,
		     cause ? cause : "-", pe.attr.type, (unsigned long long)pe.attr.config,
		     (unsigned long long)pe.attr.config1, (unsigned long long)pe.attr.config2);
	free(cause);
	pmu_event_release(&pe);
}

/* Resolves spec; expects ret and exactly msg. */
static void bad(const char *spec, int ret, const char *msg)
{
	struct pmu_event pe;
	const char *mods;
	char *cause = NULL;
	int r = pmu_resolve(root, spec, &pe, &mods, &cause);
	if (!ok(r == ret && cause && strcmp(cause, msg) == 0, "'%s' fails: %s", spec, msg))
		diag("r=%d cause=%s", r, cause ? cause : "(null)");
	free(cause);
	pmu_event_release(&pe);
}

static void test_span(void)
{
	is_int((int)pmu_span("cpu/event=0x3c,umask=1/uk,cycles"), 23,
	       "the span of PMU/terms/ keeps the terms' commas");
	is_int((int)pmu_span("msr//"), 5, "empty terms are a span");
	is_int((int)pmu_span("cpu/event=1"), 0, "unclosed terms are no span");
	ok(pmu_like("cpu/event=1"), "but they look like a PMU event");
	is_int((int)pmu_span("uprobe:/bin/ls:main"), 0, "a uprobe spelling is no PMU event");
	ok(!pmu_like("uprobe:/bin/ls:main"), "nor looks like one");
	ok(!pmu_like("sched:sched_switch") && !pmu_like("cycles:u") && !pmu_like("/cpu/x/") &&
		   !pmu_like("./x/"),
	   "tracepoints, names and paths do not look like PMU events");
}

static void test_terms(void)
{
	one("cpu/event=0x3c,umask=0/", 4, 0x3c, 0, 0);
	one("cpu/event=60,umask=0x1,edge,cmask=2/", 4, 0x3c | 1u << 8 | 1u << 18 | 2u << 24, 0, 0);
	one("cpu/any/", 4, 1u << 21, 0, 0);
	one("cpu/ event = 0x3c , umask=0x0 /", 4, 0x3c, 0, 0);
	one("cpu/event=010/", 4, 10, 0, 0);
	one("cpu/split=0x1f/", 4, 0, 0, 0x10f);
	/* perf 6.1's rule: a format term ORs its bits in, never clears them;
	 * config= sets the whole word first, wherever it stands */
	one("cpu/split=0x1f,split=0x1/", 4, 0, 0, 0x10f);
	one("cpu/event=1,event=2/", 4, 3, 0, 0);
	one("cpu/cycles,event=0x3/", 4, 0x3f, 0, 0);
	one("cpu/event=0x3,cycles/", 4, 0x3f, 0, 0);
	one("cpu/event=0x3,config=0x1c00/", 4, 0x1c03, 0, 0);
	one("cpu/config=0x1c00,event=0x3/", 4, 0x1c03, 0, 0);
	one("cpu/config=0x1,config=0x2/", 4, 0x2, 0, 0);
	one("cpu/cycles=1/", 4, 0x3c, 0, 0);
	one("cpu/cycles=0x1/", 4, 0x3c, 0, 0);
	one("cpu/config=0x1234,config1=5,config2=0xffffffffffffffff/", 4, 0x1234, 5, ~0ull);
	one("cpu/ldlat=0xffff/", 4, 0, 0xffff, 0);
	one("cpu//", 4, 0, 0, 0);
	one("cpu/cycles/", 4, 0x3c, 0, 0);
	one("cpu/CYCLES/", 4, 0x3c, 0, 0);
	one("cpu/mem-loads/", 4, 0x1cd, 3, 0);
	one("cpu/mem-loads,ldlat=0x10/", 4, 0x1cd, 0x13, 0);
	one("cpu/needs,umask=2/", 4, 0x201, 0, 0);
	one("cpu/umask=2,needs/", 4, 0x201, 0, 0);
	one("power/energy-pkg/", 20, 2, 0, 0);

	struct pmu_event pe;
	const char *mods;
	char *cause = NULL;
	const char *spec = "cpu/cycles,name=my-cycles/uk";
	int r = pmu_resolve(root, spec, &pe, &mods, &cause);
	ok(r == 0 && pe.name && strcmp(pe.name, "my-cycles") == 0, "name= names the event");
	ok(r == 0 && mods == spec + strlen("cpu/cycles,name=my-cycles/"),
	   "the modifiers are what follows the closing '/'");
	ok(pe.unit == NULL && pe.scale == 1.0, "an alias without .scale and .unit has none");
	pmu_event_release(&pe);
	free(cause);

	r = pmu_resolve(root, "cpu/name=first,cycles,name=second/", &pe, &mods, NULL);
	ok(r == 0 && pe.name && strcmp(pe.name, "first") == 0,
	   "the first name= names the event, as in perf");
	pmu_event_release(&pe);
	r = pmu_resolve(root, "cpu/name=\"quoted\"/", &pe, &mods, NULL);
	ok(r == 0 && pe.name && strcmp(pe.name, "quoted") == 0,
	   "name=\"NAME\" loses its quotes, as in perf");
	pmu_event_release(&pe);

	r = pmu_resolve(root, "power/energy-pkg/", &pe, &mods, NULL);
	ok(r == 0 && pe.unit && strcmp(pe.unit, "Joules") == 0, "the alias's unit is read");
	ok(r == 0 && pe.scale == 2.3283064365386962890625e-10, "and its scale, exactly");
	ok(*mods == 0, "no modifiers");
	ok(pe.name == NULL, "no name= term, no name");
	pmu_event_release(&pe);

	r = pmu_resolve(root, "power/event=0x2/", &pe, &mods, NULL);
	ok(r == 0 && pe.unit == NULL && pe.scale == 1.0,
	   "the same config by its terms has no unit and no scale (as in perf)");
	pmu_event_release(&pe);
}

static void test_errors(void)
{
	bad("cpu/bogus/", -EINVAL,
	    "cpu/bogus/: unknown term 'bogus' (known: any, cmask, edge, event, ldlat, split, "
	    "umask, weird, cycles, mem-loads, needs, config, config1, config2, name)");
	bad("power/evnt=1/", -EINVAL,
	    "power/evnt=1/: unknown term 'evnt' (known: event, energy-pkg, config, config1, "
	    "config2, name)");
	bad("cpu/umask=0x100/", -EINVAL,
	    "cpu/umask=0x100/: value 0x100 of term 'umask' is too big for its 8 bits "
	    "(config:8-15): at most 0xff");
	bad("cpu/any=2/", -EINVAL,
	    "cpu/any=2/: value 0x2 of term 'any' is too big for its 1 bit (config:21): at most "
	    "0x1");
	bad("cpu/split=0x20/", -EINVAL,
	    "cpu/split=0x20/: value 0x20 of term 'split' is too big for its 5 bits "
	    "(config2:0-3,8): at most 0x1f");
	bad("cpu/config=0x10000000000000000/", -EINVAL,
	    "cpu/config=0x10000000000000000/: value '0x10000000000000000' of term 'config' is "
	    "too big: at most 64 bits");
	bad("cpu/event=0xzz/", -EINVAL,
	    "cpu/event=0xzz/: value '0xzz' of term 'event' is not a number (decimal or 0x hex)");
	bad("cpu/event=-1/", -EINVAL,
	    "cpu/event=-1/: value '-1' of term 'event' is not a number (decimal or 0x hex)");
	bad("cpu/event=/", -EINVAL, "cpu/event=/: term 'event' has no value after '='");
	bad("cpu/event=1,,umask=1/", -EINVAL, "cpu/event=1,,umask=1/: empty term");
	bad("cpu/name/", -EINVAL, "cpu/name/: term 'name' needs a value (name=NAME)");
	bad("cpu/cycles=2/", -EINVAL, "cpu/cycles=2/: event 'cycles' takes no value but 1");
	bad("cpu/cycles,needs/", -EINVAL,
	    "cpu/cycles,needs/: more than one event ('cycles' and 'needs'): one PMU event names "
	    "at most one");
	bad("cpu/cycles,CYCLES/", -EINVAL,
	    "cpu/cycles,CYCLES/: more than one event ('cycles' and 'cycles'): one PMU event "
	    "names at most one");
	{ /* not through bad(): a newline would break its TAP line */
		struct pmu_event pe;
		const char *mods;
		char *cause = NULL;
		int r = pmu_resolve(root, "cpu/name=a\nb/", &pe, &mods, &cause);
		ok(r == -EINVAL && cause &&
			   strcmp(cause,
				  "cpu/name=a\nb/: the name 'a\nb' has a control character") == 0,
		   "a name with a newline fails, naming the control character");
		free(cause);
		pmu_event_release(&pe);
	}
	bad("cpu/name=a\tb/", -EINVAL, "cpu/name=a\tb/: the name 'a\tb' has a control character");
	bad("cpu/name=\"\"/", -EINVAL, "cpu/name=\"\"/: term 'name' has an empty name");
	bad("cpu/needs/", -EINVAL, "cpu/needs/: term 'umask' needs a value: add umask=VALUE");
	bad("cpu/weird=1/", -EINVAL,
	    "cpu/weird=1/: cannot read the format of term 'weird' of PMU 'cpu' ('confog:0-3')");
	bad("cpu/event=1", -EINVAL, "cpu/event=1: no '/' closes the terms");
	bad("cpuu/cycles/", -ENOENT, "cpuu/cycles/: unknown PMU 'cpuu' (did you mean 'cpu'?)");
	bad("CPU/cycles/", -ENOENT, "CPU/cycles/: unknown PMU 'CPU' (did you mean 'cpu'?)");
	bad("msr/tsc/", -ENOENT, "msr/tsc/: unknown PMU 'msr' (PMUs here: cpu, power)");
	bad("notapmu/x/", -ENOENT, "notapmu/x/: unknown PMU 'notapmu' (PMUs here: cpu, power)");
	bad("..//", -EINVAL, "..//: not a PMU event (PMU/term=value,.../)");
}

struct seen {
	int n;
	int cycles, energy, terms, snapshot, other;
};

static int collect(void *arg, const struct event_info *info)
{
	struct seen *s = arg;
	s->n++;
	if (strcmp(info->name, "cpu/cycles/") == 0)
		s->cycles += strcmp(info->kind, "cpu") == 0 && info->usable &&
			     strcmp(info->desc, "[Kernel PMU event] event=0x3c") == 0;
	else if (strcmp(info->name, "power/energy-pkg/") == 0)
		s->energy += strcmp(info->desc, "[Kernel PMU event] event=0x02, in Joules") == 0;
	else if (strcmp(info->name, "cpu/any=N,cmask=N,edge=N,event=N,ldlat=N,split=N,umask=N,"
				    "weird=N/") == 0)
		s->terms +=
			strcmp(info->desc,
			       "[PMU terms, type 4] any: config:21, cmask: config:24-31, "
			       "edge: config:18, event: config:0-7, ldlat: config1:0-15, "
			       "split: config2:0-3,8, umask: config:8-15, weird: confog:0-3") == 0;
	else if (strstr(info->name, "snapshot") || strstr(info->name, "scale") ||
		 strstr(info->name, "notapmu"))
		s->snapshot++;
	else if (strcmp(info->name, "cpu/mem-loads/") && strcmp(info->name, "cpu/needs/") &&
		 strcmp(info->name, "power/event=N/"))
		s->other++;
	return s->n == 100 ? 7 : 0;
}

static void test_list(void)
{
	struct seen s = {0};
	is_int(pmu_list(root, collect, &s), 0, "listing the fake tree");
	is_int(s.cycles, 1, "cpu/cycles/ is a usable cpu event with its terms");
	is_int(s.energy, 1, "power/energy-pkg/ shows its unit");
	is_int(s.terms, 1, "cpu's terms are one line with each term's bits");
	is_int(s.snapshot, 0, "no .scale/.unit/.snapshot file, nor a directory without type");
	is_int(s.other, 0, "nothing else");
	is_int(s.n, 6, "six lines in all");

	s = (struct seen){.n = 95};
	is_int(pmu_list(root, collect, &s), 7, "a callback's non-zero stops the listing");

	s = (struct seen){0};
	is_int(pmu_list("/nonexistent/spanstat", collect, &s), 0, "no sysfs lists nothing");
	is_int(s.n, 0, "and calls nothing");
}

int main(void)
{
	make_tree();
	test_span();
	test_terms();
	test_errors();
	test_list();
	remove_tree();
	return tap_done();
}
