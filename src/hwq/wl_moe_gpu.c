/*
 * wl_moe_gpu.c - hwq workload "moe": a gating Linear(1024 -> 8, no bias),
 * softmax and top-2 (weights renormalised to sum 1), then 8 dense experts
 * fc2(gelu(fc1 x)) (1024 -> 4096 -> 1024, no bias) on all 4 x 512 tokens,
 * each output weighted by its routing weight (0 where the expert is not in
 * the token's top 2), and the sum of the 8.  Unit: tokens/s, 2048 tokens
 * per iteration.  As upstream, every expert runs on every token (a dense
 * simulation of dispatch; the all-to-all is not mocked at all here since
 * upstream has none).
 *
 * Streams (N = 4..32).  Stream 0 gates, then waits for every expert stream
 * and sums.  Streams 1..N-1 (ns = N-1) run the experts: with ns <= 8 the
 * experts go round-robin (expert x on stream 1 + x % ns); with ns > 8 each
 * expert's 2048 tokens are split into c = ceil(ns / 8) chunks and the 8c
 * (expert, chunk) items go round-robin, so every expert stream works.
 *
 * Check: (1) every token's two routing weights are positive, ordered and
 * sum to 1 (2048 tokens); (2) for tokens 0, 777, 1500 and 2047, the
 * routing (indices exactly, weights) and the combined output row against a
 * double-precision CPU gating + the two selected experts.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "hwq/hwq_gpu.h"
#include "hwq/hwq_mem.h"
#include "hwq/wl_kernels_p123_gpu.h"
#include "kernels/ops.h"

#define NE 8
#define TOPK 2
#define TOK (4 * 512)
#define D 1024
#define DF 4096

struct state {
	int ns, chunks;
	gpu_ops_ctx *ops[WL_MAX_STREAMS];
	void *ev[WL_MAX_STREAMS];
	float *x, *wg, *logits, *probs, *w, *w1[NE], *w2[NE], *h[NE], *y[NE], *comb;
	int32_t *idx;
	float *hx, *hwg, *hw1[NE], *hw2[NE];
	long long kern;
};

static enum aorta_status setup(void *vst, struct hwq_ctx *c, struct aorta_error *e)
{
	struct state *st = vst;
	enum aorta_status rc;
	uint64_t tot = 0;
	int N = c->nstreams;
	if (N < 4 || N > WL_MAX_STREAMS)
		return aorta_fail(e, AORTA_EINTERNAL, "", 0, -1, "moe: %d streams", N);
	st->ns = N - 1;
	st->chunks = (st->ns + NE - 1) / NE;
	st->kern = 3 + 4LL * NE * st->chunks + (NE - 1);
	if ((rc = wl_ops_create(c, st->ops, N, e)) || (rc = wl_events_create(st->ev, N, e)))
		return rc;
	st->hx = malloc((size_t)TOK * D * sizeof(float));
	st->hwg = malloc((size_t)NE * D * sizeof(float));
	if (!st->hx || !st->hwg)
		return aorta_fail(e, AORTA_EINTERNAL, "", 0, -1, "out of memory");
	if (!(st->x = wl_alloc(c, (size_t)TOK * D, &tot, e)) ||
	    !(st->wg = wl_alloc(c, (size_t)NE * D, &tot, e)) ||
	    !(st->logits = wl_alloc(c, (size_t)TOK * NE, &tot, e)) ||
	    !(st->probs = wl_alloc(c, (size_t)TOK * NE, &tot, e)) ||
	    !(st->w = wl_alloc(c, (size_t)TOK * TOPK, &tot, e)) ||
	    !(st->idx = (int32_t *)wl_alloc(c, (size_t)TOK * TOPK, &tot, e)))
		return AORTA_EGPU;
	if ((rc = hwq_fill_random(c, st->x, st->hx, (size_t)TOK * D, -1.0f, 1.0f, 1, e)) ||
	    (rc = wl_init_linear(c, st->wg, st->hwg, NULL, NULL, D, NE, 2, e)))
		return rc;
	for (int x = 0; x < NE; x++) {
		st->hw1[x] = malloc((size_t)DF * D * sizeof(float));
		st->hw2[x] = malloc((size_t)D * DF * sizeof(float));
		if (!st->hw1[x] || !st->hw2[x])
			return aorta_fail(e, AORTA_EINTERNAL, "", 0, -1, "out of memory");
		if (!(st->w1[x] = wl_alloc(c, (size_t)DF * D, &tot, e)) ||
		    !(st->w2[x] = wl_alloc(c, (size_t)D * DF, &tot, e)) ||
		    !(st->h[x] = wl_alloc(c, (size_t)TOK * DF, &tot, e)) ||
		    !(st->y[x] = wl_alloc(c, (size_t)TOK * D, &tot, e)))
			return AORTA_EGPU;
		if ((rc = wl_init_linear(c, st->w1[x], st->hw1[x], NULL, NULL, D, DF, 10 + 4 * (uint64_t)x, e)) ||
		    (rc = wl_init_linear(c, st->w2[x], st->hw2[x], NULL, NULL, DF, D, 12 + 4 * (uint64_t)x, e)))
			return rc;
	}
	if (!(st->comb = wl_alloc(c, (size_t)TOK * D, &tot, e)))
		return AORTA_EGPU;
	if (tot != hwq_mem_moe(N))
		return aorta_fail(e, AORTA_EINTERNAL, "", 0, -1, "moe: allocated %llu bytes, hwq_mem says %llu",
				  (unsigned long long)tot, (unsigned long long)hwq_mem_moe(N));
	return AORTA_OK;
}

static enum aorta_status run(void *vst, struct hwq_ctx *c, struct aorta_error *e)
{
	struct state *st = vst;
	void **s = (void **)c->streams;
	int items = NE * st->chunks;
	/* stream 0: gating */
	gpu_linear_fwd(st->ops[0], st->logits, st->x, st->wg, NULL, TOK, D, NE);
	wlk_softmax_rows(st->probs, st->logits, TOK, NE, s[0]);
	wlk_topk_rows(st->w, st->idx, st->probs, TOK, NE, TOPK, 1, s[0]);
	wl_record(st->ev[0], s[0]);
	for (int i = 1; i <= st->ns; i++)
		wl_wait(s[i], st->ev[0]);
	/* experts: item it = (expert it / chunks, token chunk it % chunks) */
	for (int it = 0; it < items; it++) {
		int x = it / st->chunks, ch = it % st->chunks, si = 1 + it % st->ns, t0, t1;
		gpu_ops_ctx *o = st->ops[si];
		wl_split(TOK, st->chunks, ch, &t0, &t1);
		int n = t1 - t0;
		float *h = st->h[x] + (size_t)t0 * DF, *y = st->y[x] + (size_t)t0 * D;
		gpu_linear_fwd(o, h, st->x + (size_t)t0 * D, st->w1[x], NULL, n, D, DF);
		gpu_gelu_fwd(o, h, h, (size_t)n * DF);
		gpu_linear_fwd(o, y, h, st->w2[x], NULL, n, DF, D);
		wlk_moe_weight(st->y[x], st->y[x], st->w, st->idx, x, TOPK, t0, t1, D, s[si]);
	}
	/* stream 0: combine */
	for (int i = 1; i <= st->ns; i++) {
		wl_record(st->ev[i], s[i]);
		wl_wait(s[0], st->ev[i]);
	}
	gpu_add(st->ops[0], st->comb, st->y[0], st->y[1], (size_t)TOK * D);
	for (int x = 2; x < NE; x++)
		gpu_add(st->ops[0], st->comb, st->comb, st->y[x], (size_t)TOK * D);
	return wl_ops_status(st->ops, c->nstreams, e);
}

