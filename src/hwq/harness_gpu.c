/*
 * harness_gpu.c - the hwq harness in the GPU plug-in: hwq_run_gpu and
 * hwq_info_gpu (exported; the host command dlopens them), the tracked
 * allocations and random fills workloads use (hwq_gpu.h).
 *
 * One run on one GPU (run_rank), in upstream's order:
 *   device check; N non-blocking streams (stream 0 at the device's highest
 *   priority with high_priority, else all at the lowest = upstream's
 *   priority 0) plus the harness's own origin stream; a cuBLAS handle;
 *   GPU warm-up (10 x 1024^2 sgemm, as upstream); workload setup; warm-up
 *   iterations; memory figures reset; measured iterations; the check;
 *   the CUPTI timing pass; teardown.
 * An iteration is: fork event on origin -> every stream waits on it ->
 * ops->run -> a join event on every stream -> origin waits on them all.
 * The start and end timing events are recorded on origin around that, so
 * an iteration's time covers every stream's work (upstream's events sat
 * on the current stream only).  Graph mode captures one iteration (fork
 * and join inside the capture) on origin, instantiates it, and each
 * iteration is one cudaGraphLaunch on origin between the timing events.
 *
 * Sync modes: per_iteration: the host waits for each iteration's end
 * event (iteration time = GPU time from start to end event, which
 * includes the host's launch time since the start event runs at once);
 * end_only: no wait inside the loop, one at the end; iteration time is the
 * host's enqueue time (what upstream measured in this mode);
 * none: no wait at all in the measured loop (the harness waits before the
 * check, outside the timing).
 *
 * Timing pass: timing_iters more iterations, each synchronised, under
 * CUPTI (rank 0 only; CUPTI is process-wide), written as a Kineto trace in
 * cfg->trace_dir; in graph mode CUPTI stays on from before the capture
 * (always_on) because graph kernels are only recorded when kernel
 * activity was on at instantiation.  Without CUPTI the run goes on and
 * trace_note says why.
 *
 * Distributed workloads run one rank per visible GPU via launch_ranks
 * (threads, or MPI under a launcher).  Each rank makes a raw NCCL
 * communicator (hwq_ctx.nccl is an ncclComm_t) from a unique id that rank
 * 0 broadcasts over the launcher's comm; results are rank 0's, with the
 * work summed over ranks and the check failed if any rank's failed.
 *
 * Ownership: hwq_alloc'd memory is freed here after teardown; the
 * workload frees its events and handles in teardown.  hwq_raw's arrays are
 * malloc'd here and released by the host (hwq_raw_release).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "comm/comm.h"
#include "comm/nccl_comm.h"
#include "gpu/blas.h"
#include "gpu/check.h"
#include "gpu/cupti.h"
#include "hwq/hwq_gpu.h"
#include "kernels/gemm_gpu.h"
#include "kernels/elementwise_gpu.h"
#include "comm/launch.h"
#include "kernels/rng.h"

#define HWQ_EXPORT __attribute__((visibility("default")))

/* ------------------------------------------------------------------ */
/* tracked allocations                                                  */
/* ------------------------------------------------------------------ */

struct alloc_node {
	void *p;
	size_t bytes;
	int host;
	struct alloc_node *next;
};

static void track(struct hwq_ctx *c, void *p, size_t bytes, int host)
{
	struct alloc_node *a = xmalloc(sizeof(*a));
	a->p = p;
	a->bytes = bytes;
	a->host = host;
	a->next = c->alloc_list;
	c->alloc_list = a;
	if (!host) {
		c->alloc_bytes += bytes;
		if (c->alloc_bytes > c->peak_alloc_bytes)
			c->peak_alloc_bytes = c->alloc_bytes;
	}
}

void *hwq_alloc(struct hwq_ctx *c, size_t bytes, struct aorta_error *e)
{
	void *p = NULL;
	if (GPU_CALL(e, gpuMalloc(&p, bytes ? bytes : 1)))
		return NULL;
	if (GPU_CALL(e, gpuMemset(p, 0, bytes ? bytes : 1))) {
		gpuFree(p);
		return NULL;
	}
	track(c, p, bytes, 0);
	return p;
}

