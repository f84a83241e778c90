/*
 * json_write.c - the analysis JSON (schema aorta.analysis/2) written by
 * walking the record tables of fields.c: one member per field, in table
 * order.  Times are integer ns inside and milliseconds with six decimals
 * in the file (exact), so the reader restores them bit for bit.
 */
#include "analysis_io/analysis_io.h"
#include "analysis_io/fields.h"

#include <math.h>
#include <string.h>

static int64_t i64_at(const void *rec, const struct field *f)
{
	const char *p = (const char *)rec + f->off;
	switch (f->type) {
	case FT_INT:
		return *(const int *)p;
	case FT_I32:
		return *(const int32_t *)p;
	case FT_U64:
		return (int64_t)*(const uint64_t *)p;
	default:
		return *(const int64_t *)p;
	}
}

/* Whether a field is written as null (cross-rank without a shared clock,
 * or a "none" integer). */
static int as_null(const struct field *f, const void *rec, const struct io_ctx *c)
{
	if ((f->flags & FF_XR) && !io_xr(c))
		return 1;
	if (!(f->flags & FF_NEGNULL))
		return 0;
	int64_t v = i64_at(rec, f);
	return f->type == FT_I64 ? v == INT64_MIN : v < 0;
}

static int is_zero(const struct field *f, const void *rec)
{
	const char *p = (const char *)rec + f->off;
	if (f->type == FT_STR)
		return !*(char *const *)p || !**(char *const *)p;
	if (f->type == FT_ARR)
		return !*(const size_t *)((const char *)rec + f->cnt);
	return !i64_at(rec, f);
}

static void put_arr(struct jw *w, const struct field *f, const void *rec, const struct io_ctx *c)
{
	const char *base = *(const char *const *)((const char *)rec + f->off);
	size_t n = *(const size_t *)((const char *)rec + f->cnt);
	struct io_ctx cc = *c;
	jw_arr(w, f->key);
	if ((f->flags & FF_XR) && !io_xr(c))
		n = 0; /* no shared clock: an empty list */
	for (size_t k = 0; k < n; k++) {
		const void *el = base + k * f->sub->size;
		if (f->sub == &REC_RANK) {
			cc.r = el;
			cc.ri = k;
		}
		jw_obj(w, NULL);
		io_write_fields(w, f->sub, el, &cc);
		jw_obj_end(w);
	}
	jw_arr_end(w);
}

static void put_field(struct jw *w, const struct field *f, const void *rec, const struct io_ctx *c)
{
	const char *p = (const char *)rec + f->off;
	if (as_null(f, rec, c) && f->type != FT_ARR && f->type != FT_NUM) {
		jw_null(w, f->key);
		return;
	}
	switch (f->type) {
	case FT_INT: case FT_I32: case FT_I64:
		jw_int(w, f->key, i64_at(rec, f));
		break;
	case FT_U64:
		jw_uint(w, f->key, *(const uint64_t *)p);
		break;
	case FT_MS:
		jw_ms(w, f->key, *(const int64_t *)p);
		break;
	case FT_MSF:
		jw_num(w, f->key, (double)*(const int64_t *)p / 1e6, 6);
		break;
	case FT_NUM:
		jw_num(w, f->key, as_null(f, rec, c) ? NAN : *(const double *)p * (f->scale ? f->scale : 1), f->dec);
		break;
	case FT_BOOL:
		jw_bool(w, f->key, *(const int *)p);
		break;
	case FT_STR:
		jw_str(w, f->key, *(char *const *)p);
		break;
	case FT_SSTR:
		jw_str(w, f->key, *(const char *const *)p ? *(const char *const *)p : f->names[0]);
		break;
	case FT_CHARS:
		if (*p)
			jw_str(w, f->key, p);
		else
			jw_null(w, f->key);
		break;
	case FT_ENUM:
		jw_str(w, f->key, f->enum_name(*(const uint8_t *)p));
		break;
	case FT_FIGS:
		for (size_t k = 0; k < NFIGURES; k++)
			jw_ms(w, FIGURES[k].key, fig_value(&FIGURES[k], (const struct ov_figures *)p));
		break;
	case FT_OBJ:
		jw_obj(w, f->key);
		io_write_fields(w, f->sub, p, c);
		jw_obj_end(w);
		break;
	case FT_ARR:
		put_arr(w, f, rec, c);
		break;
	case FT_HOOK:
		if (f->put)
			f->put(w, f->key, p, c); /* the member at off (0: the record) */
		break;
	default: /* FT_PACK: not in the JSON */
		break;
	}
}

void io_write_fields(struct jw *w, const struct record *rc, const void *rec, const struct io_ctx *c)
{
	for (size_t k = 0; k < rc->n; k++) {
		const struct field *f = &rc->f[k];
		if ((f->flags & FF_XRONLY) && !io_xr(c))
			continue;
		if ((f->flags & FF_NZ) && is_zero(f, rec))
			continue;
		if (f->when && !f->when(rec, c))
			continue;
		put_field(w, f, rec, c);
	}
}

void analysis_write_json(FILE *f, const struct analysis *a)
{
	struct jw w;
	struct io_ctx c = { .a = a };
	jw_init(&w, f, 1);
	jw_obj(&w, NULL);
	io_write_fields(&w, &REC_ANALYSIS, a, &c);
	jw_obj_end(&w);
}

enum aorta_status analysis_save_json(const struct analysis *a, const char *path, struct aorta_error *e)
{
	struct outfile o;
	enum aorta_status s = analysis_check(a, path, e);
	if (s)
		return s;
	if ((s = out_open(&o, path, e)))
		return s;
	analysis_write_json(o.f, a);
	return out_commit(&o, e);
}
