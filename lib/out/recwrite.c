/* recwrite.c: the record writer (recfile.h): a writer like the others,
 * whose output is everything the session hands the writers, kept for
 * `spanstat report`.  Span events are encoded into blocks as they arrive;
 * a block goes to the file when full, after the strings its events name.
 * Memory stays one block, whatever the number of events.
 *
 * With --keep-last (opts.keep_last), nothing is written until the end: the
 * records of events, messages, samples and run starts are kept in memory,
 * the oldest overwritten (counted in the window) when they hold more than
 * keep_last bytes, and the file is written whole at the end or, for a
 * snapshot, to a temporary file put in place by rename. */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <zlib.h>

#include "cause.h"
#include "grow.h"
#include "outfile.h"
#include "outpath.h"
#include "recfile.h"
#include "u64map.h"
#include "writer.h"

#define RECW_EVENT_MAX (8 + 6 * 10 + 2 * SPANMETRIC_MAX * 10) /* one encoded event, at most */

/* A payload being built (not events: those use the block). */
struct recbuf {
	uint8_t *p;
	size_t len, cap;
	bool oom;
};

/* A record kept for --keep-last, or (type RECW_PACK) records of less than
 * RECW_PACK bytes packed together, each as its type and length (u32, host
 * order) and payload: a typed argument or a message is some 20 bytes, less
 * than an allocation and an index entry of its own would take. */
struct recitem {
	uint8_t *p;
	uint32_t type, len;
	uint64_t events, spans; /* EVENTS: how many, and of them begins */
};

#define RECW_PACK 4096
#define RECW_PACKED 0 /* the type of a pack (no record's) */

/* --keep-last: a process's or thread's start or name, or a process's end,
 * kept apart too: when its block is overwritten, the file still names the
 * threads and processes of the window. */
struct recident {
	uint64_t item; /* the record it went into (counted from the first) */
	uint64_t ts;
	int64_t value;
	uint32_t pid, tid, name;
	uint8_t kind, flags;
	size_t run_at; /* run starts before it */
};

struct recw {
	uint8_t block[RECORD_BLOCK];
	uint64_t bev, bspans; /* the open block's events, and begins among them */
	/* --keep-last: the kept records, item[first] the oldest, holding kept
	 * bytes with their headers; the run starts overwritten stay (pinned) */
	uint64_t keep;
	struct recitem *item;
	size_t first, nitem, capitem;
	bool packing; /* item[nitem - 1] is a pack records may go to */
	uint64_t kept;
	uint64_t *pinned;
	size_t npinned, cappinned;
	struct record_window win;
	uint64_t pushed, dropped; /* records kept so far, and overwritten */
	size_t nrunstart;	  /* run starts kept so far */
	struct recident *ident;
	size_t nident, capident;
	/* (pid, tid), and (pid, 0) for the process -> the last record holding
	 * one of its events + 1: a thread none of whose records is in the
	 * window is not named in it (its end is not told: it may be long gone) */
	struct u64map seen;
	size_t len; /* 0: no block open */
	uint32_t pid, tid;
	uint64_t ts;
	uint64_t cum[SPANMETRIC_MAX]; /* the last cumulative values written for
				       * this thread in this block (0 after a switch) */
	/* typed arguments given among the open block's events: an ARG
	 * record written after it (positions, and the last one's thread
	 * and time, to write the next as differences) */
	struct recbuf args;
	uint64_t nargs, apos, ats;
	uint32_t apid, atid;
	/* the names processes were given (SPAN_PROCESS), once each, in order:
	 * in END, so that a report of several files can give them their
	 * rank's prefix before it replays them in threads (recfile_prefix) */
	struct u64map pnseen;
	uint32_t *pnames;
	size_t npnames, cappnames;
	bool raw;      /* the session's raw capture comes (RAW), not its events */
	uint32_t nstr; /* strings written: ids below */
	uint32_t ncat; /* categories written: catlog entries below */
	unsigned nval;
	int err;
};

static void rb_reserve(struct recbuf *b, size_t more)
{
	if (b->oom || b->len + more <= b->cap)
		return;
	if (more > SIZE_MAX - b->len || GROW(b->p, b->len + more, b->cap, 256) < 0)
		b->oom = true;
}

static void rb_u64(struct recbuf *b, uint64_t v)
{
	rb_reserve(b, 10);
	if (!b->oom)
		b->len += pbenc_put_varint(b->p + b->len, v);
}

static void rb_i64(struct recbuf *b, int64_t v)
{
	rb_u64(b, record_zz(v));
}

static void rb_dbl(struct recbuf *b, double d)
{
	uint64_t u;
	memcpy(&u, &d, sizeof u);
	rb_u64(b, u);
}

static void rb_str(struct recbuf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	rb_u64(b, n);
	rb_reserve(b, n);
	if (!b->oom && n) {
		memcpy(b->p + b->len, s, n);
		b->len += n;
	}
}

