/*
 * aorta_jsonl.c - aorta's / upstream AORTA's per-rank metrics JSONL
 * (rank_XX_metrics.jsonl), one JSON object per training iteration.
 *
 * Design.  The file is read through zread in 64 KiB chunks and split into
 * lines; each non-blank line goes through yajl's event parser (no tree is
 * built): the callbacks follow which object or array they are in and keep
 * only the values read below (numbers are converted only there; upstream's
 * long active_segments arrays cost a scan), and once the line is known to
 * be valid JSON its step, figures and spans are added.  Memory follows the
 * spans kept, not the file.  Each line: {rank, world_size, global_step,
 * profile{total_ms, ranges[{stream, tag, start_ms, end_ms,
 * metadata{function, bytes}}], ...}}; where a key appears twice in an
 * object the first counts.  metadata.bytes (aorta train: a collective's
 * message size at its real element size), when a number >= 0, is the
 * span's bytes (0: unknown).
 *
 * Upstream's records.  When asked (ingest_opts up), the same pass gathers
 * what overlap_report.py reads of each line (ingest/upstream_sums.h: loss
 * and four profile.overlap figures, the last of a repeated key counting as
 * in Python), so `aorta report` needs no second pass over the files; a
 * line its parser would read differently (not valid JSON, blank but for
 * spaces, a number that overflows it) is handed to up_file_line.
 *
 * Timeline.  The JSONL has no absolute clock: every range is in ms relative
 * to its iteration's start event.  Iterations are laid end to end on a
 * synthetic clock: iteration i starts at base_i = sum over earlier kept lines
 * of round(total_ms * 1e6) ns, and a range maps to [base_i + round(start_ms *
 * 1e6), base_i + round(end_ms * 1e6)] (round half away from zero, llround).
 * start_ms may be negative, so a span can begin before its iteration.  Each
 * iteration is also a step (host and GPU): number = global_step (the line's
 * ordinal when absent), range [base_i, base_i + round(total_ms * 1e6)].
 *
 * Streams.  compute 0, allreduce 1, reducescatter 2, aux 3, any other name
 * 4, 5, ... in order of first appearance.
 *
 * Names (the classifier works on names).  A range that says what it is
 * (aorta train since aorta.metrics/1 writes "collective": the collective
 * type of a communication range, from the engine's by-stream classes)
 * is named from that field: "aorta:<collective>:<tag>".  Older files and
 * upstream's are recognised by stream and metadata.function:
 *   stream allreduce, or metadata.function containing "all_reduce"
 *       -> "aorta:all_reduce:<tag>"        R_KERNEL
 *   stream reducescatter, or function containing "reduce_scatter"
 *       -> "aorta:reduce_scatter:<tag>"    R_KERNEL
 *   function containing "all_gather"
 *       -> "aorta:all_gather:<tag>"        R_KERNEL
 *   stream aux and tag "prefetch"
 *       -> "Memcpy HtoD (aorta prefetch)"  R_MEMCPY
 *   anything else -> "aorta:compute:<tag>" R_KERNEL
 * where <tag> is the range's tag without its "epoch<E>_step<S>_" prefix
 * ("epoch0_step3_grad_clip" -> "grad_clip"), so names repeat across steps.
 *
 * Recorded figures.  Each kept line's own per-step figures (total_ms,
 * overlap.per_stream_ms, overlap.overlap_ms, loss) are kept as the step's
 * recorded figures (trace_add_record), as upstream's overlap_report.py
 * reads them: a missing overlap figure is 0, a missing loss NaN; comm is
 * the sum of the communication streams (allreduce, reducescatter,
 * allgather, comm, nccl*).
 *
 * Bad input.  A line that is not valid JSON (comments allowed, as yajl's
 * tree reader allowed them; or holding a NUL byte) is AORTA_EINPUT naming
 * the line and the byte offset of the error in the (decompressed) file,
 * except when it is the last non-blank line: a run that crashed mid-write
 * leaves its last line cut, so that line is skipped (trace_skip, with the
 * same description) and the complete lines are used.  A line that is not
 * an object, lacks profile or profile.total_ms, or has total_ms < 0 is
 * skipped (trace_skip); so is a range with a missing or non-numeric field
 * or end < start.  rank and world_size come from the first line that has
 * them (o->rank_hint, else 0, when none does).
 */
#include "ingest/ingest.h"
#include "ingest/ingest_mem.h"
#include "ingest/upstream_sums.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <yajl/yajl_parse.h>

#include "base/zread.h"

#define MAX_MS 1e9 /* |ms| above ~11.6 days is not an iteration time */
#define MAX_LINE (64u << 20)

/* ---- one line through yajl's event parser ------------------------------- */

/* What an open container is to aorta (A_*) and to overlap_report.py (U_*). */
enum { A_NONE, A_ROOT, A_PROFILE, A_OVERLAP, A_PS, A_OVMS, A_RANGES, A_RANGE, A_META };
enum { U_NONE, U_ROOT, U_PROFILE, U_OVERLAP, U_PS, U_OVMS };
/* The keys aorta reads (an object's first occurrence of a key counts, as
 * yajl_tree_get finds it). */
enum {
	K_NONE, K_RANK, K_WORLD, K_GSTEP, K_LOSS, K_PROFILE,          /* the line */
	K_TOTAL, K_RANGES, K_OVERLAP,                                 /* profile */
	K_PS, K_OVMS,                                                 /* profile.overlap */
	K_PS_COMPUTE, K_PS_AUX,                                       /* per_stream_ms */
	K_OV_COMM, K_OV_AR, K_OV_RS, K_OV_AG, K_OV_IDLE,              /* overlap_ms */
	K_STREAM, K_TAG, K_START, K_END, K_META, K_COLL,              /* a range */
	K_FUNC, K_BYTES,                                              /* its metadata */
	K__N
};
/* upstream's keys (the last occurrence counts, as Python's json) */
enum { UK_NONE, UK_LOSS, UK_PROFILE, UK_OVERLAP, UK_PS, UK_OVMS, UK_COMPUTE, UK_COMM, UK_AR, UK_RS };

