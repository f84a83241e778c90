/*
 * test_report.c - aorta report's model, summary, charts and page:
 * upstream figures on the real upstream JSONL, a cut last line counted and
 * left out, empty datasets, the ratio of means, verdicts shared with
 * compare, charts read back (size, pixels of each series colour), and the
 * page rendered by headless Chromium (skipped when it cannot run).
 */
#include "testing.h"

#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "overlap/analysis.h"
#include "report/report.h"
#include "report/report_change.h"
#include "report/report_plot.h"

static char tmpdir[256];

static void write_file(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");
	fputs(s, f);
	fclose(f);
}

/* A dataset the way cmd/report.c gets one: analysis_run, then the model. */
static enum aorta_status read_ds(const char *label, const char *input, int skip, struct rep_dataset *d,
				 struct aorta_error *e)
{
	struct analysis a;
	struct analysis_opts o = { NULL, 2, skip, 10, 30.0, 1 };
	char *argv[1] = { (char *)input };
	memset(d, 0, sizeof(*d));
	enum aorta_status s = analysis_run(argv, 1, &o, &a, e);
	if (s) {
		analysis_free(&a);
		return s;
	}
	rep_dataset_from_analysis(label, input, &a, d);
	return AORTA_OK;
}

static void test_upstream_jsonl_matches_overlap_report(void)
{
	struct report r = { 0 };
	struct aorta_error e = { 0 };
	r.o.skip_steps = 5;
	r.o.threshold_pct = 1;
	r.ref = -1;
	r.ds = xcalloc(1, sizeof(*r.ds));
	r.nds = 1;
	CHECK_EQ_I(read_ds("ddp", "data/h200x4/aorta_ddp/rank_*_metrics.jsonl", 5, &r.ds[0], &e), AORTA_OK);
	report_prepare(&r);
	const struct rep_dataset *d = &r.ds[0];
	CHECK_EQ_I(d->nranks, 4);
	CHECK_EQ_I(d->read, 240);
	CHECK_EQ_I(d->kept, 220);
	CHECK_STR(d->format, "aorta-jsonl");
	/* reference values: upstream's pooling in Python over the same lines */
	CHECK_NEAR(d->loss.mean, 0.34705334061926063, 1e-12);
	CHECK_NEAR(d->stat[RF_COMPUTE].mean, 30.91470989903266, 1e-9);
	CHECK_NEAR(d->stat[RF_OVERLAP].mean, 0.0, 0);
	CHECK_NEAR(d->ratio, 0.0, 0);
	CHECK(d->has_ranges);
	/* JSONL has no shared clock: no late rank is named */
	CHECK(!d->diag.has_cross_rank || d->diag.late_rank < 0 || d->a->clocks_aligned);
	report_free(&r);
}

/* A run cut mid-line: the cut last line is left out with a note, the
 * complete lines give the recorded (upstream) figures. */
