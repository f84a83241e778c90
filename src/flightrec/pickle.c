/*
 * pickle.c - a restricted pickle reader: the subset c10d's Flight Recorder
 * writes (torch/csrc/distributed/c10d/FlightRecorderDetail.hpp: dump()
 * pickles a dict of str, int, float, bool, None, lists, tuples and dicts
 * through torch::jit::Pickler, protocol 2), read into fv values (fv.h).
 *
 * The machine is the one the pickle format defines (Python's
 * Lib/pickletools.py documents each opcode): a value stack, a stack of
 * marks and a memo.  Only data opcodes are implemented; every opcode that
 * would name, import, call or build a Python object is refused with its
 * byte offset, so reading a dump never runs anything.  Every read is
 * bounds-checked against the bytes left; lengths, memo indices, mark and
 * container nesting are bounded (fv.h), so no input can crash, hang or
 * make it allocate more than a small multiple of its own size.
 */
#include "flightrec/fv.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

struct pk {
	const unsigned char *b;
	size_t len, pos;
	size_t op_off;            /* offset of the opcode being run */
	struct arena *ar;
	struct fv **stack;
	size_t n, cap;
	size_t *marks;
	size_t nmarks, capmarks;
	struct fv **memo;
	size_t nmemo, capmemo;
	char *err;
	size_t errn;
	size_t *err_off;
};

static int fail(struct pk *p, size_t off, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct pk *p, size_t off, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->err, p->errn, fmt, ap);
	va_end(ap);
	*p->err_off = off;
	return -1;
}

/* Names of the opcodes a pickle may hold (pickletools' names), for
 * messages; NULL: not an opcode at all. */
static const char *op_name(unsigned char c)
{
	switch (c) {
	case '(': return "MARK";
	case '.': return "STOP";
	case '0': return "POP";
	case '1': return "POP_MARK";
	case '2': return "DUP";
	case 'F': return "FLOAT";
	case 'I': return "INT";
	case 'J': return "BININT";
	case 'K': return "BININT1";
	case 'L': return "LONG";
	case 'M': return "BININT2";
	case 'N': return "NONE";
	case 'P': return "PERSID";
	case 'Q': return "BINPERSID";
	case 'R': return "REDUCE";
	case 'S': return "STRING";
	case 'T': return "BINSTRING";
	case 'U': return "SHORT_BINSTRING";
	case 'V': return "UNICODE";
	case 'X': return "BINUNICODE";
	case 'a': return "APPEND";
	case 'b': return "BUILD";
	case 'c': return "GLOBAL";
	case 'd': return "DICT";
	case '}': return "EMPTY_DICT";
	case 'e': return "APPENDS";
	case 'g': return "GET";
	case 'h': return "BINGET";
	case 'i': return "INST";
	case 'j': return "LONG_BINGET";
	case 'l': return "LIST";
	case ']': return "EMPTY_LIST";
	case 'o': return "OBJ";
	case 'p': return "PUT";
	case 'q': return "BINPUT";
	case 'r': return "LONG_BINPUT";
	case 's': return "SETITEM";
	case 't': return "TUPLE";
	case ')': return "EMPTY_TUPLE";
	case 'u': return "SETITEMS";
	case 'G': return "BINFLOAT";
	case 'B': return "BINBYTES";
	case 'C': return "SHORT_BINBYTES";
	case 0x80: return "PROTO";
	case 0x81: return "NEWOBJ";
	case 0x82: return "EXT1";
	case 0x83: return "EXT2";
	case 0x84: return "EXT4";
	case 0x85: return "TUPLE1";
	case 0x86: return "TUPLE2";
	case 0x87: return "TUPLE3";
	case 0x88: return "NEWTRUE";
	case 0x89: return "NEWFALSE";
	case 0x8a: return "LONG1";
	case 0x8b: return "LONG4";
	case 0x8c: return "SHORT_BINUNICODE";
	case 0x8d: return "BINUNICODE8";
	case 0x8e: return "BINBYTES8";
	case 0x8f: return "EMPTY_SET";
	case 0x90: return "ADDITEMS";
	case 0x91: return "FROZENSET";
	case 0x92: return "NEWOBJ_EX";
	case 0x93: return "STACK_GLOBAL";
	case 0x94: return "MEMOIZE";
	case 0x95: return "FRAME";
	case 0x96: return "BYTEARRAY8";
	case 0x97: return "NEXT_BUFFER";
	case 0x98: return "READONLY_BUFFER";
	default: return NULL;
	}
}

