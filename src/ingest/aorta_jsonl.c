/*
 * aorta_jsonl.c - aorta's / upstream AORTA's per-rank metrics JSONL
 * (rank_XX_metrics.jsonl), one JSON object per training iteration.
 *
 * Design.  The file is read through zread in 64 KiB chunks and split into
 * lines; each non-blank line is parsed with yajl's tree API (lines are a few
 * KB) and freed before the next, so memory follows the spans kept, not the
 * file.  Each line: {rank, world_size, global_step, profile{total_ms,
 * ranges[{stream, tag, start_ms, end_ms, metadata{function, bytes}}],
 * ...}}.  metadata.bytes (aorta train: a collective's message size at its
 * real element size), when a number >= 0, is the span's bytes (0: unknown).
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
 * Bad input.  A line that is not valid JSON (or holds a NUL byte) is
 * AORTA_EINPUT naming the line and the byte offset of the error in the
 * (decompressed) file, except when it is the last non-blank line: a run
 * that crashed mid-write leaves its last line cut, so that line is skipped
 * (trace_skip, with the same description) and the complete lines are used.  A line that is not an object, lacks profile or
 * profile.total_ms, or has total_ms < 0 is skipped (trace_skip); so is a
 * range with a missing or non-numeric field or end < start.  rank and
 * world_size come from the first line that has them (o->rank_hint, else 0,
 * when none does).
 */
#include "ingest/ingest.h"
#include "ingest/ingest_mem.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>
#include <yajl/yajl_tree.h>

#include "base/zread.h"

#define MAX_MS 1e9 /* |ms| above ~11.6 days is not an iteration time */
#define MAX_LINE (64u << 20)

