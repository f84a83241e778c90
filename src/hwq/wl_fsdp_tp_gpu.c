/*
 * wl_fsdp_tp_gpu.c - hwq workload "fsdp_tp": FSDP + tensor parallelism's
 * stream pattern on one GPU, upstream's "small" preset: 4 pre-LN
 * transformer blocks (hidden 512, 8 heads, GELU MLP 2048), batch 8 x 512
 * tokens.  Per layer an all-gather of the layer's 512 x 512 shard into
 * eight copies (upstream's repeat(8, 1): a 4096 x 512 buffer) that the
 * layer waits for; the forward; then the gradient of sum(out) with respect
 * to the input (upstream's autograd.grad: a real backward through every
 * block, input gradient only); and an all-reduce of a 512 x 512 gradient
 * buffer.  Unit: samples/s, 8 samples per GPU and iteration.
 *
 * Collectives.  A distributed workload: the harness runs one rank per
 * visible GPU (threads), every rank with the same seed, so every rank has
 * the same inputs.
 *  - world 1: local mocks, as upstream: the all-gather is device copies of
 *    the shard, the all-reduce a scale by 1.0 (clone * 1.0).
 *  - world W > 1: real NCCL on the job's communicator (ctx->nccl), fp32.
 *    All-gather: ncclAllGather of the whole shard (one copy per rank)
 *    fills W consecutive copies, so G = 8 / W calls (integer division)
 *    fill the first G * W copies, and the 8 - G * W left (only when W does
 *    not divide 8: W = 3, 5, 6, 7) are local device copies of the shard.
 *    W > 8 is refused in setup (the gathered tensor holds 8 copies).  The
 *    G calls of a layer are split over the all-gather streams (wl_split);
 *    at W >= 4 with more all-gather streams than calls, the extra streams
 *    carry no all-gather work.  All-reduce: ncclAllReduce (sum) of each
 *    all-reduce stream's slice of the buffer, one call per stream.  With
 *    identical inputs the gathered buffer equals the mock's copies and the
 *    reduced buffer is W x the local one.
 *  - NCCL runs the calls of one communicator one after another, whatever
 *    the stream (it chains each call after the previous one), so every
 *    rank must issue them in the same order: run() issues them in a fixed
 *    order (layer, then all-gather stream, then call; then the all-reduce
 *    streams), the same on every rank, and no NCCL call waits for an event
 *    of a later one.
 *  - The TP point-to-point exchange stays a local mock at every world
 *    size: a copy of each layer's output rows into a receive buffer.
 *
 * Streams (N = 4..16), q = max(1, N/4): compute [0, q), all-gather
 * [q, 2q), all-reduce [2q, 3q), point-to-point [3q, N).
 *  - all-gather: layer l's 8 copies (world 1) or G NCCL calls (world > 1)
 *    are split over the all-gather streams, each recording ev_ag[l][j];
 *    every compute stream waits for all of them before layer l.
 *  - compute: the 4096 rows are split over the compute streams; forward per
 *    layer: phase A (LN1, QKV) on own rows, event join, phase B (attention
 *    of own queries over all keys, saving probabilities; projection,
 *    residual, LN2, MLP, residual).  Backward per layer (reverse): own rows
 *    through MLP, LN2, projection and attention pass A (dS, dQ), event
 *    join, attention pass B (dK, dV of own key rows), QKV and LN1, giving
 *    the input gradient.  Buffers read across rows (dS, dO of attention)
 *    are double-buffered by layer parity.
 *  - all-reduce: the buffer split over the all-reduce streams; like
 *    upstream it does not wait for the backward.
 *  - point-to-point: after each forward layer, each waits for every compute
 *    stream and copies its share of the layer output.
 *
 * Check: layer 0's forward at rows 0 and 4095 (wl_ref_block_row), and its
 * backward at the same rows step by step from the GPU's saved tensors
 * (MLP + LN2 backward, projection backward, attention pass A (dS row, dQ)
 * and pass B (dK, dV), QKV + LN1 backward) against double CPU
 * references; every layer's 8 gathered copies equal the shard exactly
 * (the buffer starts zeroed, so each copy was written by the all-gather
 * or its local copy); the reduced buffer equals W x the gradient buffer
 * (exactly when W is a power of two; else within 1e-6 relative, the
 * rounding of summing W equal values).
 */
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/nccl_comm.h"
#include "hwq/hwq_gpu.h"
#include "hwq/hwq_mem.h"
#include "hwq/wl_kernels_p123_gpu.h"
#include "kernels/ops.h"
#include "kernels/ops_gpu.h"

