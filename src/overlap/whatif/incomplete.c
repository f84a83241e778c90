/*
 * incomplete.c - ranks whose trace lacks ops most ranks of their work
 * class run (a rank traced without its NCCL kernels, a truncated trace).
 *
 * Such a rank is no peer: an op it lacks is not a zero-length op, and its
 * host gaps hold the launch time of the ops it does not show, so they are
 * not its peers' gaps.  It gets a work class of its own: it is replayed
 * as measured, no ideal comes from it, and its own fix's ideal is unknown
 * (said, and never the verdict).  An op is keyed by (step number, name,
 * occurrence of the name in the step) over the common steps; a class's op
 * is one more than half its ranks run; a rank is incomplete when the ops
 * of its class it lacks are at least INCOMPLETE_SHARE of them, or take (on
 * the ranks that ran them, the least of them) at least INCOMPLETE_SHARE of
 * the mean step.  With two ranks in a class neither is the majority:
 * nothing is said.
 */
#include "overlap/whatif/private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/pool.h"

#define INCOMPLETE_SHARE 0.01

/* One op key of a class: the ranks that run it, the least duration. */
struct class_op { uint64_t key; int64_t min_ns; uint32_t nranks; int used; };

/* The class's op keys, an open-addressing table kept at most half full. */
struct class_ops { struct class_op *e; size_t cap, n; };

static size_t class_op_find(const struct class_ops *t, uint64_t key)
{
	size_t h = (size_t)(key * 0x9E3779B97F4A7C15ull >> 17) & (t->cap - 1);
	while (t->e[h].used && t->e[h].key != key)
		h = (h + 1) & (t->cap - 1);
	return h;
}

static void class_ops_grow(struct class_ops *t)
{
	struct class_ops o = *t;
	t->cap = o.cap ? 2 * o.cap : 1024;
	t->e = xcalloc(t->cap, sizeof(*t->e));
	for (size_t h = 0; h < o.cap; h++)
		if (o.e[h].used)
			t->e[class_op_find(t, o.e[h].key)] = o.e[h];
	free(o.e);
}

/* Rank i's op keys in the common steps into keys[] and their durations
 * into dur[] (its count). */
static size_t rank_keys(const struct whatif_ctx *c, size_t i, uint64_t *keys, int64_t *dur)
{
	const struct rank_input *k = &c->k[i];
	const struct rank_result *r = k->r;
	uint8_t *common = xcalloc(r->nsteps ? r->nsteps : 1, 1);
	for (size_t s = 0; s < c->nsteps; s++)
		if (c->sidx[i][s] >= 0)
			common[c->sidx[i][s]] = 1;
	uint32_t *occ = xmalloc((k->n ? k->n : 1) * sizeof(*occ));
	wi_occurrences(k, occ);
	size_t m = 0;
	uint32_t run = 0;
	for (size_t j = 0; j < k->n; j++) {
		int32_t st = ot_step_at(&k->t, &run, j);
		if (st < 0 || !common[st])
			continue;
		uint64_t num = (uint64_t)r->steps[st].number;
		keys[m] = ((uint64_t)ot_key(&k->t, j)->hash << 32 | occ[j]) ^ (num * 0xC2B2AE3D27D4EB4Full);
		dur[m++] = ot_dur(&k->t, j);
	}
	free(occ);
	free(common);
	return m;
}

/* The key of one op into t (its ranks counted, its least duration kept). */
static void class_op_add(struct class_ops *t, uint64_t key, uint32_t nranks, int64_t min_ns)
{
	if (2 * (t->n + 1) > t->cap)
		class_ops_grow(t);
	struct class_op *o = &t->e[class_op_find(t, key)];
	if (!o->used) {
		*o = (struct class_op){ key, min_ns, 0, 1 };
		t->n++;
	}
	o->nranks += nranks;
	if (min_ns < o->min_ns)
		o->min_ns = min_ns;
}

/* One class at a time: its op keys (t: each worker's, wt, while they are
 * gathered), the ones of its majority (nmaj of them, their least durations
 * summed in maj_ns), what each of its ranks lacks. */
struct lack_job {
	struct whatif_ctx *c;
	size_t cl, K, nmaj;
	double maj_ns, step_ns;
	struct class_ops t, *wt;
	size_t *lacked;              /* per rank of the class (index as c->k) */
	double *lacked_ns;
};

/* Rank i's keys into its worker's table (ranks in parallel; the counts
 * and minima merged after, in any order: the same table). */
static void keys_task(void *arg, size_t w, size_t i)
{
	struct lack_job *lj = arg;
	const struct whatif_ctx *c = lj->c;
	if ((size_t)c->k[i].cls != lj->cl)
		return;
	uint64_t *keys = xmalloc((c->k[i].n ? c->k[i].n : 1) * sizeof(*keys));
	int64_t *dur = xmalloc((c->k[i].n ? c->k[i].n : 1) * sizeof(*dur));
	size_t m = rank_keys(c, i, keys, dur);
	for (size_t x = 0; x < m; x++)
		class_op_add(&lj->wt[w], keys[x], 1, dur[x]);
	free(keys);
	free(dur);
}

