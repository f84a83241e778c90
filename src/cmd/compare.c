/*
 * compare.c - aorta compare A B [C...]: runs side by side.
 *
 * Every input becomes a struct analysis through the one way in (runs.c: a
 * saved analysis is read back and checked against its schema; traces,
 * JSONL, folders and globs are analysed), and report/compare.c compares
 * the structs.  The first input is the baseline.  Per figure: per-step mean
 * when both sides have steps, else the whole trace, averaged over ranks;
 * per rank; per collective (type, process group, bytes).  Each comparison
 * ends with an overall verdict that leads with the step time and names
 * both runs' diagnoses (the sentence analyze prints).  A change is
 * "similar" below --threshold percent or below --min-change-ms.
 * --fail-on-regression PCT exits 1 naming every figure that got worse by
 * more than PCT percent and at least --min-change-ms, with its size.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/options.h"
#include "base/output.h"
#include "cmd/cmds.h"
#include "overlap/analysis.h"
#include "report/answer.h"
#include "report/compare.h"
#include "report/whatif_out.h"
#include "overlap/figures.h"
#include "report/report_change.h"
#include "timeline/rules.h"

static void jw_num_or_null(struct jw *w, const char *k, double v, int prec)
{
	if (isfinite(v))
		jw_num(w, k, v, prec);
	else
		jw_null(w, k);
}

/* What compare was asked, and the comparison's JSON while it is written. */
struct compare_args {
	const char *json, *rules_path;
	double thr, fail_pct, min_ms;
	int threads, per_rank, skip, summary;
	char **inputs;
	int n;
	struct analysis *a;          /* per input */
	struct jw w;                 /* --json: open while the comparisons are written */
	FILE *out;                   /* the detail: stdout, or /dev/null with --summary */
};

/* The options into g; 0, or the exit code (-1: help printed, exit 0). */
static int parse_args(int argc, char **argv, struct compare_args *g)
{
	struct opt opts[] = {
		OPT_DOUBLE(0, "threshold", &g->thr, "PCT", "changes below PCT percent are 'similar' (default 1)"),
		OPT_DOUBLE(0, "min-change-ms", &g->min_ms, "MS", "changes below MS milliseconds are 'similar' (default 0.05)"),
		OPT_DOUBLE(0, "fail-on-regression", &g->fail_pct, "PCT", "exit 1 if a figure gets worse by more than PCT percent (and --min-change-ms)"),
		OPT_INT(0, "skip-steps", &g->skip, "N", "leave the first N steps of every rank out (warm-up; default 0)"),
		OPT_STRING(0, "json", &g->json, "FILE", "write the comparison as JSON (schema aorta.compare/1)"),
		OPT_STRING(0, "rules", &g->rules_path, "FILE", "extra classification rules for inputs that are traces"),
		OPT_INT('j', "threads", &g->threads, "N", "reader threads (default: all cores)"),
		OPT_BOOL(0, "strict", &aorta_strict, "a skipped file of a directory or a missing rank is an error (exit 3)"),
		OPT_BOOL(0, "summary", &g->summary, "print the summary of each comparison alone (step change, each run's "
			 "verdict and late rank, the fixes side by side, what changed most), not the detail"),
		OPT_BOOL(0, "per-rank", &g->per_rank, "also print every rank's figures"),
		OPT_BOOL('v', "verbose", &g->per_rank, "the detail extended: every rank's figures (as --per-rank)"),
		OPT_END(),
	};
	int rc = opt_parse(argc, argv, opts, "aorta compare [options] BASELINE OTHER [OTHER...]",
			   "Each input is an 'aorta analyze --json' file, a trace, aorta JSONL, a glob or a\n"
			   "run directory. The first is the baseline; each other input is compared with it.",
			   &g->n);
	if (rc)
		return rc;
	g->inputs = argv;
	if (g->n < 2) {
		fprintf(stderr, "aorta: error: compare needs at least two inputs\n");
		return AORTA_EUSAGE;
	}
	if (!(g->thr >= 0) || !(g->min_ms >= 0) || isnan(g->fail_pct) || g->skip < 0 || g->threads < 0) {
		fprintf(stderr, "aorta: error: --threshold, --min-change-ms, --skip-steps and --threads must be "
				"numbers >= 0, --fail-on-regression a number\n");
		return AORTA_EUSAGE;
	}
	return 0;
}

/* Every input as an analysis, through the one way in (runs.c), its skip
 * adapted; the rules given. */
