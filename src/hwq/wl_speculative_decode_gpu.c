/*
 * wl_speculative_decode_gpu.c - hwq workload "speculative_decode": a draft
 * LM (hidden 256, 4 layers, 4 heads) proposes 4 tokens greedily, each by a
 * full forward over the context without KV cache (T = 128, 129, 130, 131;
 * logits of every position, argmax of the last); the main LM (hidden
 * 1024, 12 layers, 8 heads) verifies all 4 in one forward over 132 tokens;
 * accept = cumprod of the acceptance flags; the cache update multiplies the
 * draft tokens by that mask.  Both LMs: embedding (vocab 32000),
 * nn.TransformerEncoderLayer blocks (post-LN, ReLU feed-forward 4x), final
 * LayerNorm, lm_head without bias, batch 1.  Unit: tokens/s, int(4 x 0.7)
 * = 2 tokens per iteration, as upstream.
 *
 * Acceptance flags.  With random weights the main model almost never
 * predicts the draft's token, so every flag would be 0; a flag is 1 when
 * the main model agrees OR a fixed random draw from the seed (p = 0.7, the
 * acceptance rate upstream's token count assumes) says so.
 *
 * Streams (N = 4..12): draft [0, nd), verify [nd, N-2) with nd = (N-2)/2,
 * accept N-2, cache N-1 (upstream: 0-1, 2-3, 4, 5 at N = 6).  Each LM
 * forward is spread over its role's streams by rows (wl_stack_fwd: every
 * stream owns a row range for the embedding, all blocks, the final
 * LayerNorm and its rows of the logits; one event join per layer).  The
 * draft streams join (wl_barrier) after each draft forward: the stream
 * owning the last row writes the next token, which the next forward reads.
 * Verify waits for every draft stream, accept for every verify stream,
 * cache for accept.
 *
 * Check: the last block of the last draft forward (rows 0, 130) and of the
 * main model (rows 0, 131) against wl_ref_block_row; the draft embedding
 * rows 0 and 130; both LMs' logits of their last row (final LayerNorm +
 * lm_head, 32000 values) against the CPU from the GPU's block output; the
 * 4th draft token = argmax of the draft's last logits; the main model's
 * predictions (argmax of rows 127..130), the flags, the cumprod mask and
 * the cache update recomputed on the CPU from the GPU's logits.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "hwq/hwq_gpu.h"
#include "hwq/hwq_mem.h"
#include "hwq/wl_kernels_p123_gpu.h"
#include "kernels/ops.h"

#define V 32000
#define CTX 128
#define K 4
#define TMAX (CTX + K)
#define DM 256
#define DL 4
#define DH 4
#define MM 1024
#define ML 12
#define MH 8
#define FLAGS WL_BLOCK_FF

struct lm {                      /* device */
	struct wl_block w[ML];
	float *emb, *lng, *lnb, *head, *x, *logits;
	struct wl_block_scratch s;
	struct wl_stack_run r;
	int lc;
	/* host copies for the check */
	struct wl_block hw;
	float *hwp, *hemb, *hlng, *hlnb, *hhead;
};

struct state {
	int nd, nv;
	gpu_ops_ctx *ops[WL_MAX_STREAMS];
	void *evd[WL_MAX_STREAMS], *evv[WL_MAX_STREAMS], *evbar[WL_MAX_STREAMS], *eva;
	struct lm d, m;
	int32_t *ids, *pred, *forced;
	float *flags, *mask, *cache;
	int32_t hids[CTX], hforced[K];
	long long kern;
};

static enum aorta_status lm_alloc(struct hwq_ctx *c, struct lm *lm, int M, int L, int F, uint64_t site,
				  uint64_t *tot, struct aorta_error *e)
{
	enum aorta_status rc;
	if ((rc = wl_layers_alloc(c, lm->w, L, M, F, &lm->hwp, &lm->hw, L - 1, site, tot, e)))
		return rc;
	lm->hemb = malloc((size_t)V * M * sizeof(float));
	lm->hhead = malloc((size_t)V * M * sizeof(float));
	lm->hlng = malloc(M * sizeof(float));
	lm->hlnb = malloc(M * sizeof(float));
	if (!lm->hemb || !lm->hhead || !lm->hlng || !lm->hlnb)
		return aorta_fail(e, AORTA_EINTERNAL, "", 0, -1, "out of memory");
	if (!(lm->emb = wl_alloc(c, (size_t)V * M, tot, e)) || !(lm->lng = wl_alloc(c, M, tot, e)) ||
	    !(lm->lnb = wl_alloc(c, M, tot, e)) || !(lm->head = wl_alloc(c, (size_t)V * M, tot, e)) ||
	    !(lm->x = wl_alloc(c, (size_t)TMAX * M, tot, e)) ||
	    !(lm->logits = wl_alloc(c, (size_t)TMAX * V, tot, e)))
		return AORTA_EGPU;
	if ((rc = hwq_fill_random(c, lm->emb, lm->hemb, (size_t)V * M, -1.0f, 1.0f, site + 1000, e)) ||
	    (rc = hwq_fill_random(c, lm->lng, lm->hlng, M, 0.8f, 1.2f, site + 1001, e)) ||
	    (rc = hwq_fill_random(c, lm->lnb, lm->hlnb, M, -0.1f, 0.1f, site + 1002, e)) ||
	    (rc = wl_init_linear(c, lm->head, lm->hhead, NULL, NULL, M, V, site + 1003, e)))
		return rc;
	return wl_stack_alloc(c, &lm->r, &lm->s, TMAX, M, F, tot, e);
}