/* The keys read, by the object they sit in (the A_* role, which is also
 * the U_* role where both read the object): aorta's id, upstream's id. */
static const struct keyname { uint8_t aid, uid, len; const char *name; } KEYS[] = {
#define KN(a, u, s) { a, u, sizeof(s) - 1, s }
	/* A_ROOT */
	KN(K_RANK, 0, "rank"), KN(K_WORLD, 0, "world_size"), KN(K_GSTEP, 0, "global_step"),
	KN(K_LOSS, UK_LOSS, "loss"), KN(K_PROFILE, UK_PROFILE, "profile"),
	/* A_PROFILE */
	KN(K_TOTAL, 0, "total_ms"), KN(K_RANGES, 0, "ranges"), KN(K_OVERLAP, UK_OVERLAP, "overlap"),
	/* A_OVERLAP */
	KN(K_PS, UK_PS, "per_stream_ms"), KN(K_OVMS, UK_OVMS, "overlap_ms"),
	/* A_PS */
	KN(K_PS_COMPUTE, UK_COMPUTE, "compute"), KN(K_PS_AUX, 0, "aux"),
	/* A_OVMS */
	KN(K_OV_COMM, UK_COMM, "compute_comm"), KN(K_OV_AR, UK_AR, "compute_allreduce"),
	KN(K_OV_RS, UK_RS, "compute_reducescatter"), KN(K_OV_AG, 0, "compute_allgather"), KN(K_OV_IDLE, 0, "idle"),
	/* A_RANGE */
	KN(K_STREAM, 0, "stream"), KN(K_TAG, 0, "tag"), KN(K_START, 0, "start_ms"), KN(K_END, 0, "end_ms"),
	KN(K_META, 0, "metadata"), KN(K_COLL, 0, "collective"),
	/* A_META */
	KN(K_FUNC, 0, "function"), KN(K_BYTES, 0, "bytes"),
#undef KN
};
/* KEYS[FIRST[role] .. FIRST[role + 1]) are the keys of objects of that role */
static const uint8_t FIRST[A_META + 2] = {
	[A_NONE] = 0, [A_ROOT] = 0, [A_PROFILE] = 5, [A_OVERLAP] = 8, [A_PS] = 10, [A_OVMS] = 12,
	[A_RANGES] = 17, [A_RANGE] = 17, [A_META] = 23, [A_META + 1] = 25,
};
_Static_assert(sizeof(KEYS) / sizeof(KEYS[0]) == 25, "FIRST indexes KEYS");

/* A value as yajl_tree would hold it: absent, a finite number, a string
 * (arena offset), a container, anything else. */
enum { T_ABSENT, T_NUM, T_STR, T_OBJ, T_ARR, T_OTHER,
       T_RANGE_ERR /* while parsing only: a number strtod takes with a range error (an underflow):
		    * upstream's parser reads it, yajl_tree does not call it a number */ };
struct fval { uint8_t t; double d; size_t s; };

struct lrange {              /* one element of profile.ranges */
	int obj;                 /* a JSON object */
	struct fval f[K_BYTES - K_STREAM + 1]; /* K_STREAM .. K_BYTES */
};

struct frame {
	uint8_t arr, a, u;
	uint32_t seen;           /* aorta's keys met in this object (first one counts) */
};

struct lp {
	struct frame *st;
	size_t depth, scap;
	uint8_t ka, ku;          /* the current key's ids (K_NONE: not read, or seen before) */
	int ps_comm;             /* it names a communication stream in per_stream_ms */
	int root_obj;            /* the line is an object */
	struct fval v[K_STREAM]; /* the line's keys (K_RANK .. K_OV_IDLE) */
	double comm;             /* per_stream_ms: the communication streams, in key order */
	struct lrange *r;        /* the ranges, in order */
	size_t nr, rcap;
	char *arena;             /* the strings kept (NUL-terminated) */
	size_t alen, acap;
	/* overlap_report.py's record */
	double uv[UP__N];
	int u_loss_seen, u_loss_bad, u_overlap;
	int u_numerr;            /* a number its parser would reject (integer or float overflow) */
	/* the last event, when it was a key nobody reads: where yajl saw it */
	const unsigned char *idle_key;
};

static int is_comm_key(const unsigned char *k, size_t n)
{
#define IS(s) (n == sizeof(s) - 1 && !memcmp(k, s, n))
	return IS("allreduce") || IS("reducescatter") || IS("allgather") || IS("comm") ||
	       (n >= 4 && !memcmp(k, "nccl", 4));
#undef IS
}

static struct fval *slot(struct lp *p, const struct frame *f)
{
	if (f->a == A_RANGE || f->a == A_META)
		return p->nr && p->ka >= K_STREAM ? &p->r[p->nr - 1].f[p->ka - K_STREAM] : NULL;
	return p->ka < K_STREAM ? &p->v[p->ka] : NULL;
}

static size_t keep_str(struct lp *p, const unsigned char *s, size_t n)
{
	size_t at = p->alen;
	GROW(p->arena, p->acap, p->alen + n + 1);
	memcpy(p->arena + at, s, n);
	p->arena[at + n] = '\0';
	p->alen += n + 1;
	return at;
}

/* The roles of a container opened in an object of roles (a, u) under key
 * ids (ka, ku). */
static uint8_t a_child(uint8_t a, uint8_t ka, int arr)
{
	switch (a) {
	case A_ROOT: return ka == K_PROFILE && !arr ? A_PROFILE : A_NONE;
	case A_PROFILE: return ka == K_RANGES && arr ? A_RANGES : ka == K_OVERLAP && !arr ? A_OVERLAP : A_NONE;
	case A_OVERLAP: return arr ? A_NONE : ka == K_PS ? A_PS : ka == K_OVMS ? A_OVMS : A_NONE;
	case A_RANGE: return ka == K_META && !arr ? A_META : A_NONE;
	default: return A_NONE;
	}
}

