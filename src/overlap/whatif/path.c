/*
 * path.c - the cross-rank critical path of a replay: from a step's last
 * end back to its first start through whatever set each start (stream,
 * launch, dependency, last arrival), summed by rank, stream and kind of
 * work.
 *
 * It walks the recorded lane of a replay (the unmodified one, its times
 * read as the measured ones but where the replay moved them: wi_moved)
 * and, on the host, each rank's launch order, made for the ranks the path
 * visits (path_cache).
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

/* The launch order of the ranks the path visits: per rank (NULL until
 * made) the ops in launch order and each op's place there (-1: none). */
struct path_cache { int32_t **order, **pos; };

static void launch_places(const struct whatif_ctx *c, struct path_cache *pc, size_t i)
{
	const struct rank_input *k = &c->k[i];
	if (pc->order[i])
		return;
	pc->order[i] = xmalloc((k->nh ? k->nh : 1) * sizeof(int32_t));
	pc->pos[i] = xmalloc((k->n ? k->n : 1) * sizeof(int32_t));
	for (size_t j = 0; j < k->n; j++)
		pc->pos[i][j] = -1;
	struct host_walk h;
	hw_init(k, &h);
	size_t q;
	int32_t pos;
	for (int32_t j; (j = hw_next(k, &h, &q, &pos)) >= 0;) {
		pc->order[i][h.p - 1] = j;
		pc->pos[i][j] = (int32_t)(h.p - 1);
	}
	hw_release(&h);
}

/* Op j of rank i's end and launch in the recorded lane. */
static int64_t path_E(const struct replay_state *s, const struct whatif_ctx *c, size_t i, size_t j)
{
	const struct moved *m = wi_moved(s, i, j);
	return m && m->hasE ? m->E : meas_e(&c->k[i], j);
}

static int64_t path_L(const struct replay_state *s, const struct whatif_ctx *c, size_t i, size_t j)
{
	const struct moved *m = wi_moved(s, i, j);
	return m && m->hasL ? m->L : meas_l(&c->k[i], j);
}

/* Op j's start in the recorded lane: its measured start where the replay
 * left it, else its end less its duration (not a matched call). */
static int64_t path_S(const struct replay_state *s, const struct whatif_ctx *c, size_t i, size_t j)
{
	const struct rank_input *k = &c->k[i];
	if (wi_left(c, s, i, j))
		return meas_s(k, j);
	return path_E(s, c, i, j) - (meas_e(k, j) - meas_s(k, j));
}

/* Host launches before op j back to t0 (or to the op a sync waited for):
 * returns that op (-1: the walk ends on the host). */
static int32_t cp_host(const struct whatif_ctx *c, const struct replay_state *s, struct path_cache *pc, size_t i,
		       int32_t j, int64_t t0, struct path_table *t, int64_t *at)
{
	const struct rank_input *k = &c->k[i];
	launch_places(c, pc, i);
	const int32_t *ord = pc->order[i];
	for (int32_t p = pc->pos[i][j]; p >= 0 && path_L(s, c, i, (size_t)ord[p]) > t0; p--) {
		int32_t o = ord[p], h = -1;
		if (k->flags[o] & OPF_HDEP)
			h = k->hdeps[wi_find_op(k->hdeps, k->nhdeps, sizeof(*k->hdeps), o)].d;
		int64_t L = path_L(s, c, i, (size_t)o);
		int64_t prev = p ? path_L(s, c, i, (size_t)ord[p - 1]) : INT64_MIN;
		if (h >= 0) {
			int64_t he = path_E(s, c, i, (size_t)h), gap = meas_l(k, (size_t)o) - meas_e(k, (size_t)h);
			if (he + gap >= prev) {
				cp_add(t, (int32_t)i, -1, WC_HOST, L - (he > t0 ? he : t0));
				*at = he;
				return h;
			}
		}
		if (!p) { /* before its first launch the host was busy since t0 */
			cp_add(t, (int32_t)i, -1, WC_HOST, L - t0);
			break;
		}
		cp_add(t, (int32_t)i, -1, WC_HOST, L - (prev > t0 ? prev : t0));
	}
	return -1;
}

