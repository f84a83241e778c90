/*
 * fields.c - the record tables of the analysis model (fields.h) and the
 * hooks for what a plain field cannot say: derived figures (written,
 * recomputed on reading), keys that are data (figures by collective type,
 * waiting by rank) and the record invariants the reader checks.
 * docs/formats.md lists the keys; docs/metrics.md defines the figures.
 */
#include "analysis_io/analysis_io.h"
#include "analysis_io/fields.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "overlap/whatif.h"

#ifndef AORTA_VERSION
#define AORTA_VERSION "0.1.0"
#endif

#define N(t) (sizeof(t) / sizeof(t[0]))
#define F(k, ty, fl, st, m) { .key = k, .type = ty, .flags = fl, .off = offsetof(st, m) }
#define FNUM(k, fl, st, m, d) { .key = k, .type = FT_NUM, .flags = fl, .off = offsetof(st, m), .dec = d }
#define FOBJ(k, fl, st, m, s) { .key = k, .type = FT_OBJ, .flags = fl, .off = offsetof(st, m), .sub = &s }
#define FHERE(k, s) { .key = k, .type = FT_OBJ, .off = 0, .sub = &s }
#define FARR(k, fl, st, m, c, s) \
	{ .key = k, .type = FT_ARR, .flags = fl, .off = offsetof(st, m), .cnt = offsetof(st, c), .sub = &s }
#define FHOOK(k, fl, p, g) { .key = k, .type = FT_HOOK, .flags = fl, .put = p, .get = g }
#define FHOOKC(k, fl, p, g, c) { .key = k, .type = FT_HOOK, .flags = fl, .put = p, .get = g, .chk = c }
#define FPACK(st, m) { .key = NULL, .type = FT_PACK, .off = offsetof(st, m), .size = sizeof(((st *)0)->m) }
#define REC(nm, st, tab, in, ck) { nm, sizeof(st), tab, N(tab), in, ck }

static double ms(int64_t ns)
{
	return (double)ns / 1e6;
}

/* ---- figures of a window (struct ov_figures) ------------------------------ */

static void put_overlap_pct(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	const struct ov_figures *x = p;
	(void)c;
	jw_num(w, k, 100.0 * ratio(x->overlap_ns, x->comm_ns), 4);
}

static void put_exposed_pct(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	const struct ov_figures *x = p;
	(void)c;
	jw_num(w, k, 100.0 * ratio(x->exposed_comm_ns, x->window_ns), 4);
}

static void put_util(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	const struct ov_figures *x = p;
	(void)c;
	jw_num(w, k, ratio(x->busy_ns, x->window_ns), 6);
}

static void put_overlap_ratio(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	const struct ov_figures *x = p;
	(void)c;
	jw_num(w, k, ratio(x->overlap_ns, x->compute_ns), 6);
}

static void put_tp_eff(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	const struct ov_figures *x = p;
	(void)c;
	int64_t mn = x->gemm_ns < x->comm_ns ? x->gemm_ns : x->comm_ns;
	jw_num(w, k, ratio(x->gemm_comm_ns, mn), 6);
}

/* collective_ms / collective_exposed_ms: by type, the types with time */
static void put_by_coll(struct jw *w, const char *k, const void *p, int exposed)
{
	const struct ov_figures *x = p;
	jw_obj(w, k);
	for (int t = 1; t < COLL__COUNT; t++)
		if (x->coll_ns[t])
			jw_ms(w, coll_type_name((enum coll_type)t), exposed ? x->coll_exposed_ns[t] : x->coll_ns[t]);
	jw_obj_end(w);
}

static void put_coll_ms(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	(void)c;
	put_by_coll(w, k, p, 0);
}

static void put_coll_exp_ms(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	(void)c;
	put_by_coll(w, k, p, 1);
}

static int get_by_coll(struct rd *r, const struct jnode *v, const char *k, int64_t *out)
{
	if (!v)
		return 0;
	if (v->t != JN_OBJ)
		return io_fail(r, v, k, "expected an object");
	for (int t = 1; t < COLL__COUNT; t++) {
		const struct jnode *x = jdoc_get(v, coll_type_name((enum coll_type)t));
		if (!x)
			continue;
		if ((x->t != JN_INT && x->t != JN_DBL) || !isfinite(x->d) || fabs(x->d) > 9e9)
			return io_fail(r, x, k, "%s: expected a number of ms", coll_type_name((enum coll_type)t));
		if (x->d < 0)
			return io_fail(r, x, k, "%s: negative time %g ms", coll_type_name((enum coll_type)t), x->d);
		out[t] = jdoc_ns(x);
	}
	return 0;
}

static int get_coll_ms(struct rd *r, const struct jnode *v, const char *k, void *p, struct io_ctx *c)
{
	(void)c;
	return get_by_coll(r, v, k, ((struct ov_figures *)p)->coll_ns);
}

static int get_coll_exp_ms(struct rd *r, const struct jnode *v, const char *k, void *p, struct io_ctx *c)
{
	(void)c;
	return get_by_coll(r, v, k, ((struct ov_figures *)p)->coll_exposed_ns);
}

/* collective_ms / collective_exposed_ms: each type's time within the limits */
static int chk_by_coll(struct rd *r, const struct jnode *v, const char *k, const int64_t *x)
{
	for (int t = 1; t < COLL__COUNT; t++)
		if (x[t] < 0 || x[t] > ANALYSIS_MAX_NS)
			return io_fail(r, v ? jdoc_get(v, coll_type_name((enum coll_type)t)) : NULL, k,
				       "%s: %.6f ms is out of range (0 .. %.0f ms)", coll_type_name((enum coll_type)t),
				       ms(x[t]), (double)ANALYSIS_MAX_NS / 1e6);
	return 0;
}

static int chk_coll_ms(struct rd *r, const struct jnode *v, const char *k, const void *p, struct io_ctx *c)
{
	(void)c;
	return chk_by_coll(r, v, k, ((const struct ov_figures *)p)->coll_ns);
}

static int chk_coll_exp_ms(struct rd *r, const struct jnode *v, const char *k, const void *p, struct io_ctx *c)
{
	(void)c;
	return chk_by_coll(r, v, k, ((const struct ov_figures *)p)->coll_exposed_ns);
}

/* The rules of a window's figures (the scalar head, which a step has
 * too; docs/metrics.md defines each): the GPU is busy within the window,
 * idle the rest of it; compute, communication, copies and memsets are
 * parts of busy, GEMM and attention parts of compute; communication is
 * overlapped or exposed, the overlapped part under compute; exposed copies
 * are copies; host wait is idle time; GEMM-communication overlap is GEMM
 * and overlapped communication. */
struct part_rule { size_t part, whole; const char *key, *what, *of; };
#define PR(p, w, k, what, of) { offsetof(struct ov_step_figures, p), offsetof(struct ov_step_figures, w), k, what, of }
static const struct part_rule PART_RULES[] = {
	PR(busy_ns, window_ns, "busy_ms", "GPU busy", "the window"),
	PR(compute_ns, busy_ns, "compute_ms", "compute", "GPU busy"),
	PR(comm_ns, busy_ns, "comm_ms", "communication", "GPU busy"),
	PR(memcpy_ns, busy_ns, "memcpy_ms", "memcpy", "GPU busy"),
	PR(memset_ns, busy_ns, "memset_ms", "memset", "GPU busy"),
	PR(exposed_comm_ns, comm_ns, "exposed_comm_ms", "exposed communication", "communication"),
	PR(overlap_ns, comm_ns, "overlapped_comm_ms", "overlapped communication", "communication"),
	PR(overlap_ns, compute_ns, "overlapped_comm_ms", "overlapped communication", "compute"),
	PR(exposed_memcpy_ns, memcpy_ns, "exposed_memcpy_ms", "exposed memcpy", "memcpy"),
	PR(host_wait_ns, idle_ns, "host_wait_ms", "host wait", "idle"),
	PR(gemm_comm_ns, gemm_ns, "gemm_comm_overlap_ms", "GEMM-communication overlap", "GEMM"),
	PR(gemm_comm_ns, overlap_ns, "gemm_comm_overlap_ms", "GEMM-communication overlap", "overlapped communication"),
};
#undef PR

static int64_t sfig(const struct ov_step_figures *f, size_t off)
{
	return *(const int64_t *)((const char *)f + off);
}

static int check_scalar_figs(struct rd *r, const struct jnode *o, const struct ov_step_figures *f)
{
	for (size_t q = 0; q < N(PART_RULES); q++) {
		const struct part_rule *x = &PART_RULES[q];
		if (sfig(f, x->part) > sfig(f, x->whole))
			return io_fail(r, jdoc_get(o, x->key), x->key, "%s %.6f ms exceeds %s %.6f ms", x->what,
				       ms(sfig(f, x->part)), x->of, ms(sfig(f, x->whole)));
	}
	if (f->gemm_ns + f->attention_ns > f->compute_ns)
		return io_fail(r, jdoc_get(o, "attention_ms"), "attention_ms",
			       "GEMM %.6f ms and attention %.6f ms exceed compute %.6f ms", ms(f->gemm_ns),
			       ms(f->attention_ns), ms(f->compute_ns));
	if (f->overlap_ns + f->exposed_comm_ns != f->comm_ns)
		return io_fail(r, jdoc_get(o, "exposed_comm_ms"), "exposed_comm_ms",
			       "overlapped %.6f ms and exposed %.6f ms communication are not its %.6f ms",
			       ms(f->overlap_ns), ms(f->exposed_comm_ns), ms(f->comm_ns));
	if (f->idle_ns != f->window_ns - f->busy_ns)
		return io_fail(r, jdoc_get(o, "idle_ms"), "idle_ms", "idle %.6f ms is not the window %.6f ms less "
			       "GPU busy %.6f ms", ms(f->idle_ns), ms(f->window_ns), ms(f->busy_ns));
	return 0;
}

static int check_figs(struct rd *r, const struct jnode *o, const struct ov_figures *f)
{
	if (check_scalar_figs(r, o, (const struct ov_step_figures *)f))
		return -1;
	for (int t = 1; t < COLL__COUNT; t++)
		if (f->coll_exposed_ns[t] > f->coll_ns[t])
			return io_fail(r, jdoc_get(o, "collective_exposed_ms"), "collective_exposed_ms",
				       "%s: exposed %.6f ms exceeds its time %.6f ms", coll_type_name((enum coll_type)t),
				       ms(f->coll_exposed_ns[t]), ms(f->coll_ns[t]));
	return 0;
}

static int check_window(struct rd *r, const struct jnode *o, const void *p, struct io_ctx *c)
{
	(void)c;
	return check_figs(r, o, p);
}

static const struct field WINDOW_F[] = {
	{ .key = "figures", .type = FT_FIGS, .flags = FF_REQ | FF_GE0, .off = 0 },
	FHOOK("overlap_pct", 0, put_overlap_pct, NULL),
	FHOOK("exposed_comm_pct", 0, put_exposed_pct, NULL),
	FHOOK("utilization", 0, put_util, NULL),
	FHOOK("overlap_ratio", 0, put_overlap_ratio, NULL),
	FHOOK("tp_overlap_efficiency", 0, put_tp_eff, NULL),
	FHOOKC("collective_ms", 0, put_coll_ms, get_coll_ms, chk_coll_ms),
	FHOOKC("collective_exposed_ms", 0, put_coll_exp_ms, get_coll_exp_ms, chk_coll_exp_ms),
};
static const struct record REC_WINDOW = REC("window", struct ov_figures, WINDOW_F, NULL, check_window);

