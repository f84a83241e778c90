/*
 * sweep.h - `aorta sweep`: a configuration x environment x trial matrix,
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
#ifndef AORTA_SWEEP_H
#define AORTA_SWEEP_H

#include <stddef.h>
#include <stdio.h>

#include "base/error.h"

#define SWEEP_SCHEMA "aorta.sweep/1"
#define ENV_SCHEMA "aorta.env/1"

/* ---- recipe ------------------------------------------------------------------- */

enum axis_kind {
	AX_ENVIRONMENT, /* the named environments (axis "environment") */
	AX_ENV,         /* environment variables (targets: their names) */
	AX_OVERRIDE,    /* aorta train keys (targets: dotted keys) */
};

struct sweep_axis {
	char *name;
	int line;
	enum axis_kind kind;
	char **targets;          /* what a value sets (a tied axis sets several) */
	size_t ntargets;
	char **values;
	int *value_lines;
	size_t nvalues;
};

struct sweep_environment {
	char *name;
	int line;
	char **keys, **vals;     /* variables, values with ${VAR} expanded */
	size_t n;
};

struct sweep_cell {
	char id[16];             /* "c01": its folder under cells/ */
	char *key;               /* "axis=value axis=value" in axis order: its identity */
	char *label;             /* the same without the axis names of single-value axes */
	int line;                /* recipe line of an explicit cell, else 0 */
	size_t *vi;              /* value index per axis */
};

struct recipe {
	char path[512];
	char *name;
	int trials;
	double timeout_s;
	int skip_steps;
	double threshold_pct;    /* smallest difference that counts, % of the baseline median */
	double noisy_pct;        /* a cell whose trial range exceeds this % of its median is noisy */
	int confound;            /* re-run the baseline at the end (default 1) */
	size_t baseline;         /* cell index */
	struct sweep_axis *axes;
	size_t naxes;
	struct sweep_environment *envs;
	size_t nenvs;
	char **env_k, **env_v;   /* variables set in every cell */
	size_t nenv;
	char **overrides;        /* "key=value" for every cell (aorta train) */
	size_t noverrides;
	char *train_config;      /* aorta train --config, NULL: its default */
	char **train_args;
	size_t ntrain_args;
	char **command;          /* the workload; NULL/0: aorta train */
	size_t ncommand;
	char *traces;            /* folder analysed, "{out}" unless the recipe names one */
	char *report_rows, *report_cols; /* heatmap axes, NULL: the first two with >= 2 values */
	int explicit_cells;
	struct sweep_cell *cells;
	size_t ncells;
};

/* Reads and expands path.  cli_command (ncli words, may be 0) replaces the
 * recipe's workload command; trials > 0 replaces its trials.  With
 * check_train, every cell's aorta train overrides are validated against
 * the train configuration (`--check-config` semantics).  Every error names
 * the recipe file and line; statuses AORTA_EINPUT (recipe) or AORTA_EUSAGE.
 * On error *r holds nothing to free. */
enum aorta_status recipe_load(const char *path, char *const *cli_command, size_t ncli, int trials,
			      int check_train, struct recipe *r, struct aorta_error *e);
enum aorta_status recipe_parse_text(const char *name, const char *text, struct recipe *r,
				    struct aorta_error *e); /* for tests: no CLI, no train check */
void recipe_free(struct recipe *r);

/* The environment name of a cell, or NULL when the recipe names none. */
const char *recipe_cell_environment(const struct recipe *r, const struct sweep_cell *c);
/* Replaces {out}, {cell}, {trial} and {AXIS} in s (caller frees). */
char *recipe_subst(const struct recipe *r, const struct sweep_cell *c, const char *s, const char *out,
		   const char *trial);
/* The aorta train overrides of a cell, fixed ones first: an array of n
 * "key=value" (caller frees the array, and the strings it adds to owned). */
const char **recipe_cell_overrides(const struct recipe *r, const struct sweep_cell *c, size_t *n, char ***owned,
				   size_t *nowned);
/* Writes the expanded recipe (explicit cells) as YAML that replays it. */
int recipe_write_resolved(FILE *f, const struct recipe *r);

/* ---- trials, statistics --------------------------------------------------------- */

enum trial_status { TR_NONE = 0, TR_OK, TR_FAILED, TR_TIMEOUT, TR_CRASHED, TR_NODATA };
const char *trial_status_name(enum trial_status s);
enum trial_status trial_status_from(const char *s);

struct trial_coll {
	char type[24];
	unsigned long long bytes, count;
	double busbw_gbps, total_ms;  /* busbw_gbps: transfer time, the join's (overlap/figures.h coll_bw) */
	double busbw_kernel_gbps;     /* over the whole kernel time, waiting included */
};

/* The figures of one trial (ms are per kept step, medians over steps; the
 * slowest rank for the step time, the mean over ranks for the others). */
struct trial {
	enum trial_status status;
	int trial;               /* 1..trials; 0: the confound re-run */
	int exit_code, signal;
	double run_s, analysis_s, bookkeeping_s, overhead_pct;
	double step_ms, step_mean_ms, comm_ms, exposed_ms, overlap_pct, wait_ms, transfer_ms,
		gemm_ms, idle_ms;
	int ranks, steps, late_rank;
	char diag[24];
	char headline[768];
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

/* ---- results ------------------------------------------------------------------- */

/* Reads a trial's result.json (AORTA_EINPUT when absent or malformed). */
enum aorta_status trial_read(const char *path, struct trial *t, struct aorta_error *e);
enum aorta_status trial_write(const char *path, const struct trial *t, struct aorta_error *e);
void trial_release(struct trial *t);

/* matrix.json, matrix.md (temp-then-rename) */
enum aorta_status sweep_write_matrix(const struct sweep *s, struct aorta_error *e);
/* Loads a sweep folder: recipe.resolved.yaml and every trial's result.json. */
enum aorta_status sweep_load(const char *dir, struct sweep *s, struct aorta_error *e);

/* ---- running ------------------------------------------------------------------- */

struct sweep_run_opts {
	int dry_run, resume;
	double timeout_s;        /* > 0 replaces the recipe's */
};

/* Runs every trial not yet done; 0 ok (cells may have failed), AORTA_EUSAGE
 * etc. on errors before the first trial, 130 when interrupted. */
int sweep_run(struct sweep *s, const struct sweep_run_opts *o, struct aorta_error *e);

/* ---- report -------------------------------------------------------------------- */

enum aorta_status sweep_report(struct sweep *const *s, size_t n, const char *out_dir, struct aorta_error *e);

/* ---- environment snapshot --------------------------------------------------------- */

struct env_field {
	char *key;               /* "nccl.version", "env.NCCL_DEBUG" */
	char *val;               /* NULL: not found / unset */
};
struct env_snapshot {
	struct env_field *f;
	size_t n, cap;
};
void env_snapshot_take(struct env_snapshot *s);
const struct env_field *env_snapshot_find(const struct env_snapshot *s, const char *key);
enum aorta_status env_snapshot_write_json(const struct env_snapshot *s, const char *path,
					  struct aorta_error *e);
void env_snapshot_release(struct env_snapshot *s);

#endif
