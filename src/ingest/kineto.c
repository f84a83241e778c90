/*
 * kineto.c - PyTorch profiler / Kineto Chrome-trace JSON reader.
 *
 * Design.  Not a DOM parser: a validating streaming scanner specialised for
 * the few fields aorta needs.  The file comes through zread (gzip inflated
 * on the fly) into one window buffer (WINDOW_BYTES, 4 MiB), terminated by a
 * NUL sentinel and PAD bytes.  The scanner works in units: one top-level
 * key with its value, or one element of traceEvents.  A unit is parsed from
 * a mark; if it runs into the sentinel at the end of the window, the unit
 * returns P_MORE, the bytes from the mark are moved to the front, the window
 * is refilled and the unit is parsed again from its start.  A unit larger
 * than half the window doubles the window (the only growth), so peak memory
 * is the window plus the trace's own arrays, independent of the file size.
 * No side effect happens before a unit is complete, so a retry is harmless.
 *
 * Hot loops test one byte class at a time and never check bounds: the NUL
 * sentinel stops every loop (NUL is never valid where a loop runs), and a
 * stop at NUL is "need more data" when it is at the window end, an error
 * otherwise.  Strings are scanned 16 bytes at a time with SSE2.  Values that
 * are not extracted are still validated (strings, escapes, numbers,
 * literals, nesting up to MAX_DEPTH), so malformed JSON anywhere is an error
 * with the byte offset of the decompressed stream.
 *
 * Times: ts/dur are microseconds written as decimal numbers; they are
 * converted to int64 ns from their digits (up to 19 significant digits and
 * a decimal exponent, rounded half away from zero at the nanosecond), never
 * through double.
 *
 * What is extracted (docs/formats.md):
 *  - distributedInfo.rank / world_size; a top-level "hostname" string where a tool
 *    wrote one (PyTorch does not): ranks of one host share a clock (overlap/join.c);
 *  - ph "X" events: kernel/Kernel, gpu_memcpy/Memcpy, gpu_memset/Memset as
 *    device spans; cuda_sync on a stream >= 0 as R_SYNC spans (device-wide
 *    syncs with stream -1 are ignored); cuda_runtime/cuda_driver/Runtime/
 *    Driver with args.correlation as launches; ProfilerStep#N annotations
 *    (user_annotation / cpu_op) as host steps, gpu_user_annotation ones as
 *    GPU steps; every other X event counts in host_events (runtime calls
 *    included); NCCL "Collective name" etc. on kernels as coll_meta.
 *  - other phases (M, s, f, i, ...) are validated and ignored.
 * A malformed event (ts/dur missing or of the wrong type, negative or absurd
 * duration, element not an object) is counted with trace_skip.
 *
 * Layout fast path: events written in the profiler's own layout are read
 * by fast_event() (literal separators compared 16 bytes at a time), with
 * the full path as the fallback from the event's '{' (see there).  The
 * environment variable AORTA_KINETO_NOFAST turns it off (tests compare the
 * two); kineto_fast_events() counts the events it took.
 *
 * The scanner's primitives (the window, strings, numbers, skipping) are
 * kineto_lex.h; this file reads the events with them.
 *
 * Cost: one pass, no allocation per event (names are interned once by the
 * string table); about 1 GB/s per core on plain JSON (bench/RESULTS.md).
 */
#include "ingest/ingest.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/zread.h"
#include "ingest/kineto_fast.h"
#include "ingest/kineto_lex.h"

/* Events taken by the layout fast path on this thread (kineto_fast.h). */
static _Thread_local uint64_t fast_events;

uint64_t kineto_fast_events(void)
{
	return fast_events;
}

enum {
	A_STREAM = 1 << 0, A_DEVICE = 1 << 1, A_CORR = 1 << 2, A_BYTES = 1 << 3,
	A_IN = 1 << 4, A_OUT = 1 << 5, A_GSIZE = 1 << 6, A_SEQ = 1 << 7,
	A_SRC = 1 << 8, A_DST = 1 << 9, A_WSTREAM = 1 << 10, A_WCORR = 1 << 11,
};
enum { A_I_STREAM, A_I_DEVICE, A_I_CORR, A_I_BYTES, A_I_IN, A_I_OUT, A_I_GSIZE, A_I_SEQ,
       A_I_SRC, A_I_DST, A_I_WSTREAM, A_I_WCORR, A_I__N };
enum { T_MISSING = 0, T_OK, T_TYPE, T_RANGE };

struct kev {
	struct sref ph, cat, name;
	int64_t pid, tid;
	uint8_t has_pid, has_tid;
	struct sref tid_s;
	uint8_t ts_st, dur_st;
	int64_t ts, dur;
	unsigned aflags;
	int64_t a[A_I__N];
	struct sref coll, dtype, pg_name, pg_desc, pg_ranks;
	struct sref in_type;    /* the first of "Input type" (host ops) */
	int64_t in_dims_nelems; /* elements of the first of "Input Dims" (host ops), <= 0 if none */
};

/* A number or numeric string as an integer argument. */
static int scan_int_arg(struct kscan *s, const u8 **pp, int64_t *v, int *ok)
{
	int st;

	*ok = 0;
	if (**pp == '"') {
		struct sref r;
		if ((st = scan_string(s, pp, &r)) != P_OK)
			return st;
		*ok = str_to_int(&r, v);
		return P_OK;
	}
	if (**pp == '-' || is_digit(**pp)) {
		struct num n;
		if ((st = scan_number(s, pp, &n)) != P_OK)
			return st;
		*ok = num_to_int(&n, v);
		return P_OK;
	}
	return skip_value(s, pp, 2);
}

static int scan_str_arg(struct kscan *s, const u8 **pp, struct sref *r)
{
	if (**pp == '"')
		return scan_string(s, pp, r);
	r->set = 0;
	return skip_value(s, pp, 2);
}

/* "Input Dims" of a host op, [[d0, d1, ...], [...], ...]: the element
 * count of the first tensor into *ne (-1 when it has no dims or they
 * overflow), the rest validated and skipped. */
static int scan_dims(struct kscan *s, const u8 **pp, int64_t *ne)
{
	const u8 *p = *pp;
	int st;
	*ne = -1;
	if (*p != '[')
		return skip_value(s, pp, 2);
	p = skip_ws(p + 1);
	if (*p == '[') {
		const u8 *q = skip_ws(p + 1);
		int64_t prod = 1;
		int n = 0, ok = 1;
		while (*q != ']') {
			struct num v;
			int64_t d;
			if (*q != '-' && !is_digit(*q))
				break; /* not a list of numbers: validated below */
			if ((st = scan_number(s, &q, &v)) != P_OK)
				return st;
			if (!num_to_int(&v, &d) || d < 0 || __builtin_mul_overflow(prod, d, &prod))
				ok = 0;
			n++;
			q = skip_ws(q);
			if (*q == ',')
				q = skip_ws(q + 1);
			else if (*q != ']')
				break;
		}
		if (ok && n > 0)
			*ne = prod;
	}
	return skip_value(s, pp, 2); /* the whole value, validated */
}

