/*
 * kineto_waits.c - the Kineto reader's recorded stream waits: each
 * cuda_sync "Stream Wait Event" paired with the two ops it links (the op
 * waited for, the op that waits), by the event record the profiler names
 * or, where it left them -1 (CUPTI 13 without cudaEventRecord's records),
 * by host order on the waiting call's thread (docs/formats.md, Kineto).
 */
#include "ingest/kineto_waits.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "ingest/ingest.h"
#include "timeline/timeline.h"

/* A device op by launch (what record_waits searches) and a wait paired up,
 * each op by its correlation id and start (what survives trace_finish). */
struct wop { int64_t corr, start, launch, tid; int32_t stream; };
struct wpair { int64_t op_corr, op_start, to_corr, to_start; };
struct wlaunch { int64_t corr, start, tid; };

static int cmp_wlaunch(const void *a, const void *b)
{
	const struct wlaunch *x = a, *y = b;
	return (x->corr > y->corr) - (x->corr < y->corr);
}

static int cmp_wop(const void *a, const void *b)
{
	const struct wop *x = a, *y = b;
	if (x->stream != y->stream)
		return (x->stream > y->stream) - (x->stream < y->stream);
	if (x->launch != y->launch)
		return (x->launch > y->launch) - (x->launch < y->launch);
	return (x->start > y->start) - (x->start < y->start);
}

/* The host call of correlation c, NULL if none. */
static const struct wlaunch *wl_call(const struct wlaunch *l, size_t n, int64_t c)
{
	struct wlaunch k = { c, 0, 0 };
	return bsearch(&k, l, n, sizeof(*l), cmp_wlaunch);
}

/* The start of the host call of correlation c, INT64_MIN if none. */
static int64_t wl_find(const struct wlaunch *l, size_t n, int64_t c)
{
	const struct wlaunch *f = wl_call(l, n, c);
	return f ? f->start : INT64_MIN;
}

static int cmp_wop_launch(const void *a, const void *b)
{
	const struct wop *x = *(const struct wop *const *)a, *y = *(const struct wop *const *)b;
	return (x->launch > y->launch) - (x->launch < y->launch);
}

/* A wait the profiler left unresolved (on_stream and rec_corr -1: CUPTI 13
 * without cudaEventRecord's own records), paired by host order: its
 * cudaStreamWaitEvent call w (start wt, thread tid), the last
 * cudaEventRecord call of that thread before it, and the last device op
 * that thread launched before the record, on another stream: the op the
 * event was recorded after (torch's Event.record, c10d's stream sync: the
 * work, then the record, then the wait, on one thread).  The op in *to
 * (an index into v), 0 when none. */
static int cmp_krec(const void *a, const void *b)
{
	const struct krec *x = a, *y = b;
	if (x->tid != y->tid)
		return (x->tid > y->tid) - (x->tid < y->tid);
	return (x->start > y->start) - (x->start < y->start);
}

static int unresolved_wait(const struct krec *recs, size_t nrec, const struct wop *const *byl, size_t n,
			   int64_t stream, int64_t wt, int64_t tid, const struct wop **to)
{
	size_t lo = 0, hi = nrec; /* recs by (thread, start): the first not before (tid, wt) */
	while (lo < hi) {
		size_t m = (lo + hi) / 2;
		if (recs[m].tid < tid || (recs[m].tid == tid && recs[m].start < wt))
			lo = m + 1;
		else
			hi = m;
	}
	if (!lo || recs[lo - 1].tid != tid) /* the record call: the thread's latest before wt */
		return 0;
	const struct krec *r = &recs[lo - 1];
	size_t a = 0, b = n; /* the ops launched before the record call */
	while (a < b) {
		size_t m = (a + b) / 2;
		if (byl[m]->launch < r->start)
			a = m + 1;
		else
			b = m;
	}
	for (size_t q = a; q-- > 0 && a - q <= 4096;)
		if (byl[q]->tid == tid) {
			if (byl[q]->stream == stream)
				return 0; /* the thread's last launch is on the waiting stream: no cross-stream link */
			*to = byl[q];
			return 1;
		}
	return 0;
}

/* The first op of v[0..n) (sorted by stream, launch, start) on stream s
 * launched after t (after: 1) or at or after it (0). */
static size_t wop_bound(const struct wop *v, size_t n, int64_t s, int64_t t, int after)
{
	size_t a = 0, b = n;
	while (a < b) {
		size_t m = (a + b) / 2;
		if (v[m].stream < s || (v[m].stream == s && (after ? v[m].launch <= t : v[m].launch < t)))
			a = m + 1;
		else
			b = m;
	}
	return a;
}

/* The stream waits of timeline t (the waits whose t it is) paired with the
 * ops they link, before trace_finish (its launches are still here): the op
 * waited for is the last device op launched on the recorded event's stream
 * before the cudaEventRecord call (the wait's record correlation); the
 * waiting op the first device op launched on the waiting stream after the
 * cudaStreamWaitEvent call (the sync record's correlation, else the sync
 * record's own start).  A wait whose record call, or either op, the trace
 * lacks is left out.  Returns the pairs (*np), NULL if none. */
