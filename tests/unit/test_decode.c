/* test_decode.c: the span wire decoder (lib/spans/decoder.c) against real records
 * built with lib/wire/encode.h: exact event streams out, any byte split,
 * resynchronisation after garbage, every kind of bad input counted, exec,
 * TSC conversion, limits and code-address symbolisation.  Every stream run()
 * decodes is also captured raw (decoder_set_tap, rawcap.h) and replayed
 * through rawrep.h: the replay's events and statistics must be the live
 * decoder's, byte for byte. */
#include "config.h"
#include <dlfcn.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decoder.h"
#include "encode.h"
#include "pbenc.h"
#include "rawrep.h"
#include "ring.h"
#include "tap.h"

/* ---- building streams -------------------------------------------------- */

struct stream {
	uint8_t *buf;
	size_t len, cap;
	struct {
		uint32_t pid, tid, seq;
	} seq[64]; /* each thread's next events record number */
	unsigned nseq;
};

static void s_room(struct stream *s, size_t n)
{
	if (s->len + n > s->cap) {
		s->cap = (s->cap + n) * 2;
		s->buf = realloc(s->buf, s->cap);
	}
}

static void s_raw(struct stream *s, const void *p, size_t n)
{
	s_room(s, n);
	memcpy(s->buf + s->len, p, n);
	s->len += n;
}

static void s_hello(struct stream *s, uint32_t pid, uint32_t ppid, enum wire_clock clk, uint64_t ts,
		    uint64_t mono, const char *name)
{
	s_room(s, WIRE_MAX_RECORD);
	s->len += enc_hello(s->buf + s->len, WIRE_MAX_RECORD, pid, ppid, clk, ts, mono, name,
			    strlen(name));
}

static void s_name(struct stream *s, uint32_t pid, uint32_t id, const char *name)
{
	s_room(s, WIRE_MAX_RECORD);
	s->len += enc_name(s->buf + s->len, WIRE_MAX_RECORD, pid, 0, id, WIRE_NAME_STRING, 0, 0,
			   name, strlen(name));
}

static void s_code(struct stream *s, uint32_t pid, uint32_t id, uint64_t addr, uint64_t base,
		   const char *path)
{
	s_room(s, WIRE_MAX_RECORD);
	s->len += enc_name(s->buf + s->len, WIRE_MAX_RECORD, pid, 0, id, WIRE_NAME_CODE, addr, base,
			   path, strlen(path));
}

static void s_thread_name(struct stream *s, uint32_t pid, uint32_t tid, const char *name)
{
	s_room(s, WIRE_MAX_RECORD);
	s->len += enc_thread_name(s->buf + s->len, WIRE_MAX_RECORD, pid, tid, name, strlen(name));
}

static void s_simple(struct stream *s, enum wire_type type, uint32_t pid, uint32_t tid,
		     const void *p, size_t n)
{
	s_room(s, WIRE_MAX_RECORD);
	s->len += enc_simple(s->buf + s->len, WIRE_MAX_RECORD, type, pid, tid, p, n);
}

static void s_thread_exit(struct stream *s, uint32_t pid, uint32_t tid, uint64_t ts)
{
	s_simple(s, WIRE_THREAD_EXIT, pid, tid, &ts, sizeof ts);
}

static void s_exit(struct stream *s, uint32_t pid, uint64_t ts, uint32_t sig)
{
	struct wire_exit ex = {ts, sig, 0};
	s_simple(s, WIRE_EXIT, pid, 0, &ex, sizeof ex);
}

static void s_dropped(struct stream *s, uint32_t pid, uint32_t tid, uint64_t n)
{
	s_simple(s, WIRE_DROPPED, pid, tid, &n, sizeof n);
}

#define B(id, dt) wire_event(WIRE_OP_BEGIN, id, dt)
#define E(id, dt) wire_event(WIRE_OP_END, id, dt)
#define I(id, dt) wire_event(WIRE_OP_INSTANT, id, dt)
#define C(id, dt) wire_event(WIRE_OP_COUNTER, id, dt)

/* An events record with an explicit sequence number and dropped count. */
static void s_events_seq(struct stream *s, uint32_t pid, uint32_t tid, uint64_t base, uint32_t seq,
			 uint32_t dropped, size_t n, const uint64_t *w)
{
	uint64_t rec[WIRE_MAX_RECORD / 8];
	memcpy(rec + ENC_EVENTS_FIRST_WORD, w, n * 8);
	size_t len = enc_events_close(rec, pid, tid, base, seq, dropped, n);
	s_raw(s, rec, len);
}

/* The next sequence number of thread (pid, tid) in s, as a well-behaved
 * writer numbers them (the 64 threads seen last are remembered: enough for
 * streams whose many threads come and go). */
static uint32_t s_next_seq(struct stream *s, uint32_t pid, uint32_t tid)
{
	for (unsigned i = 0; i < s->nseq && i < 64; i++)
		if (s->seq[i].pid == pid && s->seq[i].tid == tid)
			return s->seq[i].seq++;
	unsigned k = s->nseq++ % 64;
	s->seq[k].pid = pid;
	s->seq[k].tid = tid;
	s->seq[k].seq = 1;
	return 0;
}

/* An events record from a list of words (counter values included). */
static void s_events(struct stream *s, uint32_t pid, uint32_t tid, uint64_t base, size_t n,
		     const uint64_t *w)
{
	s_events_seq(s, pid, tid, base, s_next_seq(s, pid, tid), 0, n, w);
}
#define EVENTS(s, pid, tid, base, ...)                          \
	do {                                                    \
		const uint64_t w_[] = {__VA_ARGS__};            \
		s_events(s, pid, tid, base, sizeof w_ / 8, w_); \
	} while (0)

/* ---- a sink that records events as text and checks balance ------------ */

struct rec {
	char *text;
	size_t len, cap;
	const struct decoder *d;
	struct {
		uint32_t pid, tid, depth;
		uint32_t name[8192];
	} th[64];
	int nth;
	int unbalanced;
	uint64_t begins, ends;
};