static uint8_t u_child(uint8_t u, uint8_t ku, int arr)
{
	if (arr)
		return U_NONE;
	switch (u) {
	case U_ROOT: return ku == UK_PROFILE ? U_PROFILE : U_NONE;
	case U_PROFILE: return ku == UK_OVERLAP ? U_OVERLAP : U_NONE;
	case U_OVERLAP: return ku == UK_PS ? U_PS : ku == UK_OVMS ? U_OVMS : U_NONE;
	default: return U_NONE;
	}
}

/* A value begins: t its kind (T_*), d a number's value, s/n a string. */
static void value(struct lp *p, int t, double d, const unsigned char *s, size_t n)
{
	p->idle_key = NULL;
	if (!p->depth) {
		p->root_obj = t == T_OBJ;
		return;
	}
	struct frame *f = &p->st[p->depth - 1];
	if (f->arr) {
		if (f->a == A_RANGES) { /* a range */
			GROW(p->r, p->rcap, p->nr + 1);
			struct lrange *r = &p->r[p->nr++];
			memset(r, 0, sizeof(*r));
			r->obj = t == T_OBJ;
		}
		return;
	}
	if (f->u == U_ROOT && p->ku == UK_LOSS) {
		if (t == T_NUM || t == T_RANGE_ERR) {
			p->uv[UP_LOSS] = d;
			p->u_loss_seen = 1;
		} else if (t == T_STR || t == T_OTHER) {
			p->u_loss_bad = 1; /* null, true/false, a string: upstream's sum would fail */
		}
	} else if ((t == T_NUM || t == T_RANGE_ERR) && p->ku) {
		if (f->u == U_PS && p->ku == UK_COMPUTE)
			p->uv[UP_COMPUTE] = d;
		else if (f->u == U_OVMS)
			p->uv[p->ku == UK_COMM ? UP_OVERLAP : p->ku == UK_AR ? UP_AR : UP_RS] = d;
	}
	if (f->a == A_PS && p->ps_comm && t == T_NUM)
		p->comm += d;
	if (!p->ka)
		return;
	struct fval *v = slot(p, f);
	if (!v)
		return;
	v->t = (uint8_t)(t == T_RANGE_ERR ? T_OTHER : t); /* a number tree-invalid: not a number */
	v->d = d;
	if (t == T_STR && (f->a == A_RANGE || f->a == A_META))
		v->s = keep_str(p, s, n);
}

static void push(struct lp *p, int arr)
{
	uint8_t a = A_NONE, u = U_NONE;
	if (!p->depth) {
		a = arr ? A_NONE : A_ROOT;
		u = arr ? U_NONE : U_ROOT;
		if (!arr) {
			memset(p->uv, 0, sizeof(p->uv));
			p->u_loss_seen = p->u_loss_bad = p->u_overlap = 0;
		}
	} else {
		const struct frame *f = &p->st[p->depth - 1];
		if (f->arr) {
			a = f->a == A_RANGES && !arr ? A_RANGE : A_NONE;
		} else {
			a = a_child(f->a, p->ka, arr);
			u = u_child(f->u, p->ku, arr);
		}
	}
	value(p, arr ? T_ARR : T_OBJ, 0, NULL, 0);
	if (u == U_OVERLAP)
		p->u_overlap = 1;
	GROW(p->st, p->scap, p->depth + 1);
	p->st[p->depth++] = (struct frame){ (uint8_t)arr, a, u, 0 };
	p->ka = K_NONE;
	p->ku = UK_NONE;
	p->ps_comm = 0;
}

static int cb_start_map(void *ctx)
{
	push(ctx, 0);
	return 1;
}

static int cb_start_array(void *ctx)
{
	push(ctx, 1);
	return 1;
}

static int cb_end(void *ctx)
{
	struct lp *p = ctx;
	p->depth--;
	p->idle_key = NULL;
	p->ka = K_NONE;
	p->ku = UK_NONE;
	p->ps_comm = 0;
	return 1;
}

/* name[0, n) == k[0, n), inline: keys are a few bytes, a call to memcmp
 * costs more than the compare */
static inline int key_eq(const char *name, const unsigned char *k, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)name[i] != k[i])
			return 0;
	return 1;
}

static int cb_key(void *ctx, const unsigned char *k, size_t n)
{
	struct lp *p = ctx;
	struct frame *f = &p->st[p->depth - 1];
	int role = f->a ? f->a : f->u; /* where both read the object, one role */
	p->ka = K_NONE;
	p->ku = UK_NONE;
	p->ps_comm = f->a == A_PS && is_comm_key(k, n);
	if (!role || role == A_RANGES) {
		p->idle_key = p->ps_comm ? NULL : k;
		return 1;
	}
	for (int i = FIRST[role]; i < FIRST[role + 1]; i++)
		if (KEYS[i].len == n && key_eq(KEYS[i].name, k, n)) {
			if (f->u)
				p->ku = KEYS[i].uid;
			if (f->a && KEYS[i].aid && !(f->seen >> KEYS[i].aid & 1)) { /* the first one counts */
				p->ka = KEYS[i].aid;
				f->seen |= 1u << p->ka;
			}
			break;
		}
	p->idle_key = p->ka || p->ku || p->ps_comm ? NULL : k;
	return 1;
}

/* Whether a number here is read by anyone (else it is only checked). */
static int wanted(const struct lp *p)
{
	const struct frame *f = p->depth ? &p->st[p->depth - 1] : NULL;
	return f && !f->arr && (p->ka || p->ku || p->ps_comm);
}

/* A JSON number of at most 15 significant digits and a power of ten up to
 * 22 either way, as the exact quotient or product of two doubles (both
 * exact: the one rounding is the correct one, so the value is strtod's to
 * the bit); 0 when the number is not of that kind. */
