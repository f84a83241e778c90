/*
 * analysis_json.c - a saved analysis (`aorta analyze --json`, schema
 * aorta.analysis/1 or /2) read back into struct analysis, checked against
 * its schema (analysis_json.h).
 *
 * Design.  The document is parsed whole with yajl's tree (an analysis is
 * small: figures per rank and step, no spans), then walked once.  Every
 * field the writer (report/analysis_out.c) writes and struct analysis holds
 * is read; each must have the writer's type: a figure is a number (or null
 * where the writer writes null for "not applicable"), a count a
 * non-negative integer, a rank an integer >= 0.  A field of the wrong type
 * is AORTA_EINPUT naming its path ("ranks[2].steps[0].compute_ms: expected
 * a number, got a string"), so a hand-edited or damaged file can never
 * become a NaN that compares as "better".  Fields that are derived (ratios,
 * step_stats, across_ranks.figures) are recomputed by whoever needs them;
 * unknown fields are ignored (a later minor version may add some).
 *
 * Times.  The writer prints milliseconds with six decimals from integer
 * nanoseconds, so ns = llround(ms * 1e6) restores them exactly.
 */
#include "ingest/analysis_json.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_tree.h>

#include "base/zread.h"
#include "overlap/figures.h"

#define MAX_ANALYSIS (1u << 30)

struct rd {
	const char *path;
	struct aorta_error *e;
	char where[256];
	int failed;
};

static enum aorta_status fail(struct rd *r, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static enum aorta_status fail(struct rd *r, const char *key, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!r->failed)
		aorta_fail(r->e, AORTA_EINPUT, r->path, 0, -1, "%s%s%s: %s (not a valid aorta analysis)",
			   r->where, r->where[0] && key ? "." : "", key ? key : "", msg);
	r->failed = 1;
	return AORTA_EINPUT;
}

static const char *type_name(yajl_val v)
{
	if (!v || YAJL_IS_NULL(v))
		return "null";
	if (YAJL_IS_STRING(v))
		return "a string";
	if (YAJL_IS_NUMBER(v))
		return "a number";
	if (YAJL_IS_OBJECT(v))
		return "an object";
	if (YAJL_IS_ARRAY(v))
		return "an array";
	return "a boolean";
}

static yajl_val get(yajl_val o, const char *k)
{
	const char *p[2] = { k, NULL };
	return o && YAJL_IS_OBJECT(o) ? yajl_tree_get(o, p, yajl_t_any) : NULL;
}

static int present(yajl_val o, const char *k)
{
	if (!o || !YAJL_IS_OBJECT(o))
		return 0;
	for (size_t i = 0; i < YAJL_GET_OBJECT(o)->len; i++)
		if (!strcmp(YAJL_GET_OBJECT(o)->keys[i], k))
			return 1;
	return 0;
}

/* A finite number of key (required: absent is an error too). */
static int rnum(struct rd *r, yajl_val o, const char *k, int required, double *out)
{
	yajl_val v = get(o, k);
	if (!v && !present(o, k)) {
		if (required)
			fail(r, k, "missing");
		return -1;
	}
	if (!v || !YAJL_IS_NUMBER(v) || !isfinite(YAJL_GET_DOUBLE(v))) {
		fail(r, k, "expected a number, got %s", v && YAJL_IS_NUMBER(v) ? "a non-finite number" : type_name(v));
		return -1;
	}
	*out = YAJL_IS_INTEGER(v) ? (double)YAJL_GET_INTEGER(v) : YAJL_GET_DOUBLE(v);
	return 0;
}

static int rint64(struct rd *r, yajl_val o, const char *k, int required, int64_t lo, int64_t *out)
{
	yajl_val v = get(o, k);
	if (!v && !present(o, k)) {
		if (required)
			fail(r, k, "missing");
		return -1;
	}
	if (!v || !YAJL_IS_INTEGER(v)) {
		fail(r, k, "expected an integer, got %s", v && YAJL_IS_NUMBER(v) ? "a fraction" : type_name(v));
		return -1;
	}
	if (YAJL_GET_INTEGER(v) < lo) {
		fail(r, k, "expected an integer >= %lld, got %lld", (long long)lo, (long long)YAJL_GET_INTEGER(v));
		return -1;
	}
	*out = YAJL_GET_INTEGER(v);
	return 0;
}

/* Milliseconds as written (six decimals) back to ns. */
static int rms(struct rd *r, yajl_val o, const char *k, int required, int64_t *ns)
{
	double d;
	if (rnum(r, o, k, required, &d))
		return -1;
	if (fabs(d) > 9e9) {
		fail(r, k, "%g ms is out of range", d);
		return -1;
	}
	*ns = (int64_t)llround(d * 1e6);
	return 0;
}

/* Milliseconds where the writer writes null for "not applicable" (cross-rank
 * figures without a shared clock): null reads as 0 and *isnull = 1. */
static int rms_null(struct rd *r, yajl_val o, const char *k, int64_t *ns, int *isnull)
{
	yajl_val v = get(o, k);
	if (isnull)
		*isnull = 0;
	if (present(o, k) && (!v || YAJL_IS_NULL(v))) {
		if (isnull)
			*isnull = 1;
		*ns = 0;
		return 0;
	}
	return rms(r, o, k, 0, ns);
}

