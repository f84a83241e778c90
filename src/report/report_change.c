/*
 * report_change.c - percent change and better / worse / similar verdicts
 * (report_change.h).  Moved here from src/cmd/compare.c unchanged, so that
 * compare and report share one definition.
 */
#include "report/report_change.h"

#include <math.h>

double change_pct(double base, double value)
{
	if (isnan(base) || isnan(value))
		return NAN;
	return base != 0 ? 100.0 * (value - base) / fabs(base) : (value == 0 ? 0 : INFINITY);
}

const char *change_verdict(double base, double value, int dir, double thr_pct)
{
	double p = change_pct(base, value);

	if (isnan(p))
		return "n/a";
	if (fabs(p) < thr_pct || dir == 0)
		return fabs(p) < thr_pct ? "similar" : "changed";
	return (p < 0) == (dir > 0) ? "better" : "worse";
}