/* One record: its header, then the payload. */
static int recw_put(struct writer *w, enum record_type type, const void *payload, size_t len)
{
	uint32_t hdr[3] = {htole32((uint32_t)type), htole32((uint32_t)len),
			   htole32((uint32_t)crc32(0, payload, (uInt)len))};
	if (fwrite(hdr, sizeof hdr, 1, w->fp) != 1 || (len && fwrite(payload, len, 1, w->fp) != 1))
		return -(errno ? errno : EIO);
	return 0;
}

static int recw_put_buf(struct writer *w, enum record_type type, struct recbuf *b)
{
	int r = b->oom ? -ENOMEM : recw_put(w, type, b->p, b->len);
	free(b->p);
	memset(b, 0, sizeof *b);
	return r;
}

/* The strings defined since the last call. */
static int recw_strings(struct writer *w)
{
	struct recw *rw = w->priv;
	const struct strtab *t = w->head->strings;
	if (!t || t->n <= rw->nstr)
		return 0;
	struct recbuf b = {0};
	uint32_t first = rw->nstr ? rw->nstr : 1;
	rb_u64(&b, first);
	rb_u64(&b, t->n - first);
	for (uint32_t id = first; id < t->n; id++)
		rb_str(&b, strtab_get(t, id));
	rw->nstr = t->n;
	return recw_put_buf(w, RECORD_STRINGS, &b);
}

/* The categories names got since the last call (spanstat_category), after
 * the strings they name. */
static int recw_cats(struct writer *w)
{
	struct recw *rw = w->priv;
	const struct strtab *t = w->head->strings;
	if (!t || t->ncatlog <= rw->ncat)
		return 0;
	struct recbuf b = {0};
	rb_u64(&b, t->ncatlog - rw->ncat);
	for (uint32_t i = rw->ncat; i < t->ncatlog; i++) {
		rb_u64(&b, t->catlog[i]);
		rb_u64(&b, strtab_cat(t, t->catlog[i]));
	}
	rw->ncat = t->ncatlog;
	return recw_put_buf(w, RECORD_CATEGORIES, &b);
}

/* How every name known so far shows (the reader keeps the last). */
static int recw_names(struct writer *w)
{
	const struct spannames *v = w->head->names;
	if (!v)
		return 0;
	struct recbuf b = {0};
	uint64_t n = 0;
	for (uint32_t id = 0; id < v->n; id++)
		n += spannames_known(v, id) != 0;
	rb_u64(&b, n);
	for (uint32_t id = 0; id < v->n; id++) {
		if (!spannames_known(v, id))
			continue;
		rb_u64(&b, id);
		rb_u64(&b, v->text[id]);
		rb_u64(&b, v->file[id]);
		rb_u64(&b, v->line[id]);
	}
	return recw_put_buf(w, RECORD_NAMES, &b);
}

/* --keep-last: kept record item - 1 (counted from the first) holds an
 * event of thread tid of pid. */
static int recw_seen(struct recw *rw, uint32_t pid, uint32_t tid, uint64_t item)
{
	if (u64map_put(&rw->seen, (uint64_t)pid << 32 | tid, item) < 0 ||
	    u64map_put(&rw->seen, (uint64_t)pid << 32, item) < 0)
		return -ENOMEM;
	return 0;
}

/* Whether a thread (or, tid 0, a process) has a record in the window. */
static bool recw_in_window(const struct recw *rw, uint32_t pid, uint32_t tid)
{
	return u64map_get(&rw->seen, (uint64_t)pid << 32 | tid) > rw->dropped;
}

/* --keep-last: one record overwritten, counted (a run start is kept). */
static int recw_drop(struct recw *rw, uint32_t type, const uint8_t *p, uint32_t len,
		     uint64_t events, uint64_t spans)
{
	rw->kept -= RECORD_HDR + len;
	if (type == RECORD_RUNSTART) { /* which threads are whose run: kept */
		struct record_in in = {p, p + len, true};
		uint64_t run = record_get_u64(&in);
		if (GROW(rw->pinned, rw->npinned + 1, rw->cappinned, 8) < 0)
			return -ENOMEM;
		rw->pinned[rw->npinned++] = run;
		return 0;
	}
	rw->win.events += events;
	rw->win.spans += spans;
	rw->win.messages += type == RECORD_MESSAGE;
	rw->win.samples += type == RECORD_INTERVAL;
	rw->win.bytes += RECORD_HDR + len;
	return 0;
}

/* --keep-last: one record kept (small ones packed), the oldest overwritten
 * while the kept ones hold more than keep bytes (the newest always stays). */
