/*
 * upstream_sums.h - upstream overlap_report.py's per-record figures of
 * rank_*_metrics.jsonl, gathered while the JSONL reader reads the file
 * (aorta_jsonl.c, one pass) or by a pass of their own (up_read_file, where
 * the run's figures come from traces beside the JSONL).
 *
 * overlap_report.py globs rank_*_metrics.jsonl of a run directory, sorted
 * by name, and pools every record of every rank (no warm-up skip).  Per
 * record it reads loss, profile.overlap.overlap_ms.compute_comm,
 * .compute_allreduce, .compute_reducescatter and
 * profile.overlap.per_stream_ms.compute (0 when a key is missing).  A
 * record is a line that is a JSON object with a profile.overlap object;
 * any other non-empty line is left out and counted (overlap_report.py
 * would stop there), the first described.
 *
 * The run's sums are added record after record in file-name order, as
 * Python adds them, so they equal its figures to the bit; files read in
 * parallel keep their records (five doubles each) until every file before
 * them has been folded in (up_fold, in file order).
 */
#ifndef AORTA_INGEST_UPSTREAM_SUMS_H
#define AORTA_INGEST_UPSTREAM_SUMS_H

#include <stddef.h>

#include "base/error.h"

enum { UP_LOSS, UP_OVERLAP, UP_COMPUTE, UP_AR, UP_RS, UP__N };

/* One rank_*_metrics.jsonl: its records in line order. */
struct up_file {
	int exact;              /* read as overlap_report.py reads it (raw bytes: no gzip, no BOM skipped) */
	double (*rec)[UP__N];   /* per record, in line order */
	size_t n, cap;
	int loss_ok;            /* every record has a numeric loss */
	double sum_overlap, sum_compute; /* this file's sums (a per-rank overlap_ratio) */
	long long bad_lines;    /* lines left out */
	long long first_bad_line;
	char first_bad[200];    /* why the first was left out */
};
void up_file_init(struct up_file *f);
void up_file_release(struct up_file *f);
/* One record: v[UP_*], loss_ok 0 when its loss was missing or not a number. */
void up_file_add(struct up_file *f, const double v[UP__N], int loss_ok);
void up_file_left_out(struct up_file *f, long long line, const char *why);
/* One line of the file (without its '\n'; trailing '\r's are stripped
 * here, an empty line is not a record), parsed on its own as
 * overlap_report.py's loop would read it. */
void up_file_line(struct up_file *f, long long lineno, const char *line, size_t len);
/* A whole file, a line at a time.  Only an unreadable file is an error. */
enum aorta_status up_read_file(const char *path, struct up_file *f, struct aorta_error *e);

/* A run's sums over its files, folded in file order. */
struct up_sums {
	size_t files;
	long long count;
	int loss_ok;
	double sum_loss, sum_overlap, sum_compute, sum_ar, sum_rs;
	long long bad_lines;
	size_t first_bad_file;  /* index (in fold order) of the file of the first line left out */
	long long first_bad_line;
	char first_bad[200];
	struct up_rank { int rank; double sum_overlap, sum_compute; } *ranks; /* per file */
	char **paths;           /* the files folded, in order (owned) */
	int inexact;            /* some file was not read as overlap_report.py reads it */
};
void up_sums_init(struct up_sums *s);
void up_sums_release(struct up_sums *s);
/* Adds f (the file at path) after the files already folded, record by
 * record; f is left as it was (the caller releases it). */
void up_fold(struct up_sums *s, const char *path, const struct up_file *f);

/* Whether path's last component is rank_*_metrics.jsonl (overlap_report.py's glob). */
int up_is_metrics_name(const char *path);
/* The rank overlap_report.py gives the file: int(stem.split("_")[1]). */
int up_rank_of(const char *path);

#endif
