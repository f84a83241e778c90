/*
 * report_model.c - reading the datasets of `aorta report` (report.h) and
 * the pooled statistics over them.
 *
 * JSONL.  Each line is parsed by yajl's event parser, not its tree: the
 * callbacks follow a small state machine (which object or array we are in)
 * and convert only the numbers we keep, so the long active_segments arrays
 * of upstream lines cost a scan and nothing else.  That is what makes 64
 * ranks x 10,000 steps (1.5 GB) a few seconds on two cores.  The file is
 * read in 1 MiB chunks through zread (gzip works) and split into lines; a
 * line is handed to a fresh parser, so one bad line cannot spoil the next.
 * A line that is not valid JSON is counted (bad_lines, first line number
 * kept) and left out; a valid line without profile.total_ms is counted as
 * skipped (a log line, a summary) and left out.
 *
 * Analyses and traces.  An aorta.analysis/1 file gives per-step figures
 * (its collective overlap is only whole-run, so the per-collective overlap
 * of each step is the run's mean per step); traces go through analysis_run
 * and give everything per step.  Both give collectives by message size.
 */
#include "report/report.h"

#include <dirent.h>
#include <glob.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yajl/yajl_parse.h>
#include <yajl/yajl_tree.h>

#include "base/zread.h"
#include "ingest/ingest.h"
#include "pipeline/pipeline.h"
#include "timeline/timeline.h"

const struct rep_fig_def REP_FIGS[RF__COUNT] = {
	[RF_STEP] = { "step", "step time", 1 },
	[RF_COMPUTE] = { "compute", "compute", 0 },
	[RF_OVERLAP] = { "overlap", "compute-comm overlap", -1 },
	[RF_AR_OVERLAP] = { "allreduce_overlap", "all-reduce overlap", -1 },
	[RF_RS_OVERLAP] = { "reducescatter_overlap", "reduce-scatter overlap", -1 },
	[RF_AG_OVERLAP] = { "allgather_overlap", "all-gather overlap", -1 },
	[RF_COMM] = { "comm", "communication", 1 },
	[RF_EXPOSED] = { "exposed_comm", "exposed communication", 1 },
	[RF_AUX] = { "aux", "aux / memcpy", 0 },
	[RF_IDLE] = { "idle", "idle", 1 },
};

/* ---- JSONL line parser ------------------------------------------------------ */

enum lvl { L_ROOT, L_PROFILE, L_OVERLAP, L_PERSTREAM, L_OVMS, L_RANGES, L_RANGE, L_OTHER };

struct lp {
	enum lvl st[64];
	int depth;                /* st[depth-1] is the current container */
	char key[64];             /* current key, truncated */
	size_t keylen;
	/* this line */
	int has_total, has_rank, has_world, has_gstep;
	double total, loss, rank, world, gstep;
	double comm_ms, ps_compute, ps_aux, ov_cc, ov_ar, ov_rs, ov_ag, ov_idle;
	int has_idle;
	/* range in progress */
	char rstream[32];
	double rs0, rs1;
	int rhave;
	/* ranges of this line (kept only when asked) */
	int keep;
	struct rep_rank *r;
	size_t nr_line;
};

static int key_is(const struct lp *p, const char *k)
{
	size_t n = strlen(k);
	return p->keylen == n && memcmp(p->key, k, n) == 0;
}

static enum lvl cur(const struct lp *p)
{
	return p->depth ? p->st[p->depth - 1] : L_OTHER;
}

static int push(struct lp *p, enum lvl l)
{
	if (p->depth >= 64)
		return 0; /* deeper than any metrics line: stop */
	p->st[p->depth++] = l;
	return 1;
}

static int cb_start_map(void *ctx)
{
	struct lp *p = ctx;
	enum lvl c = cur(p), n = L_OTHER;

	if (p->depth == 0)
		n = L_ROOT;
	else if (c == L_ROOT && key_is(p, "profile"))
		n = L_PROFILE;
	else if (c == L_PROFILE && key_is(p, "overlap"))
		n = L_OVERLAP;
	else if (c == L_OVERLAP && key_is(p, "per_stream_ms"))
		n = L_PERSTREAM;
	else if (c == L_OVERLAP && key_is(p, "overlap_ms"))
		n = L_OVMS;
	else if (c == L_RANGES) {
		n = L_RANGE;
		p->rhave = 0;
		p->rstream[0] = '\0';
	}
	p->keylen = 0;
	return push(p, n);
}

