/*
 * steps.c - the per-step column store (steps.h): building it from whole
 * rows, reading a row back, checking a received one.
 *
 * A column of integers is kept above its smallest value in the fewest
 * bytes its range needs.  A column of doubles is tried as decimals first:
 * the smallest power of ten 10^e (e <= 15) such that every value v is
 * m / 10^e for an integer m below 2^50 (the division of two exact doubles
 * is correctly rounded, so (double)m / 10^e == v, compared bit for bit, is
 * a proof, and it stays true for every larger e: m * 10 / 10^(e+1) is the
 * same rational).  A value 30.123456 read from JSONL is m = 30123456, e = 6.
 * Where that fails (a NaN, a -0.0, a sum with a long binary tail), the
 * column keeps the values' bit patterns above the smallest; whichever of
 * the two is narrower is kept.
 */
#include "overlap/steps.h"

#include <math.h>
#include <stdlib.h>

#include "base/error.h"

const double STEPS_P10[16] = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15 };

#define DEC_MAX 0x1p50 /* |m| below this: x * 10^e is within 1/4 of m, llround finds it */

static int is_dbl(int c)
{
	return c >= SC_REC && c < SC_COLL;
}

static int64_t row_int(const struct step_row *r, int c)
{
	if (c < SC_NFIG)
		return ((const int64_t *)&r->f)[c];
	if (c == SC_HB)
		return r->host_bound;
	return r->coll[c - SC_COLL];
}

static uint64_t dbl_bits(double d)
{
	uint64_t b;
	memcpy(&b, &d, sizeof(b));
	return b;
}

static unsigned width_of(uint64_t range)
{
	unsigned w = 0;
	while (w < 8 && range >> (8 * w))
		w++;
	return w;
}

/* The decimal form of a double column, value by value: the smallest power
 * 10^e that makes every value so far m / 10^e, and the range of the m. */
struct dec {
	unsigned e;
	int ok;
	int64_t lo, hi;
};

static void dec_add(struct dec *d, double x, int first)
{
	for (;;) {
		double y = x * STEPS_P10[d->e];
		if (!(fabs(y) < DEC_MAX)) { /* NaN, infinite, or too many digits */
			d->ok = 0;
			return;
		}
		int64_t m = llround(y);
		if (dbl_bits((double)m / STEPS_P10[d->e]) == dbl_bits(x)) {
			d->lo = first || m < d->lo ? m : d->lo;
			d->hi = first || m > d->hi ? m : d->hi;
			return;
		}
		if (++d->e >= sizeof(STEPS_P10) / sizeof(STEPS_P10[0])) {
			d->ok = 0;
			return;
		}
		if (!first) { /* the earlier mantissas at the next power */
			d->lo *= 10;
			d->hi *= 10;
			if (!((double)llabs(d->lo) < DEC_MAX && (double)llabs(d->hi) < DEC_MAX)) {
				d->ok = 0;
				return;
			}
		}
	}
}

/* The columns' descriptions from the rows (no data written), row by row:
 * the rows are read three times, not once per column. */
