/*
 * test_ops_cpu.c - the CPU reference ops (src/train/ops_cpu.c) against
 * hand-computed values and independent naive implementations, and every
 * backward against central finite differences.
 *
 * Finite differences: for an op y = f(inputs) and a fixed random r, the
 * scalar L = sum_i r_i y_i (in double) has dL/dinput = op_bwd(dy = r).  Each
 * input element is perturbed by +-eps (eps 1e-3, the step actually taken in
 * float is used) and (L+ - L-) / (2 h) is compared with the analytic
 * gradient under |a - n| <= 1e-2 max(|a|, |n|) + atol, atol set just above
 * the fp32 rounding noise of L / (2 eps).
 */
#include "testing.h"
#include "kernels/ops.h"
#include "kernels/rng.h"

#include <stdint.h>

/* ---- helpers ----------------------------------------------------------- */

static uint64_t g_seed = 1234;

/* Uniform in [lo, hi) from the shared counter RNG (site 77). */
static void fill_uniform(float *x, size_t n, float lo, float hi)
{
	for (size_t i = 0; i < n; i++)
		x[i] = lo + (hi - lo) * rng_uniform(g_seed, 77, i);
	g_seed++;
}

static float *falloc(size_t n)
{
	float *p = calloc(n ? n : 1, sizeof(float));
	if (!p)
		abort();
	return p;
}

/* A scalar function of the op's inputs, evaluated through a closure. */
typedef double (*loss_fn)(void *ctx);

/* sum_i r_i y_i in double */
static double dotd(const float *r, const float *y, size_t n)
{
	double s = 0.0;
	for (size_t i = 0; i < n; i++)
		s += (double)r[i] * y[i];
	return s;
}

/* Checks analytic[i] against central differences of f w.r.t. x[i], i < n.
 * Returns the number of mismatches; *maxrel gets the largest
 * |a - n| / max(|a|, |n|, atol). */
static int fd_check(loss_fn f, void *ctx, float *x, const float *analytic, size_t n, double atol,
		    double *maxrel)
{
	const float eps = 1e-3f;
	int bad = 0;
	for (size_t i = 0; i < n; i++) {
		float x0 = x[i];
		x[i] = x0 + eps;
		float hp = x[i] - x0;
		double lp = f(ctx);
		x[i] = x0 - eps;
		float hm = x0 - x[i];
		double lm = f(ctx);
		x[i] = x0;
		double num = (lp - lm) / ((double)hp + (double)hm);
		double a = analytic[i];
		double diff = fabs(a - num), scale = fmax(fabs(a), fabs(num));
		double rel = diff / fmax(scale, atol);
		if (rel > *maxrel)
			*maxrel = rel;
		if (diff > 1e-2 * scale + atol) {
			if (bad < 5)
				fprintf(stderr, "    element %zu: analytic %.7g numeric %.7g\n", i, a, num);
			bad++;
		}
	}
	return bad;
}

/* ---- linear -------------------------------------------------------------- */

static void naive_linear(double *y, const float *x, const float *W, const float *b, int n, int in, int out)
{
	for (int r = 0; r < n; r++)
		for (int o = 0; o < out; o++) {
			double s = b ? b[o] : 0.0;
			for (int i = 0; i < in; i++)
				s += (double)x[r * in + i] * W[o * in + i];
			y[r * out + o] = s;
		}
}

