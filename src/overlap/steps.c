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

/* The decimal form of a double column: its exponent and the range of its
 * mantissas; 0 when some value has none. */
static int dec_form(const struct step_row *rows, size_t n, int col, unsigned *exp, int64_t *lo, int64_t *hi)
{
	unsigned e = 0;
	int64_t mn = INT64_MAX, mx = INT64_MIN;
	for (size_t k = 0; k < n; k++) {
		double x = rows[k].rec[col - SC_REC];
		for (;;) {
			double y = x * STEPS_P10[e];
			if (!(fabs(y) < DEC_MAX))
				return 0; /* NaN, infinite, or too many digits */
			int64_t m = llround(y);
			if (dbl_bits((double)m / STEPS_P10[e]) == dbl_bits(x)) {
				mn = m < mn ? m : mn;
				mx = m > mx ? m : mx;
				break;
			}
			if (++e >= sizeof(STEPS_P10) / sizeof(STEPS_P10[0]))
				return 0;
			if (k) { /* the earlier mantissas at the next power */
				mn *= 10;
				mx *= 10;
				if (!((double)llabs(mn) < DEC_MAX && (double)llabs(mx) < DEC_MAX))
					return 0;
			}
		}
	}
	*exp = e;
	*lo = mn;
	*hi = mx;
	return 1;
}

/* Column col's description from the rows (no data written). */
static struct step_col describe(const struct step_row *rows, size_t n, int col)
{
	struct step_col c = { 0 };
	if (!n)
		return c;
	if (!is_dbl(col)) {
		int64_t mn = INT64_MAX, mx = INT64_MIN;
		for (size_t k = 0; k < n; k++) {
			int64_t v = row_int(&rows[k], col);
			mn = v < mn ? v : mn;
			mx = v > mx ? v : mx;
		}
		c.kind = SC_INT;
		c.base = mn;
		c.width = (uint8_t)width_of((uint64_t)mx - (uint64_t)mn);
		return c;
	}
	uint64_t bmn = UINT64_MAX, bmx = 0;
	for (size_t k = 0; k < n; k++) {
		uint64_t b = dbl_bits(rows[k].rec[col - SC_REC]);
		bmn = b < bmn ? b : bmn;
		bmx = b > bmx ? b : bmx;
	}
	c.kind = SC_BITS;
	c.base = (int64_t)bmn;
	c.width = (uint8_t)width_of(bmx - bmn);
	unsigned e;
	int64_t mn, mx;
	if (c.width && dec_form(rows, n, col, &e, &mn, &mx) && width_of((uint64_t)mx - (uint64_t)mn) < c.width) {
		c.kind = SC_DEC;
		c.exp = (uint8_t)e;
		c.base = mn;
		c.width = (uint8_t)width_of((uint64_t)mx - (uint64_t)mn);
	}
	return c;
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
	steps_store_release(s);
	for (int c = 0; c < SC__N; c++) {
		s->col[c] = describe(rows, n, c);
		s->col[c].off = len;
		len += n * s->col[c].width;
	}
	if (!len)
		return;
	s->ndata = len + sizeof(uint64_t);
	s->data = xcalloc(s->ndata, 1);
	for (int c = 0; c < SC__N; c++) {
		const struct step_col *d = &s->col[c];
		unsigned char *p = s->data + d->off;
		if (!d->width)
			continue;
		for (size_t k = 0; k < n; k++, p += d->width) {
			uint64_t u = stored(d, &rows[k], c);
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
			u = __builtin_bswap64(u);
			memcpy(p, (const unsigned char *)&u + 8 - d->width, d->width);
#else
			memcpy(p, &u, d->width);
#endif
		}
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
		if (d->width > 8 || d->kind > SC_BITS || d->exp >= sizeof(STEPS_P10) / sizeof(STEPS_P10[0]) ||
		    (d->kind != SC_INT) != is_dbl(c) || d->off != len)
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
