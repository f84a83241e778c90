/*
 * replay.c - the replay: every rank's ops re-timed across ranks on the
 * joined collectives, in lanes of scenarios that share one pass (which op
 * can start next depends on no time), and the step windows it gives.
 *
 * A replay keeps no time per op.  Per stream: its head, the end of the op
 * before it and the launches the host has timed but the device not yet
 * started (a queue); per step its window and latest end; per collective
 * its last arrival; per op another op or the host waits for (refs) its
 * end.  Durations, gaps and latencies are read from the op table as the
 * replay reaches each op.  The host launches in launch order as far as its
 * waits allow (ehp: the order in which ops start, and so every tie, is the
 * one an eager host gives), and its launch times are worked out when a
 * stream's head needs one (hp), so the queues hold only what the streams
 * have not reached yet.  After a stall the ops left where they were count
 * with their measured times (their start and end).
 */
#include "overlap/whatif/private.h"

#include <stdlib.h>
#include <string.h>

/* The stride of the per-lane arrays: every lane's value of one item
 * together, LANES_MAX of them whatever the pass's lanes (a copy of an
 * item is a fixed four values, not a call). */
#define LS LANES_MAX

static void push(struct replay_state *s, size_t i)
{
	if (s->k[i].inq)
		return;
	s->k[i].inq = 1;
	s->stack[s->nstack++] = (int32_t)i;
}

/* ---- where the recorded lane moved an op ---------------------------------------- */

static size_t moved_hash(int32_t ri, int32_t j, size_t cap)
{
	return ((size_t)(uint32_t)ri * 2654435761u ^ (size_t)(uint32_t)j * 40503u) & (cap - 1);
}

static struct moved *moved_at(struct moved_map *mm, int32_t ri, int32_t j)
{
	if (2 * (mm->n + 1) > mm->cap) {
		struct moved *old = mm->e;
		size_t oc = mm->cap;
		mm->cap = oc ? 2 * oc : 256;
		mm->e = xcalloc(mm->cap, sizeof(*mm->e));
		for (size_t x = 0; x < oc; x++)
			if (old[x].used) {
				size_t h = moved_hash(old[x].ri, old[x].j, mm->cap);
				while (mm->e[h].used)
					h = (h + 1) & (mm->cap - 1);
				mm->e[h] = old[x];
			}
		free(old);
	}
	size_t h = moved_hash(ri, j, mm->cap);
	while (mm->e[h].used && (mm->e[h].ri != ri || mm->e[h].j != j))
		h = (h + 1) & (mm->cap - 1);
	if (!mm->e[h].used) {
		mm->e[h] = (struct moved){ ri, j, 0, 0, 0, 0, 1, 0 };
		mm->n++;
	}
	return &mm->e[h];
}

const struct moved *wi_moved(const struct replay_state *s, size_t i, size_t j)
{
	const struct moved_map *mm = &s->moved;
	if (!mm->n)
		return NULL;
	size_t h = moved_hash((int32_t)i, (int32_t)j, mm->cap);
	for (; mm->e[h].used; h = (h + 1) & (mm->cap - 1))
		if (mm->e[h].ri == (int32_t)i && mm->e[h].j == (int32_t)j)
			return &mm->e[h];
	return NULL;
}

static void record_E(struct replay_state *s, size_t i, int32_t j, int64_t E, int64_t te)
{
	if (E != te) {
		struct moved *m = moved_at(&s->moved, (int32_t)i, j);
		m->E = E;
		m->hasE = 1;
	}
}

static void record_L(struct replay_state *s, const struct rank_input *k, size_t i, int32_t j, int64_t L)
{
	if (L != meas_l(k, (size_t)j)) {
		struct moved *m = moved_at(&s->moved, (int32_t)i, j);
		m->L = L;
		m->hasL = 1;
	}
}

/* ---- the host --------------------------------------------------------------------- */