static void rec_printf(struct rec *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (r->len + (size_t)n + 1 > r->cap) {
		r->cap = (r->cap + (size_t)n + 1) * 2;
		r->text = realloc(r->text, r->cap);
	}
	va_start(ap, fmt);
	vsnprintf(r->text + r->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	r->len += (size_t)n;
}

static void rec_event(void *arg, const struct span_event *ev)
{
	struct rec *r = arg;
	const char *nm = strtab_get(decoder_strings(r->d), ev->name);
	int k = 0;
	if (ev->kind == SPAN_BEGIN || ev->kind == SPAN_END) {
		while (k < r->nth && (r->th[k].pid != ev->pid || r->th[k].tid != ev->tid))
			k++;
		if (k == r->nth && r->nth < 64) {
			r->th[k].pid = ev->pid;
			r->th[k].tid = ev->tid;
			r->th[k].depth = 0;
			r->nth++;
		}
		if (k == 64)
			k = 63;
	}
	switch (ev->kind) {
	case SPAN_PROCESS:
		rec_printf(r, "P %u ppid=%lld %s @%llu\n", ev->pid, (long long)ev->value, nm,
			   (unsigned long long)ev->ts);
		break;
	case SPAN_THREAD:
		rec_printf(r, "T %u/%u %s @%llu\n", ev->pid, ev->tid, nm,
			   (unsigned long long)ev->ts);
		break;
	case SPAN_BEGIN:
		r->begins++;
		if (ev->depth != r->th[k].depth || ev->depth >= 8192)
			r->unbalanced++;
		else
			r->th[k].name[r->th[k].depth++] = ev->name;
		if (r->text && r->len > (1u << 20))
			break; /* big random streams: check balance only */
		rec_printf(r, "B %u/%u d%u %s @%llu\n", ev->pid, ev->tid, ev->depth, nm,
			   (unsigned long long)ev->ts);
		break;
	case SPAN_END:
		r->ends++;
		if (r->th[k].depth == 0 || ev->depth != r->th[k].depth - 1 ||
		    r->th[k].name[ev->depth] != ev->name || ev->ts < ev->begin_ts)
			r->unbalanced++;
		else
			r->th[k].depth--;
		if (r->text && r->len > (1u << 20))
			break;
		rec_printf(r, "E %u/%u d%u %s @%llu-%llu%s\n", ev->pid, ev->tid, ev->depth, nm,
			   (unsigned long long)ev->begin_ts, (unsigned long long)ev->ts,
			   ev->flags & SPAN_F_UNFINISHED ? " U" : "");
		break;
	case SPAN_INSTANT:
		rec_printf(r, "I %u/%u %s @%llu\n", ev->pid, ev->tid, nm,
			   (unsigned long long)ev->ts);
		break;
	case SPAN_COUNTER:
		rec_printf(r, "C %u/%u %s=%lld @%llu\n", ev->pid, ev->tid, nm, (long long)ev->value,
			   (unsigned long long)ev->ts);
		break;
	case SPAN_PROCESS_END:
		rec_printf(r, "X %u sig=%lld @%llu\n", ev->pid, (long long)ev->value,
			   (unsigned long long)ev->ts);
		break;
	case SPAN_DAMAGE:
		rec_printf(r, "D %u/%u what=%u %lld\n", ev->pid, ev->tid, ev->depth,
			   (long long)ev->value);
		break;
	case SPAN_MESSAGE:
		rec_printf(r, "M %u/%u d%u %.*s @%llu\n", ev->pid, ev->tid, ev->depth, (int)ev->len,
			   ev->text, (unsigned long long)ev->ts);
		break;
	case SPAN_ASYNC_BEGIN:
		rec_printf(r, "AB %u/%u #%llu %s in #%llu @%llu\n", ev->pid, ev->tid,
			   (unsigned long long)ev->aid, nm, (unsigned long long)ev->parent,
			   (unsigned long long)ev->ts);
		break;
	case SPAN_ASYNC_ENTER:
	case SPAN_ASYNC_EXIT:
		rec_printf(r, "%s %u/%u #%llu %s @%llu%s\n",
			   ev->kind == SPAN_ASYNC_ENTER ? "AN" : "AX", ev->pid, ev->tid,
			   (unsigned long long)ev->aid, nm, (unsigned long long)ev->ts,
			   ev->flags & SPAN_F_UNFINISHED ? " U" : "");
		break;
	case SPAN_ASYNC_END:
		rec_printf(r, "AE %u/%u #%llu %s @%llu-%llu busy=%lld enters=%u threads=%u%s\n",
			   ev->pid, ev->tid, (unsigned long long)ev->aid, nm,
			   (unsigned long long)ev->begin_ts, (unsigned long long)ev->ts,
			   (long long)ev->value, ev->enters, ev->threads,
			   ev->flags & SPAN_F_UNFINISHED ? " U" : "");
		break;
	case SPAN_ARG:
		rec_printf(r, "A %u/%u d%u %s t%u %s @%llu\n", ev->pid, ev->tid, ev->depth, nm,
			   ev->flags,
			   ev->flags == SPAN_ARG_STR
				   ? strtab_get(decoder_strings(r->d), (uint32_t)ev->value)
				   : "",
			   (unsigned long long)ev->ts);
		if (ev->flags != SPAN_ARG_STR)
			rec_printf(r, "  bits %llx\n", (unsigned long long)ev->value);
		break;
	}
}

/* ---- the raw capture of each run, and its replay -------------------------- */

struct rawtest {
	struct rawcap c;
	struct decoder *d;
};
static unsigned raw_replays, raw_diffs, capo_runs, capo_diffs;

static void rt_tap(void *ctx, const void *rec, size_t len)
{
	rawcap_put_rec(&((struct rawtest *)ctx)->c, rec, len);
}

static size_t rt_name(void *ctx, const char *path, uint64_t addr, uint64_t base, char *fn,
		      size_t size)
{
	struct rawtest *t = ctx;
	return rawcap_sym_name(&t->c, t->d, path, addr, base, fn, size);
}

static int rt_where(void *ctx, const char *path, uint64_t addr, uint64_t base, char *where,
		    size_t size, unsigned *line)
{
	struct rawtest *t = ctx;
	return rawcap_sym_where(&t->c, t->d, path, addr, base, where, size, line);
}

static void rec_event(void *arg, const struct span_event *ev);
static int stats_eq(const struct decode_stats *a, const struct decode_stats *b);

/* The capture of a run replayed: its events (named by the live decoder's
 * strings: the ids must be the same) and statistics against the live ones. */
static void raw_replay(struct rawtest *t, const struct rec *live, const struct decode_stats *st)
{
	uint64_t v[3] = {0, 0, st->late};
	decoder_frame_counts(t->d, &v[0], &v[1]);
	rawcap_put_u64s(&t->c, RAW_FINISH, v, 3);
	struct rec *r = calloc(1, sizeof *r);
	r->d = t->d;
	rec_printf(r, "%s", "");
	struct rawrep *rr = rawrep_new();
	rawrep_add_sink(rr, (struct span_sink){rec_event, r});
	int e = rawrep_feed(rr, t->c.p, t->c.len);
	rawrep_end(rr);
	const struct decode_stats *rs = rawrep_stats(rr);
	raw_replays++;
	if (e || t->c.oom || !rs || strcmp(r->text, live->text) || !stats_eq(rs, st)) {
		raw_diffs++;
		printf("# raw replay differs (feed %d):\n# live:\n%s# replay:\n%s", e, live->text,
		       r->text);
	}
	rawrep_free(rr);
	free(r->text);
	free(r);
	rawcap_release(&t->c);
}

/* Decodes s fed in pieces of the given sizes (cycled; NULL: all at once). */
static struct rec *run(const struct stream *s, const struct spanclock *clk, const size_t *split,
		       size_t nsplit, struct decode_stats *stats)
{
	struct rec *r = calloc(1, sizeof *r);
	struct decoder *d = decoder_new(clk);
	r->d = d;
	rec_printf(r, "%s", "");
	decoder_add_sink(d, (struct span_sink){rec_event, r});
	struct rawtest t = {.d = d};
	bool tsc = clk && clk->valid && clk->mult;
	uint64_t set[10] = {tsc, tsc ? clk->tsc0 : 0, tsc ? clk->mono0 : 0, tsc ? clk->mult : 0,
			    tsc ? (clk->shift > 63 ? 63 : clk->shift) : 0};
	rawcap_put_u64s(&t.c, RAW_SETUP, set, 10);
	decoder_set_tap(d, rt_tap, &t);
	decoder_set_symfn(d, &(struct decoder_symfn){rt_name, rt_where, &t});
	size_t i = 0, k = 0;
	while (i < s->len) {
		size_t n = split ? split[k++ % nsplit] : s->len;
		if (n > s->len - i)
			n = s->len - i;
		decoder_feed(d, s->buf + i, n);
		i += n;
	}
	decoder_finish(d);
	*stats = *decoder_stats(d);
	/* the same stream captured only (decoder_set_capture_only): the same
	 * capture, and the same strings under the same ids, as decoded */
	struct decoder *d2 = decoder_new(clk);
	struct rawtest t2 = {.d = d2};
	rawcap_put_u64s(&t2.c, RAW_SETUP, set, 10);
	decoder_set_tap(d2, rt_tap, &t2);
	decoder_set_capture_only(d2, true);
	decoder_set_symfn(d2, &(struct decoder_symfn){rt_name, rt_where, &t2});
	for (i = 0, k = 0; i < s->len;) {
		size_t n = split ? split[k++ % nsplit] : s->len;
		if (n > s->len - i)
			n = s->len - i;
		decoder_feed(d2, s->buf + i, n);
		i += n;
	}
	decoder_finish(d2);
	const struct strtab *a = decoder_strings(d), *b = decoder_strings(d2);
	bool same = t2.c.len == t.c.len && !memcmp(t2.c.p, t.c.p, t.c.len) && a->n == b->n &&
		    decoder_stats(d2)->dropped == stats->dropped &&
		    decoder_stats(d2)->lost_records == stats->lost_records;
	for (uint32_t id = 1; same && id < a->n; id++)
		same = a->len[id] == b->len[id] && !memcmp(a->str[id], b->str[id], a->len[id]);
	capo_runs++;
	capo_diffs += !same;
	rawcap_release(&t2.c);
	decoder_free(d2);
	/* all threads must have closed every span */
	for (int k = 0; k < r->nth; k++)
		if (r->th[k].depth)
			r->unbalanced++;
	raw_replay(&t, r, stats);
	r->d = NULL;
	decoder_free(d);
	return r;
}

static void rec_free(struct rec *r)
{
	free(r->text);
	free(r);
}

static int stats_eq(const struct decode_stats *a, const struct decode_stats *b)
{
	return memcmp(a, b, sizeof *a) == 0;
}

/* ---- the reference stream ------------------------------------------------ */

static void build_reference(struct stream *s)
{
	s_hello(s, 100, 1, WIRE_CLOCK_MONOTONIC, 1000, 1000, "app");
	s_name(s, 100, 1, "main");
	s_name(s, 100, 2, "work");
	s_name(s, 100, 3, "inner");
	s_name(s, 100, 4, "tick");
	s_name(s, 100, 5, "queue depth");
	EVENTS(s, 100, 100, 2000, B(1, 0), B(2, 10), B(3, 5), E(3, 20), I(4, 1));
	s_thread_name(s, 100, 101, "worker");
	EVENTS(s, 100, 101, 2100, B(2, 0), C(5, 4), (uint64_t)-7, E(2, 50));
	EVENTS(s, 100, 100, 2040, E(2, 0), B(2, 10), E(2, 10), E(1, 5));
	s_hello(s, 200, 100, WIRE_CLOCK_MONOTONIC, 3000, 3000, "child");
	s_name(s, 200, 1, "cwork");
	EVENTS(s, 200, 200, 3100, B(1, 0), B(1, 10));
	s_dropped(s, 100, 101, 7);
	s_thread_exit(s, 100, 101, 2300);
	s_exit(s, 200, 3500, 9);
	EVENTS(s, 100, 100, 4000, B(3, 0));
}

static const char reference_out[] = "P 100 ppid=1 app @1000\n"
				    "T 100/100  @2000\n"
				    "B 100/100 d0 main @2000\n"
				    "B 100/100 d1 work @2010\n"
				    "B 100/100 d2 inner @2015\n"
				    "E 100/100 d2 inner @2015-2035\n"
				    "I 100/100 tick @2036\n"
				    "T 100/101 worker @2036\n" /* the process's last ts */
				    "B 100/101 d0 work @2100\n"
				    "C 100/101 queue depth=-7 @2104\n"
				    "E 100/101 d0 work @2100-2154\n"
				    "E 100/100 d1 work @2010-2040\n"
				    "B 100/100 d1 work @2050\n"
				    "E 100/100 d1 work @2050-2060\n"
				    "E 100/100 d0 main @2000-2065\n"
				    "P 200 ppid=100 child @3000\n"
				    "T 200/200  @3100\n"
				    "B 200/200 d0 cwork @3100\n"
				    "B 200/200 d1 cwork @3110\n"
				    "E 200/200 d1 cwork @3110-3500 U\n"
				    "E 200/200 d0 cwork @3100-3500 U\n"
				    "X 200 sig=9 @3500\n"
				    "B 100/100 d0 inner @4000\n"
				    "E 100/100 d0 inner @4000-4000 U\n"
				    "X 100 sig=0 @4000\n";

static void test_round_trip(void)
{
	struct stream s = {0};
	build_reference(&s);
	struct decode_stats st;
	struct rec *r = run(&s, NULL, NULL, 0, &st);
	is_str(r->text, reference_out, "round trip: exact events");
	is_int(r->unbalanced, 0, "round trip: balanced");
	is_int(st.records, 17, "round trip: records");
	is_int(st.spans, 8, "round trip: spans");
	is_int(st.unfinished, 3, "round trip: unfinished (exit, stream end)");
	is_int(st.dropped, 7, "round trip: dropped");
	is_int(st.events, 16, "round trip: event words (counter values included)");
	is_int(st.bad_bytes + st.bad_records + st.bad_ids + st.unmatched + st.over_limit, 0,
	       "round trip: nothing bad");

	/* byte by byte, and random splits */
	size_t one = 1;
	struct decode_stats st2;
	struct rec *r2 = run(&s, NULL, &one, 1, &st2);
	is_str(r2->text, reference_out, "byte by byte: same events");
	ok(stats_eq(&st, &st2), "byte by byte: same stats");
	rec_free(r2);
	srand(7);
	int same = 1;
	for (int k = 0; k < 200; k++) {
		size_t split[16];
		for (int j = 0; j < 16; j++)
			split[j] = 1 + (size_t)rand() % (k % 2 ? 40 : 5000);
		r2 = run(&s, NULL, split, 16, &st2);
		same &= strcmp(r2->text, reference_out) == 0 && stats_eq(&st, &st2);
		rec_free(r2);
	}
	ok(same, "200 random splits: same events and stats");
	rec_free(r);
	free(s.buf);
}

static void test_garbage(void)
{
	struct stream ref = {0}, s = {0};
	build_reference(&ref);
	uint8_t junk[333];
	srand(11);
	for (size_t i = 0; i < sizeof junk; i++) {
		junk[i] = (uint8_t)(rand() % 256);
		if (junk[i] == 'S')
			junk[i] = 's'; /* no magic prefix: exact counts */
	}
	/* garbage before, between every record, and after */
	s_raw(&s, junk, 5);
	size_t off = 0, nrec = 0, garbage = 5;
	while (off < ref.len) {
		struct wire_hdr h;
		memcpy(&h, ref.buf + off, sizeof h);
		s_raw(&s, ref.buf + off, h.len);
		off += h.len;
		size_t g = (nrec * 37) % 200;
		s_raw(&s, junk + 3, g);
		garbage += g;
		nrec++;
	}
	s_raw(&s, "SP", 2); /* a magic prefix at the very end */
	garbage += 2;
	struct decode_stats st;
	struct rec *r = run(&s, NULL, NULL, 0, &st);
	is_str(r->text, reference_out, "garbage around records: same events");
	is_int(st.bad_bytes, garbage, "garbage: every byte counted");
	is_int(st.records, 17, "garbage: every record recovered");
	rec_free(r);
	size_t split[] = {1, 7, 3, 4096, 13};
	r = run(&s, NULL, split, 5, &st);
	is_str(r->text, reference_out, "garbage, split feeding: same events");
	is_int(st.bad_bytes, garbage, "garbage, split feeding: same count");
	rec_free(r);
	free(ref.buf);
	free(s.buf);
}

static void test_bad_input(void)
{
	struct decode_stats st;
	struct rec *r;
	struct stream s = {0};

	/* truncated record at the end */
	s_hello(&s, 5, 1, WIRE_CLOCK_MONOTONIC, 10, 10, "t");
	s_name(&s, 5, 1, "a");
	EVENTS(&s, 5, 5, 100, B(1, 0), E(1, 5), B(1, 5), E(1, 5));
	s.len -= 9;
	r = run(&s, NULL, NULL, 0, &st);
	is_int(st.bad_records, 1, "truncated last record: counted");
	is_int(st.spans, 0, "truncated last record: not decoded");
	rec_free(r);

	/* truncated record in the middle: its header claims the start of the
	 * next record (decoded as event words: undefined ids), the rest of that
	 * record is skipped as garbage, and decoding resumes after it */
	s.len = 0, s.nseq = 0;
	s_hello(&s, 5, 1, WIRE_CLOCK_MONOTONIC, 10, 10, "t");
	s_name(&s, 5, 1, "a");
	EVENTS(&s, 5, 5, 100, B(1, 0), E(1, 5), B(1, 5), E(1, 5), B(1, 1), E(1, 1));
	s.len -= 24;
	EVENTS(&s, 5, 5, 200, B(1, 0), E(1, 5));
	EVENTS(&s, 5, 5, 300, B(1, 0), E(1, 5));
	r = run(&s, NULL, NULL, 0, &st);
	ok(st.bad_records + st.bad_bytes > 0, "truncated middle record: counted");
	ok(strstr(r->text, "a @300\n") != NULL,
	   "truncated middle record: the record after the damage decodes");
	is_int(r->unbalanced, 0, "truncated middle record: balanced");
	rec_free(r);

	/* unknown type with a valid header */
	s.len = 0, s.nseq = 0;
	s_hello(&s, 5, 1, WIRE_CLOCK_MONOTONIC, 10, 10, "t");
	uint64_t z = 0;
	s_simple(&s, 99, 5, 5, &z, 8);
	s_simple(&s, 0, 5, 5, &z, 8);
	s_name(&s, 5, 1, "a");
	EVENTS(&s, 5, 5, 100, B(1, 0), E(1, 5));
	r = run(&s, NULL, NULL, 0, &st);
	is_int(st.bad_records, 2, "unknown types: counted as bad records");
	is_int(st.spans, 1, "unknown types: skipped whole");
	rec_free(r);

	/* absurd lengths: header fields that cannot be a record */
	s.len = 0, s.nseq = 0;
	s_hello(&s, 5, 1, WIRE_CLOCK_MONOTONIC, 10, 10, "t");
	s_name(&s, 5, 1, "a");
	uint16_t lens[] = {0, 8, 20, 4104, 65528};
	for (size_t i = 0; i < 5; i++) {
		uint8_t h[16];
		enc_hdr(h, WIRE_EVENTS, lens[i], 5, 5);
		s_raw(&s, h, 16);
	}
	EVENTS(&s, 5, 5, 100, B(1, 0), E(1, 5));
	r = run(&s, NULL, NULL, 0, &st);
	is_int(st.bad_bytes, 5 * 16, "absurd lengths: headers skipped as bad bytes");
	is_int(st.spans, 1, "absurd lengths: stream resumes");
	rec_free(r);

	/* bad fields inside records with good headers */
	s.len = 0, s.nseq = 0;
	s_hello(&s, 5, 1, WIRE_CLOCK_MONOTONIC, 10, 10, "t");
	s_name(&s, 5, 0, "zero");			       /* id 0 */
	s_name(&s, 5, WIRE_ID_MAX + 1, "big");		       /* id too big */
	s_name(&s, 6, 1, "nohello");			       /* unknown pid */
	s_hello(&s, 0, 1, WIRE_CLOCK_MONOTONIC, 10, 10, "p0"); /* pid 0 */
	{
		/* a name whose length runs past the record */
		uint8_t rec[64];
		enc_name(rec, sizeof rec, 5, 0, 2, WIRE_NAME_STRING, 0, 0, "abcdef", 6);
		rec[16 + 6] = 200;
		s_raw(&s, rec, 48);
		/* a hello with a bad version, then a bad clock */
		struct wire_hello hh = {2, 0, 1, 1, 1, 0};
		s_simple(&s, WIRE_HELLO, 7, 0, &hh, sizeof hh);
		hh.version = 1;
		hh.clock = 5;
		s_simple(&s, WIRE_HELLO, 7, 0, &hh, sizeof hh);
		/* a thread exit / exit / dropped with a wrong payload size */
		uint64_t two[2] = {1, 2};
		s_simple(&s, WIRE_THREAD_EXIT, 5, 5, two, 16);
		s_simple(&s, WIRE_EXIT, 5, 0, two, 8);
		s_simple(&s, WIRE_DROPPED, 5, 5, two, 16);
		/* events with a base but no seq/dropped word */
		s_simple(&s, WIRE_EVENTS, 5, 5, two, 8);
		/* events with tid 0, and with no base */
		s_simple(&s, WIRE_EVENTS, 5, 0, two, 16);
		uint8_t h[16];
		enc_hdr(h, WIRE_EVENTS, 16, 5, 5);
		s_raw(&s, h, 16);
	}
	s_name(&s, 5, 1, "a");
	EVENTS(&s, 5, 5, 100, B(1, 0), C(1, 3)); /* counter missing its value */
	r = run(&s, NULL, NULL, 0, &st);
	is_int(st.bad_records, 14, "bad fields: each record counted");
	is_int(st.spans, 1, "bad fields: the good begin still decodes (closed at end)");
	is_int(st.unfinished, 1, "bad fields: ... as unfinished");
	is_int(r->unbalanced, 0, "bad fields: balanced");
	rec_free(r);
	free(s.buf);
}

static void test_matching(void)
{
	struct decode_stats st;
	struct rec *r;
	struct stream s = {0};

	s_hello(&s, 5, 1, WIRE_CLOCK_MONOTONIC, 10, 10, "t");
	s_name(&s, 5, 1, "a");
	s_name(&s, 5, 2, "b");
	s_name(&s, 5, 3, "c");
	/* end without begin; undefined ids around and inside a span; an end of
	 * an outer span closing the inner ones */
	EVENTS(&s, 5, 5, 100, E(1, 0), B(9, 1), B(1, 1), B(9, 1), E(9, 1), E(1, 1), E(9, 1),
	       B(1, 1), B(2, 1), B(3, 1), E(1, 1), I(9, 1), C(9, 1), 5);
	r = run(&s, NULL, NULL, 0, &st);
	is_str(r->text,
	       "P 5 ppid=1 t @10\n"
	       "T 5/5  @100\n"
	       "B 5/5 d0 a @102\n"
	       "E 5/5 d0 a @102-105\n"
	       "B 5/5 d0 a @107\n"
	       "B 5/5 d1 b @108\n"
	       "B 5/5 d2 c @109\n"
	       "E 5/5 d2 c @109-110 U\n"
	       "E 5/5 d1 b @108-110 U\n"
	       "E 5/5 d0 a @107-110\n"
	       "X 5 sig=0 @110\n", /* events with undefined ids are ignored whole */
	       "matching: events");
	is_int(st.unmatched, 1, "end without begin: unmatched");
	is_int(st.bad_ids, 6, "undefined ids: counted, begins and ends alike");
	is_int(st.unfinished, 2, "end of an outer span: inner ones unfinished");
	is_int(r->unbalanced, 0, "matching: balanced");
	rec_free(r);

	/* exec: a second hello for the pid closes its spans and forgets names */
	s.len = 0, s.nseq = 0;
	s_hello(&s, 5, 1, WIRE_CLOCK_MONOTONIC, 10, 10, "sh");
	s_name(&s, 5, 1, "a");
	s_name(&s, 5, 2, "b");
	EVENTS(&s, 5, 5, 100, B(1, 0), B(2, 10));
	EVENTS(&s, 5, 6, 100, B(2, 0));
	s_hello(&s, 5, 1, WIRE_CLOCK_MONOTONIC, 200, 200, "app");
	s_name(&s, 5, 1, "x");
	EVENTS(&s, 5, 5, 300, B(1, 0), E(1, 10), B(2, 1), E(2, 1));
	s_exit(&s, 5, 400, 0);
	r = run(&s, NULL, NULL, 0, &st);
	is_str(r->text,
	       "P 5 ppid=1 sh @10\n"
	       "T 5/5  @100\n"
	       "B 5/5 d0 a @100\n"
	       "B 5/5 d1 b @110\n"
	       "T 5/6  @100\n"
	       "B 5/6 d0 b @100\n"
	       "E 5/6 d0 b @100-100 U\n"
	       "E 5/5 d1 b @110-110 U\n"
	       "E 5/5 d0 a @100-110 U\n"
	       "X 5 sig=0 @110\n"
	       "P 5 ppid=1 app @200\n"
	       "T 5/5  @300\n"
	       "B 5/5 d0 x @300\n"
	       "E 5/5 d0 x @300-310\n"
	       "X 5 sig=0 @400\n",
	       "exec: open spans closed, names reset");
	is_int(st.bad_ids, 2, "exec: old ids undefined");
	rec_free(r);

	/* thread exit closes that thread only */
	s.len = 0, s.nseq = 0;
	s_hello(&s, 5, 1, WIRE_CLOCK_MONOTONIC, 10, 10, "t");
	s_name(&s, 5, 1, "a");
	EVENTS(&s, 5, 6, 100, B(1, 0));
	EVENTS(&s, 5, 5, 100, B(1, 0));
	s_thread_exit(&s, 5, 6, 150);
	s_thread_exit(&s, 5, 77, 150); /* never seen: nothing to do */
	EVENTS(&s, 5, 5, 200, E(1, 0));
	r = run(&s, NULL, NULL, 0, &st);
	ok(strstr(r->text, "E 5/6 d0 a @100-150 U\n") && strstr(r->text, "E 5/5 d0 a @100-200\n"),
	   "thread exit: closes its own spans only");
	is_int(st.bad_records, 0, "thread exit: of an unseen thread is fine");
	rec_free(r);

	/* an end before its begin is raised to the begin */
	s.len = 0, s.nseq = 0;
	s_hello(&s, 5, 1, WIRE_CLOCK_MONOTONIC, 10, 10, "t");
	s_name(&s, 5, 1, "a");
	EVENTS(&s, 5, 5, 500, B(1, 0));
	EVENTS(&s, 5, 5, 400, E(1, 0));
	r = run(&s, NULL, NULL, 0, &st);
	ok(strstr(r->text, "E 5/5 d0 a @500-500\n") != NULL, "end before begin: clamped");
	rec_free(r);
	free(s.buf);
}

static void test_clock(void)
{
	struct decode_stats st;
	struct rec *r;
	struct stream s = {0};
	/* ns = mono0 + ((tsc - tsc0) * mult) >> shift; x1.5 with a product that
	 * needs 128 bits */
	struct spanclock clk = {
		.tsc0 = 1000, .mono0 = 5000000000u, .mult = 3u << 30, .shift = 31, .valid = 1};
	s_hello(&s, 5, 1, WIRE_CLOCK_TSC, 1000, 0, "t");
	s_name(&s, 5, 1, "a");
	EVENTS(&s, 5, 5, 3000, B(1, 0), E(1, 1000));
	EVENTS(&s, 5, 6, 1000 + (UINT64_C(1) << 60), I(1, 0));
	EVENTS(&s, 5, 7, 200, I(1, 0)); /* before tsc0 */
	r = run(&s, &clk, NULL, 0, &st);
	ok(strstr(r->text, "P 5 ppid=1 t @5000000000\n") != NULL, "tsc: hello at tsc0 is mono0");
	ok(strstr(r->text, "E 5/5 d0 a @5000003000-5000004500\n") != NULL,
	   "tsc: ticks scaled by mult >> shift");
	char want[64];
	snprintf(want, sizeof want, "I 5/6 a @%" PRIu64 "\n",
		 (uint64_t)5000000000u + 3 * (UINT64_C(1) << 59));
	ok(strstr(r->text, want) != NULL, "tsc: 128-bit product");
	ok(strstr(r->text, "I 5/7 a @4999998800\n") != NULL, "tsc: before tsc0 counts back");
	is_int(st.clock_unknown, 0, "tsc: valid clock used");
	rec_free(r);

	/* no valid clock: ticks taken as ns from the hello's pair */
	r = run(&s, NULL, NULL, 0, &st);
	ok(strstr(r->text, "E 5/5 d0 a @2000-3000\n") != NULL, "no clock: ticks as ns from hello");
	is_int(st.clock_unknown, 1, "no clock: counted");
	rec_free(r);
	free(s.buf);
}

static void test_limits(void)
{
	struct decode_stats st;
	struct rec *r;
	struct stream s = {0};
	s_hello(&s, 5, 1, WIRE_CLOCK_MONOTONIC, 10, 10, "t");
	s_name(&s, 5, 1, "a");
	/* 5000 nested begins, then 5000 ends: deeper than the decoder keeps */
	uint64_t w[ENC_EVENTS_MAX_WORDS];
	for (int k = 0; k < 10000; k += (int)ENC_EVENTS_MAX_WORDS - 1) {
		size_t n = 0;
		for (int j = k; j < 10000 && n < ENC_EVENTS_MAX_WORDS - 1; j++)
			w[n++] = j < 5000 ? B(1, 1) : E(1, 1);
		s_events(&s, 5, 5, 1000 + (uint64_t)k, n, w);
	}
	EVENTS(&s, 5, 5, 20000, E(1, 0));
	r = run(&s, NULL, NULL, 0, &st);
	is_int(st.spans, 4096, "depth limit: the spans kept");
	is_int(st.over_limit, 5000 - 4096, "depth limit: the rest counted");
	is_int(st.unmatched, 1, "depth limit: ends still match");
	is_int(r->unbalanced, 0, "depth limit: balanced");
	rec_free(r);

	/* name ids: sparse big ids work and do not need a flat table */
	s.len = 0, s.nseq = 0;
	s_hello(&s, 5, 1, WIRE_CLOCK_MONOTONIC, 10, 10, "t");
	s_name(&s, 5, WIRE_ID_MAX, "top");
	s_name(&s, 5, 3000000, "mid");
	s_name(&s, 5, 2, "low");
	EVENTS(&s, 5, 5, 100, B(WIRE_ID_MAX, 0), B(3000000, 1), B(2, 1), E(2, 1), E(3000000, 1),
	       E(WIRE_ID_MAX, 1));
	r = run(&s, NULL, NULL, 0, &st);
	is_int(st.spans, 3, "big ids: defined and matched");
	ok(strstr(r->text, "B 5/5 d1 mid") != NULL, "big ids: right names");
	rec_free(r);
	/* many processes and threads come and go without growing */
	s.len = 0, s.nseq = 0;
	for (uint32_t p = 1; p <= 3000; p++) {
		s_hello(&s, p, 1, WIRE_CLOCK_MONOTONIC, 10, 10, "p");
		s_name(&s, p, 1, "a");
		EVENTS(&s, p, p, 100, B(1, 0));
		EVENTS(&s, p, p + 100000, 100, B(1, 0), E(1, 1));
		s_thread_exit(&s, p, p + 100000, 120);
		s_exit(&s, p, 200, 0);
	}
	r = run(&s, NULL, NULL, 0, &st);
	is_int(st.spans, 6000, "process churn: all spans");
	is_int(st.bad_records + st.over_limit, 0, "process churn: within limits");
	rec_free(r);
	free(s.buf);
}

static void test_random(void)
{
	/* random bytes, and valid streams with random corruption */
	struct decode_stats st;
	struct stream s = {0};
	uint64_t x = 0x9e3779b97f4a7c15u;
	s_room(&s, 1 << 20);
	for (size_t i = 0; i < (1 << 20); i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		s.buf[i] = (uint8_t)x;
	}
	s.len = 1 << 20;
	struct rec *r = run(&s, NULL, NULL, 0, &st);
	ok(st.bad_bytes > 0 && st.spans == 0, "random bytes: skipped, nothing emitted");
	rec_free(r);

	int balanced = 1;
	uint64_t bad = 0;
	for (int round = 0; round < 40; round++) {
		s.len = 0, s.nseq = 0;
		for (uint32_t p = 1; p <= 3; p++) {
			s_hello(&s, p, 1, round % 2 ? WIRE_CLOCK_TSC : WIRE_CLOCK_MONOTONIC, 10, 10,
				"p");
			for (uint32_t id = 1; id <= 5; id++)
				s_name(&s, p, id,
				       (const char *[]){"a", "b", "c", "d", "e"}[id - 1]);
		}
		for (int k = 0; k < 200; k++) {
			uint64_t w[64];
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			size_t n = 1 + x % 60;
			for (size_t j = 0; j < n; j++) {
				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				w[j] = wire_event((enum wire_op)(x % 4), (uint32_t)(x >> 8) % 7,
						  (x >> 20) % 1000);
			}
			s_events(&s, 1 + (uint32_t)(x >> 40) % 3, 1 + (uint32_t)(x >> 44) % 4,
				 x >> 50, n, w);
		}
		for (int k = 0; k < 100; k++) { /* corrupt bytes */
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			s.buf[x % s.len] = (uint8_t)(x >> 32);
		}
		struct clk_s {
			struct spanclock c;
		} clk = {{0, 0, 1u << 31, 31, 1}};
		size_t split[] = {1 + (size_t)round * 7, 3, 4095};
		r = run(&s, &clk.c, split, 3, &st);
		balanced &= r->unbalanced == 0 && r->begins == r->ends && r->ends == st.spans;
		bad += st.bad_bytes + st.bad_records;
		rec_free(r);
	}
	ok(balanced, "random streams with corruption: always balanced, ends == spans");
	ok(bad > 0, "random streams with corruption: damage counted");
	free(s.buf);
}

static void __attribute__((noinline)) test_decode_static_target(void)
{
	__asm__ volatile("");
}

static void test_symbols(void)
{
	struct decode_stats st;
	struct stream s = {0};
	Dl_info di;
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = '\0';
	ok(dladdr((void *)test_decode_static_target, &di) != 0, "dladdr of a static function");
	s_hello(&s, 5, 1, WIRE_CLOCK_MONOTONIC, 10, 10, "t");
	s_code(&s, 5, 1, (uintptr_t)test_decode_static_target, (uintptr_t)di.dli_fbase, exe);
	Dl_info dj;
	dladdr((void *)strtab_get, &dj); /* inline: in this binary */
	void *fn = dlsym(RTLD_DEFAULT, "elf_version");
	ok(fn && dladdr(fn, &dj), "dladdr of a shared library function");
	s_code(&s, 5, 2, (uintptr_t)fn, (uintptr_t)dj.dli_fbase, dj.dli_fname);
	s_code(&s, 5, 3, 0x1234 + 0x10, 0x1234, "/nonexistent/libnothing.so");
	s_code(&s, 5, 4, 0x10, 0x0, "/dev/zero");
	EVENTS(&s, 5, 5, 100, I(1, 0), I(2, 1), I(3, 1), I(4, 1));
	struct rec *r = run(&s, NULL, NULL, 0, &st);
	ok(strstr(r->text, "I 5/5 test_decode_static_target @100\n") != NULL,
	   "code name: static function in the PIE");
	ok(strstr(r->text, "I 5/5 elf_version @101\n") != NULL,
	   "code name: shared library function");
	ok(strstr(r->text, "I 5/5 0x10@libnothing.so @102\n") != NULL,
	   "code name: fallback offset@object");
	ok(strstr(r->text, "I 5/5 0x10@zero @103\n") != NULL, "code name: devices not read");
	if (tap_failed)
		printf("# %s", r->text);
	rec_free(r);
	free(s.buf);
}

/* A C function under a C++ symbol (unit::probe(int)), for the name view;
 * DWARF places it at its declaration or its definition, the next two lines. */
enum { PROBE_LINE = __LINE__ + 1 };
void test_decode_probe(int v) __asm__("_ZN4unit5probeEi");
void __attribute__((noinline, used)) test_decode_probe(int v)
{
	__asm__ volatile("" : : "r"(v));
}

/* The name view (spannames.h) a decoder builds for code names in each
 * --demangle mode: shown text, source location from this test's own debug
 * information, and user names left as they are even when they look
 * mangled. */
static void test_names_view(void)
{
	static const char *const want[] = {"unit::probe", "unit::probe(int)", "_ZN4unit5probeEi"};
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = '\0';
	Dl_info di;
	ok(dladdr((void *)test_decode_static_target, &di) != 0, "view: dladdr");
	for (int mode = DEMANGLE_SIMPLE; mode <= DEMANGLE_NO; mode++) {
		struct stream s = {0};
		s_hello(&s, 5, 1, WIRE_CLOCK_MONOTONIC, 10, 10, "t");
		s_code(&s, 5, 1, (uintptr_t)test_decode_probe, (uintptr_t)di.dli_fbase, exe);
		s_name(&s, 5, 2, "_ZN4user4textEv");
		s_code(&s, 5, 3, 0x1234 + 0x10, 0x1234, "/nonexistent/libnothing.so");
		struct decoder *d = decoder_new(NULL);
		decoder_set_demangle(d, (enum demangle_mode)mode);
		decoder_feed(d, s.buf, s.len);
		const struct strtab *t = decoder_strings(d);
		const struct spannames *v = decoder_names(d);
		uint32_t probe = strtab_lookup(t, "_ZN4unit5probeEi", 16);
		uint32_t user = strtab_lookup(t, "_ZN4user4textEv", 15);
		uint32_t none = strtab_lookup(t, "0x10@libnothing.so", 18);
		ok(probe && user && none, "view %d: raw names interned", mode);
		is_str(spannames_text(v, t, probe), want[mode], "view %d: code name shown", mode);
		is_str(spannames_text(v, t, user), "_ZN4user4textEv",
		       "view %d: a user's name is never demangled", mode);
		is_str(spannames_text(v, t, none), "0x10@libnothing.so",
		       "view %d: a fallback name as it is", mode);
		uint32_t line = 0;
		const char *file = spannames_where(v, probe, &line);
		ok(file && file[0] == '/' && strlen(file) >= 25 &&
			   !strcmp(file + strlen(file) - 25, "/tests/unit/test_decode.c"),
		   "view %d: absolute file from the debug information (%s)", mode,
		   file ? file : "null");
		ok(line == PROBE_LINE || line == PROBE_LINE + 1, "view %d: line %u", mode, line);
		ok(!spannames_where(v, none, &line) && line == 0,
		   "view %d: no location without debug information", mode);
		ok(!spannames_where(v, user, &line), "view %d: no location for a user name", mode);
		decoder_free(d);
		free(s.buf);
	}
}

/* Names that carry their place (NAME 0x1f FILE:LINE, spanstat(3)): shown as
 * NAME with FILE and LINE; anything else after 0x1f leaves the name as it is. */
static void test_names_where(void)
{
	static const struct {
		const char *raw, *shown, *file;
		uint32_t line;
	} c[] = {
		{"app.parse\037/src/app.py:42", "app.parse", "/src/app.py", 42},
		{"m.f\037a:b.py:7", "m.f", "a:b.py", 7}, /* the last colon */
		{"\037/x.py:1", "", "/x.py", 1},
		{"m.g\037/x.py:", "m.g\037/x.py:", NULL, 0},	 /* no line */
		{"m.g\037/x.py:4x", "m.g\037/x.py:4x", NULL, 0}, /* not a number */
		{"m.g\037:4", "m.g\037:4", NULL, 0},		 /* no file */
		{"m.g\037/x.py", "m.g\037/x.py", NULL, 0},	 /* no colon */
		{"m.g\037/x.py:99999999999", "m.g\037/x.py:99999999999", NULL, 0}, /* too big */
		{"plain", "plain", NULL, 0},
	};
	for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
		struct stream s = {0};
		s_hello(&s, 5, 1, WIRE_CLOCK_MONOTONIC, 10, 10, "t");
		s_name(&s, 5, 1, c[i].raw);
		struct decoder *d = decoder_new(NULL);
		decoder_feed(d, s.buf, s.len);
		const struct strtab *t = decoder_strings(d);
		const struct spannames *v = decoder_names(d);
		uint32_t id = strtab_lookup(t, c[i].raw, strlen(c[i].raw));
		ok(id != 0, "where %zu: the raw name is the identity", i);
		is_str(spannames_text(v, t, id), c[i].shown, "where %zu: shown", i);
		uint32_t line = 0;
		const char *file = spannames_where(v, id, &line);
		if (c[i].file) {
			is_str(file ? file : "(null)", c[i].file, "where %zu: file", i);
			ok(line == c[i].line, "where %zu: line %u", i, line);
		} else {
			ok(!file && line == 0, "where %zu: no location", i);
		}
		decoder_free(d);
		free(s.buf);
	}
}