/* A number or null (NaN). */
static void rnum_null(struct rd *r, yajl_val o, const char *k, double *out)
{
	yajl_val v = get(o, k);
	if (present(o, k) && (!v || YAJL_IS_NULL(v))) {
		*out = NAN;
		return;
	}
	double d;
	if (!rnum(r, o, k, 0, &d))
		*out = d;
}

static const char *rstr(struct rd *r, yajl_val o, const char *k, int required)
{
	yajl_val v = get(o, k);
	if (!v && !present(o, k)) {
		if (required)
			fail(r, k, "missing");
		return NULL;
	}
	if (!v || !YAJL_IS_STRING(v)) {
		fail(r, k, "expected a string, got %s", type_name(v));
		return NULL;
	}
	return YAJL_GET_STRING(v);
}

static yajl_val rarr(struct rd *r, yajl_val o, const char *k, int required)
{
	yajl_val v = get(o, k);
	if (!v && !present(o, k)) {
		if (required)
			fail(r, k, "missing");
		return NULL;
	}
	if (!v || !YAJL_IS_ARRAY(v)) {
		fail(r, k, "expected an array, got %s", type_name(v));
		return NULL;
	}
	return v;
}

static yajl_val robj(struct rd *r, yajl_val o, const char *k, int required)
{
	yajl_val v = get(o, k);
	if (!v && !present(o, k)) {
		if (required)
			fail(r, k, "missing");
		return NULL;
	}
	if (!v || !YAJL_IS_OBJECT(v)) {
		fail(r, k, "expected an object, got %s", type_name(v));
		return NULL;
	}
	return v;
}

static void with(struct rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void with(struct rd *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->where, sizeof(r->where), fmt, ap);
	va_end(ap);
}

/* The figures of one window: FIGURES' keys, and, where given, collective_ms
 * and collective_exposed_ms by type. */
static void read_figs(struct rd *r, yajl_val o, int with_coll, struct ov_figures *f)
{
	memset(f, 0, sizeof(*f));
	for (size_t k = 0; k < NFIGURES && !r->failed; k++)
		rms(r, o, FIGURES[k].key, 1, (int64_t *)((char *)f + FIGURES[k].off));
	if (!with_coll || r->failed)
		return;
	static const char *const obj[2] = { "collective_ms", "collective_exposed_ms" };
	for (int q = 0; q < 2 && !r->failed; q++) {
		yajl_val c = robj(r, o, obj[q], 0);
		for (int t = 1; c && t < COLL__COUNT && !r->failed; t++) {
			char w[sizeof(r->where)];
			snprintf(w, sizeof(w), "%s", r->where);
			with(r, "%s.%s", w, obj[q]);
			rms(r, c, coll_type_name((enum coll_type)t), 0, q ? &f->coll_exposed_ns[t] : &f->coll_ns[t]);
			snprintf(r->where, sizeof(r->where), "%s", w);
		}
	}
}

static enum coll_type coll_by_name(const char *s)
{
	for (int t = 0; t < COLL__COUNT; t++)
		if (!strcmp(s, coll_type_name((enum coll_type)t)))
			return (enum coll_type)t;
	return COLL__COUNT;
}

static enum span_kind kind_by_name(const char *s)
{
	for (int k = 0; k < K__COUNT; k++)
		if (!strcmp(s, kind_name((enum span_kind)k)))
			return (enum span_kind)k;
	return K__COUNT;
}

/* rank_result.format is a static string: the formats aorta writes. */
/* The join's clock methods are static strings; map a name back to one. */
static const char *static_method(const char *s)
{
	static const char *const m[] = { "collective-ends", "collective-ends+drift", "one-host", "file", "none" };
	for (size_t i = 0; s && i < sizeof(m) / sizeof(m[0]); i++)
		if (!strcmp(s, m[i]))
			return m[i];
	return "none";
}

static const char *static_format(const char *s)
{
	static const char *const known[] = { "kineto", "nsys", "rocpd", "rocprof-csv", "rocprof-json",
					     "aorta-jsonl", "aorta-analysis" };
	for (size_t i = 0; s && i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(s, known[i]))
			return known[i];
	return "aorta-analysis";
}

