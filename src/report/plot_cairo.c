/*
 * plot_cairo.c - the plot plug-in (build/libaorta-plot.so): draws the charts
 * that report_charts.c describes (report_plot.h) with cairo, to PNG and SVG.
 *
 * Design.  One drawing routine renders a chart onto any cairo surface, so
 * the PNG and the SVG are the same picture.  A chart is a title, an
 * optional note and a grid of panels; each panel reserves margins for its
 * title, tick labels and axis labels (which carry units), then draws grid
 * lines, the data, and a legend in rows above the plot area (never over
 * the data).  Axes use "nice" ticks (1, 2, 2.5, 5 x 10^k; an integer axis
 * skips 2.5 and never goes below 1); a log2 axis ticks on powers of two and
 * can print sizes (KiB, MiB).  A line's points are joined in x order
 * (sorted here, so no caller can draw a zigzag); crowded bar categories
 * are labelled every k-th.  Colours come from the caller (the Okabe-Ito
 * palette): this file never chooses what a colour means, except the
 * heatmaps' scales (green/red diverging around 0, viridis sequential),
 * both colour-blind safe.  Nothing is global: charts may be drawn from
 * several threads at once (bench/chart_libs checks the bytes are the same).
 * Text uses cairo's toy font API with the "sans-serif" family (fontconfig
 * finds DejaVu Sans on Debian).  Only this file includes cairo.h, and it is
 * not linked into build/aorta.
 *
 * aorta_plot_release frees cairo's and fontconfig's caches at the end.
 * aorta_plot_png_stats reads a PNG back with cairo for the tests (size,
 * pixels of given colours, pixels that are not white).
 */
#include <cairo-svg.h>
#include <cairo.h>
#include <fontconfig/fontconfig.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/plugin.h"
#include "base/visible.h"
#include "report/report_plot.h"

int aorta_plot_abi(void);
int aorta_plot_render(const struct plot_chart *c, const char *png, const char *svg, char *err, size_t errlen);
int aorta_plot_png_stats(const char *png, int *w, int *h, const uint32_t *rgb, size_t n, size_t *counts,
			 size_t *nonwhite, char *err, size_t errlen);

int aorta_plot_ticks(double lo, double hi, int integer, double *t, int max);
void aorta_plot_release(void);

/* Frees cairo's and fontconfig's caches (so leak checkers see none); no
 * chart may be drawn afterwards. */
void aorta_plot_release(void)
{
	cairo_debug_reset_static_data();
	FcFini();
}

AORTA_PLUGIN_ID(plot);

int aorta_plot_abi(void)
{
	return PLOT_ABI;
}

static void rgb(cairo_t *cr, uint32_t c, double a)
{
	cairo_set_source_rgba(cr, ((c >> 16) & 255) / 255.0, ((c >> 8) & 255) / 255.0, (c & 255) / 255.0,
			      a > 0 && a < 1 ? a : 1.0);
}

static void font(cairo_t *cr, double size, int bold)
{
	cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
			       bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
	cairo_set_font_size(cr, size);
}

/* Text from inputs (kernel and label names) drawn as visible text: a
 * control character would break the SVG's XML, a stray byte cairo's
 * UTF-8 (base/visible.h). */
#define VIS(s) vis_str(vis_b, sizeof(vis_b), (s))

static double text_w(cairo_t *cr, const char *s)
{
	cairo_text_extents_t te;
	char vis_b[1024];
	cairo_text_extents(cr, VIS(s), &te);
	return te.x_advance;
}

/* Text anchored at (x, y): ax 0 left, 0.5 centre, 1 right; y is the middle
 * of the text when mid, else the baseline. */
static void text(cairo_t *cr, double x, double y, const char *s, double ax, int mid)
{
	cairo_text_extents_t te;
	cairo_font_extents_t fe;
	char vis_b[1024];
	s = VIS(s);
	cairo_text_extents(cr, s, &te);
	cairo_font_extents(cr, &fe);
	cairo_move_to(cr, x - ax * te.x_advance, mid ? y + (fe.ascent - fe.descent) / 2 : y);
	cairo_show_text(cr, s);
}

/* A category label centred at x under a plot, on two lines (split at the
 * space nearest the middle) when it is wider than avail. */
static void cat_label(cairo_t *cr, double x, double y, const char *s, double avail)
{
	if (text_w(cr, s) <= avail || !strchr(s, ' ')) {
		text(cr, x, y, s, 0.5, 0);
		return;
	}
	size_t n = strlen(s), best = 0;
	for (size_t i = 0; i < n; i++)
		if (s[i] == ' ' && (!best || labs((long)(2 * i) - (long)n) < labs((long)(2 * best) - (long)n)))
			best = i;
	char a[256], b[256];
	snprintf(a, sizeof(a), "%.*s", (int)(best < 255 ? best : 255), s);
	snprintf(b, sizeof(b), "%s", s + best + 1);
	text(cr, x, y, a, 0.5, 0);
	text(cr, x, y + 13, b, 0.5, 0);
}

