/*
 * report.c - `aorta sweep report`: one self-contained index.html from one or
 * more sweep folders (sweep_load), as `aorta report`'s page is: inline CSS,
 * no script, no network, every chart a base64 PNG.
 *
 * Per sweep: the best cell and why, the confound check, the ranking table
 * (median step with its trial range, verdict against the baseline, noisy
 * and failed cells flagged, exposed communication, overlap, waiting vs
 * transfer, late rank, diagnosis, the sweep's overhead), the environments
 * side by side per configuration (better / worse / similar by the same
 * rule), failed trials with their error, and the environment snapshots.
 * Charts (drawn by libaorta-plot.so, report_plot.h; without it the page has
 * the tables only and says why):
 *  - s<i>_rank: median step per cell, green better / red worse / grey
 *    similar than the baseline (blue);
 *  - s<i>_heat_step, s<i>_heat_overlap, s<i>_heat_exposed: heatmaps over two
 *    axes (the recipe's report.rows/cols, else the first two axes with two
 *    or more values, else one axis against the environments), a panel per
 *    combination of the other axes (at most 8), coloured by the change
 *    against the baseline in the direction that is better;
 *  - s<i>_busbw: NCCL bus bandwidth per cell for each collective at its
 *    largest message size;
 *  - s<i>_gantt: the streams of one step of the baseline and of the best
 *    cell (else the fastest other cell): the median trial is analysed again
 *    with its timeline kept, and rank 0's kept step nearest that trial's
 *    step time drawn, a row per stream (at most 12).
 */
#include "sweep/report.h"
#include "sweep/results.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/output.h"
#include "pipeline/pipeline.h"
#include "report/html.h"
#include "report/report_plot.h"
#include "timeline/timeline.h"

#ifndef AORTA_VERSION
#define AORTA_VERSION "0.1.0"
#endif

static const char CSS[] =
	"body{font-family:'DejaVu Sans',Arial,sans-serif;margin:24px auto;max-width:1240px;color:#111;"
	"background:#fff;line-height:1.45}h1{font-size:26px;margin:0 0 4px}h2{font-size:20px;margin-top:32px;"
	"border-bottom:2px solid #0072B2;padding-bottom:3px}h3{font-size:16px}table{border-collapse:collapse;"
	"margin:8px 0;font-size:13px}td,th{border:1px solid #bbb;padding:3px 6px;text-align:right;vertical-align:top}"
	"th{background:#eef3f8}td.l,th.l{text-align:left}.better{background:#cdeee3}.worse{background:#f6d5c2}"
	".similar{background:#eee}.baseline{background:#d6e6f5}.noisy{background:#fff7d6}.failed{background:#f6d5c2}"
	".best{background:#cdeee3;border:1px solid #009E73;padding:8px 12px;margin:12px 0;font-size:15px}"
	".note{background:#fff7d6;border:1px solid #E69F00;padding:8px 12px;margin:12px 0}figure{margin:18px 0}"
	"figure img{max-width:100%;border:1px solid #ddd}figcaption{font-size:13px;color:#444}pre{font-size:11px;"
	"text-align:left;margin:0;max-height:320px;overflow:auto}.meta{color:#555;font-size:13px}";


static void num(FILE *f, double v, int dec)
{
	if (isfinite(v))
		fprintf(f, "%.*f", dec, v);
	else
		fputs("&ndash;", f);
}

/* ---- charts ------------------------------------------------------------------------ */

struct chart_out {
	char name[64];
	char title[256];
	char caption[768];
};

struct rctx {
	struct plot_lib lib;
	int have_lib;
	char why[1024];
	const char *dir;
	struct chart_out *ch;
	size_t nch;
	struct aorta_error *e;
};

static enum aorta_status draw(struct rctx *x, const struct plot_chart *c, const char *name, const char *caption)
{
	char png[4300], err[1024];
	snprintf(png, sizeof(png), "%s/%s.png", x->dir, name);
	if (x->lib.render(c, png, NULL, err, sizeof(err)) != 0)
		return aorta_fail(x->e, AORTA_EINTERNAL, png, 0, -1, "cannot draw the chart: %s", err);
	x->ch = xrealloc(x->ch, (x->nch + 1) * sizeof(*x->ch));
	struct chart_out *o = &x->ch[x->nch++];
	snprintf(o->name, sizeof(o->name), "%s", name);
	snprintf(o->title, sizeof(o->title), "%s", c->title ? c->title : name);
	snprintf(o->caption, sizeof(o->caption), "%s", caption);
	return AORTA_OK;
}

