/*
 * fields.h - the analysis model as tables: one table per record (analysis,
 * rank, step, stream, collective, kernel, across-ranks, cross-rank step),
 * each line a field (JSON key, type, offsetof, flags).  Three codecs walk
 * them and nothing else:
 *
 *   json_write.c  the analysis JSON (schema aorta.analysis/2), key order =
 *                 table order;
 *   json_read.c   the schema-checked reader: the types, errors naming the
 *                 file, the byte offset and the field's path;
 *   check.c       the values: each field's range (its flags, declared on
 *                 its line) and each record's cross-field rules (check),
 *                 run on what was read (errors at the value's byte offset)
 *                 and on an analysis about to be written (json_write.c
 *                 refuses to write one that breaks them: what analyze
 *                 writes, its reader reads back);
 *   pack.c        a rank's results as bytes for MPI (the struct is copied
 *                 whole; the table says which members are pointers:
 *                 strings, arrays of records, transient members cleared).
 *
 * A new field is one line in its record's table, its range on that line.  A new nested list (e.g.
 * across_ranks.what_if) is a struct for its row, a record table for that
 * row, and one FT_ARR line (pointer member + size_t count member) in the
 * table of the struct that owns it: the writer, the reader and, for
 * members of struct rank_result, the pack follow.  Derived figures (ratios,
 * percentages, statistics) are FT_HOOK lines with a writer only: they are
 * recomputed, never read back.
 *
 * Not thread-safe concerns: the tables are constant; codecs keep their
 * state on the stack.
 */
#ifndef AORTA_ANALYSIS_IO_FIELDS_H
#define AORTA_ANALYSIS_IO_FIELDS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "base/output.h"
#include "overlap/analysis.h"
#include "overlap/figures.h"
#include "timeline/timeline.h"

/* The value limits of the analysis (docs/formats.md): a time figure lies
 * within the distance between a trace's time limits (timeline.h, about
 * 6.9e12 ms: any two times of a run are closer), a rank below 2^24, any
 * other number within +-1e13. */
#define ANALYSIS_MAX_NS (TRACE_MAX_NS - TRACE_MIN_NS)
#define ANALYSIS_MAX_RANK (1 << 24)
#define ANALYSIS_MAX_NUM 1e13

enum ft {
	FT_INT,   /* int */
	FT_I32,   /* int32_t */
	FT_I64,   /* int64_t */
	FT_U64,   /* uint64_t */
	FT_MS,    /* int64_t ns, written as ms with six decimals (exact) */
	FT_MSF,   /* int64_t ns, written as a double ms with six decimals */
	FT_NUM,   /* double * scale, `dec` decimals; NaN <-> null */
	FT_BOOL,  /* int 0/1 */
	FT_STR,   /* char *, owned; never NULL after reading */
	FT_SSTR,  /* const char *, one of names[] (static); dflt when unknown */
	FT_CHARS, /* char[size] inside the struct; "" <-> null */
	FT_ENUM,  /* uint8_t, names by enum_name(); unknown: error, or dflt_i with FF_LAX */
	FT_FIGS,  /* struct ov_figures: FIGURES' keys (overlap/figures.h), flattened */
	FT_OBJ,   /* a nested object over the same struct: fields of sub at off + theirs */
	FT_ARR,   /* an array of sub records: pointer at off, size_t count at cnt */
	FT_HOOK,  /* hand-written: put (derived, write only) and/or get */
	FT_PACK,  /* a member the JSON does not carry: with cnt, an array of
		   * `size`-byte elements the pack carries whole; else `size`
		   * bytes the pack clears (pointers valid on one side only) */
};

