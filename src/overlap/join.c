/*
 * join.c - the cross-rank join: which calls of different ranks are one
 * collective, the clock offsets between the ranks, and from both the
 * waiting, its cause and the transfer (docs/metrics.md "Across ranks").
 *
 * Matching.  A rank's collective calls are keyed by (process group, the
 * trace's sequence number) when every call of that group on every rank
 * carries one (Kineto "Seq"), else by (step, process group, type, ordinal
 * among the rank's calls of that type in that group and step).  Calls with
 * one key on two or more ranks are one collective.  A send or recv whose
 * peer the trace names is keyed by (step, source, destination, ordinal of
 * its direction and peer in the step): a send and its recv are one
 * collective of two calls; send/recv calls of unknown peer stay unmatched
 * unless their group has two members (grouping every rank's k-th call is
 * wrong, and two ranks read out of a larger job need not be peers).
 *
 * Clocks.  A blocking collective (all-reduce, all-gather, reduce-scatter,
 * all-to-all) ends on every rank within microseconds, whatever the ranks'
 * arrivals.  The offset of each rank's clock against rank r[0]'s is the
 * median of the differences of their end times over the collectives they
 * share (outlier-resistant); a drift term (Theil-Sen slope over time) is
 * kept when it at least halves the residual.  Ranks that share no blocking
 * collective with r[0] are aligned through a rank already aligned.  The
 * residual spread (p95 over blocking collectives of the range of the
 * aligned end times) is the uncertainty of every wait figure.  Offsets may
 * be supplied instead (--clock-offsets) or left out (--no-clock-align).
 * Traces without a shared clock (aorta JSONL: steps laid end to end) get no
 * cross-rank figure at all.
 *
 * A blocking group whose calls end more than max(20 x the median spread,
 * 0.5 ms, a quarter of its shortest call) apart after alignment is not one
 * collective (with order matching, a call missing on one rank pairs the
 * wrong calls, which end at least a call apart): it is left unmatched
 * (rejected_groups).
 *
 * Waiting.  On the aligned clock, with arrivals (kernel starts) a_1 <= ... <=
 * a_k of one collective: rank i waited min(a_k - a_i, its kernel time), and
 * its transfer is the rest (end_i - a_k).  The collective's transfer, the
 * same for every rank, is last end - a_k; bandwidth (algbw, busbw as
 * nccl-tests defines them) is bytes over it.  The waiting is charged in layers:
 * the rank arriving j-th (j >= 2) caused (j - 1)(a_j - a_{j-1}), the time
 * the j - 1 earlier ranks spent waiting between the previous arrival and
 * its own; the charges add up to the waiting (before the kernel-time cap).
 * The late rank is the one that caused the most waiting, named only when
 * it caused at least 60 % of it and that waiting is material: at least 1 %
 * of the ranks' summed time and beyond the clock uncertainty
 * (analysis_waiting_material).
 */
#include "overlap/analysis.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/stats.h"

#define MAX_FIT_POINTS 96
/* bus bandwidth above any interconnect: NVLink 5 moves 900 GB/s each way
 * per GPU (1.8 TB/s both ways); twice that is no measurement */
#define BUSBW_MAX_GBPS 3600.0
#define REJECT_MIN_NS 500000 /* a blocking group ending over this (and 20 x the median) apart is no group */
#define REJECT_CALL_DIV 4    /* ... nor over a quarter of its shortest call (reject_groups) */

/* ---- helpers ------------------------------------------------------------------ */

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static int blocking(uint8_t type)
{
	return type == COLL_ALL_REDUCE || type == COLL_ALL_GATHER || type == COLL_REDUCE_SCATTER ||
	       type == COLL_ALL_TO_ALL;
}

static void row_bandwidth(struct coll_row *c)
{
	double f = coll_busbw_factor((enum coll_type)c->type, c->group_size);
	double bytes = (double)c->bytes;
	c->algbw_kernel_gbps = c->bytes && c->total_ns ? bytes * (double)c->count / (double)c->total_ns : NAN;
	c->busbw_kernel_gbps = c->algbw_kernel_gbps * f;
	c->algbw_gbps = c->bytes && c->matched && c->xfer_ns > 0
				? bytes * (double)c->matched / (double)c->xfer_ns : NAN;
	c->busbw_gbps = c->algbw_gbps * f;
	c->wait_share = c->matched && c->wait_ns + c->transfer_ns > 0
				? (double)c->wait_ns / (double)(c->wait_ns + c->transfer_ns) : NAN;
}

/* ---- matching ------------------------------------------------------------------ */

#define BY_P2P 2 /* iref.by_seq of a send or recv keyed by (step, source, destination, order) */

struct iref {
	struct comm_inst *c;
	int by_seq;           /* 0: by order, 1: by the trace's sequence, 2: point to point */
	int64_t k1, k2, k3;
	int rank;
	size_t ri;
};

static int cmp_iref(const void *a, const void *b)
{
	const struct iref *x = a, *y = b;
	if (x->by_seq != y->by_seq)
		return x->by_seq - y->by_seq;
	int c = x->by_seq == BY_P2P ? 0 : strcmp(x->c->pg, y->c->pg); /* a pair may name its group apart */
	if (c)
		return c;
	if (x->k1 != y->k1)
		return (x->k1 > y->k1) - (x->k1 < y->k1);
	if (x->k2 != y->k2)
		return (x->k2 > y->k2) - (x->k2 < y->k2);
	if (x->k3 != y->k3)
		return (x->k3 > y->k3) - (x->k3 < y->k3);
	return (x->rank > y->rank) - (x->rank < y->rank);
}

static int same_key(const struct iref *x, const struct iref *y)
{
	return x->by_seq == y->by_seq && x->k1 == y->k1 && x->k2 == y->k2 && x->k3 == y->k3 &&
	       (x->by_seq == BY_P2P || strcmp(x->c->pg, y->c->pg) == 0);
}

struct pgseq { const char *pg; int all_seq; size_t callers, last; /* ranks read that call it; the last + 1 */ };

/* Groups whose calls all carry a sequence number, on every rank. */
static int pg_has_seq(const struct pgseq *p, size_t np, const char *pg)
{
	for (size_t k = 0; k < np; k++)
		if (strcmp(p[k].pg, pg) == 0)
			return p[k].all_seq;
	return 0;
}

/* The number of ranks read that call group pg. */
static size_t pg_callers(const struct pgseq *p, size_t np, const char *pg)
{
	for (size_t k = 0; k < np; k++)
		if (strcmp(p[k].pg, pg) == 0)
			return p[k].callers;
	return 0;
}