static struct wpair *record_waits(const struct kwait *waits, size_t nwait, const struct krec *krecs, size_t nkrec,
				  const struct trace *t, size_t *np)
{
	*np = 0;
	size_t nw = 0;
	for (size_t k = 0; k < nwait; k++)
		nw += waits[k].t == t;
	if (!nw || !t->nlaunch)
		return NULL;
	struct wlaunch *l = xmalloc(t->nlaunch * sizeof(*l));
	for (size_t k = 0; k < t->nlaunch; k++)
		l[k] = (struct wlaunch){ t->launch[k].corr, t->launch[k].start_ns, t->launch[k].tid };
	qsort(l, t->nlaunch, sizeof(*l), cmp_wlaunch);
	struct wop *v = xmalloc((t->n ? t->n : 1) * sizeof(*v));
	size_t n = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct wlaunch *f = t->hint[i] != R_SYNC && t->corr[i] >= 0 ? wl_call(l, t->nlaunch, t->corr[i]) : NULL;
		if (f)
			v[n++] = (struct wop){ t->corr[i], t->start_ns[i], f->start, f->tid, t->stream[i] };
	}
	qsort(v, n, sizeof(*v), cmp_wop);
	const struct wop **byl = NULL; /* by launch, for the waits paired by host order */
	struct krec *recs = NULL;      /* ... and the record calls by thread and start */
	struct wpair *p = xmalloc(nw * sizeof(*p));
	for (size_t k = 0; k < nwait; k++) {
		const struct kwait *w = &waits[k];
		if (w->t != t)
			continue;
		const struct wlaunch *wc = w->corr >= 0 ? wl_call(l, t->nlaunch, w->corr) : NULL;
		int64_t wt = wc ? wc->start : w->start;
		const struct wop *to = NULL;
		if (w->rec_corr < 0) { /* left unresolved by the profiler: by host order */
			if (!wc || wc->tid < 0)
				continue;
			if (!byl) {
				byl = xmalloc((n ? n : 1) * sizeof(*byl));
				for (size_t q = 0; q < n; q++)
					byl[q] = &v[q];
				qsort(byl, n, sizeof(*byl), cmp_wop_launch);
				recs = xmalloc((nkrec ? nkrec : 1) * sizeof(*recs));
				memcpy(recs, krecs, nkrec * sizeof(*recs));
				qsort(recs, nkrec, sizeof(*recs), cmp_krec);
			}
			if (!unresolved_wait(recs, nkrec, byl, n, w->stream, wt, wc->tid, &to))
				continue;
		} else {
			int64_t rec = wl_find(l, t->nlaunch, w->rec_corr);
			if (rec == INT64_MIN)
				continue;
			size_t a = wop_bound(v, n, w->on_stream, rec, 0); /* the one before: launched before the record */
			if (!a || v[a - 1].stream != w->on_stream)
				continue;
			to = &v[a - 1];
		}
		size_t b = wop_bound(v, n, w->stream, wt, 1);
		if (b == n || v[b].stream != w->stream)
			continue;
		p[(*np)++] = (struct wpair){ v[b].corr, v[b].start, to->corr, to->start };
	}
	free(byl);
	free(recs);
	free(l);
	free(v);
	return p;
}

struct wspan { int64_t corr, start; size_t i; };

static int cmp_wspan(const void *a, const void *b)
{
	const struct wspan *x = a, *y = b;
	if (x->corr != y->corr)
		return (x->corr > y->corr) - (x->corr < y->corr);
	return (x->start > y->start) - (x->start < y->start);
}

static ptrdiff_t ws_find(const struct wspan *v, size_t n, int64_t corr, int64_t start)
{
	struct wspan k = { corr, start, 0 };
	const struct wspan *f = bsearch(&k, v, n, sizeof(*v), cmp_wspan);
	return f ? (ptrdiff_t)f->i : -1;
}

/* The pairs of record_waits as t's deps (DEP_RECORD), after trace_finish
 * (ops the plausibility layer left out link nothing). */
static void add_waits(struct trace *t, const struct wpair *p, size_t np)
{
	if (!np)
		return;
	struct wspan *v = xmalloc((t->n ? t->n : 1) * sizeof(*v));
	size_t n = 0;
	for (size_t i = 0; i < t->n; i++)
		if (t->hint[i] != R_SYNC && t->corr[i] >= 0)
			v[n++] = (struct wspan){ t->corr[i], t->start_ns[i], i };
	qsort(v, n, sizeof(*v), cmp_wspan);
	for (size_t k = 0; k < np; k++) {
		ptrdiff_t a = ws_find(v, n, p[k].op_corr, p[k].op_start), b = ws_find(v, n, p[k].to_corr, p[k].to_start);
		if (a >= 0 && b >= 0 && a != b)
			trace_add_dep(t, (size_t)a, (size_t)b, DEP_RECORD);
	}
	free(v);
}

void kineto_finish_waits(const struct kwait *waits, size_t nwait, const struct krec *recs, size_t nrec, struct trace *t,
			 const struct ingest_opts *o)
{
	size_t np;
	struct wpair *p = record_waits(waits, nwait, recs, nrec, t, &np);
	trace_finish(t, o ? o->rules : NULL);
	add_waits(t, p, np);
	free(p);
}

