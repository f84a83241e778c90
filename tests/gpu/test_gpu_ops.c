/*
 * test_gpu_ops.c - every gpu_* op against its cpu_* reference on random data,
 * then whole training steps of the model (GPU vs CPU), then step timings.
 *
 * Each check compares by norm-relative error ||gpu - cpu|| / ||cpu|| (NaN
 * never passes) and prints the max absolute error too.  Outputs that an op
 * overwrites are poisoned with NaN first, so an unwritten element fails;
 * outputs an op accumulates into start from the same random values on both
 * sides.  Tolerances: fp32 1e-5 (GEMMs 1e-4), bf16 / fp16 GEMMs 1e-2.
 *
 * Without a CUDA device it prints a skip and exits 0.  Environment:
 *   AORTA_GPU_TEST_DEFAULT_B   samples for the default-dims step check (2)
 *   AORTA_GPU_TEST_BENCH=0     skip the timings
 * Last line: "N passed, N failed, N skipped"; exit 1 when a check failed.
 */
#include "gpu/gpu.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "train/model.h"
#include "train/model_gpu.h"
#include "kernels/ops.h"
#include "kernels/ops_gpu.h"
#include "kernels/rng.h"

static int n_pass, n_fail, n_skip;
static gpuStream_t stream;

#include "cuda_ok.h"

/* ------------------------------------------------------------------------ */
/* helpers                                                                  */
/* ------------------------------------------------------------------------ */

static void *xmal(size_t bytes)
{
	void *p = malloc(bytes ? bytes : 1);
	if (!p) {
		fprintf(stderr, "out of memory\n");
		exit(5);
	}
	return p;
}

static float *hnew(size_t n)
{
	return xmal(n * sizeof(float));
}

static uint64_t seed_ctr = 1000;

/* uniform in [lo, hi), never the same stream twice */
static float *hrand(size_t n, float lo, float hi)
{
	float *x = hnew(n);
	uint64_t s = seed_ctr++;
	for (size_t i = 0; i < n; i++)
		x[i] = lo + (hi - lo) * rng_uniform(s, 0x7e57, i);
	return x;
}

static float *hcopy(const float *x, size_t n)
{
	float *y = hnew(n);
	memcpy(y, x, n * sizeof(float));
	return y;
}

/* device buffer poisoned with NaN */
static float *dnan(size_t n)
{
	float *d;
	CUDA_OK(gpuMalloc((void **)&d, (n ? n : 1) * sizeof(float)));
	CUDA_OK(gpuMemset(d, 0xff, (n ? n : 1) * sizeof(float)));
	return d;
}

static void *dupb(const void *h, size_t bytes)
{
	void *d;
	CUDA_OK(gpuMalloc(&d, bytes ? bytes : 1));
	CUDA_OK(gpuMemcpy(d, h, bytes, gpuMemcpyHostToDevice));
	return d;
}

static float *dup(const float *h, size_t n)
{
	return dupb(h, n * sizeof(float));
}

static void down(float *h, const float *d, size_t n)
{
	CUDA_OK(gpuStreamSynchronize(stream));
	CUDA_OK(gpuMemcpy(h, d, n * sizeof(float), gpuMemcpyDeviceToHost));
}

/* ||a - ref|| / ||ref||, max |a - ref| in *maxabs; NaN anywhere -> NaN */
static double relerr(const float *a, const float *ref, size_t n, double *maxabs)
{
	double num = 0.0, den = 0.0, mx = 0.0;
	for (size_t i = 0; i < n; i++) {
		double d = (double)a[i] - (double)ref[i];
		if (isnan(a[i]) || isnan(ref[i]) || isinf(a[i]))
			mx = NAN;
		num += d * d;
		den += (double)ref[i] * ref[i];
		if (fabs(d) > mx)
			mx = fabs(d);
	}
	if (maxabs)
		*maxabs = mx;
	if (isnan(mx))
		return NAN;
	if (den == 0.0)
		return num == 0.0 ? 0.0 : INFINITY;
	return sqrt(num / den);
}

static void report(const char *name, double err, double maxabs, double tol)
{
	int ok = err <= tol; /* NaN fails */
	printf("%-4s %-52s rel %.3e  maxabs %.3e  (tol %.0e)\n", ok ? "ok" : "FAIL", name, err, maxabs,
	       tol);
	if (ok)
		n_pass++;
	else
		n_fail++;
}

static void cmp(const char *name, const float *gpu_dev, const float *ref, size_t n, double tol)
{
	float *h = hnew(n);
	double mx;
	down(h, gpu_dev, n);
	double e = relerr(h, ref, n, &mx);
	report(name, e, mx, tol);
	free(h);
}

static void ops_check(gpu_ops_ctx *c, const char *where)
{
	char msg[256];
	CUDA_OK(gpuStreamSynchronize(stream));
	if (gpu_ops_last_error(c, msg, sizeof msg)) {
		printf("FAIL %s: %s\n", where, msg);
		n_fail++;
		exit(1);
	}
}

static const char *prec_name(enum gpu_precision p)
{
	return p == PREC_FP32 ? "fp32" : p == PREC_BF16 ? "bf16" : "fp16";
}

/* ------------------------------------------------------------------------ */
/* op tests                                                                 */
/* ------------------------------------------------------------------------ */

