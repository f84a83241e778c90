/*
 * test_dist_gpu.c - the distributed path on one GPU:
 *   1. the per-group GPU pass (gpu_model_begin / _group_forward /
 *      _group_backward, each group's parameters and gradients in buffers of
 *      their own) equals the monolithic gpu_model_forward_backward: same
 *      loss, same gradients (accumulated onto the same random start) within
 *      1e-6 by norm, fp32 and bf16, with dropout; and out-of-order calls
 *      fail;
 *   2. the GPU executor of the FSDP / DDP schedules (dist_gpu.h), run by
 *      trainer_run at world 1 with the local communicator
 *      (debug.distributed_executor), reproduces the single-GPU loop's losses and
 *      gradient norms over 10 steps for full_shard, shard_grad_op,
 *      no_shard, hybrid_shard and ddp (several buckets), with prefetch
 *      knobs, fp32 and bf16, and its JSONL holds the per-group compute
 *      ranges and the all-gathers on the allgather stream; the same with
 *      gradient accumulation 2 on both sides (fp32: the executor's
 *      micro-batches, loaded through the trainer, and its once-per-step
 *      reductions against the single-GPU loop's accumulation), one variant
 *      with stress injection at level 2 (the losses unchanged, 3 * 2
 *      stress all-reduce ranges per step in the JSONL).
 *   3. the reduce dtype's casts (gpu_f32_to_bf16, gpu_bf16_to_f32) equal
 *      their CPU twins (comm.h) bit for bit: random floats of every
 *      magnitude, exact ties, NaN, infinities, subnormals, and all 65536
 *      bf16 patterns back;
 *   4. with two GPUs: NCCL's bf16 all-reduce and reduce-scatter
 *      (comm_*_ex with COMM_BF16 on the NCCL backend, world 2) equal the
 *      CPU threads backend's bf16 reduction bit for bit (comm.h: at 2
 *      ranks both are bf16(a + b)); skipped with one GPU;
 *   5. fsdp.reduce_dtype bf16 in the GPU executor (world 1,
 *      debug.distributed_executor, full_shard and ddp): losses within bf16
 *      tolerance (1e-2 relative) of the fp32 reduce, the gradient norm
 *      changed (the cast acts), and the JSONL ranges of the gradient
 *      collectives carry "dtype":"bf16" and exactly half the fp32 run's
 *      "bytes".
 * World 2 and 4 are checked on the device with tests/gpu/dist_equal.sh
 * (aorta train through the launcher) and the NCCL backend's own test.
 *
 * Without a CUDA device it prints a skip and exits 0.  Last line:
 * "N passed, N failed, N skipped"; exit 1 when a check failed.
 */
#include "gpu/gpu.h"
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comm/comm.h"
#include "comm/nccl_comm.h"
#include "train/dist_ops_gpu.h"
#include "train/model.h"
#include "train/model_gpu.h"
#include "kernels/rng.h"
#include "train/train_config.h"
#include "train/trainer.h"

static int n_pass, n_fail, n_skip;

#include "cuda_ok.h"

/* call fills the local `err` on failure */
#define AORTA_OK_OR_DIE(call)                                                                   \
	do {                                                                                    \
		if ((call) != AORTA_OK) {                                                       \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, err.msg);            \
			exit(4);                                                                \
		}                                                                               \
	} while (0)

