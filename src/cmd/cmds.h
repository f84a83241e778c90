/*
 * cmds.h - every command's entry point; src/main.c holds the table.
 * A command returns an exit code (enum aorta_status values, docs/cli.md).
 */
#ifndef AORTA_CMDS_H
#define AORTA_CMDS_H

#include "base/error.h"
#include "overlap/analysis.h"

/* One run as a struct analysis (runs.c): a saved analysis is read back,
 * anything else goes through analysis_run.  On error *a is freed. */
enum aorta_status run_load(const char *input, const struct analysis_opts *o, struct analysis *a,
			   struct aorta_error *e);

int run_is_saved_analysis(const char *input);

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
