/*
 * tp_gpu.h - private to the tune-tp GPU side: the kernels of src/tp/
 * tp_kern.cu, called from tp_gpu.c.  Every launcher enqueues on the given
 * stream of the current device and returns cudaGetLastError() as an int
 * (0 = cudaSuccess).  dtype is enum tp_dtype (0 bf16, 1 fp16, 2 fp32).
 *
 * Kernel names (what a trace shows; prefix tp_ so traces classify them):
 *   tp_fill_kernel          seeded random inputs in [-1, -1/32] u [1/32, 1)
 *   tp_ring_copy_kernel     SM copy of a ring chunk over peer pointers (use_ce 0)
 *   tp_ring_reduce_kernel   sum of tp partials, fp32 accumulation, 16-byte vectors
 *   tp_compare_kernel       max |a - ref| and max |ref| for the check
 * No kernel spins on another GPU: cross-rank order is CUDA events.
 */
#ifndef AORTA_TP_GPU_H
#define AORTA_TP_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "gpu/gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

#if !defined(__CUDACC__) && !defined(__HIPCC__)
#include "tp/tp.h"
/* the plug-in's entry points (the typedefs of tp.h; the GPU tests call
 * them directly, the host side through gpu_plugin_sym) */
int tp_gpu_count(void);
enum aorta_status tp_gpu_open(int tp, long long max_elems, struct tp_session **out, int *sm_count,
			      struct aorta_error *e);
enum aorta_status tp_gpu_measure(struct tp_session *s, const struct tp_shape *sh, const struct tp_cfg *cfg,
				 const struct tp_measure_opts *o, struct tp_meas *out, struct aorta_error *e);
void tp_gpu_close(struct tp_session *s);
#endif

#define TPK_MAXR 8
int tpk_fill(int dtype, void *p, long long n, uint64_t seed, gpuStream_t st);
int tpk_copy(void *dst, const void *src, size_t bytes, int ctas, gpuStream_t st);
int tpk_reduce(int dtype, void *out, const void *src, long long stride, int nsrc, long long n, int ctas,
	       gpuStream_t st);
/* out2[0] = bits of max |a - ref| (NaN if any is NaN), out2[1] = bits of
 * max |ref|; both must be zeroed first */
int tpk_compare(int dtype, const void *a, const void *ref, long long n, unsigned *out2, gpuStream_t st);

#ifdef __cplusplus
}
#endif

#endif
