/*
 * wl_zero_offload_gpu.c - hwq workload "zero_offload": ZeRO-Offload's
 * traffic pattern on 4 blocks fc2(relu(fc1 x)) of 4096 x 4096, batch 16.
 * Per layer a 64 MiB pinned host -> device "parameter prefetch" (the copied
 * buffer is not used by the compute, as upstream), then the layer's
 * forward; a real backward of loss = sum(out); then per layer the weight
 * gradients are copied to the host SYNCHRONOUSLY and the CPU adds 0.01 x
 * grad into that layer's optimizer state (upstream's grad.cpu() and add_).
 * Unit: samples/s, 16 samples per iteration.
 *
 * Not capturable (graph_ok 0): run() waits on the host for each layer's
 * gradient copies and does CPU work in the middle of the iteration.
 *
 * Streams (N = 4..12), t = max(1, N/3): offload [0, t), prefetch [t, 2t),
 * compute [2t, N).
 *  - Prefetch: each layer's 64 MiB copy is split into contiguous slices,
 *    one per prefetch stream; each slice records an event per layer.
 *  - Compute: the 16 rows are split over the compute streams; each runs
 *    the forward of its rows (layer i after every prefetch slice of layer
 *    i) and the backward into its own partial gradient set (concurrent
 *    streams must not accumulate into one buffer), then, after a barrier
 *    among the compute streams, sums its element slice of every partial
 *    into the total gradients.
 *  - Offload: per layer, every offload stream waits for the compute streams
 *    and copies its slice of the layer's fc1 and fc2 weight gradients to a
 *    pinned staging buffer; the host waits for those copies and adds
 *    0.01 (gW1 + gW2) into the layer's state (both weights into one state,
 *    as upstream).  Bias gradients stay on the GPU (upstream's
 *    grad[:4096, :4096] on a 1-D bias would not index).
 *
 * Check: after k = run() calls, optimizer state of layer 3 at rows 0,
 * 2047, 4095 equals k * 0.01 * (gW1 + gW2) computed on the CPU from the
 * backprop identities (gW2[o][j] = sum_n h[n][j]; gW1[o][j] = sum_n
 * [h[n][o] > 0] colsum(W2)[o] x[n][j]) with the GPU's saved layer input and
 * hidden activation, which are themselves checked at rows 0 and 15 against
 * a CPU forward of that layer.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "hwq/hwq_gpu.h"
#include "hwq/hwq_mem.h"
#include "hwq/wl_kernels_p123_gpu.h"
#include "kernels/ops.h"

#define NL 4
#define D 4096
#define BS 16
#define WSZ ((size_t)D * D)

struct state {
	int t, ncomp;
	gpu_ops_ctx *ops[WL_MAX_STREAMS];
	void *ev_pf[NL][WL_MAX_STREAMS], *ev_c[WL_MAX_STREAMS], *ev_c2[WL_MAX_STREAMS];
	float *w1[NL], *b1[NL], *w2[NL], *b2[NL]; /* device parameters */
	float *gpu_param[NL];                      /* prefetch targets */
	float *act[NL + 1], *hid[NL];              /* [16][4096] */
	float *dyb[2], *dh, *ones;
	float *part[WL_MAX_STREAMS];               /* partial grads: NL x (W1 b1 W2 b2) */
	float *total;                              /* same layout */
	float *cpu_param[NL], *opt[NL], *stage[2]; /* pinned host */
	float *hw1_3, *hb1_3, *hw2_3, *hb2_3;      /* host copies of layer 3 */
	long long runs, kern;
};

#define GSET (2 * WSZ + 2 * (size_t)D) /* one layer's W1 b1 W2 b2 */
#define OW1(l) ((size_t)(l) * GSET)
#define OB1(l) (OW1(l) + WSZ)
#define OW2(l) (OB1(l) + D)
#define OB2(l) (OW2(l) + WSZ)