static void verdict(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void verdict(int ok, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("%s ", ok ? "ok  " : "FAIL");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	if (ok)
		n_pass++;
	else
		n_fail++;
}

/* ||a - b|| / ||a|| (NaN never passes: the caller tests rel <= tol) */
static double rel_diff(const float *a, const float *b, size_t n)
{
	double num = 0.0, den = 0.0;
	for (size_t i = 0; i < n; i++) {
		double d = (double)a[i] - (double)b[i];
		num += d * d;
		den += (double)a[i] * (double)a[i];
	}
	return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

/* ------------------------------------------------------------------------ */
/* 1. per-group pass == monolithic pass                                       */
/* ------------------------------------------------------------------------ */

static void test_group_pass_equals_monolithic(const char *label, const struct model_dims *d, int B,
					      enum gpu_precision prec)
{
	struct param_layout lay;
	struct aorta_error err = { 0 };
	struct gpu_model gm;
	struct batch b;
	gpuStream_t s;

	if (layout_init(&lay, d) != 0) {
		verdict(0, "%s: layout", label);
		return;
	}
	const size_t P = lay.total;
	const int G = lay.ngroups;
	float *hp = malloc(P * sizeof(float)), *g0 = malloc(P * sizeof(float));
	float *g1 = malloc(P * sizeof(float)), *g2 = malloc(P * sizeof(float));
	params_init(hp, &lay, d, 7);
	for (size_t i = 0; i < P; i++)
		g0[i] = 0.01f * (2.0f * rng_uniform(99, 0x7e57, i) - 1.0f);
	batch_alloc(&b, d, B);
	batch_fill(&b, d, 3, 0);
	CUDA_OK(gpuStreamCreateWithFlags(&s, gpuStreamNonBlocking));
	AORTA_OK_OR_DIE(gpu_model_create(&gm, d, &lay, B, prec, s, &err));
	AORTA_OK_OR_DIE(gpu_model_upload_params(&gm, hp, &err));
	AORTA_OK_OR_DIE(gpu_model_upload_batch(&gm, &b, NULL, &err));

	/* monolithic, gradients accumulated onto g0 */
	const uint64_t seed = 11;
	const float scale = 0.5f;
	float l1 = 0.0f, l2 = 0.0f;
	CUDA_OK(gpuMemcpy(gm.grads, g0, P * sizeof(float), gpuMemcpyHostToDevice));
	AORTA_OK_OR_DIE(gpu_model_forward_backward(&gm, seed, 1, scale, &err));
	AORTA_OK_OR_DIE(gpu_model_download_grads(&gm, g1, &err));
	AORTA_OK_OR_DIE(gpu_model_download_loss(&gm, &l1, NULL, &err));

	/* per group, each group's parameters and gradients in buffers of their own */
	float **gp = calloc((size_t)G, sizeof(float *)), **gg = calloc((size_t)G, sizeof(float *));
	for (int g = 0; g < G; g++) {
		size_t off = lay.group_off[g], len = lay.group_len[g];
		CUDA_OK(gpuMalloc((void **)&gp[g], len * sizeof(float)));
		CUDA_OK(gpuMalloc((void **)&gg[g], len * sizeof(float)));
		CUDA_OK(gpuMemcpy(gp[g], hp + off, len * sizeof(float), gpuMemcpyHostToDevice));
		CUDA_OK(gpuMemcpy(gg[g], g0 + off, len * sizeof(float), gpuMemcpyHostToDevice));
	}
	CUDA_OK(gpuMemset(gm.params, 0, P * sizeof(float))); /* the pass must not read the flat buffer */
	enum aorta_status st = gpu_model_begin(&gm, seed, 1, scale, &err);
	for (int g = 0; !st && g < G; g++)
		st = gpu_model_group_forward(&gm, g, gp[g], &err);
	for (int g = G - 1; !st && g >= 0; g--)
		st = gpu_model_group_backward(&gm, g, gp[g], gg[g], &err);
	if (st) {
		verdict(0, "%s: per-group pass failed: %s", label, err.msg);
	} else {
		CUDA_OK(gpuStreamSynchronize(s));
		for (int g = 0; g < G; g++)
			CUDA_OK(gpuMemcpy(g2 + lay.group_off[g], gg[g], lay.group_len[g] * sizeof(float),
					   gpuMemcpyDeviceToHost));
		AORTA_OK_OR_DIE(gpu_model_download_loss(&gm, &l2, NULL, &err));
		size_t same = 0;
		for (size_t i = 0; i < P; i++)
			same += memcmp(&g1[i], &g2[i], sizeof(float)) == 0;
		double worst = 0.0;
		for (int g = 0; g < G; g++) {
			double r = rel_diff(g1 + lay.group_off[g], g2 + lay.group_off[g], lay.group_len[g]);
			if (!(r <= worst))
				worst = r;
		}
		verdict(l1 == l2 && worst <= 1e-6,
			"%s: per-group pass == monolithic: loss %.8f vs %.8f, worst group gradient rel diff %.3g, "
			"%zu of %zu gradients bit-equal", label, l1, l2, worst, same, P);
	}

	/* out of order: backward before the forward ended, forward skipping a group */
	struct aorta_error e2 = { 0 };
	gpu_model_begin(&gm, seed, 1, scale, &e2);
	enum aorta_status s1 = gpu_model_group_backward(&gm, G - 1, gp[G - 1], gg[G - 1], &e2);
	enum aorta_status s2 = gpu_model_group_forward(&gm, 1, gp[1], &e2);
	verdict(s1 == AORTA_EINTERNAL && s2 == AORTA_EINTERNAL, "%s: out-of-order group calls fail (%s)", label,
		e2.msg);

	for (int g = 0; g < G; g++) {
		gpuFree(gp[g]);
		gpuFree(gg[g]);
	}
	free(gp);
	free(gg);
	gpu_model_release(&gm);
	gpuStreamDestroy(s);
	batch_free(&b);
	free(hp);
	free(g0);
	free(g1);
	free(g2);
	layout_release(&lay);
}

/* ------------------------------------------------------------------------ */
/* 2. the executor at world 1 == the single-GPU loop                          */
/* ------------------------------------------------------------------------ */

#define NSTEPS 10

static void small_config(struct train_config *c, const char *out, enum mixed_precision mp)
{
	train_config_defaults(c);
	c->training.batch_size = 4;
	c->training.gradient_accumulation = 1;
	c->training.max_steps = NSTEPS;
	c->training.mixed_precision = mp;
	c->training.log_interval = 100;
	snprintf(c->training.output_dir, sizeof(c->training.output_dir), "%.200s", out);
	c->dataset.num_samples = 4096;
	c->dataset.sequence_length = 16;
	c->dataset.sparse_features = 4;
	c->dataset.vocab_size = c->model.vocab_size = 2000;
	c->dataset.num_dense_features = c->model.num_dense_features = 4;
	c->dataset.dense_dim = c->model.dense_dim = 8;
	c->model.embedding_dim = 32;
	c->model.model_dim = 128;
	c->model.num_heads = 4;
	c->model.num_layers = 3;
	c->model.mlp_hidden_dim = 512;
	c->model.dropout = 0.1;   /* rank 0 of world 1 draws the single-GPU masks */
	c->compile.enabled = 0;
	c->profiling.enabled = 0;
	c->distributed.bucket_cap_mb = 0.25;  /* several DDP buckets at this size */
}

/* Reads "loss" and "grad_norm" of every line; returns the line count. */
static int read_losses(const char *path, double *loss, double *norm, int max, int *has_ag)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	size_t cap = 1 << 20;
	char *line = malloc(cap);
	int n = 0;
	*has_ag = 1;
	while (n < max && fgets(line, (int)cap, f)) {
		const char *l = strstr(line, "\"loss\":"), *g = strstr(line, "\"grad_norm\":");
		if (!l || !g)
			continue;
		loss[n] = strtod(l + 7, NULL);
		norm[n] = strtod(g + 12, NULL);
		if (!strstr(line, "\"allgather\"") || !strstr(line, "all_gather") || !strstr(line, "forward_g0"))
			*has_ag = 0;
		n++;
	}
	free(line);
	fclose(f);
	return n;
}

/* Occurrences of s in the file at path (-1: unreadable). */
static long count_in_file(const char *path, const char *s)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	size_t cap = 1 << 20;
	char *line = malloc(cap);
	long n = 0;
	while (fgets(line, (int)cap, f))
		for (const char *p = strstr(line, s); p; p = strstr(p + 1, s))
			n++;
	free(line);
	fclose(f);
	return n;
}