static void text_rot(cairo_t *cr, double x, double y, const char *s)
{
	cairo_save(cr);
	cairo_translate(cr, x, y);
	cairo_rotate(cr, -M_PI / 2);
	text(cr, 0, 0, s, 0.5, 1);
	cairo_restore(cr);
}

/* ---- axes ------------------------------------------------------------------ */

struct axis {
	double lo, hi;
	double step;
	int log2, bytes, integer;
};

/* A tick step near x: 1, 2, 2.5 or 5 x 10^k; an integer axis skips 2.5
 * (2.5 x 10^0 would put ticks between whole numbers) and never goes below 1. */
static double nice(double x, int integer)
{
	if (integer && x <= 1)
		return 1;
	double e = floor(log10(x)), f = x / pow(10, e);
	double n = f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 && !integer ? 2.5 : f <= 5 ? 5 : 10;
	return n * pow(10, e);
}

static void axis_fit(struct axis *a, double lo, double hi, int from_zero, int nt)
{
	if (!isfinite(lo) || !isfinite(hi)) {
		lo = 0;
		hi = 1;
	}
	if (from_zero) {
		if (lo > 0)
			lo = 0;
		if (hi < 0)
			hi = 0;
	}
	if (hi - lo < 1e-12) {
		double d = fabs(hi) > 0 ? fabs(hi) * 0.1 : 1;
		lo -= d;
		hi += d;
	}
	if (a->log2) {
		a->lo = floor(lo);
		a->hi = ceil(hi);
		if (a->hi <= a->lo)
			a->hi = a->lo + 1;
		a->step = ceil((a->hi - a->lo) / nt);
		return;
	}
	a->step = nice((hi - lo) / nt, a->integer);
	a->lo = floor(lo / a->step + 1e-9) * a->step;
	a->hi = ceil(hi / a->step - 1e-9) * a->step;
}

static void fmt_tick(const struct axis *a, double v, char *b, size_t n)
{
	if (a->log2) {
		double x = pow(2, v);
		if (a->bytes) {
			static const char *const u[] = { "B", "KiB", "MiB", "GiB", "TiB" };
			int k = 0;
			while (x >= 1024 && k < 4) {
				x /= 1024;
				k++;
			}
			snprintf(b, n, "%g %s", x, u[k]);
		} else {
			snprintf(b, n, "%g", x);
		}
		return;
	}
	if (fabs(v) < a->step * 1e-6)
		v = 0;
	if (a->integer)
		snprintf(b, n, "%.0f", v);
	else
		snprintf(b, n, "%.6g", v);
}

/* The ticks a linear axis over [lo, hi] gets (integer: whole numbers only),
 * for the tests: how many, at most max written to t. */
int aorta_plot_ticks(double lo, double hi, int integer, double *t, int max)
{
	struct axis a;
	memset(&a, 0, sizeof(a));
	a.integer = integer;
	axis_fit(&a, lo, hi, 0, 8);
	int n = 0;
	for (double v = a.lo; v <= a.hi + a.step * 1e-6; v += a.step, n++)
		if (n < max)
			t[n] = v;
	return n;
}

struct frame {
	double x, y, w, h; /* plot area in pixels */
	struct axis ax, ay;
};

static struct frame mkframe(double x, double y, double w, double h)
{
	struct frame f;
	memset(&f, 0, sizeof(f));
	f.x = x, f.y = y, f.w = w > 10 ? w : 10, f.h = h > 10 ? h : 10;
	return f;
}

static double px(const struct frame *f, double x)
{
	if (f->ax.log2)
		x = x > 0 ? log2(x) : f->ax.lo;
	return f->x + (x - f->ax.lo) / (f->ax.hi - f->ax.lo) * f->w;
}

static double py(const struct frame *f, double y)
{
	return f->y + f->h - (y - f->ay.lo) / (f->ay.hi - f->ay.lo) * f->h;
}

static void grid_y(cairo_t *cr, const struct frame *f, int labels)
{
	char b[64];
	font(cr, 11, 0);
	for (double v = f->ay.lo; v <= f->ay.hi + f->ay.step * 1e-6; v += f->ay.step) {
		double y = py(f, v);
		rgb(cr, 0xDDDDDD, 1);
		cairo_set_line_width(cr, 1);
		cairo_move_to(cr, f->x, floor(y) + 0.5);
		cairo_line_to(cr, f->x + f->w, floor(y) + 0.5);
		cairo_stroke(cr);
		if (labels) {
			fmt_tick(&f->ay, v, b, sizeof(b));
			rgb(cr, 0x333333, 1);
			text(cr, f->x - 6, y, b, 1, 1);
		}
	}
}

