/*
 * kineto_lex.h - the Kineto reader's JSON scanner (kineto.c, its only
 * includer; static inline, so the reader's hot loops stay one translation
 * unit): the window the file is read through (struct kscan), byte classes,
 * strings (16 bytes at a time with SSE2, escapes decoded on demand),
 * numbers (ts and dur to int64 ns from their digits), the validating skip
 * of values not extracted, and object keys.  Every function returns P_OK,
 * P_MORE (the unit ran into the end of the window: refill and retry) or
 * P_ERR (err_at, err_what say where and what).
 */
#ifndef AORTA_INGEST_KINETO_LEX_H
#define AORTA_INGEST_KINETO_LEX_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "base/error.h"
#include "ingest/kineto_waits.h"
#include "timeline/timeline.h"

#define WINDOW_BYTES (4u << 20) /* 4 MiB: as fast as 8 (bench/RESULTS.md), half the memory per reader thread */
#define WINDOW_MAX ((size_t)1 << 30)
#define PAD 64
#define MAX_DEPTH 512
#define MAX_DUR_NS INT64_C(1000000000000000) /* 1e6 s */
#define MAX_SPLIT 63            /* devices beyond the first that get a timeline of their own */

typedef unsigned char u8;

enum { P_OK = 0, P_MORE, P_ERR };

struct kscan {
	const char *path;
	struct zread *z;        /* file source, or NULL */
	const u8 *mem;          /* memory source */
	size_t mem_len, mem_pos;
	u8 *buf;                /* window: cap bytes + PAD */
	size_t cap;
	u8 *end;                /* end of valid data, *end == 0 */
	long long base;         /* stream offset of buf[0] */
	int eof;
	struct aorta_error *e;  /* set when a read fails */
	int read_failed;

	const u8 *err_at;       /* where the scanner stopped */
	const char *err_what;   /* what it expected there */

	struct trace *t;        /* the first device's timeline, and the host side */
	/* a one-process multi-GPU trace: one more timeline per other device
	 * (device_trace), MAX_SPLIT at most (beyond, counted on t) */
	struct trace *more[MAX_SPLIT];
	int nmore;
	char *scratch;          /* unescaped strings */
	size_t scap;
	int seen_events_key;
	uint64_t nelem;         /* elements of traceEvents */
	int rank, world_size;
	char host[128];         /* top-level "hostname" where the file has one, else "" */
	int nofast;             /* AORTA_KINETO_NOFAST set: full path only */
	/* stream waits the trace records (cuda_sync "Stream Wait Event" with
	 * wait_on_stream and wait_on_cuda_event_record_corr_id), resolved to
	 * the ops they link by trace_finish (kineto_waits.c) */
	struct kwait *waits;
	size_t nwait, wcap;
	/* the host's cudaEventRecord calls (what a wait the profiler left
	 * unresolved is paired with, by host order on its thread) */
	struct krec *recs;
	size_t nrec, rcap;
};


/* ------------------------------------------------------------------ */
/* Byte classes and small helpers                                      */
/* ------------------------------------------------------------------ */

static const u8 ws_tab[256] = { [' '] = 1, ['\t'] = 1, ['\n'] = 1, ['\r'] = 1 };

#define HOT static inline __attribute__((always_inline))

HOT const u8 *skip_ws(const u8 *p)
{
	if (*p > ' ')
		return p;
	/* a scalar loop: runs are short (1-6 bytes); a 16-byte SSE2 version
	 * measured 30% slower overall (bench/RESULTS.md) */
	while (ws_tab[*p])
		p++;
	return p;
}

static inline int is_digit(u8 c)
{
	return c >= '0' && c <= '9';
}

/* The scanner stopped at p expecting what: more data if p is at the end of
 * the window, else an error. */
static int bad(struct kscan *s, const u8 *p, const char *what)
{
	s->err_at = p;
	s->err_what = what;
	return p >= s->end ? P_MORE : P_ERR;
}

struct sref {
	const u8 *p;
	uint32_t len;
	uint8_t esc;  /* contains backslash escapes */
	uint8_t set;
};

/* ------------------------------------------------------------------ */
/* Strings                                                             */
/* ------------------------------------------------------------------ */

static inline int hexval(u8 c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* The first '"', '\\' or control character (the NUL sentinel included)
 * at or after p: the end of a string's plain run.  SSE2 tests 16 bytes at
 * a time (reading up to 15 bytes past the stop: the window's PAD). */
HOT const u8 *str_stop(const u8 *p)
{
#ifdef __SSE2__
	const __m128i q = _mm_set1_epi8('"'), b = _mm_set1_epi8('\\'), c1f = _mm_set1_epi8(0x1f);
	for (;;) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
		__m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, q), _mm_cmpeq_epi8(v, b)),
					 _mm_cmpeq_epi8(_mm_max_epu8(v, c1f), c1f));
		int mask = _mm_movemask_epi8(m);
		if (mask)
			return p + __builtin_ctz((unsigned)mask);
		p += 16;
	}
