/*
 * rocprof_csv.c - rocprofv3 CSV output (kernel_trace.csv, memory_copy_trace.csv,
 * plus the hip_trace.csv and marker_api_trace.csv beside them).
 *
 * Design.  Column sets differ between rocprofv3 releases (ROCm 6.2/6.3 write 18
 * kernel columns with a numeric Agent_Id and no Stream_Id; ROCm 7.0 writes 22
 * with Stream_Id and "Agent 4" strings), so every file is read by its header:
 * columns are looked up by name and the rest are ignored.  The CSV tokenizer is
 * a byte-at-a-time RFC 4180 state machine fed in chunks, so a file is streamed
 * through zread (gzip transparently) and never held whole; only the current
 * record is buffered (bounded by CSV_MAX_RECORD).  Quoted fields may contain
 * commas, doubled quotes and newlines; CR before LF is dropped.
 *
 * Given the path of a kernel_trace.csv, the reader also loads, when they
 * exist, the files with the same prefix in the same folder
 * (<prefix>memory_copy_trace.csv, <prefix>hip_trace.csv for host launches by
 * Correlation_Id on their Thread_Id, <prefix>rccl_trace.csv for RCCL's API
 * calls (ncclAllReduce ...) as host collective calls on their thread, which
 * name the collective of a kernel launched inside (docs/metrics.md
 * "Collective identity"), <prefix>marker_api_trace.csv for step ranges named
 * "ProfilerStep#N" or "step N").  Given a memory_copy_trace.csv it loads that
 * file and the hip / marker siblings.
 *
 * One struct trace per GPU agent: spans go to the agent that runs them
 * (kernels: Agent_Id; copies: the destination of a host-to-device copy, else
 * the source).  Agents are ordered by the number in their id ("Agent 4" -> 4);
 * device = that number.  With one agent, rank = o->rank_hint (0 if none) and
 * world_size stays unknown (one process per GPU is the normal layout); with
 * several, rank = ordinal 0..n-1 and world_size = n.  Stream = Stream_Id when
 * the header has it, else Queue_Id, else 0.  Host launches and steps are
 * added to every agent's trace.  Malformed rows are counted with trace_skip
 * (on the first trace) naming file and line; an unknown header is
 * AORTA_EINPUT at line 1.
 *
 * Cost: O(bytes) time, memory O(spans) in the traces plus one record.
 */
#include "ingest/ingest.h"
#include "ingest/ingest_mem.h"

#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/zread.h"

#define CSV_MAX_RECORD (16u << 20) /* one record above 16 MiB is not a rocprof CSV */
#define CSV_MAX_FIELDS 4096

/* ------------------------------------------------------------------------ */
/* RFC 4180 tokenizer                                                        */

enum csv_state { CS_FIELD_START, CS_UNQUOTED, CS_QUOTED, CS_QUOTE_IN_QUOTED };

struct csv {
	enum csv_state st;
	char *buf;            /* current record: fields, each NUL-terminated */
	size_t len, cap;
	size_t *fstart;       /* field i starts at buf + fstart[i] */
	size_t nf, fcap;
	long long line;       /* physical line being read, 1-based */
	long long rec_line;   /* line on which the current record began */
	long long rec_off;    /* byte offset at which it began */
	long long off;        /* bytes consumed */
	int rec_chars;        /* anything seen in this record (incl. quotes) */
	int too_big;          /* record exceeded CSV_MAX_RECORD or CSV_MAX_FIELDS */
	int unterminated;     /* EOF inside a quoted field */
};

static void csv_init(struct csv *c)
{
	memset(c, 0, sizeof(*c));
	c->line = 1;
	c->rec_line = 1;
}

static void csv_release(struct csv *c)
{
	free(c->buf);
	free(c->fstart);
}

static void csv_putc(struct csv *c, char ch)
{
	if (c->too_big)
		return;
	if (c->len + 2 > CSV_MAX_RECORD) {
		c->too_big = 1;
		return;
	}
	GROW(c->buf, c->cap, c->len + 2);
	c->buf[c->len++] = ch;
}

