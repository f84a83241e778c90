/*
 * fv.h - the value tree a Flight Recorder dump is read into, from either of
 * its two encodings: the restricted pickle reader (pickle.c) and JSON
 * (fv_json.c, through yajl).  The dump model (dump.c) is built from this
 * tree only, so both encodings give the same model.
 *
 * Design.  Every value knows the byte offset it was read at, so an error in
 * the model ("entries[3].collective_seq_id: expected an integer") names the
 * place in the file.  All values live in one arena (base/strtab.h) owned by
 * struct fv_doc; fv_doc_release frees everything at once.  A pickle may
 * share one value between several containers (its memo), so the tree is a
 * directed graph: consumers read fixed shapes (top level, entries, fields)
 * and never recurse over it generically, and a container appended into
 * itself is caught by the nesting bound.  `cache` lets a consumer convert a
 * shared value once.
 *
 * The pickle subset (protocols 2 to 5): PROTO, FRAME, STOP, MARK, POP,
 * POP_MARK, DUP; NONE, NEWTRUE, NEWFALSE; BININT, BININT1, BININT2, LONG1,
 * LONG4 (at most 64 bits), BINFLOAT; SHORT_BINUNICODE, BINUNICODE,
 * BINUNICODE8, SHORT_BINSTRING, BINSTRING (as str); SHORT_BINBYTES,
 * BINBYTES, BINBYTES8, BYTEARRAY8 (as bytes); EMPTY_LIST, EMPTY_TUPLE,
 * EMPTY_DICT, LIST, TUPLE, TUPLE1-3, DICT, APPEND, APPENDS, SETITEM,
 * SETITEMS; the memo (PUT, BINPUT, LONG_BINPUT, MEMOIZE, GET, BINGET,
 * LONG_BINGET).  Every other opcode (GLOBAL, STACK_GLOBAL, REDUCE, BUILD,
 * INST, OBJ, NEWOBJ, NEWOBJ_EX, PERSID, EXT1, ...) is refused with its byte
 * offset: nothing is ever imported or executed.  Bounds: a memo index is at
 * most the number of values memoised so far (picklers number them 0, 1,
 * ...); containers nest at most FV_MAX_DEPTH deep, marks FV_MAX_MARKS;
 * every length is checked against the bytes left.
 *
 * Thread safety: none shared; each document is its own.
 */
#ifndef AORTA_FLIGHTREC_FV_H
#define AORTA_FLIGHTREC_FV_H

#include <stddef.h>
#include <stdint.h>

#include "base/strtab.h"

enum fv_type { FV_NONE, FV_BOOL, FV_INT, FV_FLOAT, FV_STR, FV_BYTES, FV_LIST, FV_TUPLE, FV_DICT };

#define FV_MAX_DEPTH 64
#define FV_MAX_MARKS 4096

struct fv {
	uint8_t t;              /* enum fv_type */
	uint32_t depth;         /* containers: levels of containers below (0: holds none) */
	size_t off;             /* byte offset of the opcode (pickle) or value (JSON) */
	union {
		int64_t i;      /* FV_INT, FV_BOOL */
		double d;       /* FV_FLOAT */
		struct {
			const char *p; /* NUL-terminated copy (may hold NULs: use n) */
			size_t n;
		} s;            /* FV_STR, FV_BYTES */
		struct {
			struct fv **v;
			size_t n, cap;  /* FV_DICT: n is twice the items, key then value */
		} a;            /* FV_LIST, FV_TUPLE, FV_DICT */
	} u;
	void *cache;            /* for a consumer converting a shared value once */
};

struct fv_doc {
	struct arena ar;
	struct fv *root;
};

/* Reads one pickle of buf[0..len).  0 on success (d->root set); else -1 with
 * err holding what is wrong and *off the byte offset of the offending
 * opcode or value.  d is initialised here and must be released either way. */
int fv_pickle(struct fv_doc *d, const void *buf, size_t len, char *err, size_t errn, size_t *off);

/* Reads one JSON document of text[0..len) (yajl); the same contract. */
int fv_json(struct fv_doc *d, const char *text, size_t len, char *err, size_t errn, size_t *off);

void fv_doc_release(struct fv_doc *d);

/* The value of key in dict d (the last item with that str key, as Python
 * keeps), NULL when absent or d is not a dict. */
const struct fv *fv_get(const struct fv *d, const char *key);

/* Items of a list or tuple (NULL otherwise). */
static inline size_t fv_len(const struct fv *v)
{
	return v && (v->t == FV_LIST || v->t == FV_TUPLE) ? v->u.a.n : 0;
}

/* A Python type name for messages ("dict", "NoneType", ...). */
const char *fv_type_name(const struct fv *v);

#endif
