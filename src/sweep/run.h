/*
 * run.h - running a sweep (run.c): every trial as a child process group,
 * analysed by the one engine, written temp-then-rename.
 */
#ifndef AORTA_SWEEP_RUN_H
#define AORTA_SWEEP_RUN_H

#include "sweep/rank.h"

/* ---- running ------------------------------------------------------------------- */

struct sweep_run_opts {
	int dry_run, resume;
	double timeout_s;        /* > 0 replaces the recipe's */
};

/* Runs every trial not yet done; 0 ok (cells may have failed), AORTA_EUSAGE
 * etc. on errors before the first trial, 130 when interrupted. */
int sweep_run(struct sweep *s, const struct sweep_run_opts *o, struct aorta_error *e);

#endif
