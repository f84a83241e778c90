/*
 * slots.c - the ideals: a slot is the same op on the ranks of one work
 * class (step number, name, occurrence); per slot the median duration and
 * host gap, per op its peers' median, per set of ranks the median outside
 * it; and the ideal of each rank's first launch (the anchors).
 */
#include "overlap/whatif/private.h"

#include <stdlib.h>
#include <string.h>

#include "base/pool.h"
#include "base/stats.h"

static int64_t median_i64(int64_t *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), wi_cmp_i64);
	return v[(n - 1) / 2]; /* the lower median (see slot_medians) */
}

struct slot_key { int cls; int64_t step; uint32_t hash, occ; int32_t ri, j; };

/* The order statistics of v[0..K) at lo, lo + 1 and lo + 2 (lo = (K - 2) / 2,
 * the ones every median below needs) into w[0..3); K >= 2. */
static void middle3(int64_t *v, size_t K, size_t lo, int64_t w[3])
{
	select_kth_i64(v, K, lo);
	w[0] = v[lo];
	w[1] = w[2] = INT64_MAX;
	for (size_t i = lo + 1; i < K; i++) { /* the two smallest above lo */
		if (v[i] < w[1]) {
			w[2] = w[1];
			w[1] = v[i];
		} else if (v[i] < w[2]) {
			w[2] = v[i];
		}
	}
}

/* The medians of slot q (vd, vg: its n members' durations and host gaps),
 * the ranks of its class without the op counted as
 * 0 (an op only a minority of the class runs has the ideal 0): over the
 * whole class, and the two order statistics that give each member's median
 * over the others (peer_med).  O(K) per slot: only the order statistics
 * around the middle are found. */
static void slot_medians(const struct whatif_ctx *c, size_t q, const int64_t *vd, const int64_t *vg, size_t n,
			 int64_t *tmp)
{
	size_t K = c->csize[c->scls[q]];
	if (K < n)
		K = n;
	for (int part = 0; part < 2; part++) {
		memcpy(tmp, part ? vg : vd, n * sizeof(*tmp));
		for (size_t m = n; m < K; m++)
			tmp[m] = 0;
		int64_t *all = part ? c->med_all_g : c->med_all_d;
		int64_t *mid = &c->mid[4 * q + 2 * (size_t)part];
		if (K == 1) {
			all[q] = mid[0] = mid[1] = tmp[0];
			continue;
		}
		size_t lo = (K - 2) / 2;
		int64_t w[3];
		middle3(tmp, K, lo, w);
#define V(i) (w[(i) - lo])
		all[q] = V((K - 1) / 2); /* the lower median: stragglers only slow ops down */
		mid[0] = V(lo); /* the lower median of the K - 1 others is V(lo) or V(lo + 1) (peer_med) */
		mid[1] = V(lo + 1);
#undef V
	}
}

/* The median of op j's peers (its slot without itself, the lower median of
 * the K - 1 others): position t = (K - 2) / 2 of the others is V(t) if fewer
 * than t + 1 values are below own, else V(t + 1).  Part 0: duration, 1: host
 * gap; an op without a slot is its own peer. */
int64_t wi_peer_median(const struct whatif_ctx *c, const struct rank_input *k, size_t j, int part)
{
	int64_t own = part ? k->gap[j] : k->d[j];
	if (k->slot[j] < 0)
		return own;
	const int64_t *mid = &c->mid[4 * (size_t)k->slot[j] + 2 * (size_t)part];
	return mid[0] < own ? mid[0] : mid[1];
}

/* Slots: the same op on the ranks of one work class: (class, step number,
 * name, occurrence of the name in the step).  Per slot the median duration
 * and host gap, and per op its peers' median (the slot without itself). */
/* The occurrence of each op's (step, name) in its rank, in op order (an
 * open-addressing count), into occ[]; ops without a step get UINT32_MAX. */