static enum aorta_status load_all(struct compare_args *g, const struct rules *rules, struct aorta_error *e)
{
	enum aorta_status st = AORTA_OK;
	struct analysis_opts ao = ANALYSIS_OPTS_INIT;
	ao.rules = rules;
	ao.threads = g->threads;
	ao.skip_steps = g->skip;
	g->a = xcalloc((size_t)g->n, sizeof(*g->a));
	for (int i = 0; i < g->n && !st; i++) {
		st = run_load(g->inputs[i], &ao, &g->a[i], e);
		if (!st && !g->a[i].n)
			st = aorta_fail(e, AORTA_EINPUT, g->inputs[i], 0, -1, g->a[i].fr ? "Flight Recorder dumps only, "
					"no trace: nothing to compare ('aorta analyze' explains the hang)" : "no rank could be read");
	}
	for (int i = 0; i < g->n && !st; i++) {
		char why[256];
		if (analysis_adapt_skip(&g->a[i], why, sizeof(why)))
			aorta_warn("'%s': %s", g->inputs[i], why);
	}
	return st;
}

/* Input t's figures against the baseline's. */
static void put_figures(struct compare_args *g, int t, const struct cmp_result *c)
{
	char b1[32], b2[32], b3[32], b4[32];
	fprintf(g->out, "\n== %s vs baseline %s (%s)\n", g->inputs[t], g->inputs[0],
	       c->steps ? "per-step means, averaged over ranks" : "whole trace, averaged over ranks");
	fprintf(g->out, "   %-22s %14s %14s %14s %9s  %s\n", "figure", "baseline", "this", "change", "change", "verdict");
	if (g->json) {
		jw_obj(&g->w, NULL);
		jw_str(&g->w, "input", g->inputs[t]);
		jw_str(&g->w, "basis", c->steps ? "step_mean" : "whole_trace");
		jw_arr(&g->w, "figures");
	}
	for (size_t k = 0; k < c->nfig; k++) {
		const struct cmp_fig *f = &c->fig[k];
		fprintf(g->out, "   %-22s %11s ms %11s ms %11s ms %9s  %s\n", f->key, cmp_fmt(b1, sizeof(b1), "%.3f", f->base),
		       cmp_fmt(b2, sizeof(b2), "%.3f", f->value), cmp_fmt(b3, sizeof(b3), "%+.3f", f->change_ms),
		       cmp_fmt(b4, sizeof(b4), "%+.2f%%", f->change_pct), f->verdict);
		if (g->json) {
			jw_obj(&g->w, NULL);
			jw_str(&g->w, "figure", f->key);
			jw_num_or_null(&g->w, "baseline", f->base, 6);
			jw_num_or_null(&g->w, "value", f->value, 6);
			jw_num_or_null(&g->w, "change", f->change_ms, 6);
			jw_num_or_null(&g->w, "change_pct", f->change_pct, 4);
			jw_str(&g->w, "verdict", f->verdict);
			jw_bool(&g->w, "regression", f->regressed);
			jw_obj_end(&g->w);
		}
	}
	if (g->json)
		jw_arr_end(&g->w);
}

/* Input t's ranks against the baseline's ranks of the same number. */
static void put_ranks(struct compare_args *g, int t, const struct cmp_result *c)
{
	char b1[32], b2[32];
	const struct analysis *a = g->a;
	if (g->json)
		jw_arr(&g->w, "ranks");
	if (g->per_rank)
		fprintf(g->out, "   per rank (step, busy, comm, exposed comm, idle in ms; change %%):\n");
	for (size_t i = 0; i < a[t].n; i++) {
		const struct rank_result *r = &a[t].r[i], *base = NULL;
		for (size_t j = 0; j < a[0].n; j++)
			if (a[0].r[j].rank == r->rank)
				base = &a[0].r[j];
		if (!base)
			continue;
		if (g->json) {
			jw_obj(&g->w, NULL);
			jw_int(&g->w, "rank", r->rank);
		}
		if (g->per_rank)
			fprintf(g->out, "   rank %-4d", r->rank);
		for (size_t k = 0; k < NFIGURES; k++) {
			const struct figure *fg = &FIGURES[k];
			double b = cmp_rank_value(base, a[0].opts.skip_steps, k, c->steps);
			double x = cmp_rank_value(r, a[t].opts.skip_steps, k, c->steps);
			double p = change_pct(b, x);
			if (g->json) {
				jw_obj(&g->w, fg->key);
				jw_num_or_null(&g->w, "baseline", b, 6);
				jw_num_or_null(&g->w, "value", x, 6);
				jw_num_or_null(&g->w, "change_pct", p, 4);
				jw_str(&g->w, "verdict", cmp_verdict(b, x, fg->lower_is_better, g->thr, g->min_ms));
				jw_obj_end(&g->w);
			}
			if (g->per_rank && (!strcmp(fg->key, "step_ms") || !strcmp(fg->key, "busy_ms") ||
					    !strcmp(fg->key, "comm_ms") || !strcmp(fg->key, "exposed_comm_ms") ||
					    !strcmp(fg->key, "idle_ms")))
				fprintf(g->out, " %9s (%s)", cmp_fmt(b1, sizeof(b1), "%.3f", x), cmp_fmt(b2, sizeof(b2), "%+.1f%%", p));
		}
		if (g->per_rank)
			fprintf(g->out, "\n");
		if (g->json)
			jw_obj_end(&g->w);
	}
	if (g->json)
		jw_arr_end(&g->w);
}

