/*
 * diagnosis.c - the main finding of an analysis (diagnosis.h).
 *
 * Order of precedence: when matched collectives show that most of the
 * collective time was waiting (>= 50 %), the finding is about the waiting
 * and the rank that caused it (join.c: the late rank caused >= 60 % of the
 * waiting; else no rank is named); else when exposed communication is at
 * least 10 % of the step, it is exposure; else when at least half the kept
 * steps are host-bound, the host; else the communication is overlapped.
 *
 * Why the late rank was late: where it caused waiting, its arrival minus
 * the mean arrival of the ranks that waited (its lateness) is compared with
 * how much longer than theirs its GPU waited for the host, and was busy,
 * since the group's previous collective ended (join.c).  The larger share,
 * when it explains at least half of the lateness, is the reason given.
 */
#include "overlap/diagnosis.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *diag_kind_name(enum diag_kind k)
{
	static const char *const n[] = { "none", "late_rank", "waiting", "exposed_comm", "host_bound", "overlapped" };
	return (unsigned)k < sizeof(n) / sizeof(n[0]) ? n[k] : "none";
}

static size_t first_kept(const struct rank_result *r, int skip)
{
	size_t k = skip > 0 ? (size_t)skip : 0;
	return k < r->nsteps ? k : r->nsteps;
}

