/*
 * whatif.h - the what-if replay (whatif.c; docs/metrics.md "What-if"):
 * every rank's device work per stream, replayed across ranks on the joined
 * collectives, unmodified (it must reproduce the measured step) and with
 * one rank, one group, one operation type or everything idealised (the
 * step time if that were fixed, the gain, the slowdown measured / ideal)
 * and the cross-rank critical path of each step.
 *
 * The op table (whatif_ops: one block of about 12 bytes an op, its layout
 * private to overlap/whatif/) is built per rank by analysis_rank from the
 * timeline and travels with the rank (analysis_io/pack.c), so the replay
 * needs no trace and runs the same under MPI.  struct whatif is owned by the
 * analysis and freed by whatif_free.
 */
#ifndef AORTA_WHATIF_H
#define AORTA_WHATIF_H

#include <stddef.h>
#include <stdint.h>

/* One fix: what, the step if it were fixed, the gain. */
struct whatif_fix {
	char *what;          /* "rank 3", "stage 1", "replica 0", "gemm", "all_reduce transfer", ... */
	int rank;            /* by_rank: the rank; else -1 */
	char *ranks;         /* by_group: its ranks ("0,2"); else NULL */
	double step_ms_if_fixed, gain_ms, gain_pct;
	/* the standard error of its gain over the complete steps used (all but
	 * the last with three steps or more: the per-step gains' standard
	 * deviation / sqrt(steps); 0 with one step, NaN in a saved analysis
	 * without it): a gain within GAIN_SEM_K of it varies from step to
	 * step more than it is worth (whatif_fix_unsteady) */
	double gain_sem_ms;
	char *unknown;       /* by_group: why its ideal is unknown (no rank outside it runs its ops), else NULL */
	/* by_rank, the rank fix with the largest gain only: the rank with the
	 * largest excess over its peers after it (then_rank, else -1) and the
	 * gain of fixing the two together (NaN when not replayed): when it is
	 * materially more than this fix's own, the next-slowest rank takes
	 * over once this one is fixed */
	int then_rank;
	double then_gain_ms, then_gain_pct;
};

/* One rank's host over the steps used (docs/metrics.md "Host launch
 * time"): the time its host spends between launches, per step. */
struct whatif_rank {
	int rank;
	double host_launch_ms;       /* mean per step: the sum of its launches' host gaps g (NaN: no launch known) */
	double host_launch_min_ms, host_launch_max_ms; /* over the steps used */
	double ideal_host_launch_ms; /* the same with every gap at its slot's lower median over the rank's
	                              * class: what "fixing host launch gaps" gives its host */
	double ideal_share;          /* of that ideal, the part its own gaps set (its gap is the median), 0..1 */
};

struct whatif_step {
	int64_t number;
	double measured_ms, replay_ms, ideal_ms;
	double error_pct;    /* |replay - measured| / measured, the worst rank */
	int reproduced;      /* every rank within 3 % */
	char *reason;        /* why not (NULL when reproduced) */
	char *best;          /* the fix worth most in this step, NULL if none */
	double best_ms_if_fixed, best_gain_ms;
};

/* A piece of the cross-rank critical path, summed over the steps. */
struct whatif_cp {
	int rank;
	int32_t stream;      /* -1: the host (launch gaps) */
	char *what;          /* op type: "gemm", "all_reduce transfer", "host launch gap", ... */
	double ms;           /* per step (mean over the steps) */
	double share;        /* of the step */
};

