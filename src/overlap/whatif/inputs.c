/*
 * inputs.c - each rank's measured inputs to the replay on the aligned
 * clock: durations, host gaps, latencies, streams, the launch order, the
 * step barriers and the measured step windows (ranks in parallel).
 */
#include "overlap/whatif/private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *wi_cat_name(int c, char *buf, size_t n)
{
	static const char *const names[] = { "gemm", "attention", "other compute", "memory copies",
					     "host launch gaps" };
	if (c < WC_COLL)
		return names[c];
	snprintf(buf, n, "%s transfer", coll_type_name((enum coll_type)(c - WC_COLL)));
	return buf;
}

int wi_op_cat(const struct whatif_op *o)
{
	switch ((enum span_kind)o->kind) {
	case K_GEMM: return WC_GEMM;
	case K_ATTENTION: return WC_ATTN;
	case K_MEMCPY_H2D: case K_MEMCPY_D2H: case K_MEMCPY_D2D: case K_MEMCPY_P2P: case K_MEMCPY_OTHER:
	case K_MEMSET: return WC_MEMORY;
	default: return WC_COMPUTE;
	}
}

/* Step windows as analysis_rank cuts them, from each step's first start
 * (ws) and latest end (last): to the next step's first start (the last
 * step: to its last end). */
static void cut_windows(size_t ns, int64_t *ws, int64_t *we, const int64_t *last)
{
	for (size_t q = 0; q < ns; q++) {
		we[q] = q + 1 < ns ? ws[q + 1] : last[q];
		if (ws[q] == INT64_MAX)
			ws[q] = we[q] = 0;
		if (we[q] < ws[q])
			we[q] = ws[q];
	}
}

/* The measured step windows (ts, te: each op's measured start and end). */
static void windows_meas(struct rank_input *k, const int64_t *ts, const int64_t *te)
{
	size_t ns = k->r->nsteps;
	int64_t *last = xmalloc((ns ? ns : 1) * sizeof(*last));
	for (size_t q = 0; q < ns; q++) {
		k->mws[q] = INT64_MAX;
		last[q] = INT64_MIN;
	}
	for (size_t j = 0; j < k->n; j++) {
		int32_t q = k->r->ops[j].step;
		if (q < 0)
			continue;
		if (ts[j] < k->mws[q])
			k->mws[q] = ts[j];
		if (te[j] > last[q])
			last[q] = te[j];
	}
	cut_windows(ns, k->mws, k->mwe, last);
	free(last);
}

/* Per op: duration, collective, category, step and dependencies (la: each
 * op's measured launch, aligned, UNSET if unknown). */
static void rk_ops(struct rank_input *k, const int64_t *ts, const int64_t *te, const int64_t *la)
{
	const struct rank_result *r = k->r;
	for (size_t j = 0; j < k->n; j++) {
		const struct whatif_op *o = &r->ops[j];
		struct op_input *p = &k->o[j];
		k->d[j] = te[j] - ts[j];
		const struct comm_inst *ci = o->inst >= 0 ? &r->inst[o->inst] : NULL;
		p->grp = ci && ci->grp >= 0 && ci->wait_ns >= 0 ? (int32_t)ci->grp : -1;
		p->step = o->step;
		p->dep = o->dep;
		k->hassync |= o->hdep >= 0;
		p->bar = o->bar && o->step >= 1 && (size_t)o->step <= k->nbs; /* it waits for its step barrier */
		p->hasl = la[j] != UNSET;
		k->cat[j] = (uint8_t)(p->grp >= 0 ? WC_COLL + ci->type : wi_op_cat(o));
		if (p->grp >= 0 && k->ngops < r->ninst)
			k->gc[k->ngops++] = (struct matched_call){ ci->bytes, (int32_t)j, o->inst, p->grp, -1, ci->type };
		k->slot[j] = -1;
	}
}

/* Streams: a dense index; per op the previous and the next op on its
 * stream, per stream its first op. */