#else
	while (*p != '"' && *p != '\\' && *p >= 0x20)
		p++;
	return p;
#endif
}

/* *pp at the opening quote; on P_OK *pp is past the closing quote and r
 * (if not NULL) describes the raw contents. */
HOT int scan_string(struct kscan *s, const u8 **pp, struct sref *r)
{
	const u8 *p = *pp + 1, *start = p;
	int esc = 0;

	for (;;) {
		p = str_stop(p);
		if (*p == '"')
			break;
		if (*p == '\\') {
			esc = 1;
			p++;
			switch (*p) {
			case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
				p++;
				continue;
			case 'u':
				for (int i = 1; i <= 4; i++)
					if (hexval(p[i]) < 0)
						return bad(s, p + i, "expected 4 hex digits after '\\u'");
				p += 5;
				continue;
			default:
				return bad(s, p, "expected an escape character after '\\'");
			}
		}
		return bad(s, p, *p ? "control character in string" : "expected '\"' closing the string");
	}
	if (r) {
		r->p = start;
		r->len = (uint32_t)(p - start);
		r->esc = (uint8_t)esc;
		r->set = 1;
	}
	*pp = p + 1;
	return P_OK;
}

static void put_utf8(char **o, uint32_t cp)
{
	char *w = *o;

	if (cp < 0x80) {
		*w++ = (char)cp;
	} else if (cp < 0x800) {
		*w++ = (char)(0xc0 | (cp >> 6));
		*w++ = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*w++ = (char)(0xe0 | (cp >> 12));
		*w++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*w++ = (char)(0x80 | (cp & 0x3f));
	} else {
		*w++ = (char)(0xf0 | (cp >> 18));
		*w++ = (char)(0x80 | ((cp >> 12) & 0x3f));
		*w++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*w++ = (char)(0x80 | (cp & 0x3f));
	}
	*o = w;
}

static uint32_t hex4(const u8 *p)
{
	return (uint32_t)(hexval(p[0]) << 12 | hexval(p[1]) << 8 | hexval(p[2]) << 4 | hexval(p[3]));
}

/* Decodes a validated raw string into out (room for len bytes: the
 * decoded form is never longer).  Returns the decoded length. */
static size_t unescape(const u8 *p, size_t len, char *out)
{
	const u8 *e = p + len;
	char *w = out;

	while (p < e) {
		if (*p != '\\') {
			*w++ = (char)*p++;
			continue;
		}
		p++;
		switch (*p++) {
		case 'b': *w++ = '\b'; break;
		case 'f': *w++ = '\f'; break;
		case 'n': *w++ = '\n'; break;
		case 'r': *w++ = '\r'; break;
		case 't': *w++ = '\t'; break;
		case 'u': {
			uint32_t cp = hex4(p);
			p += 4;
			if (cp >= 0xd800 && cp < 0xdc00 && e - p >= 6 && p[0] == '\\' && p[1] == 'u') {
				uint32_t lo = hex4(p + 2);
				if (lo >= 0xdc00 && lo < 0xe000) {
					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
					p += 6;
				}
			}
			if (cp >= 0xd800 && cp < 0xe000)
				cp = 0xfffd; /* lone surrogate */
			put_utf8(&w, cp);
			break;
		}
		default: *w++ = (char)p[-1]; break; /* " \ / */
		}
	}
	return (size_t)(w - out);
}

/* The decoded bytes of r: the window itself when there is no escape, else
 * the scan's scratch buffer (valid until the next call). */
static const char *sref_text(struct kscan *s, const struct sref *r, size_t *len)
{
	if (!r->esc) {
		*len = r->len;
		return (const char *)r->p;
	}
	if (s->scap < (size_t)r->len + 1) {
		s->scap = (size_t)r->len + 1;
		s->scratch = xrealloc(s->scratch, s->scap);
	}
	*len = unescape(r->p, r->len, s->scratch);
	s->scratch[*len] = '\0';
	return s->scratch;
}

static int sref_eq(struct kscan *s, const struct sref *r, const char *lit, size_t n)
{
	size_t len;
	const char *t = sref_text(s, r, &len);

	return len == n && memcmp(t, lit, n) == 0;
}

/* ------------------------------------------------------------------ */
/* Numbers: digits to a decimal mantissa and exponent, never a double  */
/* ------------------------------------------------------------------ */

struct num {
	uint64_t mant; /* up to 19 significant digits (< 1e19 fits) */
	int dexp;      /* value ~ mant * 10^dexp */
	int neg;
	int rd;        /* first digit dropped after the 19th, 0 if none */
	int trunc;     /* some digit was dropped */
};

