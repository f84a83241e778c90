/*
 * compare.c - a run against a baseline on struct analysis (compare.h).
 */
#include "report/compare.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "overlap/figures.h"
#include "report/report_change.h"

const char *cmp_fmt(char *buf, size_t n, const char *fmt, double v)
{
	if (!isfinite(v))
		snprintf(buf, n, "n/a");
	else
		snprintf(buf, n, fmt, v);
	return buf;
}

const char *cmp_verdict(double base, double value, int dir, double thr_pct, double min_abs)
{
	if (isnan(base) || isnan(value))
		return "n/a";
	if (fabs(value - base) < min_abs)
		return "similar";
	return change_verdict(base, value, dir, thr_pct);
}

double cmp_rank_value(const struct rank_result *r, int skip, size_t k, int steps)
{
	if (!steps)
		return (double)fig_value(&FIGURES[k], &r->total) / 1e6;
	struct stat4 s = steps_stat(r, skip, FIGURES[k].off);
	return s.n ? s.mean / 1e6 : NAN;
}

int cmp_both_have_steps(const struct analysis *a, const struct analysis *b)
{
	const struct analysis *v[2] = { a, b };
	for (int q = 0; q < 2; q++) {
		if (!v[q]->n)
			return 0;
		for (size_t i = 0; i < v[q]->n; i++)
			if (!analysis_kept_steps(&v[q]->r[i], v[q]->opts.skip_steps))
				return 0;
	}
	return 1;
}

double cmp_run_value(const struct analysis *a, size_t k, int steps)
{
	double s = 0;
	size_t n = 0;
	for (size_t i = 0; i < a->n; i++) {
		double v = cmp_rank_value(&a->r[i], a->opts.skip_steps, k, steps);
		if (!isnan(v)) {
			s += v;
			n++;
		}
	}
	return n ? s / (double)n : NAN;
}

struct sb {
	char *p;
	size_t n, at;
};

