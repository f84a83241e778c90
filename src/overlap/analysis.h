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

#include "base/error.h"
#include "overlap/engine.h"
#include "timeline/timeline.h"

struct rules;

struct analysis_opts {
	const struct rules *rules;
	int threads;          /* 0: all cores */
	int skip_steps;       /* steps left out of the step aggregates (warm-up) */
	int top_kernels;      /* rows in the top-kernel table */
	double host_bound_pct; /* a step is host-bound when host wait >= this % of it */
	int keep_traces;      /* keep timelines (for --trace-out) */
};

struct step_result {
	int64_t number;
	int64_t start_ns, end_ns;
	struct ov_figures f;
	int host_bound;
};

struct coll_row {
	uint8_t type;
	char *pg;             /* process group name ("" if unknown) */
	uint64_t bytes;       /* per call */
	int group_size;
	uint64_t count;
	int64_t total_ns, exposed_ns, wait_ns, transfer_ns, min_ns, max_ns;
	uint64_t matched;     /* calls matched across ranks */
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

/* One collective call on one rank, for cross-rank matching. */
struct comm_inst {
	int64_t step;         /* step number, INT64_MIN if none */
	const char *pg;       /* points into the rank's coll_row pg */
	uint32_t ordinal;     /* index among this rank's calls with the same (step, pg) */
	uint8_t type;
	uint64_t bytes;
	int64_t start_ns, end_ns;
	uint32_t row;         /* index into colls */
	int64_t wait_ns;      /* filled by matching; -1 unmatched */
	int last;             /* this rank arrived last */
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
	struct ov_figures total;       /* whole trace: first start to last end */
	struct ov_figures steps_sum;   /* over the step windows (skip_steps applied) */
	struct step_result *steps;
	size_t nsteps;
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
	struct ivset wait_set;         /* waiting intervals (for --trace-out) */
	struct ivset exposed_set;      /* exposed comm (for --trace-out) */
};

struct analysis {
	struct rank_result *r;   /* sorted by rank */
	size_t n;
	struct analysis_opts opts;
	/* cross-rank */
	int late_rank;           /* -1 if not determined */
	uint64_t matched_groups, unmatched_calls, size_mismatch;
	int64_t skew_p50_ns, skew_max_ns, skew_mean_ns;
	int clocks_aligned;
	char **inputs;
	size_t ninputs;
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

/* Statistics (ns) of one figure over a rank's steps, the first `skip` left
 * out; fig_off is the offset of an int64 field of struct ov_figures (as
 * report/figures.h's table gives).  n == 0 when no step is left. */
struct stat4 { double mean, p50, min, max; size_t n; };
struct stat4 steps_stat(const struct rank_result *r, int skip, size_t fig_off);

#endif