/* Launches the host makes at once, in launch order, until one waits for
 * an op that has not ended (the eager host: ehp, ehd); 1 when it made any. */
static int host_eager(const struct rank_input *k, struct rank_replay *z);

/* Whether op d of a rank (replay state z), on its stream q, has ended in
 * this replay (in every lane: it does not depend on the lane): its stream
 * has moved past it (ops end in their stream's order), or it is the head
 * and has ended. */
static inline int op_ended(const struct rank_replay *z, int32_t d, size_t q)
{
	int32_t h = z->s[q].head;
	return h < 0 || h > d || (h == d && z->s[q].hst == 1);
}

static int host_eager(const struct rank_input *k, struct rank_replay *z)
{
	int prog = 0;
	while (z->ehp < k->nh) {
		if (z->ehd < k->nhdeps && k->hdpos[z->ehd] == z->ehp) { /* after a sync: the op waited for */
			const struct dep_in *hd = &k->hdeps[k->hdord[z->ehd]];
			if (!op_ended(z, hd->d, hd->dq))
				break;
			z->ehd++;
			z->ehp++;
		}
		size_t to = z->ehd < k->nhdeps ? k->hdpos[z->ehd] : k->nh;
		if (to > z->ehp)
			z->ehp = to;
		prog = 1;
	}
	return prog;
}

/* Whether the eager host has launched op j (its launch known). */
static inline int launched(const struct rank_input *k, const struct rank_replay *z, int32_t j)
{
	if (z->ehp >= k->nh)
		return 1;
	int32_t f = k->hdeps[k->hdord[z->ehd]].j; /* the launch it waits at */
	int64_t lj = ot_launch(&k->t, (size_t)j), lf = ot_launch(&k->t, (size_t)f);
	return lj < lf || (lj == lf && j < f);
}

/* The next launch's time in every lane, queued on its stream:
 * L = L_prev + gap, after a sync max(L_prev, E_hdep + gap); the first at
 * the rank's anchor. */
static void host_step(const struct whatif_ctx *c, struct replay_state *s, size_t i)
{
	const struct rank_input *k = &c->k[i];
	struct rank_replay *z = &s->k[i];
	size_t q, K = s->K;
	int32_t pos, j = hw_next(k, &z->hw, &q, &pos);
	int64_t g = op_gap(k, (size_t)j);
	const struct dep_in *hd = NULL;
	if (k->flags[j] & OPF_HDEP) /* after a sync: behind the op waited for */
		hd = &k->hdeps[wi_find_op(k->hdeps, k->nhdeps, sizeof(*k->hdeps), j)];
	int32_t slot = z->fix ? op_slot(c, k, (size_t)j, q, pos) : -1;
	struct launch_queue *lq = &z->s[q].lq;
	if (lq->at + lq->len == lq->cap) {
		if (lq->at && lq->at >= lq->len) { /* at least half the room at the front: moved down */
			memmove(lq->j, lq->j + lq->at, lq->len * sizeof(*lq->j));
			memmove(lq->L, lq->L + lq->at * LS, lq->len * LS * sizeof(*lq->L));
			lq->at = 0;
		} else {
			lq->cap = lq->cap ? 2 * lq->cap : 8;
			lq->j = xrealloc(lq->j, lq->cap * sizeof(*lq->j));
			lq->L = xrealloc(lq->L, lq->cap * LS * sizeof(*lq->L));
		}
	}
	size_t e = lq->at + lq->len++;
	lq->j[e] = j;
	int64_t *L = &lq->L[e * LS];
	for (size_t v = 0; v < K; v++) {
		int64_t gv = z->fix >> v & 1 ? wi_gap_fixed(c, &s->sc[v], slot, g) : g;
		int64_t base = z->hp ? z->lastL[v] : z->a2[v]; /* the first: its anchor */
		if (hd) {
			int64_t at = z->refE[(size_t)hd->ref * LS + v] + gv;
			if (at > base)
				base = at;
		} else if (z->hp) {
			base += gv;
		}
		L[v] = z->lastL[v] = base;
	}
	z->hp++;
	if (s->mlane >= 0)
		record_L(s, k, i, j, L[s->mlane]);
}