struct jl {
	const char *path;
	const struct ingest_opts *o;
	struct trace *t;
	int64_t base_ns;      /* start of the next iteration */
	long long lines;      /* non-blank lines seen */
	int have_rank, have_world;
	char **streams;       /* names of streams 4, 5, ... */
	size_t nstreams, scap;
	char *name;           /* scratch for span names */
	size_t ncap;
	char *lean;           /* the line without active_segments (drop_segments) */
	size_t lcap;
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

static yajl_val get(yajl_val obj, const char *key)
{
	const char *path[2] = { key, NULL };

	return obj && YAJL_IS_OBJECT(obj) ? yajl_tree_get(obj, path, yajl_t_any) : NULL;
}

/* A finite JSON number as a double; -1 if absent or not a number. */
static int num(yajl_val v, double *d)
{
	if (!v || !YAJL_IS_NUMBER(v))
		return -1;
	if (YAJL_IS_INTEGER(v))
		*d = (double)YAJL_GET_INTEGER(v);
	else if (YAJL_IS_DOUBLE(v))
		*d = YAJL_GET_DOUBLE(v);
	else
		return -1;
	return isfinite(*d) ? 0 : -1;
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

static void add_range(struct jl *j, yajl_val rg, long long line, size_t idx)
{
	yajl_val vs = get(rg, "stream"), vt = get(rg, "tag"), md = get(rg, "metadata");
	yajl_val fn = get(md, "function"), vb = get(md, "bytes");
	uint64_t bytes = 0;
	double bd;
	const char *stream, *tag, *func = NULL, *prefix;
	double s_ms, e_ms;
	int64_t s_ns, e_ns;
	enum record_hint hint = R_KERNEL;
	int32_t sid;
	size_t need;

	if (!rg || !YAJL_IS_OBJECT(rg)) {
		trace_skip(j->t, "line %lld: range %zu is not an object", line, idx);
		return;
	}
	if (!vs || !YAJL_IS_STRING(vs) || !vt || !YAJL_IS_STRING(vt)) {
		trace_skip(j->t, "line %lld: range %zu: missing stream or tag string", line, idx);
		return;
	}
	if (num(get(rg, "start_ms"), &s_ms) || num(get(rg, "end_ms"), &e_ms) ||
	    ms_to_ns(s_ms, &s_ns) || ms_to_ns(e_ms, &e_ns)) {
		trace_skip(j->t, "line %lld: range %zu: start_ms or end_ms missing or not a number",
			   line, idx);
		return;
	}
	if (e_ns < s_ns) {
		trace_skip(j->t, "line %lld: range %zu: end_ms before start_ms", line, idx);
		return;
	}
	stream = YAJL_GET_STRING(vs);
	tag = short_tag(YAJL_GET_STRING(vt));
	if (fn && YAJL_IS_STRING(fn))
		func = YAJL_GET_STRING(fn);
	if (!num(vb, &bd) && bd >= 0 && bd < 1e18)
		bytes = (uint64_t)bd;
	sid = stream_id(j, stream);
	yajl_val vc = get(rg, "collective");
	enum coll_type ct = vc && YAJL_IS_STRING(vc) ? coll_type_from_name(YAJL_GET_STRING(vc)) : COLL_NONE;
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
		need = strlen(prefix) + strlen(tag) + 1;
		GROW(j->name, j->ncap, need);
		snprintf(j->name, j->ncap, "%s%s", prefix, tag);
	} else {
		static const char pf[] = "Memcpy HtoD (aorta prefetch)";

		GROW(j->name, j->ncap, sizeof(pf));
		memcpy(j->name, pf, sizeof(pf));
		hint = R_MEMCPY;
	}
	trace_add_device(j->t, j->base_ns + s_ns, j->base_ns + e_ns, j->name, strlen(j->name),
			 hint, sid, -1, bytes);
}

static int is_comm_stream(const char *k)
{
	return !strcmp(k, "allreduce") || !strcmp(k, "reducescatter") || !strcmp(k, "allgather") ||
	       !strcmp(k, "comm") || !strncmp(k, "nccl", 4);
}

/* A number of obj[key], else dflt. */
static double numor(yajl_val obj, const char *key, double dflt)
{
	double d;
	return num(get(obj, key), &d) ? dflt : d;
}

/* The line's own figures, as upstream's overlap_report.py reads them. */
static void record(struct trace *t, yajl_val doc, yajl_val prof, int64_t number, double total_ms)
{
	yajl_val ov = get(prof, "overlap"), ps = get(ov, "per_stream_ms"), om = get(ov, "overlap_ms");
	double v[SR__COUNT], d;

	v[SR_STEP] = total_ms;
	v[SR_COMPUTE] = numor(ps, "compute", 0);
	v[SR_AUX] = numor(ps, "aux", 0);
	v[SR_COMM] = 0;
	if (ps && YAJL_IS_OBJECT(ps))
		for (size_t i = 0; i < YAJL_GET_OBJECT(ps)->len; i++)
			if (is_comm_stream(YAJL_GET_OBJECT(ps)->keys[i]) &&
			    !num(YAJL_GET_OBJECT(ps)->values[i], &d))
				v[SR_COMM] += d;
	v[SR_OVERLAP] = numor(om, "compute_comm", 0);
	v[SR_AR_OVERLAP] = numor(om, "compute_allreduce", 0);
	v[SR_RS_OVERLAP] = numor(om, "compute_reducescatter", 0);
	v[SR_AG_OVERLAP] = numor(om, "compute_allgather", 0);
	v[SR_IDLE] = numor(om, "idle", 0);
	v[SR_EXPOSED] = v[SR_COMM] > v[SR_OVERLAP] ? v[SR_COMM] - v[SR_OVERLAP] : 0;
	v[SR_LOSS] = numor(doc, "loss", NAN);
	trace_add_record(t, number, v);
}

/* One parsed line. */
static void add_line(struct jl *j, yajl_val doc, long long line)
{
	yajl_val prof, ranges, v;
	double total_ms, d;
	int64_t total_ns, number, end;

	if (!YAJL_IS_OBJECT(doc)) {
		trace_skip(j->t, "line %lld: not a json object", line);
		return;
	}
	if (!j->have_rank && !num(get(doc, "rank"), &d) && d >= 0 && d < 1e7) {
		j->t->rank = (int)d;
		j->have_rank = 1;
	}
	if (!j->have_world && !num(get(doc, "world_size"), &d) && d > 0 && d < 1e7) {
		j->t->world_size = (int)d;
		j->have_world = 1;
	}
	prof = get(doc, "profile");
	if (!prof || !YAJL_IS_OBJECT(prof)) {
		trace_skip(j->t, "line %lld: no 'profile' object", line);
		return;
	}
	if (num(get(prof, "total_ms"), &total_ms) || total_ms < 0 ||
	    ms_to_ns(total_ms, &total_ns)) {
		trace_skip(j->t, "line %lld: profile.total_ms missing, negative or not a number",
			   line);
		return;
	}
	if (__builtin_add_overflow(j->base_ns, total_ns, &end) || end > INT64_MAX / 2) {
		trace_skip(j->t, "line %lld: timeline overflow", line);
		return;
	}
	v = get(doc, "global_step");
	if (!num(v, &d) && fabs(d) < 9e15)
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
	record(j->t, doc, prof, number, total_ms);
	ranges = get(prof, "ranges");
	if (ranges && YAJL_IS_ARRAY(ranges)) {
		for (size_t i = 0; i < YAJL_GET_ARRAY(ranges)->len; i++)
			add_range(j, YAJL_GET_ARRAY(ranges)->values[i], line, i);
	} else if (ranges) {
		trace_skip(j->t, "line %lld: profile.ranges is not an array", line);
	}
	j->base_ns = end;
}

/* Removes the member "active_segments": [...] (upstream's list of
 * elementary segments per step: most of a line, thousands of small values
 * aorta does not use) from the NUL-terminated line s of length n, in place,
 * so the tree parser does not build it.  The scan is quote-aware and
 * removes the member only where "active_segments" is an object key (after
 * '{' or ',') followed by ':' and an array; anything else is left as it is,
 * and yajl still checks the whole line's syntax but for that array's
 * contents.  Returns the new length. */
static size_t drop_segments(char *s, size_t n)
{
	static const char key[] = "\"active_segments\"";
	const size_t kl = sizeof(key) - 1;
	size_t sep = SIZE_MAX; /* the last ',' or '{' outside strings, if only blanks follow it */

	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == ',' || c == '{') {
			sep = i;
			continue;
		}
		if (c == ' ' || c == '\t')
			continue;
		if (c != '"') {
			sep = SIZE_MAX;
			continue;
		}
		size_t q = i + 1; /* end of this string */
		while (q < n && s[q] != '"')
			q += s[q] == '\\' ? 2 : 1;
		if (sep != SIZE_MAX && q < n && q + 1 - i == kl && !memcmp(s + i, key, kl)) {
			size_t k = q + 1;
			while (k < n && (s[k] == ' ' || s[k] == '\t'))
				k++;
			int colon = k < n && s[k] == ':';
			if (colon) {
				k++;
				while (k < n && (s[k] == ' ' || s[k] == '\t'))
					k++;
			}
			if (colon && k < n && s[k] == '[') {
				int depth = 0, in = 0;
				size_t e;
				for (e = k; e < n; e++) {
					if (in) {
						if (s[e] == '\\')
							e++;
						else if (s[e] == '"')
							in = 0;
					} else if (s[e] == '"') {
						in = 1;
					} else if (s[e] == '[' || s[e] == '{') {
						depth++;
					} else if ((s[e] == ']' || s[e] == '}') && --depth == 0) {
						break;
					}
				}
				if (e < n) { /* [from, to) goes */
					size_t from = s[sep] == ',' ? sep : i, to = e + 1;
					if (s[sep] == '{') { /* the first member: take the comma after it */
						while (to < n && (s[to] == ' ' || s[to] == '\t'))
							to++;
						if (to < n && s[to] == ',')
							to++;
					}
					memmove(s + from, s + to, n - to + 1);
					return n - (to - from);
				}
			}
		}
		sep = SIZE_MAX;
		i = q; /* past the string */
	}
	return n;
}