static void add_range(struct lp *p)
{
	struct rep_rank *r = p->r;
	int k;

	if ((p->rhave & 7) != 7 || !isfinite(p->rs0) || !isfinite(p->rs1) || p->rs1 < p->rs0)
		return;
	for (k = 0; k < r->nstream_names; k++)
		if (!strcmp(r->stream_names[k], p->rstream))
			break;
	if (k == r->nstream_names) {
		if (k == 16)
			return;
		r->stream_names[r->nstream_names++] = xstrdup(p->rstream);
	}
	GROW(r->ranges, r->ranges_cap, r->nranges + 1);
	r->ranges[r->nranges].stream = (uint8_t)k;
	r->ranges[r->nranges].start_ms = (float)p->rs0;
	r->ranges[r->nranges].end_ms = (float)p->rs1;
	r->nranges++;
	p->nr_line++;
}

static int cb_end_map(void *ctx)
{
	struct lp *p = ctx;

	if (cur(p) == L_RANGE && p->keep)
		add_range(p);
	p->depth--;
	p->keylen = 0;
	return 1;
}

static int cb_start_array(void *ctx)
{
	struct lp *p = ctx;
	enum lvl n = (cur(p) == L_PROFILE && key_is(p, "ranges")) ? L_RANGES : L_OTHER;

	p->keylen = 0;
	return push(p, n);
}

static int cb_end_array(void *ctx)
{
	struct lp *p = ctx;

	p->depth--;
	p->keylen = 0;
	return 1;
}

static int cb_key(void *ctx, const unsigned char *k, size_t len)
{
	struct lp *p = ctx;

	if (len >= sizeof(p->key))
		len = sizeof(p->key) - 1;
	memcpy(p->key, k, len);
	p->key[len] = '\0';
	p->keylen = len;
	return 1;
}

static int is_comm_stream(const char *k)
{
	return !strcmp(k, "allreduce") || !strcmp(k, "reducescatter") || !strcmp(k, "allgather") ||
	       !strcmp(k, "comm") || !strncmp(k, "nccl", 4);
}

static void on_number(struct lp *p, double v)
{
	switch (cur(p)) {
	case L_ROOT:
		if (key_is(p, "rank"))
			p->rank = v, p->has_rank = 1;
		else if (key_is(p, "world_size"))
			p->world = v, p->has_world = 1;
		else if (key_is(p, "global_step"))
			p->gstep = v, p->has_gstep = 1;
		else if (key_is(p, "loss"))
			p->loss = v;
		break;
	case L_PROFILE:
		if (key_is(p, "total_ms"))
			p->total = v, p->has_total = 1;
		break;
	case L_PERSTREAM:
		if (key_is(p, "compute"))
			p->ps_compute = v;
		else if (key_is(p, "aux"))
			p->ps_aux = v;
		else if (is_comm_stream(p->key))
			p->comm_ms += v;
		break;
	case L_OVMS:
		if (key_is(p, "compute_comm"))
			p->ov_cc = v;
		else if (key_is(p, "compute_allreduce"))
			p->ov_ar = v;
		else if (key_is(p, "compute_reducescatter"))
			p->ov_rs = v;
		else if (key_is(p, "compute_allgather"))
			p->ov_ag = v;
		else if (key_is(p, "idle"))
			p->ov_idle = v, p->has_idle = 1;
		break;
	case L_RANGE:
		if (key_is(p, "start_ms"))
			p->rs0 = v, p->rhave |= 2;
		else if (key_is(p, "end_ms"))
			p->rs1 = v, p->rhave |= 4;
		break;
	default:
		break;
	}
}

static int wanted(const struct lp *p)
{
	enum lvl c = cur(p);
	return c == L_ROOT || c == L_PROFILE || c == L_PERSTREAM || c == L_OVMS || c == L_RANGE;
}

static int cb_number(void *ctx, const char *s, size_t len)
{
	struct lp *p = ctx;
	char buf[64];

	if (!wanted(p))
		return 1;
	if (len >= sizeof(buf))
		len = sizeof(buf) - 1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	on_number(p, strtod(buf, NULL));
	return 1;
}

static int cb_string(void *ctx, const unsigned char *s, size_t len)
{
	struct lp *p = ctx;

	if (cur(p) == L_RANGE && key_is(p, "stream")) {
		if (len >= sizeof(p->rstream))
			len = sizeof(p->rstream) - 1;
		memcpy(p->rstream, s, len);
		p->rstream[len] = '\0';
		p->rhave |= 1;
	}
	return 1;
}

static int cb_other(void *ctx)
{
	(void)ctx;
	return 1;
}

static int cb_bool(void *ctx, int b)
{
	(void)ctx;
	(void)b;
	return 1;
}

static const yajl_callbacks CALLBACKS = {
	cb_other, cb_bool, NULL, NULL, cb_number, cb_string,
	cb_start_map, cb_key, cb_end_map, cb_start_array, cb_end_array,
};

struct jread {
	struct rep_rank *r;
	size_t scap;
	int keep;
	int have_rank;
};

