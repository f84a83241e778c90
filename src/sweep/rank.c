/*
 * rank.c - trials to per-cell statistics, verdicts against the baseline,
 * the ranking, the best cell, the confound check and the environment diffs.
 *
 * The rule (docs/sweep.md).  A cell's step time is the median over its ok
 * trials of each trial's step time; its noise is its trial range (max -
 * min).  Against the baseline, noise = max(range of the cell, range of the
 * baseline, threshold_pct % of the baseline's median); the cell is better
 * when its median is lower than the baseline's by more than that noise,
 * worse when higher by more, else similar.  With 3 trials each a rank test
 * (Mann-Whitney) cannot reach p < 0.05 (its smallest two-sided p is 0.1),
 * so it could never call anything better; the range rule is stricter than
 * "the ranges do not overlap" only by the threshold, and it says the same
 * with 3 trials as with 10.  A cell is noisy when its range exceeds
 * noisy_pct % of its median, or when some of its trials failed.
 *
 * Confound: the baseline cell is run once more after every other trial;
 * when that step time falls outside the baseline's first range widened by
 * threshold_pct % of its median on each side, the machine drifted during
 * the sweep and every verdict is suspect (drift is flagged).
 */
#include "sweep/rank.h"
#include "base/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *verdict_name(enum verdict v)
{
	switch (v) {
	case V_BASELINE: return "baseline";
	case V_BETTER: return "better";
	case V_WORSE: return "worse";
	case V_SIMILAR: return "similar";
	default: return "no data";
	}
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(double), cmp_d);
	return pctl_sorted(v, n, 0.5); /* base/stats.h */
}

enum verdict sweep_compare(const struct cell_stats *a, const struct cell_stats *b, double threshold_pct,
			   double *noise_ms)
{
	if (!a->nok || !b->nok || !isfinite(a->median) || !isfinite(b->median)) {
		if (noise_ms)
			*noise_ms = NAN;
		return V_NODATA;
	}
	double noise = fmax(fmax(a->range, b->range), threshold_pct / 100.0 * a->median);
	if (noise_ms)
		*noise_ms = noise;
	double d = b->median - a->median;
	if (d < -noise)
		return V_BETTER;
	if (d > noise)
		return V_WORSE;
	return V_SIMILAR;
}

/* median of one double field over the ok trials */
static double med_field(struct trial *const *tv, size_t n, size_t off)
{
	double *v = xcalloc(n + 1, sizeof(double));
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		double x = *(const double *)((const char *)tv[i] + off);
		if (tv[i]->status == TR_OK && isfinite(x))
			v[k++] = x;
	}
	double m = median(v, k);
	free(v);
	return m;
}

