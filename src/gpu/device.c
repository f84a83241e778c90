/*
 * device.c - GPU error records, device selection and device properties.
 *
 * Design.  One process drives one device.  Under a launcher (torchrun,
 * mpirun, srun) the local rank comes from the environment and picks the
 * device modulo the visible count, so N ranks per node share N GPUs and an
 * over-subscribed node still runs (two ranks on one GPU) instead of failing;
 * an explicit index (the --device option) wins.  Properties are read once
 * with cudaGetDeviceProperties plus two version queries; nothing is cached
 * here (the caller keeps struct gpu_device_info).
 *
 * Cost: the first runtime call initialises the CUDA context (hundreds of
 * ms); callers pay it once, at selection.
 */
#include "gpu/gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum aorta_status gpu_status_(gpuError_t err, struct aorta_error *e, const char *what,
			      const char *file, int line)
{
	if (err == gpuSuccess)
		return AORTA_OK;
	(void)gpuGetLastError(); /* clear the (non-sticky) error slot */
	return aorta_fail(e, AORTA_EGPU, "", 0, -1, "%s:%d: %s: %s: %s", file, line, what,
			  gpuGetErrorName(err), gpuGetErrorString(err));
}

static int env_index(const char *name)
{
	const char *v = getenv(name);
	char *end;
	long x;

	if (!v || !*v)
		return -1;
	x = strtol(v, &end, 10);
	if (*end != '\0' || x < 0 || x > 1 << 20)
		return -1;
	return (int)x;
}

int gpu_local_rank(void)
{
	static const char *const vars[] = {
		"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID",
	};

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		int r = env_index(vars[i]);
		if (r >= 0)
			return r;
	}
	return -1;
}

enum aorta_status gpu_device_count(int *n, struct aorta_error *e)
{
	gpuError_t r = gpuGetDeviceCount(n);

	if (r == gpuErrorNoDevice || r == gpuErrorInsufficientDriver) {
		(void)gpuGetLastError();
		*n = 0;
		return AORTA_OK;
	}
	if (r != gpuSuccess) {
		*n = 0;
		return gpu_status_(r, e, "gpuGetDeviceCount", __FILE__, __LINE__);
	}
	return AORTA_OK;
}

enum aorta_status gpu_device_query(int dev, struct gpu_device_info *info, struct aorta_error *e)
{
	gpuDeviceProp p;

	memset(info, 0, sizeof(*info));
	info->index = dev;
	info->local_rank = gpu_local_rank();
	GPU_CHECK(e, gpuGetDeviceCount(&info->count));
	GPU_CHECK(e, gpuGetDeviceProperties(&p, dev));
	snprintf(info->name, sizeof(info->name), "%s", p.name);
	GPU_CHECK(e, gpuDeviceGetPCIBusId(info->pci_bus_id, (int)sizeof(info->pci_bus_id), dev));
	info->cc_major = p.major;
	info->cc_minor = p.minor;
	info->sm_count = p.multiProcessorCount;
	info->max_threads_per_block = p.maxThreadsPerBlock;
	info->max_threads_per_sm = p.maxThreadsPerMultiProcessor;
	info->regs_per_block = p.regsPerBlock;
	info->warp_size = p.warpSize;
	info->total_mem_bytes = (uint64_t)p.totalGlobalMem;
	info->l2_bytes = p.l2CacheSize > 0 ? (uint64_t)p.l2CacheSize : 0;
	info->shared_mem_per_block = (uint64_t)p.sharedMemPerBlock;
	info->shared_mem_per_block_optin = (uint64_t)GPU_PROP_SMEM_PER_BLOCK_OPTIN(p);
	info->shared_mem_per_sm = (uint64_t)GPU_PROP_SMEM_PER_SM(p);
	GPU_CHECK(e, gpuRuntimeGetVersion(&info->runtime_version));
	GPU_CHECK(e, gpuDriverGetVersion(&info->driver_version));
	return AORTA_OK;
}

enum aorta_status gpu_select_device(int explicit_index, struct gpu_device_info *info,
				    struct aorta_error *e)
{
	int n = 0, dev, lr;
	enum aorta_status st = gpu_device_count(&n, e);

	if (st != AORTA_OK)
		return st;
	if (n == 0)
		return aorta_fail(e, AORTA_EGPU, "", 0, -1, "no GPU visible to this process");
	if (explicit_index >= 0) {
		if (explicit_index >= n)
			return aorta_fail(e, AORTA_EGPU, "", 0, -1,
					  "device %d requested but only %d visible", explicit_index, n);
		dev = explicit_index;
	} else {
		lr = gpu_local_rank();
		dev = lr >= 0 ? lr % n : 0;
	}
	GPU_CHECK(e, gpuSetDevice(dev));
	if (info)
		return gpu_device_query(dev, info, e);
	return AORTA_OK;
}
