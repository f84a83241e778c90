/*
 * rank.h - the sweep model (rank.c: per-cell statistics, verdicts, the
 * ranking) of `aorta sweep`: a configuration x environment x trial matrix,
 * run, analysed by the one engine, ranked with the noise between trials
 * accounted for, and reported.
 *
 * Flow.  recipe.c reads a recipe (YAML, docs/sweep.md) into struct recipe
 * and expands it into cells (a full cross product of the axes or an
 * explicit list), checking everything before any work: every error names
 * the recipe line.  run.c runs every trial of every cell as a child process
 * in its own process group (timeout: the group is killed), analyses the
 * cell's output folder with analysis_run and writes the trial's
 * result.json temp-then-rename, so an interrupted sweep keeps what
 * finished and --resume continues.  rank.c turns trials into per-cell
 * statistics and verdicts against the baseline; results.c writes
 * matrix.json (aorta.sweep/1), matrix.md and recipe.resolved.yaml and reads
 * trials back; report.c writes the HTML page.  envsnap.c is the environment
 * snapshot (`aorta env`), taken once per environment of a sweep.
 *
 * Ownership: a struct recipe owns every string it points to (recipe_free);
 * a struct sweep owns its recipe, cells' statistics and trials
 * (sweep_free).  Nothing here is thread-safe; one sweep runs at a time.
 */
#ifndef AORTA_SWEEP_RANK_H
#define AORTA_SWEEP_RANK_H

#include <stddef.h>

#include "sweep/recipe.h"

/* ---- trials, statistics --------------------------------------------------------- */

enum trial_status { TR_NONE = 0, TR_OK, TR_FAILED, TR_TIMEOUT, TR_CRASHED, TR_NODATA };

struct trial_coll {
	char type[24];
	unsigned long long bytes, count;
	double busbw_gbps, total_ms;  /* busbw_gbps: transfer time, the join's (overlap/figures.h coll_bw) */
	double busbw_kernel_gbps;     /* over the whole kernel time, waiting included */
};

/* The figures of one trial (ms are per kept step: the step as every
 * command states it, analysis_job_step; the others medians over steps,
 * the mean over ranks). */
struct trial {
	enum trial_status status;
	int trial;               /* 1..trials; 0: the confound re-run */
	int exit_code, signal;
	double run_s, analysis_s, bookkeeping_s, overhead_pct;
	double step_ms, comm_ms, exposed_ms, overlap_pct, wait_ms, transfer_ms,
		gemm_ms, idle_ms;
	int ranks, steps, late_rank;
	char diag[24];
	char headline[1024];
	char error[512];
	struct trial_coll *colls;
	size_t ncolls;
};

enum verdict { V_NODATA = 0, V_BASELINE, V_BETTER, V_WORSE, V_SIMILAR };
const char *verdict_name(enum verdict v);

struct cell_stats {
	size_t nok, ntrials;
	double median, min, max, range, spread_pct; /* step time, ms */
	double exposed_ms, comm_ms, overlap_pct, wait_ms, transfer_ms, gemm_ms; /* medians */
	int late_rank;           /* named by most ok trials, -1 none */
	char diag[24];
	int noisy;
	enum verdict verdict;    /* against the baseline */
	double diff_ms, diff_pct, noise_ms;
	int rank;                /* 1 = fastest; 0: no data */
	double overhead_pct;     /* mean over trials */
	struct trial_coll *colls; /* per (type, bytes): median busbw over ok trials */
	size_t ncolls;
};

/* The rule (docs/sweep.md): noise = max(range of a, range of b,
 * threshold_pct % of a's median); b is better when median(b) < median(a)
 * - noise, worse when median(b) > median(a) + noise, else similar.
 * No ok trial on either side: V_NODATA. */
enum verdict sweep_compare(const struct cell_stats *a, const struct cell_stats *b, double threshold_pct,
			   double *noise_ms);

struct env_diff {                /* one configuration in two environments */
	size_t a, b;             /* cells: a in the reference environment */
	enum verdict v;
	double diff_pct;
};

struct sweep {
	struct recipe r;
	char dir[4096];
	struct trial **t;        /* t[cell][0..trials) */
	struct trial confound;   /* status TR_NONE until run */
	struct cell_stats *st;
	size_t *order;           /* cells by rank */
	size_t best;             /* cell index */
	char best_why[1024];
	int drift;               /* the confound re-run left the baseline's range */
	double drift_pct;
	struct env_diff *diffs;
	size_t ndiffs;
};

void sweep_stats(struct sweep *s);   /* (re)computes st, order, best, drift, diffs */
void sweep_free(struct sweep *s);
void trial_release(struct trial *t);

#endif
