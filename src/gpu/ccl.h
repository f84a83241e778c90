/*
 * ccl.h - the one place host code gets the collective library's header
 * (NCCL; RCCL under -DAORTA_HIP, which keeps NCCL's names).  Files outside
 * src/gpu/ include this, never <nccl.h>.  Calls are checked with
 * GPU_NCCL_GOTO / GPU_NCCL (gpu/check.h).
 */
#ifndef AORTA_GPU_CCL_H
#define AORTA_GPU_CCL_H

#include "gpu/gpu.h"

/* nccl.h declares a few functions with () (not prototypes) */
#if defined(__GNUC__) && !defined(__cplusplus)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#endif
#ifdef AORTA_HIP
#include <rccl/rccl.h>
#else
#include <nccl.h>
#endif
#if defined(__GNUC__) && !defined(__cplusplus)
#pragma GCC diagnostic pop
#endif

#endif