static enum aorta_status setup(void *vst, struct hwq_ctx *c, struct aorta_error *e)
{
	struct state *st = vst;
	enum aorta_status rc;
	uint64_t tot = 0;
	int N = c->nstreams;
	if (N < 4 || N > WL_MAX_STREAMS)
		return aorta_fail(e, AORTA_EINTERNAL, "", 0, -1, "speculative_decode: %d streams", N);
	st->nd = (N - 2) / 2;
	st->nv = N - 2 - st->nd;
	if ((rc = wl_ops_create(c, st->ops, N, e)) || (rc = wl_events_create(st->evd, N, e)) ||
	    (rc = wl_events_create(st->evv, N, e)) || (rc = wl_events_create(st->evbar, N, e)) ||
	    (rc = wl_events_create(&st->eva, 1, e)))
		return rc;
	if ((rc = lm_alloc(c, &st->d, DM, DL, 4 * DM, 100, &tot, e)) ||
	    (rc = lm_alloc(c, &st->m, MM, ML, 4 * MM, 2000, &tot, e)))
		return rc;
	if (!(st->ids = (int32_t *)wl_alloc(c, TMAX, &tot, e)) ||
	    !(st->pred = (int32_t *)wl_alloc(c, K, &tot, e)) ||
	    !(st->forced = (int32_t *)wl_alloc(c, K, &tot, e)) || !(st->flags = wl_alloc(c, K, &tot, e)) ||
	    !(st->mask = wl_alloc(c, K, &tot, e)) || !(st->cache = wl_alloc(c, K, &tot, e)))
		return AORTA_EGPU;
	for (int i = 0; i < CTX; i++)
		st->hids[i] = (int32_t)(wl_ref_uniform(c->seed, 3, (uint64_t)i) * V);
	for (int i = 0; i < K; i++)
		st->hforced[i] = wl_ref_uniform(c->seed, 4, (uint64_t)i) < 0.7;
	GPU_CHECK(e, gpuMemcpy(st->ids, st->hids, sizeof st->hids, gpuMemcpyHostToDevice));
	GPU_CHECK(e, gpuMemcpy(st->forced, st->hforced, sizeof st->hforced, gpuMemcpyHostToDevice));
	struct lm *lms[2] = { &st->d, &st->m };
	for (int k = 0; k < 2; k++) {
		struct wl_stack_run *r = &lms[k]->r;
		r->ns = k ? st->nv : st->nd;
		r->streams = (void **)c->streams + (k ? st->nd : 0);
		r->ev = k ? st->evv : st->evd;
		r->ops = st->ops + (k ? st->nd : 0);
		r->layer_counter = &lms[k]->lc;
	}
	/* launches as run() counts them: per draft step embeddings, the stack,
	 * LN + head per stream, the argmax; the main forward; accept 3, cache 1 */
	st->kern = 0;
	for (int step = 0; step < K; step++)
		st->kern += 3LL * st->nd + wl_stack_kernels(st->nd, CTX + step, DL, FLAGS) + 1;
	st->kern += 3LL * st->nv + wl_stack_kernels(st->nv, TMAX, ML, FLAGS) + 4;
	if (tot != hwq_mem_speculative_decode(N))
		return aorta_fail(e, AORTA_EINTERNAL, "", 0, -1,
				  "speculative_decode: allocated %llu bytes, hwq_mem says %llu",
				  (unsigned long long)tot, (unsigned long long)hwq_mem_speculative_decode(N));
	return AORTA_OK;
}

/* One LM forward over T tokens of st->ids on its role's streams: embedding,
 * blocks, final LN and logits of every row; returns launches. */
