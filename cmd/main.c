/* main.c: spanstat's command line: parse options, check them, open the
 * outputs, run the session, and turn failures into one line on stderr with
 * a documented exit status.  Everything else lives in lib/. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "grow.h"
#include "demangle.h"
#include "evlist.h"
#include "aggr.h"
#include "cgroup.h"
#include "attach.h"
#include "launch.h"
#include "live.h"
#include "options.h"
#include "errline.h"
#include "diffcmd.h"
#include "outfile.h"
#include "outpath.h"
#include "output.h"
#include "recfile.h"
#include "recreport.h"
#include "session.h"
#include "sigrelay.h"
#include "spanfilter.h"
#include "spanweight.h"
#include "writer.h"

/* The outputs: OUT_SUMMARY is the summary (-o), always there, its writer
 * the table or CSV (-x); k >= 1 is the registry's row k - 1 (output.h). */
#define OUT_SUMMARY 0
#define OUT_MAX (1 + OUTPUT_MAX)
static int out_n = 1;		   /* 1 + the registry's rows */
static int out_record;		   /* the output that keeps the session: record's file */
static char out_name[OUT_MAX][32]; /* "--folded", as messages say it */
#define optname(k) ((const char *)out_name[k])

static unsigned out_flags(int k)
{
	return k > OUT_SUMMARY ? output_table[k - 1].flags : 0;
}

/* The outputs' names, and the options taken from the registry. */
static void out_init(void)
{
	if (options_init() < 0)
		die("out of memory");
	snprintf(out_name[OUT_SUMMARY], sizeof out_name[0], "--output");
	for (size_t i = 0; i < output_count && i < OUTPUT_MAX; i++) {
		snprintf(out_name[out_n], sizeof out_name[0], "--%s", output_table[i].option);
		if (output_table[i].flags & OUTPUT_KEEP)
			out_record = out_n;
		out_n++;
	}
}

/* "--a, --b or --c": the outputs with flag, after `first` when not NULL. */
static const char *out_list(unsigned flag, const char *first)
{
	static char buf[256];
	int n = 0, total = first != NULL;
	for (int k = 1; k < out_n; k++)
		total += (out_flags(k) & flag) != 0;
	buf[0] = 0;
	for (int k = 0, i = 0; k < out_n; k++) {
		const char *name = k ? optname(k) : first;
		if (!name || (k && !(out_flags(k) & flag)))
			continue;
		i++;
		n += snprintf(buf + n, sizeof buf - (size_t)n, "%s%s",
			      i == 1	   ? ""
			      : i == total ? " or "
					   : ", ",
			      name);
		if (n >= (int)sizeof buf)
			break;
	}
	return buf;
}

struct cli {
	struct evlist evl;
	struct evlist span_evl; /* --span-events */
	bool span_allocs, span_args, no_off_cpu;
	int python;			/* --python: 0 no, 1 Python functions, 2 and C functions */
	const char *lib_calls;		/* --lib-calls: its GLOB ("*" without one), or NULL */
	bool lib_calls_all;		/* --lib-calls-all */
	bool no_spans;			/* --no-spans */
	const char *pids, *tids, *cpus; /* -p, -t, -C */
	bool all_cpus;			/* -a */
	enum aggr_mode aggr;		/* -A, --per-thread, --per-core ... */
	const char *aggr_opt;		/* as written, for messages */
	int cache_level;		/* --per-cache=LEVEL (0: the highest) */
	const char *weight;		/* --weight */
	unsigned runs, interval_ms;
	unsigned delay_ms, timeout_ms, interval_count; /* -D, --timeout, --interval-count */
	bool null_run;				       /* -n */
	uint64_t keep_last;			       /* --keep-last bytes, 0: all */
	const char *pre, *post;			       /* --pre, --post */
	unsigned ncgroups;			       /* -G names given so far */
	const char *cgroup, *for_each_cgroup;	       /* the last -G, --for-each-cgroup */
	bool events_given;			       /* -e was given */
	const char *sep;
	const char *path[OUT_MAX]; /* OUT_SUMMARY: -o FILE or NULL for stderr */
	char *expanded[OUT_MAX];   /* path[k] with its %-sequences expanded */
	bool append, spans_table, spans_location, folded_threads, list, compensate;
	unsigned jobs; /* report -j (0: the CPUs it may run on) */
	enum { MODE_RUN, MODE_RECORD, MODE_REPORT } mode; /* spanstat, record, report */
	enum demangle_mode demangle;
	struct spanfilter filter;
	struct outfile out[OUT_MAX];
	/* -o FILE: the summary goes to the file through tee, which keeps a
	 * copy for standard error should the file fail */
	FILE *tee;
	char *copy;
	size_t copy_len, copy_cap;
	bool copy_lost; /* out of memory for the copy */
	int tee_err;	/* the first write to the file that failed: its errno */
	struct writer w[OUT_MAX];
	struct writer *wv[OUT_MAX];
	size_t nw;
	/* --keep-last with trace outputs and no record file: the window's
	 * record, private (a directory of its own), removed at the end */
	char *keep_dir, *keep_rec;
};

/* Standard streams that were closed when spanstat started: each now holds a
 * close-on-exec /dev/null, so nothing of ours lands on fd 0-2 while the
 * target still starts with them closed. */
static bool std_closed[3];

/* Why writing to standard output failed, in words. */
static const char *stdout_why(int err)
{
	if (std_closed[1] || err == EBADF)
		return "standard output is closed";
	return strerror(err);
}

/* Flushes what went to standard output (--help, -V, --list) or dies. */
static void stdout_done(const char *what)
{
	if (std_closed[1])
		die("cannot write %s: %s", what, stdout_why(EBADF));
	if (fflush(stdout) != 0 || ferror(stdout))
		die("cannot write %s: %s", what, stdout_why(errno ? errno : EIO));
}

/* Gives every closed standard stream a placeholder (see std_closed). */
static void std_sanitize(void)
{
	for (int fd = 0; fd < 3; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		int n = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (n != fd) { /* cannot happen: fd is the lowest free number */
			if (n >= 0)
				close(n);
			continue;
		}
		std_closed[fd] = true;
	}
}

/* A whole number in [min, max], digits only, or die naming the option. */
static unsigned parse_count(const char *opt, const char *s, unsigned min, unsigned max,
			    const char *why)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (!*s || s[strspn(s, "0123456789")] || *end || errno || v < min || v > max)
		die("invalid %s '%s': %s", opt, s, why);
	return (unsigned)v;
}

/* --keep-last's SIZE: bytes, or a number with K, M or G (KiB, MiB, GiB),
 * from 128K to 64G, or die. */
static uint64_t parse_size(const char *opt, const char *s)
{
	static const char why[] = "expected a size from 128K to 64G: bytes, or a number with K, "
				  "M or G (KiB, MiB, GiB)";
	char *end;
	errno = 0;
	size_t digits = strspn(s, "0123456789");
	unsigned long long v = strtoull(s, &end, 10);
	if (!digits || errno || end != s + digits)
		die("invalid %s '%s': %s", opt, s, why);
	unsigned shift = 0;
	switch (*end) {
	case '\0':
		break;
	case 'K':
	case 'k':
		shift = 10;
		break;
	case 'M':
	case 'm':
		shift = 20;
		break;
	case 'G':
	case 'g':
		shift = 30;
		break;
	default:
		die("invalid %s '%s': %s", opt, s, why);
	}
	if (*end && end[1] && strcasecmp(end + 1, "iB") != 0)
		die("invalid %s '%s': %s", opt, s, why);
	if (v > (UINT64_C(64) << 30) >> shift || v << shift < (128u << 10))
		die("invalid %s '%s': %s", opt, s, why);
	return (uint64_t)v << shift;
}

static int list_one(void *arg, const struct event_info *ei)
{
	FILE *fp = arg;
	fprintf(fp, "  %-44s %-10s %s%s\n", ei->name, ei->kind, ei->desc ? ei->desc : "",
		ei->usable ? "" : " (not supported here)");
	return 0;
}