static void test_linear_fwd_3x4_hand_values(void)
{
	/* x [3][4], W [2][4] (out 2), b [2]; y[n][o] = b[o] + x[n] . W[o] */
	const float x[12] = { 1, 2, 3, 4, 0, -1, 2, 0.5f, -2, 1, 0, 3 };
	const float W[8] = { 1, 0, -1, 2, 0.5f, 0.5f, 0.5f, 0.5f };
	const float b[2] = { 0.25f, -1 };
	/* row0: 1-3+8=6 +.25 ; 0.5*10=5 -1 | row1: -2+1=-1 +.25 ; .5*1.5=.75 -1
	 * row2: -2+6=4 +.25 ; .5*2=1 -1 */
	const float want[6] = { 6.25f, 4.0f, -0.75f, -0.25f, 4.25f, 0.0f };
	float y[6];
	cpu_linear_fwd(y, x, W, b, 3, 4, 2);
	for (int i = 0; i < 6; i++)
		CHECK_NEAR(y[i], want[i], 1e-6);
	cpu_linear_fwd(y, x, W, NULL, 3, 4, 2); /* no bias */
	CHECK_NEAR(y[0], 6.0, 1e-6);
	CHECK_NEAR(y[5], 1.0, 1e-6);
}

/* Sizes that exercise every path of the blocked kernel: row leftovers,
 * k leftovers, column tails, and more than one k and column tile. */
static void test_linear_fwd_matches_triple_loop(void)
{
	const int shapes[][3] = { { 7, 13, 9 }, { 9, 300, 270 }, { 4, 4, 8 }, { 1, 1, 1 }, { 5, 513, 3 } };
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		int n = shapes[s][0], in = shapes[s][1], out = shapes[s][2];
		float *x = falloc((size_t)n * in), *W = falloc((size_t)out * in), *b = falloc(out);
		float *y = falloc((size_t)n * out);
		double *ref = calloc((size_t)n * out, sizeof(double));
		fill_uniform(x, (size_t)n * in, -1, 1);
		fill_uniform(W, (size_t)out * in, -1, 1);
		fill_uniform(b, out, -1, 1);
		cpu_linear_fwd(y, x, W, b, n, in, out);
		naive_linear(ref, x, W, b, n, in, out);
		for (int i = 0; i < n * out; i++)
			CHECK_NEAR(y[i], ref[i], 1e-5 * (1.0 + fabs(ref[i])) * sqrt((double)in));
		free(x), free(W), free(b), free(y), free(ref);
	}
}

static void test_linear_bwd_matches_triple_loop(void)
{
	int n = 6, in = 11, out = 5;
	float *x = falloc(n * in), *W = falloc(out * in), *dy = falloc(n * out);
	float *dx = falloc(n * in), *dW = falloc(out * in), *db = falloc(out);
	fill_uniform(x, n * in, -1, 1);
	fill_uniform(W, out * in, -1, 1);
	fill_uniform(dy, n * out, -1, 1);
	for (int i = 0; i < out * in; i++)
		dW[i] = 0.5f; /* accumulates onto existing values */
	for (int o = 0; o < out; o++)
		db[o] = -1.0f;
	for (int i = 0; i < n * in; i++)
		dx[i] = 99.0f; /* overwritten */
	cpu_linear_bwd(dx, dW, db, dy, x, W, n, in, out);
	for (int r = 0; r < n; r++)
		for (int i = 0; i < in; i++) {
			double s = 0;
			for (int o = 0; o < out; o++)
				s += (double)dy[r * out + o] * W[o * in + i];
			CHECK_NEAR(dx[r * in + i], s, 1e-5);
		}
	for (int o = 0; o < out; o++) {
		double sb = -1.0;
		for (int i = 0; i < in; i++) {
			double s = 0.5;
			for (int r = 0; r < n; r++)
				s += (double)dy[r * out + o] * x[r * in + i];
			CHECK_NEAR(dW[o * in + i], s, 1e-5);
		}
		for (int r = 0; r < n; r++)
			sb += dy[r * out + o];
		CHECK_NEAR(db[o], sb, 1e-5);
	}
	/* dx == NULL and db == NULL are allowed */
	cpu_linear_bwd(NULL, dW, NULL, dy, x, W, n, in, out);
	free(x), free(W), free(dy), free(dx), free(dW), free(db);
}

struct lin_ctx {
	int n, in, out;
	float *x, *W, *b, *y, *r;
};

