/*
 * analysis_out.c - terminal, JSON, CSV and Chrome-trace views of an analysis.
 *
 * All times are integer nanoseconds inside and milliseconds with six
 * decimals (exact) in files; the terminal rounds to 3 decimals and always
 * prints units.
 */
#include "report/analysis_out.h"
#include "report/whatif_out.h"
#include "overlap/figures.h"
#include "overlap/diagnosis.h"
#include "base/output.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef AORTA_VERSION
#define AORTA_VERSION "0.1.0"
#endif

static double ms(int64_t ns)
{
	return (double)ns / 1e6;
}

static double pct(int64_t num, int64_t den)
{
	return den ? 100.0 * (double)num / (double)den : NAN;
}

/* ---- terminal -------------------------------------------------------------- */

/* Rows of the stream and collective tables before "... N more". */
#define MAX_ROWS 24


static void print_pct(FILE *f, double v)
{
	if (isnan(v))
		fprintf(f, "%8s", "n/a");
	else
		fprintf(f, "%7.2f%%", v);
}

static void print_gbps(FILE *f, double v)
{
	if (isnan(v))
		fprintf(f, " %11s", "n/a"); /* no size, or no matched call */
	else
		fprintf(f, " %6.1f GB/s", v);
}

/* Share of matched collective time spent waiting, over all ranks. */
static double wait_share(const struct analysis *a)
{
	int64_t w = 0, t = 0;
	for (size_t i = 0; i < a->n; i++) {
		w += a->r[i].wait_ns;
		t += a->r[i].wait_ns + a->r[i].transfer_ns;
	}
	return t ? (double)w / (double)t : NAN;
}

/* The few sentences a performance engineer wants first (overlap/diagnosis.c). */
static void print_diagnosis(FILE *f, const struct analysis *a)
{
	struct diagnosis d;
	analysis_diagnose(a, &d);
	if (d.kind == DIAG_NONE)
		return;
	fprintf(f, "   diagnosis: %s\n", d.headline);
}

static void print_clocks(FILE *f, const struct analysis *a)
{
	if (!strcmp(a->clock_method, "file"))
		fprintf(f, "   clocks: offsets from --clock-offsets");
	else if (!strcmp(a->clock_method, "none"))
		fprintf(f, "   clocks: taken as shared (--no-clock-align)");
	else if (!strcmp(a->clock_method, "one-host"))
		fprintf(f, "   clocks: one host (%s), one clock", a->r[0].host);
	else if (!a->clock_samples)
		fprintf(f, "   clocks: no blocking collective to align on: taken as shared");
	else
		fprintf(f, "   clocks: aligned on the ends of %llu blocking collectives (%s)",
			(unsigned long long)a->clock_samples, a->clock_method);
	if (a->clock_samples)
		fprintf(f, "; residual spread p50 %.3f ms, p95 %.3f ms (the uncertainty of each wait figure)",
			ms(a->clock_spread_p50_ns), ms(a->clock_spread_ns));
	fputc('\n', f);
	fprintf(f, "   clock offsets vs rank %d:", a->r[0].rank);
	for (size_t i = 0; i < a->n; i++) {
		const struct rank_result *r = &a->r[i];
		fprintf(f, "%s rank %d %+.3f ms", i ? "," : "", r->rank, ms(r->clock_offset_ns));
		if (r->clock_drift != 0)
			fprintf(f, " (drift %+.1f ppm)", r->clock_drift * 1e6);
	}
	fputc('\n', f);
}

/* Cross-rank figures (overlap/join.c), or why there are none. */
/* Ranks shown row by row before a table is summarised; past LARGE_JOB
 * ranks the summary shows sections for a few ranks only. */
#define RANK_ROWS 16
#define LARGE_JOB 8

static const struct analysis *order_ctx;

static int cmp_caused(const void *x, const void *y)
{
	const struct rank_result *a = &order_ctx->r[*(const size_t *)x], *b = &order_ctx->r[*(const size_t *)y];
	if (a->caused_ns != b->caused_ns)
		return a->caused_ns < b->caused_ns ? 1 : -1;
	return (a->rank > b->rank) - (a->rank < b->rank);
}

/* Indices of a->r by waiting caused, most first (caller frees).  Output is
 * single-threaded, so a file-scope comparison context is safe here. */
static size_t *ranks_by_caused(const struct analysis *a)
{
	size_t *o = xmalloc((a->n ? a->n : 1) * sizeof(*o));
	for (size_t i = 0; i < a->n; i++)
		o[i] = i;
	order_ctx = a;
	qsort(o, a->n, sizeof(*o), cmp_caused);
	order_ctx = NULL;
	return o;
}

static int cmp_i64v(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
	return (a > b) - (a < b);
}

static double pctl(const int64_t *v, size_t n, double q)
{
	size_t k = (size_t)(q * (double)(n - 1) + 0.5);
	return ms(v[k < n ? k : n - 1]);
}

/* A large job: waiting and waiting caused across ranks as percentiles, and
 * the hosts (ranks of one host together) by waiting caused. */
static void print_distribution(FILE *f, const struct analysis *a)
{
	int64_t *w = xmalloc(a->n * sizeof(*w)), *c = xmalloc(a->n * sizeof(*c));
	for (size_t i = 0; i < a->n; i++) {
		w[i] = a->r[i].wait_ns;
		c[i] = a->r[i].caused_ns;
	}
	qsort(w, a->n, sizeof(*w), cmp_i64v);
	qsort(c, a->n, sizeof(*c), cmp_i64v);
	fprintf(f, "   across the %zu ranks (p50 / p90 / p99 / max): waiting %.3f / %.3f / %.3f / %.3f ms; "
		"waiting caused %.3f / %.3f / %.3f / %.3f ms\n", a->n, pctl(w, a->n, 0.5), pctl(w, a->n, 0.9),
		pctl(w, a->n, 0.99), ms(w[a->n - 1]), pctl(c, a->n, 0.5), pctl(c, a->n, 0.9), pctl(c, a->n, 0.99),
		ms(c[a->n - 1]));
	free(w);
	free(c);
	/* hosts: the ranks that share a clock domain with a host name */
	struct hrow { const char *host; size_t ranks; int64_t wait_ns, caused_ns; } *h = xcalloc(a->n, sizeof(*h));
	size_t nh = 0;
	for (size_t i = 0; i < a->n; i++) {
		const struct rank_result *r = &a->r[i];
		if (!r->host[0])
			continue;
		size_t k;
		for (k = 0; k < nh; k++)
			if (!strcmp(h[k].host, r->host))
				break;
		if (k == nh)
			h[nh++].host = r->host;
		h[k].ranks++;
		h[k].wait_ns += r->wait_ns;
		h[k].caused_ns += r->caused_ns;
	}
	if (nh > 1) {
		for (size_t x = 1; x < nh; x++) /* by waiting caused, most first (insertion: hosts are few) */
			for (size_t y = x; y > 0 && h[y].caused_ns > h[y - 1].caused_ns; y--) {
				struct hrow t = h[y];
				h[y] = h[y - 1];
				h[y - 1] = t;
			}
		fprintf(f, "   %-24s %6s %14s %16s\n", "host", "ranks", "waiting", "caused waiting");
		for (size_t k = 0; k < nh; k++) {
			if (k == 8 && nh > 9) {
				fprintf(f, "   ... %zu more hosts\n", nh - k);
				break;
			}
			fprintf(f, "   %-24.24s %6zu %11.3f ms %13.3f ms\n", h[k].host, h[k].ranks, ms(h[k].wait_ns),
				ms(h[k].caused_ns));
		}
	}
	free(h);
}

