/*
 * upstream.c - overlap_report.py's summary figures from upstream JSONL
 * (upstream.h).
 *
 * Design.  A line at a time through yajl's event parser: the callbacks
 * keep the path of object keys (depth <= 8; arrays such as ranges and
 * active_segments are stepped over without looking) and take the five
 * numbers where they sit; a whole line that is an upstream record is
 * added to the sums.  Nothing is kept per record, so memory does not grow
 * with the run.  A line that is not JSON or not an upstream record is left
 * out and counted (overlap_report.py would stop there); the first is
 * described.
 */
#include "report/upstream.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#define DEPTH 8

enum { U_LOSS, U_OVERLAP, U_COMPUTE, U_AR, U_RS, U__N };

struct ust {
	char key[DEPTH][32];     /* key of each open object level (1-based depth) */
	int depth;               /* objects and arrays open */
	int arrays;              /* arrays open (values inside are not looked at) */
	char pending[32];        /* the last key at the current depth */
	double v[U__N];
	int have_overlap, loss_seen, loss_bad;
	struct rep_upstream *u;
	long long line;
	int bad;                 /* not an upstream record */
	int done;                /* a whole record was read */
};

static int at(const struct ust *s, const char *a, const char *b, const char *c)
{
	return s->depth == 4 && !s->arrays && !strcmp(s->key[1], a) && !strcmp(s->key[2], b) &&
	       !strcmp(s->key[3], c);
}

static int num(struct ust *s, double d)
{
	if (s->arrays)
		return 1;
	if (s->depth == 1 && !strcmp(s->pending, "loss")) {
		s->v[U_LOSS] = d;
		s->loss_seen = 1;
	} else if (at(s, "profile", "overlap", "overlap_ms")) {
		if (!strcmp(s->pending, "compute_comm"))
			s->v[U_OVERLAP] = d;
		else if (!strcmp(s->pending, "compute_allreduce"))
			s->v[U_AR] = d;
		else if (!strcmp(s->pending, "compute_reducescatter"))
			s->v[U_RS] = d;
	} else if (at(s, "profile", "overlap", "per_stream_ms") && !strcmp(s->pending, "compute")) {
		s->v[U_COMPUTE] = d;
	}
	return 1;
}

static int cb_int(void *ctx, long long v)
{
	return num(ctx, (double)v);
}

static int cb_dbl(void *ctx, double v)
{
	return num(ctx, v);
}

static int cb_other(void *ctx)
{
	struct ust *s = ctx;
	if (s->depth == 1 && !s->arrays && !strcmp(s->pending, "loss"))
		s->loss_bad = 1; /* null: upstream's sum would fail */
	return 1;
}

static int cb_bool(void *ctx, int b)
{
	(void)b;
	return cb_other(ctx);
}

static int cb_str(void *ctx, const unsigned char *p, size_t n)
{
	(void)p, (void)n;
	return cb_other(ctx);
}

static int cb_key(void *ctx, const unsigned char *k, size_t n)
{
	struct ust *s = ctx;
	if (n >= sizeof(s->pending))
		n = sizeof(s->pending) - 1;
	memcpy(s->pending, k, n);
	s->pending[n] = '\0';
	return 1;
}

static int cb_map(void *ctx)
{
	struct ust *s = ctx;
	if (!s->depth)
		memset(s->v, 0, sizeof(s->v)), s->have_overlap = s->loss_seen = s->loss_bad = 0;
	if (s->depth && s->depth < DEPTH)
		snprintf(s->key[s->depth], sizeof(s->key[0]), "%s", s->arrays ? "[]" : s->pending);
	s->depth++;
	if (s->depth == 3 && !s->arrays && !strcmp(s->key[1], "profile") && !strcmp(s->key[2], "overlap"))
		s->have_overlap = 1;
	return 1;
}

static int cb_end_map(void *ctx)
{
	struct ust *s = ctx;
	if (--s->depth)
		return 1;
	/* one record: as overlap_report.py's load_records and aggregate */
	s->line++;
	if (!s->have_overlap) {
		s->bad = 1;
		return 0;
	}
	s->done = 1;
	return 1;
}

