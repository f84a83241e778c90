/*
 * stats.h - the one percentile definition every command uses (report's
 * step statistics, hwq's latency percentiles, analyze's step p50 and its
 * across-ranks distribution): linear interpolation between the two nearest
 * ranks at index q * (n - 1) of the sorted values, numpy's default and
 * upstream hw_queue_eval's (docs/metrics.md "Percentiles"); and the one
 * k-th-smallest selection the medians of the join and the what-if use.
 */
#ifndef AORTA_STATS_H
#define AORTA_STATS_H

#include <stddef.h>
#include <stdint.h>

/* Percentile q (0..1) of n values sorted ascending; NaN when n == 0.
 * Pure; v is only read. */
double pctl_sorted(const double *v, size_t n, double q);
/* The same over int64 values (e.g. ns), as a double. */
double pctl_sorted_i64(const int64_t *v, size_t n, double q);

/* The k-th smallest of v[0..n) (k < n), moved to v[k] with v[0..k) <= v[k]
 * <= v[k+1..n): v is reordered (quickselect, expected O(n)). */
double select_kth_d(double *v, size_t n, size_t k);
int64_t select_kth_i64(int64_t *v, size_t n, size_t k);

/* v[0..n) ascending, in O(n) (a radix sort): the order a comparison sort
 * gives, except that -0.0 comes before 0.0 (a caller that holds them equal
 * sorts itself where both may occur); no NaN. */
void sort_doubles(double *v, size_t n);

#endif
