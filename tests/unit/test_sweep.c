/*
 * test_sweep.c - the sweep's recipe expansion (src/sweep/recipe.c) and its
 * ranking rule (src/sweep/rank.c), on recipes written inline.
 */
#include "sweep/envsnap.h"
#include "sweep/rank.h"
#include "sweep/recipe.h"
#include "sweep/report.h"
#include "sweep/results.h"
#include "sweep/run.h"
#include "testing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse(const char *text, struct recipe *r, struct aorta_error *e)
{
	memset(e, 0, sizeof(*e));
	return recipe_parse_text("inline.yaml", text, r, e);
}

static void test_cross_product_environment_outermost_last_axis_fastest(void)
{
	struct recipe r;
	struct aorta_error e;
	const char *y = "environments:\n  sys: {LD_LIBRARY_PATH: /a}\n  whl: {LD_LIBRARY_PATH: /b}\n"
			"axes:\n  NCCL_NTHREADS: [256, 512]\n  channels:\n    env: [NCCL_MIN_NCHANNELS, NCCL_MAX_NCHANNELS]\n"
			"    values: [2, 4, 8]\n";
	CHECK_EQ_I(parse(y, &r, &e), AORTA_OK);
	CHECK_EQ_I(r.ncells, 12);
	CHECK_EQ_I(r.naxes, 3);
	CHECK_STR(r.axes[0].name, "environment");
	CHECK_STR(r.cells[0].id, "c01");
	CHECK_STR(r.cells[0].key, "environment=sys NCCL_NTHREADS=256 channels=2");
	CHECK_STR(r.cells[1].key, "environment=sys NCCL_NTHREADS=256 channels=4");
	CHECK_STR(r.cells[3].key, "environment=sys NCCL_NTHREADS=512 channels=2");
	CHECK_STR(r.cells[11].key, "environment=whl NCCL_NTHREADS=512 channels=8");
	CHECK_STR(r.cells[11].id, "c12");
	CHECK_STR(recipe_cell_environment(&r, &r.cells[11]), "whl");
	CHECK_EQ_I(r.axes[2].ntargets, 2);
	CHECK_STR(r.axes[2].targets[1], "NCCL_MAX_NCHANNELS");
	CHECK_EQ_I(r.baseline, 0);
	CHECK_EQ_I(r.trials, 3);
	recipe_free(&r);
}

static void test_explicit_cells_add_values_and_pick_the_baseline(void)
{
	struct recipe r;
	struct aorta_error e;
	const char *y = "axes:\n  NCCL_NTHREADS: [256]\n  fsdp.forward_prefetch: [true]\n"
			"cells:\n  - {NCCL_NTHREADS: 256, fsdp.forward_prefetch: true}\n"
			"  - {NCCL_NTHREADS: 512, fsdp.forward_prefetch: false}\n"
			"baseline: {NCCL_NTHREADS: 512}\n";
	CHECK_EQ_I(parse(y, &r, &e), AORTA_OK);
	CHECK_EQ_I(r.ncells, 2);
	CHECK_EQ_I(r.axes[0].nvalues, 2);
	CHECK_STR(r.axes[0].values[1], "512");
	CHECK_EQ_I(r.axes[1].kind, AX_OVERRIDE);
	CHECK_EQ_I(r.baseline, 1);
	CHECK_EQ_I(r.cells[1].line, 6);
	size_t n = 0, nowned = 0;
	char **owned = NULL;
	const char **ov = recipe_cell_overrides(&r, &r.cells[1], &n, &owned, &nowned);
	CHECK_EQ_I(n, 1);
	CHECK_STR(ov[0], "fsdp.forward_prefetch=false");
	free(ov);
	for (size_t i = 0; i < nowned; i++)
		free(owned[i]);
	free(owned);
	recipe_free(&r);
}

