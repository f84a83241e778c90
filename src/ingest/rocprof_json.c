/*
 * rocprof_json.c - rocprofv3 --output-format json (<pid>_results.json[.gz]).
 *
 * Design.  The document is {"rocprofiler-sdk-tool":[{metadata, agents[],
 * kernel_symbols[], buffer_records{kernel_dispatch[], memory_copy[],
 * hip_api[], ...}, strings, ...}]} and inflates to tens of MB, so it is read
 * with yajl's event (SAX) parser in 64 KiB chunks from zread, never as a tree.
 * A small stack of contexts follows the path to the few objects we need;
 * every other subtree is skipped by counting its depth.  Each record is
 * reduced to a 56-byte struct rec as soon as its object closes.
 * kernel_symbols may come after the dispatches (they do in real files), so
 * names are resolved at the end: kernel_id -> formatted_kernel_name (what the
 * CSV output shows), else demangled_kernel_name, else kernel_name, else
 * truncated_kernel_name; an id with no symbol is named "kernel_id N".
 *
 * Ranks.  One struct trace per agent that has device records.  GPU agents
 * (type 2) are numbered 0..n-1 in logical_node_id order (node_id when absent,
 * else order of appearance); rank = device = that ordinal and world_size = n,
 * the number of GPU agents the file lists (a process that sees 8 GPUs but
 * uses one yields one trace, rank = its GPU's ordinal, world_size 8).  Agents
 * a record names that are not listed as GPUs come after, ordered by handle.
 * When the file has no records at all one empty trace is emitted (rank =
 * o->rank_hint, else 0).  pid = metadata.pid.
 *
 * Spans.  kernel_dispatch: [start_timestamp, end_timestamp] ns on
 * dispatch_info.agent_id, stream = stream_id.handle, else
 * dispatch_info.queue_id.handle, else 0 (truncated to 31 bits), corr =
 * correlation_id.internal.  memory_copy: operation 1..4 = host-to-host,
 * host-to-device, device-to-host, device-to-device (the MEMORY_COPY operation
 * table of rocprofiler-sdk), named "Memcpy HtoD (Host -> Device)" etc. with
 * R_MEMCPY, placed on dst_agent_id for host-to-device and src_agent_id
 * otherwise; bytes from "bytes".  hip_api records become host launches
 * (correlation_id.internal, on their thread_id) on every trace; rccl_api
 * records (RCCL's API calls, named by the operation's name in
 * strings.buffer_records[kind RCCL_API].operations) become host collective
 * calls on their thread, which name the collective of an RCCL kernel
 * launched inside (docs/metrics.md "Collective identity").  marker_api
 * records carry no message text in the buffer record, so steps are not read
 * (limitation).
 *
 * Bad input.  Invalid JSON or a document without the rocprofiler-sdk-tool
 * array is AORTA_EINPUT with the byte offset (decompressed); a record with a
 * field of the wrong type, a missing field or end < start is skipped and
 * counted (trace_skip on the first trace).
 */
#include "ingest/ingest.h"
#include "ingest/ingest_mem.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#include "base/zread.h"

enum ctx {
	X_SKIP = 0, X_ROOT, X_TOOLS, X_TOOL, X_META, X_AGENTS, X_AGENT, X_AGENT_ID,
	X_SYMS, X_SYM, X_BUF,
	X_KD_ARR, X_KD, X_KD_CORR, X_KD_DI, X_KD_AGENT, X_KD_QUEUE, X_KD_STREAM,
	X_MC_ARR, X_MC, X_MC_CORR, X_MC_SRC, X_MC_DST, X_MC_STREAM,
	X_HIP_ARR, X_HIP, X_HIP_CORR,
	X_RCCL_ARR, X_RCCL, X_STRS, X_SBR_ARR, X_SBR, X_SBR_OPS,
};

#define MAX_FRAMES 16

/* Field bits of the record being read. */
enum {
	H_START = 1 << 0, H_END = 1 << 1, H_CORR = 1 << 2, H_AGENT = 1 << 3,
	H_QUEUE = 1 << 4, H_STREAM = 1 << 5, H_KID = 1 << 6, H_OP = 1 << 7,
	H_SRC = 1 << 8, H_DST = 1 << 9, H_BYTES = 1 << 10, H_TYPE = 1 << 11,
	H_NODE = 1 << 12, H_LNODE = 1 << 13, H_HANDLE = 1 << 14, H_TID = 1 << 15,
};