static void read_rank(struct rd *r, yajl_val o, size_t i, struct rank_result *x)
{
	int64_t v;
	const char *s;
	with(r, "ranks[%zu]", i);
	if (!o || !YAJL_IS_OBJECT(o)) {
		fail(r, NULL, "expected an object, got %s", type_name(o));
		return;
	}
	if (!rint64(r, o, "rank", 1, 0, &v))
		x->rank = (int)v;
	x->world_size = -1;
	x->device = -1;
	x->other_device = -1;
	if (!rint64(r, o, "world_size", 0, -1, &v))
		x->world_size = (int)v;
	if (!rint64(r, o, "device", 0, -1, &v))
		x->device = (int)v;
	s = rstr(r, o, "path", 0);
	x->path = xstrdup(s ? s : "");
	x->format = static_format(rstr(r, o, "format", 0));
	if (!rint64(r, o, "device_events", 0, 0, &v))
		x->events = (uint64_t)v;
	if (!rint64(r, o, "host_events", 0, 0, &v))
		x->host_events = (uint64_t)v;
	if (!rint64(r, o, "skipped_events", 0, 0, &v))
		x->skipped = (uint64_t)v;
	if (!rint64(r, o, "other_device_events", 0, 0, &v))
		x->other_device_spans = (uint64_t)v;
	if (!rint64(r, o, "other_device", 0, -1, &v))
		x->other_device = (int)v;
	s = rstr(r, o, "skipped_first", 0);
	x->skipped_first = xstrdup(s ? s : "");
	if (r->failed)
		return;

	yajl_val tot = robj(r, o, "total", 1);
	if (r->failed)
		return;
	with(r, "ranks[%zu].total", i);
	read_figs(r, tot, 1, &x->total);

	yajl_val steps = (with(r, "ranks[%zu]", i), rarr(r, o, "steps", 1));
	if (r->failed)
		return;
	size_t ns = YAJL_GET_ARRAY(steps)->len;
	x->steps = xcalloc(ns ? ns : 1, sizeof(*x->steps));
	for (size_t k = 0; k < ns && !r->failed; k++) {
		yajl_val so = YAJL_GET_ARRAY(steps)->values[k];
		struct step_result *st = &x->steps[x->nsteps++];
		with(r, "ranks[%zu].steps[%zu]", i, k);
		if (!YAJL_IS_OBJECT(so)) {
			fail(r, NULL, "expected an object, got %s", type_name(so));
			break;
		}
		rint64(r, so, "step", 1, INT64_MIN, &st->number);
		rint64(r, so, "start_ns", 1, INT64_MIN, &st->start_ns);
		rint64(r, so, "end_ns", 1, INT64_MIN, &st->end_ns);
		read_figs(r, so, 0, &st->f);
		yajl_val hb = get(so, "host_bound");
		if (hb && !YAJL_IS_TRUE(hb) && !YAJL_IS_FALSE(hb))
			fail(r, "host_bound", "expected true or false, got %s", type_name(hb));
		st->host_bound = hb && YAJL_IS_TRUE(hb);
		for (int q = 0; q < SR__COUNT; q++)
			st->rec[q] = NAN;
		yajl_val rec = robj(r, so, "recorded", 0);
		if (rec) {
			x->has_rec = 1;
			for (int q = 0; q < SR__COUNT && !r->failed; q++) {
				yajl_val rv = get(rec, REC_KEYS[q]);
				if (rv && !YAJL_IS_NULL(rv))
					rnum(r, rec, REC_KEYS[q], 0, &st->rec[q]);
			}
		}
	}
	if (r->failed)
		return;
	/* steps_total: summed again from the steps with the file's skip (the
	 * step windows tile, so this is what the writer computed); only its
	 * per-collective figures are taken from the file (steps do not carry
	 * them) */
	yajl_val stt = (with(r, "ranks[%zu]", i), robj(r, o, "steps_total", 0));
	if (stt) { /* kept in steps_sum until analysis_set_skip, then merged */
		with(r, "ranks[%zu].steps_total", i);
		read_figs(r, stt, 1, &x->steps_sum);
	}

	with(r, "ranks[%zu]", i);
	yajl_val streams = rarr(r, o, "streams", 0);
	size_t nst = streams ? YAJL_GET_ARRAY(streams)->len : 0;
	x->streams = xcalloc(nst ? nst : 1, sizeof(*x->streams));
	for (size_t k = 0; k < nst && !r->failed; k++) {
		yajl_val so = YAJL_GET_ARRAY(streams)->values[k];
		struct stream_row *sr = &x->streams[x->nstreams++];
		with(r, "ranks[%zu].streams[%zu]", i, k);
		if (!rint64(r, so, "stream", 1, INT32_MIN, &v))
			sr->stream = (int32_t)v;
		rms(r, so, "busy_ms", 1, &sr->busy_ns);
		if (!rint64(r, so, "spans", 0, 0, &v))
			sr->spans = (uint64_t)v;
	}

	with(r, "ranks[%zu]", i);
	yajl_val cl = rarr(r, o, "collectives", 0);
	size_t nc = cl ? YAJL_GET_ARRAY(cl)->len : 0;
	x->colls = xcalloc(nc ? nc : 1, sizeof(*x->colls));
	for (size_t k = 0; k < nc && !r->failed; k++) {
		yajl_val co = YAJL_GET_ARRAY(cl)->values[k];
		struct coll_row *c = &x->colls[x->ncolls++];
		with(r, "ranks[%zu].collectives[%zu]", i, k);
		s = rstr(r, co, "type", 1);
		if (s && coll_by_name(s) == COLL__COUNT)
			fail(r, "type", "unknown collective type '%s'", s);
		c->type = s ? (uint8_t)coll_by_name(s) : COLL_OTHER;
		s = rstr(r, co, "process_group", 0);
		c->pg = xstrdup(s ? s : "");
		if (!rint64(r, co, "bytes", 1, 0, &v))
			c->bytes = (uint64_t)v;
		c->group_size = -1;
		if (!rint64(r, co, "group_size", 0, -1, &v))
			c->group_size = (int)v;
		if (!rint64(r, co, "count", 1, 0, &v))
			c->count = (uint64_t)v;
		rms(r, co, "total_ms", 1, &c->total_ns);
		rms(r, co, "exposed_ms", 0, &c->exposed_ns);
		rms(r, co, "min_ms", 0, &c->min_ns);
		rms(r, co, "max_ms", 0, &c->max_ns);
		if (!rint64(r, co, "matched", 0, 0, &v))
			c->matched = (uint64_t)v;
		rms_null(r, co, "wait_ms", &c->wait_ns, NULL);
		rms_null(r, co, "transfer_ms", &c->transfer_ns, NULL);
		c->wait_share = c->algbw_gbps = c->busbw_gbps = NAN;
		c->algbw_kernel_gbps = c->busbw_kernel_gbps = NAN;
		rnum_null(r, co, "wait_share", &c->wait_share);
		rnum_null(r, co, "algbw_gbps", &c->algbw_gbps);
		rnum_null(r, co, "busbw_gbps", &c->busbw_gbps);
		rnum_null(r, co, "algbw_kernel_gbps", &c->algbw_kernel_gbps);
		rnum_null(r, co, "busbw_kernel_gbps", &c->busbw_kernel_gbps);
	}

	with(r, "ranks[%zu]", i);
	yajl_val tk = rarr(r, o, "top_kernels", 0);
	size_t nk = tk ? YAJL_GET_ARRAY(tk)->len : 0;
	x->kernels = xcalloc(nk ? nk : 1, sizeof(*x->kernels));
	for (size_t k = 0; k < nk && !r->failed; k++) {
		yajl_val ko = YAJL_GET_ARRAY(tk)->values[k];
		struct kernel_row *kr = &x->kernels[x->nkernels++];
		with(r, "ranks[%zu].top_kernels[%zu]", i, k);
		s = rstr(r, ko, "name", 1);
		kr->name = xstrdup(s ? s : "");
		s = rstr(r, ko, "kind", 0);
		kr->kind = (uint8_t)(s && kind_by_name(s) != K__COUNT ? kind_by_name(s) : K_UNKNOWN);
		if (!rint64(r, ko, "count", 1, 0, &v))
			kr->count = (uint64_t)v;
		rms(r, ko, "total_ms", 1, &kr->total_ns);
		rms(r, ko, "min_ms", 0, &kr->min_ns);
		rms(r, ko, "max_ms", 0, &kr->max_ns);
	}

	with(r, "ranks[%zu]", i);
	yajl_val w = robj(r, o, "wait", 0);
	if (w) {
		with(r, "ranks[%zu].wait", i);
		if (!rint64(r, w, "matched_collectives", 0, 0, &v))
			x->matched = (uint64_t)v;
		rms_null(r, w, "wait_ms", &x->wait_ns, NULL);
		rms_null(r, w, "transfer_ms", &x->transfer_ns, NULL);
		yajl_val tl0 = get(w, "times_last");
		if (tl0 && !YAJL_IS_NULL(tl0) && !rint64(r, w, "times_last", 0, 0, &v))
			x->times_last = (uint64_t)v;
		rms_null(r, w, "caused_ms", &x->caused_ns, NULL);
		if (!rint64(r, w, "caused_collectives", 0, 0, &v))
			x->caused_colls = (uint64_t)v;
		rms(r, w, "lateness_ms", 0, &x->lateness_ns);
		rms(r, w, "caused_host_wait_excess_ms", 0, &x->caused_host_excess_ns);
		rms(r, w, "caused_busy_excess_ms", 0, &x->caused_busy_excess_ns);
		yajl_val pp = rarr(r, w, "p2p_peers", 0);
		size_t np = pp ? YAJL_GET_ARRAY(pp)->len : 0;
		x->peers = np ? xmalloc(np * sizeof(*x->peers)) : NULL;
		for (size_t k = 0; k < np && !r->failed; k++) {
			yajl_val e = YAJL_GET_ARRAY(pp)->values[k];
			if (!YAJL_IS_INTEGER(e) || YAJL_GET_INTEGER(e) < 0 || YAJL_GET_INTEGER(e) > INT32_MAX) {
				fail(r, "p2p_peers", "expected rank numbers, got %s", type_name(e));
				break;
			}
			x->peers[x->npeers++] = (int32_t)YAJL_GET_INTEGER(e);
		}
	}
	with(r, "ranks[%zu]", i);
	x->clock_domain = (int)i;
	yajl_val ck = robj(r, o, "clock", 0);
	if (ck) {
		double d;
		with(r, "ranks[%zu].clock", i);
		yajl_val hv = get(ck, "host");
		if (hv && !YAJL_IS_NULL(hv)) {
			const char *h = rstr(r, ck, "host", 0);
			if (h)
				snprintf(x->host, sizeof(x->host), "%s", h);
		}
		if (!rint64(r, ck, "domain", 0, 0, &v))
			x->clock_domain = (int)v;
		if (!rnum(r, ck, "offset_ms", 0, &d))
			x->clock_offset_ns = (int64_t)llround(d * 1e6);
		if (!rnum(r, ck, "drift_ppm", 0, &d))
			x->clock_drift = d / 1e6;
		rint64(r, ck, "t0_ns", 0, INT64_MIN, &x->clock_t0_ns);
	}
	with(r, "ranks[%zu]", i);
	yajl_val named = robj(r, o, "named", 0);
	yajl_val hta = named ? (with(r, "ranks[%zu].named", i), robj(r, named, "hta", 0)) : NULL;
	if (hta) {
		double d;
		with(r, "ranks[%zu].named.hta", i);
		yajl_val cv = get(hta, "comm_comp_overlap_pctg");
		x->hta.has_comm = cv && !YAJL_IS_NULL(cv);
		if (x->hta.has_comm && !rnum(r, hta, "comm_comp_overlap_pctg", 0, &d))
			x->hta.comm_comp_overlap_pct = d;
		rms(r, hta, "kernel_time_ms", 0, &x->hta.kernel_time_ns);
		rms(r, hta, "idle_time_ms", 0, &x->hta.idle_ns);
		rms(r, hta, "compute_time_ms", 0, &x->hta.compute_ns);
		rms(r, hta, "non_compute_time_ms", 0, &x->hta.non_compute_ns);
		yajl_val le = get(hta, "last_step_excluded");
		x->hta.last_step_excluded = le && YAJL_IS_TRUE(le);
	}
	yajl_val tl = named ? (with(r, "ranks[%zu].named", i), robj(r, named, "tracelens", 0)) : NULL;
	if (tl) {
		with(r, "ranks[%zu].named.tracelens", i);
		rms(r, tl, "busy_time_ms", 0, &x->tracelens.busy_ns);
		rms(r, tl, "computation_time_ms", 0, &x->tracelens.compute_ns);
		rms(r, tl, "exposed_comm_time_ms", 0, &x->tracelens.exposed_comm_ns);
		rms(r, tl, "exposed_memcpy_time_ms", 0, &x->tracelens.exposed_memcpy_ns);
		rms(r, tl, "idle_time_ms", 0, &x->tracelens.idle_ns);
		rms(r, tl, "total_comm_time_ms", 0, &x->tracelens.comm_ns);
		rms(r, tl, "total_memcpy_time_ms", 0, &x->tracelens.memcpy_ns);
		rms(r, tl, "total_time_ms", 0, &x->tracelens.window_ns);
	}
	ivset_init(&x->wait_set);
	ivset_init(&x->exposed_set);
}
/* ---- across_ranks.what_if (report/whatif_out.c writes it) ------------------------ */

