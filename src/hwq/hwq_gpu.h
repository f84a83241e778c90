/*
 * hwq_gpu.h - what a hwq workload implements, and what the harness
 * (src/hwq/harness_gpu.c) gives it.  GPU builds only (libaorta-gpu.so).
 *
 * After nccl-tests' struct of function pointers: one workload = one small
 * file (src/hwq/wl_<name>_gpu.c, kernels it needs in a .cu beside it or
 * from src/kernels/elementwise_gpu.cu and src/kernels/ops_gpu.cu) filling a
 * struct hwq_workload_ops; hwq_ops_find looks it up by name.
 *
 * The harness owns the streams, the cuBLAS handle, the fork/join events and
 * the timing: per measured iteration it records a start event on its own
 * origin stream, makes every workload stream wait on it (fork), calls
 * ops->run, makes the origin wait on an event recorded on every workload
 * stream (join) and records the end event; so an iteration's time always
 * covers the work of all N streams.  A workload's run therefore only
 * enqueues work and its own cross-stream dependencies (events it created in
 * setup); it must use every stream it is given (upstream used only the
 * first of each role: that is the defect we fix), must not synchronise the
 * host or allocate (so the iteration can be captured in a CUDA graph)
 * unless its table row says graph_ok = 0, and must be deterministic given
 * ctx->seed.
 *
 * Check: after the measured iterations the harness runs check(), which
 * compares the workload's outputs with a CPU reference on the same inputs
 * (random data from ctx->seed, never zeros) or with an invariant (what the
 * sum of a softmax must be, what a copy must contain), and says in msg what
 * it compared and the worst error; a failed check makes the run fail (exit
 * 1) after the results are written.
 */
#ifndef AORTA_HWQ_GPU_H
#define AORTA_HWQ_GPU_H

#include <stddef.h>
#include <stdint.h>

/* The BLAS handle: cuBLAS.  HIP builds (AORTA_HIP) have none yet: hipBLAS/
 * rocBLAS are not packaged for Debian 12, so struct hwq_ctx has no BLAS
 * member there and the files that call BLAS (harness_gpu.c,
 * kernels/gemm_gpu.c) are not compiled for ROCm (docs/rocm.md); the
 * workloads that use only the runtime and kernels are. */
#ifndef AORTA_HIP
#include "gpu/blas.h"
#endif
#include "gpu/check.h"
#include "gpu/gpu.h"
#include "hwq/harness.h"
#include "hwq/workloads.h"

#ifdef __cplusplus
extern "C" {
#endif

struct hwq_ctx {
	int device;
	int nstreams;
	gpuStream_t *streams;      /* [nstreams], non-blocking */
#ifndef AORTA_HIP
	cublasHandle_t cublas;     /* cublasSetStream before each call */
#endif
	void *cublas_workspace;    /* per-stream workspaces are the workload's business */
	int rank, world;           /* distributed workloads; else 0, 1 */
	void *nccl;                /* ncclComm_t of the job's world (NULL when world == 1) */
	const char *mode;          /* comms_compute_overlap's mode, else NULL */
	uint64_t seed;
	int graph;                 /* 1 while iterations are CUDA-graph replays */
	/* tracked allocations (peak and final figures of the result) */
	uint64_t alloc_bytes, peak_alloc_bytes;
	void *alloc_list;          /* harness-private */
};

/* Device memory of `bytes`, zero-filled, tracked and freed by the harness
 * after teardown.  NULL with e filled on failure. */
void *hwq_alloc(struct hwq_ctx *c, size_t bytes, struct aorta_error *e);
/* Pinned host memory, same rules. */
void *hwq_alloc_host(struct hwq_ctx *c, size_t bytes, struct aorta_error *e);
/* Fills n floats with uniform values in [lo, hi) from (seed, site) on the
 * host and copies them to dev (synchronous); host may be NULL, else it
 * receives the same values (for a CPU reference). */
enum aorta_status hwq_fill_random(struct hwq_ctx *c, float *dev, float *host, size_t n, float lo,
				  float hi, uint64_t site, struct aorta_error *e);

struct hwq_workload_ops {
	const char *name;           /* the row of hwq_workloads[] it implements */
	size_t state_size;          /* the harness callocs this and passes it as st */
	enum aorta_status (*setup)(void *st, struct hwq_ctx *c, struct aorta_error *e);
	/* one iteration, enqueued on c->streams (see above) */
	enum aorta_status (*run)(void *st, struct hwq_ctx *c, struct aorta_error *e);
	/* after a synchronised iteration; 1 passed, 0 failed; msg says what */
	int (*check)(void *st, struct hwq_ctx *c, char *msg, size_t cap, struct aorta_error *e);
	/* units of work per iteration on this GPU, and the factor to the unit
	 * per millisecond (GFLOPS from FLOP per ms: 1e-6; samples/s from
	 * samples per ms: 1e3) */
	double (*work)(const void *st, const struct hwq_ctx *c, double *scale);
	long long (*kernels)(const void *st, const struct hwq_ctx *c); /* launches per iteration */
	void (*teardown)(void *st, struct hwq_ctx *c);      /* events, handles; not hwq_alloc memory */
	/* work NULL: the iteration does this many samples (reported as
	 * samples/s) */
	double samples_per_iter;
	/* kernels NULL: the launches per iteration are the long long at this
	 * offset of the state (run counts them as it enqueues) */
	size_t kern_offset;
};

const struct hwq_workload_ops *hwq_ops_find(const char *name);

/* The plug-in's entry points (harness_gpu.c; types hwq_run_fn and
 * hwq_info_fn in harness.h).  hwq_info_gpu: AORTA_EUSAGE for an ordinal that
 * does not exist, AORTA_EGPU when no GPU is visible. */
enum aorta_status hwq_run_gpu(const struct hwq_run_config *cfg, struct hwq_raw *out, struct aorta_error *e);
enum aorta_status hwq_info_gpu(int device, struct hwq_device *out, struct aorta_error *e);

/* C = A * B (kernels/gemm_gpu.h's hwq_sgemm) with the context's BLAS handle,
 * so workloads name no BLAS type (a HIP build has no handle yet). */
enum aorta_status hwq_gemm(struct hwq_ctx *c, gpuStream_t s, void *ws, size_t ws_bytes, int m, int n, int k,
			   const float *a, const float *b, float *out, struct aorta_error *e);

#ifdef __cplusplus
}
#endif

#endif
