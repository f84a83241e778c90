/*
 * testing.h - the whole unit-test helper (after redis's testhelp.h).
 *
 * A test file defines static void test_xxx(void) functions and a main that
 * calls TEST(test_xxx) for each, then returns test_report().  CHECK records
 * a failure with file:line and carries on; the runner prints one line per
 * failure and ends with "N passed, N failed" (the line CI reads), counting
 * tests, not checks.  A test that needs something absent calls SKIP(why).
 */
#ifndef AORTA_TESTING_H
#define AORTA_TESTING_H

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

static int t_passed, t_failed, t_skipped, t_cur_failed, t_cur_skipped;
static const char *t_cur;

#define CHECK(cond) do { if (!(cond)) { \
	fprintf(stderr, "  FAIL %s: %s:%d: %s\n", t_cur, __FILE__, __LINE__, #cond); \
	t_cur_failed = 1; } } while (0)
#define CHECK_EQ_I(a, b) do { long long _a = (long long)(a), _b = (long long)(b); \
	if (_a != _b) { fprintf(stderr, "  FAIL %s: %s:%d: %s == %lld, expected %lld\n", \
		t_cur, __FILE__, __LINE__, #a, _a, _b); t_cur_failed = 1; } } while (0)
#define CHECK_NEAR(a, b, tol) do { double _a = (double)(a), _b = (double)(b); \
	if (!(fabs(_a - _b) <= (tol))) { fprintf(stderr, "  FAIL %s: %s:%d: %s == %.9g, expected %.9g (tol %g)\n", \
		t_cur, __FILE__, __LINE__, #a, _a, _b, (double)(tol)); t_cur_failed = 1; } } while (0)
#define CHECK_STR(a, b) do { const char *_a = (a), *_b = (b); \
	if (!_a || strcmp(_a, _b) != 0) { fprintf(stderr, "  FAIL %s: %s:%d: %s == \"%s\", expected \"%s\"\n", \
		t_cur, __FILE__, __LINE__, #a, _a ? _a : "(null)", _b); t_cur_failed = 1; } } while (0)
#define SKIP(why) do { fprintf(stderr, "  SKIP %s: %s\n", t_cur, why); t_cur_skipped = 1; return; } while (0)

#define TEST(fn) do { t_cur = #fn; t_cur_failed = t_cur_skipped = 0; fn(); \
	if (t_cur_failed) t_failed++; else if (t_cur_skipped) t_skipped++; else t_passed++; } while (0)

static inline int test_report(void)
{
	printf("%d passed, %d failed, %d skipped\n", t_passed, t_failed, t_skipped);
	return t_failed ? 1 : 0;
}

/* Path of the shared real-trace folder (../shared/data by default). */
static inline const char *shared_data(void)
{
	const char *d = getenv("AORTA_SHARED_DATA");
	return d && *d ? d : "../shared/data";
}

#endif
