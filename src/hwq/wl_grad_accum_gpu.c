/*
 * wl_grad_accum_gpu.c - hwq workload "grad_accum": gradient accumulation
 * over 4 microbatches of 32 on an MLP 1024 -> 2048 -> ReLU -> 2048 -> ReLU
 * -> 1000, loss = sum(out) / 4 per microbatch, with an early reduction of
 * the first half of the parameters after microbatch 2.  Unit: samples/s,
 * 128 samples per GPU and iteration.
 *
 * Streams (N = 2..16): compute = [0, max(1, N/2)), reduce = the rest.
 *  - Compute: the 4 microbatches go round-robin over the compute streams;
 *    with more than 4 compute streams each microbatch is split into c =
 *    ceil(ncompute / 4) row chunks and the 4c items go round-robin, so every
 *    compute stream works.  Each item runs forward and a real backward
 *    (gpu_linear_bwd, ReLU backward) into its OWN zeroed gradient set
 *    (concurrent items on different streams must not accumulate into one
 *    buffer), then records its event.
 *  - Reduce: the parameters are one flat array [W1 b1 W2 b2 W3 b3]; "the
 *    first half of the parameters" (upstream's param_list[:3]) is the
 *    prefix W1 b1 W2.  Each reduce stream owns a contiguous slice of the
 *    prefix and of the suffix.
 *
 * The all-reduce.  A distributed workload: the harness runs one rank per
 * visible GPU (threads), every rank with the same seed and so the same
 * inputs.
 *  - world 1: a local mock, as upstream: early, after microbatches 0..2,
 *    each reduce stream sums their items' prefix slices into the reduced
 *    gradient; at the end it adds microbatch 3's prefix slices and scales
 *    the prefix slice by 1.0 in place (the clone * 1.0 of upstream), then
 *    sums every item's suffix slice and scales it by 1.0.
 *  - world W > 1: real ncclAllReduce (sum, fp32, in place) on the reduce
 *    streams, one call per stream and step.  Early: each reduce stream sums
 *    microbatches 0..2's prefix slices into the reduced gradient and
 *    all-reduces that slice.  End: it sums microbatch 3's prefix slices
 *    into the first microbatch-3 item's own set (a gradient set that the
 *    next iteration zeroes anyway), all-reduces that slice there and adds
 *    it to the reduced gradient (all-reduce is linear, so early + late =
 *    the all-reduce of the whole accumulated gradient); then sums every
 *    item's suffix slice and all-reduces it.  With identical inputs the
 *    reduced gradient is W x the local one.  NCCL runs one communicator's
 *    calls one after another whatever the stream, so run() issues them in
 *    a fixed order on every rank: every stream's early call, then every
 *    stream's two final calls.
 *
 * Check (exact backprop identities, the GPU's saved activations as inputs):
 * rows 0 and 127 of both hidden activations against a CPU forward; then
 * the reduced gradient against CPU sums over all 128 samples: db3 (all
 * 1000, each exactly 32), dW3 rows 0 and 999, db2 (all 2048), dW2 rows 0,
 * 1023, 2047, db1 and dW1 at rows 0, 511, 2047; at world W > 1 every
 * reference is multiplied by W.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/nccl_comm.h"
#include "hwq/hwq_gpu.h"
#include "hwq/hwq_mem.h"
#include "hwq/wl_kernels_p123_gpu.h"
#include "kernels/ops.h"

#define NMB 4
#define MB 32
#define DI 1024
#define DH 2048
#define DO 1000
#define NS (NMB * MB)

/* flat parameter layout */
#define OW1 0
#define OB1 (OW1 + (size_t)DH * DI)
#define OW2 (OB1 + DH)
#define OB2 (OW2 + (size_t)DH * DH)
#define OW3 (OB2 + DH)
#define OB3 (OW3 + (size_t)DO * DH)
#define NP (OB3 + DO)
#define NPRE OB2 /* W1 b1 W2 */

struct state {
	int ncomp, nred, chunks, items;
	gpu_ops_ctx *ops[WL_MAX_STREAMS];
	void *ev[WL_MAX_STREAMS];     /* per item */
	float *p, *x, *a1, *a2, *d1, *d2, *out, *dy, *g[WL_MAX_STREAMS], *red;
	float *hp, *hx;
	long long kern;
};

