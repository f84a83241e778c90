/*
 * rocpd.c - rocprofv3 rocpd SQLite reader (ROCm 7, rocpd schema version 3).
 *
 * Design: the writer stores rows in tables suffixed with a UUID
 * (rocpd_kernel_dispatch_<uuid>) and creates plain-named views over them
 * (rocpd_kernel_dispatch); this reader queries only the plain views, so the
 * suffix never matters.  The convenience views (`kernels`, `regions`, ...)
 * are not used: they INNER JOIN tables a database may leave empty.  Every
 * join also matches `guid` when both sides have the column, as the official
 * views do, so databases merged from several runs keep their ids apart.
 *
 *   rocpd_kernel_dispatch + rocpd_info_kernel_symbol (display_name, else
 *     kernel_name) + rocpd_info_agent (device)     -> spans, hint R_KERNEL
 *   rocpd_memory_copy + rocpd_info_agent (src/dst types) -> spans, R_MEMCPY,
 *     named "Memcpy HtoD (Host -> Device)" etc.; a copy between two GPU
 *     agents is DtoD on one agent, PtoP between two
 *   rocpd_region + rocpd_event.correlation_id       -> host launches
 *   rocpd_region + rocpd_string (ProfilerStep#N, roctx "step N", ...) -> steps
 *
 * A rank is (process, GPU agent).  The "pid" columns of data tables are row
 * ids of rocpd_info_process, whose "pid" is the OS process id; the device is
 * the agent's type_index (its ordinal among GPUs), else logical_index, else
 * absolute_index.  A copy belongs to its source agent when that is a GPU,
 * else to its destination; host-to-host copies touch no device and are
 * ignored.  Internal correlation ids are unique within a process.
 *
 * Cost: one streamed SELECT per table, about 1 us per row.
 */
#include "ingest/ingest.h"
#include "ingest/sqlite_util.h"

#include <stdio.h>
#include <string.h>

#define V_KERNEL "rocpd_kernel_dispatch"
#define V_COPY "rocpd_memory_copy"
#define V_STRING "rocpd_string"
#define V_AGENT "rocpd_info_agent"
#define V_SYMBOL "rocpd_info_kernel_symbol"
#define V_PROCESS "rocpd_info_process"
#define V_REGION "rocpd_region"
#define V_EVENT "rocpd_event"

struct rocpd {
	const char *path;
	sqlite3 *db;
	struct sqlu_ranks ranks;
	struct aorta_error *e;
	int has_process;
};

/* " AND a.guid = b.guid" when both views have guid, else "". */
static const char *guid_eq(struct rocpd *r, const char *ta, const char *a, const char *tb,
			   const char *b, char *buf, size_t cap)
{
	if (!sqlu_has_column(r->db, ta, "guid") || !sqlu_has_column(r->db, tb, "guid"))
		return "";
	snprintf(buf, cap, " AND %s.guid = %s.guid", a, b);
	return buf;
}

/* The OS pid expression of data row `alias` of view `table`, and the join
 * it needs (appended to join). */
static const char *pid_expr(struct rocpd *r, const char *table, const char *alias,
			    const char *palias, char *join, size_t jcap, char *buf, size_t cap)
{
	char g[96];

	join[0] = 0;
	if (!r->has_process) {
		snprintf(buf, cap, "%s.pid", alias);
		return buf;
	}
	snprintf(join, jcap, " LEFT JOIN " V_PROCESS " %s ON %s.id = %s.pid%s", palias, palias, alias,
		 guid_eq(r, V_PROCESS, palias, table, alias, g, sizeof(g)));
	snprintf(buf, cap, "COALESCE(%s.pid, %s.pid)", palias, alias);
	return buf;
}

/* The device expression of agent alias a. */
static const char *dev_expr(struct rocpd *r, const char *a, const char *fallback, char *buf,
			    size_t cap)
{
	char b[3][64];

	snprintf(buf, cap, "COALESCE(%s, %s, %s, %s)",
		 sqlu_col(r->db, V_AGENT, a, "type_index", b[0], sizeof(b[0])),
		 sqlu_col(r->db, V_AGENT, a, "logical_index", b[1], sizeof(b[1])),
		 sqlu_col(r->db, V_AGENT, a, "absolute_index", b[2], sizeof(b[2])), fallback);
	return buf;
}

