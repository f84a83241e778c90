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

enum aorta_status zread_open(const char *path, struct zread **out, struct aorta_error *e);
/* Up to n bytes of (decompressed) data: returns the count, 0 at the end,
 * -1 on error with e filled. */
ssize_t zread_read(struct zread *z, void *buf, size_t n, struct aorta_error *e);
int zread_is_gzip(const struct zread *z);
const char *zread_inflater(const struct zread *z); /* "none", "zlib", "isa-l" */
void zread_close(struct zread *z);

/* The whole (decompressed) file in one malloc'd, NUL-terminated buffer;
 * the caller frees *buf.  For small formats and sniffing; max_bytes bounds
 * it (0: no bound) and reading stops quietly there. */
enum aorta_status zread_all(const char *path, size_t max_bytes, char **buf, size_t *len,
			    struct aorta_error *e);

#endif
