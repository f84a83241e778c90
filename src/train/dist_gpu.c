/*
 * dist_gpu.c - the GPU executor of dist.h schedules (see dist_gpu.h).
 *
 * Design.  The same shape as dist_cpu.c: one case per action kind in a
 * loop, each naming the step, action and group in its phase string.  Where
 * the CPU executor blocks in a WAIT, this one makes the compute stream wait
 * (comm_wait_stream); where it mallocs and frees, this one takes and gives
 * back pooled device buffers, and the event recorded at the give-back is
 * what the next user's stream waits for.  Collectives of a group of one
 * rank become device copies on the collective's stream (dist_gpu.h says
 * why), so world 1 runs the same code path as world N.
 */
#include "train/dist_gpu.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/nvtx.h"
#include "train/dist_ops_gpu.h"
#include "kernels/ops_gpu.h"

/* ---- isolation (a measurement switch) --------------------------------------
 *
 * debug.isolate = compute|comm (the plan's knobs, k.isolate; formerly the
 * environment variable AORTA_TRAIN_ISOLATE, still read as a deprecated
 * fallback by train_config.c) runs one side of every step alone, so
 * T_compute and T_comm can be timed with the same binary, configuration and
 * schedule as the overlapped step (bench/train_dist).  none: the normal step.
 * Per executor (no process-wide state): rank threads of one process may
 * differ.
 *   compute  every collective of the step is skipped with its stream waits
 *            and its recorder range: the all-gathers, reduce-scatters,
 *            bucket all-reduces, the norm's and the loss's all-reduce.  All
 *            compute (forward, backward, norm, clip, AdamW) runs as usual.
 *            The gather buffers are filled once at init from the initial
 *            full parameters (finite values, not each group's own), the
 *            gradients are never reduced (the optimizer sees zeros) and the
 *            loss is this rank's alone.
 *   comm     the forward, backward, gradient-norm/clip and optimizer kernels
 *            (and their ranges) are skipped; every collective is issued in
 *            the same order, sizes and streams, with the same stream
 *            dependencies.  Reduce-scatters send uninitialised gradients and
 *            the loss reported is 0.
 * Either way the model does not train and the loss is meaningless (the
 * trainer says so in the log). */
#define ISOLATE(x) ((x)->pl->k.isolate)

/* ---- pools of device buffers ---------------------------------------------- */

/* Symmetric memory of group g when the backend offers it (*win its handle),
 * else (or g NULL) plain device memory with *win NULL. */
static enum aorta_status dev_alloc(struct comm_group *g, size_t bytes, void **p, void **win, struct aorta_error *e)
{
	*p = *win = NULL;
	enum aorta_status st = g ? comm_sym_alloc(g, bytes, p, win, e) : AORTA_OK;
	if (st || *p)
		return st;
	return GPU_CALL(e, gpuMalloc(p, bytes));
}

static void dev_free(struct comm_group *g, void *p, void *win)
{
	if (win)
		comm_sym_free(g, p, win);
	else if (p)
		gpuFree(p);
}

/* Best fit among the free slots of at least n floats, else a new slot of n.
 * `writer` (the stream that will write the buffer first; NULL in the dry
 * run) waits for the event recorded when the slot was given back. */
static enum aorta_status pool_take(struct dist_gpu_pool *p, size_t n, gpuStream_t writer, int *out,
				   struct aorta_error *e)
{
	int best = -1;
	for (int i = 0; i < p->n; i++)
		if (!p->s[i].used && p->s[i].cap >= n && (best < 0 || p->s[i].cap < p->s[best].cap))
			best = i;
	if (best < 0) {
		if (p->n == p->cap) {
			p->cap = p->cap ? 2 * p->cap : 8;
			p->s = xrealloc(p->s, (size_t)p->cap * sizeof(*p->s));
		}
		struct dist_gpu_slot *s = &p->s[p->n];
		memset(s, 0, sizeof(*s));
		enum aorta_status st;
		if ((st = dev_alloc(p->sym, (n ? n : 1) * sizeof(float), (void **)&s->p, &s->win, e)))
			return st;
		if ((st = GPU_CALL(e, gpuEventCreateWithFlags(&s->ev, gpuEventDisableTiming)))) {
			dev_free(p->sym, s->p, s->win);
			return st;
		}
		s->cap = n;
		p->bytes += (n ? n : 1) * sizeof(float);
		best = p->n++;
	}
	struct dist_gpu_slot *s = &p->s[best];
	if (s->has_ev && writer) {
		enum aorta_status st = GPU_CALL(e, gpuStreamWaitEvent(writer, s->ev, 0));
		if (st)
			return st;
	}
	s->used = 1;
	*out = best;
	return AORTA_OK;
}

/* Gives slot i back once the work enqueued so far on `last_user` is done
 * (NULL: at once, for the dry run that sizes the pools). */
static enum aorta_status pool_put(struct dist_gpu_pool *p, int i, gpuStream_t last_user, struct aorta_error *e)
{
	struct dist_gpu_slot *s = &p->s[i];
	s->used = 0;
	if (!last_user)
		return AORTA_OK;
	s->has_ev = 1;
	return GPU_CALL(e, gpuEventRecord(s->ev, last_user));
}

/* Sizes both pools for the schedule by taking and giving back buffers as
 * one step will (same order, same best fit), so no step allocates. */
static enum aorta_status pools_presize(struct dist_gpu *x, struct aorta_error *e)
{
	const struct dist_plan *pl = x->pl;
	enum aorta_status st = AORTA_OK;
	for (int i = 0; i < x->sch->n && !st; i++) {
		const struct dist_action *a = &x->sch->a[i];
		int g = a->arg;
		switch (a->kind) {
		case ACT_ALL_GATHER:
			st = pool_take(&x->gather, pl->g[g].padded, NULL, &x->gslot[g], e);
			break;
		case ACT_FREE:
			st = pool_put(&x->gather, x->gslot[g], NULL, e);
			x->gslot[g] = -1;
			break;
		case ACT_BACKWARD:
			/* with accumulation, later micro-batches add to the buffer taken */
			if (pl->sharded && x->fslot[g] < 0)
				st = pool_take(&x->gradp, pl->g[g].padded, NULL, &x->fslot[g], e);
			break;
		case ACT_WAIT_RS:
			st = pool_put(&x->gradp, x->fslot[g], NULL, e);
			x->fslot[g] = -1;
			break;
		default:
			break;
		}
	}
	return st;
}

static void pool_release(struct dist_gpu_pool *p)
{
	for (int i = 0; i < p->n; i++) {
		dev_free(p->sym, p->s[i].p, p->s[i].win);
		gpuEventDestroy(p->s[i].ev);
	}
	free(p->s);
	memset(p, 0, sizeof(*p));
}

/* ---- collectives ---------------------------------------------------------- */

static const int coll_stream[] = { GS_ALLGATHER, GS_REDUCESCATTER, GS_ALLREDUCE, GS_AUX, GS_AUX };
static const enum rec_kind coll_rec[] = { REC_ALL_GATHER, REC_REDUCE_SCATTER, REC_ALL_REDUCE, REC_COMM, REC_COMM };

