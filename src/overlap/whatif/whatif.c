/*
 * whatif.c - the what-if stage after the join (whatif_run): pipeline
 * stages and replicas, the steps every rank has, each rank's inputs, the
 * slots and first replays, the fixes and the verdict, in that order.
 */
#include "overlap/whatif/private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "base/pool.h"

int wi_rank_index(const struct analysis *a, int rank)
{
	size_t lo = 0, hi = a->n; /* a->r is sorted by rank */
	while (lo < hi) {
		size_t m = (lo + hi) / 2;
		if (a->r[m].rank < rank)
			lo = m + 1;
		else
			hi = m;
	}
	return lo < a->n && a->r[lo].rank == rank ? (int)lo : -1;
}

/* Pipeline stages from the send/recv peers: the ranks linked by them are
 * one replica; in each, the stage of a rank is its distance from the
 * replica's end rank (one peer) with the lowest rank, else from its lowest
 * rank.  stage[i] = -1 and replica[i] = -1 without point to point.
 * Returns the number of stages. */
static int find_stages(const struct analysis *a, int *stage, int *replica)
{
	int nst = 0, nrep = 0;
	int32_t *queue = xmalloc((a->n ? a->n : 1) * sizeof(*queue));
	for (size_t i = 0; i < a->n; i++)
		stage[i] = replica[i] = -1;
	for (size_t i = 0; i < a->n; i++) {
		if (replica[i] >= 0 || !a->r[i].npeers)
			continue;
		size_t qn = 0; /* the component, breadth first from i */
		queue[qn++] = (int32_t)i;
		replica[i] = nrep;
		for (size_t h = 0; h < qn; h++)
			for (size_t p = 0; p < a->r[queue[h]].npeers; p++) {
				int x = wi_rank_index(a, a->r[queue[h]].peers[p]);
				if (x >= 0 && replica[x] < 0) {
					replica[x] = nrep;
					queue[qn++] = x;
				}
			}
		int32_t root = queue[0];
		for (size_t h = 0; h < qn; h++)
			if (a->r[queue[h]].npeers == 1 && (a->r[root].npeers != 1 || queue[h] < root))
				root = queue[h];
		qn = 0;
		queue[qn++] = root;
		stage[root] = 0;
		for (size_t h = 0; h < qn; h++)
			for (size_t p = 0; p < a->r[queue[h]].npeers; p++) {
				int x = wi_rank_index(a, a->r[queue[h]].peers[p]);
				if (x >= 0 && stage[x] < 0 && replica[x] == nrep) {
					stage[x] = stage[queue[h]] + 1;
					if (stage[x] + 1 > nst)
						nst = stage[x] + 1;
					queue[qn++] = x;
				}
			}
		nrep++;
	}
	free(queue);
	return nst;
}

/* Step numbers every rank has, the first `skip` left out (none left out
 * when that would leave none); per rank the index of each in its steps. */
static void common_steps(struct whatif_ctx *c, int skip)
{
	const struct rank_result *r0 = &c->a->r[0];
	c->stepno = xmalloc((r0->nsteps ? r0->nsteps : 1) * sizeof(*c->stepno));
	c->sidx = xcalloc(c->n, sizeof(*c->sidx));
	for (size_t i = 0; i < c->n; i++)
		c->sidx[i] = xmalloc((r0->nsteps ? r0->nsteps : 1) * sizeof(int32_t));
	size_t m = 0;
	for (size_t q = 0; q < r0->nsteps; q++) {
		int64_t num = r0->steps[q].number;
		int all = 1;
		for (size_t i = 0; i < c->n && all; i++) {
			const struct rank_result *r = &c->a->r[i];
			int found = -1;
			for (size_t x = 0; x < r->nsteps && found < 0; x++)
				if (r->steps[x].number == num)
					found = (int)x;
			all = found >= 0;
			c->sidx[i][m] = found;
		}
		if (all)
			c->stepno[m++] = num;
	}
	size_t k0 = skip > 0 && (size_t)skip < m ? (size_t)skip : 0;
	for (size_t s = k0; s < m; s++) {
		c->stepno[s - k0] = c->stepno[s];
		for (size_t i = 0; i < c->n; i++)
			c->sidx[i][s - k0] = c->sidx[i][s];
	}
	c->nsteps = m - k0;
}

/* Rank i's inputs (ranks in parallel). */
static void free_task(void *arg, size_t w, size_t i)
{
	(void)w;
	struct whatif_ctx *c = arg;
	wi_rank_free(&c->k[i]);
	if (c->sidx)
		free(c->sidx[i]);
}

