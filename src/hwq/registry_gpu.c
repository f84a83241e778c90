/*
 * registry_gpu.c - hwq_ops_find: the workloads built into this plug-in.
 *
 * Each workload file defines one `const struct hwq_workload_ops
 * hwq_wl_<name>`.  All fifteen are declared weak here, so the plug-in
 * links while some are not written yet: a missing one has address NULL
 * and the run fails with "workload NAME is not built into this plug-in".
 */
#include <string.h>

#include "hwq/hwq_gpu.h"

#define WL(name) extern const struct hwq_workload_ops hwq_wl_##name __attribute__((weak));
WL(hetero_kernels)
WL(tiny_kernel_stress)
WL(large_gemm_only)
WL(fsdp_tp)
WL(moe)
WL(speculative_decode)
WL(continuous_batch)
WL(activation_ckpt)
WL(grad_accum)
WL(rag_pipeline)
WL(graph_subgraphs)
WL(async_dataload)
WL(zero_offload)
WL(torch_compile)
WL(comms_compute_overlap)
#undef WL

const struct hwq_workload_ops *hwq_ops_find(const char *name)
{
	const struct hwq_workload_ops *all[] = {
		&hwq_wl_hetero_kernels, &hwq_wl_tiny_kernel_stress, &hwq_wl_large_gemm_only,
		&hwq_wl_fsdp_tp, &hwq_wl_moe, &hwq_wl_speculative_decode, &hwq_wl_continuous_batch,
		&hwq_wl_activation_ckpt, &hwq_wl_grad_accum, &hwq_wl_rag_pipeline, &hwq_wl_graph_subgraphs,
		&hwq_wl_async_dataload, &hwq_wl_zero_offload, &hwq_wl_torch_compile, &hwq_wl_comms_compute_overlap,
	};
	for (size_t i = 0; name && i < sizeof(all) / sizeof(all[0]); i++)
		if (all[i] && all[i]->name && strcmp(all[i]->name, name) == 0)
			return all[i];
	return NULL;
}
