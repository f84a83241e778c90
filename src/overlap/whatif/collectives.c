/*
 * collectives.c - the join's matched collectives as the replay's calls:
 * their members in the op tables, each call's measured transfer (its end -
 * the last arrival) and its ideal (the median transfer of its type and
 * size).
 */
#include "overlap/whatif/private.h"

#include <stdlib.h>
#include <string.h>

#include "base/pool.h"
#include "base/stats.h"

/* Each call's measured transfer (its end - the last arrival) of matched
 * collective q (collectives in parallel: each writes its own calls). */
static void xfer_task(void *arg, size_t w, size_t q)
{
	(void)w;
	struct whatif_ctx *c = arg;
	const struct coll_group *g = &c->g[q];
	int64_t last = INT64_MIN;
	for (size_t m = 0; m < g->n; m++) {
		struct op_ref u = c->gm[g->at + m];
		int64_t t = meas_s(&c->k[u.ri], (size_t)u.j);
		if (t > last)
			last = t;
	}
	for (size_t m = 0; m < g->n; m++) {
		struct op_ref u = c->gm[g->at + m];
		struct rank_input *k = &c->k[u.ri];
		if (g->n < 2) { /* its peers' calls are not in the op tables: a plain op */
			k->o[u.j].grp = -1;
			k->cat[u.j] = (uint8_t)wi_op_cat(&k->r->ops[u.j]);
			continue;
		}
		int64_t e = meas_e(k, (size_t)u.j);
		k->x[k->r->ops[u.j].inst] = e - last > 0 ? e - last : 0;
	}
}

struct xfer_class { uint64_t bytes; uint32_t id; uint8_t type, used; };

/* Of each rank's calls of matched collectives (two or more calls), in
 * rank and op order: its class (type, size) into cid[] (a hash of the few
 * classes), the calls of each class into cnt[]; returns the classes. */