/* Op j's launches (every lane), the host timed as far as it; x: its place
 * in its stream's queue. */
static const int64_t *launch_of(const struct whatif_ctx *c, struct replay_state *s, size_t i, int32_t j, size_t q,
				size_t *x)
{
	const struct launch_queue *lq = &s->k[i].s[q].lq;
	for (;;) {
		for (size_t y = 0; y < lq->len; y++)
			if (lq->j[lq->at + y] == j) {
				*x = y;
				return &lq->L[(lq->at + y) * LS];
			}
		host_step(c, s, i);
	}
}

static void launch_pop(struct launch_queue *lq, size_t x)
{
	if (x) { /* a stream that launches out of its order (lorder): closed up */
		memmove(lq->j + lq->at + x, lq->j + lq->at + x + 1, (lq->len - x - 1) * sizeof(*lq->j));
		memmove(lq->L + (lq->at + x) * LS, lq->L + (lq->at + x + 1) * LS,
			(lq->len - x - 1) * LS * sizeof(*lq->L));
	} else {
		lq->at++;
	}
	if (!--lq->len)
		lq->at = 0;
}

/* ---- the device ------------------------------------------------------------------- */

/* Op j of rank k (replay state z; sr its stream: its head's step and
 * measured end) has its end E[] in every lane: the ops waiting for it and
 * its step's barrier learn it. */
static void ended(struct replay_state *s, const struct rank_input *k, size_t i, struct rank_replay *z, int32_t j,
		  const struct stream_replay *sr, const int64_t *E)
{
	size_t K = s->K;
	int32_t st = sr->st;
	if (sr->f & OPF_REF) {
		size_t r = (size_t)wi_find_op(k->refs, k->nrefs, sizeof(*k->refs), j);
		for (size_t v = 0; v < LS; v++) /* the item whole */
			z->refE[r * LS + v] = E[v];
	}
	if (s->mlane >= 0)
		record_E(s, i, j, E[s->mlane], sr->te);
	if (st < 0 || (size_t)st >= k->nbs)
		return;
	z->brem[st]--;
	for (size_t v = 0; v < K; v++) {
		struct step_times *b = &z->b[(size_t)st * LS + v];
		if (E[v] > b->bE || (E[v] == b->bE && j < b->wlast)) {
			b->bE = E[v];
			b->wlast = j; /* the first op (in op order) with the latest end */
		}
	}
	int32_t cs = s->grem && k->cst ? k->cst[st] : -1;
	if (cs < 0)
		return;
	for (size_t v = 0; v < K; v++)
		if (E[v] > s->gE[(size_t)cs * LS + v])
			s->gE[(size_t)cs * LS + v] = E[v];
	if (--s->grem[cs] == 0) /* the job's step is done: every rank may go on */
		for (size_t r = 0; r < s->nranks; r++)
			push(s, r);
}

/* A call of a matched collective started at S[v] (per lane): when its last
 * call has, every call ends at the last arrival plus its transfer. */
