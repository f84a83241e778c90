/*
 * plausible.c - values no run can produce, rejected where the trace is
 * finished (trace_finish), whatever the format: each rejection is a
 * counted skip (trace_skip) whose first example is said with the file.
 *
 * Spans:
 *  - a time beyond the limits of timeline.h (TRACE_MIN_NS, TRACE_MAX_NS),
 *    or longer than TRACE_MAX_SPAN_NS: kept, their differences and sums
 *    would overflow int64 downstream (a step of -9.2e12 ms);
 *  - a communication kernel of zero length (by its kind: the one the
 *    reader gave, else the one its name classifies as) where the input's
 *    clock resolves a microsecond (tick_ns; an op table timed in ms may
 *    round a short send to 0): a collective moves data and
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
 * Host steps and GPU-side step annotations beyond the limits are left out
 * too; GPU-side annotations are not checked otherwise: one step's rows on
 * several streams are merged by design.
 * Launches: a launch after the start of the op it launched (beyond
 * TRACE_LAUNCH_SLACK_NS of clock jitter) or beyond the limits is left out
 * (the op is kept, its launch unknown): kept, it would make a host gap of
 * negative latency and the what-if's verdict "fix host launch gaps".
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

static int time_ok(int64_t v)
{
	return v >= TRACE_MIN_NS && v <= TRACE_MAX_NS;
}

/* Marks span i dropped in keep (made, all kept, on the first drop). */
static unsigned char *drop(const struct trace *t, unsigned char *keep, size_t i, size_t *dropped)
{
	if (!keep) {
		keep = xmalloc(t->n);
		memset(keep, 1, t->n);
	}
	keep[i] = 0;
	(*dropped)++;
	return keep;
}

void trace_plausible_spans(struct trace *t)
{
	if (!t->n)
		return;
	unsigned char *keep = NULL;
	size_t dropped = 0;
	/* first the limits, so that every difference below is exact */
	for (size_t i = 0; i < t->n; i++) {
		int64_t s = t->start_ns[i], e = t->end_ns[i];
		if (time_ok(s) && time_ok(e) && e >= s && e - s <= TRACE_MAX_SPAN_NS)
			continue;
		keep = drop(t, keep, i, &dropped);
		if (!time_ok(s) || !time_ok(e))
			trace_skip(t, "'%.80s' at %lld ns .. %lld ns: beyond the time limits of a trace (-2^61 .. 2^62 ns, "
				   "TRACE_MIN_NS .. TRACE_MAX_NS)", strtab_get(&t->names, t->name[i]), (long long)s,
				   (long long)e);
		else if (e < s)
			trace_skip(t, "'%.80s' ends before it starts", strtab_get(&t->names, t->name[i]));
		else
			trace_skip(t, "'%.80s' lasts %.1f h, beyond the limit of 10^6 s for one span (TRACE_MAX_SPAN_NS)",
				   strtab_get(&t->names, t->name[i]), (double)(e - s) / 3.6e12);
	}
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	for (size_t i = 0; i < t->n; i++) {
		if (keep && !keep[i])
			continue;
		if (t->start_ns[i] < lo)
			lo = t->start_ns[i];
		if (t->start_ns[i] > hi)
			hi = t->start_ns[i];
	}
	int64_t starts = hi >= lo ? hi - lo : 0, bound = LONG_SPAN_MIN_NS;
	if (starts > bound / LONG_SPAN_FACTOR)
		bound = starts > INT64_MAX / LONG_SPAN_FACTOR ? INT64_MAX : starts * LONG_SPAN_FACTOR;
	for (size_t i = 0; i < t->n; i++) {
		if (keep && !keep[i])
			continue;
		int64_t d = t->end_ns[i] - t->start_ns[i];
		const char *why = NULL;
		char b1[48], b2[48];
		if (d == 0 && kind_class((enum span_kind)t->kind[i]) == C_COMM && t->tick_ns <= 1000)
			why = "zero-length communication kernel";
		else if (d > bound)
			why = "implausibly long span";
		if (!why)
			continue;
		keep = drop(t, keep, i, &dropped);
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

/* Steps whose bounds lie beyond the limits, or that end before they
 * start, are left out; returns how many stay (order kept). */
static size_t drop_beyond_limits(struct trace *t, struct step_range *r, size_t n, const char *what)
{
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (time_ok(r[i].start_ns) && time_ok(r[i].end_ns) && r[i].end_ns >= r[i].start_ns) {
			r[m++] = r[i];
			continue;
		}
		if (r[i].end_ns < r[i].start_ns && time_ok(r[i].start_ns) && time_ok(r[i].end_ns))
			trace_skip(t, "%s %lld ends before it starts: left out", what, (long long)r[i].number);
		else
			trace_skip(t, "%s %lld at %lld ns .. %lld ns: beyond the time limits of a trace (-2^61 .. 2^62 ns, "
				   "TRACE_MIN_NS .. TRACE_MAX_NS): left out", what, (long long)r[i].number,
				   (long long)r[i].start_ns, (long long)r[i].end_ns);
	}
	return m;
}

void trace_plausible_steps(struct trace *t)
{
	struct step_range *r = t->steps;
	size_t n = t->nsteps, m = 0;

	t->ngsteps = drop_beyond_limits(t, t->gsteps, t->ngsteps, "GPU-side step annotation");
	n = t->nsteps = drop_beyond_limits(t, r, n, "step");
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

void trace_plausible_launches(struct trace *t)
{
	for (size_t i = 0; i < t->n; i++) {
		int64_t l = t->launch_ns[i];
		if (l == INT64_MIN)
			continue;
		if (!time_ok(l)) {
			trace_skip(t, "the launch of '%.80s' at %lld ns: beyond the time limits of a trace (-2^61 .. 2^62 "
				   "ns): the launch left out", strtab_get(&t->names, t->name[i]), (long long)l);
		} else if (l - t->start_ns[i] > TRACE_LAUNCH_SLACK_NS) {
			char b[48];
			ms3(b, sizeof(b), l - t->start_ns[i]);
			trace_skip(t, "'%.80s' starts %s before it is launched (a launch comes before its op's start): "
				   "the launch left out", strtab_get(&t->names, t->name[i]), b);
		} else {
			continue;
		}
		t->launch_ns[i] = INT64_MIN;
	}
}
