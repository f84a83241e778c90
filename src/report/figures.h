/*
 * figures.h - the table of figures every output walks (JSON keys, CSV
 * columns, terminal rows, compare rows), so names and order are defined
 * once.  Each entry reads one int64 ns field of struct ov_figures.
 */
#ifndef AORTA_FIGURES_H
#define AORTA_FIGURES_H

#include <stddef.h>
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

/* Keys of the figures an input recorded per step itself (enum step_rec,
 * timeline.h), as a step's "recorded" object in the analysis JSON. */
extern const char *const REC_KEYS[SR__COUNT];

/* Ratios derived from figures; NaN when the denominator is zero. */
double ratio(int64_t num, int64_t den);

#endif
