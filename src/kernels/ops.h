/*
 * ops.h - the ranking transformer's operations, each defined once here and
 * implemented twice: cpu_* in C (ops_cpu.c, the reference, runs in CI) and
 * gpu_* in CUDA (ops_gpu.cu, device pointers, enqueued on a stream).  A
 * test on the device compares every gpu_* with its cpu_* on random data
 * (fp32 ~1e-5 relative, bf16 ~1e-2).
 *
 * Conventions (all row-major, fp32 unless stated):
 *  - Linear: y[n][o] = sum_i x[n][i] * W[o][i] + b[o]   (W is [out][in], as PyTorch)
 *  - backward functions ACCUMULATE into parameter gradients (dW, db, dg,
 *    dtable: +=) so gradient accumulation over micro-batches is free, and
 *    OVERWRITE input gradients (dx) unless the name says _acc.
 *  - GELU is the exact erf form (PyTorch "gelu"): 0.5 x (1 + erf(x / sqrt 2)).
 *  - Dropout keeps element i with probability 1-p and scales by 1/(1-p); the
 *    keep decision is rng_uniform(seed, site, i) >= p (rng.h), so CPU and GPU
 *    drop exactly the same elements.  p == 0 is the identity.
 *  - Attention: qkv is [B*T][3M] = [q | k | v], head h uses columns
 *    h*hd..(h+1)*hd of each (hd = M/H).  att = softmax(q k^T / sqrt(hd)) per
 *    (b, h), no mask; dropout on att (site), then out = att v, heads
 *    concatenated into [B*T][M].  probs (pre-dropout softmax) is saved [B][H][T][T].
 *  - LayerNorm over the last dimension c with eps; mean and rstd saved per row.
 *  - BCE with logits, weighted: loss = mean_i w_i * (max(z,0) - z y + log(1+exp(-|z|))).
 */
#ifndef AORTA_KERNELS_OPS_H
#define AORTA_KERNELS_OPS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- CPU reference (ops_cpu.c) ----------------------------------------- */
void cpu_linear_fwd(float *y, const float *x, const float *W, const float *b, int n, int in, int out);
/* dx may be NULL (no input gradient); db may be NULL */
void cpu_linear_bwd(float *dx, float *dW, float *db, const float *dy, const float *x,
		    const float *W, int n, int in, int out);
/* out[r][e] = mean_s table[ids[r][s]][e], r < n rows of S ids */
void cpu_embbag_mean_fwd(float *out, const float *table, const int32_t *ids, int n, int S, int E);
void cpu_embbag_mean_bwd(float *dtable, const float *dout, const int32_t *ids, int n, int S, int E);
void cpu_layernorm_fwd(float *y, float *mean, float *rstd, const float *x, const float *g,
		       const float *b, int n, int c, float eps);
void cpu_layernorm_bwd(float *dx, float *dg, float *db, const float *dy, const float *x,
		       const float *mean, const float *rstd, const float *g, int n, int c);
void cpu_gelu_fwd(float *y, const float *x, size_t n);
void cpu_gelu_bwd(float *dx, const float *dy, const float *x, size_t n);
void cpu_dropout_fwd(float *y, const float *x, size_t n, float p, uint64_t seed, uint64_t site);
void cpu_dropout_bwd(float *dx, const float *dy, size_t n, float p, uint64_t seed, uint64_t site);
void cpu_attention_fwd(float *out, float *probs, const float *qkv, int B, int T, int M, int H,
		       float p, uint64_t seed, uint64_t site);
void cpu_attention_bwd(float *dqkv, const float *dout, const float *qkv, const float *probs,
		       int B, int T, int M, int H, float p, uint64_t seed, uint64_t site);
void cpu_add(float *y, const float *a, const float *b, size_t n);        /* y = a + b (y may alias) */
/* Writes dlogits = scale * d(loss)/d(logit) and returns the loss (mean). */
float cpu_bce_fwd_bwd(float *dlogits, const float *logits, const float *target,
		      const float *weight, size_t n, float scale);