static int do_list(const char *pattern)
{
	char *cause = NULL;
	if (evlist_known(pattern, list_one, stdout, &cause) < 0)
		die("cannot list events: %s", cause ? cause : "unknown error");
	stdout_done("the event list");
	return 0;
}

/* Refuses an option the subcommand has no use for. */
static bool mode_written_long(const char *word, const char *name)
{
	size_t n = strlen(name);
	return word[0] == '-' && word[1] == '-' && strncmp(word + 2, name, n) == 0 &&
	       (!word[2 + n] || word[2 + n] == '=');
}

/* w1, w2: the last word getopt took and the one before it (the option
 * itself, when its argument was a word of its own). */
static void mode_check(const struct cli *c, int id, const char *w1, const char *w2)
{
	char buf[64] = "";
	unsigned modes = 0;
	/* as written: -e, or --event (maybe with =VALUE after it) */
	for (const struct opt_def *o = options_table; o->name; o++)
		if (o->id == id) {
			if (!o->shortopt || mode_written_long(w1, o->name) ||
			    mode_written_long(w2, o->name))
				snprintf(buf, sizeof buf, "--%s", o->name);
			else
				snprintf(buf, sizeof buf, "-%c", o->shortopt);
			modes = options_modes(o);
		}
	const char *name = buf;
	if (c->mode == MODE_RUN) {
		if (!(modes & OPTM_RUN))
			die("%s is an option of 'spanstat report', which makes the outputs from a "
			    "record file",
			    name);
		return;
	}
	if (c->mode == MODE_RECORD && !(modes & OPTM_RECORD) && (modes & OPTM_REPORT))
		die("record: %s is an option of 'spanstat report', which makes the outputs from "
		    "the record file",
		    name);
	if (c->mode == MODE_REPORT && !(modes & OPTM_REPORT) && (modes & OPTM_RECORD))
		die("report: %s is an option of the measurement ('spanstat record'), not of the "
		    "report",
		    name);
	const char *sub = c->mode == MODE_RECORD ? "record" : "report";
	if (!(modes & (c->mode == MODE_RECORD ? OPTM_RECORD : OPTM_REPORT)))
		die("%s: %s is not an option of 'spanstat %s' (see 'spanstat %s --help')", sub,
		    name, sub, sub);
}

static void main_help(FILE *fp);

static void subcommand_help(int mode)
{
	if (mode == MODE_RECORD)
		fputs("Usage: spanstat record [-o FILE] [OPTIONS] [--] COMMAND [ARGS...]\n"
		      "\n"
		      "Run COMMAND as spanstat does and keep everything in a record file (default\n"
		      "spanstat.rec; %r %l %h %p %j as in other output names): counts of every "
		      "run,\n"
		      "rusage, -I samples, the span stream with its names, where and when it ran.\n"
		      "Takes spanstat's measurement options (-e, -r, -I, -p/-t/-a/-C, "
		      "--span-events,\n"
		      "--span-allocs, --no-off-cpu, --filter, --exclude, --min-duration, "
		      "--max-depth,\n"
		      "--demangle); the outputs come later from 'spanstat report FILE'.\n"
		      "Exit status: COMMAND's, as spanstat's.  See spanstat-record(5).\n",
		      stdout);
	else
		fputs("Usage: spanstat report [OPTIONS] FILE...\n"
		      "\n"
		      "Every output of a live run, from record files: the summary (-o, -x, "
		      "--append,\n"
		      "--spans), --folded, --folded-threads, --json, --perfetto, --pprof,\n"
		      "--flamegraph, --flamechart, --weight and --compensate, as spanstat(1) "
		      "describes\n"
		      "them.  Several files of one job (mpirun, srun) merge: each counter and "
		      "span\n"
		      "path gets min, mean and max across ranks, the rank of the max and the\n"
		      "imbalance (max - mean) / max; --perfetto writes one trace, a process group "
		      "per\n"
		      "rank, on one clock.\n"
		      "  -j, --jobs=N  make the outputs with N threads (default: one per CPU it "
		      "may\n"
		      "                run on; -j 1: one); each output that takes span events\n"
		      "                (--perfetto, --flamechart) replays the record in a thread "
		      "of\n"
		      "                its own; the outputs are the same bytes for any N\n"
		      "Exit status: 0, or 125 on bad input.  See spanstat-record(5).\n",
		      stdout);
}

/* An aggregation option (id), as written: one mode per run. */
static void set_aggr(struct cli *c, int id, const char *written)
{
	static const struct {
		int id;
		enum aggr_mode mode;
	} modes[] = {{OPT_NO_AGGR, AGGR_NONE},	    {OPT_PER_THREAD, AGGR_THREAD},
		     {OPT_PER_CORE, AGGR_CORE},	    {OPT_PER_DIE, AGGR_DIE},
		     {OPT_PER_SOCKET, AGGR_SOCKET}, {OPT_PER_NODE, AGGR_NODE},
		     {OPT_PER_CACHE, AGGR_CACHE}};
	enum aggr_mode mode = AGGR_GLOBAL;
	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
		if (modes[i].id == id)
			mode = modes[i].mode;
	const char *name =
		id == OPT_NO_AGGR && strncmp(written, "--", 2) != 0 ? "-A" : aggr_option(mode);
	if (c->aggr != AGGR_GLOBAL && c->aggr != mode)
		die("%s and %s cannot be combined: pick one aggregation", c->aggr_opt, name);
	c->aggr = mode;
	c->aggr_opt = name;
	c->cache_level = 0;
	if (mode == AGGR_CACHE && optarg && aggr_parse_level(optarg, &c->cache_level) < 0)
		die("invalid --per-cache '%s': expected a cache level such as L2, l3 or 3", optarg);
}

