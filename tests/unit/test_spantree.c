/* test_spantree.c: aggregation (lib/spans/spantree.c): exact count/total/self per
 * stack path from known event streams, per thread and merged, unfinished
 * marking, names, extents, bounded memory, and a decoder-fed run. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "decoder.h"
#include "encode.h"
#include "spantree.h"
#include "tap.h"

enum { A = 1, B_ = 2, C = 3, D = 4 };

static struct span_event ev(enum span_kind k, uint32_t pid, uint32_t tid, uint64_t ts,
			    uint32_t name)
{
	struct span_event e = {.kind = k, .pid = pid, .tid = tid, .ts = ts, .name = name};
	return e;
}

/* Feeds a span [b, e] as a begin now and an end later: callers nest them. */
static void begin(struct span_trees *st, uint32_t tid, uint32_t depth, uint32_t name, uint64_t ts)
{
	struct span_event e = ev(SPAN_BEGIN, 1, tid, ts, name);
	e.depth = depth;
	span_trees_event(st, &e);
}

static void end(struct span_trees *st, uint32_t tid, uint32_t depth, uint32_t name, uint64_t b,
		uint64_t ts, uint32_t flags)
{
	struct span_event e = ev(SPAN_END, 1, tid, ts, name);
	e.depth = depth;
	e.begin_ts = b;
	e.flags = flags;
	span_trees_event(st, &e);
}

/* The node at a path of name ids (0-terminated), or NULL. */
static const struct span_node *node_at(const struct span_tree *t, const uint32_t *path)
{
	uint32_t i = 0;
	for (; *path; path++) {
		uint32_t c = t->node[i].first_child;
		while (c && t->node[c].name != *path)
			c = t->node[c].next_sibling;
		if (!c)
			return NULL;
		i = c;
	}
	return &t->node[i];
}

static void check(const struct span_tree *t, const uint32_t *path, const char *what, uint64_t count,
		  uint64_t total, uint64_t self, uint64_t unfinished)
{
	const struct span_node *n = node_at(t, path);
	ok(n != NULL, "%s: path exists", what);
	if (!n)
		return;
	is_int(n->count, count, "%s: count", what);
	is_int(n->total_ns, total, "%s: total", what);
	is_int(span_node_self(n), self, "%s: self", what);
	is_int(n->unfinished, unfinished, "%s: unfinished", what);
}

/* thread 1: a[100,200]{ b[110,130]{c[115,120]} b[140,160] }  a[300,350]
 * thread 2: a[0,10]{c[2,4]}  d[20,25] (unfinished) */
static void feed_known(struct span_trees *st, uint64_t shift)
{
	uint64_t s = shift;
	begin(st, 1, 0, A, s + 100);
	begin(st, 1, 1, B_, s + 110);
	begin(st, 1, 2, C, s + 115);
	end(st, 1, 2, C, s + 115, s + 120, 0);
	end(st, 1, 1, B_, s + 110, s + 130, 0);
	begin(st, 1, 1, B_, s + 140);
	end(st, 1, 1, B_, s + 140, s + 160, 0);
	end(st, 1, 0, A, s + 100, s + 200, 0);
	begin(st, 1, 0, A, s + 300);
	end(st, 1, 0, A, s + 300, s + 350, 0);

	begin(st, 2, 0, A, s + 0);
	begin(st, 2, 1, C, s + 2);
	end(st, 2, 1, C, s + 2, s + 4, 0);
	end(st, 2, 0, A, s + 0, s + 10, 0);
	begin(st, 2, 0, D, s + 20);
	end(st, 2, 0, D, s + 20, s + 25, SPAN_F_UNFINISHED);
}

