/* fuzz_record.c: libFuzzer target for spanstat's record file reader
 * (lib/out/recfile.c, spanstat-record(5)) and `spanstat report` behind it
 * (lib/out/recreport.c: files -> analysis -> writers) with the real writers:
 * the summary or CSV, JSON, folded, Perfetto, pprof, the flame graph and
 * the flame chart, each writing to a memory stream.  Run by
 * tests/fuzz/fuzz.mk (`make fuzz`, FUZZ_RECORD_SECONDS=20 by default) over
 * the seeds in tests/fuzz/reccorpus/: real recordings of tests/workloads
 * programs (`spanstat record`), so each seed is a file `spanstat report`
 * reads as it is.
 *
 * Input: the record file, byte for byte; it is written to an anonymous
 * in-memory file (memfd) and read through its /proc/self/fd path, as
 * recfile_open takes a path.  What the report is asked for comes from the
 * CRC-32 of the input (so each input always gets the same): bit 0
 * --folded-threads, bits 1-2 --weight (wall, cpu, task-clock, allocs),
 * bit 3 --compensate, bit 4 the file given twice (the merge of several
 * ranks; only for inputs up to FUZZ_MERGE_MAX bytes, as a merged report's
 * JSON grows with the square of the span depth: every .ranks.spans[] entry
 * spells its whole path), bit 5 -x (CSV) instead of the summary, bits 6-7
 * --spans and --spans=location, bit 8 the report made again with -j 3
 * (it must be the same bytes).  fuzz.mk caps inputs at 16 KiB (-max_len)
 * for the same reason: the folded stacks of N nested spans hold N^2/2
 * frames, and nothing but the size of the file bounds N.
 *
 * As every record carries the CRC of its payload, a mutated byte would
 * almost always just be a bad CRC; so the custom mutator mutates, three
 * times in four, one record's payload alone and fixes its length and CRC,
 * and the reader's parsing of every record type gets fuzzed too.
 *
 * Besides the sanitizers, it checks the reader against the format itself:
 * walking the framing independently (resynchronising after a damaged
 * header as the format says), the bytes cut off at the end, the bytes
 * skipped and the span-event records with a bad CRC or header must be what
 * recfile_open counts, at
 * least as many bad records as bad CRCs, and a report must warn about a
 * file when the reader (after a replay of its own) found damage or the file
 * is a --keep-last window (WINDOW), and only then when it reads one file;
 * a file recfile_open takes must give a report (and one it refuses, a
 * cause); the JSON must parse (cJSON) and be UTF-8, the Perfetto trace a
 * well-formed sequence of TracePacket fields, each SVG UTF-8 with no
 * control byte and whole, the pprof output gzip.
 *
 * With FUZZ_OUT_DIR set, each input's JSON, trace and pictures are also
 * written there (N.json, N.pftrace, N.chart.svg, N.graph.svg) so that
 * tests/fuzz/check-outputs can hand them to jq, protoc and xmllint. */
#define _GNU_SOURCE
#include <endian.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cJSON.h>
#include <zlib.h>

#include "recfile.h"
#include "recreport.h"
#include "utf8esc.h"
#include "writer.h"

#include "fuzzcheck.h"

#define FUZZ_MERGE_MAX 4096

/* What the framing alone says (spanstat-record(5)), walked apart from the
 * reader: whether the file header is one the reader takes, the records
 * with a bad CRC or a header that frames nothing (those of span events
 * apart), the bytes skipped to the next intact record after one, and the
 * bytes cut off. */
struct fuzz_frames {
	int header_ok;
	uint64_t bad_crc, bad_events, lost_bytes, skipped;
};

/* Whether an intact record of a known type with a payload starts at off. */
static int fuzz_intact_at(const uint8_t *d, size_t size, size_t off)
{
	uint32_t h[3];
	if (size - off < RECORD_HDR)
		return 0;
	memcpy(h, d + off, sizeof h);
	uint32_t type = le32toh(h[0]), len = le32toh(h[1]);
	return type >= RECORD_HEAD && type <= RECORD_TYPE_LAST && len > 0 &&
	       len <= RECORD_MAX_PAYLOAD && len <= size - off - RECORD_HDR &&
	       (uint32_t)crc32(0, d + off + RECORD_HDR, len) == le32toh(h[2]);
}

/* The first offset after off where an intact record starts, or size. */
static size_t fuzz_next_intact(const uint8_t *d, size_t size, size_t off)
{
	while (++off < size)
		if (fuzz_intact_at(d, size, off))
			return off;
	return size;
}

