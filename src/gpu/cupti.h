/*
 * cupti.h - CUPTI activity capture to Kineto-layout Chrome traces.
 *
 * What it records: kernels (CONCURRENT_KERNEL, which keeps kernels
 * concurrent), copies (MEMCPY), fills (MEMSET) and CUDA runtime calls
 * (RUNTIME, for the launch correlation), over a profiling window chosen as
 * torch.profiler.schedule does:
 *   step < skip_first                 -> none
 *   k = (step - skip_first) mod (wait + warmup + active)
 *   cycle >= repeat (repeat > 0)      -> none
 *   k < wait                          -> none
 *   k < wait + warmup                 -> warm-up (recording on, records dropped)
 *   otherwise                         -> record; the last active step saves
 * where step counts cupti_step calls (cupti_open starts step 0, and each
 * cupti_step ends one step and starts the next, like prof.step()).  Each
 * saved window becomes one file
 *   <output_dir>/torch_profiler/rank<R>/<host>_<pid>.<last step>.pt.trace.json[.gz]
 * with ProfilerStep#N host annotations (user_annotation) for the recorded
 * steps and their GPU side (gpu_user_annotation, per stream, from the first
 * to the last GPU activity launched inside the step).
 *
 * CUPTI is loaded at run time (dlopen of libcupti.so.13, then libcupti.so,
 * then the copies under /usr/local/cuda; AORTA_CUPTI_LIB overrides), so
 * the binary has no link dependency on it.  CUPTI's activity API is
 * process-wide: one capture may be open at a time.
 *
 * Cost: while recording, CUPTI adds roughly a microsecond per launch on
 * the host; outside the window nothing is enabled.  Memory: 8 MiB activity
 * buffers from CUPTI's worker thread, and one kw_event (~100 bytes) per
 * record of the window until it is written.
 */
#ifndef AORTA_CUPTI_H
#define AORTA_CUPTI_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

struct cupti_schedule {
	int skip_first, wait, warmup, active, repeat; /* active >= 1; repeat 0 = forever */
};

struct cupti_opts {
	const char *output_dir;   /* traces under <output_dir>/torch_profiler/rank<R>/ */
	int rank, world_size;
	const char *backend;      /* distributedInfo.backend (NULL: "nccl") */
	int device;               /* device whose properties are written; -1: current */
	int gzip;                 /* write .json.gz */
	/* keep the activity kinds enabled from open to close and only drop
	 * records outside the windows: needed for CUDA graphs, whose kernels
	 * are recorded only if kernel activity was on when the graph was
	 * instantiated (CUPTI documents this for cuptiActivityEnable) */
	int always_on;
	struct cupti_schedule sched;
};

struct cupti_stats {
	uint64_t kernels, memcpys, memsets, runtime; /* records kept, all windows */
	uint64_t dropped;         /* records CUPTI reported lost */
	unsigned traces_written;
	char last_path[1024];     /* the last trace written, "" if none */
};

struct cupti_capture;

/* Loads CUPTI and applies the schedule for step 0.  AORTA_EGPU when CUPTI
 * cannot be loaded or initialised (the message says why; callers may run
 * on without traces); AORTA_EUSAGE for a bad schedule or a second open. */
enum aorta_status cupti_open(struct cupti_capture **out, const struct cupti_opts *o,
			     struct aorta_error *e);
/* Ends the current step and starts the next; writes a trace when a window
 * closes.  Synchronises the device only when a window closes. */
enum aorta_status cupti_step(struct cupti_capture *c, struct aorta_error *e);
/* Stops capture; a window still recording is written (as the profiler's
 * stop() does); unloads nothing (CUPTI cannot be unloaded safely).  c may
 * be NULL. */
enum aorta_status cupti_close(struct cupti_capture *c, struct aorta_error *e);
void cupti_get_stats(const struct cupti_capture *c, struct cupti_stats *s);

/* 1 if libcupti can be loaded here; else 0 with the reason in why. */
int cupti_available(char *why, size_t cap);

#endif