/* Byte offset, within line, at which yajl stops on it. */
static size_t error_offset(const char *s, size_t n)
{
	yajl_handle h = yajl_alloc(NULL, NULL, NULL);
	size_t at = n;

	if (yajl_parse(h, (const unsigned char *)s, n) != yajl_status_ok)
		at = yajl_get_bytes_consumed(h);
	else if (yajl_complete_parse(h) != yajl_status_ok)
		at = n;
	yajl_free(h);
	return at;
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
	char err[256];
	yajl_val doc;
	size_t i;

	while (n && (line[n - 1] == '\r' || line[n - 1] == ' ' || line[n - 1] == '\t'))
		line[--n] = '\0';
	for (i = 0; i < n && (line[i] == ' ' || line[i] == '\t'); i++)
		;
	if (i == n)
		return AORTA_OK; /* blank line */
	if (j->pending) {
		if (e)
			*e = j->pend;
		return j->pend.code;
	}
	j->lines++;
	if (memchr(line, '\0', n))
		return invalid(j, e, aorta_fail(&j->pend, AORTA_EINPUT, j->path, lineno,
				  off + (long long)((const char *)memchr(line, '\0', n) - line),
				  "invalid json: NUL byte; expected one json object per line"));
	err[0] = '\0';
	GROW(j->lean, j->lcap, n + 1);
	memcpy(j->lean, line, n + 1);
	drop_segments(j->lean, n);
	doc = yajl_tree_parse(j->lean, err, sizeof(err));
	if (!doc) { /* errors are placed on the line as written */
		size_t at = error_offset(line, n), k;

		for (k = 0; err[k]; k++)
			if (err[k] == '\n')
				err[k] = ' ';
		for (k = strlen(err); k > 0 && (err[k - 1] == ' ' || err[k - 1] == '.'); k--)
			err[k - 1] = '\0';
		return invalid(j, e, aorta_fail(&j->pend, AORTA_EINPUT, j->path, lineno, off + (long long)at,
						 "invalid json (%s); expected one json object per line",
						 err[0] ? err : "parse error"));
	}
	add_line(j, doc, lineno);
	yajl_tree_free(doc);
	return AORTA_OK;
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
}

static void jl_release(struct jl *j)
{
	for (size_t i = 0; i < j->nstreams; i++)
		free(j->streams[i]);
	free(j->streams);
	free(j->name);
	free(j->lean);
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

enum aorta_status ingest_aorta_jsonl(const char *path, const struct ingest_opts *o,
				     struct trace_set *out, struct aorta_error *e)
{
	struct zread *z = NULL;
	struct jl j;
	char *buf = NULL;       /* pending bytes: [0, have) */
	size_t cap = 0, have = 0;
	long long lineno = 1, off = 0; /* line number and offset of buf[0] */
	enum aorta_status st;

	st = zread_open(path, &z, e);
	if (st)
		return st;
	jl_init(&j, path, o);
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
	zread_close(z);
	jl_release(&j);
	return st;
}
