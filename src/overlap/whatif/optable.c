/*
 * optable.c - the what-if's op table of one rank, from its timeline
 * (analysis_rank calls whatif_ops while the timeline exists): every device
 * op in start order with its stream, launch, step and collective call, and
 * what the trace does not record but the replay needs: the cross-stream
 * dependencies, the step barriers and the host synchronisations, inferred
 * from the times.
 */
#include "overlap/whatif/private.h"

#include <stdlib.h>
#include <string.h>

/* The ops while the table is built, read from the timeline (each its
 * span idx[j]) and what is inferred for them: step index (-1: none), the
 * op of another stream it waited for, the op the host waited for before
 * launching it (-1: none), whether it waited for its step barrier.  No
 * array here is larger than a few bytes an op, so building the table of a
 * large trace adds little to the timeline it is built from. */
struct build {
	const struct trace *t;
	const uint8_t *cls;  /* per span of the trace: its class (C_NONE: no device op) */
	int32_t *idx, *step, *dep, *hdep;
	uint8_t *bar, *how, *hhow; /* how: where dep and hdep come from (DEPK_*) */
	int sched;           /* the pipeline schedule model holds for ops without launches */
	int table;           /* the input states the rank's dependencies (an op table's `after`) */
	int32_t rec[64];     /* streams whose waits the trace records (DEP_RECORD) */
	int nrec;
	const uint32_t *hn;  /* per name of the trace: its FNV-1a hash */
	size_t n;
};

static inline int64_t b_start(const struct build *b, size_t j) { return b->t->start_ns[b->idx[j]]; }
static inline int64_t b_end(const struct build *b, size_t j) { return b->t->end_ns[b->idx[j]]; }
static inline int64_t b_launch(const struct build *b, size_t j) { return b->t->launch_ns[b->idx[j]]; }
static inline int32_t b_stream(const struct build *b, size_t j) { return b->t->stream[b->idx[j]]; }
static inline int b_comm(const struct build *b, size_t j) { return b->cls[b->idx[j]] == C_COMM; }

/* Whether op j is a recv (a point-to-point receive the trace names). */
static int b_recv(const struct build *b, size_t j)
{
	uint32_t m = b->t->meta[b->idx[j]];
	return b_comm(b, j) && m != UINT32_MAX && b->t->coll[m].p2p == P2P_RECV;
}

static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

static int cmp_lkey(const void *a, const void *b)
{
	const struct launch_key *x = a, *y = b;
	if (x->t != y->t)
		return (x->t > y->t) - (x->t < y->t);
	return (x->j > y->j) - (x->j < y->j);
}

/* The ops of k[0..m) (launch, op) in launch order (ties by start order);
 * k is freed. */
int32_t *wi_sort_launches(struct launch_key *k, size_t m)
{
	/* launches mostly come in start order: insertion sort while it moves
	 * little, else qsort (the keys are distinct: the same order either way) */
	size_t moves = 0;
	for (size_t a = 1; a < m; a++) {
		struct launch_key x = k[a];
		size_t b = a;
		for (; b > 0 && cmp_lkey(&k[b - 1], &x) > 0; b--) {
			if (++moves > 8 * m)
				break;
			k[b] = k[b - 1];
		}
		k[b] = x;
		if (moves > 8 * m) {
			qsort(k, m, sizeof(*k), cmp_lkey);
			break;
		}
	}
	int32_t *h = xmalloc((m ? m : 1) * sizeof(*h));
	for (size_t q = 0; q < m; q++)
		h[q] = k[q].j;
	free(k);
	return h;
}

/* Ops with a known launch, in launch order (ties by start order). */
static int32_t *launch_order(const struct build *b, size_t *nh)
{
	struct launch_key *k = xmalloc((b->n ? b->n : 1) * sizeof(*k));
	size_t m = 0;
	for (size_t j = 0; j < b->n; j++)
		if (b_launch(b, j) != INT64_MIN)
			k[m++] = (struct launch_key){ b_launch(b, j), (int32_t)j };
	*nh = m;
	return wi_sort_launches(k, m);
}

/* Per step index, the latest end of its ops (INT64_MIN: none); *ns the
 * number of step indices. */
static int64_t *step_ends(const struct build *b, size_t *ns)
{
	size_t m = 0;
	for (size_t j = 0; j < b->n; j++)
		if (b->step[j] >= 0 && (size_t)b->step[j] + 1 > m)
			m = (size_t)b->step[j] + 1;
	int64_t *be = xmalloc((m ? m : 1) * sizeof(*be));
	for (size_t q = 0; q < m; q++)
		be[q] = INT64_MIN;
	for (size_t j = 0; j < b->n; j++)
		if (b->step[j] >= 0 && b_end(b, j) > be[b->step[j]])
			be[b->step[j]] = b_end(b, j);
	*ns = m;
	return be;
}