static int fast_number(const char *s, size_t n, double *out)
{
	static const double P10[23] = { 1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
					1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22 };
	size_t i = 0;
	int neg = 0, digits = 0, scale = 0;
	uint64_t m = 0;
	if (i < n && s[i] == '-')
		neg = 1, i++;
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
		if (m || s[i] != '0')
			digits++;
		m = m * 10 + (uint64_t)(s[i] - '0');
		if (digits > 15)
			return 0;
	}
	if (i < n && s[i] == '.')
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
			if (m || s[i] != '0')
				digits++;
			m = m * 10 + (uint64_t)(s[i] - '0');
			scale--;
			if (digits > 15)
				return 0;
		}
	if (i != n || scale < -22) /* an exponent, or too many decimals */
		return 0;
	double d = (double)m;
	d = scale ? d / P10[-scale] : d;
	*out = neg ? -d : d;
	return 1;
}

static int cb_number(void *ctx, const char *s, size_t n)
{
	struct lp *p = ctx;
	char small[64], *b = small;
	int dot = 0, ex = 0;
	for (size_t k = 0; k < n; k++) {
		dot |= s[k] == '.';
		ex |= s[k] == 'e' || s[k] == 'E';
	}
	int integer = !dot && !ex;
	/* a value nobody reads, that overflows neither parser: only that it
	 * is one matters */
	if (!wanted(p) && (integer ? n < 18 : !ex && n < 300)) {
		value(p, T_NUM, 0, NULL, 0);
		return 1;
	}
	double d;
	if (!integer && fast_number(s, n, &d)) { /* most of them: "12.345678" */
		value(p, T_NUM, d, NULL, 0);
		return 1;
	}
	if (n >= sizeof(small))
		b = xmalloc(n + 1);
	memcpy(b, s, n);
	b[n] = '\0';
	/* as yajl_tree: an integer when it fits a long long, else strtod's
	 * double, a number only when strtod took it without a range error */
	int t = T_NUM;
	errno = 0;
	long long i = integer ? strtoll(b, NULL, 10) : 0;
	if (integer && !errno) {
		d = (double)i;
		if (i == LLONG_MIN) /* yajl's integer parse stops one short of it */
			p->u_numerr = 1;
	} else {
		if (integer) /* upstream's parser (yajl's integer callback) rejects the line */
			p->u_numerr = 1;
		errno = 0;
		d = strtod(b, NULL);
		if (errno == ERANGE && (d == HUGE_VAL || d == -HUGE_VAL))
			p->u_numerr = 1; /* so does its double callback */
		if (errno || !isfinite(d))
			t = T_RANGE_ERR; /* upstream takes it (an underflow), aorta does not */
	}
	if (b != small)
		free(b);
	value(p, t, d, NULL, 0);
	return 1;
}

static int cb_string(void *ctx, const unsigned char *s, size_t n)
{
	value(ctx, T_STR, 0, s, n);
	return 1;
}

static int cb_null(void *ctx)
{
	value(ctx, T_OTHER, 0, NULL, 0);
	return 1;
}

static int cb_bool(void *ctx, int b)
{
	(void)b;
	value(ctx, T_OTHER, 0, NULL, 0);
	return 1;
}

static const yajl_callbacks CALLBACKS = { cb_null, cb_bool, NULL, NULL, cb_number, cb_string, cb_start_map,
					  cb_key, cb_end, cb_start_array, cb_end };

static void lp_reset(struct lp *p)
{
	p->depth = 0;
	p->ka = K_NONE;
	p->ku = UK_NONE;
	p->ps_comm = p->root_obj = 0;
	memset(p->v, 0, sizeof(p->v));
	p->comm = 0;
	p->nr = p->alen = 0;
	p->u_numerr = p->u_overlap = p->u_loss_seen = p->u_loss_bad = 0;
	memset(p->uv, 0, sizeof(p->uv));
	p->idle_key = NULL;
}

/* ---- values nobody reads, skipped without the parser --------------------------- */

/* upstream's profile.overlap.active_segments, profile.markers and
 * profile.overlap.utilization: about 45 % of a line's bytes and more of its
 * tokens, read by neither aorta nor overlap_report.py.  Where such a key
 * sits in an object nobody reads it from (the callbacks say so: idle_key)
 * and its value is of the plain kind below, the parser is handed "[]" in
 * the value's place: the same events to the callbacks, as a value under a
 * key nobody reads changes nothing.  A value of any other kind (an escape,
 * a byte above 0x7e, an exponent, a long number, a comment, a syntax error)
 * goes through the parser as it is; a line the parser rejects is parsed
 * again whole, so errors and their offsets are the parser's as before. */
static const struct skip_key { const char *k; size_t n; } SKIP[] = {
#define SK(s) { s, sizeof(s) - 1 }
	SK("\"markers\""), SK("\"active_segments\""), SK("\"utilization\""),
#undef SK
};
enum { NSKIP = sizeof(SKIP) / sizeof(SKIP[0]) };

static size_t plain_ws(const char *s, size_t i, size_t n)
{
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return i;
}

/* The end of a string at s[i] == '"' of printable ASCII without escapes, 0 if not one. */
static size_t plain_string(const char *s, size_t i, size_t n)
{
	for (i++; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"')
			return i + 1;
		if (c < 0x20 || c >= 0x7f || c == '\\')
			return 0;
	}
	return 0;
}

/* The end of a number at s[i]: -?(0|[1-9][0-9]*)(.[0-9]+)? short enough that
 * cb_number would only note it (no exponent); 0 if not one. */