static void grid_x(cairo_t *cr, const struct frame *f)
{
	char b[64];
	font(cr, 11, 0);
	for (double v = f->ax.lo; v <= f->ax.hi + f->ax.step * 1e-6; v += f->ax.step) {
		double x = f->x + (v - f->ax.lo) / (f->ax.hi - f->ax.lo) * f->w;
		rgb(cr, 0xDDDDDD, 1);
		cairo_set_line_width(cr, 1);
		cairo_move_to(cr, floor(x) + 0.5, f->y);
		cairo_line_to(cr, floor(x) + 0.5, f->y + f->h);
		cairo_stroke(cr);
		fmt_tick(&f->ax, v, b, sizeof(b));
		rgb(cr, 0x333333, 1);
		text(cr, x, f->y + f->h + 16, b, 0.5, 0);
	}
}

static void box(cairo_t *cr, const struct frame *f)
{
	rgb(cr, 0x444444, 1);
	cairo_set_line_width(cr, 1);
	cairo_rectangle(cr, floor(f->x) + 0.5, floor(f->y) + 0.5, floor(f->w), floor(f->h));
	cairo_stroke(cr);
}

/* ---- legend ---------------------------------------------------------------- */

struct lentry {
	const char *name;
	uint32_t rgb;
	int swatch; /* 0 line, 1 box */
	double alpha;
};

/* Lays the entries out in rows above the plot area (never over the data):
 * moves f's top down by the rows' height, then draws them. */
static void legend(cairo_t *cr, struct frame *f, const struct lentry *e, size_t n)
{
	const double lh = 17, gap = 18;
	double x = f->x, rows = 0;
	size_t m = 0;
	font(cr, 11, 0);
	for (size_t i = 0; i < n; i++) {
		if (!e[i].name)
			continue;
		double w = 24 + text_w(cr, e[i].name);
		if (m && x + w > f->x + f->w) {
			x = f->x;
			rows++;
		}
		x += w + gap;
		m++;
	}
	if (!m)
		return;
	rows++;
	double top = f->y;
	f->y += rows * lh + 6;
	f->h -= rows * lh + 6;
	x = f->x;
	double yy = top + lh / 2;
	m = 0;
	for (size_t i = 0; i < n; i++) {
		if (!e[i].name)
			continue;
		double w = 24 + text_w(cr, e[i].name);
		if (m++ && x + w > f->x + f->w) {
			x = f->x;
			yy += lh;
		}
		rgb(cr, e[i].rgb, e[i].alpha);
		if (e[i].swatch) {
			cairo_rectangle(cr, x, yy - 5, 18, 10);
			cairo_fill(cr);
		} else {
			cairo_set_line_width(cr, 2.5);
			cairo_move_to(cr, x, yy);
			cairo_line_to(cr, x + 18, yy);
			cairo_stroke(cr);
		}
		rgb(cr, 0x222222, 1);
		font(cr, 11, 0);
		text(cr, x + 23, yy, e[i].name, 0, 1);
		x += w + gap;
	}
}

static void panel_legend(cairo_t *cr, const struct plot_panel *p, struct frame *f)
{
	size_t n = p->nlegend ? p->nlegend : p->nseries;
	struct lentry *le = calloc(n + 1, sizeof(*le));
	if (!le)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct plot_series *se = p->nlegend ? &p->legend_only[i] : &p->series[i];
		int box_ = p->nlegend || p->kind != PK_LINE || se->y2;
		le[i] = (struct lentry){ se->name, se->rgb, box_,
					 se->y2 ? (se->alpha ? se->alpha : 0.25) : se->alpha };
	}
	legend(cr, f, le, n);
	free(le);
}

/* ---- panels ---------------------------------------------------------------- */

static void labels(cairo_t *cr, const struct plot_panel *p, double x, double y, double w, double h,
		   const struct frame *f)
{
	font(cr, 13, 1);
	rgb(cr, 0x111111, 1);
	if (p->title)
		text(cr, x + w / 2, y + 16, p->title, 0.5, 0);
	font(cr, 12, 0);
	if (p->xlabel)
		text(cr, f->x + f->w / 2, y + h - 8, p->xlabel, 0.5, 0);
	if (p->ylabel)
		text_rot(cr, x + 12, f->y + f->h / 2, p->ylabel);
}

static void empty(cairo_t *cr, const struct frame *f, const char *why)
{
	font(cr, 13, 0);
	rgb(cr, 0x666666, 1);
	text(cr, f->x + f->w / 2, f->y + f->h / 2, why ? why : "no data", 0.5, 1);
}

/* qsort_r order of point indices by x (arg: the x array); NaN last. */
static int by_x(const void *a, const void *b, void *arg)
{
	const double *x = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	double u = x[i], v = x[j];
	if (isnan(u) || isnan(v))
		return isnan(u) != isnan(v) ? isnan(u) - isnan(v) : (i > j) - (i < j);
	return u != v ? (u > v) - (u < v) : (i > j) - (i < j); /* ties: given order */
}

