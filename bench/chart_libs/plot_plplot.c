/*
 * plot_plplot.c - the plot plug-in's entry points (report_plot.h) written on
 * PLplot 5.15 (Debian libplplot-dev) with its cairo drivers (pngcairo,
 * svgcairo), for bench/chart_libs/run.sh: the same chart descriptions as
 * src/report/plot_cairo.c, drawn by the library, to compare picture, speed
 * and what each can do.  Not part of the build.
 *
 * PLplot keeps its state in a global "current stream" (plsc): every call
 * below works on it, so charts are drawn under one process-wide mutex.
 * The drivers write the file only at plend1; there is no way to get an
 * error back (a driver that cannot open its file calls plexit, which
 * calls exit() unless a handler set with plsexit returns).
 */
#include <math.h>
#include <plplot.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_plot.h"

int aorta_plot_abi(void);
int aorta_plot_render(const struct plot_chart *c, const char *png, const char *svg, char *err, size_t errlen);
int aorta_plot_png_stats(const char *png, int *w, int *h, const uint32_t *rgb, size_t n, size_t *counts,
			 size_t *nonwhite, char *err, size_t errlen);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static double W, H;
#define S 0.62 /* PLplot's default character height is too large at 90 dpi */

int aorta_plot_abi(void)
{
	return PLOT_ABI;
}

static void col(uint32_t c, double a)
{
	plscol0a(15, (int)(c >> 16 & 255), (int)(c >> 8 & 255), (int)(c & 255), a > 0 && a < 1 ? a : 1.0);
	plcol0(15);
}

/* viewport from a pixel rectangle (y down) */
static void vp(double x, double y, double w, double h)
{
	plvpor(x / W, (x + w) / W, 1 - (y + h) / H, 1 - y / H);
}

static double nice(double x)
{
	double e = floor(log10(x)), f = x / pow(10, e);
	double n = f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10;
	return n * pow(10, e);
}

static void fit(double *lo, double *hi, double *step, int from_zero, int nt)
{
	if (!isfinite(*lo) || !isfinite(*hi))
		*lo = 0, *hi = 1;
	if (from_zero) {
		if (*lo > 0)
			*lo = 0;
		if (*hi < 0)
			*hi = 0;
	}
	if (*hi - *lo < 1e-12) {
		double d = fabs(*hi) > 0 ? fabs(*hi) * 0.1 : 1;
		*lo -= d, *hi += d;
	}
	*step = nice((*hi - *lo) / nt);
	*lo = floor(*lo / *step + 1e-9) * *step;
	*hi = ceil(*hi / *step - 1e-9) * *step;
}

