/*
 * steps.h - a rank's per-step figures, stored narrow and read back exact.
 *
 * A step has 44 values besides its number and window: the 14 scalar
 * figures (struct ov_step_figures), host-bound, the 11 figures the input
 * recorded (JSONL) and the 2 x 9 per-collective times.  Most are small or
 * the same in every step (a 30 ms step's figures fit 4 bytes; a JSONL run
 * has no host wait, a DDP run no reduce-scatter), so a rank keeps them by
 * column (struct step_store): column c holds its n values in col[c].width
 * bytes each, above col[c].base (frame of reference; width 0: every value
 * is base).  Doubles are kept as the decimals they were read from when
 * that is exact: value = (base + u) / 10^exp, checked to give the same bits
 * for every value when the column is built, else as their bit patterns
 * above the smallest; the recorded exposed time, where every step's is
 * rec_exposed() of its recorded comm and overlap, as that formula.
 * Nothing is rounded: every accessor returns the value the engine
 * computed or the input gave, to the bit.
 *
 * Cost: the figures of 640,000 upstream JSONL steps (bench/report_speed)
 * take 19 MB (29 bytes a step) instead of 146 + 20; building is three
 * passes over the rank's rows when its analysis ends, reading a value one
 * masked load (a division for a decimal).
 *
 * Ownership: struct step_store owns data (steps_store_release frees it);
 * rows handed to steps_store_build are the caller's.  Thread-safe as far
 * as each store is one thread's while it is built.
 */
#ifndef AORTA_STEPS_H
#define AORTA_STEPS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "overlap/engine.h"
#include "timeline/timeline.h"

/* One step's values, whole: what steps_store_build takes and
 * steps_store_get gives back. */
struct step_row {
	struct ov_step_figures f;
	int64_t coll[2 * COLL__COUNT]; /* ov_figures' coll_ns, then coll_exposed_ns */
	int host_bound;                /* 0 or 1 */
	double rec[SR__COUNT];         /* figures the input recorded (JSONL); NaN if none */
};

/* Columns: the scalar figures in struct order, host-bound, the recorded
 * figures (enum step_rec), the per-collective times. */
enum {
	SC_NFIG = sizeof(struct ov_step_figures) / sizeof(int64_t),
	SC_HB = SC_NFIG,
	SC_REC = SC_HB + 1,
	SC_COLL = SC_REC + SR__COUNT,
	SC__N = SC_COLL + 2 * COLL__COUNT
};
/* int64 above base; decimal; a double's bits above base; the recorded
 * exposed time as rec_exposed() of the recorded comm and overlap (nothing
 * stored: every step's value was that, to the bit) */
enum { SC_INT, SC_DEC, SC_BITS, SC_EXPOSED };

struct step_col {
	int64_t base;      /* SC_INT: the smallest value; SC_DEC: the smallest mantissa;
			    * SC_BITS: the smallest bit pattern (as uint64) */
	size_t off;        /* where the column's values start in data */
	uint8_t width;     /* bytes a value, 0..8 (0: every value is base) */
	uint8_t kind;      /* SC_INT, SC_DEC, SC_BITS, SC_EXPOSED */
	uint8_t exp;       /* SC_DEC: the power of ten, 0..15 */
};

struct step_store {
	struct step_col col[SC__N];
	unsigned char *data;  /* the columns one after the other, 8 bytes of padding after */
	size_t ndata;         /* its length, padding included (0 when nothing is stored) */
};

/* Builds s from rows[0..n) (s's old data is freed). */
void steps_store_build(struct step_store *s, const struct step_row *rows, size_t n);
void steps_store_release(struct step_store *s);
/* Whether s's columns are consistent with n steps and its data (a store
 * received from elsewhere, pack.c). */
int steps_store_valid(const struct step_store *s, size_t n);
/* Bytes the columns take a step (for the record). */
size_t steps_store_width(const struct step_store *s);

extern const double STEPS_P10[16];

static inline uint64_t steps_load(const struct step_store *s, const struct step_col *c, size_t k)
{
	uint64_t v;
	memcpy(&v, s->data + c->off + k * c->width, sizeof(v)); /* padded: 8 bytes are there */
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return c->width == 8 ? v : v & ((UINT64_C(1) << (8 * c->width)) - 1);
}

/* Value k of an integer column. */
static inline int64_t steps_int(const struct step_store *s, size_t k, int col)
{
	const struct step_col *c = &s->col[col];
	if (!c->width)
		return c->base;
	return (int64_t)((uint64_t)c->base + steps_load(s, c, k));
}

/* Value k of a double column. */
static inline double steps_dbl(const struct step_store *s, size_t k, int col)
{
	const struct step_col *c = &s->col[col];
	if (c->kind == SC_EXPOSED)
		return rec_exposed(steps_dbl(s, k, SC_REC + SR_COMM), steps_dbl(s, k, SC_REC + SR_OVERLAP));
	uint64_t u = c->width ? steps_load(s, c, k) : 0;
	if (c->kind == SC_DEC)
		return (double)(int64_t)((uint64_t)c->base + u) / STEPS_P10[c->exp];
	uint64_t b = (uint64_t)c->base + u;
	double d;
	memcpy(&d, &b, sizeof(d));
	return d;
}

/* Step k's values, whole. */
void steps_store_get(const struct step_store *s, size_t k, struct step_row *out);

#endif