/* launches run() enqueues at world (1: the mock; else NCCL, one call one
 * launch) */
static long long count_kernels(const struct state *st, int world)
{
	long long k = 18LL * st->items; /* fwd 3x(gemm+bias) + 2 relu; bwd 3+1+3+1+2 */
	int early = 3 * st->chunks, late = st->chunks;
	for (int r = 0; r < st->nred; r++) {
		if (world > 1) /* early adds + call; late adds + call + add; suffix adds + call */
			k += (early - 1) + 1 + (late - 1) + 2 + (st->items - 1) + 1;
		else
			k += (early - 1) + late + (st->items - 1) + 2;
	}
	return k;
}

static enum aorta_status setup(void *vst, struct hwq_ctx *c, struct aorta_error *e)
{
	struct state *st = vst;
	enum aorta_status rc;
	uint64_t tot = 0;
	int N = c->nstreams;
	if (N < 2 || N > WL_MAX_STREAMS)
		return aorta_fail(e, AORTA_EINTERNAL, "", 0, -1, "grad_accum: %d streams", N);
	st->ncomp = N / 2 > 1 ? N / 2 : 1;
	st->nred = N - st->ncomp;
	st->chunks = (st->ncomp + NMB - 1) / NMB;
	st->items = NMB * st->chunks;
	st->kern = count_kernels(st, c->world);
	if (c->world > 1 && !c->nccl)
		return aorta_fail(e, AORTA_EINTERNAL, "", 0, -1, "grad_accum: the harness gave no NCCL comm");
	if ((rc = wl_ops_create(c, st->ops, N, e)) || (rc = wl_events_create(st->ev, st->items, e)))
		return rc;
	if (!(st->p = wl_alloc(c, NP, &tot, e)) || !(st->x = wl_alloc(c, (size_t)NS * DI, &tot, e)) ||
	    !(st->a1 = wl_alloc(c, (size_t)NS * DH, &tot, e)) ||
	    !(st->a2 = wl_alloc(c, (size_t)NS * DH, &tot, e)) ||
	    !(st->d1 = wl_alloc(c, (size_t)NS * DH, &tot, e)) ||
	    !(st->d2 = wl_alloc(c, (size_t)NS * DH, &tot, e)) ||
	    !(st->out = wl_alloc(c, (size_t)NS * DO, &tot, e)) ||
	    !(st->dy = wl_alloc(c, (size_t)MB * DO, &tot, e)))
		return AORTA_EGPU;
	for (int it = 0; it < st->items; it++)
		if (!(st->g[it] = wl_alloc(c, NP, &tot, e)))
			return AORTA_EGPU;
	if (!(st->red = wl_alloc(c, NP, &tot, e)))
		return AORTA_EGPU;
	st->hp = malloc(NP * sizeof(float));
	st->hx = malloc((size_t)NS * DI * sizeof(float));
	if (!st->hp || !st->hx)
		return aorta_fail(e, AORTA_EINTERNAL, "", 0, -1, "out of memory");
	if ((rc = wl_init_linear(c, st->p + OW1, st->hp + OW1, st->p + OB1, st->hp + OB1, DI, DH, 10, e)) ||
	    (rc = wl_init_linear(c, st->p + OW2, st->hp + OW2, st->p + OB2, st->hp + OB2, DH, DH, 12, e)) ||
	    (rc = wl_init_linear(c, st->p + OW3, st->hp + OW3, st->p + OB3, st->hp + OB3, DH, DO, 14, e)) ||
	    (rc = hwq_fill_random(c, st->x, st->hx, (size_t)NS * DI, -1.0f, 1.0f, 1, e)))
		return rc;
	/* d(sum(out) / 4) / d out: a constant 0.25 (the loss's gradient) */
	wlk_fill(st->dy, 0.25f, (size_t)MB * DO, (void *)c->streams[0]);
	GPU_CHECK(e, gpuStreamSynchronize(c->streams[0]));
	if (tot != hwq_mem_grad_accum(N))
		return aorta_fail(e, AORTA_EINTERNAL, "", 0, -1,
				  "grad_accum: allocated %llu bytes, hwq_mem says %llu",
				  (unsigned long long)tot, (unsigned long long)hwq_mem_grad_accum(N));
	return AORTA_OK;
}