#define NL 4
#define M 512
#define NH 8
#define HD (M / NH)
#define F (4 * M)
#define BT 8
#define T 512
#define NR (BT * T)
#define REP 8
#define PSZ ((size_t)BT * NH * T * T)
#define FLAGS (WL_BLOCK_PRE_LN | WL_BLOCK_FF | WL_BLOCK_GELU)

struct layer_act {
	float *h1, *m1, *s1, *qkv, *p, *att, *x1, *h2, *m2, *s2, *z, *f, *out;
};

struct state {
	int q, np2p;
	int ng, nloc; /* world > 1: all-gather calls per layer, copies made locally */
	gpu_ops_ctx *ops[WL_MAX_STREAMS];
	void *evc[WL_MAX_STREAMS], *ev_ag[NL][WL_MAX_STREAMS], *ev_lay[NL][WL_MAX_STREAMS];
	struct wl_block w[NL], hw;
	float *hwp;
	float *x0, *shard[NL], *gath[NL], *gbuf, *red, *recv[NL], *ones;
	struct layer_act a[NL];
	float *dX[2], *df, *dz, *dh2, *dx1, *datt[2], *dS[2], *dqkv, *dh1;
	long long kern;
};

static enum aorta_status setup(void *vst, struct hwq_ctx *c, struct aorta_error *e)
{
	struct state *st = vst;
	enum aorta_status rc;
	uint64_t tot = 0;
	int N = c->nstreams;
	if (N < 4 || N > WL_MAX_STREAMS)
		return aorta_fail(e, AORTA_EINTERNAL, "", 0, -1, "fsdp_tp: %d streams", N);
	st->q = N / 4 > 1 ? N / 4 : 1;
	st->np2p = N - 3 * st->q;
	if (c->world > 1) {
		if (!c->nccl)
			return aorta_fail(e, AORTA_EINTERNAL, "", 0, -1, "fsdp_tp: the harness gave no NCCL comm");
		if (c->world > REP)
			return aorta_fail(e, AORTA_EUSAGE, "", 0, -1,
					  "fsdp_tp: world %d: the gathered tensor holds %d shard copies, so at most "
					  "%d ranks (use --world 1)", c->world, REP, REP);
		st->ng = REP / c->world;
		st->nloc = REP - st->ng * c->world;
	}
	if ((rc = wl_ops_create(c, st->ops, N, e)) || (rc = wl_events_create(st->evc, N, e)))
		return rc;
	for (int l = 0; l < NL; l++)
		if ((rc = wl_events_create(st->ev_ag[l], N, e)) || (rc = wl_events_create(st->ev_lay[l], N, e)))
			return rc;
	if ((rc = wl_layers_alloc(c, st->w, NL, M, F, &st->hwp, &st->hw, 0, 100, &tot, e)))
		return rc;
	if (!(st->x0 = wl_alloc(c, (size_t)NR * M, &tot, e)) ||
	    !(st->gbuf = wl_alloc(c, (size_t)M * M, &tot, e)) ||
	    !(st->red = wl_alloc(c, (size_t)M * M, &tot, e)) ||
	    !(st->ones = wl_alloc(c, (size_t)NR * M, &tot, e)))
		return AORTA_EGPU;
	if ((rc = hwq_fill_random(c, st->x0, NULL, (size_t)NR * M, -1.0f, 1.0f, 1, e)) ||
	    (rc = hwq_fill_random(c, st->gbuf, NULL, (size_t)M * M, -1.0f, 1.0f, 2, e)))
		return rc;
	for (int l = 0; l < NL; l++) {
		struct layer_act *a = &st->a[l];
		if (!(st->shard[l] = wl_alloc(c, (size_t)M * M, &tot, e)) ||
		    !(st->gath[l] = wl_alloc(c, (size_t)REP * M * M, &tot, e)) ||
		    !(st->recv[l] = wl_alloc(c, (size_t)NR * M, &tot, e)))
			return AORTA_EGPU;
		if ((rc = hwq_fill_random(c, st->shard[l], NULL, (size_t)M * M, -1.0f, 1.0f, 10 + (uint64_t)l, e)))
			return rc;
		float **p[] = { &a->h1, &a->att, &a->x1, &a->h2, &a->out };
		for (size_t i = 0; i < sizeof p / sizeof p[0]; i++)
			if (!(*p[i] = wl_alloc(c, (size_t)NR * M, &tot, e)))
				return AORTA_EGPU;
		if (!(a->m1 = wl_alloc(c, NR, &tot, e)) || !(a->s1 = wl_alloc(c, NR, &tot, e)) ||
		    !(a->m2 = wl_alloc(c, NR, &tot, e)) || !(a->s2 = wl_alloc(c, NR, &tot, e)) ||
		    !(a->qkv = wl_alloc(c, (size_t)NR * 3 * M, &tot, e)) || !(a->p = wl_alloc(c, PSZ, &tot, e)) ||
		    !(a->z = wl_alloc(c, (size_t)NR * F, &tot, e)) || !(a->f = wl_alloc(c, (size_t)NR * F, &tot, e)))
			return AORTA_EGPU;
	}
	for (int k = 0; k < 2; k++)
		if (!(st->dX[k] = wl_alloc(c, (size_t)NR * M, &tot, e)) ||
		    !(st->datt[k] = wl_alloc(c, (size_t)NR * M, &tot, e)) || !(st->dS[k] = wl_alloc(c, PSZ, &tot, e)))
			return AORTA_EGPU;
	if (!(st->df = wl_alloc(c, (size_t)NR * F, &tot, e)) || !(st->dz = wl_alloc(c, (size_t)NR * F, &tot, e)) ||
	    !(st->dh2 = wl_alloc(c, (size_t)NR * M, &tot, e)) ||
	    !(st->dx1 = wl_alloc(c, (size_t)NR * M, &tot, e)) ||
	    !(st->dqkv = wl_alloc(c, (size_t)NR * 3 * M, &tot, e)) ||
	    !(st->dh1 = wl_alloc(c, (size_t)NR * M, &tot, e)))
		return AORTA_EGPU;
	wlk_fill(st->ones, 1.0f, (size_t)NR * M, (void *)c->streams[0]); /* d sum(out) / d out */
	GPU_CHECK(e, gpuStreamSynchronize(c->streams[0]));
	/* launches as run() counts them: all-reduce 1 per stream of its role
	 * (a scale kernel, or one NCCL call); world > 1: G all-gather calls
	 * per layer (copies are not counted); per layer and compute stream:
	 * forward 3 + 9, backward 7 + 4 */
	st->kern = st->q + (long long)NL * st->ng + (long long)NL * st->q * (3 + 9 + 7 + 4);
	if (tot != hwq_mem_fsdp_tp(N))
		return aorta_fail(e, AORTA_EINTERNAL, "", 0, -1, "fsdp_tp: allocated %llu bytes, hwq_mem says %llu",
				  (unsigned long long)tot, (unsigned long long)hwq_mem_fsdp_tp(N));
	return AORTA_OK;
}