static double lin_loss(void *c)
{
	struct lin_ctx *k = c;
	cpu_linear_fwd(k->y, k->x, k->W, k->b, k->n, k->in, k->out);
	return dotd(k->r, k->y, (size_t)k->n * k->out);
}

static void test_linear_bwd_finite_differences(void)
{
	struct lin_ctx k = { .n = 5, .in = 7, .out = 6 };
	k.x = falloc(k.n * k.in), k.W = falloc(k.out * k.in), k.b = falloc(k.out);
	k.y = falloc(k.n * k.out), k.r = falloc(k.n * k.out);
	fill_uniform(k.x, k.n * k.in, -1, 1);
	fill_uniform(k.W, k.out * k.in, -1, 1);
	fill_uniform(k.b, k.out, -1, 1);
	fill_uniform(k.r, k.n * k.out, -1, 1);
	float *dx = falloc(k.n * k.in), *dW = falloc(k.out * k.in), *db = falloc(k.out);
	cpu_linear_bwd(dx, dW, db, k.r, k.x, k.W, k.n, k.in, k.out);
	double mr = 0;
	CHECK_EQ_I(fd_check(lin_loss, &k, k.x, dx, k.n * k.in, 1e-3, &mr), 0);
	CHECK_EQ_I(fd_check(lin_loss, &k, k.W, dW, k.out * k.in, 1e-3, &mr), 0);
	CHECK_EQ_I(fd_check(lin_loss, &k, k.b, db, k.out, 1e-3, &mr), 0);
	free(k.x), free(k.W), free(k.b), free(k.y), free(k.r), free(dx), free(dW), free(db);
}

/* ---- embedding bag ------------------------------------------------------- */