static void lack_task(void *arg, size_t w, size_t i)
{
	(void)w;
	struct lack_job *lj = arg;
	const struct whatif_ctx *c = lj->c;
	if ((size_t)c->k[i].cls != lj->cl)
		return;
	uint64_t *keys = xmalloc((c->k[i].n ? c->k[i].n : 1) * sizeof(*keys));
	int64_t *dur = xmalloc((c->k[i].n ? c->k[i].n : 1) * sizeof(*dur));
	size_t m = rank_keys(c, i, keys, dur), have = 0;
	double lacked_ns = lj->maj_ns;
	for (size_t x = 0; x < m; x++) {
		const struct class_op *o = &lj->t.e[class_op_find(&lj->t, keys[x])];
		if (o->used && 2 * o->nranks > lj->K) {
			have++;
			lacked_ns -= (double)o->min_ns; /* integers: the sums are exact */
		}
	}
	lj->lacked[i] = lj->nmaj - have;
	lj->lacked_ns[i] = lacked_ns / (double)(c->nsteps ? c->nsteps : 1);
	free(keys);
	free(dur);
}

/* The class's op keys: each worker's, merged into lj->t; whether some op
 * of its majority is not run by every rank of the class (else no rank
 * lacks one). */
static int class_keys(struct lack_job *lj)
{
	struct whatif_ctx *c = lj->c;
	lj->wt = xcalloc(c->nt, sizeof(*lj->wt));
	for (size_t w = 0; w < c->nt; w++)
		class_ops_grow(&lj->wt[w]);
	pool_for(c->nt, c->n, keys_task, lj);
	memset(&lj->t, 0, sizeof(lj->t));
	class_ops_grow(&lj->t);
	for (size_t w = 0; w < c->nt; w++) {
		for (size_t h = 0; h < lj->wt[w].cap; h++)
			if (lj->wt[w].e[h].used)
				class_op_add(&lj->t, lj->wt[w].e[h].key, lj->wt[w].e[h].nranks, lj->wt[w].e[h].min_ns);
		free(lj->wt[w].e);
	}
	free(lj->wt);
	int gaps = 0;
	lj->nmaj = 0;
	lj->maj_ns = 0;
	for (size_t h = 0; h < lj->t.cap; h++)
		if (lj->t.e[h].used && 2 * lj->t.e[h].nranks > lj->K) {
			lj->nmaj++;
			lj->maj_ns += (double)lj->t.e[h].min_ns;
			gaps |= lj->t.e[h].nranks < lj->K;
		}
	return gaps;
}

/* The ranks of class cl that lack its ops, marked in c->incomplete;
 * returns how many. */
static size_t class_lacks(struct lack_job *lj)
{
	struct whatif_ctx *c = lj->c;
	size_t found = 0;
	if (!class_keys(lj)) { /* every rank runs every op of the majority */
		free(lj->t.e);
		return 0;
	}
	pool_for(c->nt, c->n, lack_task, lj);
	for (size_t i = 0; i < c->n; i++) {
		if ((size_t)c->k[i].cls != lj->cl)
			continue;
		size_t lacked = lj->lacked[i];
		if (!lacked || ((double)lacked < INCOMPLETE_SHARE * (double)lj->nmaj &&
				lj->lacked_ns[i] < INCOMPLETE_SHARE * lj->step_ns))
			continue;
		if (!c->incomplete)
			c->incomplete = xcalloc(c->n, sizeof(*c->incomplete));
		char b[240];
		snprintf(b, sizeof(b), "its trace lacks %zu of the %zu ops most ranks of its class run (%.3f ms a step)",
			 lacked, lj->nmaj, lj->lacked_ns[i] / 1e6);
		c->incomplete[i] = xstrdup(b);
		found++;
	}
	free(lj->t.e);
	return found;
}

size_t wi_isolate_incomplete(struct whatif_ctx *c)
{
	size_t found = 0;
	double step_ns = 0;
	for (size_t i = 0; i < c->n; i++)
		for (size_t s = 0; s < c->nsteps; s++) {
			const struct step_result *sr = &c->a->r[i].steps[c->sidx[i][s]];
			step_ns += (double)(sr->end_ns - sr->start_ns);
		}
	step_ns /= (double)(c->n * (c->nsteps ? c->nsteps : 1));
	struct lack_job lj = { .c = c, .step_ns = step_ns };
	lj.lacked = xcalloc(c->n, sizeof(*lj.lacked));
	lj.lacked_ns = xcalloc(c->n, sizeof(*lj.lacked_ns));
	for (size_t cl = 0; cl <= c->n; cl++) {
		lj.cl = cl;
		lj.K = c->csize[cl];
		if (lj.K >= 3)
			found += class_lacks(&lj);
	}
	free(lj.lacked);
	free(lj.lacked_ns);
	/* each in a class of its own: the unused class ids from the top */
	size_t id = c->n;
	for (size_t i = 0; found && i < c->n; i++) {
		if (!c->incomplete[i])
			continue;
		while (id > 0 && c->csize[id])
			id--;
		c->csize[c->k[i].cls]--;
		c->k[i].cls = (int)id;
		c->csize[id]++;
	}
	return found;
}
