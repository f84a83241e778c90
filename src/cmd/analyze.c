/*
 * analyze.c - aorta analyze: overlap analysis of traces people already have.
 *
 *   aorta analyze [options] TRACE|DIR|GLOB|@LIST...
 *
 * Reads every rank in parallel (or a saved analysis back, through the same
 * way in as report and compare: cmd/runs.c, which opens a named file once),
 * prints the summary (unless --quiet; a Flight Recorder hang's verdict
 * first), and writes --json / --csv / --trace-out, as one unit: all renamed
 * into place at the end, or none (base/output.h).  A --skip-steps that
 * would leave some rank no step skips nothing and says so.  Exit 3 on bad
 * input, naming the file and byte offset.
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
#include "report/analysis_out.h"
#include "timeline/rules.h"

/* What analyze was asked. */
struct analyze_args {
	const char *json, *csv, *trace_out, *rules_path, *offsets;
	int threads, skip, top, quiet, per_step, no_align, use_mpi, no_whatif, summary, verbose;
	double host_bound;
	char **inputs;
	int ninputs;
	struct rules *rules;           /* --rules, loaded */
	struct clock_given *given;     /* --clock-offsets, read */
	size_t ngiven;
};

static void args_release(struct analyze_args *g)
{
	rules_free(g->rules);
	free(g->given);
}

/* The options into g; 0, or the exit code (-1: help printed, exit 0). */
static int parse_args(int argc, char **argv, struct analyze_args *g)
{
	struct opt opts[] = {
		OPT_STRING(0, "json", &g->json, "FILE", "write the analysis as JSON (schema aorta.analysis/4)"),
		OPT_STRING(0, "csv", &g->csv, "DIR", "write ranks, steps, streams, collectives, kernels as CSV"),
		OPT_STRING(0, "trace-out", &g->trace_out, "FILE", "write all ranks into one Chrome trace on the aligned clock, "
			   "with exposed-comm and waiting tracks"),
		OPT_STRING(0, "clock-offsets", &g->offsets, "FILE", "clock offsets 'RANK OFFSET_NS' or 'HOST OFFSET_NS' per line, instead of "
			   "estimating them from the collectives"),
		OPT_BOOL(0, "no-clock-align", &g->no_align, "take the ranks' clocks as shared (no offsets)"),
		OPT_STRING(0, "rules", &g->rules_path, "FILE", "extra classification rules 'KIND REGEX' tried first"),
		OPT_INT('j', "threads", &g->threads, "N", "threads: readers, then the what-if (default: all cores)"),
		OPT_INT(0, "skip-steps", &g->skip, "N", "leave the first N steps out of step statistics (warm-up)"),
		OPT_INT(0, "top", &g->top, "N", "rows in the top-kernel table (default 10)"),
		OPT_DOUBLE(0, "host-bound-pct", &g->host_bound, "P", "a step is host-bound when host wait >= P% of it (default 30)"),
		OPT_BOOL(0, "no-what-if", &g->no_whatif, "skip the what-if replay and its op tables (faster, less memory; "
			 "what_if then says so)"),
		OPT_BOOL(0, "summary", &g->summary, "print the summary alone (the step, the verdict, the top fixes, the late "
			 "rank, per rank host launch time and waiting caused, what next), not the detail"),
		OPT_BOOL('v', "verbose", &g->verbose, "the detail extended: every rank's section, every what-if fix, a row "
			 "per step"),
		OPT_BOOL(0, "per-step", &g->per_step, "print a row per step"),
		OPT_BOOL(0, "strict", &aorta_strict, "a skipped file of a directory or a missing rank is an error (exit 3)"),
		OPT_BOOL('q', "quiet", &g->quiet, "print no summary and no progress"),
		OPT_BOOL(0, "mpi", &g->use_mpi, "share the files out over MPI processes (automatic under mpirun/srun)"),
		OPT_END(),
	};
	int rc = opt_parse(argc, argv, opts, "aorta analyze [options] TRACE|DIR|GLOB|@LIST...",
			   "Reads PyTorch profiler (Kineto) JSON(.gz), Nsight Systems SQLite exports,\n"
			   "rocprofv3 CSV/JSON/rocpd, aorta JSONL metrics and aorta.optable/1 op tables\n"
			   "(CSV/JSONL, one row per operation); one file per rank or a directory of\n"
			   "them. Reports compute, communication, overlap and exposure\n"
			   "per rank, step, stream and collective, and waiting vs transfer across ranks.\n"
			   "PyTorch Flight Recorder dumps (pickle or JSON, one per rank) are matched\n"
			   "across ranks per process group: why it hung leads the output.",
			   &g->ninputs);
	if (rc)
		return rc;
	g->inputs = argv;
	if (g->ninputs < 1) {
		fprintf(stderr, "aorta: error: analyze needs at least one trace, directory or glob\n");
		return AORTA_EUSAGE;
	}
	if (g->top < 0 || g->skip < 0 || g->threads < 0 || g->host_bound < 0 || g->host_bound > 100) {
		fprintf(stderr, "aorta: error: --top, --skip-steps and --threads must be >= 0, "
				"--host-bound-pct in [0, 100]\n");
		return AORTA_EUSAGE;
	}
	if (g->summary && g->verbose) {
		fprintf(stderr, "aorta: error: --summary prints the summary alone and -v extends the detail: give one\n");
		return AORTA_EUSAGE;
	}
	if (g->quiet && !g->json && !g->csv && !g->trace_out) {
		fprintf(stderr, "aorta: error: -q prints nothing, and no --json, --csv or --trace-out was given: "
				"nothing would come out\n");
		return AORTA_EUSAGE;
	}
	return 0;
}