static void arrive(const struct whatif_ctx *c, struct replay_state *s, size_t i, int32_t j, const int64_t *S)
{
	const struct rank_input *ki = &c->k[i];
	size_t K = s->K, m0 = (size_t)ki->calls[wi_find_op(ki->calls, ki->ncalls, sizeof(*ki->calls), j)].m;
	size_t gq = (size_t)c->gmq[m0];
	const struct coll_group *g = &c->g[gq];
	struct last_arrival *gl = &s->gl[gq * LS];
	s->arrived[gq]++;
	for (size_t v = 0; v < K; v++)
		if (S[v] > gl[v].s || gl[v].r < 0)
			gl[v] = (struct last_arrival){ S[v], (int32_t)i, j };
	if (s->arrived[gq] < g->n)
		return;
	for (size_t m = g->at; m < g->at + g->n; m++) {
		const struct member *u = &c->gm[m];
		const struct rank_input *k = &c->k[u->ri];
		struct rank_replay *z = &s->k[u->ri];
		size_t q = op_stream(k, (size_t)u->j);
		struct stream_replay *sr = &z->s[q];
		int32_t st = sr->st;
		int64_t xm = sr->te - g->last, xi = c->xideal[u->xcls]; /* its measured transfer (wi_xfer) */
		if (xm < 0)
			xm = 0;
		int64_t *E = &z->headE[q * LS];
		const int64_t *hs = &z->headS[q * LS];
		struct step_times *b = st >= 0 && (size_t)st < k->nbs ? &z->b[(size_t)st * LS] : NULL;
		for (size_t v = 0; v < K; v++) {
			E[v] = gl[v].s + (z->fix >> v & 1 ? xfer_of(&s->sc[v], u, xm, xi) : xm); /* last arrival + its transfer */
			if (b && hs[v] < b[v].ws)
				b[v].ws = hs[v]; /* the step's first start, once the call has ended */
		}
		sr->hst = 1; /* the head of its stream (it waited there) */
		ended(s, k, (size_t)u->ri, z, u->j, sr, E);
		push(s, (size_t)u->ri);
	}
}

/* The start of op j, the head of stream q, once what it waits for is
 * known (in every lane at once: whether it is known does not depend on
 * the lane); 0 when not yet. */
static int try_start(const struct whatif_ctx *c, struct replay_state *s, size_t i, int32_t j, size_t q)
{
	const struct rank_input *k = &c->k[i];
	struct rank_replay *z = &s->k[i];
	struct stream_replay *sr = &z->s[q];
	size_t K = s->K, lx = 0;
	uint8_t f = sr->f;
	int32_t st = sr->st;
	int64_t ready[LANES_MAX];
	const int64_t *L = NULL;
	for (size_t v = 0; v < LS; v++) /* the item whole */
		ready[v] = z->lastE[q * LS + v]; /* the end of the op before it on its stream, UNSET if none */
	if (f & OPF_LAUNCH) {
		if (!launched(k, z, j))
			return 0;
		L = launch_of(c, s, i, j, q, &lx);
		for (size_t v = 0; v < K; v++)
			if (L[v] > ready[v])
				ready[v] = L[v];
	}
	int bar = (f & OPF_BAR) && st >= 1 && (size_t)st <= k->nbs;
	if (bar) { /* the step barrier */
		if (z->brem[st - 1])
			return 0;
		const struct step_times *b = &z->b[(size_t)(st - 1) * LS];
		for (size_t v = 0; v < K; v++)
			if (b[v].bE > ready[v])
				ready[v] = b[v].bE;
	}
	int32_t gs = (f & OPF_GBAR) ? k->cst[st - 1] : -1;
	if (gs >= 0) { /* the job-wide step barrier */
		if (s->grem[gs])
			return 0;
		for (size_t v = 0; v < K; v++)
			if (s->gE[(size_t)gs * LS + v] > ready[v])
				ready[v] = s->gE[(size_t)gs * LS + v];
	}
	const struct dep_in *dp = NULL;
	int guess = 0; /* a guessed dependency: a lane without guesses leaves it out */
	if (f & OPF_DEP) {
		dp = &k->deps[wi_find_op(k->deps, k->ndeps, sizeof(*k->deps), j)];
		if (!op_ended(z, dp->d, dp->dq))
			return 0;
		guess = dp->how == DEPK_GUESS;
		for (size_t v = 0; v < K; v++)
			if (z->refE[(size_t)dp->ref * LS + v] > ready[v] && !(guess && s->sc[v].noguess))
				ready[v] = z->refE[(size_t)dp->ref * LS + v];
	}
	/* its measured latency: its start after whatever was ready, measured
	 * (lat0: without its dependency, for a lane that leaves a guess out) */
	int64_t ts = sr->ts, mr = sr->prev_te;
	if (sr->la != UNSET && sr->la > mr)
		mr = sr->la;
	if ((f & OPF_BAR) && st >= 1 && k->bm[st - 1] > mr)
		mr = k->bm[st - 1];
	if (gs >= 0 && c->gbe[gs] > mr)
		mr = c->gbe[gs];
	int64_t lat0 = mr == UNSET ? 0 : ts - mr;
	if (dp && meas_e(k, (size_t)dp->d) > mr)
		mr = meas_e(k, (size_t)dp->d);
	int64_t lat = mr == UNSET ? 0 : ts - mr, S[LANES_MAX] = { 0 };
	for (size_t v = 0; v < K; v++) {
		int64_t l = guess && s->sc[v].noguess ? lat0 : lat;
		S[v] = ready[v] == UNSET ? ts : ready[v] + (l > LAT_MAX_NS && s->sc[v].nodelay ? 0 : l);
	}
	if (L)
		launch_pop(&sr->lq, lx);
	if (f & OPF_CALL) {
		for (size_t v = 0; v < LS; v++) /* the item whole */
			z->headS[q * LS + v] = S[v];
		sr->hst = 2; /* until its collective is complete (arrive) */
		arrive(c, s, i, j, S);
		return 1;
	}
	struct step_times *b = st >= 0 && (size_t)st < k->nbs ? &z->b[(size_t)st * LS] : NULL;
	int64_t d = sr->te - ts, *E = &z->headE[q * LS];
	int32_t slot = z->fix ? op_slot(c, k, (size_t)j, q, sr->pos) : -1;
	for (size_t v = 0; v < K; v++) {
		if (b && S[v] < b[v].ws)
			b[v].ws = S[v]; /* the step's first start (the windows of wi_replay_lanes) */
		E[v] = S[v] + (z->fix >> v & 1 ? wi_dur_fixed(c, &s->sc[v], k, i, (size_t)j, slot, d) : d);
	}
	sr->hst = 1;
	ended(s, k, i, z, j, sr, E);
	return 1;
}