static void csv_begin_field(struct csv *c)
{
	if (c->too_big)
		return;
	if (c->nf >= CSV_MAX_FIELDS) {
		c->too_big = 1;
		return;
	}
	GROW(c->fstart, c->fcap, c->nf + 1);
	GROW(c->buf, c->cap, c->len + 1);
	c->fstart[c->nf++] = c->len;
}

static void csv_end_field(struct csv *c)
{
	if (c->too_big)
		return;
	GROW(c->buf, c->cap, c->len + 1);
	c->buf[c->len++] = '\0';
}

static const char *csv_field(const struct csv *c, size_t i)
{
	return i < c->nf ? c->buf + c->fstart[i] : "";
}

static size_t csv_field_len(const struct csv *c, size_t i)
{
	if (i >= c->nf)
		return 0;
	return (i + 1 < c->nf ? c->fstart[i + 1] : c->len) - c->fstart[i] - 1;
}

typedef int (*csv_record_fn)(void *ctx, struct csv *c);

static void csv_reset_record(struct csv *c)
{
	c->len = 0;
	c->nf = 0;
	c->rec_chars = 0;
	c->too_big = 0;
	c->unterminated = 0;
	c->st = CS_FIELD_START;
}

/* Ends the record; blank lines are dropped.  Returns the callback's value. */
static int csv_emit(struct csv *c, csv_record_fn fn, void *ctx)
{
	int r = 0;

	if (c->rec_chars) {
		if (c->nf == 0)
			csv_begin_field(c);
		csv_end_field(c);
		r = fn(ctx, c);
	}
	csv_reset_record(c);
	return r;
}

/* Feeds n bytes; returns nonzero if the callback asked to stop. */
static int csv_feed(struct csv *c, const char *p, size_t n, csv_record_fn fn, void *ctx)
{
	for (size_t i = 0; i < n; i++) {
		char ch = p[i];

		c->off++;
		if (!c->rec_chars && c->st == CS_FIELD_START && c->nf == 0) {
			if (ch == '\n') {
				c->line++;
				continue;
			}
			if (ch == '\r')
				continue;
			c->rec_line = c->line;
			c->rec_off = c->off - 1;
		}
		switch (c->st) {
		case CS_FIELD_START:
			c->rec_chars = 1;
			if (ch == '"') {
				csv_begin_field(c);
				c->st = CS_QUOTED;
			} else if (ch == ',') {
				csv_begin_field(c);
				csv_end_field(c);
			} else if (ch == '\n') {
				csv_begin_field(c);
				c->line++;
				if (csv_emit(c, fn, ctx))
					return 1;
			} else if (ch == '\r') {
				/* dropped outside quotes */
			} else {
				csv_begin_field(c);
				csv_putc(c, ch);
				c->st = CS_UNQUOTED;
			}
			break;
		case CS_UNQUOTED:
			if (ch == ',') {
				csv_end_field(c);
				c->st = CS_FIELD_START;
			} else if (ch == '\n') {
				c->line++;
				if (csv_emit(c, fn, ctx))
					return 1;
			} else if (ch != '\r') {
				csv_putc(c, ch); /* a stray quote here is kept literally */
			}
			break;
		case CS_QUOTED:
			if (ch == '"') {
				c->st = CS_QUOTE_IN_QUOTED;
			} else {
				if (ch == '\n')
					c->line++;
				csv_putc(c, ch);
			}
			break;
		case CS_QUOTE_IN_QUOTED:
			if (ch == '"') {
				csv_putc(c, '"');
				c->st = CS_QUOTED;
			} else if (ch == ',') {
				csv_end_field(c);
				c->st = CS_FIELD_START;
			} else if (ch == '\n') {
				c->line++;
				if (csv_emit(c, fn, ctx))
					return 1;
			} else if (ch != '\r') {
				/* text after a closing quote: keep it (lenient) */
				csv_putc(c, ch);
				c->st = CS_UNQUOTED;
			}
			break;
		}
	}
	return 0;
}