static char *dup_str(struct rd *r, yajl_val o, const char *k, int required)
{
	const char *v = rstr(r, o, k, required);
	return v ? xstrdup(v) : NULL;
}

static int rbool(struct rd *r, yajl_val o, const char *k)
{
	yajl_val v = get(o, k);
	if (!v)
		return 0;
	if (!YAJL_IS_TRUE(v) && !YAJL_IS_FALSE(v))
		fail(r, k, "expected true or false, got %s", type_name(v));
	return YAJL_IS_TRUE(v);
}

static struct whatif_fix *read_fixes(struct rd *r, yajl_val w, const char *key, size_t *n)
{
	yajl_val arr = rarr(r, w, key, 0);
	*n = arr ? YAJL_GET_ARRAY(arr)->len : 0;
	struct whatif_fix *f = xcalloc(*n ? *n : 1, sizeof(*f));
	for (size_t q = 0; q < *n && !r->failed; q++) {
		yajl_val o = YAJL_GET_ARRAY(arr)->values[q];
		int64_t v;
		with(r, "across_ranks.what_if.%s[%zu]", key, q);
		if (!YAJL_IS_OBJECT(o)) {
			fail(r, NULL, "expected an object, got %s", type_name(o));
			break;
		}
		f[q].what = dup_str(r, o, "fix", 1);
		f[q].rank = -1;
		if (present(o, "rank") && !rint64(r, o, "rank", 1, 0, &v))
			f[q].rank = (int)v;
		f[q].ranks = dup_str(r, o, "ranks", 0);
		f[q].step_ms_if_fixed = f[q].gain_ms = f[q].gain_pct = NAN;
		rnum_null(r, o, "step_ms_if_fixed", &f[q].step_ms_if_fixed);
		rnum_null(r, o, "gain_ms", &f[q].gain_ms);
		rnum_null(r, o, "gain_pct", &f[q].gain_pct);
	}
	return f;
}

