/*
 * replay.c - the replay: every rank's ops re-timed across ranks on the
 * joined collectives, in lanes of scenarios that share one pass (which op
 * can start next depends on no time), and the step windows it gives.
 */
#include "overlap/whatif/private.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static void lft_free(const struct whatif_ctx *c, struct replay_state *s)
{
	for (size_t i = 0; s->lft && i < c->n; i++)
		free(s->lft[i]);
	free(s->lft);
	s->lft = NULL;
}

static void push(struct replay_state *s, size_t i)
{
	if (s->k[i].inq)
		return;
	s->k[i].inq = 1;
	s->stack[s->nstack++] = (int32_t)i;
}

/* Op j of rank k (its replay state z) has its end in every lane: its
 * step's barrier moves. */
static void ended(const struct rank_input *k, const struct replay_state *s, struct rank_replay *z, int32_t j)
{
	int32_t q = k->o[j].step;
	if (q < 0 || (size_t)q >= k->nbs)
		return;
	size_t K = s->K;
	z->brem[q]--;
	for (size_t v = 0; v < K; v++) {
		struct step_times *b = &z->b[(size_t)q * K + v];
		int64_t E = z->o[(size_t)j * K + v].E;
		if (E > b->bE || (E == b->bE && j < b->wlast)) {
			b->bE = E;
			b->wlast = j; /* the first op (in op order) with the latest end, as windows() */
		}
	}
}

/* A call of a matched collective started at S[v] (per lane): when its last
 * call has, every call ends at the last arrival plus its transfer. */
static void arrive(const struct whatif_ctx *c, struct replay_state *s, size_t i, int32_t j, const int64_t *S)
{
	size_t K = s->K, m0 = (size_t)c->k[i].o[j].grp, q = (size_t)c->gmq[m0];
	struct coll_group *g = &s->g[q];
	struct last_arrival *gl = &s->gl[q * K];
	g->arrived++;
	for (size_t v = 0; v < K; v++) {
		s->gs[m0 * K + v] = S[v];
		if (S[v] > gl[v].s || gl[v].r < 0)
			gl[v] = (struct last_arrival){ S[v], (int32_t)i, j };
	}
	if (g->arrived < g->n)
		return;
	for (size_t m = 0; m < g->n; m++) {
		struct op_ref u = c->gm[g->at + m];
		struct rank_replay *z = &s->k[u.ri];
		/* the op after it on its stream is what the rank's replay reads next:
		 * fetched now, while the other calls end (the ranks' ops are far apart) */
		int32_t nx = c->k[u.ri].o[u.j].snext;
		if (nx >= 0) {
			__builtin_prefetch(&c->k[u.ri].o[nx]);
			__builtin_prefetch(&z->o[(size_t)nx * K]);
		}
		__builtin_prefetch(z->head);
		struct op_times *o = &z->o[(size_t)u.j * K];
		const int64_t *sm = &s->gs[(g->at + m) * K];
		for (size_t v = 0; v < K; v++) {
			o[v].E = gl[v].s + op_xfer(c, s, v, g->at + m); /* the last arrival + its transfer */
			if (o[v].E < sm[v])
				o[v].E = sm[v];
		}
		z->hst[c->gmsid[g->at + m]] = 1; /* the head of its stream (it waited there) */
		ended(&c->k[u.ri], s, z, u.j);
		push(s, (size_t)u.ri);
	}
}

/* Whether op d of a rank (replay state z), on its stream q (index), has
 * ended in this replay (in every lane: it does not depend on the lane):
 * its stream has moved past it (ops end in their stream's order), or it is
 * the head and has ended.  The replay state is not reset between replays:
 * what has started, ended or been launched is read from the heads, hst and
 * hp, and a time only once written. */
static inline int op_ended(const struct rank_replay *z, int32_t d, size_t q)
{
	int32_t h = z->head[q];
	return h < 0 || h > d || (h == d && z->hst[q] == 1);
}