static void test_known(void)
{
	struct span_trees st;
	is_int(span_trees_init(&st), 0, "init");
	struct span_event p = ev(SPAN_PROCESS, 1, 0, 1, 7);
	span_trees_event(&st, &p);
	struct span_event th = ev(SPAN_THREAD, 1, 2, 1, 8);
	span_trees_event(&st, &th);
	feed_known(&st, 1000);
	struct span_event in = ev(SPAN_INSTANT, 1, 1, 1500, A);
	span_trees_event(&st, &in);
	struct span_event cn = ev(SPAN_COUNTER, 1, 2, 1400, A);
	span_trees_event(&st, &cn);

	is_int(st.nthread, 2, "two threads");
	const struct span_tree *t1 = st.thread[1], *t2 = st.thread[0];
	is_int(t2->tid, 2, "first tree is the first thread seen");
	is_int(t1->tid, 1, "second tree");
	is_int(t1->n, 4, "thread 1: root + 3 paths");
	check(t1, (uint32_t[]){A, 0}, "t1 a", 2, 150, 110, 0);
	check(t1, (uint32_t[]){A, B_, 0}, "t1 a;b", 2, 40, 35, 0);
	check(t1, (uint32_t[]){A, B_, C, 0}, "t1 a;b;c", 1, 5, 5, 0);
	check(t2, (uint32_t[]){A, C, 0}, "t2 a;c", 1, 2, 2, 0);
	check(t2, (uint32_t[]){D, 0}, "t2 d", 1, 5, 5, 1);
	is_int(t1->process_name, 7, "process name on trees");
	is_int(t2->thread_name, 8, "thread name");
	is_int(t1->thread_name, 0, "unnamed thread");
	is_int(st.instants, 1, "instants");
	is_int(st.counters, 1, "counters");
	is_int(t1->instants, 1, "instants per thread");
	is_int(t2->counters, 1, "counters per thread");
	is_int(st.first_ts, 1000, "first ts");
	is_int(st.last_ts, 1500, "last ts");
	is_int(t1->first_ts, 1100, "thread first ts");
	is_int(t1->last_ts, 1500, "thread last ts");
	is_int(t1->node[0].child_ns, 150, "root's child time is the top-level total");

	struct span_tree m;
	is_int(span_trees_merge(&st, &m), 0, "merge");
	is_int(m.n, 6, "merged: root + a, a;b, a;b;c, a;c, d");
	check(&m, (uint32_t[]){A, 0}, "merged a", 3, 160, 110 + 8, 0);
	check(&m, (uint32_t[]){A, B_, 0}, "merged a;b", 2, 40, 35, 0);
	check(&m, (uint32_t[]){A, B_, C, 0}, "merged a;b;c", 1, 5, 5, 0);
	check(&m, (uint32_t[]){A, C, 0}, "merged a;c", 1, 2, 2, 0);
	check(&m, (uint32_t[]){D, 0}, "merged d", 1, 5, 5, 1);
	is_int(m.instants + m.counters, 2, "merged counts");
	int parents_first = 1;
	for (uint32_t i = 1; i < m.n; i++)
		parents_first &= m.node[i].parent < i;
	ok(parents_first, "merged: parents come before children");
	span_tree_release(&m);

	/* a process renamed by exec renames its trees */
	struct span_event p2 = ev(SPAN_PROCESS, 1, 0, 2000, 9);
	span_trees_event(&st, &p2);
	is_int(st.thread[0]->process_name, 9, "exec renames the process's trees");
	span_trees_release(&st);
}

static void test_bounded(void)
{
	struct span_trees st;
	span_trees_init(&st);
	feed_known(&st, 0);
	uint32_t n1 = st.thread[0]->n, n2 = st.thread[1]->n;
	size_t nodes = st.nodes;
	for (uint64_t k = 1; k <= 100000; k++)
		feed_known(&st, k * 1000);
	is_int(st.thread[0]->n + st.thread[1]->n, n1 + n2, "100,001 repeats: node count constant");
	is_int(st.nodes, nodes, "100,001 repeats: nodes counter constant");
	ok(st.thread[1]->cap <= 16 && st.thread[1]->stack_cap <= 16, "no growth in arrays");
	check(st.thread[0], (uint32_t[]){A, B_, 0}, "repeated a;b", 2 * 100001, 40 * 100001,
	      35 * 100001, 0);
	is_int(st.untracked, 0, "nothing untracked");
	span_trees_release(&st);

	/* many unique paths: a wide and deep tree, exact node count */
	span_trees_init(&st);
	uint64_t ts = 1;
	for (uint32_t w = 1; w <= 3000; w++) {
		begin(&st, 1, 0, w, ts);
		begin(&st, 1, 1, w + 1, ts + 1);
		end(&st, 1, 1, w + 1, ts + 1, ts + 2, 0);
		end(&st, 1, 0, w, ts, ts + 3, 0);
		ts += 4;
	}
	is_int(st.thread[0]->n, 1 + 6000, "6000 unique paths, 6000 nodes");
	check(st.thread[0], (uint32_t[]){1500, 1501, 0}, "deep lookup after rehash", 1, 1, 1, 0);
	check(st.thread[0], (uint32_t[]){1501, 0}, "wide lookup after rehash", 1, 3, 2, 0);
	span_trees_release(&st);
}

