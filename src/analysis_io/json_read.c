/*
 * json_read.c - a saved analysis (`aorta analyze --json`, schema
 * aorta.analysis/1 or /2) read back into struct analysis by walking the
 * record tables of fields.c, checked for types and values.
 *
 * Every field the writer writes and struct analysis holds is read; each
 * must have the writer's type (a figure a number, or null where the writer
 * writes null for "not applicable"; a count a non-negative integer); then
 * check.c checks the values: each field's range as its table line declares
 * it (times and bandwidths >= 0, shares in [0, 1], ranks >= 0) and each
 * record's rules (exposed <= communication, a step ends after it starts, a
 * late rank or straggler is one of the ranks, a what-if's gain is its
 * replayed step less the step if fixed).  The first violation is
 * AORTA_EINPUT naming the file,
 * the byte offset of the value and its path ("ranks[2].steps[0].compute_ms:
 * expected a number, got a string"), so a hand-edited or damaged file can
 * never become a NaN that compares as "better".  Derived fields (ratios,
 * step_stats, across_ranks.figures) are recomputed by whoever needs them;
 * unknown fields are ignored (a later minor version may add some).
 *
 * Times.  The writer prints milliseconds with six decimals from integer
 * nanoseconds; the reader takes the digits as they are (jdoc.c), so ns come
 * back exactly even where a double would not hold them (8.8e9 ms).
 */
#include "analysis_io/analysis_io.h"
#include "analysis_io/fields.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/zread.h"

#define MAX_ANALYSIS (1u << 30)

int io_fail(struct rd *r, const struct jnode *at, const char *key, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!r->failed && r->writing)
		aorta_fail(r->e, AORTA_EINTERNAL, r->path, 0, -1,
			   "not written: %s%s%s: %s (the analysis breaks its own rules, docs/formats.md; a bug "
			   "in aorta: please report it with the inputs)", r->where, r->where[0] && key ? "." : "",
			   key ? key : "", msg);
	else if (!r->failed)
		aorta_fail(r->e, AORTA_EINPUT, r->path, 0, (long long)(at ? at->off : r->obj_off),
			   "%s%s%s: %s (not a valid aorta analysis)", r->where, r->where[0] && key ? "." : "",
			   key ? key : "", msg);
	r->failed = 1;
	return -1;
}

static const char *type_name(const struct jnode *v)
{
	static const char *const n[] = { "null", "false", "true", "an integer", "a number", "a string",
					 "an object", "an array" };
	return v ? n[v->t] : "nothing";
}

/* An integer field within its member's type (its range is check.c's). */
static int read_int(struct rd *r, const struct jnode *v, const struct field *f, void *p)
{
	long long lo = f->type == FT_U64 ? 0 : f->type == FT_INT || f->type == FT_I32 ? INT_MIN : LLONG_MIN;
	long long hi = f->type == FT_INT || f->type == FT_I32 ? INT_MAX : LLONG_MAX;
	if (v->t != JN_INT)
		return io_fail(r, v, f->key, "expected an integer, got %s", v->t == JN_DBL ? "a fraction" : type_name(v));
	if (v->i < lo || v->i > hi)
		return io_fail(r, v, f->key, "expected an integer %s %lld, got %lld", v->i < lo ? ">=" : "<=",
			       v->i < lo ? lo : hi, v->i);
	if (f->type == FT_INT)
		*(int *)p = (int)v->i;
	else if (f->type == FT_I32)
		*(int32_t *)p = (int32_t)v->i;
	else if (f->type == FT_U64)
		*(uint64_t *)p = (uint64_t)v->i;
	else
		*(int64_t *)p = v->i;
	return 0;
}

/* A finite number (its range is check.c's). */
static int read_number(struct rd *r, const struct jnode *v, const char *key, double *out)
{
	if (v->t != JN_INT && v->t != JN_DBL)
		return io_fail(r, v, key, "expected a number, got %s", type_name(v));
	if (!isfinite(v->d))
		return io_fail(r, v, key, "expected a number, got a non-finite number");
	*out = v->d;
	return 0;
}

/* Milliseconds as written (six decimals) back to ns: any value an int64 of
 * ns holds within ANALYSIS_MAX_NS (its range is check.c's). */
static int read_ms(struct rd *r, const struct jnode *v, const char *key, int64_t *ns)
{
	double d = 0;
	if (read_number(r, v, key, &d))
		return -1;
	if (fabs(d) > (double)ANALYSIS_MAX_NS / 1e6 ||
	    (v->ms_exact && (v->ns > ANALYSIS_MAX_NS || v->ns < -ANALYSIS_MAX_NS)))
		return io_fail(r, v, key, "%g ms is out of range (at most %.0f ms)", v->d, (double)ANALYSIS_MAX_NS / 1e6);
	*ns = jdoc_ns(v);
	return 0;
}