/* Why an opcode outside the subset is refused. */
static const char *op_why(unsigned char c)
{
	switch (c) {
	case 'c': case 0x93: case 'i':
		return "it imports a Python object by name";
	case 'R': case 'b': case 'o': case 0x81: case 0x92:
		return "it calls or builds a Python object";
	case 'P': case 'Q': case 0x82: case 0x83: case 0x84:
		return "it resolves an object outside the pickle";
	case 0x8f: case 0x90: case 0x91:
		return "a set, which a Flight Recorder dump never holds";
	case 0x97: case 0x98:
		return "an out-of-band buffer";
	default:
		return "a protocol 0/1 text opcode, which protocols 2 to 5 do not write";
	}
}

static int need(struct pk *p, size_t n)
{
	if (p->len - p->pos < n)
		return fail(p, p->op_off, "truncated: %s needs %zu more byte%s, %zu left", op_name(p->b[p->op_off]), n,
			    n == 1 ? "" : "s", p->len - p->pos);
	return 0;
}

static uint64_t le(const unsigned char *b, size_t n)
{
	uint64_t v = 0;
	for (size_t i = n; i-- > 0;)
		v = v << 8 | b[i];
	return v;
}

/* The n-byte little-endian operand of the opcode being run. */
static int operand(struct pk *p, size_t n, uint64_t *v)
{
	if (need(p, n))
		return -1;
	*v = le(p->b + p->pos, n);
	p->pos += n;
	return 0;
}

static struct fv *new_val(struct pk *p, uint8_t t)
{
	struct fv *v = arena_alloc(p->ar, sizeof(*v));
	memset(v, 0, sizeof(*v));
	v->t = t;
	v->off = p->op_off;
	return v;
}

static int push(struct pk *p, struct fv *v)
{
	GROW(p->stack, p->cap, p->n + 1);
	p->stack[p->n++] = v;
	return 0;
}

/* The bottom of the values above the innermost mark (p->n when none). */
static size_t top_base(const struct pk *p)
{
	return p->nmarks ? p->marks[p->nmarks - 1] : 0;
}

static int pop(struct pk *p, struct fv **v)
{
	if (p->n <= top_base(p))
		return fail(p, p->op_off, "%s on an empty stack%s", op_name(p->b[p->op_off]),
			    p->nmarks ? " (above the last MARK)" : "");
	*v = p->stack[--p->n];
	return 0;
}

static int top(struct pk *p, struct fv **v)
{
	if (p->n <= top_base(p))
		return fail(p, p->op_off, "%s on an empty stack", op_name(p->b[p->op_off]));
	*v = p->stack[p->n - 1];
	return 0;
}

/* Appends child to container c (arena-grown; the old array is left in the
 * arena), keeping the nesting bound. */
static int add_child(struct pk *p, struct fv *c, struct fv *child)
{
	if (child->t == FV_LIST || child->t == FV_TUPLE || child->t == FV_DICT) {
		if (child->depth + 1 > c->depth)
			c->depth = child->depth + 1;
		if (c->depth > FV_MAX_DEPTH)
			return fail(p, p->op_off, "containers nested deeper than %d levels", FV_MAX_DEPTH);
	}
	if (c->u.a.n == c->u.a.cap) {
		size_t nc = c->u.a.cap ? 2 * c->u.a.cap : 8;
		struct fv **nv = arena_alloc(p->ar, nc * sizeof(*nv));
		if (c->u.a.n)
			memcpy(nv, c->u.a.v, c->u.a.n * sizeof(*nv));
		c->u.a.v = nv;
		c->u.a.cap = nc;
	}
	c->u.a.v[c->u.a.n++] = child;
	return 0;
}

static int mark_pop(struct pk *p, size_t *base)
{
	if (!p->nmarks)
		return fail(p, p->op_off, "%s without a MARK before it", op_name(p->b[p->op_off]));
	*base = p->marks[--p->nmarks];
	return 0;
}

/* n items starting at stack[base] into container c, then drop them. */
static int fill(struct pk *p, struct fv *c, size_t base)
{
	for (size_t i = base; i < p->n; i++)
		if (add_child(p, c, p->stack[i]))
			return -1;
	p->n = base;
	return 0;
}