static struct trace *rank_of(struct rocpd *r, int64_t pid, int64_t dev, enum aorta_status *st)
{
	struct trace *t = sqlu_ranks_get(&r->ranks, pid, dev);

	if (!t)
		*st = aorta_fail(r->e, AORTA_EINPUT, r->path, 0, -1,
				 "more than %d (process, agent) pairs", SQLU_MAX_RANKS);
	return t;
}

static int64_t int_or(sqlite3_stmt *q, int c, int64_t dflt)
{
	return sqlu_is_null(q, c) ? dflt : sqlite3_column_int64(q, c);
}

/* ---------------------------------------------------------------- kernels */

static enum aorta_status read_kernels(struct rocpd *r)
{
	enum aorta_status st = AORTA_OK;
	sqlite3_stmt *q = NULL;
	char pj[256], pe[96], de[256], g[4][96], b[5][64], sym[256] = "", ev[256] = "";
	char sql[2048];
	const char *name = "NULL", *corr = "NULL";
	int rc;

	if (!sqlu_has_table(r->db, V_KERNEL))
		return AORTA_OK;
	pid_expr(r, V_KERNEL, "k", "p", pj, sizeof(pj), pe, sizeof(pe));
	if (sqlu_has_table(r->db, V_SYMBOL)) {
		snprintf(sym, sizeof(sym), " LEFT JOIN " V_SYMBOL " s ON s.id = k.kernel_id%s",
			 guid_eq(r, V_SYMBOL, "s", V_KERNEL, "k", g[0], sizeof(g[0])));
		snprintf(b[4], sizeof(b[4]), "COALESCE(%s, %s)",
			 sqlu_col(r->db, V_SYMBOL, "s", "display_name", b[0], sizeof(b[0])),
			 sqlu_col(r->db, V_SYMBOL, "s", "kernel_name", b[1], sizeof(b[1])));
		name = b[4];
	}
	if (sqlu_has_table(r->db, V_EVENT) && sqlu_has_column(r->db, V_KERNEL, "event_id")) {
		snprintf(ev, sizeof(ev), " LEFT JOIN " V_EVENT " e ON e.id = k.event_id%s",
			 guid_eq(r, V_EVENT, "e", V_KERNEL, "k", g[1], sizeof(g[1])));
		corr = sqlu_col(r->db, V_EVENT, "e", "correlation_id", b[2], sizeof(b[2]));
	}
	dev_expr(r, "a", "k.agent_id", de, sizeof(de));
	snprintf(sql, sizeof(sql),
		 "SELECT k.start, k.\"end\", %s, %s, %s, %s, %s FROM " V_KERNEL " k"
		 " LEFT JOIN " V_AGENT " a ON a.id = k.agent_id%s%s%s%s",
		 pe, de, sqlu_col(r->db, V_KERNEL, "k", "stream_id", b[3], sizeof(b[3])), corr, name,
		 guid_eq(r, V_AGENT, "a", V_KERNEL, "k", g[2], sizeof(g[2])), sym, ev, pj);
	st = sqlu_prepare(r->db, sql, &q, r->path, "view '" V_KERNEL "'", r->e);
	if (st)
		goto out;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		int64_t s = sqlite3_column_int64(q, 0), en = sqlite3_column_int64(q, 1);
		struct trace *t = rank_of(r, int_or(q, 2, -1), int_or(q, 3, -1), &st);
		size_t len;
		const char *kn;