/* world > 1: layer l's G all-gather calls and local copies, split over
 * the all-gather streams; call g fills copies [g W, (g + 1) W) */
static enum aorta_status gather_nccl(struct state *st, struct hwq_ctx *c, void **s, int l,
				     struct aorta_error *e)
{
	int q = st->q, W = c->world;
	size_t mm = (size_t)M * M;
	for (int j = 0; j < q; j++) {
		int lo, hi;
		wl_split(st->ng, q, j, &lo, &hi);
		for (int g = lo; g < hi; g++) {
			if (GPU_NCCL(e, c->nccl, ncclAllGather(st->shard[l], st->gath[l] + (size_t)g * W * mm, mm,
							      ncclFloat, (ncclComm_t)c->nccl, (gpuStream_t)s[q + j])))
				return gpu_error_rank(e, AORTA_EGPU, c->rank);
		}
		wl_split(st->nloc, q, j, &lo, &hi);
		for (int r = lo; r < hi; r++)
			wl_copy_async(st->gath[l] + ((size_t)st->ng * W + r) * mm, st->shard[l], mm * sizeof(float),
				      s[q + j]);
		wl_record(st->ev_ag[l][j], s[q + j]);
	}
	return AORTA_OK;
}

/* The backward of sum(out) to the input, on the q streams of the compute
 * role; returns the kernels it launched. */