static void cell_stats_of(const struct sweep *s, size_t c, struct cell_stats *st)
{
	const struct recipe *r = &s->r;
	struct trial **tv = xcalloc((size_t)r->trials + 1, sizeof(struct trial *));
	size_t n = 0;
	for (int k = 0; k < r->trials; k++)
		if (s->t[c][k].status != TR_NONE)
			tv[n++] = &s->t[c][k];
	memset(st, 0, sizeof(*st));
	st->ntrials = n;
	double *v = xcalloc(n + 1, sizeof(double)), ovh = 0;
	size_t novh = 0;
	for (size_t i = 0; i < n; i++) {
		if (tv[i]->status == TR_OK && isfinite(tv[i]->step_ms))
			v[st->nok++] = tv[i]->step_ms;
		if (isfinite(tv[i]->overhead_pct))
			ovh += tv[i]->overhead_pct, novh++;
	}
	st->overhead_pct = novh ? ovh / (double)novh : NAN;
	st->median = median(v, st->nok);
	st->min = st->nok ? v[0] : NAN;
	st->max = st->nok ? v[st->nok - 1] : NAN;
	st->range = st->nok ? st->max - st->min : NAN;
	st->spread_pct = st->nok && st->median > 0 ? 100.0 * st->range / st->median : NAN;
	st->noisy = (st->nok >= 2 && st->spread_pct > r->noisy_pct) || (st->nok && st->nok < n);
	free(v);
	st->exposed_ms = med_field(tv, n, offsetof(struct trial, exposed_ms));
	st->comm_ms = med_field(tv, n, offsetof(struct trial, comm_ms));
	st->overlap_pct = med_field(tv, n, offsetof(struct trial, overlap_pct));
	st->wait_ms = med_field(tv, n, offsetof(struct trial, wait_ms));
	st->transfer_ms = med_field(tv, n, offsetof(struct trial, transfer_ms));
	st->gemm_ms = med_field(tv, n, offsetof(struct trial, gemm_ms));
	/* late rank and diagnosis: the one most ok trials name */
	st->late_rank = -1;
	size_t best = 0;
	for (size_t i = 0; i < n; i++) {
		if (tv[i]->status != TR_OK)
			continue;
		size_t cnt = 0;
		for (size_t j = 0; j < n; j++)
			cnt += tv[j]->status == TR_OK && tv[j]->late_rank == tv[i]->late_rank;
		if (cnt > best || (cnt == best && tv[i]->late_rank < st->late_rank))
			best = cnt, st->late_rank = tv[i]->late_rank;
	}
	best = 0;
	for (size_t i = 0; i < n; i++) {
		if (tv[i]->status != TR_OK)
			continue;
		size_t cnt = 0;
		for (size_t j = 0; j < n; j++)
			cnt += tv[j]->status == TR_OK && !strcmp(tv[j]->diag, tv[i]->diag);
		if (cnt > best)
			best = cnt, snprintf(st->diag, sizeof(st->diag), "%s", tv[i]->diag);
	}
	/* busbw and busbw_kernel per (type, bytes): medians over ok trials that have them */
	for (size_t i = 0; i < n; i++) {
		if (tv[i]->status != TR_OK)
			continue;
		for (size_t k = 0; k < tv[i]->ncolls; k++) {
			const struct trial_coll *tc = &tv[i]->colls[k];
			size_t j;
			for (j = 0; j < st->ncolls; j++)
				if (!strcmp(st->colls[j].type, tc->type) && st->colls[j].bytes == tc->bytes)
					break;
			if (j < st->ncolls)
				continue;
			double *bw = xcalloc(n, sizeof(double)), *kb = xcalloc(n, sizeof(double));
			size_t nb = 0, nk = 0, nc = 0;
			unsigned long long cnt = 0;
			for (size_t q = 0; q < n; q++) {
				if (tv[q]->status != TR_OK)
					continue;
				for (size_t z = 0; z < tv[q]->ncolls; z++) {
					const struct trial_coll *y = &tv[q]->colls[z];
					if (strcmp(y->type, tc->type) || y->bytes != tc->bytes)
						continue;
					if (isfinite(y->busbw_gbps))
						bw[nb++] = y->busbw_gbps;
					if (isfinite(y->busbw_kernel_gbps))
						kb[nk++] = y->busbw_kernel_gbps;
					cnt += y->count;
					nc++;
				}
			}
			st->colls = xrealloc(st->colls, (st->ncolls + 1) * sizeof(*st->colls));
			struct trial_coll *o = &st->colls[st->ncolls++];
			*o = *tc;
			o->busbw_gbps = median(bw, nb);
			o->busbw_kernel_gbps = median(kb, nk);
			o->count = nc ? cnt / nc : 0;
			free(bw);
			free(kb);
		}
	}
	free(tv);
}

