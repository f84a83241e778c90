/*
 * walk.c - a rank's measured ops in the orders the what-if reads them: the
 * host in launch order (its streams' launches merged by launch time and
 * op, each stream launching in its own order; a rank where one does not
 * keeps its launch order whole, lorder), and each op's measured host gap
 * (the time since the launch before it, or after a synchronisation the
 * host's own time after the op it waited for) queued on its stream until
 * that stream's walk reads it.  No time is kept per op.
 */
#include "overlap/whatif/private.h"

#include <stdlib.h>
#include <string.h>

/* Stream q's next op with a launch from op j on (j itself included), at
 * place *pos (advanced with it); -1 when none. */
static int32_t next_launched(const struct rank_input *k, int32_t j, size_t q, int32_t *pos)
{
	while (j >= 0 && !(k->flags[j] & OPF_LAUNCH)) {
		j = next_on_stream(k, j, q);
		(*pos)++;
	}
	return j;
}

void hw_reset(const struct rank_input *k, struct host_walk *h)
{
	h->p = 0;
	if (k->lorder)
		return;
	for (size_t q = 0; q < k->nstr; q++) {
		h->hpos[q] = 0;
		h->hc[q] = next_launched(k, k->shead[q], q, &h->hpos[q]);
		h->hl[q] = h->hc[q] >= 0 ? ot_launch(&k->t, (size_t)h->hc[q]) : 0;
	}
}

void hw_init(const struct rank_input *k, struct host_walk *h)
{
	size_t ns = k->nstr ? k->nstr : 1;
	memset(h, 0, sizeof(*h));
	if (!k->lorder) {
		h->hc = xmalloc(ns * sizeof(*h->hc));
		h->hpos = xmalloc(ns * sizeof(*h->hpos));
		h->hl = xmalloc(ns * sizeof(*h->hl));
	}
	hw_reset(k, h);
}

void hw_release(struct host_walk *h)
{
	free(h->hc);
	free(h->hpos);
	free(h->hl);
	memset(h, 0, sizeof(*h));
}

int32_t hw_next(const struct rank_input *k, struct host_walk *h, size_t *q, int32_t *pos)
{
	if (k->lorder) {
		if (h->p >= k->nh)
			return -1;
		int32_t j = k->lorder[h->p++];
		*q = op_stream(k, (size_t)j);
		*pos = -1;
		return j;
	}
	size_t best = SIZE_MAX;
	for (size_t s = 0; s < k->nstr; s++)
		if (h->hc[s] >= 0 && (best == SIZE_MAX || h->hl[s] < h->hl[best] ||
				      (h->hl[s] == h->hl[best] && h->hc[s] < h->hc[best])))
			best = s;
	if (best == SIZE_MAX)
		return -1;
	int32_t j = h->hc[best];
	*q = best;
	*pos = h->hpos[best];
	h->hpos[best]++;
	h->hc[best] = next_launched(k, next_on_stream(k, j, best), best, &h->hpos[best]);
	h->hl[best] = h->hc[best] >= 0 ? ot_launch(&k->t, (size_t)h->hc[best]) : 0;
	h->p++;
	return j;
}

void mw_init(const struct rank_input *k, struct meas_walk *w)
{
	hw_init(k, &w->h);
	w->q = xcalloc(k->nstr ? k->nstr : 1, sizeof(*w->q));
	w->la_prev = UNSET;
}

void mw_release(const struct rank_input *k, struct meas_walk *w)
{
	for (size_t q = 0; q < k->nstr; q++) {
		free(w->q[q].j);
		free(w->q[q].g);
	}
	free(w->q);
	hw_release(&w->h);
}

/* The next launch's measured gap onto its stream's queue; 0 after the last. */
static int walk_host(const struct rank_input *k, struct meas_walk *w)
{
	size_t q;
	int32_t pos, j = hw_next(k, &w->h, &q, &pos);
	if (j < 0)
		return 0;
	int64_t la = meas_l(k, (size_t)j), g;
	if (k->flags[j] & OPF_HDEP) { /* the host's own time after the op it waited for */
		const struct dep_in *hd = &k->hdeps[wi_find_op(k->hdeps, k->nhdeps, sizeof(*k->hdeps), j)];
		g = la - meas_e(k, (size_t)hd->d);
	} else {
		g = w->la_prev == UNSET ? 0 : la - w->la_prev;
	}
	w->la_prev = la;
	struct gap_queue *gq = &w->q[q];
	if (gq->at + gq->len == gq->cap) {
		if (gq->at && gq->at >= gq->len) { /* at least half the room at the front: moved down */
			memmove(gq->j, gq->j + gq->at, gq->len * sizeof(*gq->j));
			memmove(gq->g, gq->g + gq->at, gq->len * sizeof(*gq->g));
			gq->at = 0;
		} else {
			gq->cap = gq->cap ? 2 * gq->cap : 16;
			gq->j = xrealloc(gq->j, gq->cap * sizeof(*gq->j));
			gq->g = xrealloc(gq->g, gq->cap * sizeof(*gq->g));
		}
	}
	gq->j[gq->at + gq->len] = j;
	gq->g[gq->at + gq->len] = g;
	gq->len++;
	return 1;
}

int64_t mw_gap(const struct rank_input *k, struct meas_walk *w, int32_t j, size_t q)
{
	if (!(k->flags[j] & OPF_LAUNCH))
		return 0;
	struct gap_queue *gq = &w->q[q];
	for (;;) {
		for (size_t x = 0; x < gq->len; x++) {
			if (gq->j[gq->at + x] != j)
				continue;
			int64_t g = gq->g[gq->at + x];
			if (!x) {
				gq->at++;
			} else { /* a stream launched out of its order (lorder): closed up */
				memmove(gq->j + gq->at + x, gq->j + gq->at + x + 1, (gq->len - x - 1) * sizeof(*gq->j));
				memmove(gq->g + gq->at + x, gq->g + gq->at + x + 1, (gq->len - x - 1) * sizeof(*gq->g));
			}
			gq->len--;
			if (!gq->len)
				gq->at = 0;
			return g;
		}
		if (!walk_host(k, w))
			return 0; /* not reached: every op with a launch is in the launch order */
	}
}
