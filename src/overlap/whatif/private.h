/*
 * private.h - the what-if's one private header: its model, the replay's
 * state and the functions its files share (docs/metrics.md "What-if").
 *
 * The what-if is what fixing a rank, a group or an operation type is worth:
 * a deterministic replay of the joined timeline.  Its files, one job each:
 *   optable.c      the op table of one rank, from its timeline (analysis_rank)
 *   walk.c         a rank's measured ops in launch and stream order
 *   inputs.c       each rank's measured inputs on the aligned clock
 *   incomplete.c   ranks whose trace lacks their class's ops (no peers)
 *   collectives.c  the join's matched collectives as the replay's calls
 *   slots.c        slots (the same op on the ranks of a work class) and
 *                  their ideals, the first launches' ideals
 *   scenario.c     a fix as values: durations, host gaps, transfers
 *   replay.c       the replay (lanes of scenarios in one pass)
 *   path.c         the cross-rank critical path of a replay
 *   fixes.c        the fixes (ranks, stages, replicas, groups, op types),
 *                  the next-slowest rank after the best rank fix
 *   balance.c      the ideals that move work: the stage balance fix, the
 *                  pooled ideal (Lin et al.'s)
 *   verdict.c      the fix the verdict names, the verdict sentence
 *   result.c       struct whatif from the replays (the noise floor, each
 *                  rank's host launch time)
 *   whatif.c       the stage: stages, common steps, the order of the work
 *
 * The model.  Per rank, analysis_rank keeps an op table: every device op
 * in start order with its stream, host launch time, step and collective
 * call.  On the aligned clock the replay re-times every op:
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
 * OSDI'25); beside them the pooled ideal, the artifact's (every op at the
 * job's mean of its name, every transfer at its type's median: a balanced
 * job, slowdown_pooled).  The critical path of a step is walked back from its last end
 * through whatever set each start (stream, launch, dependency, last
 * arrival).
 *
 * Memory follows the events: the op table holds 12 bytes an op (start,
 * duration, launch and a key for name, kind and stream; steps as runs; the
 * inferred dependencies as lists beside), the what-if adds one byte an op
 * (flags) and reads every duration, gap and latency from the op table as it
 * reaches the op, and a replay keeps no time per op: per stream its head
 * and the launches not yet started, per step its window, per collective its
 * last arrival, per op that another waits for its end.  The critical path
 * of the unmodified replay reads its times as the measured ones but where
 * the replay moved them (kept aside while it runs).  A rank's launch order
 * is its streams' launches merged (each stream launches in its own order;
 * a rank where one does not keeps its order whole).
 *
 * Cost: one replay is O(ops + calls); the fixes are at most 8 + groups +
 * types + 3 replays, so the what-if costs a few passes over the op tables.
 * The order in which ops start depends on no time, so the first replays
 * (unmodified, ideal, the sure single-rank fix) run as lanes of one pass
 * (wi_replay_lanes) that reads each op's inputs once.  It runs on the
 * analysis's threads (-j, base/pool.h): the set-up per rank, collective or
 * slot range, and the later fixes at once, each in its own replay state
 * (at most WORKERS_MAX); each result is written to its own place and read
 * in the fixes' order, so no figure depends on the thread count
 * (bench/RESULTS.md "What-if cost").
 */
#ifndef AORTA_WHATIF_PRIVATE_H
#define AORTA_WHATIF_PRIVATE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "overlap/analysis.h"
#include "overlap/whatif.h"

#define LAT_MAX_NS 20000     /* a start this close after its ready time is launch latency */
#define DEP_LAG_NS 20000     /* another stream's end this close before a start explains it */
#define DEP_SLACK_NS 5000    /* ... or this close after it (the streams' clocks jitter by a few us) */
#define FEED_TOL_NS 20000    /* a collective feeds an op starting this close before its end (sched_deps) */
#define ROUND_NS 10          /* ends and starts this close are the same instant (rounding of us/ms inputs) */
#define SYNC_LAG_NS 5000     /* an op ending this close after a sync record is what it waited for */
#define NARROW_SHARE 0.9     /* a rank or group fix with this share of the best gain is named instead */
#define UNX_SHARE 0.05       /* unexplained delays of this share of the step make the verdict inconclusive */
#define REPRO_PCT 3.0        /* the replay must reproduce each rank's step within this */
#define ALL_RANKS_MAX 8      /* up to this many ranks every rank is fixed in turn */
#define RANK_FIXES 8         /* beyond, the ranks with the largest excess */
#define WORKERS_MAX 4        /* replays at once (each holds its own replay state) */
#define LANES_MAX 5          /* scenarios replayed in one pass */
#define UNSET INT64_MIN