static long long backward(struct state *st, void **s, int q)
{
	long long k = 0;
	for (int l = NL - 1; l >= 0; l--) {
		const struct wl_block *w = &st->w[l];
		struct layer_act *a = &st->a[l];
		const float *x = l ? st->a[l - 1].out : st->x0;
		const float *dy = l == NL - 1 ? st->ones : st->dX[(l + 1) & 1];
		float *datt = st->datt[l & 1], *dS = st->dS[l & 1];
		for (int i = 0; i < q; i++) {
			int r0, r1;
			wl_split(NR, q, i, &r0, &r1);
			int n = r1 - r0;
			size_t o = (size_t)r0 * M, of = (size_t)r0 * F;
			gpu_ops_ctx *op = st->ops[i];
			gpu_linear_bwd(op, st->df + of, NULL, NULL, dy + o, a->f + of, w->w2, n, F, M);
			gpu_gelu_bwd(op, st->dz + of, st->df + of, a->z + of, (size_t)n * F);
			gpu_linear_bwd(op, st->dh2 + o, NULL, NULL, st->dz + of, a->h2 + o, w->w1, n, M, F);
			gpu_layernorm_bwd(op, st->dx1 + o, NULL, NULL, st->dh2 + o, a->x1 + o, a->m2 + r0, a->s2 + r0,
					  w->ln2_g, n, M);
			gpu_add(op, st->dx1 + o, st->dx1 + o, dy + o, (size_t)n * M);
			gpu_linear_bwd(op, datt + o, NULL, NULL, st->dx1 + o, a->att + o, w->wo, n, M, M);
			wlk_attention_bwd_a(st->dqkv, dS, datt, a->qkv, a->p, T, M, NH, r0, r1, s[i]);
			k += 7;
		}
		wl_barrier(s, st->evc, q);
		for (int i = 0; i < q; i++) {
			int r0, r1;
			wl_split(NR, q, i, &r0, &r1);
			int n = r1 - r0;
			size_t o = (size_t)r0 * M;
			gpu_ops_ctx *op = st->ops[i];
			float *dx = st->dX[l & 1];
			wlk_attention_bwd_b(st->dqkv, dS, datt, a->qkv, a->p, T, M, NH, r0, r1, s[i]);
			gpu_linear_bwd(op, st->dh1 + o, NULL, NULL, st->dqkv + (size_t)r0 * 3 * M, a->h1 + o, w->wqkv, n,
				       M, 3 * M);
			gpu_layernorm_bwd(op, dx + o, NULL, NULL, st->dh1 + o, x + o, a->m1 + r0, a->s1 + r0, w->ln1_g,
					  n, M);
			gpu_add(op, dx + o, dx + o, st->dx1 + o, (size_t)n * M);
			k += 4;
		}
	}
	return k;
}