static void print_cross_rank(FILE *f, const struct analysis *a)
{
	if (!a->clocks_aligned) {
		fprintf(f, "   no wait, late-rank or skew figures: %s\n",
			a->no_cross_rank_why ? a->no_cross_rank_why : "no collective could be matched across ranks");
		return;
	}
	print_clocks(f, a);
	fprintf(f, "   collectives matched: %llu (%llu by sequence number; unmatched calls %llu); start skew "
		"p50 %.3f ms, max %.3f ms\n", (unsigned long long)a->matched_groups,
		(unsigned long long)a->matched_by_seq, (unsigned long long)a->unmatched_calls,
		ms(a->skew_p50_ns), ms(a->skew_max_ns));
	fprintf(f, "   %-6s %14s %8s %12s  %s\n", "rank", "caused waiting", "share", "collectives",
		"steps where it caused waiting");
	/* by waiting caused, most first; a large job shows the top rows, then
	 * the distribution and the hosts (--csv / --json have every rank) */
	size_t *order = ranks_by_caused(a);
	for (size_t oi = 0; oi < a->n; oi++) {
		size_t i = order[oi];
		const struct rank_result *r = &a->r[i];
		if (a->n > LARGE_JOB && oi > 0 && r->caused_ns <= 0) {
			fprintf(f, "   ... %zu more ranks caused no waiting\n", a->n - oi);
			break;
		}
		if (oi == RANK_ROWS && a->n > RANK_ROWS + 1) {
			fprintf(f, "   ... %zu more ranks (--csv ranks.csv and --json have every rank)\n", a->n - oi);
			break;
		}
		fprintf(f, "   %-6d %11.3f ms ", r->rank, ms(r->caused_ns));
		print_pct(f, pct(r->caused_ns, a->caused_ns));
		fprintf(f, " %12llu  ", (unsigned long long)r->caused_colls);
		size_t shown = 0;
		for (size_t k = 0; k < a->nxsteps; k++) {
			int64_t c = a->xsteps[k].by_rank[i];
			if (c <= 0 || c <= a->clock_spread_ns)
				continue;
			if (shown++ == 12) {
				fprintf(f, " ...");
				break;
			}
			if (a->xsteps[k].number == INT64_MIN)
				fprintf(f, "%soutside steps", shown > 1 ? ", " : "");
			else
				fprintf(f, "%s%lld", shown > 1 ? ", " : "", (long long)a->xsteps[k].number);
		}
		fprintf(f, "%s%s\n", shown ? "" : "-",
			analysis_uncertain(a, r->caused_ns, r->matched) && r->caused_ns ? " (within clock uncertainty)" : "");
	}
	free(order);
	if (a->n > LARGE_JOB)
		print_distribution(f, a);
	size_t nx = 0;
	for (size_t k = 0; k < a->nxsteps; k++)
		nx += a->xsteps[k].straggler >= 0;
	if (nx)
		fprintf(f, "   %-14s %9s %14s %14s\n", "step", "straggler", "it caused", "all caused");
	size_t shown = 0;
	for (size_t k = 0; k < a->nxsteps; k++) {
		const struct xstep *x = &a->xsteps[k];
		if (x->straggler < 0)
			continue;
		if (shown++ == 16) {
			fprintf(f, "   ... %zu more steps (--json has them all)\n", nx - 16);
			break;
		}
		if (x->number == INT64_MIN)
			fprintf(f, "   %-14s", "outside steps");
		else
			fprintf(f, "   %-14lld", (long long)x->number);
		fprintf(f, " %9d %11.3f ms %11.3f ms\n", x->straggler, ms(x->caused_ns), ms(x->total_caused_ns));
	}
	if (a->late_rank >= 0)
		fprintf(f, "   late rank (caused >= 60%% of the waiting): %d (%.1f%%)\n", a->late_rank,
			100.0 * a->late_share);
	else if (a->top_rank >= 0 && analysis_uncertain(a, a->caused_ns, a->matched_groups))
		fprintf(f, "   late rank: none (all waiting caused, %.3f ms, is within the clock uncertainty)\n",
			ms(a->caused_ns));
	else if (a->top_rank >= 0)
		fprintf(f, "   late rank: none (no rank caused 60%% of the waiting; the most: rank %d, %.1f%%)\n",
			a->top_rank, 100.0 * a->late_share);
	else
		fprintf(f, "   late rank: none (no rank made another wait)\n");
}

