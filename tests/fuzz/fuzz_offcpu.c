/* fuzz_offcpu.c: libFuzzer target for the context-switch record parser
 * (lib/perf/offcpu.c), fed ring records as a kernel would write them, or
 * anything else.  Input: the first byte splits the rest into two feeds (as
 * two drains would see them); afterwards, for every thread the records
 * named, off-CPU time must never decrease with time and never exceed the
 * time since the thread's first record, and its end is never before the
 * time it is asked from. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "offcpu.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	struct offcpu *o = offcpu_new();
	if (!o)
		return 0;
	size_t n = size - 1, cut = n * data[0] / 256;
	offcpu_feed(o, data + 1, cut);
	offcpu_feed(o, data + 1 + cut, n - cut);
	/* every (pid, tid) the input holds where a switch record's would be */
	for (size_t at = 1; at + 24 <= size; at += 8) {
		uint32_t id[2];
		memcpy(id, data + at + 8, sizeof id);
		uint64_t prev = 0;
		for (uint64_t t = 0; t < 64; t++) {
			uint64_t ns = t * t * 1000003u;
			uint64_t off = offcpu_at(o, id[0], id[1], ns);
			if (off < prev || off > ns)
				__builtin_trap();
			prev = off;
			uint64_t end = offcpu_end(o, id[0], id[1], ns);
			if (end && end < ns)
				__builtin_trap();
		}
	}
	offcpu_close(o);
	return 0;
}