/* Notes what a collective of the step moved, under its recorder tag. */
static void commrec_add(struct dist_gpu *x, const char *tag, enum comm_coll kind, enum comm_dtype dt,
			size_t count, int group_size)
{
	if (x->ncrec == x->crec_cap) {
		x->crec_cap = x->crec_cap ? 2 * x->crec_cap : 64;
		x->crec = xrealloc(x->crec, (size_t)x->crec_cap * sizeof(*x->crec));
	}
	struct dist_gpu_commrec *r = &x->crec[x->ncrec++];
	snprintf(r->tag, sizeof(r->tag), "%s", tag);
	r->bytes = comm_coll_bytes(kind, dt, count, group_size);
	r->dtype = dt;
	r->coll = kind;
	x->step_bytes[kind] += r->bytes;
}

int dist_gpu_coll_bytes(const struct dist_gpu *x, const char *tag, uint64_t *bytes, enum comm_dtype *dtype)
{
	for (int i = 0; i < x->ncrec; i++)
		if (!strcmp(x->crec[i].tag, tag)) {
			*bytes = x->crec[i].bytes;
			*dtype = x->crec[i].dtype;
			return 1;
		}
	return 0;
}

/* Starts collective `kind` of count elements of dt on group g into c,
 * bracketed on its stream by a range tagged <prefix>_<what> (prefix: the
 * step's, or the next step's for a pre-gather).  The caller has made the
 * stream wait for the input. */
static enum aorta_status coll_start_tagged(struct dist_gpu *x, struct dist_gpu_coll *c, enum comm_coll kind,
					   struct comm_group *g, const void *send, void *recv, size_t count,
					   enum comm_dtype dt, const char *prefix, const char *what,
					   struct aorta_error *e)
{
	const int sid = coll_stream[kind];
	gpuStream_t s = x->gs->s[sid];
	char tag[128], phase[96];
	enum aorta_status st = AORTA_OK;

	if (c->issued)
		return aorta_fail(e, AORTA_EINTERNAL, NULL, 0, -1, "rank %d: step %d: %s issued twice", x->comm->rank,
				  x->steps + 1, what);
	if (ISOLATE(x) == ISOLATE_COMPUTE) {
		/* not issued at all: no range, no event, nothing to wait for */
		c->local = 1;
		c->issued = 1;
		c->skipped = 1;
		return AORTA_OK;
	}
	snprintf(tag, sizeof(tag), "%s_%s", prefix, what);
	snprintf(phase, sizeof(phase), "step %d %s", x->steps + 1, what);
	nvtx_push(what);
	int h = x->rec ? rec_begin_fn(x->rec, sid, tag, coll_rec[kind], comm_coll_name(kind)) : -1;
	if (g->size == 1) {
		/* the sum over one rank is a copy; all-gather and reduce-scatter of
		 * one rank have count = the whole buffer */
		if (send != recv && count)
			st = GPU_CALL(e, gpuMemcpyAsync(recv, send, count * comm_dtype_size(dt),
							gpuMemcpyDeviceToDevice, s));
		if (!st)
			st = GPU_CALL(e, gpuEventRecord(c->done, s));
		c->local = 1;
	} else {
		c->local = 0;
		switch (kind) {
		case COMM_ALL_GATHER:
			st = comm_all_gather(g, send, recv, count, &c->req, phase, e);
			break;
		case COMM_REDUCE_SCATTER:
			st = comm_reduce_scatter_ex(g, send, recv, count, dt, &c->req, phase, e);
			break;
		case COMM_ALL_REDUCE:
			st = comm_all_reduce_ex(g, send, recv, count, dt, &c->req, phase, e);
			break;
		default:
			st = aorta_fail(e, AORTA_EINTERNAL, NULL, 0, -1, "collective %s not used by the executor",
					comm_coll_name(kind));
		}
	}
	if (x->rec)
		rec_end(x->rec, h);
	nvtx_pop();
	if (!st) {
		c->issued = 1;
		commrec_add(x, tag, kind, dt, count, g->size);
	}
	return st;
}

static enum aorta_status coll_start(struct dist_gpu *x, struct dist_gpu_coll *c, enum comm_coll kind,
				    struct comm_group *g, const void *send, void *recv, size_t count,
				    enum comm_dtype dt, const char *what, struct aorta_error *e)
{
	return coll_start_tagged(x, c, kind, g, send, recv, count, dt, x->prefix, what, e);
}

/* Where a unit's reduced bf16 shard starts in rs16: after its padded
 * gradient, rounded up to 8 elements (16 bytes). */
static size_t rs16_off(const struct dist_shard *sh)
{
	return (sh->padded + 7) / 8 * 8;
}

/* A gradient reduction (REDUCE_SCATTER or ALL_REDUCE) of count elements
 * per rank from src[nsrc] into dst, in the plan's reduce dtype.  bf16: on
 * the collective's stream, src -> s16 (bf16), the collective s16 -> r16,
 * r16 -> dst (fp32), then c->done, which the waits use (c->cast). */
static enum aorta_status reduce_start(struct dist_gpu *x, struct dist_gpu_coll *c, enum comm_coll kind,
				      struct comm_group *g, const float *src, size_t nsrc, float *dst, size_t count,
				      uint16_t *s16, uint16_t *r16, const char *what, struct aorta_error *e)
{
	if (x->pl->k.reduce_dtype != COMM_BF16 || ISOLATE(x) == ISOLATE_COMPUTE)
		return coll_start(x, c, kind, g, src, dst, count, COMM_F32, what, e);
	gpuStream_t s = x->gs->s[coll_stream[kind]];
	enum aorta_status st;
	if ((st = GPU_CALL(e, (gpuError_t)gpu_f32_to_bf16(s16, src, nsrc, s))) ||
	    (st = coll_start(x, c, kind, g, s16, r16, count, COMM_BF16, what, e)) ||
	    (st = GPU_CALL(e, (gpuError_t)gpu_bf16_to_f32(dst, r16, count, s))) ||
	    (st = GPU_CALL(e, gpuEventRecord(c->done, s))))
		return st;
	c->cast = 1;
	return AORTA_OK;
}

/* Makes stream s wait for c (no host wait). */
static enum aorta_status coll_wait_stream(struct dist_gpu_coll *c, gpuStream_t s, struct aorta_error *e)
{
	if (!c->issued)
		return aorta_fail(e, AORTA_EINTERNAL, NULL, 0, -1, "wait for a collective that was not issued");
	if (c->skipped)
		return AORTA_OK;
	if (c->local || c->cast)
		return GPU_CALL(e, gpuStreamWaitEvent(s, c->done, 0));
	return comm_wait_stream(&c->req, s, e);
}

/* Completes c on the host (after the step: quick). */
static enum aorta_status coll_finish(struct dist_gpu_coll *c, struct aorta_error *e)
{
	enum aorta_status st = AORTA_OK;
	if (c->issued && !c->local)
		st = comm_wait(&c->req, e);
	c->issued = 0;
	c->cast = 0;
	c->skipped = 0;
	return st;
}