static void ctx_free(struct whatif_ctx *c)
{
	wi_workers_free(c);
	pool_for(c->nt, c->n, free_task, c);
	for (size_t cl = 0; c->cslot && cl <= c->n; cl++) {
		for (size_t q = 0; q < c->cslot[cl].nstr; q++)
			free(c->cslot[cl].at[q]);
		free(c->cslot[cl].at);
	}
	void *p[] = { c->k, c->g, c->gm, c->gmq, c->gmi, c->xideal, c->sm, c->sd, c->sg, c->sat, c->sn,
		      c->med_all_d, c->med_all_g, c->mid, c->csize, c->stepno, c->sidx, c->aord, c->ex, c->own, c->scls,
		      c->calign, c->cslot, c->crank, c->cr0, c->gbe, c->gbn };
	for (size_t q = 0; q < sizeof(p) / sizeof(p[0]); q++)
		free(p[q]);
	for (size_t i = 0; c->incomplete && i < c->n; i++)
		free(c->incomplete[i]);
	free(c->incomplete);
}

/* AORTA_TIMING=1: each phase's wall time on stderr (bench/whatif_cost). */
static void phase(const char *what)
{
	static struct timespec t0;
	static int on = -1;
	if (on < 0)
		on = getenv("AORTA_TIMING") != NULL;
	if (!on)
		return;
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	if (what)
		fprintf(stderr, "aorta: timing: what-if %s: %.3f ms\n", what,
			(double)(t.tv_sec - t0.tv_sec) * 1e3 + (double)(t.tv_nsec - t0.tv_nsec) / 1e6);
	t0 = t;
}

static void rk_task(void *arg, size_t w, size_t i)
{
	(void)w;
	wi_rank_init(arg, i);
}

/* The first pass's outputs; nodelay: the step without unexplained delays,
 * replayed as a lane of that pass (NULL: not there, nodelay_replay). */
struct first_out { struct whatif_ctx *c; struct whatif *w; const double *meas; double *rep, *rep_wend, *ideal, *nodelay,
		  *pooled; };

/* The context of analysis a (stage: each rank's pipeline stage, -1 when
 * none) and every rank's op tables, ranks on threads. */
static void ctx_init(struct whatif_ctx *c, struct analysis *a, const int *stage)
{
	c->a = a;
	c->n = a->n;
	c->k = xcalloc(a->n, sizeof(*c->k));
	c->nt = pool_threads(a->opts.threads);
	c->nw = c->nt < WORKERS_MAX ? c->nt : WORKERS_MAX;
	c->w = xcalloc(c->nw, sizeof(*c->w));
	c->csize = xcalloc(a->n + 1, sizeof(*c->csize));
	for (size_t i = 0; i < a->n; i++) {
		c->k[i].cls = stage[i] < 0 ? 0 : stage[i];
		c->csize[c->k[i].cls]++;
	}
	pool_for(c->nt, a->n, rk_task, c);
	for (size_t i = 0; i < a->n; i++)
		c->manystreams |= c->k[i].manystreams;
}

static void delays_task(void *arg, size_t w, size_t i)
{
	(void)w;
	wi_rank_delays(arg, i);
}

/* The job-wide step barriers, then each rank's delays (ranks on threads). */
static void ctx_delays(struct whatif_ctx *c)
{
	wi_job_barriers(c);
	pool_for(c->nt, c->n, delays_task, c);
	for (size_t i = 0; i < c->n; i++)
		c->unexplained += c->k[i].unexplained;
}

/* One of the first passes: worker x replays sc[0..n) into out[0..n). */
struct first_pass {
	struct whatif_ctx *c;
	size_t n;
	const struct scenario *sc;
	double **out;
	int replayed[LANES_MAX];
	size_t lane[LANES_MAX];
	size_t left;
};

static void first_pass_task(void *arg, size_t w, size_t x)
{
	(void)w;
	struct first_pass *p = (struct first_pass *)arg + x;
	struct replay_state *s = wi_worker(p->c, x, p->n);
	s->mlane = x ? -1 : 0; /* the unmodified replay in lane 0 of worker 0: its moves recorded */
	p->left = wi_replay_lanes(p->c, s, p->n, p->sc, p->out, p->replayed, p->lane);
}