/* The step barrier: op j waited for the end of its rank's previous step
 * when that end is later than its stream and launch allow and not later
 * than its start (+ ROUND_NS).  Returns that end, else UNSET. */
static int64_t step_bar(const struct build *bd, size_t j, const int64_t *be, size_t nbe, int64_t ready)
{
	int32_t st = bd->step[j];
	if (st < 1 || (size_t)st > nbe)
		return UNSET;
	int64_t b = be[st - 1];
	return b != INT64_MIN && b > ready && b <= b_start(bd, j) + ROUND_NS ? b : UNSET;
}

/* Sets op j's dependency on op d from source `how` where it has none or
 * d ends later (of two waits, the later one binds). */
static void set_dep(struct build *bd, size_t j, int32_t d, uint8_t how)
{
	if (d < 0 || (size_t)d == j)
		return;
	if (bd->dep[j] >= 0 && b_end(bd, (size_t)bd->dep[j]) >= b_end(bd, (size_t)d))
		return;
	bd->dep[j] = d;
	bd->how[j] = how;
}

/* The dependencies the input states (struct trace's deps), by op: a
 * rank with any from an op table's `after` column has them all (nothing
 * guessed nor inferred from the schedule there), a stream with a recorded
 * wait has its waits recorded (nothing guessed on it). */
static void stated_deps(struct build *bd)
{
	const struct trace *t = bd->t;
	if (!t->ndeps)
		return;
	int32_t *op = xmalloc(t->n * sizeof(*op)); /* per span: its op, -1 none */
	for (size_t i = 0; i < t->n; i++)
		op[i] = -1;
	for (size_t j = 0; j < bd->n; j++)
		op[bd->idx[j]] = (int32_t)j;
	for (size_t x = 0; x < t->ndeps; x++) {
		const struct span_dep *d = &t->deps[x];
		if (d->op < 0 || (size_t)d->op >= t->n || d->to < 0 || (size_t)d->to >= t->n ||
		    op[d->op] < 0 || op[d->to] < 0)
			continue;
		set_dep(bd, (size_t)op[d->op], op[d->to], d->how);
		bd->table |= d->how == DEPK_TABLE;
		int32_t s = b_stream(bd, (size_t)op[d->op]);
		int k;
		for (k = 0; k < bd->nrec && bd->rec[k] != s; k++)
			;
		if (d->how == DEPK_RECORD && k == bd->nrec && k < 64)
			bd->rec[bd->nrec++] = s;
	}
	free(op);
}

/* Whether op j's stream has its waits recorded. */
static int b_recorded(const struct build *b, size_t j)
{
	for (int k = 0; k < b->nrec; k++)
		if (b->rec[k] == b_stream(b, j))
			return 1;
	return 0;
}

/* The pipeline schedule, for ops without launches on a rank that sends
 * and receives (an op table or converted trace with no host: the OSDI'25
 * artifact's), as the schedule of Lin et al.'s dependency model has it:
 *  - a communication op (send, recv, collective) waits for the compute op
 *    of another stream that ended last by its start (sched_before): a send
 *    after the compute it sends, a recv posted after the compute before
 *    it, a data-parallel collective after the backward that produced its
 *    gradients;
 *  - a recv feeds the first compute op of another stream that starts at
 *    or after its end (within FEED_TOL_NS, below): that op waits for it;
 *  - a collective feeds the first compute op of another stream after its
 *    end only where nothing else explains that op's start (its stream's
 *    previous op ended more than LAT_MAX_NS before it): a forward after
 *    its parameters' all-gather, an optimizer after the gradients'
 *    reduction, never a backward kernel the collective only overlaps.
 *    "After its end" within FEED_TOL_NS: two streams' timestamps jitter
 *    by microseconds (the artifact's SE trace: a gradient clip that starts
 *    3 us before the reduce-scatter it waits for ends); the op must start
 *    after the recv or collective starts, as a producer within FEED_TOL_NS must
 *    start before its op, so every link of a rank points to an op that
 *    started earlier and no cycle can form.
 * Whatever delay is left after these is a launch delay (unexplained). */
/* Whether compute op c ended by communication op j's start: by ROUND_NS,
 * or by FEED_TOL_NS where c started before j (two streams' timestamps
 * jitter by microseconds: the artifact's SE trace posts a send 5 us before
 * the backward it sends ends). */
