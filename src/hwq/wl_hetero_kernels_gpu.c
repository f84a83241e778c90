/*
 * wl_hetero_kernels_gpu.c - hetero_kernels: the first L = floor(N/2)
 * streams each run one 4096^3 fp32 GEMM; after each GEMM is enqueued, 10
 * tiny add(mul(t, 2), 1) ops on 1024 floats (two kernels each) go
 * round-robin to the other N - L streams, so large and tiny kernels
 * compete for the SMs and the queues (upstream's workload).  With 10 L
 * tiny ops spread over N - L streams every stream gets work.  A and B are
 * shared by the GEMM streams (read only; upstream made one pair per
 * stream, which changes nothing on the GPU and costs setup time), C and
 * the cuBLAS workspace are per stream.  FLOPs = 2 * 4096^3 * L + 3 * 1024
 * per tiny op (upstream's count).  Check: 64 sampled entries of every C in
 * double precision, and every tiny output exactly against the CPU.
 */
#include <stdio.h>
#include <stdlib.h>

#include "kernels/gemm_gpu.h"
#include "hwq/hwq_gpu.h"
#include "hwq/hwq_sizes.h"
#include "kernels/elementwise_gpu.h"

#define D HWQ_HETERO_DIM
#define TE HWQ_HETERO_TINY_ELEMS
#define TP HWQ_HETERO_TINY_PER_GEMM

struct hetero {
	int l, ntiny;
	float *a, *b, **cm;
	void **ws;
	float **tin, **tmid, **tout; /* [ntiny] */
	float *ha, *hb, *htin;
};

static enum aorta_status het_setup(void *vs, struct hwq_ctx *c, struct aorta_error *e)
{
	struct hetero *s = vs;
	enum aorta_status st;
	s->l = c->nstreams / 2 > 0 ? c->nstreams / 2 : 1;
	s->ntiny = s->l * TP;
	size_t mat = (size_t)D * D;
	s->ha = xmalloc(mat * 4);
	s->hb = xmalloc(mat * 4);
	if (!(s->a = hwq_alloc(c, mat * 4, e)) || !(s->b = hwq_alloc(c, mat * 4, e)))
		return AORTA_EGPU;
	if ((st = hwq_fill_random(c, s->a, s->ha, mat, -1.0f, 1.0f, 0x4e70a, e)) ||
	    (st = hwq_fill_random(c, s->b, s->hb, mat, -1.0f, 1.0f, 0x4e70b, e)))
		return st;
	s->cm = xcalloc((size_t)s->l, sizeof(float *));
	s->ws = xcalloc((size_t)s->l, sizeof(void *));
	for (int i = 0; i < s->l; i++)
		if (!(s->cm[i] = hwq_alloc(c, mat * 4, e)) || !(s->ws[i] = hwq_alloc(c, HWQ_CUBLAS_WS_BYTES, e)))
			return AORTA_EGPU;
	s->tin = xcalloc((size_t)s->ntiny, sizeof(float *));
	s->tmid = xcalloc((size_t)s->ntiny, sizeof(float *));
	s->tout = xcalloc((size_t)s->ntiny, sizeof(float *));
	s->htin = xmalloc((size_t)s->ntiny * TE * 4);
	for (int t = 0; t < s->ntiny; t++) {
		if (!(s->tin[t] = hwq_alloc(c, TE * 4, e)) || !(s->tmid[t] = hwq_alloc(c, TE * 4, e)) ||
		    !(s->tout[t] = hwq_alloc(c, TE * 4, e)))
			return AORTA_EGPU;
		if ((st = hwq_fill_random(c, s->tin[t], s->htin + (size_t)t * TE, TE, -4.0f, 4.0f, 0x4e800 + (uint64_t)t,
					  e)))
			return st;
	}
	return AORTA_OK;
}

static enum aorta_status het_run(void *vs, struct hwq_ctx *c, struct aorta_error *e)
{
	struct hetero *s = vs;
	int others = c->nstreams - s->l, rr = 0;
	for (int i = 0; i < s->l; i++) {
		enum aorta_status st = hwq_gemm(c, c->streams[i], s->ws[i], HWQ_CUBLAS_WS_BYTES, D, D, D, s->a, s->b,
						 s->cm[i], e);
		if (st)
			return st;
		for (int k = 0; k < TP; k++) {
			int t = i * TP + k;
			gpuStream_t ts = others > 0 ? c->streams[s->l + (rr++ % others)] : c->streams[i];
			hwq_k_mul(s->tmid[t], s->tin[t], 2.0f, TE, ts);
			hwq_k_add(s->tout[t], s->tmid[t], 1.0f, TE, ts);
		}
	}
	return GPU_CALL(e, gpuGetLastError());
}

static int het_check(void *vs, struct hwq_ctx *c, char *msg, size_t cap, struct aorta_error *e)
{
	struct hetero *s = vs;
	double worst = 0, w;
	int ok = 1;
	for (int i = 0; i < s->l; i++) {
		int r = hwq_check_gemm_sample(s->ha, s->hb, s->cm[i], D, D, D, 64, c->seed + (uint64_t)i, &w, e);
		if (r < 0)
			return -1;
		ok &= r;
		worst = w > worst ? w : worst;
	}
	long long bad = 0;
	float got[TE];
	for (int t = 0; t < s->ntiny; t++) {
		if (GPU_CALL(e, gpuMemcpy(got, s->tout[t], sizeof(got), gpuMemcpyDeviceToHost)))
			return -1;
		for (int j = 0; j < TE; j++) {
			volatile float m = s->htin[(size_t)t * TE + j] * 2.0f;
			float ref = m + 1.0f;
			bad += got[j] != ref;
		}
	}
	snprintf(msg, cap, "%d GEMMs %dx%dx%d: 64 sampled entries each in double precision, worst relative error "
		 "%.3g (tolerance 1e-4); %d tiny outputs of x*2+1 x %d: %lld differ (exact expected)",
		 s->l, D, D, D, worst, s->ntiny, TE, bad);
	return ok && bad == 0;
}

static double het_work(const void *vs, const struct hwq_ctx *c, double *scale)
{
	const struct hetero *s = vs;
	(void)c;
	*scale = 1e-6;
	return 2.0 * D * (double)D * D * s->l + 3.0 * TE * s->ntiny;
}

static long long het_kernels(const void *vs, const struct hwq_ctx *c)
{
	const struct hetero *s = vs;
	(void)c;
	/* one cuBLAS kernel per GEMM (sgemm at this size launches one; the
	 * graph mode counts the real nodes) + two per tiny op */
	return (long long)s->l + 2LL * s->ntiny;
}

static void het_teardown(void *vs, struct hwq_ctx *c)
{
	(void)c;
	struct hetero *s = vs;
	free(s->cm);
	free(s->ws);
	free(s->tin);
	free(s->tmid);
	free(s->tout);
	free(s->ha);
	free(s->hb);
	free(s->htin);
}

const struct hwq_workload_ops hwq_wl_hetero_kernels = {
	.name = "hetero_kernels", .state_size = sizeof(struct hetero), .setup = het_setup, .run = het_run,
	.check = het_check, .work = het_work, .kernels = het_kernels, .teardown = het_teardown,
};
