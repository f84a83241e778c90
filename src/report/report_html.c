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
#include "report/answer.h"
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
		struct job_step js = analysis_job_step(d->a);
		/* rank-steps counted as such; a percentile only over enough of them */
		sbf(&b, "%s: a step takes %.3f ms on average over %zu step%s of %zu rank%s (%zu rank-steps: median %.3f, "
			"min %.3f, max %.3f ms", d->label, step, js.steps, js.steps == 1 ? "" : "s", d->nranks,
		    d->nranks == 1 ? "" : "s", d->kept, s[RF_STEP].p50, s[RF_STEP].min, s[RF_STEP].max);
		if (s[RF_STEP].n >= REP_P99_MIN)
			sbf(&b, ", p99 %.3f ms", s[RF_STEP].p99);
		sbf(&b, "). ");
		/* the diagnosis first: the one analyze prints */
		if (d->diag.kind != DIAG_NONE)
			sbf(&b, "Diagnosis: %s. ", d->diag.headline);
		else if (!d->diag.has_cross_rank && d->diag.why_no_cross_rank && d->nranks > 1)
			sbf(&b, "No waiting or late-rank figures: %s. ", d->diag.why_no_cross_rank);
		sbf(&b, "Compute %.3f ms; communication %.3f ms, of which %.3f ms overlaps compute (overlapped comm) and "
			"%.3f ms is exposed (%.1f%% of the step)", s[RF_COMPUTE].mean, s[RF_COMM].mean, s[RF_OVERLAP].mean,
		    s[RF_EXPOSED].mean, share(s[RF_EXPOSED].mean, step));
		if (d->diag.has_cross_rank && d->diag.wait_ns + d->diag.transfer_ns > 0 &&
		    d->diag.wait_ns > d->diag.transfer_ns)
			sbf(&b, ", most of it waiting for a late peer rather than transfer");
		sbf(&b, "; idle %.3f ms. Overlapped comm / compute %.4f.", s[RF_IDLE].mean, d->ratio);
		if (isfinite(d->up_ratio)) /* upstream's own figure, under its own name */
			sbf(&b, " Upstream overlap_ratio (overlap_report.py over the run's JSONL, its own timers) %.4f.",
			    d->up_ratio);
		sbf(&b, "\n");
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
		sbf(&b, "%s Overlapped comm / compute %.4f -> %.4f (delta %+.4f).", n ? "." : "", x->ratio, y->ratio,
		    y->ratio - x->ratio);
		if (isfinite(x->up_ratio) && isfinite(y->up_ratio))
			sbf(&b, " Upstream overlap_ratio %.4f -> %.4f.", x->up_ratio, y->up_ratio);
		sbf(&b, "\n");
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
	"overflow:auto}.meta{color:#555;font-size:13px}.absent{background:#eee}table.answer{font-size:14px;width:100%}"
	"table.answer th{background:#eef3f8;white-space:nowrap;text-align:left;width:7em}h3{font-size:16px;"
	"margin:16px 0 4px}";

static void fig_row(FILE *f, const struct report *r, const char *name, int k, int stat)
{
	fprintf(f, "<tr><td class=l>%s (ms)</td>", name);
	for (size_t i = 0; i < r->nds; i++) {
		const struct rep_dataset *d = &r->ds[i];
		const struct rep_stat *s = d->kept ? &d->stat[k] : NULL;
		fputs("<td>", f);
		if (!s)
			fputs("&ndash;", f);
		else if (d->absent[k]) /* the run never runs that collective: as the comparison says */
			fputs("absent", f);
		else if ((stat == 2 && s->n < REP_P90_MIN) || (stat == 3 && s->n < REP_P99_MIN))
			fprintf(f, "n/a (%zu rank-steps)", s->n);
		else
			num(f, stat == 0 ? s->mean : stat == 1 ? s->p50 : stat == 2 ? s->p90 : s->p99, "");
		fputs("</td>", f);
	}
	fputs("</tr>\n", f);
}

/* The charts of one section (img->v[].section), in their order; -1 when a
 * chart cannot be read back. */
