/*
 * train_config.h - the train command's configuration, typed and checked.
 *
 * train_config_load reads a YAML/JSON file with upstream's schema
 * (UPSTREAM.md section 1), applies --override strings, fills every key the
 * file leaves out with upstream's CODE default, checks types and unknown
 * keys (config.h), and then checks the values against each other: heads
 * divide model_dim, dataset and model agree on vocab and feature sizes,
 * sizes are positive and below sane limits, dropout is in [0, 1).  Every
 * error names the key and the file line (or the --override that set it).
 *
 * Keys that upstream configs carry but upstream ignores (streams leftovers
 * of the reverted "DDP Overlapper", tracelens.*, torch_titan.*,
 * profiling.profile_freq, training.additional_compute_streams,
 * training.lightweight_op_*, unknown distributed.* keys) are accepted with
 * a warning "ignored (as upstream)"; any other unknown key is an error.
 * streams.* is read (upstream ignores it): high_priority true (or a list of
 * stream roles) gives those streams the highest priority.
 *
 * Ownership: struct train_config is plain data (fixed-size strings) except
 * warnings[], which train_config_release frees.  The loader prints nothing:
 * the command prints cfg->warnings.  Thread-safe (no globals).
 */
#ifndef AORTA_TRAIN_CONFIG_H
#define AORTA_TRAIN_CONFIG_H

#include <stdint.h>
#include <stdio.h>

#include "base/error.h"
#include "train/model.h"

enum mixed_precision { MP_FP32 = 0, MP_BF16, MP_FP16 };
enum sharding_strategy { SHARD_FULL = 0, SHARD_GRAD_OP, SHARD_NONE, SHARD_HYBRID };
enum backward_prefetch { PREFETCH_NONE = 0, PREFETCH_BACKWARD_PRE, PREFETCH_BACKWARD_POST };
enum dist_mode { DIST_FSDP = 0, DIST_DDP };
/* fsdp.reduce_dtype: the element type of the gradient collectives */
enum reduce_dtype { REDUCE_FP32 = 0, REDUCE_BF16 };
/* debug.isolate: one side of every distributed step alone (dist_gpu.c) */
enum train_isolate { ISOLATE_NONE = 0, ISOLATE_COMPUTE, ISOLATE_COMM };
enum log_level { TC_LOG_DEBUG = 0, TC_LOG_INFO, TC_LOG_WARNING, TC_LOG_ERROR, TC_LOG_CRITICAL };
/* Stream roles, as the trace stream names (UPSTREAM.md section 9). */
enum stream_role { ROLE_COMPUTE = 0, ROLE_ALLREDUCE, ROLE_REDUCESCATTER, ROLE_AUX, ROLE_COUNT };

#define TC_STR 256
#define TC_MAX_COMPILE_OPTIONS 16

struct train_config {
	char source[512];                 /* the config file */

	enum log_level log_level;

	struct {
		long long epochs, batch_size, gradient_accumulation;
		enum mixed_precision mixed_precision;
		char mixed_precision_name[64]; /* as written ("tf32" runs fp32) */
		double grad_clip_norm;         /* 0 disables clipping */
		long long log_interval;
		long long max_steps;           /* -1: derived, see train_config_total_steps */
		char output_dir[TC_STR];
		int inject_allreduce_copies;
		int allreduce_stress_level;    /* clamped to 1..10 */
	} training;

	struct {
		char name[32];                 /* "adamw" */
		double lr, weight_decay, betas[2], eps;
	} optimizer;

	struct { long long warmup_steps, total_steps; } scheduler;

	struct {
		long long num_samples, sequence_length, dense_dim, sparse_features, vocab_size,
			num_dense_features, seed;
	} dataset;

	struct {
		long long vocab_size, embedding_dim, num_dense_features, dense_dim, model_dim,
			num_heads, num_layers, mlp_hidden_dim;
		double dropout;
	} model;

	struct {
		enum sharding_strategy sharding_strategy;
		enum backward_prefetch backward_prefetch;
		int use_orig_params, limit_all_gathers, forward_prefetch, sync_module_states;
		char param_init_device[32];    /* unused, as upstream */
		/* gradient reduce-scatter / all-reduce in bf16 (FSDP's
		 * MixedPrecision reduce_dtype; in ddp mode, bf16_compress_hook) */
		enum reduce_dtype reduce_dtype;
	} fsdp;

	struct {
		enum dist_mode mode;
		int gradient_as_bucket_view, static_graph, find_unused_parameters;
		double bucket_cap_mb;
		/* distributed.cta_policy: NCCL's CTA policy for the training
		 * communicators: TRAIN_CTA_AUTO (measured default, see
		 * train_config_cta_policy), TRAIN_CTA_NCCL (NCCL's choice), or
		 * NCCL_CTA_POLICY_* 0 default, 1 efficiency, 2 zero */
		int cta_policy;
	} distributed;

	struct {
		int enabled, fullgraph, dynamic;
		char backend[64], mode[64];
		int noptions;                  /* options: scalar values only */
		char option_key[TC_MAX_COMPILE_OPTIONS][64], option_val[TC_MAX_COMPILE_OPTIONS][128];
	} compile;

	struct { long long num_workers; int pin_memory; } dataloader;

	struct {
		int enabled;
		long long wait, warmup, active, repeat;
		int record_shapes, profile_memory, with_stack, with_flops, tensorboard, chrome_trace;
		char trace_filename[TC_STR];
	} profiling;