/* Arrival order; ties by rank, so the charge is the same in every run. */
static int cmp_arrival(const void *a, const void *b)
{
	const struct iref *x = a, *y = b;
	if (x->c->start_ns != y->c->start_ns)
		return (x->c->start_ns > y->c->start_ns) - (x->c->start_ns < y->c->start_ns);
	return (x->rank > y->rank) - (x->rank < y->rank);
}

/* ---- clock alignment ------------------------------------------------------------- */

struct grp { size_t g, h; };

/* Samples of one clock domain: the end times of its ranks' blocking
 * collectives (t) and their differences to an aligned rank's end (d). */
struct samples {
	double *t, *d;
	size_t n, cap;
};

/* One pass over the matched blocking collectives: for every rank not yet
 * aligned (done[] 0) that shares a collective with an aligned rank, one
 * sample into its domain's set.  Cost: one visit per call, whatever the
 * number of domains. */
static void collect_samples(struct analysis *a, const struct iref *v, const struct grp *gr, size_t ng,
			    const int *done, struct samples *sm)
{
	for (size_t q = 0; q < ng; q++) {
		const struct iref *cj = NULL;
		if (!blocking(v[gr[q].g].c->type))
			continue;
		for (size_t k = gr[q].g; k < gr[q].h && !cj; k++)
			if (done[v[k].ri])
				cj = &v[k];
		if (!cj)
			continue;
		int64_t ej = analysis_aligned(&a->r[cj->ri], cj->c->end_ns);
		for (size_t k = gr[q].g; k < gr[q].h; k++) {
			if (done[v[k].ri])
				continue;
			struct samples *x = &sm[a->r[v[k].ri].clock_domain];
			if (x->n + 1 > x->cap) {
				x->cap = x->cap ? 2 * x->cap : 64;
				x->t = xrealloc(x->t, x->cap * sizeof(*x->t));
				x->d = xrealloc(x->d, x->cap * sizeof(*x->d));
			}
			x->t[x->n] = (double)v[k].c->end_ns;
			x->d[x->n] = (double)v[k].c->end_ns - (double)ej;
			x->n++;
		}
	}
}

/* Offset (and drift) of clock domain dom (the ranks of one host) against
 * the ranks already aligned, from its samples (collect_samples): the
 * median difference, and a Theil-Sen drift term kept only when it at least
 * halves the p95 residual.  Sets the clock of every rank of dom; returns
 * the number of samples (0: none shared, nothing set).  t and d are the
 * caller's. */
static size_t fit_domain(struct analysis *a, int dom, double *t, double *d, size_t n)
{
	if (!n)
		return 0;
	double t0 = t[0];
	for (size_t k = 1; k < n; k++)
		if (t[k] < t0)
			t0 = t[k];
	double *w = xmalloc(n * sizeof(*w));
	memcpy(w, d, n * sizeof(*w));
	double off = median_mid_d(w, n);
	for (size_t k = 0; k < n; k++)
		w[k] = fabs(d[k] - off);
	double res0 = select_kth_d(w, n, quantile_floor_index(n, 0.95));
	double drift = 0, off1 = off;
	if (n >= 16) {
		/* Theil-Sen over at most MAX_FIT_POINTS evenly picked samples */
		size_t m = n < MAX_FIT_POINTS ? n : MAX_FIT_POINTS;
		size_t ns = 0;
		double *sl = xmalloc(m * m / 2 * sizeof(*sl) + sizeof(*sl));
		for (size_t p = 0; p < m; p++)
			for (size_t q = p + 1; q < m; q++) {
				size_t x = p * n / m, y = q * n / m;
				double dt = t[y] - t[x];
				if (fabs(dt) > 1e6) /* 1 ms apart at least */
					sl[ns++] = (d[y] - d[x]) / dt;
			}
		if (ns >= 8) {
			double b = median_mid_d(sl, ns);
			for (size_t k = 0; k < n; k++)
				w[k] = d[k] - b * (t[k] - t0);
			double o1 = median_mid_d(w, n);
			for (size_t k = 0; k < n; k++)
				w[k] = fabs(d[k] - o1 - b * (t[k] - t0));
			double res1 = select_kth_d(w, n, quantile_floor_index(n, 0.95));
			if (fabs(b) < 1e-3 && res1 < 0.5 * res0) {
				drift = b;
				off1 = o1;
			}
		}
		free(sl);
	}
	for (size_t i = 0; i < a->n; i++) {
		struct rank_result *r = &a->r[i];
		if (r->clock_domain != dom)
			continue;
		r->clock_t0_ns = (int64_t)t0;
		r->clock_drift = drift;
		r->clock_offset_ns = (int64_t)llround(drift != 0 ? off1 : off);
	}
	free(w);
	return n;
}

static const char *estimate_offsets(struct analysis *a, const struct iref *v, const struct grp *gr,
				    size_t ng)
{
	int *done = xcalloc(a->n, sizeof(*done));
	int drift = 0, progress = 1;
	for (size_t i = 0; i < a->n; i++) /* the reference domain: r[0]'s */
		done[i] = a->r[i].clock_domain == a->r[0].clock_domain;
	struct samples *sm = xcalloc(a->n, sizeof(*sm)); /* by domain (its first rank's index) */
	while (progress) {
		progress = 0;
		collect_samples(a, v, gr, ng, done, sm);
		for (size_t i = 1; i < a->n; i++) {
			int dom = a->r[i].clock_domain;
			if (done[i] || dom != (int)i || !sm[dom].n) /* once per domain, at its first rank */
				continue;
			fit_domain(a, dom, sm[dom].t, sm[dom].d, sm[dom].n);
			drift |= a->r[i].clock_drift != 0;
			progress = 1;
		}
		for (size_t i = 1; i < a->n; i++) /* the domains just fitted are aligned now */
			if (!done[i] && sm[a->r[i].clock_domain].n)
				done[i] = 2;
		for (size_t i = 0; i < a->n; i++) {
			if (done[i] == 2)
				done[i] = 1;
			sm[i].n = 0;
		}
	}
	for (size_t i = 0; i < a->n; i++) {
		free(sm[i].t);
		free(sm[i].d);
	}
	free(sm);
	size_t missing = 0;
	for (size_t i = 0; i < a->n; i++)
		missing += !done[i];
	free(done);
	if (missing)
		aorta_warn("%zu rank%s share%s no blocking collective with the others: %s clock is "
			   "taken as shared", missing, missing == 1 ? "" : "s", missing == 1 ? "s" : "",
			   missing == 1 ? "its" : "their");
	return drift ? "collective-ends+drift" : "collective-ends";
}

