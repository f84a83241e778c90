/*
 * report_summary.c - summary.json of `aorta report` (schema aorta.report/2,
 * docs/formats.md).
 *
 * The upstream keys come first and mean what overlap_report.py means by
 * them, so its consumers keep working: datasets.<label>.{count, mean_loss,
 * mean_overlap_ms, mean_compute_ms, mean_allreduce_overlap_ms,
 * mean_reducescatter_overlap_ms, overlap_ratio} computed as it computes
 * them from the run's rank_*_metrics.jsonl (report/upstream.h: every
 * record, no skip, full precision) whatever else is beside them; a run
 * without upstream JSONL gives them from aorta's step figures over every
 * kept step of every rank pooled, overlap_ratio a ratio of means (0 when
 * compute is 0),
 * {"count": 0} plus input details for an empty dataset, and comparison.
 * {reference_overlap_ratio, candidate_overlap_ratio, ratio_delta} only when
 * both --reference and --candidate were given (the first candidate).
 * Everything else is added beside them: percentiles, per-rank figures,
 * exposed communication, collectives, and "comparisons": each candidate
 * against the reference, per figure and per rank, with a verdict from
 * report_change.h.  Written through out_open/out_commit: complete or absent.
 */
#include "report/report_summary.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/output.h"
#include "report/compare.h"
#include "report/report_change.h"
#include "report/hang_out.h"

#ifndef AORTA_VERSION
#define AORTA_VERSION "0.1.0"
#endif

static void stat_obj(struct jw *w, const char *key, const struct rep_stat *s)
{
	jw_obj(w, key);
	jw_num(w, "mean", s->mean, 6);
	jw_num(w, "p50", s->p50, 6);
	jw_num(w, "p90", s->p90, 6);
	jw_num(w, "p99", s->p99, 6);
	jw_num(w, "min", s->min, 6);
	jw_num(w, "max", s->max, 6);
	jw_uint(w, "n", s->n); /* the samples (rank-steps) the percentiles are over */
	jw_obj_end(w);
}

