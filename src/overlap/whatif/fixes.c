/*
 * fixes.c - the fixes and their replays: each rank (the candidates
 * beyond ALL_RANKS_MAX), each pipeline stage and replica, each process
 * group, the stage balance and each op type, replayed at once on the
 * workers, each result in its own place.
 */
#include "overlap/whatif/private.h"
#include "base/stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/pool.h"

/* Replays fixes sc[0..n) (n <= the worker's lanes) at once into e[x]'s
 * per-step times and work ends. */
static void eval_replays(const struct whatif_ctx *c, struct replay_state *s, size_t n, const struct scenario *sc, struct fix_eval **e)
{
	double *out[LANES_MAX];
	int replayed[LANES_MAX];
	size_t lane[LANES_MAX];
	for (size_t x = 0; x < n; x++) {
		e[x]->steps = out[x] = xmalloc((c->nsteps ? c->nsteps : 1) * sizeof(double));
		e[x]->wend = xmalloc((c->nsteps ? c->nsteps : 1) * sizeof(double));
	}
	wi_replay_lanes(c, s, n, sc, out, replayed, lane);
	for (size_t x = 0; x < n; x++) {
		if (replayed[x])
			wi_work_ends(c, s, lane[x], e[x]->wend);
		else
			memcpy(e[x]->wend, c->rep_wend, c->nsteps * sizeof(double));
	}
}

/* Fix e's gain over the unmodified replay (rep_mean: its mean step, ms). */
static void eval_gain(const struct whatif_ctx *c, double rep_mean, struct fix_eval *e)
{
	e->f.step_ms_if_fixed = wi_mean(e->steps, c->nsteps);
	e->f.gain_ms = rep_mean - e->f.step_ms_if_fixed;
	e->f.gain_pct = rep_mean > 0 ? 100.0 * e->f.gain_ms / rep_mean : NAN;
	/* the per-step gains' standard error (c->rep: the unmodified replay's
	 * steps) over the complete steps: the last one's window ends at the
	 * trace's last op, where a host gap before the next step gains
	 * nothing (with three steps or more) */
	size_t n = c->nsteps >= 3 ? c->nsteps - 1 : c->nsteps;
	e->f.gain_sem_ms = 0;
	if (c->rep && n >= 2) {
		double *g = xmalloc(n * sizeof(*g));
		for (size_t q = 0; q < n; q++)
			g[q] = c->rep[q] - e->steps[q];
		e->f.gain_sem_ms = std_error(g, n);
		free(g);
	}
}

static struct fix_eval *add_fix(struct fix_eval **v, size_t *n, size_t *cap, const char *what, int rank, char *ranks)
{
	GROW(*v, *cap, *n + 1);
	struct fix_eval *e = &(*v)[(*n)++];
	memset(e, 0, sizeof(*e));
	e->f.what = xstrdup(what);
	e->f.rank = rank;
	e->f.ranks = ranks;
	e->f.then_rank = -1;
	e->f.then_gain_ms = e->f.then_gain_pct = NAN;
	return e;
}

void wi_add_job(struct fix_jobs *j, size_t e, struct scenario sc, const uint8_t *mask, size_t n)
{
	GROW(j->v, j->cap, j->n + 1);
	uint8_t *m = NULL;
	if (mask) {
		m = xmalloc(n ? n : 1);
		memcpy(m, mask, n);
	}
	sc.mask = m;
	j->v[j->n++] = (struct fix_job){ sc, m, NULL, e };
}

struct fix_batch { struct whatif_ctx *c; struct fix_eval *v; const struct fix_job *j; double rep_mean; };

static void fix_task(void *arg, size_t w, size_t q)
{
	struct fix_batch *f = arg;
	struct fix_eval *e = &f->v[f->j[q].e];
	eval_replays(f->c, wi_worker(f->c, w, 1), 1, &f->j[q].sc, &e);
	eval_gain(f->c, f->rep_mean, e);
}

/* The ideals of the jobs that fix a set of several ranks (their medians
 * outside the set), found at once. */
static void job_medians(const struct whatif_ctx *c, struct fix_jobs *j)
{
	size_t n = 0;
	const uint8_t **masks = xmalloc((j->n ? j->n : 1) * sizeof(*masks));
	int64_t **md = xmalloc((j->n ? j->n : 1) * sizeof(*md));
	for (size_t q = 0; q < j->n; q++) {
		struct fix_job *jb = &j->v[q];
		if (jb->sc.type != SC_SET || jb->sc.single >= 0)
			continue;
		jb->md = xmalloc((c->nslot ? 2 * c->nslot : 1) * sizeof(*jb->md));
		jb->sc.md = jb->md;
		jb->sc.mg = jb->md + c->nslot;
		masks[n] = jb->mask;
		md[n++] = jb->md;
	}
	wi_set_medians(c, masks, md, n);
	free(masks);
	free(md);
}