static int sched_before(const struct build *bd, size_t c, size_t j)
{
	int64_t e = b_end(bd, c), s = b_start(bd, j);
	return e <= s + ROUND_NS || (e <= s + FEED_TOL_NS && b_start(bd, c) + ROUND_NS < s);
}

static void sched_deps(struct build *bd)
{
	int has_p2p = 0;
	for (size_t j = 0; j < bd->n; j++) {
		uint32_t m = bd->t->meta[bd->idx[j]];
		has_p2p |= b_comm(bd, j) && m != UINT32_MAX && bd->t->coll[m].p2p != P2P_NONE;
	}
	bd->sched = has_p2p;
	if (!has_p2p)
		return;
	int32_t lastc = -1; /* the compute op that ended last so far (ops in start order) */
	size_t nc = 0;
	int32_t *comp = xmalloc((bd->n ? bd->n : 1) * sizeof(*comp)); /* compute ops, start order */
	int64_t *prevend = xmalloc((bd->n ? bd->n : 1) * sizeof(*prevend)); /* beside: its stream's previous end */
	int32_t sid[64];
	int64_t se[64];
	int ns = 0;
	for (size_t j = 0; j < bd->n; j++) {
		int k;
		for (k = 0; k < ns && sid[k] != b_stream(bd, j); k++)
			;
		if (k == ns && ns < 64) {
			sid[ns] = b_stream(bd, j);
			se[ns++] = INT64_MIN;
		}
		int64_t pe = k < 64 ? se[k] : INT64_MIN;
		if (k < 64)
			se[k] = b_end(bd, j);
		if (b_comm(bd, j)) {
			if (b_launch(bd, j) != INT64_MIN)
				continue;
			/* the latest-ending compute op of another stream ended by its start */
			int32_t best = -1;
			for (size_t x = nc; x-- > 0 && x + 64 >= nc;) {
				int32_t c = comp[x];
				if (b_stream(bd, (size_t)c) == b_stream(bd, j) || !sched_before(bd, (size_t)c, j))
					continue;
				if (best < 0 || b_end(bd, (size_t)c) > b_end(bd, (size_t)best))
					best = c;
			}
			if (best < 0 && lastc >= 0 && b_stream(bd, (size_t)lastc) != b_stream(bd, j) &&
			    sched_before(bd, (size_t)lastc, j))
				best = lastc;
			set_dep(bd, j, best, DEPK_SCHED);
			continue;
		}
		comp[nc] = (int32_t)j;
		prevend[nc++] = pe;
		if (lastc < 0 || b_end(bd, j) > b_end(bd, (size_t)lastc))
			lastc = (int32_t)j;
	}
	/* what each recv or collective feeds: a recv the first compute op
	 * after its end that no earlier recv from the same peer feeds (one
	 * microbatch each: a recv that arrived early feeds the next one) */
	int32_t ppeer[16], pnext[16];
	int np = 0;
	for (size_t j = 0; j < bd->n; j++) {
		if (!b_comm(bd, j) || b_launch(bd, j) != INT64_MIN)
			continue;
		uint32_t m = bd->t->meta[bd->idx[j]];
		if (m != UINT32_MAX && bd->t->coll[m].p2p == P2P_SEND)
			continue;
		int recv = b_recv(bd, j);
		/* the first compute op starting at or after its end - FEED_TOL_NS
		 * and after its start */
		int64_t e = b_end(bd, j) - FEED_TOL_NS;
		size_t a = 0, b = nc;
		while (a < b) {
			size_t mid = (a + b) / 2;
			if (b_start(bd, (size_t)comp[mid]) < e)
				a = mid + 1;
			else
				b = mid;
		}
		while (a < nc && b_start(bd, (size_t)comp[a]) <= b_start(bd, j))
			a++;
		int p = -1;
		if (recv) {
			int32_t peer = bd->t->coll[m].peer;
			for (p = 0; p < np && ppeer[p] != peer; p++)
				;
			if (p == np && np < 16) {
				ppeer[np] = peer;
				pnext[np++] = 0;
			}
			if (p < np && (size_t)pnext[p] > a)
				a = (size_t)pnext[p];
		}
		for (; a < nc && b_stream(bd, (size_t)comp[a]) == b_stream(bd, j); a++)
			;
		if (a == nc || b_launch(bd, (size_t)comp[a]) != INT64_MIN)
			continue;
		if (recv && p >= 0 && p < np)
			pnext[p] = (int32_t)a + 1;
		if (recv || prevend[a] == INT64_MIN || b_start(bd, (size_t)comp[a]) - prevend[a] > LAT_MAX_NS)
			set_dep(bd, (size_t)comp[a], (int32_t)j, DEPK_SCHED);
	}
	free(comp);
	free(prevend);
}

