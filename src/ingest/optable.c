/*
 * optable.c - the generic op table (aorta.optable/1): one row per operation,
 * CSV or JSON lines, for jobs timed by their own instrumentation (Megatron's
 * timers, a custom CUDA-event recorder) rather than a profiler.
 *
 * Format (docs/formats.md has the full text and an example).
 *   CSV:   first line "# aorta.optable/1", then a header naming the columns,
 *          then one row per operation.  Fields may be quoted (RFC 4180, within
 *          one line); lines starting with '#' are comments; blank lines skip.
 *   JSONL: first line {"schema": "aorta.optable/1"}, then one object per line
 *          whose keys are the CSV column names.
 * Columns: rank, op (alias operation, name), kind (alias type), start_<u>,
 * and dur_<u> (alias duration_<u>) or end_<u>, where <u> is ns, us, ms or s;
 * optional: step, stream, group, peer, bytes, launch_<u>, host, seq,
 * group_size, id and after (the id of a row of the same rank the op waits
 * for: a dependency of the timeline, DEP_TABLE).  Other columns are ignored (dp_rank, stage, ... may stay in
 * the file).  Times are read as decimal fixed point into int64 ns, never
 * through a double: "12.5" with unit us is exactly 12500 ns.
 *
 * Model.  One struct trace per distinct rank, ranks ascending; world_size =
 * largest rank + 1.  kind maps onto the timeline's kinds and collective
 * types (kind_of below); send and recv are K_COMM/COLL_SEND_RECV with
 * coll_meta.p2p and coll_meta.peer (the shared point-to-point contract of
 * timeline.h).  The process-group name of a communication row is its group;
 * a send/recv without one gets "p2p:<src>-><dst>" so the k-th send from a
 * to b meets the k-th recv on b from a.  coll_meta.seq is the seq column,
 * else the row's ordinal among its rank's rows of that group in start order,
 * so the join matches collectives by group + order.  Steps: the step
 * column; each step's range on a rank spans its rows (first start to last
 * end).  Stream: the stream column, else 0 for compute, memcpy and memset
 * and 1 for communication.  host, when given, names the clock domain.
 *
 * The rows give kind, step and launch time explicitly, so the reader sets
 * them itself after trace_finish (which would classify by name and resolve
 * steps from host ranges): each span's correlation id is its row's ordinal
 * on that rank, which survives trace_finish's sort.
 *
 * Bad input: an unknown first line or header (missing column, time column
 * without a unit, a column twice) is AORTA_EINPUT naming file and line; a
 * malformed row (bad number, negative duration, unknown kind, missing value,
 * peer equal to rank) is skipped and counted (trace_skip on the first trace,
 * with file and line of the first); a rank whose rows name two hosts, or a
 * table with no valid row, is AORTA_EINPUT.
 *
 * Cost: the file is held whole, plus about 112 bytes per row until the
 * traces are built.  Thread-safe (no globals).
 */
#include "ingest/ingest.h"
#include "ingest/ingest_mem.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <yajl/yajl_tree.h>

#include "base/zread.h"

#define OT_MAX_LINE (1u << 20) /* one row above 1 MiB is not an op table */
#define OT_MAX_FIELDS 256
#define OT_MAX_RANK (1 << 24)
#define OT_MAX_ABS_NS (INT64_C(1) << 62)

enum ot_col {
	OC_RANK, OC_STEP, OC_OP, OC_KIND, OC_STREAM, OC_START, OC_DUR, OC_END, OC_GROUP,
	OC_PEER, OC_BYTES, OC_LAUNCH, OC_HOST, OC_SEQ, OC_GSIZE, OC_ID, OC_AFTER, OC__N
};

static const char *const col_name[OC__N] = {
	"rank", "step", "op", "kind", "stream", "start_<unit>", "dur_<unit>", "end_<unit>",
	"group", "peer", "bytes", "launch_<unit>", "host", "seq", "group_size", "id", "after",
};

struct ot_row {
	int64_t step, start, end, launch, seq;
	uint64_t bytes;
	long long line;
	uint32_t name, group, host;  /* ids in the reader's strtab, 0: none */
	uint32_t id, after;          /* the row's id and the id it waits for (strtab), 0: none */
	int64_t aft;                 /* the row of `after` (resolve_after), -1: none */
	int32_t rank, stream, peer, gsize;
	uint8_t kind, coll, p2p, has_step;
	uint8_t dropped;             /* refused after reading (a repeated seq) */
};

struct ot {
	const char *path;
	struct strtab s;
	struct ot_row *rows;
	size_t n, cap;
	int idx[OC__N];      /* CSV: column index, -1 absent */
	int unit[OC__N];     /* decimal exponent to ns of the time columns */
	int have[OC__N];     /* JSONL: the column was given on some row */
	uint64_t skipped;
	char skipped_first[256];
	char *fields[OT_MAX_FIELDS];
	size_t nf;
	char *scratch;
	size_t scap;
};

/* ------------------------------------------------------------------------ */
/* numbers                                                                   */

/* A decimal ("12", "-3.25", "1.5e-3") times 10^scale, rounded half away
 * from zero to an integer, exactly (no double).  0 on success, -1 when it
 * is not a number, -2 when its magnitude exceeds 2^62. */
static int parse_decimal(const char *s, int scale, int64_t *out)
{
	int neg = 0, nd = 0, any = 0;
	uint64_t mant = 0;
	long exp10 = scale;
	const char *p = s;

	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	for (; isdigit((unsigned char)*p); p++, any = 1) {
		if (mant == 0 && *p == '0')
			continue;
		if (nd < 19) {
			mant = mant * 10 + (uint64_t)(*p - '0');
			nd++;
		} else {
			exp10++; /* digits past 19 are dropped (below 1 part in 1e18) */
		}
	}
	if (*p == '.') {
		p++;
		for (; isdigit((unsigned char)*p); p++, any = 1) {
			if (mant == 0 && *p == '0') {
				exp10--;
				continue;
			}
			if (nd < 19) {
				mant = mant * 10 + (uint64_t)(*p - '0');
				nd++;
				exp10--;
			}
		}
	}
	if (!any)
		return -1;
	if (*p == 'e' || *p == 'E') {
		int eneg = 0;
		long e = 0;
		p++;
		if (*p == '+' || *p == '-')
			eneg = *p++ == '-';
		if (!isdigit((unsigned char)*p))
			return -1;
		for (; isdigit((unsigned char)*p); p++)
			if (e < 100000)
				e = e * 10 + (*p - '0');
		exp10 += eneg ? -e : e;
	}
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p)
		return -1;
	if (mant == 0) {
		*out = 0;
		return 0;
	}
	if (exp10 >= 0) {
		for (long k = 0; k < exp10; k++)
			if (__builtin_mul_overflow(mant, 10u, &mant) || mant > (uint64_t)OT_MAX_ABS_NS)
				return -2;
	} else if (exp10 < -19) {
		mant = 0;
	} else {
		uint64_t d = 1;
		for (long k = 0; k < -exp10; k++)
			d *= 10;
		uint64_t q = mant / d, r = mant % d;
		mant = q + (r >= d - r); /* half away from zero */
	}
	if (mant > (uint64_t)OT_MAX_ABS_NS)
		return -2;
	*out = neg ? -(int64_t)mant : (int64_t)mant;
	return 0;
}

