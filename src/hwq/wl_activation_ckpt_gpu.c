/*
 * wl_activation_ckpt_gpu.c - hwq workload "activation_ckpt": activation
 * checkpointing on 8 blocks x + fc2(relu(fc1(LayerNorm(x)))) (hidden 1024,
 * expansion 4), batch 4 x 512 tokens, a checkpoint every 2 blocks (4
 * segments).  The forward keeps only the checkpoints; the backward of
 * loss = sum(out), segment by segment from the last, recomputes the
 * segment's activations from its checkpoint and back-propagates through it
 * (gpu_linear_bwd, ReLU and LayerNorm backward: the input gradients, as
 * upstream's autograd.grad(..., ckpt)), chaining the gradient into the
 * previous segment.  Unit: samples/s, 4 samples per iteration.
 *
 * Streams (N = 4..12), t = max(1, N/3): forward [0, t), recompute [t, 2t),
 * gradient [2t, N).  The blocks are row-wise, so each role's streams split
 * the 2048 rows and keep their share through the whole iteration.  The
 * recompute streams start after every forward stream; recomputed
 * activations are double-buffered by segment parity, so recomputing
 * segment s overlaps the gradient of segment s+1, and waits (as upstream's
 * recompute_stream.wait_stream(gradient_stream)) for the gradient of
 * segment s+2, the last user of that parity's buffers.  The gradient
 * streams wait for every recompute stream of their segment.
 *
 * Check: rows 0 and 2047 on the CPU (double) through the 8 blocks and back:
 * the forward output, segment 0's recomputed block-0 output, and the
 * gradient with respect to the input.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "hwq/hwq_gpu.h"
#include "hwq/hwq_mem.h"
#include "hwq/wl_kernels_p123_gpu.h"
#include "kernels/ops.h"
#include "kernels/ops_gpu.h"

#define NBK 8
#define EVERY 2
#define NSEG (NBK / EVERY)
#define M 1024
#define F (4 * M)
#define R (4 * 512)
#define PL ((size_t)2 * M + (size_t)F * M + F + (size_t)M * F + M) /* one block's parameters */

struct blk {
	float *g, *b, *w1, *b1, *w2, *b2;
};

struct rec { /* recomputed activations of one segment (2 blocks) */
	float *mid;                          /* output of the first block [R][M] */
	float *h[EVERY], *mean[EVERY], *rstd[EVERY], *a[EVERY];
};

struct state {
	int t, ng;
	gpu_ops_ctx *ops[WL_MAX_STREAMS];
	void *ev_f[WL_MAX_STREAMS], *ev_r[NSEG][WL_MAX_STREAMS], *ev_g[NSEG][WL_MAX_STREAMS];
	struct blk w[NBK], hw[NBK];
	float *hp[NBK];
	float *x0, *hx0, *ck[NSEG + 1], *ftmp, *fh, *fmean, *frstd, *ff;
	struct rec rc[2];
	float *dy[2], *da, *dh, *ones, *dmid;
	long long kern;
};

static void carve(struct blk *b, float *p)
{
	b->g = p;
	b->b = p + M;
	b->w1 = b->b + M;
	b->b1 = b->w1 + (size_t)F * M;
	b->w2 = b->b1 + F;
	b->b2 = b->w2 + (size_t)M * F;
}