/* Replays every job into v[job's e] and empties the list. */
void wi_run_jobs(struct whatif_ctx *c, struct fix_eval *v, struct fix_jobs *j, double rep_mean)
{
	job_medians(c, j);
	struct fix_batch f = { c, v, j->v, rep_mean };
	pool_for(c->nw, j->n, fix_task, &f);
	for (size_t q = 0; q < j->n; q++) {
		free(j->v[q].mask);
		free(j->v[q].md);
	}
	free(j->v);
	memset(j, 0, sizeof(*j));
}

static char *rank_list(const struct analysis *a, const int *of, int which)
{
	size_t cap = 16, len = 0;
	char *s = xmalloc(cap);
	s[0] = 0;
	for (size_t i = 0; i < a->n; i++) {
		if (of[i] != which)
			continue;
		char b[24];
		int n = snprintf(b, sizeof(b), "%s%d", len ? "," : "", a->r[i].rank);
		GROW(s, cap, len + (size_t)n + 1);
		memcpy(s + len, b, (size_t)n + 1);
		len += (size_t)n;
	}
	return s;
}

/* Rank i's excess over its peers (ranks in parallel): of every op, its
 * duration and host gap above their peers' medians; a first launch later
 * than its peers' (the anchor) can shift every step of the rank: at most
 * that much per step.  c->ex[i]: every op's duration but unmatched
 * communication's (what a rank fix can take off: wi_rank_candidates);
 * c->own[i]: its compute and copies only -- a matched collective's
 * duration is waiting and transfer, and a rank that waits for a slow peer
 * is not slow itself (the next-slowest rank: wi_then_fix). */
void wi_excess_task(void *arg, size_t w, size_t i)
{
	(void)w;
	struct whatif_ctx *c = arg;
	const struct rank_input *k = &c->k[i];
	double e = 0, own = 0;
	int32_t *pos = xcalloc(k->nstr ? k->nstr : 1, sizeof(*pos));
	for (size_t j = 0; j < k->n; j++) {
		size_t q = op_stream(k, j);
		int32_t slot = op_slot(c, k, j, q, pos[q]++);
		int64_t d = meas_e(k, j) - meas_s(k, j), g = op_gap(k, j);
		int64_t md = wi_peer_median(c, slot, d, 0), mg = wi_peer_median(c, slot, g, 1);
		double dx = (double)(d > md ? d - md : 0), gx = (double)(g > mg ? g - mg : 0);
		if (!(k->flags[j] & OPF_UCOMM)) /* unmatched communication keeps its duration (wi_dur_fixed) */
			e += dx;
		if (!(k->flags[j] & (OPF_UCOMM | OPF_CALL)))
			own += dx;
		e += gx;
		own += gx;
	}
	free(pos);
	if (k->a0 != UNSET && k->a0 > k->ma0) {
		e += (double)(k->a0 - k->ma0) * (double)c->nsteps;
		own += (double)(k->a0 - k->ma0) * (double)c->nsteps;
	}
	c->ex[i] = e;
	c->own[i] = own;
}

/* The ranks fixed one by one: all up to ALL_RANKS_MAX, else at most the
 * RANK_FIXES with the largest excess of duration and host gap over their
 * peers' medians, of those whose excess per step could make a material
 * gain (beyond lim_ms). */
size_t wi_rank_candidates(const struct whatif_ctx *c, int32_t *out, double lim_ms)
{
	if (c->n <= ALL_RANKS_MAX) {
		for (size_t i = 0; i < c->n; i++)
			out[i] = (int32_t)i;
		return c->n;
	}
	double *ex = xmalloc(c->n * sizeof(*ex));
	memcpy(ex, c->ex, c->n * sizeof(*ex));
	/* a fix only lowers a path by what it takes off its ops, so a rank
	 * whose excess per step is within lim_ms cannot gain more: left out */
	double lim_ns = lim_ms * 1e6 * (double)c->nsteps;
	size_t m = 0;
	for (; m < RANK_FIXES; m++) {
		int best = -1;
		for (size_t i = 0; i < c->n; i++)
			if (ex[i] >= 0 && (best < 0 || ex[i] > ex[best]))
				best = (int)i;
		if (best < 0 || ex[best] <= lim_ns)
			break;
		out[m] = best;
		ex[best] = -1;
	}
	free(ex);
	return m;
}

