/*
 * test_stats.c - the one percentile and k-th-smallest definitions
 * (base/stats.h), on values worked by hand.
 */
#include "testing.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/stats.h"

static void test_percentile_interpolates_between_ranks(void)
{
	/* index q*(n-1): 4 values 10 20 30 40 */
	double v[] = { 10, 20, 30, 40 };
	CHECK_NEAR(pctl_sorted(v, 4, 0.0), 10, 0);
	CHECK_NEAR(pctl_sorted(v, 4, 0.5), 25, 1e-12);   /* index 1.5: 20 + 0.5*10 */
	CHECK_NEAR(pctl_sorted(v, 4, 0.9), 37, 1e-12);   /* index 2.7: 30 + 0.7*10 */
	CHECK_NEAR(pctl_sorted(v, 4, 1.0), 40, 0);
	CHECK_NEAR(pctl_sorted(v, 1, 0.99), 10, 0);       /* one value: itself */
	CHECK(isnan(pctl_sorted(v, 0, 0.5)));
}

static void test_int64_median_is_the_mean_of_the_middle_two(void)
{
	int64_t v[] = { 1000000, 3000000, 8000000, 9000000 };
	CHECK_NEAR(pctl_sorted_i64(v, 4, 0.5), 5500000, 0);
	CHECK_NEAR(pctl_sorted_i64(v, 3, 0.5), 3000000, 0);
	/* large ns (an hour) stay exact */
	int64_t big[] = { 3600000000001LL, 3600000000003LL };
	CHECK_NEAR(pctl_sorted_i64(big, 2, 0.5), 3600000000002.0, 0);
}

/* The k-th smallest of unsorted values with repeats, at every k, and the
 * partition around it: what join.c's medians and whatif.c's order
 * statistics rely on. */
static void test_select_kth_partitions_around_the_kth(void)
{
	const int64_t in[] = { 7, 3, 9, 3, 1, 8, 3, 6, 2, 9 };
	const int64_t sorted[] = { 1, 2, 3, 3, 3, 6, 7, 8, 9, 9 };
	for (size_t k = 0; k < 10; k++) {
		int64_t v[10];
		memcpy(v, in, sizeof(v));
		CHECK_EQ_I(select_kth_i64(v, 10, k), sorted[k]);
		CHECK_EQ_I(v[k], sorted[k]);
		for (size_t i = 0; i < 10; i++)
			CHECK(i < k ? v[i] <= v[k] : i > k ? v[i] >= v[k] : 1);
	}
	double d[] = { 0.5, -2.0, 4.25, 0.5 };
	CHECK_NEAR(select_kth_d(d, 4, 2), 0.5, 0);
	CHECK_NEAR(select_kth_d(d, 4, 3), 4.25, 0);
	double one[] = { 42.0 };
	CHECK_NEAR(select_kth_d(one, 1, 0), 42.0, 0);
}

/* sort_doubles: the order qsort gives, on values worked by hand
 * (negatives, infinities, a subnormal, repeats) and on 200 generated arrays */
static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void test_sort_doubles_orders_as_qsort(void)
{
	double v[] = { 3.5, -2, INFINITY, 0, 5e-324, -INFINITY, 3.5, -1e300, 1e-9, -0.25 };
	const double want[] = { -INFINITY, -1e300, -2, -0.25, 0, 5e-324, 1e-9, 3.5, 3.5, INFINITY };
	sort_doubles(v, 10);
	CHECK(memcmp(v, want, sizeof(want)) == 0);
	double z[] = { 0.0, -0.0 };
	sort_doubles(z, 2);
	CHECK(signbit(z[0]) && !signbit(z[1]));
	unsigned x = 12345;
	for (int t = 0; t < 200; t++) {
		double a[300], b[300];
		size_t n = 1 + (size_t)t % 300;
		for (size_t i = 0; i < n; i++) {
			x = x * 1103515245u + 12345u;
			double d = ldexp((double)(x >> 8), (int)(x % 120) - 60);
			a[i] = b[i] = (x & 1) ? -d - 1 : d; /* never -0.0 */
		}
		sort_doubles(a, n);
		qsort(b, n, sizeof(b[0]), cmp_dbl);
		CHECK(memcmp(a, b, n * sizeof(a[0])) == 0);
	}
}

/* 1, 2, 3, 4: mean 2.5, squared deviations 5 in all, sample variance 5 / 3,
 * so the standard error sqrt(5 / 3) / 2; one value or none: 0. */
static void test_std_error_is_the_sample_deviation_over_root_n(void)
{
	const double v[4] = { 4, 1, 3, 2 };
	CHECK_NEAR(std_error(v, 4), sqrt(5.0 / 3) / 2, 1e-12);
	CHECK_NEAR(std_error(v, 1), 0, 0);
	CHECK_NEAR(std_error(v, 0), 0, 0);
}

int main(void)
{
	TEST(test_std_error_is_the_sample_deviation_over_root_n);
	TEST(test_sort_doubles_orders_as_qsort);
	TEST(test_select_kth_partitions_around_the_kth);
	TEST(test_percentile_interpolates_between_ranks);
	TEST(test_int64_median_is_the_mean_of_the_middle_two);
	return test_report();
}
