/*
 * test_steps.c - the per-step column store (overlap/steps.h): every value
 * read back to the bit, whatever the column holds, in the width worked out
 * by hand; a received store whose columns do not fit its bytes is refused.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "overlap/steps.h"
#include "testing.h"

static uint64_t bits(double d)
{
	uint64_t b;
	memcpy(&b, &d, sizeof(b));
	return b;
}

static int same_row(const struct step_row *a, const struct step_row *b)
{
	if (memcmp(&a->f, &b->f, sizeof(a->f)) || memcmp(a->coll, b->coll, sizeof(a->coll)) ||
	    a->host_bound != b->host_bound)
		return 0;
	for (int q = 0; q < SR__COUNT; q++)
		if (bits(a->rec[q]) != bits(b->rec[q]))
			return 0;
	return 1;
}

static void check_round_trip(const struct step_row *rows, size_t n, struct step_store *s)
{
	memset(s, 0, sizeof(*s));
	steps_store_build(s, rows, n);
	CHECK(steps_store_valid(s, n));
	size_t bad = 0;
	for (size_t k = 0; k < n; k++) {
		struct step_row r;
		steps_store_get(s, k, &r);
		bad += !same_row(&r, &rows[k]);
	}
	CHECK_EQ_I(bad, 0);
}

/* Hand-computed widths: 1000..1255 is one byte above 1000; a constant is
 * none; a column from -2^63 to 2^63-1 is eight; host-bound 0/1 one byte. */
static void test_integer_columns_in_the_bytes_their_range_needs(void)
{
	enum { N = 256 };
	static struct step_row rows[N];
	memset(rows, 0, sizeof(rows));
	for (int k = 0; k < N; k++) {
		rows[k].f.window_ns = 1000 + k;                 /* range 255: 1 byte */
		rows[k].f.busy_ns = 7;                          /* constant: 0 bytes */
		rows[k].f.compute_ns = (int64_t)k * 300;        /* range 76,500: 3 bytes */
		rows[k].f.idle_ns = k % 2 ? INT64_MAX : INT64_MIN; /* 8 bytes */
		rows[k].f.comm_ns = -5 - k;                     /* negative, range 255: 1 byte */
		rows[k].host_bound = k % 3 == 0;
		rows[k].coll[3] = k == 17 ? 1 : 0;              /* one step has it */
		for (int q = 0; q < SR__COUNT; q++)
			rows[k].rec[q] = NAN;                   /* none recorded: constant */
	}
	struct step_store s;
	check_round_trip(rows, N, &s);
	CHECK_EQ_I(s.col[offsetof(struct ov_step_figures, window_ns) / 8].width, 1);
	CHECK_EQ_I(s.col[offsetof(struct ov_step_figures, window_ns) / 8].base, 1000);
	CHECK_EQ_I(s.col[offsetof(struct ov_step_figures, busy_ns) / 8].width, 0);
	CHECK_EQ_I(s.col[offsetof(struct ov_step_figures, compute_ns) / 8].width, 3);
	CHECK_EQ_I(s.col[offsetof(struct ov_step_figures, idle_ns) / 8].width, 8);
	CHECK_EQ_I(s.col[offsetof(struct ov_step_figures, comm_ns) / 8].width, 1);
	CHECK_EQ_I(s.col[offsetof(struct ov_step_figures, comm_ns) / 8].base, -260);
	CHECK_EQ_I(s.col[SC_HB].width, 1);
	CHECK_EQ_I(s.col[SC_COLL + 3].width, 1);
	CHECK_EQ_I(s.col[SC_REC].width, 0);
	CHECK_EQ_I(steps_store_width(&s), 1 + 3 + 8 + 1 + 1 + 1);
	CHECK(isnan(steps_dbl(&s, 5, SC_REC + SR_LOSS)));
	CHECK_EQ_I(steps_int(&s, 17, SC_COLL + 3), 1);
	CHECK_EQ_I(steps_int(&s, 18, SC_COLL + 3), 0);
	steps_store_release(&s);
	CHECK(s.data == NULL);
}

