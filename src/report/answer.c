/*
 * answer.c - the summary every front end leads with (answer.h).
 *
 * Order, as a performance engineer reads it: the step and the noise floor
 * (what a gain must clear to be worth anything), the verdict, the fixes
 * worth something (at most three, largest first: worth in ms and %, what
 * "fixed" means, which ranks set the ideal, the cause for a rank and
 * whether the next-slowest rank takes over once it is fixed), the fixes
 * worth nothing (within the noise floor: never printed as a loss), the
 * late rank and why, the per-rank rows (host launch time a step, waiting
 * caused, fix gain) and what to look at next for the cause found (host
 * launch gaps, a slower GPU, a collective's bandwidth, exposed
 * communication).  Every number is a figure of the engine: the what-if's
 * (overlap/whatif.h), the join's (waiting caused) or the diagnosis's.
 */
#include "report/answer.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "flightrec/fr.h"
#include "overlap/analysis.h"
#include "overlap/diagnosis.h"
#include "overlap/whatif.h"
#include "report/html.h"

/* A growing string for one line (a line is at most this long). */
struct buf { char b[1536]; size_t n; };

static void bput(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bput(struct buf *b, const char *fmt, ...)
{
	if (b->n >= sizeof(b->b))
		return;
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(b->b + b->n, sizeof(b->b) - b->n, fmt, ap);
	va_end(ap);
	if (k > 0)
		b->n = b->n + (size_t)k < sizeof(b->b) ? b->n + (size_t)k : sizeof(b->b) - 1;
}

static void add(struct answer *s, const char *tag, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add(struct answer *s, const char *tag, const char *fmt, ...)
{
	struct buf b = { .n = 0 };
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(b.b, sizeof(b.b), fmt, ap);
	va_end(ap);
	GROW(s->l, s->cap, s->nl + 1);
	s->l[s->nl++] = (struct answer_line){ tag, xstrdup(b.b) };
}

void answer_free(struct answer *s)
{
	for (size_t i = 0; i < s->nl; i++)
		free(s->l[i].text);
	free(s->l);
	free(s->row);
	memset(s, 0, sizeof(*s));
}

static const struct whatif *ok_whatif(const struct analysis *a)
{
	return a->whatif && a->whatif->ok ? a->whatif : NULL;
}

/* ---- the fixes -------------------------------------------------------------------- */

/* Every fix of the what-if, largest gain first (caller frees). */
static const struct whatif_fix **fixes_by_gain(const struct whatif *w, size_t *n)
{
	size_t m = w->nby_rank + w->nby_group + w->nby_op, k = 0;
	const struct whatif_fix **f = xcalloc(m + 1, sizeof(*f));
	for (size_t q = 0; q < w->nby_rank; q++)
		f[k++] = &w->by_rank[q];
	for (size_t q = 0; q < w->nby_group; q++)
		f[k++] = &w->by_group[q];
	for (size_t q = 0; q < w->nby_op; q++)
		f[k++] = &w->by_op[q];
	for (size_t p = 1; p < k; p++) /* stable: the what-if's order among equal gains */
		for (size_t q = p; q > 0 && f[q]->gain_ms > f[q - 1]->gain_ms; q--) {
			const struct whatif_fix *t = f[q];
			f[q] = f[q - 1];
			f[q - 1] = t;
		}
	*n = k;
	return f;
}

static int is_op_fix(const struct whatif *w, const struct whatif_fix *f)
{
	return f >= w->by_op && f < w->by_op + w->nby_op;
}

/* The other ranks of the analysis, as "0, 1, 2" (at most 8 named). */
static void others(struct buf *b, const struct analysis *a, int rank)
{
	size_t k = 0;
	for (size_t i = 0; i < a->n; i++) {
		if (a->r[i].rank == rank)
			continue;
		if (k == 8) {
			bput(b, " and %zu more", a->n - 1 - k);
			break;
		}
		bput(b, "%s%d", k++ ? ", " : "", a->r[i].rank);
	}
}

/* Ranks whose own launch gaps set the host-gap ideal, most first: "ranks 2
 * and 1 set 46 % and 34 % of it" (those setting at least 15 %). */
static void setters(struct buf *b, const struct whatif *w)
{
	int rk[3];
	double sh[3];
	size_t n = 0;
	for (size_t i = 0; i < w->nranks; i++) {
		double v = w->ranks[i].ideal_share;
		if (!(v >= 0.15))
			continue;
		size_t p = n < 3 ? n++ : 3;
		while (p > 0 && sh[p - 1] < v) {
			if (p < 3) {
				sh[p] = sh[p - 1];
				rk[p] = rk[p - 1];
			}
			p--;
		}
		if (p < 3) {
			sh[p] = v;
			rk[p] = w->ranks[i].rank;
		}
	}
	if (!n)
		return;
	bput(b, "; rank%s ", n > 1 ? "s" : "");
	for (size_t q = 0; q < n; q++)
		bput(b, "%s%d", q ? (q + 1 == n ? " and " : ", ") : "", rk[q]);
	bput(b, " set%s ", n > 1 ? "" : "s");
	for (size_t q = 0; q < n; q++)
		bput(b, "%s%.0f %%", q ? (q + 1 == n ? " and " : ", ") : "", 100.0 * sh[q]);
	bput(b, " of it");
}

/* What fixing f means, in words, and the figures behind it. */
static void meaning(struct buf *b, const struct analysis *a, const struct whatif *w, const struct whatif_fix *f)
{
	const char *what = f->what;
	if (f->rank >= 0) {
		bput(b, "rank %d's kernel durations and launch gaps at the lower median of the same ops on rank%s ", f->rank,
		     a->n > 2 ? "s" : "");
		others(b, a, f->rank);
		const struct whatif_rank *h = whatif_rank_of(w, f->rank);
		if (w->verdict && strstr(w->verdict, what) && strstr(w->verdict, "its host is the cause"))
			bput(b, "; its host is the cause");
		else if (w->verdict && strstr(w->verdict, what) && strstr(w->verdict, "its GPU work is the cause"))
			bput(b, "; its GPU work is the cause");
		if (h && isfinite(h->host_launch_ms) && isfinite(h->ideal_host_launch_ms) &&
		    h->host_launch_ms - h->ideal_host_launch_ms > whatif_material_ms(w))
			bput(b, " (its host launches %.2f ms a step, the ideal %.2f ms)", h->host_launch_ms,
			     h->ideal_host_launch_ms);
		return;
	}
	if (f->ranks) {
		if (!strcmp(what, "the stage balance"))
			bput(b, "compute moved between the pipeline stages until each does the same");
		else
			bput(b, "ranks %s at the lower median of the same ops on the ranks outside it", f->ranks);
		return;
	}
	if (!strcmp(what, "host launch gaps")) {
		bput(b, "every launch gap at the lower median of the same launch across the ranks");
		setters(b, w);
		/* no rank's host near the ideal (the fastest 10 % above it): jitter */
		size_t slow = 0, known = 0;
		for (size_t i = 0; i < w->nranks; i++) {
			const struct whatif_rank *h = &w->ranks[i];
			known += isfinite(h->host_launch_ms);
			slow += h->host_launch_ms - h->ideal_host_launch_ms >
				fmax(whatif_material_ms(w), 0.1 * h->ideal_host_launch_ms);
		}
		if (known >= 2 && slow == known)
			bput(b, "; every rank's host is slower than that ideal: each is slow at different launches "
			     "(jitter), not one rank");
		return;
	}
	size_t n = strlen(what);
	if (n > 9 && !strcmp(what + n - 9, " transfer")) {
		bput(b, "every %.*s's transfer (last arrival to end) at the median of its type and size", (int)(n - 9), what);
		return;
	}
	bput(b, "every %s kernel at the lower median of the same kernel across the ranks", what);
}

/* The fix lines: those worth more than the noise floor (at most three),
 * then one line for those worth nothing and one for ideals unknown. */
static void fix_lines(struct answer *s, const struct analysis *a, const struct whatif *w)
{
	static const char *const tags[3] = { "fix 1", "fix 2", "fix 3" };
	size_t n;
	const struct whatif_fix **f = fixes_by_gain(w, &n);
	double floor_ms = whatif_material_ms(w);
	const struct whatif_fix *vb = whatif_best(w); /* the fix the verdict names leads */
	for (size_t q = 1; vb && q < n; q++)
		if (f[q] == vb) {
			memmove(&f[1], &f[0], q * sizeof(*f));
			f[0] = vb;
		}
	size_t shown = 0;
	struct buf no = { .n = 0 }, unk = { .n = 0 };
	size_t nno = 0, nno_more = 0, nunk = 0;
	for (size_t q = 0; q < n; q++) {
		const struct whatif_fix *x = f[q];
		if (x->unknown && x->rank >= 0) { /* its trace lacks its peers' ops */
			if (nunk++ < 3)
				bput(&unk, "%s%s (%s)", nunk > 1 ? "; " : "", x->what, x->unknown);
			continue;
		}
		if (!whatif_nothing(w, x->gain_ms) && x->gain_ms > 0) {
			if (shown == 3)
				continue;
			struct buf b = { .n = 0 };
			bput(&b, "%s: %.2f ms a step (%.1f %%): ", x->what, x->gain_ms, x->gain_pct);
			if (whatif_fix_unsteady(x)) /* above the floor, its per-step gains all over the place */
				bput(&b, "its gain varies from step to step (standard error %.2f ms): one run cannot "
				     "tell it from noise; ", x->gain_sem_ms);
			else if (x->gain_ms <= w->step_sem_ms) /* above the floor, within the steps' spread */
				bput(&b, "within the step's own spread (%.2f ms): a longer capture would confirm it; ",
				     w->step_sem_ms);
			meaning(&b, a, w, x);
			if (x->unknown)
				bput(&b, "; %s", x->unknown);
			if (x->then_rank >= 0 && isfinite(x->then_gain_ms) && x->then_gain_ms - x->gain_ms > floor_ms)
				bput(&b, "; then rank %d takes over (the next-slowest): fixing ranks %d and %d gains %.2f ms "
				     "(%.1f %%)", x->then_rank, x->rank, x->then_rank, x->then_gain_ms, x->then_gain_pct);
			add(s, tags[shown++], "%s", b.b);
			continue;
		}
		if (nno < 8) {
			bput(&no, "%s%s", nno ? ", " : "", x->what);
			nno++;
		} else {
			nno_more++;
		}
	}
	if (!shown && n)
		add(s, "fixes", "none is worth more than the %.2f ms noise floor", floor_ms);
	if (nno)
		add(s, "no gain", "%s%s%s: within the %.2f ms noise floor (or slower in the replay): nothing to win there",
		    no.b, nno_more ? ", ..." : "", nno_more ? "" : "", floor_ms);
	if (nno_more) { /* say how many the "..." stands for */
		char *t = s->l[s->nl - 1].text;
		char *m = xasprintf("%s (%zu more)", no.b, nno_more);
		char *r = xasprintf("%s: within the %.2f ms noise floor (or slower in the replay): nothing to win there", m,
				    floor_ms);
		free(m);
		free(t);
		s->l[s->nl - 1].text = r;
	}
	if (nunk)
		add(s, "unknown", "%s%s: no peer runs the ops their traces lack, so no ideal", unk.b, nunk > 3 ? "; ..." : "");
	free(f);
}

/* ---- the late rank ------------------------------------------------------------------ */

static void late_line(struct answer *s, const struct analysis *a, const struct diagnosis *d)
{
	if (a->n < 2)
		return;
	if (!d->has_cross_rank) {
		add(s, "late rank", "n/a: %s", d->why_no_cross_rank ? d->why_no_cross_rank : "no cross-rank figures");
		return;
	}
	double wshare = d->wait_ns + d->transfer_ns > 0 ? 100.0 * (double)d->wait_ns / (double)(d->wait_ns + d->transfer_ns)
						       : NAN;
	if (d->late_rank < 0) {
		if (d->top_rank >= 0 && !d->wait_uncertain)
			add(s, "late rank", "none: no rank caused a clear majority (60 %%) of the waiting that is material "
			    "(the most: rank %d, %.1f %%); %.1f %% of the collective time was waiting", d->top_rank,
			    100.0 * d->top_share, wshare);
		else
			add(s, "late rank", "none: the waiting is within the clock uncertainty");
		return;
	}
	struct buf b = { .n = 0 };
	bput(&b, "%d: caused %.1f %% of the waiting (%.3f ms in %llu collectives)", d->late_rank, 100.0 * d->late_share,
	     (double)d->late_caused_ns / 1e6, (unsigned long long)d->late_colls);
	double L = (double)d->late_lateness_ns, H = (double)d->late_host_excess_ns, B = (double)d->late_busy_excess_ns;
	if (L > 0 && H >= 0.5 * L && H >= B) {
		bput(&b, " because its host was busy: its GPU waited %.3f ms longer than its peers' for launches before "
		     "them", H / 1e6);
		if (d->late_steps)
			bput(&b, " (host-bound in %zu of %zu steps)", d->late_host_bound_steps, d->late_steps);
	} else if (L > 0 && B >= 0.5 * L) {
		bput(&b, " because its GPU had more to do: busy %.3f ms longer than its peers before them", B / 1e6);
	} else if (L > 0) {
		bput(&b, ": neither its host (%.3f ms more host wait) nor its GPU work (%.3f ms more busy) explains "
		     "its %.3f ms of lateness", H / 1e6, B / 1e6, L / 1e6);
	}
	bput(&b, "; %.1f %% of the collective time was waiting", wshare);
	const struct whatif *w = ok_whatif(a);
	for (size_t q = 0; w && q < w->nby_rank; q++)
		if (w->by_rank[q].rank == d->late_rank && !w->by_rank[q].unknown &&
		    whatif_nothing(w, w->by_rank[q].gain_ms))
			bput(&b, "; yet fixing it gains nothing beyond the noise floor: the waiting is absorbed elsewhere");
	add(s, "late rank", "%s", b.b);
}

/* ---- the rows ------------------------------------------------------------------------ */

static double row_key(const struct answer_row *r)
{
	return isfinite(r->caused_ms) ? r->caused_ms : 0;
}

static void rows(struct answer *s, const struct analysis *a, const struct diagnosis *d)
{
	const struct whatif *w = ok_whatif(a);
	if (a->n < 2)
		return;
	struct answer_row *all = xcalloc(a->n, sizeof(*all));
	for (size_t i = 0; i < a->n; i++) {
		const struct rank_result *r = &a->r[i];
		struct answer_row *x = &all[i];
		x->rank = r->rank;
		x->host_launch_ms = x->host_min_ms = x->host_max_ms = x->ideal_host_ms = NAN;
		x->caused_ms = x->caused_share = x->gain_ms = x->gain_pct = NAN;
		const struct whatif_rank *h = w ? whatif_rank_of(w, r->rank) : NULL;
		if (h && isfinite(h->host_launch_ms)) {
			x->host_launch_ms = h->host_launch_ms;
			x->host_min_ms = h->host_launch_min_ms;
			x->host_max_ms = h->host_launch_max_ms;
			x->ideal_host_ms = h->ideal_host_launch_ms;
			s->has_host = 1;
		}
		if (d->has_cross_rank) {
			x->caused_ms = (double)r->caused_ns / 1e6;
			x->caused_share = a->caused_ns > 0 ? (double)r->caused_ns / (double)a->caused_ns : 0;
			s->has_caused = 1;
		}
		if (w) {
			x->nothing = 1; /* not replayed: its excess over its peers is within the floor (whatif.c) */
			for (size_t q = 0; q < w->nby_rank; q++)
				if (w->by_rank[q].rank == r->rank) {
					x->gain_ms = w->by_rank[q].gain_ms;
					x->gain_pct = w->by_rank[q].gain_pct;
					x->nothing = whatif_nothing(w, x->gain_ms) || x->gain_ms < 0;
					x->unknown = w->by_rank[q].unknown != NULL;
				}
			s->has_gain = 1;
		}
		struct buf b = { .n = 0 };
		if (r->rank == d->late_rank)
			bput(&b, "late rank");
		for (size_t q = 0; w && q < w->nby_rank; q++)
			if (w->by_rank[q].then_rank == r->rank && isfinite(w->by_rank[q].then_gain_ms) &&
			    w->by_rank[q].then_gain_ms - w->by_rank[q].gain_ms > whatif_material_ms(w))
				bput(&b, "%stakes over once rank %d is fixed", b.n ? "; " : "", w->by_rank[q].rank);
		if (h && h->ideal_share >= 0.15)
			bput(&b, "%ssets %.0f %% of the ideal launch gaps", b.n ? "; " : "", 100.0 * h->ideal_share);
		snprintf(x->note, sizeof(x->note), "%.159s", b.b);
	}
	if (!s->has_host && !s->has_caused && !s->has_gain) { /* nothing to show per rank (no shared clock) */
		free(all);
		return;
	}
	/* the rows worth a look first: the late rank, the best rank fix and the
	 * rank taking over after it, then the two that caused the most waiting,
	 * then the slowest hosts, then rank order */
	int *pick = xcalloc(a->n, sizeof(int));
	size_t np = 0, keep = a->n <= ANSWER_ROWS + 1 ? a->n : ANSWER_ROWS;
	const struct whatif_fix *bf = NULL;
	for (size_t q = 0; w && q < w->nby_rank; q++)
		if (!w->by_rank[q].unknown && !whatif_nothing(w, w->by_rank[q].gain_ms) && w->by_rank[q].gain_ms > 0 &&
		    (!bf || w->by_rank[q].gain_ms > bf->gain_ms))
			bf = &w->by_rank[q];
	int first[3] = { d->late_rank, bf ? bf->rank : -1, bf && bf->then_rank >= 0 ? bf->then_rank : -1 };
	for (int k = 0; k < 3; k++)
		for (size_t i = 0; i < a->n && np < keep; i++)
			if (!pick[i] && first[k] >= 0 && a->r[i].rank == first[k]) {
				pick[i] = 1;
				np++;
			}
	for (int pass = 0; pass < 3; pass++) /* caused (two), host launch, caused */
		for (size_t m = 0; np < keep && (pass || m < 2); m++) {
			int best = -1, host = pass == 1;
			for (size_t i = 0; i < a->n; i++) {
				if (pick[i])
					continue;
				double k = host ? all[i].host_launch_ms : all[i].caused_ms;
				if (isfinite(k) && k > 0 && (best < 0 || k > (host ? all[best].host_launch_ms : all[best].caused_ms)))
					best = (int)i;
			}
			if (best < 0)
				break;
			pick[best] = 1;
			np++;
		}
	for (size_t i = 0; i < a->n && np < keep; i++) /* nothing to tell them apart: rank order */
		if (!pick[i]) {
			pick[i] = 1;
			np++;
		}
	s->row = xcalloc(np ? np : 1, sizeof(*s->row));
	for (size_t i = 0; i < a->n; i++)
		if (pick[i])
			s->row[s->nrow++] = all[i];
	for (size_t p = 1; p < s->nrow; p++) /* caused waiting, then host launch time, most first */
		for (size_t q = p; q > 0; q--) {
			const struct answer_row *x = &s->row[q], *y = &s->row[q - 1];
			double dx = row_key(x) - row_key(y);
			double hx = (isfinite(x->host_launch_ms) ? x->host_launch_ms : 0) -
				    (isfinite(y->host_launch_ms) ? y->host_launch_ms : 0);
			if (!(dx > 0 || (dx == 0 && hx > 0)))
				break;
			struct answer_row t = s->row[q];
			s->row[q] = s->row[q - 1];
			s->row[q - 1] = t;
		}
	s->more = a->n - s->nrow;
	free(pick);
	free(all);
}

/* ---- what next --------------------------------------------------------------------------- */

/* The collective row of type name `type` with the most time on the first rank that has it. */
static const struct coll_row *coll_of(const struct analysis *a, const char *type)
{
	const struct coll_row *best = NULL;
	for (size_t i = 0; i < a->n && !best; i++)
		for (size_t k = 0; k < a->r[i].ncolls; k++) {
			const struct coll_row *c = &a->r[i].colls[k];
			if (!strcmp(coll_type_name((enum coll_type)c->type), type) && (!best || c->total_ns > best->total_ns))
				best = c;
		}
	return best;
}

static void next_line(struct answer *s, const struct analysis *a, const struct diagnosis *d)
{
	const struct whatif *w = ok_whatif(a);
	const struct whatif_fix *best = w ? whatif_best(w) : NULL;
	if (best && whatif_nothing(w, best->gain_ms))
		best = NULL;
	const char *v = w && w->verdict ? w->verdict : "";
	double L = (double)d->late_lateness_ns, H = (double)d->late_host_excess_ns, B = (double)d->late_busy_excess_ns;
	int late_host = d->late_rank >= 0 && L > 0 && H >= 0.5 * L && H >= B;
	int late_gpu = d->late_rank >= 0 && L > 0 && B >= 0.5 * L && !late_host;
	struct buf b = { .n = 0 };
	size_t n = best ? strlen(best->what) : 0;
	if (best && (!strcmp(best->what, "host launch gaps") || (best->rank >= 0 && strstr(v, "its host is the cause")))) {
		bput(&b, "the host launches too slowly: capture the step in CUDA graphs (torch.cuda.graphs, torch.compile "
		     "mode=\"reduce-overhead\"), launch fewer and larger kernels (fusion), pin each rank's threads to "
		     "cores near its GPU (numactl, taskset) and keep other work off them");
		if (s->has_host) { /* the ranks with the most launch time first */
			int r1 = -1, r2 = -1;
			double h1 = -1, h2 = -1;
			for (size_t i = 0; i < w->nranks; i++) {
				double h = w->ranks[i].host_launch_ms;
				if (!(h > w->ranks[i].ideal_host_launch_ms + whatif_material_ms(w)))
					continue;
				if (h > h1) {
					r2 = r1, h2 = h1;
					r1 = w->ranks[i].rank, h1 = h;
				} else if (h > h2) {
					r2 = w->ranks[i].rank, h2 = h;
				}
			}
			if (r1 >= 0 && r2 >= 0)
				bput(&b, "; ranks %d and %d first (%.2f and %.2f ms of launches a step)", r1, r2, h1, h2);
			else if (r1 >= 0)
				bput(&b, "; rank %d first (%.2f ms of launches a step)", r1, h1);
		}
	} else if (best && ((best->rank >= 0 && strstr(v, "its GPU work is the cause")) ||
			    (is_op_fix(w, best) && (n < 9 || strcmp(best->what + n - 9, " transfer"))))) {
		if (best->rank >= 0)
			bput(&b, "rank %d's GPU is slower than its peers': compare its top kernels with a healthy rank's (the "
			     "detail's \"top kernels by total time\", --csv kernels.csv), and its clocks, power and "
			     "temperature (nvidia-smi -q -d CLOCK,POWER,TEMPERATURE)", best->rank);
		else
			bput(&b, "%s kernels differ between ranks: compare the slow ranks' top kernels with a healthy "
			     "rank's (the detail's \"top kernels by total time\", --csv kernels.csv)", best->what);
	} else if (best && n > 9 && !strcmp(best->what + n - 9, " transfer")) {
		char type[64];
		snprintf(type, sizeof(type), "%.*s", (int)(n - 9), best->what);
		const struct coll_row *c = coll_of(a, type);
		bput(&b, "the %s's transfer is slower than it needs to be", type);
		if (c && isfinite(c->busbw_gbps))
			bput(&b, ": its bus bandwidth is %.1f GB/s (transfer time, %llu-byte calls)", c->busbw_gbps,
			     (unsigned long long)c->bytes);
		bput(&b, "; compare it with what the link gives (nccl-tests on the same GPUs), try NCCL_ALGO/NCCL_PROTO "
		     "and larger messages (bucket sizes)");
	} else if (best && best->ranks) {
		bput(&b, "ranks %s are slower together (a stage, replica or group): compare their top kernels and launch "
		     "gaps with the other ranks'", best->ranks);
	} else if (w && !strncmp(v, "not conclusive", 14)) {
		bput(&b, "the replay cannot weigh a fix here: %.3g ms a step are delays the trace does not explain (a "
		     "dependency or host work it does not record); a trace with the host side (Kineto CPU ops and "
		     "runtime calls, nsys CUDA API) explains more", w->unexplained_ms);
	} else if (late_host) {
		bput(&b, "rank %d's host launches too slowly: CUDA graphs, fewer and larger kernels, its threads pinned "
		     "near its GPU (numactl, taskset)", d->late_rank);
	} else if (late_gpu) {
		bput(&b, "rank %d's GPU has more to do than its peers': compare its top kernels with a healthy rank's",
		     d->late_rank);
	} else if (d->kind == DIAG_EXPOSED_COMM) {
		bput(&b, "communication is exposed: start it earlier beside compute (FSDP prefetch, DDP bucket sizes, "
		     "its own stream), or make it faster (the collectives' bus bandwidth in the detail)");
	} else if (d->kind == DIAG_HOST_BOUND) {
		bput(&b, "the host launches too slowly: CUDA graphs, fewer and larger kernels, threads pinned near the GPU "
		     "(numactl, taskset)");
	} else if (w) {
		bput(&b, "no fix is worth more than the noise floor: the detail below has every figure");
	} else {
		bput(&b, "the detail below has every figure");
	}
	add(s, "next", "%s", b.b);
}

/* ---- one run ------------------------------------------------------------------------------ */

void answer_build(const struct analysis *a, struct answer *s)
{
	memset(s, 0, sizeof(*s));
	struct diagnosis d;
	analysis_diagnose(a, &d);
	const struct whatif *w = ok_whatif(a);
	struct job_step js = analysis_job_step(a);
	snprintf(s->title, sizeof(s->title), "%zu rank%s", a->n, a->n == 1 ? "" : "s");
	if (a->fr && a->fr->done) { /* a hang leads: the Flight Recorder's verdict and where it starts */
		const struct fr_result *h = &a->fr->res;
		char dn[64];
		snprintf(dn, sizeof(dn), "%llu Flight Recorder dump%s", (unsigned long long)h->dumps, h->dumps == 1 ? "" : "s");
		if (a->n)
			snprintf(s->title, sizeof(s->title), "%zu rank%s, %s", a->n, a->n == 1 ? "" : "s", dn);
		else
			snprintf(s->title, sizeof(s->title), "%s", dn);
		add(s, "hang", "%s", h->verdict ? h->verdict : "n/a");
		for (size_t c = 0; c < h->nculprits && c < 2; c++)
			add(s, c ? "" : "where", "rank %d: %s%s", h->culprits[c].rank, h->culprits[c].why,
			    c == 1 && h->nculprits > 2 ? " (and more: the hang section)" : "");
		if (!a->n) {
			add(s, "next", "the hang section below: each divergent group's first divergent op, the ranks missing "
			    "or behind, the culprits' last completed ops and their frames");
			return;
		}
	}

	/* the step and its noise floor */
	struct buf b = { .n = 0 };
	if (w) {
		bput(&b, "%.2f ms: the mean over %zu ranks of %zu step%s", w->measured_step_ms, a->n, w->steps_used,
		     w->steps_used == 1 ? "" : "s");
		if (w->nsteps && w->steps[0].number != INT64_MIN)
			bput(&b, w->nsteps > 1 ? " (%lld to %lld)" : " (%lld)", (long long)w->steps[0].number,
			     (long long)w->steps[w->nsteps - 1].number);
		bput(&b, " every rank has");
	} else if (js.steps) {
		bput(&b, "%.2f ms: the mean over %zu rank%s of %zu step%s", js.mean_ms, js.ranks, js.ranks == 1 ? "" : "s",
		     js.steps, js.steps == 1 ? "" : "s");
		if (js.first != INT64_MIN)
			bput(&b, js.first != js.last ? " (%lld to %lld)" : " (%lld)", (long long)js.first, (long long)js.last);
	} else {
		bput(&b, "%.2f ms: no step in the traces; the mean of the ranks' whole traces", js.mean_ms);
	}
	if (js.rank_steps > 1)
		bput(&b, "; a rank's step from %.2f to %.2f ms", js.min_ms, js.max_ms);
	int wr;
	double wms, wmed;
	size_t warm = analysis_warmup_left(a, &wr, &wms, &wmed);
	if (warm) /* a log from the first step: its warm-up is in the mean */
		bput(&b, "; warm-up left in: the first %zu kept step%s of a rank take%s more than twice its median (rank "
		     "%d: %.2f ms against %.2f ms); --skip-steps %zu leaves %s out", warm, warm > 1 ? "s" : "",
		     warm > 1 ? "" : "s", wr, wms, wmed, (size_t)(a->opts.skip_steps > 0 ? a->opts.skip_steps : 0) + warm,
		     warm > 1 ? "them" : "it");
	if (w) {
		bput(&b, "; noise floor %.2f ms (%s)", whatif_material_ms(w),
		     w->noise_floor_from ? w->noise_floor_from : "1 % of the step and the clock uncertainty");
		if (w->step_sem_ms > 0)
			bput(&b, "; the step's own spread %.2f ms (its standard error over the steps)", w->step_sem_ms);
	}
	add(s, "step", "%s", b.b);

	/* the verdict: the what-if's, else the diagnosis */
	if (w)
		add(s, "verdict", "%s", w->verdict ? w->verdict : "");
	else if (d.kind != DIAG_NONE)
		add(s, "verdict", "%s%s%s", d.headline, a->n > 1 && a->whatif && a->whatif->why ? " (no what-if: " : "",
		    a->n > 1 && a->whatif && a->whatif->why ? a->whatif->why : "");
	else
		add(s, "verdict", "nothing to weigh: no communication in the trace%s", a->n > 1 ? "s" : "");
	if (a->whatif && !a->whatif->ok && d.kind != DIAG_NONE && a->n > 1 && !a->whatif->why)
		add(s, "what-if", "not replayed");
	if (w)
		fix_lines(s, a, w);
	late_line(s, a, &d);
	rows(s, a, &d);
	next_line(s, a, &d);
}

/* ---- a comparison -------------------------------------------------------------------------- */

static const struct whatif_fix *fix_named(const struct whatif *w, const char *what)
{
	const struct whatif_fix *v[3] = { w->by_rank, w->by_group, w->by_op };
	size_t n[3] = { w->nby_rank, w->nby_group, w->nby_op };
	for (int k = 0; k < 3; k++)
		for (size_t q = 0; q < n[k]; q++)
			if (!strcmp(v[k][q].what, what))
				return &v[k][q];
	return NULL;
}

static void gain_text(struct buf *b, const struct whatif *w, const struct whatif_fix *f)
{
	if (!w || !f)
		bput(b, "n/a");
	else if (f->unknown && f->rank >= 0)
		bput(b, "ideal unknown");
	else if (whatif_nothing(w, f->gain_ms) || f->gain_ms < 0)
		bput(b, "nothing");
	else
		bput(b, "%.2f ms", f->gain_ms);
}

static void run_line(struct answer *s, const char *tag, const struct analysis *a)
{
	struct diagnosis d;
	analysis_diagnose(a, &d);
	const struct whatif *w = ok_whatif(a);
	struct buf b = { .n = 0 };
	bput(&b, "%s", w && w->verdict ? w->verdict : d.kind != DIAG_NONE ? d.headline : "no communication");
	if (d.late_rank >= 0)
		bput(&b, "; late rank %d (%.1f %% of the waiting)", d.late_rank, 100.0 * d.late_share);
	else if (d.has_cross_rank)
		bput(&b, "; no late rank");
	add(s, tag, "%s", b.b);
}

void answer_build_compare(const struct analysis *base, const struct analysis *x, const char *base_name,
			  const char *x_name, const struct cmp_result *c, struct answer *s)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->title, sizeof(s->title), "%s against the baseline %s", x_name, base_name);
	const struct cmp_fig *st = c->nfig ? &c->fig[0] : NULL;
	const struct whatif *wb = ok_whatif(base), *wx = ok_whatif(x);
	struct buf b = { .n = 0 };
	if (st && isfinite(st->base) && isfinite(st->value)) {
		bput(&b, "%.2f -> %.2f ms a step (%+.2f ms, %+.1f %%): %s", st->base, st->value, st->change_ms,
		     st->change_pct, c->speed);
		double fb = wb ? whatif_material_ms(wb) : NAN, fx = wx ? whatif_material_ms(wx) : NAN;
		if (isfinite(fb) && isfinite(fx))
			bput(&b, "; noise floors %.2f and %.2f ms: the change is %s them", fb, fx,
			     fabs(st->change_ms) > fmax(fb, fx) ? "beyond" : "within");
	} else {
		bput(&b, "n/a: a run has no step time");
	}
	add(s, "step", "%s", b.b);
	run_line(s, "baseline", base);
	run_line(s, "this run", x);
	/* the fixes worth something in either run, largest first, side by side */
	if (wb || wx) {
		struct buf f = { .n = 0 };
		size_t shown = 0;
		for (int side = 0; side < 2 && shown < 4; side++) {
			const struct whatif *w = side ? wx : wb;
			if (!w)
				continue;
			size_t n;
			const struct whatif_fix **v = fixes_by_gain(w, &n);
			for (size_t q = 0; q < n && shown < 4; q++) {
				if (whatif_nothing(w, v[q]->gain_ms) || v[q]->gain_ms < 0)
					break;
				if (side && wb && fix_named(wb, v[q]->what) && !whatif_nothing(wb, fix_named(wb, v[q]->what)->gain_ms))
					continue; /* shown with the baseline's */
				bput(&f, "%s%s ", shown ? "; " : "", v[q]->what);
				gain_text(&f, wb, wb ? fix_named(wb, v[q]->what) : NULL);
				bput(&f, " -> ");
				gain_text(&f, wx, wx ? fix_named(wx, v[q]->what) : NULL);
				shown++;
			}
			free(v);
		}
		if (shown)
			add(s, "fixes", "%s (gain a step if fixed, baseline -> this run)", f.b);
		else
			add(s, "fixes", "none is worth more than the noise floor in either run");
	}
	/* what changed most (directional figures with a verdict) */
	struct buf ch = { .n = 0 };
	size_t shown = 0;
	int used[CMP_MAX_FIGS] = { 0 };
	for (size_t k = 0; k < 3; k++) {
		int bi = -1;
		for (size_t q = 1; q < c->nfig; q++) {
			const struct cmp_fig *g = &c->fig[q];
			if (used[q] || !isfinite(g->change_ms) || (strcmp(g->verdict, "better") && strcmp(g->verdict, "worse") &&
								    strcmp(g->verdict, "lower") && strcmp(g->verdict, "higher")))
				continue;
			if (bi < 0 || fabs(g->change_ms) > fabs(c->fig[bi].change_ms))
				bi = (int)q;
		}
		if (bi < 0)
			break;
		used[bi] = 1;
		bput(&ch, "%s%s %+.3f ms (%s)", shown++ ? ", " : "", c->fig[bi].key, c->fig[bi].change_ms, c->fig[bi].verdict);
	}
	if (shown)
		add(s, "changed", "%s", ch.b);
	add(s, "next", "aorta analyze on either run for its own summary (late rank, host launch time per rank); "
	    "--per-rank for every rank's figures");
}