static uint32_t verdict_rgb(enum verdict v)
{
	return v == V_BETTER ? OI_GREEN : v == V_WORSE ? OI_RED : v == V_BASELINE ? OI_BLUE : OI_GREY;
}

static enum aorta_status chart_rank(struct rctx *x, const struct sweep *s, int si)
{
	const struct recipe *r = &s->r;
	size_t n = 0;
	const char **cats = xcalloc(r->ncells + 1, sizeof(char *));
	char (*lab)[160] = xcalloc(r->ncells + 1, 160);
	double *y = xcalloc(r->ncells + 1, sizeof(double));
	uint32_t *rgb = xcalloc(r->ncells + 1, sizeof(uint32_t));
	for (size_t i = 0; i < r->ncells; i++) {
		size_t c = s->order[i];
		if (!s->st[c].nok)
			continue;
		snprintf(lab[n], 160, "%s", r->cells[c].id);
		cats[n] = lab[n];
		y[n] = s->st[c].median;
		rgb[n] = verdict_rgb(s->st[c].verdict);
		n++;
	}
	struct plot_series se = { .name = NULL, .rgb = OI_GREY, .y = y, .bar_rgb = rgb, .n = n };
	struct plot_panel p = { .kind = PK_BARS, .ylabel = "median step time over trials (ms)",
				.xlabel = "cell, fastest first (settings in the table)", .series = &se,
				.nseries = 1, .cats = cats, .ncats = n, .y_from_zero = 1,
				.empty_text = "no cell has a successful trial" };
	char title[300], name[64];
	snprintf(title, sizeof(title), "%.200s: cells by median step time", r->name);
	struct plot_chart c = { title, 1100, 440, 1, &p, 1,
				"blue: baseline; green: better, red: worse beyond the noise between trials; grey: similar" };
	snprintf(name, sizeof(name), "s%d_rank", si);
	enum aorta_status st = draw(x, &c, name, "Median step time per cell (fastest first), coloured by the verdict "
					      "against the baseline.");
	free(cats);
	free(lab);
	free(y);
	free(rgb);
	return st;
}

/* The two heatmap axes: indices into r->axes, or -1. */
static void heat_axes(const struct recipe *r, long *ra, long *ca)
{
	*ra = *ca = -1;
	for (size_t i = 0; i < r->naxes; i++) {
		if (r->report_rows && !strcmp(r->axes[i].name, r->report_rows))
			*ra = (long)i;
		if (r->report_cols && !strcmp(r->axes[i].name, r->report_cols))
			*ca = (long)i;
	}
	for (int pass = 0; pass < 2; pass++) /* axes first, the environments last */
		for (size_t i = 0; i < r->naxes; i++) {
			if (r->axes[i].nvalues < 2 || (long)i == *ra || (long)i == *ca)
				continue;
			if ((r->axes[i].kind == AX_ENVIRONMENT) != pass)
				continue;
			if (*ra < 0)
				*ra = (long)i;
			else if (*ca < 0)
				*ca = (long)i;
		}
}

enum hfig { H_STEP, H_OVERLAP, H_EXPOSED };

