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

void analysis_print(FILE *f, const struct analysis *a, int per_step);
enum aorta_status analysis_save_trace(const struct analysis *a, const char *path, struct aorta_error *e);

#endif