static int str_val(struct pk *p, uint8_t t, size_t n)
{
	if (need(p, n))
		return -1;
	struct fv *v = new_val(p, t);
	v->u.s.p = arena_strndup(p->ar, (const char *)p->b + p->pos, n);
	v->u.s.n = n;
	p->pos += n;
	return push(p, v);
}

/* A length prefix of w bytes, then that many bytes. */
static int sized(struct pk *p, uint8_t t, size_t w)
{
	if (need(p, w))
		return -1;
	uint64_t n = le(p->b + p->pos, w);
	p->pos += w;
	if (n > p->len - p->pos)
		return fail(p, p->op_off, "truncated: %s of %llu bytes, %zu left", op_name(p->b[p->op_off]),
			    (unsigned long long)n, p->len - p->pos);
	return str_val(p, t, (size_t)n);
}

static int int_val(struct pk *p, int64_t i)
{
	struct fv *v = new_val(p, FV_INT);
	v->u.i = i;
	return push(p, v);
}

/* LONG1/LONG4: little-endian two's complement of n bytes, at most 64 bits. */
static int long_val(struct pk *p, size_t w)
{
	if (need(p, w))
		return -1;
	uint64_t n = le(p->b + p->pos, w);
	p->pos += w;
	if (n > p->len - p->pos)
		return fail(p, p->op_off, "truncated: %s of %llu bytes, %zu left", op_name(p->b[p->op_off]),
			    (unsigned long long)n, p->len - p->pos);
	if (n > 8)
		return fail(p, p->op_off, "%s: an integer of %llu bytes, wider than 64 bits", op_name(p->b[p->op_off]),
			    (unsigned long long)n);
	uint64_t u = n ? le(p->b + p->pos, (size_t)n) : 0;
	if (n && n < 8 && (p->b[p->pos + n - 1] & 0x80))
		u |= ~0ull << (8 * n); /* sign-extend */
	p->pos += (size_t)n;
	return int_val(p, (int64_t)u);
}

/* A decimal line (text PUT / GET). */
static int line_index(struct pk *p, uint64_t *idx)
{
	size_t i = p->pos, dig = 0;
	uint64_t v = 0;
	while (i < p->len && p->b[i] >= '0' && p->b[i] <= '9' && dig < 12)
		v = v * 10 + (uint64_t)(p->b[i++] - '0'), dig++;
	if (i >= p->len)
		return fail(p, p->op_off, "truncated: %s needs a decimal index and a newline", op_name(p->b[p->op_off]));
	if (!dig || p->b[i] != '\n')
		return fail(p, p->op_off, "%s: expected a decimal memo index and a newline", op_name(p->b[p->op_off]));
	p->pos = i + 1;
	*idx = v;
	return 0;
}

static int memo_put(struct pk *p, uint64_t idx)
{
	struct fv *v;
	if (top(p, &v))
		return -1;
	/* picklers number memo entries 0, 1, 2, ...: an index may replace an
	 * earlier one or take the next, never leave a gap */
	if (idx > p->nmemo)
		return fail(p, p->op_off, "%s: memo index %llu out of range (the memo holds %zu value%s; "
			    "indices are assigned in order)", op_name(p->b[p->op_off]), (unsigned long long)idx,
			    p->nmemo, p->nmemo == 1 ? "" : "s");
	if (idx == p->nmemo) {
		GROW(p->memo, p->capmemo, p->nmemo + 1);
		p->nmemo++;
	}
	p->memo[idx] = v;
	return 0;
}

static int memo_get(struct pk *p, uint64_t idx)
{
	if (idx >= p->nmemo)
		return fail(p, p->op_off, "%s: memo index %llu was never stored (the memo holds %zu value%s)",
			    op_name(p->b[p->op_off]), (unsigned long long)idx, p->nmemo, p->nmemo == 1 ? "" : "s");
	return push(p, p->memo[idx]);
}

static int tuple_of(struct pk *p, size_t k)
{
	if (p->n < top_base(p) + k)
		return fail(p, p->op_off, "%s needs %zu values on the stack", op_name(p->b[p->op_off]), k);
	struct fv *t = new_val(p, FV_TUPLE);
	if (fill(p, t, p->n - k))
		return -1;
	return push(p, t);
}