/* Cross-stream dependencies: an op that starts later than its stream, its
 * launch and its step barrier allow, within DEP_LAG_NS after another
 * stream's op ended, waited for that op (an event wait the trace does not
 * record).  Where the trace has no launch for the op (an op table without
 * launch times), any such gap is taken as a wait for the latest-ending op
 * of another stream that ended within it, however long ago. */
static void infer_deps(struct build *bd)
{
	int32_t sid[64], last[64][2];
	int ns = 0;
	size_t nbe;
	int64_t *be = step_ends(bd, &nbe);
	for (size_t j = 0; j < bd->n; j++) {
		int k;
		int64_t start = b_start(bd, j), launch = b_launch(bd, j);
		for (k = 0; k < ns && sid[k] != b_stream(bd, j); k++)
			;
		if (k == ns) {
			if (ns == 64)
				continue; /* more streams than any trace has: no inference for the rest */
			sid[ns] = b_stream(bd, j);
			last[ns][0] = last[ns][1] = -1;
			ns++;
		}
		int64_t ready = last[k][0] >= 0 ? b_end(bd, (size_t)last[k][0]) : INT64_MIN;
		if (launch > ready)
			ready = launch;
		int64_t b = step_bar(bd, j, be, nbe, ready == INT64_MIN ? UNSET : ready);
		bd->bar[j] = b != UNSET;
		if (b != UNSET)
			ready = b;
		int nolaunch = launch == INT64_MIN;
		if (bd->dep[j] < 0 && !(nolaunch && bd->sched) && !bd->table && !(bd->nrec && b_recorded(bd, j)) &&
		    (ready == INT64_MIN ? nolaunch : start - ready > LAT_MAX_NS)) {
			int64_t best = INT64_MIN;
			for (int q = 0; q < ns; q++)
				for (int b2 = 0; q != k && b2 < 2; b2++) {
					int32_t c = last[q][b2];
					if (c < 0)
						continue;
					int64_t e = b_end(bd, (size_t)c);
					if (e <= start + (nolaunch ? ROUND_NS : DEP_SLACK_NS) && e > ready &&
					    (nolaunch || start - e <= DEP_LAG_NS) && e > best) {
						best = e;
						bd->dep[j] = c;
					}
				}
		}
		last[k][1] = last[k][0];
		last[k][0] = (int32_t)j;
	}
	free(be);
}

int wi_cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

int wi_cmp_i32(const void *a, const void *b)
{
	int32_t x, y;
	memcpy(&x, a, sizeof(x));
	memcpy(&y, b, sizeof(y));
	return (x > y) - (x < y);
}

/* Host synchronisations: where a sync record (ends[]) ended between two
 * launches, the later launch waited for the op it synchronised on: of the
 * last op launched on each stream before it, the latest-ending one that
 * ended by the sync's end (+ SYNC_LAG_NS). */
static void infer_syncs(struct build *bd, int64_t *ends, size_t nends)
{
	if (!nends)
		return;
	qsort(ends, nends, sizeof(*ends), wi_cmp_i64);
	size_t nh;
	int32_t *h = launch_order(bd, &nh);
	int32_t sid[64], last[64]; /* per stream, the op launched last so far */
	int ns = 0;
	for (size_t p = 0; p < nh; p++) {
		if (p) {
			int64_t lo = b_launch(bd, (size_t)h[p - 1]), hi = b_launch(bd, (size_t)h[p]);
			size_t a = 0, b = nends; /* the last sync end <= hi */
			while (a < b) {
				size_t m = (a + b) / 2;
				if (ends[m] <= hi)
					a = m + 1;
				else
					b = m;
			}
			if (a && ends[a - 1] > lo) {
				int64_t se = ends[a - 1], best = INT64_MIN;
				for (int q = 0; q < ns; q++) {
					int64_t e = b_end(bd, (size_t)last[q]);
					if (e <= se + SYNC_LAG_NS && e > best) {
						best = e;
						bd->hdep[h[p]] = last[q];
					}
				}
			}
		}
		int q;
		for (q = 0; q < ns && sid[q] != b_stream(bd, (size_t)h[p]); q++)
			;
		if (q == ns && ns < 64)
			sid[ns++] = b_stream(bd, (size_t)h[p]);
		if (q < ns)
			last[q] = h[p];
	}
	free(h);
}

/* ---- the block ---------------------------------------------------------------- */

