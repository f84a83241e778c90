/*
 * report_model.h - the model behind `aorta report` (report_model.c): datasets (one per --log-dir /
 * --label), their per-step figures per rank, and what is derived from them
 * (summary.json: report_summary.h; charts: report_charts.h; index.html:
 * report_html.h).
 *
 * Inputs.  A dataset is one run as a struct analysis, however it was read
 * (cmd/report.c: traces and aorta JSONL through analysis_run, the input
 * rules every command shares; a saved `aorta analyze --json` through
 * analysis_io/json_read.c).  Its per-step figures are the engine's
 * (REP_FIGS, overlap/figures.c), the ones analyze prints under the same
 * keys.  Upstream's summary keys (count, mean_loss, mean_overlap_ms, ...)
 * are computed as overlap_report.py computes them, from the run's
 * rank_*_metrics.jsonl (report/upstream.h) whatever is beside them.  The
 * verdict names the run's diagnosis (overlap/diagnosis.h), the one
 * analyze prints.
 *
 * Ownership.  struct report owns everything under it; report_free releases
 * it.  Strings given in report_opts are borrowed and must outlive it.
 */
#ifndef AORTA_REPORT_MODEL_H
#define AORTA_REPORT_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "overlap/analysis.h"
#include "overlap/diagnosis.h"
#include "overlap/figures.h"
#include "report/answer.h"
#include "report/upstream.h"

#define REPORT_SCHEMA "aorta.report/2"


/* A percentile is stated only over enough samples (rank-steps): p90 over
 * at least REP_P90_MIN, p99 over at least REP_P99_MIN (summary.json keeps
 * every statistic with its count n). */
#define REP_P90_MIN 10
#define REP_P99_MIN 100

/* Pooled statistics of one figure over every kept step of every rank. */
struct rep_stat {
	size_t n;
	double mean, p50, p90, p99, min, max;
};

struct rep_range {            /* a stream range of one step (Gantt chart) */
	uint8_t stream;       /* index into rep_rank.stream_names */
	float start_ms, end_ms;
};

struct rep_rank {
	int rank, world_size;
	char *path;
	/* its steps, in file order, read from the analysis (rep_step_*): the
	 * engine's per-step figures, or one step of its whole-trace figures
	 * when it has none */
	const struct rank_result *rr; /* in the dataset's analysis (rep_dataset.a) */
	size_t nsteps;
	long long bad_lines;        /* records the reader left out (cut or malformed lines, ...) */
	/* stream ranges, kept for the dataset's first rank only */
	struct rep_range *ranges;
	size_t nranges;
	size_t *step_range0;        /* nsteps + 1 offsets into ranges */
	char *stream_names[16];
	int nstream_names;
	size_t ranges_cap, sr_cap;  /* private: capacities */
	/* filled by report_prepare (skip applied) */
	size_t kept;
	double mean[RF__COUNT], mean_loss;
	double ratio;               /* aorta's overlap / compute over its kept steps */
	double up_ratio;            /* upstream's overlap_ratio of its JSONL records, NaN without them */
	unsigned char absent[RF__COUNT]; /* the dataset's (rep_dataset.absent) */
};

/* Step k of a rank: its global step (the line ordinal where the input
 * gives none; 0 for the whole-trace step), its loss (NaN when the input has
 * none) and figure f (ms, REP_FIGS). */
int64_t rep_step_gstep(const struct rep_rank *r, size_t k);
double rep_step_loss(const struct rep_rank *r, size_t k);
double rep_step_v(const struct rep_rank *r, size_t k, int f);

struct rep_coll {             /* one collective (type, bytes) of a trace input, all ranks */
	char type[32];
	double bytes;             /* per call */
	double count, total_ms;
	struct coll_bw bw;        /* its bandwidth as the join defines it (overlap/figures.h) */
};

