/*
 * dump.c - one Flight Recorder dump into struct fr_dump (fr.h), from the
 * value tree of either encoding (fv.h).
 *
 * The layout is c10d's (torch/csrc/distributed/c10d/FlightRecorder.hpp and
 * FlightRecorderDetail.hpp, dump() and dump_json(); TorchComms'
 * comms/torchcomms/hooks/fr/FlightRecorder.cpp writes the same keys):
 *   {"version": "2.x", "pg_config": {key: {"name", "desc", "ranks": "[0, 1]"}},
 *    "pg_status": {pg_id: {"last_enqueued_collective", "last_started_collective",
 *                          "last_completed_collective"}},
 *    "nccl_version" | "comm_lib_version", "entries": [ {...} ]}
 * JSON writes the pg_status numbers as strings, the process_group tuple as
 * an array, absent discovery times as 0 (pickle: None) and leaves out
 * "entries" when there are none.  Every field an entry needs is checked
 * for its type; a wrong one is AORTA_EINPUT naming the byte offset and the
 * path of the value (an entry is never skipped: a verdict must not rest on
 * a silently dropped op).
 *
 * The rank: the dump's own fields first (a "rank" key; else the one rank
 * every group of its pg_config contains; else the group rank its
 * point-to-point names give, "send 0->3" being group rank 0), else the
 * number ending the file name (DebugInfoWriter names a dump <prefix><rank>,
 * so host names earlier in the name do not matter), else none (numbered by
 * fr_run_ranks).
 */
#include "flightrec/fr.h"
#include "flightrec/fv.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/zread.h"
#include "ingest/ingest.h"

#define MAX_FRAMES 64          /* frames kept per entry (innermost first) */
#define MAX_SIZES_TEXT 65536   /* a sizes list longer than this as text is kept as a digest */

struct bld {
	struct fr_dump *d;
	const char *path;
	struct aorta_error *e;
	int failed;
};

static int bad(struct bld *b, const struct fv *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(struct bld *b, const struct fv *at, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!b->failed)
		aorta_fail(b->e, AORTA_EINPUT, b->path, 0, at ? (long long)at->off : -1, "%s", msg);
	b->failed = 1;
	return -1;
}

/* Strings are interned per dump: a ring of thousands of entries repeats a
 * few group ids, names, sizes and dtypes. */
static const char *dstr(struct bld *b, const char *s, size_t n)
{
	return strtab_get(&b->d->strs, strtab_intern(&b->d->strs, s, n));
}

/* ---- typed field access ------------------------------------------------------- */

/* v as an int; where and key name it in the error ("entries[3]",
 * "collective_seq_id"; key may be NULL). */
static int get_int(struct bld *b, const struct fv *v, const char *where, const char *key, int64_t *out)
{
	if (v->t == FV_INT || v->t == FV_BOOL) {
		*out = v->u.i;
		return 0;
	}
	if (v->t == FV_STR) { /* JSON's pg_status numbers are strings */
		char *end;
		long long x = strtoll(v->u.s.p, &end, 10);
		if (v->u.s.n && !*end && end == v->u.s.p + v->u.s.n) {
			*out = x;
			return 0;
		}
	}
	return bad(b, v, "%s%s%s: expected an int, got %s", where, key && where[0] ? "." : "", key ? key : "",
		   fv_type_name(v));
}

/* An int or None/absent (0 in JSON means none for the discovery times). */
static int opt_int(struct bld *b, const struct fv *dict, const char *key, const char *where, int64_t dflt,
		   int64_t *out)
{
	const struct fv *v = fv_get(dict, key);
	*out = dflt;
	if (!v || v->t == FV_NONE)
		return 0;
	return get_int(b, v, where, key, out);
}

static int req_int(struct bld *b, const struct fv *dict, const char *key, const char *where, int64_t *out)
{
	const struct fv *v = fv_get(dict, key);
	if (!v)
		return bad(b, dict, "%s: no '%s'", where, key);
	return get_int(b, v, where, key, out);
}

static int opt_str(struct bld *b, const struct fv *dict, const char *key, const char *where, const char **out)
{
	const struct fv *v = fv_get(dict, key);
	*out = NULL;
	if (!v || v->t == FV_NONE)
		return 0;
	if (v->t != FV_STR)
		return bad(b, v, "%s.%s: expected a str, got %s", where, key, fv_type_name(v));
	*out = dstr(b, v->u.s.p, v->u.s.n);
	return 0;
}