static void test_cut_last_line_is_counted_and_left_out(void)
{
	char dir[512], p[600];
	snprintf(dir, sizeof(dir), "%s/cut", tmpdir);
	mkdir(dir, 0777);
	snprintf(p, sizeof(p), "%s/rank_00_metrics.jsonl", dir);
	write_file(p, "{\"rank\":0,\"loss\":1,\"profile\":{\"total_ms\":10,\"ranges\":[{\"stream\":\"compute\",\"tag\":\"f\","
		      "\"start_ms\":0,\"end_ms\":8}],\"overlap\":{\"per_stream_ms\":{\"compute\":8},"
		      "\"overlap_ms\":{\"compute_comm\":2}}}}\n"
		      "\n"
		      "{\"rank\":0,\"loss\":3,\"profile\":{\"total_ms\":20,\"ranges\":[{\"stream\":\"compute\",\"tag\":\"f\","
		      "\"start_ms\":0,\"end_ms\":12}],\"overlap\":{\"per_stream_ms\":{\"compute\":12},"
		      "\"overlap_ms\":{\"compute_comm\":4}}}}\n"
		      "{\"rank\":0,\"loss\":5,\"profile\":{\"total_ms\":20,\"overl");
	struct rep_dataset d;
	struct aorta_error e = { 0 };
	CHECK_EQ_I(read_ds("cut", dir, 0, &d, &e), AORTA_OK);
	CHECK_EQ_I(d.nranks, 1);
	if (d.nranks == 1) {
		struct rep_rank *rk = &d.ranks[0];
		CHECK_EQ_I(rk->nsteps, 2);
		CHECK_EQ_I(rk->bad_lines, 1);
		CHECK(strstr(d.a->r[0].skipped_first, "line 4") != NULL);
		CHECK_NEAR(rk->steps[1].v[RF_COMPUTE], 12, 0);
		CHECK_NEAR(rk->steps[1].v[RF_OVERLAP], 4, 0);
		CHECK_NEAR(rk->steps[1].v[RF_AR_OVERLAP], 0, 0); /* missing -> 0, as upstream */
		CHECK_EQ_I(rk->steps[1].gstep, 1);               /* no global_step: ordinal */
		/* ratio of means, not mean of ratios: (2+4)/(8+12) */
		CHECK_NEAR(rep_overlap_ratio(&d, 0), 0.3, 1e-12);
	}
	rep_dataset_free(&d);
}

/* --skip-steps beyond the steps there are skips nothing, and says so. */
static void test_skip_beyond_the_steps_is_adapted(void)
{
	struct analysis a;
	struct aorta_error e = { 0 };
	struct analysis_opts o = { NULL, 2, 10, 10, 30.0, 0 };
	char *argv[1] = { (char *)"tests/data/tiny" };
	char why[256] = "";
	CHECK_EQ_I(analysis_run(argv, 1, &o, &a, &e), AORTA_OK);
	CHECK(a.n > 0 && a.r[0].nsteps > 0 && a.r[0].nsteps < 10);
	CHECK_EQ_I(analysis_kept_steps(&a.r[0], 10), 0);
	CHECK_EQ_I(analysis_adapt_skip(&a, why, sizeof(why)), 1);
	CHECK(strstr(why, "--skip-steps 10") != NULL);
	CHECK_EQ_I(a.opts.skip_steps, 0);
	CHECK_EQ_I(analysis_kept_steps(&a.r[0], a.opts.skip_steps), a.r[0].nsteps);
	/* the re-summed step figures are the engine's over the same windows */
	struct analysis b;
	o.skip_steps = 0;
	CHECK_EQ_I(analysis_run(argv, 1, &o, &b, &e), AORTA_OK);
	for (size_t i = 0; i < a.n && i < b.n; i++)
		CHECK(memcmp(&a.r[i].steps_sum, &b.r[i].steps_sum, sizeof(a.r[i].steps_sum)) == 0);
	CHECK_EQ_I(analysis_adapt_skip(&b, why, sizeof(why)), 0);
	analysis_free(&a);
	analysis_free(&b);
}

static void test_missing_input_is_input_error(void)
{
	struct rep_dataset d;
	struct aorta_error e = { 0 };
	CHECK_EQ_I(read_ds("x", "/nonexistent/run", 5, &d, &e), AORTA_EINPUT);
	CHECK(strstr(e.path, "/nonexistent/run") != NULL);
}

static void test_verdicts_follow_direction(void)
{
	CHECK_STR(change_verdict(10, 9, 1, 1), "better");
	CHECK_STR(change_verdict(10, 11, 1, 1), "worse");
	CHECK_STR(change_verdict(10, 11, -1, 1), "better");
	CHECK_STR(change_verdict(10, 10.05, 1, 1), "similar");
	CHECK_STR(change_verdict(10, 12, 0, 1), "changed");
	CHECK_STR(change_verdict(NAN, 1, 1, 1), "n/a");
	CHECK_NEAR(change_pct(0, 0), 0, 0);
	CHECK(isinf(change_pct(0, 1)));
}

static int load(struct plot_lib *lib)
{
	char why[1024];
	if (report_plot_load(lib, why, sizeof(why)) != 0) {
		fprintf(stderr, "  (plot plug-in: %s)\n", why);
		return -1;
	}
	return 0;
}

