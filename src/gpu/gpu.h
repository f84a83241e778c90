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
#define gpuMallocHost hipHostMalloc
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
/* CUDA graphs: stream capture, instantiation, replay, node updates */
#define gpuEventRecordWithFlags hipEventRecordWithFlags
#define gpuEventRecordExternal hipEventRecordExternal
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
typedef hipGraphNodeType gpuGraphNodeType;
#define gpuGraphNodeGetType hipGraphNodeGetType
#define gpuGraphNodeTypeKernel hipGraphNodeTypeKernel
#define gpuStreamGetId hipStreamGetId
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
typedef enum cudaGraphNodeType gpuGraphNodeType;
#define gpuGraphNodeGetType cudaGraphNodeGetType
#define gpuGraphNodeTypeKernel cudaGraphNodeTypeKernel
#define gpuStreamGetId cudaStreamGetId
#endif

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