static const uint64_t pow10_tab[20] = {
	1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
	100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
	10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
	100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull,
};

static int scan_number(struct kscan *s, const u8 **pp, struct num *n)
{
	const u8 *p = *pp;
	uint64_t m = 0;
	int dexp = 0, nd = 0;

	n->neg = 0;
	n->rd = 0;
	n->trunc = 0;
	if (*p == '-') {
		n->neg = 1;
		p++;
	}
	if (*p == '0') {
		p++;
	} else if (*p >= '1' && *p <= '9') {
		do {
			if (nd < 19) {
				m = m * 10 + (uint64_t)(*p - '0');
				nd++;
			} else {
				if (!n->trunc)
					n->rd = *p - '0';
				n->trunc = 1;
				dexp++;
			}
			p++;
		} while (is_digit(*p));
	} else {
		return bad(s, p, "expected a digit");
	}
	if (*p == '.') {
		p++;
		if (!is_digit(*p))
			return bad(s, p, "expected a digit after '.'");
		do {
			if (nd < 19) {
				m = m * 10 + (uint64_t)(*p - '0');
				dexp--;
				if (m)
					nd++;
			} else {
				if (!n->trunc)
					n->rd = *p - '0';
				n->trunc = 1;
			}
			p++;
		} while (is_digit(*p));
	}
	if (*p == 'e' || *p == 'E') {
		int eneg = 0, ev = 0;
		p++;
		if (*p == '+' || *p == '-')
			eneg = *p++ == '-';
		if (!is_digit(*p))
			return bad(s, p, "expected a digit in the exponent");
		do {
			if (ev < 100000)
				ev = ev * 10 + (*p - '0');
			p++;
		} while (is_digit(*p));
		dexp += eneg ? -ev : ev;
	}
	n->mant = m;
	n->dexp = dexp;
	*pp = p;
	return P_OK;
}

/* Microseconds to integer ns, rounding half away from zero.  Returns 0 if
 * out of the int64 range. */
static int num_to_ns(const struct num *n, int64_t *out)
{
	int k = n->dexp + 3;
	uint64_t v;

	if (n->mant == 0) {
		*out = 0;
		return 1;
	}
	if (k >= 0) {
		if (k > 18 || n->mant > (uint64_t)INT64_MAX / pow10_tab[k])
			return 0;
		v = n->mant * pow10_tab[k];
		/* the first dropped digit is tenths of a ns only when k == 0;
		 * for k > 0 the product above already overflows */
		if (k == 0 && n->rd >= 5)
			v++;
	} else if (-k > 19) {
		v = 0; /* below half a nanosecond: mant < 1e19 < 0.5e20 */
	} else {
		uint64_t d = pow10_tab[-k];
		uint64_t r = n->mant % d;
		v = n->mant / d;
		if (r >= d - r)
			v++;
	}
	if (v > (uint64_t)INT64_MAX)
		return 0;
	*out = n->neg ? -(int64_t)v : (int64_t)v;
	return 1;
}

/* An exact integer value (7, 7.0, 7e0).  Returns 0 otherwise. */
static int num_to_int(const struct num *n, int64_t *out)
{
	uint64_t v;

	if (n->trunc)
		return 0;
	if (n->mant == 0) {
		*out = 0;
		return 1;
	}
	if (n->dexp >= 0) {
		if (n->dexp > 18 || n->mant > (uint64_t)INT64_MAX / pow10_tab[n->dexp])
			return 0;
		v = n->mant * pow10_tab[n->dexp];
	} else {
		if (-n->dexp > 18 || n->mant % pow10_tab[-n->dexp])
			return 0;
		v = n->mant / pow10_tab[-n->dexp];
	}
	*out = n->neg ? -(int64_t)v : (int64_t)v;
	return 1;
}

/* An integer written as a string: "0x1f" (hex) or "-12" (decimal). */
static int str_to_int(const struct sref *r, int64_t *out)
{
	const u8 *p = r->p, *e = r->p + r->len;
	int neg = 0;
	uint64_t v = 0;

	if (r->esc || p == e)
		return 0;
	if (*p == '-') {
		neg = 1;
		p++;
	}
	if (e - p > 2 && p[0] == '0' && (p[1] | 0x20) == 'x') {
		p += 2;
		if (e - p > 15)
			return 0;
		for (; p < e; p++) {
			int h = hexval(*p);
			if (h < 0)
				return 0;
			v = v << 4 | (uint64_t)h;
		}
	} else {
		if (p == e || e - p > 18)
			return 0;
		for (; p < e; p++) {
			if (!is_digit(*p))
				return 0;
			v = v * 10 + (uint64_t)(*p - '0');
		}
	}
	*out = neg ? -(int64_t)v : (int64_t)v;
	return 1;
}