		if (!t)
			goto out;
		if (!sqlu_int(q, 0, &s) || !sqlu_int(q, 1, &en)) {
			trace_skip(t, "kernel dispatch with a start or end that is not an integer (%s, %s)",
				   sqlu_type_name(q, 0), sqlu_type_name(q, 1));
			continue;
		}
		if (en < s) {
			trace_skip(t, "kernel dispatch with start %lld, end %lld", (long long)s,
				   (long long)en);
			continue;
		}
		kn = sqlu_text(q, 6, &len);
		if (len == 0) {
			kn = "(unnamed kernel)";
			len = strlen(kn);
		}
		trace_add_device(t, s, en, kn, len, R_KERNEL, (int32_t)int_or(q, 4, 0),
				 int_or(q, 5, -1), 0);
	}
	if (rc != SQLITE_DONE)
		st = sqlu_step_fail(r->db, rc, r->path, "view '" V_KERNEL "'", r->e);
out:
	sqlite3_finalize(q);
	return st;
}

/* ----------------------------------------------------------------- copies */

enum side { S_UNKNOWN, S_HOST, S_GPU };

static enum side side_of(sqlite3_stmt *q, int c)
{
	size_t len;
	const char *s = sqlu_text(q, c, &len);

	if (len == 3 && memcmp(s, "GPU", 3) == 0)
		return S_GPU;
	if (len == 3 && memcmp(s, "CPU", 3) == 0)
		return S_HOST;
	return S_UNKNOWN;
}

static enum aorta_status read_copies(struct rocpd *r)
{
	enum aorta_status st = AORTA_OK;
	sqlite3_stmt *q = NULL;
	char pj[256], pe[96], ds[256], dd[256], g[4][96], b[3][64], ev[256] = "", sql[2048];
	const char *corr = "NULL";
	int rc;

	if (!sqlu_has_table(r->db, V_COPY))
		return AORTA_OK;
	pid_expr(r, V_COPY, "m", "p", pj, sizeof(pj), pe, sizeof(pe));
	if (sqlu_has_table(r->db, V_EVENT) && sqlu_has_column(r->db, V_COPY, "event_id")) {
		snprintf(ev, sizeof(ev), " LEFT JOIN " V_EVENT " e ON e.id = m.event_id%s",
			 guid_eq(r, V_EVENT, "e", V_COPY, "m", g[0], sizeof(g[0])));
		corr = sqlu_col(r->db, V_EVENT, "e", "correlation_id", b[0], sizeof(b[0]));
	}
	dev_expr(r, "sa", "m.src_agent_id", ds, sizeof(ds));
	dev_expr(r, "da", "m.dst_agent_id", dd, sizeof(dd));
	snprintf(sql, sizeof(sql),
		 "SELECT m.start, m.\"end\", %s, m.size, n.string, sa.type, %s, da.type, %s, %s, %s,"
		 " m.src_agent_id, m.dst_agent_id FROM " V_COPY " m"
		 " LEFT JOIN " V_STRING " n ON n.id = m.name_id%s"
		 " LEFT JOIN " V_AGENT " sa ON sa.id = m.src_agent_id%s"
		 " LEFT JOIN " V_AGENT " da ON da.id = m.dst_agent_id%s%s%s",
		 pe, ds, dd, sqlu_col(r->db, V_COPY, "m", "stream_id", b[1], sizeof(b[1])), corr,
		 guid_eq(r, V_STRING, "n", V_COPY, "m", g[1], sizeof(g[1])),
		 guid_eq(r, V_AGENT, "sa", V_COPY, "m", g[2], sizeof(g[2])),
		 guid_eq(r, V_AGENT, "da", V_COPY, "m", g[3], sizeof(g[3])), ev, pj);
	st = sqlu_prepare(r->db, sql, &q, r->path, "view '" V_COPY "'", r->e);
	if (st)
		goto out;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		int64_t s = sqlite3_column_int64(q, 0), en = sqlite3_column_int64(q, 1);
		int64_t size = sqlite3_column_int64(q, 3);
		size_t nlen;
		const char *nm = sqlu_text(q, 4, &nlen);
		enum side src = side_of(q, 5), dst = side_of(q, 7);
		int64_t dev;
		const char *label;
		struct trace *t;

