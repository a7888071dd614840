/* fuzz_decode.c: libFuzzer target for the span wire decoder (lib/spans/decoder.c)
 * with the aggregation (spantree.c) and the folded, JSON and Perfetto writers
 * behind it (Perfetto streaming as a sink, as in a real session).
 * Run by tests/fuzz/fuzz.mk (`make fuzz`, FUZZ_SECONDS=30 by default) over
 * the seed corpus in tests/fuzz/corpus/, made by mkcorpus.c from encode.h.
 *
 * Input: 3 control bytes, then the byte stream.  Control byte 0: bits 0-1
 * the number of extra cuts (0-2, so 1-3 feeds), bit 2 a valid TSC clock,
 * bit 3 folded thread roots; bytes 1 and 2 place the cuts (n * byte / 256).
 * Besides the sanitizers, it checks that what the decoder emits is balanced:
 * every begin at the thread's depth, every end closing the innermost span
 * and never before its begin, and as many ends as begins at the end; that
 * the JSON parses (cJSON) and is valid UTF-8 throughout; and that the
 * Perfetto trace is a well-formed sequence of TracePacket fields whose own
 * fields all have valid wire types and lengths within bounds.
 *
 * With FUZZ_OUT_DIR set, each input's JSON and trace are also written there
 * (N.json, N.pftrace) so that tests/fuzz/check-outputs can hand them to
 * their real consumers, jq and protoc. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "decoder.h"
#include "spantree.h"
#include "utf8esc.h"
#include "writer.h"

#include "fuzzcheck.h"

#define FUZZ_SLOTS 4096

struct fuzz_check {
	uint64_t key[FUZZ_SLOTS];
	uint32_t depth[FUZZ_SLOTS];
	uint64_t begins, ends;
	uint64_t abegins, aends, enters, exits; /* async spans' */
};

static uint32_t *fuzz_depth(struct fuzz_check *c, uint32_t pid, uint32_t tid)
{
	uint64_t k = ((uint64_t)pid << 32 | tid) + 1;
	for (uint32_t i = (uint32_t)(k * 0x9e3779b97f4a7c15u >> 52), n = 0; n < FUZZ_SLOTS;
	     i = (i + 1) % FUZZ_SLOTS, n++) {
		if (c->key[i] == k)
			return &c->depth[i];
		if (!c->key[i]) {
			c->key[i] = k;
			return &c->depth[i];
		}
	}
	return NULL;
}

