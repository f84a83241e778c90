/*
 * timeline.h - the one in-memory model every reader fills and every figure
 * is computed from: device spans of one rank.
 *
 * A struct trace is one rank (one process driving one device).  It owns its
 * names (strtab), its arrays and everything hung off them; trace_free
 * releases all of it.  Times are int64 nanoseconds on the trace's own clock
 * (Kineto microsecond floats are read as fixed point, never through double).
 *
 * Readers (src/ingest/) only translate formats: they call trace_new, then
 * trace_add_device / trace_add_launch / trace_add_step / trace_add_gpu_step /
 * trace_set_coll, and finally trace_finish, which classifies names with the
 * rule table, resolves each device span's host launch and step (by
 * correlation id, as Holistic Trace Analysis does, else by the GPU-side step
 * annotation that contains it) and sorts spans by start.  After
 * trace_finish the arrays are read-only and may be shared between threads.
 *
 * Memory per device span is about 48 bytes; host events are not kept beyond
 * the launch time of each device span, so a trace's footprint follows its
 * GPU activity, not its file size.
 */
#ifndef AORTA_TIMELINE_H
#define AORTA_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "base/strtab.h"
#include "timeline/vocab.h"


enum p2p_dir { P2P_NONE, P2P_SEND, P2P_RECV };

/* Where a dependency the input states comes from (struct trace's deps; the
 * what-if's DEPK_* share these values): a record of the trace (Kineto's
 * cuda_sync stream wait paired with its cudaEventRecord), the op table's
 * `after` column. */
enum dep_source { DEP_RECORD = 1, DEP_TABLE = 2 };

/* The limits of a timeline, one place for every reader (plausible.c drops
 * what lies beyond them, each a counted skip naming the limit):
 *  - every time (a span's start and end, a launch, a step's bounds) lies in
 *    [TRACE_MIN_NS, TRACE_MAX_NS]: about 73 years before the clock's zero to
 *    146 years after it, so any two times of a run differ by less than
 *    2^63 ns and their difference is exact in int64 (epoch clocks fit);
 *  - a span lasts at most TRACE_MAX_SPAN_NS (10^6 s, about 11.6 days;
 *    Kineto's reader has refused longer ones since its first version);
 *  - a launch comes before the start of the op it launched (by at most
 *    TRACE_LAUNCH_SLACK_NS of clock jitter). */
#define TRACE_MIN_NS (-(INT64_C(1) << 61))
#define TRACE_MAX_NS (INT64_C(1) << 62)
#define TRACE_MAX_SPAN_NS INT64_C(1000000000000000)
#define TRACE_LAUNCH_SLACK_NS INT64_C(1000)

/* a + b for sums of durations (a kernel's total over its calls): spans
 * within the limits may still overlap by the thousand, so the sum
 * saturates at INT64_MAX instead of wrapping; the analysis writer refuses a
 * figure past its limit rather than printing a wrapped one. */
static inline int64_t ns_sum(int64_t a, int64_t b)
{
	int64_t s;
	return __builtin_add_overflow(a, b, &s) ? (b > 0 ? INT64_MAX : INT64_MIN) : s;
}

/* Collective metadata as traces give it (Kineto args, NCCL NVTX payloads). */
struct coll_meta {
	uint32_t pg_name;      /* strtab id of "Process Group Name", 0 if unknown */
	uint32_t pg_desc;      /* strtab id of its description, 0 if unknown */
	uint32_t pg_ranks;     /* strtab id of its members' global ranks, "0,1,4" (Kineto
				* "Process Group Ranks"), 0 if unknown or given empty */
	uint32_t coll_name;    /* strtab id of "Collective name", 0 if unknown */
	uint32_t dtype;        /* strtab id of dtype, 0 if unknown */
	int64_t in_nelems, out_nelems; /* -1 if unknown */
	int64_t seq;           /* "Seq" if the trace has it, else -1 */
	int32_t group_size;    /* -1 if unknown */
	int32_t dtype_bytes;   /* 0 if unknown */
	int32_t peer;          /* send/recv: the other rank (global rank), -1 if unknown */
	uint8_t p2p;           /* enum p2p_dir: P2P_NONE 0, P2P_SEND 1, P2P_RECV 2 */
	uint32_t host_op;      /* strtab id of the host op that launched the kernel (nccl:all_to_all,
				* an NCCL NVTX range, an RCCL API call), 0 if none (timeline.c) */
};

/* A coll_meta with every field unknown. */
static inline void coll_meta_init(struct coll_meta *m)
{
	*m = (struct coll_meta){ .in_nelems = -1, .out_nelems = -1, .seq = -1, .group_size = -1, .peer = -1 };
}