/* ---- the op table (optable.c): one block per rank --------------------------- */

#define OT_ESC32 UINT32_MAX  /* start: the value is in the escapes */
#define OT_ESC24 0xFFFFFEu   /* duration, launch lag: the value is in the escapes */
#define OT_NONE24 0xFFFFFFu  /* launch lag: no launch known */
#define OT_ESC16 UINT16_MAX  /* key: the value is in the escapes */
enum { OT_E_START, OT_E_DUR, OT_E_LAG, OT_E_KEY, OT_E__N };

/* A value that does not fit its field, by op. */
struct ot_esc { uint32_t j, pad; int64_t v; };
/* What ops share: the name (its FNV-1a hash), the kind and the stream. */
struct ot_key { uint32_t hash; int32_t stream; uint8_t kind, pad[3]; };
/* Ops j.. (up to the next run) belong to step index `step` (-1: none). */
struct ot_run { uint32_t j; int32_t step; };
/* Where a dependency comes from (ot_link.how; docs/metrics.md "What-if"):
 * a guess from the times (another stream's op that ended just before), a
 * record of the trace (a stream wait or host synchronisation paired with
 * its event record), the op table's `after` column, the pipeline schedule
 * (ops without launches: a compute op after the recv that feeds it, a
 * send or collective after the compute before it). */
enum { DEPK_GUESS = 0, DEPK_RECORD = DEP_RECORD, DEPK_TABLE = DEP_TABLE, DEPK_SCHED, DEPK__N };

/* Op j waited for op `to` (a dependency, a host synchronisation); how: DEPK_*. */
struct ot_link { uint32_t j; int32_t to; uint8_t how, pad[3]; };

/* One rank's op table, read in place (its block: optable.c).  Ops in start
 * order; times in the rank's own clock: start = base + start[j] (escape),
 * end = start + dur, launch = start - lag. */
struct op_view {
	/* what the replay reads for every op, first (one cache line) */
	const uint32_t *start;
	const uint8_t *dur, *lag;    /* 3 bytes an op, little end first */
	const uint8_t *key8;         /* the key, a byte an op where the rank has fewer than 255 keys, */
	const uint16_t *key16;       /* else two */
	const struct ot_run *runs;
	int64_t base;
	size_t nrun;
	size_t n;
	const struct ot_key *keys;
	size_t nkey;
	const struct ot_link *dep, *hdep;
	size_t ndep, nhdep;
	const uint32_t *bar;         /* ops that waited for their rank's previous step (inferred) */
	size_t nbar;
	const struct ot_esc *esc[OT_E__N];
	size_t nesc[OT_E__N];
};

void ot_view(const struct rank_result *r, struct op_view *t);
int64_t ot_escape(const struct op_view *t, int which, size_t j);
/* Index of op j in a sorted list of records whose first member is j (-1). */
ptrdiff_t wi_find_op(const void *v, size_t n, size_t size, int32_t j);
/* The step index of op j (binary search over the runs; -1: none). */
int32_t ot_step(const struct op_view *t, size_t j);

static inline uint32_t ot_u24(const uint8_t *p, size_t j)
{
	p += 3 * j;
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
}

static inline int64_t ot_start(const struct op_view *t, size_t j)
{
	uint32_t v = t->start[j];
	return v != OT_ESC32 ? t->base + (int64_t)v : ot_escape(t, OT_E_START, j);
}

static inline int64_t ot_dur(const struct op_view *t, size_t j)
{
	uint32_t v = ot_u24(t->dur, j);
	return v != OT_ESC24 ? (int64_t)v : ot_escape(t, OT_E_DUR, j);
}

static inline int64_t ot_end(const struct op_view *t, size_t j)
{
	return ot_start(t, j) + ot_dur(t, j);
}

static inline int ot_has_launch(const struct op_view *t, size_t j)
{
	return ot_u24(t->lag, j) != OT_NONE24;
}

/* Op j's launch (own clock), INT64_MIN when unknown. */
static inline int64_t ot_launch(const struct op_view *t, size_t j)
{
	uint32_t v = ot_u24(t->lag, j);
	if (v == OT_NONE24)
		return INT64_MIN;
	return ot_start(t, j) - (v != OT_ESC24 ? (int64_t)v : ot_escape(t, OT_E_LAG, j));
}

static inline size_t ot_keyi(const struct op_view *t, size_t j)
{
	if (t->key8)
		return t->key8[j];
	uint16_t v = t->key16[j];
	return v != OT_ESC16 ? v : (size_t)ot_escape(t, OT_E_KEY, j);
}