/* Input t's collectives against the baseline's: time per call, summed
 * over ranks. */
static void put_colls(struct compare_args *g, int t)
{
	char b1[32], b2[32], b3[32];
	fprintf(g->out, "   %-15s %-6s %12s %14s %14s %9s %14s %9s\n", "collective", "pg", "bytes", "base ms/call",
	       "this ms/call", "change", "exposed/call", "change");
	if (g->json)
		jw_arr(&g->w, "collectives");
	struct cmp_coll *cs = NULL;
	size_t ncs = compare_colls(&g->a[0], &g->a[t], &cs);
	for (size_t k = 0; k < ncs; k++) {
		struct cmp_coll *x = &cs[k];
		double bc = x->count[0] ? x->total_ms[0] / x->count[0] : NAN;
		double tc = x->count[1] ? x->total_ms[1] / x->count[1] : NAN;
		double be = x->count[0] ? x->exposed_ms[0] / x->count[0] : NAN;
		double te = x->count[1] ? x->exposed_ms[1] / x->count[1] : NAN;
		char c1[32], c2[32];
		/* a collective one run lacks is absent there: no change, no verdict */
		int absent = !x->count[0] || !x->count[1];
		char m1[40], m2[40], m3[40];
		snprintf(m1, sizeof(m1), "%s ms", cmp_fmt(b1, sizeof(b1), "%.3f", bc));
		snprintf(m2, sizeof(m2), "%s ms", cmp_fmt(b2, sizeof(b2), "%.3f", tc));
		snprintf(m3, sizeof(m3), "%s ms", cmp_fmt(c1, sizeof(c1), "%.3f", te));
		fprintf(g->out, "   %-15s %-6.6s %12llu %14s %14s %9s %14s %9s\n", x->type, x->pg[0] ? x->pg : "-",
		       (unsigned long long)x->bytes, x->count[0] ? m1 : "absent", x->count[1] ? m2 : "absent",
		       absent ? "-" : cmp_fmt(b3, sizeof(b3), "%+.2f%%", change_pct(bc, tc)), x->count[1] ? m3 : "absent",
		       absent ? "-" : cmp_fmt(c2, sizeof(c2), "%+.2f%%", change_pct(be, te)));
		if (g->json) {
			jw_obj(&g->w, NULL);
			jw_str(&g->w, "type", x->type);
			jw_str(&g->w, "process_group", x->pg);
			jw_uint(&g->w, "bytes", x->bytes);
			jw_num_or_null(&g->w, "baseline_ms_per_call", bc, 6);
			jw_num_or_null(&g->w, "ms_per_call", tc, 6);
			jw_num_or_null(&g->w, "change_pct", isfinite(change_pct(bc, tc)) ? change_pct(bc, tc) : NAN, 4);
			jw_num_or_null(&g->w, "baseline_exposed_ms_per_call", be, 6);
			jw_num_or_null(&g->w, "exposed_ms_per_call", te, 6);
			jw_str(&g->w, "verdict", absent ? "absent" : cmp_verdict(bc, tc, 1, g->thr, g->min_ms / 1000.0));
			jw_obj_end(&g->w);
		}
	}
	if (!ncs)
		fprintf(g->out, "   (no collectives on either side)\n");
	free(cs);
}

