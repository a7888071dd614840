/* options.c: the table of every option spanstat takes (its own, and the
 * outputs of lib/out/output.c), and --help. */
#include "config.h"

#include "options.h"

#include "output.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define OPTIONS_HELP_COL 28

static const struct opt_def options_own[] = {
	{OPT_EVENT, 'e', "event", "LIST",
	 "events to count, in perf's syntax: a,b  {a,b} (a group)  name:u/k/h  rNNNN  "
	 "pmu/term=v,.../  "
	 "pmu::event  sys:event (a tracepoint; globs expand)  duration_time  user_time  "
	 "system_time  uprobe:PATH:SYMBOL  uretprobe:PATH:SYMBOL (a function's calls, "
	 "returns); repeatable (default: perf stat's set)",
	 0, OPTM_MEASURE},
	{OPT_REPEAT, 'r', "repeat", "N", "run COMMAND N times; print means and ( +- x% ) spread", 0,
	 OPTM_MEASURE},
	{OPT_PID, 'p', "pid", "PIDS",
	 "count running processes (every thread, and what they start) instead of COMMAND, "
	 "until they exit, COMMAND ends, or SIGINT",
	 0, OPTM_MEASURE},
	{OPT_TID, 't', "tid", "TIDS", "count running threads, as -p", 0, OPTM_MEASURE},
	{OPT_ALL_CPUS, 'a', "all-cpus", NULL,
	 "count system-wide, every task on every CPU, until COMMAND ends or SIGINT", 0,
	 OPTM_MEASURE},
	{OPT_CPU, 'C', "cpu", "CPUS", "count system-wide on these CPUs only (0,2-3)", 0,
	 OPTM_MEASURE},
	{OPT_NO_AGGR, 'A', "no-aggr", NULL, "with -a or -C: a row per CPU (CPU0, CPU1 ...)", 0,
	 OPTM_RUN},
	{OPT_PER_THREAD, 0, "per-thread", NULL,
	 "with -p, -t or -a: a row per thread, named comm-tid as perf does", 0, OPTM_RUN},
	{OPT_PER_CORE, 0, "per-core", NULL,
	 "with -a or -C: a row per physical core (S0-D0-C0) and its number of CPUs", 0, OPTM_RUN},
	{OPT_PER_DIE, 0, "per-die", NULL, "with -a or -C: a row per die (S0-D0)", 0, OPTM_RUN},
	{OPT_PER_SOCKET, 0, "per-socket", NULL, "with -a or -C: a row per socket (S0)", 0,
	 OPTM_RUN},
	{OPT_PER_NODE, 0, "per-node", NULL, "with -a or -C: a row per NUMA node (N0)", 0, OPTM_RUN},
	{OPT_PER_CACHE, 0, "per-cache", "LEVEL",
	 "with -a or -C: a row per cache instance (S0-D0-L3-ID0) of LEVEL (L2, L3 ...; "
	 "default: the highest)",
	 1, OPTM_RUN},
	{OPT_NO_MERGE, 0, "no-merge", NULL,
	 "do not merge the counts of an event's PMUs (accepted for perf's command lines: each "
	 "event spanstat opens is one PMU's)",
	 0, OPTM_RUN},
	{OPT_INTERVAL, 'I', "interval-print", "MS",
	 "print counts every MS milliseconds while COMMAND runs (at least 10)", 0, OPTM_MEASURE},
	{OPT_INTERVAL_COUNT, 0, "interval-count", "N",
	 "with -I: print N intervals, then no more (COMMAND runs on; without one, the count "
	 "ends)",
	 0, OPTM_MEASURE},
	{OPT_DELAY, 'D', "delay", "MS",
	 "start counting MS milliseconds after COMMAND starts (spans cover the whole run)", 0,
	 OPTM_MEASURE},
	{OPT_TIMEOUT, 0, "timeout", "MS",
	 "stop after MS milliseconds (at least 10): COMMAND gets SIGTERM, the counts are printed",
	 0, OPTM_MEASURE},
	{OPT_NULL, 'n', "null", NULL, "count nothing: only the times (and spans, if asked)", 0,
	 OPTM_MEASURE},
	{OPT_PRE, 0, "pre", "CMD",
	 "run shell command CMD before each run, uncounted; its failure ends spanstat (125)", 0,
	 OPTM_MEASURE},
	{OPT_POST, 0, "post", "CMD", "run shell command CMD after each run, as --pre", 0,
	 OPTM_MEASURE},
	{OPT_CGROUP, 'G', "cgroup", "NAMES",
	 "with -a or -C: count the events of -e (before it) only in these cgroups (v2), the "
	 "first event in the first; an empty name counts everywhere",
	 0, OPTM_RUN},
	{OPT_FOR_EACH_CGROUP, 0, "for-each-cgroup", "NAMES",
	 "with -a or -C: count every event once in each of these cgroups (v2)", 0, OPTM_RUN},
	{OPT_SEPARATOR, 'x', "field-separator", "SEP",
	 "print counts as CSV with separator SEP, in perf's column order", 0, OPTM_OUTPUT},
	{OPT_OUTPUT, 'o', "output", "FILE", "write the summary to FILE instead of stderr", 0,
	 OPTM_ALL},
	{OPT_APPEND, 0, "append", NULL, "append to the --output FILE instead of replacing it", 0,
	 OPTM_OUTPUT},
	{OPT_SPANS, 0, "spans", "location",
	 "collect spans; print the span table after the summary (=location: with each "
	 "function's file:line from its debug information)",
	 1, OPTM_OUTPUT},
	/* here: the registry's outputs (output.c), in its order */
	{OPT_OUT_FIRST, 0, NULL, NULL, NULL, 0, 0},
	{OPT_FOLDED_THREADS, 0, "folded-threads", NULL,
	 "root each folded stack and --flamegraph's frames in their process and thread", 0,
	 OPTM_OUTPUT},
	{OPT_DEMANGLE, 0, "demangle", "MODE",
	 "how C++ function names show: simple (scopes and name), full (as c++filt prints "
	 "them) or no (the symbol); default simple",
	 0, OPTM_MEASURE},
	{OPT_MIN_DURATION, 0, "min-duration", "TIME",
	 "send no span shorter than TIME (e.g. 500ns, 2us, 1ms, 1s); its time stays in its "
	 "parent's",
	 0, OPTM_MEASURE},
	{OPT_MAX_DEPTH, 0, "max-depth", "N",
	 "send no span deeper than N in its thread (the outermost is depth 1)", 0, OPTM_MEASURE},
	{OPT_FILTER, 0, "filter", "GLOB",
	 "send only spans inside a span whose name matches GLOB, that span included; "
	 "cat:GLOB matches its category; repeatable",
	 0, OPTM_MEASURE},
	{OPT_EXCLUDE, 0, "exclude", "GLOB",
	 "send no span whose name matches GLOB (cat:GLOB: its category), nor any span under "
	 "it; repeatable",
	 0, OPTM_MEASURE},
	{OPT_COMPENSATE, 0, "compensate", NULL,
	 "take the instrumentation's own measured cost out of every span's time", 0, OPTM_OUTPUT},
	{OPT_JOBS, 'j', "jobs", "N",
	 "report: threads that make the outputs (default: one per CPU it may run on; 1: one "
	 "thread); they are the same bytes whatever N is",
	 0, OPTM_REPORT},
	{OPT_SPAN_EVENTS, 0, "span-events", "LIST",
	 "count these events (-e's syntax) in every span, each thread counting its own; "
	 "repeatable",
	 0, OPTM_MEASURE},
	{OPT_SPAN_ALLOCS, 0, "span-allocs", NULL,
	 "count each span's allocations and frees and their usable bytes, whichever allocator "
	 "serves them",
	 0, OPTM_MEASURE},
	{OPT_SPAN_ARGS, 0, "span-args", NULL,
	 "keep the spans' typed arguments (spanstat_arg_*) when no output streams spans: "
	 "threads send their events instead of aggregating them (implied by --weight=arg:KEY)",
	 0, OPTM_MEASURE},
	{OPT_PYTHON, 0, "python", "c",
	 "with spans: every Python function call a span (module.qualname, file:line in JSON), "
	 "through a C profile hook; =c: C functions called from Python too",
	 1, OPTM_MEASURE},
	{OPT_WEIGHT, 0, "weight", "METRIC",
	 "what --folded and --flamegraph count (and --pprof's default sample, and JSON's "
	 "self_weight): wall (self ns, the default), cpu, off-cpu, allocs, alloc-bytes, an "
	 "event of --span-events, or arg:KEY (the sums of a number argument)",
	 0, OPTM_OUTPUT},
	{OPT_NO_OFF_CPU, 0, "no-off-cpu", NULL,
	 "do not split span times into on- and off-CPU time (no context-switch records)", 0,
	 OPTM_MEASURE},
	{OPT_LIB_CALLS, 0, "lib-calls", "GLOB",
	 "make each call the program makes through its PLT to a shared library function "
	 "(matching GLOB, default every one) a span named by the function",
	 1, OPTM_MEASURE},
	{OPT_LIB_CALLS_ALL, 0, "lib-calls-all", NULL,
	 "with --lib-calls: the calls the program's libraries make too (those loaded at start "
	 "and by dlopen)",
	 0, OPTM_MEASURE},
	{OPT_NO_SPANS, 0, "no-spans", NULL,
	 "collect no spans: the target runs without the span library, --json and a record "
	 "hold counts only",
	 0, OPTM_MEASURE},
	{OPT_KEEP_LAST, 0, "keep-last", "SIZE",
	 "a flight recorder: the record file (or, without one, --perfetto and --flamechart) "
	 "keeps only the last SIZE bytes of events (K, M, G: KiB, MiB, GiB; at least 128K), "
	 "says what was overwritten, and is written when the command ends or as a snapshot on "
	 "SIGUSR2",
	 0, OPTM_MEASURE},
	{OPT_LIST, 0, "list", NULL, "list the events usable here (optionally matching PATTERN)", 0,
	 OPTM_MEASURE},
	{OPT_HELP, 'h', "help", NULL, "show this help", 0, OPTM_ALL},
	{OPT_VERSION, 'V', "version", NULL, "show spanstat's version", 0, OPTM_ALL},
	{0, 0, NULL, NULL, NULL, 0, 0},
};

