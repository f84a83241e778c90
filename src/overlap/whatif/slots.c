/*
 * slots.c - the ideals: a slot is the same op on the ranks of one work
 * class (step number, name, occurrence); per slot the median duration and
 * host gap, per op its peers' median, per set of ranks the median outside
 * it; and the ideal of each rank's first launch (the anchors).
 *
 * A class whose every rank runs, stream by stream, the ops its first rank
 * runs in the same order (the usual data-parallel job) is aligned: an op's
 * slot is the first rank's at the same place of the same stream
 * (class_slots), so its ranks keep no slot per op, and its medians are
 * found block by block of the first rank's ops, every rank's values of a
 * block read by walking its streams forward (gather).  Any other class
 * keeps a slot per op on each of its ranks and its members by slot
 * (sm, sd, sg).
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
	return v[median_lower_index(n)]; /* stragglers only slow ops down (slot_medians) */
}

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

/* Whether an op n ranks of a class of K run is extra work of a few: run
 * by at most half of the class, the ranks without it count as 0 (removing
 * it is the fix: a rank's extra kernels, a planted delay).  Run by more
 * than half, it is the class's work and the ranks without it are missing
 * it (an incomplete trace: wi_isolate_incomplete): they are no zero-length
 * peers, the ideal comes from the ranks that ran it. */
static int extra_op(size_t n, size_t K)
{
	return 2 * n <= K;
}

/* The medians of slot q (vd, vg: its n members' durations and host gaps),
 * the ranks of its class without the op counted as 0 where it is extra
 * work (extra_op), else over its members only: over the whole class, and
 * the two order statistics that give each member's median over the others
 * (wi_peer_median).  O(K) per slot: only the order statistics around the
 * middle are found. */
static void slot_medians(const struct whatif_ctx *c, size_t q, const int64_t *vd, const int64_t *vg, size_t n,
			 int64_t *tmp)
{
	size_t K = c->csize[c->scls[q]];
	if (K < n || !extra_op(n, K))
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
		all[q] = V(median_lower_index(K)); /* stragglers only slow ops down */
		mid[0] = V(lo); /* the lower median of the K - 1 others is V(lo) or V(lo + 1) (wi_peer_median) */
		mid[1] = V(lo + 1);
#undef V
	}
}

/* The occurrence of each op's (step, name) in its rank, in op order (an
 * open-addressing count), into occ[]; ops without a step get UINT32_MAX. */
