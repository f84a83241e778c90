/*
 * test_stats.c - the one percentile and k-th-smallest definitions
 * (base/stats.h), on values worked by hand.
 */
#include "testing.h"

#include <math.h>
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

int main(void)
{
	TEST(test_select_kth_partitions_around_the_kth);
	TEST(test_percentile_interpolates_between_ranks);
	TEST(test_int64_median_is_the_mean_of_the_middle_two);
	return test_report();
}