static enum aorta_status chart_heat(struct rctx *x, const struct sweep *s, int si, enum hfig fig)
{
	const struct recipe *r = &s->r;
	long ra, ca;
	heat_axes(r, &ra, &ca);
	if (ra < 0)
		return AORTA_OK;
	const struct sweep_axis *ar = &r->axes[ra], *ac = ca >= 0 ? &r->axes[ca] : NULL;
	size_t nr = ar->nvalues, nc = ac ? ac->nvalues : 1;
	/* slices: the distinct settings of the other axes, in cell order */
	size_t *slice_of = xcalloc(r->ncells, sizeof(size_t)), nsl = 0, *rep = xcalloc(r->ncells, sizeof(size_t));
	for (size_t c = 0; c < r->ncells; c++) {
		size_t k;
		for (k = 0; k < nsl; k++) {
			int same = 1;
			for (size_t i = 0; i < r->naxes && same; i++)
				same = (long)i == ra || (long)i == ca || r->cells[rep[k]].vi[i] == r->cells[c].vi[i];
			if (same)
				break;
		}
		if (k == nsl)
			rep[nsl++] = c;
		slice_of[c] = k;
	}
	size_t np = nsl > 8 ? 8 : nsl;
	struct plot_panel *pn = xcalloc(np, sizeof(*pn));
	double **cells = xcalloc(np, sizeof(double *)), **tone = xcalloc(np, sizeof(double *));
	char (*ptitle)[200] = xcalloc(np, 200);
	const struct cell_stats *b = &s->st[r->baseline];
	static const char *const fname[] = { "median step time", "overlap (share of communication under compute)",
					     "exposed communication per step" };
	static const char *const unit[] = { " ms", " %", " ms" };
	for (size_t p = 0; p < np; p++) {
		cells[p] = xmalloc(nr * nc * sizeof(double));
		tone[p] = xcalloc(nr * nc, sizeof(double));
		for (size_t i = 0; i < nr * nc; i++)
			cells[p][i] = NAN;
		size_t o = 0;
		ptitle[p][0] = '\0';
		for (size_t i = 0; i < r->naxes; i++) {
			if ((long)i == ra || (long)i == ca || r->axes[i].nvalues < 2)
				continue;
			o += (size_t)snprintf(ptitle[p] + o, o < 200 ? 200 - o : 0, "%s%s=%s", o ? " " : "", r->axes[i].name,
					      r->axes[i].values[r->cells[rep[p]].vi[i]]);
			if (o >= 200)
				o = 199;
		}
	}
	for (size_t c = 0; c < r->ncells; c++) {
		size_t p = slice_of[c];
		if (p >= np || !s->st[c].nok)
			continue;
		size_t i = r->cells[c].vi[ra] * nc + (ac ? r->cells[c].vi[ca] : 0);
		const struct cell_stats *st = &s->st[c];
		double v = fig == H_STEP ? st->median : fig == H_OVERLAP ? st->overlap_pct : st->exposed_ms;
		double bv = fig == H_STEP ? b->median : fig == H_OVERLAP ? b->overlap_pct : b->exposed_ms;
		cells[p][i] = v;
		if (fig == H_OVERLAP)
			tone[p][i] = isfinite(v) && isfinite(bv) ? v - bv : 0;
		else if (fig == H_STEP)
			tone[p][i] = st->verdict == V_BETTER || st->verdict == V_WORSE ? -100.0 * (v - bv) / bv : 0;
		else
			tone[p][i] = isfinite(v) && isfinite(bv) && bv > 0 ? -100.0 * (v - bv) / bv : 0;
	}
	const char **rows = xcalloc(nr, sizeof(char *)), **cols = xcalloc(nc, sizeof(char *));
	for (size_t i = 0; i < nr; i++)
		rows[i] = ar->values[i];
	for (size_t i = 0; i < nc; i++)
		cols[i] = ac ? ac->values[i] : "";
	char xl[420];
	if (ac)
		snprintf(xl, sizeof(xl), "columns: %s, rows: %s", ac->name, ar->name);
	else
		snprintf(xl, sizeof(xl), "rows: %s", ar->name);
	for (size_t p = 0; p < np; p++)
		pn[p] = (struct plot_panel){ .kind = PK_HEATMAP, .title = ptitle[p][0] ? ptitle[p] : NULL, .xlabel = xl,
					     .ylabel = NULL, .cats = cols, .ncats = nc, .rows = rows, .nrows = nr,
					     .cells = cells[p], .tone = tone[p], .vmax = 0, .cell_unit = unit[fig],
					     .empty_text = "no data" };
	char title[300], name[64], cap[700];
	snprintf(title, sizeof(title), "%.150s: %s by %s%s%s", r->name, fname[fig], ar->name, ac ? " and " : "",
		 ac ? ac->name : "");
	int cols_n = np < 2 ? 1 : 2;
	int h = 140 + (int)((np + (size_t)cols_n - 1) / (size_t)cols_n) * (int)(110 + nr * 34);
	struct plot_chart c = { title, 1100, h > 4000 ? 4000 : h, cols_n, pn, np,
				fig == H_STEP ? "green: better than the baseline beyond the noise, red: worse; uncoloured: similar"
					      : "green: better than the baseline's value, red: worse (no noise rule on this figure)" };
	static const char *const suffix[] = { "step", "overlap", "exposed" };
	snprintf(name, sizeof(name), "s%d_heat_%s", si, suffix[fig]);
	snprintf(cap, sizeof(cap), "Heatmap of the %s per cell over %s x %s%s.", fname[fig], ar->name,
		 ac ? ac->name : "(one column)", nsl > np ? " (the first 8 combinations of the other axes)" : "");
	enum aorta_status st = draw(x, &c, name, cap);
	for (size_t p = 0; p < np; p++) {
		free(cells[p]);
		free(tone[p]);
	}
	free(cells);
	free(tone);
	free(pn);
	free(ptitle);
	free(rows);
	free(cols);
	free(slice_of);
	free(rep);
	return st;
}

