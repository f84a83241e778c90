/*
 * cmds.h - every command's entry point; src/main.c holds the table.
 * A command returns an exit code (enum aorta_status values, docs/cli.md).
 */
#ifndef AORTA_CMDS_H
#define AORTA_CMDS_H

#include "base/error.h"
#include "overlap/analysis.h"

#include "ingest/ingest.h"

/* One named input, opened once (runs.c): a regular file's stream and the
 * kind sniffed from its first bytes (FMT_AORTA_ANALYSIS: a saved
 * analysis); else (a folder, a glob, a pipe) no stream, FMT_UNKNOWN. */
struct run_input { const char *path; struct zread *z; enum trace_format format; };
void run_open(const char *input, struct run_input *ri);
void run_close(struct run_input *ri);
/* The run ri names as a struct analysis, read from its stream (closed
 * here): a saved analysis is read back, anything else goes through the
 * pipeline.  On error *a is freed. */
enum aorta_status run_read(struct run_input *ri, const struct analysis_opts *o, struct analysis *a,
			   struct aorta_error *e);
/* run_open and run_read. */
enum aorta_status run_load(const char *input, const struct analysis_opts *o, struct analysis *a,
			   struct aorta_error *e);

/* Reads a clock-offsets file (clock_offsets.c): one 'KEY OFFSET_NS' per
 * line, KEY a rank number or a host name, '#' comments; *out is the
 * caller's.  Errors name the file and line. */
enum aorta_status clock_offsets_load(const char *path, struct clock_given **out, size_t *n,
				     struct aorta_error *e);

int cmd_analyze(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_hwq(int argc, char **argv);
int cmd_sdma(int argc, char **argv);
int cmd_tune_tp(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_env(int argc, char **argv);

#endif