void *hwq_alloc_host(struct hwq_ctx *c, size_t bytes, struct aorta_error *e)
{
	void *p = NULL;
	if (GPU_CALL(e, gpuMallocHost(&p, bytes ? bytes : 1)))
		return NULL;
	memset(p, 0, bytes ? bytes : 1);
	track(c, p, bytes, 1);
	return p;
}

static void free_all(struct hwq_ctx *c)
{
	struct alloc_node *a = c->alloc_list;
	while (a) {
		struct alloc_node *n = a->next;
		if (a->host)
			gpuFreeHost(a->p);
		else
			gpuFree(a->p);
		free(a);
		a = n;
	}
	c->alloc_list = NULL;
	c->alloc_bytes = 0;
}

enum aorta_status hwq_fill_random(struct hwq_ctx *c, float *dev, float *host, size_t n, float lo, float hi,
				  uint64_t site, struct aorta_error *e)
{
	float *h = host ? host : calloc(n ? n : 1, sizeof(float)); /* calloc: n == 0 copies nothing initialised */
	if (!h)
		return aorta_fail(e, AORTA_EINTERNAL, NULL, 0, -1, "out of host memory for %zu floats", n);
	float span = hi - lo;
	for (size_t i = 0; i < n; i++)
		h[i] = lo + span * rng_uniform(c->seed, site, i);
	enum aorta_status st = GPU_CALL(e, gpuMemcpy(dev, h, n * sizeof(float), gpuMemcpyHostToDevice));
	if (!host)
		free(h);
	return st;
}

/* ------------------------------------------------------------------ */
/* registry and device facts                                            */
/* ------------------------------------------------------------------ */

static const struct hwq_workload_info *info_of(const char *name)
{
	/* the host's table, resolved from the binary (-rdynamic) */
	return hwq_workload_find(name);
}

static enum aorta_status fill_device(int dev, struct hwq_device *out, struct aorta_error *e)
{
	struct gpu_device_info di;
	enum aorta_status st = gpu_device_query(dev, &di, e);
	if (st)
		return st;
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", di.name);
	out->cc_major = di.cc_major;
	out->cc_minor = di.cc_minor;
	out->sm_count = di.sm_count;
	out->max_threads_per_sm = di.max_threads_per_sm;
	out->warp_size = di.warp_size;
	out->index = dev;
	out->total_mem_bytes = di.total_mem_bytes;
	out->runtime_version = di.runtime_version;
	out->driver_version = di.driver_version;
	out->device_count = di.count;
	return AORTA_OK;
}

static enum aorta_status check_ordinal(int device, int *count, struct aorta_error *e)
{
	enum aorta_status st = gpu_device_count(count, e);
	if (st)
		return st;
	if (*count == 0)
		return aorta_fail(e, AORTA_EGPU, NULL, 0, -1, "no GPU visible to this process");
	if (device < 0 || device >= *count)
		return aorta_fail(e, AORTA_EUSAGE, NULL, 0, -1, "device %d does not exist (%d visible: cuda:0..cuda:%d)",
				  device, *count, *count - 1);
	return AORTA_OK;
}

HWQ_EXPORT enum aorta_status hwq_info_gpu(int device, struct hwq_device *out, struct aorta_error *e)
{
	int n = 0;
	enum aorta_status st = check_ordinal(device, &n, e);
	if (st)
		return st;
	return fill_device(device, out, e);
}

/* ------------------------------------------------------------------ */
/* one rank                                                             */
/* ------------------------------------------------------------------ */

struct rank_env {
	int rank, world;
	void *nccl;
	/* host-only barrier over the ranks (NULL when world == 1): a rank
	 * must not leave an NCCL kernel spinning on its GPU while another
	 * rank is in a call that may wait for every peer GPU to go idle
	 * (cudaMalloc/cudaFree with peer mappings, enabling CUPTI) */
	void (*barrier)(void *arg);
	void *barrier_arg;
	/* 1: ranks are threads of one process with NCCL kernels in flight:
	 * CUPTI's process-wide activity capture deadlocks there (seen with
	 * `aorta train` and with comms_compute_overlap on 2 H200s), so the
	 * timing pass runs without a trace; one rank per process (mpirun)
	 * traces normally */
	int no_cupti;
};

static void rank_barrier(const struct rank_env *re)
{
	if (re->barrier)
		re->barrier(re->barrier_arg);
}

