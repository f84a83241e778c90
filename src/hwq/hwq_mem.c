/*
 * hwq_mem.c - device bytes of the P1-P3 hwq workloads (see hwq_mem.h).
 *
 * Each function adds up, buffer by buffer in the order its setup allocates
 * them, the floats that setup hwq_allocs; setup compares its own total with
 * the function's and fails (internal error) on any difference, so the two
 * cannot drift apart unnoticed.  F4 = sizeof(float).
 */
#include "hwq/hwq_mem.h"

#include "hwq/wl_ref_p123.h"

#define F4 4ull

static uint64_t u(uint64_t a)
{
	return a;
}

/* input staging + working [32][1024] x2; per MLP (8): W1 2048x1024 + b1
 * 2048, W2 2048x2048 + b2 2048, W3 512x2048 + b3 512, h1, h2 [32][2048],
 * out [32][512]; concat [32][4096]; aggregation W 512x4096 + b 512; y
 * [32][512].  Independent of the stream count. */
uint64_t hwq_mem_graph_subgraphs(int nstreams)
{
	(void)nstreams;
	uint64_t mlp = u(2048) * 1024 + 2048 + u(2048) * 2048 + 2048 + u(512) * 2048 + 512 +
		       2 * u(32) * 2048 + u(32) * 512;
	return F4 * (2 * u(32) * 1024 + 8 * mlp + u(32) * 4096 + u(512) * 4096 + 512 + u(32) * 512);
}

/* R = 16*256 rows, D = 1024, DF = 4096: input [R][D]; per region (3): LN
 * g, b [D], fc1 DF x D + DF, fc2 D x DF + D, scratch h [R][D], mean, rstd
 * [R], f [R][DF]; outputs a, b, c [R][D]; concat [R][2D]; merge W D x 2D +
 * D; y [R][D].  Independent of the stream count. */
uint64_t hwq_mem_torch_compile(int nstreams)
{
	(void)nstreams;
	uint64_t R = 16 * 256, D = 1024, DF = 4096;
	uint64_t region = 2 * D + DF * D + DF + D * DF + D + R * D + 2 * R + R * DF;
	return F4 * (R * D + 3 * region + 3 * R * D + R * 2 * D + D * 2 * D + D + R * D);
}

/* T = 4*512 tokens, D = 1024, DF = 4096, 8 experts: x [T][D]; gate W 8 x
 * D; logits, probs [T][8]; routing weights and indices (int32) [T][2]; per
 * expert: fc1 DF x D, fc2 D x DF, hidden [T][DF], weighted out [T][D];
 * combined [T][D].  Independent of the stream count (chunks of one expert
 * share its buffers). */
uint64_t hwq_mem_moe(int nstreams)
{
	(void)nstreams;
	uint64_t T = 4 * 512, D = 1024, DF = 4096;
	return F4 * (T * D + 8 * D + 2 * T * 8 + 2 * T * 2 + 8 * (2 * DF * D + T * DF + T * D) + T * D);
}

/* MLP 1024 -> 2048 -> 2048 -> 1000: P = 2048*1024 + 2048 + 2048*2048 +
 * 2048 + 1000*2048 + 1000 parameters; 4 microbatches of 32 (S = 128
 * samples): params P; x [S][1024]; a1, a2, d1, d2 [S][2048]; out
 * [S][1000]; dy [32][1000]; one gradient set P per item (items = 4c, c =
 * ceil(ncompute / 4), ncompute = max(1, N/2)); reduced gradient P. */
uint64_t hwq_mem_grad_accum(int nstreams)
{
	uint64_t P = u(2048) * 1024 + 2048 + u(2048) * 2048 + 2048 + u(1000) * 2048 + 1000, S = 128;
	int ncomp = nstreams / 2 > 1 ? nstreams / 2 : 1;
	uint64_t items = 4 * (uint64_t)((ncomp + 3) / 4);
	return F4 * (P + S * 1024 + 4 * S * 2048 + S * 1000 + u(32) * 1000 + items * P + P);
}

