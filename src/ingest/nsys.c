/*
 * nsys.c - Nsight Systems SQLite export reader (`nsys export --type sqlite`).
 *
 * Design: one pass per table, each a single SELECT streamed row by row, so
 * memory follows the GPU activity kept, not the file.  Names are resolved in
 * SQL (StringIds lookups inside COALESCE, which stops at the first non-NULL,
 * so shortName is only looked up when demangledName is missing).
 *
 *   CUPTI_ACTIVITY_KIND_KERNEL   -> device spans, hint R_KERNEL, name
 *                                   demangledName, else shortName
 *   CUPTI_ACTIVITY_KIND_MEMCPY   -> R_MEMCPY, named the way Kineto names the
 *                                   same CUPTI record: "Memcpy HtoD (Pageable
 *                                   -> Device)", from copyKind/srcKind/dstKind
 *   CUPTI_ACTIVITY_KIND_MEMSET   -> R_MEMSET, "Memset (Device)"
 *   CUPTI_ACTIVITY_KIND_RUNTIME  -> host launches by correlationId, on
 *                                   their thread (globalTid)
 *   NVTX_EVENTS (push/pop and start/end ranges) -> steps, by the rule in
 *                                   sqlu_step_number (docs/formats.md);
 *                                   NCCL's own ranges (ncclAllReduce,
 *                                   ncclSend, ncclGroupStart/End ...) as
 *                                   host collective calls (read_nccl)
 *
 * A rank is (process, device): pid = (globalPid >> 24) & 0xFFFFFF (the
 * documented 0xHHVVPPPPPPTTTTTT encoding), device = deviceId.  Correlation
 * ids are per process (the 2-GPU fixtures repeat them across processes), so
 * launches and steps go only to the traces of the process that recorded
 * them.  Exports from other nsys versions differ in columns: every optional
 * column is probed with PRAGMA table_info and replaced by NULL when absent.
 * The ENUM_CUDA_MEMCPY_OPER / ENUM_CUDA_MEM_KIND numbering is that of the
 * 3.2x schemas (the tables in the file agree); names of unknown values fall
 * back to "Host"/"Device".
 *
 * Hostile values: a start, end or streamId that is not an integer (text,
 * blob, NULL) and a kernel whose name id is not in StringIds are counted
 * skips (trace_skip), never read as 0 or "(unnamed kernel)"; a table without
 * streamId is an error; a corrupt or truncated file is said to be one.
 *
 * Cost: about 1 us per row (one sqlite3_step plus one name intern).
 */
#include "ingest/ingest.h"
#include "ingest/sqlite_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <yajl/yajl_tree.h>

#define T_KERNEL "CUPTI_ACTIVITY_KIND_KERNEL"
#define T_MEMCPY "CUPTI_ACTIVITY_KIND_MEMCPY"
#define T_MEMSET "CUPTI_ACTIVITY_KIND_MEMSET"
#define T_RUNTIME "CUPTI_ACTIVITY_KIND_RUNTIME"
#define T_NVTX "NVTX_EVENTS"
#define T_STRINGS "StringIds"

struct nsys {
	const char *path;
	sqlite3 *db;
	struct sqlu_ranks ranks;
	struct aorta_error *e;
};

static int64_t pid_of(sqlite3_stmt *q, int col)
{
	if (sqlu_is_null(q, col))
		return -1;
	return (int64_t)(((uint64_t)sqlite3_column_int64(q, col) >> 24) & 0xFFFFFF);
}

/* "alias.col" when table has col, else "NULL", into buf. */
static const char *col(struct nsys *n, const char *table, const char *alias, const char *c,
		       char *buf, size_t cap)
{
	return sqlu_col(n->db, table, alias, c, buf, cap);
}

/* Name subquery for a StringIds reference column, or NULL. */
static const char *strref(struct nsys *n, const char *table, const char *alias, const char *c,
			  char *buf, size_t cap)
{
	if (!sqlu_has_column(n->db, table, c))
		return "NULL";
	snprintf(buf, cap, "(SELECT value FROM StringIds WHERE id = %s.\"%s\")", alias, c);
	return buf;
}

static struct trace *rank_of(struct nsys *n, int64_t pid, int64_t dev, enum aorta_status *st)
{
	struct trace *t = sqlu_ranks_get(&n->ranks, pid, dev);

