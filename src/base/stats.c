/*
 * stats.c - percentiles (stats.h).
 */
#include "base/stats.h"

#include <math.h>

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