/* The start of op j, the head of stream q, once what it waits for is
 * known (in every lane at once: whether it is known does not depend on
 * the lane); 0 when not yet. */
static int try_start(const struct whatif_ctx *c, struct replay_state *s, size_t i, int32_t j, size_t q)
{
	const struct rank_input *k = &c->k[i];
	struct rank_replay *z = &s->k[i];
	const struct op_input *p = &k->o[j];
	size_t K = s->K;
	struct op_times *oj = &z->o[(size_t)j * K];
	int64_t ready[LANES_MAX];
	for (size_t v = 0; v < K; v++)
		ready[v] = z->lastE[q * K + v]; /* the end of the op before it on its stream, UNSET if none */
	if (p->hasl) {
		if ((size_t)k->hpos[j] >= z->hp) /* not launched yet */
			return 0;
		for (size_t v = 0; v < K; v++)
			if (oj[v].L > ready[v])
				ready[v] = oj[v].L;
	}
	if (p->bar) { /* the step barrier */
		if (z->brem[p->step - 1])
			return 0;
		const struct step_times *b = &z->b[(size_t)(p->step - 1) * K];
		for (size_t v = 0; v < K; v++)
			if (b[v].bE > ready[v])
				ready[v] = b[v].bE;
	}
	if (p->dep >= 0) {
		const struct op_times *d = &z->o[(size_t)p->dep * K];
		if (!op_ended(z, p->dep, p->dsid))
			return 0;
		for (size_t v = 0; v < K; v++)
			if (d[v].E > ready[v])
				ready[v] = d[v].E;
	}
	int64_t lat = op_lat(k, p, (size_t)j);
	struct step_times *b = p->step >= 0 && (size_t)p->step < k->nbs ? &z->b[(size_t)p->step * K] : NULL;
	int64_t S[LANES_MAX];
	for (size_t v = 0; v < K; v++) {
		S[v] = ready[v] == UNSET ? meas_s(k, (size_t)j) : ready[v] + lat;
		if (b && S[v] < b[v].ws)
			b[v].ws = S[v]; /* the step's first start (the windows of replay_lanes) */
	}
	if (p->grp < 0) {
		for (size_t v = 0; v < K; v++)
			oj[v].E = S[v] + op_dur(c, s, v, i, (size_t)j);
		z->hst[q] = 1;
		ended(k, s, z, j);
	} else {
		z->hst[q] = 2; /* until its collective is complete (arrive) */
		arrive(c, s, i, j, S);
	}
	return 1;
}

/* Replays rank i as far as what it waits for allows. */
static void advance(const struct whatif_ctx *c, struct replay_state *s, size_t i)
{
	const struct rank_input *k = &c->k[i];
	struct rank_replay *z = &s->k[i];
	size_t K = s->K;
	for (int prog = 1; prog;) {
		prog = 0;
		while (z->hp < k->nh) {
			int32_t j = k->hl[z->hp].j, h = k->hl[z->hp].hdep;
			if (h >= 0 && !op_ended(z, h, k->hl[z->hp].hsid))
				break; /* after a sync: the op waited for, then the host's own time */
			struct op_times *oj = &z->o[(size_t)j * K];
			for (size_t v = 0; v < K; v++) {
				int64_t base = z->hp ? z->lastL[v] : z->a2[v]; /* the first: its anchor */
				if (h >= 0) {
					int64_t e = z->o[(size_t)h * K + v].E + op_gap(c, s, v, i, (size_t)j);
					if (e > base)
						base = e;
				} else if (z->hp) {
					base += op_gap(c, s, v, i, (size_t)j);
				}
				oj[v].L = z->lastL[v] = base;
			}
			z->hp++;
			prog = 1;
		}
		for (size_t q = 0; q < k->nstr; q++) {
			while (z->head[q] >= 0) {
				int32_t j = z->head[q];
				if (!z->hst[q]) {
					if (!try_start(c, s, i, j, q)) /* sets hst */
						break;
					prog = 1;
				}
				if (z->hst[q] != 1)
					break;
				const struct op_times *oj = &z->o[(size_t)j * K];
				for (size_t v = 0; v < K; v++)
					z->lastE[q * K + v] = oj[v].E;
				z->head[q] = k->o[j].snext;
				z->hst[q] = 0;
				prog = 1;
			}
		}
	}
}