struct harness {
	const struct hwq_run_config *cfg;
	const struct hwq_workload_ops *ops;
	struct hwq_ctx c;
	void *st;
	gpuStream_t origin;
	gpuEvent_t t0, t1, fork, *join;
	gpuGraph_t graph;
	gpuGraphExec_t exec;
};

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* fork, run, join on origin (also used inside the capture) */
static enum aorta_status enqueue_iter(struct harness *h, struct aorta_error *e)
{
	struct hwq_ctx *c = &h->c;
	GPU_CHECK(e, gpuEventRecord(h->fork, h->origin));
	for (int i = 0; i < c->nstreams; i++)
		GPU_CHECK(e, gpuStreamWaitEvent(c->streams[i], h->fork, 0));
	enum aorta_status st = h->ops->run(h->st, c, e);
	if (st)
		return st;
	for (int i = 0; i < c->nstreams; i++) {
		GPU_CHECK(e, gpuEventRecord(h->join[i], c->streams[i]));
		GPU_CHECK(e, gpuStreamWaitEvent(h->origin, h->join[i], 0));
	}
	return AORTA_OK;
}

static enum aorta_status one_iter(struct harness *h, struct aorta_error *e)
{
	if (h->exec)
		return GPU_CALL(e, gpuGraphLaunch(h->exec, h->origin));
	return enqueue_iter(h, e);
}

static enum aorta_status capture(struct harness *h, int *kernel_nodes, int *nodes, struct aorta_error *e)
{
	GPU_CHECK(e, gpuStreamBeginCapture(h->origin, gpuStreamCaptureModeThreadLocal));
	enum aorta_status st = enqueue_iter(h, e);
	gpuGraph_t g = NULL;
	gpuError_t ce = gpuStreamEndCapture(h->origin, &g);
	if (st) {
		if (g)
			gpuGraphDestroy(g);
		return st;
	}
	if (GPU_CALL(e, ce))
		return AORTA_EGPU;
	h->graph = g;
	GPU_CHECK(e, gpuGraphInstantiate(&h->exec, g, 0));
	size_t n = 0;
	GPU_CHECK(e, gpuGraphGetNodes(g, NULL, &n));
	gpuGraphNode_t *v = xmalloc((n + 1) * sizeof(*v));
	st = GPU_CALL(e, gpuGraphGetNodes(g, v, &n));
	int k = 0;
	for (size_t i = 0; !st && i < n; i++) {
		gpuGraphNodeType t;
		st = GPU_CALL(e, gpuGraphNodeGetType(v[i], &t));
		k += !st && t == gpuGraphNodeTypeKernel;
	}
	free(v);
	*kernel_nodes = k;
	*nodes = (int)n;
	return st;
}

/* 10 x 1024^2 sgemm on origin, as upstream warms the GPU */
static enum aorta_status gpu_warmup(struct harness *h, struct aorta_error *e)
{
	const int n = 1024;
	float *a = NULL, *b = NULL, *cc = NULL;
	enum aorta_status st = AORTA_OK;
	const float one = 1.0f, zero = 0.0f;
	GPU_CHECK_GOTO(e, st, gpuMalloc((void **)&a, (size_t)n * n * 4), out);
	GPU_CHECK_GOTO(e, st, gpuMalloc((void **)&b, (size_t)n * n * 4), out);
	GPU_CHECK_GOTO(e, st, gpuMalloc((void **)&cc, (size_t)n * n * 4), out);
	GPU_CHECK_GOTO(e, st, gpuMemsetAsync(a, 0, (size_t)n * n * 4, h->origin), out);
	GPU_CHECK_GOTO(e, st, gpuMemsetAsync(b, 0, (size_t)n * n * 4, h->origin), out);
	GPU_BLAS_GOTO(e, st, cublasSetStream(h->c.cublas, h->origin), out);
	for (int i = 0; i < 10; i++)
		GPU_BLAS_GOTO(e, st, cublasSgemm(h->c.cublas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n,
						     &zero, cc, n), out);
	GPU_CHECK_GOTO(e, st, gpuStreamSynchronize(h->origin), out);
out:
	gpuFree(a);
	gpuFree(b);
	gpuFree(cc);
	return st;
}

