/*
 * stats.c - the order statistics of the figures (stats.h).
 */
#include "base/stats.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

/* One definition for each element type: percentiles by linear
 * interpolation, and the k-th smallest by quickselect (three-way
 * partition, so runs of equal values end it at once). */
#define PCTL_SORTED(name, T)                                                         \
	double name(const T *v, size_t n, double q)                                  \
	{                                                                            \
		if (!n)                                                              \
			return NAN;                                                  \
		double pos = q * (double)(n - 1);                                    \
		size_t lo = (size_t)pos;                                             \
		if (lo + 1 >= n)                                                     \
			return (double)v[n - 1];                                     \
		return (double)v[lo] + (pos - (double)lo) * ((double)v[lo + 1] - (double)v[lo]); \
	}

#define SELECT_KTH(name, T)                                                          \
	T name(T *v, size_t n, size_t k)                                             \
	{                                                                            \
		size_t lo = 0, hi = n; /* [lo, hi) holds the k-th */                 \
		while (hi - lo > 1) {                                                \
			T piv = v[lo + (hi - lo) / 2], t;                            \
			size_t lt = lo, i = lo, gt = hi;                             \
			while (i < gt) {                                             \
				if (v[i] < piv) {                                    \
					t = v[lt];                                   \
					v[lt++] = v[i];                              \
					v[i++] = t;                                  \
				} else if (v[i] > piv) {                             \
					t = v[--gt];                                 \
					v[gt] = v[i];                                \
					v[i] = t;                                    \
				} else {                                             \
					i++;                                         \
				}                                                    \
			}                                                            \
			if (k < lt)                                                  \
				hi = lt;                                             \
			else if (k >= gt)                                            \
				lo = gt;                                             \
			else                                                         \
				return v[k];                                         \
		}                                                                    \
		return v[k];                                                         \
	}

PCTL_SORTED(pctl_sorted, double)
PCTL_SORTED(pctl_sorted_i64, int64_t)
SELECT_KTH(select_kth_d, double)
SELECT_KTH(select_kth_i64, int64_t)

double median_mid_sorted(const double *v, size_t n)
{
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/* After the selection of the upper middle value, the lower one is the
 * largest of those below it. */
double median_mid_d(double *v, size_t n)
{
	double hi = select_kth_d(v, n, n / 2);
	if (n % 2)
		return hi;
	double lo = v[0];
	for (size_t i = 1; i < n / 2; i++)
		if (v[i] > lo)
			lo = v[i];
	return (lo + hi) / 2.0;
}

/* After the selection of the lower middle value, the upper one is the
 * smallest of those above it. */
int64_t median_mid_i64(int64_t *v, size_t n)
{
	if (n % 2)
		return select_kth_i64(v, n, n / 2);
	int64_t lo = select_kth_i64(v, n, n / 2 - 1), hi = INT64_MAX;
	for (size_t q = n / 2; q < n; q++)
		if (v[q] < hi)
			hi = v[q];
	return (lo + hi) / 2;
}

/* An LSD radix sort on the values' bits (8 passes of a byte; a negative
 * value's bits inverted, a positive one's sign set), stable, O(n). */
void sort_doubles(double *v, size_t n)
{
	/* the keys in v's own (allocated) storage, one more buffer beside it */
	uint64_t *a = (uint64_t *)(void *)v, *b = xmalloc(n * sizeof(*b));
	for (size_t i = 0; i < n; i++) {
		uint64_t u;
		memcpy(&u, &v[i], sizeof(u));
		a[i] = u >> 63 ? ~u : u | (UINT64_C(1) << 63);
	}
	for (int sh = 0; sh < 64; sh += 8) {
		size_t cnt[257] = { 0 };
		for (size_t i = 0; i < n; i++)
			cnt[(a[i] >> sh & 0xff) + 1]++;
		if (cnt[(a[0] >> sh & 0xff) + 1] == n)
			continue; /* every value has this byte: the pass would move nothing */
		for (int d = 0; d < 256; d++)
			cnt[d + 1] += cnt[d];
		for (size_t i = 0; i < n; i++)
			b[cnt[a[i] >> sh & 0xff]++] = a[i];
		uint64_t *t = a;
		a = b;
		b = t;
	}
	if (a != (uint64_t *)(void *)v) { /* an odd number of passes moved: back into v's storage */
		memcpy(v, a, n * sizeof(*a));
		b = a;
	}
	a = (uint64_t *)(void *)v;
	for (size_t i = 0; i < n; i++) {
		uint64_t u = a[i] >> 63 ? a[i] & ~(UINT64_C(1) << 63) : ~a[i];
		memcpy(&v[i], &u, sizeof(u));
	}
	free(b);
}

double std_error(const double *v, size_t n)
{
	if (n < 2)
		return 0;
	double m = 0, sd = 0;
	for (size_t q = 0; q < n; q++)
		m += v[q];
	m /= (double)n;
	for (size_t q = 0; q < n; q++)
		sd += (v[q] - m) * (v[q] - m);
	return sqrt(sd / (double)(n - 1)) / sqrt((double)n);
}