enum rec_type { RT_KERNEL = 0, RT_COPY = 1 };

/* One device record, compact. */
struct rec {
	int64_t start, end, corr;
	int64_t agent;        /* agent handle */
	int64_t id;           /* kernel_id, or memory-copy operation */
	uint64_t bytes;       /* memory copies only */
	int32_t stream;
	uint8_t type;         /* enum rec_type */
};

struct sym { int64_t kid; uint32_t name; };

struct agent_info {
	int64_t handle, type, order;
	int ordinal;          /* GPU ordinal, -1 if not a GPU */
	struct trace *t;
};

struct cur {
	unsigned have;
	int64_t start, end, corr, agent, queue, stream, kid, op, src, dst, bytes;
	int64_t type, node, lnode, handle, tid;
	char bad[96];
	char *name[4];        /* formatted, demangled, kernel_name, truncated */
	size_t name_len[4];
};

struct jr {
	const char *path;
	const struct ingest_opts *o;
	enum ctx stack[MAX_FRAMES];
	int depth;            /* frames in use */
	long skip;            /* depth inside a skipped subtree */
	char key[40];         /* last key of the innermost map (truncated) */
	int key_long;         /* it was longer than key[] */
	int seen_tool;
	int64_t pid;

	struct cur c;

	struct rec *rec;
	size_t nrec, rcap;
	struct launch_rec *launch;
	size_t nlaunch, lcap;
	struct rcall { int64_t tid, start, end, op; } *rc; /* rccl_api records */
	size_t nrc, rccap;
	char **rops;          /* RCCL_API's operation names, by operation number */
	size_t nrops;
	char **tops;          /* the operations of the strings record being read */
	size_t ntops, tcap;
	int tkind_rccl;       /* that record's kind is RCCL_API */
	struct sym *sym;
	size_t nsym, scap;
	struct strtab names;  /* chosen kernel names */
	struct agent_info *ag;
	size_t nag, agcap;

	uint64_t nskip;
	char skip_first[256];
};