static int charts(FILE *f, const struct rep_images *img, const char *dir, const char *section, const char *h2)
{
	int any = 0;
	for (size_t i = 0; img && i < img->n; i++) {
		if (strcmp(img->v[i].section, section))
			continue;
		if (!any && h2)
			fprintf(f, "<h2>%s</h2>\n", h2);
		any = 1;
		char p[4096];
		snprintf(p, sizeof(p), "%s/%s.png", dir, img->v[i].name);
		fprintf(f, "<figure id=\"chart-%s\" class=\"chart %s\"><img alt=\"", img->v[i].name, section);
		html_escape(f, img->v[i].title);
		fputs("\" src=\"data:image/png;base64,", f);
		if (html_base64_file(f, p) != 0)
			return -1;
		fputs("\"><figcaption>", f);
		html_escape(f, img->v[i].caption);
		fputs(" (also ", f);
		html_escape(f, img->v[i].name);
		fputs(".png and .svg)</figcaption></figure>\n", f);
	}
	return any;
}

static void label_h3(FILE *f, const struct report *r, const char *label)
{
	if (r->nds < 2)
		return;
	fputs("<h3>", f);
	html_escape(f, label);
	fputs("</h3>\n", f);
}

/* The page as a person reads it: the summary (report/answer.h, the one
 * analyze and compare print first; a hang's verdict leads it), the hang
 * section where the runs have Flight Recorder dumps, the what-if chart with
 * the per-rank rows, the late rank's streams beside a healthy rank's, then
 * the rest. */
/* The page's head: the title line, what was skipped, what is similar. */
static void html_head(FILE *f, const struct report *r)
{
	fprintf(f, "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>\n<title>aorta report</title>\n"
		   "<style>%s</style></head><body>\n", CSS);
	fprintf(f, "<h1>aorta report: where did the overlap go?</h1>\n<p class=meta>aorta %s &middot; schema %s "
		   "&middot; %zu dataset%s &middot; first %d steps of each rank skipped as warm-up",
		AORTA_VERSION, REPORT_SCHEMA, r->nds, r->nds == 1 ? "" : "s", r->o.skip_steps);
	if (r->o.skip_asked > r->o.skip_steps)
		fprintf(f, " (--skip-steps %d would have left a run no step: every step is used)", r->o.skip_asked);
	fprintf(f, " &middot; changes within %.3g%% or 0.05 ms are 'similar'</p>\n", r->o.threshold_pct);
}

/* 1. The summary: each comparison's, then each run's (report/answer.c). */
static void html_summary(FILE *f, const struct report *r)
{
	fputs("<section id=summary>\n<h2>Summary</h2>\n", f);
	for (int q = 0; r->ref >= 0 && q < r->ncand; q++) {
		const struct rep_dataset *x = &r->ds[r->ref], *y = &r->ds[r->cand[q]];
		struct cmp_result cr;
		const struct cmp_opts co = { r->o.threshold_pct, 0.05, -1 };
		compare_runs(x->a, y->a, &co, &cr);
		struct answer s;
		answer_build_compare(x->a, y->a, x->label, y->label, &cr, &s);
		fputs("<h3>", f);
		html_escape(f, s.title);
		fputs("</h3>\n", f);
		answer_html(f, &s);
		answer_free(&s);
	}
	for (size_t i = 0; i < r->nds; i++) {
		label_h3(f, r, r->ds[i].label);
		if (r->ds[i].answer)
			answer_html(f, r->ds[i].answer);
	}
	fputs("</section>\n", f);
}

/* 2. The what-if chart and the per-rank rows of each run; -1 when a chart
 * cannot be read back. */
static int html_whatif(FILE *f, const struct report *r, const struct rep_images *img, const char *dir)
{
	fputs("<section id=whatif>\n<h2>What-if: the step if fixed, and the ranks</h2>\n", f);
	for (size_t i = 0; i < r->nds; i++) {
		char name[REPORT_STEM_MAX + 16], safe[REPORT_STEM_MAX + 1];
		report_label_stem(safe, sizeof(safe), r->ds[i].label);
		snprintf(name, sizeof(name), "%s_whatif", safe);
		label_h3(f, r, r->ds[i].label);
		for (size_t k = 0; img && k < img->n; k++)
			if (!strcmp(img->v[k].name, name)) {
				struct rep_images one = { &img->v[k], 1, 1, 0 };
				if (charts(f, &one, dir, "whatif", NULL) < 0)
					return -1;
			}
		const struct whatif *w = r->ds[i].a ? r->ds[i].a->whatif : NULL;
		if (w && !w->ok) {
			fputs("<p>Not replayed: ", f);
			html_escape(f, w->why);
			fputs("</p>\n", f);
		}
		if (r->ds[i].answer)
			answer_html_ranks(f, r->ds[i].answer);
	}
	fputs("</section>\n", f);
	return 0;
}

