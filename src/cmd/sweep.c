/*
 * sweep.c - `aorta sweep run` and `aorta sweep report` (src/sweep/).
 *
 *   aorta sweep run --recipe FILE [-o DIR] [--trials N] [--dry-run] [--resume]
 *                   [--timeout S] [-- COMMAND ...]
 *   aorta sweep report DIR... [-o DIR]
 *
 * run: exit 0 when the sweep finished (cells may have failed: they are in
 * matrix.json), 2 for a bad command line or a folder that holds another
 * sweep, 3 for a bad recipe (named with its line, before anything runs),
 * 130 when interrupted (finished trials are kept; --resume continues).
 * report: 0, 3 when a folder is not a sweep.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/options.h"
#include "base/verbs.h"
#include "cmd/cmds.h"
#include "sweep/envsnap.h"
#include "sweep/rank.h"
#include "sweep/recipe.h"
#include "sweep/report.h"
#include "sweep/results.h"
#include "sweep/run.h"


static int verb_run(int argc, char **argv)
{
	const char *recipe = NULL, *out = "sweep_out";
	int trials = 0, dry = 0, resume = 0, quiet = 0, nargs = 0;
	double timeout = 0;
	struct opt opts[] = {
		OPT_STRING('r', "recipe", &recipe, "FILE", "the recipe (YAML; docs/sweep.md)"),
		OPT_STRING('o', "output", &out, "DIR", "the sweep folder (default sweep_out)"),
		OPT_INT(0, "trials", &trials, "N", "trials per cell (replaces the recipe's)"),
		OPT_BOOL(0, "dry-run", &dry, "expand and check the recipe, print the cells, run nothing"),
		OPT_BOOL(0, "resume", &resume, "continue the sweep in DIR: run only the trials without a result"),
		OPT_DOUBLE(0, "timeout", &timeout, "S", "seconds before a trial's process group is killed (replaces the recipe's)"),
		OPT_BOOL('q', "quiet", &quiet, "no progress lines"),
		OPT_END(),
	};
	/* everything after "--" is the workload command */
	int dd = -1;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			dd = i;
			break;
		}
	int oargc = dd >= 0 ? dd : argc;
	int st = opt_parse(oargc, argv, opts,
			   "aorta sweep run --recipe FILE [-o DIR] [--trials N] [--dry-run] [--resume] [--timeout S] "
			   "[-- COMMAND ...]",
			   "Runs every cell of the recipe's matrix --trials times (round-robin), each as a child process "
			   "with its own output folder ({out}, $AORTA_SWEEP_OUT), analyses it and writes DIR/matrix.json, "
			   "matrix.md, recipe.resolved.yaml, env/*.json and cells/<id>/t<k>/. The workload is aorta train "
			   "with the cell's overrides, or COMMAND.",
			   &nargs);
	if (st < 0)
		return AORTA_OK;
	if (st)
		return st;
	if (nargs) {
		fprintf(stderr, "aorta: error: unexpected argument '%s' (a workload command goes after '--')\n", argv[0]);
		return AORTA_EUSAGE;
	}
	if (!recipe) {
		fprintf(stderr, "aorta: error: --recipe FILE is required\n");
		return AORTA_EUSAGE;
	}
	if (trials < 0 || timeout < 0) {
		fprintf(stderr, "aorta: error: --trials and --timeout must be positive\n");
		return AORTA_EUSAGE;
	}
	if (dd >= 0 && dd + 1 >= argc) {
		fprintf(stderr, "aorta: error: '--' must be followed by the workload command\n");
		return AORTA_EUSAGE;
	}
	aorta_quiet = quiet;
	struct sweep s;
	struct aorta_error e = { 0 };
	memset(&s, 0, sizeof(s));
	snprintf(s.dir, sizeof(s.dir), "%s", out);
	size_t ncli = dd >= 0 ? (size_t)(argc - dd - 1) : 0;
	if (recipe_load(recipe, dd >= 0 ? argv + dd + 1 : NULL, ncli, trials, 1, &s.r, &e) != AORTA_OK) {
		aorta_error_print(&e);
		return e.code;
	}
	struct sweep_run_opts o = { dry, resume, timeout };
	int rc = sweep_run(&s, &o, &e);
	if (rc && rc != 130) {
		aorta_error_print(&e);
		sweep_free(&s);
		return rc;
	}
	if (!dry && s.st) {
		const struct recipe *r = &s.r;
		printf("sweep '%s': %zu cells, results in %s/matrix.json and matrix.md\n", r->name, r->ncells, s.dir);
		printf("%-5s %-5s %-48s %12s %20s %8s  %s\n", "rank", "cell", "settings", "step (ms)", "range (ms)",
		       "ok", "vs baseline");
		for (size_t i = 0; i < r->ncells; i++) {
			size_t c = s.order[i];
			const struct cell_stats *st2 = &s.st[c];
			char rk[16], rg[64], md[32];
			if (st2->rank)
				snprintf(rk, sizeof(rk), "%d", st2->rank);
			else
				snprintf(rk, sizeof(rk), "-");
			if (st2->nok) {
				snprintf(rg, sizeof(rg), "%.3f-%.3f", st2->min, st2->max);
				snprintf(md, sizeof(md), "%.3f", st2->median);
			} else {
				snprintf(rg, sizeof(rg), "-");
				snprintf(md, sizeof(md), "-");
			}
			printf("%-5s %-5s %-48.48s %12s %20s %4zu/%-3zu  %s%s\n", rk, r->cells[c].id, r->cells[c].label,
			       md, rg, st2->nok, st2->ntrials, verdict_name(st2->verdict),
			       st2->noisy ? " (noisy)" : "");
		}
		printf("best: %s: %s\n", r->cells[s.best].id, s.best_why);
		if (s.confound.status == TR_OK)
			printf("confound: the baseline re-run measured %.3f ms (%+.1f %%): %s\n", s.confound.step_ms,
			       s.drift_pct, s.drift ? "DRIFT, outside the baseline's range: verdicts are suspect" : "no drift");
		else if (s.confound.status != TR_NONE)
			printf("confound: the baseline re-run %s\n", trial_status_name(s.confound.status));
	}
	sweep_free(&s);
	return rc;
}

