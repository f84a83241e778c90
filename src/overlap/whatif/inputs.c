/*
 * inputs.c - each rank's measured inputs to the replay on the aligned
 * clock, read from its op table (ranks in parallel): its streams, the ops
 * others wait for, the launch order's waits, its first launch, the step
 * barriers, the delays nothing explains and the measured step windows;
 * and each op's host gap (two bytes an op: a launch-to-launch time of
 * 65 us or more is kept aside).  Durations and latencies are not kept:
 * the replay reads them from the op table as it reaches each op.
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
	if (c >= WC_UCOLL && c - WC_UCOLL == COLL_OTHER)
		snprintf(buf, n, "unmatched communication of unknown type");
	else if (c >= WC_UCOLL)
		snprintf(buf, n, "unmatched %s", coll_type_name((enum coll_type)(c - WC_UCOLL)));
	else
		snprintf(buf, n, "%s transfer", coll_type_name((enum coll_type)(c - WC_COLL)));
	return buf;
}

int wi_kind_cat(int kind)
{
	switch ((enum span_kind)kind) {
	case K_GEMM: return WC_GEMM;
	case K_ATTENTION: return WC_ATTN;
	case K_MEMCPY_H2D: case K_MEMCPY_D2H: case K_MEMCPY_D2D: case K_MEMCPY_P2P: case K_MEMCPY_OTHER:
	case K_MEMSET: return WC_MEMORY;
	default: return WC_COMPUTE;
	}
}

int wi_op_cat(const struct whatif_ctx *c, const struct rank_input *k, size_t j)
{
	if (k->flags[j] & OPF_CALL) {
		ptrdiff_t x = wi_find_op(k->calls, k->ncalls, sizeof(*k->calls), (int32_t)j);
		return WC_COLL + c->gm[k->calls[x].m].type;
	}
	if (k->flags[j] & OPF_UCOMM) {
		ptrdiff_t x = wi_find_op(k->ucomm, k->nucomm, sizeof(*k->ucomm), (int32_t)j);
		return WC_UCOLL + (x >= 0 ? k->ucomm[x].type : COLL_OTHER);
	}
	return wi_kind_cat(ot_key(&k->t, j)->kind);
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

/* Each op's distance to the next op on its stream (snext). */
static void stream_links(struct rank_input *k)
{
	int32_t *last = xmalloc((k->nstr ? k->nstr : 1) * sizeof(*last));
	for (size_t q = 0; q < k->nstr; q++)
		last[q] = -1;
	k->snext = xcalloc(k->n ? k->n : 1, 1);
	for (size_t j = 0; j < k->n; j++) {
		size_t q = op_stream(k, j);
		if (last[q] >= 0)
			k->snext[last[q]] = j - (size_t)last[q] < SNEXT_FAR ? (uint8_t)(j - (size_t)last[q]) : SNEXT_FAR;
		last[q] = (int32_t)j;
	}
	free(last);
}

/* Streams: a dense index in order of first appearance (per key), each
 * stream's first op; flags of what the op table says per op. */
static void rank_streams(struct rank_input *k)
{
	const struct op_view *t = &k->t;
	size_t ns = 0, cap = 0, hcap = 0;
	int32_t *sid = NULL;
	k->kq = xmalloc((t->nkey ? t->nkey : 1) * sizeof(*k->kq));
	uint8_t *seen = xcalloc(t->nkey ? t->nkey : 1, 1);
	for (size_t j = 0; j < k->n; j++) {
		size_t kx = ot_keyi(t, j);
		k->flags[j] = ot_has_launch(t, j) ? OPF_LAUNCH : 0;
		if (seen[kx])
			continue;
		seen[kx] = 1;
		size_t q;
		for (q = 0; q < ns && sid[q] != t->keys[kx].stream; q++)
			;
		if (q == ns) {
			GROW(sid, cap, ns + 1);
			GROW(k->shead, hcap, ns + 1);
			sid[ns] = t->keys[kx].stream;
			k->shead[ns++] = (int32_t)j;
		}
		if (ns > UINT16_MAX) { /* more streams than the replay follows (whatif_run refuses it) */
			k->nstr = ns;
			free(sid);
			free(seen);
			k->manystreams = 1;
			return;
		}
		k->kq[kx] = (uint16_t)q;
	}
	k->nstr = ns;
	free(sid);
	free(seen);
}

