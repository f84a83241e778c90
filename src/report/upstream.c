/*
 * upstream.c - overlap_report.py's summary figures from upstream JSONL
 * (upstream.h).
 *
 * Design.  The records are read by the pipeline (pipeline/upstream.c:
 * in the pass that reads the run for its analysis, else a pass of their
 * own); here only the figures of a saved analysis's recorded steps and the
 * means and ratios of the sums.  It reads no file.
 */
#include "report/upstream.h"

#include <math.h>
#include <stdlib.h>

int rep_upstream_from_recorded(const struct analysis *a, struct rep_upstream *u)
{
	memset(u, 0, sizeof(*u));
	u->loss_ok = 1;
	u->ranks = xcalloc(a->n ? a->n : 1, sizeof(*u->ranks));
	for (size_t i = 0; i < a->n; i++) {
		const struct rank_result *r = &a->r[i];
		if (!r->has_rec)
			continue;
		struct rep_upstream_rank *rk = &u->ranks[u->nranks++];
		rk->rank = r->rank;
		for (size_t k = 0; k < r->nsteps; k++) {
			double x[SR__COUNT];
			for (int q = 0; q < SR__COUNT; q++)
				x[q] = step_rec(r, k, q);
#define Z(q) (isnan(x[q]) ? 0.0 : x[q])
			u->count++;
			u->loss_ok &= !isnan(x[SR_LOSS]);
			u->sum_loss += Z(SR_LOSS);
			u->sum_overlap += Z(SR_OVERLAP);
			u->sum_compute += Z(SR_COMPUTE);
			u->sum_ar += Z(SR_AR_OVERLAP);
			u->sum_rs += Z(SR_RS_OVERLAP);
			rk->sum_overlap += Z(SR_OVERLAP);
			rk->sum_compute += Z(SR_COMPUTE);
#undef Z
		}
		u->files++;
	}
	u->has = u->count > 0;
	u->from = "recorded";
	return u->has;
}

void rep_upstream_free(struct rep_upstream *u)
{
	free(u->ranks);
	u->ranks = NULL;
	u->nranks = 0;
}

double rep_upstream_rank_ratio(const struct rep_upstream *u, int rank)
{
	for (size_t i = 0; i < u->nranks; i++)
		if (u->ranks[i].rank == rank)
			return u->ranks[i].sum_compute > 0 ? u->ranks[i].sum_overlap / u->ranks[i].sum_compute : 0.0;
	return NAN;
}

double rep_upstream_mean(const struct rep_upstream *u, const double *sum)
{
	return u->count ? *sum / (double)u->count : NAN;
}

double rep_upstream_ratio(const struct rep_upstream *u)
{
	double c = rep_upstream_mean(u, &u->sum_compute);
	return c > 0 ? rep_upstream_mean(u, &u->sum_overlap) / c : 0.0;
}
