/*
 * warp.cuh - the warp reductions every kernel file shares (device code
 * only; include from .cu files).  Full-warp butterfly over 32 lanes: every
 * lane returns the result (gpu.h's gpu_shfl_xor: 32-lane groups on AMD's 64-lane
 * wavefronts too).  Callers launch blocks whose size is a multiple
 * of 32.
 */
#ifndef AORTA_KERNELS_WARP_CUH
#define AORTA_KERNELS_WARP_CUH

#include "gpu/gpu.h"

/* sum of v over the 32 lanes of the warp */
__device__ __forceinline__ static float warp_sum(float v)
{
	for (int o = 16; o > 0; o >>= 1)
		v += gpu_shfl_xor(v, o);
	return v;
}

/* maximum of v over the 32 lanes of the warp */
__device__ __forceinline__ static float warp_max(float v)
{
	for (int o = 16; o > 0; o >>= 1)
		v = fmaxf(v, gpu_shfl_xor(v, o));
	return v;
}

#endif
