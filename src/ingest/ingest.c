/*
 * ingest.c - format detection by content, and dispatch to the readers.
 *
 * Sniffing reads at most the first 64 KiB of the (decompressed) stream:
 *   "SQLite format 3"            -> nsys export or rocpd (by table names)
 *   JSON with "rocprofiler-sdk-tool"        -> rocprofv3 JSON
 *   JSON with "schema": "aorta.analysis/    -> an aorta analysis (compare)
 *   JSON with "traceEvents" / "schemaVersion" / "ph" -> Kineto
 *   JSON lines with "profile" and "rank"    -> aorta per-rank metrics
 *   CSV header with Kernel_Name / Direction and *_Timestamp -> rocprofv3 CSV
 */
#include "ingest/ingest.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "base/zread.h"

const char *format_name(enum trace_format f)
{
	switch (f) {
	case FMT_KINETO: return "kineto";
	case FMT_NSYS: return "nsys";
	case FMT_ROCPD: return "rocpd";
	case FMT_ROCPROF_CSV: return "rocprof-csv";
	case FMT_ROCPROF_JSON: return "rocprof-json";
	case FMT_AORTA_JSONL: return "aorta-jsonl";
	case FMT_AORTA_ANALYSIS: return "aorta-analysis";
	default: return "unknown";
	}
}

static enum trace_format sniff_sqlite(const char *path)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	enum trace_format f = FMT_UNKNOWN;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		goto out;
	if (sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type IN ('table','view')",
			       -1, &st, NULL) != SQLITE_OK)
		goto out;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *n = (const char *)sqlite3_column_text(st, 0);
		if (!n)
			continue;
		if (!strcmp(n, "CUPTI_ACTIVITY_KIND_KERNEL") || !strcmp(n, "CUPTI_ACTIVITY_KIND_MEMCPY")) {
			f = FMT_NSYS;
			break;
		}
		if (!strncmp(n, "rocpd_", 6))
			f = FMT_ROCPD;
	}
out:
	sqlite3_finalize(st);
	sqlite3_close(db);
	return f;
}

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

enum trace_format ingest_sniff(const char *path, struct aorta_error *e)
{
	char *buf = NULL;
	size_t len = 0;
	enum trace_format f = FMT_UNKNOWN;

	if (zread_all(path, 65536, &buf, &len, e))
		return FMT_UNKNOWN;
	const char *p = skip_ws(buf, buf + len), *end = buf + len;
	if (len >= 16 && !memcmp(buf, "SQLite format 3", 16)) {
		f = sniff_sqlite(path);
		if (f == FMT_UNKNOWN)
			aorta_fail(e, AORTA_EINPUT, path, 0, -1,
				   "a SQLite database with neither Nsight Systems tables "
				   "(CUPTI_ACTIVITY_KIND_KERNEL) nor rocpd tables (rocpd_*)");
	} else if (p < end && *p == '{') {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (strstr(p, "\"rocprofiler-sdk-tool\""))
			f = FMT_ROCPROF_JSON;
		else if (strstr(p, "\"aorta.analysis/"))
			f = FMT_AORTA_ANALYSIS;
		else if (strstr(p, "\"traceEvents\"") || strstr(p, "\"schemaVersion\"") ||
			 strstr(p, "\"ph\""))
			f = FMT_KINETO;
		else if (nl && nl[-1] == '}' && strstr(p, "\"profile\"") && strstr(p, "\"rank\""))
			f = FMT_AORTA_JSONL;
		else if (strstr(p, "\"profile\"") && strstr(p, "\"rank\"") && strstr(p, "\"ranges\""))
			f = FMT_AORTA_JSONL;
	} else if (p < end && *p == '[') {
		if (strstr(p, "\"ph\""))
			f = FMT_KINETO; /* the Chrome trace array form */
	} else {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char *line = strndup(p, l);
		if ((strstr(line, "Kernel_Name") || strstr(line, "Direction")) &&
		    strstr(line, "Start_Timestamp") && strstr(line, "End_Timestamp"))
			f = FMT_ROCPROF_CSV;
		free(line);
	}
	if (f == FMT_UNKNOWN && (!e || !e->msg[0]))
		aorta_fail(e, AORTA_EINPUT, path, 0, 0,
			   "unknown trace format (expected Kineto/PyTorch profiler JSON, nsys SQLite "
			   "export, rocprofv3 CSV/JSON/rocpd, or aorta metrics JSONL)");
	free(buf);
	return f;
}

enum aorta_status ingest_file(const char *path, const struct ingest_opts *o,
			      struct trace_set *out, struct aorta_error *e)
{
	if (e)
		e->msg[0] = '\0';
	switch (ingest_sniff(path, e)) {
	case FMT_KINETO: return ingest_kineto(path, o, out, e);
	case FMT_NSYS: return ingest_nsys(path, o, out, e);
	case FMT_ROCPD: return ingest_rocpd(path, o, out, e);
	case FMT_ROCPROF_CSV: return ingest_rocprof_csv(path, o, out, e);
	case FMT_ROCPROF_JSON: return ingest_rocprof_json(path, o, out, e);
	case FMT_AORTA_JSONL: return ingest_aorta_jsonl(path, o, out, e);
	case FMT_AORTA_ANALYSIS:
		return aorta_fail(e, AORTA_EINPUT, path, 0, -1,
				  "an aorta analysis, not a trace (give it to 'aorta compare')");
	default:
		return e && e->code ? e->code : AORTA_EINPUT;
	}
}
