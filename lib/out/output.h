/* output.h: the registry of spanstat's outputs, one row each: the option
 * that names its file, its --help line, what it needs and takes, and its
 * writer (writer.h).  cmd/ derives from it its options, --help, the checks
 * and their messages, and which outputs `spanstat report` makes; adding an
 * output is its writer's file and one row in output.c (doc/ARCHITECTURE.md
 * says what else a new output may want).  The summary is no row: it is
 * always there (-o names its file, -x picks the CSV writer). */
#ifndef SPANSTAT_OUTPUT_H
#define SPANSTAT_OUTPUT_H

#include <stddef.h>

#include "writer.h"

enum {
	OUTPUT_SPANS = 1u,   /* asking for it turns span collection on */
	OUTPUT_WEIGHT = 2u,  /* counts its nodes by --weight */
	OUTPUT_THREADS = 4u, /* roots its stacks in process and thread (--folded-threads) */
	OUTPUT_KEEP = 8u,    /* keeps the whole session (spans too, where they can be
			      * collected): made by a live run only, never by report */
	OUTPUT_HOLDS = 16u,  /* holds spans where they can be collected (a COMMAND
			      * spanstat starts), and goes without them when attached */
};

struct output_def {
	const char *option; /* the long option that names its file: "folded" */
	const char *help;   /* its --help line */
	unsigned flags;	    /* OUTPUT_* */
	const struct writer_ops *ops;
};

/* Room for this many rows: cmd/ sizes its arrays by it. */
#define OUTPUT_MAX 16

/* The rows, in --help's order, output_count of them. */
extern const struct output_def output_table[];
extern const size_t output_count;

/* The row whose option is `option`, or NULL. */
const struct output_def *output_find(const char *option);

#endif