/* 4 layers of D = 4096, batch 16: per layer W1, W2 D x D, b1, b2 [D] and
 * the prefetch target D x D; activations act[0..4], hid[0..3] [16][D];
 * dy ping-pong x2, dh, ones [16][D]; a partial gradient set (4 x (2 D^2 +
 * 2 D)) per compute stream (N - 2t, t = max(1, N/3)) and the total set.
 * Pinned host buffers (params, optimizer states, staging) are not device
 * memory and not counted. */
uint64_t hwq_mem_zero_offload(int nstreams)
{
	uint64_t D = 4096, W = D * D, B = 16, G = 4 * (2 * W + 2 * D);
	int t = nstreams / 3 > 1 ? nstreams / 3 : 1;
	uint64_t ncomp = (uint64_t)(nstreams - 2 * t);
	return F4 * (4 * (3 * W + 2 * D) + 5 * B * D + 4 * B * D + 4 * B * D + ncomp * G + G);
}

/* 2 batches of 32 images 3x224x224 (I = 150528 floats): raw and
 * preprocessed per batch; flip flags [64] (int32); conv weights 64 x 27,
 * 128 x 576, 256 x 1152 and fc 1000 x 256 with their biases; features
 * [64][256]; logits [64][1000]; per compute stream (N - 2t, t = max(1,
 * N/3)) one image's scratch: im2col 112*112*576, a1 224*224*64, p1
 * 112*112*64, a2 112*112*128, p2 56*56*128, a3 56*56*256.  Pinned host
 * sources are not counted. */
uint64_t hwq_mem_async_dataload(int nstreams)
{
	uint64_t I = 3 * u(224) * 224;
	int t = nstreams / 3 > 1 ? nstreams / 3 : 1;
	uint64_t ncomp = (uint64_t)(nstreams - 2 * t);
	uint64_t w = u(64) * 27 + 64 + u(128) * 576 + 128 + u(256) * 1152 + 256 + u(1000) * 256 + 1000;
	uint64_t scr = u(112) * 112 * 576 + u(224) * 224 * 64 + u(112) * 112 * 64 + u(112) * 112 * 128 +
		       u(56) * 56 * 128 + u(56) * 56 * 256;
	return F4 * (2 * 2 * 32 * I + 64 + w + u(64) * 256 + u(64) * 1000 + ncomp * scr);
}

/* 8 attention blocks of M = 1024 without feed-forward (block params with
 * F = 0); prefill input [2*512][M], decode input [16][M]; a stack's buffers
 * for 1024 rows and for 16 rows (wl_ref_stack_floats); KV cache 8 layers x
 * (k, v) x [18][8][2048][128]. */
uint64_t hwq_mem_continuous_batch(int nstreams)
{
	(void)nstreams;
	uint64_t M = 1024;
	return F4 * (8 * wl_ref_block_param_floats(1024, 0) + 1024 * M + 16 * M +
		     wl_ref_stack_floats(1024, 1024, 0) + wl_ref_stack_floats(16, 1024, 0) +
		     u(8) * 2 * 18 * 8 * 2048 * 128);
}

/* one LM of hidden M and L layers (F = 4M), vocab 32000, up to 132 rows:
 * L blocks, embedding V x M, final LN g, b [M], lm_head V x M, embedded
 * input [132][M], logits [132][V], a stack's buffers for 132 rows */
static uint64_t lm_floats(int M, int L)
{
	uint64_t V = 32000, T = 132;
	return (uint64_t)L * wl_ref_block_param_floats(M, 4 * M) + V * M + 2 * (uint64_t)M + V * M +
	       T * M + T * V + wl_ref_stack_floats(132, M, 4 * M);
}

/* draft LM (256, 4 layers) + main LM (1024, 12 layers); token ids [132],
 * predictions [4], forced flags [4] (int32), flags, mask, cache [4] */