/* 4. The verdict in words, a paragraph a line. */
static void html_verdict(FILE *f, const struct report *r)
{
	char *v = report_verdict(r);
	fputs("<h2>In words</h2>\n<div class=verdict>\n", f);
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
	static const char *const rows[] = { "input", "format", "ranks", "world size", "rank-steps read", "rank-steps used",
					    "warm-up rank-steps skipped", "records left out", "diagnosis",
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

/* The figures of each run, ms per step over every kept rank-step. */
static void html_figures(FILE *f, const struct report *r)
{
	fputs("<h2>Figures (ms per step, every kept step of every rank pooled)</h2>\n<table id=figures><tr>"
	      "<th class=l>figure (unit)</th>", f);
	for (size_t i = 0; i < r->nds; i++) {
		fputs("<th>", f);
		html_escape(f, r->ds[i].label);
		fputs("</th>", f);
	}
	fputs("</tr>\n<tr><td class=l>rank-steps (count)</td>", f);
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
	fig_row(f, r, "step p50", RF_STEP, 1);
	fig_row(f, r, "step p90", RF_STEP, 2);
	fig_row(f, r, "step p99", RF_STEP, 3);
	fig_row(f, r, "exposed comm p99", RF_EXPOSED, 3);
	fprintf(f, "<tr><td class=l>%s (ratio)</td>", rep_cmp_label(RF__COUNT));
	for (size_t i = 0; i < r->nds; i++)
		if (r->ds[i].kept && isfinite(r->ds[i].ratio))
			fprintf(f, "<td>%.4f</td>", r->ds[i].ratio);
		else
			fputs("<td>n/a</td>", f);
	fputs("</tr>\n", f);
	int any_up = 0;
	for (size_t i = 0; i < r->nds; i++)
		any_up |= isfinite(r->ds[i].up_ratio);
	if (any_up) { /* upstream's figure under upstream's name, never under aorta's */
		fputs("<tr><td class=l>upstream overlap_ratio (its JSONL, its own timers)</td>", f);
		for (size_t i = 0; i < r->nds; i++)
			if (isfinite(r->ds[i].up_ratio))
				fprintf(f, "<td>%.4f</td>", r->ds[i].up_ratio);
			else
				fputs("<td>n/a (no JSONL)</td>", f);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
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
			if (!strcmp(vv, "absent")) { /* as the figures table: no 0.000 beside "absent" */
				fputs(x->absent[k] ? "absent" : "", f);
				if (!x->absent[k])
					num(f, a, "");
				fputs("</td><td>", f);
				fputs(y->absent[k] ? "absent" : "", f);
				if (!y->absent[k])
					num(f, c, "");
				fputs("</td><td>n/a</td><td>n/a</td><td class=\"l absent\">absent</td></tr>\n", f);
				continue;
			}
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
		if (isfinite(x->up_ratio) && isfinite(y->up_ratio))
			fprintf(f, "<tr><td class=l>upstream overlap_ratio (ratio)</td><td>%.4f</td><td>%.4f</td><td>%+.4f</td>"
				   "<td>n/a</td><td class=l>upstream's own figure</td></tr>\n", x->up_ratio, y->up_ratio,
				y->up_ratio - x->up_ratio);
		fputs("</table>\n", f);
	}
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
	html_head(f, r);
	html_summary(f, r);
	report_hang_html(f, r); /* a hang comes first after the summary, where the runs have Flight Recorder dumps */
	if (plot_why) {
		fputs("<div class=note>Charts were not drawn: ", f);
		html_escape(f, plot_why);
		fputs(". summary.json and this page are complete without them.</div>\n", f);
	}
	if (html_whatif(f, r, img, dir) < 0)
		goto unreadable;
	/* 3. the late rank beside a healthy rank */
	fputs("<section id=pair>\n", f);
	if (charts(f, img, dir, "pair", "The late rank beside a healthy rank") < 0)
		goto unreadable;
	fputs("</section>\n<section id=detail>\n", f);
	/* 4. the rest */
	html_verdict(f, r);
	html_configs(f, r);
	html_figures(f, r);
	html_comparisons(f, r);
	/* the other charts */
	static const char *const secs[][2] = { { "timeline", "Timelines" }, { "gantt", "Streams of chosen steps" },
					       { "compare", "Comparison charts" }, { "collectives", "Collectives" } };
	for (size_t q = 0; q < sizeof(secs) / sizeof(secs[0]); q++)
		if (charts(f, img, dir, secs[q][0], secs[q][1]) < 0)
			goto unreadable;
	fputs("</section>\n</body></html>\n", f);
	return out_commit(&of, e);
unreadable:
	out_abort(&of);
	return aorta_fail(e, AORTA_EINTERNAL, dir, 0, -1, "cannot read a chart back");
}
