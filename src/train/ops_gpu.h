/*
 * ops_gpu.h - private extensions of the gpu_* operations of ops.h, used by
 * the GPU model (model_gpu.c).  They have no CPU twin of their own: each is
 * a composition of cpu_* operations, and test_gpu_ops.c checks it against
 * that composition.
 *
 * Same conventions as ops.h: row-major fp32, device pointers, enqueued on
 * the context's stream, errors sticky in the context (gpu_ops_last_error).
 */
#ifndef AORTA_TRAIN_OPS_GPU_H
#define AORTA_TRAIN_OPS_GPU_H

#include "train/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* y = beta * y + x W^T + b  (beta 0 or 1; b may be NULL) */
void gpu_linear_fwd_ex(gpu_ops_ctx *c, float *y, const float *x, const float *W, const float *b,
		       int n, int in, int out, float beta);
/* As gpu_linear_bwd, but dx += dy W when dx_acc != 0 (the residual branch). */
void gpu_linear_bwd_ex(gpu_ops_ctx *c, float *dx, float *dW, float *db, const float *dy,
		       const float *x, const float *W, int n, int in, int out, int dx_acc);
/* h = x W^T + b, then y = dropout(gelu(h)); h is kept for the backward. */
void gpu_linear_gelu_dropout_fwd(gpu_ops_ctx *c, float *y, float *h, const float *x,
				 const float *W, const float *b, int n, int in, int out, float p,
				 uint64_t seed, uint64_t site);
/* dh = gelu'(h) * dropout_bwd(dy)  (in place allowed: dh may alias dy) */
void gpu_dropout_gelu_bwd(gpu_ops_ctx *c, float *dh, const float *dy, const float *h, size_t n,
			  float p, uint64_t seed, uint64_t site);
/* r = res + dropout(a); y = LayerNorm(r)  (r kept for the backward) */
void gpu_residual_dropout_layernorm_fwd(gpu_ops_ctx *c, float *y, float *r, float *mean,
					float *rstd, const float *res, const float *a,
					const float *g, const float *b, int n, int cdim, float eps,
					float p, uint64_t seed, uint64_t site);
/* On device: norm = sqrt(*sumsq_dev) * extra (extra = 1 / loss scale), and
 * *gscale_dev = extra * min(1, max_norm / (norm + 1e-6)) (PyTorch's
 * clip_grad_norm_); max_norm <= 0 disables clipping. */
void gpu_clip_scale(gpu_ops_ctx *c, float *gscale_dev, const double *sumsq_dev, float max_norm,
		    float extra);
void gpu_fill(gpu_ops_ctx *c, float *x, float v, size_t n);

#ifdef __cplusplus
}
#endif
#endif