static enum aorta_status chart_busbw(struct rctx *x, const struct sweep *s, int si)
{
	const struct recipe *r = &s->r;
	/* each collective type at its largest size over the cells */
	char types[8][24];
	unsigned long long big[8];
	size_t nt = 0;
	for (size_t c = 0; c < r->ncells; c++)
		for (size_t k = 0; k < s->st[c].ncolls; k++) {
			const struct trial_coll *tc = &s->st[c].colls[k];
			size_t j;
			for (j = 0; j < nt && strcmp(types[j], tc->type); j++)
				;
			if (j == nt) {
				if (nt == 8)
					continue;
				snprintf(types[nt], 24, "%s", tc->type);
				big[nt++] = 0;
			}
			if (tc->bytes > big[j])
				big[j] = tc->bytes;
		}
	if (!nt)
		return AORTA_OK;
	const char **cats = xcalloc(r->ncells, sizeof(char *));
	double *y = xcalloc(nt * r->ncells, sizeof(double));
	struct plot_series se[8];
	char names[8][80];
	for (size_t j = 0; j < nt; j++) {
		for (size_t c = 0; c < r->ncells; c++) {
			y[j * r->ncells + c] = NAN;
			for (size_t k = 0; k < s->st[c].ncolls; k++)
				if (!strcmp(s->st[c].colls[k].type, types[j]) && s->st[c].colls[k].bytes == big[j])
					y[j * r->ncells + c] = s->st[c].colls[k].busbw_gbps;
		}
		snprintf(names[j], 80, "%s, %.1f MiB", types[j], (double)big[j] / 1048576.0);
		se[j] = (struct plot_series){ .name = names[j], .rgb = PLOT_PALETTE[j % 8], .y = y + j * r->ncells,
					      .n = r->ncells };
	}
	for (size_t c = 0; c < r->ncells; c++)
		cats[c] = r->cells[c].id;
	struct plot_panel p = { .kind = PK_BARS, .ylabel = "bus bandwidth (GB/s)", .xlabel = "cell", .y_from_zero = 1,
				.series = se, .nseries = nt, .cats = cats, .ncats = r->ncells };
	char title[300], name[64];
	snprintf(title, sizeof(title), "%.200s: NCCL bus bandwidth per cell", r->name);
	struct plot_chart c = { title, 1100, 460, 1, &p, 1,
				"bytes x calls / time in the kernel (waiting included) x the nccl-tests factor; median over trials" };
	snprintf(name, sizeof(name), "s%d_busbw", si);
	enum aorta_status st = draw(x, &c, name, "Bus bandwidth of each collective at its largest message size, per cell.");
	free(cats);
	free(y);
	return st;
}


/* ---- Gantt: the baseline against the best (or the fastest other) cell ---------------- */

/* The ok trial of cell c whose step time is the cell's median (or nearest). */
static int median_trial(const struct sweep *s, size_t c)
{
	int best = -1;
	double bd = INFINITY;
	for (int k = 0; k < s->r.trials; k++) {
		const struct trial *t = &s->t[c][k];
		if (t->status != TR_OK)
			continue;
		double d = fabs(t->step_ms - s->st[c].median);
		if (d < bd)
			bd = d, best = k;
	}
	return best;
}

struct gpanel {
	struct plot_rect *rc;
	size_t n;
	char title[300];
	const char **rows;
	char (*rowbuf)[32];
	size_t nrows;
	double len_ms;
};

