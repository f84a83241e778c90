/*
 * dist_gpu.h - runs a dist.h schedule on one GPU: the per-group pass of
 * model_gpu.h for compute, a comm.h communicator (NCCL, or any backend
 * with GPU buffers) for the collectives, AdamW on the local shard.  The
 * GPU twin of dist_cpu.h, with the same semantics (read that header's
 * "Semantics" paragraph: the sum reductions, the 1/world in the clip
 * factor, the norm as hi + lo floats, the loss as the mean of the ranks'
 * means, dropout masks indexed by position in the local batch).
 *
 * Streams.  Compute (the forward and backward of each group, the waits)
 * runs on the compute stream; every collective on the stream of its kind:
 * all-gathers on allgather, reduce-scatters on reducescatter, all-reduces
 * (DDP buckets, hybrid replicas, the norm, the loss) on allreduce, set on
 * the communicator with comm_set_stream, and each is bracketed by the
 * recorder on THAT stream (tags <prefix>_allgather_g<g> in forward,
 * <prefix>_allgather_bwd_g<g> when backward gathers again,
 * <prefix>_reducescatter_g<g>, <prefix>_allreduce_b<bucket>,
 * <prefix>_allreduce_gradnorm, <prefix>_allreduce_loss; metadata.function
 * all_gather / reduce_scatter / all_reduce).  Each group's compute is its
 * own range on compute (<prefix>_forward_g<g>, <prefix>_backward_g<g>), so
 * a WAIT that stalls compute shows as a gap where only a comm stream is
 * busy: exposed communication.  Grad clip and optimizer run on aux
 * (<prefix>_grad_clip, <prefix>_optimizer), as in the single-GPU loop.
 *
 * Dependencies are explicit events, so the host never blocks inside a step:
 * a collective's stream waits for the compute work that produced its input
 * (an event recorded on compute when the action is issued); WAIT_AG /
 * WAIT_RS / WAIT_AR make the compute stream wait for the collective
 * (comm_wait_stream); an all-gather into a reused buffer waits for the
 * event recorded on compute when that buffer was FREEd.  At the start of a
 * step every comm stream waits for the compute stream; at the end every
 * stream used is joined into compute.  After the host has waited for the
 * step (the recorder's collect, or a stream sync), dist_gpu_step_done
 * completes the step's requests with comm_wait (quick then) and reads the
 * loss and norm.
 *
 * Memory follows the schedule: ALL_GATHER takes a buffer of the group's
 * padded size from a pool and FREE gives it back; BACKWARD takes a
 * gradient buffer (sharded plans) and WAIT_RS gives it back.  A take is
 * the best fit among the free buffers; dist_gpu_init sizes the pools by a
 * dry run of the schedule (the same takes and give-backs), so they hold
 * the schedule's peak (max_gathered of dist_schedule_check, for the
 * gathers) and no step allocates.  Without sharding
 * the compute reads the local buffer (the flat layout itself) and writes
 * gradients in place, where the buckets' all-reduces run.
 *
 * A group of size 1 (world 1, or the shard group of no_shard / ddp) needs
 * no communicator: its "collective" is a device copy (or nothing, in
 * place) on the collective's stream with an event for the waits, so the
 * executor runs unchanged at world 1 with comm_local_create (whose host
 * memmove cannot touch device memory) and the tests compare it with the
 * single-GPU loop.
 *
 * Gradient accumulation (plan k.accum = k > 1): the schedule's MICRO j
 * (j >= 1) adds micro-batch j-1's loss to a device sum on compute, makes
 * aux wait for compute (the batch buffer is free once the backward is
 * done), calls the loader (dist_gpu_set_loader) to enqueue the upload of
 * batch j on aux, makes compute wait for it and begins the model on it;
 * the caller's loss_scale already holds the 1/k.  Sharded plans take a
 * group's unsharded gradient buffer at its first BACKWARD of the step and
 * accumulate into it until its WAIT_RS (the pools are sized for that by
 * the same dry run); the reductions run in the last micro-batch only (the
 * schedule's no_sync), exactly as dist_cpu.c.  All-gathers of micro-batch
 * j are tagged as at k = 1 (the recorder keeps repeated tags).  The loss is
 * the mean over micro-batches and ranks.
 *
 * Reduce dtype (plan k.reduce_dtype COMM_BF16, dist.h): REDUCE_SCATTER
 * and ALL_REDUCE enqueue, on the collective's own stream, the cast of the
 * fp32 gradient (the unit's unsharded gradient, the bucket) into a bf16
 * scratch (gpu_f32_to_bf16), the collective in bf16 (ncclBfloat16), and
 * the cast of the result back into the fp32 gradient shard
 * (gpu_bf16_to_f32); the collective's done event is recorded after the
 * cast back, and WAIT_RS / WAIT_AR wait for that event.  The recorder's
 * range brackets the collective alone (the casts are small elementwise
 * kernels on the comm stream, in the step time but not in the
 * communication time).  Each collective's bytes (comm_coll_bytes: bf16
 * counts 2 bytes an element) are kept per step for the metrics
 * (dist_gpu_coll_bytes).
 *
 * Stress (dist_gpu_set_stress, training.inject_allreduce_copies): dist.h's
 * sequence at the end of the step, after the optimizer (the allreduce
 * stream waits for aux), on the allreduce stream: per repetition r, the fill kernel, <prefix>_stress_allreduce_<r>
 * (all_reduce, then the 1/world scale), <prefix>_stress_copy_<r> (device to
 * device), <prefix>_stress_allreduce_sum_<r>, <prefix>_stress_d2h_<r> and
 * <prefix>_stress_h2d_<r> (through pinned memory),
 * <prefix>_stress_allreduce_avg_<r> (then the scale); the all-reduces
 * have metadata.function all_reduce.  The step's final join of every
 * stream into compute includes them.
 *
 * The loss all-reduce (the loss and the stop flags) starts at GRAD_NORM,
 * ahead of the norm's, as soon as the last micro-batch's forward is done,
 * so the step's tail (AdamW, a pre-gather on the same communicator) never
 * delays it; the step waits for it on aux before copying to the host.
 *
 * Copy-engine all-gathers.  When the communicator offers symmetric memory
 * (comm_sym_alloc: NCCL with NCCL_CTA_POLICY=zero), the parameter shard
 * (the all-gathers' send side) and the gather pool's buffers (their receive
 * side) are allocated there, on the shard group, so NCCL runs the
 * all-gathers on the copy engines and leaves every SM to compute.  The pool
 * sizes itself identically on every rank, so the windows match.
 *
 * Ownership: dist_gpu_init allocates the shard (params, grads, AdamW m and
 * v: plan->local_total floats each), the pools, events and pinned
 * scalars; dist_gpu_release frees them.  The model, plan, schedule, comm,
 * streams and recorder are borrowed and must outlive it.  The model may be
 * created with GPU_MODEL_NO_STATE (its own flat buffers are not used).
 * Errors come back as a status naming the rank, step and action; after one
 * at world > 1 the job should comm_abort (other ranks wait in collectives).
 * Not thread-safe: one executor per host thread.
 */
