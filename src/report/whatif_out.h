/*
 * whatif_out.h - the what-if's outputs (overlap/whatif.h): the terminal
 * section and across_ranks.what_if in the analysis JSON.  Kept apart from
 * analysis_out.c so that its codec can change without touching these.
 */
#ifndef AORTA_WHATIF_OUT_H
#define AORTA_WHATIF_OUT_H

#include <stdio.h>

#include "base/output.h"

struct analysis;
struct whatif;

/* across_ranks.what_if (w may be NULL: written as null). */
void whatif_write_json(struct jw *j, const struct analysis *a, const struct whatif *w);
/* The terminal section "What-if" (nothing when w is NULL). */
void whatif_print(FILE *f, const struct analysis *a, const struct whatif *w);

#endif