static void given_offsets(struct analysis *a)
{
	for (size_t i = 0; i < a->n; i++) {
		struct rank_result *r = &a->r[i];
		int found = 0;
		for (size_t k = 0; k < a->opts.nclock_given; k++) { /* a rank key wins over its host's */
			const struct clock_given *g = &a->opts.clock_given[k];
			if (g->rank < 0 && r->host[0] && strcmp(g->host, r->host) == 0 && found < 2) {
				r->clock_offset_ns = g->offset_ns;
				found = 1;
			}
			if (g->rank >= 0 && g->rank == r->rank) {
				r->clock_offset_ns = g->offset_ns;
				found = 2;
			}
		}
		if (!found)
			aorta_warn("--clock-offsets gives no offset for rank %d%s%s: taken as 0", r->rank,
				   r->host[0] ? " nor its host " : "", r->host);
	}
}

/* ---- the join -------------------------------------------------------------------- */

/* The join runs in phases, each a function below: join_begin (clock
 * domains, the cases with nothing to join), match_calls (keys and groups),
 * set_clocks and reject_groups (alignment and the spread), wait_transfer
 * (per collective), clocks_usable (the checks that void every cross-rank
 * figure), per_step_sums (per rank, row and step) and name_late_rank.  The
 * matched calls live in struct joinset between the phases. */

struct joinset {
	struct iref *v;  /* every call, sorted by key */
	size_t m;
	struct grp *gr;  /* the groups of two or more calls with one key (h == g: rejected) */
	size_t ng;
	size_t total;    /* calls on every rank */
	unsigned char *incomplete; /* [ng]: matched on part of its group (mark_incomplete) */
};

static void fail_cross(struct analysis *a, const char *why)
{
	a->clocks_aligned = 0;
	a->no_cross_rank_why = why;
	a->matched_groups = 0;
	a->matched_by_seq = 0;
}

/* Resets the cross-rank figures and sets every rank's clock domain (the
 * first rank of its host).  Returns 0 when there is nothing to join (one
 * rank, no shared clock, no call), with the reason set. */
static int join_begin(struct analysis *a, size_t *total)
{
	*total = 0;
	a->late_rank = a->top_rank = -1;
	a->late_share = NAN;
	a->clocks_aligned = 0;
	a->clock_method = "none";
	for (size_t i = 0; i < a->n; i++) {
		*total += a->r[i].ninst;
		a->r[i].clock_domain = (int)i;
		for (size_t k = 0; k < i; k++)
			if (a->r[i].host[0] && strcmp(a->r[i].host, a->r[k].host) == 0) {
				a->r[i].clock_domain = (int)k;
				break;
			}
	}
	if (a->n < 2) {
		fail_cross(a, "one rank: nothing to match across ranks");
		return 0;
	}
	for (size_t i = 0; i < a->n; i++)
		if (analysis_own_clock(a->r[i].format)) {
			fail_cross(a, "aorta JSONL has no shared clock (each rank's steps are laid end to end "
				      "on a clock of its own), so arrivals cannot be compared across ranks");
			return 0;
		}
	if (!*total) {
		fail_cross(a, "no collective calls in the traces");
		return 0;
	}
	return 1;
}

#define OTHER_SLOTS 255 /* streams of unknown-type calls told apart per group (more share the last) */
#define OTHER_ORD_BITS 24

/* Ordinals restart per (step, pg); the type is part of the key, so
 * renumber per (step, pg, type).  A call of unknown type (COLL_OTHER) is
 * numbered per (step, pg, stream) instead: its ordinal holds, above
 * OTHER_ORD_BITS, the place of its stream among the rank's streams with
 * such calls in the group (in order of their first call), so that calls
 * on a rank's second NCCL stream meet the other ranks' second stream's. */
static void renumber_ordinals(struct analysis *a)
{
	for (size_t i = 0; i < a->n; i++) {
		struct rank_result *r = &a->r[i];
		struct oslot { const char *pg; int32_t stream; } *os = NULL;
		size_t nos = 0, oscap = 0;
		for (size_t j = 0; j < r->ninst; j++) {
			struct comm_inst *c = &r->inst[j];
			int other = c->type == COLL_OTHER;
			uint32_t slot = 0;
			if (other) {
				size_t q, nth = 0;
				for (q = 0; q < nos; q++) {
					if (strcmp(os[q].pg, c->pg) != 0)
						continue;
					if (os[q].stream == c->stream)
						break;
					nth++;
				}
				if (q == nos) {
					GROW(os, oscap, nos + 1);
					os[nos++] = (struct oslot){ c->pg, c->stream };
				}
				slot = (uint32_t)(nth < OTHER_SLOTS ? nth : OTHER_SLOTS);
			}
			uint32_t ord = 0;
			for (size_t k = j; k-- > 0;) {
				const struct comm_inst *p = &r->inst[k];
				if (p->step != c->step)
					break;
				if (p->type == c->type && strcmp(p->pg, c->pg) == 0 && (!other || p->stream == c->stream)) {
					ord = p->ordinal + 1;
					break;
				}
			}
			c->ordinal = other && ord == 0 ? slot << OTHER_ORD_BITS : ord;
		}
		free(os);
	}
}

/* Unknown-type calls are paired by order only where every rank that has
 * such calls in a (group, stream place, step) has as many: a call missing
 * on one rank would shift every later pairing.  Marks the calls of the
 * keys whose counts differ (drop[rank index][call] = 1) and counts them. */
struct okey { const char *pg; int64_t step; uint32_t slot; size_t ri, n; };

static int cmp_okey(const void *x, const void *y)
{
	const struct okey *a = x, *b = y;
	int c = strcmp(a->pg, b->pg);
	if (c)
		return c;
	if (a->step != b->step)
		return (a->step > b->step) - (a->step < b->step);
	if (a->slot != b->slot)
		return (a->slot > b->slot) - (a->slot < b->slot);
	return (a->ri > b->ri) - (a->ri < b->ri);
}