static inline const struct ot_key *ot_key(const struct op_view *t, size_t j)
{
	return &t->keys[ot_keyi(t, j)];
}

/* A forward cursor over the step runs (ops visited in increasing j). */
static inline int32_t ot_step_at(const struct op_view *t, uint32_t *run, size_t j)
{
	while (*run + 1 < t->nrun && t->runs[*run + 1].j <= j)
		(*run)++;
	return *run < t->nrun && t->runs[*run].j <= j ? t->runs[*run].step : -1;
}

/* ---- a rank's measured inputs (inputs.c) ---------------------------------------- */

/* WC_UCOLL + type: communication the join could not match across ranks
 * (a call of part of its group, of unknown peer, of unknown type with
 * counts that differ).  Communication is never compute: such a call keeps
 * its measured duration in every replay (its waiting cannot be told from
 * its transfer, so no ideal exists for it: wi_dur_fixed), is no op-type
 * fix, and the critical path names it "unmatched <type>". */
enum wcat { WC_GEMM, WC_ATTN, WC_COMPUTE, WC_MEMORY, WC_HOST, WC_COLL, WC_UCOLL = WC_COLL + COLL__COUNT,
	    WC__N = WC_UCOLL + COLL__COUNT };

/* Per op, what the replay checks before it looks an op up in a list. */
enum {
	OPF_DEP = 1,                 /* it waited for another stream's op (deps) */
	OPF_HDEP = 2,                /* its launch waited for an op (hdeps) */
	OPF_BAR = 4,                 /* it waited for its rank's previous step (step >= 1) */
	OPF_REF = 8,                 /* another op or the host waits for its end (refs) */
	OPF_CALL = 16,               /* a call of a matched collective (calls) */
	OPF_LAUNCH = 32,             /* its launch is known */
	OPF_UCOMM = 64,              /* communication no matched collective holds (WC_UCOLL): as measured */
	OPF_GBAR = 128,              /* without a launch, it waited for the job's previous step (every rank's) */
};

/* An unmatched call (OPF_UCOMM): its op and its collective type. */
struct ucomm_in { int32_t j; uint8_t type, pad[3]; };

/* A dependency of op j on op d (on stream dq), whose end is refs' entry ref. */
struct dep_in { int32_t j, d, ref; uint16_t dq; uint8_t how; };
/* A matched call: its op and its place m in the collectives' members. */
struct call_in { int32_t j, m; };

/* One rank's measured inputs (read-only once the set-up is done). */
struct rank_input {
	/* what the replay reads on every visit of the rank, first: its clock
	 * (as analysis_aligned reads it from r, copied here), its sizes, its
	 * per-op flags and the op table's own first line */
	int64_t clock_offset_ns, clock_t0_ns;
	double clock_drift;
	uint8_t *flags;              /* per op: OPF_* */
	uint8_t *snext;              /* per op: the next op on its stream this many ops on (0: none;
	                              * SNEXT_FAR: at least that far, found by a scan) */
	uint16_t *gap;               /* per op: its measured host gap (0 without a launch; GAP_ESC: in gapx) */
	uint16_t *kq;                /* per key: its stream (dense index, in order of first appearance) */
	size_t n, nstr, nbs, nh;     /* ops, streams, step indices, launches */
	struct op_view t;
	const struct rank_result *r;
	int32_t *shead;              /* per stream: its first op */
	struct dep_in *deps;         /* sorted by j */
	size_t ndeps;
	struct dep_in *hdeps;        /* the launches that waited for an op, sorted by j */
	size_t nhdeps;
	int32_t *hdord;              /* their launch order: indices into hdeps */
	size_t *hdpos;               /* beside hdord: the launch's place in the launch order */
	int32_t *refs;               /* ops whose end is waited for, sorted */
	size_t nrefs;
	struct call_in *calls;       /* sorted by j */
	size_t ncalls;
	struct ucomm_in *ucomm;      /* the unmatched calls with a call record (r->inst), sorted by j */
	size_t nucomm;
	struct ot_esc *gapx;         /* the gaps that do not fit gap, by op */
	size_t ngapx;
	int32_t *lorder;             /* the launch order, where a stream's launches are not in its order, else NULL */
	int32_t *slot;               /* per op, its slot, where its class is not aligned, else NULL */
	int64_t *mws, *mwe;          /* the measured step windows, per step index of the rank */
	/* step barriers, per step index: measured latest end; ops;
	 * unexplained delay (ns) */
	int64_t *bm, *unx;
	int32_t *cst;                /* per step index: its common step (-1: none; set with c->gbar) */
	size_t *bn;
	uint64_t unexplained;        /* ops whose delay nothing explains */
	uint64_t ndepk[DEPK__N];     /* its dependencies by where they come from */
	int cls;                     /* work class (stage or 0) */
	int hassync;                 /* a launch waited for a synchronisation (an op with hdep) */
	int manystreams;             /* more streams than a dense index holds (nothing else set up) */
	/* the first launch (aligned; UNSET without launches), its peers' lower
	 * median (the ranks of its class whose first launch is in the same
	 * step); the step number of the first launch */
	int64_t a0, ma0, astep;
};