/* The first string of "Input type", ["float", "Scalar", ...], into r. */
static int scan_first_str(struct kscan *s, const u8 **pp, struct sref *r)
{
	const u8 *p = *pp;
	int st;
	r->set = 0;
	if (*p == '[') {
		p = skip_ws(p + 1);
		if (*p == '"' && (st = scan_string(s, &p, r)) != P_OK)
			return st;
	}
	return skip_value(s, pp, 2);
}

static int scan_args(struct kscan *s, const u8 **pp, struct kev *ev)
{
	const u8 *p = *pp;
	char kbuf[64];
	int st, more;

	if (*p != '{')
		return skip_value(s, pp, 1);
	p = skip_ws(p + 1);
	if (*p == '}') {
		*pp = p + 1;
		return P_OK;
	}
	do {
		const char *k;
		size_t kl;
		int idx = -1, ok;
		struct sref *sr = NULL;

		if ((st = scan_key(s, &p, &k, &kl, kbuf, sizeof(kbuf))) != P_OK)
			return st;
		switch (kl) {
		case 3: if (KEY_IS(k, kl, "Seq")) idx = A_I_SEQ; break;
		case 5:
			if (KEY_IS(k, kl, "bytes")) idx = A_I_BYTES;
			else if (KEY_IS(k, kl, "dtype")) sr = &ev->dtype;
			break;
		case 6:
			if (KEY_IS(k, kl, "stream")) idx = A_I_STREAM;
			else if (KEY_IS(k, kl, "device")) idx = A_I_DEVICE;
			break;
		case 8:
			if (KEY_IS(k, kl, "Src Rank")) idx = A_I_SRC;
			else if (KEY_IS(k, kl, "Dst Rank")) idx = A_I_DST;
			break;
		case 10:
			if (KEY_IS(k, kl, "Group size")) {
				idx = A_I_GSIZE;
			} else if (KEY_IS(k, kl, "Input Dims")) {
				if ((st = scan_dims(s, &p, &ev->in_dims_nelems)) != P_OK)
					return st;
				goto next;
			} else if (KEY_IS(k, kl, "Input type")) {
				if ((st = scan_first_str(s, &p, &ev->in_type)) != P_OK)
					return st;
				goto next;
			}
			break;
		case 11: if (KEY_IS(k, kl, "correlation")) idx = A_I_CORR; break;
		case 13: if (KEY_IS(k, kl, "In msg nelems")) idx = A_I_IN; break;
		case 14:
			if (KEY_IS(k, kl, "Out msg nelems")) idx = A_I_OUT;
			else if (KEY_IS(k, kl, "wait_on_stream")) idx = A_I_WSTREAM;
			break;
		case 15: if (KEY_IS(k, kl, "Collective name")) sr = &ev->coll; break;
		case 18: if (KEY_IS(k, kl, "Process Group Name")) sr = &ev->pg_name; break;
		case 19: if (KEY_IS(k, kl, "Process Group Ranks")) sr = &ev->pg_ranks; break;
		case 25: if (KEY_IS(k, kl, "Process Group Description")) sr = &ev->pg_desc; break;
		case 33: if (KEY_IS(k, kl, "wait_on_cuda_event_record_corr_id")) idx = A_I_WCORR; break;
		default: break;
		}
		if (idx >= 0) {
			if ((st = scan_int_arg(s, &p, &ev->a[idx], &ok)) != P_OK)
				return st;
			if (ok)
				ev->aflags |= 1u << idx;
			else
				ev->aflags &= ~(1u << idx);
		} else if (sr) {
			if ((st = scan_str_arg(s, &p, sr)) != P_OK)
				return st;
		} else if ((st = skip_value(s, &p, 2)) != P_OK) {
			return st;
		}
next:
		if ((st = next_member(s, &p, &more)) != P_OK)
			return st;
	} while (more);
	*pp = p;
	return P_OK;
}

static int scan_time(struct kscan *s, const u8 **pp, int64_t *v, uint8_t *state)
{
	int st;

	if (**pp == '-' || is_digit(**pp)) {
		struct num n;
		if ((st = scan_number(s, pp, &n)) != P_OK)
			return st;
		*state = num_to_ns(&n, v) ? T_OK : T_RANGE;
		return P_OK;
	}
	*state = T_TYPE;
	return skip_value(s, pp, 1);
}

static int fast_event(struct kscan *s, const u8 **pp, struct kev *ev);

/* One element of traceEvents into ev.  Returns P_OK with ev->... filled;
 * is_obj is 0 for an element that is not an object.  Events in the
 * profiler's own layout take fast_event(); anything else, and any event the
 * fast path gives up on, the full member loop below from the same '{'. */
static int scan_event(struct kscan *s, const u8 **pp, struct kev *ev, int *is_obj)
{
	const u8 *p = *pp;
	char kbuf[64];
	int st, more, ok;

	memset(ev, 0, sizeof(*ev));
	if (*p == '{' && !s->nofast) {
		if (fast_event(s, pp, ev) == 0) {
			fast_events++;
			*is_obj = 1;
			return P_OK;
		}
		memset(ev, 0, sizeof(*ev));
	}
	if (*p != '{') {
		*is_obj = 0;
		return skip_value(s, pp, 1);
	}
	*is_obj = 1;
	p = skip_ws(p + 1);
	if (*p == '}') {
		*pp = p + 1;
		return P_OK;
	}
	do {
		const char *k;
		size_t kl;

		if ((st = scan_key(s, &p, &k, &kl, kbuf, sizeof(kbuf))) != P_OK)
			return st;
		st = -1;
		switch (kl) {
		case 2:
			if (k[0] == 'p' && k[1] == 'h')
				st = scan_str_arg(s, &p, &ev->ph);
			else if (k[0] == 't' && k[1] == 's')
				st = scan_time(s, &p, &ev->ts, &ev->ts_st);
			break;
		case 3:
			if (KEY_IS(k, kl, "cat")) {
				st = scan_str_arg(s, &p, &ev->cat);
			} else if (KEY_IS(k, kl, "dur")) {
				st = scan_time(s, &p, &ev->dur, &ev->dur_st);
			} else if (KEY_IS(k, kl, "pid")) {
				if (*p == '"') {
					st = scan_string(s, &p, NULL);
					ev->has_pid = 0;
				} else {
					st = scan_int_arg(s, &p, &ev->pid, &ok);
					ev->has_pid = (uint8_t)ok;
				}
			} else if (KEY_IS(k, kl, "tid")) {
				if (*p == '"') {
					st = scan_string(s, &p, &ev->tid_s);
					ev->has_tid = 0;
				} else {
					ev->tid_s.set = 0;
					st = scan_int_arg(s, &p, &ev->tid, &ok);
					ev->has_tid = (uint8_t)ok;
				}
			}
			break;
		case 4:
			if (KEY_IS(k, kl, "name"))
				st = scan_str_arg(s, &p, &ev->name);
			else if (KEY_IS(k, kl, "args"))
				st = scan_args(s, &p, ev);
			break;
		default:
			break;
		}
		if (st == -1)
			st = skip_value(s, &p, 1);
		if (st != P_OK)
			return st;
		if ((st = next_member(s, &p, &more)) != P_OK)
			return st;
	} while (more);
	*pp = p;
	return P_OK;
}