/* The slots, then the first replays in one pass on worker 0 (replay_lanes):
 * the unmodified one (lane 0, with its comparison to the measured steps and
 * the critical path), the ideal one (lane 1) and the single-rank fixes
 * all_fixes will surely replay (rank_candidates with the material threshold
 * from the measured step, 3 % (REPRO_PCT) above; at most LANES_MAX - 2 of
 * them, all_fixes replays any other): *sp; with two workers or more the
 * early fixes in a pass of their own on worker 1, at the same time.  With
 * f->nodelay, the step without unexplained delays is a lane beside the
 * ideal (it changes times only, not the order ops start in); so is the
 * pooled ideal (f->pooled, set to NULL where no op is pooled). */
static void first_replays(struct whatif_ctx *c, struct first_out *f, struct early_fixes *sp)
{
	wi_build_slots(c);
	phase("slots");
	c->ex = xmalloc(c->n * sizeof(*c->ex));
	c->own = xmalloc(c->n * sizeof(*c->own));
	pool_for(c->nt, c->n, wi_excess_task, c);
	phase("each rank's excess");
	sp->rank = xmalloc(c->n * sizeof(int32_t));
	double lim = 0.01 * wi_mean(f->meas, c->nsteps) * (1 + REPRO_PCT / 100);
	double unc = (double)c->a->clock_spread_ns / 1e6;
	sp->n = wi_rank_candidates(c, sp->rank, lim > unc ? lim : unc);
	if (!wi_pool_build(c))
		f->pooled = NULL;
	struct scenario sc[LANES_MAX] = { { .type = SC_NONE, .single = -1 }, { .type = SC_ALL, .single = -1 } };
	double *out[LANES_MAX] = { f->rep, f->ideal };
	size_t b = 2; /* lanes before the early fixes */
	if (f->nodelay) {
		sc[b] = (struct scenario){ .type = SC_NONE, .single = -1, .nodelay = 1 };
		out[b++] = f->nodelay;
	}
	if (f->pooled) {
		sc[b] = (struct scenario){ .type = SC_POOL, .single = -1 };
		out[b++] = f->pooled;
	}
	if (sp->n > LANES_MAX - b)
		sp->n = LANES_MAX - b;
	sp->e = xcalloc(sp->n ? sp->n : 1, sizeof(*sp->e));
	size_t n = b + sp->n;
	uint8_t *mask[LANES_MAX] = { 0 };
	for (size_t x = 0; x < sp->n; x++) {
		int32_t ri = sp->rank[x];
		mask[x] = xcalloc(c->n, 1);
		mask[x][ri] = 1;
		sc[b + x] = (struct scenario){ .type = SC_SET, .mask = mask[x], .single = ri, .part = PART_DUR | PART_HOST };
		sp->e[x].steps = out[b + x] = xmalloc((c->nsteps ? c->nsteps : 1) * sizeof(double));
		sp->e[x].wend = xmalloc((c->nsteps ? c->nsteps : 1) * sizeof(double));
	}
	/* one pass of every lane, or with two workers the unmodified and ideal
	 * lanes on one and the early fixes on the other at once (the order ops
	 * start in is every pass's: the same figures) */
	struct first_pass fp[2] = { { c, n, sc, out, { 0 }, { 0 }, 0 }, { c, 0, sc + b, out + b, { 0 }, { 0 }, 0 } };
	size_t npass = 1;
	if (c->nw >= 2 && sp->n) {
		fp[0].n = b;
		fp[1].n = sp->n;
		npass = 2;
	}
	pool_for(npass, npass, first_pass_task, fp);
	wi_pool_free(c);
	phase("the first replays");
	struct replay_state *s = &c->w[0], *s1 = &c->w[npass - 1];
	const size_t *sl = npass == 2 ? fp[1].lane : fp[0].lane + b; /* the early fixes' lanes */
	wi_work_ends(c, s, fp[0].lane[0], f->rep_wend);
	wi_base_replay(c, s, fp[0].lane[0], f->w, f->meas, f->rep, fp[0].left);
	s->mlane = -1;
	for (size_t x = 0; x < sp->n; x++) {
		wi_work_ends(c, s1, sl[x], sp->e[x].wend);
		free(mask[x]);
	}
	c->rep = f->rep;
	c->rep_wend = f->rep_wend;
}

/* The step without the delays nothing explains (every lat beyond
 * LAT_MAX_NS taken out, per step; Lin et al.'s T_nodelay), replayed before
 * the others: where no rank has a launch and those delays cost less than
 * UNX_SHARE of the measured step (meas), on ranks the pipeline schedule
 * model holds for (optable.c), they are the launch delays of a trace
 * without a host, and every replay leaves them out
 * (c->nodelay_all), as the artifact of Lin et al. replays.  Where a rank
 * has a launch or no rank a schedule dependency, the delays stay in every
 * replay whatever this one gives: it is left to the first pass, as a lane
 * (*in_first; the same figures, one pass fewer). */
