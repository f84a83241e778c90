/*
 * balance.c - the stage balance: the work moved between pipeline stages
 * until each does the same, as per-op durations (SC_BAL).
 */
#include "overlap/whatif/private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Every fix: ranks, groups, op types. */
void wi_balance_free(struct whatif_ctx *c)
{
	if (!c->bal)
		return;
	for (size_t i = 0; i < c->n; i++)
		free(c->bal[i]);
	free(c->bal);
	c->bal = NULL;
}

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
 * includes and a per-stage ideal cannot see.  Sets c->bal; returns 0
 * (c->bal NULL) when no op is shared by two classes. */
struct balance_key { int64_t step; uint32_t hash, li; uint8_t used; };
struct balance_entry { int32_t key, cls, ri, li; int64_t sum; };

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

/* Per rank: each compute op's (step, name) as a local index (lidx, -1 for
 * the rest) and one entry per (rank, step, name) with its summed duration,
 * keyed by (step number, name) across ranks. */
static struct balance_entry *balance_entries(struct whatif_ctx *c, int32_t **lidx, size_t *nl, size_t *ne)
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
		lidx[i] = xmalloc((k->n ? k->n : 1) * sizeof(int32_t));
		size_t first = m;
		for (size_t j = 0; j < k->n; j++) {
			const struct whatif_op *o = &k->r->ops[j];
			lidx[i][j] = -1;
			if (o->step < 0 || k->cat[j] > WC_COMPUTE || o->kind == K_COMM) /* compute only */
				continue;
			size_t h = bkey_find(loc, oc, o->step, o->hash);
			if (!loc[h].used) {
				int64_t sn = k->r->steps[o->step].number;
				size_t y = bkey_find(t, cap, sn, o->hash);
				if (!t[y].used)
					t[y] = (struct balance_key){ .step = sn, .hash = o->hash, .li = (uint32_t)nk++, .used = 1 };
				uint32_t li = (uint32_t)(m - first);
				loc[h] = (struct balance_key){ .step = o->step, .hash = o->hash, .li = li, .used = 1 };
				v[m] = (struct balance_entry){ (int32_t)t[y].li, k->cls, (int32_t)i, (int32_t)li, 0 };
				m++;
			}
			lidx[i][j] = (int32_t)loc[h].li;
			v[first + loc[h].li].sum += k->d[j];
		}
		nl[i] = m - first;
		free(loc);
	}
	free(t);
	*ne = m;
	return v;
}

int wi_balance_build(struct whatif_ctx *c)
{
	size_t m, shared = 0;
	int32_t **lidx = xcalloc(c->n, sizeof(*lidx));
	size_t *nl = xcalloc(c->n, sizeof(*nl));
	struct balance_entry *v = balance_entries(c, lidx, nl, &m);
	double **fac = xcalloc(c->n, sizeof(*fac));
	for (size_t i = 0; i < c->n; i++) {
		fac[i] = xmalloc((nl[i] ? nl[i] : 1) * sizeof(double));
		for (size_t l = 0; l < nl[i]; l++)
			fac[i][l] = 1.0;
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
			sum += (double)v[p + (q - p - 1) / 2].sum;
			ncls++;
		}
		if (ncls < 2)
			continue;
		double target = sum / (double)ncls;
		for (size_t p = a, q; p < b; p = q) {
			for (q = p; q < b && v[q].cls == v[p].cls; q++)
				;
			double typ = (double)v[p + (q - p - 1) / 2].sum;
			for (size_t x = p; typ > 0 && x < q; x++) {
				fac[v[x].ri][v[x].li] = target / typ;
				shared++;
			}
		}
	}
	free(v);
	if (shared) {
		c->bal = xcalloc(c->n, sizeof(*c->bal));
		for (size_t i = 0; i < c->n; i++) {
			struct rank_input *k = &c->k[i];
			c->bal[i] = xmalloc((k->n ? k->n : 1) * sizeof(int64_t));
			for (size_t j = 0; j < k->n; j++)
				c->bal[i][j] = lidx[i][j] >= 0 ? (int64_t)llround((double)k->d[j] * fac[i][lidx[i][j]]) : k->d[j];
		}
	}
	for (size_t i = 0; i < c->n; i++) {
		free(lidx[i]);
		free(fac[i]);
	}
	free(lidx);
	free(fac);
	free(nl);
	return shared > 0;
}