static void read_whatif_steps(struct rd *r, yajl_val w, struct whatif *x)
{
	yajl_val arr = rarr(r, w, "steps", 0);
	x->nsteps = arr ? YAJL_GET_ARRAY(arr)->len : 0;
	x->steps = xcalloc(x->nsteps ? x->nsteps : 1, sizeof(*x->steps));
	for (size_t q = 0; q < x->nsteps && !r->failed; q++) {
		yajl_val o = YAJL_GET_ARRAY(arr)->values[q];
		struct whatif_step *st = &x->steps[q];
		with(r, "across_ranks.what_if.steps[%zu]", q);
		if (!YAJL_IS_OBJECT(o)) {
			fail(r, NULL, "expected an object, got %s", type_name(o));
			break;
		}
		rint64(r, o, "step", 1, INT64_MIN, &st->number);
		st->measured_ms = st->replay_ms = st->ideal_ms = st->error_pct = NAN;
		rnum_null(r, o, "measured_ms", &st->measured_ms);
		rnum_null(r, o, "replay_ms", &st->replay_ms);
		rnum_null(r, o, "ideal_ms", &st->ideal_ms);
		rnum_null(r, o, "error_pct", &st->error_pct);
		st->reproduced = rbool(r, o, "reproduced");
		yajl_val rs = get(o, "reason");
		if (rs && !YAJL_IS_NULL(rs))
			st->reason = dup_str(r, o, "reason", 0);
		yajl_val bf = get(o, "best_fix");
		if (bf && !YAJL_IS_NULL(bf)) {
			st->best = dup_str(r, o, "best_fix", 0);
			rnum(r, o, "best_step_ms_if_fixed", 1, &st->best_ms_if_fixed);
			rnum(r, o, "best_gain_ms", 1, &st->best_gain_ms);
		}
	}
}