/* Lost records and drops: seq gaps, the dropped count, EXIT's total, a
 * process without EXIT, and the open stack closed when the stream lost. */
static void test_lost(void)
{
	struct decode_stats st;
	struct rec *r;
	struct stream s = {0};
	const uint64_t w1[] = {B(1, 0), B(2, 10)};
	const uint64_t w2[] = {E(2, 0), B(3, 5), E(3, 5)};

	/* records 1 and 2 of the thread lost: the stalled begins are closed at
	 * the thread's last ts, the new record's END is unmatched, what follows
	 * nests from the root */
	s_hello(&s, 5, 1, WIRE_CLOCK_MONOTONIC, 10, 10, "p");
	s_name(&s, 5, 1, "outer");
	s_name(&s, 5, 2, "stalled");
	s_name(&s, 5, 3, "resumed");
	s_events_seq(&s, 5, 5, 100, 0, 0, 2, w1);
	s_events_seq(&s, 5, 5, 500, 3, 1000, 3, w2);
	s_exit(&s, 5, 600, 0);
	r = run(&s, NULL, NULL, 0, &st);
	ok(strstr(r->text, "E 5/5 d1 stalled @110-110 U\nE 5/5 d0 outer @100-110 U\n"
			   "B 5/5 d0 resumed @505\n") != NULL,
	   "seq gap: the open stack closed at the last ts before the next record");
	is_int(st.lost_records, 2, "seq gap: lost records counted");
	is_int(st.dropped, 1000, "seq gap: the dropped words counted");
	is_int(st.unmatched, 1, "seq gap: the orphan end is unmatched");
	is_int(st.no_exit, 0, "exit seen: no_exit 0");
	is_int(r->unbalanced, 0, "seq gap: balanced");
	rec_free(r);

	/* dropped grows with no gap (single events dropped): same closing, no
	 * lost record; EXIT's total adds the drops no record told; a second
	 * process that recorded never sends EXIT; a third, that only loaded
	 * the library (a shell leaving through _exit), does not count */
	s.len = 0, s.nseq = 0;
	s_hello(&s, 5, 1, WIRE_CLOCK_MONOTONIC, 10, 10, "p");
	s_hello(&s, 6, 1, WIRE_CLOCK_MONOTONIC, 10, 10, "q");
	s_hello(&s, 7, 1, WIRE_CLOCK_MONOTONIC, 10, 10, "sh");
	s_name(&s, 6, 1, "q-span");
	s_name(&s, 5, 1, "outer");
	s_name(&s, 5, 2, "stalled");
	s_name(&s, 5, 3, "resumed");
	s_events_seq(&s, 5, 5, 100, 0, 0, 2, w1);
	s_events_seq(&s, 5, 5, 500, 1, 2, 3, w2);
	s_events_seq(&s, 5, 5, 600, 2, 2, 0, w1); /* empty record, no news */
	s_exit(&s, 5, 700, 0);
	{
		struct wire_exit ex = {700, 0, 9};
		s.len -= 32; /* replace that exit with one reporting 9 words in all */
		s_simple(&s, WIRE_EXIT, 5, 0, &ex, sizeof ex);
	}
	r = run(&s, NULL, NULL, 0, &st);
	ok(strstr(r->text, "E 5/5 d1 stalled @110-110 U\n") != NULL,
	   "dropped grew: the open stack closed");
	is_int(st.lost_records, 0, "dropped grew: no lost record");
	is_int(st.dropped, 9, "exit: its total counts the drops no record told");
	is_int(st.no_exit, 1, "a process that recorded, without EXIT, is counted (only it)");
	is_int(r->unbalanced, 0, "dropped grew: balanced");
	rec_free(r);

	/* a thread whose first records were lost, and the WIRE_DROPPED record
	 * of older writers */
	s.len = 0, s.nseq = 0;
	s_hello(&s, 5, 1, WIRE_CLOCK_MONOTONIC, 10, 10, "p");
	s_name(&s, 5, 3, "resumed");
	s_events_seq(&s, 5, 5, 500, 4, 0, 3, w2);
	s_dropped(&s, 5, 5, 7);
	s_exit(&s, 5, 700, 0);
	r = run(&s, NULL, NULL, 0, &st);
	is_int(st.lost_records, 4, "first records lost: counted");
	is_int(st.dropped, 7, "WIRE_DROPPED still counted, not twice by EXIT");
	rec_free(r);

	/* a tid reused after its THREAD_EXIT went missing: seq starts over */
	s.len = 0, s.nseq = 0;
	s_hello(&s, 5, 1, WIRE_CLOCK_MONOTONIC, 10, 10, "p");
	s_name(&s, 5, 1, "outer");
	s_name(&s, 5, 2, "stalled");
	s_events_seq(&s, 5, 5, 100, 0, 0, 2, w1);
	s_events_seq(&s, 5, 5, 200, 1, 0, 2, w1);
	s_events_seq(&s, 5, 5, 300, 0, 0, 2, w1);
	s_exit(&s, 5, 700, 0);
	r = run(&s, NULL, NULL, 0, &st);
	is_int(st.lost_records, 1, "seq going back: one record lost at least");
	is_int(r->unbalanced, 0, "seq going back: balanced");
	rec_free(r);

	/* --lib-calls' objects not followed (WIRE_UNFOLLOWED): added up over
	 * records and processes; one of a bad length, or of a process never
	 * announced, is a bad record that counts nothing */
	s.len = 0, s.nseq = 0;
	s_hello(&s, 5, 1, WIRE_CLOCK_MONOTONIC, 10, 10, "p");
	s_hello(&s, 6, 1, WIRE_CLOCK_MONOTONIC, 10, 10, "q");
	{
		struct wire_unfollowed a = {3, 12288}, b = {1, 7};
		const uint32_t longer[4] = {5, 5, 5, 5};
		s_simple(&s, WIRE_UNFOLLOWED, 5, 0, &a, sizeof a);
		s_simple(&s, WIRE_UNFOLLOWED, 6, 0, &b, sizeof b);
		s_simple(&s, WIRE_UNFOLLOWED, 5, 0, longer, sizeof longer);
		s_simple(&s, WIRE_UNFOLLOWED, 9, 0, &a, sizeof a);
	}
	s_exit(&s, 5, 700, 0);
	s_exit(&s, 6, 700, 0);
	r = run(&s, NULL, NULL, 0, &st);
	is_int(st.unfollowed, 4, "unfollowed objects: added up");
	is_int(st.unfol_slots, 12295, "unfollowed slots: added up");
	is_int(st.bad_records, 2, "unfollowed: bad length, unknown process: bad records");
	rec_free(r);
	free(s.buf);
}

