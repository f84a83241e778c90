/*
 * fields_whatif.c - the record tables of the analysis's
 * across_ranks.what_if object (fields.h; the what-if of overlap/whatif.h):
 *
 *   what_if = {ok, why | the figures (measured, replayed and ideal step,
 *     slowdown, uncertainty, unexplained delays, the ranks' windows),
 *     verdict, by_rank, by_group, by_op: [fix], steps: [step],
 *     critical_path: [piece], stages}
 *
 * with each record's rules (a fix's gain is the replayed step minus the
 * step if fixed, at most 100 %; the figures are the means of the steps;
 * ranks are the run's), which check.c runs on reading and before writing.
 */
#include "analysis_io/analysis_io.h"
#include "analysis_io/fields.h"
#include "analysis_io/fields_def.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "overlap/whatif.h"

static void init_wfix(void *p, struct io_ctx *c, size_t i)
{
	struct whatif_fix *f = p;
	(void)c, (void)i;
	f->rank = f->then_rank = -1;
	f->step_ms_if_fixed = f->gain_ms = f->gain_pct = f->then_gain_ms = f->then_gain_pct = f->gain_sem_ms = NAN;
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
		if (end == s || v < 0 || io_rank_index(a, v) == a->n) {
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
	if (f->rank >= 0 && io_rank_index(a, f->rank) == a->n)
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
	if (f->then_rank >= 0 && (io_rank_index(a, f->then_rank) == a->n || f->then_rank == f->rank))
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
	/* added within aorta.analysis/4: optional on read */
	{ .key = "gain_sem_ms", .type = FT_NUM, .flags = FF_GE0 | FF_MSNUM, .off = offsetof(struct whatif_fix, gain_sem_ms),
	  .dec = 6 },
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
	if (io_rank_index(io_an(c), x->rank) == io_an(c)->n)
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
	if (io_rank_index(a, x->rank) == a->n)
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
		size_t i = io_rank_index(a, rk->i);
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
/* fields added after the what-if's first schema: optional on reading */
#define WO(k, fl, m, d) { .key = k, .type = FT_NUM, .flags = (fl), .off = offsetof(struct whatif, m), \
			  .dec = d, .when = wi_ok }
#define WU(k, m) { .key = k, .type = FT_U64, .flags = 0, .off = offsetof(struct whatif, m), .when = wi_ok }
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
	WO("noise_floor_ms", FF_GE0 | FF_MSNUM, noise_floor_ms, 6),
	{ .key = "noise_floor_from", .type = FT_HOOK, .off = offsetof(struct whatif, noise_floor_from), .put = io_put_nstr,
	  .get = io_get_nstr, .when = wi_ok },
	WO("step_sem_ms", FF_GE0 | FF_MSNUM, step_sem_ms, 6),
	WN("unexplained_ms", FF_GE0 | FF_MSNUM, unexplained_ms, 6),
	WN("unexplained_share", FF_SHARE, unexplained_share, 6),
	WO("nodelay_step_ms", FF_GE0 | FF_MSNUM, nodelay_step_ms, 6),
	WO("unexplained_step_ms", FF_GE0 | FF_MSNUM, unexplained_step_ms, 6),
	WO("unexplained_step_share", FF_SHARE, unexplained_step_share, 6),
	WO("guessed_ms", FF_GE0 | FF_MSNUM, guessed_ms, 6),
	WO("guessed_share", FF_SHARE, guessed_share, 6),
	WO("pooled_step_ms", FF_POS | FF_MSNUM, pooled_step_ms, 6),
	WO("slowdown_pooled", FF_POS, slowdown_pooled, 6),
	{ .key = "launch_delays_out", .type = FT_BOOL, .flags = 0, .off = offsetof(struct whatif, launch_delays_out),
	  .when = wi_ok },
	WU("deps_guessed", deps_guessed),
	WU("deps_recorded", deps_recorded),
	WU("deps_table", deps_table),
	WU("deps_schedule", deps_schedule),
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
	wi->nodelay_step_ms = wi->unexplained_step_ms = wi->unexplained_step_share = NAN;
	wi->guessed_ms = wi->guessed_share = NAN;
	wi->pooled_step_ms = wi->slowdown_pooled = NAN;
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
	if (isfinite(w->pooled_step_ms) != isfinite(w->slowdown_pooled) ||
	    (isfinite(w->pooled_step_ms) && !near(w->slowdown_pooled, w->measured_step_ms / w->pooled_step_ms,
						   1e-6 + 1e-6 * (1 + w->slowdown_pooled) / w->pooled_step_ms)))
		return io_fail(r, jdoc_get(o, "slowdown_pooled"), "slowdown_pooled", "%.6f is not measured / "
			       "pooled ideal = %.6f / %.6f", w->slowdown_pooled, w->measured_step_ms, w->pooled_step_ms);
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

void io_put_whatif(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	const struct whatif *wi = ((const struct analysis *)p)->whatif;
	if (!wi) {
		jw_null(w, k);
		return;
	}
	jw_obj(w, k);
	io_write_fields(w, &REC_WHATIF, wi, c);
	jw_obj_end(w);
}

int io_chk_whatif(struct rd *r, const struct jnode *v, const char *k, const void *p, struct io_ctx *c)
{
	const struct analysis *a = p;
	if (!a->whatif)
		return 0;
	struct io_ctx cc = *c;
	cc.wi = a->whatif;
	return io_check_obj(r, v, k, &REC_WHATIF, a->whatif, &cc);
}

int io_get_whatif(struct rd *r, const struct jnode *v, const char *k, void *p, struct io_ctx *c)
{
	struct analysis *a = p;
	if (!v || v->t == JN_NULL)
		return 0;
	a->whatif = xcalloc(1, sizeof(*a->whatif));
	REC_WHATIF.init(a->whatif, c, 0);
	return io_read_obj(r, v, k, &REC_WHATIF, a->whatif, c);
}

