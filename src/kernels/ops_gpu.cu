/*
 * ops_gpu.cu - the GPU half of ops.h (and the fused extensions of
 * ops_gpu.h): cuBLAS for the matrix products, one small kernel for
 * everything else.
 *
 * Design.  Every function only enqueues work on the context's stream; none
 * synchronizes with the host, so a whole training step can be captured in a
 * CUDA graph.  Errors are sticky: the first failing CUDA or cuBLAS call is
 * recorded in the context with file:line and the library's message, and
 * gpu_ops_last_error() reports it (the caller checks once per step).
 *
 * Per-step values for graphs: a replayed graph keeps the arguments it was
 * captured with, so the dropout kernels can take their seed from device
 * memory (gpu_ops_set_seed_dev) and AdamW its lr/t-derived scalars
 * (gpu_adamw_dev); by default both come by value, as before.
 *
 * Precision.  PREC_FP32 runs the GEMMs in plain fp32 (cuBLAS default math,
 * no TF32), so results agree with the CPU reference to ~1e-6 relative.
 * PREC_BF16 / PREC_FP16 convert both operands into a workspace (one pass
 * each, 2 bytes per element) and run them on the tensor cores with fp32
 * accumulation and fp32 output.  Everything outside the GEMMs is fp32.
 *
 * Determinism.  Column sums (bias, LayerNorm gamma/beta gradients: one
 * block per 32 columns x 64 rows, so that 512 rows fill the chip), the
 * embedding-table gradient and the sum of squares add partial sums with
 * atomics, so their last bits can vary from run to run.
 *
 * Cost.  The kernels are memory-bound and move each operand once, with
 * these exceptions: LayerNorm reads its row twice (the second read hits L1),
 * and the attention kernels keep a (b, h) slice in shared memory, which
 * limits them to about (4 T (hd+1) + 3 T (T+1)) * 4 bytes <= 227 KB (T = 64,
 * hd = 64 takes 116 KB).
 */
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/ops.h"
#include "kernels/ops_gpu.h"
#include "kernels/rng.h"
#include "kernels/warp.cuh"

struct gpu_ops_ctx {
	cudaStream_t stream;
	cublasHandle_t blas;
	enum gpu_precision prec;
	void *ws;         /* operand conversion workspace (bf16/fp16 GEMMs) */
	size_t ws_bytes;
	int nsm;
	size_t smem_optin; /* max dynamic shared memory per block */
	const uint64_t *seed_dev; /* dropout seed read on device (graph replay), NULL: by value */
	int err;
	char msg[256];
};

/* ------------------------------------------------------------------------ */
/* error handling                                                           */
/* ------------------------------------------------------------------------ */

static void set_err(gpu_ops_ctx *c, const char *file, int line, const char *what)
{
	if (c->err)
		return;
	c->err = 1;
	snprintf(c->msg, sizeof c->msg, "%s:%d: %s", file, line, what);
}

#define CK(call)                                                                         \
	do {                                                                             \
		cudaError_t e_ = (call);                                                 \
		if (e_ != cudaSuccess)                                                   \
			set_err(c, __FILE__, __LINE__, cudaGetErrorString(e_));          \
	} while (0)

#define CKB(call)                                                                        \
	do {                                                                             \
		cublasStatus_t s_ = (call);                                              \
		if (s_ != CUBLAS_STATUS_SUCCESS)                                         \
			set_err(c, __FILE__, __LINE__, cublasGetStatusString(s_));       \
	} while (0)

/* after every launch: catches bad configurations without synchronizing */
#define CKL() CK(cudaGetLastError())

static int grid_for(const gpu_ops_ctx *c, size_t n, int threads)
{
	size_t b = (n + (size_t)threads - 1) / (size_t)threads;
	size_t cap = (size_t)c->nsm * 16;
	if (b > cap)
		b = cap;
	return b < 1 ? 1 : (int)b;
}

/* ------------------------------------------------------------------------ */
/* context                                                                  */
/* ------------------------------------------------------------------------ */

extern "C" gpu_ops_ctx *gpu_ops_create(void *stream, enum gpu_precision prec)
{
	gpu_ops_ctx *c = (gpu_ops_ctx *)calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->stream = (cudaStream_t)stream;
	c->prec = prec;
	int dev = 0;
	cudaDeviceProp prop;
	if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess) {
		free(c);
		return NULL;
	}
	c->nsm = prop.multiProcessorCount;
	c->smem_optin = prop.sharedMemPerBlockOptin;
	if (cublasCreate(&c->blas) != CUBLAS_STATUS_SUCCESS) {
		free(c);
		return NULL;
	}
	CKB(cublasSetStream(c->blas, c->stream));
	/* default math: fp32 GEMMs stay fp32 (TF32 only when asked for), so they
	 * match the CPU reference to fp32 rounding */
	CKB(cublasSetMathMode(c->blas, CUBLAS_DEFAULT_MATH));
	return c;
}

extern "C" void gpu_ops_destroy(gpu_ops_ctx *c)
{
	if (!c)
		return;
	if (c->ws)
		cudaFree(c->ws);
	cublasDestroy(c->blas);
	free(c);
}

extern "C" void gpu_ops_set_stream(gpu_ops_ctx *c, void *stream)
{
	c->stream = (cudaStream_t)stream;
	CKB(cublasSetStream(c->blas, c->stream));
}

extern "C" void gpu_ops_set_seed_dev(gpu_ops_ctx *c, const uint64_t *seed_dev)
{
	c->seed_dev = seed_dev;
}

extern "C" void gpu_ops_clear_error(gpu_ops_ctx *c)
{
	(void)cudaGetLastError();
	c->err = 0;
	c->msg[0] = '\0';
}

extern "C" int gpu_ops_last_error(gpu_ops_ctx *c, char *msg, size_t len)
{
	if (!c->err) {
		cudaError_t e = cudaGetLastError();
		if (e != cudaSuccess)
			set_err(c, __FILE__, __LINE__, cudaGetErrorString(e));
	}
	if (c->err && msg && len)
		snprintf(msg, len, "%s", c->msg);
	return c->err;
}