void analysis_print(FILE *f, const struct analysis *a, int per_step)
{
	fprintf(f, "aorta analyze: %zu rank%s\n", a->n, a->n == 1 ? "" : "s");
	/* a large job: a section for the ranks that caused the most waiting
	 * and for the first rank, a table for the rest */
	char *shown = xcalloc(a->n ? a->n : 1, 1);
	size_t nshown = 0;
	if (a->n > LARGE_JOB) {
		size_t *order = ranks_by_caused(a);
		shown[0] = 1;
		for (size_t k = 0; k < a->n && k < 3; k++)
			if (a->r[order[k]].caused_ns > 0)
				shown[order[k]] = 1;
		free(order);
		for (size_t i = 0; i < a->n; i++)
			nshown += shown[i];
		fprintf(f, "(%zu ranks: sections for rank %d and the %s that caused the most waiting; every rank's "
			   "figures are in the tables below, --csv and --json)\n", a->n, a->r[0].rank,
			nshown > 2 ? "ranks" : "rank");
	} else {
		memset(shown, 1, a->n);
	}
	for (size_t i = 0; i < a->n; i++) {
		const struct rank_result *r = &a->r[i];
		if (!shown[i])
			continue;
		fprintf(f, "\n== rank %d (%s, device %d, %s)\n", r->rank, r->format, r->device, r->path);
		fprintf(f, "   %llu device events", (unsigned long long)r->events);
		if (r->skipped)
			fprintf(f, ", %llu malformed events skipped (first: %s)",
				(unsigned long long)r->skipped, r->skipped_first);
		fprintf(f, ", %zu steps with GPU work\n", r->nsteps);
		if (r->other_device_spans)
			fprintf(f, "   WARNING: %llu device events are on device %d (and maybe others), not device %d: "
				   "a one-process multi-GPU trace; the figures below mix the devices "
				   "(analyse one trace per GPU)\n",
				(unsigned long long)r->other_device_spans, r->other_device, r->device);
		int skip = a->opts.skip_steps;
		int have_steps = r->nsteps > (size_t)(skip > 0 ? skip : 0);
		fprintf(f, "   %-20s %14s", "figure", "whole trace");
		if (have_steps)
			fprintf(f, " %12s %12s %12s %12s", "step mean", "step p50", "step min", "step max");
		fputc('\n', f);
		for (size_t k = 0; k < NFIGURES; k++) {
			const struct figure *fg = &FIGURES[k];
			fprintf(f, "   %-20s %11.3f ms", k == 0 ? "span / step" : fg->label,
				ms(fig_value(fg, &r->total)));
			if (have_steps) {
				struct stat4 st = steps_stat(r, skip, fg->off);
				fprintf(f, " %9.3f ms %9.3f ms %9.3f ms %9.3f ms", st.mean / 1e6, st.p50 / 1e6,
					st.min / 1e6, st.max / 1e6);
			}
			fputc('\n', f);
		}
		const struct ov_figures *t = &r->total;
		fprintf(f, "   comm overlapped with compute: ");
		print_pct(f, pct(t->overlap_ns, t->comm_ns));
		fprintf(f, "   exposed comm / span: ");
		print_pct(f, pct(t->exposed_comm_ns, t->window_ns));
		fprintf(f, "   GPU utilisation: ");
		print_pct(f, pct(t->busy_ns, t->window_ns));
		fputc('\n', f);
		size_t hb = 0; /* over the kept steps, as the step figures */
		for (size_t j = r->nsteps - analysis_kept_steps(r, a->opts.skip_steps); j < r->nsteps; j++)
			hb += (size_t)r->steps[j].host_bound;
		size_t kept = analysis_kept_steps(r, a->opts.skip_steps);
		if (kept)
			fprintf(f, "   host-bound steps (host wait >= %.0f%% of the step): %zu of %zu%s\n",
				a->opts.host_bound_pct, hb, kept, kept < r->nsteps ? " kept" : "");
		else if (r->nsteps)
			fprintf(f, "   --skip-steps %d leaves none of the %zu steps: no step figures\n",
				a->opts.skip_steps, r->nsteps);
		if (r->matched && a->clocks_aligned) {
			fprintf(f, "   collectives matched across ranks: %llu; waiting for peers %.3f ms%s, "
				"transfer %.3f ms; caused its peers %.3f ms of waiting%s; arrived last %llu times\n",
				(unsigned long long)r->matched, ms(r->wait_ns),
				analysis_uncertain(a, r->wait_ns, r->matched) ? " (within clock uncertainty)" : "",
				ms(r->transfer_ns), ms(r->caused_ns),
				analysis_uncertain(a, r->caused_ns, r->matched) ? " (within clock uncertainty)" : "",
				(unsigned long long)r->times_last);
		}
		if (r->npeers) { /* its pipeline-stage neighbours */
			fprintf(f, "   point-to-point peers (send/recv):");
			for (size_t k = 0; k < r->npeers; k++)
				fprintf(f, "%s %d", k ? "," : "", r->peers[k]);
			const struct whatif *wi = a->whatif;
			if (wi && wi->ok && wi->stage && i < wi->nstage && wi->stage[i] >= 0)
				fprintf(f, "; pipeline stage %d", wi->stage[i]);
			fputc('\n', f);
		}
		fprintf(f, "   HTA comm_comp_overlap: ");
		if (r->hta.has_comm)
			fprintf(f, "%.2f%%", r->hta.comm_comp_overlap_pct);
		else
			fprintf(f, "n/a (no communication kernels)");
		fprintf(f, "%s\n", r->hta.last_step_excluded ? " (last step excluded, as HTA does)" : "");

		if (r->nstreams) {
			fprintf(f, "   %-10s %12s %8s %10s\n", "stream", "busy", "util", "spans");
			for (size_t k = 0; k < r->nstreams && k < MAX_ROWS; k++) {
				fprintf(f, "   %-10d %9.3f ms ", r->streams[k].stream, ms(r->streams[k].busy_ns));
				print_pct(f, pct(r->streams[k].busy_ns, t->window_ns));
				fprintf(f, " %10llu\n", (unsigned long long)r->streams[k].spans);
			}
			if (r->nstreams > MAX_ROWS)
				fprintf(f, "   ... %zu more streams (all of them in --json and --csv)\n",
					r->nstreams - MAX_ROWS);
		}
		if (r->ncolls) {
			/* algbw/busbw from transfer time (nccl-tests); kernel busbw over the
			 * whole kernel time, waiting included (docs/metrics.md) */
			fprintf(f, "   %-15s %-6s %12s %7s %12s %12s %12s %12s %7s %11s %11s %11s\n", "collective", "pg",
				"bytes", "count", "total", "exposed", "wait", "transfer", "wait %", "algbw",
				"busbw", "kern. busbw");
			for (size_t k = 0; k < r->ncolls && k < MAX_ROWS; k++) {
				const struct coll_row *c = &r->colls[k];
				fprintf(f, "   %-15s %-6.6s %12llu %7llu %9.3f ms %9.3f ms ",
					coll_type_name((enum coll_type)c->type), c->pg[0] ? c->pg : "-",
					(unsigned long long)c->bytes, (unsigned long long)c->count,
					ms(c->total_ns), ms(c->exposed_ns));
				if (c->matched && a->clocks_aligned)
					fprintf(f, "%9.3f ms %9.3f ms ", ms(c->wait_ns), ms(c->transfer_ns));
				else
					fprintf(f, "%12s %12s ", "n/a", "n/a");
				print_pct(f, 100.0 * c->wait_share);
				print_gbps(f, c->algbw_gbps);
				print_gbps(f, c->busbw_gbps);
				print_gbps(f, c->busbw_kernel_gbps);
				fputc('\n', f);
			}
			if (r->ncolls > MAX_ROWS)
				fprintf(f, "   ... %zu more collective rows (all of them in --json and --csv)\n",
					r->ncolls - MAX_ROWS);
		}
		if (r->nkernels) {
			fprintf(f, "   top kernels by total time:\n");
			for (size_t k = 0; k < r->nkernels; k++) {
				const struct kernel_row *kr = &r->kernels[k];
				fprintf(f, "   %10.3f ms %7llu x  %-9s %.90s\n", ms(kr->total_ns),
					(unsigned long long)kr->count, kind_name((enum span_kind)kr->kind), kr->name);
			}
		}
		if (per_step && r->nsteps) {
			fprintf(f, "   %-8s %10s %10s %10s %10s %10s %10s %s\n", "step", "window", "compute",
				"comm", "exposed", "idle", "host wait", "");
			for (size_t j = 0; j < r->nsteps; j++) {
				const struct step_result *s = &r->steps[j];
				fprintf(f, "   %-8lld %7.3f ms %7.3f ms %7.3f ms %7.3f ms %7.3f ms %7.3f ms %s\n",
					(long long)s->number, ms(s->f.window_ns), ms(s->f.compute_ns),
					ms(s->f.comm_ns), ms(s->f.exposed_comm_ns), ms(s->f.idle_ns),
					ms(s->f.host_wait_ns), s->host_bound ? "host-bound" : "");
			}
		}
	}
	free(shown);
	if (a->n > 1) {
		fprintf(f, "\n== across ranks\n");
		for (size_t k = 0; k < NFIGURES; k++) {
			const struct figure *fg = &FIGURES[k];
			int64_t mn = INT64_MAX, mx = INT64_MIN;
			int rmx = -1;
			double sum = 0;
			for (size_t i = 0; i < a->n; i++) {
				int64_t v = fig_value(fg, &a->r[i].total);
				sum += (double)v;
				if (v < mn) mn = v;
				if (v > mx) { mx = v; rmx = a->r[i].rank; }
			}
			fprintf(f, "   %-20s mean %10.3f ms  min %10.3f ms  max %10.3f ms (rank %d)\n",
				k == 0 ? "span" : fg->label, sum / (double)a->n / 1e6, ms(mn), ms(mx), rmx);
		}
		print_cross_rank(f, a);
		print_diagnosis(f, a);
		whatif_print(f, a, a->whatif);
	}
}