static unsigned char **other_counts(struct analysis *a)
{
	struct okey *v = NULL;
	size_t n = 0, cap = 0;
	for (size_t i = 0; i < a->n; i++)
		for (size_t j = 0; j < a->r[i].ninst; j++) {
			const struct comm_inst *c = &a->r[i].inst[j];
			if (c->type != COLL_OTHER || c->seq >= 0)
				continue;
			uint32_t slot = c->ordinal >> OTHER_ORD_BITS;
			if (n && v[n - 1].ri == i && v[n - 1].step == c->step && v[n - 1].slot == slot &&
			    v[n - 1].pg == c->pg) {
				v[n - 1].n++;
				continue;
			}
			GROW(v, cap, n + 1);
			v[n++] = (struct okey){ c->pg, c->step, slot, i, 1 };
		}
	if (!n)
		return NULL;
	qsort(v, n, sizeof(*v), cmp_okey);
	/* runs of one (pg, step, slot) on one rank next to each other: sum them */
	size_t m = 0;
	for (size_t k = 0; k < n; k++) {
		if (m && !cmp_okey(&v[m - 1], &v[k]))
			v[m - 1].n += v[k].n;
		else
			v[m++] = v[k];
	}
	unsigned char **drop = xcalloc(a->n, sizeof(*drop));
	for (size_t g = 0; g < m;) {
		size_t h = g + 1, same = 1;
		while (h < m && !strcmp(v[h].pg, v[g].pg) && v[h].step == v[g].step && v[h].slot == v[g].slot) {
			same &= v[h].n == v[g].n;
			h++;
		}
		for (size_t k = g; !same && k < h; k++) {
			struct rank_result *r = &a->r[v[k].ri];
			if (!drop[v[k].ri])
				drop[v[k].ri] = xcalloc(r->ninst ? r->ninst : 1, 1);
			for (size_t j = 0; j < r->ninst; j++) {
				const struct comm_inst *c = &r->inst[j];
				if (c->type == COLL_OTHER && c->seq < 0 && c->step == v[k].step &&
				    c->ordinal >> OTHER_ORD_BITS == v[k].slot && !strcmp(c->pg, v[k].pg))
					drop[v[k].ri][j] = 1;
			}
		}
		g = h;
	}
	free(v);
	return drop;
}

/* A send or recv whose peer the trace names: paired by (step, source,
 * destination, order), its ordinal counted among the rank's calls of one
 * direction to one peer in the step. */
static int is_p2p(const struct comm_inst *c)
{
	return c->p2p != P2P_NONE && c->peer >= 0;
}

static void renumber_p2p(struct analysis *a)
{
	for (size_t i = 0; i < a->n; i++) {
		struct rank_result *r = &a->r[i];
		for (size_t j = 0; j < r->ninst; j++) {
			struct comm_inst *c = &r->inst[j];
			if (!is_p2p(c))
				continue;
			uint32_t ord = 0;
			for (size_t k = j; k-- > 0;) {
				const struct comm_inst *p = &r->inst[k];
				if (p->step != c->step)
					break;
				if (is_p2p(p) && p->p2p == c->p2p && p->peer == c->peer) {
					ord = p->ordinal + 1;
					break;
				}
			}
			c->ordinal = ord;
		}
	}
}

/* The key of one call: point to point by (step, source, destination,
 * order); else by sequence where its group has one on every call, else by
 * step, type and ordinal.  Returns 0 for a send/recv of unknown peer
 * unless its group has two members (the trace's group size is 2 and at most
 * two ranks read call it, or the job has two ranks: two read, and no trace
 * says the world is larger): it
 * cannot be paired (ordering the send_recv calls of every rank would make
 * one group of all of them, and between two ranks read out of a larger job
 * the peer may be one not read); with two members the peer can only be the
 * other one, and order pairs them. */
static int key_call(struct iref *x, struct comm_inst *c, const struct rank_result *r, const struct pgseq *ps,
		    size_t nps, int two_rank_job)
{
	int rank = r->rank;
	x->c = c;
	x->rank = rank;
	x->k3 = 0;
	if (is_p2p(c)) {
		int64_t src = c->p2p == P2P_SEND ? rank : c->peer, dst = c->p2p == P2P_SEND ? c->peer : rank;
		x->by_seq = BY_P2P;
		x->k1 = c->step;
		x->k2 = (src << 32) | dst;
		x->k3 = c->ordinal;
		return 1;
	}
	if (c->type == COLL_SEND_RECV && !two_rank_job &&
	    !(r->colls[c->row].group_size_known && r->colls[c->row].group_size == 2 &&
	      pg_callers(ps, nps, c->pg) <= 2))
		return 0;
	x->by_seq = pg_has_seq(ps, nps, c->pg);
	x->k1 = x->by_seq ? c->seq : c->step;
	x->k2 = x->by_seq ? 0 : ((int64_t)c->type << 32) | c->ordinal;
	return 1;
}

/* Keys every call (key_call), sorts them and cuts the groups. */
static void match_calls(struct analysis *a, struct joinset *js)
{
	renumber_ordinals(a);
	renumber_p2p(a);
	struct pgseq *ps = NULL;
	size_t nps = 0, pscap = 0;
	for (size_t i = 0; i < a->n; i++)
		for (size_t j = 0; j < a->r[i].ninst; j++) {
			const struct comm_inst *c = &a->r[i].inst[j];
			size_t k;
			for (k = 0; k < nps && strcmp(ps[k].pg, c->pg) != 0; k++)
				;
			if (k == nps) {
				GROW(ps, pscap, nps + 1);
				ps[nps++] = (struct pgseq){ c->pg, 1, 0, 0 };
			}
			if (c->seq < 0)
				ps[k].all_seq = 0;
			if (ps[k].last != i + 1) {
				ps[k].callers++;
				ps[k].last = i + 1;
			}
		}
	int two = a->n == 2; /* a job of two ranks: two read, no trace saying the world is larger */
	for (size_t i = 0; i < a->n; i++)
		two &= a->r[i].world_size <= 2;
	unsigned char **drop = other_counts(a);
	struct iref *v = xmalloc(js->total * sizeof(*v));
	size_t m = 0;
	for (size_t i = 0; i < a->n; i++)
		for (size_t j = 0; j < a->r[i].ninst; j++) {
			struct comm_inst *c = &a->r[i].inst[j];
			struct iref *x = &v[m];
			x->ri = i;
			if (drop && drop[i] && drop[i][j]) { /* unknown type, counts differ across ranks */
				a->unmatched_calls++;
			} else if (key_call(x, c, &a->r[i], ps, nps, two)) {
				m++;
			} else {
				a->unmatched_calls++;
				a->p2p_peer_unknown++;
			}
		}
	for (size_t i = 0; drop && i < a->n; i++)
		free(drop[i]);
	free(drop);
	free(ps);
	qsort(v, m, sizeof(*v), cmp_iref);
	size_t gcap = 0;
	for (size_t g = 0; g < m;) {
		size_t h = g + 1;
		while (h < m && same_key(&v[h], &v[g]))
			h++;
		if (h - g < 2) {
			a->unmatched_calls += h - g;
		} else {
			GROW(js->gr, gcap, js->ng + 1);
			js->gr[js->ng++] = (struct grp){ g, h };
			a->matched_by_seq += (uint64_t)(v[g].by_seq == 1);
			for (size_t k = g; k < h; k++)
				if (v[k].c->bytes != v[g].c->bytes || v[k].c->type != v[g].c->type) {
					if (!a->size_mismatch++)
						snprintf(a->size_mismatch_first, sizeof(a->size_mismatch_first),
							 "%s in group '%s': rank %d says %llu bytes, rank %d %s%s%llu bytes",
							 coll_type_name((enum coll_type)v[g].c->type), v[g].c->pg,
							 v[g].rank, (unsigned long long)v[g].c->bytes, v[k].rank,
							 v[k].c->type != v[g].c->type ? coll_type_name((enum coll_type)v[k].c->type) : "",
							 v[k].c->type != v[g].c->type ? " of " : "",
							 (unsigned long long)v[k].c->bytes);
				}
		}
		g = h;
	}
	js->v = v;
	js->m = m;
	a->matched_groups = js->ng;
}

