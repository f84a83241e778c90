/*
 * plausible.c - values no run can produce, rejected where the trace is
 * finished (trace_finish), whatever the format: each rejection is a
 * counted skip (trace_skip) whose first example is said with the file.
 *
 * Spans:
 *  - a communication kernel of zero length: a collective moves data and
 *    takes time; a zero-length one is a broken record, and kept it would
 *    move clock offsets and blame (the join takes its end as the
 *    collective's end);
 *  - a span longer than an hour and than 100 times the time the trace's
 *    span starts cover (a 27-hour kernel in a 0.3 s trace): the bound is
 *    relative, so a long job's long kernels stay, and absolute, so a short
 *    trace's legitimately long last kernel stays.
 * Host steps (ProfilerStep#N, NVTX, JSONL lines), sorted by number:
 *  - the same number twice on disjoint time ranges (a re-run appended, a
 *    counter reset): the later range is left out, where it used to be
 *    merged into one long step; overlapping ranges of one number (one step
 *    on two threads) are still merged;
 *  - a step that starts before a step of a smaller number ends (by more
 *    than 1 us and 1 % of that step): the clock went backwards inside the
 *    rank, or the numbering is broken; the later-numbered step is left out.
 * GPU-side step annotations are not checked: one step's rows on several
 * streams are merged by design.
 *
 * Cost: one pass over the spans (the starts' range), one sort of the steps
 * (done anyway).  Thread safety: works on one trace.
 */
#include "timeline/timeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "timeline/vocab.h"

#define LONG_SPAN_MIN_NS (3600LL * 1000000000LL) /* an hour */
#define LONG_SPAN_FACTOR 100
#define STEP_OVERLAP_SLACK_NS 1000

/* Drops the spans with keep[i] == 0 from every array (order kept). */
#define COMPACT(arr) do { size_t m_ = 0; for (size_t k_ = 0; k_ < t->n; k_++) \
	if (keep[k_]) (arr)[m_++] = (arr)[k_]; } while (0)

static void ms3(char *b, size_t n, int64_t ns)
{
	snprintf(b, n, "%.3f ms", (double)ns / 1e6);
}

void trace_plausible_spans(struct trace *t)
{
	if (!t->n)
		return;
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	for (size_t i = 0; i < t->n; i++) {
		if (t->start_ns[i] < lo)
			lo = t->start_ns[i];
		if (t->start_ns[i] > hi)
			hi = t->start_ns[i];
	}
	int64_t starts = hi - lo, bound = LONG_SPAN_MIN_NS;
	if (starts > bound / LONG_SPAN_FACTOR)
		bound = starts > INT64_MAX / LONG_SPAN_FACTOR ? INT64_MAX : starts * LONG_SPAN_FACTOR;
	unsigned char *keep = NULL;
	size_t dropped = 0;
	for (size_t i = 0; i < t->n; i++) {
		int64_t d = t->end_ns[i] - t->start_ns[i];
		const char *why = NULL;
		char b1[48], b2[48];
		if (d == 0 && kind_class((enum span_kind)t->kind[i]) == C_COMM)
			why = "zero-length communication kernel";
		else if (d > bound)
			why = "implausibly long span";
		if (!why)
			continue;
		if (!keep) {
			keep = xmalloc(t->n);
			memset(keep, 1, t->n);
		}
		keep[i] = 0;
		dropped++;
		ms3(b1, sizeof(b1), t->start_ns[i] - lo);
		if (d == 0)
			trace_skip(t, "%s '%.80s' at %s (a collective takes time; a zero-length one "
				   "is a broken record)", why, strtab_get(&t->names, t->name[i]), b1);
		else {
			ms3(b2, sizeof(b2), starts);
			trace_skip(t, "%s: '%.80s' lasts %.1f h, while the trace's events start within %s",
				   why, strtab_get(&t->names, t->name[i]), (double)d / 3.6e12, b2);
		}
	}
	if (!dropped)
		return;
	COMPACT(t->start_ns);
	COMPACT(t->end_ns);
	COMPACT(t->launch_ns);
	COMPACT(t->corr);
	COMPACT(t->bytes);
	COMPACT(t->name);
	COMPACT(t->stream);
	COMPACT(t->step);
	COMPACT(t->meta);
	COMPACT(t->kind);
	COMPACT(t->coll_type);
	COMPACT(t->hint);
	t->n -= dropped;
	free(keep);
}

static int cmp_number_start(const void *a, const void *b)
{
	const struct step_range *x = a, *y = b;
	if (x->number != y->number)
		return (x->number > y->number) - (x->number < y->number);
	return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

void trace_plausible_steps(struct trace *t)
{
	struct step_range *r = t->steps;
	size_t n = t->nsteps, m = 0;

	if (n < 2)
		return;
	qsort(r, n, sizeof(*r), cmp_number_start);
	/* one number, several ranges: overlapping ones merge, a disjoint one
	 * (later) is left out */
	for (size_t i = 0; i < n; i++) {
		if (m && r[m - 1].number == r[i].number) {
			if (r[i].start_ns <= r[m - 1].end_ns) {
				if (r[i].end_ns > r[m - 1].end_ns)
					r[m - 1].end_ns = r[i].end_ns;
			} else {
				char b1[48], b2[48];
				ms3(b1, sizeof(b1), r[m - 1].start_ns);
				ms3(b2, sizeof(b2), r[i].start_ns);
				trace_skip(t, "step %lld appears twice, at %s and at %s (a re-run appended, or "
					   "the counter reset?): the later one left out", (long long)r[i].number,
					   b1, b2);
			}
			continue;
		}
		r[m++] = r[i];
	}
	/* numbers in time order: a step may not start before a smaller-numbered
	 * one ends */
	size_t k = 0;
	int64_t prev_end = INT64_MIN, prev_len = 0;
	long long prev_num = 0;
	for (size_t i = 0; i < m; i++) {
		int64_t over = prev_end == INT64_MIN ? 0 : prev_end - r[i].start_ns;
		if (over > STEP_OVERLAP_SLACK_NS && over > prev_len / 100) {
			char b1[48];
			ms3(b1, sizeof(b1), over);
			trace_skip(t, "step %lld starts %s before step %lld ends (the clock went backwards "
				   "inside the rank, or the steps overlap): step %lld left out",
				   (long long)r[i].number, b1, prev_num, (long long)r[i].number);
			continue;
		}
		r[k++] = r[i];
		prev_end = r[i].end_ns;
		prev_len = r[i].end_ns - r[i].start_ns;
		prev_num = (long long)r[i].number;
	}
	t->nsteps = k;
}