/* The block's head: counts and where each array starts (bytes from the
 * block's start; every array aligned to its element). */
struct ot_head {
	uint64_t n, nkey, nrun, ndep, nhdep, nbar, nesc[OT_E__N], kw; /* kw: bytes of a key */
	int64_t base;
	uint64_t o_esc[OT_E__N], o_start, o_keys, o_runs, o_dep, o_hdep, o_bar, o_key, o_dur, o_lag;
};

/* The keys (name, kind, stream) of the ops, by open addressing. */
struct key_table { struct ot_key *k; uint32_t *name; int32_t *slot; size_t n, cap, tcap; };

static size_t key_hash(uint32_t name, int32_t stream, uint8_t kind, size_t cap)
{
	return ((size_t)name * 2654435761u ^ (size_t)stream * 40503u ^ kind) & (cap - 1);
}

/* Op j's key (added when new). */
static size_t key_of(struct key_table *t, const struct build *b, size_t j)
{
	uint32_t name = b->t->name[b->idx[j]];
	int32_t stream = b_stream(b, j);
	uint8_t kind = b->t->kind[b->idx[j]];
	if (2 * (t->n + 1) > t->tcap) { /* rehash at half full */
		size_t nc = t->tcap ? 2 * t->tcap : 64;
		int32_t *s = xmalloc(nc * sizeof(*s));
		for (size_t h = 0; h < nc; h++)
			s[h] = -1;
		for (size_t x = 0; x < t->n; x++) {
			size_t h = key_hash(t->name[x], t->k[x].stream, t->k[x].kind, nc);
			while (s[h] >= 0)
				h = (h + 1) & (nc - 1);
			s[h] = (int32_t)x;
		}
		free(t->slot);
		t->slot = s;
		t->tcap = nc;
	}
	size_t h = key_hash(name, stream, kind, t->tcap);
	for (; t->slot[h] >= 0; h = (h + 1) & (t->tcap - 1)) {
		const struct ot_key *k = &t->k[t->slot[h]];
		if (t->name[t->slot[h]] == name && k->stream == stream && k->kind == kind)
			return (size_t)t->slot[h];
	}
	size_t cap = t->cap;
	GROW(t->k, t->cap, t->n + 1);
	if (t->cap != cap)
		t->name = xrealloc(t->name, t->cap * sizeof(*t->name));
	t->k[t->n] = (struct ot_key){ name < b->t->names.n ? b->hn[name] : 0, stream, kind, { 0 } };
	t->name[t->n] = name;
	t->slot[h] = (int32_t)t->n;
	return t->n++;
}

static size_t align8(size_t x)
{
	return (x + 7) & ~(size_t)7;
}

/* Op j's fields as the block holds them, and which escape each needs. */
struct op_fields { uint32_t start, dur, lag; int64_t vstart, vdur, vlag; };

static void op_fields(const struct build *b, size_t j, int64_t base, struct op_fields *f)
{
	int64_t st = b_start(b, j), s = st - base, d = b_end(b, j) - st, la = b_launch(b, j);
	f->vstart = st;
	f->vdur = d;
	f->vlag = la == INT64_MIN ? 0 : st - la;
	f->start = s >= 0 && s < (int64_t)OT_ESC32 ? (uint32_t)s : OT_ESC32;
	f->dur = d >= 0 && d < (int64_t)OT_ESC24 ? (uint32_t)d : OT_ESC24;
	f->lag = la == INT64_MIN ? OT_NONE24 : f->vlag >= 0 && f->vlag < (int64_t)OT_ESC24 ? (uint32_t)f->vlag : OT_ESC24;
}

/* Where each array of a block of head h starts; returns the block's bytes. */
static size_t layout(struct ot_head *h)
{
	size_t at = align8(sizeof(*h));
	for (int e = 0; e < OT_E__N; e++) {
		h->o_esc[e] = at;
		at += h->nesc[e] * sizeof(struct ot_esc);
	}
	h->o_start = at;
	at += h->n * sizeof(uint32_t);
	h->o_keys = at;
	at += h->nkey * sizeof(struct ot_key);
	h->o_runs = at;
	at += h->nrun * sizeof(struct ot_run);
	h->o_dep = at;
	at += h->ndep * sizeof(struct ot_link);
	h->o_hdep = at;
	at += h->nhdep * sizeof(struct ot_link);
	h->o_bar = at;
	at += h->nbar * sizeof(uint32_t);
	h->o_key = at;
	at += h->n * h->kw;
	h->o_dur = at;
	at += 3 * h->n + 1;
	h->o_lag = at;
	at += 3 * h->n + 1;
	return at;
}

