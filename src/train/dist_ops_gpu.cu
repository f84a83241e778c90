/*
 * dist_ops_gpu.cu - see dist_ops_gpu.h.  One thread each: the values are
 * single scalars, and a kernel keeps them on the device (no host round
 * trip between the local norm, the all-reduce and the clip scale).
 */
#include "gpu/gpu.h"
#include "train/dist_ops_gpu.h"
#include "train/rng.h"

__global__ void sumsq_split_kernel(float *hl, const double *s)
{
	double v = *s;
	float hi = (float)v;
	hl[0] = hi;
	hl[1] = (float)(v - (double)hi);
}

__global__ void sumsq_join_kernel(double *s, const float *hl)
{
	*s = (double)hl[0] + (double)hl[1];
}

extern "C" int gpu_sumsq_split(float *hl_dev, const double *s_dev, void *stream)
{
	sumsq_split_kernel<<<1, 1, 0, (gpuStream_t)stream>>>(hl_dev, s_dev);
	return (int)gpuGetLastError();
}

extern "C" int gpu_sumsq_join(double *s_dev, const float *hl_dev, void *stream)
{
	sumsq_join_kernel<<<1, 1, 0, (gpuStream_t)stream>>>(s_dev, hl_dev);
	return (int)gpuGetLastError();
}

__global__ void stress_fill_kernel(float *x, size_t n, uint64_t seed, uint64_t site)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		x[i] = 2.0f * rng_uniform(seed, site, i) - 1.0f;
}

__global__ void stress_scale_kernel(float *x, size_t n, float s)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		x[i] *= s;
}

static unsigned stress_blocks(size_t n)
{
	size_t b = (n + 255) / 256;
	return (unsigned)(b < 1 ? 1 : b > 4096 ? 4096 : b);
}

extern "C" int gpu_stress_fill(float *x_dev, size_t n, unsigned long long seed, unsigned long long site,
			       void *stream)
{
	stress_fill_kernel<<<stress_blocks(n), 256, 0, (gpuStream_t)stream>>>(x_dev, n, (uint64_t)seed,
										 (uint64_t)site);
	return (int)gpuGetLastError();
}

extern "C" int gpu_stress_scale(float *x_dev, size_t n, float s, void *stream)
{
	stress_scale_kernel<<<stress_blocks(n), 256, 0, (gpuStream_t)stream>>>(x_dev, n, s);
	return (int)gpuGetLastError();
}

/* ---- the reduce dtype's conversions (fsdp.reduce_dtype bf16) -------------- *
 * The same bit arithmetic as comm.h's comm_f32_to_bf16 (round to nearest,
 * ties to even; NaN kept a quiet NaN), so the device and host casts agree
 * bit for bit; bf16 -> fp32 is exact (a shift). */

__device__ static unsigned short f32_to_bf16_bits(float f)
{
	unsigned u = __float_as_uint(f);
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (unsigned short)((u >> 16) | 0x40u);
	u += 0x7fffu + ((u >> 16) & 1u);
	return (unsigned short)(u >> 16);
}

__global__ void f32_to_bf16_kernel(unsigned short *dst, const float *src, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		dst[i] = f32_to_bf16_bits(src[i]);
}

__global__ void bf16_to_f32_kernel(float *dst, const unsigned short *src, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		dst[i] = __uint_as_float((unsigned)src[i] << 16);
}

extern "C" int gpu_f32_to_bf16(unsigned short *dst_dev, const float *src_dev, size_t n, void *stream)
{
	if (!n)
		return 0;
	f32_to_bf16_kernel<<<stress_blocks(n), 256, 0, (gpuStream_t)stream>>>(dst_dev, src_dev, n);
	return (int)gpuGetLastError();
}

extern "C" int gpu_bf16_to_f32(float *dst_dev, const unsigned short *src_dev, size_t n, void *stream)
{
	if (!n)
		return 0;
	bf16_to_f32_kernel<<<stress_blocks(n), 256, 0, (gpuStream_t)stream>>>(dst_dev, src_dev, n);
	return (int)gpuGetLastError();
}
