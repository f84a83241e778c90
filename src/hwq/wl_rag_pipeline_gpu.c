/*
 * wl_rag_pipeline_gpu.c - hwq workload "rag_pipeline": 4 queries of 64 x
 * 768 go through embed (mean over the sequence, Linear 768 -> 768, ReLU,
 * Linear 768 -> 256, L2 normalise) -> retrieve (similarity with 100
 * document embeddings, top-10, gather the 10 documents' 768-d
 * representations) -> rerank (cross-encoder: concat(query mean, doc) 1536
 * -> 768 -> ReLU -> 1, sort descending, reorder) -> generate (context =
 * query tokens + the 3 best documents = 67 tokens; 4
 * nn.TransformerEncoderLayer blocks (768, 8 heads, ReLU FF 3072, post-LN)
 * and an lm_head 768 -> 32000).  Unit: queries/s, 4 per iteration.
 *
 * Streams (N = 4..12), q = max(1, N/4): embed [0, q), retrieve [q, 2q),
 * rerank [2q, 3q), generate [3q, N).  The first three stages work per
 * query, so stream j of each of those roles takes the same share of the 4
 * queries and waits (event) only for stream j of the previous stage.  The
 * generate streams wait for every rerank stream; each builds its own rows
 * of the 4 x 67 context and the blocks are spread over them by rows
 * (wl_stack_fwd, one event join per layer), then each computes the logits
 * of its rows.
 *
 * Check: the embedding of all 4 queries against a double CPU forward; the
 * similarities and top-10 indices from the GPU's query embeddings;
 * the gathered documents; all 40 rerank scores from the GPU's gathered
 * documents and query means; the sort order; the context rows; the last
 * generator block at rows 0 and 267 (wl_ref_block_row) and the logits of
 * row 267.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "hwq/hwq_gpu.h"
#include "hwq/hwq_mem.h"
#include "hwq/wl_kernels_p123_gpu.h"
#include "kernels/ops.h"

#define B 4
#define QL 64
#define M 768
#define E 256
#define ND 100
#define TK 10
#define NCTX 3
#define TC (QL + NCTX)
#define GL 4
#define GH 8
#define GF (4 * M)
#define V 32000
#define FLAGS WL_BLOCK_FF

struct state {
	int q, ngen;
	gpu_ops_ctx *ops[WL_MAX_STREAMS];
	void *ev[WL_MAX_STREAMS], *evs[WL_MAX_STREAMS];
	float *query, *demb, *dhid;
	float *ew1, *eb1, *ew2, *eb2, *qm, *e1, *e2, *qe;
	float *sims, *tval, *ret;
	int32_t *tidx, *rep, *sidx;
	float *qh, *qrep, *comb, *rw1, *rb1, *rw2, *rb2, *s1, *score, *sval, *rr;
	float *ctx, *lw, *lb, *logits;
	struct wl_block gw[GL], hgw;
	struct wl_block_scratch gs;
	struct wl_stack_run gr;
	int lc;
	float *hq, *hdemb, *hdhid, *hew1, *heb1, *hew2, *heb2, *hrw1, *hrb1, *hrw2, *hrb2, *hlw, *hlb, *hgwp;
	long long kern;
};

static enum aorta_status setup(void *vst, struct hwq_ctx *c, struct aorta_error *e)
{
	struct state *st = vst;
	enum aorta_status rc;
	uint64_t tot = 0;
	int N = c->nstreams;
	if (N < 4 || N > WL_MAX_STREAMS)
		return aorta_fail(e, AORTA_EINTERNAL, "", 0, -1, "rag_pipeline: %d streams", N);
	st->q = N / 4 > 1 ? N / 4 : 1;
	st->ngen = N - 3 * st->q;
	if ((rc = wl_ops_create(c, st->ops, N, e)) || (rc = wl_events_create(st->ev, N, e)) ||
	    (rc = wl_events_create(st->evs, N, e)))
		return rc;
	struct {
		float **d, **h;
		size_t n;
	} A[] = {
		{ &st->query, &st->hq, (size_t)B * QL * M }, { &st->demb, &st->hdemb, (size_t)ND * E },
		{ &st->dhid, &st->hdhid, (size_t)ND * M },   { &st->ew1, &st->hew1, (size_t)M * M },
		{ &st->eb1, &st->heb1, M },                   { &st->ew2, &st->hew2, (size_t)E * M },
		{ &st->eb2, &st->heb2, E },                   { &st->rw1, &st->hrw1, (size_t)M * 2 * M },
		{ &st->rb1, &st->hrb1, M },                   { &st->rw2, &st->hrw2, M },
		{ &st->rb2, &st->hrb2, 1 },                   { &st->lw, &st->hlw, (size_t)V * M },
		{ &st->lb, &st->hlb, V },
	};
	for (size_t i = 0; i < sizeof A / sizeof A[0]; i++) {
		if (!(*A[i].d = wl_alloc(c, A[i].n, &tot, e)))
			return AORTA_EGPU;
		if (!(*A[i].h = malloc(A[i].n * sizeof(float))))
			return aorta_fail(e, AORTA_EINTERNAL, "", 0, -1, "out of memory");
	}
	if ((rc = hwq_fill_random(c, st->query, st->hq, (size_t)B * QL * M, -1.0f, 1.0f, 1, e)) ||
	    (rc = hwq_fill_random(c, st->demb, st->hdemb, (size_t)ND * E, -1.0f, 1.0f, 2, e)) ||
	    (rc = hwq_fill_random(c, st->dhid, st->hdhid, (size_t)ND * M, -1.0f, 1.0f, 3, e)) ||
	    (rc = wl_init_linear(c, st->ew1, st->hew1, st->eb1, st->heb1, M, M, 10, e)) ||
	    (rc = wl_init_linear(c, st->ew2, st->hew2, st->eb2, st->heb2, M, E, 12, e)) ||
	    (rc = wl_init_linear(c, st->rw1, st->hrw1, st->rb1, st->hrb1, 2 * M, M, 14, e)) ||
	    (rc = wl_init_linear(c, st->rw2, st->hrw2, st->rb2, st->hrb2, M, 1, 16, e)) ||
	    (rc = wl_init_linear(c, st->lw, st->hlw, st->lb, st->hlb, M, V, 18, e)))
		return rc;
	if (!(st->qm = wl_alloc(c, (size_t)B * M, &tot, e)) || !(st->e1 = wl_alloc(c, (size_t)B * M, &tot, e)) ||
	    !(st->e2 = wl_alloc(c, (size_t)B * E, &tot, e)) || !(st->qe = wl_alloc(c, (size_t)B * E, &tot, e)) ||
	    !(st->sims = wl_alloc(c, (size_t)B * ND, &tot, e)) ||
	    !(st->tval = wl_alloc(c, (size_t)B * TK, &tot, e)) ||
	    !(st->tidx = (int32_t *)wl_alloc(c, (size_t)B * TK, &tot, e)) ||
	    !(st->ret = wl_alloc(c, (size_t)B * TK * M, &tot, e)) ||
	    !(st->rep = (int32_t *)wl_alloc(c, (size_t)B * TK, &tot, e)) ||
	    !(st->qh = wl_alloc(c, (size_t)B * M, &tot, e)) ||
	    !(st->qrep = wl_alloc(c, (size_t)B * TK * M, &tot, e)) ||
	    !(st->comb = wl_alloc(c, (size_t)B * TK * 2 * M, &tot, e)) ||
	    !(st->s1 = wl_alloc(c, (size_t)B * TK * M, &tot, e)) ||
	    !(st->score = wl_alloc(c, (size_t)B * TK, &tot, e)) ||
	    !(st->sval = wl_alloc(c, (size_t)B * TK, &tot, e)) ||
	    !(st->sidx = (int32_t *)wl_alloc(c, (size_t)B * TK, &tot, e)) ||
	    !(st->rr = wl_alloc(c, (size_t)B * TK * M, &tot, e)) ||
	    !(st->ctx = wl_alloc(c, (size_t)B * TC * M, &tot, e)) ||
	    !(st->logits = wl_alloc(c, (size_t)B * TC * V, &tot, e)))
		return AORTA_EGPU;
	int32_t rep[B * TK];
	for (int i = 0; i < B * TK; i++)
		rep[i] = i / TK;
	GPU_CHECK(e, gpuMemcpy(st->rep, rep, sizeof rep, gpuMemcpyHostToDevice));
	if ((rc = wl_layers_alloc(c, st->gw, GL, M, GF, &st->hgwp, &st->hgw, GL - 1, 100, &tot, e)) ||
	    (rc = wl_stack_alloc(c, &st->gr, &st->gs, B * TC, M, GF, &tot, e)))
		return rc;
	st->gr.ns = st->ngen;
	st->gr.streams = (void **)c->streams + 3 * st->q;
	st->gr.ev = st->ev + 3 * st->q;
	st->gr.ops = st->ops + 3 * st->q;
	st->gr.layer_counter = &st->lc;
	/* launches as run() counts them: 20 per query share + 1 gather per query,
	 * the generator stack, the lm_head (GEMM + bias) per generate stream */
	st->kern = 20LL * st->q + B + wl_stack_kernels(st->ngen, B * TC, GL, FLAGS) + 2LL * st->ngen;
	if (tot != hwq_mem_rag_pipeline(N))
		return aorta_fail(e, AORTA_EINTERNAL, "", 0, -1,
				  "rag_pipeline: allocated %llu bytes, hwq_mem says %llu",
				  (unsigned long long)tot, (unsigned long long)hwq_mem_rag_pipeline(N));
	return AORTA_OK;
}

