/* test_events.c: unit tests for the -e parser (lib/perf/evlist.c), perf's built-in
 * names (lib/perf/evtable.c) and the libpfm4 door (lib/perf/pfm.c): resolution to
 * perf_event_attr, groups and modifiers, every error message, the default
 * set, lazy libpfm4 initialisation, and listing.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "counters.h"
#include "evlist.h"
#include "perfev.h"
#include "evtable.h"
#include "pfm.h"
#include "tap.h"

#define CACHE(c, op, res)                                                                 \
	((uint64_t)PERF_COUNT_HW_CACHE_##c | (uint64_t)PERF_COUNT_HW_CACHE_OP_##op << 8 | \
	 (uint64_t)PERF_COUNT_HW_CACHE_RESULT_##res << 16)

/* Parse spec alone; expect one event of (type, config). */
static void one(const char *spec, uint32_t type, uint64_t config)
{
	struct evlist evl;
	char *cause = NULL;
	evlist_init(&evl);
	int r = evlist_parse(&evl, spec, &cause);
	if (!ok(r == 0 && evl.n == 1 && evl.ev[0].attr.type == type &&
			evl.ev[0].attr.config == config &&
			evl.ev[0].attr.size == sizeof(struct perf_event_attr),
		"'%s' is type %u config %#llx", spec, type, (unsigned long long)config)) {
		printf("#   r=%d cause=%s", r, cause ? cause : "-");
		if (evl.n)
			printf(" type=%u config=%#llx", evl.ev[0].attr.type,
			       (unsigned long long)evl.ev[0].attr.config);
		printf("\n");
	}
	free(cause);
	evlist_release(&evl);
}

/* Parse spec; expect -EINVAL and exactly msg (or a message starting with
 * msg when prefix), and the list left as it was. */
static void bad(const char *spec, const char *msg, bool prefix)
{
	struct evlist evl;
	char *cause = NULL;
	evlist_init(&evl);
	evlist_parse(&evl, "task-clock", NULL);
	int r = evlist_parse(&evl, spec, &cause);
	bool same =
		cause && (prefix ? strncmp(cause, msg, strlen(msg)) == 0 : strcmp(cause, msg) == 0);
	if (!ok(r == -EINVAL && same && evl.n == 1 && evl.ngroups == 1, "'%s' fails: %s", spec,
		msg))
		printf("#   r=%d n=%zu cause=%s\n", r, evl.n, cause ? cause : "(null)");
	free(cause);
	evlist_release(&evl);
}