static long long lm_fwd(struct state *st, struct lm *lm, int M, int L, int H, int T)
{
	struct wl_stack_run *r = &lm->r;
	long long k = 0;
	float *out = NULL;
	for (int i = 0; i < r->ns; i++) {
		int r0, r1;
		wl_split(T, r->ns, i, &r0, &r1);
		wlk_embed(lm->x + (size_t)r0 * M, lm->emb, st->ids + r0, r1 - r0, M, r->streams[i]);
		k++;
	}
	k += wl_stack_fwd(r, lm->w, L, lm->x, 1, T, M, H, 4 * M, FLAGS, &out);
	for (int i = 0; i < r->ns; i++) {
		int r0, r1;
		wl_split(T, r->ns, i, &r0, &r1);
		int n = r1 - r0;
		gpu_layernorm_fwd(r->ops[i], lm->s.h + (size_t)r0 * M, lm->s.mean + r0, lm->s.rstd + r0,
				  out + (size_t)r0 * M, lm->lng, lm->lnb, n, M, WL_LN_EPS);
		gpu_linear_fwd(r->ops[i], lm->logits + (size_t)r0 * V, lm->s.h + (size_t)r0 * M, lm->head,
			       NULL, n, M, V);
		k += 2;
	}
	return k;
}

static enum aorta_status run(void *vst, struct hwq_ctx *c, struct aorta_error *e)
{
	struct state *st = vst;
	void **s = (void **)c->streams;
	int N = c->nstreams, nd = st->nd, acc = N - 2, cch = N - 1;
	long long k = 0;
	st->d.lc = st->m.lc = 0;
	/* draft: 4 greedy steps, each a full forward over the growing context */
	for (int step = 0; step < K; step++) {
		int T = CTX + step;
		k += lm_fwd(st, &st->d, DM, DL, DH, T);
		/* the last draft stream owns row T-1: it appends the token */
		wlk_argmax_rows(st->ids + T, st->d.logits + (size_t)(T - 1) * V, 1, V, s[nd - 1]);
		k++;
		wl_barrier(s, st->evbar, nd);
	}
	for (int i = 0; i < nd; i++)
		wl_record(st->evbar[i], s[i]);
	/* verify: the main model over context + 4 draft tokens */
	for (int i = 0; i < st->nv; i++)
		for (int j = 0; j < nd; j++)
			wl_wait(s[nd + i], st->evbar[j]);
	k += lm_fwd(st, &st->m, MM, ML, MH, TMAX);
	for (int i = 0; i < st->nv; i++) {
		wl_record(st->evbar[nd + i], s[nd + i]);
		wl_wait(s[acc], st->evbar[nd + i]);
	}
	/* accept: predictions at positions 127..130 vs the draft tokens */
	wlk_argmax_rows(st->pred, st->m.logits + (size_t)(CTX - 1) * V, K, V, s[acc]);
	wlk_accept_flags(st->flags, st->pred, st->ids + CTX, st->forced, K, s[acc]);
	wlk_cumprod_rows(st->mask, st->flags, 1, K, s[acc]);
	wl_record(st->eva, s[acc]);
	/* cache: draft tokens * mask */
	wl_wait(s[cch], st->eva);
	wlk_mask_tokens(st->cache, st->ids + CTX, st->mask, K, s[cch]);
	(void)k; /* k + 4 equals st->kern, computed in setup */
	return wl_ops_status(st->ops, N, e);
}

/* logits of row r from the GPU's last block output: LN + head (double) */
static void logits_row(struct wl_err *er, const struct lm *lm, const float *y, const float *glog, int M)
{
	static double xd[MM], h[MM];
	static float hf[MM];
	static double lg[V];
	for (int i = 0; i < M; i++)
		xd[i] = y[i];
	wl_ref_layernorm_row(h, xd, lm->hlng, lm->hlnb, M);
	for (int i = 0; i < M; i++)
		hf[i] = (float)h[i];
	wl_ref_linear_row(lg, hf, lm->hhead, NULL, M, V);
	for (int i = 0; i < V; i++)
		wl_err_add(er, glog[i], lg[i]);
}