/* The inferred waits (dependencies, host synchronisations, step
 * barriers) as flags and lists, and the ops whose end is waited for. */
static void rank_waits(struct rank_input *k)
{
	const struct op_view *t = &k->t;
	k->ndeps = t->ndep;
	k->nhdeps = t->nhdep;
	k->deps = xmalloc((t->ndep ? t->ndep : 1) * sizeof(*k->deps));
	k->hdeps = xmalloc((t->nhdep ? t->nhdep : 1) * sizeof(*k->hdeps));
	k->refs = xmalloc((t->ndep + t->nhdep ? t->ndep + t->nhdep : 1) * sizeof(*k->refs));
	size_t nr = 0;
	for (size_t x = 0; x < t->ndep; x++) {
		const struct ot_link *l = &t->dep[x];
		k->deps[x] = (struct dep_in){ (int32_t)l->j, l->to, -1, (uint16_t)op_stream(k, (size_t)l->to), l->how };
		k->ndepk[l->how < DEPK__N ? l->how : DEPK_GUESS]++;
		k->flags[l->j] |= OPF_DEP;
		k->refs[nr++] = l->to;
	}
	for (size_t x = 0; x < t->nhdep; x++) {
		const struct ot_link *l = &t->hdep[x];
		k->hdeps[x] = (struct dep_in){ (int32_t)l->j, l->to, -1, (uint16_t)op_stream(k, (size_t)l->to), l->how };
		k->flags[l->j] |= OPF_HDEP;
		k->refs[nr++] = l->to;
	}
	for (size_t x = 0; x < t->nbar; x++)
		k->flags[t->bar[x]] |= OPF_BAR;
	k->hassync = t->nhdep > 0;
	qsort(k->refs, nr, sizeof(*k->refs), wi_cmp_i32);
	size_t m = 0;
	for (size_t x = 0; x < nr; x++)
		if (!m || k->refs[m - 1] != k->refs[x])
			k->refs[m++] = k->refs[x];
	k->nrefs = m;
	for (size_t x = 0; x < m; x++)
		k->flags[k->refs[x]] |= OPF_REF;
	for (size_t x = 0; x < k->ndeps; x++)
		k->deps[x].ref = (int32_t)wi_find_op(k->refs, m, sizeof(*k->refs), k->deps[x].d);
	for (size_t x = 0; x < k->nhdeps; x++)
		k->hdeps[x].ref = (int32_t)wi_find_op(k->refs, m, sizeof(*k->refs), k->hdeps[x].d);
}

/* The host: its launch order (the streams' launches merged, unless some
 * stream launches out of its own order: then kept whole, lorder), where
 * each launch that waited for an op comes in it, and the first launch. */
static void rank_host(struct rank_input *k)
{
	const struct op_view *t = &k->t;
	int64_t *last = xmalloc((k->nstr ? k->nstr : 1) * sizeof(*last));
	for (size_t q = 0; q < k->nstr; q++)
		last[q] = INT64_MIN;
	int merged = 1;
	k->nh = 0;
	for (size_t j = 0; j < k->n; j++) {
		if (!(k->flags[j] & OPF_LAUNCH))
			continue;
		size_t q = op_stream(k, j);
		int64_t l = ot_launch(t, j);
		if (l < last[q])
			merged = 0;
		last[q] = l;
		k->nh++;
	}
	free(last);
	if (!merged) {
		struct launch_key *lk = xmalloc((k->nh ? k->nh : 1) * sizeof(*lk));
		for (size_t j = 0, m = 0; j < k->n; j++)
			if (k->flags[j] & OPF_LAUNCH)
				lk[m++] = (struct launch_key){ ot_launch(t, j), (int32_t)j };
		k->lorder = wi_sort_launches(lk, k->nh);
	}
	k->hdord = xmalloc((k->nhdeps ? k->nhdeps : 1) * sizeof(*k->hdord));
	k->hdpos = xmalloc((k->nhdeps ? k->nhdeps : 1) * sizeof(*k->hdpos));
	struct host_walk h;
	hw_init(k, &h);
	size_t q, nhd = 0, cap = 0;
	int32_t pos;
	int64_t la_prev = UNSET;
	k->a0 = k->ma0 = UNSET;
	k->astep = INT64_MIN;
	k->gap = xcalloc(k->n ? k->n : 1, sizeof(*k->gap));
	for (int32_t j; (j = hw_next(k, &h, &q, &pos)) >= 0;) {
		int64_t la = meas_l(k, (size_t)j), g;
		if (h.p == 1) {
			k->a0 = k->ma0 = la;
			int32_t s = ot_step(t, (size_t)j);
			if (s >= 0)
				k->astep = k->r->steps[s].number;
		}
		if (k->flags[j] & OPF_HDEP) { /* the host's own time after the op it waited for */
			k->hdord[nhd] = (int32_t)wi_find_op(k->hdeps, k->nhdeps, sizeof(*k->hdeps), j);
			g = la - meas_e(k, (size_t)k->hdeps[k->hdord[nhd]].d);
			k->hdpos[nhd++] = h.p - 1;
		} else {
			g = la_prev == UNSET ? 0 : la - la_prev;
		}
		la_prev = la;
		if (g >= 0 && g < GAP_ESC) {
			k->gap[j] = (uint16_t)g;
		} else {
			k->gap[j] = GAP_ESC;
			GROW(k->gapx, cap, k->ngapx + 1);
			k->gapx[k->ngapx++] = (struct ot_esc){ (uint32_t)j, 0, g };
		}
	}
	hw_release(&h);
	if (k->ngapx) /* launch order is not op order */
		qsort(k->gapx, k->ngapx, sizeof(*k->gapx), wi_cmp_i32);
}

