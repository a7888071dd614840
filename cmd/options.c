/* options.c: the table of every option spanstat takes, and --help. */
#include "config.h"

#include "options.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define OPTIONS_HELP_COL 28

const struct opt_def options_table[] = {
	{OPT_EVENT, 'e', "event", "LIST",
	 "events to count, in perf's syntax: a,b  {a,b} (a group)  name:u/k/h  rNNNN  "
	 "pmu::event; repeatable (default: perf stat's set)",
	 0},
	{OPT_REPEAT, 'r', "repeat", "N", "run COMMAND N times; print means and ( +- x% ) spread",
	 0},
	{OPT_PID, 'p', "pid", "PIDS",
	 "count running processes (every thread, and what they start) instead of COMMAND, "
	 "until they exit, COMMAND ends, or SIGINT",
	 0},
	{OPT_TID, 't', "tid", "TIDS", "count running threads, as -p", 0},
	{OPT_ALL_CPUS, 'a', "all-cpus", NULL,
	 "count system-wide, every task on every CPU, until COMMAND ends or SIGINT", 0},
	{OPT_CPU, 'C', "cpu", "CPUS", "count system-wide on these CPUs only (0,2-3)", 0},
	{OPT_INTERVAL, 'I', "interval-print", "MS",
	 "print counts every MS milliseconds while COMMAND runs (at least 10)", 0},
	{OPT_SEPARATOR, 'x', "field-separator", "SEP",
	 "print counts as CSV with separator SEP, in perf's column order", 0},
	{OPT_OUTPUT, 'o', "output", "FILE", "write the summary to FILE instead of stderr", 0},
	{OPT_APPEND, 0, "append", NULL, "append to the --output FILE instead of replacing it", 0},
	{OPT_SPANS, 0, "spans", "location",
	 "collect spans; print the span table after the summary (=location: with each "
	 "function's file:line from its debug information)",
	 1},
	{OPT_FOLDED, 0, "folded", "FILE",
	 "write spans as folded stacks (self time in ns) to FILE, - for stdout", 0},
	{OPT_FOLDED_THREADS, 0, "folded-threads", NULL,
	 "root each folded stack and --flamegraph's frames in their process and thread", 0},
	{OPT_JSON, 0, "json", "FILE",
	 "write the results as one JSON document to FILE, - for stdout", 0},
	{OPT_PERFETTO, 0, "perfetto", "FILE",
	 "write a Perfetto trace to FILE: spans as slices, counters and -I samples as counter "
	 "tracks",
	 0},
	{OPT_PPROF, 0, "pprof", "FILE",
	 "write spans as a gzipped pprof profile (go tool pprof, Pyroscope), its samples "
	 "the span paths with their count, times and values",
	 0},
	{OPT_FLAMEGRAPH, 0, "flamegraph", "FILE",
	 "write the spans as an interactive SVG flame graph (zoom, search; no network) to FILE", 0},
	{OPT_FLAMECHART, 0, "flamechart", "FILE",
	 "write every span in time order, a lane per thread, as an interactive SVG flame chart "
	 "to FILE",
	 0},
	{OPT_RECORD, 0, "record", "FILE",
	 "also keep the whole session in the record FILE, for spanstat report later "
	 "(as spanstat record does)",
	 0},
	{OPT_DEMANGLE, 0, "demangle", "MODE",
	 "how C++ function names show: simple (scopes and name), full (as c++filt prints "
	 "them) or no (the symbol); default simple",
	 0},
	{OPT_MIN_DURATION, 0, "min-duration", "TIME",
	 "send no span shorter than TIME (e.g. 500ns, 2us, 1ms, 1s); its time stays in its "
	 "parent's",
	 0},
	{OPT_MAX_DEPTH, 0, "max-depth", "N",
	 "send no span deeper than N in its thread (the outermost is depth 1)", 0},
	{OPT_FILTER, 0, "filter", "GLOB",
	 "send only spans inside a span whose name matches GLOB, that span included; "
	 "repeatable",
	 0},
	{OPT_EXCLUDE, 0, "exclude", "GLOB",
	 "send no span whose name matches GLOB, nor any span under it; repeatable", 0},
	{OPT_COMPENSATE, 0, "compensate", NULL,
	 "take the instrumentation's own measured cost out of every span's time", 0},
	{OPT_SPAN_EVENTS, 0, "span-events", "LIST",
	 "count these events (-e's syntax) in every span, each thread counting its own; "
	 "repeatable",
	 0},
	{OPT_SPAN_ALLOCS, 0, "span-allocs", NULL,
	 "count each span's allocations and frees and their usable bytes, whichever allocator "
	 "serves them",
	 0},
	{OPT_WEIGHT, 0, "weight", "METRIC",
	 "what --folded and --flamegraph count (and --pprof's default sample): wall (self "
	 "ns, the default), cpu, off-cpu, allocs, alloc-bytes or an event of --span-events",
	 0},
	{OPT_NO_OFF_CPU, 0, "no-off-cpu", NULL,
	 "do not split span times into on- and off-CPU time (no context-switch records)", 0},
	{OPT_LIST, 0, "list", NULL, "list the events usable here (optionally matching PATTERN)", 0},
	{OPT_HELP, 'h', "help", NULL, "show this help", 0},
	{OPT_VERSION, 'V', "version", NULL, "show spanstat's version", 0},
	{0, 0, NULL, NULL, NULL, 0},
};

void options_help(FILE *fp)
{
	fputs("Usage: spanstat [OPTIONS] [--] COMMAND [ARGS...]\n"
	      "       spanstat --list [PATTERN]\n"
	      "       spanstat diff [OPTIONS] OLD NEW   (see spanstat diff --help)\n"
	      "\n"
	      "Run COMMAND and report what it cost: perf_event counters, rusage, and the\n"
	      "spans it emits through libspanstat (or -finstrument-functions).\n"
	      "\n"
	      "Options:\n",
	      fp);
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
