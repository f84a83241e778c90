/*
 * dist.c - the sharding plan, the step schedule and its checker (dist.h).
 *
 * Design.  The schedule builder walks forward and backward once, keeping
 * the same per-group state the checker keeps (gathered, waited, gathers in
 * flight), and emits actions through small helpers that each place one
 * FSDP1 hook: the pre-forward unshard and forward prefetch, the post-forward
 * reshard, the pre-backward unshard and BACKWARD_PRE prefetch, the
 * post-backward reshard, BACKWARD_POST prefetch and reduction.  The checker
 * is written independently of the builder (it only reads actions), so a
 * test of build + check is a real test of the builder.
 */
#include "train/dist.h"
#include "kernels/rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ===================================================================== */
/* Knobs and plan                                                         */
/* ===================================================================== */

void dist_knobs_from_config(struct dist_knobs *k, const struct train_config *cfg)
{
	memset(k, 0, sizeof(*k));
	k->mode = cfg->distributed.mode;
	k->strategy = cfg->fsdp.sharding_strategy;
	k->forward_prefetch = cfg->fsdp.forward_prefetch;
	k->backward_prefetch = cfg->fsdp.backward_prefetch;
	k->limit_all_gathers = cfg->fsdp.limit_all_gathers ? 2 : 0;
	k->bucket_cap_mb = cfg->distributed.bucket_cap_mb;
	k->first_bucket_bytes = DIST_FIRST_BUCKET_BYTES;
	k->accum = cfg->training.gradient_accumulation > 0 ? (int)cfg->training.gradient_accumulation : 1;
	k->reduce_dtype = cfg->fsdp.reduce_dtype == REDUCE_BF16 ? COMM_BF16 : COMM_F32;
	k->isolate = cfg->debug.isolate;
}

/* Offsets of every named tensor of the layout, ascending (layout order). */
static int tensor_offsets(const struct param_layout *p, size_t *out)
{
	int n = 0;
	size_t head[] = { p->emb, p->emb_w, p->emb_b, p->dense_w, p->dense_b };
	for (size_t i = 0; i < sizeof(head) / sizeof(head[0]); i++)
		out[n++] = head[i];
	for (int l = 0; l < p->ngroups - 2; l++) {
		const struct layer_off *o = &p->layer[l];
		size_t t[] = { o->qkv_w, o->qkv_b, o->out_w, o->out_b, o->ln1_g, o->ln1_b,
			       o->ff1_w, o->ff1_b, o->ff2_w, o->ff2_b, o->ln2_g, o->ln2_b };
		for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
			out[n++] = t[i];
	}
	size_t tail[] = { p->lnf_g, p->lnf_b, p->head1_w, p->head1_b, p->head2_w, p->head2_b };
	for (size_t i = 0; i < sizeof(tail) / sizeof(tail[0]); i++)
		out[n++] = tail[i];
	return n;
}

static int group_of(const struct dist_plan *pl, size_t x)
{
	for (int g = pl->ngroups - 1; g >= 0; g--)
		if (x >= pl->g[g].off)
			return g;
	return 0;
}

/* PyTorch's reducer: tensors in reverse order; a bucket closes as soon as
 * its size reaches its limit (first bucket: first_bytes, then cap). */
static void ddp_buckets(struct dist_plan *pl, const struct param_layout *lay)
{
	int nt_max = 5 + 12 * (lay->ngroups - 2) + 6;
	size_t *off = xcalloc((size_t)nt_max + 1, sizeof(size_t));
	int nt = tensor_offsets(lay, off);
	off[nt] = lay->total;
	size_t cap = (size_t)(pl->k.bucket_cap_mb * 1048576.0);
	size_t first = pl->k.first_bucket_bytes ? pl->k.first_bucket_bytes : cap;
	if (cap < sizeof(float))
		cap = sizeof(float);
	if (first < sizeof(float))
		first = sizeof(float);

	pl->b = xcalloc((size_t)nt, sizeof(*pl->b));
	pl->nbuckets = 0;
	size_t hi = lay->total, lo = hi;
	for (int t = nt - 1; t >= 0; t--) {
		lo = off[t];
		size_t limit = pl->nbuckets == 0 ? first : cap;
		if ((hi - lo) * sizeof(float) >= limit || t == 0) {
			struct dist_bucket *b = &pl->b[pl->nbuckets++];
			b->off = lo;
			b->len = hi - lo;
			b->group_lo = group_of(pl, lo);
			b->group_hi = group_of(pl, hi - 1);
			hi = lo;
		}
	}
	free(off);
}

