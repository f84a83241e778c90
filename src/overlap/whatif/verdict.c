/*
 * verdict.c - the fix the verdict names and the verdict sentence: the
 * best gain when it is material, else why none is (time that would be
 * idle, a group whose ideal is unknown, delays nothing explains).
 */
#include "overlap/whatif/private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double whatif_material_ms(const struct whatif *w)
{
	if (w->noise_floor_ms > 0)
		return w->noise_floor_ms;
	double pct = 0.01 * w->replay_step_ms; /* a saved analysis without it */
	return pct > w->uncertainty_ms ? pct : w->uncertainty_ms;
}

int whatif_nothing(const struct whatif *w, double g)
{
	return !(fabs(g) > whatif_material_ms(w));
}

int whatif_fix_unsteady(const struct whatif_fix *x)
{
	return x->gain_sem_ms > 0 && x->gain_ms <= GAIN_SEM_K * x->gain_sem_ms;
}

const struct whatif_rank *whatif_rank_of(const struct whatif *w, int rank)
{
	for (size_t i = 0; w && i < w->nranks; i++)
		if (w->ranks[i].rank == rank)
			return &w->ranks[i];
	return NULL;
}

double whatif_window_spread(const struct whatif *w)
{
	return w && w->rank_window_max_ms >= w->rank_window_min_ms ? w->rank_window_max_ms - w->rank_window_min_ms
								    : NAN;
}

const struct whatif_fix *whatif_best(const struct whatif *w)
{
	const struct whatif_fix *v[3] = { w->by_rank, w->by_group, w->by_op }, *best = NULL;
	size_t n[3] = { w->nby_rank, w->nby_group, w->nby_op };
	for (int k = 0; k < 3; k++)
		for (size_t q = 0; q < n[k]; q++)
			if ((!best || v[k][q].gain_ms > best->gain_ms) && !(v[k][q].rank >= 0 && v[k][q].unknown))
				best = &v[k][q]; /* a rank whose ideal is unknown is never the answer */
	/* the narrowest fix that gets nearly all of the best gain: a rank
	 * before a group, a group before an op type on every rank */
	for (int k = 0; best && k < 2; k++) {
		const struct whatif_fix *nb = NULL;
		for (size_t q = 0; q < n[k]; q++)
			if ((!nb || v[k][q].gain_ms > nb->gain_ms) && !(v[k][q].rank >= 0 && v[k][q].unknown))
				nb = &v[k][q];
		if (nb && nb->gain_ms >= NARROW_SHARE * best->gain_ms)
			return nb;
	}
	return best;
}

/* The gain of fix e over the complete steps (every step but the trace's
 * last, whose window ends at its last end, not at a next step's start),
 * mean ms; *wgain: how much sooner their work ends (the latest end of a
 * step's ops over the ranks).  NAN without a complete step. */
static double complete_gain(const struct whatif_ctx *c, const struct fix_eval *e, double *wgain)
{
	size_t nc = c->nsteps - 1;
	double g = 0, wg = 0;
	for (size_t s = 0; s < nc; s++) {
		g += c->rep[s] - e->steps[s];
		wg += c->rep_wend[s] - e->wend[s];
	}
	*wgain = nc ? wg / (double)nc : NAN;
	return nc ? g / (double)nc : NAN;
}

/* Where no fix is material: the fix that would end the complete steps'
 * work soonest without shortening them (the time saved would be idle: the
 * next step starts when its host launches it), as a clause for the
 * verdict into u; empty when none ends them materially sooner. */
