/*
 * report_html.c - index.html of `aorta report` and its written verdict.
 *
 * One self-contained page: inline CSS, no script, no network; every chart
 * is embedded as a base64 PNG (data: URI), so the file can be mailed or
 * attached to an issue as it is.  Sections: the verdict (where the time of
 * a step goes, and what changed against the reference), the run
 * configurations side by side, the summary figures with percentiles, the
 * comparisons with coloured verdicts, then the charts.  Every text that
 * comes from the inputs (labels, paths, config files) is HTML-escaped.
 * Written through out_open/out_commit: complete or absent.
 */
#include "report/report_html.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/output.h"
#include "report/compare.h"
#include "base/visible.h"
#include "report/hang_out.h"
#include "report/html.h"
#include "report/report_change.h"

#ifndef AORTA_VERSION
#define AORTA_VERSION "0.1.0"
#endif

static void html_emit(void *ctx, const char *s, size_t n)
{
	FILE *f = ctx;
	for (size_t i = 0; i < n; i++) {
		switch (s[i]) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(s[i], f);
		}
	}
}

/* Control characters, stray bytes and direction overrides shown as
 * escapes (base/visible.h), as on the terminal; then HTML's four. */
void html_escape(FILE *f, const char *s)
{
	if (s)
		vis_run((const unsigned char *)s, strlen(s), 1, html_emit, f);
}

