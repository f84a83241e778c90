/*
 * sdma_gpu.c - the GPU side of aorta sdma (plug-in libaorta-gpu.so): the
 * device query the command calls before it allocates anything, and the
 * four measured phases with their verification.
 *
 * Streams.  The GEMM (cublasGemmEx, bf16 in and out, CUBLAS_COMPUTE_32F)
 * and its relu run on a compute stream at the device's lowest priority
 * (CUDA's default, "normal"); the copy runs on a stream at the highest
 * priority, as upstream's prototype (0 and -1 on ROCm).  Both are
 * non-blocking.
 *
 * One iteration of each phase (n = cold_iters + iterations of each):
 *   gemm alone  : [delay] start | GEMM+relu | gemm_end        (compute)
 *   copy alone  : [delay] copy_start | copy | copy_end          (copy)
 *   sequential  : [delay] start | GEMM+relu | gemm_end, host waits for the
 *                 compute stream, then copy_start | copy | copy_end on the
 *                 copy stream (upstream's "sync compute -> copy -> sync")
 *   overlapped  : [delay] start (compute); the copy stream waits for start,
 *                 copy_start | copy | copy_end; on compute gemm_start |
 *                 GEMM+relu | gemm_end; compute waits for copy_end; end
 * [delay] is a one-thread kernel spinning SDMA_DELAY_NS on the stream that
 * starts the iteration, so the host has enqueued the whole iteration
 * before its first event fires and launch latency is not timed (except
 * the host round trip the sequential variant has by definition).  The
 * host waits for every iteration's last event, so iterations never
 * overlap each other.  Every time is a CUDA event difference, read back as
 * integer nanoseconds into the host's arrays; the averages, the overlap
 * and the rates are the host's business (sdma.c).
 *
 * Copies.  --engine copy: cudaMemcpyAsync (cudaMemcpyPeerAsync for p2p),
 * which the driver hands to the copy engines.  --engine kernel:
 * sdma_copy_kernel on the copy stream; host memory is pinned and mapped
 * (cudaHostAlloc(Mapped) + cudaHostGetDevicePointer) and p2p writes
 * through the peer pointer after cudaDeviceEnablePeerAccess.
 *
 * Verification.  The source holds a random pattern from the seed; the
 * destination is cleared before each copying phase and compared byte for
 * byte with the pattern after it.  A and B are random bf16 from the seed;
 * after the overlapped phase C is read back and sampled entries are checked
 * against a double-precision CPU reference (sdma_gemm_check).
 *
 * Ownership: everything allocated here is freed before returning; the
 * result's arrays belong to the caller.
 */
#include "sdma/sdma.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/blas.h"
#include "gpu/check.h"
#include "gpu/gpu.h"
#include "sdma/sdma_kernels.h"

#define SDMA_DELAY_NS 200000 /* 0.2 ms: longer than enqueueing one iteration */
#define COPY_BLOCK 512
#define COPY_BLOCKS_PER_SM 2

/* ------------------------------------------------------------------ */
/* the query                                                           */
/* ------------------------------------------------------------------ */

static enum aorta_status describe(int dev, struct sdma_dev_desc *d, int *rt, int *drv,
				  struct aorta_error *e)
{
	struct gpu_device_info info;
	size_t fr = 0, tot = 0;
	enum aorta_status st = gpu_device_query(dev, &info, e);

	if (st)
		return st;
	memset(d, 0, sizeof(*d));
	d->index = dev;
	snprintf(d->name, sizeof(d->name), "%s", info.name);
	snprintf(d->pci_bus_id, sizeof(d->pci_bus_id), "%s", info.pci_bus_id);
	d->cc_major = info.cc_major;
	d->cc_minor = info.cc_minor;
	d->sm_count = info.sm_count;
	GPU_CHECK(e, gpuSetDevice(dev));
	GPU_CHECK(e, gpuMemGetInfo(&fr, &tot));
	d->free_bytes = fr;
	d->total_bytes = tot;
	if (rt)
		*rt = info.runtime_version;
	if (drv)
		*drv = info.driver_version;
	return AORTA_OK;
}