static void parse(struct cli *c, int argc, char **argv)
{
	char *so;
	void *lo;
	char *cause = NULL;

	if (options_getopt(&so, &lo) < 0)
		die("out of memory");
	opterr = 0;
	for (;;) {
		int idx = -1;
		int id = getopt_long(argc, argv, so, lo, &idx);
		if (id < 0)
			break;
		if (id != ':' && id != '?')
			mode_check(c, id, argv[optind - 1], optind >= 2 ? argv[optind - 2] : "");
		if (id >= OPT_OUT_FIRST && id < OPT_OUT_FIRST + out_n - 1) {
			c->path[1 + id - OPT_OUT_FIRST] = optarg; /* the registry's outputs */
			continue;
		}
		switch (id) {
		case OPT_EVENT:
			if (evlist_parse(&c->evl, optarg, &cause) < 0)
				die("%s", cause ? cause : "invalid event list");
			c->events_given = true;
			break;
		case OPT_DELAY:
			if (optarg[0] == '-')
				die("invalid --delay '%s': expected milliseconds from 0 to "
				    "86400000 "
				    "(perf's -1 waits for a control fd spanstat does not have)",
				    optarg);
			c->delay_ms = parse_count("--delay", optarg, 0, 86400000,
						  "expected milliseconds from 0 to 86400000");
			break;
		case OPT_TIMEOUT:
			c->timeout_ms = parse_count("--timeout", optarg, 10, 86400000,
						    "expected milliseconds from 10 to 86400000");
			break;
		case OPT_INTERVAL_COUNT:
			c->interval_count =
				parse_count("--interval-count", optarg, 1, 1000000000,
					    "expected a whole number of intervals from 1 to "
					    "1000000000");
			break;
		case OPT_NULL:
			c->null_run = true;
			break;
		case OPT_CGROUP: {
			int r = cgroup_assign(&c->evl, optarg, &c->ncgroups, &cause);
			if (r == -ENOMEM)
				die("out of memory");
			if (r < 0)
				die("%s", cause);
			c->cgroup = optarg;
			break;
		}
		case OPT_FOR_EACH_CGROUP:
			if (!*optarg || optarg[strlen(optarg) - 1] == ',' || strstr(optarg, ",,") ||
			    optarg[0] == ',')
				die("invalid --for-each-cgroup '%s': expected cgroup names "
				    "separated "
				    "by commas",
				    optarg);
			c->for_each_cgroup = optarg;
			break;
		case OPT_PRE:
		case OPT_POST:
			if (!*optarg)
				die("invalid --%s '': expected a shell command",
				    id == OPT_PRE ? "pre" : "post");
			*(id == OPT_PRE ? &c->pre : &c->post) = optarg;
			break;
		case OPT_REPEAT:
			c->runs = parse_count("--repeat", optarg, 1, 1000000,
					      "expected a whole number of runs from 1 to 1000000");
			break;
		case OPT_INTERVAL:
			c->interval_ms = parse_count("--interval-print", optarg, 10, 86400000,
						     "expected milliseconds from 10 to 86400000");
			break;
		case OPT_SEPARATOR:
			if (!*optarg)
				die("invalid --field-separator '': expected a separator");
			c->sep = optarg;
			break;
		case OPT_OUTPUT:
			c->path[OUT_SUMMARY] = optarg;
			break;
		case OPT_APPEND:
			c->append = true;
			break;
		case OPT_SPANS:
			c->spans_table = true;
			if (optarg && strcmp(optarg, "location") != 0)
				die("invalid --spans '%s': expected --spans or --spans=location",
				    optarg);
			c->spans_location = optarg != NULL;
			break;
		case OPT_DEMANGLE:
			if (demangle_mode_parse(optarg, &c->demangle) < 0)
				die("invalid --demangle '%s': expected simple, full or no", optarg);
			break;
		case OPT_COMPENSATE:
			c->compensate = true;
			break;
		case OPT_JOBS:
			c->jobs = parse_count("--jobs", optarg, 1, RECREPORT_MAX_JOBS,
					      "expected a whole number of threads from 1 to "
					      "256");
			break;
		case OPT_SPAN_EVENTS:
			if (evlist_parse(&c->span_evl, optarg, &cause) < 0)
				die("invalid --span-events '%s': %s", optarg,
				    cause ? cause : "invalid event list");
			for (size_t i = 0; i < c->span_evl.n; i++)
				if (event_is_tool(&c->span_evl.ev[i]))
					die("invalid --span-events '%s': '%s' is measured for "
					    "the whole run, not per span (spans carry their "
					    "wall and CPU time)",
					    optarg, c->span_evl.ev[i].name);
				else if (event_is_sysfs_scaled(&c->span_evl.ev[i]))
					die("invalid --span-events '%s': '%s' is shown scaled%s%s "
					    "as sysfs says, which span values do not carry "
					    "(count it with -e)",
					    optarg, c->span_evl.ev[i].name,
					    *c->span_evl.ev[i].unit ? ", in " : "",
					    c->span_evl.ev[i].unit);
			break;
		case OPT_SPAN_ALLOCS:
			c->span_allocs = true;
			break;
		case OPT_SPAN_ARGS:
			c->span_args = true;
			break;
		case OPT_PYTHON:
			if (optarg && strcmp(optarg, "c") != 0)
				die("invalid --python '%s': expected --python or --python=c",
				    optarg);
			c->python = optarg ? 2 : 1;
			break;
		case OPT_LIB_CALLS:
			c->lib_calls = optarg ? optarg : "*";
			if (!*c->lib_calls || strlen(c->lib_calls) > 255)
				die("invalid --lib-calls '%s': expected a glob of function names "
				    "(1 to 255 bytes)",
				    optarg);
			break;
		case OPT_LIB_CALLS_ALL:
			c->lib_calls_all = true;
			break;
		case OPT_PID:
			c->pids = optarg;
			break;
		case OPT_TID:
			c->tids = optarg;
			break;
		case OPT_ALL_CPUS:
			c->all_cpus = true;
			break;
		case OPT_CPU:
			c->cpus = optarg;
			break;
		case OPT_NO_AGGR:
		case OPT_PER_THREAD:
		case OPT_PER_CORE:
		case OPT_PER_DIE:
		case OPT_PER_SOCKET:
		case OPT_PER_NODE:
		case OPT_PER_CACHE:
			set_aggr(c, id, argv[optind - 1]);
			break;
		case OPT_KEEP_LAST:
			c->keep_last = parse_size("--keep-last", optarg);
			break;
		case OPT_NO_MERGE: /* every event is one PMU's: nothing to merge */
			break;
		case OPT_WEIGHT:
			c->weight = optarg;
			break;
		case OPT_NO_OFF_CPU:
			c->no_off_cpu = true;
			break;
		case OPT_NO_SPANS:
			c->no_spans = true;
			break;
		case OPT_FOLDED_THREADS:
			c->folded_threads = true;
			break;
		case OPT_MIN_DURATION: {
			const char *why;
			if (spanfilter_parse_time(optarg, &c->filter.min_ns, &why) < 0)
				die("invalid --min-duration '%s': %s", optarg, why);
			break;
		}
		case OPT_MAX_DEPTH:
			c->filter.max_depth =
				parse_count("--max-depth", optarg, 1, 1000000,
					    "expected a whole number of levels from 1 "
					    "to 1000000");
			break;
		case OPT_FILTER:
		case OPT_EXCLUDE: {
			const char *why = NULL;
			int r = spanfilter_add(&c->filter, id == OPT_EXCLUDE, optarg, &why);
			if (r == -ENOMEM)
				die("out of memory");
			if (r < 0)
				die("invalid --%s '%s': %s",
				    id == OPT_EXCLUDE ? "exclude" : "filter", optarg, why);
			break;
		}
		case OPT_LIST:
			c->list = true;
			break;
		case OPT_HELP:
			if (c->mode != MODE_RUN)
				subcommand_help(c->mode);
			else
				main_help(stdout);
			stdout_done("the help");
			exit(0);
		case OPT_VERSION:
			printf("spanstat %s\n", PACKAGE_VERSION);
			stdout_done("the version");
			exit(0);
		case ':':
			die("option '%s' needs an argument", argv[optind - 1]);
		default: {
			/* an option given an argument it does not take: named as written */
			const char *w = argv[optind - 1];
			for (const struct opt_def *o = options_table; optopt && o->name; o++)
				if (o->id == optopt &&
				    (optopt >= 256 || mode_written_long(w, o->name)))
					die("option '--%s' takes no argument", o->name);
			const char *help = c->mode == MODE_RECORD   ? "spanstat record --help"
					   : c->mode == MODE_REPORT ? "spanstat report --help"
								    : "spanstat --help";
			if (optopt && optopt < 256)
				die("unknown option '-%c' (see '%s')", optopt, help);
			die("unknown option '%s' (see '%s')", w, help);
		}
		}
	}
	free(so);
	free(lo);
}

/* Whether an output asked for turns span collection on. */
static bool wants_spans(const struct cli *c)
{
	bool spans = c->spans_table;
	bool keep = c->mode == MODE_RECORD;
	for (int k = 0; k < out_n; k++) {
		spans |= c->path[k] && (out_flags(k) & OUTPUT_SPANS);
		/* a record keeps everything, JSON holds spans too: when they can
		 * be collected */
		keep |= c->path[k] && (out_flags(k) & (OUTPUT_KEEP | OUTPUT_HOLDS));
	}
	bool attach = c->pids || c->tids || c->all_cpus || c->cpus;
	return spans || (keep && !attach && !c->no_spans);
}

/* Whether the weight, an event's name, is one of --span-events. */
static bool weight_event(const struct cli *c, const char *w)
{
	for (size_t i = 0; i < c->span_evl.n; i++)
		if (strcmp(w, c->span_evl.ev[i].name) == 0)
			return true;
	return false;
}

/* Output names with %r, %h and the like in them (outpath.h). */
static void expand_paths(struct cli *c)
{
	for (int k = 0; k < OUT_MAX; k++) {
		const char *why = NULL;
		if (!c->path[k] || !strchr(c->path[k], '%'))
			continue;
		int r = outpath_expand(c->path[k], &c->expanded[k], &why);
		if (r == -ENOMEM)
			die("out of memory");
		if (r < 0)
			die("invalid %s '%s': %s", optname(k), c->path[k], why);
		c->path[k] = c->expanded[k];
	}
}

