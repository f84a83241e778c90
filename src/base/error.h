/*
 * error.h - one status enum and one error record for the whole project.
 *
 * Library code never exits and never prints: it returns an enum aorta_status
 * and, where the caller passed one, fills a struct aorta_error with where the
 * problem is (file, line or row, byte offset) and what was expected.  Only
 * commands (src/cmd/) print the record and turn the status into an exit code.
 * The numeric values ARE the documented exit codes (docs/cli.md).
 */
#ifndef AORTA_ERROR_H
#define AORTA_ERROR_H

#include <stdarg.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

enum aorta_status {
	AORTA_OK = 0,
	AORTA_ECHECK = 1,    /* a check failed (regression, verification) */
	AORTA_EUSAGE = 2,    /* bad command line */
	AORTA_EINPUT = 3,    /* bad input file */
	AORTA_EGPU = 4,      /* GPU or runtime error */
	AORTA_EINTERNAL = 5, /* bug, out of memory, I/O on outputs */
};

struct aorta_error {
	enum aorta_status code;
	char path[512];     /* file concerned, "" if none */
	long long line;     /* 1-based line or row, 0 if unknown */
	long long offset;   /* byte offset in the (decompressed) stream, -1 if unknown */
	char msg[1024];     /* lowercase, no full stop */
};

/* Fills e (which may be NULL) and returns code, so callers can write
 * `return aorta_fail(e, AORTA_EINPUT, path, 0, off, "expected ...")`. */
enum aorta_status aorta_fail(struct aorta_error *e, enum aorta_status code,
			     const char *path, long long line, long long offset,
			     const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* Prints "aorta: error: 'path': line L: byte B: msg" on stderr. */
void aorta_error_print(const struct aorta_error *e);

/* Whether errno ERR is the machine running out of something (descriptors,
 * memory, file size): a runtime error (AORTA_EINTERNAL, exit 5), never a
 * bad input to skip. */
int errno_is_resource(int err);
/* AORTA_EINTERNAL for errno_is_resource(err), else fallback. */
enum aorta_status status_of_errno(int err, enum aorta_status fallback);

/* Plain diagnostics on stderr with the "aorta: " prefix. */
void aorta_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void aorta_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Quiet mode for notes (progress); warnings and errors always print. */
extern int aorta_quiet;
/* --strict: input problems that are otherwise warnings (a file of a
 * directory skipped, a rank of the world missing) are errors (exit 3). */
extern int aorta_strict;

/* Allocation that never returns NULL: on failure prints and exits 5.
 * Out of memory is not an input error and has no useful recovery here. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t sz);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
/* A new string formatted as printf would (caller frees); never NULL. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Grow *p (an array of elem-size items with capacity *cap) to hold need. */
void grow_array(void **p, size_t *cap, size_t need, size_t elem);
#define GROW(p, cap, need) grow_array((void **)&(p), &(cap), (need), sizeof(*(p)))

#ifdef __cplusplus
}
#endif

#endif
