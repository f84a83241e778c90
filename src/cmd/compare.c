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

int cmd_compare(int argc, char **argv)
{
	const char *json = NULL, *rules_path = NULL;
	double thr = 1.0, fail_pct = -1, min_ms = 0.05;
	int threads = 0, per_rank = 0, skip = 0, summary = 0;
	struct opt opts[] = {
		OPT_DOUBLE(0, "threshold", &thr, "PCT", "changes below PCT percent are 'similar' (default 1)"),
		OPT_DOUBLE(0, "min-change-ms", &min_ms, "MS", "changes below MS milliseconds are 'similar' (default 0.05)"),
		OPT_DOUBLE(0, "fail-on-regression", &fail_pct, "PCT", "exit 1 if a figure gets worse by more than PCT percent (and --min-change-ms)"),
		OPT_INT(0, "skip-steps", &skip, "N", "leave the first N steps of every rank out (warm-up; default 0)"),
		OPT_STRING(0, "json", &json, "FILE", "write the comparison as JSON (schema aorta.compare/1)"),
		OPT_STRING(0, "rules", &rules_path, "FILE", "extra classification rules for inputs that are traces"),
		OPT_INT('j', "threads", &threads, "N", "reader threads (default: all cores)"),
		OPT_BOOL(0, "strict", &aorta_strict, "a skipped file of a directory or a missing rank is an error (exit 3)"),
		OPT_BOOL(0, "summary", &summary, "print the summary of each comparison alone (step change, each run's "
			 "verdict and late rank, the fixes side by side, what changed most), not the detail"),
		OPT_BOOL(0, "per-rank", &per_rank, "also print every rank's figures"),
		OPT_BOOL('v', "verbose", &per_rank, "the detail extended: every rank's figures (as --per-rank)"),
		OPT_END(),
	};
	int nargs = 0;
	int rc = opt_parse(argc, argv, opts, "aorta compare [options] BASELINE OTHER [OTHER...]",
			   "Each input is an 'aorta analyze --json' file, a trace, aorta JSONL, a glob or a\n"
			   "run directory. The first is the baseline; each other input is compared with it.",
			   &nargs);
	if (rc < 0)
		return AORTA_OK;
	if (rc)
		return rc;
	if (nargs < 2) {
		fprintf(stderr, "aorta: error: compare needs at least two inputs\n");
		return AORTA_EUSAGE;
	}
	if (!(thr >= 0) || !(min_ms >= 0) || isnan(fail_pct) || skip < 0 || threads < 0) {
		fprintf(stderr, "aorta: error: --threshold, --min-change-ms, --skip-steps and --threads must be "
				"numbers >= 0, --fail-on-regression a number\n");
		return AORTA_EUSAGE;
	}
	aorta_quiet = 1;
	struct aorta_error e = { 0 };
	if ((json && out_guard_output(json, "--json", &e)) || (rules_path && out_guard_input(rules_path, &e))) {
		aorta_error_print(&e); /* inputs are never outputs: declared before anything is read */
		return e.code;
	}
	struct rules *rules = NULL;
	if (rules_path && rules_load(rules_path, &rules, &e)) {
		aorta_error_print(&e);
		return e.code;
	}
	struct analysis *a = xcalloc((size_t)nargs, sizeof(*a));
	enum aorta_status st = AORTA_OK;
	struct analysis_opts ao = { .rules = rules, .threads = threads, .skip_steps = skip, .top_kernels = 10, .host_bound_pct = 30.0 };
	for (int i = 0; i < nargs && !st; i++) {
		st = run_load(argv[i], &ao, &a[i], &e);
		if (!st && !a[i].n)
			st = aorta_fail(&e, AORTA_EINPUT, argv[i], 0, -1, a[i].fr ? "Flight Recorder dumps only, no trace: "
					"nothing to compare ('aorta analyze' explains the hang)" : "no rank could be read");
	}
	if (st) {
		aorta_error_print(&e);
		goto out;
	}
	for (int i = 0; i < nargs; i++) {
		char why[256];
		if (analysis_adapt_skip(&a[i], why, sizeof(why)))
			aorta_warn("'%s': %s", argv[i], why);
	}

	const struct cmp_opts co = { thr, min_ms, fail_pct };
	int regress = 0;
	struct outfile of = { 0 };
	struct jw w;
	char b1[32], b2[32], b3[32], b4[32];
	if (json) {
		if ((st = out_open(&of, json, &e))) {
			aorta_error_print(&e);
			goto out;
		}
		jw_init(&w, of.f, 1);
		jw_obj(&w, NULL);
		jw_str(&w, "schema", "aorta.compare/1");
		jw_str(&w, "baseline", argv[0]);
		jw_num(&w, "threshold_pct", thr, 3);
		jw_num(&w, "min_change_ms", min_ms, 6);
		jw_arr(&w, "comparisons");
	}
	for (int t = 1; t < nargs; t++) { /* the summaries first (report/answer.h) */
		struct cmp_result c;
		struct answer s;
		compare_runs(&a[0], &a[t], &co, &c);
		answer_build_compare(&a[0], &a[t], argv[0], argv[t], &c, &s);
		answer_print(stdout, &s);
		answer_free(&s);
	}
	/* the detail: not printed with --summary (the JSON and the regressions are the same) */
	FILE *out = summary ? fopen("/dev/null", "w") : stdout;
	if (!out) {
		st = aorta_fail(&e, AORTA_EINTERNAL, "/dev/null", 0, -1, "cannot open");
		aorta_error_print(&e);
		goto out;
	}
	for (int t = 1; t < nargs; t++) {
		struct cmp_result c;
		compare_runs(&a[0], &a[t], &co, &c);
		fprintf(out, "\n== %s vs baseline %s (%s)\n", argv[t], argv[0],
		       c.steps ? "per-step means, averaged over ranks" : "whole trace, averaged over ranks");
		fprintf(out, "   %-22s %14s %14s %14s %9s  %s\n", "figure", "baseline", "this", "change", "change",
		       "verdict");
		if (json) {
			jw_obj(&w, NULL);
			jw_str(&w, "input", argv[t]);
			jw_str(&w, "basis", c.steps ? "step_mean" : "whole_trace");
			jw_arr(&w, "figures");
		}
		for (size_t k = 0; k < c.nfig; k++) {
			const struct cmp_fig *f = &c.fig[k];
			fprintf(out, "   %-22s %11s ms %11s ms %11s ms %9s  %s\n", f->key, cmp_fmt(b1, sizeof(b1), "%.3f", f->base),
			       cmp_fmt(b2, sizeof(b2), "%.3f", f->value), cmp_fmt(b3, sizeof(b3), "%+.3f", f->change_ms),
			       cmp_fmt(b4, sizeof(b4), "%+.2f%%", f->change_pct), f->verdict);
			if (json) {
				jw_obj(&w, NULL);
				jw_str(&w, "figure", f->key);
				jw_num_or_null(&w, "baseline", f->base, 6);
				jw_num_or_null(&w, "value", f->value, 6);
				jw_num_or_null(&w, "change", f->change_ms, 6);
				jw_num_or_null(&w, "change_pct", f->change_pct, 4);
				jw_str(&w, "verdict", f->verdict);
				jw_bool(&w, "regression", f->regressed);
				jw_obj_end(&w);
			}
		}
		if (json)
			jw_arr_end(&w);

		/* per rank */
		if (json)
			jw_arr(&w, "ranks");
		if (per_rank)
			fprintf(out, "   per rank (step, busy, comm, exposed comm, idle in ms; change %%):\n");
		for (size_t i = 0; i < a[t].n; i++) {
			const struct rank_result *r = &a[t].r[i], *base = NULL;
			for (size_t j = 0; j < a[0].n; j++)
				if (a[0].r[j].rank == r->rank)
					base = &a[0].r[j];
			if (!base)
				continue;
			if (json) {
				jw_obj(&w, NULL);
				jw_int(&w, "rank", r->rank);
			}
			if (per_rank)
				fprintf(out, "   rank %-4d", r->rank);
			for (size_t k = 0; k < NFIGURES; k++) {
				const struct figure *fg = &FIGURES[k];
				double b = cmp_rank_value(base, a[0].opts.skip_steps, k, c.steps);
				double x = cmp_rank_value(r, a[t].opts.skip_steps, k, c.steps);
				double p = change_pct(b, x);
				if (json) {
					jw_obj(&w, fg->key);
					jw_num_or_null(&w, "baseline", b, 6);
					jw_num_or_null(&w, "value", x, 6);
					jw_num_or_null(&w, "change_pct", p, 4);
					jw_str(&w, "verdict", cmp_verdict(b, x, fg->lower_is_better, thr, min_ms));
					jw_obj_end(&w);
				}
				if (per_rank && (!strcmp(fg->key, "step_ms") || !strcmp(fg->key, "busy_ms") ||
						 !strcmp(fg->key, "comm_ms") || !strcmp(fg->key, "exposed_comm_ms") ||
						 !strcmp(fg->key, "idle_ms")))
					fprintf(out, " %9s (%s)", cmp_fmt(b1, sizeof(b1), "%.3f", x),
					       cmp_fmt(b2, sizeof(b2), "%+.1f%%", p));
			}
			if (per_rank)
				fprintf(out, "\n");
			if (json)
				jw_obj_end(&w);
		}
		if (json)
			jw_arr_end(&w);

		/* per collective: time per call, summed over ranks */
		fprintf(out, "   %-15s %-6s %12s %14s %14s %9s %14s %9s\n", "collective", "pg", "bytes",
		       "base ms/call", "this ms/call", "change", "exposed/call", "change");
		if (json)
			jw_arr(&w, "collectives");
		struct cmp_coll *cs = NULL;
		size_t ncs = compare_colls(&a[0], &a[t], &cs);
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
			fprintf(out, "   %-15s %-6.6s %12llu %14s %14s %9s %14s %9s\n", x->type, x->pg[0] ? x->pg : "-",
			       (unsigned long long)x->bytes, x->count[0] ? m1 : "absent", x->count[1] ? m2 : "absent",
			       absent ? "-" : cmp_fmt(b3, sizeof(b3), "%+.2f%%", change_pct(bc, tc)),
			       x->count[1] ? m3 : "absent", absent ? "-" : cmp_fmt(c2, sizeof(c2), "%+.2f%%", change_pct(be, te)));
			if (json) {
				jw_obj(&w, NULL);
				jw_str(&w, "type", x->type);
				jw_str(&w, "process_group", x->pg);
				jw_uint(&w, "bytes", x->bytes);
				jw_num_or_null(&w, "baseline_ms_per_call", bc, 6);
				jw_num_or_null(&w, "ms_per_call", tc, 6);
				jw_num_or_null(&w, "change_pct", isfinite(change_pct(bc, tc)) ? change_pct(bc, tc) : NAN, 4);
				jw_num_or_null(&w, "baseline_exposed_ms_per_call", be, 6);
				jw_num_or_null(&w, "exposed_ms_per_call", te, 6);
				jw_str(&w, "verdict", absent ? "absent" : cmp_verdict(bc, tc, 1, thr, min_ms / 1000.0));
				jw_obj_end(&w);
			}
		}
		if (!ncs)
			fprintf(out, "   (no collectives on either side)\n");
		free(cs);
		whatif_compare(out, NULL, a[0].whatif, a[t].whatif);
		fprintf(out, "   verdict: %s\n", c.verdict);
		for (size_t q = 0; q < c.nregress; q++) {
			const struct cmp_fig *f = &c.fig[c.regress[q]];
			fprintf(stderr, "aorta: regression in '%s': %s worse by %s ms (%s ms -> %s ms, %s; "
					"--fail-on-regression %.3g%%, --min-change-ms %.3g)\n",
				argv[t], f->key, cmp_fmt(b1, sizeof(b1), "%+.3f", f->change_ms),
				cmp_fmt(b2, sizeof(b2), "%.3f", f->base), cmp_fmt(b3, sizeof(b3), "%.3f", f->value),
				cmp_fmt(b4, sizeof(b4), "%+.2f%%", f->change_pct), fail_pct, min_ms);
			regress = 1;
		}
		if (json) {
			jw_arr_end(&w);
			whatif_compare(NULL, &w, a[0].whatif, a[t].whatif);
			jw_obj(&w, "verdict");
			jw_str(&w, "step", c.speed);
			jw_str(&w, "text", c.verdict);
			jw_str(&w, "diagnosis", diag_kind_name(c.dthis.kind));
			jw_str(&w, "baseline_diagnosis", diag_kind_name(c.dbase.kind));
			jw_arr(&w, "regressions");
			for (size_t q = 0; q < c.nregress; q++)
				jw_str(&w, NULL, c.fig[c.regress[q]].key);
			jw_arr_end(&w);
			jw_obj_end(&w);
			jw_obj_end(&w);
		}
	}
	if (out != stdout)
		fclose(out);
	if (json) {
		jw_arr_end(&w);
		jw_bool(&w, "regression", regress);
		jw_obj_end(&w);
		if ((st = out_commit(&of, &e))) {
			aorta_error_print(&e);
			goto out;
		}
	}
	if (regress)
		st = AORTA_ECHECK;
out:
	for (int i = 0; i < nargs; i++)
		analysis_free(&a[i]);
	free(a);
	rules_free(rules);
	return st;
}