/* The items above stack[base] into the container just below them: a dict
 * (SETITEM, SETITEMS: keys and values) or a list (APPEND, APPENDS). */
static int into(struct pk *p, size_t base, uint8_t t)
{
	const char *what = t == FV_DICT ? "dict" : "list";
	if (base == 0 || base > p->n)
		return fail(p, p->op_off, "%s without a %s below its items", op_name(p->b[p->op_off]), what);
	struct fv *c = p->stack[base - 1];
	if (c->t != t)
		return fail(p, p->op_off, "%s into a %s (expected a %s)", op_name(p->b[p->op_off]), fv_type_name(c), what);
	if (t == FV_DICT && (p->n - base) % 2)
		return fail(p, p->op_off, "%s with an odd number of keys and values (%zu)", op_name(p->b[p->op_off]),
			    p->n - base);
	return fill(p, c, base);
}

static int step(struct pk *p, int *stop)
{
	unsigned char c = p->b[p->pos];
	size_t base;
	struct fv *v;
	uint64_t u;

	p->op_off = p->pos++;
	switch (c) {
	case 0x80: { /* PROTO */
		if (need(p, 1))
			return -1;
		unsigned pr = p->b[p->pos++];
		if (pr < 2 || pr > 5)
			return fail(p, p->op_off, "pickle protocol %u; expected 2 to 5", pr);
		return 0;
	}
	case 0x95: { /* FRAME: a length the reader does not need; checked */
		if (need(p, 8))
			return -1;
		uint64_t n = le(p->b + p->pos, 8);
		p->pos += 8;
		if (n > p->len - p->pos)
			return fail(p, p->op_off, "truncated: a FRAME of %llu bytes, %zu left", (unsigned long long)n,
				    p->len - p->pos);
		return 0;
	}
	case '.':
		if (p->n < 1)
			return fail(p, p->op_off, "STOP on an empty stack");
		*stop = 1;
		return 0;
	case '(':
		if (p->nmarks >= FV_MAX_MARKS)
			return fail(p, p->op_off, "MARKs nested deeper than %d", FV_MAX_MARKS);
		GROW(p->marks, p->capmarks, p->nmarks + 1);
		p->marks[p->nmarks++] = p->n;
		return 0;
	case '0':
		return pop(p, &v);
	case '1':
		if (mark_pop(p, &base))
			return -1;
		p->n = base;
		return 0;
	case '2':
		if (top(p, &v))
			return -1;
		return push(p, v);
	case 'N':
		return push(p, new_val(p, FV_NONE));
	case 0x88: case 0x89:
		v = new_val(p, FV_BOOL);
		v->u.i = c == 0x88;
		return push(p, v);
	case 'J':
		if (operand(p, 4, &u))
			return -1;
		return int_val(p, (int32_t)(uint32_t)u);
	case 'K':
		if (operand(p, 1, &u))
			return -1;
		return int_val(p, (int64_t)u);
	case 'M':
		if (operand(p, 2, &u))
			return -1;
		return int_val(p, (int64_t)u);
	case 0x8a:
		return long_val(p, 1);
	case 0x8b:
		return long_val(p, 4);
	case 'G': { /* BINFLOAT: big-endian IEEE 754 double */
		if (need(p, 8))
			return -1;
		u = 0;
		for (int i = 0; i < 8; i++)
			u = u << 8 | p->b[p->pos + (size_t)i];
		p->pos += 8;
		v = new_val(p, FV_FLOAT);
		memcpy(&v->u.d, &u, sizeof(v->u.d));
		return push(p, v);
	}
	case 0x8c: return sized(p, FV_STR, 1);
	case 'X': return sized(p, FV_STR, 4);
	case 0x8d: return sized(p, FV_STR, 8);
	case 'U': return sized(p, FV_STR, 1);
	case 'T': return sized(p, FV_STR, 4);
	case 'C': return sized(p, FV_BYTES, 1);
	case 'B': return sized(p, FV_BYTES, 4);
	case 0x8e: return sized(p, FV_BYTES, 8);
	case 0x96: return sized(p, FV_BYTES, 8);
	case ']': return push(p, new_val(p, FV_LIST));
	case ')': return push(p, new_val(p, FV_TUPLE));
	case '}': return push(p, new_val(p, FV_DICT));
	case 'l': case 't': case 'd':
		if (mark_pop(p, &base))
			return -1;
		v = new_val(p, c == 'l' ? FV_LIST : c == 't' ? FV_TUPLE : FV_DICT);
		if (c == 'd' && (p->n - base) % 2)
			return fail(p, p->op_off, "DICT with an odd number of keys and values (%zu)", p->n - base);
		if (fill(p, v, base))
			return -1;
		return push(p, v);
	case 0x85: return tuple_of(p, 1);
	case 0x86: return tuple_of(p, 2);
	case 0x87: return tuple_of(p, 3);
	case 'a':
		if (p->n < top_base(p) + 2)
			return fail(p, p->op_off, "APPEND needs a list and a value on the stack");
		return into(p, p->n - 1, FV_LIST);
	case 'e':
		if (mark_pop(p, &base))
			return -1;
		return into(p, base, FV_LIST);
	case 's':
		if (p->n < top_base(p) + 3)
			return fail(p, p->op_off, "SETITEM needs a dict, a key and a value on the stack");
		return into(p, p->n - 2, FV_DICT);
	case 'u':
		if (mark_pop(p, &base))
			return -1;
		return into(p, base, FV_DICT);
	case 'q': case 'r': case 'h': case 'j': /* BINPUT, LONG_BINPUT, BINGET, LONG_BINGET */
		if (operand(p, c == 'q' || c == 'h' ? 1 : 4, &u))
			return -1;
		return c == 'q' || c == 'r' ? memo_put(p, u) : memo_get(p, u);
	case 0x94:
		return memo_put(p, p->nmemo);
	case 'p': case 'g': {
		uint64_t idx = 0;
		if (line_index(p, &idx))
			return -1;
		return c == 'p' ? memo_put(p, idx) : memo_get(p, idx);
	}
	default: {
		const char *nm = op_name(c);
		if (!nm)
			return fail(p, p->op_off, "byte 0x%02x is not a pickle opcode", c);
		return fail(p, p->op_off, "opcode %s (0x%02x) refused: %s; a Flight Recorder dump holds only "
			    "dicts, lists, tuples, strings, bytes, numbers, booleans and None", nm, c, op_why(c));
	}
	}
}

