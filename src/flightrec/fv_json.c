/*
 * fv_json.c - a Flight Recorder JSON dump (c10d's _dump_nccl_trace_json /
 * _dump_fr_trace_json, TorchComms' FlightRecorderHook dump_json) read into
 * fv values: yajl's event parser through the offset-keeping tree of
 * analysis_io/jdoc.c, converted node by node (objects become dicts with str
 * keys, arrays lists, integers within int64 FV_INT, other numbers FV_FLOAT).
 * jdoc bounds the nesting (64 levels) and names the byte offset of a
 * syntax error.
 */
#include "flightrec/fv.h"

#include <stdio.h>
#include <string.h>

#include "analysis_io/fields.h"

static struct fv *conv(struct arena *ar, const struct jnode *n);

static struct fv *str_of(struct arena *ar, const char *s, size_t off)
{
	struct fv *v = arena_alloc(ar, sizeof(*v));
	memset(v, 0, sizeof(*v));
	v->t = FV_STR;
	v->off = off;
	v->u.s.n = strlen(s);
	v->u.s.p = arena_strndup(ar, s, v->u.s.n);
	return v;
}

static struct fv *conv(struct arena *ar, const struct jnode *n)
{
	struct fv *v = arena_alloc(ar, sizeof(*v));
	memset(v, 0, sizeof(*v));
	v->off = n->off;
	switch (n->t) {
	case JN_NULL: v->t = FV_NONE; break;
	case JN_FALSE: case JN_TRUE: v->t = FV_BOOL; v->u.i = n->t == JN_TRUE; break;
	case JN_INT: v->t = FV_INT; v->u.i = n->i; break;
	case JN_DBL: v->t = FV_FLOAT; v->u.d = n->d; break;
	case JN_STR:
		v->t = FV_STR;
		v->u.s.n = strlen(n->s);
		v->u.s.p = arena_strndup(ar, n->s, v->u.s.n);
		break;
	default: {
		int obj = n->t == JN_OBJ;
		size_t k = obj ? 2 * n->n : n->n;
		v->t = obj ? FV_DICT : FV_LIST;
		v->u.a.v = arena_alloc(ar, (k ? k : 1) * sizeof(*v->u.a.v));
		v->u.a.n = v->u.a.cap = k;
		for (size_t i = 0; i < n->n; i++) {
			struct fv *c = conv(ar, n->v[i]);
			if (c->t >= FV_LIST && c->depth + 1 > v->depth)
				v->depth = c->depth + 1;
			if (obj) {
				v->u.a.v[2 * i] = str_of(ar, n->keys[i], n->v[i]->off);
				v->u.a.v[2 * i + 1] = c;
			} else {
				v->u.a.v[i] = c;
			}
		}
		break;
	}
	}
	return v;
}

int fv_json(struct fv_doc *d, const char *text, size_t len, char *err, size_t errn, size_t *off)
{
	memset(d, 0, sizeof(*d));
	arena_init(&d->ar);
	*off = 0;
	struct jnode *root = jdoc_parse(text, len, err, errn, off);
	if (!root)
		return -1;
	d->root = conv(&d->ar, root);
	jdoc_free(root);
	return 0;
}