/* A time of rank k on the aligned clock (analysis_aligned). */
static inline int64_t rank_aligned(const struct rank_input *k, int64_t t)
{
	if (k->clock_drift == 0) /* the drift term is 0 exactly: no conversion */
		return t - k->clock_offset_ns;
	return t - k->clock_offset_ns - (int64_t)(k->clock_drift * (double)(t - k->clock_t0_ns));
}

/* Op j's measured start, end and launch on the aligned clock. */
static inline int64_t meas_s(const struct rank_input *k, size_t j)
{
	return rank_aligned(k, ot_start(&k->t, j));
}

static inline int64_t meas_e(const struct rank_input *k, size_t j)
{
	return rank_aligned(k, ot_end(&k->t, j));
}

static inline int64_t meas_l(const struct rank_input *k, size_t j)
{
	int64_t l = ot_launch(&k->t, j);
	return l == INT64_MIN ? UNSET : rank_aligned(k, l);
}

static inline size_t op_stream(const struct rank_input *k, size_t j)
{
	return k->kq[ot_keyi(&k->t, j)];
}

#define SNEXT_FAR 255

/* The next op on stream q after op j (-1: none). */
static inline int32_t next_on_stream(const struct rank_input *k, int32_t j, size_t q)
{
	uint8_t d = k->snext[j];
	if (d != SNEXT_FAR)
		return d ? j + d : -1;
	for (size_t x = (size_t)j + SNEXT_FAR; x < k->n; x++)
		if (op_stream(k, x) == q)
			return (int32_t)x;
	return -1;
}

#define GAP_ESC UINT16_MAX

/* Op j's measured host gap: the time since the launch before it in launch
 * order, or after a synchronisation the host's own time after the op it
 * waited for (0 without a launch, and for the first launch). */
static inline int64_t op_gap(const struct rank_input *k, size_t j)
{
	uint16_t g = k->gap[j];
	if (g != GAP_ESC)
		return g;
	ptrdiff_t x = wi_find_op(k->gapx, k->ngapx, sizeof(*k->gapx), (int32_t)j);
	return x >= 0 ? k->gapx[x].v : 0;
}

/* The previous op on stream q before op j (-1: none). */
static inline int32_t prev_on_stream(const struct rank_input *k, int32_t j, size_t q)
{
	for (int32_t x = j - 1; x >= 0; x--)
		if (op_stream(k, (size_t)x) == q)
			return x;
	return -1;
}

/* ---- a rank's launch order (walk.c) -------------------------------------------- */

/* The host in launch order: the streams' launches merged by (launch, op),
 * or the rank's lorder. */
struct host_walk {
	int32_t *hc;                 /* per stream: its next op with a launch (merge), -1 */
	int32_t *hpos;               /* beside: that op's place in the stream */
	int64_t *hl;                 /* beside: that op's launch (own clock) */
	size_t p;                    /* launches walked */
};
void hw_init(const struct rank_input *k, struct host_walk *h);
/* Back to the first launch (the arrays kept). */
void hw_reset(const struct rank_input *k, struct host_walk *h);
void hw_release(struct host_walk *h);
/* The next op in launch order, -1 after the last; *q its stream, *pos its
 * place there (-1 where the rank keeps its order whole). */
int32_t hw_next(const struct rank_input *k, struct host_walk *h, size_t *q, int32_t *pos);

/* ---- the replay context ------------------------------------------------------------ */

enum { SC_NONE, SC_SET, SC_CAT, SC_ALL, SC_BAL, SC_POOL };
enum { PART_DUR = 1, PART_HOST = 2 };

struct scenario {
	int type;
	const uint8_t *mask;  /* SC_SET: the ranks fixed (index as a->r) */
	int single;           /* SC_SET of one rank: its index, else -1 */
	int part;             /* SC_SET: PART_DUR | PART_HOST */
	int cat;              /* SC_CAT */
	const int64_t *md, *mg; /* SC_SET of several ranks: per slot, the set's medians (fixes.c) */
	int nodelay;          /* every delay nothing explains (lat > LAT_MAX_NS) taken out: the
	                       * step without unexplained delays (Lin et al.'s T_nodelay) */
	int noguess;          /* guessed dependencies left out: their op keeps its measured
	                       * delay after its stream and launch (the floor's guess term) */
};

