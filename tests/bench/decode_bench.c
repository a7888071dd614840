/* decode_bench.c: decoding + aggregation throughput and peak memory.
 * Builds a real wire stream in memory with encode.h: one TSC process, 4
 * threads each walking the same random call tree of ~1,000 unique stack paths
 * (a begin/end pair per node, deltas of 5..50 ticks), full 4 KiB records
 * interleaved round robin as they would come off the pipe.  A chunk of 64,000
 * spans is built once and replayed with its record bases moved forward in
 * time, so the input itself stays small (about 1 MiB) however many spans go
 * through.  The decoder, with spantree as its only sink, is fed 64 KiB at a
 * time (a pipe read's worth).
 *
 * usage: decode_bench [SPANS [RUNS]]   (default 10,000,000 spans, 5 runs)
 * prints the median spans/s over the runs, the spans and unique stacks
 * aggregated, and the peak RSS (getrusage ru_maxrss) of the whole process. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "decoder.h"
#include "encode.h"
#include "spantree.h"

#define NODES 1000
#define NAMES 60
#define THREADS 4
#define PASSES 16 /* per thread per chunk */
#define PID 4242

static uint32_t parent[NODES + 1], nname[NODES + 1];
static uint32_t first_child[NODES + 1], next_sib[NODES + 1];
static uint64_t rng = 88172645463325252u;

static uint32_t bench_rand(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

struct chunk {
	uint8_t *buf;
	size_t len, cap;
	size_t *base_off; /* offsets of every events record's base word */
	uint64_t *base0;
	size_t nrec, caprec;
	uint64_t period; /* ticks a replay must move forward */
};

struct thr {
	uint64_t rec[WIRE_MAX_RECORD / 8];
	size_t nw;
	uint64_t ts, last, base;
	uint32_t tid, seq;
	uint8_t *out; /* this thread's finished records */
	size_t outlen, outcap;
};

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p) {
		perror("decode_bench");
		exit(2);
	}
	return p;
}

static void thr_flush(struct thr *t)
{
	if (!t->nw)
		return;
	size_t len = enc_events_close(t->rec, PID, t->tid, t->base, t->seq++, 0, t->nw);
	if (t->outlen + len > t->outcap) {
		t->outcap = t->outcap ? 2 * t->outcap : 1 << 20;
		t->out = xrealloc(t->out, t->outcap);
	}
	memcpy(t->out + t->outlen, t->rec, len);
	t->outlen += len;
	t->nw = 0;
}

static void thr_event(struct thr *t, enum wire_op op, uint32_t id)
{
	if (t->nw == ENC_EVENTS_MAX_WORDS)
		thr_flush(t);
	t->ts += 5 + bench_rand(46);
	if (!t->nw) {
		t->base = t->ts;
		t->last = t->ts;
	}
	t->rec[ENC_EVENTS_FIRST_WORD + t->nw++] = wire_event(op, id, t->ts - t->last);
	t->last = t->ts;
}

static void walk(struct thr *t, uint32_t n)
{
	for (uint32_t c = first_child[n]; c; c = next_sib[c]) {
		thr_event(t, WIRE_OP_BEGIN, nname[c]);
		walk(t, c);
		thr_event(t, WIRE_OP_END, nname[c]);
	}
}

static void chunk_put(struct chunk *c, const void *p, size_t n)
{
	if (c->len + n > c->cap) {
		c->cap = c->cap ? 2 * c->cap + n : n + (1 << 20);
		c->buf = xrealloc(c->buf, c->cap);
	}
	memcpy(c->buf + c->len, p, n);
	c->len += n;
}

