/* recfile.c: a record file read back (recfile.h).  The file is read into
 * memory whole (a copy: a file cut short by another process meanwhile can
 * neither fault nor change under the reader; a FIFO or pipe is read to its
 * end, waiting only as long as no stop signal comes) and walked twice: first for the head, the
 * strings, how names show and the runs' results (so the events' names are known before any event is
 * replayed), then for the events, -I samples and run starts, in recorded
 * order, into an analysis.  Every length is checked against the payload;
 * a record whose CRC is wrong is skipped and counted, and a truncated tail
 * is counted in bytes. */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/signalfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "grow.h"
#include "cause.h"
#include "norm.h"
#include "rawrep.h"
#include "recfile.h"
#include "u64map.h"

/* the latest second whose nanoseconds an int64_t holds (writers use them) */
#define RECORD_MAX_SEC (INT64_MAX / 1000000000 - 1)

/* the reader reads this much at once, and looks for stop signals between */
#define RF_CHUNK (1u << 20)
/* ... and between this many records */
#define RF_STOP_EVERY 4096

struct recfile {
	const uint8_t *map; /* the file, read whole */
	size_t size;
	size_t anon;	      /* map is an anonymous mapping of this many bytes (0: malloc's) */
	const sigset_t *stop; /* signals that end the reading (-EINTR), or NULL */
	unsigned till_stop;   /* records until the next look */
	struct run_head head;
	char **argv;
	char *target;
	char *exe, *build_id; /* the head's, NULL: unknown */
	struct evlist evl;
	char **unit;
	struct spanmetrics metrics;
	char *mname[SPANMETRIC_MAX];
	struct record_info info;
	struct record_damage dmg;
	struct strtab *strings;
	struct spannames *names;
	uint32_t *id; /* the file's string ids, mapped into strings */
	uint32_t nid;
	uint32_t lost_id;     /* "[lost]": names whose strings were damaged */
	uint32_t end_strings; /* END's count of string ids (0: not told) */
	uint32_t version;     /* the file header's */
	/* END's names of processes (the file's string ids), when it has them;
	 * pre_prefixed: recfile_prefix interned them with the prefix, so the
	 * replays only look them up (prefix_id: the prefix alone) */
	uint64_t *pnames;
	size_t npnames;
	bool have_pnames, pre_prefixed;
	uint32_t prefix_id;
	const uint8_t *names_rec;
	size_t names_len;
	struct run_result *run;
	bool *have_run;
	unsigned nruns, recorded_runs;
	struct decode_stats ds;
	double cost;
	bool have_end;
	struct record_window win;
	struct timespec start; /* the first run's start (END) */
	uint64_t start_mono;
	/* the records to replay (events, samples, run starts) whose CRC held:
	 * pass 2 walks these instead of checking every CRC again */
	struct rf_rec {
		size_t off;
		uint32_t type, len;
	} * todo;
	size_t ntodo, captodo;
};

bool recfile_is(const void *buf, size_t len)
{
	return len >= 8 && memcmp(buf, RECORD_MAGIC, 8) == 0;
}

/* A string field; *whole (when given) says whether it held no NUL, i.e.
 * whether the copy is all of it. */
static char *rf_str_whole(struct record_in *in, bool *whole)
{
	uint64_t n = record_get_u64(in);
	if (!in->ok || n > (uint64_t)(in->end - in->p)) {
		in->ok = false;
		return NULL;
	}
	char *s = strndup((const char *)in->p, (size_t)n);
	in->p += n;
	if (!s)
		in->ok = false;
	if (whole)
		*whole = s && strlen(s) == n;
	return s;
}

static char *rf_str(struct record_in *in)
{
	return rf_str_whole(in, NULL);
}

static double rf_dbl(struct record_in *in)
{
	uint64_t u = record_get_u64(in);
	double d;
	memcpy(&d, &u, sizeof d);
	return d;
}

static int64_t rf_i64(struct record_in *in)
{
	return record_unzz(record_get_u64(in));
}

/* Whether one of the stop signals is pending: -EINTR, else 0.  Looks only
 * every RF_STOP_EVERY records (a system call). */
static int rf_stopped_at(const struct recfile *rf, unsigned *till)
{
	if (!rf->stop || (*till)--)
		return 0;
	*till = RF_STOP_EVERY;
	sigset_t pend;
	if (sigpending(&pend) < 0)
		return 0;
	sigandset(&pend, &pend, rf->stop);
	return sigisemptyset(&pend) ? 0 : -EINTR;
}

static int rf_stopped(struct recfile *rf)
{
	return rf_stopped_at(rf, &rf->till_stop);
}

/* Whether a record that a resynchronising reader may take starts at off:
 * a known type, a payload (a header of zeros frames nothing) within the
 * file, and its CRC. */
static bool rf_frames(const struct recfile *rf, size_t off)
{
	uint32_t h[3];
	if (rf->size - off < RECORD_HDR)
		return false;
	memcpy(h, rf->map + off, sizeof h);
	uint32_t type = le32toh(h[0]), len = le32toh(h[1]);
	if (type < RECORD_HEAD || type > RECORD_TYPE_LAST || len == 0 || len > RECORD_MAX_PAYLOAD ||
	    len > rf->size - off - RECORD_HDR)
		return false;
	return (uint32_t)crc32(0, rf->map + off + RECORD_HDR, len) == le32toh(h[2]);
}

/* The next offset from off on where rf_frames holds, or the file's size. */
static size_t rf_resync(const struct recfile *rf, size_t off)
{
	for (; off < rf->size && rf->size - off >= RECORD_HDR; off++)
		if (rf_frames(rf, off))
			return off;
	return rf->size;
}

/* Calls fn for each record whose header and CRC hold, counting the others;
 * stops when fn returns nonzero.  A header that frames nothing (type 0, a
 * length beyond the file) or a bad CRC whose length lands on no record is
 * damage: the walk goes on at the next record whose CRC holds (the bytes
 * between are counted as skipped), or counts the rest as cut off when
 * there is none. */
static int rf_walk(struct recfile *rf,
		   int (*fn)(struct recfile *rf, uint32_t type, struct record_in *in, void *ctx),
		   void *ctx)
{
	size_t off = RECORD_FILE_HDR;
	while (off < rf->size) {
		uint32_t h[3];
		if (rf->size - off < RECORD_HDR) {
			rf->dmg.lost_bytes += rf->size - off;
			break;
		}
		memcpy(h, rf->map + off, sizeof h);
		uint32_t type = le32toh(h[0]), len = le32toh(h[1]), crc = le32toh(h[2]);
		if (type == 0 || len > RECORD_MAX_PAYLOAD || len > rf->size - off - RECORD_HDR) {
			size_t next = rf_resync(rf, off + 1);
			if (next == rf->size) { /* truncated here, or damaged to the end */
				rf->dmg.lost_bytes += rf->size - off;
				break;
			}
			rf->dmg.bad_records++;
			rf->dmg.lost_events += type == RECORD_EVENTS || type == RECORD_RAW;
			rf->dmg.skipped_bytes += next - off;
			off = next;
			continue;
		}
		const uint8_t *p = rf->map + off + RECORD_HDR;
		size_t after = off + RECORD_HDR + (size_t)len;
		if ((uint32_t)crc32(0, p, len) != crc) {
			rf->dmg.bad_records++;
			rf->dmg.lost_events += type == RECORD_EVENTS || type == RECORD_RAW;
			/* a damaged payload, or a damaged length when no record
			 * starts where it ends: then go on at the next one */
			size_t next = after < rf->size && !rf_frames(rf, after)
					      ? rf_resync(rf, off + 1)
					      : rf->size;
			if (next < rf->size)
				rf->dmg.skipped_bytes += next - off;
			off = next < rf->size ? next : after;
			continue;
		}
		off = after;
		struct record_in in = {p, p + len, true};
		int r = fn(rf, type, &in, ctx);
		if (!r)
			r = rf_stopped(rf);
		if (r)
			return r;
	}
	return 0;
}

static void rf_counts(struct record_in *in, struct count *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t st = record_get_u64(in);
		c[i].state = st <= COUNT_NOT_COUNTED ? (enum count_state)st : COUNT_NOT_COUNTED;
		c[i].raw = record_get_u64(in);
		c[i].enabled = record_get_u64(in);
		c[i].running = record_get_u64(in);
		c[i].value = rf_dbl(in);
		c[i].err = (int)rf_i64(in);
		c[i].user_only = record_get_u64(in) != 0;
	}
}

