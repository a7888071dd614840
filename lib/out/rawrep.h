/* rawrep.h: the replay of a raw capture (rawcap.h): a fresh decoder,
 * off-CPU table and line source fed the captured items in order, whose
 * sinks get the span events the live decoder's sinks got. */
#ifndef SPANSTAT_RAWREP_H
#define SPANSTAT_RAWREP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rawcap.h"
#include "spanev.h"
#include "spanstats.h"

struct rawrep;
struct rawrep *rawrep_new(void);
void rawrep_free(struct rawrep *r);
/* The values per span the sinks take (those of the file's head): a setup
 * that says otherwise does not parse (before the first feed; without it,
 * any). */
void rawrep_expect_values(struct rawrep *r, unsigned nval);
/* The capture's strings, in their id order (1 to n - 1): fn gives id's
 * bytes (NULL: lost); they are interned first so that the replay's ids
 * are the capture's whatever items it loses (before the first feed). */
void rawrep_set_strings(struct rawrep *r, const char *(*fn)(void *ctx, uint32_t id, size_t *len),
			void *ctx, uint32_t n);
/* The record file's version: 3 wrote its states (RAW_STATE) without the
 * threads' names (before the first feed; without it, the latest). */
void rawrep_set_version(struct rawrep *r, uint32_t version);
/* What the blocks' numbers (RAW_BLOCK) told: blocks that never came,
 * came twice, or came after later ones (these two left out). */
struct rawrep_blocks {
	uint64_t missing, repeated, late;
};
const struct rawrep_blocks *rawrep_blocks(const struct rawrep *r);
/* Where the replay's span events go, in order (before the first feed). */
int rawrep_add_sink(struct rawrep *r, struct span_sink sink);
/* One block of items, whole.  0; -ENOMEM; -EINVAL when it does not parse
 * (what came before in it was replayed, the rest is left out). */
int rawrep_feed(struct rawrep *r, const void *buf, size_t len);
/* The end: a capture that lost its RAW_FINISH (a damaged or cut file)
 * ends here, its open spans closed, late events unknown. */
void rawrep_end(struct rawrep *r);
/* The decoder's statistics and cost per event (decoder.h), as the live
 * decoder's were; NULL before any setup. */
const struct decode_stats *rawrep_stats(const struct rawrep *r);
double rawrep_event_cost_ns(const struct rawrep *r);
/* Answers the replay looked for and did not find where they should be
 * (damage): they were taken as unknown. */
uint64_t rawrep_missing(const struct rawrep *r);
/* A capture made without a live tree (RAW_CHECK): fn(ctx, r) is called
 * where the live run would have checked the off-CPU split (offcpu_check);
 * it gives r the damage found, with rawrep_damage.  Without fn, none. */
void rawrep_set_check(struct rawrep *r, void (*fn)(void *ctx, struct rawrep *r), void *ctx);
/* offcpu_check of st (a report's tree: its threads of pid_base, their
 * times moved by ts_shift) against r's off-CPU table: *v gets n quads
 * (pid, tid, ts, excess), to free.  0 or -ENOMEM. */
struct span_trees;
int rawrep_offcpu_check(struct rawrep *r, const struct span_trees *st, uint32_t pid_base,
			int64_t ts_shift, uint64_t **v, size_t *n);
/* The damage of n quads, into r's span events (SPAN_DAMAGE). */
void rawrep_damage(struct rawrep *r, const uint64_t *v, size_t n);
/* Whether a process began or ended spans without the values the session
 * asked for (its environment lost SPANSTAT_VALUES): the target's values
 * are then unknown, as the live session marks them. */
bool rawrep_unvalued(const struct rawrep *r);

#endif
