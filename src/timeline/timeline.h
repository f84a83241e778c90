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

/* Span kinds.  The classes (compute / comm / memcpy / memset) are what the
 * overlap engine needs; the sub-kinds feed tables and the TP tuner figure. */
enum span_kind {
	K_UNKNOWN = 0,
	K_GEMM, K_ATTENTION, K_COMPUTE_OTHER,            /* compute */
	K_COMM,                                          /* see enum coll_type */
	K_MEMCPY_H2D, K_MEMCPY_D2H, K_MEMCPY_D2D, K_MEMCPY_P2P, K_MEMCPY_OTHER,
	K_MEMSET,
	K_SYNC,     /* cuda_sync records on a device timeline: not busy */
	K__COUNT
};

enum span_class { C_COMPUTE = 0, C_COMM, C_MEMCPY, C_MEMSET, C_NONE, C__COUNT };

enum coll_type {
	COLL_NONE = 0, COLL_ALL_REDUCE, COLL_ALL_GATHER, COLL_REDUCE_SCATTER,
	COLL_BROADCAST, COLL_REDUCE, COLL_ALL_TO_ALL, COLL_SEND_RECV, COLL_OTHER,
	COLL__COUNT
};

/* What the record type says before the name is looked at. */
enum record_hint { R_KERNEL = 0, R_MEMCPY, R_MEMSET, R_SYNC };

/* Collective metadata as traces give it (Kineto args, NCCL NVTX payloads). */
struct coll_meta {
	uint32_t pg_name;      /* strtab id of "Process Group Name", 0 if unknown */
	uint32_t pg_desc;      /* strtab id of its description, 0 if unknown */
	uint32_t coll_name;    /* strtab id of "Collective name", 0 if unknown */
	uint32_t dtype;        /* strtab id of dtype, 0 if unknown */
	int64_t in_nelems, out_nelems; /* -1 if unknown */
	int64_t seq;           /* "Seq" if the trace has it, else -1 */
	int32_t group_size;    /* -1 if unknown */
	int32_t dtype_bytes;   /* 0 if unknown */
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

	/* host launches, only while reading (freed by trace_finish) */
	struct launch_rec { int64_t corr, start_ns, end_ns; } *launch;
	size_t nlaunch, lcap;

	/* bad-input accounting: malformed events skipped, by reason */
	uint64_t skipped;
	char skipped_first[256]; /* description of the first one skipped */
	uint64_t host_events;    /* host events seen (cpu_op, runtime, ...) */
	int has_hta_rounding_hazard; /* some device event shorter than 1 us */
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
void trace_add_step(struct trace *t, int64_t number, int64_t start_ns, int64_t end_ns);
void trace_add_gpu_step(struct trace *t, int64_t number, int64_t start_ns, int64_t end_ns);
/* Attaches collective metadata to span idx (copied). */
void trace_set_coll(struct trace *t, size_t idx, const struct coll_meta *m);
/* Records one skipped malformed event (the first reason is kept). */
void trace_skip(struct trace *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Classifies, resolves launches and steps, sorts.  rules may be NULL for
 * the built-in table.  Never fails. */
void trace_finish(struct trace *t, const struct rules *rules);

/* Class of a kind. */
enum span_class kind_class(enum span_kind k);
const char *kind_name(enum span_kind k);
const char *coll_type_name(enum coll_type c);
/* nccl-tests bus bandwidth factor for n ranks (docs/metrics.md). */
double coll_busbw_factor(enum coll_type c, int n);
/* Collective type from a PyTorch "Collective name" or a kernel name. */
enum coll_type coll_type_from_name(const char *s);
/* Bytes per element of a PyTorch / NCCL dtype name, 0 if unknown. */
int dtype_bytes(const char *s);

/* A set of ranks, e.g. every file of a run. */
struct trace_set {
	struct trace **t;
	size_t n, cap;
};
void trace_set_add(struct trace_set *s, struct trace *t);
void trace_set_release(struct trace_set *s);

#endif