static int check(void *vst, struct hwq_ctx *c, char *msg, size_t cap, struct aorta_error *e)
{
	struct state *st = vst;
	static float gw[TOK * TOPK], gy[D], hf[DF];
	static int32_t gi[TOK * TOPK];
	static double lg[NE], h[DF], o[D], want[D];
	int toks[4] = { 0, 777, 1500, TOK - 1 }, bad_inv = 0, bad_idx = 0;
	struct wl_err ew = { 0 }, ey = { 0 };
	(void)c;
	if (wl_fetch(gw, st->w, sizeof gw, e) || wl_fetch(gi, st->idx, sizeof gi, e))
		return 0;
	for (int t = 0; t < TOK; t++) {
		float a = gw[2 * t], b = gw[2 * t + 1];
		if (!(b > 0 && a >= b && fabs(a + b - 1.0) < 1e-5) || gi[2 * t] == gi[2 * t + 1])
			bad_inv++;
	}
	for (int ti = 0; ti < 4; ti++) {
		int t = toks[ti];
		const float *xr = st->hx + (size_t)t * D;
		float lf[NE], pf[NE], wv[TOPK];
		int32_t iv[TOPK];
		wl_ref_linear_row(lg, xr, st->hwg, NULL, D, NE);
		for (int j = 0; j < NE; j++)
			lf[j] = (float)lg[j];
		wl_ref_softmax_rows(pf, lf, 1, NE);
		wl_ref_topk_rows(wv, iv, pf, 1, NE, TOPK, 1);
		for (int k = 0; k < TOPK; k++) {
			if (iv[k] != gi[2 * t + k])
				bad_idx++;
			wl_err_add(&ew, gw[2 * t + k], wv[k]);
		}
		for (int j = 0; j < D; j++)
			want[j] = 0.0;
		for (int k = 0; k < TOPK; k++) {
			int x = iv[k];
			wl_ref_linear_row(h, xr, st->hw1[x], NULL, D, DF);
			for (int j = 0; j < DF; j++)
				hf[j] = (float)(0.5 * h[j] * (1.0 + erf(h[j] / sqrt(2.0))));
			wl_ref_linear_row(o, hf, st->hw2[x], NULL, DF, D);
			for (int j = 0; j < D; j++)
				want[j] += wv[k] * o[j];
		}
		if (wl_fetch(gy, st->comb + (size_t)t * D, sizeof gy, e))
			return 0;
		for (int j = 0; j < D; j++)
			wl_err_add(&ey, gy[j], want[j]);
	}
	double rw = wl_err_rel(&ew), ry = wl_err_rel(&ey);
	snprintf(msg, cap,
		 "routing invariants on %d tokens: %d bad; tokens 0/777/1500/2047 vs CPU: %d index "
		 "mismatches, weights max rel error %.3g, combined output max error %.3g relative "
		 "to max |value| %.3g",
		 TOK, bad_inv, bad_idx, rw, ry, ey.scale);
	return !bad_inv && !bad_idx && rw <= 1e-4 && ry <= 1e-4 && ey.scale > 0;
}

static void teardown(void *vst, struct hwq_ctx *c)
{
	struct state *st = vst;
	wl_ops_destroy(st->ops, c->nstreams);
	wl_events_destroy(st->ev, c->nstreams);
	free(st->hx);
	free(st->hwg);
	for (int x = 0; x < NE; x++) {
		free(st->hw1[x]);
		free(st->hw2[x]);
	}
}

const struct hwq_workload_ops hwq_wl_moe = {
	.name = "moe", .state_size = sizeof(struct state),
	.setup = setup, .run = run, .check = check, .teardown = teardown,
	.samples_per_iter = TOK,
	.kern_offset = offsetof(struct state, kern),
};
