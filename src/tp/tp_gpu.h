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
 *   tp_barrier_kernel       device barrier across ranks (flags in peer memory)
 *   tp_signal_kernel        one flag store into a peer's memory
 *   tp_wait_kernel          spin until flags reach an epoch
 *   tp_compare_kernel       max |a - ref| and max |ref| for the check
 * Spinning kernels give up after TPK_SPIN_NS and set *err (never hang).
 */
#ifndef AORTA_TP_GPU_H
#define AORTA_TP_GPU_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef __CUDACC__
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
#define TPK_SPIN_NS 20000000000ull /* 20 s */

/* flag words per rank (unsigned, device memory, peer-visible):
 * [0, 8) barrier arrivals by source rank, [8, 16) ring RS "partial from
 * rank s landed" by source, [16] error word (1 = a spin timed out). */
#define TPK_FLAG_BAR 0
#define TPK_FLAG_READY 8
#define TPK_FLAG_ERR 16
#define TPK_NFLAGS 32

struct tpk_peers {
	unsigned *flags[TPK_MAXR];
	const unsigned *abort;  /* device view of a mapped host word: nonzero ends every spin */
};

int tpk_fill(int dtype, void *p, long long n, uint64_t seed, cudaStream_t st);
int tpk_copy(void *dst, const void *src, size_t bytes, int ctas, cudaStream_t st);
int tpk_reduce(int dtype, void *out, const void *src, long long stride, int nsrc, long long n, int ctas,
	       cudaStream_t st);
int tpk_barrier(struct tpk_peers peers, int rank, int tp, unsigned epoch, cudaStream_t st);
int tpk_signal(unsigned *flag, unsigned epoch, cudaStream_t st);
int tpk_wait(unsigned *flags, int first, int count, int skip, unsigned epoch, const unsigned *abort,
	     cudaStream_t st);
/* out2[0] = bits of max |a - ref| (NaN if any is NaN), out2[1] = bits of
 * max |ref|; both must be zeroed first */
int tpk_compare(int dtype, const void *a, const void *ref, long long n, unsigned *out2, cudaStream_t st);

#ifdef __cplusplus
}
#endif

#endif
