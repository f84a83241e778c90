/*
 * runs.c - one run as a struct analysis, whatever the user names: the one
 * way in for analyze, report and compare (cmds.h).
 *
 * A named regular file is opened once (run_open): its first bytes peeked
 * and its kind sniffed from them; a saved analysis (`aorta analyze --json`)
 * is then read back from that stream with analysis_io/json_read.c, a trace
 * handed with the stream to the pipeline (analysis_run_opened), so neither
 * is opened again.  Anything else (a folder, a glob, @LIST, a pipe) goes
 * through analysis_run, whose input rules (which files of a folder, traces
 * before JSONL beside them, said on stderr) are the same for every command.
 */
#include <string.h>
#include <sys/stat.h>

#include "analysis_io/analysis_io.h"
#include "base/output.h"
#include "base/zread.h"
#include "cmd/cmds.h"
#include "ingest/ingest.h"
#include "pipeline/pipeline.h"

void run_open(const char *input, struct run_input *ri)
{
	struct stat sb;
	struct aorta_error e = { 0 };
	const char *buf;
	size_t len;

	memset(ri, 0, sizeof(*ri));
	ri->path = input;
	ri->format = FMT_UNKNOWN;
	if (stat(input, &sb) != 0 || !S_ISREG(sb.st_mode))
		return; /* a folder, a glob, a pipe, or missing: the pipeline's to read or to word */
	if (zread_open(input, &ri->z, &e) || zread_peek(ri->z, INGEST_SNIFF_BYTES, &buf, &len, &e)) {
		zread_close(ri->z); /* the pipeline words the failure as it reads */
		ri->z = NULL;
		return;
	}
	ri->format = ingest_sniff_buf(input, buf, len, &e); /* unknown: the reader words it from the same bytes */
}

void run_close(struct run_input *ri)
{
	zread_close(ri->z);
	ri->z = NULL;
}

enum aorta_status run_read(struct run_input *ri, const struct analysis_opts *o, struct analysis *a,
			   struct aorta_error *e)
{
	enum aorta_status s;
	if (ri->format == FMT_AORTA_ANALYSIS) {
		s = out_guard_input(ri->path, e); /* never an output too */
		if (!s)
			s = analysis_json_read_stream(ri->path, ri->z, a, e);
		else
			memset(a, 0, sizeof(*a));
		if (!s) { /* the options the reader asked for, not the file's */
			a->opts.rules = o->rules;
			a->opts.threads = o->threads;
			a->opts.top_kernels = o->top_kernels;
			if (o->skip_steps != a->opts.skip_steps) /* per-collective sums are the file's skip's */
				analysis_set_skip(a, o->skip_steps);
		}
		run_close(ri);
		return s;
	}
	if (ri->z) {
		struct opened_input op = { ri->path, ri->z, ri->format };
		s = analysis_run_opened(&op, o, NULL, a, e);
	} else {
		char *argv[1] = { (char *)ri->path };
		s = analysis_run(argv, 1, o, a, e);
	}
	run_close(ri);
	if (s)
		analysis_free(a);
	return s;
}

enum aorta_status run_load(const char *input, const struct analysis_opts *o, struct analysis *a,
			   struct aorta_error *e)
{
	struct run_input ri;
	run_open(input, &ri);
	return run_read(&ri, o, a, e);
}