	if (!t)
		*st = aorta_fail(n->e, AORTA_EINPUT, n->path, 0, -1,
				 "more than %d (process, device) pairs", SQLU_MAX_RANKS);
	return t;
}

/* ---------------------------------------------------------------- kernels */

static enum aorta_status read_kernels(struct nsys *n)
{
	enum aorta_status st = AORTA_OK;
	sqlite3_stmt *q = NULL;
	char b[6][128], sql[1024];
	int rc;

	if (!sqlu_has_table(n->db, T_KERNEL))
		return AORTA_OK;
	char ids[2][96];
	snprintf(sql, sizeof(sql),
		 "SELECT k.start, k.\"end\", %s, %s, %s, %s, COALESCE(%s, %s, %s), COALESCE(%s, %s) FROM "
		 T_KERNEL " k",
		 col(n, T_KERNEL, "k", "deviceId", b[0], sizeof(b[0])),
		 col(n, T_KERNEL, "k", "streamId", b[1], sizeof(b[1])),
		 col(n, T_KERNEL, "k", "correlationId", b[2], sizeof(b[2])),
		 col(n, T_KERNEL, "k", "globalPid", b[3], sizeof(b[3])),
		 strref(n, T_KERNEL, "k", "demangledName", b[4], sizeof(b[4])),
		 strref(n, T_KERNEL, "k", "shortName", b[5], sizeof(b[5])),
		 "NULL",
		 col(n, T_KERNEL, "k", "demangledName", ids[0], sizeof(ids[0])),
		 col(n, T_KERNEL, "k", "shortName", ids[1], sizeof(ids[1])));
	st = sqlu_prepare(n->db, sql, &q, n->path, "table '" T_KERNEL "'", n->e);
	if (st)
		goto out;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		int64_t s = 0, en = 0, stream = 0;
		int64_t dev = sqlu_is_null(q, 2) ? -1 : sqlite3_column_int64(q, 2);
		struct trace *t = rank_of(n, pid_of(q, 5), dev, &st);
		size_t len;
		const char *name;

		if (!t)
			goto out;
		if (!sqlu_int(q, 0, &s) || !sqlu_int(q, 1, &en)) {
			trace_skip(t, "kernel with a start or end that is not an integer (%s, %s)",
				   sqlu_type_name(q, 0), sqlu_type_name(q, 1));
			continue;
		}
		if (en < s) {
			trace_skip(t, "kernel with start %lld, end %lld", (long long)s, (long long)en);
			continue;
		}
		if (!sqlu_int(q, 3, &stream) || stream < INT32_MIN || stream > INT32_MAX) {
			trace_skip(t, "kernel with a streamId that is not an integer (%s)", sqlu_type_name(q, 3));
			continue;
		}
		name = sqlu_text(q, 6, &len);
		if (len == 0 && !sqlu_is_null(q, 7)) {
			trace_skip(t, "kernel whose name id %lld is not in StringIds",
				   (long long)sqlite3_column_int64(q, 7));
			continue;
		}
		if (len == 0) {
			name = "(unnamed kernel)";
			len = strlen(name);
		}
		trace_add_device(t, s, en, name, len, R_KERNEL, (int32_t)stream,
				 sqlu_is_null(q, 4) ? -1 : sqlite3_column_int64(q, 4), 0);
	}
	if (rc != SQLITE_DONE)
		st = sqlu_step_fail(n->db, rc, n->path, "table '" T_KERNEL "'", n->e);
out:
	sqlite3_finalize(q);
	return st;
}

/* ------------------------------------------------------- memcpy / memset */

/* ENUM_CUDA_MEMCPY_OPER ids -> the short direction CUPTI tools print. */
static const char *copy_kind(int64_t k)
{
	static const char *const names[] = {
		"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA",
		"DtoD", "HtoH", "PtoP", "HtoD", "DtoH", "DtoD",
	};

	return k >= 0 && k < (int64_t)(sizeof(names) / sizeof(names[0])) ? names[k] : "Unknown";
}

/* ENUM_CUDA_MEM_KIND ids -> label; NULL when unknown. */
static const char *mem_kind(sqlite3_stmt *q, int c)
{
	static const char *const names[] = {
		"Pageable", "Pinned", "Device", "Array", "Managed", "Device Static",
		"Managed Static",
	};
	int64_t k;

	if (sqlu_is_null(q, c))
		return NULL;
	k = sqlite3_column_int64(q, c);
	return k >= 0 && k < (int64_t)(sizeof(names) / sizeof(names[0])) ? names[k] : NULL;
}

