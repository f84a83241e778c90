/*
 * analysis_json.h - reads a saved analysis (`aorta analyze --json`, schema
 * aorta.analysis/1, and /2) back into struct analysis, so that report and
 * compare take a saved analysis through the same struct as traces and
 * JSONL (no second reader of the format).
 *
 * The document is checked against its schema: a field of the wrong type
 * (a figure "abc", a null rank, a negative count) is AORTA_EINPUT naming
 * the field's path, e.g. "ranks[1].rank: expected an integer, got null".
 * Derived fields (ratios, step_stats, across_ranks.figures) are not read:
 * they are recomputed from the figures.  No timelines come back (r->t is
 * NULL, the waiting and exposed sets are empty).  On error *a is freed and
 * zeroed.  Thread-safe; the caller frees *a with analysis_free.
 */
#ifndef AORTA_ANALYSIS_JSON_H
#define AORTA_ANALYSIS_JSON_H

#include "base/error.h"
#include "overlap/analysis.h"

enum aorta_status analysis_json_read(const char *path, struct analysis *a, struct aorta_error *e);
/* text is NUL-terminated; path names it in errors. */
enum aorta_status analysis_json_parse(const char *path, const char *text, struct analysis *a,
				      struct aorta_error *e);

#endif