static int opt_bool(struct bld *b, const struct fv *dict, const char *key, const char *where, int *out)
{
	const struct fv *v = fv_get(dict, key);
	if (!v || v->t == FV_NONE)
		return 0;
	if (v->t != FV_BOOL && v->t != FV_INT)
		return bad(b, v, "%s.%s: expected a bool, got %s", where, key, fv_type_name(v));
	*out = v->u.i != 0;
	return 0;
}

/* ---- pieces of an entry ----------------------------------------------------------- */

struct txt {
	char *p;
	size_t n, cap;
};

static void tput(struct txt *t, const char *s, size_t n)
{
	if (t->n + n + 1 > t->cap) {
		t->cap = 2 * (t->n + n + 1) + 64;
		t->p = xrealloc(t->p, t->cap);
	}
	memcpy(t->p + t->n, s, n);
	t->n += n;
	t->p[t->n] = '\0';
}

/* Sizes: a list of lists of ints, kept as canonical text (Python's repr of
 * it) and the element count; a shared list is converted once. */
struct sizes_cache {
	const char *text;
	uint64_t numel;
};

static int sizes(struct bld *b, const struct fv *dict, const char *key, const char *where, const char **text,
		 uint64_t *numel)
{
	const struct fv *v = fv_get(dict, key);
	*text = "";
	*numel = 0;
	if (!v || v->t == FV_NONE)
		return 0;
	if (v->cache) {
		const struct sizes_cache *c = v->cache;
		*text = c->text;
		*numel = c->numel;
		return 0;
	}
	if (v->t != FV_LIST && v->t != FV_TUPLE)
		return bad(b, v, "%s.%s: expected a list of lists of ints, got %s", where, key, fv_type_name(v));
	struct txt t = { 0 };
	uint64_t total = 0, h = 1469598103934665603ull;
	tput(&t, "[", 1);
	for (size_t i = 0; i < v->u.a.n; i++) {
		const struct fv *x = v->u.a.v[i];
		if (x->t != FV_LIST && x->t != FV_TUPLE) {
			free(t.p);
			return bad(b, x, "%s.%s[%zu]: expected a list of ints, got %s", where, key, i, fv_type_name(x));
		}
		uint64_t n = 1;
		if (i)
			tput(&t, ", ", 2);
		tput(&t, "[", 1);
		for (size_t k = 0; k < x->u.a.n; k++) {
			const struct fv *y = x->u.a.v[k];
			if (y->t != FV_INT || y->u.i < 0) {
				free(t.p);
				return bad(b, y, "%s.%s[%zu][%zu]: expected a size (an int >= 0), got %s", where, key, i, k,
					   y->t == FV_INT ? "a negative int" : fv_type_name(y));
			}
			char num[24], *q = num + sizeof(num);
			uint64_t u = (uint64_t)y->u.i;
			do
				*--q = (char)('0' + u % 10);
			while (u /= 10);
			if (k)
				tput(&t, ", ", 2);
			tput(&t, q, (size_t)(num + sizeof(num) - q));
			n = (uint64_t)y->u.i && n > UINT64_MAX / (uint64_t)y->u.i ? UINT64_MAX : n * (uint64_t)y->u.i;
		}
		tput(&t, "]", 1);
		total = total > UINT64_MAX - n ? UINT64_MAX : total + n;
	}
	tput(&t, "]", 1);
	struct sizes_cache *c = arena_alloc(&b->d->ar, sizeof(*c));
	if (t.n > MAX_SIZES_TEXT) { /* thousands of tensors: a digest compares as well */
		for (size_t i = 0; i < t.n; i++)
			h = (h ^ (unsigned char)t.p[i]) * 1099511628211ull;
		char dg[96];
		snprintf(dg, sizeof(dg), "[%zu tensors, digest %016llx]", v->u.a.n, (unsigned long long)h);
		c->text = dstr(b, dg, strlen(dg));
	} else {
		c->text = dstr(b, t.p, t.n);
	}
	free(t.p);
	c->numel = total;
	((struct fv *)v)->cache = c;
	*text = c->text;
	*numel = total;
	return 0;
}