/* Figures a format records per step itself: aorta / upstream AORTA JSONL's
 * profile (total_ms, overlap.per_stream_ms, overlap.overlap_ms) and loss,
 * as upstream's overlap_report.py reads them (a missing overlap figure is
 * 0, a missing loss NaN).  Kept beside the spans so report's summary.json
 * stays what upstream computes from the same files.  SR_COMM is the sum of
 * the communication streams, SR_EXPOSED max(SR_COMM - SR_OVERLAP, 0). */
enum step_rec {
	SR_STEP, SR_COMPUTE, SR_OVERLAP, SR_AR_OVERLAP, SR_RS_OVERLAP, SR_AG_OVERLAP,
	SR_COMM, SR_EXPOSED, SR_AUX, SR_IDLE, SR_LOSS, SR__COUNT
};
/* SR_EXPOSED from SR_COMM and SR_OVERLAP, as the JSONL reader records it
 * (the step store keeps a column equal to it as the formula). */
static inline double rec_exposed(double comm, double overlap)
{
	return comm > overlap ? comm - overlap : 0;
}
struct recorded_step {
	int64_t number;        /* the step it belongs to (step_range.number) */
	double v[SR__COUNT];
};

struct step_range {
	int64_t number;        /* N of ProfilerStep#N, or the range ordinal */
	int64_t start_ns, end_ns;
};

struct trace {
	struct strtab names;
	char *path;            /* source file (owned) */
	const char *format;    /* static string: "kineto", "nsys", ... */
	int rank;              /* -1 until known */
	int world_size;        /* -1 if unknown */
	int device;            /* device index, -1 if unknown */
	/* one-process multi-GPU traces: GPU activity on a device other than
	 * `device` (the first seen).  Stream ids may collide across devices and
	 * every set would mix the devices, so the figures of such a trace are
	 * not per-GPU figures: readers count the spans, outputs warn. */
	int other_device;                /* the first other device, -1 if none */
	uint64_t other_device_spans;
	int64_t pid;           /* process id if the format has one, else -1 */
	char host[128];        /* host name if the file gives it (nsys), else "": ranks of one
				* host share a clock (overlap/join.c) */

	/* device spans, struct of arrays, n of them */
	size_t n, cap;
	int64_t *start_ns, *end_ns;
	int64_t *launch_ns;    /* start of the host call that launched it, INT64_MIN if unknown */
	int64_t *corr;         /* correlation id, -1 if none (cleared after finish) */
	uint64_t *bytes;       /* bytes moved (memcpy/memset/collective), 0 if unknown */
	uint32_t *name;        /* strtab id */
	int32_t *stream;
	int32_t *step;         /* index into steps[], -1 if outside every step */
	uint32_t *meta;        /* index into coll[], UINT32_MAX if none */
	uint8_t *kind;         /* enum span_kind */
	uint8_t *coll_type;    /* enum coll_type (COLL_NONE unless K_COMM) */
	uint8_t *hint;         /* enum record_hint */

	struct coll_meta *coll;
	size_t ncoll, ccap;

	/* host-side step ranges (ProfilerStep#N, NVTX, roctx), sorted by start */
	struct step_range *steps;
	size_t nsteps, scap;
	/* GPU-side step annotations (gpu_user_annotation ProfilerStep#N); the
	 * rows of one step on several streams are merged into one range */
	struct step_range *gsteps;
	size_t ngsteps, gscap;
	int64_t gstep_last_start_ns; /* latest start of any such row, INT64_MIN if none */

	/* per-step figures the format recorded (JSONL), in file order; none
	 * for traces */
	struct recorded_step *rec;
	size_t nrec, rcap;

	/* host synchronisations (cudaStreamSynchronize, cudaEventSynchronize,
	 * cudaDeviceSynchronize and the like): when the host waited for the
	 * device; the what-if replay (overlap/whatif.c) reads their ends */
	struct host_sync { int64_t start_ns, end_ns; } *hsync;
	size_t nhsync, hscap;

	/* dependencies the input states (not inferred): span `op` did not start
	 * before span `to` ended; how: where the input says so (enum dep_source).
	 * Span indices of the finished trace: a reader adds
	 * them after trace_finish (trace_add_dep); the what-if reads them
	 * (overlap/whatif/optable.c) instead of guessing */
	struct span_dep { int32_t op, to; uint8_t how, pad[3]; } *deps;
	size_t ndeps, dcap;