/* Step barriers (each step's latest end, measured), the delays nothing
 * explains (a start later than its stream, launch, step barrier and
 * dependency allow, beyond launch latency) and the measured windows. */
static void rank_steps(struct rank_input *k)
{
	const struct op_view *t = &k->t;
	size_t nb = k->nbs ? k->nbs : 1;
	k->bm = xmalloc(nb * sizeof(int64_t));
	k->unx = xcalloc(nb, sizeof(int64_t));
	k->bn = xcalloc(nb, sizeof(size_t));
	k->mws = xmalloc(nb * sizeof(int64_t));
	k->mwe = xmalloc(nb * sizeof(int64_t));
	int64_t *last = xmalloc(nb * sizeof(*last));
	for (size_t q = 0; q < k->nbs; q++) {
		k->bm[q] = UNSET;
		k->mws[q] = INT64_MAX;
		last[q] = INT64_MIN;
	}
	uint32_t run = 0;
	for (size_t j = 0; j < k->n; j++) {
		int32_t q = ot_step_at(t, &run, j);
		if (q < 0 || (size_t)q >= k->nbs)
			continue;
		int64_t ts = meas_s(k, j), te = meas_e(k, j);
		k->bn[q]++;
		if (te > k->bm[q])
			k->bm[q] = te;
		if (ts < k->mws[q])
			k->mws[q] = ts;
		if (te > last[q])
			last[q] = te;
	}
	cut_windows(k->nbs, k->mws, k->mwe, last);
	free(last);
}

/* Rank i's delays after whatever explains each start (its stream, launch,
 * step barriers, dependency): the unexplained ones (beyond LAT_MAX_NS),
 * per step index (ranks in parallel: it writes c->k[i] alone). */
void wi_rank_delays(struct whatif_ctx *c, size_t i)
{
	struct rank_input *k = &c->k[i];
	const struct op_view *t = &k->t;
	if (k->manystreams)
		return;
	int64_t *prev = xmalloc((k->nstr ? k->nstr : 1) * sizeof(*prev)); /* per stream: the last op's end */
	for (size_t q = 0; q < k->nstr; q++)
		prev[q] = UNSET;
	uint32_t run = 0;
	for (size_t j = 0, d = 0; j < k->n; j++) {
		size_t q = op_stream(k, j);
		int32_t st = ot_step_at(t, &run, j);
		int64_t ready = prev[q], te = meas_e(k, j);
		prev[q] = te;
		int64_t la = meas_l(k, j);
		if (la != UNSET && la > ready)
			ready = la;
		if ((k->flags[j] & OPF_BAR) && st >= 1 && k->bm[st - 1] > ready)
			ready = k->bm[st - 1];
		if ((k->flags[j] & OPF_GBAR) && c->gbe[k->cst[st - 1]] > ready)
			ready = c->gbe[k->cst[st - 1]];
		if (k->flags[j] & OPF_DEP) {
			while (k->deps[d].j < (int32_t)j)
				d++;
			int64_t de = meas_e(k, (size_t)k->deps[d].d);
			if (de > ready)
				ready = de;
		}
		int64_t lat = ready == UNSET ? 0 : meas_s(k, j) - ready;
		/* a delay beyond launch latency after whatever explains the start
		 * (an inferred dependency included: without launches it is the
		 * latest-ending candidate, not a known one) */
		if (lat > LAT_MAX_NS && ready != UNSET) {
			k->unexplained++;
			if (st >= 0)
				k->unx[st] += lat;
		}
	}
	free(prev);
}