static void test_from_decoder(void)
{
	/* a recursion through the decoder: the path grows with depth only */
	struct decoder *d = decoder_new(NULL);
	struct span_trees st;
	span_trees_init(&st);
	decoder_add_sink(d, (struct span_sink){span_trees_event, &st});
	uint8_t buf[WIRE_MAX_RECORD * 4];
	size_t n = enc_hello(buf, sizeof buf, 3, 1, WIRE_CLOCK_MONOTONIC, 5, 5, "rec", 3);
	n += enc_name(buf + n, sizeof buf - n, 3, 0, 1, WIRE_NAME_STRING, 0, 0, "fib", 3);
	n += enc_name(buf + n, sizeof buf - n, 3, 0, 2, WIRE_NAME_STRING, 0, 0, "main", 4);
	decoder_feed(d, buf, n);
	uint64_t rec[WIRE_MAX_RECORD / 8];
	size_t w = ENC_EVENTS_FIRST_WORD;
	rec[w++] = wire_event(WIRE_OP_BEGIN, 2, 0);
	for (int i = 0; i < 10; i++)
		rec[w++] = wire_event(WIRE_OP_BEGIN, 1, 10);
	for (int i = 0; i < 10; i++)
		rec[w++] = wire_event(WIRE_OP_END, 1, 1);
	/* main stays open: closed at the end of the stream, unfinished */
	size_t len = enc_events_close(rec, 3, 3, 100, 0, 0, w - ENC_EVENTS_FIRST_WORD);
	decoder_feed(d, rec, len);
	decoder_finish(d);
	const struct strtab *s = decoder_strings(d);
	const struct span_tree *t = st.thread[0];
	is_int(t->n, 12, "recursion: one node per depth");
	is_str(strtab_get(s, t->process_name), "rec", "decoder: process name");
	const struct span_node *mn = node_at(t, (uint32_t[]){strtab_lookup(s, "main", 4), 0});
	ok(mn && mn->count == 1 && mn->unfinished == 1 && mn->total_ns == 110,
	   "decoder: main closed at the last ts, unfinished");
	uint32_t fib = strtab_lookup(s, "fib", 3);
	uint32_t path[12] = {strtab_lookup(s, "main", 4)};
	for (int i = 1; i <= 10; i++)
		path[i] = fib;
	path[11] = 0;
	const struct span_node *deep = node_at(t, path);
	ok(deep && deep->count == 1 && deep->total_ns == 1, "decoder: innermost fib 1 ns");
	path[2] = 0;
	const struct span_node *top = node_at(t, path);
	/* fib k (1..10) runs from 100 + 10k to 211 - k: 111 - 11k ns */
	ok(top && top->total_ns == 100 && span_node_self(top) == 100 - 89,
	   "decoder: outer fib total and self");
	span_trees_release(&st);
	decoder_free(d);
}

/* Values: nodes sum their spans' values, children's beside; self = total
 * minus children's; merge adds threads; import takes rows. */