static enum aorta_status setup(void *vst, struct hwq_ctx *c, struct aorta_error *e)
{
	struct state *st = vst;
	enum aorta_status rc;
	uint64_t tot = 0;
	int N = c->nstreams;
	if (N < 4 || N > WL_MAX_STREAMS)
		return aorta_fail(e, AORTA_EINTERNAL, "", 0, -1, "activation_ckpt: %d streams", N);
	st->t = N / 3 > 1 ? N / 3 : 1;
	st->ng = N - 2 * st->t;
	if ((rc = wl_ops_create(c, st->ops, N, e)) || (rc = wl_events_create(st->ev_f, N, e)))
		return rc;
	for (int s = 0; s < NSEG; s++)
		if ((rc = wl_events_create(st->ev_r[s], N, e)) || (rc = wl_events_create(st->ev_g[s], N, e)))
			return rc;
	for (int l = 0; l < NBK; l++) {
		float *p = wl_alloc(c, PL, &tot, e);
		if (!p)
			return AORTA_EGPU;
		if (!(st->hp[l] = malloc(PL * sizeof(float))))
			return aorta_fail(e, AORTA_EINTERNAL, "", 0, -1, "out of memory");
		carve(&st->w[l], p);
		carve(&st->hw[l], st->hp[l]);
		uint64_t site = 10 + 8 * (uint64_t)l;
		if ((rc = hwq_fill_random(c, st->w[l].g, st->hw[l].g, M, 0.8f, 1.2f, site, e)) ||
		    (rc = hwq_fill_random(c, st->w[l].b, st->hw[l].b, M, -0.1f, 0.1f, site + 1, e)) ||
		    (rc = wl_init_linear(c, st->w[l].w1, st->hw[l].w1, st->w[l].b1, st->hw[l].b1, M, F, site + 2, e)) ||
		    (rc = wl_init_linear(c, st->w[l].w2, st->hw[l].w2, st->w[l].b2, st->hw[l].b2, F, M, site + 4, e)))
			return rc;
	}
	if (!(st->hx0 = malloc((size_t)R * M * sizeof(float))))
		return aorta_fail(e, AORTA_EINTERNAL, "", 0, -1, "out of memory");
	if (!(st->x0 = wl_alloc(c, (size_t)R * M, &tot, e)))
		return AORTA_EGPU;
	if ((rc = hwq_fill_random(c, st->x0, st->hx0, (size_t)R * M, -1.0f, 1.0f, 1, e)))
		return rc;
	st->ck[0] = st->x0;
	for (int s = 1; s <= NSEG; s++)
		if (!(st->ck[s] = wl_alloc(c, (size_t)R * M, &tot, e)))
			return AORTA_EGPU;
	if (!(st->ftmp = wl_alloc(c, (size_t)R * M, &tot, e)) || !(st->fh = wl_alloc(c, (size_t)R * M, &tot, e)) ||
	    !(st->fmean = wl_alloc(c, R, &tot, e)) || !(st->frstd = wl_alloc(c, R, &tot, e)) ||
	    !(st->ff = wl_alloc(c, (size_t)R * F, &tot, e)))
		return AORTA_EGPU;
	for (int p = 0; p < 2; p++) {
		struct rec *r = &st->rc[p];
		if (!(r->mid = wl_alloc(c, (size_t)R * M, &tot, e)))
			return AORTA_EGPU;
		for (int b = 0; b < EVERY; b++)
			if (!(r->h[b] = wl_alloc(c, (size_t)R * M, &tot, e)) || !(r->mean[b] = wl_alloc(c, R, &tot, e)) ||
			    !(r->rstd[b] = wl_alloc(c, R, &tot, e)) || !(r->a[b] = wl_alloc(c, (size_t)R * F, &tot, e)))
				return AORTA_EGPU;
	}
	if (!(st->dy[0] = wl_alloc(c, (size_t)R * M, &tot, e)) || !(st->dy[1] = wl_alloc(c, (size_t)R * M, &tot, e)) ||
	    !(st->da = wl_alloc(c, (size_t)R * F, &tot, e)) || !(st->dh = wl_alloc(c, (size_t)R * M, &tot, e)) ||
	    !(st->ones = wl_alloc(c, (size_t)R * M, &tot, e)) ||
	    !(st->dmid = wl_alloc(c, (size_t)R * M, &tot, e)))
		return AORTA_EGPU;
	wlk_fill(st->ones, 1.0f, (size_t)R * M, (void *)c->streams[0]); /* d sum(out) / d out */
	GPU_CHECK(e, gpuStreamSynchronize(c->streams[0]));
	if (tot != hwq_mem_activation_ckpt(N))
		return aorta_fail(e, AORTA_EINTERNAL, "", 0, -1,
				  "activation_ckpt: allocated %llu bytes, hwq_mem says %llu",
				  (unsigned long long)tot, (unsigned long long)hwq_mem_activation_ckpt(N));
	/* per block: forward and recompute LN + (GEMM + bias) + ReLU + (GEMM + bias)
	 * = 6 on each of their streams; gradient GEMM + ReLU' + GEMM + LN' + add = 5
	 * on each gradient stream (a cuBLAS GEMM counted as one launch) */
	st->kern = (long long)st->t * NBK * 6 * 2 + (long long)st->ng * NBK * 5;
	return AORTA_OK;
}

/* y = x + fc2(relu(fc1(LN(x)))) on rows [r0, r1), keeping h, mean, rstd, a */
static void block_fwd(gpu_ops_ctx *o, void *s, const struct blk *w, float *y, const float *x, float *h,
		      float *mean, float *rstd, float *a, int r0, int r1)
{
	int n = r1 - r0;
	size_t om = (size_t)r0 * M, of = (size_t)r0 * F;
	gpu_layernorm_fwd(o, h + om, mean + r0, rstd + r0, x + om, w->g, w->b, n, M, WL_LN_EPS);
	gpu_linear_fwd(o, a + of, h + om, w->w1, w->b1, n, M, F);
	wlk_relu(a + of, a + of, (size_t)n * F, s);
	wl_copy_async(y + om, x + om, (size_t)n * M * sizeof(float), s);
	gpu_linear_fwd_ex(o, y + om, a + of, w->w2, w->b2, n, F, M, 1.0f);
}

