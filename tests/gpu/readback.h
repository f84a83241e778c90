/*
 * readback.h - a kernel that reads a buffer on a given stream
 * (readback.cu), for tests/gpu/test_nccl.c: it proves that a stream made
 * to wait for a collective sees the collective's result.
 */
#ifndef AORTA_TEST_READBACK_H
#define AORTA_TEST_READBACK_H

#include <stddef.h>

#include "gpu/gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* out[i] = in[i] for i < n, by a grid-stride kernel on s; launch status. */
gpuError_t test_read_copy(gpuStream_t s, const float *in, float *out, size_t n);

#ifdef __cplusplus
}
#endif

#endif