enum aorta_status sdma_query_gpu(const struct sdma_config *c, struct sdma_gpu_info *g,
				 struct aorta_error *e)
{
	enum aorta_status st;
	int n = 0;

	memset(g, 0, sizeof(*g));
	g->host_avail_bytes = sdma_host_avail_bytes();
	if ((st = gpu_device_count(&n, e)))
		return st;
	g->count = n;
	if (n == 0 || c->device < 0 || c->device >= n)
		return AORTA_OK;
	if ((st = describe(c->device, &g->dev, &g->runtime_version, &g->driver_version, e)))
		return st;
	if (c->dir == SDMA_P2P && c->peer >= 0 && c->peer < n && c->peer != c->device) {
		int ok = 0;
		if ((st = describe(c->peer, &g->peer, NULL, NULL, e)))
			return st;
		g->peer_valid = 1;
		GPU_CHECK(e, gpuDeviceCanAccessPeer(&ok, c->device, c->peer));
		g->peer_access = ok != 0;
	}
	GPU_CHECK(e, gpuSetDevice(c->device));
	return AORTA_OK;
}

/* ------------------------------------------------------------------ */
/* the run                                                             */
/* ------------------------------------------------------------------ */

enum { EV_START, EV_GEMM_START, EV_GEMM_END, EV_COPY_START, EV_COPY_END, EV_END, EV__COUNT };

struct run {
	const struct sdma_config *c;
	struct sdma_result *r;
	int dev, peer, sm_count;
	int S;
	size_t nmat;                  /* S * S */
	size_t bytes;
	gpuStream_t compute, copy;
	gpuEvent_t ev[EV__COUNT];
	cublasHandle_t blas;
	void *ws, *A, *B, *C;         /* device */
	void *dsrc, *ddst;            /* device copy buffers (ddst on the peer for p2p) */
	unsigned char *hsrc, *hdst;   /* pinned, mapped host copy buffers */
	void *src, *dst;              /* the copy's operands as the copy engine sees them */
	void *ksrc, *kdst;            /* and as the copy kernel sees them */
	unsigned char *expect, *readback;
	uint16_t *hA, *hB, *hC;
	int peer_enabled;
	int relu_grid;
};

static enum aorta_status elapsed(struct run *u, int a, int b, int64_t *ns, struct aorta_error *e)
{
	float ms = 0;

	GPU_CHECK(e, gpuEventElapsedTime(&ms, u->ev[a], u->ev[b]));
	double v = (double)ms * 1e6;
	*ns = v > 0 ? (int64_t)llround(v) : 0;
	return AORTA_OK;
}

static enum aorta_status gemm_relu(struct run *u, struct aorta_error *e)
{
	const float alpha = 1.0f, beta = 0.0f;
	enum aorta_status st = AORTA_OK;

