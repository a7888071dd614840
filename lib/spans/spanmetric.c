/* spanmetric.c: the metric table (spanmetric.h): how every writer shows
 * each kind of span metric. */
#include "config.h"

#include "spanmetric.h"

#include <stddef.h>

const struct spanmetric_info spanmetric_table[] = {
	[SPANMETRIC_OFF_CPU] = {.unit = SPANMETRIC_NS, .split = true, .net_of = -1},
	[SPANMETRIC_EVENT] = {.unit = SPANMETRIC_COUNT, .track = true, .net_of = -1},
	[SPANMETRIC_ALLOCS] = {"allocs", "allocs", NULL, SPANMETRIC_COUNT, false, false, -1},
	[SPANMETRIC_FREES] = {"frees", "frees", NULL, SPANMETRIC_COUNT, false, false, -1},
	[SPANMETRIC_ALLOC_BYTES] = {"bytes", "alloc_bytes", "alloc_space", SPANMETRIC_BYTES, false,
				    false, -1},
	[SPANMETRIC_FREE_BYTES] = {"net", "free_bytes", "free_space", SPANMETRIC_BYTES, false,
				   false, SPANMETRIC_ALLOC_BYTES},
};
