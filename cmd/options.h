/* options.h: the one table of spanstat's options: its own rows, and a row
 * for each output of the registry (lib/out/output.h), merged by
 * options_init.  --help is printed from it, getopt's long options are built
 * from it, each row says which subcommands take it, and tests/bats/docs.bats
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
	OPT_DELAY = 'D',
	OPT_NULL = 'n',
	OPT_CGROUP = 'G',
	OPT_NO_AGGR = 'A',
	OPT_JOBS = 'j',
	OPT_HELP = 'h',
	OPT_VERSION = 'V',
	OPT_APPEND = 256,
	OPT_LIST,
	OPT_SPANS,
	OPT_FOLDED_THREADS,
	OPT_DEMANGLE,
	OPT_MIN_DURATION,
	OPT_MAX_DEPTH,
	OPT_FILTER,
	OPT_EXCLUDE,
	OPT_COMPENSATE,
	OPT_SPAN_EVENTS,
	OPT_SPAN_ALLOCS,
	OPT_SPAN_ARGS,
	OPT_PYTHON,
	OPT_WEIGHT,
	OPT_NO_OFF_CPU,
	OPT_NO_SPANS,
	OPT_LIB_CALLS,
	OPT_LIB_CALLS_ALL,
	OPT_TIMEOUT,
	OPT_INTERVAL_COUNT,
	OPT_PRE,
	OPT_POST,
	OPT_FOR_EACH_CGROUP,
	OPT_PER_THREAD,
	OPT_PER_CORE,
	OPT_PER_DIE,
	OPT_PER_SOCKET,
	OPT_PER_NODE,
	OPT_PER_CACHE,
	OPT_NO_MERGE,
	OPT_KEEP_LAST,
	OPT_OUT_FIRST = 512, /* + k: the file of the registry's output k */
};

/* Which subcommands take an option (struct opt_def's modes). */
enum {
	OPTM_RUN = 1u,			       /* spanstat [OPTIONS] COMMAND */
	OPTM_RECORD = 2u,		       /* spanstat record */
	OPTM_REPORT = 4u,		       /* spanstat report */
	OPTM_MEASURE = OPTM_RUN | OPTM_RECORD, /* the measurement's (0 says the same) */
	OPTM_OUTPUT = OPTM_RUN | OPTM_REPORT,  /* the outputs' */
	OPTM_ALL = OPTM_RUN | OPTM_RECORD | OPTM_REPORT,
};

struct opt_def {
	int id;
	char shortopt;	  /* 0: long only */
	const char *name; /* long name */
	const char *arg;  /* argument's name, NULL: takes none */
	const char *help;
	int arg_optional; /* arg may be left out: --name[=ARG] */
	unsigned modes;	  /* OPTM_*; 0: OPTM_MEASURE */
};

/* Every option, ended by a row with no name; built by options_init. */
extern const struct opt_def *options_table;

/* Merges the registry's outputs into the table; 0, or -1 out of memory. */
int options_init(void);
/* The subcommands that take option o (OPTM_*). */
unsigned options_modes(const struct opt_def *o);

/* --help's options and exit status (the caller prints the usage first). */
void options_help(FILE *fp);
/* getopt_long's tables, built from options_table; the caller frees *longopts. */
int options_getopt(char **shortopts, void **longopts);

#endif
