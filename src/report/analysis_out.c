/*
 * analysis_out.c - terminal and Chrome-trace views of an analysis (its JSON
 * and CSV tables: analysis_io/json_write.c, csv_write.c).
 *
 * All times are integer nanoseconds inside and milliseconds with six
 * decimals (exact) in files; the terminal rounds to 3 decimals and always
 * prints units.
 */
#include "report/analysis_out.h"
#include "flightrec/fr.h"
#include "report/answer.h"
#include "report/whatif_out.h"
#include "overlap/figures.h"
#include "overlap/diagnosis.h"
#include "base/output.h"
#include "base/stats.h"

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
	return pctl_sorted_i64(v, n, q) / 1e6;
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
	if (a->p2p_peer_unknown)
		fprintf(f, "   %llu send/recv calls: peer unknown (the trace names no peer and their group has "
			"more than two ranks), left unmatched rather than paired by order (docs/formats.md, "
			"point to point)\n", (unsigned long long)a->p2p_peer_unknown);
	if (a->unknown_type_calls)
		fprintf(f, "   %llu communication calls of unknown collective type (no kernel name, trace metadata or "
			"launching host op names it): communication all the same; %llu matched across ranks by order "
			"within their stream and group (only where every rank has as many)\n",
			(unsigned long long)a->unknown_type_calls, (unsigned long long)a->unknown_type_matched);
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
		fprintf(f, "   late rank (caused >= 60%% of the waiting, %.2f%% of the ranks' summed time): %d (%.1f%%)\n",
			100.0 * analysis_caused_time_share(a), a->late_rank, 100.0 * a->late_share);
	else if (a->top_rank >= 0 && analysis_uncertain(a, a->caused_ns, a->matched_groups))
		fprintf(f, "   late rank: none (all waiting caused, %.3f ms, is within the clock uncertainty)\n",
			ms(a->caused_ns));
	else if (a->top_rank >= 0 && a->late_share >= LATE_SHARE_MIN)
		fprintf(f, "   no late rank: the waiting caused was %.2f%% of the ranks' summed time (under %.0f%%, not "
			   "material; the most: rank %d, %.1f%% of it)\n", 100.0 * analysis_caused_time_share(a),
			100.0 * LATE_MIN_TIME_SHARE, a->top_rank, 100.0 * a->late_share);
	else if (a->top_rank >= 0)
		fprintf(f, "   late rank: none (no rank caused 60%% of the waiting; the most: rank %d, %.1f%%)\n",
			a->top_rank, 100.0 * a->late_share);
	else if (a->incomplete_groups)
		fprintf(f, "   late rank: none (no rank made another wait in a complete collective; %llu "
			   "matched on part of their group are not charged)\n",
			(unsigned long long)a->incomplete_groups);
	else
		fprintf(f, "   late rank: none (no rank made another wait)\n");
}

/* Rank i's figures: whole trace and over the kept steps, shares,
 * host-bound steps, its cross-rank waiting and peers, HTA's overlap. */