/* End of input: flush a last record that lacks its newline. */
static int csv_finish(struct csv *c, csv_record_fn fn, void *ctx)
{
	if (c->st == CS_QUOTED)
		c->unterminated = 1;
	if (c->st == CS_FIELD_START && c->rec_chars && c->nf > 0) {
		/* "a," at EOF: the trailing empty field */
		csv_begin_field(c);
	}
	return csv_emit(c, fn, ctx);
}

/* ------------------------------------------------------------------------ */
/* Reader state                                                              */

enum file_kind { FK_NONE = 0, FK_KERNEL, FK_MEMCPY, FK_API };

struct agent {
	char *key;            /* Agent_Id as written ("Agent 4", "1") */
	long long num;        /* the number in it, -1 if none */
	struct trace *t;
};

struct rdr {
	const char *path;     /* main file (owned by caller) */
	const char *cur;      /* file being read now */
	const char *cur_base; /* its base name, for skip messages */
	const struct ingest_opts *o;
	struct agent *ag;
	size_t nag, agcap;

	/* per file */
	enum file_kind want;  /* FK_NONE: kernel or memcpy */
	enum file_kind kind;
	int is_marker;        /* 1: marker_api (steps), 2: rccl_api (host collective calls) */
	size_t ncols;
	int c_agent, c_name, c_start, c_end, c_stream, c_queue, c_corr;
	int c_dir, c_src, c_dst, c_bytes, c_func, c_thread;
	int header_done;
	int header_bad;

	/* skipped rows before their trace is known, replayed on the first trace */
	uint64_t nskip;
	char skip_first[256];

	/* launches, RCCL calls and steps, replayed on every trace at the end */
	struct launch_rec *launch;
	size_t nlaunch, lcap;
	struct rccl_call { int64_t tid, start, end; char name[48]; } *rccl;
	size_t nrccl, rcap;
	struct step_range *steps;
	size_t nsteps, scap;
	uint64_t host_events;
};