static void test_values(void)
{
	struct span_trees st;
	span_trees_init(&st);
	ok(span_trees_set_values(&st, 2) == 0, "values per span are set before any event");
	uint64_t va[2] = {100, 7}, vb[2] = {30, 2};
	for (uint32_t tid = 1; tid <= 2; tid++) {
		begin(&st, tid, 0, A, 10);
		begin(&st, tid, 1, B_, 20);
		struct span_event e = ev(SPAN_END, 1, tid, 30, B_);
		e.depth = 1;
		e.begin_ts = 20;
		e.vals = vb;
		span_trees_event(&st, &e);
		e = ev(SPAN_END, 1, tid, 40, A);
		e.begin_ts = 10;
		e.vals = va;
		span_trees_event(&st, &e);
	}
	const struct span_tree *t = st.thread[0];
	const uint32_t pa[] = {A, 0}, pb[] = {A, B_, 0};
	uint32_t ia = (uint32_t)(node_at(t, pa) - t->node),
		 ib = (uint32_t)(node_at(t, pb) - t->node);
	is_int(span_node_vals(t, ia)[0], 100, "a node sums its spans' values");
	is_int(span_node_vals(t, ia)[2], 30, "and its children's beside");
	is_int(span_node_val_self(t, ia, 0), 70, "self = total - children's");
	is_int(span_node_val_self(t, ia, 1), 5, "for every value");
	is_int(span_node_val_self(t, ib, 1), 2, "a leaf's self is its total");
	struct span_tree m;
	ok(span_trees_merge(&st, &m) == 0, "trees with values merge");
	uint32_t ma = (uint32_t)(node_at(&m, pa) - m.node);
	is_int(span_node_vals(&m, ma)[0], 200, "the merged node sums both threads");
	is_int(span_node_val_self(&m, ma, 0), 140, "and its self");
	span_tree_release(&m);
	/* an imported tree (aggregated by the target) with value rows */
	uint32_t parent[3] = {0, 0, 1}, name[3] = {0, C, D};
	uint64_t count[3] = {0, 1, 2}, total[3] = {0, 50, 20}, unf[3] = {0, 0, 0};
	uint64_t vals[6] = {0, 0, 9, 1, 4, 1};
	struct span_import im = {.pid = 1,
				 .tid = 3,
				 .n = 3,
				 .parent = parent,
				 .name = name,
				 .count = count,
				 .total_ns = total,
				 .unfinished = unf,
				 .vals = vals};
	ok(span_trees_import(&st, &im) == 0, "a tree with value rows imports");
	t = st.thread[2];
	const uint32_t pc[] = {C, 0};
	uint32_t ic = (uint32_t)(node_at(t, pc) - t->node);
	is_int(span_node_vals(t, ic)[0], 9, "its values land on its nodes");
	is_int(span_node_val_self(t, ic, 0), 5, "children's subtracted");
	span_trees_release(&st);
}

static void note(struct span_trees *st, uint32_t tid, uint64_t ts, enum span_damage what,
		 uint64_t ns)
{
	struct span_event e = ev(SPAN_DAMAGE, 1, tid, ts, 0);
	e.depth = what;
	e.value = (int64_t)ns;
	span_trees_event(st, &e);
}

/* --compensate: one event's cost per span, two per span below, and every
 * wait for room told while the span was open, off-CPU part and all. */