static void rk_streams(struct rank_input *k)
{
	size_t n = k->n, ns = 0;
	int32_t *sid = xmalloc((n ? n : 1) * sizeof(*sid)), *last = xmalloc((n ? n : 1) * sizeof(*last));
	k->shead = xmalloc((n ? n : 1) * sizeof(*k->shead));
	for (size_t j = 0; j < n; j++) {
		size_t q;
		for (q = 0; q < ns && sid[q] != k->r->ops[j].stream; q++)
			;
		if (q == ns) {
			sid[ns] = k->r->ops[j].stream;
			k->shead[ns] = (int32_t)j;
			last[ns++] = -1;
		}
		k->sprev[j] = last[q];
		k->qof[j] = (uint16_t)q; /* rk_init: more than UINT16_MAX streams is refused (whatif_run) */
		k->o[j].snext = -1;
		if (last[q] >= 0)
			k->o[last[q]].snext = (int32_t)j;
		last[q] = (int32_t)j;
	}
	k->nstr = ns;
	k->shead = xrealloc(k->shead, (ns ? ns : 1) * sizeof(*k->shead));
	for (size_t j = 0; j < n; j++)
		k->o[j].dsid = k->o[j].dep >= 0 ? k->qof[k->o[j].dep] : 0;
	free(sid);
	free(last);
}

/* Host: the launch order and the gaps in it; after a sync, the time behind
 * the op waited for. */
static void rk_host(struct rank_input *k, const int64_t *te, const int64_t *la)
{
	const struct rank_result *r = k->r;
	k->hord = wi_launch_order(r->ops, k->n, &k->nh);
	for (size_t j = 0; j < k->n; j++)
		k->hpos[j] = -1;
	for (size_t p = 0; p < k->nh; p++)
		k->hpos[k->hord[p]] = (int32_t)p;
	k->a0 = k->ma0 = k->nh ? la[k->hord[0]] : UNSET;
	k->astep = INT64_MIN;
	if (k->nh && r->ops[k->hord[0]].step >= 0)
		k->astep = r->steps[r->ops[k->hord[0]].step].number;
	for (size_t p = 0; p < k->nh; p++) {
		int32_t j = k->hord[p];
		if (r->ops[j].hdep >= 0) /* the host time after the wait: its gap */
			k->gap[j] = la[j] - te[r->ops[j].hdep];
		else
			k->gap[j] = p ? la[j] - la[k->hord[p - 1]] : 0;
	}
	k->hl = xmalloc((k->nh ? k->nh : 1) * sizeof(*k->hl));
	for (size_t p = 0; p < k->nh; p++) {
		int32_t h = r->ops[k->hord[p]].hdep;
		k->hl[p] = (struct host_launch){ k->hord[p], h, h >= 0 ? k->qof[h] : 0 };
	}
	free(k->hord); /* k->hl has it */
	k->hord = NULL;
}

/* Step barriers (each step's latest end, measured) and each op's latency:
 * its start minus the measured ready time. */
static void rk_latency(struct rank_input *k, const int64_t *ts, const int64_t *te, const int64_t *la)
{
	const struct rank_result *r = k->r;
	size_t nb = k->nbs ? k->nbs : 1;
	k->bm = xmalloc(nb * sizeof(int64_t));
	k->unx = xcalloc(nb, sizeof(int64_t));
	k->bn = xcalloc(nb, sizeof(size_t));
	for (size_t q = 0; q < k->nbs; q++)
		k->bm[q] = UNSET;
	for (size_t j = 0; j < k->n; j++) {
		int32_t q = r->ops[j].step;
		if (q >= 0 && (size_t)q < k->nbs) {
			k->bn[q]++;
			if (te[j] > k->bm[q])
				k->bm[q] = te[j];
		}
	}
	for (size_t j = 0; j < k->n; j++) {
		int64_t ready = k->sprev[j] >= 0 ? te[k->sprev[j]] : UNSET;
		if (la[j] != UNSET && la[j] > ready)
			ready = la[j];
		if (r->ops[j].bar && r->ops[j].step >= 1 && k->bm[r->ops[j].step - 1] > ready)
			ready = k->bm[r->ops[j].step - 1];
		if (r->ops[j].dep >= 0 && te[r->ops[j].dep] > ready)
			ready = te[r->ops[j].dep];
		int64_t lat = ready == UNSET ? 0 : ts[j] - ready;
		if (lat > INT32_MIN && lat <= INT32_MAX) {
			k->o[j].lat = (int32_t)lat;
		} else { /* seconds late: kept whole beside (op_lat) */
			if (!k->latx)
				k->latx = xcalloc(k->n, sizeof(*k->latx));
			k->latx[j] = lat;
			k->o[j].lat = LAT_BIG;
		}
		/* a delay beyond launch latency after whatever explains the start
		 * (an inferred dependency included: without launches it is the
		 * latest-ending candidate, not a known one) */
		if (lat > LAT_MAX_NS && ready != UNSET) {
			k->unexplained++;
			if (r->ops[j].step >= 0)
				k->unx[r->ops[j].step] += lat;
		}
	}
}