static void fuzz_frames(const uint8_t *d, size_t size, struct fuzz_frames *f)
{
	memset(f, 0, sizeof *f);
	uint32_t v[2];
	if (size < RECORD_FILE_HDR || memcmp(d, RECORD_MAGIC, 8) != 0)
		return;
	memcpy(v, d + 8, sizeof v);
	if (le32toh(v[0]) < 1 || le32toh(v[0]) > RECORD_VERSION || le32toh(v[1]) != RECORD_FILE_HDR)
		return;
	f->header_ok = 1;
	for (size_t off = RECORD_FILE_HDR; off < size;) {
		uint32_t h[3];
		if (size - off < RECORD_HDR) {
			f->lost_bytes = size - off;
			break;
		}
		memcpy(h, d + off, sizeof h);
		uint32_t type = le32toh(h[0]), len = le32toh(h[1]), crc = le32toh(h[2]);
		size_t next;
		if (type == 0 || len > RECORD_MAX_PAYLOAD || len > size - off - RECORD_HDR) {
			if ((next = fuzz_next_intact(d, size, off)) == size) {
				f->lost_bytes = size - off;
				break;
			}
		} else if ((uint32_t)crc32(0, d + off + RECORD_HDR, len) != crc) {
			size_t after = off + RECORD_HDR + len;
			next = after < size && !fuzz_intact_at(d, size, after)
				       ? fuzz_next_intact(d, size, off)
				       : size;
			if (next == size)
				next = after;
			else
				f->skipped += next - off;
			f->bad_crc++;
			f->bad_events += type == RECORD_EVENTS || type == RECORD_RAW;
			off = next;
			continue;
		} else {
			off += RECORD_HDR + (size_t)len;
			continue;
		}
		f->bad_crc++;
		f->bad_events += type == RECORD_EVENTS || type == RECORD_RAW;
		f->skipped += next - off;
		off = next;
	}
}

/* The input as a file: an anonymous one in memory, rewritten each time. */
static int fuzz_fd = -1;
static char fuzz_path[64];

static void fuzz_file(const uint8_t *data, size_t size)
{
	if (fuzz_fd < 0) {
		fuzz_fd = memfd_create("fuzz_record", MFD_CLOEXEC);
		if (fuzz_fd < 0) {
			perror("fuzz_record: memfd_create");
			abort();
		}
		snprintf(fuzz_path, sizeof fuzz_path, "/proc/self/fd/%d", fuzz_fd);
	}
	if (ftruncate(fuzz_fd, 0) < 0 || (size && pwrite(fuzz_fd, data, size, 0) != (ssize_t)size))
		abort();
}

struct fuzz_warn {
	unsigned n;
};

static void fuzz_on_warn(void *ctx, const char *msg)
{
	struct fuzz_warn *w = ctx;
	if (!msg || !*msg)
		abort();
	w->n++;
}

/* One output in memory. */
struct fuzz_out {
	struct writer w;
	char *buf;
	size_t len;
};

enum { O_SUMMARY, O_JSON, O_FOLDED, O_PERFETTO, O_PPROF, O_GRAPH, O_CHART, O_N };

/* `spanstat report -j jobs` of files with every output, into out (O_N of
 * them, closed); recreport_run's status. */
