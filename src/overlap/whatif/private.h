/*
 * private.h - the what-if's one private header: its model, the replay's
 * state and the functions its files share (docs/metrics.md "What-if").
 *
 * The what-if is what fixing a rank, a group or an operation type is worth:
 * a deterministic replay of the joined timeline.  Its files, one job each:
 *   optable.c      the op table of one rank, from its timeline (analysis_rank)
 *   inputs.c       each rank's measured inputs on the aligned clock
 *   collectives.c  the join's matched collectives as the replay's calls
 *   slots.c        slots (the same op on the ranks of a work class) and
 *                  their ideals, the first launches' ideals
 *   scenario.c     a fix as values: durations, host gaps, transfers
 *   replay.c       the replay (lanes of scenarios in one pass)
 *   path.c         the cross-rank critical path of a replay
 *   fixes.c        the fixes (ranks, stages, replicas, groups, op types)
 *   balance.c      the stage balance fix
 *   verdict.c      the fix the verdict names, the verdict sentence
 *   result.c       struct whatif from the replays
 *   whatif.c       the stage: stages, common steps, the order of the work
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
#ifndef AORTA_WHATIF_PRIVATE_H
#define AORTA_WHATIF_PRIVATE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

#include "overlap/analysis.h"
#include "overlap/whatif.h"

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

enum wcat { WC_GEMM, WC_ATTN, WC_COMPUTE, WC_MEMORY, WC_HOST, WC_COLL, WC__N = WC_COLL + COLL__COUNT };

/* A launch, in launch order: its op, the op the host waited for before it
 * (-1). */
struct host_launch { int32_t j, hdep; uint16_t hsid; /* hdep's stream (index) */ };

/* What every replay reads of one op and none changes. */
struct op_input {
	int32_t lat;                 /* measured latency (ns); LAT_BIG: in k->latx (op_lat) */
	int32_t snext, grp;          /* next op on its stream, -1; matched collective, -1 (once the
	                              * collectives are built: its call's index in c->gm) */
	int32_t step, dep;           /* as struct whatif_op */
	uint8_t bar;                 /* it waits for its rank's previous step (step >= 1) */
	uint8_t hasl;                /* its launch is known */
	uint16_t dsid;               /* dep's stream (index, rk_streams), whether it has ended (op_ended) */
};

#define LAT_BIG INT32_MIN    /* struct op_input lat: the latency does not fit in 32 bits (k->latx) */

/* What one replay writes for one op (one replay state per worker, so
 * scenarios replay at once on several threads).  The scenario's duration,
 * transfer and host gap of an op are not stored: the replay takes them from
 * the rank's measured arrays and the scenario as it reaches the op
 * (op_dur, op_gap, op_xfer). */
struct op_times {
	int64_t E, L;                /* replayed end, launch (the start: E - duration, of a matched
	                              * call in struct replay_state gs; op_start) */
};

/* A call of a matched collective of the join: its size and type (the class
 * of its ideal transfer), its op, its call (index as r->inst) and its
 * collective (matched with two or more calls when c->g[grp].n >= 2). */
struct matched_call { uint64_t bytes; int32_t j, inst, grp, m; uint8_t type; }; /* m: its place in c->gm */