/* ---- printing ------------------------------------------------------------------------------ */

static void cell_ms(char *o, size_t n, double v)
{
	if (isfinite(v))
		snprintf(o, n, "%.2f ms", v);
	else
		snprintf(o, n, "n/a");
}

static void row_cells(const struct answer_row *x, char host[64], char ideal[32], char caused[64], char gain[64])
{
	cell_ms(ideal, 32, x->ideal_host_ms);
	if (isfinite(x->host_launch_ms) && isfinite(x->host_min_ms) && x->host_max_ms - x->host_min_ms >= 0.005)
		snprintf(host, 64, "%.2f ms (%.2f-%.2f)", x->host_launch_ms, x->host_min_ms, x->host_max_ms);
	else
		cell_ms(host, 64, x->host_launch_ms);
	if (isfinite(x->caused_ms))
		snprintf(caused, 64, "%.3f ms (%.1f %%)", x->caused_ms, 100.0 * x->caused_share);
	else
		snprintf(caused, 64, "n/a");
	if (x->unknown)
		snprintf(gain, 64, "ideal unknown");
	else if (x->nothing)
		snprintf(gain, 64, "nothing");
	else if (isfinite(x->gain_ms))
		snprintf(gain, 64, "%.2f ms (%.1f %%)", x->gain_ms, x->gain_pct);
	else
		snprintf(gain, 64, "n/a");
}