static size_t xfer_classes(const struct whatif_ctx *c, uint32_t *cid, size_t **cnt)
{
	size_t cap = 64, ncls = 0, ccap = 0, m = 0;
	struct xfer_class *tab = xcalloc(cap, sizeof(*tab));
	*cnt = NULL;
	for (size_t i = 0; i < c->n; i++) {
		const struct rank_input *k = &c->k[i];
		for (size_t x = 0; x < k->ngops; x++) {
			const struct matched_call *ci = &k->gc[x];
			if (c->g[ci->grp].n < 2)
				continue;
			uint64_t hv = (ci->bytes ^ ((uint64_t)ci->type << 56)) * 0x9e3779b97f4a7c15ull;
			size_t h = (size_t)(hv >> 40) & (cap - 1);
			while (tab[h].used && (tab[h].bytes != ci->bytes || tab[h].type != ci->type))
				h = (h + 1) & (cap - 1);
			if (!tab[h].used) {
				tab[h] = (struct xfer_class){ ci->bytes, (uint32_t)ncls++, ci->type, 1 };
				GROW(*cnt, ccap, ncls);
				(*cnt)[ncls - 1] = 0;
			}
			cid[m++] = tab[h].id;
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
	}
	free(tab);
	return ncls;
}

/* The median of v[0..n) (n >= 1), v reordered: of an even count, the mean
 * of the two middle values (truncated). */
static int64_t median_mean2(int64_t *v, size_t n)
{
	if (n % 2)
		return select_kth_i64(v, n, n / 2);
	int64_t lo = select_kth_i64(v, n, n / 2 - 1), hi = INT64_MAX;
	for (size_t q = n / 2; q < n; q++)
		if (v[q] < hi)
			hi = v[q];
	return (lo + hi) / 2;
}

/* Each call's ideal transfer: the median transfer of the calls of its type
 * and size (calls read rank by rank: each rank's in order). */
static void ideal_xfers(struct whatif_ctx *c)
{
	size_t total = 0;
	for (size_t q = 0; q < c->ng; q++)
		total += c->g[q].n >= 2 ? c->g[q].n : 0;
	uint32_t *cid = xmalloc((total ? total : 1) * sizeof(*cid));
	size_t *cnt;
	size_t ncls = xfer_classes(c, cid, &cnt);
	size_t *pos = xmalloc((ncls ? ncls : 1) * sizeof(*pos)), at = 0;
	for (size_t y = 0; y < ncls; y++) {
		pos[y] = at;
		at += cnt[y];
	}
	int64_t *xs = xmalloc((total ? total : 1) * sizeof(*xs)), *med = xmalloc((ncls ? ncls : 1) * sizeof(*med));
	for (size_t pass = 0; pass < 2; pass++) {
		size_t m = 0;
		for (size_t i = 0; i < c->n; i++) {
			struct rank_input *k = &c->k[i];
			for (size_t x = 0; x < k->ngops; x++) {
				if (c->g[k->gc[x].grp].n < 2)
					continue;
				int32_t in = k->gc[x].inst;
				if (!pass)
					xs[pos[cid[m++]]++] = k->x[in];
				else
					k->xi[in] = med[cid[m++]];
			}
		}
		for (size_t y = 0; !pass && y < ncls; y++) {
			pos[y] -= cnt[y];
			med[y] = median_mean2(xs + pos[y], cnt[y]);
		}
	}
	free(cid);
	free(cnt);
	free(pos);
	free(xs);
	free(med);
}

/* The matched collectives of the join, their calls in the op tables, each
 * call's measured transfer (its end - the last arrival) and the ideal
 * transfer (the median over the calls of its type and size). */
void wi_build_groups(struct whatif_ctx *c)
{
	int64_t ng = 0;
	size_t total = 0;
	for (size_t i = 0; i < c->n; i++)
		for (size_t x = 0; x < c->k[i].ngops; x++) {
			int32_t q = c->k[i].gc[x].grp;
			if (q >= 0) {
				if (q + 1 > ng)
					ng = q + 1;
				total++;
			}
		}
	c->ng = (size_t)ng;
	c->g = xcalloc(c->ng ? c->ng : 1, sizeof(*c->g));
	c->gm = xmalloc((total ? total : 1) * sizeof(*c->gm));
	for (size_t i = 0; i < c->n; i++)
		for (size_t x = 0; x < c->k[i].ngops; x++)
			c->g[c->k[i].gc[x].grp].n++;
	size_t at = 0;
	for (size_t q = 0; q < c->ng; q++) {
		c->g[q].at = at;
		at += c->g[q].n;
		c->g[q].n = 0;
	}
	for (size_t i = 0; i < c->n; i++)
		for (size_t x = 0; x < c->k[i].ngops; x++) {
			int32_t j = c->k[i].gc[x].j, q = c->k[i].gc[x].grp;
			if (q >= 0) {
				c->k[i].gc[x].m = (int32_t)(c->g[q].at + c->g[q].n);
				c->gm[c->g[q].at + c->g[q].n++] = (struct op_ref){ (int32_t)i, (int32_t)j };
			}
		}
	pool_for(c->nt, c->ng, xfer_task, c);
	ideal_xfers(c);
	/* beside the members, for the replay (arrive): a call's transfers */
	c->gx = xmalloc((total ? total : 1) * sizeof(*c->gx));
	c->gxi = xmalloc((total ? total : 1) * sizeof(*c->gxi));
	c->gmq = xmalloc((total ? total : 1) * sizeof(*c->gmq));
	c->gmsid = xmalloc((total ? total : 1) * sizeof(*c->gmsid));
	c->ngm = total;
	for (size_t i = 0; i < c->n; i++) /* rank by rank: each rank's tables in order */
		for (size_t x = 0; x < c->k[i].ngops; x++) {
			struct rank_input *k = &c->k[i];
			const struct matched_call *g = &k->gc[x];
			if (g->grp < 0)
				continue;
			int on = c->g[g->grp].n >= 2;
			c->gx[g->m] = on ? k->x[g->inst] : 0;
			c->gxi[g->m] = on ? k->xi[g->inst] : 0;
			c->gmq[g->m] = g->grp;
			c->gmsid[g->m] = k->qof[g->j];
			if (on) /* the replay finds the call's place from its op */
				k->o[g->j].grp = g->m;
		}
	for (size_t i = 0; i < c->n; i++) { /* the ops' streams: read no more */
		free(c->k[i].qof);
		c->k[i].qof = NULL;
	}
}
