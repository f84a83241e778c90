/*
 * balance.c - the ideals that move work: the stage balance (the work moved
 * between pipeline stages until each does the same, SC_BAL) and the
 * pooled ideal (every op at the job's mean of its name, SC_POOL), as
 * per-op durations.
 */
#include "overlap/whatif/private.h"
#include "base/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The stage balance: the work moved between pipeline stages until each
 * does the same.  Per step and compute op name (GEMM, attention, other
 * compute) that ranks of two or more work classes run: each rank's work is
 * the sum of that op's durations in the step, each class's typical work
 * the lower median of its ranks' sums, the balanced work the mean of the
 * classes' typicals, and every op of that name on a rank is scaled by
 * balanced / its class's typical.  So a stage with more layers (more
 * occurrences of the same kernels) or slower ones gives work to the
 * others, a straggler inside a stage stays one (its rank fix answers
 * that), and an op only one class runs (the loss of the last stage, the
 * embedding of the first) keeps its duration.  The counterfactual the
 * OSDI'25 artifact's ideal (the mean per op type over all stages)
 * includes and a per-stage ideal cannot see.  Kept per rank: its (step,
 * name) pairs and the factor of each (wi_balanced scales an op as the
 * replay reaches it). */
struct balance_key { int64_t step; uint32_t hash, li; uint8_t used; };
struct balance_entry { int32_t key, cls, ri, li; int64_t sum; };

/* The stage balance: per rank its (step index, name) pairs (open
 * addressing, li their index) and each pair's factor. */
struct balance {
	struct balance_key **loc;
	size_t *cap;
	double **fac;
};

static size_t bkey_find(const struct balance_key *t, size_t cap, int64_t step, uint32_t hash)
{
	size_t h = ((size_t)hash * 2654435761u ^ (size_t)step * 40503u) & (cap - 1);
	while (t[h].used && (t[h].step != step || t[h].hash != hash))
		h = (h + 1) & (cap - 1);
	return h;
}

static int cmp_bent(const void *x, const void *y)
{
	const struct balance_entry *p = x, *q = y;
	if (p->key != q->key)
		return p->key < q->key ? -1 : 1;
	if (p->cls != q->cls)
		return p->cls < q->cls ? -1 : 1;
	return (p->sum > q->sum) - (p->sum < q->sum);
}

/* Whether op j of rank k is compute the balance moves (a step, GEMM,
 * attention or other compute, not a communication kernel). */
static int balanced_op(const struct rank_input *k, size_t j, int32_t st)
{
	if (st < 0 || (k->flags[j] & OPF_CALL))
		return 0;
	const struct ot_key *key = ot_key(&k->t, j);
	return wi_kind_cat(key->kind) <= WC_COMPUTE && key->kind != K_COMM;
}

/* Per rank its compute ops' (step, name) pairs (b->loc; *nl of them) and
 * one entry per (rank, step, name) with its summed duration, keyed by
 * (step number, name) across ranks. */
static struct balance_entry *balance_entries(struct whatif_ctx *c, struct balance *bl, size_t *nl, size_t *ne)
{
	size_t total = 0;
	for (size_t i = 0; i < c->n; i++)
		total += c->k[i].n;
	size_t cap = 16, nk = 0, m = 0;
	while (cap < 2 * total)
		cap *= 2;
	struct balance_key *t = xcalloc(cap, sizeof(*t)); /* (step number, name) -> key id (li) */
	struct balance_entry *v = xmalloc((total ? total : 1) * sizeof(*v));
	for (size_t i = 0; i < c->n; i++) {
		struct rank_input *k = &c->k[i];
		size_t oc = 16;
		while (oc < 2 * k->n)
			oc *= 2;
		struct balance_key *loc = xcalloc(oc, sizeof(*loc)); /* (step index, name) -> entry of this rank */
		size_t first = m;
		uint32_t run = 0;
		for (size_t j = 0; j < k->n; j++) {
			int32_t st = ot_step_at(&k->t, &run, j);
			if (!balanced_op(k, j, st)) /* compute only */
				continue;
			uint32_t hash = ot_key(&k->t, j)->hash;
			size_t h = bkey_find(loc, oc, st, hash);
			if (!loc[h].used) {
				int64_t sn = k->r->steps[st].number;
				size_t y = bkey_find(t, cap, sn, hash);
				if (!t[y].used)
					t[y] = (struct balance_key){ .step = sn, .hash = hash, .li = (uint32_t)nk++, .used = 1 };
				uint32_t li = (uint32_t)(m - first);
				loc[h] = (struct balance_key){ .step = st, .hash = hash, .li = li, .used = 1 };
				v[m] = (struct balance_entry){ (int32_t)t[y].li, k->cls, (int32_t)i, (int32_t)li, 0 };
				m++;
			}
			v[first + loc[h].li].sum += meas_e(k, j) - meas_s(k, j);
		}
		nl[i] = m - first;
		bl->loc[i] = loc;
		bl->cap[i] = oc;
	}
	free(t);
	*ne = m;
	return v;
}

void wi_balance_free(struct whatif_ctx *c)
{
	struct balance *bl = c->bal;
	if (!bl)
		return;
	for (size_t i = 0; i < c->n; i++) {
		free(bl->loc[i]);
		free(bl->fac[i]);
	}
	free(bl->loc);
	free(bl->cap);
	free(bl->fac);
	free(bl);
	c->bal = NULL;
}

