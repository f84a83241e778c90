/*
 * nvtx.h - named ranges for Nsight Systems and CUPTI (NVTX v3, header-only).
 *
 * NVTX v3 needs no library: the headers under <nvtx3/> resolve a tool's
 * injection library at run time (NVTX_INJECTION64_PATH, set by nsys), and
 * when no tool is attached each call is a test of a null function pointer,
 * a few nanoseconds.  So ranges stay in production builds.
 *
 *   nvtx_push("forward"); ... nvtx_pop();
 *   nvtx_push_step(12);   ("ProfilerStep#12", the name aorta's readers
 *                          treat as a step, as PyTorch's profiler writes it)
 *   nvtx_name_stream(s, "allreduce");   names a stream's row in nsys
 *
 * Colours are derived from the name (FNV-1a), so a tag keeps its colour.
 * HIP builds (AORTA_HIP) and builds with AORTA_NO_NVTX compile these to
 * nothing (roctx would need a library: librocprofiler-sdk-roctx).
 * Thread safety: NVTX ranges are per thread, push and pop on one thread.
 */
#ifndef AORTA_NVTX_H
#define AORTA_NVTX_H

#include <stdint.h>
#include <stdio.h>

#if !defined(AORTA_HIP) && !defined(AORTA_NO_NVTX)
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtCudaRt.h>

static inline uint32_t nvtx_colour_(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return 0xff000000u | (h & 0x00ffffffu);
}

static inline void nvtx_push(const char *name)
{
	nvtxEventAttributes_t a = { 0 };

	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.colorType = NVTX_COLOR_ARGB;
	a.color = nvtx_colour_(name);
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = name;
	(void)nvtxRangePushEx(&a); /* returns the nesting depth, or < 0 with no tool */
}

static inline void nvtx_pop(void)
{
	(void)nvtxRangePop();
}

static inline void nvtx_mark(const char *name)
{
	nvtxMarkA(name);
}

static inline void nvtx_push_step(long long step)
{
	char b[48];

	snprintf(b, sizeof(b), "ProfilerStep#%lld", step);
	nvtx_push(b);
}

static inline void nvtx_name_stream(cudaStream_t s, const char *name)
{
	nvtxNameCudaStreamA(s, name);
}

#else

static inline void nvtx_push(const char *name) { (void)name; }
static inline void nvtx_pop(void) {}
static inline void nvtx_mark(const char *name) { (void)name; }
static inline void nvtx_push_step(long long step) { (void)step; }
#define nvtx_name_stream(s, name) ((void)(s), (void)(name))

#endif

#endif