/* Stream `to` waits for the work enqueued so far on stream `from`. */
static enum aorta_status follow(gpuEvent_t ev, gpuStream_t from, gpuStream_t to, struct aorta_error *e)
{
	enum aorta_status st = GPU_CALL(e, gpuEventRecord(ev, from));
	return st ? st : GPU_CALL(e, gpuStreamWaitEvent(to, ev, 0));
}

/* ---- lifecycle -------------------------------------------------------------- */

static int ncolls(const struct dist_plan *pl)
{
	return (2 * pl->k.accum + 1) * pl->ngroups + pl->nbuckets;
}

static struct dist_gpu_coll *coll_at(struct dist_gpu *x, int i)
{
	const int A = 2 * x->pl->k.accum * x->pl->ngroups, G = x->pl->ngroups;
	return i < A ? &x->ag[i] : i < A + G ? &x->rs[i - A] : &x->ar[i - A - G];
}

/* The early norm's share of one reduction: aux waits for collective c, then
 * adds the squared norm of grads[off, off + len) to the step's sum. */
static enum aorta_status norm_add(struct dist_gpu *x, struct dist_gpu_coll *c, size_t off, size_t len,
				  struct aorta_error *e)
{
	struct gpu_model *gm = x->gm;
	gpuStream_t cs = x->gs->s[GS_COMPUTE], as = x->gs->s[GS_AUX];
	enum aorta_status st;
	if (!x->norm_early || !x->norm_ranges || ISOLATE(x) == ISOLATE_COMM)
		return AORTA_OK;
	if ((st = coll_wait_stream(c, as, e)))
		return st;
	gpu_ops_set_stream(gm->ops, as);
	gpu_sumsq(gm->ops, gm->sumsq, x->grads + off, len);
	gpu_ops_set_stream(gm->ops, cs);
	return AORTA_OK;
}

void dist_gpu_set_norm_early(struct dist_gpu *x, int on)
{
	x->norm_early = on != 0;
}

/* The backend's events (the step's joins, the norm, the loss, the
 * prefetched all-gather, the optimizer's first launch). */
static enum aorta_status create_events(struct dist_gpu *x, struct aorta_error *e)
{
	gpuEvent_t *ev[] = { &x->ev_start, &x->ev_compute, &x->ev_aux, &x->ev_join, &x->ev_consumed, &x->ev_mbdata,
			     &x->norm.done, &x->loss.done, &x->pre_ag.done, &x->ev_opt_first };
	enum aorta_status st = AORTA_OK;
	for (size_t i = 0; !st && i < sizeof(ev) / sizeof(ev[0]); i++)
		st = GPU_CALL(e, gpuEventCreateWithFlags(ev[i], gpuEventDisableTiming));
	return st;
}

/* bf16 reductions: the largest reduce-scatter and all-reduce staging
 * buffers the plan needs. */
static enum aorta_status bf16_buffers(struct dist_gpu *x, struct aorta_error *e)
{
	const struct dist_plan *pl = x->pl;
	enum aorta_status st = AORTA_OK;
	for (int g = 0; g < pl->ngroups; g++)
		if (pl->sharded && rs16_off(&pl->g[g]) + pl->g[g].shard_len > x->rs16_n)
			x->rs16_n = rs16_off(&pl->g[g]) + pl->g[g].shard_len;
	for (int b = 0; b < pl->nbuckets; b++)
		if (pl->b[b].len > x->ar16_n)
			x->ar16_n = pl->b[b].len;
	if ((x->rs16_n && (st = GPU_CALL(e, gpuMalloc((void **)&x->rs16, x->rs16_n * sizeof(uint16_t))))) ||
	    (x->ar16_n && (st = GPU_CALL(e, gpuMalloc((void **)&x->ar16, x->ar16_n * sizeof(uint16_t))))))
		return st;
	return AORTA_OK;
}

