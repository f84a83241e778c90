/*
 * whatif.c - what fixing a rank, a group or an operation type is worth:
 * a deterministic replay of the joined timeline (docs/metrics.md "What-if").
 *
 * The model.  Per rank, analysis_rank keeps an op table (struct wop): every
 * device op in start order with its stream, host launch time, step and
 * collective call.  On the aligned clock the replay re-times every op:
 *   host     L_j = L_prev + gap_j, the launches in launch order, gap_j the
 *            measured launch-to-launch time; after a synchronisation the
 *            trace records (Kineto cuda_sync) the host waits for the op it
 *            synchronised on: L_j = max(L_prev, E_hdep + gap_j), gap_j then
 *            the host's own time after the op it waited for ended.
 *   device   S_j = max(E of the previous op on its stream, L_j, E_dep) + lat_j,
 *            dep an op of another stream that ended within DEP_LAG_NS before
 *            j started when nothing else explains j's delay (an event wait),
 *            lat_j the measured rest (launch latency; a delay nothing
 *            explains is kept and counted as unexplained).
 *   ends     E_j = S_j + d_j for compute, copies and unmatched calls; for a
 *            matched collective or send/recv pair E_j = max over its calls
 *            of S + x_j, x_j the call's measured transfer (end - last
 *            arrival): a collective ends at its last arrival plus its
 *            transfer, a recv after its send starts plus transfer.
 * Replaying the measured values gives back each rank's step windows
 * (start of the step's first op to the next step's first op) unless the
 * graph cannot be followed (a stall, an order the matches contradict) or
 * unexplained delays are large: a step whose replay is more than 3 % off
 * on some rank is flagged with the reason, never adjusted.
 *
 * Counterfactuals change d, x and gap and replay again.  The ideal of an
 * op is the median of the same op (same work class, step number, name and
 * occurrence in the step) on the ranks of its class outside the set being
 * fixed (over the whole class when the set covers it); work classes are
 * the pipeline stages found from the send/recv peers, else all ranks.  The
 * ideal transfer of a call is the median transfer of the calls of its type
 * and size.  Fixes: each rank (all ranks up to 8, else the 8 with the
 * largest excess over their peers), each stage and replica, each op type,
 * and everything (the ideal step; slowdown = measured / ideal, Lin et al.,
 * OSDI'25).  The critical path of a step is walked back from its last end
 * through whatever set each start (stream, launch, dependency, last
 * arrival).
 *
 * Cost: one replay is O(ops + calls); the fixes are at most 8 + groups +
 * types + 3 replays, so the what-if costs a few passes over the op tables.
 * A replay of many ranks is bound by cache misses (each rank's ops are
 * visited a collective's worth at a time): the order in which ops start
 * depends on no time, so the first replays (unmodified, ideal, the sure
 * single-rank fix) run as lanes of one pass (replay_lanes) that reads
 * each op's inputs once.  It runs on the analysis's threads (-j): the
 * set-up per rank, collective or slot range, and the later fixes at once,
 * each in its own worker state (struct wst, at most WORKERS_MAX); each
 * result is written to its own place and read in the fixes' order, so no
 * figure depends on the thread count (bench/RESULTS.md "What-if cost").
 */
#include "overlap/whatif.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/stats.h"
#include "overlap/analysis.h"

#define LAT_MAX_NS 20000     /* a start this close after its ready time is launch latency */
#define DEP_LAG_NS 20000     /* another stream's end this close before a start explains it */
#define DEP_SLACK_NS 5000    /* ... or this close after it (the streams' clocks jitter by a few us) */
#define ROUND_NS 10          /* ends and starts this close are the same instant (rounding of us/ms inputs) */
#define SYNC_LAG_NS 5000     /* an op ending this close after a sync record is what it waited for */
#define NARROW_SHARE 0.9    /* a rank or group fix with this share of the best gain is named instead */
#define UNX_SHARE 0.05      /* unexplained delays of this share of the step make the verdict inconclusive */
#define REPRO_PCT 3.0        /* the replay must reproduce each rank's step within this */
#define ALL_RANKS_MAX 8      /* up to this many ranks every rank is fixed in turn */
#define RANK_FIXES 8         /* beyond, the ranks with the largest excess */
#define WORKERS_MAX 4        /* replays at once (each holds its own replay state: 16 bytes an op a lane) */
#ifndef MAP_POPULATE
#define MAP_POPULATE 0       /* not Linux: the pages fault in one by one */
#endif
#define UNSET INT64_MIN

/* ---- the op table (per rank, from analysis_rank) ------------------------------ */

static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

struct lkey { int64_t t; int32_t j; };

static int cmp_lkey(const void *a, const void *b)
{
	const struct lkey *x = a, *y = b;
	if (x->t != y->t)
		return (x->t > y->t) - (x->t < y->t);
	return (x->j > y->j) - (x->j < y->j);
}

/* Ops with a known launch, in launch order (ties by start order). */
static int32_t *launch_order(const struct wop *op, size_t n, size_t *nh)
{
	struct lkey *k = xmalloc((n ? n : 1) * sizeof(*k));
	size_t m = 0;
	for (size_t j = 0; j < n; j++)
		if (op[j].launch_ns != INT64_MIN)
			k[m++] = (struct lkey){ op[j].launch_ns, (int32_t)j };
	/* launches mostly come in start order: insertion sort while it moves
	 * little, else qsort (the keys are distinct: the same order either way) */
	size_t moves = 0;
	for (size_t a = 1; a < m; a++) {
		struct lkey x = k[a];
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
	*nh = m;
	return h;
}

/* Per step index, the latest end of its ops (INT64_MIN: none); *ns the
 * number of step indices. */
static int64_t *step_ends(const struct wop *op, size_t n, size_t *ns)
{
	size_t m = 0;
	for (size_t j = 0; j < n; j++)
		if (op[j].step >= 0 && (size_t)op[j].step + 1 > m)
			m = (size_t)op[j].step + 1;
	int64_t *be = xmalloc((m ? m : 1) * sizeof(*be));
	for (size_t q = 0; q < m; q++)
		be[q] = INT64_MIN;
	for (size_t j = 0; j < n; j++)
		if (op[j].step >= 0 && op[j].end_ns > be[op[j].step])
			be[op[j].step] = op[j].end_ns;
	*ns = m;
	return be;
}

/* The step barrier: op j waited for the end of its rank's previous step
 * when that end is later than its stream and launch allow and not later
 * than its start (+ ROUND_NS).  Returns that end, else UNSET. */
static int64_t step_bar(const struct wop *o, const int64_t *be, size_t nbe, int64_t ready)
{
	if (o->step < 1 || (size_t)o->step > nbe)
		return UNSET;
	int64_t b = be[o->step - 1];
	return b != INT64_MIN && b > ready && b <= o->start_ns + ROUND_NS ? b : UNSET;
}

/* Cross-stream dependencies: an op that starts later than its stream, its
 * launch and its step barrier allow, within DEP_LAG_NS after another
 * stream's op ended, waited for that op (an event wait the trace does not
 * record).  Where the trace has no launch for the op (an op table without
 * launch times), any such gap is taken as a wait for the latest-ending op
 * of another stream that ended within it, however long ago. */
static void infer_deps(struct wop *op, size_t n)
{
	int32_t sid[64], last[64][2];
	int ns = 0;
	size_t nbe;
	int64_t *be = step_ends(op, n, &nbe);
	for (size_t j = 0; j < n; j++) {
		int k;
		for (k = 0; k < ns && sid[k] != op[j].stream; k++)
			;
		if (k == ns) {
			if (ns == 64)
				continue; /* more streams than any trace has: no inference for the rest */
			sid[ns] = op[j].stream;
			last[ns][0] = last[ns][1] = -1;
			ns++;
		}
		int64_t ready = last[k][0] >= 0 ? op[last[k][0]].end_ns : INT64_MIN;
		if (op[j].launch_ns > ready)
			ready = op[j].launch_ns;
		int64_t b = step_bar(&op[j], be, nbe, ready == INT64_MIN ? UNSET : ready);
		op[j].bar = b != UNSET;
		if (b != UNSET)
			ready = b;
		int nolaunch = op[j].launch_ns == INT64_MIN;
		if (ready == INT64_MIN ? nolaunch : op[j].start_ns - ready > LAT_MAX_NS) {
			int64_t best = INT64_MIN;
			for (int q = 0; q < ns; q++)
				for (int b2 = 0; q != k && b2 < 2; b2++) {
					int32_t c = last[q][b2];
					if (c < 0)
						continue;
					int64_t e = op[c].end_ns;
					if (e <= op[j].start_ns + (nolaunch ? ROUND_NS : DEP_SLACK_NS) && e > ready &&
					    (nolaunch || op[j].start_ns - e <= DEP_LAG_NS) && e > best) {
						best = e;
						op[j].dep = c;
					}
				}
		}
		last[k][1] = last[k][0];
		last[k][0] = (int32_t)j;
	}
	free(be);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Host synchronisations: where a sync record (ends[]) ended between two
 * launches, the later launch waited for the op it synchronised on: of the
 * last op launched on each stream before it, the latest-ending one that
 * ended by the sync's end (+ SYNC_LAG_NS). */
static void infer_syncs(struct wop *op, size_t n, int64_t *ends, size_t nends)
{
	if (!nends)
		return;
	qsort(ends, nends, sizeof(*ends), cmp_i64);
	size_t nh;
	int32_t *h = launch_order(op, n, &nh);
	int32_t sid[64], last[64]; /* per stream, the op launched last so far */
	int ns = 0;
	for (size_t p = 0; p < nh; p++) {
		if (p) {
			int64_t lo = op[h[p - 1]].launch_ns, hi = op[h[p]].launch_ns;
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
					int64_t e = op[last[q]].end_ns;
					if (e <= se + SYNC_LAG_NS && e > best) {
						best = e;
						op[h[p]].hdep = last[q];
					}
				}
			}
		}
		int q;
		for (q = 0; q < ns && sid[q] != op[h[p]].stream; q++)
			;
		if (q == ns && ns < 64)
			sid[ns++] = op[h[p]].stream;
		if (q < ns)
			last[q] = h[p];
	}
	free(h);
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
	struct wop *op = xcalloc(n ? n : 1, sizeof(*op));
	uint32_t *hn = xmalloc((t->names.n ? t->names.n : 1) * sizeof(*hn)); /* per name, once */
	for (size_t k = 0; k < t->names.n; k++)
		hn[k] = fnv1a(strtab_get(&t->names, (uint32_t)k));
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
		struct wop *o = &op[j];
		o->start_ns = t->start_ns[i];
		o->end_ns = t->end_ns[i];
		o->launch_ns = t->launch_ns[i];
		o->stream = t->stream[i];
		o->step = t->step[i] >= 0 && (size_t)t->step[i] < t->nsteps ? smap[t->step[i]] : -1;
		o->dep = o->hdep = o->inst = -1;
		o->hash = t->name[i] < t->names.n ? hn[t->name[i]] : 0;
		o->kind = t->kind[i];
		if (comm && qi < r->ninst) {
			o->inst = (int32_t)qi;
			r->inst[qi].op = (int32_t)j;
		}
		j++;
	}
	infer_deps(op, n);
	infer_syncs(op, n, sync, nsync);
	free(hn);
	free(sync);
	free(smap);
	r->ops = op;
	r->nops = n;
}

/* ---- threads ---------------------------------------------------------------------- */

/* fn(arg, worker, i) for every i < n on up to nt threads (the calling one
 * is worker 0); which thread runs which i does not change a result: each
 * i writes its own outputs, and a worker's replay state is reset by every
 * replay. */
struct pfor {
	void (*fn)(void *arg, size_t worker, size_t i);
	void *arg;
	size_t n;
	atomic_size_t next;
};
struct pfor_th { struct pfor *p; size_t w; };

static void *pfor_main(void *x)
{
	struct pfor_th *t = x;
	for (size_t i; (i = atomic_fetch_add(&t->p->next, 1)) < t->p->n;)
		t->p->fn(t->p->arg, t->w, i);
	return NULL;
}

static void par_for(size_t nt, size_t n, void (*fn)(void *, size_t, size_t), void *arg)
{
	struct pfor p = { .fn = fn, .arg = arg, .n = n };
	atomic_init(&p.next, 0);
	if (nt > n)
		nt = n;
	struct pfor_th *t = xmalloc((nt ? nt : 1) * sizeof(*t));
	pthread_t *th = xmalloc((nt ? nt : 1) * sizeof(*th));
	size_t started = 1; /* threads 1 .. started - 1 run; a thread that cannot start is done without */
	for (; started < nt; started++) {
		t[started] = (struct pfor_th){ &p, started };
		if (pthread_create(&th[started], NULL, pfor_main, &t[started]) != 0)
			break;
	}
	t[0] = (struct pfor_th){ &p, 0 };
	pfor_main(&t[0]);
	for (size_t q = 1; q < started; q++)
		pthread_join(th[q], NULL);
	free(th);
	free(t);
}

/* ---- the replay context --------------------------------------------------------- */

/* WC_UCOLL + type: communication the join could not match across ranks
 * (a call of part of its group, of unknown peer, of unknown type with
 * counts that differ).  Communication is never compute: such a call keeps
 * its measured duration in every replay (its waiting cannot be told from
 * its transfer, so no ideal exists for it: dur_fixed), is no op-type fix,
 * and the critical path names it "unmatched <type>". */
enum wcat { WC_GEMM, WC_ATTN, WC_COMPUTE, WC_MEMORY, WC_HOST, WC_COLL, WC_UCOLL = WC_COLL + COLL__COUNT,
	    WC__N = WC_UCOLL + COLL__COUNT };

static const char *cat_name(int c, char *buf, size_t n)
{
	static const char *const names[] = { "gemm", "attention", "other compute", "memory copies",
					     "host launch gaps" };
	if (c < WC_COLL)
		return names[c];
	if (c >= WC_UCOLL && c - WC_UCOLL == COLL_OTHER)
		snprintf(buf, n, "unmatched communication of unknown type");
	else if (c >= WC_UCOLL)
		snprintf(buf, n, "unmatched %s", coll_type_name((enum coll_type)(c - WC_UCOLL)));
	else
		snprintf(buf, n, "%s transfer", coll_type_name((enum coll_type)(c - WC_COLL)));
	return buf;
}

/* The category of op o of rank r that no matched collective holds. */
static int op_cat(const struct rank_result *r, const struct wop *o)
{
	switch ((enum span_kind)o->kind) {
	case K_GEMM: return WC_GEMM;
	case K_ATTENTION: return WC_ATTN;
	case K_MEMCPY_H2D: case K_MEMCPY_D2H: case K_MEMCPY_D2D: case K_MEMCPY_P2P: case K_MEMCPY_OTHER:
	case K_MEMSET: return WC_MEMORY;
	case K_COMM: return WC_UCOLL + (o->inst >= 0 && (size_t)o->inst < r->ninst ? r->inst[o->inst].type : COLL_OTHER);
	default: return WC_COMPUTE;
	}
}

/* A launch, in launch order: its op, the op the host waited for before it
 * (-1). */
struct hlo { int32_t j, hdep; uint16_t hsid; /* hdep's stream (index) */ };

/* What every replay reads of one op and none changes. */
struct sop {
	int32_t lat;                 /* measured latency (ns); LAT_BIG: in k->latx (op_lat) */
	int32_t snext, grp;          /* next op on its stream, -1; matched collective, -1 (once the
	                              * collectives are built: its call's index in c->gm) */
	int32_t step, dep;           /* as struct wop */
	uint8_t bar;                 /* it waits for its rank's previous step (step >= 1) */
	uint8_t hasl;                /* its launch is known */
	uint16_t dsid;               /* dep's stream (index, rk_streams), whether it has ended (op_ended) */
};

#define LAT_BIG INT32_MIN    /* struct sop lat: the latency does not fit in 32 bits (k->latx) */

/* What one replay writes for one op (one replay state per worker, so
 * scenarios replay at once on several threads).  The scenario's duration,
 * transfer and host gap of an op are not stored: the replay takes them from
 * the rank's measured arrays and the scenario as it reaches the op
 * (op_dur, op_gap, op_xfer). */
struct rop {
	int64_t E, L;                /* replayed end, launch (the start: E - duration, of a matched
	                              * call in struct wst gs; op_start) */
};

/* A call of a matched collective of the join: its size and type (the class
 * of its ideal transfer), its op, its call (index as r->inst) and its
 * collective (matched with two or more calls when c->g[grp].n >= 2). */
struct gcall { uint64_t bytes; int32_t j, inst, grp, m; uint8_t type; }; /* m: its place in c->gm */

/* One rank's measured inputs (read-only once the set-up is done). */
struct rk {
	/* what the replay reads on every visit of the rank, first (one cache line) */
	struct sop *o;               /* per op */
	struct hlo *hl;              /* the launches in launch order */
	int32_t *hord;               /* launch order (during rk_host) */
	uint16_t *qof;               /* per op: its stream (index; until build_groups) */
	int64_t *latx;               /* per op, its latency where some op's is beyond int32 (else NULL) */
	size_t nh, nstr, nbs;        /* launches, streams, step indices */
	const struct rank_result *r;
	size_t n;
	int64_t *d, *gap;            /* duration, host gap (after a sync: behind the op waited for) */
	int64_t *x;                  /* per call (index as r->inst): its transfer, when matched */
	int32_t *slot;
	uint8_t *cat;
	struct gcall *gc;            /* the calls of the join's matched collectives, in op order */
	size_t ngops;
	int32_t *hpos;               /* an op's place in the launch order (-1: launch unknown) */
	int32_t *sprev;              /* per op: the previous op on its stream, -1 */
	int32_t *shead;              /* per stream: its first op */
	int64_t *xi;                 /* per call: its ideal transfer */
	int64_t *mws, *mwe;          /* the measured step windows, per step index of the rank */
	/* step barriers, per step index: measured latest end; ops;
	 * unexplained delay (ns) */
	int64_t *bm, *unx;
	size_t *bn;
	uint64_t unexplained;        /* ops whose delay nothing explains */
	int cls;                     /* work class (stage or 0) */
	int hassync;                 /* a launch waited for a synchronisation (an op with hdep) */
	/* the first launch (aligned; UNSET without launches), its peers' lower
	 * median (the ranks of its class whose first launch is in the same
	 * step); the step number of the first launch */
	int64_t a0, ma0, astep;
};

/* Scenarios replayed in one pass, each in a lane of its own (replay_lanes):
 * which op can start next does not depend on any time (only on what has
 * started, ended and been launched), so every lane follows the same order
 * and each op's measured inputs are read once for all of them. */
#define LANES_MAX 4

/* One replay's state of one step index of a rank, per lane: its window
 * (first start, end), its latest end so far and the first op (in op order)
 * with it. */
struct bst { int64_t ws, we, bE; int32_t wlast; };

enum { SC_NONE, SC_SET, SC_CAT, SC_ALL, SC_BAL };
enum { PART_DUR = 1, PART_HOST = 2 };