/* spanstat_begin(""): an empty name is a name like any other. */
static void test_empty_name(void)
{
	struct decode_stats st;
	struct rec *r;
	struct stream s = {0};
	s_hello(&s, 5, 1, WIRE_CLOCK_MONOTONIC, 10, 10, "p");
	s_name(&s, 5, 1, "");
	s_name(&s, 5, 2, "x");
	EVENTS(&s, 5, 5, 100, B(1, 0), B(2, 1), E(2, 1), E(1, 1));
	s_exit(&s, 5, 700, 0);
	r = run(&s, NULL, NULL, 0, &st);
	ok(strstr(r->text, "B 5/5 d0  @100\nB 5/5 d1 x @101\nE 5/5 d1 x @101-102\n"
			   "E 5/5 d0  @100-103\n") != NULL,
	   "empty name: its spans decoded");
	is_int(st.bad_records + st.bad_ids + st.unmatched, 0, "empty name: nothing rejected");
	is_int(st.spans, 2, "empty name: both spans");
	rec_free(r);
	free(s.buf);
}

/* WIRE_CATEGORY: a name's category by their texts, the first one holding;
 * malformed ones are bad records and set nothing. */
static void test_category(void)
{
	struct stream s = {0};
	char rec[WIRE_MAX_RECORD];
	s_hello(&s, 5, 1, WIRE_CLOCK_MONOTONIC, 10, 10, "p");
	s_raw(&s, rec, enc_category(rec, sizeof rec, 5, 5, "read", 4, "io", 2));
	s_raw(&s, rec, enc_category(rec, sizeof rec, 5, 5, "read", 4, "cpu", 3));
	s_raw(&s, rec, enc_category(rec, sizeof rec, 5, 5, "", 0, "empty", 5));
	/* bad: no category, a NUL in it, lengths past the payload */
	s_raw(&s, rec, enc_category(rec, sizeof rec, 5, 5, "none", 4, "", 0));
	s_raw(&s, rec, enc_category(rec, sizeof rec, 5, 5, "nul", 3, "a\0b", 3));
	size_t n = enc_category(rec, sizeof rec, 5, 5, "long", 4, "cat", 3);
	struct wire_category wc = {200, 3, 0};
	memcpy(rec + WIRE_HDR_SIZE, &wc, sizeof wc);
	s_raw(&s, rec, n);
	s_exit(&s, 5, 700, 0);
	struct decoder *d = decoder_new(NULL);
	decoder_feed(d, s.buf, s.len);
	decoder_finish(d);
	const struct strtab *t = decoder_strings(d);
	uint32_t read = strtab_lookup(t, "read", 4), empty = strtab_lookup(t, "", 0);
	ok(read && strcmp(strtab_get(t, strtab_cat(t, read)), "io") == 0,
	   "category: the first one declared holds");
	ok(strcmp(strtab_get(t, strtab_cat(t, empty)), "empty") == 0,
	   "category: the empty name may have one");
	is_int(strtab_lookup(t, "none", 4) != 0, 0, "category: none, nothing interned");
	is_int(strtab_lookup(t, "long", 4) != 0, 0, "category: bad lengths, nothing interned");
	is_int(strtab_lookup(t, "nul", 3) != 0, 0, "category: a NUL in it, nothing interned");
	is_int(t->ncatlog, 2, "category: two names have one");
	is_int(decoder_stats(d)->bad_records, 3, "category: three bad records");
	decoder_free(d);
	free(s.buf);
}