void wi_occurrences(const struct rank_input *k, uint32_t *occ)
{
	size_t cap = 16;
	while (cap < 2 * k->n)
		cap *= 2;
	struct occ_count { int32_t step; uint32_t hash, n; int used; } *tab = xcalloc(cap, sizeof(*tab));
	for (size_t j = 0; j < k->n; j++) {
		const struct whatif_op *o = &k->r->ops[j];
		occ[j] = UINT32_MAX;
		if (o->step < 0)
			continue;
		size_t h = ((size_t)o->hash * 2654435761u ^ (size_t)o->step * 40503u) & (cap - 1);
		while (tab[h].used && (tab[h].step != o->step || tab[h].hash != o->hash))
			h = (h + 1) & (cap - 1);
		if (!tab[h].used)
			tab[h] = (struct occ_count){ o->step, o->hash, 0, 1 };
		occ[j] = tab[h].n++;
	}
	free(tab);
}

/* A rank's ops by (step index, name, occurrence): the slots of its class
 * looked up without the global table (ranks of a class mostly run the same
 * ops). */
struct op_key { int32_t step, j; uint32_t hash, occ; };
struct op_key_table { struct op_key *e; size_t cap; };

static size_t lhash(int32_t step, uint32_t hash, uint32_t occ, size_t cap)
{
	return ((size_t)hash * 2654435761u ^ (size_t)step * 40503u ^ (size_t)occ * 97u) & (cap - 1);
}

static void ltab_build(struct op_key_table *t, const struct rank_input *k, const uint32_t *occ)
{
	t->cap = 16;
	while (t->cap < 2 * k->n)
		t->cap *= 2;
	t->e = xmalloc(t->cap * sizeof(*t->e));
	for (size_t h = 0; h < t->cap; h++)
		t->e[h].j = -1;
	for (size_t j = 0; j < k->n; j++) {
		const struct whatif_op *o = &k->r->ops[j];
		if (o->step < 0)
			continue;
		size_t h = lhash(o->step, o->hash, occ[j], t->cap);
		while (t->e[h].j >= 0)
			h = (h + 1) & (t->cap - 1);
		t->e[h] = (struct op_key){ o->step, (int32_t)j, o->hash, occ[j] };
	}
}

/* Rank k's ops as ops of the rank t was built from (same step numbers at the
 * same indices): map[j] its op there, -1 without a step; 0 when one has no
 * match (then the keys are compared across ranks). */
static int ltab_map(const struct op_key_table *t, const struct rank_input *ref, const struct rank_input *k, const uint32_t *occ,
		    int32_t *map)
{
	if (ref->r->nsteps != k->r->nsteps)
		return 0;
	for (size_t q = 0; q < k->r->nsteps; q++)
		if (ref->r->steps[q].number != k->r->steps[q].number)
			return 0;
	for (size_t j = 0; j < k->n; j++) {
		const struct whatif_op *o = &k->r->ops[j];
		map[j] = -1;
		if (o->step < 0)
			continue;
		size_t h = lhash(o->step, o->hash, occ[j], t->cap);
		for (; t->e[h].j >= 0; h = (h + 1) & (t->cap - 1))
			if (t->e[h].step == o->step && t->e[h].hash == o->hash && t->e[h].occ == occ[j])
				break;
		if (t->e[h].j < 0)
			return 0;
		map[j] = t->e[h].j;
	}
	return 1;
}

/* Slot ids of the keyed ops v[0..m) by hashing (class, step, name,
 * occurrence), in the order of v. */
static void slot_hash(struct whatif_ctx *c, const struct slot_key *v, size_t m)
{
	size_t cap = 16;
	while (cap < 2 * m)
		cap *= 2;
	int32_t *tab = xmalloc(cap * sizeof(*tab)); /* entry index in v of the slot's first member, -1 */
	for (size_t h = 0; h < cap; h++)
		tab[h] = -1;
	for (size_t x = 0; x < m; x++) {
		size_t h = ((size_t)v[x].hash * 2654435761u ^ (size_t)v[x].step * 40503u ^
			    (size_t)v[x].occ * 97u ^ (size_t)v[x].cls * 7919u) & (cap - 1);
		for (; tab[h] >= 0; h = (h + 1) & (cap - 1)) {
			const struct slot_key *y = &v[tab[h]];
			if (y->cls == v[x].cls && y->step == v[x].step && y->hash == v[x].hash && y->occ == v[x].occ)
				break;
		}
		if (tab[h] < 0) {
			tab[h] = (int32_t)x;
			c->k[v[x].ri].slot[v[x].j] = (int32_t)c->nslot++;
		} else {
			c->k[v[x].ri].slot[v[x].j] = c->k[v[tab[h]].ri].slot[v[tab[h]].j];
		}
	}
	free(tab);
}