/* A call of a matched collective: its rank and op, the class of its ideal
 * transfer (type and size) and its type. */
struct member { int32_t ri, j; uint32_t xcls; uint8_t type, pad[3]; };

/* A matched collective: its members in c->gm; its measured last arrival. */
struct coll_group { size_t at, n; int64_t last; };

/* One replay's state of one step index of a rank, per lane: its window
 * (first start, end), its latest end so far and the first op (in op order)
 * with it. */
struct step_times { int64_t ws, we, bE; int32_t wlast; };

/* ... and per lane a collective's last arrival: start, rank, op. */
struct last_arrival { int64_t s; int32_t r, o; };

/* Launches the replay's host has timed and its device not yet started,
 * per stream in launch order: op, then its launch in each lane. */
struct launch_queue { int32_t *j; int64_t *L; size_t at, len, cap; };

/* One replay's state of one stream of a rank (the lane-independent part):
 * its head and what the replay reads of it, read from the op table once. */
struct stream_replay {
	int32_t head;                /* the op at its head (-1: it is done) */
	int32_t pos;                 /* its place in the stream */
	uint32_t run;                /* the step-run cursor at the head */
	int32_t st;                  /* the head's step index (-1: none) */
	uint8_t hst;                 /* its head has not started (0), has ended (1), is a matched call
	                              * waiting for its collective (2) */
	uint8_t f;                   /* the head's flags */
	int64_t ts, te, la;          /* the head's measured start, end and launch (UNSET: unknown) */
	int64_t prev_te;             /* the measured end of the op before the head (UNSET: none) */
	struct launch_queue lq;
};

/* One replay's state of one rank (K lanes: the worker's). */
struct rank_replay {
	struct stream_replay *s;     /* per stream */
	int64_t *lastE;              /* per stream, per lane: the end of the op it moved past last (UNSET: none) */
	int64_t *headE, *headS;      /* per stream, per lane: its head's end once ended; a waiting call's start */
	struct step_times *b;        /* per step index, per lane */
	int32_t *brem;               /* per step index: its ops not yet ended (the step barrier) */
	int64_t *refE;               /* per ref, per lane: its end once ended */
	struct host_walk hw;         /* the host as timed (hp) */
	/* the host as the unmodified replay would have walked it (launched:
	 * before the hdord entry ehd, at ehp launches), and as timed so far
	 * (hp launches, the last at lastL) */
	size_t ehp, ehd, hp;
	int64_t a2[LANES_MAX];       /* the first launch's anchor in this replay */
	int64_t lastL[LANES_MAX];    /* the last launch replayed (hp > 0) */
	int inq;
	unsigned fix;                /* bit v: lane v's scenario changes this rank's ops (else: as measured) */
};

/* Where the unmodified replay moved an op from its measured end or launch
 * (recorded for one lane while it runs; the critical path reads them). */
struct moved { int32_t ri, j; int64_t E, L; uint8_t hasE, hasL, used, pad; };
struct moved_map { struct moved *e; size_t n, cap; };

/* One worker's replay state: per rank, per collective, the work list. */
struct replay_state {
	struct rank_replay *k;
	size_t *arrived;             /* per collective: its calls arrived */
	struct last_arrival *gl;     /* per collective, per lane */
	int32_t *stack;
	size_t nstack;
	size_t K, kcap;              /* lanes of the last pass; lanes allocated */
	struct scenario sc[LANES_MAX]; /* each lane's scenario (its mask: only while it runs) */
	int mlane;                   /* the lane whose moves are recorded, -1 */
	int32_t *grem;               /* c->gbar: per common step, its ops over the ranks not yet ended */
	int64_t *gE;                 /* ... and per lane its latest end over the ranks */
	size_t nranks;
	struct moved_map moved;
	size_t left;                 /* ops the last pass left unreplayed (a stall) */
};

struct op_ref { int32_t ri, j; };

/* A work class whose ranks run the same ops on each stream in the same
 * order as its first rank: its slots by stream and place. */
struct class_slots { int32_t **at; size_t nstr; };