static int recw_keep(struct recw *rw, enum record_type type, const void *payload, size_t len,
		     uint64_t events, uint64_t spans)
{
	struct recitem *pack = rw->packing ? &rw->item[rw->nitem - 1] : NULL;
	bool small = type != RECORD_EVENTS && len <= RECW_PACK - 8;
	if (!small || !pack || pack->len + 8 + len > RECW_PACK) {
		if (GROW(rw->item, rw->nitem + 1, rw->capitem, 64) < 0)
			return -ENOMEM;
		uint8_t *p = malloc(small ? RECW_PACK : len ? len : 1);
		if (!p)
			return -ENOMEM;
		rw->item[rw->nitem++] = (struct recitem){p, small ? RECW_PACKED : (uint32_t)type,
							 small ? 0 : (uint32_t)len, events, spans};
		if (!small)
			memcpy(p, payload, len);
		rw->pushed++;
		rw->packing = small;
		pack = small ? &rw->item[rw->nitem - 1] : NULL;
	}
	if (small) {
		uint32_t h[2] = {(uint32_t)type, (uint32_t)len};
		memcpy(pack->p + pack->len, h, sizeof h);
		memcpy(pack->p + pack->len + sizeof h, payload, len);
		pack->len += (uint32_t)(sizeof h + len);
	}
	rw->kept += RECORD_HDR + len;
	rw->nrunstart += type == RECORD_RUNSTART;
	int e = 0;
	while (e == 0 && rw->kept > rw->keep && rw->nitem - rw->first > 1) {
		struct recitem *it = &rw->item[rw->first++];
		rw->dropped++;
		for (uint32_t o = 0; it->type == RECW_PACKED && e == 0 && o < it->len;) {
			uint32_t h[2];
			memcpy(h, it->p + o, sizeof h);
			e = recw_drop(rw, h[0], it->p + o + sizeof h, h[1],
				      h[0] == RECORD_ASYNC || h[0] == RECORD_ARG, 0);
			o += (uint32_t)sizeof h + h[1];
		}
		if (it->type != RECW_PACKED)
			e = recw_drop(rw, it->type, it->p, it->len, it->events, it->spans);
		free(it->p);
	}
	if (rw->first > 64 && rw->first * 2 > rw->nitem) {
		memmove(rw->item, rw->item + rw->first, (rw->nitem - rw->first) * sizeof *rw->item);
		rw->nitem -= rw->first;
		rw->first = 0;
	}
	return e;
}

/* The open block, after the strings its events name, and the arguments
 * given among its events after it (an ARG record). */
static int recw_flush(struct writer *w)
{
	struct recw *rw = w->priv;
	if (!rw->len && !rw->nargs)
		return 0;
	int r = 0;
	if (rw->keep) {
		r = recw_keep(rw, RECORD_EVENTS, rw->block, rw->len, rw->bev, rw->bspans);
		if (r == 0 && rw->nargs)
			r = rw->args.oom ? -ENOMEM
					 : recw_keep(rw, RECORD_ARG, rw->args.p, rw->args.len,
						     rw->nargs, 0);
	} else {
		r = recw_strings(w);
		if (r == 0)
			r = recw_cats(w);
		if (r == 0)
			r = recw_put(w, RECORD_EVENTS, rw->block, rw->len);
		if (r == 0 && rw->nargs)
			r = rw->args.oom ? -ENOMEM
					 : recw_put(w, RECORD_ARG, rw->args.p, rw->args.len);
	}
	rw->len = 0;
	rw->bev = rw->bspans = 0;
	rw->args.len = 0;
	rw->nargs = rw->apos = rw->ats = 0;
	return r;
}

static void recw_rusage(struct recbuf *b, const struct rusage_info *ru)
{
	rb_u64(b, ru->elapsed_ns);
	rb_u64(b, ru->utime_ns);
	rb_u64(b, ru->stime_ns);
	rb_i64(b, ru->maxrss_kb);
	rb_i64(b, ru->minflt);
	rb_i64(b, ru->majflt);
	rb_i64(b, ru->nvcsw);
	rb_i64(b, ru->nivcsw);
}

static void recw_counts(struct recbuf *b, const struct count *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		rb_u64(b, (uint64_t)c[i].state);
		rb_u64(b, c[i].raw);
		rb_u64(b, c[i].enabled);
		rb_u64(b, c[i].running);
		rb_dbl(b, c[i].value);
		rb_i64(b, c[i].err);
		rb_u64(b, c[i].user_only);
	}
}

/* A signed number from the environment, or -1. */
static long recw_env_num(const char *v)
{
	char *end;
	long n = v ? strtol(v, &end, 10) : -1;
	return v && *v && !*end && n >= 0 ? n : -1;
}

