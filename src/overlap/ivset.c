/*
 * ivset.c - sorted disjoint interval sets with prefix sums.
 *
 * Build: sort (start, end) pairs, then one sweep merging every interval that
 * starts at or before the running end (so touching intervals merge).  All
 * binary operations are two-pointer sweeps over the sorted lists.
 */
#include "overlap/ivset.h"
#include "base/error.h"

#include <stdlib.h>
#include <string.h>

void ivset_init(struct ivset *v)
{
	memset(v, 0, sizeof(*v));
}

void ivset_release(struct ivset *v)
{
	free(v->s);
	free(v->e);
	free(v->cum);
	memset(v, 0, sizeof(*v));
}

static void reserve(struct ivset *v, size_t need)
{
	if (need <= v->cap)
		return;
	size_t c = v->cap < 64 ? 64 : v->cap;
	while (c < need)
		c += c / 2;
	v->s = xrealloc(v->s, c * sizeof(*v->s));
	v->e = xrealloc(v->e, c * sizeof(*v->e));
	v->cum = xrealloc(v->cum, (c + 1) * sizeof(*v->cum));
	v->cap = c;
}

void ivset_push(struct ivset *v, int64_t s, int64_t e)
{
	if (e <= s)
		return;
	if (v->n && s <= v->e[v->n - 1]) {
		if (e > v->e[v->n - 1])
			v->e[v->n - 1] = e;
		return;
	}
	reserve(v, v->n + 1);
	v->s[v->n] = s;
	v->e[v->n] = e;
	v->n++;
}

void ivset_seal(struct ivset *v)
{
	reserve(v, v->n + 1);
	v->cum[0] = 0;
	for (size_t i = 0; i < v->n; i++)
		v->cum[i + 1] = v->cum[i] + (v->e[i] - v->s[i]);
}

struct pair { int64_t s, e; };

static int cmp_pair(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;
	if (x->s != y->s)
		return (x->s > y->s) - (x->s < y->s);
	return (x->e > y->e) - (x->e < y->e);
}

void ivset_build(struct ivset *v, const int64_t *start, const int64_t *end,
		 const uint32_t *idx, size_t m)
{
	struct pair *p = xmalloc((m ? m : 1) * sizeof(*p));
	size_t k = 0;
	int sorted = 1;

	for (size_t j = 0; j < m; j++) {
		size_t i = idx ? idx[j] : j;
		if (end[i] <= start[i])
			continue;
		p[k].s = start[i];
		p[k].e = end[i];
		if (k && p[k].s < p[k - 1].s)
			sorted = 0;
		k++;
	}
	if (!sorted)
		qsort(p, k, sizeof(*p), cmp_pair);
	v->n = 0;
	for (size_t j = 0; j < k; j++)
		ivset_push(v, p[j].s, p[j].e);
	ivset_seal(v);
	free(p);
}

int64_t ivset_len(const struct ivset *v)
{
	return v->n ? v->cum[v->n] : 0;
}

/* Number of intervals with end <= x (the first index whose end > x),
 * searched from lo, below which every interval ends at or before x. */
static size_t first_end_after_in(const struct ivset *v, size_t lo, int64_t x)
{
	size_t hi = v->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v->e[mid] <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Length of v ∩ (-inf, x). */
static int64_t len_before(const struct ivset *v, int64_t x)
{
	size_t i = first_end_after_in(v, 0, x); /* intervals 0..i-1 end at or before x */
	int64_t l = v->cum[i];
	if (i < v->n && v->s[i] < x)
		l += x - v->s[i];
	return l;
}

int64_t ivset_len_in(const struct ivset *v, int64_t lo, int64_t hi)
{
	if (!v->n || hi <= lo)
		return 0;
	return len_before(v, hi) - len_before(v, lo);
}

/* first_end_after(v, x), knowing the answer is at least at when every
 * interval before at ends at or before x (checked: else searched whole) */
static size_t first_end_after_from(const struct ivset *v, size_t at, int64_t x)
{
	if (at > v->n || (at > 0 && v->e[at - 1] > x))
		return first_end_after_in(v, 0, x);
	for (int k = 0; k < 4; k++, at++) /* the next window is usually a few intervals on */
		if (at >= v->n || v->e[at] > x)
			return at;
	return first_end_after_in(v, at, x);
}

/* len_before, searching from *at */
static int64_t len_before_from(const struct ivset *v, size_t *at, int64_t x)
{
	size_t i = *at = first_end_after_from(v, *at, x);
	int64_t l = v->cum[i];
	if (i < v->n && v->s[i] < x)
		l += x - v->s[i];
	return l;
}

int64_t ivset_len_in_from(const struct ivset *v, size_t *at, int64_t lo, int64_t hi)
{
	if (!v->n || hi <= lo)
		return 0;
	int64_t a = len_before_from(v, at, lo);
	return len_before_from(v, at, hi) - a;
}

void ivset_union(struct ivset *out, const struct ivset *a, const struct ivset *b)
{
	size_t i = 0, j = 0;

	out->n = 0;
	while (i < a->n || j < b->n) {
		if (j >= b->n || (i < a->n && a->s[i] <= b->s[j])) {
			ivset_push(out, a->s[i], a->e[i]);
			i++;
		} else {
			ivset_push(out, b->s[j], b->e[j]);
			j++;
		}
	}
	ivset_seal(out);
}

void ivset_inter(struct ivset *out, const struct ivset *a, const struct ivset *b)
{
	size_t i = 0, j = 0;

	out->n = 0;
	while (i < a->n && j < b->n) {
		int64_t s = a->s[i] > b->s[j] ? a->s[i] : b->s[j];
		int64_t e = a->e[i] < b->e[j] ? a->e[i] : b->e[j];
		if (s < e)
			ivset_push(out, s, e);
		if (a->e[i] < b->e[j])
			i++;
		else
			j++;
	}
	ivset_seal(out);
}

void ivset_diff(struct ivset *out, const struct ivset *a, const struct ivset *b)
{
	size_t j = 0;

	out->n = 0;
	for (size_t i = 0; i < a->n; i++) {
		int64_t s = a->s[i], e = a->e[i];
		while (j < b->n && b->e[j] <= s)
			j++;
		size_t k = j;
		while (s < e && k < b->n && b->s[k] < e) {
			if (b->s[k] > s)
				ivset_push(out, s, b->s[k]);
			if (b->e[k] > s)
				s = b->e[k];
			k++;
		}
		if (s < e)
			ivset_push(out, s, e);
	}
	ivset_seal(out);
}