static int parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
	int64_t v;

	if (parse_decimal(s, 0, &v))
		return -1;
	/* an integer column: "3" or "3.0", never "3.5" */
	int64_t back;
	if (parse_decimal(s, 1, &back) || back != v * 10)
		return -1;
	if (v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* kinds                                                                     */

struct kind_def {
	const char *name;
	uint8_t kind, coll, p2p;
};

static const struct kind_def kinds[] = {
	{ "gemm", K_GEMM, COLL_NONE, P2P_NONE },
	{ "matmul", K_GEMM, COLL_NONE, P2P_NONE },
	{ "attention", K_ATTENTION, COLL_NONE, P2P_NONE },
	{ "compute", K_COMPUTE_OTHER, COLL_NONE, P2P_NONE },
	{ "other", K_COMPUTE_OTHER, COLL_NONE, P2P_NONE },
	{ "all_reduce", K_COMM, COLL_ALL_REDUCE, P2P_NONE },
	{ "allreduce", K_COMM, COLL_ALL_REDUCE, P2P_NONE },
	{ "all_gather", K_COMM, COLL_ALL_GATHER, P2P_NONE },
	{ "allgather", K_COMM, COLL_ALL_GATHER, P2P_NONE },
	{ "reduce_scatter", K_COMM, COLL_REDUCE_SCATTER, P2P_NONE },
	{ "reducescatter", K_COMM, COLL_REDUCE_SCATTER, P2P_NONE },
	{ "broadcast", K_COMM, COLL_BROADCAST, P2P_NONE },
	{ "reduce", K_COMM, COLL_REDUCE, P2P_NONE },
	{ "all_to_all", K_COMM, COLL_ALL_TO_ALL, P2P_NONE },
	{ "alltoall", K_COMM, COLL_ALL_TO_ALL, P2P_NONE },
	{ "send", K_COMM, COLL_SEND_RECV, P2P_SEND },
	{ "recv", K_COMM, COLL_SEND_RECV, P2P_RECV },
	{ "send_recv", K_COMM, COLL_SEND_RECV, P2P_NONE },
	{ "comm", K_COMM, COLL_OTHER, P2P_NONE },
	{ "memcpy_h2d", K_MEMCPY_H2D, COLL_NONE, P2P_NONE },
	{ "memcpy_d2h", K_MEMCPY_D2H, COLL_NONE, P2P_NONE },
	{ "memcpy_d2d", K_MEMCPY_D2D, COLL_NONE, P2P_NONE },
	{ "memcpy_p2p", K_MEMCPY_P2P, COLL_NONE, P2P_NONE },
	{ "memcpy", K_MEMCPY_OTHER, COLL_NONE, P2P_NONE },
	{ "memset", K_MEMSET, COLL_NONE, P2P_NONE },
};

/* The definition of a kind name (case and '-' vs '_' ignored), NULL if none. */
static const struct kind_def *kind_of(const char *s)
{
	char b[32];
	size_t n = 0;

	for (; *s && n + 1 < sizeof(b); s++)
		b[n++] = *s == '-' ? '_' : (char)tolower((unsigned char)*s);
	if (*s)
		return NULL;
	b[n] = '\0';
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(b, kinds[i].name) == 0)
			return &kinds[i];
	return NULL;
}

/* ------------------------------------------------------------------------ */
/* columns                                                                   */

static int unit_exp(const char *u)
{
	if (!strcmp(u, "ns"))
		return 0;
	if (!strcmp(u, "us"))
		return 3;
	if (!strcmp(u, "ms"))
		return 6;
	if (!strcmp(u, "s"))
		return 9;
	return -1;
}

/* Which column a header name is: OC__N for one to ignore, -1 (and *why
 * filled) for a time column without a known unit. */
static int column_of(const char *h, int *unit, const char **why)
{
	static const struct { const char *n; int c; } plain[] = {
		{ "rank", OC_RANK }, { "step", OC_STEP }, { "op", OC_OP }, { "operation", OC_OP },
		{ "name", OC_OP }, { "kind", OC_KIND }, { "type", OC_KIND }, { "stream", OC_STREAM },
		{ "group", OC_GROUP }, { "peer", OC_PEER }, { "bytes", OC_BYTES }, { "host", OC_HOST },
		{ "seq", OC_SEQ }, { "group_size", OC_GSIZE }, { "id", OC_ID }, { "after", OC_AFTER },
	};
	static const struct { const char *n; int c; } timed[] = {
		{ "start", OC_START }, { "dur", OC_DUR }, { "duration", OC_DUR }, { "end", OC_END },
		{ "launch", OC_LAUNCH },
	};

	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		if (!strcasecmp(h, plain[i].n))
			return plain[i].c;
	for (size_t i = 0; i < sizeof(timed) / sizeof(timed[0]); i++) {
		size_t l = strlen(timed[i].n);
		if (strncasecmp(h, timed[i].n, l) != 0)
			continue;
		if (h[l] == '\0') {
			*why = "a time column without its unit (expected e.g. start_ns, start_us, "
			       "start_ms or start_s)";
			return -1;
		}
		if (h[l] != '_')
			continue;
		int u = unit_exp(h + l + 1);
		if (u < 0) {
			*why = "a time column with an unknown unit (expected _ns, _us, _ms or _s)";
			return -1;
		}
		*unit = u;
		return timed[i].c;
	}
	return OC__N;
}

/* ------------------------------------------------------------------------ */
/* rows                                                                      */