static void jr_skip(struct jr *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void jr_skip(struct jr *r, const char *fmt, ...)
{
	va_list ap;

	if (r->nskip++)
		return;
	va_start(ap, fmt);
	vsnprintf(r->skip_first, sizeof(r->skip_first), fmt, ap);
	va_end(ap);
}

static void cur_reset(struct cur *c)
{
	for (int i = 0; i < 4; i++)
		free(c->name[i]);
	memset(c, 0, sizeof(*c));
}

static int key_is(const struct jr *r, const char *k)
{
	return !r->key_long && strcmp(r->key, k) == 0;
}

static enum ctx top(const struct jr *r)
{
	return r->depth ? r->stack[r->depth - 1] : X_SKIP;
}

/* Context of a container opened in the current position. */
static enum ctx child_ctx(struct jr *r, int is_map)
{
	if (r->depth == 0)
		return is_map ? X_ROOT : X_SKIP;
	switch (top(r)) {
	case X_ROOT:
		return !is_map && key_is(r, "rocprofiler-sdk-tool") ? X_TOOLS : X_SKIP;
	case X_TOOLS:
		return is_map ? X_TOOL : X_SKIP;
	case X_TOOL:
		if (is_map && key_is(r, "metadata"))
			return X_META;
		if (!is_map && key_is(r, "agents"))
			return X_AGENTS;
		if (!is_map && key_is(r, "kernel_symbols"))
			return X_SYMS;
		if (is_map && key_is(r, "buffer_records"))
			return X_BUF;
		if (is_map && key_is(r, "strings"))
			return X_STRS;
		return X_SKIP;
	case X_STRS:
		return !is_map && key_is(r, "buffer_records") ? X_SBR_ARR : X_SKIP;
	case X_SBR_ARR:
		return is_map ? X_SBR : X_SKIP;
	case X_SBR:
		return !is_map && key_is(r, "operations") ? X_SBR_OPS : X_SKIP;
	case X_RCCL_ARR:
		return is_map ? X_RCCL : X_SKIP;
	case X_AGENTS:
		return is_map ? X_AGENT : X_SKIP;
	case X_AGENT:
		return is_map && key_is(r, "id") ? X_AGENT_ID : X_SKIP;
	case X_SYMS:
		return is_map ? X_SYM : X_SKIP;
	case X_BUF:
		if (is_map)
			return X_SKIP;
		if (key_is(r, "kernel_dispatch"))
			return X_KD_ARR;
		if (key_is(r, "memory_copy"))
			return X_MC_ARR;
		if (key_is(r, "hip_api"))
			return X_HIP_ARR;
		if (key_is(r, "rccl_api"))
			return X_RCCL_ARR;
		return X_SKIP;
	case X_KD_ARR:
		return is_map ? X_KD : X_SKIP;
	case X_KD:
		if (!is_map)
			return X_SKIP;
		if (key_is(r, "correlation_id"))
			return X_KD_CORR;
		if (key_is(r, "dispatch_info"))
			return X_KD_DI;
		if (key_is(r, "stream_id"))
			return X_KD_STREAM;
		return X_SKIP;
	case X_KD_DI:
		if (is_map && key_is(r, "agent_id"))
			return X_KD_AGENT;
		if (is_map && key_is(r, "queue_id"))
			return X_KD_QUEUE;
		return X_SKIP;
	case X_MC_ARR:
		return is_map ? X_MC : X_SKIP;
	case X_MC:
		if (!is_map)
			return X_SKIP;
		if (key_is(r, "correlation_id"))
			return X_MC_CORR;
		if (key_is(r, "src_agent_id"))
			return X_MC_SRC;
		if (key_is(r, "dst_agent_id"))
			return X_MC_DST;
		if (key_is(r, "stream_id"))
			return X_MC_STREAM;
		return X_SKIP;
	case X_HIP_ARR:
		return is_map ? X_HIP : X_SKIP;
	case X_HIP:
		return is_map && key_is(r, "correlation_id") ? X_HIP_CORR : X_SKIP;
	default:
		return X_SKIP;
	}
}

static int is_record_array(enum ctx c)
{
	return c == X_KD_ARR || c == X_MC_ARR || c == X_HIP_ARR || c == X_RCCL_ARR;
}

static const char *array_name(enum ctx c)
{
	return c == X_KD_ARR ? "kernel_dispatch" : c == X_MC_ARR ? "memory_copy" : c == X_HIP_ARR ? "hip_api"
											: "rccl_api";
}

static int open_container(struct jr *r, int is_map)
{
	enum ctx c;

	if (r->skip) {
		r->skip++;
		return 1;
	}
	c = child_ctx(r, is_map);
	if (c == X_SKIP && is_record_array(top(r)))
		jr_skip(r, "%s record is not an object", array_name(top(r)));
	if (c == X_SKIP || r->depth >= MAX_FRAMES) {
		r->skip = 1;
		return 1;
	}
	if (c == X_TOOLS)
		r->seen_tool = 1;
	r->stack[r->depth++] = c;
	if (c == X_KD || c == X_MC || c == X_HIP || c == X_RCCL || c == X_SYM || c == X_AGENT)
		cur_reset(&r->c);
	if (c == X_SBR) {
		for (size_t k = 0; k < r->ntops; k++)
			free(r->tops[k]);
		r->ntops = 0;
		r->tkind_rccl = 0;
	}
	r->key[0] = '\0';
	r->key_long = 0;
	return 1;
}

static void bad(struct jr *r, const char *what)
{
	if (!r->c.bad[0])
		snprintf(r->c.bad, sizeof(r->c.bad), "%s", what);
}

static void end_kd(struct jr *r)
{
	struct cur *c = &r->c;
	struct rec *x;

	if (c->bad[0]) {
		jr_skip(r, "kernel_dispatch record: %s", c->bad);
		return;
	}
	if ((c->have & (H_START | H_END | H_AGENT | H_KID)) != (H_START | H_END | H_AGENT | H_KID)) {
		jr_skip(r, "kernel_dispatch record: missing start_timestamp, end_timestamp, "
			   "dispatch_info.agent_id or dispatch_info.kernel_id");
		return;
	}
	if (c->end < c->start) {
		jr_skip(r, "kernel_dispatch record: end_timestamp before start_timestamp");
		return;
	}
	GROW(r->rec, r->rcap, r->nrec + 1);
	x = &r->rec[r->nrec++];
	x->start = c->start;
	x->end = c->end;
	x->corr = c->have & H_CORR ? c->corr : -1;
	x->agent = c->agent;
	x->id = c->kid;
	x->stream = (int32_t)((c->have & H_STREAM ? c->stream : c->have & H_QUEUE ? c->queue : 0) &
			      0x7fffffff);
	x->type = RT_KERNEL;
	x->bytes = 0;
}

static void end_mc(struct jr *r)
{
	struct cur *c = &r->c;
	struct rec *x;
	int on_dst;

	if (c->bad[0]) {
		jr_skip(r, "memory_copy record: %s", c->bad);
		return;
	}
	if ((c->have & (H_START | H_END | H_OP)) != (H_START | H_END | H_OP)) {
		jr_skip(r, "memory_copy record: missing start_timestamp, end_timestamp or operation");
		return;
	}
	on_dst = c->op == 2;
	if (!(c->have & (on_dst ? H_DST : H_SRC))) {
		jr_skip(r, "memory_copy record: missing %s", on_dst ? "dst_agent_id" : "src_agent_id");
		return;
	}
	if (c->end < c->start) {
		jr_skip(r, "memory_copy record: end_timestamp before start_timestamp");
		return;
	}
	GROW(r->rec, r->rcap, r->nrec + 1);
	x = &r->rec[r->nrec++];
	x->start = c->start;
	x->end = c->end;
	x->corr = c->have & H_CORR ? c->corr : -1;
	x->agent = on_dst ? c->dst : c->src;
	x->id = c->op;
	x->stream = (int32_t)((c->have & H_STREAM ? c->stream : 0) & 0x7fffffff);
	x->type = RT_COPY;
	x->bytes = c->have & H_BYTES && c->bytes > 0 ? (uint64_t)c->bytes : 0;
}

static void end_hip(struct jr *r)
{
	struct cur *c = &r->c;

	if (c->bad[0] || (c->have & (H_START | H_END | H_CORR)) != (H_START | H_END | H_CORR) ||
	    c->end < c->start) {
		jr_skip(r, "hip_api record: %s", c->bad[0] ? c->bad : "missing or bad fields");
		return;
	}
	GROW(r->launch, r->lcap, r->nlaunch + 1);
	r->launch[r->nlaunch++] = (struct launch_rec){ c->corr, c->start, c->end, c->have & H_TID ? c->tid : -1 };
}

/* An RCCL API call (its name resolved at the end, from the strings). */
static void end_rccl(struct jr *r)
{
	struct cur *c = &r->c;

	if (c->bad[0] || (c->have & (H_START | H_END | H_OP | H_TID)) != (H_START | H_END | H_OP | H_TID) ||
	    c->end < c->start) {
		jr_skip(r, "rccl_api record: %s", c->bad[0] ? c->bad : "missing or bad fields");
		return;
	}
	GROW(r->rc, r->rccap, r->nrc + 1);
	r->rc[r->nrc++] = (struct rcall){ c->tid, c->start, c->end, c->op };
}

/* A strings.buffer_records entry: RCCL_API's operation names kept. */
static void end_sbr(struct jr *r)
{
	if (!r->tkind_rccl || r->rops)
		return;
	r->rops = r->tops;
	r->nrops = r->ntops;
	r->tops = NULL;
	r->ntops = r->tcap = 0;
}

static void end_sym(struct jr *r)
{
	struct cur *c = &r->c;
	int k;

	if (!(c->have & H_KID))
		return; /* not a usable symbol; names are optional */
	for (k = 0; k < 4; k++)
		if (c->name[k] && c->name_len[k])
			break;
	GROW(r->sym, r->scap, r->nsym + 1);
	r->sym[r->nsym].kid = c->kid;
	r->sym[r->nsym].name = k < 4 ? strtab_intern(&r->names, c->name[k], c->name_len[k]) : 0;
	r->nsym++;
}

static void end_agent(struct jr *r)
{
	struct cur *c = &r->c;
	struct agent_info *a;

	if (!(c->have & H_HANDLE))
		return;
	GROW(r->ag, r->agcap, r->nag + 1);
	a = &r->ag[r->nag];
	a->handle = c->handle;
	a->type = c->have & H_TYPE ? c->type : 0;
	a->order = c->have & H_LNODE ? c->lnode : c->have & H_NODE ? c->node : (int64_t)r->nag;
	a->ordinal = -1;
	a->t = NULL;
	r->nag++;
}

static int close_container(struct jr *r)
{
	enum ctx c;

	if (r->skip) {
		r->skip--;
		return 1;
	}
	if (!r->depth)
		return 1;
	c = r->stack[--r->depth];
	switch (c) {
	case X_KD: end_kd(r); break;
	case X_MC: end_mc(r); break;
	case X_HIP: end_hip(r); break;
	case X_RCCL: end_rccl(r); break;
	case X_SBR: end_sbr(r); break;
	case X_SYM: end_sym(r); break;
	case X_AGENT: end_agent(r); break;
	default: break;
	}
	r->key_long = 1; /* the key of the parent map was consumed */
	return 1;
}

static int cb_start_map(void *ctx) { return open_container(ctx, 1); }
static int cb_start_array(void *ctx) { return open_container(ctx, 0); }
static int cb_end(void *ctx) { return close_container(ctx); }

static int cb_key(void *ctx, const unsigned char *k, size_t n)
{
	struct jr *r = ctx;

	if (r->skip)
		return 1;
	r->key_long = n >= sizeof(r->key);
	if (!r->key_long) {
		memcpy(r->key, k, n);
		r->key[n] = '\0';
	}
	return 1;
}

/* Which field of the current record (if any) the current key names. */
static unsigned field_bit(const struct jr *r, int64_t **slot)
{
	struct cur *c = (struct cur *)&r->c;
	enum ctx x = top(r);

#define F(name, bit, var) if (key_is(r, name)) { *slot = &c->var; return bit; }
	switch (x) {
	case X_KD:
	case X_MC:
	case X_HIP:
	case X_RCCL:
		F("start_timestamp", H_START, start);
		F("end_timestamp", H_END, end);
		if (x == X_MC) {
			F("operation", H_OP, op);
			F("bytes", H_BYTES, bytes);
		}
		if (x == X_HIP || x == X_RCCL)
			F("thread_id", H_TID, tid);
		if (x == X_RCCL)
			F("operation", H_OP, op);
		break;
	case X_KD_CORR:
	case X_MC_CORR:
	case X_HIP_CORR:
		F("internal", H_CORR, corr);
		break;
	case X_KD_DI:
		F("kernel_id", H_KID, kid);
		break;
	case X_KD_AGENT:
		F("handle", H_AGENT, agent);
		break;
	case X_KD_QUEUE:
		F("handle", H_QUEUE, queue);
		break;
	case X_KD_STREAM:
	case X_MC_STREAM:
		F("handle", H_STREAM, stream);
		break;
	case X_MC_SRC:
		F("handle", H_SRC, src);
		break;
	case X_MC_DST:
		F("handle", H_DST, dst);
		break;
	case X_SYM:
		F("kernel_id", H_KID, kid);
		break;
	case X_AGENT:
		F("type", H_TYPE, type);
		F("node_id", H_NODE, node);
		F("logical_node_id", H_LNODE, lnode);
		break;
	case X_AGENT_ID:
		F("handle", H_HANDLE, handle);
		break;
	default:
		break;
	}
#undef F
	return 0;
}

/* Record in a nested object (correlation_id, dispatch_info...) reports
 * problems on the record itself. */
static void wrong_type(struct jr *r)
{
	char msg[96];

	snprintf(msg, sizeof(msg), "'%s' is not a number", r->key);
	bad(r, msg);
}

static int parse_num(const char *s, size_t n, int64_t *v)
{
	char tmp[64];
	size_t i = 0;
	int neg = 0;
	uint64_t u = 0;
	double d;

	if (n && (s[0] == '-')) {
		neg = 1;
		i = 1;
	}
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
		uint64_t dg = (uint64_t)(s[i] - '0');

		if (u > (UINT64_MAX - dg) / 10)
			break;
		u = u * 10 + dg;
	}
	if (i == n && n > (size_t)neg) {
		/* handles above INT64_MAX (uint64 in the writer) keep their bits */
		*v = neg ? (int64_t)(0 - u) : (int64_t)u;
		if (neg && u > (uint64_t)INT64_MAX + 1)
			return -1;
		return 0;
	}
	if (n >= sizeof(tmp))
		return -1;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	d = strtod(tmp, NULL);
	if (!isfinite(d) || d < -9.2e18 || d > 9.2e18)
		return -1;
	*v = llround(d);
	return 0;
}