/* ---- step ------------------------------------------------------------------ */

static int has_rec(const void *p, const struct io_ctx *c)
{
	(void)p;
	return c->r->has_rec;
}

static void put_recorded(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	const struct step_full *s = p;
	(void)c;
	jw_obj(w, k);
	for (int q = 0; q < SR__COUNT; q++)
		jw_num(w, REC_KEYS[q], s->v.rec[q], q == SR_LOSS ? 8 : 6);
	jw_obj_end(w);
}

static int get_recorded(struct rd *r, const struct jnode *v, const char *k, void *p, struct io_ctx *c)
{
	struct step_full *s = p;
	if (!v)
		return 0;
	if (v->t != JN_OBJ)
		return io_fail(r, v, k, "expected an object");
	c->wr->has_rec = 1;
	for (int q = 0; q < SR__COUNT; q++) {
		const struct jnode *x = jdoc_get(v, REC_KEYS[q]);
		if (!x || x->t == JN_NULL)
			continue;
		if ((x->t != JN_INT && x->t != JN_DBL) || !isfinite(x->d))
			return io_fail(r, x, k, "%s: expected a number", REC_KEYS[q]);
		s->v.rec[q] = x->d;
	}
	return 0;
}

static int chk_recorded(struct rd *r, const struct jnode *v, const char *k, const void *p, struct io_ctx *c)
{
	const struct step_full *s = p;
	(void)c;
	for (int q = 0; q < SR__COUNT; q++)
		if (!isnan(s->v.rec[q]) && (!isfinite(s->v.rec[q]) || fabs(s->v.rec[q]) > ANALYSIS_MAX_NUM))
			return io_fail(r, v ? jdoc_get(v, REC_KEYS[q]) : NULL, k, "%s: %g is out of range", REC_KEYS[q],
				       s->v.rec[q]);
	return 0;
}

static void init_step(void *p, struct io_ctx *c, size_t i)
{
	struct step_full *s = p;
	(void)c, (void)i;
	for (int q = 0; q < SR__COUNT; q++)
		s->v.rec[q] = NAN;
}

static int check_step(struct rd *r, const struct jnode *o, const void *p, struct io_ctx *c)
{
	const struct step_full *s = p;
	(void)c;
	if (s->s.end_ns < s->s.start_ns)
		return io_fail(r, jdoc_get(o, "end_ns"), "end_ns", "the step ends (%lld) before it starts (%lld)",
			       (long long)s->s.end_ns, (long long)s->s.start_ns);
	if (s->v.f.window_ns != s->s.end_ns - s->s.start_ns)
		return io_fail(r, jdoc_get(o, "step_ms"), "step_ms", "%.6f ms is not the step's window, end_ns - "
			       "start_ns = %.6f ms", ms(s->v.f.window_ns), ms(s->s.end_ns - s->s.start_ns));
	return check_scalar_figs(r, o, &s->v.f); /* a step's JSON carries no per-collective figures */
}

/* A step whole (struct step_full): the rank keeps its number and window
 * in steps[] and its figures in the step store (overlap/steps.h), so the
 * rank's "steps" are written and read by the hooks below. */
static const struct field STEP_F[] = {
	F("step", FT_I64, FF_REQ, struct step_full, s.number),
	F("start_ns", FT_I64, FF_REQ | FF_TIME, struct step_full, s.start_ns),
	F("end_ns", FT_I64, FF_REQ | FF_TIME, struct step_full, s.end_ns),
	F("figures", FT_FIGS, FF_REQ | FF_GE0, struct step_full, v.f),
	{ .key = "overlap_pct", .type = FT_HOOK, .off = offsetof(struct step_full, v.f), .put = put_overlap_pct },
	F("host_bound", FT_BOOL, 0, struct step_full, v.host_bound),
	{ .key = "recorded", .type = FT_HOOK, .put = put_recorded, .get = get_recorded, .chk = chk_recorded,
	  .when = has_rec },
};
const struct record REC_STEP = REC("step", struct step_full, STEP_F, init_step, check_step);

static void put_steps(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	const struct rank_result *r = p;
	struct step_full s;
	jw_arr(w, k);
	for (size_t j = 0; j < r->nsteps; j++) {
		step_get(r, j, &s);
		jw_obj(w, NULL);
		io_write_fields(w, &REC_STEP, &s, c);
		jw_obj_end(w);
	}
	jw_arr_end(w);
}

/* Each step's values and rules, and theirs together: in time order, each
 * after the one before (windows tile, never overlap), numbers rising. */
static int chk_steps(struct rd *r, const struct jnode *v, const char *k, const void *p, struct io_ctx *c)
{
	const struct rank_result *rk = p;
	struct step_full s, prev;
	memset(&prev, 0, sizeof(prev));
	for (size_t j = 0; j < rk->nsteps && !r->failed; j++) {
		step_get(rk, j, &s);
		if (io_check_el(r, v, k, j, &REC_STEP, &s, c))
			break;
		if (j && (s.s.start_ns < prev.s.end_ns || s.s.number <= prev.s.number)) {
			const struct jnode *el = v && v->t == JN_ARR && j < v->n ? v->v[j] : NULL;
			char key[48];
			snprintf(key, sizeof(key), "%s[%zu].start_ns", k, j);
			return io_fail(r, el ? jdoc_get(el, "start_ns") : NULL, key, s.s.number <= prev.s.number ?
				       "step %lld follows step %lld (expected rising numbers)" :
				       "step %lld starts before step %lld ends (expected windows in time order)",
				       (long long)s.s.number, (long long)prev.s.number);
		}
		prev = s;
	}
	return r->failed ? -1 : 0;
}

/* The steps read whole, then split into steps[] and the store. */
static int get_steps(struct rd *r, const struct jnode *v, const char *k, void *p, struct io_ctx *c)
{
	struct rank_result *rk = p;
	struct step_full *full = NULL;
	size_t n = 0;
	if (!v)
		return io_fail(r, NULL, k, "missing");
	int st = io_read_arr(r, v, k, &REC_STEP, (void **)&full, &n, c);
	struct step_row *rows = xmalloc((n ? n : 1) * sizeof(*rows));
	free(rk->steps);
	rk->steps = xcalloc(n ? n : 1, sizeof(*rk->steps));
	rk->nsteps = n;
	for (size_t j = 0; j < n; j++) {
		rk->steps[j] = full[j].s;
		rows[j] = full[j].v;
	}
	steps_store_build(&rk->sv, rows, n);
	free(rows);
	free(full);
	return st;
}

/* ---- stream, collective, kernel rows ---------------------------------------- */

static void put_stream_util(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	jw_num(w, k, ratio(((const struct stream_row *)p)->busy_ns, c->r->total.window_ns), 6);
}

static const struct field STREAM_F[] = {
	F("stream", FT_I32, FF_REQ, struct stream_row, stream),
	F("busy_ms", FT_MS, FF_REQ | FF_GE0, struct stream_row, busy_ns),
	FHOOK("utilization", 0, put_stream_util, NULL),
	F("spans", FT_U64, 0, struct stream_row, spans),
	/* rule (the rank's check): busy within the rank's whole window */
};
const struct record REC_STREAM = REC("stream", struct stream_row, STREAM_F, NULL, NULL);

static const char *coll_name(int t)
{
	return coll_type_name((enum coll_type)t);
}

static const char *span_kind_name(int k)
{
	return kind_name((enum span_kind)k);
}

static void init_coll(void *p, struct io_ctx *c, size_t i)
{
	struct coll_row *x = p;
	(void)c, (void)i;
	x->group_size = -1;
	x->wait_share = x->algbw_gbps = x->busbw_gbps = x->algbw_kernel_gbps = x->busbw_kernel_gbps = NAN;
}

/* min, max and total of count calls agree: min <= max <= total, and
 * count x min <= total <= count x max (exact, in 128 bits). */
static int check_calls(struct rd *r, const struct jnode *o, uint64_t count, int64_t total, int64_t mn, int64_t mx)
{
	if (mn > mx)
		return io_fail(r, jdoc_get(o, "min_ms"), "min_ms", "the shortest call %.6f ms is longer than the "
			       "longest %.6f ms", ms(mn), ms(mx));
	if (mx > total)
		return io_fail(r, jdoc_get(o, "max_ms"), "max_ms", "the longest call %.6f ms exceeds the total %.6f ms",
			       ms(mx), ms(total));
	if ((__int128)mn * count > total || (__int128)mx * count < total)
		return io_fail(r, jdoc_get(o, "total_ms"), "total_ms", "%.6f ms is not the time of %llu calls of "
			       "%.6f to %.6f ms", ms(total), (unsigned long long)count, ms(mn), ms(mx));
	return 0;
}

static int check_coll(struct rd *r, const struct jnode *o, const void *p, struct io_ctx *c)
{
	const struct coll_row *x = p;
	if (x->exposed_ns > x->total_ns)
		return io_fail(r, jdoc_get(o, "exposed_ms"), "exposed_ms", "exposed %.6f ms exceeds the total %.6f ms",
			       ms(x->exposed_ns), ms(x->total_ns));
	if (x->matched > x->count)
		return io_fail(r, jdoc_get(o, "matched"), "matched", "%llu calls matched of %llu",
			       (unsigned long long)x->matched, (unsigned long long)x->count);
	if (io_xr(c) && x->wait_ns + x->transfer_ns > x->total_ns)
		return io_fail(r, jdoc_get(o, "transfer_ms"), "transfer_ms", "waiting %.6f ms and transfer %.6f ms "
			       "exceed the total %.6f ms", ms(x->wait_ns), ms(x->transfer_ns), ms(x->total_ns));
	return check_calls(r, o, x->count, x->total_ns, x->min_ns, x->max_ns);
}

#define CNUM(k, fl, m, d) FNUM(k, fl, struct coll_row, m, d)
static const struct field COLL_F[] = {
	{ .key = "type", .type = FT_ENUM, .flags = FF_REQ, .off = offsetof(struct coll_row, type),
	  .enum_name = coll_name, .enum_count = COLL__COUNT },
	F("process_group", FT_STR, 0, struct coll_row, pg),
	F("process_group_desc", FT_STR, FF_NZ, struct coll_row, pg_desc),
	F("process_group_ranks", FT_STR, FF_NZ, struct coll_row, pg_ranks),
	F("bytes", FT_U64, FF_REQ, struct coll_row, bytes),
	F("group_size", FT_INT, FF_GEM1 | FF_RANK, struct coll_row, group_size),
	F("count", FT_U64, FF_REQ | FF_POS, struct coll_row, count),
	F("total_ms", FT_MS, FF_REQ | FF_GE0, struct coll_row, total_ns),
	F("exposed_ms", FT_MS, FF_GE0, struct coll_row, exposed_ns),
	F("min_ms", FT_MS, FF_GE0, struct coll_row, min_ns),
	F("max_ms", FT_MS, FF_GE0, struct coll_row, max_ns),
	F("matched", FT_U64, 0, struct coll_row, matched),
	F("wait_ms", FT_MS, FF_XR | FF_GE0, struct coll_row, wait_ns),
	F("transfer_ms", FT_MS, FF_XR | FF_GE0, struct coll_row, transfer_ns),
	CNUM("wait_share", FF_SHARE, wait_share, 6),
	CNUM("algbw_gbps", FF_GE0, algbw_gbps, 4),
	CNUM("busbw_gbps", FF_GE0, busbw_gbps, 4),
	CNUM("algbw_kernel_gbps", FF_GE0, algbw_kernel_gbps, 4),
	CNUM("busbw_kernel_gbps", FF_GE0, busbw_kernel_gbps, 4),
};
const struct record REC_COLL = REC("collective", struct coll_row, COLL_F, init_coll, check_coll);

