/*
 * ingest_mem.h - in-memory entry points of the rocprofv3 CSV / JSON and
 * aorta JSONL readers, for the fuzz targets and unit tests.
 *
 * Same contract as the file readers in ingest.h: buf holds the whole
 * (decompressed) content, len bytes, not necessarily NUL-terminated; path is
 * only used in messages and in struct trace.path.  The CSV variant reads
 * buf alone: it never opens sibling files (memory_copy_trace.csv,
 * hip_trace.csv, marker_api_trace.csv).  Thread-safe; buf is not modified.
 */
#ifndef AORTA_INGEST_MEM_H
#define AORTA_INGEST_MEM_H

#include <stddef.h>

#include "ingest/ingest.h"

enum aorta_status ingest_rocprof_csv_mem(const char *path, const void *buf, size_t len,
					 const struct ingest_opts *o, struct trace_set *out,
					 struct aorta_error *e);
enum aorta_status ingest_rocprof_json_mem(const char *path, const void *buf, size_t len,
					  const struct ingest_opts *o, struct trace_set *out,
					  struct aorta_error *e);
enum aorta_status ingest_aorta_jsonl_mem(const char *path, const void *buf, size_t len,
					 const struct ingest_opts *o, struct trace_set *out,
					 struct aorta_error *e);
enum aorta_status ingest_optable_mem(const char *path, const void *buf, size_t len,
				     const struct ingest_opts *o, struct trace_set *out,
				     struct aorta_error *e);

#endif
