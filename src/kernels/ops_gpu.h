/*
 * ops_gpu.h - private extensions of the gpu_* operations of ops.h, used by
 * the GPU model (model_gpu.c).  They have no CPU twin of their own: each is
 * a composition of cpu_* operations, and test_gpu_ops.c checks it against
 * that composition.
 *
 * Same conventions as ops.h: row-major fp32, device pointers, enqueued on
 * the context's stream, errors sticky in the context (gpu_ops_last_error).
 */
#ifndef AORTA_KERNELS_OPS_GPU_H
#define AORTA_KERNELS_OPS_GPU_H

#include "kernels/ops.h"

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

/* ---- per-step values read on device (CUDA graph replay) ----------------
 * A captured graph bakes every kernel argument in, so what changes from
 * step to step must live in device memory that the graph reads.  With a
 * seed pointer set, every dropout kernel enqueued through c (fused or not)
 * reads its seed from *seed_dev when it runs and ignores the seed argument;
 * NULL (the default) restores by-value seeds.  The pointer is read at
 * enqueue time, so set it around the calls it should apply to. */
void gpu_ops_set_seed_dev(gpu_ops_ctx *c, const uint64_t *seed_dev);
/* Forgets the context's sticky error and the runtime's last error (after a
 * failed capture, before running the same work eagerly). */
void gpu_ops_clear_error(gpu_ops_ctx *c);

/* AdamW's per-step scalars, exactly as gpu_adamw derives them from (lr, t):
 * decay = 1 - lr wd, step_size = lr / (1 - beta1^t), inv_sqrt_bc2 =
 * 1 / sqrt(1 - beta2^t) (bias corrections in double, stored as float). */
struct gpu_adam_hp {
	float lr, beta1, beta2, eps, decay, step_size, inv_sqrt_bc2;
};
void gpu_adam_hp_make(struct gpu_adam_hp *h, float lr, float beta1, float beta2, float eps, float wd,
		      int t);
/* gpu_adamw with its scalars read on device from *hp_dev when the kernel
 * runs (filled by gpu_adam_hp_make on the host and copied there). */
void gpu_adamw_dev(gpu_ops_ctx *c, float *p, const float *g, float *m, float *v, size_t n,
		   const struct gpu_adam_hp *hp_dev, const float *gscale_dev);

#ifdef __cplusplus
}
#endif
#endif
