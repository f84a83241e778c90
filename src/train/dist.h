/*
 * dist.h - data-parallel training as data: the sharding plan (who holds
 * which part of every parameter group) and the step schedule (the ordered
 * list of communication, compute and memory actions of one training step),
 * for FSDP (full_shard, shard_grad_op, no_shard, hybrid_shard) and DDP.
 *
 * Design.  Both are pure functions of (world, rank, node size, knobs,
 * layout): no backend, no allocation beyond the result, so the CPU executor
 * (dist_cpu.c, over MPI) and the GPU executor (NCCL, streams) run the same
 * plan and the same action list, and tests check the list itself.  The
 * unit of sharding is a parameter group of model.h (input, each layer,
 * head), one flat buffer each, as FSDP1's FlatParameter with
 * transformer_auto_wrap_policy.
 *
 * Plan.  The shard group is the set of ranks that split a group's
 * parameters; the replicate group is the set of ranks that hold the same
 * shard and all-reduce its gradient:
 *   strategy        shard group      replicate group   params held
 *   full_shard      world            (self)            1/world of each group
 *   shard_grad_op   world            (self)            1/world of each group
 *   hybrid_shard    node             cross (nodes)     1/node_size
 *   no_shard        (self)           world             a full replica
 *   ddp (mode)      (self)           world             a full replica
 * A group of len floats is padded to a multiple of the shard group size S
 * (as FSDP1 pads its FlatParameter); rank k of the shard group owns
 * elements [k*padded/S, (k+1)*padded/S), of which `valid` are real.  The
 * local shards of all groups are concatenated into one flat buffer of
 * local_total floats (params, grads, AdamW m and v); with S = 1 it is the
 * flat layout itself (local_off == off).
 *
 * All-reduces go over the replicate group, one per bucket:
 *   ddp:          buckets of whole tensors, taken in REVERSE layout order
 *                 (the order backward produces them), a bucket closing as
 *                 soon as it holds >= its cap (the first bucket's cap is
 *                 first_bucket_bytes, PyTorch's 1 MiB; then bucket_cap_mb,
 *                 MB = 2^20 bytes), as PyTorch's reducer assigns them;
 *   no_shard:     one bucket per group (FSDP's post-backward all-reduce);
 *   hybrid_shard: one per group, over the group's reduced shard.
 *
 * Schedule (FSDP1 semantics):
 *   forward, group g = 0..L+1:
 *     [ALL_GATHER g]  WAIT_AG g  FORWARD g  [FREE g]
 *     full_shard and hybrid FREE after forward, except the head (the unit
 *     run last, which backward needs first, as FSDP1 keeps its root);
 *     shard_grad_op keeps every gathered group until its backward.
 *     forward_prefetch issues ALL_GATHER g+1 before FORWARD g.
 *   backward, g = L+1..0:
 *     [ALL_GATHER g] [WAIT_AG g] BACKWARD g [FREE g] then the reduction:
 *     sharded: REDUCE_SCATTER g (WAIT_RS of the previous group follows, so
 *     at most two are in flight, and for hybrid the cross-node ALL_REDUCE
 *     of that group's shard right after it); no_shard / ddp: ALL_REDUCE of
 *     every bucket that became complete.
 *     backward_prefetch BACKWARD_PRE issues ALL_GATHER g-1 before
 *     BACKWARD g; BACKWARD_POST after BACKWARD g (and its FREE); none:
 *     when g-1 is reached.
 *   end: the last WAIT_RS, WAIT_AR of every bucket, GRAD_NORM (scale by
 *     1/world, squared norm of the local shard, all-reduced over the shard
 *     group, clip coefficient), OPTIMIZER (AdamW on the local shard).
 * Gradient accumulation (knobs accum = k > 1): the forward and backward
 * above run k times, each opened by MICRO j (micro-batch j = 0..k-1: the
 * executor starts the model on batch j), with the same gathers, frees and
 * prefetches per micro-batch; the reductions are issued only in the last
 * micro-batch (PyTorch's no_sync): micro-batches 0..k-2 accumulate their
 * gradients locally (sharded plans: in the group's UNSHARDED gradient
 * buffer, which lives from the first BACKWARD of the step to its WAIT_RS,
 * as FSDP1 keeps unsharded gradients under no_sync; so full_shard holds
 * every group's unsharded gradient between micro-batches), and the last
 * one's backward adds to them and reduces as above.  Each micro-batch's
 * backward gives d(loss_j / k)/dp (the executor's loss scale 1/k), so the
 * sum is the gradient of the mean over micro-batches.  k = 1 emits no
 * MICRO: the schedule above, unchanged.
 * Reduce dtype (knobs reduce_dtype, fsdp.reduce_dtype): COMM_BF16 runs
 * every gradient REDUCE_SCATTER and ALL_REDUCE (the buckets, hybrid's
 * cross-node shard) in bf16, as PyTorch FSDP's MixedPrecision(
 * reduce_dtype=torch.bfloat16) and DDP's bf16_compress_hook: the executor
 * casts the fp32 gradient to a bf16 scratch on the collective's stream
 * (round to nearest even), reduces it in bf16 (comm.h's bf16 semantics)
 * and casts the result back into the fp32 gradient shard; the 1/world
 * stays in the clip factor, the norm, AdamW and its state stay fp32, and
 * the schedule, the buckets (sized by the fp32 gradients, as PyTorch's)
 * and the all-gathers (fp32 parameters) do not change.  The gradient-norm
 * and loss all-reduces stay fp32.  COMM_F32 (the default) is the plain
 * fp32 path.
 * limit_all_gathers N: at most N ALL_GATHERs in flight (issued and not yet
 * waited).  A prefetch is placed before the current group's WAIT_AG when
 * that keeps the count <= N, otherwise after it (N = 1 serializes the
 * gathers; N = 2, what `limit_all_gathers: true` gives, is FSDP1's
 * "current + next").  0 means no limit.
 *
 * Ownership: dist_plan_init and dist_schedule_build allocate; the release
 * functions free.  Thread-safe (no globals).
 */