/* The ops rank i's replay reads first (each stream's head, the next
 * launch), fetched while the rank before it on the work list advances. */
static void prefetch_rank(const struct whatif_ctx *c, const struct replay_state *s, size_t i)
{
	const struct rank_input *k = &c->k[i];
	const struct rank_replay *z = &s->k[i];
	for (size_t q = 0; q < k->nstr && q < 4; q++) {
		int32_t h = z->head[q];
		if (h >= 0) {
			__builtin_prefetch(&z->o[(size_t)h * s->K]);
			__builtin_prefetch(&k->o[h]);
		}
	}
	if (z->hp < k->nh) {
		int32_t j = k->hl[z->hp].j;
		__builtin_prefetch(&z->o[(size_t)j * s->K]);
		__builtin_prefetch(&k->o[j]);
	}
}

/* One replay of the whole trace in the s->K lanes set_scen set.  Returns
 * the number of ops left unreplayed (a stall: 0 when the graph could be
 * followed to the end; the same in every lane). */
static size_t replay(const struct whatif_ctx *c, struct replay_state *s)
{
	size_t K = s->K;
	for (size_t q = 0; q < c->ng; q++) {
		s->g[q].arrived = 0;
		for (size_t v = 0; v < K; v++)
			s->gl[q * K + v] = (struct last_arrival){ INT64_MIN, -1, -1 };
	}
	s->nstack = 0;
	for (size_t i = 0; i < c->n; i++) {
		const struct rank_input *k = &c->k[i];
		struct rank_replay *z = &s->k[i];
		z->hp = 0; /* S, E and L: written before they are read (op_ended) */
		for (size_t q = 0; q < k->nstr; q++) {
			z->head[q] = k->shead[q];
			z->hst[q] = 0;
			for (size_t v = 0; v < K; v++)
				z->lastE[q * K + v] = UNSET;
		}
		for (size_t q = 0; q < k->nbs; q++) {
			z->brem[q] = (int32_t)k->bn[q];
			for (size_t v = 0; v < K; v++)
				z->b[q * K + v] = (struct step_times){ INT64_MAX, 0, UNSET, -1 };
		}
		z->inq = 0;
	}
	for (size_t i = c->n; i-- > 0;)
		push(s, i);
	while (s->nstack) {
		size_t i = (size_t)s->stack[--s->nstack];
		s->k[i].inq = 0;
		if (s->nstack)
			prefetch_rank(c, s, (size_t)s->stack[s->nstack - 1]);
		advance(c, s, i);
	}
	size_t left = 0;
	/* the ops without an end are those from each stream's head on (an op
	 * ends before its stream moves past it; only the op there has started) */
	for (size_t i = 0; i < c->n; i++) {
		const struct rank_input *k = &c->k[i];
		struct rank_replay *z = &s->k[i];
		for (size_t q = 0; q < k->nstr; q++)
			for (int32_t j = z->head[q]; j >= 0; j = k->o[j].snext) {
				left++;
				int unl = k->o[j].hasl && (size_t)k->hpos[j] >= z->hp; /* never launched */
				for (size_t v = 0; v < K; v++) { /* not replayed: left where it was */
					struct op_times *o = &z->o[(size_t)j * K + v];
					o->E = meas_e(k, (size_t)j);
					if (unl)
						o->L = UNSET;
				}
			}
	}
	/* which ops were left (the same in every replay: it depends on no time) */
	if (left && !s->lft)
		s->lft = xcalloc(c->n, sizeof(*s->lft));
	if (!left && s->lft)
		lft_free(c, s);
	for (size_t i = 0; left && i < c->n; i++) {
		const struct rank_input *k = &c->k[i];
		const struct rank_replay *z = &s->k[i];
		if (!s->lft[i])
			s->lft[i] = xmalloc(k->n ? k->n : 1);
		memset(s->lft[i], 0, k->n ? k->n : 1);
		for (size_t q = 0; q < k->nstr; q++)
			for (int32_t j = z->head[q]; j >= 0; j = k->o[j].snext)
				s->lft[i][j] = 1;
	}
	return left;
}