static void parse_line(struct jread *j, const char *line, size_t len, long long lineno)
{
	struct rep_rank *r = j->r;
	struct lp p;
	size_t nr0 = r->nranges;

	memset(&p, 0, sizeof(p));
	p.loss = NAN;
	p.keep = j->keep;
	p.r = r;
	yajl_handle h = yajl_alloc(&CALLBACKS, NULL, &p);
	yajl_status s = yajl_parse(h, (const unsigned char *)line, len);
	if (s == yajl_status_ok)
		s = yajl_complete_parse(h);
	yajl_free(h);
	r->lines++;
	if (s != yajl_status_ok || memchr(line, '\0', len)) {
		r->nranges = nr0;
		if (!r->bad_lines)
			r->bad_line_first = lineno;
		r->bad_lines++;
		return;
	}
	if (!p.has_total || !isfinite(p.total) || p.total < 0) {
		r->nranges = nr0;
		r->skipped_lines++;
		return;
	}
	if (!j->have_rank && p.has_rank && p.rank >= 0 && p.rank < 1e6) {
		r->rank = (int)p.rank;
		j->have_rank = 1;
	}
	if (p.has_world && p.world > 0 && p.world < 1e7 && !r->world_size)
		r->world_size = (int)p.world;
	GROW(r->steps, j->scap, r->nsteps + 1);
	struct rep_step *st = &r->steps[r->nsteps];
	st->gstep = p.has_gstep && fabs(p.gstep) < 9e15 ? (int64_t)p.gstep : (int64_t)r->nsteps;
	st->loss = p.loss;
	st->v[RF_STEP] = p.total;
	st->v[RF_COMPUTE] = p.ps_compute;
	st->v[RF_OVERLAP] = p.ov_cc;
	st->v[RF_AR_OVERLAP] = p.ov_ar;
	st->v[RF_RS_OVERLAP] = p.ov_rs;
	st->v[RF_AG_OVERLAP] = p.ov_ag;
	st->v[RF_COMM] = p.comm_ms;
	st->v[RF_EXPOSED] = p.comm_ms > p.ov_cc ? p.comm_ms - p.ov_cc : 0;
	st->v[RF_AUX] = p.ps_aux;
	st->v[RF_IDLE] = p.has_idle ? p.ov_idle : 0;
	for (int f = 0; f < RF__COUNT; f++)
		if (!isfinite(st->v[f]))
			st->v[f] = 0;
	r->nsteps++;
	if (j->keep) {
		size_t c = r->nsteps; /* step_range0 has nsteps + 1 entries */
		GROW(r->step_range0, r->sr_cap, c + 1);
		r->step_range0[c - 1] = nr0;
		r->step_range0[c] = r->nranges;
	}
}

enum aorta_status report_read_jsonl(const char *path, int keep_ranges, struct rep_rank *r,
				    struct aorta_error *e)
{
	struct zread *z = NULL;
	enum aorta_status s;
	struct jread j = { r, 0, keep_ranges, 0 };
	char *buf = NULL, *line = NULL;
	size_t lcap = 0, llen = 0;
	long long lineno = 0;
	const size_t CHUNK = 1u << 20;

	memset(r, 0, sizeof(*r));
	r->path = xstrdup(path);
	r->rank = rank_from_name(path);
	if ((s = zread_open(path, &z, e)))
		return s;
	buf = xmalloc(CHUNK);
	for (;;) {
		ssize_t n = zread_read(z, buf, CHUNK, e);
		if (n < 0) {
			s = e ? e->code : AORTA_EINPUT;
			break;
		}
		if (n == 0)
			break;
		const char *b = buf, *end = buf + n;
		while (b < end) {
			const char *nl = memchr(b, '\n', (size_t)(end - b));
			size_t take = (size_t)((nl ? nl : end) - b);
			if (nl && llen == 0) {
				/* a whole line inside the chunk: no copy */
				lineno++;
				size_t k = take;
				while (k && (b[k - 1] == '\r' || b[k - 1] == ' ' || b[k - 1] == '\t'))
					k--;
				if (k)
					parse_line(&j, b, take, lineno);
			} else {
				GROW(line, lcap, llen + take + 1);
				memcpy(line + llen, b, take);
				llen += take;
				if (nl) {
					lineno++;
					size_t k = llen;
					while (k && (line[k - 1] == '\r' || line[k - 1] == ' ' || line[k - 1] == '\t'))
						k--;
					if (k)
						parse_line(&j, line, llen, lineno);
					llen = 0;
				}
			}
			b += take + (nl ? 1 : 0);
		}
	}
	if (!s && llen) { /* last line without a newline: complete or cut */
		size_t k = llen;
		while (k && (line[k - 1] == '\r' || line[k - 1] == ' ' || line[k - 1] == '\t'))
			k--;
		if (k)
			parse_line(&j, line, llen, ++lineno);
	}
	zread_close(z);
	free(buf);
	free(line);
	if (r->rank < 0)
		r->rank = 0;
	if (!keep_ranges) {
		free(r->step_range0);
		r->step_range0 = NULL;
	}
	return s;
}

