/*
 * check.c - the values of a saved analysis, both ways: each field's range,
 * as its line in the record tables of fields.c declares it (flags), and
 * each record's cross-field rules (its check), walked over the struct.
 *
 * Reading (json_read.c), after the types: the JSON object beside each
 * record gives the byte offset of a bad value, and the error is
 * AORTA_EINPUT ("'a.json': byte 5127: ranks[0].steps[1].compute_ms: a
 * negative time, -2.5 ms").  Writing (json_write.c), before a byte is
 * written: the same walk without JSON; a violation is AORTA_EINTERNAL and
 * nothing is written, so analyze never writes an analysis its own reader
 * refuses (a figure wrapped past int64, an ideal step longer than the
 * replayed one).  The walk follows the writer: a field the writer leaves
 * out (FF_XRONLY without a shared clock, a `when` that does not hold) or
 * writes as null (FF_XR, a NaN number, FF_NEGNULL) is not checked, unless
 * FF_REQ asks for it where it is written.
 *
 * Ranges (fields.h): FF_GE0, FF_GEM1, FF_POS, FF_SHARE [0, 1], FF_PCT
 * [0, 100], FF_LE100, FF_RANK (at most 2^24), FF_TIME (a time of a trace,
 * timeline.h's limits), FF_NONEMPTY; every time figure within
 * ANALYSIS_MAX_NS, every other number within ANALYSIS_MAX_NUM.
 *
 * Thread safety: none needed (one walk on one analysis).
 */
#include "analysis_io/analysis_io.h"
#include "analysis_io/fields.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "overlap/whatif.h"

static const struct jnode *at_key(const struct jnode *obj, const char *key)
{
	return obj && key ? jdoc_get(obj, key) : NULL;
}

/* Whether the writer writes f with a value (not left out, not null). */
static int written(const struct field *f, const void *rec, const struct io_ctx *c)
{
	if ((f->flags & (FF_XRONLY | FF_XR)) && !io_xr(c))
		return 0;
	return !f->when || f->when(rec, c);
}

static long long int_at(const struct field *f, const void *p)
{
	switch (f->type) {
	case FT_INT: case FT_BOOL:
		return *(const int *)p;
	case FT_I32:
		return *(const int32_t *)p;
	case FT_U64:
		return *(const uint64_t *)p > (uint64_t)LLONG_MAX ? LLONG_MAX : (long long)*(const uint64_t *)p;
	default:
		return *(const int64_t *)p;
	}
}

static int check_int(struct rd *r, const struct jnode *v, const struct field *f, const void *p)
{
	long long x = int_at(f, p);
	if ((f->flags & FF_NEGNULL) && (f->type == FT_I64 ? x == INT64_MIN : x < 0))
		return 0; /* written as null: none */
	long long lo = LLONG_MIN, hi = LLONG_MAX;
	if (f->type == FT_U64 || (f->flags & (FF_GE0 | FF_SHARE | FF_PCT)))
		lo = 0;
	if (f->flags & FF_GEM1)
		lo = -1;
	if (f->flags & FF_POS)
		lo = 1;
	if (f->flags & FF_RANK)
		hi = ANALYSIS_MAX_RANK;
	if (f->flags & FF_SHARE)
		hi = 1;
	if (f->flags & (FF_PCT | FF_LE100))
		hi = 100;
	if (f->flags & FF_TIME) {
		lo = TRACE_MIN_NS;
		hi = TRACE_MAX_NS;
	}
	if (f->type == FT_BOOL) {
		lo = 0;
		hi = 1;
	}
	if (x < lo)
		return io_fail(r, v, f->key, "expected an integer >= %lld, got %lld", lo, x);
	if (x > hi)
		return io_fail(r, v, f->key, "expected an integer <= %lld, got %lld", hi, x);
	return 0;
}

/* A time figure (ns) against the flags: within ANALYSIS_MAX_NS, >= 0 with
 * FF_GE0. */
static int check_ns(struct rd *r, const struct jnode *v, const char *key, unsigned flags, int64_t ns)
{
	if (ns > ANALYSIS_MAX_NS || ns < -ANALYSIS_MAX_NS)
		return io_fail(r, v, key, "%.6f ms is out of range (at most %.0f ms)", (double)ns / 1e6,
			       (double)ANALYSIS_MAX_NS / 1e6);
	if ((flags & FF_GE0) && ns < 0)
		return io_fail(r, v, key, "a negative time, %g ms", (double)ns / 1e6);
	return 0;
}

