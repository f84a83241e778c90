/*
 * wl_ref_p123.h - CPU twins of the P1-P3 hwq workloads' kernels
 * (wl_kernels_p123_gpu.h), in plain C on host memory, for the workloads'
 * checks and for tests/unit/test_hwq_ref.c.  Host code: no CUDA headers
 * (the GPU plug-in calls these through the binary's exported symbols).
 *
 * Semantics are those of the GPU functions of the same name (wlk_X ->
 * wl_ref_X).  The per-row references (attention of one query row, one
 * transformer block row, one conv output pixel, one Linear row) compute in
 * double so a check compares fp32 GPU results with a more exact value.
 */
#ifndef AORTA_HWQ_WL_REF_P123_H
#define AORTA_HWQ_WL_REF_P123_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WL_LN_EPS 1e-5f

/* transformer block flags */
#define WL_BLOCK_PRE_LN 1 /* x + f(LN(x)) (GPT style); else LN(x + f(x)) (nn.TransformerEncoderLayer) */
#define WL_BLOCK_FF 2     /* has the feed-forward half */
#define WL_BLOCK_GELU 4   /* FF activation GELU (else ReLU) */

/* A block's parameters (device pointers on the GPU side, host pointers in
 * the references), carved from one array in this order by wl_ref_block_carve. */
struct wl_block {
	float *ln1_g, *ln1_b; /* [M] */
	float *wqkv, *bqkv;   /* [3M][M], [3M] */
	float *wo, *bo;       /* [M][M], [M] */
	float *ln2_g, *ln2_b; /* [M] */
	float *w1, *b1;       /* [F][M], [F] */
	float *w2, *b2;       /* [M][F], [M] */
};

/* 2M + 3M^2 + 3M + M^2 + M + 2M + FM + F + MF + M = 4M^2 + 2FM + 9M + F */
static inline size_t wl_ref_block_param_floats(int M, int F)
{
	size_t m = (size_t)M, f = (size_t)F;
	return 4 * m * m + 2 * f * m + 9 * m + f;
}

/* h, att, x1, r2 [n][M], f [n][F], mean, rstd [n] */
static inline size_t wl_ref_block_scratch_floats(int n, int M, int F)
{
	return (size_t)n * (4 * (size_t)M + (size_t)F + 2);
}

/* a stack's buffers (wl_stack_alloc): scratch + qkv x2 [n][3M] + buf x2 [n][M] */
static inline size_t wl_ref_stack_floats(int n, int M, int F)
{
	return wl_ref_block_scratch_floats(n, M, F) + 2 * (size_t)n * 3 * M + 2 * (size_t)n * M;
}

void wl_ref_block_carve(struct wl_block *w, float *base, int M, int F);

/* ---- twins of the kernels ---- */
void wl_ref_relu(float *y, const float *x, size_t n);
void wl_ref_softmax_rows(float *y, const float *x, int rows, int cols);
void wl_ref_topk_rows(float *val, int32_t *idx, const float *x, int rows, int cols, int k,
		      int normalize);
void wl_ref_sort_desc_rows(float *val, int32_t *idx, const float *x, int rows, int cols);
void wl_ref_cumprod_rows(float *y, const float *x, int rows, int cols);
void wl_ref_argmax_rows(int32_t *idx, const float *x, int rows, int cols);
void wl_ref_copy_cols(float *dst, int ld_dst, int col0, const float *src, int rows, int cols);
void wl_ref_gather_rows(float *dst, const float *src, const int32_t *idx, int n, int cols);
void wl_ref_mean_seq(float *y, const float *x, int B, int T, int C);
void wl_ref_l2norm_rows(float *y, const float *x, int rows, int cols);
void wl_ref_moe_weight(float *y, const float *x, const float *w, const int32_t *idx, int e, int k,
		       int t0, int t1, int cols);
void wl_ref_accept_flags(float *flags, const int32_t *pred, const int32_t *draft, const int32_t *forced,
			 int n);
void wl_ref_mask_tokens(float *out, const int32_t *tok, const float *mask, int n);
void wl_ref_cache_decay(float *cache, int b0, int b1, int H, int S, int hd, int pos);
void wl_ref_im2col3x3(float *col, const float *x, int H, int W, int C);
void wl_ref_maxpool2(float *y, const float *x, int H, int W, int C);
void wl_ref_normalize_flip(float *out, const float *in, const int32_t *flip, int b0, int b1, int C,
			   int H, int W, const float mean[3], const float std[3]);

/* ---- per-row references in double ---- */
/* y[o] = sum_i x[i] W[o][i] + b[o]  (b may be NULL) */
void wl_ref_linear_row(double *y, const float *x, const float *W, const float *b, int in, int out);
/* LayerNorm of one row of c values */
void wl_ref_layernorm_row(double *y, const double *x, const float *g, const float *b, int c);
/* Attention output row r (of n = B*T) from qkv [n][3M]: out[M] */
void wl_ref_attention_row(double *out, const float *qkv, int r, int T, int M, int H);
/* One block's output row r from its input x [n][M] and the GPU's qkv
 * [n][3M] (so the row's attention uses the keys the GPU computed: the
 * qkv rows are checked separately through qkv_row).  qkv_row (may be NULL)
 * receives the reference [3M] qkv of row r. */
void wl_ref_block_row(double *y, double *qkv_row, const struct wl_block *w, const float *x,
		      const float *qkv, int r, int T, int M, int H, int F, int flags);
/* conv 3x3 pad 1 of NHWC x [H][W][C] at output pixel (py, px) with
 * weights [Cout][9C] ((ky*3+kx)*C + c) and bias: out[Cout] (before ReLU) */
void wl_ref_conv3x3_pixel(double *out, const float *x, const float *w, const float *b, int H, int W,
			  int C, int Cout, int py, int px);

/* ---- comparison ---- */
/* Accumulates the worst error of got against want: err = |got - want|,
 * scale = max |want| seen; wl_ref_err_rel gives err / max(scale, 1e-30). */
struct wl_err {
	double max_abs, scale;
	long long n;
};
void wl_err_add(struct wl_err *e, double got, double want);
double wl_err_rel(const struct wl_err *e);

/* Row range of part i of n items split into p parts: [n i / p, n (i+1) / p) */
static inline void wl_split(int n, int p, int i, int *lo, int *hi)
{
	*lo = (int)((long long)n * i / p);
	*hi = (int)((long long)n * (i + 1) / p);
}

/* Deterministic uniform [0, 1) from (seed, site, i) (splitmix64) */
double wl_ref_uniform(uint64_t seed, uint64_t site, uint64_t i);

#ifdef __cplusplus
}
#endif
#endif