static enum aorta_status run(void *vst, struct hwq_ctx *c, struct aorta_error *e)
{
	struct state *st = vst;
	void **s = (void **)c->streams;
	int q = st->q, N = c->nstreams;
	long long k = 0;
	size_t msz = (size_t)M * M * sizeof(float);
	enum aorta_status rc;
	/* all-gather of every layer's shard: world 1, copies split over the
	 * role (the mock); else NCCL, in the same order on every rank */
	for (int l = 0; l < NL; l++) {
		if (c->world > 1) {
			if ((rc = gather_nccl(st, c, s, l, e)))
				return rc;
			k += st->ng;
			continue;
		}
		for (int j = 0; j < q; j++) {
			int lo, hi;
			wl_split(REP, q, j, &lo, &hi);
			for (int r = lo; r < hi; r++)
				wl_copy_async(st->gath[l] + (size_t)r * M * M, st->shard[l], msz, s[q + j]);
			wl_record(st->ev_ag[l][j], s[q + j]);
		}
	}
	/* all-reduce of the gradient buffer, one slice per stream of the
	 * role, not ordered after the backward, as upstream: world 1, clone *
	 * 1.0 (the mock); else ncclAllReduce (sum) */
	for (int j = 0; j < q; j++) {
		int lo, hi;
		wl_split(M * M, q, j, &lo, &hi);
		if (c->world > 1) {
			if (GPU_NCCL(e, c->nccl, ncclAllReduce(st->gbuf + lo, st->red + lo, (size_t)(hi - lo), ncclFloat,
							      ncclSum, (ncclComm_t)c->nccl, (gpuStream_t)s[2 * q + j])))
				return gpu_error_rank(e, AORTA_EGPU, c->rank);
		} else {
			wlk_scale(st->red + lo, st->gbuf + lo, 1.0f, (size_t)(hi - lo), s[2 * q + j]);
		}
		k++;
	}
	/* forward */
	for (int l = 0; l < NL; l++) {
		const struct wl_block *w = &st->w[l];
		struct layer_act *a = &st->a[l];
		const float *x = l ? st->a[l - 1].out : st->x0;
		for (int i = 0; i < q; i++) {
			int r0, r1;
			wl_split(NR, q, i, &r0, &r1);
			int n = r1 - r0;
			for (int j = 0; j < q; j++)
				wl_wait(s[i], st->ev_ag[l][j]);
			gpu_layernorm_fwd(st->ops[i], a->h1 + (size_t)r0 * M, a->m1 + r0, a->s1 + r0, x + (size_t)r0 * M,
					  w->ln1_g, w->ln1_b, n, M, WL_LN_EPS);
			gpu_linear_fwd(st->ops[i], a->qkv + (size_t)r0 * 3 * M, a->h1 + (size_t)r0 * M, w->wqkv, w->bqkv,
				       n, M, 3 * M);
			k += 3;
		}
		wl_barrier(s, st->evc, q);
		for (int i = 0; i < q; i++) {
			int r0, r1;
			wl_split(NR, q, i, &r0, &r1);
			int n = r1 - r0;
			size_t o = (size_t)r0 * M, of = (size_t)r0 * F, bytes = (size_t)n * M * sizeof(float);
			gpu_ops_ctx *op = st->ops[i];
			wlk_attention_rows(a->att, a->p, a->qkv, T, M, NH, r0, r1, s[i]);
			wl_copy_async(a->x1 + o, x + o, bytes, s[i]);
			gpu_linear_fwd_ex(op, a->x1 + o, a->att + o, w->wo, w->bo, n, M, M, 1.0f);
			gpu_layernorm_fwd(op, a->h2 + o, a->m2 + r0, a->s2 + r0, a->x1 + o, w->ln2_g, w->ln2_b, n, M,
					  WL_LN_EPS);
			gpu_linear_fwd(op, a->z + of, a->h2 + o, w->w1, w->b1, n, M, F);
			gpu_gelu_fwd(op, a->f + of, a->z + of, (size_t)n * F);
			wl_copy_async(a->out + o, a->x1 + o, bytes, s[i]);
			gpu_linear_fwd_ex(op, a->out + o, a->f + of, w->w2, w->b2, n, F, M, 1.0f);
			wl_record(st->ev_lay[l][i], s[i]);
			k += 9;
		}
		/* mock TP exchange of the layer output */
		for (int j = 0; j < st->np2p; j++) {
			int si = 3 * q + j, r0, r1;
			for (int i = 0; i < q; i++)
				wl_wait(s[si], st->ev_lay[l][i]);
			wl_split(NR, st->np2p, j, &r0, &r1);
			wl_copy_async(st->recv[l] + (size_t)r0 * M, a->out + (size_t)r0 * M,
				      (size_t)(r1 - r0) * M * sizeof(float), s[si]);
		}
	}
	k += backward(st, s, q); /* of sum(out) to the input */
	(void)N;
	(void)k; /* equals st->kern, computed in setup */
	return wl_ops_status(st->ops, c->nstreams, e);
}