/* Appends rank list "0, 2-3" of the ranks i with set[i] (by rank number). */
static void rank_list(const struct analysis *a, const unsigned char *set, char *out, size_t n)
{
	size_t o = 0;
	out[0] = '\0';
	for (size_t i = 0; i < a->n && o < n; i++) {
		if (!set[i])
			continue;
		size_t j = i;
		while (j + 1 < a->n && set[j + 1] && a->r[j + 1].rank == a->r[j].rank + 1)
			j++;
		if (j > i)
			o += (size_t)snprintf(out + o, n - o, "%s%d-%d", o ? ", " : "", a->r[i].rank, a->r[j].rank);
		else
			o += (size_t)snprintf(out + o, n - o, "%s%d", o ? ", " : "", a->r[i].rank);
		i = j;
	}
}

/* The ranks read that call each process group, by name: its members as
 * far as the traces show them. */
struct pgcallers {
	const char *pg;
	unsigned char *callers; /* [a->n] */
};

/* The ranks of a list "0,1,4" (coll_row.pg_ranks), sorted, into a new
 * array; 0 when s is empty. */
static size_t parse_ranks(const char *s, int **out)
{
	size_t n = *s ? 1 : 0;
	for (const char *p = s; *p; p++)
		n += *p == ',';
	int *v = xmalloc((n ? n : 1) * sizeof(*v));
	size_t k = 0;
	for (const char *p = s; *p && k < n;) {
		char *e;
		long x = strtol(p, &e, 10);
		if (e == p)
			break;
		v[k++] = (int)x;
		p = *e == ',' ? e + 1 : e;
	}
	qsort(v, k, sizeof(*v), cmp_int);
	*out = v;
	return k;
}

/* "0, 2-3" of the sorted ranks v[0..n) with !hit[k], into out. */
static void list_missing(const int *v, const unsigned char *hit, size_t n, char *out, size_t cap)
{
	size_t o = 0;
	out[0] = '\0';
	for (size_t i = 0; i < n && o < cap; i++) {
		if (hit[i])
			continue;
		size_t j = i;
		while (j + 1 < n && !hit[j + 1] && v[j + 1] == v[j] + 1)
			j++;
		o += (size_t)snprintf(out + o, cap - o, j > i ? "%s%d-%d" : "%s%d", o ? ", " : "", v[i], v[j]);
		i = j;
	}
}

/* A collective of a group whose members the trace lists (Kineto "Process
 * Group Ranks"): incomplete when a listed rank that was read made no call
 * of it (listed ranks not read are not expected: a subset of a job's files
 * is analysed as the ranks it holds); the missing ones are named.  Returns
 * -1 when v[g]'s own rank is not listed (the list is not this group's). */
static int members_incomplete(struct analysis *a, const struct iref *v, size_t g, size_t h, const char *list)
{
	int *m;
	size_t n = parse_ranks(list, &m), want = 0, got = 0;
	unsigned char *hit = xcalloc(n ? n : 1, 1); /* 1: read, no call yet; 2: called or not read */
	int self = 0;
	for (size_t k = 0; k < n; k++) {
		size_t lo = 0, hi = a->n; /* a->r is sorted by rank */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (a->r[mid].rank < m[k])
				lo = mid + 1;
			else
				hi = mid;
		}
		int read = lo < a->n && a->r[lo].rank == m[k];
		hit[k] = read ? 0 : 2;
		want += (size_t)read;
		self |= m[k] == v[g].rank;
	}
	for (size_t x = g; x < h; x++) {
		const int *f = bsearch(&v[x].rank, m, n, sizeof(*m), cmp_int);
		if (f && !hit[f - m]) {
			hit[f - m] = 2;
			got++;
		}
	}
	int inc = self ? got < want : -1;
	if (inc == 1 && !a->incomplete_groups++) {
		char miss[160], step[32] = "";
		list_missing(m, hit, n, miss, sizeof(miss));
		if (v[g].c->step != INT64_MIN)
			snprintf(step, sizeof(step), " of step %lld", (long long)v[g].c->step);
		snprintf(a->incomplete_first, sizeof(a->incomplete_first), "%s in group '%s'%s: %zu of %zu ranks, missing %s",
			 coll_type_name((enum coll_type)v[g].c->type), v[g].c->pg, step, got, want, miss);
	}
	free(hit);
	free(m);
	return inc;
}

/* Whether the collective v[g..h) was matched on part of its group: the
 * group's members are those the trace lists (members_incomplete), else the
 * ranks read that call its process group (all
 * ranks read when the trace gives the group's size as the number read:
 * a member under another group name, or whose calls cannot be keyed,
 * still counts), at most the group size the trace gives.  Send/recv and
 * unknown types are pairs or unknown, never incomplete.  The first
 * incomplete one is described with its missing ranks. */
static int group_incomplete(struct analysis *a, const struct iref *v, size_t g, size_t h,
			    const struct pgcallers *pc, size_t npc)
{
	const struct coll_row *row = &a->r[v[g].ri].colls[v[g].c->row];
	enum coll_type ty = (enum coll_type)v[g].c->type;
	if (ty == COLL_SEND_RECV || ty == COLL_OTHER || ty == COLL_NONE)
		return 0; /* point-to-point (two ranks by nature) or unknown: no group to complete */
	if (row->pg_ranks && *row->pg_ranks) {
		int inc = members_incomplete(a, v, g, h, row->pg_ranks);
		if (inc >= 0)
			return inc;
	}
	size_t k = 0;
	while (k < npc && strcmp(pc[k].pg, v[g].c->pg) != 0)
		k++;
	unsigned char *want = xcalloc(a->n, 1);
	size_t nwant = 0;
	int world = row->group_size_known && (size_t)row->group_size == a->n;
	for (size_t i = 0; i < a->n; i++) {
		want[i] = world || (k < npc && pc[k].callers[i]);
		nwant += want[i];
	}
	size_t expect = nwant;
	if (row->group_size_known && (size_t)row->group_size < expect)
		expect = (size_t)row->group_size; /* one name over several groups */
	int inc = h - g < expect;
	if (inc && !a->incomplete_groups++) {
		for (size_t x = g; x < h; x++)
			want[v[x].ri] = 0;
		char miss[160];
		rank_list(a, want, miss, sizeof(miss));
		char step[32] = "";
		if (v[g].c->step != INT64_MIN)
			snprintf(step, sizeof(step), " of step %lld", (long long)v[g].c->step);
		snprintf(a->incomplete_first, sizeof(a->incomplete_first), "%s in group '%s'%s: %zu of %zu ranks, missing %s",
			 coll_type_name(ty), v[g].c->pg, step, h - g, expect,
			 expect == nwant ? miss : "(unknown: the group's ranks are not in the trace)");
	}
	free(want);
	return inc;
}