void wi_occurrences(const struct rank_input *k, uint32_t *occ)
{
	size_t cap = 16;
	while (cap < 2 * k->n)
		cap *= 2;
	struct occ_count { int32_t step; uint32_t hash, n; int used; } *tab = xcalloc(cap, sizeof(*tab));
	uint32_t run = 0;
	for (size_t j = 0; j < k->n; j++) {
		int32_t st = ot_step_at(&k->t, &run, j);
		uint32_t hash = ot_key(&k->t, j)->hash;
		occ[j] = UINT32_MAX;
		if (st < 0)
			continue;
		size_t h = ((size_t)hash * 2654435761u ^ (size_t)st * 40503u) & (cap - 1);
		while (tab[h].used && (tab[h].step != st || tab[h].hash != hash))
			h = (h + 1) & (cap - 1);
		if (!tab[h].used)
			tab[h] = (struct occ_count){ st, hash, 0, 1 };
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
	uint32_t run = 0;
	for (size_t j = 0; j < k->n; j++) {
		int32_t st = ot_step_at(&k->t, &run, j);
		if (st < 0)
			continue;
		uint32_t hash = ot_key(&k->t, j)->hash;
		size_t h = lhash(st, hash, occ[j], t->cap);
		while (t->e[h].j >= 0)
			h = (h + 1) & (t->cap - 1);
		t->e[h] = (struct op_key){ st, (int32_t)j, hash, occ[j] };
	}
}

/* Rank k's ops as ops of the rank t was built from (same step numbers at the
 * same indices): map[j] its op there, -1 without a step; 0 when one has no
 * match (then the keys are compared across ranks). */
static int ltab_map(const struct op_key_table *t, const struct rank_input *ref, const struct rank_input *k,
		    const uint32_t *occ, int32_t *map)
{
	if (ref->r->nsteps != k->r->nsteps)
		return 0;
	for (size_t q = 0; q < k->r->nsteps; q++)
		if (ref->r->steps[q].number != k->r->steps[q].number)
			return 0;
	uint32_t run = 0;
	for (size_t j = 0; j < k->n; j++) {
		int32_t st = ot_step_at(&k->t, &run, j);
		map[j] = -1;
		if (st < 0)
			continue;
		uint32_t hash = ot_key(&k->t, j)->hash;
		size_t h = lhash(st, hash, occ[j], t->cap);
		for (; t->e[h].j >= 0; h = (h + 1) & (t->cap - 1))
			if (t->e[h].step == st && t->e[h].hash == hash && t->e[h].occ == occ[j])
				break;
		if (t->e[h].j < 0)
			return 0;
		map[j] = t->e[h].j;
	}
	return 1;
}

/* Each stream's ops of rank k in order: at[q][p] the op at place p of
 * stream q, len[q] the stream's ops. */
struct stream_ops { int32_t **at; size_t *len, nstr; };

static void stream_ops(const struct rank_input *k, struct stream_ops *so)
{
	so->nstr = k->nstr;
	so->len = xcalloc(k->nstr ? k->nstr : 1, sizeof(*so->len));
	so->at = xcalloc(k->nstr ? k->nstr : 1, sizeof(*so->at));
	for (size_t j = 0; j < k->n; j++)
		so->len[op_stream(k, j)]++;
	for (size_t q = 0; q < k->nstr; q++) {
		so->at[q] = xmalloc((so->len[q] ? so->len[q] : 1) * sizeof(int32_t));
		so->len[q] = 0;
	}
	for (size_t j = 0; j < k->n; j++) {
		size_t q = op_stream(k, j);
		so->at[q][so->len[q]++] = (int32_t)j;
	}
}

static void stream_ops_free(struct stream_ops *so)
{
	for (size_t q = 0; q < so->nstr; q++)
		free(so->at[q]);
	free(so->at);
	free(so->len);
}

/* Whether mapped rank k (map: its ops as the first rank f's) runs f's ops
 * stream by stream in f's order (fo: f's stream ops). */
static int stream_aligned(const struct rank_input *k, const struct rank_input *f, const struct stream_ops *fo,
			  const int32_t *map)
{
	if (k->nstr != f->nstr || k->lorder)
		return 0;
	size_t *pos = xcalloc(k->nstr ? k->nstr : 1, sizeof(*pos));
	int ok = 1;
	for (size_t j = 0; ok && j < k->n; j++) {
		size_t q = op_stream(k, j), p = pos[q]++;
		if (p >= fo->len[q]) {
			ok = 0;
			break;
		}
		int32_t J = fo->at[q][p];
		ok = map[j] >= 0 ? map[j] == J : ot_step(&f->t, (size_t)J) < 0;
	}
	for (size_t q = 0; ok && q < k->nstr; q++)
		ok = pos[q] == fo->len[q];
	free(pos);
	return ok;
}

/* The ranks of each class and how they map to its first rank (ranks in
 * parallel: each writes its own entries): map[i] (NULL: not mapped) and
 * aligned[i]. */
struct class_map_job {
	struct whatif_ctx *c;
	const int32_t *first;
	const struct op_key_table *lt;
	const struct stream_ops *fo;  /* per class: its first rank's stream ops */
	int32_t **map;
	uint8_t *aligned;
};

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
	int32_t *map = xmalloc((k->n ? k->n : 1) * sizeof(*map));
	if (!ltab_map(&m->lt[k->cls], &m->c->k[f], k, occ, map)) {
		free(map);
		map = NULL;
	}
	free(occ);
	if (map && stream_aligned(k, &m->c->k[f], &m->fo[k->cls], map)) {
		m->aligned[i] = 1;
		free(map);
		map = NULL;
	}
	m->map[i] = map;
}

