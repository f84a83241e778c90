/*
 * hwq_mem.h - device bytes that the P1-P3 hwq workloads' setup allocates
 * (hwq_alloc) at a given stream count, so `aorta hwq run` can refuse a run
 * that does not fit before any GPU work.  Host code, no CUDA.
 *
 * Each function mirrors its workload's setup (src/hwq/wl_<name>_gpu.c)
 * buffer by buffer; hwq_mem.c gives the arithmetic.  The figures cover
 * hwq_alloc'd device memory only, not cuBLAS handles' own workspaces nor
 * pinned host memory (hwq_alloc_host).
 */
#ifndef AORTA_HWQ_MEM_H
#define AORTA_HWQ_MEM_H

#include <stdint.h>

uint64_t hwq_mem_fsdp_tp(int nstreams);
uint64_t hwq_mem_moe(int nstreams);
uint64_t hwq_mem_speculative_decode(int nstreams);
uint64_t hwq_mem_continuous_batch(int nstreams);
uint64_t hwq_mem_activation_ckpt(int nstreams);
uint64_t hwq_mem_grad_accum(int nstreams);
uint64_t hwq_mem_rag_pipeline(int nstreams);
uint64_t hwq_mem_graph_subgraphs(int nstreams);
uint64_t hwq_mem_async_dataload(int nstreams);
uint64_t hwq_mem_zero_offload(int nstreams);
uint64_t hwq_mem_torch_compile(int nstreams);

#endif