struct whatif {
	int ok;              /* the figures below exist */
	char *why;           /* when !ok, why not */
	size_t steps_used;   /* steps every rank has (after the skip) */
	double measured_step_ms, replay_step_ms, ideal_step_ms, slowdown;
	double replay_error_pct;
	int reproduced;      /* every step reproduced within 3 % */
	char *verdict;       /* the diagnosis sentence: the best fix, or that none is material */
	double uncertainty_ms; /* the clock uncertainty (the join's residual spread, ms) */
	/* what a gain must exceed to be material (whatif_material_ms): the
	 * largest of 1 % of the replayed step, the clock uncertainty and the
	 * replay's error of the step; noise_floor_from names the one that sets
	 * it (owned).  step_sem_ms: the step's own spread, the standard error
	 * of the measured step over the steps used (0 with one step): a gain
	 * above the floor but within it is the replay's answer that one run
	 * cannot confirm */
	double noise_floor_ms, step_sem_ms;
	char *noise_floor_from;
	double unexplained_ms; /* per step, mean over ranks: delays the replay keeps fixed (nothing explains them) */
	double unexplained_share; /* of the measured step (at most 1) */
	/* the step the unexplained delays cost: the replayed step less the step
	 * replayed with every unexplained delay taken out (nodelay_step_ms,
	 * Lin et al.'s T_nodelay), and its share of the measured step */
	double nodelay_step_ms, unexplained_step_ms, unexplained_step_share;
	/* no rank has launches and the unexplained delays cost under 5 % of the
	 * step: they are launch delays, left out of every replay (the replayed
	 * step is nodelay_step_ms; slowdown = measured / ideal is Lin et al.'s
	 * S with launch delays) */
	int launch_delays_out;
	/* the cross-stream dependencies by where they come from (DEPK_*:
	 * guessed from the times, recorded by the trace, the op table's
	 * `after` column, the pipeline schedule), over every rank */
	uint64_t deps_guessed, deps_recorded, deps_table, deps_schedule;
	/* the part of the ideal's gain that rests on guessed dependencies: the
	 * ideal replayed with them left out (their ops keep their measured delay
	 * after stream, launch and barriers) against the ideal, ms (0 without a
	 * guess); its share of the replayed step (at most 1) */
	double guessed_ms, guessed_share;
	/* the pooled ideal (Lin et al.'s): every compute op and copy at the job's
	 * mean of its name over ranks, stages, microbatches and steps, every
	 * transfer at its type and size's median, replayed (ms; may exceed the
	 * replayed step: it moves work, never only shortens it); slowdown_pooled
	 * = measured / it, the artifact's S.  NAN: no op to pool */
	double pooled_step_ms, slowdown_pooled;
	struct whatif_fix *by_rank, *by_group, *by_op;
	size_t nby_rank, nby_group, nby_op;
	struct whatif_step *steps;
	size_t nsteps;
	struct whatif_cp *cp;
	size_t ncp;
	int *stage;          /* per rank (index as a->r): pipeline stage, -1 when none */
	size_t nstage;
	/* the step as the ranks define it: the shortest and the longest of the
	 * ranks' mean windows over the steps used (ms).  measured_step_ms is
	 * their mean; a figure smaller than their difference rests on a
	 * poorly defined step (a one-step trace whose ranks' windows run from
	 * 11 to 19 ms) and says so (verdict, whatif_out.c) */
	double rank_window_min_ms, rank_window_max_ms;
	struct whatif_rank *ranks;   /* per rank (index as a->r) */
	size_t nranks;
};

struct analysis;
struct trace;
struct rank_result;

/* The op table of one rank from its timeline (cls: the classes of
 * analysis_rank; device work is cls != C_NONE).  Fills r->ops (one block,
 * r->ops_bytes) and r->inst[k].op; call after the collective table. */
void whatif_ops(const struct trace *t, const uint8_t *cls, struct rank_result *r);
/* The ops in r's op table (0: none). */
size_t whatif_op_count(const struct rank_result *r);
/* Whether r's op table (as unpacked) is whole: its arrays within its
 * bytes, its links and steps in range (analysis_io/pack.c). */
int whatif_ops_valid(const struct rank_result *r);
/* The what-if of a joined analysis into a->whatif (replaced if set), with
 * the skip a->opts.skip_steps has now: the pipeline's last stage, after
 * the join (analysis_run, the MPI plug-in's process 0, analysis_from_set).
 * Its work runs on a->opts.threads threads (base/pool.h) and is done when
 * it returns; AORTA_TIMING=1 prints its time. */
void whatif_run(struct analysis *a);
void whatif_free(struct whatif *w);
/* The fix the verdict names: the largest gain, or the narrowest fix (a
 * rank, then a group) that gets at least 90 % of it; NULL when none. */
const struct whatif_fix *whatif_best(const struct whatif *w);
/* What a gain must exceed to be material (ms), as the verdict weighs
 * every fix: noise_floor_ms (a saved analysis without it: 1 % of the
 * replayed step and the clock uncertainty). */
double whatif_material_ms(const struct whatif *w);
/* rank_window_max_ms - rank_window_min_ms: how poorly the ranks agree on
 * the step (NaN when unknown). */
double whatif_window_spread(const struct whatif *w);
/* Rank rank's host figures, NULL when none. */
const struct whatif_rank *whatif_rank_of(const struct whatif *w, int rank);
/* Whether gain g (ms) is within the noise floor: "nothing", not a gain nor a loss. */
int whatif_nothing(const struct whatif *w, double g);
/* Whether fix x's gain is within GAIN_SEM_K standard errors of its
 * per-step gains: one run cannot tell it from noise (docs/metrics.md
 * "What-if"). */
#define GAIN_SEM_K 2.0
int whatif_fix_unsteady(const struct whatif_fix *x);

#endif
