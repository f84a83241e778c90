/*
 * analysis.h - a run's analysis: every rank's figures, per step and whole,
 * and the cross-rank view (collective matching, wait vs transfer, late rank).
 *
 * pipeline/pipeline.h's analysis_run reads the inputs in parallel and calls
 * analysis_rank per rank and analysis_finish once; each worker keeps only the
 * results (and, when asked for a Chrome trace, the timeline), so memory
 * follows the number of GPU events, not file sizes.  Everything in struct
 * analysis is owned by it and freed by analysis_free.
 */
#ifndef AORTA_ANALYSIS_H
#define AORTA_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/error.h"
#include "overlap/engine.h"
#include "overlap/steps.h"
#include "overlap/whatif.h"
#include "timeline/timeline.h"

struct rules;

struct analysis_opts {
	const struct rules *rules;
	int threads;          /* 0: all cores */
	int skip_steps;       /* steps left out of the step aggregates (warm-up) */
	int top_kernels;      /* rows in the top-kernel table */
	double host_bound_pct; /* a step is host-bound when host wait >= this % of it */
	int keep_traces;      /* 1: keep timelines and the exposed/waiting sets (--trace-out);
			       * 2: the timeline of the first input file only;
			       * 3: every input's timeline (report's Gantt charts: the first
			       * rank's, the late rank's beside a healthy one's) */
	/* clock alignment across ranks (join.c, docs/metrics.md "Clock offsets") */
	int no_clock_align;   /* take every rank's clock as shared (no offsets) */
	const struct clock_given *clock_given; /* offsets supplied (--clock-offsets), or NULL */
	size_t nclock_given;
	int no_peer_tools;    /* leave the HTA and TraceLens figures (rank_result hta, tracelens)
			       * zero: for a caller that outputs neither (report) */
	int what_if;          /* WHATIF_RUN (0), WHATIF_SKIP: neither op tables nor the replay
			       * (--no-what-if; what_if says why, ok 0) */
};

enum { WHATIF_RUN, WHATIF_SKIP };

/* The one set of defaults every caller starts from (analyze's: every core,
 * no warm-up skip, 10 top kernels, host-bound at 30 %, clocks aligned from
 * the collectives, the what-if run); a caller sets what differs by name:
 *   struct analysis_opts o = ANALYSIS_OPTS_INIT;
 *   o.skip_steps = 5; */
#define ANALYSIS_OPTS_INIT { .top_kernels = 10, .host_bound_pct = 30.0 }

/* A clock offset supplied by the user: rank `rank` (or every rank of host
 * `host` when host[0]) reads offset_ns ahead of the reference clock, so
 * aligned time = own time - offset_ns. */
struct clock_given {
	int rank;             /* -1 when keyed by host */
	char host[128];
	int64_t offset_ns;
};

/* A step of a rank: its number and GPU window.  Its figures are in the
 * rank's step store (overlap/steps.h), read through step_fig, step_rec,
 * step_host_bound, step_coll_ns or, whole, step_get. */
struct step_result {
	int64_t number;
	int64_t start_ns, end_ns;
};

/* A step whole, as the analysis codecs read and write it. */
struct step_full {
	struct step_result s;
	struct step_row v;
};

struct coll_row {
	uint8_t type;
	char *pg;             /* process group name ("" if unknown) */
	char *pg_desc;        /* its description ("" if unknown) */
	char *pg_ranks;       /* its members' global ranks "0,1,4" as the trace gives them ("" if unknown) */
	uint64_t bytes;       /* per call */
	int group_size;
	uint64_t count;
	int64_t total_ns, exposed_ns, wait_ns, transfer_ns, min_ns, max_ns;
	uint64_t matched;     /* calls matched across ranks */
	int64_t xfer_ns;      /* over the matched calls, the collective's transfer: last end - last arrival */
	/* bandwidth, computed once by the join (join.c) and read by every
	 * output: from the collective's transfer time (last end - last
	 * arrival, xfer_ns) over the matched calls, as nccl-tests measures it (NaN when no call was matched
	 * or the size is unknown); the _kernel figures divide by the whole
	 * kernel time, waiting included (NaN when the size is unknown) */
	double algbw_gbps, busbw_gbps;
	double algbw_kernel_gbps, busbw_kernel_gbps;
	double wait_share;    /* wait / (wait + transfer) over matched calls, NaN if none */
	int group_size_known; /* group_size came from the trace (not the world size) */
};

struct kernel_row {
	char *name;
	uint8_t kind;
	uint64_t count;
	int64_t total_ns, min_ns, max_ns;
};

struct stream_row {
	int32_t stream;
	int64_t busy_ns;
	uint64_t spans;
};