static void build(struct chunk *c)
{
	/* a random tree, depth at most 8 */
	uint32_t depth[NODES + 1] = {0};
	for (uint32_t i = 1; i <= NODES; i++) {
		uint32_t p;
		do
			p = bench_rand(i);
		while (depth[p] >= 8);
		parent[i] = p;
		depth[i] = depth[p] + 1;
		nname[i] = 1 + bench_rand(NAMES);
	}
	for (uint32_t i = NODES; i >= 1; i--) { /* children in index order */
		next_sib[i] = first_child[parent[i]];
		first_child[parent[i]] = i;
	}
	struct thr *t = calloc(THREADS, sizeof *t);
	for (int k = 0; k < THREADS; k++) {
		t[k].tid = PID + 1 + (uint32_t)k;
		t[k].ts = 1000000 + (uint64_t)k;
		for (int p = 0; p < PASSES; p++)
			walk(&t[k], 0);
		thr_flush(&t[k]);
		if (t[k].ts > c->period)
			c->period = t[k].ts;
	}
	/* interleave the threads' records round robin */
	size_t off[THREADS] = {0};
	for (int more = 1; more;) {
		more = 0;
		for (int k = 0; k < THREADS; k++) {
			if (off[k] >= t[k].outlen)
				continue;
			struct wire_hdr h;
			memcpy(&h, t[k].out + off[k], sizeof h);
			if (c->nrec == c->caprec) {
				c->caprec = c->caprec ? 2 * c->caprec : 1024;
				c->base_off =
					xrealloc(c->base_off, c->caprec * sizeof *c->base_off);
				c->base0 = xrealloc(c->base0, c->caprec * sizeof *c->base0);
			}
			c->base_off[c->nrec] = c->len + WIRE_HDR_SIZE;
			memcpy(&c->base0[c->nrec], t[k].out + off[k] + WIRE_HDR_SIZE, 8);
			c->nrec++;
			chunk_put(c, t[k].out + off[k], h.len);
			off[k] += h.len;
			more = 1;
		}
	}
	for (int k = 0; k < THREADS; k++)
		free(t[k].out);
	free(t);
}

static void feed(struct decoder *d, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i += 65536)
		decoder_feed(d, p + i, n - i < 65536 ? n - i : 65536);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	uint64_t want = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000;
	int runs = argc > 2 ? atoi(argv[2]) : 5;
	if (runs < 1 || runs > 100)
		runs = 5;
	struct chunk c = {0};
	build(&c);
	uint64_t chunk_spans = (uint64_t)NODES * PASSES * THREADS;
	uint64_t reps = (want + chunk_spans - 1) / chunk_spans;

	/* the preamble: hello and name definitions */
	uint8_t pre[WIRE_MAX_RECORD * (NAMES + 1)];
	size_t np =
		enc_hello(pre, sizeof pre, PID, 1, WIRE_CLOCK_TSC, 1000000, 2000000000, "bench", 5);
	for (uint32_t i = 1; i <= NAMES; i++) {
		char nm[32];
		int n = snprintf(nm, sizeof nm, "function_%02u", i);
		np += enc_name(pre + np, sizeof pre - np, PID, 0, i, WIRE_NAME_STRING, 0, 0, nm,
			       (size_t)n);
	}
	struct spanclock clk = {.tsc0 = 0,
				.mono0 = 1000000000,
				.mult = 1717986918u,
				.shift = 32,
				.valid = 1}; /* 2.5 GHz */

	double *rate = calloc((size_t)runs, sizeof *rate);
	uint64_t spans = 0;
	size_t nodes = 0;
	for (int r = 0; r < runs; r++) {
		struct decoder *d = decoder_new(&clk);
		struct span_trees st;
		span_trees_init(&st);
		decoder_add_sink(d, (struct span_sink){span_trees_event, &st});
		decoder_feed(d, pre, np);
		double t0 = now(), busy = 0;
		for (uint64_t k = 0; k < reps; k++) {
			if (k) { /* move the chunk forward in time, untimed */
				double t1 = now();
				for (size_t i = 0; i < c.nrec; i++) {
					uint64_t b = c.base0[i] + k * c.period;
					memcpy(c.buf + c.base_off[i], &b, 8);
				}
				busy += now() - t1;
			}
			feed(d, c.buf, c.len);
		}
		decoder_finish(d);
		double el = now() - t0 - busy;
		const struct decode_stats *s = decoder_stats(d);
		spans = s->spans;
		nodes = st.nodes;
		if (s->bad_bytes || s->bad_records || s->bad_ids || s->unmatched || s->unfinished) {
			fprintf(stderr, "decode_bench: unexpected errors in the stream\n");
			return 1;
		}
		rate[r] = (double)spans / el;
		span_trees_release(&st);
		decoder_free(d);
	}
	qsort(rate, (size_t)runs, sizeof *rate, cmp_dbl);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("spans %" PRIu64 " stacks %zu threads %d runs %d\n", spans, nodes, THREADS, runs);
	printf("median %.1f Mspans/s (min %.1f, max %.1f), %.2f ns/span\n", rate[runs / 2] / 1e6,
	       rate[0] / 1e6, rate[runs - 1] / 1e6, 1e9 / rate[runs / 2]);
	printf("peak RSS %.1f MiB (input chunk %.1f MiB)\n", ru.ru_maxrss / 1024.0,
	       c.len / 1048576.0);
	free(rate);
	free(c.buf);
	free(c.base_off);
	free(c.base0);
	return 0;
}
