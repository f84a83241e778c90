/*
 * report_charts.c - every chart of `aorta report`, described as data
 * (report_plot.h) and drawn by the plug-in, plus the plug-in's loader.
 *
 * Charts (files <name>.png and <name>.svg in the output folder):
 *  - <label>_timeline: compute and overlapped comm per global step
 *    (warm-up left out), each rank thin (up to 8 ranks) or the band of all
 *    ranks (more), and the mean over ranks bold.  Long runs are bucketed to
 *    at most 900 points per line (mean per bucket), so 10,000 steps x 64
 *    ranks draws as fast as 900.
 *  - <label>_gantt: the streams of chosen steps of one rank (compute,
 *    all-gather, reduce-scatter, all-reduce, aux, then others) with a row
 *    of compute ∩ communication; by default the median and the slowest
 *    kept step; only for inputs that record stream ranges (JSONL).
 *  - compare_change: percent change of each figure against the reference,
 *    a bar per candidate, green better / red worse / grey similar.
 *  - compare_absolute: mean time per step of each figure, datasets side by
 *    side.  compare_by_rank: six figures by rank, ranks as categories (bars,
 *    a bar per dataset), never a line through ranks.
 *  - compare_heatmap_<candidate>: rank x figure percent change, coloured by
 *    better (green) / worse (red).
 *  - collectives: latency and bus bandwidth by message size (trace and
 *    analysis inputs, which know message sizes), a line per dataset and
 *    collective type, its points in increasing size.
 * Every axis label carries its unit; step axes tick on whole numbers
 * (x_integer).
 * Colours are Okabe & Ito's palette; green and red mean better and worse
 * only on the comparison charts of change.
 */
#include "report/report_charts.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/output.h"
#include "base/plugin.h"
#include "base/stats.h"
#include "report/report_change.h"
#include "report/report_plot.h"

const uint32_t PLOT_PALETTE[8] = { OI_BLUE, OI_ORANGE, OI_SKY, OI_PURPLE, OI_BLACK, OI_YELLOW, OI_GREEN, OI_RED };

/* ---- loader -------------------------------------------------------------------- */

static int try_load(struct plot_lib *p, const char *path, char *why, size_t len)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(why, len, "%s", dlerror());
		return -1;
	}
	if (aorta_plugin_check(h, path, "plot", why, len))
		return -1; /* left mapped, never called (as base/plugin.c does) */
	plot_abi_fn abi;
	*(void **)&abi = dlsym(h, "aorta_plot_abi");
	*(void **)&p->render = dlsym(h, "aorta_plot_render");
	*(void **)&p->png_stats = dlsym(h, "aorta_plot_png_stats");
	if (!abi || !p->render || !p->png_stats || abi() != PLOT_ABI) {
		snprintf(why, len, "'%.900s' is not a matching aorta plot plug-in (ABI %d expected)", path, PLOT_ABI);
		dlclose(h);
		return -1;
	}
	p->handle = h;
	snprintf(p->path, sizeof(p->path), "%s", path);
	return 0;
}

int report_plot_load(struct plot_lib *p, char *why, size_t len)
{
	char path[PATH_MAX + 64];
	const char *env = getenv("AORTA_PLOT_LIB");

	memset(p, 0, sizeof(*p));
	if (env && *env)
		return try_load(p, env, why, len);
	if (aorta_plugin_path("libaorta-plot.so", path, sizeof(path))) {
		snprintf(why, len, "cannot find the aorta binary's folder");
		return -1;
	}
	return try_load(p, path, why, len);
}

/* The library stays mapped (cairo and fontconfig are not made to be
 * unloaded); their caches are freed, so leak checkers stay quiet. */
void report_plot_unload(struct plot_lib *p)
{
	if (p->handle) {
		void (*rel)(void);
		*(void **)&rel = dlsym(p->handle, "aorta_plot_release");
		if (rel)
			rel();
	}
	memset(p, 0, sizeof(*p));
}

/* ---- helpers ------------------------------------------------------------------- */

void rep_images_free(struct rep_images *img)
{
	for (size_t i = 0; i < img->n; i++) {
		free(img->v[i].name);
		free(img->v[i].title);
		free(img->v[i].caption);
	}
	free(img->v);
	memset(img, 0, sizeof(*img));
}