static void rdr_skip(struct rdr *r, long long line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void rdr_skip(struct rdr *r, long long line, const char *fmt, ...)
{
	va_list ap;
	char msg[200];

	if (r->nskip++)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(r->skip_first, sizeof(r->skip_first), "'%s': line %lld: %s", r->cur_base, line,
		 msg);
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* Strict int64: optional spaces, optional sign, digits, optional spaces. */
static int parse_i64(const char *s, size_t n, int64_t *out)
{
	size_t i = 0;
	int neg = 0;
	uint64_t v = 0;

	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i < n && (s[i] == '-' || s[i] == '+'))
		neg = s[i++] == '-';
	if (i >= n || !isdigit((unsigned char)s[i]))
		return -1;
	for (; i < n && isdigit((unsigned char)s[i]); i++) {
		uint64_t d = (uint64_t)(s[i] - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i != n)
		return -1;
	if (!neg && v > (uint64_t)INT64_MAX)
		return -1;
	if (neg && v > (uint64_t)INT64_MAX + 1)
		return -1;
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}

static struct agent *agent_get(struct rdr *r, const char *key, size_t n)
{
	struct agent *a;
	size_t i;

	for (i = 0; i < r->nag; i++)
		if (strlen(r->ag[i].key) == n && memcmp(r->ag[i].key, key, n) == 0)
			return &r->ag[i];
	GROW(r->ag, r->agcap, r->nag + 1);
	a = &r->ag[r->nag++];
	a->key = xmalloc(n + 1);
	memcpy(a->key, key, n);
	a->key[n] = '\0';
	a->num = -1;
	for (i = n; i > 0 && isdigit((unsigned char)key[i - 1]); i--)
		;
	if (i < n && n - i < 10) {
		a->num = 0;
		for (; i < n; i++)
			a->num = a->num * 10 + (key[i] - '0');
	}
	a->t = trace_new(r->path, "rocprof-csv");
	return a;
}

static int col_index(const struct csv *c, const char *name)
{
	for (size_t i = 0; i < c->nf; i++) {
		const char *f = csv_field(c, i);

		if (i == 0 && (unsigned char)f[0] == 0xEF && (unsigned char)f[1] == 0xBB &&
		    (unsigned char)f[2] == 0xBF)
			f += 3; /* UTF-8 byte-order mark */
		if (strcmp(f, name) == 0)
			return (int)i;
	}
	return -1;
}

static int on_header(struct rdr *r, struct csv *c)
{
	r->kind = FK_NONE;
	if (c->too_big)
		return -1;
	r->ncols = c->nf;
	r->c_agent = col_index(c, "Agent_Id");
	r->c_name = col_index(c, "Kernel_Name");
	r->c_start = col_index(c, "Start_Timestamp");
	r->c_end = col_index(c, "End_Timestamp");
	r->c_stream = col_index(c, "Stream_Id");
	r->c_queue = col_index(c, "Queue_Id");
	r->c_corr = col_index(c, "Correlation_Id");
	r->c_dir = col_index(c, "Direction");
	r->c_src = col_index(c, "Source_Agent_Id");
	r->c_dst = col_index(c, "Destination_Agent_Id");
	r->c_bytes = col_index(c, "Bytes");
	if (r->c_bytes < 0)
		r->c_bytes = col_index(c, "Size");
	r->c_func = col_index(c, "Function");
	r->c_thread = col_index(c, "Thread_Id");
	if (r->c_start < 0 || r->c_end < 0)
		r->kind = FK_NONE;
	else if (r->c_agent >= 0 && r->c_name >= 0)
		r->kind = FK_KERNEL;
	else if (r->c_dir >= 0 && r->c_src >= 0 && r->c_dst >= 0)
		r->kind = FK_MEMCPY;
	else if (r->c_func >= 0 && r->c_corr >= 0)
		r->kind = FK_API;
	if (r->want == FK_NONE)
		return r->kind == FK_KERNEL || r->kind == FK_MEMCPY ? 0 : -1;
	return r->kind == r->want ? 0 : -1;
}

static int field_i64(const struct csv *c, int col, int64_t *v)
{
	return parse_i64(csv_field(c, (size_t)col), csv_field_len(c, (size_t)col), v);
}

/* "Memcpy HtoD (Host -> Device)" etc., the names Kineto gives copies. */
static const char *memcpy_name(const char *dir, int *dev_is_dst)
{
	*dev_is_dst = 0;
	if (strstr(dir, "HOST_TO_DEVICE")) {
		*dev_is_dst = 1;
		return "Memcpy HtoD (Host -> Device)";
	}
	if (strstr(dir, "DEVICE_TO_HOST"))
		return "Memcpy DtoH (Device -> Host)";
	if (strstr(dir, "PEER"))
		return "Memcpy PtoP (Device -> Device)";
	if (strstr(dir, "DEVICE_TO_DEVICE"))
		return "Memcpy DtoD (Device -> Device)";
	if (strstr(dir, "HOST_TO_HOST"))
		return "Memcpy HtoH (Host -> Host)";
	return NULL;
}

/* N of "ProfilerStep#N" or "step N" (case-insensitive), -1 if not a step. */
static int64_t step_number(const char *s)
{
	const char *p = NULL;
	int64_t v;

	if (strncmp(s, "ProfilerStep#", 13) == 0)
		p = s + 13;
	else if (strncasecmp(s, "step ", 5) == 0 || strncasecmp(s, "step#", 5) == 0 ||
		 strncasecmp(s, "step_", 5) == 0)
		p = s + 5;
	if (!p || parse_i64(p, strlen(p), &v) || v < 0)
		return -1;
	return v;
}

static int on_row(struct rdr *r, struct csv *c)
{
	long long ln = c->rec_line;
	int64_t start, end, corr = -1, stream = 0, bytes = 0;
	struct agent *a;

	if (c->too_big) {
		rdr_skip(r, ln, "record longer than %u bytes or %u fields", CSV_MAX_RECORD,
			 CSV_MAX_FIELDS);
		return 0;
	}
	if (c->unterminated) {
		rdr_skip(r, ln, "unterminated quoted field");
		return 0;
	}
	if (c->nf != r->ncols) {
		rdr_skip(r, ln, "%zu columns, expected %zu", c->nf, r->ncols);
		return 0;
	}
	if (field_i64(c, r->c_start, &start) || field_i64(c, r->c_end, &end)) {
		rdr_skip(r, ln, "non-numeric Start_Timestamp or End_Timestamp");
		return 0;
	}
	if (end < start) {
		rdr_skip(r, ln, "End_Timestamp before Start_Timestamp");
		return 0;
	}
	if (r->c_corr >= 0 && field_i64(c, r->c_corr, &corr)) {
		rdr_skip(r, ln, "non-numeric Correlation_Id");
		return 0;
	}
	if (r->kind == FK_API) {
		int64_t tid = -1;
		if (r->c_thread >= 0 && field_i64(c, r->c_thread, &tid))
			tid = -1;
		if (r->is_marker == 1) {
			int64_t num = step_number(csv_field(c, (size_t)r->c_func));

			if (num >= 0) {
				GROW(r->steps, r->scap, r->nsteps + 1);
				r->steps[r->nsteps++] = (struct step_range){ num, start, end };
			}
		} else if (r->is_marker == 2) {
			if (tid >= 0) {
				GROW(r->rccl, r->rcap, r->nrccl + 1);
				struct rccl_call *x = &r->rccl[r->nrccl++];
				*x = (struct rccl_call){ tid, start, end, "" };
				snprintf(x->name, sizeof(x->name), "%s", csv_field(c, (size_t)r->c_func));
			}
		} else {
			GROW(r->launch, r->lcap, r->nlaunch + 1);
			r->launch[r->nlaunch++] = (struct launch_rec){ corr, start, end, tid };
		}
		r->host_events++;
		return 0;
	}
	if (r->c_stream >= 0) {
		if (field_i64(c, r->c_stream, &stream)) {
			rdr_skip(r, ln, "non-numeric Stream_Id");
			return 0;
		}
	} else if (r->c_queue >= 0 && field_i64(c, r->c_queue, &stream)) {
		rdr_skip(r, ln, "non-numeric Queue_Id");
		return 0;
	}
	if (stream < INT32_MIN || stream > INT32_MAX) {
		rdr_skip(r, ln, "stream id out of range");
		return 0;
	}
	if (r->c_bytes >= 0 && (field_i64(c, r->c_bytes, &bytes) || bytes < 0))
		bytes = 0;
	if (r->kind == FK_KERNEL) {
		const char *ak = csv_field(c, (size_t)r->c_agent);
		size_t an = csv_field_len(c, (size_t)r->c_agent);

		if (an == 0) {
			rdr_skip(r, ln, "empty Agent_Id");
			return 0;
		}
		a = agent_get(r, ak, an);
		trace_add_device(a->t, start, end, csv_field(c, (size_t)r->c_name),
				 csv_field_len(c, (size_t)r->c_name), R_KERNEL, (int32_t)stream, corr,
				 0);
	} else {
		int dev_is_dst;
		const char *nm = memcpy_name(csv_field(c, (size_t)r->c_dir), &dev_is_dst);
		int col = dev_is_dst ? r->c_dst : r->c_src;
		size_t an = csv_field_len(c, (size_t)col);

		if (!nm) {
			rdr_skip(r, ln, "unknown Direction");
			return 0;
		}
		if (an == 0) {
			rdr_skip(r, ln, "empty agent id");
			return 0;
		}
		a = agent_get(r, csv_field(c, (size_t)col), an);
		trace_add_device(a->t, start, end, nm, strlen(nm), R_MEMCPY, (int32_t)stream, corr,
				 (uint64_t)bytes);
	}
	return 0;
}

static int on_record(void *ctx, struct csv *c)
{
	struct rdr *r = ctx;

	if (!r->header_done) {
		r->header_done = 1;
		if (on_header(r, c)) {
			r->header_bad = 1;
			return 1;
		}
		return 0;
	}
	return on_row(r, c);
}

static const char *want_text(enum file_kind k)
{
	switch (k) {
	case FK_MEMCPY:
		return "a rocprofv3 memory_copy_trace.csv header (Direction, Source_Agent_Id, "
		       "Destination_Agent_Id, Start_Timestamp, End_Timestamp)";
	case FK_API:
		return "a rocprofv3 api trace header (Function, Correlation_Id, Start_Timestamp, "
		       "End_Timestamp)";
	default:
		return "a rocprofv3 kernel_trace.csv header (Agent_Id, Kernel_Name, "
		       "Start_Timestamp, End_Timestamp) or memory_copy_trace.csv header "
		       "(Direction, Source_Agent_Id, Destination_Agent_Id, Start_Timestamp, "
		       "End_Timestamp)";
	}
}

static void begin_file(struct rdr *r, const char *path, enum file_kind want, int is_marker)
{
	r->cur = path;
	r->cur_base = base_name(path);
	r->want = want;
	r->is_marker = is_marker;
	r->header_done = 0;
	r->header_bad = 0;
	r->kind = FK_NONE;
}

static enum aorta_status end_file(struct rdr *r, struct csv *c, struct aorta_error *e)
{
	if (!r->header_bad)
		csv_finish(c, on_record, r);
	if (r->header_bad || !r->header_done)
		return aorta_fail(e, AORTA_EINPUT, r->cur, 1, 0, "expected %s",
				  want_text(r->want));
	return AORTA_OK;
}

static enum aorta_status read_mem(struct rdr *r, const char *buf, size_t len,
				  struct aorta_error *e)
{
	struct csv c;
	enum aorta_status st;

	csv_init(&c);
	csv_feed(&c, buf, len, on_record, r);
	st = end_file(r, &c, e);
	csv_release(&c);
	return st;
}

/* Reads path (o: its opened stream, when the caller has one; NULL for a
 * file beside it, opened here). */
static enum aorta_status read_path(struct rdr *r, const char *path, const struct ingest_opts *o,
				   struct aorta_error *e)
{
	struct zread *z = NULL;
	struct csv c;
	enum aorta_status st;
	char *buf;

	st = ingest_stream_open(path, o, &z, e);
	if (st)
		return st;
	buf = xmalloc(1 << 16);
	csv_init(&c);
	for (;;) {
		ssize_t n = zread_read(z, buf, 1 << 16, e);

		if (n < 0) {
			st = e ? e->code : AORTA_EINPUT;
			if (st == AORTA_OK)
				st = AORTA_EINPUT;
			goto out;
		}
		if (n == 0)
			break;
		if (csv_feed(&c, buf, (size_t)n, on_record, r))
			break;
	}
	st = end_file(r, &c, e);
out:
	csv_release(&c);
	free(buf);
	ingest_stream_close(o, z);
	return st;
}

static int cmp_agent(const void *a, const void *b)
{
	const struct agent *x = a, *y = b;

	if (x->num != y->num)
		return x->num < y->num ? -1 : 1;
	return strcmp(x->key, y->key);
}

static void rdr_release(struct rdr *r)
{
	for (size_t i = 0; i < r->nag; i++) {
		free(r->ag[i].key);
		trace_free(r->ag[i].t);
	}
	free(r->ag);
	free(r->launch);
	free(r->rccl);
	free(r->steps);
}

/* Assigns ranks, replays launches / steps / skips, finishes, hands over. */
static void rdr_emit(struct rdr *r, struct trace_set *out)
{
	const struct ingest_opts *o = r->o;
	int hint = o ? o->rank_hint : -1;

	if (r->nag == 0)
		agent_get(r, "", 0); /* keep one (empty) trace so the file shows up */
	qsort(r->ag, r->nag, sizeof(*r->ag), cmp_agent);
	for (size_t i = 0; i < r->nag; i++) {
		struct trace *t = r->ag[i].t;

		t->device = r->ag[i].num >= 0 && r->ag[i].num < INT32_MAX ? (int)r->ag[i].num : -1;
		if (r->nag == 1) {
			t->rank = hint >= 0 ? hint : 0;
			t->world_size = -1;
		} else {
			t->rank = (int)i;
			t->world_size = (int)r->nag;
		}
		for (size_t k = 0; k < r->nlaunch; k++)
			trace_add_launch_tid(t, r->launch[k].corr, r->launch[k].start_ns,
					     r->launch[k].end_ns, r->launch[k].tid);
		for (size_t k = 0; k < r->nrccl; k++)
			trace_add_host_coll(t, r->rccl[k].tid, r->rccl[k].start, r->rccl[k].end, r->rccl[k].name,
					    strlen(r->rccl[k].name), NULL);
		for (size_t k = 0; k < r->nsteps; k++)
			trace_add_step(t, r->steps[k].number, r->steps[k].start_ns,
				       r->steps[k].end_ns);
		t->host_events += r->host_events;
		if (i == 0)
			for (uint64_t k = 0; k < r->nskip; k++)
				trace_skip(t, "%s", r->skip_first);
		trace_finish(t, o ? o->rules : NULL);
		trace_set_add(out, t);
		r->ag[i].t = NULL;
	}
}

static int file_exists(const char *p)
{
	return access(p, R_OK) == 0;
}

enum aorta_status ingest_rocprof_csv(const char *path, const struct ingest_opts *o,
				     struct trace_set *out, struct aorta_error *e)
{
	static const char k_kernel[] = "kernel_trace.csv";
	static const char k_copy[] = "memory_copy_trace.csv";
	struct rdr r;
	enum aorta_status st;
	size_t plen = strlen(path), pre = 0;
	int is_kernel = 0, have_prefix = 0;
	char *sib = NULL;

	memset(&r, 0, sizeof(r));
	r.path = path;
	r.o = o;
	begin_file(&r, path, FK_NONE, 0);
	st = read_path(&r, path, o, e);
	if (st)
		goto fail;
	is_kernel = r.kind == FK_KERNEL;
	if (plen >= sizeof(k_kernel) - 1 && is_kernel &&
	    strcmp(path + plen - (sizeof(k_kernel) - 1), k_kernel) == 0) {
		pre = plen - (sizeof(k_kernel) - 1);
		have_prefix = 1;
	} else if (plen >= sizeof(k_copy) - 1 && !is_kernel &&
		   strcmp(path + plen - (sizeof(k_copy) - 1), k_copy) == 0) {
		pre = plen - (sizeof(k_copy) - 1);
		have_prefix = 1;
	}
	if (have_prefix) {
		static const struct { const char *suffix; enum file_kind k; int marker; } sibs[] = {
			{ "memory_copy_trace.csv", FK_MEMCPY, 0 },
			{ "hip_trace.csv", FK_API, 0 },
			{ "marker_api_trace.csv", FK_API, 1 },
			{ "rccl_trace.csv", FK_API, 2 },
		};

		sib = xmalloc(pre + 32);
		for (size_t i = 0; i < sizeof(sibs) / sizeof(sibs[0]); i++) {
			if (i == 0 && !is_kernel)
				continue;
			memcpy(sib, path, pre);
			strcpy(sib + pre, sibs[i].suffix);
			if (!file_exists(sib))
				continue;
			begin_file(&r, sib, sibs[i].k, sibs[i].marker);
			st = read_path(&r, sib, NULL, e);
			if (st)
				goto fail;
		}
	}
	free(sib);
	rdr_emit(&r, out);
	rdr_release(&r);
	return AORTA_OK;
fail:
	free(sib);
	rdr_release(&r);
	return st;
}

enum aorta_status ingest_rocprof_csv_mem(const char *path, const void *buf, size_t len,
					 const struct ingest_opts *o, struct trace_set *out,
					 struct aorta_error *e)
{
	struct rdr r;
	enum aorta_status st;

	memset(&r, 0, sizeof(r));
	r.path = path;
	r.o = o;
	begin_file(&r, path, FK_NONE, 0);
	st = read_mem(&r, buf, len, e);
	if (st) {
		rdr_release(&r);
		return st;
	}
	rdr_emit(&r, out);
	rdr_release(&r);
	return AORTA_OK;
}