static void print_rank_figures(FILE *f, const struct analysis *a, size_t i)
{
	const struct rank_result *r = &a->r[i];
	int skip = a->opts.skip_steps;
	int have_steps = r->nsteps > (size_t)(skip > 0 ? skip : 0);
	fprintf(f, "   %-20s %14s", "figure", "whole trace");
	if (have_steps)
		fprintf(f, " %12s %12s %12s %12s", "step mean", "step p50", "step min", "step max");
	fputc('\n', f);
	for (size_t k = 0; k < NFIGURES; k++) {
		const struct figure *fg = &FIGURES[k];
		fprintf(f, "   %-20s %11.3f ms", k == 0 ? "span / step" : fg->label, ms(fig_value(fg, &r->total)));
		if (have_steps) {
			struct stat4 st = steps_stat(r, skip, fg->off);
			fprintf(f, " %9.3f ms %9.3f ms %9.3f ms %9.3f ms", st.mean / 1e6, st.p50 / 1e6, st.min / 1e6,
				st.max / 1e6);
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
		hb += (size_t)step_host_bound(r, j);
	size_t kept = analysis_kept_steps(r, a->opts.skip_steps);
	if (kept)
		fprintf(f, "   host-bound steps (host wait >= %.0f%% of the step): %zu of %zu%s\n",
			a->opts.host_bound_pct, hb, kept, kept < r->nsteps ? " kept" : "");
	else if (r->nsteps)
		fprintf(f, "   --skip-steps %d leaves none of the %zu steps: no step figures\n", a->opts.skip_steps,
			r->nsteps);
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
}

/* Rank r's tables: streams, collectives, top kernels, and with per_step
 * a row per step. */
static void print_rank_tables(FILE *f, const struct analysis *a, const struct rank_result *r, int per_step)
{
	if (r->nstreams) {
		fprintf(f, "   %-10s %12s %8s %10s\n", "stream", "busy", "util", "spans");
		for (size_t k = 0; k < r->nstreams && k < MAX_ROWS; k++) {
			fprintf(f, "   %-10d %9.3f ms ", r->streams[k].stream, ms(r->streams[k].busy_ns));
			print_pct(f, pct(r->streams[k].busy_ns, r->total.window_ns));
			fprintf(f, " %10llu\n", (unsigned long long)r->streams[k].spans);
		}
		if (r->nstreams > MAX_ROWS)
			fprintf(f, "   ... %zu more streams (all of them in --json and --csv)\n", r->nstreams - MAX_ROWS);
	}
	if (r->ncolls) {
		/* algbw/busbw from transfer time (nccl-tests); kernel busbw over the
		 * whole kernel time, waiting included (docs/metrics.md) */
		fprintf(f, "   %-15s %-6s %12s %7s %12s %12s %12s %12s %7s %11s %11s %11s\n", "collective", "pg",
			"bytes", "count", "total", "exposed", "wait", "transfer", "wait %", "algbw", "busbw",
			"kern. busbw");
		for (size_t k = 0; k < r->ncolls && k < MAX_ROWS; k++) {
			const struct coll_row *c = &r->colls[k];
			fprintf(f, "   %-15s %-6.6s %12llu %7llu %9.3f ms %9.3f ms ",
				coll_type_name((enum coll_type)c->type), c->pg[0] ? c->pg : "-",
				(unsigned long long)c->bytes, (unsigned long long)c->count, ms(c->total_ns),
				ms(c->exposed_ns));
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
			fprintf(f, "   %10.3f ms %7llu x  %-9s %.90s\n", ms(kr->total_ns), (unsigned long long)kr->count,
				kind_name((enum span_kind)kr->kind), kr->name);
		}
	}
	if (per_step && r->nsteps) {
		fprintf(f, "   %-8s %10s %10s %10s %10s %10s %10s %s\n", "step", "window", "compute", "comm", "exposed",
			"idle", "host wait", "");
		for (size_t j = 0; j < r->nsteps; j++) {
			struct step_full s;
			step_get(r, j, &s);
			fprintf(f, "   %-8lld %7.3f ms %7.3f ms %7.3f ms %7.3f ms %7.3f ms %7.3f ms %s\n",
				(long long)s.s.number, ms(s.v.f.window_ns), ms(s.v.f.compute_ns), ms(s.v.f.comm_ns),
				ms(s.v.f.exposed_comm_ns), ms(s.v.f.idle_ns), ms(s.v.f.host_wait_ns),
				s.v.host_bound ? "host-bound" : "");
		}
	}
}

/* Which ranks get a section (shown[i]): all of them, or in a large job
 * the first and the three that caused the most waiting (said); every
 * rank with -v (verbose). */
static void pick_shown(FILE *f, const struct analysis *a, char *shown, int verbose)
{
	if (a->n <= LARGE_JOB || verbose) {
		memset(shown, 1, a->n);
		return;
	}
	size_t *order = ranks_by_caused(a), nshown = 0;
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
}

/* Each figure's mean, min and max over the ranks. */
static void print_across(FILE *f, const struct analysis *a)
{
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
}

void analysis_print(FILE *f, const struct analysis *a, unsigned what)
{
	int per_step = (what & (PRINT_PER_STEP | PRINT_VERBOSE)) != 0;
	unsigned long long dumps = a->fr && a->fr->done ? (unsigned long long)a->fr->res.dumps : 0;
	if (a->n || !dumps)
		fprintf(f, "aorta analyze: %zu rank%s", a->n, a->n == 1 ? "" : "s");
	else
		fprintf(f, "aorta analyze:");
	if (dumps)
		fprintf(f, "%s %llu Flight Recorder dump%s", a->n ? "," : "", dumps, dumps == 1 ? "" : "s");
	fputc('\n', f);
	if (what & PRINT_SUMMARY) {
		struct answer s;
		answer_build(a, &s);
		answer_print(f, &s);
		answer_free(&s);
	}
	if (!(what & (PRINT_DETAIL | PRINT_VERBOSE)))
		return;
	if (a->fr) { /* the hang section first (flightrec/fr_print.c) */
		fputc('\n', f);
		fr_print(f, a->fr);
	}
	if (!a->n && a->fr)
		return;
	fprintf(f, "\n== detail\n");
	char *shown = xcalloc(a->n ? a->n : 1, 1);
	pick_shown(f, a, shown, (what & PRINT_VERBOSE) != 0);
	for (size_t i = 0; i < a->n; i++) {
		const struct rank_result *r = &a->r[i];
		if (!shown[i])
			continue;
		fprintf(f, "\n== rank %d (%s, device %d, %s)\n", r->rank, r->format, r->device, r->path);
		fprintf(f, "   %llu device events", (unsigned long long)r->events);
		if (r->skipped)
			fprintf(f, ", %llu malformed events skipped (first: %s)", (unsigned long long)r->skipped,
				r->skipped_first);
		fprintf(f, ", %zu steps with GPU work\n", r->nsteps);
		if (r->other_device_spans)
			fprintf(f, "   WARNING: %llu device events are on device %d (and maybe others), not device %d: "
				   "a one-process multi-GPU trace; the figures below mix the devices "
				   "(analyse one trace per GPU)\n",
				(unsigned long long)r->other_device_spans, r->other_device, r->device);
		print_rank_figures(f, a, i);
		print_rank_tables(f, a, r, per_step);
	}
	free(shown);
	if (a->n > 1) {
		print_across(f, a);
		print_cross_rank(f, a);
		print_diagnosis(f, a);
		whatif_print(f, a, a->whatif, (what & PRINT_VERBOSE) != 0);
	}
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
				 step_host_bound(r, j) ? " (host-bound)" : "");
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