static const char *side_default(const char *dir, int dst)
{
	char c = dir[dst ? 3 : 0]; /* "HtoD": H/D/A/P at 0 and 3 */

	if (dir[0] == 'U')
		return "Unknown";

	return c == 'H' ? "Host" : c == 'A' ? "Array" : c == 'U' ? "Unknown" : "Device";
}

static enum aorta_status read_copies(struct nsys *n, int memset)
{
	const char *tab = memset ? T_MEMSET : T_MEMCPY;
	const char *what = memset ? "table '" T_MEMSET "'" : "table '" T_MEMCPY "'";
	enum aorta_status st = AORTA_OK;
	sqlite3_stmt *q = NULL;
	char b[8][96], sql[1024];
	int rc;

	if (!sqlu_has_table(n->db, tab))
		return AORTA_OK;
	snprintf(sql, sizeof(sql), "SELECT m.start, m.\"end\", %s, %s, %s, %s, %s, %s, %s, %s FROM %s m",
		 col(n, tab, "m", "deviceId", b[0], sizeof(b[0])),
		 col(n, tab, "m", "streamId", b[1], sizeof(b[1])),
		 col(n, tab, "m", "correlationId", b[2], sizeof(b[2])),
		 col(n, tab, "m", "globalPid", b[3], sizeof(b[3])),
		 col(n, tab, "m", "bytes", b[4], sizeof(b[4])),
		 memset ? col(n, tab, "m", "memKind", b[5], sizeof(b[5]))
			: col(n, tab, "m", "copyKind", b[5], sizeof(b[5])),
		 memset ? "NULL" : col(n, tab, "m", "srcKind", b[6], sizeof(b[6])),
		 memset ? "NULL" : col(n, tab, "m", "dstKind", b[7], sizeof(b[7])), tab);
	st = sqlu_prepare(n->db, sql, &q, n->path, what, n->e);
	if (st)
		goto out;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		int64_t s = 0, en = 0, stream = 0;
		int64_t dev = sqlu_is_null(q, 2) ? -1 : sqlite3_column_int64(q, 2);
		int64_t bytes = sqlite3_column_int64(q, 6);
		struct trace *t = rank_of(n, pid_of(q, 5), dev, &st);
		char name[96];
		int len;

		if (!t)
			goto out;
		if (!sqlu_int(q, 0, &s) || !sqlu_int(q, 1, &en)) {
			trace_skip(t, "%s with a start or end that is not an integer (%s, %s)",
				   memset ? "memset" : "memcpy", sqlu_type_name(q, 0), sqlu_type_name(q, 1));
			continue;
		}
		if (!sqlu_int(q, 3, &stream) || stream < INT32_MIN || stream > INT32_MAX) {
			trace_skip(t, "%s with a streamId that is not an integer (%s)",
				   memset ? "memset" : "memcpy", sqlu_type_name(q, 3));
			continue;
		}
		if (en < s) {
			trace_skip(t, "%s with start %lld, end %lld", memset ? "memset" : "memcpy",
				   (long long)s, (long long)en);
			continue;
		}
		if (memset) {
			const char *k = mem_kind(q, 7);

			len = snprintf(name, sizeof(name), "Memset (%s)", k ? k : "Device");
		} else {
			const char *dir = copy_kind(sqlu_is_null(q, 7) ? 0 : sqlite3_column_int64(q, 7));
			const char *src = mem_kind(q, 8), *dst = mem_kind(q, 9);

			len = snprintf(name, sizeof(name), "Memcpy %s (%s -> %s)", dir,
				       src ? src : side_default(dir, 0), dst ? dst : side_default(dir, 1));
		}
		trace_add_device(t, s, en, name, (size_t)len, memset ? R_MEMSET : R_MEMCPY,
				 (int32_t)stream,
				 sqlu_is_null(q, 4) ? -1 : sqlite3_column_int64(q, 4),
				 bytes > 0 ? (uint64_t)bytes : 0);
	}
	if (rc != SQLITE_DONE)
		st = sqlu_step_fail(n->db, rc, n->path, what, n->e);
out:
	sqlite3_finalize(q);
	return st;
}

/* ------------------------------------------------------- launches, steps */

static enum aorta_status read_launches(struct nsys *n)
{
	enum aorta_status st = AORTA_OK;
	sqlite3_stmt *q = NULL;
	int rc;

