/* test_recfile.c: the record file, written by its writer and read back:
 * every span event comes back field for field (names by text, values,
 * cumulative rows, flags) across many blocks and thread switches; the head,
 * samples and runs come back; a truncated copy and a damaged record lose
 * only what they damaged; a head without the program's path and build id
 * (an older file's) reads as before, with both unknown; a --keep-last
 * window holds the last events, its snapshot and its end read back whole,
 * and kept, cut and overwritten add up to every event. */
#include "config.h"

#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "analysis.h"
#include "recfile.h"
#include "tap.h"
#include "writer.h"

#define NEV 40000
/* the captures: every event of a test, or a window of 150000 arguments */
#define NGOT (150000 + 16)

static struct span_event orig[NEV + 16];
static uint64_t orig_vals[NEV + 16][2], orig_cum[NEV + 16][2];
static char orig_name[NEV + 16][16];
static size_t norig;

struct capture {
	struct span_event ev;
	char name[16];
	uint64_t vals[2], cum[2];
	int has_vals, has_cum;
};
static struct capture *got;
static size_t ngot;
static const struct strtab *got_strings;
static unsigned got_intervals, got_runstarts;

static void cap_span(void *arg, const struct span_event *ev)
{
	(void)arg;
	if (ngot == NGOT)
		abort(); /* a test wrote more than it can check */
	struct capture *c = &got[ngot++];
	c->ev = *ev;
	snprintf(c->name, sizeof c->name, "%s", strtab_get(got_strings, ev->name));
	c->has_vals = ev->vals != NULL;
	c->has_cum = ev->cum != NULL;
	if (ev->vals)
		memcpy(c->vals, ev->vals, sizeof c->vals);
	if (ev->cum)
		memcpy(c->cum, ev->cum, sizeof c->cum);
}

static int cap_interval(struct writer *w, const struct interval_sample *s)
{
	(void)w;
	got_intervals += s->counts[0].raw == 777;
	return 0;
}

static void cap_run(struct writer *w, unsigned run)
{
	(void)w;
	got_runstarts += run == 0;
}

static int cap_finish(struct writer *w, const struct report *r)
{
	(void)w;
	(void)r;
	return 0;
}

static const struct writer_ops capture_ops = {.name = "capture",
					      .interval = cap_interval,
					      .span = cap_span,
					      .run = cap_run,
					      .finish = cap_finish};

static void add(struct strtab *st, enum span_kind k, uint32_t pid, uint32_t tid, uint64_t ts,
		const char *name, uint32_t depth, int64_t value, uint32_t flags, uint64_t dur,
		const uint64_t *vals, const uint64_t *cum)
{
	struct span_event *e = &orig[norig];
	*e = (struct span_event){.kind = k,
				 .pid = pid,
				 .tid = tid,
				 .ts = ts,
				 .name = strtab_intern(st, name, strlen(name)),
				 .flags = flags,
				 .depth = depth,
				 .begin_ts = ts - dur,
				 .value = value};
	snprintf(orig_name[norig], sizeof orig_name[norig], "%s", name);
	if (vals) {
		memcpy(orig_vals[norig], vals, sizeof orig_vals[norig]);
		e->vals = orig_vals[norig];
	}
	if (cum) {
		memcpy(orig_cum[norig], cum, sizeof orig_cum[norig]);
		e->cum = orig_cum[norig];
	}
	norig++;
}

/* Replays path into a fresh analysis with the capture writer; returns the
 * file (to close) or NULL. */
static struct recfile *replay(const char *path, struct strtab *st, struct spannames *nv, int *err)
{
	char *cause = NULL;
	struct recfile *rf = NULL;
	*err = recfile_open(&rf, path, st, nv, NULL, &cause);
	free(cause);
	if (*err < 0)
		return NULL;
	struct writer w = {.ops = &capture_ops};
	struct writer *wv[1] = {&w};
	struct analysis an;
	ngot = 0;
	got_intervals = got_runstarts = 0;
	got_strings = st;
	analysis_init(&an, wv, 1, true, recfile_head(rf)->metrics->n);
	analysis_start(&an, recfile_head(rf));
	*err = recfile_replay(rf, &an, NULL);
	analysis_release(&an);
	return rf;
}