void answer_print(FILE *f, const struct answer *s)
{
	fprintf(f, "\n== summary: %s (the detail follows; --summary prints this alone, -v every rank)\n", s->title);
	size_t rows_at = s->nl; /* the rank rows go before "next" */
	for (size_t i = 0; i < s->nl; i++)
		if (!strcmp(s->l[i].tag, "next"))
			rows_at = i;
	for (size_t i = 0; i <= s->nl; i++) {
		if (i == rows_at && s->nrow) {
			fprintf(f, "   %-6s %-27s %-10s %-22s %s\n", "rank", "host launch a step (min-max)", "its ideal",
				"caused waiting", "fix gain");
			for (size_t r = 0; r < s->nrow; r++) {
				char h[64], id[32], c[64], g[64];
				row_cells(&s->row[r], h, id, c, g);
				if (s->row[r].note[0])
					fprintf(f, "   %-6d %-27s %-10s %-22s %-16s %s\n", s->row[r].rank, h, id, c, g, s->row[r].note);
				else
					fprintf(f, "   %-6d %-27s %-10s %-22s %s\n", s->row[r].rank, h, id, c, g);
			}
			if (s->more)
				fprintf(f, "   ... %zu more rank%s (-v, --csv ranks.csv, --json)\n", s->more, s->more == 1 ? "" : "s");
		}
		if (i < s->nl)
			fprintf(f, "   %-10s %s\n", s->l[i].tag, s->l[i].text);
	}
}