/* ------------------------------------------------------------------ */
/* Acting on one event                                                  */
/* ------------------------------------------------------------------ */

enum ecat { E_OTHER = 0, E_KERNEL, E_MEMCPY, E_MEMSET, E_SYNC, E_RUNTIME, E_ANNOT, E_GPU_ANNOT };

static enum ecat classify_cat(struct kscan *s, const struct sref *c)
{
	size_t n;
	const char *t;

	if (!c->set)
		return E_OTHER;
	t = sref_text(s, c, &n);
#define IS(lit) (n == sizeof(lit) - 1 && memcmp(t, lit, n) == 0)
	if (IS("kernel") || IS("Kernel"))
		return E_KERNEL;
	if (IS("gpu_memcpy") || IS("Memcpy"))
		return E_MEMCPY;
	if (IS("gpu_memset") || IS("Memset"))
		return E_MEMSET;
	if (IS("cuda_sync"))
		return E_SYNC;
	if (IS("cuda_runtime") || IS("cuda_driver") || IS("Runtime") || IS("Driver"))
		return E_RUNTIME;
	if (IS("user_annotation") || IS("cpu_op"))
		return E_ANNOT;
	if (IS("gpu_user_annotation"))
		return E_GPU_ANNOT;
#undef IS
	return E_OTHER;
}

/* Host ops that call a collective (docs/metrics.md "Collective identity"):
 * PyTorch's c10d and functional collectives, its backends' own ops
 * (nccl:all_to_all, gloo:...), record_param_comms (the collective's
 * metadata).  A communication kernel launched inside one learns its
 * collective from it (timeline.c). */
static int comm_host_op(const char *n, size_t l)
{
	static const char *const pre[] = { "nccl:", "rccl:", "gloo:", "c10d::", "c10d_functional::",
					   "_c10d_functional::", "record_param_comms" };
	for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++) {
		size_t pl = strlen(pre[i]);
		if (l >= pl && memcmp(n, pre[i], pl) == 0)
			return 1;
	}
	return 0;
}

/* Whether act_event reads the args of an event of category c named name. */
static int needs_args(struct kscan *s, enum ecat c, const struct sref *name)
{
	if (c == E_ANNOT && name->set) {
		size_t n;
		const char *t = sref_text(s, name, &n);
		return comm_host_op(t, n);
	}
	return c == E_KERNEL || c == E_MEMCPY || c == E_MEMSET || c == E_SYNC || c == E_RUNTIME;
}

/* ------------------------------------------------------------------ */
/* Layout fast path                                                     */
/* ------------------------------------------------------------------ */

/*
 * PyTorch's profiler writes every event with the same keys in the same
 * order and spacing, e.g.
 *
 *   {\n    "ph": "X", "cat": "kernel", "name": "...", "pid": 0, "tid": 7,\n
 *       "ts": 1695313424946893.123, "dur": 2.123,\n    "args": {...}\n  }
 *
 * and, for flow events, {\n    "ph": "f", "id": 1, "pid": .., "tid": ..,
 * "ts": ..,\n    "cat": "..", "name": "..", "bp": "e"\n  }.  fast_event()
 * compares the literal text between the values (keys, ':', ',' and the
 * exact whitespace) 16 bytes at a time and extracts the values directly.
 * It accepts only what the grammar accepts and fills ev exactly as
 * scan_event's member loop would: literals are valid JSON by construction,
 * strings are taken only without backslash or control character, numbers
 * only in the plain forms converted below (same results as scan_number +
 * num_to_int/num_to_ns), and the event must end right after the last
 * member, so no later duplicate key can change what was extracted.  On
 * anything else (another layout, an escape, a long fraction, an error, the
 * window end: the NUL sentinel matches no literal) it returns nonzero and
 * scan_event parses the event again from its '{' with the full path, which
 * then yields the results, errors and offsets of the full path.
 */

/* Literal separators, zero-padded to 16 bytes for one unaligned load. */
#define LIT(name, text) static const char name[16] __attribute__((aligned(16))) = text
LIT(L_OPEN_PH, "{\n    \"ph\": \"");
LIT(L_CAT, "\", \"cat\": \"");
LIT(L_NAME, "\", \"name\": \"");
LIT(L_PID_S, "\", \"pid\": ");
LIT(L_TID, ", \"tid\": ");
LIT(L_TS_NL, ",\n    \"ts\": ");
LIT(L_DUR, ", \"dur\": ");
LIT(L_ARGS_NL, ",\n    \"args\": ");
LIT(L_CLOSE, "\n  }");
LIT(L_ID_S, "\", \"id\": ");
LIT(L_PID, ", \"pid\": ");
LIT(L_TS, ", \"ts\": ");
LIT(L_CAT_NL, ",\n    \"cat\": \"");
LIT(L_BP, "\", \"bp\": \"");
LIT(L_QCLOSE, "\"\n  }");
#undef LIT

/* p[0..n) == lit[0..n) (n <= 16); reads 16 bytes at p, which the PAD
 * behind the window end allows for any p <= end. */
HOT int lit_eq(const u8 *p, const char *lit, unsigned n)
{
#ifdef __SSE2__
	__m128i a = _mm_loadu_si128((const __m128i *)(const void *)p);
	__m128i b = _mm_load_si128((const __m128i *)(const void *)lit);
	unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(a, b));
	return (~m & ((1u << n) - 1)) == 0;
#else
	return memcmp(p, lit, n) == 0;
#endif
}

#define LIT_OK(p, lit) lit_eq((p), (lit), (unsigned)strlen(lit))

/* A string value whose opening quote is at p[-1]: on success r holds its
 * contents (no escape) and the return value points at the closing quote;
 * NULL at a backslash or control character (the NUL sentinel included). */