/* ---- datasets ----------------------------------------------------------------- */

static void rank_release(struct rep_rank *r)
{
	free(r->path);
	free(r->steps);
	free(r->ranges);
	free(r->step_range0);
	for (int k = 0; k < r->nstream_names; k++)
		free(r->stream_names[k]);
	memset(r, 0, sizeof(*r));
}

void rep_dataset_free(struct rep_dataset *d)
{
	for (size_t i = 0; i < d->nranks; i++)
		rank_release(&d->ranks[i]);
	free(d->ranks);
	free(d->colls);
	free(d->config_text);
	free(d->stat);
	memset(d, 0, sizeof(*d));
}

void report_free(struct report *r)
{
	for (size_t i = 0; i < r->nds; i++)
		rep_dataset_free(&r->ds[i]);
	free(r->ds);
	free(r->cand);
	memset(r, 0, sizeof(*r));
}

static int cmp_rank(const void *a, const void *b)
{
	const struct rep_rank *x = a, *y = b;
	return (x->rank > y->rank) - (x->rank < y->rank);
}

struct jobs {
	char **files;
	size_t n, next;
	struct rep_rank *out;
	enum aorta_status *st;
	struct aorta_error *err;
	pthread_mutex_t mu;
};

static void *worker(void *arg)
{
	struct jobs *j = arg;
	for (;;) {
		pthread_mutex_lock(&j->mu);
		size_t i = j->next++;
		pthread_mutex_unlock(&j->mu);
		if (i >= j->n)
			return NULL;
		/* ranges are kept for the first file only (the Gantt chart's rank) */
		j->st[i] = report_read_jsonl(j->files[i], i == 0, &j->out[i], &j->err[i]);
	}
}

static int ncores(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 && n < 256 ? (int)n : 1;
}

