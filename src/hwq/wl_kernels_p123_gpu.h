/*
 * wl_kernels_p123_gpu.h - the small kernels the P1-P3 hwq workloads need
 * beyond src/train/ops.h (softmax over a row, top-k, sort, cumprod,
 * concatenation, gathers, pooling, im2col for the CNN, image
 * normalize/flip, long-sequence attention), plus the transformer block the
 * inference and distributed workloads share (wl_block_fwd_a/_b,
 * wl_stack_fwd).  GPU builds only.
 *
 * Every function only enqueues on `stream` (a cudaStream_t passed as void *)
 * and never synchronises, so a workload's iteration stays capturable.  Each
 * has a CPU twin of the same name with wl_ref_ in src/hwq/wl_ref_p123.h,
 * which the workloads' checks use.  Launch errors are left to the caller's
 * cudaGetLastError (the harness checks after every iteration).
 *
 * Layouts are row-major fp32; index arrays are int32.
 */
#ifndef AORTA_HWQ_WL_KERNELS_P123_GPU_H
#define AORTA_HWQ_WL_KERNELS_P123_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "hwq/hwq_gpu.h"
#include "hwq/wl_ref_p123.h"
#include "kernels/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* most streams any P1-P3 workload accepts (moe, graph_subgraphs: 32) */
#define WL_MAX_STREAMS 64

/* y = max(x, 0) (y may alias x) */
void wlk_relu(float *y, const float *x, size_t n, void *stream);
/* dx = dy where y > 0, else 0 (ReLU backward from its output y; dx may alias dy) */
void wlk_relu_bwd(float *dx, const float *dy, const float *y, size_t n, void *stream);
/* KV-cache touch of upstream's continuous_batch: for b in [b0, b1), every
 * head h and d < hd: c[b][h][pos][d] = 0.99 c[b][h][pos][d] + 0.01, c laid
 * out [B][H][S][hd] */
void wlk_cache_decay(float *cache, int b0, int b1, int H, int S, int hd, int pos, void *stream);
/* flags[i] = 1 if pred[i] == draft[i] or forced[i] != 0, else 0
 * (speculative decoding's acceptance; forced: fixed random acceptances) */
void wlk_accept_flags(float *flags, const int32_t *pred, const int32_t *draft, const int32_t *forced,
		      int n, void *stream);
/* out[i] = (float)tok[i] * mask[i]  (the accepted tokens' cache update) */
void wlk_mask_tokens(float *out, const int32_t *tok, const float *mask, int n, void *stream);
/* y = a x (y may alias x): the mock collectives' "clone * 1.0" */
void wlk_scale(float *y, const float *x, float a, size_t n, void *stream);
/* y = v */
void wlk_fill(float *y, float v, size_t n, void *stream);
/* y[r] = softmax(x[r]) over cols (y may alias x) */
void wlk_softmax_rows(float *y, const float *x, int rows, int cols, void *stream);
/* The k largest of each row, largest first (ties: lower index first);
 * normalize != 0 divides the k values by their sum (MoE routing weights). */
void wlk_topk_rows(float *val, int32_t *idx, const float *x, int rows, int cols, int k,
		   int normalize, void *stream);
/* Each row sorted descending: val = sorted values, idx = their columns
 * (stable: equal values keep column order). */
void wlk_sort_desc_rows(float *val, int32_t *idx, const float *x, int rows, int cols, void *stream);
/* y[r][c] = prod_{j <= c} x[r][j] */
void wlk_cumprod_rows(float *y, const float *x, int rows, int cols, void *stream);
/* dst[r][col0 + c] = src[r][c] for c < cols; dst has ld_dst columns (concat) */
void wlk_copy_cols(float *dst, int ld_dst, int col0, const float *src, int rows, int cols,
		   void *stream);
/* dst[i] = src[idx[i]] (rows of `cols` floats) */
void wlk_gather_rows(float *dst, const float *src, const int32_t *idx, int n, int cols,
		     void *stream);
/* y[b][c] = mean_t x[b][t][c]  (sequence mean pooling; also global average pooling of NHWC) */
void wlk_mean_seq(float *y, const float *x, int B, int T, int C, void *stream);
/* y[r] = x[r] / max(||x[r]||_2, 1e-12)  (F.normalize) */
void wlk_l2norm_rows(float *y, const float *x, int rows, int cols, void *stream);
/* y[t][:] = x[t][:] * weight of expert e for token t (the w[t][j] with
 * idx[t][j] == e, else 0); rows t0..t1-1 only (y may alias x) */
