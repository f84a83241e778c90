/*
 * diagnosis.c - the main finding of an analysis (diagnosis.h).
 *
 * Order of precedence: when matched collectives show that most of the
 * collective time was waiting (>= 50 %), the finding is about the waiting
 * (and the rank that caused it); else when exposed communication is at
 * least 10 % of the step, it is exposure; else when at least half the kept
 * steps are host-bound, the host; else the communication is overlapped.
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

void analysis_diagnose(const struct analysis *a, struct diagnosis *d)
{
	memset(d, 0, sizeof(*d));
	d->late_rank = -1;
	d->late_share = NAN;
	int skip = a->opts.skip_steps;
	const struct rank_result *late = NULL;

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
			d->host_bound_steps += (size_t)r->steps[k].host_bound;
		}
		if (r->rank == a->late_rank)
			late = r;
	}
	d->has_cross_rank = a->n >= 2 && a->clocks_aligned && a->matched_groups > 0;
	if (!d->has_cross_rank)
		d->why_no_cross_rank = a->n < 2 ? "one rank: nothing to match across ranks"
			: !a->clocks_aligned ? "the ranks' clocks are not shared"
			: "no collective could be matched across ranks";
	if (d->has_cross_rank && late) {
		d->late_rank = late->rank;
		d->late_last = late->times_last;
		d->late_matched = late->matched;
		d->late_share = late->matched ? (double)late->times_last / (double)late->matched : NAN;
		for (size_t k = first_kept(late, skip); k < late->nsteps; k++) {
			d->late_steps++;
			d->late_host_bound_steps += (size_t)late->steps[k].host_bound;
		}
	}

	double wshare = d->wait_ns + d->transfer_ns ? (double)d->wait_ns / (double)(d->wait_ns + d->transfer_ns) : NAN;
	double eshare = d->step_ns ? (double)d->exposed_ns / (double)d->step_ns : NAN;
	char *h = d->headline;
	size_t hn = sizeof(d->headline);
	if (d->has_cross_rank && wshare >= 0.5) {
		d->kind = d->late_rank >= 0 ? DIAG_LATE_RANK : DIAG_WAITING;
		if (d->late_rank >= 0) {
			int n = snprintf(h, hn, "rank %d arrived last at %llu of %llu matched collectives (%.0f%%)",
					 d->late_rank, (unsigned long long)d->late_last,
					 (unsigned long long)d->late_matched, 100.0 * d->late_share);
			if (d->late_steps && n > 0 && (size_t)n < hn)
				n += snprintf(h + n, hn - (size_t)n, " and was host-bound in %zu of %zu steps",
					      d->late_host_bound_steps, d->late_steps);
			if (n > 0 && (size_t)n < hn)
				snprintf(h + n, hn - (size_t)n, "; %.1f%% of all ranks' collective time was waiting "
					 "for a late peer, %.1f%% was transfer", 100.0 * wshare, 100.0 * (1.0 - wshare));
		} else {
			snprintf(h, hn, "%.1f%% of all ranks' collective time was waiting for late peers, "
				 "%.1f%% was transfer; no single rank caused most of the waiting",
				 100.0 * wshare, 100.0 * (1.0 - wshare));
		}
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
}
