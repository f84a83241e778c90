/*
 * analysis_out.h - presenting a struct analysis: the terminal summary and
 * a Chrome trace for Perfetto (the JSON and the CSV tables are
 * analysis_io's, analysis_io.h).
 * Writers go through out_open/out_commit, so files are complete or absent.
 */
#ifndef AORTA_ANALYSIS_OUT_H
#define AORTA_ANALYSIS_OUT_H

#include <stdio.h>

#include "analysis_io/analysis_io.h"
#include "overlap/analysis.h"

/* What analysis_print prints: the summary (report/answer.h) first, the
 * detail after it; verbose: every rank's section (a large job shows a few),
 * every what-if fix, the per-step rows. */
enum { PRINT_SUMMARY = 1, PRINT_DETAIL = 2, PRINT_VERBOSE = 4, PRINT_PER_STEP = 8 };
void analysis_print(FILE *f, const struct analysis *a, unsigned what);
enum aorta_status analysis_save_trace(const struct analysis *a, const char *path, struct aorta_error *e);

#endif
