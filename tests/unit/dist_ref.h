/*
 * dist_ref.h - the serial reference that distributed training must equal:
 * world 1, the whole global batch, cpu_model_forward_backward, the clip
 * factor of dist_clip_scale and cpu_adamw over the whole flat buffer.
 * Shared by tests/unit/test_dist.c and tests/mpi/test_dist_mpi.c.
 *
 * Step s uses the global batch of samples [s*B, (s+1)*B) (batch_fill with
 * first sample s*B), dropout seed ref_seed(s), lr lr_at(REF_LR, s, 5, 40).
 */
#ifndef AORTA_TEST_DIST_REF_H
#define AORTA_TEST_DIST_REF_H

#include "train/dist.h"
#include "train/model.h"
#include "kernels/ops.h"
#include "kernels/rng.h"

#include <stdlib.h>
#include <string.h>

#define REF_LR 3e-3
#define REF_DATA_SEED 42u
#define REF_INIT_SEED 7u

static inline uint64_t ref_seed(int s)
{
	return rng_mix(0xd15c0u + (uint64_t)s);
}

static inline float ref_lr(int s)
{
	return (float)lr_at(REF_LR, s, 5, 40);
}

/* Trains `steps` steps from init (lay->total floats) into params; writes
 * losses[steps]. */
static inline void ref_train(const struct model_dims *d, const struct param_layout *lay, const float *init,
			     float *params, int steps, int B, int training, float max_norm, float *losses)
{
	size_t n = lay->total;
	float *g = calloc(n, sizeof(float)), *m = calloc(n, sizeof(float)), *v = calloc(n, sizeof(float));
	struct batch b;
	batch_alloc(&b, d, B);
	memcpy(params, init, n * sizeof(float));
	for (int s = 0; s < steps; s++) {
		batch_fill(&b, d, REF_DATA_SEED, (uint64_t)s * (uint64_t)B);
		memset(g, 0, n * sizeof(float));
		losses[s] = cpu_model_forward_backward(d, lay, params, g, &b, ref_seed(s), training, 1.0f, NULL);
		float gscale = dist_clip_scale(cpu_sumsq(g, n), max_norm, 1.0f, NULL);
		cpu_adamw(params, g, m, v, n, ref_lr(s), 0.9f, 0.98f, 1e-8f, 0.01f, s + 1, gscale);
	}
	batch_free(&b);
	free(g);
	free(m);
	free(v);
}

#endif
