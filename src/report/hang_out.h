/*
 * hang_out.h - a run's hang from its Flight Recorder dumps, in `aorta
 * report`'s outputs (hang_out.c): index.html's "Why it hung" section and
 * summary.json's per-dataset "hang" object.  Both write nothing for runs
 * without dumps.
 */
#ifndef AORTA_REPORT_HANG_OUT_H
#define AORTA_REPORT_HANG_OUT_H

#include <stdio.h>

#include "base/output.h"
#include "report/report_model.h"

void report_hang_html(FILE *f, const struct report *r);
void report_hang_json(struct jw *w, const struct rep_dataset *d);

#endif
