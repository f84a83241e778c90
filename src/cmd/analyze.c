/*
 * analyze.c - aorta analyze: overlap analysis of traces people already have.
 *
 *   aorta analyze [options] TRACE|DIR|GLOB|@LIST...
 *
 * Reads every rank in parallel (or a saved analysis back, through the same
 * way in as report and compare: cmd/runs.c), prints the summary (unless
 * --quiet), and writes --json / --csv / --trace-out, as one unit: all
 * renamed into place at the end, or none (base/output.h).  A --skip-steps that
 * would leave some rank no step skips nothing and says so.  Exit 3 on bad input, naming the
 * file and byte offset.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/options.h"
#include "base/output.h"
#include "base/plugin.h"
#include "cmd/cmds.h"
#include "flightrec/fr.h"
#include "pipeline/pipeline.h"
#include "overlap/whatif.h"
#include "report/analysis_out.h"
#include "timeline/rules.h"

int cmd_analyze(int argc, char **argv)
{
	const char *json = NULL, *csv = NULL, *trace_out = NULL, *rules_path = NULL, *offsets = NULL;
	int threads = 0, skip = 0, top = 10, quiet = 0, per_step = 0, no_align = 0, use_mpi = 0, no_whatif = 0;
	int summary = 0, verbose = 0;
	double host_bound = 30.0;
	struct opt opts[] = {
		OPT_STRING(0, "json", &json, "FILE", "write the analysis as JSON (schema aorta.analysis/4)"),
		OPT_STRING(0, "csv", &csv, "DIR", "write ranks, steps, streams, collectives, kernels as CSV"),
		OPT_STRING(0, "trace-out", &trace_out, "FILE", "write all ranks into one Chrome trace on the aligned clock, "
			   "with exposed-comm and waiting tracks"),
		OPT_STRING(0, "clock-offsets", &offsets, "FILE", "clock offsets 'RANK OFFSET_NS' or 'HOST OFFSET_NS' per line, instead of "
			   "estimating them from the collectives"),
		OPT_BOOL(0, "no-clock-align", &no_align, "take the ranks' clocks as shared (no offsets)"),
		OPT_STRING(0, "rules", &rules_path, "FILE", "extra classification rules 'KIND REGEX' tried first"),
		OPT_INT('j', "threads", &threads, "N", "threads: readers, then the what-if (default: all cores)"),
		OPT_INT(0, "skip-steps", &skip, "N", "leave the first N steps out of step statistics (warm-up)"),
		OPT_INT(0, "top", &top, "N", "rows in the top-kernel table (default 10)"),
		OPT_DOUBLE(0, "host-bound-pct", &host_bound, "P", "a step is host-bound when host wait >= P% of it (default 30)"),
		OPT_BOOL(0, "no-what-if", &no_whatif, "skip the what-if replay and its op tables (faster, less memory; "
			 "what_if then says so)"),
		OPT_BOOL(0, "summary", &summary, "print the summary alone (the step, the verdict, the top fixes, the late "
			 "rank, per rank host launch time and waiting caused, what next), not the detail"),
		OPT_BOOL('v', "verbose", &verbose, "the detail extended: every rank's section, every what-if fix, a row "
			 "per step"),
		OPT_BOOL(0, "per-step", &per_step, "print a row per step"),
		OPT_BOOL(0, "strict", &aorta_strict, "a skipped file of a directory or a missing rank is an error (exit 3)"),
		OPT_BOOL('q', "quiet", &quiet, "print no summary and no progress"),
		OPT_BOOL(0, "mpi", &use_mpi, "share the files out over MPI processes (automatic under mpirun/srun)"),
		OPT_END(),
	};
	int nargs = 0;
	int rc = opt_parse(argc, argv, opts, "aorta analyze [options] TRACE|DIR|GLOB|@LIST...",
			   "Reads PyTorch profiler (Kineto) JSON(.gz), Nsight Systems SQLite exports,\n"
			   "rocprofv3 CSV/JSON/rocpd, aorta JSONL metrics and aorta.optable/1 op tables\n"
			   "(CSV/JSONL, one row per operation); one file per rank or a directory of\n"
			   "them. Reports compute, communication, overlap and exposure\n"
			   "per rank, step, stream and collective, and waiting vs transfer across ranks.\n"
			   "PyTorch Flight Recorder dumps (pickle or JSON, one per rank) are matched\n"
			   "across ranks per process group: why it hung leads the output.",
			   &nargs);
	if (rc < 0)
		return AORTA_OK;
	if (rc)
		return rc;
	if (nargs < 1) {
		fprintf(stderr, "aorta: error: analyze needs at least one trace, directory or glob\n");
		return AORTA_EUSAGE;
	}
	if (top < 0 || skip < 0 || threads < 0 || host_bound < 0 || host_bound > 100) {
		fprintf(stderr, "aorta: error: --top, --skip-steps and --threads must be >= 0, "
				"--host-bound-pct in [0, 100]\n");
		return AORTA_EUSAGE;
	}
	if (summary && verbose) {
		fprintf(stderr, "aorta: error: --summary prints the summary alone and -v extends the detail: give one\n");
		return AORTA_EUSAGE;
	}
	if (quiet && !json && !csv && !trace_out) {
		fprintf(stderr, "aorta: error: -q prints nothing, and no --json, --csv or --trace-out was given: "
				"nothing would come out\n");
		return AORTA_EUSAGE;
	}
	aorta_quiet = quiet;

	struct aorta_error e = { 0 };
	/* inputs are never outputs: every output declared before anything is
	 * read or written (the inputs are declared as they are expanded) */
	if ((json && out_guard_output(json, "--json", &e)) ||
	    (trace_out && out_guard_output(trace_out, "--trace-out", &e)) ||
	    (csv && analysis_guard_csv(csv, "--csv", &e)) ||
	    (rules_path && out_guard_input(rules_path, &e)) || (offsets && out_guard_input(offsets, &e))) {
		aorta_error_print(&e);
		return e.code;
	}
	/* the outputs are one unit: renamed together at the end, or none */
	out_unit_begin();
	struct rules *rules = NULL;
	if (rules_path && rules_load(rules_path, &rules, &e)) {
		aorta_error_print(&e);
		return e.code;
	}
	if (offsets && no_align) {
		fprintf(stderr, "aorta: error: --clock-offsets and --no-clock-align exclude each other\n");
		rules_free(rules);
		return AORTA_EUSAGE;
	}
	struct clock_given *given = NULL;
	size_t ngiven = 0;
	if (offsets && clock_offsets_load(offsets, &given, &ngiven, &e)) {
		aorta_error_print(&e);
		rules_free(rules);
		return e.code;
	}
	struct analysis_opts ao = { rules, threads, skip, top, host_bound, trace_out != NULL,
				    no_align, given, ngiven, 0, no_whatif ? WHATIF_SKIP : WHATIF_BACKGROUND };
	struct analysis a;
	enum aorta_status st;
	int root = 1;
	if (nargs == 1 && run_is_saved_analysis(argv[0])) { /* a saved analysis, read back */
		if (trace_out) {
			fprintf(stderr, "aorta: error: '%s' is a saved analysis: it holds no timeline for --trace-out\n",
				argv[0]);
			rules_free(rules);
			free(given);
			return AORTA_EUSAGE;
		}
		st = run_load(argv[0], &ao, &a, &e);
	} else if (use_mpi || mpi_launcher_world_size() > 1) {
		/* each process reads its share; process 0 joins and writes */
		char why[1024];
		union {
			void *p;
			enum aorta_status (*fn)(char *const *, size_t, const struct analysis_opts *, struct analysis *,
						int *, struct aorta_error *);
		} u = { mpi_plugin_sym("aorta_mpi_analysis_run", why, sizeof(why)) };
		if (!u.p) {
			fprintf(stderr, "aorta: error: started under an MPI launcher but cannot load the MPI plug-in (%s); "
					"build with Open MPI's mpicc installed (scripts/deps.sh), or run without mpirun\n",
				why);
			rules_free(rules);
			free(given);
			return AORTA_EUSAGE;
		}
		st = u.fn(argv, (size_t)nargs, &ao, &a, &root, &e);
	} else {
		st = analysis_run(argv, (size_t)nargs, &ao, &a, &e);
	}
	if (!root) { /* process 0 reports and writes */
		analysis_free(&a);
		rules_free(rules);
		free(given);
		return st;
	}
	if (st) {
		aorta_error_print(&e);
		analysis_free(&a);
		rules_free(rules);
		free(given);
		return st;
	}
	char why[256];
	if (analysis_adapt_skip(&a, why, sizeof(why)))
		aorta_warn("%s", why);
	/* files first: a summary piped into `head` must not cost the outputs */
	if (json && (st = analysis_save_json(&a, json, &e)))
		goto fail;
	if (csv && (st = analysis_save_csv(&a, csv, &e)))
		goto fail;
	if (trace_out && (st = analysis_save_trace(&a, trace_out, &e)))
		goto fail;
	if ((st = out_unit_commit(&e)))
		goto fail;
	whatif_wait(&a); /* the replay ran while the files were written */
	if (!quiet) /* the summary first (a hang's verdict leads it), then the detail */
		analysis_print(stdout, &a, PRINT_SUMMARY | (summary ? 0 : PRINT_DETAIL) | (verbose ? PRINT_VERBOSE : 0) |
						   (per_step ? PRINT_PER_STEP : 0));
	analysis_free(&a);
	rules_free(rules);
	free(given);
	return AORTA_OK;
fail:
	out_unit_abort();
	aorta_error_print(&e);
	analysis_free(&a);
	rules_free(rules);
	free(given);
	return st;
}