#ifndef AORTA_TRAIN_DIST_GPU_H
#define AORTA_TRAIN_DIST_GPU_H

#include <stdint.h>

#include "base/error.h"
#include "comm/comm.h"
#include "gpu/gpu.h"
#include "gpu/recorder.h"
#include "train/dist.h"
#include "train/dist_cpu.h"
#include "train/model_gpu.h"

struct dist_gpu_slot {
	float *p;
	size_t cap;            /* floats */
	int used;
	int has_ev;            /* ev was recorded when the slot was last given back */
	gpuEvent_t ev;
	void *win;             /* comm_sym_alloc's handle (p is symmetric memory), else NULL */
};

struct dist_gpu_pool {
	struct dist_gpu_slot *s;
	int n, cap;
	size_t bytes;          /* allocated */
	/* non-NULL: slots are symmetric memory of this group (comm_sym_alloc)
	 * when the backend offers it: the gather pool under NCCL_CTA_POLICY=zero */
	struct comm_group *sym;
};

/* One collective of the step: through the communicator (req), or a device
 * copy on the collective's stream completed by `done` (local). */
struct dist_gpu_coll {
	struct comm_req req;
	gpuEvent_t done;
	int issued, local;
	int cast;              /* bf16 reduce: done follows the cast back; waits use it */
	int skipped;           /* debug.isolate=compute: not issued, nothing to wait for */
};