/* dst = sum of the items' slices [lo, hi) (acc: dst += ...) */
static void sum_items(struct state *st, gpu_ops_ctx *o, int acc, int it0, int it1, size_t lo, size_t hi)
{
	size_t n = hi - lo;
	float *d = st->red + lo;
	if (!n)
		return;
	int it = it0;
	if (!acc) {
		gpu_add(o, d, st->g[it] + lo, st->g[it + 1] + lo, n);
		it += 2;
	}
	for (; it < it1; it++)
		gpu_add(o, d, d, st->g[it] + lo, n);
}

/* in-place ncclAllReduce (sum) of n floats at p on stream */
static enum aorta_status all_reduce(struct hwq_ctx *c, float *p, size_t n, void *stream, struct aorta_error *e)
{
	if (GPU_NCCL(e, c->nccl, ncclAllReduce(p, p, n, ncclFloat, ncclSum, (ncclComm_t)c->nccl, (gpuStream_t)stream)))
		return gpu_error_rank(e, AORTA_EGPU, c->rank);
	return AORTA_OK;
}

/* world > 1: the reduce streams' work with real all-reduces (see the top) */
static enum aorta_status reduce_nccl(struct state *st, struct hwq_ctx *c, struct aorta_error *e)
{
	void **s = (void **)c->streams;
	int early = 3 * st->chunks;
	enum aorta_status rc;
	for (int r = 0; r < st->nred; r++) {
		int si = st->ncomp + r, lo, hi;
		for (int it = 0; it < early; it++)
			wl_wait(s[si], st->ev[it]);
		wl_split((int)NPRE, st->nred, r, &lo, &hi);
		sum_items(st, st->ops[si], 0, 0, early, (size_t)lo, (size_t)hi);
		if (hi > lo && (rc = all_reduce(c, st->red + lo, (size_t)(hi - lo), s[si], e)))
			return rc;
	}
	for (int r = 0; r < st->nred; r++) {
		int si = st->ncomp + r, lo, hi, slo, shi;
		gpu_ops_ctx *o = st->ops[si];
		float *late = st->g[early];
		for (int it = early; it < st->items; it++)
			wl_wait(s[si], st->ev[it]);
		wl_split((int)NPRE, st->nred, r, &lo, &hi);
		size_t n = (size_t)(hi - lo);
		if (n) {
			for (int it = early + 1; it < st->items; it++)
				gpu_add(o, late + lo, late + lo, st->g[it] + lo, n);
			if ((rc = all_reduce(c, late + lo, n, s[si], e)))
				return rc;
			gpu_add(o, st->red + lo, st->red + lo, late + lo, n);
		}
		wl_split((int)(NP - NPRE), st->nred, r, &slo, &shi);
		sum_items(st, o, 0, 0, st->items, NPRE + (size_t)slo, NPRE + (size_t)shi);
		if (shi > slo && (rc = all_reduce(c, st->red + NPRE + slo, (size_t)(shi - slo), s[si], e)))
			return rc;
	}
	return AORTA_OK;
}