static int cb_number(void *ctx, const char *s, size_t n)
{
	struct jr *r = ctx;
	int64_t *slot = NULL, v;
	unsigned bit;

	if (r->skip)
		return 1;
	if (top(r) == X_META && key_is(r, "pid")) {
		if (!parse_num(s, n, &v))
			r->pid = v;
		return 1;
	}
	if (is_record_array(top(r))) {
		jr_skip(r, "%s record is not an object", array_name(top(r)));
		return 1;
	}
	bit = field_bit(r, &slot);
	if (!bit)
		return 1;
	if (parse_num(s, n, &v)) {
		char msg[96];

		snprintf(msg, sizeof(msg), "'%s' out of range", r->key);
		bad(r, msg);
		return 1;
	}
	*slot = v;
	r->c.have |= bit;
	return 1;
}

static int cb_string(void *ctx, const unsigned char *s, size_t n)
{
	struct jr *r = ctx;
	int64_t *slot;

	if (r->skip)
		return 1;
	if (is_record_array(top(r))) {
		jr_skip(r, "%s record is not an object", array_name(top(r)));
		return 1;
	}
	if (top(r) == X_SBR && key_is(r, "kind")) {
		r->tkind_rccl = n == 8 && memcmp(s, "RCCL_API", 8) == 0;
		return 1;
	}
	if (top(r) == X_SBR_OPS) {
		GROW(r->tops, r->tcap, r->ntops + 1);
		r->tops[r->ntops] = xmalloc(n + 1);
		memcpy(r->tops[r->ntops], s, n);
		r->tops[r->ntops++][n] = '\0';
		return 1;
	}
	if (top(r) == X_SYM) {
		static const char *const keys[4] = { "formatted_kernel_name", "demangled_kernel_name",
						     "kernel_name", "truncated_kernel_name" };

		for (int k = 0; k < 4; k++)
			if (key_is(r, keys[k])) {
				free(r->c.name[k]);
				r->c.name[k] = xmalloc(n + 1);
				memcpy(r->c.name[k], s, n);
				r->c.name[k][n] = '\0';
				r->c.name_len[k] = n;
				/* the symbol table's "0" placeholders are not names */
				if (n == 1 && s[0] == '0')
					r->c.name_len[k] = 0;
			}
		/* fall through to the type check: kernel_id as a string is bad */
	}
	if (field_bit(r, &slot))
		wrong_type(r);
	return 1;
}