static void draw_line(cairo_t *cr, const struct plot_panel *p, double x, double y, double w, double h)
{
	struct frame f = mkframe(x + 70, y + 28, w - 70 - 16, h - 28 - 50);
	panel_legend(cr, p, &f);
	double xl = INFINITY, xh = -INFINITY, yl = INFINITY, yh = -INFINITY;
	f.ax.log2 = p->logx;
	f.ax.bytes = p->x_bytes;
	for (size_t s = 0; s < p->nseries; s++) {
		const struct plot_series *se = &p->series[s];
		for (size_t i = 0; i < se->n; i++) {
			double xv = se->x[i];
			if (p->logx)
				xv = xv > 0 ? log2(xv) : NAN;
			if (!isfinite(xv) || !isfinite(se->y[i]))
				continue;
			xl = fmin(xl, xv), xh = fmax(xh, xv);
			yl = fmin(yl, se->y[i]), yh = fmax(yh, se->y[i]);
			if (se->y2 && isfinite(se->y2[i]))
				yl = fmin(yl, se->y2[i]), yh = fmax(yh, se->y2[i]);
		}
	}
	int any = isfinite(xl);
	f.ax.integer = p->x_integer && !p->logx;
	axis_fit(&f.ax, xl, xh, 0, 8);
	double head = isfinite(yh) ? fmax(yh - (p->y_from_zero ? fmin(yl, 0) : yl), fabs(yh)) * 0.06 : 0;
	axis_fit(&f.ay, yl, yh + head, p->y_from_zero, 6); /* headroom: no point on the frame */
	grid_y(cr, &f, 1);
	grid_x(cr, &f);
	labels(cr, p, x, y, w, h, &f);
	if (!any) {
		empty(cr, &f, p->empty_text);
		box(cr, &f);
		return;
	}
	cairo_save(cr);
	cairo_rectangle(cr, f.x, f.y, f.w, f.h);
	cairo_clip(cr);
	size_t *ord = NULL;
	for (size_t s = 0; s < p->nseries; s++) {
		const struct plot_series *se = &p->series[s];
		/* points joined in x order, whatever order they were given in */
		size_t *o = realloc(ord, (se->n + 1) * sizeof(*o));
		if (!o)
			break;
		ord = o;
		for (size_t i = 0; i < se->n; i++)
			o[i] = i;
		qsort_r(o, se->n, sizeof(*o), by_x, (void *)se->x);
		if (se->y2) { /* band: y forward, y2 back */
			int open = 0;
			for (size_t k = 0; k < se->n; k++) {
				size_t i = o[k];
				if (isfinite(se->y[i]) && isfinite(se->x[i])) {
					if (!open)
						cairo_move_to(cr, px(&f, se->x[i]), py(&f, se->y[i]));
					else
						cairo_line_to(cr, px(&f, se->x[i]), py(&f, se->y[i]));
					open = 1;
				}
			}
			for (size_t k = se->n; k-- > 0;) {
				size_t i = o[k];
				if (isfinite(se->y2[i]) && isfinite(se->x[i]))
					cairo_line_to(cr, px(&f, se->x[i]), py(&f, se->y2[i]));
			}
			cairo_close_path(cr);
			rgb(cr, se->rgb, se->alpha ? se->alpha : 0.25);
			cairo_fill(cr);
			continue;
		}
		int open = 0;
		for (size_t k = 0; k < se->n; k++) {
			size_t i = o[k];
			if (!isfinite(se->y[i]) || !isfinite(se->x[i]) || (p->logx && !(se->x[i] > 0))) {
				open = 0;
				continue;
			}
			if (!open)
				cairo_move_to(cr, px(&f, se->x[i]), py(&f, se->y[i]));
			else
				cairo_line_to(cr, px(&f, se->x[i]), py(&f, se->y[i]));
			open = 1;
		}
		rgb(cr, se->rgb, se->alpha);
		cairo_set_line_width(cr, se->width > 0 ? se->width : 1.5);
		cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
		cairo_stroke(cr);
	}
	free(ord);
	cairo_restore(cr);
	box(cr, &f);
	/* markers after the clip: a point on the frame (first or last step) is
	 * a whole dot over the frame line, not half of one */
	for (size_t s = 0; s < p->nseries; s++) {
		const struct plot_series *se = &p->series[s];
		if (!se->markers || se->y2)
			continue;
		rgb(cr, se->rgb, se->alpha);
		for (size_t i = 0; i < se->n; i++) {
			if (!isfinite(se->y[i]) || !isfinite(se->x[i]) || (p->logx && !(se->x[i] > 0)))
				continue;
			double mx = px(&f, se->x[i]), my = py(&f, se->y[i]);
			if (mx < f.x - 0.5 || mx > f.x + f.w + 0.5 || my < f.y - 0.5 || my > f.y + f.h + 0.5)
				continue;
			cairo_arc(cr, mx, my, 3.5, 0, 2 * M_PI);
			cairo_fill(cr);
		}
	}
}

