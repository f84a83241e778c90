/*
 * jdoc.c - a JSON document as a tree whose every value knows its byte
 * offset, built from yajl's event parser (yajl's own tree keeps no
 * offsets), so the analysis reader's errors can say where in the file a
 * bad value is.  An analysis is small (figures per rank and step, no
 * spans), so a tree is fine; each node is one allocation.
 */
#include "analysis_io/fields.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#define MAX_DEPTH 64

struct bld {
	yajl_handle h;
	struct jnode *root;
	struct jnode *stack[MAX_DEPTH];
	int depth;
	char *key;              /* pending member key of the object on top */
	int too_deep;
};

static struct jnode *add(struct bld *b, uint8_t t)
{
	struct jnode *n = xcalloc(1, sizeof(*n));
	n->t = t;
	n->off = yajl_get_bytes_consumed(b->h);
	if (!b->depth) {
		if (!b->root)
			b->root = n;
		else
			jdoc_free(n); /* yajl refuses a second top-level value */
		return n;
	}
	struct jnode *p = b->stack[b->depth - 1];
	GROW(p->v, p->cap, p->n + 1);
	if (p->t == JN_OBJ) {
		p->keys = xrealloc(p->keys, p->cap * sizeof(*p->keys));
		p->keys[p->n] = b->key ? b->key : xstrdup("");
		b->key = NULL;
	}
	p->v[p->n++] = n;
	return n;
}

static int cb_null(void *ctx)
{
	add(ctx, JN_NULL);
	return 1;
}

static int cb_bool(void *ctx, int v)
{
	add(ctx, v ? JN_TRUE : JN_FALSE);
	return 1;
}

/* Milliseconds as the writer prints them ([-]digits[.up to six digits])
 * to integer ns exactly; 0 when the text is in another form (exponent,
 * more decimals, out of range), then ns comes from the double. */
static int exact_ns(const char *s, size_t len, long long *ns)
{
	size_t i = 0, dig = 0;
	int neg = 0;
	unsigned long long v = 0;
	if (i < len && s[i] == '-')
		neg = 1, i++;
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++, dig++)
		v = v * 10 + (unsigned long long)(s[i] - '0');
	if (!dig || dig > 13) /* 13 digits of ms and 6 decimals: below 2^64 */
		return 0;
	size_t frac = 0;
	if (i < len && s[i] == '.')
		for (i++; i < len && s[i] >= '0' && s[i] <= '9' && frac < 7; i++, frac++)
			v = v * 10 + (unsigned long long)(s[i] - '0');
	if (i != len || frac > 6)
		return 0;
	for (; frac < 6; frac++)
		v *= 10;
	if (v > (unsigned long long)LLONG_MAX)
		return 0;
	*ns = neg ? -(long long)v : (long long)v;
	return 1;
}

/* Numbers come as text: an integer when strtoll takes all of it, else a
 * double; either may also be exact milliseconds (exact_ns). */
static int cb_num(void *ctx, const char *s, size_t len)
{
	char buf[64], *end;
	if (len >= sizeof(buf))
		return 0;
	memcpy(buf, s, len);
	buf[len] = '\0';
	struct jnode *n = add(ctx, JN_DBL);
	errno = 0;
	long long i = strtoll(buf, &end, 10);
	if (!*end && errno != ERANGE) {
		n->t = JN_INT;
		n->i = i;
		n->d = (double)i;
	} else {
		n->d = strtod(buf, NULL);
	}
	n->ms_exact = exact_ns(buf, len, &n->ns);
	return 1;
}

static int cb_str(void *ctx, const unsigned char *s, size_t len)
{
	struct jnode *n = add(ctx, JN_STR);
	n->s = xmalloc(len + 1);
	memcpy(n->s, s, len);
	n->s[len] = '\0';
	return 1;
}

static int open_(struct bld *b, uint8_t t)
{
	if (b->depth == MAX_DEPTH) {
		b->too_deep = 1;
		return 0;
	}
	b->stack[b->depth] = add(b, t);
	b->depth++;
	return 1;
}

static int cb_map(void *ctx)
{
	return open_(ctx, JN_OBJ);
}

static int cb_arr(void *ctx)
{
	return open_(ctx, JN_ARR);
}

static int cb_close(void *ctx)
{
	((struct bld *)ctx)->depth--;
	return 1;
}

static int cb_key(void *ctx, const unsigned char *s, size_t len)
{
	struct bld *b = ctx;
	free(b->key);
	b->key = xmalloc(len + 1);
	memcpy(b->key, s, len);
	b->key[len] = '\0';
	return 1;
}

static const yajl_callbacks CB = { cb_null, cb_bool, NULL, NULL, cb_num, cb_str, cb_map, cb_key,
				   cb_close, cb_arr, cb_close };

struct jnode *jdoc_parse(const char *text, size_t len, char *err, size_t errn, size_t *off)
{
	struct bld b = { 0 };
	b.h = yajl_alloc(&CB, NULL, &b);
	yajl_status s = yajl_parse(b.h, (const unsigned char *)text, len);
	if (s == yajl_status_ok)
		s = yajl_complete_parse(b.h);
	*off = yajl_get_bytes_consumed(b.h);
	if (s != yajl_status_ok) {
		if (b.too_deep) {
			snprintf(err, errn, "nested deeper than %d levels", MAX_DEPTH);
		} else {
			unsigned char *m = yajl_get_error(b.h, 0, (const unsigned char *)text, len);
			snprintf(err, errn, "%s", (const char *)m);
			yajl_free_error(b.h, m);
		}
		for (char *p = err; *p; p++)
			if (*p == '\n')
				*p = ' ';
		jdoc_free(b.root);
		b.root = NULL;
	}
	free(b.key);
	yajl_free(b.h);
	return b.root;
}

void jdoc_free(struct jnode *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->n; i++) {
		jdoc_free(n->v[i]);
		if (n->keys)
			free(n->keys[i]);
	}
	free(n->v);
	free(n->keys);
	free(n->s);
	free(n);
}

const struct jnode *jdoc_get(const struct jnode *o, const char *key)
{
	if (!o || o->t != JN_OBJ)
		return NULL;
	for (size_t i = 0; i < o->n; i++)
		if (!strcmp(o->keys[i], key))
			return o->v[i];
	return NULL;
}