static int cb_scalar_other(struct jr *r)
{
	int64_t *slot;

	if (r->skip)
		return 1;
	if (is_record_array(top(r))) {
		jr_skip(r, "%s record is not an object", array_name(top(r)));
		return 1;
	}
	if (field_bit(r, &slot))
		wrong_type(r);
	return 1;
}

static int cb_null(void *ctx) { return cb_scalar_other(ctx); }
static int cb_bool(void *ctx, int b) { (void)b; return cb_scalar_other(ctx); }

static const yajl_callbacks callbacks = {
	cb_null, cb_bool, NULL, NULL, cb_number, cb_string,
	cb_start_map, cb_key, cb_end, cb_start_array, cb_end,
};

static void jr_init(struct jr *r, const char *path, const struct ingest_opts *o)
{
	memset(r, 0, sizeof(*r));
	r->path = path;
	r->o = o;
	r->pid = -1;
	strtab_init(&r->names);
}

static void jr_release(struct jr *r)
{
	cur_reset(&r->c);
	free(r->rec);
	free(r->launch);
	free(r->rc);
	for (size_t k = 0; k < r->nrops; k++)
		free(r->rops[k]);
	free(r->rops);
	for (size_t k = 0; k < r->ntops; k++)
		free(r->tops[k]);
	free(r->tops);
	free(r->sym);
	for (size_t i = 0; i < r->nag; i++)
		trace_free(r->ag[i].t);
	free(r->ag);
	strtab_release(&r->names);
}