struct rep_dataset {
	const char *label, *input;
	const char *format;       /* "aorta-jsonl", "aorta-analysis", or the trace format */
	struct rep_rank *ranks;   /* sorted by rank */
	size_t nranks;
	struct rep_coll *colls;
	size_t ncolls;
	int has_loss, has_ranges;
	long long bad_lines;      /* records left out, all ranks */
	char *config_text;        /* a few lines describing the run, or NULL */
	struct analysis *a;       /* the run, owned (timelines dropped) */
	struct diagnosis diag;    /* analysis_diagnose(a): what analyze prints */
	/* filled by report_prepare (skip applied) */
	struct rep_stat *stat;    /* RF__COUNT figures */
	struct rep_stat loss;
	/* two figures, never one label: aorta's overlap / compute over the kept
	 * steps (the engine's figures), and upstream's overlap_ratio as
	 * overlap_report.py computes it from the run's JSONL (its own timers;
	 * NaN without JSONL) */
	double ratio, up_ratio;
	size_t kept, read;        /* steps used / read, all ranks */
	int world_size;
	/* figures the run lacks: the overlap of a collective type it never
	 * runs (DDP has no reduce-scatter); compared as "absent", never
	 * better or worse (rep_fig_absent) */
	unsigned char absent[RF__COUNT];
	/* upstream overlap_report.py's figures as it computes them: from the
	 * run's rank_*_metrics.jsonl whatever else is beside them, else from
	 * the figures a saved analysis recorded of its JSONL (has 0: from the
	 * engine's step figures, as before) */
	struct rep_upstream up;
	const char *analysis_from; /* what the analysis (aorta's keys) read: "traces", "jsonl", "saved analysis" */
	/* the late rank (else the rank that caused the most waiting) and a
	 * healthy rank (of the others, the one that caused the least waiting),
	 * whose stream Gantt charts the page shows side by side: their rank
	 * numbers (-1: none), their stream ranges kept (rep_rank.ranges) */
	int pair_late, pair_healthy;
	/* the summary the page leads with (report/answer.h), built once */
	struct answer *answer;
};

struct report_opts {
	int skip_steps;          /* leading steps of each rank left out (warm-up) */
	int threads;             /* 0: all cores */
	double threshold_pct;    /* better/worse beyond this change */
	const char *reference;   /* label or NULL */
	const char *const *candidates; /* labels */
	int ncandidates;
	const long *gantt_steps; /* global steps for the Gantt chart, or NULL: chosen */
	int ngantt;
	int skip_asked;          /* --skip-steps as given, when adapted to skip_steps (else equal) */
};


struct report {
	struct report_opts o;
	struct rep_dataset *ds;
	size_t nds;
	int ref;                 /* index of the reference dataset, -1: none */
	int *cand;               /* candidate indices */
	int ncand;
	int upstream_comparison; /* both --reference and --candidate given */
};

/* Builds d from a run's analysis, which it takes over (*a is zeroed;
 * its timelines, kept for the Gantt chart of the first rank, are freed
 * once the ranges are taken).  label and input are borrowed. */
void rep_dataset_from_analysis(const char *label, const char *input, struct analysis *a,
			       struct rep_dataset *d);
void rep_dataset_free(struct rep_dataset *d);
void report_free(struct report *r);

/* Kept steps of a rank (skip applied): [first, nsteps). */
size_t rep_first_kept(const struct rep_rank *r, int skip);
/* Statistics of figure f (or the loss, f = -1) over a dataset. */
struct rep_stat rep_dataset_stat(const struct rep_dataset *d, int skip, int f);
/* overlap / compute, ratio of means (0 when compute is 0), upstream's. */
double rep_overlap_ratio(const struct rep_dataset *d, int skip);

/* Fills the cached statistics of every dataset (after reading). */
void report_prepare(struct report *r);
/* The figures compared between runs: the RF_* figures then aorta's
 * overlap / compute (index RF__COUNT, key overlap_compute_ratio; upstream's
 * overlap_ratio is compared only where both runs have JSONL, beside).
 * Value of a dataset or rank (NaN where the run lacks the figure);
 * direction. */
#define REP_NCMP (RF__COUNT + 1)
double rep_cmp_value(const struct rep_dataset *d, int k);
double rep_cmp_rank_value(const struct rep_rank *r, int k);
const char *rep_cmp_key(int k);     /* "step_ms", ..., "overlap_compute_ratio" */
const char *rep_cmp_label(int k);
int rep_cmp_dir(int k);
/* The verdict of figure k (REP_NCMP index) going from x (reference) to y:
 * n/a when a side is missing, similar below --threshold percent or below
 * 0.05 ms, better / worse by direction; when the candidate's step is
 * slower (step_slower), no other figure is "better": "lower" / "higher". */
const char *rep_verdict(const struct report *r, double x, double y, int k, int step_slower);
/* Whether dataset d lacks figure k: a collective type's overlap where no
 * rank ran that type (no time of it, no step that recorded it non-zero). */
int rep_fig_absent(const struct rep_dataset *d, int k);
/* rep_verdict of values x (of reference b) and y (of candidate c), or
 * "absent" when either run lacks the figure: what every output says. */
const char *rep_cmp_verdict(const struct report *r, const struct rep_dataset *b, const struct rep_dataset *c,
			    double x, double y, int k, int step_slower);
int rep_step_slower(const struct report *r, const struct rep_dataset *b, const struct rep_dataset *c);
/* Rank of d with the given rank number, or NULL. */
const struct rep_rank *rep_find_rank(const struct rep_dataset *d, int rank);

#endif