HOT const u8 *fast_str(const u8 *p, struct sref *r)
{
	const u8 *start = p;

	p = str_stop(p);
	if (*p != '"')
		return NULL;
	r->p = start;
	r->len = (uint32_t)(p - start);
	r->esc = 0;
	r->set = 1;
	return p;
}

/* An integer: -?(0|[1-9][0-9]{0,17}) not followed by '.', 'e', 'E' or a
 * digit; what scan_number + num_to_int give for it.  NULL otherwise. */
HOT const u8 *fast_int(const u8 *p, int64_t *v)
{
	const u8 *q;
	int neg = *p == '-';
	uint64_t m;

	p += neg;
	q = p;
	if (*p == '0') {
		m = 0;
		p++;
	} else if (*p >= '1' && *p <= '9') {
		m = (uint64_t)(*p++ - '0');
		while (is_digit(*p))
			m = m * 10 + (uint64_t)(*p++ - '0');
		if (p - q > 18)
			return NULL;
	} else {
		return NULL;
	}
	if (is_digit(*p) || *p == '.' || (*p | 0x20) == 'e')
		return NULL;
	*v = neg ? -(int64_t)m : (int64_t)m;
	return p;
}

/* Microseconds (0|[1-9][0-9]{0,15})(.[0-9]{1,3})? as ns, not followed by a
 * digit, 'e' or 'E', up to INT64_MAX ns: exact, so what scan_number +
 * num_to_ns give (at most 19 significant digits and 3 decimals: nothing is
 * dropped or rounded).  NULL otherwise (a sign, more decimals, an exponent,
 * out of range: the full path handles those). */
HOT const u8 *fast_us(const u8 *p, int64_t *ns)
{
	static const uint32_t scale[4] = { 1000, 100, 10, 1 };
	const u8 *q = p;
	uint64_t m, f = 0;
	unsigned nf = 0;

	if (*p == '0') {
		m = 0;
		p++;
	} else if (*p >= '1' && *p <= '9') {
		m = (uint64_t)(*p++ - '0');
		while (is_digit(*p))
			m = m * 10 + (uint64_t)(*p++ - '0');
		if (p - q > 16)
			return NULL;
	} else {
		return NULL;
	}
	if (*p == '.') {
		p++;
		while (is_digit(*p) && nf < 4) {
			f = f * 10 + (uint64_t)(*p++ - '0');
			nf++;
		}
		if (nf == 0 || nf > 3)
			return NULL;
	}
	if (is_digit(*p) || (*p | 0x20) == 'e')
		return NULL;
	m = m * 1000 + f * scale[nf]; /* < 1e19 < 2^64 */
	if (m > (uint64_t)INT64_MAX)
		return NULL;
	*ns = (int64_t)m;
	return p;
}

/* Returns 0 with ev filled and *pp past the event's '}', or 1: parse the
 * event with the full path (ev is then reset by the caller). */
static int fast_event(struct kscan *s, const u8 **pp, struct kev *ev)
{
	const u8 *p = *pp;

	if (!LIT_OK(p, L_OPEN_PH))
		return 1;
	p += strlen(L_OPEN_PH);
	if (!(p = fast_str(p, &ev->ph)))
		return 1;
	if (LIT_OK(p, L_CAT)) {
		/* complete events and the like: ph cat name pid tid ts dur [args] */
		p += strlen(L_CAT);
		if (!(p = fast_str(p, &ev->cat)) || !LIT_OK(p, L_NAME))
			return 1;
		if (!(p = fast_str(p + strlen(L_NAME), &ev->name)) || !LIT_OK(p, L_PID_S))
			return 1;
		if (!(p = fast_int(p + strlen(L_PID_S), &ev->pid)) || !LIT_OK(p, L_TID))
			return 1;
		ev->has_pid = 1;
		if (!(p = fast_int(p + strlen(L_TID), &ev->tid)) || !LIT_OK(p, L_TS_NL))
			return 1;
		ev->has_tid = 1;
		if (!(p = fast_us(p + strlen(L_TS_NL), &ev->ts)) || !LIT_OK(p, L_DUR))
			return 1;
		ev->ts_st = T_OK;
		if (!(p = fast_us(p + strlen(L_DUR), &ev->dur)))
			return 1;
		ev->dur_st = T_OK;
		if (LIT_OK(p, L_ARGS_NL)) {
			p += strlen(L_ARGS_NL);
			/* args matter only for the categories act_event reads
			 * them for; the others are validated and skipped.  The
			 * cat is final: the event must end after args. */
			if (needs_args(s, classify_cat(s, &ev->cat), &ev->name)) {
				if (scan_args(s, &p, ev) != P_OK)
					return 1;
			} else if (skip_value(s, &p, 1) != P_OK) {
				return 1;
			}
		}
		if (!LIT_OK(p, L_CLOSE))
			return 1;
		*pp = p + strlen(L_CLOSE);
		return 0;
	}
	if (LIT_OK(p, L_ID_S)) {
		/* flow events: ph id pid tid ts cat name [bp] */
		int64_t id;
		p += strlen(L_ID_S);
		if (!(p = fast_int(p, &id)) || !LIT_OK(p, L_PID))
			return 1;
		if (!(p = fast_int(p + strlen(L_PID), &ev->pid)) || !LIT_OK(p, L_TID))
			return 1;
		ev->has_pid = 1;
		if (!(p = fast_int(p + strlen(L_TID), &ev->tid)) || !LIT_OK(p, L_TS))
			return 1;
		ev->has_tid = 1;
		if (!(p = fast_us(p + strlen(L_TS), &ev->ts)) || !LIT_OK(p, L_CAT_NL))
			return 1;
		ev->ts_st = T_OK;
		if (!(p = fast_str(p + strlen(L_CAT_NL), &ev->cat)) || !LIT_OK(p, L_NAME))
			return 1;
		if (!(p = fast_str(p + strlen(L_NAME), &ev->name)))
			return 1;
		if (LIT_OK(p, L_BP)) {
			struct sref bp;
			if (!(p = fast_str(p + strlen(L_BP), &bp)))
				return 1;
		}
		if (!LIT_OK(p, L_QCLOSE))
			return 1;
		*pp = p + strlen(L_QCLOSE);
		return 0;
	}
	return 1;
}

/* N of "ProfilerStep#N", or -1. */
static int64_t profiler_step(const char *t, size_t n)
{
	static const char pre[] = "ProfilerStep#";
	const size_t pl = sizeof(pre) - 1;
	int64_t v = 0;

	if (n <= pl || n > pl + 18 || memcmp(t, pre, pl) != 0)
		return -1;
	for (size_t i = pl; i < n; i++) {
		if (!is_digit((u8)t[i]))
			return -1;
		v = v * 10 + (t[i] - '0');
	}
	return v;
}