static void test_lazy_and_syntax(void)
{
	struct evlist evl;
	char *cause = NULL;
	evlist_init(&evl);
	int r = evlist_parse(&evl, "task-clock,cycles,{page-faults,cs}", &cause);
	is_int(r, 0, "built-in names parse");
	is_int(evl.n, 4, "four events");
	is_int(evl.ngroups, 3, "three groups");
	ok(evl.ev[0].group == 0 && evl.ev[1].group == 1 && evl.ev[2].group == 2 &&
		   evl.ev[3].group == 2,
	   "bare names get their own group, {...} members share one");
	ok(evl.ev[0].leader && evl.ev[1].leader && evl.ev[2].leader && !evl.ev[3].leader,
	   "first of each group leads");
	is_str(evl.ev[3].name, "cs", "name as written");
	is_int(evl.ev[3].attr.config, PERF_COUNT_SW_CONTEXT_SWITCHES, "cs is context-switches");
	evlist_release(&evl);
	ok(evl.n == 0 && evl.ev == NULL && evl.ngroups == 0, "release empties the list");

	/* syntax errors are found before any name is resolved */
	bad("{cycles,instructions", "unbalanced '{' in event list '{cycles,instructions'", false);
	bad("cycles}", "unbalanced '}' in event list 'cycles}'", false);
	bad("{cycles},instructions}", "unbalanced '}' in event list '{cycles},instructions}'",
	    false);
	bad("{cycles,{instructions}}", "nested '{' in event list '{cycles,{instructions}}'", false);
	bad("", "empty event list", false);
	bad(",", "empty event list", false);
	bad("{}", "empty event list", false);
	bad("a,,b", "empty event name in 'a,,b'", false);
	bad("cycles,", "empty event name in 'cycles,'", false);
	bad("cycles,{}", "empty group in 'cycles,{}'", false);
	bad("nosuch,{a,b}:z", "unknown modifier 'z' in '{a,b}:z'", false);
	bad("{a}x", "unexpected 'x' after '}' in event list '{a}x'", false);
	bad("cycles:z", "unknown modifier 'z' in 'cycles:z'", false);
	bad("cycles:uz", "unknown modifier 'z' in 'cycles:uz'", false);
	bad("cycles:", "empty modifier in 'cycles:'", false);
	bad("cycles:pppp", "too many 'p' modifiers in 'cycles:pppp'", false);
	bad("{cycles,instructions}:z", "unknown modifier 'z' in '{cycles,instructions}:z'", false);

	evlist_init(&evl);
	ok(evlist_parse(&evl, "CYCLES,Task-Clock,LLC-LOADS", NULL) == 0 && evl.n == 3 &&
		   evl.ev[0].attr.type == PERF_TYPE_HARDWARE &&
		   evl.ev[1].attr.config == PERF_COUNT_SW_TASK_CLOCK &&
		   evl.ev[2].attr.config == CACHE(LL, READ, ACCESS),
	   "built-in names also match ignoring case");
	evlist_release(&evl);
	evlist_init(&evl);
	is_int(evlist_add_defaults(&evl, NULL), 0, "defaults parse");
	evlist_release(&evl);

	ok(!pfm_initialised(),
	   "libpfm4 not initialised by built-in names, syntax errors or defaults");
}

