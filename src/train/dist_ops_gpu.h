/*
 * dist_ops_gpu.h - the device kernels the GPU executor of the FSDP / DDP
 * schedules needs besides the model's ops (trainer_gpu.c).
 *
 * The communicator carries float32 only (comm.h), but the squared gradient
 * norm is a double on the device (gpu_sumsq).  As on the CPU (dist_cpu.c),
 * it travels as two floats, hi = (float)s and lo = (float)(s - hi), whose
 * sums over the ranks give back the sum in (nearly) double precision.
 * Both kernels run one thread on `stream` (a cudaStream_t), never wait on
 * the host, and return the launch's cudaError_t as an int (0: success).
 * The stress kernels (dist.h's stress injection) and the bf16 casts of
 * the reduce dtype are elementwise, on `stream`, with the same return
 * convention.
 */
#ifndef AORTA_TRAIN_DIST_OPS_GPU_H
#define AORTA_TRAIN_DIST_OPS_GPU_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* hl[0] = (float)*s, hl[1] = (float)(*s - hl[0]) */
int gpu_sumsq_split(float *hl_dev, const double *s_dev, void *stream);
/* *s = (double)hl[0] + (double)hl[1] */
int gpu_sumsq_join(double *s_dev, const float *hl_dev, void *stream);
/* x[i] = 2 * rng_uniform(seed, site, i) - 1 (rng.h: the CPU executor's values) */
int gpu_stress_fill(float *x_dev, size_t n, unsigned long long seed, unsigned long long site, void *stream);
/* x[i] *= s */
int gpu_stress_scale(float *x_dev, size_t n, float s, void *stream);
/* The reduce dtype's casts (fsdp.reduce_dtype bf16), elementwise on
 * `stream`: dst[i] = bf16(src[i]), rounded to nearest even, bit for bit
 * the CPU twin comm_f32_to_bf16_n of comm.h; and back, exactly
 * (comm_bf16_to_f32_n).  bf16 values are the uint16 upper halves of
 * floats.  n = 0 launches nothing. */
int gpu_f32_to_bf16(unsigned short *dst_dev, const float *src_dev, size_t n, void *stream);
int gpu_bf16_to_f32(float *dst_dev, const unsigned short *src_dev, size_t n, void *stream);

#ifdef __cplusplus
}
#endif
#endif