enum aorta_status dist_plan_init(struct dist_plan *pl, int world, int rank, int node_size,
				 const struct dist_knobs *k, const struct param_layout *lay,
				 struct aorta_error *e)
{
	memset(pl, 0, sizeof(*pl));
	if (world < 1 || rank < 0 || rank >= world)
		return aorta_fail(e, AORTA_EUSAGE, NULL, 0, -1, "rank %d outside a world of %d", rank, world);
	if (node_size < 1 || world % node_size != 0)
		return aorta_fail(e, AORTA_EUSAGE, NULL, 0, -1, "node size %d does not divide the world size %d",
				  node_size, world);
	if (k->mode != DIST_FSDP && k->mode != DIST_DDP)
		return aorta_fail(e, AORTA_EUSAGE, NULL, 0, -1, "distributed.mode %d unknown", (int)k->mode);
	if (k->mode == DIST_FSDP && (unsigned)k->strategy > SHARD_HYBRID)
		return aorta_fail(e, AORTA_EUSAGE, NULL, 0, -1, "fsdp.sharding_strategy %d unknown", (int)k->strategy);
	if ((unsigned)k->backward_prefetch > PREFETCH_BACKWARD_POST || k->limit_all_gathers < 0)
		return aorta_fail(e, AORTA_EUSAGE, NULL, 0, -1, "bad prefetch knobs (backward %d, limit %d)",
				  (int)k->backward_prefetch, k->limit_all_gathers);
	if (k->mode == DIST_DDP && !(k->bucket_cap_mb > 0.0))
		return aorta_fail(e, AORTA_EUSAGE, NULL, 0, -1, "distributed.bucket_cap_mb must be > 0, not %g",
				  k->bucket_cap_mb);
	if (k->accum < 0)
		return aorta_fail(e, AORTA_EUSAGE, NULL, 0, -1, "training.gradient_accumulation %d must be >= 1",
				  k->accum);
	if (k->reduce_dtype != COMM_F32 && k->reduce_dtype != COMM_BF16)
		return aorta_fail(e, AORTA_EUSAGE, NULL, 0, -1, "fsdp.reduce_dtype %d unknown", (int)k->reduce_dtype);

	pl->k = *k;
	if (pl->k.accum < 1)
		pl->k.accum = 1;
	pl->world = world;
	pl->rank = rank;
	pl->node_size = node_size;
	pl->ngroups = lay->ngroups;

	/* who shards and who replicates */
	int shard_world = 0, shard_node = 0;
	if (k->mode == DIST_FSDP) {
		switch (k->strategy) {
		case SHARD_FULL: shard_world = 1; pl->reshard_after_forward = 1; break;
		case SHARD_GRAD_OP: shard_world = 1; break;
		case SHARD_HYBRID: shard_node = 1; pl->reshard_after_forward = 1; break;
		case SHARD_NONE: break;
		}
	}
	pl->sharded = shard_world || shard_node;
	if (shard_world) {
		pl->shard_pg = COMM_PG_WORLD, pl->shard_size = world, pl->shard_rank = rank;
		pl->repl_pg = COMM_PG_WORLD, pl->repl_size = 1, pl->repl_rank = 0;
	} else if (shard_node) {
		pl->shard_pg = COMM_PG_NODE, pl->shard_size = node_size, pl->shard_rank = rank % node_size;
		pl->repl_pg = COMM_PG_CROSS, pl->repl_size = world / node_size, pl->repl_rank = rank / node_size;
	} else {
		pl->shard_pg = COMM_PG_WORLD, pl->shard_size = 1, pl->shard_rank = 0;
		pl->repl_pg = COMM_PG_WORLD, pl->repl_size = world, pl->repl_rank = rank;
	}

