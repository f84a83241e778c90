/*
 * gemm_gpu.h - the fp32 GEMM the hwq workloads share (cuBLAS sgemm,
 * CUBLAS_DEFAULT_MATH: no TF32, as PyTorch's default fp32 matmul) and its
 * sampled CPU check.  GPU builds only.
 */
#ifndef AORTA_KERNELS_GEMM_GPU_H
#define AORTA_KERNELS_GEMM_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#ifndef AORTA_HIP /* hipBLAS is not packaged for Debian 12: no GEMM in HIP builds yet */
#include "gpu/blas.h"
#endif

#ifdef __cplusplus
extern "C" {
#endif

#ifndef AORTA_HIP
/* C = A * B (column-major, m x k times k x n) with the cuBLAS handle h on
 * stream s with workspace ws (ws_bytes; NULL: cuBLAS's own, not capturable). */
enum aorta_status hwq_sgemm(cublasHandle_t h, gpuStream_t s, void *ws, size_t ws_bytes, int m, int n, int k,
			    const float *a, const float *b, float *out, struct aorta_error *e);
#endif

/* Checks `samples` entries of device C = A * B (host copies ha, hb) in
 * double precision: |c - ref| <= 1e-4 * sum_k |a b| + 1e-6.  Returns 1 ok,
 * 0 mismatch, -1 GPU error (e filled); *worst receives the largest
 * relative error. */
int hwq_check_gemm_sample(const float *ha, const float *hb, const float *dc, int m, int n, int k, int samples,
			  uint64_t seed, double *worst, struct aorta_error *e);

#ifdef __cplusplus
}
#endif

#endif
