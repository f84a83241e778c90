/*
 * stats.h - the order statistics every figure uses, each by its name
 * (docs/metrics.md "Percentiles and medians"):
 *
 *   pctl_sorted          percentile q by linear interpolation between the
 *                        two nearest ranks at index q (n - 1), numpy's
 *                        default and upstream hw_queue_eval's: report's step
 *                        statistics, hwq's latency percentiles, analyze's
 *                        step p50 and across-ranks distribution, sweep's
 *                        medians over trials;
 *   median_mid           the mean of the two middle values of an even
 *                        count (numpy's median): the join's clock offset and
 *                        drift, the what-if's ideal transfer (in ns,
 *                        truncated), tune-tp's median iteration;
 *   median_upper_index   the upper middle value, at n / 2: the join's
 *                        spread and skew p50, report's median step, the
 *                        trainer's median step;
 *   median_lower_index   the lower middle value, at (n - 1) / 2: the
 *                        what-if's ideals (stragglers only slow ops down);
 *   quantile_floor_index the value at floor(q (n - 1)), no interpolation:
 *                        the join's p95 spread and clock residual.
 *
 * They differ on an even count (and the last two between ranks), so each
 * figure keeps the one it was published with; a new figure picks one of
 * these by name.  The k-th-smallest selection serves them all.
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

/* The place of an order statistic in n sorted values (n >= 1). */
static inline size_t median_upper_index(size_t n)
{
	return n / 2;
}

static inline size_t median_lower_index(size_t n)
{
	return (n - 1) / 2;
}

static inline size_t quantile_floor_index(size_t n, double q)
{
	return (size_t)(q * (double)(n - 1));
}

/* The median of n values (n >= 1), the mean of the two middle ones of an
 * even count: of sorted values (read only), and of any order (v reordered:
 * a selection, O(n)).  In int64 the mean is truncated toward zero. */
double median_mid_sorted(const double *v, size_t n);
double median_mid_d(double *v, size_t n);
int64_t median_mid_i64(int64_t *v, size_t n);

/* The standard error of the mean of v[0..n): the sample standard deviation
 * (n - 1) over sqrt(n); 0 with fewer than two values. */
double std_error(const double *v, size_t n);

/* The k-th smallest of v[0..n) (k < n), moved to v[k] with v[0..k) <= v[k]
 * <= v[k+1..n): v is reordered (quickselect, expected O(n)). */
double select_kth_d(double *v, size_t n, size_t k);
int64_t select_kth_i64(int64_t *v, size_t n, size_t k);

/* v[0..n) ascending, in O(n) (a radix sort): the order a comparison sort
 * gives, except that -0.0 comes before 0.0 (a caller that holds them equal
 * sorts itself where both may occur); no NaN. */
void sort_doubles(double *v, size_t n);

#endif
