/*
 * tp_kern.cu - the few kernels of the tune-tp operators (list and
 * conventions in tp_gpu.h).  The GEMMs are cuBLASLt's and the collectives
 * NCCL's or the copy engine's; what is here is glue: inputs, the SM copy
 * of use_ce 0, the reduction that ends ring-exchange reduce-scatter and
 * the check's comparison.  No kernel here waits for another GPU: cross-
 * rank ordering is CUDA events (tp_gpu.c, "Iterations and ordering").
 *
 * The reduction is bandwidth-bound: each thread loads 16 bytes of each of
 * the tp partials (8 bf16/fp16 or 4 fp32), sums in fp32 and stores 16
 * bytes once, so it moves (tp + 1) * bytes(out) at close to HBM speed.
 */
#include "tp/tp_gpu.h"

#include <stdint.h>

#include "gpu/gpu.h"

/* ------------------------------------------------------------ helpers */

__device__ static inline float to_f(gpu_bf16 v) { return gpu_bf16_to_float(v); }
__device__ static inline float to_f(gpu_half v) { return gpu_half_to_float(v); }
__device__ static inline float to_f(float v) { return v; }
template <typename T> __device__ static inline T from_f(float v);
template <> __device__ inline gpu_bf16 from_f<gpu_bf16>(float v) { return gpu_float_to_bf16(v); }
template <> __device__ inline gpu_half from_f<gpu_half>(float v) { return gpu_float_to_half(v); }
template <> __device__ inline float from_f<float>(float v) { return v; }

static int grid_for(long long work, int threads, int cap)
{
	long long g = (work + threads - 1) / threads;
	if (g < 1)
		g = 1;
	return g > cap ? cap : (int)g;
}

/* --------------------------------------------------------------- fill */

template <typename T>
__global__ void tp_fill_kernel(T *p, long long n, uint64_t seed)
{
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
	     i += (long long)gridDim.x * blockDim.x) {
		uint64_t z = seed + 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		z ^= z >> 31;
		float u = (float)(z >> 40) * (1.0f / 16777216.0f) * 2.0f - 1.0f; /* [-1, 1) */
		if (fabsf(u) < 1.0f / 32)
			u = u < 0 ? -1.0f / 32 : 1.0f / 32; /* never zero */
		p[i] = from_f<T>(u);
	}
}

extern "C" int tpk_fill(int dtype, void *p, long long n, uint64_t seed, gpuStream_t st)
{
	int g = grid_for(n, 256, 4096);
	if (dtype == 0)
		tp_fill_kernel<<<g, 256, 0, st>>>((gpu_bf16 *)p, n, seed);
	else if (dtype == 1)
		tp_fill_kernel<<<g, 256, 0, st>>>((gpu_half *)p, n, seed);
	else
		tp_fill_kernel<<<g, 256, 0, st>>>((float *)p, n, seed);
	return (int)gpuGetLastError();
}

/* --------------------------------------------------------------- copy */

__global__ void tp_ring_copy_kernel(uint4 *dst, const uint4 *src, long long n16)
{
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n16;
	     i += (long long)gridDim.x * blockDim.x)
		dst[i] = src[i];
}

extern "C" int tpk_copy(void *dst, const void *src, size_t bytes, int ctas, gpuStream_t st)
{
	if (ctas < 1)
		ctas = 1;
	tp_ring_copy_kernel<<<ctas, 512, 0, st>>>((uint4 *)dst, (const uint4 *)src, (long long)(bytes / 16));
	return (int)gpuGetLastError();
}

/* ------------------------------------------------------------- reduce */

/* E elements of T per 16-byte vector */
template <typename T, int E>
__global__ void tp_ring_reduce_kernel(uint4 *out, const uint4 *src, long long stride16, int nsrc, long long n16)
{
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n16;
	     i += (long long)gridDim.x * blockDim.x) {
		float acc[E];
		for (int j = 0; j < E; j++)
			acc[j] = 0.0f;
		for (int s = 0; s < nsrc; s++) {
			uint4 v = src[s * stride16 + i];
			const T *e = (const T *)&v;
			for (int j = 0; j < E; j++)
				acc[j] += to_f(e[j]);
		}
		uint4 o;
		T *oe = (T *)&o;
		for (int j = 0; j < E; j++)
			oe[j] = from_f<T>(acc[j]);
		out[i] = o;
	}
}

extern "C" int tpk_reduce(int dtype, void *out, const void *src, long long stride, int nsrc, long long n, int ctas,
			  gpuStream_t st)
{
	int esz = dtype == 2 ? 4 : 2;
	long long n16 = n * esz / 16, s16 = stride * esz / 16;
	int g = grid_for(n16, 256, ctas > 0 ? ctas : 1024);
	if (dtype == 0)
		tp_ring_reduce_kernel<gpu_bf16, 8><<<g, 256, 0, st>>>((uint4 *)out, (const uint4 *)src, s16, nsrc, n16);
	else if (dtype == 1)
		tp_ring_reduce_kernel<gpu_half, 8><<<g, 256, 0, st>>>((uint4 *)out, (const uint4 *)src, s16, nsrc, n16);
	else
		tp_ring_reduce_kernel<float, 4><<<g, 256, 0, st>>>((uint4 *)out, (const uint4 *)src, s16, nsrc, n16);
	return (int)gpuGetLastError();
}

/* ------------------------------------------------------------ compare */

template <typename T>
__global__ void tp_compare_kernel(const T *a, const T *ref, long long n, unsigned *out2)
{
	float dmax = 0.0f, rmax = 0.0f;
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
	     i += (long long)gridDim.x * blockDim.x) {
		float x = to_f(a[i]), r = to_f(ref[i]);
		float d = fabsf(x - r);
		if (d != d)
			d = __int_as_float(0x7fc00000);
		dmax = (d != d || dmax != dmax) ? __int_as_float(0x7fc00000) : fmaxf(dmax, d);
		rmax = fmaxf(rmax, fabsf(r));
	}
	for (int o = 16; o > 0; o >>= 1) {
		float d2 = gpu_shfl_down(dmax, o);
		float r2 = gpu_shfl_down(rmax, o);
		dmax = (d2 != d2 || dmax != dmax) ? __int_as_float(0x7fc00000) : fmaxf(dmax, d2);
		rmax = fmaxf(rmax, r2);
	}
	if ((threadIdx.x & 31) == 0) {
		/* non-negative floats (and the positive NaN) order as unsigned */
		atomicMax(out2, __float_as_uint(dmax));
		atomicMax(out2 + 1, __float_as_uint(rmax));
	}
}

extern "C" int tpk_compare(int dtype, const void *a, const void *ref, long long n, unsigned *out2, gpuStream_t st)
{
	int g = grid_for(n, 256, 2048);
	if (dtype == 0)
		tp_compare_kernel<<<g, 256, 0, st>>>((const gpu_bf16 *)a, (const gpu_bf16 *)ref, n, out2);
	else if (dtype == 1)
		tp_compare_kernel<<<g, 256, 0, st>>>((const gpu_half *)a, (const gpu_half *)ref, n, out2);
	else
		tp_compare_kernel<<<g, 256, 0, st>>>((const float *)a, (const float *)ref, n, out2);
	return (int)gpuGetLastError();
}
