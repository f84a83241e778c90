/*
 * wl_graph_subgraphs_gpu.c - hwq workload "graph_subgraphs": 8 independent
 * MLPs (1024 -> 2048 -> ReLU -> 2048 -> ReLU -> 512, batch 32) on one
 * input, then concat + Linear(8*512 -> 512).  Unit: samples/s, 32 samples
 * per iteration.
 *
 * Streams (N = 4..32).  Stream 0 holds the input: it copies the batch from
 * its staging buffer into the working buffer that every MLP reads (event
 * ev[0]).  Streams 1..N-2 (ns = N-2) run the MLPs: with ns <= 8 the MLPs go
 * round-robin (MLP m on stream 1 + m % ns); with ns > 8 each MLP's 32 rows
 * are split into c = ceil(ns / 8) row chunks and the 8c (MLP, chunk) items
 * go round-robin, so every stream of the role gets at least one item.
 * Stream N-1 waits for every MLP stream, concatenates the 8 outputs
 * (wlk_copy_cols) and runs the aggregation Linear.
 *
 * Check: rows 0 and 31 of the final output (first and last row chunks, so
 * two different MLP streams when split) against a double-precision CPU
 * forward of the whole graph on the same random weights and input.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "hwq/hwq_gpu.h"
#include "hwq/hwq_mem.h"
#include "hwq/wl_kernels_p123_gpu.h"
#include "kernels/ops.h"

#define NMLP 8
#define BATCH 32
#define DIN 1024
#define DH 2048
#define DOUT 512

struct state {
	int ns, chunks;                 /* MLP streams, row chunks per MLP */
	gpu_ops_ctx *ops[WL_MAX_STREAMS];
	void *ev[WL_MAX_STREAMS];
	float *xs, *x;                  /* staging, working input [32][1024] */
	float *w1[NMLP], *b1[NMLP], *w2[NMLP], *b2[NMLP], *w3[NMLP], *b3[NMLP];
	float *h1[NMLP], *h2[NMLP], *out[NMLP];
	float *cat, *wa, *ba, *y;
	float *hx, *hw[NMLP][6], *hwa, *hba; /* host copies for the check */
	long long kern;
};

