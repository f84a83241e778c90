/*
 * report.c - aorta report: summary.json, charts and index.html for one or
 * more runs, upstream overlap_report.py's flags (--log-dir/--label pairs,
 * --output, --reference/--candidate) plus warm-up skip, several candidates
 * and per-figure verdicts.
 *
 * Atomic output.  Everything is written into a fresh folder beside --output
 * (<output>.tmp-<pid>; beside its target where --output is a symlink, so
 * the link stays), removed by any terminating signal or exit until it is
 * swapped into place (base/output.h), then swapped with renameat2's exchange
 * (one step: readers see the old report or the new one, never a mix) and
 * the old report removed; where exchange is not supported, two renames.
 * An existing --output is replaced only when it is empty or an earlier
 * aorta report (it holds the marker file .aorta-report), so a mistyped
 * --output never deletes someone's folder.  On error the temporary folder
 * is removed and the old report stays.
 *
 * Plots come from build/libaorta-plot.so (report_plot.h); when it cannot be
 * loaded, or with --no-plots, summary.json and index.html are still written,
 * without images, and the reason is printed and shown on the page.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/options.h"
#include "base/output.h"
#include "cmd/cmds.h"
#include "flightrec/fr.h"
#include "ingest/upstream_sums.h"
#include "pipeline/pipeline.h"
#include "pipeline/upstream.h"
#include "report/compare.h"
#include "report/report_charts.h"
#include "report/report_html.h"
#include "report/report_model.h"
#include "report/report_summary.h"
#include "report/report_plot.h"

/* A run with no step and no device work would be a report of zeros. */
static enum aorta_status report_check_run(const char *input, const struct analysis *a, struct aorta_error *e)
{
	if (a->fr) /* Flight Recorder dumps: the hang section */
		return AORTA_OK;
	for (size_t i = 0; i < a->n; i++)
		if (a->r[i].nsteps || a->r[i].events)
			return AORTA_OK;
	return aorta_fail(e, AORTA_EINPUT, input, 0, -1,
			  "no step and no GPU activity in %zu rank%s: nothing to report", a->n, a->n == 1 ? "" : "s");
}

#define MARKER ".aorta-report"

/* Removes the files of a folder we wrote (no subfolders), then the folder. */
static void remove_report_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char p[PATH_MAX + 256];
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		unlink(p);
	}
	closedir(d);
	rmdir(dir);
}

/* 1 when dir may be replaced: absent, empty, or an aorta report. */
static int replaceable(const char *dir, int *exists)
{
	struct stat sb;
	char p[PATH_MAX + 64];
	*exists = 0;
	if (stat(dir, &sb) != 0)
		return errno == ENOENT;
	*exists = 1;
	if (!S_ISDIR(sb.st_mode))
		return 0;
	snprintf(p, sizeof(p), "%s/%s", dir, MARKER);
	if (access(p, F_OK) == 0)
		return 1;
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	struct dirent *de;
	int empty = 1;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			empty = 0;
	closedir(d);
	return empty;
}

static int swap_in(const char *tmp, const char *out, int exists)
{
	if (!exists)
		return rename(tmp, out);
#ifdef RENAME_EXCHANGE
	if (renameat2(AT_FDCWD, tmp, AT_FDCWD, out, RENAME_EXCHANGE) == 0) {
		remove_report_dir(tmp); /* now the old report */
		return 0;
	}
#endif
	char old[PATH_MAX + 64];
	snprintf(old, sizeof(old), "%s.old-%ld", out, (long)getpid());
	if (rename(out, old) != 0)
		return -1;
	if (rename(tmp, out) != 0) {
		rename(old, out);
		return -1;
	}
	remove_report_dir(old);
	return 0;
}

/* --output is replaced whole: a --log-dir that is it or lies inside it
 * would be destroyed with it (inputs are never outputs).  Says so and
 * returns 1. */