/* The ranks of each work class (crank, cr0) and which classes are aligned
 * (two or more ranks, each its first rank or stream-aligned with it). */
static void align_classes(struct whatif_ctx *c, const int32_t *first, const uint8_t *aligned)
{
	c->calign = xcalloc(c->n + 1, 1);
	c->cr0 = xcalloc(c->n + 2, sizeof(*c->cr0));
	c->crank = xmalloc((c->n ? c->n : 1) * sizeof(*c->crank));
	for (size_t q = 0; q <= c->n; q++)
		c->calign[q] = c->csize[q] >= 2;
	for (size_t i = 0; i < c->n; i++) {
		int cl = c->k[i].cls;
		if (first[cl] != (int32_t)i && !aligned[i])
			c->calign[cl] = 0;
		if (first[cl] == (int32_t)i && c->k[i].lorder)
			c->calign[cl] = 0; /* its host walk gives no stream places */
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

struct slot_key { int cls; int64_t step; uint32_t hash, occ; int32_t ri, j; };

/* Slot ids of the keyed ops v[0..m) by hashing (class, step, name,
 * occurrence), in the order of v, into each rank's slot[]. */
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

/* Slot ids of the first ranks and of the ranks not mapped to theirs, by
 * hashing their keys (rank by rank, op by op). */
static void hash_slots(struct whatif_ctx *c, int32_t *const *map, const uint8_t *aligned)
{
	size_t total = 0, nmax = 1;
	for (size_t i = 0; i < c->n; i++) {
		struct rank_input *k = &c->k[i];
		if (k->n > nmax)
			nmax = k->n;
		if (map[i] || aligned[i] || c->csize[k->cls] < 2)
			continue;
		k->slot = xmalloc((k->n ? k->n : 1) * sizeof(*k->slot));
		uint32_t run = 0;
		for (size_t j = 0; j < k->n; j++) {
			k->slot[j] = -1;
			total += ot_step_at(&k->t, &run, j) >= 0;
		}
	}
	struct slot_key *v = xmalloc((total ? total : 1) * sizeof(*v));
	uint32_t *occ = xmalloc(nmax * sizeof(*occ));
	size_t m = 0;
	for (size_t i = 0; i < c->n; i++) {
		struct rank_input *k = &c->k[i];
		if (map[i] || aligned[i] || c->csize[k->cls] < 2)
			continue;
		wi_occurrences(k, occ);
		uint32_t run = 0;
		for (size_t j = 0; j < k->n; j++) {
			int32_t st = ot_step_at(&k->t, &run, j);
			if (st >= 0)
				v[m++] = (struct slot_key){ k->cls, k->r->steps[st].number, ot_key(&k->t, j)->hash, occ[j],
							    (int32_t)i, (int32_t)j };
		}
	}
	slot_hash(c, v, m);
	free(v);
	free(occ);
}

/* The slots of every rank: the first rank's of an aligned class by place
 * (c->cslot; its ranks keep none), else per op (k->slot); a mapped rank's
 * op takes its first rank's op's slot. */
static void place_slots(struct whatif_ctx *c, const int32_t *first, int32_t **map, const uint8_t *aligned,
			const struct stream_ops *fo)
{
	c->cslot = xcalloc(c->n + 1, sizeof(*c->cslot));
	for (size_t cl = 0; cl <= c->n; cl++) {
		if (first[cl] < 0)
			continue;
		struct rank_input *f = &c->k[first[cl]];
		if (!c->calign[cl])
			continue;
		struct class_slots *cs = &c->cslot[cl];
		cs->nstr = f->nstr;
		cs->at = xcalloc(f->nstr ? f->nstr : 1, sizeof(*cs->at));
		for (size_t q = 0; q < f->nstr; q++) {
			cs->at[q] = xmalloc((fo[cl].len[q] ? fo[cl].len[q] : 1) * sizeof(int32_t));
			for (size_t p = 0; p < fo[cl].len[q]; p++)
				cs->at[q][p] = f->slot[fo[cl].at[q][p]];
		}
	}
	for (size_t i = 0; i < c->n; i++) {
		struct rank_input *k = &c->k[i];
		int cl = k->cls;
		if (first[cl] < 0 || (int32_t)i == first[cl])
			continue;
		const int32_t *fs = c->k[first[cl]].slot;
		if (c->calign[cl]) { /* by place */
			free(map[i]);
			map[i] = NULL;
			continue;
		}
		if (aligned[i]) { /* stream-aligned in a class that is not: its first rank's op by place */
			k->slot = xmalloc((k->n ? k->n : 1) * sizeof(*k->slot));
			size_t *pos = xcalloc(k->nstr ? k->nstr : 1, sizeof(*pos));
			for (size_t j = 0; j < k->n; j++) {
				size_t q = op_stream(k, j);
				k->slot[j] = fs[fo[cl].at[q][pos[q]++]];
			}
			free(pos);
		} else if (map[i]) {
			k->slot = map[i];
			map[i] = NULL;
			for (size_t j = 0; j < k->n; j++)
				k->slot[j] = k->slot[j] >= 0 ? fs[k->slot[j]] : -1;
		}
	}
	for (size_t cl = 0; cl <= c->n; cl++)
		if (first[cl] >= 0 && c->calign[cl]) {
			free(c->k[first[cl]].slot);
			c->k[first[cl]].slot = NULL;
		}
}

/* Slot ids: per class, its first rank's ops by key; a rank whose every op
 * is there takes that op's slot; the other ranks' keys are hashed. */
static void slot_keys(struct whatif_ctx *c)
{
	int32_t *first = xmalloc((c->n + 1) * sizeof(*first));
	uint8_t *aligned = xcalloc(c->n ? c->n : 1, 1);
	int32_t **map = xcalloc(c->n ? c->n : 1, sizeof(*map));
	struct op_key_table *lt = xcalloc(c->n + 1, sizeof(*lt));
	struct stream_ops *fo = xcalloc(c->n + 1, sizeof(*fo));
	for (size_t q = 0; q <= c->n; q++)
		first[q] = -1;
	for (size_t i = 0; i < c->n; i++) {
		struct rank_input *k = &c->k[i];
		if (c->csize[k->cls] < 2 || first[k->cls] >= 0) /* a rank alone in its class has no peers */
			continue;
		uint32_t *occ = xmalloc((k->n ? k->n : 1) * sizeof(*occ));
		wi_occurrences(k, occ);
		first[k->cls] = (int32_t)i;
		ltab_build(&lt[k->cls], k, occ);
		stream_ops(k, &fo[k->cls]);
		free(occ);
	}
	struct class_map_job mj = { c, first, lt, fo, map, aligned };
	pool_for(c->nt, c->n, map_task, &mj);
	align_classes(c, first, aligned);
	hash_slots(c, map, aligned);
	place_slots(c, first, map, aligned, fo);
	for (size_t q = 0; q <= c->n; q++) {
		free(lt[q].e);
		if (first[q] >= 0)
			stream_ops_free(&fo[q]);
	}
	for (size_t i = 0; i < c->n; i++)
		free(map[i]);
	free(map);
	free(lt);
	free(fo);
	free(first);
	free(aligned);
}

/* Each slot's class; the members of the slots of classes not aligned,
 * contiguous in sm (in no particular order: only their order statistics
 * are read), their durations and host gaps beside in sd and sg.  Returns
 * the largest slot or class. */
static size_t slot_members(struct whatif_ctx *c)
{
	size_t ns = c->nslot ? c->nslot : 1, m = 0;
	c->sat = xmalloc(ns * sizeof(*c->sat));
	c->sn = xcalloc(ns, sizeof(*c->sn));
	c->scls = xmalloc(ns * sizeof(*c->scls));
	for (size_t i = 0; i < c->n; i++) {
		const struct rank_input *k = &c->k[i];
		if (c->calign[k->cls] && c->crank[c->cr0[k->cls]] == (int32_t)i) { /* the first rank: by place */
			size_t *pos = xcalloc(k->nstr ? k->nstr : 1, sizeof(*pos));
			for (size_t j = 0; j < k->n; j++) {
				size_t q = op_stream(k, j);
				int32_t s = c->cslot[k->cls].at[q][pos[q]++];
				if (s >= 0)
					c->scls[s] = k->cls;
			}
			free(pos);
			continue;
		}
		for (size_t j = 0; k->slot && j < k->n; j++) {
			int32_t q = k->slot[j];
			if (q < 0)
				continue;
			c->scls[q] = k->cls;
			c->sn[q]++;
			m++;
		}
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
	for (size_t i = 0; i < c->n; i++) {
		const struct rank_input *k = &c->k[i];
		if (!k->slot)
			continue;
		for (size_t j = 0; j < k->n; j++) {
			int64_t g = op_gap(k, j);
			int32_t q = k->slot[j];
			if (q < 0)
				continue;
			size_t x = c->sat[q] + c->sn[q]++;
			c->sm[x] = (struct op_ref){ (int32_t)i, (int32_t)j };
			c->sd[x] = meas_e(k, j) - meas_s(k, j);
			c->sg[x] = g;
		}
	}
	for (size_t x = 0; x < c->n; x++)
		if (c->csize[c->k[x].cls] > kmax)
			kmax = c->csize[c->k[x].cls];
	return kmax;
}

/* ---- the values of an aligned class, block by block ------------------------------ */

#define GATHER_BLOCK 64 /* ops of the first rank per block: K x 64 x 16 bytes of values */

/* An aligned class's ranks' durations and gaps of GATHER_BLOCK ops of its
 * first rank at a time: vd[r * GATHER_BLOCK + x], vg[...] of the first
 * rank's op j0 + x on the class's rank r (crank order: each rank writes
 * its own run of values), read back slot by slot; each rank walks its
 * streams forward from block to block (cur). */
struct gather {
	const struct whatif_ctx *c;
	size_t cl, K, j0, nb;
	size_t *fp0, *fp1;           /* per stream: the first rank's places of the block */
	const struct stream_ops *fo; /* the first rank's stream ops */
	int64_t *vd, *vg;
	int32_t **cur;               /* per rank, per stream: its op at place fp0 (its walk's cursor) */
};

static void gather_task(void *arg, size_t worker, size_t r)
{
	(void)worker;
	struct gather *g = arg;
	const struct whatif_ctx *c = g->c;
	const struct rank_input *k = &c->k[c->crank[c->cr0[g->cl] + r]];
	for (size_t q = 0; q < k->nstr; q++) {
		int32_t j = g->cur[r][q];
		for (size_t p = g->fp0[q]; p < g->fp1[q]; p++) {
			size_t x = r * GATHER_BLOCK + (size_t)g->fo->at[q][p] - g->j0;
			g->vd[x] = meas_e(k, (size_t)j) - meas_s(k, (size_t)j);
			g->vg[x] = op_gap(k, (size_t)j);
			j = next_on_stream(k, j, q);
		}
		g->cur[r][q] = j;
	}
}

/* Calls fn(arg, slot, vd, vg, K) for every slot of aligned class cl with
 * its ranks' durations and gaps (crank order). */
static void gather(const struct whatif_ctx *c, size_t cl,
		   void (*fn)(void *arg, const struct whatif_ctx *c, size_t cl, int32_t slot, int64_t *vd, int64_t *vg),
		   void *arg)
{
	const struct rank_input *f = &c->k[c->crank[c->cr0[cl]]];
	struct stream_ops fo;
	stream_ops(f, &fo);
	struct gather g = { c, cl, c->cr0[cl + 1] - c->cr0[cl], 0, 0, NULL, NULL, &fo, NULL, NULL, NULL };
	size_t ns = f->nstr ? f->nstr : 1;
	g.fp0 = xcalloc(ns, sizeof(*g.fp0));
	g.fp1 = xcalloc(ns, sizeof(*g.fp1));
	g.vd = xmalloc(GATHER_BLOCK * g.K * sizeof(*g.vd));
	g.vg = xmalloc(GATHER_BLOCK * g.K * sizeof(*g.vg));
	int64_t *cd = xmalloc(2 * g.K * sizeof(*cd)), *cg = cd + g.K; /* one slot's values */
	g.cur = xmalloc(g.K * sizeof(*g.cur));
	for (size_t r = 0; r < g.K; r++) {
		const struct rank_input *k = &c->k[c->crank[c->cr0[cl] + r]];
		g.cur[r] = xmalloc(ns * sizeof(int32_t));
		for (size_t q = 0; q < k->nstr; q++)
			g.cur[r][q] = k->shead[q];
	}
	for (g.j0 = 0; g.j0 < f->n; g.j0 += GATHER_BLOCK) {
		g.nb = f->n - g.j0 < GATHER_BLOCK ? f->n - g.j0 : GATHER_BLOCK;
		memcpy(g.fp0, g.fp1, ns * sizeof(*g.fp0));
		for (size_t x = 0; x < g.nb; x++)
			g.fp1[op_stream(f, g.j0 + x)]++;
		pool_for(c->nt, g.K, gather_task, &g);
		size_t *pos = g.fp0; /* the places of the block's ops, in op order */
		size_t *at = xmalloc(ns * sizeof(*at));
		memcpy(at, pos, ns * sizeof(*at));
		for (size_t x = 0; x < g.nb; x++) {
			size_t q = op_stream(f, g.j0 + x);
			int32_t s = c->cslot[cl].at[q][at[q]++];
			if (s < 0)
				continue;
			for (size_t r = 0; r < g.K; r++) {
				cd[r] = g.vd[r * GATHER_BLOCK + x];
				cg[r] = g.vg[r * GATHER_BLOCK + x];
			}
			fn(arg, c, cl, s, cd, cg);
		}
		free(at);
	}
	for (size_t r = 0; r < g.K; r++) {
		free(g.cur[r]);
	}
	free(g.cur);
	free(g.fp0);
	free(g.fp1);
	free(g.vd);
	free(g.vg);
	free(cd);
	stream_ops_free(&fo);
}

/* ---- the medians ------------------------------------------------------------------ */

#define MED_BLOCK 256 /* slots per task of slot_medians */

struct median_job { struct whatif_ctx *c; size_t kmax; };

static void med_task(void *arg, size_t w, size_t b)
{
	(void)w;
	struct median_job *mj = arg;
	const struct whatif_ctx *c = mj->c;
	int64_t *tmp = xmalloc(mj->kmax * sizeof(*tmp));
	for (size_t q = b * MED_BLOCK; q < (b + 1) * MED_BLOCK && q < c->nslot; q++)
		if (!c->calign[c->scls[q]])
			slot_medians(c, q, c->sd + c->sat[q], c->sg + c->sat[q], c->sn[q], tmp);
	free(tmp);
}

static void aligned_medians(void *arg, const struct whatif_ctx *c, size_t cl, int32_t slot, int64_t *vd,
			    int64_t *vg)
{
	slot_medians(c, (size_t)slot, vd, vg, c->cr0[cl + 1] - c->cr0[cl], arg);
}

void wi_build_slots(struct whatif_ctx *c)
{
	slot_keys(c);
	size_t kmax = slot_members(c);
	c->med_all_d = xmalloc((c->nslot ? c->nslot : 1) * sizeof(int64_t));
	c->med_all_g = xmalloc((c->nslot ? c->nslot : 1) * sizeof(int64_t));
	c->mid = xmalloc((c->nslot ? c->nslot : 1) * 4 * sizeof(int64_t));
	struct median_job mj = { c, kmax };
	pool_for(c->nt, (c->nslot + MED_BLOCK - 1) / MED_BLOCK, med_task, &mj);
	int64_t *tmp = xmalloc(kmax * sizeof(*tmp));
	for (size_t cl = 0; cl <= c->n; cl++)
		if (c->calign[cl])
			gather(c, cl, aligned_medians, tmp);
	free(tmp);
}

/* ---- the medians of sets of ranks ------------------------------------------------- */

/* Sets: masks[0..n), their medians md[x] (durations) and md[x] + nslot
 * (gaps); cmask[x * (n_classes)]: the ranks of each class in set x. */
struct set_job {
	const uint8_t *const *masks;
	int64_t *const *md;
	size_t n;
	size_t *cmask;
	int64_t *t1, *t2;
	size_t cap;
};

/* The median of values t1/t2[0..m) of slot q (members: its ranks, in
 * and outside the set) of set x, padded with the class's ranks outside the
 * set that lack the op (0) where it is extra work (extra_op). */
static void set_median(const struct whatif_ctx *c, struct set_job *sj, size_t x, size_t q, size_t m, size_t members)
{
	size_t cl = (size_t)c->scls[q], out = c->csize[cl] - sj->cmask[x * (c->n + 1) + cl];
	for (; extra_op(members, c->csize[cl]) && m < out && m < sj->cap; m++) /* outside ranks without the op: 0 */
		sj->t1[m] = sj->t2[m] = 0;
	sj->md[x][q] = m ? median_i64(sj->t1, m) : c->med_all_d[q];
	sj->md[x][c->nslot + q] = m ? median_i64(sj->t2, m) : c->med_all_g[q];
}

static void set_room(struct set_job *sj, size_t n)
{
	if (n <= sj->cap)
		return;
	sj->cap = n;
	sj->t1 = xrealloc(sj->t1, n * sizeof(*sj->t1));
	sj->t2 = xrealloc(sj->t2, n * sizeof(*sj->t2));
}

static void aligned_sets(void *arg, const struct whatif_ctx *c, size_t cl, int32_t slot, int64_t *vd, int64_t *vg)
{
	struct set_job *sj = arg;
	size_t K = c->cr0[cl + 1] - c->cr0[cl];
	set_room(sj, K > c->csize[cl] ? K : c->csize[cl]);
	for (size_t x = 0; x < sj->n; x++) {
		size_t m = 0;
		for (size_t r = 0; r < K; r++)
			if (!sj->masks[x][c->crank[c->cr0[cl] + r]]) {
				sj->t1[m] = vd[r];
				sj->t2[m++] = vg[r];
			}
		set_median(c, sj, x, (size_t)slot, m, K);
	}
}

void wi_set_medians(const struct whatif_ctx *c, const uint8_t *const *masks, int64_t *const *md, size_t n)
{
	if (!n)
		return;
	struct set_job sj = { masks, md, n, xcalloc(n * (c->n + 1), sizeof(size_t)), NULL, NULL, 0 };
	for (size_t x = 0; x < n; x++)
		for (size_t i = 0; i < c->n; i++)
			sj.cmask[x * (c->n + 1) + (size_t)c->k[i].cls] += masks[x][i] != 0;
	for (size_t q = 0; q < c->nslot; q++) {
		if (c->calign[c->scls[q]])
			continue;
		size_t cl = (size_t)c->scls[q];
		set_room(&sj, c->sn[q] > c->csize[cl] ? c->sn[q] : c->csize[cl]); /* room for the zeros */
		for (size_t x = 0; x < n; x++) {
			size_t m = 0;
			for (size_t y = 0; y < c->sn[q]; y++) {
				if (!masks[x][c->sm[c->sat[q] + y].ri]) {
					sj.t1[m] = c->sd[c->sat[q] + y];
					sj.t2[m++] = c->sg[c->sat[q] + y];
				}
			}
			set_median(c, &sj, x, q, m, c->sn[q]);
		}
	}
	for (size_t cl = 0; cl <= c->n; cl++)
		if (c->calign[cl])
			gather(c, cl, aligned_sets, &sj);
	free(sj.cmask);
	free(sj.t1);
	free(sj.t2);
}

/* ---- the first launches ----------------------------------------------------------- */

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
		size_t K = b - a, t = K >= 2 ? median_lower_index(K - 1) : 0;
		for (size_t p = a; K >= 2 && p < b; p++) /* the others' lower median: position t of them */
			c->k[c->aord[p]].ma0 = c->k[c->aord[a + (p - a > t ? t : t + 1)]].a0;
	}
}
