/* session.c: the run loop.  For each run: fork the target held before exec,
 * open its counters, release it, then wait in one poll loop for the span
 * sources (session_source: the binary transport, the pipe with the shared
 * rings behind it, and the line protocol's pipe), the -I timer, relayed
 * signals and the target's exit; then read the counts and rusage.
 * Afterwards it ends every source and hands the runs' results to the
 * consumer (session.h), which builds the report; it never names an output. */
#include "config.h"

#include "session.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cause.h"
#include "counters.h"
#include "decoder.h"
#include "launch.h"
#include "linesrc.h"
#include "norm.h"
#include "perfev.h"
#include "offcpu.h"
#include "pbenc.h"
#include "rawcap.h"
#include "ringsrc.h"
#include "sigrelay.h"
#include "target.h"
#include "spanclock.h"
#include "spanenv.h"
#include "spanmetric.h"
#include "spantree.h"
#include "stats.h"
#include "u64map.h"
#include "wire.h"

#define SESSION_READ_BUF (1u << 20)
#define SESSION_DRAIN_MAX (256u << 20) /* bytes read after exit, at most */
#define SESSION_STREAMING (64u << 10)  /* a read this big: spans are streaming */
#define SESSION_DOZE_NS 300000	       /* then doze this long between reads */
#define SESSION_RING_POLL_MS 5	       /* rings in use: drain at least this often */
#define SESSION_CAP_BLOCK (64u << 10)  /* a capture goes to the consumer in blocks this big */

extern char **environ;

struct session;

/* A span source the session polls: the descriptor to wait on (-1: none),
 * a read that takes everything the source holds now (at most about limit
 * bytes; *got says how much came), an idle poll timeout it needs (-1: none),
 * and the end of the stream.  The binary transport (pipe and rings) is one;
 * a text line protocol or a record file are others. */
struct session_source {
	int fd;
	int (*read)(struct session *s, size_t limit, size_t *got);
	int (*poll_ms)(struct session *s);
	int (*finish)(struct session *s);
};

#define SESSION_MAX_SOURCES 4
/* pidfds of attached processes polled at once; more are looked for in /proc */
#define SESSION_MAX_WATCH 64

struct session {
	const struct session_opts *o;
	struct run_head head;
	struct run_result *run;
	unsigned nruns;
	int sfd; /* signalfd */
	struct sigrelay sr;
	/* spans */
	int pipe_r, pipe_w;
	int lines_r, lines_w; /* the line protocol's pipe (linesrc.h) */
	struct linesrc *lines;
	char *buf;
	struct decoder *dec;
	struct ringsrc *rings; /* the shared-memory transport, or NULL: the pipe only */
	bool agg;	       /* no output streams events: threads aggregate (ring.h) */
	struct session_source src[SESSION_MAX_SOURCES];
	unsigned nsrc;
	const struct session_consumer *an; /* where the facts go */
	bool have_an;
	struct spanmetrics metrics; /* what spans carry (spanmetric.h) */
	char *values_spec;	    /* SPANSTAT_VALUES for the target */
	uint32_t values_layout;	    /* spanstat_values_id() of it (0: none) */
	char *exe, *build_id;	    /* the head's (launch_exe), or NULL */
	struct offcpu *off;	    /* every run's switch and exit records, or NULL */
	int hook_err;		    /* the decoder hook failed (-ENOMEM) */
	/* trees handed over now end at (session_tree_end): */
	enum { GONE_LIVE, GONE_EXIT, GONE_KERNEL } gone;
	uint64_t gone_ts; /* GONE_EXIT: its EXIT's ts, in its clock */
	/* the stream's end (session_spans_finish): processes still running
	 * then (session_running) end their threads at finish_ns, ns */
	bool finishing;
	uint64_t finish_ns;
	struct u64map running; /* pid -> 1 */
	char **envp;	       /* the target's environment when collecting */
	char **owned;	       /* the entries of envp we allocated */
	size_t nowned;
	/* the raw capture (rawcap.h) the consumer keeps, when it does */
	bool cap;
	/* and nothing else takes the spans: the decoder only captures the
	 * records of events (decoder_set_capture_only), the replay decodes */
	bool raw_only;
	struct rawcap capb;  /* what the consumer has not been handed yet */
	uint64_t capset[11]; /* its RAW_SETUP, which starts every block */
	size_t capset_len;   /* the bytes of a block's first items (setup, number, state) */
	uint64_t capseq;     /* the block's number (RAW_BLOCK) */
	uint8_t *capstate;   /* its RAW_STATE (decoder_state) */
	size_t capstate_cap;
	int64_t rt_off;	  /* realtime - monotonic, the line source's */
	int exec_errno;	  /* the command could not be executed */
	bool interrupted; /* a signal was relayed: no further runs */
	int hook_sig;	  /* the signal that killed a failed --pre or --post */
	int signo;	  /* a signal that came while no target ran */
};

static uint64_t session_now(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int session_fail(char **cause, int err, const char *fmt, const char *arg)
{
	char *what = NULL;
	if (asprintf(&what, fmt, arg) < 0)
		what = NULL;
	cause_set(cause, -err, "%s: %s", what ? what : "error", strerror(err));
	free(what);
	return -err;
}

/* The target's environment: environ without our variables, plus the span
 * library's.  Entries of environ are borrowed; s->owned are ours.  tsc: the
 * target stamps with the TSC at this rate; NULL: CLOCK_MONOTONIC. */
static int session_env(struct session *s, const struct spanclock *tsc)
{
	size_t n = 0, k = 0;
	const char *oldpre = NULL, *oldpy = NULL;
	struct stat st;

	while (environ[n])
		n++;
	s->envp = calloc(n + 16, sizeof *s->envp); /* ours: at most 15, and NULL */
	if (!s->envp)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		/* ours, but for the user's choice of the Python module's path */
		if (strncmp(environ[i], "SPANSTAT_", 9) == 0 &&
		    strncmp(environ[i], SPANSTAT_ENV_PY_PURE "=", sizeof SPANSTAT_ENV_PY_PURE) != 0)
			continue;
		if (strncmp(environ[i], "LD_PRELOAD=", 11) == 0) {
			oldpre = environ[i] + 11;
			continue;
		}
		if (strncmp(environ[i], "PYTHONPATH=", 11) == 0 && s->o->python_dir) {
			oldpy = environ[i] + 11;
			continue;
		}
		s->envp[k++] = environ[i];
	}
	if (fstat(s->pipe_w, &st) < 0)
		return -errno;
	char **own = &s->envp[k];
	int ok = asprintf(&own[0], "%s=%d", SPANSTAT_ENV_FD, s->pipe_w) > 0 &&
		 asprintf(&own[1], "%s=/proc/%d/fd/%d", SPANSTAT_ENV_PIPE, (int)getpid(),
			  s->pipe_w) > 0 &&
		 asprintf(&own[2], "%s=%llu:%llu", SPANSTAT_ENV_PIPE_ID,
			  (unsigned long long)st.st_dev, (unsigned long long)st.st_ino) > 0 &&
		 asprintf(&own[3], "%s=%s", SPANSTAT_ENV_CLOCK, tsc ? "tsc" : "mono") > 0;
	s->nowned = 4;
	if (ok && s->rings)
		ok = asprintf(&own[s->nowned++], "%s=/proc/%d/fd/%d", SPANSTAT_ENV_SHM,
			      (int)getpid(), ringsrc_fd(s->rings)) > 0;
	if (ok && s->rings && s->agg)
		ok = (own[s->nowned++] = strdup(SPANSTAT_ENV_AGG "=1")) != NULL;
	if (ok && s->lines)
		ok = asprintf(&own[s->nowned++], "%s=/proc/%d/fd/%d", SPANSTAT_ENV_LINES,
			      (int)getpid(), s->lines_w) > 0;
	if (ok && s->lines && s->o->shell_helper)
		ok = asprintf(&own[s->nowned++], "%s=%s", SPANSTAT_ENV_SH, s->o->shell_helper) > 0;
	/* import spanstat: after the user's own path, so theirs wins; --python's
	 * sitecustomize first, which chains to the user's */
	const char *boot = s->o->python_boot;
	if (ok && boot)
		ok = asprintf(&own[s->nowned++], "%s=%s", SPANSTAT_ENV_PYTHON,
			      s->o->python_c_calls ? "c" : "py") > 0;
	if (ok && s->lines && s->o->python_dir)
		ok = asprintf(&own[s->nowned++], "PYTHONPATH=%s%s%s%s%s", boot ? boot : "",
			      boot ? ":" : "", oldpy ? oldpy : "", oldpy && *oldpy ? ":" : "",
			      s->o->python_dir) > 0;
	else if (ok && oldpy)
		ok = asprintf(&own[s->nowned++], "PYTHONPATH=%s", oldpy) > 0;
	if (ok && s->values_spec)
		ok = asprintf(&own[s->nowned++], "%s=%s", SPANSTAT_ENV_VALUES, s->values_spec) > 0;
	if (ok && s->o->lib_calls)
		ok = asprintf(&own[s->nowned++], "%s=%s", SPANSTAT_ENV_LIBCALLS, s->o->lib_calls) >
		     0;
	if (ok && s->o->lib_calls && s->o->lib_calls_all)
		ok = (own[s->nowned++] = strdup(SPANSTAT_ENV_LIBCALLS_FROM "=all")) != NULL;
	if (ok && s->agg && s->metrics.off_cpu >= 0)
		ok = (own[s->nowned++] = strdup(SPANSTAT_ENV_OFFCPU "=1")) != NULL;
	/* not where it could not count: the program runs as it would alone */
	const char *alloc = s->o->span_allocs && !s->o->alloc_unknown ? s->o->alloc_preload : NULL;
	if (ok && (s->o->preload || oldpre || alloc)) {
		const char *a = s->o->preload ? s->o->preload : "";
		const char *b = oldpre ? oldpre : "";
		/* the allocation counter first: its malloc is the one in use */
		ok = asprintf(&own[s->nowned++], "LD_PRELOAD=%s%s%s%s%s", alloc ? alloc : "",
			      alloc && (*a || *b) ? ":" : "", a, *a && *b ? ":" : "", b) > 0;
	}
	if (ok && s->o->filter && spanfilter_any(s->o->filter)) {
		char *spec = NULL;
		ok = spanfilter_spec(s->o->filter, tsc, &spec) == 0 &&
		     asprintf(&own[s->nowned++], "%s=%s", SPANSTAT_ENV_FILTER, spec) > 0;
		free(spec);
	}
	s->owned = own;
	return ok ? 0 : -ENOMEM;
}

