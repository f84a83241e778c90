/*
 * test_report.c - aorta report's model, summary, charts and page:
 * upstream figures on the real upstream JSONL, a cut last line counted and
 * left out, empty datasets, the ratio of means, verdicts shared with
 * compare, charts read back (size, pixels of each series colour), and the
 * page rendered by headless Chromium (skipped when it cannot run).
 */
#include "testing.h"

#include <dlfcn.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "overlap/analysis.h"
#include "pipeline/pipeline.h"
#include "pipeline/upstream.h"
#include "report/report_charts.h"
#include "report/report_html.h"
#include "report/report_model.h"
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
	struct analysis_opts o = ANALYSIS_OPTS_INIT;
	o.threads = 2;
	o.skip_steps = skip;
	o.keep_traces = 1;
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
	/* the kept steps' loss (warm-up left out) */
	CHECK_NEAR(d->loss.mean, 0.34705334061926063, 1e-12);
	CHECK(d->has_ranges);
	/* upstream's keys: overlap_report.py's output on the same folder
	 * (tests/data/upstream, every record, no skip), to the bit */
	struct rep_upstream u;
	CHECK_EQ_I(pipeline_upstream_read("data/h200x4/aorta_ddp", &u, &e), AORTA_OK);
	CHECK_EQ_I(u.files, 4);
	CHECK_EQ_I(u.count, 240);
	CHECK_EQ_I(u.bad_lines, 0);
	CHECK(u.loss_ok);
	CHECK(rep_upstream_mean(&u, &u.sum_loss) == 0.3474568093816439);
	CHECK(rep_upstream_mean(&u, &u.sum_compute) == 37.2727883990854);
	CHECK(rep_upstream_mean(&u, &u.sum_overlap) == 0.0);
	CHECK(rep_upstream_ratio(&u) == 0.0);
	/* JSONL has no shared clock: no late rank is named */
	CHECK(!d->diag.has_cross_rank || d->diag.late_rank < 0 || d->a->clocks_aligned);
	rep_upstream_free(&u);
	report_free(&r);
}

/* A run cut mid-line: the cut last line is left out with a note, the
 * complete lines give the engine's step figures and upstream's keys. */
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
		CHECK_NEAR(rep_step_v(rk, 1, RF_COMPUTE), 12, 0);  /* the engine's: the compute range */
		CHECK_EQ_I(rep_step_gstep(rk, 1), 1);               /* no global_step: ordinal */
	}
	/* upstream's keys from the recorded figures: the two whole records,
	 * the cut line left out and counted, missing keys 0 as upstream */
	struct rep_upstream u;
	CHECK_EQ_I(pipeline_upstream_read(dir, &u, &e), AORTA_OK);
	CHECK_EQ_I(u.count, 2);
	CHECK_EQ_I(u.bad_lines, 1);
	CHECK(strstr(u.first_bad, "line 4") != NULL);
	CHECK_NEAR(rep_upstream_mean(&u, &u.sum_loss), 2, 0);
	CHECK_NEAR(rep_upstream_mean(&u, &u.sum_ar), 0, 0);
	/* ratio of means, not mean of ratios: (2+4)/(8+12) */
	CHECK_NEAR(rep_upstream_ratio(&u), 0.3, 1e-12);
	rep_upstream_free(&u);
	rep_dataset_free(&d);
}

