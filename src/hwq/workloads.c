/*
 * workloads.c - the table of aorta hwq's 15 workloads (host, no CUDA).
 *
 * One row per workload: name, category, priority group, the one-line
 * description `list` prints, switch sensitivity, throughput unit, stream
 * range [recommended] as upstream's hw_queue_eval declares them, whether
 * one iteration can be captured as a CUDA graph, whether it runs on every
 * visible GPU, and its device-memory need at n streams (checked against
 * the device before any GPU work).  The memory functions of the four
 * workloads in this file's group (hetero_kernels, tiny_kernel_stress,
 * large_gemm_only, comms_compute_overlap) mirror their setup buffer by
 * buffer; the other eleven live in hwq_mem.c beside their workloads.
 *
 * Categories follow upstream's workload folders (distributed, inference,
 * pipeline, latency_sensitive).  comms_compute_overlap has no priority
 * group (upstream added it later, outside run-priority).
 */
#include <string.h>

#include "hwq/workloads.h"
#include "hwq/hwq_mem.h"
#include "hwq/hwq_sizes.h"

/* cuBLAS workspace each GEMM stream gets (hwq_sizes.h) */
static uint64_t ws_bytes(int n)
{
	return (uint64_t)n * HWQ_CUBLAS_WS_BYTES;
}

/* hetero_kernels: shared A, B (4096^2), one C per GEMM stream, and per
 * tiny op an input, an intermediate and an output of 1024 floats */
static uint64_t mem_hetero(int n)
{
	uint64_t l = (uint64_t)(n / 2 > 0 ? n / 2 : 1);
	uint64_t mat = (uint64_t)HWQ_HETERO_DIM * HWQ_HETERO_DIM * 4;
	return (2 + l) * mat + l * HWQ_HETERO_TINY_PER_GEMM * 3ull * HWQ_HETERO_TINY_ELEMS * 4 + ws_bytes((int)l);
}

/* tiny_kernel_stress: per stream an input, two intermediates, an output */
static uint64_t mem_tiny(int n)
{
	return (uint64_t)n * 4ull * HWQ_TINY_ELEMS * 4;
}

/* large_gemm_only: shared A, B (8192^2), one C per stream */
static uint64_t mem_large(int n)
{
	uint64_t mat = (uint64_t)HWQ_LARGE_DIM * HWQ_LARGE_DIM * 4;
	return (2 + (uint64_t)n) * mat + ws_bytes(n);
}

/* comms_compute_overlap: send and receive buffers of the all-reduce,
 * shared A, B (4096^2) and one C per compute stream */
static uint64_t mem_overlap(int n)
{
	uint64_t mat = (uint64_t)HWQ_OVL_DIM * HWQ_OVL_DIM * 4;
	return 2ull * HWQ_OVL_COMM_FLOATS * 4 + (2 + (uint64_t)(n - 1)) * mat + ws_bytes(n - 1);
}

/* Eleven workloads are another file's: if hwq_mem.c is not linked, these
 * weak definitions keep the table linking (0: no memory pre-check). */
#define WEAK_MEM(name) \
	__attribute__((weak)) uint64_t hwq_mem_##name(int nstreams) { (void)nstreams; return 0; }
WEAK_MEM(fsdp_tp)
WEAK_MEM(moe)
WEAK_MEM(speculative_decode)
WEAK_MEM(continuous_batch)
WEAK_MEM(activation_ckpt)
WEAK_MEM(grad_accum)
WEAK_MEM(rag_pipeline)
WEAK_MEM(graph_subgraphs)
WEAK_MEM(async_dataload)
WEAK_MEM(zero_offload)
WEAK_MEM(torch_compile)

const struct hwq_workload_info hwq_workloads[] = {
	/* name, category, priority, description, sensitivity, unit, min, max, rec, graph_ok, distributed, mem */
	{ "hetero_kernels", "latency_sensitive", "P0",
	  "Large GEMMs with tiny elementwise ops interleaved on the other streams", "critical", "GFLOPS",
	  2, 64, 8, 1, 0, mem_hetero },
	{ "tiny_kernel_stress", "latency_sensitive", "P0",
	  "Hundreds of tiny elementwise kernels per stream (launch and switch bound)", "critical", "GFLOPS",
	  1, 64, 16, 1, 0, mem_tiny },
	{ "large_gemm_only", "latency_sensitive", "P0",
	  "One 8192^3 fp32 GEMM per stream (compute-bound baseline)", "low", "TFLOPS",
	  1, 16, 4, 1, 0, mem_large },
	{ "fsdp_tp", "distributed", "P1",
	  "FSDP-style prefetched layers with tensor-parallel blocks and gradient all-reduce", "high", "samples/s",
	  4, 16, 10, 1, 1, hwq_mem_fsdp_tp },
	{ "moe", "distributed", "P1",
	  "Mixture of experts: gating, 8 experts spread over the streams, weighted combine", "critical", "tokens/s",
	  4, 32, 16, 1, 0, hwq_mem_moe },
	{ "speculative_decode", "inference", "P1",
	  "Draft model proposals verified by the main model, accept and cache update", "high", "tokens/s",
	  4, 12, 6, 1, 0, hwq_mem_speculative_decode },
	{ "continuous_batch", "inference", "P1",
	  "Prefill and decode batches in parallel, then a KV-cache update", "high", "tokens/s",
	  4, 16, 8, 1, 0, hwq_mem_continuous_batch },
	{ "activation_ckpt", "distributed", "P2",
	  "Activation checkpointing: forward, recompute and gradient streams", "high", "samples/s",
	  4, 12, 6, 1, 0, hwq_mem_activation_ckpt },
	{ "grad_accum", "distributed", "P2",
	  "Gradient accumulation over 4 microbatches with early reduction", "medium", "samples/s",
	  2, 16, 6, 1, 1, hwq_mem_grad_accum },
	{ "rag_pipeline", "inference", "P2",
	  "Retrieval-augmented generation: embed, retrieve, rerank, generate", "high", "queries/s",
	  4, 12, 8, 1, 0, hwq_mem_rag_pipeline },
	{ "graph_subgraphs", "pipeline", "P2",
	  "8 independent MLP subgraphs over the streams, then aggregation", "high", "samples/s",
	  4, 32, 8, 1, 0, hwq_mem_graph_subgraphs },
	{ "async_dataload", "pipeline", "P3",
	  "Pinned host-to-device transfers, preprocessing and a CNN in a pipeline", "medium", "images/s",
	  4, 12, 6, 1, 0, hwq_mem_async_dataload },
	{ "zero_offload", "pipeline", "P3",
	  "ZeRO-offload: parameter prefetch, compute and gradient offload", "medium", "samples/s",
	  4, 12, 6, 0, 0, hwq_mem_zero_offload },
	{ "torch_compile", "pipeline", "P3",
	  "A -> (B || C) -> merge region, as a CUDA-graph capture of the region", "medium", "samples/s",
	  4, 12, 8, 0, 0, hwq_mem_torch_compile },
	{ "comms_compute_overlap", "distributed", "",
	  "NCCL all-reduce on a comm stream against GEMMs on the compute streams", "high", "iters/s",
	  2, 16, 4, 0, 1, mem_overlap },
};

const int hwq_nworkloads = (int)(sizeof(hwq_workloads) / sizeof(hwq_workloads[0]));

const struct hwq_workload_info *hwq_workload_find(const char *name)
{
	for (int i = 0; name && i < hwq_nworkloads; i++)
		if (strcmp(hwq_workloads[i].name, name) == 0)
			return &hwq_workloads[i];
	return NULL;
}
