/*
 * figures.h - the table of figures every output walks (JSON keys, CSV
 * columns, terminal rows, compare rows), so names and order are defined
 * once.  Each entry reads one int64 ns field of struct ov_figures.
 */
#ifndef AORTA_FIGURES_H
#define AORTA_FIGURES_H

#include <stddef.h>
#include "overlap/analysis.h"
#include "overlap/engine.h"

struct figure {
	const char *key;        /* JSON key, e.g. "exposed_comm_ms" */
	const char *label;      /* terminal label */
	size_t off;             /* offset of the int64 field in struct ov_figures */
	int lower_is_better;    /* for compare: 1 lower is better, 0 neutral, -1 higher */
};

extern const struct figure FIGURES[];
extern const size_t NFIGURES;

static inline int64_t fig_value(const struct figure *f, const struct ov_figures *x)
{
	return *(const int64_t *)((const char *)x + f->off);
}

/* The per-step figures of `aorta report`: upstream overlap_report.py's
 * (step, compute, overlap, overlap per collective type) and aorta's beside
 * them.  Each is read off struct ov_figures like FIGURES (off), except the
 * overlap of one collective type (coll >= 0): coll_ns - coll_exposed_ns of
 * that type.  rec is the enum step_rec an input may have recorded itself
 * (JSONL), used instead where present; -1 none.  The direction of each
 * (better lower / higher) is FIGURES' for the same field (fig_dir). */
enum rep_fig {
	RF_STEP, RF_COMPUTE, RF_OVERLAP, RF_AR_OVERLAP, RF_RS_OVERLAP, RF_AG_OVERLAP,
	RF_COMM, RF_EXPOSED, RF_AUX, RF_IDLE, RF__COUNT
};
struct rep_fig_def {
	const char *key;      /* summary.json key, e.g. "overlap_ms" */
	const char *label;    /* chart and table label */
	size_t off;           /* int64 ns field of struct ov_figures (coll < 0) */
	int coll;             /* enum coll_type whose overlap this is, -1 none */
	int rec;              /* enum step_rec, -1 none */
};
extern const struct rep_fig_def REP_FIGS[RF__COUNT];
/* Value of a report figure in ms. */
double rep_fig_ms(const struct rep_fig_def *f, const struct ov_figures *x);
/* 1 lower is better, -1 higher is better, 0 neutral. */
int rep_fig_dir(const struct rep_fig_def *f);

/* The bandwidth of one collective (type, size) over several rows (ranks,
 * process groups), as the join defines it for one row (join.c
 * row_bandwidth): busbw_gbps from the transfer time of the calls matched
 * across ranks (sum of bytes x matched over sum of transfer), and
 * busbw_kernel_gbps from the whole kernel time (sum of bytes x count over
 * sum of kernel time), times the nccl-tests factor.  Where the rows are one
 * collective seen by each rank they agree, and the result is their figure
 * to the last bit (exact integer sums; one division).  Used by report and
 * sweep, so a key means one quantity everywhere (docs/metrics.md). */
struct coll_bw {
	double moved_matched, xfer_ns;   /* sum of bytes x matched, of transfer ns */
	double moved, kernel_ns;         /* sum of bytes x count, of kernel ns */
	double moved_matched_f, moved_f; /* the same, each row times its factor */
	int group_size, mixed;           /* one group size, or mixed sizes */
	uint8_t type;
	int rows;
};
void coll_bw_add(struct coll_bw *b, const struct coll_row *c);
double coll_bw_busbw_gbps(const struct coll_bw *b);        /* NaN: no matched call or no size */
double coll_bw_busbw_kernel_gbps(const struct coll_bw *b); /* NaN: no size or no time */

/* Keys of the figures an input recorded per step itself (enum step_rec,
 * timeline.h), as a step's "recorded" object in the analysis JSON. */
extern const char *const REC_KEYS[SR__COUNT];

/* Ratios derived from figures; NaN when the denominator is zero. */
double ratio(int64_t num, int64_t den);

#endif