static enum aorta_status sync_all(struct harness *h, struct aorta_error *e)
{
	GPU_CHECK(e, gpuStreamSynchronize(h->origin));
	GPU_CHECK(e, gpuDeviceSynchronize());
	return AORTA_OK;
}

static uint64_t used_bytes(void)
{
	size_t fr = 0, tot = 0;
	if (gpuMemGetInfo(&fr, &tot) != gpuSuccess)
		return 0;
	return (uint64_t)(tot - fr);
}

/* The workload's streams (stream 0 at the highest priority when asked;
 * their ids into out), the origin stream, the events and cuBLAS. */
static enum aorta_status make_streams(struct harness *h, struct hwq_raw *out, struct aorta_error *e)
{
	const struct hwq_run_config *cfg = h->cfg;
	struct hwq_ctx *c = &h->c;
	enum aorta_status st = AORTA_OK;
	int n = c->nstreams;
	int least = 0, greatest = 0;
	GPU_CHECK_GOTO(e, st, gpuDeviceGetStreamPriorityRange(&least, &greatest), fail);
	for (int i = 0; i < n; i++) {
		int pr = (i == 0 && cfg->high_priority) ? greatest : least;
		GPU_CHECK_GOTO(e, st, gpuStreamCreateWithPriority(&c->streams[i], gpuStreamNonBlocking, pr), fail);
		unsigned long long id = 0;
		GPU_CHECK_GOTO(e, st, gpuStreamGetId(c->streams[i], &id), fail);
		out->stream_ids[i] = (long long)id;
	}
	GPU_CHECK_GOTO(e, st, gpuStreamCreateWithPriority(&h->origin, gpuStreamNonBlocking, least), fail);
	GPU_CHECK_GOTO(e, st, gpuEventCreateWithFlags(&h->t0, gpuEventDefault), fail);
	GPU_CHECK_GOTO(e, st, gpuEventCreateWithFlags(&h->t1, gpuEventDefault), fail);
	GPU_CHECK_GOTO(e, st, gpuEventCreateWithFlags(&h->fork, gpuEventDisableTiming), fail);
	for (int i = 0; i < n; i++)
		GPU_CHECK_GOTO(e, st, gpuEventCreateWithFlags(&h->join[i], gpuEventDisableTiming), fail);
	GPU_BLAS_GOTO(e, st, cublasCreate(&c->cublas), fail);
	GPU_BLAS_GOTO(e, st, cublasSetMathMode(c->cublas, CUBLAS_DEFAULT_MATH), fail);
fail:
	return st;
}

/* The measured iterations: each timed by events around it on the origin
 * (per-iteration sync) or by the host's enqueue time. */
static enum aorta_status measure(struct harness *h, struct hwq_raw *out, struct aorta_error *e)
{
	const struct hwq_run_config *cfg = h->cfg;
	enum aorta_status st = AORTA_OK;
	double w0 = now_ms();
	for (int i = 0; i < cfg->iters; i++) {
		if (cfg->sync == HWQ_SYNC_PER_ITERATION) {
			GPU_CHECK_GOTO(e, st, gpuEventRecord(h->t0, h->origin), fail);
			if ((st = one_iter(h, e)))
				goto fail;
			GPU_CHECK_GOTO(e, st, gpuEventRecord(h->t1, h->origin), fail);
			GPU_CHECK_GOTO(e, st, gpuEventSynchronize(h->t1), fail);
			float ms = 0;
			GPU_CHECK_GOTO(e, st, gpuEventElapsedTime(&ms, h->t0, h->t1), fail);
			out->iter_ms[i] = ms;
		} else {
			double a = now_ms();
			if ((st = one_iter(h, e)))
				goto fail;
			out->iter_ms[i] = now_ms() - a;
		}
	}
	if (cfg->sync == HWQ_SYNC_END_ONLY)
		GPU_CHECK_GOTO(e, st, gpuStreamSynchronize(h->origin), fail);
	out->total_wall_ms = now_ms() - w0;
	if ((st = sync_all(h, e)))
		goto fail;
fail:
	return st;
}

/* The timing pass: every rank runs it (collectives); rank 0 records it
 * with CUPTI (*cap) when want_trace (markers first, a graph instantiated
 * again so CUPTI sees its kernels). */