static enum aorta_status yajl_fail(struct jr *r, yajl_handle h, const unsigned char *chunk,
				   size_t len, long long base, struct aorta_error *e)
{
	unsigned char *msg = yajl_get_error(h, 0, chunk, len);
	size_t used = yajl_get_bytes_consumed(h);
	enum aorta_status st;
	char text[200];
	size_t k;

	snprintf(text, sizeof(text), "%s", msg ? (const char *)msg : "parse error");
	for (k = strlen(text); k > 0 && (text[k - 1] == '\n' || text[k - 1] == ' ' ||
					 text[k - 1] == '.'); k--)
		text[k - 1] = '\0';
	st = aorta_fail(e, AORTA_EINPUT, r->path, 0, base + (long long)used,
			"invalid json (%s): expected a rocprofv3 json document", text);
	if (msg)
		yajl_free_error(h, msg);
	return st;
}

/* qsort / bsearch that accept an empty (NULL) array */
static void sort(void *p, size_t n, size_t sz, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(p, n, sz, cmp);
}

static void *search(const void *key, const void *p, size_t n, size_t sz,
		    int (*cmp)(const void *, const void *))
{
	return n ? bsearch(key, p, n, sz, cmp) : NULL;
}

static int cmp_sym(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->kid < y->kid ? -1 : x->kid > y->kid;
}

