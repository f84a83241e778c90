/*
 * dist_cpu.c - the CPU executor of dist.h schedules (see dist_cpu.h).
 *
 * Design.  One function per action kind, dispatched in a loop; each names
 * the step, action and group in its phase string, which a collective's
 * timeout repeats.  Memory follows the schedule for real: ALL_GATHER
 * allocates the group's gathered buffer and FREE releases it, BACKWARD
 * allocates the unsharded gradient and WAIT_RS releases it, so a schedule
 * that computes on a freed group fails (and ASan sees any stray use).
 * Without sharding, compute reads the persistent replica (the local buffer
 * IS the flat layout) and writes gradients in place, where the buckets'
 * all-reduces run (DDP's gradient_as_bucket_view).
 */
#include "train/dist_cpu.h"
#include "kernels/ops.h"
#include "kernels/rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum aorta_status dist_cpu_init(struct dist_cpu *x, const struct model_dims *d, const struct param_layout *lay,
				const struct dist_plan *pl, struct comm *c, int local_batch,
				const float *init_params, const struct dist_adamw *opt, struct aorta_error *e)
{
	memset(x, 0, sizeof(*x));
	if (c->size != pl->world || c->rank != pl->rank || c->node_size != pl->node_size)
		return aorta_fail(e, AORTA_EINTERNAL, NULL, 0, -1,
				  "plan for rank %d of %d (node %d) given a communicator for rank %d of %d (node %d)",
				  pl->rank, pl->world, pl->node_size, c->rank, c->size, c->node_size);
	if (pl->ngroups != lay->ngroups)
		return aorta_fail(e, AORTA_EINTERNAL, NULL, 0, -1, "plan has %d groups, layout %d", pl->ngroups,
				  lay->ngroups);
	x->ms = cpu_model_state_create(d, lay, local_batch);
	if (!x->ms)
		return aorta_fail(e, AORTA_EUSAGE, NULL, 0, -1, "invalid local batch %d", local_batch);
	x->d = d;
	x->lay = lay;
	x->pl = pl;
	x->comm = c;
	x->opt = *opt;
	size_t n = pl->local_total ? pl->local_total : 1;
	x->params = xcalloc(n, sizeof(float));
	x->grads = xcalloc(n, sizeof(float));
	x->m = xcalloc(n, sizeof(float));
	x->v = xcalloc(n, sizeof(float));
	x->full = xcalloc((size_t)pl->ngroups, sizeof(float *));
	x->fgrad = xcalloc((size_t)pl->ngroups, sizeof(float *));
	x->ag = xcalloc((size_t)pl->ngroups, sizeof(*x->ag));
	x->rs = xcalloc((size_t)pl->ngroups, sizeof(*x->rs));
	x->ar = xcalloc((size_t)(pl->nbuckets ? pl->nbuckets : 1), sizeof(*x->ar));
	x->rs16 = xcalloc((size_t)pl->ngroups, sizeof(*x->rs16));
	x->ar16 = xcalloc((size_t)(pl->nbuckets ? pl->nbuckets : 1), sizeof(*x->ar16));

	/* sync_module_states: rank 0's parameters everywhere, then my shards */
	float *full = xmalloc(lay->total * sizeof(float));
	memcpy(full, init_params, lay->total * sizeof(float));
	enum aorta_status st = comm_broadcast(comm_group(c, COMM_PG_WORLD), full, lay->total, 0, NULL,
					      "init broadcast of the parameters", e);
	if (!st)
		for (int g = 0; g < pl->ngroups; g++) {
			const struct dist_shard *sh = &pl->g[g];
			memcpy(x->params + sh->local_off, full + sh->off + sh->begin, sh->valid * sizeof(float));
		}
	free(full);
	if (st)
		dist_cpu_release(x);
	return st;
}

void dist_cpu_release(struct dist_cpu *x)
{
	if (!x->pl)
		return;
	for (int g = 0; g < x->pl->ngroups; g++) {
		free(x->full[g]);
		free(x->fgrad[g]);
		if (x->rs16)
			free(x->rs16[g]);
	}
	for (int b = 0; x->ar16 && b < x->pl->nbuckets; b++)
		free(x->ar16[b]);
	free(x->rs16);
	free(x->ar16);
	free(x->full);
	free(x->fgrad);
	free(x->ag);
	free(x->rs);
	free(x->ar);
	free(x->params);
	free(x->grads);
	free(x->m);
	free(x->v);
	free(x->stress_a);
	free(x->stress_b);
	free(x->stress_h);
	cpu_model_state_free(x->ms);
	memset(x, 0, sizeof(*x));
}

