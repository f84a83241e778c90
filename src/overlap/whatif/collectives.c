/*
 * collectives.c - the join's matched collectives as the replay's calls:
 * their members in the op tables (rank by rank, each in op order), each
 * collective's measured last arrival (a call's transfer is its end - that
 * arrival, read when needed: wi_xfer) and each call's ideal transfer (the
 * median transfer of the calls of its type and size).
 */
#include "overlap/whatif/private.h"

#include <stdlib.h>
#include <string.h>

#include "base/pool.h"
#include "base/stats.h"

int64_t wi_xfer(const struct whatif_ctx *c, size_t m)
{
	const struct member *u = &c->gm[m];
	int64_t e = meas_e(&c->k[u->ri], (size_t)u->j), last = c->g[c->gmq[m]].last;
	return e - last > 0 ? e - last : 0;
}

/* Collective q's measured last arrival; a collective with one call in the
 * op tables (its peers' are not) leaves that call a plain op
 * (collectives in parallel: each writes its own members). */
static void last_task(void *arg, size_t w, size_t q)
{
	(void)w;
	struct whatif_ctx *c = arg;
	struct coll_group *g = &c->g[q];
	int64_t last = INT64_MIN;
	for (size_t m = 0; m < g->n; m++) {
		const struct member *u = &c->gm[g->at + m];
		int64_t t = meas_s(&c->k[u->ri], (size_t)u->j);
		if (t > last)
			last = t;
	}
	g->last = last;
}

struct xfer_class { uint64_t bytes; uint32_t id; uint8_t type, used; };

/* The transfer class (type, size) of every member of a collective of two
 * or more calls, ids in order of first appearance (a hash of the few
 * classes), and the calls of each into *cnt; returns the classes. */
static size_t xfer_classes(struct whatif_ctx *c, size_t **cnt)
{
	size_t cap = 64, ncls = 0, ccap = 0;
	struct xfer_class *tab = xcalloc(cap, sizeof(*tab));
	*cnt = NULL;
	for (size_t m = 0; m < c->ngm; m++) {
		struct member *u = &c->gm[m];
		if (c->g[c->gmq[m]].n < 2)
			continue;
		const struct comm_inst *ci = &c->a->r[u->ri].inst[c->gmi[m]];
		uint64_t hv = (ci->bytes ^ ((uint64_t)ci->type << 56)) * 0x9e3779b97f4a7c15ull;
		size_t h = (size_t)(hv >> 40) & (cap - 1);
		while (tab[h].used && (tab[h].bytes != ci->bytes || tab[h].type != ci->type))
			h = (h + 1) & (cap - 1);
		if (!tab[h].used) {
			tab[h] = (struct xfer_class){ ci->bytes, (uint32_t)ncls++, ci->type, 1 };
			GROW(*cnt, ccap, ncls);
			(*cnt)[ncls - 1] = 0;
		}
		u->xcls = tab[h].id;
		(*cnt)[tab[h].id]++;
		if (2 * ncls > cap) { /* keep the table at most half full */
			struct xfer_class *old = tab;
			size_t oc = cap;
			cap *= 2;
			tab = xcalloc(cap, sizeof(*tab));
			for (size_t y = 0; y < oc; y++) {
				if (!old[y].used)
					continue;
				uint64_t ov = (old[y].bytes ^ ((uint64_t)old[y].type << 56)) * 0x9e3779b97f4a7c15ull;
				size_t z = (size_t)(ov >> 40) & (cap - 1);
				while (tab[z].used)
					z = (z + 1) & (cap - 1);
				tab[z] = old[y];
			}
			free(old);
		}
	}
	free(tab);
	return ncls;
}

/* Each class's ideal transfer: the median transfer of its calls. */
static void ideal_xfers(struct whatif_ctx *c)
{
	size_t *cnt;
	size_t ncls = xfer_classes(c, &cnt);
	size_t *pos = xmalloc((ncls ? ncls : 1) * sizeof(*pos)), at = 0;
	for (size_t y = 0; y < ncls; y++) {
		pos[y] = at;
		at += cnt[y];
	}
	int64_t *xs = xmalloc((at ? at : 1) * sizeof(*xs));
	for (size_t m = 0; m < c->ngm; m++)
		if (c->g[c->gmq[m]].n >= 2)
			xs[pos[c->gm[m].xcls]++] = wi_xfer(c, m);
	c->xideal = xmalloc((ncls ? ncls : 1) * sizeof(*c->xideal));
	for (size_t y = 0; y < ncls; y++) {
		pos[y] -= cnt[y];
		c->xideal[y] = median_mid_i64(xs + pos[y], cnt[y]);
	}
	free(cnt);
	free(pos);
	free(xs);
}

/* A rank's calls of the join's matched collectives, in op order: op and
 * its call (index into r->inst). */
static size_t rank_calls(const struct rank_result *r, int32_t *j, uint32_t *inst)
{
	size_t m = 0;
	for (size_t q = 0; q < r->ninst; q++) {
		const struct comm_inst *ci = &r->inst[q];
		if (ci->op < 0 || ci->grp < 0 || ci->wait_ns < 0)
			continue;
		if (j) {
			j[m] = ci->op;
			inst[m] = (uint32_t)q;
		}
		m++;
	}
	return m;
}

/* Rank i's communication no matched collective holds (OPF_UCOMM), with
 * the type of its call record where it has one (ranks in parallel). */