static void skip_row(struct ot *r, long long line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void skip_row(struct ot *r, long long line, const char *fmt, ...)
{
	if (r->skipped++ == 0) {
		char what[200];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(what, sizeof(what), fmt, ap);
		va_end(ap);
		snprintf(r->skipped_first, sizeof(r->skipped_first), "%s line %lld: %s", r->path, line, what);
	}
}

/* A time column's value into ns within the limits of a trace
 * (TRACE_MIN_NS .. TRACE_MAX_NS, timeline.h).  0, or -1 after counting the
 * row skipped. */
static int parse_time(struct ot *r, const char *v, int col, long long line, const char *what, int64_t *out)
{
	int rc = parse_decimal(v, r->unit[col], out);
	if (rc == 0 && (*out < TRACE_MIN_NS || *out > TRACE_MAX_NS))
		rc = -2;
	if (rc == -1)
		skip_row(r, line, "%s '%.40s' is not a number", what, v);
	else if (rc == -2)
		skip_row(r, line, "%s '%.40s' is beyond the time limits of a trace (-2^61 .. 2^62 ns)", what, v);
	return rc ? -1 : 0;
}

/* Fills one row from its textual values (v[c] NULL: absent or empty).
 * Returns 0, or -1 after counting it skipped. */
/* A row's start and end (from its duration, else its end), checked
 * against the limits of a trace; -1 when the row is skipped (said). */
static int row_span(struct ot *r, const char *const v[OC__N], long long line, struct ot_row *w)
{
	if (!v[OC_START]) {
		skip_row(r, line, "no start");
		return -1;
	}
	if (parse_time(r, v[OC_START], OC_START, line, "start", &w->start))
		return -1;
	if (v[OC_DUR]) {
		int64_t d;
		int rc = parse_decimal(v[OC_DUR], r->unit[OC_DUR], &d);
		if (rc == -1) {
			skip_row(r, line, "duration is not a number");
			return -1;
		}
		if (rc == 0 && d < 0) {
			skip_row(r, line, "negative duration");
			return -1;
		}
		/* checked: start + duration must not pass the limit (nor wrap) */
		if (rc == -2 || d > TRACE_MAX_SPAN_NS || __builtin_add_overflow(w->start, d, &w->end) ||
		    w->end > TRACE_MAX_NS) {
			skip_row(r, line, "duration '%.40s' is beyond the limits of a trace (a span lasts at most "
				 "10^6 s and ends by 2^62 ns)", v[OC_DUR]);
			return -1;
		}
	} else if (v[OC_END]) {
		if (parse_time(r, v[OC_END], OC_END, line, "end", &w->end))
			return -1;
		if (w->end < w->start) {
			skip_row(r, line, "end before start (negative duration)");
			return -1;
		}
		if (w->end - w->start > TRACE_MAX_SPAN_NS) {
			skip_row(r, line, "the op lasts %.1f h, beyond the limit of 10^6 s for one span",
				 (double)(w->end - w->start) / 3.6e12);
			return -1;
		}
	} else {
		skip_row(r, line, "no duration (dur_<unit> or end_<unit>)");
		return -1;
	}
	return 0;
}

/* A row's optional columns: stream (else 0, or 1 for communication),
 * peer, bytes, launch, seq, group size; -1 when the row is skipped. */
static int row_optional(struct ot *r, const char *const v[OC__N], long long line, struct ot_row *w)
{
	int64_t x;
	if (v[OC_STREAM]) {
		if (parse_int(v[OC_STREAM], 0, INT32_MAX, &x)) {
			skip_row(r, line, "stream is not a non-negative integer");
			return -1;
		}
		w->stream = (int32_t)x;
	} else {
		w->stream = w->kind == K_COMM ? 1 : 0;
	}
	if (v[OC_PEER]) {
		if (parse_int(v[OC_PEER], 0, OT_MAX_RANK, &x)) {
			skip_row(r, line, "peer is not a rank (an integer in 0..16777216)");
			return -1;
		}
		if (x == w->rank) {
			skip_row(r, line, "peer equals rank");
			return -1;
		}
		w->peer = (int32_t)x;
	}
	if (v[OC_BYTES]) {
		if (parse_int(v[OC_BYTES], 0, INT64_MAX, &x)) {
			skip_row(r, line, "bytes is not a non-negative integer");
			return -1;
		}
		w->bytes = (uint64_t)x;
	}
	if (v[OC_LAUNCH] && parse_time(r, v[OC_LAUNCH], OC_LAUNCH, line, "launch", &w->launch))
		return -1;
	if (v[OC_SEQ] && parse_int(v[OC_SEQ], 0, INT64_MAX / 2, &w->seq)) {
		skip_row(r, line, "seq is not a non-negative integer");
		return -1;
	}
	if (v[OC_GSIZE]) {
		if (parse_int(v[OC_GSIZE], 1, OT_MAX_RANK, &x)) {
			skip_row(r, line, "group_size is not a positive integer");
			return -1;
		}
		w->gsize = (int32_t)x;
	}
	return 0;
}

static int add_row(struct ot *r, const char *const v[OC__N], long long line)
{
	struct ot_row w;
	int64_t x;

	memset(&w, 0, sizeof(w));
	w.line = line;
	w.peer = -1;
	w.gsize = -1;
	w.seq = -1;
	w.launch = INT64_MIN;
	for (int c = 0; c < OC__N; c++)
		if (v[c] && !*v[c])
			return -1; /* not reached: callers pass NULL for empty */
	if (!v[OC_RANK] || parse_int(v[OC_RANK], 0, OT_MAX_RANK, &x)) {
		skip_row(r, line, v[OC_RANK] ? "rank is not an integer in 0..16777216" : "no rank");
		return -1;
	}
	w.rank = (int32_t)x;
	if (v[OC_STEP]) {
		if (parse_int(v[OC_STEP], INT32_MIN, INT32_MAX, &w.step)) {
			skip_row(r, line, "step is not an integer");
			return -1;
		}
		w.has_step = 1;
	}
	if (!v[OC_OP]) {
		skip_row(r, line, "no operation name (op)");
		return -1;
	}
	const struct kind_def *k = v[OC_KIND] ? kind_of(v[OC_KIND]) : NULL;
	if (!k) {
		skip_row(r, line, v[OC_KIND] ? "unknown kind (expected gemm, attention, compute, "
			 "all_reduce, all_gather, reduce_scatter, broadcast, reduce, all_to_all, send, "
			 "recv, send_recv, comm, memcpy_h2d, memcpy_d2h, memcpy_d2d, memcpy_p2p, "
			 "memcpy or memset)" : "no kind");
		return -1;
	}
	w.kind = k->kind;
	w.coll = k->coll;
	w.p2p = k->p2p;
	if (row_span(r, v, line, &w))
		return -1;
	if (row_optional(r, v, line, &w))
		return -1;
	w.name = strtab_intern(&r->s, v[OC_OP], strlen(v[OC_OP]));
	w.group = v[OC_GROUP] ? strtab_intern(&r->s, v[OC_GROUP], strlen(v[OC_GROUP])) : 0;
	w.host = v[OC_HOST] ? strtab_intern(&r->s, v[OC_HOST], strlen(v[OC_HOST])) : 0;
	w.id = v[OC_ID] ? strtab_intern(&r->s, v[OC_ID], strlen(v[OC_ID])) : 0;
	w.after = v[OC_AFTER] ? strtab_intern(&r->s, v[OC_AFTER], strlen(v[OC_AFTER])) : 0;
	w.aft = -1;
	GROW(r->rows, r->cap, r->n + 1);
	r->rows[r->n++] = w;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* CSV                                                                       */

/* Splits line (NUL-terminated, modified in place) into r->fields.  -1 on an
 * unterminated quote or too many fields. */
static int split_csv(struct ot *r, char *line)
{
	char *p = line, *o;

	r->nf = 0;
	for (;;) {
		if (r->nf == OT_MAX_FIELDS)
			return -1;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '"') {
			o = ++p;
			r->fields[r->nf++] = o;
			for (;;) {
				if (!*p)
					return -1;
				if (*p == '"') {
					if (p[1] == '"') {
						*o++ = '"';
						p += 2;
						continue;
					}
					p++;
					break;
				}
				*o++ = *p++;
			}
			while (*p == ' ' || *p == '\t')
				p++;
			if (*p && *p != ',')
				return -1;
			*o = '\0';
			if (!*p)
				return 0;
			p++;
		} else {
			r->fields[r->nf++] = p;
			char *c = strchr(p, ',');
			char *e = c ? c : p + strlen(p);
			while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
				e--;
			if (!c) {
				*e = '\0';
				return 0;
			}
			*e = '\0';
			p = c + 1;
		}
	}
}

static enum aorta_status csv_header(struct ot *r, char *line, long long ln, struct aorta_error *e)
{
	if (split_csv(r, line))
		return aorta_fail(e, AORTA_EINPUT, r->path, ln, -1,
				  "a header line of at most %d comma-separated names", OT_MAX_FIELDS);
	for (size_t i = 0; i < r->nf; i++) {
		const char *why = NULL;
		int u = 0, c = column_of(r->fields[i], &u, &why);
		if (c < 0)
			return aorta_fail(e, AORTA_EINPUT, r->path, ln, -1, "column '%s': %s",
					  r->fields[i], why);
		if (c == OC__N)
			continue;
		if (r->idx[c] >= 0)
			return aorta_fail(e, AORTA_EINPUT, r->path, ln, -1,
					  "column '%s' given twice (expected each of %s once)",
					  r->fields[i], col_name[c]);
		r->idx[c] = (int)i;
		r->unit[c] = u;
	}
	static const int need[] = { OC_RANK, OC_OP, OC_KIND, OC_START };
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (r->idx[need[i]] < 0)
			return aorta_fail(e, AORTA_EINPUT, r->path, ln, -1,
					  "the header has no '%s' column (expected rank, op, kind, "
					  "start_<unit> and dur_<unit> or end_<unit>)", col_name[need[i]]);
	if (r->idx[OC_DUR] < 0 && r->idx[OC_END] < 0)
		return aorta_fail(e, AORTA_EINPUT, r->path, ln, -1,
				  "the header has neither a 'dur_<unit>' nor an 'end_<unit>' column");
	if (r->idx[OC_DUR] >= 0 && r->idx[OC_END] >= 0)
		return aorta_fail(e, AORTA_EINPUT, r->path, ln, -1,
				  "the header has both 'dur_<unit>' and 'end_<unit>' (expected one)");
	return AORTA_OK;
}

static void csv_row(struct ot *r, char *line, long long ln)
{
	const char *v[OC__N];

	if (split_csv(r, line)) {
		skip_row(r, ln, "an unterminated quote or too many fields");
		return;
	}
	for (int c = 0; c < OC__N; c++) {
		int i = r->idx[c];
		v[c] = i >= 0 && (size_t)i < r->nf && r->fields[i][0] ? r->fields[i] : NULL;
	}
	add_row(r, v, ln);
}

/* ------------------------------------------------------------------------ */
/* JSONL                                                                     */

static yajl_val jget(yajl_val obj, const char *key)
{
	const char *path[2] = { key, NULL };

	return yajl_tree_get(obj, path, yajl_t_any);
}

/* The text of a JSON string or number (numbers keep their literal), NULL
 * for anything else; "" counts as absent. */
static const char *jtext(yajl_val v)
{
	const char *s = NULL;

	if (!v)
		return NULL;
	if (YAJL_IS_STRING(v))
		s = YAJL_GET_STRING(v);
	else if (YAJL_IS_NUMBER(v))
		s = YAJL_GET_NUMBER(v);
	return s && *s ? s : NULL;
}

static void jsonl_row(struct ot *r, const char *line, long long ln, enum aorta_status *st,
		      struct aorta_error *e)
{
	char err[128];
	yajl_val root = yajl_tree_parse(line, err, sizeof(err));
	const char *v[OC__N];

	if (!root || !YAJL_IS_OBJECT(root)) {
		skip_row(r, ln, "not a JSON object");
		yajl_tree_free(root);
		return;
	}
	memset(v, 0, sizeof(v));
	int bad = 0;
	for (size_t i = 0; i < root->u.object.len; i++) {
		const char *key = root->u.object.keys[i];
		if (!strcmp(key, "schema"))
			continue;
		const char *why = NULL;
		int u = 0, c = column_of(key, &u, &why);
		if (c < 0) {
			*st = aorta_fail(e, AORTA_EINPUT, r->path, ln, -1, "key '%s': %s", key, why);
			bad = 1;
			break;
		}
		if (c == OC__N)
			continue;
		/* one unit per column for the whole file */
		if (r->have[c] && r->unit[c] != u) {
			*st = aorta_fail(e, AORTA_EINPUT, r->path, ln, -1,
					 "key '%s': another unit than earlier lines (expected one unit "
					 "per column in a file)", key);
			bad = 1;
			break;
		}
		if (c == OC_DUR && r->have[OC_END]) {
			*st = aorta_fail(e, AORTA_EINPUT, r->path, ln, -1,
					 "key '%s' after end_<unit> on earlier lines (expected one of them)", key);
			bad = 1;
			break;
		}
		if (c == OC_END && r->have[OC_DUR]) {
			*st = aorta_fail(e, AORTA_EINPUT, r->path, ln, -1,
					 "key '%s' after dur_<unit> on earlier lines (expected one of them)", key);
			bad = 1;
			break;
		}
		r->have[c] = 1;
		r->unit[c] = u;
		v[c] = jtext(root->u.object.values[i]);
	}
	if (!bad)
		add_row(r, v, ln);
	yajl_tree_free(root);
}

/* ------------------------------------------------------------------------ */
/* traces                                                                    */

static int cmp_row(const void *a, const void *b)
{
	const struct ot_row *x = a, *y = b;

	if (x->rank != y->rank)
		return (x->rank > y->rank) - (x->rank < y->rank);
	if (x->start != y->start)
		return (x->start > y->start) - (x->start < y->start);
	return (x->line > y->line) - (x->line < y->line);
}

/* A step's rows on one rank: its number and each row's start (rows of
 * one step are contiguous and in start order after sort_starts). */
struct step_start { int64_t number, start, end; };

static int cmp_step_start(const void *a, const void *b)
{
	const struct step_start *x = a, *y = b;
	if (x->number != y->number)
		return (x->number > y->number) - (x->number < y->number);
	return (x->start > y->start) - (x->start < y->start);
}

struct step_win { int64_t number, start, end, last_start, lo, hi; };

/* The windows of one rank's steps, from their own work.  A step's rows
 * are its work, but a row of step N+1 may run during step N (a prefetch:
 * FSDP's next all-gather, tagged with the step it serves): the range of
 * its rows would start step N+1 inside step N, and the plausibility layer
 * would drop it as a clock going backwards.  So, steps in number order:
 * step N+1's rows that start before step N's last row ends are early; when
 * they are fewer than half of its rows, its window starts at its first row
 * that is not early, else at its first row (then the plausibility layer
 * judges the overlap).  A window ends where the next step's begins when
 * that is after every start of its own rows (a row that ends late, an
 * all-reduce tail, does not overlap the next step), else at its last end.  Returns the windows in number order (*n of
 * them; the caller frees). */
static struct step_win *step_windows(const struct ot_row *rw, size_t n, size_t *nw)
{
	struct step_start *ss = xmalloc((n ? n : 1) * sizeof(*ss));
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (rw[i].has_step && !rw[i].dropped)
			ss[m++] = (struct step_start){ rw[i].step, rw[i].start, rw[i].end };
	qsort(ss, m, sizeof(*ss), cmp_step_start);
	struct step_win *w = xmalloc((m ? m : 1) * sizeof(*w));
	size_t k = 0;
	int64_t prev_end = INT64_MIN;
	for (size_t a = 0; a < m;) {
		size_t b = a;
		int64_t hi = INT64_MIN;
		while (b < m && ss[b].number == ss[a].number) {
			if (ss[b].end > hi)
				hi = ss[b].end;
			b++;
		}
		size_t cnt = b - a, early = 0;
		while (early < cnt && ss[a + early].start < prev_end)
			early++;
		struct step_win *x = &w[k++];
		x->number = ss[a].number;
		x->lo = ss[a].start;
		x->hi = hi;
		x->last_start = ss[b - 1].start;
		x->start = 2 * early < cnt ? ss[a + early].start : ss[a].start;
		prev_end = hi;
		a = b;
	}
	for (size_t q = 0; q < k; q++)
		w[q].end = q + 1 < k && w[q + 1].start >= w[q].last_start && w[q + 1].start >= w[q].start ?
				   w[q + 1].start : w[q].hi;
	free(ss);
	*nw = k;
	return w;
}

static int cmp_win_number(const void *a, const void *b)
{
	const struct step_win *x = a, *y = b;
	return (x->number > y->number) - (x->number < y->number);
}

/* Builds the trace of rows[lo, hi) (one rank).  NULL with e filled on a
 * host conflict.  Kinds and launches are the rows' own, given before
 * trace_finish so the plausibility layer judges them (a zero-length
 * collective by its kind, a launch after its op's start); the steps are
 * the rows' own too, given after it (trace_finish would resolve them from
 * host ranges), by each span's correlation id, its row's ordinal on the
 * rank, which survives the sort. */
static struct trace *build_rank(struct ot *r, size_t lo, size_t hi, int world,
				const struct ingest_opts *o, struct aorta_error *e)
{
	struct trace *t = trace_new(r->path, "optable");
	struct ot_row *rw = r->rows + lo;
	size_t n = hi - lo;
	uint32_t host = 0;
	long long host_line = 0;

	t->rank = rw[0].rank;
	t->world_size = world;
	/* the resolution of the durations: a 0 in ms may be a short op */
	int du = r->idx[OC_DUR] >= 0 || r->have[OC_DUR] ? r->unit[OC_DUR] : r->unit[OC_END];
	for (t->tick_ns = 1; du-- > 0;)
		t->tick_ns *= 10;
	for (size_t i = 0; i < n; i++) {
		const struct ot_row *w = &rw[i];
		if (w->dropped)
			continue;
		if (w->host) {
			if (host && host != w->host) {
				aorta_fail(e, AORTA_EINPUT, r->path, w->line, -1,
					   "rank %d on host '%s' here and on '%s' at line %lld "
					   "(expected one host per rank)", w->rank,
					   strtab_get(&r->s, w->host), strtab_get(&r->s, host), host_line);
				trace_free(t);
				return NULL;
			}
			host = w->host;
			host_line = w->line;
		}
		const char *nm = strtab_get(&r->s, w->name);
		/* memcpy/memset keep their record type (the hint): figures that
		 * read it see a copy as a copy */
		enum record_hint h = w->kind >= K_MEMCPY_H2D && w->kind <= K_MEMCPY_OTHER ? R_MEMCPY :
				     w->kind == K_MEMSET ? R_MEMSET : R_KERNEL;
		size_t idx = trace_add_device(t, w->start, w->end, nm, strlen(nm), h, w->stream,
					      (int64_t)i, w->bytes);
		trace_set_kind(t, idx, (enum span_kind)w->kind, (enum coll_type)w->coll);
		trace_set_launch(t, idx, w->launch);
		if (w->kind == K_COMM) {
			struct coll_meta m;
			memset(&m, 0, sizeof(m));
			char pg[96];
			if (w->group) {
				m.pg_name = strtab_intern(&t->names, strtab_get(&r->s, w->group),
							  strlen(strtab_get(&r->s, w->group)));
			} else if (w->p2p != P2P_NONE && w->peer >= 0) {
				int src = w->p2p == P2P_SEND ? w->rank : w->peer;
				int dst = w->p2p == P2P_SEND ? w->peer : w->rank;
				snprintf(pg, sizeof(pg), "p2p:%d->%d", src, dst);
				m.pg_name = strtab_intern(&t->names, pg, strlen(pg));
			}
			const char *cn = w->p2p == P2P_SEND ? "send" : w->p2p == P2P_RECV ? "recv" :
					 coll_type_name((enum coll_type)w->coll);
			m.coll_name = strtab_intern(&t->names, cn, strlen(cn));
			m.in_nelems = m.out_nelems = -1;
			m.group_size = w->gsize;
			m.peer = w->peer;
			m.p2p = w->p2p;
			/* the table's seq, else none: the join then matches by step,
			 * group, type and order within the step, so a missing or extra
			 * row moves nothing beyond its own step */
			m.seq = w->seq;
			trace_set_coll(t, idx, &m);
		}
	}
	if (host) {
		const char *hs = strtab_get(&r->s, host);
		snprintf(t->host, sizeof(t->host), "%s", hs);
	}
	size_t nst = 0;
	struct step_win *st = step_windows(rw, n, &nst);
	for (size_t s = 0; s < nst; s++)
		trace_add_step(t, st[s].number, st[s].start, st[s].end);
	trace_finish(t, o ? o->rules : NULL);

	/* each span's step: its row's, among the steps the plausibility layer kept */
	qsort(st, nst, sizeof(*st), cmp_win_number);
	size_t *num2idx = xmalloc((nst ? nst : 1) * sizeof(*num2idx));
	for (size_t s = 0; s < nst; s++) {
		num2idx[s] = SIZE_MAX;
		for (size_t k = 0; k < t->nsteps; k++)
			if (t->steps[k].number == st[s].number) {
				num2idx[s] = k;
				break;
			}
	}
	for (size_t i = 0; i < t->n; i++) {
		const struct ot_row *w = &rw[t->corr[i]];
		t->step[i] = -1;
		if (w->has_step && nst) {
			size_t a = 0, b = nst;
			while (a < b) {
				size_t mid = a + (b - a) / 2;
				if (st[mid].number < w->step)
					a = mid + 1;
				else
					b = mid;
			}
			if (a < nst && st[a].number == w->step && num2idx[a] != SIZE_MAX)
				t->step[i] = (int32_t)num2idx[a];
		}
	}
	free(num2idx);
	free(st);
	/* each `after` of the rank (resolve_after: a row of the same rank), by
	 * span: a row the plausibility layer left out has none */
	int32_t *span = xmalloc((n ? n : 1) * sizeof(*span));
	for (size_t i = 0; i < n; i++)
		span[i] = -1;
	for (size_t i = 0; i < t->n; i++)
		span[t->corr[i]] = (int32_t)i;
	for (size_t i = 0; i < n; i++)
		if (rw[i].aft >= 0 && span[i] >= 0 && span[rw[i].aft - (int64_t)lo] >= 0)
			trace_add_dep(t, (size_t)span[i], (size_t)span[rw[i].aft - (int64_t)lo], DEP_TABLE);
	free(span);
	return t;
}

/* The rows' ids, to resolve `after`: (id, rank, row) sorted. */
struct id_ref { uint32_t id; int32_t rank; size_t row; };

static int cmp_id_ref(const void *a, const void *b)
{
	const struct id_ref *x = a, *y = b;
	if (x->id != y->id)
		return (x->id > y->id) - (x->id < y->id);
	if (x->rank != y->rank)
		return (x->rank > y->rank) - (x->rank < y->rank);
	return (x->row > y->row) - (x->row < y->row);
}

/* The first of v[0..m) with id (and rank, unless rank < 0), m if none. */
static size_t find_id(const struct id_ref *v, size_t m, uint32_t id, int32_t rank)
{
	size_t a = 0, b = m;
	while (a < b) {
		size_t mid = (a + b) / 2;
		if (v[mid].id < id || (v[mid].id == id && rank >= 0 && v[mid].rank < rank))
			a = mid + 1;
		else
			b = mid;
	}
	return a < m && v[a].id == id && (rank < 0 || v[a].rank == rank) ? a : m;
}

/* The `after` column (rows sorted): each names the id of a row of the same
 * rank, once in it (ids are per rank), that ends by the row's start (within
 * the durations' resolution, or 1 us); no row waits for itself, nor through
 * others for itself.  Each row's aft is that row.  Anything else is an input
 * error naming the line: a dependency left out would change the replay. */
static enum aorta_status resolve_after(struct ot *r, struct aorta_error *e)
{
	size_t m = 0, na = 0;
	for (size_t i = 0; i < r->n; i++) {
		m += r->rows[i].id != 0;
		na += r->rows[i].after != 0;
	}
	if (!na)
		return AORTA_OK;
	struct id_ref *v = xmalloc((m ? m : 1) * sizeof(*v));
	enum aorta_status st = AORTA_OK;
	m = 0;
	for (size_t i = 0; i < r->n; i++)
		if (r->rows[i].id)
			v[m++] = (struct id_ref){ r->rows[i].id, r->rows[i].rank, i };
	qsort(v, m, sizeof(*v), cmp_id_ref);
	for (size_t k = 1; k < m && !st; k++)
		if (v[k].id == v[k - 1].id && v[k].rank == v[k - 1].rank)
			st = aorta_fail(e, AORTA_EINPUT, r->path, r->rows[v[k].row].line, -1,
					"id '%.60s' again on rank %d (first on line %lld; expected each id once per rank)",
					strtab_get(&r->s, v[k].id), v[k].rank, r->rows[v[k - 1].row].line);
	int du = r->idx[OC_DUR] >= 0 || r->have[OC_DUR] ? r->unit[OC_DUR] : r->unit[OC_END];
	int64_t tol = TRACE_LAUNCH_SLACK_NS;
	for (int64_t tick = 1; du-- > 0; tol = tick > tol ? tick : tol)
		tick *= 10;
	for (size_t i = 0; i < r->n && !st; i++) {
		struct ot_row *w = &r->rows[i];
		if (!w->after)
			continue;
		const char *a = strtab_get(&r->s, w->after);
		size_t k = find_id(v, m, w->after, w->rank);
		if (k == m) {
			size_t o = find_id(v, m, w->after, -1);
			st = o < m ? aorta_fail(e, AORTA_EINPUT, r->path, w->line, -1,
						"after '%.60s' is the id of a row of rank %d (line %lld); expected the "
						"id of a row of rank %d (an op waits only for an op of its own rank)",
						a, v[o].rank, r->rows[v[o].row].line, w->rank)
				   : aorta_fail(e, AORTA_EINPUT, r->path, w->line, -1,
						"after '%.60s' is no row's id (expected the id of a row of rank %d)",
						a, w->rank);
			break;
		}
		const struct ot_row *d = &r->rows[v[k].row];
		if (v[k].row == i) {
			st = aorta_fail(e, AORTA_EINPUT, r->path, w->line, -1,
					"after '%.60s' is the row's own id (expected the id of another row it waits for)", a);
			break;
		}
		if (d->end > w->start + tol) {
			st = aorta_fail(e, AORTA_EINPUT, r->path, w->line, -1,
					"the op starts at %lld ns, before the op it waits for (after '%.60s', line %lld) "
					"ends at %lld ns (expected an op to start once the op it waits for has ended)",
					(long long)w->start, a, d->line, (long long)d->end);
			break;
		}
		w->aft = (int64_t)v[k].row;
	}
	free(v);
	/* a cycle: each row waits for one at most, so a walk from every row
	 * either ends or comes back to a row of its own walk */
	uint8_t *seen = st ? NULL : xcalloc(r->n ? r->n : 1, 1); /* 1: on this walk, 2: done */
	for (size_t i = 0; seen && i < r->n && !st; i++) {
		size_t x = i;
		while (seen[x] == 0 && r->rows[x].aft >= 0) {
			seen[x] = 1;
			x = (size_t)r->rows[x].aft;
		}
		if (seen[x] == 1)
			st = aorta_fail(e, AORTA_EINPUT, r->path, r->rows[x].line, -1,
					"after '%.60s' closes a cycle of ops each waiting for the next (expected "
					"ops to wait for earlier ones)", strtab_get(&r->s, r->rows[x].after));
		for (x = i; seen[x] == 1; x = (size_t)r->rows[x].aft)
			seen[x] = 2;
	}
	free(seen);
	return st;
}

/* A seq given twice in one group of one rank would make two calls one:
 * the later row is refused (counted, with its line and the first's). */
struct seq_ref { uint32_t group; int64_t seq; long long line; size_t row; };

static int cmp_seq_ref(const void *a, const void *b)
{
	const struct seq_ref *x = a, *y = b;
	if (x->group != y->group)
		return (x->group > y->group) - (x->group < y->group);
	if (x->seq != y->seq)
		return (x->seq > y->seq) - (x->seq < y->seq);
	return (x->line > y->line) - (x->line < y->line);
}

static void refuse_repeated_seq(struct ot *r, size_t lo, size_t hi)
{
	struct seq_ref *v = NULL;
	size_t m = 0, cap = 0;
	for (size_t i = lo; i < hi; i++) {
		const struct ot_row *w = &r->rows[i];
		if (w->kind != K_COMM || w->seq < 0)
			continue;
		GROW(v, cap, m + 1);
		v[m++] = (struct seq_ref){ w->group, w->seq, w->line, i };
	}
	if (m > 1)
		qsort(v, m, sizeof(*v), cmp_seq_ref);
	for (size_t k = 1, first = 0; k < m; k++) {
		if (v[k].group != v[first].group || v[k].seq != v[first].seq) {
			first = k;
			continue;
		}
		struct ot_row *w = &r->rows[v[k].row];
		w->dropped = 1;
		skip_row(r, w->line, "seq %lld of group '%s' on rank %d again (first on line %lld): a repeated "
			 "seq would merge two calls", (long long)w->seq, w->group ? strtab_get(&r->s, w->group) : "",
			 w->rank, v[first].line);
	}
	free(v);
}

/* ------------------------------------------------------------------------ */
/* entry points                                                              */

/* The reader's state while lines come in (from memory or a stream). */
struct ot_parse {
	struct ot r;
	enum aorta_status st;
	long long ln;
	int json, header;   /* json: -1 before the version line, 0 CSV, 1 JSONL */
	size_t bytes;       /* bytes seen (to tell an empty file from blank lines) */
};

static void ot_begin(struct ot_parse *q, const char *path)
{
	memset(q, 0, sizeof(*q));
	q->r.path = path;
	strtab_init(&q->r.s);
	for (int c = 0; c < OC__N; c++)
		q->r.idx[c] = -1;
	q->json = -1;
}

/* One line (without its '\n'; not NUL-terminated).  Sets q->st on an
 * input error. */
static void ot_line(struct ot_parse *q, const char *p, size_t l, struct aorta_error *e)
{
	struct ot *r = &q->r;
	const char *path = r->path;
	long long ln = ++q->ln;

	if (ln == 1 && l >= 3 && !memcmp(p, "\xef\xbb\xbf", 3)) { /* a UTF-8 byte order mark */
		p += 3;
		l -= 3;
	}
	if (l > OT_MAX_LINE) {
		q->st = aorta_fail(e, AORTA_EINPUT, path, ln, -1,
				   "a line of %zu bytes (expected at most %u per row)", l, OT_MAX_LINE);
		return;
	}
	GROW(r->scratch, r->scap, l + 1);
	memcpy(r->scratch, p, l);
	r->scratch[l] = '\0';
	if (l && r->scratch[l - 1] == '\r')
		r->scratch[--l] = '\0';
	if (memchr(r->scratch, '\0', l)) {
		q->st = aorta_fail(e, AORTA_EINPUT, path, ln, -1, "a NUL byte (expected a text op table)");
		return;
	}
	const char *t = r->scratch;
	while (*t == ' ' || *t == '\t')
		t++;
	if (!*t)
		return;
	if (q->json < 0) {
		/* the version line */
		if (*t == '#') {
			const char *v = t + 1;
			while (*v == ' ' || *v == '\t')
				v++;
			if (strncmp(v, "aorta.optable/", 14) != 0)
				q->st = aorta_fail(e, AORTA_EINPUT, path, ln, -1,
						   "expected '# aorta.optable/1' as the first line");
			else if (strncmp(v + 14, "1", 1) != 0 || isdigit((unsigned char)v[15]))
				q->st = aorta_fail(e, AORTA_EINPUT, path, ln, -1,
						   "op table version '%.16s' (this aorta reads aorta.optable/1)",
						   v + 14);
			q->json = 0;
		} else if (*t == '{') {
			char err[128];
			yajl_val root = yajl_tree_parse(t, err, sizeof(err));
			yajl_val sv = root && YAJL_IS_OBJECT(root) ? jget(root, "schema") : NULL;
			const char *sch = sv && YAJL_IS_STRING(sv) ? YAJL_GET_STRING(sv) : NULL;
			if (!sch || strncmp(sch, "aorta.optable/", 14) != 0)
				q->st = aorta_fail(e, AORTA_EINPUT, path, ln, -1,
						   "expected {\"schema\": \"aorta.optable/1\"} as the first line");
			else if (strcmp(sch + 14, "1") != 0)
				q->st = aorta_fail(e, AORTA_EINPUT, path, ln, -1,
						   "op table version '%.16s' (this aorta reads aorta.optable/1)",
						   sch + 14);
			yajl_tree_free(root);
			q->json = 1;
			q->header = 1;
		} else {
			q->st = aorta_fail(e, AORTA_EINPUT, path, ln, -1,
					   "expected '# aorta.optable/1' (CSV) or {\"schema\": "
					   "\"aorta.optable/1\"} (JSON lines) as the first line");
		}
		return;
	}
	if (q->json == 0) {
		if (*t == '#')
			return;
		if (!q->header) {
			q->st = csv_header(r, r->scratch, ln, e);
			q->header = 1;
		} else {
			csv_row(r, r->scratch, ln);
		}
	} else {
		jsonl_row(r, t, ln, &q->st, e);
	}
}

/* After the last line: the traces, one per rank, into out. */
static enum aorta_status ot_end(struct ot_parse *q, const struct ingest_opts *o, struct trace_set *out,
				struct aorta_error *e)
{
	struct ot *r = &q->r;
	const char *path = r->path;
	enum aorta_status st = q->st;
	struct trace_set got = { 0 };

	if (st == AORTA_OK && q->json < 0)
		st = aorta_fail(e, AORTA_EINPUT, path, q->ln, -1,
				q->bytes ? "only blank lines (expected '# aorta.optable/1')" : "an empty file");
	if (st == AORTA_OK && q->json == 0 && !q->header)
		st = aorta_fail(e, AORTA_EINPUT, path, q->ln, -1,
				"no header line after '# aorta.optable/1' (expected rank,step,op,kind,...)");
	if (st == AORTA_OK && r->n == 0)
		st = aorta_fail(e, AORTA_EINPUT, path, q->ln, -1, "no operation rows%s%s",
				r->skipped ? "; every row was malformed, the first: " : "",
				r->skipped ? r->skipped_first : "");
	if (st == AORTA_OK) {
		qsort(r->rows, r->n, sizeof(*r->rows), cmp_row);
		st = resolve_after(r, e);
	}
	if (st == AORTA_OK) {
		int world = r->rows[r->n - 1].rank + 1;
		for (size_t lo = 0; lo < r->n;) {
			size_t hi = lo + 1;
			while (hi < r->n && r->rows[hi].rank == r->rows[lo].rank)
				hi++;
			refuse_repeated_seq(r, lo, hi);
			struct trace *t = build_rank(r, lo, hi, world, o, e);
			if (!t) {
				st = AORTA_EINPUT;
				break;
			}
			trace_set_add(&got, t);
			lo = hi;
		}
	}
	if (st == AORTA_OK) {
		if (r->skipped) { /* the reader's skips (with their line) first, then the layer's */
			struct trace *t0 = got.t[0];
			snprintf(t0->skipped_first, sizeof(t0->skipped_first), "%s", r->skipped_first);
			t0->skipped += r->skipped;
		}
		for (size_t i = 0; i < got.n; i++)
			trace_set_add(out, got.t[i]);
		free(got.t);
	} else {
		trace_set_release(&got);
	}
	strtab_release(&r->s);
	free(r->rows);
	free(r->scratch);
	return st;
}

enum aorta_status ingest_optable_mem(const char *path, const void *buf, size_t len,
				     const struct ingest_opts *o, struct trace_set *out,
				     struct aorta_error *e)
{
	struct ot_parse q;
	const char *p = buf, *end = p + len;

	ot_begin(&q, path);
	q.bytes = len;
	while (p < end && q.st == AORTA_OK) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
		ot_line(&q, p, l, e);
		p = nl ? nl + 1 : end;
	}
	return ot_end(&q, o, out, e);
}