static enum aorta_status read_jsonl_files(char **files, size_t n, const struct report_opts *o,
					  struct rep_dataset *d, struct aorta_error *e)
{
	struct jobs j = { files, n, 0, xcalloc(n, sizeof(struct rep_rank)), xcalloc(n, sizeof(enum aorta_status)),
			  xcalloc(n, sizeof(struct aorta_error)), PTHREAD_MUTEX_INITIALIZER };
	int nt = o->threads > 0 ? o->threads : ncores();
	if ((size_t)nt > n)
		nt = (int)n;
	pthread_t *th = xcalloc((size_t)nt, sizeof(*th));
	int started = 0;
	for (int t = 1; t < nt; t++)
		if (pthread_create(&th[t], NULL, worker, &j) == 0)
			started = t;
		else
			break;
	worker(&j);
	for (int t = 1; t <= started; t++)
		pthread_join(th[t], NULL);
	free(th);
	enum aorta_status s = AORTA_OK;
	for (size_t i = 0; i < n; i++)
		if (j.st[i] && !s) {
			s = j.st[i];
			if (e)
				*e = j.err[i];
		}
	/* the first file keeps the ranges; remember it across the sort */
	int keep_rank = n ? j.out[0].rank : -1;
	d->ranks = j.out;
	d->nranks = n;
	qsort(d->ranks, n, sizeof(*d->ranks), cmp_rank);
	for (size_t i = 0; i < n; i++) {
		d->bad_lines += d->ranks[i].bad_lines;
		d->skipped_lines += d->ranks[i].skipped_lines;
		if (d->ranks[i].rank == keep_rank && d->ranks[i].step_range0)
			d->has_ranges = 1;
		for (size_t k = 0; k < d->ranks[i].nsteps; k++)
			if (!isnan(d->ranks[i].steps[k].loss))
				d->has_loss = 1;
	}
	free(j.st);
	free(j.err);
	return s;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sets v from an analysis per-step object or a figures object. */
static double jnum(yajl_val o, const char *k)
{
	const char *p[2] = { k, NULL };
	yajl_val v = o ? yajl_tree_get(o, p, yajl_t_any) : NULL;
	return v && YAJL_IS_NUMBER(v) ? YAJL_GET_DOUBLE(v) : NAN;
}

static double jnum2(yajl_val o, const char *a, const char *b)
{
	const char *p[3] = { a, b, NULL };
	yajl_val v = o ? yajl_tree_get(o, p, yajl_t_any) : NULL;
	return v && YAJL_IS_NUMBER(v) ? YAJL_GET_DOUBLE(v) : NAN;
}

static double z0(double v)
{
	return isfinite(v) ? v : 0;
}

static void coll_add(struct rep_dataset *d, size_t *cap, const char *type, double bytes, double count,
		     double total_ms, double busbw)
{
	size_t k;
	if (!(bytes > 0) || !(count > 0))
		return;
	for (k = 0; k < d->ncolls; k++)
		if (!strcmp(d->colls[k].type, type) && d->colls[k].bytes == bytes)
			break;
	if (k == d->ncolls) {
		GROW(d->colls, *cap, k + 1);
		memset(&d->colls[k], 0, sizeof(d->colls[k]));
		snprintf(d->colls[k].type, sizeof(d->colls[k].type), "%s", type);
		d->colls[k].bytes = bytes;
		d->ncolls++;
	}
	d->colls[k].count += count;
	d->colls[k].total_ms += z0(total_ms);
	if (isfinite(busbw)) {
		d->colls[k].busbw_gbps_sum += busbw;
		d->colls[k].busbw_n += 1;
	}
}

static enum aorta_status read_analysis_json(const char *path, struct rep_dataset *d, struct aorta_error *e)
{
	char *buf = NULL, err[256];
	size_t len = 0, ccap = 0;
	enum aorta_status s = zread_all(path, 0, &buf, &len, e);
	if (s)
		return s;
	yajl_val root = yajl_tree_parse(buf, err, sizeof(err));
	free(buf);
	if (!root)
		return aorta_fail(e, AORTA_EINPUT, path, 0, -1, "invalid analysis JSON: %s", err);
	const char *rp[] = { "ranks", NULL };
	yajl_val ranks = yajl_tree_get(root, rp, yajl_t_array);
	size_t n = ranks ? ranks->u.array.len : 0;
	d->ranks = xcalloc(n ? n : 1, sizeof(*d->ranks));
	for (size_t i = 0; i < n; i++) {
		yajl_val rk = ranks->u.array.values[i];
		struct rep_rank *r = &d->ranks[d->nranks++];
		r->rank = (int)z0(jnum(rk, "rank"));
		r->world_size = (int)z0(jnum(rk, "world_size"));
		r->path = xstrdup(path);
		const char *sp[] = { "steps", NULL };
		yajl_val steps = yajl_tree_get(rk, sp, yajl_t_array);
		size_t ns = steps ? steps->u.array.len : 0;
		const char *tp[] = { ns ? "steps_total" : "total", NULL };
		yajl_val tot = yajl_tree_get(rk, tp, yajl_t_object);
		double per = ns ? (double)ns : 1;
		/* collective overlap = time - exposed, whole run, per step */
		double ov[3];
		static const char *const ct[3] = { "all_reduce", "reduce_scatter", "all_gather" };
		for (int c = 0; c < 3; c++)
			ov[c] = z0(jnum2(tot, "collective_ms", ct[c]) - jnum2(tot, "collective_exposed_ms", ct[c])) / per;
		r->steps = xcalloc(ns ? ns : 1, sizeof(*r->steps));
		for (size_t k = 0; k < (ns ? ns : 1); k++) {
			yajl_val so = ns ? steps->u.array.values[k] : tot;
			struct rep_step *st = &r->steps[r->nsteps++];
			st->gstep = ns ? (int64_t)z0(jnum(so, "step")) : 0;
			st->loss = NAN;
			st->v[RF_STEP] = z0(jnum(so, "step_ms"));
			st->v[RF_COMPUTE] = z0(jnum(so, "compute_ms"));
			st->v[RF_OVERLAP] = z0(jnum(so, "overlapped_comm_ms"));
			st->v[RF_AR_OVERLAP] = ov[0];
			st->v[RF_RS_OVERLAP] = ov[1];
			st->v[RF_AG_OVERLAP] = ov[2];
			st->v[RF_COMM] = z0(jnum(so, "comm_ms"));
			st->v[RF_EXPOSED] = z0(jnum(so, "exposed_comm_ms"));
			st->v[RF_AUX] = z0(jnum(so, "memcpy_ms"));
			st->v[RF_IDLE] = z0(jnum(so, "idle_ms"));
		}
		const char *cp[] = { "collectives", NULL };
		yajl_val cl = yajl_tree_get(rk, cp, yajl_t_array);
		for (size_t k = 0; cl && k < cl->u.array.len; k++) {
			yajl_val co = cl->u.array.values[k];
			const char *typ[] = { "type", NULL };
			yajl_val tv = yajl_tree_get(co, typ, yajl_t_string);
			coll_add(d, &ccap, tv ? YAJL_GET_STRING(tv) : "other", jnum(co, "bytes"), jnum(co, "count"),
				 jnum(co, "total_ms"), jnum(co, "busbw_gbps"));
		}
	}
	yajl_tree_free(root);
	qsort(d->ranks, d->nranks, sizeof(*d->ranks), cmp_rank);
	if (!d->nranks)
		return aorta_fail(e, AORTA_EINPUT, path, 0, -1, "the analysis holds no ranks");
	return AORTA_OK;
}

static void fill_from_figures(struct rep_step *st, const struct ov_figures *f)
{
	const double ms = 1e-6;
	st->loss = NAN;
	st->v[RF_STEP] = (double)f->window_ns * ms;
	st->v[RF_COMPUTE] = (double)f->compute_ns * ms;
	st->v[RF_OVERLAP] = (double)f->overlap_ns * ms;
	st->v[RF_AR_OVERLAP] = (double)(f->coll_ns[COLL_ALL_REDUCE] - f->coll_exposed_ns[COLL_ALL_REDUCE]) * ms;
	st->v[RF_RS_OVERLAP] =
		(double)(f->coll_ns[COLL_REDUCE_SCATTER] - f->coll_exposed_ns[COLL_REDUCE_SCATTER]) * ms;
	st->v[RF_AG_OVERLAP] = (double)(f->coll_ns[COLL_ALL_GATHER] - f->coll_exposed_ns[COLL_ALL_GATHER]) * ms;
	st->v[RF_COMM] = (double)f->comm_ns * ms;
	st->v[RF_EXPOSED] = (double)f->exposed_comm_ns * ms;
	st->v[RF_AUX] = (double)f->memcpy_ns * ms;
	st->v[RF_IDLE] = (double)f->idle_ns * ms;
}

/* The Gantt chart's ranges from a trace (the first rank only, as for
 * JSONL): each device span clipped to its step's GPU window, on a row by
 * what it is (compute, all_gather, reduce_scatter, all_reduce; copies and
 * fills on aux; other collectives on "comm"), times in ms from the window's
 * start. */
static void trace_ranges(struct rep_rank *r, const struct rank_result *rr)
{
	static const char *const rows[] = { "compute", "all_gather", "reduce_scatter", "all_reduce", "aux", "comm" };
	const struct trace *t = rr->t;
	for (int k = 0; k < 6; k++)
		r->stream_names[k] = xstrdup(rows[k]);
	r->nstream_names = 6;
	r->step_range0 = xcalloc(rr->nsteps + 1, sizeof(*r->step_range0));
	r->sr_cap = rr->nsteps + 1;
	for (size_t k = 0; k < rr->nsteps && k < r->nsteps; k++) {
		int64_t lo = rr->steps[k].start_ns, hi = rr->steps[k].end_ns;
		r->step_range0[k] = r->nranges;
		/* spans are sorted by start: scan up to the window's end (a span
		 * that started in an earlier window is clipped, not lost) */
		for (size_t i = 0; i < t->n && t->start_ns[i] < hi; i++) {
			if (t->end_ns[i] <= lo)
				continue;
			enum span_class c = kind_class((enum span_kind)t->kind[i]);
			int row;
			if (c == C_COMPUTE)
				row = 0;
			else if (c == C_COMM)
				row = t->coll_type[i] == COLL_ALL_GATHER ? 1 : t->coll_type[i] == COLL_REDUCE_SCATTER ? 2 :
				      t->coll_type[i] == COLL_ALL_REDUCE ? 3 : 5;
			else if (c == C_MEMCPY || c == C_MEMSET)
				row = 4;
			else
				continue;
			int64_t s0 = t->start_ns[i] > lo ? t->start_ns[i] : lo, s1 = t->end_ns[i] < hi ? t->end_ns[i] : hi;
			GROW(r->ranges, r->ranges_cap, r->nranges + 1);
			r->ranges[r->nranges++] = (struct rep_range){ (uint8_t)row, (float)((double)(s0 - lo) / 1e6),
								      (float)((double)(s1 - lo) / 1e6) };
		}
	}
	for (size_t k = rr->nsteps < r->nsteps ? rr->nsteps : r->nsteps; k <= r->nsteps; k++)
		r->step_range0[k] = r->nranges;
}

static enum aorta_status read_traces(const char *input, const struct report_opts *o, struct rep_dataset *d,
				     struct aorta_error *e)
{
	struct analysis a;
	struct analysis_opts ao = { NULL, o->threads, 0, 10, 30.0, 1 /* keep timelines: Gantt */, 0, NULL, 0 };
	char *argv[1] = { (char *)input };
	size_t ccap = 0;
	enum aorta_status s = analysis_run(argv, 1, &ao, &a, e);
	if (s) {
		analysis_free(&a);
		return s;
	}
	d->ranks = xcalloc(a.n ? a.n : 1, sizeof(*d->ranks));
	for (size_t i = 0; i < a.n; i++) {
		const struct rank_result *rr = &a.r[i];
		struct rep_rank *r = &d->ranks[d->nranks++];
		r->rank = rr->rank;
		r->world_size = rr->world_size;
		r->path = xstrdup(rr->path);
		size_t ns = rr->nsteps ? rr->nsteps : 1;
		r->steps = xcalloc(ns, sizeof(*r->steps));
		for (size_t k = 0; k < ns; k++) {
			struct rep_step *st = &r->steps[r->nsteps++];
			st->gstep = rr->nsteps ? rr->steps[k].number : 0;
			fill_from_figures(st, rr->nsteps ? &rr->steps[k].f : &rr->total);
		}
		for (size_t k = 0; k < rr->ncolls; k++) {
			const struct coll_row *c = &rr->colls[k];
			double algbw = c->total_ns ? (double)c->bytes * (double)c->count / (double)c->total_ns : NAN;
			coll_add(d, &ccap, coll_type_name((enum coll_type)c->type), (double)c->bytes, (double)c->count,
				 (double)c->total_ns * 1e-6,
				 algbw * coll_busbw_factor((enum coll_type)c->type, c->group_size));
		}
		if (!d->format && rr->format)
			d->format = rr->format; /* static strings (format_name) */
		if (i == 0 && rr->t && rr->nsteps) {
			trace_ranges(r, rr);
			d->has_ranges = r->nranges > 0;
		}
	}
	analysis_free(&a);
	qsort(d->ranks, d->nranks, sizeof(*d->ranks), cmp_rank);
	if (!d->nranks)
		return aorta_fail(e, AORTA_EINPUT, input, 0, -1, "no trace could be read");
	return AORTA_OK;
}

/* A short description of the run for the configuration table: the first
 * lines of a config file in the run directory, if any. */
static char *run_config(const char *dir)
{
	static const char *const names[] = { "config.yaml", "config_resolved.yaml", "run_config.yaml", "config.json" };
	char p[4096];
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		FILE *f = fopen(p, "r");
		if (!f)
			continue;
		char *t = xcalloc(4097, 1);
		size_t n = fread(t, 1, 4096, f);
		fclose(f);
		t[n] = '\0';
		return t;
	}
	return NULL;
}

