/*
 * output.c - atomic output files and the streaming JSON writer.
 */
#include "base/output.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

long long out_fail_after_bytes = -1;

enum aorta_status out_open(struct outfile *o, const char *path, struct aorta_error *e)
{
	size_t n = strlen(path) + 16;

	memset(o, 0, sizeof(*o));
	o->path = xstrdup(path);
	o->tmp = xmalloc(n);
	snprintf(o->tmp, n, "%s.tmpXXXXXX", path);
	int fd = mkstemp(o->tmp);
	if (fd < 0) {
		enum aorta_status s = aorta_fail(e, AORTA_EINTERNAL, path, 0, -1,
						 "cannot create a temporary file beside it: %s",
						 strerror(errno));
		free(o->path);
		free(o->tmp);
		memset(o, 0, sizeof(*o));
		return s;
	}
	/* mkstemp creates 0600; give the file the mode a plain fopen would */
	mode_t um = umask(0);
	umask(um);
	fchmod(fd, 0666 & ~um);
	o->f = fdopen(fd, "w");
	if (!o->f) {
		close(fd);
		unlink(o->tmp);
		free(o->path);
		free(o->tmp);
		memset(o, 0, sizeof(*o));
		return aorta_fail(e, AORTA_EINTERNAL, path, 0, -1, "cannot open: %s", strerror(errno));
	}
	return AORTA_OK;
}

void out_abort(struct outfile *o)
{
	if (o->f)
		fclose(o->f);
	if (o->tmp)
		unlink(o->tmp);
	free(o->path);
	free(o->tmp);
	memset(o, 0, sizeof(*o));
}

enum aorta_status out_commit(struct outfile *o, struct aorta_error *e)
{
	int bad = fflush(o->f) != 0 || ferror(o->f);
	long long written = ftell(o->f);

	if (out_fail_after_bytes >= 0 && written > out_fail_after_bytes) {
		bad = 1;
		errno = ENOSPC;
	}
	if (bad) {
		int err = errno;
		char path[512];
		snprintf(path, sizeof(path), "%s", o->path);
		out_abort(o);
		return aorta_fail(e, AORTA_EINTERNAL, path, 0, -1, "write failed: %s", strerror(err));
	}
	if (fclose(o->f) != 0) {
		o->f = NULL;
		char path[512];
		int err = errno;
		snprintf(path, sizeof(path), "%s", o->path);
		out_abort(o);
		return aorta_fail(e, AORTA_EINTERNAL, path, 0, -1, "write failed: %s", strerror(err));
	}
	o->f = NULL;
	if (rename(o->tmp, o->path) != 0) {
		char path[512];
		int err = errno;
		snprintf(path, sizeof(path), "%s", o->path);
		out_abort(o);
		return aorta_fail(e, AORTA_EINTERNAL, path, 0, -1, "cannot rename into place: %s",
				  strerror(err));
	}
	free(o->path);
	free(o->tmp);
	memset(o, 0, sizeof(*o));
	return AORTA_OK;
}

/* ---- JSON writer ---------------------------------------------------------- */

void jw_init(struct jw *w, FILE *f, int pretty)
{
	memset(w, 0, sizeof(*w));
	w->f = f;
	w->pretty = pretty;
	w->first[0] = 1;
}

void json_escape(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	while (*p) {
		unsigned char c = *p;
		if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc(c, f);
			p++;
		} else if (c < 0x20) {
			fprintf(f, "\\u%04x", c);
			p++;
		} else if (c < 0x80) {
			fputc(c, f);
			p++;
		} else { /* copy valid UTF-8 sequences, escape stray bytes */
			int n = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
			int ok = n > 0;
			for (int k = 1; ok && k < n; k++)
				ok = (p[k] & 0xc0) == 0x80;
			if (ok) {
				fwrite(p, 1, (size_t)n, f);
				p += n;
			} else {
				fprintf(f, "\\u%04x", c);
				p++;
			}
		}
	}
	fputc('"', f);
}

static void key(struct jw *w, const char *k)
{
	if (!w->first[w->depth])
		fputc(',', w->f);
	w->first[w->depth] = 0;
	if (w->pretty && w->depth > 0) {
		fputc('\n', w->f);
		for (int i = 0; i < w->depth; i++)
			fputs("  ", w->f);
	}
	if (k) {
		json_escape(w->f, k);
		fputs(w->pretty ? ": " : ":", w->f);
	}
}

static void open_(struct jw *w, const char *k, char c)
{
	key(w, k);
	fputc(c, w->f);
	if (w->depth < 63)
		w->depth++;
	w->first[w->depth] = 1;
}

static void close_(struct jw *w, char c)
{
	int empty = w->first[w->depth];
	if (w->depth > 0)
		w->depth--;
	if (w->pretty && !empty) {
		fputc('\n', w->f);
		for (int i = 0; i < w->depth; i++)
			fputs("  ", w->f);
	}
	fputc(c, w->f);
	if (w->depth == 0 && w->pretty)
		fputc('\n', w->f);
}

void jw_obj(struct jw *w, const char *k) { open_(w, k, '{'); }
void jw_obj_end(struct jw *w) { close_(w, '}'); }
void jw_arr(struct jw *w, const char *k) { open_(w, k, '['); }
void jw_arr_end(struct jw *w) { close_(w, ']'); }

void jw_str(struct jw *w, const char *k, const char *v)
{
	key(w, k);
	json_escape(w->f, v ? v : "");
}

void jw_int(struct jw *w, const char *k, long long v)
{
	key(w, k);
	fprintf(w->f, "%lld", v);
}

void jw_uint(struct jw *w, const char *k, unsigned long long v)
{
	key(w, k);
	fprintf(w->f, "%llu", v);
}

void jw_num(struct jw *w, const char *k, double v, int decimals)
{
	key(w, k);
	if (isnan(v) || isinf(v))
		fputs("null", w->f);
	else
		fprintf(w->f, "%.*f", decimals, v);
}

void fprint_ms(FILE *f, int64_t ns)
{
	int neg = ns < 0;
	uint64_t a = neg ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	fprintf(f, "%s%llu.%06llu", neg ? "-" : "", (unsigned long long)(a / 1000000),
		(unsigned long long)(a % 1000000));
}

void jw_ms(struct jw *w, const char *k, int64_t ns)
{
	key(w, k);
	fprint_ms(w->f, ns);
}

void jw_bool(struct jw *w, const char *k, int v)
{
	key(w, k);
	fputs(v ? "true" : "false", w->f);
}

void jw_null(struct jw *w, const char *k)
{
	key(w, k);
	fputs("null", w->f);
}