static int check_kernel(struct rd *r, const struct jnode *o, const void *p, struct io_ctx *c)
{
	const struct kernel_row *x = p;
	(void)c;
	return check_calls(r, o, x->count, x->total_ns, x->min_ns, x->max_ns);
}

static const struct field KERNEL_F[] = {
	F("name", FT_STR, FF_REQ, struct kernel_row, name),
	{ .key = "kind", .type = FT_ENUM, .flags = FF_LAX, .off = offsetof(struct kernel_row, kind),
	  .enum_name = span_kind_name, .enum_count = K__COUNT, .dflt_i = K_UNKNOWN },
	F("count", FT_U64, FF_REQ | FF_POS, struct kernel_row, count),
	F("total_ms", FT_MS, FF_REQ | FF_GE0, struct kernel_row, total_ns),
	F("min_ms", FT_MS, FF_GE0, struct kernel_row, min_ns),
	F("max_ms", FT_MS, FF_GE0, struct kernel_row, max_ns),
};
const struct record REC_KERNEL = REC("kernel", struct kernel_row, KERNEL_F, NULL, check_kernel);

/* ---- rank: wait, clock, named figures ---------------------------------------- */

static void put_wait_unc(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	const struct rank_result *r = p;
	jw_bool(w, k, analysis_uncertain(c->a, r->wait_ns, r->matched));
}

static void put_caused_unc(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	const struct rank_result *r = p;
	jw_bool(w, k, analysis_uncertain(c->a, r->caused_ns, r->matched));
}

/* the steps where this rank caused more waiting than the clock spread */
static void put_caused_steps(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	const struct analysis *a = c->a;
	(void)p;
	jw_arr(w, k);
	for (size_t q = 0; q < a->nxsteps; q++)
		if (a->xsteps[q].by_rank[c->ri] > 0 && a->xsteps[q].by_rank[c->ri] > a->clock_spread_ns)
			jw_int(w, NULL, a->xsteps[q].number);
	jw_arr_end(w);
}

void io_put_ranks(struct jw *w, const char *k, const int32_t *v, size_t n)
{
	jw_arr(w, k);
	for (size_t q = 0; q < n; q++)
		jw_int(w, NULL, v[q]);
	jw_arr_end(w);
}

int io_get_ranks(struct rd *r, const struct jnode *v, const char *k, int32_t **out, size_t *n)
{
	if (!v || v->t == JN_NULL)
		return 0;
	if (v->t != JN_ARR)
		return io_fail(r, v, k, "expected an array of ranks");
	*out = v->n ? xmalloc(v->n * sizeof(**out)) : NULL;
	for (size_t q = 0; q < v->n; q++) {
		if (v->v[q]->t != JN_INT || v->v[q]->i < 0 || v->v[q]->i > INT32_MAX)
			return io_fail(r, v->v[q], k, "[%zu]: expected a rank number", q);
		(*out)[(*n)++] = (int32_t)v->v[q]->i;
	}
	return 0;
}

/* its pipeline-stage neighbours: the ranks it sends to or receives from */
static void put_peers(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	const struct rank_result *r = p;
	(void)c;
	io_put_ranks(w, k, r->peers, r->npeers);
}

static int get_peers(struct rd *r, const struct jnode *v, const char *k, void *p, struct io_ctx *c)
{
	struct rank_result *x = p;
	(void)c;
	return io_get_ranks(r, v, k, &x->peers, &x->npeers);
}

static int chk_peers(struct rd *r, const struct jnode *v, const char *k, const void *p, struct io_ctx *c)
{
	const struct rank_result *x = p;
	(void)c;
	for (size_t q = 0; q < x->npeers; q++)
		if (x->peers[q] < 0 || x->peers[q] > ANALYSIS_MAX_RANK || (q && x->peers[q] <= x->peers[q - 1]))
			return io_fail(r, v && v->t == JN_ARR && q < v->n ? v->v[q] : v, k,
				       "[%zu]: %d is not a rank above the one before it", q, (int)x->peers[q]);
	return 0;
}

#define RW(k, ty, fl, m) F(k, ty, fl, struct rank_result, m)
static const struct field WAIT_F[] = {
	RW("matched_collectives", FT_U64, 0, matched),
	RW("wait_ms", FT_MS, FF_XR | FF_GE0, wait_ns),
	FHOOK("wait_uncertain", FF_XRONLY, put_wait_unc, NULL),
	RW("transfer_ms", FT_MS, FF_XR | FF_GE0, transfer_ns),
	RW("times_last", FT_U64, FF_XR, times_last),
	RW("caused_ms", FT_MS, FF_XR | FF_GE0, caused_ns),
	FHOOK("caused_uncertain", FF_XRONLY, put_caused_unc, NULL),
	RW("caused_collectives", FT_U64, FF_XRONLY, caused_colls),
	RW("lateness_ms", FT_MS, FF_XRONLY, lateness_ns),
	RW("caused_host_wait_excess_ms", FT_MS, FF_XRONLY, caused_host_excess_ns),
	RW("caused_busy_excess_ms", FT_MS, FF_XRONLY, caused_busy_excess_ns),
	FHOOK("caused_steps", FF_XRONLY, put_caused_steps, NULL),
	FHOOKC("p2p_peers", 0, put_peers, get_peers, chk_peers),
};
static const struct record REC_WAIT = REC("wait", struct rank_result, WAIT_F, NULL, NULL);

static const struct field CLOCK_F[] = {
	{ .key = "host", .type = FT_CHARS, .flags = FF_NULLOK, .off = offsetof(struct rank_result, host),
	  .size = sizeof(((struct rank_result *)0)->host) },
	RW("domain", FT_INT, FF_GE0 | FF_RANK, clock_domain),
	RW("offset_ms", FT_MSF, 0, clock_offset_ns),
	{ .key = "drift_ppm", .type = FT_NUM, .off = offsetof(struct rank_result, clock_drift), .dec = 4,
	  .scale = 1e6 },
	RW("t0_ns", FT_I64, FF_TIME, clock_t0_ns),
};
static const struct record REC_CLOCK = REC("clock", struct rank_result, CLOCK_F, NULL, NULL);

static void put_hta_overlap(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	const struct hta_figures *h = p;
	(void)c;
	jw_num(w, k, h->has_comm ? h->comm_comp_overlap_pct : NAN, 4);
}

static int get_hta_overlap(struct rd *r, const struct jnode *v, const char *k, void *p, struct io_ctx *c)
{
	struct hta_figures *h = p;
	(void)c;
	h->has_comm = v && v->t != JN_NULL;
	if (!h->has_comm)
		return 0;
	if ((v->t != JN_INT && v->t != JN_DBL) || !isfinite(v->d))
		return io_fail(r, v, k, "expected a number");
	if (v->d < 0 || v->d > 100)
		return io_fail(r, v, k, "expected a percentage in [0, 100], got %g", v->d);
	h->comm_comp_overlap_pct = v->d;
	return 0;
}

static int chk_hta_overlap(struct rd *r, const struct jnode *v, const char *k, const void *p, struct io_ctx *c)
{
	const struct hta_figures *h = p;
	(void)c;
	if (h->has_comm && !(h->comm_comp_overlap_pct >= 0 && h->comm_comp_overlap_pct <= 100))
		return io_fail(r, v, k, "expected a percentage in [0, 100], got %g", h->comm_comp_overlap_pct);
	return 0;
}

static void put_hta_pct(struct jw *w, const char *k, int64_t part, int64_t whole)
{
	jw_num(w, k, 100.0 * ratio(part, whole), 4);
}

static void put_hta_idle(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	(void)c;
	put_hta_pct(w, k, ((const struct hta_figures *)p)->idle_ns, ((const struct hta_figures *)p)->kernel_time_ns);
}

static void put_hta_comp(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	(void)c;
	put_hta_pct(w, k, ((const struct hta_figures *)p)->compute_ns, ((const struct hta_figures *)p)->kernel_time_ns);
}

static void put_hta_noncomp(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	(void)c;
	put_hta_pct(w, k, ((const struct hta_figures *)p)->non_compute_ns,
		    ((const struct hta_figures *)p)->kernel_time_ns);
}

#define HW(k, ty, m) F(k, ty, FF_GE0, struct hta_figures, m)
static const struct field HTA_F[] = {
	FHOOKC("comm_comp_overlap_pctg", 0, put_hta_overlap, get_hta_overlap, chk_hta_overlap),
	HW("kernel_time_ms", FT_MS, kernel_time_ns),
	HW("idle_time_ms", FT_MS, idle_ns),
	HW("compute_time_ms", FT_MS, compute_ns),
	HW("non_compute_time_ms", FT_MS, non_compute_ns),
	FHOOK("idle_time_pctg", 0, put_hta_idle, NULL),
	FHOOK("compute_time_pctg", 0, put_hta_comp, NULL),
	FHOOK("non_compute_time_pctg", 0, put_hta_noncomp, NULL),
	F("last_step_excluded", FT_BOOL, 0, struct hta_figures, last_step_excluded),
};
/* HTA's kernel time holds its idle, compute and non-compute time */
static int check_hta(struct rd *r, const struct jnode *o, const void *p, struct io_ctx *c)
{
	const struct hta_figures *h = p;
	(void)c;
	if (h->idle_ns > h->kernel_time_ns || h->compute_ns > h->kernel_time_ns ||
	    h->non_compute_ns > h->kernel_time_ns)
		return io_fail(r, jdoc_get(o, "kernel_time_ms"), "kernel_time_ms", "%.6f ms is less than its idle "
			       "%.6f, compute %.6f or non-compute %.6f ms", ms(h->kernel_time_ns), ms(h->idle_ns),
			       ms(h->compute_ns), ms(h->non_compute_ns));
	return 0;
}
static const struct record REC_HTA = REC("hta", struct hta_figures, HTA_F, NULL, check_hta);

#define TW(k, m) F(k, FT_MS, FF_GE0, struct ov_figures, m)
static const struct field TRACELENS_F[] = {
	TW("busy_time_ms", busy_ns),
	TW("computation_time_ms", compute_ns),
	TW("exposed_comm_time_ms", exposed_comm_ns),
	TW("exposed_memcpy_time_ms", exposed_memcpy_ns),
	TW("idle_time_ms", idle_ns),
	TW("total_comm_time_ms", comm_ns),
	TW("total_memcpy_time_ms", memcpy_ns),
	TW("total_time_ms", window_ns),
};
/* TraceLens' figures are the parts the file keeps of a window's: only the
 * rules between those */
