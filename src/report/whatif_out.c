/*
 * whatif_out.c - the what-if's terminal section and compare's side-by-side
 * rows (docs/metrics.md "What-if").  Its JSON, across_ranks.what_if, is
 * written and read by the analysis model's tables (analysis_io/fields.c,
 * docs/formats.md), like every other record.
 */
#include "report/whatif_out.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "overlap/analysis.h"

static void print_fixes(FILE *f, const struct whatif *w, const char *title, const struct whatif_fix *x, size_t n,
			size_t most)
{
	if (!n)
		return;
	/* the largest gains first, at most `most` */
	size_t *o = xmalloc(n * sizeof(*o));
	for (size_t q = 0; q < n; q++)
		o[q] = q;
	for (size_t p = 0; p < n; p++)
		for (size_t q = p + 1; q < n; q++)
			if (x[o[q]].gain_ms > x[o[p]].gain_ms) {
				size_t t = o[p];
				o[p] = o[q];
				o[q] = t;
			}
	fprintf(f, "   %-10s", title);
	for (size_t q = 0; q < n && q < most; q++) {
		if (x[o[q]].rank >= 0 && x[o[q]].unknown) /* its trace lacks its peers' ops */
			fprintf(f, "%s%s ideal unknown", q ? ", " : "", x[o[q]].what);
		else if (whatif_nothing(w, x[o[q]].gain_ms) || x[o[q]].gain_ms < 0) /* never a "gain" of -0.2 % */
			fprintf(f, "%s%s %.2f ms (nothing)", q ? ", " : "", x[o[q]].what, x[o[q]].step_ms_if_fixed);
		else
			fprintf(f, "%s%s %.2f ms (gain %.1f %%)", q ? ", " : "", x[o[q]].what, x[o[q]].step_ms_if_fixed,
				x[o[q]].gain_pct);
	}
	if (n > most)
		fprintf(f, ", ... (%zu more)", n - most);
	fputc('\n', f);
	free(o);
}