static int run_train(const struct train_config *c0, int dist, struct aorta_error *err)
{
	struct trainer_opts o = { 0, -1, 1, 0, 0 };
	struct trainer_result res;
	struct train_config c = *c0;
	c.debug.distributed_executor = dist;   /* the executor at world 1 */
	enum aorta_status st = trainer_run(&c, &o, &res, err);
	return st == AORTA_OK && res.steps == NSTEPS ? 0 : -1;
}

struct variant {
	const char *name;
	enum dist_mode mode;
	enum sharding_strategy strategy;
	int forward_prefetch, limit_all_gathers;
	enum backward_prefetch bp;
};

/* accum: micro-batches per step on both sides; with accum > 1 the first
 * variant also injects the stress at level 2. */
static void test_executor_world1_equals_single_gpu(const char *root, enum mixed_precision mp, double tol, int accum)
{
	static const struct variant vs[] = {
		{ "full_shard", DIST_FSDP, SHARD_FULL, 0, 1, PREFETCH_BACKWARD_PRE },
		{ "full_shard+fwd_prefetch+post+nolimit", DIST_FSDP, SHARD_FULL, 1, 0, PREFETCH_BACKWARD_POST },
		{ "shard_grad_op", DIST_FSDP, SHARD_GRAD_OP, 1, 1, PREFETCH_BACKWARD_PRE },
		{ "no_shard", DIST_FSDP, SHARD_NONE, 0, 1, PREFETCH_BACKWARD_PRE },
		{ "hybrid_shard", DIST_FSDP, SHARD_HYBRID, 0, 1, PREFETCH_BACKWARD_PRE },
		{ "ddp", DIST_DDP, SHARD_FULL, 0, 1, PREFETCH_BACKWARD_PRE },
	};
	const char *pn = mp == MP_BF16 ? "bf16" : "fp32";
	struct train_config c;
	struct aorta_error err = { 0 };
	char dir[200], path[300];
	double l0[NSTEPS], n0[NSTEPS], l1[NSTEPS], n1[NSTEPS];
	int ag = 0;

	snprintf(dir, sizeof(dir), "%s/single_%s_acc%d", root, pn, accum);
	small_config(&c, dir, mp);
	c.training.gradient_accumulation = accum;
	if (train_config_check(&c, &err) != AORTA_OK) {
		verdict(0, "%s: the test config is invalid: %s", pn, err.msg);
		return;
	}
	if (run_train(&c, 0, &err) != 0) {
		verdict(0, "%s: single-GPU run failed: %s", pn, err.msg);
		return;
	}
	snprintf(path, sizeof(path), "%s/rank_00_metrics.jsonl", dir);
	if (read_losses(path, l0, n0, NSTEPS, &ag) != NSTEPS) {
		verdict(0, "%s: cannot read %d losses from %s", pn, NSTEPS, path);
		return;
	}
	for (size_t v = 0; v < sizeof(vs) / sizeof(vs[0]); v++) {
		const int stress = accum > 1 && v == 0 ? 2 : 0;
		snprintf(dir, sizeof(dir), "%s/dist_%s_%s_acc%d", root, vs[v].name, pn, accum);
		small_config(&c, dir, mp);
		c.training.gradient_accumulation = accum;
		c.training.inject_allreduce_copies = stress > 0;
		c.training.allreduce_stress_level = stress > 0 ? stress : 1;
		c.distributed.mode = vs[v].mode;
		c.fsdp.sharding_strategy = vs[v].strategy;
		c.fsdp.forward_prefetch = vs[v].forward_prefetch;
		c.fsdp.limit_all_gathers = vs[v].limit_all_gathers;
		c.fsdp.backward_prefetch = vs[v].bp;
		if (run_train(&c, 1, &err) != 0) {
			verdict(0, "%s %s: executor run failed: %s", vs[v].name, pn, err.msg);
			continue;
		}
		snprintf(path, sizeof(path), "%s/rank_00_metrics.jsonl", dir);
		if (read_losses(path, l1, n1, NSTEPS, &ag) != NSTEPS) {
			verdict(0, "%s %s: cannot read %d losses from %s", vs[v].name, pn, NSTEPS, path);
			continue;
		}
		double worst_l = 0.0, worst_n = 0.0;
		for (int i = 0; i < NSTEPS; i++) {
			double rl = fabs(l1[i] - l0[i]) / fabs(l0[i]), rn = fabs(n1[i] - n0[i]) / fabs(n0[i]);
			if (!(rl <= worst_l))
				worst_l = rl;
			if (!(rn <= worst_n))
				worst_n = rn;
		}
		int sharded = vs[v].mode == DIST_FSDP && (vs[v].strategy == SHARD_FULL || vs[v].strategy == SHARD_GRAD_OP ||
							  vs[v].strategy == SHARD_HYBRID);
		long nstress = count_in_file(path, "_stress_allreduce_"), want_stress = 3L * stress * NSTEPS;
		verdict(worst_l <= tol && worst_n <= 10 * tol && (!sharded || ag) && nstress == want_stress,
			"%s %s, accum %d%s: world-1 executor == single-GPU loop over %d steps: max rel diff loss %.3g, "
			"grad_norm %.3g (tol %.g)%s; %ld stress all-reduce ranges (want %ld); last loss %.6f vs %.6f",
			vs[v].name, pn, accum, stress ? ", stress 2" : "", NSTEPS, worst_l, worst_n, tol,
			sharded ? (ag ? ", all-gathers on the allgather stream" : ", NO all-gather ranges") : "",
			nstress, want_stress, l1[NSTEPS - 1], l0[NSTEPS - 1]);
	}
}

