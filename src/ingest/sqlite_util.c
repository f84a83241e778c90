/*
 * sqlite_util.c - opening, schema probing, errors, step names and rank
 * buckets for the SQLite readers (see sqlite_util.h for the contract).
 *
 * Cost: opening is a few page reads (the schema); sqlu_has_column runs one
 * PRAGMA per call, used a handful of times per file.  Rank lookup is a
 * linear scan behind a last-hit cache: rows come grouped by process and
 * device in practice, and a file holds a few dozen pairs at most.
 */
#include "ingest/sqlite_util.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static uint64_t op_limit_calls;          /* 0: no cap; else progress callbacks allowed */
static _Thread_local uint64_t op_calls;  /* callbacks spent by this thread's open reader */

#define OPS_PER_CALLBACK 1000

void sqlu_set_op_limit(uint64_t ops)
{
	op_limit_calls = ops ? (ops + OPS_PER_CALLBACK - 1) / OPS_PER_CALLBACK : 0;
}

static int progress_cb(void *arg)
{
	(void)arg;
	return ++op_calls > op_limit_calls;
}

/* "file:" + path with every byte outside [A-Za-z0-9/._~-] percent-encoded
 * (a path may hold '?', '#' or '%') + "?immutable=1". */
static char *file_uri(const char *path)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(path);
	char *u = xmalloc(5 + 3 * n + sizeof("?immutable=1"));
	char *p = u;

	memcpy(p, "file:", 5);
	p += 5;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)path[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '/' || c == '.' || c == '_' || c == '-' || c == '~') {
			*p++ = (char)c;
		} else {
			*p++ = '%';
			*p++ = hex[c >> 4];
			*p++ = hex[c & 15];
		}
	}
	memcpy(p, "?immutable=1", sizeof("?immutable=1"));
	return u;
}

enum aorta_status sqlu_open(const char *path, sqlite3 **out, struct aorta_error *e)
{
	enum aorta_status st = AORTA_OK;
	sqlite3 *db = NULL;
	sqlite3_stmt *q = NULL;
	char *uri = file_uri(path);
	FILE *f;
	int rc;

	*out = NULL;
	/* SQLite opens lazily and would accept a missing file as an empty
	 * database in some modes: check readability first, for a plain message. */
	f = fopen(path, "rb");
	if (!f) {
		st = aorta_fail(e, AORTA_EINPUT, path, 0, -1, "cannot open: %s", strerror(errno));
		goto out;
	}
	fclose(f);
	rc = sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
			     NULL);
	if (rc != SQLITE_OK) {
		st = aorta_fail(e, AORTA_EINPUT, path, 0, -1, "cannot open as sqlite: %s",
				db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
		goto out;
	}
	sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
	sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)NULL);
	sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, (int *)NULL);
	sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, (int *)NULL);
	op_calls = 0;
	if (op_limit_calls)
		sqlite3_progress_handler(db, OPS_PER_CALLBACK, progress_cb, NULL);
	/* Reading the schema is what tells an SQLite file from anything else. */
	rc = sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master", -1, &q, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(q);
	if (rc != SQLITE_ROW) {
		st = aorta_fail(e, AORTA_EINPUT, path, 0, -1,
				"not an sqlite database, or a corrupt or truncated one: %s",
				sqlite3_errmsg(db));
		goto out;
	}
out:
	sqlite3_finalize(q);
	free(uri);
	if (st != AORTA_OK)
		sqlite3_close(db);
	else
		*out = db;
	return st;
}

void sqlu_close(sqlite3 *db)
{
	sqlite3_close(db);
}

int sqlu_has_table(sqlite3 *db, const char *name)
{
	sqlite3_stmt *q = NULL;
	int found = 0;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type IN ('table','view') "
				   "AND name = ?1", -1, &q, NULL) != SQLITE_OK)
		goto out;
	sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
	found = sqlite3_step(q) == SQLITE_ROW;
out:
	sqlite3_finalize(q);
	return found;
}

int sqlu_has_column(sqlite3 *db, const char *table, const char *col)
{
	sqlite3_stmt *q = NULL;
	int found = 0;

	/* pragma_table_info() takes the table name as a bound value. */
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2", -1, &q,
			       NULL) != SQLITE_OK)
		goto out;
	sqlite3_bind_text(q, 1, table, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 2, col, -1, SQLITE_STATIC);
	found = sqlite3_step(q) == SQLITE_ROW;
out:
	sqlite3_finalize(q);
	return found;
}

const char *sqlu_col(sqlite3 *db, const char *table, const char *alias, const char *col,
		     char *buf, size_t cap)
{
	if (!sqlu_has_column(db, table, col))
		return "NULL";
	snprintf(buf, cap, "%s.\"%s\"", alias, col);
	return buf;
}

enum aorta_status sqlu_prepare(sqlite3 *db, const char *sql, sqlite3_stmt **st,
			       const char *path, const char *what, struct aorta_error *e)
{
	int rc = sqlite3_prepare_v2(db, sql, -1, st, NULL);

	if (rc == SQLITE_OK)
		return AORTA_OK;
	sqlite3_finalize(*st);
	*st = NULL;
	return sqlu_step_fail(db, rc, path, what, e);
}

enum aorta_status sqlu_step_fail(sqlite3 *db, int rc, const char *path, const char *what,
				 struct aorta_error *e)
{
	int base = rc & 0xff;