struct hta_figures {          /* Holistic Trace Analysis definitions, ns */
	int has_comm;
	double comm_comp_overlap_pct;
	int64_t kernel_time_ns, idle_ns, compute_ns, non_compute_ns;
	int64_t comm_ns, overlap_ns;
	int last_step_excluded;
};

/* One collective call on one rank, for cross-rank matching (join.c). */
struct comm_inst {
	int64_t step;         /* step number, INT64_MIN if none */
	const char *pg;       /* points into the rank's coll_row pg */
	int64_t seq;          /* the trace's sequence number in the group, -1 if none */
	uint32_t ordinal;     /* index among this rank's calls with the same (step, pg) */
	uint8_t type;
	uint64_t bytes;
	int64_t start_ns, end_ns; /* own clock; on the aligned clock after the join */
	/* the stretch before the call, since this rank's previous call in the
	 * group ended (or its step window began): its length, and the GPU's
	 * host wait and busy time in it (own clock) */
	int64_t prep_ns, prep_host_wait_ns, prep_busy_ns;
	uint32_t row;         /* index into colls */
	int64_t wait_ns;      /* filled by matching; -1 unmatched */
	int64_t xfer_ns;      /* the collective's transfer: last end - last arrival (all ranks) */
	int64_t caused_ns;    /* waiting its lateness caused the earlier arrivals */
	int last;             /* this rank arrived last */
	int32_t peer;         /* send/recv: the other rank, -1 if unknown (coll_meta.peer) */
	uint8_t p2p;          /* enum p2p_dir */
	int32_t op;           /* its op in the rank's op table (whatif.h), -1 if none */
	int64_t grp;          /* the matched collective (join.c), -1 unmatched */
	int32_t stream;       /* the trace's stream id of the kernel */
};

struct rank_result {
	struct trace *t;      /* NULL unless keep_traces */
	char *path;
	const char *format;
	int rank, world_size, device;
	uint64_t events, skipped, host_events;
	uint64_t other_device_spans; /* trace.h: GPU activity of a second device in one trace */
	int other_device;
	char *skipped_first;
	int has_rec;                   /* steps carry recorded figures (rec) */
	struct ov_figures total;       /* whole trace: first start to last end */
	int64_t first_ns, last_ns;     /* that first start and last end (own clock; 0 when read back
					* from a saved analysis) */
	struct ov_figures steps_sum;   /* over the step windows (skip_steps applied) */
	struct step_result *steps;
	size_t nsteps;
	struct step_store sv;          /* the steps' figures, by column (overlap/steps.h) */
	struct stream_row *streams;
	size_t nstreams;
	struct coll_row *colls;
	size_t ncolls;
	struct kernel_row *kernels;    /* top kernels by total time */
	size_t nkernels;
	struct hta_figures hta;
	struct ov_figures tracelens;   /* whole trace under TraceLens classes */
	struct comm_inst *inst;
	size_t ninst;
	int64_t wait_ns, transfer_ns;  /* over matched collectives */
	uint64_t times_last, matched;
	int64_t caused_ns;             /* waiting this rank caused its peers */
	int64_t lateness_ns;           /* where it caused waiting: its arrival minus the mean arrival of those who waited */
	uint64_t caused_colls;         /* collectives where it caused more than the clock spread */
	/* of the waiting caused: how much longer than the peers that waited
	 * the GPU waited for its host / was busy before those calls */
	int64_t caused_host_excess_ns, caused_busy_excess_ns;
	/* clock: aligned time = t - (clock_offset_ns + clock_drift * (t - clock_t0_ns)) */
	char host[128];                /* the trace's host name, "" if the format gives none */
	int clock_domain;              /* index (in r[]) of the first rank of its host, else its own */
	int64_t clock_offset_ns, clock_t0_ns;
	double clock_drift;            /* ns per ns (1e-6 = 1 ppm) */
	struct ivset wait_set;         /* waiting intervals (for --trace-out) */
	struct ivset exposed_set;      /* exposed comm (for --trace-out) */
	unsigned char *ops;            /* the what-if's op table, one block (whatif.h), NULL if none */
	size_t ops_bytes;              /* its bytes */
	int32_t *peers;                /* ranks it sent to or received from (point to point), sorted */
	size_t npeers;
};

/* Step k's figure at offset off of struct ov_figures (as FIGURES and
 * REP_FIGS give it: a scalar, or one of coll_ns / coll_exposed_ns). */
static inline int64_t step_fig(const struct rank_result *r, size_t k, size_t off)
{
	const size_t head = sizeof(struct ov_step_figures);
	int col = off < head ? (int)(off / sizeof(int64_t)) : SC_COLL + (int)((off - head) / sizeof(int64_t));
	return steps_int(&r->sv, k, col);
}

/* Step k's time in collectives of type c (exposed: its exposed part), as
 * ov_figures' coll_ns[c] / coll_exposed_ns[c] of the step's window. */
