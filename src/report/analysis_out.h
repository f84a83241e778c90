/*
 * analysis_out.h - presenting a struct analysis: terminal summary, JSON
 * (schema aorta.analysis/3), CSV tables, and a Chrome trace for Perfetto.
 * Writers go through out_open/out_commit, so files are complete or absent.
 */
#ifndef AORTA_ANALYSIS_OUT_H
#define AORTA_ANALYSIS_OUT_H

#include <stdio.h>

#include "overlap/analysis.h"

/* /2: algbw_gbps/busbw_gbps are from transfer time (end - last arrival),
 * no longer the whole kernel time (now *_kernel_gbps); docs/formats.md */
#define ANALYSIS_SCHEMA "aorta.analysis/3"

void analysis_print(FILE *f, const struct analysis *a, int per_step);
void analysis_write_json(FILE *f, const struct analysis *a);
enum aorta_status analysis_save_json(const struct analysis *a, const char *path, struct aorta_error *e);
enum aorta_status analysis_save_csv(const struct analysis *a, const char *dir, struct aorta_error *e);
enum aorta_status analysis_save_trace(const struct analysis *a, const char *path, struct aorta_error *e);

#endif