void whatif_print(FILE *f, const struct analysis *a, const struct whatif *w, int all)
{
	(void)a;
	size_t most = all ? SIZE_MAX : 4;
	if (!w)
		return;
	fprintf(f, "\n== what-if (a replay of the joined timeline; docs/metrics.md \"What-if\")\n");
	if (!w->ok) {
		fprintf(f, "   not replayed: %s\n", w->why ? w->why : "");
		return;
	}
	fprintf(f, "   %s\n", w->verdict ? w->verdict : "");
	if (w->launch_delays_out) /* a trace without a host: its launch delays out of every replay */
		fprintf(f, "   step: measured %.2f ms, replayed without its launch delays %.2f ms (a trace without host "
			"launches: the delays nothing explains are left out of every replay, as Lin et al.'s T_nodelay), "
			"ideal %.2f ms, slowdown %.3f over %zu step%s\n", w->measured_step_ms, w->replay_step_ms,
			w->ideal_step_ms, w->slowdown, w->steps_used, w->steps_used == 1 ? "" : "s");
	else
		fprintf(f, "   step: measured %.2f ms, replayed %.2f ms (worst rank-step error %.1f %%%s), ideal %.2f ms, "
			"slowdown %.3f over %zu step%s\n", w->measured_step_ms, w->replay_step_ms, w->replay_error_pct,
			w->reproduced ? "" : ", NOT reproduced within 3 %", w->ideal_step_ms, w->slowdown, w->steps_used,
			w->steps_used == 1 ? "" : "s");
	if (isfinite(w->pooled_step_ms)) /* docs/metrics.md "Pooled ideal" */
		fprintf(f, "   pooled ideal (Lin et al.'s: every op at the job's mean of its name, every transfer at its "
			"type's median, longer than it took where the mean is): %.2f ms, slowdown %.3f\n",
			w->pooled_step_ms, w->slowdown_pooled);
	if (w->launch_delays_out)
		fprintf(f, "   launch delays (left out of every replay): %.3f ms per step over the ops; they cost the step "
			"%.3f ms (%.1f %%)\n", w->unexplained_ms, w->unexplained_step_ms, 100.0 * w->unexplained_step_share);
	else
		fprintf(f, "   unexplained delays (kept fixed in every replay): %.3f ms per step, %.1f %% of the step\n",
			w->unexplained_ms, 100.0 * w->unexplained_share);
	/* how much of the ideal's gain rests on dependencies guessed from the
	 * times (docs/metrics.md "Where a dependency comes from") */
	if (w->deps_guessed && isfinite(w->guessed_ms))
		fprintf(f, "   dependencies: %llu guessed from the times, %llu recorded, %llu from the op table, %llu from "
			"the pipeline schedule; replayed without the guesses the ideal's gain (%.3f ms) differs by "
			"%.3f ms (profiling with CUDA sync events records them)\n", (unsigned long long)w->deps_guessed,
			(unsigned long long)w->deps_recorded, (unsigned long long)w->deps_table,
			(unsigned long long)w->deps_schedule, w->replay_step_ms - w->ideal_step_ms, w->guessed_ms);
	fprintf(f, "   noise floor: %.3f ms (%s): a gain within it is nothing\n", whatif_material_ms(w),
		w->noise_floor_from ? w->noise_floor_from : "1 % of the step and the clock uncertainty");
	int host = 0;
	for (size_t i = 0; i < w->nranks; i++)
		host |= isfinite(w->ranks[i].host_launch_ms);
	if (host) { /* docs/metrics.md "Host launch time" */
		fprintf(f, "   host launch a step (ideal):");
		for (size_t i = 0; i < w->nranks && (all || i < 16); i++) {
			const struct whatif_rank *h = &w->ranks[i];
			if (isfinite(h->host_launch_ms))
				fprintf(f, "%s rank %d %.2f ms (%.2f)", i ? "," : "", h->rank, h->host_launch_ms,
					h->ideal_host_launch_ms);
			else
				fprintf(f, "%s rank %d n/a", i ? "," : "", h->rank);
		}
		if (!all && w->nranks > 16)
			fprintf(f, ", ... (%zu more: -v)", w->nranks - 16);
		fputc('\n', f);
	}
	double spread = whatif_window_spread(w);
	if (spread > whatif_material_ms(w)) /* the step itself is only defined that well */
		fprintf(f, "   step windows: the ranks' mean windows differ by %.2f ms (%.2f to %.2f ms): every gain "
			"below smaller than that rests on a poorly defined step\n", spread, w->rank_window_min_ms,
			w->rank_window_max_ms);
	print_fixes(f, w, "by rank:", w->by_rank, w->nby_rank, most);
	print_fixes(f, w, "by group:", w->by_group, w->nby_group, most);
	print_fixes(f, w, "by op:", w->by_op, w->nby_op, most);
	for (size_t q = 0; q < w->nby_rank; q++) {
		const struct whatif_fix *x = &w->by_rank[q];
		if (x->then_rank >= 0 && isfinite(x->then_gain_ms))
			fprintf(f, "   then:     %s with rank %d (the next-slowest) %.2f ms (%s %.1f %%)\n", x->what, x->then_rank,
				w->replay_step_ms - x->then_gain_ms, whatif_nothing(w, x->then_gain_ms) ? "nothing," : "gain",
				x->then_gain_pct);
	}
	if (w->ncp) {
		fprintf(f, "   critical path:");
		for (size_t q = 0; q < w->ncp && q < most; q++) {
			if (w->cp[q].stream >= 0)
				fprintf(f, "%s rank %d stream %d %s %.0f %%", q ? "," : "", w->cp[q].rank, (int)w->cp[q].stream,
					w->cp[q].what, 100.0 * w->cp[q].share);
			else
				fprintf(f, "%s rank %d %s %.0f %%", q ? "," : "", w->cp[q].rank, w->cp[q].what,
					100.0 * w->cp[q].share);
		}
		fputc('\n', f);
	}
	for (size_t s = 0; s < w->nsteps; s++)
		if (!w->steps[s].reproduced)
			fprintf(f, "   step %lld not reproduced (%.1f %% off): %s\n", (long long)w->steps[s].number,
				w->steps[s].error_pct, w->steps[s].reason ? w->steps[s].reason : "");
}

static const struct whatif_fix *find_fix(const struct whatif *w, const char *what)
{
	const struct whatif_fix *v[3] = { w->by_rank, w->by_group, w->by_op };
	size_t n[3] = { w->nby_rank, w->nby_group, w->nby_op };
	for (int k = 0; k < 3; k++)
		for (size_t q = 0; q < n[k]; q++)
			if (strcmp(v[k][q].what, what) == 0)
				return &v[k][q];
	return NULL;
}