/* Doubles read from decimals are kept as their mantissas: total_ms values
 * 30.000001 .. 30.000200 at e = 6 are m = 30000001 .. 30000200, one byte
 * above 30000001; the loss with 8 decimals, 0.5 .. 0.50000255, one byte
 * too.  A column with a NaN, a -0.0, or a sum with a binary tail
 * (0.1 + 0.2) keeps its bits; a value of 17 digits as well. */
static void test_double_columns_as_decimals_where_exact(void)
{
	enum { N = 200 };
	static struct step_row rows[N];
	memset(rows, 0, sizeof(rows));
	for (int k = 0; k < N; k++) {
		rows[k].rec[SR_STEP] = 30.0 + (k + 1) / 1e6;     /* as strtod reads "30.000001" */
		rows[k].rec[SR_LOSS] = 0.5 + k / 1e8;
		rows[k].rec[SR_COMPUTE] = k == 7 ? NAN : 2.5 * k;
		rows[k].rec[SR_AUX] = k == 9 ? -0.0 : 1.25;
		rows[k].rec[SR_COMM] = k % 2 ? 0.1 + 0.2 : 0.3;
		rows[k].rec[SR_IDLE] = 0.35350197553634644 + k;  /* 17 digits, as upstream writes */
		rows[k].rec[SR_OVERLAP] = k * 1e15;              /* too many digits for 2^50 */
		rows[k].rec[SR_EXPOSED] = k % 2 ? DBL_MIN / 4 : DBL_MAX; /* a subnormal */
		rows[k].rec[SR_AR_OVERLAP] = -1.5 * (k + 1);     /* negative decimals (-1.5 x 0 would be -0.0) */
		rows[k].rec[SR_RS_OVERLAP] = 2.0;
		rows[k].rec[SR_AG_OVERLAP] = 0;
	}
	struct step_store s;
	check_round_trip(rows, N, &s);
	const struct step_col *st = &s.col[SC_REC + SR_STEP], *ls = &s.col[SC_REC + SR_LOSS];
	CHECK_EQ_I(st->kind, SC_DEC);
	CHECK_EQ_I(st->exp, 6);
	CHECK_EQ_I(st->base, 30000001);
	CHECK_EQ_I(st->width, 1);
	CHECK_EQ_I(ls->kind, SC_DEC);
	CHECK_EQ_I(ls->exp, 8);
	CHECK_EQ_I(ls->width, 1);
	CHECK_EQ_I(s.col[SC_REC + SR_AR_OVERLAP].kind, SC_DEC);
	CHECK_EQ_I(s.col[SC_REC + SR_AR_OVERLAP].exp, 1);
	CHECK_EQ_I(s.col[SC_REC + SR_AR_OVERLAP].base, -3000); /* -1.5 x 200 = -300.0 */
	CHECK_EQ_I(s.col[SC_REC + SR_AR_OVERLAP].width, 2);    /* -3000 .. -15 */
	CHECK_EQ_I(s.col[SC_REC + SR_COMPUTE].kind, SC_BITS);
	CHECK_EQ_I(s.col[SC_REC + SR_AUX].kind, SC_BITS);
	CHECK_EQ_I(s.col[SC_REC + SR_COMM].kind, SC_BITS);
	CHECK_EQ_I(s.col[SC_REC + SR_IDLE].kind, SC_BITS);
	CHECK_EQ_I(s.col[SC_REC + SR_EXPOSED].width, 8);
	CHECK_EQ_I(s.col[SC_REC + SR_RS_OVERLAP].width, 0);
	CHECK(bits(steps_dbl(&s, 9, SC_REC + SR_AUX)) == bits(-0.0));
	CHECK(steps_dbl(&s, 1, SC_REC + SR_COMM) == 0.1 + 0.2);
	steps_store_release(&s);
}

/* The recorded exposed time, max(comm - overlap, 0) as the JSONL reader
 * computes it, is not stored when every step's is that to the bit; one
 * step that differs (a saved analysis's rounded value) and it is. */