static void sbf(struct sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sbf(struct sb *b, const char *fmt, ...)
{
	va_list ap;
	if (b->at >= b->n)
		return;
	va_start(ap, fmt);
	int w = vsnprintf(b->p + b->at, b->n - b->at, fmt, ap);
	va_end(ap);
	if (w > 0)
		b->at += (size_t)w < b->n - b->at ? (size_t)w : b->n - b->at - 1;
}

void compare_runs(const struct analysis *base, const struct analysis *x, const struct cmp_opts *o,
		  struct cmp_result *c)
{
	memset(c, 0, sizeof(*c));
	c->steps = cmp_both_have_steps(base, x);
	analysis_diagnose(base, &c->dbase);
	analysis_diagnose(x, &c->dthis);
	for (size_t k = 0; k < NFIGURES && k < CMP_MAX_FIGS; k++) {
		struct cmp_fig *f = &c->fig[c->nfig++];
		f->key = FIGURES[k].key;
		f->label = FIGURES[k].label;
		f->dir = FIGURES[k].lower_is_better;
		f->base = cmp_run_value(base, k, c->steps);
		f->value = cmp_run_value(x, k, c->steps);
		f->change_ms = f->value - f->base;
		f->change_pct = change_pct(f->base, f->value);
		if (!isfinite(f->change_pct))
			f->change_pct = NAN;
		f->verdict = cmp_verdict(f->base, f->value, f->dir, o->threshold_pct, o->min_change_ms);
	}
	/* the step leads: when it got slower nothing else is an improvement */
	const struct cmp_fig *step = &c->fig[0];
	c->speed = !strcmp(step->verdict, "n/a") ? "n/a"
		 : !strcmp(step->verdict, "worse") ? "slower"
		 : !strcmp(step->verdict, "better") ? "faster" : "about as fast";
	int slower = !strcmp(c->speed, "slower");
	for (size_t k = 1; k < c->nfig && slower; k++)
		if (!strcmp(c->fig[k].verdict, "better"))
			c->fig[k].verdict = c->fig[k].change_ms < 0 ? "lower" : "higher";
	/* regressions, worst (absolute change) first */
	for (size_t k = 0; k < c->nfig && o->fail_pct >= 0; k++) {
		struct cmp_fig *f = &c->fig[k];
		if (!f->dir || isnan(f->change_ms))
			continue;
		int worse = f->dir > 0 ? f->change_ms > 0 : f->change_ms < 0;
		double p = change_pct(f->base, f->value);
		if (worse && fabs(f->change_ms) >= o->min_change_ms && (isnan(p) || fabs(p) > o->fail_pct)) {
			f->regressed = 1;
			c->regress[c->nregress++] = k;
		}
	}
	for (size_t i = 0; i < c->nregress; i++)
		for (size_t j = i + 1; j < c->nregress; j++)
			if (fabs(c->fig[c->regress[j]].change_ms) > fabs(c->fig[c->regress[i]].change_ms)) {
				size_t t = c->regress[i];
				c->regress[i] = c->regress[j];
				c->regress[j] = t;
			}

	struct sb b = { c->verdict, sizeof(c->verdict), 0 };
	char p1[32], p2[32], p3[32], p4[32];
	if (!strcmp(c->speed, "n/a"))
		sbf(&b, "The step time cannot be compared (a side has none).");
	else
		sbf(&b, "The step is %s: %s -> %s ms (%s, %s ms)%s.", c->speed,
		    cmp_fmt(p1, sizeof(p1), "%.3f", step->base), cmp_fmt(p2, sizeof(p2), "%.3f", step->value),
		    cmp_fmt(p3, sizeof(p3), "%+.1f%%", step->change_pct), cmp_fmt(p4, sizeof(p4), "%+.3f", step->change_ms),
		    slower ? "; so no other figure is called better" : "");
	if (c->dthis.kind != DIAG_NONE)
		sbf(&b, " This run: %s.", c->dthis.headline);
	if (c->dbase.kind != DIAG_NONE)
		sbf(&b, " Baseline: %s.", c->dbase.headline);
	if (c->dthis.kind != c->dbase.kind && c->dthis.kind != DIAG_NONE && c->dbase.kind != DIAG_NONE)
		sbf(&b, " The main finding changed from %s to %s.", diag_kind_name(c->dbase.kind),
		    diag_kind_name(c->dthis.kind));
}

static void colls_side(const struct analysis *a, int side, struct cmp_coll **cs, size_t *n, size_t *cap)
{
	for (size_t q = 0; q < a->n; q++)
		for (size_t z = 0; z < a->r[q].ncolls; z++) {
			const struct coll_row *r = &a->r[q].colls[z];
			const char *ty = coll_type_name((enum coll_type)r->type);
			const char *pg = r->pg ? r->pg : "";
			size_t k;
			for (k = 0; k < *n; k++)
				if (!strcmp((*cs)[k].type, ty) && !strncmp((*cs)[k].pg, pg, sizeof((*cs)[k].pg) - 1) &&
				    (*cs)[k].bytes == r->bytes)
					break;
			if (k == *n) {
				GROW(*cs, *cap, *n + 1);
				memset(&(*cs)[k], 0, sizeof(**cs));
				snprintf((*cs)[k].type, sizeof((*cs)[k].type), "%s", ty);
				snprintf((*cs)[k].pg, sizeof((*cs)[k].pg), "%s", pg);
				(*cs)[k].bytes = r->bytes;
				(*n)++;
			}
			(*cs)[k].count[side] += (double)r->count;
			(*cs)[k].total_ms[side] += (double)r->total_ns / 1e6;
			(*cs)[k].exposed_ms[side] += (double)r->exposed_ns / 1e6;
		}
}

size_t compare_colls(const struct analysis *base, const struct analysis *x, struct cmp_coll **out)
{
	size_t n = 0, cap = 0;
	*out = NULL;
	colls_side(base, 0, out, &n, &cap);
	colls_side(x, 1, out, &n, &cap);
	return n;
}