static int output_holds_input(const char *output, const struct opt_list *dirs)
{
	char *out = realpath(output, NULL);
	int bad = 0;

	if (!out) /* a new folder holds nothing */
		return 0;
	size_t n = strlen(out);
	for (int i = 0; i < dirs->n && !bad; i++) {
		char *d = realpath(dirs->v[i], NULL);
		if (d && !strncmp(d, out, n) && (d[n] == '\0' || d[n] == '/' || n == 1)) {
			fprintf(stderr, "aorta: error: '%s': --log-dir '%s' is %sthe --output folder, which is "
					"replaced whole; give --output another folder\n", output, dirs->v[i],
				d[n] == '\0' ? "" : "inside ");
			bad = 1;
		}
		free(d);
	}
	free(out);
	return bad;
}

static int parse_steps(const char *s, long **out, int *n)
{
	int cap = 0;
	*out = NULL;
	*n = 0;
	while (s && *s) {
		char *end;
		long v = strtol(s, &end, 10);
		if (end == s || (*end && *end != ','))
			return -1;
		if (*n == cap) {
			cap = cap ? cap * 2 : 4;
			*out = xrealloc(*out, (size_t)cap * sizeof(long));
		}
		(*out)[(*n)++] = v;
		s = *end ? end + 1 : end;
	}
	return 0;
}

static int find_label(char **labels, int n, const char *l)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(labels[i], l))
			return i;
	return -1;
}

/* One run for report: as every command reads it (runs.c), except that
 * where a folder holds upstream JSONL beside traces, --prefer jsonl reads
 * the JSONL (the folder walk prefers the traces); where the JSONL is read,
 * overlap_report.py's records are gathered into up in the same pass. */
static enum aorta_status load_run(const char *in, const char *prefer, const struct analysis_opts *ao,
				  struct up_sums *up, struct analysis *a, int *saved, struct aorta_error *e)
{
	struct stat sb;
	size_t n = 0;
	*saved = 0;
	if (stat(in, &sb) == 0 && S_ISDIR(sb.st_mode) && pipeline_upstream_files(in)) {
		char **v = !strcmp(prefer, "jsonl") ? pipeline_upstream_paths(in, &n) : NULL;
		char *argv[1] = { (char *)in };
		enum aorta_status st = v ? analysis_run_upstream(v, n, ao, up, a, e)
					 : analysis_run_upstream(argv, 1, ao, up, a, e);
		for (size_t i = 0; i < n; i++)
			free(v[i]);
		free(v);
		if (st)
			analysis_free(a);
		return st;
	}
	struct run_input ri;
	run_open(in, &ri);
	*saved = ri.format == FMT_AORTA_ANALYSIS;
	return run_read(&ri, ao, a, e);
}

/* Upstream's keys of a run (report/upstream.h): from its JSONL files where
 * it is a folder that has them (gathered while the analysis read them,
 * up, else read for the keys alone), else from the figures its analysis
 * recorded of JSONL; and what aorta's keys were read from. */
static enum aorta_status upstream_of(struct rep_dataset *d, const struct up_sums *up, struct aorta_error *e)
{
	struct stat sb;
	int dir = stat(d->input, &sb) == 0 && S_ISDIR(sb.st_mode);
	d->analysis_from = d->format && !strcmp(d->format, "aorta-analysis") ? "saved analysis"
			   : d->format && !strcmp(d->format, "aorta-jsonl")   ? "jsonl"
									    : "traces";
	if (dir && pipeline_upstream_files(d->input))
		return pipeline_upstream_from_sums(d->input, up, &d->up) ? AORTA_OK : pipeline_upstream_read(d->input, &d->up, e);
	rep_upstream_from_recorded(d->a, &d->up);
	return AORTA_OK;
}

static void list_labels(char **labels, int n)
{
	fprintf(stderr, "aorta: labels given:");
	for (int i = 0; i < n; i++)
		fprintf(stderr, " '%s'", labels[i]);
	fprintf(stderr, "\n");
}