static double *nodelay_replay(struct whatif_ctx *c, const double *meas, int *in_first)
{
	double *nd = xmalloc((c->nsteps ? c->nsteps : 1) * sizeof(*nd));
	memcpy(nd, meas, c->nsteps * sizeof(*nd));
	*in_first = 0;
	if (!c->unexplained)
		return nd;
	int launches = 0;
	uint64_t sched = 0;
	for (size_t i = 0; i < c->n; i++)
		sched += c->k[i].ndepk[DEPK_SCHED];
	for (size_t i = 0; i < c->n && !launches; i++)
		for (size_t j = 0; j < c->k[i].n && !launches; j++)
			launches = (c->k[i].flags[j] & OPF_LAUNCH) != 0;
	if (launches || !sched) { /* the delays stay in every replay: a lane of the first pass */
		*in_first = 1;
		return nd;
	}
	struct scenario sc = { .type = SC_NONE, .single = -1, .nodelay = 1 };
	int replayed;
	size_t lane;
	double *out[1] = { nd };
	wi_replay_lanes(c, wi_worker(c, 0, LANES_MAX), 1, &sc, out, &replayed, &lane);
	double m = wi_mean(meas, c->nsteps), d = wi_mean(nd, c->nsteps);
	c->nodelay_all = m > 0 && m - d < UNX_SHARE * m;
	return nd;
}

/* The part of the ideal's gain that rests on guessed dependencies: the
 * ideal replayed with every guessed dependency left out (its op keeps its
 * measured delay after its stream, launch and barriers, so it no longer
 * moves with the op it was guessed to wait for) against the ideal, both
 * at most the replayed step (rep); 0 without a guess.  Were every guess
 * wrong, the ideal's gain would be off by this (reported beside the
 * noise floor, not in it: result.c).  One more replay: beyond
 * ALL_RANKS_MAX ranks not made (NaN), as the op types and the next-slowest
 * rank are pruned there (on 1,024 ranks it cost as much as the first pass:
 * bench/RESULTS.md "What-if cost"). */
static double guessed_gain(struct whatif_ctx *c, const double *rep, const double *ideal)
{
	uint64_t ng = 0;
	for (size_t i = 0; i < c->n; i++)
		ng += c->k[i].ndepk[DEPK_GUESS];
	if (!ng)
		return 0;
	if (c->n > ALL_RANKS_MAX)
		return NAN;
	double *nog = xmalloc((c->nsteps ? c->nsteps : 1) * sizeof(*nog));
	struct scenario sc = { .type = SC_ALL, .single = -1, .noguess = 1 };
	int replayed;
	size_t lane;
	double *out[1] = { nog };
	wi_replay_lanes(c, wi_worker(c, 0, LANES_MAX), 1, &sc, out, &replayed, &lane);
	double r = wi_mean(rep, c->nsteps), a = fmin(wi_mean(ideal, c->nsteps), r), b = fmin(wi_mean(nog, c->nsteps), r);
	free(nog);
	return fabs(b - a);
}

/* The figures of the step without unexplained delays (nd, freed). */
static void nodelay_figures(struct whatif_ctx *c, struct whatif *w, const double *meas, const double *rep, double *nd)
{
	w->nodelay_step_ms = wi_mean(nd, c->nsteps);
	double m = wi_mean(meas, c->nsteps), r = c->nodelay_all ? m : wi_mean(rep, c->nsteps);
	w->unexplained_step_ms = r > w->nodelay_step_ms ? r - w->nodelay_step_ms : 0;
	w->unexplained_step_share = m > 0 ? fmin(1, w->unexplained_step_ms / m) : 0;
	w->launch_delays_out = c->nodelay_all;
	free(nd);
}