static size_t plain_number(const char *s, size_t i, size_t n)
{
	size_t b = i;
	if (i < n && s[i] == '-')
		i++;
	if (i < n && s[i] == '0')
		i++;
	else if (i < n && s[i] >= '1' && s[i] <= '9')
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
	else
		return 0;
	int dot = i < n && s[i] == '.';
	if (dot) {
		size_t d = ++i;
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
		if (i == d)
			return 0;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E'))
		return 0;
	return (dot ? i - b < 300 : i - b < 18) ? i : 0;
}

/* An object key and its colon at s[i]: the index after the colon's spaces, 0 if not. */
static size_t plain_key(const char *s, size_t i, size_t n)
{
	i = plain_ws(s, i, n);
	if (i >= n || s[i] != '"' || !(i = plain_string(s, i, n)))
		return 0;
	i = plain_ws(s, i, n);
	return i < n && s[i] == ':' ? plain_ws(s, i + 1, n) : 0;
}

/* The end of the JSON value at s[i] when it is plain (arrays and objects
 * of plain strings, numbers, true, false, null; nested at most 32 deep), 0
 * if it is not or is not valid. */
static size_t plain_value(const char *s, size_t i, size_t n)
{
	char open[32];
	int d = 0;
	for (;;) {
		i = plain_ws(s, i, n);
		if (i >= n)
			return 0;
		char c = s[i];
		if (c == '[' || c == '{') {
			if (d == (int)sizeof(open))
				return 0;
			open[d++] = c;
			i = plain_ws(s, i + 1, n);
			if (i < n && s[i] == (c == '[' ? ']' : '}')) {
				i++;
				d--;
			} else if (c == '[') {
				continue;
			} else if (!(i = plain_key(s, i, n))) {
				return 0;
			} else {
				continue;
			}
		} else if (c == '"') {
			i = plain_string(s, i, n);
		} else if (c == '-' || (c >= '0' && c <= '9')) {
			i = plain_number(s, i, n);
		} else if (n - i >= 4 && (!memcmp(s + i, "true", 4) || !memcmp(s + i, "null", 4))) {
			i += 4;
		} else if (n - i >= 5 && !memcmp(s + i, "false", 5)) {
			i += 5;
		} else {
			return 0;
		}
		if (!i)
			return 0;
		for (;;) { /* after a value: a comma, or the end of its container */
			if (!d)
				return i;
			i = plain_ws(s, i, n);
			if (i >= n)
				return 0;
			if (s[i] == ',') {
				i++;
				if (open[d - 1] == '{' && !(i = plain_key(s, i, n)))
					return 0;
				break;
			}
			if (s[i] != (open[d - 1] == '[' ? ']' : '}'))
				return 0;
			i++;
			d--;
		}
	}
}

/* Parses line[0, n), the plain values of the SKIP keys left out: 1 when the
 * line is valid JSON, 0 when the caller must parse it whole.  Each key is
 * looked for once, after the previous one (upstream writes them in SKIP's
 * order): one that comes earlier, or twice, is parsed like any other. */
static int lp_parse_skipping(struct lp *p, yajl_handle h, const char *line, size_t n)
{
	size_t at = 0; /* line[0, at) is the parser's */
	for (int i = 0; i < NSKIP; i++) {
		const char *k = memmem(line + at, n - at, SKIP[i].k, SKIP[i].n);
		if (!k)
			continue;
		size_t a = plain_ws(line, (size_t)(k - line) + SKIP[i].n, n), b = 0;
		if (a < n && line[a] == ':')
			b = plain_value(line, a = plain_ws(line, a + 1, n), n);
		if (!b)
			continue;
		/* the parser up to the value: the key it saw last must be this
		 * one, in an object nobody reads it from */
		if (yajl_parse(h, (const unsigned char *)line + at, a - at) != yajl_status_ok)
			return 0;
		at = a;
		if (p->idle_key != (const unsigned char *)k + 1)
			continue;
		if (yajl_parse(h, (const unsigned char *)"[]", 2) != yajl_status_ok)
			return 0;
		at = b;
	}
	return yajl_parse(h, (const unsigned char *)line + at, n - at) == yajl_status_ok &&
	       yajl_complete_parse(h) == yajl_status_ok;
}

/* Parses line[0, n); 0 when it is valid JSON (*consumed: where yajl
 * stopped on an error, n when it was only cut short). */
static int lp_parse(struct lp *p, const char *line, size_t n, int comments, yajl_handle *hp, size_t *consumed)
{
	yajl_handle h = yajl_alloc(&CALLBACKS, NULL, p);
	lp_reset(p);
	if (!comments && !hp) {
		if (lp_parse_skipping(p, h, line, n)) {
			yajl_free(h);
			*consumed = n;
			return 0;
		}
		yajl_free(h); /* the whole line, as if nothing had been tried */
		h = yajl_alloc(&CALLBACKS, NULL, p);
		lp_reset(p);
	}
	if (comments)
		yajl_config(h, yajl_allow_comments, 1);
	yajl_status s = yajl_parse(h, (const unsigned char *)line, n);
	*consumed = n;
	if (s != yajl_status_ok)
		*consumed = yajl_get_bytes_consumed(h);
	else
		s = yajl_complete_parse(h);
	if (hp)
		*hp = h;
	else
		yajl_free(h);
	return s != yajl_status_ok;
}

static void lp_release(struct lp *p)
{
	free(p->st);
	free(p->r);
	free(p->arena);
}

/* ---- the reader ------------------------------------------------------------ */

struct jl {
	const char *path;
	const struct ingest_opts *o;
	struct trace *t;
	struct up_file *up;   /* overlap_report.py's records, when asked (o->up) */
	int64_t base_ns;      /* start of the next iteration */
	long long lines;      /* non-blank lines seen */
	int have_rank, have_world;
	char **streams;       /* names of streams 4, 5, ... */
	size_t nstreams, scap;
	char *name;           /* scratch for span names */
	size_t ncap;
	struct lp p;          /* the line parser's state, reused */
	/* an invalid line is an error only when another line follows it */
	int pending;
	struct aorta_error pend;
	/* global_step numbers seen, sorted, with the line of each: a number
	 * seen again (a re-run appended to the file) is left out */
	struct seen_step { int64_t number; long long line; } *seen;
	size_t nseen, seencap;
};

/* Records step `number` of line `line`; the line of its first appearance
 * when it was seen before, else 0.  Appending in order is O(1); a number
 * below the largest is placed by binary search. */
static long long step_seen(struct jl *j, int64_t number, long long line)
{
	size_t lo = 0, hi = j->nseen;
	if (j->nseen && j->seen[j->nseen - 1].number < number) {
		lo = j->nseen;
	} else {
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (j->seen[mid].number < number)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < j->nseen && j->seen[lo].number == number)
			return j->seen[lo].line;
	}
	GROW(j->seen, j->seencap, j->nseen + 1);
	memmove(&j->seen[lo + 1], &j->seen[lo], (j->nseen - lo) * sizeof(*j->seen));
	j->seen[lo] = (struct seen_step){ number, line };
	j->nseen++;
	return 0;
}