void answer_html(FILE *f, const struct answer *s)
{
	fputs("<table class=answer>\n", f);
	for (size_t i = 0; i < s->nl; i++) {
		fputs("<tr><th class=l>", f);
		html_escape(f, s->l[i].tag);
		fputs("</th><td class=l>", f);
		html_escape(f, s->l[i].text);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

void answer_html_ranks(FILE *f, const struct answer *s)
{
	if (!s->nrow)
		return;
	fputs("<table class=ranks><tr><th>rank</th><th>host launch a step (min-max)</th><th>its ideal (every launch gap "
	      "at its lower median across the ranks)</th><th>caused waiting (share)</th><th>fix gain a step</th>"
	      "<th class=l>note</th></tr>\n", f);
	for (size_t r = 0; r < s->nrow; r++) {
		char h[64], i[32], c[64], g[64];
		row_cells(&s->row[r], h, i, c, g);
		fprintf(f, "<tr><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td class=l>", s->row[r].rank, h, i,
			c, g);
		html_escape(f, s->row[r].note);
		fputs("</td></tr>\n", f);
	}
	if (s->more)
		fprintf(f, "<tr><td colspan=6 class=l>%zu more rank%s: aorta analyze -v, --csv, --json</td></tr>\n", s->more,
			s->more == 1 ? "" : "s");
	fputs("</table>\n", f);
}