void wlk_moe_weight(float *y, const float *x, const float *w, const int32_t *idx, int e, int k,
		    int t0, int t1, int cols, void *stream);
/* idx[r] = argmax over cols of x[r] (first maximum) */
void wlk_argmax_rows(int32_t *idx, const float *x, int rows, int cols, void *stream);
/* out[r] = table[ids[r]] (embedding lookup, rows of E floats) */
void wlk_embed(float *out, const float *table, const int32_t *ids, int n, int E, void *stream);

/* Attention of query rows r0..r1-1 only (rows of n = B*T); probs (may be
 * NULL) receives their softmax rows in [B][H][T][T]. */
void wlk_attention_rows(float *out, float *probs, const float *qkv, int T, int M, int H, int r0, int r1,
			void *stream);
/* Attention backward (p = 0) in two passes over rows r0..r1-1: A writes
 * dS = P (dP - rowsum(P dP)) rows ([B][H][T][T]) and the dQ columns of
 * dqkv; B (after A of every row of the sequence) writes the dK and dV
 * columns.  dout [n][M]; same semantics as cpu_attention_bwd with p = 0. */
void wlk_attention_bwd_a(float *dqkv, float *dS, const float *dout, const float *qkv,
			 const float *probs, int T, int M, int H, int r0, int r1, void *stream);
void wlk_attention_bwd_b(float *dqkv, const float *dS, const float *dout, const float *qkv,
			 const float *probs, int T, int M, int H, int r0, int r1, void *stream);

/* ---- CNN pieces (NHWC, one image) ---------------------------------- */
/* col[(y*W + x)][(ky*3 + kx)*C + c] = x[y+ky-1][x+kx-1][c], zero outside */
void wlk_im2col3x3(float *col, const float *x, int H, int W, int C, void *stream);
/* y[H/2][W/2][C] = max over 2x2 windows of x[H][W][C] */
void wlk_maxpool2(float *y, const float *x, int H, int W, int C, void *stream);
/* Images NCHW -> normalized NHWC: out[b][y][x][c] = (in[b][c][y][xs] -
 * mean[c]) / std[c] with xs = W-1-x when flip[b] else x (images b0..b1-1) */
void wlk_normalize_flip(float *out, const float *in, const int32_t *flip, int b0, int b1, int C,
			int H, int W, float m0, float m1, float m2, float s0, float s1, float s2,
			void *stream);

/* ---- the shared transformer block ----------------------------------- */
/* flags: WL_BLOCK_* in wl_ref_p123.h */

/* struct wl_block (pointers to a block's parameters) is in wl_ref_p123.h */

struct wl_block_scratch {   /* device, n = B*T rows; row r is only touched by the stream owning r */
	float *h;               /* [n][M] */
	float *att;             /* [n][M] */
	float *x1;              /* [n][M] */
	float *r2;              /* [n][M] */
	float *f;               /* [n][F] */
	float *mean, *rstd;     /* [n] */
};

/* floats of one scratch set (wl_ref_block_scratch_floats) */
size_t wl_block_scratch_floats(int n, int M, int F);
void wl_block_scratch_carve(struct wl_block_scratch *s, float *base, int n, int M, int F);
/* floats of one block's parameters (wl_ref_block_param_floats) */
size_t wl_block_param_floats(int M, int F);

/* Phase A of rows r0..r1-1: qkv = Wqkv (LN1(x) if pre-LN else x) + b.
 * Returns the kernel launches enqueued (cuBLAS GEMM counted as one). */
int wl_block_fwd_a(gpu_ops_ctx *ops, const struct wl_block *w, struct wl_block_scratch *s,
		   float *qkv, const float *x, int M, int flags, int r0, int r1);
/* Phase B of rows r0..r1-1 (needs phase A of every row of their batch
 * element done): attention, projection, residual(s), LayerNorm(s), FF;
 * writes y rows r0..r1-1 (y must not alias x). */
int wl_block_fwd_b(gpu_ops_ctx *ops, void *stream, const struct wl_block *w,
		   struct wl_block_scratch *s, const float *qkv, float *y, const float *x, int T,
		   int M, int H, int F, int flags, int r0, int r1);

/* A stack of blocks spread over ns streams by rows: stream i owns rows
 * [n i / ns, n (i+1) / ns); per layer every stream runs phase A on its
 * rows, records ev[i], waits every other stream's event, runs phase B.
 * qkv is double-buffered by a global layer counter (so a stream's next
 * phase A cannot overwrite keys another stream still reads), activations
 * ping-pong between buf[0] and buf[1] (layer L writes buf[L & 1]). */