/* Process groups as group fixes (docs/metrics.md "What-if"): where the
 * traces show two or more process groups of one kind (one description,
 * trailing digits and '_' aside, and one number of members: the TP groups,
 * the replicas' DP groups), each is fixed in turn, named after its
 * description, else its name ("group tp0", "group pg 1"), unless its ranks
 * are those of a group already fixed (a stage, a replica).  Members: the
 * ranks the trace lists (Kineto "Process Group Ranks"), else the ranks
 * read that call the group.  A group with a listed member not read, or
 * holding every rank read, is no fix; nor are kinds of more than
 * ALL_RANKS_MAX groups (a replay each). */
struct pg_info {
	const char *name, *desc;
	uint8_t *mask;               /* [n]: members (listed, else callers) */
	size_t cnt;
	int listed, bad, kind;
	size_t stem;                 /* length of desc without trailing digits and '_' */
};

static int pg_desc_named(const char *d)
{
	return *d && strcmp(d, "undefined") != 0;
}

static void pg_fixes(struct whatif_ctx *c, struct fix_eval **v, size_t *n, size_t *cap, size_t first, struct fix_jobs *jobs)
{
	const struct analysis *a = c->a;
	struct pg_info *g = NULL;
	size_t ng = 0, gcap = 0;
	for (size_t i = 0; i < a->n; i++)
		for (size_t k = 0; k < a->r[i].ncolls; k++) {
			const struct coll_row *row = &a->r[i].colls[k];
			if (!row->pg || !*row->pg)
				continue;
			size_t q = 0;
			while (q < ng && strcmp(g[q].name, row->pg) != 0)
				q++;
			if (q == ng) {
				GROW(g, gcap, ng + 1);
				g[ng++] = (struct pg_info){ row->pg, row->pg_desc ? row->pg_desc : "", xcalloc(a->n, 1), 0, 0, 0, -1, 0 };
			}
			if (row->pg_ranks && *row->pg_ranks && !g[q].listed) {
				memset(g[q].mask, 0, a->n);
				g[q].listed = 1;
				for (const char *p = row->pg_ranks; *p;) {
					char *e;
					long r = strtol(p, &e, 10);
					if (e == p)
						break;
					int x = r >= 0 && r <= INT32_MAX ? wi_rank_index(a, (int)r) : -1;
					if (x < 0)
						g[q].bad = 1; /* a member not read: the group cannot be fixed whole */
					else
						g[q].mask[x] = 1;
					p = *e == ',' ? e + 1 : e;
				}
			} else if (!g[q].listed) {
				g[q].mask[i] = 1;
			}
		}
	for (size_t q = 0; q < ng; q++) {
		for (size_t i = 0; i < a->n; i++)
			g[q].cnt += g[q].mask[i];
		size_t l = strlen(g[q].desc);
		while (l && (g[q].desc[l - 1] == '_' || (g[q].desc[l - 1] >= '0' && g[q].desc[l - 1] <= '9')))
			l--;
		g[q].stem = l;
	}
	for (size_t q = 0; q < ng; q++) {
		/* a group of one rank is that rank's fix; one of every rank, the ideal's */
		if (g[q].bad || g[q].cnt < 2 || g[q].cnt >= a->n || g[q].kind >= 0)
			continue;
		size_t nk = 0;
		int distinct = 1; /* every description of the kind names one group */
		for (size_t p = q; p < ng; p++) {
			if (g[p].bad || g[p].cnt != g[q].cnt || g[p].kind >= 0 || g[p].stem != g[q].stem ||
			    strncmp(g[p].desc, g[q].desc, g[q].stem) != 0)
				continue;
			g[p].kind = (int)q;
			nk++;
			distinct &= pg_desc_named(g[p].desc);
			for (size_t o = q; o < p; o++)
				if (g[o].kind == (int)q && strcmp(g[o].desc, g[p].desc) == 0)
					distinct = 0;
		}
		if (nk < 2 || nk > ALL_RANKS_MAX)
			continue;
		for (size_t p = q; p < ng; p++) {
			if (g[p].kind != (int)q)
				continue;
			int *of = xmalloc(a->n * sizeof(*of));
			for (size_t i = 0; i < a->n; i++)
				of[i] = g[p].mask[i] ? 1 : 0;
			char *ranks = rank_list(a, of, 1), b[160];
			free(of);
			int dup = 0;
			for (size_t e = first; e < *n && !dup; e++)
				dup = (*v)[e].f.ranks && strcmp((*v)[e].f.ranks, ranks) == 0;
			if (dup) {
				free(ranks);
				continue;
			}
			if (distinct && pg_desc_named(g[p].desc))
				snprintf(b, sizeof(b), "group %.60s", g[p].desc);
			else
				snprintf(b, sizeof(b), "group %.60s %.60s", pg_desc_named(g[p].desc) ? g[p].desc : "pg",
					 g[p].name);
			add_fix(v, n, cap, b, -1, ranks);
			struct scenario sc = { .type = SC_SET, .single = -1, .part = PART_DUR | PART_HOST };
			wi_add_job(jobs, *n - 1, sc, g[p].mask, a->n);
		}
	}
	for (size_t q = 0; q < ng; q++)
		free(g[q].mask);
	free(g);
}