static void read_whatif_cp(struct rd *r, yajl_val w, struct whatif *x)
{
	yajl_val arr = rarr(r, w, "critical_path", 0);
	x->ncp = arr ? YAJL_GET_ARRAY(arr)->len : 0;
	x->cp = xcalloc(x->ncp ? x->ncp : 1, sizeof(*x->cp));
	for (size_t q = 0; q < x->ncp && !r->failed; q++) {
		yajl_val o = YAJL_GET_ARRAY(arr)->values[q];
		struct whatif_cp *c = &x->cp[q];
		int64_t v;
		with(r, "across_ranks.what_if.critical_path[%zu]", q);
		if (!YAJL_IS_OBJECT(o)) {
			fail(r, NULL, "expected an object, got %s", type_name(o));
			break;
		}
		if (!rint64(r, o, "rank", 1, 0, &v))
			c->rank = (int)v;
		c->stream = -1;
		yajl_val sv = get(o, "stream");
		if (sv && !YAJL_IS_NULL(sv) && !rint64(r, o, "stream", 1, INT32_MIN, &v))
			c->stream = (int32_t)v;
		c->what = dup_str(r, o, "op", 1);
		c->ms = c->share = NAN;
		rnum_null(r, o, "ms_per_step", &c->ms);
		rnum_null(r, o, "share", &c->share);
	}
}

/* across_ranks.what_if back into a->whatif (null or absent: none). */
static void read_whatif(struct rd *r, yajl_val x, struct analysis *a)
{
	yajl_val w = get(x, "what_if");
	if (!w || YAJL_IS_NULL(w))
		return;
	with(r, "across_ranks");
	if (!robj(r, x, "what_if", 0))
		return;
	with(r, "across_ranks.what_if");
	struct whatif *wi = xcalloc(1, sizeof(*wi));
	a->whatif = wi;
	wi->ok = rbool(r, w, "ok");
	if (!wi->ok) {
		wi->why = dup_str(r, w, "reason", 0);
		return;
	}
	int64_t v;
	if (!rint64(r, w, "steps_used", 0, 0, &v))
		wi->steps_used = (size_t)v;
	wi->measured_step_ms = wi->replay_step_ms = wi->ideal_step_ms = wi->slowdown = NAN;
	rnum_null(r, w, "measured_step_ms", &wi->measured_step_ms);
	rnum_null(r, w, "replay_step_ms", &wi->replay_step_ms);
	rnum_null(r, w, "ideal_step_ms", &wi->ideal_step_ms);
	rnum_null(r, w, "slowdown", &wi->slowdown);
	rnum_null(r, w, "replay_error_pct", &wi->replay_error_pct);
	wi->reproduced = rbool(r, w, "reproduced");
	rnum_null(r, w, "uncertainty_ms", &wi->uncertainty_ms);
	rnum_null(r, w, "unexplained_ms", &wi->unexplained_ms);
	rnum_null(r, w, "unexplained_share", &wi->unexplained_share);
	wi->verdict = dup_str(r, w, "verdict", 0);
	wi->by_rank = read_fixes(r, w, "by_rank", &wi->nby_rank);
	with(r, "across_ranks.what_if");
	wi->by_group = read_fixes(r, w, "by_group", &wi->nby_group);
	with(r, "across_ranks.what_if");
	wi->by_op = read_fixes(r, w, "by_op", &wi->nby_op);
	with(r, "across_ranks.what_if");
	yajl_val st = rarr(r, w, "stages", 0);
	size_t ns = st ? YAJL_GET_ARRAY(st)->len : 0;
	if (ns && !r->failed) {
		wi->stage = xmalloc(a->n * sizeof(int));
		for (size_t i = 0; i < a->n; i++)
			wi->stage[i] = -1;
		wi->nstage = a->n;
		for (size_t q = 0; q < ns && !r->failed; q++) {
			yajl_val o = YAJL_GET_ARRAY(st)->values[q];
			int64_t rk, sg;
			with(r, "across_ranks.what_if.stages[%zu]", q);
			if (!YAJL_IS_OBJECT(o)) {
				fail(r, NULL, "expected an object, got %s", type_name(o));
				break;
			}
			if (rint64(r, o, "rank", 1, 0, &rk) || rint64(r, o, "stage", 1, -1, &sg))
				break;
			size_t i;
			for (i = 0; i < a->n && a->r[i].rank != rk; i++)
				;
			if (i == a->n) {
				fail(r, "rank", "%lld is not a rank of the analysis", (long long)rk);
				break;
			}
			wi->stage[i] = (int)sg;
		}
	}
	read_whatif_steps(r, w, wi);
	read_whatif_cp(r, w, wi);
}