static enum aorta_status setup(void *vst, struct hwq_ctx *c, struct aorta_error *e)
{
	struct state *st = vst;
	enum aorta_status rc;
	uint64_t tot = 0;
	int N = c->nstreams;
	if (N < 4 || N > WL_MAX_STREAMS)
		return aorta_fail(e, AORTA_EINTERNAL, "", 0, -1, "zero_offload: %d streams", N);
	st->t = N / 3 > 1 ? N / 3 : 1;
	st->ncomp = N - 2 * st->t;
	if ((rc = wl_ops_create(c, st->ops, N, e)) || (rc = wl_events_create(st->ev_c, N, e)) ||
	    (rc = wl_events_create(st->ev_c2, N, e)))
		return rc;
	for (int l = 0; l < NL; l++)
		if ((rc = wl_events_create(st->ev_pf[l], N, e)))
			return rc;
	for (int l = 0; l < NL; l++) {
		if (!(st->w1[l] = wl_alloc(c, WSZ, &tot, e)) || !(st->b1[l] = wl_alloc(c, D, &tot, e)) ||
		    !(st->w2[l] = wl_alloc(c, WSZ, &tot, e)) || !(st->b2[l] = wl_alloc(c, D, &tot, e)) ||
		    !(st->gpu_param[l] = wl_alloc(c, WSZ, &tot, e)))
			return AORTA_EGPU;
		int last = l == NL - 1;
		if (last) {
			st->hw1_3 = malloc(WSZ * sizeof(float));
			st->hw2_3 = malloc(WSZ * sizeof(float));
			st->hb1_3 = malloc(D * sizeof(float));
			st->hb2_3 = malloc(D * sizeof(float));
			if (!st->hw1_3 || !st->hw2_3 || !st->hb1_3 || !st->hb2_3)
				return aorta_fail(e, AORTA_EINTERNAL, "", 0, -1, "out of memory");
		}
		if ((rc = wl_init_linear(c, st->w1[l], last ? st->hw1_3 : NULL, st->b1[l],
					 last ? st->hb1_3 : NULL, D, D, 10 + 4 * (uint64_t)l, e)) ||
		    (rc = wl_init_linear(c, st->w2[l], last ? st->hw2_3 : NULL, st->b2[l],
					 last ? st->hb2_3 : NULL, D, D, 12 + 4 * (uint64_t)l, e)))
			return rc;
	}
	for (int l = 0; l <= NL; l++)
		if (!(st->act[l] = wl_alloc(c, (size_t)BS * D, &tot, e)))
			return AORTA_EGPU;
	for (int l = 0; l < NL; l++)
		if (!(st->hid[l] = wl_alloc(c, (size_t)BS * D, &tot, e)))
			return AORTA_EGPU;
	if (!(st->dyb[0] = wl_alloc(c, (size_t)BS * D, &tot, e)) ||
	    !(st->dyb[1] = wl_alloc(c, (size_t)BS * D, &tot, e)) ||
	    !(st->dh = wl_alloc(c, (size_t)BS * D, &tot, e)) ||
	    !(st->ones = wl_alloc(c, (size_t)BS * D, &tot, e)))
		return AORTA_EGPU;
	for (int j = 0; j < st->ncomp; j++)
		if (!(st->part[j] = wl_alloc(c, NL * GSET, &tot, e)))
			return AORTA_EGPU;
	if (!(st->total = wl_alloc(c, NL * GSET, &tot, e)))
		return AORTA_EGPU;
	if ((rc = hwq_fill_random(c, st->act[0], NULL, (size_t)BS * D, -1.0f, 1.0f, 1, e)))
		return rc;
	wlk_fill(st->ones, 1.0f, (size_t)BS * D, (void *)c->streams[0]); /* d sum(out) / d out */
	GPU_CHECK(e, gpuStreamSynchronize(c->streams[0]));
	for (int l = 0; l < NL; l++) {
		if (!(st->cpu_param[l] = hwq_alloc_host(c, WSZ * sizeof(float), e)) ||
		    !(st->opt[l] = hwq_alloc_host(c, WSZ * sizeof(float), e)))
			return AORTA_EGPU;
		for (size_t i = 0; i < WSZ; i += 1024) /* contents unused: a cheap deterministic pattern */
			st->cpu_param[l][i] = (float)wl_ref_uniform(c->seed, 50 + (uint64_t)l, i);
		memset(st->opt[l], 0, WSZ * sizeof(float));
	}
	for (int k = 0; k < 2; k++)
		if (!(st->stage[k] = hwq_alloc_host(c, WSZ * sizeof(float), e)))
			return AORTA_EGPU;
	if (tot != hwq_mem_zero_offload(N))
		return aorta_fail(e, AORTA_EINTERNAL, "", 0, -1,
				  "zero_offload: allocated %llu bytes, hwq_mem says %llu",
				  (unsigned long long)tot, (unsigned long long)hwq_mem_zero_offload(N));
	/* per compute stream: 4 x (2+1+2) forward + 4 x (3+1+3) backward + ncomp-1
	 * reduction adds; copies only on the prefetch and offload streams */
	st->kern = (long long)st->ncomp * (NL * 12 + (st->ncomp > 1 ? st->ncomp - 1 : 0));
	return AORTA_OK;
}

