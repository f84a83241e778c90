/*
 * runs.c - one run as a struct analysis, whatever the user names: the one
 * way in for analyze, report and compare (cmds.h).
 *
 * A regular file that is a saved analysis (`aorta analyze --json`) is read
 * back with analysis_io/json_read.c; anything else (a trace, aorta JSONL, a
 * folder, a glob, @LIST) goes through analysis_run, whose input rules
 * (which files of a folder, traces before JSONL beside them, said on
 * stderr) are the same for every command.
 */
#include <sys/stat.h>

#include "base/output.h"
#include "cmd/cmds.h"
#include "analysis_io/analysis_io.h"
#include "ingest/ingest.h"
#include "pipeline/pipeline.h"

int run_is_saved_analysis(const char *input)
{
	struct stat sb;
	return stat(input, &sb) == 0 && S_ISREG(sb.st_mode) && ingest_sniff(input, NULL) == FMT_AORTA_ANALYSIS;
}

enum aorta_status run_load(const char *input, const struct analysis_opts *o, struct analysis *a,
			   struct aorta_error *e)
{
	if (run_is_saved_analysis(input)) {
		enum aorta_status s = out_guard_input(input, e); /* never an output too */
		if (!s)
			s = analysis_json_read(input, a, e);
		if (!s) { /* the options the reader asked for, not the file's */
			a->opts.rules = o->rules;
			a->opts.threads = o->threads;
			a->opts.top_kernels = o->top_kernels;
			if (o->skip_steps != a->opts.skip_steps) /* per-collective sums are the file's skip's */
				analysis_set_skip(a, o->skip_steps);
		}
		return s;
	}
	char *argv[1] = { (char *)input };
	enum aorta_status s = analysis_run(argv, 1, o, a, e);
	if (s)
		analysis_free(a);
	return s;
}
