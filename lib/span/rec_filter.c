/* rec_filter.c: the filters inside the recording paths (rec.h, filter.h):
 * what --filter and --exclude say of a span, and the begins --min-duration
 * holds back, sent once a span inside them or their own end shows they are
 * kept.  rec_event.c decides per event; this file sends. */
#include "config.h"

#include "rec.h"

/* What --filter and --exclude say of key (by its name or its category),
 * cached per thread: a category declared after a thread met the name does
 * not change what the thread decided.  Deciding for a function reads its
 * object's symbol table and demangles its name, allocating: that is the
 * recorder's own work, never counted in the span the program is in
 * (--span-allocs), which is why it runs quiet. */
static REC_NOI unsigned rec_classify(struct rec_thread *t, uint64_t key)
{
	if (!rec_filter.nfilter && !rec_filter.nexclude)
		return 0;
	struct rec_fcentry *c = &t->fcache[rec_hash(key)];
	if (c->key == key)
		return c->cls;
	const char *name = (const char *)(uintptr_t)key;
	void (*quiet)(int) = rec_alloc_quiet;
	if (quiet)
		quiet(1);
	unsigned cls = key & REC_CODE_TAG
			       ? recf_classify_code_cat(
					 &rec_filter, (uintptr_t)(key & ~REC_CODE_TAG), rec_cat_of)
			       : recf_classify_name(&rec_filter, name) |
					 recf_classify_cat(&rec_filter, rec_cat_of(name));
	if (quiet)
		quiet(-1);
	c->key = key;
	c->cls = cls;
	return cls;
}

/* Sends the begin of open span i, held back until now (--min-duration), as
 * of its own begin: its time, values and (aggregating) switch mark. */
static REC_NOI void rec_filter_late_begin(struct rec_thread *t, unsigned i)
{
	uint32_t depth = t->adepth;
	rec_emit(t, t->stk[i], REC_OP(WIRE_OP_BEGIN), t->fts[i], 0, 0, t->fval[i]);
	if (t->agg && t->adepth == depth + 1) /* its frame: pushed, not refused */
		t->aframe[depth].lock = t->fmark[i];
}

/* Sends the begins of the open spans below depth `upto` that wait for their
 * duration (--min-duration) to be known: one inside them is being sent. */
REC_NOI void rec_filter_flush(struct rec_thread *t, unsigned upto)
{
	if (upto > REC_STACK)
		upto = REC_STACK;
	for (unsigned i = t->fdone; i < upto; i++)
		if ((t->ffl[i] & (REC_F_PENDING | REC_F_SENT)) == REC_F_PENDING) {
			rec_filter_late_begin(t, i);
			t->ffl[i] |= REC_F_SENT;
		}
	if (upto > t->fdone)
		t->fdone = upto;
}

/* The thread or its process ends (exit, _exit, a fatal signal, the
 * thread's end, an exec) with spans open: the begins --min-duration holds
 * back of those that have lasted it by now are sent, from their own
 * begins, so that spanstat closes them there as unfinished as it closes any
 * span left open; shorter ones stay out.  Caller holds t->busy. */
REC_NOI void rec_filter_settle(struct rec_thread *t, uint64_t now)
{
	if (!rec_filter.min_dur)
		return;
	unsigned n = t->depth < REC_STACK ? t->depth : REC_STACK, upto = 0;
	for (unsigned i = t->fdone; i < n; i++)
		if ((t->ffl[i] & (REC_F_PENDING | REC_F_SENT)) == REC_F_PENDING &&
		    (int64_t)(now - t->fts[i]) >= 0 && now - t->fts[i] >= rec_filter.min_dur)
			upto = i + 1;
	if (upto)
		rec_filter_flush(t, upto);
}

/* The filter flags (REC_F_*) a span beginning at depth d with key gets. */
REC_NOI unsigned rec_filter_flags(struct rec_thread *t, unsigned d, uint64_t key)
{
	unsigned pf = d ? t->ffl[d - 1] : REC_F_ROOT;
	unsigned cls = rec_classify(t, key);
	unsigned fl = 0;
	if ((pf & REC_F_INSIDE) || (cls & RECF_FILTER) || !rec_filter.nfilter)
		fl |= REC_F_INSIDE;
	if ((pf & REC_F_BLOCKED) || (cls & RECF_EXCLUDE))
		fl |= REC_F_BLOCKED;
	if ((fl & REC_F_INSIDE) && !(fl & REC_F_BLOCKED) &&
	    (!rec_filter.max_depth || d < rec_filter.max_depth))
		fl |= REC_F_SEND;
	return fl;
}

/* A span the filters let through begins at depth d (already pushed): sent
 * now, or later if it lasts --min-duration.  Caller holds t->busy. */
REC_NOI void rec_filter_begin(struct rec_thread *t, unsigned d, uint64_t now)
{
	t->fts[d] = now;
	t->fmark[d] = *t->swmark + t->swflip;
	if (rec_nvals)
		recv_read(&rec_vspec, &t->vt, t->fval[d]);
	if (rec_filter.min_dur) {
		t->ffl[d] |= REC_F_PENDING;
	} else {
		rec_filter_flush(t, d);
		rec_emit(t, t->stk[d], REC_OP(WIRE_OP_BEGIN), now, 0, 0, t->fval[d]);
		t->ffl[d] |= REC_F_SENT;
	}
}

/* The innermost open span ends under the filters.  Caller holds t->busy. */
REC_NOI void rec_filter_end(struct rec_thread *t, uint64_t now)
{
	if (!t->depth)
		return; /* an end without a begin: nothing was sent for it */
	unsigned d = --t->depth;
	if (t->fdone > d)
		t->fdone = d;
	if (d >= REC_STACK)
		return;
	uint8_t fl = t->ffl[d];
	if (fl & REC_F_SENT) {
		rec_emit(t, t->stk[d], REC_OP(WIRE_OP_END), now, 0, 0, NULL);
	} else if ((fl & REC_F_PENDING) && now - t->fts[d] >= rec_filter.min_dur) {
		rec_filter_flush(t, d);
		rec_filter_late_begin(t, d);
		rec_emit(t, t->stk[d], REC_OP(WIRE_OP_END), now, 0, 0, NULL);
	}
}