static enum aorta_status run(void *vst, struct hwq_ctx *c, struct aorta_error *e)
{
	struct state *st = vst;
	void **s = (void **)c->streams;
	int t = st->t, c0 = 2 * t, N = c->nstreams;
	/* prefetch: layer l's copy split over the prefetch streams */
	for (int l = 0; l < NL; l++)
		for (int j = 0; j < t; j++) {
			int lo, hi;
			wl_split(D, t, j, &lo, &hi);
			size_t off = (size_t)lo * D, n = (size_t)(hi - lo) * D;
			wl_copy_async(st->gpu_param[l] + off, st->cpu_param[l] + off, n * sizeof(float), s[t + j]);
			wl_record(st->ev_pf[l][j], s[t + j]);
		}
	/* compute: rows split over the compute streams */
	for (int j = 0; j < st->ncomp; j++) {
		int si = c0 + j, r0, r1;
		gpu_ops_ctx *o = st->ops[si];
		float *g = st->part[j];
		wl_split(BS, st->ncomp, j, &r0, &r1);
		int n = r1 - r0;
		size_t ro = (size_t)r0 * D;
		GPU_CHECK(e, gpuMemsetAsync(g, 0, NL * GSET * sizeof(float), c->streams[si]));
		for (int l = 0; l < NL; l++) {
			for (int p = 0; p < t; p++)
				wl_wait(s[si], st->ev_pf[l][p]);
			gpu_linear_fwd(o, st->hid[l] + ro, st->act[l] + ro, st->w1[l], st->b1[l], n, D, D);
			wlk_relu(st->hid[l] + ro, st->hid[l] + ro, (size_t)n * D, s[si]);
			gpu_linear_fwd(o, st->act[l + 1] + ro, st->hid[l] + ro, st->w2[l], st->b2[l], n, D, D);
		}
		const float *dy = st->ones + ro;
		for (int l = NL - 1; l >= 0; l--) {
			float *dx = st->dyb[l & 1] + ro;
			gpu_linear_bwd(o, st->dh + ro, g + OW2(l), g + OB2(l), dy, st->hid[l] + ro, st->w2[l], n, D, D);
			wlk_relu_bwd(st->dh + ro, st->dh + ro, st->hid[l] + ro, (size_t)n * D, s[si]);
			gpu_linear_bwd(o, dx, g + OW1(l), g + OB1(l), st->dh + ro, st->act[l] + ro, st->w1[l], n, D, D);
			dy = dx;
		}
	}
	/* compute barrier, then each compute stream sums its slice of the partials */
	wl_barrier(s + c0, st->ev_c, st->ncomp);
	for (int j = 0; j < st->ncomp; j++) {
		int si = c0 + j, lo, hi;
		gpu_ops_ctx *o = st->ops[si];
		wl_split((int)(NL * GSET / 4), st->ncomp, j, &lo, &hi); /* in units of 4 floats */
		size_t a = (size_t)lo * 4, n = (size_t)(hi - lo) * 4;
		if (st->ncomp == 1)
			wl_copy_async(st->total + a, st->part[0] + a, n * sizeof(float), s[si]);
		else {
			gpu_add(o, st->total + a, st->part[0] + a, st->part[1] + a, n);
			for (int p = 2; p < st->ncomp; p++)
				gpu_add(o, st->total + a, st->total + a, st->part[p] + a, n);
		}
		wl_record(st->ev_c2[j], s[si]);
	}
	/* offload, layer by layer: copies split over the offload streams, then
	 * the host waits (upstream's synchronous grad.cpu()) and adds */
	for (int l = 0; l < NL; l++) {
		for (int k = 0; k < t; k++) {
			int lo, hi;
			wl_split(D, t, k, &lo, &hi);
			size_t off = (size_t)lo * D, n = (size_t)(hi - lo) * D * sizeof(float);
			if (l == 0)
				for (int j = 0; j < st->ncomp; j++)
					wl_wait(s[k], st->ev_c2[j]);
			wl_copy_async(st->stage[0] + off, st->total + OW1(l) + off, n, s[k]);
			wl_copy_async(st->stage[1] + off, st->total + OW2(l) + off, n, s[k]);
		}
		for (int k = 0; k < t; k++)
			GPU_CHECK(e, gpuStreamSynchronize(c->streams[k]));
		float *op = st->opt[l];
		const float *g1 = st->stage[0], *g2 = st->stage[1];
		for (size_t i = 0; i < WSZ; i++)
			op[i] += 0.01f * g1[i] + 0.01f * g2[i];
	}
	(void)N;
	st->runs++;
	return wl_ops_status(st->ops, c->nstreams, e);
}

