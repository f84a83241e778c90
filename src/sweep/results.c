/*
 * results.c - what a sweep leaves on disk, and reading it back.
 *
 *   DIR/recipe.resolved.yaml          the expanded recipe (replays the sweep)
 *   DIR/env/<environment>.json        the environment snapshot (aorta.env/1)
 *   DIR/cells/<id>/t<k>/result.json   one trial (aorta.sweep.trial/2)
 *   DIR/cells/<id>/t<k>/log.txt       its standard output and error
 *   DIR/cells/<id>/t<k>/out/          its workload's output (traces, JSONL)
 *   DIR/cells/<id>/confound/          the baseline's re-run
 *   DIR/matrix.json                   every cell and trial (aorta.sweep/2)
 *   DIR/matrix.md                     the ranking as a Markdown table
 *
 * Every file is written temp-then-rename (base/output.h), so an interrupted
 * sweep leaves finished trials whole.  A trial counts as done exactly when
 * its result.json exists: sweep_load (used by --resume and by `aorta sweep
 * report`) reads the recipe back and then every result.json it finds.  The
 * trial's fields are one table (DFIELDS) for writing and reading.
 */
#include "sweep/results.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <yajl/yajl_tree.h>

#include "base/output.h"

#ifndef AORTA_VERSION
#define AORTA_VERSION "0.1.0"
#endif

static const struct { const char *key; size_t off; int dec; } DFIELDS[] = {
	{ "run_s", offsetof(struct trial, run_s), 3 },
	{ "analysis_s", offsetof(struct trial, analysis_s), 4 },
	{ "bookkeeping_s", offsetof(struct trial, bookkeeping_s), 4 },
	{ "overhead_pct", offsetof(struct trial, overhead_pct), 3 },
	{ "step_ms", offsetof(struct trial, step_ms), 6 },
	{ "comm_ms", offsetof(struct trial, comm_ms), 6 },
	{ "exposed_comm_ms", offsetof(struct trial, exposed_ms), 6 },
	{ "overlap_pct", offsetof(struct trial, overlap_pct), 3 },
	{ "wait_ms", offsetof(struct trial, wait_ms), 6 },
	{ "transfer_ms", offsetof(struct trial, transfer_ms), 6 },
	{ "gemm_ms", offsetof(struct trial, gemm_ms), 6 },
	{ "idle_ms", offsetof(struct trial, idle_ms), 6 },
};
#define NDF (sizeof(DFIELDS) / sizeof(DFIELDS[0]))

static const char *const STATUS[] = { "none", "ok", "failed", "timeout", "crashed", "no_data" };

const char *trial_status_name(enum trial_status s)
{
	return (unsigned)s < sizeof(STATUS) / sizeof(STATUS[0]) ? STATUS[s] : "none";
}

enum trial_status trial_status_from(const char *s)
{
	for (size_t i = 1; i < sizeof(STATUS) / sizeof(STATUS[0]); i++)
		if (s && !strcmp(s, STATUS[i]))
			return (enum trial_status)i;
	return TR_NONE;
}

static void trial_json(struct jw *w, const struct trial *t)
{
	jw_int(w, "trial", t->trial);
	jw_str(w, "status", trial_status_name(t->status));
	jw_int(w, "exit_code", t->exit_code);
	jw_int(w, "signal", t->signal);
	for (size_t i = 0; i < NDF; i++)
		jw_num(w, DFIELDS[i].key, *(const double *)((const char *)t + DFIELDS[i].off), DFIELDS[i].dec);
	jw_int(w, "ranks", t->ranks);
	jw_int(w, "steps", t->steps);
	if (t->late_rank >= 0)
		jw_int(w, "late_rank", t->late_rank);
	else
		jw_null(w, "late_rank");
	jw_str(w, "diagnosis", t->diag);
	jw_str(w, "headline", t->headline);
	jw_str(w, "error", t->error);
	jw_arr(w, "collectives");
	for (size_t i = 0; i < t->ncolls; i++) {
		jw_obj(w, NULL);
		jw_str(w, "type", t->colls[i].type);
		jw_uint(w, "bytes", t->colls[i].bytes);
		jw_uint(w, "count", t->colls[i].count);
		jw_num(w, "total_ms", t->colls[i].total_ms, 6);
		jw_num(w, "busbw_gbps", t->colls[i].busbw_gbps, 4);
		jw_num(w, "busbw_kernel_gbps", t->colls[i].busbw_kernel_gbps, 4);
		jw_obj_end(w);
	}
	jw_arr_end(w);
}