/* The critical path of common step s in the recorded lane v of worker
 * state w's last replay, from its last end back to its first start, into
 * t (pc: the launch orders made so far). */
static void path_walk(const struct whatif_ctx *c, const struct replay_state *w, size_t v, size_t s,
		      struct path_table *t, struct path_cache *pc)
{
	int64_t t0 = INT64_MAX, tend = INT64_MIN;
	size_t i = 0;
	int32_t j = -1;
	for (size_t r = 0; r < c->n; r++) {
		const struct step_times *b = &w->k[r].b[(size_t)c->sidx[r][s] * LANES_MAX + v];
		if (b->ws < t0)
			t0 = b->ws;
		if (b->wlast >= 0 && b->bE > tend) { /* the op with the latest end: its end is bE */
			tend = b->bE;
			i = r;
			j = b->wlast;
		}
	}
	int64_t at = tend;
	for (size_t guard = 0; j >= 0 && at > t0 && guard < 100000000; guard++) {
		const struct rank_input *k = &c->k[i];
		if (k->flags[j] & OPF_CALL) { /* the transfer, then the last arrival's start */
			size_t m = (size_t)k->calls[wi_find_op(k->calls, k->ncalls, sizeof(*k->calls), j)].m;
			const struct last_arrival *g = &w->gl[(size_t)c->gmq[m] * LANES_MAX + v];
			cp_add(t, (int32_t)i, ot_key(&k->t, (size_t)j)->stream, wi_op_cat(c, k, (size_t)j),
			       at - (g->s > t0 ? g->s : t0));
			i = (size_t)g->r;
			j = g->o;
			k = &c->k[i];
			at = g->s;
		} else {
			int64_t S = path_S(w, c, i, (size_t)j);
			cp_add(t, (int32_t)i, ot_key(&k->t, (size_t)j)->stream, wi_op_cat(c, k, (size_t)j),
			       at - (S > t0 ? S : t0));
			at = S;
		}
		if (at <= t0)
			break;
		/* what set its start: the stream, the launch or the dependency */
		int32_t sp = prev_on_stream(k, j, op_stream(k, (size_t)j)), d = -1;
		if (k->flags[j] & OPF_DEP)
			d = k->deps[wi_find_op(k->deps, k->ndeps, sizeof(*k->deps), j)].d;
		int64_t rs = sp >= 0 ? path_E(w, c, i, (size_t)sp) : UNSET;
		int64_t rl = k->flags[j] & OPF_LAUNCH ? path_L(w, c, i, (size_t)j) : UNSET;
		int64_t rd = d >= 0 ? path_E(w, c, i, (size_t)d) : UNSET;
		int64_t ready = rs > rl ? rs : rl;
		if (rd > ready)
			ready = rd;
		if (ready == UNSET)
			break;
		cp_add(t, (int32_t)i, ot_key(&k->t, (size_t)j)->stream, wi_op_cat(c, k, (size_t)j),
		       at - (ready > t0 ? ready : t0));
		at = ready;
		if (ready == rs) {
			j = sp;
		} else if (ready == rd) {
			j = d;
		} else {
			j = cp_host(c, w, pc, i, j, t0, t, &at);
		}
	}
}

void wi_path_walk(const struct whatif_ctx *c, const struct replay_state *w, size_t v, struct path_table *t)
{
	struct path_cache pc = { xcalloc(c->n ? c->n : 1, sizeof(int32_t *)), xcalloc(c->n ? c->n : 1, sizeof(int32_t *)) };
	for (size_t s = 0; s < c->nsteps; s++)
		path_walk(c, w, v, s, t, &pc);
	for (size_t i = 0; i < c->n; i++) {
		free(pc.order[i]);
		free(pc.pos[i]);
	}
	free(pc.order);
	free(pc.pos);
}