#ifndef AORTA_TRAIN_DIST_H
#define AORTA_TRAIN_DIST_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "comm/comm.h"
#include "train/model.h"
#include "train/train_config.h"

#define DIST_FIRST_BUCKET_BYTES ((size_t)1 << 20)   /* PyTorch's _DEFAULT_FIRST_BUCKET_BYTES */

struct dist_knobs {
	enum dist_mode mode;                     /* DIST_FSDP or DIST_DDP */
	enum sharding_strategy strategy;         /* FSDP only */
	int forward_prefetch;
	enum backward_prefetch backward_prefetch;
	int limit_all_gathers;                   /* max ALL_GATHERs in flight; 0: no limit */
	double bucket_cap_mb;                    /* DDP, MB = 2^20 bytes */
	size_t first_bucket_bytes;               /* DDP's first bucket; 0: bucket_cap_mb */
	int accum;                               /* micro-batches per optimizer step; 0: 1 */
	enum comm_dtype reduce_dtype;            /* the gradient reductions' type (below) */
	enum train_isolate isolate;              /* debug.isolate: the GPU executor's measurement
						  * switch (dist_gpu.c); the CPU executor ignores it */
};

/* From the config: fsdp.*, distributed.mode and bucket_cap_mb,
 * training.gradient_accumulation; limit_all_gathers true gives 2, false 0;
 * first bucket 1 MiB; fsdp.reduce_dtype (both modes); debug.isolate. */
void dist_knobs_from_config(struct dist_knobs *k, const struct train_config *cfg);

struct dist_shard {
	size_t off, len;          /* the group in the flat layout */
	size_t padded;            /* len rounded up to a multiple of shard_size */
	size_t shard_len;         /* padded / shard_size: floats per rank */
	size_t local_off;         /* this rank's shard in the local flat buffer */
	size_t begin, valid;      /* it holds group elements [begin, begin + valid), then padding */
};

struct dist_bucket {
	size_t off, len;          /* range of the local flat buffer all-reduced */
	int group_lo, group_hi;   /* groups it covers: complete once backward has run group_lo */
};

struct dist_plan {
	struct dist_knobs k;         /* k.accum >= 1 */
	int world, rank, node_size;
	int ngroups;
	int sharded;                 /* parameters sharded (ALL_GATHER before use) */
	int reshard_after_forward;   /* full_shard, hybrid_shard */
	int shard_size, shard_rank;  /* the shard group; size 1: none */
	int repl_size, repl_rank;    /* the replicate group; size 1: none */
	enum comm_pg shard_pg, repl_pg;
	struct dist_shard *g;        /* ngroups */
	size_t local_total;
	int nbuckets;
	struct dist_bucket *b;
};

/* Fills pl.  node_size is the ranks per node (hybrid_shard); it must divide
 * world (any strategy).  Errors: AORTA_EUSAGE (bad world/rank/node size,
 * knobs), with the message naming the value. */
enum aorta_status dist_plan_init(struct dist_plan *pl, int world, int rank, int node_size,
				 const struct dist_knobs *k, const struct param_layout *lay,
				 struct aorta_error *e);
void dist_plan_release(struct dist_plan *pl);

enum dist_act {
	ACT_ALL_GATHER = 0, ACT_WAIT_AG, ACT_FORWARD, ACT_FREE, ACT_BACKWARD,
	ACT_REDUCE_SCATTER, ACT_WAIT_RS, ACT_ALL_REDUCE, ACT_WAIT_AR, ACT_GRAD_NORM, ACT_OPTIMIZER,
	ACT_MICRO,
};