	/* shards */
	pl->g = xcalloc((size_t)pl->ngroups, sizeof(*pl->g));
	size_t S = (size_t)pl->shard_size, local = 0;
	for (int g = 0; g < pl->ngroups; g++) {
		struct dist_shard *sh = &pl->g[g];
		sh->off = lay->group_off[g];
		sh->len = lay->group_len[g];
		sh->padded = (sh->len + S - 1) / S * S;
		sh->shard_len = sh->padded / S;
		sh->local_off = local;
		sh->begin = (size_t)pl->shard_rank * sh->shard_len;
		sh->valid = sh->begin >= sh->len ? 0
			    : (sh->len - sh->begin < sh->shard_len ? sh->len - sh->begin : sh->shard_len);
		local += sh->shard_len;
	}
	pl->local_total = local;

	/* all-reduce buckets over the replicate group */
	if (k->mode == DIST_DDP) {
		ddp_buckets(pl, lay);
	} else if (!pl->sharded || (k->strategy == SHARD_HYBRID && pl->repl_size > 1)) {
		pl->nbuckets = pl->ngroups;
		pl->b = xcalloc((size_t)pl->ngroups, sizeof(*pl->b));
		/* in backward order, so bucket i is the i-th to complete */
		for (int i = 0; i < pl->ngroups; i++) {
			int g = pl->ngroups - 1 - i;
			pl->b[i] = (struct dist_bucket){ .off = pl->g[g].local_off, .len = pl->g[g].shard_len,
							 .group_lo = g, .group_hi = g };
		}
	}
	return AORTA_OK;
}

/* ranges [off, off + len) sorted by off */
static int by_off(const void *a, const void *b)
{
	const size_t *x = a, *y = b;
	return x[0] < y[0] ? -1 : x[0] > y[0];
}

int dist_plan_norm_ranges(const struct dist_plan *pl)
{
	const int sharded = pl->sharded && pl->repl_size == 1;
	const int unsharded = !pl->sharded && pl->shard_size == 1 && pl->nbuckets > 0;
	if (!sharded && !unsharded)
		return 0;
	int n = sharded ? pl->ngroups : pl->nbuckets;
	size_t *r = xcalloc((size_t)n * 2, sizeof(size_t));
	for (int i = 0; i < n; i++) {
		r[2 * i] = sharded ? pl->g[i].local_off : pl->b[i].off;
		r[2 * i + 1] = sharded ? pl->g[i].shard_len : pl->b[i].len;
	}
	qsort(r, (size_t)n, 2 * sizeof(size_t), by_off);
	size_t at = 0;
	int ok = 1;
	for (int i = 0; i < n && ok; i++) {
		ok = r[2 * i] == at;
		at += r[2 * i + 1];
	}
	free(r);
	return ok && at == pl->local_total;
}

void dist_plan_release(struct dist_plan *pl)
{
	free(pl->g);
	free(pl->b);
	memset(pl, 0, sizeof(*pl));
}

/* ===================================================================== */
/* Schedule                                                               */
/* ===================================================================== */

struct builder {
	const struct dist_plan *pl;
	struct dist_action *a;
	int n, cap;
	int limit, in_flight;
	char *issued;    /* ALL_GATHER issued in the current phase (not yet freed) */
	char *waited;
};

static void emit(struct builder *b, enum dist_act kind, int arg)
{
	if (b->n == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 64;
		b->a = xrealloc(b->a, (size_t)b->cap * sizeof(*b->a));
	}
	b->a[b->n++] = (struct dist_action){ kind, arg };
}

static int can_gather(const struct builder *b)
{
	return b->limit == 0 || b->in_flight < b->limit;
}

static void gather(struct builder *b, int g)
{
	emit(b, ACT_ALL_GATHER, g);
	b->issued[g] = 1;
	b->in_flight++;
}

static void wait_gather(struct builder *b, int g)
{
	emit(b, ACT_WAIT_AG, g);
	b->waited[g] = 1;
	b->in_flight--;
}

static void free_group(struct builder *b, int g)
{
	emit(b, ACT_FREE, g);
	b->issued[g] = b->waited[g] = 0;
}

/* Brings group g's parameters in for compute: a prefetch of next (-1:
 * none) goes before the wait if the limit allows, else after it. */