enum {
	FF_REQ = 1 << 0,     /* required on read */
	FF_XR = 1 << 1,      /* cross-rank: null unless the clocks are aligned */
	FF_XRONLY = 1 << 2,  /* cross-rank: written only when the clocks are aligned */
	FF_NEGNULL = 1 << 3, /* an integer < 0 (INT64_MIN for FT_I64) is written as null */
	FF_NZ = 1 << 4,      /* written only when nonzero / non-empty */
	FF_GE0 = 1 << 5,     /* range: >= 0 */
	FF_GEM1 = 1 << 6,    /* range: >= -1 */
	FF_SHARE = 1 << 7,   /* range: 0 <= value <= 1 */
	FF_LAX = 1 << 8,     /* FT_ENUM: an unknown name reads as dflt_i */
	FF_NULLOK = 1 << 9,  /* null accepted on read: leaves the record's default */
	FF_PCT = 1 << 10,    /* range: 0 <= value <= 100 */
	FF_POS = 1 << 11,    /* range: > 0 (an integer >= 1) */
	FF_RANK = 1 << 12,   /* range: a rank, at most ANALYSIS_MAX_RANK (with GE0 or GEM1 below) */
	FF_TIME = 1 << 13,   /* range: a time of the trace, TRACE_MIN_NS .. TRACE_MAX_NS */
	FF_LE100 = 1 << 14,  /* range: <= 100 (a gain in percent of the step) */
	FF_NONEMPTY = 1 << 15, /* FT_STR: not empty */
	FF_MSNUM = 1 << 16,  /* FT_NUM: milliseconds, within ANALYSIS_MAX_NS */
};
/* FF_REQ with a `when`: required where `when` holds (what_if's figures
 * where it is ok); an FT_NUM with FF_REQ is a number, never null. */

struct io_ctx;
struct rd;
struct jnode;
struct record;

/* Hooks get the member at the field's off (off 0: the record itself). */
typedef void (*put_fn)(struct jw *w, const char *key, const void *rec, const struct io_ctx *c);
/* Reads the value v (NULL: absent) of key into rec; 0 ok, -1 failed (rd holds the error). */
typedef int (*get_fn)(struct rd *r, const struct jnode *v, const char *key, void *rec, struct io_ctx *c);
/* Checks the values a hook carries (v: its JSON when reading, NULL when
 * writing); 0 ok, -1 failed. */
typedef int (*chk_fn)(struct rd *r, const struct jnode *v, const char *key, const void *rec, struct io_ctx *c);

struct field {
	const char *key;
	uint8_t type;           /* enum ft */
	uint32_t flags;
	size_t off;             /* offsetof in the record's struct */
	int dec;                /* FT_NUM decimals */
	double scale;           /* FT_NUM: written value = member * scale (0: 1) */
	size_t cnt;             /* FT_ARR: offsetof the size_t count */
	size_t size;            /* FT_CHARS: buffer size; FT_PACK: bytes to clear */
	const struct record *sub; /* FT_OBJ, FT_ARR */
	const char *const *names; /* FT_SSTR: the static strings, NULL-terminated */
	const char *(*enum_name)(int v); /* FT_ENUM */
	int enum_count;
	int dflt_i;             /* FT_ENUM with FF_LAX */
	put_fn put;             /* FT_HOOK writer (NULL: not written) */
	get_fn get;             /* FT_HOOK reader (NULL: not read) */
	chk_fn chk;             /* FT_HOOK values check (NULL: derived, nothing to check) */
	int (*when)(const void *rec, const struct io_ctx *c); /* written only when true */
};

struct record {
	const char *name;
	size_t size;            /* sizeof the struct (array elements) */
	const struct field *f;
	size_t n;
	/* defaults before reading (NaN figures, -1 ranks), ctx gives the index */
	void (*init)(void *rec, struct io_ctx *c, size_t index);
	/* the record's cross-field rules (check.c runs them after its fields'
	 * ranges, on reading and before writing; obj NULL when writing); 0 ok */
	int (*check)(struct rd *r, const struct jnode *obj, const void *rec, struct io_ctx *c);
};

/* What a field's codec may need besides its record: the whole analysis
 * and the rank being written or read. */
struct io_ctx {
	const struct analysis *a;
	struct analysis *wa;          /* reading: the analysis being filled */
	const struct rank_result *r;  /* the rank (writing) */
	struct rank_result *wr;       /* the rank (reading) */
	size_t ri;                    /* its index in a->r */
	const struct jnode *root;     /* reading: the document */
	const struct whatif *wi;      /* checking: the what-if whose rows are checked */
};

extern const struct record REC_ANALYSIS, REC_RANK, REC_STEP, REC_STREAM, REC_COLL, REC_KERNEL, REC_ACROSS,
	REC_XSTEP;

/* Whether cross-rank figures exist (clocks aligned). */
static inline int io_xr(const struct io_ctx *c)
{
	return c->a->clocks_aligned;
}

/* The analysis and the rank being read or written. */
static inline const struct analysis *io_an(const struct io_ctx *c)
{
	return c->wa ? c->wa : c->a;
}

/* The writer's walk (json_write.c): the fields of rec as members of the
 * object open in w. */