static void recw_head(struct recbuf *b, const struct run_head *h)
{
	char boot[64] = "";
	struct utsname u;
	if (uname(&u) != 0)
		memset(&u, 0, sizeof u);
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
	if (f) {
		if (!fgets(boot, sizeof boot, f))
			boot[0] = '\0';
		boot[strcspn(boot, "\n")] = '\0';
		fclose(f);
	}
	struct run_clocks c = h->clocks;
	if (!c.mono_ns)
		run_clocks_now(&c);
	rb_str(b, "spanstat " PACKAGE_VERSION);
	rb_u64(b, (uint64_t)h->argc);
	for (int i = 0; i < h->argc; i++)
		rb_str(b, h->argv[i]);
	rb_u64(b, h->runs);
	rb_u64(b, h->interval_ms);
	rb_u64(b, (uint64_t)h->spans | (uint64_t)h->rusage_unknown << 1);
	rb_str(b, h->target);
	rb_u64(b, (uint64_t)h->start.tv_sec);
	rb_u64(b, (uint64_t)h->start.tv_nsec);
	rb_u64(b, h->start_mono);
	rb_str(b, u.nodename);
	rb_str(b, outpath_job());
	rb_str(b, boot);
	rb_str(b, u.sysname);
	rb_str(b, u.release);
	rb_str(b, u.machine);
	rb_i64(b, recw_env_num(outpath_rank()));
	rb_i64(b, recw_env_num(outpath_local_rank()));
	rb_u64(b, c.real_ns);
	rb_u64(b, c.mono_ns);
	rb_u64(b, c.boot_ns);
	const struct evlist *evl = h->evl;
	rb_u64(b, evl->n);
	for (size_t i = 0; i < evl->n; i++) {
		const struct event *e = &evl->ev[i];
		rb_str(b, e->name);
		rb_u64(b, e->attr.type);
		rb_u64(b, e->attr.config);
		rb_u64(b, e->probe_path ? 0 : e->attr.config1); /* a uprobe's: a pointer here */
		rb_u64(b, e->attr.config2);
		rb_u64(b, (uint64_t)(e->attr.exclude_user | e->attr.exclude_kernel << 1 |
				     e->attr.exclude_hv << 2));
		rb_i64(b, e->group);
		rb_u64(b, e->leader);
		rb_str(b, e->unit);
		rb_dbl(b, e->scale);
	}
	const struct spanmetrics *ms = h->metrics;
	rb_u64(b, ms ? ms->n : 0);
	rb_i64(b, ms ? ms->off_cpu : -1);
	rb_u64(b, ms ? ms->first_target : 0);
	for (unsigned i = 0; ms && i < ms->n; i++) {
		rb_u64(b, ms->m[i].kind);
		rb_str(b, ms->m[i].name);
		rb_u64(b, (uint64_t)ms->m[i].supported | (uint64_t)ms->m[i].time << 1);
	}
	/* appended after the first files: older readers skip them */
	rb_str(b, h->exe);
	rb_str(b, h->build_id);
	rb_u64(b, h->delay_ms); /* and later still these */
	rb_u64(b, h->timeout_ms);
	rb_u64(b, h->interval_count);
}

/* The file header and HEAD. */
static int recw_header(struct writer *w, const struct run_head *h)
{
	if (fwrite(RECORD_MAGIC, 8, 1, w->fp) != 1)
		return -(errno ? errno : EIO);
	uint32_t v[2] = {htole32(RECORD_VERSION), htole32(RECORD_FILE_HDR)};
	if (fwrite(v, sizeof v, 1, w->fp) != 1)
		return -(errno ? errno : EIO);
	struct recbuf b = {0};
	recw_head(&b, h);
	return recw_put_buf(w, RECORD_HEAD, &b);
}

static int recw_start(struct writer *w, const struct run_head *h)
{
	struct recw *rw = calloc(1, sizeof *rw);
	if (!rw)
		return -ENOMEM;
	w->priv = rw;
	rw->nval = h->metrics ? h->metrics->n : 0;
	rw->keep = w->opts.keep_last;
	rw->raw = w->opts.raw && !rw->keep;
	return rw->keep ? 0 : recw_header(w, h); /* --keep-last: all at the end */
}

/* --keep-last: the processes whose end was overwritten (pid -> the index
 * of that end + 1): nothing of the window is theirs. */
static int recw_gone(const struct recw *rw, struct u64map *gone)
{
	for (size_t j = 0; j < rw->nident && rw->ident[j].item < rw->dropped; j++)
		if (rw->ident[j].kind == SPAN_PROCESS_END &&
		    u64map_put(gone, rw->ident[j].pid, j + 1) < 0)
			return -ENOMEM;
	return 0;
}

/* --keep-last: from *j on, the starts and names of threads and processes
 * whose records were overwritten and that came before run start `run`, as
 * blocks of events (of the processes that had not ended before the window). */
static int recw_idents(struct writer *w, const struct u64map *gone, size_t *j, size_t run)
{
	struct recw *rw = w->priv;
	uint8_t *b = NULL;
	size_t len = 0;
	uint64_t ts = 0;
	int e = 0;
	for (; *j < rw->nident && rw->ident[*j].item < rw->dropped && rw->ident[*j].run_at <= run;
	     ++*j) {
		const struct recident *id = &rw->ident[*j];
		if (*j < u64map_get(gone, id->pid) ||
		    !recw_in_window(rw, id->pid, id->kind == SPAN_THREAD ? id->tid : 0))
			continue;
		if (!b && !(b = malloc(RECORD_BLOCK)))
			return -ENOMEM;
		if (len > RECORD_BLOCK - RECW_EVENT_MAX) {
			if ((e = recw_put(w, RECORD_EVENTS, b, len)) < 0)
				break;
			len = 0;
			ts = 0;
		}
		uint8_t *p = b + len;
		*p++ = (uint8_t)(id->kind | 16 | (id->flags & SPAN_F_UNFINISHED ? 8 : 0));
		p += pbenc_put_varint(p, id->pid);
		p += pbenc_put_varint(p, id->tid);
		p += pbenc_put_varint(p, record_zz((int64_t)(id->ts - ts)));
		ts = id->ts;
		p += pbenc_put_varint(p, id->name);
		if (id->kind != SPAN_THREAD)
			p += pbenc_put_varint(p, record_zz(id->value));
		len = (size_t)(p - b);
	}
	if (e == 0 && len)
		e = recw_put(w, RECORD_EVENTS, b, len);
	free(b);
	return e;
}