enum aorta_status trial_write(const char *path, const struct trial *t, struct aorta_error *e)
{
	struct outfile o;
	if (out_open(&o, path, e))
		return e->code;
	struct jw w;
	jw_init(&w, o.f, 1);
	jw_obj(&w, NULL);
	jw_str(&w, "schema", "aorta.sweep.trial/2");
	trial_json(&w, t);
	jw_obj_end(&w);
	fputc('\n', o.f);
	return out_commit(&o, e);
}

static double jnum(yajl_val o, const char *k)
{
	const char *p[] = { k, NULL };
	yajl_val v = yajl_tree_get(o, p, yajl_t_any);
	return v && YAJL_IS_NUMBER(v) ? YAJL_GET_DOUBLE(v) : NAN;
}

static const char *jstr(yajl_val o, const char *k)
{
	const char *p[] = { k, NULL };
	yajl_val v = yajl_tree_get(o, p, yajl_t_string);
	return v ? YAJL_GET_STRING(v) : NULL;
}

static void trial_from(yajl_val o, struct trial *t)
{
	memset(t, 0, sizeof(*t));
	double d = jnum(o, "trial");
	t->trial = isfinite(d) ? (int)d : 0;
	t->status = trial_status_from(jstr(o, "status"));
	d = jnum(o, "exit_code");
	t->exit_code = isfinite(d) ? (int)d : 0;
	d = jnum(o, "signal");
	t->signal = isfinite(d) ? (int)d : 0;
	for (size_t i = 0; i < NDF; i++)
		*(double *)((char *)t + DFIELDS[i].off) = jnum(o, DFIELDS[i].key);
	d = jnum(o, "ranks");
	t->ranks = isfinite(d) ? (int)d : 0;
	d = jnum(o, "steps");
	t->steps = isfinite(d) ? (int)d : 0;
	d = jnum(o, "late_rank");
	t->late_rank = isfinite(d) ? (int)d : -1;
	const char *s;
	if ((s = jstr(o, "diagnosis")))
		snprintf(t->diag, sizeof(t->diag), "%s", s);
	if ((s = jstr(o, "headline")))
		snprintf(t->headline, sizeof(t->headline), "%s", s);
	if ((s = jstr(o, "error")))
		snprintf(t->error, sizeof(t->error), "%s", s);
	const char *p[] = { "collectives", NULL };
	yajl_val a = yajl_tree_get(o, p, yajl_t_array);
	if (a) {
		t->colls = xcalloc(YAJL_GET_ARRAY(a)->len + 1, sizeof(*t->colls));
		for (size_t i = 0; i < YAJL_GET_ARRAY(a)->len; i++) {
			yajl_val c = YAJL_GET_ARRAY(a)->values[i];
			struct trial_coll *tc = &t->colls[t->ncolls];
			if (!YAJL_IS_OBJECT(c) || !jstr(c, "type"))
				continue;
			snprintf(tc->type, sizeof(tc->type), "%s", jstr(c, "type"));
			d = jnum(c, "bytes");
			tc->bytes = isfinite(d) && d > 0 ? (unsigned long long)d : 0;
			d = jnum(c, "count");
			tc->count = isfinite(d) && d > 0 ? (unsigned long long)d : 0;
			tc->total_ms = jnum(c, "total_ms");
			tc->busbw_gbps = jnum(c, "busbw_gbps");
			tc->busbw_kernel_gbps = jnum(c, "busbw_kernel_gbps");
			t->ncolls++;
		}
	}
}