static void test_linear(gpu_ops_ctx *c, enum gpu_precision prec, int n, int in, int out)
{
	char name[128];
	double tol = prec == PREC_FP32 ? 1e-4 : 1e-2;
	float *x = hrand((size_t)n * in, -1, 1), *W = hrand((size_t)out * in, -1, 1);
	float *b = hrand((size_t)out, -1, 1), *dy = hrand((size_t)n * out, -1, 1);
	float *dW0 = hrand((size_t)out * in, -1, 1), *db0 = hrand((size_t)out, -1, 1);
	float *y = hnew((size_t)n * out), *dx = hnew((size_t)n * in);
	float *dW = hcopy(dW0, (size_t)out * in), *db = hcopy(db0, (size_t)out);
	float *y2 = hnew((size_t)n * out);
	cpu_linear_fwd(y, x, W, b, n, in, out);
	cpu_linear_fwd(y2, x, W, NULL, n, in, out);
	cpu_linear_bwd(dx, dW, db, dy, x, W, n, in, out);

	float *dx_ = dup(x, (size_t)n * in), *dW_ = dup(W, (size_t)out * in), *db_ = dup(b, (size_t)out);
	float *ddy = dup(dy, (size_t)n * out), *dy_ = dnan((size_t)n * out), *dx2 = dnan((size_t)n * in);
	float *ddW = dup(dW0, (size_t)out * in), *ddb = dup(db0, (size_t)out);
	gpu_linear_fwd(c, dy_, dx_, dW_, db_, n, in, out);
	ops_check(c, "linear_fwd");
	snprintf(name, sizeof name, "linear_fwd %s n%d in%d out%d", prec_name(prec), n, in, out);
	cmp(name, dy_, y, (size_t)n * out, tol);
	gpu_linear_fwd(c, dy_, dx_, dW_, NULL, n, in, out);
	snprintf(name, sizeof name, "linear_fwd nobias %s n%d in%d out%d", prec_name(prec), n, in, out);
	cmp(name, dy_, y2, (size_t)n * out, tol);
	gpu_linear_bwd(c, dx2, ddW, ddb, ddy, dx_, dW_, n, in, out);
	ops_check(c, "linear_bwd");
	snprintf(name, sizeof name, "linear_bwd dx %s n%d in%d out%d", prec_name(prec), n, in, out);
	cmp(name, dx2, dx, (size_t)n * in, tol);
	snprintf(name, sizeof name, "linear_bwd dW+= %s n%d in%d out%d", prec_name(prec), n, in, out);
	cmp(name, ddW, dW, (size_t)out * in, tol);
	snprintf(name, sizeof name, "linear_bwd db+= %s n%d in%d out%d", prec_name(prec), n, in, out);
	cmp(name, ddb, db, (size_t)out, prec == PREC_FP32 ? 1e-5 : 1e-2);

	if (prec == PREC_FP32) {
		/* private extensions: y = y0 + x W^T + b; dx += dy W */
		float *y0 = hrand((size_t)n * out, -1, 1);
		float *ref = hnew((size_t)n * out);
		for (size_t i = 0; i < (size_t)n * out; i++)
			ref[i] = y0[i] + y[i];
		float *dy0 = dup(y0, (size_t)n * out);
		gpu_linear_fwd_ex(c, dy0, dx_, dW_, db_, n, in, out, 1.0f);
		snprintf(name, sizeof name, "linear_fwd_ex beta=1 n%d in%d out%d", n, in, out);
		cmp(name, dy0, ref, (size_t)n * out, tol);
		float *dx0 = hrand((size_t)n * in, -1, 1), *ref2 = hnew((size_t)n * in);
		for (size_t i = 0; i < (size_t)n * in; i++)
			ref2[i] = dx0[i] + dx[i];
		float *ddx0 = dup(dx0, (size_t)n * in);
		gpu_linear_bwd_ex(c, ddx0, NULL, NULL, ddy, dx_, dW_, n, in, out, 1);
		ops_check(c, "linear_bwd_ex");
		snprintf(name, sizeof name, "linear_bwd_ex dx+= n%d in%d out%d", n, in, out);
		cmp(name, ddx0, ref2, (size_t)n * in, tol);
		free(y0);
		free(ref);
		free(dx0);
		free(ref2);
		gpuFree(dy0);
		gpuFree(ddx0);
	}
	free(x); free(W); free(b); free(dy); free(dW0); free(db0); free(y); free(dx); free(dW); free(db);
	free(y2);
	gpuFree(dx_); gpuFree(dW_); gpuFree(db_); gpuFree(ddy); gpuFree(dy_); gpuFree(dx2);
	gpuFree(ddW); gpuFree(ddb);
}