enum aorta_status dist_gpu_init(struct dist_gpu *x, struct gpu_model *gm, const struct dist_plan *pl,
				const struct dist_schedule *sch, struct comm *c, const struct gpu_streams *gs,
				struct recorder *rec, const float *init_params, const struct dist_adamw *opt,
				float grad_unscale, struct aorta_error *e)
{
	const struct param_layout *lay = gm->lay;
	enum aorta_status st;
	float *full = NULL;

	memset(x, 0, sizeof(*x));
	if (c->size != pl->world || c->rank != pl->rank || c->node_size != pl->node_size)
		return aorta_fail(e, AORTA_EINTERNAL, NULL, 0, -1,
				  "plan for rank %d of %d (node %d) given a communicator for rank %d of %d (node %d)",
				  pl->rank, pl->world, pl->node_size, c->rank, c->size, c->node_size);
	if (pl->ngroups != lay->ngroups)
		return aorta_fail(e, AORTA_EINTERNAL, NULL, 0, -1, "plan has %d groups, layout %d", pl->ngroups,
				  lay->ngroups);
	if ((st = dist_schedule_check(sch, pl, NULL, e)))
		return st;
	x->gm = gm;
	x->pl = pl;
	x->sch = sch;
	x->comm = c;
	x->gs = gs;
	x->rec = rec;
	x->opt = *opt;
	x->grad_unscale = grad_unscale;
	const int G = pl->ngroups;
	x->gslot = xcalloc((size_t)G, sizeof(int));
	x->fslot = xcalloc((size_t)G, sizeof(int));
	x->nag = xcalloc((size_t)G, sizeof(int));
	for (int g = 0; g < G; g++)
		x->gslot[g] = x->fslot[g] = -1;
	x->ag = xcalloc((size_t)(2 * pl->k.accum * G), sizeof(*x->ag));
	x->rs = xcalloc((size_t)G, sizeof(*x->rs));
	x->ar = xcalloc((size_t)(pl->nbuckets ? pl->nbuckets : 1), sizeof(*x->ar));

	size_t n = pl->local_total ? pl->local_total : 1, nb = n * sizeof(float);
	/* copy-engine all-gathers: shard and gather buffers in symmetric memory
	 * of the shard group (when the backend offers it; see dist_gpu.h) */
	struct comm_group *shard_g = pl->sharded && c->size > 1 ? comm_group(c, pl->shard_pg) : NULL;
	if (shard_g && shard_g->size < 2)
		shard_g = NULL;
	x->gather.sym = shard_g;
	if ((st = dev_alloc(shard_g, nb, (void **)&x->params, &x->params_win, e)) ||
	    (st = GPU_CALL(e, gpuMalloc((void **)&x->grads, nb))) ||
	    (st = GPU_CALL(e, gpuMalloc((void **)&x->m, nb))) || (st = GPU_CALL(e, gpuMalloc((void **)&x->v, nb))) ||
	    (st = GPU_CALL(e, gpuMalloc((void **)&x->hl, 2 * sizeof(float)))) ||
	    (st = GPU_CALL(e, gpuMalloc((void **)&x->lossbuf, 2 * sizeof(float)))) ||
	    (st = GPU_CALL(e, gpuMalloc((void **)&x->lossacc, sizeof(float)))) ||
	    (st = GPU_CALL(e, gpuMallocHost((void **)&x->h_out, 2 * sizeof(float)))) ||
	    (st = GPU_CALL(e, gpuMallocHost((void **)&x->h_sumsq, sizeof(double)))) ||
	    (st = GPU_CALL(e, gpuMallocHost((void **)&x->h_stop, sizeof(float)))))
		goto fail;
	if ((st = create_events(x, e)))
		goto fail;
	x->ag_first = x->pre_g = x->pre_slot = -1;
	for (int i = 0; pl->sharded && i < sch->n; i++)
		if (sch->a[i].kind == ACT_ALL_GATHER) {
			x->ag_first = sch->a[i].arg;
			break;
		}
	x->norm_ranges = dist_plan_norm_ranges(pl);
	x->norm_early = 1;
	for (int i = 0; i < ncolls(pl); i++)
		if ((st = GPU_CALL(e, gpuEventCreateWithFlags(&coll_at(x, i)->done, gpuEventDisableTiming))))
			goto fail;
	*x->h_stop = 0.0f;
	x->h_out[0] = x->h_out[1] = 0.0f;
	*x->h_sumsq = 0.0;
	comm_set_stream(c, COMM_ALL_GATHER, gs->s[GS_ALLGATHER]);
	comm_set_stream(c, COMM_REDUCE_SCATTER, gs->s[GS_REDUCESCATTER]);
	comm_set_stream(c, COMM_ALL_REDUCE, gs->s[GS_ALLREDUCE]);
	comm_set_stream(c, COMM_BROADCAST, gs->s[GS_AUX]);

	/* sync_module_states: rank 0's parameters everywhere, then my shards
	 * (zero padding), zero gradients and moments */
	if ((st = GPU_CALL(e, gpuMalloc((void **)&full, lay->total * sizeof(float)))) ||
	    (st = GPU_CALL(e, gpuMemcpy(full, init_params, lay->total * sizeof(float), gpuMemcpyHostToDevice))) ||
	    (st = GPU_CALL(e, gpuDeviceSynchronize())))
		goto fail;
	if (c->size > 1 && (st = comm_broadcast(comm_group(c, COMM_PG_WORLD), full, lay->total, 0, NULL,
						"init broadcast of the parameters", e)))
		goto fail;
	if ((st = GPU_CALL(e, gpuMemsetAsync(x->params, 0, nb, gs->s[GS_COMPUTE]))) ||
	    (st = GPU_CALL(e, gpuMemsetAsync(x->grads, 0, nb, gs->s[GS_COMPUTE]))) ||
	    (st = GPU_CALL(e, gpuMemsetAsync(x->m, 0, nb, gs->s[GS_COMPUTE]))) ||
	    (st = GPU_CALL(e, gpuMemsetAsync(x->v, 0, nb, gs->s[GS_COMPUTE]))))
		goto fail;
	for (int g = 0; g < G; g++) {
		const struct dist_shard *sh = &pl->g[g];
		if (sh->valid && (st = GPU_CALL(e, gpuMemcpyAsync(x->params + sh->local_off, full + sh->off + sh->begin,
								  sh->valid * sizeof(float), gpuMemcpyDeviceToDevice,
								  gs->s[GS_COMPUTE]))))
			goto fail;
	}
	if ((st = GPU_CALL(e, gpuDeviceSynchronize())) || (st = pools_presize(x, e)))
		goto fail;
	if (pl->k.reduce_dtype == COMM_BF16 && (st = bf16_buffers(x, e)))
		goto fail;
	/* isolate=compute: no all-gather ever writes the gather buffers */
	for (int i = 0; ISOLATE(x) == ISOLATE_COMPUTE && i < x->gather.n; i++) {
		size_t n1 = x->gather.s[i].cap < lay->total ? x->gather.s[i].cap : lay->total;
		if ((st = GPU_CALL(e, gpuMemcpy(x->gather.s[i].p, full, n1 * sizeof(float), gpuMemcpyDeviceToDevice))))
			goto fail;
	}
	gpuFree(full);
	return AORTA_OK;
fail:
	if (full)
		gpuFree(full);
	dist_gpu_release(x);
	return st;
}

void dist_gpu_release(struct dist_gpu *x)
{
	if (!x->pl)
		return;
	if (x->ag)
		for (int i = 0; i < ncolls(x->pl); i++)
			if (coll_at(x, i)->done)
				gpuEventDestroy(coll_at(x, i)->done);
	if (x->pre_g >= 0)
		(void)coll_finish(&x->pre_ag, NULL);  /* a gather for a step that never ran */
	gpuEvent_t evs[] = { x->ev_start, x->ev_compute, x->ev_aux, x->ev_join, x->ev_consumed, x->ev_mbdata,
			     x->norm.done, x->loss.done, x->pre_ag.done, x->ev_opt_first };
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
		if (evs[i])
			gpuEventDestroy(evs[i]);
	for (int i = 0; i < 3 * DIST_STRESS_MAX_LEVEL; i++)
		if (x->stress[i].done)
			gpuEventDestroy(x->stress[i].done);
	if (x->params_win)
		dev_free(comm_group(x->comm, x->pl->shard_pg), x->params, x->params_win);
	else if (x->params)
		gpuFree(x->params);
	float *dev[] = { x->grads, x->m, x->v, x->hl, x->lossbuf, x->lossacc, x->stress_a, x->stress_b };
	for (size_t i = 0; i < sizeof(dev) / sizeof(dev[0]); i++)
		if (dev[i])
			gpuFree(dev[i]);
	if (x->stress_h)
		gpuFreeHost(x->stress_h);
	if (x->rs16)
		gpuFree(x->rs16);
	if (x->ar16)
		gpuFree(x->ar16);
	free(x->crec);
	if (x->h_out)
		gpuFreeHost(x->h_out);
	if (x->h_sumsq)
		gpuFreeHost(x->h_sumsq);
	if (x->h_stop)
		gpuFreeHost(x->h_stop);
	pool_release(&x->gather);
	pool_release(&x->gradp);
	free(x->gslot);
	free(x->fslot);
	free(x->nag);
	free(x->ag);
	free(x->rs);
	free(x->ar);
	memset(x, 0, sizeof(*x));
}

/* ---- one step ----------------------------------------------------------------- */

static enum aorta_status not_ready(struct dist_gpu *x, const struct dist_action *a, const char *why,
				   struct aorta_error *e)
{
	return aorta_fail(e, AORTA_EINTERNAL, NULL, 0, -1, "rank %d: step %d: %s of group %d: %s", x->comm->rank,
			  x->steps + 1, dist_act_name(a->kind), a->arg, why);
}