/* The first line of the JSONL at path (step 0), malloc'd, or NULL. */
static char *first_line(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	size_t cap = 1 << 20;
	char *line = malloc(cap);
	if (!fgets(line, (int)cap, f)) {
		free(line);
		line = NULL;
	}
	fclose(f);
	return line;
}

/* The cross-step overlaps of the executor (the next step's batch upload
 * and first all-gather issued during this step, trainer_gpu.c and
 * dist_gpu_set_next) change no number: full_shard fp32 at world 1 with
 * both on (the default) gives bit-identical losses and gradient norms to
 * both off, and the JSONL puts the next step's ranges in step 0's line. */
static void test_cross_step_overlap_is_exact(const char *root)
{
	struct train_config c;
	struct aorta_error err = { 0 };
	char dir[2][200], path[2][512];
	double l[2][NSTEPS], n[2][NSTEPS];
	int ag = 0;
	for (int on = 0; on < 2; on++) {
		snprintf(dir[on], sizeof(dir[on]), "%s/cross_step_%d", root, on);
		small_config(&c, dir[on], MP_FP32);
		c.distributed.mode = DIST_FSDP;
		c.fsdp.sharding_strategy = SHARD_FULL;
		c.debug.pregather = on;
		c.debug.prefetch_next = on;
		int rc = run_train(&c, 1, &err);
		snprintf(path[on], sizeof(path[on]), "%s/rank_00_metrics.jsonl", dir[on]);
		if (rc != 0 || read_losses(path[on], l[on], n[on], NSTEPS, &ag) != NSTEPS) {
			verdict(0, "cross-step overlap %s: run failed: %s", on ? "on" : "off", err.msg);
			return;
		}
	}
	int same = 1;
	for (int i = 0; i < NSTEPS; i++)
		same &= l[0][i] == l[1][i] && n[0][i] == n[1][i];
	char *s0[2] = { first_line(path[0]), first_line(path[1]) };
	int off_clean = s0[0] && !strstr(s0[0], "epoch0_step1_allgather_g") && !strstr(s0[0], "epoch0_step1_prefetch");
	int on_moved = s0[1] && strstr(s0[1], "epoch0_step1_allgather_g") && strstr(s0[1], "epoch0_step1_prefetch");
	long total_off = count_in_file(path[0], "_allgather_g"), total_on = count_in_file(path[1], "_allgather_g");
	verdict(same && off_clean && on_moved && total_off == total_on && total_on > 0,
		"cross-step batch prefetch + first all-gather: %d steps bit-identical to both off (%s); step 0's line "
		"holds step 1's gather and upload (%s, off: %s); forward gathers %ld == %ld",
		NSTEPS, same ? "yes" : "NO", on_moved ? "yes" : "NO", off_clean ? "none" : "SOME", total_on, total_off);
	free(s0[0]);
	free(s0[1]);
}