static int fuzz_report(const char *const *files, size_t nfiles, unsigned flags, const char *weight,
		       unsigned jobs, struct fuzz_out *out, struct fuzz_warn *warn, char **cause)
{
	const struct writer_ops *ops[O_N] = {flags & 32 ? &csv_writer_ops : &summary_writer_ops,
					     &json_writer_ops,
					     &folded_writer_ops,
					     &perfetto_writer_ops,
					     &pprof_writer_ops,
					     &flamegraph_writer_ops,
					     &flamechart_writer_ops};
	struct writer *wv[O_N];
	memset(out, 0, O_N * sizeof *out);
	for (int k = 0; k < O_N; k++) {
		struct writer *w = &out[k].w;
		w->ops = ops[k];
		w->fp = open_memstream(&out[k].buf, &out[k].len);
		if (!w->fp)
			abort();
		w->opts.csv_sep = flags & 32 ? "," : NULL;
		w->opts.spans_table = flags & 64;
		w->opts.spans_location = flags & 128;
		w->opts.folded_threads = flags & 1;
		w->opts.weight = weight;
		wv[k] = w;
	}
	struct recreport_opts ro = {.files = files,
				    .nfiles = nfiles,
				    .writers = wv,
				    .nwriters = O_N,
				    .compensate = flags & 8,
				    .jobs = jobs,
				    .warn = fuzz_on_warn,
				    .ctx = warn};
	const struct writer *failed = NULL;
	int r = recreport_run(&ro, &failed, cause);
	for (int k = 0; k < O_N; k++) {
		if (out[k].w.ops->release)
			out[k].w.ops->release(&out[k].w);
		fclose(out[k].w.fp);
	}
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

/* Where the i-th framed record starts (its header), or 0 when there are
 * fewer; *n: how many there are. */
static size_t fuzz_record_at(const uint8_t *d, size_t size, size_t i, size_t *n)
{
	size_t found = 0, at = 0;
	for (size_t off = RECORD_FILE_HDR; off < size && size - off >= RECORD_HDR;) {
		uint32_t h[3];
		memcpy(h, d + off, sizeof h);
		uint32_t len = le32toh(h[1]);
		if (len > size - off - RECORD_HDR)
			break;
		if (found++ == i)
			at = off;
		off += RECORD_HDR + (size_t)len;
	}
	*n = found;
	return at;
}

/* Most mutations would only break a CRC, and the reader would never look
 * inside a payload: so three times in four, one record's payload is
 * mutated alone and its length and CRC made to match (the file stays one
 * the reader takes whole); else the bytes are mutated as they are
 * (framing, CRCs, truncation). */
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
	size_t n;
	if (seed % 4 == 0 || !fuzz_record_at(data, size, 0, &n) || max_size < size)
		return LLVMFuzzerMutate(data, size, max_size);
	size_t off = fuzz_record_at(data, size, seed / 4 % n, &n);
	uint32_t h[3];
	memcpy(h, data + off, sizeof h);
	size_t len = le32toh(h[1]), room = max_size - size;
	uint8_t *p = len + room ? malloc(len + room) : NULL;
	if (!p)
		return LLVMFuzzerMutate(data, size, max_size);
	memcpy(p, data + off + RECORD_HDR, len);
	size_t nlen = LLVMFuzzerMutate(p, len, len + room);
	if (nlen > len + room || nlen > RECORD_MAX_PAYLOAD) {
		free(p);
		return size;
	}
	uint8_t *tail = data + off + RECORD_HDR + len;
	memmove(data + off + RECORD_HDR + nlen, tail, size - (off + RECORD_HDR + len));
	memcpy(data + off + RECORD_HDR, p, nlen);
	h[1] = htole32((uint32_t)nlen);
	h[2] = htole32((uint32_t)crc32(0, p, (uInt)nlen));
	memcpy(data + off, h, sizeof h);
	free(p);
	return size - len + nlen;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_file(data, size);
	unsigned flags = (unsigned)crc32(0, data, (uInt)size);
	static const char *const weights[] = {NULL, "cpu", "task-clock", "allocs"};
	const char *weight = weights[(flags >> 1) & 3];

	/* the reader alone, against the framing */
	struct fuzz_frames fr;
	fuzz_frames(data, size, &fr);
	struct strtab strings;
	struct spannames names;
	if (strtab_init(&strings) < 0)
		abort();
	spannames_init(&names, &strings);
	struct recfile *rf = NULL;
	char *cause = NULL;
	int opened = recfile_open(&rf, fuzz_path, &strings, &names, NULL, &cause);
	bool damaged = false, window = false;
	if (opened == 0) {
		const struct record_damage *dm = recfile_damage(rf);
		const struct run_head *h = recfile_head(rf);
		struct run_end e;
		recfile_end(rf, &e);
		if (!fr.header_ok || dm->lost_bytes != fr.lost_bytes ||
		    dm->skipped_bytes != fr.skipped || dm->lost_events != fr.bad_events ||
		    dm->bad_records < fr.bad_crc)
			abort(); /* the reader counts other damage than the framing has */
		if (e.nruns > h->runs || !h->evl || !h->metrics)
			abort();
		/* the damage is whole once the events were replayed (blocks
		 * whose CRC holds may still not decode) */
		struct analysis an;
		if (analysis_init(&an, NULL, 0, h->spans, h->metrics->n) == 0 &&
		    analysis_start(&an, h) == 0)
			recfile_replay(rf, &an, NULL);
		analysis_release(&an);
		damaged = dm->lost_bytes || dm->skipped_bytes || dm->bad_records || dm->no_end ||
			  dm->lost_runs || dm->unknown ||
			  dm->raw_records[0] != dm->raw_records[1] || dm->raw_blocks[0] ||
			  dm->raw_blocks[1] || dm->raw_blocks[2] || dm->lost_strings ||
			  dm->lost_procs || dm->lost_answers; /* each said in its own line */
		const struct record_window *win = recfile_window(rf);
		window = win->present;
		if (window && win->spans > win->events)
			abort(); /* more span begins overwritten than events */
		recfile_close(rf);
	} else if (!cause) {
		abort(); /* refused without saying why */
	}
	free(cause);
	cause = NULL;
	spannames_release(&names);
	strtab_release(&strings);

	/* `spanstat report` with every output */
	struct fuzz_out out[O_N];
	const char *files[2] = {fuzz_path, fuzz_path};
	size_t nfiles = flags & 16 && size <= FUZZ_MERGE_MAX ? 2 : 1;
	struct fuzz_warn warn = {0};
	int r = fuzz_report(files, nfiles, flags, weight, 1, out, &warn, &cause);
	/* and, for half the inputs, with -j 3 (the trace and the flame chart
	 * each replayed in a thread of its own): the same bytes, the same
	 * status and the same warnings */
	if (flags & 256) {
		struct fuzz_out jout[O_N];
		struct fuzz_warn jwarn = {0};
		char *jcause = NULL;
		int jr = fuzz_report(files, nfiles, flags, weight, 3, jout, &jwarn, &jcause);
		if (jr != r || jwarn.n != warn.n || !jcause != !cause ||
		    (cause && strcmp(cause, jcause) != 0))
			abort(); /* -j changed what the report said */
		for (int k = 0; k < O_N; k++) {
			if (jout[k].len != out[k].len || jout[k].w.err != out[k].w.err ||
			    memcmp(jout[k].buf, out[k].buf, out[k].len) != 0)
				abort(); /* -j changed an output's bytes */
			free(jout[k].buf);
		}
		free(jcause);
	}
	if ((r == 0) != (opened == 0) || (r < 0 && !cause))
		abort(); /* the report and the reader disagree on the file */
	free(cause);
	if (r == 0) {
		if (damaged || window ? warn.n == 0 : warn.n != 0 && nfiles == 1)
			abort(); /* damage or a window unsaid, or a whole file warned
				  * about (a merge may warn of two files of one rank) */
		/* the outputs that take no weight never fail in memory */
		if (out[O_SUMMARY].w.err || out[O_JSON].w.err || out[O_PERFETTO].w.err ||
		    out[O_CHART].w.err)
			abort();
		cJSON *doc = cJSON_ParseWithLength(out[O_JSON].buf, out[O_JSON].len);
		if (!doc || !fuzz_utf8(out[O_JSON].buf, out[O_JSON].len))
			abort(); /* JSON that a parser rejects, or not UTF-8 */
		cJSON_Delete(doc);
		const uint8_t *pb = (const uint8_t *)out[O_PERFETTO].buf;
		if (!fuzz_proto(pb, pb + out[O_PERFETTO].len, 1))
			abort(); /* not a well-formed sequence of trace packets */
		if (!fuzz_svg(out[O_CHART].buf, out[O_CHART].len))
			abort();
		if (!out[O_GRAPH].w.err && !fuzz_svg(out[O_GRAPH].buf, out[O_GRAPH].len))
			abort();
		const uint8_t *g = (const uint8_t *)out[O_PPROF].buf;
		if (!out[O_PPROF].w.err && (out[O_PPROF].len < 18 || g[0] != 0x1f || g[1] != 0x8b))
			abort(); /* written, yet not gzip */

		static const char *out_dir;
		static int out_init;
		static unsigned long out_n;
		if (!out_init++)
			out_dir = getenv("FUZZ_OUT_DIR");
		if (out_dir) {
			fuzz_save(out_dir, out_n, "json", out[O_JSON].buf, out[O_JSON].len);
			fuzz_save(out_dir, out_n, "pftrace", out[O_PERFETTO].buf,
				  out[O_PERFETTO].len);
			fuzz_save(out_dir, out_n, "chart.svg", out[O_CHART].buf, out[O_CHART].len);
			if (!out[O_GRAPH].w.err) /* refused: a weight the file has no metric for */
				fuzz_save(out_dir, out_n, "graph.svg", out[O_GRAPH].buf,
					  out[O_GRAPH].len);
			out_n++;
		}
	}
	for (int k = 0; k < O_N; k++)
		free(out[k].buf);
	return 0;
}
