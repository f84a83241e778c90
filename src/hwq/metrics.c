/*
 * metrics.c - every derived figure of aorta hwq, from raw figures only
 * (host, no CUDA; unit-tested in tests/unit/test_hwq.c).
 *
 * Formulas (upstream's hw_queue_eval, docs/hwq.md):
 *   percentile p of n sorted values: base/stats.h (linear interpolation
 *     at index (n-1)p/100);  std: sample standard deviation (n-1);
 *   throughput = work_per_iter * iters / sum(iteration ms) * work_scale
 *     (work_scale takes "work per ms" to the unit);
 *   switch latency: kernels sorted by end; for consecutive pairs with
 *     gap = next.start - prev.end > 0 the gap is intra-stream when both
 *     are on one stream, else inter-stream;
 *     overhead = max(0, mean inter - mean intra);
 *   per-stream busy time: |union of the stream's kernels, copies and fills| (ivset) per
 *     timing iteration;
 *   scaling efficiency eff_i = tp_i / (tp_0 / sc_0 * sc_i); peak = argmax
 *     tp; inflection = first i with eff_i < 0.8 eff_{i-1}.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/output.h"
#include "base/stats.h"
#include "hwq/hwq_host.h"
#include "ingest/ingest.h"
#include "overlap/ivset.h"
#include "timeline/timeline.h"

void hwq_raw_release(struct hwq_raw *r)
{
	if (!r)
		return;
	free(r->iter_ms);
	free(r->stream_ids);
	r->iter_ms = NULL;
	r->stream_ids = NULL;
}

double hwq_percentile(const double *v, int n, double p)
{
	return n <= 0 ? 0.0 : pctl_sorted(v, (size_t)n, p / 100.0); /* base/stats.h */
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

void hwq_stats_of(const double *v, int n, struct hwq_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->n = n;
	if (n <= 0)
		return;
	double *t = xmalloc((size_t)n * sizeof(*t));
	memcpy(t, v, (size_t)n * sizeof(*t));
	qsort(t, (size_t)n, sizeof(*t), cmp_double);
	double sum = 0;
	for (int i = 0; i < n; i++)
		sum += t[i];
	s->mean = sum / n;
	double ss = 0;
	for (int i = 0; i < n; i++)
		ss += (t[i] - s->mean) * (t[i] - s->mean);
	s->std = n > 1 ? sqrt(ss / (n - 1)) : 0.0;
	s->min = t[0];
	s->max = t[n - 1];
	s->p50 = hwq_percentile(t, n, 50);
	s->p95 = hwq_percentile(t, n, 95);
	s->p99 = hwq_percentile(t, n, 99);
	free(t);
}

struct kspan {
	int64_t s, e;
	int32_t stream;
};

static int cmp_end(const void *a, const void *b)
{
	const struct kspan *x = a, *y = b;
	if (x->e != y->e)
		return (x->e > y->e) - (x->e < y->e);
	return (x->s > y->s) - (x->s < y->s);
}

void hwq_switch_of(const int64_t *start_ns, const int64_t *end_ns, const int32_t *stream, size_t n,
		   struct hwq_switch *sw)
{
	memset(sw, 0, sizeof(*sw));
	if (n < 2)
		return;
	struct kspan *k = xmalloc(n * sizeof(*k));
	for (size_t i = 0; i < n; i++)
		k[i] = (struct kspan){ start_ns[i], end_ns[i], stream[i] };
	qsort(k, n, sizeof(*k), cmp_end);
	double inter = 0, intra = 0;
	for (size_t i = 1; i < n; i++) {
		int64_t gap = k[i].s - k[i - 1].e;
		if (gap <= 0)
			continue;
		if (k[i].stream == k[i - 1].stream) {
			intra += (double)gap;
			sw->intra_n++;
		} else {
			inter += (double)gap;
			sw->inter_n++;
		}
	}
	free(k);
	sw->inter_ms = sw->inter_n ? inter / (double)sw->inter_n / 1e6 : 0.0;
	sw->intra_ms = sw->intra_n ? intra / (double)sw->intra_n / 1e6 : 0.0;
	sw->overhead_ms = sw->inter_ms > sw->intra_ms ? sw->inter_ms - sw->intra_ms : 0.0;
}

