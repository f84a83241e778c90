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
 *      (AORTA_TRAIN_DIST=1), reproduces the single-GPU loop's losses and
 *      gradient norms over 10 steps for full_shard, shard_grad_op,
 *      no_shard, hybrid_shard and ddp (several buckets), with prefetch
 *      knobs, fp32 and bf16, and its JSONL holds the per-group compute
 *      ranges and the all-gathers on the allgather stream; the same with
 *      gradient accumulation 2 on both sides (fp32: the executor's
 *      micro-batches, loaded through the trainer, and its once-per-step
 *      reductions against the single-GPU loop's accumulation), one variant
 *      with stress injection at level 2 (the losses unchanged, 3 * 2
 *      stress all-reduce ranges per step in the JSONL).
 * World 2 and 4 are checked on the device with tests/gpu/dist_equal.sh
 * (aorta train through the launcher) and the NCCL backend's own test.
 *
 * Without a CUDA device it prints a skip and exits 0.  Last line:
 * "N passed, N failed, N skipped"; exit 1 when a check failed.
 */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "train/model.h"
#include "train/model_gpu.h"
#include "train/rng.h"
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
	cudaStream_t s;

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
	CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	AORTA_OK_OR_DIE(gpu_model_create(&gm, d, &lay, B, prec, s, &err));
	AORTA_OK_OR_DIE(gpu_model_upload_params(&gm, hp, &err));
	AORTA_OK_OR_DIE(gpu_model_upload_batch(&gm, &b, NULL, &err));

	/* monolithic, gradients accumulated onto g0 */
	const uint64_t seed = 11;
	const float scale = 0.5f;
	float l1 = 0.0f, l2 = 0.0f;
	CUDA_OK(cudaMemcpy(gm.grads, g0, P * sizeof(float), cudaMemcpyHostToDevice));
	AORTA_OK_OR_DIE(gpu_model_forward_backward(&gm, seed, 1, scale, &err));
	AORTA_OK_OR_DIE(gpu_model_download_grads(&gm, g1, &err));
	AORTA_OK_OR_DIE(gpu_model_download_loss(&gm, &l1, NULL, &err));

	/* per group, each group's parameters and gradients in buffers of their own */
	float **gp = calloc((size_t)G, sizeof(float *)), **gg = calloc((size_t)G, sizeof(float *));
	for (int g = 0; g < G; g++) {
		size_t off = lay.group_off[g], len = lay.group_len[g];
		CUDA_OK(cudaMalloc((void **)&gp[g], len * sizeof(float)));
		CUDA_OK(cudaMalloc((void **)&gg[g], len * sizeof(float)));
		CUDA_OK(cudaMemcpy(gp[g], hp + off, len * sizeof(float), cudaMemcpyHostToDevice));
		CUDA_OK(cudaMemcpy(gg[g], g0 + off, len * sizeof(float), cudaMemcpyHostToDevice));
	}
	CUDA_OK(cudaMemset(gm.params, 0, P * sizeof(float))); /* the pass must not read the flat buffer */
	enum aorta_status st = gpu_model_begin(&gm, seed, 1, scale, &err);
	for (int g = 0; !st && g < G; g++)
		st = gpu_model_group_forward(&gm, g, gp[g], &err);
	for (int g = G - 1; !st && g >= 0; g--)
		st = gpu_model_group_backward(&gm, g, gp[g], gg[g], &err);
	if (st) {
		verdict(0, "%s: per-group pass failed: %s", label, err.msg);
	} else {
		CUDA_OK(cudaStreamSynchronize(s));
		for (int g = 0; g < G; g++)
			CUDA_OK(cudaMemcpy(g2 + lay.group_off[g], gg[g], lay.group_len[g] * sizeof(float),
					   cudaMemcpyDeviceToHost));
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
		cudaFree(gp[g]);
		cudaFree(gg[g]);
	}
	free(gp);
	free(gg);
	gpu_model_release(&gm);
	cudaStreamDestroy(s);
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

static int run_train(const struct train_config *c, int dist, struct aorta_error *err)
{
	struct trainer_opts o = { 0, -1, 1, 0, 0 };
	struct trainer_result res;
	if (dist)
		setenv("AORTA_TRAIN_DIST", "1", 1);
	else
		unsetenv("AORTA_TRAIN_DIST");
	enum aorta_status st = trainer_run(c, &o, &res, err);
	unsetenv("AORTA_TRAIN_DIST");
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

int main(void)
{
	int ndev = 0;
	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
		printf("skip: no CUDA device\n");
		printf("0 passed, 0 failed, 1 skipped\n");
		return 0;
	}
	CUDA_OK(cudaSetDevice(0));
	struct model_dims small = { .V = 1000, .E = 16, .F = 4, .D = 8, .T = 16, .S = 4, .M = 64, .H = 4,
				    .L = 2, .FFN = 128, .MLP = 96, .dropout = 0.1f, .ln_eps = 1e-5f };
	test_group_pass_equals_monolithic("small fp32", &small, 3, PREC_FP32);
	test_group_pass_equals_monolithic("small bf16", &small, 3, PREC_BF16);

	char root[] = "/tmp/aorta_test_dist_gpu_XXXXXX";
	if (!mkdtemp(root)) {
		verdict(0, "mkdtemp failed");
	} else {
		test_executor_world1_equals_single_gpu(root, MP_FP32, 1e-5, 1);
		test_executor_world1_equals_single_gpu(root, MP_BF16, 1e-4, 1);
		test_executor_world1_equals_single_gpu(root, MP_FP32, 1e-5, 2);
		char cmd[1200];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", root);
	}
	printf("%d passed, %d failed, %d skipped\n", n_pass, n_fail, n_skip);
	return n_fail ? 1 : 0;
}