/* LayerNorm backward of one row (g scale, no parameter grads), double */
static void ln_bwd_row(double *dx, const double *dy, const float *x, const float *g, int n)
{
	double m = 0, v = 0, a = 0, b = 0;
	for (int i = 0; i < n; i++)
		m += x[i];
	m /= n;
	for (int i = 0; i < n; i++)
		v += (x[i] - m) * (x[i] - m);
	v /= n;
	double rs = 1.0 / sqrt(v + WL_LN_EPS);
	for (int i = 0; i < n; i++) {
		double xh = (x[i] - m) * rs, d = dy[i] * g[i];
		a += d;
		b += d * xh;
	}
	a /= n;
	b /= n;
	for (int i = 0; i < n; i++)
		dx[i] = rs * (dy[i] * g[i] - a - (x[i] - m) * rs * b);
}

static double gelu_d(double z)
{
	return 0.5 * (1.0 + erf(z / sqrt(2.0))) + z * exp(-0.5 * z * z) / sqrt(2.0 * 3.14159265358979323846);
}

struct fetched {
	float *x, *x1, *z, *dy, *dx1, *datt, *dS, *p, *qkv, *dqkv, *dx;
};

/* one row's backward scratch: per call, not static, since the ranks of a
 * distributed run are threads that check at the same time */
struct bwd_scratch {
	double df[F], dz[F], dh[M], dx1[M], dq[3 * M], dP[T], dSr[T];
};