/* The what-if of a (its skip: a->opts.skip_steps as it is now) into a->whatif. */
static void run(struct analysis *a)
{
	int skip = a->opts.skip_steps;
	phase(NULL);
	whatif_free(a->whatif);
	a->whatif = NULL;
	if (a->opts.what_if == WHATIF_SKIP) { /* analysis_rank kept no op table either */
		a->whatif = wi_none("skipped (--no-what-if)");
		return;
	}
	if (a->n < 2 || !a->clocks_aligned) {
		a->whatif = wi_none(a->n < 2 ? "one rank: nothing to replay across ranks"
				 : "no cross-rank figures (see no_cross_rank_reason)");
		return;
	}
	for (size_t i = 0; i < a->n; i++)
		if (!whatif_op_count(&a->r[i])) {
			a->whatif = wi_none("a rank has no op table (an analysis read back from JSON keeps none): "
					 "run analyze on the traces");
			return;
		}
	struct whatif *w = xcalloc(1, sizeof(*w));
	struct whatif_ctx c = { 0 };
	int *stage = xmalloc(a->n * sizeof(int)), *replica = xmalloc(a->n * sizeof(int));
	int nst = find_stages(a, stage, replica);
	ctx_init(&c, a, stage);
	phase("op tables");
	common_steps(&c, skip);
	if (!c.nsteps || c.manystreams) {
		ctx_free(&c);
		free(stage);
		free(replica);
		free(w);
		a->whatif = wi_none(c.manystreams ? "a rank has more than 65535 streams: more than the replay follows"
			       : "no step that every rank has");
		return;
	}
	ctx_delays(&c);
	wi_isolate_incomplete(&c); /* before the anchors and slots, which read the classes */
	wi_build_groups(&c);
	wi_build_anchors(&c);
	double *meas = xmalloc(c.nsteps * sizeof(double)), *rep = xmalloc(c.nsteps * sizeof(double));
	/* the measured windows: wi_rank_init cut them */
	for (size_t s = 0; s < c.nsteps; s++)
		meas[s] = wi_job_step(&c, NULL, 0, s) / 1e6;
	double *rep_wend = xmalloc(c.nsteps * sizeof(double)), *ideal = xmalloc(c.nsteps * sizeof(double));
	double *pooled = xmalloc(c.nsteps * sizeof(double));
	int nd_lane;
	double *nod = nodelay_replay(&c, meas, &nd_lane);
	struct first_out f = { &c, w, meas, rep, rep_wend, ideal, nd_lane ? nod : NULL, pooled };
	struct early_fixes sp;
	first_replays(&c, &f, &sp);
	phase("the critical path");
	nodelay_figures(&c, w, meas, rep, nod);
	w->guessed_ms = guessed_gain(&c, rep, ideal);
	wi_figures(&c, w, meas, rep, ideal);
	w->pooled_step_ms = f.pooled ? wi_mean(pooled, c.nsteps) : NAN;
	w->slowdown_pooled = w->pooled_step_ms > 0 ? w->measured_step_ms / w->pooled_step_ms : NAN;
	free(pooled);
	struct fix_eval *v;
	size_t nv;
	/* the ideal's gain over the complete steps (NAN with one step): an op
	 * type gains at most that there too (the verdict's rule) */
	double icg = 0;
	for (size_t s = 0; s + 1 < c.nsteps; s++)
		icg += rep[s] - ideal[s];
	icg = c.nsteps >= 2 ? icg / (double)(c.nsteps - 1) : NAN;
	wi_all_fixes(&c, w, stage, replica, nst, w->replay_step_ms, w->ideal_step_ms, icg, &sp, &v, &nv);
	for (size_t x = 0; x < sp.n; x++) { /* those all_fixes did not take */
		free(sp.e[x].steps);
		free(sp.e[x].wend);
	}
	free(sp.e);
	free(sp.rank);
	phase("fixes");
	wi_then_fix(&c, w, v, w->replay_step_ms);
	phase("the next-slowest rank");
	wi_rank_hosts(&c, w);
	phase("each rank's host launch time");
	wi_step_bests(&c, w, rep, ideal, v, nv);
	w->by_rank = wi_take_fixes(v, w->nby_rank);
	w->by_group = wi_take_fixes(v + w->nby_rank, w->nby_group);
	w->by_op = wi_take_fixes(v + w->nby_rank + w->nby_group, w->nby_op);
	wi_verdict(&c, w, whatif_best(w), w->replay_step_ms, v, nv);
	for (size_t q = 0; q < nv; q++) {
		free(v[q].steps);
		free(v[q].wend);
	}
	free(v);
	w->stage = stage;
	w->nstage = nst ? a->n : 0;
	if (!nst) {
		free(stage);
		w->stage = NULL;
	}
	free(replica);
	free(meas);
	free(rep);
	free(rep_wend);
	free(ideal);
	ctx_free(&c);
	phase("verdict and free");
	a->whatif = w;
}

void whatif_run(struct analysis *a)
{
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	run(a);
#ifdef __GLIBC__
	/* what the replay freed, given back: its workers' heaps would hold it
	 * while the outputs are written (bench/RESULTS.md "What-if cost") */
	malloc_trim(0);
#endif
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (getenv("AORTA_TIMING")) /* bench/whatif_cost */
		fprintf(stderr, "aorta: timing: what-if of %zu ranks: %.3f ms\n", a->n,
			(double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
}
