/* options.h: the one table of spanstat's options.  --help is printed from
 * it, getopt's long options are built from it, and tests/bats/docs.bats
 * checks the man page and every completion script against --help. */
#ifndef SPANSTAT_OPTIONS_H
#define SPANSTAT_OPTIONS_H

#include <stdio.h>

enum opt_id {
	OPT_EVENT = 'e',
	OPT_REPEAT = 'r',
	OPT_INTERVAL = 'I',
	OPT_SEPARATOR = 'x',
	OPT_OUTPUT = 'o',
	OPT_PID = 'p',
	OPT_TID = 't',
	OPT_ALL_CPUS = 'a',
	OPT_CPU = 'C',
	OPT_HELP = 'h',
	OPT_VERSION = 'V',
	OPT_APPEND = 256,
	OPT_LIST,
	OPT_SPANS,
	OPT_FOLDED,
	OPT_FOLDED_THREADS,
	OPT_JSON,
	OPT_PERFETTO,
	OPT_DEMANGLE,
	OPT_MIN_DURATION,
	OPT_MAX_DEPTH,
	OPT_FILTER,
	OPT_EXCLUDE,
	OPT_COMPENSATE,
	OPT_SPAN_EVENTS,
	OPT_SPAN_ALLOCS,
	OPT_WEIGHT,
	OPT_NO_OFF_CPU,
	OPT_PPROF,
	OPT_FLAMEGRAPH,
	OPT_FLAMECHART,
	OPT_RECORD,
};

struct opt_def {
	int id;
	char shortopt;	  /* 0: long only */
	const char *name; /* long name */
	const char *arg;  /* argument's name, NULL: takes none */
	const char *help;
	int arg_optional; /* arg may be left out: --name[=ARG] */
};

extern const struct opt_def options_table[];

void options_help(FILE *fp);
/* getopt_long's tables, built from options_table; the caller frees *longopts. */
int options_getopt(char **shortopts, void **longopts);

#endif
