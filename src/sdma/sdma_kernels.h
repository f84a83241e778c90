/*
 * sdma_kernels.h - the kernels of aorta sdma (sdma_kernels.cu), behind C
 * declarations with no CUDA type: streams are passed as void * (a
 * cudaStream_t), and each launcher returns the runtime's error code of the
 * launch (0 = success) as an int.
 */
#ifndef AORTA_SDMA_KERNELS_H
#define AORTA_SDMA_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* x[i] = max(x[i], 0) for n bf16 values in place. */
int sdma_relu_bf16(void *x, size_t n, int grid, void *stream);

/* Copies bytes from src to dst with a grid-stride loop of 16-byte loads and
 * stores (the tail byte by byte); src and dst may be device, peer or
 * mapped pinned-host pointers.  Both must be 16-byte aligned for the vector
 * part (cudaMalloc and cudaHostAlloc give 256). */
int sdma_copy_kernel(void *dst, const void *src, size_t bytes, int grid, int block, void *stream);

/* One thread spins on the global timer for ns nanoseconds: holds a stream
 * while the host enqueues an iteration, so launch latency is not timed. */
int sdma_delay(uint64_t ns, void *stream);

#ifdef __cplusplus
}
#endif

#endif