/* Bytes of rank i's per-op arrays in the what-if's one mapping (rk_arrays),
 * a multiple of the page. */
size_t wi_rank_bytes(size_t n)
{
	size_t n1 = n ? n : 1;
	size_t b = n1 * (sizeof(struct op_input) + 2 * sizeof(int64_t) + 3 * sizeof(int32_t) + 1);
	return (b + 4095) & ~(size_t)4095;
}

/* Rank i's per-op arrays (zeroed): from its part of c->big, its pages made
 * at once (MADV_POPULATE_WRITE: a fault per page costs more), else each
 * its own allocation. */
static void rk_arrays(struct whatif_ctx *c, size_t i)
{
	struct rank_input *k = &c->k[i];
	size_t n1 = k->n ? k->n : 1;
	if (!c->big) {
		k->o = xcalloc(n1, sizeof(*k->o));
		k->d = xcalloc(n1, sizeof(int64_t));
		k->gap = xcalloc(n1, sizeof(int64_t));
		k->sprev = xcalloc(n1, sizeof(int32_t));
		k->hpos = xcalloc(n1, sizeof(int32_t));
		k->slot = xcalloc(n1, sizeof(int32_t));
		k->cat = xcalloc(n1, 1);
		return;
	}
	char *b = c->big + c->bigat[i];
#ifdef MADV_POPULATE_WRITE
	madvise(b, wi_rank_bytes(k->n), MADV_POPULATE_WRITE); /* where it fails: a fault per page */
#endif
	k->o = (struct op_input *)b;
	k->d = (int64_t *)(b + n1 * sizeof(struct op_input));
	k->gap = k->d + n1;
	k->sprev = (int32_t *)(k->gap + n1);
	k->hpos = k->sprev + n1;
	k->slot = k->hpos + n1;
	k->cat = (uint8_t *)(k->slot + n1);
}

/* Measured inputs of one rank on the aligned clock (ranks in parallel:
 * it writes c->k[i] alone). */
void wi_rank_init(struct whatif_ctx *c, size_t i)
{
	struct rank_input *k = &c->k[i];
	const struct rank_result *r = &c->a->r[i];
	size_t n = r->nops, n1 = n ? n : 1;
	k->r = r;
	k->n = n;
	k->nbs = r->nsteps;
	rk_arrays(c, i);
	k->x = xcalloc(r->ninst ? r->ninst : 1, sizeof(int64_t));
	k->xi = xcalloc(r->ninst ? r->ninst : 1, sizeof(int64_t));
	k->gc = xmalloc((r->ninst ? r->ninst : 1) * sizeof(*k->gc));
	/* measured start, end and launch (aligned) for the passes below; not kept */
	int64_t *ts = xmalloc(3 * n1 * sizeof(*ts)), *te = ts + n1, *la = te + n1;
	for (size_t j = 0; j < n; j++) {
		ts[j] = meas_s(k, j);
		te[j] = meas_e(k, j);
		la[j] = r->ops[j].launch_ns == INT64_MIN ? UNSET : analysis_aligned(r, r->ops[j].launch_ns);
	}
	rk_ops(k, ts, te, la);
	k->qof = xmalloc(n1 * sizeof(*k->qof));
	rk_streams(k);
	rk_host(k, te, la);
	rk_latency(k, ts, te, la);
	k->mws = xmalloc((r->nsteps ? r->nsteps : 1) * sizeof(int64_t));
	k->mwe = xmalloc((r->nsteps ? r->nsteps : 1) * sizeof(int64_t));
	windows_meas(k, ts, te); /* while the rank's ops are in cache */
	free(ts);
}

void wi_rank_free(const struct whatif_ctx *c, struct rank_input *k)
{
	void *p[] = { k->qof, k->x, k->xi, k->gc, k->hord, k->hl, k->latx, k->shead, k->mws, k->mwe, k->bm, k->unx, k->bn };
	for (size_t q = 0; q < sizeof(p) / sizeof(p[0]); q++)
		free(p[q]);
	if (c->big)
		return; /* the per-op arrays: c->big */
	void *a[] = { k->o, k->d, k->gap, k->sprev, k->hpos, k->slot, k->cat };
	for (size_t q = 0; q < sizeof(a) / sizeof(a[0]); q++)
		free(a[q]);
}

