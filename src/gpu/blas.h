/*
 * blas.h - the one place host code gets the GPU BLAS libraries' headers
 * (cuBLAS and cuBLASLt; hipBLAS and hipBLASLt under -DAORTA_HIP).  Files
 * outside src/gpu/ include this, never <cublas_v2.h> or <cublasLt.h>, so a
 * port changes the spelling here only.  Calls are checked with
 * GPU_BLAS_GOTO / GPU_BLAS (gpu/check.h).
 */
#ifndef AORTA_GPU_BLAS_H
#define AORTA_GPU_BLAS_H

#include "gpu/gpu.h"

#ifdef AORTA_HIP
#include <hipblas/hipblas.h>
#include <hipblaslt/hipblaslt.h>
#else
#include <cublas_v2.h>
/* cublasLt.h declares a function with () (not a prototype) */
#if defined(__GNUC__) && !defined(__cplusplus)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#endif
#include <cublasLt.h>
#if defined(__GNUC__) && !defined(__cplusplus)
#pragma GCC diagnostic pop
#endif
#endif

#endif
