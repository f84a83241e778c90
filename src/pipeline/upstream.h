/*
 * upstream.h - a run folder's overlap_report.py records, read through the
 * pipeline for `aorta report` (report/upstream.h holds the figures; report
 * reads no file itself).
 */
#ifndef AORTA_PIPELINE_UPSTREAM_H
#define AORTA_PIPELINE_UPSTREAM_H

#include <stddef.h>

#include "base/error.h"
#include "report/upstream.h"

/* Number of rank_*_metrics.jsonl files directly in dir (0: none, or not a
 * directory). */
size_t pipeline_upstream_files(const char *dir);
/* Their paths ("dir/name"), sorted by name (caller frees each and the array). */
char **pipeline_upstream_paths(const char *dir, size_t *n);
/* Reads every rank_*_metrics.jsonl of dir into u.  A line that is not an
 * upstream record (no profile.overlap object) or not JSON is left out and
 * counted (bad_lines, first_bad: file and line); overlap_report.py would
 * stop there.  Only an unreadable file is an error. */
enum aorta_status pipeline_upstream_read(const char *dir, struct rep_upstream *u, struct aorta_error *e);
/* The same from the records the analysis's own pass gathered
 * (pipeline.h's analysis_run_upstream): 1 and u filled when s holds
 * exactly dir's rank_*_metrics.jsonl files, in overlap_report.py's order,
 * each read as it reads them; else 0 (u untouched: read them with
 * pipeline_upstream_read). */
struct up_sums;
int pipeline_upstream_from_sums(const char *dir, const struct up_sums *s, struct rep_upstream *u);
#endif
