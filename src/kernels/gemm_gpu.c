/*
 * gemm_gpu.c - hwq_sgemm and its sampled double-precision check (see
 * gemm_gpu.h).  Checking 8192^3 products in full on the CPU would take
 * minutes; a few dozen entries chosen from the seed catch a wrong layout,
 * a wrong operand or a missed GEMM (C is zeroed at allocation).
 */
#include <math.h>
#include <stdio.h>

#include "gpu/check.h"
#include "kernels/gemm_gpu.h"
#include "kernels/rng.h"

enum aorta_status hwq_sgemm(cublasHandle_t h, gpuStream_t s, void *ws, size_t ws_bytes, int m, int n, int k,
			    const float *a, const float *b, float *out, struct aorta_error *e)
{
	const float one = 1.0f, zero = 0.0f;
	GPU_BLAS_CHECK(e, cublasSetStream(h, s));
	if (ws)
		GPU_BLAS_CHECK(e, cublasSetWorkspace(h, ws, ws_bytes));
	GPU_BLAS_CHECK(e, cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, a, m, b, k, &zero, out, m));
	return AORTA_OK;
}

int hwq_check_gemm_sample(const float *ha, const float *hb, const float *dc, int m, int n, int k, int samples,
			  uint64_t seed, double *worst, struct aorta_error *e)
{
	int ok = 1;
	*worst = 0;
	for (int t = 0; t < samples; t++) {
		int i = (int)(rng_u64(seed, 0xc4ec, (uint64_t)t * 2) % (uint64_t)m);
		int j = (int)(rng_u64(seed, 0xc4ec, (uint64_t)t * 2 + 1) % (uint64_t)n);
		float got;
		if (GPU_CALL(e, gpuMemcpy(&got, dc + (size_t)i + (size_t)j * m, sizeof(float), gpuMemcpyDeviceToHost)))
			return -1;
		double ref = 0, mag = 0;
		for (int q = 0; q < k; q++) {
			double p = (double)ha[(size_t)i + (size_t)q * m] * (double)hb[(size_t)q + (size_t)j * k];
			ref += p;
			mag += fabs(p);
		}
		double err = fabs((double)got - ref), tol = 1e-4 * mag + 1e-6;
		double rel = err / (mag > 0 ? mag : 1);
		if (rel > *worst)
			*worst = rel;
		if (!(err <= tol))
			ok = 0;
	}
	return ok;
}