int fv_pickle(struct fv_doc *d, const void *buf, size_t len, char *err, size_t errn, size_t *off)
{
	struct pk p = { 0 };
	int stop = 0, rc = 0;

	memset(d, 0, sizeof(*d));
	arena_init(&d->ar);
	p.b = buf;
	p.len = len;
	p.ar = &d->ar;
	p.err = err;
	p.errn = errn;
	p.err_off = off;
	*off = 0;
	if (!len || p.b[0] != 0x80) {
		rc = fail(&p, 0, "not a pickle of protocol 2 to 5 (it does not start with PROTO, byte 0x80)");
		goto out;
	}
	while (!stop) {
		if (p.pos >= p.len) {
			rc = fail(&p, p.len, "truncated: the pickle ends without STOP after %zu bytes", p.len);
			goto out;
		}
		if ((rc = step(&p, &stop)))
			goto out;
	}
	if (p.pos != p.len) {
		rc = fail(&p, p.pos, "%zu bytes after the pickle's STOP", p.len - p.pos);
		goto out;
	}
	d->root = p.stack[p.n - 1];
out:
	free(p.stack);
	free(p.marks);
	free(p.memo);
	return rc;
}

void fv_doc_release(struct fv_doc *d)
{
	arena_release(&d->ar);
	d->root = NULL;
}

const struct fv *fv_get(const struct fv *d, const char *key)
{
	if (!d || d->t != FV_DICT)
		return NULL;
	size_t kl = strlen(key);
	for (size_t i = d->u.a.n; i >= 2; i -= 2) {
		const struct fv *k = d->u.a.v[i - 2];
		if (k->t == FV_STR && k->u.s.n == kl && !memcmp(k->u.s.p, key, kl))
			return d->u.a.v[i - 1];
	}
	return NULL;
}

const char *fv_type_name(const struct fv *v)
{
	if (!v)
		return "nothing";
	switch (v->t) {
	case FV_NONE: return "None";
	case FV_BOOL: return "bool";
	case FV_INT: return "int";
	case FV_FLOAT: return "float";
	case FV_STR: return "str";
	case FV_BYTES: return "bytes";
	case FV_LIST: return "list";
	case FV_TUPLE: return "tuple";
	default: return "dict";
	}
}