/* Label every k-th of many narrow categories: k the power of two >= need
 * (ranks 0, 16, 32, ...). */
static size_t every_pow2(double need)
{
	size_t k = 1;
	while ((double)k < need && k < ((size_t)1 << 30))
		k *= 2;
	return k;
}

static void draw_bars(cairo_t *cr, const struct plot_panel *p, double x, double y, double w, double h)
{
	struct frame f = mkframe(x + 70, y + 28, w - 70 - 16, h - 28 - 50);
	panel_legend(cr, p, &f);
	double yl = INFINITY, yh = -INFINITY;
	for (size_t s = 0; s < p->nseries; s++)
		for (size_t i = 0; i < p->ncats && i < p->series[s].n; i++)
			if (isfinite(p->series[s].y[i]))
				yl = fmin(yl, p->series[s].y[i]), yh = fmax(yh, p->series[s].y[i]);
	axis_fit(&f.ay, yl, yh * 1.08, 1, 6);
	grid_y(cr, &f, 1);
	labels(cr, p, x, y, w, h, &f);
	if (!isfinite(yl) || !p->ncats) {
		empty(cr, &f, p->empty_text);
		box(cr, &f);
		return;
	}
	double gw = f.w / (double)p->ncats, bw = gw * 0.8 / (double)(p->nseries ? p->nseries : 1);
	char b[64];
	/* many narrow categories (ranks): a label on every k-th bar only */
	size_t every = 1;
	font(cr, 11, 0);
	for (size_t i = 0; i < p->ncats; i++)
		if (!strchr(p->cats[i], ' ') && text_w(cr, p->cats[i]) + 6 > gw) {
			size_t k = every_pow2((text_w(cr, p->cats[i]) + 6) / gw);
			every = k > every ? k : every;
		}
	for (size_t i = 0; i < p->ncats; i++) {
		for (size_t s = 0; s < p->nseries; s++) {
			const struct plot_series *se = &p->series[s];
			if (i >= se->n || !isfinite(se->y[i]))
				continue;
			double x0 = f.x + gw * (double)i + gw * 0.1 + bw * (double)s;
			double y0 = py(&f, 0), y1 = py(&f, se->y[i]);
			rgb(cr, se->bar_rgb ? se->bar_rgb[i] : se->rgb, se->alpha);
			cairo_rectangle(cr, x0, fmin(y0, y1), bw * 0.92, fabs(y1 - y0));
			cairo_fill(cr);
			if (bw > 26) {
				font(cr, 9, 0);
				rgb(cr, 0x333333, 1);
				snprintf(b, sizeof(b), "%.3g", se->y[i]);
				text(cr, x0 + bw * 0.46, fmin(y0, y1) - 3, b, 0.5, 0);
			}
		}
		if (i % every)
			continue;
		font(cr, 11, 0);
		rgb(cr, 0x222222, 1);
		double cx = f.x + gw * ((double)i + 0.5);
		cat_label(cr, cx, f.y + f.h + 16, p->cats[i], gw - 4);
	}
	box(cr, &f);
}