void io_write_fields(struct jw *w, const struct record *rc, const void *rec, const struct io_ctx *c);

/* The reader's walk (json_read.c). */
int io_read_fields(struct rd *r, const struct jnode *obj, const struct record *rc, void *rec,
		   struct io_ctx *c);

/* Reads array v (member key of the current object) of records rc into a
 * new array *out (the caller frees it, also on error) of *n elements. */
int io_read_arr(struct rd *r, const struct jnode *v, const char *key, const struct record *rc, void **out,
		size_t *n, struct io_ctx *c);

/* A list of ranks (int32) written as an array of integers, and read back
 * into a new array (*out, *n: the caller's, freed by it also on error). */
void io_put_ranks(struct jw *w, const char *k, const int32_t *v, size_t n);
int io_get_ranks(struct rd *r, const struct jnode *v, const char *k, int32_t **out, size_t *n);

/* A list of strings, and read back into a new array of new strings. */
void io_put_strs(struct jw *w, const char *k, char *const *v, size_t n);
int io_get_strs(struct rd *r, const struct jnode *v, const char *k, char ***out, size_t *n);

/* A string member that may be NULL (written as null), and its reader. */
void io_put_nstr(struct jw *w, const char *k, const void *p, const struct io_ctx *c);
int io_get_nstr(struct rd *r, const struct jnode *v, const char *k, void *p, struct io_ctx *c);

/* The analysis's flight_recorder object (fields_fr.c): written when the
 * run read Flight Recorder dumps. */
int io_has_fr(const void *p, const struct io_ctx *c);
void io_put_fr(struct jw *w, const char *k, const void *p, const struct io_ctx *c);
int io_get_fr(struct rd *r, const struct jnode *v, const char *k, void *p, struct io_ctx *c);

/* Reads object v (member key of the current object) as record rc into rec:
 * the path grows by key while its fields are read. */
int io_read_obj(struct rd *r, const struct jnode *v, const char *key, const struct record *rc, void *rec,
		struct io_ctx *c);

/* The values (check.c): each field's range and each record's rules over
 * rec, its JSON obj beside (reading: the offsets of errors; NULL when
 * writing).  io_check_obj / io_check_el grow the path by key / key[k]. */
int io_check_fields(struct rd *r, const struct jnode *obj, const struct record *rc, const void *rec,
		    struct io_ctx *c);
int io_check_obj(struct rd *r, const struct jnode *v, const char *key, const struct record *rc, const void *rec,
		 struct io_ctx *c);
int io_check_el(struct rd *r, const struct jnode *v, const char *key, size_t k, const struct record *rc,
		const void *rec, struct io_ctx *c);


/* ---- the document tree of the reader, with byte offsets (jdoc.c) ---- */
enum jt { JN_NULL, JN_FALSE, JN_TRUE, JN_INT, JN_DBL, JN_STR, JN_OBJ, JN_ARR };
struct jnode {
	uint8_t t;
	long long i;
	double d;
	long long ns;            /* JN_INT/JN_DBL read as ms: exact ns when ms_exact */
	int ms_exact;
	char *s;                 /* JN_STR */
	size_t off;              /* byte offset of the value in the file */
	size_t n, cap;           /* JN_OBJ, JN_ARR */
	char **keys;             /* JN_OBJ */
	struct jnode **v;
};
/* A number of milliseconds as ns: exact from the text when it has at most
 * six decimals (as the writer prints), else rounded from the double. */
static inline int64_t jdoc_ns(const struct jnode *v)
{
	return v->ms_exact ? (int64_t)v->ns : (int64_t)llround(v->d * 1e6);
}
/* Parses text[0..len) (0 on success; else err holds yajl's message and
 * *off where it stopped). */
struct jnode *jdoc_parse(const char *text, size_t len, char *err, size_t errn, size_t *off);
void jdoc_free(struct jnode *n);
/* Member key of object o, NULL when absent (or o not an object). */
const struct jnode *jdoc_get(const struct jnode *o, const char *key);

/* ---- reader state (json_read.c) ---- */
struct rd {
	const char *path;
	struct aorta_error *e;
	char where[256];        /* path of the current object, e.g. "ranks[2].steps[0]" */
	size_t obj_off;         /* byte offset of the current object */
	int failed;
	int writing;            /* checking an analysis about to be written (errors: internal) */
};
/* Records the first error: "<file>: at byte N: <where>.<key>: <msg>". */
int io_fail(struct rd *r, const struct jnode *at, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