static int check_tracelens(struct rd *r, const struct jnode *o, const void *p, struct io_ctx *c)
{
	const struct ov_figures *f = p;
	static const struct part_rule rules[] = {
		{ offsetof(struct ov_step_figures, busy_ns), offsetof(struct ov_step_figures, window_ns), "busy_time_ms",
		  "busy time", "total time" },
		{ offsetof(struct ov_step_figures, compute_ns), offsetof(struct ov_step_figures, busy_ns),
		  "computation_time_ms", "computation time", "busy time" },
		{ offsetof(struct ov_step_figures, comm_ns), offsetof(struct ov_step_figures, busy_ns),
		  "total_comm_time_ms", "communication time", "busy time" },
		{ offsetof(struct ov_step_figures, exposed_comm_ns), offsetof(struct ov_step_figures, comm_ns),
		  "exposed_comm_time_ms", "exposed communication", "communication time" },
		{ offsetof(struct ov_step_figures, exposed_memcpy_ns), offsetof(struct ov_step_figures, memcpy_ns),
		  "exposed_memcpy_time_ms", "exposed memcpy", "memcpy time" },
	};
	(void)c;
	for (size_t q = 0; q < N(rules); q++)
		if (sfig((const struct ov_step_figures *)f, rules[q].part) >
		    sfig((const struct ov_step_figures *)f, rules[q].whole))
			return io_fail(r, jdoc_get(o, rules[q].key), rules[q].key, "%s %.6f ms exceeds %s %.6f ms",
				       rules[q].what, ms(sfig((const struct ov_step_figures *)f, rules[q].part)), rules[q].of,
				       ms(sfig((const struct ov_step_figures *)f, rules[q].whole)));
	if (f->idle_ns != f->window_ns - f->busy_ns)
		return io_fail(r, jdoc_get(o, "idle_time_ms"), "idle_time_ms", "%.6f ms is not the total time less "
			       "the busy time", ms(f->idle_ns));
	return 0;
}
static const struct record REC_TRACELENS = REC("tracelens", struct ov_figures, TRACELENS_F, NULL, check_tracelens);

/* aorta's own overlap figures over the steps (the whole trace without steps) */
static const struct ov_figures *rank_steps_or_total(const struct rank_result *r)
{
	return r->nsteps ? &r->steps_sum : &r->total;
}

static void put_named_aorta(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	const struct ov_figures *x = rank_steps_or_total(p);
	(void)c;
	jw_obj(w, k);
	jw_ms(w, "overlap_ms", x->overlap_ns);
	jw_ms(w, "compute_ms", x->compute_ns);
	jw_num(w, "overlap_ratio", ratio(x->overlap_ns, x->compute_ns), 6);
	jw_obj_end(w);
}

static void put_named_tp(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	jw_obj(w, k);
	put_tp_eff(w, "overlap_efficiency", rank_steps_or_total(p), c);
	jw_obj_end(w);
}

static const struct field NAMED_F[] = {
	FOBJ("hta", 0, struct rank_result, hta, REC_HTA),
	FOBJ("tracelens", 0, struct rank_result, tracelens, REC_TRACELENS),
	FHOOK("aorta", 0, put_named_aorta, NULL),
	FHOOK("tp", 0, put_named_tp, NULL),
};
static const struct record REC_NAMED = REC("named", struct rank_result, NAMED_F, NULL, NULL);

/* ---- rank -------------------------------------------------------------------- */

static void put_step_stats(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	const struct rank_result *r = p;
	jw_obj(w, k);
	for (size_t q = 0; q < NFIGURES; q++) {
		struct stat4 st = steps_stat(r, c->a->opts.skip_steps, FIGURES[q].off);
		if (!st.n)
			continue;
		jw_obj(w, FIGURES[q].key);
		jw_num(w, "mean", st.mean / 1e6, 6);
		jw_num(w, "p50", st.p50 / 1e6, 6);
		jw_ms(w, "min", (int64_t)st.min);
		jw_ms(w, "max", (int64_t)st.max);
		jw_obj_end(w);
	}
	jw_obj_end(w);
}

/* over the kept steps, as the step figures */
static void put_host_bound_steps(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	const struct rank_result *r = p;
	size_t hb = 0;
	for (size_t j = r->nsteps - analysis_kept_steps(r, c->a->opts.skip_steps); j < r->nsteps; j++)
		hb += (size_t)step_host_bound(r, j);
	jw_uint(w, k, hb);
}

static int other_device_seen(const void *p, const struct io_ctx *c)
{
	(void)c;
	return ((const struct rank_result *)p)->other_device_spans != 0;
}

static int some_skipped(const void *p, const struct io_ctx *c)
{
	(void)c;
	return ((const struct rank_result *)p)->skipped != 0;
}

static int has_steps(const void *p, const struct io_ctx *c)
{
	(void)c;
	return ((const struct rank_result *)p)->nsteps != 0;
}

/* Formats are static strings of the readers; the first is a saved analysis's. */
static const char *const FORMATS[] = {
	"aorta-analysis", "kineto", "nsys", "rocpd", "rocprof-csv", "rocprof-json", "aorta-jsonl", "optable",
	"aorta-metrics", "unknown", NULL,
};

static void init_rank(void *p, struct io_ctx *c, size_t i)
{
	struct rank_result *r = p;
	(void)c;
	r->world_size = r->device = r->other_device = -1;
	r->clock_domain = (int)i;
	c->wr = r;
}

/* The rank's rules: its matched calls among its calls (last and causing
 * waiting in at most as many); each stream busy within its window; a skip
 * said with its first reason.  (A rank outside the world its trace reports
 * is a warning, not an impossibility: two runs mixed, a wrong world size.) */
static int check_rank(struct rd *r, const struct jnode *o, const void *p, struct io_ctx *c)
{
	const struct rank_result *x = p;
	const struct jnode *w = jdoc_get(o, "wait");
	uint64_t calls = 0;
	for (size_t q = 0; q < x->ncolls; q++)
		calls += x->colls[q].count;
	if (x->matched > calls)
		return io_fail(r, jdoc_get(w, "matched_collectives"), "wait.matched_collectives",
			       "%llu matched of %llu calls", (unsigned long long)x->matched, (unsigned long long)calls);
	if (io_xr(c) && (x->times_last > x->matched || x->caused_colls > x->matched))
		return io_fail(r, jdoc_get(w, "times_last"), "wait.times_last", "last %llu times and causing "
			       "waiting in %llu of %llu matched collectives", (unsigned long long)x->times_last,
			       (unsigned long long)x->caused_colls, (unsigned long long)x->matched);
	for (size_t q = 0; q < x->nstreams; q++)
		if (x->streams[q].busy_ns > x->total.window_ns)
			return io_fail(r, jdoc_get(o, "streams"), "streams", "stream %d busy %.6f ms exceeds the "
				       "rank's window %.6f ms", (int)x->streams[q].stream, ms(x->streams[q].busy_ns),
				       ms(x->total.window_ns));
	if (x->nsteps && (x->steps[0].start_ns > x->steps[x->nsteps - 1].end_ns ||
			  x->steps[x->nsteps - 1].end_ns - x->steps[0].start_ns > ANALYSIS_MAX_NS))
		return io_fail(r, jdoc_get(o, "steps"), "steps", "the steps span beyond the limits");
	if (x->skipped && !(x->skipped_first && *x->skipped_first))
		return io_fail(r, jdoc_get(o, "skipped_first"), "skipped_first", "%llu events skipped, the first "
			       "not said", (unsigned long long)x->skipped);
	return 0;
}

static const struct field RANK_F[] = {
	RW("rank", FT_INT, FF_REQ | FF_GE0 | FF_RANK, rank),
	RW("world_size", FT_INT, FF_GEM1 | FF_RANK, world_size),
	RW("device", FT_INT, FF_GEM1, device),
	RW("path", FT_STR, 0, path),
	{ .key = "format", .type = FT_SSTR, .off = offsetof(struct rank_result, format), .names = FORMATS },
	RW("device_events", FT_U64, 0, events),
	RW("host_events", FT_U64, 0, host_events),
	RW("skipped_events", FT_U64, 0, skipped),
	RW("other_device_events", FT_U64, FF_NZ, other_device_spans),
	{ .key = "other_device", .type = FT_INT, .flags = FF_GE0, .off = offsetof(struct rank_result, other_device),
	  .when = other_device_seen },
	{ .key = "skipped_first", .type = FT_STR, .off = offsetof(struct rank_result, skipped_first),
	  .when = some_skipped },
	FOBJ("total", FF_REQ, struct rank_result, total, REC_WINDOW),
	{ .key = "steps_total", .type = FT_OBJ, .off = offsetof(struct rank_result, steps_sum), .sub = &REC_WINDOW,
	  .when = has_steps },
	FHOOKC("steps", FF_REQ, put_steps, get_steps, chk_steps),
	FHOOK("step_stats", 0, put_step_stats, NULL),
	FHOOK("host_bound_steps", 0, put_host_bound_steps, NULL),
	FARR("streams", 0, struct rank_result, streams, nstreams, REC_STREAM),
	FARR("collectives", 0, struct rank_result, colls, ncolls, REC_COLL),
	FARR("top_kernels", 0, struct rank_result, kernels, nkernels, REC_KERNEL),
	FHERE("wait", REC_WAIT),
	FHERE("clock", REC_CLOCK),
	FHERE("named", REC_NAMED),
	/* the pack's alone: the calls for the join (their pg re-pointed to
	 * their row's, pack.c), and members never sent */
	{ .key = NULL, .type = FT_PACK, .off = offsetof(struct rank_result, inst),
	  .cnt = offsetof(struct rank_result, ninst), .size = sizeof(struct comm_inst) },
	{ .key = NULL, .type = FT_PACK, .off = offsetof(struct rank_result, ops),
	  .cnt = offsetof(struct rank_result, nops), .size = sizeof(struct wop) },
	{ .key = NULL, .type = FT_PACK, .off = offsetof(struct rank_result, peers),
	  .cnt = offsetof(struct rank_result, npeers), .size = sizeof(int32_t) },
	{ .key = NULL, .type = FT_PACK, .off = offsetof(struct rank_result, steps),
	  .cnt = offsetof(struct rank_result, nsteps), .size = sizeof(struct step_result) },
	{ .key = NULL, .type = FT_PACK, .off = offsetof(struct rank_result, sv.data),
	  .cnt = offsetof(struct rank_result, sv.ndata), .size = 1 },
	FPACK(struct rank_result, t),
	FPACK(struct rank_result, wait_set),
	FPACK(struct rank_result, exposed_set),
};
const struct record REC_RANK = REC("rank", struct rank_result, RANK_F, init_rank, check_rank);

/* ---- across ranks -------------------------------------------------------------- */

/* Index in a->r of a rank number, a->n when none (ranks are sorted). */
static size_t rank_index(const struct analysis *a, long long rank)
{
	for (size_t i = 0; i < a->n; i++)
		if (a->r[i].rank == rank)
			return i;
	return a->n;
}