	if (!sqlu_has_table(n->db, T_RUNTIME) || !sqlu_has_column(n->db, T_RUNTIME, "correlationId") ||
	    !sqlu_has_column(n->db, T_RUNTIME, "globalTid"))
		return AORTA_OK;
	st = sqlu_prepare(n->db,
			  "SELECT correlationId, start, \"end\", globalTid FROM " T_RUNTIME
			  " WHERE correlationId IS NOT NULL",
			  &q, n->path, "table '" T_RUNTIME "'", n->e);
	if (st)
		goto out;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		int64_t pid = pid_of(q, 3), c, s, en;

		if (!sqlu_int(q, 0, &c) || !sqlu_int(q, 1, &s) || !sqlu_int(q, 2, &en))
			continue; /* a launch that cannot be matched: its kernel keeps no launch time */
		for (size_t i = 0; i < n->ranks.n; i++) {
			struct trace *t = n->ranks.v[i].t;

			if (n->ranks.v[i].pid != pid)
				continue;
			t->host_events++;
			trace_add_launch_tid(t, c, s, en, sqlu_is_null(q, 3) ? -1 : sqlite3_column_int64(q, 3));
		}
	}
	if (rc != SQLITE_DONE)
		st = sqlu_step_fail(n->db, rc, n->path, "table '" T_RUNTIME "'", n->e);
out:
	sqlite3_finalize(q);
	return st;
}

static enum aorta_status read_steps(struct nsys *n)
{
	enum aorta_status st = AORTA_OK;
	sqlite3_stmt *q = NULL;
	char b[3][128], sql[1024];
	int rc;

	if (!sqlu_has_table(n->db, T_NVTX) || !sqlu_has_column(n->db, T_NVTX, "end"))
		return AORTA_OK;
	/* 59 NvtxPushPopRange, 60 NvtxStartEndRange (ENUM_NSYS_EVENT_TYPE).
	 * LIKE is ASCII case-insensitive: a cheap prefilter for the C rule. */
	snprintf(sql, sizeof(sql),
		 "SELECT start, \"end\", tid, name FROM (SELECT n.start, n.\"end\", %s AS tid, "
		 "COALESCE(%s, %s) AS name FROM " T_NVTX " n WHERE n.\"end\" IS NOT NULL%s) "
		 "WHERE name LIKE 'ProfilerStep#%%' OR name LIKE 'step%%' OR name LIKE 'iter%%'",
		 col(n, T_NVTX, "n", "globalTid", b[0], sizeof(b[0])),
		 col(n, T_NVTX, "n", "text", b[1], sizeof(b[1])),
		 strref(n, T_NVTX, "n", "textId", b[2], sizeof(b[2])),
		 sqlu_has_column(n->db, T_NVTX, "eventType") ? " AND n.eventType IN (59, 60)" : "");
	st = sqlu_prepare(n->db, sql, &q, n->path, "table '" T_NVTX "'", n->e);
	if (st)
		goto out;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		int64_t s = 0, en = 0;
		int64_t pid = pid_of(q, 2), num;
		int times_ok = sqlu_int(q, 0, &s) && sqlu_int(q, 1, &en);
		size_t len;
		const char *name = sqlu_text(q, 3, &len);

		if (!sqlu_step_number(name, len, &num))
			continue;
		for (size_t i = 0; i < n->ranks.n; i++) {
			struct trace *t = n->ranks.v[i].t;

			/* NVTX without a thread id belongs to every process */
			if (pid >= 0 && n->ranks.v[i].pid != pid)
				continue;
			t->host_events++;
			if (!times_ok)
				trace_skip(t, "nvtx range '%.*s' with a start or end that is not an integer",
					   (int)(len > 64 ? 64 : len), name);
			else if (en < s)
				trace_skip(t, "nvtx range '%.*s' ends before it starts",
					   (int)(len > 64 ? 64 : len), name);
			else
				trace_add_step(t, num, s, en);
		}
	}
	if (rc != SQLITE_DONE)
		st = sqlu_step_fail(n->db, rc, n->path, "table '" T_NVTX "'", n->e);
out:
	sqlite3_finalize(q);
	return st;
}

/* ------------------------------------------------------- NCCL's ranges */

