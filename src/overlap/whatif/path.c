/*
 * path.c - the cross-rank critical path of a replay: from a step's last
 * end back to its first start through whatever set each start (stream,
 * launch, dependency, last arrival), summed by rank, stream and kind of
 * work.
 */
#include "overlap/whatif/private.h"

#include <stdlib.h>

static void cp_add(struct path_table *t, int32_t ri, int32_t stream, int cat, int64_t ns)
{
	if (ns <= 0)
		return;
	t->total += ns;
	for (size_t q = 0; q < t->n; q++)
		if (t->e[q].ri == ri && t->e[q].stream == stream && t->e[q].cat == cat) {
			t->e[q].ns += ns;
			return;
		}
	GROW(t->e, t->cap, t->n + 1);
	t->e[t->n++] = (struct path_piece){ ri, stream, cat, ns };
}

/* Op j of rank i in lane v of worker state s's last replay. */
static inline const struct op_times *lop(const struct replay_state *s, size_t i, size_t j, size_t v)
{
	return &s->k[i].o[j * s->K + v];
}

/* Host launches before op j back to t0 (or to the op a sync waited for),
 * lane v: returns that op (-1: the walk ends on the host). */
static int32_t cp_host(const struct whatif_ctx *c, const struct replay_state *s, size_t v, size_t i, int32_t j, int64_t t0,
			struct path_table *t, int64_t *at)
{
	const struct rank_input *k = &c->k[i];
	for (int32_t p = k->hpos[j]; p >= 0 && lop(s, i, (size_t)k->hl[p].j, v)->L > t0; p--) {
		int32_t o = k->hl[p].j, h = k->hl[p].hdep;
		int64_t L = lop(s, i, (size_t)o, v)->L;
		int64_t prev = p ? lop(s, i, (size_t)k->hl[p - 1].j, v)->L : INT64_MIN;
		if (h >= 0 && lop(s, i, (size_t)h, v)->E + op_gap(c, s, v, i, (size_t)o) >= prev) {
			int64_t he = lop(s, i, (size_t)h, v)->E;
			cp_add(t, (int32_t)i, -1, WC_HOST, L - (he > t0 ? he : t0));
			*at = he;
			return h;
		}
		if (!p) { /* before its first launch the host was busy since t0 */
			cp_add(t, (int32_t)i, -1, WC_HOST, L - t0);
			break;
		}
		cp_add(t, (int32_t)i, -1, WC_HOST, L - (prev > t0 ? prev : t0));
	}
	return -1;
}

/* The critical path of common step s in lane v of worker state w's last
 * replay, from its last end back to its first start, into t. */
void wi_path_walk(const struct whatif_ctx *c, const struct replay_state *w, size_t v, size_t s, struct path_table *t)
{
	int64_t t0 = INT64_MAX, tend = INT64_MIN;
	size_t i = 0, K = w->K;
	int32_t j = -1;
	for (size_t r = 0; r < c->n; r++) {
		const struct step_times *b = &w->k[r].b[(size_t)c->sidx[r][s] * K + v];
		if (b->ws < t0)
			t0 = b->ws;
		int32_t o = b->wlast;
		if (o >= 0 && lop(w, r, (size_t)o, v)->E > tend) {
			tend = lop(w, r, (size_t)o, v)->E;
			i = r;
			j = o;
		}
	}
	int64_t at = tend;
	for (size_t guard = 0; j >= 0 && at > t0 && guard < 100000000; guard++) {
		const struct rank_input *k = &c->k[i];
		if (k->o[j].grp >= 0) { /* the transfer, then the last arrival's start */
			const struct last_arrival *g = &w->gl[(size_t)c->gmq[k->o[j].grp] * K + v];
			cp_add(t, (int32_t)i, k->r->ops[j].stream, k->cat[j], at - (g->s > t0 ? g->s : t0));
			i = (size_t)g->r;
			j = g->o;
			k = &c->k[i];
			at = g->s;
		} else {
			int64_t S = wi_op_start(c, w, v, i, (size_t)j);
			cp_add(t, (int32_t)i, k->r->ops[j].stream, k->cat[j], at - (S > t0 ? S : t0));
			at = S;
		}
		if (at <= t0)
			break;
		/* what set its start: the stream, the launch or the dependency */
		int64_t rs = k->sprev[j] >= 0 ? lop(w, i, (size_t)k->sprev[j], v)->E : UNSET;
		int64_t rl = k->o[j].hasl ? lop(w, i, (size_t)j, v)->L : UNSET;
		int32_t d = k->r->ops[j].dep;
		int64_t rd = d >= 0 ? lop(w, i, (size_t)d, v)->E : UNSET;
		int64_t ready = rs > rl ? rs : rl;
		if (rd > ready)
			ready = rd;
		if (ready == UNSET)
			break;
		cp_add(t, (int32_t)i, k->r->ops[j].stream, k->cat[j], at - (ready > t0 ? ready : t0));
		at = ready;
		if (ready == rs) {
			j = k->sprev[j];
		} else if (ready == rd) {
			j = d;
		} else {
			j = cp_host(c, w, v, i, j, t0, t, &at);
		}
	}
}