static void unshard(struct builder *b, int g, int next)
{
	if (!b->issued[g])
		gather(b, g);
	int want = next >= 0 && next < b->pl->ngroups && !b->issued[next];
	if (want && can_gather(b)) {
		gather(b, next);
		want = 0;
	}
	if (!b->waited[g])
		wait_gather(b, g);
	if (want && can_gather(b))
		gather(b, next);
}

enum aorta_status dist_schedule_build(struct dist_schedule *s, const struct dist_plan *pl, struct aorta_error *e)
{
	(void)e;
	const int G = pl->ngroups;
	struct builder b = { .pl = pl, .limit = pl->k.limit_all_gathers };
	b.issued = xcalloc((size_t)G, 1);
	b.waited = xcalloc((size_t)G, 1);
	const enum backward_prefetch bp = pl->k.backward_prefetch;

	for (int mb = 0; mb < pl->k.accum; mb++) {
		/* no_sync: only the last micro-batch reduces */
		const int last = mb == pl->k.accum - 1;
		if (pl->k.accum > 1)
			emit(&b, ACT_MICRO, mb);

		/* ---- forward ---- */
		for (int g = 0; g < G; g++) {
			if (pl->sharded)
				unshard(&b, g, pl->k.forward_prefetch ? g + 1 : -1);
			emit(&b, ACT_FORWARD, g);
			if (pl->reshard_after_forward && g != G - 1)
				free_group(&b, g);
		}

		/* ---- backward ---- */
		int pending_rs = -1, next_bucket = 0;
		for (int g = G - 1; g >= 0; g--) {
			if (pl->sharded) {
				/* BACKWARD_PRE prefetches g-1 if backward will need to gather it */
				int pre = bp == PREFETCH_BACKWARD_PRE && g > 0 && pl->reshard_after_forward ? g - 1 : -1;
				unshard(&b, g, pre);
			}
			emit(&b, ACT_BACKWARD, g);
			if (pl->sharded) {
				free_group(&b, g);
				if (bp == PREFETCH_BACKWARD_POST && g > 0 && pl->reshard_after_forward && !b.issued[g - 1] &&
				    can_gather(&b))
					gather(&b, g - 1);
				if (!last)
					continue;
				emit(&b, ACT_REDUCE_SCATTER, g);
				if (pending_rs >= 0) {
					emit(&b, ACT_WAIT_RS, pending_rs);
					if (pl->nbuckets)        /* hybrid across nodes: bucket of group pending_rs */
						emit(&b, ACT_ALL_REDUCE, next_bucket++);
				}
				pending_rs = g;
			} else if (last) {
				while (next_bucket < pl->nbuckets && pl->b[next_bucket].group_lo == g)
					emit(&b, ACT_ALL_REDUCE, next_bucket++);
			}
		}
		if (pending_rs >= 0) {
			emit(&b, ACT_WAIT_RS, pending_rs);
			if (pl->nbuckets)
				emit(&b, ACT_ALL_REDUCE, next_bucket++);
		}
	}
	for (int i = 0; i < pl->nbuckets; i++)
		emit(&b, ACT_WAIT_AR, i);
	emit(&b, ACT_GRAD_NORM, -1);
	emit(&b, ACT_OPTIMIZER, -1);

	free(b.issued);
	free(b.waited);
	s->n = b.n;
	s->a = b.a;
	return AORTA_OK;
}

void dist_schedule_release(struct dist_schedule *s)
{
	free(s->a);
	s->a = NULL;
	s->n = 0;
}

/* ===================================================================== */
/* Checker                                                                */
/* ===================================================================== */

static const char *act_names[] = { "ALL_GATHER", "WAIT_AG", "FORWARD", "FREE", "BACKWARD", "REDUCE_SCATTER",
				   "WAIT_RS", "ALL_REDUCE", "WAIT_AR", "GRAD_NORM", "OPTIMIZER", "MICRO" };
static const char *act_tokens[] = { "AG", "WAG", "F", "FREE", "B", "RS", "WRS", "AR", "WAR", "NORM", "OPT", "MB" };

const char *dist_act_name(enum dist_act a)
{
	return (unsigned)a <= ACT_MICRO ? act_names[a] : "?";
}

