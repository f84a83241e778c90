/*
 * result.c - struct whatif from the replays: the unmodified replay
 * against the measured steps, the critical path, the figures and the best
 * fix of each step; and its release.
 */
#include "overlap/whatif/private.h"
#include "base/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct whatif *wi_none(const char *why)
{
	struct whatif *w = xcalloc(1, sizeof(*w));
	w->why = xstrdup(why);
	return w;
}

/* Rank i's ops of step index q the last replay left where they were. */
static size_t left_in_step(const struct whatif_ctx *c, const struct replay_state *ws, size_t i, int32_t q)
{
	const struct rank_input *k = &c->k[i];
	size_t n = 0;
	for (size_t s = 0; s < k->nstr; s++)
		for (int32_t j = ws->k[i].s[s].head; j >= 0; j = next_on_stream(k, j, s))
			n += ot_step(&k->t, (size_t)j) == q;
	return n;
}

/* Measured step times, the unmodified replay against them (per step: the
 * worst rank's error, the reason when over REPRO_PCT) and the critical path. */
void wi_base_replay(const struct whatif_ctx *c, const struct replay_state *ws, size_t v, struct whatif *w, const double *meas,
			const double *rep, size_t left)
{
	struct path_table cp = { 0 };
	double *rwin = xcalloc(c->n ? c->n : 1, sizeof(*rwin));
	w->nsteps = c->nsteps;
	w->steps = xcalloc(c->nsteps ? c->nsteps : 1, sizeof(*w->steps));
	for (size_t s = 0; s < c->nsteps; s++) {
		struct whatif_step *st = &w->steps[s];
		st->number = c->stepno[s];
		st->measured_ms = meas[s];
		st->replay_ms = rep[s];
		double worst = 0;
		size_t sleft = 0; /* ops of this step the replay could not reach */
		for (size_t i = 0; i < c->n; i++) {
			int32_t q = c->sidx[i][s];
			const struct step_result *sr = &c->a->r[i].steps[q];
			const struct step_times *b = &ws->k[i].b[(size_t)q * LANES_MAX + v];
			double m = (double)(sr->end_ns - sr->start_ns), r = (double)(b->we - b->ws);
			rwin[i] += m / 1e6 / (double)c->nsteps; /* the rank's mean window (the step's definition) */
			double e = m > 0 ? 100.0 * fabs(r - m) / m : 0;
			if (e > worst)
				worst = e;
			if (left)
				sleft += left_in_step(c, ws, i, q);
		}
		st->error_pct = worst;
		/* a step with ops left where the trace has them is not replayed,
		 * whatever its window: no fix can be weighed there */
		st->reproduced = worst <= REPRO_PCT && !sleft;
		if (!st->reproduced) {
			char b[256];
			if (sleft)
				snprintf(b, sizeof(b), "the replay stalled with %zu ops of this step left where the trace "
					 "has them (%zu in all): a match or an inferred dependency contradicts the trace's "
					 "order", sleft, left);
			else if (left)
				snprintf(b, sizeof(b), "the replay stalled in another step with %zu ops left: a match or "
					 "an inferred dependency contradicts the trace's order", left);
			else if (c->unexplained)
				snprintf(b, sizeof(b), "%llu ops start later than their stream, launch and any other "
					 "stream's end explain (a dependency the trace does not show)",
					 (unsigned long long)c->unexplained);
			else
				snprintf(b, sizeof(b), "the collectives' transfers do not reproduce the ends (calls "
					 "matched across steps or clocks off by more than the spread)");
			st->reason = xstrdup(b);
		}
		if (worst > w->replay_error_pct)
			w->replay_error_pct = worst;
	}
	wi_path_walk(c, ws, v, &cp);
	w->reproduced = 1;
	for (size_t s = 0; s < c->nsteps; s++)
		w->reproduced &= w->steps[s].reproduced;
	w->rank_window_min_ms = INFINITY;
	w->rank_window_max_ms = 0;
	for (size_t i = 0; i < c->n; i++) {
		w->rank_window_min_ms = fmin(w->rank_window_min_ms, rwin[i]);
		w->rank_window_max_ms = fmax(w->rank_window_max_ms, rwin[i]);
	}
	free(rwin);
	/* the critical path: its pieces by share, the largest first (at most 12) */
	for (size_t x = 0; x < cp.n; x++)
		for (size_t y = x + 1; y < cp.n; y++)
			if (cp.e[y].ns > cp.e[x].ns) {
				struct path_piece tmp = cp.e[x];
				cp.e[x] = cp.e[y];
				cp.e[y] = tmp;
			}
	w->ncp = cp.n < 12 ? cp.n : 12;
	w->cp = xcalloc(w->ncp ? w->ncp : 1, sizeof(*w->cp));
	for (size_t q = 0; q < w->ncp; q++) {
		char b[64];
		w->cp[q].rank = c->a->r[cp.e[q].ri].rank;
		w->cp[q].stream = cp.e[q].stream;
		w->cp[q].what = xstrdup(wi_cat_name(cp.e[q].cat, b, sizeof(b)));
		w->cp[q].ms = (double)cp.e[q].ns / 1e6 / (double)(c->nsteps ? c->nsteps : 1);
		w->cp[q].share = cp.total ? (double)cp.e[q].ns / (double)cp.total : NAN;
	}
	free(cp.e);
}

