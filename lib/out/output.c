/* output.c: the output registry (see output.h). */
#include "config.h"

#include "output.h"

#include <string.h>

const struct output_def output_table[] = {
	{"folded", "write spans as folded stacks (self time in ns) to FILE, - for stdout",
	 OUTPUT_SPANS | OUTPUT_WEIGHT | OUTPUT_THREADS, &folded_writer_ops},
	{"json",
	 "write the results as one JSON document to FILE, - for stdout: counts, intervals and "
	 "span trees",
	 OUTPUT_HOLDS | OUTPUT_WEIGHT, &json_writer_ops},
	{"perfetto",
	 "write a Perfetto trace to FILE: spans as slices, counters and -I samples as counter "
	 "tracks",
	 OUTPUT_SPANS, &perfetto_writer_ops},
	{"pprof",
	 "write spans as a gzipped pprof profile (go tool pprof, Pyroscope), its samples "
	 "the span paths with their count, times and values",
	 OUTPUT_SPANS | OUTPUT_WEIGHT, &pprof_writer_ops},
	{"flamegraph",
	 "write the spans as an interactive SVG flame graph (zoom, search; no network) to FILE",
	 OUTPUT_SPANS | OUTPUT_WEIGHT | OUTPUT_THREADS, &flamegraph_writer_ops},
	{"flamechart",
	 "write every span in time order, a lane per thread, as an interactive SVG flame chart "
	 "to FILE",
	 OUTPUT_SPANS, &flamechart_writer_ops},
	{"record",
	 "also keep the whole session in the record FILE, for spanstat report later "
	 "(as spanstat record does)",
	 OUTPUT_KEEP, &record_writer_ops},
};

const size_t output_count = sizeof output_table / sizeof output_table[0];
_Static_assert(sizeof output_table / sizeof output_table[0] <= OUTPUT_MAX,
	       "OUTPUT_MAX is too small for the registry");

const struct output_def *output_find(const char *option)
{
	for (size_t i = 0; i < output_count; i++)
		if (strcmp(output_table[i].option, option) == 0)
			return &output_table[i];
	return NULL;
}
