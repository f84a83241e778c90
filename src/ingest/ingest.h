/*
 * ingest.h - readers: trace files in, struct trace (one per rank) out.
 *
 * The format is detected from the content (ingest_sniff), never from the
 * file name.  Every reader:
 *  - appends one struct trace per rank it finds to out (a Kineto file holds
 *    one rank; an Nsight Systems export or a rocpd database may hold several),
 *    after calling trace_finish(t, o->rules) on it;
 *  - on bad input returns AORTA_EINPUT with e naming the file, the byte
 *    offset (of the decompressed stream) or the line/row, and what was
 *    expected, and appends nothing (traces it built are freed);
 *  - skips a single malformed event (wrong type, missing field, negative or
 *    absurd duration) with trace_skip, so the count is reported;
 *  - never crashes on any input (each has a libFuzzer target).
 * Readers are thread-safe with respect to each other: analyze reads ranks in
 * parallel, one file per thread.
 */
#ifndef AORTA_INGEST_H
#define AORTA_INGEST_H

#include <stddef.h>

#include "base/error.h"
#include "timeline/timeline.h"

struct rules;

enum trace_format {
	FMT_UNKNOWN = 0,
	FMT_KINETO,         /* PyTorch profiler / Kineto Chrome trace JSON (.json, .json.gz) */
	FMT_NSYS,           /* nsys export --type sqlite */
	FMT_ROCPD,          /* rocprofv3 rocpd SQLite (ROCm 7) */
	FMT_ROCPROF_CSV,    /* rocprofv3 kernel_trace.csv / memory_copy_trace.csv */
	FMT_ROCPROF_JSON,   /* rocprofv3 --output-format json */
	FMT_AORTA_JSONL,    /* aorta / upstream per-rank metrics JSONL */
	FMT_AORTA_ANALYSIS, /* aorta analyze --json output (for compare) */
};

struct ingest_opts {
	const struct rules *rules; /* NULL: built-in table */
	int rank_hint;             /* rank from the file name, -1 if none */
};

const char *format_name(enum trace_format f);

/* Detects the format from the first bytes (decompressing gzip).  Returns
 * FMT_UNKNOWN and fills e if it cannot open or recognise the file. */
enum trace_format ingest_sniff(const char *path, struct aorta_error *e);

/* Sniffs and dispatches. */
enum aorta_status ingest_file(const char *path, const struct ingest_opts *o,
			      struct trace_set *out, struct aorta_error *e);

enum aorta_status ingest_kineto(const char *path, const struct ingest_opts *o,
				struct trace_set *out, struct aorta_error *e);
enum aorta_status ingest_nsys(const char *path, const struct ingest_opts *o,
			      struct trace_set *out, struct aorta_error *e);
enum aorta_status ingest_rocpd(const char *path, const struct ingest_opts *o,
			       struct trace_set *out, struct aorta_error *e);
enum aorta_status ingest_rocprof_csv(const char *path, const struct ingest_opts *o,
				     struct trace_set *out, struct aorta_error *e);
enum aorta_status ingest_rocprof_json(const char *path, const struct ingest_opts *o,
				      struct trace_set *out, struct aorta_error *e);
enum aorta_status ingest_aorta_jsonl(const char *path, const struct ingest_opts *o,
				     struct trace_set *out, struct aorta_error *e);

/* In-memory entry points for the fuzz targets (same contract; path is only
 * used in messages). */
enum aorta_status ingest_kineto_mem(const char *path, const void *buf, size_t len,
				    const struct ingest_opts *o, struct trace_set *out,
				    struct aorta_error *e);

#endif