static const struct sweep *g_sort;
static int cmp_rank(const void *a, const void *b)
{
	const struct cell_stats *x = &g_sort->st[*(const size_t *)a], *y = &g_sort->st[*(const size_t *)b];
	int dx = x->nok > 0, dy = y->nok > 0;
	if (dx != dy)
		return dy - dx;
	if (dx && x->median != y->median)
		return x->median < y->median ? -1 : 1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

static void free_stats(struct sweep *s)
{
	if (s->st)
		for (size_t c = 0; c < s->r.ncells; c++)
			free(s->st[c].colls);
	free(s->st);
	free(s->order);
	free(s->diffs);
	s->st = NULL;
	s->order = NULL;
	s->diffs = NULL;
	s->ndiffs = 0;
}

void sweep_stats(struct sweep *s)
{
	const struct recipe *r = &s->r;
	free_stats(s);
	s->st = xcalloc(r->ncells, sizeof(*s->st));
	s->order = xcalloc(r->ncells, sizeof(size_t));
	for (size_t c = 0; c < r->ncells; c++)
		cell_stats_of(s, c, &s->st[c]);
	const struct cell_stats *b = &s->st[r->baseline];
	for (size_t c = 0; c < r->ncells; c++) {
		struct cell_stats *x = &s->st[c];
		if (c == r->baseline) {
			x->verdict = x->nok ? V_BASELINE : V_NODATA;
			x->diff_ms = x->diff_pct = 0;
			x->noise_ms = NAN;
			continue;
		}
		x->verdict = sweep_compare(b, x, r->threshold_pct, &x->noise_ms);
		x->diff_ms = x->median - b->median;
		x->diff_pct = b->median > 0 ? 100.0 * x->diff_ms / b->median : NAN;
	}
	for (size_t c = 0; c < r->ncells; c++)
		s->order[c] = c;
	g_sort = s;
	qsort(s->order, r->ncells, sizeof(size_t), cmp_rank);
	g_sort = NULL;
	for (size_t i = 0; i < r->ncells; i++)
		s->st[s->order[i]].rank = s->st[s->order[i]].nok ? (int)i + 1 : 0;
	/* the best: the fastest cell that is better than the baseline beyond the noise */
	s->best = r->baseline;
	for (size_t i = 0; i < r->ncells; i++)
		if (s->st[s->order[i]].verdict == V_BETTER) {
			s->best = s->order[i];
			break;
		}
	const struct cell_stats *bs = &s->st[s->best];
	if (!b->nok)
		snprintf(s->best_why, sizeof(s->best_why), "the baseline (%s) has no successful trial, so no cell can "
			 "be called better", r->cells[r->baseline].label);
	else if (s->best == r->baseline)
		snprintf(s->best_why, sizeof(s->best_why),
			 "no cell is faster than the baseline (%s, %.3f ms) by more than the noise between trials; "
			 "keep the baseline", r->cells[r->baseline].label, b->median);
	else
		snprintf(s->best_why, sizeof(s->best_why),
			 "%s: median step %.3f ms against the baseline's %.3f ms (%+.1f %%), beyond the noise of "
			 "%.3f ms (the larger trial range of the two, or %.3g %% of the baseline); exposed "
			 "communication %.3f -> %.3f ms per step, overlap %.1f -> %.1f %%",
			 r->cells[s->best].label, bs->median, b->median, bs->diff_pct, bs->noise_ms, r->threshold_pct,
			 b->exposed_ms, bs->exposed_ms, b->overlap_pct, bs->overlap_pct);
	/* confound */
	s->drift = 0;
	s->drift_pct = NAN;
	if (s->confound.status == TR_OK && b->nok && isfinite(s->confound.step_ms)) {
		double tol = r->threshold_pct / 100.0 * b->median;
		s->drift = s->confound.step_ms < b->min - tol || s->confound.step_ms > b->max + tol;
		s->drift_pct = 100.0 * (s->confound.step_ms - b->median) / b->median;
	}
	/* environments: each configuration against the first environment */
	size_t ei = (size_t)-1;
	for (size_t i = 0; i < r->naxes; i++)
		if (r->axes[i].kind == AX_ENVIRONMENT)
			ei = i;
	if (ei == (size_t)-1 || r->axes[ei].nvalues < 2)
		return;
	for (size_t a = 0; a < r->ncells; a++) {
		if (r->cells[a].vi[ei] != 0)
			continue;
		for (size_t c = 0; c < r->ncells; c++) {
			if (r->cells[c].vi[ei] == 0)
				continue;
			int same = 1;
			for (size_t i = 0; i < r->naxes && same; i++)
				same = i == ei || r->cells[c].vi[i] == r->cells[a].vi[i];
			if (!same)
				continue;
			s->diffs = xrealloc(s->diffs, (s->ndiffs + 1) * sizeof(*s->diffs));
			struct env_diff *d = &s->diffs[s->ndiffs++];
			d->a = a;
			d->b = c;
			d->v = sweep_compare(&s->st[a], &s->st[c], r->threshold_pct, NULL);
			d->diff_pct = s->st[a].median > 0 ? 100.0 * (s->st[c].median - s->st[a].median) / s->st[a].median
							  : NAN;
		}
	}
}

void trial_release(struct trial *t)
{
	free(t->colls);
	t->colls = NULL;
	t->ncolls = 0;
}

void sweep_free(struct sweep *s)
{
	if (s->t) {
		for (size_t c = 0; c < s->r.ncells; c++) {
			for (int k = 0; k < s->r.trials; k++)
				trial_release(&s->t[c][k]);
			free(s->t[c]);
		}
		free(s->t);
	}
	trial_release(&s->confound);
	free_stats(s);
	recipe_free(&s->r);
	memset(s, 0, sizeof(*s));
}