static void put_by_rank(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	const struct xstep *x = p;
	jw_obj(w, k); /* the ranks that caused any */
	for (size_t i = 0; i < c->a->n; i++) {
		char key[32];
		if (x->by_rank[i] <= 0)
			continue;
		snprintf(key, sizeof(key), "%d", c->a->r[i].rank);
		jw_ms(w, key, x->by_rank[i]);
	}
	jw_obj_end(w);
}

static int chk_by_rank(struct rd *r, const struct jnode *v, const char *k, const void *p, struct io_ctx *c)
{
	const struct xstep *x = p;
	const struct analysis *a = io_an(c);
	for (size_t i = 0; i < a->n; i++)
		if (x->by_rank[i] < 0 || x->by_rank[i] > ANALYSIS_MAX_NS) {
			char key[32];
			snprintf(key, sizeof(key), "%d", a->r[i].rank);
			return io_fail(r, v ? jdoc_get(v, key) : NULL, k, "%s: %.6f ms is out of range (0 .. %.0f ms)",
				       key, ms(x->by_rank[i]), (double)ANALYSIS_MAX_NS / 1e6);
		}
	return 0;
}

static int get_by_rank(struct rd *r, const struct jnode *v, const char *k, void *p, struct io_ctx *c)
{
	struct xstep *x = p;
	if (!v)
		return 0;
	if (v->t != JN_OBJ)
		return io_fail(r, v, k, "expected an object");
	for (size_t q = 0; q < v->n; q++) {
		char *end;
		long rk = strtol(v->keys[q], &end, 10);
		size_t ri = *v->keys[q] && !*end ? rank_index(c->wa, rk) : c->wa->n;
		const struct jnode *y = v->v[q];
		if (ri == c->wa->n)
			return io_fail(r, y, k, "'%s' is not a rank of the analysis", v->keys[q]);
		if ((y->t != JN_INT && y->t != JN_DBL) || !isfinite(y->d) || fabs(y->d) > 9e9)
			return io_fail(r, y, k, "%s: expected a number of ms", v->keys[q]);
		if (y->d < 0)
			return io_fail(r, y, k, "%s: negative waiting %g ms", v->keys[q], y->d);
		x->by_rank[ri] = jdoc_ns(y);
	}
	return 0;
}

static void init_xstep(void *p, struct io_ctx *c, size_t i)
{
	struct xstep *x = p;
	(void)i;
	x->by_rank = xcalloc(c->wa->n ? c->wa->n : 1, sizeof(int64_t));
	x->straggler = -1;
	x->number = INT64_MIN;
}

static int check_xstep(struct rd *r, const struct jnode *o, const void *p, struct io_ctx *c)
{
	const struct xstep *x = p;
	if (x->straggler >= 0 && rank_index(io_an(c), x->straggler) == io_an(c)->n)
		return io_fail(r, jdoc_get(o, "straggler"), "straggler", "rank %d is not among the ranks",
			       x->straggler);
	if (x->caused_ns > x->total_caused_ns)
		return io_fail(r, jdoc_get(o, "straggler_caused_ms"), "straggler_caused_ms",
			       "%.6f ms exceeds all the waiting caused in the step, %.6f ms", ms(x->caused_ns),
			       ms(x->total_caused_ns));
	return 0;
}

static const struct field XSTEP_F[] = {
	F("step", FT_I64, FF_NEGNULL | FF_NULLOK, struct xstep, number),
	F("straggler", FT_INT, FF_NEGNULL | FF_NULLOK | FF_GE0 | FF_RANK, struct xstep, straggler),
	F("straggler_caused_ms", FT_MS, FF_GE0, struct xstep, caused_ns),
	F("caused_ms", FT_MS, FF_GE0, struct xstep, total_caused_ns),
	FHOOKC("caused_ms_by_rank", 0, put_by_rank, get_by_rank, chk_by_rank),
};
const struct record REC_XSTEP = REC("cross-rank step", struct xstep, XSTEP_F, init_xstep, check_xstep);

static void put_ref_rank(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	(void)p;
	jw_int(w, k, c->a->n ? c->a->r[0].rank : -1);
}

static void put_offsets(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	const struct analysis *a = c->a;
	(void)p;
	jw_arr(w, k);
	for (size_t i = 0; i < a->n; i++) {
		jw_obj(w, NULL);
		jw_int(w, "rank", a->r[i].rank);
		jw_int(w, "domain", a->r[i].clock_domain);
		jw_num(w, "offset_ms", (double)a->r[i].clock_offset_ns / 1e6, 6);
		jw_num(w, "drift_ppm", a->r[i].clock_drift * 1e6, 4);
		jw_obj_end(w);
	}
	jw_arr_end(w);
}

static const char *const METHODS[] = { "none", "collective-ends", "collective-ends+drift", "one-host", "file", NULL };

#define AW(k, ty, fl, m) F(k, ty, fl, struct analysis, m)
static const struct field XCLOCK_F[] = {
	{ .key = "method", .type = FT_SSTR, .off = offsetof(struct analysis, clock_method), .names = METHODS },
	FHOOK("reference_rank", 0, put_ref_rank, NULL),
	AW("samples", FT_U64, 0, clock_samples),
	AW("spread_ms", FT_MS, FF_GE0, clock_spread_ns),
	AW("spread_p50_ms", FT_MS, FF_GE0, clock_spread_p50_ns),
	FHOOK("offsets", 0, put_offsets, NULL),
};
static int check_xclock(struct rd *r, const struct jnode *o, const void *p, struct io_ctx *c)
{
	const struct analysis *a = p;
	(void)c;
	if (a->clock_spread_p50_ns > a->clock_spread_ns)
		return io_fail(r, jdoc_get(o, "spread_p50_ms"), "spread_p50_ms", "the median spread %.6f ms exceeds "
			       "the 95th percentile %.6f ms", ms(a->clock_spread_p50_ns), ms(a->clock_spread_ns));
	return 0;
}
static const struct record REC_XCLOCK = REC("clock", struct analysis, XCLOCK_F, NULL, check_xclock);

static void put_nranks(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	(void)p;
	jw_uint(w, k, c->a->n);
}

static void put_why(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	const struct analysis *a = p;
	if (io_xr(c))
		jw_null(w, k);
	else
		jw_str(w, k, a->no_cross_rank_why ? a->no_cross_rank_why : "no collective could be matched across ranks");
}

static int get_why(struct rd *r, const struct jnode *v, const char *k, void *p, struct io_ctx *c)
{
	struct analysis *a = p;
	(void)c;
	if (!v || v->t == JN_NULL)
		return 0;
	if (v->t != JN_STR)
		return io_fail(r, v, k, "expected a string or null");
	free(a->owned_why);
	a->owned_why = xstrdup(v->s);
	a->no_cross_rank_why = a->owned_why;
	return 0;
}

/* Share of matched collective time spent waiting, over all ranks. */
static void put_wait_share(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	const struct analysis *a = p;
	int64_t wt = 0, t = 0;
	for (size_t i = 0; i < a->n; i++) {
		wt += a->r[i].wait_ns;
		t += a->r[i].wait_ns + a->r[i].transfer_ns;
	}
	jw_num(w, k, io_xr(c) && t ? (double)wt / (double)t : NAN, 6);
}

/* all waiting caused over the ranks' summed time (the late-rank rule) */
static void put_caused_share(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	jw_num(w, k, io_xr(c) ? analysis_caused_time_share(p) : NAN, 6);
}

/* each figure's mean, min and max over the ranks' whole traces */
static void put_xfigures(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	const struct analysis *a = p;
	(void)c;
	jw_obj(w, k);
	for (size_t q = 0; q < NFIGURES && a->n; q++) {
		int64_t mn = INT64_MAX, mx = INT64_MIN;
		int rmx = -1, rmn = -1;
		double sum = 0;
		for (size_t i = 0; i < a->n; i++) {
			int64_t v = fig_value(&FIGURES[q], &a->r[i].total);
			sum += (double)v;
			if (v < mn) { mn = v; rmn = a->r[i].rank; }
			if (v > mx) { mx = v; rmx = a->r[i].rank; }
		}
		jw_obj(w, FIGURES[q].key);
		jw_num(w, "mean", sum / (double)a->n / 1e6, 6);
		jw_ms(w, "min", mn);
		jw_int(w, "min_rank", rmn);
		jw_ms(w, "max", mx);
		jw_int(w, "max_rank", rmx);
		jw_obj_end(w);
	}
	jw_obj_end(w);
}

static int check_across(struct rd *r, const struct jnode *o, const void *p, struct io_ctx *c)
{
	const struct analysis *a = p;
	static const char *const key[2] = { "late_rank", "top_rank" };
	for (int q = 0; q < 2; q++) {
		int rk = q ? a->top_rank : a->late_rank;
		if (rk >= 0 && rank_index(a, rk) == a->n)
			return io_fail(r, jdoc_get(o, key[q]), key[q], "rank %d is not among the ranks", rk);
	}
	if (a->late_rank >= 0 && a->top_rank >= 0 && a->late_rank != a->top_rank)
		return io_fail(r, jdoc_get(o, "late_rank"), "late_rank",
			       "the late rank %d is not the rank that caused the most waiting (%d)", a->late_rank,
			       a->top_rank);
	uint64_t calls = 0;
	int64_t caused = 0;
	for (size_t i = 0; i < a->n; i++) {
		for (size_t q = 0; q < a->r[i].ncolls; q++)
			calls += a->r[i].colls[q].count;
		caused = ns_sum(caused, a->r[i].caused_ns);
	}
	if (a->matched_groups > calls)
		return io_fail(r, jdoc_get(o, "matched_collectives"), "matched_collectives", "%llu matched of %llu "
			       "calls", (unsigned long long)a->matched_groups, (unsigned long long)calls);
	if (!io_xr(c))
		return 0;
	if (a->caused_ns != caused)
		return io_fail(r, jdoc_get(o, "waiting_caused_ms"), "waiting_caused_ms", "%.6f ms is not the ranks' "
			       "%.6f ms", ms(a->caused_ns), ms(caused));
	if (a->skew_p50_ns > a->skew_max_ns || a->skew_mean_ns > a->skew_max_ns)
		return io_fail(r, jdoc_get(o, "skew_max_ms"), "skew_max_ms", "%.6f ms is below the median %.6f or "
			       "the mean %.6f ms", ms(a->skew_max_ns), ms(a->skew_p50_ns), ms(a->skew_mean_ns));
	(void)c;
	return 0;
}

/* ---- across_ranks.what_if (overlap/whatif.h) ------------------------------------ */

/* A string that may be absent: null <-> NULL (FT_STR reads never give NULL). */
void io_put_nstr(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	const char *s = *(const char *const *)p;
	(void)c;
	if (s)
		jw_str(w, k, s);
	else
		jw_null(w, k);
}

int io_get_nstr(struct rd *r, const struct jnode *v, const char *k, void *p, struct io_ctx *c)
{
	(void)c;
	if (!v || v->t == JN_NULL)
		return 0;
	if (v->t != JN_STR)
		return io_fail(r, v, k, "expected a string or null");
	free(*(char **)p);
	*(char **)p = xstrdup(v->s);
	return 0;
}
#define FNSTR(k, st, m) { .key = k, .type = FT_HOOK, .off = offsetof(st, m), .put = io_put_nstr, .get = io_get_nstr }

