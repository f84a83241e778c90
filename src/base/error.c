/*
 * error.c - status records, diagnostics and checked allocation.
 */
#include "base/error.h"

#include <errno.h>

#include <stdlib.h>
#include <string.h>

int aorta_quiet;
int aorta_strict;

enum aorta_status aorta_fail(struct aorta_error *e, enum aorta_status code,
			     const char *path, long long line, long long offset,
			     const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return code;
	e->code = code;
	snprintf(e->path, sizeof(e->path), "%s", path ? path : "");
	e->line = line;
	e->offset = offset;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return code;
}

/* One line, written with one call under stderr's lock, so lines of
 * parallel readers never interleave ("aorta: aorta: read ..."). */
static void emit(const char *prefix, const char *fmt, va_list ap)
{
	char small[1024], *line = small;
	va_list cp;

	va_copy(cp, ap);
	int n = vsnprintf(small, sizeof(small), fmt, cp);
	va_end(cp);
	if (n >= (int)sizeof(small)) {
		line = malloc((size_t)n + 1);
		if (line)
			vsnprintf(line, (size_t)n + 1, fmt, ap);
		else
			line = small;
	}
	flockfile(stderr);
	fprintf(stderr, "%s%s\n", prefix, line);
	funlockfile(stderr);
	if (line != small)
		free(line);
}

static void emitf(const char *prefix, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void emitf(const char *prefix, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit(prefix, fmt, ap);
	va_end(ap);
}

void aorta_error_print(const struct aorta_error *e)
{
	char where[640] = "", l[32] = "", b[40] = "";

	if (e->path[0])
		snprintf(where, sizeof(where), "'%s': ", e->path);
	if (e->line > 0)
		snprintf(l, sizeof(l), "line %lld: ", e->line);
	if (e->offset >= 0 && e->path[0])
		snprintf(b, sizeof(b), "byte %lld: ", e->offset);
	emitf("aorta: error: ", "%s%s%s%s", where, l, b, e->msg);
}

void aorta_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit("aorta: warning: ", fmt, ap);
	va_end(ap);
}

void aorta_note(const char *fmt, ...)
{
	va_list ap;

	if (aorta_quiet)
		return;
	va_start(ap, fmt);
	emit("aorta: ", fmt, ap);
	va_end(ap);
}

static void oom(size_t n)
{
	fprintf(stderr, "aorta: fatal: out of memory allocating %zu bytes\n", n);
	exit(AORTA_EINTERNAL);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		oom(n);
	return p;
}

void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz ? sz : 1);

	if (!p)
		oom(n * sz);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		oom(n);
	return q;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *s = xmalloc((size_t)(n > 0 ? n : 0) + 1);
	va_start(ap, fmt);
	vsnprintf(s, (size_t)(n > 0 ? n : 0) + 1, fmt, ap);
	va_end(ap);
	return s;
}

char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = xmalloc(n);

	memcpy(d, s, n);
	return d;
}

void grow_array(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t c = *cap;

	if (need <= c)
		return;
	if (c < 16)
		c = 16;
	while (c < need)
		c += c / 2 + 16;
	*p = xrealloc(*p, c * elem);
	*cap = c;
}

int errno_is_resource(int err)
{
	return err == EMFILE || err == ENFILE || err == ENOMEM || err == EFBIG || err == ENOSPC ||
	       err == EDQUOT || err == ENOBUFS;
}

enum aorta_status status_of_errno(int err, enum aorta_status fallback)
{
	return errno_is_resource(err) ? AORTA_EINTERNAL : fallback;
}