/* Whether s is a build id as a writer writes it: 1 to 64 bytes in hex. */
static bool rf_hex_id(const char *s)
{
	size_t n = strlen(s);
	return n >= 2 && n <= 128 && n % 2 == 0 && strspn(s, "0123456789abcdef") == n;
}

/* The head's last fields, added after the first files: the command's
 * program and its build id.  Without them (an older file) both are
 * unknown, and so are damaged ones (the rest of the head stays good). */
static void rf_exe(struct recfile *rf, struct record_in *in)
{
	if (in->p >= in->end)
		return;
	struct record_in at = *in;
	bool exe_whole = false, id_whole = false;
	char *exe = rf_str_whole(&at, &exe_whole),
	     *id = at.ok ? rf_str_whole(&at, &id_whole) : NULL;
	if (at.ok) /* read whole: what follows them is where it should be */
		*in = at;
	/* a NUL inside either is damage: never the text before it */
	if (!at.ok || !exe || !*exe || !exe_whole) {
		free(exe);
		free(id);
		return;
	}
	rf->exe = exe;
	rf->head.exe = exe;
	if (id && id_whole && rf_hex_id(id)) {
		rf->build_id = id;
		rf->head.build_id = id;
	} else {
		free(id);
	}
}

/* The head's fields after build_id, added later still: --delay, --timeout
 * and --interval-count; an older file's are 0 (none), and so are damaged
 * ones. */
static void rf_run_opts(struct recfile *rf, struct record_in *in)
{
	if (in->p >= in->end)
		return;
	struct record_in at = *in;
	uint64_t d = record_get_u64(&at), t = record_get_u64(&at), c = record_get_u64(&at);
	if (!at.ok || d > 86400000 || t > 86400000 || c > 1000000000)
		return;
	*in = at;
	rf->head.delay_ms = (unsigned)d;
	rf->head.timeout_ms = (unsigned)t;
	rf->head.interval_count = (unsigned)c;
}

static int rf_head(struct recfile *rf, struct record_in *in)
{
	struct run_head *h = &rf->head;
	struct record_info *ri = &rf->info;
	ri->version = rf_str(in);
	uint64_t argc = record_get_u64(in);
	if (!in->ok || argc > (uint64_t)(in->end - in->p))
		return -EINVAL;
	rf->argv = calloc(argc + 1, sizeof *rf->argv);
	if (!rf->argv)
		return -ENOMEM;
	h->argc = (int)argc;
	h->argv = rf->argv;
	for (uint64_t i = 0; i < argc && in->ok; i++)
		rf->argv[i] = rf_str(in);
	uint64_t runs = record_get_u64(in), ims = record_get_u64(in), fl = record_get_u64(in);
	h->runs = runs >= 1 && runs <= 1000000 ? (unsigned)runs : 1;
	h->interval_ms = ims <= 86400000 ? (unsigned)ims : 0;
	h->spans = fl & 1;
	h->rusage_unknown = fl & 2;
	rf->target = rf_str(in);
	h->target = rf->target && *rf->target ? rf->target : NULL;
	uint64_t sec = record_get_u64(in);
	h->start.tv_sec = sec <= RECORD_MAX_SEC ? (time_t)sec : 0; /* else unknown */
	h->start.tv_nsec = (long)(record_get_u64(in) % 1000000000u);
	h->start_mono = record_get_u64(in);
	ri->host = rf_str(in);
	ri->job = rf_str(in);
	ri->boot_id = rf_str(in);
	ri->sysname = rf_str(in);
	ri->release = rf_str(in);
	ri->machine = rf_str(in);
	h->uname[0] = ri->host;
	h->uname[1] = ri->sysname;
	h->uname[2] = ri->release;
	h->uname[3] = ri->machine;
	ri->rank = (long)rf_i64(in);
	ri->local_rank = (long)rf_i64(in);
	ri->real_ns = record_get_u64(in);
	ri->mono_ns = record_get_u64(in);
	ri->boot_ns = record_get_u64(in);
	h->clocks = (struct run_clocks){ri->real_ns, ri->mono_ns, ri->boot_ns};
	uint64_t n = record_get_u64(in);
	if (!in->ok || n > (uint64_t)(in->end - in->p) || n > 4096)
		return -EINVAL;
	rf->evl.ev = calloc(n ? n : 1, sizeof *rf->evl.ev);
	rf->unit = calloc(n ? n : 1, sizeof *rf->unit);
	if (!rf->evl.ev || !rf->unit)
		return -ENOMEM;
	rf->evl.n = n;
	for (uint64_t i = 0; i < n && in->ok; i++) {
		struct event *e = &rf->evl.ev[i];
		e->name = rf_str(in);
		e->attr.size = sizeof e->attr;
		e->attr.type = (uint32_t)record_get_u64(in);
		e->attr.config = record_get_u64(in);
		e->attr.config1 = record_get_u64(in);
		e->attr.config2 = record_get_u64(in);
		uint64_t ex = record_get_u64(in);
		e->attr.exclude_user = ex & 1;
		e->attr.exclude_kernel = (ex >> 1) & 1;
		e->attr.exclude_hv = (ex >> 2) & 1;
		e->group = (int)rf_i64(in);
		e->leader = record_get_u64(in) != 0;
		rf->unit[i] = rf_str(in);
		e->unit = rf->unit[i] ? rf->unit[i] : "";
		e->scale = rf_dbl(in);
		if (e->group + 1 > rf->evl.ngroups && e->group < 4096)
			rf->evl.ngroups = e->group + 1;
	}
	h->evl = &rf->evl;
	struct spanmetrics *ms = &rf->metrics;
	uint64_t nm = record_get_u64(in);
	int64_t oc = rf_i64(in);
	uint64_t ft = record_get_u64(in);
	if (!in->ok || nm > SPANMETRIC_MAX || ft > nm || oc < -1 || oc >= (int64_t)nm)
		return -EINVAL;
	ms->n = (unsigned)nm;
	ms->off_cpu = (int)oc;
	ms->first_target = (unsigned)ft;
	for (unsigned i = 0; i < ms->n && in->ok; i++) {
		uint64_t k = record_get_u64(in);
		rf->mname[i] = rf_str(in);
		uint64_t f = record_get_u64(in);
		ms->m[i] = (struct spanmetric){
			k <= SPANMETRIC_FREE_BYTES ? (enum spanmetric_kind)k : SPANMETRIC_EVENT,
			rf->mname[i] ? rf->mname[i] : "", f & 1, (f >> 1) & 1};
	}
	/* --span-allocs' four come together, in order, as a session lists
	 * them (writers take them as a row from the first) */
	int al = spanmetric_find(ms, SPANMETRIC_ALLOCS);
	if (al >= 0 && (unsigned)al + 3 >= ms->n)
		return -EINVAL;
	for (unsigned i = 0; i < ms->n; i++)
		if (ms->m[i].kind >= SPANMETRIC_ALLOCS &&
		    (al < 0 || i != (unsigned)al + (ms->m[i].kind - SPANMETRIC_ALLOCS)))
			return -EINVAL;
	h->metrics = ms;
	h->strings = rf->strings;
	h->names = rf->names;
	if (in->ok)
		rf_exe(rf, in);
	if (in->ok)
		rf_run_opts(rf, in);
	return in->ok ? 0 : -EINVAL;
}

/* The common id of the file's string id. */
static uint32_t rf_lost(struct recfile *rf, uint64_t id)
{
	return id == 0 ? 0 : rf->lost_id; /* interned at open (recfile_open) */
}

static inline uint32_t rf_id(struct recfile *rf, uint64_t id)
{
	return __builtin_expect(id < rf->nid && rf->id[id], 1) ? rf->id[id] : rf_lost(rf, id);
}

static int rf_strings(struct recfile *rf, struct record_in *in)
{
	uint64_t first = record_get_u64(in), n = record_get_u64(in);
	/* every id the file defines takes a byte of it at least: more ids
	 * than bytes is damage, never a reason for a table that large */
	if (!in->ok || first == 0 || n > (uint64_t)(in->end - in->p) || first > UINT32_MAX - n ||
	    first + n > rf->size) {
		rf->dmg.bad_records++;
		return 0;
	}
	if (first + n > rf->nid) {
		uint32_t cap = (uint32_t)(first + n);
		uint32_t *id = realloc(rf->id, cap * sizeof *id);
		if (!id)
			return -ENOMEM;
		memset(id + rf->nid, 0, (cap - rf->nid) * sizeof *id);
		rf->id = id;
		rf->nid = cap;
	}
	for (uint64_t i = 0; i < n; i++) {
		uint64_t len = record_get_u64(in);
		if (!in->ok || len > (uint64_t)(in->end - in->p)) {
			rf->dmg.bad_records++;
			return 0;
		}
		uint32_t c = strtab_intern(rf->strings, (const char *)in->p, (size_t)len);
		if (!c)
			return -ENOMEM;
		rf->id[first + i] = c;
		in->p += len;
	}
	return 0;
}

