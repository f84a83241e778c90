/*
 * compare.c - aorta compare A B [C...]: analyses, traces or run directories
 * side by side.
 *
 * Every input becomes an aorta.analysis/1 document: a saved analysis is read
 * as it is; a trace, a glob or a directory is analysed first and its JSON
 * rendered in memory.  So there is one comparison path, over one schema.
 * The first input is the baseline.  Per figure: per-step mean when both
 * sides have steps (runs of different lengths compare fairly), else the
 * whole-trace value; averaged over ranks, and per rank; per collective
 * (type, process group, bytes): total and exposed time per call, busbw.
 * Verdict: better / worse / similar beyond --threshold percent, by the
 * figure's direction (figures.c).  --fail-on-regression PCT exits 1 when
 * any directional figure gets worse by more than PCT percent.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "base/options.h"
#include "base/output.h"
#include "base/zread.h"
#include "cmd/cmds.h"
#include "ingest/ingest.h"
#include "pipeline/pipeline.h"
#include "report/analysis_out.h"
#include "report/figures.h"
#include "report/report_change.h"
#include "timeline/rules.h"

struct doc {
	const char *label;
	yajl_val root;
};

static enum aorta_status load_doc(const char *in, const struct rules *rules, int threads,
				  struct doc *d, struct aorta_error *e)
{
	char *buf = NULL;
	size_t len = 0;
	char err[512];

	d->label = in;
	if (ingest_sniff(in, NULL) == FMT_AORTA_ANALYSIS) {
		enum aorta_status s = zread_all(in, 0, &buf, &len, e);
		if (s)
			return s;
	} else {
		struct analysis a;
		struct analysis_opts o = { rules, threads, 0, 10, 30.0, 0, 0, NULL, 0 };
		char *argv[1] = { (char *)in };
		enum aorta_status s = analysis_run(argv, 1, &o, &a, e);
		if (s) {
			analysis_free(&a);
			return s;
		}
		FILE *f = open_memstream(&buf, &len);
		analysis_write_json(f, &a);
		fclose(f);
		analysis_free(&a);
	}
	d->root = yajl_tree_parse(buf, err, sizeof(err));
	free(buf);
	if (!d->root)
		return aorta_fail(e, AORTA_EINPUT, in, 0, -1, "invalid analysis JSON: %s", err);
	const char *sp[] = { "schema", NULL };
	yajl_val sv = yajl_tree_get(d->root, sp, yajl_t_string);
	const char *schema = sv ? YAJL_GET_STRING(sv) : NULL;
	if (!schema || (strncmp(schema, "aorta.analysis/1", 16) != 0 && strncmp(schema, "aorta.analysis/2", 16) != 0)) {
		yajl_tree_free(d->root);
		d->root = NULL;
		return aorta_fail(e, AORTA_EINPUT, in, 0, -1,
				  "expected schema 'aorta.analysis/1' or '/2' (an 'aorta analyze --json' file)");
	}
	return AORTA_OK;
}

static yajl_val get(yajl_val v, const char *a, const char *b, const char *c)
{
	const char *p[4] = { a, b, c, NULL };
	return v ? yajl_tree_get(v, p, yajl_t_any) : NULL;
}

static double num(yajl_val v)
{
	return v && YAJL_IS_NUMBER(v) ? YAJL_GET_DOUBLE(v) : NAN;
}

/* A figure of one rank: step mean if use_steps, else whole trace. */
static double rank_fig(yajl_val rank, const char *key, int use_steps)
{
	if (use_steps)
		return num(get(rank, "step_stats", key, "mean"));
	return num(get(rank, "total", key, NULL));
}

static int has_steps(yajl_val root)
{
	yajl_val ranks = get(root, "ranks", NULL, NULL);
	if (!ranks || !YAJL_IS_ARRAY(ranks) || !ranks->u.array.len)
		return 0;
	for (size_t i = 0; i < ranks->u.array.len; i++) {
		yajl_val st = get(ranks->u.array.values[i], "step_stats", "step_ms", NULL);
		if (!st)
			return 0;
	}
	return 1;
}