int dist_schedule_format(const struct dist_schedule *s, char *buf, size_t len)
{
	size_t used = 0;
	if (buf && len)
		buf[0] = '\0';
	for (int i = 0; i < s->n; i++) {
		const struct dist_action *a = &s->a[i];
		const char *tok = (unsigned)a->kind <= ACT_MICRO ? act_tokens[a->kind] : "?";
		char *at = buf && used < len ? buf + used : NULL;
		size_t room = at ? len - used : 0;
		int k = a->arg >= 0 ? snprintf(at, room, "%s%s%d", i ? " " : "", tok, a->arg)
				    : snprintf(at, room, "%s%s", i ? " " : "", tok);
		used += (size_t)(k > 0 ? k : 0);
	}
	return (int)used;
}

/* The checker's state over the actions of a schedule. */
struct sched_check {
	const struct dist_plan *pl;
	int G, NB, K;                 /* groups, buckets, micro-batches */
	int *gs;                      /* per group: 0 none, 1 gathering, 2 gathered and waited */
	int *nag, *nfree;             /* per group: all-gathers and frees */
	int *rs;                      /* per group: 0, 1 issued, 2 waited */
	int *ar;                      /* per bucket: 0, 1 issued, 2 waited */
	int in_flight, gathered, next_fwd, next_bwd, norm, opt, hybrid_ar;
	int mb;                       /* micro-batch in progress (-1: none yet) */
	struct dist_schedule_stats z;
};

#define FAIL(...) return aorta_fail(e, AORTA_ECHECK, NULL, 0, -1, __VA_ARGS__)

/* Action i, a parameter group's (micro-batch, gather, wait, free,
 * forward, backward); -1 when it is none of them. */
static int check_group_action(struct sched_check *c, int i, const struct dist_action *a, struct aorta_error *e)
{
	int g = a->arg;
	switch (a->kind) {
	case ACT_MICRO:
		if (c->K == 1)
			FAIL("action %d: MICRO %d without accumulation", i, g);
		if (g != c->mb + 1 || g >= c->K)
			FAIL("action %d: MICRO %d, expected %d of 0..%d", i, g, c->mb + 1, c->K - 1);
		if (c->mb >= 0 && c->next_bwd != -1)
			FAIL("action %d: MICRO %d before the backward of micro-batch %d ended", i, g, c->mb);
		if (c->gathered)
			FAIL("action %d: MICRO %d with %d groups still gathered", i, g, c->gathered);
		c->mb = g, c->next_fwd = 0, c->next_bwd = c->G - 1;
		c->z.n_micro++;
		break;
	case ACT_ALL_GATHER:
		if (!c->pl->sharded)
			FAIL("action %d: ALL_GATHER %d but the plan does not shard", i, g);
		if (c->gs[g])
			FAIL("action %d: ALL_GATHER %d while it is already gathered", i, g);
		c->gs[g] = 1, c->nag[g]++, c->in_flight++, c->gathered++;
		if (c->pl->k.limit_all_gathers && c->in_flight > c->pl->k.limit_all_gathers)
			FAIL("action %d: ALL_GATHER %d makes %d in flight (limit %d)", i, g, c->in_flight,
			    c->pl->k.limit_all_gathers);
		if (c->in_flight > c->z.max_ag_in_flight)
			c->z.max_ag_in_flight = c->in_flight;
		if (c->gathered > c->z.max_gathered)
			c->z.max_gathered = c->gathered;
		c->z.n_all_gather++;
		break;
	case ACT_WAIT_AG:
		if (c->gs[g] != 1)
			FAIL("action %d: WAIT_AG %d without an ALL_GATHER in flight", i, g);
		c->gs[g] = 2, c->in_flight--;
		break;
	case ACT_FREE:
		if (c->gs[g] != 2)
			FAIL("action %d: FREE %d of a group not gathered and waited", i, g);
		c->gs[g] = 0, c->nfree[g]++, c->gathered--;
		c->z.n_free++;
		break;
	case ACT_FORWARD:
		if (g != c->next_fwd)
			FAIL("action %d: FORWARD %d, expected %d", i, g, c->next_fwd);
		if (c->pl->sharded && c->gs[g] != 2)
			FAIL("action %d: FORWARD %d on parameters not gathered and waited", i, g);
		c->next_fwd++;
		break;
	case ACT_BACKWARD:
		if (c->next_fwd != c->G || g != c->next_bwd)
			FAIL("action %d: BACKWARD %d, expected %s%d", i, g, c->next_fwd != c->G ? "the forward to end, then " : "",
			    c->next_bwd);
		if (c->pl->sharded && c->gs[g] != 2)
			FAIL("action %d: BACKWARD %d on parameters not gathered and waited", i, g);
		c->next_bwd--;
		break;
	default:
		return -1;
	}
	return AORTA_OK;
}

