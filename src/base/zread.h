/*
 * zread.h - read a file as a stream of bytes, inflating gzip transparently.
 *
 * gzip is detected by its magic bytes, not the file name.  Inflation uses
 * ISA-L's igzip when libisal.so.2 can be loaded at run time (it is not linked,
 * so the binary still runs where ISA-L is absent), else zlib.  Multi-member
 * gzip files are read through.  A corrupt or truncated stream is an error
 * naming the compressed byte offset.  One struct zread per thread.
 */
#ifndef AORTA_ZREAD_H
#define AORTA_ZREAD_H

#include <stddef.h>
#include <sys/types.h>

#include "base/error.h"

struct zread;

/* path "-" is standard input.  bzip2, xz, zstd and compress data are
 * refused with "X is not supported, decompress first". */
enum aorta_status zread_open(const char *path, struct zread **out, struct aorta_error *e);
/* Up to n bytes of (decompressed) data: returns the count, 0 at the end,
 * -1 on error with e filled. */
ssize_t zread_read(struct zread *z, void *buf, size_t n, struct aorta_error *e);
/* The first n (decompressed) bytes, NUL-terminated, without consuming them:
 * the next zread_read calls hand them out again.  Call it before any
 * zread_read; *buf stays valid until zread_close.  So a format is sniffed
 * from the bytes the reader then reads, and a pipe is opened once. */
enum aorta_status zread_peek(struct zread *z, size_t n, const char **buf, size_t *len,
			     struct aorta_error *e);
/* Bounds the decompressed bytes zread_read hands out: past max_bytes it
 * fails with an error naming the limit and `what` ("a Kineto trace"). */
void zread_set_limit(struct zread *z, unsigned long long max_bytes, const char *what);
/* zread_set_limit, and a plain (uncompressed) regular file already larger
 * than max_bytes is that error now, before a byte more is read.  Either way
 * zread_read never hands out more than max_bytes + 1 bytes, so a reader
 * that holds what it reads holds at most that much. */
enum aorta_status zread_limit(struct zread *z, unsigned long long max_bytes, const char *what,
			      struct aorta_error *e);
const char *zread_path(const struct zread *z);
int zread_is_gzip(const struct zread *z);
const char *zread_inflater(const struct zread *z); /* "none", "zlib", "isa-l" */
void zread_close(struct zread *z);

/* The rest of an open stream, to its end, in one malloc'd, NUL-terminated
 * buffer (the caller frees *buf); a limit set by zread_set_limit is an
 * error naming it.  On error *buf is NULL and the stream stays open. */
enum aorta_status zread_rest(struct zread *z, char **buf, size_t *len, struct aorta_error *e);

/* The whole (decompressed) file in one malloc'd, NUL-terminated buffer;
 * the caller frees *buf.  For small formats and sniffing; max_bytes bounds
 * it (0: no bound) and reading stops quietly there. */
enum aorta_status zread_all(const char *path, size_t max_bytes, char **buf, size_t *len,
			    struct aorta_error *e);

/* As zread_all, but a file larger than cap bytes is an error naming the
 * cap and `what` ("hwq results") instead of a quiet cut. */
enum aorta_status zread_whole(const char *path, size_t cap, const char *what, char **buf,
			      size_t *len, struct aorta_error *e);

#endif