/* A typed argument (RING_CTL_ARG) word: key id, type. */
#define ARG(key, type) \
	RING_CTL(RING_CTL_ARG | (uint64_t)(key) << 8 | (uint64_t)(type) << WIRE_ARG_TYPE_SHIFT)

/* RING_CTL_ARG: each type to the sinks with its key, value and the depth
 * it was recorded at (the span it belongs to); an undefined key or string,
 * an unknown type, a bool past 1 or a payload missing are bad and reach no
 * sink. */
static void test_args(void)
{
	struct decode_stats st;
	struct stream s = {0};
	double half = 0.5;
	uint64_t hb;
	memcpy(&hb, &half, sizeof hb);
	s_hello(&s, 5, 1, WIRE_CLOCK_MONOTONIC, 10, 10, "p");
	s_name(&s, 5, 1, "w");
	s_name(&s, 5, 2, "bytes");
	s_name(&s, 5, 3, "GET");
	EVENTS(&s, 5, 5, 100, ARG(2, WIRE_ARG_U64), 7, B(1, 0), ARG(2, WIRE_ARG_U64), 100,
	       ARG(2, WIRE_ARG_I64), (uint64_t)-5, ARG(2, WIRE_ARG_F64), hb, ARG(2, WIRE_ARG_BOOL),
	       1, ARG(2, WIRE_ARG_STR), 3,
	       /* bad: an undefined key, an undefined string, a type, a bool */
	       ARG(9, WIRE_ARG_U64), 1, ARG(2, WIRE_ARG_STR), 9, ARG(2, 7), 1,
	       ARG(2, WIRE_ARG_BOOL), 2, E(1, 10));
	EVENTS(&s, 5, 5, 200, ARG(2, WIRE_ARG_U64)); /* its payload missing */
	s_exit(&s, 5, 700, 0);
	struct rec *r = run(&s, NULL, NULL, 0, &st);
	ok(strstr(r->text, "A 5/5 d0 bytes t1  @100\n  bits 7\nB 5/5 d0 w @100\n"
			   "A 5/5 d1 bytes t1  @100\n  bits 64\n"
			   "A 5/5 d1 bytes t0  @100\n  bits fffffffffffffffb\n"
			   "A 5/5 d1 bytes t2  @100\n  bits 3fe0000000000000\n"
			   "A 5/5 d1 bytes t3  @100\n  bits 1\n"
			   "A 5/5 d1 bytes t4 GET @100\n"
			   "E 5/5 d0 w @100-110\n") != NULL,
	   "args: each type, outside the span and in it, in the order recorded");
	is_int(st.bad_ids, 4, "args: four bad ones");
	is_int(st.bad_records, 1, "args: a payload missing");
	rec_free(r);
	free(s.buf);
}