static void fuzz_event(void *arg, const struct span_event *ev)
{
	struct fuzz_check *c = arg;
	switch (ev->kind) { /* async spans: balanced, busy within begin..end */
	case SPAN_ASYNC_BEGIN:
		c->abegins++;
		return;
	case SPAN_ASYNC_ENTER:
		c->enters++;
		return;
	case SPAN_ASYNC_EXIT:
		c->exits++;
		return;
	case SPAN_ASYNC_END:
		c->aends++;
		if (ev->aid == 0 || ev->ts < ev->begin_ts || ev->value < 0 ||
		    (uint64_t)ev->value > ev->ts - ev->begin_ts || ev->threads > ev->enters)
			abort();
		return;
	default:
		break;
	}
	if (ev->kind != SPAN_BEGIN && ev->kind != SPAN_END)
		return;
	uint32_t *d = fuzz_depth(c, ev->pid, ev->tid);
	if (ev->kind == SPAN_BEGIN) {
		c->begins++;
		if (d && ev->depth != (*d)++)
			abort();
	} else {
		c->ends++;
		if (ev->ts < ev->begin_ts || (d && (*d == 0 || ev->depth != --*d)))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* flags & 16: spans carry values (WIRE_VALUES in the input gives the
 * target's): off-CPU from this made-up clock, then two events, the second
 * unsupported. */
static uint64_t fuzz_off_cpu(void *ctx, uint32_t pid, uint32_t tid, uint64_t ns)
{
	(void)ctx;
	return (ns ^ pid ^ tid) / 8;
}

static const struct spanmetrics fuzz_metrics = {
	.n = 3,
	.m = {{SPANMETRIC_OFF_CPU, "off_cpu_ns", true, true},
	      {SPANMETRIC_EVENT, "page-faults", true, false},
	      {SPANMETRIC_EVENT, "cycles", false, false}},
	.off_cpu = 0,
	.first_target = 1};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 3)
		return 0;
	unsigned flags = data[0];
	size_t n = size - 3, cut[4] = {0, n * data[1] / 256, n * data[2] / 256, n};
	if (cut[1] > cut[2]) {
		size_t t = cut[1];
		cut[1] = cut[2];
		cut[2] = t;
	}
	if ((flags & 3) == 0)
		cut[1] = cut[2] = n;
	else if ((flags & 3) == 1)
		cut[2] = n;
	const uint8_t *p = data + 3;

	struct spanclock clk = {
		.tsc0 = 1000, .mono0 = 1000000, .mult = 3u << 29, .shift = 31, .valid = 1};
	struct decoder *d = decoder_new(flags & 4 ? &clk : NULL);
	struct span_trees st;
	struct fuzz_check *check = calloc(1, sizeof *check);
	if (!d || !check || span_trees_init(&st) < 0)
		abort();
	if (flags & 16) {
		struct decoder_values dv = {3, 1, 0, fuzz_off_cpu, NULL, NULL, NULL, 0x5a5a5a5a};
		if (decoder_set_values(d, &dv) < 0 || span_trees_set_values(&st, 3) < 0)
			abort();
	}
	decoder_add_sink(d, (struct span_sink){span_trees_event, &st});
	decoder_add_sink(d, (struct span_sink){fuzz_event, check});
	/* the Perfetto writer streams, as a sink of the decoder */
	static const char *const argv[] = {"target", "arg\xff", NULL};
	struct run_head h = {.argc = 2,
			     .argv = (char *const *)argv,
			     .strings = decoder_strings(d),
			     .names = decoder_names(d),
			     .spans = true,
			     .runs = 1,
			     .metrics = flags & 16 ? &fuzz_metrics : NULL};
	char *pbuf = NULL, *jbuf = NULL;
	size_t plen = 0, jlen = 0;
	FILE *pfp = open_memstream(&pbuf, &plen);
	if (!pfp)
		abort();
	struct writer pw = {.ops = &perfetto_writer_ops, .fp = pfp, .head = &h};
	if (pw.ops->start(&pw, &h) < 0)
		abort();
	decoder_add_sink(d, (struct span_sink){pw.ops->span, &pw});
	/* the flame chart streams too */
	char *cbuf = NULL, *gsvg = NULL;
	size_t clen = 0, gsvglen = 0;
	FILE *cfp = open_memstream(&cbuf, &clen);
	if (!cfp)
		abort();
	struct writer cw = {.ops = &flamechart_writer_ops, .fp = cfp, .head = &h};
	if (cw.ops->start(&cw, &h) < 0)
		abort();
	decoder_add_sink(d, (struct span_sink){cw.ops->span, &cw});
	for (int k = 0; k < 3; k++)
		decoder_feed(d, p + cut[k], cut[k + 1] - cut[k]);
	decoder_finish(d);
	const struct decode_stats *s = decoder_stats(d);
	if (check->abegins != check->aends || check->enters != check->exits)
		abort();
	if (check->begins != check->ends || check->ends != s->spans)
		abort();
	for (size_t i = 0; i < st.nthread; i++)
		if (st.thread[i]->depth != 0)
			abort();

	struct report r = {.head = &h, .spans = &st, .dstats = s, .nruns = 1};
	/* --weight, parsed once for every writer as analysis_finish does */
	/* (flags & 128: typed arguments' sums, mkcorpus's "bytes" key, or a
	 * string's text) */
	static const char *const weights[] = {NULL,	   "cpu",  "page-faults", "cycles",
					      "arg:bytes", "wall", "arg:GET",	  "arg:none"};
	const char *wname = weights[(flags >> 5) & 7];
	struct spanweight wt;
	int werr = spanweight_parse(wname, h.metrics, h.strings, &wt);
	FILE *fp = fopen("/dev/null", "w");
	if (fp) {
		struct writer w = {.ops = &folded_writer_ops, .fp = fp, .head = &h};
		w.opts.folded_threads = flags & 8;
		w.opts.weight = wname;
		w.opts.weight_by = wt;
		w.opts.weight_err = werr;
		w.ops->finish(&w, &r);
		fclose(fp);
	}
	if (!pw.err && pw.ops->finish(&pw, &r) < 0)
		abort();
	/* pprof: a gzip stream (its weight as --folded's) */
	char *gbuf = NULL;
	size_t glen = 0;
	FILE *gfp = open_memstream(&gbuf, &glen);
	if (!gfp)
		abort();
	struct writer gw = {.ops = &pprof_writer_ops, .fp = gfp, .head = &h};
	gw.opts.weight = wname;
	gw.opts.weight_by = wt;
	gw.opts.weight_err = werr;
	int gerr = gw.ops->finish(&gw, &r);
	fclose(gfp);
	if (gerr == 0 && (glen < 18 || (uint8_t)gbuf[0] != 0x1f || (uint8_t)gbuf[1] != 0x8b))
		abort(); /* written, yet not gzip */
	free(gbuf);
	pw.ops->release(&pw);
	fclose(pfp);
	/* the pictures: UTF-8 with no raw control byte, whole documents */
	if (cw.ops->finish(&cw, &r) < 0)
		abort();
	cw.ops->release(&cw);
	fclose(cfp);
	FILE *sfp = open_memstream(&gsvg, &gsvglen);
	if (!sfp)
		abort();
	struct writer sw = {.ops = &flamegraph_writer_ops, .fp = sfp, .head = &h};
	sw.opts.folded_threads = flags & 8;
	sw.opts.weight = wname;
	sw.opts.weight_by = wt;
	sw.opts.weight_err = werr;
	int serr = sw.ops->finish(&sw, &r);
	fclose(sfp);
	if (serr == 0 && !fuzz_svg(gsvg, gsvglen))
		abort();
	if (!fuzz_svg(cbuf, clen))
		abort();
	if (!fuzz_proto((const uint8_t *)pbuf, (const uint8_t *)pbuf + plen, 1))
		abort(); /* not a well-formed sequence of trace packets */

	FILE *jfp = open_memstream(&jbuf, &jlen);
	if (!jfp)
		abort();
	struct writer jw = {.ops = &json_writer_ops, .fp = jfp, .head = &h};
	if (jw.ops->finish(&jw, &r) < 0)
		abort();
	jw.ops->release(&jw);
	fclose(jfp);
	cJSON *doc = cJSON_ParseWithLength(jbuf, jlen);
	if (!doc || !fuzz_utf8(jbuf, jlen))
		abort(); /* JSON that a parser rejects, or not UTF-8 */
	cJSON_Delete(doc);

	static const char *out_dir;
	static int out_init;
	static unsigned long out_n;
	if (!out_init++)
		out_dir = getenv("FUZZ_OUT_DIR");
	if (out_dir) {
		fuzz_save(out_dir, out_n, "json", jbuf, jlen);
		fuzz_save(out_dir, out_n, "pftrace", pbuf, plen);
		fuzz_save(out_dir, out_n, "chart.svg", cbuf, clen);
		if (serr == 0) /* refused: a weight the run has no metric for */
			fuzz_save(out_dir, out_n, "graph.svg", gsvg, gsvglen);
		out_n++;
	}
	free(cbuf);
	free(gsvg);
	free(pbuf);
	free(jbuf);
	span_trees_release(&st);
	decoder_free(d);
	free(check);
	return 0;
}
