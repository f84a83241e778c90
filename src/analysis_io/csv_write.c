/*
 * csv_write.c - the analysis as CSV tables (--csv DIR), their columns
 * taken from the record tables of fields.c: a column names a field by its
 * key (a path through nested objects: "clock.offset_ms"), and the field
 * gives the value, its type, its decimals and whether it is cross-rank, as
 * it does for the JSON.  A row is a rank, a step or an element of one of a
 * rank's lists; every table but ranks.csv starts with the rank.
 *
 * The cells: integers as they are, times in ms with six decimals (exact),
 * numbers with their field's decimals, strings quoted (CSV's doubled
 * quotes), names (formats, types, kinds) bare; empty where the JSON has
 * null (a cross-rank figure without a shared clock, a number that is not
 * one).
 */
#include "analysis_io/analysis_io.h"
#include "analysis_io/fields.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


/* A column: the field at path (keys joined by "."; of the rank when
 * of_rank, else of the row), named name (NULL: the field's key; the
 * figures: one column per figure, named by its key). */
struct csv_col { const char *name, *path; int of_rank; };

enum csv_rows { ROWS_RANK, ROWS_STEP, ROWS_LIST };

struct csv_table {
	const char *file;
	enum csv_rows rows;
	const char *list;        /* ROWS_LIST: the rank's list field */
	const struct csv_col *cols;
	size_t ncols;
};

#define NCOLS(t) (sizeof(t) / sizeof(t[0]))
#define RANK_COL { NULL, "rank", 1 }

static const struct csv_col RANK_COLS[] = {
	{ NULL, "rank", 1 }, { NULL, "world_size", 1 }, { NULL, "device", 1 }, { NULL, "format", 1 },
	{ NULL, "path", 1 }, { NULL, "total.figures", 1 }, { NULL, "wait.wait_ms", 1 },
	{ NULL, "wait.transfer_ms", 1 }, { NULL, "wait.times_last", 1 }, { NULL, "wait.caused_ms", 1 },
	{ "clock_offset_ms", "clock.offset_ms", 1 },
};
static const struct csv_col STEP_COLS[] = {
	RANK_COL, { NULL, "step", 0 }, { NULL, "start_ns", 0 }, { NULL, "end_ns", 0 }, { NULL, "figures", 0 },
	{ NULL, "host_bound", 0 },
};
static const struct csv_col STREAM_COLS[] = {
	RANK_COL, { NULL, "stream", 0 }, { NULL, "busy_ms", 0 }, { NULL, "utilization", 0 }, { NULL, "spans", 0 },
};
static const struct csv_col COLL_COLS[] = {
	RANK_COL, { NULL, "type", 0 }, { NULL, "process_group", 0 }, { NULL, "bytes", 0 },
	{ NULL, "group_size", 0 }, { NULL, "count", 0 }, { NULL, "total_ms", 0 }, { NULL, "exposed_ms", 0 },
	{ NULL, "wait_ms", 0 }, { NULL, "transfer_ms", 0 }, { NULL, "algbw_gbps", 0 }, { NULL, "busbw_gbps", 0 },
	{ NULL, "matched", 0 }, { NULL, "wait_share", 0 }, { NULL, "algbw_kernel_gbps", 0 },
	{ NULL, "busbw_kernel_gbps", 0 },
};
static const struct csv_col KERNEL_COLS[] = {
	RANK_COL, { NULL, "name", 0 }, { NULL, "kind", 0 }, { NULL, "count", 0 }, { NULL, "total_ms", 0 },
	{ NULL, "min_ms", 0 }, { NULL, "max_ms", 0 },
};

static const struct csv_table TABLES[] = {
	{ "ranks.csv", ROWS_RANK, NULL, RANK_COLS, NCOLS(RANK_COLS) },
	{ "steps.csv", ROWS_STEP, NULL, STEP_COLS, NCOLS(STEP_COLS) },
	{ "streams.csv", ROWS_LIST, "streams", STREAM_COLS, NCOLS(STREAM_COLS) },
	{ "collectives.csv", ROWS_LIST, "collectives", COLL_COLS, NCOLS(COLL_COLS) },
	{ "kernels.csv", ROWS_LIST, "top_kernels", KERNEL_COLS, NCOLS(KERNEL_COLS) },
};

/* The field of rc at path, and its offset from the record (the offsets
 * of the objects on the way added); NULL when none. */
static const struct field *find_path(const struct record *rc, const char *path, size_t *off)
{
	*off = 0;
	for (;;) {
		const char *dot = strchr(path, '.');
		size_t len = dot ? (size_t)(dot - path) : strlen(path);
		const struct field *f = NULL;
		for (size_t k = 0; k < rc->n && !f; k++)
			if (rc->f[k].key && strlen(rc->f[k].key) == len && !strncmp(rc->f[k].key, path, len))
				f = &rc->f[k];
		if (!f || !dot)
			return f;
		if (f->type != FT_OBJ)
			return NULL;
		*off += f->off;
		rc = f->sub;
		path = dot + 1;
	}
}

/* A column the tables do not hold: the program is wrong, not the input. */
static void bug(const char *what, const char *key)
{
	fprintf(stderr, "aorta: internal error: csv_write: %s '%s'\n", what, key);
	abort();
}