/* options_own with the outputs in place of the OPT_OUT_FIRST row: each
 * names its file, and report makes it unless it keeps the live session. */
static struct opt_def options_all[sizeof options_own / sizeof options_own[0] + OUTPUT_MAX];
const struct opt_def *options_table = options_own;

int options_init(void)
{
	size_t n = 0;
	for (const struct opt_def *o = options_own;; o++) {
		if (o->id != OPT_OUT_FIRST) {
			options_all[n++] = *o;
			if (!o->name)
				break;
			continue;
		}
		for (size_t k = 0; k < output_count; k++) {
			const struct output_def *d = &output_table[k];
			options_all[n++] = (struct opt_def){
				.id = OPT_OUT_FIRST + (int)k,
				.name = d->option,
				.arg = "FILE",
				.help = d->help,
				.modes = d->flags & OUTPUT_KEEP ? OPTM_RUN : OPTM_OUTPUT};
		}
	}
	options_table = options_all;
	return 0;
}

unsigned options_modes(const struct opt_def *o)
{
	return o->modes ? o->modes : OPTM_MEASURE;
}

void options_help(FILE *fp)
{
	fputs("Options:\n", fp);
	for (const struct opt_def *o = options_table; o->name; o++) {
		char left[64];
		int n = snprintf(left, sizeof left, "%c%c%s --%s%s%s%s%s", o->shortopt ? '-' : ' ',
				 o->shortopt ? o->shortopt : ' ', o->shortopt ? "," : " ", o->name,
				 o->arg && o->arg_optional ? "[" : "", o->arg ? "=" : "",
				 o->arg ? o->arg : "", o->arg && o->arg_optional ? "]" : "");
		fprintf(fp, "  %s%*s", left, n < OPTIONS_HELP_COL ? OPTIONS_HELP_COL - n : 1, "");
		/* wrap the text at 80 columns, continuing under itself */
		const char *t = o->help;
		int room = 80 - 2 - OPTIONS_HELP_COL;
		while ((int)strlen(t) > room) {
			int cut = room;
			while (cut > 0 && t[cut] != ' ')
				cut--;
			if (cut == 0)
				break;
			fprintf(fp, "%.*s\n%*s", cut, t, 2 + OPTIONS_HELP_COL, "");
			t += cut + 1;
		}
		fprintf(fp, "%s\n", t);
	}
	fputs("\n"
	      "Exit status: COMMAND's own; 128+N when it died of signal N, or when\n"
	      "spanstat got signal N before COMMAND started or between runs; 125 when\n"
	      "spanstat itself failed; 126 when COMMAND cannot be executed; 127 when\n"
	      "it is not found.\n"
	      "Signals sent to spanstat are passed on to COMMAND.  See spanstat(1).\n",
	      fp);
}

int options_getopt(char **shortopts, void **longopts)
{
	size_t n = 0;
	while (options_table[n].name)
		n++;
	struct option *lo = calloc(n + 1, sizeof *lo);
	char *so = malloc(2 * n + 3);
	if (!lo || !so) {
		free(lo);
		free(so);
		return -1;
	}
	char *p = so;
	*p++ = '+'; /* stop at the first non-option: COMMAND's options are its own */
	*p++ = ':'; /* report a missing argument as ':' */
	for (size_t i = 0; i < n; i++) {
		const struct opt_def *o = &options_table[i];
		int has = !o->arg	    ? no_argument
			  : o->arg_optional ? optional_argument
					    : required_argument;
		lo[i] = (struct option){o->name, has, NULL, o->id};
		if (o->shortopt) {
			*p++ = o->shortopt;
			if (o->arg)
				*p++ = ':';
			if (o->arg && o->arg_optional)
				*p++ = ':';
		}
	}
	*p = 0;
	*shortopts = so;
	*longopts = lo;
	return 0;
}
