/*
 * report_html.h - index.html of `aorta report` and its written verdict (report_html.c).
 */
#ifndef AORTA_REPORT_INDEX_HTML_H
#define AORTA_REPORT_INDEX_HTML_H

#include "report/report_charts.h"

/* index.html (report_html.c); plot_why: why there are no images, or NULL. */
enum aorta_status report_write_html(const struct report *r, const struct rep_images *img,
				    const char *dir, const char *plot_why, struct aorta_error *e);
/* The written verdict, a few sentences per dataset and per candidate. */
char *report_verdict(const struct report *r);

#endif
