/*
 * gpu.h - the portability header: every GPU runtime call the project makes
 * goes through a gpu* name defined here, plus device selection (device.c)
 * and the named streams (streams.c).
 *
 * Design.  CUDA is the default; -DAORTA_HIP selects HIP/ROCm.  The two
 * tables below are the whole mapping, one #define per name, so porting a
 * call means adding one line to each table and a HIP build needs no edit
 * elsewhere (the names follow HIP's own hipify mapping: cudaX <-> hipX).
 * Kernels (.cu files) include this header too; host code never includes
 * cuda_runtime_api.h directly.
 *
 * Errors.  Library code returns enum aorta_status (base/error.h).  A failed
 * runtime call becomes AORTA_EGPU with the error record filled as
 *   "src/gpu/streams.c:42: cudaStreamCreateWithPriority(...): "
 *   "cudaErrorInvalidValue: invalid argument"
 * The three forms:
 *   GPU_CALL(e, call)            expression: AORTA_OK or AORTA_EGPU
 *   GPU_CHECK(e, call)           statement: returns AORTA_EGPU on failure
 *   GPU_CHECK_GOTO(e, st, call, label)  statement: st = AORTA_EGPU; goto label
 * e may be NULL (the status still comes back).  Nothing here prints.
 *
 * Thread safety: the runtime is thread-safe; these helpers keep no state.
 */
#ifndef AORTA_GPU_H
#define AORTA_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

#ifdef AORTA_HIP
/* ---------------------------------------------------------------- HIP */
#include <hip/hip_runtime_api.h>
#define GPU_API_NAME "hip"
typedef hipError_t gpuError_t;
typedef hipStream_t gpuStream_t;
typedef hipEvent_t gpuEvent_t;
typedef hipDeviceProp_t gpuDeviceProp;
typedef hipGraph_t gpuGraph_t;
typedef hipGraphExec_t gpuGraphExec_t;
typedef hipGraphNode_t gpuGraphNode_t;
typedef hipStreamCaptureStatus gpuStreamCaptureStatus;
#define gpuSuccess hipSuccess
#define gpuErrorNotReady hipErrorNotReady
#define gpuErrorNoDevice hipErrorNoDevice
#define gpuErrorInvalidValue hipErrorInvalidValue
#define gpuErrorInsufficientDriver hipErrorInsufficientDriver
#define gpuGetErrorName hipGetErrorName
#define gpuGetErrorString hipGetErrorString
#define gpuGetLastError hipGetLastError
#define gpuGetDeviceCount hipGetDeviceCount
#define gpuSetDevice hipSetDevice
#define gpuGetDevice hipGetDevice
#define gpuGetDeviceProperties hipGetDeviceProperties
#define gpuDeviceGetAttribute hipDeviceGetAttribute
#define gpuDeviceGetPCIBusId hipDeviceGetPCIBusId
#define gpuDeviceSynchronize hipDeviceSynchronize
#define gpuDriverGetVersion hipDriverGetVersion
#define gpuRuntimeGetVersion hipRuntimeGetVersion
#define gpuDeviceGetStreamPriorityRange hipDeviceGetStreamPriorityRange
#define gpuStreamCreateWithPriority hipStreamCreateWithPriority
#define gpuStreamCreateWithFlags hipStreamCreateWithFlags
#define gpuStreamDestroy hipStreamDestroy
#define gpuStreamSynchronize hipStreamSynchronize
#define gpuStreamQuery hipStreamQuery
#define gpuStreamWaitEvent hipStreamWaitEvent
#define gpuStreamGetPriority hipStreamGetPriority
#define gpuStreamNonBlocking hipStreamNonBlocking
#define gpuEventCreateWithFlags hipEventCreateWithFlags
#define gpuEventCreate hipEventCreate
#define gpuEventDestroy hipEventDestroy
#define gpuEventRecord hipEventRecord
#define gpuEventSynchronize hipEventSynchronize
#define gpuEventQuery hipEventQuery
#define gpuEventElapsedTime hipEventElapsedTime
#define gpuEventDefault hipEventDefault
#define gpuEventDisableTiming hipEventDisableTiming
#define gpuMalloc hipMalloc
#define gpuFree hipFree
/* cudaMallocHost(p, n) is hipHostMalloc(p, n, flags) */
#define gpuMallocHost(p, n) hipHostMalloc((p), (n), hipHostMallocDefault)
#define gpuMemGetInfo hipMemGetInfo
#define gpuFreeHost hipHostFree
#define gpuMemcpy hipMemcpy
#define gpuMemcpyAsync hipMemcpyAsync
#define gpuHostAlloc hipHostMalloc
#define gpuHostAllocMapped hipHostMallocMapped
#define gpuHostAllocPortable hipHostMallocPortable
#define gpuHostGetDevicePointer hipHostGetDevicePointer
#define gpuMemcpyPeerAsync hipMemcpyPeerAsync
#define gpuDeviceCanAccessPeer hipDeviceCanAccessPeer
#define gpuDeviceEnablePeerAccess hipDeviceEnablePeerAccess
#define gpuDeviceDisablePeerAccess hipDeviceDisablePeerAccess
#define gpuErrorPeerAccessAlreadyEnabled hipErrorPeerAccessAlreadyEnabled
#define gpuMemcpyDefault hipMemcpyDefault
#define gpuMemset hipMemset
#define gpuMemsetAsync hipMemsetAsync
#define gpuMemcpyHostToDevice hipMemcpyHostToDevice
#define gpuMemcpyDeviceToHost hipMemcpyDeviceToHost
#define gpuMemcpyDeviceToDevice hipMemcpyDeviceToDevice
#define gpuDevAttrMultiProcessorCount hipDeviceAttributeMultiprocessorCount
#define gpuDevAttrClockRate hipDeviceAttributeClockRate
/* gpuDeviceProp fields whose names differ; AMD has no opt-in above the
 * per-block LDS size, so the opt-in figure is the per-block one */