/* --skip-steps beyond the steps there are skips nothing, and says so. */
static void test_skip_beyond_the_steps_is_adapted(void)
{
	struct analysis a;
	struct aorta_error e = { 0 };
	struct analysis_opts o = ANALYSIS_OPTS_INIT;
	o.threads = 2;
	o.skip_steps = 10;
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
	struct plot_panel p = { .kind = PK_LINE, .xlabel = "global step", .ylabel = "time per step (ms)", .series = se,
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

/* ---- chart descriptions, checked as report_draw hands them to the plug-in --- */

struct seen {
	int charts, line_series, unsorted_series, by_rank_bars, by_rank_cats, by_rank_cats_sorted;
	int timelines, timeline_integer, unitless, colls_series, colls_first_ok;
	char unitless_what[256];
};
static struct seen seen;

static int has_unit(const char *label)
{
	const char *o = label ? strchr(label, '(') : NULL;
	return o && strchr(o, ')') != NULL;
}

/* A stand-in for the plug-in's render: inspects each chart description. */
static int capture(const struct plot_chart *c, const char *png, const char *svg, char *err, size_t errlen)
{
	(void)svg, (void)err, (void)errlen;
	const char *name = strrchr(png, '/') ? strrchr(png, '/') + 1 : png;
	seen.charts++;
	for (size_t i = 0; i < c->npanels; i++) {
		const struct plot_panel *p = &c->panels[i];
		/* the value axis carries its unit */
		const char *value_label = p->kind == PK_LINE || p->kind == PK_BARS ? p->ylabel
					  : p->kind == PK_HEATMAP                 ? p->xlabel
										  : p->xlabel;
		if (!has_unit(value_label)) {
			seen.unitless++;
			snprintf(seen.unitless_what, sizeof(seen.unitless_what), "%s panel %zu: '%s'", name, i,
				 value_label ? value_label : "(none)");
		}
		for (size_t s = 0; p->kind == PK_LINE && s < p->nseries; s++) {
			const struct plot_series *se = &p->series[s];
			seen.line_series++;
			double last = -INFINITY;
			for (size_t k = 0; k < se->n; k++) {
				if (!isfinite(se->x[k]))
					continue;
				if (se->x[k] < last)
					seen.unsorted_series++;
				last = se->x[k];
			}
		}
		if (!strcmp(name, "compare_by_rank.png")) {
			seen.by_rank_bars += p->kind == PK_BARS;
			seen.by_rank_cats = (int)p->ncats;
			int sorted = 1;
			for (size_t k = 1; k < p->ncats; k++)
				sorted &= atoi(p->cats[k - 1]) < atoi(p->cats[k]);
			seen.by_rank_cats_sorted = sorted;
		}
		if (strstr(name, "_timeline.png")) {
			seen.timelines++;
			seen.timeline_integer += p->x_integer;
		}
		if (!strcmp(name, "collectives.png") && i == 0) {
			seen.colls_series = (int)p->nseries;
			/* interleaved input: all-gather sizes 4, 1, 16 MiB -> one series 1, 4, 16 */
			const struct plot_series *ag = p->nseries ? &p->series[0] : NULL;
			seen.colls_first_ok = ag && ag->n == 3 && !strcmp(ag->name, "cand all_gather") &&
					      ag->x[0] == 1 << 20 && ag->x[1] == 4 << 20 && ag->x[2] == 16 << 20 &&
					      ag->y[0] == 1.0 && ag->y[2] == 4.0;
		}
	}
	return 0;
}

/* The defects of issue 15 item 5, at the description: lines sorted along x
 * (collectives given out of order), ranks as bar categories, step axes on
 * whole numbers, a unit on every value axis.  No plug-in needed. */
static void test_chart_descriptions(void)
{
	struct report r = { 0 };
	struct aorta_error e = { 0 };
	r.o = (struct report_opts){ .skip_steps = 5, .threads = 2, .threshold_pct = 1.0, .reference = "base" };
	r.ds = xcalloc(2, sizeof(*r.ds));
	r.nds = 2;
	CHECK_EQ_I(read_ds("base", "tests/data/report/base", 5, &r.ds[0], &e), AORTA_OK);
	CHECK_EQ_I(read_ds("cand", "tests/data/report/cand", 5, &r.ds[1], &e), AORTA_OK);
	r.ref = 0;
	r.cand = xcalloc(1, sizeof(int));
	r.cand[0] = 1;
	r.ncand = 1;
	/* collectives in no particular order, types interleaved */
	static const struct {
		const char *type;
		double mib, ms;
	} cl[5] = { { "all_gather", 4, 2 }, { "reduce_scatter", 1, 1 }, { "all_gather", 1, 1 },
		    { "all_gather", 16, 4 }, { "reduce_scatter", 0.0625, 0.5 } };
	struct rep_dataset *d = &r.ds[1];
	free(d->colls);
	d->colls = xcalloc(5, sizeof(*d->colls));
	d->ncolls = 5;
	for (int i = 0; i < 5; i++) {
		snprintf(d->colls[i].type, sizeof(d->colls[i].type), "%s", cl[i].type);
		d->colls[i].bytes = cl[i].mib * (1 << 20);
		d->colls[i].count = 2;
		d->colls[i].total_ms = 2 * cl[i].ms;
		struct coll_row c = { 0 };
		c.type = strcmp(cl[i].type, "all_gather") ? COLL_REDUCE_SCATTER : COLL_ALL_GATHER;
		c.bytes = (uint64_t)d->colls[i].bytes;
		c.count = c.matched = 2;
		c.group_size = 2;
		c.total_ns = (int64_t)(2e6 * cl[i].ms);
		c.xfer_ns = c.total_ns / 2;
		coll_bw_add(&d->colls[i].bw, &c);
	}
	report_prepare(&r);
	struct plot_lib fake = { 0 };
	fake.render = capture;
	struct rep_images img = { 0 };
	memset(&seen, 0, sizeof(seen));
	CHECK_EQ_I(report_draw(&r, &fake, tmpdir, &img, &e), AORTA_OK);
	CHECK(seen.charts >= 8);
	CHECK(seen.line_series > 4);
	CHECK_EQ_I(seen.unsorted_series, 0);
	CHECK_EQ_I(seen.by_rank_bars, 6);   /* every panel of the by-rank chart is bars */
	CHECK_EQ_I(seen.by_rank_cats, 2);   /* the fixture runs have ranks 0 and 1 */
	CHECK(seen.by_rank_cats_sorted);
	CHECK_EQ_I(seen.timelines, 2);
	CHECK_EQ_I(seen.timeline_integer, 2); /* global step axes tick on whole numbers */
	if (seen.unitless)
		fprintf(stderr, "  value axis without a unit: %s\n", seen.unitless_what);
	CHECK_EQ_I(seen.unitless, 0);
	CHECK_EQ_I(seen.colls_series, 2); /* one line per type, not per run of the input */
	CHECK(seen.colls_first_ok);
	rep_images_free(&img);
	report_free(&r);
}

/* The plug-in joins a line's points in x order: the same points given
 * shuffled draw the same picture, byte for byte; step axes tick on whole
 * numbers where a plain axis would tick at 2.5. */
static void test_plugin_sorts_lines_and_ticks_integers(void)
{
	struct plot_lib lib;
	if (load(&lib) != 0)
		SKIP("libaorta-plot.so cannot be loaded");
	double x[40], y[40], xs[40], ys[40];
	for (int i = 0; i < 40; i++)
		x[i] = i, y[i] = 10 + 8 * sin(i / 4.0);
	for (int i = 0; i < 40; i++) { /* a fixed shuffle: 7 is prime to 40 */
		xs[i] = x[(i * 7) % 40];
		ys[i] = y[(i * 7) % 40];
	}
	char a[512], b[512], err[256];
	snprintf(a, sizeof(a), "%s/sorted.png", tmpdir);
	snprintf(b, sizeof(b), "%s/shuffled.png", tmpdir);
	struct plot_series se = { "s", OI_BLUE, x, y, NULL, NULL, 40, 2, 0, 1 };
	struct plot_panel p = { .kind = PK_LINE, .xlabel = "global step", .ylabel = "time per step (ms)",
				.x_integer = 1, .series = &se, .nseries = 1 };
	struct plot_chart c = { "order", 500, 300, 1, &p, 1, NULL };
	CHECK_EQ_I(lib.render(&c, a, NULL, err, sizeof(err)), 0);
	se.x = xs, se.y = ys;
	CHECK_EQ_I(lib.render(&c, b, NULL, err, sizeof(err)), 0);
	FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
	CHECK(fa && fb);
	if (fa && fb) {
		static unsigned char ba[1 << 20], bb[1 << 20];
		size_t na = fread(ba, 1, sizeof(ba), fa), nb = fread(bb, 1, sizeof(bb), fb);
		CHECK(na > 1000);
		CHECK(na == nb && memcmp(ba, bb, na) == 0);
	}
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	plot_ticks_fn ticks;
	*(void **)&ticks = dlsym(lib.handle, "aorta_plot_ticks");
	CHECK(ticks != NULL);
	if (ticks) {
		double t[64];
		int n = ticks(28, 30, 1, t, 64); /* three steps: 28, 29, 30, not 28.25 */
		CHECK(n >= 3 && n <= 64);
		for (int i = 0; i < n && i < 64; i++)
			CHECK(t[i] == floor(t[i]));
		n = ticks(0, 20, 1, t, 64);
		for (int i = 0; i < n && i < 64; i++)
			CHECK(t[i] == floor(t[i]));
		n = ticks(0, 20, 0, t, 64); /* without the flag: 2.5 steps */
		int frac = 0;
		for (int i = 0; i < n && i < 64; i++)
			frac += t[i] != floor(t[i]);
		CHECK(frac > 0);
	}
	report_plot_unload(&lib);
}

/* A sweep's heatmap: values over a grid on a sequential scale (viridis),
 * the lowest cell darkest, the highest yellow, no better/worse colours. */
static void test_sequential_heatmap(void)
{
	struct plot_lib lib;
	if (load(&lib) != 0)
		SKIP("libaorta-plot.so cannot be loaded");
	static const char *const cols[4] = { "2", "4", "8", "16" }, *const rows[3] = { "256", "512", "1024" };
	double cells[12];
	for (int i = 0; i < 12; i++)
		cells[i] = 40 + 3 * ((i * 5) % 12); /* 40 .. 73 ms, lowest at 0, highest at 7 */
	struct plot_panel p = { .kind = PK_HEATMAP, .title = "step time", .xlabel = "NCCL channels (count)",
				.ylabel = "NCCL_NTHREADS", .cats = cols, .ncats = 4, .rows = rows, .nrows = 3,
				.cells = cells, .cell_unit = " ms", .sequential = 1 };
	struct plot_chart c = { "sweep", 700, 420, 1, &p, 1, NULL };
	char png[512], svg[512], err[256];
	snprintf(png, sizeof(png), "%s/seq.png", tmpdir);
	snprintf(svg, sizeof(svg), "%s/seq.svg", tmpdir);
	CHECK_EQ_I(lib.render(&c, png, svg, err, sizeof(err)), 0);
	uint32_t want[4] = { 0x440154, 0xFDE725, OI_GREEN, OI_RED };
	size_t cnt[4], nonwhite;
	int w, h;
	CHECK_EQ_I(lib.png_stats(png, &w, &h, want, 4, cnt, &nonwhite, err, sizeof(err)), 0);
	CHECK(cnt[0] > 5000); /* the 40 ms cell (about 130 x 100 px, less its text) */
	CHECK(cnt[1] > 5000); /* the 73 ms cell */
	CHECK_EQ_I(cnt[2], 0);
	CHECK_EQ_I(cnt[3], 0);
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
	TEST(test_chart_descriptions);
	TEST(test_plugin_sorts_lines_and_ticks_integers);
	TEST(test_sequential_heatmap);
	TEST(test_report_charts_and_page);
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (getenv("AORTA_KEEP_TEST_FILES"))
		fprintf(stderr, "files kept in %s\n", tmpdir);
	else if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmpdir);
	return test_report();
}