static enum aorta_status run(void *vst, struct hwq_ctx *c, struct aorta_error *e)
{
	struct state *st = vst;
	void **s = (void **)c->streams;
	const float *p = st->p;
	for (int it = 0; it < st->items; it++) {
		int mb = it / st->chunks, ch = it % st->chunks, si = it % st->ncomp, r0, r1;
		gpu_ops_ctx *o = st->ops[si];
		wl_split(MB, st->chunks, ch, &r0, &r1);
		int n = r1 - r0;
		size_t row = (size_t)mb * MB + r0;
		float *x = st->x + row * DI, *a1 = st->a1 + row * DH, *a2 = st->a2 + row * DH;
		float *d1 = st->d1 + row * DH, *d2 = st->d2 + row * DH, *out = st->out + row * DO;
		float *g = st->g[it];
		GPU_CHECK(e, gpuMemsetAsync(g, 0, NP * sizeof(float), c->streams[si]));
		gpu_linear_fwd(o, a1, x, p + OW1, p + OB1, n, DI, DH);
		wlk_relu(a1, a1, (size_t)n * DH, s[si]);
		gpu_linear_fwd(o, a2, a1, p + OW2, p + OB2, n, DH, DH);
		wlk_relu(a2, a2, (size_t)n * DH, s[si]);
		gpu_linear_fwd(o, out, a2, p + OW3, p + OB3, n, DH, DO);
		gpu_linear_bwd(o, d2, g + OW3, g + OB3, st->dy, a2, p + OW3, n, DH, DO);
		wlk_relu_bwd(d2, d2, a2, (size_t)n * DH, s[si]);
		gpu_linear_bwd(o, d1, g + OW2, g + OB2, d2, a1, p + OW2, n, DH, DH);
		wlk_relu_bwd(d1, d1, a1, (size_t)n * DH, s[si]);
		gpu_linear_bwd(o, NULL, g + OW1, g + OB1, d1, x, p + OW1, n, DI, DH);
		wl_record(st->ev[it], s[si]);
	}
	if (c->world > 1) {
		enum aorta_status rc = reduce_nccl(st, c, e);
		return rc ? rc : wl_ops_status(st->ops, c->nstreams, e);
	}
	int early = 3 * st->chunks; /* items of microbatches 0..2 */
	for (int r = 0; r < st->nred; r++) {
		int si = st->ncomp + r, lo, hi;
		gpu_ops_ctx *o = st->ops[si];
		/* early reduction: prefix of microbatches 0..2 */
		for (int it = 0; it < early; it++)
			wl_wait(s[si], st->ev[it]);
		wl_split((int)NPRE, st->nred, r, &lo, &hi);
		sum_items(st, o, 0, 0, early, (size_t)lo, (size_t)hi);
		/* final: microbatch 3's prefix, every item's suffix */
		for (int it = early; it < st->items; it++)
			wl_wait(s[si], st->ev[it]);
		sum_items(st, o, 1, early, st->items, (size_t)lo, (size_t)hi);
		wlk_scale(st->red + lo, st->red + lo, 1.0f, (size_t)(hi - lo), s[si]); /* mock all-reduce */
		int slo, shi;
		wl_split((int)(NP - NPRE), st->nred, r, &slo, &shi);
		sum_items(st, o, 0, 0, st->items, NPRE + (size_t)slo, NPRE + (size_t)shi);
		wlk_scale(st->red + NPRE + slo, st->red + NPRE + slo, 1.0f, (size_t)(shi - slo), s[si]);
	}
	return wl_ops_status(st->ops, c->nstreams, e);
}