static int dtypes(struct bld *b, const struct fv *dict, const char *key, const char *where, const char **out)
{
	const struct fv *v = fv_get(dict, key);
	*out = "";
	if (!v || v->t == FV_NONE)
		return 0;
	if (v->cache) {
		*out = v->cache;
		return 0;
	}
	if (v->t != FV_LIST && v->t != FV_TUPLE)
		return bad(b, v, "%s.%s: expected a list of str, got %s", where, key, fv_type_name(v));
	struct txt t = { 0 };
	tput(&t, "", 0);
	for (size_t i = 0; i < v->u.a.n; i++) {
		const struct fv *x = v->u.a.v[i];
		if (x->t != FV_STR) {
			free(t.p);
			return bad(b, x, "%s.%s[%zu]: expected a str, got %s", where, key, i, fv_type_name(x));
		}
		if (i)
			tput(&t, ", ", 2);
		tput(&t, x->u.s.p, x->u.s.n > 64 ? 64 : x->u.s.n);
		if (t.n > MAX_SIZES_TEXT)
			break;
	}
	*out = dstr(b, t.p, t.n);
	free(t.p);
	((struct fv *)v)->cache = (void *)*out;
	return 0;
}

struct frames_cache {
	struct fr_frame *f;
	uint32_t n;
};

static int frames(struct bld *b, const struct fv *dict, const char *where, struct fr_entry *en)
{
	const struct fv *v = fv_get(dict, "frames");
	if (!v || v->t == FV_NONE)
		return 0;
	if (v->cache) {
		const struct frames_cache *c = v->cache;
		en->frames = c->f;
		en->nframes = c->n;
		return 0;
	}
	if (v->t != FV_LIST && v->t != FV_TUPLE)
		return bad(b, v, "%s.frames: expected a list, got %s", where, fv_type_name(v));
	size_t n = v->u.a.n < MAX_FRAMES ? v->u.a.n : MAX_FRAMES;
	struct frames_cache *c = arena_alloc(&b->d->ar, sizeof(*c));
	c->f = arena_alloc(&b->d->ar, (n ? n : 1) * sizeof(*c->f));
	c->n = (uint32_t)n;
	for (size_t i = 0; i < n; i++) {
		const struct fv *x = v->u.a.v[i];
		char w[96];
		snprintf(w, sizeof(w), "%s.frames[%zu]", where, i);
		if (x->t != FV_DICT)
			return bad(b, x, "%s: expected a dict {name, filename, line}, got %s", w, fv_type_name(x));
		const char *nm, *fl;
		int64_t line;
		if (opt_str(b, x, "name", w, &nm) || opt_str(b, x, "filename", w, &fl) ||
		    opt_int(b, x, "line", w, -1, &line))
			return -1;
		c->f[i] = (struct fr_frame){ nm ? nm : "?", fl ? fl : "?", line };
	}
	((struct fv *)v)->cache = c;
	en->frames = c->f;
	en->nframes = c->n;
	return 0;
}

/* "nccl:send 0->3": backend "nccl", op "send", src 0, dst 3 (group ranks);
 * "recv 3<-0"; "recv 3<-?" (any source); the name split at its last ':'
 * as torch's analyzer splits it. */
static void parse_name(struct bld *b, struct fr_entry *en)
{
	const char *pn = en->profiling_name, *colon = strrchr(pn, ':');
	const char *nm = colon ? colon + 1 : pn;
	size_t ol = strcspn(nm, " ");
	en->op = dstr(b, nm, ol);
	en->src = en->dst = -1;
	const char *meta = nm[ol] ? nm + ol + 1 : NULL;
	if (!meta)
		return;
	long a, c;
	char *end;
	a = strtol(meta, &end, 10);
	if (end == meta || a < 0 || a > INT_MAX)
		return;
	if (!strcmp(en->op, "send") && !strncmp(end, "->", 2)) {
		c = strtol(end + 2, &end, 10);
		if (c >= 0 && c <= INT_MAX && !*end) {
			en->src = (int32_t)a;
			en->dst = (int32_t)c;
		}
	} else if (!strcmp(en->op, "recv") && !strncmp(end, "<-", 2)) {
		en->dst = (int32_t)a;
		c = strtol(end + 2, &end, 10);
		if (c >= 0 && c <= INT_MAX && !*end && end != meta)
			en->src = (int32_t)c;
	}
}