struct scen {
	int type;
	const uint8_t *mask;  /* SC_SET: the ranks fixed (index as a->r) */
	int single;           /* SC_SET of one rank: its index, else -1 */
	int part;             /* SC_SET: PART_DUR | PART_HOST */
	int cat;              /* SC_CAT */
};

/* One replay's state of one rank (K lanes: the worker's). */
struct rst {
	struct rop *o;               /* per op, per lane: o[j * K + v] */
	int64_t *lastE;              /* per stream, per lane: the end of the op it moved past last (UNSET: none) */
	struct bst *b;               /* per step index, per lane */
	int32_t *head;               /* per stream: the op at its head (-1: it is done) */
	int32_t *brem;               /* per step index: its ops not yet ended (the step barrier) */
	uint8_t *hst;                /* per stream: its head has not started (0), has ended (1), is a
	                              * matched call waiting for its collective (2) */
	size_t hp;                   /* position in launch order */
	int64_t a2[LANES_MAX];       /* the first launch's anchor in this replay */
	int64_t lastL[LANES_MAX];    /* the last launch replayed (hp > 0) */
	int inq;
	unsigned fix;                /* bit v: lane v's scenario changes this rank's ops (else: as measured) */
};

/* A matched collective: its members in c->gm; in a replay, how many have
 * arrived. */
struct cgrp { size_t at, n, arrived; };
/* ... and per lane its last arrival: start, rank, op. */
struct glast { int64_t s; int32_t r, o; };

/* One worker's replay state: per rank, per collective, the work list. */
struct wst {
	struct rst *k;
	struct cgrp *g;
	struct glast *gl;            /* per collective, per lane */
	int64_t *gs;                 /* per call of a matched collective (index as c->gm), per lane: its start */
	uint8_t **lft;               /* after a replay that stalled: per rank, per op, 1 if left where it
	                              * was (S = E = its measured start), else NULL */
	int32_t *stack;
	size_t nstack;
	size_t *cmask;               /* of each work class, the ranks in the set being fixed (set_medians) */
	size_t K, kcap;              /* lanes of the last pass; lanes allocated */
	struct scen sc[LANES_MAX];   /* each lane's scenario (its mask: only while it runs) */
	int64_t *md[LANES_MAX], *mg[LANES_MAX]; /* SC_SET of several ranks: per slot, the set's medians */
	char *ob;                    /* every rank's o[], one mapping (NULL: each rank's own allocation) */
	size_t obn;                  /* its bytes */
};

struct slotm { int32_t ri, j; };

struct ctx {
	struct analysis *a;
	struct rk *k;
	size_t n;
	struct cgrp *g;              /* the collectives' members (at, n); the replay state is per worker */
	size_t ng;
	struct slotm *gm;            /* group members */
	int64_t *gx, *gxi;           /* beside gm: each call's measured and ideal transfer (matched calls) */
	int32_t *gmq;                /* beside gm: its collective */
	uint16_t *gmsid;             /* beside gm: its op's stream (index) */
	size_t ngm;                  /* gm's calls */
	struct slotm *sm;            /* slot members, slot by slot */
	size_t *sat, *sn, nslot;
	int64_t *med_all_d, *med_all_g; /* per slot */
	int64_t *mid;                /* per slot: its two order statistics around the middle, of the
	                              * durations then the gaps (peer_med) */
	int64_t *stepno;             /* the common steps */
	int32_t **sidx;              /* per rank, per common step: its step index */
	size_t nsteps;
	uint64_t unexplained;        /* ops whose delay nothing explains */
	const double *rep;           /* the unmodified replay's steps (ms), once known */
	size_t *csize;               /* ranks per work class */
	struct wst *w;               /* per worker thread, allocated at its first replay */
	size_t nw;                   /* worker threads (at most WORKERS_MAX) */
	size_t nt;                   /* threads for the set-up */
	int64_t *sd, *sg;            /* beside sm: each member's duration and host gap */
	int32_t *scls;               /* per slot: its work class */
	int32_t *sj;                 /* per slot of an aligned class: its first rank's op, else -1 */
	uint8_t *calign;             /* per work class: aligned (its every rank runs only ops its first rank
	                              * runs): its slots' members are not kept in sm */
	int32_t **inv;               /* per rank of an aligned class but its first: per op of the first rank,
	                              * the rank's op in that slot (-1: none) */
	int32_t *crank;              /* the ranks by work class (rank order in each) */
	size_t *cr0;                 /* per work class: where its ranks start in crank (n + 2) */
	double *ex;                  /* per rank: its excess over its peers (rank_candidates), ns */
	char *big;                   /* every rank's per-op arrays (rk_arrays), one mapping, or NULL */
	size_t *bigat, bign;         /* per rank: where its part starts; the mapping's bytes */
	const double *rep_wend;      /* the unmodified replay's work ends per step (ms), once known */
	int32_t *aord;               /* ranks with launches by (class, first launch's step, first launch) */
	size_t naord;
	int64_t **bal;               /* per rank, per op: its duration with the stages balanced (SC_BAL), else NULL */
	int manystreams;             /* a rank has more streams than struct sop's dsid holds */
	char **incomplete;           /* per rank: why its trace lacks its peers' ops (isolate_incomplete), else NULL */
};

/* Op j's latency (p: its struct sop). */
static inline int64_t op_lat(const struct rk *k, const struct sop *p, size_t j)
{
	return p->lat != LAT_BIG ? p->lat : k->latx[j];
}

/* Op j's measured start and end on the aligned clock. */
static inline int64_t meas_s(const struct rk *k, size_t j)
{
	return analysis_aligned(k->r, k->r->ops[j].start_ns);
}

static inline int64_t meas_e(const struct rk *k, size_t j)
{
	return analysis_aligned(k->r, k->r->ops[j].end_ns);
}

static int64_t median_i64(int64_t *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_i64);
	return v[(n - 1) / 2]; /* the lower median (see slot_medians) */
}

static void cut_windows(size_t ns, int64_t *ws, int64_t *we, const int64_t *last);

/* The measured step windows (ts, te: each op's measured start and end). */
static void windows_meas(struct rk *k, const int64_t *ts, const int64_t *te)
{
	size_t ns = k->r->nsteps;
	int64_t *last = xmalloc((ns ? ns : 1) * sizeof(*last));
	for (size_t q = 0; q < ns; q++) {
		k->mws[q] = INT64_MAX;
		last[q] = INT64_MIN;
	}
	for (size_t j = 0; j < k->n; j++) {
		int32_t q = k->r->ops[j].step;
		if (q < 0)
			continue;
		if (ts[j] < k->mws[q])
			k->mws[q] = ts[j];
		if (te[j] > last[q])
			last[q] = te[j];
	}
	cut_windows(ns, k->mws, k->mwe, last);
	free(last);
}

/* Per op: duration, collective, category, step and dependencies (la: each
 * op's measured launch, aligned, UNSET if unknown). */
static void rk_ops(struct rk *k, const int64_t *ts, const int64_t *te, const int64_t *la)
{
	const struct rank_result *r = k->r;
	for (size_t j = 0; j < k->n; j++) {
		const struct wop *o = &r->ops[j];
		struct sop *p = &k->o[j];
		k->d[j] = te[j] - ts[j];
		const struct comm_inst *ci = o->inst >= 0 ? &r->inst[o->inst] : NULL;
		p->grp = ci && ci->grp >= 0 && ci->wait_ns >= 0 ? (int32_t)ci->grp : -1;
		p->step = o->step;
		p->dep = o->dep;
		k->hassync |= o->hdep >= 0;
		p->bar = o->bar && o->step >= 1 && (size_t)o->step <= k->nbs; /* it waits for its step barrier */
		p->hasl = la[j] != UNSET;
		k->cat[j] = (uint8_t)(p->grp >= 0 ? WC_COLL + ci->type : op_cat(r, o));
		if (p->grp >= 0 && k->ngops < r->ninst)
			k->gc[k->ngops++] = (struct gcall){ ci->bytes, (int32_t)j, o->inst, p->grp, -1, ci->type };
		k->slot[j] = -1;
	}
}

/* Streams: a dense index; per op the previous and the next op on its
 * stream, per stream its first op. */
static void rk_streams(struct rk *k)
{
	size_t n = k->n, ns = 0;
	int32_t *sid = xmalloc((n ? n : 1) * sizeof(*sid)), *last = xmalloc((n ? n : 1) * sizeof(*last));
	k->shead = xmalloc((n ? n : 1) * sizeof(*k->shead));
	for (size_t j = 0; j < n; j++) {
		size_t q;
		for (q = 0; q < ns && sid[q] != k->r->ops[j].stream; q++)
			;
		if (q == ns) {
			sid[ns] = k->r->ops[j].stream;
			k->shead[ns] = (int32_t)j;
			last[ns++] = -1;
		}
		k->sprev[j] = last[q];
		k->qof[j] = (uint16_t)q; /* rk_init: more than UINT16_MAX streams is refused (whatif_run) */
		k->o[j].snext = -1;
		if (last[q] >= 0)
			k->o[last[q]].snext = (int32_t)j;
		last[q] = (int32_t)j;
	}
	k->nstr = ns;
	k->shead = xrealloc(k->shead, (ns ? ns : 1) * sizeof(*k->shead));
	for (size_t j = 0; j < n; j++)
		k->o[j].dsid = k->o[j].dep >= 0 ? k->qof[k->o[j].dep] : 0;
	free(sid);
	free(last);
}

/* Host: the launch order and the gaps in it; after a sync, the time behind
 * the op waited for. */
static void rk_host(struct rk *k, const int64_t *te, const int64_t *la)
{
	const struct rank_result *r = k->r;
	k->hord = launch_order(r->ops, k->n, &k->nh);
	for (size_t j = 0; j < k->n; j++)
		k->hpos[j] = -1;
	for (size_t p = 0; p < k->nh; p++)
		k->hpos[k->hord[p]] = (int32_t)p;
	k->a0 = k->ma0 = k->nh ? la[k->hord[0]] : UNSET;
	k->astep = INT64_MIN;
	if (k->nh && r->ops[k->hord[0]].step >= 0)
		k->astep = r->steps[r->ops[k->hord[0]].step].number;
	for (size_t p = 0; p < k->nh; p++) {
		int32_t j = k->hord[p];
		if (r->ops[j].hdep >= 0) /* the host time after the wait: its gap */
			k->gap[j] = la[j] - te[r->ops[j].hdep];
		else
			k->gap[j] = p ? la[j] - la[k->hord[p - 1]] : 0;
	}
	k->hl = xmalloc((k->nh ? k->nh : 1) * sizeof(*k->hl));
	for (size_t p = 0; p < k->nh; p++) {
		int32_t h = r->ops[k->hord[p]].hdep;
		k->hl[p] = (struct hlo){ k->hord[p], h, h >= 0 ? k->qof[h] : 0 };
	}
	free(k->hord); /* k->hl has it */
	k->hord = NULL;
}

/* Step barriers (each step's latest end, measured) and each op's latency:
 * its start minus the measured ready time. */
static void rk_latency(struct rk *k, const int64_t *ts, const int64_t *te, const int64_t *la)
{
	const struct rank_result *r = k->r;
	size_t nb = k->nbs ? k->nbs : 1;
	k->bm = xmalloc(nb * sizeof(int64_t));
	k->unx = xcalloc(nb, sizeof(int64_t));
	k->bn = xcalloc(nb, sizeof(size_t));
	for (size_t q = 0; q < k->nbs; q++)
		k->bm[q] = UNSET;
	for (size_t j = 0; j < k->n; j++) {
		int32_t q = r->ops[j].step;
		if (q >= 0 && (size_t)q < k->nbs) {
			k->bn[q]++;
			if (te[j] > k->bm[q])
				k->bm[q] = te[j];
		}
	}
	for (size_t j = 0; j < k->n; j++) {
		int64_t ready = k->sprev[j] >= 0 ? te[k->sprev[j]] : UNSET;
		if (la[j] != UNSET && la[j] > ready)
			ready = la[j];
		if (r->ops[j].bar && r->ops[j].step >= 1 && k->bm[r->ops[j].step - 1] > ready)
			ready = k->bm[r->ops[j].step - 1];
		if (r->ops[j].dep >= 0 && te[r->ops[j].dep] > ready)
			ready = te[r->ops[j].dep];
		int64_t lat = ready == UNSET ? 0 : ts[j] - ready;
		if (lat > INT32_MIN && lat <= INT32_MAX) {
			k->o[j].lat = (int32_t)lat;
		} else { /* seconds late: kept whole beside (op_lat) */
			if (!k->latx)
				k->latx = xcalloc(k->n, sizeof(*k->latx));
			k->latx[j] = lat;
			k->o[j].lat = LAT_BIG;
		}
		/* a delay beyond launch latency after whatever explains the start
		 * (an inferred dependency included: without launches it is the
		 * latest-ending candidate, not a known one) */
		if (lat > LAT_MAX_NS && ready != UNSET) {
			k->unexplained++;
			if (r->ops[j].step >= 0)
				k->unx[r->ops[j].step] += lat;
		}
	}
}

/* Bytes of rank i's per-op arrays in the what-if's one mapping (rk_arrays),
 * a multiple of the page. */
static size_t rk_bytes(size_t n)
{
	size_t n1 = n ? n : 1;
	size_t b = n1 * (sizeof(struct sop) + 2 * sizeof(int64_t) + 3 * sizeof(int32_t) + 1);
	return (b + 4095) & ~(size_t)4095;
}

/* Rank i's per-op arrays (zeroed): from its part of c->big, its pages made
 * at once (MADV_POPULATE_WRITE: a fault per page costs more), else each
 * its own allocation. */
static void rk_arrays(struct ctx *c, size_t i)
{
	struct rk *k = &c->k[i];
	size_t n1 = k->n ? k->n : 1;
	if (!c->big) {
		k->o = xcalloc(n1, sizeof(*k->o));
		k->d = xcalloc(n1, sizeof(int64_t));
		k->gap = xcalloc(n1, sizeof(int64_t));
		k->sprev = xcalloc(n1, sizeof(int32_t));
		k->hpos = xcalloc(n1, sizeof(int32_t));
		k->slot = xcalloc(n1, sizeof(int32_t));
		k->cat = xcalloc(n1, 1);
		return;
	}
	char *b = c->big + c->bigat[i];
#ifdef MADV_POPULATE_WRITE
	madvise(b, rk_bytes(k->n), MADV_POPULATE_WRITE); /* where it fails: a fault per page */
#endif
	k->o = (struct sop *)b;
	k->d = (int64_t *)(b + n1 * sizeof(struct sop));
	k->gap = k->d + n1;
	k->sprev = (int32_t *)(k->gap + n1);
	k->hpos = k->sprev + n1;
	k->slot = k->hpos + n1;
	k->cat = (uint8_t *)(k->slot + n1);
}

/* Measured inputs of one rank on the aligned clock (ranks in parallel:
 * it writes c->k[i] alone). */
static void rk_init(struct ctx *c, size_t i)
{
	struct rk *k = &c->k[i];
	const struct rank_result *r = &c->a->r[i];
	size_t n = r->nops, n1 = n ? n : 1;
	k->r = r;
	k->n = n;
	k->nbs = r->nsteps;
	rk_arrays(c, i);
	k->x = xcalloc(r->ninst ? r->ninst : 1, sizeof(int64_t));
	k->xi = xcalloc(r->ninst ? r->ninst : 1, sizeof(int64_t));
	k->gc = xmalloc((r->ninst ? r->ninst : 1) * sizeof(*k->gc));
	/* measured start, end and launch (aligned) for the passes below; not kept */
	int64_t *ts = xmalloc(3 * n1 * sizeof(*ts)), *te = ts + n1, *la = te + n1;
	for (size_t j = 0; j < n; j++) {
		ts[j] = meas_s(k, j);
		te[j] = meas_e(k, j);
		la[j] = r->ops[j].launch_ns == INT64_MIN ? UNSET : analysis_aligned(r, r->ops[j].launch_ns);
	}
	rk_ops(k, ts, te, la);
	k->qof = xmalloc(n1 * sizeof(*k->qof));
	rk_streams(k);
	rk_host(k, te, la);
	rk_latency(k, ts, te, la);
	k->mws = xmalloc((r->nsteps ? r->nsteps : 1) * sizeof(int64_t));
	k->mwe = xmalloc((r->nsteps ? r->nsteps : 1) * sizeof(int64_t));
	windows_meas(k, ts, te); /* while the rank's ops are in cache */
	free(ts);
}

static void rk_free(const struct ctx *c, struct rk *k)
{
	void *p[] = { k->qof, k->x, k->xi, k->gc, k->hord, k->hl, k->latx, k->shead, k->mws, k->mwe, k->bm, k->unx, k->bn };
	for (size_t q = 0; q < sizeof(p) / sizeof(p[0]); q++)
		free(p[q]);
	if (c->big)
		return; /* the per-op arrays: c->big */
	void *a[] = { k->o, k->d, k->gap, k->sprev, k->hpos, k->slot, k->cat };
	for (size_t q = 0; q < sizeof(a) / sizeof(a[0]); q++)
		free(a[q]);
}

/* ---- collectives and slots ----------------------------------------------------- */

/* Each call's measured transfer (its end - the last arrival) of matched
 * collective q (collectives in parallel: each writes its own calls). */
static void xfer_task(void *arg, size_t w, size_t q)
{
	(void)w;
	struct ctx *c = arg;
	const struct cgrp *g = &c->g[q];
	int64_t last = INT64_MIN;
	for (size_t m = 0; m < g->n; m++) {
		struct slotm u = c->gm[g->at + m];
		int64_t t = meas_s(&c->k[u.ri], (size_t)u.j);
		if (t > last)
			last = t;
	}
	for (size_t m = 0; m < g->n; m++) {
		struct slotm u = c->gm[g->at + m];
		struct rk *k = &c->k[u.ri];
		if (g->n < 2) { /* its peers' calls are not in the op tables: a plain op */
			k->o[u.j].grp = -1;
			k->cat[u.j] = (uint8_t)op_cat(k->r, &k->r->ops[u.j]);
			continue;
		}
		int64_t e = meas_e(k, (size_t)u.j);
		k->x[k->r->ops[u.j].inst] = e - last > 0 ? e - last : 0;
	}
}

struct tcls { uint64_t bytes; uint32_t id; uint8_t type, used; };

/* Of each rank's calls of matched collectives (two or more calls), in
 * rank and op order: its class (type, size) into cid[] (a hash of the few
 * classes), the calls of each class into cnt[]; returns the classes. */
