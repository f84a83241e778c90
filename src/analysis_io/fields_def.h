/*
 * fields_def.h - the shorthands the record tables are written with
 * (fields.c, fields_fr.c, fields_whatif.c only: the names are short).
 */
#ifndef AORTA_ANALYSIS_IO_FIELDS_DEF_H
#define AORTA_ANALYSIS_IO_FIELDS_DEF_H

#define N(t) (sizeof(t) / sizeof(t[0]))
#define F(k, ty, fl, st, m) { .key = k, .type = ty, .flags = fl, .off = offsetof(st, m) }
#define FNUM(k, fl, st, m, d) { .key = k, .type = FT_NUM, .flags = fl, .off = offsetof(st, m), .dec = d }
#define FOBJ(k, fl, st, m, s) { .key = k, .type = FT_OBJ, .flags = fl, .off = offsetof(st, m), .sub = &s }
#define FHERE(k, s) { .key = k, .type = FT_OBJ, .off = 0, .sub = &s }
#define FARR(k, fl, st, m, c, s) \
	{ .key = k, .type = FT_ARR, .flags = fl, .off = offsetof(st, m), .cnt = offsetof(st, c), .sub = &s }
#define FHOOK(k, fl, p, g) { .key = k, .type = FT_HOOK, .flags = fl, .put = p, .get = g }
#define FHOOKC(k, fl, p, g, c) { .key = k, .type = FT_HOOK, .flags = fl, .put = p, .get = g, .chk = c }
#define FPACK(st, m) { .key = NULL, .type = FT_PACK, .off = offsetof(st, m), .size = sizeof(((st *)0)->m) }
/* a string member that may be NULL (io_put_nstr, io_get_nstr) */
#define FNSTR(k, st, m) { .key = k, .type = FT_HOOK, .off = offsetof(st, m), .put = io_put_nstr, .get = io_get_nstr }
#define REC(nm, st, tab, in, ck) { nm, sizeof(st), tab, N(tab), in, ck }

#endif