	/* debug.*: aorta's measurement and test switches (not upstream's keys;
	 * docs/cli.md).  Each was an AORTA_TRAIN_* environment variable, still
	 * read as a deprecated fallback when the key is not written. */
	struct {
		int distributed_executor;      /* debug.distributed_executor: the distributed
						* executor at world 1 too (AORTA_TRAIN_DIST) */
		int prefetch_next;             /* debug.prefetch_next: next step's batch uploaded
						* during the step (AORTA_TRAIN_PREFETCH_NEXT) */
		int pregather;                 /* debug.pregather: next step's first all-gather at the
						* end of the step (AORTA_TRAIN_PREGATHER) */
		int norm_early;                /* debug.norm_early: the gradient's squared norm summed
						* as each reduction lands (dist_gpu_set_norm_early) */
		enum train_isolate isolate;    /* debug.isolate (AORTA_TRAIN_ISOLATE) */
		int instrumented;              /* debug.instrumented: events, recorder, JSONL
						* (AORTA_TRAIN_UNINSTRUMENTED inverted) */
		int graph_fail;                /* debug.graph_fail: make the CUDA-graph capture fail,
						* to test the eager fallback (AORTA_TRAIN_GRAPH_FAIL) */
		double host_delay_ms;          /* debug.host_delay_ms: a planted host delay before
						* each step's forward (what-if validation pairs) */
		long long host_delay_rank;     /* debug.host_delay_rank: who plants it (-1: all) */
		long long host_delay_period;   /* debug.host_delay_period: 0 every step, N: steps s
						* with s / N odd (base and slowed blocks of one run) */
	} debug;

	struct {
		long long num_streams;         /* 0: not set */
		unsigned high_priority_mask;   /* bit (1 << enum stream_role) */
		int assigned[ROLE_COUNT];      /* stream_assignments: names per role */
	} streams;

	char **warnings;                   /* malloc'd, train_config_release frees */
	int nwarnings;
};

/* Upstream's code defaults (what an empty config file gives). */
void train_config_defaults(struct train_config *cfg);

/* Loads path, applies overrides[0..n) ("a.b=v"), fills defaults, checks.
 * On error cfg holds no allocation and e names the key and line; statuses:
 * AORTA_EINPUT (file), AORTA_EUSAGE (an --override).  Release with
 * train_config_release. */
enum aorta_status train_config_load(const char *path, const char *const *overrides, int n,
				    struct train_config *cfg, struct aorta_error *e);

/* The same value checks on a config built in code (no line numbers). */
enum aorta_status train_config_check(const struct train_config *cfg, struct aorta_error *e);

void train_config_release(struct train_config *cfg);

/* The model's shapes: V = model.vocab_size, E, F = num_dense_features,
 * D = dense_dim, T = dataset.sequence_length, S = dataset.sparse_features,
 * M, H, L, FFN = MLP = mlp_hidden_dim, dropout, ln_eps 1e-5. */
void train_config_model_dims(const struct train_config *cfg, struct model_dims *d);

/* Parameter count of the model (same layout as model.h). */
uint64_t train_config_param_count(const struct train_config *cfg);

/* Optimizer steps of a run on world_size ranks: max_steps if set, else
 * upstream's len(loader) * epochs with DistributedSampler (ceil(N/W) samples
 * per rank) and drop_last batches of batch_size, divided by
 * gradient_accumulation (each step takes that many micro-batches). */
long long train_config_total_steps(const struct train_config *cfg, int world_size);

/* Estimated peak GPU memory of one rank, in bytes (see the formula at the
 * definition): parameters, gradients and AdamW state (sharded by FSDP over
 * world_size where the strategy shards them), half-precision weight copies,
 * activations saved for backward at batch_size, the bf16 scratch of the
 * gradient collectives when fsdp.reduce_dtype is bf16, plus workspace,
 * plus 10%.
 * The caller compares it with the device's free memory. */
uint64_t train_config_memory_bytes(const struct train_config *cfg, int world_size);

/* Writes the resolved configuration as one JSON object
 * ({"schema": "aorta.train_config/1", "logging": {...}, ...}) and a newline.
 * Returns 0, or -1 on a write error (ferror). */
int train_config_dump_json(FILE *f, const struct train_config *cfg);

#define TRAIN_CTA_AUTO (-3)
#define TRAIN_CTA_NCCL (-1)
/* Full-shard-type plans (parameters all-gathered) at a per-rank batch of
 * at least this many samples get NCCL_CTA_POLICY=zero under
 * distributed.cta_policy auto (bench/RESULTS.md: the copy-engine
 * all-gathers leave the SMs to compute when there is compute to overlap;
 * with little compute they are slower than NCCL's kernels). */
#define TRAIN_CTA_ZERO_MIN_BATCH 64
/* The CTA policy the training communicators should get: the configured one,
 * or under auto the environment variable NCCL_CTA_POLICY when set (returns
 * TRAIN_CTA_NCCL: NCCL reads it), else zero for sharded FSDP plans at a
 * batch >= TRAIN_CTA_ZERO_MIN_BATCH, else NCCL's choice.  why (may be NULL)
 * gets a short reason for the log. */
int train_config_cta_policy(const struct train_config *cfg, char *why, size_t n);

/* Names, for messages and the dump. */
const char *mixed_precision_name(enum mixed_precision m);
const char *sharding_strategy_name(enum sharding_strategy s);
const char *reduce_dtype_name(enum reduce_dtype r);   /* "fp32", "bf16" */
const char *stream_role_name(enum stream_role r);

#endif
