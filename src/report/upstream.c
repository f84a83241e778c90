/*
 * upstream.c - overlap_report.py's summary figures from upstream JSONL
 * (upstream.h).
 *
 * Design.  The records are read as ingest/upstream_sums.h reads them:
 * where report's analysis read the run's JSONL, in that same pass
 * (rep_upstream_from_sums checks that it read exactly the files
 * overlap_report.py globs, in its order); else (traces beside the JSONL)
 * by a pass of their own, a line at a time, rep_upstream_read.  A line
 * that is not JSON or not an upstream record is left out and counted
 * (overlap_report.py would stop there); the first is described.
 */
#include "report/upstream.h"
#include "ingest/upstream_sums.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
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

size_t rep_upstream_files(const char *dir)
{
	size_t n;
	char **v = metrics_files(dir, &n);
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
	return n;
}

char **rep_upstream_paths(const char *dir, size_t *n)
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

int rep_upstream_from_sums(const char *dir, const struct up_sums *s, struct rep_upstream *u)
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

enum aorta_status rep_upstream_read(const char *dir, struct rep_upstream *u, struct aorta_error *e)
{
	size_t n;
	char **v = rep_upstream_paths(dir, &n);
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
	if (!st && n && !rep_upstream_from_sums(dir, &s, u))
		st = aorta_fail(e, AORTA_EINTERNAL, dir, 0, -1, "the rank_*_metrics.jsonl files changed while read");
	u->files = n;
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
	up_sums_release(&s);
	return st;
}

int rep_upstream_from_recorded(const struct analysis *a, struct rep_upstream *u)
{
	memset(u, 0, sizeof(*u));
	u->loss_ok = 1;
	u->ranks = xcalloc(a->n ? a->n : 1, sizeof(*u->ranks));
	for (size_t i = 0; i < a->n; i++) {
		const struct rank_result *r = &a->r[i];
		if (!r->has_rec)
			continue;
		struct rep_upstream_rank *rk = &u->ranks[u->nranks++];
		rk->rank = r->rank;
		for (size_t k = 0; k < r->nsteps; k++) {
			double x[SR__COUNT];
			for (int q = 0; q < SR__COUNT; q++)
				x[q] = step_rec(r, k, q);
#define Z(q) (isnan(x[q]) ? 0.0 : x[q])
			u->count++;
			u->loss_ok &= !isnan(x[SR_LOSS]);
			u->sum_loss += Z(SR_LOSS);
			u->sum_overlap += Z(SR_OVERLAP);
			u->sum_compute += Z(SR_COMPUTE);
			u->sum_ar += Z(SR_AR_OVERLAP);
			u->sum_rs += Z(SR_RS_OVERLAP);
			rk->sum_overlap += Z(SR_OVERLAP);
			rk->sum_compute += Z(SR_COMPUTE);
#undef Z
		}
		u->files++;
	}
	u->has = u->count > 0;
	u->from = "recorded";
	return u->has;
}

void rep_upstream_free(struct rep_upstream *u)
{
	free(u->ranks);
	u->ranks = NULL;
	u->nranks = 0;
}

double rep_upstream_rank_ratio(const struct rep_upstream *u, int rank)
{
	for (size_t i = 0; i < u->nranks; i++)
		if (u->ranks[i].rank == rank)
			return u->ranks[i].sum_compute > 0 ? u->ranks[i].sum_overlap / u->ranks[i].sum_compute : 0.0;
	return NAN;
}

double rep_upstream_mean(const struct rep_upstream *u, const double *sum)
{
	return u->count ? *sum / (double)u->count : NAN;
}

double rep_upstream_ratio(const struct rep_upstream *u)
{
	double c = rep_upstream_mean(u, &u->sum_compute);
	return c > 0 ? rep_upstream_mean(u, &u->sum_overlap) / c : 0.0;
}