/* Op j's start in lane v of worker state w's last replay: its measured
 * start where the replay left it, a matched call's as it arrived, else its
 * end less its duration. */
int64_t wi_op_start(const struct whatif_ctx *c, const struct replay_state *w, size_t v, size_t i, size_t j)
{
	const struct rank_input *k = &c->k[i];
	if (w->lft && w->lft[i][j])
		return meas_s(k, j);
	int32_t m = k->o[j].grp;
	if (m >= 0)
		return w->gs[(size_t)m * w->K + v];
	return w->k[i].o[j * w->K + v].E - op_dur(c, w, v, i, j);
}

/* cut_windows of lane v of a replay (K lanes): from each step's first
 * start (ws) and latest end (bE). */
static void cut_replay(size_t ns, struct step_times *b, size_t K, size_t v)
{
	for (size_t q = 0; q < ns; q++) {
		struct step_times *x = &b[q * K + v];
		x->we = q + 1 < ns ? b[(q + 1) * K + v].ws : x->bE;
		if (x->ws == INT64_MAX)
			x->ws = x->we = 0;
		if (x->we < x->ws)
			x->we = x->ws;
	}
}

/* Step windows of lane v from the replayed (S, E) of worker state s, over
 * every op (a replay that stalled: the ops left where they were are not
 * tracked). */
static void windows(const struct whatif_ctx *c, const struct replay_state *s, size_t i, size_t v)
{
	const struct rank_input *k = &c->k[i];
	struct rank_replay *z = &s->k[i];
	size_t ns = k->r->nsteps, K = s->K;
	for (size_t q = 0; q < ns; q++) {
		struct step_times *b = &z->b[q * K + v];
		b->ws = INT64_MAX;
		b->bE = INT64_MIN;
		b->wlast = -1;
	}
	for (size_t j = 0; j < k->n; j++) {
		int32_t q = k->r->ops[j].step;
		if (q < 0)
			continue;
		struct step_times *b = &z->b[(size_t)q * K + v];
		const struct op_times *o = &z->o[j * K + v];
		int64_t S = wi_op_start(c, s, v, i, j);
		if (S < b->ws)
			b->ws = S;
		if (o->E > b->bE) {
			b->bE = o->E;
			b->wlast = (int32_t)j;
		}
	}
	cut_replay(ns, z->b, K, v);
}

/* The job's step time of common step s: the mean over ranks of their
 * window (ns), from lane v of worker state w's windows (NULL: the measured
 * ones). */
double wi_job_step(const struct whatif_ctx *c, const struct replay_state *w, size_t v, size_t s)
{
	double sum = 0;
	for (size_t i = 0; i < c->n; i++) {
		int32_t q = c->sidx[i][s];
		const struct step_times *b = w ? &w->k[i].b[(size_t)q * w->K + v] : NULL;
		sum += w ? (double)(b->we - b->ws) : (double)(c->k[i].mwe[q] - c->k[i].mws[q]);
	}
	return sum / (double)c->n;
}

/* Replays the scenarios sc[0..n) (n <= the worker's lanes) in worker state
 * s at once, each one's per-step job times (ms) into out[x]; replayed[x]
 * 0 where scenario x changes nothing and the unmodified replay is known
 * (its steps copied), else 1 with its lane in lane[x] (for work_ends,
 * cp_walk).  Returns the ops the replay left (0 when none replayed). */