/* Blocks of 256 KiB and more from mmap, as glibc does until a large block
 * is freed: it then raises that limit to the freed block's size (up to 32
 * MiB), so the blocks a rank keeps (its steps, their store: hundreds of
 * KiB) came from the reader threads' heaps between the blocks of the
 * timelines read after it, which those heaps could then not give back.
 * On 64 ranks x 10,000 JSONL steps: about 15 MB less at the peak, the same
 * CPU time (bench/RESULTS.md "aorta report speed"). */
static void report_malloc_limits(void)
{
#ifdef __GLIBC__
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
#endif
}

/* What report was asked. */
struct report_args {
	struct opt_list dirs, labels_opt, cands;
	const char *output, *reference, *gantt, *prefer;
	int skip, threads, no_plots;
	double thr;
	char **labels;               /* per --log-dir */
	long *gsteps;
	int ngsteps;
};

static void args_release(struct report_args *g)
{
	for (int i = 0; g->labels && i < g->dirs.n; i++)
		free(g->labels[i]);
	free(g->labels);
	free(g->gsteps);
	free(g->dirs.v);
	free(g->labels_opt.v);
	free(g->cands.v);
}

/* The options into g, checked; 0, or the exit code (-1: help printed). */
static int parse_args(int argc, char **argv, struct report_args *g)
{
	struct opt opts[] = {
		OPT_LIST(0, "log-dir", &g->dirs, "DIR", "a run: folder of rank_*_metrics.jsonl, an 'aorta analyze --json' file, or traces (repeatable)"),
		OPT_LIST(0, "label", &g->labels_opt, "NAME", "name of the --log-dir at the same position (repeatable)"),
		OPT_STRING('o', "output", &g->output, "DIR", "folder for summary.json, the charts and index.html (replaced whole)"),
		OPT_STRING(0, "reference", &g->reference, "NAME", "label to compare against (default: the first)"),
		OPT_LIST(0, "candidate", &g->cands, "NAME", "label compared with the reference (repeatable; default: all others)"),
		OPT_INT(0, "skip-steps", &g->skip, "N", "leave out the first N steps of every rank as warm-up (default 0, as every command)"),
		OPT_DOUBLE(0, "threshold", &g->thr, "PCT", "changes below PCT percent are 'similar' (default 1)"),
		OPT_STRING(0, "gantt-steps", &g->gantt, "N,M", "global steps for the stream Gantt chart (default: median and slowest)"),
		OPT_BOOL(0, "strict", &aorta_strict, "a skipped file of a directory or a missing rank is an error (exit 3)"),
		OPT_BOOL(0, "no-plots", &g->no_plots, "write summary.json and index.html only"),
		OPT_STRING(0, "prefer", &g->prefer, "traces|jsonl", "where a run has traces and upstream JSONL, what aorta's "
			   "own keys read (default traces); upstream's keys always come from the JSONL"),
		OPT_INT('j', "threads", &g->threads, "N", "reader threads (default: all cores)"),
		OPT_END(),
	};
	int nargs = 0;
	int rc = opt_parse(argc, argv, opts, "aorta report --log-dir DIR --label NAME [--log-dir DIR --label NAME ...] --output DIR [options]",
			   "Summarises runs as upstream overlap_report.py does (summary.json, NAME_timeline.png)\n"
			   "and adds percentiles, per-rank figures, exposed communication, stream Gantt charts,\n"
			   "comparison charts with better/worse verdicts and a self-contained index.html.",
			   &nargs);
	if (rc)
		return rc;
	report_malloc_limits();
	if (nargs) {
		fprintf(stderr, "aorta: error: unexpected argument '%s' (inputs go after --log-dir)\n", argv[0]);
		return AORTA_EUSAGE;
	}
	if (!g->dirs.n) {
		fprintf(stderr, "aorta: error: report needs at least one --log-dir\n");
		return AORTA_EUSAGE;
	}
	if (!g->output) {
		fprintf(stderr, "aorta: error: report needs --output DIR\n");
		return AORTA_EUSAGE;
	}
	if (g->labels_opt.n && g->labels_opt.n != g->dirs.n) {
		fprintf(stderr, "aorta: error: --log-dir given %d times but --label %d times; give one label per log dir\n",
			g->dirs.n, g->labels_opt.n);
		return AORTA_EUSAGE;
	}
	if (g->skip < 0 || g->thr < 0) {
		fprintf(stderr, "aorta: error: --skip-steps and --threshold must be >= 0\n");
		return AORTA_EUSAGE;
	}
	if (g->gantt && parse_steps(g->gantt, &g->gsteps, &g->ngsteps) != 0) {
		fprintf(stderr, "aorta: error: --gantt-steps expects global steps separated by commas, got '%s'\n", g->gantt);
		return AORTA_EUSAGE;
	}
	return 0;
}