static void session_env_free(struct session *s)
{
	for (size_t i = 0; s->owned && i < s->nowned; i++)
		free(s->owned[i]);
	free(s->envp);
	s->envp = NULL;
}

/* ---- the raw capture (rawcap.h) ---------------------------------------- */

/* A block's first items: the setup, its number, and the state a replay
 * that lost what came before needs to go on from here. */
static void session_cap_head(struct session *s)
{
	rawcap_put_u64s(&s->capb, RAW_SETUP, s->capset, 11);
	rawcap_put_u64s(&s->capb, RAW_BLOCK, &s->capseq, 1);
	size_t n = 0;
	int e = decoder_state(s->dec, &s->capstate, &s->capstate_cap, &n);
	if (e == -ENOMEM)
		s->capb.oom = true;
	/* without one (-EINVAL: never so), an empty item: the replay goes
	 * on as before */
	rawcap_put(&s->capb, RAW_STATE, s->capstate, e < 0 ? 0 : n, NULL, 0);
	s->capset_len = s->capb.len;
}

/* What is captured so far, to the consumer: before anything else it hands
 * on (a run start, a sample, the end), so that a replay meets them at the
 * same places in the span stream. */
static void session_cap_flush(struct session *s)
{
	if (!s->cap)
		return;
	if (s->capb.oom)
		s->hook_err = -ENOMEM;
	else if (s->capb.len > s->capset_len)
		s->an->capture(s->an->ctx, s->capb.p, s->capb.len);
	else
		return; /* nothing but the setup */
	s->capb.len = 0;
	s->capseq++;
	session_cap_head(s);
}

/* An item that answers may follow: the block is handed on before it when
 * full, never between it and its answers. */
static void session_cap_room(struct session *s)
{
	/* a large state (many names) makes the block longer, so that the
	 * states stay a fifth of the capture at most */
	if (s->capb.len >= SESSION_CAP_BLOCK + 4 * s->capset_len)
		session_cap_flush(s);
}

static void session_tap_rec(void *ctx, const void *rec, size_t len)
{
	struct session *s = ctx;
	session_cap_room(s);
	rawcap_put_rec(&s->capb, rec, len);
}

static void session_tap_off(void *ctx, const void *rec, size_t len)
{
	rawcap_put(&((struct session *)ctx)->capb, RAW_OFF, rec, len, NULL, 0);
}

static size_t session_sym_name(void *ctx, const char *path, uint64_t addr, uint64_t base, char *fn,
			       size_t size)
{
	struct session *s = ctx;
	return rawcap_sym_name(&s->capb, s->dec, path, addr, base, fn, size);
}

static int session_sym_where(void *ctx, const char *path, uint64_t addr, uint64_t base, char *where,
			     size_t size, unsigned *line)
{
	struct session *s = ctx;
	return rawcap_sym_where(&s->capb, s->dec, path, addr, base, where, size, line);
}

static uint64_t session_proc_start(void *ctx, uint32_t pid)
{
	uint64_t at = linesrc_proc_start(pid);
	rawcap_put_u64s(&((struct session *)ctx)->capb, RAW_PSTART, &at, 1);
	return at;
}

static size_t session_proc_comm(void *ctx, uint32_t pid, char *buf, size_t size)
{
	size_t n = linesrc_proc_comm(pid, buf, size);
	rawcap_put(&((struct session *)ctx)->capb, RAW_PCOMM, buf, n, NULL, 0);
	return n;
}

/* Whether the consumer keeps a capture: then every input of the decoder
 * is captured from now on, after what it was set up with. */
static void session_cap_setup(struct session *s, const struct spanclock *clk)
{
	if (s->agg || !s->an->capture_on || !s->an->capture || !s->an->capture_on(s->an->ctx))
		return;
	s->cap = true;
	s->raw_only = s->an->capture_only && s->an->capture_only(s->an->ctx);
	uint64_t *v = s->capset;
	uint64_t set[11] = {clk != NULL,
			    clk ? clk->tsc0 : 0,
			    clk ? clk->mono0 : 0,
			    clk ? clk->mult : 0,
			    clk ? clk->shift : 0,
			    (uint64_t)s->o->demangle,
			    rawcap_zz(s->rt_off),
			    s->metrics.n,
			    s->metrics.first_target,
			    (uint64_t)(s->metrics.off_cpu + 1),
			    s->values_layout};
	memcpy(v, set, sizeof set);
	s->capseq = 0;
	session_cap_head(s);
	decoder_set_tap(s->dec, session_tap_rec, s);
	decoder_set_capture_only(s->dec, s->raw_only);
	decoder_set_symfn(s->dec, &(struct decoder_symfn){session_sym_name, session_sym_where, s});
	linesrc_set_procfn(s->lines,
			   &(struct linesrc_procfn){session_proc_start, session_proc_comm, s});
}

/* A record made from a ring goes to the decoder like the pipe's. */
static int session_ring_record(void *ctx, const void *rec, size_t len)
{
	struct session *s = ctx;
	return decoder_record(s->dec, rec, len);
}

_Static_assert(RING_AGG_DEPTH == NORM_MAX_DEPTH,
	       "an aggregating thread follows as many open spans as the normaliser");

/* The thread's cumulative off-CPU ns at ns (the decoder's values callback). */
static uint64_t session_off_cpu_at(void *ctx, uint32_t pid, uint32_t tid, uint64_t ns)
{
	struct session *s = ctx;
	return s->off ? offcpu_at(s->off, pid, tid, ns) : 0;
}

/* When the thread ended at or after `after`, as the kernel told (the
 * decoder's end_at callback); 0: not known. */
static uint64_t session_end_at(void *ctx, uint32_t pid, uint32_t tid, uint64_t after)
{
	struct session *s = ctx;
	if (s->finishing && u64map_get(&s->running, pid)) {
		/* still running at the stream's end: so is a thread whose end
		 * the kernel did not tell */
		uint64_t e = offcpu_ended(s->off, pid, tid, after);
		return e ? e : s->finish_ns > after ? s->finish_ns : after;
	}
	return offcpu_end(s->off, pid, tid, after);
}

