/*
 * kineto_write.h - writes activity records as a Kineto / PyTorch-profiler
 * Chrome trace (JSON, optionally gzip), the layout that aorta's own reader
 * (src/ingest/kineto.c), Perfetto and Holistic Trace Analysis open.
 *
 * Host-only and GPU-independent: src/gpu/cupti.c fills arrays of struct
 * kw_event from CUPTI records, tests fill them by hand.  The writer borrows
 * everything it is given (names, arrays) and keeps nothing after it returns.
 *
 * Layout (TRACES.md section 6):
 *   {"schemaVersion":1, "deviceProperties":[...], "distributedInfo":{backend,
 *    rank, world_size}, "cupti_version", "cuda_runtime_version",
 *    "displayTimeUnit":"ms", "baseTimeNanoseconds":B, "traceEvents":[...]}
 * Events are ph "X" with ts/dur in microseconds relative to B, printed as
 * fixed-point numbers with exactly three decimals from integer nanoseconds
 * (no floating point, so a reader that parses digits gets the ns back
 * exactly).  GPU events: pid = device, tid = stream, args {device, stream,
 * correlation, grid, block (kernels), bytes and "memory bandwidth (GB/s)"
 * (copies, fills)}.  Host events (cuda_runtime, user_annotation, cpu_op):
 * pid = process id, tid = thread id, args {correlation, cbid (runtime)}.
 * For every runtime event whose correlation matches a GPU event an "ac2g"
 * flow pair (ph s/f) is written so Perfetto draws the launch arrow, and ph
 * "M" process_name / thread_name metadata names the rows ("GPU 0",
 * "stream 7").
 *
 * Thread safety: none needed; one call writes one file.
 */
#ifndef AORTA_KINETO_WRITE_H
#define AORTA_KINETO_WRITE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/error.h"

enum kw_cat {
	KW_KERNEL = 0,         /* "kernel" */
	KW_MEMCPY,             /* "gpu_memcpy" */
	KW_MEMSET,             /* "gpu_memset" */
	KW_RUNTIME,            /* "cuda_runtime" */
	KW_DRIVER,             /* "cuda_driver" */
	KW_USER_ANNOTATION,    /* "user_annotation" (host: ProfilerStep#N, ranges) */
	KW_GPU_USER_ANNOTATION,/* "gpu_user_annotation" (device side of a range) */
	KW_CPU_OP,             /* "cpu_op" */
	KW__COUNT
};

/* One activity.  Times are absolute ns on one clock (CUPTI timestamps, or
 * CLOCK_REALTIME ns); the writer subtracts kw_trace.base_ns. */
struct kw_event {
	enum kw_cat cat;
	const char *name;        /* borrowed; NULL writes "" */
	int64_t start_ns, end_ns;/* end < start is written as dur 0 */
	int64_t pid, tid;        /* GPU events: device and stream; host: process and thread */
	int64_t correlation;     /* -1: none */
	uint64_t bytes;          /* copies and fills; 0: not written */
	int32_t grid[3], block[3]; /* kernels; grid[0] == 0: not written */
	int32_t regs_per_thread; /* kernels; < 0: not written */
	int32_t shared_mem_bytes;/* kernels: static + dynamic; < 0: not written */
	int32_t cbid;            /* runtime/driver callback id; < 0: not written */
};

/* One deviceProperties entry (Kineto's names). */
struct kw_device {
	int id;
	const char *name;
	uint64_t total_global_mem;
	int compute_major, compute_minor;
	int num_sms, max_threads_per_block, max_threads_per_sm, regs_per_block,
	    warp_size;
	uint64_t shared_mem_per_block, shared_mem_per_block_optin, shared_mem_per_sm;
};

struct kw_trace {
	const char *backend;     /* distributedInfo.backend, e.g. "nccl" (NULL: "nccl") */
	int rank, world_size;
	const struct kw_device *devices;
	size_t ndevices;
	const struct kw_event *ev;
	size_t nev;
	int64_t base_ns;         /* baseTimeNanoseconds; ts = (start_ns - base_ns) / 1000 */
	int cupti_version;       /* < 0: not written */
	int cuda_runtime_version;/* < 0: not written */
	int cuda_driver_version; /* < 0: not written */
	int64_t host_pid;        /* for host-row metadata; < 0: taken from the first host event */
	const char *host_name;   /* process_name of the host row (NULL: "aorta") */
};

/* Category string Kineto uses for c. */
const char *kw_cat_name(enum kw_cat c);

/* Writes t as JSON to f (which the caller owns and checks).  Returns
 * AORTA_OK, or AORTA_EINTERNAL when f reports a write error. */
enum aorta_status kineto_write_stream(FILE *f, const struct kw_trace *t, struct aorta_error *e);

/* Writes t to path atomically (out_open/out_commit): complete or absent.
 * gzip != 0 deflates the stream (gzip format, zlib level 6); the caller
 * chooses the name (".json.gz").  Missing parent folders are created. */
enum aorta_status kineto_write(const char *path, const struct kw_trace *t, int gzip,
			       struct aorta_error *e);

/* Builds upstream's trace path
 *   <output_dir>/torch_profiler/rank<rank>/<host>_<pid>.<step>.pt.trace.json[.gz]
 * into buf (host from gethostname, pid from getpid when pid < 0).  Returns
 * the length, or -1 if it does not fit. */
int kineto_trace_path(char *buf, size_t cap, const char *output_dir, int rank,
		      long long pid, long long step, int gzip);

/* mkdir -p of the folder part of path (everything before the last '/'). */
enum aorta_status kw_make_parent_dirs(const char *path, struct aorta_error *e);

/* Writes ns as microseconds with exactly three decimals ("-0.001", "12.345"). */
void kw_print_us(FILE *f, int64_t ns);

#endif
