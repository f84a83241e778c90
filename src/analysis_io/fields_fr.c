/*
 * fields_fr.c - the record tables of the analysis's `flight_recorder`
 * object (fields.h; the hang diagnosis of flightrec/fr.h):
 *
 *   flight_recorder = {verdict, kind, dumps, versions, culprits,
 *     ranks_without_dump, groups: [{pg_id, pg_name, ranks, calls,
 *       first_divergent: {collective_seq_id, p2p_seq_id, profiling_name,
 *         missing_ranks, mismatch, ranks_behind, mismatched_ranks, detail,
 *         src, dst} | null,
 *       last_completed_by_rank: {"<rank>": {profiling_name, collective_seq_id,
 *         p2p_seq_id, source, where, frames}}}],
 *     trace_join?}
 *
 * The writer and the schema-checked reader walk these tables like every
 * other record (a saved analysis read back by report and compare keeps its
 * diagnosis); the dumps themselves are not in the file.  Sequence numbers
 * of -1 (none) are null; rank lists are arrays of integers.
 */
#include "analysis_io/analysis_io.h"
#include "analysis_io/fields.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "flightrec/fr.h"

#define N(t) (sizeof(t) / sizeof(t[0]))
#define F(k, ty, fl, st, m) { .key = k, .type = ty, .flags = fl, .off = offsetof(st, m) }
#define REC(nm, st, tab, in, ck) { nm, sizeof(st), tab, N(tab), in, ck }

/* ---- small codecs --------------------------------------------------------------- */

/* A rank list member pair (pointer, count) of a record, by offsets. */
#define RANKS_CODEC(fn, st, m, cnt)                                                                   \
	static void put_##fn(struct jw *w, const char *k, const void *p, const struct io_ctx *c)      \
	{                                                                                             \
		const st *x = p;                                                                      \
		(void)c;                                                                              \
		io_put_ranks(w, k, x->m, x->cnt);                                                        \
	}                                                                                             \
	static int get_##fn(struct rd *r, const struct jnode *v, const char *k, void *p, struct io_ctx *c) \
	{                                                                                             \
		st *x = p;                                                                            \
		(void)c;                                                                              \
		return io_get_ranks(r, v, k, &x->m, &x->cnt);                                            \
	}

RANKS_CODEC(group_ranks, struct fr_group_res, ranks, nranks)
RANKS_CODEC(missing, struct fr_div, missing, nmissing)
RANKS_CODEC(behind, struct fr_div, behind, nbehind)
RANKS_CODEC(odd, struct fr_div, odd, nodd)
RANKS_CODEC(no_dump, struct fr_result, no_dump, nno_dump)

/* int64 members where -1 means none: null */
static void put_seq(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	int64_t v = *(const int64_t *)p;
	(void)c;
	if (v < 0)
		jw_null(w, k);
	else
		jw_int(w, k, v);
}

static int get_seq(struct rd *r, const struct jnode *v, const char *k, void *p, struct io_ctx *c)
{
	(void)c;
	*(int64_t *)p = -1;
	if (!v || v->t == JN_NULL)
		return 0;
	if (v->t != JN_INT || v->i < 0)
		return io_fail(r, v, k, "expected a sequence number (an integer >= 0) or null");
	*(int64_t *)p = v->i;
	return 0;
}

static void put_rank_or_null(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	int32_t v = *(const int32_t *)p;
	(void)c;
	if (v < 0)
		jw_null(w, k);
	else
		jw_int(w, k, v);
}

static int get_rank_or_null(struct rd *r, const struct jnode *v, const char *k, void *p, struct io_ctx *c)
{
	(void)c;
	*(int32_t *)p = -1;
	if (!v || v->t == JN_NULL)
		return 0;
	if (v->t != JN_INT || v->i < 0 || v->i > INT32_MAX)
		return io_fail(r, v, k, "expected a rank or null");
	*(int32_t *)p = (int32_t)v->i;
	return 0;
}

#define FSEQ(k, st, m) { .key = k, .type = FT_HOOK, .off = offsetof(st, m), .put = put_seq, .get = get_seq }
#define FRANKN(k, st, m) \
	{ .key = k, .type = FT_HOOK, .off = offsetof(st, m), .put = put_rank_or_null, .get = get_rank_or_null }
#define FNSTR(k, st, m) { .key = k, .type = FT_HOOK, .off = offsetof(st, m), .put = io_put_nstr, .get = io_get_nstr }
#define FHOOK0(k, fn) { .key = k, .type = FT_HOOK, .off = 0, .put = put_##fn, .get = get_##fn }

/* ---- first_divergent ------------------------------------------------------------------ */

static const char *const MISMATCH[] = { "missing", "size", "dtype", "op", "state", NULL };

static void put_mismatch(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	const char *s = *(const char *const *)p;
	(void)c;
	if (s)
		jw_str(w, k, s);
	else
		jw_null(w, k);
}