/* WIRE_MESSAGE: a thread's text line at its time and depth; malformed ones
 * are bad records and reach no sink. */
static void test_message(void)
{
	struct decode_stats st;
	struct stream s = {0};
	char rec[WIRE_MAX_RECORD];
	s_hello(&s, 5, 1, WIRE_CLOCK_MONOTONIC, 10, 10, "p");
	s_name(&s, 5, 1, "w");
	EVENTS(&s, 5, 5, 100, B(1, 0));
	s_raw(&s, rec, enc_message(rec, sizeof rec, 5, 5, 150, "hello there", 11));
	s_raw(&s, rec, enc_message(rec, sizeof rec, 5, 6, 160, "", 0));
	s_raw(&s, rec, enc_message(rec, sizeof rec, 5, 0, 170, "no thread", 9)); /* bad */
	s_raw(&s, rec, enc_message(rec, sizeof rec, 5, 5, 180, "a\0b", 3));	 /* bad */
	size_t n = enc_message(rec, sizeof rec, 5, 5, 190, "long", 4);
	struct wire_message wm = {190, 40, 0}; /* a length past the payload: bad */
	memcpy(rec + WIRE_HDR_SIZE, &wm, sizeof wm);
	s_raw(&s, rec, n);
	EVENTS(&s, 5, 5, 200, E(1, 0));
	s_exit(&s, 5, 700, 0);
	struct rec *r = run(&s, NULL, NULL, 0, &st);
	ok(strstr(r->text, "B 5/5 d0 w @100\nM 5/5 d1 hello there @150\n") != NULL,
	   "message: its text, time and depth");
	ok(strstr(r->text, "M 5/6 d0  @160\n") != NULL, "message: an empty one, another thread");
	ok(strstr(r->text, "no thread") == NULL && strstr(r->text, "long") == NULL,
	   "message: bad ones reach no sink");
	is_int(st.bad_records, 3, "message: three bad records");
	rec_free(r);
	free(s.buf);
}