/* Stream-ordered growth: no host sync, safe with work still queued. */
static void *ws_get(gpu_ops_ctx *c, size_t bytes)
{
	if (bytes <= c->ws_bytes)
		return c->ws;
	if (c->ws)
		CK(cudaFreeAsync(c->ws, c->stream));
	c->ws = NULL;
	c->ws_bytes = 0;
	CK(cudaMallocAsync(&c->ws, bytes, c->stream));
	if (!c->err)
		c->ws_bytes = bytes;
	return c->ws;
}

/* ------------------------------------------------------------------------ */
/* small device helpers                                                     */
/* ------------------------------------------------------------------------ */

/* warp_sum, warp_max: kernels/warp.cuh */

/* the dropout factor of element i: 0 when dropped, 1/(1-p) when kept */
__device__ __forceinline__ float drop_factor(uint64_t seed, uint64_t site, uint64_t i, float p,
					     float inv_keep)
{
	return rng_uniform(seed, site, i) >= p ? inv_keep : 0.0f;
}

__device__ __forceinline__ float gelu_f(float x)
{
	return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
}

__device__ __forceinline__ float gelu_grad(float x)
{
	float cdf = 0.5f * (1.0f + erff(x * 0.70710678118654752f));
	float pdf = 0.39894228040143268f * expf(-0.5f * x * x);
	return cdf + x * pdf;
}

static float inv_keep_of(float p)
{
	return p > 0.0f ? 1.0f / (1.0f - p) : 1.0f;
}

/* ------------------------------------------------------------------------ */
/* elementwise kernels                                                      */
/* ------------------------------------------------------------------------ */

template <typename T> __device__ __forceinline__ T from_f(float x);
template <> __device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float x) { return __float2bfloat16(x); }
template <> __device__ __forceinline__ __half from_f<__half>(float x) { return __float2half(x); }

template <typename T>
__global__ void convert_kernel(T *__restrict__ y, const float *__restrict__ x, size_t n)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	size_t i0 = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	size_t n4 = ((((uintptr_t)x) & 15) == 0 && (((uintptr_t)y) & 7) == 0) ? n / 4 : 0;
	for (size_t i = i0; i < n4; i += stride) {
		float4 v = reinterpret_cast<const float4 *>(x)[i];
		T *o = y + 4 * i;
		o[0] = from_f<T>(v.x);
		o[1] = from_f<T>(v.y);
		o[2] = from_f<T>(v.z);
		o[3] = from_f<T>(v.w);
	}
	for (size_t i = 4 * n4 + i0; i < n; i += stride)
		y[i] = from_f<T>(x[i]);
}

__global__ void add_kernel(float *y, const float *a, const float *b, size_t n)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
		y[i] = a[i] + b[i];
}

__global__ void fill_kernel(float *y, float v, size_t n)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
		y[i] = v;
}

/* y[r][o] += b[o] */
__global__ void bias_add_kernel(float *__restrict__ y, const float *__restrict__ b, int n, int out)
{
	size_t total = (size_t)n * out;
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride)
		y[i] += b[i % out];
}

__global__ void gelu_fwd_kernel(float *y, const float *x, size_t n)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
		y[i] = gelu_f(x[i]);
}

__global__ void gelu_bwd_kernel(float *dx, const float *dy, const float *x, size_t n)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
		dx[i] = dy[i] * gelu_grad(x[i]);
}

/* dropout forward and backward are the same map: y = x * factor(i) */
__global__ void dropout_kernel(float *y, const float *x, size_t n, float p, float inv_keep,
			       uint64_t seed, uint64_t site, const uint64_t *seedp)
{
	if (seedp)
		seed = *seedp;
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
		y[i] = x[i] * drop_factor(seed, site, i, p, inv_keep);
}

/* h = y + b (in place in y, which becomes h); out = dropout(gelu(h)) */
__global__ void bias_gelu_dropout_kernel(float *__restrict__ out, float *__restrict__ h,
					 const float *__restrict__ b, int n, int cols, float p,
					 float inv_keep, uint64_t seed, uint64_t site,
					 const uint64_t *seedp)
{
	if (seedp)
		seed = *seedp;
	size_t total = (size_t)n * cols;
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
		float v = h[i] + (b ? b[i % cols] : 0.0f);
		h[i] = v;
		float g = gelu_f(v);
		out[i] = p > 0.0f ? g * drop_factor(seed, site, i, p, inv_keep) : g;
	}
}

__global__ void dropout_gelu_bwd_kernel(float *dh, const float *dy, const float *h, size_t n,
					float p, float inv_keep, uint64_t seed, uint64_t site,
					const uint64_t *seedp)
{
	if (seedp)
		seed = *seedp;
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
		float d = dy[i];
		if (p > 0.0f)
			d *= drop_factor(seed, site, i, p, inv_keep);
		dh[i] = d * gelu_grad(h[i]);
	}
}

/* ------------------------------------------------------------------------ */
/* column sums: dst[j] += sum_i src[i][j]  (bias gradients)                 */
/* block (32, 16): x = column in a 32-wide strip, y = row lane              */
/* ------------------------------------------------------------------------ */

#define COLSUM_ROWS 64 /* rows per block: grid.y = ceil(n / 64) row chunks */

__global__ void colsum_kernel(float *__restrict__ dst, const float *__restrict__ src, int n, int cols)
{
	__shared__ float part[16][33];
	int j = blockIdx.x * 32 + threadIdx.x;
	int i1 = min(n, (int)(blockIdx.y + 1) * COLSUM_ROWS);
	float s = 0.0f;
	if (j < cols)
		for (int i = blockIdx.y * COLSUM_ROWS + threadIdx.y; i < i1; i += 16)
			s += src[(size_t)i * cols + j];
	part[threadIdx.y][threadIdx.x] = s;
	__syncthreads();
	if (threadIdx.y == 0 && j < cols) {
		float t = 0.0f;
		for (int k = 0; k < 16; k++)
			t += part[k][threadIdx.x];
		atomicAdd(&dst[j], t);
	}
}

static void colsum(gpu_ops_ctx *c, float *dst, const float *src, int n, int cols)
{
	dim3 blk(32, 16);
	dim3 grid((cols + 31) / 32, (n + COLSUM_ROWS - 1) / COLSUM_ROWS);
	colsum_kernel<<<grid, blk, 0, c->stream>>>(dst, src, n, cols);
	CKL();
}

/* ------------------------------------------------------------------------ */
/* GEMMs (cuBLAS, column-major view of row-major data)                      */
/* ------------------------------------------------------------------------ */