/* What one collective of the step moved (its recorder tag, the bytes of
 * comm_coll_bytes, the element type), for the metrics' range metadata. */
struct dist_gpu_commrec {
	char tag[128];
	uint64_t bytes;
	enum comm_dtype dtype;
	enum comm_coll coll;
};

/* Enqueues the host-to-device upload of micro-batch mb (>= 1) of the step
 * in progress on stream aux and returns its dropout seed. */
typedef enum aorta_status (*dist_gpu_load_fn)(void *ctx, int mb, gpuStream_t aux, uint64_t *seed,
					      struct aorta_error *e);

struct dist_gpu {
	struct gpu_model *gm;
	const struct dist_plan *pl;
	const struct dist_schedule *sch;
	struct comm *comm;
	const struct gpu_streams *gs;
	struct recorder *rec;           /* NULL: no ranges */
	struct dist_adamw opt;
	float grad_unscale;             /* 1 / the loss scale (fp16), else 1 */
	float *params, *grads, *m, *v;  /* device, the local shard: pl->local_total floats */
	void *params_win;               /* params are symmetric memory (comm_sym_alloc): its handle */
	float *hl;                      /* device [2]: the norm's hi and lo */
	float *lossbuf;                 /* device [2]: loss, stop flag (all-reduced) */
	float *h_out;                   /* pinned [2]: sums of loss and stop flag */
	double *h_sumsq;                /* pinned: the global squared norm (scaled gradients) */
	float *h_stop;                  /* pinned: this rank's stop flag for the step */
	struct dist_gpu_pool gather, gradp;
	int *gslot, *fslot, *nag;       /* per group: gathered slot, gradient slot (-1: none), gathers this step */
	struct dist_gpu_coll *ag;       /* [accum][2][ngroups]: forward and backward gathers per micro-batch */
	struct dist_gpu_coll *rs;       /* [ngroups] */
	struct dist_gpu_coll *ar;       /* [nbuckets] */
	struct dist_gpu_coll norm, loss;
	/* cross-step all-gather (dist_gpu_set_next): the next step's first
	 * gather, issued after this step's AdamW of its group */
	int ag_first;                   /* group of the schedule's first ALL_GATHER, -1: none */
	char next_prefix[64];           /* "" : no pre-gather this step */
	int pre_g, pre_slot;            /* issued for the step to come: group and gather slot, -1: none */
	struct dist_gpu_coll pre_ag;
	gpuEvent_t ev_opt_first;        /* aux, after AdamW of group ag_first */
	gpuEvent_t ev_start, ev_compute, ev_aux, ev_join, ev_consumed, ev_mbdata;
	/* the squared norm summed as the gradients land (dist_gpu_set_norm_early):
	 * 1 on, 0 off (at GRAD_NORM, over the whole shard); norm_ranges: the
	 * plan's reductions (groups' shards / buckets) cover the local buffer
	 * exactly once, so the early sums are the whole norm */
	int norm_early, norm_ranges;
	int steps;                      /* optimizer steps taken */
	char prefix[64];                /* tag prefix of the step in progress */
	/* gradient accumulation */
	int mb;                         /* micro-batch in progress */
	int training;
	float loss_scale;               /* of the step in progress */
	float *lossacc;                 /* device [1]: sum of the micro-batches' losses */
	dist_gpu_load_fn load;
	void *load_ctx;
	/* stress injection */
	int stress_level;               /* 0: off */
	float *stress_a, *stress_b;     /* device, DIST_STRESS_FLOATS each */
	float *stress_h;                /* pinned, DIST_STRESS_FLOATS */
	struct dist_gpu_coll stress[3 * DIST_STRESS_MAX_LEVEL];
	/* reduce dtype bf16 (plan k.reduce_dtype): device scratch of the
	 * casts, used only on the stream of its collective kind, so stream
	 * order makes one buffer enough: rs16 = the largest unit's padded
	 * gradient, then (at an offset rounded to 8 elements) its shard;
	 * ar16 = the largest bucket */
	uint16_t *rs16, *ar16;
	size_t rs16_n, ar16_n;              /* elements */
	/* the collectives of the step in progress (dist_gpu_coll_bytes) */
	struct dist_gpu_commrec *crec;
	int ncrec, crec_cap;
	uint64_t step_bytes[5];             /* per enum comm_coll, this step */
};

