/*
 * upstream.c - a run folder's overlap_report.py records (pipeline/upstream.h):
 * its rank_*_metrics.jsonl found as overlap_report.py globs them, their
 * records read as ingest/upstream_sums.h reads them, into report's
 * struct rep_upstream.
 *
 * Design.  Where report's analysis read the run's JSONL, the records come
 * from that same pass (pipeline_upstream_from_sums checks that it read
 * exactly the files overlap_report.py globs, in its order); else (traces
 * beside the JSONL) from a pass of their own, a line at a time
 * (pipeline_upstream_read).  A line that is not JSON or not an upstream
 * record is left out and counted (overlap_report.py would stop there);
 * the first is described.
 */
#include "pipeline/upstream.h"
#include "ingest/upstream_sums.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The rank_*_metrics.jsonl names of dir, sorted as Python's sorted(glob). */
static char **metrics_files(const char *dir, size_t *n)
{
	DIR *d = opendir(dir);
	char **v = NULL;
	size_t cap = 0;
	*n = 0;
	if (!d)
		return NULL;
	for (struct dirent *de; (de = readdir(d));)
		if (up_is_metrics_name(de->d_name)) {
			GROW(v, cap, *n + 1);
			v[(*n)++] = xstrdup(de->d_name);
		}
	closedir(d);
	if (*n)
		qsort(v, *n, sizeof(*v), cmp_str);
	return v;
}

size_t pipeline_upstream_files(const char *dir)
{
	size_t n;
	char **v = metrics_files(dir, &n);
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
	return n;
}

char **pipeline_upstream_paths(const char *dir, size_t *n)
{
	char **v = metrics_files(dir, n);
	for (size_t i = 0; i < *n; i++) {
		char *p = xasprintf("%s/%s", dir, v[i]);
		free(v[i]);
		v[i] = p;
	}
	return v;
}

/* The same file: a name overlap_report.py globs and one the reader read. */
static int same_file(const char *a, const char *b)
{
	struct stat x, y;
	return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

int pipeline_upstream_from_sums(const char *dir, const struct up_sums *s, struct rep_upstream *u)
{
	size_t n;
	char **v = metrics_files(dir, &n);
	int ok = n > 0 && s->files == n && !s->inexact;
	for (size_t i = 0; ok && i < n; i++) {
		char *p = xasprintf("%s/%s", dir, v[i]);
		ok = same_file(p, s->paths[i]);
		free(p);
	}
	if (ok) {
		memset(u, 0, sizeof(*u));
		u->files = n;
		u->count = s->count;
		u->loss_ok = s->loss_ok;
		u->sum_loss = s->sum_loss;
		u->sum_overlap = s->sum_overlap;
		u->sum_compute = s->sum_compute;
		u->sum_ar = s->sum_ar;
		u->sum_rs = s->sum_rs;
		u->bad_lines = s->bad_lines;
		if (s->bad_lines) {
			char *p = xasprintf("%s/%s", dir, v[s->first_bad_file]);
			snprintf(u->first_bad, sizeof(u->first_bad), "%.300s: line %lld: %.180s", p,
				 s->first_bad_line, s->first_bad);
			free(p);
		}
		u->ranks = xcalloc(n, sizeof(*u->ranks));
		for (size_t i = 0; i < n; i++)
			u->ranks[i] = (struct rep_upstream_rank){ s->ranks[i].rank, s->ranks[i].sum_overlap,
								  s->ranks[i].sum_compute };
		u->nranks = n;
		u->has = 1;
		u->from = "jsonl";
	}
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
	return ok;
}

enum aorta_status pipeline_upstream_read(const char *dir, struct rep_upstream *u, struct aorta_error *e)
{
	size_t n;
	char **v = pipeline_upstream_paths(dir, &n);
	enum aorta_status st = AORTA_OK;
	struct up_sums s;
	up_sums_init(&s);
	for (size_t i = 0; i < n && !st; i++) {
		struct up_file f;
		up_file_init(&f);
		st = up_read_file(v[i], &f, e);
		up_fold(&s, v[i], &f);
		up_file_release(&f);
	}
	memset(u, 0, sizeof(*u));
	u->loss_ok = 1;
	u->from = "jsonl";
	if (!st && n && !pipeline_upstream_from_sums(dir, &s, u))
		st = aorta_fail(e, AORTA_EINTERNAL, dir, 0, -1, "the rank_*_metrics.jsonl files changed while read");
	u->files = n;
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
	up_sums_release(&s);
	return st;
}