int wi_balance_build(struct whatif_ctx *c)
{
	size_t m, shared = 0;
	struct balance *bl = xcalloc(1, sizeof(*bl));
	bl->loc = xcalloc(c->n, sizeof(*bl->loc));
	bl->cap = xcalloc(c->n, sizeof(*bl->cap));
	bl->fac = xcalloc(c->n, sizeof(*bl->fac));
	size_t *nl = xcalloc(c->n, sizeof(*nl));
	struct balance_entry *v = balance_entries(c, bl, nl, &m);
	for (size_t i = 0; i < c->n; i++) {
		bl->fac[i] = xmalloc((nl[i] ? nl[i] : 1) * sizeof(double));
		for (size_t l = 0; l < nl[i]; l++)
			bl->fac[i][l] = 1.0;
	}
	qsort(v, m, sizeof(*v), cmp_bent);
	for (size_t a = 0, b; a < m; a = b) { /* one (step, name): v[a, b) */
		double sum = 0;
		size_t ncls = 0;
		for (b = a; b < m && v[b].key == v[a].key; b++)
			;
		for (size_t p = a, q; p < b; p = q) { /* one class: v[p, q), sums ascending */
			for (q = p; q < b && v[q].cls == v[p].cls; q++)
				;
			sum += (double)v[p + median_lower_index(q - p)].sum;
			ncls++;
		}
		if (ncls < 2)
			continue;
		double target = sum / (double)ncls;
		for (size_t p = a, q; p < b; p = q) {
			for (q = p; q < b && v[q].cls == v[p].cls; q++)
				;
			double typ = (double)v[p + median_lower_index(q - p)].sum;
			for (size_t x = p; typ > 0 && x < q; x++) {
				bl->fac[v[x].ri][v[x].li] = target / typ;
				shared++;
			}
		}
	}
	free(v);
	free(nl);
	c->bal = bl;
	if (!shared)
		wi_balance_free(c);
	return shared > 0;
}

int64_t wi_balanced(const struct whatif_ctx *c, size_t i, size_t j, int64_t d)
{
	const struct rank_input *k = &c->k[i];
	int32_t st = ot_step(&k->t, j);
	if (!balanced_op(k, j, st))
		return d;
	const struct balance_key *loc = c->bal->loc[i];
	size_t h = bkey_find(loc, c->bal->cap[i], st, ot_key(&k->t, j)->hash);
	return (int64_t)llround((double)d * c->bal->fac[i][loc[h].li]);
}

/* The pooled ideal: the ideal of Lin et al. (OSDI'25; the artifact's
 * analysis_util.py, simulation_analysis_reduce_dim over rank, stage and
 * step): every compute op and copy at the mean duration of its name over
 * every rank, stage, microbatch and common step, shorter or longer than it
 * took, and every matched call's transfer at the median of its type and
 * size (xfer_of); host gaps and first launches as the ideal's.  Unlike
 * the ideal (the median of an op's peers, never longer than it took), it
 * moves work between stages and microbatches, as a balanced job would. */
struct pool_sum { uint32_t hash; uint8_t used; double sum; uint64_t n; };

static size_t pool_find(const struct pool_sum *t, size_t cap, uint32_t hash)
{
	size_t h = ((size_t)hash * 2654435761u) & (cap - 1);
	while (t[h].used && t[h].hash != hash)
		h = (h + 1) & (cap - 1);
	return h;
}

/* Whether op j of rank k has a pooled duration (compute or a copy: not a
 * communication kernel, matched or not). */
static int pooled_op(const struct rank_input *k, size_t j)
{
	return !(k->flags[j] & (OPF_CALL | OPF_UCOMM)) && ot_key(&k->t, j)->kind != K_COMM;
}

void wi_pool_free(struct whatif_ctx *c)
{
	for (size_t i = 0; c->pool && i < c->n; i++)
		free(c->pool[i]);
	free(c->pool);
	c->pool = NULL;
}

int wi_pool_build(struct whatif_ctx *c)
{
	size_t keys = 0, cap = 16, pooled = 0;
	for (size_t i = 0; i < c->n; i++)
		keys += c->k[i].t.nkey;
	while (cap < 2 * keys)
		cap *= 2;
	struct pool_sum *t = xcalloc(cap, sizeof(*t));
	for (size_t i = 0; i < c->n; i++) {
		const struct rank_input *k = &c->k[i];
		uint8_t *in = xcalloc(k->nbs ? k->nbs : 1, 1); /* its step indices of the common steps */
		for (size_t s = 0; s < c->nsteps; s++)
			if (c->sidx[i][s] >= 0 && (size_t)c->sidx[i][s] < k->nbs)
				in[c->sidx[i][s]] = 1;
		uint32_t run = 0;
		for (size_t j = 0; j < k->n; j++) {
			int32_t st = ot_step_at(&k->t, &run, j);
			if (st < 0 || (size_t)st >= k->nbs || !in[st] || !pooled_op(k, j))
				continue;
			uint32_t hash = ot_key(&k->t, j)->hash;
			size_t h = pool_find(t, cap, hash);
			t[h].used = 1;
			t[h].hash = hash;
			t[h].sum += (double)(meas_e(k, j) - meas_s(k, j));
			t[h].n++;
		}
		free(in);
	}
	c->pool = xcalloc(c->n, sizeof(*c->pool));
	for (size_t i = 0; i < c->n; i++) {
		const struct op_view *v = &c->k[i].t;
		c->pool[i] = xmalloc((v->nkey ? v->nkey : 1) * sizeof(int64_t));
		for (size_t q = 0; q < v->nkey; q++) {
			const struct pool_sum *e = &t[pool_find(t, cap, v->keys[q].hash)];
			c->pool[i][q] = e->used && v->keys[q].kind != K_COMM ? llround(e->sum / (double)e->n) : -1;
			pooled += c->pool[i][q] >= 0;
		}
	}
	free(t);
	if (!pooled)
		wi_pool_free(c);
	return pooled > 0;
}