static void test_builtin(void)
{
	static const struct {
		const char *name;
		uint64_t config;
	} hw[] =
		{
			{"cycles", PERF_COUNT_HW_CPU_CYCLES},
			{"cpu-cycles", PERF_COUNT_HW_CPU_CYCLES},
			{"instructions", PERF_COUNT_HW_INSTRUCTIONS},
			{"cache-references", PERF_COUNT_HW_CACHE_REFERENCES},
			{"cache-misses", PERF_COUNT_HW_CACHE_MISSES},
			{"branches", PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
			{"branch-instructions", PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
			{"branch-misses", PERF_COUNT_HW_BRANCH_MISSES},
			{"bus-cycles", PERF_COUNT_HW_BUS_CYCLES},
			{"stalled-cycles-frontend", PERF_COUNT_HW_STALLED_CYCLES_FRONTEND},
			{"idle-cycles-frontend", PERF_COUNT_HW_STALLED_CYCLES_FRONTEND},
			{"stalled-cycles-backend", PERF_COUNT_HW_STALLED_CYCLES_BACKEND},
			{"idle-cycles-backend", PERF_COUNT_HW_STALLED_CYCLES_BACKEND},
			{"ref-cycles", PERF_COUNT_HW_REF_CPU_CYCLES},
		},
	  sw[] = {
		  {"cpu-clock", PERF_COUNT_SW_CPU_CLOCK},
		  {"task-clock", PERF_COUNT_SW_TASK_CLOCK},
		  {"page-faults", PERF_COUNT_SW_PAGE_FAULTS},
		  {"faults", PERF_COUNT_SW_PAGE_FAULTS},
		  {"context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES},
		  {"cs", PERF_COUNT_SW_CONTEXT_SWITCHES},
		  {"cpu-migrations", PERF_COUNT_SW_CPU_MIGRATIONS},
		  {"migrations", PERF_COUNT_SW_CPU_MIGRATIONS},
		  {"minor-faults", PERF_COUNT_SW_PAGE_FAULTS_MIN},
		  {"major-faults", PERF_COUNT_SW_PAGE_FAULTS_MAJ},
		  {"alignment-faults", PERF_COUNT_SW_ALIGNMENT_FAULTS},
		  {"emulation-faults", PERF_COUNT_SW_EMULATION_FAULTS},
		  {"dummy", PERF_COUNT_SW_DUMMY},
		  {"bpf-output", PERF_COUNT_SW_BPF_OUTPUT},
		  {"cgroup-switches", PERF_COUNT_SW_CGROUP_SWITCHES},
	  };
	for (size_t i = 0; i < sizeof hw / sizeof hw[0]; i++)
		one(hw[i].name, PERF_TYPE_HARDWARE, hw[i].config);
	for (size_t i = 0; i < sizeof sw / sizeof sw[0]; i++)
		one(sw[i].name, PERF_TYPE_SOFTWARE, sw[i].config);

	one("L1-dcache-load-misses", PERF_TYPE_HW_CACHE, CACHE(L1D, READ, MISS));
	one("L1-dcache-loads", PERF_TYPE_HW_CACHE, CACHE(L1D, READ, ACCESS));
	one("L1-dcache-stores", PERF_TYPE_HW_CACHE, CACHE(L1D, WRITE, ACCESS));
	one("L1-dcache-prefetches", PERF_TYPE_HW_CACHE, CACHE(L1D, PREFETCH, ACCESS));
	one("L1-icache-load-misses", PERF_TYPE_HW_CACHE, CACHE(L1I, READ, MISS));
	one("LLC-loads", PERF_TYPE_HW_CACHE, CACHE(LL, READ, ACCESS));
	one("LLC-load-misses", PERF_TYPE_HW_CACHE, CACHE(LL, READ, MISS));
	one("LLC-store-misses", PERF_TYPE_HW_CACHE, CACHE(LL, WRITE, MISS));
	one("dTLB-loads", PERF_TYPE_HW_CACHE, CACHE(DTLB, READ, ACCESS));
	one("dTLB-load-misses", PERF_TYPE_HW_CACHE, CACHE(DTLB, READ, MISS));
	one("iTLB-load-misses", PERF_TYPE_HW_CACHE, CACHE(ITLB, READ, MISS));
	one("branch-loads", PERF_TYPE_HW_CACHE, CACHE(BPU, READ, ACCESS));
	one("branch-load-misses", PERF_TYPE_HW_CACHE, CACHE(BPU, READ, MISS));
	one("node-prefetch-misses", PERF_TYPE_HW_CACHE, CACHE(NODE, PREFETCH, MISS));
	/* perf's aliases, in either order, and a lone result meaning loads */
	one("l1d-miss-read", PERF_TYPE_HW_CACHE, CACHE(L1D, READ, MISS));
	one("L1-data-speculative-read-misses", PERF_TYPE_HW_CACHE, CACHE(L1D, PREFETCH, MISS));
	one("Data-TLB-store-refs", PERF_TYPE_HW_CACHE, CACHE(DTLB, WRITE, ACCESS));
	one("LLC-misses", PERF_TYPE_HW_CACHE, CACHE(LL, READ, MISS));

	one("r1a8", PERF_TYPE_RAW, 0x1a8);
	one("rC0:u", PERF_TYPE_RAW, 0xc0);

	uint32_t type;
	uint64_t config;
	ok(!evtable_lookup("L1-dcache-load-misses-misses", &type, &config),
	   "two results are not a cache name");
	ok(!evtable_lookup("L1-dcache-loadss", &type, &config), "cache words must end at a dash");

	struct evlist evl;
	evlist_init(&evl);
	evlist_parse(&evl, "task-clock,cpu-clock,page-faults", NULL);
	ok(evl.n == 3 && strcmp(evl.ev[0].unit, "msec") == 0 && evl.ev[0].scale == 1e-6 &&
		   strcmp(evl.ev[1].unit, "msec") == 0 && evl.ev[1].scale == 1e-6,
	   "task-clock and cpu-clock show msec at 1e-6");
	ok(evl.n == 3 && strcmp(evl.ev[2].unit, "") == 0 && evl.ev[2].scale == 1.0,
	   "other events: no unit, 1.0");
	evlist_release(&evl);
	ok(!pfm_initialised(), "still no libpfm4 after every built-in name");
}

#define EXCL(e, u, k, h)                                                   \
	((e).attr.exclude_user == (u) && (e).attr.exclude_kernel == (k) && \
	 (e).attr.exclude_hv == (h))

static void test_modifiers(void)
{
	struct evlist evl;
	evlist_init(&evl);
	int r = evlist_parse(&evl, "cycles,cycles:u,cycles:k,cycles:h,cycles:uk,r1a8:u", NULL);
	is_int(r, 0, "modifiers parse");
	ok(evl.n == 6 && EXCL(evl.ev[0], 0, 0, 0), "no modifier excludes nothing");
	ok(evl.n == 6 && EXCL(evl.ev[1], 0, 1, 1), ":u counts only user");
	ok(evl.n == 6 && EXCL(evl.ev[2], 1, 0, 1), ":k counts only kernel");
	ok(evl.n == 6 && EXCL(evl.ev[3], 1, 1, 0), ":h counts only hypervisor");
	ok(evl.n == 6 && EXCL(evl.ev[4], 0, 0, 1), ":uk counts user and kernel");
	ok(evl.n == 6 && EXCL(evl.ev[5], 0, 1, 1) && evl.ev[5].attr.type == PERF_TYPE_RAW,
	   "raw with :u");
	is_str(evl.n == 6 ? evl.ev[1].name : NULL, "cycles:u", "name keeps its modifier");
	evlist_release(&evl);

	evlist_init(&evl);
	r = evlist_parse(&evl, "cycles:H,cycles:G,cycles:ppp,cycles:D,cycles:e,cycles:I", NULL);
	is_int(r, 0, "G H p D e I parse");
	ok(evl.n == 6 && evl.ev[0].attr.exclude_guest && !evl.ev[0].attr.exclude_host,
	   ":H counts the host only");
	ok(evl.n == 6 && !evl.ev[1].attr.exclude_guest && evl.ev[1].attr.exclude_host,
	   ":G counts guests only");
	ok(evl.n == 6 && evl.ev[2].attr.precise_ip == 3, ":ppp sets precise_ip 3");
	ok(evl.n == 6 && evl.ev[3].attr.pinned && evl.ev[4].attr.exclusive &&
		   evl.ev[5].attr.exclude_idle,
	   ":D pinned, :e exclusive, :I exclude_idle");
	evlist_release(&evl);

	evlist_init(&evl);
	r = evlist_parse(&evl, "{cycles,instructions:k}:u,branches", NULL);
	is_int(r, 0, "group modifiers parse");
	ok(evl.n == 3 && evl.ev[0].group == 0 && evl.ev[1].group == 0 && evl.ev[2].group == 1 &&
		   evl.ngroups == 2,
	   "group membership");
	ok(evl.n == 3 && EXCL(evl.ev[0], 0, 1, 1), "group :u applies to a bare member");
	ok(evl.n == 3 && EXCL(evl.ev[1], 0, 0, 1), "group :u adds to a member's own :k");
	ok(evl.n == 3 && EXCL(evl.ev[2], 0, 0, 0), "the event after the group is untouched");
	is_str(evl.n == 3 ? evl.ev[0].name : NULL, "cycles:u", "member shows the group modifier");
	is_str(evl.n == 3 ? evl.ev[1].name : NULL, "instructions:ku",
	       "member merges both modifiers");

	/* a second -e appends, with fresh groups */
	r = evlist_parse(&evl, " { page-faults , cs } ", NULL);
	ok(r == 0 && evl.n == 5 && evl.ngroups == 3 && evl.ev[3].group == 2 &&
		   evl.ev[4].group == 2 && evl.ev[3].leader && !evl.ev[4].leader &&
		   strcmp(evl.ev[3].name, "page-faults") == 0,
	   "a second list appends a new group; blanks are trimmed");
	evlist_release(&evl);
}

static void test_defaults(void)
{
	static const char *want[] = {"task-clock",  "context-switches", "cpu-migrations",
				     "page-faults", "cycles",		"instructions",
				     "branches",    "branch-misses"};
	struct evlist evl;
	evlist_init(&evl);
	is_int(evlist_add_defaults(&evl, NULL), 0, "defaults");
	is_int(evl.n, 8, "eight default events");
	is_int(evl.ngroups, 8, "each in its own group");
	bool names = evl.n == 8;
	for (size_t i = 0; names && i < 8; i++)
		names = strcmp(evl.ev[i].name, want[i]) == 0 && evl.ev[i].leader &&
			evl.ev[i].group == (int)i;
	ok(names, "perf stat's default names, in order, each leading its group");
	evlist_release(&evl);
}

static void test_unknown(void)
{
	bad("cyclez", "unknown event 'cyclez' (did you mean 'cycles'", true);
	ok(pfm_initialised(), "an unknown name consults libpfm4");
	bad("instrutcions", "unknown event 'instrutcions' (did you mean 'instructions'", true);
	bad("task-clock,pagefaults", "unknown event 'pagefaults' (did you mean 'page-faults'",
	    true);
	bad("{cycles,nosuchevent}:u", "unknown event 'nosuchevent'", true);
	bad("zzzzzzzzzzzz", "unknown event 'zzzzzzzzzzzz'", false);
	bad("perf::PERF_COUNT_SW_CPU_CLOKC",
	    "unknown event 'perf::PERF_COUNT_SW_CPU_CLOKC' (did you mean "
	    "'perf::PERF_COUNT_SW_CPU_CLOCK'",
	    true);
	bad("perf::PERF_COUNT_HW_CACHE_L1D:NOSUCHUMASK",
	    "invalid event 'perf::PERF_COUNT_HW_CACHE_L1D:NOSUCHUMASK': ", true);
}

static void test_pfm(void)
{
	struct evlist evl;
	char *cause = NULL;
	evlist_init(&evl);
	int r = evlist_parse(
		&evl,
		"perf::PERF_COUNT_SW_CPU_CLOCK,perf::PERF_COUNT_SW_CPU_CLOCK:u,"
		"{perf::PERF_COUNT_SW_PAGE_FAULTS:k,perf::perf_count_hw_cache_l1d.read.miss:u},"
		"perf::PERF_COUNT_HW_CACHE_L1D:WRITE:ACCESS",
		&cause);
	if (!ok(r == 0 && evl.n == 5, "libpfm4 names parse"))
		printf("#   r=%d cause=%s\n", r, cause ? cause : "-");
	free(cause);
	if (evl.n == 5) {
		struct event *e = evl.ev;
		ok(e[0].attr.type == PERF_TYPE_SOFTWARE &&
			   e[0].attr.config == PERF_COUNT_SW_CPU_CLOCK &&
			   e[0].attr.size == sizeof e[0].attr,
		   "perf::PERF_COUNT_SW_CPU_CLOCK is the software cpu clock, size set");
		ok(strcmp(e[0].unit, "msec") == 0 && e[0].scale == 1e-6, "and shows msec");
		ok(!e[0].attr.exclude_user && !e[0].attr.exclude_kernel,
		   "libpfm4's default counts user and kernel");
		ok(!e[1].attr.exclude_user && e[1].attr.exclude_kernel,
		   "perf-style :u reaches libpfm4");
		ok(e[2].attr.exclude_user && !e[2].attr.exclude_kernel &&
			   e[2].attr.config == PERF_COUNT_SW_PAGE_FAULTS,
		   "perf-style :k reaches libpfm4");
		ok(e[3].attr.type == PERF_TYPE_HW_CACHE &&
			   e[3].attr.config == CACHE(L1D, READ, MISS) && e[3].attr.exclude_kernel &&
			   !e[3].attr.exclude_user,
		   "event.umask.umask:u spelling resolves through libpfm4");
		ok(e[2].group == e[3].group && e[2].leader && !e[3].leader,
		   "libpfm4 names group like any other");
		ok(e[4].attr.type == PERF_TYPE_HW_CACHE &&
			   e[4].attr.config == CACHE(L1D, WRITE, ACCESS),
		   "libpfm4's own unit masks after ':'");
	}
	evlist_release(&evl);

	evlist_init(&evl);
	r = evlist_parse(&evl,
			 "{perf::PERF_COUNT_SW_CPU_CLOCK,cycles}:u,perf::PERF_COUNT_SW_CPU_CLOCK:G",
			 NULL);
	ok(r == 0 && evl.n == 3 && EXCL(evl.ev[0], 0, 1, 1) && EXCL(evl.ev[1], 0, 1, 1),
	   "a group's :u means user only for libpfm4 members too");
	ok(r == 0 && evl.n == 3 && !evl.ev[2].attr.exclude_guest && evl.ev[2].attr.exclude_host,
	   ":G on a libpfm4 name counts guests only");
	evlist_release(&evl);
}

struct collect {
	const char *pattern;
	int n, nfound, bad_match, stop_after;
	const char *find;
	struct event_info found;
	char found_name[256];
};

static int collect(void *arg, const struct event_info *info)
{
	struct collect *c = arg;
	c->n++;
	if (c->pattern) {
		bool match = false;
		size_t np = strlen(c->pattern);
		for (const char *s = info->name; *s && !match; s++)
			match = strncasecmp(s, c->pattern, np) == 0;
		c->bad_match += !match;
	}
	if (c->find && strcmp(info->name, c->find) == 0) {
		c->nfound++;
		c->found = *info;
		snprintf(c->found_name, sizeof c->found_name, "%s", info->kind);
		c->found.kind = c->found_name;
		c->found.name = c->find;
		c->found.desc = NULL;
	}
	return c->stop_after && c->n == c->stop_after ? 42 : 0;
}

static bool can_open(uint32_t type, uint64_t config)
{
	int fd = perfev_open_self(type, config);
	if (fd >= 0)
		close(fd);
	return fd >= 0;
}

static void test_list(void)
{
	char *cause = NULL;
	struct collect all = {0};
	int r = evlist_known(NULL, collect, &all, &cause);
	is_int(r, 0, "listing everything");
	ok(all.n > 100, "lists built-in and libpfm4 events (%d)", all.n);

	struct collect c = {.pattern = "PAGE-faults", .find = "page-faults"};
	r = evlist_known("PAGE-faults", collect, &c, &cause);
	is_int(r, 0, "listing with a pattern");
	ok(c.n > 0 && c.n < all.n && c.bad_match == 0,
	   "every listed name contains the pattern, ignoring case");
	ok(c.nfound == 1 && strcmp(c.found.kind, "software") == 0 && c.found.usable,
	   "page-faults is a usable software event");

	c = (struct collect){.pattern = "SW_PAGE_FAULTS",
			     .find = "perf::PERF_COUNT_SW_PAGE_FAULTS"};
	evlist_known(c.pattern, collect, &c, NULL);
	ok(c.nfound == 1 && strcmp(c.found.kind, "perf") == 0 && c.found.usable,
	   "libpfm4's perf PMU is listed, its software events usable");

	c = (struct collect){.pattern = "cycles", .find = "cycles"};
	evlist_known(c.pattern, collect, &c, NULL);
	ok(c.nfound == 1 && strcmp(c.found.kind, "hardware") == 0, "cycles is listed as hardware");
	is_int(c.found.usable, can_open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES),
	       "cycles is usable exactly when the kernel opens it");

	c = (struct collect){.pattern = "HW_CPU_CYCLES", .find = "perf::PERF_COUNT_HW_CPU_CYCLES"};
	evlist_known(c.pattern, collect, &c, NULL);
	ok(c.nfound == 1, "libpfm4 lists perf::PERF_COUNT_HW_CPU_CYCLES");
	is_int(c.found.usable, can_open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES),
	       "and it is usable exactly when the kernel opens cycles");

	c = (struct collect){.pattern = "l1-dcache-load-m", .find = "L1-dcache-load-misses"};
	evlist_known(c.pattern, collect, &c, NULL);
	ok(c.nfound == 1 && strcmp(c.found.kind, "cache") == 0, "cache names are listed");

	c = (struct collect){.pattern = "HW_CACHE_L1D:READ",
			     .find = "perf::PERF_COUNT_HW_CACHE_L1D:READ"};
	evlist_known(c.pattern, collect, &c, NULL);
	ok(c.nfound == 1, "unit masks are listed as pmu::event:umask");

	c = (struct collect){.pattern = "no-such-event-anywhere"};
	is_int(evlist_known(c.pattern, collect, &c, NULL), 0,
	       "a pattern matching nothing is no error");
	is_int(c.n, 0, "and lists nothing");

	c = (struct collect){.stop_after = 3};
	is_int(evlist_known(NULL, collect, &c, NULL), 42,
	       "a callback's non-zero stops the listing and is returned");
	is_int(c.n, 3, "after that call");
	free(cause);
}

/* The id tracefs gives sys:event, or 0 when it cannot be read. */
static uint64_t tp_id(const char *sys, const char *event)
{
	char path[512];
	unsigned long long id = 0;
	snprintf(path, sizeof path, "/sys/kernel/tracing/events/%s/%s/id", sys, event);
	FILE *f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%llu", &id) != 1)
			id = 0;
		fclose(f);
	}
	return id;
}