/* One AdamW step (PyTorch semantics, decoupled weight decay, bias correction
 * with step t >= 1); g is multiplied by gscale first (clipping / unscaling). */
void cpu_adamw(float *p, const float *g, float *m, float *v, size_t n, float lr, float beta1,
	       float beta2, float eps, float wd, int t, float gscale);
double cpu_sumsq(const float *x, size_t n);

/* ---- GPU (ops_gpu.cu): same semantics, device pointers, stream = cudaStream_t ---- */
typedef struct gpu_ops_ctx gpu_ops_ctx; /* cuBLAS handle, workspace, precision */
enum gpu_precision { PREC_FP32 = 0, PREC_BF16 = 1, PREC_FP16 = 2 };
gpu_ops_ctx *gpu_ops_create(void *stream, enum gpu_precision prec);
void gpu_ops_destroy(gpu_ops_ctx *c);
void gpu_ops_set_stream(gpu_ops_ctx *c, void *stream);
int gpu_ops_last_error(gpu_ops_ctx *c, char *msg, size_t len); /* 0 if none */

void gpu_linear_fwd(gpu_ops_ctx *c, float *y, const float *x, const float *W, const float *b, int n, int in, int out);
void gpu_linear_bwd(gpu_ops_ctx *c, float *dx, float *dW, float *db, const float *dy, const float *x,
		    const float *W, int n, int in, int out);
void gpu_embbag_mean_fwd(gpu_ops_ctx *c, float *out, const float *table, const int32_t *ids, int n, int S, int E);
void gpu_embbag_mean_bwd(gpu_ops_ctx *c, float *dtable, const float *dout, const int32_t *ids, int n, int S, int E);
void gpu_layernorm_fwd(gpu_ops_ctx *c, float *y, float *mean, float *rstd, const float *x, const float *g,
		       const float *b, int n, int cdim, float eps);
void gpu_layernorm_bwd(gpu_ops_ctx *c, float *dx, float *dg, float *db, const float *dy, const float *x,
		       const float *mean, const float *rstd, const float *g, int n, int cdim);
void gpu_gelu_fwd(gpu_ops_ctx *c, float *y, const float *x, size_t n);
void gpu_gelu_bwd(gpu_ops_ctx *c, float *dx, const float *dy, const float *x, size_t n);
void gpu_dropout_fwd(gpu_ops_ctx *c, float *y, const float *x, size_t n, float p, uint64_t seed, uint64_t site);
void gpu_dropout_bwd(gpu_ops_ctx *c, float *dx, const float *dy, size_t n, float p, uint64_t seed, uint64_t site);
void gpu_attention_fwd(gpu_ops_ctx *c, float *out, float *probs, const float *qkv, int B, int T, int M, int H,
		       float p, uint64_t seed, uint64_t site);
void gpu_attention_bwd(gpu_ops_ctx *c, float *dqkv, const float *dout, const float *qkv, const float *probs,
		       int B, int T, int M, int H, float p, uint64_t seed, uint64_t site);
void gpu_add(gpu_ops_ctx *c, float *y, const float *a, const float *b, size_t n);
/* loss (mean) is written to *loss_dev (device float) */
void gpu_bce_fwd_bwd(gpu_ops_ctx *c, float *dlogits, float *loss_dev, const float *logits, const float *target,
		     const float *weight, size_t n, float scale);
/* gscale_dev: device float read by the kernel (so clipping needs no host sync) */
void gpu_adamw(gpu_ops_ctx *c, float *p, const float *g, float *m, float *v, size_t n, float lr, float beta1,
	       float beta2, float eps, float wd, int t, const float *gscale_dev);
/* *out_dev (device double) += sum of squares */
void gpu_sumsq(gpu_ops_ctx *c, double *out_dev, const float *x, size_t n);

#ifdef __cplusplus
}
#endif
#endif