static enum aorta_status timing_pass(struct harness *h, const struct rank_env *re, const struct cupti_opts *co,
				     int want_trace, struct cupti_capture **cap, struct hwq_raw *out, struct aorta_error *e)
{
	const struct hwq_run_config *cfg = h->cfg;
	struct hwq_ctx *c = &h->c;
	enum aorta_status st = AORTA_OK;
	int n = c->nstreams;
	rank_barrier(re); /* no NCCL kernel in flight while rank 0 enables CUPTI */
	if (cfg->timing_iters > 0) {
		struct aorta_error ce = { 0 };
		if (want_trace) {
			if (cupti_open(cap, co, &ce)) {
				snprintf(out->trace_note, sizeof(out->trace_note), "no CUPTI: %.200s", ce.msg);
				*cap = NULL;
			} else {
				if (h->exec) {
					/* re-instantiate so CUPTI sees the graph's kernels;
					 * the old executable goes first: a graph with
					 * memory nodes (cuBLAS workspaces allocated with
					 * cudaMallocAsync during capture) may have only one
					 * instantiation at a time (cudaErrorNotSupported) */
					gpuGraphExecDestroy(h->exec);
					h->exec = NULL;
					GPU_CHECK_GOTO(e, st, gpuGraphInstantiate(&h->exec, h->graph, 0), fail);
				}
				for (int i = 0; i < n; i++) {
					hwq_k_marker(i, c->streams[i]);
					GPU_CHECK_GOTO(e, st, gpuStreamSynchronize(c->streams[i]), fail);
				}
			}
		}
		for (int i = 0; i < cfg->timing_iters; i++) {
			if ((st = one_iter(h, e)) || (st = sync_all(h, e)))
				goto fail;
			if (*cap) {
				memset(&ce, 0, sizeof(ce));
				if (cupti_step(*cap, &ce))
					snprintf(out->trace_note, sizeof(out->trace_note), "cupti: %.200s", ce.msg);
			}
			rank_barrier(re);
		}
		out->timing_iters = cfg->timing_iters;
	}
fail:
	return st;
}

/* Everything run_rank made, released (the workload's teardown once its
 * setup ran). */
static void release_rank(struct harness *h, int setup_done)
{
	const struct hwq_workload_ops *ops = h->ops;
	struct hwq_ctx *c = &h->c;
	int n = c->nstreams;
	gpuDeviceSynchronize();
	if (setup_done && ops->teardown)
		ops->teardown(h->st, c);
	free(h->st);
	if (h->exec)
		gpuGraphExecDestroy(h->exec);
	if (h->graph)
		gpuGraphDestroy(h->graph);
	if (c->cublas)
		cublasDestroy(c->cublas);
	free_all(c);
	for (int i = 0; i < n; i++) {
		if (h->join[i])
			gpuEventDestroy(h->join[i]);
		if (c->streams[i])
			gpuStreamDestroy(c->streams[i]);
	}
	if (h->t0)
		gpuEventDestroy(h->t0);
	if (h->t1)
		gpuEventDestroy(h->t1);
	if (h->fork)
		gpuEventDestroy(h->fork);
	if (h->origin)
		gpuStreamDestroy(h->origin);
	free(h->join);
	free(c->streams);
}

/* The timing pass's CUPTI options: its window is the timing pass, opened
 * just before it, so the measured iterations run without the profiler.
 * Graph kernels are recorded only when kernel activity was on at
 * instantiation, so in graph mode the captured graph is instantiated
 * again after the open (and CUPTI kept always_on). */
static void cupti_options(const struct hwq_run_config *cfg, const struct rank_env *re, int device,
			  struct cupti_opts *co)
{
	memset(co, 0, sizeof(*co));
	co->output_dir = cfg->trace_dir;
	co->rank = re->rank;
	co->world_size = re->world;
	co->device = device;
	co->always_on = cfg->graph;
	co->sched = (struct cupti_schedule){ 0, 0, 0, cfg->timing_iters > 0 ? cfg->timing_iters : 1, 1 };
}

