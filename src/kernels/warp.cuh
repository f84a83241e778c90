/*
 * warp.cuh - the warp reductions every kernel file shares (device code
 * only; include from .cu files).  Full-warp butterfly over 32 lanes: every
 * lane returns the result.  Callers launch blocks whose size is a multiple
 * of 32.
 */
#ifndef AORTA_KERNELS_WARP_CUH
#define AORTA_KERNELS_WARP_CUH

/* sum of v over the 32 lanes of the warp */
__device__ __forceinline__ static float warp_sum(float v)
{
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

/* maximum of v over the 32 lanes of the warp */
__device__ __forceinline__ static float warp_max(float v)
{
	for (int o = 16; o > 0; o >>= 1)
		v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
	return v;
}

#endif