/* The matching phase's last step: every matched collective checked against
 * its group (group_incomplete); an incomplete one is never charged waiting
 * (wait_transfer skips it: its late rank may be the one missing) but still
 * aligns clocks, its calls' ends being right. */
static void mark_incomplete(struct analysis *a, struct joinset *js)
{
	struct pgcallers *pc = NULL;
	size_t npc = 0, cap = 0;
	for (size_t i = 0; i < a->n; i++)
		for (size_t j = 0; j < a->r[i].ninst; j++) {
			const char *pg = a->r[i].inst[j].pg;
			size_t k = 0;
			while (k < npc && strcmp(pc[k].pg, pg) != 0)
				k++;
			if (k == npc) {
				GROW(pc, cap, npc + 1);
				pc[npc++] = (struct pgcallers){ pg, xcalloc(a->n, 1) };
			}
			pc[k].callers[i] = 1;
		}
	js->incomplete = xcalloc(js->ng ? js->ng : 1, 1);
	for (size_t q = 0; q < js->ng; q++)
		js->incomplete[q] = (unsigned char)group_incomplete(a, js->v, js->gr[q].g, js->gr[q].h, pc, npc);
	for (size_t k = 0; k < npc; k++)
		free(pc[k].callers);
	free(pc);
}

/* The clock offsets (none, given, one host or estimated), then every call's
 * times moved onto the aligned clock. */
static void set_clocks(struct analysis *a, const struct joinset *js)
{
	if (a->opts.no_clock_align) {
		a->clock_method = "none";
	} else if (a->opts.clock_given) {
		given_offsets(a);
		a->clock_method = "file";
	} else {
		int one = 1;
		for (size_t i = 0; i < a->n; i++)
			one &= a->r[i].clock_domain == a->r[0].clock_domain;
		/* every rank on one named host: one clock, nothing to estimate */
		a->clock_method = one ? "one-host" : estimate_offsets(a, js->v, js->gr, js->ng);
	}
	for (size_t i = 0; i < a->n; i++) {
		struct rank_result *r = &a->r[i];
		for (size_t j = 0; j < r->ninst; j++) {
			r->inst[j].start_ns = analysis_aligned(r, r->inst[j].start_ns);
			r->inst[j].end_ns = analysis_aligned(r, r->inst[j].end_ns);
		}
	}
}

/* The aligned end-time range of blocking group q. */
static int64_t end_range(const struct joinset *js, size_t q)
{
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	for (size_t k = js->gr[q].g; k < js->gr[q].h; k++) {
		if (js->v[k].c->end_ns < lo)
			lo = js->v[k].c->end_ns;
		if (js->v[k].c->end_ns > hi)
			hi = js->v[k].c->end_ns;
	}
	return hi - lo;
}

/* The shortest call of group q (end - start). */
static int64_t shortest_call(const struct joinset *js, size_t q)
{
	int64_t m = INT64_MAX;
	for (size_t k = js->gr[q].g; k < js->gr[q].h; k++)
		if (js->v[k].c->end_ns - js->v[k].c->start_ns < m)
			m = js->v[k].c->end_ns - js->v[k].c->start_ns;
	return m;
}

/* The residual spread of the blocking collectives on the aligned clocks;
 * a blocking collective whose calls do not end together is not one
 * collective (a call missing on one rank shifts the order): such groups
 * are left unmatched (h set to g).  Calls of one group run one after
 * another, so calls one apart in the order end at least the later call's
 * time apart, at least the group's shortest call: a group whose ends are
 * within a quarter of that (REJECT_CALL_DIV) is one collective whose ends
 * the trace does not give to the microsecond (the OSDI'25 artifact's
 * traces: a reduce-scatter of 400 ms whose 32 ends are 3 ms apart). */
static void reject_groups(struct analysis *a, struct joinset *js)
{
	int64_t *tmp = xmalloc((js->ng ? js->ng : 1) * sizeof(*tmp));
	size_t nsp = 0;
	for (size_t q = 0; q < js->ng; q++)
		if (blocking(js->v[js->gr[q].g].c->type))
			tmp[nsp++] = end_range(js, q);
	if (nsp) {
		qsort(tmp, nsp, sizeof(*tmp), cmp_i64);
		a->clock_spread_p50_ns = tmp[median_upper_index(nsp)];
		int64_t lim = 20 * a->clock_spread_p50_ns;
		if (lim < REJECT_MIN_NS)
			lim = REJECT_MIN_NS;
		nsp = 0;
		for (size_t q = 0; q < js->ng; q++) {
			struct grp *g = &js->gr[q];
			if (!blocking(js->v[g->g].c->type))
				continue;
			int64_t range = end_range(js, q);
			if (range > lim && range > shortest_call(js, q) / REJECT_CALL_DIV) {
				a->rejected_groups++;
				a->unmatched_calls += g->h - g->g;
				a->matched_by_seq -= (uint64_t)(js->v[g->g].by_seq == 1);
				g->h = g->g;
				continue;
			}
			tmp[nsp++] = range;
		}
		a->matched_groups -= a->rejected_groups;
		qsort(tmp, nsp, sizeof(*tmp), cmp_i64);
		if (nsp) {
			a->clock_spread_p50_ns = tmp[median_upper_index(nsp)];
			a->clock_spread_ns = tmp[quantile_floor_index(nsp, 0.95)];
		}
	}
	a->clock_samples = nsp;
	free(tmp);
}

/* One collective (ord[0..k), sorted here into arrival order): each call's
 * waiting, the collective's transfer, and the waiting each arrival caused
 * charged to its rank.  Returns the arrival skew (last - first arrival). */