		/* agent types decide; the operation name fills in what is missing */
		if (src == S_UNKNOWN)
			src = strstr(nm, "HOST_TO_") ? S_HOST : strstr(nm, "DEVICE_TO_") ? S_GPU : S_UNKNOWN;
		if (dst == S_UNKNOWN)
			dst = strstr(nm, "_TO_HOST") ? S_HOST : strstr(nm, "_TO_DEVICE") ? S_GPU : S_UNKNOWN;
		if (src == S_GPU && dst == S_GPU) {
			int same = int_or(q, 11, -1) == int_or(q, 12, -2);

			label = same ? "Memcpy DtoD (Device -> Device)" : "Memcpy PtoP (Device -> Device)";
			dev = int_or(q, 6, -1);
		} else if (src == S_GPU) {
			label = "Memcpy DtoH (Device -> Host)";
			dev = int_or(q, 6, -1);
		} else if (dst == S_GPU) {
			label = "Memcpy HtoD (Host -> Device)";
			dev = int_or(q, 8, -1);
		} else {
			continue; /* host to host: no device timeline to put it on */
		}
		t = rank_of(r, int_or(q, 2, -1), dev, &st);
		if (!t)
			goto out;
		if (!sqlu_int(q, 0, &s) || !sqlu_int(q, 1, &en)) {
			trace_skip(t, "memory copy with a start or end that is not an integer (%s, %s)",
				   sqlu_type_name(q, 0), sqlu_type_name(q, 1));
			continue;
		}
		if (en < s) {
			trace_skip(t, "memory copy with start %lld, end %lld", (long long)s, (long long)en);
			continue;
		}
		trace_add_device(t, s, en, label, strlen(label), R_MEMCPY, (int32_t)int_or(q, 9, 0),
				 int_or(q, 10, -1), size > 0 ? (uint64_t)size : 0);
	}
	if (rc != SQLITE_DONE)
		st = sqlu_step_fail(r->db, rc, r->path, "view '" V_COPY "'", r->e);
out:
	sqlite3_finalize(q);
	return st;
}

/* ------------------------------------------------------- launches, steps */

/* Host regions: with steps = 0 the API calls that carry a correlation id
 * (launches), with steps = 1 the ranges whose name passes the step rule. */
static enum aorta_status read_regions(struct rocpd *r, int steps)
{
	enum aorta_status st = AORTA_OK;
	sqlite3_stmt *q = NULL;
	char pj[256], pe[96], g[96], b[64], sql[2048];
	const char *what = "view '" V_REGION "'";
	int rc;

	if (!sqlu_has_table(r->db, V_REGION))
		return AORTA_OK;
	pid_expr(r, V_REGION, "r", "p", pj, sizeof(pj), pe, sizeof(pe));
	if (steps) {
		snprintf(sql, sizeof(sql),
			 "SELECT r.start, r.\"end\", %s, n.string FROM " V_REGION " r"
			 " JOIN " V_STRING " n ON n.id = r.name_id%s%s"
			 " WHERE n.string LIKE 'ProfilerStep#%%' OR n.string LIKE 'step%%'"
			 " OR n.string LIKE 'iter%%'",
			 pe, guid_eq(r, V_STRING, "n", V_REGION, "r", g, sizeof(g)), pj);
	} else {
		if (!sqlu_has_table(r->db, V_EVENT) || !sqlu_has_column(r->db, V_REGION, "event_id"))
			return AORTA_OK;
		snprintf(sql, sizeof(sql),
			 "SELECT r.start, r.\"end\", %s, %s FROM " V_REGION " r"
			 " JOIN " V_EVENT " e ON e.id = r.event_id%s%s WHERE e.correlation_id > 0",
			 pe, sqlu_col(r->db, V_EVENT, "e", "correlation_id", b, sizeof(b)),
			 guid_eq(r, V_EVENT, "e", V_REGION, "r", g, sizeof(g)), pj);
	}
	st = sqlu_prepare(r->db, sql, &q, r->path, what, r->e);
	if (st)
		goto out;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		int64_t s = sqlite3_column_int64(q, 0), en = sqlite3_column_int64(q, 1);
		int64_t pid = int_or(q, 2, -1), num = 0;
		size_t len = 0;
		const char *name = steps ? sqlu_text(q, 3, &len) : "";

