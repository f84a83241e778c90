/*
 * workloads.h - aorta hwq's workload table (workloads.c): every workload's
 * name, category, stream range, unit and device-memory need, known to the
 * host without CUDA (`list`, argument checks, the memory pre-check).
 */
#ifndef AORTA_HWQ_WORKLOADS_H
#define AORTA_HWQ_WORKLOADS_H

#include <stdint.h>

struct hwq_workload_info {
	const char *name;        /* "hetero_kernels" */
	const char *category;    /* distributed | inference | pipeline | latency_sensitive */
	const char *priority;    /* "P0".."P3" (run-priority groups); comms_compute_overlap: "" */
	const char *description; /* one line, as upstream's list prints it */
	const char *sensitivity; /* switch sensitivity: low | medium | high | critical */
	const char *unit;        /* throughput unit: GFLOPS, TFLOPS, samples/s, tokens/s, ... */
	int min_streams, max_streams, rec_streams;
	int graph_ok;            /* 1: one iteration can be captured as a CUDA graph */
	int distributed;         /* 1: runs on every visible GPU (real NCCL collectives) */
	/* device bytes one GPU needs at n streams (buffers, workspaces), for
	 * the "does not fit in memory" check before any GPU work */
	uint64_t (*mem_bytes)(int nstreams);
};

extern const struct hwq_workload_info hwq_workloads[];
extern const int hwq_nworkloads;
/* NULL if no workload has that name */
const struct hwq_workload_info *hwq_workload_find(const char *name);

#endif