static int state_of(struct bld *b, const struct fv *dict, const char *where, uint8_t *out)
{
	const struct fv *v = fv_get(dict, "state");
	*out = FR_SCHEDULED;
	if (!v)
		return 0;
	if (v->t != FV_STR)
		return bad(b, v, "%s.state: expected a str, got %s", where, fv_type_name(v));
	if (!strcmp(v->u.s.p, "scheduled"))
		*out = FR_SCHEDULED;
	else if (!strcmp(v->u.s.p, "started"))
		*out = FR_STARTED;
	else if (!strcmp(v->u.s.p, "completed"))
		*out = FR_COMPLETED;
	else
		return bad(b, v, "%s.state: '%.40s', expected scheduled, started or completed", where, v->u.s.p);
	return 0;
}

static int entry(struct bld *b, const struct fv *x, size_t i, struct fr_entry *en)
{
	char w[48];
	snprintf(w, sizeof(w), "entries[%zu]", i);
	if (x->t != FV_DICT)
		return bad(b, x, "%s: expected a dict, got %s", w, fv_type_name(x));
	if (x->cache) { /* the same entry twice (a pickle's memo): converted once */
		*en = *(const struct fr_entry *)x->cache;
		return 0;
	}
	memset(en, 0, sizeof(*en));
	en->off = x->off;
	const struct fv *pg = fv_get(x, "process_group");
	if (!pg)
		return bad(b, x, "%s: no 'process_group'", w);
	if ((pg->t != FV_TUPLE && pg->t != FV_LIST) || pg->u.a.n != 2 || pg->u.a.v[0]->t != FV_STR ||
	    pg->u.a.v[1]->t != FV_STR)
		return bad(b, pg, "%s.process_group: expected (name, description), two str", w);
	en->pg_name = dstr(b, pg->u.a.v[0]->u.s.p, pg->u.a.v[0]->u.s.n);
	en->pg_desc = dstr(b, pg->u.a.v[1]->u.s.p, pg->u.a.v[1]->u.s.n);
	const struct fv *pn = fv_get(x, "profiling_name");
	if (!pn)
		return bad(b, x, "%s: no 'profiling_name'", w);
	if (pn->t != FV_STR)
		return bad(b, pn, "%s.profiling_name: expected a str, got %s", w, fv_type_name(pn));
	en->profiling_name = dstr(b, pn->u.s.p, pn->u.s.n);
	int p2p = -1, retired = 0;
	int64_t started, completed;
	const struct fv *dur = fv_get(x, "duration_ms");
	if (req_int(b, x, "collective_seq_id", w, &en->seq) || opt_int(b, x, "p2p_seq_id", w, 0, &en->p2p_seq) ||
	    opt_int(b, x, "record_id", w, -1, &en->record_id) || opt_int(b, x, "pg_id", w, -1, &en->pg_id) ||
	    opt_int(b, x, "op_id", w, -1, &en->op_id) || opt_int(b, x, "time_created_ns", w, 0, &en->created_ns) ||
	    opt_int(b, x, "time_discovered_started_ns", w, 0, &started) ||
	    opt_int(b, x, "time_discovered_completed_ns", w, 0, &completed) ||
	    opt_int(b, x, "timeout_ms", w, -1, &en->timeout_ms) || opt_bool(b, x, "is_p2p", w, &p2p) ||
	    opt_bool(b, x, "retired", w, &retired) || state_of(b, x, w, &en->state) ||
	    sizes(b, x, "input_sizes", w, &en->in_sizes, &en->in_numel) ||
	    sizes(b, x, "output_sizes", w, &en->out_sizes, &en->out_numel) ||
	    dtypes(b, x, "input_dtypes", w, &en->in_dtypes) || dtypes(b, x, "output_dtypes", w, &en->out_dtypes) ||
	    opt_str(b, x, "thread_name", w, &en->thread_name) || frames(b, x, w, en))
		return -1;
	if (en->seq < 0)
		return bad(b, fv_get(x, "collective_seq_id"), "%s.collective_seq_id: negative (%lld)", w,
			   (long long)en->seq);
	en->started_ns = started > 0 ? started : 0;
	en->completed_ns = completed > 0 ? completed : 0;
	en->retired = (uint8_t)retired;
	en->duration_ms = NAN;
	if (dur && dur->t != FV_NONE) {
		if (dur->t == FV_FLOAT)
			en->duration_ms = dur->u.d;
		else if (dur->t == FV_INT)
			en->duration_ms = (double)dur->u.i;
		else
			return bad(b, dur, "%s.duration_ms: expected a float, got %s", w, fv_type_name(dur));
	}
	parse_name(b, en);
	en->p2p = p2p >= 0 ? (uint8_t)p2p : 0;
	if (!strcmp(en->op, "send") || !strcmp(en->op, "recv"))
		en->p2p = 1;
	((struct fv *)x)->cache = en; /* the dump's own slot: its entries never move */
	return 0;
}