/* Rank 0's kept step nearest the trial's step time, its device spans by stream. */
static int gantt_panel(const struct sweep *s, size_t c, int k, struct gpanel *g)
{
	char out[4400];
	snprintf(out, sizeof(out), "%s/cells/%s/t%d/out", s->dir, s->r.cells[c].id, k + 1);
	char tn[16];
	snprintf(tn, sizeof(tn), "%d", k + 1);
	char *tp = recipe_subst(&s->r, &s->r.cells[c], s->r.traces, out, tn);
	struct analysis a;
	struct aorta_error e = { 0 };
	struct analysis_opts ao = ANALYSIS_OPTS_INIT;
	ao.skip_steps = s->r.skip_steps;
	ao.keep_traces = 1;
	memset(&a, 0, sizeof(a));
	memset(g, 0, sizeof(*g));
	int q = aorta_quiet;
	aorta_quiet = 1;
	enum aorta_status st = analysis_run(&tp, 1, &ao, &a, &e);
	aorta_quiet = q;
	free(tp);
	if (st != AORTA_OK || !a.n || !a.r[0].t) {
		if (st == AORTA_OK)
			analysis_free(&a);
		return -1;
	}
	const struct rank_result *r = &a.r[0];
	const struct trace *t = r->t;
	int64_t lo = 0, hi = 0;
	double target = s->t[c][k].step_ms * 1e6, bd = INFINITY;
	size_t k0 = (size_t)(s->r.skip_steps > 0 ? s->r.skip_steps : 0);
	for (size_t i = k0; i < r->nsteps; i++) {
		double d = fabs((double)(r->steps[i].end_ns - r->steps[i].start_ns) - target);
		if (d < bd)
			bd = d, lo = r->steps[i].start_ns, hi = r->steps[i].end_ns;
	}
	if (!isfinite(bd) && t->n) { /* no steps: the whole trace */
		lo = INT64_MAX;
		for (size_t i = 0; i < t->n; i++) {
			lo = t->start_ns[i] < lo ? t->start_ns[i] : lo;
			hi = t->end_ns[i] > hi ? t->end_ns[i] : hi;
		}
	}
	int32_t ids[12];
	size_t cap = 0;
	g->len_ms = (double)(hi - lo) * 1e-6;
	GROW(g->rc, cap, 1); /* rc[0]: the whole step, near-invisible, set to a common length later */
	g->rc[g->n++] = (struct plot_rect){ 0, g->len_ms, 0, 0xFFFFFFu, 0.01, 0 };
	for (size_t i = 0; i < t->n; i++) {
		if (t->end_ns[i] <= lo || t->start_ns[i] >= hi)
			continue;
		size_t row;
		for (row = 0; row < g->nrows && ids[row] != t->stream[i]; row++)
			;
		if (row == g->nrows) {
			if (g->nrows == 12)
				continue;
			ids[g->nrows++] = t->stream[i];
		}
		enum span_class cl = kind_class((enum span_kind)t->kind[i]);
		uint32_t col = cl == C_COMPUTE ? OI_BLUE : cl == C_COMM ? OI_ORANGE : cl == C_MEMCPY ? OI_SKY : OI_GREY;
		GROW(g->rc, cap, g->n + 1);
		int64_t a0 = t->start_ns[i] > lo ? t->start_ns[i] : lo, a1 = t->end_ns[i] < hi ? t->end_ns[i] : hi;
		g->rc[g->n++] = (struct plot_rect){ (double)(a0 - lo) * 1e-6, (double)(a1 - lo) * 1e-6, (int)row, col, 0, 0 };
	}
	g->rows = xcalloc(g->nrows + 1, sizeof(char *));
	g->rowbuf = xcalloc(g->nrows + 1, 32);
	for (size_t i = 0; i < g->nrows; i++) {
		snprintf(g->rowbuf[i], 32, "stream %d", ids[i]);
		g->rows[i] = g->rowbuf[i];
	}
	snprintf(g->title, sizeof(g->title), "%s (%.120s), trial %d, rank %d: a %.3f ms step", s->r.cells[c].id,
		 s->r.cells[c].label, k + 1, r->rank, (double)(hi - lo) * 1e-6);
	analysis_free(&a);
	return 0;
}

static enum aorta_status chart_gantt(struct rctx *x, const struct sweep *s, int si)
{
	const struct recipe *r = &s->r;
	size_t b = r->baseline, o = s->best;
	if (o == b) /* no better cell: the fastest other one */
		for (size_t i = 0; i < r->ncells; i++)
			if (s->order[i] != b && s->st[s->order[i]].nok) {
				o = s->order[i];
				break;
			}
	size_t cells[2] = { b, o };
	struct gpanel g[2];
	struct plot_panel pn[2];
	size_t np = 0;
	for (size_t q = 0; q < (o == b ? 1u : 2u); q++) {
		int k = median_trial(s, cells[q]);
		if (k < 0 || gantt_panel(s, cells[q], k, &g[np]) != 0)
			continue;
		pn[np] = (struct plot_panel){ .kind = PK_GANTT, .title = g[np].title, .xlabel = "time since step start (ms)",
					      .cats = g[np].rows, .ncats = g[np].nrows, .rects = g[np].rc, .nrects = g[np].n,
					      .empty_text = "no device spans in this step" };
		np++;
	}
	enum aorta_status st = AORTA_OK;
	double len = 0;
	for (size_t q = 0; q < np; q++)
		len = g[q].len_ms > len ? g[q].len_ms : len;
	for (size_t q = 0; q < np; q++) /* one time scale for both panels */
		g[q].rc[0].x1 = len;
	if (np) {
		static const struct plot_series leg[4] = {
			{ "compute", OI_BLUE, NULL, NULL, NULL, NULL, 0, 0, 0, 0 },
			{ "communication", OI_ORANGE, NULL, NULL, NULL, NULL, 0, 0, 0, 0 },
			{ "memcpy", OI_SKY, NULL, NULL, NULL, NULL, 0, 0, 0, 0 },
			{ "other", OI_GREY, NULL, NULL, NULL, NULL, 0, 0, 0, 0 },
		};
		pn[0].legend_only = leg;
		pn[0].nlegend = 4;
		size_t rows = g[0].nrows + (np > 1 ? g[1].nrows : 0);
		char title[300], name[64];
		snprintf(title, sizeof(title), "%.200s: streams of a median step, baseline against %s", r->name,
			 o == s->best && o != b ? "the best cell" : "the fastest other cell");
		struct plot_chart c = { title, 1100, (int)(140 + 40 * (rows + 3 * np)), 1, pn, np,
					"rank 0's device spans, a row per stream (at most 12), in its kept step nearest the trial's step time" };
		snprintf(name, sizeof(name), "s%d_gantt", si);
		st = draw(x, &c, name, "Gantt comparison: the streams of one median step of the baseline and of the best "
				       "(or fastest other) cell, from the trials' own traces.");
	}
	for (size_t q = 0; q < np; q++) {
		free(g[q].rc);
		free(g[q].rows);
		free(g[q].rowbuf);
	}
	return st;
}