/* A CATEGORIES record: pairs of string ids, set in the shared strings (the
 * first category a name gets holds). */
static int rf_cats(struct recfile *rf, struct record_in *in)
{
	uint64_t n = record_get_u64(in);
	for (uint64_t i = 0; i < n && in->ok; i++) {
		uint64_t name = record_get_u64(in), cat = record_get_u64(in);
		if (!in->ok || name >= rf->nid || !rf->id[name] || !cat || cat >= rf->nid ||
		    !rf->id[cat])
			break;
		if (strtab_set_cat(rf->strings, rf->id[name], rf->id[cat]) < 0)
			return -ENOMEM;
	}
	if (!in->ok || in->p != in->end)
		rf->dmg.bad_records++;
	return 0;
}

static void rf_run(struct recfile *rf, struct record_in *in)
{
	uint64_t k = record_get_u64(in);
	if (!in->ok || k >= rf->head.runs)
		return;
	struct run_result rr = {0};
	rr.counts = calloc(rf->evl.n ? rf->evl.n : 1, sizeof *rr.counts);
	if (!rr.counts)
		return;
	rf_counts(in, rr.counts, rf->evl.n);
	rr.ru.elapsed_ns = record_get_u64(in);
	rr.ru.utime_ns = record_get_u64(in);
	rr.ru.stime_ns = record_get_u64(in);
	rr.ru.maxrss_kb = (long)rf_i64(in);
	rr.ru.minflt = (long)rf_i64(in);
	rr.ru.majflt = (long)rf_i64(in);
	rr.ru.nvcsw = (long)rf_i64(in);
	rr.ru.nivcsw = (long)rf_i64(in);
	rr.wstatus = (int)rf_i64(in);
	rr.exit_code = (int)rf_i64(in);
	if (in->ok && in->p < in->end) /* wall_ns, added later */
		rr.wall_ns = record_get_u64(in);
	if (!in->ok || rf->have_run[k]) {
		free(rr.counts);
		rf->dmg.bad_records += !in->ok;
		return;
	}
	rf->run[k] = rr;
	rf->have_run[k] = true;
}

static void rf_end(struct recfile *rf, struct record_in *in)
{
	uint64_t n = record_get_u64(in), v[DECODE_STATS_N] = {0};
	for (uint64_t i = 0; i < n && in->ok; i++) {
		uint64_t x = record_get_u64(in);
		if (i < DECODE_STATS_N)
			v[i] = x;
	}
	double cost = rf_dbl(in);
	uint64_t nm = record_get_u64(in);
	bool sup[SPANMETRIC_MAX] = {0};
	for (uint64_t i = 0; i < nm && in->ok; i++) {
		uint64_t s = record_get_u64(in);
		if (i < SPANMETRIC_MAX)
			sup[i] = s != 0;
	}
	uint64_t nruns = record_get_u64(in);
	uint64_t sec = record_get_u64(in), nsec = record_get_u64(in), mono = record_get_u64(in);
	if (!in->ok || sec > RECORD_MAX_SEC) {
		rf->dmg.bad_records++;
		return;
	}
	/* added later: the names of the processes (none in older files) */
	if (in->p < in->end) {
		uint64_t np = record_get_u64(in);
		/* a byte each at least: more is damage */
		uint64_t *pn = in->ok && np <= (uint64_t)(in->end - in->p)
				       ? malloc((np ? np : 1) * sizeof *pn)
				       : NULL;
		for (uint64_t i = 0; pn && i < np; i++)
			pn[i] = record_get_u64(in);
		if (pn && in->ok) {
			free(rf->pnames);
			rf->pnames = pn;
			rf->npnames = np;
			rf->have_pnames = true;
		} else {
			free(pn);
			rf->dmg.bad_records += !in->ok || np > (uint64_t)(in->end - in->p);
		}
	}
	/* added in version 3: the ids the file's strings take (1 to this - 1);
	 * bytes there in an older file are a newer writer's, not this */
	if (rf->version >= 3 && in->ok && in->p < in->end) {
		uint64_t ns = record_get_u64(in);
		if (in->ok && ns <= rf->size)
			rf->end_strings = (uint32_t)ns;
		else
			rf->dmg.bad_records++;
	}
	rf->ds = (struct decode_stats){
		v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12],
		v[13], v[14], v[15], v[16], v[17], v[18],
		/* a file older than the count does not know it */
		n > 19 ? v[19] : DECODE_UNKNOWN, n > 20 ? v[20] : DECODE_UNKNOWN,
		n > 21 ? v[21] : DECODE_UNKNOWN, n > 22 ? v[22] : DECODE_UNKNOWN,
		n > 23 ? v[23] : DECODE_UNKNOWN, n > 24 ? v[24] : DECODE_UNKNOWN,
		n > 25 ? v[25] : DECODE_UNKNOWN, n > 26 ? v[26] : DECODE_UNKNOWN,
		n > 27 ? v[27] : DECODE_UNKNOWN, n > 28 ? v[28] : DECODE_UNKNOWN,
		n > 29 ? v[29] : DECODE_UNKNOWN};
	rf->cost = isfinite(cost) && cost >= 0 ? cost : 0; /* an infinity times 0 spans is NaN */
	for (unsigned i = 0; i < rf->metrics.n && nm == rf->metrics.n; i++)
		rf->metrics.m[i].supported = sup[i];
	rf->recorded_runs = nruns <= rf->head.runs ? (unsigned)nruns : rf->head.runs;
	rf->have_end = true;
	rf->start.tv_sec = (time_t)sec;
	rf->start.tv_nsec = (long)(nsec % 1000000000u);
	rf->start_mono = mono;
}

static int rf_pass1(struct recfile *rf, uint32_t type, struct record_in *in, void *ctx)
{
	bool *head = ctx;
	if (!*head) {
		if (type != RECORD_HEAD)
			return -EINVAL;
		int r = rf_head(rf, in);
		if (r < 0)
			return r;
		*head = true;
		rf->run = calloc(rf->head.runs, sizeof *rf->run);
		rf->have_run = calloc(rf->head.runs, sizeof *rf->have_run);
		return rf->run && rf->have_run ? 0 : -ENOMEM;
	}
	switch (type) {
	case RECORD_EVENTS:
	case RECORD_RAW:
	case RECORD_INTERVAL:
	case RECORD_RUNSTART:
	case RECORD_MESSAGE:
	case RECORD_ASYNC:
	case RECORD_ARG:
		if (GROW(rf->todo, rf->ntodo + 1, rf->captodo, 256) < 0)
			return -ENOMEM;
		rf->todo[rf->ntodo++] = (struct rf_rec){(size_t)(in->p - rf->map), type,
							(uint32_t)(in->end - in->p)};
		break;
	case RECORD_STRINGS:
		return rf_strings(rf, in);
	case RECORD_CATEGORIES:
		return rf_cats(rf, in);
	case RECORD_NAMES:
		rf->names_rec = in->p;
		rf->names_len = (size_t)(in->end - in->p);
		break;
	case RECORD_RUN:
		rf_run(rf, in);
		break;
	case RECORD_END:
		rf_end(rf, in);
		break;
	case RECORD_WINDOW: {
		struct record_window w = {.present = true};
		w.size = record_get_u64(in);
		uint64_t flags = record_get_u64(in);
		w.snapshot = flags & 1;
		w.events = record_get_u64(in);
		w.spans = record_get_u64(in);
		w.messages = record_get_u64(in);
		w.samples = record_get_u64(in);
		w.bytes = record_get_u64(in);
		if (!in->ok || w.spans > w.events)
			rf->dmg.bad_records++;
		else
			rf->win = w;
		break;
	}
	case RECORD_HEAD: /* a second one: no writer writes it */
		rf->dmg.bad_records++;
		break;
	default: /* a newer writer's, or a type damaged outside the CRC: said */
		rf->dmg.unknown++;
		break;
	}
	return 0;
}