#define GPU_PROP_SMEM_PER_BLOCK_OPTIN(p) ((p).sharedMemPerBlock)
#define GPU_PROP_SMEM_PER_SM(p) ((p).maxSharedMemoryPerMultiProcessor)
/* CUDA graphs: stream capture, instantiation, replay, node updates */
/* HIP 5.2 has no hipEventRecordWithFlags / hipEventRecordExternal (an
 * event-record node made by a record during stream capture): the call
 * fails with hipErrorNotSupported, so the recorder's capture mode reports
 * it instead of building a graph without its timing nodes. */
#define gpuEventRecordExternal 1u
#define gpuEventRecordWithFlags(ev, s, flags) ((void)(ev), (void)(s), (void)(flags), hipErrorNotSupported)
#define gpuStreamBeginCapture hipStreamBeginCapture
#define gpuStreamEndCapture hipStreamEndCapture
#define gpuStreamIsCapturing hipStreamIsCapturing
#define gpuStreamCaptureModeThreadLocal hipStreamCaptureModeThreadLocal
#define gpuStreamCaptureStatusActive hipStreamCaptureStatusActive
#define gpuGraphInstantiate(exec, graph, flags) hipGraphInstantiate((exec), (graph), NULL, NULL, 0)
#define gpuGraphLaunch hipGraphLaunch
#define gpuGraphExecDestroy hipGraphExecDestroy
#define gpuGraphDestroy hipGraphDestroy
#define gpuGraphGetNodes hipGraphGetNodes
#define gpuGraphExecMemcpyNodeSetParams1D hipGraphExecMemcpyNodeSetParams1D
#else
/* --------------------------------------------------------------- CUDA */
#include <cuda_runtime_api.h>
#define GPU_API_NAME "cuda"
typedef cudaError_t gpuError_t;
typedef cudaStream_t gpuStream_t;
typedef cudaEvent_t gpuEvent_t;
typedef struct cudaDeviceProp gpuDeviceProp;
typedef cudaGraph_t gpuGraph_t;
typedef cudaGraphExec_t gpuGraphExec_t;
typedef cudaGraphNode_t gpuGraphNode_t;
typedef enum cudaStreamCaptureStatus gpuStreamCaptureStatus;
#define gpuSuccess cudaSuccess
#define gpuErrorNotReady cudaErrorNotReady
#define gpuErrorNoDevice cudaErrorNoDevice
#define gpuErrorInvalidValue cudaErrorInvalidValue
#define gpuErrorInsufficientDriver cudaErrorInsufficientDriver
#define gpuGetErrorName cudaGetErrorName
#define gpuGetErrorString cudaGetErrorString
#define gpuGetLastError cudaGetLastError
#define gpuGetDeviceCount cudaGetDeviceCount
#define gpuSetDevice cudaSetDevice
#define gpuGetDevice cudaGetDevice
#define gpuGetDeviceProperties cudaGetDeviceProperties
#define gpuDeviceGetAttribute cudaDeviceGetAttribute
#define gpuDeviceGetPCIBusId cudaDeviceGetPCIBusId
#define gpuDeviceSynchronize cudaDeviceSynchronize
#define gpuDriverGetVersion cudaDriverGetVersion
#define gpuRuntimeGetVersion cudaRuntimeGetVersion
#define gpuDeviceGetStreamPriorityRange cudaDeviceGetStreamPriorityRange
#define gpuStreamCreateWithPriority cudaStreamCreateWithPriority
#define gpuStreamCreateWithFlags cudaStreamCreateWithFlags
#define gpuStreamDestroy cudaStreamDestroy
#define gpuStreamSynchronize cudaStreamSynchronize
#define gpuStreamQuery cudaStreamQuery
#define gpuStreamWaitEvent cudaStreamWaitEvent
#define gpuStreamGetPriority cudaStreamGetPriority
#define gpuStreamNonBlocking cudaStreamNonBlocking
#define gpuEventCreateWithFlags cudaEventCreateWithFlags
#define gpuEventCreate cudaEventCreate
#define gpuEventDestroy cudaEventDestroy
#define gpuEventRecord cudaEventRecord
#define gpuEventSynchronize cudaEventSynchronize
#define gpuEventQuery cudaEventQuery
#define gpuEventElapsedTime cudaEventElapsedTime
#define gpuEventDefault cudaEventDefault
#define gpuEventDisableTiming cudaEventDisableTiming
#define gpuMalloc cudaMalloc
#define gpuFree cudaFree
#define gpuMallocHost cudaMallocHost
#define gpuMemGetInfo cudaMemGetInfo
#define gpuFreeHost cudaFreeHost
#define gpuMemcpy cudaMemcpy
#define gpuMemcpyAsync cudaMemcpyAsync
#define gpuHostAlloc cudaHostAlloc
#define gpuHostAllocMapped cudaHostAllocMapped
#define gpuHostAllocPortable cudaHostAllocPortable
#define gpuHostGetDevicePointer cudaHostGetDevicePointer
#define gpuMemcpyPeerAsync cudaMemcpyPeerAsync
#define gpuDeviceCanAccessPeer cudaDeviceCanAccessPeer
#define gpuDeviceEnablePeerAccess cudaDeviceEnablePeerAccess
#define gpuDeviceDisablePeerAccess cudaDeviceDisablePeerAccess
#define gpuErrorPeerAccessAlreadyEnabled cudaErrorPeerAccessAlreadyEnabled
#define gpuMemcpyDefault cudaMemcpyDefault
#define gpuMemset cudaMemset
#define gpuMemsetAsync cudaMemsetAsync
#define gpuMemcpyHostToDevice cudaMemcpyHostToDevice
#define gpuMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define gpuMemcpyDeviceToDevice cudaMemcpyDeviceToDevice
#define gpuDevAttrMultiProcessorCount cudaDevAttrMultiProcessorCount
#define gpuDevAttrClockRate cudaDevAttrClockRate
#define GPU_PROP_SMEM_PER_BLOCK_OPTIN(p) ((p).sharedMemPerBlockOptin)
#define GPU_PROP_SMEM_PER_SM(p) ((p).sharedMemPerMultiprocessor)
/* CUDA graphs: stream capture, instantiation, replay, node updates */
#define gpuEventRecordWithFlags cudaEventRecordWithFlags
#define gpuEventRecordExternal cudaEventRecordExternal
#define gpuStreamBeginCapture cudaStreamBeginCapture
#define gpuStreamEndCapture cudaStreamEndCapture
#define gpuStreamIsCapturing cudaStreamIsCapturing
#define gpuStreamCaptureModeThreadLocal cudaStreamCaptureModeThreadLocal
#define gpuStreamCaptureStatusActive cudaStreamCaptureStatusActive
#define gpuGraphInstantiate cudaGraphInstantiate
#define gpuGraphLaunch cudaGraphLaunch
#define gpuGraphExecDestroy cudaGraphExecDestroy
#define gpuGraphDestroy cudaGraphDestroy
#define gpuGraphGetNodes cudaGraphGetNodes
#define gpuGraphExecMemcpyNodeSetParams1D cudaGraphExecMemcpyNodeSetParams1D
#endif