/* Checks what only makes sense together, before anything is created. */
/* Whether output k is made from the record file once it is written: the
 * trace outputs of a live run with --keep-last, which show the window kept
 * (as spanstat report makes them from the file), not the whole run. */
static bool from_window(const struct cli *c, int k)
{
	return c->keep_last && c->mode == MODE_RUN && k > 0 && k < out_n && c->path[k] &&
	       (output_table[k - 1].ops == &perfetto_writer_ops ||
		output_table[k - 1].ops == &flamechart_writer_ops);
}

/* Whether a live run with --keep-last has a trace output to show the
 * window in (with no record file, the window is kept in a private one). */
static bool keeps_traces(const struct cli *c)
{
	for (int k = 1; k < out_n; k++)
		if (from_window(c, k))
			return true;
	return false;
}

static void check(struct cli *c, int nargs)
{
	if (c->append && !c->path[OUT_SUMMARY])
		die("--append needs --output FILE");
	bool threads = false, weighs = false;
	for (int k = 1; k < out_n; k++) {
		threads |= c->path[k] && (out_flags(k) & OUTPUT_THREADS);
		weighs |= c->path[k] && (out_flags(k) & OUTPUT_WEIGHT);
	}
	if (c->folded_threads && !threads)
		die("--folded-threads needs %s", out_list(OUTPUT_THREADS, NULL));
	if (c->weight && !weighs)
		die("--weight needs %s", out_list(OUTPUT_WEIGHT, NULL));
	/* what the weight needs (spanweight.h): a report learns it from the record */
	int need = spanweight_metric(c->weight);
	if (need == SPANMETRIC_EVENT && c->mode != MODE_REPORT && !weight_event(c, c->weight))
		die("invalid --weight '%s': expected wall, cpu, off-cpu, allocs, alloc-bytes "
		    "or an event of --span-events",
		    c->weight);
	if (c->weight && strncmp(c->weight, SPANWEIGHT_ARG, strlen(SPANWEIGHT_ARG)) == 0) {
		if (!c->weight[strlen(SPANWEIGHT_ARG)])
			die("invalid --weight '%s': expected arg:KEY, a typed argument's key",
			    c->weight);
		c->span_args = true; /* threads cannot aggregate them in the target */
	}
	if ((need == SPANMETRIC_ALLOCS || need == SPANMETRIC_ALLOC_BYTES) && !c->span_allocs &&
	    c->mode != MODE_REPORT)
		die("--weight=%s needs --span-allocs", c->weight);
	if (need == SPANMETRIC_OFF_CPU && c->no_off_cpu)
		die("--weight=%s needs the off-CPU split that --no-off-cpu turns off", c->weight);
	bool spans = wants_spans(c);
	bool attach = c->pids || c->tids || c->all_cpus || c->cpus;
	if (c->no_spans && spans)
		die("--no-spans cannot be combined with a span output: %s",
		    out_list(OUTPUT_SPANS, "--spans"));
	if ((c->span_evl.n || c->span_allocs) && (attach || c->no_spans))
		spans = true; /* refused: spans need a COMMAND, and not --no-spans */
	if (c->no_spans && spans)
		die("--no-spans cannot be combined with %s",
		    c->span_evl.n ? "--span-events" : "--span-allocs");
	if (c->no_spans && (c->weight || c->compensate))
		die("--no-spans cannot be combined with %s",
		    c->weight ? "--weight" : "--compensate");
	if (c->span_evl.n && !spans)
		die("--span-events needs a span output: %s",
		    out_list(OUTPUT_SPANS | OUTPUT_HOLDS, "--spans"));
	if (c->span_allocs && !spans)
		die("--span-allocs needs a span output: %s",
		    out_list(OUTPUT_SPANS | OUTPUT_HOLDS, "--spans"));
	if (c->span_args && !spans && !c->weight)
		die("--span-args needs a span output: %s",
		    out_list(OUTPUT_SPANS | OUTPUT_HOLDS, "--spans"));
	if (c->python && (attach || c->no_spans || !spans))
		die("--python needs a COMMAND and a span output: %s",
		    out_list(OUTPUT_SPANS | OUTPUT_HOLDS, "--spans"));
	if (c->lib_calls_all && !c->lib_calls)
		die("--lib-calls-all needs --lib-calls");
	if (c->lib_calls && (attach || c->no_spans))
		die("--lib-calls cannot be combined with %s",
		    c->no_spans ? "--no-spans" : "-p, -t, -a or -C (it needs a COMMAND)");
	if (c->lib_calls && !spans)
		die("--lib-calls needs a span output: %s",
		    out_list(OUTPUT_SPANS | OUTPUT_HOLDS, "--spans"));
	for (int k = 0; k < OUT_MAX; k++) {
		/* spanstat record's -o names the record file */
		const char *opt =
			c->mode == MODE_RECORD && k == out_record ? "--output" : optname(k);
		if (c->path[k] && !*c->path[k])
			die("invalid %s '': expected a file name, or - for standard output", opt);
		/* "--folded -- cmd" took "--" for the file and ran "cmd" */
		if (c->path[k] && c->path[k][0] == '-' && c->path[k][1])
			die("%s: '%s' looks like an option, not a file name (write ./%s for a "
			    "file of that name)",
			    opt, c->path[k], c->path[k]);
	}
	const char *stdout_user = NULL;
	for (int k = 0; k < OUT_MAX; k++) {
		if (!c->path[k] || strcmp(c->path[k], "-") != 0)
			continue;
		if (stdout_user)
			die("%s and %s cannot both write to standard output", stdout_user,
			    optname(k));
		stdout_user = optname(k);
		if (std_closed[1])
			die("cannot write %s to standard output: %s", optname(k),
			    stdout_why(EBADF));
	}
	if ((c->pids != NULL) + (c->tids != NULL) + (c->all_cpus || c->cpus) > 1)
		die("-p, -t and -a or -C cannot be combined: count one kind of target");
	if (attach && (spans || c->weight))
		die("span collection needs a COMMAND that spanstat starts, not -p, -t, -a or -C");
	if (attach && c->runs > 1 && nargs == 0)
		die("-r repeats a COMMAND: with -p, -t, -a or -C it needs one to bound each run");
	if (c->aggr == AGGR_THREAD && !(c->pids || c->tids || (c->all_cpus && !c->cpus)))
		die("--per-thread needs -p, -t or -a: as in perf stat, a COMMAND spanstat starts "
		    "is counted with its threads together");
	if (c->aggr != AGGR_GLOBAL && c->aggr != AGGR_THREAD && !(c->all_cpus || c->cpus))
		die("%s needs -a or -C: it splits the counts of CPUs, as in perf stat",
		    c->aggr_opt);
	if (nargs == 0 && !attach)
		die("missing COMMAND (see 'spanstat --help')");
	if (c->interval_count && !c->interval_ms)
		die("--interval-count needs -I (--interval-print)");
	if (c->timeout_ms && c->interval_ms)
		die("--timeout cannot be combined with -I: use --interval-count to end after N "
		    "intervals");
	if (c->null_run && c->events_given)
		die("--null counts no events: not with -e");
	if (c->null_run && c->interval_ms)
		die("--null counts no events: -I would have nothing to print");
	if ((c->cgroup || c->for_each_cgroup) && !(c->all_cpus || c->cpus))
		die("%s needs -a or -C: cgroups are counted system-wide, as perf counts them",
		    c->cgroup ? "--cgroup" : "--for-each-cgroup");
	if ((c->cgroup || c->for_each_cgroup) && (c->mode == MODE_RECORD || c->path[out_record]))
		die("%s cannot be kept in a record file: its events would lose their cgroups",
		    c->cgroup ? "--cgroup" : "--for-each-cgroup");
	if (c->aggr != AGGR_GLOBAL && c->path[out_record])
		die("%s cannot be kept in a record file: it keeps the totals only, so its "
		    "report would lose the rows per unit",
		    c->aggr_opt);
	if (c->cgroup && c->for_each_cgroup)
		die("--for-each-cgroup cannot be combined with --cgroup (-G)");
	if (c->keep_last && !c->path[out_record] && !keeps_traces(c))
		die("--keep-last needs a record file or a trace output: spanstat record, "
		    "--record=FILE, --perfetto or --flamechart");
	if (c->keep_last && c->path[out_record] && strcmp(c->path[out_record], "-") == 0)
		die("--keep-last needs a record file, not standard output: a snapshot replaces the "
		    "file");
	if (c->null_run && (c->cgroup || c->for_each_cgroup))
		die("--null counts no events: not with %s",
		    c->cgroup ? "--cgroup" : "--for-each-cgroup");
}