/* One rank's measured inputs (read-only once the set-up is done). */
struct rank_input {
	/* what the replay reads on every visit of the rank, first (one cache line) */
	struct op_input *o;               /* per op */
	struct host_launch *hl;              /* the launches in launch order */
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
	struct matched_call *gc;            /* the calls of the join's matched collectives, in op order */
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
struct step_times { int64_t ws, we, bE; int32_t wlast; };

enum { SC_NONE, SC_SET, SC_CAT, SC_ALL, SC_BAL };
enum { PART_DUR = 1, PART_HOST = 2 };

struct scenario {
	int type;
	const uint8_t *mask;  /* SC_SET: the ranks fixed (index as a->r) */
	int single;           /* SC_SET of one rank: its index, else -1 */
	int part;             /* SC_SET: PART_DUR | PART_HOST */
	int cat;              /* SC_CAT */
};

/* One replay's state of one rank (K lanes: the worker's). */
struct rank_replay {
	struct op_times *o;               /* per op, per lane: o[j * K + v] */
	int64_t *lastE;              /* per stream, per lane: the end of the op it moved past last (UNSET: none) */
	struct step_times *b;               /* per step index, per lane */
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
struct coll_group { size_t at, n, arrived; };
/* ... and per lane its last arrival: start, rank, op. */
struct last_arrival { int64_t s; int32_t r, o; };

/* One worker's replay state: per rank, per collective, the work list. */
struct replay_state {
	struct rank_replay *k;
	struct coll_group *g;
	struct last_arrival *gl;            /* per collective, per lane */
	int64_t *gs;                 /* per call of a matched collective (index as c->gm), per lane: its start */
	uint8_t **lft;               /* after a replay that stalled: per rank, per op, 1 if left where it
	                              * was (S = E = its measured start), else NULL */
	int32_t *stack;
	size_t nstack;
	size_t *cmask;               /* of each work class, the ranks in the set being fixed (set_medians) */
	size_t K, kcap;              /* lanes of the last pass; lanes allocated */
	struct scenario sc[LANES_MAX];   /* each lane's scenario (its mask: only while it runs) */
	int64_t *md[LANES_MAX], *mg[LANES_MAX]; /* SC_SET of several ranks: per slot, the set's medians */
	char *ob;                    /* every rank's o[], one mapping (NULL: each rank's own allocation) */
	size_t obn;                  /* its bytes */
};

struct op_ref { int32_t ri, j; };

struct whatif_ctx {
	struct analysis *a;
	struct rank_input *k;
	size_t n;
	struct coll_group *g;              /* the collectives' members (at, n); the replay state is per worker */
	size_t ng;
	struct op_ref *gm;            /* group members */
	int64_t *gx, *gxi;           /* beside gm: each call's measured and ideal transfer (matched calls) */
	int32_t *gmq;                /* beside gm: its collective */
	uint16_t *gmsid;             /* beside gm: its op's stream (index) */
	size_t ngm;                  /* gm's calls */
	struct op_ref *sm;            /* slot members, slot by slot */
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
	struct replay_state *w;               /* per worker thread, allocated at its first replay */
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
	int manystreams;             /* a rank has more streams than struct op_input's dsid holds */
};

/* Op j's latency (p: its struct op_input). */
static inline int64_t op_lat(const struct rank_input *k, const struct op_input *p, size_t j)
{
	return p->lat != LAT_BIG ? p->lat : k->latx[j];
}

/* Op j's measured start and end on the aligned clock. */
static inline int64_t meas_s(const struct rank_input *k, size_t j)
{
	return analysis_aligned(k->r, k->r->ops[j].start_ns);
}

static inline int64_t meas_e(const struct rank_input *k, size_t j)
{
	return analysis_aligned(k->r, k->r->ops[j].end_ns);
}

/* Pieces of the critical path (path.c): per rank, stream and category. */
struct path_piece { int32_t ri, stream; int cat; int64_t ns; };
struct path_table { struct path_piece *e; size_t n, cap; int64_t total; };

/* One evaluated fix: its per-step times and work ends (ms) beside the result. */
struct fix_eval { struct whatif_fix f; double *steps, *wend; };

/* The fixes to replay, each a scenario (its mask owned) and its place in
 * the fixes, replayed at once on the workers (run_jobs). */
struct fix_job { struct scenario sc; uint8_t *mask; size_t e; };
struct fix_jobs { struct fix_job *v; size_t n, cap; };

/* The single-rank fixes replayed beside the unmodified and ideal replays
 * (whatif_run: the ranks rank_candidates names with a threshold a little
 * above the one it will have), each taken by all_fixes if it names that
 * rank too (then its result is the same as a replay there). */
struct early_fixes { int32_t *rank; struct fix_eval *e; size_t n; };


/* optable.c */
int32_t *wi_launch_order(const struct whatif_op *op, size_t n, size_t *nh);
int wi_cmp_i64(const void *a, const void *b);

/* inputs.c */
const char *wi_cat_name(int c, char *buf, size_t n);
int wi_op_cat(const struct whatif_op *o);
size_t wi_rank_bytes(size_t n);
void wi_rank_init(struct whatif_ctx *c, size_t i);
void wi_rank_free(const struct whatif_ctx *c, struct rank_input *k);

/* collectives.c */
void wi_build_groups(struct whatif_ctx *c);

/* slots.c */
int64_t wi_peer_median(const struct whatif_ctx *c, const struct rank_input *k, size_t j, int part);
void wi_occurrences(const struct rank_input *k, uint32_t *occ);
void wi_build_slots(struct whatif_ctx *c);
void wi_set_medians(const struct whatif_ctx *c, size_t *cmask, const uint8_t *mask, int64_t *md, int64_t *mg);
size_t wi_anchor_group(const struct whatif_ctx *c, size_t a);
void wi_build_anchors(struct whatif_ctx *c);

/* scenario.c */
int64_t wi_dur_fixed(const struct whatif_ctx *c, const struct scenario *sc, const int64_t *md, const struct rank_input *k, size_t i, size_t j);
int64_t wi_gap_fixed(const struct whatif_ctx *c, const struct scenario *sc, const int64_t *mg, const struct rank_input *k, size_t j);
int wi_set_scenario(const struct whatif_ctx *c, struct replay_state *s, size_t v, const struct scenario *sc);

/* replay.c */
int64_t wi_op_start(const struct whatif_ctx *c, const struct replay_state *w, size_t v, size_t i, size_t j);
double wi_job_step(const struct whatif_ctx *c, const struct replay_state *w, size_t v, size_t s);
size_t wi_replay_lanes(const struct whatif_ctx *c, struct replay_state *s, size_t n, const struct scenario *sc, double **out, int *replayed, size_t *lane);
void wi_work_ends(const struct whatif_ctx *c, const struct replay_state *w, size_t v, double *out);
struct replay_state *wi_worker(struct whatif_ctx *c, size_t w, size_t kcap);
void wi_workers_free(struct whatif_ctx *c);

/* path.c */
void wi_path_walk(const struct whatif_ctx *c, const struct replay_state *w, size_t v, size_t s, struct path_table *t);

/* fixes.c */
void wi_add_job(struct fix_jobs *j, size_t e, struct scenario sc, const uint8_t *mask, size_t n);
void wi_run_jobs(struct whatif_ctx *c, struct fix_eval *v, struct fix_jobs *j, double rep_mean);
void wi_excess_task(void *arg, size_t w, size_t i);
size_t wi_rank_candidates(const struct whatif_ctx *c, int32_t *out, double lim_ms);
void wi_all_fixes(struct whatif_ctx *c, struct whatif *w, const int *stage, const int *replica, int nst, double rep_mean, double ideal_mean, double ideal_complete, struct early_fixes *sp, struct fix_eval **pv, size_t *pn);

/* balance.c */
void wi_balance_free(struct whatif_ctx *c);
int wi_balance_build(struct whatif_ctx *c);

/* verdict.c */
void wi_verdict(struct whatif_ctx *c, struct whatif *w, const struct whatif_fix *best, double rep_mean, const struct fix_eval *v, size_t nv);

/* result.c */
struct whatif *wi_none(const char *why);
void wi_base_replay(const struct whatif_ctx *c, const struct replay_state *ws, size_t v, struct whatif *w, const double *meas, const double *rep, size_t left);
struct whatif_fix *wi_take_fixes(struct fix_eval *v, size_t n);
void wi_figures(const struct whatif_ctx *c, struct whatif *w, const double *meas, const double *rep, const double *ideal);
void wi_step_bests(const struct whatif_ctx *c, struct whatif *w, const double *rep, const double *ideal, const struct fix_eval *v, size_t nv);

/* whatif.c */
int wi_rank_index(const struct analysis *a, int rank);

static inline double wi_mean(const double *v, size_t n)
{
	double s = 0;
	for (size_t q = 0; q < n; q++)
		s += v[q];
	return n ? s / (double)n : NAN;
}

/* The transfer of a matched call whose measured transfer is xm and ideal
 * xi (op j of rank k) under sc: its type's ideal when the scenario fixes
 * transfers of its type (at most xm). */
static inline int64_t xfer_of(const struct scenario *sc, const struct rank_input *k, size_t j, int64_t xm, int64_t xi)
{
	if (sc->type == SC_ALL || (sc->type == SC_CAT && sc->cat >= WC_COLL && sc->cat == k->cat[j]))
		return xi < xm ? xi : xm;
	return xm;
}

/* In lane v of worker state s's replay (its scenario s->sc[v]): the
 * duration of op j of rank i (not a matched call), its host gap (launch
 * known) and the transfer of matched call m (index as c->gm). */
static inline int64_t op_dur(const struct whatif_ctx *c, const struct replay_state *s, size_t v, size_t i, size_t j)
{
	const struct rank_input *k = &c->k[i];
	return s->k[i].fix >> v & 1 ? wi_dur_fixed(c, &s->sc[v], s->md[v], k, i, j) : k->d[j];
}

static inline int64_t op_gap(const struct whatif_ctx *c, const struct replay_state *s, size_t v, size_t i, size_t j)
{
	const struct rank_input *k = &c->k[i];
	return s->k[i].fix >> v & 1 ? wi_gap_fixed(c, &s->sc[v], s->mg[v], k, j) : k->gap[j];
}

static inline int64_t op_xfer(const struct whatif_ctx *c, const struct replay_state *s, size_t v, size_t m)
{
	struct op_ref u = c->gm[m];
	return s->k[u.ri].fix >> v & 1 ? xfer_of(&s->sc[v], &c->k[u.ri], (size_t)u.j, c->gx[m], c->gxi[m])
				       : c->gx[m];
}

#endif