static void idle_note(const struct whatif_ctx *c, const struct fix_eval *v, size_t nv, double lim, char *u, size_t un)
{
	u[0] = 0;
	int q = -1;
	double bi = 0, bw = 0;
	for (size_t x = 0; c->nsteps >= 2 && x < nv; x++) {
		double wg, g = complete_gain(c, &v[x], &wg);
		if (wg - g > lim && wg - g > bi) {
			bi = wg - g;
			bw = wg;
			q = (int)x;
		}
	}
	if (q < 0)
		return;
	int sync = 0;
	for (size_t i = 0; i < c->n && !sync; i++)
		sync = c->k[i].hassync;
	size_t l = c->nsteps - 1;
	double tail = c->rep[l] - v[q].steps[l];
	int n = snprintf(u, un, "; fixing %s would end each step's GPU work %.1f ms sooner, but each step starts "
			 "when its host launches it, not when the GPUs finish%s, so the time saved would be idle",
			 v[q].f.what, bw, sync ? "" : " (no synchronisation in the traces waits for the GPU)");
	if (tail > lim && n > 0 && (size_t)n < un)
		snprintf(u + n, un - (size_t)n, "; only the traces' last step, whose window ends at its last kernel, "
			 "would be shorter (%.1f ms to %.1f ms)", c->rep[l], v[q].steps[l]);
}

/* Where no fix is material: a group whose ideal is unknown (no peer
 * outside it) and whose ranks hold at least half the critical path, as a
 * clause for the verdict into u (empty when none): the step may wait on a
 * slowdown the replay cannot see. */
static void unknown_note(const struct whatif *w, const struct fix_eval *v, size_t nv, char *u, size_t un)
{
	u[0] = 0;
	double best = 0;
	for (size_t x = 0; x < nv; x++) {
		if (!v[x].f.unknown || (!v[x].f.ranks && v[x].f.rank < 0))
			continue;
		double sh = 0;
		for (size_t q = 0; q < w->ncp; q++) {
			if (!v[x].f.ranks) { /* a rank whose trace is incomplete (wi_isolate_incomplete) */
				if (v[x].f.rank == w->cp[q].rank && isfinite(w->cp[q].share))
					sh += w->cp[q].share;
				continue;
			}
			for (const char *p = v[x].f.ranks; *p;) {
				char *e;
				long r = strtol(p, &e, 10);
				if (e == p)
					break;
				if (r == w->cp[q].rank && isfinite(w->cp[q].share))
					sh += w->cp[q].share;
				p = *e == ',' ? e + 1 : e;
			}
		}
		if (sh >= 0.5 && sh > best && !v[x].f.ranks) {
			best = sh;
			snprintf(u, un, "; %s holds %.0f %% of the critical path, but %s: its ideal is unknown",
				 v[x].f.what, 100.0 * sh, v[x].f.unknown);
		} else if (sh >= 0.5 && sh > best) {
			best = sh;
			snprintf(u, un, "; %s (ranks %s) holds %.0f %% of the critical path, but no rank outside it "
				 "runs its ops: its ideal is unknown, so a slowdown all its ranks carry is not seen",
				 v[x].f.what, v[x].f.ranks, 100.0 * sh);
		}
	}
}

/* The verdict: the best fix when its gain is material (beyond 1 % of the
 * step and the clock uncertainty, over all steps and over the complete
 * steps), for a rank with its cause. */