struct whatif_fix *wi_take_fixes(struct fix_eval *v, size_t n)
{
	struct whatif_fix *f = xcalloc(n ? n : 1, sizeof(*f));
	for (size_t q = 0; q < n; q++)
		f[q] = v[q].f;
	return f;
}

/* The noise floor a gain must exceed (whatif.h): the largest of 1 % of the
 * replayed step, the clock uncertainty, the replay's own error of the
 * step (|replayed - measured|).  Not the part of the ideal's gain that
 * rests on guessed dependencies (guessed_ms, whatif.c): an upper bound
 * (every guess wrong) that on the device pairs is near the whole gain
 * (ddp_gpu_fwd_r1: 6.2 of 6.9 ms) where the prediction is within 2.4 %
 * of the measured counterfactual, so it would call checked gains noise.  Beside it, the step's own spread: the
 * standard error of the measured step over the steps used (sample standard
 * deviation / sqrt(n); 0 with one step).  It is not part of the floor: a
 * replay is deterministic and a fix's gain is paired step by step, so a
 * gain the steps' spread exceeds is still the replay's answer, but one a
 * single run cannot confirm (the summary says so beside such a gain). */
static void noise_floor(struct whatif *w, const double *meas, size_t n)
{
	w->step_sem_ms = std_error(meas, n);
	struct { double v; const char *from; } p[3] = {
		{ 0.01 * w->replay_step_ms, "1 % of the step" },
		{ w->uncertainty_ms, "the clock uncertainty" },
		{ fabs(w->replay_step_ms - w->measured_step_ms), "the replay's error of the step" },
	};
	int b = 0;
	for (int q = 1; q < 3; q++)
		if (p[q].v > p[b].v)
			b = q;
	w->noise_floor_ms = p[b].v;
	free(w->noise_floor_from);
	w->noise_floor_from = xstrdup(p[b].from);
}

/* Per rank, over the steps used (docs/metrics.md "Host launch time"): the
 * sum of its launches' host gaps per step (the replay's gap: launch minus
 * the previous launch, after a synchronisation launch minus the end of the
 * op it waited for), the same with every gap at its slot's lower median
 * over the class (the host-gap fix: wi_gap_fixed of SC_CAT WC_HOST) and the
 * share of that ideal its own gaps set.  After wi_build_slots. */
void wi_rank_hosts(const struct whatif_ctx *c, struct whatif *w)
{
	w->nranks = c->n;
	w->ranks = xcalloc(c->n ? c->n : 1, sizeof(*w->ranks));
	double *per = xmalloc((c->nsteps ? c->nsteps : 1) * sizeof(double));
	for (size_t i = 0; i < c->n; i++) {
		const struct rank_input *k = &c->k[i];
		struct whatif_rank *x = &w->ranks[i];
		int32_t *sof = xmalloc((k->nbs ? k->nbs : 1) * sizeof(*sof)); /* step index -> step used, -1 */
		int32_t *pos = xcalloc(k->nstr ? k->nstr : 1, sizeof(*pos));
		for (size_t q = 0; q < k->nbs; q++)
			sof[q] = -1;
		for (size_t s = 0; s < c->nsteps; s++)
			sof[c->sidx[i][s]] = (int32_t)s;
		double gi = 0, set = 0, slotted = 0;
		size_t nl = 0;
		uint32_t run = 0;
		for (size_t s = 0; s < c->nsteps; s++)
			per[s] = 0;
		for (size_t j = 0; j < k->n; j++) {
			size_t sq = op_stream(k, j);
			int32_t slot = op_slot(c, k, j, sq, pos[sq]++);
			int32_t q = ot_step_at(&k->t, &run, j);
			if (!(k->flags[j] & OPF_LAUNCH) || q < 0 || (size_t)q >= k->nbs || sof[q] < 0)
				continue;
			int64_t g = op_gap(k, j);
			nl++;
			per[sof[q]] += (double)g;
			int64_t m = slot >= 0 ? c->med_all_g[slot] : g;
			gi += (double)m;
			if (slot >= 0) {
				slotted += (double)m;
				set += g == m ? (double)m : 0;
			}
		}
		free(pos);
		free(sof);
		x->rank = k->r->rank;
		x->host_launch_ms = x->host_launch_min_ms = x->host_launch_max_ms = NAN;
		x->ideal_host_launch_ms = x->ideal_share = NAN;
		if (!nl)
			continue; /* no launch known (an op table without launch times) */
		x->host_launch_ms = wi_mean(per, c->nsteps) / 1e6;
		x->host_launch_min_ms = INFINITY;
		x->host_launch_max_ms = -INFINITY;
		for (size_t s = 0; s < c->nsteps; s++) {
			x->host_launch_min_ms = fmin(x->host_launch_min_ms, per[s] / 1e6);
			x->host_launch_max_ms = fmax(x->host_launch_max_ms, per[s] / 1e6);
		}
		x->ideal_host_launch_ms = gi / 1e6 / (double)c->nsteps;
		x->ideal_share = slotted > 0 ? set / slotted : 0;
	}
	free(per);
}