static uint32_t intern_sref(struct kscan *s, struct trace *tr, const struct sref *r)
{
	size_t n;
	const char *t;

	if (!r->set)
		return 0;
	t = sref_text(s, r, &n);
	return strtab_intern(&tr->names, t, n);
}

/* "Process Group Ranks" as PyTorch writes it, a string "[0, 1, 2, 3]" of
 * global ranks, interned as "0,1,2,3".  0 (unknown) for an empty list
 * (PyTorch writes "[]" where it has none) and for anything that is not a
 * bracketed list of ranks in 0..2^31-1: the group's members then come from
 * the ranks that call it (overlap/join.c). */
static uint32_t intern_pg_ranks(struct kscan *s, struct trace *tr, const struct sref *r)
{
	size_t n, o = 0;
	const char *t;
	if (!r->set)
		return 0;
	t = sref_text(s, r, &n);
	size_t i = 0;
	while (i < n && (t[i] == ' ' || t[i] == '\t'))
		i++;
	if (i == n || t[i++] != '[')
		return 0;
	char *buf = xmalloc(n + 1);
	int want = 1, ok = 1, closed = 0; /* want: a number comes next */
	for (; i < n && ok; i++) {
		if (t[i] == ' ' || t[i] == '\t')
			continue;
		if (t[i] == ']') {
			ok = !want || o == 0; /* "[]" or a list closed after a number */
			closed = 1;
			i++;
			break;
		}
		if (t[i] == ',' && !want) {
			buf[o++] = ',';
			want = 1;
			continue;
		}
		if (!want || !is_digit((u8)t[i])) {
			ok = 0;
			break;
		}
		int64_t v = 0;
		size_t d = 0;
		while (i < n && is_digit((u8)t[i]) && d < 11) {
			v = v * 10 + (t[i] - '0');
			buf[o++] = t[i++];
			d++;
		}
		i--;
		ok = v <= INT32_MAX && !(i + 1 < n && is_digit((u8)t[i + 1]));
		want = 0;
	}
	while (ok && i < n && (t[i] == ' ' || t[i] == '\t'))
		i++;
	uint32_t id = ok && closed && i == n && o ? strtab_intern(&tr->names, buf, o) : 0;
	free(buf);
	return id;
}

/* Point to point (PyTorch's record_param_comms metadata, copied onto the
 * NCCL kernel): "Collective name" send or recv, the peer's global rank in
 * "Dst Rank" (send) or "Src Rank" (recv). */
static void p2p_meta(struct kscan *s, const struct kev *ev, struct coll_meta *m)
{
	m->peer = -1;
	m->p2p = P2P_NONE;
	if (!ev->coll.set)
		return;
	size_t n;
	const char *c = sref_text(s, &ev->coll, &n);
	int send = (n == 4 && memcmp(c, "send", 4) == 0) || (n == 5 && memcmp(c, "isend", 5) == 0);
	int recv = (n == 4 && memcmp(c, "recv", 4) == 0) || (n == 5 && memcmp(c, "irecv", 5) == 0);
	int k = send ? A_I_DST : A_I_SRC;
	if ((!send && !recv) || !(ev->aflags & (1u << k)) || ev->a[k] < 0 || ev->a[k] > INT32_MAX)
		return;
	m->p2p = send ? P2P_SEND : P2P_RECV;
	m->peer = (int32_t)ev->a[k];
}

/* The timeline of GPU `dev`: the first device seen is s->t's; each other
 * one gets a trace of its own, so a one-process multi-GPU trace (several
 * GPUs driven by one profiled process: tune-tp's, DataParallel's) becomes
 * one timeline per GPU, as one file per rank would be.  An unknown device
 * (< 0) goes to s->t; past MAX_SPLIT devices the spans are counted on s->t
 * as other_device_spans (outputs warn that its figures mix devices). */
static struct trace *device_trace(struct kscan *s, int64_t dev)
{
	struct trace *t = s->t;
	if (dev < 0 || dev > INT32_MAX)
		return t;
	if (t->device < 0)
		t->device = (int)dev;
	if (dev == t->device)
		return t;
	for (int i = 0; i < s->nmore; i++)
		if (s->more[i]->device == dev)
			return s->more[i];
	if (s->nmore == MAX_SPLIT) {
		if (t->other_device < 0)
			t->other_device = (int)dev;
		t->other_device_spans++;
		return t;
	}
	struct trace *d = trace_new(s->path, "kineto");
	d->device = (int)dev;
	s->more[s->nmore++] = d;
	return d;
}

/* The collective metadata of a kernel's or a host op's args into m. */
static void args_meta(struct kscan *s, struct trace *dt, const struct kev *ev, struct coll_meta *m)
{
	coll_meta_init(m);
	m->coll_name = intern_sref(s, dt, &ev->coll);
	m->dtype = intern_sref(s, dt, &ev->dtype);
	m->pg_name = intern_sref(s, dt, &ev->pg_name);
	m->pg_desc = intern_sref(s, dt, &ev->pg_desc);
	m->pg_ranks = intern_pg_ranks(s, dt, &ev->pg_ranks);
	m->in_nelems = (ev->aflags & A_IN) ? ev->a[A_I_IN] : -1;
	m->out_nelems = (ev->aflags & A_OUT) ? ev->a[A_I_OUT] : -1;
	m->seq = (ev->aflags & A_SEQ) ? ev->a[A_I_SEQ] : -1;
	m->group_size = (ev->aflags & A_GSIZE) && ev->a[A_I_GSIZE] >= 0 &&
			ev->a[A_I_GSIZE] <= INT32_MAX ? (int32_t)ev->a[A_I_GSIZE] : -1;
	m->dtype_bytes = m->dtype ? dtype_bytes(strtab_get(&dt->names, m->dtype)) : 0;
	p2p_meta(s, ev, m);
}

/* A host op that calls a collective (comm_host_op): its name and what its
 * args say; "Input Dims" and "Input type" give the size where no msg
 * nelems and dtype are there (older PyTorch writes only those). */
static void host_coll(struct kscan *s, const struct kev *ev, int64_t start, int64_t end)
{
	struct trace *t = s->t;
	struct coll_meta m;
	size_t nl;
	const char *nm = sref_text(s, &ev->name, &nl);
	char name[256];
	if (nl >= sizeof(name))
		nl = sizeof(name) - 1;
	memcpy(name, nm, nl); /* args_meta may reuse the scratch buffer */
	name[nl] = '\0';
	args_meta(s, t, ev, &m);
	if (m.in_nelems < 0 && m.out_nelems < 0 && ev->in_dims_nelems > 0)
		m.in_nelems = ev->in_dims_nelems;
	if (!m.dtype && ev->in_type.set) {
		m.dtype = intern_sref(s, t, &ev->in_type);
		m.dtype_bytes = dtype_bytes(strtab_get(&t->names, m.dtype));
	}
	trace_add_host_coll(t, ev->tid, start, end, name, nl, &m);
}