static void put24(uint8_t *p, size_t j, uint32_t v)
{
	p += 3 * j;
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
}

/* The block of the ops into r->ops (r->ops_bytes): counted in one pass,
 * written in a second straight into the block (no copy of the table). */
static void encode(const struct build *bd, struct rank_result *r)
{
	struct key_table kt = { 0 };
	struct ot_head h = { 0 };
	struct op_fields f;
	size_t n = bd->n;
	uint32_t *kx = xmalloc((n ? n : 1) * sizeof(*kx)); /* each op's key, found once */
	h.n = n;
	h.base = n ? b_start(bd, 0) : 0;
	for (size_t j = 0; j < n; j++) {
		op_fields(bd, j, h.base, &f);
		kx[j] = (uint32_t)key_of(&kt, bd, j);
		h.nesc[OT_E_START] += f.start == OT_ESC32;
		h.nesc[OT_E_DUR] += f.dur == OT_ESC24;
		h.nesc[OT_E_LAG] += f.lag == OT_ESC24;
		h.nesc[OT_E_KEY] += kx[j] >= OT_ESC16;
		h.nrun += !j || bd->step[j] != bd->step[j - 1];
		h.ndep += bd->dep[j] >= 0;
		h.nhdep += bd->hdep[j] >= 0;
		h.nbar += bd->bar[j];
	}
	h.nkey = kt.n;
	h.kw = h.nkey < 255 ? 1 : 2;
	size_t bytes = layout(&h);
	unsigned char *b = xcalloc(1, bytes);
	memcpy(b, &h, sizeof(h));
	struct ot_esc *esc[OT_E__N];
	for (int e = 0; e < OT_E__N; e++)
		esc[e] = (struct ot_esc *)(void *)(b + h.o_esc[e]);
	uint32_t *start = (uint32_t *)(void *)(b + h.o_start), *bar = (uint32_t *)(void *)(b + h.o_bar);
	struct ot_run *runs = (struct ot_run *)(void *)(b + h.o_runs);
	struct ot_link *dep = (struct ot_link *)(void *)(b + h.o_dep), *hdep = (struct ot_link *)(void *)(b + h.o_hdep);
	size_t ne[OT_E__N] = { 0 }, nr = 0, nd = 0, nhd = 0, nb = 0;
	if (h.nkey)
		memcpy(b + h.o_keys, kt.k, h.nkey * sizeof(struct ot_key));
	for (size_t j = 0; j < n; j++) {
		op_fields(bd, j, h.base, &f);
		start[j] = f.start;
		put24(b + h.o_dur, j, f.dur);
		put24(b + h.o_lag, j, f.lag);
		if (f.start == OT_ESC32)
			esc[OT_E_START][ne[OT_E_START]++] = (struct ot_esc){ (uint32_t)j, 0, f.vstart };
		if (f.dur == OT_ESC24)
			esc[OT_E_DUR][ne[OT_E_DUR]++] = (struct ot_esc){ (uint32_t)j, 0, f.vdur };
		if (f.lag == OT_ESC24)
			esc[OT_E_LAG][ne[OT_E_LAG]++] = (struct ot_esc){ (uint32_t)j, 0, f.vlag };
		if (h.kw == 1) {
			b[h.o_key + j] = (unsigned char)kx[j];
		} else {
			uint16_t k16 = kx[j] < OT_ESC16 ? (uint16_t)kx[j] : OT_ESC16;
			memcpy(b + h.o_key + 2 * j, &k16, sizeof(k16));
			if (kx[j] >= OT_ESC16)
				esc[OT_E_KEY][ne[OT_E_KEY]++] = (struct ot_esc){ (uint32_t)j, 0, (int64_t)kx[j] };
		}
		if (!j || bd->step[j] != bd->step[j - 1])
			runs[nr++] = (struct ot_run){ (uint32_t)j, bd->step[j] };
		if (bd->dep[j] >= 0)
			dep[nd++] = (struct ot_link){ (uint32_t)j, bd->dep[j], bd->how[j], { 0 } };
		if (bd->hdep[j] >= 0)
			hdep[nhd++] = (struct ot_link){ (uint32_t)j, bd->hdep[j], bd->hhow[j], { 0 } };
		if (bd->bar[j])
			bar[nb++] = (uint32_t)j;
	}
	free(kx);
	free(kt.k);
	free(kt.name);
	free(kt.slot);
	r->ops = b;
	r->ops_bytes = bytes;
}

