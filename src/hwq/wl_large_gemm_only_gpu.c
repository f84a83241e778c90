/*
 * wl_large_gemm_only_gpu.c - large_gemm_only: one 8192^3 fp32 GEMM per
 * stream (cuBLAS sgemm, default math: no TF32, as PyTorch's default fp32
 * mm), the compute-bound baseline.  A and B are shared (read only), C and
 * a cuBLAS workspace per stream.  Work = 2 * 8192^3 * N FLOP, in TFLOPS.
 * Check: 32 sampled entries of every C against a double-precision dot
 * product of the same fp32 inputs.
 */
#include <stdio.h>
#include <stdlib.h>

#include "kernels/gemm_gpu.h"
#include "hwq/hwq_gpu.h"
#include "hwq/hwq_sizes.h"

#define D HWQ_LARGE_DIM

struct large {
	float *a, *b, **cm, *ha, *hb;
	void **ws;
};

static enum aorta_status lg_setup(void *vs, struct hwq_ctx *c, struct aorta_error *e)
{
	struct large *s = vs;
	enum aorta_status st;
	size_t mat = (size_t)D * D;
	s->ha = xmalloc(mat * 4);
	s->hb = xmalloc(mat * 4);
	if (!(s->a = hwq_alloc(c, mat * 4, e)) || !(s->b = hwq_alloc(c, mat * 4, e)))
		return AORTA_EGPU;
	if ((st = hwq_fill_random(c, s->a, s->ha, mat, -1.0f, 1.0f, 0x1a46a, e)) ||
	    (st = hwq_fill_random(c, s->b, s->hb, mat, -1.0f, 1.0f, 0x1a46b, e)))
		return st;
	s->cm = xcalloc((size_t)c->nstreams, sizeof(float *));
	s->ws = xcalloc((size_t)c->nstreams, sizeof(void *));
	for (int i = 0; i < c->nstreams; i++)
		if (!(s->cm[i] = hwq_alloc(c, mat * 4, e)) || !(s->ws[i] = hwq_alloc(c, HWQ_CUBLAS_WS_BYTES, e)))
			return AORTA_EGPU;
	return AORTA_OK;
}

static enum aorta_status lg_run(void *vs, struct hwq_ctx *c, struct aorta_error *e)
{
	struct large *s = vs;
	for (int i = 0; i < c->nstreams; i++) {
		enum aorta_status st = hwq_gemm(c, c->streams[i], s->ws[i], HWQ_CUBLAS_WS_BYTES, D, D, D, s->a, s->b,
						 s->cm[i], e);
		if (st)
			return st;
	}
	return AORTA_OK;
}

static int lg_check(void *vs, struct hwq_ctx *c, char *msg, size_t cap, struct aorta_error *e)
{
	struct large *s = vs;
	double worst = 0, w;
	int ok = 1;
	for (int i = 0; i < c->nstreams; i++) {
		int r = hwq_check_gemm_sample(s->ha, s->hb, s->cm[i], D, D, D, 32, c->seed + 77 + (uint64_t)i, &w, e);
		if (r < 0)
			return -1;
		ok &= r;
		worst = w > worst ? w : worst;
	}
	snprintf(msg, cap, "%d GEMMs %dx%dx%d: 32 sampled entries each in double precision, worst relative error "
		 "%.3g (tolerance 1e-4)", c->nstreams, D, D, D, worst);
	return ok;
}

static double lg_work(const void *vs, const struct hwq_ctx *c, double *scale)
{
	(void)vs;
	*scale = 1e-9; /* FLOP per ms -> TFLOPS */
	return 2.0 * D * (double)D * D * c->nstreams;
}

static long long lg_kernels(const void *vs, const struct hwq_ctx *c)
{
	(void)vs;
	return c->nstreams;
}

static void lg_teardown(void *vs, struct hwq_ctx *c)
{
	(void)c;
	struct large *s = vs;
	free(s->cm);
	free(s->ws);
	free(s->ha);
	free(s->hb);
}

const struct hwq_workload_ops hwq_wl_large_gemm_only = {
	.name = "large_gemm_only", .state_size = sizeof(struct large), .setup = lg_setup, .run = lg_run,
	.check = lg_check, .work = lg_work, .kernels = lg_kernels, .teardown = lg_teardown,
};