static enum aorta_status setup(void *vst, struct hwq_ctx *c, struct aorta_error *e)
{
	struct state *st = vst;
	enum aorta_status rc;
	uint64_t tot = 0;
	int N = c->nstreams;
	if (N < 4 || N > WL_MAX_STREAMS)
		return aorta_fail(e, AORTA_EINTERNAL, "", 0, -1, "graph_subgraphs: %d streams", N);
	st->ns = N - 2;
	st->chunks = (st->ns + NMLP - 1) / NMLP;
	st->kern = 8LL * NMLP * st->chunks + NMLP + 2; /* as run() counts them */
	if ((rc = wl_ops_create(c, st->ops, N, e)) || (rc = wl_events_create(st->ev, N, e)))
		return rc;
	size_t sz[6] = { (size_t)DH * DIN, DH, (size_t)DH * DH, DH, (size_t)DOUT * DH, DOUT };
	int ins[3] = { DIN, DH, DH }, outs[3] = { DH, DH, DOUT };
	if (!(st->xs = wl_alloc(c, (size_t)BATCH * DIN, &tot, e)) ||
	    !(st->x = wl_alloc(c, (size_t)BATCH * DIN, &tot, e)))
		return AORTA_EGPU;
	st->hx = malloc((size_t)BATCH * DIN * sizeof(float));
	if (!st->hx)
		return aorta_fail(e, AORTA_EINTERNAL, "", 0, -1, "out of memory");
	if ((rc = hwq_fill_random(c, st->xs, st->hx, (size_t)BATCH * DIN, -1.0f, 1.0f, 1, e)))
		return rc;
	for (int m = 0; m < NMLP; m++) {
		float **dv[6] = { &st->w1[m], &st->b1[m], &st->w2[m], &st->b2[m], &st->w3[m], &st->b3[m] };
		for (int k = 0; k < 6; k++) {
			if (!(*dv[k] = wl_alloc(c, sz[k], &tot, e)))
				return AORTA_EGPU;
			if (!(st->hw[m][k] = malloc(sz[k] * sizeof(float))))
				return aorta_fail(e, AORTA_EINTERNAL, "", 0, -1, "out of memory");
		}
		for (int l = 0; l < 3; l++)
			if ((rc = wl_init_linear(c, *dv[2 * l], st->hw[m][2 * l], *dv[2 * l + 1],
						 st->hw[m][2 * l + 1], ins[l], outs[l],
						 100 + 10 * (uint64_t)m + 2 * (uint64_t)l, e)))
				return rc;
		if (!(st->h1[m] = wl_alloc(c, (size_t)BATCH * DH, &tot, e)) ||
		    !(st->h2[m] = wl_alloc(c, (size_t)BATCH * DH, &tot, e)) ||
		    !(st->out[m] = wl_alloc(c, (size_t)BATCH * DOUT, &tot, e)))
			return AORTA_EGPU;
	}
	if (!(st->cat = wl_alloc(c, (size_t)BATCH * NMLP * DOUT, &tot, e)) ||
	    !(st->wa = wl_alloc(c, (size_t)DOUT * NMLP * DOUT, &tot, e)) ||
	    !(st->ba = wl_alloc(c, DOUT, &tot, e)) ||
	    !(st->y = wl_alloc(c, (size_t)BATCH * DOUT, &tot, e)))
		return AORTA_EGPU;
	st->hwa = malloc((size_t)DOUT * NMLP * DOUT * sizeof(float));
	st->hba = malloc(DOUT * sizeof(float));
	if (!st->hwa || !st->hba)
		return aorta_fail(e, AORTA_EINTERNAL, "", 0, -1, "out of memory");
	if ((rc = wl_init_linear(c, st->wa, st->hwa, st->ba, st->hba, NMLP * DOUT, DOUT, 200, e)))
		return rc;
	if (tot != hwq_mem_graph_subgraphs(N))
		return aorta_fail(e, AORTA_EINTERNAL, "", 0, -1,
				  "graph_subgraphs: allocated %llu bytes, hwq_mem says %llu",
				  (unsigned long long)tot,
				  (unsigned long long)hwq_mem_graph_subgraphs(N));
	return AORTA_OK;
}

static enum aorta_status run(void *vst, struct hwq_ctx *c, struct aorta_error *e)
{
	struct state *st = vst;
	int N = c->nstreams, items = NMLP * st->chunks;
	void **s = (void **)c->streams;
	long long k = 0;
	/* stream 0: the input */
	wl_copy_async(st->x, st->xs, (size_t)BATCH * DIN * sizeof(float), s[0]);
	wl_record(st->ev[0], s[0]);
	for (int i = 1; i <= st->ns; i++)
		wl_wait(s[i], st->ev[0]);
	/* MLP streams: item it = (MLP it / chunks, chunk it % chunks) */
	for (int it = 0; it < items; it++) {
		int m = it / st->chunks, ch = it % st->chunks, si = 1 + it % st->ns, r0, r1;
		gpu_ops_ctx *o = st->ops[si];
		wl_split(BATCH, st->chunks, ch, &r0, &r1);
		int n = r1 - r0;
		gpu_linear_fwd(o, st->h1[m] + (size_t)r0 * DH, st->x + (size_t)r0 * DIN, st->w1[m],
			       st->b1[m], n, DIN, DH);
		wlk_relu(st->h1[m] + (size_t)r0 * DH, st->h1[m] + (size_t)r0 * DH, (size_t)n * DH, s[si]);
		gpu_linear_fwd(o, st->h2[m] + (size_t)r0 * DH, st->h1[m] + (size_t)r0 * DH, st->w2[m],
			       st->b2[m], n, DH, DH);
		wlk_relu(st->h2[m] + (size_t)r0 * DH, st->h2[m] + (size_t)r0 * DH, (size_t)n * DH, s[si]);
		gpu_linear_fwd(o, st->out[m] + (size_t)r0 * DOUT, st->h2[m] + (size_t)r0 * DH, st->w3[m],
			       st->b3[m], n, DH, DOUT);
		k += 8;
	}
	/* aggregation stream */
	for (int i = 1; i <= st->ns; i++) {
		wl_record(st->ev[i], s[i]);
		wl_wait(s[N - 1], st->ev[i]);
	}
	for (int m = 0; m < NMLP; m++)
		wlk_copy_cols(st->cat, NMLP * DOUT, m * DOUT, st->out[m], BATCH, DOUT, s[N - 1]);
	gpu_linear_fwd(st->ops[N - 1], st->y, st->cat, st->wa, st->ba, BATCH, NMLP * DOUT, DOUT);
	k += NMLP + 2;
	st->kern = k;
	return wl_ops_status(st->ops, N, e);
}