/* "[0, 1, 2]" (c10d writes ranks as the text of a list) or a list of ints. */
static int ranks_of(struct bld *b, const struct fv *v, const char *where, struct fr_pg *pg)
{
	size_t cap = 0;
	int32_t *r = NULL;
	pg->ranks = NULL;
	pg->nranks = 0;
	if (v->t == FV_LIST || v->t == FV_TUPLE) {
		r = arena_alloc(&b->d->ar, (v->u.a.n ? v->u.a.n : 1) * sizeof(*r));
		for (size_t i = 0; i < v->u.a.n; i++) {
			const struct fv *x = v->u.a.v[i];
			if (x->t != FV_INT || x->u.i < 0 || x->u.i > INT32_MAX)
				return bad(b, x, "%s.ranks[%zu]: expected a rank (an int >= 0)", where, i);
			r[i] = (int32_t)x->u.i;
		}
		pg->ranks = r;
		pg->nranks = v->u.a.n;
		return 0;
	}
	if (v->t != FV_STR)
		return bad(b, v, "%s.ranks: expected a list of ranks, got %s", where, fv_type_name(v));
	const char *s = v->u.s.p;
	while (isspace((unsigned char)*s))
		s++;
	if (*s != '[')
		return bad(b, v, "%s.ranks: '%.40s' is not a list of ranks", where, v->u.s.p);
	s++;
	int32_t *tmp = NULL;
	size_t n = 0;
	for (;;) {
		while (isspace((unsigned char)*s) || *s == ',')
			s++;
		if (*s == ']')
			break;
		char *end;
		long long x = strtoll(s, &end, 10);
		if (end == s || x < 0 || x > INT32_MAX) {
			free(tmp);
			return bad(b, v, "%s.ranks: '%.40s' is not a list of ranks", where, v->u.s.p);
		}
		GROW(tmp, cap, n + 1);
		tmp[n++] = (int32_t)x;
		s = end;
	}
	pg->ranks = arena_alloc(&b->d->ar, (n ? n : 1) * sizeof(int32_t));
	if (n)
		memcpy(pg->ranks, tmp, n * sizeof(int32_t));
	pg->nranks = n;
	free(tmp);
	return 0;
}

static int pg_config(struct bld *b, const struct fv *v)
{
	struct fr_dump *d = b->d;
	if (!v || v->t == FV_NONE)
		return 0;
	if (v->t != FV_DICT)
		return bad(b, v, "pg_config: expected a dict, got %s", fv_type_name(v));
	size_t n = v->u.a.n / 2;
	d->pgs = arena_alloc(&d->ar, (n ? n : 1) * sizeof(*d->pgs));
	for (size_t i = 0; i < n; i++) {
		const struct fv *k = v->u.a.v[2 * i], *x = v->u.a.v[2 * i + 1];
		struct fr_pg *pg = &d->pgs[d->npgs];
		char w[160];
		if (k->t != FV_STR)
			return bad(b, k, "pg_config: a key of type %s (expected a group id, a str)", fv_type_name(k));
		snprintf(w, sizeof(w), "pg_config['%.64s']", k->u.s.p);
		memset(pg, 0, sizeof(*pg));
		pg->key = dstr(b, k->u.s.p, k->u.s.n);
		if (x->t == FV_DICT) {
			const struct fv *rk = fv_get(x, "ranks");
			if (opt_str(b, x, "name", w, &pg->name) || opt_str(b, x, "desc", w, &pg->desc) ||
			    (rk && ranks_of(b, rk, w, pg)))
				return -1;
		} else if (ranks_of(b, x, w, pg)) { /* older dumps: the ranks alone */
			return -1;
		}
		if (!pg->name)
			pg->name = pg->key;
		if (!pg->desc)
			pg->desc = "";
		d->npgs++;
	}
	return 0;
}