static enum aorta_status run(void *vst, struct hwq_ctx *c, struct aorta_error *e)
{
	struct state *st = vst;
	void **s = (void **)c->streams;
	int q = st->q, N = c->nstreams;
	long long k = 0;
	for (int j = 0; j < q; j++) {
		int b0, b1;
		wl_split(B, q, j, &b0, &b1);
		int nb = b1 - b0;
		/* embed (stream j) */
		void *se = s[j];
		gpu_ops_ctx *o = st->ops[j];
		wlk_mean_seq(st->qm + b0 * M, st->query + (size_t)b0 * QL * M, nb, QL, M, se);
		gpu_linear_fwd(o, st->e1 + b0 * M, st->qm + b0 * M, st->ew1, st->eb1, nb, M, M);
		wlk_relu(st->e1 + b0 * M, st->e1 + b0 * M, (size_t)nb * M, se);
		gpu_linear_fwd(o, st->e2 + b0 * E, st->e1 + b0 * M, st->ew2, st->eb2, nb, M, E);
		wlk_l2norm_rows(st->qe + b0 * E, st->e2 + b0 * E, nb, E, se);
		wl_record(st->evs[j], se);
		/* retrieve (stream q + j) */
		void *sr = s[q + j];
		o = st->ops[q + j];
		wl_wait(sr, st->evs[j]);
		gpu_linear_fwd(o, st->sims + b0 * ND, st->qe + b0 * E, st->demb, NULL, nb, E, ND);
		wlk_topk_rows(st->tval + b0 * TK, st->tidx + b0 * TK, st->sims + b0 * ND, nb, ND, TK, 0, sr);
		wlk_gather_rows(st->ret + (size_t)b0 * TK * M, st->dhid, st->tidx + b0 * TK, nb * TK, M, sr);
		wl_record(st->evs[q + j], sr);
		/* rerank (stream 2q + j) */
		void *sk = s[2 * q + j];
		o = st->ops[2 * q + j];
		wl_wait(sk, st->evs[q + j]);
		size_t r0 = (size_t)b0 * TK, nr = (size_t)nb * TK;
		wlk_mean_seq(st->qh + b0 * M, st->query + (size_t)b0 * QL * M, nb, QL, M, sk);
		wlk_gather_rows(st->qrep + r0 * M, st->qh, st->rep + r0, (int)nr, M, sk);
		wlk_copy_cols(st->comb + r0 * 2 * M, 2 * M, 0, st->qrep + r0 * M, (int)nr, M, sk);
		wlk_copy_cols(st->comb + r0 * 2 * M, 2 * M, M, st->ret + r0 * M, (int)nr, M, sk);
		gpu_linear_fwd(o, st->s1 + r0 * M, st->comb + r0 * 2 * M, st->rw1, st->rb1, (int)nr, 2 * M, M);
		wlk_relu(st->s1 + r0 * M, st->s1 + r0 * M, nr * M, sk);
		gpu_linear_fwd(o, st->score + r0, st->s1 + r0 * M, st->rw2, st->rb2, (int)nr, M, 1);
		wlk_sort_desc_rows(st->sval + r0, st->sidx + r0, st->score + r0, nb, TK, sk);
		for (int b = b0; b < b1; b++)
			wlk_gather_rows(st->rr + (size_t)b * TK * M, st->ret + (size_t)b * TK * M,
					st->sidx + b * TK, TK, M, sk);
		wl_record(st->evs[2 * q + j], sk);
		k += 7 + 3 + 10 + nb; /* embed, retrieve, rerank launches */
	}
	/* generate: each stream builds its context rows, then the blocks */
	for (int j = 0; j < st->ngen; j++) {
		int si = 3 * q + j, r0, r1;
		for (int i = 0; i < q; i++)
			wl_wait(s[si], st->evs[2 * q + i]);
		wl_split(B * TC, st->ngen, j, &r0, &r1);
		for (int b = 0; b < B; b++) {
			/* rows b*TC .. b*TC+63: query tokens; b*TC+64..66: documents 0..2 of the ranking */
			int q0 = b * TC, q1 = b * TC + QL, d1 = (b + 1) * TC;
			int lo = r0 > q0 ? r0 : q0, hi = r1 < q1 ? r1 : q1;
			if (hi > lo)
				wl_copy_async(st->ctx + (size_t)lo * M, st->query + ((size_t)b * QL + lo - q0) * M,
					      (size_t)(hi - lo) * M * sizeof(float), s[si]);
			lo = r0 > q1 ? r0 : q1;
			hi = r1 < d1 ? r1 : d1;
			if (hi > lo)
				wl_copy_async(st->ctx + (size_t)lo * M, st->rr + ((size_t)b * TK + lo - q1) * M,
					      (size_t)(hi - lo) * M * sizeof(float), s[si]);
		}
	}
	float *out = NULL;
	st->lc = 0;
	k += wl_stack_fwd(&st->gr, st->gw, GL, st->ctx, B, TC, M, GH, GF, FLAGS, &out);
	for (int j = 0; j < st->ngen; j++) {
		int si = 3 * q + j, r0, r1;
		wl_split(B * TC, st->ngen, j, &r0, &r1);
		gpu_linear_fwd(st->ops[si], st->logits + (size_t)r0 * V, out + (size_t)r0 * M, st->lw, st->lb,
			       r1 - r0, M, V);
		k += 2;
	}
	(void)N;
	(void)k; /* equals st->kern, computed in setup */
	return wl_ops_status(st->ops, c->nstreams, e);
}

