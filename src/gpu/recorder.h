/*
 * recorder.h - the span recorder: GPU events around work on the stream
 * where it really runs, read back once per step.
 *
 * Use, per step:
 *     rec_step_begin(r, step);
 *     h = rec_begin(r, GS_COMPUTE, "epoch0_step3_forward", REC_COMPUTE);
 *     ... launch the forward pass on the compute stream ...
 *     rec_end(r, h);
 *     rec_marker(r, GS_COMPUTE, "epoch0_step3_end");
 *     rec_collect(r, &step_out, &e);        one host wait for the whole step
 * (the trainer turns step_out into JSONL with train/metrics.c)
 *
 * Design.  rec_begin/rec_end/rec_marker only take an event from a pool
 * created at rec_init (cudaEventDefault, so timing is on) and record it on
 * the stream: no allocation, no host synchronisation, about one
 * cudaEventRecord each.  Tags are copied into a per-step character buffer.
 * The pool, the range table and the tag buffer are reused every step; they
 * grow (amortised doubling) only when a step needs more than any earlier
 * one, so after the first step a steady workload allocates nothing.
 * Errors on the hot path are sticky (the first is kept and returned by
 * rec_collect), so call sites stay one line.
 *
 * rec_collect records a tail event on every stream used in the step, makes
 * the compute stream wait for them, records the step's end event on compute
 * and waits for that one event: the single host synchronisation.  (So the
 * next step's compute work starts after this step's work on every stream,
 * the step boundary upstream makes with a device-wide sync.)  Times are
 * cudaEventElapsedTime from the step's start event (recorded on the compute
 * stream by rec_step_begin), converted to integer ns; a range on another
 * stream may start before it, so times can be negative, as upstream's.
 * Resolution is the event timer's, about 0.5 us.
 *
 * Graph mode.  A step can be captured once into a CUDA graph and replayed:
 *     rec_capture_begin(r, &e);       the caller has begun stream capture
 *     rec_step_begin ... rec_collect  the step's usual calls, captured: each
 *                                     event is an EXTERNAL event-record node
 *                                     (cudaEventRecordExternal), so it records
 *                                     when the graph runs and elapsed times
 *                                     work; rec_collect joins the streams
 *                                     inside the graph, waits for nothing and
 *                                     returns an empty step
 *     rec_capture_end(r, ok, &e);     after cudaStreamEndCapture/instantiate;
 *                                     ok = 0 goes back to eager
 *   then per replay: the same calls in the same order on the same streams
 *   (tags may differ: they carry the step number), around cudaGraphLaunch
 *   on the compute stream.  Nothing is recorded on the host side; the k-th
 *   event taken is the k-th the graph records (a step that differs from
 *   the captured one is an error), and rec_collect waits for the compute
 *   stream, then converts as in eager mode, so a step's ranges and markers
 *   come out the same in both modes.  rec_graph_release returns to eager
 *   once the graph is destroyed.  The pool's events belong to the graph
 *   while it exists: destroy the graph before rec_free.
 *
 * Names in the trace: the engine classifies by name, so a range becomes
 * the same name the JSONL reader gives it (src/ingest/aorta_jsonl.c):
 * "aorta:compute:<tag>", "aorta:all_reduce:<tag>", ... "Memcpy HtoD
 * (<tag>)", "Memset (<tag>)", with the tag's "epoch<E>_step<S>_" prefix
 * removed so names repeat across steps.  Stream numbers are the ids of
 * enum gpu_stream_id (compute 0, allreduce 1, reducescatter 2, aux 3,
 * allgather 4), also the JSONL reader's numbering.
 *
 * Thread safety: one recorder per host thread (each thread drives its own
 * device and streams).
 */
#ifndef AORTA_RECORDER_H
#define AORTA_RECORDER_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "gpu/gpu.h"


enum rec_kind {
	REC_COMPUTE = 0,
	REC_ALL_REDUCE, REC_REDUCE_SCATTER, REC_ALL_GATHER, REC_COMM,
	REC_MEMCPY_H2D, REC_MEMCPY_D2H, REC_MEMCPY_D2D,
	REC_MEMSET,
	REC__COUNT
};

/* One closed range of a collected step; times relative to the step start. */
struct rec_range {
	int stream;              /* gpu_stream_id, or the caller's label for other streams */
	enum rec_kind kind;
	const char *tag;         /* owned by the recorder, valid until the next rec_step_begin */
	const char *function;    /* metadata.function, NULL if none */
	int64_t start_ns, end_ns;
};

struct rec_mark {
	int stream;
	const char *tag;
	int64_t time_ns;
};

/* A collected step: arrays owned by the recorder, valid until the next
 * rec_step_begin or rec_free. */
struct rec_step {
	int64_t step;
	int64_t total_ns;        /* start event to end event */
	const struct rec_range *ranges;
	size_t nranges;
	const struct rec_mark *marks;
	size_t nmarks;
	unsigned pool_events;    /* events in the pool after this step */
	unsigned pool_grown;     /* times the pool grew since rec_init */
};

struct recorder;

/* Creates a recorder for streams g (borrowed: must outlive it) with a pool
 * sized for expected_ranges ranges per step (it grows when needed). */
enum aorta_status rec_init(struct recorder **out, const struct gpu_streams *g,
			   size_t expected_ranges, struct aorta_error *e);
/* Destroys the events and frees everything; r may be NULL. */
enum aorta_status rec_free(struct recorder *r, struct aorta_error *e);

/* Starts a step: clears the last step's ranges and records the start event
 * on the compute stream.  Failure is sticky (see rec_collect). */
void rec_step_begin(struct recorder *r, int64_t step);

/* Opens a range on named stream stream_id; returns a handle for rec_end,
 * or -1 after an error (rec_end ignores -1).  tag is copied. */
int rec_begin(struct recorder *r, int stream_id, const char *tag, enum rec_kind kind);
/* Same with metadata.function (e.g. "all_reduce"), copied. */
int rec_begin_fn(struct recorder *r, int stream_id, const char *tag, enum rec_kind kind,
		 const char *function);
/* Same on any stream; label is the stream number written for it. */
int rec_begin_on(struct recorder *r, gpuStream_t s, int label, const char *tag,
		 enum rec_kind kind, const char *function);
void rec_end(struct recorder *r, int handle);
/* A point in time on a stream (upstream's markers). */
void rec_marker(struct recorder *r, int stream_id, const char *tag);

/* Ends the step (see the design note), waits once, converts.  Returns the
 * first error of the step (GPU failure, a range never ended) and clears it;
 * on success fills out. */
enum aorta_status rec_collect(struct recorder *r, struct rec_step *out, struct aorta_error *e);

/* Graph mode (see the design note).  rec_capture_begin: between steps,
 * with the compute stream capturing.  rec_capture_end(keep): keep = 1 makes
 * later steps replays of the captured one (AORTA_EINTERNAL, and eager mode,
 * if the captured step was not collected); keep = 0 (capture or
 * instantiation failed) returns to eager mode and clears the step's error.
 * rec_graph_release: back to eager after the caller destroyed the graph.
 * rec_replaying: 1 while steps are replays. */
enum aorta_status rec_capture_begin(struct recorder *r, struct aorta_error *e);
enum aorta_status rec_capture_end(struct recorder *r, int keep, struct aorta_error *e);
void rec_graph_release(struct recorder *r);
int rec_replaying(const struct recorder *r);

/* Name of a kind ("compute", "all_reduce", ..., "memcpy_h2d", "memset"). */
const char *rec_kind_name(enum rec_kind k);

#endif