/* ------------------------------------------------------------------ */
/* Generic validation of a value that is not extracted                  */
/* ------------------------------------------------------------------ */

/* Validates a number without computing it. */
static int skip_number(struct kscan *s, const u8 **pp)
{
	const u8 *p = *pp;

	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (*p >= '1' && *p <= '9')
		while (is_digit(*++p))
			;
	else
		return bad(s, p, "expected a digit");
	if (*p == '.') {
		if (!is_digit(*++p))
			return bad(s, p, "expected a digit after '.'");
		while (is_digit(*++p))
			;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!is_digit(*p))
			return bad(s, p, "expected a digit in the exponent");
		while (is_digit(*++p))
			;
	}
	*pp = p;
	return P_OK;
}

static int scan_literal(struct kscan *s, const u8 **pp)
{
	const u8 *p = *pp;
	const char *lit = *p == 't' ? "true" : *p == 'f' ? "false" : "null";
	size_t n = strlen(lit);

	for (size_t i = 0; i < n; i++)
		if (p[i] != (u8)lit[i])
			return bad(s, p + i, "expected a value");
	*pp = p + n;
	return P_OK;
}

static int skip_value(struct kscan *s, const u8 **pp, int depth);

static int skip_container(struct kscan *s, const u8 **pp, int depth)
{
	const u8 *p = *pp;
	int obj = *p == '{', r;
	u8 close = obj ? '}' : ']';

	if (depth >= MAX_DEPTH)
		return bad(s, p, "nesting deeper than 512 levels");
	p = skip_ws(p + 1);
	if (*p == close) {
		*pp = p + 1;
		return P_OK;
	}
	for (;;) {
		if (obj) {
			if (*p != '"')
				return bad(s, p, "expected '\"' starting a key");
			if ((r = scan_string(s, &p, NULL)) != P_OK)
				return r;
			p = skip_ws(p);
			if (*p != ':')
				return bad(s, p, "expected ':'");
			p = skip_ws(p + 1);
		}
		if ((r = skip_value(s, &p, depth + 1)) != P_OK)
			return r;
		p = skip_ws(p);
		if (*p == ',') {
			p = skip_ws(p + 1);
			continue;
		}
		if (*p == close) {
			*pp = p + 1;
			return P_OK;
		}
		return bad(s, p, obj ? "expected ',' or '}'" : "expected ',' or ']'");
	}
}

static int skip_value(struct kscan *s, const u8 **pp, int depth)
{
	switch (**pp) {
	case '"':
		return scan_string(s, pp, NULL);
	case '{': case '[':
		return skip_container(s, pp, depth);
	case '-': case '0': case '1': case '2': case '3': case '4':
	case '5': case '6': case '7': case '8': case '9':
		return skip_number(s, pp);
	case 't': case 'f': case 'n':
		return scan_literal(s, pp);
	default:
		return bad(s, *pp, "expected a value");
	}
}

/* ------------------------------------------------------------------ */
/* Objects with extracted keys                                          */
/* ------------------------------------------------------------------ */

/* A key: *pp at the opening quote; on return *pp is after the ':' and the
 * whitespace that follows; k holds the decoded key (escapes decoded into
 * kbuf when present, keys longer than kbuf never match). */
HOT int scan_key(struct kscan *s, const u8 **pp, const char **k, size_t *klen, char *kbuf,
		    size_t kbuf_len)
{
	struct sref r;
	const u8 *p = *pp;
	int st;

	if (*p != '"')
		return bad(s, p, "expected '\"' starting a key");
	if ((st = scan_string(s, &p, &r)) != P_OK)
		return st;
	if (!r.esc) {
		*k = (const char *)r.p;
		*klen = r.len;
	} else if (r.len < kbuf_len) {
		*klen = unescape(r.p, r.len, kbuf);
		*k = kbuf;
	} else {
		*k = "";
		*klen = 0;
	}
	p = skip_ws(p);
	if (*p != ':')
		return bad(s, p, "expected ':'");
	*pp = skip_ws(p + 1);
	return P_OK;
}

/* After a member value: ',' (returns 1, *pp at the next key) or the
 * closing '}' (returns 0, *pp past it), or P_MORE/P_ERR negated. */
HOT int next_member(struct kscan *s, const u8 **pp, int *more)
{
	const u8 *p = skip_ws(*pp);

	if (*p == ',') {
		*pp = skip_ws(p + 1);
		*more = 1;
		return P_OK;
	}
	if (*p == '}') {
		*pp = p + 1;
		*more = 0;
		return P_OK;
	}
	return bad(s, p, "expected ',' or '}'");
}

#define KEY_IS(k, n, lit) ((n) == sizeof(lit) - 1 && memcmp((k), lit, sizeof(lit) - 1) == 0)

#endif