static int cmp_rank(const void *a, const void *b)
{
	const struct rank_result *x = a, *y = b;
	return (x->rank > y->rank) - (x->rank < y->rank);
}

enum aorta_status analysis_json_parse(const char *path, const char *text, struct analysis *a,
				      struct aorta_error *e)
{
	char err[512] = "";
	struct rd r = { path, e, "", 0 };
	int64_t v;
	double d;

	memset(a, 0, sizeof(*a));
	a->late_rank = -1;
	yajl_val root = yajl_tree_parse(text, err, sizeof(err));
	if (!root) {
		for (char *p = err; *p; p++)
			if (*p == '\n')
				*p = ' ';
		return aorta_fail(e, AORTA_EINPUT, path, 0, -1, "invalid analysis JSON: %s", err);
	}
	if (!YAJL_IS_OBJECT(root)) {
		fail(&r, NULL, "expected an object at the top, got %s", type_name(root));
		goto out;
	}
	const char *schema = rstr(&r, root, "schema", 1);
	if (schema && strcmp(schema, "aorta.analysis/1") && strcmp(schema, "aorta.analysis/2") &&
	    strcmp(schema, "aorta.analysis/3")) {
		fail(&r, "schema", "expected 'aorta.analysis/1', '/2' or '/3', got '%s'", schema);
		goto out;
	}
	if (r.failed)
		goto out;
	a->opts.host_bound_pct = 30.0;
	a->opts.top_kernels = 10;
	yajl_val opt = robj(&r, root, "options", 0);
	if (opt) {
		with(&r, "options");
		if (!rint64(&r, opt, "skip_steps", 0, 0, &v))
			a->opts.skip_steps = (int)v;
		if (!rnum(&r, opt, "host_bound_pct", 0, &d))
			a->opts.host_bound_pct = d;
		with(&r, "%s", "");
	}
	yajl_val in = rarr(&r, root, "inputs", 0);
	size_t nin = in ? YAJL_GET_ARRAY(in)->len : 0;
	a->inputs = xcalloc(nin ? nin : 1, sizeof(*a->inputs));
	for (size_t i = 0; i < nin && !r.failed; i++) {
		yajl_val s = YAJL_GET_ARRAY(in)->values[i];
		if (!YAJL_IS_STRING(s)) {
			with(&r, "inputs[%zu]", i);
			fail(&r, NULL, "expected a string, got %s", type_name(s));
			break;
		}
		a->inputs[a->ninputs++] = xstrdup(YAJL_GET_STRING(s));
	}
	with(&r, "%s", "");
	yajl_val ranks = rarr(&r, root, "ranks", 1);
	if (r.failed)
		goto out;
	size_t n = YAJL_GET_ARRAY(ranks)->len;
	if (!n) {
		fail(&r, "ranks", "holds no rank");
		goto out;
	}
	a->r = xcalloc(n, sizeof(*a->r));
	for (size_t i = 0; i < n && !r.failed; i++) {
		read_rank(&r, YAJL_GET_ARRAY(ranks)->values[i], i, &a->r[a->n]);
		a->n++;
	}
	if (r.failed)
		goto out;
	qsort(a->r, a->n, sizeof(*a->r), cmp_rank); /* xsteps index ranks as a->r */
	with(&r, "%s", "");
	yajl_val x = robj(&r, root, "across_ranks", 0);
	if (x) {
		with(&r, "across_ranks");
		yajl_val lr = get(x, "late_rank");
		if (lr && !YAJL_IS_NULL(lr) && !rint64(&r, x, "late_rank", 0, -1, &v))
			a->late_rank = (int)v;
		if (!rint64(&r, x, "matched_collectives", 0, 0, &v))
			a->matched_groups = (uint64_t)v;
		if (!rint64(&r, x, "unmatched_calls", 0, 0, &v))
			a->unmatched_calls = (uint64_t)v;
		if (!rint64(&r, x, "size_mismatches", 0, 0, &v))
			a->size_mismatch = (uint64_t)v;
		yajl_val ca = get(x, "clocks_aligned");
		if (ca && !YAJL_IS_TRUE(ca) && !YAJL_IS_FALSE(ca))
			fail(&r, "clocks_aligned", "expected true or false, got %s", type_name(ca));
		a->clocks_aligned = ca && YAJL_IS_TRUE(ca);
		rms_null(&r, x, "skew_mean_ms", &a->skew_mean_ns, NULL);
		rms_null(&r, x, "skew_p50_ms", &a->skew_p50_ns, NULL);
		rms_null(&r, x, "skew_max_ms", &a->skew_max_ns, NULL);
		a->late_share = NAN;
		rnum_null(&r, x, "late_share", &a->late_share);
		a->top_rank = -1;
		yajl_val tr = get(x, "top_rank");
		if (tr && !YAJL_IS_NULL(tr) && !rint64(&r, x, "top_rank", 0, -1, &v))
			a->top_rank = (int)v;
		if (!rint64(&r, x, "matched_by_seq", 0, 0, &v))
			a->matched_by_seq = (uint64_t)v;
		rms_null(&r, x, "waiting_caused_ms", &a->caused_ns, NULL);
		yajl_val why = get(x, "no_cross_rank_reason");
		if (why && !YAJL_IS_NULL(why)) {
			const char *w = rstr(&r, x, "no_cross_rank_reason", 0);
			if (w) {
				free(a->owned_why);
				a->owned_why = xstrdup(w);
				a->no_cross_rank_why = a->owned_why;
			}
		}
		yajl_val ck = robj(&r, x, "clock", 0);
		if (ck) {
			with(&r, "across_ranks.clock");
			a->clock_method = static_method(rstr(&r, ck, "method", 0));
			if (!rint64(&r, ck, "samples", 0, 0, &v))
				a->clock_samples = (uint64_t)v;
			rms(&r, ck, "spread_ms", 0, &a->clock_spread_ns);
			rms(&r, ck, "spread_p50_ms", 0, &a->clock_spread_p50_ns);
		}
		with(&r, "across_ranks");
		yajl_val xs = rarr(&r, x, "steps", 0);
		size_t nx = xs ? YAJL_GET_ARRAY(xs)->len : 0;
		if (nx && !r.failed) {
			a->xsteps = xcalloc(nx, sizeof(*a->xsteps));
			for (size_t k = 0; k < nx && !r.failed; k++) {
				yajl_val so = YAJL_GET_ARRAY(xs)->values[k];
				struct xstep *xt = &a->xsteps[a->nxsteps++];
				xt->by_rank = xcalloc(a->n ? a->n : 1, sizeof(int64_t));
				xt->straggler = -1;
				with(&r, "across_ranks.steps[%zu]", k);
				if (!YAJL_IS_OBJECT(so)) {
					fail(&r, NULL, "expected an object, got %s", type_name(so));
					break;
				}
				yajl_val sn = get(so, "step");
				xt->number = INT64_MIN;
				if (sn && !YAJL_IS_NULL(sn))
					rint64(&r, so, "step", 1, INT64_MIN, &xt->number);
				yajl_val sg = get(so, "straggler");
				if (sg && !YAJL_IS_NULL(sg) && !rint64(&r, so, "straggler", 0, 0, &v))
					xt->straggler = (int)v;
				rms(&r, so, "straggler_caused_ms", 0, &xt->caused_ns);
				rms(&r, so, "caused_ms", 0, &xt->total_caused_ns);
				yajl_val br = robj(&r, so, "caused_ms_by_rank", 0);
				for (size_t q = 0; br && q < YAJL_GET_OBJECT(br)->len && !r.failed; q++) {
					const char *key = YAJL_GET_OBJECT(br)->keys[q];
					char *end;
					long rk = strtol(key, &end, 10);
					size_t ri;
					for (ri = 0; ri < a->n; ri++)
						if (*key && !*end && a->r[ri].rank == rk)
							break;
					if (ri == a->n) {
						fail(&r, "caused_ms_by_rank", "'%s' is not a rank of the analysis", key);
						break;
					}
					int64_t ns;
					if (!rms(&r, br, key, 1, &ns))
						xt->by_rank[ri] = ns;
				}
			}
		}
		if (!r.failed)
			read_whatif(&r, x, a);
	}
	if (r.failed)
		goto out;
	qsort(a->r, a->n, sizeof(*a->r), cmp_rank);
	for (size_t i = 1; i < a->n; i++)
		if (a->r[i].rank == a->r[i - 1].rank) {
			with(&r, "ranks");
			fail(&r, NULL, "rank %d appears twice", a->r[i].rank);
			goto out;
		}
	struct ov_figures *file = xcalloc(a->n, sizeof(*file)); /* steps_total as written */
	for (size_t i = 0; i < a->n; i++)
		file[i] = a->r[i].steps_sum;
	analysis_set_skip(a, a->opts.skip_steps);
	for (size_t i = 0; i < a->n; i++) {
		memcpy(a->r[i].steps_sum.coll_ns, file[i].coll_ns, sizeof(file[i].coll_ns));
		memcpy(a->r[i].steps_sum.coll_exposed_ns, file[i].coll_exposed_ns, sizeof(file[i].coll_exposed_ns));
	}
	free(file);
out:
	yajl_tree_free(root);
	if (r.failed) {
		analysis_free(a);
		return AORTA_EINPUT;
	}
	return AORTA_OK;
}

enum aorta_status analysis_json_read(const char *path, struct analysis *a, struct aorta_error *e)
{
	char *buf = NULL;
	size_t len = 0;
	memset(a, 0, sizeof(*a));
	a->late_rank = -1;
	enum aorta_status s = zread_all(path, MAX_ANALYSIS, &buf, &len, e);
	if (s)
		return s;
	if (memchr(buf, '\0', len)) {
		free(buf);
		return aorta_fail(e, AORTA_EINPUT, path, 0, -1, "invalid analysis JSON: a NUL byte");
	}
	s = analysis_json_parse(path, buf, a, e);
	free(buf);
	return s;
}