/* The ranks of each class that run its first rank's ops (ranks in
 * parallel: each writes its own slot[] and mapped[i]): mapped[i] = 1 and
 * slot[] holding the first rank's op; any other keeps slot[] at -1. */
struct class_map_job { struct whatif_ctx *c; const int32_t *first; const struct op_key_table *lt; uint8_t *mapped; };

static void map_task(void *arg, size_t w, size_t i)
{
	(void)w;
	struct class_map_job *m = arg;
	struct rank_input *k = &m->c->k[i];
	int32_t f = m->first[k->cls];
	if (m->c->csize[k->cls] < 2 || f < 0 || (size_t)f == i)
		return;
	uint32_t *occ = xmalloc((k->n ? k->n : 1) * sizeof(*occ));
	wi_occurrences(k, occ);
	const struct rank_input *fk = &m->c->k[f];
	m->mapped[i] = (uint8_t)ltab_map(&m->lt[k->cls], fk, k, occ, k->slot);
	if (!m->mapped[i])
		for (size_t j = 0; j < k->n; j++)
			k->slot[j] = -1;
	if (m->mapped[i]) { /* per op of the first rank, this rank's op */
		int32_t *inv = xmalloc((fk->n ? fk->n : 1) * sizeof(*inv));
		for (size_t x = 0; x < fk->n; x++)
			inv[x] = -1;
		for (size_t j = 0; j < k->n; j++)
			if (k->slot[j] >= 0)
				inv[k->slot[j]] = (int32_t)j;
		m->c->inv[i] = inv;
	}
	free(occ);
}

/* A mapped rank's slots: its first rank's op's (ranks in parallel). */
static void slot_of_first_task(void *arg, size_t w, size_t i)
{
	(void)w;
	struct class_map_job *m = arg;
	struct rank_input *k = &m->c->k[i];
	if (!m->mapped[i])
		return;
	const int32_t *fs = m->c->k[m->first[k->cls]].slot;
	for (size_t j = 0; j < k->n; j++)
		if (k->slot[j] >= 0)
			k->slot[j] = fs[k->slot[j]];
}

/* The ranks of each work class (crank, cr0) and which classes are aligned:
 * two or more ranks, each its first rank or one whose every op the first
 * rank runs (mapped); an aligned class's slot q is the first rank's op
 * sj[q], on another rank its op inv[sj[q]], so its members need no list. */
static void align_classes(struct whatif_ctx *c, const int32_t *first, const uint8_t *mapped)
{
	c->calign = xcalloc(c->n + 1, 1);
	c->cr0 = xcalloc(c->n + 2, sizeof(*c->cr0));
	c->crank = xmalloc((c->n ? c->n : 1) * sizeof(*c->crank));
	for (size_t q = 0; q <= c->n; q++)
		c->calign[q] = c->csize[q] >= 2;
	for (size_t i = 0; i < c->n; i++) {
		int cl = c->k[i].cls;
		if (first[cl] != (int32_t)i && !mapped[i])
			c->calign[cl] = 0;
		c->cr0[cl + 1]++;
	}
	for (size_t q = 0; q <= c->n; q++)
		c->cr0[q + 1] += c->cr0[q];
	size_t *at = xmalloc((c->n + 1) * sizeof(*at));
	memcpy(at, c->cr0, (c->n + 1) * sizeof(*at));
	for (size_t i = 0; i < c->n; i++)
		c->crank[at[c->k[i].cls]++] = (int32_t)i;
	free(at);
}

/* Slot ids: per class, its first rank's ops by key; a rank whose every op
 * is there takes that op's slot; the other ranks' keys are hashed. */
