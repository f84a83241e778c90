/*
 * upstream.h - upstream overlap_report.py's summary figures, computed as it
 * computes them, for `aorta report` to be its drop-in (issue 26 item 1).
 *
 * overlap_report.py globs rank_*_metrics.jsonl of a run directory, sorted
 * by name, and pools every record of every rank (no warm-up skip).  Per
 * record it reads loss, profile.overlap.overlap_ms.compute_comm,
 * .compute_allreduce, .compute_reducescatter and
 * profile.overlap.per_stream_ms.compute (0 when a key is missing).  Then:
 * count = records; mean_X = sum(X) / count in record order;
 * overlap_ratio = mean_overlap / mean_compute, 0 when compute <= 0
 * (docs/metrics.md "Report").  The records are read by the pipeline
 * (pipeline/upstream.h: in the pass that reads the JSONL for the analysis
 * where report reads it, else by a pass of their own); the sums are added
 * in the same order with doubles, so the figures equal Python's to the
 * bit.
 */
#ifndef AORTA_REPORT_UPSTREAM_H
#define AORTA_REPORT_UPSTREAM_H

#include <stddef.h>

#include "base/error.h"
#include "overlap/analysis.h"

struct rep_upstream {
	int has;                  /* computed (from JSONL or recorded figures) */
	const char *from;         /* "jsonl": the files; "recorded": a saved analysis's recorded figures */
	size_t files;
	long long count;
	int loss_ok;              /* every record has a numeric loss */
	double sum_loss, sum_overlap, sum_compute, sum_ar, sum_rs;
	long long bad_lines;      /* lines left out (not JSON, not an upstream record) */
	char first_bad[512];      /* "file: line N: why" of the first */
	/* per rank (a file's rank_NN, as upstream names it; a recorded rank):
	 * its sums of overlap and compute, for a per-rank overlap_ratio */
	struct rep_upstream_rank { int rank; double sum_overlap, sum_compute; } *ranks;
	size_t nranks;
};
void rep_upstream_free(struct rep_upstream *u);
/* overlap_ratio of one rank (0 when its compute is 0), NaN when absent. */
double rep_upstream_rank_ratio(const struct rep_upstream *u, int rank);

/* The same from the figures an analysis kept of its JSONL (rank_result
 * rec: every step of every rank, in rank order).  0 when it has none. */
int rep_upstream_from_recorded(const struct analysis *a, struct rep_upstream *u);

/* The upstream figures (NaN when count is 0). */
double rep_upstream_mean(const struct rep_upstream *u, const double *sum);
double rep_upstream_ratio(const struct rep_upstream *u);

#endif