/* --keep-last: what the file holds besides the events, and the kept
 * records: header, HEAD, every string and category, WINDOW, the run
 * starts overwritten (each after the threads and processes overwritten
 * before it), the kept records (and, for a snapshot, the open
 * block), NAMES.  RUN and END follow at the end. */
static int recw_dump(struct writer *w, bool snapshot)
{
	struct recw *rw = w->priv;
	rw->nstr = rw->ncat = 0;
	int e = recw_header(w, w->head);
	if (e == 0)
		e = recw_strings(w);
	if (e == 0)
		e = recw_cats(w);
	if (e == 0) {
		struct recbuf b = {0};
		rb_u64(&b, rw->keep);
		rb_u64(&b, snapshot);
		rb_u64(&b, rw->win.events);
		rb_u64(&b, rw->win.spans);
		rb_u64(&b, rw->win.messages);
		rb_u64(&b, rw->win.samples);
		rb_u64(&b, rw->win.bytes);
		e = recw_put_buf(w, RECORD_WINDOW, &b);
	}
	/* the run starts overwritten, each before the threads and processes
	 * overwritten after it */
	struct u64map gone = {0};
	e = e == 0 ? recw_gone(rw, &gone) : e;
	size_t j = 0;
	for (size_t i = 0; e == 0 && i <= rw->npinned; i++) {
		e = recw_idents(w, &gone, &j, i);
		uint8_t p[10];
		if (e == 0 && i < rw->npinned)
			e = recw_put(w, RECORD_RUNSTART, p, pbenc_put_varint(p, rw->pinned[i]));
	}
	u64map_release(&gone);
	for (size_t i = rw->first; e == 0 && i < rw->nitem; i++) {
		const struct recitem *it = &rw->item[i];
		for (uint32_t o = 0; it->type == RECW_PACKED && e == 0 && o < it->len;) {
			uint32_t h[2];
			memcpy(h, it->p + o, sizeof h);
			e = recw_put(w, (enum record_type)h[0], it->p + o + sizeof h, h[1]);
			o += (uint32_t)sizeof h + h[1];
		}
		if (it->type != RECW_PACKED)
			e = recw_put(w, (enum record_type)it->type, it->p, it->len);
	}
	if (e == 0 && snapshot && rw->len)
		e = recw_put(w, RECORD_EVENTS, rw->block, rw->len);
	if (e == 0)
		e = recw_names(w);
	return e;
}

bool recwrite_window(const struct writer *w, struct record_window *win)
{
	const struct recw *rw = w->ops == &record_writer_ops ? w->priv : NULL;
	if (!rw || !rw->keep)
		return false;
	*win = rw->win;
	win->present = true;
	win->size = rw->keep;
	return true;
}

/* A snapshot's file could not be opened or put in place: the output file's
 * cause ("cannot write 'F': why") said as the snapshot's. */
static int recw_snapshot_fail(char **cause, int e, const char *path)
{
	char *in = cause ? *cause : NULL;
	const char *q = in ? strstr(in, "': ") : NULL;
	if (cause)
		*cause = NULL;
	cause_set(cause, e, "cannot write a snapshot to '%s': %s", path,
		  q    ? q + 3
		  : in ? in
		       : strerror(-e));
	free(in);
	return e;
}

int recwrite_snapshot(struct writer *w, char **cause)
{
	struct recw *rw = w->ops == &record_writer_ops ? w->priv : NULL;
	const char *path = w->opts.path;
	if (!rw || !rw->keep || !path)
		return cause_set(cause, -EINVAL, "a snapshot needs --keep-last and a record file");
	if (w->err)
		return cause_set(cause, w->err, "cannot write a snapshot to '%s': %s", path,
				 strerror(-w->err));
	struct outfile of;
	int e = outfile_open(&of, path, 0, cause);
	if (e < 0)
		return recw_snapshot_fail(cause, e, path);
	if (!outfile_replaces(&of)) { /* a snapshot there would come ahead of the
				       * end's file: two record files in one */
		outfile_abort(&of);
		return cause_set(cause, -EINVAL,
				 "cannot write a snapshot to '%s': a stream (a FIFO, a device or "
				 "spanstat's own output), which a snapshot cannot replace; the "
				 "record is written when the run ends",
				 path);
	}
	FILE *fp = w->fp;
	w->fp = of.fp;
	e = recw_dump(w, true);
	if (e == 0 && fflush(of.fp) != 0)
		e = -(errno ? errno : EIO);
	e = outfile_why(&of, e);
	w->fp = fp;
	if (e < 0) {
		outfile_abort(&of);
		return cause_set(cause, e, "cannot write a snapshot to '%s': %s", path,
				 strerror(-e));
	}
	e = outfile_commit(&of, cause);
	return e < 0 ? recw_snapshot_fail(cause, e, path) : 0;
}