static void init_writer(const struct cli *c, struct writer *w, int k, const struct writer_ops *ops,
			FILE *fp)
{
	memset(w, 0, sizeof *w);
	w->ops = ops;
	w->fp = fp;
	w->opts.csv_sep = c->sep;
	w->opts.spans_table = c->spans_table;
	w->opts.spans_location = c->spans_location;
	w->opts.folded_threads = c->folded_threads;
	w->opts.weight = c->weight;
	if (k == out_record) {
		w->opts.keep_last = c->keep_last;
		w->opts.path = c->path[k];
	}
}

static void add_writer(struct cli *c, int k, const struct writer_ops *ops, FILE *fp)
{
	init_writer(c, &c->w[k], k, ops, fp);
	c->wv[c->nw++] = &c->w[k];
}

static void release_writers(struct cli *c)
{
	for (size_t i = 0; i < c->nw; i++)
		if (c->wv[i]->ops->release)
			c->wv[i]->ops->release(c->wv[i]);
	c->nw = 0;
}

/* The summary's tee (fopencookie): every write goes to the -o file, whose
 * errors stay in its own FILE, and into the copy; it never fails, so the
 * summary is always whole in the copy. */
static ssize_t tee_write(void *arg, const char *buf, size_t n)
{
	struct cli *c = arg;
	/* through to the file at once: the tee is flushed at each -I sample */
	FILE *to = c->out[OUT_SUMMARY].fp;
	if ((fwrite(buf, 1, n, to) != n || fflush(to) != 0) && !c->tee_err)
		c->tee_err = errno ? errno : EIO;
	if (!c->copy_lost &&
	    (n > SIZE_MAX - c->copy_len || GROW(c->copy, c->copy_len + n, c->copy_cap, 4096) < 0))
		c->copy_lost = true;
	if (!c->copy_lost) {
		memcpy(c->copy + c->copy_len, buf, n);
		c->copy_len += n;
	}
	return (ssize_t)n;
}

static void tee_close(struct cli *c)
{
	if (c->tee)
		fclose(c->tee);
	c->tee = NULL;
}

/* The private record of --keep-last's traces: made before the outputs are
 * opened, in a directory of its own under $TMPDIR (else /tmp). */
static void keep_private(struct cli *c)
{
	const char *tmp = getenv("TMPDIR");
	if (!tmp || !*tmp)
		tmp = "/tmp";
	if (asprintf(&c->keep_dir, "%s/spanstat-window.XXXXXX", tmp) < 0)
		die("out of memory");
	if (!mkdtemp(c->keep_dir))
		die("--keep-last: cannot make a directory for the window's record in '%s': %s", tmp,
		    strerror(errno));
	if (asprintf(&c->keep_rec, "%s/window.rec", c->keep_dir) < 0) {
		rmdir(c->keep_dir);
		die("out of memory");
	}
	c->path[out_record] = c->keep_rec;
}

/* Removes the private record and its directory (none: nothing). */
static void keep_cleanup(struct cli *c)
{
	if (!c->keep_dir)
		return;
	unlink(c->keep_rec);
	rmdir(c->keep_dir);
	free(c->keep_rec);
	free(c->keep_dir);
	c->keep_rec = c->keep_dir = NULL;
}

static void abort_outputs(struct cli *c)
{
	release_writers(c);
	tee_close(c);
	for (int k = 0; k < OUT_MAX; k++)
		outfile_abort(&c->out[k]);
	keep_cleanup(c);
}

/* Refuses outputs that would destroy what they should not: two naming one
 * file in any spelling, or one naming the command's own executable. */
static void check_outputs(struct cli *c, const char *command)
{
	for (int a = 0; a < OUT_MAX; a++)
		for (int b = a + 1; b < OUT_MAX; b++) {
			if (!c->path[a] || !c->path[b] || !outfile_same(&c->out[a], &c->out[b]))
				continue;
			abort_outputs(c);
			if (strcmp(c->path[a], c->path[b]) == 0)
				die("%s and %s name the same file '%s'", optname(a), optname(b),
				    c->path[a]);
			die("%s '%s' and %s '%s' name the same file", optname(a), c->path[a],
			    optname(b), c->path[b]);
		}
	struct stat st;
	if (!command || launch_which(command, &st) < 0)
		return;
	for (int k = 0; k < OUT_MAX; k++)
		if (c->path[k] && outfile_is(&c->out[k], st.st_dev, st.st_ino)) {
			abort_outputs(c);
			die("cannot write '%s': it is the executable of '%s'", c->path[k], command);
		}
}

/* Opens every output now, so a bad path fails before the target starts. */
static void open_outputs(struct cli *c, const char *command)
{
	char *cause = NULL;

	for (int k = 0; k < OUT_MAX; k++) {
		if (!c->path[k])
			continue;
		int flags = k == OUT_SUMMARY && c->append ? OUTFILE_APPEND : 0;
		if (outfile_open(&c->out[k], c->path[k], flags, &cause) < 0) {
			abort_outputs(c);
			die("%s", cause ? cause : "cannot open an output file");
		}
	}
	check_outputs(c, command);
	/* --keep-last's traces are made by reading the record file back: a
	 * stream cannot be (a pipe would be read from, its reader robbed and
	 * spanstat left waiting), nor a device or spanstat's own output */
	if (keeps_traces(c) && c->path[out_record] && !outfile_replaces(&c->out[out_record])) {
		abort_outputs(c);
		die("--keep-last: cannot make the traces from the record file '%s': a stream (a "
		    "FIFO, a device or spanstat's own output), which cannot be read back",
		    c->path[out_record]);
	}
	/* the summary: -o, else stderr as perf stat's; a report's on stdout
	 * unless another output is there */
	FILE *sfp = c->path[OUT_SUMMARY] ? c->out[OUT_SUMMARY].fp : stderr;
	if (c->path[OUT_SUMMARY] && strcmp(c->path[OUT_SUMMARY], "-") != 0) {
		c->tee = fopencookie(c, "w", (cookie_io_functions_t){.write = tee_write});
		if (!c->tee) {
			abort_outputs(c);
			die("cannot write --output '%s': %s", c->path[OUT_SUMMARY],
			    strerror(errno));
		}
		sfp = c->tee;
	}
	/* another output on stdout: "-", or its file by another name
	 * (/dev/stdout, /proc/self/fd/1, the file stdout is redirected to) */
	bool taken = false;
	struct stat so;
	bool have_so = !std_closed[1] && fstat(STDOUT_FILENO, &so) == 0;
	for (int k = 0; k < OUT_MAX; k++)
		taken |= c->path[k] && (strcmp(c->path[k], "-") == 0 ||
					(have_so && outfile_is(&c->out[k], so.st_dev, so.st_ino)));
	if (c->mode == MODE_REPORT && !c->path[OUT_SUMMARY] && !taken && !std_closed[1])
		sfp = stdout;
	if (c->mode != MODE_RECORD)
		add_writer(c, OUT_SUMMARY, c->sep ? &csv_writer_ops : &summary_writer_ops, sfp);
	for (int k = 1; k < out_n; k++)
		if (c->path[k] && !from_window(c, k))
			add_writer(c, k, output_table[k - 1].ops, c->out[k].fp);
}