static int spec_take(struct early_fixes *sp, int32_t rank, const struct whatif_ctx *c, double rep_mean, struct fix_eval *e)
{
	for (size_t x = 0; sp && x < sp->n; x++)
		if (sp->rank[x] == rank && sp->e[x].steps) {
			e->steps = sp->e[x].steps;
			e->wend = sp->e[x].wend;
			sp->e[x].steps = sp->e[x].wend = NULL;
			eval_gain(c, rep_mean, e);
			return 1;
		}
	return 0;
}

void wi_all_fixes(struct whatif_ctx *c, struct whatif *w, const int *stage, const int *replica, int nst,
		      double rep_mean, double ideal_mean, double ideal_complete, struct early_fixes *sp,
		      struct fix_eval **pv, size_t *pn)
{
	struct fix_eval *v = NULL;
	size_t n = 0, cap = 0;
	struct fix_jobs jobs = { 0 };
	uint8_t *mask = xcalloc(c->n, 1);
	size_t *cmask = xcalloc(c->n + 1, sizeof(*cmask));
	int32_t *cand = xmalloc(c->n * sizeof(*cand));
	double lim = whatif_material_ms(w); /* rep_mean is w->replay_step_ms */
	size_t nc = wi_rank_candidates(c, cand, lim);
	char b[64];
	for (size_t q = 0; q < nc; q++) {
		snprintf(b, sizeof(b), "rank %d", c->a->r[cand[q]].rank);
		add_fix(&v, &n, &cap, b, c->a->r[cand[q]].rank, NULL);
		if (c->incomplete && c->incomplete[cand[q]]) /* its ideal is unknown (wi_isolate_incomplete) */
			v[n - 1].f.unknown = xstrdup(c->incomplete[cand[q]]);
		if (spec_take(sp, cand[q], c, rep_mean, &v[n - 1]))
			continue;
		mask[cand[q]] = 1;
		struct scenario sc = { .type = SC_SET, .single = cand[q], .part = PART_DUR | PART_HOST };
		wi_add_job(&jobs, n - 1, sc, mask, c->n);
		mask[cand[q]] = 0;
	}
	w->nby_rank = n;
	int nrep = 0;
	for (size_t i = 0; i < c->n; i++)
		if (replica[i] + 1 > nrep)
			nrep = replica[i] + 1;
	for (int pass = 0; pass < 2; pass++) {
		const int *of = pass ? replica : stage;
		int cnt = pass ? nrep : nst;
		for (int g = 0; cnt >= 2 && g < cnt; g++) {
			for (size_t i = 0; i < c->n; i++)
				mask[i] = of[i] == g;
			snprintf(b, sizeof(b), "%s %d", pass ? "replica" : "stage", g);
			struct fix_eval *e = add_fix(&v, &n, &cap, b, -1, rank_list(c->a, of, g));
			struct scenario sc = { .type = SC_SET, .single = -1, .part = PART_DUR | PART_HOST };
			wi_add_job(&jobs, n - 1, sc, mask, c->n);
			/* a set that holds every rank of a work class has no peer for
			 * that class's ops: their ideal is the set's own lower median */
			memset(cmask, 0, (c->n + 1) * sizeof(*cmask));
			for (size_t i = 0; i < c->n; i++)
				cmask[c->k[i].cls] += mask[i] != 0;
			for (size_t i = 0; i < c->n && !e->f.unknown; i++)
				if (mask[i] && cmask[c->k[i].cls] == c->csize[c->k[i].cls]) {
					char u[200];
					snprintf(u, sizeof(u), "no rank outside %s runs its ops: its ideal is the lower "
						 "median of its own ranks, so a slowdown all of them carry is not seen", b);
					e->f.unknown = xstrdup(u);
				}
		}
	}
	pg_fixes(c, &v, &n, &cap, w->nby_rank, &jobs);
	if (nst >= 2 && wi_balance_build(c)) { /* a pipeline: every stage given the same work */
		int *zero = xcalloc(c->n, sizeof(*zero));
		add_fix(&v, &n, &cap, "the stage balance", -1, rank_list(c->a, zero, 0));
		struct scenario sc = { .type = SC_BAL, .single = -1 };
		wi_add_job(&jobs, n - 1, sc, NULL, 0);
		free(zero);
	}
	w->nby_group = n - w->nby_rank;
	int present[WC__N] = { 0 };
	for (size_t i = 0; i < c->n; i++) {
		for (size_t j = 0; j < c->k[i].n; j++)
			present[wi_op_cat(c, &c->k[i], j)] = 1;
		present[WC_HOST] |= c->k[i].nh > 0; /* an op with a launch (l != UNSET) */
	}
	/* An op type's fix sets its ops to the ideal's values and leaves the rest
	 * as measured, and the replay is monotone in every duration, gap and
	 * transfer, so it gains at most what the ideal gains, over all steps
	 * and over the complete steps: beyond ALL_RANKS_MAX ranks, op types are
	 * not replayed when either is not material. */
	int cats = c->n <= ALL_RANKS_MAX || (rep_mean - ideal_mean > lim && !(ideal_complete <= lim));
	for (int cat = 0; cats && cat < WC__N; cat++) {
		if (!present[cat] || cat >= WC_UCOLL) /* unmatched communication: nothing to fix it to */
			continue;
		add_fix(&v, &n, &cap, wi_cat_name(cat, b, sizeof(b)), -1, NULL);
		struct scenario sc = { .type = SC_CAT, .single = -1, .cat = cat };
		wi_add_job(&jobs, n - 1, sc, NULL, 0);
	}
	w->nby_op = n - w->nby_rank - w->nby_group;
	wi_run_jobs(c, v, &jobs, rep_mean);
	wi_balance_free(c);
	free(cmask);
	free(mask);
	free(cand);
	*pv = v;
	*pn = n;
}