static int check(void *vst, struct hwq_ctx *c, char *msg, size_t cap, struct aorta_error *e)
{
	struct state *st = vst;
	static float qe[B * E], sims[B * ND], qh[B * M], ret[B * TK * M], score[B * TK], rr[B * TK * M];
	static float ctx[B * TC * M], lg[V], y[M], qmf[M], e1f[M], sf[B * ND], tv[B * TK], sv[B * TK];
	static int32_t tidx[B * TK], sidx[B * TK], ti[B * TK], si[B * TK];
	static double d1[M], d2[M];
	struct wl_err ee = { 0 }, es = { 0 }, er = { 0 }, eq = { 0 }, ey = { 0 }, el = { 0 };
	int bad = 0, rows[2] = { 0, B * TC - 1 }, g = (GL - 1) & 1;
	(void)c;
	if (wl_fetch(qe, st->qe, sizeof qe, e) || wl_fetch(sims, st->sims, sizeof sims, e) ||
	    wl_fetch(qh, st->qh, sizeof qh, e) || wl_fetch(ret, st->ret, sizeof ret, e) ||
	    wl_fetch(score, st->score, sizeof score, e) || wl_fetch(rr, st->rr, sizeof rr, e) ||
	    wl_fetch(ctx, st->ctx, sizeof ctx, e) || wl_fetch(tidx, st->tidx, sizeof tidx, e) ||
	    wl_fetch(sidx, st->sidx, sizeof sidx, e))
		return 0;
	/* embed */
	for (int b = 0; b < B; b++) {
		wl_ref_mean_seq(qmf, st->hq + (size_t)b * QL * M, 1, QL, M);
		for (int i = 0; i < M; i++)
			wl_err_add(&ee, qh[b * M + i], qmf[i]);
		wl_ref_linear_row(d1, qmf, st->hew1, st->heb1, M, M);
		for (int i = 0; i < M; i++)
			e1f[i] = (float)(d1[i] > 0 ? d1[i] : 0);
		wl_ref_linear_row(d2, e1f, st->hew2, st->heb2, M, E);
		double nn = 0;
		for (int i = 0; i < E; i++)
			nn += d2[i] * d2[i];
		nn = sqrt(nn);
		for (int i = 0; i < E; i++)
			wl_err_add(&ee, qe[b * E + i], d2[i] / nn);
	}
	/* retrieve: from the GPU's query embeddings */
	for (int b = 0; b < B; b++) {
		wl_ref_linear_row(d1, qe + b * E, st->hdemb, NULL, E, ND);
		for (int i = 0; i < ND; i++)
			wl_err_add(&es, sims[b * ND + i], d1[i]);
	}
	wl_ref_topk_rows(tv, ti, sims, B, ND, TK, 0);
	for (int i = 0; i < B * TK; i++) {
		bad += ti[i] != tidx[i];
		bad += memcmp(ret + (size_t)i * M, st->hdhid + (size_t)tidx[i] * M, M * sizeof(float)) != 0;
	}
	/* rerank: scores from the GPU's gathered docs and query means */
	for (int r = 0; r < B * TK; r++) {
		static float comb[2 * M];
		memcpy(comb, qh + (r / TK) * M, M * sizeof(float));
		memcpy(comb + M, ret + (size_t)r * M, M * sizeof(float));
		wl_ref_linear_row(d1, comb, st->hrw1, st->hrb1, 2 * M, M);
		for (int i = 0; i < M; i++)
			e1f[i] = (float)(d1[i] > 0 ? d1[i] : 0);
		wl_ref_linear_row(d2, e1f, st->hrw2, st->hrb2, M, 1);
		wl_err_add(&er, score[r], d2[0]);
	}
	wl_ref_sort_desc_rows(sv, si, score, B, TK);
	(void)sf;
	for (int i = 0; i < B * TK; i++) {
		bad += si[i] != sidx[i];
		int b = i / TK;
		bad += memcmp(rr + (size_t)i * M, ret + ((size_t)b * TK + sidx[i]) * M, M * sizeof(float)) != 0;
	}
	/* context */
	for (int b = 0; b < B; b++) {
		bad += memcmp(ctx + (size_t)b * TC * M, st->hq + (size_t)b * QL * M, (size_t)QL * M * 4) != 0;
		bad += memcmp(ctx + ((size_t)b * TC + QL) * M, rr + (size_t)b * TK * M, (size_t)NCTX * M * 4) != 0;
	}
	/* generator */
	if (wl_block_check(&eq, &ey, &st->hgw, st->gr.buf[!g], st->gr.qkv[g], st->gr.buf[g], B, TC, M, GH, GF,
			   FLAGS, rows, 2, e))
		return 0;
	if (wl_fetch(y, st->gr.buf[g] + (size_t)(B * TC - 1) * M, sizeof y, e) ||
	    wl_fetch(lg, st->logits + (size_t)(B * TC - 1) * V, sizeof lg, e))
		return 0;
	{
		static double ld[V];
		wl_ref_linear_row(ld, y, st->hlw, st->hlb, M, V);
		for (int i = 0; i < V; i++)
			wl_err_add(&el, lg[i], ld[i]);
	}
	double re = wl_err_rel(&ee), rs = wl_err_rel(&es), rk = wl_err_rel(&er), rq = wl_err_rel(&eq),
	       ry = wl_err_rel(&ey), rl = wl_err_rel(&el);
	snprintf(msg, cap,
		 "vs CPU (max rel errors): embed %.3g, similarities %.3g, rerank scores %.3g, generator "
		 "last block qkv %.3g / output %.3g (rows 0, 267), logits row 267 %.3g; top-10, gathers, "
		 "sort, reorder and context: %d mismatches",
		 re, rs, rk, rq, ry, rl, bad);
	return re <= 1e-4 && rs <= 1e-4 && rk <= 1e-4 && rq <= 1e-4 && ry <= 1e-4 && rl <= 1e-4 && !bad &&
	       ey.scale > 0 && el.scale > 0;
}

static void teardown(void *vst, struct hwq_ctx *c)
{
	struct state *st = vst;
	float *h[] = { st->hq, st->hdemb, st->hdhid, st->hew1, st->heb1, st->hew2, st->heb2, st->hrw1,
		       st->hrb1, st->hrw2, st->hrb2, st->hlw, st->hlb, st->hgwp };
	wl_ops_destroy(st->ops, c->nstreams);
	wl_events_destroy(st->ev, c->nstreams);
	wl_events_destroy(st->evs, c->nstreams);
	for (size_t i = 0; i < sizeof h / sizeof h[0]; i++)
		free(h[i]);
}

const struct hwq_workload_ops hwq_wl_rag_pipeline = {
	.name = "rag_pipeline", .state_size = sizeof(struct state),
	.setup = setup, .run = run, .check = check, .teardown = teardown,
	.samples_per_iter = B,
	.kern_offset = offsetof(struct state, kern),
};
