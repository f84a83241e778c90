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
 *   first line "# aorta.optable/" or {"schema": "aorta.optable/..."} -> op table
 *   a pickle (PROTO) or JSON with pg_config / pg_status -> Flight Recorder dump
 * A UTF-8 byte order mark before any of these is skipped.  ingest_file opens
 * the input once: the sniff looks at the bytes zread_peek read, and the
 * stream readers (Kineto, rocprofv3 CSV and JSON) continue on that same
 * stream, so a FIFO or `<(zcat x.gz)` is read exactly once.
 */
#include "ingest/ingest.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "base/zread.h"
#include "flightrec/fr.h"
#include "ingest/ingest_mem.h"

const char *format_name(enum trace_format f)
{
	switch (f) {
	case FMT_KINETO: return "kineto";
	case FMT_NSYS: return "nsys";
	case FMT_ROCPD: return "rocpd";
	case FMT_ROCPROF_CSV: return "rocprof-csv";
	case FMT_ROCPROF_JSON: return "rocprof-json";
	case FMT_AORTA_JSONL: return "aorta-jsonl";
	case FMT_OPTABLE: return "optable";
	case FMT_FR_PICKLE: return "fr-pickle";
	case FMT_FR_JSON: return "fr-json";
	case FMT_AORTA_ANALYSIS: return "aorta-analysis";
	default: return "unknown";
	}
}