/* A range on the compute stream around one group's forward or backward. */
static int compute_begin(struct dist_gpu *x, const char *what, int g)
{
	char name[32], tag[128];
	snprintf(name, sizeof(name), "%s_g%d", what, g);
	snprintf(tag, sizeof(tag), "%s_%s", x->prefix, name);
	nvtx_push(name);
	return x->rec ? rec_begin(x->rec, GS_COMPUTE, tag, REC_COMPUTE) : -1;
}

static void range_end(struct dist_gpu *x, int h)
{
	if (x->rec)
		rec_end(x->rec, h);
	nvtx_pop();
}

static int aux_begin(struct dist_gpu *x, const char *what)
{
	char tag[128];
	snprintf(tag, sizeof(tag), "%s_%s", x->prefix, what);
	nvtx_push(what);
	return x->rec ? rec_begin(x->rec, GS_AUX, tag, REC_COMPUTE) : -1;
}

/* The loss (and the stop flags) of the whole global batch: at GRAD_NORM,
 * on aux once compute has finished the last micro-batch, into the
 * all-reduce stream ahead of the norm's all-reduce, so that nothing of the
 * step's tail (AdamW, the next step's first gather on the same
 * communicator) queues in front of it; dist_gpu_step waits for it on aux
 * before the copies to the host. */
static enum aorta_status loss_start(struct dist_gpu *x, struct aorta_error *e)
{
	gpuStream_t as = x->gs->s[GS_AUX];
	const float *lsrc = x->gm->loss;
	enum aorta_status st;
	if (x->pl->k.accum > 1) {
		/* the last micro-batch's loss joins the sum */
		gpu_ops_set_stream(x->gm->ops, as);
		gpu_add(x->gm->ops, x->lossacc, x->lossacc, x->gm->loss, 1);
		lsrc = x->lossacc;
	}
	if ((st = ISOLATE(x) == ISOLATE_COMM ?
			  GPU_CALL(e, gpuMemsetAsync(x->lossbuf, 0, sizeof(float), as)) :
			  GPU_CALL(e, gpuMemcpyAsync(x->lossbuf, lsrc, sizeof(float), gpuMemcpyDeviceToDevice, as))) ||
	    (st = GPU_CALL(e, gpuMemcpyAsync(x->lossbuf + 1, x->h_stop, sizeof(float), gpuMemcpyHostToDevice, as))))
		return st;
	struct comm_group *world = comm_group(x->comm, COMM_PG_WORLD);
	if (world->size > 1 &&
	    ((st = follow(x->ev_aux, as, x->gs->s[GS_ALLREDUCE], e)) ||
	     (st = coll_start(x, &x->loss, COMM_ALL_REDUCE, world, x->lossbuf, x->lossbuf, 2, COMM_F32,
			      "allreduce_loss", e))))
		return st;
	return AORTA_OK;
}

/* GRAD_NORM on aux: the local shard's squared norm, summed over the shard
 * group as hi + lo floats, then the clip factor (1/world and the loss
 * scale undone inside it), all on the device. */
static enum aorta_status grad_norm(struct dist_gpu *x, struct aorta_error *e)
{
	const struct dist_plan *pl = x->pl;
	struct gpu_model *gm = x->gm;
	gpuStream_t cs = x->gs->s[GS_COMPUTE], as = x->gs->s[GS_AUX], rs = x->gs->s[GS_ALLREDUCE];
	enum aorta_status st;

	if ((st = follow(x->ev_compute, cs, as, e)) || (st = loss_start(x, e)))
		return st;
	if (ISOLATE(x) == ISOLATE_COMM) {
		/* the norm's all-reduce alone, after the same dependencies */
		struct comm_group *sg = comm_group(x->comm, pl->shard_pg);
		if ((st = GPU_CALL(e, gpuMemsetAsync(gm->sumsq, 0, sizeof(double), as))))
			return st;
		if (sg->size > 1 &&
		    ((st = follow(x->ev_aux, as, rs, e)) ||
		     (st = coll_start(x, &x->norm, COMM_ALL_REDUCE, sg, x->hl, x->hl, 2, COMM_F32, "allreduce_gradnorm",
				      e)) ||
		     (st = coll_wait_stream(&x->norm, as, e))))
			return st;
		return AORTA_OK;
	}
	gm->stream = as;
	gpu_ops_set_stream(gm->ops, as);
	int h = aux_begin(x, "grad_clip");
	if (!(x->norm_early && x->norm_ranges)) {
		/* else summed as the reductions landed (norm_add), from the
		 * zero set at the start of the step */
		if ((st = GPU_CALL(e, gpuMemsetAsync(gm->sumsq, 0, sizeof(double), as))))
			return st;
		gpu_sumsq(gm->ops, gm->sumsq, x->grads, pl->local_total);
	}
	struct comm_group *shard = comm_group(x->comm, pl->shard_pg);
	if (shard->size > 1) {
		if ((st = GPU_CALL(e, (gpuError_t)gpu_sumsq_split(x->hl, gm->sumsq, as))) ||
		    (st = follow(x->ev_aux, as, rs, e)) ||
		    (st = coll_start(x, &x->norm, COMM_ALL_REDUCE, shard, x->hl, x->hl, 2, COMM_F32,
				      "allreduce_gradnorm", e)) ||
		    (st = coll_wait_stream(&x->norm, as, e)) ||
		    (st = GPU_CALL(e, (gpuError_t)gpu_sumsq_join(gm->sumsq, x->hl, as))))
			return st;
	}
	gpu_clip_scale(gm->ops, gm->gscale, gm->sumsq, x->opt.max_grad_norm, x->grad_unscale / (float)pl->world);
	range_end(x, h);
	return AORTA_OK;
}

/* AdamW on local elements [a, b) (elementwise: any split gives the same
 * values). */
static void adamw_range(struct dist_gpu *x, float lr, size_t a, size_t b)
{
	struct gpu_model *gm = x->gm;
	if (b > a)
		gpu_adamw(gm->ops, x->params + a, x->grads + a, x->m + a, x->v + a, b - a, lr, x->opt.beta1,
			  x->opt.beta2, x->opt.eps, x->opt.weight_decay, x->steps + 1, gm->gscale);
}

/* OPTIMIZER on aux.  With a pre-gather due (dist_gpu_set_next), the first
 * gathered group's shard first, then ev_opt_first, then the rest. */
static enum aorta_status optimizer(struct dist_gpu *x, float lr, struct aorta_error *e)
{
	const int pre = x->next_prefix[0] && x->ag_first >= 0;
	size_t a = 0, b = 0, n = x->pl->local_total;
	if (pre) {
		a = x->pl->g[x->ag_first].local_off;
		b = a + x->pl->g[x->ag_first].shard_len;
	}
	const int run = ISOLATE(x) != ISOLATE_COMM;
	int h = run ? aux_begin(x, "optimizer") : -1;
	if (run && pre)
		adamw_range(x, lr, a, b);
	if (pre) {
		enum aorta_status st = GPU_CALL(e, gpuEventRecord(x->ev_opt_first, x->gs->s[GS_AUX]));
		if (st)
			return st;
	}
	if (run) {
		/* the rest: [0, a) and [b, n), or all of [0, n) without a
		 * pre-gather (a = b = 0) */
		adamw_range(x, lr, 0, a);
		adamw_range(x, lr, b, n);
		range_end(x, h);
	}
	return AORTA_OK;
}