	/* column-major: C = A B, all S x S, leading dimension S */
	GPU_BLAS_GOTO(e, st,
			cublasGemmEx(u->blas, CUBLAS_OP_N, CUBLAS_OP_N, u->S, u->S, u->S, &alpha, u->A,
				     CUDA_R_16BF, u->S, u->B, CUDA_R_16BF, u->S, &beta, u->C,
				     CUDA_R_16BF, u->S, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
			out);
	GPU_CHECK(e, (gpuError_t)sdma_relu_bf16(u->C, u->nmat, u->relu_grid, u->compute));
out:
	return st;
}

static enum aorta_status do_copy(struct run *u, struct aorta_error *e)
{
	if (u->c->engine == SDMA_ENG_KERNEL)
		return GPU_CALL(e, (gpuError_t)sdma_copy_kernel(u->kdst, u->ksrc, u->bytes,
								 u->sm_count * COPY_BLOCKS_PER_SM,
								 COPY_BLOCK, u->copy));
	switch (u->c->dir) {
	case SDMA_D2H:
		return GPU_CALL(e, gpuMemcpyAsync(u->dst, u->src, u->bytes, gpuMemcpyDeviceToHost, u->copy));
	case SDMA_H2D:
		return GPU_CALL(e, gpuMemcpyAsync(u->dst, u->src, u->bytes, gpuMemcpyHostToDevice, u->copy));
	case SDMA_D2D:
		return GPU_CALL(e, gpuMemcpyAsync(u->dst, u->src, u->bytes, gpuMemcpyDeviceToDevice, u->copy));
	case SDMA_P2P:
	default:
		return GPU_CALL(e, gpuMemcpyPeerAsync(u->dst, u->peer, u->src, u->dev, u->bytes, u->copy));
	}
}

static enum aorta_status clear_dst(struct run *u, struct aorta_error *e)
{
	if (u->hdst) {
		memset(u->hdst, 0, u->bytes);
		return AORTA_OK;
	}
	int on = u->c->dir == SDMA_P2P ? u->peer : u->dev;
	GPU_CHECK(e, gpuSetDevice(on));
	GPU_CHECK(e, gpuMemset(u->ddst, 0, u->bytes));
	GPU_CHECK(e, gpuDeviceSynchronize());
	GPU_CHECK(e, gpuSetDevice(u->dev));
	return AORTA_OK;
}

static enum aorta_status verify_copy(struct run *u, enum sdma_series phase, struct aorta_error *e)
{
	const unsigned char *got = u->hdst;
	struct sdma_result *r = u->r;

	GPU_CHECK(e, gpuDeviceSynchronize());
	if (!got) {
		GPU_CHECK(e, gpuMemcpy(u->readback, u->ddst, u->bytes, gpuMemcpyDefault));
		got = u->readback;
	}
	int64_t off = sdma_first_mismatch(got, u->expect, u->bytes);
	r->copy_checked++;
	r->copy_bytes_compared = u->bytes;
	if (off >= 0 && r->copy_ok) {
		r->copy_ok = 0;
		r->copy_mismatch_offset = off;
		r->copy_mismatch_phase = (int)phase;
		r->copy_got = got[off];
		r->copy_want = u->expect[off];
	}
	return AORTA_OK;
}

#define REC(i, s) GPU_CHECK(e, gpuEventRecord(u->ev[i], (s)))
#define DELAY(s) GPU_CHECK(e, (gpuError_t)sdma_delay(SDMA_DELAY_NS, (s)))

static enum aorta_status phase_gemm_alone(struct run *u, struct aorta_error *e)
{
	enum aorta_status st;

	for (int i = 0; i < u->r->n; i++) {
		DELAY(u->compute);
		REC(EV_START, u->compute);
		if ((st = gemm_relu(u, e)))
			return st;
		REC(EV_GEMM_END, u->compute);
		GPU_CHECK(e, gpuEventSynchronize(u->ev[EV_GEMM_END]));
		if ((st = elapsed(u, EV_START, EV_GEMM_END, &u->r->t[SDMA_T_GEMM_ALONE][i], e)))
			return st;
	}
	return AORTA_OK;
}

static enum aorta_status phase_copy_alone(struct run *u, struct aorta_error *e)
{
	enum aorta_status st;

	if ((st = clear_dst(u, e)))
		return st;
	for (int i = 0; i < u->r->n; i++) {
		DELAY(u->copy);
		REC(EV_COPY_START, u->copy);
		if ((st = do_copy(u, e)))
			return st;
		REC(EV_COPY_END, u->copy);
		GPU_CHECK(e, gpuEventSynchronize(u->ev[EV_COPY_END]));
		if ((st = elapsed(u, EV_COPY_START, EV_COPY_END, &u->r->t[SDMA_T_COPY_ALONE][i], e)))
			return st;
	}
	return verify_copy(u, SDMA_T_COPY_ALONE, e);
}

static enum aorta_status phase_sequential(struct run *u, struct aorta_error *e)
{
	enum aorta_status st;
	int64_t **t = u->r->t;