struct whatif_ctx {
	struct analysis *a;
	struct rank_input *k;
	size_t n;
	int gbar;                    /* an op waited for the job's previous step (OPF_GBAR) */
	int nodelay_all;             /* every replay without the unexplained delays: traces without
	                              * launches whose delays cost the step little (launch delays) */
	int64_t *gbe;                /* then per common step: its measured latest end over the ranks */
	int32_t *gbn;                /* ... and its ops over the ranks */
	struct coll_group *g;        /* the collectives */
	size_t ng;
	struct member *gm;           /* their members */
	int32_t *gmq;                /* beside gm: its collective */
	uint32_t *gmi;               /* beside gm while the collectives are built: its call (r->inst) */
	size_t ngm;
	int64_t *xideal;             /* per transfer class: its ideal */
	struct op_ref *sm;           /* slot members of classes not aligned, slot by slot */
	size_t *sat, *sn, nslot;
	int64_t *sd, *sg;            /* beside sm: each member's duration and host gap */
	int64_t *med_all_d, *med_all_g; /* per slot */
	int64_t *mid;                /* per slot: its two order statistics around the middle, of the
	                              * durations then the gaps (wi_peer_median) */
	int32_t *scls;               /* per slot: its work class */
	uint8_t *calign;             /* per work class: aligned (its every rank runs the first rank's ops
	                              * on each stream in the same order): slots by place (cslot) */
	struct class_slots *cslot;   /* per work class */
	int32_t *crank;              /* the ranks by work class (rank order in each) */
	size_t *cr0;                 /* per work class: where its ranks start in crank (n + 2) */
	size_t *csize;               /* ranks per work class */
	int64_t *stepno;             /* the common steps */
	int32_t **sidx;              /* per rank, per common step: its step index */
	size_t nsteps;
	uint64_t unexplained;        /* ops whose delay nothing explains */
	const double *rep;           /* the unmodified replay's steps (ms), once known */
	const double *rep_wend;      /* the unmodified replay's work ends per step (ms), once known */
	struct replay_state *w;      /* per worker thread, allocated at its first replay */
	size_t nw;                   /* worker threads (at most WORKERS_MAX) */
	size_t nt;                   /* threads for the set-up */
	double *ex;                  /* per rank: its excess over its peers (rank_candidates), ns */
	double *own;                 /* per rank: its own excess, compute and copies only (wi_then_fix), ns */
	int32_t *aord;               /* ranks with launches by (class, first launch's step, first launch) */
	size_t naord;
	struct balance *bal;         /* the stage balance (SC_BAL), else NULL */
	int64_t **pool;              /* the pooled ideal (SC_POOL): per rank, per key, the job's mean
	                              * duration of its name (-1: not pooled), else NULL */
	int manystreams;             /* a rank has more streams than a dense index holds */
	char **incomplete;           /* per rank: why its trace lacks its peers' ops (wi_isolate_incomplete),
	                              * else NULL */
};

/* Op j's slot (q its stream, pos its place there; -1: none). */
static inline int32_t op_slot(const struct whatif_ctx *c, const struct rank_input *k, size_t j, size_t q,
			      int32_t pos)
{
	if (k->slot)
		return k->slot[j];
	if (!c->calign || !c->calign[k->cls])
		return -1;
	return c->cslot[k->cls].at[q][pos];
}

/* Pieces of the critical path (path.c): per rank, stream and category. */
struct path_piece { int32_t ri, stream; int cat; int64_t ns; };
struct path_table { struct path_piece *e; size_t n, cap; int64_t total; };

/* One evaluated fix: its per-step times and work ends (ms) beside the result. */
struct fix_eval { struct whatif_fix f; double *steps, *wend; };

/* The fixes to replay, each a scenario (its mask and medians owned) and its
 * place in the fixes, replayed at once on the workers (wi_run_jobs). */
struct fix_job { struct scenario sc; uint8_t *mask; int64_t *md; size_t e; };
struct fix_jobs { struct fix_job *v; size_t n, cap; };

/* The single-rank fixes replayed beside the unmodified and ideal replays
 * (whatif_run: the ranks rank_candidates names with a threshold a little
 * above the one it will have), each taken by all_fixes if it names that
 * rank too (then its result is the same as a replay there). */
struct early_fixes { int32_t *rank; struct fix_eval *e; size_t n; };

/* optable.c */
int wi_cmp_i64(const void *a, const void *b);
int wi_cmp_i32(const void *a, const void *b); /* the first int32_t of two records */
struct launch_key { int64_t t; int32_t j; };
int32_t *wi_sort_launches(struct launch_key *k, size_t m);