struct dist_action {
	enum dist_act kind;
	int arg;          /* group, or bucket for ALL_REDUCE / WAIT_AR, micro-batch for MICRO,
			   * -1 for GRAD_NORM / OPTIMIZER */
};

struct dist_schedule {
	int n;
	struct dist_action *a;
};

enum aorta_status dist_schedule_build(struct dist_schedule *s, const struct dist_plan *pl, struct aorta_error *e);
void dist_schedule_release(struct dist_schedule *s);

/* 1 when the ranges each gradient reduction completes tile the local
 * buffer [0, local_total) exactly once: every group's shard after its
 * reduce-scatter (sharded plans with no replica all-reduce: full_shard,
 * shard_grad_op), or every bucket after its all-reduce (unsharded plans:
 * ddp, no_shard); 0 otherwise (hybrid_shard, whose shards are final only
 * after the cross-node all-reduce).  The GPU executor then sums the
 * gradient's squared norm as each reduction lands (dist_gpu.h). */
int dist_plan_norm_ranges(const struct dist_plan *pl);

/* What dist_schedule_check measured. */
struct dist_schedule_stats {
	int max_ag_in_flight;     /* ALL_GATHERs issued and not yet waited */
	int max_gathered;         /* groups gathered and not yet freed */
	int n_all_gather, n_free, n_reduce_scatter, n_all_reduce;
	int n_micro;              /* micro-batches (k; 1 without MICRO) */
};

/* Simulates s against pl and checks: forward in order 0..L+1 then backward
 * L+1..0, each on gathered and waited parameters when sharded; every
 * ALL_GATHER waited once and freed exactly once, nothing gathered at the
 * end; at most limit_all_gathers in flight; every group's gradient reduced
 * exactly once (REDUCE_SCATTER and, for hybrid, one ALL_REDUCE; or the
 * ALL_REDUCE of its buckets, which tile the local buffer) after its
 * backward, and waited before GRAD_NORM; OPTIMIZER last.  With accum
 * k > 1: MICRO 0..k-1 in order, the first action MICRO 0, each after the
 * previous micro-batch's backward ended with nothing gathered; forward and
 * backward as above within each; every reduction in the last micro-batch
 * (no_sync); GRAD_NORM after the last backward.  AORTA_ECHECK with the
 * action index on the first violation.  stats may be NULL. */
enum aorta_status dist_schedule_check(const struct dist_schedule *s, const struct dist_plan *pl,
				      struct dist_schedule_stats *stats, struct aorta_error *e);

/* "AG0 WAG0 AG1 F0 FREE0 ... NORM OPT": one token per action (AG, WAG, F,
 * FREE, B, RS, WRS, AR, WAR, MB + the argument; NORM, OPT).  Returns the
 * length it needed (as snprintf). */
int dist_schedule_format(const struct dist_schedule *s, char *buf, size_t len);
const char *dist_act_name(enum dist_act a);

/* Stress injection (training.inject_allreduce_copies, upstream's recipe,
 * UPSTREAM.md section 2): at the end of every step, after the optimizer
 * and before the loss all-reduce, both executors repeat level times
 * (training.allreduce_stress_level, 1..10), on the world group:
 *   fill    DIST_STRESS_FLOATS floats: element i is
 *           2 * rng_uniform(dist_stress_seed(step, rep, rank), DIST_STRESS_SITE, i) - 1
 *   all_reduce (average: sum, then scale by 1/world)
 *   copy    the buffer into a second one (device to device)
 *   all_reduce (sum) of the copy
 *   round trip of the copy device -> host -> device
 *   all_reduce (average) of the copy
 * The buffers are the executor's own, so training is unchanged; the
 * collectives only load the links and the all-reduce stream.  step is the
 * 0-based optimizer step, rep 0..level-1. */
#define DIST_STRESS_FLOATS ((size_t)1 << 20)
#define DIST_STRESS_MAX_LEVEL 10
#define DIST_STRESS_SITE 0x57e55ull
uint64_t dist_stress_seed(long step, int rep, int rank);

/* The gradient-clipping factor, as PyTorch's clip_grad_norm_ and the GPU
 * trainer: norm = sqrt(sumsq) * extra (extra undoes a scale already in the
 * gradients, e.g. 1/world for summed gradients); coef = max_norm /
 * (norm + 1e-6), capped at 1 (1 when max_norm <= 0); returns coef * extra,
 * the factor AdamW applies to the gradients, and writes norm. */
float dist_clip_scale(double sumsq, float max_norm, float extra, double *norm);

#endif
