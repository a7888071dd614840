/* live.c: a session's facts handed to analysis (see live.h). */
#include "config.h"

#include "live.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "errline.h"
#include "recfile.h"

static int live_init_an(void *ctx, bool spans, unsigned nval)
{
	struct live *l = ctx;
	return analysis_init(&l->an, l->writers, l->nwriters, spans, nval);
}

static int live_sinks(void *ctx, int (*add)(void *actx, struct span_sink sink), void *actx)
{
	return analysis_sinks(&((struct live *)ctx)->an, add, actx);
}

static bool live_streams(void *ctx)
{
	return analysis_streams(&((struct live *)ctx)->an);
}

static int live_start(void *ctx, const struct run_head *h)
{
	return analysis_start(&((struct live *)ctx)->an, h);
}

static void live_run(void *ctx, unsigned run)
{
	analysis_run(&((struct live *)ctx)->an, run);
}

static int live_interval(void *ctx, const struct interval_sample *s)
{
	return analysis_interval(&((struct live *)ctx)->an, s);
}

static int live_import(void *ctx, const struct span_import *im)
{
	return analysis_import(&((struct live *)ctx)->an, im);
}

static const struct span_trees *live_tree(void *ctx)
{
	return analysis_tree(&((struct live *)ctx)->an);
}

static int live_finish(void *ctx, const struct run_end *e, const char **failed, int *failed_err)
{
	struct live *l = ctx;
	const struct writer *w = NULL;
	if (e->dstats) {
		l->dstats = *e->dstats;
		l->have_dstats = true;
	}
	int r = analysis_finish(&l->an, e, NULL, &w);
	*failed = w ? w->ops->name : NULL;
	*failed_err = w ? w->err : 0;
	return r;
}

/* SIGUSR2 with --keep-last: every record writer keeping a window writes
 * it now, and says so (or why not); the run goes on either way. */
static void live_snapshot(void *ctx)
{
	struct live *l = ctx;
	for (size_t i = 0; i < l->nwriters; i++) {
		struct writer *w = l->writers[i];
		struct record_window win;
		if (!recwrite_window(w, &win))
			continue;
		char *cause = NULL;
		if (recwrite_snapshot(w, &cause) < 0) {
			errline(cause ? cause : "cannot write a snapshot");
			free(cause);
			continue;
		}
		struct stat st;
		if (l->snapped)
			l->snapped(l->snapped_ctx, w, &win);
		else if (stat(w->opts.path, &st) == 0)
			fprintf(stderr,
				"[ spanstat: snapshot of %.3f MB to '%s'; %" PRIu64
				" spans overwritten so far ]\n",
				(double)st.st_size / 1e6, w->opts.path, win.spans);
	}
}

static bool live_capture_on(void *ctx)
{
	return analysis_capture_on(&((struct live *)ctx)->an);
}

static void live_capture(void *ctx, const void *buf, size_t len)
{
	analysis_capture(&((struct live *)ctx)->an, buf, len);
}

static bool live_capture_only(void *ctx)
{
	return analysis_capture_only(&((struct live *)ctx)->an);
}

static void live_release(void *ctx)
{
	analysis_release(&((struct live *)ctx)->an);
}

void live_init(struct live *l, struct writer *const *writers, size_t nwriters)
{
	*l = (struct live){.writers = writers,
			   .nwriters = nwriters,
			   .consumer = {.ctx = l,
					.init = live_init_an,
					.sinks = live_sinks,
					.streams = live_streams,
					.start = live_start,
					.run = live_run,
					.interval = live_interval,
					.import = live_import,
					.tree = live_tree,
					.finish = live_finish,
					.snapshot = live_snapshot,
					.release = live_release,
					.capture_on = live_capture_on,
					.capture = live_capture,
					.capture_only = live_capture_only}};
}