static void test_exposed_kept_as_its_formula_when_it_is_one(void)
{
	enum { N = 50 };
	static struct step_row rows[N];
	memset(rows, 0, sizeof(rows));
	for (int k = 0; k < N; k++) {
		rows[k].rec[SR_COMM] = 6.0 + k * 0.001;
		rows[k].rec[SR_OVERLAP] = k % 5 ? 3.812345 + k * 0.01 : 7.5; /* some steps overlap it all: 0 */
		rows[k].rec[SR_EXPOSED] = rec_exposed(rows[k].rec[SR_COMM], rows[k].rec[SR_OVERLAP]);
	}
	struct step_store s;
	check_round_trip(rows, N, &s);
	CHECK_EQ_I(s.col[SC_REC + SR_EXPOSED].kind, SC_EXPOSED);
	CHECK_EQ_I(s.col[SC_REC + SR_EXPOSED].width, 0);
	CHECK(steps_dbl(&s, 0, SC_REC + SR_EXPOSED) == 0);
	CHECK(steps_dbl(&s, 1, SC_REC + SR_EXPOSED) == 6.001 - 3.822345);
	steps_store_release(&s);
	rows[17].rec[SR_EXPOSED] = 2.163655; /* as a saved analysis prints it */
	check_round_trip(rows, N, &s);
	CHECK(s.col[SC_REC + SR_EXPOSED].kind != SC_EXPOSED);
	CHECK(s.col[SC_REC + SR_EXPOSED].width > 0);
	CHECK(steps_dbl(&s, 17, SC_REC + SR_EXPOSED) == 2.163655);
	s.col[SC_REC + SR_COMM].kind = SC_EXPOSED; /* only the exposed column may be one */
	CHECK(!steps_store_valid(&s, N));
	steps_store_release(&s);
}

/* No steps, and one step: nothing stored or one value a column. */
static void test_empty_and_single_step(void)
{
	struct step_store s;
	memset(&s, 0, sizeof(s));
	steps_store_build(&s, NULL, 0);
	CHECK(steps_store_valid(&s, 0));
	CHECK_EQ_I(s.ndata, 0);
	struct step_row one;
	memset(&one, 0, sizeof(one));
	one.f.window_ns = 123456789;
	for (int q = 0; q < SR__COUNT; q++)
		one.rec[q] = q + 0.125;
	check_round_trip(&one, 1, &s);
	CHECK_EQ_I(steps_store_width(&s), 0); /* every column is its one value */
	steps_store_release(&s);
}

/* A store from elsewhere (the MPI pack) is checked against its bytes. */
static void test_a_store_that_does_not_fit_its_bytes_is_refused(void)
{
	enum { N = 40 };
	static struct step_row rows[N];
	memset(rows, 0, sizeof(rows));
	for (int k = 0; k < N; k++) {
		rows[k].f.window_ns = 1000000 + 1000 * k;
		rows[k].rec[SR_LOSS] = 1.0 / (k + 1);
	}
	struct step_store s;
	check_round_trip(rows, N, &s);
	CHECK(!steps_store_valid(&s, N + 1)); /* more steps than its bytes hold */
	struct step_col keep = s.col[0];
	s.col[0].width = 9;
	CHECK(!steps_store_valid(&s, N));
	s.col[0] = keep;
	s.col[SC_REC + SR_LOSS].kind = SC_INT; /* a double column read as integers */
	CHECK(!steps_store_valid(&s, N));
	s.col[SC_REC + SR_LOSS].kind = SC_BITS;
	s.ndata--;
	CHECK(!steps_store_valid(&s, N));
	s.ndata++;
	CHECK(steps_store_valid(&s, N));
	steps_store_release(&s);
}

int main(void)
{
	TEST(test_integer_columns_in_the_bytes_their_range_needs);
	TEST(test_double_columns_as_decimals_where_exact);
	TEST(test_exposed_kept_as_its_formula_when_it_is_one);
	TEST(test_empty_and_single_step);
	TEST(test_a_store_that_does_not_fit_its_bytes_is_refused);
	return test_report();
}