/* The gradient norm summed as each reduction lands (debug.norm_early, the
 * default) against summed over the whole shard at GRAD_NORM: full_shard
 * (per reduce-scatter) and ddp (per bucket all-reduce), fp32 at world 1,
 * the same losses and norms up to the order of the double additions
 * (1e-6 relative), and each run's log names the path it took. */
static void test_norm_early_equals_norm_at_end(const char *root)
{
	static const struct {
		const char *name;
		enum dist_mode mode;
	} vs[] = { { "full_shard", DIST_FSDP }, { "ddp", DIST_DDP } };
	for (size_t v = 0; v < sizeof(vs) / sizeof(vs[0]); v++) {
		struct train_config c;
		struct aorta_error err = { 0 };
		char dir[2][200], path[512];
		double l[2][NSTEPS], n[2][NSTEPS];
		int ag = 0, logged[2] = { 0, 0 };
		static const char *says[2] = { "debug.norm_early=false", "summed as each reduction lands" };
		for (int on = 0; on < 2; on++) {
			snprintf(dir[on], sizeof(dir[on]), "%s/norm_early_%s_%d", root, vs[v].name, on);
			small_config(&c, dir[on], MP_FP32);
			c.distributed.mode = vs[v].mode;
			c.fsdp.sharding_strategy = SHARD_FULL;
			c.debug.norm_early = on;
			int rc = run_train(&c, 1, &err);
			snprintf(path, sizeof(path), "%s/rank_00_metrics.jsonl", dir[on]);
			if (rc != 0 || read_losses(path, l[on], n[on], NSTEPS, &ag) != NSTEPS) {
				verdict(0, "%s norm_early %s: run failed: %s", vs[v].name, on ? "on" : "off", err.msg);
				return;
			}
			snprintf(path, sizeof(path), "%s/rank0.log", dir[on]);
			logged[on] = count_in_file(path, says[on]) > 0;
		}
		double worst = 0.0;
		for (int i = 0; i < NSTEPS; i++) {
			double a = fabs(l[1][i] - l[0][i]) / fabs(l[0][i]), b = fabs(n[1][i] - n[0][i]) / fabs(n[0][i]);
			worst = fmax(worst, fmax(a, b));
			if (a != a || b != b)
				worst = INFINITY;
		}
		verdict(worst <= 1e-6 && logged[0] && logged[1],
			"%s gradient norm summed as reductions land vs at the end, %d steps: max rel diff of loss "
			"and norm %.3g (tol 1e-6); logs name the path: on %s, off %s",
			vs[v].name, NSTEPS, worst, logged[1] ? "yes" : "NO", logged[0] ? "yes" : "NO");
	}
}

/* ------------------------------------------------------------------------ */
/* 3. the bf16 casts == their CPU twins                                       */
/* ------------------------------------------------------------------------ */