void whatif_ops(const struct trace *t, const uint8_t *cls, struct rank_result *r)
{
	int32_t *smap = xmalloc((t->nsteps ? t->nsteps : 1) * sizeof(*smap));
	for (size_t k = 0, q = 0; k < t->nsteps; k++)
		smap[k] = q < r->nsteps && r->steps[q].number == t->steps[k].number ? (int32_t)q++ : -1;
	size_t n = 0, nsync = 0;
	for (size_t i = 0; i < t->n; i++) {
		n += cls[i] != C_NONE;
		nsync += t->kind[i] == K_SYNC;
	}
	nsync += t->nhsync;
	struct build bd = { .t = t, .cls = cls, .n = n };
	size_t n1 = n ? n : 1;
	bd.idx = xmalloc(n1 * sizeof(*bd.idx));
	bd.step = xmalloc(n1 * sizeof(*bd.step));
	bd.dep = xmalloc(n1 * sizeof(*bd.dep));
	bd.hdep = xmalloc(n1 * sizeof(*bd.hdep));
	bd.bar = xcalloc(n1, 1);
	bd.how = xcalloc(n1, 1);
	bd.hhow = xcalloc(n1, 1);
	uint32_t *hn = xmalloc((t->names.n ? t->names.n : 1) * sizeof(*hn)); /* per name, once */
	for (size_t k = 0; k < t->names.n; k++)
		hn[k] = fnv1a(strtab_get(&t->names, (uint32_t)k));
	bd.hn = hn;
	int64_t *sync = xmalloc((nsync ? nsync : 1) * sizeof(*sync));
	size_t j = 0, q = 0;
	nsync = 0;
	for (size_t k = 0; k < t->nhsync; k++)
		sync[nsync++] = t->hsync[k].end_ns;
	for (size_t i = 0; i < t->n; i++) {
		int comm = kind_class((enum span_kind)t->kind[i]) == C_COMM;
		size_t qi = comm ? q++ : 0;
		if (t->kind[i] == K_SYNC)
			sync[nsync++] = t->end_ns[i];
		if (cls[i] == C_NONE)
			continue;
		bd.idx[j] = (int32_t)i;
		bd.step[j] = t->step[i] >= 0 && (size_t)t->step[i] < t->nsteps ? smap[t->step[i]] : -1;
		bd.dep[j] = bd.hdep[j] = -1;
		if (comm && qi < r->ninst)
			r->inst[qi].op = (int32_t)j;
		j++;
	}
	free(smap);
	stated_deps(&bd);
	if (!bd.table)
		sched_deps(&bd);
	infer_deps(&bd);
	infer_syncs(&bd, sync, nsync);
	free(sync);
	encode(&bd, r);
	free(hn);
	free(bd.idx);
	free(bd.step);
	free(bd.dep);
	free(bd.hdep);
	free(bd.bar);
	free(bd.how);
	free(bd.hhow);
}

void ot_view(const struct rank_result *r, struct op_view *t)
{
	memset(t, 0, sizeof(*t));
	if (!r->ops)
		return;
	const unsigned char *b = r->ops;
	struct ot_head h;
	memcpy(&h, b, sizeof(h));
	t->n = h.n;
	t->base = h.base;
	t->start = (const uint32_t *)(const void *)(b + h.o_start);
	t->dur = b + h.o_dur;
	t->lag = b + h.o_lag;
	t->key8 = h.kw == 1 ? b + h.o_key : NULL;
	t->key16 = h.kw == 1 ? NULL : (const uint16_t *)(const void *)(b + h.o_key);
	t->keys = (const struct ot_key *)(const void *)(b + h.o_keys);
	t->nkey = h.nkey;
	t->runs = (const struct ot_run *)(const void *)(b + h.o_runs);
	t->nrun = h.nrun;
	t->dep = (const struct ot_link *)(const void *)(b + h.o_dep);
	t->ndep = h.ndep;
	t->hdep = (const struct ot_link *)(const void *)(b + h.o_hdep);
	t->nhdep = h.nhdep;
	t->bar = (const uint32_t *)(const void *)(b + h.o_bar);
	t->nbar = h.nbar;
	for (int e = 0; e < OT_E__N; e++) {
		t->esc[e] = (const struct ot_esc *)(const void *)(b + h.o_esc[e]);
		t->nesc[e] = h.nesc[e];
	}
}

size_t whatif_op_count(const struct rank_result *r)
{
	struct ot_head h;
	if (!r->ops)
		return 0;
	memcpy(&h, r->ops, sizeof(h));
	return h.n;
}