struct wl_stack_run {
	int ns;
	void **streams;         /* [ns] cudaStream_t */
	void **ev;              /* [ns] cudaEvent_t, created by the workload */
	gpu_ops_ctx **ops;      /* [ns], one per stream */
	struct wl_block_scratch *s;
	float *qkv[2];          /* [n][3M] each */
	float *buf[2];          /* [n][M] each */
	int *layer_counter;
};
/* *out = the last layer's output (buf[(nl-1) & 1]); x must not be a buf. */
int wl_stack_fwd(struct wl_stack_run *sr, const struct wl_block *layers, int nl, const float *x,
		 int B, int T, int M, int H, int F, int flags, float **out);
/* Launches wl_stack_fwd enqueues for n rows over ns streams (as it counts them) */
long long wl_stack_kernels(int ns, int n, int nl, int flags);
/* Every stream waits for every other one's work so far (ev[i] re-recorded). */
void wl_barrier(void **streams, void **ev, int ns);

/* ---- workload plumbing (host side of the plug-in) -------------------- */
/* One gpu_ops_ctx (fp32, own cuBLAS handle) per stream 0..n-1 of c. */
enum aorta_status wl_ops_create(struct hwq_ctx *c, gpu_ops_ctx **ops, int n, struct aorta_error *e);
void wl_ops_destroy(gpu_ops_ctx **ops, int n);
/* AORTA_EGPU with the first sticky error of the contexts */
enum aorta_status wl_ops_status(gpu_ops_ctx **ops, int n, struct aorta_error *e);
/* n events without timing (cudaEvent_t as void *) */
enum aorta_status wl_events_create(void **ev, int n, struct aorta_error *e);
void wl_events_destroy(void **ev, int n);
void wl_record(void *ev, void *stream);
void wl_wait(void *stream, void *ev);
/* cudaMemcpyAsync with cudaMemcpyDefault (pinned host or device) */
void wl_copy_async(void *dst, const void *src, size_t bytes, void *stream);
/* synchronous copy for checks */
enum aorta_status wl_fetch(void *dst, const void *src, size_t bytes, struct aorta_error *e);
/* hwq_alloc of nfloats floats, adding the bytes to *total (compared with hwq_mem_NAME) */
float *wl_alloc(struct hwq_ctx *c, size_t nfloats, uint64_t *total, struct aorta_error *e);
/* Linear init as PyTorch's bound: W, b uniform in +-1/sqrt(in) (hosts may be NULL; b may be NULL) */
enum aorta_status wl_init_linear(struct hwq_ctx *c, float *W, float *Wh, float *b, float *bh, int in,
				 int out, uint64_t site, struct aorta_error *e);
/* A block's parameters (wh: host copies, may be NULL); uses sites site..site+11 */
enum aorta_status wl_init_block(struct hwq_ctx *c, const struct wl_block *w, const struct wl_block *wh,
				int M, int F, uint64_t site, struct aorta_error *e);

/* Scratch (carved into *s), qkv[2] and buf[2] of a stack over n rows
 * (wl_ref_stack_floats(n, M, F) floats in all); sr->s = s. */
enum aorta_status wl_stack_alloc(struct hwq_ctx *c, struct wl_stack_run *sr, struct wl_block_scratch *s,
				 int n, int M, int F, uint64_t *tot, struct aorta_error *e);
/* nl blocks, one allocation of wl_ref_block_param_floats each, initialised
 * from sites site + 16 l; with host != NULL, layer host_layer's parameters
 * are also kept in a malloc'd host array (*host, carved into *hw). */
enum aorta_status wl_layers_alloc(struct hwq_ctx *c, struct wl_block *w, int nl, int M, int F,
				  float **host, struct wl_block *hw, int host_layer, uint64_t site,
				  uint64_t *tot, struct aorta_error *e);
/* One block's GPU rows (qkv and output) against wl_ref_block_row, from the
 * block's input x_dev and GPU outputs qkv_dev, y_dev (device, B*T rows). */
enum aorta_status wl_block_check(struct wl_err *eq, struct wl_err *ey, const struct wl_block *hw,
				 const float *x_dev, const float *qkv_dev, const float *y_dev, int B,
				 int T, int M, int H, int F, int flags, const int *rows, int nrows,
				 struct aorta_error *e);

#ifdef __cplusplus
}
#endif
#endif