/* Input t's verdict and regressions (said on stderr); whether it regressed. */
static int put_verdict(struct compare_args *g, int t, const struct cmp_result *c)
{
	char b1[32], b2[32], b3[32], b4[32];
	whatif_compare(g->out, NULL, g->a[0].whatif, g->a[t].whatif);
	fprintf(g->out, "   verdict: %s\n", c->verdict);
	for (size_t q = 0; q < c->nregress; q++) {
		const struct cmp_fig *f = &c->fig[c->regress[q]];
		fprintf(stderr, "aorta: regression in '%s': %s worse by %s ms (%s ms -> %s ms, %s; "
				"--fail-on-regression %.3g%%, --min-change-ms %.3g)\n",
			g->inputs[t], f->key, cmp_fmt(b1, sizeof(b1), "%+.3f", f->change_ms),
			cmp_fmt(b2, sizeof(b2), "%.3f", f->base), cmp_fmt(b3, sizeof(b3), "%.3f", f->value),
			cmp_fmt(b4, sizeof(b4), "%+.2f%%", f->change_pct), g->fail_pct, g->min_ms);
	}
	if (g->json) {
		jw_arr_end(&g->w);
		whatif_compare(NULL, &g->w, g->a[0].whatif, g->a[t].whatif);
		jw_obj(&g->w, "verdict");
		jw_str(&g->w, "step", c->speed);
		jw_str(&g->w, "text", c->verdict);
		jw_str(&g->w, "diagnosis", diag_kind_name(c->dthis.kind));
		jw_str(&g->w, "baseline_diagnosis", diag_kind_name(c->dbase.kind));
		jw_arr(&g->w, "regressions");
		for (size_t q = 0; q < c->nregress; q++)
			jw_str(&g->w, NULL, c->fig[c->regress[q]].key);
		jw_arr_end(&g->w);
		jw_obj_end(&g->w);
		jw_obj_end(&g->w);
	}
	return c->nregress > 0;
}

/* Every input against the baseline, on stdout and into --json. */
static enum aorta_status compare_all(struct compare_args *g, struct aorta_error *e)
{
	enum aorta_status st;
	const struct cmp_opts co = { g->thr, g->min_ms, g->fail_pct };
	int regress = 0;
	struct outfile of = { 0 };
	if (g->json) {
		if ((st = out_open(&of, g->json, e)))
			return st;
		jw_init(&g->w, of.f, 1);
		jw_obj(&g->w, NULL);
		jw_str(&g->w, "schema", "aorta.compare/1");
		jw_str(&g->w, "baseline", g->inputs[0]);
		jw_num(&g->w, "threshold_pct", g->thr, 3);
		jw_num(&g->w, "min_change_ms", g->min_ms, 6);
		jw_arr(&g->w, "comparisons");
	}
	for (int t = 1; t < g->n; t++) { /* the summaries first (report/answer.h) */
		struct cmp_result c;
		struct answer s;
		compare_runs(&g->a[0], &g->a[t], &co, &c);
		answer_build_compare(&g->a[0], &g->a[t], g->inputs[0], g->inputs[t], &c, &s);
		answer_print(stdout, &s);
		answer_free(&s);
	}
	/* the detail: not printed with --summary (the JSON and the regressions are the same) */
	g->out = g->summary ? fopen("/dev/null", "w") : stdout;
	if (!g->out) {
		if (g->json)
			out_abort(&of);
		return aorta_fail(e, AORTA_EINTERNAL, "/dev/null", 0, -1, "cannot open");
	}
	for (int t = 1; t < g->n; t++) {
		struct cmp_result c;
		compare_runs(&g->a[0], &g->a[t], &co, &c);
		put_figures(g, t, &c);
		put_ranks(g, t, &c);
		put_colls(g, t);
		regress |= put_verdict(g, t, &c);
	}
	if (g->out != stdout)
		fclose(g->out);
	if (g->json) {
		jw_arr_end(&g->w);
		jw_bool(&g->w, "regression", regress);
		jw_obj_end(&g->w);
		if ((st = out_commit(&of, e)))
			return st;
	}
	return regress ? AORTA_ECHECK : AORTA_OK;
}

int cmd_compare(int argc, char **argv)
{
	struct compare_args g = { .thr = 1.0, .fail_pct = -1, .min_ms = 0.05 };
	int rc = parse_args(argc, argv, &g);
	if (rc)
		return rc < 0 ? AORTA_OK : rc;
	aorta_quiet = 1;
	struct aorta_error e = { 0 };
	struct rules *rules = NULL;
	if ((g.json && out_guard_output(g.json, "--json", &e)) || (g.rules_path && out_guard_input(g.rules_path, &e)) ||
	    (g.rules_path && rules_load(g.rules_path, &rules, &e))) {
		aorta_error_print(&e); /* inputs are never outputs: declared before anything is read */
		return e.code;
	}
	enum aorta_status st = load_all(&g, rules, &e);
	if (!st)
		st = compare_all(&g, &e);
	if (st && st != AORTA_ECHECK)
		aorta_error_print(&e);
	for (int i = 0; i < g.n && g.a; i++)
		analysis_free(&g.a[i]);
	free(g.a);
	rules_free(rules);
	return st;
}