static const struct field *col_field(const struct csv_table *t, const struct csv_col *col, size_t *off)
{
	const struct record *rc = col->of_rank ? &REC_RANK : t->rows == ROWS_STEP ? &REC_STEP : &REC_RANK;
	if (!col->of_rank && t->rows == ROWS_LIST)
		rc = find_path(&REC_RANK, t->list, off)->sub;
	const struct field *f = find_path(rc, col->path, off);
	if (!f)
		bug("no such field", col->path);
	return f;
}

static void csv_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void csv_num(FILE *f, double v, int dec)
{
	if (isfinite(v))
		fprintf(f, "%.*f", dec, v);
}

/* The cell of field fd whose member is at p. */
static void csv_cell(FILE *f, const struct field *fd, const char *p, const struct io_ctx *c)
{
	if ((fd->flags & FF_XR) && !io_xr(c))
		return; /* no shared clock: no cross-rank figure */
	switch (fd->type) {
	case FT_INT: fprintf(f, "%d", *(const int *)p); break;
	case FT_I32: fprintf(f, "%d", (int)*(const int32_t *)p); break;
	case FT_I64: fprintf(f, "%lld", (long long)*(const int64_t *)p); break;
	case FT_U64: fprintf(f, "%llu", (unsigned long long)*(const uint64_t *)p); break;
	case FT_MS: case FT_MSF: fprint_ms(f, *(const int64_t *)p); break;
	case FT_NUM: csv_num(f, *(const double *)p * (fd->scale ? fd->scale : 1), fd->dec); break;
	case FT_BOOL: fprintf(f, "%d", *(const int *)p); break;
	case FT_STR:
		if (*(char *const *)p)
			csv_str(f, *(char *const *)p);
		break;
	case FT_SSTR: fputs(*(const char *const *)p ? *(const char *const *)p : fd->names[0], f); break;
	case FT_ENUM: fputs(fd->enum_name(*(const uint8_t *)p), f); break;
	case FT_HOOK:
		if (fd->val)
			csv_num(f, fd->val(p, c), fd->dec);
		break;
	default:
		bug("no CSV cell for the field", fd->key);
	}
}

static void header(FILE *f, const struct csv_table *t)
{
	for (size_t k = 0; k < t->ncols; k++) {
		size_t off;
		const struct field *fd = col_field(t, &t->cols[k], &off);
		if (fd->type == FT_FIGS) {
			for (size_t q = 0; q < NFIGURES; q++)
				fprintf(f, "%s%s", k || q ? "," : "", FIGURES[q].key);
			continue;
		}
		fprintf(f, "%s%s", k ? "," : "", t->cols[k].name ? t->cols[k].name : fd->key);
	}
	fputc('\n', f);
}

/* One row: row is the record of the row, rank the rank's. */
static void row(FILE *f, const struct csv_table *t, const void *row, const struct rank_result *rank,
		const struct io_ctx *c)
{
	for (size_t k = 0; k < t->ncols; k++) {
		size_t off;
		const struct field *fd = col_field(t, &t->cols[k], &off);
		const char *rec = t->cols[k].of_rank ? (const char *)rank : row;
		const char *p = rec + off + fd->off;
		if (k)
			fputc(',', f);
		if (fd->type != FT_FIGS) {
			csv_cell(f, fd, p, c);
			continue;
		}
		for (size_t q = 0; q < NFIGURES; q++) {
			if (q)
				fputc(',', f);
			fprint_ms(f, fig_value(&FIGURES[q], (const struct ov_figures *)p));
		}
	}
	fputc('\n', f);
}

static void write_table(FILE *f, const struct csv_table *t, const struct analysis *a)
{
	struct io_ctx c = { .a = a };
	header(f, t);
	size_t loff = 0;
	const struct field *lf = t->rows == ROWS_LIST ? find_path(&REC_RANK, t->list, &loff) : NULL;
	for (size_t i = 0; i < a->n; i++) {
		const struct rank_result *r = &a->r[i];
		c.r = r;
		c.ri = i;
		if (t->rows == ROWS_RANK) {
			row(f, t, r, r, &c);
		} else if (t->rows == ROWS_STEP) {
			struct step_full s;
			for (size_t j = 0; j < r->nsteps; j++) {
				step_get(r, j, &s);
				row(f, t, &s, r, &c);
			}
		} else {
			const char *base = *(const char *const *)((const char *)r + loff + lf->off);
			size_t n = *(const size_t *)((const char *)r + loff + lf->cnt);
			for (size_t k = 0; k < n; k++)
				row(f, t, base + k * lf->sub->size, r, &c);
		}
	}
}

enum aorta_status analysis_guard_csv(const char *dir, const char *what, struct aorta_error *e)
{
	for (size_t i = 0; i < NCOLS(TABLES); i++) {
		char *p = xasprintf("%s/%s", dir, TABLES[i].file);
		enum aorta_status s = out_guard_output(p, what, e);
		free(p);
		if (s)
			return s;
	}
	return AORTA_OK;
}

enum aorta_status analysis_save_csv(const struct analysis *a, const char *dir, struct aorta_error *e)
{
	enum aorta_status s;
	if ((s = out_mkdir(dir, 0, e))) /* made now, removed if the command fails */
		return s;
	for (size_t i = 0; i < NCOLS(TABLES); i++) {
		struct outfile o;
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, TABLES[i].file);
		if ((s = out_open(&o, path, e)))
			return s;
		write_table(o.f, &TABLES[i], a);
		if ((s = out_commit(&o, e)))
			return s;
	}
	return AORTA_OK;
}
