/*
 * cuda_ok.h - the GPU test programs' check of a CUDA runtime call: on
 * failure print file:line and the runtime's message, exit 4 (GPU error).
 */
#ifndef AORTA_TEST_CUDA_OK_H
#define AORTA_TEST_CUDA_OK_H

#include <stdio.h>
#include <stdlib.h>

#include "gpu/gpu.h"

#define CUDA_OK(call)                                                                           \
	do {                                                                                    \
		gpuError_t e_ = (call);                                                        \
		if (e_ != gpuSuccess) {                                                        \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, gpuGetErrorString(e_)); \
			exit(4);                                                                \
		}                                                                               \
	} while (0)

#endif