static void draw_barh(cairo_t *cr, const struct plot_panel *p, double x, double y, double w, double h)
{
	double lw = 0;
	font(cr, 11, 0);
	for (size_t i = 0; i < p->ncats; i++)
		lw = fmax(lw, text_w(cr, p->cats[i]));
	struct frame f = mkframe(x + lw + 16, y + 28, w - lw - 16 - 24, h - 28 - 50);
	panel_legend(cr, p, &f);
	double xl = INFINITY, xh = -INFINITY;
	for (size_t s = 0; s < p->nseries; s++)
		for (size_t i = 0; i < p->ncats && i < p->series[s].n; i++)
			if (isfinite(p->series[s].y[i]))
				xl = fmin(xl, p->series[s].y[i]), xh = fmax(xh, p->series[s].y[i]);
	double pad = (fmax(xh, 0) - fmin(xl, 0)) * 0.15;
	axis_fit(&f.ax, fmin(xl, 0) - (xl < 0 ? pad : 0), fmax(xh, 0) + (xh > 0 ? pad : 0), 1, 6);
	grid_x(cr, &f);
	labels(cr, p, x, y, w, h, &f);
	if (!isfinite(xl) || !p->ncats) {
		empty(cr, &f, p->empty_text);
		box(cr, &f);
		return;
	}
	double gh = f.h / (double)p->ncats, bh = gh * 0.8 / (double)(p->nseries ? p->nseries : 1);
	char b[64];
	for (size_t i = 0; i < p->ncats; i++) {
		font(cr, 11, 0);
		rgb(cr, 0x222222, 1);
		text(cr, f.x - 6, f.y + gh * ((double)i + 0.5), p->cats[i], 1, 1);
		for (size_t s = 0; s < p->nseries; s++) {
			const struct plot_series *se = &p->series[s];
			if (i >= se->n || !isfinite(se->y[i]))
				continue;
			double y0 = f.y + gh * (double)i + gh * 0.1 + bh * (double)s;
			double x0 = px(&f, 0), x1 = px(&f, se->y[i]);
			rgb(cr, se->bar_rgb ? se->bar_rgb[i] : se->rgb, se->alpha);
			cairo_rectangle(cr, fmin(x0, x1), y0, fmax(fabs(x1 - x0), 1), bh * 0.9);
			cairo_fill(cr);
			font(cr, 10, 0);
			rgb(cr, 0x222222, 1);
			snprintf(b, sizeof(b), "%+.2f%%%s%s", se->y[i], se->name && p->nseries > 1 ? " " : "",
				 se->name && p->nseries > 1 ? se->name : "");
			if (se->y[i] >= 0)
				text(cr, x1 + 4, y0 + bh * 0.45, b, 0, 1);
			else
				text(cr, x1 - 4, y0 + bh * 0.45, b, 1, 1);
		}
	}
	rgb(cr, 0x222222, 1);
	cairo_set_line_width(cr, 1.5);
	cairo_move_to(cr, floor(px(&f, 0)) + 0.5, f.y);
	cairo_line_to(cr, floor(px(&f, 0)) + 0.5, f.y + f.h);
	cairo_stroke(cr);
	box(cr, &f);
}

/* viridis (colour-blind safe, perceptually uniform), t in [0, 1] */
static uint32_t viridis(double t)
{
	static const uint32_t v[5] = { 0x440154, 0x3B528B, 0x21918C, 0x5DC863, 0xFDE725 };
	t = !isfinite(t) ? 0 : t < 0 ? 0 : t > 1 ? 1 : t;
	double u = t * 4;
	int i = (int)floor(u);
	if (i >= 4)
		return v[4];
	double f = u - i;
	uint32_t out = 0;
	for (int sh = 16; sh >= 0; sh -= 8) {
		double a = (v[i] >> sh) & 255, b = (v[i + 1] >> sh) & 255;
		out |= (uint32_t)lround(a + (b - a) * f) << sh;
	}
	return out;
}

/* diverging: white to green (t > 0) or red (t < 0), |t| in [0, 1] */
static uint32_t diverging(double t)
{
	uint32_t col = t >= 0 ? OI_GREEN : OI_RED, out = 0;
	double a = fmin(fabs(t), 1.0);
	for (int sh = 16; sh >= 0; sh -= 8)
		out |= (uint32_t)lround(255 - a * (255 - ((col >> sh) & 255))) << sh;
	return out;
}