static void s_async(struct stream *s, uint32_t tid, uint64_t ts, uint64_t id, enum wire_async_op op,
		    const char *name)
{
	char rec[WIRE_MAX_RECORD];
	s_raw(s, rec,
	      enc_async(rec, sizeof rec, 5, tid, ts, id, op, name, name ? strlen(name) : 0));
}

/* WIRE_ASYNC: an async span begun on one thread, entered by two (at once
 * for a while: busy counts that once), a child begun inside the entered
 * span, bad records, enters/exits/ends of no span, and one left open at
 * the process's exit, ended there unfinished with its thread's exit. */
static void test_async(void)
{
	struct decode_stats st;
	struct stream s = {0};
	char rec[WIRE_MAX_RECORD];
#define AS(tid, ts, id, op, name) s_async(&s, tid, ts, id, op, name)
	s_hello(&s, 5, 1, WIRE_CLOCK_MONOTONIC, 10, 10, "p");
	AS(5, 100, 7, WIRE_ASYNC_BEGIN, "req");
	AS(6, 200, 7, WIRE_ASYNC_ENTER, NULL);
	AS(6, 250, 8, WIRE_ASYNC_BEGIN, "child"); /* inside req on thread 6 */
	AS(7, 300, 7, WIRE_ASYNC_ENTER, NULL);
	AS(6, 400, 7, WIRE_ASYNC_EXIT, NULL);
	AS(7, 500, 7, WIRE_ASYNC_EXIT, NULL);
	AS(6, 600, 7, WIRE_ASYNC_EXIT, NULL);	/* not inside: unmatched */
	AS(6, 610, 99, WIRE_ASYNC_ENTER, NULL); /* no such span: unmatched */
	AS(5, 700, 7, WIRE_ASYNC_END, NULL);
	AS(5, 710, 7, WIRE_ASYNC_END, NULL); /* ended already: unmatched */
	AS(8, 720, 8, WIRE_ASYNC_ENTER, NULL);
	AS(5, 730, 0, WIRE_ASYNC_BEGIN, "zero"); /* bad: id 0 */
	size_t n = enc_async(rec, sizeof rec, 5, 5, 740, 3, WIRE_ASYNC_ENTER, NULL, 0);
	struct wire_async wa = {740, 3, 9, 0}; /* bad: no such op */
	memcpy(rec + WIRE_HDR_SIZE, &wa, sizeof wa);
	s_raw(&s, rec, n);
#undef AS
	s_exit(&s, 5, 900, 0);
	struct rec *r = run(&s, NULL, NULL, 0, &st);
	static const char *const want[] = {
		"AB 5/5 #7 req in #0 @100\n",
		"AN 5/6 #7 req @200\n",
		"AB 5/6 #8 child in #7 @250\n",
		"AN 5/7 #7 req @300\n",
		"AX 5/6 #7 req @400\n",
		"AX 5/7 #7 req @500\n",
		"AE 5/5 #7 req @100-700 busy=300 enters=2 threads=2\n",
		"AN 5/8 #8 child @720\n",
		"AX 5/8 #8 child @900 U\n",
		"AE 5/6 #8 child @250-900 busy=180 enters=1 threads=1 U\nX 5 sig=0 @900\n"};
	const char *at = r->text;
	for (size_t i = 0; at && i < sizeof want / sizeof want[0]; i++)
		if ((at = strstr(at, want[i])) == NULL)
			diag("missing or out of order: %s", want[i]);
	ok(at != NULL, "async: begin, enters on two threads, busy once, child, unfinished at exit");
	ok(strstr(r->text, "zero") == NULL, "async: id 0 reaches no sink");
	is_int(st.bad_records, 2, "async: two bad records");
	is_int(st.unmatched, 3, "async: three enters, exits or ends of no span");
	rec_free(r);
	free(s.buf);
}

/* Values: WIRE_VALUES says how many words follow each begin and end; the
 * decoder puts them after the source's own (off-CPU, here a callback) and
 * hands the normaliser cumulative values, the sinks END differences. */
struct vrec {
	uint64_t v[3];
	unsigned ends, with;
};

static void vrec_event(void *arg, const struct span_event *ev)
{
	struct vrec *r = arg;
	if (ev->kind != SPAN_END)
		return;
	r->ends++;
	if (ev->vals) {
		r->with++;
		memcpy(r->v, ev->vals, sizeof r->v);
	}
}

static uint64_t v_off(void *ctx, uint32_t pid, uint32_t tid, uint64_t ns)
{
	(void)ctx;
	(void)pid;
	(void)tid;
	return ns / 10; /* a tenth of every interval is off-CPU */
}

/* begins and ends the decoder said came without the target's values */
static unsigned v_unvalued_n;
static uint32_t v_layout; /* the layout v_run's decoder expects (0: unchecked) */

static void v_unvalued(void *ctx, uint32_t pid)
{
	(void)ctx;
	if (pid == 7)
		v_unvalued_n++;
}

static void v_run(const struct stream *s, struct vrec *r, struct decode_stats *st)
{
	memset(r, 0, sizeof *r);
	v_unvalued_n = 0;
	struct decoder *d = decoder_new(NULL);
	struct decoder_values dv = {3, 1, 0, v_off, NULL, NULL, v_unvalued, v_layout};
	ok(decoder_set_values(d, &dv) == 0, "the decoder takes a value layout");
	decoder_add_sink(d, (struct span_sink){vrec_event, r});
	decoder_feed(d, s->buf, s->len);
	decoder_finish(d);
	*st = *decoder_stats(d);
	decoder_free(d);
}

static void test_values(void)
{
	struct stream s = {0};
	struct vrec r;
	struct decode_stats st;
	struct wire_values wv = {2, 0};
	s_hello(&s, 7, 1, WIRE_CLOCK_MONOTONIC, 1000, 1000, "v");
	s_simple(&s, WIRE_VALUES, 7, 0, &wv, sizeof wv);
	s_name(&s, 7, 1, "a");
	EVENTS(&s, 7, 8, 1000, B(1, 0), 10, 500, E(1, 1000), 25, 800);
	v_run(&s, &r, &st);
	is_int(r.with, 1, "the span ends with values");
	is_int(r.v[0], 100, "the source's: off-CPU over its 1000 ns");
	is_int(r.v[1], 15, "the target's first value: 25 - 10");
	is_int(r.v[2], 300, "its second: 800 - 500");
	is_int(st.bad_records, 0, "nothing rejected");
	is_int(v_unvalued_n, 0, "every value came: none unknown");
	free(s.buf);

	/* a process that sends another count: its words skipped, values 0 */
	memset(&s, 0, sizeof s);
	wv.count = 1;
	s_hello(&s, 7, 1, WIRE_CLOCK_MONOTONIC, 1000, 1000, "v");
	s_simple(&s, WIRE_VALUES, 7, 0, &wv, sizeof wv);
	s_name(&s, 7, 1, "a");
	EVENTS(&s, 7, 8, 1000, B(1, 0), 10, E(1, 1000), 25);
	v_run(&s, &r, &st);
	is_int(r.ends, 1, "a process with another count still frames its events");
	is_int(r.v[1], 0, "its values are unknown: 0");
	is_int(r.v[0], 100, "the source's own still count");
	is_int(v_unvalued_n, 2, "the begin and the end are said to lack them");
	free(s.buf);

	/* as many values, of the layout asked for, of another one, or of one
	 * not told (a library that did not say it) */
	const struct {
		uint32_t want, got;
		unsigned with, unvalued;
		const char *what;
	} lay[] = {
		{0x1234, 0x1234, 300, 0, "the layout asked for: its values"},
		{0x1234, 0x4321, 0, 2, "another layout, as many values: unknown, said"},
		{0x1234, 0, 300, 0, "a layout not told: its values, as before"},
		{0, 0x4321, 300, 0, "a layout not asked for: its values, as before"},
	};
	for (size_t k = 0; k < sizeof lay / sizeof lay[0]; k++) {
		memset(&s, 0, sizeof s);
		struct wire_values lv = {2, lay[k].got};
		s_hello(&s, 7, 1, WIRE_CLOCK_MONOTONIC, 1000, 1000, "v");
		s_simple(&s, WIRE_VALUES, 7, 0, &lv, sizeof lv);
		s_name(&s, 7, 1, "a");
		EVENTS(&s, 7, 8, 1000, B(1, 0), 10, 500, E(1, 1000), 25, 800);
		v_layout = lay[k].want;
		v_run(&s, &r, &st);
		v_layout = 0;
		is_int(r.ends, 1, "layout: the span framed");
		is_int(r.v[2], lay[k].with, lay[k].what);
		is_int(v_unvalued_n, lay[k].unvalued, lay[k].what);
		is_int(st.bad_records, 0, "layout: nothing rejected");
		free(s.buf);
	}

	/* a process that sends no WIRE_VALUES (its SPANSTAT_VALUES gone) */
	memset(&s, 0, sizeof s);
	s_hello(&s, 7, 1, WIRE_CLOCK_MONOTONIC, 1000, 1000, "v");
	s_name(&s, 7, 1, "a");
	EVENTS(&s, 7, 8, 1000, B(1, 0), E(1, 1000));
	v_run(&s, &r, &st);
	is_int(r.ends, 1, "a process without values frames its events");
	is_int(v_unvalued_n, 2, "its begin and end are said to lack them");
	free(s.buf);

	/* value words cut off by the record's end */
	memset(&s, 0, sizeof s);
	wv.count = 2;
	s_hello(&s, 7, 1, WIRE_CLOCK_MONOTONIC, 1000, 1000, "v");
	s_simple(&s, WIRE_VALUES, 7, 0, &wv, sizeof wv);
	s_name(&s, 7, 1, "a");
	EVENTS(&s, 7, 8, 1000, B(1, 0), 10, 500, E(1, 1000), 25);
	v_run(&s, &r, &st);
	is_int(st.bad_records, 1, "missing value words: a bad record");
	wv.count = 99;
	s_simple(&s, WIRE_VALUES, 7, 0, &wv, sizeof wv);
	v_run(&s, &r, &st);
	is_int(st.bad_records, 2, "a count beyond SPANMETRIC_MAX is refused");
	free(s.buf);
}