static int check_bwd_row(struct state *st, struct fetched *g, int r, struct wl_err *eb, struct bwd_scratch *sc)
{
	const struct wl_block *w = &st->hw;
	double *df = sc->df, *dz = sc->dz, *dh = sc->dh, *dx1 = sc->dx1, *dq = sc->dq, *dP = sc->dP, *dSr = sc->dSr;
	double scale = 1.0 / sqrt((double)HD);
	int b = r / T, t = r % T;
	/* MLP + LN2 backward, from the GPU's dy */
	for (int j = 0; j < F; j++) {
		double sacc = 0;
		for (int o = 0; o < M; o++)
			sacc += (double)g->dy[(size_t)r * M + o] * w->w2[(size_t)o * F + j];
		df[j] = sacc;
		dz[j] = sacc * gelu_d(g->z[(size_t)r * F + j]);
	}
	for (int i = 0; i < M; i++) {
		double sacc = 0;
		for (int j = 0; j < F; j++)
			sacc += dz[j] * w->w1[(size_t)j * M + i];
		dh[i] = sacc;
	}
	ln_bwd_row(dx1, dh, g->x1 + (size_t)r * M, w->ln2_g, M);
	for (int i = 0; i < M; i++) {
		dx1[i] += g->dy[(size_t)r * M + i];
		wl_err_add(eb, g->dx1[(size_t)r * M + i], dx1[i]);
	}
	/* projection backward from the GPU's dx1 */
	for (int i = 0; i < M; i++) {
		double sacc = 0;
		for (int o = 0; o < M; o++)
			sacc += (double)g->dx1[(size_t)r * M + o] * w->wo[(size_t)o * M + i];
		wl_err_add(eb, g->datt[(size_t)r * M + i], sacc);
	}
	/* attention pass A (dS row, dQ) and pass B (dK, dV) from the GPU's tensors */
	size_t ld = 3 * (size_t)M;
	for (int h = 0; h < NH; h++) {
		const float *pr = g->p + (((size_t)b * NH + h) * T + t) * T;
		double D = 0;
		for (int s2 = 0; s2 < T; s2++) {
			double acc = 0;
			for (int d = 0; d < HD; d++)
				acc += (double)g->datt[(size_t)r * M + h * HD + d] *
				       g->qkv[((size_t)b * T + s2) * ld + 2 * M + h * HD + d];
			dP[s2] = acc;
			D += pr[s2] * acc;
		}
		for (int s2 = 0; s2 < T; s2++) {
			dSr[s2] = pr[s2] * (dP[s2] - D);
			wl_err_add(eb, g->dS[(((size_t)b * NH + h) * T + t) * T + s2], dSr[s2]);
		}
		for (int d = 0; d < HD; d++) {
			double aq = 0, ak = 0, av = 0;
			for (int s2 = 0; s2 < T; s2++) {
				aq += dSr[s2] * g->qkv[((size_t)b * T + s2) * ld + M + h * HD + d];
				ak += (double)g->dS[(((size_t)b * NH + h) * T + s2) * T + t] *
				      g->qkv[((size_t)b * T + s2) * ld + h * HD + d];
				av += (double)g->p[(((size_t)b * NH + h) * T + s2) * T + t] *
				      g->datt[((size_t)b * T + s2) * M + h * HD + d];
			}
			dq[h * HD + d] = aq * scale;
			dq[M + h * HD + d] = ak * scale;
			dq[2 * M + h * HD + d] = av;
		}
	}
	for (int j = 0; j < 3 * M; j++)
		wl_err_add(eb, g->dqkv[(size_t)r * ld + j], dq[j]);
	/* QKV + LN1 backward from the GPU's dqkv and dx1 */
	for (int i = 0; i < M; i++) {
		double sacc = 0;
		for (int j = 0; j < 3 * M; j++)
			sacc += (double)g->dqkv[(size_t)r * ld + j] * w->wqkv[(size_t)j * M + i];
		dh[i] = sacc;
	}
	ln_bwd_row(dx1, dh, g->x + (size_t)r * M, w->ln1_g, M);
	for (int i = 0; i < M; i++)
		wl_err_add(eb, g->dx[(size_t)r * M + i], dx1[i] + g->dx1[(size_t)r * M + i]);
	(void)df;
	return 1;
}

