/* test_normalise.c: the span normaliser (lib/normalise.c) through its call
 * API alone, with no wire format anywhere: what its sinks see for balanced
 * spans, an end naming an outer span, an end naming none, a thread's exit,
 * a process restarted under the same pid, lost events and the depth limit. */
#include <stdlib.h>
#include <string.h>

#include "normalise.h"
#include "tap.h"

/* Every event the sink saw, as "K name depth flags" words. */
struct log {
	char buf[8192];
	size_t len;
	unsigned begins, ends, unfinished;
};

static void sink(void *arg, const struct span_event *ev)
{
	struct log *l = arg;
	static const char kinds[] = "PTBEICX";
	if (ev->kind == SPAN_BEGIN)
		l->begins++;
	if (ev->kind == SPAN_END) {
		l->ends++;
		l->unfinished += ev->flags & SPAN_F_UNFINISHED;
		if (ev->ts < ev->begin_ts)
			l->len += (size_t)snprintf(l->buf + l->len, sizeof l->buf - l->len, "!ts ");
	}
	if (l->len < sizeof l->buf - 64)
		l->len += (size_t)snprintf(l->buf + l->len, sizeof l->buf - l->len, "%c%u:%u%s ",
					   kinds[ev->kind], ev->name, ev->depth,
					   ev->flags & SPAN_F_UNFINISHED ? "u" : "");
}

static struct normaliser *fresh(struct log *l)
{
	memset(l, 0, sizeof *l);
	struct normaliser *n = norm_new();
	norm_add_sink(n, (struct span_sink){sink, l});
	return n;
}

int main(void)
{
	struct log l;
	struct normaliser *n = fresh(&l);
	struct norm_proc *p = norm_process_start(n, 10, 1, 99, 100);
	ok(p != NULL, "a process starts");
	struct norm_thread *t = norm_thread(n, p, 11, 100);
	ok(t != NULL, "a thread starts");
	ok(norm_thread_find(n, 10, 11) == t, "and is found by pid and tid");
	norm_begin(n, t, 110, 1);
	norm_begin(n, t, 120, 2);
	norm_instant(n, t, 125, 3);
	norm_end(n, t, 130, 2);
	norm_end(n, t, 140, 1);
	is_str(l.buf, "P99:0 T0:0 B1:0 B2:1 I3:2 E2:1 E1:0 ", "balanced spans pass as they are");

	l.len = 0;
	l.buf[0] = 0;
	norm_begin(n, t, 200, 1);
	norm_begin(n, t, 210, 2);
	norm_begin(n, t, 220, 3);
	norm_end(n, t, 230, 1); /* names the outer span */
	is_str(l.buf, "B1:0 B2:1 B3:2 E3:2u E2:1u E1:0 ",
	       "an end of an outer span closes the inner ones first, unfinished");
	norm_end(n, t, 240, 7);
	is_int(norm_stats(n)->unmatched, 1, "an end naming no open span is counted");
	is_int(norm_stats(n)->unfinished, 2, "and the closed inner ones too");

	l.len = 0;
	l.buf[0] = 0;
	norm_begin(n, t, 300, 4);
	norm_end(n, t, 290, 4); /* before its begin */
	ok(strstr(l.buf, "!ts") == NULL, "an end is never before its begin");

	norm_begin(n, t, 400, 5);
	norm_lost(n, t);
	ok(strstr(l.buf, "E5:0u") != NULL, "lost events close the open spans at the last ts");

	l.len = 0;
	l.buf[0] = 0;
	norm_begin(n, t, 500, 6);
	norm_thread_exit(n, t, 510);
	is_str(l.buf, "B6:0 E6:0u ", "a thread's exit closes what it left open");
	ok(norm_thread_find(n, 10, 11) == NULL, "and forgets the thread");

	l.len = 0;
	l.buf[0] = 0;
	t = norm_thread(n, p, 12, 600);
	norm_begin(n, t, 610, 1);
	p = norm_process_start(n, 10, 1, 98, 700); /* exec: the same pid again */
	is_str(l.buf, "T0:0 B1:0 E1:0u X99:0 P98:0 ",
	       "a process restarted under its pid ends the old one first");
	norm_process_end(n, p, 800, 9);
	ok(norm_process(n, 10) == NULL, "a process's end forgets it");
	norm_free(n);

	n = fresh(&l);
	p = norm_process_start(n, 20, 1, 1, 1);
	t = norm_thread(n, p, 21, 1);
	for (unsigned i = 0; i < NORM_MAX_DEPTH + 100; i++)
		norm_begin(n, t, 10 + i, 1 + i % 3);
	for (unsigned i = NORM_MAX_DEPTH + 100; i-- > 0;)
		norm_end(n, t, 100000 - i, 1 + i % 3);
	is_int(norm_stats(n)->over_limit, 100,
	       "begins beyond the depth limit are refused, counted");
	is_int(l.begins, NORM_MAX_DEPTH, "the others pass");
	is_int(l.ends, NORM_MAX_DEPTH, "every one passed gets its end");
	is_int(norm_stats(n)->unmatched + l.unfinished, 0, "and the refused ones' ends match them");
	norm_free(n);
	return tap_done();
}
