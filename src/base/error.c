/*
 * error.c - status records, diagnostics and checked allocation.
 */
#include "base/error.h"

#include <stdlib.h>
#include <string.h>

int aorta_quiet;

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

void aorta_error_print(const struct aorta_error *e)
{
	fputs("aorta: error: ", stderr);
	if (e->path[0])
		fprintf(stderr, "'%s': ", e->path);
	if (e->line > 0)
		fprintf(stderr, "line %lld: ", e->line);
	if (e->offset >= 0 && e->path[0])
		fprintf(stderr, "byte %lld: ", e->offset);
	fprintf(stderr, "%s\n", e->msg);
}

void aorta_warn(const char *fmt, ...)
{
	va_list ap;

	fputs("aorta: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void aorta_note(const char *fmt, ...)
{
	va_list ap;

	if (aorta_quiet)
		return;
	fputs("aorta: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
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