/* The what-if's step figures from the measured, unmodified and ideal steps. */
void wi_figures(const struct whatif_ctx *c, struct whatif *w, const double *meas, const double *rep,
			   const double *ideal)
{
	w->ok = 1;
	w->steps_used = c->nsteps;
	w->uncertainty_ms = (double)c->a->clock_spread_ns / 1e6;
	w->measured_step_ms = wi_mean(meas, c->nsteps);
	double ux = 0;
	for (size_t s = 0; s < c->nsteps; s++)
		for (size_t i = 0; i < c->n; i++)
			ux += (double)c->k[i].unx[c->sidx[i][s]];
	for (size_t i = 0; i < c->n; i++) {
		w->deps_guessed += c->k[i].ndepk[DEPK_GUESS];
		w->deps_recorded += c->k[i].ndepk[DEPK_RECORD];
		w->deps_table += c->k[i].ndepk[DEPK_TABLE];
		w->deps_schedule += c->k[i].ndepk[DEPK_SCHED];
	}
	w->unexplained_ms = ux / 1e6 / (double)c->nsteps / (double)c->n;
	w->unexplained_share = w->measured_step_ms > 0 ? w->unexplained_ms / w->measured_step_ms : 0;
	if (w->unexplained_share > 1)
		w->unexplained_share = 1;
	w->replay_step_ms = wi_mean(rep, c->nsteps);
	w->ideal_step_ms = wi_mean(ideal, c->nsteps);
	/* an ideal is never longer than the replayed step (host gaps take their
	 * ideal either way; a rank whose trace starts a step later leaves the
	 * others' first step without peers): then the replayed step is it */
	if (w->ideal_step_ms > w->replay_step_ms)
		w->ideal_step_ms = w->replay_step_ms;
	w->slowdown = w->ideal_step_ms > 0 ? w->measured_step_ms / w->ideal_step_ms : NAN;
	w->guessed_share = isnan(w->guessed_ms) ? NAN : w->replay_step_ms > 0 ? fmin(1, w->guessed_ms / w->replay_step_ms) : 0;
	noise_floor(w, meas, c->nsteps);
}

/* Per step: its ideal and the fix worth most in it. */
void wi_step_bests(const struct whatif_ctx *c, struct whatif *w, const double *rep, const double *ideal,
		       const struct fix_eval *v, size_t nv)
{
	for (size_t s = 0; s < c->nsteps; s++) {
		struct whatif_step *st = &w->steps[s];
		st->ideal_ms = ideal[s];
		int bq = -1;
		for (size_t q = 0; q < nv; q++)
			if (bq < 0 || v[q].steps[s] < v[bq].steps[s])
				bq = (int)q;
		if (bq >= 0 && rep[s] - v[bq].steps[s] > 0) {
			st->best = xstrdup(v[bq].f.what);
			st->best_ms_if_fixed = v[bq].steps[s];
			st->best_gain_ms = rep[s] - v[bq].steps[s];
		}
	}
}

void whatif_free(struct whatif *w)
{
	if (!w)
		return;
	struct whatif_fix *f[3] = { w->by_rank, w->by_group, w->by_op };
	size_t n[3] = { w->nby_rank, w->nby_group, w->nby_op };
	for (int k = 0; k < 3; k++) {
		for (size_t q = 0; q < n[k]; q++) {
			free(f[k][q].what);
			free(f[k][q].ranks);
			free(f[k][q].unknown);
		}
		free(f[k]);
	}
	for (size_t s = 0; s < w->nsteps; s++) {
		free(w->steps[s].reason);
		free(w->steps[s].best);
	}
	free(w->steps);
	for (size_t q = 0; q < w->ncp; q++)
		free(w->cp[q].what);
	free(w->cp);
	free(w->stage);
	free(w->why);
	free(w->verdict);
	free(w->noise_floor_from);
	free(w->ranks);
	free(w);
}
