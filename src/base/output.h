/*
 * output.h - output files that are either complete or absent, and a JSON
 * writer.
 *
 * out_open writes to a temporary file beside the target (through symlinks);
 * out_commit flushes, checks every write and renames it into place;
 * out_abort removes it.  An existing character device or FIFO is written in
 * place; a directory is refused with AORTA_EINPUT.  So an interrupted or
 * failed run never leaves a half-written output.
 *
 * The outputs of one command are one unit: after out_unit_begin,
 * out_commit leaves each file under its temporary name and
 * out_unit_commit renames them all at the end (or none: a failed rename
 * puts the others back), so a run that fails or is stopped half-way
 * leaves the previous outputs whole; out_unit_abort removes what was
 * written.  Temporary files, a folder made for outputs (out_mkdir) and the
 * files tracked in a temporary folder (out_track_file) are removed by
 * every signal that ends the process (SIGINT, SIGTERM, SIGHUP, SIGQUIT,
 * SIGALRM, SIGUSR1, SIGUSR2, SIGPIPE, ... all but SIGKILL and SIGSTOP) and
 * at exit, whatever the exit.  For tests, out_fail_after_bytes makes
 * writes fail after N bytes (fault injection, as SQLite does), proving the
 * error path.
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

/* The command's outputs as one unit (above).  Not thread-safe: the
 * command's main thread. */
void out_unit_begin(void);
enum aorta_status out_unit_commit(struct aorta_error *e);
void out_unit_abort(void);
/* A folder for outputs: made when absent (temporary: made fresh, an error
 * when it exists) and removed by out_unit_abort, a failed commit, a signal
 * or an exit while it is empty; an existing folder is used as it is. */
enum aorta_status out_mkdir(const char *dir, int temporary, struct aorta_error *e);
/* A file another part writes itself (a chart the plot plug-in draws) into
 * a temporary folder: removed with it by a signal or an exit. */
void out_track_file(const char *path);
/* A temporary folder (and what was tracked directly in it) is no longer
 * to be removed: it was moved into place. */
void out_forget_dir(const char *dir);
/* Terminating signals blocked around a step that must not be cut in two
 * (a report's folder swapped into place); delivered after it. */
#include <signal.h>
void out_critical_begin(sigset_t *old);
void out_critical_end(const sigset_t *old);
/* Inputs are never outputs: every file a command reads is declared with
 * out_guard_input (inputs_expand does it for traces) and every file it will
 * write with out_guard_output (WHAT names it: "--json") before anything is
 * written; a file declared twice (device and inode, or the resolved path of
 * a file not yet there) is AORTA_EUSAGE naming both.  out_open itself
 * refuses a declared input.  Devices, FIFOs and "-" are not guarded.
 * Thread-safe (a mutex: readers declare from their threads).  out_guard_reset forgets
 * all (tests, and commands that run several analyses of their own). */
enum aorta_status out_guard_input(const char *path, struct aorta_error *e);
/* What zread_read calls on the first bytes read of every file (a list of
 * inputs, rules, offsets, a saved analysis, a trace: every file a command
 * reads, not the ones a folder walk only sniffs): out_guard_input, from any
 * thread. */
enum aorta_status out_guard_read(const char *path, struct aorta_error *e);
enum aorta_status out_guard_output(const char *path, const char *what, struct aorta_error *e);
void out_guard_reset(void);
/* path is no longer an input: a file of the command's own state it read
 * only to check it and now replaces (sweep --resume's resolved recipe). */
void out_guard_forget(const char *path);
/* Called once by main: SIGXFSZ ignored, so a write past the file-size limit
 * fails (EFBIG, exit 5) and the cleanup runs; SIGXCPU is among the signals
 * whose handler removes temporary files. */
void out_init_signals(void);
extern long long out_fail_after_bytes; /* -1: off (tests set it) */
/* The path a path names through symlinks (a dangling link: its target;
 * a relative target from the link's folder), malloc'd; NULL with errno set
 * on a loop.  An output is written at it, so the link stays a link. */
char *out_resolve(const char *path);
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