/* Each output stands alone: a failed one is reported and removed, the
 * others are kept, and the status given (the target's) outranks ours. */
/* -o FILE: the file; when it cannot be written, an error line and the
 * summary on standard error instead.  The summary is not lost, so the
 * status stays what it was (the target's); 125 only when standard error
 * fails too. */
static int commit_summary(struct cli *c, int code)
{
	const char *path = c->path[OUT_SUMMARY];
	int e = 0;
	char *why = NULL;
	fflush(c->tee);
	tee_close(c);
	if (c->tee_err || ferror(c->out[OUT_SUMMARY].fp)) {
		e = c->tee_err ? c->tee_err : EIO;
		outfile_abort(&c->out[OUT_SUMMARY]);
	} else {
		int r = outfile_commit(&c->out[OUT_SUMMARY], &why);
		e = r < 0 ? -r : 0;
	}
	free(why);
	if (!e)
		return code;
	if (c->copy_lost) {
		die_soft("cannot write --output '%s': %s", path, strerror(e));
		return code ? code : EXIT_SPANSTAT;
	}
	die_soft("cannot write --output '%s': %s; the summary follows on standard error", path,
		 strerror(e));
	if (fwrite(c->copy, 1, c->copy_len, stderr) != c->copy_len || fflush(stderr) != 0)
		return code ? code : EXIT_SPANSTAT;
	return code;
}

/* The option that named output k, as the user gave it: spanstat record's
 * -o names the record file. */
static const char *out_opt(const struct cli *c, int k)
{
	if (k == out_record && c->keep_rec)
		return "the traces' window (--keep-last)";
	return c->mode == MODE_RECORD && k == out_record ? "--output" : optname(k);
}

/* The line for an output that could not be put in place (err, -errno, from
 * outfile_commit), naming its option as every other output error does. */
static void commit_failed(const struct cli *c, int k, int err, const char *why)
{
	if (err >= 0 || !c->path[k])
		errline(why ? why : "cannot write output");
	else if (strcmp(c->path[k], "-") == 0)
		die_soft("cannot write %s to standard output: %s", out_opt(c, k), stdout_why(-err));
	else
		die_soft("cannot write %s '%s': %s", out_opt(c, k), c->path[k], strerror(-err));
}

static int commit_outputs(struct cli *c, int code)
{
	for (int k = 0; k < OUT_MAX; k++) {
		char *why = NULL;
		int e;
		if (from_window(c, k) && !c->w[k].ops)
			continue; /* made later, from the record file */
		if (k == OUT_SUMMARY && c->tee && c->w[k].ops && !c->w[k].err) {
			code = commit_summary(c, code);
			continue;
		}
		if (k == OUT_SUMMARY)
			tee_close(c);
		if (c->w[k].ops && c->w[k].err < 0) {
			e = -outfile_why(&c->out[k], c->w[k].err);
			if (k == OUT_SUMMARY && !c->path[k] && c->w[k].fp == stdout)
				die_soft("cannot write the summary to standard output: %s",
					 stdout_why(e));
			else if (k == OUT_SUMMARY && !c->path[k])
				die_soft("cannot write the summary to standard error: %s",
					 strerror(e));
			else if (!c->path[k] || strcmp(c->path[k], "-") == 0)
				die_soft("cannot write %s to standard output: %s", out_opt(c, k),
					 stdout_why(e));
			else if ((out_flags(k) & OUTPUT_WEIGHT) && c->weight && e == ENOENT &&
				 strncmp(c->weight, SPANWEIGHT_ARG, strlen(SPANWEIGHT_ARG)) == 0)
				die_soft("cannot write %s '%s': --weight=%s: no span had a "
					 "number argument '%s'",
					 out_opt(c, k), c->path[k], c->weight,
					 c->weight + strlen(SPANWEIGHT_ARG));
			else if ((out_flags(k) & OUTPUT_WEIGHT) && c->weight &&
				 (e == ENOTSUP || e == ENOENT))
				die_soft("cannot write %s '%s': --weight=%s cannot be counted here",
					 out_opt(c, k), c->path[k], c->weight);
			else
				die_soft("cannot write %s '%s': %s", out_opt(c, k), c->path[k],
					 strerror(e));
			outfile_abort(&c->out[k]);
			code = code ? code : EXIT_SPANSTAT;
		} else if ((e = outfile_commit(&c->out[k], &why)) < 0) {
			commit_failed(c, k, e, why);
			free(why);
			code = code ? code : EXIT_SPANSTAT;
			/* not in place: not said written, nor read again (a
			 * --keep-last snapshot may be there in its stead) */
			if (c->w[k].ops)
				c->w[k].err = -EIO;
		}
	}
	return code;
}

/* SIGUSR2 with --keep-last: the snapshot of the record file is written
 * (w, its window win); each trace output is made from it now, as at the
 * end, and put in place while the run goes on. */
static void snapshot_traces(void *ctx, const struct writer *rw, const struct record_window *win)
{
	struct cli *c = ctx;
	struct stat st;
	if (!c->keep_rec && stat(rw->opts.path, &st) == 0)
		fprintf(stderr,
			"[ spanstat: snapshot of %.3f MB to '%s'; %" PRIu64
			" spans overwritten so far ]\n",
			(double)st.st_size / 1e6, rw->opts.path, win->spans);
	for (int k = 1; k < out_n; k++) {
		if (!from_window(c, k))
			continue;
		struct outfile of;
		char *cause = NULL;
		if (outfile_open(&of, c->path[k], 0, &cause) < 0) {
			errline(cause ? cause : "cannot write a snapshot");
			free(cause);
			continue;
		}
		struct writer w;
		struct writer *wv[1] = {&w};
		init_writer(c, &w, k, output_table[k - 1].ops, of.fp);
		const char *files[1] = {rw->opts.path};
		struct recreport_opts ro = {.files = files,
					    .nfiles = 1,
					    .writers = wv,
					    .nwriters = 1,
					    .compensate = c->compensate};
		const struct writer *failed = NULL;
		int r = recreport_run(&ro, &failed, &cause);
		int e = r < 0 ? -r : w.err < 0 ? -outfile_why(&of, w.err) : 0;
		if (w.ops->release)
			w.ops->release(&w);
		if (e) {
			outfile_abort(&of);
			die_soft("cannot write a snapshot to %s '%s': %s", optname(k), c->path[k],
				 cause ? cause : strerror(e));
		} else if (outfile_commit(&of, &cause) < 0) {
			errline(cause ? cause : "cannot write a snapshot");
		} else {
			fprintf(stderr,
				"[ spanstat: snapshot of the window to %s '%s'; %" PRIu64
				" spans overwritten so far ]\n",
				optname(k), c->path[k], win->spans);
		}
		free(cause);
	}
}

/* --keep-last's --perfetto and --flamechart: made from the record file
 * just written, as spanstat report makes them (the same bytes).  The last
 * target has ended: a signal now (a late SIGUSR2 or SIGTERM) has nothing
 * left to stop, so it does not stop them either (the file, a whole one
 * spanstat put in place, never makes the reading wait). */
static int window_outputs(struct cli *c, int code)
{
	int k0 = 0;
	for (int k = 1; k < out_n && !k0; k++)
		k0 = from_window(c, k) ? k : 0;
	if (!k0)
		return code;
	struct stat st;
	bool have = c->w[out_record].ops && !c->w[out_record].err &&
		    stat(c->path[out_record], &st) == 0;
	for (int k = k0; have && k < out_n; k++)
		if (from_window(c, k))
			add_writer(c, k, output_table[k - 1].ops, c->out[k].fp);
	const char *files[1] = {c->path[out_record]};
	struct recreport_opts ro = {.files = files,
				    .nfiles = 1,
				    .writers = c->wv,
				    .nwriters = c->nw,
				    .compensate = c->compensate};
	const struct writer *failed = NULL;
	char *cause = NULL;
	int r = have ? recreport_run(&ro, &failed, &cause) : -ENOENT;
	for (int k = k0; k < out_n; k++) {
		if (!from_window(c, k))
			continue;
		char *why = NULL;
		int e = r < 0 ? -r : c->w[k].err < 0 ? -c->w[k].err : 0;
		if (e == ENOENT && !have)
			die_soft("cannot write %s '%s': the %s it is made from was not written",
				 out_opt(c, k), c->path[k],
				 c->keep_rec ? "window (--keep-last)" : "record file");
		else if (e)
			die_soft("cannot write %s '%s': %s", out_opt(c, k), c->path[k],
				 cause ? cause : strerror(e));
		if (e)
			outfile_abort(&c->out[k]);
		else if ((e = outfile_commit(&c->out[k], &why)) < 0) {
			commit_failed(c, k, e, why);
			e = EIO;
		}
		free(why);
		if (e)
			code = code ? code : EXIT_SPANSTAT;
	}
	free(cause);
	release_writers(c);
	return code;
}