/* Measured inputs of one rank on the aligned clock (ranks in parallel:
 * it writes c->k[i] alone). */
void wi_rank_init(struct whatif_ctx *c, size_t i)
{
	struct rank_input *k = &c->k[i];
	const struct rank_result *r = &c->a->r[i];
	k->r = r;
	k->clock_offset_ns = r->clock_offset_ns;
	k->clock_t0_ns = r->clock_t0_ns;
	k->clock_drift = r->clock_drift;
	ot_view(r, &k->t);
	k->n = k->t.n;
	k->nbs = r->nsteps;
	k->flags = xmalloc(k->n ? k->n : 1);
	rank_streams(k);
	if (k->manystreams)
		return;
	stream_links(k);
	rank_waits(k);
	rank_host(k);
	rank_steps(k);
}

void wi_rank_free(struct rank_input *k)
{
	void *p[] = { k->flags, k->snext, k->gap, k->gapx, k->kq, k->shead, k->deps, k->hdeps, k->hdord, k->hdpos, k->refs, k->calls, k->ucomm,
		      k->lorder, k->slot, k->mws, k->mwe, k->bm, k->unx, k->cst, k->bn };
	for (size_t q = 0; q < sizeof(p) / sizeof(p[0]); q++)
		free(p[q]);
}

/* The job-wide step barrier: an op without a launch that waited for its
 * rank's previous step (OPF_BAR) and started no earlier than every rank's
 * previous step ended (- ROUND_NS), that end later than its own rank's,
 * waited for the job's previous step: a step that starts when the last
 * rank ends the one before (an optimizer's all-reduce over the world, a
 * trace laid out step by step as the OSDI'25 artifact's), which the trace
 * does not show as a collective.  The replay then starts it after every
 * rank's ops of that step. */
void wi_job_barriers(struct whatif_ctx *c)
{
	c->gbe = xmalloc((c->nsteps ? c->nsteps : 1) * sizeof(*c->gbe));
	c->gbn = xcalloc(c->nsteps ? c->nsteps : 1, sizeof(*c->gbn));
	for (size_t s = 0; s < c->nsteps; s++) {
		c->gbe[s] = UNSET;
		for (size_t i = 0; i < c->n; i++) {
			int32_t x = c->sidx[i][s];
			if (c->k[i].manystreams || !c->k[i].bn)
				continue;
			c->gbn[s] += (int32_t)c->k[i].bn[x];
			if (c->k[i].bm[x] > c->gbe[s])
				c->gbe[s] = c->k[i].bm[x];
		}
	}
	for (size_t i = 0; i < c->n; i++) {
		struct rank_input *k = &c->k[i];
		if (k->manystreams)
			continue;
		k->cst = xmalloc((k->nbs ? k->nbs : 1) * sizeof(*k->cst));
		for (size_t q = 0; q < k->nbs; q++)
			k->cst[q] = -1;
		for (size_t s = 0; s < c->nsteps; s++)
			k->cst[c->sidx[i][s]] = (int32_t)s;
		uint32_t run = 0;
		for (size_t j = 0; j < k->n; j++) {
			int32_t st = ot_step_at(&k->t, &run, j);
			if (!(k->flags[j] & OPF_BAR) || (k->flags[j] & OPF_LAUNCH) || st < 1 || k->cst[st - 1] < 0 ||
			    k->cst[st] < 0)
				continue;
			int64_t ge = c->gbe[k->cst[st - 1]];
			if (ge != UNSET && ge > k->bm[st - 1] && meas_s(k, j) + ROUND_NS >= ge) {
				k->flags[j] |= OPF_GBAR;
				c->gbar = 1;
			}
		}
	}
}
