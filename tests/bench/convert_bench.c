/* convert_bench.c: conversion cost per span from a decoded span stream into
 * Perfetto (perfetto.c, streaming) and into JSON (spantree.c aggregation, then
 * json.c over the aggregated tree).  The stream is generated on the fly: N
 * balanced begin/end pairs over 4 threads of one process, about 1000 unique
 * names, nesting up to 5 deep, so generation costs a few ns per event; its
 * own cost is measured by a null sink and subtracted.  A child's name is
 * one of 4 picked by its parent's, so there are about 1,400 unique stacks
 * (4^0 + ... + 4^5) over ~1,000 names, as in a real program's call tree.  Prints ns per span,
 * the median of several runs, and the peak RSS of the process.
 *   convert_bench [SPANS [RUNS [OUT]]]   (defaults 10000000 5 /dev/null) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "writer.h"

#define NTHREADS 4
#define NNAMES 1000
#define MAXDEPTH 5

static uint64_t bench_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct gen {
	uint64_t rng, ts;
	uint32_t names[NNAMES];
	struct {
		uint32_t depth, name[MAXDEPTH];
		uint64_t begin[MAXDEPTH];
	} th[NTHREADS];
};

static uint64_t gen_rand(struct gen *g)
{
	g->rng ^= g->rng << 13;
	g->rng ^= g->rng >> 7;
	g->rng ^= g->rng << 17;
	return g->rng;
}

/* Feeds n begin/end pairs to sink; the stream is the same for every sink. */
static void gen_run(struct strtab *st, uint64_t n, struct span_sink sink)
{
	static struct gen g;
	memset(&g, 0, sizeof g);
	g.rng = 0x9e3779b97f4a7c15ull;
	g.ts = 1000000000;
	for (int i = 0; i < NNAMES; i++) {
		char name[32];
		int len = snprintf(name, sizeof name, "function_%04d", i);
		g.names[i] = strtab_intern(st, name, (size_t)len);
	}
	struct span_event ev = {.pid = 4242, .ts = g.ts};
	ev.kind = SPAN_PROCESS;
	ev.tid = 4242;
	ev.name = g.names[0];
	sink.event(sink.arg, &ev);
	for (int t = 0; t < NTHREADS; t++) {
		ev.kind = SPAN_THREAD;
		ev.tid = 4242 + (uint32_t)t;
		ev.name = g.names[t + 1];
		sink.event(sink.arg, &ev);
	}
	ev.name = 0;
	uint64_t begun = 0;
	int t = 0;
	while (begun < n || g.th[0].depth + g.th[1].depth + g.th[2].depth + g.th[3].depth) {
		uint64_t r = gen_rand(&g);
		if ((r & 15) == 0)
			t = (int)((r >> 4) % NTHREADS);
		ev.tid = 4242 + (uint32_t)t;
		g.ts += 20 + (r >> 60);
		ev.ts = g.ts;
		ev.flags = 0;
		uint32_t *d = &g.th[t].depth;
		int begin = begun < n && *d < MAXDEPTH && (*d == 0 || (r >> 8) % 2);
		if (begin) {
			ev.kind = SPAN_BEGIN;
			uint32_t parent = *d ? g.th[t].name[*d - 1] : 0;
			ev.name = g.names[(parent * 2654435761u + ((r >> 20) & 3) * 97) % NNAMES];
			ev.depth = *d;
			g.th[t].name[*d] = ev.name;
			g.th[t].begin[(*d)++] = ev.ts;
			begun++;
		} else if (*d) {
			ev.kind = SPAN_END;
			ev.depth = --*d;
			ev.name = g.th[t].name[*d];
			ev.begin_ts = g.th[t].begin[*d];
		} else {
			t = (t + 1) % NTHREADS;
			continue;
		}
		sink.event(sink.arg, &ev);
	}
}

static void null_event(void *arg, const struct span_event *ev)
{
	*(volatile uint64_t *)arg += ev->ts;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

enum mode { M_NULL, M_PERFETTO, M_JSON };

/* One timed conversion; returns elapsed ns. */
static uint64_t bench_once(enum mode m, uint64_t n, const char *out)
{
	struct strtab st;
	strtab_init(&st);
	struct run_head head = {.strings = &st, .spans = true, .runs = 1};
	struct evlist evl = {0};
	head.evl = &evl;
	FILE *fp = fopen(out, "w");
	if (!fp) {
		perror(out);
		exit(2);
	}
	static char fbuf[1 << 16];
	setvbuf(fp, fbuf, _IOFBF, sizeof fbuf);
	volatile uint64_t sum = 0;
	uint64_t t0 = bench_ns();
	if (m == M_NULL) {
		gen_run(&st, n, (struct span_sink){null_event, (void *)&sum});
	} else if (m == M_PERFETTO) {
		struct writer w = {.ops = &perfetto_writer_ops, .fp = fp, .head = &head};
		w.ops->start(&w, &head);
		gen_run(&st, n, (struct span_sink){w.ops->span, &w});
		if (w.ops->finish(&w, NULL) < 0)
			fprintf(stderr, "perfetto: write error\n");
		w.ops->release(&w);
	} else {
		struct span_trees tree;
		span_trees_init(&tree);
		gen_run(&st, n, (struct span_sink){span_trees_event, &tree});
		struct report rep = {.head = &head, .nruns = 1, .spans = &tree};
		struct decode_stats ds = {0};
		rep.dstats = &ds;
		struct writer w = {.ops = &json_writer_ops, .fp = fp, .head = &head};
		if (w.ops->finish(&w, &rep) < 0)
			fprintf(stderr, "json: write error\n");
		w.ops->release(&w);
		span_trees_release(&tree);
	}
	fclose(fp);
	uint64_t dt = bench_ns() - t0;
	strtab_release(&st);
	return dt;
}

static uint64_t bench_median(enum mode m, uint64_t n, int runs, const char *out)
{
	uint64_t t[32];
	if (runs > 32)
		runs = 32;
	for (int i = 0; i < runs; i++)
		t[i] = bench_once(m, n, out);
	qsort(t, (size_t)runs, sizeof t[0], cmp_u64);
	return t[runs / 2];
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000;
	int runs = argc > 2 ? atoi(argv[2]) : 5;
	const char *out = argc > 3 ? argv[3] : "/dev/null";
	const char *only = getenv("CONVERT_BENCH_ONLY"); /* perfetto|json: RSS runs */
	if (runs < 1)
		runs = 1;
	uint64_t base = bench_median(M_NULL, n, runs, out);
	printf("spans %llu, runs %d, output %s\n", (unsigned long long)n, runs, out);
	printf("stream generation: %.1f ns/span (subtracted below)\n", (double)base / (double)n);
	if (!only || !strcmp(only, "perfetto")) {
		uint64_t pf = bench_median(M_PERFETTO, n, runs, out);
		printf("perfetto: %.1f ns/span (%.1f with generation)\n",
		       (double)(pf - (pf > base ? base : pf)) / (double)n, (double)pf / (double)n);
	}
	if (!only || !strcmp(only, "json")) {
		uint64_t js = bench_median(M_JSON, n, runs, out);
		printf("json (aggregation + document): %.1f ns/span (%.1f with generation)\n",
		       (double)(js - (js > base ? base : js)) / (double)n, (double)js / (double)n);
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("peak RSS: %ld KiB\n", ru.ru_maxrss);
	return 0;
}