static void test_chart_read_back_has_each_series(void)
{
	struct plot_lib lib;
	if (load(&lib) != 0)
		SKIP("libaorta-plot.so cannot be loaded");
	double x[50], a[50], b[50];
	for (int i = 0; i < 50; i++)
		x[i] = i, a[i] = 30 + 5 * sin(i / 5.0), b[i] = 3 + (i % 7);
	struct plot_series se[2] = { { "compute", OI_BLUE, x, a, NULL, NULL, 50, 3, 0, 0 },
				     { "overlap", OI_ORANGE, x, b, NULL, NULL, 50, 3, 0, 0 } };
	struct plot_panel p = { .kind = PK_LINE, .xlabel = "global step", .ylabel = "Milliseconds", .series = se,
				.nseries = 2, .y_from_zero = 1 };
	struct plot_chart c = { "test", 640, 360, 1, &p, 1, NULL };
	char png[512], svg[512], err[256];
	snprintf(png, sizeof(png), "%s/t.png", tmpdir);
	snprintf(svg, sizeof(svg), "%s/t.svg", tmpdir);
	CHECK_EQ_I(lib.render(&c, png, svg, err, sizeof(err)), 0);
	int w = 0, h = 0;
	uint32_t want[3] = { OI_BLUE, OI_ORANGE, OI_RED };
	size_t cnt[3], nonwhite;
	CHECK_EQ_I(lib.png_stats(png, &w, &h, want, 3, cnt, &nonwhite, err, sizeof(err)), 0);
	CHECK_EQ_I(w, 640);
	CHECK_EQ_I(h, 360);
	CHECK(cnt[0] > 300); /* a 3 px line across the plot */
	CHECK(cnt[1] > 300);
	CHECK_EQ_I(cnt[2], 0); /* no series in red */
	CHECK(nonwhite > 5000);
	struct stat sb;
	CHECK(stat(svg, &sb) == 0 && sb.st_size > 1000);
	report_plot_unload(&lib);
}

/* The whole report on the fixture runs: every chart drawn, the change chart
 * has better (green) and worse (red) bars, the page embeds the images, and
 * Chromium renders it. */
