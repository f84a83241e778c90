/*
 * compare.h - one run against a baseline, on struct analysis: the
 * comparison `aorta compare` prints and `aorta report`'s comparisons use.
 * No JSON is printed and read back: both runs are structs, however they
 * were read (traces, JSONL, a saved analysis).
 *
 * Per figure (FIGURES): the per-step mean over the kept steps when both runs
 * have steps (runs of different lengths compare fairly), else the whole
 * trace; averaged over ranks.  A change is "similar" when it is below
 * threshold_pct percent OR below min_change_ms in absolute terms (a 6 us
 * change of a 0.13 ms figure is not a 4.5 % regression); otherwise better /
 * worse by the figure's direction, "changed" for neutral figures, "n/a"
 * when a side is missing.  The overall verdict leads with the step time:
 * when the step got slower, no other figure is called "better" (less idle
 * while the GPUs spin in NCCL waits is not an improvement): it is "lower" or
 * "higher".  Each run's diagnosis is analysis_diagnose()'s, the sentence
 * analyze prints.
 *
 * A regression (for --fail-on-regression PCT) is a directional figure
 * that got worse by more than PCT percent and by at least min_change_ms;
 * the comparison names each, worst (largest absolute change) first.
 * Thread-safe; nothing to free except compare_colls' array.
 */
#ifndef AORTA_COMPARE_H
#define AORTA_COMPARE_H

#include <stddef.h>
#include <stdint.h>

#include "overlap/analysis.h"
#include "overlap/diagnosis.h"

#define CMP_MAX_FIGS 32

struct cmp_opts {
	double threshold_pct;   /* below this percent: similar */
	double min_change_ms;   /* below this absolute change: similar */
	double fail_pct;        /* regression beyond this percent; < 0: none */
};

struct cmp_fig {
	const char *key, *label;
	int dir;                /* 1 lower is better, -1 higher is better, 0 neutral */
	double base, value;     /* ms; NaN when a side has no value */
	double change_ms, change_pct; /* NaN when not defined */
	const char *verdict;    /* better worse similar changed lower higher n/a */
	int regressed;          /* beyond fail_pct and min_change_ms */
};

struct cmp_result {
	int steps;              /* 1: per-step means; 0: whole trace */
	struct cmp_fig fig[CMP_MAX_FIGS];
	size_t nfig;
	const char *speed;      /* "faster", "slower", "about as fast", "n/a" (step time) */
	struct diagnosis dbase, dthis;
	size_t nregress;
	size_t regress[CMP_MAX_FIGS]; /* indices into fig, worst first */
	char verdict[2048];     /* the overall verdict, a few sentences */
};

/* Compares x with the baseline base. */
void compare_runs(const struct analysis *base, const struct analysis *x, const struct cmp_opts *o,
		  struct cmp_result *c);

/* Value (ms) of FIGURES[k] of one rank: per-step mean over the kept steps
 * (steps) or whole trace; NaN when none. */
double cmp_rank_value(const struct rank_result *r, int skip, size_t k, int steps);
/* The same averaged over the ranks that have it. */
double cmp_run_value(const struct analysis *a, size_t k, int steps);
/* 1 when every rank of both runs has kept steps. */
int cmp_both_have_steps(const struct analysis *a, const struct analysis *b);

/* better / worse / similar / changed / n/a with the absolute floor. */
const char *cmp_verdict(double base, double value, int dir, double thr_pct, double min_abs);

/* Collectives of both runs keyed by (type, process group, bytes), summed
 * over ranks: [0] baseline, [1] the other run. */
struct cmp_coll {
	char type[32], pg[64];
	uint64_t bytes;
	double count[2], total_ms[2], exposed_ms[2];
};
size_t compare_colls(const struct analysis *base, const struct analysis *x, struct cmp_coll **out);

/* "%+.2f%%"-style formatting that prints "n/a" for NaN and infinities. */
const char *cmp_fmt(char *buf, size_t n, const char *fmt, double v);

#endif