void dist_gpu_set_next(struct dist_gpu *x, const char *next_prefix)
{
	snprintf(x->next_prefix, sizeof(x->next_prefix), "%s", next_prefix ? next_prefix : "");
}

/* After the step's OPTIMIZER: the next step's first gather, on the
 * all-gather stream once AdamW has updated that group's shard. */
static enum aorta_status pre_gather(struct dist_gpu *x, struct aorta_error *e)
{
	const int g = x->ag_first;
	const struct dist_shard *sh = &x->pl->g[g];
	gpuStream_t ags = x->gs->s[GS_ALLGATHER];
	char what[48];
	enum aorta_status st;

	if (x->pre_g >= 0)
		return aorta_fail(e, AORTA_EINTERNAL, NULL, 0, -1, "rank %d: step %d: a pre-gather is still pending",
				  x->comm->rank, x->steps + 1);
	if ((st = GPU_CALL(e, gpuStreamWaitEvent(ags, x->ev_opt_first, 0))) ||
	    (st = pool_take(&x->gather, sh->padded, ags, &x->pre_slot, e)))
		return st;
	snprintf(what, sizeof(what), "allgather_g%d", g);
	st = coll_start_tagged(x, &x->pre_ag, COMM_ALL_GATHER, comm_group(x->comm, x->pl->shard_pg),
			       x->params + sh->local_off, x->gather.s[x->pre_slot].p, sh->shard_len, COMM_F32,
			       x->next_prefix, what, e);
	if (st)
		return st;
	x->pre_g = g;
	return AORTA_OK;
}

/* MICRO j: micro-batch 0 was begun with the step; for j >= 1, micro-batch
 * j-1's loss into the sum (compute), its batch buffer released to the
 * loader's upload on aux, compute waits for that upload, the model begins
 * on it (dist_gpu.h). */
static enum aorta_status micro_begin(struct dist_gpu *x, const struct dist_action *a, struct aorta_error *e)
{
	struct gpu_model *gm = x->gm;
	gpuStream_t cs = x->gs->s[GS_COMPUTE], as = x->gs->s[GS_AUX];
	const int j = a->arg;
	enum aorta_status st;
	uint64_t seed = 0;

	if (j <= 0)
		return AORTA_OK;
	if (j >= x->pl->k.accum)
		return not_ready(x, a, "micro-batch outside the step", e);
	if (!x->load)
		return not_ready(x, a, "no micro-batch loader (dist_gpu_set_loader)", e);
	gpu_add(gm->ops, x->lossacc, x->lossacc, gm->loss, 1);
	if ((st = follow(x->ev_consumed, cs, as, e)) || (st = x->load(x->load_ctx, j, as, &seed, e)) ||
	    (st = follow(x->ev_mbdata, as, cs, e)))
		return st;
	x->mb = j;
	for (int g = 0; g < x->pl->ngroups; g++)
		x->nag[g] = 0;
	return gpu_model_begin(gm, seed, x->training, x->loss_scale, e);
}

/* ALL_GATHER of group g: a gather buffer and the collective, or the
 * prefetched one the previous step started taken over. */
static enum aorta_status all_gather(struct dist_gpu *x, const struct dist_action *a, struct aorta_error *e)
{
	const struct dist_plan *pl = x->pl;
	const int g = a->arg;
	struct comm_group *shard = comm_group(x->comm, pl->shard_pg);
	const struct dist_shard *sh = &pl->g[g];
	enum aorta_status st;
	char what[48];
	if (x->gslot[g] >= 0)
		return not_ready(x, a, "already gathered", e);
	if (x->nag[g] > 1)
		return not_ready(x, a, "gathered a third time in one micro-batch", e);
	int ph = x->nag[g]++;
	if (x->pre_g == g && ph == 0 && x->mb == 0) {
		/* gathered at the end of the previous step: take it over
		 * (the slot it names was finished there, so a swap keeps
		 * every collective's event its own) */
		struct dist_gpu_coll *c = &x->ag[g], t = *c;
		*c = x->pre_ag;
		x->pre_ag = t;
		x->gslot[g] = x->pre_slot;
		x->pre_g = x->pre_slot = -1;
		return AORTA_OK;
	}
	if ((st = pool_take(&x->gather, sh->padded, x->gs->s[GS_ALLGATHER], &x->gslot[g], e)))
		return st;
	snprintf(what, sizeof(what), ph ? "allgather_bwd_g%d" : "allgather_g%d", g);
	return coll_start(x, &x->ag[(x->mb * 2 + ph) * pl->ngroups + g], COMM_ALL_GATHER, shard,
			  x->params + sh->local_off, x->gather.s[x->gslot[g]].p, sh->shard_len, COMM_F32, what,
			  e);
}

/* FORWARD or BACKWARD of group g on its gathered (or replicated)
 * parameters; the backward into its gradient buffer. */
static enum aorta_status compute(struct dist_gpu *x, const struct dist_action *a, struct aorta_error *e)
{
	const struct dist_plan *pl = x->pl;
	struct gpu_model *gm = x->gm;
	const int g = a->arg;
	gpuStream_t cs = x->gs->s[GS_COMPUTE];
	const struct dist_shard *sh = &pl->g[g];
	enum aorta_status st;
	const float *gp = x->params + sh->local_off; /* the replica (local_off == off) */
	if (pl->sharded) {
		if (x->gslot[g] < 0)
			return not_ready(x, a, "parameters not gathered", e);
		gp = x->gather.s[x->gslot[g]].p;
	}
	if (a->kind == ACT_FORWARD && ISOLATE(x) == ISOLATE_COMM)
		return AORTA_OK;
	if (a->kind == ACT_FORWARD) {
		int h = compute_begin(x, "forward", g);
		st = gpu_model_group_forward(gm, g, gp, e);
		range_end(x, h);
		return st;
	}
	float *gg = x->grads + sh->local_off;
	int fresh = 0;   /* the step's first backward of g: zero its unsharded gradient */
	if (pl->sharded) {
		/* with accumulation, later micro-batches add to the buffer taken */
		if (x->fslot[g] < 0) {
			if ((st = pool_take(&x->gradp, sh->padded, cs, &x->fslot[g], e)))
				return st;
			fresh = 1;
		} else if (x->rs[g].issued) {
			return not_ready(x, a, "gradient buffer still being reduced", e);
		}
		gg = x->gradp.s[x->fslot[g]].p;
	}
	if (ISOLATE(x) == ISOLATE_COMM)
		return AORTA_OK;
	int h = compute_begin(x, "backward", g);
	if (fresh && (st = GPU_CALL(e, gpuMemsetAsync(gg, 0, sh->padded * sizeof(float), cs))))
		return st;
	st = gpu_model_group_backward(gm, g, gp, gg, e);
	range_end(x, h);
	return st;
}