void wi_verdict(struct whatif_ctx *c, struct whatif *w, const struct whatif_fix *best, double rep_mean,
		    const struct fix_eval *v, size_t nv)
{
	char b[1400], u[320] = "", idle[400] = "", unk[300] = "";
	double lim = whatif_material_ms(w); /* rep_mean is w->replay_step_ms */
	double gain = best ? best->gain_ms : 0;
	/* a gain that lies in the trace's last step alone is not a step's gain */
	const char *over = "of the step";
	const struct fix_eval *eb = NULL;
	for (size_t x = 0; best && x < nv; x++)
		if (v[x].f.what == best->what)
			eb = &v[x];
	double wg;
	if (eb && c->nsteps >= 2 && gain > lim && !(complete_gain(c, eb, &wg) > lim)) {
		const struct fix_eval *m = NULL; /* the most a complete step gains */
		for (size_t y = 0; y < nv; y++)
			if (!m || complete_gain(c, &v[y], &wg) > complete_gain(c, m, &wg))
				m = &v[y];
		best = &m->f;
		gain = complete_gain(c, m, &wg);
		over = "of a complete step";
	}
	/* delays nothing explains are replayed as fixed: when they outweigh
	 * the material threshold and the best gain, no answer is confident */
	if (!w->launch_delays_out && w->unexplained_share >= UNX_SHARE && w->unexplained_ms > lim &&
	    w->unexplained_ms >= gain)
		snprintf(u, sizeof(u), "not conclusive: %.3g ms per step (%.0f %% of the step) are delays the "
			 "trace does not explain, kept fixed in every replay, so a fix that would shorten them "
			 "is not seen; ", w->unexplained_ms, 100.0 * w->unexplained_share);
	else if (w->unexplained_step_share >= UNX_SHARE && w->unexplained_step_ms > lim &&
		 w->unexplained_step_ms >= gain)
		snprintf(u, sizeof(u), "not conclusive: %.3g ms of the step (%.0f %%) rest on delays the trace "
			 "does not explain (the step replayed without them is that much shorter), so a fix that "
			 "would shorten them is not seen; ", w->unexplained_step_ms, 100.0 * w->unexplained_step_share);
	if (!best || !(gain > lim)) {
		double pct = best && rep_mean > 0 ? 100.0 * gain / rep_mean : 0;
		int some = best && pct >= 0.05;
		idle_note(c, v, nv, lim, idle, sizeof(idle));
		unknown_note(w, v, nv, unk, sizeof(unk));
		snprintf(b, sizeof(b), "%sno single fix is worth more than %.1f %% %s%s%s%s%s%s", u, some ? pct : 0.0, over,
			 some ? " (the most: " : "", some ? best->what : "", some ? ")" : "", idle, unk);
		w->verdict = xstrdup(b);
		return;
	}
	const char *cause = "";
	if (best->rank >= 0) { /* its host gaps alone against its GPU work alone */
		int ri = wi_rank_index(c->a, best->rank);
		uint8_t *mask = xcalloc(c->n, 1);
		mask[ri] = 1;
		struct scenario h = { .type = SC_SET, .mask = mask, .single = ri, .part = PART_HOST },
				d = { .type = SC_SET, .mask = mask, .single = ri, .part = PART_DUR };
		struct fix_eval e2[2] = { 0 };
		struct fix_jobs j = { 0 };
		wi_add_job(&j, 0, h, mask, c->n);
		wi_add_job(&j, 1, d, mask, c->n);
		wi_run_jobs(c, e2, &j, rep_mean);
		double gh = e2[0].f.gain_ms, gd = e2[1].f.gain_ms; /* rep_mean - the mean step */
		cause = gh >= gd ? "; its host is the cause" : "; its GPU work is the cause";
		for (int q = 0; q < 2; q++) {
			free(e2[q].steps);
			free(e2[q].wend);
		}
		free(mask);
	}
	/* a step the ranks' windows disagree on by more than the gain: the
	 * gain is smaller than the step's own definition (a one-step trace
	 * whose ranks' windows run from 11 to 19 ms), and says so */
	char poor[240] = "";
	double spread = whatif_window_spread(w);
	if (spread > best->gain_ms)
		snprintf(poor, sizeof(poor), "; but the ranks' step windows differ by %.1f ms (%.1f to %.1f ms, each "
			 "rank's mean over the step%s used), more than this gain: the step is poorly defined", spread,
			 w->rank_window_min_ms, w->rank_window_max_ms, c->nsteps == 1 ? "" : "s");
	char steady[240] = "";
	if (whatif_fix_unsteady(best))
		snprintf(steady, sizeof(steady), "; but its gain varies from step to step (standard error %.2f ms over %zu "
			 "steps): one run cannot tell it from noise", best->gain_sem_ms, c->nsteps);
	snprintf(b, sizeof(b), "%sfixing %s would make the step %.0f %% faster (%.1f ms to %.1f ms)%s%s%s", u, best->what,
		 best->gain_pct, w->measured_step_ms, w->measured_step_ms - best->gain_ms, cause, poor, steady);
	w->verdict = xstrdup(b);
}