/* ---- one step ------------------------------------------------------------ */

struct step_ctx {
	struct dist_cpu *x;
	const struct batch *b;           /* the step's micro-batches */
	uint64_t seed;
	int training;
	float lr;
	float gscale;
	float loss_sum;                  /* losses of the micro-batches done */
	double norm;
	int live, grad_live;
	char phase[64];
};

static const char *phase(struct step_ctx *c, const struct dist_action *a)
{
	snprintf(c->phase, sizeof(c->phase), "step %d %s %d", c->x->steps + 1, dist_act_name(a->kind), a->arg);
	return c->phase;
}

static enum aorta_status not_ready(struct step_ctx *c, const struct dist_action *a, const char *why,
				   struct aorta_error *e)
{
	return aorta_fail(e, AORTA_EINTERNAL, NULL, 0, -1, "rank %d: step %d: %s of group %d: %s", c->x->comm->rank,
			  c->x->steps + 1, dist_act_name(a->kind), a->arg, why);
}

/* The sum of squares of the local shard, summed over the shard group as
 * two floats (hi, lo) so the float32 collective keeps double precision. */
static enum aorta_status global_sumsq(struct dist_cpu *x, double *out, struct aorta_error *e)
{
	double s = cpu_sumsq(x->grads, x->pl->local_total);
	if (x->pl->shard_size > 1) {
		float hl[2];
		hl[0] = (float)s;
		hl[1] = (float)(s - (double)hl[0]);
		enum aorta_status st = comm_all_reduce(comm_group(x->comm, x->pl->shard_pg), hl, hl, 2, NULL,
						       "grad norm all_reduce", e);
		if (st)
			return st;
		s = (double)hl[0] + (double)hl[1];
	}
	*out = s;
	return AORTA_OK;
}

/* A gradient's collective action (reduce-scatter, all-reduce, their
 * waits) of group or bucket g; -1 when a is none of them. */
static int run_reduce(struct step_ctx *c, const struct dist_action *a, struct aorta_error *e)
{
	struct dist_cpu *x = c->x;
	const struct dist_plan *pl = x->pl;
	const int g = a->arg;
	struct comm_group *shard = comm_group(x->comm, pl->shard_pg), *repl = comm_group(x->comm, pl->repl_pg);
	const struct dist_shard *sh = g >= 0 && g < pl->ngroups ? &pl->g[g] : NULL;

	switch (a->kind) {
	case ACT_REDUCE_SCATTER:
		if (!x->fgrad[g])
			return not_ready(c, a, "no gradient", e);
		if (pl->k.reduce_dtype == COMM_BF16) {
			/* send: the padded gradient in bf16; recv: the shard after it */
			if (x->rs16[g])
				return not_ready(c, a, "bf16 copy still being reduced", e);
			x->rs16[g] = xmalloc((sh->padded + sh->shard_len) * sizeof(uint16_t));
			comm_f32_to_bf16_n(x->rs16[g], x->fgrad[g], sh->padded);
			return comm_reduce_scatter_ex(shard, x->rs16[g], x->rs16[g] + sh->padded, sh->shard_len,
						      COMM_BF16, &x->rs[g], phase(c, a), e);
		}
		return comm_reduce_scatter(shard, x->fgrad[g], x->grads + sh->local_off, sh->shard_len, &x->rs[g],
					   phase(c, a), e);
	case ACT_WAIT_RS: {
		enum aorta_status st = comm_wait(&x->rs[g], e);
		if (x->rs16[g]) {
			if (!st)
				comm_bf16_to_f32_n(x->grads + sh->local_off, x->rs16[g] + sh->padded, sh->shard_len);
			free(x->rs16[g]);
			x->rs16[g] = NULL;
		}
		if (x->fgrad[g])
			c->grad_live--;
		free(x->fgrad[g]);
		x->fgrad[g] = NULL;
		return st;
	}
	case ACT_ALL_REDUCE: {
		const struct dist_bucket *b = &pl->b[g];
		float *p = x->grads + b->off;
		if (pl->k.reduce_dtype == COMM_BF16) {
			if (x->ar16[g])
				return not_ready(c, a, "bf16 copy still being reduced", e);
			x->ar16[g] = xmalloc((b->len ? b->len : 1) * sizeof(uint16_t));
			comm_f32_to_bf16_n(x->ar16[g], p, b->len);
			return comm_all_reduce_ex(repl, x->ar16[g], x->ar16[g], b->len, COMM_BF16, &x->ar[g],
						  phase(c, a), e);
		}
		return comm_all_reduce(repl, p, p, b->len, &x->ar[g], phase(c, a), e);
	}
	case ACT_WAIT_AR: {
		enum aorta_status st = comm_wait(&x->ar[g], e);
		if (x->ar16[g]) {
			const struct dist_bucket *b = &pl->b[g];
			if (!st)
				comm_bf16_to_f32_n(x->grads + b->off, x->ar16[g], b->len);
			free(x->ar16[g]);
			x->ar16[g] = NULL;
		}
		return st;
	}
	default:
		return -1;
	}
}