static int cmp_agent(const void *a, const void *b)
{
	const struct agent_info *x = a, *y = b;
	int gx = x->type == 2, gy = y->type == 2;

	if (gx != gy)
		return gx ? -1 : 1;
	if (gx && x->order != y->order)
		return x->order < y->order ? -1 : 1;
	return x->handle < y->handle ? -1 : x->handle > y->handle;
}

static int cmp_handle(const void *a, const void *b)
{
	const struct agent_info *x = a, *y = b;

	return x->handle < y->handle ? -1 : x->handle > y->handle;
}

/* r->ag must be sorted by handle. */
static struct agent_info *find_agent(struct jr *r, int64_t handle)
{
	struct agent_info key;

	key.handle = handle;
	return search(&key, r->ag, r->nag, sizeof(*r->ag), cmp_handle);
}

static const char *copy_name(int64_t op)
{
	switch (op) {
	case 1: return "Memcpy HtoH (Host -> Host)";
	case 2: return "Memcpy HtoD (Host -> Device)";
	case 3: return "Memcpy DtoH (Device -> Host)";
	case 4: return "Memcpy DtoD (Device -> Device)";
	default: return "Memcpy (unknown direction)";
	}
}

static void jr_emit(struct jr *r, struct trace_set *out)
{
	const struct ingest_opts *o = r->o;
	size_t ngpu = 0, ntr = 0, i;
	struct trace *first = NULL;
	char nm[48];

	sort(r->sym, r->nsym, sizeof(*r->sym), cmp_sym);
	/* drop repeated handles, then add agents that records name but the
	 * list lacks */
	sort(r->ag, r->nag, sizeof(*r->ag), cmp_handle);
	{
		size_t w = 0, nlisted;

		for (i = 0; i < r->nag; i++)
			if (w == 0 || r->ag[w - 1].handle != r->ag[i].handle)
				r->ag[w++] = r->ag[i];
		r->nag = w;
		nlisted = w;
		for (i = 0; i < r->nrec; i++) {
			struct agent_info key;

			key.handle = r->rec[i].agent;
			if (search(&key, r->ag, nlisted, sizeof(*r->ag), cmp_handle))
				continue;
			GROW(r->ag, r->agcap, r->nag + 1);
			r->ag[r->nag++] = (struct agent_info){ r->rec[i].agent, 0, 0, -1, NULL };
		}
		sort(r->ag, r->nag, sizeof(*r->ag), cmp_handle);
		for (w = 0, i = 0; i < r->nag; i++)
			if (w == 0 || r->ag[w - 1].handle != r->ag[i].handle)
				r->ag[w++] = r->ag[i];
		r->nag = w;
	}
	sort(r->ag, r->nag, sizeof(*r->ag), cmp_agent);
	for (i = 0; i < r->nag; i++)
		if (r->ag[i].type == 2)
			r->ag[i].ordinal = (int)ngpu++;
	sort(r->ag, r->nag, sizeof(*r->ag), cmp_handle);
	for (i = 0; i < r->nrec; i++) {
		const struct rec *x = &r->rec[i];
		struct agent_info *a = find_agent(r, x->agent);
		const char *name;
		size_t len;

		if (!a->t)
			a->t = trace_new(r->path, "rocprof-json");
		if (x->type == RT_COPY) {
			name = copy_name(x->id);
			trace_add_device(a->t, x->start, x->end, name, strlen(name), R_MEMCPY,
					 x->stream, x->corr, x->bytes);
			continue;
		}
		{
			struct sym key = { x->id, 0 }, *s;

			s = search(&key, r->sym, r->nsym, sizeof(*r->sym), cmp_sym);
			if (s && s->name) {
				name = strtab_get(&r->names, s->name);
				len = r->names.len[s->name];
			} else {
				len = (size_t)snprintf(nm, sizeof(nm), "kernel_id %lld",
						       (long long)x->id);
				name = nm;
			}
		}
		trace_add_device(a->t, x->start, x->end, name, len, R_KERNEL, x->stream, x->corr, 0);
	}
	for (i = 0; i < r->nag; i++)
		if (r->ag[i].t)
			ntr++;
	if (ntr == 0) {
		/* nothing recorded: one empty trace so the file still shows up */
		GROW(r->ag, r->agcap, r->nag + 1);
		r->ag[r->nag++] = (struct agent_info){ -1, 0, 0, -1,
						       trace_new(r->path, "rocprof-json") };
		r->ag[r->nag - 1].ordinal = o && o->rank_hint >= 0 ? o->rank_hint : 0;
		ntr = 1;
	}
	sort(r->ag, r->nag, sizeof(*r->ag), cmp_agent); /* rank order */
	{
		int next = (int)ngpu;

		for (i = 0; i < r->nag; i++) {
			struct trace *t = r->ag[i].t;

			if (!t)
				continue;
			t->rank = r->ag[i].ordinal >= 0 ? r->ag[i].ordinal : next++;
			t->device = t->rank;
			t->world_size = ngpu ? (int)ngpu : (int)ntr;
			t->pid = r->pid;
			for (size_t k = 0; k < r->nlaunch; k++)
				trace_add_launch_tid(t, r->launch[k].corr, r->launch[k].start_ns,
						     r->launch[k].end_ns, r->launch[k].tid);
			for (size_t k = 0; k < r->nrc; k++) { /* an operation without a name names nothing */
				const struct rcall *x = &r->rc[k];
				if (x->op >= 0 && (size_t)x->op < r->nrops)
					trace_add_host_coll(t, x->tid, x->start, x->end, r->rops[x->op],
							    strlen(r->rops[x->op]), NULL);
			}
			t->host_events += r->nlaunch;
			if (!first) {
				first = t;
				for (uint64_t k = 0; k < r->nskip; k++)
					trace_skip(t, "%s", r->skip_first);
			}
			trace_finish(t, o ? o->rules : NULL);
			trace_set_add(out, t);
			r->ag[i].t = NULL;
		}
	}
}