/* Stream q's head is op j (-1: none): what the replay reads of it. */
static void head_set(const struct rank_input *k, struct stream_replay *sr, int32_t j)
{
	sr->head = j;
	if (j < 0)
		return;
	sr->f = k->flags[j];
	sr->st = ot_step_at(&k->t, &sr->run, (size_t)j);
	int64_t s0 = ot_start(&k->t, (size_t)j); /* decoded once */
	sr->ts = rank_aligned(k, s0);
	sr->te = rank_aligned(k, s0 + ot_dur(&k->t, (size_t)j));
	sr->la = UNSET;
	if (sr->f & OPF_LAUNCH) {
		uint32_t v = ot_u24(k->t.lag, (size_t)j);
		sr->la = rank_aligned(k, s0 - (v != OT_ESC24 ? (int64_t)v : ot_escape(&k->t, OT_E_LAG, (size_t)j)));
	}
}

/* Replays rank i as far as what it waits for allows. */
static void advance(const struct whatif_ctx *c, struct replay_state *s, size_t i)
{
	const struct rank_input *k = &c->k[i];
	struct rank_replay *z = &s->k[i];
	for (int prog = 1; prog;) {
		prog = host_eager(k, z);
		for (size_t q = 0; q < k->nstr; q++) {
			struct stream_replay *sr = &z->s[q];
			while (sr->head >= 0) {
				int32_t j = sr->head;
				if (!sr->hst) {
					if (!try_start(c, s, i, j, q)) /* sets hst */
						break;
					prog = 1;
				}
				if (sr->hst != 1)
					break;
				for (size_t v = 0; v < LS; v++) /* the item whole */
					z->lastE[q * LS + v] = z->headE[q * LS + v];
				sr->prev_te = sr->te;
				head_set(k, sr, next_on_stream(k, j, q));
				sr->pos++;
				sr->hst = 0;
				prog = 1;
			}
		}
	}
}