/* decoder_state and decoder_restate: a decoder that lost the records with
 * a process's HELLO and names picks it up from the state; one that lost
 * nothing is not changed by it; a process the state does not list ends. */
static struct decoder *rs_new(struct rec **rp)
{
	struct decoder *d = decoder_new(NULL);
	struct rec *r = *rp = calloc(1, sizeof *r); /* large: not on the stack */
	r->d = d;
	decoder_add_sink(d, (struct span_sink){rec_event, r});
	return d;
}

static void test_restate(void)
{
	struct stream lost = {0}, after = {0};
	s_hello(&lost, 5, 1, WIRE_CLOCK_MONOTONIC, 10, 10, "p");
	s_name(&lost, 5, 1, "a");
	s_name(&lost, 5, 2, "b");
	s_thread_name(&lost, 5, 5, "w");
	EVENTS(&lost, 5, 5, 100, B(1, 0), E(1, 5));
	after.nseq = lost.nseq;
	memcpy(after.seq, lost.seq, sizeof lost.seq);
	EVENTS(&after, 5, 5, 200, B(2, 0), B(1, 1), E(1, 1), E(2, 1));
	s_exit(&after, 5, 700, 0);

	struct rec *ra, *rb, *rc, *rd;
	struct decoder *a = rs_new(&ra), *b = rs_new(&rb), *c = rs_new(&rc), *dd = rs_new(&rd);
	decoder_feed(a, lost.buf, lost.len);
	uint8_t *st = NULL;
	size_t cap = 0, len = 0;
	is_int(decoder_state(a, &st, &cap, &len), 0, "restate: a state taken");
	size_t before = ra->len;
	decoder_feed(a, after.buf, after.len);
	decoder_finish(a);

	/* b lost the first records: seeded with a's strings, it takes the state */
	const struct strtab *t = decoder_strings(a);
	uint32_t i = 1;
	for (; i < t->n; i++)
		if (decoder_seed_string(b, t->str[i], t->len[i]) != i)
			break;
	is_int(i, t->n, "restate: the strings seeded with their ids");
	is_int(decoder_restate(b, st, len), 0, "restate: taken");
	decoder_feed(b, after.buf, after.len);
	decoder_finish(b);
	ok(strstr(rb->text, "P 5 ppid=1 p @10\n") != NULL,
	   "restate: the process starts as its HELLO said");
	ok(strstr(rb->text, ra->text + before) != NULL,
	   "restate: the later spans are the live ones");
	is_int(decoder_stats(b)->spans, 2, "restate: the later spans counted");
	is_int(decoder_stats(b)->lost_records, 1, "restate: the records lost counted");
	ok(strstr(rb->text, "T 5/5 w @") != NULL, "restate: the thread named as the live one was");

	/* c took everything: the state changes nothing */
	decoder_feed(c, lost.buf, lost.len);
	is_int(decoder_restate(c, st, len), 0, "restate: taken again");
	decoder_feed(c, after.buf, after.len);
	decoder_finish(c);
	is_str(rc->text, ra->text, "restate: nothing changes for a decoder that lost nothing");
	ok(stats_eq(decoder_stats(c), decoder_stats(a)), "restate: nor its statistics");

	/* dd knows a process the state does not list: it ended unseen */
	struct stream other = {0};
	s_hello(&other, 9, 1, WIRE_CLOCK_MONOTONIC, 50, 50, "q");
	for (i = 1; i < t->n; i++) /* the capture's string ids, as a replay's */
		decoder_seed_string(dd, t->str[i], t->len[i]);
	decoder_feed(dd, other.buf, other.len);
	decoder_feed(dd, lost.buf, lost.len);
	/* and a thread of p the state does not list, a span open in it */
	struct stream gone = {0};
	EVENTS(&gone, 5, 6, 150, B(1, 0));
	decoder_feed(dd, gone.buf, gone.len);
	size_t at = rd->len;
	is_int(decoder_restate(dd, st, len), 0, "restate: taken by a third");
	ok(strstr(rd->text, "X 9 ") != NULL, "restate: a process the state does not list ends");
	ok(strstr(rd->text, "E 5/6 d0 a @150-150 U\n") != NULL,
	   "restate: a thread the state does not list ends, its open span unfinished where it "
	   "was last seen");
	ok(strstr(rd->text + at, " 5/5 ") == NULL, "restate: the threads listed go on");
	free(gone.buf);
	is_int(decoder_restate(dd, st, len - 1), -EINVAL, "restate: a state cut short is refused");
	/* the thread names last: pid 5, tid 5, the name's string id, after
	 * their count; a state of format 3 ends before them */
	is_int(st[len - 4], 1, "restate: one thread in the state");
	is_int(decoder_restate(dd, st, len - 4), -EINVAL,
	       "restate: a state without the thread names is cut short");
	struct rec *re;
	struct decoder *e = rs_new(&re);
	for (i = 1; i < t->n; i++)
		decoder_seed_string(e, t->str[i], t->len[i]);
	decoder_restate_unnamed(e);
	is_int(decoder_restate(e, st, len), -EINVAL, "restate: format 3's: names are more bytes");
	is_int(decoder_restate(e, st, len - 4), 0, "restate: format 3's taken without them");
	ok(strstr(re->text, "P 5 ppid=1 p @10\n") != NULL && !strstr(re->text, "T 5/5 w"),
	   "restate: format 3's: the process starts, its thread unnamed");
	decoder_free(e);
	rec_free(re);

	free(st);
	decoder_free(a);
	decoder_free(b);
	decoder_free(c);
	decoder_free(dd);
	rec_free(ra);
	rec_free(rb);
	rec_free(rc);
	rec_free(rd);
	free(lost.buf);
	free(after.buf);
	free(other.buf);
}

/* A state keeps which processes' values are of another layout: a replay
 * that lost their WIRE_VALUES still says their values are unknown; a state
 * without such a process is as before (no list after the processes). */
static void test_restate_layout(void)
{
	struct stream lost = {0}, after = {0};
	struct wire_values wv = {2, 0x4321};
	s_hello(&lost, 7, 1, WIRE_CLOCK_MONOTONIC, 1000, 1000, "v");
	s_simple(&lost, WIRE_VALUES, 7, 0, &wv, sizeof wv);
	s_name(&lost, 7, 1, "a");
	after.nseq = lost.nseq;
	memcpy(after.seq, lost.seq, sizeof lost.seq);
	EVENTS(&after, 7, 8, 1000, B(1, 0), 10, 500, E(1, 1000), 25, 800);
	struct decoder_values dv = {3, 1, 0, v_off, NULL, NULL, v_unvalued, 0x1234};
	uint8_t *st = NULL, *st0 = NULL;
	size_t cap = 0, len = 0, cap0 = 0, len0 = 0;
	struct decoder *a = decoder_new(NULL), *b = decoder_new(NULL);
	decoder_set_values(a, &dv);
	decoder_set_values(b, &dv);
	decoder_feed(a, lost.buf, lost.len);
	is_int(decoder_state(a, &st, &cap, &len), 0, "layout state: taken");
	/* the same process of the layout asked for: no list */
	struct decoder *e = decoder_new(NULL);
	decoder_set_values(e, &dv);
	wv.layout = 0x1234;
	struct stream mine = {0};
	s_hello(&mine, 7, 1, WIRE_CLOCK_MONOTONIC, 1000, 1000, "v");
	s_simple(&mine, WIRE_VALUES, 7, 0, &wv, sizeof wv);
	s_name(&mine, 7, 1, "a");
	decoder_feed(e, mine.buf, mine.len);
	is_int(decoder_state(e, &st0, &cap0, &len0), 0, "layout state: taken of the right one");
	is_int(len, len0 + 2, "layout state: a list of one pid after the processes");
	ok(len0 <= len && memcmp(st, st0, len0) == 0, "layout state: the processes as before");

	const struct strtab *t = decoder_strings(a);
	for (uint32_t i = 1; i < t->n; i++)
		decoder_seed_string(b, t->str[i], t->len[i]);
	is_int(decoder_restate(b, st, len), 0, "layout state: restated");
	struct vrec r;
	memset(&r, 0, sizeof r);
	decoder_add_sink(b, (struct span_sink){vrec_event, &r});
	v_unvalued_n = 0;
	decoder_feed(b, after.buf, after.len);
	decoder_finish(b);
	is_int(r.ends, 1, "layout state: the later span framed");
	is_int(r.v[2], 0, "layout state: its values not taken");
	is_int(v_unvalued_n, 2, "layout state: its begin and end said to lack them");
	is_int(decoder_restate(b, st, len - 1), -EINVAL,
	       "layout state: a list cut short is refused");
	st[len - 1] = 9; /* a pid the state does not list */
	is_int(decoder_restate(b, st, len), -EINVAL, "layout state: a pid not listed is refused");

	free(st);
	free(st0);
	decoder_free(a);
	decoder_free(b);
	decoder_free(e);
	free(lost.buf);
	free(after.buf);
	free(mine.buf);
}

int main(void)
{
	test_values();
	test_round_trip();
	test_garbage();
	test_bad_input();
	test_matching();
	test_clock();
	test_limits();
	test_random();
	test_symbols();
	test_names_view();
	test_names_where();
	test_lost();
	test_empty_name();
	test_category();
	test_message();
	test_async();
	test_args();
	test_restate();
	test_restate_layout();
	ok(raw_replays > 0 && raw_diffs == 0,
	   "every run's raw capture replays to the same events and statistics");
	ok(capo_runs > 0 && capo_diffs == 0,
	   "captured only, every run's capture, strings and drops are those of its decode");
	return tap_done();
}