static int32_t stream_id(struct jl *j, const char *s)
{
	static const char *const fixed[4] = { "compute", "allreduce", "reducescatter", "aux" };
	size_t i;

	for (i = 0; i < 4; i++)
		if (strcmp(s, fixed[i]) == 0)
			return (int32_t)i;
	for (i = 0; i < j->nstreams; i++)
		if (strcmp(s, j->streams[i]) == 0)
			return (int32_t)(4 + i);
	if (j->nstreams >= 1u << 20)
		return (int32_t)(4 + j->nstreams - 1); /* absurd file: fold the rest */
	GROW(j->streams, j->scap, j->nstreams + 1);
	j->streams[j->nstreams++] = xstrdup(s);
	return (int32_t)(4 + j->nstreams - 1);
}

/* The tag without an "epoch<E>_step<S>_" prefix. */
static const char *short_tag(const char *tag)
{
	const char *p = tag;

	if (strncmp(p, "epoch", 5) != 0)
		return tag;
	p += 5;
	if (*p < '0' || *p > '9')
		return tag;
	while (*p >= '0' && *p <= '9')
		p++;
	if (strncmp(p, "_step", 5) != 0)
		return tag;
	p += 5;
	if (*p < '0' || *p > '9')
		return tag;
	while (*p >= '0' && *p <= '9')
		p++;
	if (*p != '_' || !p[1])
		return tag;
	return p + 1;
}

static int ms_to_ns(double ms, int64_t *ns)
{
	if (!(fabs(ms) <= MAX_MS))
		return -1;
	*ns = (int64_t)llround(ms * 1e6);
	return 0;
}

/* A finite number as the tree reader's num(): -1 if absent or not one. */
static int num(const struct fval *v, double *d)
{
	if (v->t != T_NUM)
		return -1;
	*d = v->d;
	return 0;
}

static double numor(const struct fval *v, double dflt)
{
	double d;
	return num(v, &d) ? dflt : d;
}

static const char *str(const struct jl *j, const struct fval *v)
{
	return v->t == T_STR ? j->p.arena + v->s : NULL;
}

static void add_range(struct jl *j, const struct lrange *rg, long long line, size_t idx)
{
#define F(k) (&rg->f[(k) - K_STREAM])
	const char *stream = str(j, F(K_STREAM)), *tag = str(j, F(K_TAG)), *func = str(j, F(K_FUNC));
	const char *coll = str(j, F(K_COLL)), *prefix;
	uint64_t bytes = 0;
	double bd, s_ms, e_ms;
	int64_t s_ns, e_ns;
	enum record_hint hint = R_KERNEL;
	int32_t sid;
	size_t need;

	if (!rg->obj) {
		trace_skip(j->t, "line %lld: range %zu is not an object", line, idx);
		return;
	}
	if (!stream || !tag) {
		trace_skip(j->t, "line %lld: range %zu: missing stream or tag string", line, idx);
		return;
	}
	if (num(F(K_START), &s_ms) || num(F(K_END), &e_ms) || ms_to_ns(s_ms, &s_ns) || ms_to_ns(e_ms, &e_ns)) {
		trace_skip(j->t, "line %lld: range %zu: start_ms or end_ms missing or not a number",
			   line, idx);
		return;
	}
	if (e_ns < s_ns) {
		trace_skip(j->t, "line %lld: range %zu: end_ms before start_ms", line, idx);
		return;
	}
	tag = short_tag(tag);
	if (!num(F(K_BYTES), &bd) && bd >= 0 && bd < 1e18)
		bytes = (uint64_t)bd;
#undef F
	sid = stream_id(j, stream);
	enum coll_type ct = coll ? coll_type_from_name(coll) : COLL_NONE;
	if (ct != COLL_NONE && ct != COLL_OTHER) {
		const char *cn = coll_type_name(ct);
		need = strlen("aorta::") + strlen(cn) + strlen(tag) + 1;
		GROW(j->name, j->ncap, need);
		snprintf(j->name, j->ncap, "aorta:%s:%s", cn, tag);
		trace_add_device(j->t, j->base_ns + s_ns, j->base_ns + e_ns, j->name, strlen(j->name),
				 R_KERNEL, sid, -1, bytes);
		return;
	}
	if (sid == 1 || (func && strstr(func, "all_reduce")))
		prefix = "aorta:all_reduce:";
	else if (sid == 2 || (func && strstr(func, "reduce_scatter")))
		prefix = "aorta:reduce_scatter:";
	else if (func && strstr(func, "all_gather"))
		prefix = "aorta:all_gather:";
	else if (sid == 3 && strcmp(tag, "prefetch") == 0)
		prefix = NULL;
	else
		prefix = "aorta:compute:";
	if (prefix) {
		size_t pl = strlen(prefix), tl = strlen(tag);
		GROW(j->name, j->ncap, pl + tl + 1);
		memcpy(j->name, prefix, pl);
		memcpy(j->name + pl, tag, tl + 1);
		need = pl + tl;
	} else {
		static const char pf[] = "Memcpy HtoD (aorta prefetch)";

		GROW(j->name, j->ncap, sizeof(pf));
		memcpy(j->name, pf, sizeof(pf));
		need = sizeof(pf) - 1;
		hint = R_MEMCPY;
	}
	trace_add_device(j->t, j->base_ns + s_ns, j->base_ns + e_ns, j->name, need, hint, sid, -1, bytes);
}