/* Each run's label (--label, else its folder's name): each its own, and
 * each its own chart file names; 0, or AORTA_EUSAGE (said). */
static int make_labels(struct report_args *g)
{
	g->labels = xcalloc((size_t)g->dirs.n, sizeof(char *));
	for (int i = 0; i < g->dirs.n; i++) {
		if (g->labels_opt.n) {
			g->labels[i] = xstrdup(g->labels_opt.v[i]);
		} else { /* the folder's name */
			char b[PATH_MAX];
			snprintf(b, sizeof(b), "%s", g->dirs.v[i]);
			size_t n = strlen(b);
			while (n > 1 && b[n - 1] == '/')
				b[--n] = '\0';
			const char *s = strrchr(b, '/');
			g->labels[i] = xstrdup(s ? s + 1 : b);
		}
		if (!g->labels[i][0] || find_label(g->labels, i, g->labels[i]) >= 0) {
			fprintf(stderr, "aorta: error: label '%s' is %s; every --log-dir needs its own label\n", g->labels[i],
				g->labels[i][0] ? "given twice" : "empty");
			return AORTA_EUSAGE;
		}
	}
	for (int i = 0; i < g->dirs.n; i++) { /* each label's charts under their own names */
		char si[REPORT_STEM_MAX + 1], sk[REPORT_STEM_MAX + 1];
		report_label_stem(si, sizeof(si), g->labels[i]);
		for (int k = 0; k < i; k++) {
			report_label_stem(sk, sizeof(sk), g->labels[k]);
			if (!strcmp(si, sk)) {
				fprintf(stderr, "aorta: error: labels '%s' and '%s' both become the chart file name "
						"'%s_*' (letters, digits, '-', '_' and '.' are kept, the rest is '_', "
						"at most %d bytes); give labels that differ there\n",
					g->labels[k], g->labels[i], si, REPORT_STEM_MAX);
				return AORTA_EUSAGE;
			}
		}
	}
	return 0;
}

/* The reference and the candidates (--reference, --candidate: by label;
 * else the first and the others) and the report's options into rep; 0,
 * or AORTA_EUSAGE (said). */