enum aorta_status trial_read(const char *path, struct trial *t, struct aorta_error *e)
{
	memset(t, 0, sizeof(*t));
	FILE *f = fopen(path, "rb");
	if (!f)
		return aorta_fail(e, AORTA_EINPUT, path, 0, -1, "cannot open: %s", strerror(errno));
	size_t cap = 1 << 16, n = 0;
	char *buf = xmalloc(cap);
	size_t k;
	while ((k = fread(buf + n, 1, cap - n - 1, f)) > 0) {
		n += k;
		if (n + 1 >= cap)
			cap *= 2, buf = xrealloc(buf, cap);
	}
	fclose(f);
	buf[n] = '\0';
	char err[512];
	yajl_val root = yajl_tree_parse(buf, err, sizeof(err));
	free(buf);
	if (!root || !YAJL_IS_OBJECT(root)) {
		yajl_tree_free(root);
		return aorta_fail(e, AORTA_EINPUT, path, 0, -1, "not a trial result: %s", root ? "not an object" : err);
	}
	trial_from(root, t);
	yajl_tree_free(root);
	if (t->status == TR_NONE)
		return aorta_fail(e, AORTA_EINPUT, path, 0, -1, "not a trial result: no known 'status'");
	return AORTA_OK;
}

/* ---- matrix.json, matrix.md --------------------------------------------------------- */

static void cell_settings_json(struct jw *w, const struct recipe *r, const struct sweep_cell *c)
{
	jw_obj(w, "settings");
	for (size_t i = 0; i < r->naxes; i++)
		jw_str(w, r->axes[i].name, r->axes[i].values[c->vi[i]]);
	jw_obj_end(w);
}

/* a number, or "-" for NaN */
static void md_num(FILE *f, double v, int dec, const char *sep)
{
	if (isfinite(v))
		fprintf(f, "%.*f%s", dec, v, sep);
	else
		fprintf(f, "-%s", sep);
}

/* Bus bandwidth: a column per (collective, size) seen, at most 8. */
static void md_busbw(FILE *f, const struct sweep *s)
{
	const struct recipe *r = &s->r;
	struct trial_coll cols[8];
	size_t ncol = 0;
	for (size_t c = 0; c < r->ncells; c++)
		for (size_t k = 0; k < s->st[c].ncolls && ncol < 8; k++) {
			size_t j;
			for (j = 0; j < ncol; j++)
				if (!strcmp(cols[j].type, s->st[c].colls[k].type) && cols[j].bytes == s->st[c].colls[k].bytes)
					break;
			if (j == ncol)
				cols[ncol++] = s->st[c].colls[k];
		}
	if (ncol) {
		fputs("\n## NCCL bus bandwidth (GB/s, median over trials)\n\n| cell |", f);
		for (size_t j = 0; j < ncol; j++)
			fprintf(f, " %s %llu B |", cols[j].type, cols[j].bytes);
		fputs("\n|---|", f);
		for (size_t j = 0; j < ncol; j++)
			fputs("---:|", f);
		fputc('\n', f);
		for (size_t i = 0; i < r->ncells; i++) {
			size_t c = s->order[i];
			fprintf(f, "| %s |", r->cells[c].id);
			for (size_t j = 0; j < ncol; j++) {
				double v = NAN;
				for (size_t k = 0; k < s->st[c].ncolls; k++)
					if (!strcmp(cols[j].type, s->st[c].colls[k].type) && cols[j].bytes == s->st[c].colls[k].bytes)
						v = s->st[c].colls[k].busbw_gbps;
				fputc(' ', f);
				md_num(f, v, 2, " |");
			}
			fputc('\n', f);
		}
	}
}