/* ---- the page ------------------------------------------------------------------------- */

static const char *vclass(enum verdict v)
{
	return v == V_BETTER ? "better" : v == V_WORSE ? "worse" : v == V_SIMILAR ? "similar" : v == V_BASELINE ? "baseline"
															   : "failed";
}

/* The cells by median step time, a row each. */
static void ranking_table(FILE *f, const struct sweep *s)
{
	const struct recipe *r = &s->r;
	fputs("<h3>Cells by median step time</h3>\n<div style=\"overflow-x:auto\"><table><tr><th>rank</th><th class=l>cell</th><th class=l>settings</th>"
	      "<th>step ms<br>median</th><th>range ms</th><th>spread %</th><th>ok / done</th><th class=l>vs baseline</th><th>noise ms</th>"
	      "<th>exposed comm<br>ms/step</th><th>comm<br>ms/step</th><th>overlap %</th><th>waiting<br>ms/step</th>"
	      "<th>transfer<br>ms/step</th><th>GEMM<br>ms/step</th><th>late rank</th><th class=l>diagnosis</th>"
	      "<th>overhead %</th></tr>\n", f);
	for (size_t i = 0; i < r->ncells; i++) {
		size_t c = s->order[i];
		const struct cell_stats *st = &s->st[c];
		fprintf(f, "<tr%s><td>", st->noisy ? " class=noisy" : "");
		if (st->rank)
			fprintf(f, "%d", st->rank);
		else
			fputs("&ndash;", f);
		fprintf(f, "</td><td class=l>%s</td><td class=l>", r->cells[c].id);
		html_escape(f, r->cells[c].label);
		fputs("</td><td>", f);
		num(f, st->median, 3);
		fputs("</td><td>", f);
		if (st->nok) {
			num(f, st->min, 3);
			fputs("&ndash;", f);
			num(f, st->max, 3);
		} else {
			fputs("&ndash;", f);
		}
		fputs("</td><td>", f);
		num(f, st->spread_pct, 1);
		fprintf(f, "%s</td><td>%zu / %zu</td><td class=\"l %s\">%s", st->noisy ? " (noisy)" : "", st->nok,
			st->ntrials, vclass(st->verdict), verdict_name(st->verdict));
		if (st->verdict == V_BETTER || st->verdict == V_WORSE || st->verdict == V_SIMILAR)
			fprintf(f, " %+.1f%%", st->diff_pct);
		fputs("</td><td>", f);
		num(f, st->noise_ms, 3);
		fputs("</td><td>", f);
		num(f, st->exposed_ms, 3);
		fputs("</td><td>", f);
		num(f, st->comm_ms, 3);
		fputs("</td><td>", f);
		num(f, st->overlap_pct, 1);
		fputs("</td><td>", f);
		num(f, st->wait_ms, 3);
		fputs("</td><td>", f);
		num(f, st->transfer_ms, 3);
		fputs("</td><td>", f);
		num(f, st->gemm_ms, 3);
		fputs("</td><td>", f);
		if (st->late_rank >= 0)
			fprintf(f, "%d", st->late_rank);
		else
			fputs("&ndash;", f);
		fputs("</td><td class=l>", f);
		html_escape(f, st->diag[0] ? st->diag : "");
		fputs("</td><td>", f);
		num(f, st->overhead_pct, 2);
		fputs("</td></tr>\n", f);
	}
	fputs("</table></div>\n<p class=meta>Yellow rows are noisy: the trial range exceeds ", f);
	fprintf(f, "%.3g%% of the median, or some trials failed. GEMM throughput in TFLOP/s is not shown: the traces "
		   "give kernel times but not GEMM shapes.</p>\n", r->noisy_pct);
}