static inline int64_t step_coll_ns(const struct rank_result *r, size_t k, int c, int exposed)
{
	return steps_int(&r->sv, k, SC_COLL + (exposed ? COLL__COUNT : 0) + c);
}

/* Step k's figure q (enum step_rec) as the input recorded it; NaN if none. */
static inline double step_rec(const struct rank_result *r, size_t k, int q)
{
	return steps_dbl(&r->sv, k, SC_REC + q);
}

static inline int step_host_bound(const struct rank_result *r, size_t k)
{
	return (int)steps_int(&r->sv, k, SC_HB);
}

/* Step k whole. */
static inline void step_get(const struct rank_result *r, size_t k, struct step_full *out)
{
	out->s = r->steps[k];
	steps_store_get(&r->sv, k, &out->v);
}

/* One step across ranks: who caused the waiting in it. */
struct xstep {
	int64_t number;
	int straggler;           /* rank that caused most of its waiting, -1 if none */
	int64_t caused_ns;       /* waiting the straggler caused in it */
	int64_t total_caused_ns; /* all waiting caused in it */
	int64_t *by_rank;        /* waiting caused per rank, a->n entries (index as a->r) */
};

struct analysis {
	struct rank_result *r;   /* sorted by rank */
	size_t n;
	struct analysis_opts opts;
	/* cross-rank (join.c; docs/metrics.md "Across ranks") */
	int late_rank;           /* rank that caused >= 60 % of material waiting, -1 if none (analysis_waiting_material) */
	double late_share;       /* the top rank's share of all waiting caused, NaN if none */
	int top_rank;            /* rank that caused the most waiting (named or not), -1 */
	int64_t caused_ns;       /* all waiting caused, all ranks */
	uint64_t matched_groups, unmatched_calls, size_mismatch;
	/* send/recv calls whose peer no trace names, in a group of more than two
	 * ranks: left unmatched (among unmatched_calls), never grouped by order */
	uint64_t p2p_peer_unknown;
	/* communication calls of unknown collective type (COLL_OTHER: neither
	 * kernel name, metadata nor launching host op names it), and those
	 * matched across ranks: by order within their stream and group, only
	 * where every rank has as many (join.c) */
	uint64_t unknown_type_calls, unknown_type_matched;
	/* send/recv calls naming a peer that cannot be theirs (their own rank,
	 * a rank outside the world the traces report): refused, taken as of
	 * unknown peer (join.c refuse_bad_peers); the first said */
	uint64_t p2p_bad_peers;
	char p2p_bad_first[160];
	uint64_t matched_by_seq; /* of matched_groups, matched by the trace's sequence number */
	uint64_t rejected_groups; /* blocking groups whose calls did not end together (unmatched) */
	/* collectives matched on part of their group (join.c): never charged
	 * waiting; the first one said, with its missing ranks */
	uint64_t incomplete_groups;
	char incomplete_first[256];
	char size_mismatch_first[256]; /* the first collective whose ranks disagree on its size */
	/* rows whose bandwidth is above any interconnect (BUSBW_MAX_GBPS):
	 * the figures are left out (NaN), the first said */
	uint64_t implausible_bw;
	char implausible_bw_first[256];
	int64_t skew_p50_ns, skew_max_ns, skew_mean_ns;
	int clocks_aligned;      /* cross-rank figures exist (clocks shared or aligned) */
	const char *no_cross_rank_why; /* static sentence when !clocks_aligned, else NULL */
	char *owned_why;         /* a reason read back from a saved analysis (owned; why points here) */
	const char *clock_method;/* "collective-ends", "collective-ends+drift", "one-host", "file", "none" */
	int64_t clock_spread_ns; /* p95 of the aligned end-time range of blocking collectives */
	int64_t clock_spread_p50_ns;
	uint64_t clock_samples;  /* blocking collectives the offsets were estimated from */
	struct xstep *xsteps;
	size_t nxsteps;
	char **inputs;
	size_t ninputs;
	struct whatif *whatif;   /* the what-if replay (whatif.c), NULL if not run */
	/* two runs in one call (analysis_finish): a rank read twice from files
	 * of different hosts or times; the sentence that refuses it (exit 2,
	 * analysis_check_gaps), "" when none */
	char mixed_runs[1024];
	struct fr_run *fr;       /* Flight Recorder dumps and their diagnosis (flightrec/fr.h), NULL if none */
};

/* One rank's figures from its timeline (r is filled; t is kept by r only
 * when o->keep_traces, and then the caller clears its pointer). */
void analysis_rank(struct trace *t, const struct analysis_opts *o, struct rank_result *r);
/* qsort order of rank results by (path, device): the order of the per-rank
 * pass's output, whatever order its workers finished in. */
int cmp_path_device(const void *a, const void *b);
/* Numbers unknown ranks, sorts by rank and runs the cross-rank join on
 * a->r[0..n) (analysis_run and analysis_from_set end with it). */