int html_base64_file(FILE *out, const char *path)
{
	static const char T[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	FILE *f = fopen(path, "rb");
	unsigned char in[3 * 4096];
	char o[4 * 4096 + 4];
	size_t n;
	if (!f)
		return -1;
	while ((n = fread(in, 1, sizeof(in), f)) > 0) {
		size_t k = 0;
		for (size_t i = 0; i < n; i += 3) {
			unsigned v = (unsigned)in[i] << 16 | (i + 1 < n ? (unsigned)in[i + 1] << 8 : 0) |
				     (i + 2 < n ? in[i + 2] : 0);
			o[k++] = T[v >> 18 & 63];
			o[k++] = T[v >> 12 & 63];
			o[k++] = i + 1 < n ? T[v >> 6 & 63] : '=';
			o[k++] = i + 2 < n ? T[v & 63] : '=';
		}
		fwrite(o, 1, k, out);
		if (n < sizeof(in))
			break;
	}
	int bad = ferror(f);
	fclose(f);
	return bad ? -1 : 0;
}


static void num(FILE *f, double v, const char *unit)
{
	if (isfinite(v))
		fprintf(f, "%.3f%s", v, unit);
	else
		fputs("n/a", f);
}

/* ---- verdict ------------------------------------------------------------------ */

struct sb {
	char *s;
	size_t n, cap;
};

static void sbf(struct sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sbf(struct sb *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	GROW(b->s, b->cap, b->n + (size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(b->s + b->n, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->n += (size_t)n;
}

static double share(double part, double whole)
{
	return whole > 0 ? 100.0 * part / whole : NAN;
}

char *report_verdict(const struct report *r)
{
	struct sb b = { 0 };
	sbf(&b, "%s", "");
	for (size_t i = 0; i < r->nds; i++) {
		const struct rep_dataset *d = &r->ds[i];
		if (!d->kept) {
			sbf(&b, "%s: no steps to report (%zu read, %d warm-up steps skipped per rank).\n", d->label, d->read,
			    r->o.skip_steps);
			continue;
		}
		const struct rep_stat *s = d->stat;
		double step = s[RF_STEP].mean;
		sbf(&b, "%s: a step takes %.3f ms on average (p50 %.3f, p99 %.3f ms) over %zu rank%s and %zu steps. ",
		    d->label, step, s[RF_STEP].p50, s[RF_STEP].p99, d->nranks, d->nranks == 1 ? "" : "s", d->kept);
		/* the diagnosis first: the one analyze prints */
		if (d->diag.kind != DIAG_NONE)
			sbf(&b, "Diagnosis: %s. ", d->diag.headline);
		else if (!d->diag.has_cross_rank && d->diag.why_no_cross_rank && d->nranks > 1)
			sbf(&b, "No waiting or late-rank figures: %s. ", d->diag.why_no_cross_rank);
		sbf(&b, "Compute %.3f ms; communication %.3f ms, of which %.3f ms overlaps compute and %.3f ms is "
			"exposed (%.1f%% of the step)", s[RF_COMPUTE].mean, s[RF_COMM].mean, s[RF_OVERLAP].mean,
		    s[RF_EXPOSED].mean, share(s[RF_EXPOSED].mean, step));
		if (d->diag.has_cross_rank && d->diag.wait_ns + d->diag.transfer_ns > 0 &&
		    d->diag.wait_ns > d->diag.transfer_ns)
			sbf(&b, ", most of it waiting for a late peer rather than transfer");
		sbf(&b, "; idle %.3f ms. Overlap ratio (overlap / compute) %.4f.\n", s[RF_IDLE].mean, d->ratio);
		if (s[RF_COMM].mean == 0 && s[RF_OVERLAP].mean == 0)
			sbf(&b, "%s: no communication was recorded on the comm streams; if the run used NCCL through "
				"PyTorch's internal stream (DDP's reducer, async collectives), the recorded overlap is 0 "
				"by construction, not by measurement.\n",
			    d->label);
		if (d->bad_lines)
			sbf(&b, "%s: %lld record%s could not be read (a run cut short?) and %s left out.\n", d->label,
			    d->bad_lines, d->bad_lines == 1 ? "" : "s", d->bad_lines == 1 ? "was" : "were");
	}
	for (int q = 0; r->ref >= 0 && q < r->ncand; q++) {
		const struct rep_dataset *x = &r->ds[r->ref], *y = &r->ds[r->cand[q]];
		if (!x->kept || !y->kept)
			continue;
		int slower = rep_step_slower(r, x, y);
		/* the verdict `aorta compare` prints for the same two runs */
		struct cmp_result cr;
		const struct cmp_opts co = { r->o.threshold_pct, 0.05, -1 };
		compare_runs(x->a, y->a, &co, &cr);
		sbf(&b, "%s against %s: %s ", y->label, x->label, cr.verdict);
		/* the biggest directional changes */
		int order[REP_NCMP], n = 0;
		for (int k = 1; k < REP_NCMP; k++) {
			double a = rep_cmp_value(x, k), c = rep_cmp_value(y, k);
			const char *vk = rep_cmp_verdict(r, x, y, a, c, k, slower);
			if (strcmp(vk, "similar") && strcmp(vk, "n/a") && strcmp(vk, "absent") && strcmp(vk, "changed") &&
			    isfinite(change_pct(a, c)))
				order[n++] = k;
		}
		for (int i = 0; i < n; i++) /* sort by |change| */
			for (int j = i + 1; j < n; j++) {
				double a = fabs(change_pct(rep_cmp_value(x, order[i]), rep_cmp_value(y, order[i])));
				double c = fabs(change_pct(rep_cmp_value(x, order[j]), rep_cmp_value(y, order[j])));
				if (c > a) {
					int t = order[i];
					order[i] = order[j];
					order[j] = t;
				}
			}
		if (!n)
			sbf(&b, "No other figure changed by more than %.3g%%.", r->o.threshold_pct);
		else
			sbf(&b, "What changed most:");
		for (int i = 0; i < n && i < 4; i++) {
			int k = order[i];
			double a = rep_cmp_value(x, k), c = rep_cmp_value(y, k);
			sbf(&b, "%s %s %s (%.4g -> %.4g, %+.1f%%)", i ? ";" : "", rep_cmp_label(k),
			    rep_cmp_verdict(r, x, y, a, c, k, slower), a, c, change_pct(a, c));
		}
		sbf(&b, "%s Overlap ratio %.4f -> %.4f (delta %+.4f).\n", n ? "." : "", x->ratio, y->ratio, y->ratio - x->ratio);
	}
	return b.s;
}

/* ---- page ---------------------------------------------------------------------- */

static const char CSS[] =
	"body{font-family:'DejaVu Sans',Arial,sans-serif;margin:24px auto;max-width:1240px;color:#111;"
	"background:#fff;line-height:1.45}h1{font-size:26px;margin:0 0 4px}h2{font-size:20px;margin-top:32px;"
	"border-bottom:2px solid #0072B2;padding-bottom:3px}table{border-collapse:collapse;margin:8px 0;"
	"font-size:13px}td,th{border:1px solid #bbb;padding:4px 8px;text-align:right;vertical-align:top}"
	"th{background:#eef3f8}td.l,th.l{text-align:left}.better{background:#cdeee3}.worse{background:#f6d5c2}"
	".similar{background:#eee}.verdict p{margin:6px 0;font-size:15px}.note{background:#fff7d6;border:1px solid"
	" #E69F00;padding:8px 12px;margin:12px 0}figure{margin:18px 0}figure img{max-width:100%;border:1px solid"
	" #ddd}figcaption{font-size:13px;color:#444}pre{font-size:11px;text-align:left;margin:0;max-height:220px;"
	"overflow:auto}.meta{color:#555;font-size:13px}";

static void fig_row(FILE *f, const struct report *r, const char *name, int k, int stat)
{
	fprintf(f, "<tr><td class=l>%s (ms)</td>", name);
	for (size_t i = 0; i < r->nds; i++) {
		const struct rep_dataset *d = &r->ds[i];
		fputs("<td>", f);
		if (d->kept) {
			const struct rep_stat *s = &d->stat[k];
			num(f, stat == 0 ? s->mean : stat == 1 ? s->p50 : stat == 2 ? s->p90 : s->p99, "");
		} else {
			fputs("&ndash;", f);
		}
		fputs("</td>", f);
	}
	fputs("</tr>\n", f);
}

/* The verdict, a paragraph a line. */
static void html_verdict(FILE *f, const struct report *r)
{
	char *v = report_verdict(r);
	fputs("<h2>Verdict</h2>\n<div class=verdict>\n", f);
	for (char *line = v, *nl; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		fputs("<p>", f);
		html_escape(f, line);
		fputs("</p>\n", f);
		if (!nl)
			break;
	}
	fputs("</div>\n", f);
	free(v);
}

/* The runs' configurations, a column a run. */
static void html_configs(FILE *f, const struct report *r)
{
	fputs("<h2>Run configurations</h2>\n<table><tr><th class=l></th>", f);
	for (size_t i = 0; i < r->nds; i++) {
		fputs("<th>", f);
		html_escape(f, r->ds[i].label);
		fputs(i == (size_t)r->ref ? " (reference)" : "", f);
		fputs("</th>", f);
	}
	fputs("</tr>\n", f);
	static const char *const rows[] = { "input", "format", "ranks", "world size", "steps read", "steps used",
					    "warm-up steps skipped", "records left out", "diagnosis",
					    "global steps", "run configuration" };
	for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		fprintf(f, "<tr><td class=l>%s</td>", rows[k]);
		for (size_t i = 0; i < r->nds; i++) {
			const struct rep_dataset *d = &r->ds[i];
			fputs("<td class=l>", f);
			switch (k) {
			case 0: html_escape(f, d->input); break;
			case 1: html_escape(f, d->format ? d->format : "?"); break;
			case 2: fprintf(f, "%zu", d->nranks); break;
			case 3: fprintf(f, "%d", d->world_size); break;
			case 4: fprintf(f, "%zu", d->read); break;
			case 5: fprintf(f, "%zu", d->kept); break;
			case 6: fprintf(f, "%zu", d->read - d->kept); break;
			case 7: fprintf(f, "%lld", d->bad_lines); break;
			case 8: html_escape(f, d->diag.kind != DIAG_NONE ? d->diag.headline : "none"); break;
			case 9: {
				long long lo = LLONG_MAX, hi = LLONG_MIN;
				for (size_t q = 0; q < d->nranks; q++)
					for (size_t t = 0; t < d->ranks[q].nsteps; t++) {
						long long g = rep_step_gstep(&d->ranks[q], t);
						lo = g < lo ? g : lo;
						hi = g > hi ? g : hi;
					}
				if (hi >= lo)
					fprintf(f, "%lld &ndash; %lld", lo, hi);
				break;
			}
			case 10:
				if (d->config_text) {
					fputs("<pre>", f);
					html_escape(f, d->config_text);
					fputs("</pre>", f);
				} else {
					fputs("(none found beside the inputs)", f);
				}
				break;
			}
			fputs("</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

/* The figures of each run, ms per step over all ranks. */
static void html_summary(FILE *f, const struct report *r)
{
	fputs("<h2>Summary (ms per step, all ranks pooled)</h2>\n<table><tr><th class=l>figure (unit)</th>", f);
	for (size_t i = 0; i < r->nds; i++) {
		fputs("<th>", f);
		html_escape(f, r->ds[i].label);
		fputs("</th>", f);
	}
	fputs("</tr>\n<tr><td class=l>steps (count)</td>", f);
	for (size_t i = 0; i < r->nds; i++)
		fprintf(f, "<td>%zu</td>", r->ds[i].kept);
	fputs("</tr>\n<tr><td class=l>mean loss (as logged)</td>", f);
	for (size_t i = 0; i < r->nds; i++) {
		fputs("<td>", f);
		if (r->ds[i].has_loss && r->ds[i].kept)
			fprintf(f, "%.5f", r->ds[i].loss.mean);
		else
			fputs("&ndash;", f);
		fputs("</td>", f);
	}
	fputs("</tr>\n", f);
	for (int k = 0; k < RF__COUNT; k++)
		fig_row(f, r, REP_FIGS[k].label, k, 0);
	fig_row(f, r, "step time p50", RF_STEP, 1);
	fig_row(f, r, "step time p90", RF_STEP, 2);
	fig_row(f, r, "step time p99", RF_STEP, 3);
	fig_row(f, r, "exposed comm p99", RF_EXPOSED, 3);
	fputs("<tr><td class=l>overlap ratio (overlap / compute, ratio)</td>", f);
	for (size_t i = 0; i < r->nds; i++)
		if (r->ds[i].kept && isfinite(r->ds[i].ratio))
			fprintf(f, "<td>%.4f</td>", r->ds[i].ratio);
		else
			fputs("<td>n/a</td>", f);
	fputs("</tr>\n</table>\n", f);
}

/* Each candidate against the reference, figure by figure. */
static void html_comparisons(FILE *f, const struct report *r)
{
	for (int q = 0; r->ref >= 0 && q < r->ncand; q++) {
		const struct rep_dataset *x = &r->ds[r->ref], *y = &r->ds[r->cand[q]];
		fputs("<h2>", f);
		html_escape(f, y->label);
		fputs(" against ", f);
		html_escape(f, x->label);
		fputs("</h2>\n<table><tr><th class=l>figure (unit)</th><th>reference</th><th>candidate</th>"
		      "<th>change (unit of the figure)</th><th>change (%)</th><th class=l>verdict</th></tr>\n", f);
		int slower = rep_step_slower(r, x, y);
		for (int k = 0; k < REP_NCMP; k++) {
			double a = rep_cmp_value(x, k), c = rep_cmp_value(y, k);
			const char *vv = rep_cmp_verdict(r, x, y, a, c, k, slower);
			fprintf(f, "<tr><td class=l>%s (%s)</td><td>", rep_cmp_label(k), k == RF__COUNT ? "ratio" : "ms");
			num(f, a, "");
			fputs("</td><td>", f);
			num(f, c, "");
			fputs("</td><td>", f);
			if (isfinite(c - a))
				fprintf(f, "%+.3f", c - a);
			else
				fputs("n/a", f);
			fputs("</td><td>", f);
			double p = change_pct(a, c);
			if (isfinite(p))
				fprintf(f, "%+.2f%%", p);
			else
				fputs("n/a", f);
			fprintf(f, "</td><td class=\"l %s\">%s</td></tr>\n", vv, vv);
		}
		fputs("</table>\n", f);
	}
}

/* The charts by section, each PNG inlined; -1 when one cannot be read
 * back (*bad: its path). */
static int html_charts(FILE *f, const struct rep_images *img, const char *dir, char *bad, size_t badn)
{
	static const char *const secs[][2] = { { "timeline", "Timelines" }, { "gantt", "Streams of chosen steps" },
					       { "compare", "Comparison charts" }, { "collectives", "Collectives" },
					       { "whatif", "What-if: the step if fixed" } };
	for (size_t s = 0; s < sizeof(secs) / sizeof(secs[0]); s++) {
		int any = 0;
		for (size_t i = 0; img && i < img->n; i++) {
			if (strcmp(img->v[i].section, secs[s][0]))
				continue;
			if (!any)
				fprintf(f, "<h2>%s</h2>\n", secs[s][1]);
			any = 1;
			char p[4096];
			snprintf(p, sizeof(p), "%s/%s.png", dir, img->v[i].name);
			fputs("<figure><img alt=\"", f);
			html_escape(f, img->v[i].title);
			fputs("\" src=\"data:image/png;base64,", f);
			if (html_base64_file(f, p) != 0) {
				snprintf(bad, badn, "%s", p);
				return -1;
			}
			fputs("\"><figcaption>", f);
			html_escape(f, img->v[i].caption);
			fputs(" (also ", f);
			html_escape(f, img->v[i].name);
			fputs(".png and .svg)</figcaption></figure>\n", f);
		}
	}
	return 0;
}

enum aorta_status report_write_html(const struct report *r, const struct rep_images *img, const char *dir,
				    const char *plot_why, struct aorta_error *e)
{
	char path[4096];
	struct outfile of = { 0 };
	snprintf(path, sizeof(path), "%s/index.html", dir);
	enum aorta_status st = out_open(&of, path, e);
	if (st)
		return st;
	FILE *f = of.f;
	fprintf(f, "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>\n<title>aorta report</title>\n"
		   "<style>%s</style></head><body>\n", CSS);
	fprintf(f, "<h1>aorta report: where did the overlap go?</h1>\n<p class=meta>aorta %s &middot; schema %s "
		   "&middot; %zu dataset%s &middot; first %d steps of each rank skipped as warm-up",
		AORTA_VERSION, REPORT_SCHEMA, r->nds, r->nds == 1 ? "" : "s", r->o.skip_steps);
	if (r->o.skip_asked > r->o.skip_steps)
		fprintf(f, " (--skip-steps %d would have left a run no step: every step is used)", r->o.skip_asked);
	fprintf(f, " &middot; changes within %.3g%% or 0.05 ms are 'similar'</p>\n", r->o.threshold_pct);
	if (plot_why) {
		fputs("<div class=note>Charts were not drawn: ", f);
		html_escape(f, plot_why);
		fputs(". summary.json and this page are complete without them.</div>\n", f);
	}
	html_verdict(f, r);
	report_hang_html(f, r); /* a hang leads, where the runs have Flight Recorder dumps */
	html_configs(f, r);
	html_summary(f, r);
	html_comparisons(f, r);
	char bad[4096];
	if (html_charts(f, img, dir, bad, sizeof(bad))) {
		out_abort(&of);
		return aorta_fail(e, AORTA_EINTERNAL, bad, 0, -1, "cannot read the chart back");
	}
	fputs("</body></html>\n", f);
	return out_commit(&of, e);
}