static void act_event(struct kscan *s, const struct kev *ev)
{
	struct trace *t = s->t;
	enum ecat c;
	int64_t start, end;

	if (!ev->ph.set) {
		trace_skip(t, "event without a 'ph' string");
		return;
	}
	if (ev->ph.esc ? !sref_eq(s, &ev->ph, "X", 1) : ev->ph.len != 1 || ev->ph.p[0] != 'X')
		return; /* metadata, flows, instants, counters: not used */
	if (ev->ts_st != T_OK || ev->dur_st != T_OK) {
		const char *f = ev->ts_st != T_OK ? "ts" : "dur";
		uint8_t stt = ev->ts_st != T_OK ? ev->ts_st : ev->dur_st;
		trace_skip(t, "complete event with %s '%s'",
			   stt == T_MISSING ? "no" : stt == T_TYPE ? "a non-numeric" : "an out-of-range", f);
		return;
	}
	if (ev->dur < 0 || ev->dur > MAX_DUR_NS || ev->ts > INT64_MAX - ev->dur) {
		trace_skip(t, "complete event with a negative or absurd 'dur' (%lld ns)", (long long)ev->dur);
		return;
	}
	start = ev->ts;
	end = ev->ts + ev->dur;
	c = classify_cat(s, &ev->cat);

	if (c == E_KERNEL || c == E_MEMCPY || c == E_MEMSET || c == E_SYNC) {
		int64_t stream = -1, dev = -1;
		if (ev->aflags & A_STREAM)
			stream = ev->a[A_I_STREAM];
		else if (ev->has_tid)
			stream = ev->tid;
		else if (ev->tid_s.set) {
			/* legacy "stream 7" thread names */
			const u8 *q = ev->tid_s.p, *qe = q + ev->tid_s.len;
			while (q < qe && !is_digit(*q))
				q++;
			if (q < qe) {
				struct sref d = { q, (uint32_t)(qe - q), 0, 1 };
				if (!str_to_int(&d, &stream))
					stream = -1;
			}
		}
		if (stream < INT32_MIN || stream > INT32_MAX)
			stream = -1;
		if (c == E_SYNC && stream < 0)
			return; /* device-wide synchronisation: on no stream */
		if (ev->aflags & A_DEVICE)
			dev = ev->a[A_I_DEVICE];
		else if (ev->has_pid)
			dev = ev->pid;
		struct trace *dt = device_trace(s, dev);

		size_t nl;
		const char *nm = ev->name.set ? sref_text(s, &ev->name, &nl) : (nl = 0, "");
		enum record_hint h = c == E_KERNEL ? R_KERNEL : c == E_MEMCPY ? R_MEMCPY :
				     c == E_MEMSET ? R_MEMSET : R_SYNC;
		uint64_t bytes = 0;
		if ((c == E_MEMCPY || c == E_MEMSET) && (ev->aflags & A_BYTES) && ev->a[A_I_BYTES] > 0)
			bytes = (uint64_t)ev->a[A_I_BYTES];
		size_t idx = trace_add_device(dt, start, end, nm, nl, h, (int32_t)stream,
					      (ev->aflags & A_CORR) ? ev->a[A_I_CORR] : -1, bytes);
		if (c == E_SYNC && (ev->aflags & (A_WSTREAM | A_WCORR)) == (A_WSTREAM | A_WCORR) &&
		    ((ev->a[A_I_WSTREAM] >= 0 && ev->a[A_I_WCORR] >= 0 && ev->a[A_I_WSTREAM] != stream) ||
		     (ev->a[A_I_WSTREAM] == -1 && ev->a[A_I_WCORR] == -1 && (ev->aflags & A_CORR)))) {
			/* a stream wait on an event record, its record named or (-1: the
			 * profiler could not) to be found by host order: kept to pair it up */
			GROW(s->waits, s->wcap, s->nwait + 1);
			s->waits[s->nwait++] = (struct kwait){ dt, start, (ev->aflags & A_CORR) ? ev->a[A_I_CORR] : -1,
							       stream, ev->a[A_I_WSTREAM], ev->a[A_I_WCORR] };
		}
		if (c == E_KERNEL && (ev->coll.set || (ev->aflags & (A_IN | A_OUT | A_GSIZE)))) {
			struct coll_meta m;
			args_meta(s, dt, ev, &m);
			trace_set_coll(dt, idx, &m);
		}
		return;
	}
	if (c == E_GPU_ANNOT) {
		size_t nl;
		const char *nm = ev->name.set ? sref_text(s, &ev->name, &nl) : (nl = 0, "");
		int64_t k = profiler_step(nm, nl);
		if (k >= 0)
			trace_add_gpu_step(t, k, start, end);
		return;
	}
	t->host_events++;
	if (t->pid < 0 && ev->has_pid)
		t->pid = ev->pid;
	if (c == E_RUNTIME) {
		if (ev->aflags & A_CORR)
			trace_add_launch_tid(t, ev->a[A_I_CORR], start, end, ev->has_tid ? ev->tid : -1);
		if (ev->name.set) { /* cudaStreamSynchronize, cudaEventSynchronize, hipDeviceSynchronize, ... */
			size_t nl;
			const char *nm = sref_text(s, &ev->name, &nl);
			if (nl >= 11 && memcmp(nm + nl - 11, "Synchronize", 11) == 0)
				trace_add_host_sync(t, start, end);
			/* cudaEventRecord, cudaEventRecordWithFlags (hip alike) */
			if (nl >= 15 && (ev->aflags & A_CORR) && ev->has_tid &&
			    (memcmp(nm, "cudaEventRecord", 15) == 0 || memcmp(nm, "hipEventRecord", 14) == 0)) {
				GROW(s->recs, s->rcap, s->nrec + 1);
				s->recs[s->nrec++] = (struct krec){ ev->a[A_I_CORR], start, ev->tid };
			}
		}
	} else if (c == E_ANNOT && ev->name.set) {
		size_t nl;
		const char *nm = sref_text(s, &ev->name, &nl);
		int64_t k = profiler_step(nm, nl);
		if (k >= 0)
			trace_add_step(t, k, start, end);
		else if (ev->has_tid && comm_host_op(nm, nl))
			host_coll(s, ev, start, end);
	}
}

