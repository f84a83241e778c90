/*
 * report_summary.h - summary.json of `aorta report` (report_summary.c; schema aorta.report/2,
 * docs/formats.md).
 */
#ifndef AORTA_REPORT_SUMMARY_H
#define AORTA_REPORT_SUMMARY_H

#include "report/report_model.h"

/* summary.json (report_summary.c). */
enum aorta_status report_write_summary(const struct report *r, const char *path, struct aorta_error *e);

#endif