static bool session_running(void *ctx, uint32_t pid);

/* When the thread of tree t ended, in ns, as the normaliser ends a thread
 * of the same process: when it said it ended (its last ts); else at its
 * process's EXIT, or, gone without saying (killed, exec), as the kernel
 * told; never before its last event. */
static uint64_t session_tree_end(struct session *s, const struct ringsrc_tree *t)
{
	uint64_t last = decoder_ts_ns(s->dec, t->pid, t->last_ts), end = 0;
	if (t->ended)
		return last;
	if (s->gone == GONE_EXIT)
		end = decoder_ts_ns(s->dec, t->pid, s->gone_ts);
	else if (s->gone == GONE_KERNEL && s->finishing && session_running(s, t->pid))
		end = session_end_at(s, t->pid, t->tid, last);
	else if (s->gone == GONE_KERNEL)
		end = offcpu_end(s->off, t->pid, t->tid, last);
	return end > last ? end : last;
}

/* The value rows (metrics.n per node) of a tree aggregated in the target:
 * its own sums; the off-CPU time of each span it was switched out in, from
 * the switch records; open spans add what they held up to the thread's end
 * (end_ns) as the normaliser would: the target's values as of its last
 * event (later ones are unknown), its off-CPU time up to the end. */
static uint64_t *session_tree_values(struct session *s, const struct ringsrc_tree *t,
				     uint64_t end_ns)
{
	unsigned k = s->metrics.n, ft = s->metrics.first_target;
	if (!k)
		return NULL;
	uint64_t *v = calloc((size_t)t->n * k, sizeof *v);
	if (!v)
		return NULL;
	if (t->vals && t->nvals == k - ft)
		for (uint32_t i = 0; i < t->n; i++)
			memcpy(v + (size_t)i * k + ft, t->vals + (size_t)i * t->nvals,
			       t->nvals * sizeof *v);
	int oc = s->metrics.off_cpu;
	for (size_t j = 0; oc >= 0 && s->off && j < t->nsw; j++) {
		const struct ringsrc_switched *w = &t->sw[j];
		if (w->node == 0 || w->node >= t->n || w->end < w->begin)
			continue;
		uint64_t b = decoder_ts_ns(s->dec, t->pid, w->begin);
		uint64_t e = decoder_ts_ns(s->dec, t->pid, w->end);
		uint64_t ob = offcpu_at(s->off, t->pid, t->tid, b);
		uint64_t oe = offcpu_at(s->off, t->pid, t->tid, e);
		if (oe > ob)
			v[(size_t)w->node * k + (unsigned)oc] += oe - ob;
	}
	/* the spans still open: their values up to the thread's latest
	 * (ring.h), their off-CPU time up to its end */
	const uint64_t *fr =
		t->vals && t->nvals == k - ft ? t->vals + (size_t)t->n * t->nvals : NULL;
	uint64_t last[SPANMETRIC_MAX] = {0};
	for (uint32_t d = t->depth ? t->depth - 1 : 0; fr && d <= t->depth && d < RING_AGG_DEPTH;
	     d++)
		for (unsigned i = 0; i < t->nvals; i++)
			if (fr[(size_t)d * t->nvals + i] > last[i])
				last[i] = fr[(size_t)d * t->nvals + i];
	for (uint32_t d = 0; d < t->depth; d++) {
		const struct ring_agg_frame *f = &t->frame[d];
		if (f->node >= t->n)
			continue;
		uint64_t *nv = v + (size_t)f->node * k;
		for (unsigned i = 0; fr && i < t->nvals; i++) {
			uint64_t b = fr[(size_t)d * t->nvals + i];
			nv[ft + i] += last[i] > b ? last[i] - b : 0;
		}
		uint64_t b = decoder_ts_ns(s->dec, t->pid, f->ts);
		if (oc >= 0 && s->off && end_ns > b) {
			uint64_t ob = offcpu_at(s->off, t->pid, t->tid, b);
			uint64_t oe = offcpu_at(s->off, t->pid, t->tid, end_ns);
			if (oe > ob)
				nv[oc] += oe - ob;
		}
	}
	return v;
}

static void session_offcpu_damage(void *ctx, uint32_t pid, uint32_t tid, uint64_t ts,
				  uint64_t excess)
{
	struct session *s = ctx;
	if (s->cap)
		rawcap_put_u64s(&s->capb, RAW_DAMAGE,
				(uint64_t[]){pid, tid, ts, SPAN_DMG_OFFCPU, excess}, 5);
	norm_damage(decoder_norm(s->dec), pid, tid, ts, SPAN_DMG_OFFCPU, excess);
}

/* The switches the kernel lost, and off-CPU time no span holds though it
 * must (offcpu_check), each a SPAN_DAMAGE for every writer and the record
 * alike.  Capturing only, the replay checks its own tree (RAW_CHECK). */
static void session_offcpu_check(struct session *s)
{
	int oc = s->metrics.off_cpu;
	if (!s->off || oc < 0 || !s->dec)
		return;
	const struct offcpu_stats *os = offcpu_stats(s->off);
	uint64_t lost = os->lost + os->bad + os->refused;
	if (s->cap)
		rawcap_put_u64s(&s->capb, RAW_SWLOST, &lost, 1);
	decoder_count_switches_lost(s->dec, lost);
	if (s->raw_only) {
		rawcap_put(&s->capb, RAW_CHECK, NULL, 0, NULL, 0);
		return;
	}
	span_trees_offcpu_check(s->an->tree(s->an->ctx), oc, 0, 0, session_off_cpu_at,
				session_offcpu_damage, s);
}

/* A thread's call tree, aggregated in the target (ring.h's aggregate mode):
 * its names and clock are its process's, as the decoder knows them; spans
 * still open close unfinished at the thread's end (session_tree_end), as
 * the normaliser closes them. */
static int session_ring_tree(void *ctx, const struct ringsrc_tree *t)
{
	struct session *s = ctx;
	uint32_t n = t->n;
	uint32_t *u32 = malloc(2 * (size_t)n * sizeof *u32);
	uint64_t *u64 = malloc(3 * (size_t)n * sizeof *u64);
	if (!u32 || !u64) {
		free(u32);
		free(u64);
		return -ENOMEM;
	}
	uint32_t *parent = u32, *name = u32 + n;
	uint64_t *count = u64, *total = u64 + n, *unfinished = u64 + 2 * (size_t)n;
	uint64_t spans = 0, unf = 0, end = session_tree_end(s, t);
	for (uint32_t i = 0; i < n; i++) {
		parent[i] = t->node[i].parent;
		name[i] = i ? decoder_name_of(s->dec, t->pid, t->node[i].id) : 0;
		count[i] = t->node[i].count;
		total[i] = decoder_dur_ns(s->dec, t->pid, t->node[i].total);
		unfinished[i] = t->node[i].unfinished;
	}
	for (uint32_t k = 0; k < t->depth; k++) {
		const struct ring_agg_frame *f = &t->frame[k];
		if (f->node >= n)
			continue;
		count[f->node]++;
		unfinished[f->node]++;
		uint64_t b = decoder_ts_ns(s->dec, t->pid, f->ts);
		if (end > b)
			total[f->node] += end - b;
	}
	uint64_t swlost = 0;
	for (uint32_t i = 1; i < n; i++) {
		spans += count[i];
		unf += unfinished[i];
		swlost += t->node[i].swlost;
	}
	if (s->metrics.off_cpu >= 0)
		decoder_count_switches_lost(s->dec, swlost);
	uint64_t *vals = session_tree_values(s, t, end);
	struct span_import im = {.pid = t->pid,
				 .tid = t->tid,
				 .n = n,
				 .parent = parent,
				 .name = name,
				 .count = count,
				 .total_ns = total,
				 .unfinished = unfinished,
				 .vals = vals,
				 .first_ts = decoder_ts_ns(s->dec, t->pid, t->first_ts),
				 .last_ts = end,
				 .instants = t->instants,
				 .counters = t->counters,
				 .untracked = t->untracked,
				 .args = t->args};
	int r = s->metrics.n && !vals ? -ENOMEM : s->an->import(s->an->ctx, &im);
	free(vals);
	decoder_count(s->dec, spans, unf, t->unmatched, t->deep);
	decoder_count_dropped(s->dec, t->pid, t->dropped);
	free(u32);
	free(u64);
	return r;
}