static int64_t wait_one(struct analysis *a, struct iref *ord, size_t k)
{
	qsort(ord, k, sizeof(*ord), cmp_arrival);
	int64_t lastst = ord[k - 1].c->start_ns, firstst = ord[0].c->start_ns, lastend = INT64_MIN;
	for (size_t x = 0; x < k; x++)
		if (ord[x].c->end_ns > lastend)
			lastend = ord[x].c->end_ns;
	/* sum_before adds arrivals relative to the first: absolute times (ns
	 * since 1970, about 1.7e18) overflow int64 after five ranks */
	int64_t sum_before = 0, hw_before = 0, busy_before = 0;
	for (size_t x = 0; x < k; x++) {
		struct comm_inst *c = ord[x].c;
		int64_t d = c->end_ns - c->start_ns, w = lastst - c->start_ns;
		if (w > d)
			w = d;
		if (w < 0)
			w = 0;
		c->wait_ns = w;
		c->xfer_ns = lastend - lastst;
		c->last = x == k - 1;
		c->caused_ns = x ? (int64_t)x * (c->start_ns - ord[x - 1].c->start_ns) : 0;
		if (c->caused_ns > 0) {
			struct rank_result *r = &a->r[ord[x].ri];
			double nb = (double)x;
			r->lateness_ns += c->start_ns - firstst - (int64_t)llround((double)sum_before / nb);
			r->caused_host_excess_ns += c->prep_host_wait_ns - (int64_t)llround((double)hw_before / nb);
			r->caused_busy_excess_ns += c->prep_busy_ns - (int64_t)llround((double)busy_before / nb);
		}
		sum_before += c->start_ns - firstst;
		hw_before += c->prep_host_wait_ns;
		busy_before += c->prep_busy_ns;
	}
	return lastst - firstst;
}

/* Waiting and transfer of every matched collective, and the arrival skew
 * over them. */
static void wait_transfer(struct analysis *a, const struct joinset *js)
{
	size_t kmax = 0, nskew = 0;
	for (size_t q = 0; q < js->ng; q++)
		if (js->gr[q].h - js->gr[q].g > kmax)
			kmax = js->gr[q].h - js->gr[q].g;
	struct iref *ord = xmalloc((kmax ? kmax : 1) * sizeof(*ord));
	int64_t *tmp = xmalloc((js->ng ? js->ng : 1) * sizeof(*tmp));
	for (size_t q = 0; q < js->ng; q++) {
		size_t g = js->gr[q].g, k = js->gr[q].h - g;
		if (k < 2 || (js->incomplete && js->incomplete[q]))
			continue; /* rejected, or part of its group: no waiting charged */
		memcpy(ord, &js->v[g], k * sizeof(*ord));
		tmp[nskew++] = wait_one(a, ord, k);
	}
	free(ord);
	if (nskew) {
		qsort(tmp, nskew, sizeof(*tmp), cmp_i64);
		int64_t sum = 0;
		for (size_t k = 0; k < nskew; k++)
			sum += tmp[k];
		a->skew_p50_ns = tmp[median_upper_index(nskew)];
		a->skew_max_ns = tmp[nskew - 1];
		a->skew_mean_ns = sum / (int64_t)nskew;
	}
	free(tmp);
}

/* The checks that void every cross-rank figure: clocks minutes apart, or
 * matched collectives that do not end together.  Returns 0 (reason set)
 * when the figures cannot stand. */
static int clocks_usable(struct analysis *a)
{
	if ((a->opts.no_clock_align || !a->clock_samples) && a->skew_p50_ns >= 60LL * 1000000000LL) {
		/* traces from unrelated clocks show skews of minutes or more */
		fail_cross(a, a->opts.no_clock_align
			   ? "the ranks' clocks differ by minutes and --no-clock-align keeps them apart"
			   : "the ranks' clocks differ by minutes and no blocking collective could align them");
		return 0;
	}
	if (a->clock_samples && a->clock_spread_p50_ns > 1000000 && a->opts.no_clock_align) {
		fail_cross(a, "with --no-clock-align the matched collectives do not end together (median "
			      "spread over 1 ms): the ranks' clocks differ; leave the alignment on or give "
			      "--clock-offsets");
		return 0;
	}
	if (a->clock_samples && a->clock_spread_p50_ns > 1000000) {
		fail_cross(a, "the matched collectives do not end together on the aligned clocks (median "
			      "spread over 1 ms): the calls may be matched wrongly, or the clocks drift "
			      "in a way one offset and drift cannot describe");
		return 0;
	}
	a->clocks_aligned = 1;
	return 1;
}

/* The cross-rank steps: every step number of a matched call, sorted. */
static void make_xsteps(struct analysis *a, const struct joinset *js)
{
	int64_t *steps = xmalloc((js->total ? js->total : 1) * sizeof(*steps));
	size_t nst = 0;
	for (size_t q = 0; q < js->ng; q++)
		for (size_t k = js->gr[q].g; k < js->gr[q].h; k++)
			steps[nst++] = js->v[k].c->step;
	qsort(steps, nst, sizeof(*steps), cmp_i64);
	size_t u = 0;
	for (size_t k = 0; k < nst; k++)
		if (!u || steps[u - 1] != steps[k])
			steps[u++] = steps[k];
	a->nxsteps = u;
	a->xsteps = xcalloc(u ? u : 1, sizeof(*a->xsteps));
	for (size_t k = 0; k < u; k++) {
		a->xsteps[k].number = steps[k];
		a->xsteps[k].straggler = -1;
		a->xsteps[k].by_rank = xcalloc(a->n, sizeof(int64_t));
	}
	free(steps);
}

/* The cross-rank step holding step number `step` (the last one not after it). */
static struct xstep *xstep_of(struct analysis *a, int64_t step)
{
	size_t lo = 0, hi = a->nxsteps;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (a->xsteps[mid].number <= step)
			lo = mid;
		else
			hi = mid;
	}
	return &a->xsteps[lo];
}

/* Sums per rank, per collective row and per step over the matched calls,
 * and each step's straggler. */
