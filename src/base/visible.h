/*
 * visible.h - text from an input made safe to show: every byte a terminal
 * or a page would act on instead of showing it is written as visible text.
 *
 *  - C0 control characters but tab and newline (ESC starts the sequences
 *    that clear a screen, set a window title or write the clipboard), DEL,
 *    and bytes that are not UTF-8 (0x9b alone is CSI on some terminals):
 *    \xNN;
 *  - C1 control characters (U+0080..U+009F) and the bidirectional
 *    overrides and isolates (U+202A..U+202E, U+2066..U+2069), which reorder
 *    what is shown: \uNNNN;
 *  - everything else as it is (UTF-8 kept).
 *
 * One definition for every place (base/termsafe.c wraps standard output
 * and error with it; the HTML pages and the charts escape with it), inline
 * so the plot plug-in has it without calling into the binary.  Thread-safe
 * (no state but the caller's).
 */
#ifndef AORTA_VISIBLE_H
#define AORTA_VISIBLE_H

#include <stddef.h>
#include <stdio.h>

typedef void (*vis_emit_fn)(void *ctx, const char *s, size_t n);

/* The UTF-8 character at b[0..n): its length (2-4) and code point, 0 when
 * b[0] starts none (an invalid byte), -1 when it is cut short at n. */
static inline int vis_utf8(const unsigned char *b, size_t n, unsigned *cp)
{
	unsigned c = b[0];
	int len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
	if (!len)
		return 0;
	/* the second byte's range excludes overlong forms, surrogates, > U+10FFFF */
	unsigned lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80, hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
	unsigned v = c & (len == 2 ? 0x1f : len == 3 ? 0x0f : 0x07);
	for (int k = 1; k < len; k++) {
		if ((size_t)k >= n)
			return -1;
		unsigned x = b[k];
		if (k == 1 ? x < lo || x > hi : (x & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (x & 0x3f);
	}
	*cp = v;
	return len;
}

/* Emits b[0..n) made visible.  Returns the bytes consumed: all of them,
 * but for a UTF-8 character cut at the end when !final (the caller keeps
 * it for the next call). */
static inline size_t vis_run(const unsigned char *b, size_t n, int final, vis_emit_fn emit, void *ctx)
{
	size_t i = 0, run = 0; /* b[run..i) passes as it is */
	char esc[16];
	while (i < n) {
		unsigned c = b[i], cp = 0;
		int len = 1, show = 1;
		if (c < 0x20 || c == 0x7f) {
			show = c == '\t' || c == '\n';
		} else if (c >= 0x80) {
			len = vis_utf8(b + i, n - i, &cp);
			if (len < 0 && !final)
				break;
			show = len > 0 && !(cp <= 0x9f || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069));
			if (len <= 0)
				len = 1;
		}
		if (!show) {
			if (i > run)
				emit(ctx, (const char *)b + run, i - run);
			int m = c >= 0x80 && len > 1 ? snprintf(esc, sizeof(esc), "\\u%04x", cp)
						     : snprintf(esc, sizeof(esc), "\\x%02x", c);
			emit(ctx, esc, (size_t)m);
			run = i + (size_t)len;
		}
		i += (size_t)len;
	}
	if (i > run)
		emit(ctx, (const char *)b + run, i - run);
	return i;
}

struct vis_buf { char *p; size_t cap, n; int cut; };

static inline void vis_buf_emit(void *ctx, const char *s, size_t n)
{
	struct vis_buf *v = ctx;
	if (v->cut || v->n + n + 1 > v->cap) {
		v->cut = 1; /* never half an escape or a character */
		return;
	}
	for (size_t k = 0; k < n; k++)
		v->p[v->n++] = s[k];
	v->p[v->n] = '\0';
}

/* s made visible into out[0..cap) (NUL-terminated; cut at a whole escape
 * or character when it does not fit).  Returns out. */
static inline const char *vis_str(char *out, size_t cap, const char *s)
{
	struct vis_buf v = { out, cap, 0, 0 };
	if (cap)
		out[0] = '\0';
	size_t n = 0;
	while (s[n])
		n++;
	vis_run((const unsigned char *)s, n, 1, vis_buf_emit, &v);
	return out;
}

#endif