/* A thread of the target could not open some events of --span-events (a
 * user without the privilege root's probe had): their sums would hold its
 * zeros, so the run shows them as unknown, as perf shows an event it could
 * not count. */
static void session_uncounted(struct session *s, const uint8_t *payload)
{
	struct wire_uncounted u;
	memcpy(&u, payload, sizeof u);
	struct spanmetrics *m = &s->metrics;
	for (unsigned i = 0; i < 32; i++)
		if ((u.mask >> i & 1u) && m->first_target + i < m->n &&
		    m->m[m->first_target + i].kind == SPANMETRIC_EVENT)
			m->m[m->first_target + i].supported = false;
}

/* A process of the target began or ended a span without the values the
 * session asked for (its environment lost or changed SPANSTAT_VALUES): the
 * sums would hold its zeros as counts, so they are unknown. */
static void session_unvalued(void *ctx, uint32_t pid)
{
	(void)pid;
	struct spanmetrics *m = &((struct session *)ctx)->metrics;
	for (unsigned i = m->first_target; i < m->n; i++)
		m->m[i].supported = false;
}

/* Before the decoder takes a process's EXIT, or the HELLO of the image that
 * replaced it (where its spans still open end): every switch and exit the
 * kernel has reported so far, then everything that process left in its
 * rings, its trees ending as the decoder ends its threads. */
static void session_hook(void *ctx, const struct wire_hdr *h, const uint8_t *payload)
{
	struct session *s = ctx;
	if (h->type == WIRE_UNCOUNTED && h->len == WIRE_HDR_SIZE + sizeof(struct wire_uncounted))
		session_uncounted(s, payload);
	if (h->type != WIRE_EXIT && h->type != WIRE_HELLO)
		return;
	if (s->off && offcpu_drain(s->off) < 0)
		s->hook_err = -ENOMEM;
	if (!s->rings)
		return;
	if (h->type == WIRE_EXIT) {
		struct wire_exit ex;
		/* one the decoder will refuse (bad length) says no time */
		s->gone = h->len == WIRE_HDR_SIZE + sizeof ex ? GONE_EXIT : GONE_KERNEL;
		if (s->gone == GONE_EXIT) {
			memcpy(&ex, payload, sizeof ex);
			s->gone_ts = ex.ts;
		}
		if (ringsrc_drain_gone(s->rings, h->pid, 0, session_ring_record, s) < 0)
			s->hook_err = -ENOMEM;
	} else if (h->type == WIRE_HELLO && h->len >= WIRE_HDR_SIZE + sizeof(struct wire_hello)) {
		struct wire_hello hello;
		memcpy(&hello, payload, sizeof hello);
		s->gone = GONE_KERNEL;
		if (ringsrc_drain_gone(s->rings, h->pid, hello.ts, session_ring_record, s) < 0)
			s->hook_err = -ENOMEM;
	}
	s->gone = GONE_LIVE;
}

/* The start of the small /proc file path, NUL-terminated in buf (of size
 * cap): false when it cannot be read or is empty. */
static bool session_proc_read(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, cap - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	return true;
}

/* Whether the task of directory dir (/proc/PID or /proc/PID/task/TID) has
 * not ended: "pid (comm) S ...", the state after the last ')'; a zombie or
 * a dead one has ended. */
static bool session_task_live(const char *dir)
{
	char path[64 + 256], buf[256];
	snprintf(path, sizeof path, "%s/stat", dir);
	if (!session_proc_read(path, buf, sizeof buf))
		return false;
	const char *p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] && !strchr("ZXx", p[2]);
}

/* Whether the task of directory dir (/proc/PID or /proc/PID/task/TID)
 * holds, in the environment its process started with, the entry env (our
 * pipe's SPANSTAT_PIPE_ID): a process of the target, not another that took
 * its pid since, nor one that a pid namespace numbers alike. */