static void test_bf16_casts_equal_cpu_twins(void)
{
	const size_t n = (size_t)1 << 20;
	float *h = malloc(n * sizeof(float)), *hb = malloc(65536 * sizeof(float)), *cb = malloc(65536 * sizeof(float));
	uint16_t *want = malloc(n * sizeof(uint16_t)), *got = malloc(n * sizeof(uint16_t)), *pat = malloc(65536 * 2);
	for (size_t i = 0; i < n; i++) {
		/* magnitudes 2^-140 .. 2^120, random signs; every 7th an exact tie
		 * (low half 0x8000), a few specials */
		float m = rng_uniform(5, 1, i) + 0.5f;
		int ex = (int)(rng_uniform(5, 2, i) * 260.0f) - 140;
		float f = ldexpf(rng_uniform(5, 3, i) < 0.5f ? -m : m, ex);
		if (i % 7 == 0) {
			uint32_t u;
			memcpy(&u, &f, 4);
			u = (u & 0xffff0000u) | 0x8000u;
			memcpy(&f, &u, 4);
		}
		h[i] = f;
	}
	h[0] = NAN;
	h[1] = -INFINITY;
	h[2] = INFINITY;
	h[3] = 3.4028235e38f;
	h[4] = 1e-45f;
	h[5] = -0.0f;
	comm_f32_to_bf16_n(want, h, n);
	for (int i = 0; i < 65536; i++)
		pat[i] = (uint16_t)i;
	comm_bf16_to_f32_n(cb, pat, 65536);

	float *d = NULL, *db = NULL;
	uint16_t *d16 = NULL, *dpat = NULL;
	CUDA_OK(gpuMalloc((void **)&d, n * sizeof(float)));
	CUDA_OK(gpuMalloc((void **)&d16, n * sizeof(uint16_t)));
	CUDA_OK(gpuMalloc((void **)&db, 65536 * sizeof(float)));
	CUDA_OK(gpuMalloc((void **)&dpat, 65536 * sizeof(uint16_t)));
	CUDA_OK(gpuMemcpy(d, h, n * sizeof(float), gpuMemcpyHostToDevice));
	CUDA_OK(gpuMemcpy(dpat, pat, 65536 * sizeof(uint16_t), gpuMemcpyHostToDevice));
	CUDA_OK((gpuError_t)gpu_f32_to_bf16(d16, d, n, NULL));
	CUDA_OK((gpuError_t)gpu_bf16_to_f32(db, dpat, 65536, NULL));
	CUDA_OK(gpuDeviceSynchronize());
	CUDA_OK(gpuMemcpy(got, d16, n * sizeof(uint16_t), gpuMemcpyDeviceToHost));
	CUDA_OK(gpuMemcpy(hb, db, 65536 * sizeof(float), gpuMemcpyDeviceToHost));
	size_t bad = 0, bad_back = 0, first = 0;
	for (size_t i = 0; i < n; i++)
		if (got[i] != want[i] && !bad++)
			first = i;
	bad_back = memcmp(hb, cb, 65536 * sizeof(float)) != 0;
	verdict(!bad && !bad_back && want[0] != 0 && (want[2] == 0x7f80),
		"bf16 casts: gpu_f32_to_bf16 == comm_f32_to_bf16_n on %zu values (%zu differ%s), gpu_bf16_to_f32 == "
		"comm_bf16_to_f32_n on all 65536 patterns (%s)", n, bad, bad ? ", first shown below" : "",
		bad_back ? "DIFFER" : "same bits");
	if (bad)
		fprintf(stderr, "  element %zu: %a -> gpu 0x%04x, cpu 0x%04x\n", first, (double)h[first], got[first],
			want[first]);
	gpuFree(d);
	gpuFree(d16);
	gpuFree(db);
	gpuFree(dpat);
	free(h);
	free(hb);
	free(cb);
	free(want);
	free(got);
	free(pat);
}

/* ------------------------------------------------------------------------ */
/* 4. NCCL's bf16 reductions == the CPU backend's, world 2                    */
/* ------------------------------------------------------------------------ */

enum { NB = 4099 };   /* reduce-scatter: NB per rank; odd, so not a multiple of a vector */

struct nrank {
	int rank;
	ncclUniqueId *id;
	const uint16_t *in;        /* [2 * NB] this rank's input */
	uint16_t ar[2 * NB], rs[NB];
	int ok;
	char msg[300];
};

static void *nccl_rank_main(void *p)
{
	struct nrank *r = p;
	struct comm *c = NULL;
	struct aorta_error e = { 0 };
	uint16_t *din = NULL, *dar = NULL, *drs = NULL;
	gpuStream_t s = NULL;
	if (comm_nccl_create_rank(r->rank, 2, 2, r->id, r->rank, NULL, &c, &e) != AORTA_OK) {
		snprintf(r->msg, sizeof(r->msg), "%.250s", e.msg);
		return NULL;
	}
	if (gpuStreamCreateWithFlags(&s, 0) || gpuMalloc((void **)&din, 2 * NB * 2) || gpuMalloc((void **)&dar, 2 * NB * 2) ||
	    gpuMalloc((void **)&drs, NB * 2) || gpuMemcpy(din, r->in, 2 * NB * 2, gpuMemcpyHostToDevice)) {
		snprintf(r->msg, sizeof(r->msg), "cuda setup failed");
		goto out;
	}
	comm_set_stream(c, COMM_ALL_REDUCE, s);
	comm_set_stream(c, COMM_REDUCE_SCATTER, s);
	struct comm_group *w = comm_group(c, COMM_PG_WORLD);
	if (comm_all_reduce_ex(w, din, dar, 2 * NB, COMM_BF16, NULL, "bf16 ar", &e) ||
	    comm_reduce_scatter_ex(w, din, drs, NB, COMM_BF16, NULL, "bf16 rs", &e)) {
		snprintf(r->msg, sizeof(r->msg), "%.250s", e.msg);
		goto out;
	}
	if (gpuStreamSynchronize(s) || gpuMemcpy(r->ar, dar, 2 * NB * 2, gpuMemcpyDeviceToHost) ||
	    gpuMemcpy(r->rs, drs, NB * 2, gpuMemcpyDeviceToHost)) {
		snprintf(r->msg, sizeof(r->msg), "cuda readback failed");
		goto out;
	}
	r->ok = c->nbytes[COMM_ALL_REDUCE] == 2 * NB * 2 && c->nbytes[COMM_REDUCE_SCATTER] == 2 * NB * 2;
	if (!r->ok)
		snprintf(r->msg, sizeof(r->msg), "bytes counted %lld + %lld, expected %d each",
			 c->nbytes[COMM_ALL_REDUCE], c->nbytes[COMM_REDUCE_SCATTER], 2 * NB * 2);
out:
	gpuFree(din);
	gpuFree(dar);
	gpuFree(drs);
	if (s)
		gpuStreamDestroy(s);
	comm_destroy(c);
	return NULL;
}