static void per_step_sums(struct analysis *a, const struct joinset *js)
{
	make_xsteps(a, js);
	for (size_t i = 0; i < a->n; i++) {
		struct rank_result *r = &a->r[i];
		for (size_t j = 0; j < r->ninst; j++) {
			struct comm_inst *c = &r->inst[j];
			if (c->wait_ns < 0)
				continue;
			int64_t d = c->end_ns - c->start_ns;
			r->wait_ns += c->wait_ns;
			r->transfer_ns += d - c->wait_ns;
			r->matched++;
			r->times_last += (uint64_t)c->last;
			r->caused_ns += c->caused_ns;
			r->caused_colls += c->caused_ns > 0 && c->caused_ns > a->clock_spread_ns;
			struct coll_row *row = &r->colls[c->row];
			row->wait_ns += c->wait_ns;
			row->transfer_ns += d - c->wait_ns;
			row->xfer_ns += c->xfer_ns;
			row->matched++;
			if (c->caused_ns > 0) {
				struct xstep *x = xstep_of(a, c->step);
				x->by_rank[i] += c->caused_ns;
				x->total_caused_ns += c->caused_ns;
			}
			if (a->opts.keep_traces && c->wait_ns > 0)
				ivset_push(&r->wait_set, c->start_ns, c->start_ns + c->wait_ns);
		}
		ivset_seal(&r->wait_set);
		a->caused_ns += r->caused_ns;
	}
	for (size_t k = 0; k < a->nxsteps; k++) {
		struct xstep *x = &a->xsteps[k];
		for (size_t i = 0; i < a->n; i++)
			if (x->by_rank[i] > x->caused_ns) {
				x->caused_ns = x->by_rank[i];
				x->straggler = a->r[i].rank;
			}
	}
}

/* The rank that caused the most waiting, and the late rank: the same one
 * when it caused a clear majority of waiting that is material (>= 1 % of
 * the ranks' summed time, beyond the clock uncertainty). */
static void name_late_rank(struct analysis *a)
{
	int64_t best = 0;
	for (size_t i = 0; i < a->n; i++)
		if (a->r[i].caused_ns > best) {
			best = a->r[i].caused_ns;
			a->top_rank = a->r[i].rank;
		}
	if (a->caused_ns > 0) {
		a->late_share = (double)best / (double)a->caused_ns;
		if (a->late_share >= LATE_SHARE_MIN && analysis_waiting_material(a))
			a->late_rank = a->top_rank;
	}
}

/* Every matched call learns its collective (comm_inst.grp: the group's
 * index), for the what-if replay (whatif.c). */
static void number_groups(struct analysis *a, const struct joinset *js)
{
	for (size_t q = 0; q < js->ng; q++)
		for (size_t k = js->gr[q].g; k < js->gr[q].h; k++) {
			js->v[k].c->grp = (int64_t)q;
			a->unknown_type_matched += js->v[k].c->type == COLL_OTHER;
		}
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

/* Each rank's point-to-point peers (the ranks it sends to or receives
 * from, as the traces name them): its pipeline-stage neighbours. */
static void p2p_peers(struct analysis *a)
{
	for (size_t i = 0; i < a->n; i++) {
		struct rank_result *r = &a->r[i];
		size_t cap = 0;
		free(r->peers);
		r->peers = NULL;
		r->npeers = 0;
		for (size_t j = 0; j < r->ninst; j++) {
			const struct comm_inst *c = &r->inst[j];
			if (!is_p2p(c))
				continue;
			size_t k;
			for (k = 0; k < r->npeers && r->peers[k] != c->peer; k++)
				;
			if (k < r->npeers)
				continue;
			GROW(r->peers, cap, r->npeers + 1);
			r->peers[r->npeers++] = c->peer;
		}
		if (r->npeers)
			qsort(r->peers, r->npeers, sizeof(*r->peers), cmp_i32);
	}
}

/* A send or recv whose trace names as its peer its own rank, or a rank
 * outside the world the traces report (world_size), has no peer aorta can
 * believe: it is refused before anything reads the peers, taken as of
 * unknown peer, counted and the first said.  It never pairs with itself
 * (a send and a recv of one rank to itself would be one "collective" and
 * make the rank its own pipeline neighbour) and never moves a stage. */
static void refuse_bad_peers(struct analysis *a)
{
	int world = -1;
	for (size_t i = 0; i < a->n; i++)
		if (a->r[i].world_size > world)
			world = a->r[i].world_size;
	for (size_t i = 0; i < a->n; i++) {
		struct rank_result *r = &a->r[i];
		for (size_t j = 0; j < r->ninst; j++) {
			struct comm_inst *c = &r->inst[j];
			if (c->p2p == P2P_NONE || c->peer < 0)
				continue;
			int self = c->peer == r->rank, out = world > 0 && c->peer >= world;
			if (!self && !out)
				continue;
			if (!a->p2p_bad_peers++) {
				char why[64];
				if (self)
					snprintf(why, sizeof(why), "its own rank");
				else
					snprintf(why, sizeof(why), "outside the world of %d ranks the traces report", world);
				snprintf(a->p2p_bad_first, sizeof(a->p2p_bad_first), "rank %d %s rank %d, %s", r->rank,
					 c->p2p == P2P_SEND ? "send to" : "recv from", c->peer, why);
			}
			c->peer = -1;
			c->p2p = P2P_NONE;
		}
	}
}

void analysis_join(struct analysis *a)
{
	struct joinset js = { 0 };

	refuse_bad_peers(a);
	p2p_peers(a);
	a->unknown_type_calls = 0; /* said whether or not there is anything to match them with */
	for (size_t i = 0; i < a->n; i++)
		for (size_t j = 0; j < a->r[i].ninst; j++)
			a->unknown_type_calls += a->r[i].inst[j].type == COLL_OTHER;
	if (!join_begin(a, &js.total))
		goto bandwidth;
	match_calls(a, &js);
	mark_incomplete(a, &js);
	if (!js.ng) {
		fail_cross(a, "no collective could be matched across ranks");
		goto done;
	}
	set_clocks(a, &js);
	reject_groups(a, &js);
	number_groups(a, &js);
	wait_transfer(a, &js);
	if (!clocks_usable(a))
		goto done;
	per_step_sums(a, &js);
	name_late_rank(a);
done:
	free(js.incomplete);
	free(js.gr);
	free(js.v);
bandwidth:
	for (size_t i = 0; i < a->n; i++)
		for (size_t k = 0; k < a->r[i].ncolls; k++) {
			struct coll_row *c = &a->r[i].colls[k];
			row_bandwidth(c);
			/* above any interconnect: a wrong size or time, not a figure */
			double top = fmax(isnan(c->busbw_gbps) ? 0 : c->busbw_gbps,
					  isnan(c->busbw_kernel_gbps) ? 0 : c->busbw_kernel_gbps);
			if (top > BUSBW_MAX_GBPS) {
				if (!a->implausible_bw++)
					snprintf(a->implausible_bw_first, sizeof(a->implausible_bw_first),
						 "rank %d %s in group '%s' of %llu bytes: %.0f GB/s", a->r[i].rank,
						 coll_type_name((enum coll_type)c->type), c->pg,
						 (unsigned long long)c->bytes, top);
				c->algbw_gbps = c->busbw_gbps = NAN;
				c->algbw_kernel_gbps = c->busbw_kernel_gbps = NAN;
			}
		}
}
