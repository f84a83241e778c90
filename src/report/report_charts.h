/*
 * report_charts.h - the charts of `aorta report` (report_charts.c), drawn through the
 * plot plug-in (report_plot.h).
 */
#ifndef AORTA_REPORT_CHARTS_H
#define AORTA_REPORT_CHARTS_H

#include "report/report_model.h"

/* The file-name stem of a label's charts: letters, digits, '-', '_', '.'
 * kept, anything else '_', at most n - 1 bytes (report_charts.c).  Two
 * labels with one stem would overwrite each other's charts: report refuses
 * them. */
#define REPORT_STEM_MAX 200
void report_label_stem(char *out, size_t n, const char *label);

/* Charts (report_charts.c): draws every chart into dir through the plug-in
 * and records their file names for the page.  lib NULL: none drawn. */
struct plot_lib;
struct rep_image {
	char *name;        /* file name without extension */
	char *title;
	char *caption;
	const char *section; /* "timeline", "gantt", "compare", "collectives" */
};
struct rep_images {
	struct rep_image *v;
	size_t n, cap;
	double seconds;
};
enum aorta_status report_draw(const struct report *r, struct plot_lib *lib, const char *dir,
			      struct rep_images *img, struct aorta_error *e);
void rep_images_free(struct rep_images *img);

#endif