static void bytes_label(PLINT axis, PLFLT v, char *b, PLINT n, PLPointer d)
{
	(void)d;
	if (axis != PL_X_AXIS) {
		snprintf(b, (size_t)n, "%g", v);
		return;
	}
	static const char *const u[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double x = pow(2, v);
	int k = 0;
	while (x >= 1024 && k < 4)
		x /= 1024, k++;
	snprintf(b, (size_t)n, "%g %s", x, u[k]);
}

static void legend(const struct plot_panel *p)
{
	size_t n = p->nlegend ? p->nlegend : p->nseries, m = 0;
	PLINT opt[64], tc[64], bc[64], bp[64], lc[64], ls[64];
	PLFLT bs[64], bw[64], lw[64];
	const char *text[64];
	for (size_t i = 0; i < n && m < 64; i++) {
		const struct plot_series *se = p->nlegend ? &p->legend_only[i] : &p->series[i];
		if (!se->name)
			continue;
		/* every entry needs its own cmap0 index: colours 16.. */
		PLINT ci = 16 + (PLINT)m;
		plscol0a(ci, (int)(se->rgb >> 16 & 255), (int)(se->rgb >> 8 & 255), (int)(se->rgb & 255), 1);
		int box = p->nlegend || p->kind != PK_LINE || se->y2;
		opt[m] = box ? PL_LEGEND_COLOR_BOX : PL_LEGEND_LINE;
		tc[m] = 1, bc[m] = ci, bp[m] = 0, bs[m] = 0.8, bw[m] = 1, lc[m] = ci, ls[m] = 1, lw[m] = 2.5;
		text[m++] = se->name;
	}
	if (!m)
		return;
	PLFLT lw_, lh_;
	plscol0(1, 34, 34, 34);
	plschr(0, 0.75 * S);
	pllegend(&lw_, &lh_, PL_LEGEND_ROW_MAJOR, PL_POSITION_VIEWPORT | PL_POSITION_TOP | PL_POSITION_LEFT | PL_POSITION_OUTSIDE,
		 0, 0.02, 0.05, 0, 0, 0, 1, (PLINT)m, (PLINT)m, opt, 1.0, 0.75 * S, 2.0, 0, tc, text, bc, bp, bs, bw, lc, ls, lw, NULL, NULL, NULL,
		 NULL);
}

static void frame_labels(const struct plot_panel *p)
{
	col(0x111111, 1);
	plschr(0, 0.95 * S);
	if (p->title)
		plmtex("t", 3.2, 0.5, 0.5, p->title);
	plschr(0, 0.85 * S);
	if (p->xlabel)
		plmtex("b", 3.0, 0.5, 0.5, p->xlabel);
	if (p->ylabel)
		plmtex("l", 4.5, 0.5, 0.5, p->ylabel);
}

static void axes(const char *xo, double xt, const char *yo, double yt)
{
	col(0xDDDDDD, 1);
	plwidth(0.5);
	plbox("g", xt, 0, "g", yt, 0);
	col(0x333333, 1);
	plwidth(1);
	plschr(0, 0.75 * S);
	plbox(xo, xt, 0, yo, yt, 0);
}

struct pt {
	double x, y, y2;
};

static int by_x(const void *a, const void *b)
{
	double x = ((const struct pt *)a)->x, y = ((const struct pt *)b)->x;
	return (x > y) - (x < y);
}

static void draw_line(const struct plot_panel *p, double x, double y, double w, double h)
{
	double xl = INFINITY, xh = -INFINITY, yl = INFINITY, yh = -INFINITY, xs, ys;
	for (size_t s = 0; s < p->nseries; s++)
		for (size_t i = 0; i < p->series[s].n; i++) {
			const struct plot_series *se = &p->series[s];
			double xv = p->logx ? (se->x[i] > 0 ? log2(se->x[i]) : NAN) : se->x[i];
			if (!isfinite(xv) || !isfinite(se->y[i]))
				continue;
			xl = fmin(xl, xv), xh = fmax(xh, xv), yl = fmin(yl, se->y[i]), yh = fmax(yh, se->y[i]);
			if (se->y2 && isfinite(se->y2[i]))
				yl = fmin(yl, se->y2[i]), yh = fmax(yh, se->y2[i]);
		}
	fit(&xl, &xh, &xs, 0, 8);
	if (p->logx)
		xs = ceil(xs);
	if (p->x_integer && xs < 1)
		xs = 1, xl = floor(xl), xh = ceil(xh);
	fit(&yl, &yh, &ys, p->y_from_zero, 6);
	vp(x + 70, y + 60, w - 90, h - 60 - 50);
	plwind(xl, xh, yl, yh);
	if (p->logx && p->x_bytes)
		plslabelfunc(bytes_label, NULL);
	axes(p->logx && p->x_bytes ? "bcnto" : "bcnt", xs, "bcnvt", ys);
	plslabelfunc(NULL, NULL);
	frame_labels(p);
	legend(p);
	struct pt *pt = NULL;
	PLFLT *px = NULL, *py = NULL;
	for (size_t s = 0; s < p->nseries; s++) {
		const struct plot_series *se = &p->series[s];
		pt = realloc(pt, (se->n + 1) * sizeof(*pt));
		px = realloc(px, (2 * se->n + 1) * sizeof(PLFLT));
		py = realloc(py, (2 * se->n + 1) * sizeof(PLFLT));
		size_t m = 0;
		for (size_t i = 0; i < se->n; i++) {
			double xv = p->logx ? (se->x[i] > 0 ? log2(se->x[i]) : NAN) : se->x[i];
			if (isfinite(xv) && isfinite(se->y[i]))
				pt[m++] = (struct pt){ xv, se->y[i], se->y2 ? se->y2[i] : NAN };
		}
		qsort(pt, m, sizeof(*pt), by_x);
		if (se->y2) {
			size_t k = 0;
			for (size_t i = 0; i < m; i++)
				px[k] = pt[i].x, py[k++] = pt[i].y;
			for (size_t i = m; i-- > 0;)
				if (isfinite(pt[i].y2))
					px[k] = pt[i].x, py[k++] = pt[i].y2;
			col(se->rgb, se->alpha ? se->alpha : 0.25);
			if (k >= 3)
				plfill((PLINT)k, px, py);
			continue;
		}
		for (size_t i = 0; i < m; i++)
			px[i] = pt[i].x, py[i] = pt[i].y;
		col(se->rgb, se->alpha);
		plwidth(se->width > 0 ? se->width : 1.5);
		plline((PLINT)m, px, py);
		if (se->markers) {
			plssym(0, 1.2);
			plstring((PLINT)m, px, py, "●");
		}
	}
	plwidth(1);
	free(pt);
	free(px);
	free(py);
}

static void rect(double x0, double x1, double y0, double y1)
{
	PLFLT xs[4] = { x0, x1, x1, x0 }, ys[4] = { y0, y0, y1, y1 };
	plfill(4, xs, ys);
}

static void draw_bars(const struct plot_panel *p, double x, double y, double w, double h, int horiz)
{
	double vl = INFINITY, vh = -INFINITY, st;
	for (size_t s = 0; s < p->nseries; s++)
		for (size_t i = 0; i < p->ncats && i < p->series[s].n; i++)
			if (isfinite(p->series[s].y[i]))
				vl = fmin(vl, p->series[s].y[i]), vh = fmax(vh, p->series[s].y[i]);
	double pad = (fmax(vh, 0) - fmin(vl, 0)) * 0.12;
	vl = fmin(vl, 0) - (vl < 0 ? pad : 0), vh = fmax(vh, 0) + (vh > 0 ? pad : 0);
	fit(&vl, &vh, &st, 1, 6);
	double n = (double)(p->ncats ? p->ncats : 1);
	double lm = horiz ? 190 : 70;
	vp(x + lm, y + 60, w - lm - 20, h - 60 - 50);
	if (horiz) {
		plwind(vl, vh, n, 0);
		axes("bcnt", st, "bc", 0);
	} else {
		plwind(0, n, vl, vh);
		axes("bc", 0, "bcnvt", st);
	}
	frame_labels(p);
	legend(p);
	double bw = 0.8 / (double)(p->nseries ? p->nseries : 1);
	char b[64];
	for (size_t i = 0; i < p->ncats; i++) {
		for (size_t s = 0; s < p->nseries; s++) {
			const struct plot_series *se = &p->series[s];
			if (i >= se->n || !isfinite(se->y[i]))
				continue;
			double a = (double)i + 0.1 + bw * (double)s;
			col(se->bar_rgb ? se->bar_rgb[i] : se->rgb, se->alpha);
			if (horiz)
				rect(0, se->y[i], a, a + bw * 0.9);
			else
				rect(a, a + bw * 0.92, 0, se->y[i]);
			col(0x222222, 1);
			plschr(0, 0.6 * S);
			if (horiz) {
				snprintf(b, sizeof(b), "%+.2f%%", se->y[i]);
				plptex(se->y[i], a + bw * 0.6, 1, 0, se->y[i] >= 0 ? -0.05 : 1.05, b);
			} else {
				snprintf(b, sizeof(b), "%.3g", se->y[i]);
				plptex(a + bw * 0.46, se->y[i] + (vh - vl) * 0.01, 1, 0, 0.5, b);
			}
		}
		col(0x222222, 1);
		plschr(0, 0.75 * S);
		if (horiz)
			plmtex("lv", 0.5, 1 - ((double)i + 0.5) / n, 1, p->cats[i]);
		else
			plmtex("b", 1.5, ((double)i + 0.5) / n, 0.5, p->cats[i]);
	}
}

static void draw_heatmap(const struct plot_panel *p, double x, double y, double w, double h)
{
	vp(x + 120, y + 60, w - 120 - 70, h - 60 - 50);
	double nc = (double)(p->ncats ? p->ncats : 1), nr = (double)(p->nrows ? p->nrows : 1);
	plwind(0, nc, nr, 0);
	frame_labels(p);
	const double *tone = p->tone ? p->tone : p->cells;
	double vmax = p->vmax;
	if (!(vmax > 0)) {
		for (size_t i = 0; i < p->nrows * p->ncats; i++)
			if (isfinite(tone[i]))
				vmax = fmax(vmax, fabs(tone[i]));
		if (!(vmax > 0))
			vmax = 1;
	}
	char b[64];
	for (size_t r = 0; r < p->nrows; r++)
		for (size_t c = 0; c < p->ncats; c++) {
			double v = p->cells[r * p->ncats + c], t = tone[r * p->ncats + c];
			if (!isfinite(v)) {
				col(0xEEEEEE, 1);
			} else {
				double a = fmin(fabs(t) / vmax, 1.0);
				uint32_t k = t >= 0 ? OI_GREEN : OI_RED;
				uint32_t rr = (uint32_t)lround(255 - a * (255 - (k >> 16 & 255))),
					 gg = (uint32_t)lround(255 - a * (255 - (k >> 8 & 255))),
					 bb = (uint32_t)lround(255 - a * (255 - (k & 255)));
				col(rr << 16 | gg << 8 | bb, 1);
			}
			rect((double)c, (double)c + 1, (double)r, (double)r + 1);
			if (isfinite(v)) {
				col(0x111111, 1);
				plschr(0, 0.7 * S);
				snprintf(b, sizeof(b), "%+.1f%s", v, p->cell_unit ? p->cell_unit : "");
				plptex((double)c + 0.5, (double)r + 0.6, 1, 0, 0.5, b);
			}
		}
	col(0x222222, 1);
	plschr(0, 0.75 * S);
	for (size_t r = 0; r < p->nrows; r++)
		plmtex("lv", 0.5, 1 - ((double)r + 0.5) / nr, 1, p->rows[r]);
	for (size_t c = 0; c < p->ncats; c++)
		plmtex("b", 1.5, ((double)c + 0.5) / nc, 0.5, p->cats[c]);
}

static void draw_gantt(const struct plot_panel *p, double x, double y, double w, double h)
{
	double xl = INFINITY, xh = -INFINITY, st;
	for (size_t i = 0; i < p->nrects; i++)
		xl = fmin(xl, p->rects[i].x0), xh = fmax(xh, p->rects[i].x1);
	fit(&xl, &xh, &st, 0, 8);
	double n = (double)(p->ncats ? p->ncats : 1);
	vp(x + 130, y + 60, w - 150, h - 60 - 50);
	plwind(xl, xh, n, 0);
	axes("bcnt", st, "bc", 0);
	frame_labels(p);
	legend(p);
	for (size_t i = 0; i < p->nrects; i++) {
		const struct plot_rect *r = &p->rects[i];
		if (r->row < 0 || (size_t)r->row >= p->ncats)
			continue;
		double y0 = r->row + 0.15, hh = 0.7;
		if (r->half)
			y0 += hh * 0.55, hh *= 0.45;
		col(r->rgb, r->alpha);
		rect(r->x0, fmax(r->x1, r->x0 + (xh - xl) / 1000), y0, y0 + hh);
	}
	col(0x222222, 1);
	plschr(0, 0.75 * S);
	for (size_t i = 0; i < p->ncats; i++)
		plmtex("lv", 0.5, 1 - ((double)i + 0.5) / n, 1, p->cats[i]);
}

static int on_exit_(const char *msg)
{
	fprintf(stderr, "plplot: %s\n", msg);
	return 0; /* do not exit(); PLplot goes on in an unknown state */
}

static void draw(const struct plot_chart *c, const char *dev, const char *path)
{
	plsexit(on_exit_);
	plsdev(dev);
	plsfnam(path);
	plspage(0, 0, c->width, c->height, 0, 0);
	plscolbg(255, 255, 255);
	plsetopt("drvopt", "text_anti_aliasing=2,graphics_anti_aliasing=2");
	plscmap0n(96);
	plinit();
	pladv(0);
	W = c->width, H = c->height;
	plvpor(0, 1, 0, 1);
	plwind(0, 1, 0, 1);
	col(0x111111, 1);
	plschr(0, 1.3 * S);
	if (c->title)
		plptex(0.5, 1 - 26.0 / H, 1, 0, 0.5, c->title);
	double top = 40;
	if (c->note) {
		plschr(0, 0.8 * S);
		col(0x555555, 1);
		plptex(0.5, 1 - 44.0 / H, 1, 0, 0.5, c->note);
		top = 52;
	}
	int cols = c->cols > 0 ? c->cols : 1;
	size_t rows = (c->npanels + (size_t)cols - 1) / (size_t)cols;
	double pw = W / cols, ph = rows ? (H - top) / (double)rows : 0;
	for (size_t i = 0; i < c->npanels; i++) {
		double x = pw * (double)(i % (size_t)cols), y = top + ph * (double)(i / (size_t)cols);
		const struct plot_panel *p = &c->panels[i];
		switch (p->kind) {
		case PK_LINE: draw_line(p, x, y, pw, ph); break;
		case PK_BARS: draw_bars(p, x, y, pw, ph, 0); break;
		case PK_BARH: draw_bars(p, x, y, pw, ph, 1); break;
		case PK_HEATMAP: draw_heatmap(p, x, y, pw, ph); break;
		case PK_GANTT: draw_gantt(p, x, y, pw, ph); break;
		}
	}
	plend1();
}

int aorta_plot_render(const struct plot_chart *c, const char *png, const char *svg, char *err, size_t errlen)
{
	if (!c || c->width < 100 || c->height < 100 || c->width > 20000 || c->height > 20000) {
		snprintf(err, errlen, "bad chart size");
		return -1;
	}
#ifndef PLPLOT_NO_LOCK /* -DPLPLOT_NO_LOCK: what happens without the lock */
	pthread_mutex_lock(&lock);
#endif
	if (png)
		draw(c, "pngcairo", png);
	if (svg)
		draw(c, "svgcairo", svg);
#ifndef PLPLOT_NO_LOCK
	pthread_mutex_unlock(&lock);
#endif
	return 0;
}

/* PLplot cannot read images: the tests' read-back is not available. */
int aorta_plot_png_stats(const char *png, int *w, int *h, const uint32_t *rgb, size_t n, size_t *counts,
			 size_t *nonwhite, char *err, size_t errlen)
{
	(void)png, (void)w, (void)h, (void)rgb, (void)n, (void)counts, (void)nonwhite;
	snprintf(err, errlen, "PLplot cannot read a PNG back");
	return -1;
}