/* Cells that differ only in their environment, side by side. */
static void env_table(FILE *f, const struct sweep *s)
{
	const struct recipe *r = &s->r;
	if (s->ndiffs) {
		fputs("<h3>Environments side by side</h3>\n<table><tr><th class=l>configuration</th><th class=l>reference</th>"
		      "<th>step ms</th><th class=l>other</th><th>step ms</th><th>change</th><th class=l>verdict</th></tr>\n", f);
		for (size_t i = 0; i < s->ndiffs; i++) {
			const struct env_diff *d = &s->diffs[i];
			fputs("<tr><td class=l>", f);
			for (size_t k = 0; k < r->naxes; k++)
				if (r->axes[k].kind != AX_ENVIRONMENT) {
					html_escape(f, r->axes[k].name);
					fputc('=', f);
					html_escape(f, r->axes[k].values[r->cells[d->a].vi[k]]);
					fputc(' ', f);
				}
			fputs("</td><td class=l>", f);
			html_escape(f, recipe_cell_environment(r, &r->cells[d->a]));
			fprintf(f, " (%s)</td><td>", r->cells[d->a].id);
			num(f, s->st[d->a].median, 3);
			fputs("</td><td class=l>", f);
			html_escape(f, recipe_cell_environment(r, &r->cells[d->b]));
			fprintf(f, " (%s)</td><td>", r->cells[d->b].id);
			num(f, s->st[d->b].median, 3);
			fputs("</td><td>", f);
			if (isfinite(d->diff_pct))
				fprintf(f, "%+.1f%%", d->diff_pct);
			else
				fputs("&ndash;", f);
			fprintf(f, "</td><td class=\"l %s\">%s</td></tr>\n", vclass(d->v), verdict_name(d->v));
		}
		fputs("</table>\n", f);
	}
}

/* The trials that did not end well, with their logs. */
static void failed_table(FILE *f, const struct sweep *s)
{
	const struct recipe *r = &s->r;
	int any = 0;
	for (size_t c = 0; c < r->ncells; c++)
		for (int k = 0; k < r->trials; k++) {
			const struct trial *t = &s->t[c][k];
			if (t->status == TR_NONE || t->status == TR_OK)
				continue;
			if (!any++)
				fputs("<h3>Failed trials</h3>\n<table><tr><th class=l>cell</th><th>trial</th><th class=l>status</th>"
				      "<th class=l>detail</th><th class=l>log</th></tr>\n", f);
			fprintf(f, "<tr class=failed><td class=l>%s</td><td>%d</td><td class=l>%s</td><td class=l>", r->cells[c].id,
				t->trial, trial_status_name(t->status));
			html_escape(f, t->error);
			fprintf(f, "</td><td class=l>cells/%s/t%d/log.txt</td></tr>\n", r->cells[c].id, t->trial);
		}
	if (any)
		fputs("</table>\n", f);
}

/* The sweep's charts (inlined) and its environment snapshots. */
static void charts_and_envs(FILE *f, const struct rctx *x, const struct sweep *s, int si)
{
	const struct recipe *r = &s->r;
	/* charts of this sweep */
	char prefix[16];
	snprintf(prefix, sizeof(prefix), "s%d_", si);
	for (size_t i = 0; i < x->nch; i++) {
		if (strncmp(x->ch[i].name, prefix, strlen(prefix)))
			continue;
		char p[4400];
		snprintf(p, sizeof(p), "%s/%s.png", x->dir, x->ch[i].name);
		fputs("<figure><img alt=\"", f);
		html_escape(f, x->ch[i].title);
		fputs("\" src=\"data:image/png;base64,", f);
		html_base64_file(f, p);
		fputs("\"><figcaption>", f);
		html_escape(f, x->ch[i].caption);
		fputs("</figcaption></figure>\n", f);
	}
	/* environment snapshots */
	size_t ne = r->nenvs ? r->nenvs : 1;
	for (size_t i = 0; i < ne; i++) {
		const char *name = r->nenvs ? r->envs[i].name : "default";
		char p[4400];
		snprintf(p, sizeof(p), "%s/env/%s.json", s->dir, name);
		FILE *in = fopen(p, "r");
		fputs("<details><summary>environment snapshot: ", f);
		html_escape(f, name);
		fputs("</summary><pre>", f);
		if (in) {
			char buf[4096];
			size_t n;
			while ((n = fread(buf, 1, sizeof(buf) - 1, in)) > 0) {
				buf[n] = '\0';
				html_escape(f, buf);
			}
			fclose(in);
		} else {
			fputs("(not taken)", f);
		}
		fputs("</pre></details>\n", f);
	}
}