static int check(void *vst, struct hwq_ctx *c, char *msg, size_t cap, struct aorta_error *e)
{
	struct state *st = vst;
	float *x = malloc((size_t)BS * D * sizeof(float)), *h = malloc((size_t)BS * D * sizeof(float));
	double *cs = calloc(D, sizeof(double)), *row = malloc(D * sizeof(double));
	struct wl_err ea = { 0 }, eg = { 0 };
	int ok = 0, orow[3] = { 0, 2047, 4095 };
	(void)c;
	if (!x || !h || !cs || !row) {
		snprintf(msg, cap, "out of memory");
		goto out;
	}
	if (wl_fetch(x, st->act[NL - 1], (size_t)BS * D * sizeof(float), e) ||
	    wl_fetch(h, st->hid[NL - 1], (size_t)BS * D * sizeof(float), e))
		goto out;
	for (int ri = 0; ri < 2; ri++) {
		int n = ri ? BS - 1 : 0;
		wl_ref_linear_row(row, x + (size_t)n * D, st->hw1_3, st->hb1_3, D, D);
		for (int j = 0; j < D; j++)
			wl_err_add(&ea, h[(size_t)n * D + j], row[j] > 0 ? row[j] : 0);
	}
	for (int p = 0; p < D; p++)
		for (int o = 0; o < D; o++)
			cs[o] += st->hw2_3[(size_t)p * D + o];
	for (int q = 0; q < 3; q++) {
		int o = orow[q];
		for (int j = 0; j < D; j++) {
			double g2 = 0, g1 = 0;
			for (int n = 0; n < BS; n++) {
				g2 += h[(size_t)n * D + j];
				if (h[(size_t)n * D + o] > 0)
					g1 += cs[o] * x[(size_t)n * D + j];
			}
			wl_err_add(&eg, st->opt[NL - 1][(size_t)o * D + j], (double)st->runs * 0.01 * (g1 + g2));
		}
	}
	double ra = wl_err_rel(&ea), rg = wl_err_rel(&eg);
	snprintf(msg, cap,
		 "layer 3 hidden rows 0, 15 vs CPU: max rel error %.3g; CPU optimizer state of layer 3 "
		 "(rows 0, 2047, 4095 after %lld iterations) vs %lld x 0.01 x (gW1 + gW2) from CPU "
		 "backprop: max error %.3g relative to max |value| %.3g",
		 ra, st->runs, st->runs, rg, eg.scale);
	ok = ra <= 1e-4 && rg <= 2e-4 && eg.scale > 0 && st->runs > 0;
out:
	free(x);
	free(h);
	free(cs);
	free(row);
	return ok;
}

static void teardown(void *vst, struct hwq_ctx *c)
{
	struct state *st = vst;
	wl_ops_destroy(st->ops, c->nstreams);
	wl_events_destroy(st->ev_c, c->nstreams);
	wl_events_destroy(st->ev_c2, c->nstreams);
	for (int l = 0; l < NL; l++)
		wl_events_destroy(st->ev_pf[l], c->nstreams);
	free(st->hw1_3);
	free(st->hw2_3);
	free(st->hb1_3);
	free(st->hb2_3);
}

const struct hwq_workload_ops hwq_wl_zero_offload = {
	.name = "zero_offload", .state_size = sizeof(struct state),
	.setup = setup, .run = run, .check = check, .teardown = teardown,
	.samples_per_iter = BS,
	.kern_offset = offsetof(struct state, kern),
};