/* distributedInfo: rank and world_size, the rest validated and skipped. */
static int scan_distinfo(struct kscan *s, const u8 **pp, int *rank, int *world)
{
	const u8 *p = *pp;
	char kbuf[64];
	int st, more, ok;

	if (*p != '{')
		return skip_value(s, pp, 1);
	p = skip_ws(p + 1);
	if (*p == '}') {
		*pp = p + 1;
		return P_OK;
	}
	do {
		const char *k;
		size_t kl;
		int64_t v;

		if ((st = scan_key(s, &p, &k, &kl, kbuf, sizeof(kbuf))) != P_OK)
			return st;
		if (KEY_IS(k, kl, "rank") || KEY_IS(k, kl, "world_size")) {
			int *dst = k[0] == 'r' ? rank : world;
			if ((st = scan_int_arg(s, &p, &v, &ok)) != P_OK)
				return st;
			if (ok && v >= 0 && v <= INT32_MAX)
				*dst = (int)v;
		} else if ((st = skip_value(s, &p, 2)) != P_OK) {
			return st;
		}
		if ((st = next_member(s, &p, &more)) != P_OK)
			return st;
	} while (more);
	*pp = p;
	return P_OK;
}

/* ------------------------------------------------------------------ */
/* Window and driver                                                    */
/* ------------------------------------------------------------------ */

/* Keeps [mark, end), reads more behind it.  Returns 0, or -1 on a read
 * error (s->e filled). */
static int refill(struct kscan *s, const u8 *mark)
{
	size_t keep = (size_t)(s->end - mark);

	if (keep > s->cap / 2 && s->cap < WINDOW_MAX) {
		size_t ncap = s->cap * 2;
		size_t off = (size_t)(mark - s->buf);
		u8 *nb = xmalloc(ncap + PAD);
		memcpy(nb, s->buf + off, keep);
		free(s->buf);
		s->buf = nb;
		s->cap = ncap;
		s->base += (long long)off;
	} else {
		memmove(s->buf, mark, keep);
		s->base += (long long)(mark - s->buf);
	}
	s->end = s->buf + keep;
	while (!s->eof && (size_t)(s->end - s->buf) < s->cap) {
		size_t room = s->cap - (size_t)(s->end - s->buf);
		ssize_t r;
		if (s->z) {
			r = zread_read(s->z, s->end, room, s->e);
			if (r < 0) {
				s->read_failed = 1;
				return -1;
			}
		} else {
			size_t left = s->mem_len - s->mem_pos;
			r = (ssize_t)(left < room ? left : room);
			memcpy(s->end, s->mem + s->mem_pos, (size_t)r);
			s->mem_pos += (size_t)r;
		}
		if (r == 0)
			s->eof = 1;
		s->end += r;
	}
	memset(s->end, 0, PAD);
	return 0;
}

enum dstate { D_ROOT, D_KEY_FIRST, D_KEY, D_ROOT_AFTER, D_EV_FIRST, D_EV_NEXT, D_EV_AFTER, D_TRAIL, D_DONE };

/* A top-level key and its value (*pp at the key; *d the state after it):
 * traceEvents opens the events, distributedInfo and hostname are read,
 * anything else is validated and skipped. */
static int root_key(struct kscan *s, const u8 **pp, enum dstate *d)
{
	const char *k;
	size_t kl;
	char kbuf[64];
	int st;
	const u8 *p = skip_ws(*pp);
	if (*d == D_KEY_FIRST && *p == '}') {
		*pp = p + 1;
		*d = D_TRAIL;
		return P_OK;
	}
	if ((st = scan_key(s, &p, &k, &kl, kbuf, sizeof(kbuf))) != P_OK) {
		*pp = p;
		return st;
	}
	if (KEY_IS(k, kl, "traceEvents")) {
		if (*p == '[') {
			p++;
			s->seen_events_key = 1;
			*d = D_EV_FIRST;
		} else {
			st = bad(s, p, "expected '[' after \"traceEvents\"");
		}
	} else if (KEY_IS(k, kl, "distributedInfo")) {
		int r = s->rank, w = s->world_size;
		if ((st = scan_distinfo(s, &p, &r, &w)) == P_OK) {
			s->rank = r;
			s->world_size = w;
			*d = D_ROOT_AFTER;
		}
	} else if (KEY_IS(k, kl, "hostname") && *p == '"') {
		/* not written by PyTorch itself; tools that merge or make
		 * traces may name the host: ranks of one host share a clock */
		struct sref hr;
		if ((st = scan_string(s, &p, &hr)) == P_OK) {
			size_t hl;
			const char *h = sref_text(s, &hr, &hl);
			if (hl < sizeof(s->host)) {
				memcpy(s->host, h, hl);
				s->host[hl] = '\0';
			}
			*d = D_ROOT_AFTER;
		}
	} else if ((st = skip_value(s, &p, 1)) == P_OK) {
		*d = D_ROOT_AFTER;
	}
	*pp = p;
	return st;
}

static enum aorta_status scan_all(struct kscan *s)
{
	enum dstate d = D_ROOT;
	const u8 *p, *mark;
	struct kev ev;
	int st = P_OK;

	if (refill(s, s->buf) < 0)
		return s->e ? s->e->code : AORTA_EINPUT;
	p = mark = s->buf;
	for (;;) {
		/* whitespace between units carries no state: consumed before the
		 * mark, so a long run of it (a 1 GiB run inside a gzip member) is
		 * read through the window instead of growing it */
		p = skip_ws(p);
		mark = p;
		switch (d) {
		case D_ROOT:
			p = skip_ws(p);
			if (*p == '{') {
				p++;
				d = D_KEY_FIRST;
			} else {
				st = bad(s, p, p >= s->end && s->eof && p == s->buf && s->base == 0 ?
					 "expected a JSON object, found an empty file" :
					 "expected '{' opening a kineto trace object");
			}
			break;
		case D_KEY_FIRST:
		case D_KEY:
			st = root_key(s, &p, &d);
			break;
		case D_ROOT_AFTER:
			p = skip_ws(p);
			if (*p == ',') {
				p++;
				d = D_KEY;
			} else if (*p == '}') {
				p++;
				d = D_TRAIL;
			} else {
				st = bad(s, p, "expected ',' or '}' in the top-level object");
			}
			break;
		case D_EV_FIRST:
		case D_EV_NEXT: {
			int is_obj;
			p = skip_ws(p);
			if (d == D_EV_FIRST && *p == ']') {
				p++;
				d = D_ROOT_AFTER;
				break;
			}
			if ((st = scan_event(s, &p, &ev, &is_obj)) != P_OK)
				break;
			s->nelem++;
			if (is_obj)
				act_event(s, &ev);
			else
				trace_skip(s->t, "element of 'traceEvents' that is not an object");
			d = D_EV_AFTER;
			break;
		}
		case D_EV_AFTER:
			p = skip_ws(p);
			if (*p == ',') {
				p++;
				d = D_EV_NEXT;
			} else if (*p == ']') {
				p++;
				d = D_ROOT_AFTER;
			} else {
				st = bad(s, p, "expected ',' or ']' in 'traceEvents'");
			}
			break;
		case D_TRAIL:
			p = skip_ws(p);
			if (p >= s->end && s->eof)
				return AORTA_OK;
			if (p < s->end)
				return aorta_fail(s->e, AORTA_EINPUT, s->path, 0, s->base + (p - s->buf),
						  "unexpected data after the top-level object");
			st = P_MORE;
			s->err_at = p;
			break;
		case D_DONE:
			return AORTA_OK;
		}
		if (st == P_OK)
			continue;
		if (st == P_ERR)
			return aorta_fail(s->e, AORTA_EINPUT, s->path, 0, s->base + (s->err_at - s->buf),
					  "%s", s->err_what);
		/* P_MORE: refill from the unit's mark and parse it again */
		if (s->eof)
			return aorta_fail(s->e, AORTA_EINPUT, s->path, 0, s->base + (s->end - s->buf),
					  "unexpected end of input (truncated file?): %s", s->err_what);
		if (s->cap >= WINDOW_MAX && mark == s->buf && (size_t)(s->end - s->buf) >= s->cap)
			return aorta_fail(s->e, AORTA_EINPUT, s->path, 0, s->base,
					  "a single JSON value (one event or top-level entry) larger than the "
					  "%zu MiB window limit of the reader (WINDOW_MAX)", (size_t)WINDOW_MAX >> 20);
		if (refill(s, mark) < 0)
			return s->e ? s->e->code : AORTA_EINPUT;
		p = s->buf;
		st = P_OK;
	}
}