static int cb_arr(void *ctx)
{
	struct ust *s = ctx;
	s->depth++;
	s->arrays++;
	return 1;
}

static int cb_end_arr(void *ctx)
{
	struct ust *s = ctx;
	s->depth--;
	s->arrays--;
	return 1;
}

static const yajl_callbacks CB = { cb_other, cb_bool, cb_int, cb_dbl, NULL, cb_str, cb_map, cb_key,
				   cb_end_map, cb_arr, cb_end_arr };

static int is_metrics(const char *n)
{
	size_t l = strlen(n);
	return !strncmp(n, "rank_", 5) && l > 19 && !strcmp(n + l - 14, "_metrics.jsonl");
}

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
		if (is_metrics(de->d_name)) {
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

/* A line left out: counted, the first one described. */
static void left_out(struct rep_upstream *u, const char *path, long long line, const char *why)
{
	if (!u->bad_lines++)
		snprintf(u->first_bad, sizeof(u->first_bad), "%.300s: line %lld: %.180s", path, line, why);
}

/* One file, a line at a time (a line that is not JSON or not an upstream
 * record is left out and counted; overlap_report.py would stop there). */
static enum aorta_status read_one(const char *path, struct rep_upstream *u, struct rep_upstream_rank *rk,
				  struct aorta_error *e)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return aorta_fail(e, AORTA_EINPUT, path, 0, -1, "cannot open: %s", strerror(errno));
	struct ust s = { .u = u };
	char *line = NULL;
	size_t cap = 0;
	long long no = 0;
	for (ssize_t n; (n = getline(&line, &cap, f)) > 0;) {
		no++;
		size_t len = (size_t)n;
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			len--;
		if (!len)
			continue;
		yajl_handle h = yajl_alloc(&CB, NULL, &s);
		s.depth = s.arrays = 0;
		s.bad = s.done = 0;
		yajl_status ys = yajl_parse(h, (const unsigned char *)line, len);
		if (ys == yajl_status_ok)
			ys = yajl_complete_parse(h);
		if (ys == yajl_status_ok && s.done) { /* as overlap_report.py's load_records and aggregate */
			u->count++;
			if (!s.loss_seen || s.loss_bad)
				u->loss_ok = 0;
			u->sum_loss += s.v[U_LOSS];
			u->sum_overlap += s.v[U_OVERLAP];
			u->sum_compute += s.v[U_COMPUTE];
			u->sum_ar += s.v[U_AR];
			u->sum_rs += s.v[U_RS];
			rk->sum_overlap += s.v[U_OVERLAP];
			rk->sum_compute += s.v[U_COMPUTE];
		} else if (ys == yajl_status_ok) {
			left_out(u, path, no, "not a JSON object");
		}
		if (ys != yajl_status_ok) {
			if (s.bad) {
				left_out(u, path, no, "not an upstream record (no profile.overlap object)");
			} else {
				unsigned char *m = yajl_get_error(h, 0, NULL, 0);
				char *nl = strchr((char *)m, '\n');
				if (nl)
					*nl = '\0';
				left_out(u, path, no, (const char *)m);
				yajl_free_error(h, m);
			}
		}
		yajl_free(h);
	}
	int err = ferror(f);
	free(line);
	fclose(f);
	if (err)
		return aorta_fail(e, AORTA_EINPUT, path, no, -1, "read error");
	return AORTA_OK;
}

enum aorta_status rep_upstream_read(const char *dir, struct rep_upstream *u, struct aorta_error *e)
{
	size_t n;
	char **v = metrics_files(dir, &n);
	enum aorta_status st = AORTA_OK;
	memset(u, 0, sizeof(*u));
	u->loss_ok = 1;
	u->ranks = xcalloc(n ? n : 1, sizeof(*u->ranks));
	for (size_t i = 0; i < n && !st; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, v[i]);
		/* the rank as overlap_report.py takes it: int(stem.split("_")[1]) */
		struct rep_upstream_rank *rk = &u->ranks[u->nranks++];
		rk->rank = atoi(v[i] + 5);
		st = read_one(path, u, rk, e);
	}
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
	u->files = n;
	u->has = !st && n > 0;
	u->from = "jsonl";
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
			const double *x = r->steps[k].rec;
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