static void init_wfix(void *p, struct io_ctx *c, size_t i)
{
	struct whatif_fix *f = p;
	(void)c, (void)i;
	f->rank = f->then_rank = -1;
	f->step_ms_if_fixed = f->gain_ms = f->gain_pct = f->then_gain_ms = f->then_gain_pct = NAN;
}

static int fix_has_then(const void *p, const struct io_ctx *c)
{
	(void)c;
	return ((const struct whatif_fix *)p)->then_rank >= 0;
}

static int fix_has_rank(const void *p, const struct io_ctx *c)
{
	(void)c;
	return ((const struct whatif_fix *)p)->rank >= 0;
}

static int fix_has_ranks(const void *p, const struct io_ctx *c)
{
	const char *s = ((const struct whatif_fix *)p)->ranks;
	(void)c;
	return s && *s;
}

static int fix_has_unknown(const void *p, const struct io_ctx *c)
{
	(void)c;
	return ((const struct whatif_fix *)p)->unknown != NULL;
}

/* |a - b| within tol, and a part in 10^12 of either (doubles of ms). */
static int near(double a, double b, double tol)
{
	double m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
	return fabs(a - b) <= tol + 1e-12 * m;
}

/* Each rank of a list "0,2,5" is a rank of the analysis; 0 if one is not. */
static int ranks_of_run(const struct analysis *a, const char *s, long *bad)
{
	while (*s) {
		char *end;
		long v = strtol(s, &end, 10);
		if (end == s || v < 0 || rank_index(a, v) == a->n) {
			*bad = end == s ? -1 : v;
			return 0;
		}
		s = *end == ',' ? end + 1 : end;
		if (*end && *end != ',') {
			*bad = -1;
			return 0;
		}
	}
	return 1;
}

/* A fix: its gain is the replayed step less the step if fixed, in ms and
 * in percent of the replayed step (so at most 100 %); a rank fix names a
 * rank of the run, a group fix ranks of the run. */
static int check_wfix(struct rd *r, const struct jnode *o, const void *p, struct io_ctx *c)
{
	const struct whatif_fix *f = p;
	const struct analysis *a = io_an(c);
	double rep = c->wi->replay_step_ms;
	long bad = 0;
	if (f->rank >= 0 && rank_index(a, f->rank) == a->n)
		return io_fail(r, jdoc_get(o, "rank"), "rank", "rank %d is not a rank of the run", f->rank);
	if (f->ranks && *f->ranks && !ranks_of_run(a, f->ranks, &bad))
		return bad < 0 ? io_fail(r, jdoc_get(o, "ranks"), "ranks", "'%.60s' is not a list of ranks", f->ranks)
			       : io_fail(r, jdoc_get(o, "ranks"), "ranks", "rank %ld is not a rank of the run", bad);
	if (!near(f->gain_ms, rep - f->step_ms_if_fixed, 2e-6))
		return io_fail(r, jdoc_get(o, "gain_ms"), "gain_ms", "%.6f ms is not the replayed step %.6f ms less "
			       "the step if fixed %.6f ms", f->gain_ms, rep, f->step_ms_if_fixed);
	if (!near(f->gain_pct, 100.0 * f->gain_ms / rep, 1e-4 + 1e-4 * (1 + fabs(f->gain_ms) / rep) / rep))
		return io_fail(r, jdoc_get(o, "gain_pct"), "gain_pct", "%.4f %% is not the gain %.6f ms of the "
			       "replayed step %.6f ms", f->gain_pct, f->gain_ms, rep);
	if (f->then_rank >= 0 && (rank_index(a, f->then_rank) == a->n || f->then_rank == f->rank))
		return io_fail(r, jdoc_get(o, "then_rank"), "then_rank", "rank %d is not another rank of the run",
			       f->then_rank);
	if (f->then_rank >= 0 && !near(f->then_gain_pct, 100.0 * f->then_gain_ms / rep,
				       1e-4 + 1e-4 * (1 + fabs(f->then_gain_ms) / rep) / rep))
		return io_fail(r, jdoc_get(o, "then_gain_pct"), "then_gain_pct", "%.4f %% is not the gain %.6f ms of "
			       "the replayed step %.6f ms", f->then_gain_pct, f->then_gain_ms, rep);
	return 0;
}

#define WFNUM(k, fl, m, d) FNUM(k, FF_REQ | FF_MSNUM | (fl), struct whatif_fix, m, d)
static const struct field WFIX_F[] = {
	F("fix", FT_STR, FF_REQ | FF_NONEMPTY, struct whatif_fix, what),
	{ .key = "rank", .type = FT_INT, .flags = FF_GE0 | FF_RANK, .off = offsetof(struct whatif_fix, rank),
	  .when = fix_has_rank },
	{ .key = "ranks", .type = FT_STR, .flags = FF_NONEMPTY, .off = offsetof(struct whatif_fix, ranks),
	  .when = fix_has_ranks },
	WFNUM("step_ms_if_fixed", FF_GE0, step_ms_if_fixed, 6),
	WFNUM("gain_ms", 0, gain_ms, 6),
	FNUM("gain_pct", FF_REQ | FF_LE100, struct whatif_fix, gain_pct, 4),
	{ .key = "ideal_unknown", .type = FT_HOOK, .off = offsetof(struct whatif_fix, unknown), .put = io_put_nstr,
	  .get = io_get_nstr, .when = fix_has_unknown },
	{ .key = "then_rank", .type = FT_INT, .flags = FF_GE0 | FF_RANK, .off = offsetof(struct whatif_fix, then_rank),
	  .when = fix_has_then },
	{ .key = "then_gain_ms", .type = FT_NUM, .flags = FF_MSNUM, .off = offsetof(struct whatif_fix, then_gain_ms),
	  .dec = 6, .when = fix_has_then },
	{ .key = "then_gain_pct", .type = FT_NUM, .flags = FF_LE100, .off = offsetof(struct whatif_fix, then_gain_pct),
	  .dec = 4, .when = fix_has_then },
};
#undef WFNUM
static const struct record REC_WFIX = REC("fix", struct whatif_fix, WFIX_F, init_wfix, check_wfix);

static void init_wstep(void *p, struct io_ctx *c, size_t i)
{
	struct whatif_step *st = p;
	(void)c, (void)i;
	st->measured_ms = st->replay_ms = st->ideal_ms = st->error_pct = NAN;
	st->best_ms_if_fixed = st->best_gain_ms = NAN;
}

static int step_has_best(const void *p, const struct io_ctx *c)
{
	(void)c;
	return ((const struct whatif_step *)p)->best != NULL;
}

/* Whether fix name s is one of the what-if's fixes. */
static int a_fix(const struct whatif *w, const char *s)
{
	const struct whatif_fix *v[3] = { w->by_rank, w->by_group, w->by_op };
	size_t n[3] = { w->nby_rank, w->nby_group, w->nby_op };
	for (int q = 0; q < 3; q++)
		for (size_t i = 0; i < n[q]; i++)
			if (v[q][i].what && !strcmp(v[q][i].what, s))
				return 1;
	return 0;
}

/* A step: a step of every rank; a reason exactly where it is not
 * reproduced; its best fix one of the fixes, whose gain (> 0, at most the
 * step) is the replayed step less the step if fixed. */
static int check_wstep(struct rd *r, const struct jnode *o, const void *p, struct io_ctx *c)
{
	const struct whatif_step *st = p;
	const struct analysis *a = io_an(c);
	for (size_t i = 0; i < a->n; i++) {
		size_t j = 0;
		while (j < a->r[i].nsteps && a->r[i].steps[j].number != st->number)
			j++;
		if (j == a->r[i].nsteps)
			return io_fail(r, jdoc_get(o, "step"), "step", "step %lld is not a step of rank %d",
				       (long long)st->number, a->r[i].rank);
	}
	if (!st->reproduced != (st->reason != NULL))
		return io_fail(r, jdoc_get(o, "reason"), "reason", st->reproduced ? "a reason for a reproduced step" :
			       "no reason why the step is not reproduced");
	if (!st->best)
		return 0;
	if (!a_fix(c->wi, st->best))
		return io_fail(r, jdoc_get(o, "best_fix"), "best_fix", "'%.60s' is none of the fixes", st->best);
	if (!(st->best_gain_ms > 0) || st->best_gain_ms > st->replay_ms + 1e-6 ||
	    !near(st->best_gain_ms, st->replay_ms - st->best_ms_if_fixed, 2e-6))
		return io_fail(r, jdoc_get(o, "best_gain_ms"), "best_gain_ms", "%.6f ms is not the replayed step "
			       "%.6f ms less the step if fixed %.6f ms, a gain above 0", st->best_gain_ms, st->replay_ms,
			       st->best_ms_if_fixed);
	return 0;
}

#define WSNUM(k, fl, m, d) FNUM(k, FF_REQ | (fl), struct whatif_step, m, d)
static const struct field WSTEP_F[] = {
	F("step", FT_I64, FF_REQ, struct whatif_step, number),
	WSNUM("measured_ms", FF_GE0 | FF_MSNUM, measured_ms, 6),
	WSNUM("replay_ms", FF_GE0 | FF_MSNUM, replay_ms, 6),
	WSNUM("ideal_ms", FF_GE0 | FF_MSNUM, ideal_ms, 6),
	WSNUM("error_pct", FF_GE0, error_pct, 4),
	F("reproduced", FT_BOOL, 0, struct whatif_step, reproduced),
	FNSTR("reason", struct whatif_step, reason),
	FNSTR("best_fix", struct whatif_step, best),
	{ .key = "best_step_ms_if_fixed", .type = FT_NUM, .flags = FF_REQ | FF_GE0 | FF_MSNUM,
	  .off = offsetof(struct whatif_step, best_ms_if_fixed), .dec = 6, .when = step_has_best },
	{ .key = "best_gain_ms", .type = FT_NUM, .flags = FF_REQ | FF_MSNUM, .off = offsetof(struct whatif_step, best_gain_ms),
	  .dec = 6, .when = step_has_best },
};
#undef WSNUM
static const struct record REC_WSTEP = REC("step", struct whatif_step, WSTEP_F, init_wstep, check_wstep);

static void init_wcp(void *p, struct io_ctx *c, size_t i)
{
	struct whatif_cp *x = p;
	(void)c, (void)i;
	x->stream = -1;
	x->ms = x->share = NAN;
}

static int check_wcp(struct rd *r, const struct jnode *o, const void *p, struct io_ctx *c)
{
	const struct whatif_cp *x = p;
	if (rank_index(io_an(c), x->rank) == io_an(c)->n)
		return io_fail(r, jdoc_get(o, "rank"), "rank", "rank %d is not a rank of the run", x->rank);
	return 0;
}

static const struct field WCP_F[] = {
	F("rank", FT_INT, FF_REQ | FF_GE0 | FF_RANK, struct whatif_cp, rank),
	F("stream", FT_I32, FF_NEGNULL | FF_NULLOK, struct whatif_cp, stream),
	F("op", FT_STR, FF_REQ | FF_NONEMPTY, struct whatif_cp, what),
	FNUM("ms_per_step", FF_REQ | FF_GE0 | FF_MSNUM, struct whatif_cp, ms, 6),
	FNUM("share", FF_REQ | FF_SHARE, struct whatif_cp, share, 6),
};
static const struct record REC_WCP = REC("critical_path", struct whatif_cp, WCP_F, init_wcp, check_wcp);

