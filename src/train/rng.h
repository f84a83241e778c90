/*
 * rng.h - a counter-based random number generator shared by C and CUDA.
 *
 * Every random number is a pure function of (seed, site, index): a
 * SplitMix64-style mix of the three.  No state, so the CPU reference and the
 * GPU kernels draw identical numbers in any order and from any thread, and a
 * sample's data depends only on (seed, sample index).
 */
#ifndef AORTA_TRAIN_RNG_H
#define AORTA_TRAIN_RNG_H

#include <stdint.h>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define RNG_FN static __host__ __device__ __forceinline__
#else
#define RNG_FN static inline
#endif

RNG_FN uint64_t rng_mix(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

RNG_FN uint64_t rng_u64(uint64_t seed, uint64_t site, uint64_t i)
{
	return rng_mix(rng_mix(rng_mix(seed) ^ site) ^ i);
}

/* Uniform in [0, 1) with 24 bits (exactly representable in float). */
RNG_FN float rng_uniform(uint64_t seed, uint64_t site, uint64_t i)
{
	return (float)(rng_u64(seed, site, i) >> 40) * (1.0f / 16777216.0f);
}

#endif
