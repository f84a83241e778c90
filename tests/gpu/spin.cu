/*
 * spin.cu - kernels with known durations for tests/gpu/test_runtime.c.
 *
 * test_spin's kernel reads the GPU's nanosecond global timer and sleeps in
 * 1 us __nanosleep steps until ns have passed: one thread of one block, so
 * two of them on two streams run side by side and their spans must
 * overlap.  Duration accuracy is the timer's update period (about 1 us on
 * Hopper) plus the last sleep.
 */
#include "spin.h"

static __device__ __forceinline__ unsigned long long global_ns(void)
{
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

__global__ void aorta_test_spin_kernel(long long ns)
{
	unsigned long long t0 = global_ns();
	while ((long long)(global_ns() - t0) < ns)
		__nanosleep(1000);
}

__global__ void aorta_test_empty_kernel(void)
{
}

extern "C" gpuError_t test_spin(gpuStream_t s, long long ns)
{
	aorta_test_spin_kernel<<<1, 1, 0, s>>>(ns);
	return gpuGetLastError();
}

extern "C" gpuError_t test_empty(gpuStream_t s)
{
	aorta_test_empty_kernel<<<1, 1, 0, s>>>();
	return gpuGetLastError();
}