/* From a stream, line by line: the text is never held whole, so the size
 * limit (INGEST_MAX_SMALL_BYTES of decompressed text) is a bound on what is
 * read, not on what is already in memory; a plain file larger than it is
 * refused before a byte is read. */
enum aorta_status ingest_optable(const char *path, const struct ingest_opts *o,
				 struct trace_set *out, struct aorta_error *e)
{
	struct zread *z;
	enum aorta_status st;
	struct ot_parse q;

	if ((st = ingest_stream_open(path, o, &z, e)))
		return st;
	if ((st = zread_limit(z, INGEST_MAX_SMALL_BYTES, "an op table (INGEST_MAX_SMALL_BYTES)", e))) {
		ingest_stream_close(o, z);
		return st;
	}
	ot_begin(&q, path);
	size_t cap = 1 << 16, have = 0; /* buf[0, have): the bytes of lines not yet complete */
	char *buf = xmalloc(cap);
	for (;;) {
		if (have == cap) {
			if (cap > OT_MAX_LINE + 1) { /* a line past the limit: ot_line says so */
				ot_line(&q, buf, have, e);
				break;
			}
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
		ssize_t n = zread_read(z, buf + have, cap - have, e);
		if (n < 0) {
			q.st = e && e->code ? e->code : AORTA_EINPUT;
			break;
		}
		q.bytes += (size_t)n;
		if (n == 0) {
			if (have)
				ot_line(&q, buf, have, e);
			break;
		}
		size_t from = have, done = 0;
		have += (size_t)n;
		for (const char *nl; q.st == AORTA_OK &&
		     (nl = memchr(buf + from, '\n', have - from)); from = (size_t)(nl - buf) + 1) {
			ot_line(&q, buf + done, (size_t)(nl - buf) - done, e);
			done = (size_t)(nl - buf) + 1;
		}
		if (q.st)
			break;
		memmove(buf, buf + done, have - done);
		have -= done;
	}
	free(buf);
	ingest_stream_close(o, z);
	return ot_end(&q, o, out, e);
}