static void side_json(struct jw *j, const char *key, const struct whatif *w)
{
	if (!w || !w->ok) {
		jw_null(j, key);
		return;
	}
	const struct whatif_fix *b = whatif_best(w);
	jw_obj(j, key);
	jw_num(j, "measured_step_ms", w->measured_step_ms, 6);
	jw_num(j, "ideal_step_ms", w->ideal_step_ms, 6);
	jw_num(j, "slowdown", w->slowdown, 6);
	jw_num(j, "slowdown_pooled", w->slowdown_pooled, 6);
	if (b) {
		jw_str(j, "best_fix", b->what);
		jw_num(j, "best_gain_ms", b->gain_ms, 6);
		jw_num(j, "best_gain_pct", b->gain_pct, 4);
	} else {
		jw_null(j, "best_fix");
	}
	jw_obj_end(j);
}

/* A row of compare's what-if table: a ratio of each run, "n/a" where it has none. */
static void slowdown_row(FILE *f, const char *what, double b, double x)
{
	char b1[32] = "n/a", b2[32] = "n/a";
	if (isfinite(b))
		snprintf(b1, sizeof(b1), "%.3f", b);
	if (isfinite(x))
		snprintf(b2, sizeof(b2), "%.3f", x);
	fprintf(f, "   %-40s %-24s %12s %12s\n", "", what, b1, b2);
}

void whatif_compare(FILE *f, struct jw *j, const struct whatif *base, const struct whatif *x)
{
	int ob = base && base->ok, ox = x && x->ok;
	if (j) {
		jw_obj(j, "what_if");
		side_json(j, "baseline", base);
		side_json(j, "this", x);
		jw_arr(j, "fixes");
	}
	if (f && (ob || ox))
		fprintf(f, "   what-if (gain if fixed, ms per step):  %-24s %12s %12s\n", "fix", "baseline", "this");
	const struct whatif *v[2] = { base, x };
	for (int side = 0; side < 2; side++) { /* every fix of either run, once */
		const struct whatif *w = v[side];
		if (!w || !w->ok)
			continue;
		const struct whatif_fix *fx[3] = { w->by_rank, w->by_group, w->by_op };
		size_t n[3] = { w->nby_rank, w->nby_group, w->nby_op };
		for (int k = 0; k < 3; k++)
			for (size_t q = 0; q < n[k]; q++) {
				const char *what = fx[k][q].what;
				if (side == 1 && ob && find_fix(base, what))
					continue;
				const struct whatif_fix *fb = ob ? find_fix(base, what) : NULL;
				const struct whatif_fix *fxx = ox ? find_fix(x, what) : NULL;
				double gb = fb ? fb->gain_ms : NAN, gx = fxx ? fxx->gain_ms : NAN;
				if (fabs(gb) < 5e-4) /* no "-0.000" */
					gb = 0 * gb;
				if (fabs(gx) < 5e-4)
					gx = 0 * gx;
				char s1[32], s2[32];
				if (isnan(gb))
					snprintf(s1, sizeof(s1), "n/a");
				else if (whatif_nothing(base, gb) || gb < 0) /* within its noise floor */
					snprintf(s1, sizeof(s1), "nothing");
				else
					snprintf(s1, sizeof(s1), "%.3f", gb);
				if (isnan(gx))
					snprintf(s2, sizeof(s2), "n/a");
				else if (whatif_nothing(x, gx) || gx < 0)
					snprintf(s2, sizeof(s2), "nothing");
				else
					snprintf(s2, sizeof(s2), "%.3f", gx);
				if (f)
					fprintf(f, "   %-40s %-24s %12s %12s\n", "", what, s1, s2);
				if (j) {
					jw_obj(j, NULL);
					jw_str(j, "fix", what);
					jw_num(j, "baseline_gain_ms", gb, 6);
					jw_num(j, "gain_ms", gx, 6);
					jw_obj_end(j);
				}
			}
	}
	if (f && (ob || ox)) {
		slowdown_row(f, "slowdown (measured/ideal)", ob ? base->slowdown : NAN, ox ? x->slowdown : NAN);
		if ((ob && isfinite(base->slowdown_pooled)) || (ox && isfinite(x->slowdown_pooled)))
			slowdown_row(f, "slowdown, pooled ideal", ob ? base->slowdown_pooled : NAN,
				     ox ? x->slowdown_pooled : NAN);
	}
	if (j) {
		jw_arr_end(j);
		jw_obj_end(j);
	}
}