static enum aorta_status write_md(const struct sweep *s, struct aorta_error *e)
{
	const struct recipe *r = &s->r;
	char path[4200];
	snprintf(path, sizeof(path), "%s/matrix.md", s->dir);
	struct outfile o;
	if (out_open(&o, path, e))
		return e->code;
	FILE *f = o.f;
	fprintf(f, "# sweep %s\n\n", r->name);
	fprintf(f, "%zu cells x %d trials; baseline %s (%s). Step time: median over trials of each trial's step "
		   "(the mean over ranks of each rank's mean kept step, as aorta analyze states it), ms. A cell is better or worse than the baseline only when its median "
		   "differs by more than the noise: the larger trial range of the two, or %.3g %% of the "
		   "baseline's median.\n\n", r->ncells, r->trials, r->cells[r->baseline].id,
		r->cells[r->baseline].label, r->threshold_pct);
	fprintf(f, "**Best:** %s — %s\n\n", r->cells[s->best].id, s->best_why);
	if (s->confound.status != TR_NONE) {
		if (s->confound.status == TR_OK)
			fprintf(f, "**Confound check:** the baseline re-run at the end measured %.3f ms (%+.1f %% against "
				   "its median): %s\n\n", s->confound.step_ms, s->drift_pct,
				s->drift ? "DRIFT: outside the baseline's first range; verdicts are suspect"
					 : "within the baseline's first range, no drift");
		else
			fprintf(f, "**Confound check:** the baseline re-run did not succeed (%s)\n\n",
				trial_status_name(s->confound.status));
	}
	fprintf(f, "| rank | cell | settings | step ms (median) | range ms | spread %% | ok/trials | vs baseline | "
		   "exposed comm ms | overlap %% | wait ms | transfer ms | late rank | diagnosis | overhead %% |\n");
	fprintf(f, "|---:|---|---|---:|---|---:|---:|---|---:|---:|---:|---:|---:|---|---:|\n");
	for (size_t i = 0; i < r->ncells; i++) {
		size_t c = s->order[i];
		const struct cell_stats *st = &s->st[c];
		if (st->rank)
			fprintf(f, "| %d ", st->rank);
		else
			fputs("| - ", f);
		fprintf(f, "| %s | %s | ", r->cells[c].id, r->cells[c].label);
		if (st->nok)
			fprintf(f, "%.3f | %.3f–%.3f | %.1f%s | ", st->median, st->min, st->max, st->spread_pct,
				st->noisy ? " (noisy)" : "");
		else
			fputs("- | - | - | ", f);
		fprintf(f, "%zu/%zu | %s", st->nok, st->ntrials, verdict_name(st->verdict));
		if (st->verdict == V_BETTER || st->verdict == V_WORSE || st->verdict == V_SIMILAR)
			fprintf(f, " (%+.1f %%)", st->diff_pct);
		fputs(" | ", f);
		md_num(f, st->exposed_ms, 3, " | ");
		md_num(f, st->overlap_pct, 1, " | ");
		md_num(f, st->wait_ms, 3, " | ");
		md_num(f, st->transfer_ms, 3, " | ");
		if (st->late_rank >= 0)
			fprintf(f, "%d", st->late_rank);
		else
			fputs("-", f);
		fprintf(f, " | %s | ", st->diag[0] ? st->diag : "-");
		md_num(f, st->overhead_pct, 2, " |\n");
	}
	int anyfail = 0;
	for (size_t c = 0; c < r->ncells; c++)
		for (int k = 0; k < r->trials; k++) {
			const struct trial *t = &s->t[c][k];
			if (t->status == TR_NONE || t->status == TR_OK)
				continue;
			if (!anyfail++)
				fputs("\n## Failed trials\n\n| cell | trial | status | detail |\n|---|---:|---|---|\n", f);
			fprintf(f, "| %s | %d | %s | %s |\n", r->cells[c].id, t->trial, trial_status_name(t->status),
				t->error);
		}
	md_busbw(f, s);
	if (s->ndiffs) {
		fputs("\n## Environments side by side\n\n| configuration | reference | other | step ms | verdict |\n"
		      "|---|---|---|---|---|\n", f);
		for (size_t i = 0; i < s->ndiffs; i++) {
			const struct env_diff *d = &s->diffs[i];
			fputs("| ", f);
			for (size_t k = 0; k < r->naxes; k++)
				if (r->axes[k].kind != AX_ENVIRONMENT)
					fprintf(f, "%s=%s ", r->axes[k].name, r->axes[k].values[r->cells[d->a].vi[k]]);
			fprintf(f, "| %s (%s) | %s (%s) | ", recipe_cell_environment(r, &r->cells[d->a]), r->cells[d->a].id,
				recipe_cell_environment(r, &r->cells[d->b]), r->cells[d->b].id);
			if (isfinite(d->diff_pct))
				fprintf(f, "%.3f → %.3f (%+.1f %%)", s->st[d->a].median, s->st[d->b].median, d->diff_pct);
			else
				fputs("-", f);
			fprintf(f, " | %s |\n", verdict_name(d->v));
		}
	}
	return out_commit(&o, e);
}