static void init_wrank(void *p, struct io_ctx *c, size_t i)
{
	struct whatif_rank *x = p;
	(void)c, (void)i;
	x->rank = -1;
	x->host_launch_ms = x->host_launch_min_ms = x->host_launch_max_ms = NAN;
	x->ideal_host_launch_ms = x->ideal_share = NAN;
}

/* A rank of the run, its host launch time within its range over the steps. */
static int check_wrank(struct rd *r, const struct jnode *o, const void *p, struct io_ctx *c)
{
	const struct whatif_rank *x = p;
	const struct analysis *a = io_an(c);
	if (rank_index(a, x->rank) == a->n)
		return io_fail(r, jdoc_get(o, "rank"), "rank", "rank %d is not a rank of the run", x->rank);
	if (isfinite(x->host_launch_ms) && !(x->host_launch_min_ms <= x->host_launch_ms + 1e-6 &&
					     x->host_launch_ms <= x->host_launch_max_ms + 1e-6))
		return io_fail(r, jdoc_get(o, "host_launch_ms"), "host_launch_ms", "%.6f ms is not within its range, "
			       "%.6f to %.6f ms", x->host_launch_ms, x->host_launch_min_ms, x->host_launch_max_ms);
	return 0;
}

#define WRNUM(k, fl, m) FNUM(k, FF_MSNUM | (fl), struct whatif_rank, m, 6)
static const struct field WRANK_F[] = {
	F("rank", FT_INT, FF_REQ | FF_GE0 | FF_RANK, struct whatif_rank, rank),
	WRNUM("host_launch_ms", FF_GE0, host_launch_ms),
	WRNUM("host_launch_min_ms", FF_GE0, host_launch_min_ms),
	WRNUM("host_launch_max_ms", FF_GE0, host_launch_max_ms),
	WRNUM("ideal_host_launch_ms", FF_GE0, ideal_host_launch_ms),
	FNUM("ideal_share", FF_SHARE, struct whatif_rank, ideal_share, 6),
};
#undef WRNUM
static const struct record REC_WRANK = REC("rank", struct whatif_rank, WRANK_F, init_wrank, check_wrank);

/* stages: {rank, stage} per rank (the replay keeps them by index in a->r) */
static void put_stages(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	const struct whatif *wi = p;
	jw_arr(w, k);
	for (size_t i = 0; i < wi->nstage && i < c->a->n; i++) {
		jw_obj(w, NULL);
		jw_int(w, "rank", c->a->r[i].rank);
		jw_int(w, "stage", wi->stage[i]);
		jw_obj_end(w);
	}
	jw_arr_end(w);
}

static int get_stages(struct rd *r, const struct jnode *v, const char *k, void *p, struct io_ctx *c)
{
	struct whatif *wi = p;
	const struct analysis *a = c->wa;
	if (!v || v->t == JN_NULL)
		return 0;
	if (v->t != JN_ARR)
		return io_fail(r, v, k, "expected an array");
	if (!v->n)
		return 0;
	wi->stage = xmalloc((a->n ? a->n : 1) * sizeof(int));
	wi->nstage = a->n;
	for (size_t i = 0; i < a->n; i++)
		wi->stage[i] = -1;
	for (size_t q = 0; q < v->n; q++) {
		const struct jnode *o = v->v[q], *rk = jdoc_get(o, "rank"), *sg = jdoc_get(o, "stage");
		if (o->t != JN_OBJ || !rk || rk->t != JN_INT || !sg || sg->t != JN_INT || sg->i < -1 || sg->i > INT_MAX)
			return io_fail(r, o, k, "[%zu]: expected {\"rank\": R, \"stage\": S}", q);
		size_t i = rank_index(a, rk->i);
		if (i == a->n)
			return io_fail(r, rk, k, "[%zu]: %lld is not a rank of the analysis", q, rk->i);
		wi->stage[i] = (int)sg->i;
	}
	return 0;
}

static int chk_stages(struct rd *r, const struct jnode *v, const char *k, const void *p, struct io_ctx *c)
{
	const struct whatif *wi = p;
	const struct analysis *a = io_an(c);
	for (size_t i = 0; i < wi->nstage && i < a->n; i++)
		if (wi->stage[i] < -1 || wi->stage[i] >= (int)a->n)
			return io_fail(r, v, k, "rank %d: stage %d is not a stage of %zu ranks", a->r[i].rank,
				       wi->stage[i], a->n);
	return 0;
}

static int wi_ok(const void *p, const struct io_ctx *c)
{
	(void)c;
	return ((const struct whatif *)p)->ok;
}

static int wi_not_ok(const void *p, const struct io_ctx *c)
{
	return !wi_ok(p, c);
}

_Static_assert(sizeof(size_t) == sizeof(uint64_t), "steps_used is read as a uint64_t");
#define WI(k, ty, fl, m) { .key = k, .type = ty, .flags = FF_REQ | (fl), .off = offsetof(struct whatif, m), \
			  .when = wi_ok }
#define WN(k, fl, m, d) { .key = k, .type = FT_NUM, .flags = FF_REQ | (fl), .off = offsetof(struct whatif, m), \
			  .dec = d, .when = wi_ok }
#define WA(k, m, c, s) { .key = k, .type = FT_ARR, .flags = FF_REQ, .off = offsetof(struct whatif, m), \
			 .cnt = offsetof(struct whatif, c), .sub = &s, .when = wi_ok }
static const struct field WHATIF_F[] = {
	F("ok", FT_BOOL, FF_REQ, struct whatif, ok),
	{ .key = "reason", .type = FT_STR, .flags = FF_REQ | FF_NONEMPTY, .off = offsetof(struct whatif, why),
	  .when = wi_not_ok },
	WI("steps_used", FT_U64, FF_POS, steps_used),
	WN("measured_step_ms", FF_POS | FF_MSNUM, measured_step_ms, 6),
	WN("replay_step_ms", FF_POS | FF_MSNUM, replay_step_ms, 6),
	WN("ideal_step_ms", FF_POS | FF_MSNUM, ideal_step_ms, 6),
	WN("slowdown", FF_POS, slowdown, 6),
	WN("rank_window_min_ms", FF_GE0 | FF_MSNUM, rank_window_min_ms, 6),
	WN("rank_window_max_ms", FF_GE0 | FF_MSNUM, rank_window_max_ms, 6),
	WN("replay_error_pct", FF_GE0, replay_error_pct, 4),
	WI("reproduced", FT_BOOL, 0, reproduced),
	WN("uncertainty_ms", FF_GE0 | FF_MSNUM, uncertainty_ms, 6),
	/* added within aorta.analysis/4: optional on read (an earlier file has none) */
	{ .key = "noise_floor_ms", .type = FT_NUM, .flags = FF_GE0 | FF_MSNUM, .off = offsetof(struct whatif, noise_floor_ms),
	  .dec = 6, .when = wi_ok },
	{ .key = "noise_floor_from", .type = FT_HOOK, .off = offsetof(struct whatif, noise_floor_from), .put = io_put_nstr,
	  .get = io_get_nstr, .when = wi_ok },
	{ .key = "step_sem_ms", .type = FT_NUM, .flags = FF_GE0 | FF_MSNUM, .off = offsetof(struct whatif, step_sem_ms),
	  .dec = 6, .when = wi_ok },
	WN("unexplained_ms", FF_GE0 | FF_MSNUM, unexplained_ms, 6),
	WN("unexplained_share", FF_SHARE, unexplained_share, 6),
	WI("verdict", FT_STR, FF_NONEMPTY, verdict),
	WA("by_rank", by_rank, nby_rank, REC_WFIX),
	WA("by_group", by_group, nby_group, REC_WFIX),
	WA("by_op", by_op, nby_op, REC_WFIX),
	{ .key = "stages", .type = FT_HOOK, .put = put_stages, .get = get_stages, .chk = chk_stages, .when = wi_ok },
	WA("steps", steps, nsteps, REC_WSTEP),
	WA("critical_path", cp, ncp, REC_WCP),
	{ .key = "ranks", .type = FT_ARR, .off = offsetof(struct whatif, ranks), .cnt = offsetof(struct whatif, nranks),
	  .sub = &REC_WRANK, .when = wi_ok }, /* added within /4: optional */
};

static void init_whatif(void *p, struct io_ctx *c, size_t i)
{
	struct whatif *wi = p;
	(void)c, (void)i;
	wi->measured_step_ms = wi->replay_step_ms = wi->ideal_step_ms = wi->slowdown = NAN;
	wi->replay_error_pct = wi->uncertainty_ms = wi->unexplained_ms = wi->unexplained_share = NAN;
	wi->rank_window_min_ms = wi->rank_window_max_ms = NAN;
	wi->noise_floor_ms = wi->step_sem_ms = NAN;
}
/* The what-if's rules (docs/metrics.md "What-if"): its step figures are
 * the means of its steps' (the ideal one, where every op at its ideal
 * replays longer than the step, the replayed step: an ideal is never
 * longer); slowdown = measured / ideal; the worst step's error, every step
 * reproduced or not; the unexplained share of the measured step (at most
 * 1); steps in number order, steps_used of them; the critical path's
 * shares at most the whole. */