enum aorta_status report_read(const char *label, const char *input, const struct report_opts *o,
			      struct rep_dataset *d, struct aorta_error *e)
{
	struct stat sb;
	enum aorta_status s;

	memset(d, 0, sizeof(*d));
	d->label = label;
	d->input = input;
	if (stat(input, &sb) != 0)
		return aorta_fail(e, AORTA_EINPUT, input, 0, -1, "no such file or directory (for label '%s')", label);
	if (S_ISDIR(sb.st_mode)) {
		char pat[4096];
		glob_t g;
		snprintf(pat, sizeof(pat), "%s/rank_*_metrics.jsonl*", input);
		int gr = glob(pat, 0, NULL, &g);
		if (gr == 0 && g.gl_pathc) {
			char **files = xcalloc(g.gl_pathc, sizeof(*files));
			for (size_t i = 0; i < g.gl_pathc; i++)
				files[i] = g.gl_pathv[i];
			qsort(files, g.gl_pathc, sizeof(*files), cmp_str);
			d->format = "aorta-jsonl";
			s = read_jsonl_files(files, g.gl_pathc, o, d, e);
			free(files);
			globfree(&g);
			d->config_text = run_config(input);
			return s;
		}
		if (gr == 0)
			globfree(&g);
		s = read_traces(input, o, d, e);
		if (s && e && e->code == AORTA_EINPUT && !strcmp(e->path, input)) {
			char why[sizeof(e->msg)];
			snprintf(why, sizeof(why), "%s", e->msg);
			aorta_fail(e, AORTA_EINPUT, input, 0, -1, "no rank_*_metrics.jsonl in the directory, and %s", why);
		}
		return s;
	}
	enum trace_format f = ingest_sniff(input, e);
	if (f == FMT_UNKNOWN)
		return e ? e->code ? e->code : AORTA_EINPUT : AORTA_EINPUT;
	if (f == FMT_AORTA_ANALYSIS) {
		d->format = "aorta-analysis";
		return read_analysis_json(input, d, e);
	}
	if (f == FMT_AORTA_JSONL) {
		char *files[1] = { (char *)input };
		d->format = "aorta-jsonl";
		return read_jsonl_files(files, 1, o, d, e);
	}
	return read_traces(input, o, d, e);
}