/* The outputs declared (inputs are never outputs: every output before
 * anything is read or written; the inputs as they are expanded), then the
 * rules and the clock offsets read; 0, or the exit code (its error
 * printed). */
static int prepare(struct analyze_args *g)
{
	struct aorta_error e = { 0 };
	enum aorta_status s = AORTA_OK;
	if ((g->json && (s = out_guard_output(g->json, "--json", &e))) ||
	    (g->trace_out && (s = out_guard_output(g->trace_out, "--trace-out", &e))) ||
	    (g->csv && (s = analysis_guard_csv(g->csv, "--csv", &e))) ||
	    (g->rules_path && (s = out_guard_input(g->rules_path, &e))) ||
	    (g->offsets && (s = out_guard_input(g->offsets, &e)))) {
		aorta_error_print(&e);
		return e.code ? e.code : s;
	}
	/* the outputs are one unit: renamed together at the end, or none */
	out_unit_begin();
	if (g->rules_path && (s = rules_load(g->rules_path, &g->rules, &e))) {
		aorta_error_print(&e);
		return e.code ? e.code : s;
	}
	if (g->offsets && g->no_align) {
		fprintf(stderr, "aorta: error: --clock-offsets and --no-clock-align exclude each other\n");
		return AORTA_EUSAGE;
	}
	if (g->offsets && (s = clock_offsets_load(g->offsets, &g->given, &g->ngiven, &e))) {
		aorta_error_print(&e);
		return e.code;
	}
	return 0;
}

/* The analysis of the inputs: a named file opened once (a saved analysis
 * read back, a trace read from that stream), else the pipeline; under an
 * MPI launcher the MPI plug-in's (*root 0 on every process but 0).
 * Returns the status, or AORTA_EUSAGE with its message printed. */