/* Tracepoints: SYS:EVENT, globs, modifiers, groups, and what stays a
 * built-in or libpfm4 name (NAME:MODS). */
static void test_tracepoints(void)
{
	uint64_t wr = tp_id("syscalls", "sys_enter_write");
	uint64_t ex = tp_id("syscalls", "sys_exit_write");
	if (!wr || !ex) {
		skip(12, "no readable tracefs with syscall tracepoints");
		return;
	}
	struct evlist evl;
	char *cause = NULL;
	one("syscalls:sys_enter_write", PERF_TYPE_TRACEPOINT, wr);
	one("cycles:u", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);

	evlist_init(&evl);
	is_int(evlist_parse(&evl, "syscalls:sys_enter_write:u,{syscalls:sys_*_write}:k", &cause), 0,
	       "modifiers on a tracepoint, a glob in a group");
	ok(evl.n == 3 && EXCL(evl.ev[0], 0, 1, 1) && evl.ev[0].group == 0 && evl.ev[0].leader,
	   "SYS:EVENT:u excludes kernel and hypervisor");
	ok(evl.n == 3 && evl.ev[1].group == 1 && evl.ev[2].group == 1 && evl.ev[1].leader &&
		   !evl.ev[2].leader && EXCL(evl.ev[1], 1, 0, 1) && EXCL(evl.ev[2], 1, 0, 1),
	   "a glob's matches in a group are its members, with the group's modifiers");
	ok(evl.n == 3 && evl.ngroups == 2, "two groups");
	bool both = evl.n == 3 && ((evl.ev[1].attr.config == wr && evl.ev[2].attr.config == ex &&
				    strcmp(evl.ev[1].name, "syscalls:sys_enter_write:k") == 0) ||
				   (evl.ev[1].attr.config == ex && evl.ev[2].attr.config == wr &&
				    strcmp(evl.ev[1].name, "syscalls:sys_exit_write:k") == 0));
	ok(both, "the glob names each match SYS:EVENT with the group's modifiers");
	evlist_release(&evl);

	is_int(evlist_parse(&evl, "syscalls:sys_enter_wr*,task-clock", &cause), 0,
	       "a glob outside a group");
	ok(evl.n >= 3 && evl.ev[0].group != evl.ev[1].group &&
		   evl.ev[evl.n - 1].group == (int)evl.n - 1 && evl.ngroups == (int)evl.n,
	   "each match is a counter of its own, and the next name's group follows");
	for (size_t i = 0; i + 1 < evl.n; i++)
		ok(evl.ev[i].attr.type == PERF_TYPE_TRACEPOINT &&
			   strncmp(evl.ev[i].name, "syscalls:sys_enter_wr", 21) == 0 &&
			   !strchr(evl.ev[i].name, '*'),
		   "match %zu is %s", i, evl.ev[i].name);
	evlist_release(&evl);

	is_int(evlist_parse(&evl, "syscalls:sys_enter_writ", &cause), -EINVAL,
	       "an unknown tracepoint fails");
	const char *want = "unknown tracepoint 'syscalls:sys_enter_writ' (did you mean "
			   "'syscalls:sys_enter_write'";
	ok(cause && strncmp(cause, want, strlen(want)) == 0, "naming the closest: %s",
	   cause ? cause : "-");
	free(cause);
	cause = NULL;
	is_int(evlist_parse(&evl, "sched:no_such_*", &cause), -EINVAL,
	       "a glob matching nothing fails");
	is_str(cause, "no tracepoint matches 'sched:no_such_*'", "and says so");
	ok(evl.n == 0, "nothing is left appended");
	free(cause);
	evlist_release(&evl);
}