	/* host launches, only while reading (freed by trace_finish); tid: the
	 * host thread that made the call, -1 if unknown */
	struct launch_rec { int64_t corr, start_ns, end_ns, tid; } *launch;
	size_t nlaunch, lcap;
	/* host-side collective calls, only while reading (freed by
	 * trace_finish): Kineto's nccl:*, c10d::* and record_param_comms cpu
	 * ops, NCCL's NVTX ranges, RCCL's API calls.  A communication kernel
	 * whose launch falls inside some on the same thread learns its
	 * collective from them (docs/metrics.md "Collective identity") */
	struct host_coll {
		int64_t tid, start_ns, end_ns;
		uint32_t name;         /* strtab id of the op's name */
		struct coll_meta m;    /* what its arguments say (coll_meta_init: nothing) */
	} *hcoll;
	size_t nhcoll, hccap;

	/* bad-input accounting: malformed events skipped, by reason */
	uint64_t skipped;
	char skipped_first[256]; /* description of the first one skipped */
	uint64_t host_events;    /* host events seen (cpu_op, runtime, ...) */
	int has_hta_rounding_hazard; /* some device event shorter than 1 us */
	int64_t tick_ns;         /* the input's time resolution (1 unless the reader says coarser:
				  * an op table's durations in ms): a zero-length collective is a
				  * broken record only where the clock resolves a microsecond */
};

struct rules;

struct trace *trace_new(const char *path, const char *format);
void trace_free(struct trace *t);

/* Appends a device span; name is interned.  Returns the span index.  A span
 * with end < start is the caller's to reject (count it with trace_skip). */
size_t trace_add_device(struct trace *t, int64_t start_ns, int64_t end_ns,
			const char *name, size_t name_len, enum record_hint hint,
			int32_t stream, int64_t corr, uint64_t bytes);
void trace_add_launch(struct trace *t, int64_t corr, int64_t start_ns, int64_t end_ns);
/* The same, made on host thread tid (so that the collective call around it
 * on that thread, trace_add_host_coll, can name what it launched). */
void trace_add_launch_tid(struct trace *t, int64_t corr, int64_t start_ns, int64_t end_ns, int64_t tid);
/* Records a host-side collective call [start, end) on thread tid, named
 * name (interned); m (copied) what its arguments say, NULL for nothing.
 * The innermost ones around a communication kernel's launch name its
 * collective, group, size and peer where the kernel's own record does not
 * (trace_finish). */
void trace_add_host_coll(struct trace *t, int64_t tid, int64_t start_ns, int64_t end_ns,
			 const char *name, size_t name_len, const struct coll_meta *m);
/* A reader that knows span idx's kind (an op table: the row says it) gives
 * it here; trace_finish keeps it instead of classifying the name, so the
 * plausibility layer judges the kind the input gave.  coll is COLL_NONE
 * unless k is K_COMM. */
void trace_set_kind(struct trace *t, size_t idx, enum span_kind k, enum coll_type coll);
/* A reader that knows when span idx was launched without a correlation id
 * (an op table's launch column); trace_finish checks it as any launch. */
void trace_set_launch(struct trace *t, size_t idx, int64_t launch_ns);
/* Records that span op (of the finished trace) waited for span to; how as
 * struct span_dep says. */
void trace_add_dep(struct trace *t, size_t op, size_t to, uint8_t how);
/* Records a host call that waited for the device (a synchronisation). */
void trace_add_host_sync(struct trace *t, int64_t start_ns, int64_t end_ns);
void trace_add_step(struct trace *t, int64_t number, int64_t start_ns, int64_t end_ns);
void trace_add_gpu_step(struct trace *t, int64_t number, int64_t start_ns, int64_t end_ns);
/* Room for this many spans, steps (host and GPU) and recorded steps in
 * all (a reader that can estimate them: no copy as the arrays grow). */
void trace_reserve(struct trace *t, size_t spans, size_t steps, size_t recs);
/* Records the figures a format gives for step `number` (copied). */
void trace_add_record(struct trace *t, int64_t number, const double v[SR__COUNT]);
/* Attaches collective metadata to span idx (copied). */
void trace_set_coll(struct trace *t, size_t idx, const struct coll_meta *m);
/* Records one skipped malformed event (the first reason is kept). */
void trace_skip(struct trace *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The plausibility layer (plausible.c), run by trace_finish: spans no run
 * can produce (beyond the limits above, zero-length communication kernels,
 * implausibly long spans), host steps beyond the limits, repeated on
 * disjoint ranges or going back in time, and launches after their op's
 * start are left out, each a trace_skip with its reason. */
void trace_plausible_spans(struct trace *t);
void trace_plausible_steps(struct trace *t);
void trace_plausible_launches(struct trace *t);

/* Classifies, resolves launches and steps, sorts.  rules may be NULL for
 * the built-in table.  Never fails. */
void trace_finish(struct trace *t, const struct rules *rules);

/* A set of ranks, e.g. every file of a run. */
struct trace_set {
	struct trace **t;
	size_t n, cap;
};
void trace_set_add(struct trace_set *s, struct trace *t);
void trace_set_release(struct trace_set *s);

#endif