static double mean_fig(yajl_val root, const char *key, int use_steps)
{
	yajl_val ranks = get(root, "ranks", NULL, NULL);
	double s = 0;
	size_t n = 0;
	for (size_t i = 0; ranks && YAJL_IS_ARRAY(ranks) && i < ranks->u.array.len; i++) {
		double v = rank_fig(ranks->u.array.values[i], key, use_steps);
		if (!isnan(v)) {
			s += v;
			n++;
		}
	}
	return n ? s / (double)n : NAN;
}

static const char *verdict(double base, double test, int dir, double thr)
{
	return change_verdict(base, test, dir, thr);
}

static double pchange(double base, double test)
{
	return change_pct(base, test);
}

struct collsum {
	char type[32], pg[64];
	double bytes;
	double count[2], total[2], exposed[2]; /* [0] baseline, [1] this */
};

/* Adds every rank's collective rows of one side into the key table. */
static void collect(yajl_val ranks, int side, struct collsum **cs, size_t *n)
{
	size_t cap = *n;
	for (size_t q = 0; ranks && YAJL_IS_ARRAY(ranks) && q < ranks->u.array.len; q++) {
		yajl_val cl = get(ranks->u.array.values[q], "collectives", NULL, NULL);
		for (size_t z = 0; cl && YAJL_IS_ARRAY(cl) && z < cl->u.array.len; z++) {
			yajl_val o = cl->u.array.values[z];
			yajl_val tv = get(o, "type", NULL, NULL), pv = get(o, "process_group", NULL, NULL);
			const char *ty = tv && YAJL_IS_STRING(tv) ? YAJL_GET_STRING(tv) : "?";
			const char *pg = pv && YAJL_IS_STRING(pv) ? YAJL_GET_STRING(pv) : "";
			double by = num(get(o, "bytes", NULL, NULL));
			size_t k;
			for (k = 0; k < *n; k++)
				if (!strcmp((*cs)[k].type, ty) && !strcmp((*cs)[k].pg, pg) && (*cs)[k].bytes == by)
					break;
			if (k == *n) {
				GROW(*cs, cap, *n + 1);
				memset(&(*cs)[k], 0, sizeof(**cs));
				snprintf((*cs)[k].type, sizeof((*cs)[k].type), "%s", ty);
				snprintf((*cs)[k].pg, sizeof((*cs)[k].pg), "%s", pg);
				(*cs)[k].bytes = by;
				(*n)++;
			}
			(*cs)[k].count[side] += num(get(o, "count", NULL, NULL));
			(*cs)[k].total[side] += num(get(o, "total_ms", NULL, NULL));
			(*cs)[k].exposed[side] += num(get(o, "exposed_ms", NULL, NULL));
		}
	}
}

