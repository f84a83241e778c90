/*
 * engine.c - interval sets per rank and the figures read off them.
 *
 * Definitions (docs/metrics.md has them with sources):
 *   busy      = |∪ every span of class compute, comm, memcpy or memset|
 *   compute   = |K|, comm = |C|, memcpy = |M|, memset = |S|
 *   overlap   = |C ∩ K|           exposed_comm   = |C \ K|
 *   exposed_memcpy = |M \ (K ∪ C)|  gemm_comm = |G ∩ C|
 *   idle      = window − busy
 * The host-wait set holds each gap of the busy set whose following span was
 * launched by the host after the gap began (HTA's "host_wait" idea, on the
 * union of streams instead of per stream).
 */
#include "overlap/engine.h"
#include "base/error.h"

#include <stdlib.h>
#include <string.h>

static void build_where(struct ivset *v, const struct trace *t, const uint32_t *idx,
			size_t m, int (*pred)(const struct trace *, size_t, const uint8_t *, int),
			const uint8_t *cls, int arg)
{
	uint32_t *sel = xmalloc((m ? m : 1) * sizeof(*sel));
	size_t k = 0;

	for (size_t j = 0; j < m; j++) {
		size_t i = idx ? idx[j] : j;
		if (pred(t, i, cls, arg))
			sel[k++] = (uint32_t)i;
	}
	ivset_build(v, t->start_ns, t->end_ns, sel, k);
	free(sel);
}

static int p_busy(const struct trace *t, size_t i, const uint8_t *cls, int a)
{
	(void)t; (void)a;
	return cls[i] != C_NONE;
}

static int p_class(const struct trace *t, size_t i, const uint8_t *cls, int a)
{
	(void)t;
	return cls[i] == a;
}

static int p_kind(const struct trace *t, size_t i, const uint8_t *cls, int a)
{
	return cls[i] == C_COMPUTE && t->kind[i] == a;
}

static int p_coll(const struct trace *t, size_t i, const uint8_t *cls, int a)
{
	return cls[i] == C_COMM && t->coll_type[i] == a;
}

/* Orders idx[0..n) by (stream, index): each index is packed with its
 * stream into one 64-bit key, so qsort needs no context. */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static void sort_by_stream(const struct trace *t, uint32_t *idx, size_t n)
{
	uint64_t *key = xmalloc((n ? n : 1) * sizeof(*key));
	for (size_t j = 0; j < n; j++)
		key[j] = ((uint64_t)(uint32_t)((uint32_t)t->stream[idx[j]] ^ 0x80000000u) << 32) | idx[j];
	qsort(key, n, sizeof(*key), cmp_u64);
	for (size_t j = 0; j < n; j++)
		idx[j] = (uint32_t)key[j];
	free(key);
}

void ov_sets_build(struct ov_sets *o, const struct trace *t, const uint8_t *cls,
		   const uint32_t *subset, size_t m)
{
	struct ivset tmp;

	memset(o, 0, sizeof(*o));
	if (!subset)
		m = t->n;
	build_where(&o->set[S_BUSY], t, subset, m, p_busy, cls, 0);
	build_where(&o->set[S_COMPUTE], t, subset, m, p_class, cls, C_COMPUTE);
	build_where(&o->set[S_COMM], t, subset, m, p_class, cls, C_COMM);
	build_where(&o->set[S_MEMCPY], t, subset, m, p_class, cls, C_MEMCPY);
	build_where(&o->set[S_MEMSET], t, subset, m, p_class, cls, C_MEMSET);
	build_where(&o->set[S_GEMM], t, subset, m, p_kind, cls, K_GEMM);
	build_where(&o->set[S_ATTENTION], t, subset, m, p_kind, cls, K_ATTENTION);
	ivset_inter(&o->set[S_OVERLAP], &o->set[S_COMM], &o->set[S_COMPUTE]);
	ivset_diff(&o->set[S_EXPOSED_COMM], &o->set[S_COMM], &o->set[S_COMPUTE]);
	ivset_init(&tmp);
	ivset_union(&tmp, &o->set[S_COMPUTE], &o->set[S_COMM]);
	ivset_diff(&o->set[S_EXPOSED_MEMCPY], &o->set[S_MEMCPY], &tmp);
	ivset_release(&tmp);
	ivset_inter(&o->set[S_GEMM_COMM], &o->set[S_GEMM], &o->set[S_COMM]);
	for (int c = 1; c < COLL__COUNT; c++) {
		build_where(&o->coll[c], t, subset, m, p_coll, cls, c);
		ivset_diff(&o->coll_exposed[c], &o->coll[c], &o->set[S_COMPUTE]);
	}

	/* streams: the used spans' indices ordered by (stream, index) in one
	 * sort, then one ivset per run of equal streams, so the cost follows
	 * the spans, not spans x streams */
	uint32_t *byst = xmalloc((m ? m : 1) * sizeof(*byst));
	size_t k = 0;
	o->first_ns = INT64_MAX;
	o->last_ns = INT64_MIN;
	for (size_t j = 0; j < m; j++) {
		size_t i = subset ? subset[j] : j;
		if (cls[i] == C_NONE)
			continue;
		byst[k++] = (uint32_t)i;
		if (t->start_ns[i] < o->first_ns)
			o->first_ns = t->start_ns[i];
		if (t->end_ns[i] > o->last_ns)
			o->last_ns = t->end_ns[i];
	}
	if (!k)
		o->first_ns = o->last_ns = 0;
	sort_by_stream(t, byst, k);
	int32_t *ids = xmalloc((k ? k : 1) * sizeof(*ids));
	size_t ns = 0;
	for (size_t j = 0; j < k; j++)
		if (!ns || ids[ns - 1] != t->stream[byst[j]])
			ids[ns++] = t->stream[byst[j]];
	o->stream_id = ids;
	o->nstreams = ns;
	o->stream = xcalloc(ns ? ns : 1, sizeof(*o->stream));
	o->stream_spans = xcalloc(ns ? ns : 1, sizeof(*o->stream_spans));
	for (size_t j = 0, sidx = 0; j < k; sidx++) {
		size_t h = j;
		while (h < k && t->stream[byst[h]] == t->stream[byst[j]])
			h++;
		ivset_build(&o->stream[sidx], t->start_ns, t->end_ns, byst + j, h - j);
		o->stream_spans[sidx] = h - j;
		j = h;
	}
	free(byst);

	/* host wait: for each gap of busy, the first span starting at the gap's
	 * end; spans are sorted by start in a finished trace */
	struct ivset *busy = &o->set[S_BUSY], *hw = &o->set[S_HOST_WAIT];
	hw->n = 0;
	for (size_t g = 1; g < busy->n; g++) {
		int64_t gs = busy->e[g - 1], ge = busy->s[g];
		size_t lo = 0, hi = t->n;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (t->start_ns[mid] < ge)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (size_t i = lo; i < t->n && t->start_ns[i] == ge; i++) {
			if (cls[i] == C_NONE)
				continue;
			if (t->launch_ns[i] != INT64_MIN && t->launch_ns[i] > gs)
				ivset_push(hw, gs, ge);
			break;
		}
	}
	ivset_seal(hw);
}