static enum aorta_status run_action(struct step_ctx *c, const struct dist_action *a, struct aorta_error *e)
{
	struct dist_cpu *x = c->x;
	const struct dist_plan *pl = x->pl;
	const int g = a->arg;
	struct comm_group *shard = comm_group(x->comm, pl->shard_pg);
	const struct dist_shard *sh = g >= 0 && g < pl->ngroups ? &pl->g[g] : NULL;

	int r = run_reduce(c, a, e);
	if (r != -1)
		return (enum aorta_status)r;
	switch (a->kind) {
	case ACT_ALL_GATHER:
		if (x->full[g])
			return not_ready(c, a, "already gathered", e);
		x->full[g] = xmalloc(sh->padded * sizeof(float));
		if (++c->live > x->live_max)
			x->live_max = c->live;
		return comm_all_gather(shard, x->params + sh->local_off, x->full[g], sh->shard_len, &x->ag[g],
				       phase(c, a), e);
	case ACT_WAIT_AG:
		return comm_wait(&x->ag[g], e);
	case ACT_FREE:
		if (!x->full[g] || x->ag[g].active)
			return not_ready(c, a, "not gathered", e);
		free(x->full[g]);
		x->full[g] = NULL;
		c->live--;
		return AORTA_OK;
	case ACT_FORWARD:
	case ACT_BACKWARD: {
		const float *gp = x->params + sh->local_off;  /* the replica (local_off == off) */
		if (pl->sharded) {
			if (!x->full[g] || x->ag[g].active)
				return not_ready(c, a, "parameters not gathered", e);
			gp = x->full[g];
		}
		if (a->kind == ACT_FORWARD)
			return cpu_model_group_forward(x->ms, g, gp, e);
		float *gg = x->grads + sh->local_off;
		if (pl->sharded) {
			/* the unsharded gradient: new at the step's first backward of
			 * g, accumulated into by the later micro-batches */
			if (x->rs[g].active)
				return not_ready(c, a, "gradient buffer still being reduced", e);
			if (!x->fgrad[g]) {
				x->fgrad[g] = xcalloc(sh->padded, sizeof(float));
				if (++c->grad_live > x->grad_live_max)
					x->grad_live_max = c->grad_live;
			}
			gg = x->fgrad[g];
		}
		return cpu_model_group_backward(x->ms, g, gp, gg, e);
	}
	case ACT_GRAD_NORM: {
		double s = 0.0;
		enum aorta_status st = global_sumsq(x, &s, e);
		if (st)
			return st;
		c->gscale = dist_clip_scale(s, x->opt.max_grad_norm, 1.0f / (float)pl->world, &c->norm);
		return AORTA_OK;
	}
	case ACT_OPTIMIZER:
		cpu_adamw(x->params, x->grads, x->m, x->v, pl->local_total, c->lr, x->opt.beta1, x->opt.beta2,
			  x->opt.eps, x->opt.weight_decay, x->steps + 1, c->gscale);
		return AORTA_OK;
	case ACT_MICRO:
		/* micro-batch 0 was begun with the step; the next one starts once
		 * the previous backward is done (its loss is kept) */
		if (g <= 0)
			return AORTA_OK;
		if (g >= pl->k.accum)
			return not_ready(c, a, "micro-batch outside the step", e);
		c->loss_sum += cpu_model_loss(x->ms);
		return cpu_model_begin(x->ms, &c->b[g], c->seed + (uint64_t)g, c->training,
				       1.0f / (float)pl->k.accum, e);
	default: /* the gradients' collectives: run_reduce */
		break;
	}
	return aorta_fail(e, AORTA_EINTERNAL, NULL, 0, -1, "unknown action %d", (int)a->kind);
}

void dist_cpu_set_stress(struct dist_cpu *x, int level)
{
	if (level > DIST_STRESS_MAX_LEVEL)
		level = DIST_STRESS_MAX_LEVEL;
	x->stress_level = level > 0 ? level : 0;
	if (x->stress_level && !x->stress_a) {
		x->stress_a = xmalloc(DIST_STRESS_FLOATS * sizeof(float));
		x->stress_b = xmalloc(DIST_STRESS_FLOATS * sizeof(float));
		x->stress_h = xmalloc(DIST_STRESS_FLOATS * sizeof(float));
	}
}

