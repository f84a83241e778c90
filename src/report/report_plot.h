/*
 * report_plot.h - charts as data, drawn by a plug-in.
 *
 * `aorta report` describes every chart with the plain structs below (panels
 * of lines, bars, a heatmap or a Gantt chart, with titles, axis labels with
 * units and legend names) and hands them to build/libaorta-plot.so, which
 * draws them with cairo to PNG and SVG.  The binary itself links no plotting
 * library, so it starts on GPU machines without cairo; the plug-in is looked
 * up beside the binary (then its parent folder, for test programs under
 * build/tests) or at $AORTA_PLOT_LIB, exactly as `aorta train` finds
 * libaorta-gpu.so.  When it cannot be loaded report_plot_load returns NULL
 * with the reason and the report goes on without images.
 *
 * The plug-in owns nothing it is given and keeps nothing after a call; it
 * is thread-compatible (one call at a time per chart, charts may be drawn
 * from different threads).  PLOT_ABI changes whenever these structs change,
 * so a stale plug-in is refused rather than misread.
 */
#ifndef AORTA_REPORT_PLOT_H
#define AORTA_REPORT_PLOT_H

#include <stddef.h>
#include <stdint.h>

#define PLOT_ABI 5

/* Okabe & Ito's colour-blind-safe palette (0xRRGGBB). */
#define OI_ORANGE 0xE69F00u
#define OI_SKY 0x56B4E9u
#define OI_GREEN 0x009E73u     /* bluish green: "better" */
#define OI_YELLOW 0xF0E442u
#define OI_BLUE 0x0072B2u
#define OI_RED 0xD55E00u       /* vermillion: "worse" */
#define OI_PURPLE 0xCC79A7u
#define OI_GREY 0x999999u
#define OI_BLACK 0x000000u
extern const uint32_t PLOT_PALETTE[8];

enum plot_kind {
	PK_LINE,    /* series of (x, y) points over a continuous x (steps, sizes), joined
		     * in x order whatever order they are given in; band series fill y..y2 */
	PK_BARS,    /* vertical bars: categories on x (ranks, figures), one bar per series
		     * in each; with many categories every k-th is labelled */
	PK_BARH,    /* horizontal bars: categories on y, one bar per series */
	PK_HEATMAP, /* rows x cols of cells: diverging around 0 (change, better/worse) or
		     * sequential (values over a grid, e.g. a sweep's step time) */
	PK_GANTT,   /* rows of rectangles over time */
};

struct plot_series {
	const char *name;      /* legend text; NULL: not in the legend */
	uint32_t rgb;
	const double *x, *y;   /* PK_LINE: n points; PK_BARS/PK_BARH: y[ncats] (x unused) */
	const double *y2;      /* PK_LINE: non-NULL makes a band between y and y2 */
	const uint32_t *bar_rgb; /* PK_BARS/PK_BARH: a colour per bar, or NULL */
	size_t n;
	double width;          /* line width in px (0: 1.5) */
	double alpha;          /* 0: opaque */
	int markers;           /* PK_LINE: dots at the points */
};

struct plot_rect {             /* PK_GANTT */
	double x0, x1;
	int row;
	uint32_t rgb;
	double alpha;          /* 0: opaque */
	int half;              /* 1: lower half of the row only (overlap shading) */
};

struct plot_panel {
	enum plot_kind kind;
	const char *title, *xlabel, *ylabel; /* labels carry units, e.g. "time (ms)" */
	int logx;              /* PK_LINE: log2 x axis */
	int x_bytes;           /* PK_LINE: x ticks as sizes (KiB, MiB) */
	int y_from_zero;       /* PK_LINE/PK_BARS: y axis includes 0 */
	int x_integer;         /* PK_LINE: x ticks on whole numbers only, labels without
				* decimals (step axes); the points may lie between */
	const struct plot_series *series;
	size_t nseries;
	const char *const *cats; /* PK_BARS/PK_BARH categories; PK_HEATMAP columns; PK_GANTT rows */
	size_t ncats;
	const char *const *rows; /* PK_HEATMAP row labels */
	size_t nrows;
	const double *cells;   /* PK_HEATMAP: nrows * ncats values, row-major; NaN: no data */
	const double *tone;    /* PK_HEATMAP: colour per cell, > 0 green (better), < 0 red
				* (worse), |tone| / vmax the strength; NULL: the cells */
	double vmax;           /* PK_HEATMAP diverging: |value| at full colour (0: max |cell|) */
	const char *cell_unit; /* PK_HEATMAP: suffix of the printed value ("%", " ms") */
	int sequential;        /* PK_HEATMAP: 1: colour by tone (or cell) from its lowest to its
				* highest value on viridis (dark to yellow), the key labelled with
				* both; 0: diverging green/red around 0 */
	const char *key_lo, *key_hi; /* PK_HEATMAP: text at the key's low and high end (NULL:
				* "worse"/"better" diverging, the values sequential) */
	const struct plot_rect *rects;
	size_t nrects;
	const struct plot_series *legend_only; /* PK_GANTT legend entries */
	size_t nlegend;
	const char *empty_text; /* drawn when there is nothing to plot */
};

struct plot_chart {
	const char *title;
	int width, height;     /* pixels of the PNG (SVG: points, same numbers) */
	int cols;              /* panels per row (0: 1) */
	const struct plot_panel *panels;
	size_t npanels;
	const char *note;      /* a line of small text under the title, or NULL */
};

/* The plug-in's entry points (dlsym names in quotes). */
typedef int (*plot_abi_fn)(void);                                   /* "aorta_plot_abi" */
/* Draws c to png and svg (either may be NULL): 0, or -1 with err filled. */
typedef int (*plot_render_fn)(const struct plot_chart *c, const char *png, const char *svg,
			      char *err, size_t errlen);              /* "aorta_plot_render" */
/* Reads a PNG back: its size, how many pixels are exactly each of the n
 * colours in rgb[] (counts[n]) and how many are not white. */
typedef int (*plot_png_stats_fn)(const char *png, int *w, int *h, const uint32_t *rgb,
				 size_t n, size_t *counts, size_t *nonwhite, char *err,
				 size_t errlen);                      /* "aorta_plot_png_stats" */

/* Optional, for the tests: the ticks of a linear axis over [lo, hi]
 * (integer: whole numbers only); returns their count, writes at most max. */
typedef int (*plot_ticks_fn)(double lo, double hi, int integer, double *t, int max); /* "aorta_plot_ticks" */

struct plot_lib {
	void *handle;
	plot_render_fn render;
	plot_png_stats_fn png_stats;
	char path[4096];
};

/* Loads the plug-in (see above).  Returns 0, or -1 with why filled. */
int report_plot_load(struct plot_lib *p, char *why, size_t len);
void report_plot_unload(struct plot_lib *p);

#endif