static int pick_runs(const struct report_args *g, struct report *rep)
{
	int n = g->dirs.n;
	rep->ref = -1;
	rep->cand = xcalloc((size_t)n, sizeof(int));
	if (g->reference && (rep->ref = find_label(g->labels, n, g->reference)) < 0) {
		fprintf(stderr, "aorta: error: unknown label '%s' in --reference\n", g->reference);
		list_labels(g->labels, n);
		return AORTA_EUSAGE;
	}
	for (int i = 0; i < g->cands.n; i++) {
		int k = find_label(g->labels, n, g->cands.v[i]);
		if (k < 0) {
			fprintf(stderr, "aorta: error: unknown label '%s' in --candidate\n", g->cands.v[i]);
			list_labels(g->labels, n);
			return AORTA_EUSAGE;
		}
		if (rep->ref < 0)
			rep->ref = k == 0 ? (n > 1 ? 1 : -1) : 0;
		if (k == rep->ref) {
			fprintf(stderr, "aorta: error: '%s' is both the reference and a candidate\n", g->cands.v[i]);
			return AORTA_EUSAGE;
		}
		rep->cand[rep->ncand++] = k;
	}
	if (!g->cands.n && n > 1) {
		if (rep->ref < 0)
			rep->ref = 0;
		for (int i = 0; i < n; i++)
			if (i != rep->ref)
				rep->cand[rep->ncand++] = i;
	}
	rep->upstream_comparison = g->reference && g->cands.n;
	if (strcmp(g->prefer, "traces") && strcmp(g->prefer, "jsonl")) {
		fprintf(stderr, "aorta: error: --prefer takes 'traces' or 'jsonl', not '%s'\n", g->prefer);
		return AORTA_EUSAGE;
	}
	rep->o = (struct report_opts){ g->skip, g->threads, g->thr, g->reference, NULL, 0, g->gsteps, g->ngsteps, g->skip };
	return 0;
}

/* A --skip-steps that leaves some run no step skips nothing, in every
 * run alike (so the runs stay comparable), and says so. */
static void adapt_skip(struct report_args *g, struct analysis *an)
{
	for (int i = 0; i < g->dirs.n; i++) {
		char why[256];
		if (analysis_adapt_skip(&an[i], why, sizeof(why))) {
			aorta_warn("'%s': %s%s", g->labels[i], why, g->dirs.n > 1 ? " (in every run, to compare like with like)" : "");
			g->skip = 0;
			for (int k = 0; k < g->dirs.n; k++)
				analysis_set_skip(&an[k], 0);
			break;
		}
	}
}

/* Every run through the one way in (runs.c) into rep's datasets, with
 * upstream's keys. */
static enum aorta_status read_runs(struct report_args *g, struct report *rep, struct aorta_error *e)
{
	enum aorta_status st = AORTA_OK;
	int n = g->dirs.n;
	aorta_quiet = 1;
	inputs_upstream_jsonl_read = 1; /* upstream_of reads them: not "left out" */
	rep->ds = xcalloc((size_t)n, sizeof(*rep->ds));
	struct analysis *an = xcalloc((size_t)n, sizeof(*an));
	struct analysis_opts ao = ANALYSIS_OPTS_INIT;
	ao.threads = g->threads;
	ao.skip_steps = g->skip;
	ao.keep_traces = 3 /* the timelines: the Gantt charts (ranges of three ranks kept) */;
	ao.no_peer_tools = 1 /* report outputs no HTA nor TraceLens figure */;
	struct up_sums *ups = xcalloc((size_t)n, sizeof(*ups));
	int *saved = xcalloc((size_t)n, sizeof(*saved));
	for (int i = 0; i < n; i++)
		up_sums_init(&ups[i]);
	for (int i = 0; i < n && !st; i++) {
		st = load_run(g->dirs.v[i], g->prefer, &ao, &ups[i], &an[i], &saved[i], e);
		if (!st && (st = report_check_run(g->dirs.v[i], &an[i], e)))
			analysis_free(&an[i]);
	}
	if (!st) {
		adapt_skip(g, an);
		rep->o.skip_asked = rep->o.skip_steps;
		rep->o.skip_steps = g->skip;
		for (int i = 0; i < n; i++) {
			rep_dataset_from_analysis(g->labels[i], g->dirs.v[i], &an[i], &rep->ds[i]);
			if (saved[i])
				rep->ds[i].format = "aorta-analysis";
			rep->nds = (size_t)i + 1;
		}
		for (size_t i = 0; i < rep->nds && !st; i++)
			st = upstream_of(&rep->ds[i], &ups[i], e);
	} else {
		for (int i = 0; i < n; i++)
			analysis_free(&an[i]);
	}
	for (int i = 0; i < n; i++)
		up_sums_release(&ups[i]);
	free(an);
	free(ups);
	free(saved);
	return st;
}