	if ((st = clear_dst(u, e)))
		return st;
	for (int i = 0; i < u->r->n; i++) {
		DELAY(u->compute);
		REC(EV_START, u->compute);
		if ((st = gemm_relu(u, e)))
			return st;
		REC(EV_GEMM_END, u->compute);
		GPU_CHECK(e, gpuStreamSynchronize(u->compute));
		REC(EV_COPY_START, u->copy);
		if ((st = do_copy(u, e)))
			return st;
		REC(EV_COPY_END, u->copy);
		GPU_CHECK(e, gpuStreamSynchronize(u->copy));
		if ((st = elapsed(u, EV_START, EV_COPY_END, &t[SDMA_T_SEQ][i], e)) ||
		    (st = elapsed(u, EV_START, EV_GEMM_END, &t[SDMA_T_SEQ_GEMM][i], e)) ||
		    (st = elapsed(u, EV_COPY_START, EV_COPY_END, &t[SDMA_T_SEQ_COPY][i], e)))
			return st;
	}
	return verify_copy(u, SDMA_T_SEQ, e);
}

static enum aorta_status phase_overlapped(struct run *u, struct aorta_error *e)
{
	enum aorta_status st;
	int64_t **t = u->r->t;

	if ((st = clear_dst(u, e)))
		return st;
	for (int i = 0; i < u->r->n; i++) {
		DELAY(u->compute);
		REC(EV_START, u->compute);
		GPU_CHECK(e, gpuStreamWaitEvent(u->copy, u->ev[EV_START], 0));
		REC(EV_COPY_START, u->copy);
		if ((st = do_copy(u, e)))
			return st;
		REC(EV_COPY_END, u->copy);
		REC(EV_GEMM_START, u->compute);
		if ((st = gemm_relu(u, e)))
			return st;
		REC(EV_GEMM_END, u->compute);
		GPU_CHECK(e, gpuStreamWaitEvent(u->compute, u->ev[EV_COPY_END], 0));
		REC(EV_END, u->compute);
		GPU_CHECK(e, gpuEventSynchronize(u->ev[EV_END]));
		if ((st = elapsed(u, EV_START, EV_END, &t[SDMA_T_OVL][i], e)) ||
		    (st = elapsed(u, EV_START, EV_GEMM_START, &t[SDMA_T_OVL_GEMM_START][i], e)) ||
		    (st = elapsed(u, EV_START, EV_GEMM_END, &t[SDMA_T_OVL_GEMM_END][i], e)) ||
		    (st = elapsed(u, EV_START, EV_COPY_START, &t[SDMA_T_OVL_COPY_START][i], e)) ||
		    (st = elapsed(u, EV_START, EV_COPY_END, &t[SDMA_T_OVL_COPY_END][i], e)))
			return st;
	}
	return verify_copy(u, SDMA_T_OVL, e);
}

static enum aorta_status check_gemm(struct run *u, struct aorta_error *e)
{
	struct sdma_gemm_check g;
	struct sdma_result *r = u->r;

	GPU_CHECK(e, gpuDeviceSynchronize());
	GPU_CHECK(e, gpuMemcpy(u->hC, u->C, u->nmat * 2, gpuMemcpyDeviceToHost));
	r->gemm_ok = sdma_gemm_check(u->hA, u->hB, u->hC, u->S, u->c->gemm_samples, u->c->seed, &g);
	r->gemm_checked = 1;
	r->gemm_samples = g.samples;
	r->gemm_failed = g.failed;
	r->gemm_max_abs_err = g.max_abs_err;
	r->gemm_max_err_ratio = g.max_err_ratio;
	r->gemm_worst_i = g.worst_i;
	r->gemm_worst_j = g.worst_j;
	r->gemm_worst_got = g.worst_got;
	r->gemm_worst_want = g.worst_want;
	return AORTA_OK;
}

/* Pinned, mapped host memory into *host (owned by the run from here on,
 * even if the device pointer cannot be had) and its device address. */
static enum aorta_status pinned(unsigned char **host, void **devp, size_t bytes,
				struct aorta_error *e)
{
	void *p = NULL;