static int check(void *vst, struct hwq_ctx *c, char *msg, size_t cap, struct aorta_error *e)
{
	struct state *st = vst;
	static double h1[DH], h2[DH], o[DOUT], y[DOUT];
	static float catr[NMLP * DOUT], gy[BATCH * DOUT];
	struct wl_err er = { 0 };
	int rows[2] = { 0, BATCH - 1 };
	(void)c;
	if (wl_fetch(gy, st->y, sizeof gy, e))
		return 0;
	for (int ri = 0; ri < 2; ri++) {
		const float *xr = st->hx + (size_t)rows[ri] * DIN;
		for (int m = 0; m < NMLP; m++) {
			static float tmp[DH];
			wl_ref_linear_row(h1, xr, st->hw[m][0], st->hw[m][1], DIN, DH);
			for (int j = 0; j < DH; j++)
				tmp[j] = (float)(h1[j] > 0 ? h1[j] : 0);
			wl_ref_linear_row(h2, tmp, st->hw[m][2], st->hw[m][3], DH, DH);
			for (int j = 0; j < DH; j++)
				tmp[j] = (float)(h2[j] > 0 ? h2[j] : 0);
			wl_ref_linear_row(o, tmp, st->hw[m][4], st->hw[m][5], DH, DOUT);
			for (int j = 0; j < DOUT; j++)
				catr[m * DOUT + j] = (float)o[j];
		}
		wl_ref_linear_row(y, catr, st->hwa, st->hba, NMLP * DOUT, DOUT);
		for (int j = 0; j < DOUT; j++)
			wl_err_add(&er, gy[(size_t)rows[ri] * DOUT + j], y[j]);
	}
	double rel = wl_err_rel(&er);
	snprintf(msg, cap,
		 "output rows 0 and 31 (%lld values) vs CPU forward of the 8 MLPs + aggregation: "
		 "max error %.3g relative to max |value| %.3g",
		 er.n, rel, er.scale);
	return rel <= 1e-4 && er.scale > 0;
}

static void teardown(void *vst, struct hwq_ctx *c)
{
	struct state *st = vst;
	wl_ops_destroy(st->ops, c->nstreams);
	wl_events_destroy(st->ev, c->nstreams);
	free(st->hx);
	for (int m = 0; m < NMLP; m++)
		for (int k = 0; k < 6; k++)
			free(st->hw[m][k]);
	free(st->hwa);
	free(st->hba);
}

const struct hwq_workload_ops hwq_wl_graph_subgraphs = {
	.name = "graph_subgraphs", .state_size = sizeof(struct state),
	.setup = setup, .run = run, .check = check, .teardown = teardown,
	.samples_per_iter = BATCH,
	.kern_offset = offsetof(struct state, kern),
};