/* Which trace stream is which workload stream (map[0..ns)): the markers
 * the timing pass starts with (one per stream, in stream order; marker[i]
 * set), else the stream ids the plug-in reported; idx: scratch of n. */
static void stream_map(struct hwq_result *r, const struct trace *t, size_t n, int ns, long long *map,
		       uint8_t *marker, uint32_t *idx)
{
	size_t nmark = 0;
	for (size_t i = 0; i < n; i++)
		if (t->hint[i] == R_KERNEL && strstr(strtab_get(&t->names, t->name[i]), HWQ_MARKER_NAME)) {
			marker[i] = 1;
			idx[nmark++] = (uint32_t)i;
		}
	r->trace_by_markers = 0;
	if ((int)nmark == ns) {
		/* insertion sort by start (ns is small) */
		for (size_t a2 = 1; a2 < nmark; a2++)
			for (size_t b2 = a2; b2 > 0 && t->start_ns[idx[b2 - 1]] > t->start_ns[idx[b2]]; b2--) {
				uint32_t x = idx[b2];
				idx[b2] = idx[b2 - 1];
				idx[b2 - 1] = x;
			}
		int distinct = 1;
		for (int j = 0; j < ns; j++) {
			map[j] = t->stream[idx[j]];
			for (int q = 0; q < j; q++)
				distinct &= map[q] != map[j];
		}
		r->trace_by_markers = distinct;
	}
	if (!r->trace_by_markers)
		for (int j = 0; j < ns; j++)
			map[j] = r->raw.stream_ids ? r->raw.stream_ids[j] : LLONG_MIN;
}

enum aorta_status hwq_trace_metrics(struct hwq_result *r, const char *path, struct aorta_error *e)
{
	int ns = r->raw.streams;
	struct ingest_opts io = { .rules = NULL, .rank_hint = -1 };
	struct trace_set ts;
	memset(&ts, 0, sizeof(ts));
	enum aorta_status st = ingest_kineto(path, &io, &ts, e);
	/* the run's own output read back, not an input of the user's: a later
	 * run of this process may write that name again (base/output.h) */
	out_guard_forget(path);
	if (st) {
		trace_set_release(&ts);
		return st;
	}
	free(r->per_stream_ms);
	free(r->kernels_per_stream);
	r->per_stream_ms = xcalloc((size_t)ns, sizeof(double));
	r->kernels_per_stream = xcalloc((size_t)ns, sizeof(long long));
	r->trace_kernels = 0;
	const struct trace *t = ts.n ? ts.t[0] : NULL;
	size_t n = t ? t->n : 0;
	int64_t *s = xmalloc((n + 1) * sizeof(*s)), *en = xmalloc((n + 1) * sizeof(*en));
	int32_t *sid = xmalloc((n + 1) * sizeof(*sid));
	uint32_t *idx = xmalloc((n + 1) * sizeof(*idx));
	long long *map = xcalloc((size_t)ns, sizeof(long long));
	uint8_t *marker = xcalloc(n + 1, 1);
	stream_map(r, t, n, ns, map, marker, idx);
	size_t m = 0, matched = 0;
	for (size_t i = 0; i < n; i++)
		if (t->hint[i] == R_KERNEL && !marker[i])
			for (int j = 0; j < ns; j++)
				matched += map[j] == (long long)t->stream[i];
	/* Graph replays may run their kernels on streams of the graph's own
	 * (CUPTI reports them there, not on the capturing streams): when no
	 * kernel is on a workload stream, the trace's streams are numbered in
	 * order of appearance (the last index takes any beyond ns). */
	r->trace_by_appearance = matched == 0;
	if (r->trace_by_appearance)
		r->trace_by_markers = 0;
	int32_t seen[256];
	int nseen = 0;
	/* kernels first (switch latency is kernel-to-kernel, as upstream),
	 * then copies and fills, which count in a stream's activity and busy
	 * time (a transfer role's streams may run copies only) */
	size_t mk = 0;
	for (int pass = 0; pass < 2; pass++)
	for (size_t i = 0; i < n; i++) {
		if (marker[i] || t->hint[i] == R_SYNC || (t->hint[i] == R_KERNEL) != (pass == 0))
			continue;
		int k = -1;
		if (!r->trace_by_appearance) {
			for (int j = 0; j < ns; j++)
				if (map[j] == (long long)t->stream[i]) {
					k = j;
					break;
				}
		} else {
			for (int j = 0; j < nseen; j++)
				if (seen[j] == t->stream[i])
					k = j;
			if (k < 0 && nseen < 256) {
				seen[nseen] = t->stream[i];
				k = nseen++;
			}
			if (k >= ns || k < 0)
				k = ns - 1;
		}
		if (k < 0)
			continue;
		s[m] = t->start_ns[i];
		en[m] = t->end_ns[i];
		sid[m] = k;
		m++;
		r->kernels_per_stream[k]++;
		if (pass == 0)
			mk = m;
	}
	free(map);
	free(marker);
	r->trace_kernels = (long long)mk;
	hwq_switch_of(s, en, sid, mk, &r->sw);
	int iters = r->raw.timing_iters > 0 ? r->raw.timing_iters : 1;
	struct ivset v;
	ivset_init(&v);
	for (int j = 0; j < ns; j++) {
		size_t c = 0;
		for (size_t i = 0; i < m; i++)
			if (sid[i] == j)
				idx[c++] = (uint32_t)i;
		ivset_build(&v, s, en, idx, c);
		r->per_stream_ms[j] = (double)ivset_len(&v) / 1e6 / iters;
	}
	ivset_release(&v);
	free(s);
	free(en);
	free(sid);
	free(idx);
	trace_set_release(&ts);
	return AORTA_OK;
}

