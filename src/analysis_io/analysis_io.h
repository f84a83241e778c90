/*
 * analysis_io.h - the analysis model's codecs, between the engine
 * (overlap/) and the front ends: the analysis JSON writer and its
 * schema-checked reader, and a rank's results packed as bytes for MPI.
 * All three walk the record tables of fields.h, so a field is added once.
 */
#ifndef AORTA_ANALYSIS_IO_H
#define AORTA_ANALYSIS_IO_H

#include <stddef.h>
#include <stdio.h>

#include "base/error.h"
#include "overlap/analysis.h"

/* /4: flight_recorder (a hang explained from Flight Recorder dumps,
 * docs/formats.md), and a file of dumps alone holds no rank ("ranks": []).
 * /3: across_ranks.what_if (the replay, docs/metrics.md "What-if") and
 * wait.p2p_peers.  /2: algbw_gbps/busbw_gbps are from transfer time (end - last arrival),
 * no longer the whole kernel time (now *_kernel_gbps); docs/formats.md */
#define ANALYSIS_SCHEMA "aorta.analysis/4"

/* The analysis JSON (pretty-printed) to f. */
void analysis_write_json(FILE *f, const struct analysis *a);
/* Written to a temporary name and renamed (base/output.h), after
 * analysis_check: an analysis that breaks the rules is not written. */
enum aorta_status analysis_save_json(const struct analysis *a, const char *path, struct aorta_error *e);
/* The value rules of every field and record (analysis_io/check.c), as the
 * reader applies them: AORTA_EINTERNAL naming the field when a figure
 * breaks them (path names the file it was to be written to). */
enum aorta_status analysis_check(const struct analysis *a, const char *path, struct aorta_error *e);

/* Reads a saved analysis (gzip/zstd allowed) into a (the caller frees it
 * with analysis_free; on error a is empty).  Errors are AORTA_EINPUT with
 * the file, the byte offset and the path of the bad field. */
enum aorta_status analysis_json_read(const char *path, struct analysis *a, struct aorta_error *e);
/* The same on text in memory (NUL-terminated); path only names it. */
enum aorta_status analysis_json_parse(const char *path, const char *text, struct analysis *a,
				      struct aorta_error *e);

/* A rank's results as bytes and back (the MPI reduction of analyze_mpi.c).
 * Same binary on both ends: the fixed part of struct rank_result is copied
 * whole, the members the table names as pointers follow it. */
struct bytes {
	char *p;
	size_t n, cap;
};
void rank_pack(const struct rank_result *r, struct bytes *b);
/* The pack's pieces: n bytes, and a string as uint32 length + bytes
 * (UINT32_MAX for NULL), appended to b. */
void bytes_put(struct bytes *b, const void *p, size_t n);
void bytes_put_str(struct bytes *b, const char *s);
/* Reads one packed rank at *off (advanced past it); r is filled and owned
 * by the caller.  A short or malformed pack is AORTA_EINTERNAL. */
enum aorta_status rank_unpack(const char *p, size_t n, size_t *off, struct rank_result *r,
			      struct aorta_error *e);

#endif