/* CUPTI closed (st: the run's status): the trace it wrote, or why none. */
static void cupti_done(struct cupti_capture *cap, enum aorta_status st, struct hwq_raw *out)
{
	struct aorta_error ce = { 0 };
	struct cupti_stats cs;
	if (cupti_close(cap, &ce))
		snprintf(out->trace_note, sizeof(out->trace_note), "cupti: %.200s", ce.msg);
	cupti_get_stats(cap, &cs);
	if (!st && cs.traces_written) {
		snprintf(out->trace_path, sizeof(out->trace_path), "%s", cs.last_path);
		if (cs.dropped)
			snprintf(out->trace_note, sizeof(out->trace_note), "CUPTI dropped %llu records",
				 (unsigned long long)cs.dropped);
	} else if (!st && !out->trace_note[0]) {
		snprintf(out->trace_note, sizeof(out->trace_note), "CUPTI wrote no trace");
	}
}

static enum aorta_status run_rank(const struct hwq_run_config *cfg, const struct hwq_workload_ops *ops,
				  const struct hwq_workload_info *wi, int device, const struct rank_env *re,
				  struct hwq_raw *out, struct aorta_error *e)
{
	struct harness h;
	memset(&h, 0, sizeof(h));
	memset(out, 0, sizeof(*out));
	h.cfg = cfg;
	h.ops = ops;
	struct hwq_ctx *c = &h.c;
	enum aorta_status st = AORTA_OK;
	int n = cfg->streams;
	int setup_done = 0;
	struct cupti_capture *cap = NULL;

	GPU_CHECK(e, gpuSetDevice(device));
	if ((st = fill_device(device, &out->dev, e)))
		return st;
	out->streams = n;
	out->iters = cfg->iters;
	out->world = re->world;
	out->iter_ms = xcalloc((size_t)cfg->iters, sizeof(double));
	out->stream_ids = xcalloc((size_t)n, sizeof(long long));
	uint64_t used0 = used_bytes(), used_peak = used0;

	c->device = device;
	c->nstreams = n;
	c->rank = re->rank;
	c->world = re->world;
	c->nccl = re->nccl;
	c->mode = cfg->mode;
	c->seed = cfg->seed;
	c->graph = cfg->graph;
	c->streams = xcalloc((size_t)n, sizeof(gpuStream_t));
	h.join = xcalloc((size_t)n, sizeof(gpuEvent_t));
	if ((st = make_streams(&h, out, e)))
		goto done;
	if ((st = gpu_warmup(&h, e)))
		goto done;

	/* the timing pass's CUPTI opens before the capture in graph mode */
	int want_trace = cfg->timing_iters > 0 && cfg->trace_dir && re->rank == 0 && !re->no_cupti;
	if (re->no_cupti && re->rank == 0)
		snprintf(out->trace_note, sizeof(out->trace_note),
			 "no per-kernel trace with %d ranks as threads of one process (CUPTI deadlocks with NCCL "
			 "there); run under mpirun -np %d for switch latency and busy times", re->world, re->world);
	struct cupti_opts co;
	cupti_options(cfg, re, device, &co);

	h.st = ops->state_size ? xcalloc(1, ops->state_size) : NULL;
	if ((st = ops->setup(h.st, c, e)))
		goto done;
	setup_done = 1;
	GPU_CHECK_GOTO(e, st, gpuDeviceSynchronize(), done);
	rank_barrier(re); /* every rank's allocations are done before any collective */
	if (cfg->graph) {
		int kn = 0, nn = 0;
		/* one eager iteration first: lazy module loading and cuBLAS
		 * heuristics stay out of the capture */
		if ((st = enqueue_iter(&h, e)) || (st = sync_all(&h, e)))
			goto done;
		if ((st = capture(&h, &kn, &nn, e)))
			goto done;
		out->kernels_per_iter = kn;
		out->graph_nodes = nn;
	} else {
		out->kernels_per_iter = ops->kernels ? ops->kernels(h.st, c)
						     : *(const long long *)(const void *)((const char *)h.st + ops->kern_offset);
	}

	/* warm-up */
	for (int i = 0; i < cfg->warmup; i++) {
		if ((st = one_iter(&h, e)))
			goto done;
		if (cfg->sync == HWQ_SYNC_PER_ITERATION && (st = sync_all(&h, e)))
			goto done;
	}
	if ((st = sync_all(&h, e)))
		goto done;
	GPU_CHECK_GOTO(e, st, gpuGetLastError(), done);
	uint64_t u = used_bytes();
	used_peak = u > used_peak ? u : used_peak;
	c->peak_alloc_bytes = c->alloc_bytes; /* upstream resets peak stats here */