/* The line's own figures, as upstream's overlap_report.py reads them. */
static void record(struct jl *j, int64_t number, double total_ms)
{
	const struct fval *v = j->p.v;
	double r[SR__COUNT];

	r[SR_STEP] = total_ms;
	r[SR_COMPUTE] = numor(&v[K_PS_COMPUTE], 0);
	r[SR_AUX] = numor(&v[K_PS_AUX], 0);
	r[SR_COMM] = j->p.comm;
	r[SR_OVERLAP] = numor(&v[K_OV_COMM], 0);
	r[SR_AR_OVERLAP] = numor(&v[K_OV_AR], 0);
	r[SR_RS_OVERLAP] = numor(&v[K_OV_RS], 0);
	r[SR_AG_OVERLAP] = numor(&v[K_OV_AG], 0);
	r[SR_IDLE] = numor(&v[K_OV_IDLE], 0);
	r[SR_EXPOSED] = rec_exposed(r[SR_COMM], r[SR_OVERLAP]);
	r[SR_LOSS] = numor(&v[K_LOSS], NAN);
	trace_add_record(j->t, number, r);
}

/* One parsed line (j->p). */
static void add_line(struct jl *j, long long line)
{
	const struct fval *v = j->p.v;
	double total_ms, d;
	int64_t total_ns, number, end;

	if (!j->p.root_obj) {
		trace_skip(j->t, "line %lld: not a json object", line);
		return;
	}
	if (!j->have_rank && !num(&v[K_RANK], &d) && d >= 0 && d < 1e7) {
		j->t->rank = (int)d;
		j->have_rank = 1;
	}
	if (!j->have_world && !num(&v[K_WORLD], &d) && d > 0 && d < 1e7) {
		j->t->world_size = (int)d;
		j->have_world = 1;
	}
	if (v[K_PROFILE].t != T_OBJ) {
		trace_skip(j->t, "line %lld: no 'profile' object", line);
		return;
	}
	if (num(&v[K_TOTAL], &total_ms) || total_ms < 0 || ms_to_ns(total_ms, &total_ns)) {
		trace_skip(j->t, "line %lld: profile.total_ms missing, negative or not a number",
			   line);
		return;
	}
	if (__builtin_add_overflow(j->base_ns, total_ns, &end) || end > INT64_MAX / 2) {
		trace_skip(j->t, "line %lld: timeline overflow", line);
		return;
	}
	if (!num(&v[K_GSTEP], &d) && fabs(d) < 9e15)
		number = (int64_t)d;
	else
		number = j->lines - 1;
	long long first = step_seen(j, number, line);
	if (first) { /* one step, one line: analyze and report read the same steps */
		trace_skip(j->t, "line %lld: step %lld again (first on line %lld; a re-run appended to "
			   "the file?), the line left out", line, (long long)number, first);
		return;
	}
	trace_add_step(j->t, number, j->base_ns, end);
	trace_add_gpu_step(j->t, number, j->base_ns, end);
	record(j, number, total_ms);
	if (v[K_RANGES].t == T_ARR) {
		for (size_t i = 0; i < j->p.nr; i++)
			add_range(j, &j->p.r[i], line, i);
	} else if (v[K_RANGES].t != T_ABSENT) {
		trace_skip(j->t, "line %lld: profile.ranges is not an array", line);
	}
	j->base_ns = end;
}

/* overlap_report.py's reading of the line just parsed (valid JSON). */
static void up_line(struct jl *j, long long lineno, const char *raw, size_t rawn)
{
	const struct lp *p = &j->p;
	if (p->u_numerr) /* its parser stops on a number: read the line as it does */
		up_file_line(j->up, lineno, raw, rawn);
	else if (!p->root_obj)
		up_file_left_out(j->up, lineno, "not a JSON object");
	else if (!p->u_overlap)
		up_file_left_out(j->up, lineno, "not an upstream record (no profile.overlap object)");
	else
		up_file_add(j->up, p->uv, p->u_loss_seen && !p->u_loss_bad);
}

/* An invalid line: held back until we know whether another line follows
 * (then it is the error) or it was the last (a cut line, skipped). */
static enum aorta_status invalid(struct jl *j, struct aorta_error *e, enum aorta_status st)
{
	(void)e;
	(void)st;
	j->pending = 1;
	return AORTA_OK;
}

/* line is NUL-terminated at line[n]; off = its offset in the file. */
static enum aorta_status do_line(struct jl *j, char *line, size_t n, long long lineno,
				 long long off, struct aorta_error *e)
{
	const size_t rawn = n; /* overlap_report.py's line */
	size_t i, at;

	while (n && (line[n - 1] == '\r' || line[n - 1] == ' ' || line[n - 1] == '\t'))
		n--;
	for (i = 0; i < n && (line[i] == ' ' || line[i] == '\t'); i++)
		;
	if (i == n) { /* blank line */
		if (j->up && n < rawn)
			up_file_line(j->up, lineno, line, rawn); /* spaces: not blank to upstream */
		return AORTA_OK;
	}
	if (j->pending) {
		if (e)
			*e = j->pend;
		return j->pend.code;
	}
	j->lines++;
	if (memchr(line, '\0', n)) {
		if (j->up)
			up_file_line(j->up, lineno, line, rawn);
		return invalid(j, e, aorta_fail(&j->pend, AORTA_EINPUT, j->path, lineno,
				  off + (long long)((const char *)memchr(line, '\0', n) - line),
				  "invalid json: NUL byte; expected one json object per line"));
	}
	if (!lp_parse(&j->p, line, n, 0, NULL, &at)) {
		if (j->up)
			up_line(j, lineno, line, rawn);
		add_line(j, lineno);
		return AORTA_OK;
	}
	/* not JSON to overlap_report.py's parser; aorta's allows comments */
	if (j->up)
		up_file_line(j->up, lineno, line, rawn);
	yajl_handle h;
	size_t at2;
	if (!lp_parse(&j->p, line, n, 1, &h, &at2)) {
		yajl_free(h);
		add_line(j, lineno);
		return AORTA_OK;
	}
	/* the error where the parser without comments stopped, described as the
	 * one with them (yajl_tree's) says it */
	char err[256];
	unsigned char *m = yajl_get_error(h, 1, (const unsigned char *)line, n);
	snprintf(err, sizeof(err), "%s", (const char *)m);
	yajl_free_error(h, m);
	yajl_free(h);
	size_t k;
	for (k = 0; err[k]; k++)
		if (err[k] == '\n')
			err[k] = ' ';
	for (k = strlen(err); k > 0 && (err[k - 1] == ' ' || err[k - 1] == '.'); k--)
		err[k - 1] = '\0';
	return invalid(j, e, aorta_fail(&j->pend, AORTA_EINPUT, j->path, lineno, off + (long long)at,
					 "invalid json (%s); expected one json object per line",
					 err[0] ? err : "parse error"));
}