static void report_warn(void *ctx, const char *msg)
{
	(void)ctx;
	errline(msg);
}

/* report's threads without -j: one per CPU it may run on (its affinity,
 * as nproc counts: a job bound to one core of a node gets one thread, not
 * threads that take turns on that core), else one per online CPU. */
static unsigned report_jobs(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	for (size_t ncpu = 1024; ncpu <= (1u << 20); ncpu *= 2) {
		cpu_set_t *set = CPU_ALLOC(ncpu);
		size_t size = CPU_ALLOC_SIZE(ncpu);
		int r = set ? sched_getaffinity(0, size, set) : -1;
		int e = errno;
		if (r == 0)
			n = CPU_COUNT_S(size, set);
		CPU_FREE(set);
		if (r == 0 || !set || e != EINVAL)
			break;
	}
	return n < 1 ? 1 : n > RECREPORT_MAX_JOBS ? RECREPORT_MAX_JOBS : (unsigned)n;
}

/* spanstat report [OPTIONS] FILE...: the outputs, from record files. */
static int report_main(struct cli *c, int argc, char **argv)
{
	char *cause = NULL;
	struct sigrelay sr;
	if (sigrelay_block(&sr) < 0)
		die("cannot block signals: %s", strerror(errno));
	c->mode = MODE_REPORT;
	parse(c, argc, argv);
	int nfiles = argc - optind;
	if (nfiles == 0)
		die("report: missing FILE (see 'spanstat report --help')");
	if (nfiles > RECREPORT_MAX_FILES)
		die("report: at most %d files", RECREPORT_MAX_FILES);
	c->spans_table = true; /* a report prints the span table, when it has spans */
	check(c, nfiles);
	expand_paths(c);
	open_outputs(c, NULL);
	/* an output must not replace the recording it is made from */
	for (int i = optind; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) < 0)
			continue;
		for (int k = 0; k < OUT_MAX; k++)
			if (c->path[k] && outfile_is(&c->out[k], st.st_dev, st.st_ino)) {
				abort_outputs(c);
				die("report: %s '%s' is the record file '%s'", optname(k),
				    c->path[k], argv[i]);
			}
	}
	const struct writer *failed = NULL;
	struct recreport_opts ro = {.files = (const char *const *)argv + optind,
				    .nfiles = (size_t)nfiles,
				    .writers = c->wv,
				    .nwriters = c->nw,
				    .compensate = c->compensate,
				    .jobs = c->jobs ? c->jobs : report_jobs(),
				    .stop = &sr.set,
				    .warn = report_warn};
	int r = recreport_run(&ro, &failed, &cause);
	if (r == -EINTR) { /* a signal while it read: nothing is written */
		abort_outputs(c);
		int sig = sigrelay_take(&sr);
		if (sig)
			return SESSION_EXIT_SIGNAL + sig;
		errline("report: interrupted");
		return EXIT_SPANSTAT;
	}
	if (r < 0) {
		abort_outputs(c);
		errline(cause ? cause : "report: failed");
		free(cause);
		return EXIT_SPANSTAT;
	}
	int code = commit_outputs(c, 0);
	release_writers(c);
	if (!c->path[OUT_SUMMARY] && (fflush(stderr) != 0 || fflush(stdout) != 0)) {
		errline("report: cannot write the summary");
		code = code ? code : EXIT_SPANSTAT;
	}
	int sig = sigrelay_take(&sr);
	for (int k = 0; k < OUT_MAX; k++)
		free(c->expanded[k]);
	free(c->copy);
	return sig ? SESSION_EXIT_SIGNAL + sig : code;
}