static int recw_interval(struct writer *w, const struct interval_sample *s)
{
	int r = recw_flush(w);
	if (r < 0)
		return r;
	struct recbuf b = {0};
	rb_u64(&b, s->run);
	rb_u64(&b, s->t_ns);
	rb_u64(&b, s->mono_ns);
	rb_u64(&b, s->length_ns);
	recw_counts(&b, s->counts, w->head->evl->n);
	struct recw *rw = w->priv;
	if (rw->keep) {
		r = b.oom ? -ENOMEM : recw_keep(rw, RECORD_INTERVAL, b.p, b.len, 0, 0);
		free(b.p);
		return r;
	}
	return recw_put_buf(w, RECORD_INTERVAL, &b);
}

static void recw_run(struct writer *w, unsigned run)
{
	struct recw *rw = w->priv;
	uint8_t p[10];
	int r = rw ? recw_flush(w) : 0;
	if (r == 0 && rw && rw->keep)
		r = recw_keep(rw, RECORD_RUNSTART, p, pbenc_put_varint(p, run), 0, 0);
	else if (r == 0 && rw)
		r = recw_put(w, RECORD_RUNSTART, p, pbenc_put_varint(p, run));
	if (r < 0 && !w->err)
		w->err = r;
}

/* The record b of an event of its own (a message, an async span's event),
 * r what flushing the block before it gave: kept in the window (as events
 * events of it) or written, and b freed either way. */
static void recw_event_record(struct writer *w, const struct span_event *ev, enum record_type type,
			      struct recbuf *b, uint64_t events, int r)
{
	struct recw *rw = w->priv;
	if (r == 0 && rw->keep) {
		r = b->oom ? -ENOMEM : recw_keep(rw, type, b->p, b->len, events, 0);
		r = r < 0 ? r : recw_seen(rw, ev->pid, ev->tid, rw->pushed);
		free(b->p);
	} else if (r == 0)
		r = recw_put_buf(w, type, b);
	else
		free(b->p);
	if (r < 0)
		w->err = r;
}

/* A message: a record of its own after the block before it, so that a
 * replay gives it to the outputs where it came. */
static void recw_message(struct writer *w, const struct span_event *ev)
{
	struct recbuf b = {0};
	int r = recw_flush(w);
	rb_u64(&b, ev->pid);
	rb_u64(&b, ev->tid);
	rb_u64(&b, ev->ts);
	rb_u64(&b, ev->depth);
	rb_u64(&b, ev->len);
	rb_reserve(&b, ev->len);
	if (!b.oom && ev->len) {
		memcpy(b.p + b.len, ev->text, ev->len);
		b.len += ev->len;
	}
	recw_event_record(w, ev, RECORD_MESSAGE, &b, 0, r);
}

/* An async span's event: a record of its own after the block before it and
 * the strings it names, like a message. */
static void recw_async(struct writer *w, const struct span_event *ev)
{
	struct recw *rw = w->priv;
	struct recbuf b = {0};
	int r = recw_flush(w);
	if (r == 0 && !rw->keep) /* a window writes every string first */
		r = recw_strings(w);
	rb_u64(&b, (uint64_t)(ev->kind - SPAN_ASYNC_BEGIN));
	rb_u64(&b, ev->pid);
	rb_u64(&b, ev->tid);
	rb_u64(&b, ev->ts);
	rb_u64(&b, ev->name);
	rb_u64(&b, ev->aid);
	rb_u64(&b, ev->flags & SPAN_F_UNFINISHED);
	rb_u64(&b, ev->parent);
	rb_u64(&b, ev->begin_ts);
	rb_u64(&b, ev->value > 0 ? (uint64_t)ev->value : 0);
	rb_u64(&b, ev->enters);
	rb_u64(&b, ev->threads);
	recw_event_record(w, ev, RECORD_ASYNC, &b, 1, r);
}

/* A typed argument: into the ARG record of the open block, at its place
 * among the block's events (the number written before it), so that a
 * replay gives it to the outputs where it came; its thread, time and
 * position as differences from the argument before it in the record. */
