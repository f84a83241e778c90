/*
 * analysis_out.h - presenting a struct analysis: terminal summary, JSON
 * (schema aorta.analysis/4), CSV tables, and a Chrome trace for Perfetto.
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
/* Declares the files analysis_save_csv writes into DIR to the output guard
 * (base/output.h), WHAT naming the option. */
enum aorta_status analysis_guard_csv(const char *dir, const char *what, struct aorta_error *e);
enum aorta_status analysis_save_csv(const struct analysis *a, const char *dir, struct aorta_error *e);
enum aorta_status analysis_save_trace(const struct analysis *a, const char *path, struct aorta_error *e);

#endif
