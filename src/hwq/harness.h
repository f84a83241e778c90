/*
 * harness.h - aorta hwq: hardware-queue evaluation, one run's interface
 * (harness_gpu.c runs it; the workload table is workloads.h) between the
 * host command (src/cmd/hwq.c, src/hwq/{workloads,metrics,output,compare}.c: table, metrics, JSON, text,
 * sweep, compare; no CUDA) and the GPU plug-in (libaorta-gpu.so:
 * src/hwq/harness_gpu.c and one src/hwq/wl_<name>_gpu.c (+ .cu) per
 * workload, see hwq_gpu.h).
 *
 * Design.  The host knows every workload by its row in hwq_workloads[]
 * (name, category, priority group, stream range, unit, whether it can be
 * captured in a CUDA graph, its device-memory need), so `list`, argument
 * checks and the memory pre-check run before any GPU work and without
 * CUDA.  It then loads the plug-in (dlopen, as `aorta train` does) and calls
 * hwq_run_gpu, which runs warm-up and measured iterations and returns raw
 * figures (hwq_raw); every derived figure (percentiles, throughput, switch
 * latency, per-stream busy time, scaling efficiency) is computed on the
 * host from those raw figures, so it is unit-tested without a GPU.
 *
 * Per-kernel times (switch latency, per-stream busy time) come from a
 * separate timing pass after the measured iterations: timing_iters more
 * iterations under CUPTI activity capture, written as a Kineto trace
 * (raw.trace_path) that the host reads with the project's Kineto reader, so
 * kernel spans and the overlap engine are the same as `aorta analyze`'s.
 * The measured iterations run without CUPTI, so the profiler's per-launch
 * cost never enters throughput or latency.  -p keeps that trace in
 * --profile-dir (it is the "CUPTI Chrome trace of the measured iterations"
 * shape, ProfilerStep#N per iteration), otherwise it goes to a temporary
 * folder the host removes.
 *
 * Ownership: hwq_raw's arrays are malloc'd by the plug-in and freed by
 * hwq_raw_release (host, metrics.c).
 */
#ifndef AORTA_HWQ_HARNESS_H
#define AORTA_HWQ_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

/* ------------------------------------------------------------------ */
/* one run                                                              */
/* ------------------------------------------------------------------ */

enum hwq_sync { HWQ_SYNC_PER_ITERATION = 0, HWQ_SYNC_END_ONLY, HWQ_SYNC_NONE };

struct hwq_run_config {
	const char *workload;    /* a name of hwq_workloads[] (checked by the host) */
	int streams;             /* within the workload's range (checked by the host) */
	int iters, warmup;       /* measured and warm-up iterations (>= 1, >= 0) */
	int device;              /* ordinal (checked against the count by the plug-in) */
	enum hwq_sync sync;
	int graph;               /* --graph: each iteration is one CUDA-graph replay */
	int timing_iters;        /* per-kernel timing pass length; 0: none */
	const char *trace_dir;   /* folder for the timing-pass trace (exists) */
	const char *mode;        /* comms_compute_overlap: compute_only | comms_only | comms_compute; else NULL */
	int world;               /* distributed workloads: GPUs to use (0: every visible one) */
	int high_priority;       /* 1: stream 0 at the device's highest priority (else all lowest) */
	uint64_t seed;
	int quiet;               /* no progress on stderr */
};

struct hwq_device {
	char name[256];
	int cc_major, cc_minor, sm_count, max_threads_per_sm, warp_size, index;
	uint64_t total_mem_bytes;
	int runtime_version, driver_version; /* 13000 = 13.0 */
	int device_count;                    /* visible devices */
};

struct hwq_raw {
	int streams, iters, world;
	double *iter_ms;            /* [iters] start->end event time of each measured iteration */
	double total_wall_ms;       /* host wall time of the measured loop (end_only/none: enqueue + final sync) */
	double work_per_iter;       /* units of hwq_workload_info.unit per iteration (per GPU summed over the job) */
	double work_scale;          /* multiply work/ms to reach the unit (e.g. 1e-6 for GFLOPS from FLOP/ms) */
	long long kernels_per_iter; /* kernel launches (graph: kernel nodes) per iteration */
	uint64_t peak_alloc_bytes, final_alloc_bytes; /* the harness's tracked allocations */
	uint64_t peak_reserved_bytes, final_reserved_bytes; /* device memory used (cudaMemGetInfo deltas) */
	int check_ok;               /* the workload's correctness check: 1 passed, 0 failed */
	char check_msg[512];        /* what was compared, and the worst error */
	char trace_path[1024];      /* timing-pass Kineto trace, "" if none (why in trace_note) */
	char trace_note[256];
	struct hwq_device dev;
	/* added: the runtime's id of each workload stream (cudaStreamGetId,
	 * what CUPTI writes as "stream"), so the host maps trace spans to
	 * stream indices; [streams], malloc'd; NULL when unknown */
	long long *stream_ids;
	int timing_iters;           /* iterations the timing-pass trace holds */
	int graph_nodes;            /* graph mode: nodes of the captured graph (all kinds) */
};

/* Entry point in libaorta-gpu.so (symbol "hwq_run_gpu"). */
typedef enum aorta_status (*hwq_run_fn)(const struct hwq_run_config *cfg, struct hwq_raw *out,
					struct aorta_error *e);
/* Device facts for `aorta hwq info` (symbol "hwq_info_gpu"); AORTA_EGPU
 * with the reason when no GPU is visible. */
typedef enum aorta_status (*hwq_info_fn)(int device, struct hwq_device *out, struct aorta_error *e);

/* Frees a hwq_raw's arrays (host: metrics.c; the plug-in calls it too). */
void hwq_raw_release(struct hwq_raw *r);

/* The timing pass starts with one empty kernel of this name per workload
 * stream, launched in stream order and each waited for, so the host maps
 * trace streams to workload streams whatever ids the profiler reports
 * (CUPTI's ids drift from cudaStreamGetId's once streams are re-created
 * in one process); the markers are left out of every figure. */
#define HWQ_MARKER_NAME "hwq_stream_marker_kernel"

#endif