static void test_embbag_mean_hand_values_and_bwd(void)
{
	/* table [4][2]; two bags of 3 ids */
	const float table[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	const int32_t ids[6] = { 0, 1, 3, 2, 2, 2 };
	float out[4];
	cpu_embbag_mean_fwd(out, table, ids, 2, 3, 2);
	CHECK_NEAR(out[0], (1 + 3 + 7) / 3.0, 1e-6);
	CHECK_NEAR(out[1], (2 + 4 + 8) / 3.0, 1e-6);
	CHECK_NEAR(out[2], 5.0, 1e-6);
	CHECK_NEAR(out[3], 6.0, 1e-6);
	/* bwd: each occurrence adds dout/S; id 2 appears three times in bag 1 */
	const float dout[4] = { 3, 6, 1, -1 };
	float dt[8] = { 0 };
	dt[0] = 10.0f; /* accumulates */
	cpu_embbag_mean_bwd(dt, dout, ids, 2, 3, 2);
	CHECK_NEAR(dt[0], 11.0, 1e-6);
	CHECK_NEAR(dt[1], 2.0, 1e-6);
	CHECK_NEAR(dt[2], 1.0, 1e-6);
	CHECK_NEAR(dt[3], 2.0, 1e-6);
	CHECK_NEAR(dt[4], 1.0, 1e-6);
	CHECK_NEAR(dt[5], -1.0, 1e-6);
	CHECK_NEAR(dt[6], 1.0, 1e-6);
	CHECK_NEAR(dt[7], 2.0, 1e-6);
}

/* ---- layernorm ----------------------------------------------------------- */

static void test_layernorm_fwd_normalises_rows(void)
{
	int n = 5, c = 37;
	float *x = falloc(n * c), *y = falloc(n * c), *g = falloc(c), *b = falloc(c);
	float mean[5], rstd[5];
	fill_uniform(x, n * c, -3, 5);
	for (int i = 0; i < c; i++)
		g[i] = 1.0f, b[i] = 0.0f;
	cpu_layernorm_fwd(y, mean, rstd, x, g, b, n, c, 1e-5f);
	for (int r = 0; r < n; r++) {
		double s = 0, s2 = 0, xs = 0;
		for (int i = 0; i < c; i++)
			s += y[r * c + i], s2 += (double)y[r * c + i] * y[r * c + i], xs += x[r * c + i];
		CHECK_NEAR(s / c, 0.0, 1e-6);
		CHECK_NEAR(s2 / c, 1.0, 1e-3); /* variance 1 up to eps */
		CHECK_NEAR(mean[r], xs / c, 1e-5);
	}
	/* affine: y = g * xhat + b */
	float *y2 = falloc(n * c);
	fill_uniform(g, c, 0.5f, 2);
	fill_uniform(b, c, -1, 1);
	cpu_layernorm_fwd(y2, mean, rstd, x, g, b, n, c, 1e-5f);
	for (int i = 0; i < n * c; i++)
		CHECK_NEAR(y2[i], g[i % c] * y[i] + b[i % c], 1e-5);
	/* a constant row gives b (variance 0 handled by eps) */
	for (int i = 0; i < c; i++)
		x[i] = 3.0f;
	cpu_layernorm_fwd(y2, mean, rstd, x, g, b, 1, c, 1e-5f);
	CHECK_NEAR(y2[0], b[0], 1e-6);
	free(x), free(y), free(g), free(b), free(y2);
}

struct ln_ctx {
	int n, c;
	float *x, *g, *b, *y, *r, *mean, *rstd;
};

static double ln_loss(void *v)
{
	struct ln_ctx *k = v;
	cpu_layernorm_fwd(k->y, k->mean, k->rstd, k->x, k->g, k->b, k->n, k->c, 1e-5f);
	return dotd(k->r, k->y, (size_t)k->n * k->c);
}

static void test_layernorm_bwd_finite_differences(void)
{
	struct ln_ctx k = { .n = 4, .c = 9 };
	k.x = falloc(k.n * k.c), k.g = falloc(k.c), k.b = falloc(k.c), k.y = falloc(k.n * k.c);
	k.r = falloc(k.n * k.c), k.mean = falloc(k.n), k.rstd = falloc(k.n);
	fill_uniform(k.x, k.n * k.c, -2, 2);
	fill_uniform(k.g, k.c, 0.5f, 1.5f);
	fill_uniform(k.b, k.c, -1, 1);
	fill_uniform(k.r, k.n * k.c, -1, 1);
	ln_loss(&k);
	float *dx = falloc(k.n * k.c), *dg = falloc(k.c), *db = falloc(k.c);
	cpu_layernorm_bwd(dx, dg, db, k.r, k.x, k.mean, k.rstd, k.g, k.n, k.c);
	double mr = 0;
	CHECK_EQ_I(fd_check(ln_loss, &k, k.x, dx, k.n * k.c, 1e-3, &mr), 0);
	CHECK_EQ_I(fd_check(ln_loss, &k, k.g, dg, k.c, 1e-3, &mr), 0);
	CHECK_EQ_I(fd_check(ln_loss, &k, k.b, db, k.c, 1e-3, &mr), 0);
	free(k.x), free(k.g), free(k.b), free(k.y), free(k.r), free(k.mean), free(k.rstd);
	free(dx), free(dg), free(db);
}

/* ---- gelu ---------------------------------------------------------------- */

static void test_gelu_known_points(void)
{
	const float x[5] = { 1.0f, 0.0f, -1.0f, 2.0f, -3.0f };
	/* x * Phi(x): Phi(1) = 0.841344746, Phi(2) = 0.977249868, Phi(-3) = 0.001349898 */
	const double want[5] = { 0.8413447461, 0.0, -0.1586552539, 1.9544997361, -0.0040496970 };
	float y[5];
	cpu_gelu_fwd(y, x, 5);
	for (int i = 0; i < 5; i++)
		CHECK_NEAR(y[i], want[i], 1e-6);
	/* derivative at 0 is Phi(0) = 0.5, at 1 is Phi(1) + phi(1) = 0.841345 + 0.241971 */
	const float dy[2] = { 1.0f, 1.0f }, xs[2] = { 0.0f, 1.0f };
	float dx[2];
	cpu_gelu_bwd(dx, dy, xs, 2);
	CHECK_NEAR(dx[0], 0.5, 1e-6);
	CHECK_NEAR(dx[1], 1.0833154705, 1e-6);
}

struct ew_ctx {
	size_t n;
	float *x, *y, *r;
};

static double gelu_loss(void *v)
{
	struct ew_ctx *k = v;
	cpu_gelu_fwd(k->y, k->x, k->n);
	return dotd(k->r, k->y, k->n);
}

static void test_gelu_bwd_finite_differences(void)
{
	struct ew_ctx k = { .n = 64 };
	k.x = falloc(k.n), k.y = falloc(k.n), k.r = falloc(k.n);
	fill_uniform(k.x, k.n, -4, 4);
	fill_uniform(k.r, k.n, -1, 1);
	float *dx = falloc(k.n);
	cpu_gelu_bwd(dx, k.r, k.x, k.n);
	double mr = 0;
	CHECK_EQ_I(fd_check(gelu_loss, &k, k.x, dx, k.n, 1e-4, &mr), 0);
	free(k.x), free(k.y), free(k.r), free(dx);
}

/* ---- dropout ------------------------------------------------------------- */

static void test_dropout_p0_is_identity(void)
{
	size_t n = 1000;
	float *x = falloc(n), *y = falloc(n);
	fill_uniform(x, n, -1, 1);
	cpu_dropout_fwd(y, x, n, 0.0f, 5, 9);
	CHECK(memcmp(x, y, n * sizeof(float)) == 0);
	cpu_dropout_bwd(y, x, n, 0.0f, 5, 9);
	CHECK(memcmp(x, y, n * sizeof(float)) == 0);
	free(x), free(y);
}

static void test_dropout_half_keeps_half_with_same_mask(void)
{
	size_t n = 20000, kept = 0;
	float *x = falloc(n), *y = falloc(n), *dx = falloc(n), *ones = falloc(n);
	fill_uniform(x, n, 0.5f, 1.5f); /* never zero, so y == 0 means dropped */
	for (size_t i = 0; i < n; i++)
		ones[i] = 1.0f;
	cpu_dropout_fwd(y, x, n, 0.5f, 42, 0x305);
	cpu_dropout_bwd(dx, ones, n, 0.5f, 42, 0x305);
	int mismatch = 0, wrong_scale = 0, wrong_rule = 0;
	for (size_t i = 0; i < n; i++) {
		int k = y[i] != 0.0f;
		kept += (size_t)k;
		if (k != (dx[i] != 0.0f))
			mismatch++;
		if (k && (y[i] != x[i] * 2.0f || dx[i] != 2.0f))
			wrong_scale++;
		if (k != (rng_uniform(42, 0x305, i) >= 0.5f))
			wrong_rule++;
	}
	CHECK(kept > n * 0.48 && kept < n * 0.52);
	CHECK_EQ_I(mismatch, 0);
	CHECK_EQ_I(wrong_scale, 0);
	CHECK_EQ_I(wrong_rule, 0);
	/* another site draws another mask */
	cpu_dropout_fwd(dx, x, n, 0.5f, 42, 0x306);
	CHECK(memcmp(dx, y, n * sizeof(float)) != 0);
	free(x), free(y), free(dx), free(ones);
}

/* ---- attention ----------------------------------------------------------- */

/* Independent double-precision attention (no dropout), written from the
 * definition: per (b, h, t) a softmax over u of q_t . k_u / sqrt(hd). */
static void naive_attention(double *out, double *probs, const float *qkv, int B, int T, int M, int H)
{
	int hd = M / H;
	for (int b = 0; b < B; b++)
		for (int h = 0; h < H; h++)
			for (int t = 0; t < T; t++) {
				double s[64], mx = -1e300, z = 0;
				for (int u = 0; u < T; u++) {
					s[u] = 0;
					for (int j = 0; j < hd; j++)
						s[u] += (double)qkv[(b * T + t) * 3 * M + h * hd + j] *
							qkv[(b * T + u) * 3 * M + M + h * hd + j];
					s[u] /= sqrt((double)hd);
					mx = fmax(mx, s[u]);
				}
				for (int u = 0; u < T; u++)
					z += (s[u] = exp(s[u] - mx));
				for (int u = 0; u < T; u++)
					probs[((b * H + h) * T + t) * T + u] = s[u] / z;
				for (int j = 0; j < hd; j++) {
					double o = 0;
					for (int u = 0; u < T; u++)
						o += s[u] / z * qkv[(b * T + u) * 3 * M + 2 * M + h * hd + j];
					out[(b * T + t) * M + h * hd + j] = o;
				}
			}
}

static void test_attention_fwd_matches_naive_and_rows_sum_to_1(void)
{
	int B = 2, T = 5, M = 8, H = 2;
	float *qkv = falloc(B * T * 3 * M), *out = falloc(B * T * M), *probs = falloc(B * H * T * T);
	double *rout = calloc(B * T * M, sizeof(double)), *rp = calloc(B * H * T * T, sizeof(double));
	fill_uniform(qkv, B * T * 3 * M, -2, 2);
	cpu_attention_fwd(out, probs, qkv, B, T, M, H, 0.0f, 1, 2);
	naive_attention(rout, rp, qkv, B, T, M, H);
	for (int i = 0; i < B * T * M; i++)
		CHECK_NEAR(out[i], rout[i], 1e-5);
	for (int i = 0; i < B * H * T * T; i++)
		CHECK_NEAR(probs[i], rp[i], 1e-6);
	for (int row = 0; row < B * H * T; row++) {
		double s = 0;
		for (int u = 0; u < T; u++)
			s += probs[row * T + u];
		CHECK_NEAR(s, 1.0, 1e-6);
	}
	/* with dropout, probs stay the pre-dropout softmax and out uses the
	 * mask of flat index ((b*H + h)*T + t)*T + u */
	float p = 0.3f;
	float *out2 = falloc(B * T * M), *probs2 = falloc(B * H * T * T);
	cpu_attention_fwd(out2, probs2, qkv, B, T, M, H, p, 11, 22);
	CHECK(memcmp(probs, probs2, B * H * T * T * sizeof(float)) == 0);
	int hd = M / H;
	for (int b = 0; b < B; b++)
		for (int h = 0; h < H; h++)
			for (int t = 0; t < T; t++)
				for (int j = 0; j < hd; j++) {
					double o = 0;
					for (int u = 0; u < T; u++) {
						size_t idx = ((size_t)(b * H + h) * T + t) * T + u;
						if (rng_uniform(11, 22, idx) >= p)
							o += rp[idx] / (1.0 - p) *
							     qkv[(b * T + u) * 3 * M + 2 * M + h * hd + j];
					}
					CHECK_NEAR(out2[(b * T + t) * M + h * hd + j], o, 1e-5);
				}
	free(qkv), free(out), free(probs), free(rout), free(rp), free(out2), free(probs2);
}

struct att_ctx {
	int B, T, M, H;
	float p;
	float *qkv, *out, *probs, *r;
};

static double att_loss(void *v)
{
	struct att_ctx *k = v;
	cpu_attention_fwd(k->out, k->probs, k->qkv, k->B, k->T, k->M, k->H, k->p, 3, 4);
	return dotd(k->r, k->out, (size_t)k->B * k->T * k->M);
}

static void test_attention_bwd_finite_differences(void)
{
	const float ps[2] = { 0.0f, 0.25f };
	for (int pi = 0; pi < 2; pi++) {
		struct att_ctx k = { .B = 2, .T = 4, .M = 6, .H = 2, .p = ps[pi] };
		size_t nq = (size_t)k.B * k.T * 3 * k.M, no = (size_t)k.B * k.T * k.M;
		k.qkv = falloc(nq), k.out = falloc(no), k.probs = falloc(k.B * k.H * k.T * k.T), k.r = falloc(no);
		fill_uniform(k.qkv, nq, -1.5f, 1.5f);
		fill_uniform(k.r, no, -1, 1);
		att_loss(&k);
		float *dqkv = falloc(nq);
		for (size_t i = 0; i < nq; i++)
			dqkv[i] = 123.0f; /* overwritten */
		cpu_attention_bwd(dqkv, k.r, k.qkv, k.probs, k.B, k.T, k.M, k.H, k.p, 3, 4);
		double mr = 0;
		CHECK_EQ_I(fd_check(att_loss, &k, k.qkv, dqkv, nq, 1e-3, &mr), 0);
		free(k.qkv), free(k.out), free(k.probs), free(k.r), free(dqkv);
	}
}

/* ---- add, bce, adamw, sumsq -------------------------------------------- */

static void test_add_in_place(void)
{
	float a[3] = { 1, 2, 3 }, b[3] = { 0.5f, -2, 10 };
	cpu_add(a, a, b, 3);
	CHECK_NEAR(a[0], 1.5, 0);
	CHECK_NEAR(a[1], 0.0, 0);
	CHECK_NEAR(a[2], 13.0, 0);
}

static void test_bce_known_values(void)
{
	/* l0 = 1 * log 2 (z 0, y .5); l1 = 2 * log(1 + e^-2) (z 2, y 1);
	 * l2 = 0.5 * (3 - 0 + log(1 + e^-3)) (z 3, y 0): large positive logit, wrong label */
	const float z[3] = { 0.0f, 2.0f, 3.0f }, y[3] = { 0.5f, 1.0f, 0.0f }, w[3] = { 1.0f, 2.0f, 0.5f };
	double l0 = log(2.0), l1 = 2.0 * log1p(exp(-2.0)), l2 = 0.5 * (3.0 + log1p(exp(-3.0)));
	float dz[3];
	float loss = cpu_bce_fwd_bwd(dz, z, y, w, 3, 4.0f);
	CHECK_NEAR(loss, (l0 + l1 + l2) / 3.0, 1e-6);
	CHECK_NEAR(l0, 0.69314718, 1e-8);
	/* dz = scale * w (sigmoid(z) - y) / n */
	CHECK_NEAR(dz[0], 4.0 * 1.0 * (0.5 - 0.5) / 3.0, 1e-7);
	CHECK_NEAR(dz[1], 4.0 * 2.0 * (1.0 / (1.0 + exp(-2.0)) - 1.0) / 3.0, 1e-6);
	CHECK_NEAR(dz[2], 4.0 * 0.5 * (1.0 / (1.0 + exp(-3.0))) / 3.0, 1e-6);
	/* extreme logits stay finite */
	const float zz[2] = { 100.0f, -100.0f }, yy[2] = { 0.0f, 1.0f }, ww[2] = { 1, 1 };
	loss = cpu_bce_fwd_bwd(dz, zz, yy, ww, 2, 1.0f);
	CHECK_NEAR(loss, 100.0, 1e-4);
	CHECK_NEAR(dz[0], 0.5, 1e-6);
	CHECK_NEAR(dz[1], -0.5, 1e-6);
}

struct bce_ctx {
	float *z, *y, *w, *dz;
	size_t n;
};

static double bce_loss(void *v)
{
	struct bce_ctx *k = v;
	return cpu_bce_fwd_bwd(k->dz, k->z, k->y, k->w, k->n, 1.0f);
}

static void test_bce_bwd_finite_differences(void)
{
	struct bce_ctx k = { .n = 16 };
	k.z = falloc(k.n), k.y = falloc(k.n), k.w = falloc(k.n), k.dz = falloc(k.n);
	fill_uniform(k.z, k.n, -4, 4);
	fill_uniform(k.y, k.n, 0, 1);
	fill_uniform(k.w, k.n, 0.5f, 1.5f);
	float *g = falloc(k.n);
	cpu_bce_fwd_bwd(g, k.z, k.y, k.w, k.n, 1.0f);
	double mr = 0;
	/* the loss is returned in float: rounding noise ~ 3e-8 / 2e-3 */
	CHECK_EQ_I(fd_check(bce_loss, &k, k.z, g, k.n, 1e-4, &mr), 0);
	free(k.z), free(k.y), free(k.w), free(k.dz), free(g);
}

static void test_adamw_one_step_by_hand(void)
{
	/* element 0 at t = 1 from zero moments: g = 0.5 * gscale 2 = 1
	 *   p = 1 - 0.1*0.01*1 = 0.999; m = 0.1, v = 0.001; mhat = vhat^.5 = 1
	 *   p = 0.999 - 0.1 * 1 / (1 + 1e-8) = 0.899
	 * element 1 at t = 1 with g = -0.25*2 = -0.5, p = -2:
	 *   p = -2 + 0.002 = -1.998; m = -0.05, v = 0.00025; mhat = -0.5, vhat = 0.25
	 *   p = -1.998 - 0.1 * (-0.5 / 0.5) = -1.898 */
	float p[2] = { 1.0f, -2.0f }, g[2] = { 0.5f, -0.25f }, m[2] = { 0, 0 }, v[2] = { 0, 0 };
	cpu_adamw(p, g, m, v, 2, 0.1f, 0.9f, 0.999f, 1e-8f, 0.01f, 1, 2.0f);
	CHECK_NEAR(p[0], 0.899, 1e-6);
	CHECK_NEAR(p[1], -1.898, 1e-6);
	CHECK_NEAR(m[0], 0.1, 1e-7);
	CHECK_NEAR(v[0], 0.001, 1e-7); /* (1 - 0.999f) in float */
	/* a later step (t = 3) with existing moments, in double by hand */
	float q[1] = { 0.5f }, gq[1] = { 0.2f }, mq[1] = { 0.05f }, vq[1] = { 0.002f };
	cpu_adamw(q, gq, mq, vq, 1, 1e-3f, 0.9f, 0.98f, 1e-8f, 0.1f, 3, 1.0f);
	double pp = 0.5 - 1e-3 * 0.1 * 0.5;
	double mm = 0.9 * 0.05 + 0.1 * 0.2, vv = 0.98 * 0.002 + 0.02 * 0.04;
	double mh = mm / (1 - pow(0.9, 3)), vh = vv / (1 - pow(0.98, 3));
	pp -= 1e-3 * mh / (sqrt(vh) + 1e-8);
	CHECK_NEAR(mq[0], mm, 1e-7);
	CHECK_NEAR(vq[0], vv, 1e-8);
	CHECK_NEAR(q[0], pp, 1e-7);
}

static void test_sumsq(void)
{
	const float x[4] = { 1, -2, 3, 0.5f };
	CHECK_NEAR(cpu_sumsq(x, 4), 14.25, 0);
	CHECK_NEAR(cpu_sumsq(x, 0), 0.0, 0);
}

int main(void)
{
	TEST(test_linear_fwd_3x4_hand_values);
	TEST(test_linear_fwd_matches_triple_loop);
	TEST(test_linear_bwd_matches_triple_loop);
	TEST(test_linear_bwd_finite_differences);
	TEST(test_embbag_mean_hand_values_and_bwd);
	TEST(test_layernorm_fwd_normalises_rows);
	TEST(test_layernorm_bwd_finite_differences);
	TEST(test_gelu_known_points);
	TEST(test_gelu_bwd_finite_differences);
	TEST(test_dropout_p0_is_identity);
	TEST(test_dropout_half_keeps_half_with_same_mask);
	TEST(test_attention_fwd_matches_naive_and_rows_sum_to_1);
	TEST(test_attention_bwd_finite_differences);
	TEST(test_add_in_place);
	TEST(test_bce_known_values);
	TEST(test_bce_bwd_finite_differences);
	TEST(test_adamw_one_step_by_hand);
	TEST(test_sumsq);
	return test_report();
}