/* How the names show, from the last NAMES record, in the shared view. */
static int rf_names(struct recfile *rf)
{
	if (!rf->names_rec || !rf->names)
		return 0;
	struct record_in in = {rf->names_rec, rf->names_rec + rf->names_len, true};
	uint64_t n = record_get_u64(&in);
	for (uint64_t i = 0; i < n && in.ok; i++) {
		uint64_t id = record_get_u64(&in), text = record_get_u64(&in),
			 file = record_get_u64(&in), line = record_get_u64(&in);
		if (!in.ok || !id || !text || id >= rf->nid || !rf->id[id])
			continue; /* (a name shows as some text: 0 is damage) */
		if (spannames_set(rf->names, rf_id(rf, id), rf_id(rf, text),
				  file ? rf_id(rf, file) : 0, (uint32_t)line) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* The runs whose results came, in order (maybe none: the report then says
 * that the counts, times and status are unknown, and what the spans say is
 * still reported). */
static int rf_runs(struct recfile *rf)
{
	unsigned k = 0;
	for (unsigned i = 0; i < rf->head.runs; i++) {
		if (!rf->have_run[i])
			continue;
		struct run_result rr = rf->run[i];
		rr.index = i;
		rf->run[i].counts = NULL; /* moved: freed once, at k */
		rf->run[k++] = rr;
	}
	unsigned expect = rf->have_end ? rf->recorded_runs : rf->head.runs;
	rf->dmg.lost_runs = expect > k ? expect - k : 0;
	rf->nruns = k;
	return 0;
}

/* Makes room for n more bytes in *buf (*cap bytes, *len used). */
static int rf_grow(uint8_t **buf, size_t *cap, size_t len, size_t n)
{
	if (*cap - len >= n)
		return 0;
	if (n > SIZE_MAX - len)
		return -ENOMEM;
	return GROW(*buf, len + n, *cap, RF_CHUNK);
}

/* A regular file whole, as large as fstat found it: one that is shorter
 * when read was cut short meanwhile. */
static int rf_read_file(struct recfile *rf, int fd, size_t size, const char *path, char **cause)
{
	/* its pages made in one go: a large record read into pages faulted
	 * one by one cost a report a sixth of its time */
	size_t len = size;
	uint8_t *buf = len ? mmap(NULL, len, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0)
			   : MAP_FAILED;
	if (buf != MAP_FAILED) {
		rf->anon = len;
	} else if (!(buf = malloc(size ? size : 1))) {
		return cause_set(cause, -ENOMEM, "cannot read '%s': %s", path, strerror(ENOMEM));
	}
	rf->map = buf;
	for (size_t got = 0; got < size;) {
		ssize_t n = read(fd, buf + got, size - got < RF_CHUNK ? size - got : RF_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return cause_set(cause, -errno, "cannot read '%s': %s", path,
					 strerror(errno));
		if (n == 0)
			return cause_set(cause, -EIO,
					 "cannot read '%s': it changed while it was read", path);
		got += (size_t)n;
		rf->till_stop = 0;
		if (rf_stopped(rf))
			return -EINTR;
	}
	rf->size = size;
	return 0;
}

/* A FIFO or pipe to its end (its last writer closed it): waits for data,
 * but a stop signal ends the wait (-EINTR).  A stream that does not start
 * as a record file is refused at once, not read to its end. */
static int rf_read_stream(struct recfile *rf, int fd, const char *path, char **cause)
{
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;
	int sfd = rf->stop ? signalfd(-1, rf->stop, SFD_NONBLOCK | SFD_CLOEXEC) : -1;
	int r = 0;
	if (rf->stop && sfd < 0)
		r = cause_set(cause, -errno, "cannot read '%s': %s", path, strerror(errno));
	for (bool end = false; r == 0 && !end;) {
		/* the signalfd is only polled: the caller takes the signal */
		struct pollfd pfd[2] = {{fd, POLLIN, 0}, {sfd, POLLIN, 0}};
		if (poll(pfd, sfd < 0 ? 1 : 2, -1) < 0) {
			if (errno != EINTR)
				r = cause_set(cause, -errno, "cannot read '%s': %s", path,
					      strerror(errno));
			continue;
		}
		if (sfd >= 0 && pfd[1].revents) {
			r = -EINTR;
			break;
		}
		for (;;) {
			if (rf_grow(&buf, &cap, len, RF_CHUNK) < 0) {
				r = cause_set(cause, -ENOMEM, "cannot read '%s': %s", path,
					      strerror(ENOMEM));
				break;
			}
			ssize_t n = read(fd, buf + len, cap - len);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 && errno == EAGAIN)
				break;
			if (n < 0) {
				r = cause_set(cause, -errno, "cannot read '%s': %s", path,
					      strerror(errno));
				break;
			}
			if (n == 0) { /* after poll said so: every writer is gone */
				end = true;
				break;
			}
			size_t was = len;
			len += (size_t)n;
			if (was < 8 && len >= 8 && !recfile_is(buf, len))
				break; /* refused below, whatever follows */
		}
		if (len >= 8 && !recfile_is(buf, len))
			break;
	}
	if (sfd >= 0)
		close(sfd);
	rf->map = buf;
	rf->size = len;
	return r;
}

/* Reads path into rf->map: a regular file, or a FIFO or pipe (a shell's
 * /dev/stdin or <(...)).  0, or -errno with *cause (-EINTR without: a stop
 * signal came). */
static int rf_load(struct recfile *rf, const char *path, char **cause)
{
	/* not blocking: opening a FIFO would wait for a writer, deaf to every
	 * signal the caller blocked */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return cause_set(cause, -errno, "cannot read '%s': %s", path, strerror(errno));
	struct stat st;
	int r;
	if (fstat(fd, &st) < 0)
		r = cause_set(cause, -errno, "cannot read '%s': %s", path, strerror(errno));
	else if (S_ISDIR(st.st_mode))
		r = cause_set(cause, -EISDIR, "cannot read '%s': is a directory", path);
	else if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > SIZE_MAX - 1)
		r = cause_set(cause, -EFBIG, "cannot read '%s': %s", path, strerror(EFBIG));
	else if (S_ISREG(st.st_mode))
		r = rf_read_file(rf, fd, (size_t)st.st_size, path, cause);
	else if (S_ISFIFO(st.st_mode))
		r = rf_read_stream(rf, fd, path, cause);
	else
		r = cause_set(cause, -EINVAL, "cannot read '%s': not a file or a pipe", path);
	close(fd);
	return r;
}

int recfile_open(struct recfile **out, const char *path, struct strtab *strings,
		 struct spannames *names, const sigset_t *stop, char **cause)
{
	*out = NULL;
	struct recfile *rf = calloc(1, sizeof *rf);
	if (!rf)
		return cause_set(cause, -ENOMEM, "cannot read '%s': %s", path, strerror(ENOMEM));
	rf->strings = strings;
	rf->names = names;
	rf->stop = stop;
	rf->till_stop = RF_STOP_EVERY;
	int lr = rf_load(rf, path, cause);
	if (lr < 0) {
		recfile_close(rf);
		return lr;
	}
	uint32_t v[2] = {0, 0};
	if (rf->size >= RECORD_FILE_HDR)
		memcpy(v, rf->map + 8, sizeof v);
	if (rf->size < RECORD_FILE_HDR || !recfile_is(rf->map, rf->size)) {
		recfile_close(rf);
		return cause_set(cause, -EINVAL, "cannot read '%s': not a spanstat record file",
				 path);
	}
	if (le32toh(v[0]) < 1 || le32toh(v[0]) > RECORD_VERSION ||
	    le32toh(v[1]) != RECORD_FILE_HDR) {
		recfile_close(rf);
		return cause_set(cause, -EINVAL,
				 "cannot read '%s': record file version %u (this spanstat "
				 "reads versions 1 to %u)",
				 path, le32toh(v[0]), RECORD_VERSION);
	}
	rf->version = le32toh(v[0]);
	bool head = false;
	int r = rf_walk(rf, rf_pass1, &head);
	if (r == 0 && !head)
		r = -EINVAL;
	if (r == 0)
		r = rf_names(rf);
	if (r == 0)
		r = rf_runs(rf);
	/* what ids without a string show: interned now, after the file's
	 * strings, never by the replays, which run in threads of their own
	 * (report -j) and would race for the table and its order */
	if (r == 0 && !(rf->lost_id = strtab_intern(rf->strings, "[lost]", 6)))
		r = -ENOMEM;
	if (r == -EINTR) {
		recfile_close(rf);
		return r;
	}
	if (r < 0) {
		recfile_close(rf);
		return cause_set(cause, r, "cannot read '%s': %s", path,
				 r == -ENOMEM ? strerror(ENOMEM) : "its head is damaged");
	}
	/* a snapshot ends where the target still ran: no RUN, no END, and
	 * that is no damage (said apart, as unknown) */
	if (rf->win.snapshot && !rf->have_end)
		rf->dmg.lost_runs = 0;
	rf->dmg.no_end = !rf->have_end && !rf->win.snapshot;
	/* string ids no STRINGS record defined: a record lost whole (its CRC
	 * held or not) or cut by damage, which the names using them show as
	 * [lost] */
	for (uint32_t i = 1; i < rf->nid; i++)
		rf->dmg.lost_strings += !rf->id[i];
	if (rf->end_strings > rf->nid && rf->end_strings > 1)
		rf->dmg.lost_strings += rf->end_strings - (rf->nid ? rf->nid : 1);
	if (!rf->have_end) {
		rf->start = rf->head.start;
		rf->start_mono = rf->head.start_mono;
	}
	*out = rf;
	return 0;
}

void recfile_close(struct recfile *rf)
{
	if (!rf)
		return;
	if (rf->anon)
		munmap((void *)rf->map, rf->anon);
	else
		free((void *)rf->map);
	for (int i = 0; rf->argv && i < rf->head.argc; i++)
		free(rf->argv[i]);
	free(rf->argv);
	free(rf->pnames);
	free(rf->target);
	free(rf->exe);
	free(rf->build_id);
	for (size_t i = 0; i < rf->evl.n; i++) {
		free(rf->evl.ev[i].name);
		free(rf->unit[i]);
	}
	free(rf->evl.ev);
	free(rf->unit);
	for (unsigned i = 0; i < SPANMETRIC_MAX; i++)
		free(rf->mname[i]);
	free(rf->info.host);
	free(rf->info.job);
	free(rf->info.boot_id);
	free(rf->info.sysname);
	free(rf->info.release);
	free(rf->info.machine);
	free(rf->info.version);
	free(rf->id);
	free(rf->todo);
	for (unsigned i = 0; rf->run && i < rf->head.runs; i++)
		if (i < rf->nruns || rf->have_run[i])
			free(rf->run[i].counts);
	free(rf->run);
	free(rf->have_run);
	free(rf);
}

const struct run_head *recfile_head(const struct recfile *rf)
{
	return &rf->head;
}

const struct record_info *recfile_info(const struct recfile *rf)
{
	return &rf->info;
}

void recfile_start(const struct recfile *rf, struct timespec *start, uint64_t *mono)
{
	*start = rf->start;
	*mono = rf->start_mono;
}

const struct record_window *recfile_window(const struct recfile *rf)
{
	return &rf->win;
}

const struct record_damage *recfile_damage(const struct recfile *rf)
{
	return &rf->dmg;
}

void recfile_end(const struct recfile *rf, struct run_end *e)
{
	memset(e, 0, sizeof *e);
	e->run = rf->run;
	e->nruns = rf->nruns;
	e->dstats = rf->head.spans ? &rf->ds : NULL;
	e->dstats_lost = rf->head.spans && !rf->have_end;
	e->event_cost_ns = rf->cost;
	e->lost_runs = rf->dmg.lost_runs;
}

/* The ARG record after an EVENTS block, read along with it: the next
 * argument decoded (at pos, the block's events before it), the state its
 * differences build on. */
struct rf_args {
	struct record_in in;
	bool have, bad;
	uint64_t pos, ts;
	uint32_t pid, tid;
	struct span_event ev;
};

/* What the replays of one recfile_replay_parts share: where the first
 * failed, and how far each part got (see rf_replay_at). */
struct rf_sync {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	atomic_size_t fail_at; /* the first record a replay failed at (SIZE_MAX: none) */
	/* the off-CPU damage the first replay found in its tree (RAW_CHECK),
	 * which the others (without a tree) give their writers: quads */
	bool checked;
	uint64_t *dmg;
	size_t ndmg;
};

/* One replay of the events: several run at once (recfile_replay_parts),
 * each with its own of everything the replay changes; the file is only
 * read. */
struct rf_replay {
	struct recfile *rf;
	struct analysis *a;
	const struct record_replay *how;
	uint64_t vals[SPANMETRIC_MAX], cum[SPANMETRIC_MAX];
	struct rf_args args;
	int err;
	struct span_sink *sink; /* where replayed events go, in order */
	size_t nsink, capsink;
	struct u64map open;  /* a window's replay: (pid, tid) -> spans open + 1 */
	struct u64map aopen; /* and its async spans begun: (pid, id) hashed -> 1 */
	struct rawrep *raw;  /* the replay of RAW blocks, from the first */
	/* what it found: bad records, events blocks among them, spans and
	 * arguments cut at a window's start */
	uint64_t bad_records, lost_events, cut, cut_args;
	unsigned till_stop;
	/* several replays: what they share; the first's, the others (which
	 * it waits for at each sample); a part's, the records it is done
	 * with (under sync->mu; SIZE_MAX: all); the record it failed at */
	struct rf_sync *sync;
	struct rf_replay *parts;
	size_t nparts, reached, failed_at;
	/* the RAW replay's events need no change: neither moved nor prefixed,
	 * and the file's string ids are the table's (a report of one file) */
	bool as_is;
};

static int rf_add_sink(void *ctx, struct span_sink sink)
{
	struct rf_replay *rp = ctx;
	if (GROW(rp->sink, rp->nsink + 1, rp->capsink, 4) < 0)
		return -ENOMEM;
	rp->sink[rp->nsink++] = sink;
	return 0;
}

/* A process's name with the replay's prefix ("rank 2 (host) app"), interned
 * (intern) or looked up: 0 when it is not there, or without memory. */
static uint32_t rf_with_prefix(struct recfile *rf, const char *prefix, uint32_t name, bool intern)
{
	char *s = NULL;
	const char *n = strtab_get(rf->strings, name);
	if (asprintf(&s, "%s%s%s", prefix, *n ? " " : "", n) < 0)
		return 0;
	size_t len = strlen(s);
	uint32_t id =
		intern ? strtab_intern(rf->strings, s, len) : strtab_lookup(rf->strings, s, len);
	free(s);
	return id;
}

/* The name of a process of the replay, prefixed.  After recfile_prefix,
 * only looked up (replays run in threads, and the table is shared): a name
 * END did not list (damage) shows as the prefix alone; a file without the
 * list replays in one thread (recfile_prefix said so), interning as it goes. */
static uint32_t rf_prefixed(struct recfile *rf, const char *prefix, uint32_t name)
{
	if (rf->pre_prefixed) {
		uint32_t id = rf_with_prefix(rf, prefix, name, false);
		return id ? id : rf->prefix_id;
	}
	uint32_t id = rf_with_prefix(rf, prefix, name, true);
	return id ? id : name;
}

int recfile_prefix(struct recfile *rf, const char *prefix)
{
	if (!rf->have_pnames)
		return 0;
	if (!(rf->prefix_id = rf_with_prefix(rf, prefix, 0, true)) ||
	    !rf_with_prefix(rf, prefix, rf->lost_id, true))
		return -ENOMEM;
	for (size_t i = 0; i < rf->npnames; i++)
		if (!rf_with_prefix(rf, prefix, rf_id(rf, rf->pnames[i]), true))
			return -ENOMEM;
	rf->pre_prefixed = true;
	return 1;
}

/* The next argument of the ARG record into ga->ev: false at its end or at
 * one that breaks the format (then a bad record, the rest left out). */
static bool rf_arg_next(struct recfile *rf, struct rf_replay *rp)
{
	struct rf_args *ga = &rp->args;
	struct record_in *in = &ga->in;
	ga->have = false;
	if (ga->bad || in->p >= in->end)
		return false;
	ga->pos += record_get_u64(in);
	uint64_t thread = record_get_u64(in);
	if (thread == 1) {
		uint64_t pid = record_get_u64(in), tid = record_get_u64(in);
		ga->pid = (uint32_t)pid;
		ga->tid = (uint32_t)tid;
		if (pid > UINT32_MAX || !tid || tid > UINT32_MAX)
			in->ok = false;
	} else if (thread != 0 || !ga->tid) {
		in->ok = false;
	}
	ga->ts += (uint64_t)rf_i64(in);
	uint64_t depth = record_get_u64(in), key = record_get_u64(in), type = record_get_u64(in);
	uint64_t value = type == SPAN_ARG_I64 ? (uint64_t)rf_i64(in) : record_get_u64(in);
	if (!in->ok || depth > NORM_MAX_DEPTH || !key || type >= SPAN_ARG_TYPES ||
	    (type == SPAN_ARG_BOOL && value > 1) || (type == SPAN_ARG_STR && !value)) {
		ga->bad = true;
		rp->bad_records++;
		return false;
	}
	ga->ev = (struct span_event){
		.kind = SPAN_ARG,
		.pid = ga->pid,
		.tid = ga->tid,
		.ts = ga->ts,
		.depth = (uint32_t)depth,
		.name = rf_id(rf, key),
		.flags = (uint32_t)type,
		.value = (int64_t)(type == SPAN_ARG_STR ? rf_id(rf, value) : value)};
	ga->have = true;
	return true;
}

/* The arguments at or before position k of the block, to the sinks.  In a
 * window, one of a span cut at the window's start (no span the window
 * began is open on its thread) goes with its span, not to the thread or to
 * the span that ends next. */
static void rf_args_upto(struct recfile *rf, struct rf_replay *rp, uint64_t k)
{
	struct rf_args *ga = &rp->args;
	const struct record_replay *how = rp->how;
	while (ga->have && ga->pos <= k) {
		struct span_event ev = ga->ev;
		if (rf->win.present && ev.depth &&
		    u64map_get(&rp->open, (uint64_t)ev.pid << 32 | ev.tid) <= 1) {
			rp->cut_args++;
		} else {
			ev.pid += how->pid_base;
			ev.tid += how->pid_base;
			ev.ts += (uint64_t)how->ts_shift;
			for (size_t i = 0; i < rp->nsink; i++)
				rp->sink[i].event(rp->sink[i].arg, &ev);
		}
		rf_arg_next(rf, rp);
	}
}

/* One block of events; a block that goes wrong midway keeps what came
 * before (its events were whole). */
static void rf_events(struct recfile *rf, struct rf_replay *rp, struct record_in *in)
{
	const struct record_replay *how = rp->how;
	unsigned nval = rf->metrics.n;
	uint32_t pid = 0, tid = 0;
	uint64_t ts = 0;
	bool thread = false, bad = false;
	uint64_t n = 0; /* events read */
	struct span_event ev;
	while (in->p < in->end) {
		if (__builtin_expect(rp->args.have, 0)) /* the block's typed arguments */
			rf_args_upto(rf, rp, n);
		n++;
		uint8_t f = *in->p++;
		unsigned k = f & 7;
		if (k > SPAN_DAMAGE || (f & 128)) {
			bad = true;
			break;
		}
		if (f & 16) {
			pid = (uint32_t)record_get_u64(in);
			tid = (uint32_t)record_get_u64(in);
			thread = true;
			memset(rp->cum, 0, sizeof rp->cum);
		}
		ts += (uint64_t)rf_i64(in);
		/* field by field (span_event_init): a designated initialiser per
		 * event was a rep stos, a third of the replay's time */
		span_event_init(&ev, (enum span_kind)k, pid + how->pid_base, tid + how->pid_base,
				ts + (uint64_t)how->ts_shift, 0);
		ev.flags = f & 8 ? SPAN_F_UNFINISHED : 0;
		ev.name = rf_id(rf, record_get_u64(in));
		if (k == SPAN_BEGIN || k == SPAN_END || k == SPAN_INSTANT || k == SPAN_COUNTER ||
		    k == SPAN_DAMAGE) {
			uint64_t dp = record_get_u64(in);
			ev.depth = dp > NORM_MAX_DEPTH ? UINT32_MAX : (uint32_t)dp;
		}
		if (k == SPAN_PROCESS || k == SPAN_COUNTER || k == SPAN_PROCESS_END ||
		    k == SPAN_DAMAGE)
			ev.value = rf_i64(in);
		if (k == SPAN_END) {
			uint64_t d = record_get_u64(in);
			ev.begin_ts = d <= ev.ts ? ev.ts - d : 0;
		}
		if (f & 64) {
			for (unsigned i = 0; i < nval; i++)
				rp->vals[i] = record_get_u64(in);
			ev.vals = rp->vals;
		}
		if (f & 32) {
			for (unsigned i = 0; i < nval; i++)
				rp->cum[i] += (uint64_t)rf_i64(in);
			ev.cum = rp->cum;
		}
		/* deeper than the decoder ever nests: damage (the flame chart
		 * sizes its lanes by depth) */
		if (!in->ok || !thread || ev.depth > NORM_MAX_DEPTH ||
		    (k == SPAN_DAMAGE &&
		     (ev.depth < SPAN_DMG_DROPPED || ev.depth >= SPAN_DAMAGE_KINDS ||
		      ev.value < 0 ||
		      (ev.depth >= SPAN_NOTE_WAITED && ev.value > INT64_C(1) << 50)))) {
			bad = true;
			break;
		}
		if (k == SPAN_END && nval && !ev.vals) {
			memset(rp->vals, 0, sizeof rp->vals);
			ev.vals = rp->vals;
		}
		if (k == SPAN_PROCESS && how->prefix)
			ev.name = rf_prefixed(rf, how->prefix, ev.name);
		/* a window: an end whose begin was overwritten is a span cut at
		 * the window's start, counted and left out (its begin is not
		 * invented), so that every end the outputs get has its begin */
		if (rf->win.present && (k == SPAN_BEGIN || k == SPAN_END)) {
			uint64_t key = (uint64_t)pid << 32 | tid, n = u64map_get(&rp->open, key);
			if (k == SPAN_END && n <= 1) {
				rp->cut++;
				continue;
			}
			if (u64map_put(&rp->open, key, k == SPAN_BEGIN ? (n ? n : 1) + 1 : n - 1) <
			    0) {
				rp->err = -ENOMEM;
				break;
			}
		}
		for (size_t i = 0; i < rp->nsink; i++)
			rp->sink[i].event(rp->sink[i].arg, &ev);
	}
	/* its CRC held but an event did not decode: the rest of the block is
	 * lost, and said to be (with the arguments among it) */
	if (bad) {
		rp->bad_records++;
		rp->lost_events++;
	} else {
		rf_args_upto(rf, rp, n);
		if (rp->args.have) { /* past the block's end */
			rp->bad_records++;
			rp->args.have = false;
		}
	}
}

/* A MESSAGE record, to the sinks; a damaged one is a bad record. */
static void rf_message(struct rf_replay *rp, struct record_in *in)
{
	const struct record_replay *how = rp->how;
	uint64_t pid = record_get_u64(in), tid = record_get_u64(in), ts = record_get_u64(in),
		 depth = record_get_u64(in), len = record_get_u64(in);
	if (!in->ok || pid > UINT32_MAX || tid > UINT32_MAX || depth > NORM_MAX_DEPTH ||
	    len > SPAN_MESSAGE_MAX || len != (uint64_t)(in->end - in->p) ||
	    memchr(in->p, '\0', (size_t)len)) {
		rp->bad_records++;
		return;
	}
	struct span_event ev = {.kind = SPAN_MESSAGE,
				.pid = (uint32_t)pid + how->pid_base,
				.tid = (uint32_t)tid + how->pid_base,
				.ts = ts + (uint64_t)how->ts_shift,
				.depth = (uint32_t)depth,
				.text = (const char *)in->p,
				.len = (uint32_t)len};
	for (size_t i = 0; i < rp->nsink; i++)
		rp->sink[i].event(rp->sink[i].arg, &ev);
}

/* An ASYNC record, to the sinks; a damaged one is a bad record. */
static void rf_async(struct recfile *rf, struct rf_replay *rp, struct record_in *in)
{
	const struct record_replay *how = rp->how;
	uint64_t v[12];
	for (size_t i = 0; i < 12; i++)
		v[i] = record_get_u64(in);
	if (!in->ok || in->p != in->end || v[0] > 3 || v[1] > UINT32_MAX || v[2] > UINT32_MAX ||
	    v[4] > UINT32_MAX || v[5] == 0 || v[6] > SPAN_F_UNFINISHED || v[8] > v[3] ||
	    v[9] > INT64_MAX || v[10] > UINT32_MAX || v[11] > UINT32_MAX) {
		rp->bad_records++;
		return;
	}
	struct span_event ev = {.kind = (enum span_kind)(SPAN_ASYNC_BEGIN + v[0]),
				.pid = (uint32_t)v[1] + how->pid_base,
				.tid = (uint32_t)v[2] + how->pid_base,
				.ts = v[3] + (uint64_t)how->ts_shift,
				.name = rf_id(rf, v[4]),
				.aid = v[5],
				.flags = (uint32_t)v[6],
				.parent = v[7],
				.begin_ts = v[8] + (uint64_t)how->ts_shift,
				.value = (int64_t)v[9],
				.enters = (uint32_t)v[10],
				.threads = (uint32_t)v[11]};
	/* a window: an async span whose begin was overwritten is cut at the
	 * window's start, as a thread span is: its end counted, none of its
	 * records given (its begin is not invented) */
	if (rf->win.present) {
		uint64_t key = v[5] * UINT64_C(0x9e3779b97f4a7c15) + v[1];
		bool begun = u64map_get(&rp->aopen, key) != 0;
		if (ev.kind == SPAN_ASYNC_BEGIN && u64map_put(&rp->aopen, key, 1) < 0) {
			rp->err = -ENOMEM;
			return;
		}
		if (ev.kind != SPAN_ASYNC_BEGIN && !begun) {
			rp->cut += ev.kind == SPAN_ASYNC_END;
			return;
		}
		if (ev.kind == SPAN_ASYNC_END)
			u64map_del(&rp->aopen, key);
	}
	for (size_t i = 0; i < rp->nsink; i++)
		rp->sink[i].event(rp->sink[i].arg, &ev);
}

/* An event of the RAW replay: its ids the file's (the replay's decoder
 * interns what the live one did, in the same order), moved as the
 * replay's events are (rf_events), to the sinks. */
static void rf_raw_event(void *arg, const struct span_event *ev0)
{
	struct rf_replay *rp = arg;
	struct recfile *rf = rp->rf;
	const struct record_replay *how = rp->how;
	if (rp->as_is && ev0->name < rf->nid && ev0->kind != SPAN_ARG) {
		for (size_t i = 0; i < rp->nsink; i++)
			rp->sink[i].event(rp->sink[i].arg, ev0);
		return;
	}
	struct span_event ev;
	span_event_moved(&ev, ev0, how->pid_base, (uint64_t)how->ts_shift);
	ev.name = rf_id(rf, ev.name);
	if (ev.kind == SPAN_ARG && ev.flags == SPAN_ARG_STR)
		ev.value = (int64_t)rf_id(rf, (uint64_t)ev.value);
	if (ev.kind == SPAN_PROCESS && how->prefix)
		ev.name = rf_prefixed(rf, how->prefix, ev.name);
	for (size_t i = 0; i < rp->nsink; i++)
		rp->sink[i].event(rp->sink[i].arg, &ev);
}

/* RAW_CHECK: the first replay (the one with the tree) checks it, and
 * tells the others (under sync) what it found; they wait for it. */
static void rf_raw_check(void *ctx, struct rawrep *raw)
{
	struct rf_replay *rp = ctx;
	struct rf_sync *sy = rp->sync;
	uint64_t *v = NULL;
	size_t n = 0;
	if (!sy || rp->parts) {
		if (rawrep_offcpu_check(raw, analysis_tree(rp->a), rp->how->pid_base,
					rp->how->ts_shift, &v, &n) < 0)
			rp->err = -ENOMEM;
		rawrep_damage(raw, v, n);
		if (sy) {
			pthread_mutex_lock(&sy->mu);
			if (!sy->checked) {
				sy->checked = true;
				sy->dmg = v;
				sy->ndmg = n;
				v = NULL;
			}
			pthread_cond_broadcast(&sy->cv);
			pthread_mutex_unlock(&sy->mu);
		}
		free(v);
		return;
	}
	pthread_mutex_lock(&sy->mu);
	while (!sy->checked)
		pthread_cond_wait(&sy->cv, &sy->mu);
	pthread_mutex_unlock(&sy->mu);
	rawrep_damage(raw, sy->dmg, sy->ndmg);
}

/* The file's string id's bytes, for the replay's decoder (NULL: lost). */
static const char *rf_string(void *ctx, uint32_t id, size_t *len)
{
	struct recfile *rf = ctx;
	if (id >= rf->nid || !rf->id[id])
		return NULL;
	*len = rf->strings->len[rf->id[id]];
	return strtab_get(rf->strings, rf->id[id]);
}

/* A RAW block, replayed (the replay begins at the first); one that does
 * not parse is a bad record, what came before in it replayed. */
static int rf_raw(struct recfile *rf, struct rf_replay *rp, struct record_in *in)
{
	(void)rf;
	if (!rp->raw) {
		if (!(rp->raw = rawrep_new()) ||
		    rawrep_add_sink(rp->raw, (struct span_sink){rf_raw_event, rp}) < 0)
			return -ENOMEM;
		rawrep_set_check(rp->raw, rf_raw_check, rp);
		rawrep_set_strings(rp->raw, rf_string, rf, rf->nid);
		rawrep_set_version(rp->raw, rf->version);
		/* the sinks take the head's values per span, no other count */
		rawrep_expect_values(rp->raw, rf->metrics.n);
	}
	int r = rawrep_feed(rp->raw, in->p, (size_t)(in->end - in->p));
	if (r == -EINVAL) {
		rp->bad_records++;
		rp->lost_events++;
		r = 0;
	}
	return r;
}

/* An ARG record not read with the EVENTS block before it: that block was
 * lost (damage, said), or in a window overwritten, its arguments with it
 * (counted with the spans cut at the window's start). */
static void rf_arg_alone(struct recfile *rf, struct rf_replay *rp, struct record_in *in)
{
	rp->args = (struct rf_args){.in = *in};
	while (rf_arg_next(rf, rp))
		rp->cut_args += rf->win.present;
	rp->args.have = false;
}

static int rf_pass2(struct recfile *rf, uint32_t type, struct record_in *in, void *ctx)
{
	struct rf_replay *rp = ctx;
	switch (type) {
	case RECORD_EVENTS:
		if (rf->head.spans)
			rf_events(rf, rp, in);
		break;
	case RECORD_MESSAGE:
		if (rf->head.spans)
			rf_message(rp, in);
		break;
	case RECORD_ASYNC:
		if (rf->head.spans)
			rf_async(rf, rp, in);
		break;
	case RECORD_ARG:
		if (rf->head.spans)
			rf_arg_alone(rf, rp, in);
		break;
	case RECORD_RAW:
		if (rf->head.spans)
			return rf_raw(rf, rp, in);
		break;
	case RECORD_RUNSTART: {
		uint64_t k = record_get_u64(in);
		if (in->ok && k < rf->head.runs)
			analysis_run(rp->a, rp->how->run_base + (unsigned)k);
		break;
	}
	case RECORD_INTERVAL: {
		struct interval_sample s = {0}; /* no rows per unit */
		uint64_t run = record_get_u64(in);
		s.t_ns = record_get_u64(in);
		s.mono_ns = record_get_u64(in) + (uint64_t)rp->how->ts_shift;
		s.length_ns = record_get_u64(in);
		struct count *c = calloc(rf->evl.n ? rf->evl.n : 1, sizeof *c);
		if (!c)
			return -ENOMEM;
		rf_counts(in, c, rf->evl.n);
		s.run = rp->how->run_base + (unsigned)run;
		s.counts = c;
		int r = in->ok && run < rf->head.runs ? analysis_interval(rp->a, &s) : 0;
		free(c);
		return r;
	}
	}
	return 0;
}

/* Replay rp is at record i, a sample: a part says so; the first waits
 * until every part is there too.  One replay stops at the first record
 * it fails at (no memory: a writer's own failure stays its own), and the
 * first replay's outputs print the samples as they come (the summary's -I lines): it
 * takes a sample only when no part failed before it, so that it prints
 * the lines one replay would have printed, whatever the threads' pace. */
static void rf_replay_at(struct rf_replay *rp, size_t i)
{
	struct rf_sync *sy = rp->sync;
	pthread_mutex_lock(&sy->mu);
	if (!rp->parts) {
		rp->reached = i;
		pthread_cond_broadcast(&sy->cv);
	}
	for (size_t k = 1; rp->parts && k < rp->nparts; k++)
		while (rp->parts[k].reached < i)
			pthread_cond_wait(&sy->cv, &sy->mu);
	pthread_mutex_unlock(&sy->mu);
}

/* One replay, rp's analysis and sinks set: 0, -ENOMEM or -EINTR.  With
 * others (rp->sync), it stops without an error past a record another
 * failed at. */
static int rf_replay_run(struct rf_replay *rp)
{
	struct recfile *rf = rp->rf;
	struct rf_sync *sy = rp->sync;
	for (size_t i = 0; i < rf->ntodo; i++) {
		size_t at = i;
		const uint8_t *p = rf->map + rf->todo[i].off;
		struct record_in in = {p, p + rf->todo[i].len, true};
		uint32_t type = rf->todo[i].type;
		if (sy && type == RECORD_INTERVAL)
			rf_replay_at(rp, at);
		if (sy && atomic_load_explicit(&sy->fail_at, memory_order_relaxed) < at)
			return 0;
		/* the arguments given among a block's events: read with it */
		rp->args = (struct rf_args){0};
		if (type == RECORD_EVENTS && i + 1 < rf->ntodo &&
		    rf->todo[i + 1].type == RECORD_ARG) {
			const uint8_t *q = rf->map + rf->todo[++i].off;
			rp->args.in = (struct record_in){q, q + rf->todo[i].len, true};
			rf_arg_next(rf, rp);
		}
		int r = rf_pass2(rf, type, &in, rp);
		if (r == 0)
			r = rp->err;
		if (r == 0)
			r = rf_stopped_at(rf, &rp->till_stop);
		if (r < 0) {
			rp->failed_at = at;
			size_t f = sy ? atomic_load(&sy->fail_at) : 0;
			while (at < f && !atomic_compare_exchange_weak(&sy->fail_at, &f, at))
				;
			return r;
		}
	}
	if (rp->raw) /* a capture cut short ends here */
		rawrep_end(rp->raw);
	return 0;
}

/* A part's replay, to its end: then the first need not wait for it. */
static void rf_replay_part(struct rf_replay *rp)
{
	rp->err = rf_replay_run(rp);
	pthread_mutex_lock(&rp->sync->mu);
	rp->reached = SIZE_MAX;
	pthread_cond_broadcast(&rp->sync->cv);
	pthread_mutex_unlock(&rp->sync->mu);
}

static void *rf_replay_thread(void *arg)
{
	rf_replay_part(arg);
	return NULL;
}

int recfile_replay(struct recfile *rf, struct analysis *a, const struct record_replay *how)
{
	return recfile_replay_parts(rf, &a, 1, how);
}

int recfile_replay_parts(struct recfile *rf, struct analysis *const *parts, size_t nparts,
			 const struct record_replay *how)
{
	static const struct record_replay none;
	struct rf_replay *rp = calloc(nparts, sizeof *rp);
	pthread_t *th = calloc(nparts, sizeof *th);
	bool *started = calloc(nparts, sizeof *started);
	int r = rp && th && started ? 0 : -ENOMEM;
	for (size_t k = 0; r == 0 && k < nparts; k++) {
		rp[k] = (struct rf_replay){.rf = rf,
					   .a = parts[k],
					   .how = how ? how : &none,
					   .till_stop = RF_STOP_EVERY};
		if ((k == 0 && rp[k].how->extra && rf_add_sink(&rp[k], *rp[k].how->extra) < 0) ||
		    analysis_sinks(parts[k], rf_add_sink, &rp[k]) < 0)
			r = -ENOMEM;
	}
	/* the others in threads of their own, which take no signal; a prefix
	 * grows the string table that writers read: then one at a time, and
	 * before the first, which then knows where they failed */
	struct rf_sync sy = {.mu = PTHREAD_MUTEX_INITIALIZER,
			     .cv = PTHREAD_COND_INITIALIZER,
			     .fail_at = SIZE_MAX};
	for (size_t k = 0; r == 0 && k < nparts; k++) {
		rp[k].sync = nparts > 1 ? &sy : NULL;
		rp[k].failed_at = SIZE_MAX;
	}
	if (r == 0 && nparts > 1) {
		rp[0].parts = rp;
		rp[0].nparts = nparts;
	}
	bool together = !(how && how->prefix) || rf->pre_prefixed;
	bool as_is = r == 0 && !rp[0].how->pid_base && !rp[0].how->ts_shift && !rp[0].how->prefix;
	for (uint32_t i = 0; as_is && i < rf->nid; i++)
		as_is = rf->id[i] == i;
	for (size_t k = 0; r == 0 && k < nparts; k++)
		rp[k].as_is = as_is;
	sigset_t all, old;
	sigfillset(&all);
	for (size_t k = 1; r == 0 && together && k < nparts; k++) {
		pthread_sigmask(SIG_BLOCK, &all, &old);
		int e = pthread_create(&th[k], NULL, rf_replay_thread, &rp[k]);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		started[k] = e == 0;
		if (e) /* in this thread, before the first */
			break;
	}
	for (size_t k = 1; r == 0 && k < nparts; k++)
		if (!started[k])
			rf_replay_part(&rp[k]);
	if (r == 0)
		rp[0].err = rf_replay_run(&rp[0]);
	/* the first found no RAW_CHECK (it stopped early): the others that
	 * wait for it find nothing */
	pthread_mutex_lock(&sy.mu);
	sy.checked = true;
	pthread_cond_broadcast(&sy.cv);
	pthread_mutex_unlock(&sy.mu);
	for (size_t k = 1; started && k < nparts; k++)
		if (started[k])
			pthread_join(th[k], NULL);
	/* the error of the replay that failed first in the file (the one
	 * replay's), those stopped by it having none */
	size_t first = SIZE_MAX;
	for (size_t k = 0; r == 0 && k < nparts; k++)
		if (rp[k].err && (first == SIZE_MAX || rp[k].failed_at < rp[first].failed_at))
			first = k;
	if (first != SIZE_MAX)
		r = rp[first].err;
	/* what the file lost, as the first replay found it */
	if (rp && r == 0) {
		/* a raw capture's statistics are its replay's, as the live
		 * decoder's were (END has those of the live run that wrote it) */
		const struct decode_stats *ds = rp[0].raw ? rawrep_stats(rp[0].raw) : NULL;
		if (ds) {
			/* END counted the records the live run took, whether it
			 * decoded them or only captured them: a replay that took
			 * others lost RAW blocks (or got one twice) no CRC told */
			if (rf->have_end && ds->records != rf->ds.records && !rp[0].bad_records) {
				rf->dmg.raw_records[0] = rf->ds.records;
				rf->dmg.raw_records[1] = ds->records;
			}
			/* what the file lost, against END's counts of the live
			 * run: records, and processes none of whose records the
			 * replay got; the records the target lost are END's (the
			 * replay's count also has the gaps the file's losses made) */
			struct decode_stats live = rf->ds;
			rf->ds = *ds;
			if (rf->have_end) {
				rf->ds.lost_records = live.lost_records;
				/* the processes the library announced are the live
				 * run's (unknown to an END older than the count): the
				 * replay's lack those the file lost whole */
				rf->ds.processes = live.processes;
				rf->ds.file_records =
					live.records > ds->records ? live.records - ds->records : 0;
				rf->ds.file_procs = !rf->ds.file_records ? 0
						    : live.processes == DECODE_UNKNOWN
							    ? DECODE_UNKNOWN
						    : live.processes > ds->processes
							    ? live.processes - ds->processes
							    : 0;
			} else {
				rf->ds.file_records = rf->ds.file_procs = DECODE_UNKNOWN;
			}
			rf->ds.file_answers = rawrep_missing(rp[0].raw);
			rf->dmg.lost_procs = rf->ds.file_procs;
			rf->dmg.lost_answers = rf->ds.file_answers;
			rf->cost = rawrep_event_cost_ns(rp[0].raw);
			const struct rawrep_blocks *b = rawrep_blocks(rp[0].raw);
			rf->dmg.raw_blocks[0] = b->missing;
			rf->dmg.raw_blocks[1] = b->repeated;
			rf->dmg.raw_blocks[2] = b->late;
		}
		/* a capture (version 2 on, not a window) none of whose RAW
		 * blocks is left, while END says the run took records: the
		 * file lost them all, not the target */
		bool spans_left = false;
		for (size_t i = 0; i < rf->ntodo && !spans_left; i++)
			spans_left =
				rf->todo[i].type == RECORD_RAW || rf->todo[i].type == RECORD_EVENTS;
		if (!ds && !spans_left && rf->version >= 2 && !rf->win.present && rf->have_end &&
		    rf->ds.records && rf->ds.records != DECODE_UNKNOWN) {
			rf->dmg.raw_records[0] = rf->ds.records;
			rf->ds.file_records = rf->ds.records;
			rf->ds.file_procs = rf->ds.processes;
			rf->dmg.lost_procs = rf->ds.file_procs;
		}
		/* values the live run did not see unknown (it captured only) */
		for (unsigned i = rf->metrics.first_target;
		     rp[0].raw && rawrep_unvalued(rp[0].raw) && i < rf->metrics.n; i++)
			rf->metrics.m[i].supported = false;
		rf->dmg.bad_records += rp[0].bad_records;
		rf->dmg.lost_events += rp[0].lost_events;
		rf->win.cut += rp[0].cut;
		rf->win.cut_args += rp[0].cut_args;
	}
	for (size_t k = 0; rp && k < nparts; k++) {
		free(rp[k].sink);
		u64map_release(&rp[k].open);
		u64map_release(&rp[k].aopen);
		rawrep_free(rp[k].raw);
	}
	free(sy.dmg);
	free(rp);
	free(th);
	free(started);
	return r;
}