static void test_embbag(gpu_ops_ctx *c, int n, int S, int E, int V)
{
	char name[128];
	int32_t *ids = xmal((size_t)n * S * sizeof(int32_t));
	uint64_t s = seed_ctr++;
	for (size_t i = 0; i < (size_t)n * S; i++)
		ids[i] = (int32_t)(rng_u64(s, 1, i) % (uint64_t)V);
	float *table = hrand((size_t)V * E, -1, 1), *dout = hrand((size_t)n * E, -1, 1);
	float *dt0 = hrand((size_t)V * E, -1, 1), *dt = hcopy(dt0, (size_t)V * E);
	float *out = hnew((size_t)n * E);
	cpu_embbag_mean_fwd(out, table, ids, n, S, E);
	cpu_embbag_mean_bwd(dt, dout, ids, n, S, E);
	int32_t *dids = dupb(ids, (size_t)n * S * sizeof(int32_t));
	float *dtable = dup(table, (size_t)V * E), *ddout = dup(dout, (size_t)n * E);
	float *dout_ = dnan((size_t)n * E), *ddt = dup(dt0, (size_t)V * E);
	gpu_embbag_mean_fwd(c, dout_, dtable, dids, n, S, E);
	gpu_embbag_mean_bwd(c, ddt, ddout, dids, n, S, E);
	ops_check(c, "embbag");
	snprintf(name, sizeof name, "embbag_mean_fwd n%d S%d E%d V%d", n, S, E, V);
	cmp(name, dout_, out, (size_t)n * E, 1e-5);
	snprintf(name, sizeof name, "embbag_mean_bwd dtable+= n%d S%d E%d V%d", n, S, E, V);
	cmp(name, ddt, dt, (size_t)V * E, 1e-5);
	free(ids); free(table); free(dout); free(dt0); free(dt); free(out);
	gpuFree(dids); gpuFree(dtable); gpuFree(ddout); gpuFree(dout_); gpuFree(ddt);
}

static void test_layernorm(gpu_ops_ctx *c, int n, int cd)
{
	char name[128];
	size_t nc = (size_t)n * cd;
	float *x = hrand(nc, -2, 3), *g = hrand((size_t)cd, 0.5f, 1.5f), *b = hrand((size_t)cd, -1, 1);
	float *dy = hrand(nc, -1, 1);
	float *dg0 = hrand((size_t)cd, -1, 1), *db0 = hrand((size_t)cd, -1, 1);
	float *dg = hcopy(dg0, (size_t)cd), *db = hcopy(db0, (size_t)cd);
	float *y = hnew(nc), *mean = hnew((size_t)n), *rstd = hnew((size_t)n), *dx = hnew(nc);
	cpu_layernorm_fwd(y, mean, rstd, x, g, b, n, cd, 1e-5f);
	cpu_layernorm_bwd(dx, dg, db, dy, x, mean, rstd, g, n, cd);
	float *dx_ = dup(x, nc), *dg_ = dup(g, (size_t)cd), *db_ = dup(b, (size_t)cd), *ddy = dup(dy, nc);
	float *dyo = dnan(nc), *dmean = dnan((size_t)n), *drstd = dnan((size_t)n), *ddx = dnan(nc);
	float *ddg = dup(dg0, (size_t)cd), *ddb = dup(db0, (size_t)cd);
	gpu_layernorm_fwd(c, dyo, dmean, drstd, dx_, dg_, db_, n, cd, 1e-5f);
	ops_check(c, "layernorm_fwd");
	snprintf(name, sizeof name, "layernorm_fwd y n%d c%d", n, cd);
	cmp(name, dyo, y, nc, 1e-5);
	snprintf(name, sizeof name, "layernorm_fwd mean n%d c%d", n, cd);
	cmp(name, dmean, mean, (size_t)n, 1e-5);
	snprintf(name, sizeof name, "layernorm_fwd rstd n%d c%d", n, cd);
	cmp(name, drstd, rstd, (size_t)n, 1e-5);
	/* the backward from the CPU's saved statistics, so only the backward is measured */
	float *dmean2 = dup(mean, (size_t)n), *drstd2 = dup(rstd, (size_t)n);
	gpu_layernorm_bwd(c, ddx, ddg, ddb, ddy, dx_, dmean2, drstd2, dg_, n, cd);
	ops_check(c, "layernorm_bwd");
	snprintf(name, sizeof name, "layernorm_bwd dx n%d c%d", n, cd);
	cmp(name, ddx, dx, nc, 1e-5);
	snprintf(name, sizeof name, "layernorm_bwd dg+= n%d c%d", n, cd);
	cmp(name, ddg, dg, (size_t)cd, 1e-5);
	snprintf(name, sizeof name, "layernorm_bwd db+= n%d c%d", n, cd);
	cmp(name, ddb, db, (size_t)cd, 1e-5);

	/* fused: r = res + dropout(a), y = LN(r) */
	float *res = hrand(nc, -1, 1), *r = hnew(nc), *t = hnew(nc);
	cpu_dropout_fwd(t, x, nc, 0.1f, 99, 0x203);
	cpu_add(r, res, t, nc);
	cpu_layernorm_fwd(y, mean, rstd, r, g, b, n, cd, 1e-5f);
	float *dres = dup(res, nc), *dr = dnan(nc);
	gpu_residual_dropout_layernorm_fwd(c, dyo, dr, dmean, drstd, dres, dx_, dg_, db_, n, cd, 1e-5f, 0.1f,
					   99, 0x203);
	ops_check(c, "residual_dropout_layernorm_fwd");
	snprintf(name, sizeof name, "residual_dropout_layernorm_fwd r n%d c%d", n, cd);
	cmp(name, dr, r, nc, 1e-6);
	snprintf(name, sizeof name, "residual_dropout_layernorm_fwd y n%d c%d", n, cd);
	cmp(name, dyo, y, nc, 1e-5);
	free(x); free(g); free(b); free(dy); free(dg0); free(db0); free(dg); free(db); free(y); free(mean);
	free(rstd); free(dx); free(res); free(r); free(t);
	gpuFree(dx_); gpuFree(dg_); gpuFree(db_); gpuFree(ddy); gpuFree(dyo); gpuFree(dmean);
	gpuFree(drstd); gpuFree(ddx); gpuFree(ddg); gpuFree(ddb); gpuFree(dmean2); gpuFree(drstd2);
	gpuFree(dres); gpuFree(dr);
}