static int get_mismatch(struct rd *r, const struct jnode *v, const char *k, void *p, struct io_ctx *c)
{
	(void)c;
	*(const char **)p = NULL;
	if (!v || v->t == JN_NULL)
		return 0;
	if (v->t != JN_STR)
		return io_fail(r, v, k, "expected one of missing, size, dtype, op, state or null");
	for (size_t i = 0; MISMATCH[i]; i++)
		if (!strcmp(v->s, MISMATCH[i])) {
			*(const char **)p = MISMATCH[i];
			return 0;
		}
	return io_fail(r, v, k, "'%s' is not one of missing, size, dtype, op, state", v->s);
}

static int div_is_p2p(const void *p, const struct io_ctx *c)
{
	(void)c;
	return ((const struct fr_div *)p)->seq < 0;
}

static const struct field DIV_F[] = {
	FSEQ("collective_seq_id", struct fr_div, seq),
	FSEQ("p2p_seq_id", struct fr_div, p2p_seq),
	FNSTR("profiling_name", struct fr_div, profiling_name),
	FHOOK0("missing_ranks", missing),
	{ .key = "mismatch", .type = FT_HOOK, .off = offsetof(struct fr_div, mismatch), .put = put_mismatch,
	  .get = get_mismatch },
	FHOOK0("ranks_behind", behind),
	FHOOK0("mismatched_ranks", odd),
	FNSTR("detail", struct fr_div, detail),
	{ .key = "src", .type = FT_HOOK, .off = offsetof(struct fr_div, src), .put = put_rank_or_null,
	  .get = get_rank_or_null, .when = div_is_p2p },
	{ .key = "dst", .type = FT_HOOK, .off = offsetof(struct fr_div, dst), .put = put_rank_or_null,
	  .get = get_rank_or_null, .when = div_is_p2p },
};

static void init_div(void *p, struct io_ctx *c, size_t i)
{
	struct fr_div *d = p;
	(void)c, (void)i;
	d->seq = d->p2p_seq = -1;
	d->src = d->dst = -1;
}
static const struct record REC_FR_DIV = REC("first_divergent", struct fr_div, DIV_F, init_div, NULL);

static void put_div(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	const struct fr_div *d = *(const struct fr_div *const *)p;
	if (!d) {
		jw_null(w, k);
		return;
	}
	jw_obj(w, k);
	io_write_fields(w, &REC_FR_DIV, d, c);
	jw_obj_end(w);
}

static int get_div(struct rd *r, const struct jnode *v, const char *k, void *p, struct io_ctx *c)
{
	struct fr_div **d = p;
	if (!v || v->t == JN_NULL)
		return 0;
	*d = xcalloc(1, sizeof(**d));
	init_div(*d, c, 0);
	if (io_read_obj(r, v, k, &REC_FR_DIV, *d, c))
		return -1;
	if (!(*d)->mismatch)
		return io_fail(r, v, k, "a divergence without its mismatch");
	return 0;
}

/* ---- last_completed_by_rank ---------------------------------------------------------------- */

static void put_frames(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	const struct fr_last *L = p;
	(void)c;
	io_put_strs(w, k, L->frames, L->nframes);
}

static int get_frames(struct rd *r, const struct jnode *v, const char *k, void *p, struct io_ctx *c)
{
	struct fr_last *L = p;
	(void)c;
	return io_get_strs(r, v, k, &L->frames, &L->nframes);
}

static const struct field LAST_F[] = {
	FNSTR("profiling_name", struct fr_last, profiling_name),
	FSEQ("collective_seq_id", struct fr_last, seq),
	FSEQ("p2p_seq_id", struct fr_last, p2p_seq),
	FSEQ("last_enqueued", struct fr_last, enqueued),
	F("source", FT_STR, FF_REQ, struct fr_last, source),
	FNSTR("where", struct fr_last, where),
	FHOOK0("frames", frames),
};

static void init_last(void *p, struct io_ctx *c, size_t i)
{
	struct fr_last *L = p;
	(void)c, (void)i;
	L->seq = L->p2p_seq = L->enqueued = -1;
}
static const struct record REC_FR_LAST = REC("last_completed", struct fr_last, LAST_F, init_last, NULL);

static void put_lasts(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	const struct fr_group_res *G = p;
	jw_obj(w, k);
	for (size_t i = 0; i < G->nlast; i++) {
		char key[24];
		snprintf(key, sizeof(key), "%d", G->last[i].rank);
		jw_obj(w, key);
		io_write_fields(w, &REC_FR_LAST, &G->last[i], c);
		jw_obj_end(w);
	}
	jw_obj_end(w);
}