static int read_figs(struct rd *r, const struct jnode *obj, struct ov_figures *x)
{
	for (size_t k = 0; k < NFIGURES; k++) {
		const struct jnode *v = jdoc_get(obj, FIGURES[k].key);
		if (!v)
			return io_fail(r, NULL, FIGURES[k].key, "missing");
		if (read_ms(r, v, FIGURES[k].key, (int64_t *)((char *)x + FIGURES[k].off)))
			return -1;
	}
	return 0;
}

static int read_string(struct rd *r, const struct jnode *v, const struct field *f, void *p)
{
	if (v->t != JN_STR)
		return io_fail(r, v, f->key, "expected a string, got %s", type_name(v));
	if (f->type == FT_STR) {
		free(*(char **)p);
		*(char **)p = xstrdup(v->s);
	} else if (f->type == FT_CHARS) {
		snprintf(p, f->size, "%s", v->s);
	} else if (f->type == FT_SSTR) {
		const char *const *n = f->names;
		while (*n && strcmp(*n, v->s))
			n++;
		*(const char **)p = *n ? *n : f->names[0];
	} else { /* FT_ENUM */
		int i = 0;
		while (i < f->enum_count && strcmp(f->enum_name(i), v->s))
			i++;
		if (i == f->enum_count && !(f->flags & FF_LAX))
			return io_fail(r, v, f->key, "unknown %s '%s'", f->key, v->s);
		*(uint8_t *)p = (uint8_t)(i == f->enum_count ? f->dflt_i : i);
	}
	return 0;
}

static int read_arr(struct rd *r, const struct jnode *v, const struct field *f, void *rec, struct io_ctx *c)
{
	return io_read_arr(r, v, f->key, f->sub, (void **)((char *)rec + f->off), (size_t *)((char *)rec + f->cnt),
			   c);
}

int io_read_arr(struct rd *r, const struct jnode *v, const char *key, const struct record *rc, void **out,
		size_t *cnt, struct io_ctx *c)
{
	char **pp = (char **)out;
	size_t len = strlen(r->where), off = r->obj_off;
	if (v->t != JN_ARR)
		return io_fail(r, v, key, "expected an array, got %s", type_name(v));
	*pp = xcalloc(v->n ? v->n : 1, rc->size);
	for (size_t k = 0; k < v->n && !r->failed; k++) {
		char *el = *pp + k * rc->size;
		(*cnt)++;
		snprintf(r->where + len, sizeof(r->where) - len, "%s%s[%zu]", len ? "." : "", key, k);
		r->obj_off = v->v[k]->off;
		if (rc->init)
			rc->init(el, c, k);
		if (v->v[k]->t != JN_OBJ)
			io_fail(r, v->v[k], NULL, "expected an object, got %s", type_name(v->v[k]));
		else
			io_read_fields(r, v->v[k], rc, el, c);
	}
	r->where[len] = '\0';
	r->obj_off = off;
	return r->failed ? -1 : 0;
}

int io_read_obj(struct rd *r, const struct jnode *v, const char *key, const struct record *rc, void *rec,
		struct io_ctx *c)
{
	size_t len = strlen(r->where), off = r->obj_off;
	if (v->t != JN_OBJ)
		return io_fail(r, v, key, "expected an object, got %s", type_name(v));
	snprintf(r->where + len, sizeof(r->where) - len, "%s%s", len ? "." : "", key);
	r->obj_off = v->off;
	io_read_fields(r, v, rc, rec, c);
	r->where[len] = '\0';
	r->obj_off = off;
	return r->failed ? -1 : 0;
}

static const char *expects(const struct field *f)
{
	switch (f->type) {
	case FT_INT: case FT_I32: case FT_I64: case FT_U64:
		return "an integer";
	case FT_MS: case FT_MSF: case FT_NUM:
		return "a number";
	case FT_BOOL:
		return "true or false";
	case FT_OBJ:
		return "an object";
	case FT_ARR:
		return "an array";
	default:
		return "a string";
	}
}