/* inputs.c */
const char *wi_cat_name(int c, char *buf, size_t n);
int wi_kind_cat(int kind);
int wi_op_cat(const struct whatif_ctx *c, const struct rank_input *k, size_t j);
void wi_rank_init(struct whatif_ctx *c, size_t i);
/* The job-wide step barrier (OPF_GBAR), once the common steps are known. */
void wi_job_barriers(struct whatif_ctx *c);
/* Rank i's unexplained delays and the delay guesses explain (after the barriers). */
void wi_rank_delays(struct whatif_ctx *c, size_t i);
void wi_rank_free(struct rank_input *k);

/* incomplete.c: each rank whose trace lacks ops most of its class run in
 * a class of its own (c->incomplete[i] says why); returns how many. */
size_t wi_isolate_incomplete(struct whatif_ctx *c);

/* collectives.c */
void wi_build_groups(struct whatif_ctx *c);
/* Member m's measured transfer (its end - the last arrival, at least 0). */
int64_t wi_xfer(const struct whatif_ctx *c, size_t m);

/* slots.c */
void wi_occurrences(const struct rank_input *k, uint32_t *occ);
void wi_build_slots(struct whatif_ctx *c);
/* The ideal durations and gaps of the sets masks[0..n) (their ranks
 * fixed at once): per slot, the median over its members outside each set
 * (the whole slot when none), into md[x] and md[x] + nslot. */
void wi_set_medians(const struct whatif_ctx *c, const uint8_t *const *masks, int64_t *const *md, size_t n);
size_t wi_anchor_group(const struct whatif_ctx *c, size_t a);
void wi_build_anchors(struct whatif_ctx *c);

/* scenario.c */
int wi_set_scenario(const struct whatif_ctx *c, struct replay_state *s, size_t v, const struct scenario *sc);

/* replay.c */
size_t wi_replay_lanes(const struct whatif_ctx *c, struct replay_state *s, size_t n, const struct scenario *sc,
		       double **out, int *replayed, size_t *lane);
double wi_job_step(const struct whatif_ctx *c, const struct replay_state *w, size_t v, size_t s);
void wi_work_ends(const struct whatif_ctx *c, const struct replay_state *w, size_t v, double *out);
struct replay_state *wi_worker(struct whatif_ctx *c, size_t w, size_t kcap);
void wi_workers_free(struct whatif_ctx *c);
/* Whether op j of rank i was left where it was by the last pass (a stall). */
int wi_left(const struct whatif_ctx *c, const struct replay_state *s, size_t i, size_t j);
const struct moved *wi_moved(const struct replay_state *s, size_t i, size_t j);

/* path.c */
/* The critical path of every common step, summed into t, of the lane v
 * whose moves worker state w recorded (its last replay). */
void wi_path_walk(const struct whatif_ctx *c, const struct replay_state *w, size_t v, struct path_table *t);

/* fixes.c */
void wi_add_job(struct fix_jobs *j, size_t e, struct scenario sc, const uint8_t *mask, size_t n);
void wi_run_jobs(struct whatif_ctx *c, struct fix_eval *v, struct fix_jobs *j, double rep_mean);
void wi_excess_task(void *arg, size_t w, size_t i);
size_t wi_rank_candidates(const struct whatif_ctx *c, int32_t *out, double lim_ms);
void wi_all_fixes(struct whatif_ctx *c, struct whatif *w, const int *stage, const int *replica, int nst,
		  double rep_mean, double ideal_mean, double ideal_complete, struct early_fixes *sp,
		  struct fix_eval **pv, size_t *pn);

/* The rank fix with the largest gain, replayed again with the rank of the
 * largest own excess among the others (the next-slowest): its then_rank
 * and then_gain (whatif.h).  One replay; three ranks or more, another
 * rank with some excess and, beyond ALL_RANKS_MAX ranks, an ideal that
 * gains materially more than the fix alone. */
void wi_then_fix(struct whatif_ctx *c, struct whatif *w, struct fix_eval *v, double rep_mean);

/* balance.c */
void wi_balance_free(struct whatif_ctx *c);
int wi_balance_build(struct whatif_ctx *c);
/* Op j of rank i's duration d with the stages balanced. */
int64_t wi_balanced(const struct whatif_ctx *c, size_t i, size_t j, int64_t d);
/* The pooled ideal (SC_POOL, Lin et al.'s): c->pool from the common
 * steps' compute and copies; 0 when no op has one. */
int wi_pool_build(struct whatif_ctx *c);
void wi_pool_free(struct whatif_ctx *c);

/* verdict.c */
void wi_verdict(struct whatif_ctx *c, struct whatif *w, const struct whatif_fix *best, double rep_mean,
		const struct fix_eval *v, size_t nv);

