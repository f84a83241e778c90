/*
 * diagnosis.h - the few sentences a performance engineer wants first, as
 * data: why the step is slower than compute alone would explain.
 *
 * One function computes it from a finished struct analysis, and every
 * command shows this one result: `aorta analyze` prints it, `aorta report`
 * puts it in its verdict and index.html, `aorta compare` names it for each
 * run and says how it changed.  No command words a diagnosis of its own.
 *
 * What it weighs, over every rank (the skip_steps warm-up left out of the
 * step counts):
 *  - cross-rank: waiting for late peers vs transfer inside the collectives,
 *    and the rank that made the others wait (only when clocks are shared
 *    or aligned; otherwise has_cross_rank is 0 and why_no_cross_rank says
 *    why, and no late rank is named);
 *  - exposed communication (comm not under compute) against the step;
 *  - host-bound steps (host wait >= host_bound_pct of the step), of the
 *    late rank and of all ranks.
 * kind is the main finding; headline is the sentence analyze prints.
 * Thread-safe; d is filled completely, nothing to free.
 */
#ifndef AORTA_DIAGNOSIS_H
#define AORTA_DIAGNOSIS_H

#include <stddef.h>
#include <stdint.h>

#include "overlap/analysis.h"

enum diag_kind {
	DIAG_NONE = 0,        /* nothing to say (no steps, no communication) */
	DIAG_LATE_RANK,       /* most collective time is waiting for one late rank */
	DIAG_WAITING,         /* most collective time is waiting, no single rank to blame */
	DIAG_EXPOSED_COMM,    /* communication not hidden under compute */
	DIAG_HOST_BOUND,      /* the GPU waits for the host */
	DIAG_OVERLAPPED,      /* communication mostly hidden: compute-bound */
};

struct diagnosis {
	enum diag_kind kind;
	int has_cross_rank;            /* wait/transfer/late-rank figures exist */
	const char *why_no_cross_rank; /* static string when !has_cross_rank, else NULL */
	int late_rank;                 /* -1 when no rank is named */
	double late_share;             /* share of all waiting the late rank caused, NaN if n/a */
	uint64_t late_last, late_matched; /* collectives the late rank arrived last at / matched */
	size_t late_host_bound_steps, late_steps; /* of the kept steps where it caused waiting */
	int top_rank;                  /* rank that caused the most waiting, named or not, -1 */
	double top_share;              /* its share, NaN if n/a */
	int64_t caused_ns;             /* all waiting caused (= waited, before the kernel-time cap) */
	int64_t late_caused_ns;        /* waiting the late rank caused */
	uint64_t late_colls;           /* collectives where it caused more than the clock spread */
	/* where it caused waiting: its arrival minus the mean arrival of those
	 * who waited, and of that how much longer than theirs its GPU waited for
	 * its host / was busy since the group's previous collective */
	int64_t late_lateness_ns, late_host_excess_ns, late_busy_excess_ns;
	int wait_uncertain;            /* the waiting is within the clock uncertainty */
	int64_t wait_ns, transfer_ns;  /* all ranks, matched collectives */
	int64_t comm_ns, exposed_ns, step_ns; /* all ranks, kept steps (whole trace if none) */
	size_t host_bound_steps, steps;       /* all ranks, kept steps */
	char headline[1024];           /* one or two sentences, no trailing newline */
};

void analysis_diagnose(const struct analysis *a, struct diagnosis *d);
const char *diag_kind_name(enum diag_kind k); /* "late_rank", ... for JSON */

#endif