/* On stderr, what each run was read from and what was left out. */
static void say_runs(const struct report *rep)
{
	for (size_t i = 0; i < rep->nds; i++) {
		const struct rep_dataset *d = &rep->ds[i];
		const struct analysis *a = d->a;
		fprintf(stderr, "aorta: '%s': %zu rank%s of %s from '%s'\n", d->label, d->nranks,
			d->nranks == 1 ? "" : "s", d->format ? d->format : "?", d->input);
		if (a->fr && a->fr->done)
			fprintf(stderr, "aorta: '%s': Flight Recorder: %s\n", d->label, a->fr->res.verdict);
		if (d->up.has && !strcmp(d->up.from, "jsonl"))
			fprintf(stderr, "aorta: '%s': upstream's keys (count, mean_*, overlap_ratio) from %zu "
				"rank_*_metrics.jsonl file%s (%lld records) as overlap_report.py computes them; "
				"aorta's keys from the %s%s\n", d->label, d->up.files, d->up.files == 1 ? "" : "s",
				d->up.count, d->analysis_from,
				strcmp(d->analysis_from, "traces") ? "" : " (--prefer jsonl reads the JSONL instead)");
		if (d->up.has && d->up.bad_lines)
			aorta_warn("'%s': %lld JSONL line%s left out of upstream's keys (first: %s)", d->label,
				   d->up.bad_lines, d->up.bad_lines == 1 ? "" : "s", d->up.first_bad);
		for (size_t k = 0; k < a->n; k++)
			if (a->r[k].skipped)
				aorta_warn("'%s': %llu records left out (first: %s)", a->r[k].path,
					   (unsigned long long)a->r[k].skipped, a->r[k].skipped_first);
	}
}

/* The report's files into the fresh folder tmp: summary.json, the charts
 * (unless --no-plots or the plug-in cannot be loaded: said), index.html and
 * the marker. */
static enum aorta_status write_files(const struct report_args *g, const struct report *rep, const char *tmp,
				     struct plot_lib *lib, struct rep_images *img, struct aorta_error *e)
{
	enum aorta_status st;
	char path[PATH_MAX + 128]; /* tmp and a file name */
	snprintf(path, sizeof(path), "%s/summary.json", tmp);
	if ((st = report_write_summary(rep, path, e)))
		return st;
	char why[1024] = "";
	const char *plot_why = NULL;
	if (g->no_plots) {
		plot_why = "--no-plots was given";
	} else if (report_plot_load(lib, why, sizeof(why)) != 0) {
		plot_why = why;
		aorta_warn("charts not drawn: cannot load the plot plug-in libaorta-plot.so (%s); "
			   "summary.json and index.html are written without images", why);
	} else if ((st = report_draw(rep, lib, tmp, img, e))) {
		return st;
	}
	if ((st = report_write_html(rep, img, tmp, plot_why, e)))
		return st;
	snprintf(path, sizeof(path), "%s/%s", tmp, MARKER);
	struct outfile m;
	if ((st = out_open(&m, path, e)))
		return st;
	fputs("written by aorta report; this folder is replaced whole by the next report\n", m.f);
	return out_commit(&m, e);
}

/* The report written into a fresh folder beside --output (beside its
 * target where --output is a symlink: the link stays a link), removed by
 * any signal or exit until it is swapped into place (exists: an earlier
 * report is there). */