static void test_report_charts_and_page(void)
{
	struct plot_lib lib;
	if (load(&lib) != 0)
		SKIP("libaorta-plot.so cannot be loaded");
	struct report r = { 0 };
	struct aorta_error e = { 0 };
	r.o = (struct report_opts){ 5, 2, 1.0, "base", NULL, 0, NULL, 0, 5 };
	r.ds = xcalloc(2, sizeof(*r.ds));
	r.nds = 2;
	CHECK_EQ_I(read_ds("base", "tests/data/report/base", 5, &r.ds[0], &e), AORTA_OK);
	CHECK_EQ_I(read_ds("cand", "tests/data/report/cand", 5, &r.ds[1], &e), AORTA_OK);
	CHECK_EQ_I(r.ds[1].bad_lines, 1);
	r.ref = 0;
	r.cand = xcalloc(1, sizeof(int));
	r.cand[0] = 1;
	r.ncand = 1;
	report_prepare(&r);
	struct rep_images img = { 0 };
	CHECK_EQ_I(report_draw(&r, &lib, tmpdir, &img, &e), AORTA_OK);
	CHECK(img.n >= 8);
	char png[600], err[256];
	int w, h;
	size_t cnt[4], nonwhite;
	uint32_t tl[4] = { OI_BLUE, OI_ORANGE, OI_GREEN, OI_RED };
	snprintf(png, sizeof(png), "%s/base_timeline.png", tmpdir);
	CHECK_EQ_I(lib.png_stats(png, &w, &h, tl, 4, cnt, &nonwhite, err, sizeof(err)), 0);
	CHECK_EQ_I(w, 1000);
	CHECK_EQ_I(h, 500);
	CHECK(cnt[0] > 200 && cnt[1] > 200); /* compute and overlap drawn */
	snprintf(png, sizeof(png), "%s/compare_change.png", tmpdir);
	CHECK_EQ_I(lib.png_stats(png, &w, &h, tl, 4, cnt, &nonwhite, err, sizeof(err)), 0);
	CHECK(cnt[2] > 500); /* better bars */
	CHECK(cnt[3] > 50);  /* reduce-scatter overlap got worse: a red bar */
	snprintf(png, sizeof(png), "%s/base_gantt.png", tmpdir);
	CHECK_EQ_I(lib.png_stats(png, &w, &h, tl, 4, cnt, &nonwhite, err, sizeof(err)), 0);
	CHECK(cnt[0] > 2000 && cnt[2] > 200); /* compute bars and the overlap row */
	CHECK_EQ_I(report_write_html(&r, &img, tmpdir, NULL, &e), AORTA_OK);
	char html[600];
	snprintf(html, sizeof(html), "%s/index.html", tmpdir);
	FILE *f = fopen(html, "r");
	CHECK(f != NULL);
	if (f) {
		static char buf[1 << 20];
		size_t n = fread(buf, 1, sizeof(buf) - 1, f);
		buf[n] = '\0';
		fclose(f);
		CHECK(strstr(buf, "data:image/png;base64,iVBORw0KGgo") != NULL);
		CHECK(strstr(buf, "http://") == NULL && strstr(buf, "https://") == NULL); /* self-contained */
		CHECK(strstr(buf, "cand against base") != NULL);
	}

	/* headless Chromium: render, screenshot, look for content */
	const char *browser = NULL;
	if (access("/usr/bin/chromium", X_OK) == 0)
		browser = "/usr/bin/chromium";
	else if (access("/usr/bin/chromium-browser", X_OK) == 0)
		browser = "/usr/bin/chromium-browser";
	if (!browser || getenv("AORTA_NO_BROWSER")) {
		fprintf(stderr, "  note: chromium not found (scripts/deps.sh installs it): page screenshot not checked\n");
	} else {
		char cmd[2048], shot[600];
		snprintf(shot, sizeof(shot), "%s/shot.png", tmpdir);
		/* html may be relative: make it absolute */
		char cwd[512];
		if (!getcwd(cwd, sizeof(cwd)))
			cwd[0] = '\0';
		snprintf(cmd, sizeof(cmd),
			 "timeout 120 %s --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir=%s/chr "
			 "--window-size=1300,2600 --screenshot=%s 'file://%s%s%s' >%s/chromium.log 2>&1",
			 browser, tmpdir, shot, html[0] == '/' ? "" : cwd, html[0] == '/' ? "" : "/", html, tmpdir);
		int rc = system(cmd);
		if (rc != 0 || access(shot, F_OK) != 0) {
			fprintf(stderr, "  note: chromium could not run here (exit %d, see its log); page screenshot not checked\n", rc);
		} else {
			uint32_t col[3] = { 0x0072B2, 0xcdeee3, 0x111111 };
			size_t c3[3];
			CHECK_EQ_I(lib.png_stats(shot, &w, &h, col, 3, c3, &nonwhite, err, sizeof(err)), 0);
			CHECK_EQ_I(w, 1300);
			CHECK_EQ_I(h, 2600);
			CHECK(nonwhite > (size_t)w * (size_t)h / 50); /* text, tables and charts, not a blank page */
			CHECK(c3[0] > 1000);   /* the section rules and the timeline's compute line */
			CHECK(c3[1] > 200);    /* green 'better' verdict cells */
		}
	}
	rep_images_free(&img);
	report_free(&r);
	report_plot_unload(&lib);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/aorta_test_report_%ld", (long)getpid());
	mkdir(tmpdir, 0777);
	TEST(test_upstream_jsonl_matches_overlap_report);
	TEST(test_cut_last_line_is_counted_and_left_out);
	TEST(test_skip_beyond_the_steps_is_adapted);
	TEST(test_missing_input_is_input_error);
	TEST(test_verdicts_follow_direction);
	TEST(test_chart_read_back_has_each_series);
	TEST(test_report_charts_and_page);
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmpdir);
	return test_report();
}