/* Feeds one chunk; on error fills e. */
static enum aorta_status feed(struct jr *r, yajl_handle h, const unsigned char *p, size_t n,
			      long long base, struct aorta_error *e)
{
	if (yajl_parse(h, p, n) != yajl_status_ok)
		return yajl_fail(r, h, p, n, base, e);
	return AORTA_OK;
}

static enum aorta_status finish(struct jr *r, yajl_handle h, long long total,
				struct trace_set *out, struct aorta_error *e)
{
	if (yajl_complete_parse(h) != yajl_status_ok) {
		enum aorta_status st = yajl_fail(r, h, NULL, 0, total, e);

		if (e)
			e->offset = total;
		return st;
	}
	if (!r->seen_tool)
		return aorta_fail(e, AORTA_EINPUT, r->path, 0, 0,
				  "expected a rocprofv3 json document (an object with a "
				  "'rocprofiler-sdk-tool' array)");
	jr_emit(r, out);
	return AORTA_OK;
}

enum aorta_status ingest_rocprof_json_mem(const char *path, const void *buf, size_t len,
					  const struct ingest_opts *o, struct trace_set *out,
					  struct aorta_error *e)
{
	struct jr r;
	yajl_handle h;
	enum aorta_status st;

	jr_init(&r, path, o);
	h = yajl_alloc(&callbacks, NULL, &r);
	st = feed(&r, h, buf, len, 0, e);
	if (!st)
		st = finish(&r, h, (long long)len, out, e);
	yajl_free(h);
	jr_release(&r);
	return st;
}

enum aorta_status ingest_rocprof_json(const char *path, const struct ingest_opts *o,
				      struct trace_set *out, struct aorta_error *e)
{
	struct zread *z = NULL;
	struct jr r;
	yajl_handle h;
	enum aorta_status st;
	unsigned char *buf;
	long long total = 0;

	st = ingest_stream_open(path, o, &z, e);
	if (st)
		return st;
	jr_init(&r, path, o);
	h = yajl_alloc(&callbacks, NULL, &r);
	buf = xmalloc(1 << 16);
	for (;;) {
		ssize_t n = zread_read(z, buf, 1 << 16, e);

		if (n < 0) {
			st = AORTA_EINPUT;
			goto out;
		}
		if (n == 0)
			break;
		st = feed(&r, h, buf, (size_t)n, total, e);
		if (st)
			goto out;
		total += n;
	}
	st = finish(&r, h, total, out, e);
out:
	free(buf);
	yajl_free(h);
	jr_release(&r);
	ingest_stream_close(o, z);
	return st;
}