/* C (m x n, col-major) = alpha op(A) op(B) + beta C, A and B fp32 in device
 * memory with na, nb elements; converted to bf16/fp16 in the workspace for
 * the reduced-precision contexts. */
static void gemm(gpu_ops_ctx *c, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
		 const float *A, int lda, size_t na, const float *B, int ldb, size_t nb, float *C,
		 int ldc, float beta)
{
	const float alpha = 1.0f;
	if (m <= 0 || n <= 0)
		return;
	if (k <= 0) { /* empty sum: C = beta C */
		if (beta == 0.0f)
			CK(cudaMemset2DAsync(C, (size_t)ldc * 4, 0, (size_t)m * 4, n, c->stream));
		return;
	}
	if (c->prec == PREC_FP32) {
		CKB(cublasSgemm(c->blas, ta, tb, m, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc));
		return;
	}
	size_t abytes = (na * 2 + 255) & ~(size_t)255;
	char *ws = (char *)ws_get(c, abytes + nb * 2);
	if (c->err)
		return;
	void *a16 = ws, *b16 = ws + abytes;
	cudaDataType_t t16 = c->prec == PREC_BF16 ? CUDA_R_16BF : CUDA_R_16F;
	if (c->prec == PREC_BF16) {
		convert_kernel<__nv_bfloat16><<<grid_for(c, na / 4 + 1, 256), 256, 0, c->stream>>>(
			(__nv_bfloat16 *)a16, A, na);
		CKL();
		convert_kernel<__nv_bfloat16><<<grid_for(c, nb / 4 + 1, 256), 256, 0, c->stream>>>(
			(__nv_bfloat16 *)b16, B, nb);
		CKL();
	} else {
		convert_kernel<__half><<<grid_for(c, na / 4 + 1, 256), 256, 0, c->stream>>>(
			(__half *)a16, A, na);
		CKL();
		convert_kernel<__half><<<grid_for(c, nb / 4 + 1, 256), 256, 0, c->stream>>>(
			(__half *)b16, B, nb);
		CKL();
	}
	CKB(cublasGemmEx(c->blas, ta, tb, m, n, k, &alpha, a16, t16, lda, b16, t16, ldb, &beta, C,
			 CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

extern "C" void gpu_linear_fwd_ex(gpu_ops_ctx *c, float *y, const float *x, const float *W,
				  const float *b, int n, int in, int out, float beta)
{
	/* y^T (out x n) = W^T... : A = W (in x out col-major, transposed), B = x (in x n) */
	gemm(c, CUBLAS_OP_T, CUBLAS_OP_N, out, n, in, W, in, (size_t)out * in, x, in,
	     (size_t)n * in, y, out, beta);
	if (b && n > 0 && out > 0) {
		size_t total = (size_t)n * out;
		bias_add_kernel<<<grid_for(c, total, 256), 256, 0, c->stream>>>(y, b, n, out);
		CKL();
	}
}

extern "C" void gpu_linear_fwd(gpu_ops_ctx *c, float *y, const float *x, const float *W,
			       const float *b, int n, int in, int out)
{
	gpu_linear_fwd_ex(c, y, x, W, b, n, in, out, 0.0f);
}

/* x (n fp32) -> bf16 / fp16 at dst */
static void to16(gpu_ops_ctx *c, void *dst, const float *x, size_t n)
{
	if (c->prec == PREC_BF16)
		convert_kernel<__nv_bfloat16><<<grid_for(c, n / 4 + 1, 256), 256, 0, c->stream>>>(
			(__nv_bfloat16 *)dst, x, n);
	else
		convert_kernel<__half><<<grid_for(c, n / 4 + 1, 256), 256, 0, c->stream>>>((__half *)dst, x, n);
	CKL();
}

static size_t al256(size_t bytes)
{
	return (bytes + 255) & ~(size_t)255;
}

extern "C" void gpu_linear_bwd_ex(gpu_ops_ctx *c, float *dx, float *dW, float *db, const float *dy,
				  const float *x, const float *W, int n, int in, int out, int dx_acc)
{
	if (c->prec != PREC_FP32 && n > 0 && in > 0 && out > 0 && (dx || dW)) {
		/* reduced precision: convert dy once for both products */
		size_t ndy = (size_t)n * out, nw = (size_t)out * in, nx = (size_t)n * in;
		size_t bdy = al256(ndy * 2), bw = dx ? al256(nw * 2) : 0, bx = dW ? al256(nx * 2) : 0;
		char *ws = (char *)ws_get(c, bdy + bw + bx);
		if (c->err)
			return;
		char *dy16 = ws, *w16 = ws + bdy, *x16 = ws + bdy + bw;
		cudaDataType_t t16 = c->prec == PREC_BF16 ? CUDA_R_16BF : CUDA_R_16F;
		const float one = 1.0f, zero = 0.0f;
		to16(c, dy16, dy, ndy);
		if (dx) {
			to16(c, w16, W, nw);
			CKB(cublasGemmEx(c->blas, CUBLAS_OP_N, CUBLAS_OP_N, in, n, out, &one, w16, t16, in,
					 dy16, t16, out, dx_acc ? &one : &zero, dx, CUDA_R_32F, in,
					 CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
		}
		if (dW) {
			to16(c, x16, x, nx);
			CKB(cublasGemmEx(c->blas, CUBLAS_OP_N, CUBLAS_OP_T, in, out, n, &one, x16, t16, in,
					 dy16, t16, out, &one, dW, CUDA_R_32F, in, CUBLAS_COMPUTE_32F,
					 CUBLAS_GEMM_DEFAULT));
		}
		if (db)
			colsum(c, db, dy, n, out);
		return;
	}
	/* dx^T (in x n) = W (in x out col-major) dy^T (out x n) */
	if (dx)
		gemm(c, CUBLAS_OP_N, CUBLAS_OP_N, in, n, out, W, in, (size_t)out * in, dy, out,
		     (size_t)n * out, dx, in, dx_acc ? 1.0f : 0.0f);
	/* dW^T (in x out) += x^T_cm (in x n) * (dy^T_cm)^T (n x out) */
	if (dW)
		gemm(c, CUBLAS_OP_N, CUBLAS_OP_T, in, out, n, x, in, (size_t)n * in, dy, out,
		     (size_t)n * out, dW, in, 1.0f);
	if (db && n > 0 && out > 0)
		colsum(c, db, dy, n, out);
}

extern "C" void gpu_linear_bwd(gpu_ops_ctx *c, float *dx, float *dW, float *db, const float *dy,
			       const float *x, const float *W, int n, int in, int out)
{
	gpu_linear_bwd_ex(c, dx, dW, db, dy, x, W, n, in, out, 0);
}

extern "C" void gpu_linear_gelu_dropout_fwd(gpu_ops_ctx *c, float *y, float *h, const float *x,
					    const float *W, const float *b, int n, int in, int out,
					    float p, uint64_t seed, uint64_t site)
{
	gpu_linear_fwd_ex(c, h, x, W, NULL, n, in, out, 0.0f);
	size_t total = (size_t)n * out;
	if (!total)
		return;
	bias_gelu_dropout_kernel<<<grid_for(c, total, 256), 256, 0, c->stream>>>(
		y, h, b, n, out, p, inv_keep_of(p), seed, site, c->seed_dev);
	CKL();
}

extern "C" void gpu_dropout_gelu_bwd(gpu_ops_ctx *c, float *dh, const float *dy, const float *h,
				     size_t n, float p, uint64_t seed, uint64_t site)
{
	if (!n)
		return;
	dropout_gelu_bwd_kernel<<<grid_for(c, n, 256), 256, 0, c->stream>>>(dh, dy, h, n, p,
									     inv_keep_of(p), seed, site,
									     c->seed_dev);
	CKL();
}

/* ------------------------------------------------------------------------ */
/* simple elementwise ops of ops.h                                          */
/* ------------------------------------------------------------------------ */

extern "C" void gpu_add(gpu_ops_ctx *c, float *y, const float *a, const float *b, size_t n)
{
	if (!n)
		return;
	add_kernel<<<grid_for(c, n, 256), 256, 0, c->stream>>>(y, a, b, n);
	CKL();
}

extern "C" void gpu_gelu_fwd(gpu_ops_ctx *c, float *y, const float *x, size_t n)
{
	if (!n)
		return;
	gelu_fwd_kernel<<<grid_for(c, n, 256), 256, 0, c->stream>>>(y, x, n);
	CKL();
}

extern "C" void gpu_gelu_bwd(gpu_ops_ctx *c, float *dx, const float *dy, const float *x, size_t n)
{
	if (!n)
		return;
	gelu_bwd_kernel<<<grid_for(c, n, 256), 256, 0, c->stream>>>(dx, dy, x, n);
	CKL();
}

static void dropout_map(gpu_ops_ctx *c, float *y, const float *x, size_t n, float p, uint64_t seed,
			uint64_t site)
{
	if (!n)
		return;
	if (p <= 0.0f) {
		if (y != x)
			CK(cudaMemcpyAsync(y, x, n * sizeof(float), cudaMemcpyDeviceToDevice, c->stream));
		return;
	}
	dropout_kernel<<<grid_for(c, n, 256), 256, 0, c->stream>>>(y, x, n, p, inv_keep_of(p), seed, site,
									     c->seed_dev);
	CKL();
}

extern "C" void gpu_dropout_fwd(gpu_ops_ctx *c, float *y, const float *x, size_t n, float p,
				uint64_t seed, uint64_t site)
{
	dropout_map(c, y, x, n, p, seed, site);
}

extern "C" void gpu_dropout_bwd(gpu_ops_ctx *c, float *dx, const float *dy, size_t n, float p,
				uint64_t seed, uint64_t site)
{
	dropout_map(c, dx, dy, n, p, seed, site);
}

/* ------------------------------------------------------------------------ */
/* embedding bag (mean)                                                     */
/* ------------------------------------------------------------------------ */

/* block per row r: out[r][e] = (1/S) sum_s table[ids[r][s]][e] */
__global__ void embbag_fwd_kernel(float *__restrict__ out, const float *__restrict__ table,
				  const int32_t *__restrict__ ids, int S, int E)
{
	int r = blockIdx.x;
	const int32_t *row = ids + (size_t)r * S;
	float inv = 1.0f / (float)S;
	for (int e = threadIdx.x; e < E; e += blockDim.x) {
		float s = 0.0f;
		for (int k = 0; k < S; k++)
			s += table[(size_t)row[k] * E + e];
		out[(size_t)r * E + e] = s * inv;
	}
}

/* block per (row, id): dtable[ids[r][s]][e] += dout[r][e] / S */
__global__ void embbag_bwd_kernel(float *__restrict__ dtable, const float *__restrict__ dout,
				  const int32_t *__restrict__ ids, int S, int E)
{
	int r = blockIdx.x / S;
	int id = ids[blockIdx.x];
	float inv = 1.0f / (float)S;
	for (int e = threadIdx.x; e < E; e += blockDim.x)
		atomicAdd(&dtable[(size_t)id * E + e], dout[(size_t)r * E + e] * inv);
}

extern "C" void gpu_embbag_mean_fwd(gpu_ops_ctx *c, float *out, const float *table, const int32_t *ids,
				    int n, int S, int E)
{
	if (n <= 0 || E <= 0)
		return;
	if (S <= 0) {
		CK(cudaMemsetAsync(out, 0, (size_t)n * E * 4, c->stream));
		return;
	}
	int th = E >= 256 ? 256 : ((E + 31) / 32) * 32;
	embbag_fwd_kernel<<<n, th, 0, c->stream>>>(out, table, ids, S, E);
	CKL();
}

extern "C" void gpu_embbag_mean_bwd(gpu_ops_ctx *c, float *dtable, const float *dout, const int32_t *ids,
				    int n, int S, int E)
{
	if (n <= 0 || E <= 0 || S <= 0)
		return;
	int th = E >= 256 ? 256 : ((E + 31) / 32) * 32;
	embbag_bwd_kernel<<<n * S, th, 0, c->stream>>>(dtable, dout, ids, S, E);
	CKL();
}

/* ------------------------------------------------------------------------ */
/* LayerNorm: a warp per row                                                */
/* ------------------------------------------------------------------------ */

/* if res != NULL: r = res + dropout(x) is written to rout and normalized;
 * otherwise x itself is normalized. */
__global__ void layernorm_fwd_kernel(float *__restrict__ y, float *__restrict__ mean,
				     float *__restrict__ rstd, const float *__restrict__ x,
				     const float *__restrict__ res, float *__restrict__ rout,
				     const float *__restrict__ g, const float *__restrict__ b, int n,
				     int cdim, float eps, float p, float inv_keep, uint64_t seed,
				     uint64_t site, const uint64_t *seedp)
{
	if (seedp)
		seed = *seedp;
	int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
	int lane = threadIdx.x & 31;
	if (row >= n)
		return;
	size_t base = (size_t)row * cdim;
	const float *src = x + base;
	if (res) {
		for (int j = lane; j < cdim; j += 32) {
			float a = x[base + j];
			if (p > 0.0f)
				a *= drop_factor(seed, site, base + j, p, inv_keep);
			rout[base + j] = res[base + j] + a;
		}
		__syncwarp();
		src = rout + base;
	}
	float s = 0.0f;
	for (int j = lane; j < cdim; j += 32)
		s += src[j];
	float mu = warp_sum(s) / (float)cdim;
	float v = 0.0f;
	for (int j = lane; j < cdim; j += 32) {
		float d = src[j] - mu;
		v += d * d;
	}
	float rs = rsqrtf(warp_sum(v) / (float)cdim + eps);
	for (int j = lane; j < cdim; j += 32)
		y[base + j] = (src[j] - mu) * rs * g[j] + b[j];
	if (lane == 0) {
		mean[row] = mu;
		rstd[row] = rs;
	}
}

__global__ void layernorm_bwd_dx_kernel(float *__restrict__ dx, const float *__restrict__ dy,
					const float *__restrict__ x, const float *__restrict__ mean,
					const float *__restrict__ rstd, const float *__restrict__ g,
					int n, int cdim)
{
	int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
	int lane = threadIdx.x & 31;
	if (row >= n)
		return;
	size_t base = (size_t)row * cdim;
	float mu = mean[row], rs = rstd[row];
	float s1 = 0.0f, s2 = 0.0f;
	for (int j = lane; j < cdim; j += 32) {
		float dyg = dy[base + j] * g[j];
		float xh = (x[base + j] - mu) * rs;
		s1 += dyg;
		s2 += dyg * xh;
	}
	s1 = warp_sum(s1) / (float)cdim;
	s2 = warp_sum(s2) / (float)cdim;
	for (int j = lane; j < cdim; j += 32) {
		float dyg = dy[base + j] * g[j];
		float xh = (x[base + j] - mu) * rs;
		dx[base + j] = rs * (dyg - s1 - xh * s2);
	}
}

/* dg[j] += sum_i dy[i][j] xhat[i][j], db[j] += sum_i dy[i][j] */
__global__ void layernorm_bwd_param_kernel(float *__restrict__ dg, float *__restrict__ db,
					   const float *__restrict__ dy, const float *__restrict__ x,
					   const float *__restrict__ mean,
					   const float *__restrict__ rstd, int n, int cdim)
{
	__shared__ float pg[16][33], pb[16][33];
	int j = blockIdx.x * 32 + threadIdx.x;
	int i1 = min(n, (int)(blockIdx.y + 1) * COLSUM_ROWS);
	float sg = 0.0f, sb = 0.0f;
	if (j < cdim)
		for (int i = blockIdx.y * COLSUM_ROWS + threadIdx.y; i < i1; i += 16) {
			float d = dy[(size_t)i * cdim + j];
			sg += d * (x[(size_t)i * cdim + j] - mean[i]) * rstd[i];
			sb += d;
		}
	pg[threadIdx.y][threadIdx.x] = sg;
	pb[threadIdx.y][threadIdx.x] = sb;
	__syncthreads();
	if (threadIdx.y == 0 && j < cdim) {
		float tg = 0.0f, tb = 0.0f;
		for (int k = 0; k < 16; k++) {
			tg += pg[k][threadIdx.x];
			tb += pb[k][threadIdx.x];
		}
		if (dg)
			atomicAdd(&dg[j], tg);
		if (db)
			atomicAdd(&db[j], tb);
	}
}

static void layernorm_fwd_launch(gpu_ops_ctx *c, float *y, float *mean, float *rstd, const float *x,
				 const float *res, float *rout, const float *g, const float *b, int n,
				 int cdim, float eps, float p, uint64_t seed, uint64_t site)
{
	if (n <= 0 || cdim <= 0)
		return;
	layernorm_fwd_kernel<<<(n + 7) / 8, 256, 0, c->stream>>>(y, mean, rstd, x, res, rout, g, b, n,
								 cdim, eps, p, inv_keep_of(p), seed,
								 site, c->seed_dev);
	CKL();
}

extern "C" void gpu_layernorm_fwd(gpu_ops_ctx *c, float *y, float *mean, float *rstd, const float *x,
				  const float *g, const float *b, int n, int cdim, float eps)
{
	layernorm_fwd_launch(c, y, mean, rstd, x, NULL, NULL, g, b, n, cdim, eps, 0.0f, 0, 0);
}

extern "C" void gpu_residual_dropout_layernorm_fwd(gpu_ops_ctx *c, float *y, float *r, float *mean,
						   float *rstd, const float *res, const float *a,
						   const float *g, const float *b, int n, int cdim,
						   float eps, float p, uint64_t seed, uint64_t site)
{
	layernorm_fwd_launch(c, y, mean, rstd, a, res, r, g, b, n, cdim, eps, p, seed, site);
}

extern "C" void gpu_layernorm_bwd(gpu_ops_ctx *c, float *dx, float *dg, float *db, const float *dy,
				  const float *x, const float *mean, const float *rstd, const float *g,
				  int n, int cdim)
{
	if (n <= 0 || cdim <= 0)
		return;
	/* parameter gradients first: dx may alias dy */
	if (dg || db) {
		dim3 blk(32, 16);
		dim3 grid((cdim + 31) / 32, (n + COLSUM_ROWS - 1) / COLSUM_ROWS);
		layernorm_bwd_param_kernel<<<grid, blk, 0, c->stream>>>(dg, db, dy, x, mean, rstd, n,
									cdim);
		CKL();
	}
	if (dx) {
		layernorm_bwd_dx_kernel<<<(n + 7) / 8, 256, 0, c->stream>>>(dx, dy, x, mean, rstd, g, n,
									    cdim);
		CKL();
	}
}

/* ------------------------------------------------------------------------ */
/* attention                                                                */
/* ------------------------------------------------------------------------ */

#define ATT_ROWS 16 /* query rows per forward block */

/* grid (B*H, ceil(T/ATT_ROWS)), 256 threads.  Shared: K [T][hd+1], V [T][hd],
 * Q [R][hd], S [R][T+1]. */
__global__ void attention_fwd_kernel(float *__restrict__ out, float *__restrict__ probs,
				     const float *__restrict__ qkv, int B, int T, int M, int H,
				     float p, float inv_keep, uint64_t seed, uint64_t site,
				     const uint64_t *seedp)
{
	extern __shared__ float sm[];
	if (seedp)
		seed = *seedp;
	int hd = M / H;
	int bh = blockIdx.x, b = bh / H, h = bh % H;
	int t0 = blockIdx.y * ATT_ROWS;
	int R = min(ATT_ROWS, T - t0);
	float *Ks = sm, *Vs = Ks + T * (hd + 1), *Qs = Vs + T * hd, *Ss = Qs + ATT_ROWS * hd;
	size_t ld = (size_t)3 * M;
	const float *base = qkv + (size_t)b * T * ld + (size_t)h * hd;
	for (int idx = threadIdx.x; idx < T * hd; idx += blockDim.x) {
		int s = idx / hd, d = idx % hd;
		Ks[s * (hd + 1) + d] = base[(size_t)s * ld + M + d];
		Vs[s * hd + d] = base[(size_t)s * ld + 2 * M + d];
	}
	for (int idx = threadIdx.x; idx < R * hd; idx += blockDim.x) {
		int t = idx / hd, d = idx % hd;
		Qs[t * hd + d] = base[(size_t)(t0 + t) * ld + d];
	}
	__syncthreads();
	float scale = rsqrtf((float)hd);
	for (int idx = threadIdx.x; idx < R * T; idx += blockDim.x) {
		int t = idx / T, s = idx % T;
		const float *q = Qs + t * hd, *k = Ks + s * (hd + 1);
		float acc = 0.0f;
		for (int d = 0; d < hd; d++)
			acc += q[d] * k[d];
		Ss[t * (T + 1) + s] = acc * scale;
	}
	__syncthreads();
	int warp = threadIdx.x / 32, lane = threadIdx.x & 31, nw = blockDim.x / 32;
	for (int t = warp; t < R; t += nw) {
		float *row = Ss + t * (T + 1);
		float mx = -INFINITY;
		for (int s = lane; s < T; s += 32)
			mx = fmaxf(mx, row[s]);
		mx = warp_max(mx);
		float sum = 0.0f;
		for (int s = lane; s < T; s += 32) {
			float e = expf(row[s] - mx);
			row[s] = e;
			sum += e;
		}
		float inv = 1.0f / warp_sum(sum);
		size_t pbase = ((size_t)bh * T + (t0 + t)) * T;
		for (int s = lane; s < T; s += 32) {
			float pr = row[s] * inv;
			probs[pbase + s] = pr;
			row[s] = p > 0.0f ? pr * drop_factor(seed, site, pbase + s, p, inv_keep) : pr;
		}
	}
	__syncthreads();
	for (int idx = threadIdx.x; idx < R * hd; idx += blockDim.x) {
		int t = idx / hd, d = idx % hd;
		const float *row = Ss + t * (T + 1);
		float acc = 0.0f;
		for (int s = 0; s < T; s++)
			acc += row[s] * Vs[s * hd + d];
		out[((size_t)b * T + t0 + t) * M + (size_t)h * hd + d] = acc;
	}
}

/* grid B*H, 256 threads.  Shared: Q, K, V, dO [T][hd+1]; P, Pd, dS [T][T+1]. */
__global__ void attention_bwd_kernel(float *__restrict__ dqkv, const float *__restrict__ dout,
				     const float *__restrict__ qkv, const float *__restrict__ probs,
				     int B, int T, int M, int H, float p, float inv_keep,
				     uint64_t seed, uint64_t site, const uint64_t *seedp)
{
	extern __shared__ float sm[];
	if (seedp)
		seed = *seedp;
	int hd = M / H, hp = hd + 1, tp = T + 1;
	int bh = blockIdx.x, b = bh / H, h = bh % H;
	float *Qs = sm, *Ks = Qs + T * hp, *Vs = Ks + T * hp, *dOs = Vs + T * hp;
	float *Ps = dOs + T * hp, *Pd = Ps + T * tp, *dS = Pd + T * tp;
	size_t ld = (size_t)3 * M;
	const float *base = qkv + (size_t)b * T * ld + (size_t)h * hd;
	const float *dobase = dout + (size_t)b * T * M + (size_t)h * hd;
	for (int idx = threadIdx.x; idx < T * hd; idx += blockDim.x) {
		int s = idx / hd, d = idx % hd;
		Qs[s * hp + d] = base[(size_t)s * ld + d];
		Ks[s * hp + d] = base[(size_t)s * ld + M + d];
		Vs[s * hp + d] = base[(size_t)s * ld + 2 * M + d];
		dOs[s * hp + d] = dobase[(size_t)s * M + d];
	}
	size_t pbase = (size_t)bh * T * T;
	for (int idx = threadIdx.x; idx < T * T; idx += blockDim.x) {
		int t = idx / T, s = idx % T;
		float pr = probs[pbase + idx];
		float f = p > 0.0f ? drop_factor(seed, site, pbase + idx, p, inv_keep) : 1.0f;
		Ps[t * tp + s] = pr;
		Pd[t * tp + s] = pr * f;
		dS[t * tp + s] = f; /* the factor, for now */
	}
	__syncthreads();
	/* dP[t][s] = f * sum_d dO[t][d] V[s][d] */
	for (int idx = threadIdx.x; idx < T * T; idx += blockDim.x) {
		int t = idx / T, s = idx % T;
		const float *o = dOs + t * hp, *v = Vs + s * hp;
		float acc = 0.0f;
		for (int d = 0; d < hd; d++)
			acc += o[d] * v[d];
		dS[t * tp + s] *= acc;
	}
	__syncthreads();
	float *dbase = dqkv + (size_t)b * T * ld + (size_t)h * hd;
	/* dV[s][d] = sum_t Pd[t][s] dO[t][d] */
	for (int idx = threadIdx.x; idx < T * hd; idx += blockDim.x) {
		int s = idx / hd, d = idx % hd;
		float acc = 0.0f;
		for (int t = 0; t < T; t++)
			acc += Pd[t * tp + s] * dOs[t * hp + d];
		dbase[(size_t)s * ld + 2 * M + d] = acc;
	}
	/* dS = P (dP - rowsum(P dP)) * scale */
	float scale = rsqrtf((float)hd);
	int warp = threadIdx.x / 32, lane = threadIdx.x & 31, nw = blockDim.x / 32;
	for (int t = warp; t < T; t += nw) {
		float *pr = Ps + t * tp, *ds = dS + t * tp;
		float acc = 0.0f;
		for (int s = lane; s < T; s += 32)
			acc += pr[s] * ds[s];
		acc = warp_sum(acc);
		for (int s = lane; s < T; s += 32)
			ds[s] = pr[s] * (ds[s] - acc) * scale;
	}
	__syncthreads();
	/* dQ[t][d] = sum_s dS[t][s] K[s][d];  dK[s][d] = sum_t dS[t][s] Q[t][d] */
	for (int idx = threadIdx.x; idx < T * hd; idx += blockDim.x) {
		int r = idx / hd, d = idx % hd;
		float aq = 0.0f, ak = 0.0f;
		for (int u = 0; u < T; u++) {
			aq += dS[r * tp + u] * Ks[u * hp + d];
			ak += dS[u * tp + r] * Qs[u * hp + d];
		}
		dbase[(size_t)r * ld + d] = aq;
		dbase[(size_t)r * ld + M + d] = ak;
	}
}

static size_t att_fwd_smem(int T, int hd)
{
	return ((size_t)T * (hd + 1) + (size_t)T * hd + (size_t)ATT_ROWS * hd +
		(size_t)ATT_ROWS * (T + 1)) * sizeof(float);
}

static size_t att_bwd_smem(int T, int hd)
{
	return ((size_t)4 * T * (hd + 1) + (size_t)3 * T * (T + 1)) * sizeof(float);
}

extern "C" void gpu_attention_fwd(gpu_ops_ctx *c, float *out, float *probs, const float *qkv, int B,
				  int T, int M, int H, float p, uint64_t seed, uint64_t site)
{
	if (B <= 0 || T <= 0 || H <= 0 || M % H) {
		if (H <= 0 || M % H)
			set_err(c, __FILE__, __LINE__, "attention: M must be a multiple of H");
		return;
	}
	size_t smem = att_fwd_smem(T, M / H);
	if (smem > c->smem_optin) {
		set_err(c, __FILE__, __LINE__, "attention: T and head size too large for shared memory");
		return;
	}
	CK(cudaFuncSetAttribute(attention_fwd_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
				(int)smem));
	dim3 grid(B * H, (T + ATT_ROWS - 1) / ATT_ROWS);
	attention_fwd_kernel<<<grid, 256, smem, c->stream>>>(out, probs, qkv, B, T, M, H, p,
							      inv_keep_of(p), seed, site, c->seed_dev);
	CKL();
}

extern "C" void gpu_attention_bwd(gpu_ops_ctx *c, float *dqkv, const float *dout, const float *qkv,
				  const float *probs, int B, int T, int M, int H, float p,
				  uint64_t seed, uint64_t site)
{
	if (B <= 0 || T <= 0 || H <= 0 || M % H) {
		if (H <= 0 || M % H)
			set_err(c, __FILE__, __LINE__, "attention: M must be a multiple of H");
		return;
	}
	size_t smem = att_bwd_smem(T, M / H);
	if (smem > c->smem_optin) {
		set_err(c, __FILE__, __LINE__, "attention: T and head size too large for shared memory");
		return;
	}
	CK(cudaFuncSetAttribute(attention_bwd_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
				(int)smem));
	attention_bwd_kernel<<<B * H, 256, smem, c->stream>>>(dqkv, dout, qkv, probs, B, T, M, H, p,
							       inv_keep_of(p), seed, site, c->seed_dev);
	CKL();
}

/* ------------------------------------------------------------------------ */
/* BCE with logits (one block; n is B*T, small)                             */
/* ------------------------------------------------------------------------ */

__global__ void bce_kernel(float *__restrict__ dlogits, float *__restrict__ loss,
			   const float *__restrict__ z, const float *__restrict__ y,
			   const float *__restrict__ w, size_t n, float scale)
{
	__shared__ float part[32];
	float inv_n = 1.0f / (float)n;
	float acc = 0.0f;
	for (size_t i = threadIdx.x; i < n; i += blockDim.x) {
		float zi = z[i], yi = y[i], wi = w ? w[i] : 1.0f;
		float ez = expf(-fabsf(zi));
		acc += wi * (fmaxf(zi, 0.0f) - zi * yi + log1pf(ez));
		float sig = zi >= 0.0f ? 1.0f / (1.0f + ez) : ez / (1.0f + ez);
		dlogits[i] = scale * wi * (sig - yi) * inv_n;
	}
	acc = warp_sum(acc);
	if ((threadIdx.x & 31) == 0)
		part[threadIdx.x / 32] = acc;
	__syncthreads();
	if (threadIdx.x < 32) {
		float v = threadIdx.x < blockDim.x / 32 ? part[threadIdx.x] : 0.0f;
		v = warp_sum(v);
		if (threadIdx.x == 0)
			*loss = v * inv_n;
	}
}

extern "C" void gpu_bce_fwd_bwd(gpu_ops_ctx *c, float *dlogits, float *loss_dev, const float *logits,
				const float *target, const float *weight, size_t n, float scale)
{
	if (!n) {
		CK(cudaMemsetAsync(loss_dev, 0, sizeof(float), c->stream));
		return;
	}
	bce_kernel<<<1, 1024, 0, c->stream>>>(dlogits, loss_dev, logits, target, weight, n, scale);
	CKL();
}

/* ------------------------------------------------------------------------ */
/* AdamW over a flat buffer, gscale read on device                          */
/* ------------------------------------------------------------------------ */

typedef struct gpu_adam_hp adam_hp;

__device__ __forceinline__ void adam_one(float &p, float g, float &m, float &v, const adam_hp &h)
{
	p *= h.decay;
	m = h.beta1 * m + (1.0f - h.beta1) * g;
	v = h.beta2 * v + (1.0f - h.beta2) * g * g;
	float denom = sqrtf(v) * h.inv_sqrt_bc2 + h.eps;
	p -= h.step_size * m / denom;
}

__global__ void adamw_kernel(float *__restrict__ p, const float *__restrict__ g,
			     float *__restrict__ m, float *__restrict__ v, size_t n, adam_hp h,
			     const adam_hp *__restrict__ hp_dev, const float *__restrict__ gscale_dev,
			     int vec)
{
	if (hp_dev)
		h = *hp_dev;
	float gs = gscale_dev ? *gscale_dev : 1.0f;
	size_t stride = (size_t)gridDim.x * blockDim.x;
	size_t i0 = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	size_t n4 = vec ? n / 4 : 0;
	for (size_t i = i0; i < n4; i += stride) {
		float4 pp = reinterpret_cast<float4 *>(p)[i];
		float4 gg = reinterpret_cast<const float4 *>(g)[i];
		float4 mm = reinterpret_cast<float4 *>(m)[i];
		float4 vv = reinterpret_cast<float4 *>(v)[i];
		adam_one(pp.x, gg.x * gs, mm.x, vv.x, h);
		adam_one(pp.y, gg.y * gs, mm.y, vv.y, h);
		adam_one(pp.z, gg.z * gs, mm.z, vv.z, h);
		adam_one(pp.w, gg.w * gs, mm.w, vv.w, h);
		reinterpret_cast<float4 *>(p)[i] = pp;
		reinterpret_cast<float4 *>(m)[i] = mm;
		reinterpret_cast<float4 *>(v)[i] = vv;
	}
	for (size_t i = 4 * n4 + i0; i < n; i += stride) {
		float pp = p[i], mm = m[i], vv = v[i];
		adam_one(pp, g[i] * gs, mm, vv, h);
		p[i] = pp;
		m[i] = mm;
		v[i] = vv;
	}
}

extern "C" void gpu_adam_hp_make(struct gpu_adam_hp *h, float lr, float beta1, float beta2, float eps,
				 float wd, int t)
{
	h->lr = lr;
	h->beta1 = beta1;
	h->beta2 = beta2;
	h->eps = eps;
	h->decay = 1.0f - lr * wd;
	double bc1 = 1.0 - pow((double)beta1, (double)t);
	double bc2 = 1.0 - pow((double)beta2, (double)t);
	h->step_size = (float)((double)lr / bc1);
	h->inv_sqrt_bc2 = (float)(1.0 / sqrt(bc2));
}

static void adamw_launch(gpu_ops_ctx *c, float *p, const float *g, float *m, float *v, size_t n,
			 const adam_hp &h, const adam_hp *hp_dev, const float *gscale_dev)
{
	if (!n)
		return;
	int vec = ((((uintptr_t)p) | ((uintptr_t)g) | ((uintptr_t)m) | ((uintptr_t)v)) & 15) == 0;
	adamw_kernel<<<grid_for(c, vec ? n / 4 + 1 : n, 256), 256, 0, c->stream>>>(p, g, m, v, n, h,
										     hp_dev, gscale_dev, vec);
	CKL();
}

extern "C" void gpu_adamw(gpu_ops_ctx *c, float *p, const float *g, float *m, float *v, size_t n,
			  float lr, float beta1, float beta2, float eps, float wd, int t,
			  const float *gscale_dev)
{
	adam_hp h;
	gpu_adam_hp_make(&h, lr, beta1, beta2, eps, wd, t);
	adamw_launch(c, p, g, m, v, n, h, NULL, gscale_dev);
}

extern "C" void gpu_adamw_dev(gpu_ops_ctx *c, float *p, const float *g, float *m, float *v, size_t n,
			      const struct gpu_adam_hp *hp_dev, const float *gscale_dev)
{
	adam_hp h;
	memset(&h, 0, sizeof h);
	adamw_launch(c, p, g, m, v, n, h, hp_dev, gscale_dev);
}

/* ------------------------------------------------------------------------ */
/* sum of squares into a device double; clip scale                          */
/* ------------------------------------------------------------------------ */

__global__ void sumsq_kernel(double *out, const float *__restrict__ x, size_t n, int vec)
{
	__shared__ double part[32];
	size_t stride = (size_t)gridDim.x * blockDim.x;
	size_t i0 = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	size_t n4 = vec ? n / 4 : 0;
	double acc = 0.0;
	for (size_t i = i0; i < n4; i += stride) {
		float4 a = reinterpret_cast<const float4 *>(x)[i];
		/* products in fp32 are exact enough; the sum goes in double */
		acc += (double)(a.x * a.x + a.y * a.y) + (double)(a.z * a.z + a.w * a.w);
	}
	for (size_t i = 4 * n4 + i0; i < n; i += stride)
		acc += (double)x[i] * (double)x[i];
	for (int o = 16; o > 0; o >>= 1)
		acc += __shfl_xor_sync(0xffffffffu, acc, o);
	if ((threadIdx.x & 31) == 0)
		part[threadIdx.x / 32] = acc;
	__syncthreads();
	if (threadIdx.x < 32) {
		double v = threadIdx.x < blockDim.x / 32 ? part[threadIdx.x] : 0.0;
		for (int o = 16; o > 0; o >>= 1)
			v += __shfl_xor_sync(0xffffffffu, v, o);
		if (threadIdx.x == 0)
			atomicAdd(out, v);
	}
}

extern "C" void gpu_sumsq(gpu_ops_ctx *c, double *out_dev, const float *x, size_t n)
{
	if (!n)
		return;
	int vec = (((uintptr_t)x) & 15) == 0;
	int grid = grid_for(c, vec ? n / 4 + 1 : n, 256);
	if (grid > c->nsm * 4)
		grid = c->nsm * 4;
	sumsq_kernel<<<grid, 256, 0, c->stream>>>(out_dev, x, n, vec);
	CKL();
}

__global__ void clip_scale_kernel(float *gscale, const double *sumsq, float max_norm, float extra)
{
	double norm = sqrt(*sumsq) * (double)extra; /* norm of the unscaled gradient */
	double coef = (double)max_norm / (norm + 1e-6);
	if (coef > 1.0 || max_norm <= 0.0f)
		coef = 1.0;
	*gscale = (float)coef * extra;
}

extern "C" void gpu_clip_scale(gpu_ops_ctx *c, float *gscale_dev, const double *sumsq_dev,
			       float max_norm, float extra)
{
	clip_scale_kernel<<<1, 1, 0, c->stream>>>(gscale_dev, sumsq_dev, max_norm, extra);
	CKL();
}