int cmd_compare(int argc, char **argv)
{
	const char *json = NULL, *rules_path = NULL;
	double thr = 1.0, fail_pct = -1;
	int threads = 0, per_rank = 0;
	struct opt opts[] = {
		OPT_DOUBLE(0, "threshold", &thr, "PCT", "changes below PCT percent are 'similar' (default 1)"),
		OPT_DOUBLE(0, "fail-on-regression", &fail_pct, "PCT", "exit 1 if a figure gets worse by more than PCT percent"),
		OPT_STRING(0, "json", &json, "FILE", "write the comparison as JSON (schema aorta.compare/1)"),
		OPT_STRING(0, "rules", &rules_path, "FILE", "extra classification rules for inputs that are traces"),
		OPT_INT('j', "threads", &threads, "N", "reader threads (default: all cores)"),
		OPT_BOOL(0, "strict", &aorta_strict, "a skipped file of a directory or a missing rank is an error (exit 3)"),
		OPT_BOOL(0, "per-rank", &per_rank, "also print every rank's figures"),
		OPT_END(),
	};
	int nargs = 0;
	int rc = opt_parse(argc, argv, opts, "aorta compare [options] BASELINE OTHER [OTHER...]",
			   "Each input is an 'aorta analyze --json' file, a trace, a glob or a run\n"
			   "directory. The first is the baseline; each other input is compared with it.",
			   &nargs);
	if (rc < 0)
		return AORTA_OK;
	if (rc)
		return rc;
	if (nargs < 2) {
		fprintf(stderr, "aorta: error: compare needs at least two inputs\n");
		return AORTA_EUSAGE;
	}
	if (thr < 0) {
		fprintf(stderr, "aorta: error: --threshold must be >= 0\n");
		return AORTA_EUSAGE;
	}
	aorta_quiet = 1;
	struct aorta_error e = { 0 };
	struct rules *rules = NULL;
	if (rules_path && rules_load(rules_path, &rules, &e)) {
		aorta_error_print(&e);
		return e.code;
	}
	struct doc *d = xcalloc((size_t)nargs, sizeof(*d));
	enum aorta_status st = AORTA_OK;
	for (int i = 0; i < nargs && !st; i++)
		st = load_doc(argv[i], rules, threads, &d[i], &e);
	if (st) {
		aorta_error_print(&e);
		goto out;
	}

	int regress = 0;
	struct outfile of = { 0 };
	struct jw w;
	if (json) {
		if ((st = out_open(&of, json, &e))) {
			aorta_error_print(&e);
			goto out;
		}
		jw_init(&w, of.f, 1);
		jw_obj(&w, NULL);
		jw_str(&w, "schema", "aorta.compare/1");
		jw_str(&w, "baseline", d[0].label);
		jw_num(&w, "threshold_pct", thr, 3);
		jw_arr(&w, "comparisons");
	}
	for (int t = 1; t < nargs; t++) {
		int steps = has_steps(d[0].root) && has_steps(d[t].root);
		printf("%s== %s vs baseline %s (%s)\n", t > 1 ? "\n" : "", d[t].label, d[0].label,
		       steps ? "per-step means, averaged over ranks" : "whole trace, averaged over ranks");
		printf("   %-22s %14s %14s %14s %9s  %s\n", "figure", "baseline", "this", "change", "change",
		       "verdict");
		if (json) {
			jw_obj(&w, NULL);
			jw_str(&w, "input", d[t].label);
			jw_str(&w, "basis", steps ? "step_mean" : "whole_trace");
			jw_arr(&w, "figures");
		}
		for (size_t k = 0; k < NFIGURES; k++) {
			const struct figure *fg = &FIGURES[k];
			double b = mean_fig(d[0].root, fg->key, steps), x = mean_fig(d[t].root, fg->key, steps);
			double p = pchange(b, x);
			const char *v = verdict(b, x, fg->lower_is_better, thr);
			printf("   %-22s %11.3f ms %11.3f ms %+11.3f ms %+8.2f%%  %s\n", fg->key, b, x, x - b, p, v);
			if (fail_pct >= 0 && !strcmp(v, "worse") && fabs(p) > fail_pct)
				regress = 1;
			if (json) {
				jw_obj(&w, NULL);
				jw_str(&w, "figure", fg->key);
				jw_num(&w, "baseline", b, 6);
				jw_num(&w, "value", x, 6);
				jw_num(&w, "change", x - b, 6);
				jw_num(&w, "change_pct", p, 4);
				jw_str(&w, "verdict", v);
				jw_obj_end(&w);
			}
		}
		if (json)
			jw_arr_end(&w);

		/* per rank */
		yajl_val rb = get(d[0].root, "ranks", NULL, NULL), rt = get(d[t].root, "ranks", NULL, NULL);
		if (json)
			jw_arr(&w, "ranks");
		if (per_rank)
			printf("   per rank (step, busy, comm, exposed comm, idle in ms; change %%):\n");
		for (size_t i = 0; rt && YAJL_IS_ARRAY(rt) && i < rt->u.array.len; i++) {
			yajl_val r = rt->u.array.values[i];
			double rank = num(get(r, "rank", NULL, NULL));
			yajl_val base = NULL;
			for (size_t j = 0; rb && YAJL_IS_ARRAY(rb) && j < rb->u.array.len; j++)
				if (num(get(rb->u.array.values[j], "rank", NULL, NULL)) == rank)
					base = rb->u.array.values[j];
			if (!base)
				continue;
			if (json) {
				jw_obj(&w, NULL);
				jw_int(&w, "rank", (long long)rank);
			}
			if (per_rank)
				printf("   rank %-4.0f", rank);
			for (size_t k = 0; k < NFIGURES; k++) {
				const struct figure *fg = &FIGURES[k];
				double b = rank_fig(base, fg->key, steps), x = rank_fig(r, fg->key, steps);
				if (json) {
					jw_obj(&w, fg->key);
					jw_num(&w, "baseline", b, 6);
					jw_num(&w, "value", x, 6);
					jw_num(&w, "change_pct", pchange(b, x), 4);
					jw_str(&w, "verdict", verdict(b, x, fg->lower_is_better, thr));
					jw_obj_end(&w);
				}
				if (per_rank && (!strcmp(fg->key, "step_ms") || !strcmp(fg->key, "busy_ms") ||
						 !strcmp(fg->key, "comm_ms") || !strcmp(fg->key, "exposed_comm_ms") ||
						 !strcmp(fg->key, "idle_ms")))
					printf(" %9.3f (%+.1f%%)", x, pchange(b, x));
			}
			if (per_rank)
				printf("\n");
			if (json)
				jw_obj_end(&w);
		}
		if (json)
			jw_arr_end(&w);

		/* per collective: time per call, summed over ranks, keyed by
		 * (type, process group, bytes) from both sides */
		printf("   %-15s %-6s %12s %14s %14s %9s %14s %9s\n", "collective", "pg", "bytes",
		       "base ms/call", "this ms/call", "change", "exposed/call", "change");
		if (json)
			jw_arr(&w, "collectives");
		struct collsum *cs = NULL;
		size_t ncs = 0;
		collect(rb, 0, &cs, &ncs);
		collect(rt, 1, &cs, &ncs);
		for (size_t c = 0; c < ncs; c++) {
			struct collsum *x = &cs[c];
			double bc = x->count[0] ? x->total[0] / x->count[0] : NAN;
			double tc = x->count[1] ? x->total[1] / x->count[1] : NAN;
			double be = x->count[0] ? x->exposed[0] / x->count[0] : NAN;
			double te = x->count[1] ? x->exposed[1] / x->count[1] : NAN;
			printf("   %-15s %-6.6s %12.0f %11.3f ms %11.3f ms %+8.2f%% %11.3f ms %+8.2f%%\n",
			       x->type, x->pg[0] ? x->pg : "-", x->bytes, bc, tc, pchange(bc, tc), te,
			       pchange(be, te));
			if (json) {
				jw_obj(&w, NULL);
				jw_str(&w, "type", x->type);
				jw_str(&w, "process_group", x->pg);
				jw_num(&w, "bytes", x->bytes, 0);
				jw_num(&w, "baseline_ms_per_call", bc, 6);
				jw_num(&w, "ms_per_call", tc, 6);
				jw_num(&w, "change_pct", pchange(bc, tc), 4);
				jw_num(&w, "baseline_exposed_ms_per_call", be, 6);
				jw_num(&w, "exposed_ms_per_call", te, 6);
				jw_str(&w, "verdict", verdict(bc, tc, 1, thr));
				jw_obj_end(&w);
			}
		}
		free(cs);
		if (json) {
			jw_arr_end(&w);
			jw_obj_end(&w);
		}
	}
	if (json) {
		jw_arr_end(&w);
		jw_bool(&w, "regression", regress);
		jw_obj_end(&w);
		if ((st = out_commit(&of, &e))) {
			aorta_error_print(&e);
			goto out;
		}
	}
	if (regress) {
		fprintf(stderr, "aorta: regression beyond %.2f%% detected\n", fail_pct);
		st = AORTA_ECHECK;
	}
out:
	for (int i = 0; i < nargs; i++)
		if (d[i].root)
			yajl_tree_free(d[i].root);
	free(d);
	rules_free(rules);
	return st;
}
