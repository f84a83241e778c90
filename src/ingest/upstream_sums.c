/*
 * upstream_sums.c - overlap_report.py's per-record figures (upstream_sums.h).
 *
 * Design.  up_file_line is the reference reading of one line, used where
 * the JSONL reader does not read the file (traces beside the JSONL) and
 * for the rare lines it does not take itself (invalid JSON, comments, a
 * number that overflows, blanks): yajl's event parser, the callbacks keep
 * the path of object keys (depth <= 8; arrays such as ranges and
 * active_segments are stepped over without looking) and take the five
 * numbers where they sit.  Nothing is kept per record beyond its five
 * numbers, and those only until the file is folded.
 */
#include "ingest/upstream_sums.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#define DEPTH 8

struct ust {
	char key[DEPTH][32];     /* key of each open object level (1-based depth) */
	int depth;               /* objects and arrays open */
	int arrays;              /* arrays open (values inside are not looked at) */
	char pending[32];        /* the last key at the current depth */
	double v[UP__N];
	int have_overlap, loss_seen, loss_bad;
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
		s->v[UP_LOSS] = d;
		s->loss_seen = 1;
	} else if (at(s, "profile", "overlap", "overlap_ms")) {
		if (!strcmp(s->pending, "compute_comm"))
			s->v[UP_OVERLAP] = d;
		else if (!strcmp(s->pending, "compute_allreduce"))
			s->v[UP_AR] = d;
		else if (!strcmp(s->pending, "compute_reducescatter"))
			s->v[UP_RS] = d;
	} else if (at(s, "profile", "overlap", "per_stream_ms") && !strcmp(s->pending, "compute")) {
		s->v[UP_COMPUTE] = d;
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

void up_file_init(struct up_file *f)
{
	memset(f, 0, sizeof(*f));
	f->loss_ok = 1; /* exact: set by the reader that takes it */
}

void up_file_release(struct up_file *f)
{
	free(f->rec);
	f->rec = NULL;
	f->n = f->cap = 0;
}

void up_file_add(struct up_file *f, const double v[UP__N], int loss_ok)
{
	GROW(f->rec, f->cap, f->n + 1);
	memcpy(f->rec[f->n++], v, sizeof(f->rec[0]));
	f->loss_ok &= loss_ok;
	f->sum_overlap += v[UP_OVERLAP];
	f->sum_compute += v[UP_COMPUTE];
}

void up_file_left_out(struct up_file *f, long long line, const char *why)
{
	if (!f->bad_lines++) {
		f->first_bad_line = line;
		snprintf(f->first_bad, sizeof(f->first_bad), "%.180s", why);
	}
}

void up_file_line(struct up_file *f, long long lineno, const char *line, size_t len)
{
	while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		len--;
	if (!len)
		return;
	struct ust s = { 0 };
	yajl_handle h = yajl_alloc(&CB, NULL, &s);
	yajl_status ys = yajl_parse(h, (const unsigned char *)line, len);
	if (ys == yajl_status_ok)
		ys = yajl_complete_parse(h);
	if (ys == yajl_status_ok && s.done) /* as overlap_report.py's load_records and aggregate */
		up_file_add(f, s.v, s.loss_seen && !s.loss_bad);
	else if (ys == yajl_status_ok)
		up_file_left_out(f, lineno, "not a JSON object");
	else if (s.bad)
		up_file_left_out(f, lineno, "not an upstream record (no profile.overlap object)");
	else {
		unsigned char *m = yajl_get_error(h, 0, NULL, 0);
		char *nl = strchr((char *)m, '\n');
		if (nl)
			*nl = '\0';
		up_file_left_out(f, lineno, (const char *)m);
		yajl_free_error(h, m);
	}
	yajl_free(h);
}

enum aorta_status up_read_file(const char *path, struct up_file *f, struct aorta_error *e)
{
	FILE *fp = fopen(path, "rb");
	f->exact = 1;
	if (!fp)
		return aorta_fail(e, AORTA_EINPUT, path, 0, -1, "cannot open: %s", strerror(errno));
	char *line = NULL;
	size_t cap = 0;
	long long no = 0;
	for (ssize_t n; (n = getline(&line, &cap, fp)) > 0;)
		up_file_line(f, ++no, line, (size_t)n);
	int err = ferror(fp);
	free(line);
	fclose(fp);
	if (err)
		return aorta_fail(e, AORTA_EINPUT, path, no, -1, "read error");
	return AORTA_OK;
}

void up_sums_init(struct up_sums *s)
{
	memset(s, 0, sizeof(*s));
	s->loss_ok = 1;
}

void up_sums_release(struct up_sums *s)
{
	for (size_t i = 0; i < s->files; i++)
		free(s->paths[i]);
	free(s->paths);
	free(s->ranks);
	memset(s, 0, sizeof(*s));
}

void up_fold(struct up_sums *s, const char *path, const struct up_file *f)
{
	s->paths = xrealloc(s->paths, (s->files + 1) * sizeof(*s->paths));
	s->ranks = xrealloc(s->ranks, (s->files + 1) * sizeof(*s->ranks));
	s->paths[s->files] = xstrdup(path);
	s->ranks[s->files] = (struct up_rank){ up_rank_of(path), f->sum_overlap, f->sum_compute };
	for (size_t k = 0; k < f->n; k++) {
		const double *v = f->rec[k];
		s->sum_loss += v[UP_LOSS];
		s->sum_overlap += v[UP_OVERLAP];
		s->sum_compute += v[UP_COMPUTE];
		s->sum_ar += v[UP_AR];
		s->sum_rs += v[UP_RS];
	}
	s->count += (long long)f->n;
	s->loss_ok &= f->loss_ok;
	if (f->bad_lines && !s->bad_lines) {
		s->first_bad_file = s->files;
		s->first_bad_line = f->first_bad_line;
		memcpy(s->first_bad, f->first_bad, sizeof(s->first_bad));
	}
	s->bad_lines += f->bad_lines;
	s->inexact |= !f->exact;
	s->files++;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

int up_is_metrics_name(const char *path)
{
	const char *n = base_name(path);
	size_t l = strlen(n);
	return !strncmp(n, "rank_", 5) && l > 19 && !strcmp(n + l - 14, "_metrics.jsonl");
}

int up_rank_of(const char *path)
{
	return atoi(base_name(path) + 5);
}