static void section(FILE *f, struct rctx *x, const struct sweep *s, int si)
{
	const struct recipe *r = &s->r;
	fprintf(f, "<h2>Sweep ");
	html_escape(f, r->name);
	fprintf(f, "</h2>\n<p class=meta>");
	html_escape(f, s->dir);
	fprintf(f, " &middot; %zu cells x %d trials &middot; baseline %s (", r->ncells, r->trials, r->cells[r->baseline].id);
	html_escape(f, r->cells[r->baseline].label);
	fprintf(f, ") &middot; first %d steps skipped &middot; noise = the larger trial range of the two cells, at least "
		   "%.3g%% of the baseline</p>\n", r->skip_steps, r->threshold_pct);
	fprintf(f, "<div class=best><b>Best: %s</b> &mdash; ", r->cells[s->best].id);
	html_escape(f, s->best_why);
	fputs("</div>\n", f);
	if (s->confound.status == TR_OK)
		fprintf(f, "<div class=%s>Confound check: the baseline re-run at the end measured %.3f ms (%+.1f%% against "
			   "its median): %s</div>\n", s->drift ? "note" : "meta", s->confound.step_ms, s->drift_pct,
			s->drift ? "<b>drift</b>: outside the baseline's first range, so the machine changed during the "
				   "sweep and the verdicts are suspect" : "within the baseline's first range, no drift");
	else if (s->confound.status != TR_NONE)
		fprintf(f, "<div class=note>Confound check: the baseline re-run %s.</div>\n",
			trial_status_name(s->confound.status));
	else
		fputs("<p class=meta>Confound check: not run.</p>\n", f);
	ranking_table(f, s);
	env_table(f, s);
	failed_table(f, s);
	charts_and_envs(f, x, s, si);
}

static int mkdir_p(const char *path)
{
	char buf[4200];
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			if (mkdir(buf, 0777) != 0 && errno != EEXIST)
				return -1;
			*p = '/';
		}
	return mkdir(buf, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

enum aorta_status sweep_report(struct sweep *const *sv, size_t n, const char *out_dir, struct aorta_error *e)
{
	struct rctx x;
	memset(&x, 0, sizeof(x));
	x.dir = out_dir;
	x.e = e;
	if (mkdir_p(out_dir) != 0)
		return aorta_fail(e, AORTA_EINTERNAL, out_dir, 0, -1, "cannot make the folder: %s", strerror(errno));
	x.have_lib = report_plot_load(&x.lib, x.why, sizeof(x.why)) == 0;
	if (!x.have_lib)
		aorta_warn("charts not drawn: %s", x.why);
	enum aorta_status st = AORTA_OK;
	for (size_t i = 0; x.have_lib && i < n && !st; i++) {
		st = chart_rank(&x, sv[i], (int)i);
		for (int h = 0; h < 3 && !st; h++)
			st = chart_heat(&x, sv[i], (int)i, (enum hfig)h);
		if (!st)
			st = chart_busbw(&x, sv[i], (int)i);
		if (!st)
			st = chart_gantt(&x, sv[i], (int)i);
	}
	if (st) {
		free(x.ch);
		if (x.have_lib)
			report_plot_unload(&x.lib);
		return st;
	}
	char path[4300];
	snprintf(path, sizeof(path), "%s/index.html", out_dir);
	struct outfile o;
	if (out_open(&o, path, e)) {
		free(x.ch);
		return e->code;
	}
	FILE *f = o.f;
	fprintf(f, "<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>aorta sweep report</title>"
		   "<style>%s</style></head><body>\n<h1>aorta sweep: which setting gives the best overlap?</h1>\n"
		   "<p class=meta>aorta %s &middot; %zu sweep%s &middot; schema %s</p>\n", CSS, AORTA_VERSION, n,
		n == 1 ? "" : "s", SWEEP_SCHEMA);
	if (!x.have_lib) {
		fputs("<div class=note>Charts were not drawn: ", f);
		html_escape(f, x.why);
		fputs(". The tables are complete without them.</div>\n", f);
	}
	for (size_t i = 0; i < n; i++)
		section(f, &x, sv[i], (int)i);
	fputs("<p class=meta>Each trial's traces are in cells/&lt;id&gt;/t&lt;k&gt;/out/; <code>aorta report --log-dir A "
	      "--log-dir B</code> compares any two of them in full.</p>\n</body></html>\n", f);
	st = out_commit(&o, e);
	free(x.ch);
	if (x.have_lib)
		report_plot_unload(&x.lib);
	return st;
}
