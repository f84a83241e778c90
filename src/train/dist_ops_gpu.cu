/*
 * dist_ops_gpu.cu - see dist_ops_gpu.h.  One thread each: the values are
 * single scalars, and a kernel keeps them on the device (no host round
 * trip between the local norm, the all-reduce and the clip scale).
 */
#include <cuda_runtime.h>

#include "train/dist_ops_gpu.h"

__global__ void sumsq_split_kernel(float *hl, const double *s)
{
	double v = *s;
	float hi = (float)v;
	hl[0] = hi;
	hl[1] = (float)(v - (double)hi);
}

__global__ void sumsq_join_kernel(double *s, const float *hl)
{
	*s = (double)hl[0] + (double)hl[1];
}

extern "C" int gpu_sumsq_split(float *hl_dev, const double *s_dev, void *stream)
{
	sumsq_split_kernel<<<1, 1, 0, (cudaStream_t)stream>>>(hl_dev, s_dev);
	return (int)cudaGetLastError();
}

extern "C" int gpu_sumsq_join(double *s_dev, const float *hl_dev, void *stream)
{
	sumsq_join_kernel<<<1, 1, 0, (cudaStream_t)stream>>>(s_dev, hl_dev);
	return (int)cudaGetLastError();
}