/* ---- JSON ----------------------------------------------------------------- */

static void json_figs(struct jw *w, const char *key, const struct ov_figures *x)
{
	jw_obj(w, key);
	for (size_t k = 0; k < NFIGURES; k++)
		jw_ms(w, FIGURES[k].key, fig_value(&FIGURES[k], x));
	jw_num(w, "overlap_pct", 100.0 * ratio(x->overlap_ns, x->comm_ns), 4);
	jw_num(w, "exposed_comm_pct", 100.0 * ratio(x->exposed_comm_ns, x->window_ns), 4);
	jw_num(w, "utilization", ratio(x->busy_ns, x->window_ns), 6);
	jw_num(w, "overlap_ratio", ratio(x->overlap_ns, x->compute_ns), 6);
	int64_t mn = x->gemm_ns < x->comm_ns ? x->gemm_ns : x->comm_ns;
	jw_num(w, "tp_overlap_efficiency", ratio(x->gemm_comm_ns, mn), 6);
	jw_obj(w, "collective_ms");
	for (int c = 1; c < COLL__COUNT; c++)
		if (x->coll_ns[c])
			jw_ms(w, coll_type_name((enum coll_type)c), x->coll_ns[c]);
	jw_obj_end(w);
	jw_obj(w, "collective_exposed_ms");
	for (int c = 1; c < COLL__COUNT; c++)
		if (x->coll_ns[c])
			jw_ms(w, coll_type_name((enum coll_type)c), x->coll_exposed_ns[c]);
	jw_obj_end(w);
	jw_obj_end(w);
}

