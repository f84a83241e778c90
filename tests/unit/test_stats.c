/*
 * test_stats.c - the one percentile definition (base/stats.h), on values
 * worked by hand.
 */
#include "testing.h"

#include <math.h>

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

int main(void)
{
	TEST(test_percentile_interpolates_between_ranks);
	TEST(test_int64_median_is_the_mean_of_the_middle_two);
	return test_report();
}