static size_t xfer_classes(const struct ctx *c, uint32_t *cid, size_t **cnt)
{
	size_t cap = 64, ncls = 0, ccap = 0, m = 0;
	struct tcls *tab = xcalloc(cap, sizeof(*tab));
	*cnt = NULL;
	for (size_t i = 0; i < c->n; i++) {
		const struct rk *k = &c->k[i];
		for (size_t x = 0; x < k->ngops; x++) {
			const struct gcall *ci = &k->gc[x];
			if (c->g[ci->grp].n < 2)
				continue;
			uint64_t hv = (ci->bytes ^ ((uint64_t)ci->type << 56)) * 0x9e3779b97f4a7c15ull;
			size_t h = (size_t)(hv >> 40) & (cap - 1);
			while (tab[h].used && (tab[h].bytes != ci->bytes || tab[h].type != ci->type))
				h = (h + 1) & (cap - 1);
			if (!tab[h].used) {
				tab[h] = (struct tcls){ ci->bytes, (uint32_t)ncls++, ci->type, 1 };
				GROW(*cnt, ccap, ncls);
				(*cnt)[ncls - 1] = 0;
			}
			cid[m++] = tab[h].id;
			(*cnt)[tab[h].id]++;
			if (2 * ncls > cap) { /* keep the table at most half full */
				struct tcls *old = tab;
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
static void ideal_xfers(struct ctx *c)
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
			struct rk *k = &c->k[i];
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
static void build_groups(struct ctx *c)
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
				c->gm[c->g[q].at + c->g[q].n++] = (struct slotm){ (int32_t)i, (int32_t)j };
			}
		}
	par_for(c->nt, c->ng, xfer_task, c);
	ideal_xfers(c);
	/* beside the members, for the replay (arrive): a call's transfers */
	c->gx = xmalloc((total ? total : 1) * sizeof(*c->gx));
	c->gxi = xmalloc((total ? total : 1) * sizeof(*c->gxi));
	c->gmq = xmalloc((total ? total : 1) * sizeof(*c->gmq));
	c->gmsid = xmalloc((total ? total : 1) * sizeof(*c->gmsid));
	c->ngm = total;
	for (size_t i = 0; i < c->n; i++) /* rank by rank: each rank's tables in order */
		for (size_t x = 0; x < c->k[i].ngops; x++) {
			struct rk *k = &c->k[i];
			const struct gcall *g = &k->gc[x];
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

struct skey { int cls; int64_t step; uint32_t hash, occ; int32_t ri, j; };

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
 * it (an incomplete trace: isolate_incomplete): they are no zero-length
 * peers, the ideal comes from the ranks that ran it. */
static int extra_op(size_t n, size_t K)
{
	return 2 * n <= K;
}

/* The medians of slot q (vd, vg: its n members' durations and host gaps),
 * the ranks of its class without the op counted as 0 where it is extra
 * work (extra_op), else over its members only: over the whole class, and
 * the two order statistics that give each member's median over the others
 * (peer_med).  O(K) per slot: only the order statistics around the middle
 * are found. */
static void slot_medians(const struct ctx *c, size_t q, const int64_t *vd, const int64_t *vg, size_t n,
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
		all[q] = V((K - 1) / 2); /* the lower median: stragglers only slow ops down */
		mid[0] = V(lo); /* the lower median of the K - 1 others is V(lo) or V(lo + 1) (peer_med) */
		mid[1] = V(lo + 1);
#undef V
	}
}

/* The median of op j's peers (its slot without itself, the lower median of
 * the K - 1 others): position t = (K - 2) / 2 of the others is V(t) if fewer
 * than t + 1 values are below own, else V(t + 1).  Part 0: duration, 1: host
 * gap; an op without a slot is its own peer. */
static int64_t peer_med(const struct ctx *c, const struct rk *k, size_t j, int part)
{
	int64_t own = part ? k->gap[j] : k->d[j];
	if (k->slot[j] < 0)
		return own;
	const int64_t *mid = &c->mid[4 * (size_t)k->slot[j] + 2 * (size_t)part];
	return mid[0] < own ? mid[0] : mid[1];
}

/* Slots: the same op on the ranks of one work class: (class, step number,
 * name, occurrence of the name in the step).  Per slot the median duration
 * and host gap, and per op its peers' median (the slot without itself). */
/* The occurrence of each op's (step, name) in its rank, in op order (an
 * open-addressing count), into occ[]; ops without a step get UINT32_MAX. */
static void occurrences(const struct rk *k, uint32_t *occ)
{
	size_t cap = 16;
	while (cap < 2 * k->n)
		cap *= 2;
	struct occ { int32_t step; uint32_t hash, n; int used; } *tab = xcalloc(cap, sizeof(*tab));
	for (size_t j = 0; j < k->n; j++) {
		const struct wop *o = &k->r->ops[j];
		occ[j] = UINT32_MAX;
		if (o->step < 0)
			continue;
		size_t h = ((size_t)o->hash * 2654435761u ^ (size_t)o->step * 40503u) & (cap - 1);
		while (tab[h].used && (tab[h].step != o->step || tab[h].hash != o->hash))
			h = (h + 1) & (cap - 1);
		if (!tab[h].used)
			tab[h] = (struct occ){ o->step, o->hash, 0, 1 };
		occ[j] = tab[h].n++;
	}
	free(tab);
}

/* A rank's ops by (step index, name, occurrence): the slots of its class
 * looked up without the global table (ranks of a class mostly run the same
 * ops). */
struct lent { int32_t step, j; uint32_t hash, occ; };
struct ltab { struct lent *e; size_t cap; };

static size_t lhash(int32_t step, uint32_t hash, uint32_t occ, size_t cap)
{
	return ((size_t)hash * 2654435761u ^ (size_t)step * 40503u ^ (size_t)occ * 97u) & (cap - 1);
}

static void ltab_build(struct ltab *t, const struct rk *k, const uint32_t *occ)
{
	t->cap = 16;
	while (t->cap < 2 * k->n)
		t->cap *= 2;
	t->e = xmalloc(t->cap * sizeof(*t->e));
	for (size_t h = 0; h < t->cap; h++)
		t->e[h].j = -1;
	for (size_t j = 0; j < k->n; j++) {
		const struct wop *o = &k->r->ops[j];
		if (o->step < 0)
			continue;
		size_t h = lhash(o->step, o->hash, occ[j], t->cap);
		while (t->e[h].j >= 0)
			h = (h + 1) & (t->cap - 1);
		t->e[h] = (struct lent){ o->step, (int32_t)j, o->hash, occ[j] };
	}
}

/* Rank k's ops as ops of the rank t was built from (same step numbers at the
 * same indices): map[j] its op there, -1 without a step; 0 when one has no
 * match (then the keys are compared across ranks). */
static int ltab_map(const struct ltab *t, const struct rk *ref, const struct rk *k, const uint32_t *occ,
		    int32_t *map)
{
	if (ref->r->nsteps != k->r->nsteps)
		return 0;
	for (size_t q = 0; q < k->r->nsteps; q++)
		if (ref->r->steps[q].number != k->r->steps[q].number)
			return 0;
	for (size_t j = 0; j < k->n; j++) {
		const struct wop *o = &k->r->ops[j];
		map[j] = -1;
		if (o->step < 0)
			continue;
		size_t h = lhash(o->step, o->hash, occ[j], t->cap);
		for (; t->e[h].j >= 0; h = (h + 1) & (t->cap - 1))
			if (t->e[h].step == o->step && t->e[h].hash == o->hash && t->e[h].occ == occ[j])
				break;
		if (t->e[h].j < 0)
			return 0;
		map[j] = t->e[h].j;
	}
	return 1;
}

/* Slot ids of the keyed ops v[0..m) by hashing (class, step, name,
 * occurrence), in the order of v. */
static void slot_hash(struct ctx *c, const struct skey *v, size_t m)
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
			const struct skey *y = &v[tab[h]];
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

/* The ranks of each class that run its first rank's ops (ranks in
 * parallel: each writes its own slot[] and mapped[i]): mapped[i] = 1 and
 * slot[] holding the first rank's op; any other keeps slot[] at -1. */
struct mapjob { struct ctx *c; const int32_t *first; const struct ltab *lt; uint8_t *mapped; };

static void map_task(void *arg, size_t w, size_t i)
{
	(void)w;
	struct mapjob *m = arg;
	struct rk *k = &m->c->k[i];
	int32_t f = m->first[k->cls];
	if (m->c->csize[k->cls] < 2 || f < 0 || (size_t)f == i)
		return;
	uint32_t *occ = xmalloc((k->n ? k->n : 1) * sizeof(*occ));
	occurrences(k, occ);
	const struct rk *fk = &m->c->k[f];
	m->mapped[i] = (uint8_t)ltab_map(&m->lt[k->cls], fk, k, occ, k->slot);
	if (!m->mapped[i])
		for (size_t j = 0; j < k->n; j++)
			k->slot[j] = -1;
	if (m->mapped[i]) { /* per op of the first rank, this rank's op */
		int32_t *inv = xmalloc((fk->n ? fk->n : 1) * sizeof(*inv));
		for (size_t x = 0; x < fk->n; x++)
			inv[x] = -1;
		for (size_t j = 0; j < k->n; j++)
			if (k->slot[j] >= 0)
				inv[k->slot[j]] = (int32_t)j;
		m->c->inv[i] = inv;
	}
	free(occ);
}

/* A mapped rank's slots: its first rank's op's (ranks in parallel). */
static void slot_of_first_task(void *arg, size_t w, size_t i)
{
	(void)w;
	struct mapjob *m = arg;
	struct rk *k = &m->c->k[i];
	if (!m->mapped[i])
		return;
	const int32_t *fs = m->c->k[m->first[k->cls]].slot;
	for (size_t j = 0; j < k->n; j++)
		if (k->slot[j] >= 0)
			k->slot[j] = fs[k->slot[j]];
}

/* The ranks of each work class (crank, cr0) and which classes are aligned:
 * two or more ranks, each its first rank or one whose every op the first
 * rank runs (mapped); an aligned class's slot q is the first rank's op
 * sj[q], on another rank its op inv[sj[q]], so its members need no list. */
static void align_classes(struct ctx *c, const int32_t *first, const uint8_t *mapped)
{
	c->calign = xcalloc(c->n + 1, 1);
	c->cr0 = xcalloc(c->n + 2, sizeof(*c->cr0));
	c->crank = xmalloc((c->n ? c->n : 1) * sizeof(*c->crank));
	for (size_t q = 0; q <= c->n; q++)
		c->calign[q] = c->csize[q] >= 2;
	for (size_t i = 0; i < c->n; i++) {
		int cl = c->k[i].cls;
		if (first[cl] != (int32_t)i && !mapped[i])
			c->calign[cl] = 0;
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

/* Slot ids: per class, its first rank's ops by key; a rank whose every op
 * is there takes that op's slot; the other ranks' keys are hashed. */
static void slot_keys(struct ctx *c)
{
	int32_t *first = xmalloc((c->n + 1) * sizeof(*first));
	uint8_t *mapped = xcalloc(c->n ? c->n : 1, 1);
	struct ltab *lt = xcalloc(c->n + 1, sizeof(*lt));
	size_t nmax = 1;
	for (size_t i = 0; i < c->n; i++)
		if (c->k[i].n > nmax)
			nmax = c->k[i].n;
	uint32_t *occ = xmalloc(nmax * sizeof(*occ));
	for (size_t q = 0; q <= c->n; q++)
		first[q] = -1;
	for (size_t i = 0; i < c->n; i++) {
		struct rk *k = &c->k[i];
		if (c->csize[k->cls] < 2 || first[k->cls] >= 0) /* a rank alone in its class has no peers */
			continue;
		occurrences(k, occ);
		first[k->cls] = (int32_t)i;
		ltab_build(&lt[k->cls], k, occ);
	}
	c->inv = xcalloc(c->n ? c->n : 1, sizeof(*c->inv));
	struct mapjob mj = { c, first, lt, mapped };
	par_for(c->nt, c->n, map_task, &mj);
	align_classes(c, first, mapped);
	size_t total = 0;
	for (size_t i = 0; i < c->n; i++) {
		struct rk *k = &c->k[i];
		if (mapped[i] || c->csize[k->cls] < 2)
			continue;
		for (size_t j = 0; j < k->n; j++) {
			k->slot[j] = -1;
			total += k->r->ops[j].step >= 0;
		}
	}
	struct skey *v = xmalloc((total ? total : 1) * sizeof(*v));
	size_t m = 0;
	for (size_t i = 0; i < c->n; i++) {
		struct rk *k = &c->k[i];
		if (mapped[i] || c->csize[k->cls] < 2)
			continue;
		occurrences(k, occ);
		for (size_t j = 0; j < k->n; j++)
			if (k->r->ops[j].step >= 0)
				v[m++] = (struct skey){ k->cls, k->r->steps[k->r->ops[j].step].number, k->r->ops[j].hash,
							occ[j], (int32_t)i, (int32_t)j };
	}
	slot_hash(c, v, m);
	free(v);
	par_for(c->nt, c->n, slot_of_first_task, &mj);
	for (size_t q = 0; q <= c->n; q++)
		free(lt[q].e);
	free(lt);
	free(occ);
	free(first);
	free(mapped);
}

#define SLOT_BLOCK 64 /* ops of each rank in turn while the members are written */

/* Each slot's members contiguous in sm (in no particular order: only their
 * order statistics are read), their durations and host gaps beside in sd
 * and sg.  Written SLOT_BLOCK ops of every rank in turn: the ranks of a
 * class run their slots in nearly the same order, so the writes of a block
 * stay in a few cache lines per slot.  Returns the largest slot or class. */
static size_t slot_members(struct ctx *c)
{
	size_t ns = c->nslot ? c->nslot : 1, m = 0, nmax = 0;
	c->sat = xmalloc(ns * sizeof(*c->sat));
	c->sn = xcalloc(ns, sizeof(*c->sn));
	c->scls = xmalloc(ns * sizeof(*c->scls));
	c->sj = xmalloc(ns * sizeof(*c->sj));
	for (size_t i = 0; i < c->n; i++) {
		const struct rk *k = &c->k[i];
		int al = c->calign[k->cls];
		for (size_t j = 0; j < k->n; j++) {
			int32_t q = k->slot[j];
			if (q < 0)
				continue;
			c->scls[q] = k->cls;
			if (al) { /* its first rank's op (the first writes it) */
				if (c->crank[c->cr0[k->cls]] == (int32_t)i)
					c->sj[q] = (int32_t)j;
				continue;
			}
			c->sj[q] = -1;
			c->sn[q]++;
			m++;
		}
		if (!al && k->n > nmax)
			nmax = k->n;
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
	for (size_t j0 = 0; j0 < nmax; j0 += SLOT_BLOCK)
		for (size_t i = 0; i < c->n; i++) {
			const struct rk *k = &c->k[i];
			size_t j1 = j0 + SLOT_BLOCK < k->n ? j0 + SLOT_BLOCK : k->n;
			if (c->calign[k->cls])
				continue;
			for (size_t j = j0; j < j1; j++) {
				int32_t q = k->slot[j];
				if (q < 0)
					continue;
				size_t x = c->sat[q] + c->sn[q]++;
				c->sm[x] = (struct slotm){ (int32_t)i, (int32_t)j };
				c->sd[x] = k->d[j];
				c->sg[x] = k->gap[j];
			}
		}
	for (size_t x = 0; x < c->n; x++)
		if (c->csize[c->k[x].cls] > kmax)
			kmax = c->csize[c->k[x].cls];
	return kmax;
}

#define MED_BLOCK 256 /* slots per task of slot_medians */
#define ALIGN_BLOCK 32 /* ops of an aligned class per task (its values gathered rank by rank) */

/* Tasks: MED_BLOCK slots kept in sm each, then ALIGN_BLOCK ops of the
 * first rank of each aligned class (cls[], j0[] per task). */
struct medjob { struct ctx *c; size_t kmax, nsm; int32_t *cls; size_t *j0; };

static void med_task(void *arg, size_t w, size_t b)
{
	(void)w;
	struct medjob *mj = arg;
	const struct ctx *c = mj->c;
	int64_t *tmp = xmalloc(mj->kmax * sizeof(*tmp));
	if (b < mj->nsm) {
		for (size_t q = b * MED_BLOCK; q < (b + 1) * MED_BLOCK && q < c->nslot; q++)
			if (c->sj[q] < 0)
				slot_medians(c, q, c->sd + c->sat[q], c->sg + c->sat[q], c->sn[q], tmp);
		free(tmp);
		return;
	}
	/* an aligned class: its ranks' values of ALIGN_BLOCK ops of the first
	 * rank, rank by rank (each rank's ops in nearly the same order) */
	size_t cl = (size_t)mj->cls[b - mj->nsm], j0 = mj->j0[b - mj->nsm], K = c->cr0[cl + 1] - c->cr0[cl];
	int32_t fi = c->crank[c->cr0[cl]];
	const struct rk *f = &c->k[fi];
	size_t nb = f->n - j0 < ALIGN_BLOCK ? f->n - j0 : ALIGN_BLOCK, cnt[ALIGN_BLOCK] = { 0 };
	int64_t *v = xmalloc(2 * nb * K * sizeof(*v));
	for (size_t r = 0; r < K; r++) {
		int32_t i = c->crank[c->cr0[cl] + r];
		const struct rk *k = &c->k[i];
		for (size_t x = 0; x < nb; x++) {
			int32_t j = i == fi ? (int32_t)(j0 + x) : c->inv[i][j0 + x];
			if (j < 0)
				continue;
			v[x * K + cnt[x]] = k->d[j];
			v[(nb + x) * K + cnt[x]++] = k->gap[j];
		}
	}
	for (size_t x = 0; x < nb; x++)
		if (f->slot[j0 + x] >= 0)
			slot_medians(c, (size_t)f->slot[j0 + x], v + x * K, v + (nb + x) * K, cnt[x], tmp);
	free(v);
	free(tmp);
}

static void build_slots(struct ctx *c)
{
	slot_keys(c);
	size_t kmax = slot_members(c);
	c->med_all_d = xmalloc((c->nslot ? c->nslot : 1) * sizeof(int64_t));
	c->med_all_g = xmalloc((c->nslot ? c->nslot : 1) * sizeof(int64_t));
	c->mid = xmalloc((c->nslot ? c->nslot : 1) * 4 * sizeof(int64_t));
	struct medjob mj = { c, kmax, (c->nslot + MED_BLOCK - 1) / MED_BLOCK, NULL, NULL };
	size_t na = 0, cap = 0, cap2 = 0;
	for (size_t cl = 0; cl <= c->n; cl++)
		for (size_t j0 = 0; c->calign[cl] && j0 < c->k[c->crank[c->cr0[cl]]].n; j0 += ALIGN_BLOCK) {
			GROW(mj.cls, cap, na + 1);
			GROW(mj.j0, cap2, na + 1);
			mj.cls[na] = (int32_t)cl;
			mj.j0[na++] = j0;
		}
	par_for(c->nt, mj.nsm + na, med_task, &mj);
	free(mj.cls);
	free(mj.j0);
}

/* ---- one replay ------------------------------------------------------------------ */

/* The ideal duration and gap of the ops of set-fixed ranks: per slot, the
 * median over its members outside the set (the whole slot when none), the
 * outside ranks without the op counted as 0 where it is extra work
 * (extra_op). */
static void set_medians(const struct ctx *c, size_t *cmask, const uint8_t *mask, int64_t *md, int64_t *mg)
{
	int64_t *t1 = NULL, *t2 = NULL;
	size_t cap = 0;
	memset(cmask, 0, (c->n + 1) * sizeof(*cmask));
	for (size_t i = 0; i < c->n; i++)
		cmask[c->k[i].cls] += mask[i] != 0;
	for (size_t q = 0; q < c->nslot; q++) {
		size_t at = c->sat[q], n = c->sn[q], m = 0, cl = (size_t)c->scls[q];
		size_t kc = c->csize[cl];
		if (kc > n)
			n = kc; /* room for the zeros */
		if (n > cap) {
			cap = n;
			t1 = xrealloc(t1, cap * sizeof(*t1));
			t2 = xrealloc(t2, cap * sizeof(*t2));
		}
		size_t members = 0; /* in and outside the set */
		for (size_t x = 0; x < c->sn[q]; x++) {
			members++;
			if (!mask[c->sm[at + x].ri]) {
				t1[m] = c->sd[at + x];
				t2[m++] = c->sg[at + x];
			}
		}
		for (size_t x = c->cr0[cl]; c->sj[q] >= 0 && x < c->cr0[cl + 1]; x++) { /* an aligned class's slot */
			int32_t i = c->crank[x], j = x == c->cr0[cl] ? c->sj[q] : c->inv[i][c->sj[q]];
			members += j >= 0;
			if (j >= 0 && !mask[i]) {
				t1[m] = c->k[i].d[j];
				t2[m++] = c->k[i].gap[j];
			}
		}
		size_t out = c->csize[cl] - cmask[cl];
		for (; extra_op(members, kc) && m < out && m < cap; m++) /* outside ranks without the op: 0 */
			t1[m] = t2[m] = 0;
		md[q] = m ? median_i64(t1, m) : c->med_all_d[q];
		mg[q] = m ? median_i64(t2, m) : c->med_all_g[q];
	}
	free(t1);
	free(t2);
}

struct akey { int cls; int64_t step, a0; int32_t i; };

static int cmp_akey(const void *x, const void *y)
{
	const struct akey *p = x, *q = y;
	if (p->cls != q->cls)
		return p->cls - q->cls;
	if (p->step != q->step)
		return (p->step > q->step) - (p->step < q->step);
	if (p->a0 != q->a0)
		return (p->a0 > q->a0) - (p->a0 < q->a0);
	return p->i - q->i;
}

/* The end of the anchor group that starts at c->aord[a]. */
static size_t anchor_group(const struct ctx *c, size_t a)
{
	const struct rk *f = &c->k[c->aord[a]];
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
static void build_anchors(struct ctx *c)
{
	struct akey *v = xmalloc((c->n ? c->n : 1) * sizeof(*v));
	size_t m = 0;
	for (size_t i = 0; i < c->n; i++)
		if (c->k[i].a0 != UNSET)
			v[m++] = (struct akey){ c->k[i].cls, c->k[i].astep, c->k[i].a0, (int32_t)i };
	qsort(v, m, sizeof(*v), cmp_akey);
	c->aord = xmalloc((m ? m : 1) * sizeof(*c->aord));
	for (size_t q = 0; q < m; q++)
		c->aord[q] = v[q].i;
	c->naord = m;
	free(v);
	for (size_t a = 0, b; a < c->naord; a = b) {
		b = anchor_group(c, a);
		size_t K = b - a, t = K >= 2 ? (K - 2) / 2 : 0;
		for (size_t p = a; K >= 2 && p < b; p++) /* the others' lower median: position t of them */
			c->k[c->aord[p]].ma0 = c->k[c->aord[a + (p - a > t ? t : t + 1)]].a0;
	}
}

/* The anchors' ideal for scenario sc into each rank's a2 of lane v (fixing
 * never makes a first launch later); returns how many moved. */
static size_t fill_anchors(const struct ctx *c, struct wst *s, size_t v0, const struct scen *sc)
{
	size_t changed = 0;
	for (size_t i = 0; i < c->n; i++)
		s->k[i].a2[v0] = c->k[i].a0;
	for (size_t a = 0, b; a < c->naord; a = b) {
		b = anchor_group(c, a);
		size_t K = b - a, out = 0;
		int64_t all = c->k[c->aord[a + (K - 1) / 2]].a0, set = all;
		if (sc->type == SC_SET && sc->single < 0) { /* the lower median of the ranks outside the set */
			for (size_t p = a; p < b; p++)
				out += !sc->mask[c->aord[p]];
			for (size_t p = a, m = 0; out && p < b; p++)
				if (!sc->mask[c->aord[p]] && m++ == (out - 1) / 2)
					set = c->k[c->aord[p]].a0;
		}
		for (size_t p = a; p < b; p++) {
			const struct rk *k = &c->k[c->aord[p]];
			int64_t v = k->a0;
			if (sc->type == SC_ALL || (sc->type == SC_CAT && sc->cat == WC_HOST))
				v = all;
			else if (sc->type == SC_SET && sc->mask[c->aord[p]] && (sc->part & PART_HOST))
				v = sc->single >= 0 ? k->ma0 : set;
			if (v < k->a0) {
				s->k[c->aord[p]].a2[v0] = v;
				changed++;
			}
		}
	}
	return changed;
}

/* Whether scenario sc changes rank i's ops at all (else they replay as
 * measured). */
static int rank_fixed(const struct ctx *c, const struct scen *sc, size_t i)
{
	switch (sc->type) {
	case SC_ALL: case SC_CAT: return 1;
	case SC_SET: return sc->mask[i] != 0;
	case SC_BAL: return c->bal != NULL;
	default: return 0;
	}
}

/* The duration of op j (not a matched call) of fixed rank i under
 * scenario sc (md: the set's medians): the ideal the scenario gives it,
 * at most what it took (but for the stage balance, which moves work). */
static int64_t dur_fixed(const struct ctx *c, const struct scen *sc, const int64_t *md, const struct rk *k,
			 size_t i, size_t j)
{
	int64_t d = k->d[j], d2 = d;
	int32_t q = k->slot[j];
	if (k->cat[j] >= WC_UCOLL)
		return d; /* unmatched communication: no ideal (enum wcat) */
	switch (sc->type) {
	case SC_ALL:
		if (q >= 0)
			d2 = c->med_all_d[q];
		break;
	case SC_CAT: /* an op type's compute or copies (a transfer: op_xfer; host gaps: op_gap) */
		if (sc->cat == k->cat[j] && sc->cat != WC_HOST && sc->cat < WC_COLL && q >= 0)
			d2 = c->med_all_d[q];
		break;
	case SC_BAL:
		return c->bal[i][j];
	case SC_SET:
		if (sc->part & PART_DUR)
			d2 = sc->single >= 0 ? peer_med(c, k, j, 0) : q >= 0 ? md[q] : d;
		break;
	default:
		break;
	}
	return d2 < d ? d2 : d; /* fixing never makes an op slower */
}

/* The host gap before op j (launch known) of fixed rank i under sc. */
static int64_t gap_fixed(const struct ctx *c, const struct scen *sc, const int64_t *mg, const struct rk *k,
			 size_t j)
{
	int64_t g = k->gap[j];
	int32_t q = k->slot[j];
	switch (sc->type) {
	case SC_ALL:
		return q >= 0 ? c->med_all_g[q] : g;
	case SC_CAT:
		return sc->cat == WC_HOST && q >= 0 ? c->med_all_g[q] : g;
	case SC_SET:
		if (sc->part & PART_HOST)
			return sc->single >= 0 ? peer_med(c, k, j, 1) : q >= 0 ? mg[q] : g;
		return g;
	default:
		return g;
	}
}

/* The transfer of a matched call whose measured transfer is xm and ideal
 * xi (op j of rank k) under sc: its type's ideal when the scenario fixes
 * transfers of its type (at most xm). */
static inline int64_t xfer_of(const struct scen *sc, const struct rk *k, size_t j, int64_t xm, int64_t xi)
{
	if (sc->type == SC_ALL || (sc->type == SC_CAT && sc->cat >= WC_COLL && sc->cat == k->cat[j]))
		return xi < xm ? xi : xm;
	return xm;
}

/* In lane v of worker state s's replay (its scenario s->sc[v]): the
 * duration of op j of rank i (not a matched call), its host gap (launch
 * known) and the transfer of matched call m (index as c->gm). */
static inline int64_t op_dur(const struct ctx *c, const struct wst *s, size_t v, size_t i, size_t j)
{
	const struct rk *k = &c->k[i];
	return s->k[i].fix >> v & 1 ? dur_fixed(c, &s->sc[v], s->md[v], k, i, j) : k->d[j];
}

static inline int64_t op_gap(const struct ctx *c, const struct wst *s, size_t v, size_t i, size_t j)
{
	const struct rk *k = &c->k[i];
	return s->k[i].fix >> v & 1 ? gap_fixed(c, &s->sc[v], s->mg[v], k, j) : k->gap[j];
}

static inline int64_t op_xfer(const struct ctx *c, const struct wst *s, size_t v, size_t m)
{
	struct slotm u = c->gm[m];
	return s->k[u.ri].fix >> v & 1 ? xfer_of(&s->sc[v], &c->k[u.ri], (size_t)u.j, c->gx[m], c->gxi[m])
				       : c->gx[m];
}

/* Whether fixed rank i has an op whose duration, host gap or (a matched
 * call) transfer the scenario of lane v changes. */
static int rank_changes(const struct ctx *c, const struct wst *s, size_t v, size_t i)
{
	const struct rk *k = &c->k[i];
	const struct scen *sc = &s->sc[v];
	for (size_t j = 0; j < k->n; j++) {
		if (dur_fixed(c, sc, s->md[v], k, i, j) != k->d[j])
			return 1;
		if (k->o[j].hasl && gap_fixed(c, sc, s->mg[v], k, j) != k->gap[j])
			return 1;
	}
	for (size_t x = 0; x < k->ngops; x++) {
		const struct gcall *g = &k->gc[x];
		if (c->g[g->grp].n < 2) /* a plain op (build_groups) */
			continue;
		int64_t xm = k->x[g->inst];
		if (xfer_of(sc, k, (size_t)g->j, xm, k->xi[g->inst]) != xm)
			return 1;
	}
	return 0;
}

/* Sets scenario sc in lane v of worker state s (the set's medians, each
 * rank's anchor and whether the scenario fixes it); returns whether any
 * value differs from the measured ones (0: the replay would be the
 * unmodified one). */
static int set_scen(const struct ctx *c, struct wst *s, size_t v, const struct scen *sc)
{
	s->sc[v] = *sc;
	free(s->md[v]);
	free(s->mg[v]);
	s->md[v] = s->mg[v] = NULL;
	if (sc->type == SC_SET && sc->single < 0) {
		s->md[v] = xmalloc((c->nslot ? c->nslot : 1) * sizeof(int64_t));
		s->mg[v] = xmalloc((c->nslot ? c->nslot : 1) * sizeof(int64_t));
		set_medians(c, s->cmask, sc->mask, s->md[v], s->mg[v]);
	}
	int changed = fill_anchors(c, s, v, sc) > 0;
	for (size_t i = 0; i < c->n; i++) {
		unsigned f = (unsigned)rank_fixed(c, sc, i);
		s->k[i].fix = (s->k[i].fix & ~(1u << v)) | f << v;
		if (f && !changed)
			changed = rank_changes(c, s, v, i);
	}
	return changed;
}

static void lft_free(const struct ctx *c, struct wst *s)
{
	for (size_t i = 0; s->lft && i < c->n; i++)
		free(s->lft[i]);
	free(s->lft);
	s->lft = NULL;
}

static void push(struct wst *s, size_t i)
{
	if (s->k[i].inq)
		return;
	s->k[i].inq = 1;
	s->stack[s->nstack++] = (int32_t)i;
}

/* Op j of rank k (its replay state z) has its end in every lane: its
 * step's barrier moves. */
static void ended(const struct rk *k, const struct wst *s, struct rst *z, int32_t j)
{
	int32_t q = k->o[j].step;
	if (q < 0 || (size_t)q >= k->nbs)
		return;
	size_t K = s->K;
	z->brem[q]--;
	for (size_t v = 0; v < K; v++) {
		struct bst *b = &z->b[(size_t)q * K + v];
		int64_t E = z->o[(size_t)j * K + v].E;
		if (E > b->bE || (E == b->bE && j < b->wlast)) {
			b->bE = E;
			b->wlast = j; /* the first op (in op order) with the latest end, as windows() */
		}
	}
}

/* A call of a matched collective started at S[v] (per lane): when its last
 * call has, every call ends at the last arrival plus its transfer. */
static void arrive(const struct ctx *c, struct wst *s, size_t i, int32_t j, const int64_t *S)
{
	size_t K = s->K, m0 = (size_t)c->k[i].o[j].grp, q = (size_t)c->gmq[m0];
	struct cgrp *g = &s->g[q];
	struct glast *gl = &s->gl[q * K];
	g->arrived++;
	for (size_t v = 0; v < K; v++) {
		s->gs[m0 * K + v] = S[v];
		if (S[v] > gl[v].s || gl[v].r < 0)
			gl[v] = (struct glast){ S[v], (int32_t)i, j };
	}
	if (g->arrived < g->n)
		return;
	for (size_t m = 0; m < g->n; m++) {
		struct slotm u = c->gm[g->at + m];
		struct rst *z = &s->k[u.ri];
		/* the op after it on its stream is what the rank's replay reads next:
		 * fetched now, while the other calls end (the ranks' ops are far apart) */
		int32_t nx = c->k[u.ri].o[u.j].snext;
		if (nx >= 0) {
			__builtin_prefetch(&c->k[u.ri].o[nx]);
			__builtin_prefetch(&z->o[(size_t)nx * K]);
		}
		__builtin_prefetch(z->head);
		struct rop *o = &z->o[(size_t)u.j * K];
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
static inline int op_ended(const struct rst *z, int32_t d, size_t q)
{
	int32_t h = z->head[q];
	return h < 0 || h > d || (h == d && z->hst[q] == 1);
}

/* The start of op j, the head of stream q, once what it waits for is
 * known (in every lane at once: whether it is known does not depend on
 * the lane); 0 when not yet. */
static int try_start(const struct ctx *c, struct wst *s, size_t i, int32_t j, size_t q)
{
	const struct rk *k = &c->k[i];
	struct rst *z = &s->k[i];
	const struct sop *p = &k->o[j];
	size_t K = s->K;
	struct rop *oj = &z->o[(size_t)j * K];
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
		const struct bst *b = &z->b[(size_t)(p->step - 1) * K];
		for (size_t v = 0; v < K; v++)
			if (b[v].bE > ready[v])
				ready[v] = b[v].bE;
	}
	if (p->dep >= 0) {
		const struct rop *d = &z->o[(size_t)p->dep * K];
		if (!op_ended(z, p->dep, p->dsid))
			return 0;
		for (size_t v = 0; v < K; v++)
			if (d[v].E > ready[v])
				ready[v] = d[v].E;
	}
	int64_t lat = op_lat(k, p, (size_t)j);
	struct bst *b = p->step >= 0 && (size_t)p->step < k->nbs ? &z->b[(size_t)p->step * K] : NULL;
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
static void advance(const struct ctx *c, struct wst *s, size_t i)
{
	const struct rk *k = &c->k[i];
	struct rst *z = &s->k[i];
	size_t K = s->K;
	for (int prog = 1; prog;) {
		prog = 0;
		while (z->hp < k->nh) {
			int32_t j = k->hl[z->hp].j, h = k->hl[z->hp].hdep;
			if (h >= 0 && !op_ended(z, h, k->hl[z->hp].hsid))
				break; /* after a sync: the op waited for, then the host's own time */
			struct rop *oj = &z->o[(size_t)j * K];
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
				const struct rop *oj = &z->o[(size_t)j * K];
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
static void prefetch_rank(const struct ctx *c, const struct wst *s, size_t i)
{
	const struct rk *k = &c->k[i];
	const struct rst *z = &s->k[i];
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
static size_t replay(const struct ctx *c, struct wst *s)
{
	size_t K = s->K;
	for (size_t q = 0; q < c->ng; q++) {
		s->g[q].arrived = 0;
		for (size_t v = 0; v < K; v++)
			s->gl[q * K + v] = (struct glast){ INT64_MIN, -1, -1 };
	}
	s->nstack = 0;
	for (size_t i = 0; i < c->n; i++) {
		const struct rk *k = &c->k[i];
		struct rst *z = &s->k[i];
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
				z->b[q * K + v] = (struct bst){ INT64_MAX, 0, UNSET, -1 };
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
		const struct rk *k = &c->k[i];
		struct rst *z = &s->k[i];
		for (size_t q = 0; q < k->nstr; q++)
			for (int32_t j = z->head[q]; j >= 0; j = k->o[j].snext) {
				left++;
				int unl = k->o[j].hasl && (size_t)k->hpos[j] >= z->hp; /* never launched */
				for (size_t v = 0; v < K; v++) { /* not replayed: left where it was */
					struct rop *o = &z->o[(size_t)j * K + v];
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
		const struct rk *k = &c->k[i];
		const struct rst *z = &s->k[i];
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
static int64_t op_start(const struct ctx *c, const struct wst *w, size_t v, size_t i, size_t j)
{
	const struct rk *k = &c->k[i];
	if (w->lft && w->lft[i][j])
		return meas_s(k, j);
	int32_t m = k->o[j].grp;
	if (m >= 0)
		return w->gs[(size_t)m * w->K + v];
	return w->k[i].o[j * w->K + v].E - op_dur(c, w, v, i, j);
}

/* Step windows as analysis_rank cuts them, from each step's first start
 * (ws) and latest end (last): to the next step's first start (the last
 * step: to its last end). */
static void cut_windows(size_t ns, int64_t *ws, int64_t *we, const int64_t *last)
{
	for (size_t q = 0; q < ns; q++) {
		we[q] = q + 1 < ns ? ws[q + 1] : last[q];
		if (ws[q] == INT64_MAX)
			ws[q] = we[q] = 0;
		if (we[q] < ws[q])
			we[q] = ws[q];
	}
}

/* cut_windows of lane v of a replay (K lanes): from each step's first
 * start (ws) and latest end (bE). */
static void cut_replay(size_t ns, struct bst *b, size_t K, size_t v)
{
	for (size_t q = 0; q < ns; q++) {
		struct bst *x = &b[q * K + v];
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
static void windows(const struct ctx *c, const struct wst *s, size_t i, size_t v)
{
	const struct rk *k = &c->k[i];
	struct rst *z = &s->k[i];
	size_t ns = k->r->nsteps, K = s->K;
	for (size_t q = 0; q < ns; q++) {
		struct bst *b = &z->b[q * K + v];
		b->ws = INT64_MAX;
		b->bE = INT64_MIN;
		b->wlast = -1;
	}
	for (size_t j = 0; j < k->n; j++) {
		int32_t q = k->r->ops[j].step;
		if (q < 0)
			continue;
		struct bst *b = &z->b[(size_t)q * K + v];
		const struct rop *o = &z->o[j * K + v];
		int64_t S = op_start(c, s, v, i, j);
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
static double job_step(const struct ctx *c, const struct wst *w, size_t v, size_t s)
{
	double sum = 0;
	for (size_t i = 0; i < c->n; i++) {
		int32_t q = c->sidx[i][s];
		const struct bst *b = w ? &w->k[i].b[(size_t)q * w->K + v] : NULL;
		sum += w ? (double)(b->we - b->ws) : (double)(c->k[i].mwe[q] - c->k[i].mws[q]);
	}
	return sum / (double)c->n;
}

/* Replays the scenarios sc[0..n) (n <= the worker's lanes) in worker state
 * s at once, each one's per-step job times (ms) into out[x]; replayed[x]
 * 0 where scenario x changes nothing and the unmodified replay is known
 * (its steps copied), else 1 with its lane in lane[x] (for work_ends,
 * cp_walk).  Returns the ops the replay left (0 when none replayed). */
static size_t replay_lanes(const struct ctx *c, struct wst *s, size_t n, const struct scen *sc, double **out,
			   int *replayed, size_t *lane)
{
	size_t K = 0;
	for (size_t x = 0; x < n; x++) {
		replayed[x] = 0;
		if (!set_scen(c, s, K, &sc[x]) && c->rep) { /* nothing to change: the unmodified replay's steps */
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
			out[x][q] = job_step(c, s, lane[x], q) / 1e6;
	}
	return left;
}

/* The latest end of each common step's ops over the ranks (ms, aligned
 * clock), from lane v of worker state w's last replay. */
static void work_ends(const struct ctx *c, const struct wst *w, size_t v, double *out)
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

/* ---- the critical path ------------------------------------------------------------ */

struct cpent { int32_t ri, stream; int cat; int64_t ns; };
struct cptab { struct cpent *e; size_t n, cap; int64_t total; };

static void cp_add(struct cptab *t, int32_t ri, int32_t stream, int cat, int64_t ns)
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
	t->e[t->n++] = (struct cpent){ ri, stream, cat, ns };
}

/* Op j of rank i in lane v of worker state s's last replay. */
static inline const struct rop *lop(const struct wst *s, size_t i, size_t j, size_t v)
{
	return &s->k[i].o[j * s->K + v];
}

/* Host launches before op j back to t0 (or to the op a sync waited for),
 * lane v: returns that op (-1: the walk ends on the host). */
static int32_t cp_host(const struct ctx *c, const struct wst *s, size_t v, size_t i, int32_t j, int64_t t0,
			struct cptab *t, int64_t *at)
{
	const struct rk *k = &c->k[i];
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
static void cp_walk(const struct ctx *c, const struct wst *w, size_t v, size_t s, struct cptab *t)
{
	int64_t t0 = INT64_MAX, tend = INT64_MIN;
	size_t i = 0, K = w->K;
	int32_t j = -1;
	for (size_t r = 0; r < c->n; r++) {
		const struct bst *b = &w->k[r].b[(size_t)c->sidx[r][s] * K + v];
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
		const struct rk *k = &c->k[i];
		if (k->o[j].grp >= 0) { /* the transfer, then the last arrival's start */
			const struct glast *g = &w->gl[(size_t)c->gmq[k->o[j].grp] * K + v];
			cp_add(t, (int32_t)i, k->r->ops[j].stream, k->cat[j], at - (g->s > t0 ? g->s : t0));
			i = (size_t)g->r;
			j = g->o;
			k = &c->k[i];
			at = g->s;
		} else {
			int64_t S = op_start(c, w, v, i, (size_t)j);
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

/* ---- stages, replicas and the common steps ------------------------------------------ */

static int rank_index(const struct analysis *a, int rank)
{
	size_t lo = 0, hi = a->n; /* a->r is sorted by rank */
	while (lo < hi) {
		size_t m = (lo + hi) / 2;
		if (a->r[m].rank < rank)
			lo = m + 1;
		else
			hi = m;
	}
	return lo < a->n && a->r[lo].rank == rank ? (int)lo : -1;
}

/* Pipeline stages from the send/recv peers: the ranks linked by them are
 * one replica; in each, the stage of a rank is its distance from the
 * replica's end rank (one peer) with the lowest rank, else from its lowest
 * rank.  stage[i] = -1 and replica[i] = -1 without point to point.
 * Returns the number of stages. */
static int find_stages(const struct analysis *a, int *stage, int *replica)
{
	int nst = 0, nrep = 0;
	int32_t *queue = xmalloc((a->n ? a->n : 1) * sizeof(*queue));
	for (size_t i = 0; i < a->n; i++)
		stage[i] = replica[i] = -1;
	for (size_t i = 0; i < a->n; i++) {
		if (replica[i] >= 0 || !a->r[i].npeers)
			continue;
		size_t qn = 0; /* the component, breadth first from i */
		queue[qn++] = (int32_t)i;
		replica[i] = nrep;
		for (size_t h = 0; h < qn; h++)
			for (size_t p = 0; p < a->r[queue[h]].npeers; p++) {
				int x = rank_index(a, a->r[queue[h]].peers[p]);
				if (x >= 0 && replica[x] < 0) {
					replica[x] = nrep;
					queue[qn++] = x;
				}
			}
		int32_t root = queue[0];
		for (size_t h = 0; h < qn; h++)
			if (a->r[queue[h]].npeers == 1 && (a->r[root].npeers != 1 || queue[h] < root))
				root = queue[h];
		qn = 0;
		queue[qn++] = root;
		stage[root] = 0;
		for (size_t h = 0; h < qn; h++)
			for (size_t p = 0; p < a->r[queue[h]].npeers; p++) {
				int x = rank_index(a, a->r[queue[h]].peers[p]);
				if (x >= 0 && stage[x] < 0 && replica[x] == nrep) {
					stage[x] = stage[queue[h]] + 1;
					if (stage[x] + 1 > nst)
						nst = stage[x] + 1;
					queue[qn++] = x;
				}
			}
		nrep++;
	}
	free(queue);
	return nst;
}

/* Step numbers every rank has, the first `skip` left out (none left out
 * when that would leave none); per rank the index of each in its steps. */
static void common_steps(struct ctx *c, int skip)
{
	const struct rank_result *r0 = &c->a->r[0];
	c->stepno = xmalloc((r0->nsteps ? r0->nsteps : 1) * sizeof(*c->stepno));
	c->sidx = xcalloc(c->n, sizeof(*c->sidx));
	for (size_t i = 0; i < c->n; i++)
		c->sidx[i] = xmalloc((r0->nsteps ? r0->nsteps : 1) * sizeof(int32_t));
	size_t m = 0;
	for (size_t q = 0; q < r0->nsteps; q++) {
		int64_t num = r0->steps[q].number;
		int all = 1;
		for (size_t i = 0; i < c->n && all; i++) {
			const struct rank_result *r = &c->a->r[i];
			int found = -1;
			for (size_t x = 0; x < r->nsteps && found < 0; x++)
				if (r->steps[x].number == num)
					found = (int)x;
			all = found >= 0;
			c->sidx[i][m] = found;
		}
		if (all)
			c->stepno[m++] = num;
	}
	size_t k0 = skip > 0 && (size_t)skip < m ? (size_t)skip : 0;
	for (size_t s = k0; s < m; s++) {
		c->stepno[s - k0] = c->stepno[s];
		for (size_t i = 0; i < c->n; i++)
			c->sidx[i][s - k0] = c->sidx[i][s];
	}
	c->nsteps = m - k0;
}

/* ---- incomplete ranks -------------------------------------------------------------- */

/* A rank whose trace lacks ops most ranks of its work class run (a rank
 * traced without its NCCL kernels, a truncated trace) is no peer: an op it
 * lacks is not a zero-length op, and its host gaps hold the launch time of
 * the ops it does not show, so they are not its peers' gaps.  Such a rank
 * gets a work class of its own: it is replayed as measured, no ideal comes
 * from it, and its own fix's ideal is unknown (said, and never the
 * verdict).  An op is keyed by (step number, name, occurrence of the name in
 * the step) over the common steps; a class's op is one more than half its
 * ranks run; a rank is incomplete when the ops of its class it lacks are
 * at least INCOMPLETE_SHARE of them, or take (on the ranks that ran them,
 * the least of them) at least INCOMPLETE_SHARE of the mean step.  With two
 * ranks in a class neither is the majority: nothing is said.  Returns the
 * ranks isolated; c->incomplete[i] says why. */
#define INCOMPLETE_SHARE 0.01

struct ikey { uint64_t key; int64_t min_ns; uint32_t nranks; int used; };

static size_t ikey_find(const struct ikey *t, size_t cap, uint64_t key)
{
	size_t h = (size_t)(key * 0x9E3779B97F4A7C15ull >> 17) & (cap - 1);
	while (t[h].used && t[h].key != key)
		h = (h + 1) & (cap - 1);
	return h;
}

/* Rank i's op keys in the common steps into keys[] (its count). */
static size_t rank_keys(const struct ctx *c, size_t i, uint64_t *keys, int64_t *dur)
{
	const struct rk *k = &c->k[i];
	const struct rank_result *r = k->r;
	uint8_t *common = xcalloc(r->nsteps ? r->nsteps : 1, 1);
	for (size_t s = 0; s < c->nsteps; s++)
		if (c->sidx[i][s] >= 0)
			common[c->sidx[i][s]] = 1;
	uint32_t *occ = xmalloc((k->n ? k->n : 1) * sizeof(*occ));
	occurrences(k, occ);
	size_t m = 0;
	for (size_t j = 0; j < k->n; j++) {
		const struct wop *o = &r->ops[j];
		if (o->step < 0 || !common[o->step])
			continue;
		uint64_t num = (uint64_t)r->steps[o->step].number;
		keys[m] = ((uint64_t)o->hash << 32 | occ[j]) ^ (num * 0xC2B2AE3D27D4EB4Full);
		dur[m++] = o->end_ns - o->start_ns;
	}
	free(occ);
	free(common);
	return m;
}

static size_t isolate_incomplete(struct ctx *c)
{
	size_t nmax = 1, found = 0;
	double step_ns = 0;
	for (size_t i = 0; i < c->n; i++) {
		if (c->k[i].n > nmax)
			nmax = c->k[i].n;
		for (size_t s = 0; s < c->nsteps; s++) {
			const struct step_result *sr = &c->a->r[i].steps[c->sidx[i][s]];
			step_ns += (double)(sr->end_ns - sr->start_ns);
		}
	}
	step_ns /= (double)(c->n * (c->nsteps ? c->nsteps : 1));
	uint64_t *keys = xmalloc(nmax * sizeof(*keys));
	int64_t *dur = xmalloc(nmax * sizeof(*dur));
	for (size_t cl = 0; cl <= c->n; cl++) {
		size_t K = c->csize[cl], cap = 16, tot = 0;
		if (K < 3)
			continue;
		for (size_t i = 0; i < c->n; i++)
			if ((size_t)c->k[i].cls == cl)
				tot += c->k[i].n;
		while (cap < 2 * tot)
			cap *= 2;
		struct ikey *t = xcalloc(cap, sizeof(*t));
		for (size_t i = 0; i < c->n; i++) {
			if ((size_t)c->k[i].cls != cl)
				continue;
			size_t m = rank_keys(c, i, keys, dur);
			for (size_t x = 0; x < m; x++) {
				size_t h = ikey_find(t, cap, keys[x]);
				if (!t[h].used)
					t[h] = (struct ikey){ keys[x], dur[x], 0, 1 };
				t[h].nranks++;
				if (dur[x] < t[h].min_ns)
					t[h].min_ns = dur[x];
			}
		}
		size_t nmaj = 0;
		for (size_t h = 0; h < cap; h++)
			nmaj += t[h].used && 2 * t[h].nranks > K;
		for (size_t i = 0; i < c->n && nmaj; i++) {
			if ((size_t)c->k[i].cls != cl)
				continue;
			size_t m = rank_keys(c, i, keys, dur), have = 0;
			double lacked_ns = 0;
			for (size_t x = 0; x < m; x++) {
				size_t h = ikey_find(t, cap, keys[x]);
				if (t[h].used && 2 * t[h].nranks > K) {
					have++;
					lacked_ns -= (double)t[h].min_ns;
				}
			}
			for (size_t h = 0; h < cap; h++)
				if (t[h].used && 2 * t[h].nranks > K)
					lacked_ns += (double)t[h].min_ns;
			size_t lacked = nmaj - have;
			lacked_ns /= (double)(c->nsteps ? c->nsteps : 1);
			if (!lacked || ((double)lacked < INCOMPLETE_SHARE * (double)nmaj &&
					lacked_ns < INCOMPLETE_SHARE * step_ns))
				continue;
			if (!c->incomplete)
				c->incomplete = xcalloc(c->n, sizeof(*c->incomplete));
			char b[240];
			snprintf(b, sizeof(b), "its trace lacks %zu of the %zu ops most ranks of its class run "
				 "(%.3f ms a step)", lacked, nmaj, lacked_ns / 1e6);
			c->incomplete[i] = xstrdup(b);
			found++;
		}
		free(t);
	}
	free(keys);
	free(dur);
	/* each in a class of its own: the unused class ids from the top */
	size_t id = c->n;
	for (size_t i = 0; found && i < c->n; i++) {
		if (!c->incomplete[i])
			continue;
		while (id > 0 && c->csize[id])
			id--;
		c->csize[c->k[i].cls]--;
		c->k[i].cls = (int)id;
		c->csize[id]++;
	}
	return found;
}

/* ---- the what-if ---------------------------------------------------------------- */

static double mean(const double *v, size_t n)
{
	double s = 0;
	for (size_t q = 0; q < n; q++)
		s += v[q];
	return n ? s / (double)n : NAN;
}

/* Worker w's replay state with room for kcap lanes, allocated at its first
 * use (by that worker; a later use takes it as it is: at most its lanes). */
static struct wst *worker(struct ctx *c, size_t w, size_t kcap)
{
	struct wst *s = &c->w[w];
	if (s->k)
		return s;
	s->kcap = kcap;
	s->k = xcalloc(c->n, sizeof(*s->k));
	/* the ops' replay state of every rank in one mapping, its pages made
	 * at once (MAP_POPULATE: a fault per page costs more than the page) */
	size_t tot = 0;
	for (size_t i = 0; i < c->n; i++)
		tot += c->k[i].n;
	s->obn = (tot ? tot : 1) * kcap * sizeof(struct rop);
	void *m = mmap(NULL, s->obn, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	s->ob = m == MAP_FAILED ? NULL : m;
	for (size_t i = 0, at = 0; i < c->n; i++) {
		const struct rk *k = &c->k[i];
		struct rst *z = &s->k[i];
		size_t nb = k->nbs ? k->nbs : 1, ns = k->nstr ? k->nstr : 1;
		z->o = s->ob ? (struct rop *)s->ob + at : xmalloc((k->n ? k->n : 1) * kcap * sizeof(*z->o));
		at += k->n * kcap;
		/* the rank's streams and steps in one block, near each other */
		char *b = xmalloc(ns * kcap * sizeof(int64_t) + nb * kcap * sizeof(struct bst) + (ns + nb) * sizeof(int32_t) + ns);
		z->lastE = (int64_t *)b;
		z->b = (struct bst *)(b + ns * kcap * sizeof(int64_t));
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

static void workers_free(struct ctx *c)
{
	for (size_t w = 0; w < c->nw; w++) {
		struct wst *s = &c->w[w]; /* each rank's part: free_task */
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

/* One evaluated fix: its per-step times and work ends (ms) beside the result. */
struct evald { struct whatif_fix f; double *steps, *wend; };

/* Replays fixes sc[0..n) (n <= the worker's lanes) at once into e[x]'s
 * per-step times and work ends. */
static void eval_replays(const struct ctx *c, struct wst *s, size_t n, const struct scen *sc, struct evald **e)
{
	double *out[LANES_MAX];
	int replayed[LANES_MAX];
	size_t lane[LANES_MAX];
	for (size_t x = 0; x < n; x++) {
		e[x]->steps = out[x] = xmalloc((c->nsteps ? c->nsteps : 1) * sizeof(double));
		e[x]->wend = xmalloc((c->nsteps ? c->nsteps : 1) * sizeof(double));
	}
	replay_lanes(c, s, n, sc, out, replayed, lane);
	for (size_t x = 0; x < n; x++) {
		if (replayed[x])
			work_ends(c, s, lane[x], e[x]->wend);
		else
			memcpy(e[x]->wend, c->rep_wend, c->nsteps * sizeof(double));
	}
}

/* Fix e's gain over the unmodified replay (rep_mean: its mean step, ms). */
static void eval_gain(const struct ctx *c, double rep_mean, struct evald *e)
{
	e->f.step_ms_if_fixed = mean(e->steps, c->nsteps);
	e->f.gain_ms = rep_mean - e->f.step_ms_if_fixed;
	e->f.gain_pct = rep_mean > 0 ? 100.0 * e->f.gain_ms / rep_mean : NAN;
}

static struct evald *add_fix(struct evald **v, size_t *n, size_t *cap, const char *what, int rank, char *ranks)
{
	GROW(*v, *cap, *n + 1);
	struct evald *e = &(*v)[(*n)++];
	memset(e, 0, sizeof(*e));
	e->f.what = xstrdup(what);
	e->f.rank = rank;
	e->f.ranks = ranks;
	e->f.then_rank = -1;
	e->f.then_gain_ms = e->f.then_gain_pct = NAN;
	return e;
}

/* The fixes to replay, each a scenario (its mask owned) and its place in
 * the fixes, replayed at once on the workers (run_jobs). */
struct fjob { struct scen sc; uint8_t *mask; size_t e; };
struct fjobs { struct fjob *v; size_t n, cap; };

static void add_job(struct fjobs *j, size_t e, struct scen sc, const uint8_t *mask, size_t n)
{
	GROW(j->v, j->cap, j->n + 1);
	uint8_t *m = NULL;
	if (mask) {
		m = xmalloc(n ? n : 1);
		memcpy(m, mask, n);
	}
	sc.mask = m;
	j->v[j->n++] = (struct fjob){ sc, m, e };
}

struct fixrun { struct ctx *c; struct evald *v; const struct fjob *j; double rep_mean; };

static void fix_task(void *arg, size_t w, size_t q)
{
	struct fixrun *f = arg;
	struct evald *e = &f->v[f->j[q].e];
	eval_replays(f->c, worker(f->c, w, 1), 1, &f->j[q].sc, &e);
	eval_gain(f->c, f->rep_mean, e);
}

/* Replays every job into v[job's e] and empties the list. */
static void run_jobs(struct ctx *c, struct evald *v, struct fjobs *j, double rep_mean)
{
	struct fixrun f = { c, v, j->v, rep_mean };
	par_for(c->nw, j->n, fix_task, &f);
	for (size_t q = 0; q < j->n; q++)
		free(j->v[q].mask);
	free(j->v);
	memset(j, 0, sizeof(*j));
}

static char *rank_list(const struct analysis *a, const int *of, int which)
{
	size_t cap = 16, len = 0;
	char *s = xmalloc(cap);
	s[0] = 0;
	for (size_t i = 0; i < a->n; i++) {
		if (of[i] != which)
			continue;
		char b[24];
		int n = snprintf(b, sizeof(b), "%s%d", len ? "," : "", a->r[i].rank);
		GROW(s, cap, len + (size_t)n + 1);
		memcpy(s + len, b, (size_t)n + 1);
		len += (size_t)n;
	}
	return s;
}

/* The ranks fixed one by one: all up to ALL_RANKS_MAX, else at most the
 * RANK_FIXES with the largest excess of duration and host gap over their
 * peers' medians, of those whose excess per step could make a material
 * gain (beyond lim_ms). */
/* Rank i's excess over its peers (ranks in parallel): of every op, its
 * duration and host gap above their peers' medians; a first launch later
 * than its peers' (the anchor) can shift every step of the rank: at most
 * that much per step. */
static void excess_task(void *arg, size_t w, size_t i)
{
	(void)w;
	struct ctx *c = arg;
	const struct rk *k = &c->k[i];
	double e = 0;
	for (size_t j = 0; j < k->n; j++) {
		int64_t md = peer_med(c, k, j, 0), mg = peer_med(c, k, j, 1);
		if (k->cat[j] < WC_UCOLL) /* unmatched communication keeps its duration (dur_fixed) */
			e += (double)(k->d[j] > md ? k->d[j] - md : 0);
		e += (double)(k->gap[j] > mg ? k->gap[j] - mg : 0);
	}
	if (k->a0 != UNSET && k->a0 > k->ma0)
		e += (double)(k->a0 - k->ma0) * (double)c->nsteps;
	c->ex[i] = e;
}

static size_t rank_candidates(const struct ctx *c, int32_t *out, double lim_ms)
{
	if (c->n <= ALL_RANKS_MAX) {
		for (size_t i = 0; i < c->n; i++)
			out[i] = (int32_t)i;
		return c->n;
	}
	double *ex = xmalloc(c->n * sizeof(*ex));
	memcpy(ex, c->ex, c->n * sizeof(*ex));
	/* a fix only lowers a path by what it takes off its ops, so a rank
	 * whose excess per step is within lim_ms cannot gain more: left out */
	double lim_ns = lim_ms * 1e6 * (double)c->nsteps;
	size_t m = 0;
	for (; m < RANK_FIXES; m++) {
		int best = -1;
		for (size_t i = 0; i < c->n; i++)
			if (ex[i] >= 0 && (best < 0 || ex[i] > ex[best]))
				best = (int)i;
		if (best < 0 || ex[best] <= lim_ns)
			break;
		out[m] = best;
		ex[best] = -1;
	}
	free(ex);
	return m;
}

/* Rank i's tables and replay states (ranks in parallel). */
static void free_task(void *arg, size_t w, size_t i)
{
	(void)w;
	struct ctx *c = arg;
	rk_free(c, &c->k[i]);
	if (c->sidx)
		free(c->sidx[i]);
	for (size_t q = 0; c->w && q < c->nw; q++)
		if (c->w[q].k) {
			if (!c->w[q].ob)
				free(c->w[q].k[i].o);
			free(c->w[q].k[i].lastE); /* its block (worker) */
		}
}

static void ctx_free(struct ctx *c)
{
	par_for(c->nt, c->n, free_task, c);
	workers_free(c);
	if (c->big)
		munmap(c->big, c->bign);
	free(c->bigat);
	free(c->k);
	free(c->g);
	free(c->gm);
	free(c->gx);
	free(c->gxi);
	free(c->gmq);
	free(c->gmsid);
	free(c->sm);
	free(c->sd);
	free(c->sg);
	free(c->sat);
	free(c->sn);
	free(c->med_all_d);
	free(c->med_all_g);
	free(c->mid);
	free(c->csize);
	free(c->stepno);
	free(c->sidx);
	free(c->aord);
	free(c->ex);
	free(c->scls);
	free(c->sj);
	free(c->calign);
	free(c->crank);
	free(c->cr0);
	for (size_t i = 0; c->inv && i < c->n; i++)
		free(c->inv[i]);
	free(c->inv);
	for (size_t i = 0; c->incomplete && i < c->n; i++)
		free(c->incomplete[i]);
	free(c->incomplete);
}

static struct whatif *none(const char *why)
{
	struct whatif *w = xcalloc(1, sizeof(*w));
	w->why = xstrdup(why);
	return w;
}

/* Measured step times, the unmodified replay against them (per step: the
 * worst rank's error, the reason when over REPRO_PCT) and the critical path. */
static void base_replay(const struct ctx *c, const struct wst *ws, size_t v, struct whatif *w, const double *meas,
			const double *rep, size_t left)
{
	struct cptab cp = { 0 };
	double *rwin = xcalloc(c->n ? c->n : 1, sizeof(*rwin));
	w->nsteps = c->nsteps;
	w->steps = xcalloc(c->nsteps ? c->nsteps : 1, sizeof(*w->steps));
	for (size_t s = 0; s < c->nsteps; s++) {
		struct whatif_step *st = &w->steps[s];
		st->number = c->stepno[s];
		st->measured_ms = meas[s];
		st->replay_ms = rep[s];
		double worst = 0;
		size_t sleft = 0; /* ops of this step the replay could not reach */
		for (size_t i = 0; i < c->n; i++) {
			int32_t q = c->sidx[i][s];
			const struct step_result *sr = &c->a->r[i].steps[q];
			const struct bst *b = &ws->k[i].b[(size_t)q * ws->K + v];
			double m = (double)(sr->end_ns - sr->start_ns), r = (double)(b->we - b->ws);
			rwin[i] += m / 1e6 / (double)c->nsteps; /* the rank's mean window (the step's definition) */
			double e = m > 0 ? 100.0 * fabs(r - m) / m : 0;
			if (e > worst)
				worst = e;
			for (size_t j = 0; left && ws->lft && j < c->k[i].n; j++)
				sleft += ws->lft[i][j] && c->a->r[i].ops[j].step == q;
		}
		st->error_pct = worst;
		/* a step with ops left where the trace has them is not replayed,
		 * whatever its window: no fix can be weighed there */
		st->reproduced = worst <= REPRO_PCT && !sleft;
		if (!st->reproduced) {
			char b[256];
			if (sleft)
				snprintf(b, sizeof(b), "the replay stalled with %zu ops of this step left where the trace "
					 "has them (%zu in all): a match or an inferred dependency contradicts the trace's "
					 "order", sleft, left);
			else if (left)
				snprintf(b, sizeof(b), "the replay stalled in another step with %zu ops left: a match or "
					 "an inferred dependency contradicts the trace's order", left);
			else if (c->unexplained)
				snprintf(b, sizeof(b), "%llu ops start later than their stream, launch and any other "
					 "stream's end explain (a dependency the trace does not show)",
					 (unsigned long long)c->unexplained);
			else
				snprintf(b, sizeof(b), "the collectives' transfers do not reproduce the ends (calls "
					 "matched across steps or clocks off by more than the spread)");
			st->reason = xstrdup(b);
		}
		if (worst > w->replay_error_pct)
			w->replay_error_pct = worst;
		cp_walk(c, ws, v, s, &cp);
	}
	w->reproduced = 1;
	for (size_t s = 0; s < c->nsteps; s++)
		w->reproduced &= w->steps[s].reproduced;
	w->rank_window_min_ms = INFINITY;
	w->rank_window_max_ms = 0;
	for (size_t i = 0; i < c->n; i++) {
		w->rank_window_min_ms = fmin(w->rank_window_min_ms, rwin[i]);
		w->rank_window_max_ms = fmax(w->rank_window_max_ms, rwin[i]);
	}
	free(rwin);
	/* the critical path: its pieces by share, the largest first (at most 12) */
	for (size_t x = 0; x < cp.n; x++)
		for (size_t y = x + 1; y < cp.n; y++)
			if (cp.e[y].ns > cp.e[x].ns) {
				struct cpent tmp = cp.e[x];
				cp.e[x] = cp.e[y];
				cp.e[y] = tmp;
			}
	w->ncp = cp.n < 12 ? cp.n : 12;
	w->cp = xcalloc(w->ncp ? w->ncp : 1, sizeof(*w->cp));
	for (size_t q = 0; q < w->ncp; q++) {
		char b[64];
		w->cp[q].rank = c->a->r[cp.e[q].ri].rank;
		w->cp[q].stream = cp.e[q].stream;
		w->cp[q].what = xstrdup(cat_name(cp.e[q].cat, b, sizeof(b)));
		w->cp[q].ms = (double)cp.e[q].ns / 1e6 / (double)(c->nsteps ? c->nsteps : 1);
		w->cp[q].share = cp.total ? (double)cp.e[q].ns / (double)cp.total : NAN;
	}
	free(cp.e);
}

static struct whatif_fix *take(struct evald *v, size_t n)
{
	struct whatif_fix *f = xcalloc(n ? n : 1, sizeof(*f));
	for (size_t q = 0; q < n; q++)
		f[q] = v[q].f;
	return f;
}

double whatif_window_spread(const struct whatif *w)
{
	return w && w->rank_window_max_ms >= w->rank_window_min_ms ? w->rank_window_max_ms - w->rank_window_min_ms
								    : NAN;
}

double whatif_material_ms(const struct whatif *w)
{
	if (w->noise_floor_ms > 0)
		return w->noise_floor_ms;
	double pct = 0.01 * w->replay_step_ms; /* a saved analysis without it */
	return pct > w->uncertainty_ms ? pct : w->uncertainty_ms;
}

int whatif_nothing(const struct whatif *w, double g)
{
	return !(fabs(g) > whatif_material_ms(w));
}

const struct whatif_rank *whatif_rank_of(const struct whatif *w, int rank)
{
	for (size_t i = 0; w && i < w->nranks; i++)
		if (w->ranks[i].rank == rank)
			return &w->ranks[i];
	return NULL;
}

const struct whatif_fix *whatif_best(const struct whatif *w)
{
	const struct whatif_fix *v[3] = { w->by_rank, w->by_group, w->by_op }, *best = NULL;
	size_t n[3] = { w->nby_rank, w->nby_group, w->nby_op };
	for (int k = 0; k < 3; k++)
		for (size_t q = 0; q < n[k]; q++)
			if ((!best || v[k][q].gain_ms > best->gain_ms) && !(v[k][q].rank >= 0 && v[k][q].unknown))
				best = &v[k][q]; /* a rank whose ideal is unknown is never the answer */
	/* the narrowest fix that gets nearly all of the best gain: a rank
	 * before a group, a group before an op type on every rank */
	for (int k = 0; best && k < 2; k++) {
		const struct whatif_fix *nb = NULL;
		for (size_t q = 0; q < n[k]; q++)
			if ((!nb || v[k][q].gain_ms > nb->gain_ms) && !(v[k][q].rank >= 0 && v[k][q].unknown))
				nb = &v[k][q];
		if (nb && nb->gain_ms >= NARROW_SHARE * best->gain_ms)
			return nb;
	}
	return best;
}

/* The gain of fix e over the complete steps (every step but the trace's
 * last, whose window ends at its last end, not at a next step's start),
 * mean ms; *wgain: how much sooner their work ends (the latest end of a
 * step's ops over the ranks).  NAN without a complete step. */
static double complete_gain(const struct ctx *c, const struct evald *e, double *wgain)
{
	size_t nc = c->nsteps - 1;
	double g = 0, wg = 0;
	for (size_t s = 0; s < nc; s++) {
		g += c->rep[s] - e->steps[s];
		wg += c->rep_wend[s] - e->wend[s];
	}
	*wgain = nc ? wg / (double)nc : NAN;
	return nc ? g / (double)nc : NAN;
}

/* Where no fix is material: the fix that would end the complete steps'
 * work soonest without shortening them (the time saved would be idle: the
 * next step starts when its host launches it), as a clause for the
 * verdict into u; empty when none ends them materially sooner. */
static void idle_note(const struct ctx *c, const struct evald *v, size_t nv, double lim, char *u, size_t un)
{
	u[0] = 0;
	int q = -1;
	double bi = 0, bw = 0;
	for (size_t x = 0; c->nsteps >= 2 && x < nv; x++) {
		double wg, g = complete_gain(c, &v[x], &wg);
		if (wg - g > lim && wg - g > bi) {
			bi = wg - g;
			bw = wg;
			q = (int)x;
		}
	}
	if (q < 0)
		return;
	int sync = 0;
	for (size_t i = 0; i < c->n && !sync; i++)
		sync = c->k[i].hassync;
	size_t l = c->nsteps - 1;
	double tail = c->rep[l] - v[q].steps[l];
	int n = snprintf(u, un, "; fixing %s would end each step's GPU work %.1f ms sooner, but each step starts "
			 "when its host launches it, not when the GPUs finish%s, so the time saved would be idle",
			 v[q].f.what, bw, sync ? "" : " (no synchronisation in the traces waits for the GPU)");
	if (tail > lim && n > 0 && (size_t)n < un)
		snprintf(u + n, un - (size_t)n, "; only the traces' last step, whose window ends at its last kernel, "
			 "would be shorter (%.1f ms to %.1f ms)", c->rep[l], v[q].steps[l]);
}

/* Where no fix is material: a group whose ideal is unknown (no peer
 * outside it) and whose ranks hold at least half the critical path, as a
 * clause for the verdict into u (empty when none): the step may wait on a
 * slowdown the replay cannot see. */
static void unknown_note(const struct whatif *w, const struct evald *v, size_t nv, char *u, size_t un)
{
	u[0] = 0;
	double best = 0;
	for (size_t x = 0; x < nv; x++) {
		if (!v[x].f.unknown || (!v[x].f.ranks && v[x].f.rank < 0))
			continue;
		double sh = 0;
		for (size_t q = 0; q < w->ncp; q++) {
			if (!v[x].f.ranks) { /* a rank whose trace is incomplete (isolate_incomplete) */
				if (v[x].f.rank == w->cp[q].rank && isfinite(w->cp[q].share))
					sh += w->cp[q].share;
				continue;
			}
			for (const char *p = v[x].f.ranks; *p;) {
				char *e;
				long r = strtol(p, &e, 10);
				if (e == p)
					break;
				if (r == w->cp[q].rank && isfinite(w->cp[q].share))
					sh += w->cp[q].share;
				p = *e == ',' ? e + 1 : e;
			}
		}
		if (sh >= 0.5 && sh > best && !v[x].f.ranks) {
			best = sh;
			snprintf(u, un, "; %s holds %.0f %% of the critical path, but %s: its ideal is unknown",
				 v[x].f.what, 100.0 * sh, v[x].f.unknown);
		} else if (sh >= 0.5 && sh > best) {
			best = sh;
			snprintf(u, un, "; %s (ranks %s) holds %.0f %% of the critical path, but no rank outside it "
				 "runs its ops: its ideal is unknown, so a slowdown all its ranks carry is not seen",
				 v[x].f.what, v[x].f.ranks, 100.0 * sh);
		}
	}
}

/* The verdict: the best fix when its gain is material (beyond 1 % of the
 * step and the clock uncertainty, over all steps and over the complete
 * steps), for a rank with its cause. */
static void verdict(struct ctx *c, struct whatif *w, const struct whatif_fix *best, double rep_mean,
		    const struct evald *v, size_t nv)
{
	char b[1400], u[320] = "", idle[400] = "", unk[300] = "";
	double lim = whatif_material_ms(w); /* rep_mean is w->replay_step_ms */
	double gain = best ? best->gain_ms : 0;
	/* a gain that lies in the trace's last step alone is not a step's gain */
	const char *over = "of the step";
	const struct evald *eb = NULL;
	for (size_t x = 0; best && x < nv; x++)
		if (v[x].f.what == best->what)
			eb = &v[x];
	double wg;
	if (eb && c->nsteps >= 2 && gain > lim && !(complete_gain(c, eb, &wg) > lim)) {
		const struct evald *m = NULL; /* the most a complete step gains */
		for (size_t y = 0; y < nv; y++)
			if (!m || complete_gain(c, &v[y], &wg) > complete_gain(c, m, &wg))
				m = &v[y];
		best = &m->f;
		gain = complete_gain(c, m, &wg);
		over = "of a complete step";
	}
	/* delays nothing explains are replayed as fixed: when they outweigh
	 * the material threshold and the best gain, no answer is confident */
	if (w->unexplained_share >= UNX_SHARE && w->unexplained_ms > lim && w->unexplained_ms >= gain)
		snprintf(u, sizeof(u), "not conclusive: %.3g ms per step (%.0f %% of the step) are delays the "
			 "trace does not explain, kept fixed in every replay, so a fix that would shorten them "
			 "is not seen; ", w->unexplained_ms, 100.0 * w->unexplained_share);
	if (!best || !(gain > lim)) {
		double pct = best && rep_mean > 0 ? 100.0 * gain / rep_mean : 0;
		int some = best && pct >= 0.05;
		idle_note(c, v, nv, lim, idle, sizeof(idle));
		unknown_note(w, v, nv, unk, sizeof(unk));
		snprintf(b, sizeof(b), "%sno single fix is worth more than %.1f %% %s%s%s%s%s%s", u, some ? pct : 0.0, over,
			 some ? " (the most: " : "", some ? best->what : "", some ? ")" : "", idle, unk);
		w->verdict = xstrdup(b);
		return;
	}
	const char *cause = "";
	if (best->rank >= 0) { /* its host gaps alone against its GPU work alone */
		int ri = rank_index(c->a, best->rank);
		uint8_t *mask = xcalloc(c->n, 1);
		mask[ri] = 1;
		struct scen h = { SC_SET, mask, ri, PART_HOST, 0 }, d = { SC_SET, mask, ri, PART_DUR, 0 };
		struct evald e2[2] = { 0 };
		struct fjobs j = { 0 };
		add_job(&j, 0, h, mask, c->n);
		add_job(&j, 1, d, mask, c->n);
		run_jobs(c, e2, &j, rep_mean);
		double gh = e2[0].f.gain_ms, gd = e2[1].f.gain_ms; /* rep_mean - the mean step */
		cause = gh >= gd ? "; its host is the cause" : "; its GPU work is the cause";
		for (int q = 0; q < 2; q++) {
			free(e2[q].steps);
			free(e2[q].wend);
		}
		free(mask);
	}
	/* a step the ranks' windows disagree on by more than the gain: the
	 * gain is smaller than the step's own definition (a one-step trace
	 * whose ranks' windows run from 11 to 19 ms), and says so */
	char poor[240] = "";
	double spread = whatif_window_spread(w);
	if (spread > best->gain_ms)
		snprintf(poor, sizeof(poor), "; but the ranks' step windows differ by %.1f ms (%.1f to %.1f ms, each "
			 "rank's mean over the step%s used), more than this gain: the step is poorly defined", spread,
			 w->rank_window_min_ms, w->rank_window_max_ms, c->nsteps == 1 ? "" : "s");
	snprintf(b, sizeof(b), "%sfixing %s would make the step %.0f %% faster (%.1f ms to %.1f ms)%s%s", u, best->what,
		 best->gain_pct, w->measured_step_ms, w->measured_step_ms - best->gain_ms, cause, poor);
	w->verdict = xstrdup(b);
}

/* Process groups as group fixes (docs/metrics.md "What-if"): where the
 * traces show two or more process groups of one kind (one description,
 * trailing digits and '_' aside, and one number of members: the TP groups,
 * the replicas' DP groups), each is fixed in turn, named after its
 * description, else its name ("group tp0", "group pg 1"), unless its ranks
 * are those of a group already fixed (a stage, a replica).  Members: the
 * ranks the trace lists (Kineto "Process Group Ranks"), else the ranks
 * read that call the group.  A group with a listed member not read, or
 * holding every rank read, is no fix; nor are kinds of more than
 * ALL_RANKS_MAX groups (a replay each). */
struct pgx {
	const char *name, *desc;
	uint8_t *mask;               /* [n]: members (listed, else callers) */
	size_t cnt;
	int listed, bad, kind;
	size_t stem;                 /* length of desc without trailing digits and '_' */
};

static int pg_desc_named(const char *d)
{
	return *d && strcmp(d, "undefined") != 0;
}

static void pg_fixes(struct ctx *c, struct evald **v, size_t *n, size_t *cap, size_t first, struct fjobs *jobs)
{
	const struct analysis *a = c->a;
	struct pgx *g = NULL;
	size_t ng = 0, gcap = 0;
	for (size_t i = 0; i < a->n; i++)
		for (size_t k = 0; k < a->r[i].ncolls; k++) {
			const struct coll_row *row = &a->r[i].colls[k];
			if (!row->pg || !*row->pg)
				continue;
			size_t q = 0;
			while (q < ng && strcmp(g[q].name, row->pg) != 0)
				q++;
			if (q == ng) {
				GROW(g, gcap, ng + 1);
				g[ng++] = (struct pgx){ row->pg, row->pg_desc ? row->pg_desc : "", xcalloc(a->n, 1), 0, 0, 0, -1, 0 };
			}
			if (row->pg_ranks && *row->pg_ranks && !g[q].listed) {
				memset(g[q].mask, 0, a->n);
				g[q].listed = 1;
				for (const char *p = row->pg_ranks; *p;) {
					char *e;
					long r = strtol(p, &e, 10);
					if (e == p)
						break;
					int x = r >= 0 && r <= INT32_MAX ? rank_index(a, (int)r) : -1;
					if (x < 0)
						g[q].bad = 1; /* a member not read: the group cannot be fixed whole */
					else
						g[q].mask[x] = 1;
					p = *e == ',' ? e + 1 : e;
				}
			} else if (!g[q].listed) {
				g[q].mask[i] = 1;
			}
		}
	for (size_t q = 0; q < ng; q++) {
		for (size_t i = 0; i < a->n; i++)
			g[q].cnt += g[q].mask[i];
		size_t l = strlen(g[q].desc);
		while (l && (g[q].desc[l - 1] == '_' || (g[q].desc[l - 1] >= '0' && g[q].desc[l - 1] <= '9')))
			l--;
		g[q].stem = l;
	}
	for (size_t q = 0; q < ng; q++) {
		/* a group of one rank is that rank's fix; one of every rank, the ideal's */
		if (g[q].bad || g[q].cnt < 2 || g[q].cnt >= a->n || g[q].kind >= 0)
			continue;
		size_t nk = 0;
		int distinct = 1; /* every description of the kind names one group */
		for (size_t p = q; p < ng; p++) {
			if (g[p].bad || g[p].cnt != g[q].cnt || g[p].kind >= 0 || g[p].stem != g[q].stem ||
			    strncmp(g[p].desc, g[q].desc, g[q].stem) != 0)
				continue;
			g[p].kind = (int)q;
			nk++;
			distinct &= pg_desc_named(g[p].desc);
			for (size_t o = q; o < p; o++)
				if (g[o].kind == (int)q && strcmp(g[o].desc, g[p].desc) == 0)
					distinct = 0;
		}
		if (nk < 2 || nk > ALL_RANKS_MAX)
			continue;
		for (size_t p = q; p < ng; p++) {
			if (g[p].kind != (int)q)
				continue;
			int *of = xmalloc(a->n * sizeof(*of));
			for (size_t i = 0; i < a->n; i++)
				of[i] = g[p].mask[i] ? 1 : 0;
			char *ranks = rank_list(a, of, 1), b[160];
			free(of);
			int dup = 0;
			for (size_t e = first; e < *n && !dup; e++)
				dup = (*v)[e].f.ranks && strcmp((*v)[e].f.ranks, ranks) == 0;
			if (dup) {
				free(ranks);
				continue;
			}
			if (distinct && pg_desc_named(g[p].desc))
				snprintf(b, sizeof(b), "group %.60s", g[p].desc);
			else
				snprintf(b, sizeof(b), "group %.60s %.60s", pg_desc_named(g[p].desc) ? g[p].desc : "pg",
					 g[p].name);
			add_fix(v, n, cap, b, -1, ranks);
			struct scen sc = { SC_SET, NULL, -1, PART_DUR | PART_HOST, 0 };
			add_job(jobs, *n - 1, sc, g[p].mask, a->n);
		}
	}
	for (size_t q = 0; q < ng; q++)
		free(g[q].mask);
	free(g);
}

/* Every fix: ranks, groups, op types. */
static void free_balance(struct ctx *c)
{
	if (!c->bal)
		return;
	for (size_t i = 0; i < c->n; i++)
		free(c->bal[i]);
	free(c->bal);
	c->bal = NULL;
}

/* The stage balance: the work moved between pipeline stages until each
 * does the same.  Per step and compute op name (GEMM, attention, other
 * compute) that ranks of two or more work classes run: each rank's work is
 * the sum of that op's durations in the step, each class's typical work
 * the lower median of its ranks' sums, the balanced work the mean of the
 * classes' typicals, and every op of that name on a rank is scaled by
 * balanced / its class's typical.  So a stage with more layers (more
 * occurrences of the same kernels) or slower ones gives work to the
 * others, a straggler inside a stage stays one (its rank fix answers
 * that), and an op only one class runs (the loss of the last stage, the
 * embedding of the first) keeps its duration.  The counterfactual the
 * OSDI'25 artifact's ideal (the mean per op type over all stages)
 * includes and a per-stage ideal cannot see.  Sets c->bal; returns 0
 * (c->bal NULL) when no op is shared by two classes. */
struct bkey { int64_t step; uint32_t hash, li; uint8_t used; };
struct bent { int32_t key, cls, ri, li; int64_t sum; };

static size_t bkey_find(const struct bkey *t, size_t cap, int64_t step, uint32_t hash)
{
	size_t h = ((size_t)hash * 2654435761u ^ (size_t)step * 40503u) & (cap - 1);
	while (t[h].used && (t[h].step != step || t[h].hash != hash))
		h = (h + 1) & (cap - 1);
	return h;
}

static int cmp_bent(const void *x, const void *y)
{
	const struct bent *p = x, *q = y;
	if (p->key != q->key)
		return p->key < q->key ? -1 : 1;
	if (p->cls != q->cls)
		return p->cls < q->cls ? -1 : 1;
	return (p->sum > q->sum) - (p->sum < q->sum);
}

/* Per rank: each compute op's (step, name) as a local index (lidx, -1 for
 * the rest) and one entry per (rank, step, name) with its summed duration,
 * keyed by (step number, name) across ranks. */
static struct bent *balance_entries(struct ctx *c, int32_t **lidx, size_t *nl, size_t *ne)
{
	size_t total = 0;
	for (size_t i = 0; i < c->n; i++)
		total += c->k[i].n;
	size_t cap = 16, nk = 0, m = 0;
	while (cap < 2 * total)
		cap *= 2;
	struct bkey *t = xcalloc(cap, sizeof(*t)); /* (step number, name) -> key id (li) */
	struct bent *v = xmalloc((total ? total : 1) * sizeof(*v));
	for (size_t i = 0; i < c->n; i++) {
		struct rk *k = &c->k[i];
		size_t oc = 16;
		while (oc < 2 * k->n)
			oc *= 2;
		struct bkey *loc = xcalloc(oc, sizeof(*loc)); /* (step index, name) -> entry of this rank */
		lidx[i] = xmalloc((k->n ? k->n : 1) * sizeof(int32_t));
		size_t first = m;
		for (size_t j = 0; j < k->n; j++) {
			const struct wop *o = &k->r->ops[j];
			lidx[i][j] = -1;
			if (o->step < 0 || k->cat[j] > WC_COMPUTE || o->kind == K_COMM) /* compute only */
				continue;
			size_t h = bkey_find(loc, oc, o->step, o->hash);
			if (!loc[h].used) {
				int64_t sn = k->r->steps[o->step].number;
				size_t y = bkey_find(t, cap, sn, o->hash);
				if (!t[y].used)
					t[y] = (struct bkey){ .step = sn, .hash = o->hash, .li = (uint32_t)nk++, .used = 1 };
				uint32_t li = (uint32_t)(m - first);
				loc[h] = (struct bkey){ .step = o->step, .hash = o->hash, .li = li, .used = 1 };
				v[m] = (struct bent){ (int32_t)t[y].li, k->cls, (int32_t)i, (int32_t)li, 0 };
				m++;
			}
			lidx[i][j] = (int32_t)loc[h].li;
			v[first + loc[h].li].sum += k->d[j];
		}
		nl[i] = m - first;
		free(loc);
	}
	free(t);
	*ne = m;
	return v;
}

static int build_balance(struct ctx *c)
{
	size_t m, shared = 0;
	int32_t **lidx = xcalloc(c->n, sizeof(*lidx));
	size_t *nl = xcalloc(c->n, sizeof(*nl));
	struct bent *v = balance_entries(c, lidx, nl, &m);
	double **fac = xcalloc(c->n, sizeof(*fac));
	for (size_t i = 0; i < c->n; i++) {
		fac[i] = xmalloc((nl[i] ? nl[i] : 1) * sizeof(double));
		for (size_t l = 0; l < nl[i]; l++)
			fac[i][l] = 1.0;
	}
	qsort(v, m, sizeof(*v), cmp_bent);
	for (size_t a = 0, b; a < m; a = b) { /* one (step, name): v[a, b) */
		double sum = 0;
		size_t ncls = 0;
		for (b = a; b < m && v[b].key == v[a].key; b++)
			;
		for (size_t p = a, q; p < b; p = q) { /* one class: v[p, q), sums ascending */
			for (q = p; q < b && v[q].cls == v[p].cls; q++)
				;
			sum += (double)v[p + (q - p - 1) / 2].sum;
			ncls++;
		}
		if (ncls < 2)
			continue;
		double target = sum / (double)ncls;
		for (size_t p = a, q; p < b; p = q) {
			for (q = p; q < b && v[q].cls == v[p].cls; q++)
				;
			double typ = (double)v[p + (q - p - 1) / 2].sum;
			for (size_t x = p; typ > 0 && x < q; x++) {
				fac[v[x].ri][v[x].li] = target / typ;
				shared++;
			}
		}
	}
	free(v);
	if (shared) {
		c->bal = xcalloc(c->n, sizeof(*c->bal));
		for (size_t i = 0; i < c->n; i++) {
			struct rk *k = &c->k[i];
			c->bal[i] = xmalloc((k->n ? k->n : 1) * sizeof(int64_t));
			for (size_t j = 0; j < k->n; j++)
				c->bal[i][j] = lidx[i][j] >= 0 ? (int64_t)llround((double)k->d[j] * fac[i][lidx[i][j]]) : k->d[j];
		}
	}
	for (size_t i = 0; i < c->n; i++) {
		free(lidx[i]);
		free(fac[i]);
	}
	free(lidx);
	free(fac);
	free(nl);
	return shared > 0;
}

/* The single-rank fixes replayed beside the unmodified and ideal replays
 * (whatif_run: the ranks rank_candidates names with a threshold a little
 * above the one it will have), each taken by all_fixes if it names that
 * rank too (then its result is the same as a replay there). */
struct spec { int32_t *rank; struct evald *e; size_t n; };

static int spec_take(struct spec *sp, int32_t rank, const struct ctx *c, double rep_mean, struct evald *e)
{
	for (size_t x = 0; sp && x < sp->n; x++)
		if (sp->rank[x] == rank && sp->e[x].steps) {
			e->steps = sp->e[x].steps;
			e->wend = sp->e[x].wend;
			sp->e[x].steps = sp->e[x].wend = NULL;
			eval_gain(c, rep_mean, e);
			return 1;
		}
	return 0;
}

static void all_fixes(struct ctx *c, struct whatif *w, const int *stage, const int *replica, int nst,
		      double rep_mean, double ideal_mean, double ideal_complete, struct spec *sp,
		      struct evald **pv, size_t *pn)
{
	struct evald *v = NULL;
	size_t n = 0, cap = 0;
	struct fjobs jobs = { 0 };
	uint8_t *mask = xcalloc(c->n, 1);
	size_t *cmask = xcalloc(c->n + 1, sizeof(*cmask));
	int32_t *cand = xmalloc(c->n * sizeof(*cand));
	double lim = whatif_material_ms(w); /* rep_mean is w->replay_step_ms */
	size_t nc = rank_candidates(c, cand, lim);
	char b[64];
	for (size_t q = 0; q < nc; q++) {
		snprintf(b, sizeof(b), "rank %d", c->a->r[cand[q]].rank);
		add_fix(&v, &n, &cap, b, c->a->r[cand[q]].rank, NULL);
		if (c->incomplete && c->incomplete[cand[q]]) /* its ideal is unknown (isolate_incomplete) */
			v[n - 1].f.unknown = xstrdup(c->incomplete[cand[q]]);
		if (spec_take(sp, cand[q], c, rep_mean, &v[n - 1]))
			continue;
		mask[cand[q]] = 1;
		struct scen sc = { SC_SET, NULL, cand[q], PART_DUR | PART_HOST, 0 };
		add_job(&jobs, n - 1, sc, mask, c->n);
		mask[cand[q]] = 0;
	}
	w->nby_rank = n;
	int nrep = 0;
	for (size_t i = 0; i < c->n; i++)
		if (replica[i] + 1 > nrep)
			nrep = replica[i] + 1;
	for (int pass = 0; pass < 2; pass++) {
		const int *of = pass ? replica : stage;
		int cnt = pass ? nrep : nst;
		for (int g = 0; cnt >= 2 && g < cnt; g++) {
			for (size_t i = 0; i < c->n; i++)
				mask[i] = of[i] == g;
			snprintf(b, sizeof(b), "%s %d", pass ? "replica" : "stage", g);
			struct evald *e = add_fix(&v, &n, &cap, b, -1, rank_list(c->a, of, g));
			struct scen sc = { SC_SET, NULL, -1, PART_DUR | PART_HOST, 0 };
			add_job(&jobs, n - 1, sc, mask, c->n);
			/* a set that holds every rank of a work class has no peer for
			 * that class's ops: their ideal is the set's own lower median */
			memset(cmask, 0, (c->n + 1) * sizeof(*cmask));
			for (size_t i = 0; i < c->n; i++)
				cmask[c->k[i].cls] += mask[i] != 0;
			for (size_t i = 0; i < c->n && !e->f.unknown; i++)
				if (mask[i] && cmask[c->k[i].cls] == c->csize[c->k[i].cls]) {
					char u[200];
					snprintf(u, sizeof(u), "no rank outside %s runs its ops: its ideal is the lower "
						 "median of its own ranks, so a slowdown all of them carry is not seen", b);
					e->f.unknown = xstrdup(u);
				}
		}
	}
	pg_fixes(c, &v, &n, &cap, w->nby_rank, &jobs);
	if (nst >= 2 && build_balance(c)) { /* a pipeline: every stage given the same work */
		int *zero = xcalloc(c->n, sizeof(*zero));
		add_fix(&v, &n, &cap, "the stage balance", -1, rank_list(c->a, zero, 0));
		struct scen sc = { SC_BAL, NULL, -1, 0, 0 };
		add_job(&jobs, n - 1, sc, NULL, 0);
		free(zero);
	}
	w->nby_group = n - w->nby_rank;
	int present[WC__N] = { 0 };
	for (size_t i = 0; i < c->n; i++) {
		for (size_t j = 0; j < c->k[i].n; j++)
			present[c->k[i].cat[j]] = 1;
		present[WC_HOST] |= c->k[i].nh > 0; /* an op with a launch (l != UNSET) */
	}
	/* An op type's fix sets its ops to the ideal's values and leaves the rest
	 * as measured, and the replay is monotone in every duration, gap and
	 * transfer, so it gains at most what the ideal gains, over all steps
	 * and over the complete steps: beyond ALL_RANKS_MAX ranks, op types are
	 * not replayed when either is not material. */
	int cats = c->n <= ALL_RANKS_MAX || (rep_mean - ideal_mean > lim && !(ideal_complete <= lim));
	for (int cat = 0; cats && cat < WC__N; cat++) {
		if (!present[cat] || cat >= WC_UCOLL) /* unmatched communication: nothing to fix it to */
			continue;
		add_fix(&v, &n, &cap, cat_name(cat, b, sizeof(b)), -1, NULL);
		struct scen sc = { SC_CAT, NULL, -1, 0, cat };
		add_job(&jobs, n - 1, sc, NULL, 0);
	}
	w->nby_op = n - w->nby_rank - w->nby_group;
	run_jobs(c, v, &jobs, rep_mean);
	free_balance(c);
	free(cmask);
	free(mask);
	free(cand);
	*pv = v;
	*pn = n;
}

/* AORTA_TIMING=1: each phase's wall time on stderr (bench/whatif_cost). */
static void phase(const char *what)
{
	static struct timespec t0;
	static int on = -1;
	if (on < 0)
		on = getenv("AORTA_TIMING") != NULL;
	if (!on)
		return;
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	if (what)
		fprintf(stderr, "aorta: timing: what-if %s: %.3f ms\n", what,
			(double)(t.tv_sec - t0.tv_sec) * 1e3 + (double)(t.tv_nsec - t0.tv_nsec) / 1e6);
	t0 = t;
}

/* Threads for the what-if: the analysis's (-j; 0: all cores). */
static size_t what_threads(const struct analysis *a)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	size_t nt = a->opts.threads > 0 ? (size_t)a->opts.threads : (size_t)(cores > 0 ? cores : 1);
	return nt ? nt : 1;
}

static void rk_task(void *arg, size_t w, size_t i)
{
	(void)w;
	rk_init(arg, i);
}

struct first { struct ctx *c; struct whatif *w; const double *meas; double *rep, *rep_wend, *ideal; };

/* The context of analysis a (stage: each rank's pipeline stage, -1 when
 * none) and every rank's op tables, ranks on threads. */
static void ctx_init(struct ctx *c, struct analysis *a, const int *stage)
{
	c->a = a;
	c->n = a->n;
	c->k = xcalloc(a->n, sizeof(*c->k));
	c->nt = what_threads(a);
	c->nw = c->nt < WORKERS_MAX ? c->nt : WORKERS_MAX;
	c->w = xcalloc(c->nw, sizeof(*c->w));
	c->csize = xcalloc(a->n + 1, sizeof(*c->csize));
	for (size_t i = 0; i < a->n; i++) {
		c->k[i].cls = stage[i] < 0 ? 0 : stage[i];
		c->csize[c->k[i].cls]++;
	}
	c->bigat = xmalloc(a->n * sizeof(*c->bigat));
	for (size_t i = 0; i < a->n; i++) {
		c->bigat[i] = c->bign;
		c->bign += rk_bytes(a->r[i].nops);
	}
	void *big = mmap(NULL, c->bign, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	c->big = big == MAP_FAILED ? NULL : big;
	par_for(c->nt, a->n, rk_task, c);
	for (size_t i = 0; i < a->n; i++) {
		c->unexplained += c->k[i].unexplained;
		c->manystreams |= c->k[i].nstr > UINT16_MAX;
	}
}

/* The slots, then the first replays in one pass on worker 0 (replay_lanes):
 * the unmodified one (lane 0, with its comparison to the measured steps and
 * the critical path), the ideal one (lane 1) and the single-rank fixes
 * all_fixes will surely replay (rank_candidates with the material threshold
 * from the measured step, 3 % (REPRO_PCT) above; at most LANES_MAX - 2 of
 * them, all_fixes replays any other): *sp. */
static void first_replays(struct ctx *c, struct first *f, struct spec *sp)
{
	build_slots(c);
	c->ex = xmalloc(c->n * sizeof(*c->ex));
	if (c->n > ALL_RANKS_MAX)
		par_for(c->nt, c->n, excess_task, c);
	sp->rank = xmalloc(c->n * sizeof(int32_t));
	double lim = 0.01 * mean(f->meas, c->nsteps) * (1 + REPRO_PCT / 100);
	double unc = (double)c->a->clock_spread_ns / 1e6;
	sp->n = rank_candidates(c, sp->rank, lim > unc ? lim : unc);
	if (sp->n > LANES_MAX - 2)
		sp->n = LANES_MAX - 2;
	sp->e = xcalloc(sp->n ? sp->n : 1, sizeof(*sp->e));
	size_t n = 2 + sp->n;
	struct scen sc[LANES_MAX] = { { SC_NONE, NULL, -1, 0, 0 }, { SC_ALL, NULL, -1, 0, 0 } };
	double *out[LANES_MAX] = { f->rep, f->ideal };
	uint8_t *mask[LANES_MAX] = { 0 };
	for (size_t x = 0; x < sp->n; x++) {
		int32_t ri = sp->rank[x];
		mask[x] = xcalloc(c->n, 1);
		mask[x][ri] = 1;
		sc[2 + x] = (struct scen){ SC_SET, mask[x], ri, PART_DUR | PART_HOST, 0 };
		sp->e[x].steps = out[2 + x] = xmalloc((c->nsteps ? c->nsteps : 1) * sizeof(double));
		sp->e[x].wend = xmalloc((c->nsteps ? c->nsteps : 1) * sizeof(double));
	}
	struct wst *s = worker(c, 0, n);
	int replayed[LANES_MAX];
	size_t lane[LANES_MAX];
	size_t left = replay_lanes(c, s, n, sc, out, replayed, lane); /* c->rep unknown: every lane replays */
	work_ends(c, s, lane[0], f->rep_wend);
	base_replay(c, s, lane[0], f->w, f->meas, f->rep, left);
	for (size_t x = 0; x < sp->n; x++) {
		work_ends(c, s, lane[2 + x], sp->e[x].wend);
		free(mask[x]);
	}
	c->rep = f->rep;
	c->rep_wend = f->rep_wend;
}

/* The noise floor a gain must exceed (whatif.h): the largest of 1 % of the
 * replayed step, the clock uncertainty and the replay's own error of the
 * step (|replayed - measured|).  Beside it, the step's own spread: the
 * standard error of the measured step over the steps used (sample standard
 * deviation / sqrt(n); 0 with one step).  It is not part of the floor: a
 * replay is deterministic and a fix's gain is paired step by step, so a
 * gain the steps' spread exceeds is still the replay's answer, but one a
 * single run cannot confirm (the summary says so beside such a gain). */
static void noise_floor(const struct ctx *c, struct whatif *w, const double *meas)
{
	size_t n = c->nsteps;
	double sd = 0;
	for (size_t s = 0; s < n; s++)
		sd += (meas[s] - w->measured_step_ms) * (meas[s] - w->measured_step_ms);
	w->step_sem_ms = n >= 2 ? sqrt(sd / (double)(n - 1)) / sqrt((double)n) : 0;
	struct { double v; const char *from; } p[3] = {
		{ 0.01 * w->replay_step_ms, "1 % of the step" },
		{ w->uncertainty_ms, "the clock uncertainty" },
		{ fabs(w->replay_step_ms - w->measured_step_ms), "the replay's error of the step" },
	};
	int b = 0;
	for (int q = 1; q < 3; q++)
		if (p[q].v > p[b].v)
			b = q;
	w->noise_floor_ms = p[b].v;
	free(w->noise_floor_from);
	w->noise_floor_from = xstrdup(p[b].from);
}

/* Per rank, over the steps used (docs/metrics.md "Host launch time"): the
 * sum of its launches' host gaps per step (the replay's g: launch minus the
 * previous launch, after a synchronisation launch minus the end of the op
 * it waited for), the same with every gap at its slot's lower median over
 * the class (the host-gap fix: gap_fixed of SC_CAT WC_HOST) and the share
 * of that ideal its own gaps set.  After build_slots. */
static void rank_hosts(const struct ctx *c, struct whatif *w)
{
	w->nranks = c->n;
	w->ranks = xcalloc(c->n ? c->n : 1, sizeof(*w->ranks));
	double *per = xmalloc((c->nsteps ? c->nsteps : 1) * sizeof(double));
	for (size_t i = 0; i < c->n; i++) {
		const struct rk *k = &c->k[i];
		struct whatif_rank *x = &w->ranks[i];
		int32_t *sof = xmalloc((k->nbs ? k->nbs : 1) * sizeof(*sof)); /* step index -> step used, -1 */
		for (size_t q = 0; q < k->nbs; q++)
			sof[q] = -1;
		for (size_t s = 0; s < c->nsteps; s++)
			sof[c->sidx[i][s]] = (int32_t)s;
		double gi = 0, set = 0, slotted = 0;
		size_t nl = 0;
		for (size_t s = 0; s < c->nsteps; s++)
			per[s] = 0;
		for (size_t j = 0; j < k->n; j++) {
			int32_t q = k->r->ops[j].step;
			if (k->hpos[j] < 0 || q < 0 || (size_t)q >= k->nbs || sof[q] < 0)
				continue;
			nl++;
			per[sof[q]] += (double)k->gap[j];
			int64_t m = k->slot[j] >= 0 ? c->med_all_g[k->slot[j]] : k->gap[j];
			gi += (double)m;
			if (k->slot[j] >= 0) {
				slotted += (double)m;
				set += k->gap[j] == m ? (double)m : 0;
			}
		}
		free(sof);
		x->rank = k->r->rank;
		x->host_launch_ms = x->host_launch_min_ms = x->host_launch_max_ms = NAN;
		x->ideal_host_launch_ms = x->ideal_share = NAN;
		if (!nl)
			continue; /* no launch known (an op table without launch times) */
		x->host_launch_ms = mean(per, c->nsteps) / 1e6;
		x->host_launch_min_ms = INFINITY;
		x->host_launch_max_ms = -INFINITY;
		for (size_t s = 0; s < c->nsteps; s++) {
			x->host_launch_min_ms = fmin(x->host_launch_min_ms, per[s] / 1e6);
			x->host_launch_max_ms = fmax(x->host_launch_max_ms, per[s] / 1e6);
		}
		x->ideal_host_launch_ms = gi / 1e6 / (double)c->nsteps;
		x->ideal_share = slotted > 0 ? set / slotted : 0;
	}
	free(per);
}

/* Rank i's own excess over its peers: its host gaps, first launch and the
 * durations of its compute and copies above their peers' medians (ns) --
 * what fixing it takes off its own work.  Unlike excess_task, a matched
 * collective's duration is left out: it is waiting and transfer, and a
 * rank that waits for a slow peer is not slow itself. */
static double own_excess(const struct ctx *c, size_t i)
{
	const struct rk *k = &c->k[i];
	double e = 0;
	for (size_t j = 0; j < k->n; j++) {
		int64_t md = peer_med(c, k, j, 0), mg = peer_med(c, k, j, 1);
		if (k->cat[j] < WC_COLL)
			e += (double)(k->d[j] > md ? k->d[j] - md : 0);
		if (k->hpos[j] >= 0)
			e += (double)(k->gap[j] > mg ? k->gap[j] - mg : 0);
	}
	if (k->a0 != UNSET && k->a0 > k->ma0)
		e += (double)(k->a0 - k->ma0) * (double)c->nsteps;
	return e;
}

/* The rank fix with the largest gain, replayed again with the rank of the
 * largest own excess among the others (the next-slowest: own_excess): its
 * then_rank and then_gain (whatif.h).  One replay; three ranks or more, and
 * another rank with some excess. */
static void then_fix(struct ctx *c, struct whatif *w, struct evald *v, double rep_mean)
{
	struct evald *b = NULL;
	for (size_t q = 0; q < w->nby_rank; q++) {
		v[q].f.then_rank = -1;
		v[q].f.then_gain_ms = v[q].f.then_gain_pct = NAN;
		if (!v[q].f.unknown && (!b || v[q].f.gain_ms > b->f.gain_ms))
			b = &v[q];
	}
	if (!b || c->n < 3)
		return;
	int ri = rank_index(c->a, b->f.rank), qi = -1;
	double qe = 0;
	for (size_t i = 0; i < c->n; i++) {
		if ((int)i == ri || (c->incomplete && c->incomplete[i]))
			continue;
		double e = own_excess(c, i);
		if (qi < 0 || e > qe) {
			qi = (int)i;
			qe = e;
		}
	}
	if (ri < 0 || qi < 0 || !(qe > 0))
		return;
	uint8_t *mask = xcalloc(c->n, 1);
	mask[ri] = mask[qi] = 1;
	struct evald e = { 0 };
	struct fjobs j = { 0 };
	add_job(&j, 0, (struct scen){ SC_SET, NULL, -1, PART_DUR | PART_HOST, 0 }, mask, c->n);
	run_jobs(c, &e, &j, rep_mean);
	b->f.then_rank = c->a->r[qi].rank;
	b->f.then_gain_ms = e.f.gain_ms;
	b->f.then_gain_pct = e.f.gain_pct;
	free(e.steps);
	free(e.wend);
	free(mask);
}

/* The what-if's step figures from the measured, unmodified and ideal steps. */
static void whatif_figures(const struct ctx *c, struct whatif *w, const double *meas, const double *rep,
			   const double *ideal)
{
	w->ok = 1;
	w->steps_used = c->nsteps;
	w->uncertainty_ms = (double)c->a->clock_spread_ns / 1e6;
	w->measured_step_ms = mean(meas, c->nsteps);
	double ux = 0;
	for (size_t s = 0; s < c->nsteps; s++)
		for (size_t i = 0; i < c->n; i++)
			ux += (double)c->k[i].unx[c->sidx[i][s]];
	w->unexplained_ms = ux / 1e6 / (double)c->nsteps / (double)c->n;
	w->unexplained_share = w->measured_step_ms > 0 ? w->unexplained_ms / w->measured_step_ms : 0;
	if (w->unexplained_share > 1)
		w->unexplained_share = 1;
	w->replay_step_ms = mean(rep, c->nsteps);
	w->ideal_step_ms = mean(ideal, c->nsteps);
	/* an ideal is never longer than the replayed step (host gaps take their
	 * ideal either way; a rank whose trace starts a step later leaves the
	 * others' first step without peers): then the replayed step is it */
	if (w->ideal_step_ms > w->replay_step_ms)
		w->ideal_step_ms = w->replay_step_ms;
	w->slowdown = w->ideal_step_ms > 0 ? w->measured_step_ms / w->ideal_step_ms : NAN;
	noise_floor(c, w, meas);
}

/* Per step: its ideal and the fix worth most in it. */
static void step_bests(const struct ctx *c, struct whatif *w, const double *rep, const double *ideal,
		       const struct evald *v, size_t nv)
{
	for (size_t s = 0; s < c->nsteps; s++) {
		struct whatif_step *st = &w->steps[s];
		st->ideal_ms = ideal[s];
		int bq = -1;
		for (size_t q = 0; q < nv; q++)
			if (bq < 0 || v[q].steps[s] < v[bq].steps[s])
				bq = (int)q;
		if (bq >= 0 && rep[s] - v[bq].steps[s] > 0) {
			st->best = xstrdup(v[bq].f.what);
			st->best_ms_if_fixed = v[bq].steps[s];
			st->best_gain_ms = rep[s] - v[bq].steps[s];
		}
	}
}

static void run_skip(struct analysis *a, int skip);

void whatif_run(struct analysis *a)
{
	run_skip(a, a->opts.skip_steps);
}

/* The what-if's thread (whatif_start): the skip as it was when it started. */
struct whatif_job { pthread_t th; struct analysis *a; int skip; };

static void *job_main(void *arg)
{
	struct whatif_job *j = arg;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	run_skip(j->a, j->skip);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (getenv("AORTA_TIMING")) /* as analysis_finish says it (bench/whatif_cost) */
		fprintf(stderr, "aorta: timing: what-if of %zu ranks: %.3f ms\n", j->a->n,
			(double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	return NULL;
}

int whatif_start(struct analysis *a)
{
	struct whatif_job *j = xcalloc(1, sizeof(*j));
	j->a = a;
	j->skip = a->opts.skip_steps;
	if (pthread_create(&j->th, NULL, job_main, j) != 0) {
		free(j);
		return 0;
	}
	a->whatif_job = j;
	return 1;
}

void whatif_wait(struct analysis *a)
{
	struct whatif_job *j = a->whatif_job;
	if (!j)
		return;
	pthread_join(j->th, NULL);
	a->whatif_job = NULL;
	free(j);
}

static void run_skip(struct analysis *a, int skip)
{
	phase(NULL);
	whatif_free(a->whatif);
	a->whatif = NULL;
	if (a->opts.what_if == WHATIF_SKIP) { /* analysis_rank kept no op table either */
		a->whatif = none("skipped (--no-what-if)");
		return;
	}
	if (a->n < 2 || !a->clocks_aligned) {
		a->whatif = none(a->n < 2 ? "one rank: nothing to replay across ranks"
				 : "no cross-rank figures (see no_cross_rank_reason)");
		return;
	}
	for (size_t i = 0; i < a->n; i++)
		if (!a->r[i].nops) {
			a->whatif = none("a rank has no op table (an analysis read back from JSON keeps none): "
					 "run analyze on the traces");
			return;
		}
	struct whatif *w = xcalloc(1, sizeof(*w));
	struct ctx c = { 0 };
	int *stage = xmalloc(a->n * sizeof(int)), *replica = xmalloc(a->n * sizeof(int));
	int nst = find_stages(a, stage, replica);
	ctx_init(&c, a, stage);
	phase("op tables");
	common_steps(&c, skip);
	if (!c.nsteps || c.manystreams) {
		ctx_free(&c);
		free(stage);
		free(replica);
		free(w);
		a->whatif = none(c.manystreams ? "a rank has more than 65535 streams: more than the replay follows"
			       : "no step that every rank has");
		return;
	}
	isolate_incomplete(&c); /* before the anchors and slots, which read the classes */
	build_groups(&c);
	build_anchors(&c);
	double *meas = xmalloc(c.nsteps * sizeof(double)), *rep = xmalloc(c.nsteps * sizeof(double));
	/* the measured windows: rk_init cut them */
	for (size_t s = 0; s < c.nsteps; s++)
		meas[s] = job_step(&c, NULL, 0, s) / 1e6;
	double *rep_wend = xmalloc(c.nsteps * sizeof(double)), *ideal = xmalloc(c.nsteps * sizeof(double));
	struct first f = { &c, w, meas, rep, rep_wend, ideal };
	struct spec sp;
	first_replays(&c, &f, &sp);
	phase("slots and the first replays");
	whatif_figures(&c, w, meas, rep, ideal);
	struct evald *v;
	size_t nv;
	/* the ideal's gain over the complete steps (NAN with one step): an op
	 * type gains at most that there too (the verdict's rule) */
	double icg = 0;
	for (size_t s = 0; s + 1 < c.nsteps; s++)
		icg += rep[s] - ideal[s];
	icg = c.nsteps >= 2 ? icg / (double)(c.nsteps - 1) : NAN;
	all_fixes(&c, w, stage, replica, nst, w->replay_step_ms, w->ideal_step_ms, icg, &sp, &v, &nv);
	for (size_t x = 0; x < sp.n; x++) { /* those all_fixes did not take */
		free(sp.e[x].steps);
		free(sp.e[x].wend);
	}
	free(sp.e);
	free(sp.rank);
	then_fix(&c, w, v, w->replay_step_ms);
	rank_hosts(&c, w);
	phase("fixes");
	step_bests(&c, w, rep, ideal, v, nv);
	w->by_rank = take(v, w->nby_rank);
	w->by_group = take(v + w->nby_rank, w->nby_group);
	w->by_op = take(v + w->nby_rank + w->nby_group, w->nby_op);
	verdict(&c, w, whatif_best(w), w->replay_step_ms, v, nv);
	for (size_t q = 0; q < nv; q++) {
		free(v[q].steps);
		free(v[q].wend);
	}
	free(v);
	w->stage = stage;
	w->nstage = nst ? a->n : 0;
	if (!nst) {
		free(stage);
		w->stage = NULL;
	}
	free(replica);
	free(meas);
	free(rep);
	free(rep_wend);
	free(ideal);
	ctx_free(&c);
	phase("verdict and free");
	a->whatif = w;
}

void whatif_free(struct whatif *w)
{
	if (!w)
		return;
	struct whatif_fix *f[3] = { w->by_rank, w->by_group, w->by_op };
	size_t n[3] = { w->nby_rank, w->nby_group, w->nby_op };
	for (int k = 0; k < 3; k++) {
		for (size_t q = 0; q < n[k]; q++) {
			free(f[k][q].what);
			free(f[k][q].ranks);
			free(f[k][q].unknown);
		}
		free(f[k]);
	}
	for (size_t s = 0; s < w->nsteps; s++) {
		free(w->steps[s].reason);
		free(w->steps[s].best);
	}
	free(w->steps);
	for (size_t q = 0; q < w->ncp; q++)
		free(w->cp[q].what);
	free(w->cp);
	free(w->stage);
	free(w->why);
	free(w->verdict);
	free(w->noise_floor_from);
	free(w->ranks);
	free(w);
}
