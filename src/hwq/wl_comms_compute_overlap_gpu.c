/*
 * wl_comms_compute_overlap_gpu.c - comms_compute_overlap: a real NCCL
 * all-reduce (sum, fp32, 256 MiB) on stream 0, the comm stream, against
 * 4 GEMMs of 4096^3 on each compute stream 1..N-1, in three modes
 * (--mode): compute_only (GEMMs only), comms_only (the all-reduce only),
 * comms_compute (both, free to overlap).  Comparing the modes' iteration
 * times shows how much of the collective hides behind compute.  Runs on
 * every visible GPU, one rank each (the harness makes the NCCL comm); with
 * one GPU, NCCL runs a world of 1 (a local copy; the harness says so).
 * Work: one iteration, throughput in iterations per second.
 * Check: the all-reduce's output is the sum over ranks of each rank's
 * pattern ((i*7 + r*3) % 17 - 8, exact in fp32) at every element, and 16
 * sampled entries of every C in double precision.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/nccl_comm.h"
#include "kernels/gemm_gpu.h"
#include "hwq/hwq_gpu.h"
#include "hwq/hwq_sizes.h"
#include "kernels/elementwise_gpu.h"

#define D HWQ_OVL_DIM

struct ovl {
	int comms, compute;
	float *send, *recv;
	float *a, *b, **cm, *ha, *hb;
	void **ws;
};

static enum aorta_status ov_setup(void *vs, struct hwq_ctx *c, struct aorta_error *e)
{
	struct ovl *s = vs;
	const char *m = c->mode ? c->mode : "comms_compute";
	s->comms = strcmp(m, "compute_only") != 0;
	s->compute = strcmp(m, "comms_only") != 0;
	if (!c->nccl && s->comms)
		return aorta_fail(e, AORTA_EINTERNAL, NULL, 0, -1, "comms_compute_overlap: the harness gave no NCCL comm");
	size_t nb = HWQ_OVL_COMM_FLOATS * 4;
	if (!(s->send = hwq_alloc(c, nb, e)) || !(s->recv = hwq_alloc(c, nb, e)))
		return AORTA_EGPU;
	hwq_k_pattern(s->send, HWQ_OVL_COMM_FLOATS, c->rank, c->streams[0]);
	GPU_CHECK(e, gpuStreamSynchronize(c->streams[0]));
	size_t mat = (size_t)D * D;
	int nc = c->nstreams - 1;
	s->ha = xmalloc(mat * 4);
	s->hb = xmalloc(mat * 4);
	if (!(s->a = hwq_alloc(c, mat * 4, e)) || !(s->b = hwq_alloc(c, mat * 4, e)))
		return AORTA_EGPU;
	enum aorta_status st;
	if ((st = hwq_fill_random(c, s->a, s->ha, mat, -1.0f, 1.0f, 0x0b1a, e)) ||
	    (st = hwq_fill_random(c, s->b, s->hb, mat, -1.0f, 1.0f, 0x0b1b, e)))
		return st;
	s->cm = xcalloc((size_t)nc, sizeof(float *));
	s->ws = xcalloc((size_t)nc, sizeof(void *));
	for (int i = 0; i < nc; i++)
		if (!(s->cm[i] = hwq_alloc(c, mat * 4, e)) || !(s->ws[i] = hwq_alloc(c, HWQ_CUBLAS_WS_BYTES, e)))
			return AORTA_EGPU;
	return AORTA_OK;
}

static enum aorta_status ov_run(void *vs, struct hwq_ctx *c, struct aorta_error *e)
{
	struct ovl *s = vs;
	if (s->comms) {
		if (GPU_NCCL(e, c->nccl, ncclAllReduce(s->send, s->recv, HWQ_OVL_COMM_FLOATS, ncclFloat, ncclSum,
						       (ncclComm_t)c->nccl, c->streams[0])))
			return gpu_error_rank(e, AORTA_EGPU, c->rank);
	}
	if (s->compute)
		for (int i = 1; i < c->nstreams; i++)
			for (int g = 0; g < HWQ_OVL_GEMMS; g++) {
				enum aorta_status st = hwq_gemm(c, c->streams[i], s->ws[i - 1], HWQ_CUBLAS_WS_BYTES, D,
								 D, D, s->a, s->b, s->cm[i - 1], e);
				if (st)
					return st;
			}
	return AORTA_OK;
}

static int ov_check(void *vs, struct hwq_ctx *c, char *msg, size_t cap, struct aorta_error *e)
{
	struct ovl *s = vs;
	size_t n = HWQ_OVL_COMM_FLOATS, bad = 0;
	double worst = 0, w;
	int ok = 1;
	if (s->comms) {
		float *h = malloc(n * 4);
		if (!h)
			return aorta_fail(e, AORTA_EINTERNAL, NULL, 0, -1, "out of host memory"), -1;
		if (GPU_CALL(e, gpuMemcpy(h, s->recv, n * 4, gpuMemcpyDeviceToHost))) {
			free(h);
			return -1;
		}
		for (size_t i = 0; i < n; i++) {
			long long want = 0;
			for (int r = 0; r < c->world; r++)
				want += (long long)((i * 7 + (size_t)r * 3) % 17) - 8;
			bad += h[i] != (float)want;
		}
		free(h);
	}
	if (s->compute)
		for (int i = 0; i < c->nstreams - 1; i++) {
			int r = hwq_check_gemm_sample(s->ha, s->hb, s->cm[i], D, D, D, 16, c->seed + 5 + (uint64_t)i, &w, e);
			if (r < 0)
				return -1;
			ok &= r;
			worst = w > worst ? w : worst;
		}
	snprintf(msg, cap, "mode %s, world %d: all-reduce sum invariant over %zu floats: %zu differ%s; %d compute "
		 "streams x %d GEMMs %d^3: worst sampled relative error %.3g (tolerance 1e-4)",
		 c->mode ? c->mode : "comms_compute", c->world, s->comms ? n : (size_t)0, bad,
		 s->comms ? "" : " (not run)", s->compute ? c->nstreams - 1 : 0, HWQ_OVL_GEMMS, D, worst);
	return ok && bad == 0;
}

static long long ov_kernels(const void *vs, const struct hwq_ctx *c)
{
	const struct ovl *s = vs;
	return (s->comms ? 1 : 0) + (s->compute ? (long long)(c->nstreams - 1) * HWQ_OVL_GEMMS : 0);
}

static void ov_teardown(void *vs, struct hwq_ctx *c)
{
	(void)c;
	struct ovl *s = vs;
	free(s->cm);
	free(s->ws);
	free(s->ha);
	free(s->hb);
}

const struct hwq_workload_ops hwq_wl_comms_compute_overlap = {
	.name = "comms_compute_overlap", .state_size = sizeof(struct ovl),
	.setup = ov_setup, .run = ov_run, .check = ov_check, .kernels = ov_kernels, .teardown = ov_teardown,
	.samples_per_iter = 1.0, /* iterations per s */
};
