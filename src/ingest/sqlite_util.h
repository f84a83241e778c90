/*
 * sqlite_util.h - what the two SQLite readers (nsys.c, rocpd.c) share.
 *
 * Opening: a database is opened read-only through a "file:...?immutable=1"
 * URI, so reading takes no lock, never creates a -wal/-shm/-journal file
 * next to the trace and works on read-only media.  The connection runs in
 * defensive mode with untrusted schema (views and triggers in the file can
 * call no function with side effects), since a trace file is input, not
 * code.  One connection belongs to one reader call: readers on different
 * threads never share one.
 *
 * Rank buckets: both formats hold several (process, device) pairs per file.
 * struct sqlu_ranks maps each pair to the struct trace being filled; at the
 * end the traces are sorted by (pid, device), numbered as ranks, finished
 * and handed to the caller's trace_set (ownership moves there), or all freed
 * on error.
 *
 * Step names: sqlu_step_number is the one documented rule (docs/formats.md)
 * for host ranges that mark training steps in NVTX and roctx.
 */
#ifndef AORTA_INGEST_SQLITE_UTIL_H
#define AORTA_INGEST_SQLITE_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "base/error.h"
#include "ingest/ingest.h"
#include "timeline/timeline.h"

/* Opens path read-only and checks that it is an SQLite database.  On
 * failure returns AORTA_EINPUT with e naming path and *db is NULL. */
enum aorta_status sqlu_open(const char *path, sqlite3 **db, struct aorta_error *e);
/* Closes db (NULL is fine). */
void sqlu_close(sqlite3 *db);

/* 1 if a table or view of that name exists, else 0 (also on error). */
int sqlu_has_table(sqlite3 *db, const char *name);
/* 1 if table or view `table` has column `col`, else 0. */
int sqlu_has_column(sqlite3 *db, const char *table, const char *col);

/* Writes `alias."col"` into buf and returns it when table has col, else
 * returns "NULL": how readers adapt one query to older schemas. */
const char *sqlu_col(sqlite3 *db, const char *table, const char *alias, const char *col,
		     char *buf, size_t cap);

/* Prepares sql; on failure fills e (AORTA_EINPUT: the file's schema does
 * not fit the query) and returns its code.  what names the query. */
enum aorta_status sqlu_prepare(sqlite3 *db, const char *sql, sqlite3_stmt **st,
			       const char *path, const char *what, struct aorta_error *e);
/* Turns an sqlite3_step result other than SQLITE_ROW/SQLITE_DONE into an
 * error: AORTA_EINPUT (corrupt file, query budget spent) or AORTA_EINTERNAL
 * (out of memory). */
enum aorta_status sqlu_step_fail(sqlite3 *db, int rc, const char *path, const char *what,
				 struct aorta_error *e);

/* Column text, never NULL ("" for NULL); *len receives its byte length. */
const char *sqlu_text(sqlite3_stmt *st, int col, size_t *len);
/* 1 if the column is SQL NULL. */
int sqlu_is_null(sqlite3_stmt *st, int col);
/* An integer column into *v (a whole REAL too); 0 when the value is NULL,
 * text, a blob or a fraction, so a reader counts the row as skipped instead
 * of reading it as 0.  sqlu_type_name says which, for the skip message. */
int sqlu_int(sqlite3_stmt *st, int col, int64_t *v);
const char *sqlu_type_name(sqlite3_stmt *st, int col);

/* Caps the SQLite virtual-machine operations one reader call may spend
 * (0, the default, is no cap).  For the fuzz targets: a crafted file can
 * hold a view that loops.  Set it before any reader runs; not for use
 * while readers run on other threads. */
void sqlu_set_op_limit(uint64_t ops);

/* The step rule: "ProfilerStep#N", or case-insensitively "step", "iter" or
 * "iteration", then any of ' ', '_', '#', then the decimal N, and nothing
 * after.  Returns 1 and sets *num for a step name, else 0. */
int sqlu_step_number(const char *s, size_t n, int64_t *num);

/* (process, device) -> trace being filled. */
struct sqlu_ranks {
	struct sqlu_rank { int64_t pid, dev; struct trace *t; } *v;
	size_t n, cap, last;
	const char *path, *format;
};

/* Most distinct (process, device) pairs one file may hold. */
#define SQLU_MAX_RANKS 4096

void sqlu_ranks_init(struct sqlu_ranks *r, const char *path, const char *format);
/* The trace of (pid, dev), created on first use; NULL once the file holds
 * more than SQLU_MAX_RANKS pairs. */
struct trace *sqlu_ranks_get(struct sqlu_ranks *r, int64_t pid, int64_t dev);
/* Sorts by (pid, dev), assigns ranks (o->rank_hint when there is exactly
 * one trace), calls trace_finish and moves every trace into out. */
void sqlu_ranks_finish(struct sqlu_ranks *r, const struct ingest_opts *o, struct trace_set *out);
/* Frees whatever traces r still owns. */
void sqlu_ranks_release(struct sqlu_ranks *r);

#endif