	GPU_CHECK(e, gpuHostAlloc(&p, bytes, gpuHostAllocMapped | gpuHostAllocPortable));
	*host = p;
	GPU_CHECK(e, gpuHostGetDevicePointer(devp, p, 0));
	return AORTA_OK;
}

static enum aorta_status setup(struct run *u, struct aorta_error *e)
{
	const struct sdma_config *c = u->c;
	enum aorta_status st = AORTA_OK;
	int least = 0, greatest = 0;
	void *dp = NULL;

	GPU_CHECK(e, gpuSetDevice(u->dev));
	GPU_CHECK(e, gpuDeviceGetAttribute(&u->sm_count, gpuDevAttrMultiProcessorCount, u->dev));
	u->relu_grid = u->sm_count * 4;
	GPU_CHECK(e, gpuDeviceGetStreamPriorityRange(&least, &greatest));
	GPU_CHECK(e, gpuStreamCreateWithPriority(&u->compute, gpuStreamNonBlocking, least));
	GPU_CHECK(e, gpuStreamCreateWithPriority(&u->copy, gpuStreamNonBlocking, greatest));
	GPU_CHECK(e, gpuStreamGetPriority(u->compute, &u->r->compute_priority));
	GPU_CHECK(e, gpuStreamGetPriority(u->copy, &u->r->copy_priority));
	for (int i = 0; i < EV__COUNT; i++)
		GPU_CHECK(e, gpuEventCreateWithFlags(&u->ev[i], gpuEventDefault));
	GPU_BLAS_GOTO(e, st, cublasCreate(&u->blas), out);
	GPU_BLAS_GOTO(e, st, cublasSetStream(u->blas, u->compute), out);
	GPU_CHECK(e, gpuMalloc(&u->ws, SDMA_CUBLAS_WS_BYTES));
	/* after cublasSetStream, which resets the workspace */
	GPU_BLAS_GOTO(e, st, cublasSetWorkspace(u->blas, u->ws, SDMA_CUBLAS_WS_BYTES), out);

	/* GEMM operands from the seed, kept on the host for the check */
	u->hA = xmalloc(u->nmat * 2);
	u->hB = xmalloc(u->nmat * 2);
	u->hC = xmalloc(u->nmat * 2);
	sdma_fill_gemm_inputs(u->hA, u->hB, u->S, c->seed);
	GPU_CHECK(e, gpuMalloc(&u->A, u->nmat * 2));
	GPU_CHECK(e, gpuMalloc(&u->B, u->nmat * 2));
	GPU_CHECK(e, gpuMalloc(&u->C, u->nmat * 2));
	GPU_CHECK(e, gpuMemcpy(u->A, u->hA, u->nmat * 2, gpuMemcpyHostToDevice));
	GPU_CHECK(e, gpuMemcpy(u->B, u->hB, u->nmat * 2, gpuMemcpyHostToDevice));
	GPU_CHECK(e, gpuMemset(u->C, 0, u->nmat * 2));

