/*
 * wl_tiny_kernel_stress_gpu.c - tiny_kernel_stress: on every stream, 100
 * times clamp(abs(add(mul(t, 1.5), 0.5)), 0, 10) on 256 floats, one
 * kernel per op (400 launches per stream per iteration), as upstream's
 * PyTorch loop launches them.  Launch- and switch-bound by design: the
 * host path per launch is one cuLaunchKernel (or <<<>>> with
 * AORTA_HWQ_LAUNCH=runtime) in src/kernels/elementwise_gpu.cu, no error query per launch
 * and no allocation.  FLOPs = 5 * 256 * 100 * N (upstream's
 * count).  Check: every stream's output equals the CPU's fp32 result of
 * the same four operations exactly (random inputs in [-8, 8)).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "hwq/hwq_gpu.h"
#include "hwq/hwq_sizes.h"
#include "kernels/elementwise_gpu.h"

struct tiny {
	float **in, **a, **b, **out;
	float *host_in;  /* [n * ELEMS] */
};

static enum aorta_status tiny_setup(void *vs, struct hwq_ctx *c, struct aorta_error *e)
{
	struct tiny *s = vs;
	int n = c->nstreams;
	s->in = xcalloc((size_t)n, sizeof(float *));
	s->a = xcalloc((size_t)n, sizeof(float *));
	s->b = xcalloc((size_t)n, sizeof(float *));
	s->out = xcalloc((size_t)n, sizeof(float *));
	s->host_in = xmalloc((size_t)n * HWQ_TINY_ELEMS * sizeof(float));
	for (int i = 0; i < n; i++) {
		if (!(s->in[i] = hwq_alloc(c, HWQ_TINY_ELEMS * 4, e)) || !(s->a[i] = hwq_alloc(c, HWQ_TINY_ELEMS * 4, e)) ||
		    !(s->b[i] = hwq_alloc(c, HWQ_TINY_ELEMS * 4, e)) || !(s->out[i] = hwq_alloc(c, HWQ_TINY_ELEMS * 4, e)))
			return AORTA_EGPU;
		enum aorta_status st = hwq_fill_random(c, s->in[i], s->host_in + (size_t)i * HWQ_TINY_ELEMS,
						       HWQ_TINY_ELEMS, -8.0f, 8.0f, 0x7100 + (uint64_t)i, e);
		if (st)
			return st;
	}
	return AORTA_OK;
}

static enum aorta_status tiny_run(void *vs, struct hwq_ctx *c, struct aorta_error *e)
{
	struct tiny *s = vs;
	int bad = 0;
	for (int i = 0; i < c->nstreams; i++)
		bad |= hwq_k_tiny_chain(s->out[i], s->in[i], s->a[i], s->b[i], HWQ_TINY_ELEMS, HWQ_TINY_REPS,
					c->streams[i]);
	if (bad)
		return aorta_fail(e, AORTA_EGPU, NULL, 0, -1, "cuLaunchKernel failed (CUresult bits 0x%x)", bad);
	return GPU_CALL(e, gpuGetLastError());
}

/* the CPU twin, operation by operation in fp32 */
static float tiny_ref(float x)
{
	volatile float a = x * 1.5f;
	volatile float b = a + 0.5f;
	float d = fabsf(b);
	return fminf(fmaxf(d, 0.0f), 10.0f);
}

static int tiny_check(void *vs, struct hwq_ctx *c, char *msg, size_t cap, struct aorta_error *e)
{
	struct tiny *s = vs;
	float got[HWQ_TINY_ELEMS];
	long long bad = 0;
	double worst = 0;
	for (int i = 0; i < c->nstreams; i++) {
		if (GPU_CALL(e, gpuMemcpy(got, s->out[i], sizeof(got), gpuMemcpyDeviceToHost)))
			return -1;
		for (int j = 0; j < HWQ_TINY_ELEMS; j++) {
			float ref = tiny_ref(s->host_in[(size_t)i * HWQ_TINY_ELEMS + j]);
			double d = fabs((double)got[j] - ref);
			if (d > worst)
				worst = d;
			bad += got[j] != ref;
		}
	}
	snprintf(msg, cap, "%d streams x %d outputs of clamp(abs(x*1.5+0.5),0,10) against the CPU: %lld differ, "
		 "worst |error| %.3g (exact expected); launched with %s", c->nstreams, HWQ_TINY_ELEMS, bad, worst,
		 hwq_k_driver_launch() ? "cuLaunchKernel" : "<<<>>>");
	return bad == 0;
}

static double tiny_work(const void *vs, const struct hwq_ctx *c, double *scale)
{
	(void)vs;
	*scale = 1e-6; /* FLOP per ms -> GFLOPS */
	return 5.0 * HWQ_TINY_ELEMS * HWQ_TINY_REPS * c->nstreams;
}

static long long tiny_kernels(const void *vs, const struct hwq_ctx *c)
{
	(void)vs;
	return 4LL * HWQ_TINY_REPS * c->nstreams;
}

static void tiny_teardown(void *vs, struct hwq_ctx *c)
{
	(void)c;
	struct tiny *s = vs;
	free(s->in);
	free(s->a);
	free(s->b);
	free(s->out);
	free(s->host_in);
}

const struct hwq_workload_ops hwq_wl_tiny_kernel_stress = {
	.name = "tiny_kernel_stress", .state_size = sizeof(struct tiny), .setup = tiny_setup, .run = tiny_run,
	.check = tiny_check, .work = tiny_work, .kernels = tiny_kernels, .teardown = tiny_teardown,
};