static enum aorta_status load(const struct analyze_args *g, const struct analysis_opts *ao, struct analysis *a,
			      int *root, struct aorta_error *e)
{
	struct run_input ri = { 0 };
	*root = 1;
	if (g->ninputs == 1)
		run_open(g->inputs[0], &ri);
	if (ri.format == FMT_AORTA_ANALYSIS && g->trace_out) {
		fprintf(stderr, "aorta: error: '%s' is a saved analysis: it holds no timeline for --trace-out\n",
			g->inputs[0]);
		run_close(&ri);
		return AORTA_EUSAGE;
	}
	int mpi = g->use_mpi || mpi_launcher_world_size() > 1;
	if (ri.format == FMT_AORTA_ANALYSIS || (ri.z && !mpi))
		return run_read(&ri, ao, a, e);
	run_close(&ri);
	if (!mpi)
		return analysis_run(g->inputs, (size_t)g->ninputs, ao, a, e);
	/* each process reads its share; process 0 joins and writes */
	char why[1024];
	union {
		void *p;
		enum aorta_status (*fn)(char *const *, size_t, const struct analysis_opts *, struct analysis *, int *,
					struct aorta_error *);
	} u = { mpi_plugin_sym("aorta_mpi_analysis_run", why, sizeof(why)) };
	if (!u.p) {
		fprintf(stderr, "aorta: error: started under an MPI launcher but cannot load the MPI plug-in (%s); "
				"build with Open MPI's mpicc installed (scripts/deps.sh), or run without mpirun\n",
			why);
		return AORTA_EUSAGE;
	}
	return u.fn(g->inputs, (size_t)g->ninputs, ao, a, root, e);
}

/* The files first (a summary piped into `head` must not cost the
 * outputs), then the summary. */
static enum aorta_status write_outputs(const struct analyze_args *g, struct analysis *a, struct aorta_error *e)
{
	enum aorta_status s;
	char why[256];
	if (analysis_adapt_skip(a, why, sizeof(why)))
		aorta_warn("%s", why);
	if ((g->json && (s = analysis_save_json(a, g->json, e))) || (g->csv && (s = analysis_save_csv(a, g->csv, e))) ||
	    (g->trace_out && (s = analysis_save_trace(a, g->trace_out, e))) || (s = out_unit_commit(e))) {
		out_unit_abort();
		return s;
	}
	if (!g->quiet) /* the summary first (a hang's verdict leads it), then the detail */
		analysis_print(stdout, a, PRINT_SUMMARY | (g->summary ? 0 : PRINT_DETAIL) | (g->verbose ? PRINT_VERBOSE : 0) |
						  (g->per_step ? PRINT_PER_STEP : 0));
	return AORTA_OK;
}

int cmd_analyze(int argc, char **argv)
{
	struct analyze_args g = { .top = 10, .host_bound = 30.0 };
	int rc = parse_args(argc, argv, &g);
	if (rc)
		return rc < 0 ? AORTA_OK : rc;
	aorta_quiet = g.quiet;
	if ((rc = prepare(&g))) {
		args_release(&g);
		return rc;
	}
	struct aorta_error e = { 0 };
	enum aorta_status st;
	struct analysis_opts ao = ANALYSIS_OPTS_INIT;
	ao.rules = g.rules;
	ao.threads = g.threads;
	ao.skip_steps = g.skip;
	ao.top_kernels = g.top;
	ao.host_bound_pct = g.host_bound;
	ao.keep_traces = g.trace_out != NULL;
	ao.no_clock_align = g.no_align;
	ao.clock_given = g.given;
	ao.nclock_given = g.ngiven;
	ao.what_if = g.no_whatif ? WHATIF_SKIP : WHATIF_RUN;
	struct analysis a;
	int root;
	memset(&a, 0, sizeof(a));
	st = load(&g, &ao, &a, &root, &e);
	if (st == AORTA_EUSAGE && !e.msg[0]) { /* said already */
		args_release(&g);
		return st;
	}
	if (root && !st)
		st = write_outputs(&g, &a, &e);
	if (root && st)
		aorta_error_print(&e);
	analysis_free(&a);
	args_release(&g);
	return st;
}