	if ((st = measure(&h, out, e)))
		goto done;
	GPU_CHECK_GOTO(e, st, gpuGetLastError(), done);
	u = used_bytes();
	used_peak = u > used_peak ? u : used_peak;

	/* the check */
	out->check_ok = ops->check(h.st, c, out->check_msg, sizeof(out->check_msg), e);
	if (out->check_ok < 0) {
		st = e && e->code ? e->code : AORTA_EGPU;
		goto done;
	}

	double scale = 1e3; /* samples per ms -> samples/s */
	out->work_per_iter = ops->work ? ops->work(h.st, c, &scale) : ops->samples_per_iter;
	out->work_scale = scale;
	out->peak_alloc_bytes = c->peak_alloc_bytes;
	out->final_alloc_bytes = c->alloc_bytes;
	out->peak_reserved_bytes = used_peak > used0 ? used_peak - used0 : 0;
	u = used_bytes();
	out->final_reserved_bytes = u > used0 ? u - used0 : 0;

	if ((st = timing_pass(&h, re, &co, want_trace, &cap, out, e)))
		goto done;
	rank_barrier(re); /* nobody frees while a peer's collective may run */
done:
	if (cap)
		cupti_done(cap, st, out);
	release_rank(&h, setup_done);
	(void)wi;
	return st;
}

/* ------------------------------------------------------------------ */
/* distributed: one rank per GPU                                        */
/* ------------------------------------------------------------------ */

struct dist_arg {
	const struct hwq_run_config *cfg;
	const struct hwq_workload_ops *ops;
	const struct hwq_workload_info *wi;
	int threads;                /* 1: ranks are threads of this process */
	ncclUniqueId id;            /* thread mode: rank 0's, shared */
	struct hbar {               /* a barrier a failing rank can break */
		pthread_mutex_t mu;
		pthread_cond_t cv;
		int n, count, gen, broken;
	} bar;
};

static void thread_barrier(void *arg)
{
	struct hbar *b = arg;
	pthread_mutex_lock(&b->mu);
	int g = b->gen;
	if (!b->broken && ++b->count == b->n) {
		b->count = 0;
		b->gen++;
		pthread_cond_broadcast(&b->cv);
	} else {
		while (g == b->gen && !b->broken)
			pthread_cond_wait(&b->cv, &b->mu);
	}
	pthread_mutex_unlock(&b->mu);
}

/* a rank failed: release everyone waiting, now and later */
static void thread_barrier_break(struct hbar *b)
{
	pthread_mutex_lock(&b->mu);
	b->broken = 1;
	pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->mu);
}

/* MPI mode: an NCCL barrier (one rank per process; the hazard above is
 * within a process, where several ranks share CUPTI and peer mappings) */
static void comm_barrier_fn(void *arg)
{
	comm_barrier(comm_group(arg, COMM_PG_WORLD), "hwq barrier", NULL);
}

static enum aorta_status dist_rank(void *arg, struct comm *comm, const struct launch_rank *lr, void *result,
				   struct aorta_error *e)
{
	struct dist_arg *a = arg;
	struct hwq_raw *out = result;
	ncclUniqueId id;
	ncclComm_t nc = NULL;
	float *d = NULL;
	enum aorta_status st = AORTA_OK;

