/*
 * walk.c - a rank's host in launch order: its streams' launches merged by
 * launch time and op (each stream launching in its own order; a rank
 * where one does not keeps its launch order whole, lorder), read by the
 * set-up (each op's gap), the replay and the critical path.
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
