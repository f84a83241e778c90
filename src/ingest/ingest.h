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
	FMT_OPTABLE,        /* aorta.optable/1: one row per operation, CSV or JSONL */
	FMT_FR_PICKLE,      /* PyTorch Flight Recorder dump, pickle (flightrec/fr.h) */
	FMT_FR_JSON,        /* PyTorch Flight Recorder dump, JSON */
	FMT_AORTA_ANALYSIS, /* aorta analyze --json output (for compare) */
};

struct zread;

struct ingest_opts {
	const struct rules *rules; /* NULL: built-in table */
	int rank_hint;             /* rank from the file name, -1 if none */
};

/* The next aorta JSONL read on this thread also gathers overlap_report.py's
 * records of the file into f (ingest/upstream_sums.h), in the same pass;
 * the read takes the request (NULL: none).  Other formats leave it. */
struct up_file;
void ingest_want_upstream(struct up_file *f);
/* A Flight Recorder dump read by ingest_file on this thread goes to *out
 * (it holds no timeline; flightrec/fr.h) until the next call (NULL: such
 * a file is an error, "not a trace"). */
struct fr_dump;
void ingest_want_fr(struct fr_dump **out);

/* Bytes the sniff looks at, and the size caps of the readers (each named in
 * its error when exceeded). */
#define INGEST_SNIFF_BYTES 65536u
#define INGEST_MAX_TRACE_BYTES (256ull << 30)  /* a decompressed trace: 256 GiB */
#define INGEST_MAX_SMALL_BYTES (1ull << 30)    /* JSONL metrics read from a pipe */

const char *format_name(enum trace_format f);

/* Detects the format from the first bytes (decompressing gzip).  Returns
 * FMT_UNKNOWN and fills e if it cannot open or recognise the file.  Opens
 * the file: for a pipe use ingest_file, which sniffs the bytes it reads. */
enum trace_format ingest_sniff(const char *path, struct aorta_error *e);
/* The same decision from bytes already read (buf: the first len bytes of
 * the decompressed stream, NUL-terminated; a SQLite header is resolved by
 * opening path, which must then be a regular file).  A UTF-8 byte order
 * mark is skipped. */
enum trace_format ingest_sniff_buf(const char *path, const char *buf, size_t len,
				   struct aorta_error *e);

/* Opens path once ("-" is standard input), sniffs the bytes it read and
 * hands the same stream to the reader, so FIFOs, pipes and process
 * substitution work.  ingest_file_as skips the sniff when the caller
 * already knows the format (FMT_UNKNOWN: sniff). */
enum aorta_status ingest_file(const char *path, const struct ingest_opts *o,
			      struct trace_set *out, struct aorta_error *e);
enum aorta_status ingest_file_as(const char *path, enum trace_format f,
				 const struct ingest_opts *o, struct trace_set *out,
				 struct aorta_error *e);

/* For readers: the stream to read path from.  Inside ingest_file on the
 * same thread and path, the stream it already opened and sniffed (kept in a
 * thread-local, so a pipe is read once); else a fresh one (bounded by
 * INGEST_MAX_TRACE_BYTES).  The close closes only what the open opened. */
enum aorta_status ingest_stream_open(const char *path, struct zread **z, struct aorta_error *e);
void ingest_stream_close(struct zread *z);

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
enum aorta_status ingest_optable(const char *path, const struct ingest_opts *o,
				 struct trace_set *out, struct aorta_error *e);

/* In-memory entry points for the fuzz targets (same contract; path is only
 * used in messages). */
enum aorta_status ingest_kineto_mem(const char *path, const void *buf, size_t len,
				    const struct ingest_opts *o, struct trace_set *out,
				    struct aorta_error *e);

#endif