static void test_errors_name_the_line(void)
{
	static const struct { const char *yaml; int line; const char *msg; } cases[] = {
		{ "trials: 2\naxes:\n  NCCL_NTHREADS: [256, 100]\n", 3, "bad value '100' for NCCL_NTHREADS" },
		{ "axes:\n  NCCL_NTHREADS: []\n", 2, "empty matrix" },
		{ "axes:\n  A_B: [1]\ncells:\n  - {A_B: 1}\n  - {A_B: 1}\n", 5, "duplicate cells: lines 4 and 5" },
		{ "axes:\n  A_B: [1]\ncells:\n  - {A_C: 1}\n", 4, "unknown axis 'A_C' in a cell" },
		{ "axes:\n  threads: [1, 2]\n", 2, "unknown axis 'threads'" },
		{ "axes:\n  A_B: [1]\ncells:\n  - {}\n", 4, "does not set axis 'A_B'" },
		{ "axes:\n  A_B: [1]\nbaseline: {A_B: 2}\n", 3, "baseline: no cell has these values" },
		{ "axes:\n  A_B: [1, ~]\n", 2, "got null" },
		{ "trials: 0\n", 1, "trials: expected a number from 1" },
		{ "axes:\n  A: {env: [A1], values: [1,2,3,4,5,6,7,8,9,10]}\n  B: {env: [B1], values: [1,2,3,4,5,6,7,8,9,10]}\n"
		  "  C: {env: [C1], values: [1,2,3,4,5,6,7,8,9,10]}\n  D: {env: [D1], values: [1,2,3,4,5,6,7,8,9,10]}\n"
		  "  E: {env: [E1], values: [1,2,3,4,5,6,7,8,9,10]}\n  F: {env: [F1], values: [1,2]}\n", 1,
		  "the cross product of the axes has 200000 cells" },
		{ "axes:\n  A_B: [1, 2]\nreport:\n  rows: A_B\n  cols: A_B\n", 4, "rows and cols name the same axis" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct recipe r;
		struct aorta_error e;
		int st = parse(cases[i].yaml, &r, &e);
		CHECK_EQ_I(st, AORTA_EINPUT);
		CHECK_EQ_I(e.line, cases[i].line);
		if (!strstr(e.msg, cases[i].msg))
			fprintf(stderr, "  case %zu: '%s' lacks '%s'\n", i, e.msg, cases[i].msg);
		CHECK(strstr(e.msg, cases[i].msg) != NULL);
		CHECK_STR(e.path, "inline.yaml");
	}
}

static void test_placeholders_are_substituted(void)
{
	struct recipe r;
	struct aorta_error e;
	CHECK_EQ_I(parse("axes:\n  NCCL_NTHREADS: [256, 512]\nworkload:\n  command: [run, '{out}/x', "
			 "'--t={NCCL_NTHREADS}', '{cell}.{trial}', '{notaplaceholder x}']\n", &r, &e), AORTA_OK);
	char *s = recipe_subst(&r, &r.cells[1], r.command[2], "/o", "3");
	CHECK_STR(s, "--t=512");
	free(s);
	s = recipe_subst(&r, &r.cells[1], r.command[3], "/o", "3");
	CHECK_STR(s, "c02.3");
	free(s);
	s = recipe_subst(&r, &r.cells[0], r.command[1], "/o", "1");
	CHECK_STR(s, "/o/x");
	free(s);
	s = recipe_subst(&r, &r.cells[0], r.command[4], "/o", "1");
	CHECK_STR(s, "{notaplaceholder x}");
	free(s);
	recipe_free(&r);
}

/* Hand-made: what sh must see for each quoting state around {V}. */
static void test_shell_script_values_are_quoted_for_sh(void)
{
	struct recipe r;
	struct aorta_error e;
	CHECK_EQ_I(parse("axes:\n  V: [\"it's $(x)\"]\nworkload:\n  command: [sh, '-c', 'echo {V}']\n", &r, &e),
		   AORTA_OK);
	/* outside quotes: 'it'\''s $(x)'; inside "...": $ escaped; inside
	 * '...': closed, quoted, reopened; after an escaped quote: outside */
	char *s = recipe_subst_sh(&r, &r.cells[0], "a {V} \"b{V}\" 'c{V}' \\'{V}", "/o", "1");
	CHECK_STR(s, "a 'it'\\''s $(x)' \"bit's \\$(x)\" 'c''it'\\''s $(x)''' \\''it'\\''s $(x)'");
	free(s);
	s = recipe_subst(&r, &r.cells[0], "a {V}", "/o", "1");
	CHECK_STR(s, "a it's $(x)"); /* an argv word: as is */
	free(s);
	recipe_free(&r);
}

static void test_resolved_recipe_expands_to_the_same_cells(void)
{
	struct recipe r, r2;
	struct aorta_error e;
	const char *y = "name: round trip\nenvironments:\n  sys: null\n  whl: {LD_LIBRARY_PATH: \"/x y\\\"z\"}\n"
			"axes:\n  NCCL_NTHREADS: [256, 512]\n  training.batch_size: [8]\n"
			"baseline: {environment: whl, NCCL_NTHREADS: 512}\n";
	CHECK_EQ_I(parse(y, &r, &e), AORTA_OK);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	CHECK_EQ_I(recipe_write_resolved(f, &r), 0);
	fclose(f);
	CHECK_EQ_I(parse(buf, &r2, &e), AORTA_OK);
	CHECK_EQ_I(r2.ncells, r.ncells);
	for (size_t i = 0; i < r.ncells && i < r2.ncells; i++)
		CHECK_STR(r2.cells[i].key, r.cells[i].key);
	CHECK_EQ_I(r2.baseline, r.baseline);
	CHECK_EQ_I(r2.baseline, 3);
	CHECK_STR(r2.envs[1].vals[0], "/x y\"z");
	CHECK_STR(r2.name, "round trip");
	free(buf);
	recipe_free(&r);
	recipe_free(&r2);
}

static struct cell_stats stats(double median, double min, double max)
{
	struct cell_stats s;
	memset(&s, 0, sizeof(s));
	s.nok = 3;
	s.median = median;
	s.min = min;
	s.max = max;
	s.range = max - min;
	return s;
}

static void test_better_only_beyond_the_noise(void)
{
	struct cell_stats base = stats(20.0, 19.9, 20.1), c;
	double noise;
	c = stats(19.0, 18.9, 19.1); /* 1 ms faster, ranges 0.2 ms */
	CHECK_EQ_I(sweep_compare(&base, &c, 1.0, &noise), V_BETTER);
	CHECK_NEAR(noise, 0.2, 1e-12);
	c = stats(19.0, 17.0, 21.0); /* same median, range 4 ms: similar */
	CHECK_EQ_I(sweep_compare(&base, &c, 1.0, &noise), V_SIMILAR);
	CHECK_NEAR(noise, 4.0, 1e-12);
	c = stats(21.5, 21.4, 21.6);
	CHECK_EQ_I(sweep_compare(&base, &c, 1.0, NULL), V_WORSE);
	c = stats(19.85, 19.85, 19.85); /* below the 1 % floor (0.2 ms) with no spread */
	struct cell_stats b0 = stats(20.0, 20.0, 20.0);
	CHECK_EQ_I(sweep_compare(&b0, &c, 1.0, &noise), V_SIMILAR);
	CHECK_NEAR(noise, 0.2, 1e-12);
	CHECK_EQ_I(sweep_compare(&b0, &c, 0.5, NULL), V_BETTER);
	c.nok = 0;
	CHECK_EQ_I(sweep_compare(&base, &c, 1.0, NULL), V_NODATA);
}

/* A sweep built in memory: 2 environments x 2 thread counts, 3 trials each. */
static void fill(struct sweep *s, size_t c, double a, double b, double d)
{
	double v[3] = { a, b, d };
	for (int k = 0; k < 3; k++) {
		struct trial *t = &s->t[c][k];
		memset(t, 0, sizeof(*t));
		t->trial = k + 1;
		t->status = isnan(v[k]) ? TR_FAILED : TR_OK;
		t->step_ms = v[k];
		t->exposed_ms = v[k] / 10;
		t->overlap_pct = 50;
		t->late_rank = -1;
		t->overhead_pct = 1;
	}
}

static void test_stats_rank_best_drift_and_environment_diffs(void)
{
	struct sweep s;
	struct aorta_error e;
	memset(&s, 0, sizeof(s));
	CHECK_EQ_I(parse("environments:\n  a: null\n  b: null\naxes:\n  NCCL_NTHREADS: [256, 512]\n", &s.r, &e), AORTA_OK);
	CHECK_EQ_I(s.r.ncells, 4);
	s.t = xcalloc(4, sizeof(struct trial *));
	for (size_t c = 0; c < 4; c++)
		s.t[c] = xcalloc(3, sizeof(struct trial));
	fill(&s, 0, 10.0, 10.1, 9.9);  /* baseline: a 256 */
	fill(&s, 1, 9.0, 9.05, 8.95);  /* a 512: better */
	fill(&s, 2, 9.5, 11.5, 7.5);   /* b 256: median 9.5, but a range of 4 ms: similar */
	fill(&s, 3, 8.0, NAN, 8.1);    /* b 512: best, one trial failed: noisy */
	s.confound.status = TR_OK;
	s.confound.step_ms = 10.05;
	sweep_stats(&s);
	CHECK_EQ_I(s.st[1].verdict, V_BETTER);
	CHECK_EQ_I(s.st[2].verdict, V_SIMILAR);
	CHECK_EQ_I(s.st[3].verdict, V_BETTER);
	CHECK_EQ_I(s.st[0].verdict, V_BASELINE);
	CHECK_EQ_I(s.st[3].noisy, 1);
	CHECK_EQ_I(s.st[3].nok, 2);
	CHECK_NEAR(s.st[3].median, 8.05, 1e-12);
	CHECK_EQ_I(s.st[2].noisy, 1);
	CHECK_EQ_I(s.st[0].noisy, 0);
	CHECK_EQ_I(s.order[0], 3);
	CHECK_EQ_I(s.order[3], 0);
	CHECK_EQ_I(s.st[3].rank, 1);
	CHECK_EQ_I(s.best, 3);
	CHECK_EQ_I(s.drift, 0);
	CHECK_EQ_I(s.ndiffs, 2);
	CHECK_EQ_I(s.diffs[0].a, 0);
	CHECK_EQ_I(s.diffs[0].b, 2);
	CHECK_EQ_I(s.diffs[0].v, V_SIMILAR);
	CHECK_EQ_I(s.diffs[1].v, V_BETTER);
	s.confound.step_ms = 10.25; /* above max 10.1 + 1 % of 10.0 = 10.2 */
	sweep_stats(&s);
	CHECK_EQ_I(s.drift, 1);
	CHECK_NEAR(s.drift_pct, 2.5, 1e-9);
	s.confound.step_ms = 10.15; /* inside the widened range */
	sweep_stats(&s);
	CHECK_EQ_I(s.drift, 0);
	sweep_free(&s);
}

int main(void)
{
	TEST(test_cross_product_environment_outermost_last_axis_fastest);
	TEST(test_explicit_cells_add_values_and_pick_the_baseline);
	TEST(test_errors_name_the_line);
	TEST(test_placeholders_are_substituted);
	TEST(test_shell_script_values_are_quoted_for_sh);
	TEST(test_resolved_recipe_expands_to_the_same_cells);
	TEST(test_better_only_beyond_the_noise);
	TEST(test_stats_rank_best_drift_and_environment_diffs);
	return test_report();
}