/* Cell c's object of matrix.json. */
static void cell_json(struct jw *w, const struct sweep *s, size_t c)
{
	const struct recipe *r = &s->r;
	const struct cell_stats *st = &s->st[c];
	jw_obj(w, NULL);
	jw_str(w, "id", r->cells[c].id);
	jw_str(w, "key", r->cells[c].key);
	jw_str(w, "label", r->cells[c].label);
	const char *en = recipe_cell_environment(r, &r->cells[c]);
	if (en)
		jw_str(w, "environment", en);
	else
		jw_null(w, "environment");
	cell_settings_json(w, r, &r->cells[c]);
	if (st->rank)
		jw_int(w, "rank", st->rank);
	else
		jw_null(w, "rank");
	jw_str(w, "verdict", verdict_name(st->verdict));
	jw_int(w, "trials_ok", (long long)st->nok);
	jw_int(w, "trials_done", (long long)st->ntrials);
	jw_num(w, "step_ms_median", st->median, 6);
	jw_num(w, "step_ms_min", st->min, 6);
	jw_num(w, "step_ms_max", st->max, 6);
	jw_num(w, "spread_pct", st->spread_pct, 3);
	jw_bool(w, "noisy", st->noisy);
	jw_num(w, "diff_pct", st->diff_pct, 3);
	jw_num(w, "noise_ms", st->noise_ms, 6);
	jw_num(w, "exposed_comm_ms", st->exposed_ms, 6);
	jw_num(w, "comm_ms", st->comm_ms, 6);
	jw_num(w, "overlap_pct", st->overlap_pct, 3);
	jw_num(w, "wait_ms", st->wait_ms, 6);
	jw_num(w, "transfer_ms", st->transfer_ms, 6);
	jw_num(w, "gemm_ms", st->gemm_ms, 6);
	jw_null(w, "gemm_tflops"); /* the traces keep no GEMM shapes: docs/sweep.md */
	if (st->late_rank >= 0)
		jw_int(w, "late_rank", st->late_rank);
	else
		jw_null(w, "late_rank");
	jw_str(w, "diagnosis", st->diag);
	jw_num(w, "overhead_pct", st->overhead_pct, 3);
	jw_arr(w, "busbw");
	for (size_t k = 0; k < st->ncolls; k++) {
		jw_obj(w, NULL);
		jw_str(w, "type", st->colls[k].type);
		jw_uint(w, "bytes", st->colls[k].bytes);
		jw_num(w, "busbw_gbps", st->colls[k].busbw_gbps, 4);
		jw_num(w, "busbw_kernel_gbps", st->colls[k].busbw_kernel_gbps, 4);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	jw_arr(w, "trials");
	for (int k = 0; k < r->trials; k++) {
		if (s->t[c][k].status == TR_NONE)
			continue;
		jw_obj(w, NULL);
		trial_json(w, &s->t[c][k]);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	jw_obj_end(w);
}

enum aorta_status sweep_write_matrix(const struct sweep *s, struct aorta_error *e)
{
	const struct recipe *r = &s->r;
	char path[4200];
	snprintf(path, sizeof(path), "%s/matrix.json", s->dir);
	struct outfile o;
	if (out_open(&o, path, e))
		return e->code;
	struct jw w;
	jw_init(&w, o.f, 1);
	jw_obj(&w, NULL);
	jw_str(&w, "schema", SWEEP_SCHEMA);
	jw_str(&w, "aorta_version", AORTA_VERSION);
	jw_str(&w, "name", r->name);
	jw_str(&w, "recipe", r->path);
	jw_int(&w, "trials", r->trials);
	jw_int(&w, "skip_steps", r->skip_steps);
	jw_obj(&w, "rule");
	jw_str(&w, "statistic", "median over trials of the trial step time (the mean over ranks of each rank's mean kept step)");
	jw_str(&w, "noise", "max(trial range of the cell, trial range of the baseline, threshold_pct of the "
			    "baseline median)");
	jw_num(&w, "threshold_pct", r->threshold_pct, 3);
	jw_num(&w, "noisy_pct", r->noisy_pct, 3);
	jw_obj_end(&w);
	jw_arr(&w, "axes");
	for (size_t i = 0; i < r->naxes; i++) {
		const struct sweep_axis *a = &r->axes[i];
		jw_obj(&w, NULL);
		jw_str(&w, "name", a->name);
		jw_str(&w, "kind", a->kind == AX_ENVIRONMENT ? "environment" : a->kind == AX_ENV ? "env" : "override");
		jw_arr(&w, "sets");
		for (size_t t = 0; t < a->ntargets; t++)
			jw_str(&w, NULL, a->targets[t]);
		jw_arr_end(&w);
		jw_arr(&w, "values");
		for (size_t v = 0; v < a->nvalues; v++)
			jw_str(&w, NULL, a->values[v]);
		jw_arr_end(&w);
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	jw_str(&w, "baseline", r->cells[r->baseline].id);
	jw_obj(&w, "best");
	jw_str(&w, "cell", r->cells[s->best].id);
	jw_str(&w, "why", s->best_why);
	jw_obj_end(&w);
	jw_obj(&w, "confound");
	jw_str(&w, "status", trial_status_name(s->confound.status));
	jw_num(&w, "step_ms", s->confound.status == TR_OK ? s->confound.step_ms : NAN, 6);
	jw_num(&w, "drift_pct", s->drift_pct, 3);
	jw_bool(&w, "drift", s->drift);
	jw_obj_end(&w);
	double ovh = 0;
	size_t novh = 0;
	jw_arr(&w, "cells");
	for (size_t i = 0; i < r->ncells; i++) {
		size_t c = s->order[i];
		const struct cell_stats *st = &s->st[c];
		cell_json(&w, s, c);
		if (isfinite(st->overhead_pct))
			ovh += st->overhead_pct, novh++;
	}
	jw_arr_end(&w);
	jw_num(&w, "overhead_pct_mean", novh ? ovh / (double)novh : NAN, 3);
	jw_arr(&w, "environment_diffs");
	for (size_t i = 0; i < s->ndiffs; i++) {
		jw_obj(&w, NULL);
		jw_str(&w, "reference", r->cells[s->diffs[i].a].id);
		jw_str(&w, "other", r->cells[s->diffs[i].b].id);
		jw_str(&w, "verdict", verdict_name(s->diffs[i].v));
		jw_num(&w, "diff_pct", s->diffs[i].diff_pct, 3);
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	jw_obj_end(&w);
	fputc('\n', o.f);
	if (out_commit(&o, e))
		return e->code;
	return write_md(s, e);
}

/* ---- loading a sweep folder ------------------------------------------------------------ */

enum aorta_status sweep_load(const char *dir, struct sweep *s, struct aorta_error *e)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->dir, sizeof(s->dir), "%s", dir);
	char path[4300];
	snprintf(path, sizeof(path), "%s/recipe.resolved.yaml", dir);
	struct stat sb;
	if (stat(path, &sb) != 0)
		return aorta_fail(e, AORTA_EINPUT, dir, 0, -1, "not a sweep folder (no recipe.resolved.yaml)");
	if (recipe_load(path, NULL, 0, 0, 0, &s->r, e))
		return e->code;
	s->t = xcalloc(s->r.ncells, sizeof(struct trial *));
	for (size_t c = 0; c < s->r.ncells; c++) {
		s->t[c] = xcalloc((size_t)s->r.trials, sizeof(struct trial));
		for (int k = 0; k < s->r.trials; k++) {
			snprintf(path, sizeof(path), "%s/cells/%s/t%d/result.json", dir, s->r.cells[c].id, k + 1);
			if (stat(path, &sb) != 0)
				continue;
			if (trial_read(path, &s->t[c][k], e))
				return e->code;
		}
	}
	snprintf(path, sizeof(path), "%s/cells/%s/confound/result.json", dir, s->r.cells[s->r.baseline].id);
	if (stat(path, &sb) == 0 && trial_read(path, &s->confound, e))
		return e->code;
	sweep_stats(s);
	return AORTA_OK;
}