static void test_elementwise(gpu_ops_ctx *c, size_t n)
{
	char name[128];
	float *x = hrand(n, -4, 4), *dy = hrand(n, -1, 1), *a = hrand(n, -1, 1);
	float *y = hnew(n), *dx = hnew(n), *t = hnew(n);
	float *dx_ = dup(x, n), *ddy = dup(dy, n), *da = dup(a, n), *o = dnan(n);

	cpu_gelu_fwd(y, x, n);
	gpu_gelu_fwd(c, o, dx_, n);
	snprintf(name, sizeof name, "gelu_fwd n%zu", n);
	cmp(name, o, y, n, 1e-5);
	cpu_gelu_bwd(dx, dy, x, n);
	CUDA_OK(gpuMemset(o, 0xff, n * 4));
	gpu_gelu_bwd(c, o, ddy, dx_, n);
	snprintf(name, sizeof name, "gelu_bwd n%zu", n);
	cmp(name, o, dx, n, 1e-5);

	float ps[2] = { 0.1f, 0.0f };
	for (int k = 0; k < 2; k++) {
		float p = ps[k];
		cpu_dropout_fwd(y, x, n, p, 1234, 0x305);
		CUDA_OK(gpuMemset(o, 0xff, n * 4));
		gpu_dropout_fwd(c, o, dx_, n, p, 1234, 0x305);
		snprintf(name, sizeof name, "dropout_fwd p%.1f n%zu", p, n);
		cmp(name, o, y, n, 1e-6);
		cpu_dropout_bwd(dx, dy, n, p, 1234, 0x305);
		CUDA_OK(gpuMemset(o, 0xff, n * 4));
		gpu_dropout_bwd(c, o, ddy, n, p, 1234, 0x305);
		snprintf(name, sizeof name, "dropout_bwd p%.1f n%zu", p, n);
		cmp(name, o, dx, n, 1e-6);
	}

	cpu_add(y, x, a, n);
	CUDA_OK(gpuMemset(o, 0xff, n * 4));
	gpu_add(c, o, dx_, da, n);
	snprintf(name, sizeof name, "add n%zu", n);
	cmp(name, o, y, n, 1e-6);

	/* fused dropout + gelu' (backward of dropout(gelu(h))) */
	cpu_dropout_bwd(t, dy, n, 0.1f, 77, 0x103);
	cpu_gelu_bwd(dx, t, x, n);
	CUDA_OK(gpuMemset(o, 0xff, n * 4));
	gpu_dropout_gelu_bwd(c, o, ddy, dx_, n, 0.1f, 77, 0x103);
	snprintf(name, sizeof name, "dropout_gelu_bwd n%zu", n);
	cmp(name, o, dx, n, 1e-5);
	ops_check(c, "elementwise");
	free(x); free(dy); free(a); free(y); free(dx); free(t);
	gpuFree(dx_); gpuFree(ddy); gpuFree(da); gpuFree(o);
}

static void test_linear_gelu_dropout(gpu_ops_ctx *c, int n, int in, int out)
{
	char name[128];
	size_t no = (size_t)n * out;
	float *x = hrand((size_t)n * in, -1, 1), *W = hrand((size_t)out * in, -1, 1), *b = hrand((size_t)out, -1, 1);
	float *h = hnew(no), *g = hnew(no), *y = hnew(no);
	cpu_linear_fwd(h, x, W, b, n, in, out);
	cpu_gelu_fwd(g, h, no);
	cpu_dropout_fwd(y, g, no, 0.1f, 5, 0x303);
	float *dx_ = dup(x, (size_t)n * in), *dW = dup(W, (size_t)out * in), *db = dup(b, (size_t)out);
	float *dh = dnan(no), *dy = dnan(no);
	gpu_linear_gelu_dropout_fwd(c, dy, dh, dx_, dW, db, n, in, out, 0.1f, 5, 0x303);
	ops_check(c, "linear_gelu_dropout_fwd");
	snprintf(name, sizeof name, "linear_gelu_dropout_fwd h n%d in%d out%d", n, in, out);
	cmp(name, dh, h, no, 1e-4);
	snprintf(name, sizeof name, "linear_gelu_dropout_fwd y n%d in%d out%d", n, in, out);
	cmp(name, dy, y, no, 1e-4);
	free(x); free(W); free(b); free(h); free(g); free(y);
	gpuFree(dx_); gpuFree(dW); gpuFree(db); gpuFree(dh); gpuFree(dy);
}