/* Action i, a gradient's (reduce-scatter, all-reduce, their waits, the
 * norm, the optimizer); unknown kinds refused. */
static enum aorta_status check_grad_action(struct sched_check *c, int i, const struct dist_action *a,
					   struct aorta_error *e)
{
	int g = a->arg;
	switch (a->kind) {
	case ACT_REDUCE_SCATTER:
		if (!c->pl->sharded)
			FAIL("action %d: REDUCE_SCATTER %d but the plan does not shard", i, g);
		if (g <= c->next_bwd)
			FAIL("action %d: REDUCE_SCATTER %d before its BACKWARD", i, g);
		if (c->rs[g])
			FAIL("action %d: REDUCE_SCATTER %d twice", i, g);
		c->rs[g] = 1;
		c->z.n_reduce_scatter++;
		break;
	case ACT_WAIT_RS:
		if (c->rs[g] != 1)
			FAIL("action %d: WAIT_RS %d without a REDUCE_SCATTER in flight", i, g);
		c->rs[g] = 2;
		break;
	case ACT_ALL_REDUCE: {
		const struct dist_bucket *bk = &c->pl->b[g];
		if (c->ar[g])
			FAIL("action %d: ALL_REDUCE of bucket %d twice", i, g);
		if (bk->group_lo <= c->next_bwd)
			FAIL("action %d: ALL_REDUCE of bucket %d (groups %d..%d) before the BACKWARD of group %d", i,
			    g, bk->group_lo, bk->group_hi, bk->group_lo);
		if (c->hybrid_ar && c->rs[bk->group_lo] != 2)
			FAIL("action %d: ALL_REDUCE of group %d's shard before its WAIT_RS", i, bk->group_lo);
		c->ar[g] = 1;
		c->z.n_all_reduce++;
		break;
	}
	case ACT_WAIT_AR:
		if (c->ar[g] != 1)
			FAIL("action %d: WAIT_AR %d without an ALL_REDUCE in flight", i, g);
		c->ar[g] = 2;
		break;
	case ACT_GRAD_NORM:
		if (c->next_bwd != -1 || c->mb != c->K - 1)
			FAIL("action %d: GRAD_NORM before the backward ended", i);
		for (int k = 0; c->pl->sharded && k < c->G; k++)
			if (c->rs[k] != 2)
				FAIL("action %d: GRAD_NORM before group %d's gradient was reduce-scattered and waited",
				    i, k);
		for (int k = 0; k < c->NB; k++)
			if (c->ar[k] != 2)
				FAIL("action %d: GRAD_NORM before bucket %d was all-reduced and waited", i, k);
		c->norm = 1;
		break;
	case ACT_OPTIMIZER:
		if (!c->norm)
			FAIL("action %d: OPTIMIZER before GRAD_NORM", i);
		c->opt = 1;
		break;
	default:
		FAIL("action %d: unknown kind %d", i, (int)a->kind);
	}
	return AORTA_OK;
}

/* Action i's place in the schedule, then its kind's rules. */
static enum aorta_status check_action(struct sched_check *c, int i, const struct dist_action *a, struct aorta_error *e)
{
	int g = a->arg, r;
	const char *nm = dist_act_name(a->kind);
	if (c->opt)
		FAIL("action %d (%s %d) after OPTIMIZER", i, nm, g);
	int is_group = a->kind <= ACT_WAIT_RS;
	if (is_group && (g < 0 || g >= c->G))
		FAIL("action %d: %s of group %d outside 0..%d", i, nm, g, c->G - 1);
	if ((a->kind == ACT_ALL_REDUCE || a->kind == ACT_WAIT_AR) && (g < 0 || g >= c->NB))
		FAIL("action %d: %s of bucket %d outside 0..%d", i, nm, g, c->NB - 1);
	if (a->kind != ACT_MICRO && c->mb < 0)
		FAIL("action %d (%s %d) before MICRO 0 (accumulation over %d micro-batches)", i, nm, g, c->K);
	if ((a->kind == ACT_REDUCE_SCATTER || a->kind == ACT_ALL_REDUCE) && c->mb != c->K - 1)
		FAIL("action %d: %s %d in micro-batch %d of %d: gradients are reduced in the last only (no_sync)",
		     i, nm, g, c->mb, c->K);
	if ((r = check_group_action(c, i, a, e)) != -1)
		return (enum aorta_status)r;
	return check_grad_action(c, i, a, e);
}