/* A file whose one line is invalid holds nothing: that line is the error. */
static enum aorta_status only_line_invalid(struct jl *j, struct aorta_error *e)
{
	if (!j->pending || j->lines > 1)
		return AORTA_OK;
	if (e)
		*e = j->pend;
	return j->pend.code;
}

static void jl_init(struct jl *j, const char *path, const struct ingest_opts *o)
{
	memset(j, 0, sizeof(*j));
	j->path = path;
	j->o = o;
	j->t = trace_new(path, "aorta-jsonl");
	j->up = o ? o->up : NULL;
	if (j->up)
		j->up->exact = 1;
}

static void jl_release(struct jl *j)
{
	for (size_t i = 0; i < j->nstreams; i++)
		free(j->streams[i]);
	free(j->streams);
	free(j->name);
	lp_release(&j->p);
	free(j->seen);
	trace_free(j->t);
}

static void jl_emit(struct jl *j, struct trace_set *out)
{
	const struct ingest_opts *o = j->o;

	if (j->pending)
		trace_skip(j->t, "line %lld: %s (the last line, cut short: a run that stopped mid-write?)",
			   j->pend.line, j->pend.msg);
	if (!j->have_rank)
		j->t->rank = o && o->rank_hint >= 0 ? o->rank_hint : 0;
	trace_finish(j->t, o ? o->rules : NULL);
	trace_set_add(out, j->t);
	j->t = NULL;
}

enum aorta_status ingest_aorta_jsonl_mem(const char *path, const void *buf, size_t len,
					 const struct ingest_opts *o, struct trace_set *out,
					 struct aorta_error *e)
{
	const char *p = buf, *end = p + len;
	struct jl j;
	char *line = NULL;
	size_t cap = 0;
	long long lineno = 1;
	enum aorta_status st = AORTA_OK;

	jl_init(&j, path, o);
	if (j.up) /* a pipe, or the bytes after a byte order mark: not what overlap_report.py reads */
		j.up->exact = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		GROW(line, cap, n + 1);
		memcpy(line, p, n);
		line[n] = '\0';
		st = do_line(&j, line, n, lineno, (long long)(p - (const char *)buf), e);
		if (st)
			break;
		lineno++;
		p += n + (nl ? 1 : 0);
	}
	free(line);
	if (!st)
		st = only_line_invalid(&j, e);
	if (!st)
		jl_emit(&j, out);
	jl_release(&j);
	return st;
}

/* Once the first lines are read, room for the whole file's spans and steps
 * at the same number a byte (2 % over, at most one span per 32 bytes), so
 * the timeline's arrays are not copied as they grow: a plain file only. */
static void reserve_from_size(struct jl *j, const char *path, long long done)
{
	struct stat sb;
	if (done <= 0 || stat(path, &sb) || !S_ISREG(sb.st_mode) || sb.st_size <= done)
		return;
	double scale = 1.02 * (double)sb.st_size / (double)done, most = (double)sb.st_size / 32;
	const struct trace *t = j->t;
	double sp = (double)t->n * scale, st = (double)t->nsteps * scale, rc = (double)t->nrec * scale;
	trace_reserve(j->t, (size_t)(sp < most ? sp : most), (size_t)(st < most ? st : most),
		      (size_t)(rc < most ? rc : most));
}

enum aorta_status ingest_aorta_jsonl(const char *path, const struct ingest_opts *o,
				     struct trace_set *out, struct aorta_error *e)
{
	struct zread *z = NULL;
	struct jl j;
	char *buf = NULL;       /* pending bytes: [0, have) */
	size_t cap = 0, have = 0;
	long long lineno = 1, off = 0; /* line number and offset of buf[0] */
	enum aorta_status st;
	int reserved = 0;

	st = ingest_stream_open(path, o, &z, e);
	if (st)
		return st;
	jl_init(&j, path, o);
	if (j.up && zread_is_gzip(z))
		j.up->exact = 0;
	for (;;) {
		ssize_t n;
		size_t start = 0, scan = have;

		GROW(buf, cap, have + (1 << 16) + 1);
		n = zread_read(z, buf + have, 1 << 16, e);
		if (n < 0) {
			st = AORTA_EINPUT;
			goto out;
		}
		have += (size_t)n;
		for (;;) {
			char *nl = memchr(buf + scan, '\n', have - scan);
			size_t ln;

			if (!nl)
				break;
			ln = (size_t)(nl - (buf + start));
			buf[start + ln] = '\0';
			st = do_line(&j, buf + start, ln, lineno, off, e);
			if (st)
				goto out;
			lineno++;
			off += (long long)ln + 1;
			start += ln + 1;
			scan = start;
		}
		memmove(buf, buf + start, have - start);
		have -= start;
		if (!reserved && j.lines >= 8) {
			reserved = 1;
			if (!zread_is_gzip(z))
				reserve_from_size(&j, path, off);
		}
		if (n == 0)
			break;
		if (have > MAX_LINE) {
			st = aorta_fail(e, AORTA_EINPUT, path, lineno, off,
					"line longer than %u bytes; expected one json object per line",
					MAX_LINE);
			goto out;
		}
	}
	if (have) {
		buf[have] = '\0';
		st = do_line(&j, buf, have, lineno, off, e);
		if (st)
			goto out;
	}
	if ((st = only_line_invalid(&j, e)))
		goto out;
	jl_emit(&j, out);
out:
	free(buf);
	ingest_stream_close(o, z);
	jl_release(&j);
	return st;
}