/* Whether [o, o + n * size) lies in a block of `bytes`, aligned to `al`. */
static int in_block(uint64_t o, uint64_t n, size_t size, uint64_t bytes, size_t al)
{
	return o % al == 0 && o <= bytes && n <= (bytes - o) / (size ? size : 1);
}

int whatif_ops_valid(const struct rank_result *r)
{
	struct ot_head h;
	if (!r->ops)
		return 1;
	if (r->ops_bytes < sizeof(h))
		return 0;
	memcpy(&h, r->ops, sizeof(h));
	uint64_t b = r->ops_bytes;
	int ok = h.n < UINT32_MAX && in_block(h.o_start, h.n, 4, b, 4) && in_block(h.o_keys, h.nkey, sizeof(struct ot_key), b, 4) &&
		 in_block(h.o_runs, h.nrun, sizeof(struct ot_run), b, 4) &&
		 in_block(h.o_dep, h.ndep, sizeof(struct ot_link), b, 4) &&
		 in_block(h.o_hdep, h.nhdep, sizeof(struct ot_link), b, 4) && in_block(h.o_bar, h.nbar, 4, b, 4) &&
		 (h.kw == 1 || h.kw == 2) && in_block(h.o_key, h.n, h.kw, b, h.kw) && in_block(h.o_dur, 3 * h.n + 1, 1, b, 1) &&
		 in_block(h.o_lag, 3 * h.n + 1, 1, b, 1);
	for (int e = 0; ok && e < OT_E__N; e++)
		ok = in_block(h.o_esc[e], h.nesc[e], sizeof(struct ot_esc), b, 8);
	if (!ok)
		return 0;
	struct op_view t;
	ot_view(r, &t);
	for (size_t x = 0; ok && x < t.nrun; x++)
		ok = t.runs[x].j < t.n && (!x || t.runs[x].j > t.runs[x - 1].j) && (x || t.runs[x].j == 0) &&
		     t.runs[x].step >= -1 && t.runs[x].step < (int64_t)r->nsteps;
	for (size_t x = 0; ok && x < t.ndep; x++)
		ok = t.dep[x].j < t.n && t.dep[x].to >= 0 && (size_t)t.dep[x].to < t.n && (!x || t.dep[x].j > t.dep[x - 1].j);
	for (size_t x = 0; ok && x < t.nhdep; x++)
		ok = t.hdep[x].j < t.n && t.hdep[x].to >= 0 && (size_t)t.hdep[x].to < t.n &&
		     (!x || t.hdep[x].j > t.hdep[x - 1].j);
	for (size_t x = 0; ok && x < t.nbar; x++)
		ok = t.bar[x] < t.n;
	for (int e = 0; ok && e < OT_E__N; e++)
		for (size_t x = 0; ok && x < t.nesc[e]; x++)
			ok = t.esc[e][x].j < t.n && (!x || t.esc[e][x].j > t.esc[e][x - 1].j) &&
			     (e != OT_E_KEY || (t.esc[e][x].v >= 0 && (uint64_t)t.esc[e][x].v < t.nkey));
	for (size_t j = 0; ok && j < t.n; j++)
		ok = t.key8 ? t.key8[j] < t.nkey
			    : t.key16[j] == OT_ESC16 ? wi_find_op(t.esc[OT_E_KEY], t.nesc[OT_E_KEY], sizeof(struct ot_esc),
								  (int32_t)j) >= 0
						     : t.key16[j] < t.nkey;
	return ok && (t.n == 0 || t.nrun > 0);
}

ptrdiff_t wi_find_op(const void *v, size_t n, size_t size, int32_t j)
{
	const char *p = v;
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t m = (lo + hi) / 2;
		int32_t x;
		memcpy(&x, p + m * size, sizeof(x));
		if (x < j)
			lo = m + 1;
		else
			hi = m;
	}
	int32_t x = 0;
	if (lo < n)
		memcpy(&x, p + lo * size, sizeof(x));
	return lo < n && x == j ? (ptrdiff_t)lo : -1;
}

int64_t ot_escape(const struct op_view *t, int which, size_t j)
{
	ptrdiff_t x = wi_find_op(t->esc[which], t->nesc[which], sizeof(struct ot_esc), (int32_t)j);
	return x >= 0 ? t->esc[which][x].v : 0;
}

int32_t ot_step(const struct op_view *t, size_t j)
{
	size_t lo = 0, hi = t->nrun; /* the last run starting at or before j */
	while (lo < hi) {
		size_t m = (lo + hi) / 2;
		if (t->runs[m].j <= j)
			lo = m + 1;
		else
			hi = m;
	}
	return lo ? t->runs[lo - 1].step : -1;
}