/* ---- a pass ------------------------------------------------------------------------ */

static void replay_reset(const struct whatif_ctx *c, struct replay_state *s)
{
	size_t K = s->K;
	for (size_t q = 0; q < c->ng; q++) {
		s->arrived[q] = 0;
		for (size_t v = 0; v < K; v++)
			s->gl[q * LS + v] = (struct last_arrival){ INT64_MIN, -1, -1 };
	}
	s->nstack = 0;
	s->moved.n = 0;
	for (size_t q = 0; s->grem && q < c->nsteps; q++) {
		s->grem[q] = c->gbn[q];
		for (size_t v = 0; v < LS; v++)
			s->gE[q * LS + v] = UNSET;
	}
	if (s->moved.e)
		memset(s->moved.e, 0, s->moved.cap * sizeof(*s->moved.e));
	for (size_t i = 0; i < c->n; i++) {
		const struct rank_input *k = &c->k[i];
		struct rank_replay *z = &s->k[i];
		z->hp = z->ehp = z->ehd = 0;
		hw_reset(k, &z->hw);
		for (size_t q = 0; q < k->nstr; q++) {
			struct stream_replay *sr = &z->s[q];
			sr->pos = 0;
			sr->run = 0;
			sr->hst = 0;
			head_set(k, sr, k->shead[q]);
			sr->prev_te = UNSET;
			sr->lq.at = sr->lq.len = 0;
			for (size_t v = 0; v < K; v++)
				z->lastE[q * LS + v] = UNSET;
		}
		for (size_t q = 0; q < k->nbs; q++) {
			z->brem[q] = (int32_t)k->bn[q];
			for (size_t v = 0; v < K; v++)
				z->b[q * LS + v] = (struct step_times){ INT64_MAX, 0, UNSET, -1 };
		}
		z->inq = 0;
	}
}

/* After a stall, the ops left where they were (from each stream's head
 * on): counted, and for the recorded lane their launches (timed as far as
 * the host launched, as host_step records them; never launched: UNSET). */
static size_t left_ops(const struct whatif_ctx *c, struct replay_state *s)
{
	size_t left = 0;
	for (size_t i = 0; i < c->n; i++) {
		const struct rank_input *k = &c->k[i];
		struct rank_replay *z = &s->k[i];
		for (size_t q = 0; q < k->nstr; q++)
			for (int32_t j = z->s[q].head; j >= 0; j = next_on_stream(k, j, q))
				left++;
	}
	if (!left || s->mlane < 0)
		return left;
	for (size_t i = 0; i < c->n; i++) {
		const struct rank_input *k = &c->k[i];
		struct rank_replay *z = &s->k[i];
		while (z->hp < z->ehp) /* the launches the host made: timed (and recorded) */
			host_step(c, s, i);
		for (size_t q = 0; q < k->nstr; q++)
			for (int32_t j = z->s[q].head; j >= 0; j = next_on_stream(k, j, q))
				if ((k->flags[j] & OPF_LAUNCH) && !launched(k, z, j))
					record_L(s, k, i, j, UNSET); /* never launched */
	}
	return left;
}

/* One replay of the whole trace in the s->K lanes wi_set_scenario set.
 * Returns the number of ops left unreplayed (a stall: 0 when the graph
 * could be followed to the end; the same in every lane). */
static size_t replay(const struct whatif_ctx *c, struct replay_state *s)
{
	replay_reset(c, s);
	for (size_t i = c->n; i-- > 0;)
		push(s, i);
	while (s->nstack) {
		size_t i = (size_t)s->stack[--s->nstack];
		s->k[i].inq = 0;
		advance(c, s, i);
	}
	s->left = left_ops(c, s);
	return s->left;
}