void hwq_result_derive(struct hwq_result *r)
{
	const struct hwq_raw *w = &r->raw;
	hwq_stats_of(w->iter_ms, w->iters, &r->lat);
	double sum = 0;
	for (int i = 0; i < w->iters; i++)
		sum += w->iter_ms[i];
	r->total_time_ms = sum;
	double work = w->work_per_iter * w->iters;
	r->throughput = sum > 0 ? work / sum * w->work_scale : 0.0;
	r->throughput_wall = w->total_wall_ms > 0 ? work / w->total_wall_ms * w->work_scale : 0.0;
	r->kernels_per_s = w->total_wall_ms > 0 ? (double)w->kernels_per_iter * w->iters / w->total_wall_ms * 1e3
						 : 0.0;
}

void hwq_result_release(struct hwq_result *r)
{
	if (!r)
		return;
	hwq_raw_release(&r->raw);
	free(r->per_stream_ms);
	free(r->kernels_per_stream);
	r->per_stream_ms = NULL;
	r->kernels_per_stream = NULL;
}

void hwq_sweep_analyze(const int *streams, const double *tp, int n, struct hwq_sweep_analysis *a)
{
	memset(a, 0, sizeof(*a));
	a->n = n;
	a->peak = -1;
	a->inflection = -1;
	if (n <= 0)
		return;
	a->streams = xmalloc((size_t)n * sizeof(int));
	a->tp = xmalloc((size_t)n * sizeof(double));
	a->eff = xmalloc((size_t)n * sizeof(double));
	memcpy(a->streams, streams, (size_t)n * sizeof(int));
	memcpy(a->tp, tp, (size_t)n * sizeof(double));
	double per = streams[0] > 0 ? tp[0] / streams[0] : 0.0;
	a->peak = 0;
	for (int i = 0; i < n; i++) {
		double ideal = per * streams[i];
		a->eff[i] = ideal > 0 ? tp[i] / ideal : 0.0;
		if (tp[i] > tp[a->peak])
			a->peak = i;
		if (i > 0 && a->inflection < 0 && a->eff[i] < 0.8 * a->eff[i - 1])
			a->inflection = i;
	}
}

void hwq_sweep_analysis_release(struct hwq_sweep_analysis *a)
{
	free(a->streams);
	free(a->tp);
	free(a->eff);
	memset(a, 0, sizeof(*a));
}