/* The end: every gathered group freed, and the buckets tiling the local
 * buffer (each gradient element all-reduced once). */
static enum aorta_status check_end(const struct sched_check *c, struct aorta_error *e)
{
	const struct dist_plan *pl = c->pl;
	if (!c->opt)
		FAIL("the schedule does not end with OPTIMIZER");
	for (int g = 0; g < c->G; g++)
		if (c->gs[g] || c->nag[g] != c->nfree[g])
			FAIL("group %d gathered %d times, freed %d times%s", g, c->nag[g], c->nfree[g],
			     c->gs[g] ? ", still gathered at the end" : "");
	if (pl->sharded && !c->hybrid_ar)
		return AORTA_OK;
	size_t covered = 0;
	for (int k = 0; k < c->NB; k++)
		covered += pl->b[k].len;
	if (covered != pl->local_total)
		FAIL("buckets cover %zu floats of %zu", covered, pl->local_total);
	char *seen = xcalloc(pl->local_total ? pl->local_total : 1, 1);
	for (int k = 0; k < c->NB; k++)
		for (size_t x = pl->b[k].off; x < pl->b[k].off + pl->b[k].len; x++) {
			if (x >= pl->local_total || seen[x]) {
				free(seen);
				FAIL("bucket %d overlaps another or the end at %zu", k, x);
			}
			seen[x] = 1;
		}
	free(seen);
	return AORTA_OK;
}

#undef FAIL

enum aorta_status dist_schedule_check(const struct dist_schedule *s, const struct dist_plan *pl,
				      struct dist_schedule_stats *stats, struct aorta_error *e)
{
	struct sched_check c = { .pl = pl, .G = pl->ngroups, .NB = pl->nbuckets };
	enum aorta_status st = AORTA_OK;
	c.gs = xcalloc((size_t)c.G, sizeof(int));
	c.nag = xcalloc((size_t)c.G, sizeof(int));
	c.nfree = xcalloc((size_t)c.G, sizeof(int));
	c.rs = xcalloc((size_t)c.G, sizeof(int));
	c.ar = xcalloc((size_t)(c.NB ? c.NB : 1), sizeof(int));
	c.next_bwd = c.G - 1;
	c.hybrid_ar = pl->sharded && c.NB > 0;
	/* micro-batch in progress: without accumulation the whole step is micro-batch 0 */
	c.K = pl->k.accum > 1 ? pl->k.accum : 1;
	c.mb = c.K > 1 ? -1 : 0;
	for (int i = 0; i < s->n && !st; i++)
		st = check_action(&c, i, &s->a[i], e);
	if (!st) {
		if (c.K == 1 && c.opt)
			c.z.n_micro = 1;
		st = check_end(&c, e);
	}
	if (stats)
		*stats = c.z;
	free(c.gs);
	free(c.nag);
	free(c.nfree);
	free(c.rs);
	free(c.ar);
	return st;
}

uint64_t dist_stress_seed(long step, int rep, int rank)
{
	return rng_mix(((uint64_t)step << 20) ^ ((uint64_t)rep << 12) ^ (uint64_t)rank ^ DIST_STRESS_SITE);
}

/* ===================================================================== */
/* Clipping                                                               */
/* ===================================================================== */

float dist_clip_scale(double sumsq, float max_norm, float extra, double *norm_out)
{
	double norm = sqrt(sumsq) * (double)extra;
	double coef = (double)max_norm / (norm + 1e-6);
	if (coef > 1.0 || max_norm <= 0.0f)
		coef = 1.0;
	if (norm_out)
		*norm_out = norm;
	return (float)coef * extra;
}