static int get_lasts(struct rd *r, const struct jnode *v, const char *k, void *p, struct io_ctx *c)
{
	struct fr_group_res *G = p;
	if (!v || v->t == JN_NULL)
		return 0;
	if (v->t != JN_OBJ)
		return io_fail(r, v, k, "expected an object keyed by rank");
	G->last = xcalloc(v->n ? v->n : 1, sizeof(*G->last));
	for (size_t i = 0; i < v->n; i++) {
		char *end;
		long rk = strtol(v->keys[i], &end, 10);
		if (!v->keys[i][0] || *end || rk < 0 || rk > INT32_MAX)
			return io_fail(r, v->v[i], k, "'%s' is not a rank", v->keys[i]);
		struct fr_last *L = &G->last[G->nlast++];
		init_last(L, c, i);
		L->rank = (int)rk;
		char sub[64];
		snprintf(sub, sizeof(sub), "%s.%s", k, v->keys[i]);
		if (io_read_obj(r, v->v[i], sub, &REC_FR_LAST, L, c))
			return -1;
	}
	return 0;
}

/* ---- groups ---------------------------------------------------------------------------- */

static const struct field GROUP_F[] = {
	F("pg_id", FT_STR, FF_REQ, struct fr_group_res, pg_id),
	F("pg_name", FT_STR, 0, struct fr_group_res, pg_name),
	FHOOK0("ranks", group_ranks),
	F("calls", FT_U64, 0, struct fr_group_res, calls),
	{ .key = "first_divergent", .type = FT_HOOK, .off = offsetof(struct fr_group_res, div), .put = put_div,
	  .get = get_div },
	{ .key = "last_completed_by_rank", .type = FT_HOOK, .off = 0, .put = put_lasts, .get = get_lasts },
};
static const struct record REC_FR_GROUP = REC("group", struct fr_group_res, GROUP_F, NULL, NULL);

static const struct field CULPRIT_F[] = {
	F("rank", FT_INT, FF_REQ | FF_GE0, struct fr_culprit, rank),
	F("why", FT_STR, FF_REQ, struct fr_culprit, why),
};
static const struct record REC_FR_CULPRIT = REC("culprit", struct fr_culprit, CULPRIT_F, NULL, NULL);

static const struct field JOIN_F[] = {
	F("ranks", FT_U64, 0, struct fr_join, ranks),
	F("compared", FT_U64, 0, struct fr_join, compared),
	F("agree", FT_U64, 0, struct fr_join, agree),
	F("disagree", FT_U64, 0, struct fr_join, disagree),
	F("dumps_only", FT_U64, 0, struct fr_join, fr_only),
	F("traces_only", FT_U64, 0, struct fr_join, trace_only),
	FNSTR("first_disagreement", struct fr_join, first),
};
static const struct record REC_FR_JOIN = REC("trace_join", struct fr_join, JOIN_F, NULL, NULL);

static int has_join(const void *p, const struct io_ctx *c)
{
	(void)c;
	return ((const struct fr_result *)p)->has_join;
}

static void put_join(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	jw_obj(w, k);
	io_write_fields(w, &REC_FR_JOIN, &((const struct fr_result *)p)->join, c);
	jw_obj_end(w);
}

static int get_join(struct rd *r, const struct jnode *v, const char *k, void *p, struct io_ctx *c)
{
	struct fr_result *res = p;
	if (!v || v->t == JN_NULL)
		return 0;
	res->has_join = 1;
	return io_read_obj(r, v, k, &REC_FR_JOIN, &res->join, c);
}

static const struct field FR_F[] = {
	F("verdict", FT_STR, FF_REQ, struct fr_result, verdict),
	F("kind", FT_STR, 0, struct fr_result, kind),
	F("dumps", FT_U64, 0, struct fr_result, dumps),
	F("versions", FT_STR, 0, struct fr_result, versions),
	{ .key = "culprits", .type = FT_ARR, .off = offsetof(struct fr_result, culprits),
	  .cnt = offsetof(struct fr_result, nculprits), .sub = &REC_FR_CULPRIT },
	FHOOK0("ranks_without_dump", no_dump),
	{ .key = "groups", .type = FT_ARR, .flags = FF_REQ, .off = offsetof(struct fr_result, groups),
	  .cnt = offsetof(struct fr_result, ngroups), .sub = &REC_FR_GROUP },
	{ .key = "trace_join", .type = FT_HOOK, .off = 0, .put = put_join, .get = get_join, .when = has_join },
};
static const struct record REC_FR = REC("flight_recorder", struct fr_result, FR_F, NULL, NULL);

/* ---- the analysis's member ----------------------------------------------------------------- */

int io_has_fr(const void *p, const struct io_ctx *c)
{
	const struct analysis *a = p;
	(void)c;
	return a->fr && a->fr->done;
}

void io_put_fr(struct jw *w, const char *k, const void *p, const struct io_ctx *c)
{
	const struct analysis *a = p;
	jw_obj(w, k);
	io_write_fields(w, &REC_FR, &a->fr->res, c);
	jw_obj_end(w);
}

int io_get_fr(struct rd *r, const struct jnode *v, const char *k, void *p, struct io_ctx *c)
{
	struct analysis *a = p;
	if (!v || v->t == JN_NULL)
		return 0;
	a->fr = xcalloc(1, sizeof(*a->fr));
	a->fr->done = 1;
	return io_read_obj(r, v, k, &REC_FR, &a->fr->res, c);
}