static int check(void *vst, struct hwq_ctx *c, char *msg, size_t cap, struct aorta_error *e)
{
	struct state *st = vst;
	float *a1 = malloc((size_t)NS * DH * sizeof(float)), *a2 = malloc((size_t)NS * DH * sizeof(float));
	float *red = malloc(NP * sizeof(float)), *dz2 = malloc((size_t)NS * DH * sizeof(float));
	double *cs3 = calloc(DH, sizeof(double)), *h = malloc(DH * sizeof(double));
	struct wl_err ea = { 0 }, eg = { 0 };
	const float *hp = st->hp;
	int ok = 0;
	double W = c->world > 1 ? c->world : 1; /* identical ranks: the sum is W x the local gradient */
	if (!a1 || !a2 || !red || !dz2 || !cs3 || !h) {
		snprintf(msg, cap, "out of memory");
		goto out;
	}
	if (wl_fetch(a1, st->a1, (size_t)NS * DH * sizeof(float), e) ||
	    wl_fetch(a2, st->a2, (size_t)NS * DH * sizeof(float), e) ||
	    wl_fetch(red, st->red, NP * sizeof(float), e))
		goto out;
	/* activations, rows 0 and 127 */
	for (int ri = 0; ri < 2; ri++) {
		int n = ri ? NS - 1 : 0;
		wl_ref_linear_row(h, st->hx + (size_t)n * DI, hp + OW1, hp + OB1, DI, DH);
		for (int j = 0; j < DH; j++)
			wl_err_add(&ea, a1[(size_t)n * DH + j], h[j] > 0 ? h[j] : 0);
		wl_ref_linear_row(h, a1 + (size_t)n * DH, hp + OW2, hp + OB2, DH, DH);
		for (int j = 0; j < DH; j++)
			wl_err_add(&ea, a2[(size_t)n * DH + j], h[j] > 0 ? h[j] : 0);
	}
	/* db3 = 32, dW3[o][j] = 0.25 sum_n a2[n][j] */
	for (int o = 0; o < DO; o++)
		wl_err_add(&eg, red[OB3 + o], W * 0.25 * NS);
	for (int j = 0; j < DH; j++) {
		double sj = 0;
		for (int n = 0; n < NS; n++)
			sj += a2[(size_t)n * DH + j];
		wl_err_add(&eg, red[OW3 + j], W * 0.25 * sj);
		wl_err_add(&eg, red[OW3 + (size_t)(DO - 1) * DH + j], W * 0.25 * sj);
	}
	/* dz2[n][j] = [a2 > 0] 0.25 sum_o W3[o][j] */
	for (int o = 0; o < DO; o++)
		for (int j = 0; j < DH; j++)
			cs3[j] += hp[OW3 + (size_t)o * DH + j];
	for (int n = 0; n < NS; n++)
		for (int j = 0; j < DH; j++)
			dz2[(size_t)n * DH + j] = a2[(size_t)n * DH + j] > 0 ? (float)(0.25 * cs3[j]) : 0.0f;
	for (int j = 0; j < DH; j++) {
		double sj = 0;
		for (int n = 0; n < NS; n++)
			sj += dz2[(size_t)n * DH + j];
		wl_err_add(&eg, red[OB2 + j], W * sj);
	}
	int jr[3] = { 0, 1023, 2047 };
	for (int q = 0; q < 3; q++) {
		int j = jr[q];
		for (int i = 0; i < DH; i++) {
			double sv = 0;
			for (int n = 0; n < NS; n++)
				sv += (double)dz2[(size_t)n * DH + j] * a1[(size_t)n * DH + i];
			wl_err_add(&eg, red[OW2 + (size_t)j * DH + i], W * sv);
		}
	}
	int ir[3] = { 0, 511, 2047 };
	for (int q = 0; q < 3; q++) {
		int i = ir[q];
		double db = 0;
		for (int k = 0; k < DI; k++)
			h[k] = 0;
		for (int n = 0; n < NS; n++) {
			double dz1 = 0;
			if (a1[(size_t)n * DH + i] > 0)
				for (int j = 0; j < DH; j++)
					dz1 += (double)dz2[(size_t)n * DH + j] * hp[OW2 + (size_t)j * DH + i];
			db += dz1;
			for (int k = 0; k < DI; k++)
				h[k] += dz1 * st->hx[(size_t)n * DI + k];
		}
		wl_err_add(&eg, red[OB1 + i], W * db);
		for (int k = 0; k < DI; k++)
			wl_err_add(&eg, red[OW1 + (size_t)i * DI + k], W * h[k]);
	}
	double ra = wl_err_rel(&ea), rg = wl_err_rel(&eg);
	char how[64];
	if (c->world > 1)
		snprintf(how, sizeof(how), "world %d: NCCL all-reduce sum", c->world);
	else
		snprintf(how, sizeof(how), "world 1: mock all-reduce");
	snprintf(msg, cap,
		 "hidden activations rows 0, 127 vs CPU forward: max rel error %.3g; reduced gradient "
		 "(%lld entries of db3, dW3, db2, dW2, db1, dW1 summed over 4 microbatches, %s) vs CPU "
		 "backprop%s: max error %.3g relative to max |value| %.3g",
		 ra, eg.n, how, c->world > 1 ? " x world" : "", rg, eg.scale);
	ok = ra <= 1e-4 && rg <= 1e-4 && eg.scale > 0 && ea.scale > 0;
out:
	free(a1);
	free(a2);
	free(red);
	free(dz2);
	free(cs3);
	free(h);
	return ok;
}

static void teardown(void *vst, struct hwq_ctx *c)
{
	struct state *st = vst;
	wl_ops_destroy(st->ops, c->nstreams);
	wl_events_destroy(st->ev, st->items);
	free(st->hp);
	free(st->hx);
}

const struct hwq_workload_ops hwq_wl_grad_accum = {
	.name = "grad_accum", .state_size = sizeof(struct state),
	.setup = setup, .run = run, .check = check, .teardown = teardown,
	.samples_per_iter = NS,
	.kern_offset = offsetof(struct state, kern),
};