static int verb_report(int argc, char **argv)
{
	const char *out = NULL;
	int nargs = 0;
	struct opt opts[] = {
		OPT_STRING('o', "output", &out, "DIR", "the report folder (default: DIR/report of the first sweep)"),
		OPT_END(),
	};
	int st = opt_parse(argc, argv, opts, "aorta sweep report DIR... [-o DIR]",
			   "One self-contained index.html (charts embedded) from one or more sweep folders: the ranking, "
			   "the best cell and why, heatmaps over two axes, NCCL bus bandwidth per cell, environments side "
			   "by side, noisy and failed cells. Charts need libaorta-plot.so; without it the page has tables only.",
			   &nargs);
	if (st < 0)
		return AORTA_OK;
	if (st)
		return st;
	if (!nargs) {
		fprintf(stderr, "aorta: error: name at least one sweep folder\n");
		return AORTA_EUSAGE;
	}
	struct sweep **sv = xcalloc((size_t)nargs, sizeof(*sv));
	struct aorta_error e = { 0 };
	int rc = 0;
	for (int i = 0; i < nargs && !rc; i++) {
		sv[i] = xcalloc(1, sizeof(struct sweep));
		if (sweep_load(argv[i], sv[i], &e)) {
			aorta_error_print(&e);
			rc = e.code;
		}
	}
	char def[4200];
	if (!out) {
		snprintf(def, sizeof(def), "%s/report", argv[0]);
		out = def;
	}
	if (!rc && sweep_report(sv, (size_t)nargs, out, &e)) {
		aorta_error_print(&e);
		rc = e.code;
	}
	if (!rc)
		printf("wrote %s/index.html\n", out);
	for (int i = 0; i < nargs; i++)
		if (sv[i]) {
			sweep_free(sv[i]);
			free(sv[i]);
		}
	free(sv);
	return rc;
}

static const struct verb verbs[] = {
	{ "run", verb_run, "run a recipe: aorta sweep run --recipe FILE [-o DIR] [-- COMMAND ...]" },
	{ "report", verb_report, "one HTML page from sweep folders: aorta sweep report DIR... [-o DIR]" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: aorta sweep VERB [options]\n\n"
		   "Runs a configuration x environment x trial matrix (a recipe, docs/sweep.md), analyses every\n"
		   "trial with the overlap engine and ranks the cells by step time with the noise between\n"
		   "trials accounted for.\n\nverbs:\n");
	verbs_print(f, verbs, NVERBS(verbs), 9);
}

int cmd_sweep(int argc, char **argv)
{
	return verbs_dispatch("sweep", verbs, NVERBS(verbs), usage, argc, argv);
}