static void test_compensate(void)
{
	struct span_trees st;
	span_trees_init(&st);
	span_trees_set_values(&st, 1); /* value 0: off-CPU ns */
	uint64_t va[1] = {700}, vb[1] = {650};
	begin(&st, 1, 0, A, 0);
	note(&st, 1, 50, SPAN_NOTE_WAITED, 30); /* in A alone */
	begin(&st, 1, 1, B_, 100);
	note(&st, 1, 150, SPAN_NOTE_WAITED, 1000); /* in A and B */
	note(&st, 1, 150, SPAN_NOTE_WAITED_OFF, 600);
	struct span_event e = ev(SPAN_END, 1, 1, 2100, B_);
	e.depth = 1;
	e.begin_ts = 100;
	e.vals = vb;
	span_trees_event(&st, &e);
	e = ev(SPAN_END, 1, 1, 2200, A);
	e.begin_ts = 0;
	e.vals = va;
	span_trees_event(&st, &e);
	note(&st, 1, 2300, SPAN_NOTE_WAITED, 77); /* in no span */
	/* thread 2: no waits */
	begin(&st, 2, 0, A, 0);
	end(&st, 2, 0, A, 0, 500, 0);
	const struct span_tree *t = st.thread[0];
	is_int(t->dmg[SPAN_NOTE_WAITED], 1107, "the thread's waits are summed");
	is_int(t->dmg[SPAN_NOTE_WAITED_OFF], 600, "and their off-CPU parts");
	uint64_t removed = span_trees_compensate(&st, 10.0, 0);
	const uint32_t pa[] = {A, 0}, pb[] = {A, B_, 0};
	uint32_t ia = (uint32_t)(node_at(t, pa) - t->node),
		 ib = (uint32_t)(node_at(t, pb) - t->node);
	is_int(t->node[ia].total_ns, 2200 - 30 - 1030, "A loses 3 events and both waits");
	is_int(t->node[ib].total_ns, 2000 - 1010, "B loses its own event and the wait in it");
	is_int(span_node_self(&t->node[ia]), 1140 - 990, "A's self follows its child");
	is_int(span_node_vals(t, ia)[0], 100, "the wait's off-CPU part leaves A's off-CPU time");
	is_int(span_node_vals(t, ib)[0], 50, "and B's");
	is_int(span_node_vals(t, ia)[1], 50, "A's children's off-CPU total follows");
	is_int(st.thread[1]->node[1].total_ns, 490, "a thread without waits loses its events");
	is_int(removed, (2200 - 2000) - 150 + (2000 - 990) + 10, "the self time removed, in all");
	span_trees_release(&st);
}

static void arg(struct span_trees *st, uint32_t tid, uint32_t depth, uint32_t key, unsigned type,
		uint64_t bits)
{
	struct span_event e = ev(SPAN_ARG, 1, tid, 5, key);
	e.depth = depth;
	e.flags = type;
	e.value = (int64_t)bits;
	span_trees_event(st, &e);
}

/* The entry of (key, type) at the node of path, or NULL. */
static const struct span_arg *arg_at(const struct span_tree *t, const uint32_t *path, uint32_t key,
				     unsigned type)
{
	const struct span_node *n = node_at(t, path);
	if (!n)
		return NULL;
	for (const struct span_arg *e = span_args_first(t->args, (uint32_t)(n - t->node)); e;
	     e = span_args_next(t->args, e))
		if (e->key == key && e->type == type)
			return e;
	return NULL;
}

/* Typed arguments: to the innermost open span's node (the root outside
 * every span), count/sum/min/max per key and type, strings counted up to
 * SPANARGS_STRS distinct and their top in order; merged over threads;
 * --weight=arg:'s sums. */