static enum trace_format sniff_sqlite(const char *path, struct aorta_error *e)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	enum trace_format f = FMT_UNKNOWN;
	int rc;

	if ((rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL)) != SQLITE_OK) {
		aorta_fail(e, AORTA_EINPUT, path, 0, -1, "cannot open the SQLite database: %s",
			   db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
		goto out;
	}
	if (sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type IN ('table','view')",
			       -1, &st, NULL) != SQLITE_OK) {
		aorta_fail(e, AORTA_EINPUT, path, 0, -1,
			   "a corrupt or truncated SQLite database (cannot read its schema: %s)",
			   sqlite3_errmsg(db));
		goto out;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
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
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		aorta_fail(e, AORTA_EINPUT, path, 0, -1,
			   "a corrupt or truncated SQLite database (reading its schema: %s)",
			   sqlite3_errmsg(db));
		f = FMT_UNKNOWN;
	} else if (f == FMT_UNKNOWN) {
		aorta_fail(e, AORTA_EINPUT, path, 0, -1,
			   "a SQLite database with neither Nsight Systems tables "
			   "(CUPTI_ACTIVITY_KIND_KERNEL) nor rocpd tables (rocpd_*)");
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

/* A Git LFS pointer (https://github.com/git-lfs/git-lfs/blob/main/docs/spec.md:
 * "version https://git-lfs.github.com/spec/v1", "oid sha256:HEX", "size N"
 * lines) stands where a trace was committed with LFS and not pulled: said
 * as such, with the size of the trace it points to. */
static void lfs_pointer(const char *path, const char *p, const char *end, struct aorta_error *e)
{
	char size[32] = "";
	const char *q = p;
	while (q && q < end) {
		const char *nl = memchr(q, '\n', (size_t)(end - q));
		size_t l = nl ? (size_t)(nl - q) : (size_t)(end - q);
		if (l > 5 && l < 5 + sizeof(size) && !memcmp(q, "size ", 5)) {
			memcpy(size, q + 5, l - 5);
			size[l - 5] = '\0';
		}
		q = nl ? nl + 1 : NULL;
	}
	aorta_fail(e, AORTA_EINPUT, path, 0, 0, "a Git LFS pointer, not the trace%s%s%s: run 'git lfs pull' in its "
		   "repository (git lfs install first if git lfs is new there)", size[0] ? " (the trace is " : "",
		   size, size[0] ? " bytes)" : "");
}

enum trace_format ingest_sniff_buf(const char *path, const char *buf, size_t len,
				   struct aorta_error *e)
{
	enum trace_format f = FMT_UNKNOWN;

	if (e)
		e->msg[0] = '\0';
	if (len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3)) { /* UTF-8 byte order mark */
		buf += 3;
		len -= 3;
	}
	const char *p = skip_ws(buf, buf + len), *end = buf + len;
	int fr = fr_sniff(buf, len);
	if (fr) {
		f = fr == 1 ? FMT_FR_PICKLE : FMT_FR_JSON;
	} else if (len >= 16 && !memcmp(buf, "SQLite format 3", 16)) {
		struct stat sb;
		if (strcmp(path, "-") == 0 && fstat(0, &sb) == 0 && S_ISREG(sb.st_mode)) {
			aorta_fail(e, AORTA_EINPUT, path, 0, -1,
				   "a SQLite database on standard input (a regular file redirected with '<'): "
				   "SQLite opens its file by name; name the file instead of '-'");
			return FMT_UNKNOWN;
		}
		if (strcmp(path, "-") == 0 || stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) {
			aorta_fail(e, AORTA_EINPUT, path, 0, -1,
				   "a SQLite database read from a pipe or device: SQLite needs a "
				   "regular file, copy it to one first");
			return FMT_UNKNOWN;
		}
		f = sniff_sqlite(path, e);
	} else if (p < end && *p == '#') {
		const char *v = p + 1;
		while (v < end && (*v == ' ' || *v == '\t'))
			v++;
		if ((size_t)(end - v) >= 14 && !memcmp(v, "aorta.optable/", 14))
			f = FMT_OPTABLE;
	} else if (p < end && *p == '{') {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		char *first = strndup(p, nl ? (size_t)(nl - p) : (size_t)(end - p));
		int optable = strstr(first, "\"schema\"") && strstr(first, "\"aorta.optable/");
		free(first);
		if (optable)
			f = FMT_OPTABLE;
		else if (strstr(p, "\"rocprofiler-sdk-tool\""))
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
	} else if (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char *line = strndup(p, l);
		if ((strstr(line, "Kernel_Name") || strstr(line, "Direction")) &&
		    strstr(line, "Start_Timestamp") && strstr(line, "End_Timestamp"))
			f = FMT_ROCPROF_CSV;
		free(line);
	}
	if (f == FMT_UNKNOWN && (!e || !e->msg[0])) {
		if (p == end)
			aorta_fail(e, AORTA_EINPUT, path, 0, 0, len ? "only whitespace" : "an empty file");
		else if (memchr(buf, '\0', len))
			aorta_fail(e, AORTA_EINPUT, path, 0, 0,
				   "binary data, not a trace (expected Kineto/PyTorch profiler JSON, "
				   "nsys SQLite export, rocprofv3 CSV/JSON/rocpd, aorta metrics JSONL, an aorta.optable/1 op table "
				   "or a Flight Recorder dump)");
		else if ((size_t)(end - p) >= 38 && !memcmp(p, "version https://git-lfs.github.com/spec/", 38))
			lfs_pointer(path, p, end, e);
		else if (!strncasecmp(p, "<!doctype", 9) || !strncasecmp(p, "<html", 5))
			aorta_fail(e, AORTA_EINPUT, path, 0, 0,
				   "an HTML page, not a trace (a download that saved an error page?)");
		else
			aorta_fail(e, AORTA_EINPUT, path, 0, 0,
				   "unknown trace format (expected Kineto/PyTorch profiler JSON, nsys SQLite "
				   "export, rocprofv3 CSV/JSON/rocpd, aorta metrics JSONL or an aorta.optable/1 op table)");
	}
	return f;
}

enum trace_format ingest_sniff(const char *path, struct aorta_error *e)
{
	struct zread *z;
	const char *buf;
	size_t len;
	enum trace_format f = FMT_UNKNOWN;

	if (zread_open(path, &z, e))
		return FMT_UNKNOWN;
	if (zread_peek(z, INGEST_SNIFF_BYTES, &buf, &len, e) == AORTA_OK)
		f = ingest_sniff_buf(path, buf, len, e);
	zread_close(z);
	return f;
}

enum aorta_status ingest_stream_open(const char *path, const struct ingest_opts *o, struct zread **z,
				     struct aorta_error *e)
{
	if (o && o->z) {
		*z = o->z;
		return AORTA_OK;
	}
	enum aorta_status st = zread_open(path, z, e);
	if (st == AORTA_OK)
		zread_set_limit(*z, INGEST_MAX_TRACE_BYTES, "a trace (INGEST_MAX_TRACE_BYTES)");
	return st;
}