static void draw_heatmap(cairo_t *cr, const struct plot_panel *p, double x, double y, double w, double h)
{
	double lw = 0;
	font(cr, 11, 0);
	for (size_t i = 0; i < p->nrows; i++)
		lw = fmax(lw, text_w(cr, p->rows[i]));
	double yl = p->ylabel ? 22 : 0; /* room for the rotated row-axis label */
	struct frame f = mkframe(x + yl + lw + 16, y + 28, w - yl - lw - 16 - 90, h - 28 - 50);
	panel_legend(cr, p, &f);
	labels(cr, p, x, y, w, h, &f);
	if (!p->nrows || !p->ncats) {
		empty(cr, &f, p->empty_text);
		return;
	}
	const double *tone = p->tone ? p->tone : p->cells;
	double vmax = p->vmax, lo = INFINITY, hi = -INFINITY;
	for (size_t i = 0; i < p->nrows * p->ncats; i++)
		if (isfinite(tone[i]) && isfinite(p->cells[i]))
			lo = fmin(lo, tone[i]), hi = fmax(hi, tone[i]);
	if (!(vmax > 0)) {
		vmax = isfinite(lo) ? fmax(fabs(lo), fabs(hi)) : 1;
		if (!(vmax > 0))
			vmax = 1;
	}
	double cw = f.w / (double)p->ncats, ch = f.h / (double)p->nrows;
	char b[64];
	/* rows lower than a line of text (1,024 ranks): a label every k-th row */
	size_t row_every = ch >= 13 ? 1 : every_pow2(13 / ch);
	for (size_t r = 0; r < p->nrows; r++) {
		for (size_t c = 0; c < p->ncats; c++) {
			double v = p->cells[r * p->ncats + c], t = tone[r * p->ncats + c];
			double cx = f.x + cw * (double)c, cy = f.y + ch * (double)r;
			uint32_t col = 0xEEEEEE;
			if (isfinite(v))
				col = p->sequential ? viridis(hi > lo ? (t - lo) / (hi - lo) : 0.5) : diverging(t / vmax);
			rgb(cr, col, 1);
			cairo_rectangle(cr, cx, cy, cw, ch);
			cairo_fill(cr);
			if (isfinite(v) && cw > 40 && ch > 14) {
				double lum = 0.299 * ((col >> 16) & 255) + 0.587 * ((col >> 8) & 255) + 0.114 * (col & 255);
				font(cr, fmin(11, ch * 0.5), 0);
				rgb(cr, lum < 128 ? 0xFFFFFF : 0x111111, 1);
				if (p->sequential || (p->cell_unit && strcmp(p->cell_unit, "%"))) /* values, not changes */
					snprintf(b, sizeof(b), "%.4g%s", v, p->cell_unit ? p->cell_unit : "");
				else
					snprintf(b, sizeof(b), "%+.1f%s", v, p->cell_unit ? p->cell_unit : "");
				text(cr, cx + cw / 2, cy + ch / 2, b, 0.5, 1);
			}
		}
		if (r % row_every)
			continue;
		font(cr, 11, 0);
		rgb(cr, 0x222222, 1);
		text(cr, f.x - 6, f.y + ch * ((double)r + 0.5), p->rows[r], 1, 1);
	}
	for (size_t c = 0; c < p->ncats; c++) {
		font(cr, 11, 0);
		rgb(cr, 0x222222, 1);
		double cx = f.x + cw * ((double)c + 0.5);
		cat_label(cr, cx, f.y + f.h + 16, p->cats[c], cw - 4);
	}
	/* colour key: top is "better" (diverging) or the highest value (sequential) */
	double kx = f.x + f.w + 16, ky = f.y + 14, kh = f.h - 28;
	for (int i = 0; i < 100; i++) {
		double t = 1 - i / 99.0;
		rgb(cr, p->sequential ? viridis(t) : diverging(2 * t - 1), 1);
		cairo_rectangle(cr, kx, ky + kh * i / 100.0, 14, kh / 100.0 + 0.6);
		cairo_fill(cr);
	}
	char klo[64], khi[64];
	if (p->sequential && isfinite(lo)) {
		snprintf(klo, sizeof(klo), "%.4g%s", lo, p->tone ? "" : p->cell_unit ? p->cell_unit : "");
		snprintf(khi, sizeof(khi), "%.4g%s", hi, p->tone ? "" : p->cell_unit ? p->cell_unit : "");
	} else {
		snprintf(klo, sizeof(klo), "%s", p->sequential ? "low" : "worse");
		snprintf(khi, sizeof(khi), "%s", p->sequential ? "high" : "better");
	}
	font(cr, 10, 0);
	rgb(cr, 0x222222, 1);
	text(cr, kx, ky - 4, p->key_hi ? p->key_hi : khi, 0, 0);
	text(cr, kx, ky + kh + 12, p->key_lo ? p->key_lo : klo, 0, 0);
}

static void draw_gantt(cairo_t *cr, const struct plot_panel *p, double x, double y, double w, double h)
{
	double lw = 0;
	font(cr, 11, 0);
	for (size_t i = 0; i < p->ncats; i++)
		lw = fmax(lw, text_w(cr, p->cats[i]));
	struct frame f = mkframe(x + lw + 16, y + 28, w - lw - 16 - 16, h - 28 - 50);
	panel_legend(cr, p, &f);
	double xl = INFINITY, xh = -INFINITY;
	for (size_t i = 0; i < p->nrects; i++)
		if (isfinite(p->rects[i].x0) && isfinite(p->rects[i].x1))
			xl = fmin(xl, p->rects[i].x0), xh = fmax(xh, p->rects[i].x1);
	axis_fit(&f.ax, xl, xh, 0, 8);
	grid_x(cr, &f);
	labels(cr, p, x, y, w, h, &f);
	if (!p->nrects || !p->ncats) {
		empty(cr, &f, p->empty_text);
		box(cr, &f);
		return;
	}
	double rh = f.h / (double)p->ncats;
	for (size_t i = 0; i < p->ncats; i++) {
		font(cr, 11, 0);
		rgb(cr, 0x222222, 1);
		text(cr, f.x - 6, f.y + rh * ((double)i + 0.5), p->cats[i], 1, 1);
		if (i % 2) {
			cairo_set_source_rgba(cr, 0, 0, 0, 0.03);
			cairo_rectangle(cr, f.x, f.y + rh * (double)i, f.w, rh);
			cairo_fill(cr);
		}
	}
	for (size_t i = 0; i < p->nrects; i++) {
		const struct plot_rect *r = &p->rects[i];
		if (r->row < 0 || (size_t)r->row >= p->ncats)
			continue;
		double x0 = px(&f, r->x0), x1 = px(&f, r->x1);
		double y0 = f.y + rh * (double)r->row + rh * 0.15, hh = rh * 0.7;
		if (r->half) {
			y0 += hh * 0.55;
			hh *= 0.45;
		}
		rgb(cr, r->rgb, r->alpha);
		cairo_rectangle(cr, x0, y0, fmax(x1 - x0, 1), hh);
		cairo_fill(cr);
	}
	box(cr, &f);
}