static int pg_status(struct bld *b, const struct fv *v)
{
	struct fr_dump *d = b->d;
	if (!v || v->t == FV_NONE)
		return 0;
	if (v->t != FV_DICT)
		return bad(b, v, "pg_status: expected a dict, got %s", fv_type_name(v));
	size_t n = v->u.a.n / 2;
	d->st = arena_alloc(&d->ar, (n ? n : 1) * sizeof(*d->st));
	for (size_t i = 0; i < n; i++) {
		const struct fv *k = v->u.a.v[2 * i], *x = v->u.a.v[2 * i + 1];
		struct fr_pgstat *s = &d->st[d->nst];
		char w[96];
		snprintf(w, sizeof(w), "pg_status[%zu]", i);
		if (get_int(b, k, "pg_status key (a pg_id)", NULL, &s->pg_id))
			return -1;
		snprintf(w, sizeof(w), "pg_status['%lld']", (long long)s->pg_id);
		if (x->t != FV_DICT)
			return bad(b, x, "%s: expected a dict, got %s", w, fv_type_name(x));
		if (opt_int(b, x, "last_enqueued_collective", w, -1, &s->enqueued) ||
		    opt_int(b, x, "last_started_collective", w, -1, &s->started) ||
		    opt_int(b, x, "last_completed_collective", w, -1, &s->completed))
			return -1;
		d->nst++;
	}
	return 0;
}

/* ---- the rank from the dump's own fields ----------------------------------------------- */

static int cmp_i32(const void *x, const void *y)
{
	int32_t a = *(const int32_t *)x, c = *(const int32_t *)y;
	return (a > c) - (a < c);
}

/* The one rank every listed group contains, -1 if none or several. */
static int rank_from_groups(const struct fr_dump *d)
{
	int32_t *cur = NULL;
	size_t n = 0;
	int have = 0;
	for (size_t i = 0; i < d->npgs; i++) {
		const struct fr_pg *g = &d->pgs[i];
		if (!g->nranks || !g->key[0]) /* gloo's nameless item names no group of this rank */
			continue;
		int32_t *s = xmalloc(g->nranks * sizeof(*s));
		memcpy(s, g->ranks, g->nranks * sizeof(*s));
		qsort(s, g->nranks, sizeof(*s), cmp_i32);
		if (!have) {
			cur = s;
			n = g->nranks;
			have = 1;
			continue;
		}
		size_t a = 0, k = 0, m = 0;
		while (a < n && k < g->nranks) {
			if (cur[a] == s[k]) {
				if (!m || cur[m - 1] != cur[a])
					cur[m++] = cur[a];
				a++, k++;
			} else if (cur[a] < s[k]) {
				a++;
			} else {
				k++;
			}
		}
		n = m;
		free(s);
	}
	int r = have && n == 1 ? cur[0] : -1;
	free(cur);
	return r;
}

static const struct fr_pg *pg_by_name(const struct fr_dump *d, const char *name)
{
	for (size_t i = 0; i < d->npgs; i++)
		if (!strcmp(d->pgs[i].key, name) || !strcmp(d->pgs[i].name, name))
			return &d->pgs[i];
	return NULL;
}

/* The own rank the point-to-point names give ("send 0->3" is sent by group
 * rank 0: the group's sorted global ranks map it), -1 if none or they
 * disagree. */
static int rank_from_p2p(const struct fr_dump *d)
{
	int r = -1;
	for (size_t i = 0; i < d->ne; i++) {
		const struct fr_entry *en = &d->e[i];
		int own = !strcmp(en->op, "send") ? en->src : !strcmp(en->op, "recv") ? en->dst : -1;
		if (own < 0)
			continue;
		const struct fr_pg *g = pg_by_name(d, en->pg_name);
		if (!g || (size_t)own >= g->nranks)
			continue;
		int32_t *s = xmalloc(g->nranks * sizeof(*s));
		memcpy(s, g->ranks, g->nranks * sizeof(*s));
		qsort(s, g->nranks, sizeof(*s), cmp_i32);
		int gr = s[own];
		free(s);
		if (r >= 0 && gr != r)
			return -1;
		r = gr;
	}
	return r;
}

/* The number ending the file name, after any of the extensions a dump may
 * be given; -1 if none. */