static void dataset(struct jw *w, const struct report *r, const struct rep_dataset *d)
{
	jw_obj(w, d->label);
	if (d->up.has) { /* overlap_report.py's figures, computed as it does (upstream.h) */
		const struct rep_upstream *u = &d->up;
		jw_int(w, "count", u->count);
	}
	if (d->up.has && d->up.count) {
		const struct rep_upstream *u = &d->up;
		jw_num_exact(w, "mean_loss", u->loss_ok ? rep_upstream_mean(u, &u->sum_loss) : NAN);
		jw_num_exact(w, "mean_overlap_ms", rep_upstream_mean(u, &u->sum_overlap));
		jw_num_exact(w, "mean_compute_ms", rep_upstream_mean(u, &u->sum_compute));
		jw_num_exact(w, "mean_allreduce_overlap_ms", rep_upstream_mean(u, &u->sum_ar));
		jw_num_exact(w, "mean_reducescatter_overlap_ms", rep_upstream_mean(u, &u->sum_rs));
		jw_num_exact(w, "overlap_ratio", d->up_ratio); /* rep_upstream_ratio (report_prepare) */
	} else if (!d->up.has) {
		jw_int(w, "count", (long long)d->kept);
	}
	if (!d->up.has && d->kept) {
		if (d->has_loss)
			jw_num(w, "mean_loss", d->loss.mean, 8);
		else
			jw_null(w, "mean_loss");
		jw_num(w, "mean_overlap_ms", d->stat[RF_OVERLAP].mean, 6);
		jw_num(w, "mean_compute_ms", d->stat[RF_COMPUTE].mean, 6);
		jw_num(w, "mean_allreduce_overlap_ms", d->stat[RF_AR_OVERLAP].mean, 6);
		jw_num(w, "mean_reducescatter_overlap_ms", d->stat[RF_RS_OVERLAP].mean, 6);
		jw_num(w, "overlap_ratio", d->ratio, 8);
	}
	/* aorta additions: its own overlapped comm / compute, whatever the JSONL says */
	if (d->kept)
		jw_num(w, "overlap_compute_ratio", d->ratio, 8);
	jw_obj(w, "sources"); /* where each group of keys came from (--prefer) */
	if (d->up.has)
		jw_str(w, "upstream_keys", !strcmp(d->up.from, "jsonl") ? "rank_*_metrics.jsonl, as overlap_report.py"
								       : "the JSONL figures the saved analysis recorded");
	else
		jw_str(w, "upstream_keys", "aorta's step figures (no upstream JSONL)");
	if (d->up.has) {
		jw_uint(w, "upstream_files", d->up.files);
		jw_int(w, "upstream_records", d->up.count);
		jw_int(w, "upstream_lines_left_out", d->up.bad_lines);
	}
	jw_str(w, "analysis", d->analysis_from ? d->analysis_from : "?");
	jw_obj_end(w);
	jw_str(w, "input", d->input);
	jw_str(w, "format", d->format ? d->format : "?");
	jw_int(w, "ranks", (long long)d->nranks);
	jw_int(w, "world_size", d->world_size);
	jw_int(w, "steps_read", (long long)d->read);
	jw_int(w, "steps_skipped_warmup", (long long)(d->read - d->kept));
	jw_int(w, "bad_lines", d->bad_lines);
	jw_str(w, "diagnosis", diag_kind_name(d->diag.kind));
	jw_str(w, "diagnosis_text", d->diag.headline);
	report_hang_json(w, d);
	if (!d->kept) {
		jw_obj_end(w);
		return;
	}
	jw_num(w, "mean_step_ms", d->stat[RF_STEP].mean, 6);
	jw_num(w, "mean_comm_ms", d->stat[RF_COMM].mean, 6);
	jw_num(w, "mean_exposed_comm_ms", d->stat[RF_EXPOSED].mean, 6);
	jw_num(w, "mean_allgather_overlap_ms", d->stat[RF_AG_OVERLAP].mean, 6);
	jw_num(w, "exposed_comm_pct", d->stat[RF_STEP].mean > 0 ? 100.0 * d->stat[RF_EXPOSED].mean / d->stat[RF_STEP].mean : NAN, 4);
	jw_obj(w, "figures");
	for (int f = 0; f < RF__COUNT; f++)
		stat_obj(w, rep_cmp_key(f), &d->stat[f]);
	if (d->has_loss)
		stat_obj(w, "loss", &d->loss);
	jw_obj_end(w);
	jw_arr(w, "per_rank");
	for (size_t i = 0; i < d->nranks; i++) {
		const struct rep_rank *rk = &d->ranks[i];
		jw_obj(w, NULL);
		jw_int(w, "rank", rk->rank);
		jw_int(w, "count", (long long)rk->kept);
		if (d->has_loss)
			jw_num(w, "mean_loss", rk->mean_loss, 8);
		for (int f = 0; f < RF__COUNT; f++)
			jw_num(w, rep_cmp_key(f), rk->mean[f], 6);
		/* upstream's key: upstream's figure where the run has its JSONL, else aorta's */
		jw_num(w, "overlap_ratio", isfinite(rk->up_ratio) ? rk->up_ratio : rk->ratio, 8);
		jw_num(w, "overlap_compute_ratio", rk->ratio, 8);
		if (rk->bad_lines)
			jw_int(w, "bad_lines", rk->bad_lines);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	if (d->ncolls) {
		jw_arr(w, "collectives");
		for (size_t i = 0; i < d->ncolls; i++) {
			const struct rep_coll *c = &d->colls[i];
			jw_obj(w, NULL);
			jw_str(w, "type", c->type);
			jw_num(w, "bytes", c->bytes, 0);
			jw_num(w, "count", c->count, 0);
			jw_num(w, "latency_ms", c->count ? c->total_ms / c->count : NAN, 6);
			/* the join's: transfer time of the matched calls; kernel time under its own name */
			jw_num(w, "busbw_gbps", coll_bw_busbw_gbps(&c->bw), 4);
			jw_num(w, "busbw_kernel_gbps", coll_bw_busbw_kernel_gbps(&c->bw), 4);
			jw_obj_end(w);
		}
		jw_arr_end(w);
	}
	(void)r;
	jw_obj_end(w);
}

static void comparison(struct jw *w, const struct report *r, const struct rep_dataset *b,
		       const struct rep_dataset *c)
{
	int slower = rep_step_slower(r, b, c);
	jw_obj(w, NULL);
	jw_str(w, "reference", b->label);
	jw_str(w, "candidate", c->label);
	/* one figure on both sides: upstream's where both runs have JSONL, else aorta's */
	int up = isfinite(b->up_ratio) && isfinite(c->up_ratio);
	double ra = up ? b->up_ratio : b->ratio, rz = up ? c->up_ratio : c->ratio;
	jw_num(w, "reference_overlap_ratio", ra, 8);
	jw_num(w, "candidate_overlap_ratio", rz, 8);
	jw_num(w, "ratio_delta", rz - ra, 8);
	jw_str(w, "overlap_ratio_from", up ? "upstream JSONL" : "aorta");
	jw_arr(w, "figures");
	for (int k = 0; k < REP_NCMP; k++) {
		double x = rep_cmp_value(b, k), y = rep_cmp_value(c, k);
		jw_obj(w, NULL);
		jw_str(w, "figure", rep_cmp_key(k));
		jw_num(w, "reference", x, 6);
		jw_num(w, "candidate", y, 6);
		jw_num(w, "change", y - x, 6);
		jw_num(w, "change_pct", change_pct(x, y), 4);
		jw_str(w, "verdict", rep_cmp_verdict(r, b, c, x, y, k, slower));
		jw_obj_end(w);
	}
	jw_arr_end(w);
	jw_str(w, "step", slower ? "slower" : "not slower");
	struct cmp_result cr;
	const struct cmp_opts co = { r->o.threshold_pct, 0.05, -1 };
	compare_runs(b->a, c->a, &co, &cr);
	jw_str(w, "verdict_text", cr.verdict); /* what `aorta compare` prints */
	jw_str(w, "diagnosis", diag_kind_name(c->diag.kind));
	jw_str(w, "reference_diagnosis", diag_kind_name(b->diag.kind));
	jw_arr(w, "per_rank");
	for (size_t i = 0; i < c->nranks; i++) {
		const struct rep_rank *rc = &c->ranks[i], *rb = rep_find_rank(b, rc->rank);
		if (!rb)
			continue;
		jw_obj(w, NULL);
		jw_int(w, "rank", rc->rank);
		for (int k = 0; k < REP_NCMP; k++) {
			double x = rep_cmp_rank_value(rb, k), y = rep_cmp_rank_value(rc, k);
			jw_obj(w, rep_cmp_key(k));
			jw_num(w, "reference", x, 6);
			jw_num(w, "candidate", y, 6);
			jw_num(w, "change_pct", change_pct(x, y), 4);
			jw_str(w, "verdict", rep_cmp_verdict(r, b, c, x, y, k, slower));
			jw_obj_end(w);
		}
		jw_obj_end(w);
	}
	jw_arr_end(w);
	jw_obj_end(w);
}

enum aorta_status report_write_summary(const struct report *r, const char *path, struct aorta_error *e)
{
	struct outfile of = { 0 };
	struct jw w;
	enum aorta_status s = out_open(&of, path, e);
	if (s)
		return s;
	jw_init(&w, of.f, 1);
	jw_obj(&w, NULL);
	jw_obj(&w, "datasets");
	for (size_t i = 0; i < r->nds; i++)
		dataset(&w, r, &r->ds[i]);
	jw_obj_end(&w);
	if (r->upstream_comparison && r->ref >= 0 && r->ncand > 0) {
		const struct rep_dataset *b = &r->ds[r->ref], *c = &r->ds[r->cand[0]];
		jw_obj(&w, "comparison");
		if (b->up.has && c->up.has) { /* overlap_report.py's compare_datasets */
			double x = rep_upstream_ratio(&b->up), y = rep_upstream_ratio(&c->up);
			jw_num_exact(&w, "reference_overlap_ratio", x);
			jw_num_exact(&w, "candidate_overlap_ratio", y);
			jw_num_exact(&w, "ratio_delta", y - x);
		} else {
			jw_num(&w, "reference_overlap_ratio", b->ratio, 8);
			jw_num(&w, "candidate_overlap_ratio", c->ratio, 8);
			jw_num(&w, "ratio_delta", c->ratio - b->ratio, 8);
		}
		jw_obj_end(&w);
	}
	jw_str(&w, "schema", REPORT_SCHEMA);
	jw_obj(&w, "tool");
	jw_str(&w, "name", "aorta");
	jw_str(&w, "version", AORTA_VERSION);
	jw_obj_end(&w);
	jw_int(&w, "skip_steps", r->o.skip_steps);
	jw_num(&w, "threshold_pct", r->o.threshold_pct, 3);
	if (r->ref >= 0)
		jw_str(&w, "reference", r->ds[r->ref].label);
	else
		jw_null(&w, "reference");
	jw_arr(&w, "comparisons");
	for (int i = 0; r->ref >= 0 && i < r->ncand; i++)
		comparison(&w, r, &r->ds[r->ref], &r->ds[r->cand[i]]);
	jw_arr_end(&w);
	jw_obj_end(&w);
	fputc('\n', of.f);
	return out_commit(&of, e);
}
