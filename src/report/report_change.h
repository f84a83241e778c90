/*
 * report_change.h - the change of one figure between a baseline and another
 * run, and its verdict, shared by `aorta compare` and `aorta report` so both
 * say "better" for the same numbers.
 *
 * change_pct is (value - base) / |base| * 100: NaN when either side is NaN,
 * 0 when both are 0, +inf when only the base is 0.  change_verdict turns it
 * into "better" / "worse" / "similar" (|change| below thr_pct) by the
 * figure's direction dir: 1 lower is better, -1 higher is better, 0 neutral
 * ("changed" beyond the threshold); "n/a" when a side is missing.
 * Returned strings are static.  Thread-safe.
 */
#ifndef AORTA_REPORT_CHANGE_H
#define AORTA_REPORT_CHANGE_H

double change_pct(double base, double value);
const char *change_verdict(double base, double value, int dir, double thr_pct);

#endif
