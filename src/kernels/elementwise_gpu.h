/*
 * elementwise_gpu.h - the elementwise kernels of the hwq workloads, one kernel
 * per PyTorch op they stand for (mul by a scalar, add a scalar, abs,
 * clamp), so launch counts match an eager PyTorch loop op for op.  Each
 * launcher enqueues one kernel of ceil(n/256) blocks of 256 threads on s
 * and returns nothing: errors surface at the caller's one
 * cudaGetLastError per iteration (no per-launch query, which would cost
 * as much as the launch).  GPU builds only.
 */
#ifndef AORTA_KERNELS_ELEMENTWISE_GPU_H
#define AORTA_KERNELS_ELEMENTWISE_GPU_H

#include <stdint.h>

#include "gpu/gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

void hwq_k_mul(float *out, const float *in, float s, int n, gpuStream_t st);   /* out = in * s */
void hwq_k_add(float *out, const float *in, float s, int n, gpuStream_t st);   /* out = in + s */

/* tiny_kernel_stress's loop on one stream: reps times
 *   a = in*1.5; b = a+0.5; a = |b|; out = clamp(a, 0, 10)
 * (4 kernels per rep); a, b are scratch of n floats.  Returns 0, or the
 * OR of the driver's CUresults when a cuLaunchKernel failed (runtime
 * launches report through cudaGetLastError as usual). */
int hwq_k_tiny_chain(float *out, const float *in, float *a, float *b, int n, int reps, gpuStream_t st);

/* 1 when hwq_k_tiny_chain launches through the driver's cuLaunchKernel
 * on the current device (default), 0 when through <<<>>>
 * (AORTA_HWQ_LAUNCH=runtime, or the driver path is unavailable). */
int hwq_k_driver_launch(void);

/* x[i] = ((i * 7 + rank * 3) % 17) - 8: small integers, so a sum over
 * ranks is exact in fp32 (the all-reduce check). */
void hwq_k_pattern(float *x, size_t n, int rank, gpuStream_t st);

/* An empty kernel named hwq_stream_marker_kernel on s: the harness
 * launches one per stream, in stream order, each waited for, at the start
 * of the timing pass (HWQ_MARKER_NAME finds them in the trace). */
void hwq_k_marker(int index, gpuStream_t s);

#ifdef __cplusplus
}
#endif

#endif