uint64_t hwq_mem_speculative_decode(int nstreams)
{
	(void)nstreams;
	return F4 * (lm_floats(256, 4) + lm_floats(1024, 12) + 132 + 5 * 4);
}

/* B = 4 queries of QL = 64 x M = 768, E = 256, 100 documents, top 10,
 * context 67 tokens, vocab 32000: inputs (queries, doc embeddings, doc
 * hidden), embed MLP, reranker, lm_head (+ bias); embed buffers qm, e1
 * [B][M], e2, qe [B][E]; sims [B][100]; top-10 values, indices, repeat
 * indices, scores, sorted values and indices [B*10] each; gathered docs,
 * repeated query means, reranker hidden, reordered docs [B*10][M]; concat
 * [B*10][2M]; qh [B][M]; context [B*67][M]; logits [B*67][V]; 4 generator
 * blocks (F = 4M) and a stack's buffers for B*67 rows. */
uint64_t hwq_mem_rag_pipeline(int nstreams)
{
	(void)nstreams;
	uint64_t B = 4, QL = 64, M = 768, E = 256, ND = 100, TK = 10, TC = 67, V = 32000;
	uint64_t inputs = B * QL * M + ND * E + ND * M + M * M + M + E * M + E + M * 2 * M + M + M + 1 +
			  V * M + V;
	uint64_t bufs = 2 * B * M + 2 * B * E + B * ND + 6 * B * TK + 4 * B * TK * M + B * TK * 2 * M +
			B * M + B * TC * M + B * TC * V;
	return F4 * (inputs + bufs + 4 * wl_ref_block_param_floats(768, 3072) +
		     wl_ref_stack_floats(4 * 67, 768, 3072));
}

/* "small": M = 512, 8 heads, F = 2048, 4 layers, R = 8*512 rows, P =
 * 8*8*512*512 attention probabilities: 4 blocks; input, gradient buffer
 * [M][M], its reduced copy, ones [R][M]; per layer: shard M x M, gathered
 * 8 M x M, p2p receive [R][M], saved h1, att, x1, h2, out [R][M], LN
 * means/rstds 4 x [R], qkv [R][3M], probabilities P, z, f [R][F];
 * backward: dX, datt, dS x2 (parity), df, dz [R][F], dh2, dx1, dh1 [R][M],
 * dqkv [R][3M]. */
uint64_t hwq_mem_fsdp_tp(int nstreams)
{
	(void)nstreams;
	uint64_t M = 512, F = 2048, R = 8 * 512, P = u(8) * 8 * 512 * 512;
	uint64_t layer = M * M + 8 * M * M + R * M + 5 * R * M + 4 * R + R * 3 * M + P + 2 * R * F;
	return F4 * (4 * wl_ref_block_param_floats(512, 2048) + R * M + 2 * M * M + R * M + 4 * layer +
		     2 * (2 * R * M + P) + 2 * R * F + 3 * R * M + R * 3 * M);
}

/* 8 blocks of M = 1024, F = 4096 (LN g, b; fc1 F x M + F; fc2 M x F + M),
 * R = 4*512 rows: input and 4 checkpoints [R][M]; forward scratch ftmp, h
 * [R][M], mean, rstd [R], f [R][F]; 2 recompute sets (segment parity) of
 * mid [R][M] and per block (2) h [R][M], mean, rstd [R], a [R][F];
 * gradient dy x2, dh, ones, dmid [R][M], da [R][F]. */
uint64_t hwq_mem_activation_ckpt(int nstreams)
{
	(void)nstreams;
	uint64_t M = 1024, F = 4096, R = 4 * 512;
	uint64_t PL = 2 * M + F * M + F + M * F + M;
	uint64_t rec = R * M + 2 * (R * M + 2 * R + R * F);
	return F4 * (8 * PL + R * M + 4 * R * M + 2 * R * M + 2 * R + R * F + 2 * rec + 5 * R * M + R * F);
}