static void test_attention(gpu_ops_ctx *c, int B, int T, int M, int H, float p)
{
	char name[128];
	size_t nq = (size_t)B * T * 3 * M, no = (size_t)B * T * M, np = (size_t)B * H * T * T;
	float *qkv = hrand(nq, -2, 2), *dout = hrand(no, -1, 1);
	float *out = hnew(no), *probs = hnew(np), *dqkv = hnew(nq);
	cpu_attention_fwd(out, probs, qkv, B, T, M, H, p, 42, 0x101);
	cpu_attention_bwd(dqkv, dout, qkv, probs, B, T, M, H, p, 42, 0x101);
	float *dq = dup(qkv, nq), *ddo = dup(dout, no), *o = dnan(no), *pr = dnan(np), *dd = dnan(nq);
	gpu_attention_fwd(c, o, pr, dq, B, T, M, H, p, 42, 0x101);
	ops_check(c, "attention_fwd");
	snprintf(name, sizeof name, "attention_fwd out B%d T%d M%d H%d p%.1f", B, T, M, H, p);
	cmp(name, o, out, no, 1e-5);
	snprintf(name, sizeof name, "attention_fwd probs B%d T%d M%d H%d p%.1f", B, T, M, H, p);
	cmp(name, pr, probs, np, 1e-5);
	float *dprobs = dup(probs, np);
	gpu_attention_bwd(c, dd, ddo, dq, dprobs, B, T, M, H, p, 42, 0x101);
	ops_check(c, "attention_bwd");
	snprintf(name, sizeof name, "attention_bwd dqkv B%d T%d M%d H%d p%.1f", B, T, M, H, p);
	cmp(name, dd, dqkv, nq, 1e-5);
	free(qkv); free(dout); free(out); free(probs); free(dqkv);
	gpuFree(dq); gpuFree(ddo); gpuFree(o); gpuFree(pr); gpuFree(dd); gpuFree(dprobs);
}

static void test_bce(gpu_ops_ctx *c, size_t n)
{
	char name[128];
	float *z = hrand(n, -6, 6), *y = hrand(n, 0.01f, 0.99f), *w = hrand(n, 0.5f, 1.5f);
	float *dl = hnew(n);
	float loss = cpu_bce_fwd_bwd(dl, z, y, w, n, 3.0f);
	float *dz = dup(z, n), *dy = dup(y, n), *dw = dup(w, n), *ddl = dnan(n), *dloss = dnan(1);
	gpu_bce_fwd_bwd(c, ddl, dloss, dz, dy, dw, n, 3.0f);
	ops_check(c, "bce");
	snprintf(name, sizeof name, "bce_fwd_bwd dlogits n%zu", n);
	cmp(name, ddl, dl, n, 1e-5);
	snprintf(name, sizeof name, "bce_fwd_bwd loss n%zu", n);
	cmp(name, dloss, &loss, 1, 1e-5);
	free(z); free(y); free(w); free(dl);
	gpuFree(dz); gpuFree(dy); gpuFree(dw); gpuFree(ddl); gpuFree(dloss);
}

static void test_adamw_sumsq(gpu_ops_ctx *c, size_t n, size_t off)
{
	char name[128];
	float *p = hrand(n + off, -1, 1), *g = hrand(n + off, -1, 1), *m = hrand(n + off, -0.1f, 0.1f);
	float *v = hrand(n + off, 0.001f, 0.01f);
	float *dp = dup(p, n + off), *dg = dup(g, n + off), *dm = dup(m, n + off), *dv = dup(v, n + off);
	float gs = 0.37f;
	float *dgs = dup(&gs, 1);
	cpu_adamw(p + off, g + off, m + off, v + off, n, 1e-3f, 0.9f, 0.98f, 1e-8f, 0.01f, 3, gs);
	gpu_adamw(c, dp + off, dg + off, dm + off, dv + off, n, 1e-3f, 0.9f, 0.98f, 1e-8f, 0.01f, 3, dgs);
	ops_check(c, "adamw");
	snprintf(name, sizeof name, "adamw p n%zu off%zu", n, off);
	cmp(name, dp, p, n + off, 1e-6);
	snprintf(name, sizeof name, "adamw m n%zu off%zu", n, off);
	cmp(name, dm, m, n + off, 1e-6);
	snprintf(name, sizeof name, "adamw v n%zu off%zu", n, off);
	cmp(name, dv, v, n + off, 1e-6);

	double ref = cpu_sumsq(g + off, n) + 2.5, got = 0.0;
	double *ds;
	double init = 2.5;
	CUDA_OK(gpuMalloc((void **)&ds, sizeof(double)));
	CUDA_OK(gpuMemcpy(ds, &init, sizeof init, gpuMemcpyHostToDevice));
	gpu_sumsq(c, ds, dg + off, n);
	ops_check(c, "sumsq");
	CUDA_OK(gpuMemcpy(&got, ds, sizeof got, gpuMemcpyDeviceToHost));
	snprintf(name, sizeof name, "sumsq += n%zu off%zu", n, off);
	report(name, fabs(got - ref) / ref, fabs(got - ref), 1e-6);

	/* clip scale: max_norm 1 with unscale 0.5 */
	float *dgsc = dnan(1), hgs;
	gpu_clip_scale(c, dgsc, ds, 1.0f, 0.5f);
	down(&hgs, dgsc, 1);
	double norm = sqrt(ref) * 0.5, want = 0.5 * fmin(1.0, 1.0 / (norm + 1e-6));
	snprintf(name, sizeof name, "clip_scale n%zu", n);
	report(name, fabs(hgs - want) / want, fabs(hgs - want), 1e-6);
	free(p); free(g); free(m); free(v);
	gpuFree(dp); gpuFree(dg); gpuFree(dm); gpuFree(dv); gpuFree(dgs); gpuFree(ds); gpuFree(dgsc);
}