void analysis_write_json(FILE *f, const struct analysis *a)
{
	struct jw w;

	jw_init(&w, f, 1);
	jw_obj(&w, NULL);
	jw_str(&w, "schema", ANALYSIS_SCHEMA);
	jw_obj(&w, "tool");
	jw_str(&w, "name", "aorta");
	jw_str(&w, "version", AORTA_VERSION);
	jw_obj_end(&w);
	jw_obj(&w, "options");
	jw_int(&w, "skip_steps", a->opts.skip_steps);
	jw_num(&w, "host_bound_pct", a->opts.host_bound_pct, 2);
	jw_obj_end(&w);
	jw_arr(&w, "inputs");
	for (size_t i = 0; i < a->ninputs; i++)
		jw_str(&w, NULL, a->inputs[i]);
	jw_arr_end(&w);
	jw_arr(&w, "ranks");
	for (size_t i = 0; i < a->n; i++) {
		const struct rank_result *r = &a->r[i];
		jw_obj(&w, NULL);
		jw_int(&w, "rank", r->rank);
		jw_int(&w, "world_size", r->world_size);
		jw_int(&w, "device", r->device);
		jw_str(&w, "path", r->path);
		jw_str(&w, "format", r->format);
		jw_uint(&w, "device_events", r->events);
		jw_uint(&w, "host_events", r->host_events);
		jw_uint(&w, "skipped_events", r->skipped);
		if (r->other_device_spans) {
			jw_uint(&w, "other_device_events", r->other_device_spans);
			jw_int(&w, "other_device", r->other_device);
		}
		if (r->skipped)
			jw_str(&w, "skipped_first", r->skipped_first);
		json_figs(&w, "total", &r->total);
		if (r->nsteps)
			json_figs(&w, "steps_total", &r->steps_sum);
		jw_arr(&w, "steps");
		for (size_t j = 0; j < r->nsteps; j++) {
			const struct step_result *s = &r->steps[j];
			jw_obj(&w, NULL);
			jw_int(&w, "step", s->number);
			jw_int(&w, "start_ns", s->start_ns);
			jw_int(&w, "end_ns", s->end_ns);
			for (size_t k = 0; k < NFIGURES; k++)
				jw_ms(&w, FIGURES[k].key, fig_value(&FIGURES[k], &s->f));
			jw_num(&w, "overlap_pct", 100.0 * ratio(s->f.overlap_ns, s->f.comm_ns), 4);
			jw_bool(&w, "host_bound", s->host_bound);
			if (r->has_rec) { /* what the input recorded itself (JSONL) */
				jw_obj(&w, "recorded");
				for (int q = 0; q < SR__COUNT; q++)
					jw_num(&w, REC_KEYS[q], s->rec[q], q == SR_LOSS ? 8 : 6);
				jw_obj_end(&w);
			}
			jw_obj_end(&w);
		}
		jw_arr_end(&w);
		jw_obj(&w, "step_stats");
		for (size_t k = 0; k < NFIGURES; k++) {
			struct stat4 st = steps_stat(r, a->opts.skip_steps, FIGURES[k].off);
			if (!st.n)
				continue;
			jw_obj(&w, FIGURES[k].key);
			jw_num(&w, "mean", st.mean / 1e6, 6);
			jw_num(&w, "p50", st.p50 / 1e6, 6);
			jw_ms(&w, "min", (int64_t)st.min);
			jw_ms(&w, "max", (int64_t)st.max);
			jw_obj_end(&w);
		}
		jw_obj_end(&w);
		size_t hb = 0; /* over the kept steps, as the step figures */
		for (size_t j = r->nsteps - analysis_kept_steps(r, a->opts.skip_steps); j < r->nsteps; j++)
			hb += (size_t)r->steps[j].host_bound;
		jw_uint(&w, "host_bound_steps", hb);
		jw_arr(&w, "streams");
		for (size_t k = 0; k < r->nstreams; k++) {
			jw_obj(&w, NULL);
			jw_int(&w, "stream", r->streams[k].stream);
			jw_ms(&w, "busy_ms", r->streams[k].busy_ns);
			jw_num(&w, "utilization", ratio(r->streams[k].busy_ns, r->total.window_ns), 6);
			jw_uint(&w, "spans", r->streams[k].spans);
			jw_obj_end(&w);
		}
		jw_arr_end(&w);
		jw_arr(&w, "collectives");
		for (size_t k = 0; k < r->ncolls; k++) {
			const struct coll_row *c = &r->colls[k];
			jw_obj(&w, NULL);
			jw_str(&w, "type", coll_type_name((enum coll_type)c->type));
			jw_str(&w, "process_group", c->pg);
			jw_uint(&w, "bytes", c->bytes);
			jw_int(&w, "group_size", c->group_size);
			jw_uint(&w, "count", c->count);
			jw_ms(&w, "total_ms", c->total_ns);
			jw_ms(&w, "exposed_ms", c->exposed_ns);
			jw_ms(&w, "min_ms", c->min_ns);
			jw_ms(&w, "max_ms", c->max_ns);
			jw_uint(&w, "matched", c->matched);
			if (a->clocks_aligned) {
				jw_ms(&w, "wait_ms", c->wait_ns);
				jw_ms(&w, "transfer_ms", c->transfer_ns);
			} else {
				jw_null(&w, "wait_ms");
				jw_null(&w, "transfer_ms");
			}
			jw_num(&w, "wait_share", c->wait_share, 6);
			/* /2: from transfer time over the matched calls (nccl-tests);
			 * the whole-kernel-time figures under _kernel_ (join.c) */
			jw_num(&w, "algbw_gbps", c->algbw_gbps, 4);
			jw_num(&w, "busbw_gbps", c->busbw_gbps, 4);
			jw_num(&w, "algbw_kernel_gbps", c->algbw_kernel_gbps, 4);
			jw_num(&w, "busbw_kernel_gbps", c->busbw_kernel_gbps, 4);
			jw_obj_end(&w);
		}
		jw_arr_end(&w);
		jw_arr(&w, "top_kernels");
		for (size_t k = 0; k < r->nkernels; k++) {
			const struct kernel_row *kr = &r->kernels[k];
			jw_obj(&w, NULL);
			jw_str(&w, "name", kr->name);
			jw_str(&w, "kind", kind_name((enum span_kind)kr->kind));
			jw_uint(&w, "count", kr->count);
			jw_ms(&w, "total_ms", kr->total_ns);
			jw_ms(&w, "min_ms", kr->min_ns);
			jw_ms(&w, "max_ms", kr->max_ns);
			jw_obj_end(&w);
		}
		jw_arr_end(&w);
		jw_obj(&w, "wait");
		jw_uint(&w, "matched_collectives", r->matched);
		if (a->clocks_aligned) {
			jw_ms(&w, "wait_ms", r->wait_ns);
			jw_bool(&w, "wait_uncertain", analysis_uncertain(a, r->wait_ns, r->matched));
			jw_ms(&w, "transfer_ms", r->transfer_ns);
			jw_uint(&w, "times_last", r->times_last);
			jw_ms(&w, "caused_ms", r->caused_ns);
			jw_bool(&w, "caused_uncertain", analysis_uncertain(a, r->caused_ns, r->matched));
			jw_uint(&w, "caused_collectives", r->caused_colls);
			jw_ms(&w, "lateness_ms", r->lateness_ns);
			jw_ms(&w, "caused_host_wait_excess_ms", r->caused_host_excess_ns);
			jw_ms(&w, "caused_busy_excess_ms", r->caused_busy_excess_ns);
			jw_arr(&w, "caused_steps");
			for (size_t k = 0; k < a->nxsteps; k++)
				if (a->xsteps[k].by_rank[i] > 0 && a->xsteps[k].by_rank[i] > a->clock_spread_ns)
					jw_int(&w, NULL, a->xsteps[k].number);
			jw_arr_end(&w);
		} else {
			jw_null(&w, "wait_ms");
			jw_null(&w, "transfer_ms");
			jw_null(&w, "times_last");
			jw_null(&w, "caused_ms");
		}
		jw_arr(&w, "p2p_peers"); /* its pipeline-stage neighbours: the ranks it sends to or receives from */
		for (size_t k = 0; k < r->npeers; k++)
			jw_int(&w, NULL, r->peers[k]);
		jw_arr_end(&w);
		jw_obj_end(&w);
		jw_obj(&w, "clock");
		if (r->host[0])
			jw_str(&w, "host", r->host);
		else
			jw_null(&w, "host");
		jw_int(&w, "domain", r->clock_domain);
		jw_num(&w, "offset_ms", (double)r->clock_offset_ns / 1e6, 6);
		jw_num(&w, "drift_ppm", r->clock_drift * 1e6, 4);
		jw_int(&w, "t0_ns", r->clock_t0_ns);
		jw_obj_end(&w);
		jw_obj(&w, "named");
		jw_obj(&w, "hta");
		jw_num(&w, "comm_comp_overlap_pctg", r->hta.has_comm ? r->hta.comm_comp_overlap_pct : NAN, 4);
		jw_ms(&w, "kernel_time_ms", r->hta.kernel_time_ns);
		jw_ms(&w, "idle_time_ms", r->hta.idle_ns);
		jw_ms(&w, "compute_time_ms", r->hta.compute_ns);
		jw_ms(&w, "non_compute_time_ms", r->hta.non_compute_ns);
		jw_num(&w, "idle_time_pctg", 100.0 * ratio(r->hta.idle_ns, r->hta.kernel_time_ns), 4);
		jw_num(&w, "compute_time_pctg", 100.0 * ratio(r->hta.compute_ns, r->hta.kernel_time_ns), 4);
		jw_num(&w, "non_compute_time_pctg", 100.0 * ratio(r->hta.non_compute_ns, r->hta.kernel_time_ns), 4);
		jw_bool(&w, "last_step_excluded", r->hta.last_step_excluded);
		jw_obj_end(&w);
		const struct ov_figures *tl = &r->tracelens;
		jw_obj(&w, "tracelens");
		jw_ms(&w, "busy_time_ms", tl->busy_ns);
		jw_ms(&w, "computation_time_ms", tl->compute_ns);
		jw_ms(&w, "exposed_comm_time_ms", tl->exposed_comm_ns);
		jw_ms(&w, "exposed_memcpy_time_ms", tl->exposed_memcpy_ns);
		jw_ms(&w, "idle_time_ms", tl->idle_ns);
		jw_ms(&w, "total_comm_time_ms", tl->comm_ns);
		jw_ms(&w, "total_memcpy_time_ms", tl->memcpy_ns);
		jw_ms(&w, "total_time_ms", tl->window_ns);
		jw_obj_end(&w);
		jw_obj(&w, "aorta");
		const struct ov_figures *x = r->nsteps ? &r->steps_sum : &r->total;
		jw_ms(&w, "overlap_ms", x->overlap_ns);
		jw_ms(&w, "compute_ms", x->compute_ns);
		jw_num(&w, "overlap_ratio", ratio(x->overlap_ns, x->compute_ns), 6);
		jw_obj_end(&w);
		jw_obj(&w, "tp");
		int64_t mn = x->gemm_ns < x->comm_ns ? x->gemm_ns : x->comm_ns;
		jw_num(&w, "overlap_efficiency", ratio(x->gemm_comm_ns, mn), 6);
		jw_obj_end(&w);
		jw_obj_end(&w);
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	jw_obj(&w, "across_ranks");
	jw_uint(&w, "ranks", a->n);
	int xr = a->clocks_aligned;
	if (xr && a->late_rank >= 0)
		jw_int(&w, "late_rank", a->late_rank);
	else
		jw_null(&w, "late_rank");
	jw_num(&w, "late_share", xr ? a->late_share : NAN, 6);
	if (xr && a->top_rank >= 0)
		jw_int(&w, "top_rank", a->top_rank);
	else
		jw_null(&w, "top_rank");
	jw_uint(&w, "matched_collectives", a->matched_groups);
	jw_uint(&w, "matched_by_seq", a->matched_by_seq);
	jw_uint(&w, "unmatched_calls", a->unmatched_calls);
	jw_uint(&w, "size_mismatches", a->size_mismatch);
	jw_bool(&w, "clocks_aligned", a->clocks_aligned);
	if (xr)
		jw_null(&w, "no_cross_rank_reason");
	else
		jw_str(&w, "no_cross_rank_reason", a->no_cross_rank_why ? a->no_cross_rank_why : "no collective could be matched across ranks");
	jw_num(&w, "wait_share", xr ? wait_share(a) : NAN, 6);
	if (xr) {
		jw_ms(&w, "waiting_caused_ms", a->caused_ns);
		jw_ms(&w, "skew_mean_ms", a->skew_mean_ns);
		jw_ms(&w, "skew_p50_ms", a->skew_p50_ns);
		jw_ms(&w, "skew_max_ms", a->skew_max_ns);
	} else {
		jw_null(&w, "waiting_caused_ms");
		jw_null(&w, "skew_mean_ms");
		jw_null(&w, "skew_p50_ms");
		jw_null(&w, "skew_max_ms");
	}
	jw_obj(&w, "clock");
	jw_str(&w, "method", a->clock_method ? a->clock_method : "none");
	jw_int(&w, "reference_rank", a->n ? a->r[0].rank : -1);
	jw_uint(&w, "samples", a->clock_samples);
	jw_ms(&w, "spread_ms", a->clock_spread_ns);
	jw_ms(&w, "spread_p50_ms", a->clock_spread_p50_ns);
	jw_arr(&w, "offsets");
	for (size_t i = 0; i < a->n; i++) {
		jw_obj(&w, NULL);
		jw_int(&w, "rank", a->r[i].rank);
		jw_int(&w, "domain", a->r[i].clock_domain);
		jw_num(&w, "offset_ms", (double)a->r[i].clock_offset_ns / 1e6, 6);
		jw_num(&w, "drift_ppm", a->r[i].clock_drift * 1e6, 4);
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	jw_obj_end(&w);
	jw_arr(&w, "steps");
	for (size_t k = 0; xr && k < a->nxsteps; k++) {
		const struct xstep *x = &a->xsteps[k];
		jw_obj(&w, NULL);
		if (x->number == INT64_MIN)
			jw_null(&w, "step");
		else
			jw_int(&w, "step", x->number);
		if (x->straggler >= 0)
			jw_int(&w, "straggler", x->straggler);
		else
			jw_null(&w, "straggler");
		jw_ms(&w, "straggler_caused_ms", x->caused_ns);
		jw_ms(&w, "caused_ms", x->total_caused_ns);
		jw_obj(&w, "caused_ms_by_rank"); /* the ranks that caused any */
		for (size_t i = 0; i < a->n; i++) {
			char key[32];
			if (x->by_rank[i] <= 0)
				continue;
			snprintf(key, sizeof(key), "%d", a->r[i].rank);
			jw_ms(&w, key, x->by_rank[i]);
		}
		jw_obj_end(&w);
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	jw_obj(&w, "figures");
	for (size_t k = 0; k < NFIGURES && a->n; k++) {
		int64_t mn2 = INT64_MAX, mx = INT64_MIN;
		int rmx = -1, rmn = -1;
		double sum = 0;
		for (size_t i = 0; i < a->n; i++) {
			int64_t v = fig_value(&FIGURES[k], &a->r[i].total);
			sum += (double)v;
			if (v < mn2) { mn2 = v; rmn = a->r[i].rank; }
			if (v > mx) { mx = v; rmx = a->r[i].rank; }
		}
		jw_obj(&w, FIGURES[k].key);
		jw_num(&w, "mean", sum / (double)a->n / 1e6, 6);
		jw_ms(&w, "min", mn2);
		jw_int(&w, "min_rank", rmn);
		jw_ms(&w, "max", mx);
		jw_int(&w, "max_rank", rmx);
		jw_obj_end(&w);
	}
	jw_obj_end(&w);
	whatif_write_json(&w, a, a->whatif);
	jw_obj_end(&w);
	jw_obj_end(&w);
}

enum aorta_status analysis_save_json(const struct analysis *a, const char *path, struct aorta_error *e)
{
	struct outfile o;
	enum aorta_status s = out_open(&o, path, e);
	if (s)
		return s;
	analysis_write_json(o.f, a);
	return out_commit(&o, e);
}

/* ---- CSV ------------------------------------------------------------------- */

static void csv_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* ",value", empty when not a number (n/a) */
static void csv_num(FILE *f, double v, int decimals)
{
	fputc(',', f);
	if (isfinite(v))
		fprintf(f, "%.*f", decimals, v);
}

static enum aorta_status csv_open(struct outfile *o, const char *dir, const char *name,
				  struct aorta_error *e)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return out_open(o, path, e);
}

enum aorta_status analysis_save_csv(const struct analysis *a, const char *dir, struct aorta_error *e)
{
	struct outfile o;
	enum aorta_status s;

	if (mkdir(dir, 0777) != 0 && errno != EEXIST)
		return aorta_fail(e, AORTA_EINTERNAL, dir, 0, -1, "cannot create directory: %s", strerror(errno));

	/* ranks.csv and steps.csv: one row per rank / per step, a column per figure */
	for (int which = 0; which < 2; which++) {
		if ((s = csv_open(&o, dir, which ? "steps.csv" : "ranks.csv", e)))
			return s;
		fprintf(o.f, which ? "rank,step,start_ns,end_ns" : "rank,world_size,device,format,path");
		for (size_t k = 0; k < NFIGURES; k++)
			fprintf(o.f, ",%s", FIGURES[k].key);
		fprintf(o.f, which ? ",host_bound\n" : ",wait_ms,transfer_ms,times_last,caused_ms,clock_offset_ms\n");
		for (size_t i = 0; i < a->n; i++) {
			const struct rank_result *r = &a->r[i];
			if (!which) {
				fprintf(o.f, "%d,%d,%d,%s,", r->rank, r->world_size, r->device, r->format);
				csv_str(o.f, r->path);
				for (size_t k = 0; k < NFIGURES; k++) {
					fputc(',', o.f);
					fprint_ms(o.f, fig_value(&FIGURES[k], &r->total));
				}
				if (a->clocks_aligned) {
					fputc(',', o.f);
					fprint_ms(o.f, r->wait_ns);
					fputc(',', o.f);
					fprint_ms(o.f, r->transfer_ns);
					fprintf(o.f, ",%llu,", (unsigned long long)r->times_last);
					fprint_ms(o.f, r->caused_ns);
					fputc(',', o.f);
				} else {
					fputs(",,,,,", o.f); /* no shared clock: no cross-rank figure */
				}
				fprint_ms(o.f, r->clock_offset_ns);
				fputc('\n', o.f);
				continue;
			}
			for (size_t j = 0; j < r->nsteps; j++) {
				const struct step_result *st = &r->steps[j];
				fprintf(o.f, "%d,%lld,%lld,%lld", r->rank, (long long)st->number,
					(long long)st->start_ns, (long long)st->end_ns);
				for (size_t k = 0; k < NFIGURES; k++) {
					fputc(',', o.f);
					fprint_ms(o.f, fig_value(&FIGURES[k], &st->f));
				}
				fprintf(o.f, ",%d\n", st->host_bound);
			}
		}
		if ((s = out_commit(&o, e)))
			return s;
	}

	if ((s = csv_open(&o, dir, "streams.csv", e)))
		return s;
	fprintf(o.f, "rank,stream,busy_ms,utilization,spans\n");
	for (size_t i = 0; i < a->n; i++)
		for (size_t k = 0; k < a->r[i].nstreams; k++) {
			const struct stream_row *sr = &a->r[i].streams[k];
			fprintf(o.f, "%d,%d,", a->r[i].rank, sr->stream);
			fprint_ms(o.f, sr->busy_ns);
			fprintf(o.f, ",%.6f,%llu\n", a->r[i].total.window_ns ? (double)sr->busy_ns / (double)a->r[i].total.window_ns : 0.0,
				(unsigned long long)sr->spans);
		}
	if ((s = out_commit(&o, e)))
		return s;

	if ((s = csv_open(&o, dir, "collectives.csv", e)))
		return s;
	fprintf(o.f, "rank,type,process_group,bytes,group_size,count,total_ms,exposed_ms,wait_ms,transfer_ms,"
		     "algbw_gbps,busbw_gbps,matched,wait_share,algbw_kernel_gbps,busbw_kernel_gbps\n");
	for (size_t i = 0; i < a->n; i++)
		for (size_t k = 0; k < a->r[i].ncolls; k++) {
			const struct coll_row *c = &a->r[i].colls[k];
			fprintf(o.f, "%d,%s,", a->r[i].rank, coll_type_name((enum coll_type)c->type));
			csv_str(o.f, c->pg);
			fprintf(o.f, ",%llu,%d,%llu,", (unsigned long long)c->bytes, c->group_size,
				(unsigned long long)c->count);
			fprint_ms(o.f, c->total_ns);
			fputc(',', o.f);
			fprint_ms(o.f, c->exposed_ns);
			if (a->clocks_aligned) {
				fputc(',', o.f);
				fprint_ms(o.f, c->wait_ns);
				fputc(',', o.f);
				fprint_ms(o.f, c->transfer_ns);
			} else {
				fputs(",,", o.f);
			}
			csv_num(o.f, c->algbw_gbps, 4);
			csv_num(o.f, c->busbw_gbps, 4);
			fprintf(o.f, ",%llu", (unsigned long long)c->matched);
			csv_num(o.f, c->wait_share, 6);
			csv_num(o.f, c->algbw_kernel_gbps, 4);
			csv_num(o.f, c->busbw_kernel_gbps, 4);
			fputc('\n', o.f);
		}
	if ((s = out_commit(&o, e)))
		return s;

	if ((s = csv_open(&o, dir, "kernels.csv", e)))
		return s;
	fprintf(o.f, "rank,name,kind,count,total_ms,min_ms,max_ms\n");
	for (size_t i = 0; i < a->n; i++)
		for (size_t k = 0; k < a->r[i].nkernels; k++) {
			const struct kernel_row *kr = &a->r[i].kernels[k];
			fprintf(o.f, "%d,", a->r[i].rank);
			csv_str(o.f, kr->name);
			fprintf(o.f, ",%s,%llu,", kind_name((enum span_kind)kr->kind), (unsigned long long)kr->count);
			fprint_ms(o.f, kr->total_ns);
			fputc(',', o.f);
			fprint_ms(o.f, kr->min_ns);
			fputc(',', o.f);
			fprint_ms(o.f, kr->max_ns);
			fputc('\n', o.f);
		}
	return out_commit(&o, e);
}

/* ---- Chrome trace ---------------------------------------------------------- */

/* Microseconds with 3 decimals, exact for integer ns. */
static void fprint_us(FILE *f, int64_t ns)
{
	int neg = ns < 0;
	uint64_t a = neg ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	fprintf(f, "%s%llu.%03llu", neg ? "-" : "", (unsigned long long)(a / 1000),
		(unsigned long long)(a % 1000));
}

/* One complete event; kind (may be NULL) goes into args, so the trace keeps
 * Kineto's categories (kernel, gpu_memcpy, ...) and aorta's classification. */
static void ev(FILE *f, int *first, int pid, long tid, const char *name, const char *cat,
	       const char *kind, int64_t s, int64_t e)
{
	fputs(*first ? "\n" : ",\n", f);
	*first = 0;
	fputs("{\"ph\":\"X\",\"name\":", f);
	json_escape(f, name);
	fprintf(f, ",\"cat\":\"%s\",\"pid\":%d,\"tid\":%ld,\"ts\":", cat, pid, tid);
	fprint_us(f, s);
	fputs(",\"dur\":", f);
	fprint_us(f, e - s);
	if (kind)
		fprintf(f, ",\"args\":{\"device\":%d,\"stream\":%ld,\"aorta_kind\":\"%s\"}", pid, tid, kind);
	fputc('}', f);
}

static void meta(FILE *f, int *first, int pid, long tid, const char *what, const char *name)
{
	fputs(*first ? "\n" : ",\n", f);
	*first = 0;
	fprintf(f, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%d,\"tid\":%ld,\"args\":{\"name\":", what, pid, tid);
	json_escape(f, name);
	fputs("}}", f);
}

#define TID_EXPOSED 1000001L
#define TID_WAIT 1000002L
#define TID_STEPS 1000003L

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

/* All ranks in one trace on the aligned clock (overlap/join.c): a process
 * per rank (pid = rank), a thread per stream, and the tracks aorta adds
 * (steps, exposed communication, waiting for peers).  Times are on the
 * reference rank's (r[0]) clock, so they stay comparable with its trace. */
enum aorta_status analysis_save_trace(const struct analysis *a, const char *path, struct aorta_error *e)
{
	struct outfile o;
	enum aorta_status s = out_open(&o, path, e);
	int first = 1;

	if (s)
		return s;
	fprintf(o.f, "{\"schemaVersion\":1,\"displayTimeUnit\":\"ms\",\"otherData\":{\"generator\":\"aorta "
		AORTA_VERSION "\",\"schema\":\"aorta.trace/1\",\"clock\":\"%s\",\"clock_spread_ns\":%lld},"
		"\"traceEvents\":[", a->clock_method ? a->clock_method : "none", (long long)a->clock_spread_ns);
	for (size_t i = 0; i < a->n; i++) {
		const struct rank_result *r = &a->r[i];
		const struct trace *t = r->t;
		char buf[256];
		int pid = r->rank;
		snprintf(buf, sizeof(buf), "rank %d%s", r->rank, r->rank == a->late_rank ? " (late rank)" : "");
		meta(o.f, &first, pid, 0, "process_name", buf);
		fputs(",\n", o.f);
		fprintf(o.f, "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%d,\"tid\":0,\"args\":{\"sort_index\":%d}}",
			pid, r->rank);
		meta(o.f, &first, pid, TID_EXPOSED, "thread_name", "exposed communication");
		meta(o.f, &first, pid, TID_WAIT, "thread_name", "waiting for peers");
		meta(o.f, &first, pid, TID_STEPS, "thread_name", "steps (GPU windows)");
		if (t && t->n) {
			int32_t *st = xmalloc(t->n * sizeof(*st));
			memcpy(st, t->stream, t->n * sizeof(*st));
			qsort(st, t->n, sizeof(*st), cmp_i32);
			for (size_t k = 0; k < t->n; k++)
				if (!k || st[k] != st[k - 1]) {
					snprintf(buf, sizeof(buf), "stream %d", st[k]);
					meta(o.f, &first, pid, st[k], "thread_name", buf);
				}
			free(st);
		}
		for (size_t j = 0; j < r->nsteps; j++) {
			snprintf(buf, sizeof(buf), "step %lld%s", (long long)r->steps[j].number,
				 r->steps[j].host_bound ? " (host-bound)" : "");
			ev(o.f, &first, pid, TID_STEPS, buf, "aorta_step", NULL,
			   analysis_aligned(r, r->steps[j].start_ns), analysis_aligned(r, r->steps[j].end_ns));
		}
		for (size_t k = 0; t && k < t->n; k++) {
			enum span_class c = kind_class((enum span_kind)t->kind[k]);
			ev(o.f, &first, pid, t->stream[k], strtab_get(&t->names, t->name[k]),
			   c == C_MEMCPY ? "gpu_memcpy" : c == C_MEMSET ? "gpu_memset" : "kernel",
			   kind_name((enum span_kind)t->kind[k]), analysis_aligned(r, t->start_ns[k]),
			   analysis_aligned(r, t->end_ns[k]));
		}
		for (size_t k = 0; k < r->exposed_set.n; k++)
			ev(o.f, &first, pid, TID_EXPOSED, "exposed comm", "aorta_exposed", NULL,
			   analysis_aligned(r, r->exposed_set.s[k]), analysis_aligned(r, r->exposed_set.e[k]));
		/* the wait set is on the aligned clock already (join.c) */
		for (size_t k = 0; k < r->wait_set.n; k++)
			ev(o.f, &first, pid, TID_WAIT, "waiting", "aorta_wait", NULL, r->wait_set.s[k],
			   r->wait_set.e[k]);
	}
	fputs("\n]}\n", o.f);
	return out_commit(&o, e);
}