static void slot_keys(struct whatif_ctx *c)
{
	int32_t *first = xmalloc((c->n + 1) * sizeof(*first));
	uint8_t *mapped = xcalloc(c->n ? c->n : 1, 1);
	struct op_key_table *lt = xcalloc(c->n + 1, sizeof(*lt));
	size_t nmax = 1;
	for (size_t i = 0; i < c->n; i++)
		if (c->k[i].n > nmax)
			nmax = c->k[i].n;
	uint32_t *occ = xmalloc(nmax * sizeof(*occ));
	for (size_t q = 0; q <= c->n; q++)
		first[q] = -1;
	for (size_t i = 0; i < c->n; i++) {
		struct rank_input *k = &c->k[i];
		if (c->csize[k->cls] < 2 || first[k->cls] >= 0) /* a rank alone in its class has no peers */
			continue;
		wi_occurrences(k, occ);
		first[k->cls] = (int32_t)i;
		ltab_build(&lt[k->cls], k, occ);
	}
	c->inv = xcalloc(c->n ? c->n : 1, sizeof(*c->inv));
	struct class_map_job mj = { c, first, lt, mapped };
	pool_for(c->nt, c->n, map_task, &mj);
	align_classes(c, first, mapped);
	size_t total = 0;
	for (size_t i = 0; i < c->n; i++) {
		struct rank_input *k = &c->k[i];
		if (mapped[i] || c->csize[k->cls] < 2)
			continue;
		for (size_t j = 0; j < k->n; j++) {
			k->slot[j] = -1;
			total += k->r->ops[j].step >= 0;
		}
	}
	struct slot_key *v = xmalloc((total ? total : 1) * sizeof(*v));
	size_t m = 0;
	for (size_t i = 0; i < c->n; i++) {
		struct rank_input *k = &c->k[i];
		if (mapped[i] || c->csize[k->cls] < 2)
			continue;
		wi_occurrences(k, occ);
		for (size_t j = 0; j < k->n; j++)
			if (k->r->ops[j].step >= 0)
				v[m++] = (struct slot_key){ k->cls, k->r->steps[k->r->ops[j].step].number, k->r->ops[j].hash,
							occ[j], (int32_t)i, (int32_t)j };
	}
	slot_hash(c, v, m);
	free(v);
	pool_for(c->nt, c->n, slot_of_first_task, &mj);
	for (size_t q = 0; q <= c->n; q++)
		free(lt[q].e);
	free(lt);
	free(occ);
	free(first);
	free(mapped);
}

#define SLOT_BLOCK 64 /* ops of each rank in turn while the members are written */

/* Each slot's members contiguous in sm (in no particular order: only their
 * order statistics are read), their durations and host gaps beside in sd
 * and sg.  Written SLOT_BLOCK ops of every rank in turn: the ranks of a
 * class run their slots in nearly the same order, so the writes of a block
 * stay in a few cache lines per slot.  Returns the largest slot or class. */
static size_t slot_members(struct whatif_ctx *c)
{
	size_t ns = c->nslot ? c->nslot : 1, m = 0, nmax = 0;
	c->sat = xmalloc(ns * sizeof(*c->sat));
	c->sn = xcalloc(ns, sizeof(*c->sn));
	c->scls = xmalloc(ns * sizeof(*c->scls));
	c->sj = xmalloc(ns * sizeof(*c->sj));
	for (size_t i = 0; i < c->n; i++) {
		const struct rank_input *k = &c->k[i];
		int al = c->calign[k->cls];
		for (size_t j = 0; j < k->n; j++) {
			int32_t q = k->slot[j];
			if (q < 0)
				continue;
			c->scls[q] = k->cls;
			if (al) { /* its first rank's op (the first writes it) */
				if (c->crank[c->cr0[k->cls]] == (int32_t)i)
					c->sj[q] = (int32_t)j;
				continue;
			}
			c->sj[q] = -1;
			c->sn[q]++;
			m++;
		}
		if (!al && k->n > nmax)
			nmax = k->n;
	}
	c->sm = xmalloc((m ? m : 1) * sizeof(*c->sm));
	c->sd = xmalloc((m ? m : 1) * sizeof(*c->sd));
	c->sg = xmalloc((m ? m : 1) * sizeof(*c->sg));
	size_t kmax = 1, at = 0;
	for (size_t q = 0; q < c->nslot; q++) {
		c->sat[q] = at;
		at += c->sn[q];
		if (c->sn[q] > kmax)
			kmax = c->sn[q];
		c->sn[q] = 0;
	}
	for (size_t j0 = 0; j0 < nmax; j0 += SLOT_BLOCK)
		for (size_t i = 0; i < c->n; i++) {
			const struct rank_input *k = &c->k[i];
			size_t j1 = j0 + SLOT_BLOCK < k->n ? j0 + SLOT_BLOCK : k->n;
			if (c->calign[k->cls])
				continue;
			for (size_t j = j0; j < j1; j++) {
				int32_t q = k->slot[j];
				if (q < 0)
					continue;
				size_t x = c->sat[q] + c->sn[q]++;
				c->sm[x] = (struct op_ref){ (int32_t)i, (int32_t)j };
				c->sd[x] = k->d[j];
				c->sg[x] = k->gap[j];
			}
		}
	for (size_t x = 0; x < c->n; x++)
		if (c->csize[c->k[x].cls] > kmax)
			kmax = c->csize[c->k[x].cls];
	return kmax;
}