/* spanstat [OPTIONS] COMMAND, and spanstat record (c->mode): measure. */
static int run_main(struct cli *c, int argc, char **argv)
{
	char *cause = NULL;

	/* From here until every output is committed, a terminating signal waits
	 * in a queue: the session relays it to the target, or it ends spanstat
	 * as 128+N once the results are whole.  SIGPIPE among them: a closed
	 * stdout is an error we report. */
	struct sigrelay sr;
	if (sigrelay_block(&sr) < 0)
		die("cannot block signals: %s", strerror(errno));
	parse(c, argc, argv);
	if (c->list) {
		if (argc - optind > 1)
			die("--list takes at most one PATTERN");
		int r = do_list(optind < argc ? argv[optind] : NULL);
		int sig = sigrelay_take(&sr);
		return sig ? SESSION_EXIT_SIGNAL + sig : r;
	}
	if (c->mode == MODE_RECORD) { /* -o names the record file */
		c->path[out_record] = c->path[OUT_SUMMARY] ? c->path[OUT_SUMMARY] : "spanstat.rec";
		c->path[OUT_SUMMARY] = NULL;
	}
	check(c, argc - optind);
	expand_paths(c);
	struct attach at;
	memset(&at, 0, sizeof at);
	if (c->pids || c->tids || c->all_cpus || c->cpus) {
		/* --per-thread -a: every thread on its own, as perf counts them */
		bool threads = c->aggr == AGGR_THREAD && c->all_cpus;
		struct rlimit rl; /* an fd per thread and event: as many as allowed, as perf */
		if (threads && getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
		int r = c->pids	  ? attach_tasks(&at, c->pids, false, &cause)
			: c->tids ? attach_tasks(&at, c->tids, true, &cause)
			: threads ? attach_all_threads(&at, &cause)
				  : attach_cpus(&at, c->cpus, &cause);
		if (r < 0)
			die("%s", cause ? cause : strerror(-r));
	}
	struct aggr ag;
	memset(&ag, 0, sizeof ag);
	if (c->aggr != AGGR_GLOBAL) {
		int r = aggr_build(&ag, c->aggr, c->cache_level, at.at, at.n,
				   (const char *const *)at.comm, NULL, &cause);
		if (r == -ENOMEM)
			die("out of memory");
		if (r < 0)
			die("%s", cause ? cause : strerror(-r));
		ag.skip_zero = c->aggr == AGGR_THREAD && c->all_cpus;
	}
	if (c->evl.n == 0 && !c->null_run && evlist_add_defaults(&c->evl, &cause) < 0)
		die("%s", cause ? cause : "cannot set up the default events");
	if (c->for_each_cgroup) {
		int r = cgroup_expand(&c->evl, c->for_each_cgroup, &cause);
		if (r == -ENOMEM)
			die("out of memory");
		if (r < 0)
			die("%s", cause);
	}
	/* a bad cgroup is bad input: refused before --pre runs */
	if (cgroup_check(&c->evl, &cause) < 0)
		die("%s", cause ? cause : "cannot open a cgroup");
	/* Any span output turns collection on; --json then includes spans. */
	bool spans = wants_spans(c);
	char *preload = NULL, *alloc = NULL;
	if (spans && !(preload = launch_preload_path("libspanstat.so.0")))
		die("cannot find the span library libspanstat.so.0 (is spanstat installed?)");
	/* the line protocol's helpers, where they are (else the target goes without) */
	char *pydir = spans ? launch_python_dir() : NULL;
	char *shell = spans ? launch_shell_helper() : NULL;
	char *pyboot = NULL;
	if (c->python && !(pyboot = launch_python_boot()))
		die("--python: cannot find spanstat's sitecustomize.py (is spanstat installed?)");
	if (c->python && !launch_python_ext(pydir))
		die("--python: spanstat was built without the C part of its Python module "
		    "(_spanstat.so; configure found no Python headers)");
	if (c->span_allocs && !(alloc = launch_preload_path("libspanstat-alloc.so.0")))
		die("cannot find the allocation counter libspanstat-alloc.so.0 (is spanstat "
		    "installed?)");
	/* an allocator the counter cannot see: said now, and its values unknown */
	char *why = NULL;
	bool alloc_unknown =
		c->span_allocs && optind < argc && launch_alloc_check(argv[optind], &why) < 0;
	if (alloc_unknown)
		die_soft("--span-allocs: cannot count the allocations of '%s': %s; their values "
			 "are unknown",
			 argv[optind], why ? why : "its allocator is out of reach");
	free(why);
	if (c->keep_last && !c->path[out_record])
		keep_private(c);
	open_outputs(c, argv[optind]);

	struct live live;
	live_init(&live, c->wv, c->nw);
	live.snapped = snapshot_traces;
	live.snapped_ctx = c;
	struct session_opts so = {
		.argc = argc - optind,
		.argv = argv + optind,
		.evl = &c->evl,
		.runs = c->runs,
		.interval_ms = c->interval_ms,
		.interval_count = c->interval_count,
		.delay_ms = c->delay_ms,
		.timeout_ms = c->timeout_ms,
		.pre = c->pre,
		.post = c->post,
		.spans = spans,
		.preload = preload,
		.filter = &c->filter,
		.demangle = c->demangle,
		.compensate = c->compensate,
		.span_evl = c->span_evl.n ? &c->span_evl : NULL,
		.span_allocs = c->span_allocs,
		.span_args = c->span_args,
		.lib_calls = c->lib_calls,
		.lib_calls_all = c->lib_calls_all,
		.no_off_cpu = c->no_off_cpu,
		.alloc_preload = alloc,
		.alloc_unknown = alloc_unknown,
		.python_dir = pydir,
		.python_boot = pyboot,
		.python_c_calls = c->python == 2,
		.shell_helper = shell,
		.attach = at.n ? &at : NULL,
		.aggr = ag.n ? &ag : NULL,
		.consumer = &live.consumer,
		.snapshot_usr2 = c->keep_last != 0,
	};
	int code;
	if (session_run(&so, &code, &cause) < 0) {
		abort_outputs(c);
		errline(cause ? cause : "failed");
		free(cause);
		free(preload);
		free(alloc);
		free(pydir);
		free(pyboot);
		free(shell);
		attach_release(&at);
		aggr_release(&ag);
		spanfilter_release(&c->filter);
		evlist_release(&c->evl);
		evlist_release(&c->span_evl);
		for (int k = 0; k < OUT_MAX; k++)
			free(c->expanded[k]);
		free(c->copy);
		return code;
	}
	code = commit_outputs(c, code);
	if (c->mode == MODE_RECORD && c->w[out_record].ops && !c->w[out_record].err) {
		struct stat st;
		/* never a silent drop: what the target dropped, as the records'
		 * headers told (the events themselves are decoded by report) */
		const struct decode_stats *d = live.have_dstats ? &live.dstats : NULL;
		uint64_t dropped = d && d->dropped != DECODE_UNKNOWN ? d->dropped : 0;
		uint64_t lost = d && d->lost_records != DECODE_UNKNOWN ? d->lost_records : 0;
		char say[128] = "";
		int n = 0;
		if (dropped)
			n = snprintf(say, sizeof say, "; the target dropped %" PRIu64 " event%s",
				     dropped, dropped == 1 ? "" : "s");
		if (lost && n >= 0 && (size_t)n < sizeof say)
			snprintf(say + n, sizeof say - (size_t)n, "; %" PRIu64 " record%s lost",
				 lost, lost == 1 ? "" : "s");
		if (stat(c->path[out_record], &st) == 0)
			fprintf(stderr, "[ spanstat record: wrote %.3f MB to '%s'%s ]\n",
				(double)st.st_size / 1e6, c->path[out_record], say);
	}
	struct record_window win;
	if (c->w[out_record].ops && !c->w[out_record].err &&
	    recwrite_window(&c->w[out_record], &win))
		fprintf(stderr,
			"[ spanstat: %s%s%s keeps the last %" PRIu64
			" bytes of events (--keep-last): "
			"%" PRIu64 " spans (%" PRIu64 " events, %" PRIu64 " messages, %" PRIu64
			" samples, %" PRIu64 " bytes) before them were overwritten ]\n",
			c->keep_rec ? "the traces' window" : "'",
			c->keep_rec ? "" : c->path[out_record], c->keep_rec ? "" : "'", win.size,
			win.spans, win.events, win.messages, win.samples, win.bytes);
	release_writers(c);
	code = window_outputs(c, code);
	keep_cleanup(c);
	if (!c->path[OUT_SUMMARY] && fflush(stderr) != 0)
		code = code ? code : EXIT_SPANSTAT;
	/* A signal that came after the last run's target was reaped found
	 * nothing left to stop: it is taken, and the target's status stays. */
	sigrelay_take(&sr);
	free(preload);
	free(alloc);
	free(pydir);
	free(pyboot);
	free(shell);
	attach_release(&at);
	aggr_release(&ag);
	free(cause);
	spanfilter_release(&c->filter);
	evlist_release(&c->evl);
	evlist_release(&c->span_evl);
	for (int k = 0; k < OUT_MAX; k++)
		free(c->expanded[k]);
	free(c->copy);
	return code;
}

static int record_main(struct cli *c, int argc, char **argv)
{
	c->mode = MODE_RECORD;
	return run_main(c, argc, argv);
}

static int diff_cmd(struct cli *c, int argc, char **argv)
{
	(void)c;
	return diff_main(argc, argv);
}

/* The subcommands: spanstat's first word, before any option ("spanstat --
 * diff" runs a program named diff).  --help lists them; docs.bats checks
 * them against the man page and the completions. */
static const struct subcommand {
	const char *name;
	int (*fn)(struct cli *c, int argc, char **argv); /* argv[0] is the name */
	const char *usage;				 /* after "spanstat " */
	const char *help;				 /* --help's line */
} subcommands[] = {
	{"record", record_main, "record [-o FILE] [OPTIONS] [--] COMMAND [ARGS...]",
	 "run COMMAND and keep everything in a record file, for report later"},
	{"report", report_main, "report [OPTIONS] FILE...",
	 "make any output from record files, merging the ranks of a job"},
	{"diff", diff_cmd, "diff [OPTIONS] OLD NEW",
	 "compare two sessions (record files or JSON) with significance, as a gate"},
};

static void main_help(FILE *fp)
{
	fputs("Usage: spanstat [OPTIONS] [--] COMMAND [ARGS...]\n"
	      "       spanstat --list [PATTERN]\n",
	      fp);
	for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++)
		fprintf(fp, "       spanstat %s\n", subcommands[i].usage);
	fputs("\n"
	      "Run COMMAND and report what it cost: perf_event counters, rusage, and the\n"
	      "spans it emits through libspanstat (or -finstrument-functions).\n"
	      "\n"
	      "Subcommands (each with its own --help):\n",
	      fp);
	for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++)
		fprintf(fp, "  %-8s %s\n", subcommands[i].name, subcommands[i].help);
	fputs("\n", fp);
	options_help(fp);
}

int main(int argc, char **argv)
{
	struct cli c;

	memset(&c, 0, sizeof c);
	c.runs = 1;
	evlist_init(&c.evl);
	evlist_init(&c.span_evl);
	spanfilter_init(&c.filter);
	std_sanitize();
	out_init();
	for (size_t i = 0; argc > 1 && i < sizeof subcommands / sizeof subcommands[0]; i++)
		if (strcmp(argv[1], subcommands[i].name) == 0)
			return subcommands[i].fn(&c, argc - 1, argv + 1);
	return run_main(&c, argc, argv);
}