/* Appends to h (size hn, n used so far); returns the new length. */
static size_t add(char *h, size_t hn, size_t n, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#include <stdarg.h>
static size_t add(char *h, size_t hn, size_t n, const char *fmt, ...)
{
	if (n >= hn)
		return n;
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(h + n, hn - n, fmt, ap);
	va_end(ap);
	return k < 0 ? n : n + (size_t)k;
}

/* The steps (numbers) where rank index ri caused waiting, as "2, 4, 5". */
static size_t steps_of(const struct analysis *a, size_t ri, char *h, size_t hn, size_t n)
{
	size_t shown = 0, more = 0;
	for (size_t k = 0; k < a->nxsteps; k++) {
		const struct xstep *x = &a->xsteps[k];
		if (x->by_rank[ri] <= a->clock_spread_ns || x->by_rank[ri] <= 0)
			continue;
		if (shown == 8) {
			more++;
			continue;
		}
		if (x->number == INT64_MIN)
			n = add(h, hn, n, "%soutside steps", shown ? ", " : "");
		else
			n = add(h, hn, n, "%s%lld", shown ? ", " : "", (long long)x->number);
		shown++;
	}
	if (more)
		n = add(h, hn, n, " and %zu more", more);
	return n;
}

/* The what-if leads when a fix is worth something (its verdict starts
 * "fixing ..."): the gain, not the waiting caused, is the first finding. */
static void lead_with_gain(const struct analysis *a, struct diagnosis *d)
{
	const struct whatif *w = a->whatif;
	if (!w || !w->ok || !w->verdict || strncmp(w->verdict, "fixing ", 7) != 0)
		return;
	char old[sizeof(d->headline)];
	memcpy(old, d->headline, sizeof(old));
	int n = snprintf(d->headline, sizeof(d->headline), "%s. Then: ", w->verdict);
	if (n > 0 && (size_t)n < sizeof(d->headline))
		snprintf(d->headline + n, sizeof(d->headline) - (size_t)n, "%.*s", (int)(sizeof(d->headline) - (size_t)n - 1), old);
}

/* The join names the rank that made the others wait; the what-if says
 * what fixing it is worth.  When the two part ways (the waiting was hidden
 * under compute, fell into time the step spends anyway, or the
 * next-slowest rank takes over), the headline says so rather than leave
 * a late rank that is not worth fixing unqualified.  A late rank the
 * what-if did not replay had too little excess over its peers to gain
 * more than the material threshold (whatif.c rank_candidates). */
static void reconcile_late(const struct analysis *a, struct diagnosis *d)
{
	const struct whatif *w = a->whatif;
	if (a->late_rank < 0 || !d->has_cross_rank || !w || !w->ok || !(w->replay_step_ms > 0))
		return;
	if (w->verdict && !strncmp(w->verdict, "not conclusive", 14))
		return; /* delays nothing explains: the what-if cannot weigh the fix */
	double lim = whatif_material_ms(w);
	/* no fix at all is material (on the complete steps: whatif.c verdict) */
	int none = !w->verdict || strncmp(w->verdict, "fixing ", 7) != 0;
	const struct whatif_fix *f = NULL;
	for (size_t k = 0; k < w->nby_rank; k++)
		if (w->by_rank[k].rank == a->late_rank)
			f = &w->by_rank[k];
	if (!none && f && f->gain_ms > lim)
		return;
	size_t n = strlen(d->headline);
	char *h = d->headline;
	size_t hn = sizeof(d->headline);
	if (none)
		n = add(h, hn, n, "; rank %d caused %.1f%% of the waiting, yet the what-if finds no fix worth 1 %% of a "
			"complete step, fixing it included", a->late_rank, 100.0 * a->late_share);
	else if (f)
		n = add(h, hn, n, "; rank %d caused %.1f%% of the waiting, yet fixing it would make the step only "
			"%.1f %% faster (%.3f ms)", a->late_rank, 100.0 * a->late_share, f->gain_pct < 0 ? 0.0 : f->gain_pct,
			f->gain_ms < 0 ? 0.0 : f->gain_ms);
	else
		n = add(h, hn, n, "; rank %d caused %.1f%% of the waiting, yet fixing it would make the step at most "
			"%.3f ms faster (its work exceeds its peers' by no more)", a->late_rank, 100.0 * a->late_share, lim);
	add(h, hn, n, ": the waiting it caused is absorbed elsewhere in the step (hidden under compute, in "
	    "idle time the step spends anyway, or taken over by the next-slowest rank)");
}

/* The sums over the ranks' kept steps (the whole trace where a rank
 * keeps none), the cross-rank figures and the late rank's; returns the
 * late rank's index in a->r (a->n: none). */
static size_t gather(const struct analysis *a, struct diagnosis *d)
{
	int skip = a->opts.skip_steps;
	const struct rank_result *late = NULL;
	size_t late_i = a->n;
	for (size_t i = 0; i < a->n; i++) {
		const struct rank_result *r = &a->r[i];
		d->wait_ns += r->wait_ns;
		d->transfer_ns += r->transfer_ns;
		size_t k0 = first_kept(r, skip);
		if (k0 < r->nsteps) {
			d->comm_ns += r->steps_sum.comm_ns;
			d->exposed_ns += r->steps_sum.exposed_comm_ns;
			d->step_ns += r->steps_sum.window_ns;
		} else {
			d->comm_ns += r->total.comm_ns;
			d->exposed_ns += r->total.exposed_comm_ns;
			d->step_ns += r->total.window_ns;
		}
		for (size_t k = k0; k < r->nsteps; k++) {
			d->steps++;
			d->host_bound_steps += (size_t)step_host_bound(r, k);
		}
		if (r->rank == a->late_rank) {
			late = r;
			late_i = i;
		}
	}
	d->has_cross_rank = a->n >= 2 && a->clocks_aligned && a->matched_groups > 0;
	if (!d->has_cross_rank)
		d->why_no_cross_rank = a->no_cross_rank_why ? a->no_cross_rank_why
			: a->n < 2 ? "one rank: nothing to match across ranks"
			: "no collective could be matched across ranks";
	if (d->has_cross_rank) {
		d->caused_ns = a->caused_ns;
		d->top_rank = a->top_rank;
		d->top_share = a->late_share;
		d->wait_uncertain = analysis_uncertain(a, d->wait_ns, a->matched_groups);
	}
	if (!d->has_cross_rank || !late)
		return a->n;
	d->late_rank = late->rank;
	d->late_last = late->times_last;
	d->late_matched = late->matched;
	d->late_share = a->late_share;
	d->late_caused_ns = late->caused_ns;
	d->late_colls = late->caused_colls;
	d->late_lateness_ns = late->lateness_ns;
	d->late_host_excess_ns = late->caused_host_excess_ns;
	d->late_busy_excess_ns = late->caused_busy_excess_ns;
	for (size_t k = first_kept(late, skip); k < late->nsteps; k++) {
		for (size_t x = 0; x < a->nxsteps; x++)
			if (a->xsteps[x].number == late->steps[k].number &&
			    a->xsteps[x].by_rank[late_i] > a->clock_spread_ns && a->xsteps[x].by_rank[late_i] > 0) {
				d->late_steps++;
				d->late_host_bound_steps += (size_t)step_host_bound(late, k);
			}
	}
	return late_i;
}

/* The headline where the collective time is mostly waiting (wshare): the
 * late rank and why it was late, else that no rank was. */
static void waiting_headline(const struct analysis *a, struct diagnosis *d, size_t late_i, double wshare)
{
	char *h = d->headline;
	size_t hn = sizeof(d->headline), n = 0;
	d->kind = d->late_rank >= 0 ? DIAG_LATE_RANK : DIAG_WAITING;
	if (d->late_rank < 0) {
		n = add(h, hn, n, "%.1f%% of all ranks' collective time was waiting for late peers, "
			"%.1f%% was transfer", 100.0 * wshare, 100.0 * (1.0 - wshare));
		if (d->top_rank >= 0 && d->top_share >= LATE_SHARE_MIN) /* a majority, but not material */
			add(h, hn, n, "; no late rank: the waiting caused was %.2f%% of the ranks' summed time "
				"(under %.0f%%; the most: rank %d, %.1f%% of it)", 100.0 * analysis_caused_time_share(a),
				100.0 * LATE_MIN_TIME_SHARE, d->top_rank, 100.0 * d->top_share);
		else if (d->top_rank >= 0)
			add(h, hn, n, "; no single rank caused a clear majority (60%%) of the waiting (the most: "
				"rank %d, %.1f%%)", d->top_rank, 100.0 * d->top_share);
		else
			add(h, hn, n, "; no single rank caused a clear majority (60%%) of the waiting");
		return;
	}
	n = add(h, hn, n, "rank %d was late: it caused %.1f%% of the waiting (%.3f ms, in %llu "
		"collectives; steps ", d->late_rank, 100.0 * d->late_share, (double)d->late_caused_ns / 1e6,
		(unsigned long long)d->late_colls);
	n = steps_of(a, late_i, h, hn, n);
	n = add(h, hn, n, ")");
	double L = (double)d->late_lateness_ns, H = (double)d->late_host_excess_ns, B = (double)d->late_busy_excess_ns;
	if (L > 0 && H >= 0.5 * L && H >= B) {
		n = add(h, hn, n, " because its host was busy: before the collectives it delayed, its "
			"GPU waited %.3f ms longer than its peers' for the host to launch work", H / 1e6);
		if (d->late_steps)
			n = add(h, hn, n, " (host-bound in %zu of those %zu steps)", d->late_host_bound_steps,
				d->late_steps);
	} else if (L > 0 && B >= 0.5 * L) {
		n = add(h, hn, n, " because its GPU had more to do: before the collectives it delayed, "
			"it was busy %.3f ms longer than its peers", B / 1e6);
	} else if (L > 0) {
		n = add(h, hn, n, "; it arrived %.3f ms later than its peers in all, which neither its "
			"host (%.3f ms more host wait) nor its GPU work (%.3f ms more busy) explains",
			L / 1e6, H / 1e6, B / 1e6);
	}
	add(h, hn, n, "; %.1f%% of all ranks' collective time was waiting, %.1f%% was transfer",
	    100.0 * wshare, 100.0 * (1.0 - wshare));
}

void analysis_diagnose(const struct analysis *a, struct diagnosis *d)
{
	memset(d, 0, sizeof(*d));
	d->late_rank = d->top_rank = -1;
	d->late_share = d->top_share = NAN;
	size_t late_i = gather(a, d);
	double wshare = d->wait_ns + d->transfer_ns ? (double)d->wait_ns / (double)(d->wait_ns + d->transfer_ns) : NAN;
	double eshare = d->step_ns ? (double)d->exposed_ns / (double)d->step_ns : NAN;
	char *h = d->headline;
	size_t hn = sizeof(d->headline);
	if (d->has_cross_rank && !d->wait_uncertain && wshare >= 0.5) {
		waiting_headline(a, d, late_i, wshare);
	} else if (eshare >= 0.10) {
		d->kind = DIAG_EXPOSED_COMM;
		snprintf(h, hn, "exposed communication is %.1f%% of the step (%.3f ms of %.3f ms of "
			 "communication is not under compute)", 100.0 * eshare, (double)d->exposed_ns / 1e6,
			 (double)d->comm_ns / 1e6);
	} else if (d->steps && 2 * d->host_bound_steps >= d->steps) {
		d->kind = DIAG_HOST_BOUND;
		snprintf(h, hn, "%zu of %zu steps are host-bound (the GPU waits for the host to launch work)",
			 d->host_bound_steps, d->steps);
	} else if (d->comm_ns > 0) {
		d->kind = DIAG_OVERLAPPED;
		snprintf(h, hn, "communication is mostly hidden under compute (exposed %.1f%% of the step)",
			 100.0 * (isnan(eshare) ? 0 : eshare));
	} else {
		d->kind = DIAG_NONE;
		snprintf(h, hn, "no communication in the trace");
	}
	lead_with_gain(a, d);
	reconcile_late(a, d);
}