static void unmatched_task(void *arg, size_t w, size_t i)
{
	(void)w;
	struct whatif_ctx *c = arg;
	struct rank_input *k = &c->k[i];
	const struct rank_result *r = k->r;
	uint8_t *comm = xmalloc(k->t.nkey ? k->t.nkey : 1); /* per key: communication */
	for (size_t x = 0; x < k->t.nkey; x++)
		comm[x] = k->t.keys[x].kind == K_COMM;
	for (size_t j = 0; j < k->n; j++)
		if (comm[ot_keyi(&k->t, j)] && !(k->flags[j] & OPF_CALL))
			k->flags[j] |= OPF_UCOMM;
	free(comm);
	size_t m = 0;
	for (size_t q = 0; q < r->ninst; q++)
		m += r->inst[q].op >= 0 && (size_t)r->inst[q].op < k->n && (k->flags[r->inst[q].op] & OPF_UCOMM);
	k->ucomm = xmalloc((m ? m : 1) * sizeof(*k->ucomm));
	for (size_t q = 0; q < r->ninst; q++)
		if (r->inst[q].op >= 0 && (size_t)r->inst[q].op < k->n && (k->flags[r->inst[q].op] & OPF_UCOMM))
			k->ucomm[k->nucomm++] = (struct ucomm_in){ r->inst[q].op, r->inst[q].type, { 0 } };
	qsort(k->ucomm, k->nucomm, sizeof(*k->ucomm), wi_cmp_i32);
}

/* The matched collectives of the join and their calls in the op tables;
 * each call's ideal transfer; per rank its matched calls (OPF_CALL) and
 * the communication no matched collective holds (OPF_UCOMM). */
void wi_build_groups(struct whatif_ctx *c)
{
	int64_t ng = 0;
	size_t total = 0;
	for (size_t i = 0; i < c->n; i++)
		for (size_t q = 0; q < c->a->r[i].ninst; q++) {
			const struct comm_inst *ci = &c->a->r[i].inst[q];
			if (ci->op < 0 || ci->grp < 0 || ci->wait_ns < 0)
				continue;
			if (ci->grp + 1 > ng)
				ng = ci->grp + 1;
			total++;
		}
	c->ng = (size_t)ng;
	c->ngm = total;
	c->g = xcalloc(c->ng ? c->ng : 1, sizeof(*c->g));
	c->gm = xmalloc((total ? total : 1) * sizeof(*c->gm));
	c->gmq = xmalloc((total ? total : 1) * sizeof(*c->gmq));
	c->gmi = xmalloc((total ? total : 1) * sizeof(*c->gmi));
	for (size_t i = 0; i < c->n; i++)
		for (size_t q = 0; q < c->a->r[i].ninst; q++) {
			const struct comm_inst *ci = &c->a->r[i].inst[q];
			if (ci->op >= 0 && ci->grp >= 0 && ci->wait_ns >= 0)
				c->g[ci->grp].n++;
		}
	size_t at = 0;
	for (size_t q = 0; q < c->ng; q++) {
		c->g[q].at = at;
		at += c->g[q].n;
		c->g[q].n = 0;
	}
	size_t nmax = 0;
	for (size_t i = 0; i < c->n; i++) {
		size_t m = rank_calls(&c->a->r[i], NULL, NULL);
		nmax = m > nmax ? m : nmax;
	}
	int32_t *cj = xmalloc((nmax ? nmax : 1) * sizeof(*cj));
	uint32_t *cq = xmalloc((nmax ? nmax : 1) * sizeof(*cq));
	for (size_t i = 0; i < c->n; i++) { /* rank by rank, each rank's calls in op order */
		const struct rank_result *r = &c->a->r[i];
		size_t nc = rank_calls(r, cj, cq);
		for (size_t x = 0; x < nc; x++) {
			const struct comm_inst *ci = &r->inst[cq[x]];
			size_t m = c->g[ci->grp].at + c->g[ci->grp].n++;
			c->gm[m] = (struct member){ (int32_t)i, cj[x], 0, ci->type, { 0 } };
			c->gmq[m] = (int32_t)ci->grp;
			c->gmi[m] = cq[x];
		}
	}
	free(cj);
	free(cq);
	pool_for(c->nt, c->ng, last_task, c);
	ideal_xfers(c);
	/* per rank its calls of collectives of two or more (the replay's
	 * calls; a call alone in the op tables is a plain op) */
	for (size_t q = 0; q < c->ng; q++)
		for (size_t m = c->g[q].at; c->g[q].n >= 2 && m < c->g[q].at + c->g[q].n; m++)
			c->k[c->gm[m].ri].ncalls++;
	for (size_t i = 0; i < c->n; i++) {
		c->k[i].calls = xmalloc((c->k[i].ncalls ? c->k[i].ncalls : 1) * sizeof(*c->k[i].calls));
		c->k[i].ncalls = 0;
	}
	for (size_t m = 0; m < c->ngm; m++) {
		if (c->g[c->gmq[m]].n < 2)
			continue;
		struct rank_input *k = &c->k[c->gm[m].ri];
		k->calls[k->ncalls++] = (struct call_in){ c->gm[m].j, (int32_t)m };
		k->flags[c->gm[m].j] |= OPF_CALL;
	}
	for (size_t i = 0; i < c->n; i++) /* members are in collective order: each rank's, by op */
		qsort(c->k[i].calls, c->k[i].ncalls, sizeof(*c->k[i].calls), wi_cmp_i32);
	pool_for(c->nt, c->n, unmatched_task, c);
	free(c->gmi);
	c->gmi = NULL;
}