static void describe(struct step_col *col, const struct step_row *rows, size_t n)
{
	uint64_t lo[SC__N], hi[SC__N]; /* integers offset by 2^63; doubles' bits */
	memset(col, 0, SC__N * sizeof(*col));
	for (int q = 0; q < SR__COUNT; q++)
		col[SC_REC + q].kind = SC_BITS;
	if (!n)
		return;
	for (int c = 0; c < SC__N; c++)
		lo[c] = UINT64_MAX, hi[c] = 0;
	for (size_t k = 0; k < n; k++) {
		const struct step_row *r = &rows[k];
		for (int c = 0; c < SC__N; c++) {
			uint64_t v = is_dbl(c) ? dbl_bits(r->rec[c - SC_REC]) : (uint64_t)row_int(r, c) ^ (UINT64_C(1) << 63);
			lo[c] = v < lo[c] ? v : lo[c];
			hi[c] = v > hi[c] ? v : hi[c];
		}
	}
	struct dec d[SR__COUNT];
	for (int q = 0; q < SR__COUNT; q++)
		d[q] = (struct dec){ 0, lo[SC_REC + q] != hi[SC_REC + q], 0, 0 };
	for (size_t k = 0; k < n; k++)
		for (int q = 0; q < SR__COUNT; q++)
			if (d[q].ok)
				dec_add(&d[q], rows[k].rec[q], !k);
	for (int c = 0; c < SC__N; c++) {
		struct step_col *x = &col[c];
		x->width = (uint8_t)width_of(hi[c] - lo[c]);
		x->base = (int64_t)(is_dbl(c) ? lo[c] : lo[c] ^ (UINT64_C(1) << 63));
		const struct dec *dq = is_dbl(c) ? &d[c - SC_REC] : NULL;
		if (dq && dq->ok && width_of((uint64_t)dq->hi - (uint64_t)dq->lo) < x->width) {
			x->kind = SC_DEC;
			x->exp = (uint8_t)dq->e;
			x->base = dq->lo;
			x->width = (uint8_t)width_of((uint64_t)dq->hi - (uint64_t)dq->lo);
		}
	}
	struct step_col *ex = &col[SC_REC + SR_EXPOSED];
	size_t k = 0;
	if (ex->width) /* the reader's max(comm - overlap, 0) in every step: nothing to store */
		for (; k < n; k++)
			if (dbl_bits(rows[k].rec[SR_EXPOSED]) !=
			    dbl_bits(rec_exposed(rows[k].rec[SR_COMM], rows[k].rec[SR_OVERLAP])))
				break;
	if (ex->width && k == n)
		*ex = (struct step_col){ .kind = SC_EXPOSED };
}

static uint64_t stored(const struct step_col *c, const struct step_row *r, int col)
{
	if (!is_dbl(col))
		return (uint64_t)row_int(r, col) - (uint64_t)c->base;
	double x = r->rec[col - SC_REC];
	if (c->kind == SC_DEC)
		return (uint64_t)llround(x * STEPS_P10[c->exp]) - (uint64_t)c->base;
	return dbl_bits(x) - (uint64_t)c->base;
}

void steps_store_build(struct step_store *s, const struct step_row *rows, size_t n)
{
	size_t len = 0;
	int kept[SC__N], nk = 0;
	steps_store_release(s);
	describe(s->col, rows, n);
	for (int c = 0; c < SC__N; c++) {
		s->col[c].off = len;
		len += n * s->col[c].width;
		if (s->col[c].width)
			kept[nk++] = c;
	}
	if (!len)
		return;
	s->ndata = len + sizeof(uint64_t);
	s->data = xcalloc(s->ndata, 1);
	for (size_t k = 0; k < n; k++)
		for (int q = 0; q < nk; q++) {
			const struct step_col *d = &s->col[kept[q]];
			uint64_t u = stored(d, &rows[k], kept[q]);
			unsigned char *p = s->data + d->off + k * d->width;
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
			u = __builtin_bswap64(u);
			memcpy(p, (const unsigned char *)&u + 8 - d->width, d->width);
#else
			memcpy(p, &u, d->width);
#endif
		}
}

void steps_store_release(struct step_store *s)
{
	free(s->data);
	memset(s, 0, sizeof(*s));
}

int steps_store_valid(const struct step_store *s, size_t n)
{
	size_t len = 0;
	for (int c = 0; c < SC__N; c++) {
		const struct step_col *d = &s->col[c];
		if (d->width > 8 || d->kind > SC_EXPOSED || d->exp >= sizeof(STEPS_P10) / sizeof(STEPS_P10[0]) ||
		    (d->kind != SC_INT) != is_dbl(c) || d->off != len ||
		    (d->kind == SC_EXPOSED && (c != SC_REC + SR_EXPOSED || d->width)))
			return 0;
		len += n * d->width;
	}
	return len ? s->data && s->ndata == len + sizeof(uint64_t) : s->ndata == 0;
}

size_t steps_store_width(const struct step_store *s)
{
	size_t w = 0;
	for (int c = 0; c < SC__N; c++)
		w += s->col[c].width;
	return w;
}

void steps_store_get(const struct step_store *s, size_t k, struct step_row *out)
{
	for (int c = 0; c < SC_NFIG; c++)
		((int64_t *)&out->f)[c] = steps_int(s, k, c);
	out->host_bound = (int)steps_int(s, k, SC_HB);
	for (int q = 0; q < SR__COUNT; q++)
		out->rec[q] = steps_dbl(s, k, SC_REC + q);
	for (int c = 0; c < 2 * COLL__COUNT; c++)
		out->coll[c] = steps_int(s, k, SC_COLL + c);
}
