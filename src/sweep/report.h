/*
 * report.h - the HTML page of one or more sweeps (report.c).
 */
#ifndef AORTA_SWEEP_REPORT_H
#define AORTA_SWEEP_REPORT_H

#include "sweep/rank.h"

/* ---- report -------------------------------------------------------------------- */

enum aorta_status sweep_report(struct sweep *const *s, size_t n, const char *out_dir, struct aorta_error *e);

#endif
