/*
 * spin.h - test kernels with known durations (spin.cu), for the GPU tests.
 */
#ifndef AORTA_TEST_SPIN_H
#define AORTA_TEST_SPIN_H

#include "gpu/gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Launches one single-thread block that spins for ns nanoseconds of the
 * GPU's global timer; returns the launch status. */
gpuError_t test_spin(gpuStream_t s, long long ns);
/* An empty kernel (launch cost only). */
gpuError_t test_empty(gpuStream_t s);

#ifdef __cplusplus
}
#endif

#endif