static int check_num(struct rd *r, const struct jnode *v, const struct field *f, const void *p)
{
	double x = *(const double *)p * (f->scale ? f->scale : 1);
	if (isnan(x))
		return f->flags & FF_REQ ? io_fail(r, v, f->key, "expected a number, got null (NaN)") : 0;
	double lim = f->flags & FF_MSNUM ? (double)ANALYSIS_MAX_NS / 1e6 : ANALYSIS_MAX_NUM;
	if (!isfinite(x) || fabs(x) > lim)
		return io_fail(r, v, f->key, "%g is out of range (at most %g)", x, lim);
	if ((f->flags & (FF_GE0 | FF_SHARE | FF_PCT)) && x < 0)
		return io_fail(r, v, f->key, "expected a value >= 0, got %g", x);
	if ((f->flags & FF_POS) && x <= 0)
		return io_fail(r, v, f->key, "expected a value > 0, got %g", x);
	if ((f->flags & FF_SHARE) && x > 1)
		return io_fail(r, v, f->key, "expected a share in [0, 1], got %g", x);
	if ((f->flags & FF_PCT) && x > 100)
		return io_fail(r, v, f->key, "expected a percentage in [0, 100], got %g", x);
	if ((f->flags & FF_LE100) && x > 100)
		return io_fail(r, v, f->key, "expected at most 100 %% (of the step), got %g", x);
	return 0;
}

static int check_value(struct rd *r, const struct jnode *v, const struct field *f, const void *p)
{
	switch (f->type) {
	case FT_INT: case FT_I32: case FT_I64: case FT_U64: case FT_BOOL:
		return check_int(r, v, f, p);
	case FT_MS: case FT_MSF:
		return check_ns(r, v, f->key, f->flags, *(const int64_t *)p);
	case FT_NUM:
		return check_num(r, v, f, p);
	case FT_STR:
		if ((f->flags & FF_NONEMPTY) && !(*(char *const *)p && **(char *const *)p))
			return io_fail(r, v, f->key, "expected a text, got an empty one");
		return 0;
	case FT_ENUM:
		if (*(const uint8_t *)p >= f->enum_count)
			return io_fail(r, v, f->key, "no %s numbered %d", f->key, *(const uint8_t *)p);
		return 0;
	default:
		return 0;
	}
}

static int check_arr(struct rd *r, const struct jnode *v, const struct field *f, const void *rec,
		     struct io_ctx *c)
{
	const char *base = *(const char *const *)((const char *)rec + f->off);
	size_t n = *(const size_t *)((const char *)rec + f->cnt);
	struct io_ctx cc = *c;
	for (size_t k = 0; k < n && !r->failed; k++) {
		const void *el = base + k * f->sub->size;
		if (f->sub == &REC_RANK) {
			cc.r = el;
			cc.ri = k;
		}
		io_check_el(r, v, f->key, k, f->sub, el, &cc);
	}
	return r->failed ? -1 : 0;
}

int io_check_fields(struct rd *r, const struct jnode *obj, const struct record *rc, const void *rec,
		    struct io_ctx *c)
{
	for (size_t k = 0; k < rc->n && !r->failed; k++) {
		const struct field *f = &rc->f[k];
		const void *p = (const char *)rec + f->off;
		if (f->type == FT_PACK || !written(f, rec, c))
			continue;
		const struct jnode *v = at_key(obj, f->key);
		switch (f->type) {
		case FT_HOOK:
			if (f->chk)
				f->chk(r, v, f->key, p, c);
			break;
		case FT_FIGS:
			for (size_t q = 0; q < NFIGURES && !r->failed; q++)
				check_ns(r, at_key(obj, FIGURES[q].key), FIGURES[q].key, f->flags,
					 fig_value(&FIGURES[q], p));
			break;
		case FT_OBJ:
			io_check_obj(r, v, f->key, f->sub, p, c);
			break;
		case FT_ARR:
			check_arr(r, v, f, rec, c);
			break;
		default:
			check_value(r, v, f, p);
		}
	}
	if (!r->failed && rc->check)
		rc->check(r, obj, rec, c);
	return r->failed ? -1 : 0;
}

int io_check_obj(struct rd *r, const struct jnode *v, const char *key, const struct record *rc, const void *rec,
		 struct io_ctx *c)
{
	size_t len = strlen(r->where), off = r->obj_off;
	snprintf(r->where + len, sizeof(r->where) - len, "%s%s", len ? "." : "", key);
	if (v)
		r->obj_off = v->off;
	io_check_fields(r, v && v->t == JN_OBJ ? v : NULL, rc, rec, c);
	r->where[len] = '\0';
	r->obj_off = off;
	return r->failed ? -1 : 0;
}

int io_check_el(struct rd *r, const struct jnode *v, const char *key, size_t k, const struct record *rc,
		const void *rec, struct io_ctx *c)
{
	size_t len = strlen(r->where), off = r->obj_off;
	const struct jnode *el = v && v->t == JN_ARR && k < v->n ? v->v[k] : NULL;
	snprintf(r->where + len, sizeof(r->where) - len, "%s%s[%zu]", len ? "." : "", key, k);
	if (el)
		r->obj_off = el->off;
	io_check_fields(r, el && el->t == JN_OBJ ? el : NULL, rc, rec, c);
	r->where[len] = '\0';
	r->obj_off = off;
	return r->failed ? -1 : 0;
}

enum aorta_status analysis_check(const struct analysis *a, const char *path, struct aorta_error *e)
{
	struct rd r = { .path = path, .e = e, .writing = 1 };
	struct io_ctx c = { .a = a };
	whatif_wait((struct analysis *)a); /* its what_if is checked too */
	io_check_fields(&r, NULL, &REC_ANALYSIS, a, &c);
	return r.failed ? AORTA_EINTERNAL : AORTA_OK;
}
