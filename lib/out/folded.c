/* folded.c: the folded-stacks writer (--folded), the input format of
 * flamegraph.pl and most flame graph tools.  At finish it writes one line per
 * stack path with a non-zero self time:
 *
 *     frame;frame;frame VALUE\n
 *
 * VALUE is the path's self time in nanoseconds (a decimal integer), or with
 * --weight (opts.weight, spanweight.h) its self CPU or off-CPU time or self
 * value of a span metric; paths whose VALUE is 0 are left out (they add nothing to a flame graph,
 * and their children's lines carry the path).  Lines are sorted bytewise by path. By default the
 * paths come from the tree merged over all threads; with
 * --folded-threads (opts.folded_threads) every thread's tree is written on
 * its own under two root frames, the process `PROCNAME-PID` and the thread
 * `THREADNAME-PID/TID` (the thread name defaults to the process name; a
 * missing process name is "process").
 *
 * Frames are names as the span names view shows them (spannames.h:
 * demangled function names).  Escaping, so that the grammar always holds (a
 * frame never contains ';' or a control character, and is never empty): the
 * bytes ';' '%', 0x00-0x1f and 0x7f are written as '%' and two upper-case hex
 * digits (percent-encoding, reversible); every other byte, spaces and UTF-8
 * included, is written as is.  Spaces stay readable ("(anonymous
 * namespace)::f", "operator delete"): flamegraph.pl, inferno and speedscope
 * split each line at its LAST space, so only VALUE follows it.  An empty
 * name is written as "%00".
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "spannames.h"
#include "spantree.h"
#include "spanwalk.h"
#include "spanweight.h"
#include "strtab.h"
#include "writer.h"

struct folded_line {
	char *path;
	uint64_t self;
};

struct folded_out {
	char *buf; /* the current path */
	size_t len, cap;
	size_t *mark; /* buf length before each depth's frame */
	size_t base;  /* buf length of the root frames (--folded-threads) */
	size_t nmark;
	struct folded_line *line;
	size_t nline, capline;
	const struct strtab *strings;
	const struct spannames *names;
	struct spanweight weight;
};

static int folded_reserve(struct folded_out *o, size_t more)
{
	if (o->len + more + 1 <= o->cap)
		return 0;
	if (more >= SIZE_MAX - o->len)
		return -ENOMEM;
	return GROW(o->buf, o->len + more + 1, o->cap, 256);
}

static int folded_put(struct folded_out *o, const char *s, size_t n)
{
	if (folded_reserve(o, n) < 0)
		return -ENOMEM;
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = '\0';
	return 0;
}

/* Appends name as one escaped frame. */
static int folded_frame(struct folded_out *o, const char *name)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(name);
	if (!n)
		return folded_put(o, "%00", 3);
	if (folded_reserve(o, 3 * n) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];
		if (c == ';' || c == '%' || c < 0x20 || c == 0x7f) {
			o->buf[o->len++] = '%';
			o->buf[o->len++] = hex[c >> 4];
			o->buf[o->len++] = hex[c & 15];
		} else {
			o->buf[o->len++] = (char)c;
		}
	}
	o->buf[o->len] = '\0';
	return 0;
}

static const char *folded_name(const struct folded_out *o, uint32_t id)
{
	return spannames_text(o->names, o->strings, id);
}

static int folded_add_line(struct folded_out *o, uint64_t self)
{
	if (GROW(o->line, o->nline + 1, o->capline, 64) < 0)
		return -ENOMEM;
	char *path = strdup(o->buf);
	if (!path)
		return -ENOMEM;
	o->line[o->nline].path = path;
	o->line[o->nline].self = self;
	o->nline++;
	return 0;
}

/* One node of the walk: its path is its parent's (cut back to the mark of
 * its depth) and its frame; a line when its value is not 0. */
static int folded_visit(void *ctx, const struct span_tree *t, uint32_t i, uint32_t d)
{
	struct folded_out *o = ctx;
	if (GROW(o->mark, (size_t)d + 2, o->nmark, 64) < 0)
		return -ENOMEM;
	o->len = d ? o->mark[d] : o->base;
	if (o->buf)
		o->buf[o->len] = '\0';
	if (o->len && folded_put(o, ";", 1) < 0)
		return -ENOMEM;
	if (folded_frame(o, folded_name(o, t->node[i].name)) < 0)
		return -ENOMEM;
	o->mark[d + 1] = o->len;
	uint64_t self = spanweight_self(&o->weight, t, i);
	return self ? folded_add_line(o, self) : 0;
}

/* Adds a line for every node of t with a value, under the path already in
 * o->buf (o->len bytes: empty, or root frames). */
static int folded_tree(struct folded_out *o, const struct span_tree *t)
{
	o->base = o->len;
	int err = spanwalk(t, folded_visit, o);
	o->len = o->base;
	if (o->buf)
		o->buf[o->base] = '\0';
	return err;
}

static int folded_thread_roots(struct folded_out *o, const struct span_tree *t)
{
	const char *proc = folded_name(o, t->process_name);
	const char *thread = t->thread_name ? folded_name(o, t->thread_name) : NULL;
	char *p = spanwalk_root_name(proc, NULL, t->pid, 0);
	char *th = spanwalk_root_name(proc, thread, t->pid, t->tid);
	o->len = 0;
	int err = !p || !th || folded_frame(o, p) < 0 || folded_put(o, ";", 1) < 0 ||
				  folded_frame(o, th) < 0
			  ? -ENOMEM
			  : 0;
	free(p);
	free(th);
	return err;
}

static int folded_cmp(const void *a, const void *b)
{
	const struct folded_line *x = a, *y = b;
	return strcmp(x->path, y->path);
}

static int folded_finish(struct writer *w, const struct report *r)
{
	const struct span_trees *st = r ? r->spans : NULL;
	if (!st)
		return 0;
	struct folded_out o = {0};
	const struct run_head *h = r->head ? r->head : w->head;
	o.strings = h ? h->strings : NULL;
	o.names = h ? h->names : NULL;
	int err = w->opts.weight_err;
	if (err)
		return err;
	o.weight = w->opts.weight_by;
	if (w->opts.folded_threads) {
		for (size_t k = 0; k < st->nthread && !err; k++) {
			err = folded_thread_roots(&o, st->thread[k]);
			if (!err)
				err = folded_tree(&o, st->thread[k]);
		}
	} else {
		struct span_tree scratch;
		const struct span_tree *merged = report_merged(r, &scratch, &err);
		if (merged)
			err = folded_tree(&o, merged);
		span_tree_release(&scratch);
	}
	if (!err) {
		if (o.nline)
			qsort(o.line, o.nline, sizeof *o.line, folded_cmp);
		for (size_t i = 0; i < o.nline; i++)
			fprintf(w->fp, "%s %" PRIu64 "\n", o.line[i].path, o.line[i].self);
		if (fflush(w->fp) != 0 || ferror(w->fp))
			err = -EIO;
	}
	for (size_t i = 0; i < o.nline; i++)
		free(o.line[i].path);
	free(o.line);
	free(o.buf);
	free(o.mark);
	return err;
}

const struct writer_ops folded_writer_ops = {
	.name = "folded",
	.finish = folded_finish,
};