/* perf's tool events: parsed to EVENT_TYPE_TOOL in ns, filled by
 * counters_tools as perf shows them. */
static void test_tools(void)
{
	struct evlist evl;
	char *cause = NULL;
	evlist_init(&evl);
	is_int(evlist_parse(&evl, "duration_time,User_Time:u,{system_time,task-clock}", &cause), 0,
	       "tool events parse, with modifiers and in groups");
	ok(evl.n == 4 && event_is_tool(&evl.ev[0]) && event_is_tool(&evl.ev[1]) &&
		   event_is_tool(&evl.ev[2]) && !event_is_tool(&evl.ev[3]),
	   "each is a tool event");
	ok(evl.n == 4 && evl.ev[0].attr.config == EVENT_TOOL_DURATION &&
		   evl.ev[1].attr.config == EVENT_TOOL_USER &&
		   evl.ev[2].attr.config == EVENT_TOOL_SYSTEM,
	   "of its kind");
	ok(evl.n == 4 && strcmp(evl.ev[0].unit, "ns") == 0 && evl.ev[0].scale == 1.0,
	   "counted in ns");
	struct count c[4] = {{.state = COUNT_OK, .raw = 5, .value = 5}};
	c[3] = c[0];
	counters_tools(&evl, c, 1000, 0, 30);
	ok(c[0].state == COUNT_OK && c[0].value == 1000 && c[0].running == 1000 &&
		   c[0].enabled == 1000,
	   "duration_time is the wall time, enabled and running as long");
	ok(c[1].state == COUNT_NOT_COUNTED && c[1].value == 0, "a time of 0 is not counted");
	ok(c[2].state == COUNT_OK && c[2].value == 30, "system_time is the system time");
	ok(c[3].raw == 5, "other events are left alone");
	evlist_release(&evl);
	free(cause);
}