/* The step to be run next is tagged next_prefix (NULL or "": none, e.g.
 * the last step).  For a sharded plan, the step run next after this call
 * then updates the shard of the schedule's first all-gathered group first
 * and all-gathers it for the step to come on the all-gather stream, while
 * AdamW goes on with the other groups; that step uses the gathered buffer
 * instead of gathering at its start.  The gather's range, tagged
 * <next_prefix>_allgather_g<G>, lies in this step.  Every rank must make the
 * same calls (the gather is a collective).  Without it (the default) a step
 * gathers its own groups. */
void dist_gpu_set_next(struct dist_gpu *x, const char *next_prefix);

/* init_params: the full flat parameters on the host (lay->total floats);
 * rank 0's copy is broadcast to all (sync_module_states).  Sets the
 * communicator's streams (comm_set_stream).  Synchronous (waits for the
 * device); the model's stream must be the compute stream of gs. */
enum aorta_status dist_gpu_init(struct dist_gpu *x, struct gpu_model *gm, const struct dist_plan *pl,
				const struct dist_schedule *sch, struct comm *c, const struct gpu_streams *gs,
				struct recorder *rec, const float *init_params, const struct dist_adamw *opt,
				float grad_unscale, struct aorta_error *e);

/* The gradient's squared norm summed as each reduction lands (on: the
 * default): at WAIT_RS g (sharded plans with no replica all-reduce) or
 * WAIT_AR b (ddp / no_shard), aux waits for that collective and adds the
 * squared norm of the range it completed, so GRAD_NORM only all-reduces
 * the sum and computes the clip factor; off: GRAD_NORM reads the whole
 * shard after the last reduction (the sum is the same up to the order of
 * the double additions).  Plans whose reductions do not cover the local
 * buffer exactly once (hybrid_shard) always sum at GRAD_NORM.  The clip
 * factor still waits for every gradient: AdamW is not linear in it (the
 * second moment takes its square), so no group's update can start before
 * the last reduction without changing the numbers. */
void dist_gpu_set_norm_early(struct dist_gpu *x, int on);

/* The micro-batch loader (needed when the plan's accum > 1). */
void dist_gpu_set_loader(struct dist_gpu *x, dist_gpu_load_fn load, void *ctx);
/* Stress injection in every later step: level repetitions (clamped to
 * 1..DIST_STRESS_MAX_LEVEL; 0 turns it off) of dist.h's sequence; allocates
 * its buffers once.  Every rank must set the same level. */
enum aorta_status dist_gpu_set_stress(struct dist_gpu *x, int level, struct aorta_error *e);

/* Enqueues one step (no host wait): the actions of the schedule on the
 * batch the model holds (its upload enqueued before; data_ready, an event
 * recorded after it, or NULL, is what the compute stream waits for before
 * the first FORWARD, so the first all-gathers do not wait for the copy),
 * dropout seed and loss scale as gpu_model_begin (micro-batch 0's; with
 * accumulation the loss scale includes 1/accum and the loader gives the
 * later micro-batches' batches and seeds), AdamW at lr with t =
 * steps + 1; stop (this rank's wish to stop after the step) is summed with
 * the loss so every rank learns it at the same step.  tag_prefix:
 * "epoch<E>_step<S>". */
enum aorta_status dist_gpu_step(struct dist_gpu *x, const char *tag_prefix, gpuEvent_t data_ready,
				uint64_t dropout_seed, int training, float loss_scale, float lr, int stop,
				struct aorta_error *e);
/* After the host waited for the step: completes its requests and reads the
 * results: *loss the mean over all ranks' samples, *grad_norm the global
 * norm of the mean gradient before clipping, *stop_any 1 when some rank
 * asked to stop (each may be NULL). */
enum aorta_status dist_gpu_step_done(struct dist_gpu *x, float *loss, double *grad_norm, int *stop_any,
				     struct aorta_error *e);
/* The bytes and element type of the collective of the last step whose
 * recorder tag is `tag` (as <prefix>_<what>); 0 when there was none. */
int dist_gpu_coll_bytes(const struct dist_gpu *x, const char *tag, uint64_t *bytes, enum comm_dtype *dtype);

void dist_gpu_release(struct dist_gpu *x);

#endif