static int check(void *vst, struct hwq_ctx *c, char *msg, size_t cap, struct aorta_error *e)
{
	struct state *st = vst;
	struct wl_err eq = { 0 }, ey = { 0 }, el = { 0 }, ee = { 0 };
	int drow[2] = { 0, TMAX - 2 }, mrow[2] = { 0, TMAX - 1 }, bad = 0;
	int gd = (DL - 1) & 1, gm = (ML - 1) & 1; /* buffers of each LM's last layer */
	static float lg[K][V], y[MM], emb[DM];
	int32_t ids[TMAX], pred[K];
	float flags[K], mask[K], cache[K], gflags[K], gmask[K], gcache[K];
	(void)c;
	/* the last draft forward ran over T = 131 rows */
	if (wl_block_check(&eq, &ey, &st->d.hw, st->d.r.buf[!gd], st->d.r.qkv[gd], st->d.r.buf[gd], 1,
			   TMAX - 1, DM, DH, 4 * DM, FLAGS, drow, 2, e) ||
	    wl_block_check(&eq, &ey, &st->m.hw, st->m.r.buf[!gm], st->m.r.qkv[gm], st->m.r.buf[gm], 1,
			   TMAX, MM, MH, 4 * MM, FLAGS, mrow, 2, e))
		return 0;
	if (wl_fetch(ids, st->ids, sizeof ids, e))
		return 0;
	for (int q = 0; q < 2; q++) {
		int r = drow[q];
		if (wl_fetch(emb, st->d.x + (size_t)r * DM, sizeof emb, e))
			return 0;
		for (int i = 0; i < DM; i++)
			wl_err_add(&ee, emb[i], st->d.hemb[(size_t)ids[r] * DM + i]);
	}
	/* draft logits of row 130 and the 4th draft token */
	if (wl_fetch(y, st->d.r.buf[gd] + (size_t)(TMAX - 2) * DM, DM * sizeof(float), e) ||
	    wl_fetch(lg[0], st->d.logits + (size_t)(TMAX - 2) * V, V * sizeof(float), e))
		return 0;
	logits_row(&el, &st->d, y, lg[0], DM);
	int32_t a;
	wl_ref_argmax_rows(&a, lg[0], 1, V);
	bad += a != ids[TMAX - 1];
	for (int i = CTX; i < TMAX; i++)
		bad += ids[i] < 0 || ids[i] >= V;
	/* main logits of row 131, then rows 127..130 for the acceptance */
	if (wl_fetch(y, st->m.r.buf[gm] + (size_t)(TMAX - 1) * MM, MM * sizeof(float), e) ||
	    wl_fetch(lg[0], st->m.logits + (size_t)(TMAX - 1) * V, V * sizeof(float), e))
		return 0;
	logits_row(&el, &st->m, y, lg[0], MM);
	if (wl_fetch(lg, st->m.logits + (size_t)(CTX - 1) * V, sizeof lg, e) ||
	    wl_fetch(gflags, st->flags, sizeof gflags, e) || wl_fetch(gmask, st->mask, sizeof gmask, e) ||
	    wl_fetch(gcache, st->cache, sizeof gcache, e))
		return 0;
	wl_ref_argmax_rows(pred, &lg[0][0], K, V);
	wl_ref_accept_flags(flags, pred, ids + CTX, st->hforced, K);
	wl_ref_cumprod_rows(mask, flags, 1, K);
	wl_ref_mask_tokens(cache, ids + CTX, mask, K);
	for (int i = 0; i < K; i++)
		bad += gflags[i] != flags[i] || gmask[i] != mask[i] || gcache[i] != cache[i];
	double rq = wl_err_rel(&eq), ry = wl_err_rel(&ey), rl = wl_err_rel(&el), re = wl_err_rel(&ee);
	snprintf(msg, cap,
		 "last blocks of draft (rows 0, 130) and main (rows 0, 131) vs CPU: qkv %.3g, output %.3g; "
		 "embedding %.3g; last-row logits %.3g (max rel errors); draft tokens, predictions, "
		 "flags, cumprod mask [%g %g %g %g] and cache update: %d mismatches",
		 rq, ry, re, rl, mask[0], mask[1], mask[2], mask[3], bad);
	return rq <= 1e-4 && ry <= 1e-4 && rl <= 1e-4 && re == 0 && !bad && ey.scale > 0 && el.scale > 0;
}

static void lm_free(struct lm *lm)
{
	free(lm->hwp);
	free(lm->hemb);
	free(lm->hhead);
	free(lm->hlng);
	free(lm->hlnb);
}

static void teardown(void *vst, struct hwq_ctx *c)
{
	struct state *st = vst;
	wl_ops_destroy(st->ops, c->nstreams);
	wl_events_destroy(st->evd, c->nstreams);
	wl_events_destroy(st->evv, c->nstreams);
	wl_events_destroy(st->evbar, c->nstreams);
	wl_events_destroy(&st->eva, 1);
	lm_free(&st->d);
	lm_free(&st->m);
}

const struct hwq_workload_ops hwq_wl_speculative_decode = {
	.name = "speculative_decode", .state_size = sizeof(struct state),
	.setup = setup, .run = run, .check = check, .teardown = teardown,
	.samples_per_iter = (double)(int)(K * 0.7 * 1), /* int(speculation_length * 0.7 * batch) = 2 */
	.kern_offset = offsetof(struct state, kern),
};