/* A sysfs PMU's event in a group (the software PMU every kernel with perf
 * events has): the group's levels add to the member's own, named or not. */
static void test_pmu_group(void)
{
	if (access("/sys/bus/event_source/devices/software/type", R_OK)) {
		skip(4, "no software PMU in sysfs");
		return;
	}
	struct evlist evl;
	evlist_init(&evl);
	char *cause = NULL;
	int r = evlist_parse(&evl, "{software/config=0,name=foo/u,software/config=0/u}:k", &cause);
	is_int(r, 0, "a group of PMU events with their own levels parses");
	ok(evl.n == 2 && EXCL(evl.ev[0], 0, 0, 1) && EXCL(evl.ev[1], 0, 0, 1),
	   "the group's :k adds to each member's own :u, renamed or not");
	is_str(evl.n == 2 ? evl.ev[0].name : NULL, "foo:k", "the renamed member shows the group's");
	is_str(evl.n == 2 ? evl.ev[1].name : NULL, "software/config=0/uk",
	       "the other merges both modifiers");
	evlist_release(&evl);
	free(cause);
}

int main(void)
{
	test_lazy_and_syntax();
	test_builtin();
	test_modifiers();
	test_defaults();
	test_unknown();
	test_pfm();
	test_list();
	test_tracepoints();
	test_tools();
	test_pmu_group();
	return tap_done();
}