static void recw_arg(struct writer *w, const struct span_event *ev)
{
	struct recw *rw = w->priv;
	struct recbuf *b = &rw->args;
	if (b->len > RECORD_BLOCK - RECW_EVENT_MAX) {
		int r = recw_flush(w);
		if (r < 0) {
			w->err = r;
			return;
		}
	}
	if (rw->keep && recw_seen(rw, ev->pid, ev->tid, rw->pushed + 1) < 0) {
		w->err = -ENOMEM;
		return;
	}
	rb_u64(b, rw->bev - rw->apos);
	rw->apos = rw->bev;
	if (!rw->nargs || ev->pid != rw->apid || ev->tid != rw->atid) {
		rb_u64(b, 1);
		rb_u64(b, ev->pid);
		rb_u64(b, ev->tid);
		rw->apid = ev->pid;
		rw->atid = ev->tid;
	} else {
		rb_u64(b, 0);
	}
	rb_i64(b, (int64_t)(ev->ts - rw->ats));
	rw->ats = ev->ts;
	rb_u64(b, ev->depth);
	rb_u64(b, ev->name);
	rb_u64(b, ev->flags);
	if (ev->flags == SPAN_ARG_I64)
		rb_i64(b, ev->value);
	else
		rb_u64(b, (uint64_t)ev->value);
	rw->nargs++;
	if (b->oom)
		w->err = -ENOMEM;
}

/* The hot path: one event into the block. */
/* The raw capture: whole RAW blocks (no --keep-last: its window is made of
 * events), each after the strings the live decoder interned so far, which
 * its replay will intern again with the same ids. */
static bool recw_capture_on(struct writer *w)
{
	w->opts.raw = !w->opts.keep_last;
	return w->opts.raw;
}

static void recw_capture(struct writer *w, const void *buf, size_t len)
{
	int r = recw_flush(w);
	if (r == 0)
		r = recw_strings(w);
	if (r == 0)
		r = recw_cats(w);
	if (r == 0)
		r = recw_put(w, RECORD_RAW, buf, len);
	if (r < 0)
		w->err = r;
}

/* With the raw capture, the events are its replay's: only the names of
 * processes are kept, for END. */
static void recw_raw_span(struct writer *w, const struct span_event *ev)
{
	struct recw *rw = w->priv;
	if (ev->kind != SPAN_PROCESS || u64map_get(&rw->pnseen, ev->name))
		return;
	if (GROW(rw->pnames, rw->npnames + 1, rw->cappnames, 16) < 0 ||
	    u64map_put(&rw->pnseen, ev->name, 1) < 0) {
		w->err = -ENOMEM;
		return;
	}
	rw->pnames[rw->npnames++] = ev->name;
}

static void recw_span(void *arg, const struct span_event *ev)
{
	struct writer *w = arg;
	struct recw *rw = w->priv;
	if (!rw || w->err)
		return;
	if (rw->raw) {
		recw_raw_span(w, ev);
		return;
	}
	if (__builtin_expect(ev->kind >= SPAN_MESSAGE, 0)) {
		if (ev->kind == SPAN_MESSAGE)
			recw_message(w, ev);
		else if (ev->kind == SPAN_ARG)
			recw_arg(w, ev);
		else
			recw_async(w, ev);
		return;
	}
	if (rw->len > RECORD_BLOCK - RECW_EVENT_MAX) {
		int r = recw_flush(w);
		if (r < 0) {
			w->err = r;
			return;
		}
	}
	unsigned k = ev->kind;
	if (k == SPAN_PROCESS && !u64map_get(&rw->pnseen, ev->name)) {
		if (GROW(rw->pnames, rw->npnames + 1, rw->cappnames, 16) < 0 ||
		    u64map_put(&rw->pnseen, ev->name, 1) < 0) {
			w->err = -ENOMEM;
			return;
		}
		rw->pnames[rw->npnames++] = ev->name;
	}
	if (rw->keep && (k == SPAN_PROCESS || k == SPAN_THREAD || k == SPAN_PROCESS_END)) {
		if (GROW(rw->ident, rw->nident + 1, rw->capident, 64) < 0) {
			w->err = -ENOMEM;
			return;
		}
		rw->ident[rw->nident++] = (struct recident){
			rw->pushed, ev->ts,	ev->value,	    ev->pid,	  ev->tid,
			ev->name,   (uint8_t)k, (uint8_t)ev->flags, rw->nrunstart};
	}
	uint8_t *p = rw->block + rw->len, *b0 = p++;
	uint8_t f = (uint8_t)(k | (ev->flags & SPAN_F_UNFINISHED ? 8 : 0));
	if (!rw->len || ev->pid != rw->pid || ev->tid != rw->tid) {
		if (rw->keep && recw_seen(rw, ev->pid, ev->tid, rw->pushed + 1) < 0) {
			w->err = -ENOMEM;
			return;
		}
		f |= 16;
		p += pbenc_put_varint(p, ev->pid);
		p += pbenc_put_varint(p, ev->tid);
		rw->pid = ev->pid;
		rw->tid = ev->tid;
		memset(rw->cum, 0, sizeof rw->cum);
		if (!rw->len)
			rw->ts = 0;
	}
	p += pbenc_put_varint(p, record_zz((int64_t)(ev->ts - rw->ts)));
	rw->ts = ev->ts;
	p += pbenc_put_varint(p, ev->name);
	if (k == SPAN_BEGIN || k == SPAN_END || k == SPAN_INSTANT || k == SPAN_COUNTER ||
	    k == SPAN_DAMAGE)
		p += pbenc_put_varint(p, ev->depth);
	if (k == SPAN_PROCESS || k == SPAN_COUNTER || k == SPAN_PROCESS_END || k == SPAN_DAMAGE)
		p += pbenc_put_varint(p, record_zz(ev->value));
	if (k == SPAN_END)
		p += pbenc_put_varint(p, ev->ts - ev->begin_ts);
	if (rw->nval && k == SPAN_END && ev->vals) {
		f |= 64;
		for (unsigned i = 0; i < rw->nval; i++)
			p += pbenc_put_varint(p, ev->vals[i]);
	}
	if (rw->nval && (k == SPAN_BEGIN || k == SPAN_END) && ev->cum) {
		f |= 32; /* as differences from the thread's last, mostly 0 */
		for (unsigned i = 0; i < rw->nval; i++) {
			p += pbenc_put_varint(p, record_zz((int64_t)(ev->cum[i] - rw->cum[i])));
			rw->cum[i] = ev->cum[i];
		}
	}
	*b0 = f;
	rw->len = (size_t)(p - rw->block);
	rw->bev++;
	rw->bspans += k == SPAN_BEGIN;
}