		if (steps && !sqlu_step_number(name, len, &num))
			continue;
		int times_ok = sqlu_int(q, 0, &s) && sqlu_int(q, 1, &en);
		for (size_t i = 0; i < r->ranks.n; i++) {
			struct trace *t = r->ranks.v[i].t;

			if (r->ranks.v[i].pid != pid)
				continue;
			t->host_events++;
			if (!times_ok)
				trace_skip(t, "region with a start or end that is not an integer (%s, %s)",
					   sqlu_type_name(q, 0), sqlu_type_name(q, 1));
			else if (!steps)
				trace_add_launch(t, sqlite3_column_int64(q, 3), s, en);
			else if (en < s)
				trace_skip(t, "region '%.*s' ends before it starts",
					   (int)(len > 64 ? 64 : len), name);
			else
				trace_add_step(t, num, s, en);
		}
	}
	if (rc != SQLITE_DONE)
		st = sqlu_step_fail(r->db, rc, r->path, what, r->e);
out:
	sqlite3_finalize(q);
	return st;
}

/* ------------------------------------------------------------------ entry */

static enum aorta_status check_schema(struct rocpd *r)
{
	static const char *const need[] = { V_STRING, V_AGENT };
	const char *data[] = { V_KERNEL, V_COPY };
	int has_kernel = sqlu_has_table(r->db, V_KERNEL), has_copy = sqlu_has_table(r->db, V_COPY);

	if (!has_kernel && !has_copy) {
		const char *hint = sqlu_has_table(r->db, "CUPTI_ACTIVITY_KIND_KERNEL")
					   ? " (it looks like an nsys export)" : "";

		return aorta_fail(r->e, AORTA_EINPUT, r->path, 0, -1,
				  "not a rocpd database: missing view '" V_KERNEL "'%s", hint);
	}
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (!sqlu_has_table(r->db, need[i]))
			return aorta_fail(r->e, AORTA_EINPUT, r->path, 0, -1,
					  "not a rocpd database: missing view '%s'", need[i]);
	for (size_t i = 0; i < sizeof(data) / sizeof(data[0]); i++) {
		static const char *const cols[] = { "start", "end", "pid" };

		if (!sqlu_has_table(r->db, data[i]))
			continue;
		for (size_t j = 0; j < sizeof(cols) / sizeof(cols[0]); j++)
			if (!sqlu_has_column(r->db, data[i], cols[j]))
				return aorta_fail(r->e, AORTA_EINPUT, r->path, 0, -1,
						  "not a rocpd database: view '%s' has no column '%s'",
						  data[i], cols[j]);
	}
	r->has_process = sqlu_has_table(r->db, V_PROCESS) &&
			 sqlu_has_column(r->db, V_PROCESS, "pid");
	return AORTA_OK;
}

enum aorta_status ingest_rocpd(const char *path, const struct ingest_opts *o,
			       struct trace_set *out, struct aorta_error *e)
{
	struct rocpd r = { .path = path, .e = e };
	enum aorta_status st;

	sqlu_ranks_init(&r.ranks, path, "rocpd");
	st = sqlu_open(path, &r.db, e);
	if (st)
		goto out;
	if ((st = check_schema(&r)) || (st = read_kernels(&r)) || (st = read_copies(&r)) ||
	    (st = read_regions(&r, 0)) || (st = read_regions(&r, 1)))
		goto out;
	if (r.ranks.n == 0) {
		st = aorta_fail(e, AORTA_EINPUT, path, 0, -1,
				"rocpd database holds no kernel dispatch or device memory copy");
		goto out;
	}
	sqlu_ranks_finish(&r.ranks, o, out);
out:
	sqlu_ranks_release(&r.ranks);
	sqlu_close(r.db);
	return st;
}