/* result.c */
struct whatif *wi_none(const char *why);
void wi_base_replay(const struct whatif_ctx *c, const struct replay_state *ws, size_t v, struct whatif *w,
		    const double *meas, const double *rep, size_t left);
struct whatif_fix *wi_take_fixes(struct fix_eval *v, size_t n);
void wi_figures(const struct whatif_ctx *c, struct whatif *w, const double *meas, const double *rep,
		const double *ideal);
void wi_rank_hosts(const struct whatif_ctx *c, struct whatif *w);
void wi_step_bests(const struct whatif_ctx *c, struct whatif *w, const double *rep, const double *ideal,
		   const struct fix_eval *v, size_t nv);

/* whatif.c */
int wi_rank_index(const struct analysis *a, int rank);

static inline double wi_mean(const double *v, size_t n)
{
	double s = 0;
	for (size_t q = 0; q < n; q++)
		s += v[q];
	return n ? s / (double)n : NAN;
}

/* The median of an op's peers (its slot without itself, the lower median
 * of the K - 1 others): position t = (K - 2) / 2 of the others is V(t) if
 * fewer than t + 1 values are below own, else V(t + 1).  Part 0: duration,
 * 1: host gap; an op without a slot is its own peer. */
static inline int64_t wi_peer_median(const struct whatif_ctx *c, int32_t slot, int64_t own, int part)
{
	if (slot < 0)
		return own;
	const int64_t *mid = &c->mid[4 * (size_t)slot + 2 * (size_t)part];
	return mid[0] < own ? mid[0] : mid[1];
}

/* The duration of op j (not a matched call) of fixed rank i under
 * scenario sc, its measured duration d and slot given: the ideal the
 * scenario gives it, at most what it took (but for the stage balance,
 * which moves work). */
static inline int64_t wi_dur_fixed(const struct whatif_ctx *c, const struct scenario *sc, const struct rank_input *k, size_t i,
		     size_t j, int32_t slot, int64_t d)
{
	int64_t d2 = d;
	if (k->flags[j] & OPF_UCOMM)
		return d; /* unmatched communication: no ideal (enum wcat) */
	switch (sc->type) {
	case SC_ALL:
		if (slot >= 0)
			d2 = c->med_all_d[slot];
		break;
	case SC_CAT: /* an op type's compute or copies (a transfer: op_xfer; host gaps: op_gap) */
		if (sc->cat != WC_HOST && sc->cat < WC_COLL && slot >= 0 && !(k->flags[j] & OPF_CALL) &&
		    wi_kind_cat(ot_key(&k->t, j)->kind) == sc->cat)
			d2 = c->med_all_d[slot];
		break;
	case SC_BAL:
		return wi_balanced(c, i, j, d);
	case SC_POOL: { /* the job's mean of its name, shorter or longer: work moves */
		int64_t p = c->pool ? c->pool[i][ot_keyi(&k->t, j)] : -1;
		return p >= 0 ? p : d;
	}
	case SC_SET:
		if (sc->part & PART_DUR)
			d2 = sc->single >= 0 ? wi_peer_median(c, slot, d, 0) : slot >= 0 ? sc->md[slot] : d;
		break;
	default:
		break;
	}
	return d2 < d ? d2 : d; /* fixing never makes an op slower */
}

/* The host gap before an op (launch known) of a fixed rank under sc, its
 * measured gap g and slot given. */
static inline int64_t wi_gap_fixed(const struct whatif_ctx *c, const struct scenario *sc, int32_t slot, int64_t g)
{
	switch (sc->type) {
	case SC_ALL: case SC_POOL:
		return slot >= 0 ? c->med_all_g[slot] : g;
	case SC_CAT:
		return sc->cat == WC_HOST && slot >= 0 ? c->med_all_g[slot] : g;
	case SC_SET:
		if (sc->part & PART_HOST)
			return sc->single >= 0 ? wi_peer_median(c, slot, g, 1) : slot >= 0 ? sc->mg[slot] : g;
		return g;
	default:
		return g;
	}
}

/* The transfer of member m (measured xm, ideal xi) under sc: its type's
 * ideal when the scenario fixes transfers of its type (at most xm). */
static inline int64_t xfer_of(const struct scenario *sc, const struct member *u, int64_t xm, int64_t xi)
{
	if (sc->type == SC_POOL) /* the pooled ideal: the median, shorter or longer */
		return xi;
	if (sc->type == SC_ALL || (sc->type == SC_CAT && sc->cat >= WC_COLL && sc->cat == WC_COLL + u->type))
		return xi < xm ? xi : xm;
	return xm;
}

#endif