static void test_args(void)
{
	struct span_trees st;
	span_trees_init(&st);
	enum { K = 10, S = 11 };
	const uint32_t root[] = {0}, pa[] = {A, 0}, pab[] = {A, B_, 0};
	double d = -2.5, e = 4.0;
	uint64_t db, eb;
	memcpy(&db, &d, 8);
	memcpy(&eb, &e, 8);
	arg(&st, 1, 0, K, SPAN_ARG_U64, 9);
	for (int i = 0; i < 2; i++) {
		begin(&st, 1, 0, A, 10);
		arg(&st, 1, 1, K, SPAN_ARG_I64, i ? 7 : (uint64_t)-5);
		arg(&st, 1, 1, K, SPAN_ARG_F64, i ? eb : db);
		arg(&st, 1, 1, K, SPAN_ARG_BOOL, (uint64_t)i);
		begin(&st, 1, 1, B_, 11);
		arg(&st, 1, 2, K, SPAN_ARG_U64, UINT64_MAX);
		end(&st, 1, 1, B_, 11, 12, 0);
		end(&st, 1, 0, A, 10, 20, 0);
	}
	/* strings: 70 distinct texts once, then text 100 three times, 101 twice */
	begin(&st, 1, 0, A, 30);
	for (uint32_t i = 0; i < 70; i++)
		arg(&st, 1, 1, S, SPAN_ARG_STR, 200 + i);
	for (int i = 0; i < 3; i++)
		arg(&st, 1, 1, S, SPAN_ARG_STR, 200 + 5);
	for (int i = 0; i < 2; i++)
		arg(&st, 1, 1, S, SPAN_ARG_STR, 200 + 9);
	end(&st, 1, 0, A, 30, 40, 0);
	/* another thread's A */
	begin(&st, 2, 0, A, 10);
	arg(&st, 2, 1, K, SPAN_ARG_I64, 100);
	end(&st, 2, 0, A, 10, 20, 0);
	is_int(st.args, 85, "args: every one counted");
	const struct span_tree *t = st.thread[0];
	const struct span_arg *x = arg_at(t, root, K, SPAN_ARG_U64);
	ok(x && x->count == 1 && x->sum == 9, "args: outside every span, the thread's root");
	x = arg_at(t, pa, K, SPAN_ARG_I64);
	ok(x && x->count == 2 && x->sum == 2 && x->imin == -5 && x->imax == 7,
	   "args: i64 count, sum, min, max");
	x = arg_at(t, pa, K, SPAN_ARG_F64);
	ok(x && x->count == 2 && x->fsum == 1.5 && x->fmin == -2.5 && x->fmax == 4.0,
	   "args: f64 count, sum, min, max");
	x = arg_at(t, pa, K, SPAN_ARG_BOOL);
	ok(x && x->count == 2 && x->sum == 1, "args: bool count and trues");
	x = arg_at(t, pab, K, SPAN_ARG_U64);
	ok(x && x->count == 2 && x->sum == (__int128)UINT64_MAX * 2 && x->umax == UINT64_MAX,
	   "args: the inner span's own, its sum past 64 bits exact");
	ok(!arg_at(t, pa, K, SPAN_ARG_U64), "args: a child's are not its parent's");
	x = arg_at(t, pa, S, SPAN_ARG_STR);
	struct span_arg_str top[SPANARGS_TOP];
	unsigned n = x ? span_args_top(x, top) : 0;
	ok(x && x->count == 75 && x->nstr == SPANARGS_STRS && x->others == 6,
	   "args: 64 distinct texts counted, the 6 past them as others");
	ok(n == 5 && top[0].text == 205 && top[0].count == 4 && top[1].text == 209 &&
		   top[1].count == 3 && top[2].text == 200 && top[4].text == 202,
	   "args: the most frequent first, ties in the order seen");
	is_int(span_args_weight(t->args, (uint32_t)(node_at(t, pa) - t->node), K), 3,
	       "args: the weight sums the key's numbers, not its booleans (2 + 1.5)");
	struct span_tree m;
	ok(span_trees_merge(&st, &m) == 0, "args: trees merge");
	x = arg_at(&m, pa, K, SPAN_ARG_I64);
	ok(x && x->count == 3 && x->sum == 102 && x->imax == 100, "args: merged over threads");
	span_tree_release(&m);
	span_trees_release(&st);
}

/* A NaN among a key's doubles makes its min and max unknown (NaN, null in
 * the JSON) wherever it came, as it does the sum; --weight counts it 0. */
static void test_args_nan(void)
{
	enum { K = 10 };
	const uint32_t pa[] = {A, 0};
	double v[3] = {NAN, 1.0, 2.0};
	for (int order = 0; order < 2; order++) {
		struct span_trees st;
		span_trees_init(&st);
		begin(&st, 1, 0, A, 10);
		for (int i = 0; i < 3; i++) {
			double d = v[order ? 2 - i : i];
			uint64_t b;
			memcpy(&b, &d, 8);
			arg(&st, 1, 1, K, SPAN_ARG_F64, b);
		}
		end(&st, 1, 0, A, 10, 20, 0);
		const struct span_tree *t = st.thread[0];
		const struct span_arg *x = arg_at(t, pa, K, SPAN_ARG_F64);
		ok(x && isnan(x->fsum) && isnan(x->fmin) && isnan(x->fmax),
		   order ? "args: a NaN last makes min and max unknown"
			 : "args: a NaN first makes min and max unknown");
		is_int(span_args_weight(t->args, (uint32_t)(node_at(t, pa) - t->node), K), 0,
		       "args: a NaN sum weighs 0");
		span_trees_release(&st);
	}
}

int main(void)
{
	test_known();
	test_bounded();
	test_from_decoder();
	test_values();
	test_compensate();
	test_args();
	test_args_nan();
	return tap_done();
}