int wi_left(const struct whatif_ctx *c, const struct replay_state *s, size_t i, size_t j)
{
	if (!s->left)
		return 0;
	int32_t h = s->k[i].s[op_stream(&c->k[i], j)].head;
	return h >= 0 && (int32_t)j >= h;
}

/* Step windows as analysis_rank cuts them, lane v of a replay:
 * from each step's first start (ws) and latest end (bE) to the next step's
 * first start (the last step: to its last end). */
static void cut_replay(size_t ns, struct step_times *b, size_t v)
{
	for (size_t q = 0; q < ns; q++) {
		struct step_times *x = &b[q * LS + v];
		x->we = q + 1 < ns ? b[(q + 1) * LS + v].ws : x->bE;
		if (x->ws == INT64_MAX)
			x->ws = x->we = 0;
		if (x->we < x->ws)
			x->we = x->ws;
	}
}

/* After a stall, rank i's ops left where they were into the windows of
 * lane v at their measured start and end. */
static void fold_left(const struct whatif_ctx *c, struct replay_state *s, size_t i, size_t v)
{
	const struct rank_input *k = &c->k[i];
	struct rank_replay *z = &s->k[i];
	for (size_t q = 0; q < k->nstr; q++)
		for (int32_t j = z->s[q].head; j >= 0; j = next_on_stream(k, j, q)) {
			int32_t st = ot_step(&k->t, (size_t)j);
			if (st < 0)
				continue;
			struct step_times *b = &z->b[(size_t)st * LS + v];
			int64_t S = meas_s(k, (size_t)j), E = meas_e(k, (size_t)j);
			if (S < b->ws)
				b->ws = S;
			if (E > b->bE || (E == b->bE && j < b->wlast)) {
				b->bE = E;
				b->wlast = j;
			}
		}
}

/* The job's step time of common step s: the mean over ranks of their
 * window (ns), from lane v of worker state w's windows (NULL: the measured
 * ones). */
double wi_job_step(const struct whatif_ctx *c, const struct replay_state *w, size_t v, size_t s)
{
	double sum = 0;
	for (size_t i = 0; i < c->n; i++) {
		int32_t q = c->sidx[i][s];
		const struct step_times *b = w ? &w->k[i].b[(size_t)q * LS + v] : NULL;
		sum += w ? (double)(b->we - b->ws) : (double)(c->k[i].mwe[q] - c->k[i].mws[q]);
	}
	return sum / (double)c->n;
}

/* Replays the scenarios sc[0..n) (n <= the worker's lanes) in worker state
 * s at once, each one's per-step job times (ms) into out[x]; replayed[x]
 * 0 where scenario x changes nothing and the unmodified replay is known
 * (its steps copied), else 1 with its lane in lane[x] (for wi_work_ends,
 * wi_path_walk).  Returns the ops the replay left (0 when none replayed). */
size_t wi_replay_lanes(const struct whatif_ctx *c, struct replay_state *s, size_t n, const struct scenario *sc,
		       double **out, int *replayed, size_t *lane)
{
	size_t K = 0;
	for (size_t x = 0; x < n; x++) {
		replayed[x] = 0;
		if (!wi_set_scenario(c, s, K, &sc[x]) && c->rep) { /* nothing to change: the unmodified replay's steps */
			memcpy(out[x], c->rep, c->nsteps * sizeof(*out[x]));
			continue;
		}
		replayed[x] = 1;
		lane[x] = K++;
	}
	if (!K)
		return 0;
	s->K = K;
	size_t left = replay(c, s);
	for (size_t x = 0; x < n; x++) {
		if (!replayed[x])
			continue;
		for (size_t i = 0; i < c->n; i++) {
			if (left) /* ops left where they were: at their measured times */
				fold_left(c, s, i, lane[x]);
			cut_replay(c->k[i].nbs, s->k[i].b, lane[x]);
		}
		for (size_t q = 0; q < c->nsteps; q++)
			out[x][q] = wi_job_step(c, s, lane[x], q) / 1e6;
	}
	return left;
}