static int check_whatif(struct rd *r, const struct jnode *o, const void *p, struct io_ctx *c)
{
	const struct whatif *w = p;
	(void)c;
	if (!w->ok)
		return 0;
	if (w->nsteps != w->steps_used)
		return io_fail(r, jdoc_get(o, "steps"), "steps", "%zu steps, steps_used says %zu", w->nsteps,
			       w->steps_used);
	double sm = 0, sr = 0, si = 0, err = 0;
	int repro = 1;
	for (size_t s = 0; s < w->nsteps; s++) {
		sm += w->steps[s].measured_ms;
		sr += w->steps[s].replay_ms;
		si += w->steps[s].ideal_ms;
		if (w->steps[s].error_pct > err)
			err = w->steps[s].error_pct;
		repro &= w->steps[s].reproduced != 0;
		if (s && w->steps[s].number <= w->steps[s - 1].number)
			return io_fail(r, jdoc_get(o, "steps"), "steps", "step %lld follows step %lld (expected rising "
				       "numbers)", (long long)w->steps[s].number, (long long)w->steps[s - 1].number);
	}
	double n = (double)w->nsteps, ideal = si / n < sr / n ? si / n : sr / n;
	if (!near(w->measured_step_ms, sm / n, 2e-6))
		return io_fail(r, jdoc_get(o, "measured_step_ms"), "measured_step_ms", "%.6f ms is not the mean of "
			       "its steps, %.6f ms", w->measured_step_ms, sm / n);
	if (!near(w->replay_step_ms, sr / n, 2e-6))
		return io_fail(r, jdoc_get(o, "replay_step_ms"), "replay_step_ms", "%.6f ms is not the mean of its "
			       "steps, %.6f ms", w->replay_step_ms, sr / n);
	if (w->ideal_step_ms > w->replay_step_ms + 1e-6)
		return io_fail(r, jdoc_get(o, "ideal_step_ms"), "ideal_step_ms", "the ideal step %.6f ms is longer "
			       "than the replayed one, %.6f ms", w->ideal_step_ms, w->replay_step_ms);
	if (!near(w->ideal_step_ms, ideal, 2e-6))
		return io_fail(r, jdoc_get(o, "ideal_step_ms"), "ideal_step_ms", "%.6f ms is not the mean of its "
			       "steps (or the replayed step where that is shorter), %.6f ms", w->ideal_step_ms, ideal);
	if (!near(w->slowdown, w->measured_step_ms / w->ideal_step_ms,
		  1e-6 + 1e-6 * (1 + w->slowdown) / w->ideal_step_ms))
		return io_fail(r, jdoc_get(o, "slowdown"), "slowdown", "%.6f is not measured / ideal = %.6f / %.6f",
			       w->slowdown, w->measured_step_ms, w->ideal_step_ms);
	if (!near(w->replay_error_pct, err, 1e-4))
		return io_fail(r, jdoc_get(o, "replay_error_pct"), "replay_error_pct", "%.4f %% is not its worst "
			       "step's, %.4f %%", w->replay_error_pct, err);
	if (!w->reproduced != !repro)
		return io_fail(r, jdoc_get(o, "reproduced"), "reproduced", repro ? "false, yet every step is "
			       "reproduced" : "true, yet a step is not");
	double ux = w->unexplained_ms / w->measured_step_ms;
	if (!near(w->unexplained_share, ux < 1 ? ux : 1, 1e-6 + 1e-6 * (1 + ux) / w->measured_step_ms))
		return io_fail(r, jdoc_get(o, "unexplained_share"), "unexplained_share", "%.6f is not unexplained / "
			       "measured = %.6f / %.6f (at most 1)", w->unexplained_share, w->unexplained_ms,
			       w->measured_step_ms);
	double cs = 0;
	for (size_t q = 0; q < w->ncp; q++)
		cs += w->cp[q].share;
	if (cs > 1 + 1e-6 * (double)(w->ncp + 1))
		return io_fail(r, jdoc_get(o, "critical_path"), "critical_path", "its shares add up to %.6f, more "
			       "than the whole path", cs);
	return 0;
}
static const struct record REC_WHATIF = REC("what_if", struct whatif, WHATIF_F, init_whatif, check_whatif);

static void put_whatif(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	whatif_wait((struct analysis *)p); /* a what-if still running (WHATIF_BACKGROUND) */
	const struct whatif *wi = ((const struct analysis *)p)->whatif;
	if (!wi) {
		jw_null(w, k);
		return;
	}
	jw_obj(w, k);
	io_write_fields(w, &REC_WHATIF, wi, c);
	jw_obj_end(w);
}

static int chk_whatif(struct rd *r, const struct jnode *v, const char *k, const void *p, struct io_ctx *c)
{
	const struct analysis *a = p;
	if (!a->whatif)
		return 0;
	struct io_ctx cc = *c;
	cc.wi = a->whatif;
	return io_check_obj(r, v, k, &REC_WHATIF, a->whatif, &cc);
}

static int get_whatif(struct rd *r, const struct jnode *v, const char *k, void *p, struct io_ctx *c)
{
	struct analysis *a = p;
	if (!v || v->t == JN_NULL)
		return 0;
	a->whatif = xcalloc(1, sizeof(*a->whatif));
	REC_WHATIF.init(a->whatif, c, 0);
	return io_read_obj(r, v, k, &REC_WHATIF, a->whatif, c);
}

static const struct field ACROSS_F[] = {
	FHOOK("ranks", 0, put_nranks, NULL),
	AW("late_rank", FT_INT, FF_XR | FF_NEGNULL | FF_NULLOK | FF_GEM1 | FF_RANK, late_rank),
	FNUM("late_share", FF_XR | FF_SHARE, struct analysis, late_share, 6),
	AW("top_rank", FT_INT, FF_XR | FF_NEGNULL | FF_NULLOK | FF_GEM1 | FF_RANK, top_rank),
	AW("matched_collectives", FT_U64, 0, matched_groups),
	AW("matched_by_seq", FT_U64, 0, matched_by_seq),
	AW("unmatched_calls", FT_U64, 0, unmatched_calls),
	AW("p2p_peer_unknown", FT_U64, FF_NZ, p2p_peer_unknown),
	AW("p2p_bad_peers", FT_U64, FF_NZ, p2p_bad_peers),
	AW("unknown_type_calls", FT_U64, FF_NZ, unknown_type_calls),
	AW("unknown_type_matched", FT_U64, FF_NZ, unknown_type_matched),
	AW("incomplete_collectives", FT_U64, 0, incomplete_groups),
	AW("size_mismatches", FT_U64, 0, size_mismatch),
	AW("clocks_aligned", FT_BOOL, 0, clocks_aligned),
	FHOOK("no_cross_rank_reason", 0, put_why, get_why),
	FHOOK("wait_share", 0, put_wait_share, NULL),
	AW("waiting_caused_ms", FT_MS, FF_XR | FF_GE0, caused_ns),
	FHOOK("waiting_caused_time_share", 0, put_caused_share, NULL),
	AW("skew_mean_ms", FT_MS, FF_XR | FF_GE0, skew_mean_ns),
	AW("skew_p50_ms", FT_MS, FF_XR | FF_GE0, skew_p50_ns),
	AW("skew_max_ms", FT_MS, FF_XR | FF_GE0, skew_max_ns),
	FHERE("clock", REC_XCLOCK),
	FARR("steps", FF_XR, struct analysis, xsteps, nxsteps, REC_XSTEP),
	FHOOK("figures", 0, put_xfigures, NULL),
	FHOOKC("what_if", 0, put_whatif, get_whatif, chk_whatif),
};
const struct record REC_ACROSS = REC("across_ranks", struct analysis, ACROSS_F, NULL, check_across);

/* ---- the analysis -------------------------------------------------------------- */

static void put_schema(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	(void)p, (void)c;
	jw_str(w, k, ANALYSIS_SCHEMA);
}

static int get_schema(struct rd *r, const struct jnode *v, const char *k, void *p, struct io_ctx *c)
{
	(void)p, (void)c;
	if (!v)
		return io_fail(r, NULL, k, "missing");
	if (v->t != JN_STR)
		return io_fail(r, v, k, "expected a string");
	if (strcmp(v->s, "aorta.analysis/1") && strcmp(v->s, "aorta.analysis/2") && strcmp(v->s, "aorta.analysis/3") &&
	    strcmp(v->s, "aorta.analysis/4"))
		return io_fail(r, v, k, "expected 'aorta.analysis/1' to '/4', got '%s'", v->s);
	return 0;
}

static void put_tool(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	(void)p, (void)c;
	jw_obj(w, k);
	jw_str(w, "name", "aorta");
	jw_str(w, "version", AORTA_VERSION);
	jw_obj_end(w);
}

void io_put_strs(struct jw *w, const char *k, char *const *v, size_t n)
{
	jw_arr(w, k);
	for (size_t i = 0; i < n; i++)
		jw_str(w, NULL, v[i]);
	jw_arr_end(w);
}

int io_get_strs(struct rd *r, const struct jnode *v, const char *k, char ***out, size_t *n)
{
	if (!v)
		return 0;
	if (v->t != JN_ARR)
		return io_fail(r, v, k, "expected an array");
	*out = xcalloc(v->n ? v->n : 1, sizeof(**out));
	for (size_t i = 0; i < v->n; i++) {
		if (v->v[i]->t != JN_STR)
			return io_fail(r, v->v[i], k, "[%zu]: expected a string", i);
		(*out)[(*n)++] = xstrdup(v->v[i]->s);
	}
	return 0;
}

static void put_inputs(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	const struct analysis *a = p;
	(void)c;
	io_put_strs(w, k, a->inputs, a->ninputs);
}

static int get_inputs(struct rd *r, const struct jnode *v, const char *k, void *p, struct io_ctx *c)
{
	struct analysis *a = p;
	(void)c;
	return io_get_strs(r, v, k, &a->inputs, &a->ninputs);
}

static int cmp_rank(const void *x, const void *y)
{
	const struct rank_result *a = x, *b = y;
	return (a->rank > b->rank) - (a->rank < b->rank);
}

/* The ranks sorted (cross-rank steps index them as a->r), at least one,
 * each once; then the cross-rank object. */
static int get_across(struct rd *r, const struct jnode *v, const char *k, void *p, struct io_ctx *c)
{
	struct analysis *a = p;
	const struct jnode *rk = jdoc_get(c->root, "ranks");
	if (!a->n && !a->fr) /* Flight Recorder dumps alone: no rank with a timeline */
		return io_fail(r, rk, "ranks", "holds no rank");
	qsort(a->r, a->n, sizeof(*a->r), cmp_rank);
	for (size_t i = 1; i < a->n; i++)
		if (a->r[i].rank == a->r[i - 1].rank)
			return io_fail(r, rk, "ranks", "rank %d appears twice", a->r[i].rank);
	if (!v)
		return 0;
	if (v->t != JN_OBJ)
		return io_fail(r, v, k, "expected an object");
	if (io_read_obj(r, v, k, &REC_ACROSS, a, c))
		return -1;
	if (a->late_rank >= 0 && a->top_rank >= 0 && a->late_rank == a->top_rank &&
	    rank_index(a, a->late_rank) < a->n && !analysis_waiting_material(a))
		a->late_rank = -1; /* saved before the materiality rule */
	return 0;
}

static int chk_across(struct rd *r, const struct jnode *v, const char *k, const void *p, struct io_ctx *c)
{
	return io_check_obj(r, v, k, &REC_ACROSS, p, c);
}

static void put_across(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	jw_obj(w, k);
	io_write_fields(w, &REC_ACROSS, p, c);
	jw_obj_end(w);
}

static const struct field OPTIONS_F[] = {
	AW("skip_steps", FT_INT, FF_GE0, opts.skip_steps),
	FNUM("host_bound_pct", FF_PCT, struct analysis, opts.host_bound_pct, 2),
};
static const struct record REC_OPTIONS = REC("options", struct analysis, OPTIONS_F, NULL, NULL);

static void init_analysis(void *p, struct io_ctx *c, size_t i)
{
	struct analysis *a = p;
	(void)c, (void)i;
	a->late_rank = a->top_rank = -1;
	a->late_share = NAN;
	a->clock_method = METHODS[0];
	a->opts.host_bound_pct = 30.0;
	a->opts.top_kernels = 10;
}

static const struct field ANALYSIS_F[] = {
	FHOOK("schema", FF_REQ, put_schema, get_schema),
	FHOOK("tool", 0, put_tool, NULL),
	FHERE("options", REC_OPTIONS),
	FHOOK("inputs", 0, put_inputs, get_inputs),
	{ .key = "flight_recorder", .type = FT_HOOK, .put = io_put_fr, .get = io_get_fr, .when = io_has_fr },
	FARR("ranks", FF_REQ, struct analysis, r, n, REC_RANK),
	FHOOKC("across_ranks", 0, put_across, get_across, chk_across),
};
const struct record REC_ANALYSIS = REC("analysis", struct analysis, ANALYSIS_F, init_analysis, NULL);