/* ------------------------------------------------------------------------ */
/* whole training step                                                      */
/* ------------------------------------------------------------------------ */

static void test_step(const char *label, const struct model_dims *d, int B, enum gpu_precision prec,
		      double tol_grad, double tol_param)
{
	struct param_layout lay;
	struct aorta_error err;
	char name[160];
	if (layout_init(&lay, d)) {
		printf("FAIL %s: bad dims\n", label);
		n_fail++;
		return;
	}
	size_t tot = lay.total;
	float *p0 = hnew(tot), *pc = hnew(tot), *gc = calloc(tot, sizeof(float));
	float *mc = calloc(tot, sizeof(float)), *vc = calloc(tot, sizeof(float));
	params_init(p0, &lay, d, 7);
	memcpy(pc, p0, tot * sizeof(float));
	struct batch b;
	batch_alloc(&b, d, B);
	batch_fill(&b, d, 42, 100);
	uint64_t dseed = 0x5eed;
	float lr = 1e-3f, max_norm = 1.0f;

	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	float loss_c = cpu_model_forward_backward(d, &lay, pc, gc, &b, dseed, 1, 1.0f, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double norm_c = sqrt(cpu_sumsq(gc, tot));
	float gs = (float)fmin(1.0, max_norm / (norm_c + 1e-6));
	cpu_adamw(pc, gc, mc, vc, tot, lr, 0.9f, 0.98f, 1e-8f, 0.01f, 1, gs);

	struct gpu_model gm;
	int ok = gpu_model_create(&gm, d, &lay, B, prec, stream, &err) == AORTA_OK &&
		 gpu_model_upload_params(&gm, p0, &err) == AORTA_OK &&
		 gpu_model_upload_batch(&gm, &b, NULL, &err) == AORTA_OK &&
		 gpu_model_zero_grad(&gm, &err) == AORTA_OK &&
		 gpu_model_forward_backward(&gm, dseed, 1, 1.0f, &err) == AORTA_OK &&
		 gpu_model_grad_norm_clip(&gm, max_norm, &err) == AORTA_OK &&
		 gpu_model_adamw(&gm, lr, 1, &err) == AORTA_OK;
	float loss_g = NAN;
	double norm_g = NAN;
	float *gg = hnew(tot), *pg = hnew(tot);
	ok = ok && gpu_model_download_loss(&gm, &loss_g, &norm_g, &err) == AORTA_OK &&
	     gpu_model_download_grads(&gm, gg, &err) == AORTA_OK &&
	     gpu_model_download_params(&gm, pg, &err) == AORTA_OK;
	if (!ok) {
		printf("FAIL %s: %s\n", label, err.msg);
		n_fail++;
	} else {
		printf("# %s: %zu params, B %d, cpu fwd+bwd %.2f s, loss cpu %.6f gpu %.6f, norm cpu %.6f gpu %.6f\n",
		       label, tot, B, (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec),
		       loss_c, loss_g, norm_c, norm_g);
		snprintf(name, sizeof name, "step %s loss", label);
		report(name, fabs(loss_g - loss_c) / fabs(loss_c), fabs(loss_g - loss_c), tol_grad);
		snprintf(name, sizeof name, "step %s grad norm", label);
		report(name, fabs(norm_g - norm_c) / norm_c, fabs(norm_g - norm_c), tol_grad);
		double mx, e = relerr(gg, gc, tot, &mx);
		snprintf(name, sizeof name, "step %s grads (all)", label);
		report(name, e, mx, tol_grad);
		/* per group, for diagnosis */
		for (int k = 0; k < lay.ngroups; k++) {
			double gm_ = 0, ge = relerr(gg + lay.group_off[k], gc + lay.group_off[k], lay.group_len[k], &gm_);
			printf("#   group %2d grads rel %.3e maxabs %.3e\n", k, ge, gm_);
		}
		e = relerr(pg, pc, tot, &mx);
		snprintf(name, sizeof name, "step %s params after adamw", label);
		report(name, e, mx, tol_param);
		/* the update itself: (p1 - p0) gpu vs cpu (information only: Adam's
		 * first step is ~lr * sign(g), so tiny gradients can flip) */
		double num = 0, den = 0;
		for (size_t i = 0; i < tot; i++) {
			double dg = (double)pg[i] - p0[i], dc = (double)pc[i] - p0[i];
			num += (dg - dc) * (dg - dc);
			den += dc * dc;
		}
		printf("#   %s update rel err %.3e (information)\n", label, sqrt(num / den));
	}
	gpu_model_release(&gm);
	batch_free(&b);
	layout_release(&lay);
	free(p0); free(pc); free(gc); free(mc); free(vc); free(gg); free(pg);
}

/* ------------------------------------------------------------------------ */
/* timings                                                                  */
/* ------------------------------------------------------------------------ */

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int one_step(struct gpu_model *gm, int step, struct aorta_error *err)
{
	return gpu_model_zero_grad(gm, err) || gpu_model_forward_backward(gm, 0x5eed + (uint64_t)step, 1, 1.0f, err) ||
	       gpu_model_grad_norm_clip(gm, 1.0f, err) || gpu_model_adamw(gm, 1e-4f, step + 1, err);
}

static void bench(const struct model_dims *d, int B, enum gpu_precision prec)
{
	struct param_layout lay;
	struct aorta_error err;
	enum { ITERS = 30 };
	double ms[ITERS], host_ms[ITERS];
	layout_init(&lay, d);
	float *p0 = hnew(lay.total);
	params_init(p0, &lay, d, 7);
	struct batch b;
	batch_alloc(&b, d, B);
	batch_fill(&b, d, 42, 0);
	struct gpu_model gm;
	if (gpu_model_create(&gm, d, &lay, B, prec, stream, &err) || gpu_model_upload_params(&gm, p0, &err) ||
	    gpu_model_upload_batch(&gm, &b, NULL, &err)) {
		printf("# bench %s: %s\n", prec_name(prec), err.msg);
		n_fail++;
		return;
	}
	gpuEvent_t e0, e1;
	CUDA_OK(gpuEventCreate(&e0));
	CUDA_OK(gpuEventCreate(&e1));
	for (int i = 0; i < 5; i++)
		one_step(&gm, i, &err);
	CUDA_OK(gpuStreamSynchronize(stream));
	for (int i = 0; i < ITERS; i++) {
		struct timespec t0, t1;
		CUDA_OK(gpuEventRecord(e0, stream));
		clock_gettime(CLOCK_MONOTONIC, &t0);
		one_step(&gm, 5 + i, &err);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		CUDA_OK(gpuEventRecord(e1, stream));
		CUDA_OK(gpuEventSynchronize(e1));
		float f;
		CUDA_OK(gpuEventElapsedTime(&f, e0, e1));
		ms[i] = f;
		host_ms[i] = 1e3 * (double)(t1.tv_sec - t0.tv_sec) + 1e-6 * (double)(t1.tv_nsec - t0.tv_nsec);
	}
	qsort(ms, ITERS, sizeof ms[0], cmpd);
	qsort(host_ms, ITERS, sizeof host_ms[0], cmpd);
	/* phases of one step (median of 10) */
	{
		gpuEvent_t ev[5];
		double ph[4][10];
		for (int k = 0; k < 5; k++)
			CUDA_OK(gpuEventCreate(&ev[k]));
		for (int i = 0; i < 10; i++) {
			CUDA_OK(gpuEventRecord(ev[0], stream));
			gpu_model_zero_grad(&gm, &err);
			CUDA_OK(gpuEventRecord(ev[1], stream));
			gpu_model_forward_backward(&gm, 77 + (uint64_t)i, 1, 1.0f, &err);
			CUDA_OK(gpuEventRecord(ev[2], stream));
			gpu_model_grad_norm_clip(&gm, 1.0f, &err);
			CUDA_OK(gpuEventRecord(ev[3], stream));
			gpu_model_adamw(&gm, 1e-4f, 50 + i, &err);
			CUDA_OK(gpuEventRecord(ev[4], stream));
			CUDA_OK(gpuEventSynchronize(ev[4]));
			for (int k = 0; k < 4; k++) {
				float f;
				CUDA_OK(gpuEventElapsedTime(&f, ev[k], ev[k + 1]));
				ph[k][i] = f;
			}
		}
		for (int k = 0; k < 4; k++)
			qsort(ph[k], 10, sizeof(double), cmpd);
		printf("# bench %s B%d phases (median ms): zero_grad %.3f, fwd+bwd %.3f, norm+clip %.3f, adamw %.3f\n",
		       prec_name(prec), B, ph[0][5], ph[1][5], ph[2][5], ph[3][5]);
		for (int k = 0; k < 5; k++)
			gpuEventDestroy(ev[k]);
	}
	float loss = 0;
	gpu_model_download_loss(&gm, &loss, NULL, &err);
	printf("# bench %s B%d: step (zero+fwd+bwd+clip+adamw) median %.3f ms (min %.3f, max %.3f), host enqueue %.3f ms, loss %.4f\n",
	       prec_name(prec), B, ms[ITERS / 2], ms[0], ms[ITERS - 1], host_ms[ITERS / 2], loss);

	/* the same step as a CUDA graph: no launch gaps */
	gpuGraph_t graph;
	gpuGraphExec_t exec;
	CUDA_OK(gpuStreamBeginCapture(stream, gpuStreamCaptureModeThreadLocal));
	int bad = one_step(&gm, 100, &err);
	gpuError_t ce = gpuStreamEndCapture(stream, &graph);
	if (bad || ce != gpuSuccess || gpuGraphInstantiate(&exec, graph, 0) != gpuSuccess) {
		printf("# bench %s graph: capture failed (%s)\n", prec_name(prec),
		       bad ? err.msg : gpuGetErrorString(ce));
		gpuGetLastError();
	} else {
		for (int i = 0; i < 3; i++)
			CUDA_OK(gpuGraphLaunch(exec, stream));
		for (int i = 0; i < ITERS; i++) {
			CUDA_OK(gpuEventRecord(e0, stream));
			CUDA_OK(gpuGraphLaunch(exec, stream));
			CUDA_OK(gpuEventRecord(e1, stream));
			CUDA_OK(gpuEventSynchronize(e1));
			float f;
			CUDA_OK(gpuEventElapsedTime(&f, e0, e1));
			ms[i] = f;
		}
		qsort(ms, ITERS, sizeof ms[0], cmpd);
		printf("# bench %s B%d graph: step median %.3f ms (min %.3f, max %.3f)\n", prec_name(prec), B,
		       ms[ITERS / 2], ms[0], ms[ITERS - 1]);
		gpuGraphExecDestroy(exec);
		gpuGraphDestroy(graph);
	}
	gpuEventDestroy(e0);
	gpuEventDestroy(e1);
	gpu_model_release(&gm);
	batch_free(&b);
	layout_release(&lay);
	free(p0);
}

/* ------------------------------------------------------------------------ */

int main(void)
{
	int ndev = 0;
	if (gpuGetDeviceCount(&ndev) != gpuSuccess || ndev == 0) {
		printf("skip: no CUDA device\n");
		printf("0 passed, 0 failed, 1 skipped\n");
		return 0;
	}
	gpuDeviceProp prop;
	CUDA_OK(gpuGetDeviceProperties(&prop, 0));
	printf("# device: %s, sm_%d%d, %d SMs\n", prop.name, prop.major, prop.minor, prop.multiProcessorCount);
	CUDA_OK(gpuStreamCreateWithFlags(&stream, gpuStreamNonBlocking));

	gpu_ops_ctx *c = gpu_ops_create(stream, PREC_FP32);
	if (!c) {
		printf("FAIL gpu_ops_create\n");
		return 1;
	}
	/* small, odd shapes (tails) and default-model shapes */
	test_linear(c, PREC_FP32, 7, 13, 11);
	test_linear(c, PREC_FP32, 64, 768, 2304);
	test_linear(c, PREC_FP32, 512, 2048, 768);
	test_linear(c, PREC_FP32, 512, 2048, 1);
	test_linear_gelu_dropout(c, 9, 17, 33);
	test_linear_gelu_dropout(c, 256, 768, 2048);
	test_embbag(c, 5, 3, 7, 4);
	test_embbag(c, 512, 32, 192, 60000);
	test_layernorm(c, 7, 37);
	test_layernorm(c, 512, 768);
	test_elementwise(c, 1001);
	test_elementwise(c, (size_t)512 * 2048);
	test_attention(c, 2, 5, 12, 3, 0.1f);
	test_attention(c, 1, 40, 64, 2, 0.0f);
	test_attention(c, 8, 64, 768, 12, 0.1f);
	test_bce(c, 37);
	test_bce(c, 512);
	test_adamw_sumsq(c, 1001, 1);
	test_adamw_sumsq(c, (size_t)1 << 22, 0);
	gpu_ops_destroy(c);

	enum gpu_precision lp[2] = { PREC_BF16, PREC_FP16 };
	for (int k = 0; k < 2; k++) {
		c = gpu_ops_create(stream, lp[k]);
		test_linear(c, lp[k], 7, 13, 11);
		test_linear(c, lp[k], 512, 768, 2304);
		test_linear(c, lp[k], 512, 2048, 1);
		gpu_ops_destroy(c);
	}

	struct model_dims small = { .V = 1000, .E = 16, .F = 4, .D = 8, .T = 16, .S = 4, .M = 64, .H = 4,
				    .L = 2, .FFN = 128, .MLP = 96, .dropout = 0.1f, .ln_eps = 1e-5f };
	struct model_dims def = { .V = 60000, .E = 192, .F = 16, .D = 128, .T = 64, .S = 32, .M = 768,
				  .H = 12, .L = 8, .FFN = 2048, .MLP = 2048, .dropout = 0.1f, .ln_eps = 1e-5f };
	test_step("small fp32", &small, 3, PREC_FP32, 1e-4, 1e-5);
	test_step("small bf16", &small, 3, PREC_BF16, 3e-2, 1e-3);
	const char *eb = getenv("AORTA_GPU_TEST_DEFAULT_B");
	int defB = eb ? atoi(eb) : 2;
	if (defB > 0) {
		test_step("default fp32", &def, defB, PREC_FP32, 1e-4, 1e-5);
		test_step("default bf16", &def, defB, PREC_BF16, 3e-2, 1e-3);
	} else {
		printf("skip: default-dims step (AORTA_GPU_TEST_DEFAULT_B=0)\n");
		n_skip++;
	}
	const char *bn = getenv("AORTA_GPU_TEST_BENCH");
	if (!bn || atoi(bn) != 0) {
		bench(&def, 8, PREC_BF16);
		bench(&def, 8, PREC_FP32);
	}

	gpuStreamDestroy(stream);
	printf("%d passed, %d failed, %d skipped\n", n_pass, n_fail, n_skip);
	if (fflush(stdout) != 0)
		return 5;
	return n_fail ? 1 : 0;
}