/* path, as buf (size bytes) with the head's payload's last strip bytes
 * replaced by tail (tlen bytes), its CRC made to hold again. */
static void rewrite_head(const char *path, const char *buf, size_t size, size_t strip,
			 const char *tail, size_t tlen)
{
	uint32_t hd[3];
	memcpy(hd, buf + RECORD_FILE_HDR, sizeof hd);
	const char *pl = buf + RECORD_FILE_HDR + RECORD_HDR;
	size_t keep = hd[1] - strip, rest = RECORD_FILE_HDR + RECORD_HDR + hd[1];
	char *np = malloc(keep + tlen);
	memcpy(np, pl, keep);
	memcpy(np + keep, tail, tlen);
	hd[1] = (uint32_t)(keep + tlen);
	hd[2] = (uint32_t)crc32(0, (const Bytef *)np, (uInt)hd[1]);
	FILE *out = fopen(path, "w");
	fwrite(buf, 1, RECORD_FILE_HDR, out);
	fwrite(hd, sizeof hd, 1, out);
	fwrite(np, 1, hd[1], out);
	fwrite(buf + rest, 1, size - rest, out);
	fclose(out);
	free(np);
}

int main(void)
{
	char dir[] = "/tmp/test_recfile.XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	char path[256], cut[256], bad[256];
	snprintf(path, sizeof path, "%s/r.rec", dir);
	snprintf(cut, sizeof cut, "%s/cut.rec", dir);
	snprintf(bad, sizeof bad, "%s/bad.rec", dir);
	got = calloc(NGOT, sizeof *got);

	/* the session: one event, two span values, names with a view */
	struct strtab st;
	struct spannames nv;
	strtab_init(&st);
	spannames_init(&nv, &st);
	struct event ev = {
		.name = "task-clock", .group = 0, .leader = true, .unit = "msec", .scale = 1e-6};
	ev.attr.type = 1;
	ev.attr.config = 1;
	ev.attr.exclude_kernel = 1;
	struct evlist evl = {&ev, 1, 1};
	struct spanmetrics ms = {.n = 2, .off_cpu = 0, .first_target = 1};
	ms.m[0] = (struct spanmetric){SPANMETRIC_OFF_CPU, "off_cpu_ns", true, true};
	ms.m[1] = (struct spanmetric){SPANMETRIC_EVENT, "page-faults", true, false};
	char *argv[] = {"./app", "--x", "a b", NULL};
	struct run_head h = {.argc = 3,
			     .argv = argv,
			     .evl = &evl,
			     .runs = 1,
			     .interval_ms = 100,
			     .spans = true,
			     .strings = &st,
			     .names = &nv,
			     .metrics = &ms,
			     .clocks = {1000, 2000, 3000},
			     .exe = "/opt/app/bin/app",
			     .build_id = "0123456789abcdef0123456789abcdef01234567"};
	uint32_t raw = strtab_intern(&st, "_Z4workv", 8), shown = strtab_intern(&st, "work()", 6);
	uint32_t file = strtab_intern(&st, "app.c", 5);
	spannames_set(&nv, raw, shown, file, 42);

	setenv("OMPI_COMM_WORLD_RANK", "5", 1);
	FILE *fp = fopen(path, "w");
	struct writer w = {.ops = &record_writer_ops, .fp = fp, .head = &h};
	ok(w.ops->start(&w, &h) == 0, "the writer starts");
	w.ops->run(&w, 0);
	add(&st, SPAN_PROCESS, 100, 100, 5000, "app", 0, 1, 0, 0, NULL, NULL);
	add(&st, SPAN_THREAD, 100, 100, 5000, "", 0, 0, 0, 0, NULL, NULL);
	add(&st, SPAN_THREAD, 100, 101, 5001, "worker", 0, 0, 0, 0, NULL, NULL);
	uint64_t ts = 6000, cum[2] = {0, 0};
	size_t at_sample = 0;
	for (size_t i = 0; norig < NEV; i++) {
		uint32_t tid = 100 + (i / 7) % 2; /* runs of events per thread */
		const char *nm = i % 3 ? "_Z4workv" : "loop";
		uint64_t v[2] = {i % 5, i % 11};
		cum[0] += v[0];
		cum[1] += v[1];
		add(&st, SPAN_BEGIN, 100, tid, ts, nm, 0, 0, 0, 0, NULL, cum);
		ts += 1 + i % 300;
		add(&st, SPAN_END, 100, tid, ts, nm, 0, 0, i % 13 == 0 ? SPAN_F_UNFINISHED : 0,
		    1 + i % 300, v, cum);
		if (i % 1000 == 0)
			add(&st, SPAN_COUNTER, 100, tid, ts, "queue", 1, -(int64_t)i, 0, 0, NULL,
			    NULL);
		if (i % 999 == 0) /* out of order: an earlier stamp */
			add(&st, SPAN_INSTANT, 100, tid, ts - 1000, "mark", 0, 0, 0, 0, NULL, NULL);
		if (i % 500 == 0) { /* an async span, records of their own */
			uint64_t id = (uint64_t)i << 33 | 1;
			add(&st, SPAN_ASYNC_BEGIN, 100, 100, ts, "task", 0, 0, 0, 0, NULL, NULL);
			orig[norig - 1].aid = id;
			orig[norig - 1].parent = i ? 7 : 0;
			add(&st, SPAN_ASYNC_ENTER, 100, 101, ts + 1, "task", 0, 0, 0, 0, NULL,
			    NULL);
			orig[norig - 1].aid = id;
			add(&st, SPAN_ASYNC_EXIT, 100, 101, ts + 2, "task", 0, 0, 0, 0, NULL, NULL);
			orig[norig - 1].aid = id;
			add(&st, SPAN_ASYNC_END, 100, 100, ts + 5, "task", 0, 1,
			    i % 1000 ? SPAN_F_UNFINISHED : 0, 5, NULL, NULL);
			orig[norig - 1].aid = id;
			orig[norig - 1].enters = 1;
			orig[norig - 1].threads = 1;
		}
		if (i == 100)
			at_sample = norig;
	}
	add(&st, SPAN_PROCESS_END, 100, 100, ts, "", 0, 9, SPAN_F_UNFINISHED, 0, NULL, NULL);
	for (size_t k = 0; k < norig; k++) {
		if (k == at_sample) {
			struct count c = {.state = COUNT_OK, .raw = 777};
			struct interval_sample smp = {0, 10, 20, 30, &c, NULL};
			ok(w.ops->interval(&w, &smp) == 0, "a sample is written among the events");
		}
		w.ops->span(&w, &orig[k]);
	}
	struct count cnt = {
		.state = COUNT_OK, .raw = 12345, .enabled = 9, .running = 9, .value = 12.345};
	struct run_result rr = {.counts = &cnt,
				.ru = {.elapsed_ns = 99, .minflt = 7},
				.wstatus = 3 << 8,
				.exit_code = 3};
	struct decode_stats ds = {.spans = 1234, .unfinished = 5};
	struct report rep = {
		.head = &h, .nruns = 1, .run = &rr, .dstats = &ds, .event_cost_ns = 9.5};
	ok(w.ops->finish(&w, &rep) == 0, "the writer finishes");
	w.ops->release(&w);
	ok(fclose(fp) == 0, "the file is complete");

	/* read back into a table of its own */
	struct strtab st2;
	struct spannames nv2;
	strtab_init(&st2);
	spannames_init(&nv2, &st2);
	int err;
	struct recfile *rf = replay(path, &st2, &nv2, &err);
	ok(rf && err == 0, "the file reads back");
	const struct run_head *h2 = recfile_head(rf);
	ok(h2->argc == 3 && !strcmp(h2->argv[2], "a b"), "the command comes back");
	ok(h2->evl->n == 1 && !strcmp(h2->evl->ev[0].name, "task-clock") &&
		   !strcmp(h2->evl->ev[0].unit, "msec") && h2->evl->ev[0].scale == 1e-6 &&
		   h2->evl->ev[0].attr.config == 1 && h2->evl->ev[0].attr.exclude_kernel,
	   "the event list comes back");
	ok(h2->metrics->n == 2 && h2->metrics->off_cpu == 0 && h2->metrics->first_target == 1 &&
		   !strcmp(h2->metrics->m[1].name, "page-faults"),
	   "the span values come back");
	ok(h2->clocks.mono_ns == 2000 && h2->clocks.boot_ns == 3000, "the clocks come back");
	ok(recfile_info(rf)->rank == 5, "the rank comes back");
	ok(h2->exe && !strcmp(h2->exe, h.exe) && h2->build_id && !strcmp(h2->build_id, h.build_id),
	   "the program's path and build id come back");
	uint32_t raw2 = strtab_lookup(&st2, "_Z4workv", 8), line;
	ok(!strcmp(spannames_text(&nv2, &st2, raw2), "work()") &&
		   !strcmp(spannames_where(&nv2, raw2, &line), "app.c") && line == 42,
	   "how a name shows comes back");
	ok(ngot == norig, "every event comes back (%zu of %zu)", ngot, norig);
	size_t same = 0;
	for (size_t k = 0; k < ngot && k < norig; k++) {
		const struct span_event *a = &orig[k], *b = &got[k].ev;
		bool eq = a->kind == b->kind && a->pid == b->pid && a->tid == b->tid &&
			  a->ts == b->ts && a->flags == b->flags && a->depth == b->depth &&
			  !strcmp(orig_name[k], got[k].name) && a->value == b->value &&
			  ((a->kind != SPAN_END && a->kind != SPAN_ASYNC_END) ||
			   a->begin_ts == b->begin_ts) &&
			  a->aid == b->aid && a->parent == b->parent && a->enters == b->enters &&
			  a->threads == b->threads && !!a->vals == got[k].has_vals &&
			  !!a->cum == got[k].has_cum &&
			  (!a->vals || !memcmp(a->vals, got[k].vals, sizeof got[k].vals)) &&
			  (!a->cum || !memcmp(a->cum, got[k].cum, sizeof got[k].cum));
		same += eq;
		if (!eq && same + 1 == k + 1)
			diag("event %zu differs (kind %d)", k, a->kind);
	}
	ok(same == norig, "each comes back field for field (%zu of %zu)", same, norig);
	ok(got_intervals == 1 && got_runstarts == 1, "the sample and the run start come back");
	struct run_end e;
	recfile_end(rf, &e);
	ok(e.nruns == 1 && e.run[0].counts[0].raw == 12345 && e.run[0].counts[0].value == 12.345 &&
		   e.run[0].exit_code == 3 && e.run[0].ru.minflt == 7 && e.dstats->spans == 1234 &&
		   e.event_cost_ns == 9.5,
	   "the run's results and the stream's counts come back");
	const struct record_damage *d = recfile_damage(rf);
	ok(!d->bad_records && !d->lost_bytes && !d->no_end && !d->lost_runs, "nothing was lost");
	recfile_close(rf);

	/* a copy cut in two: the first blocks' events, nothing of the end */
	FILE *in = fopen(path, "r"), *out = fopen(cut, "w");
	fseek(in, 0, SEEK_END);
	long size = ftell(in);
	rewind(in);
	char *buf = malloc((size_t)size);
	ok(fread(buf, 1, (size_t)size, in) == (size_t)size, "the file is read whole");
	fclose(in);
	fwrite(buf, 1, (size_t)size / 2, out);
	fclose(out);
	rf = replay(cut, &st2, &nv2, &err);
	d = rf ? recfile_damage(rf) : NULL;
	ok(rf && d->lost_bytes > 0 && d->no_end && d->lost_runs == 1,
	   "the cut is found and counted");
	ok(ngot > 0 && ngot < norig, "the events before the cut remain (%zu)", ngot);
	recfile_close(rf);

	/* one byte flipped in the first block of events */
	size_t off = RECORD_FILE_HDR;
	while (off + RECORD_HDR <= (size_t)size) {
		uint32_t hd[3];
		memcpy(hd, buf + off, sizeof hd);
		if (hd[0] == RECORD_EVENTS) {
			buf[off + RECORD_HDR + hd[1] / 2] ^= 0x55;
			break;
		}
		off += RECORD_HDR + hd[1];
	}
	out = fopen(bad, "w");
	fwrite(buf, 1, (size_t)size, out);
	fclose(out);
	rf = replay(bad, &st2, &nv2, &err);
	d = rf ? recfile_damage(rf) : NULL;
	ok(rf && d->bad_records == 1 && d->lost_events == 1 && !d->lost_bytes && !d->lost_runs,
	   "a damaged block is skipped and counted");
	ok(ngot > norig / 2 && ngot < norig, "the other blocks' events remain (%zu)", ngot);
	recfile_close(rf);

	/* the length of the second block of events damaged (the first one's
	 * payload still is): reading goes on at the next intact record */
	size_t second = 0;
	for (off = RECORD_FILE_HDR; off + RECORD_HDR <= (size_t)size;) {
		uint32_t hd[3];
		memcpy(hd, buf + off, sizeof hd);
		if (hd[0] == RECORD_EVENTS && second++ == 1) {
			hd[1] = 0x7fffffff;
			memcpy(buf + off, hd, sizeof hd);
			break;
		}
		off += RECORD_HDR + hd[1];
	}
	out = fopen(bad, "w");
	fwrite(buf, 1, (size_t)size, out);
	fclose(out);
	rf = replay(bad, &st2, &nv2, &err);
	d = rf ? recfile_damage(rf) : NULL;
	recfile_end(rf, &e);
	ok(rf && d->bad_records == 2 && d->lost_events == 2 && d->skipped_bytes > RECORD_HDR &&
		   !d->lost_bytes && !d->no_end && !d->lost_runs && e.nruns == 1 &&
		   e.run[0].counts[0].raw == 12345,
	   "after a length beyond the file, the next intact record is found (%llu bytes "
	   "skipped)",
	   rf ? (unsigned long long)d->skipped_bytes : 0ull);
	ok(ngot > norig / 2 && ngot < norig, "the other blocks' events remain (%zu)", ngot);
	recfile_close(rf);

	/* a head as the first files have it, ending after the span values:
	 * read as before, the program and its build id unknown */
	/* ...and without --delay, --timeout and --interval-count after them
	 * (three varints, one byte each when 0) */
	size_t tail = 2 + strlen(h.exe) + strlen(h.build_id) + 3;
	in = fopen(path, "r");
	ok(fread(buf, 1, (size_t)size, in) == (size_t)size, "the file is read again, whole");
	fclose(in);
	rewrite_head(bad, buf, (size_t)size, tail, "", 0);
	rf = replay(bad, &st2, &nv2, &err);
	d = rf ? recfile_damage(rf) : NULL;
	h2 = rf ? recfile_head(rf) : NULL;
	ok(rf && err == 0 && !d->bad_records && h2->argc == 3 && h2->metrics->n == 2 && !h2->exe &&
		   !h2->build_id && ngot == norig,
	   "a head without the program reads, the program unknown");
	recfile_close(rf);
	/* a build id that is not hex is not taken; the path is */
	static const char odd[] = "\004/x/y\004xyz!";
	rewrite_head(bad, buf, (size_t)size, tail, odd, sizeof odd - 1);
	rf = replay(bad, &st2, &nv2, &err);
	h2 = rf ? recfile_head(rf) : NULL;
	ok(rf && err == 0 && h2->exe && !strcmp(h2->exe, "/x/y") && !h2->build_id,
	   "a build id that is not hex is unknown");
	recfile_close(rf);
	/* a NUL inside either is damage, never the text before it */
	static const char nul_id[] = "\004/x/y\005ab\000cd";
	rewrite_head(bad, buf, (size_t)size, tail, nul_id, sizeof nul_id - 1);
	rf = replay(bad, &st2, &nv2, &err);
	h2 = rf ? recfile_head(rf) : NULL;
	ok(rf && err == 0 && h2->exe && !strcmp(h2->exe, "/x/y") && !h2->build_id,
	   "a build id with a NUL inside is unknown");
	recfile_close(rf);
	static const char nul_exe[] = "\004/x\000y\002ab";
	rewrite_head(bad, buf, (size_t)size, tail, nul_exe, sizeof nul_exe - 1);
	rf = replay(bad, &st2, &nv2, &err);
	h2 = rf ? recfile_head(rf) : NULL;
	ok(rf && err == 0 && !h2->exe && !h2->build_id, "a path with a NUL inside is unknown");
	recfile_close(rf);
	/* cut inside them: both unknown, the rest of the head stays */
	rewrite_head(bad, buf, (size_t)size, tail, "\004/x/y\050ab", 8);
	rf = replay(bad, &st2, &nv2, &err);
	d = rf ? recfile_damage(rf) : NULL;
	h2 = rf ? recfile_head(rf) : NULL;
	ok(rf && err == 0 && !d->bad_records && !h2->exe && !h2->build_id && ngot == norig,
	   "damaged ones are unknown, the head is read");
	recfile_close(rf);

	/* not a record file */
	out = fopen(bad, "w");
	fputs("{\"json\": true}\n", out);
	fclose(out);
	char *cause = NULL;
	int r = recfile_open(&rf, bad, &st2, &nv2, NULL, &cause);
	ok(r == -EINVAL && cause && strstr(cause, "not a spanstat record file"),
	   "another file is refused: %s", cause ? cause : "");
	free(cause);

	/* --keep-last: the same events through a window of 128 KiB */
	char kpath[256];
	snprintf(kpath, sizeof kpath, "%s/k.rec", dir);
	fp = fopen(path, "w");
	w = (struct writer){.ops = &record_writer_ops, .fp = fp, .head = &h};
	w.opts.keep_last = 128u << 10;
	w.opts.path = kpath;
	struct record_window win;
	ok(!recwrite_window(&(struct writer){.ops = &capture_ops}, &win),
	   "another writer keeps no window");
	ok(w.ops->start(&w, &h) == 0 && recwrite_window(&w, &win) && win.size == 128u << 10 &&
		   !win.events,
	   "a window starts empty");
	w.ops->run(&w, 0);
	/* a process that ends long before the window: nothing of it stays */
	struct span_event gone[3] = {
		{.kind = SPAN_PROCESS, .pid = 200, .tid = 200, .ts = 4000, .name = orig[0].name},
		{.kind = SPAN_THREAD, .pid = 200, .tid = 200, .ts = 4000},
		{.kind = SPAN_PROCESS_END, .pid = 200, .tid = 200, .ts = 4500}};
	for (size_t k = 0; k < 3; k++)
		w.ops->span(&w, &gone[k]);
	size_t begins = 0, half = norig / 8 * 7;
	for (size_t k = 0; k < norig; k++) {
		begins += orig[k].kind == SPAN_BEGIN;
		w.ops->span(&w, &orig[k]);
		if (k == half) {
			char *why = NULL;
			ok(recwrite_snapshot(&w, &why) == 0, "a snapshot is written midway: %s",
			   why ? why : "");
			free(why);
		}
	}
	/* the snapshot: whole, a snapshot, no damage for the RUN and END it lacks */
	rf = replay(kpath, &st2, &nv2, &err);
	ok(rf && err == 0, "the snapshot reads back");
	const struct record_window *rw = rf ? recfile_window(rf) : NULL;
	ok(rw && rw->present && rw->snapshot && rw->size == 128u << 10 && rw->events > 0,
	   "the snapshot says it is one, and what was overwritten");
	ok(rf && !recfile_damage(rf)->no_end && !recfile_damage(rf)->lost_runs &&
		   !recfile_damage(rf)->bad_records,
	   "a snapshot is not damaged");
	ok(rw && ngot + rw->cut + rw->events == half + 1 + 3 + 3 && ngot &&
		   got[ngot - 1].ev.ts == orig[half].ts,
	   "the snapshot holds every event up to it that was not overwritten");
	recfile_close(rf);
	ok(w.ops->finish(&w, &rep) == 0, "the window is written at the end");
	ok(recwrite_window(&w, &win) && win.events > 0 && win.spans > 0 && win.spans < win.events,
	   "the writer counts what it overwrote");
	w.ops->release(&w);
	ok(fclose(fp) == 0, "the window's file is complete");
	struct stat sb = {0};
	int st_ok = stat(path, &sb) == 0; /* before the arguments below read sb */
	ok(st_ok && sb.st_size <= (128 << 10) + 65536 + 12 + 4096 &&
		   sb.st_size >= (128 << 10) - 65536 - 12,
	   "the file holds about 128 KiB: %lld bytes", (long long)sb.st_size);
	rf = replay(path, &st2, &nv2, &err);
	ok(rf && err == 0, "the window reads back");
	rw = rf ? recfile_window(rf) : NULL;
	ok(rw && rw->present && !rw->snapshot && rw->events == win.events &&
		   rw->spans == win.spans && rw->bytes == win.bytes,
	   "the window's counts come back");
	ok(rf && !recfile_damage(rf)->no_end && !recfile_damage(rf)->bad_records &&
		   recfile_damage(rf)->lost_runs == 0,
	   "the window is not damaged");
	size_t kept_begins = 0, kept_ends = 0;
	for (size_t k = 0; k < ngot; k++) {
		kept_begins += got[k].ev.kind == SPAN_BEGIN;
		kept_ends += got[k].ev.kind == SPAN_END;
	}
	/* the process's and threads' starts were overwritten, and are kept apart */
	ok(rw && ngot + rw->cut + rw->events == norig + 3 + 3,
	   "every event is kept, cut or overwritten (and the 3 that name the threads kept)");
	size_t of_gone = 0;
	for (size_t k = 0; k < ngot; k++)
		of_gone += got[k].ev.pid == 200;
	ok(of_gone == 0, "a process that ended before the window is left out");
	ok(ngot > 3 && got[0].ev.kind == SPAN_PROCESS && !strcmp(got[0].name, "app") &&
		   got[0].ev.value == 1 && got[2].ev.kind == SPAN_THREAD &&
		   !strcmp(got[2].name, "worker") && got[2].ev.tid == 101 && got[2].ev.ts == 5001,
	   "the process and its threads are named before the window");
	ok(rw && kept_begins + rw->spans == begins && kept_ends == kept_begins,
	   "spans kept and overwritten add up, and every end replayed has its begin");
	ok(ngot && got[ngot - 1].ev.kind == SPAN_PROCESS_END && got[ngot - 1].ev.ts == ts,
	   "the last events are kept");
	ok(got_runstarts == 1, "the run start overwritten is kept");
	recfile_close(rf);
	unlink(kpath);

	/* an async span begun before the window and ended in it is cut, as a
	 * thread span is: counted, and none of its records replayed */
	fp = fopen(path, "w");
	w = (struct writer){.ops = &record_writer_ops, .fp = fp, .head = &h};
	w.opts.keep_last = 128u << 10;
	w.opts.path = kpath;
	ok(w.ops->start(&w, &h) == 0, "a second window starts");
	w.ops->run(&w, 0);
	uint64_t ats = 100000;
	/* threads that came and went before the window (their ends are not
	 * told) and one that has events in it: only the last is named in it */
	for (uint32_t t = 150; t <= 160; t++) {
		char tn[16];
		int n = snprintf(tn, sizeof tn, "w%u", t);
		w.ops->span(&w, &(struct span_event){.kind = SPAN_THREAD,
						     .pid = 100,
						     .tid = t,
						     .ts = ats,
						     .name = strtab_intern(&st, tn, (size_t)n)});
		w.ops->span(&w, &(struct span_event){.kind = SPAN_INSTANT,
						     .pid = 100,
						     .tid = t,
						     .ts = ats,
						     .name = orig[0].name});
	}
	struct span_event a = {.kind = SPAN_ASYNC_BEGIN,
			       .pid = 100,
			       .tid = 100,
			       .ts = ats,
			       .name = orig[0].name,
			       .aid = 7};
	w.ops->span(&w, &a);
	for (size_t k = 0; k < 40000; k++) /* no spans: only the async one is cut */
		w.ops->span(&w, &(struct span_event){.kind = SPAN_INSTANT,
						     .pid = 100,
						     .tid = 100,
						     .ts = ++ats,
						     .name = orig[0].name});
	w.ops->span(&w, &(struct span_event){.kind = SPAN_INSTANT,
					     .pid = 100,
					     .tid = 160,
					     .ts = ++ats,
					     .name = orig[0].name});
	static const enum span_kind ops[] = {SPAN_ASYNC_ENTER, SPAN_ASYNC_EXIT, SPAN_ASYNC_END,
					     SPAN_ASYNC_BEGIN, SPAN_ASYNC_END};
	for (size_t k = 0; k < 5; k++) {
		a.kind = ops[k];
		a.aid = k < 3 ? 7 : 8;
		a.ts = ++ats;
		a.begin_ts = k == 2 ? 100000 : k == 4 ? ats - 1 : 0;
		w.ops->span(&w, &a);
	}
	ok(w.ops->finish(&w, &rep) == 0, "the second window is written");
	w.ops->release(&w);
	ok(fclose(fp) == 0, "the second window's file is complete");
	rf = replay(path, &st2, &nv2, &err);
	rw = rf ? recfile_window(rf) : NULL;
	size_t of7 = 0, of8 = 0;
	for (size_t k = 0; k < ngot; k++)
		if (got[k].ev.kind >= SPAN_ASYNC_BEGIN && got[k].ev.kind <= SPAN_ASYNC_END)
			*(got[k].ev.aid == 7 ? &of7 : &of8) += 1;
	ok(rf && err == 0 && rw && rw->present && rw->events > 0, "it reads back, a window");
	ok(rw && rw->cut == 1 && of7 == 0,
	   "the async span begun before it is cut, its records left out: cut %llu, %zu replayed",
	   rw ? (unsigned long long)rw->cut : 0ULL, of7);
	ok(of8 == 2, "the async span of the window is kept");
	size_t dead = 0, live = 0;
	for (size_t k = 0; k < ngot; k++)
		if (got[k].ev.kind == SPAN_THREAD && got[k].ev.tid >= 150 && got[k].ev.tid < 160)
			dead++;
		else if (got[k].ev.kind == SPAN_THREAD && got[k].ev.tid == 160)
			live += !strcmp(got[k].name, "w160");
	ok(dead == 0 && live == 1,
	   "threads with nothing in the window are not in it (%zu), one with events is "
	   "named (%zu)",
	   dead, live);
	recfile_close(rf);

	/* small records (typed arguments, messages) are kept in memory about
	 * as large as they are in the file, not each with an allocation and
	 * an index entry that weigh more than the record itself */
	fp = fopen(path, "w");
	w = (struct writer){.ops = &record_writer_ops, .fp = fp, .head = &h};
	w.opts.keep_last = 512u << 10; /* fewer records than got holds */
	w.opts.path = kpath;
	ok(w.ops->start(&w, &h) == 0, "a third window starts");
	w.ops->run(&w, 0);
	struct mallinfo2 m0 = mallinfo2();
	for (size_t k = 0; k < 150000; k++)
		w.ops->span(&w, &(struct span_event){.kind = SPAN_ARG,
						     .pid = 100,
						     .tid = 100,
						     .ts = ++ats,
						     .name = orig[0].name,
						     .flags = SPAN_ARG_I64,
						     .value = (int64_t)k});
	struct mallinfo2 m1 = mallinfo2();
	size_t u0 = m0.uordblks + m0.hblkhd, u1 = m1.uordblks + m1.hblkhd;
	size_t grown = u1 > u0 ? u1 - u0 : 0;
	ok(recwrite_window(&w, &win) && win.events > 0 && grown < (512u << 10) * 3 / 2,
	   "a window of 512 KiB of small records takes %zu bytes of memory", grown);
	ok(w.ops->finish(&w, &rep) == 0, "the third window is written");
	w.ops->release(&w);
	ok(fclose(fp) == 0, "the third window's file is complete");
	rf = replay(path, &st2, &nv2, &err);
	rw = rf ? recfile_window(rf) : NULL;
	size_t nargs = 0;
	for (size_t k = 0; k < ngot; k++)
		nargs += got[k].ev.kind == SPAN_ARG &&
			 got[k].ev.value == (int64_t)(150000 - ngot + k);
	ok(rf && err == 0 && rw && rw->events + nargs == 150000 && nargs == ngot,
	   "the last arguments are kept, in order, the others counted: %zu kept", nargs);
	recfile_close(rf);

	free(buf);
	free(got);
	spannames_release(&nv);
	strtab_release(&st);
	spannames_release(&nv2);
	strtab_release(&st2);
	unlink(path);
	unlink(cut);
	unlink(bad);
	rmdir(dir);
	return tap_done();
}