/*
 * NCCL marks each API call with an NVTX range of its own (ncclAllReduce,
 * ncclSend, ncclGroupStart, ncclGroupEnd ...).  A call outside a group
 * launches its kernel inside its range; the calls of a group launch at
 * ncclGroupEnd, so a group becomes one host call from its ncclGroupStart to
 * its ncclGroupEnd, named after its calls when they are all of one kind
 * ("ncclSend" for sends and receives, "ncclAllGather" ...), else
 * "ncclGroupEnd" (which names no collective).  Each becomes a host
 * collective call on its thread (trace_add_host_coll): a kernel launched
 * inside learns its collective from it (docs/metrics.md "Collective
 * identity").  Where nsys exported a range's payload as JSON text
 * (jsonText, or jsonTextId into StringIds), its fields fill the call's
 * metadata: the communicator's id or hash is its process group, the
 * message size its bytes, the peer its peer, the number of ranks its group
 * size, and NCCL 2.28's seqNumber (else operationId) its sequence number,
 * so that a collective is matched across ranks by (communicator,
 * sequence) and a send with its recv by peer; without payloads, by order
 * (overlap/join.c).  Field names are matched loosely (case and separators
 * aside) so that the names of NCCL's schemas and of nsys's JSON both fit.
 */

/* Lower-case alphanumerics of s into out (cap bytes). */
static void key_norm(const char *s, char *out, size_t cap)
{
	size_t o = 0;
	for (; *s && o + 1 < cap; s++)
		if ((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9'))
			out[o++] = *s;
		else if (*s >= 'A' && *s <= 'Z')
			out[o++] = (char)(*s - 'A' + 'a');
	out[o] = '\0';
}

/* An integer field: a JSON number or a numeric string, decimal or 0x hex;
 * a hash above INT64_MAX (NCCL's communicator ids are uint64) keeps its
 * bits.  Returns 0 for anything else. */
static int json_int(const yajl_val v, int64_t *out)
{
	const char *s = YAJL_IS_NUMBER(v) ? v->u.number.r : YAJL_IS_STRING(v) ? YAJL_GET_STRING(v) : NULL;
	char *e;
	if (!s || !*s || *s == '-' || strchr(s, '.') || strchr(s, 'e') || strchr(s, 'E'))
		return 0;
	errno = 0;
	unsigned long long x = strtoull(s, &e, 0);
	if (*e || errno)
		return 0;
	*out = (int64_t)x;
	return 1;
}

/* The payload's fields (a JSON object, else nothing) into m, t's names. */
static void nccl_payload(struct trace *t, const char *json, struct coll_meta *m)
{
	char err[64];
	yajl_val v = json ? yajl_tree_parse(json, err, sizeof(err)) : NULL;
	int64_t opid = -1;
	if (!v || !YAJL_IS_OBJECT(v)) {
		yajl_tree_free(v);
		return;
	}
	for (size_t k = 0; k < v->u.object.len; k++) {
		char key[64];
		int64_t x;
		key_norm(v->u.object.keys[k], key, sizeof(key));
		yajl_val f = v->u.object.values[k];
		if (!json_int(f, &x))
			continue;
		if (strstr(key, "communicator") || !strcmp(key, "comm") || !strcmp(key, "commhash")) {
			char b[32];
			int l = snprintf(b, sizeof(b), "%llu", (unsigned long long)(uint64_t)x);
			m->pg_name = strtab_intern(&t->names, b, (size_t)l);
		} else if (strstr(key, "messagesize") || !strcmp(key, "bytes")) {
			if (x >= 0) {
				m->in_nelems = x;
				m->dtype_bytes = 1;
			}
		} else if (strstr(key, "peer")) {
			if (x >= 0 && x <= INT32_MAX)
				m->peer = (int32_t)x;
		} else if (!strcmp(key, "noofranks") || !strcmp(key, "nranks")) {
			if (x > 0 && x <= INT32_MAX)
				m->group_size = (int32_t)x;
		} else if (strstr(key, "seqnumber") || !strcmp(key, "seq")) {
			if (x >= 0)
				m->seq = x;
		} else if (strstr(key, "operationid")) {
			opid = x;
		}
	}
	if (m->seq < 0 && opid >= 0)
		m->seq = opid;
	yajl_tree_free(v);
}

struct ngroup {
	int64_t tid, start;
	int depth, nops;
	char kind[32];    /* the name its calls share, "" if none yet, "-" if they differ */
	char first[32];   /* its first call's name */
	char *json;       /* its first call's payload (owned), NULL if none */
};

/* One host collective call for every rank of process pid (json: its
 * payload, or NULL). */
static void nccl_call(struct nsys *n, int64_t pid, int64_t tid, int64_t s, int64_t en, const char *name,
		      const char *json)
{
	for (size_t i = 0; i < n->ranks.n; i++) {
		struct trace *t = n->ranks.v[i].t;
		if (n->ranks.v[i].pid != pid)
			continue;
		struct coll_meta x;
		coll_meta_init(&x);
		nccl_payload(t, json, &x);
		/* a send's or recv's peer names its direction */
		if (x.peer >= 0 && !strcasecmp(name, "ncclSend"))
			x.p2p = P2P_SEND;
		else if (x.peer >= 0 && !strcasecmp(name, "ncclRecv"))
			x.p2p = P2P_RECV;
		else
			x.peer = -1;
		trace_add_host_coll(t, tid, s, en, name, strlen(name), &x);
	}
}

static enum aorta_status read_nccl(struct nsys *n)
{
	enum aorta_status st = AORTA_OK;
	sqlite3_stmt *q = NULL;
	char b[5][128], sql[1400];
	int rc;
	struct ngroup *g = NULL;
	size_t ng = 0, gcap = 0;

	if (!sqlu_has_table(n->db, T_NVTX) || !sqlu_has_column(n->db, T_NVTX, "end") ||
	    !sqlu_has_column(n->db, T_NVTX, "globalTid"))
		return AORTA_OK;
	snprintf(sql, sizeof(sql),
		 "SELECT start, \"end\", tid, name, js FROM (SELECT n.start, n.\"end\", n.globalTid AS tid, "
		 "COALESCE(%s, %s) AS name, COALESCE(%s, %s) AS js FROM " T_NVTX " n WHERE n.\"end\" IS NOT NULL) "
		 "WHERE name LIKE 'nccl%%' ORDER BY tid, start",
		 col(n, T_NVTX, "n", "text", b[0], sizeof(b[0])),
		 strref(n, T_NVTX, "n", "textId", b[1], sizeof(b[1])),
		 col(n, T_NVTX, "n", "jsonText", b[2], sizeof(b[2])),
		 strref(n, T_NVTX, "n", "jsonTextId", b[3], sizeof(b[3])));
	st = sqlu_prepare(n->db, sql, &q, n->path, "table '" T_NVTX "'", n->e);
	if (st)
		goto out;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		int64_t s, en, tid;
		size_t len, jl;
		const char *name = sqlu_text(q, 3, &len), *js = sqlu_text(q, 4, &jl);
		if (!name || !sqlu_int(q, 0, &s) || !sqlu_int(q, 1, &en) || !sqlu_int(q, 2, &tid) || en < s)
			continue; /* a broken range names nothing: its kernels keep their own names */
		int64_t pid = (int64_t)(((uint64_t)tid >> 24) & 0xFFFFFF);
		size_t k;
		for (k = 0; k < ng && g[k].tid != tid; k++)
			;
		if (k == ng) {
			GROW(g, gcap, ng + 1);
			g[ng++] = (struct ngroup){ .tid = tid };
		}
		struct ngroup *x = &g[k];
		if (!strcmp(name, "ncclGroupStart")) {
			if (x->depth++ == 0) {
				x->start = s;
				x->nops = 0;
				x->kind[0] = '\0';
				free(x->json);
				x->json = NULL;
			}
			continue;
		}
		if (!strcmp(name, "ncclGroupEnd")) {
			if (x->depth > 0 && --x->depth == 0) {
				/* one kind of call: its name; one call: its payload too */
				int one = x->kind[0] && x->kind[0] != '-';
				nccl_call(n, pid, tid, x->start, en,
					  x->nops == 1 ? x->first : one ? x->kind : "ncclGroupEnd",
					  x->nops == 1 ? x->json : NULL);
			}
			continue;
		}
		/* ncclSend and ncclRecv are one kind: the point-to-point of a group */
		const char *kind = !strcmp(name, "ncclRecv") ? "ncclSend" : name;
		if (x->depth > 0) {
			if (!x->kind[0])
				snprintf(x->kind, sizeof(x->kind), "%s", kind);
			else if (strcmp(x->kind, kind) != 0)
				snprintf(x->kind, sizeof(x->kind), "-");
			if (x->nops++ == 0) {
				snprintf(x->first, sizeof(x->first), "%s", name);
				if (js)
					x->json = xstrdup(js);
			}
		}
		nccl_call(n, pid, tid, s, en, name, js);
	}
	if (rc != SQLITE_DONE)
		st = sqlu_step_fail(n->db, rc, n->path, "table '" T_NVTX "'", n->e);
out:
	for (size_t k = 0; k < ng; k++)
		free(g[k].json);
	free(g);
	sqlite3_finalize(q);
	return st;
}

/* ------------------------------------------------------------------ entry */

/* The host name (TARGET_INFO_SYSTEM_ENV 'Hostname'), given to every rank
 * of the file: ranks of one host share a clock (overlap/join.c).  Absent
 * or unreadable: left empty. */
static void read_host(struct nsys *n)
{
	sqlite3_stmt *q;
	if (!sqlu_has_table(n->db, "TARGET_INFO_SYSTEM_ENV") ||
	    !sqlu_has_column(n->db, "TARGET_INFO_SYSTEM_ENV", "name") ||
	    !sqlu_has_column(n->db, "TARGET_INFO_SYSTEM_ENV", "value") ||
	    sqlite3_prepare_v2(n->db, "SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'Hostname' LIMIT 1",
			       -1, &q, NULL) != SQLITE_OK)
		return;
	if (sqlite3_step(q) == SQLITE_ROW) {
		size_t len;
		const char *h = sqlu_text(q, 0, &len);
		if (h && len && len < sizeof(((struct trace *)0)->host))
			for (size_t i = 0; i < n->ranks.n; i++)
				if (n->ranks.v[i].t)
					snprintf(n->ranks.v[i].t->host, sizeof(n->ranks.v[i].t->host), "%.*s",
						 (int)len, h);
	}
	sqlite3_finalize(q);
}

static enum aorta_status check_schema(struct nsys *n)
{
	/* without streamId every span would land on one stream and overlap
	 * between streams would vanish: an error, not a default */
	static const char *const need[] = { "start", "end", "streamId" };
	const char *tabs[] = { T_KERNEL, T_MEMCPY, T_MEMSET };
	int has_kernel = sqlu_has_table(n->db, T_KERNEL);
	int has_memcpy = sqlu_has_table(n->db, T_MEMCPY);

	if (!has_kernel && !has_memcpy) {
		const char *hint = sqlu_has_table(n->db, "rocpd_kernel_dispatch")
					   ? " (it looks like a rocpd database)" : "";

		return aorta_fail(n->e, AORTA_EINPUT, n->path, 0, -1,
				  "not an nsys export: missing table '" T_KERNEL "'%s", hint);
	}
	if (has_kernel && !sqlu_has_table(n->db, T_STRINGS))
		return aorta_fail(n->e, AORTA_EINPUT, n->path, 0, -1,
				  "not an nsys export: missing table '" T_STRINGS "'");
	for (size_t i = 0; i < sizeof(tabs) / sizeof(tabs[0]); i++) {
		if (!sqlu_has_table(n->db, tabs[i]))
			continue;
		for (size_t j = 0; j < sizeof(need) / sizeof(need[0]); j++)
			if (!sqlu_has_column(n->db, tabs[i], need[j]))
				return aorta_fail(n->e, AORTA_EINPUT, n->path, 0, -1,
						  "not an nsys export: table '%s' has no column '%s'",
						  tabs[i], need[j]);
	}
	return AORTA_OK;
}

enum aorta_status ingest_nsys(const char *path, const struct ingest_opts *o,
			      struct trace_set *out, struct aorta_error *e)
{
	struct nsys n = { .path = path, .e = e };
	enum aorta_status st;

	sqlu_ranks_init(&n.ranks, path, "nsys");
	st = sqlu_open(path, &n.db, e);
	if (st)
		goto out;
	if ((st = check_schema(&n)) || (st = read_kernels(&n)) || (st = read_copies(&n, 0)) ||
	    (st = read_copies(&n, 1)) || (st = read_launches(&n)) || (st = read_steps(&n)) || (st = read_nccl(&n)))
		goto out;
	if (n.ranks.n == 0) {
		st = aorta_fail(e, AORTA_EINPUT, path, 0, -1,
				"nsys export holds no kernel, memcpy or memset record");
		goto out;
	}
	read_host(&n);
	sqlu_ranks_finish(&n.ranks, o, out);
out:
	sqlu_ranks_release(&n.ranks);
	sqlu_close(n.db);
	return st;
}