static void draw(cairo_t *cr, const struct plot_chart *c)
{
	double W = c->width, H = c->height, top = 40;
	cairo_set_source_rgb(cr, 1, 1, 1);
	cairo_paint(cr);
	font(cr, 17, 1);
	rgb(cr, 0x111111, 1);
	if (c->title)
		text(cr, W / 2, 26, c->title, 0.5, 0);
	if (c->note) {
		font(cr, 11, 0);
		rgb(cr, 0x555555, 1);
		text(cr, W / 2, 44, c->note, 0.5, 0);
		top = 52;
	}
	int cols = c->cols > 0 ? c->cols : 1;
	size_t rows = (c->npanels + (size_t)cols - 1) / (size_t)cols;
	if (!rows)
		return;
	double pw = W / cols, ph = (H - top) / (double)rows;
	for (size_t i = 0; i < c->npanels; i++) {
		double x = pw * (double)(i % (size_t)cols), y = top + ph * (double)(i / (size_t)cols);
		const struct plot_panel *p = &c->panels[i];
		switch (p->kind) {
		case PK_LINE:
			draw_line(cr, p, x, y, pw, ph);
			break;
		case PK_BARS:
			draw_bars(cr, p, x, y, pw, ph);
			break;
		case PK_BARH:
			draw_barh(cr, p, x, y, pw, ph);
			break;
		case PK_HEATMAP:
			draw_heatmap(cr, p, x, y, pw, ph);
			break;
		case PK_GANTT:
			draw_gantt(cr, p, x, y, pw, ph);
			break;
		}
	}
}

int aorta_plot_render(const struct plot_chart *c, const char *png, const char *svg, char *err, size_t errlen)
{
	if (!c || c->width < 100 || c->height < 100 || c->width > 20000 || c->height > 20000) {
		snprintf(err, errlen, "bad chart size");
		return -1;
	}
	if (png) {
		cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, c->width, c->height);
		cairo_t *cr = cairo_create(s);
		draw(cr, c);
		cairo_status_t st = cairo_status(cr);
		cairo_destroy(cr);
		if (st == CAIRO_STATUS_SUCCESS)
			st = cairo_surface_write_to_png(s, png);
		cairo_surface_destroy(s);
		if (st != CAIRO_STATUS_SUCCESS) {
			snprintf(err, errlen, "cannot write '%s': %s", png, cairo_status_to_string(st));
			return -1;
		}
	}
	if (svg) {
		cairo_surface_t *s = cairo_svg_surface_create(svg, c->width, c->height);
		cairo_t *cr = cairo_create(s);
		draw(cr, c);
		cairo_status_t st = cairo_status(cr);
		cairo_destroy(cr);
		cairo_surface_finish(s);
		if (st == CAIRO_STATUS_SUCCESS)
			st = cairo_surface_status(s);
		cairo_surface_destroy(s);
		if (st != CAIRO_STATUS_SUCCESS) {
			snprintf(err, errlen, "cannot write '%s': %s", svg, cairo_status_to_string(st));
			return -1;
		}
	}
	return 0;
}

int aorta_plot_png_stats(const char *png, int *w, int *h, const uint32_t *want, size_t n, size_t *counts,
			 size_t *nonwhite, char *err, size_t errlen)
{
	cairo_surface_t *s = cairo_image_surface_create_from_png(png);
	if (cairo_surface_status(s) != CAIRO_STATUS_SUCCESS) {
		snprintf(err, errlen, "cannot read '%s': %s", png, cairo_status_to_string(cairo_surface_status(s)));
		cairo_surface_destroy(s);
		return -1;
	}
	cairo_surface_flush(s);
	*w = cairo_image_surface_get_width(s);
	*h = cairo_image_surface_get_height(s);
	int stride = cairo_image_surface_get_stride(s);
	const unsigned char *d = cairo_image_surface_get_data(s);
	for (size_t k = 0; k < n; k++)
		counts[k] = 0;
	*nonwhite = 0;
	for (int y = 0; y < *h; y++) {
		const uint32_t *row = (const uint32_t *)(const void *)(d + (size_t)y * (size_t)stride);
		for (int x = 0; x < *w; x++) {
			uint32_t px_ = row[x] & 0xFFFFFFu; /* opaque: no premultiplication to undo */
			if (px_ != 0xFFFFFFu)
				(*nonwhite)++;
			for (size_t k = 0; k < n; k++)
				if (px_ == want[k])
					counts[k]++;
		}
	}
	cairo_surface_destroy(s);
	return 0;
}