static int rank_from_file_name(const char *path)
{
	static const char *const ext[] = { ".gz", ".zst", ".json", ".pkl", ".pickle", ".bin", ".dump" };
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t n = strlen(base);
	for (int again = 1; again;) {
		again = 0;
		for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
			size_t l = strlen(ext[i]);
			if (n > l && !strncasecmp(base + n - l, ext[i], l)) {
				n -= l;
				again = 1;
			}
		}
	}
	size_t k = n;
	while (k > 0 && isdigit((unsigned char)base[k - 1]) && n - k < 9)
		k--;
	if (k == n || (k > 0 && isdigit((unsigned char)base[k - 1])))
		return -1;
	return atoi(base + k);
}

/* ---- the dump ------------------------------------------------------------------------ */

static const char *pfx_backend(const char *pn, size_t *len)
{
	const char *c = strrchr(pn, ':');
	*len = c ? (size_t)(c - pn) : 0;
	return pn;
}

/* Whether the dump's backend discovers completion with events (NCCL and
 * its kin): there a retired entry that is not completed timed out. */
static int nccl_like(const struct fr_entry *en)
{
	size_t l;
	const char *p = pfx_backend(en->profiling_name, &l);
	return (l >= 4 && !strncmp(p, "nccl", 4)) || (l >= 4 && !strncmp(p, "rccl", 4)) ||
	       (l == 4 && (!strncmp(p, "xccl", 4) || !strncmp(p, "hccl", 4) || !strncmp(p, "mccl", 4)));
}

static void finish(struct fr_dump *d)
{
	for (size_t i = 0; i < d->ne; i++)
		if (d->e[i].state != FR_SCHEDULED)
			d->tracks_state = 1;
	for (size_t i = 0; i + 1 < d->ne; i++)
		if (d->e[i].record_id >= 0 && d->e[i + 1].record_id != d->e[i].record_id + 1)
			d->filtered = 1;
	d->wrapped = d->ne && !d->filtered && d->e[0].record_id > 0;
	for (size_t i = 0; i < d->ne; i++) {
		struct fr_entry *en = &d->e[i];
		/* gloo discovers no start or completion: its retired entries are
		 * the ones that finished */
		en->done = en->state == FR_COMPLETED || (en->retired && !d->tracks_state && !nccl_like(en));
	}
	/* TorchComms' hook numbers collective_seq_id over all its groups and
	 * writes no p2p numbers: each entry's description is its backend */
	int tc = d->ne > 0;
	for (size_t i = 0; tc && i < d->ne; i++) {
		size_t l;
		const char *p = pfx_backend(d->e[i].profiling_name, &l);
		tc = d->e[i].p2p_seq == 0 && l && strlen(d->e[i].pg_desc) == l && !strncmp(d->e[i].pg_desc, p, l);
	}
	d->global_seq = tc;
}

static int build(struct bld *b, const struct fv *root)
{
	struct fr_dump *d = b->d;
	if (root->t != FV_DICT)
		return bad(b, root, "not a Flight Recorder dump: the top level is a %s, expected a dict", fv_type_name(root));
	const struct fv *ver = fv_get(root, "version"), *ent = fv_get(root, "entries");
	if (!ver)
		return bad(b, root, "not a Flight Recorder dump: no 'version' at the top level");
	if (ver->t != FV_STR)
		return bad(b, ver, "version: expected a str such as \"2.9\", got %s", fv_type_name(ver));
	d->version = dstr(b, ver->u.s.p, ver->u.s.n);
	if (sscanf(d->version, "%d.%d", &d->version_major, &d->version_minor) != 2 || d->version_major != 2)
		return bad(b, ver, "version '%.32s': expected a Flight Recorder format 2.x", d->version);
	if (opt_str(b, root, "comm_lib_version", "", &d->comm_lib) ||
	    (!d->comm_lib && opt_str(b, root, "nccl_version", "", &d->comm_lib)))
		return -1;
	int64_t rk = -1;
	if (opt_int(b, root, "rank", "", -1, &rk))
		return -1;
	if (pg_config(b, fv_get(root, "pg_config")) || pg_status(b, fv_get(root, "pg_status")))
		return -1;
	if (ent && ent->t != FV_NONE) {
		if (ent->t != FV_LIST && ent->t != FV_TUPLE)
			return bad(b, ent, "entries: expected a list, got %s", fv_type_name(ent));
		d->e = arena_alloc(&d->ar, (ent->u.a.n ? ent->u.a.n : 1) * sizeof(*d->e));
		for (size_t i = 0; i < ent->u.a.n; i++, d->ne++)
			if (entry(b, ent->u.a.v[i], i, &d->e[i]))
				return -1;
	}
	finish(d);
	d->name_rank = rank_from_file_name(d->path);
	int r;
	if (rk >= 0 && rk <= INT32_MAX) {
		d->rank = (int)rk;
		d->rank_from = "its rank field";
	} else if ((r = rank_from_groups(d)) >= 0) {
		d->rank = r;
		d->rank_from = "its groups (the one rank all of them hold)";
	} else if ((r = rank_from_p2p(d)) >= 0) {
		d->rank = r;
		d->rank_from = "its point-to-point ops";
	} else if (d->name_rank >= 0) {
		d->rank = d->name_rank;
		d->rank_from = "its file name";
	} else {
		d->rank = -1;
		d->rank_from = "assigned (neither the dump nor its name gives one)";
	}
	return 0;
}