static enum aorta_status run(void *vst, struct hwq_ctx *c, struct aorta_error *e)
{
	struct state *st = vst;
	void **s = (void **)c->streams;
	int t = st->t, ng = st->ng;
	/* forward: checkpoints at the segment boundaries only */
	for (int j = 0; j < t; j++) {
		int r0, r1;
		wl_split(R, t, j, &r0, &r1);
		for (int b = 0; b < NBK; b++) {
			const float *x = b % EVERY ? st->ftmp : st->ck[b / EVERY];
			float *y = b % EVERY == EVERY - 1 ? st->ck[b / EVERY + 1] : st->ftmp;
			block_fwd(st->ops[j], s[j], &st->w[b], y, x, st->fh, st->fmean, st->frstd, st->ff, r0, r1);
		}
		wl_record(st->ev_f[j], s[j]);
	}
	for (int seg = NSEG - 1; seg >= 0; seg--) {
		struct rec *rc = &st->rc[seg & 1];
		/* recompute */
		for (int j = 0; j < t; j++) {
			int si = t + j, r0, r1;
			wl_split(R, t, j, &r0, &r1);
			if (seg == NSEG - 1)
				for (int i = 0; i < t; i++)
					wl_wait(s[si], st->ev_f[i]);
			if (seg + 2 < NSEG)
				for (int k = 0; k < ng; k++)
					wl_wait(s[si], st->ev_g[seg + 2][k]);
			int b0 = seg * EVERY;
			block_fwd(st->ops[si], s[si], &st->w[b0], rc->mid, st->ck[seg], rc->h[0], rc->mean[0], rc->rstd[0],
				  rc->a[0], r0, r1);
			/* the second block's output is the next checkpoint: the gradient does not need it,
			 * but the recompute is the full segment forward, as upstream's; it goes to ftmp,
			 * which only this role writes after the forward */
			block_fwd(st->ops[si], s[si], &st->w[b0 + 1], st->ftmp, rc->mid, rc->h[1], rc->mean[1],
				  rc->rstd[1], rc->a[1], r0, r1);
			wl_record(st->ev_r[seg][j], s[si]);
		}
		/* gradient of the segment, from the gradient at its output */
		for (int k = 0; k < ng; k++) {
			int si = 2 * t + k, r0, r1;
			wl_split(R, ng, k, &r0, &r1);
			int n = r1 - r0;
			size_t om = (size_t)r0 * M, of = (size_t)r0 * F;
			gpu_ops_ctx *o = st->ops[si];
			for (int j = 0; j < t; j++)
				wl_wait(s[si], st->ev_r[seg][j]);
			const float *dy = seg == NSEG - 1 ? st->ones : st->dy[(seg + 1) & 1];
			float *dx = st->dy[seg & 1];
			for (int bb = EVERY - 1; bb >= 0; bb--) {
				const struct blk *w = &st->w[seg * EVERY + bb];
				const float *xin = bb ? rc->mid : st->ck[seg];
				/* gradient at the block's input: dmid between the two blocks, dx at the checkpoint */
				float *out = bb ? st->dmid : dx;
				gpu_linear_bwd(o, st->da + of, NULL, NULL, dy + om, rc->a[bb] + of, w->w2, n, F, M);
				wlk_relu_bwd(st->da + of, st->da + of, rc->a[bb] + of, (size_t)n * F, s[si]);
				gpu_linear_bwd(o, st->dh + om, NULL, NULL, st->da + of, rc->h[bb] + om, w->w1, n, M, F);
				gpu_layernorm_bwd(o, out + om, NULL, NULL, st->dh + om, xin + om, rc->mean[bb] + r0,
						  rc->rstd[bb] + r0, w->g, n, M);
				gpu_add(o, out + om, out + om, dy + om, (size_t)n * M);
				dy = out;
			}
			wl_record(st->ev_g[seg][k], s[si]);
		}
	}
	return wl_ops_status(st->ops, c->nstreams, e);
}

/* CPU, one row, double: forward through the 8 blocks keeping what the
 * backward needs, then the input gradient of sum(out). */