/* ------------------------------------------------------------------ */
/* kernels: the device-side spellings (.cu files, nvcc or hipcc)        */
/* ------------------------------------------------------------------ */
/*
 * Kernel files include this header instead of cuda_runtime.h/cuda_bf16.h
 * and spell the few things the two dialects name differently through it:
 *   gpu_bf16, gpu_half              16-bit float types (storage, 2 bytes)
 *   gpu_bf16_to_float / gpu_float_to_bf16, gpu_half_to_float /
 *   gpu_float_to_half               conversions (round to nearest even)
 *   gpu_bf16x2 (two bf16), gpu_bf16x2_zero, gpu_bf16_max, gpu_bf16x2_max
 *                                   max as __hmax: a NaN input gives the other
 *   gpu_shfl_xor, gpu_shfl_down     lane exchange inside 32-lane groups
 *   gpu_timer_ns                    a device clock in nanoseconds
 * Warps.  The kernels are written for 32-lane warps (threadIdx.x & 31,
 * 32-slot reduction scratch).  AMD GPUs run 64-lane wavefronts; the HIP
 * shuffles here pass width 32, so each wavefront behaves as two 32-lane
 * warps and a reduction over offsets 16..1 means what it means on CUDA.
 */
#if defined(__CUDACC__) || defined(__HIPCC__)
#ifdef AORTA_HIP
#include <hip/hip_runtime.h>
#include <hip/hip_bfloat16.h>
#include <hip/hip_fp16.h>
typedef hip_bfloat16 gpu_bf16;
typedef __half gpu_half;
struct gpu_bf16x2 { hip_bfloat16 x, y; };
__device__ static inline float gpu_bf16_to_float(gpu_bf16 v) { return (float)v; }
__device__ static inline gpu_bf16 gpu_float_to_bf16(float v) { return hip_bfloat16(v); }
__device__ static inline float gpu_half_to_float(gpu_half v) { return __half2float(v); }
__device__ static inline gpu_half gpu_float_to_half(float v) { return __float2half(v); }
/* fmaxf returns one of its inputs (NaN only when both are), so the
 * conversion back is exact */