static size_t window_bytes(void)
{
	const char *w = getenv("AORTA_KINETO_WINDOW");
	long v = w ? atol(w) : 0;

	if (v >= 16 && (size_t)v <= WINDOW_MAX)
		return (size_t)v;
	return WINDOW_BYTES;
}

static enum aorta_status run_scan(struct kscan *s, const struct ingest_opts *o,
				  struct trace_set *out)
{
	enum aorta_status st;
	struct aorta_error local;

	if (!s->e)
		s->e = &local;
	s->cap = window_bytes();
	s->nofast = getenv("AORTA_KINETO_NOFAST") != NULL;
	if (!s->z && !getenv("AORTA_KINETO_WINDOW") && s->mem_len + 1 < s->cap)
		s->cap = s->mem_len < 4096 ? 4096 : s->mem_len + 1; /* whole buffer at once */
	s->buf = xmalloc(s->cap + PAD);
	s->end = s->buf;
	s->rank = s->world_size = -1;
	s->t = trace_new(s->path, "kineto");
	st = scan_all(s);
	if (st == AORTA_OK && !s->seen_events_key)
		st = aorta_fail(s->e, AORTA_EINPUT, s->path, 0, -1,
				"no 'traceEvents' array: not a kineto trace");
	else if (st == AORTA_OK && s->nelem == 0)
		st = aorta_fail(s->e, AORTA_EINPUT, s->path, 0, -1, "no trace events");
	free(s->buf);
	free(s->scratch);
	if (st != AORTA_OK) {
		free(s->waits);
		free(s->recs);
		trace_free(s->t);
		for (int i = 0; i < s->nmore; i++)
			trace_free(s->more[i]);
		return st;
	}
	struct trace *t = s->t;
	/* the host side (launches, steps) is the process's: every device's
	 * timeline gets a copy, to resolve its launches and steps; ranks of
	 * the other devices stay unknown (analysis numbers them after the
	 * known ones), the host event count stays with the first */
	for (int i = 0; i < s->nmore; i++) {
		struct trace *d = s->more[i];
		for (size_t k = 0; k < t->nlaunch; k++)
			trace_add_launch_tid(d, t->launch[k].corr, t->launch[k].start_ns, t->launch[k].end_ns,
					     t->launch[k].tid);
		for (size_t k = 0; k < t->nhcoll; k++) {
			const struct host_coll *h = &t->hcoll[k];
			const char *hn = strtab_get(&t->names, h->name);
			struct coll_meta m = h->m; /* its names are t's: interned again in d */
#define RENAME(f) m.f = h->m.f ? strtab_intern(&d->names, strtab_get(&t->names, h->m.f), \
					       strlen(strtab_get(&t->names, h->m.f))) : 0
			RENAME(coll_name);
			RENAME(dtype);
			RENAME(pg_name);
			RENAME(pg_desc);
			RENAME(pg_ranks);
			RENAME(host_op);
#undef RENAME
			trace_add_host_coll(d, h->tid, h->start_ns, h->end_ns, hn, strlen(hn), &m);
		}
		for (size_t k = 0; k < t->nhsync; k++)
			trace_add_host_sync(d, t->hsync[k].start_ns, t->hsync[k].end_ns);
		for (size_t k = 0; k < t->nsteps; k++)
			trace_add_step(d, t->steps[k].number, t->steps[k].start_ns, t->steps[k].end_ns);
		for (size_t k = 0; k < t->ngsteps; k++)
			trace_add_gpu_step(d, t->gsteps[k].number, t->gsteps[k].start_ns, t->gsteps[k].end_ns);
		d->world_size = s->world_size;
		d->pid = t->pid;
		memcpy(d->host, s->host, sizeof(d->host));
	}
	memcpy(t->host, s->host, sizeof(t->host));
	t->rank = s->rank >= 0 ? s->rank : (o && !s->nmore ? o->rank_hint : -1);
	t->world_size = s->world_size;
	kineto_finish_waits(s->waits, s->nwait, s->recs, s->nrec, t, o);
	trace_set_add(out, t);
	for (int i = 0; i < s->nmore; i++) {
		kineto_finish_waits(s->waits, s->nwait, s->recs, s->nrec, s->more[i], o);
		trace_set_add(out, s->more[i]);
	}
	free(s->waits);
	free(s->recs);
	return AORTA_OK;
}

enum aorta_status ingest_kineto(const char *path, const struct ingest_opts *o,
				struct trace_set *out, struct aorta_error *e)
{
	struct kscan s;
	enum aorta_status st;

	memset(&s, 0, sizeof(s));
	s.path = path;
	s.e = e;
	st = ingest_stream_open(path, o, &s.z, e);
	if (st != AORTA_OK)
		return st;
	st = run_scan(&s, o, out);
	ingest_stream_close(o, s.z);
	return st;
}

enum aorta_status ingest_kineto_mem(const char *path, const void *buf, size_t len,
				    const struct ingest_opts *o, struct trace_set *out,
				    struct aorta_error *e)
{
	struct kscan s;

	memset(&s, 0, sizeof(s));
	s.path = path ? path : "<memory>";
	s.e = e;
	s.mem = buf;
	s.mem_len = buf ? len : 0;
	return run_scan(&s, o, out);
}
