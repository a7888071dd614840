/* test_normalise.c: the span normaliser (lib/spans/norm.c) through its call
 * API alone, with no wire format anywhere: what its sinks see for balanced
 * spans, an end naming an outer span, an end naming none, a thread's exit,
 * a process restarted under the same pid, lost events and the depth limit,
 * and where spans left open end with the session's oracle. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "norm.h"
#include "tap.h"
#include "u64map.h"

/* Every event the sink saw, as "K name depth flags" words. */
struct log {
	char buf[8192];
	size_t len;
	unsigned begins, ends, unfinished, args;
};

static void sink(void *arg, const struct span_event *ev)
{
	struct log *l = arg;
	static const char kinds[] = "PTBEICX";
	if (ev->kind == SPAN_ARG) {
		l->args++;
		return;
	}
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

/* What value sinks saw: the sum of every END's values, per value, and the
 * last END's. */
struct vlog {
	uint64_t sum[2], last[2];
	unsigned ends, with;
};

static void vsink(void *arg, const struct span_event *ev)
{
	struct vlog *l = arg;
	if (ev->kind != SPAN_END)
		return;
	l->ends++;
	if (!ev->vals)
		return;
	l->with++;
	for (int k = 0; k < 2; k++) {
		l->sum[k] += ev->vals[k];
		l->last[k] = ev->vals[k];
	}
}

/* Values: an END gets end - begin (never below 0); spans the normaliser
 * closes take the thread's latest values; deep stacks keep their rows. */
static void test_values(void)
{
	struct vlog l;
	memset(&l, 0, sizeof l);
	struct normaliser *n = norm_new();
	ok(norm_set_values(n, 2) == 0, "values are set before any thread");
	ok(norm_set_values(n, 99) < 0, "not more than SPANMETRIC_MAX");
	norm_add_sink(n, (struct span_sink){vsink, &l});
	struct norm_proc *p = norm_process_start(n, 1, 0, 1, 1);
	struct norm_thread *t = norm_thread(n, p, 2, 1);
	ok(norm_set_values(n, 3) < 0, "and not once a thread exists");
	uint64_t a[2] = {100, 5}, b[2] = {130, 9}, c[2] = {160, 20}, d[2] = {150, 30};
	norm_begin(n, t, 10, 1, a);
	norm_begin(n, t, 20, 2, b);
	norm_end(n, t, 30, 2, c);
	is_int(l.last[0], 30, "an end gets its values minus its begin's");
	is_int(l.last[1], 11, "each of them");
	norm_end(n, t, 40, 1, d);
	is_int(l.last[0], 50, "the outer span's difference");
	is_int(l.last[1], 25, "spans its inner one");
	norm_begin(n, t, 50, 1, c);
	norm_end(n, t, 60, 1, a);
	is_int(l.last[0], 0, "a value that went down counts 0, not a wrap");
	/* an end naming the outer span closes the inner one with its values */
	memset(&l, 0, sizeof l);
	norm_begin(n, t, 70, 1, a);
	norm_begin(n, t, 80, 2, b);
	norm_end(n, t, 90, 1, c);
	is_int(l.ends, 2, "the inner span closes first");
	is_int(l.sum[0], 30 + 60, "inner (160 - 130) and outer (160 - 100) take the end's values");
	/* NULL values: unchanged since the thread's last event */
	memset(&l, 0, sizeof l);
	norm_begin(n, t, 100, 1, NULL);
	norm_end(n, t, 110, 1, NULL);
	is_int(l.with, 1, "NULL values still give an END values");
	is_int(l.last[0], 0, "no change: 0");
	/* deep: rows survive the stack's growth */
	memset(&l, 0, sizeof l);
	for (uint64_t i = 0; i < 200; i++) {
		uint64_t v[2] = {1000 + i, 7 * i};
		norm_begin(n, t, 200 + i, 1, v);
	}
	for (uint64_t i = 200; i-- > 0;) {
		uint64_t v[2] = {2000 + i, 9 * i};
		norm_end(n, t, 1000 - i, 1, v);
	}
	is_int(l.ends, 200, "200 nested spans end");
	/* span i: begin 1000 + i, end 2000 + i: 1000 each */
	is_int(l.sum[0], 200 * 1000, "each with its own begin row, across the stack's growth");
	/* span i: 9i - 7i = 2i, summed over 0..199 */
	is_int(l.sum[1], 2 * 199 * 200 / 2, "every value of it");
	/* a thread's exit closes spans with its latest values */
	memset(&l, 0, sizeof l);
	norm_begin(n, t, 2000, 1, a);
	norm_begin(n, t, 2001, 2, b);
	norm_thread_exit(n, t, 2002);
	is_int(l.ends, 2, "an exit closes the open spans");
	is_int(l.sum[0], 30, "with the latest values: 0 for the inner, 30 for the outer");
	norm_free(n);
}

/* The oracle: thread 2 ended at 900 (thread 3: unknown); the first value
 * at ns is ns / 2, the second is left alone. */
static uint64_t o_end(void *ctx, uint32_t pid, uint32_t tid, uint64_t after)
{
	(void)ctx;
	(void)pid;
	return tid == 2 && after <= 900 ? 900 : 0;
}

static void o_values(void *ctx, uint32_t pid, uint32_t tid, uint64_t ns, uint64_t *v)
{
	(void)ctx;
	(void)pid;
	(void)tid;
	v[0] = ns / 2;
}

/* What the oracle sink saw: "K ts v0" of ENDs and PROCESS_ENDs. */
static void osink(void *arg, const struct span_event *ev)
{
	struct log *l = arg;
	if (ev->kind == SPAN_END && l->len < sizeof l->buf - 64)
		l->len += (size_t)snprintf(l->buf + l->len, sizeof l->buf - l->len, "E%llu:%llu%s ",
					   (unsigned long long)ev->ts,
					   (unsigned long long)(ev->vals ? ev->vals[0] : 99999),
					   ev->flags & SPAN_F_UNFINISHED ? "u" : "");
	if (ev->kind == SPAN_PROCESS_END && l->len < sizeof l->buf - 64)
		l->len += (size_t)snprintf(l->buf + l->len, sizeof l->buf - l->len, "X%llu ",
					   (unsigned long long)ev->ts);
}

/* Spans left open end where the oracle says their thread ended, when their
 * process ends without a time; their values are taken where they end. */
static void test_oracle(void)
{
	struct log l;
	memset(&l, 0, sizeof l);
	struct normaliser *n = norm_new();
	norm_set_values(n, 2);
	norm_set_oracle(n, &(struct norm_oracle){o_end, o_values, NULL});
	norm_add_sink(n, (struct span_sink){osink, &l});
	uint64_t v[2] = {10, 10};
	struct norm_proc *p = norm_process_start(n, 1, 0, 1, 100);
	struct norm_thread *t = norm_thread(n, p, 2, 100);
	struct norm_thread *u = norm_thread(n, p, 3, 100);
	norm_begin(n, t, 100, 1, v);
	norm_begin(n, u, 100, 1, v);
	norm_instant(n, u, 300, 2);
	norm_process_end(n, p, 0, 9);
	is_str(l.buf, "E300:140u E900:440u X900 ",
	       "no time given: the oracle's end, else the last event; values taken then");
	l.len = 0;
	p = norm_process_start(n, 1, 0, 1, 1000);
	t = norm_thread(n, p, 2, 1000);
	norm_begin(n, t, 1000, 1, v);
	norm_thread_exit(n, t, 1200);
	t = norm_thread(n, p, 2, 1300);
	norm_begin(n, t, 1300, 1, v);
	norm_lost(n, t);
	norm_begin(n, t, 1400, 1, v);
	norm_process_end(n, p, 1500, 0);
	is_str(l.buf, "E1200:590u E1300:0u E1500:740u X1500 ",
	       "a thread's exit and a process's end at their times, not the oracle's; "
	       "lost events at the last one, with its values");
	l.len = 0;
	p = norm_process_start(n, 1, 0, 1, 2000);
	t = norm_thread(n, p, 2, 2000);
	norm_begin(n, t, 2000, 1, v);
	p->exited = 2100; /* a source said so, another's events may still come */
	norm_process_end(n, p, 0, 0);
	is_str(l.buf, "E2100:1040u X2100 ", "where a source said it exited, before the oracle");
	norm_free(n);
}

/* Sinks have no cap: each of many gets every event, in the order added
 * (the fifth was dropped silently when they were four at most). */
static void test_many_sinks(void)
{
	struct log ls[9];
	struct normaliser *n = norm_new();
	memset(ls, 0, sizeof ls);
	for (int i = 0; i < 9; i++)
		is_int(norm_add_sink(n, (struct span_sink){sink, &ls[i]}), 0, "a sink is added");
	is_int(norm_add_sink(n, (struct span_sink){NULL, NULL}), -EINVAL,
	       "a sink needs a function");
	struct norm_proc *p = norm_process_start(n, 20, 1, 99, 100);
	struct norm_thread *t = norm_thread(n, p, 21, 100);
	norm_begin(n, t, 110, 1, NULL);
	norm_end(n, t, 120, 1, NULL);
	for (int i = 0; i < 9; i++)
		is_str(ls[i].buf, "P99:0 T0:0 B1:0 E1:0 ", "every sink sees every event");
	norm_free(n);
}

/* Async spans open by the thousand, ended two at a time with one begun in
 * between: the map of open ids churns past its growths.  It used to forget
 * its count at each growth, went below zero on deletes and then doubled at
 * every insert until its size wrapped (a crash). */
static void test_async_churn(void)
{
	struct u64map m = {0};
	for (uint64_t k = 1; k <= 5000; k++)
		u64map_put(&m, k, k);
	is_int(m.n, 5000, "a map counts what it holds across its growths");
	for (uint64_t k = 1; k <= 3000; k++)
		u64map_del(&m, k);
	is_int(m.n, 2000, "and what deletes leave");
	uint32_t cap = m.cap;
	for (uint64_t k = 1; k <= 1000; k++) {
		u64map_del(&m, 3000 + k);
		u64map_put(&m, 10000 + k, k);
	}
	ok(m.cap == cap && m.n == 2000, "deletes and inserts in turn do not grow it");
	u64map_release(&m);

	struct normaliser *n = norm_new();
	struct norm_proc *p = norm_process_start(n, 10, 1, 99, 100);
	struct norm_thread *t = norm_thread(n, p, 10, 100);
	uint64_t ts = 200;
	for (uint64_t id = 1; id <= 5000; id++)
		norm_async(n, t, ts++, 0, id, 1);
	for (uint64_t k = 1; k <= 1000; k++) {
		norm_async(n, t, ts++, 3, 2 * k, 0);
		norm_async(n, t, ts++, 3, 2 * k - 1, 0);
		norm_async(n, t, ts++, 0, 100000 + k, 1);
	}
	is_int(norm_stats(n)->async, 6000, "async spans churning past the map's growths");
	is_int(norm_stats(n)->async_bad, 0, "every end found its begin");
	norm_free(n);
}

/* Async spans beyond NORM_MAX_ASYNC open are refused (over the limit);
 * their enters, exits and ends are not unmatched too. */
static void test_async_limit(void)
{
	struct normaliser *n = norm_new();
	struct norm_proc *p = norm_process_start(n, 10, 1, 99, 100);
	struct norm_thread *t = norm_thread(n, p, 10, 100);
	uint64_t ts = 200, many = NORM_MAX_ASYNC + 100;
	for (uint64_t id = 1; id <= many; id++)
		norm_async(n, t, ts++, 0, id, 1);
	norm_async(n, t, ts++, 1, many, 0);
	norm_async(n, t, ts++, 2, many, 0);
	for (uint64_t id = 1; id <= many; id++)
		norm_async(n, t, ts++, 3, id, 0);
	is_int(norm_stats(n)->over_limit, 100, "async spans beyond the limit are refused");
	is_int(norm_stats(n)->async, NORM_MAX_ASYNC, "the others kept");
	is_int(norm_stats(n)->async_bad, 0,
	       "the refused ones' enter, exit and ends are not unmatched");
	norm_async(n, t, ts++, 3, many, 0);
	is_int(norm_stats(n)->async_bad, 1, "a second end of one is");
	norm_free(n);
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
	test_many_sinks();
	test_async_churn();
	test_async_limit();
	struct log l;
	struct normaliser *n = fresh(&l);
	struct norm_proc *p = norm_process_start(n, 10, 1, 99, 100);
	ok(p != NULL, "a process starts");
	struct norm_thread *t = norm_thread(n, p, 11, 100);
	ok(t != NULL, "a thread starts");
	ok(norm_thread_find(n, 10, 11) == t, "and is found by pid and tid");
	norm_begin(n, t, 110, 1, NULL);
	norm_begin(n, t, 120, 2, NULL);
	norm_instant(n, t, 125, 3);
	norm_end(n, t, 130, 2, NULL);
	norm_end(n, t, 140, 1, NULL);
	is_str(l.buf, "P99:0 T0:0 B1:0 B2:1 I3:2 E2:1 E1:0 ", "balanced spans pass as they are");

	l.len = 0;
	l.buf[0] = 0;
	norm_begin(n, t, 200, 1, NULL);
	norm_begin(n, t, 210, 2, NULL);
	norm_begin(n, t, 220, 3, NULL);
	norm_end(n, t, 230, 1, NULL); /* names the outer span */
	is_str(l.buf, "B1:0 B2:1 B3:2 E3:2u E2:1u E1:0 ",
	       "an end of an outer span closes the inner ones first, unfinished");
	norm_end(n, t, 240, 7, NULL);
	is_int(norm_stats(n)->unmatched, 1, "an end naming no open span is counted");
	is_int(norm_stats(n)->unfinished, 2, "and the closed inner ones too");

	l.len = 0;
	l.buf[0] = 0;
	norm_begin(n, t, 300, 4, NULL);
	norm_end(n, t, 290, 4, NULL); /* before its begin */
	ok(strstr(l.buf, "!ts") == NULL, "an end is never before its begin");

	norm_begin(n, t, 400, 5, NULL);
	norm_lost(n, t);
	ok(strstr(l.buf, "E5:0u") != NULL, "lost events close the open spans at the last ts");

	/* a drop the thread tells: 2 of its 3 spans stayed open, and it began
	 * one (8) among the dropped events */
	l.len = 0;
	l.buf[0] = 0;
	norm_begin(n, t, 410, 1, NULL);
	norm_begin(n, t, 420, 2, NULL);
	norm_begin(n, t, 430, 3, NULL);
	norm_resync(n, t, 2, 1, 0);
	norm_begin(n, t, 440, 8, NULL);
	norm_begin(n, t, 450, 9, NULL);
	norm_end(n, t, 460, 9, NULL);
	norm_end(n, t, 470, 8, NULL);
	norm_end(n, t, 480, 2, NULL);
	norm_end(n, t, 490, 1, NULL);
	is_str(l.buf, "B1:0 B2:1 B3:2 E3:2u B8:2 B9:3 E9:3 E8:2u E2:1 E1:0 ",
	       "a told drop closes only the spans above those that stayed open, and marks "
	       "the ones it re-opens");

	/* a drop whose tale re-opens one span (8) and says 2 more of unknown
	 * names are open above it: their ends make no span, and nothing
	 * above or below them is closed by those ends */
	l.len = 0;
	l.buf[0] = 0;
	norm_begin(n, t, 410, 1, NULL);
	norm_resync(n, t, 1, 1, 0);
	norm_begin(n, t, 420, 8, NULL);
	norm_resync(n, t, UINT32_MAX, 0, 2);
	norm_begin(n, t, 430, 9, NULL);
	norm_end(n, t, 440, 9, NULL);
	norm_end(n, t, 450, 8, NULL); /* an unnamed one's end: the same name here */
	norm_end(n, t, 460, 5, NULL);
	norm_end(n, t, 470, 8, NULL);
	norm_end(n, t, 480, 1, NULL);
	is_str(l.buf, "B1:0 B8:1 B9:2 E9:2 E8:1u E1:0 ",
	       "the ends of spans told unnamed make no span and close none");
	is_int(norm_stats(n)->unmatched, 1, "and count nothing unmatched");

	/* the next drop's `low` counts them: 1 + 1 + 2 open, low 3 keeps one
	 * of the two unnamed and closes what was above them */
	l.len = 0;
	l.buf[0] = 0;
	norm_begin(n, t, 500, 1, NULL);
	norm_resync(n, t, UINT32_MAX, 0, 2);
	norm_begin(n, t, 510, 3, NULL);
	norm_resync(n, t, 2, 0, 0);
	norm_end(n, t, 520, 1, NULL); /* the unnamed one left */
	norm_end(n, t, 530, 1, NULL);
	is_str(l.buf, "B1:0 B3:1 E3:1u E1:0 ", "a later drop's low counts the unnamed spans");

	/* two groups at one depth add up; a group above keeps its own; a
	 * later low inside the lower group ends the one above */
	l.len = 0;
	l.buf[0] = 0;
	norm_begin(n, t, 600, 1, NULL);
	norm_resync(n, t, UINT32_MAX, 0, 3);
	norm_resync(n, t, 3, 0, 0);	     /* 1 named + 2 of the 3 stay */
	norm_resync(n, t, UINT32_MAX, 0, 4); /* 4 more at the same depth: 6 */
	norm_begin(n, t, 610, 2, NULL);
	norm_resync(n, t, UINT32_MAX, 0, 1); /* above 2 */
	norm_end(n, t, 620, 9, NULL);	     /* the group above 2 */
	norm_end(n, t, 630, 2, NULL);
	for (int i = 0; i < 6; i++)
		norm_end(n, t, 640, 9, NULL);
	norm_end(n, t, 650, 1, NULL);
	is_str(l.buf, "B1:0 B2:1 E2:1 E1:0 ",
	       "groups of unnamed spans at one depth add up, above stay apart");
	is_int(norm_stats(n)->unmatched, 1, "none of their ends is unmatched");
	l.len = 0;
	l.buf[0] = 0;
	norm_begin(n, t, 700, 1, NULL);
	norm_resync(n, t, UINT32_MAX, 0, 5);
	norm_begin(n, t, 710, 2, NULL);
	norm_resync(n, t, UINT32_MAX, 0, 2);
	norm_resync(n, t, 4, 0, 0); /* 1 + 3 of the lower 5: 2 and the upper group end */
	norm_end(n, t, 720, 9, NULL);
	norm_end(n, t, 720, 9, NULL);
	norm_end(n, t, 720, 9, NULL);
	norm_end(n, t, 730, 1, NULL);
	is_str(l.buf, "B1:0 B2:1 E2:1u E1:0 ", "a low inside a lower group ends what is above it");

	/* ends told without names (a longjmp over spans the source did not
	 * follow): over the limit first, then unnamed, then named ones */
	l.len = 0;
	l.buf[0] = 0;
	norm_begin(n, t, 800, 1, NULL);
	norm_begin(n, t, 810, 2, NULL);
	norm_resync(n, t, UINT32_MAX, 0, 2);
	norm_begin(n, t, 820, 3, NULL);
	norm_pop(n, t, 830, 4); /* 3, the 2 unnamed, 2 */
	norm_pop(n, t, 840, 0);
	norm_end(n, t, 850, 1, NULL);
	norm_pop(n, t, 860, 1000000000); /* nothing left: stops */
	is_str(l.buf, "B1:0 B2:1 B3:2 E3:2 E2:1 E1:0 ",
	       "ends without names close the innermost spans, unnamed ones among them");
	is_int(norm_stats(n)->unmatched, 1, "and never count unmatched");
	/* a hostile source's counts: whole groups at once */
	l.len = 0;
	l.buf[0] = 0;
	norm_begin(n, t, 900, 1, NULL);
	for (int i = 0; i < 3; i++) {
		norm_resync(n, t, UINT32_MAX, 0, UINT32_MAX);
		norm_pop(n, t, 910, UINT32_MAX);
	}
	norm_pop(n, t, 920, UINT64_MAX);
	is_str(l.buf, "B1:0 E1:0 ", "counts of 2^32 are taken whole, never one by one");

	/* a longjmp's "end what is open above depth d" (RING_CTL_POPTO) */
	l.len = 0;
	l.buf[0] = 0;
	norm_begin(n, t, 930, 1, NULL);
	norm_begin(n, t, 931, 2, NULL);
	norm_resync(n, t, UINT32_MAX, 0, 2);
	norm_begin(n, t, 932, 3, NULL);
	norm_popto(n, t, 940, 1); /* 3, the 2 unnamed, 2: one left */
	norm_popto(n, t, 950, 1); /* nothing above 1 */
	norm_popto(n, t, 960, 5); /* deeper than what is open: nothing */
	is_str(l.buf, "B1:0 B2:1 B3:2 E3:2 E2:1 ", "a pop to a depth counts unnamed spans");
	norm_popto(n, t, 970, 0);
	is_str(l.buf, "B1:0 B2:1 B3:2 E3:2 E2:1 E1:0 ", "and a pop to 0 ends them all");

	l.len = 0;
	l.buf[0] = 0;
	norm_begin(n, t, 500, 6, NULL);
	norm_thread_exit(n, t, 510);
	is_str(l.buf, "B6:0 E6:0u ", "a thread's exit closes what it left open");
	ok(norm_thread_find(n, 10, 11) == NULL, "and forgets the thread");

	l.len = 0;
	l.buf[0] = 0;
	t = norm_thread(n, p, 12, 600);
	norm_begin(n, t, 610, 1, NULL);
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
		norm_begin(n, t, 10 + i, 1 + i % 3, NULL);
	/* an argument of a refused span is refused with it, not given to
	 * the deepest span passed */
	norm_arg(n, t, 50000, 1, SPAN_ARG_U64, 5);
	is_int(l.args, 0, "an argument beyond the depth limit is refused");
	for (unsigned i = NORM_MAX_DEPTH + 100; i-- > 0;) {
		norm_end(n, t, 100000 - i, 1 + i % 3, NULL);
		if (i == NORM_MAX_DEPTH)
			norm_arg(n, t, 100000 - i, 1, SPAN_ARG_U64, 6);
	}
	is_int(l.args, 1, "one at the limit passes");
	is_int(norm_stats(n)->over_limit, 101,
	       "begins beyond the depth limit are refused, counted, and the argument");
	is_int(l.begins, NORM_MAX_DEPTH, "the others pass");
	is_int(l.ends, NORM_MAX_DEPTH, "every one passed gets its end");
	is_int(norm_stats(n)->unmatched + l.unfinished, 0, "and the refused ones' ends match them");
	norm_free(n);

	test_values();
	test_oracle();
	return tap_done();
}
