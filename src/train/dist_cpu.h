/*
 * dist_cpu.h - runs a dist.h schedule on the CPU: the per-group model of
 * model.h for compute, a comm.h communicator (MPI, or the local one at
 * world 1) for the collectives, AdamW on the local shard.
 *
 * One struct dist_cpu is one rank's trainer state: its shard of the
 * parameters, gradients and AdamW moments (plan->local_total floats each),
 * the gathered groups that are alive, and the model activations for a
 * local batch of B samples.  dist_cpu_step executes the action list in
 * order, blocking in each WAIT_* (on the CPU that is where the overlap
 * ends; the GPU executor turns the same waits into stream waits).
 *
 * Semantics that make world W with local batch b equal world 1 with batch
 * W*b: every rank's backward gives the gradient of ITS batch mean; the
 * reductions SUM over ranks; GRAD_NORM scales by 1/W inside the clip factor
 * (dist_clip_scale with extra = 1/W, as the GPU trainer undoes its loss
 * scale), so AdamW sees the mean gradient over all W*b samples; the norm is
 * the squared norm of the local shard all-reduced over the shard group
 * (replicas hold equal copies, so they are not summed twice), carried as
 * two floats (hi + lo) so the sum keeps double precision.  The reported
 * loss is the all-reduced mean of the ranks' losses.  Dropout masks are
 * indexed by position in the local batch, so with dropout > 0 the ranks do
 * not draw world 1's masks: equality holds for dropout 0 (or eval).  The
 * caller chooses dropout_seed per rank (mix the rank in, or every rank
 * draws the same masks for its own samples).
 *
 * Gradient accumulation (plan k.accum = k > 1, the schedule's MICRO
 * actions): a step takes k batches of b samples; each micro-batch's
 * backward runs with loss scale 1/k and ACCUMULATES into the gradients
 * (sharded plans: into the group's unsharded gradient buffer, kept from the
 * step's first BACKWARD to its WAIT_RS, so full_shard holds all of them
 * between micro-batches), and the reductions run once, in the last
 * micro-batch (no_sync).  The loss is the mean over the micro-batches (and
 * the ranks).  So world W with k micro-batches of b equals world 1 with
 * one batch of W*k*b when rank r's micro-batch j of step s holds samples
 * (s*k + j)*W*b + r*b .. + b-1 (world 1: samples s*W*k*b ..).
 *
 * Reduce dtype (plan k.reduce_dtype COMM_BF16, dist.h): REDUCE_SCATTER
 * casts the unsharded gradient to a bf16 copy (malloc'd at the issue,
 * freed at the wait), reduces it in bf16 and WAIT_RS casts the reduced
 * shard back into the fp32 gradient shard; ALL_REDUCE and WAIT_AR do the
 * same for a bucket.  The communicator counts the bf16 bytes
 * (comm.nbytes), half of fp32's.
 *
 * Stress (dist_cpu_set_stress): upstream's all-reduce stress sequence of
 * dist.h after the optimizer, on host buffers of the executor's own; it
 * does not change the parameters or the loss.
 *
 * Ownership: dist_cpu_init allocates, dist_cpu_release frees; the plan,
 * layout, dims and comm are borrowed and must outlive it.  Errors (a
 * collective's timeout, an action on a freed group) come back as a status
 * with the rank, step and action in the message; after one, the job should
 * comm_abort.
 */
#ifndef AORTA_TRAIN_DIST_CPU_H
#define AORTA_TRAIN_DIST_CPU_H

#include "base/error.h"
#include "comm/comm.h"
#include "train/dist.h"
#include "train/model.h"

struct dist_adamw {
	float beta1, beta2, eps, weight_decay;
	float max_grad_norm;      /* <= 0: no clipping */
};

struct dist_cpu {
	const struct model_dims *d;
	const struct param_layout *lay;
	const struct dist_plan *pl;
	struct comm *comm;
	struct dist_adamw opt;
	float *params, *grads, *m, *v;   /* local flat shard, pl->local_total floats */
	float **full;                    /* sharded: gathered group g (padded floats), NULL when freed */
	float **fgrad;                   /* sharded: group g's unsharded gradient, BACKWARD .. WAIT_RS */
	struct comm_req *ag, *rs, *ar;   /* per group, per group, per bucket */
	/* reduce dtype bf16: the collective's bf16 copy, issue .. wait:
	 * rs16[g] = group g's unsharded gradient (padded) then its reduced
	 * shard (shard_len); ar16[b] = bucket b */
	uint16_t **rs16, **ar16;
	struct cpu_model_state *ms;
	int steps;                       /* optimizer steps taken */
	int live_max;                    /* most gathered groups alive at once (memory check) */
	int grad_live_max;               /* most unsharded gradient buffers alive at once */
	int stress_level;                /* 0: off; else stress repetitions per step (dist.h) */
	float *stress_a, *stress_b, *stress_h;   /* DIST_STRESS_FLOATS each while stress_level > 0 */
	long long stress_all_reduces;    /* stress all-reduces issued */
	float stress_last;               /* element 0 of the last stress buffer after its final average */
};

/* init_params: the full flat parameters (lay->total); rank 0's copy is
 * broadcast to all (as sync_module_states), so other ranks may pass any
 * buffer of that size.  local_batch: samples per rank per step. */
enum aorta_status dist_cpu_init(struct dist_cpu *x, const struct model_dims *d, const struct param_layout *lay,
				const struct dist_plan *pl, struct comm *c, int local_batch,
				const float *init_params, const struct dist_adamw *opt, struct aorta_error *e);
/* One optimizer step of schedule s on this rank's batches b[0..k-1] (k =
 * the plan's accum; micro-batch j draws its dropout masks with seed
 * dropout_seed + j) at learning rate lr.  *loss: mean over all ranks' and
 * micro-batches' samples; *grad_norm: the global norm of the mean gradient
 * before clipping (either may be NULL). */
enum aorta_status dist_cpu_step(struct dist_cpu *x, const struct dist_schedule *s, const struct batch *b,
				uint64_t dropout_seed, int training, float lr, float *loss, double *grad_norm,
				struct aorta_error *e);
/* Stress injection at the end of every later step: level repetitions
 * (clamped to 1..DIST_STRESS_MAX_LEVEL; 0 turns it off) of the sequence of
 * dist.h.  Collective in effect: every rank must set the same level. */
void dist_cpu_set_stress(struct dist_cpu *x, int level);
/* Collective: every rank gets the full parameters in out[lay->total]. */
enum aorta_status dist_cpu_full_params(struct dist_cpu *x, float *out, struct aorta_error *e);
void dist_cpu_release(struct dist_cpu *x);

#endif