	/* the copy's buffers: source filled with the pattern */
	u->expect = xmalloc(u->bytes);
	sdma_fill_pattern(u->expect, u->bytes, c->seed);
	switch (c->dir) {
	case SDMA_H2D:
		if ((st = pinned(&u->hsrc, &dp, u->bytes, e)))
			return st;
		u->src = u->hsrc;
		u->ksrc = dp;
		memcpy(u->hsrc, u->expect, u->bytes);
		break;
	default:
		GPU_CHECK(e, gpuMalloc(&u->dsrc, u->bytes));
		GPU_CHECK(e, gpuMemcpy(u->dsrc, u->expect, u->bytes, gpuMemcpyHostToDevice));
		u->src = u->ksrc = u->dsrc;
		break;
	}
	switch (c->dir) {
	case SDMA_D2H:
		if ((st = pinned(&u->hdst, &dp, u->bytes, e)))
			return st;
		u->dst = u->hdst;
		u->kdst = dp;
		break;
	case SDMA_P2P: {
		gpuError_t pe;
		GPU_CHECK(e, gpuSetDevice(u->peer));
		GPU_CHECK(e, gpuMalloc(&u->ddst, u->bytes));
		GPU_CHECK(e, gpuSetDevice(u->dev));
		pe = gpuDeviceEnablePeerAccess(u->peer, 0);
		if (pe == gpuErrorPeerAccessAlreadyEnabled)
			(void)gpuGetLastError();
		else if (GPU_CALL(e, pe))
			return AORTA_EGPU;
		else
			u->peer_enabled = 1;
		u->dst = u->kdst = u->ddst;
		break;
	}
	default:
		GPU_CHECK(e, gpuMalloc(&u->ddst, u->bytes));
		u->dst = u->kdst = u->ddst;
		break;
	}
	if (!u->hdst)
		u->readback = xmalloc(u->bytes);
	if (c->engine == SDMA_ENG_KERNEL) {
		u->r->kernel_grid = u->sm_count * COPY_BLOCKS_PER_SM;
		u->r->kernel_block = COPY_BLOCK;
	}
	GPU_CHECK(e, gpuDeviceSynchronize());
out:
	return st;
}

static void teardown(struct run *u)
{
	/* errors here cannot change the result; they are cleared */
	(void)gpuSetDevice(u->dev);
	(void)gpuDeviceSynchronize();
	if (u->blas)
		cublasDestroy(u->blas);
	for (int i = 0; i < EV__COUNT; i++)
		if (u->ev[i])
			(void)gpuEventDestroy(u->ev[i]);
	if (u->compute)
		(void)gpuStreamDestroy(u->compute);
	if (u->copy)
		(void)gpuStreamDestroy(u->copy);
	(void)gpuFree(u->ws);
	(void)gpuFree(u->A);
	(void)gpuFree(u->B);
	(void)gpuFree(u->C);
	(void)gpuFree(u->dsrc);
	if (u->peer_enabled)
		(void)gpuDeviceDisablePeerAccess(u->peer);
	if (u->ddst) {
		if (u->c->dir == SDMA_P2P)
			(void)gpuSetDevice(u->peer);
		(void)gpuFree(u->ddst);
		(void)gpuSetDevice(u->dev);
	}
	if (u->hsrc)
		(void)gpuFreeHost(u->hsrc);
	if (u->hdst)
		(void)gpuFreeHost(u->hdst);
	(void)gpuGetLastError();
	free(u->expect);
	free(u->readback);
	free(u->hA);
	free(u->hB);
	free(u->hC);
}

enum aorta_status sdma_run_gpu(const struct sdma_config *c, struct sdma_result *r,
			       struct aorta_error *e)
{
	struct run u;
	enum aorta_status st;

	memset(&u, 0, sizeof(u));
	u.c = c;
	u.r = r;
	u.dev = c->device;
	u.peer = c->peer;
	u.S = c->matrix_size;
	u.nmat = (size_t)c->matrix_size * (size_t)c->matrix_size;
	u.bytes = (size_t)sdma_copy_bytes(c);
	r->copy_ok = 1;
	r->copy_checked = 0;
	r->gemm_checked = 0;

	if ((st = setup(&u, e)))
		goto out;
	aorta_note("sdma: GEMM %d x %d alone, %d iterations", c->matrix_size, c->matrix_size, r->n);
	if ((st = phase_gemm_alone(&u, e)))
		goto out;
	aorta_note("sdma: copy of %d MiB (%s, %s engine) alone", c->copy_mb, sdma_dir_name(c->dir),
		   sdma_engine_name(c->engine));
	if ((st = phase_copy_alone(&u, e)))
		goto out;
	aorta_note("sdma: sequential");
	if ((st = phase_sequential(&u, e)))
		goto out;
	aorta_note("sdma: overlapped");
	if ((st = phase_overlapped(&u, e)))
		goto out;
	st = check_gemm(&u, e);
out:
	teardown(&u);
	return st;
}