static int recw_finish(struct writer *w, const struct report *r)
{
	struct recw *rw = w->priv;
	int e = recw_flush(w);
	if (e == 0 && rw->keep)
		e = recw_dump(w, false);
	if (e == 0 && !rw->keep)
		e = recw_strings(w);
	if (e == 0 && !rw->keep)
		e = recw_cats(w);
	if (e == 0 && !rw->keep)
		e = recw_names(w);
	size_t n = r->head->evl->n;
	for (unsigned k = 0; e == 0 && k < r->nruns; k++) {
		struct recbuf b = {0};
		rb_u64(&b, k);
		recw_counts(&b, r->run[k].counts, n);
		recw_rusage(&b, &r->run[k].ru);
		rb_i64(&b, r->run[k].wstatus);
		rb_i64(&b, r->run[k].exit_code);
		rb_u64(&b, r->run[k].wall_ns); /* added later: older files end above */
		e = recw_put_buf(w, RECORD_RUN, &b);
	}
	if (e == 0) {
		struct recbuf b = {0};
		const struct decode_stats *d = r->dstats;
		static const struct decode_stats none;
		if (!d)
			d = &none;
		const uint64_t ds[] = {
			d->records,	  d->events,	  d->spans,	   d->dropped,
			d->lost_records,  d->no_exit,	  d->bad_bytes,	   d->bad_records,
			d->bad_ids,	  d->unmatched,	  d->unfinished,   d->over_limit,
			d->clock_unknown, d->lines,	  d->bad_lines,	   d->gaps,
			d->switches_lost, d->waited_ns,	  d->unnamed,	   d->misnested,
			d->unfollowed,	  d->unfol_slots, d->late,	   d->late_procs,
			d->running,	  d->processes,	  d->file_records, d->file_procs,
			d->file_answers,  d->unvalued};
		_Static_assert(sizeof ds / sizeof ds[0] == DECODE_STATS_N, "every field kept");
		rb_u64(&b, sizeof ds / sizeof ds[0]);
		for (size_t i = 0; i < sizeof ds / sizeof ds[0]; i++)
			rb_u64(&b, ds[i]);
		rb_dbl(&b, r->event_cost_ns);
		const struct spanmetrics *ms = r->head->metrics;
		rb_u64(&b, ms ? ms->n : 0);
		for (unsigned i = 0; ms && i < ms->n; i++)
			rb_u64(&b, ms->m[i].supported);
		rb_u64(&b, r->nruns);
		/* the first run's start, known only once it started */
		rb_u64(&b, (uint64_t)r->head->start.tv_sec);
		rb_u64(&b, (uint64_t)r->head->start.tv_nsec);
		rb_u64(&b, r->head->start_mono);
		/* added later: older files end above */
		rb_u64(&b, rw->npnames);
		for (size_t i = 0; i < rw->npnames; i++)
			rb_u64(&b, rw->pnames[i]);
		/* added in version 3: the string ids written (1 to this - 1), so
		 * that a reader tells a STRINGS record missing at the end */
		rb_u64(&b, rw->nstr);
		e = recw_put_buf(w, RECORD_END, &b);
	}
	if (e == 0 && fflush(w->fp) != 0)
		e = -(errno ? errno : EIO);
	return e;
}

static void recw_release(struct writer *w)
{
	struct recw *rw = w->priv;
	for (size_t i = rw ? rw->first : 0; rw && i < rw->nitem; i++)
		free(rw->item[i].p);
	if (rw) {
		free(rw->item);
		free(rw->pinned);
		free(rw->ident);
		free(rw->args.p);
		u64map_release(&rw->seen);
		u64map_release(&rw->pnseen);
		free(rw->pnames);
	}
	free(w->priv);
	w->priv = NULL;
}

const struct writer_ops record_writer_ops = {
	.name = "record",
	.start = recw_start,
	.interval = recw_interval,
	.span = recw_span,
	.run = recw_run,
	.capture_on = recw_capture_on,
	.capture = recw_capture,
	.finish = recw_finish,
	.release = recw_release,
};