void ingest_stream_close(const struct ingest_opts *o, struct zread *z)
{
	if (!o || z != o->z)
		zread_close(z);
}

static int is_regular(const char *path)
{
	struct stat sb;
	return strcmp(path, "-") != 0 && stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* aorta metrics JSONL from a pipe: read whole (bounded) into memory */
static enum aorta_status jsonl_from_stream(const char *path, struct zread *z,
					   const struct ingest_opts *o, struct trace_set *out,
					   struct aorta_error *e)
{
	char *b;
	size_t n;
	enum aorta_status st;

	zread_set_limit(z, INGEST_MAX_SMALL_BYTES, "aorta metrics JSONL read from a pipe");
	if ((st = zread_rest(z, &b, &n, e)))
		return st;
	st = ingest_aorta_jsonl_mem(path, b, n, o, out, e);
	free(b);
	return st;
}

enum aorta_status ingest_stream(const char *path, struct zread *z, enum trace_format f,
				const struct ingest_opts *o, struct trace_set *out, struct aorta_error *e)
{
	enum aorta_status st;
	const char *buf;
	size_t len;

	if (e)
		e->msg[0] = '\0';
	if ((st = zread_peek(z, INGEST_SNIFF_BYTES, &buf, &len, e)))
		return st;
	if (f == FMT_UNKNOWN)
		f = ingest_sniff_buf(path, buf, len, e);
	int bom = len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3);
	if (bom) { /* the readers start after a BOM */
		char skip[3];
		if (zread_read(z, skip, 3, e) != 3)
			return AORTA_EINPUT;
	}
	zread_set_limit(z, INGEST_MAX_TRACE_BYTES, "a trace (INGEST_MAX_TRACE_BYTES)");
	struct ingest_opts io = *o; /* the readers read this stream */
	io.z = z;
	switch (f) {
	case FMT_KINETO: st = ingest_kineto(path, &io, out, e); break;
	case FMT_ROCPROF_CSV: st = ingest_rocprof_csv(path, &io, out, e); break;
	case FMT_ROCPROF_JSON: st = ingest_rocprof_json(path, &io, out, e); break;
	case FMT_OPTABLE: st = ingest_optable(path, &io, out, e); break;
	case FMT_NSYS:
	case FMT_ROCPD: /* SQLite opens the file itself (a regular file: sniff checked) */
		io.z = NULL;
		st = f == FMT_NSYS ? ingest_nsys(path, &io, out, e) : ingest_rocpd(path, &io, out, e);
		break;
	case FMT_AORTA_JSONL:
		if (is_regular(path) && !bom) /* streamed, a line at a time */
			st = ingest_aorta_jsonl(path, &io, out, e);
		else
			st = jsonl_from_stream(path, z, &io, out, e);
		break;
	case FMT_FR_PICKLE:
	case FMT_FR_JSON:
		if (o->fr)
			st = fr_dump_read(path, &io, o->fr, e);
		else
			st = aorta_fail(e, AORTA_EINPUT, path, 0, -1,
					"a Flight Recorder dump, not a trace (give it to 'aorta analyze')");
		break;
	case FMT_AORTA_ANALYSIS:
		st = aorta_fail(e, AORTA_EINPUT, path, 0, -1,
				"an aorta analysis, not a trace (give it to 'aorta compare')");
		break;
	default:
		st = e && e->code ? e->code : AORTA_EINPUT;
		break;
	}
	return st;
}

enum aorta_status ingest_file_as(const char *path, enum trace_format f,
				 const struct ingest_opts *o, struct trace_set *out,
				 struct aorta_error *e)
{
	struct zread *z = NULL;
	enum aorta_status st;

	if (e)
		e->msg[0] = '\0';
	if ((st = zread_open(path, &z, e)))
		return st;
	st = ingest_stream(path, z, f, o, out, e);
	zread_close(z);
	return st;
}

enum aorta_status ingest_file(const char *path, const struct ingest_opts *o,
			      struct trace_set *out, struct aorta_error *e)
{
	return ingest_file_as(path, FMT_UNKNOWN, o, out, e);
}
