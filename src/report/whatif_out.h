/*
 * whatif_out.h - the what-if's outputs (overlap/whatif.h): the terminal
 * section and compare's rows.  across_ranks.what_if in the analysis JSON is
 * the analysis model's tables' (analysis_io/fields.c).
 */
#ifndef AORTA_WHATIF_OUT_H
#define AORTA_WHATIF_OUT_H

#include <stdio.h>

#include "base/output.h"

struct analysis;
struct whatif;

/* The terminal section "What-if" (nothing when w is NULL); all: every
 * fix and step, not the first few. */
void whatif_print(FILE *f, const struct analysis *a, const struct whatif *w, int all);

/* compare: the two runs' what-ifs side by side: terminal rows on f (when
 * not NULL) and "what_if" into j (when not NULL); either run's may be NULL
 * or not ok. */
void whatif_compare(FILE *f, struct jw *j, const struct whatif *base, const struct whatif *x);

#endif