#define MED_BLOCK 256 /* slots per task of slot_medians */
#define ALIGN_BLOCK 32 /* ops of an aligned class per task (its values gathered rank by rank) */

/* Tasks: MED_BLOCK slots kept in sm each, then ALIGN_BLOCK ops of the
 * first rank of each aligned class (cls[], j0[] per task). */
struct median_job { struct whatif_ctx *c; size_t kmax, nsm; int32_t *cls; size_t *j0; };

static void med_task(void *arg, size_t w, size_t b)
{
	(void)w;
	struct median_job *mj = arg;
	const struct whatif_ctx *c = mj->c;
	int64_t *tmp = xmalloc(mj->kmax * sizeof(*tmp));
	if (b < mj->nsm) {
		for (size_t q = b * MED_BLOCK; q < (b + 1) * MED_BLOCK && q < c->nslot; q++)
			if (c->sj[q] < 0)
				slot_medians(c, q, c->sd + c->sat[q], c->sg + c->sat[q], c->sn[q], tmp);
		free(tmp);
		return;
	}
	/* an aligned class: its ranks' values of ALIGN_BLOCK ops of the first
	 * rank, rank by rank (each rank's ops in nearly the same order) */
	size_t cl = (size_t)mj->cls[b - mj->nsm], j0 = mj->j0[b - mj->nsm], K = c->cr0[cl + 1] - c->cr0[cl];
	int32_t fi = c->crank[c->cr0[cl]];
	const struct rank_input *f = &c->k[fi];
	size_t nb = f->n - j0 < ALIGN_BLOCK ? f->n - j0 : ALIGN_BLOCK, cnt[ALIGN_BLOCK] = { 0 };
	int64_t *v = xmalloc(2 * nb * K * sizeof(*v));
	for (size_t r = 0; r < K; r++) {
		int32_t i = c->crank[c->cr0[cl] + r];
		const struct rank_input *k = &c->k[i];
		for (size_t x = 0; x < nb; x++) {
			int32_t j = i == fi ? (int32_t)(j0 + x) : c->inv[i][j0 + x];
			if (j < 0)
				continue;
			v[x * K + cnt[x]] = k->d[j];
			v[(nb + x) * K + cnt[x]++] = k->gap[j];
		}
	}
	for (size_t x = 0; x < nb; x++)
		if (f->slot[j0 + x] >= 0)
			slot_medians(c, (size_t)f->slot[j0 + x], v + x * K, v + (nb + x) * K, cnt[x], tmp);
	free(v);
	free(tmp);
}

void wi_build_slots(struct whatif_ctx *c)
{
	slot_keys(c);
	size_t kmax = slot_members(c);
	c->med_all_d = xmalloc((c->nslot ? c->nslot : 1) * sizeof(int64_t));
	c->med_all_g = xmalloc((c->nslot ? c->nslot : 1) * sizeof(int64_t));
	c->mid = xmalloc((c->nslot ? c->nslot : 1) * 4 * sizeof(int64_t));
	struct median_job mj = { c, kmax, (c->nslot + MED_BLOCK - 1) / MED_BLOCK, NULL, NULL };
	size_t na = 0, cap = 0, cap2 = 0;
	for (size_t cl = 0; cl <= c->n; cl++)
		for (size_t j0 = 0; c->calign[cl] && j0 < c->k[c->crank[c->cr0[cl]]].n; j0 += ALIGN_BLOCK) {
			GROW(mj.cls, cap, na + 1);
			GROW(mj.j0, cap2, na + 1);
			mj.cls[na] = (int32_t)cl;
			mj.j0[na++] = j0;
		}
	pool_for(c->nt, mj.nsm + na, med_task, &mj);
	free(mj.cls);
	free(mj.j0);
}