size_t wi_replay_lanes(const struct whatif_ctx *c, struct replay_state *s, size_t n, const struct scenario *sc, double **out,
			   int *replayed, size_t *lane)
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
			if (left) /* ops left where they were: their times are not tracked */
				windows(c, s, i, lane[x]);
			else /* from what the replay tracked: each step's first start and latest end */
				cut_replay(c->k[i].r->nsteps, s->k[i].b, K, lane[x]);
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
			int32_t o = w->k[i].b[(size_t)c->sidx[i][s] * w->K + v].wlast;
			if (o >= 0 && w->k[i].o[(size_t)o * w->K + v].E > e)
				e = w->k[i].o[(size_t)o * w->K + v].E;
		}
		out[s] = e == INT64_MIN ? NAN : (double)e / 1e6;
	}
}

/* Worker w's replay state with room for kcap lanes, allocated at its first
 * use (by that worker; a later use takes it as it is: at most its lanes). */
struct replay_state *wi_worker(struct whatif_ctx *c, size_t w, size_t kcap)
{
	struct replay_state *s = &c->w[w];
	if (s->k)
		return s;
	s->kcap = kcap;
	s->k = xcalloc(c->n, sizeof(*s->k));
	/* the ops' replay state of every rank in one mapping, its pages made
	 * at once (MAP_POPULATE: a fault per page costs more than the page) */
	size_t tot = 0;
	for (size_t i = 0; i < c->n; i++)
		tot += c->k[i].n;
	s->obn = (tot ? tot : 1) * kcap * sizeof(struct op_times);
	void *m = mmap(NULL, s->obn, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	s->ob = m == MAP_FAILED ? NULL : m;
	for (size_t i = 0, at = 0; i < c->n; i++) {
		const struct rank_input *k = &c->k[i];
		struct rank_replay *z = &s->k[i];
		size_t nb = k->nbs ? k->nbs : 1, ns = k->nstr ? k->nstr : 1;
		z->o = s->ob ? (struct op_times *)s->ob + at : xmalloc((k->n ? k->n : 1) * kcap * sizeof(*z->o));
		at += k->n * kcap;
		/* the rank's streams and steps in one block, near each other */
		char *b = xmalloc(ns * kcap * sizeof(int64_t) + nb * kcap * sizeof(struct step_times) + (ns + nb) * sizeof(int32_t) + ns);
		z->lastE = (int64_t *)b;
		z->b = (struct step_times *)(b + ns * kcap * sizeof(int64_t));
		z->head = (int32_t *)(z->b + nb * kcap);
		z->brem = z->head + ns;
		z->hst = (uint8_t *)(z->brem + nb);
	}
	s->g = xmalloc((c->ng ? c->ng : 1) * sizeof(*s->g));
	if (c->ng)
		memcpy(s->g, c->g, c->ng * sizeof(*s->g));
	s->gl = xmalloc((c->ng ? c->ng : 1) * kcap * sizeof(*s->gl));
	s->gs = xmalloc((c->ngm ? c->ngm : 1) * kcap * sizeof(*s->gs));
	s->stack = xmalloc((c->n ? c->n : 1) * sizeof(*s->stack));
	s->cmask = xcalloc(c->n + 1, sizeof(*s->cmask));
	return s;
}

void wi_workers_free(struct whatif_ctx *c)
{
	for (size_t w = 0; w < c->nw; w++) {
		struct replay_state *s = &c->w[w]; /* each rank's part: free_task */
		if (s->ob)
			munmap(s->ob, s->obn);
		free(s->k);
		free(s->g);
		free(s->gl);
		free(s->gs);
		lft_free(c, s);
		free(s->stack);
		free(s->cmask);
		for (size_t v = 0; v < LANES_MAX; v++) {
			free(s->md[v]);
			free(s->mg[v]);
		}
	}
	free(c->w);
	c->w = NULL;
}