void wi_then_fix(struct whatif_ctx *c, struct whatif *w, struct fix_eval *v, double rep_mean)
{
	struct fix_eval *b = NULL;
	for (size_t q = 0; q < w->nby_rank; q++) {
		v[q].f.then_rank = -1;
		v[q].f.then_gain_ms = v[q].f.then_gain_pct = NAN;
		if (!v[q].f.unknown && (!b || v[q].f.gain_ms > b->f.gain_ms))
			b = &v[q];
	}
	if (!b || c->n < 3)
		return;
	/* fixing two ranks gains at most what fixing every rank (the ideal)
	 * gains, the replay being monotone: beyond ALL_RANKS_MAX ranks not
	 * replayed when that is not materially more than the fix alone */
	if (c->n > ALL_RANKS_MAX && !(w->replay_step_ms - w->ideal_step_ms - b->f.gain_ms > whatif_material_ms(w)))
		return;
	int ri = wi_rank_index(c->a, b->f.rank), qi = -1;
	double qe = 0;
	for (size_t i = 0; i < c->n; i++) {
		if ((int)i == ri || (c->incomplete && c->incomplete[i]))
			continue;
		double e = c->own[i];
		if (qi < 0 || e > qe) {
			qi = (int)i;
			qe = e;
		}
	}
	if (ri < 0 || qi < 0 || !(qe > 0))
		return;
	uint8_t *mask = xcalloc(c->n, 1);
	mask[ri] = mask[qi] = 1;
	struct fix_eval e = { 0 };
	struct fix_jobs j = { 0 };
	wi_add_job(&j, 0, (struct scenario){ .type = SC_SET, .single = -1, .part = PART_DUR | PART_HOST }, mask, c->n);
	wi_run_jobs(c, &e, &j, rep_mean);
	b->f.then_rank = c->a->r[qi].rank;
	b->f.then_gain_ms = e.f.gain_ms;
	b->f.then_gain_pct = e.f.gain_pct;
	free(e.steps);
	free(e.wend);
	free(mask);
}