void analysis_finish(struct analysis *a);
/* Analyses traces already in memory (takes ownership of s's traces).
 * Reading files is pipeline/pipeline.h's (analysis_run). */
void analysis_from_set(struct trace_set *s, const struct analysis_opts *o, struct analysis *a);
void analysis_free(struct analysis *a);

/* Sets opts.skip_steps and sums every rank's steps_sum again over the
 * steps it leaves (step windows tile, so this equals the engine's figure
 * over their union). */
void analysis_set_skip(struct analysis *a, int skip);
/* A --skip-steps that would leave no step of some rank that has steps
 * skips nothing instead (warm-up that is not there is not skipped):
 * opts.skip_steps becomes 0 and every rank's steps_sum is summed again from
 * its steps (step windows tile, so the figures add up exactly).  Returns 1
 * and writes the reason to why (n bytes) when it changed the skip. */
int analysis_adapt_skip(struct analysis *a, char *why, size_t n);
/* Steps of r left after the skip (what step figures are over). */
size_t analysis_kept_steps(const struct rank_result *r, int skip);

/* The step of the job, as every command states it (docs/metrics.md "The
 * step"): mean_ms, the mean over ranks of each rank's mean kept step
 * window (the what-if's measured_step_ms where every rank has the same
 * steps; sweep's step_ms; report's pooled step mean where the ranks keep
 * as many steps); the shortest and longest kept rank-step; the ranks with
 * kept steps, the kept steps of the rank with the fewest and the
 * rank-steps in all; the first and last step number kept (INT64_MIN when
 * none).  A run with no kept step: its ranks' whole traces, steps 0. */
struct job_step {
	double mean_ms, min_ms, max_ms;
	size_t ranks, steps, rank_steps;
	int64_t first, last;
};
struct job_step analysis_job_step(const struct analysis *a);

/* Warm-up left in: the kept steps at the start of a rank that take more
 * than WARMUP_FACTOR times its median kept step (at most half of them; the
 * most over the ranks), so the caller can say "--skip-steps N leaves them
 * out".  Returns N (0: none); *rank, *ms and *median_ms: the rank with the
 * slowest such step, that step's window and its median (ms).  Every
 * command's default skip is 0 (a profiler's capture starts after its own
 * warm-up); a log from the first step (aorta train, upstream JSONL) has
 * one, and this says so rather than guess. */
#define WARMUP_FACTOR 2.0
size_t analysis_warmup_left(const struct analysis *a, int *rank, double *ms, double *median_ms);

/* Statistics (ns) of one figure over a rank's steps, the first `skip` left
 * out; fig_off is the offset of an int64 field of struct ov_figures (as
 * overlap/figures.h's table gives).  n == 0 when no step is left. */
struct stat4 { double mean, p50, min, max; size_t n; };
struct stat4 steps_stat(const struct rank_result *r, int skip, size_t fig_off);

/* A rank's own time on the aligned clock. */
static inline int64_t analysis_aligned(const struct rank_result *r, int64_t t)
{
	return t - r->clock_offset_ns - (int64_t)(r->clock_drift * (double)(t - r->clock_t0_ns));
}

/* A cross-rank figure summed over n collectives is within the clock
 * uncertainty (not a fact) when it is below n times the residual spread. */
static inline int analysis_uncertain(const struct analysis *a, int64_t v, uint64_t n)
{
	return a->clock_spread_ns > 0 && (double)v < (double)a->clock_spread_ns * (double)(n ? n : 1);
}

/* The late-rank rule (docs/metrics.md "Late rank"): besides causing >= 60 %
 * of the waiting, the waiting must be material: all waiting caused at least
 * LATE_MIN_TIME_SHARE of the ranks' summed time (each rank's whole-trace
 * window, the span the waiting is counted over) and beyond the clock
 * uncertainty.  One rule for the join and for a saved analysis read back. */
#define LATE_SHARE_MIN 0.60
#define LATE_MIN_TIME_SHARE 0.01
/* All waiting caused over the ranks' summed time; NaN when there is none. */
double analysis_caused_time_share(const struct analysis *a);
/* Whether the waiting caused is material (the second half of the rule). */
int analysis_waiting_material(const struct analysis *a);

/* A format whose ranks each run on a clock of their own (aorta JSONL: each
 * rank's steps laid end to end), so arrivals cannot be compared across
 * ranks: the join matches nothing where a rank has it, and analysis_rank
 * keeps no calls (inst) nor op table (ops) of such a rank. */
static inline int analysis_own_clock(const char *format)
{
	return format && !strcmp(format, "aorta-jsonl");
}

/* The cross-rank join (join.c): called once the ranks are sorted. */
void analysis_join(struct analysis *a);

#endif