/* ---- statistics --------------------------------------------------------------- */

size_t rep_first_kept(const struct rep_rank *r, int skip)
{
	return skip > 0 ? ((size_t)skip < r->nsteps ? (size_t)skip : r->nsteps) : 0;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Percentile by linear interpolation between closest ranks (numpy's
 * default), over sorted v[n]. */
static double pct(const double *v, size_t n, double q)
{
	if (!n)
		return NAN;
	double pos = q * (double)(n - 1);
	size_t lo = (size_t)pos;
	if (lo + 1 >= n)
		return v[n - 1];
	return v[lo] + (pos - (double)lo) * (v[lo + 1] - v[lo]);
}

static struct rep_stat stat_of(const struct rep_rank *rk, size_t nr, int skip, int f)
{
	struct rep_stat s = { 0, NAN, NAN, NAN, NAN, NAN, NAN };
	size_t n = 0;
	for (size_t i = 0; i < nr; i++)
		n += rk[i].nsteps - rep_first_kept(&rk[i], skip);
	if (!n)
		return s;
	double *v = xmalloc(n * sizeof(*v)), sum = 0;
	size_t m = 0;
	for (size_t i = 0; i < nr; i++)
		for (size_t k = rep_first_kept(&rk[i], skip); k < rk[i].nsteps; k++) {
			double x = f < 0 ? rk[i].steps[k].loss : rk[i].steps[k].v[f];
			if (isnan(x))
				continue;
			v[m++] = x;
			sum += x;
		}
	if (m) {
		qsort(v, m, sizeof(*v), cmp_d);
		s.n = m;
		s.mean = sum / (double)m;
		s.p50 = pct(v, m, 0.50);
		s.p90 = pct(v, m, 0.90);
		s.p99 = pct(v, m, 0.99);
		s.min = v[0];
		s.max = v[m - 1];
	}
	free(v);
	return s;
}

struct rep_stat rep_dataset_stat(const struct rep_dataset *d, int skip, int f)
{
	return stat_of(d->ranks, d->nranks, skip, f);
}

struct rep_stat rep_rank_stat(const struct rep_rank *r, int skip, int f)
{
	return stat_of(r, 1, skip, f);
}

double rep_overlap_ratio(const struct rep_dataset *d, int skip)
{
	double ov = 0, co = 0;
	size_t n = 0;
	for (size_t i = 0; i < d->nranks; i++)
		for (size_t k = rep_first_kept(&d->ranks[i], skip); k < d->ranks[i].nsteps; k++) {
			ov += d->ranks[i].steps[k].v[RF_OVERLAP];
			co += d->ranks[i].steps[k].v[RF_COMPUTE];
			n++;
		}
	return n && co != 0 ? ov / co : 0.0;
}

void report_prepare(struct report *r)
{
	int skip = r->o.skip_steps;
	for (size_t i = 0; i < r->nds; i++) {
		struct rep_dataset *d = &r->ds[i];
		free(d->stat);
		d->stat = xcalloc(RF__COUNT, sizeof(*d->stat));
		for (int f = 0; f < RF__COUNT; f++)
			d->stat[f] = rep_dataset_stat(d, skip, f);
		d->loss = rep_dataset_stat(d, skip, -1);
		d->ratio = rep_overlap_ratio(d, skip);
		d->kept = d->read = 0;
		for (size_t k = 0; k < d->nranks; k++) {
			struct rep_rank *rk = &d->ranks[k];
			size_t first = rep_first_kept(rk, skip);
			double sum[RF__COUNT] = { 0 }, ls = 0;
			size_t nl = 0;
			rk->kept = rk->nsteps - first;
			for (size_t s = first; s < rk->nsteps; s++) {
				for (int f = 0; f < RF__COUNT; f++)
					sum[f] += rk->steps[s].v[f];
				if (!isnan(rk->steps[s].loss)) {
					ls += rk->steps[s].loss;
					nl++;
				}
			}
			for (int f = 0; f < RF__COUNT; f++)
				rk->mean[f] = rk->kept ? sum[f] / (double)rk->kept : NAN;
			rk->mean_loss = nl ? ls / (double)nl : NAN;
			rk->ratio = sum[RF_COMPUTE] != 0 ? sum[RF_OVERLAP] / sum[RF_COMPUTE] : 0.0;
			d->kept += rk->kept;
			d->read += rk->nsteps;
			if (rk->world_size > d->world_size)
				d->world_size = rk->world_size;
		}
	}
}

double rep_cmp_value(const struct rep_dataset *d, int k)
{
	if (k == RF__COUNT)
		return d->kept ? d->ratio : NAN;
	return d->stat ? d->stat[k].mean : NAN;
}

double rep_cmp_rank_value(const struct rep_rank *r, int k)
{
	if (k == RF__COUNT)
		return r->kept ? r->ratio : NAN;
	return r->mean[k];
}

const char *rep_cmp_key(int k)
{
	static const char *const keys[REP_NCMP] = {
		"step_ms", "compute_ms", "overlap_ms", "allreduce_overlap_ms", "reducescatter_overlap_ms",
		"allgather_overlap_ms", "comm_ms", "exposed_comm_ms", "aux_ms", "idle_ms", "overlap_ratio",
	};
	return k >= 0 && k < REP_NCMP ? keys[k] : "?";
}

const char *rep_cmp_label(int k)
{
	return k == RF__COUNT ? "overlap ratio" : REP_FIGS[k].label;
}

int rep_cmp_dir(int k)
{
	return k == RF__COUNT ? -1 : REP_FIGS[k].dir;
}

const struct rep_rank *rep_find_rank(const struct rep_dataset *d, int rank)
{
	for (size_t i = 0; i < d->nranks; i++)
		if (d->ranks[i].rank == rank)
			return &d->ranks[i];
	return NULL;
}