int fr_sniff(const char *buf, size_t len)
{
	const unsigned char *u = (const unsigned char *)buf;
	if (len >= 2 && u[0] == 0x80 && u[1] >= 2 && u[1] <= 5) {
		/* the top-level keys come first in c10d's dict (version,
		 * pg_config, ...); a pickle of something else is not ours */
		static const char *const keys[] = { "pg_config", "pg_status", "entries" };
		for (size_t i = 0; i < 3; i++)
			if (memmem(buf, len, keys[i], strlen(keys[i])))
				return 1;
		return 0;
	}
	const char *p = buf, *end = buf + len;
	while (p < end && isspace((unsigned char)*p))
		p++;
	if (p == end || *p != '{' || memmem(buf, len, "\"traceEvents\"", 13) || memmem(buf, len, "\"aorta.", 7))
		return 0; /* a trace, or one of aorta's own files (an analysis holds flight_recorder) */
	if (memmem(buf, len, "\"pg_config\"", 11) || memmem(buf, len, "\"pg_status\"", 11))
		return 2;
	if (memmem(buf, len, "\"entries\"", 9) && memmem(buf, len, "\"collective_seq_id\"", 19))
		return 2;
	return 0;
}

enum aorta_status fr_dump_mem(const char *path, const void *buf, size_t len, struct fr_dump **out,
			      struct aorta_error *e)
{
	struct fv_doc doc;
	char err[512];
	size_t off = 0;
	int pickle = len > 0 && ((const unsigned char *)buf)[0] == 0x80;

	*out = NULL;
	if (e)
		e->msg[0] = '\0';
	int rc = pickle ? fv_pickle(&doc, buf, len, err, sizeof(err), &off)
			: fv_json(&doc, buf, len, err, sizeof(err), &off);
	if (rc) {
		fv_doc_release(&doc);
		return aorta_fail(e, AORTA_EINPUT, path, 0, (long long)off, "%s Flight Recorder dump: %s",
				  pickle ? "pickle" : "JSON", err);
	}
	struct fr_dump *d = xcalloc(1, sizeof(*d));
	arena_init(&d->ar);
	strtab_init(&d->strs);
	d->path = arena_strndup(&d->ar, path, strlen(path));
	d->format = pickle ? "fr-pickle" : "fr-json";
	d->bytes = len;
	d->rank = -1;
	struct bld b = { d, path, e, 0 };
	if (build(&b, doc.root)) {
		fv_doc_release(&doc);
		fr_dump_free(d);
		return AORTA_EINPUT;
	}
	fv_doc_release(&doc);
	*out = d;
	return AORTA_OK;
}

enum aorta_status fr_dump_read(const char *path, struct fr_dump **out, struct aorta_error *e)
{
	struct zread *z;
	char *buf;
	size_t len;
	enum aorta_status st;

	*out = NULL;
	if ((st = ingest_stream_open(path, &z, e)))
		return st;
	zread_set_limit(z, INGEST_MAX_SMALL_BYTES, "a Flight Recorder dump");
	st = zread_rest(z, &buf, &len, e);
	ingest_stream_close(z);
	if (st)
		return st;
	st = fr_dump_mem(path, buf, len, out, e);
	free(buf);
	return st;
}

void fr_dump_free(struct fr_dump *d)
{
	if (!d)
		return;
	arena_release(&d->ar);
	strtab_release(&d->strs);
	free(d);
}