static enum aorta_status run_action(struct dist_gpu *x, const struct dist_action *a, float lr,
				    struct aorta_error *e)
{
	const struct dist_plan *pl = x->pl;
	const int g = a->arg;
	gpuStream_t cs = x->gs->s[GS_COMPUTE];
	struct comm_group *shard = comm_group(x->comm, pl->shard_pg), *repl = comm_group(x->comm, pl->repl_pg);
	const struct dist_shard *sh = g >= 0 && g < pl->ngroups ? &pl->g[g] : NULL;
	enum aorta_status st;
	char what[48];

	switch (a->kind) {
	case ACT_ALL_GATHER:
		return all_gather(x, a, e);
	case ACT_WAIT_AG:
		if (x->gslot[g] < 0 || x->nag[g] < 1)
			return not_ready(x, a, "no all-gather in flight", e);
		return coll_wait_stream(&x->ag[(x->mb * 2 + x->nag[g] - 1) * pl->ngroups + g], cs, e);
	case ACT_FREE:
		if (x->gslot[g] < 0)
			return not_ready(x, a, "not gathered", e);
		st = pool_put(&x->gather, x->gslot[g], cs, e);
		x->gslot[g] = -1;
		return st;
	case ACT_FORWARD:
	case ACT_BACKWARD:
		return compute(x, a, e);
	case ACT_REDUCE_SCATTER:
		if (x->fslot[g] < 0)
			return not_ready(x, a, "no gradient", e);
		if ((st = follow(x->ev_compute, cs, x->gs->s[GS_REDUCESCATTER], e)))
			return st;
		snprintf(what, sizeof(what), "reducescatter_g%d", g);
		return reduce_start(x, &x->rs[g], COMM_REDUCE_SCATTER, shard, x->gradp.s[x->fslot[g]].p, sh->padded,
				    x->grads + sh->local_off, sh->shard_len, x->rs16, x->rs16 + rs16_off(sh), what, e);
	case ACT_WAIT_RS:
		if (x->fslot[g] < 0)
			return not_ready(x, a, "no reduce-scatter in flight", e);
		if ((st = coll_wait_stream(&x->rs[g], cs, e)) ||
		    (st = norm_add(x, &x->rs[g], sh->local_off, sh->shard_len, e)))
			return st;
		st = pool_put(&x->gradp, x->fslot[g], cs, e);
		x->fslot[g] = -1;
		return st;
	case ACT_ALL_REDUCE: {
		const struct dist_bucket *b = &pl->b[g];
		float *p = x->grads + b->off;
		if ((st = follow(x->ev_compute, cs, x->gs->s[GS_ALLREDUCE], e)))
			return st;
		snprintf(what, sizeof(what), "allreduce_b%d", g);
		return reduce_start(x, &x->ar[g], COMM_ALL_REDUCE, repl, p, b->len, p, b->len, x->ar16, x->ar16, what,
				    e);
	}
	case ACT_WAIT_AR:
		if ((st = coll_wait_stream(&x->ar[g], cs, e)))
			return st;
		return pl->sharded ? AORTA_OK : norm_add(x, &x->ar[g], pl->b[g].off, pl->b[g].len, e);
	case ACT_GRAD_NORM:
		return grad_norm(x, e);
	case ACT_OPTIMIZER:
		return optimizer(x, lr, e);
	case ACT_MICRO:
		return micro_begin(x, a, e);
	}
	return aorta_fail(e, AORTA_EINTERNAL, NULL, 0, -1, "unknown action %d", (int)a->kind);
}

void dist_gpu_set_loader(struct dist_gpu *x, dist_gpu_load_fn load, void *ctx)
{
	x->load = load;
	x->load_ctx = ctx;
}

enum aorta_status dist_gpu_set_stress(struct dist_gpu *x, int level, struct aorta_error *e)
{
	enum aorta_status st;
	if (level > DIST_STRESS_MAX_LEVEL)
		level = DIST_STRESS_MAX_LEVEL;
	if (level <= 0) {
		x->stress_level = 0;
		return AORTA_OK;
	}
	const size_t nb = DIST_STRESS_FLOATS * sizeof(float);
	if (!x->stress_a && ((st = GPU_CALL(e, gpuMalloc((void **)&x->stress_a, nb))) ||
			     (st = GPU_CALL(e, gpuMalloc((void **)&x->stress_b, nb))) ||
			     (st = GPU_CALL(e, gpuMallocHost((void **)&x->stress_h, nb)))))
		return st;
	for (int i = 0; i < 3 * DIST_STRESS_MAX_LEVEL; i++)
		if (!x->stress[i].done &&
		    (st = GPU_CALL(e, gpuEventCreateWithFlags(&x->stress[i].done, gpuEventDisableTiming))))
			return st;
	x->stress_level = level;
	return AORTA_OK;
}

/* A copy on the allreduce stream, bracketed there as <prefix>_<what>. */
static enum aorta_status stress_copy(struct dist_gpu *x, void *dst, const void *src, int kind,
				     enum rec_kind rk, const char *what, struct aorta_error *e)
{
	char tag[128];
	snprintf(tag, sizeof(tag), "%s_%s", x->prefix, what);
	nvtx_push(what);
	int h = x->rec ? rec_begin(x->rec, GS_ALLREDUCE, tag, rk) : -1;
	enum aorta_status st = GPU_CALL(e, gpuMemcpyAsync(dst, src, DIST_STRESS_FLOATS * sizeof(float), kind,
							  x->gs->s[GS_ALLREDUCE]));
	range_end(x, h);
	return st;
}

/* Upstream's stress injection (dist.h), all on the allreduce stream after
 * the optimizer: the stream-ordered kernels, copies and collectives need
 * no other dependency (the buffers are the executor's own). */
static enum aorta_status stress(struct dist_gpu *x, struct aorta_error *e)
{
	gpuStream_t ars = x->gs->s[GS_ALLREDUCE], as = x->gs->s[GS_AUX];
	struct comm_group *w = comm_group(x->comm, COMM_PG_WORLD);
	const size_t n = DIST_STRESS_FLOATS;
	const float inv = 1.0f / (float)x->pl->world;
	enum aorta_status st;
	char what[48];