	memset(&id, 0, sizeof(id));
	GPU_CHECK(e, gpuSetDevice(lr->device));
	if (lr->rank == 0 && (st = comm_nccl_unique_id(&id, e)))
		goto out;
	if (lr->size > 1 && a->threads) {
		/* ranks are threads: the id goes through memory */
		if (lr->rank == 0)
			a->id = id;
		thread_barrier(&a->bar);
		if (a->bar.broken) {
			st = aorta_fail(e, AORTA_EGPU, NULL, 0, -1, "rank %d: another rank failed", lr->rank);
			goto out;
		}
		id = a->id;
	} else if (lr->size > 1 && (st = comm_nccl_share_id(comm, &id, e))) {
		goto out; /* ranks are processes: over the launcher's comm */
	}
	if ((st = comm_nccl_raw_open(&nc, lr->size, &id, lr->rank, NULL, e))) {
		gpu_error_rank(e, st, lr->rank);
		goto out;
	}
	struct rank_env re = { lr->rank, lr->size, nc, NULL, NULL, lr->size > 1 && a->threads };
	if (lr->size > 1) {
		re.barrier = a->threads ? thread_barrier : comm_barrier_fn;
		re.barrier_arg = a->threads ? (void *)&a->bar : (void *)comm;
	}
	if (lr->size > 1 && !d)
		GPU_CHECK_GOTO(e, st, gpuMalloc((void **)&d, 64), out);
	st = run_rank(a->cfg, a->ops, a->wi, lr->device, &re, out, e);
	if (st)
		goto out;
	if (lr->size > 1) {
		/* failed checks and work, summed over ranks, once every rank's
		 * teardown (cudaFree) is over */
		float h[2] = { out->check_ok ? 0.0f : 1.0f, (float)out->work_per_iter };
		rank_barrier(&re);
		GPU_CHECK_GOTO(e, st, gpuMemcpy(d, h, sizeof(h), gpuMemcpyHostToDevice), out);
		if ((st = comm_all_reduce(comm_group(comm, COMM_PG_WORLD), d, d, 2, NULL, "hwq result", e)))
			goto out;
		GPU_CHECK_GOTO(e, st, gpuMemcpy(h, d, sizeof(h), gpuMemcpyDeviceToHost), out);
		if (h[0] > 0.5f && out->check_ok) {
			out->check_ok = 0;
			snprintf(out->check_msg, sizeof(out->check_msg), "%.0f other rank(s) failed their check", h[0]);
		}
		out->work_per_iter = h[1];
		rank_barrier(&re);
	}
	if (lr->rank != 0)
		hwq_raw_release(out);
out:
	if (st && a->threads)
		thread_barrier_break(&a->bar);
	comm_nccl_raw_close(nc, 0);
	if (d)
		gpuFree(d);
	return st;
}

HWQ_EXPORT enum aorta_status hwq_run_gpu(const struct hwq_run_config *cfg, struct hwq_raw *out, struct aorta_error *e)
{
	memset(out, 0, sizeof(*out));
	const struct hwq_workload_info *wi = info_of(cfg->workload);
	if (!wi)
		return aorta_fail(e, AORTA_EUSAGE, NULL, 0, -1, "unknown workload '%s'", cfg->workload);
	const struct hwq_workload_ops *ops = hwq_ops_find(cfg->workload);
	if (!ops)
		return aorta_fail(e, AORTA_EGPU, NULL, 0, -1, "workload %s is not built into this plug-in",
				  cfg->workload);
	int count = 0;
	enum aorta_status st = check_ordinal(cfg->device, &count, e);
	if (st)
		return st;
	if (!wi->distributed) {
		struct rank_env re = { 0, 1, NULL, NULL, NULL, 0 };
		return run_rank(cfg, ops, wi, cfg->device, &re, out, e);
	}
	if (cfg->world > 1 && cfg->world != count)
		return aorta_fail(e, AORTA_EUSAGE, NULL, 0, -1,
				  "--world %d: a distributed run uses 1 GPU or every visible one (%d)", cfg->world, count);
	int one = cfg->world == 1 || count == 1;
	if (one && !cfg->quiet)
		aorta_note("%s: world 1 (%s): collectives run within one rank", wi->name,
			   count == 1 ? "one visible GPU" : "--world 1");
	comm_nccl_env_defaults();
	struct dist_arg a;
	memset(&a, 0, sizeof(a));
	a.cfg = cfg;
	a.ops = ops;
	a.wi = wi;
	a.threads = launch_env_world_size() <= 1;
	int world = one ? 1 : count;
	pthread_mutex_init(&a.bar.mu, NULL);
	pthread_cond_init(&a.bar.cv, NULL);
	a.bar.n = world;
	st = launch_ranks(one ? cfg->device : -1, 0, dist_rank, &a, out, sizeof(*out), e);
	pthread_cond_destroy(&a.bar.cv);
	pthread_mutex_destroy(&a.bar.mu);
	return st;
}

enum aorta_status hwq_gemm(struct hwq_ctx *c, gpuStream_t s, void *ws, size_t ws_bytes, int m, int n, int k,
			   const float *a, const float *b, float *out, struct aorta_error *e)
{
	return hwq_sgemm(c->cublas, s, ws, ws_bytes, m, n, k, a, b, out, e);
}