static int check_one(struct state *st, struct hwq_ctx *c, char *msg, size_t cap, struct aorta_error *e)
{
	struct layer_act *a = &st->a[0];
	struct wl_err eq = { 0 }, ey = { 0 }, eb = { 0 };
	struct fetched g = { 0 };
	int rows[2] = { 0, NR - 1 }, ok = 0, bad = 0;
	size_t nm = (size_t)NR * M * sizeof(float), nf = (size_t)NR * F * sizeof(float);
	char coll[160];
	if (wl_block_check(&eq, &ey, &st->hw, st->x0, a->qkv, a->out, BT, T, M, NH, F, FLAGS, rows, 2, e))
		return 0;
	float **bufs[] = { &g.x, &g.x1, &g.z, &g.dy, &g.dx1, &g.datt, &g.dS, &g.p, &g.qkv, &g.dqkv, &g.dx };
	const float *src[] = { st->x0, a->x1, a->z, st->dX[1], st->dx1, st->datt[0], st->dS[0], a->p, a->qkv,
			       st->dqkv, st->dX[0] };
	size_t sz[] = { nm, nm, nf, nm, nm, nm, PSZ * 4, PSZ * 4, 3 * nm, 3 * nm, nm };
	for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) {
		if (!(*bufs[i] = malloc(sz[i]))) {
			snprintf(msg, cap, "out of memory");
			goto out;
		}
		if (wl_fetch(*bufs[i], src[i], sz[i], e))
			goto out;
	}
	{
		struct bwd_scratch *sc = malloc(sizeof(*sc));
		if (!sc) {
			snprintf(msg, cap, "out of memory");
			goto out;
		}
		for (int i = 0; i < 2; i++)
			check_bwd_row(st, &g, rows[i], &eb, sc);
		free(sc);
	}
	/* collectives: every layer's gathered buffer = 8 copies of its shard;
	 * reduced = world x the buffer (world 1: the buffer itself) */
	{
		size_t mm = (size_t)M * M;
		int W = c->world > 1 ? c->world : 1, pow2 = (W & (W - 1)) == 0;
		float *sh = malloc(mm * sizeof(float)), *gt = malloc((size_t)REP * mm * sizeof(float));
		float *gb = malloc(mm * sizeof(float)), *rd = malloc(mm * sizeof(float));
		if (!sh || !gt || !gb || !rd || wl_fetch(gb, st->gbuf, mm * 4, e) || wl_fetch(rd, st->red, mm * 4, e))
			bad++;
		else {
			for (int l = 0; l < NL; l++) {
				if (wl_fetch(sh, st->shard[l], mm * 4, e) ||
				    wl_fetch(gt, st->gath[l], REP * mm * 4, e)) {
					bad++;
					break;
				}
				for (int r = 0; r < REP; r++)
					bad += memcmp(gt + (size_t)r * mm, sh, mm * 4) != 0;
			}
			if (W == 1) {
				bad += memcmp(gb, rd, mm * 4) != 0;
			} else {
				size_t nred = 0;
				for (size_t i = 0; i < mm; i++) {
					double want = (double)W * gb[i], d = fabs(rd[i] - want);
					nred += pow2 ? rd[i] != (float)want : d > 1e-6 * fabs(want);
				}
				bad += nred != 0;
			}
		}
		free(sh);
		free(gt);
		free(gb);
		free(rd);
	}
	double rq = wl_err_rel(&eq), ry = wl_err_rel(&ey), rb = wl_err_rel(&eb);
	if (c->world > 1)
		snprintf(coll, sizeof(coll),
			 "world %d: NCCL all-gather (%d calls + %d local copies per layer, %d layers) / all-reduce "
			 "sum (= %d x local)", c->world, st->ng, st->nloc, NL, c->world);
	else
		snprintf(coll, sizeof(coll), "world 1: mock all-gather (%d layers) / all-reduce", NL);
	snprintf(msg, cap,
		 "layer 0 at rows 0, 4095 vs CPU: forward qkv %.3g, output %.3g; backward (MLP, LN2, "
		 "projection, attention dS/dQ/dK/dV, QKV, LN1: %lld values) max error %.3g relative "
		 "to max |value| %.3g; %s: %d mismatches",
		 rq, ry, eb.n, rb, eb.scale, coll, bad);
	ok = rq <= 1e-4 && ry <= 1e-4 && rb <= 1e-4 && eb.scale > 0 && !bad;
out:
	for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
		free(*bufs[i]);
	return ok;
}

/* The ranks of a distributed run are threads that check at the same time,
 * and wl_block_check's CPU reference (wl_ref_block_row) keeps its scratch
 * in static arrays: one rank checks at a time. */
static int check(void *vst, struct hwq_ctx *c, char *msg, size_t cap, struct aorta_error *e)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&mu);
	int ok = check_one(vst, c, msg, cap, e);
	pthread_mutex_unlock(&mu);
	return ok;
}

static void teardown(void *vst, struct hwq_ctx *c)
{
	struct state *st = vst;
	wl_ops_destroy(st->ops, c->nstreams);
	wl_events_destroy(st->evc, c->nstreams);
	for (int l = 0; l < NL; l++) {
		wl_events_destroy(st->ev_ag[l], c->nstreams);
		wl_events_destroy(st->ev_lay[l], c->nstreams);
	}
	free(st->hwp);
}

const struct hwq_workload_ops hwq_wl_fsdp_tp = {
	.name = "fsdp_tp", .state_size = sizeof(struct state),
	.setup = setup, .run = run, .check = check, .teardown = teardown,
	.samples_per_iter = BT,
	.kern_offset = offsetof(struct state, kern),
};
