/*
 * results.h - a sweep's files (results.c): result.json per trial, matrix.json
 * (aorta.sweep/2), matrix.md, recipe.resolved.yaml, and a sweep read back.
 */
#ifndef AORTA_SWEEP_RESULTS_H
#define AORTA_SWEEP_RESULTS_H

#include "sweep/rank.h"

#define SWEEP_SCHEMA "aorta.sweep/2"

/* ---- results ------------------------------------------------------------------- */

const char *trial_status_name(enum trial_status s);
enum trial_status trial_status_from(const char *s);

/* Reads a trial's result.json (AORTA_EINPUT when absent or malformed). */
enum aorta_status trial_read(const char *path, struct trial *t, struct aorta_error *e);
enum aorta_status trial_write(const char *path, const struct trial *t, struct aorta_error *e);

/* matrix.json, matrix.md (temp-then-rename) */
enum aorta_status sweep_write_matrix(const struct sweep *s, struct aorta_error *e);
/* Loads a sweep folder: recipe.resolved.yaml and every trial's result.json. */
enum aorta_status sweep_load(const char *dir, struct sweep *s, struct aorta_error *e);

#endif