__device__ static inline gpu_bf16 gpu_bf16_max(gpu_bf16 a, gpu_bf16 b)
{
	return hip_bfloat16(fmaxf((float)a, (float)b));
}
__device__ static inline gpu_bf16x2 gpu_bf16x2_zero(void)
{
	gpu_bf16x2 z = { hip_bfloat16(0.0f), hip_bfloat16(0.0f) };
	return z;
}
__device__ static inline gpu_bf16x2 gpu_bf16x2_max(gpu_bf16x2 a, gpu_bf16x2 b)
{
	gpu_bf16x2 r = { gpu_bf16_max(a.x, b.x), gpu_bf16_max(a.y, b.y) };
	return r;
}
__device__ static inline float gpu_shfl_xor(float v, int lane_mask) { return __shfl_xor(v, lane_mask, 32); }
__device__ static inline float gpu_shfl_down(float v, unsigned delta) { return __shfl_down(v, delta, 32); }
/* wall_clock64 counts at a constant 100 MHz on gfx90a and later (HIP 5.2
 * has no attribute to query the rate) */
__device__ static inline unsigned long long gpu_timer_ns(void)
{
#ifdef __HIP_DEVICE_COMPILE__
	return (unsigned long long)wall_clock64() * 10ull;
#else
	return 0; /* the host pass parses but never runs device code */
#endif
}
#else
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
typedef __nv_bfloat16 gpu_bf16;
typedef __half gpu_half;
typedef __nv_bfloat162 gpu_bf16x2;
__device__ static inline float gpu_bf16_to_float(gpu_bf16 v) { return __bfloat162float(v); }
__device__ static inline gpu_bf16 gpu_float_to_bf16(float v) { return __float2bfloat16(v); }
__device__ static inline float gpu_half_to_float(gpu_half v) { return __half2float(v); }
__device__ static inline gpu_half gpu_float_to_half(float v) { return __float2half(v); }
__device__ static inline gpu_bf16 gpu_bf16_max(gpu_bf16 a, gpu_bf16 b) { return __hmax(a, b); }
__device__ static inline gpu_bf16x2 gpu_bf16x2_zero(void) { return __floats2bfloat162_rn(0.0f, 0.0f); }
__device__ static inline gpu_bf16x2 gpu_bf16x2_max(gpu_bf16x2 a, gpu_bf16x2 b) { return __hmax2(a, b); }
__device__ static inline float gpu_shfl_xor(float v, int lane_mask)
{
	return __shfl_xor_sync(0xffffffffu, v, lane_mask);
}
__device__ static inline float gpu_shfl_down(float v, unsigned delta)
{
	return __shfl_down_sync(0xffffffffu, v, delta);
}
__device__ static inline unsigned long long gpu_timer_ns(void)
{
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}
#endif
#endif /* kernels */

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* error checking                                                      */
/* ------------------------------------------------------------------ */