/* The latest end of each common step's ops over the ranks (ms, aligned
 * clock), from lane v of worker state w's last replay. */
void wi_work_ends(const struct whatif_ctx *c, const struct replay_state *w, size_t v, double *out)
{
	for (size_t s = 0; s < c->nsteps; s++) {
		int64_t e = INT64_MIN;
		for (size_t i = 0; i < c->n; i++) {
			const struct step_times *b = &w->k[i].b[(size_t)c->sidx[i][s] * LS + v];
			if (b->wlast >= 0 && b->bE > e)
				e = b->bE;
		}
		out[s] = e == INT64_MIN ? NAN : (double)e / 1e6;
	}
}

/* ---- the workers' states ---------------------------------------------------------- */

/* Worker w's replay state with room for kcap lanes (each item's lanes
 * LANES_MAX apart: LS), allocated at its first use (by that worker; a
 * later use takes it as it is: at most its lanes). */
struct replay_state *wi_worker(struct whatif_ctx *c, size_t w, size_t kcap)
{
	struct replay_state *s = &c->w[w];
	if (s->k)
		return s;
	s->kcap = kcap;
	s->mlane = -1;
	s->k = xcalloc(c->n, sizeof(*s->k));
	for (size_t i = 0; i < c->n; i++) {
		const struct rank_input *k = &c->k[i];
		struct rank_replay *z = &s->k[i];
		size_t ns = k->nstr ? k->nstr : 1, nb = k->nbs ? k->nbs : 1, nr = k->nrefs ? k->nrefs : 1;
		/* the rank's streams, steps and refs in one block, near each other */
		size_t bytes = ns * sizeof(struct stream_replay) + 3 * ns * LS * sizeof(int64_t) + ns * sizeof(int64_t) +
			       nb * LS * sizeof(struct step_times) + nr * LS * sizeof(int64_t) +
			       (nb + 2 * ns) * sizeof(int32_t);
		char *b = xcalloc(1, bytes);
		z->s = (struct stream_replay *)(void *)b; /* the streams first: read on every visit */
		z->lastE = (int64_t *)(void *)(z->s + ns);
		z->headE = z->lastE + ns * LS;
		z->headS = z->headE + ns * LS;
		z->hw.hl = z->headS + ns * LS;
		z->b = (struct step_times *)(void *)(z->hw.hl + ns);
		z->refE = (int64_t *)(void *)(z->b + nb * LS);
		z->brem = (int32_t *)(void *)(z->refE + nr * LS);
		z->hw.hc = z->brem + nb;
		z->hw.hpos = z->hw.hc + ns;
	}
	s->arrived = xmalloc((c->ng ? c->ng : 1) * sizeof(*s->arrived));
	s->gl = xmalloc((c->ng ? c->ng : 1) * LS * sizeof(*s->gl));
	s->stack = xmalloc((c->n ? c->n : 1) * sizeof(*s->stack));
	s->nranks = c->n;
	if (c->gbar) {
		s->grem = xmalloc((c->nsteps ? c->nsteps : 1) * sizeof(*s->grem));
		s->gE = xmalloc((c->nsteps ? c->nsteps : 1) * LS * sizeof(*s->gE));
	}
	return s;
}

void wi_workers_free(struct whatif_ctx *c)
{
	for (size_t w = 0; c->w && w < c->nw; w++) {
		struct replay_state *s = &c->w[w];
		for (size_t i = 0; s->k && i < c->n; i++) {
			struct rank_replay *z = &s->k[i];
			for (size_t q = 0; q < c->k[i].nstr; q++) {
				free(z->s[q].lq.j);
				free(z->s[q].lq.L);
			}
			free(z->s); /* its block (the host walk's arrays too) */
		}
		free(s->k);
		free(s->arrived);
		free(s->gl);
		free(s->stack);
		free(s->grem);
		free(s->gE);
		free(s->moved.e);
	}
	free(c->w);
	c->w = NULL;
}