/* The ideal duration and gap of the ops of set-fixed ranks: per slot, the
 * median over its members outside the set (the whole slot when none). */
void wi_set_medians(const struct whatif_ctx *c, size_t *cmask, const uint8_t *mask, int64_t *md, int64_t *mg)
{
	int64_t *t1 = NULL, *t2 = NULL;
	size_t cap = 0;
	memset(cmask, 0, (c->n + 1) * sizeof(*cmask));
	for (size_t i = 0; i < c->n; i++)
		cmask[c->k[i].cls] += mask[i] != 0;
	for (size_t q = 0; q < c->nslot; q++) {
		size_t at = c->sat[q], n = c->sn[q], m = 0, cl = (size_t)c->scls[q];
		size_t kc = c->csize[cl];
		if (kc > n)
			n = kc; /* room for the zeros */
		if (n > cap) {
			cap = n;
			t1 = xrealloc(t1, cap * sizeof(*t1));
			t2 = xrealloc(t2, cap * sizeof(*t2));
		}
		for (size_t x = 0; x < c->sn[q]; x++) {
			if (!mask[c->sm[at + x].ri]) {
				t1[m] = c->sd[at + x];
				t2[m++] = c->sg[at + x];
			}
		}
		for (size_t x = c->cr0[cl]; c->sj[q] >= 0 && x < c->cr0[cl + 1]; x++) { /* an aligned class's slot */
			int32_t i = c->crank[x], j = x == c->cr0[cl] ? c->sj[q] : c->inv[i][c->sj[q]];
			if (j >= 0 && !mask[i]) {
				t1[m] = c->k[i].d[j];
				t2[m++] = c->k[i].gap[j];
			}
		}
		size_t out = c->csize[cl] - cmask[cl];
		for (; m < out && m < cap; m++) /* outside ranks without the op: 0 */
			t1[m] = t2[m] = 0;
		md[q] = m ? median_i64(t1, m) : c->med_all_d[q];
		mg[q] = m ? median_i64(t2, m) : c->med_all_g[q];
	}
	free(t1);
	free(t2);
}

struct anchor_key { int cls; int64_t step, a0; int32_t i; };

static int cmp_akey(const void *x, const void *y)
{
	const struct anchor_key *p = x, *q = y;
	if (p->cls != q->cls)
		return p->cls - q->cls;
	if (p->step != q->step)
		return (p->step > q->step) - (p->step < q->step);
	if (p->a0 != q->a0)
		return (p->a0 > q->a0) - (p->a0 < q->a0);
	return p->i - q->i;
}

/* The end of the anchor group that starts at c->aord[a]. */
size_t wi_anchor_group(const struct whatif_ctx *c, size_t a)
{
	const struct rank_input *f = &c->k[c->aord[a]];
	size_t b = a + 1;
	while (b < c->naord && c->k[c->aord[b]].cls == f->cls && c->k[c->aord[b]].astep == f->astep)
		b++;
	return b;
}

/* The first launch of each rank is a host gap from a common origin (the
 * replay's zero): its ideal is the lower median of its peers' first
 * launches (its class, the first launch in the same step number: ma0), of
 * the whole group for the ideal step.  c->aord: the ranks with launches,
 * grouped so, each group in the order of its first launches. */
void wi_build_anchors(struct whatif_ctx *c)
{
	struct anchor_key *v = xmalloc((c->n ? c->n : 1) * sizeof(*v));
	size_t m = 0;
	for (size_t i = 0; i < c->n; i++)
		if (c->k[i].a0 != UNSET)
			v[m++] = (struct anchor_key){ c->k[i].cls, c->k[i].astep, c->k[i].a0, (int32_t)i };
	qsort(v, m, sizeof(*v), cmp_akey);
	c->aord = xmalloc((m ? m : 1) * sizeof(*c->aord));
	for (size_t q = 0; q < m; q++)
		c->aord[q] = v[q].i;
	c->naord = m;
	free(v);
	for (size_t a = 0, b; a < c->naord; a = b) {
		b = wi_anchor_group(c, a);
		size_t K = b - a, t = K >= 2 ? (K - 2) / 2 : 0;
		for (size_t p = a; K >= 2 && p < b; p++) /* the others' lower median: position t of them */
			c->k[c->aord[p]].ma0 = c->k[c->aord[a + (p - a > t ? t : t + 1)]].a0;
	}
}