	if ((st = follow(x->ev_aux, as, ars, e)))
		return st;
	for (int r = 0; r < x->stress_level; r++) {
		struct dist_gpu_coll *c = &x->stress[3 * r];
		uint64_t seed = dist_stress_seed(x->steps, r, x->comm->rank);
		if ((st = GPU_CALL(e, (gpuError_t)gpu_stress_fill(x->stress_a, n, seed, DIST_STRESS_SITE, ars))))
			return st;
		snprintf(what, sizeof(what), "stress_allreduce_%d", r);
		if ((st = coll_start(x, &c[0], COMM_ALL_REDUCE, w, x->stress_a, x->stress_a, n, COMM_F32, what, e)) ||
		    (st = GPU_CALL(e, (gpuError_t)gpu_stress_scale(x->stress_a, n, inv, ars))))
			return st;
		snprintf(what, sizeof(what), "stress_copy_%d", r);
		if ((st = stress_copy(x, x->stress_b, x->stress_a, gpuMemcpyDeviceToDevice, REC_MEMCPY_D2D, what, e)))
			return st;
		snprintf(what, sizeof(what), "stress_allreduce_sum_%d", r);
		if ((st = coll_start(x, &c[1], COMM_ALL_REDUCE, w, x->stress_b, x->stress_b, n, COMM_F32, what, e)))
			return st;
		snprintf(what, sizeof(what), "stress_d2h_%d", r);
		if ((st = stress_copy(x, x->stress_h, x->stress_b, gpuMemcpyDeviceToHost, REC_MEMCPY_D2H, what, e)))
			return st;
		snprintf(what, sizeof(what), "stress_h2d_%d", r);
		if ((st = stress_copy(x, x->stress_b, x->stress_h, gpuMemcpyHostToDevice, REC_MEMCPY_H2D, what, e)))
			return st;
		snprintf(what, sizeof(what), "stress_allreduce_avg_%d", r);
		if ((st = coll_start(x, &c[2], COMM_ALL_REDUCE, w, x->stress_b, x->stress_b, n, COMM_F32, what, e)) ||
		    (st = GPU_CALL(e, (gpuError_t)gpu_stress_scale(x->stress_b, n, inv, ars))))
			return st;
	}
	return AORTA_OK;
}

enum aorta_status dist_gpu_step(struct dist_gpu *x, const char *tag_prefix, gpuEvent_t data_ready,
				uint64_t dropout_seed, int training, float loss_scale, float lr, int stop,
				struct aorta_error *e)
{
	struct gpu_model *gm = x->gm;
	const struct gpu_streams *gs = x->gs;
	gpuStream_t cs = gs->s[GS_COMPUTE], as = gs->s[GS_AUX];
	static const int comm_ids[] = { GS_ALLGATHER, GS_REDUCESCATTER, GS_ALLREDUCE };
	enum aorta_status st;

	snprintf(x->prefix, sizeof(x->prefix), "%s", tag_prefix);
	for (int g = 0; g < x->pl->ngroups; g++)
		x->nag[g] = 0;
	x->ncrec = 0;
	memset(x->step_bytes, 0, sizeof(x->step_bytes));
	x->mb = 0;
	x->training = training;
	x->loss_scale = loss_scale;
	*x->h_stop = stop ? 1.0f : 0.0f;  /* read by loss_start's copy (the previous one is done) */
	const int K = x->pl->k.accum;
	gm->stream = cs;
	gpu_ops_set_stream(gm->ops, cs);
	/* the comm streams start after everything before this step on compute */
	if ((st = GPU_CALL(e, gpuEventRecord(x->ev_start, cs))))
		return st;
	for (size_t i = 0; i < sizeof(comm_ids) / sizeof(comm_ids[0]); i++)
		if ((st = GPU_CALL(e, gpuStreamWaitEvent(gs->s[comm_ids[i]], x->ev_start, 0))))
			return st;
	if (data_ready && (st = GPU_CALL(e, gpuStreamWaitEvent(cs, data_ready, 0))))
		return st;
	/* the early norm's sum starts from zero (aux: after the previous
	 * step's copy of it to the host) */
	if (x->norm_early && x->norm_ranges && ISOLATE(x) != ISOLATE_COMM &&
	    (st = GPU_CALL(e, gpuMemsetAsync(gm->sumsq, 0, sizeof(double), as))))
		return st;
	if ((st = GPU_CALL(e, gpuMemsetAsync(x->grads, 0, x->pl->local_total * sizeof(float), cs))) ||
	    (K > 1 && (st = GPU_CALL(e, gpuMemsetAsync(x->lossacc, 0, sizeof(float), cs)))) ||
	    (st = gpu_model_begin(gm, dropout_seed, training, loss_scale, e)))
		return st;
	for (int i = 0; i < x->sch->n; i++)
		if ((st = run_action(x, &x->sch->a[i], lr, e)))
			return st;
	if (x->next_prefix[0] && x->ag_first >= 0 && ISOLATE(x) != ISOLATE_COMPUTE && (st = pre_gather(x, e)))
		return st;

	if (x->stress_level && (st = stress(x, e)))
		return st;

	/* the loss all-reduce started at GRAD_NORM (loss_start) */
	if (comm_group(x->comm, COMM_PG_WORLD)->size > 1 && (st = coll_wait_stream(&x->loss, as, e)))
		return st;
	if ((st = GPU_CALL(e, gpuMemcpyAsync(x->h_out, x->lossbuf, 2 * sizeof(float), gpuMemcpyDeviceToHost, as))) ||
	    (st = GPU_CALL(e, gpuMemcpyAsync(x->h_sumsq, gm->sumsq, sizeof(double), gpuMemcpyDeviceToHost, as))))
		return st;

	/* join every stream of the step into compute */
	static const int join_ids[] = { GS_AUX, GS_ALLGATHER, GS_REDUCESCATTER, GS_ALLREDUCE };
	for (size_t i = 0; i < sizeof(join_ids) / sizeof(join_ids[0]); i++)
		if ((st = follow(x->ev_join, gs->s[join_ids[i]], cs, e)))
			return st;
	gm->stream = cs;
	gpu_ops_set_stream(gm->ops, cs);
	char msg[256];
	if (gpu_ops_last_error(gm->ops, msg, sizeof(msg)))
		return aorta_fail(e, AORTA_EGPU, NULL, 0, -1, "rank %d: step %d: %s", x->comm->rank, x->steps + 1, msg);
	return AORTA_OK;
}

enum aorta_status dist_gpu_step_done(struct dist_gpu *x, float *loss, double *grad_norm, int *stop_any,
				     struct aorta_error *e)
{
	enum aorta_status st = AORTA_OK;
	for (int i = 0; i < ncolls(x->pl); i++) {
		enum aorta_status s1 = coll_finish(coll_at(x, i), e);
		if (!st)
			st = s1;
	}
	enum aorta_status s2 = coll_finish(&x->norm, st ? NULL : e);
	if (!st)
		st = s2;
	s2 = coll_finish(&x->loss, st ? NULL : e);
	if (!st)
		st = s2;
	for (int i = 0; i < 3 * DIST_STRESS_MAX_LEVEL; i++) {
		s2 = coll_finish(&x->stress[i], st ? NULL : e);
		if (!st)
			st = s2;
	}
	if (st)
		return st;
	x->steps++;
	/* isolate=compute: the loss was not all-reduced */
	const float W = ISOLATE(x) == ISOLATE_COMPUTE ? 1.0f : (float)x->pl->world;
	if (loss)
		*loss = x->h_out[0] / W / (float)x->pl->k.accum;
	if (stop_any)
		*stop_any = x->h_out[1] > 0.0f;
	if (grad_norm)
		*grad_norm = *x->h_sumsq > 0.0 ? sqrt(*x->h_sumsq) * (double)x->grad_unscale / (double)W : 0.0;
	return AORTA_OK;
}