void ov_sets_release(struct ov_sets *o)
{
	for (int s = 0; s < S__COUNT; s++)
		ivset_release(&o->set[s]);
	for (int c = 0; c < COLL__COUNT; c++) {
		ivset_release(&o->coll[c]);
		ivset_release(&o->coll_exposed[c]);
	}
	for (size_t s = 0; s < o->nstreams; s++)
		ivset_release(&o->stream[s]);
	free(o->stream);
	free(o->stream_spans);
	free(o->stream_id);
	memset(o, 0, sizeof(*o));
}

/* ov_figures_in's lengths: searched whole (at NULL), or from the cursors
 * at[] of a walk (ov_walk: set k at at[k], then the collectives') */
static int64_t len_in(const struct ivset *v, size_t *at, size_t k, int64_t lo, int64_t hi)
{
	return at ? ivset_len_in_from(v, &at[k], lo, hi) : ivset_len_in(v, lo, hi);
}

static void figures_in(const struct ov_sets *o, size_t *at, int64_t lo, int64_t hi, struct ov_figures *f)
{
	memset(f, 0, sizeof(*f));
	if (hi < lo)
		hi = lo;
	f->window_ns = hi - lo;
	f->busy_ns = len_in(&o->set[S_BUSY], at, S_BUSY, lo, hi);
	f->compute_ns = len_in(&o->set[S_COMPUTE], at, S_COMPUTE, lo, hi);
	f->gemm_ns = len_in(&o->set[S_GEMM], at, S_GEMM, lo, hi);
	f->attention_ns = len_in(&o->set[S_ATTENTION], at, S_ATTENTION, lo, hi);
	f->comm_ns = len_in(&o->set[S_COMM], at, S_COMM, lo, hi);
	f->memcpy_ns = len_in(&o->set[S_MEMCPY], at, S_MEMCPY, lo, hi);
	f->memset_ns = len_in(&o->set[S_MEMSET], at, S_MEMSET, lo, hi);
	f->overlap_ns = len_in(&o->set[S_OVERLAP], at, S_OVERLAP, lo, hi);
	f->exposed_comm_ns = len_in(&o->set[S_EXPOSED_COMM], at, S_EXPOSED_COMM, lo, hi);
	f->exposed_memcpy_ns = len_in(&o->set[S_EXPOSED_MEMCPY], at, S_EXPOSED_MEMCPY, lo, hi);
	f->gemm_comm_ns = len_in(&o->set[S_GEMM_COMM], at, S_GEMM_COMM, lo, hi);
	f->host_wait_ns = len_in(&o->set[S_HOST_WAIT], at, S_HOST_WAIT, lo, hi);
	f->idle_ns = f->window_ns - f->busy_ns;
	for (int c = 1; c < COLL__COUNT; c++) {
		f->coll_ns[c] = len_in(&o->coll[c], at, S__COUNT + (size_t)c, lo, hi);
		f->coll_exposed_ns[c] = len_in(&o->coll_exposed[c], at, S__COUNT + COLL__COUNT + (size_t)c, lo, hi);
	}
}

void ov_figures_in(const struct ov_sets *o, int64_t lo, int64_t hi, struct ov_figures *f)
{
	figures_in(o, NULL, lo, hi, f);
}

void ov_figures_next(const struct ov_sets *o, struct ov_walk *w, int64_t lo, int64_t hi, struct ov_figures *f)
{
	figures_in(o, w->at, lo, hi, f);
}

/* ---- classification schemes -------------------------------------------- */

uint8_t *classes_aorta(const struct trace *t)
{
	uint8_t *c = xmalloc(t->n ? t->n : 1);
	for (size_t i = 0; i < t->n; i++)
		c[i] = (uint8_t)kind_class((enum span_kind)t->kind[i]);
	return c;
}