/* A file-name-safe form of a label (report.h). */
void report_label_stem(char *out, size_t n, const char *label)
{
	size_t k = 0;
	for (const char *c = label; *c && k + 1 < n; c++)
		out[k++] = (char)((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
						  *c == '-' || *c == '_' || *c == '.'
					  ? *c
					  : '_');
	out[k] = '\0';
	if (!k || out[0] == '.')
		out[0] = '_', out[k ? k : 1] = '\0';
}

struct ctx {
	const struct report *r;
	struct plot_lib *lib;
	const char *dir;
	struct rep_images *img;
	struct aorta_error *e;
};

static enum aorta_status emit(struct ctx *c, const struct plot_chart *ch, const char *name, const char *section,
			      char *caption)
{
	char png[4096], svg[4096], err[1024];
	snprintf(png, sizeof(png), "%s/%s.png", c->dir, name);
	snprintf(svg, sizeof(svg), "%s/%s.svg", c->dir, name);
	/* the plug-in writes them itself: a signal removes them with the folder */
	out_track_file(png);
	out_track_file(svg);
	if (c->lib->render(ch, png, svg, err, sizeof(err)) != 0) {
		free(caption);
		return aorta_fail(c->e, AORTA_EINTERNAL, png, 0, -1, "cannot draw the chart: %s", err);
	}
	GROW(c->img->v, c->img->cap, c->img->n + 1);
	struct rep_image *im = &c->img->v[c->img->n++];
	im->name = xstrdup(name);
	im->title = xstrdup(ch->title ? ch->title : name);
	im->caption = caption;
	im->section = section;
	return AORTA_OK;
}

/* ---- timeline ------------------------------------------------------------------ */

#define TL_BUCKETS 900

struct bucketed {
	double *x;                /* bucket centres (global step) */
	double *mean[2], *lo[2], *hi[2]; /* [0] compute, [1] overlap, over ranks */
	double *rk[8][2];         /* per rank (up to 8) */
	size_t n;
};

static void bucket(const struct rep_dataset *d, int skip, struct bucketed *b)
{
	int64_t g0 = INT64_MAX, g1 = INT64_MIN;
	for (size_t i = 0; i < d->nranks; i++)
		for (size_t k = rep_first_kept(&d->ranks[i], skip); k < d->ranks[i].nsteps; k++) {
			int64_t g = rep_step_gstep(&d->ranks[i], k);
			g0 = g < g0 ? g : g0;
			g1 = g > g1 ? g : g1;
		}
	memset(b, 0, sizeof(*b));
	if (g0 > g1)
		return;
	double span = (double)g1 - (double)g0 + 1;
	size_t n = span < TL_BUCKETS ? (size_t)span : TL_BUCKETS;
	b->n = n;
	b->x = xcalloc(n, sizeof(double));
	double *cnt = xcalloc(n, sizeof(double));
	for (int s = 0; s < 2; s++) {
		b->mean[s] = xcalloc(n, sizeof(double));
		b->lo[s] = xmalloc(n * sizeof(double));
		b->hi[s] = xmalloc(n * sizeof(double));
		for (size_t j = 0; j < n; j++)
			b->lo[s][j] = INFINITY, b->hi[s][j] = -INFINITY;
	}
	size_t nr = d->nranks < 8 ? d->nranks : 8;
	double *rcnt = xcalloc(n * (nr ? nr : 1), sizeof(double));
	if (d->nranks <= 8)
		for (size_t i = 0; i < nr; i++)
			for (int s = 0; s < 2; s++)
				b->rk[i][s] = xcalloc(n, sizeof(double));
	for (size_t i = 0; i < d->nranks; i++) {
		const struct rep_rank *rk = &d->ranks[i];
		/* per rank and bucket first (a bucket's rank value is its mean) */
		double *acc[2] = { xcalloc(n, sizeof(double)), xcalloc(n, sizeof(double)) };
		double *an = xcalloc(n, sizeof(double));
		for (size_t k = rep_first_kept(rk, skip); k < rk->nsteps; k++) {
			double off = (double)rep_step_gstep(rk, k) - (double)g0;
			size_t j = n == (size_t)span ? (size_t)off : (size_t)(off / span * (double)n);
			if (j >= n)
				j = n - 1;
			acc[0][j] += rep_step_v(rk, k, RF_COMPUTE);
			acc[1][j] += rep_step_v(rk, k, RF_OVERLAP);
			an[j] += 1;
		}
		for (size_t j = 0; j < n; j++) {
			if (!an[j])
				continue;
			for (int s = 0; s < 2; s++) {
				double v = acc[s][j] / an[j];
				b->mean[s][j] += v;
				b->lo[s][j] = fmin(b->lo[s][j], v);
				b->hi[s][j] = fmax(b->hi[s][j], v);
				if (d->nranks <= 8)
					b->rk[i][s][j] = v;
			}
			cnt[j] += 1;
			if (d->nranks <= 8)
				rcnt[i * n + j] = 1;
		}
		free(acc[0]);
		free(acc[1]);
		free(an);
	}
	for (size_t j = 0; j < n; j++) {
		b->x[j] = (double)g0 + ((double)j + 0.5) * span / (double)n - 0.5;
		if (n == (size_t)span)
			b->x[j] = (double)g0 + (double)j;
		for (int s = 0; s < 2; s++) {
			b->mean[s][j] = cnt[j] ? b->mean[s][j] / cnt[j] : NAN;
			if (!cnt[j])
				b->lo[s][j] = b->hi[s][j] = NAN;
		}
		for (size_t i = 0; d->nranks <= 8 && i < nr; i++)
			if (!rcnt[i * n + j])
				b->rk[i][0][j] = b->rk[i][1][j] = NAN;
	}
	free(cnt);
	free(rcnt);
}

static void bucketed_free(struct bucketed *b)
{
	free(b->x);
	for (int s = 0; s < 2; s++) {
		free(b->mean[s]);
		free(b->lo[s]);
		free(b->hi[s]);
		for (int i = 0; i < 8; i++)
			free(b->rk[i][s]);
	}
}

static enum aorta_status chart_timeline(struct ctx *c, const struct rep_dataset *d)
{
	struct bucketed b;
	int skip = c->r->o.skip_steps;
	bucket(d, skip, &b);
	struct plot_series se[2 * 8 + 4];
	size_t ns = 0;
	static const uint32_t col[2] = { OI_BLUE, OI_ORANGE };
	static const char *const what[2] = { "compute", "overlapped comm" };
	char names[4][128];
	int few = d->nranks <= 8;
	for (int s = 0; s < 2; s++) {
		if (few && d->nranks > 1) {
			for (size_t i = 0; i < d->nranks; i++) {
				snprintf(names[2 + s], sizeof(names[0]), "%s, each rank", what[s]);
				se[ns++] = (struct plot_series){ i ? NULL : names[2 + s], col[s], b.x, b.rk[i][s], NULL, NULL,
								 b.n, 1.0, 0.45, 0 };
			}
		} else if (d->nranks > 1) {
			snprintf(names[2 + s], sizeof(names[0]), "%s, range over %zu ranks", what[s], d->nranks);
			se[ns++] = (struct plot_series){ names[2 + s], col[s], b.x, b.lo[s], b.hi[s], NULL, b.n, 0, 0.25, 0 };
		}
	}
	for (int s = 0; s < 2; s++) {
		if (d->nranks > 1)
			snprintf(names[s], sizeof(names[0]), "%s %s, mean of %zu ranks", d->label, what[s], d->nranks);
		else
			snprintf(names[s], sizeof(names[0]), "%s %s", d->label, what[s]);
		se[ns++] = (struct plot_series){ names[s], col[s], b.x, b.mean[s], NULL, NULL, b.n, 2.5, 0, b.n <= 60 };
	}
	char title[256], note[256];
	snprintf(title, sizeof(title), "Overlap vs Compute Timeline (%s)", d->label);
	snprintf(note, sizeof(note), "%zu ranks, %zu rank-steps used; the first %d steps of each rank are warm-up and left out%s",
		 d->nranks, d->kept, skip, b.n == TL_BUCKETS ? "; long runs averaged into 900 buckets" : "");
	struct plot_panel p = { .kind = PK_LINE, .title = NULL, .xlabel = "global step", .ylabel = "time per step (ms)",
				.x_integer = 1, .y_from_zero = 1, .series = se, .nseries = ns,
				.empty_text = "no steps left after the warm-up skip" };
	struct plot_chart ch = { title, 1000, 500, 1, &p, 1, note };
	char name[512], safe[REPORT_STEM_MAX + 1];
	report_label_stem(safe, sizeof(safe), d->label);
	snprintf(name, sizeof(name), "%s_timeline", safe);
	enum aorta_status st = emit(c, &ch, name, "timeline",
				    xasprintf("Compute time and compute-communication overlap per global step, %s.", d->label));
	bucketed_free(&b);
	return st;
}

/* ---- Gantt --------------------------------------------------------------------- */

static int stream_row(const char *s)
{
	if (!strcmp(s, "compute"))
		return 1;
	if (!strcmp(s, "allgather") || !strcmp(s, "all_gather"))
		return 2;
	if (!strcmp(s, "reducescatter") || !strcmp(s, "reduce_scatter"))
		return 3;
	if (!strcmp(s, "allreduce") || !strcmp(s, "all_reduce"))
		return 4;
	if (!strcmp(s, "aux"))
		return 5;
	return -1;
}

static int is_comm_row(int row)
{
	return row >= 2 && row <= 4;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Gantt panels of (rank, step index) pairs, cols per row: rows are the
 * five known streams and the first rank's others (a later rank's other
 * streams join them), the overlap of compute and communication shaded. */
struct gpanel { const struct rep_rank *rk; size_t k; char title[200]; };

static enum aorta_status gantt_chart(struct ctx *c, const struct rep_dataset *d, const struct gpanel *gp, int np,
				     int cols, const char *title, const char *name, const char *section, char *caption)
{
	const char *rows[6 + 32] = { "compute ∩ comm", "compute", "all-gather", "reduce-scatter", "all-reduce", "aux" };
	int nrows = 6, rowof[4][16];
	for (int q = 0; q < np; q++)
		for (int k = 0; k < gp[q].rk->nstream_names; k++) {
			const char *nm = gp[q].rk->stream_names[k];
			int row = stream_row(nm);
			for (int x = 6; row < 0 && x < nrows; x++)
				if (!strcmp(rows[x], nm))
					row = x;
			if (row < 0 && nrows < 6 + 32) {
				rows[nrows] = nm;
				row = nrows++;
			}
			rowof[q][k] = row < 0 ? 5 : row;
		}
	static const uint32_t rowcol[6] = { OI_GREEN, OI_BLUE, OI_ORANGE, OI_SKY, OI_PURPLE, OI_YELLOW };
	struct plot_panel pn[4];
	struct plot_rect *rects[4] = { NULL };
	for (int q = 0; q < np; q++) {
		const struct rep_rank *rk = gp[q].rk;
		size_t k = gp[q].k, a = rk->step_range0[k], z = rk->step_range0[k + 1];
		size_t cap = 0, nr = 0;
		struct plot_rect *rc = NULL;
		for (size_t i = a; i < z; i++) {
			const struct rep_range *g = &rk->ranges[i];
			int row = rowof[q][g->stream];
			GROW(rc, cap, nr + 1);
			rc[nr++] = (struct plot_rect){ g->start_ms, g->end_ms, row, row < 6 ? rowcol[row] : OI_GREY, 0, 0 };
		}
		/* compute ∩ comm: pairwise intersections (a step has few ranges) */
		for (size_t i = a; i < z; i++) {
			if (rowof[q][rk->ranges[i].stream] != 1)
				continue;
			for (size_t j = a; j < z; j++) {
				if (!is_comm_row(rowof[q][rk->ranges[j].stream]))
					continue;
				double lo = fmax(rk->ranges[i].start_ms, rk->ranges[j].start_ms);
				double hi = fmin(rk->ranges[i].end_ms, rk->ranges[j].end_ms);
				if (hi > lo) {
					GROW(rc, cap, nr + 2);
					rc[nr++] = (struct plot_rect){ lo, hi, 0, OI_GREEN, 0, 0 };
					rc[nr++] = (struct plot_rect){ lo, hi, 1, OI_GREEN, 0.85, 1 };
				}
			}
		}
		rects[q] = rc;
		pn[q] = (struct plot_panel){ .kind = PK_GANTT, .title = gp[q].title, .xlabel = "time since step start (ms)",
					     .cats = rows, .ncats = (size_t)nrows, .rects = rc, .nrects = nr,
					     .empty_text = "no stream ranges recorded in this step" };
	}
	static const struct plot_series leg[7] = {
		{ "compute", OI_BLUE, NULL, NULL, NULL, NULL, 0, 0, 0, 0 },
		{ "all-gather", OI_ORANGE, NULL, NULL, NULL, NULL, 0, 0, 0, 0 },
		{ "reduce-scatter", OI_SKY, NULL, NULL, NULL, NULL, 0, 0, 0, 0 },
		{ "all-reduce", OI_PURPLE, NULL, NULL, NULL, NULL, 0, 0, 0, 0 },
		{ "aux", OI_YELLOW, NULL, NULL, NULL, NULL, 0, 0, 0, 0 },
		{ "compute ∩ comm (overlap)", OI_GREEN, NULL, NULL, NULL, NULL, 0, 0, 0, 0 },
		{ "other streams", OI_GREY, NULL, NULL, NULL, NULL, 0, 0, 0, 0 },
	};
	pn[0].legend_only = leg;
	pn[0].nlegend = nrows > 6 ? 7 : 6;
	int prow = (np + cols - 1) / cols;
	struct plot_chart ch = { title, cols > 1 ? 1240 : 1100, 60 + 40 * (nrows + 3) * prow, cols, pn, (size_t)np,
				 "each bar is a range a stream recorded; the green row is compute overlapped with communication" };
	(void)d;
	enum aorta_status st = emit(c, &ch, name, section, caption);
	for (int q = 0; q < np; q++)
		free(rects[q]);
	return st;
}

/* The kept step of rk nearest its median window (by RF_STEP), and its slowest. */
static size_t median_step(const struct rep_rank *rk, size_t first, size_t *slowest)
{
	size_t n = rk->nsteps - first, slow = first;
	double *v = xmalloc(n * sizeof(double));
	for (size_t k = first; k < rk->nsteps; k++) {
		v[k - first] = rep_step_v(rk, k, RF_STEP);
		if (rep_step_v(rk, k, RF_STEP) > rep_step_v(rk, slow, RF_STEP))
			slow = k;
	}
	qsort(v, n, sizeof(double), cmp_dbl);
	double med = v[median_upper_index(n)];
	free(v);
	size_t mk = first;
	for (size_t k = first; k < rk->nsteps; k++)
		if (fabs(rep_step_v(rk, k, RF_STEP) - med) < fabs(rep_step_v(rk, mk, RF_STEP) - med))
			mk = k;
	if (slowest)
		*slowest = slow;
	return mk;
}

static enum aorta_status chart_gantt(struct ctx *c, const struct rep_dataset *d)
{
	const struct rep_rank *rk = NULL;
	for (size_t i = 0; i < d->nranks; i++)
		if (d->ranks[i].step_range0) {
			rk = &d->ranks[i];
			break;
		}
	if (!rk || !rk->nsteps)
		return AORTA_OK;
	size_t first = rep_first_kept(rk, c->r->o.skip_steps);
	struct gpanel gp[4];
	int np = 0;
	if (c->r->o.ngantt) {
		for (int g = 0; g < c->r->o.ngantt && np < 4; g++)
			for (size_t k = 0; k < rk->nsteps; k++)
				if (rep_step_gstep(rk, k) == c->r->o.gantt_steps[g]) {
					gp[np++] = (struct gpanel){ rk, k, "" };
					break;
				}
	} else if (first < rk->nsteps) {
		size_t slow, mk = median_step(rk, first, &slow);
		gp[np++] = (struct gpanel){ rk, mk, "" };
		if (slow != mk)
			gp[np++] = (struct gpanel){ rk, slow, "" };
	}
	if (!np)
		return AORTA_OK;
	for (int q = 0; q < np; q++)
		snprintf(gp[q].title, sizeof(gp[q].title), "rank %d, global step %lld: %.3f ms%s", rk->rank,
			 (long long)rep_step_gstep(rk, gp[q].k), rep_step_v(rk, gp[q].k, RF_STEP),
			 c->r->o.ngantt ? "" : q == 0 ? " (median step)" : " (slowest step)");
	char title[256], name[512], safe[REPORT_STEM_MAX + 1];
	snprintf(title, sizeof(title), "Streams of chosen steps (%s)", d->label);
	report_label_stem(safe, sizeof(safe), d->label);
	snprintf(name, sizeof(name), "%s_gantt", safe);
	return gantt_chart(c, d, gp, np, 1, title, name, "gantt",
			   xasprintf("Stream Gantt chart of rank %d, %s: compute, all-gather, reduce-scatter, "
				     "all-reduce and aux ranges; overlap shaded green.", rk->rank, d->label));
}

/* The late rank's stream Gantt beside a healthy rank's, one global step:
 * the late rank's median kept step, and the same step of the healthy rank. */
static enum aorta_status chart_pair(struct ctx *c, const struct rep_dataset *d)
{
	const struct rep_rank *lr = rep_find_rank(d, d->pair_late), *hr = rep_find_rank(d, d->pair_healthy);
	if (!lr || !hr || !lr->step_range0 || !hr->step_range0 || !lr->nsteps)
		return AORTA_OK;
	size_t first = rep_first_kept(lr, c->r->o.skip_steps);
	if (first >= lr->nsteps)
		return AORTA_OK;
	size_t k = median_step(lr, first, NULL), kh = SIZE_MAX;
	for (size_t q = 0; q < hr->nsteps; q++)
		if (rep_step_gstep(hr, q) == rep_step_gstep(lr, k))
			kh = q;
	if (kh == SIZE_MAX)
		return AORTA_OK;
	const struct analysis *a = d->a;
	int named = a->late_rank == d->pair_late;
	struct gpanel gp[2] = { { lr, k, "" }, { hr, kh, "" } };
	snprintf(gp[0].title, sizeof(gp[0].title), "rank %d (%s), global step %lld: %.3f ms", lr->rank,
		 named ? "the late rank" : "caused the most waiting", (long long)rep_step_gstep(lr, k), rep_step_v(lr, k, RF_STEP));
	snprintf(gp[1].title, sizeof(gp[1].title), "rank %d (healthy: caused the least waiting), global step %lld: %.3f ms",
		 hr->rank, (long long)rep_step_gstep(hr, kh), rep_step_v(hr, kh, RF_STEP));
	char title[256], name[512], safe[REPORT_STEM_MAX + 1];
	snprintf(title, sizeof(title), "Rank %d beside rank %d, one step (%s)", lr->rank, hr->rank, d->label);
	report_label_stem(safe, sizeof(safe), d->label);
	snprintf(name, sizeof(name), "%s_gantt_pair", safe);
	return gantt_chart(c, d, gp, 2, 2, title, name, "pair",
			   xasprintf("Stream Gantt charts of rank %d (%s) and rank %d (healthy), %s, the same global step: "
				     "where the late rank computes or waits for its host, the healthy rank sits in its "
				     "collectives.", lr->rank, named ? "the late rank" : "caused the most waiting", hr->rank,
				     d->label));
}

/* ---- comparison ----------------------------------------------------------------- */

static uint32_t verdict_rgb(const char *v)
{
	return !strcmp(v, "better") ? OI_GREEN : !strcmp(v, "worse") ? OI_RED : OI_GREY;
}

static enum aorta_status chart_change(struct ctx *c)
{
	const struct report *r = c->r;
	const struct rep_dataset *b = &r->ds[r->ref];
	const char *cats[REP_NCMP];
	int keep[REP_NCMP], nk = 0;
	for (int k = 0; k < REP_NCMP; k++) {
		int any = 0;
		for (int q = 0; q < r->ncand; q++)
			if (isfinite(change_pct(rep_cmp_value(b, k), rep_cmp_value(&r->ds[r->cand[q]], k))))
				any = 1;
		if (any) {
			keep[nk] = k;
			cats[nk++] = rep_cmp_label(k);
		}
	}
	struct plot_series *se = xcalloc((size_t)r->ncand, sizeof(*se));
	double *vals = xcalloc((size_t)(r->ncand * nk + 1), sizeof(double));
	uint32_t *cols = xcalloc((size_t)(r->ncand * nk + 1), sizeof(uint32_t));
	for (int q = 0; q < r->ncand; q++) {
		const struct rep_dataset *d = &r->ds[r->cand[q]];
		for (int i = 0; i < nk; i++) {
			double x = rep_cmp_value(b, keep[i]), y = rep_cmp_value(d, keep[i]);
			double p = change_pct(x, y);
			vals[q * nk + i] = isfinite(p) ? p : NAN;
			cols[q * nk + i] = verdict_rgb(change_verdict(x, y, rep_cmp_dir(keep[i]), r->o.threshold_pct));
		}
		se[q] = (struct plot_series){ d->label, OI_GREY, NULL, &vals[q * nk], NULL, &cols[q * nk], (size_t)nk, 0, 0, 0 };
	}
	static const struct plot_series leg[3] = {
		{ "better", OI_GREEN, NULL, NULL, NULL, NULL, 0, 0, 0, 0 },
		{ "worse", OI_RED, NULL, NULL, NULL, NULL, 0, 0, 0, 0 },
		{ "similar / neutral", OI_GREY, NULL, NULL, NULL, NULL, 0, 0, 0, 0 },
	};
	char title[256], note[256];
	snprintf(title, sizeof(title), "Change per figure against %s", b->label);
	snprintf(note, sizeof(note), "mean per step over all ranks; 'similar' within %.3g%%; compute and aux are neutral",
		 r->o.threshold_pct);
	struct plot_panel p = { .kind = PK_BARH, .xlabel = "change against the reference (%)", .series = se,
				.nseries = (size_t)r->ncand, .cats = cats, .ncats = (size_t)nk, .legend_only = leg,
				.nlegend = 3, .empty_text = "no figure to compare" };
	struct plot_chart ch = { title, 1000, 120 + 34 * nk * (r->ncand > 1 ? r->ncand : 1) + 60, 1, &p, 1, note };
	if (ch.height < 400)
		ch.height = 400;
	enum aorta_status st = emit(c, &ch, "compare_change", "compare",
				    xasprintf("Percent change of each figure against %s: green better, red worse, grey similar.",
					    b->label));
	free(se);
	free(vals);
	free(cols);
	return st;
}

static const int ABS_FIGS[] = { RF_STEP, RF_COMPUTE, RF_OVERLAP, RF_COMM, RF_EXPOSED, RF_AUX, RF_IDLE };
#define NABS (sizeof(ABS_FIGS) / sizeof(ABS_FIGS[0]))

/* datasets in comparison order: reference, then candidates */
static int cmp_sets(const struct report *r, int *out)
{
	int n = 0;
	out[n++] = r->ref;
	for (int q = 0; q < r->ncand; q++)
		out[n++] = r->cand[q];
	return n;
}

static enum aorta_status chart_absolute(struct ctx *c)
{
	const struct report *r = c->r;
	int *ids = xcalloc((size_t)r->ncand + 1, sizeof(int)), n = cmp_sets(r, ids);
	const char *cats[NABS];
	double *vals = xcalloc((size_t)n * NABS, sizeof(double));
	struct plot_series *se = xcalloc((size_t)n, sizeof(*se));
	for (size_t i = 0; i < NABS; i++)
		cats[i] = REP_FIGS[ABS_FIGS[i]].label;
	for (int q = 0; q < n; q++) {
		const struct rep_dataset *d = &r->ds[ids[q]];
		for (size_t i = 0; i < NABS; i++)
			vals[(size_t)q * NABS + i] = d->kept ? d->stat[ABS_FIGS[i]].mean : NAN;
		se[q] = (struct plot_series){ d->label, PLOT_PALETTE[q % 8], NULL, &vals[(size_t)q * NABS], NULL, NULL, NABS, 0, 0, 0 };
	}
	struct plot_panel p = { .kind = PK_BARS, .ylabel = "mean per step (ms)", .y_from_zero = 1, .series = se,
				.nseries = (size_t)n, .cats = cats, .ncats = NABS };
	struct plot_chart ch = { "Absolute time per step, side by side", 1100, 520, 1, &p, 1,
				 "mean over every kept step of every rank" };
	enum aorta_status st = emit(c, &ch, "compare_absolute", "compare",
				    xasprintf("Mean time per step of each figure, reference and candidates side by side."));
	free(ids);
	free(vals);
	free(se);
	return st;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* Ranks are categories, not a continuous axis: each figure is a panel of
 * bars, one category per rank found in any dataset (in rank order), a bar
 * per dataset; a dataset without that rank leaves a gap. */
static enum aorta_status chart_by_rank(struct ctx *c)
{
	static const int figs[6] = { RF_STEP, RF_COMPUTE, RF_OVERLAP, RF_EXPOSED, RF_COMM, RF_IDLE };
	const struct report *r = c->r;
	int *ids = xcalloc((size_t)r->ncand + 1, sizeof(int)), n = cmp_sets(r, ids);
	size_t nall = 0, nk = 0;
	for (int q = 0; q < n; q++)
		nall += r->ds[ids[q]].nranks;
	int *ranks = xcalloc(nall + 1, sizeof(int));
	for (int q = 0; q < n; q++)
		for (size_t i = 0; i < r->ds[ids[q]].nranks; i++)
			ranks[nk++] = r->ds[ids[q]].ranks[i].rank;
	qsort(ranks, nk, sizeof(int), cmp_int);
	size_t ncat = 0;
	for (size_t i = 0; i < nk; i++)
		if (!ncat || ranks[ncat - 1] != ranks[i])
			ranks[ncat++] = ranks[i];
	char (*catbuf)[16] = xcalloc(ncat + 1, 16);
	const char **cats = xcalloc(ncat + 1, sizeof(char *));
	for (size_t i = 0; i < ncat; i++) {
		snprintf(catbuf[i], 16, "%d", ranks[i]);
		cats[i] = catbuf[i];
	}
	struct plot_panel pn[6];
	struct plot_series *se = xcalloc((size_t)(6 * n), sizeof(*se));
	double *ys = xcalloc((size_t)(6 * n) * (ncat + 1), sizeof(double));
	char titles[6][96];
	for (int f = 0; f < 6; f++) {
		for (int q = 0; q < n; q++) {
			const struct rep_dataset *d = &r->ds[ids[q]];
			double *y = &ys[(size_t)(f * n + q) * (ncat + 1)];
			for (size_t k = 0; k < ncat; k++) {
				const struct rep_rank *rk = rep_find_rank(d, ranks[k]);
				y[k] = rk ? rk->mean[figs[f]] : NAN;
			}
			se[f * n + q] = (struct plot_series){ f == 0 ? d->label : NULL, PLOT_PALETTE[q % 8], NULL, y, NULL,
							      NULL, ncat, 0, 0, 0 };
		}
		snprintf(titles[f], sizeof(titles[f]), "%s by rank", REP_FIGS[figs[f]].label);
		pn[f] = (struct plot_panel){ .kind = PK_BARS, .title = titles[f], .xlabel = "rank",
					     .ylabel = "mean per step (ms)", .y_from_zero = 1, .series = &se[f * n],
					     .nseries = (size_t)n, .cats = cats, .ncats = ncat,
					     .empty_text = "no ranks" };
	}
	struct plot_chart ch = { "Each figure by rank", 1200, 760, 3, pn, 6, "mean per step of each rank, warm-up left out" };
	enum aorta_status st = emit(c, &ch, "compare_by_rank", "compare",
				    xasprintf("Step, compute, overlap, exposed communication, communication and idle time "
					    "of each rank, a bar per dataset."));
	free(ys);
	free(se);
	free(cats);
	free(catbuf);
	free(ranks);
	free(ids);
	return st;
}

static enum aorta_status chart_heatmap(struct ctx *c, const struct rep_dataset *b, const struct rep_dataset *d)
{
	static const int figs[] = { RF_STEP, RF_COMPUTE, RF_OVERLAP, RF_COMM, RF_EXPOSED, RF_AUX, RF_IDLE, RF__COUNT };
	const size_t nf = sizeof(figs) / sizeof(figs[0]);
	const char *cats[sizeof(figs) / sizeof(figs[0])];
	for (size_t k = 0; k < nf; k++)
		cats[k] = rep_cmp_label(figs[k]);
	const char **rows = xcalloc(d->nranks + 1, sizeof(char *));
	char (*rl)[32] = xcalloc(d->nranks + 1, 32);
	double *cells = xcalloc((d->nranks + 1) * nf, sizeof(double));
	double *tone = xcalloc((d->nranks + 1) * nf, sizeof(double));
	size_t nr = 0;
	for (size_t i = 0; i < d->nranks; i++) {
		const struct rep_rank *rc = &d->ranks[i], *rb = rep_find_rank(b, rc->rank);
		snprintf(rl[nr], 32, "rank %d", rc->rank);
		rows[nr] = rl[nr];
		for (size_t k = 0; k < nf; k++) {
			double p = rb ? change_pct(rep_cmp_rank_value(rb, figs[k]), rep_cmp_rank_value(rc, figs[k])) : NAN;
			cells[nr * nf + k] = isfinite(p) ? p : NAN;
			tone[nr * nf + k] = isfinite(p) ? -(double)rep_cmp_dir(figs[k]) * p : 0;
		}
		nr++;
	}
	char title[256], name[512], safe[REPORT_STEM_MAX + 1];
	snprintf(title, sizeof(title), "Change by rank and figure: %s against %s", d->label, b->label);
	struct plot_panel p = { .kind = PK_HEATMAP, .xlabel = "figure (change against the reference, %)", .cats = cats,
				.ncats = nf, .rows = rows, .nrows = nr, .cells = cells, .tone = tone, .vmax = 0,
				.cell_unit = "%", .empty_text = "no ranks in common" };
	int h = 120 + (int)nr * 26;
	struct plot_chart ch = { title, 1100, h < 360 ? 360 : h > 4000 ? 4000 : h, 1, &p, 1,
				 "green: better, red: worse, by each figure's direction; compute and aux are neutral" };
	report_label_stem(safe, sizeof(safe), d->label);
	snprintf(name, sizeof(name), "compare_heatmap_%s", safe);
	enum aorta_status st = emit(c, &ch, name, "compare",
				    xasprintf("Rank x figure heatmap of the change of %s against %s.", d->label, b->label));
	free(rows);
	free(rl);
	free(cells);
	free(tone);
	return st;
}

struct coll_order {
	size_t k, type; /* index into colls; index of the type's first collective */
	double bytes;
};

static int cmp_coll_order(const void *a, const void *b)
{
	const struct coll_order *x = a, *y = b;
	if (x->type != y->type)
		return (x->type > y->type) - (x->type < y->type);
	if (x->bytes != y->bytes)
		return (x->bytes > y->bytes) - (x->bytes < y->bytes);
	return (x->k > y->k) - (x->k < y->k);
}

static enum aorta_status chart_collectives(struct ctx *c)
{
	const struct report *r = c->r;
	size_t ns = 0, cap = 0;
	struct plot_series *se[2] = { NULL, NULL };
	size_t cap2 = 0;
	double **bufs = NULL;
	size_t nb = 0, bcap = 0;
	char **names = NULL;
	size_t nn = 0, ncap = 0;
	/* bus bandwidth from the transfer time of the matched calls (busbw_gbps,
	 * the join's); where no run has one (no shared clock), the kernel-time
	 * figure under its own name (busbw_kernel_gbps) */
	int kernel_bw = 1;
	for (size_t i = 0; i < r->nds; i++)
		for (size_t k = 0; k < r->ds[i].ncolls; k++)
			if (isfinite(coll_bw_busbw_gbps(&r->ds[i].colls[k].bw)))
				kernel_bw = 0;
	for (size_t i = 0; i < r->nds; i++) {
		const struct rep_dataset *d = &r->ds[i];
		/* one series per type (types in order of first appearance), its
		 * points in increasing message size, whatever order colls has */
		struct coll_order *o = xcalloc(d->ncolls + 1, sizeof(*o));
		for (size_t k = 0; k < d->ncolls; k++) {
			o[k].k = k;
			o[k].type = k;
			for (size_t j = 0; j < k; j++)
				if (!strcmp(d->colls[j].type, d->colls[k].type)) {
					o[k].type = o[j].type;
					break;
				}
			o[k].bytes = d->colls[k].bytes;
		}
		qsort(o, d->ncolls, sizeof(*o), cmp_coll_order);
		for (size_t a = 0; a < d->ncolls;) {
			size_t z = a;
			while (z < d->ncolls && o[z].type == o[a].type)
				z++;
			double *x = xcalloc(z - a, sizeof(double)), *lat = xcalloc(z - a, sizeof(double)),
			       *bw = xcalloc(z - a, sizeof(double));
			for (size_t q = a; q < z; q++) {
				size_t k = o[q].k;
				x[q - a] = d->colls[k].bytes;
				lat[q - a] = d->colls[k].count ? d->colls[k].total_ms / d->colls[k].count : NAN;
				bw[q - a] = kernel_bw ? coll_bw_busbw_kernel_gbps(&d->colls[k].bw)
						      : coll_bw_busbw_gbps(&d->colls[k].bw);
			}
			GROW(bufs, bcap, nb + 3);
			bufs[nb++] = x, bufs[nb++] = lat, bufs[nb++] = bw;
			GROW(names, ncap, nn + 1);
			names[nn++] = xasprintf("%s %s", d->label, d->colls[o[a].k].type);
			size_t c1 = cap;
			GROW(se[0], c1, ns + 1);
			GROW(se[1], cap2, ns + 1);
			cap = c1;
			uint32_t col = PLOT_PALETTE[ns % 8];
			se[0][ns] = (struct plot_series){ names[nn - 1], col, x, lat, NULL, NULL, z - a, 2, 0, 1 };
			se[1][ns] = (struct plot_series){ names[nn - 1], col, x, bw, NULL, NULL, z - a, 2, 0, 1 };
			ns++;
			a = z;
		}
		free(o);
	}
	enum aorta_status st = AORTA_OK;
	if (ns) {
		struct plot_panel pn[2] = {
			{ .kind = PK_LINE, .title = "latency per call", .xlabel = "message size (bytes, log scale)",
			  .ylabel = "latency (ms)", .logx = 1, .x_bytes = 1, .y_from_zero = 1, .series = se[0], .nseries = ns },
			{ .kind = PK_LINE, .title = kernel_bw ? "bus bandwidth over kernel time (busbw_kernel_gbps)"
							       : "bus bandwidth (busbw_gbps)",
			  .xlabel = "message size (bytes, log scale)",
			  .ylabel = "bus bandwidth (GB/s)", .logx = 1, .x_bytes = 1, .y_from_zero = 1, .series = se[1],
			  .nseries = ns },
		};
		struct plot_chart ch = { "Collectives by message size", 1200, 520, 2, pn, 2,
					 kernel_bw ? "latency: mean per call over ranks; bus bandwidth (nccl-tests factor) over "
						     "the whole kernel time, waiting included: no call was matched across ranks"
						   : "latency: mean per call over ranks; bus bandwidth as nccl-tests defines it, "
						     "from the transfer time (last arrival to end) of the calls matched across ranks" };
		st = emit(c, &ch, "collectives", "collectives",
			  xasprintf("Per-collective latency and bus bandwidth by message size: %s.",
				    kernel_bw ? "bus bandwidth over the whole kernel time, waiting included "
						"(busbw_kernel_gbps in summary.json), as no call was matched across ranks"
					      : "bus bandwidth (busbw_gbps in summary.json, as analyze) from the transfer time "
						"(last arrival to end) of the calls matched across ranks"));
	}
	for (size_t i = 0; i < nb; i++)
		free(bufs[i]);
	for (size_t i = 0; i < nn; i++)
		free(names[i]);
	free(bufs);
	free(names);
	free(se[0]);
	free(se[1]);
	return st;
}

/* ---- what-if ------------------------------------------------------------------- */

/* The gain per step of each fix of one run's what-if (overlap/whatif.c),
 * the largest first, at most 12 bars. */
static enum aorta_status chart_whatif(struct ctx *c, const struct rep_dataset *d)
{
	const struct whatif *w = d->a ? d->a->whatif : NULL;
	if (!w || !w->ok)
		return AORTA_OK;
	size_t n = w->nby_rank + w->nby_group + w->nby_op, m = 0;
	const struct whatif_fix **f = xcalloc(n + 1, sizeof(*f));
	for (size_t q = 0; q < w->nby_rank; q++)
		f[m++] = &w->by_rank[q];
	for (size_t q = 0; q < w->nby_group; q++)
		f[m++] = &w->by_group[q];
	for (size_t q = 0; q < w->nby_op; q++)
		f[m++] = &w->by_op[q];
	for (size_t p = 0; p < m; p++) /* largest gain first (stable) */
		for (size_t q = m; q-- > p + 1;)
			if (f[q]->gain_ms > f[q - 1]->gain_ms) {
				const struct whatif_fix *t = f[q];
				f[q] = f[q - 1];
				f[q - 1] = t;
			}
	if (m > 12)
		m = 12;
	const char **cats = xcalloc(m + 1, sizeof(*cats));
	double *y = xcalloc(m + 1, sizeof(*y));
	for (size_t q = 0; q < m; q++) {
		cats[q] = f[q]->what;
		/* to the microsecond, no -0; a gain within the noise floor is nothing, never a loss */
		y[q] = whatif_nothing(w, f[q]->gain_ms) ? 0.0 : round(f[q]->gain_ms * 1e3) / 1e3 + 0.0;
	}
	struct plot_series se = { "gain per step if fixed", PLOT_PALETTE[0], NULL, y, NULL, NULL, m, 0, 0, 0 };
	struct plot_panel p = { .kind = PK_BARS, .xlabel = "fix", .ylabel = "gain (ms per step)", .y_from_zero = 1,
				.series = &se, .nseries = 1, .cats = cats, .ncats = m, .empty_text = "no fix" };
	char title[256], note[256], name[512], safe[256];
	snprintf(title, sizeof(title), "What-if: the step if fixed (%s)", d->label);
	snprintf(note, sizeof(note), "replayed step %.2f ms, ideal %.2f ms, slowdown %.3f; gains within the noise floor "
		 "(%.2f ms) are drawn as 0 (docs/metrics.md \"What-if\")", w->replay_step_ms, w->ideal_step_ms, w->slowdown,
		 whatif_material_ms(w));
	struct plot_chart ch = { title, 1000, 480, 1, &p, 1, note };
	report_label_stem(safe, sizeof(safe), d->label);
	snprintf(name, sizeof(name), "%s_whatif", safe);
	enum aorta_status st = emit(c, &ch, name, "whatif",
				    xasprintf("How much faster the step would be, %s, if one rank, group or operation "
					      "type were fixed: %s.", d->label, w->verdict ? w->verdict : ""));
	free(cats);
	free(y);
	free(f);
	return st;
}

enum aorta_status report_draw(const struct report *r, struct plot_lib *lib, const char *dir,
			      struct rep_images *img, struct aorta_error *e)
{
	struct ctx c = { r, lib, dir, img, e };
	enum aorta_status st = AORTA_OK;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (size_t i = 0; i < r->nds && !st; i++) {
		st = chart_timeline(&c, &r->ds[i]);
		if (!st && r->ds[i].has_ranges)
			st = chart_gantt(&c, &r->ds[i]);
		if (!st)
			st = chart_pair(&c, &r->ds[i]);
		if (!st)
			st = chart_whatif(&c, &r->ds[i]);
	}
	if (!st && r->ref >= 0 && r->ncand > 0) {
		st = chart_change(&c);
		if (!st)
			st = chart_absolute(&c);
		if (!st)
			st = chart_by_rank(&c);
		for (int q = 0; q < r->ncand && !st; q++)
			st = chart_heatmap(&c, &r->ds[r->ref], &r->ds[r->cand[q]]);
	}
	if (!st)
		st = chart_collectives(&c);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	img->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	return st;
}
