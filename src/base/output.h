/*
 * output.h - output files that are either complete or absent, and a JSON
 * writer.
 *
 * out_open writes to a temporary file beside the target (through symlinks);
 * out_commit flushes, checks every write and renames it into place;
 * out_abort removes it.  An existing character device or FIFO is written in
 * place; a directory is refused with AORTA_EINPUT.  Temporary files are
 * removed on SIGINT/SIGTERM.  So an
 * interrupted or failed run never leaves a half-written output.  For tests,
 * out_fail_after_bytes makes writes fail after N bytes (fault injection, as
 * SQLite does), proving the error path.
 *
 * The JSON writer streams to a FILE*, tracks commas and indentation, escapes
 * strings (control characters, quotes, invalid UTF-8 bytes become \u00XX)
 * and prints times as milliseconds with six decimals, which is exact for
 * integer nanoseconds.
 */
#ifndef AORTA_OUTPUT_H
#define AORTA_OUTPUT_H

#include <stdint.h>
#include <stdio.h>

#include "base/error.h"

struct outfile {
	FILE *f;
	char *path, *tmp;   /* path: the resolved target; tmp NULL when in place */
	int in_place;       /* a character device or FIFO, written directly */
};

enum aorta_status out_open(struct outfile *o, const char *path, struct aorta_error *e);
enum aorta_status out_commit(struct outfile *o, struct aorta_error *e);
void out_abort(struct outfile *o);
/* Inputs are never outputs: every file a command reads is declared with
 * out_guard_input (inputs_expand does it for traces) and every file it will
 * write with out_guard_output (WHAT names it: "--json") before anything is
 * written; a file declared twice (device and inode, or the resolved path of
 * a file not yet there) is AORTA_EUSAGE naming both.  out_open itself
 * refuses a declared input.  Devices, FIFOs and "-" are not guarded.  Not
 * thread-safe: called while the command sets up.  out_guard_reset forgets
 * all (tests, and commands that run several analyses of their own). */
enum aorta_status out_guard_input(const char *path, struct aorta_error *e);
enum aorta_status out_guard_output(const char *path, const char *what, struct aorta_error *e);
void out_guard_reset(void);
/* Called once by main: SIGXFSZ ignored, so a write past the file-size limit
 * fails (EFBIG, exit 5) and the cleanup runs; SIGXCPU is among the signals
 * whose handler removes temporary files. */
void out_init_signals(void);
extern long long out_fail_after_bytes; /* -1: off (tests set it) */
/* Whether a file name (or path) is one of out_open's temporary files. */
int output_is_temp_name(const char *name);

struct jw {
	FILE *f;
	int depth;
	int first[64];
	int pretty;
};

void jw_init(struct jw *w, FILE *f, int pretty);
void jw_obj(struct jw *w, const char *key);   /* key NULL inside arrays / at top */
void jw_obj_end(struct jw *w);
void jw_arr(struct jw *w, const char *key);
void jw_arr_end(struct jw *w);
void jw_str(struct jw *w, const char *key, const char *v);
void jw_int(struct jw *w, const char *key, long long v);
void jw_uint(struct jw *w, const char *key, unsigned long long v);
void jw_num(struct jw *w, const char *key, double v, int decimals); /* NaN/inf -> null */
void jw_ms(struct jw *w, const char *key, int64_t ns);               /* ns -> "%.6f" ms */
void jw_num_exact(struct jw *w, const char *key, double v);  /* shortest text that reads back as v; NaN -> null */
void jw_bool(struct jw *w, const char *key, int v);
void jw_null(struct jw *w, const char *key);
void json_escape(FILE *f, const char *s);
/* Prints ns as milliseconds with 6 decimals, exactly (no floating point). */
void fprint_ms(FILE *f, int64_t ns);

#endif