static int read_field(struct rd *r, const struct jnode *obj, const struct field *f, void *rec, struct io_ctx *c)
{
	void *p = (char *)rec + f->off;
	const struct jnode *v = f->key ? jdoc_get(obj, f->key) : NULL;
	if (f->type == FT_HOOK)
		return f->get ? f->get(r, v, f->key, p, c) : 0;
	if (f->type == FT_FIGS)
		return read_figs(r, obj, p);
	if (f->type == FT_PACK)
		return 0;
	/* required where written (a `when` says where) */
	int req = (f->flags & FF_REQ) && (!f->when || f->when(rec, c));
	if (!v)
		return req ? io_fail(r, NULL, f->key, "missing") : 0;
	if (v->t == JN_NULL) {
		if (f->type == FT_NUM && req)
			return io_fail(r, v, f->key, "expected a number, got null");
		if (f->type == FT_NUM)
			*(double *)p = NAN;
		else if (!(f->flags & (FF_XR | FF_NULLOK)))
			return io_fail(r, v, f->key, "expected %s, got null", expects(f));
		return 0;
	}
	switch (f->type) {
	case FT_INT: case FT_I32: case FT_I64: case FT_U64:
		return read_int(r, v, f, p);
	case FT_MS: case FT_MSF:
		return read_ms(r, v, f->key, p);
	case FT_NUM: {
		double d = 0;
		if (read_number(r, v, f->key, &d))
			return -1;
		*(double *)p = d / (f->scale ? f->scale : 1);
		return 0;
	}
	case FT_BOOL:
		if (v->t != JN_TRUE && v->t != JN_FALSE)
			return io_fail(r, v, f->key, "expected true or false, got %s", type_name(v));
		*(int *)p = v->t == JN_TRUE;
		return 0;
	case FT_OBJ:
		return io_read_obj(r, v, f->key, f->sub, p, c);
	case FT_ARR:
		return read_arr(r, v, f, rec, c);
	default:
		return read_string(r, v, f, p);
	}
}

int io_read_fields(struct rd *r, const struct jnode *obj, const struct record *rc, void *rec, struct io_ctx *c)
{
	for (size_t k = 0; k < rc->n && !r->failed; k++)
		read_field(r, obj, &rc->f[k], rec, c);
	for (size_t k = 0; k < rc->n; k++) /* strings are never NULL after reading */
		if (rc->f[k].type == FT_STR && !*(char **)((char *)rec + rc->f[k].off))
			*(char **)((char *)rec + rc->f[k].off) = xstrdup("");
	return r->failed ? -1 : 0;
}

/* steps_total: summed again from the steps with the file's skip (the step
 * windows tile, so this is what the writer computed); only its
 * per-collective figures are taken from the file (steps do not carry them) */
static void resum_steps(struct analysis *a)
{
	struct ov_figures *file = xcalloc(a->n ? a->n : 1, sizeof(*file));
	for (size_t i = 0; i < a->n; i++)
		file[i] = a->r[i].steps_sum;
	analysis_set_skip(a, a->opts.skip_steps);
	for (size_t i = 0; i < a->n; i++) {
		memcpy(a->r[i].steps_sum.coll_ns, file[i].coll_ns, sizeof(file[i].coll_ns));
		memcpy(a->r[i].steps_sum.coll_exposed_ns, file[i].coll_exposed_ns, sizeof(file[i].coll_exposed_ns));
	}
	free(file);
}

enum aorta_status analysis_json_parse(const char *path, const char *text, struct analysis *a,
				      struct aorta_error *e)
{
	char err[512] = "";
	size_t off = 0;
	struct rd r = { .path = path, .e = e };

	memset(a, 0, sizeof(*a));
	REC_ANALYSIS.init(a, NULL, 0);
	struct jnode *root = jdoc_parse(text, strlen(text), err, sizeof(err), &off);
	if (!root)
		return aorta_fail(e, AORTA_EINPUT, path, 0, (long long)off, "invalid analysis JSON: %s", err);
	struct io_ctx c = { .a = a, .wa = a, .root = root };
	if (root->t != JN_OBJ)
		io_fail(&r, root, NULL, "expected an object at the top, got %s", type_name(root));
	else if (!io_read_fields(&r, root, &REC_ANALYSIS, a, &c) && !io_check_fields(&r, root, &REC_ANALYSIS, a, &c))
		resum_steps(a);
	jdoc_free(root);
	if (r.failed) {
		analysis_free(a);
		return AORTA_EINPUT;
	}
	return AORTA_OK;
}

enum aorta_status analysis_json_read(const char *path, struct analysis *a, struct aorta_error *e)
{
	char *buf = NULL;
	size_t len = 0;
	memset(a, 0, sizeof(*a));
	a->late_rank = -1;
	enum aorta_status s = zread_all(path, MAX_ANALYSIS, &buf, &len, e);
	if (s)
		return s;
	const char *nul = memchr(buf, '\0', len);
	if (nul) {
		long long at = (long long)(nul - buf);
		free(buf);
		return aorta_fail(e, AORTA_EINPUT, path, 0, at, "invalid analysis JSON: a NUL byte");
	}
	s = analysis_json_parse(path, buf, a, e);
	free(buf);
	return s;
}