static enum aorta_status write_report(const struct report_args *g, const struct report *rep, int exists,
				      struct plot_lib *lib, struct rep_images *img, struct aorta_error *e)
{
	enum aorta_status st;
	char tmp[PATH_MAX + 64];
	char *real_out = out_resolve(g->output);
	if (!real_out)
		return aorta_fail(e, AORTA_EINPUT, g->output, 0, -1, "cannot resolve the folder: %s", strerror(errno));
	snprintf(tmp, sizeof(tmp), "%s.tmp-%ld", real_out, (long)getpid());
	remove_report_dir(tmp);
	if ((st = out_mkdir(tmp, 1, e))) {
		free(real_out);
		return st;
	}
	if (!(st = write_files(g, rep, tmp, lib, img, e))) {
		sigset_t sig;
		out_critical_begin(&sig); /* swapped and the old report removed whole, or not at all */
		if (swap_in(tmp, real_out, exists) != 0) {
			int err = errno;
			out_critical_end(&sig);
			st = aorta_fail(e, AORTA_EINTERNAL, g->output, 0, -1, "cannot move the report into place: %s",
					strerror(err));
		} else {
			out_forget_dir(tmp);
			out_critical_end(&sig);
			tmp[0] = '\0';
		}
	}
	if (tmp[0]) {
		remove_report_dir(tmp);
		out_forget_dir(tmp);
	}
	free(real_out);
	return st;
}

/* A line per run, then where the report is. */
static void print_done(const struct report *rep, const char *output, const struct rep_images *img)
{
	for (size_t i = 0; i < rep->nds; i++) { /* each run's summary line: what the page leads with */
		const struct rep_dataset *d = &rep->ds[i];
		char v[5][32];
		printf("%-16s %zu ranks, %zu rank-steps used: step %s ms, compute %s ms, overlapped comm %s ms, "
		       "exposed comm %s ms, overlapped comm / compute %s", d->label, d->nranks, d->kept,
		       cmp_fmt(v[0], 32, "%.3f", d->stat[RF_STEP].mean), cmp_fmt(v[1], 32, "%.3f", d->stat[RF_COMPUTE].mean),
		       cmp_fmt(v[2], 32, "%.3f", d->stat[RF_OVERLAP].mean), cmp_fmt(v[3], 32, "%.3f", d->stat[RF_EXPOSED].mean),
		       cmp_fmt(v[4], 32, "%.4f", d->kept ? d->ratio : NAN));
		if (d->up.has)
			printf(", upstream overlap_ratio %s", cmp_fmt(v[4], 32, "%.6f", d->up_ratio));
		printf("\n");
		if (d->diag.kind != DIAG_NONE)
			printf("%-16s diagnosis: %s\n", "", d->diag.headline);
	}
	printf("report: %s/index.html, summary.json and %zu chart%s (PNG and SVG)\n", output, img->n,
	       img->n == 1 ? "" : "s");
}

int cmd_report(int argc, char **argv)
{
	struct report_args g = { .prefer = "traces", .skip = 0, .thr = 1.0 }; /* one warm-up default for every command (docs/cli.md) */
	struct report rep = { 0 };
	struct plot_lib lib = { 0 };
	struct rep_images img = { 0 };
	struct aorta_error e = { 0 };
	enum aorta_status st;
	int exists = 0;
	int rc = parse_args(argc, argv, &g);
	if (rc) {
		args_release(&g);
		return rc < 0 ? AORTA_OK : rc;
	}
	if ((rc = make_labels(&g)) || (rc = output_holds_input(g.output, &g.dirs) ? AORTA_EUSAGE : 0) ||
	    (rc = pick_runs(&g, &rep)))
		goto done;
	if (!replaceable(g.output, &exists)) {
		fprintf(stderr, "aorta: error: '%s' exists and is not an earlier aorta report (no %s in it); "
				"give a new or empty folder\n", g.output, MARKER);
		rc = AORTA_EUSAGE;
		goto done;
	}
	if (!(st = read_runs(&g, &rep, &e))) {
		report_prepare(&rep);
		say_runs(&rep);
		st = write_report(&g, &rep, exists, &lib, &img, &e);
	}
	if (st)
		aorta_error_print(&e);
	else
		print_done(&rep, g.output, &img);
	rc = st;
done:
	rep_images_free(&img);
	report_plot_unload(&lib);
	report_free(&rep);
	args_release(&g);
	return rc;
}