	if (base == SQLITE_NOMEM)
		return aorta_fail(e, AORTA_EINTERNAL, path, 0, -1, "out of memory reading %s", what);
	if (base == SQLITE_INTERRUPT)
		return aorta_fail(e, AORTA_EINPUT, path, 0, -1,
				  "reading %s took more than the query budget", what);
	if (base == SQLITE_CORRUPT || base == SQLITE_NOTADB || base == SQLITE_IOERR)
		return aorta_fail(e, AORTA_EINPUT, path, 0, -1,
				  "a corrupt or truncated database: cannot read %s: %s", what,
				  sqlite3_errmsg(db));
	return aorta_fail(e, AORTA_EINPUT, path, 0, -1, "cannot read %s: %s", what,
			  sqlite3_errmsg(db));
}

const char *sqlu_text(sqlite3_stmt *st, int col, size_t *len)
{
	const unsigned char *s = sqlite3_column_text(st, col);
	int n = sqlite3_column_bytes(st, col);

	if (!s) {
		*len = 0;
		return "";
	}
	*len = n > 0 ? (size_t)n : 0;
	return (const char *)s;
}

int sqlu_is_null(sqlite3_stmt *st, int col)
{
	return sqlite3_column_type(st, col) == SQLITE_NULL;
}

int sqlu_int(sqlite3_stmt *st, int col, int64_t *v)
{
	switch (sqlite3_column_type(st, col)) {
	case SQLITE_INTEGER:
		*v = sqlite3_column_int64(st, col);
		return 1;
	case SQLITE_FLOAT: { /* a whole number stored as REAL is accepted */
		double d = sqlite3_column_double(st, col);
		if (d >= -9.2e18 && d <= 9.2e18 && d == (double)(int64_t)d) {
			*v = (int64_t)d;
			return 1;
		}
		return 0;
	}
	default:
		return 0;
	}
}

const char *sqlu_type_name(sqlite3_stmt *st, int col)
{
	switch (sqlite3_column_type(st, col)) {
	case SQLITE_INTEGER: return "integer";
	case SQLITE_FLOAT: return "real";
	case SQLITE_TEXT: return "text";
	case SQLITE_BLOB: return "blob";
	default: return "null";
	}
}

/* ------------------------------------------------------------------ steps */

static int prefix_ci(const char *s, size_t n, const char *p, size_t *used)
{
	size_t m = strlen(p);

	if (n < m)
		return 0;
	for (size_t i = 0; i < m; i++) {
		char c = s[i];

		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (c != p[i])
			return 0;
	}
	*used = m;
	return 1;
}

static int parse_digits(const char *s, size_t n, int64_t *num)
{
	int64_t v = 0;

	if (n == 0 || n > 18)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		v = v * 10 + (s[i] - '0');
	}
	*num = v;
	return 1;
}

int sqlu_step_number(const char *s, size_t n, int64_t *num)
{
	static const char *const words[] = { "iteration", "iter", "step" };
	size_t used = 0;

	if (n > 13 && memcmp(s, "ProfilerStep#", 13) == 0)
		return parse_digits(s + 13, n - 13, num);
	for (size_t w = 0; w < sizeof(words) / sizeof(words[0]); w++) {
		if (!prefix_ci(s, n, words[w], &used))
			continue;
		while (used < n && (s[used] == ' ' || s[used] == '_' || s[used] == '#'))
			used++;
		return parse_digits(s + used, n - used, num);
	}
	return 0;
}

/* ------------------------------------------------------------------ ranks */

void sqlu_ranks_init(struct sqlu_ranks *r, const char *path, const char *format)
{
	memset(r, 0, sizeof(*r));
	r->path = path;
	r->format = format;
}

struct trace *sqlu_ranks_get(struct sqlu_ranks *r, int64_t pid, int64_t dev)
{
	struct trace *t;

	if (r->last < r->n && r->v[r->last].pid == pid && r->v[r->last].dev == dev)
		return r->v[r->last].t;
	for (size_t i = 0; i < r->n; i++) {
		if (r->v[i].pid == pid && r->v[i].dev == dev) {
			r->last = i;
			return r->v[i].t;
		}
	}
	if (r->n >= SQLU_MAX_RANKS)
		return NULL;
	GROW(r->v, r->cap, r->n + 1);
	t = trace_new(r->path, r->format);
	t->pid = pid;
	t->device = dev >= 0 && dev <= INT_MAX ? (int)dev : -1;
	r->v[r->n].pid = pid;
	r->v[r->n].dev = dev;
	r->v[r->n].t = t;
	r->last = r->n++;
	return t;
}

static int rank_cmp(const void *a, const void *b)
{
	const struct sqlu_rank *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return 0;
}

void sqlu_ranks_finish(struct sqlu_ranks *r, const struct ingest_opts *o, struct trace_set *out)
{
	const struct rules *rules = o ? o->rules : NULL;

	if (r->n > 1)
		qsort(r->v, r->n, sizeof(r->v[0]), rank_cmp);
	for (size_t i = 0; i < r->n; i++) {
		struct trace *t = r->v[i].t;

		if (r->n == 1 && o && o->rank_hint >= 0)
			t->rank = o->rank_hint;
		else
			t->rank = (int)i;
		if (r->n > 1)
			t->world_size = (int)r->n;
		trace_finish(t, rules);
		trace_set_add(out, t); /* out owns t from here */
		r->v[i].t = NULL;
	}
	sqlu_ranks_release(r);
}

void sqlu_ranks_release(struct sqlu_ranks *r)
{
	for (size_t i = 0; i < r->n; i++)
		trace_free(r->v[i].t);
	free(r->v);
	r->v = NULL;
	r->n = r->cap = r->last = 0;
}