static bool session_env_has(const char *dir, const char *env)
{
	char path[64 + 256], buf[4096];
	size_t len = strlen(env), have = 0;
	snprintf(path, sizeof path, "%s/environ", dir);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	bool found = false, skip = false;
	for (;;) { /* entries end with a NUL; buf keeps one entry's start */
		ssize_t n = read(fd, buf + have, sizeof buf - 1 - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = 0;
		char *e = buf, *end = buf + have;
		for (char *z; (z = memchr(e, 0, (size_t)(end - e))); e = z + 1, skip = false)
			if (!skip && (size_t)(z - e) == len && memcmp(e, env, len) == 0)
				found = true;
		if (found)
			break;
		/* an unended entry: kept to be read whole, unless longer than
		 * buf (then it is not ours: its rest is skipped) */
		have = (size_t)(end - e);
		if (have >= sizeof buf - 1) {
			have = 0;
			skip = true;
		}
		memmove(buf, e, have);
	}
	close(fd);
	return found;
}

/* Whether pid names a process now, not a thread of another: /proc/TID
 * answers for any thread too, so a tid that took the pid of a process since
 * ended would pass for it (its Tgid the process it belongs to). */
static bool session_is_process(uint32_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%u/status", pid);
	if (!session_proc_read(path, buf, sizeof buf))
		return false;
	const char *t = strstr(buf, "\nTgid:");
	return t && strtoul(t + 6, NULL, 10) == pid; /* "\nTgid:\tN" */
}

/* Whether process pid of the target is still running as the run ends: an
 * orphan it left.  One of its threads alive (its leader may have ended, a
 * zombie with no environment, while the others run on), and the process
 * the pid names now is still the target's: else it has ended. */
static bool session_running_now(struct session *s, uint32_t pid)
{
	if (!session_is_process(pid)) /* gone, or its pid a thread's tid now */
		return false;
	const char *id = NULL;
	for (size_t i = 0; s->envp && s->envp[i] && !id; i++)
		if (strncmp(s->envp[i], SPANSTAT_ENV_PIPE_ID "=", sizeof SPANSTAT_ENV_PIPE_ID) == 0)
			id = s->envp[i];
	char path[64], tpath[64 + 256];
	snprintf(path, sizeof path, "/proc/%u", pid);
	if (!id || session_task_live(path))
		return id && session_env_has(path, id);
	snprintf(path, sizeof path, "/proc/%u/task", pid);
	DIR *dir = opendir(path);
	bool live = false;
	for (struct dirent *de; dir && !live && (de = readdir(dir));)
		if (de->d_name[0] != '.' &&
		    snprintf(tpath, sizeof tpath, "%s/%s", path, de->d_name) < (int)sizeof tpath)
			live = session_task_live(tpath);
	if (dir)
		closedir(dir);
	return live && session_env_has(tpath, id);
}

/* session_running_now, remembered (session_end_at ends the threads of a
 * process found running at finish_ns) */
static bool session_running(void *ctx, uint32_t pid)
{
	struct session *s = ctx;
	bool live = u64map_get(&s->running, pid) || session_running_now(s, pid);
	if (live) /* without memory: ended as the kernel told */
		(void)u64map_put(&s->running, pid, 1);
	if (s->cap) /* the replay answers as the live decoder was answered */
		rawcap_put_u64s(&s->capb, RAW_RUNNING, (uint64_t[]){pid, live}, 2);
	return live;
}

static int session_spans_read(struct session *s, size_t limit, size_t *got);
static int session_spans_poll_ms(struct session *s);
static int session_spans_finish(struct session *s);

/* Whether event e can count on a thread of ours, as the target's will. */
static bool session_event_probe(const struct event *e)
{
	struct perf_event_attr a = e->attr;
	a.disabled = 1;
	a.inherit = 0;
	int fd = perfev_open(&a, 0, -1);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static int session_metric(struct spanmetrics *m, enum spanmetric_kind kind, const char *name,
			  bool supported, bool time)
{
	if (m->n == SPANMETRIC_MAX)
		return -E2BIG;
	m->m[m->n++] = (struct spanmetric){kind, name, supported, time};
	return 0;
}

/* Appends to spec; once it is full, len stays past its end (too long). */
__attribute__((format(printf, 4, 5))) static void
session_spec_add(char *spec, size_t size, size_t *len, const char *fmt, ...)
{
	if (*len >= size)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(spec + *len, size - *len, fmt, ap);
	va_end(ap);
	*len += n > 0 ? (size_t)n : 0;
}

/* What spans carry in this session, and the target's part of it as
 * SPANSTAT_VALUES (values.h's format). */
static int session_metrics(struct session *s, char **cause)
{
	struct spanmetrics *m = &s->metrics;
	const struct session_opts *o = s->o;
	char spec[SPANSTAT_VALUES_MAX] = "";
	size_t len = 0;
	int r = 0;
	memset(m, 0, sizeof *m);
	m->off_cpu = -1;
	if (!o->no_off_cpu && offcpu_probe()) {
		m->off_cpu = (int)m->n;
		r = session_metric(m, SPANMETRIC_OFF_CPU, "off_cpu_ns", true, true);
	}
	m->first_target = m->n;
	for (size_t i = 0; r == 0 && o->span_evl && i < o->span_evl->n; i++) {
		const struct event *e = &o->span_evl->ev[i];
		r = session_metric(m, SPANMETRIC_EVENT, e->name, session_event_probe(e),
				   e->unit && strcmp(e->unit, "msec") == 0);
		/* a uprobe's config1 points at its path here: the target gets the
		 * path itself */
		session_spec_add(spec, sizeof spec, &len, "%se:%x:%llx:%llx:%llx:%x",
				 len ? "," : "", e->attr.type, (unsigned long long)e->attr.config,
				 e->probe_path ? 0ull : (unsigned long long)e->attr.config1,
				 (unsigned long long)e->attr.config2,
				 (unsigned)(e->attr.exclude_user | e->attr.exclude_kernel << 1 |
					    e->attr.exclude_hv << 2));
		for (size_t k = 0; e->probe_path && e->probe_path[k]; k++)
			session_spec_add(spec, sizeof spec, &len, "%s%02x", k ? "" : ":",
					 (unsigned char)e->probe_path[k]);
	}
	if (r == 0 && o->span_allocs) {
		/* still carried when unknown: the target's values keep their places */
		bool known = !o->alloc_unknown;
		r = session_metric(m, SPANMETRIC_ALLOCS, "allocs", known, false);
		if (r == 0)
			r = session_metric(m, SPANMETRIC_FREES, "frees", known, false);
		if (r == 0)
			r = session_metric(m, SPANMETRIC_ALLOC_BYTES, "alloc_bytes", known, false);
		if (r == 0)
			r = session_metric(m, SPANMETRIC_FREE_BYTES, "free_bytes", known, false);
		session_spec_add(spec, sizeof spec, &len, "%sa", len ? "," : "");
	}
	if (r == 0 && len >= sizeof spec)
		return cause_set(cause, -E2BIG,
				 "cannot collect spans: the uprobes of %s name paths too long "
				 "for the target (%d bytes in all)",
				 "--span-events", SPANSTAT_VALUES_MAX);
	if (r < 0) {
		cause_set(cause, -E2BIG, "too many values per span: at most %d, with %s",
			  SPANMETRIC_MAX - (m->off_cpu >= 0) - (o->span_allocs ? 4 : 0),
			  "--span-events");
		return -E2BIG;
	}
	if (len && !(s->values_spec = strdup(spec)))
		return session_fail(cause, ENOMEM, "cannot collect %s", "spans");
	s->head.metrics = m;
	return 0;
}

/* Reads what the line pipe holds now (at most limit bytes). */
static int session_lines_read(struct session *s, size_t limit, size_t *got)
{
	*got = 0;
	while (*got < limit) {
		ssize_t n = read(s->lines_r, s->buf, SESSION_READ_BUF);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		*got += (size_t)n;
		uint64_t now = session_now(CLOCK_MONOTONIC);
		if (s->cap) {
			uint8_t v[10];
			session_cap_room(s);
			rawcap_put(&s->capb, RAW_LINES, v, pbenc_put_varint(v, now), s->buf,
				   (size_t)n);
		}
		if (linesrc_feed(s->lines, s->buf, (size_t)n, now) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int session_lines_finish(struct session *s)
{
	if (s->cap)
		rawcap_put(&s->capb, RAW_LFINISH, NULL, 0, NULL, 0);
	linesrc_finish(s->lines);
	return 0;
}

/* The pipe of the line protocol, which a program opens by its /proc path
 * (SPANSTAT_LINES), and its reader. */
static int session_lines_setup(struct session *s)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
		return -errno;
	s->lines_r = p[0];
	s->lines_w = p[1];
#if HAVE_DECL_F_SETPIPE_SZ
	for (int sz = 1 << 20; sz >= 65536; sz >>= 1)
		if (fcntl(p[1], F_SETPIPE_SZ, sz) >= 0)
			break;
#endif
	int64_t off = (int64_t)session_now(CLOCK_REALTIME) - (int64_t)session_now(CLOCK_MONOTONIC);
	s->rt_off = off;
	s->lines = linesrc_new(s->dec, off);
	return s->lines ? 0 : -ENOMEM;
}

static int session_add_sink(void *dec, struct span_sink sink)
{
	return decoder_add_sink(dec, sink);
}

static int session_spans_setup(struct session *s, char **cause)
{
	int p[2];
	struct spanclock clk;
	bool tsc = spanclock_init(&clk);

	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
		return session_fail(cause, errno, "cannot create the span %s", "pipe");
	s->pipe_r = p[0];
	s->pipe_w = p[1];
#if HAVE_DECL_F_SETPIPE_SZ
	/* A deep pipe lets the target write without waiting on the reader. */
	for (int sz = 1 << 20; sz >= 65536; sz >>= 1)
		if (fcntl(p[1], F_SETPIPE_SZ, sz) >= 0)
			break;
#endif
	s->buf = malloc(SESSION_READ_BUF);
	s->dec = decoder_new(tsc ? &clk : NULL);
	if (!s->buf || !s->dec)
		return session_fail(cause, ENOMEM, "cannot collect %s", "spans");
	int r = session_metrics(s, cause);
	if (r < 0)
		return r;
	/* which values the target's processes must say they carry (a program
	 * may run another with other values, as many: they are not ours) */
	s->values_layout = s->values_spec ? spanstat_values_id(s->values_spec) : 0;
	struct decoder_values dv = {.n = s->metrics.n,
				    .first_target = s->metrics.first_target,
				    .off_cpu = s->metrics.off_cpu,
				    .off_cpu_at = session_off_cpu_at,
				    .ctx = s,
				    .end_at = session_end_at,
				    .unvalued = session_unvalued,
				    .layout = s->values_layout};
	r = s->an->init(s->an->ctx, true, s->metrics.n);
	s->have_an = true;
	if (r == -ENOMEM)
		return session_fail(cause, ENOMEM, "cannot collect %s", "spans");
	if (r < 0 || decoder_set_values(s->dec, &dv) < 0)
		return session_fail(cause, EINVAL, "cannot collect %s", "span values");
	if (s->an->sinks(s->an->ctx, session_add_sink, s->dec) < 0)
		return session_fail(cause, ENOMEM, "cannot collect %s", "spans");
	decoder_set_demangle(s->dec, s->o->demangle);
	decoder_set_hook(s->dec, session_hook, s);
	decoder_set_running(s->dec, session_running, s);
	/* Without a ring file (no memfd), every thread records through the pipe. */
	if (ringsrc_new(&s->rings, s->metrics.n - s->metrics.first_target) == 0) {
		ringsrc_set_tree_fn(s->rings, session_ring_tree, s);
		ringsrc_set_layout(s->rings, s->values_layout);
		/* outputs that need the events themselves stream them */
		s->agg = !s->an->streams(s->an->ctx) && !s->o->span_args;
	}
	s->head.strings = decoder_strings(s->dec);
	s->head.names = decoder_names(s->dec);
	r = session_lines_setup(s);
	if (r < 0)
		return session_fail(cause, -r, "cannot create the span %s", "line pipe");
	session_cap_setup(s, tsc ? &clk : NULL);
	r = session_env(s, tsc ? &clk : NULL);
	if (r < 0)
		return session_fail(cause, -r, "cannot collect %s", "spans");
	s->src[s->nsrc++] = (struct session_source){s->pipe_r, session_spans_read,
						    session_spans_poll_ms, session_spans_finish};
	s->src[s->nsrc++] =
		(struct session_source){s->lines_r, session_lines_read, NULL, session_lines_finish};
	return 0;
}

/* Reads every source (see session_source); *got: the bytes that came. */
static int session_sources_read(struct session *s, size_t limit, size_t *got)
{
	*got = 0;
	for (unsigned i = 0; i < s->nsrc; i++) {
		size_t n = 0;
		int r = s->src[i].read(s, limit, &n);
		*got += n;
		if (r < 0)
			return r;
	}
	return 0;
}

/* Reads what the pipe holds now (at most limit bytes) into the decoder;
 * *got says how much came. */
static int session_spans_read(struct session *s, size_t limit, size_t *got)
{
	bool empty = false;
	*got = 0;
	if (s->rings) /* what is published now uses names the pipe holds now */
		ringsrc_snapshot(s->rings);
	/* every switch before the events about to be read is known */
	if (s->off && offcpu_drain(s->off) < 0)
		return -ENOMEM;
	while (*got < limit) {
		ssize_t n = read(s->pipe_r, s->buf, SESSION_READ_BUF);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			empty = n == 0 || errno == EAGAIN;
			break;
		}
		*got += (size_t)n;
		if (decoder_feed(s->dec, s->buf, (size_t)n) < 0 || s->hook_err < 0)
			return -ENOMEM;
	}
	if (s->rings && empty && ringsrc_drain_live(s->rings, session_ring_record, s) < 0)
		return -ENOMEM;
	return 0;
}

/* The binary transport's idle timeout: rings in use must be drained even
 * when their threads go quiet before half filling them. */
static int session_spans_poll_ms(struct session *s)
{
	return s->rings && ringsrc_active(s->rings) ? SESSION_RING_POLL_MS : -1;
}

/* The end of the binary stream: processes that never said EXIT (SIGKILL)
 * left all they wrote in their rings; their threads ended as the kernel
 * told, as the decoder ends them. */
static int session_spans_finish(struct session *s)
{
	s->finishing = true;
	s->finish_ns = session_now(CLOCK_MONOTONIC);
	if (s->cap)
		rawcap_put_u64s(&s->capb, RAW_FINISHAT, &s->finish_ns, 1);
	s->gone = GONE_KERNEL;
	int r = s->rings ? ringsrc_drain_gone(s->rings, 0, 0, session_ring_record, s) : 0;
	s->gone = GONE_LIVE;
	return r < 0 ? -ENOMEM : 0;
}

static int session_interval(struct session *s, struct counters *cs, unsigned run, uint64_t start,
			    uint64_t *last)
{
	const struct evlist *evl = s->o->evl;
	struct count *c = calloc(evl->n ? evl->n : 1, sizeof *c);
	if (!c)
		return -ENOMEM;
	const struct aggr *ag = run_head_aggregated(&s->head) ? s->head.aggr : NULL;
	struct count *u = ag ? calloc(ag->n * (evl->n ? evl->n : 1), sizeof *u) : NULL;
	if (ag && !u) {
		free(c);
		return -ENOMEM;
	}
	uint64_t now = session_now(CLOCK_MONOTONIC);
	int r = ag ? counters_delta_units(cs, c, ag->unit_of, ag->n, u) : counters_delta(cs, c);
	counters_tools(evl, c, now - *last, 0, 0); /* rusage comes only at the end, as in perf */
	if (ag)
		counters_tools_units(evl, c, u, ag->n);
	struct interval_sample smp = {run, now - start, now, now - *last, c, u};
	*last = now;
	session_cap_flush(s);
	if (r == 0)
		r = s->an->interval(s->an->ctx, &smp);
	free(c);
	free(u);
	return r;
}

static void session_rusage(struct rusage_info *ri, const struct rusage *ru, uint64_t elapsed)
{
	ri->elapsed_ns = elapsed;
	ri->utime_ns = (uint64_t)ru->ru_utime.tv_sec * 1000000000u +
		       (uint64_t)ru->ru_utime.tv_usec * 1000u;
	ri->stime_ns = (uint64_t)ru->ru_stime.tv_sec * 1000000000u +
		       (uint64_t)ru->ru_stime.tv_usec * 1000u;
	ri->maxrss_kb = ru->ru_maxrss;
	ri->minflt = ru->ru_minflt;
	ri->majflt = ru->ru_majflt;
	ri->nvcsw = ru->ru_nvcsw;
	ri->nivcsw = ru->ru_nivcsw;
}

/* Whether si is the SIGUSR2 of --keep-last: then the consumer writes a
 * snapshot, and the signal goes no further. */
static bool session_snapshot(struct session *s, const struct signalfd_siginfo *si)
{
	if (!s->o->snapshot_usr2 || si->ssi_signo != SIGUSR2 ||
	    !sigrelay_foreign((int)si->ssi_signo, si->ssi_code, (pid_t)si->ssi_pid))
		return false;
	/* what the target sent so far is in it: the sources are read first
	 * (a failure to read shows at the run's end, when they are read again) */
	size_t got;
	if (s->nsrc)
		session_sources_read(s, SESSION_DRAIN_MAX, &got);
	session_cap_flush(s);
	if (s->o->consumer->snapshot)
		s->o->consumer->snapshot(s->o->consumer->ctx);
	return true;
}

/* The first foreign signal pending while no target runs, or 0; takes them
 * all. */
static int session_pending(struct session *s)
{
	struct signalfd_siginfo si;
	int first = 0;
	bool snapped = false;
	while (read(s->sfd, &si, sizeof si) == (ssize_t)sizeof si) {
		/* no target runs: a SIGUSR2 that came while the snapshot was
		 * written has it all already (one per call, or a stream of
		 * them would hold the next run back for ever) */
		if (snapped && si.ssi_signo == SIGUSR2 && s->o->snapshot_usr2)
			continue;
		if (session_snapshot(s, &si)) {
			snapped = true;
			continue;
		}
		if (!first && sigrelay_foreign((int)si.ssi_signo, si.ssi_code, (pid_t)si.ssi_pid))
			first = (int)si.ssi_signo;
	}
	return first;
}

/* fmt ("cannot start '%s'") with the command, or "cannot count TARGET"
 * for tasks attached to. */
static int session_target_fail(struct session *s, char **cause, int err, const char *fmt)
{
	const struct session_opts *o = s->o;
	if (o->attach)
		return session_fail(cause, err, "cannot count %s", o->attach->what);
	return session_fail(cause, err, fmt, o->argv[0]);
}

/* A timerfd that fires after ms milliseconds, then every `every` ms (0:
 * once); -1 when none could be made. */
static int session_timer(unsigned ms, unsigned every)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	struct itimerspec it = {{every / 1000, (long)(every % 1000) * 1000000},
				{ms / 1000, (long)(ms % 1000) * 1000000}};
	if (fd >= 0 && ms == 0)
		it.it_value.tv_nsec = 1; /* 0 would disarm it */
	if (fd >= 0 && timerfd_settime(fd, 0, &it, NULL) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* --pre or --post (which) with its command: 0 when it exited 0; else
 * -ECANCELED with *cause, and the signal that killed it in *signo. */
static int session_hook_cmd(const char *which, const char *cmd, int *signo, char **cause)
{
	int ws = 0, r = launch_shell(cmd, &ws);
	*signo = 0;
	if (r < 0)
		return cause_set(cause, r, "cannot run --%s '%s': %s", which, cmd, strerror(-r));
	if (WIFEXITED(ws) && WEXITSTATUS(ws) == 0)
		return 0;
	if (WIFSIGNALED(ws)) {
		*signo = WTERMSIG(ws);
		return cause_set(cause, -ECANCELED, "--%s '%s' failed: killed by signal %d (%s)",
				 which, cmd, *signo, strsignal(*signo));
	}
	return cause_set(cause, -ECANCELED, "--%s '%s' failed: exit status %d", which, cmd,
			 WEXITSTATUS(ws));
}

/* One run of the target: a command spanstat spawns, counted with what it
 * starts and its spans, or the tasks or CPUs attached to (target.h). */
static int session_one(struct session *s, unsigned run, char **cause)
{
	const struct session_opts *o = s->o;
	struct run_result *rr = &s->run[run];
	rr->index = run;
	struct target t;
	struct counters cs;
	int r;

	/* --pre: before anything of the run exists, so its time is not counted */
	if (o->pre && (r = session_hook_cmd("pre", o->pre, &s->hook_sig, cause)) < 0)
		return r;
	if (o->attach)
		r = target_attach(&t, o->attach, o->argc ? o->argv : NULL);
	else
		r = target_spawn(&t, o->argv, o->spans ? s->envp : environ,
				 o->spans ? s->pipe_w : -1);
	if (r < 0)
		return session_target_fail(s, cause, -r, "cannot start '%s'");
	t.delayed = o->delay_ms > 0;
	r = t.ops->open(&t, &cs, o->evl, cause);
	if (r < 0) {
		t.ops->close(&t);
		return r;
	}
	/* switches for the off-CPU times; without them (--no-off-cpu), still
	 * when threads end, for the spans they leave open.  What earlier runs'
	 * events told stays, for their spans the stream's end closes
	 * (session_spans_finish); processes they left are followed no more. */
	bool switches = s->metrics.off_cpu >= 0;
	if (o->spans && (s->off ? offcpu_follow(s->off, t.pid, switches, NULL)
				: offcpu_open(&s->off, t.pid, switches, NULL)) < 0) {
		/* refused after the probe worked: no off-CPU times */
		if (run == 0 && switches)
			s->metrics.m[s->metrics.off_cpu].supported = false;
	}
	if (s->cap && s->off)
		offcpu_set_tap(s->off, session_tap_off, s);
	rr->counts = calloc(o->evl->n ? o->evl->n : 1, sizeof *rr->counts);
	const struct aggr *ag = run_head_aggregated(&s->head) ? s->head.aggr : NULL;
	if (ag)
		rr->units = calloc(ag->n * (o->evl->n ? o->evl->n : 1), sizeof *rr->units);
	if (!rr->counts || (ag && !rr->units)) {
		counters_close(&cs);
		t.ops->close(&t);
		return session_target_fail(s, cause, ENOMEM, "cannot run '%s'");
	}
	/* A signal that came before the target exists ends spanstat instead:
	 * the held child never runs the command. */
	s->signo = session_pending(s);
	if (s->signo) {
		counters_close(&cs);
		t.ops->close(&t);
		return 0;
	}
	uint64_t start = session_now(CLOCK_MONOTONIC);
	if (run == 0) {
		clock_gettime(CLOCK_REALTIME, &s->head.start);
		s->head.start_mono = start;
		/* no line is about a time before the command ran */
		if (s->lines)
			linesrc_set_start(s->lines, start);
		if (s->lines && s->cap)
			rawcap_put_u64s(&s->capb, RAW_LSTART, &start, 1);
	}
	session_cap_flush(s);
	s->an->run(s->an->ctx, run); /* the threads that start now are this run's */
	r = t.ops->go(&t);
	if (r < 0) {
		counters_close(&cs);
		t.ops->close(&t);
		if (!t.argv) /* attached, watching failed */
			return session_target_fail(s, cause, -r, NULL);
		s->exec_errno = -r;
		return session_fail(cause, -r, "cannot run '%s'", t.argv[0]);
	}
	/* The count begins now, or after --delay (then -I and --timeout
	 * too): cstart is when, for the elapsed time and the intervals. */
	int tfd = -1, dfd = -1, xfd = -1;
	bool counting = false, timed_out = false;
	unsigned intervals = 0;
	uint64_t cstart = start;
	if (o->delay_ms)
		dfd = session_timer(o->delay_ms, 0);
	if (o->delay_ms && dfd < 0)
		r = -errno; /* said once the run is over */
	uint64_t last = start, end = start;
	struct target_end te;
	memset(&te, 0, sizeof te);
	bool streaming = false;
	for (bool done = false; !done;) {
		if (!counting && (dfd < 0 || r < 0)) { /* no delay, or it has passed */
			counting = true;
			/* without a delay the count began with go(), before the
			 * exec: start stays, or the exec's time is in no elapsed */
			if (o->delay_ms) {
				counters_enable(&cs);
				cstart = last = session_now(CLOCK_MONOTONIC);
			}
			if (o->interval_ms)
				tfd = session_timer(o->interval_ms, o->interval_ms);
			if (o->timeout_ms)
				xfd = session_timer(o->timeout_ms, 0);
		}
		struct pollfd pfd[4 + SESSION_MAX_SOURCES + SESSION_MAX_WATCH] = {
			{s->sfd, POLLIN, 0}, {tfd, POLLIN, 0}, {dfd, POLLIN, 0}, {xfd, POLLIN, 0}};
		int timeout = 1000;
		for (unsigned i = 0; i < s->nsrc; i++) {
			pfd[4 + i] = (struct pollfd){s->src[i].fd, POLLIN, 0};
			int ms = s->src[i].poll_ms ? s->src[i].poll_ms(s) : -1;
			if (ms >= 0 && ms < timeout)
				timeout = ms;
		}
		struct pollfd *tp = pfd + 4 + s->nsrc;
		size_t nt = t.ops->fds(&t, tp, SESSION_MAX_WATCH);
		/* While spans stream in, doze between bulk reads instead of
		 * blocking in poll: a reader asleep in poll must be woken by
		 * every 4 KiB record the target writes, which costs both sides
		 * a context switch; a dozing one costs the writer nothing.
		 * SIGCHLD can be missed only if it merged with an earlier one:
		 * wake up now and then to look anyway. */
		if (streaming)
			timeout = 0;
		if (poll(pfd, 4 + s->nsrc + nt, timeout) < 0 && errno != EINTR) {
			r = -errno;
			break;
		}
		streaming = false;
		if (s->nsrc) {
			size_t got;
			if (session_sources_read(s, SESSION_READ_BUF * 4, &got) < 0)
				r = -ENOMEM;
			if (got >= SESSION_STREAMING) {
				streaming = true;
				nanosleep(&(struct timespec){0, SESSION_DOZE_NS}, NULL);
			}
		}
		uint64_t exp;
		if (pfd[2].revents && read(dfd, &exp, sizeof exp) == (ssize_t)sizeof exp) {
			close(dfd); /* the delay is over: counting starts above */
			dfd = -1;
		}
		if (pfd[1].revents) {
			if (read(tfd, &exp, sizeof exp) == (ssize_t)sizeof exp && r == 0)
				r = session_interval(s, &cs, run, cstart, &last);
			/* --interval-count: no more intervals; as perf, a command
			 * runs on to its end, an attached count without one ends */
			if (o->interval_count && ++intervals >= o->interval_count) {
				close(tfd);
				tfd = -1;
				if (t.pid <= 0)
					done = true;
			}
		}
		if (pfd[3].revents && read(xfd, &exp, sizeof exp) == (ssize_t)sizeof exp) {
			/* --timeout: as perf, SIGTERM to the command, whose end
			 * ends the run; without one the count ends now */
			close(xfd);
			xfd = -1;
			timed_out = true;
			if (t.pid > 0)
				kill(t.pid, SIGTERM);
			else
				done = true;
		}
		/* Signals are read before the end is looked for, so one that
		 * comes after the target ended stays pending: sigrelay_take()
		 * finds it later. */
		/* After a snapshot the end is looked for before any more
		 * signals are read: a SIGUSR2 that comes while a snapshot is
		 * written is pending again when it is done, and signalfd gives
		 * it before SIGCHLD, so SIGUSR2 sent faster than snapshots are
		 * written would keep spanstat from ever seeing the end.  The
		 * next pass takes what is pending. */
		struct signalfd_siginfo si;
		while (read(s->sfd, &si, sizeof si) == (ssize_t)sizeof si) {
			if (!sigrelay_foreign((int)si.ssi_signo, si.ssi_code, (pid_t)si.ssi_pid))
				continue;
			if (session_snapshot(s, &si))
				break;
			s->interrupted = true;
			done |= t.ops->signal(&t, &si) == TARGET_SIGNAL_STOP;
		}
		done |= t.ops->ended(&t, tp, nt, &te);
		if (done)
			end = session_now(CLOCK_MONOTONIC);
	}
	if (dfd >= 0)
		close(dfd);
	if (xfd >= 0)
		close(xfd);
	if (!counting) /* it ended before the delay was over: nothing counted */
		cstart = end;
	t.ops->stop(&t);
	size_t drained;
	if (r == 0)
		r = session_sources_read(s, SESSION_DRAIN_MAX, &drained);
	if (tfd >= 0) {
		if (r == 0 && end > last)
			r = session_interval(s, &cs, run, cstart, &last);
		close(tfd);
	}
	if (r == 0)
		r = ag ? counters_read_units(&cs, rr->counts, ag->unit_of, ag->n, rr->units)
		       : counters_read(&cs, rr->counts);
	counters_close(&cs);
	t.ops->close(&t);
	if (!te.rusage_known)
		memset(&te.ru, 0, sizeof te.ru);
	session_rusage(&rr->ru, &te.ru, end - cstart);
	rr->wall_ns = end - start;
	if (r == 0)
		counters_tools(s->o->evl, rr->counts, rr->ru.elapsed_ns, rr->ru.utime_ns,
			       rr->ru.stime_ns);
	if (r == 0 && ag)
		counters_tools_units(s->o->evl, rr->counts, rr->units, ag->n);
	rr->wstatus = te.wstatus;
	rr->exit_code = !te.has_status		  ? 0
			: WIFSIGNALED(te.wstatus) ? SESSION_EXIT_SIGNAL + WTERMSIG(te.wstatus)
						  : WEXITSTATUS(te.wstatus);
	/* the end --timeout asked for is no failure: perf stat exits 0 */
	if (timed_out && te.has_status && WIFSIGNALED(te.wstatus) &&
	    WTERMSIG(te.wstatus) == SIGTERM)
		rr->exit_code = 0;
	s->nruns = run + 1;
	if (r < 0)
		return session_target_fail(s, cause, -r, "cannot measure '%s'");
	if (o->post)
		return session_hook_cmd("post", o->post, &s->hook_sig, cause);
	return 0;
}

static void session_release(struct session *s)
{
	u64map_release(&s->running);
	if (s->sfd >= 0) {
		close(s->sfd);
		sigrelay_unblock(&s->sr);
	}
	if (s->pipe_r >= 0)
		close(s->pipe_r);
	if (s->pipe_w >= 0)
		close(s->pipe_w);
	if (s->lines_r >= 0)
		close(s->lines_r);
	if (s->lines_w >= 0)
		close(s->lines_w);
	linesrc_free(s->lines);
	if (s->run)
		for (unsigned k = 0; k < s->o->runs; k++) {
			free(s->run[k].counts);
			free(s->run[k].units);
		}
	free(s->run);
	free(s->buf);
	if (s->dec)
		decoder_free(s->dec);
	ringsrc_free(s->rings);
	if (s->off)
		offcpu_close(s->off);
	free(s->values_spec);
	if (s->have_an)
		s->an->release(s->an->ctx);
	session_env_free(s);
	free(s->exe);
	free(s->build_id);
	rawcap_release(&s->capb);
	free(s->capstate);
}

int session_run(const struct session_opts *o, int *exit_code, char **cause)
{
	struct session s;
	sigset_t mask;
	char name[16];
	int r;

	memset(&s, 0, sizeof s);
	s.o = o;
	s.an = o->consumer;
	s.sfd = s.pipe_r = s.pipe_w = s.lines_r = s.lines_w = -1;
	*exit_code = SESSION_EXIT_ERROR;
	*cause = NULL;
	s.head = (struct run_head){.argc = o->argc,
				   .argv = o->argv,
				   .evl = o->evl,
				   .runs = o->runs,
				   .interval_ms = o->interval_ms,
				   .interval_count = o->interval_count,
				   .delay_ms = o->delay_ms,
				   .timeout_ms = o->timeout_ms,
				   .spans = o->spans,
				   .target = o->attach ? o->attach->what : NULL,
				   .rusage_unknown = o->attach != NULL,
				   .aggr = o->aggr};
	s.run = calloc(o->runs, sizeof *s.run);
	if (!s.run)
		return session_fail(cause, ENOMEM, "cannot run '%s'", o->argc ? o->argv[0] : "");
	/* The caller should have blocked them already, before creating any
	 * output; if it did, the saved mask keeps them blocked afterwards. */
	r = sigrelay_block(&s.sr);
	if (r < 0) {
		r = session_fail(cause, -r, "cannot block %s", "signals");
		goto out;
	}
	mask = s.sr.set;
	sigaddset(&mask, SIGCHLD);
	if (o->snapshot_usr2) { /* a snapshot's, even when it was ignored at start */
		sigset_t u;
		sigemptyset(&u);
		sigaddset(&u, SIGUSR2);
		sigaddset(&mask, SIGUSR2);
		sigprocmask(SIG_BLOCK, &u, NULL);
	}
	s.sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (s.sfd < 0) {
		r = session_fail(cause, errno, "cannot watch %s", "signals");
		sigrelay_unblock(&s.sr);
		goto out;
	}
	if (o->spans && (r = session_spans_setup(&s, cause)) < 0)
		goto out;
	if (!o->spans) {
		r = s.an->init(s.an->ctx, false, 0);
		s.have_an = true;
		if (r < 0) {
			r = session_fail(cause, -r, "cannot write %s", "the results");
			goto out;
		}
	}
	/* the program every run starts, as the head names it to the outputs
	 * (pprof's main mapping): unknown when it cannot be found, which the
	 * first run then reports */
	if (!o->attach && o->argc && launch_exe(o->argv[0], &s.exe, &s.build_id) == 0) {
		s.head.exe = s.exe;
		s.head.build_id = s.build_id;
	}
	clock_gettime(CLOCK_REALTIME, &s.head.start);
	s.head.start_mono = session_now(CLOCK_MONOTONIC);
	run_clocks_now(&s.head.clocks);
	r = s.an->start(s.an->ctx, &s.head);
	if (r < 0) {
		r = session_fail(cause, -r, "cannot write %s", "the results");
		goto out;
	}
	for (unsigned k = 0; k < o->runs && !s.interrupted && !s.signo; k++) {
		r = session_one(&s, k, cause);
		if (r < 0) {
			if (s.exec_errno)
				*exit_code = s.exec_errno == ENOENT ? SESSION_EXIT_NOT_FOUND
								    : SESSION_EXIT_CANNOT_RUN;
			if (s.hook_sig) /* --pre or --post killed, as by a terminal's ^C */
				*exit_code = SESSION_EXIT_SIGNAL + s.hook_sig;
			goto out;
		}
	}
	if (s.signo && s.nruns == 0) {
		*exit_code = SESSION_EXIT_SIGNAL + s.signo;
		r = cause_set(cause, -EINTR, "cannot run '%s': interrupted by SIG%s", o->argv[0],
			      sigrelay_name(s.signo, name, sizeof name));
		goto out;
	}
	for (unsigned i = 0; i < s.nsrc; i++)
		if (s.src[i].finish)
			s.src[i].finish(&s);
	if (s.dec) {
		decoder_finish(s.dec);
		/* the target's processes are gone: what came after their exit
		 * paths is all counted (unknown without the ring file) */
		decoder_set_late(s.dec, s.rings ? ringsrc_late(s.rings) : DECODE_UNKNOWN);
		if (s.cap) {
			uint64_t v[3] = {0, 0, decoder_stats(s.dec)->late};
			decoder_frame_counts(s.dec, &v[0], &v[1]);
			rawcap_put_u64s(&s.capb, RAW_FINISH, v, 3);
		}
	}
	session_offcpu_check(&s);
	session_cap_flush(&s);
	if (s.cap && s.hook_err < 0) {
		r = session_fail(cause, -s.hook_err, "cannot write %s", "the results");
		goto out;
	}
	const char *failed = NULL;
	int failed_err = 0;
	struct run_end end = {.run = s.run,
			      .nruns = s.nruns,
			      .dstats = s.dec ? decoder_stats(s.dec) : NULL,
			      .event_cost_ns = s.dec ? decoder_event_cost_ns(s.dec) : 0,
			      .compensate = o->compensate};
	r = s.an->finish(s.an->ctx, &end, &failed, &failed_err);
	if (failed)
		session_fail(cause, -failed_err, "cannot write the %s output", failed);
	int last = s.nruns ? s.run[s.nruns - 1].exit_code : 0; /* as the report has it */
	if (r < 0)
		r = session_fail(cause, -r, "cannot write %s", "the results");
	else
		*exit_code = s.signo	       ? SESSION_EXIT_SIGNAL + s.signo
			     : last || !failed ? last
					       : SESSION_EXIT_ERROR;
out:
	session_release(&s);
	return r;
}
