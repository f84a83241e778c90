/*
 * sdma_kernels.cu - relu on bf16, the SM copy kernel of --engine kernel, and
 * the stream-holding delay (sdma_kernels.h).
 *
 * The copy kernel is what --engine kernel measures against the copy
 * engines: a plain grid-stride loop, four 16-byte vectors in flight per
 * thread per step, launched on the high-priority copy stream.  It occupies
 * SMs that the GEMM would otherwise use, which is the point of comparing.
 */
#include "sdma/sdma_kernels.h"

#include "gpu/gpu.h"

__global__ void relu_bf16_kernel(gpu_bf16 *x, size_t n)
{
	const size_t stride = (size_t)gridDim.x * blockDim.x;
	const size_t n2 = n / 2;
	gpu_bf16x2 *x2 = reinterpret_cast<gpu_bf16x2 *>(x);
	const gpu_bf16x2 zero2 = gpu_bf16x2_zero();

	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n2; i += stride)
		x2[i] = gpu_bf16x2_max(x2[i], zero2);
	if ((n & 1) && blockIdx.x == 0 && threadIdx.x == 0)
		x[n - 1] = gpu_bf16_max(x[n - 1], gpu_float_to_bf16(0.0f));
}

extern "C" int sdma_relu_bf16(void *x, size_t n, int grid, void *stream)
{
	relu_bf16_kernel<<<grid, 256, 0, (gpuStream_t)stream>>>((gpu_bf16 *)x, n);
	return (int)gpuGetLastError();
}

__global__ void copy_kernel(uint4 *__restrict__ dst, const uint4 *__restrict__ src, size_t nvec,
			    unsigned char *__restrict__ dtail, const unsigned char *__restrict__ stail,
			    size_t ntail)
{
	const size_t stride = (size_t)gridDim.x * blockDim.x;
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	/* four independent loads in flight before the stores */
	for (; i + 3 * stride < nvec; i += 4 * stride) {
		uint4 a = src[i], b = src[i + stride], c = src[i + 2 * stride], d = src[i + 3 * stride];
		dst[i] = a;
		dst[i + stride] = b;
		dst[i + 2 * stride] = c;
		dst[i + 3 * stride] = d;
	}
	for (; i < nvec; i += stride)
		dst[i] = src[i];
	if (blockIdx.x == 0)
		for (size_t t = threadIdx.x; t < ntail; t += blockDim.x)
			dtail[t] = stail[t];
}

extern "C" int sdma_copy_kernel(void *dst, const void *src, size_t bytes, int grid, int block,
				void *stream)
{
	size_t nvec = bytes / 16;
	copy_kernel<<<grid, block, 0, (gpuStream_t)stream>>>(
		(uint4 *)dst, (const uint4 *)src, nvec, (unsigned char *)dst + nvec * 16,
		(const unsigned char *)src + nvec * 16, bytes - nvec * 16);
	return (int)gpuGetLastError();
}

__global__ void delay_kernel(uint64_t ns)
{
	const uint64_t t0 = gpu_timer_ns();

	while (gpu_timer_ns() - t0 < ns)
		;
}

extern "C" int sdma_delay(uint64_t ns, void *stream)
{
	delay_kernel<<<1, 1, 0, (gpuStream_t)stream>>>(ns);
	return (int)gpuGetLastError();
}