static void test_nccl_bf16_equals_cpu_backend(int ndev)
{
	if (ndev < 2) {
		printf("skip: NCCL bf16 vs the CPU backend needs 2 GPUs, %d visible\n", ndev);
		n_skip++;
		return;
	}
	uint16_t in[2][2 * NB];
	for (int r = 0; r < 2; r++)
		for (int i = 0; i < 2 * NB; i++) {
			/* gradient-like values; every 5th pair sums to an exact tie */
			float f = (rng_uniform(9 + (uint64_t)r, 4, (uint64_t)i) - 0.5f) * ldexpf(1.0f, i % 20 - 10);
			if (i % 5 == 0)
				f = r == 0 ? 1.0f + 0.0078125f * (float)(i % 3) : 0.00390625f;
			in[r][i] = comm_f32_to_bf16(f);
		}
	/* the CPU reference: the threads backend, both ranks from this thread */
	struct comm *cc[2];
	struct aorta_error e;
	struct comm_req q[2];
	uint16_t car[2][2 * NB], crs[2][NB];
	memset(q, 0, sizeof(q));
	int ok = comm_threads_create(2, 2, cc, &e) == AORTA_OK;
	for (int r = 0; ok && r < 2; r++)
		ok = comm_all_reduce_ex(comm_group(cc[r], COMM_PG_WORLD), in[r], car[r], 2 * NB, COMM_BF16, &q[r], "ar",
					&e) == AORTA_OK;
	for (int r = 0; ok && r < 2; r++)
		ok = comm_wait(&q[r], &e) == AORTA_OK;
	for (int r = 0; ok && r < 2; r++)
		ok = comm_reduce_scatter_ex(comm_group(cc[r], COMM_PG_WORLD), in[r], crs[r], NB, COMM_BF16, &q[r], "rs",
					    &e) == AORTA_OK;
	for (int r = 0; ok && r < 2; r++)
		ok = comm_wait(&q[r], &e) == AORTA_OK;
	if (ok)
		for (int r = 0; r < 2; r++)
			comm_destroy(cc[r]);
	if (!ok) {
		verdict(0, "nccl bf16: the CPU reference failed: %s", e.msg);
		return;
	}
	ncclUniqueId id;
	comm_nccl_env_defaults();   /* NVLink SHARP off, before any NCCL thread */
	if (comm_nccl_unique_id(&id, &e) != AORTA_OK) {
		verdict(0, "nccl bf16: %s", e.msg);
		return;
	}
	struct nrank nr[2];
	pthread_t th[2];
	for (int r = 0; r < 2; r++) {
		memset(&nr[r], 0, sizeof(nr[r]));
		nr[r].rank = r;
		nr[r].id = &id;
		nr[r].in = in[r];
		pthread_create(&th[r], NULL, nccl_rank_main, &nr[r]);
	}
	for (int r = 0; r < 2; r++)
		pthread_join(th[r], NULL);
	for (int r = 0; r < 2; r++) {
		if (!nr[r].ok) {
			verdict(0, "nccl bf16: rank %d: %s", r, nr[r].msg);
			return;
		}
	}
	long dar = 0, drs = 0, ties = 0;
	for (int r = 0; r < 2; r++) {
		for (int i = 0; i < 2 * NB; i++)
			dar += nr[r].ar[i] != car[r][i];
		for (int i = 0; i < NB; i++)
			drs += nr[r].rs[i] != crs[r][i];
	}
	for (int i = 0; i < 2 * NB; i += 5)
		ties += (i % 3 == 0 && car[0][i] == 0x3f80) || (i % 3 == 1 && car[0][i] == 0x3f82);
	verdict(dar == 0 && drs == 0 && ties > 0,
		"nccl bf16 world 2 == CPU threads backend bit for bit: all_reduce of %d (%ld differ), reduce_scatter "
		"of %d per rank (%ld differ), %ld constructed ties rounded to even", 2 * NB, dar, NB, drs, ties);
}

/* ------------------------------------------------------------------------ */
/* 5. fsdp.reduce_dtype bf16 in the executor                                  */
/* ------------------------------------------------------------------------ */

/* Sum of "bytes" of the ranges whose metadata function is fn, and the
 * number of those ranges with "dtype":"bf16" (-1: unreadable). */
static long long sum_bytes(const char *path, const char *fn, long *nbf16)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char key[96];
	snprintf(key, sizeof(key), "\"function\":\"%s\",\"bytes\":", fn);
	size_t cap = 1 << 22;
	char *line = malloc(cap);
	long long sum = 0;
	*nbf16 = 0;
	while (fgets(line, (int)cap, f))
		for (const char *p = strstr(line, key); p; p = strstr(p + 1, key)) {
			char *end;
			sum += strtoll(p + strlen(key), &end, 10);
			if (!strncmp(end, ",\"dtype\":\"bf16\"", 15))
				(*nbf16)++;
		}
	free(line);
	fclose(f);
	return sum;
}

