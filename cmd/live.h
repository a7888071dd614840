/* live.h: a live run wired together: the session's facts (lib/run, the
 * acquisition) handed to analysis and the writers (lib/out), as uftrace's
 * live.c wires record to replay.  The two layers never include each other;
 * this is the only place that knows both. */
#ifndef SPANSTAT_LIVE_H
#define SPANSTAT_LIVE_H

#include <stddef.h>

#include "analysis.h"
#include "spanstats.h"
#include "recfile.h"
#include "session.h"

struct live {
	struct analysis an;
	struct writer *const *writers; /* the caller's */
	size_t nwriters;
	struct session_consumer consumer; /* what the session is handed */
	/* after a snapshot of record writer w was written (SIGUSR2 with
	 * --keep-last): the caller's, or NULL to say where it went */
	void (*snapped)(void *ctx, const struct writer *w, const struct record_window *win);
	void *snapped_ctx;
	/* the live decoder's counts at the end (have_dstats), for record's
	 * closing line: what the target dropped is counted from the records'
	 * headers even when the events are only captured */
	struct decode_stats dstats;
	bool have_dstats;
};

/* Sets l up to take a session's facts for the writers; the session gets
 * &l->consumer. */
void live_init(struct live *l, struct writer *const *writers, size_t nwriters);

#endif
