/*
 * report_model.c - the datasets of `aorta report` (report_model.h), built from
 * struct analysis, and the pooled statistics over them.
 *
 * One way in.  report reads nothing itself: cmd/report.c gets each run as
 * a struct analysis (traces or JSONL through analysis_run, a saved
 * analysis through analysis_io/json_read.c), and rep_dataset_from_analysis
 * turns it into per-step figures per rank.  The figures are the engine's
 * (overlap/figures.c's REP_FIGS, each read off struct ov_figures), except
 * for an input that recorded its own per-step figures (aorta / upstream
 * JSONL's profile.overlap): there the recorded ones are used, as upstream
 * overlap_report.py reads them, so summary.json stays compatible.  The
 * diagnosis is analysis_diagnose()'s, the one analyze prints.
 */
#include "report/report_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/stats.h"
#include "overlap/analysis.h"
#include "overlap/figures.h"
#include "report/report_change.h"
#include "timeline/timeline.h"

/* ---- datasets ----------------------------------------------------------------- */

static void rank_release(struct rep_rank *r)
{
	free(r->path);
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
	rep_upstream_free(&d->up);
	if (d->answer) {
		answer_free(d->answer);
		free(d->answer);
	}
	if (d->a) {
		analysis_free(d->a);
		free(d->a);
	}
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

int64_t rep_step_gstep(const struct rep_rank *r, size_t k)
{
	return r->rr->nsteps ? r->rr->steps[k].number : 0;
}

double rep_step_loss(const struct rep_rank *r, size_t k)
{
	/* what the run recorded itself (JSONL) feeds upstream's keys only
	 * (report/upstream.h), and the loss */
	return r->rr->has_rec && r->rr->nsteps ? step_rec(r->rr, k, SR_LOSS) : NAN;
}

double rep_step_v(const struct rep_rank *r, size_t k, int f)
{
	/* the engine's figures, under analyze's keys */
	const struct rep_fig_def *d = &REP_FIGS[f];
	const struct rank_result *rr = r->rr;
	if (!rr->nsteps)
		return rep_fig_ms(d, &rr->total);
	if (d->coll >= 0) /* as rep_fig_ms: coll_ns - coll_exposed_ns of the step */
		return (double)(step_coll_ns(rr, k, d->coll, 0) - step_coll_ns(rr, k, d->coll, 1)) * 1e-6;
	return (double)step_fig(rr, k, d->off) * 1e-6;
}

static void coll_add(struct rep_dataset *d, size_t *cap, const struct coll_row *c)
{
	size_t k;
	const char *type = coll_type_name((enum coll_type)c->type);
	double bytes = (double)c->bytes;
	if (!c->bytes || !c->count)
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
	d->colls[k].count += (double)c->count;
	d->colls[k].total_ms += (double)c->total_ns * 1e-6;
	coll_bw_add(&d->colls[k].bw, c);
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
	int64_t maxdur = 0;
	for (size_t i = 0; i < t->n; i++)
		if (t->end_ns[i] - t->start_ns[i] > maxdur)
			maxdur = t->end_ns[i] - t->start_ns[i];
	for (size_t k = 0; k < rr->nsteps && k < r->nsteps; k++) {
		int64_t lo = rr->steps[k].start_ns, hi = rr->steps[k].end_ns;
		r->step_range0[k] = r->nranges;
		/* spans are sorted by start: from the first that can reach lo
		 * (none starts more than the longest span before it ends) up to the
		 * window's end; a span that started in an earlier window is
		 * clipped, not lost */
		size_t i0 = 0, i1 = t->n;
		while (i0 < i1) {
			size_t mid = i0 + (i1 - i0) / 2;
			if (t->start_ns[mid] < lo - maxdur)
				i0 = mid + 1;
			else
				i1 = mid;
		}
		for (size_t i = i0; i < t->n && t->start_ns[i] < hi; i++) {
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

/* The late rank (else the one that caused the most waiting) and, of the
 * others, the one that caused the least (ties: the lowest rank): the
 * ranks the page shows side by side.  None without cross-rank figures or
 * without waiting caused. */
static void pick_pair(const struct analysis *a, struct rep_dataset *d)
{
	d->pair_late = d->pair_healthy = -1;
	int late = a->late_rank >= 0 ? a->late_rank : a->top_rank, has = 0;
	for (size_t i = 0; i < a->n; i++)
		has |= a->r[i].rank == late && a->r[i].t && a->r[i].nsteps;
	if (!a->clocks_aligned || a->n < 2 || !has)
		return;
	const struct rank_result *h = NULL;
	for (size_t i = 0; i < a->n; i++)
		if (a->r[i].rank != late && a->r[i].t && a->r[i].nsteps && (!h || a->r[i].caused_ns < h->caused_ns))
			h = &a->r[i];
	if (!h)
		return;
	d->pair_late = late;
	d->pair_healthy = h->rank;
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

void rep_dataset_from_analysis(const char *label, const char *input, struct analysis *a,
			       struct rep_dataset *d)
{
	size_t ccap = 0;
	memset(d, 0, sizeof(*d));
	d->label = label;
	d->input = input;
	d->a = xmalloc(sizeof(*d->a));
	*d->a = *a; /* owned from here */
	memset(a, 0, sizeof(*a));
	a = d->a;
	analysis_diagnose(a, &d->diag);
	d->answer = xcalloc(1, sizeof(*d->answer));
	answer_build(a, d->answer);
	pick_pair(a, d);
	d->ranks = xcalloc(a->n ? a->n : 1, sizeof(*d->ranks));
	for (size_t i = 0; i < a->n; i++) {
		const struct rank_result *rr = &a->r[i];
		struct rep_rank *r = &d->ranks[d->nranks++];
		r->rank = rr->rank;
		r->world_size = rr->world_size;
		r->path = xstrdup(rr->path);
		r->bad_lines = (long long)rr->skipped;
		r->rr = rr;
		r->nsteps = rr->nsteps ? rr->nsteps : 1;
		for (size_t k = 0; k < r->nsteps && !d->has_loss; k++)
			d->has_loss = !isnan(rep_step_loss(r, k));
		d->bad_lines += r->bad_lines;
		for (size_t k = 0; k < rr->ncolls; k++)
			coll_add(d, &ccap, &rr->colls[k]);
		if (!d->format && rr->format)
			d->format = rr->format; /* static strings */
		if ((i == 0 || rr->rank == d->pair_late || rr->rank == d->pair_healthy) && rr->t && rr->nsteps) {
			trace_ranges(r, rr);
			d->has_ranges |= i == 0 && r->nranges > 0;
		}
	}
	/* the timelines were kept for the Gantt chart only */
	for (size_t i = 0; i < a->n; i++) {
		trace_free(a->r[i].t);
		a->r[i].t = NULL;
	}
	qsort(d->ranks, d->nranks, sizeof(*d->ranks), cmp_rank);
	struct stat sb;
	if (input && stat(input, &sb) == 0 && S_ISDIR(sb.st_mode))
		d->config_text = run_config(input);
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
	int negzero = 0;
	for (size_t i = 0; i < nr; i++)
		for (size_t k = rep_first_kept(&rk[i], skip); k < rk[i].nsteps; k++) {
			double x = f < 0 ? rep_step_loss(&rk[i], k) : rep_step_v(&rk[i], k, f);
			if (isnan(x))
				continue;
			v[m++] = x;
			sum += x;
			negzero |= x == 0 && signbit(x);
		}
	if (m) {
		if (negzero)
			qsort(v, m, sizeof(*v), cmp_d);
		else
			sort_doubles(v, m);
		s.n = m;
		s.mean = sum / (double)m;
		s.p50 = pctl_sorted(v, m, 0.50);
		s.p90 = pctl_sorted(v, m, 0.90);
		s.p99 = pctl_sorted(v, m, 0.99);
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

double rep_overlap_ratio(const struct rep_dataset *d, int skip)
{
	double ov = 0, co = 0;
	size_t n = 0;
	for (size_t i = 0; i < d->nranks; i++)
		for (size_t k = rep_first_kept(&d->ranks[i], skip); k < d->ranks[i].nsteps; k++) {
			ov += rep_step_v(&d->ranks[i], k, RF_OVERLAP);
			co += rep_step_v(&d->ranks[i], k, RF_COMPUTE);
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
		d->up_ratio = d->up.has ? rep_upstream_ratio(&d->up) : NAN;
		d->kept = d->read = 0;
		for (int f = 0; f < RF__COUNT; f++)
			d->absent[f] = (unsigned char)rep_fig_absent(d, f);
		for (size_t k = 0; k < d->nranks; k++) {
			struct rep_rank *rk = &d->ranks[k];
			memcpy(rk->absent, d->absent, sizeof(rk->absent));
			size_t first = rep_first_kept(rk, skip);
			double sum[RF__COUNT] = { 0 }, ls = 0;
			size_t nl = 0;
			rk->kept = rk->nsteps - first;
			for (size_t s = first; s < rk->nsteps; s++) {
				for (int f = 0; f < RF__COUNT; f++)
					sum[f] += rep_step_v(rk, s, f);
				if (!isnan(rep_step_loss(rk, s))) {
					ls += rep_step_loss(rk, s);
					nl++;
				}
			}
			for (int f = 0; f < RF__COUNT; f++)
				rk->mean[f] = rk->kept ? sum[f] / (double)rk->kept : NAN;
			rk->mean_loss = nl ? ls / (double)nl : NAN;
			rk->ratio = sum[RF_COMPUTE] != 0 ? sum[RF_OVERLAP] / sum[RF_COMPUTE] : 0.0;
			rk->up_ratio = d->up.has ? rep_upstream_rank_ratio(&d->up, rk->rank) : NAN;
			d->kept += rk->kept;
			d->read += rk->nsteps;
			if (rk->world_size > d->world_size)
				d->world_size = rk->world_size;
		}
	}
}

int rep_fig_absent(const struct rep_dataset *d, int k)
{
	if (k < 0 || k >= RF__COUNT || REP_FIGS[k].coll < 0)
		return 0;
	int t = REP_FIGS[k].coll;
	for (size_t i = 0; d->a && i < d->a->n; i++)
		if (d->a->r[i].total.coll_ns[t] > 0)
			return 0;
	for (size_t i = 0; i < d->nranks; i++) /* an input that recorded it (JSONL) */
		for (size_t s = 0; s < d->ranks[i].nsteps; s++)
			if (isfinite(rep_step_v(&d->ranks[i], s, k)) && rep_step_v(&d->ranks[i], s, k) != 0)
				return 0;
	return 1;
}

double rep_cmp_value(const struct rep_dataset *d, int k)
{
	if (k == RF__COUNT)
		return d->kept ? d->ratio : NAN;
	return d->stat && !d->absent[k] ? d->stat[k].mean : NAN;
}

double rep_cmp_rank_value(const struct rep_rank *r, int k)
{
	if (k == RF__COUNT)
		return r->kept ? r->ratio : NAN;
	return r->absent[k] ? NAN : r->mean[k];
}

const char *rep_cmp_verdict(const struct report *r, const struct rep_dataset *b, const struct rep_dataset *c,
			    double x, double y, int k, int step_slower)
{
	if (k < RF__COUNT && (b->absent[k] || c->absent[k]))
		return "absent";
	return rep_verdict(r, x, y, k, step_slower);
}

const char *rep_cmp_key(int k)
{
	if (k == RF__COUNT)
		return "overlap_compute_ratio";
	return k >= 0 && k < RF__COUNT ? REP_FIGS[k].key : "?";
}

const char *rep_cmp_label(int k)
{
	return k == RF__COUNT ? "overlapped comm / compute" : REP_FIGS[k].label;
}

int rep_cmp_dir(int k)
{
	return k == RF__COUNT ? -1 : rep_fig_dir(&REP_FIGS[k]);
}

const struct rep_rank *rep_find_rank(const struct rep_dataset *d, int rank)
{
	for (size_t i = 0; i < d->nranks; i++)
		if (d->ranks[i].rank == rank)
			return &d->ranks[i];
	return NULL;
}

/* Changes below this many ms are 'similar' whatever their percent (as
 * compare's default --min-change-ms). */
#define REP_MIN_CHANGE_MS 0.05

int rep_step_slower(const struct report *r, const struct rep_dataset *b, const struct rep_dataset *c)
{
	return !strcmp(rep_verdict(r, rep_cmp_value(b, RF_STEP), rep_cmp_value(c, RF_STEP), RF_STEP, 0), "worse");
}

const char *rep_verdict(const struct report *r, double x, double y, int k, int step_slower)
{
	if (isnan(x) || isnan(y))
		return "n/a";
	if (k < RF__COUNT && fabs(y - x) < REP_MIN_CHANGE_MS)
		return "similar";
	const char *v = change_verdict(x, y, rep_cmp_dir(k), r->o.threshold_pct);
	if (step_slower && k != RF_STEP && !strcmp(v, "better"))
		return y < x ? "lower" : "higher"; /* not an improvement when the step got slower */
	return v;
}