static void test_reduce_dtype_bf16_in_executor(const char *root)
{
	static const struct variant vs[] = {
		{ "full_shard", DIST_FSDP, SHARD_FULL, 1, 1, PREFETCH_BACKWARD_PRE },
		{ "ddp", DIST_DDP, SHARD_FULL, 0, 1, PREFETCH_BACKWARD_PRE },
	};
	for (size_t v = 0; v < sizeof(vs) / sizeof(vs[0]); v++) {
		double l[2][NSTEPS], g[2][NSTEPS];
		long long bytes[2];
		long nb16[2] = { 0, 0 };
		int ag = 0, ok = 1;
		const char *fn = vs[v].mode == DIST_DDP ? "all_reduce" : "reduce_scatter";
		for (int b = 0; b < 2 && ok; b++) {
			struct train_config c;
			struct aorta_error err = { 0 };
			char dir[240], path[300];
			snprintf(dir, sizeof(dir), "%s/reduce_%s_%s", root, vs[v].name, b ? "bf16" : "fp32");
			small_config(&c, dir, MP_FP32);
			c.profiling.enabled = 0;
			c.distributed.mode = vs[v].mode;
			c.fsdp.sharding_strategy = vs[v].strategy;
			c.fsdp.forward_prefetch = vs[v].forward_prefetch;
			c.fsdp.reduce_dtype = b ? REDUCE_BF16 : REDUCE_FP32;
			if (run_train(&c, 1, &err) != 0) {
				verdict(0, "%s reduce_dtype %s: run failed: %s", vs[v].name, b ? "bf16" : "fp32",
					err.msg);
				ok = 0;
				break;
			}
			snprintf(path, sizeof(path), "%s/rank_00_metrics.jsonl", dir);
			if (read_losses(path, l[b], g[b], NSTEPS, &ag) != NSTEPS) {
				verdict(0, "%s: cannot read %d losses from %s", vs[v].name, NSTEPS, path);
				ok = 0;
				break;
			}
			bytes[b] = sum_bytes(path, fn, &nb16[b]);
		}
		if (!ok)
			continue;
		double worst = 0.0, gdiff = 0.0;
		for (int i = 0; i < NSTEPS; i++) {
			double r = fabs(l[1][i] - l[0][i]) / fabs(l[0][i]);
			worst = r > worst || r != r ? r : worst;
			gdiff = fmax(gdiff, fabs(g[1][i] - g[0][i]));
		}
		verdict(worst <= 1e-2 && gdiff > 0.0 && bytes[0] > 0 && 2 * bytes[1] == bytes[0] && nb16[0] == 0 &&
				nb16[1] > 0,
			"%s reduce_dtype bf16 vs fp32 over %d steps: max rel loss diff %.3g (tol 1e-2), max "
			"grad_norm diff %.3g (must be > 0), %s bytes in the JSONL %lld -> %lld (want half), "
			"%ld ranges tagged bf16",
			vs[v].name, NSTEPS, worst, gdiff, fn, bytes[0], bytes[1], nb16[1]);
	}
}

int main(void)
{
	int ndev = 0;
	if (gpuGetDeviceCount(&ndev) != gpuSuccess || ndev == 0) {
		printf("skip: no CUDA device\n");
		printf("0 passed, 0 failed, 1 skipped\n");
		return 0;
	}
	CUDA_OK(gpuSetDevice(0));
	struct model_dims small = { .V = 1000, .E = 16, .F = 4, .D = 8, .T = 16, .S = 4, .M = 64, .H = 4,
				    .L = 2, .FFN = 128, .MLP = 96, .dropout = 0.1f, .ln_eps = 1e-5f };
	test_group_pass_equals_monolithic("small fp32", &small, 3, PREC_FP32);
	test_group_pass_equals_monolithic("small bf16", &small, 3, PREC_BF16);
	test_bf16_casts_equal_cpu_twins();
	test_nccl_bf16_equals_cpu_backend(ndev);

	char root[] = "/tmp/aorta_test_dist_gpu_XXXXXX";
	if (!mkdtemp(root)) {
		verdict(0, "mkdtemp failed");
	} else {
		test_executor_world1_equals_single_gpu(root, MP_FP32, 1e-5, 1);
		test_executor_world1_equals_single_gpu(root, MP_BF16, 1e-4, 1);
		test_executor_world1_equals_single_gpu(root, MP_FP32, 1e-5, 2);
		test_reduce_dtype_bf16_in_executor(root);
		test_cross_step_overlap_is_exact(root);
		test_norm_early_equals_norm_at_end(root);
		char cmd[1200];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", root);
	}
	printf("%d passed, %d failed, %d skipped\n", n_pass, n_fail, n_skip);
	return n_fail ? 1 : 0;
}