static void row_ref(const struct state *st, int r, double *out, double *mid0, double *dx)
{
	static double x[NBK + 1][M], h[NBK][M], a[NBK][F], mean[NBK], rstd[NBK];
	static float hf[M], af[F];
	static double z[F], dy[M], da[F], dh[M], y[M];
	for (int i = 0; i < M; i++)
		x[0][i] = st->hx0[(size_t)r * M + i];
	for (int b = 0; b < NBK; b++) {
		const struct blk *w = &st->hw[b];
		double m = 0, v = 0;
		for (int i = 0; i < M; i++)
			m += x[b][i];
		m /= M;
		for (int i = 0; i < M; i++)
			v += (x[b][i] - m) * (x[b][i] - m);
		v /= M;
		mean[b] = m;
		rstd[b] = 1.0 / sqrt(v + WL_LN_EPS);
		for (int i = 0; i < M; i++) {
			h[b][i] = (x[b][i] - m) * rstd[b] * w->g[i] + w->b[i];
			hf[i] = (float)h[b][i];
		}
		wl_ref_linear_row(z, hf, w->w1, w->b1, M, F);
		for (int j = 0; j < F; j++) {
			a[b][j] = z[j] > 0 ? z[j] : 0;
			af[j] = (float)a[b][j];
		}
		wl_ref_linear_row(y, af, w->w2, w->b2, F, M);
		for (int i = 0; i < M; i++)
			x[b + 1][i] = x[b][i] + y[i];
	}
	memcpy(out, x[NBK], sizeof x[NBK]);
	memcpy(mid0, x[1], sizeof x[1]);
	for (int i = 0; i < M; i++)
		dy[i] = 1.0;
	for (int b = NBK - 1; b >= 0; b--) {
		const struct blk *w = &st->hw[b];
		for (int j = 0; j < F; j++) {
			double sacc = 0;
			if (a[b][j] > 0)
				for (int o = 0; o < M; o++)
					sacc += dy[o] * w->w2[(size_t)o * F + j];
			da[j] = sacc;
		}
		for (int i = 0; i < M; i++)
			dh[i] = 0;
		for (int j = 0; j < F; j++)
			if (da[j] != 0)
				for (int i = 0; i < M; i++)
					dh[i] += da[j] * w->w1[(size_t)j * M + i];
		double s1 = 0, s2 = 0;
		for (int i = 0; i < M; i++) {
			double xh = (x[b][i] - mean[b]) * rstd[b], d = dh[i] * w->g[i];
			s1 += d;
			s2 += d * xh;
		}
		s1 /= M;
		s2 /= M;
		for (int i = 0; i < M; i++) {
			double xh = (x[b][i] - mean[b]) * rstd[b];
			dy[i] += rstd[b] * (dh[i] * w->g[i] - s1 - xh * s2);
		}
	}
	memcpy(dx, dy, sizeof dy);
}

static int check(void *vst, struct hwq_ctx *c, char *msg, size_t cap, struct aorta_error *e)
{
	struct state *st = vst;
	static double out[M], mid[M], dx[M];
	static float g[M];
	struct wl_err ef = { 0 }, er = { 0 }, eg = { 0 };
	int rows[2] = { 0, R - 1 };
	(void)c;
	for (int q = 0; q < 2; q++) {
		int r = rows[q];
		row_ref(st, r, out, mid, dx);
		if (wl_fetch(g, st->ck[NSEG] + (size_t)r * M, sizeof g, e))
			return 0;
		for (int i = 0; i < M; i++)
			wl_err_add(&ef, g[i], out[i]);
		if (wl_fetch(g, st->rc[0].mid + (size_t)r * M, sizeof g, e))
			return 0;
		for (int i = 0; i < M; i++)
			wl_err_add(&er, g[i], mid[i]);
		if (wl_fetch(g, st->dy[0] + (size_t)r * M, sizeof g, e))
			return 0;
		for (int i = 0; i < M; i++)
			wl_err_add(&eg, g[i], dx[i]);
	}
	double rf = wl_err_rel(&ef), rr = wl_err_rel(&er), rg = wl_err_rel(&eg);
	snprintf(msg, cap,
		 "rows 0 and 2047 vs a double CPU pass through the 8 blocks: forward output max rel error "
		 "%.3g, recomputed block-0 output %.3g, input gradient of sum(out) %.3g (max |value| %.3g)",
		 rf, rr, rg, eg.scale);
	return rf <= 1e-4 && rr <= 1e-4 && rg <= 2e-4 && eg.scale > 0 && ef.scale > 0;
}

static void teardown(void *vst, struct hwq_ctx *c)
{
	struct state *st = vst;
	wl_ops_destroy(st->ops, c->nstreams);
	wl_events_destroy(st->ev_f, c->nstreams);
	for (int s = 0; s < NSEG; s++) {
		wl_events_destroy(st->ev_r[s], c->nstreams);
		wl_events_destroy(st->ev_g[s], c->nstreams);
	}
	for (int l = 0; l < NBK; l++)
		free(st->hp[l]);
	free(st->hx0);
}

const struct hwq_workload_ops hwq_wl_activation_ckpt = {
	.name = "activation_ckpt", .state_size = sizeof(struct state),
	.setup = setup, .run = run, .check = check, .teardown = teardown,
	.samples_per_iter = 4,
	.kern_offset = offsetof(struct state, kern),
};