/* AORTA_OK if err is gpuSuccess; else fills e (may be NULL) with
 * "file:line: what: <error name>: <error string>" and returns AORTA_EGPU.
 * Clears the runtime's sticky last-error slot for err. */
enum aorta_status gpu_status_(gpuError_t err, struct aorta_error *e, const char *what,
			      const char *file, int line);

#define GPU_CALL(e, call) gpu_status_((call), (e), #call, __FILE__, __LINE__)
#define GPU_CHECK(e, call) do { \
	if (gpu_status_((call), (e), #call, __FILE__, __LINE__) != AORTA_OK) \
		return AORTA_EGPU; } while (0)
#define GPU_CHECK_GOTO(e, st, call, label) do { \
	if (gpu_status_((call), (e), #call, __FILE__, __LINE__) != AORTA_OK) { \
		(st) = AORTA_EGPU; goto label; } } while (0)

/* The node most recently captured on stream s (a stream in capture, with
 * one dependency: the operation just enqueued), so a caller can update
 * that node in the instantiated graph later.  The argument lists of the
 * runtimes differ (CUDA 13 merged the _v2/_v3 forms; HIP keeps _v2). */
static inline gpuError_t gpu_capture_last_node(gpuStream_t s, gpuGraphNode_t *node)
{
	gpuStreamCaptureStatus cs;
	const gpuGraphNode_t *deps = NULL;
	size_t n = 0;
#ifdef AORTA_HIP
	gpuError_t err = hipStreamGetCaptureInfo_v2(s, &cs, NULL, NULL, &deps, &n);
#else
	gpuError_t err = cudaStreamGetCaptureInfo(s, &cs, NULL, NULL, &deps, NULL, &n);
#endif
	if (err != gpuSuccess)
		return err;
	if (cs != gpuStreamCaptureStatusActive || n != 1)
		return gpuErrorInvalidValue;
	*node = deps[0];
	return gpuSuccess;
}

/* ------------------------------------------------------------------ */
/* devices (device.c)                                                  */
/* ------------------------------------------------------------------ */

struct gpu_device_info {
	int index;               /* device ordinal in this process */
	int count;               /* devices visible to this process */
	int local_rank;          /* from the launcher's environment, -1 if none */
	char name[256];
	char pci_bus_id[32];     /* "0000:18:00.0" */
	int cc_major, cc_minor;
	int sm_count;
	int max_threads_per_block, max_threads_per_sm, regs_per_block, warp_size;
	uint64_t total_mem_bytes, l2_bytes;
	uint64_t shared_mem_per_block, shared_mem_per_block_optin, shared_mem_per_sm;
	int runtime_version, driver_version; /* 13000 = 13.0 */
};

/* Local rank from LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID,
 * MPI_LOCALRANKID (first set, a non-negative integer), else -1. */
int gpu_local_rank(void);

/* Number of visible devices into *n.  No device or no driver is not an
 * error: *n = 0 and AORTA_OK (callers skip).  Other failures: AORTA_EGPU. */
enum aorta_status gpu_device_count(int *n, struct aorta_error *e);

/* Selects and makes current a device: explicit >= 0 takes that ordinal
 * (error if out of range); explicit < 0 takes local_rank modulo the count
 * (0 when no launcher variable is set).  Fills info (may be NULL).  No
 * device: AORTA_EGPU with "no GPU visible". */
enum aorta_status gpu_select_device(int explicit_index, struct gpu_device_info *info,
				    struct aorta_error *e);

/* Properties of device dev (does not change the current device). */
enum aorta_status gpu_device_query(int dev, struct gpu_device_info *info, struct aorta_error *e);

/* ------------------------------------------------------------------ */
/* named streams (streams.c)                                           */
/* ------------------------------------------------------------------ */

/* The ids are also the stream numbers of spans built from the recorder and
 * those of the JSONL reader (compute 0, allreduce 1, reducescatter 2,
 * aux 3; allgather is next). */
enum gpu_stream_id {
	GS_COMPUTE = 0, GS_ALLREDUCE, GS_REDUCESCATTER, GS_AUX, GS_ALLGATHER, GS__COUNT
};

struct gpu_streams {
	gpuStream_t s[GS__COUNT];
	int priority[GS__COUNT];  /* as created (lower number = higher priority) */
	int least, greatest;      /* the device's range: least >= greatest numerically */
	int high_priority;        /* comm streams got `greatest` */
	int device;
};

/* "compute", "allreduce", "reducescatter", "aux", "allgather"; NULL if out of range. */
const char *gpu_stream_name(int id);
/* Inverse of gpu_stream_name; -1 if unknown. */
int gpu_stream_from_name(const char *name);

/* Creates the five non-blocking streams on the current device.  Without
 * high_priority all get the lowest priority (upstream's priority 0); with
 * it the comm streams (allreduce, reducescatter, allgather) get the
 * highest the device offers and compute/aux the lowest.  On failure the
 * streams already made are destroyed and g is zeroed. */
enum aorta_status gpu_streams_init(struct gpu_streams *g, int high_priority, struct aorta_error *e);
/* Waits for every stream. */
enum aorta_status gpu_streams_sync(const struct gpu_streams *g, struct aorta_error *e);
/* Destroys the streams (pending work completes first, as the runtime
 * guarantees); returns the first failure but destroys them all. */
enum aorta_status gpu_streams_release(struct gpu_streams *g, struct aorta_error *e);

#ifdef __cplusplus
}
#endif

#endif