static void stress_scale(float *p, size_t n, float s)
{
	for (size_t i = 0; i < n; i++)
		p[i] *= s;
}

/* Upstream's stress sequence (dist.h) on host buffers: there is no device,
 * so the copy and the round trip are memcpys; the all-reduces are real. */
static enum aorta_status stress(struct dist_cpu *x, struct aorta_error *e)
{
	struct comm_group *w = comm_group(x->comm, COMM_PG_WORLD);
	const size_t n = DIST_STRESS_FLOATS;
	const float inv = 1.0f / (float)x->pl->world;
	enum aorta_status st = AORTA_OK;
	char ph[64];
	for (int r = 0; r < x->stress_level && !st; r++) {
		uint64_t seed = dist_stress_seed(x->steps, r, x->comm->rank);
		for (size_t i = 0; i < n; i++)
			x->stress_a[i] = 2.0f * rng_uniform(seed, DIST_STRESS_SITE, i) - 1.0f;
		snprintf(ph, sizeof(ph), "step %d stress_allreduce_%d", x->steps + 1, r);
		if ((st = comm_all_reduce(w, x->stress_a, x->stress_a, n, NULL, ph, e)))
			break;
		stress_scale(x->stress_a, n, inv);
		memcpy(x->stress_b, x->stress_a, n * sizeof(float));
		snprintf(ph, sizeof(ph), "step %d stress_allreduce_sum_%d", x->steps + 1, r);
		if ((st = comm_all_reduce(w, x->stress_b, x->stress_b, n, NULL, ph, e)))
			break;
		memcpy(x->stress_h, x->stress_b, n * sizeof(float));
		memcpy(x->stress_b, x->stress_h, n * sizeof(float));
		snprintf(ph, sizeof(ph), "step %d stress_allreduce_avg_%d", x->steps + 1, r);
		if ((st = comm_all_reduce(w, x->stress_b, x->stress_b, n, NULL, ph, e)))
			break;
		stress_scale(x->stress_b, n, inv);
		x->stress_all_reduces += 3;
		x->stress_last = x->stress_b[0];
	}
	return st;
}

enum aorta_status dist_cpu_step(struct dist_cpu *x, const struct dist_schedule *s, const struct batch *b,
				uint64_t dropout_seed, int training, float lr, float *loss, double *grad_norm,
				struct aorta_error *e)
{
	struct step_ctx c = { .x = x, .b = b, .seed = dropout_seed, .training = training, .lr = lr, .gscale = 1.0f };
	const int k = x->pl->k.accum;
	enum aorta_status st = cpu_model_begin(x->ms, b, dropout_seed, training, 1.0f / (float)k, e);
	if (st)
		return st;
	memset(x->grads, 0, x->pl->local_total * sizeof(float));
	for (int i = 0; i < s->n && !st; i++)
		st = run_action(&c, &s->a[i], e);
	if (!st && x->stress_level)
		st = stress(x, e);
	if (st)
		return st;
	x->steps++;

	/* the loss of the whole global batch: mean over the micro-batches of
	 * the mean of the ranks' means */
	float l = k > 1 ? (c.loss_sum + cpu_model_loss(x->ms)) / (float)k : cpu_model_loss(x->ms);
	if (x->pl->world > 1) {
		st = comm_all_reduce(comm_group(x->comm, COMM_PG_WORLD), &l, &l, 1, NULL, "loss all_reduce", e);
		l /= (float)x->pl->world;
	}
	if (loss)
		*loss = l;
	if (grad_norm)
		*grad_norm = c.norm;
	return st;
}

enum aorta_status dist_cpu_full_params(struct dist_cpu *x, float *out, struct aorta_error *e)
{
	const struct dist_plan *pl = x->pl;
	for (int g = 0; g < pl->ngroups; g++) {
		const struct dist_shard *sh = &pl->g[g];
		if (pl->shard_size == 1) {
			memcpy(out + sh->off, x->params + sh->local_off, sh->len * sizeof(float));
			continue;
		}
		float *tmp = xmalloc(sh->padded * sizeof(float));
		enum aorta_status st = comm_all_gather(comm_group(x->comm, pl->shard_pg), x->params + sh->local_off,
						       tmp, sh->shard_len, NULL, "gather full parameters", e);
		if (!st)
			memcpy(out + sh->off, tmp, sh->len * sizeof(float));
		free(tmp);
		if (st)
			return st;
	}
	return AORTA_OK;
}
