/*
 * stats.c - percentiles (stats.h).
 */
#include "base/stats.h"

#include <math.h>

double pctl_sorted(const double *v, size_t n, double q)
{
	if (!n)
		return NAN;
	double pos = q * (double)(n - 1);
	size_t lo = (size_t)pos;
	if (lo + 1 >= n)
		return v[n - 1];
	return v[lo] + (pos - (double)lo) * (v[lo + 1] - v[lo]);
}

double pctl_sorted_i64(const int64_t *v, size_t n, double q)
{
	if (!n)
		return NAN;
	double pos = q * (double)(n - 1);
	size_t lo = (size_t)pos;
	if (lo + 1 >= n)
		return (double)v[n - 1];
	return (double)v[lo] + (pos - (double)lo) * ((double)v[lo + 1] - (double)v[lo]);
}
