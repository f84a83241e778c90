/*
 * test_hwq_ref.c - the CPU twins of the P1-P3 hwq workloads' kernels
 * (src/hwq/wl_ref_p123.c), which those workloads' checks trust, and the
 * device-memory figures of src/hwq/hwq_mem.c.  Each twin is compared with
 * hand-worked values or with an independent composition of the project's
 * cpu_* reference operations (src/train/ops.h).
 */
#include "hwq/hwq_mem.h"
#include "hwq/wl_ref_p123.h"
#include "testing.h"
#include "kernels/ops.h"

static void fill(float *x, size_t n, uint64_t site, float lo, float hi)
{
	for (size_t i = 0; i < n; i++)
		x[i] = lo + (hi - lo) * (float)wl_ref_uniform(42, site, i);
}

static void test_topk_softmax(void)
{
	float x[2][6] = { { 0.1f, 3.0f, -1.0f, 3.0f, 2.0f, 0.0f }, { 5.0f, 4.0f, 3.0f, 2.0f, 1.0f, 0.0f } };
	float v[2][3], p[6];
	int32_t i[2][3];
	wl_ref_topk_rows(&v[0][0], &i[0][0], &x[0][0], 2, 6, 3, 0);
	CHECK_EQ_I(i[0][0], 1); /* tie: lower index first */
	CHECK_EQ_I(i[0][1], 3);
	CHECK_EQ_I(i[0][2], 4);
	CHECK_NEAR(v[0][2], 2.0, 0);
	CHECK_EQ_I(i[1][0], 0);
	CHECK_EQ_I(i[1][2], 2);
	wl_ref_topk_rows(&v[0][0], &i[0][0], &x[1][0], 1, 6, 2, 1);
	CHECK_NEAR(v[0][0], 5.0 / 9.0, 1e-7);
	CHECK_NEAR(v[0][0] + v[0][1], 1.0, 1e-7);
	wl_ref_softmax_rows(p, &x[0][0], 1, 6);
	double s = 0;
	for (int k = 0; k < 6; k++)
		s += p[k];
	CHECK_NEAR(s, 1.0, 1e-6);
	CHECK_NEAR(p[1] / p[4], exp(1.0), 1e-5);
	CHECK_NEAR(p[1], p[3], 0);
}

/* The top k of random rows with many ties (values of a few levels), checked
 * by its definition: k distinct columns, values descending, a tie to the
 * lower column, nothing left out larger than what was taken. */
static void test_topk_by_definition(void)
{
	enum { R = 16, C = 40, K = 7 };
	float x[R][C], v[R][K];
	int32_t i[R][K];
	for (int r = 0; r < R; r++)
		for (int c = 0; c < C; c++)
			x[r][c] = (float)(int)(6 * wl_ref_uniform(7, 3, (uint64_t)(r * C + c)));
	wl_ref_topk_rows(&v[0][0], &i[0][0], &x[0][0], R, C, K, 0);
	int bad = 0;
	for (int r = 0; r < R; r++) {
		int taken[C] = { 0 };
		for (int j = 0; j < K; j++) {
			bad |= i[r][j] < 0 || i[r][j] >= C || taken[i[r][j]] || v[r][j] != x[r][i[r][j]];
			taken[i[r][j]] = 1;
			if (j)
				bad |= v[r][j] > v[r][j - 1] || (v[r][j] == v[r][j - 1] && i[r][j] < i[r][j - 1]);
		}
		for (int c = 0; c < C; c++)
			if (!taken[c]) /* left out: smaller than the last taken, or equal at a higher column */
				bad |= x[r][c] > v[r][K - 1] || (x[r][c] == v[r][K - 1] && c < i[r][K - 1]);
	}
	CHECK(!bad);
}

static void test_sort_cumprod_argmax(void)
{
	float x[5] = { 1.0f, 4.0f, 1.0f, -2.0f, 4.0f }, v[5], y[4];
	int32_t i[5], a[2];
	wl_ref_sort_desc_rows(v, i, x, 1, 5);
	int32_t want[5] = { 1, 4, 0, 2, 3 }; /* stable */
	for (int k = 0; k < 5; k++)
		CHECK_EQ_I(i[k], want[k]);
	CHECK_NEAR(v[0], 4.0, 0);
	CHECK_NEAR(v[4], -2.0, 0);
	float f[4] = { 1, 1, 0, 1 };
	wl_ref_cumprod_rows(y, f, 1, 4);
	CHECK_NEAR(y[1], 1.0, 0);
	CHECK_NEAR(y[2], 0.0, 0);
	CHECK_NEAR(y[3], 0.0, 0);
	float two[2][3] = { { 1, 7, 7 }, { -3, -1, -2 } };
	wl_ref_argmax_rows(a, &two[0][0], 2, 3);
	CHECK_EQ_I(a[0], 1);
	CHECK_EQ_I(a[1], 1);
	int32_t pred[4] = { 5, 6, 7, 8 }, draft[4] = { 5, 0, 7, 8 }, forced[4] = { 0, 0, 0, 1 };
	float fl[4], mask[4], out[4];
	wl_ref_accept_flags(fl, pred, draft, forced, 4);
	CHECK_NEAR(fl[0] + fl[1] + fl[2] + fl[3], 3.0, 0);
	wl_ref_cumprod_rows(mask, fl, 1, 4);
	wl_ref_mask_tokens(out, draft, mask, 4);
	CHECK_NEAR(out[0], 5.0, 0);
	CHECK_NEAR(out[2], 0.0, 0); /* after the first rejection */
}

static void test_gathers_pools(void)
{
	float src[3][2] = { { 1, 2 }, { 3, 4 }, { 5, 6 } }, dst[2][2], cat[2][5] = { { 0 } };
	int32_t idx[2] = { 2, 0 };
	wl_ref_gather_rows(&dst[0][0], &src[0][0], idx, 2, 2);
	CHECK_NEAR(dst[0][1], 6.0, 0);
	CHECK_NEAR(dst[1][0], 1.0, 0);
	wl_ref_copy_cols(&cat[0][0], 5, 3, &dst[0][0], 2, 2);
	CHECK_NEAR(cat[0][3], 5.0, 0);
	CHECK_NEAR(cat[1][4], 2.0, 0);
	CHECK_NEAR(cat[1][2], 0.0, 0);
	float m[2];
	wl_ref_mean_seq(m, &src[0][0], 1, 3, 2);
	CHECK_NEAR(m[0], 3.0, 1e-7);
	CHECK_NEAR(m[1], 4.0, 1e-7);
	float l2[2] = { 3, 4 };
	wl_ref_l2norm_rows(l2, l2, 1, 2);
	CHECK_NEAR(l2[0], 0.6, 1e-7);
	/* 2x2 image, 2 channels: max over the window per channel */
	float img[2][2][2] = { { { 1, -1 }, { 2, -5 } }, { { 0, 7 }, { -3, 0 } } }, pool[2];
	wl_ref_maxpool2(pool, &img[0][0][0], 2, 2, 2);
	CHECK_NEAR(pool[0], 2.0, 0);
	CHECK_NEAR(pool[1], 7.0, 0);
	/* normalize + flip: NCHW 1x3x1x2 -> NHWC */
	float in[6] = { 0.5f, 1.0f, 0.2f, 0.4f, 0.0f, 0.3f }, out[6];
	const float mean[3] = { 0.5f, 0.0f, 0.1f }, sd[3] = { 0.5f, 0.2f, 0.1f };
	int32_t flip[1] = { 1 };
	wl_ref_normalize_flip(out, in, flip, 0, 1, 3, 1, 2, mean, sd);
	CHECK_NEAR(out[0], (1.0 - 0.5) / 0.5, 1e-6); /* x = 0 reads x = 1 */
	CHECK_NEAR(out[1], (0.4 - 0.0) / 0.2, 1e-6);
	CHECK_NEAR(out[5], (0.0 - 0.1) / 0.1, 1e-6);
	float w[2] = { 1.0f, 1.0f }, wt[2 * 2] = { 0.7f, 0.3f, 0.6f, 0.4f }, y[2 * 2];
	int32_t ex[2 * 2] = { 3, 1, 0, 3 };
	float x2[2 * 2] = { 1, 2, 3, 4 };
	(void)w;
	wl_ref_moe_weight(y, x2, wt, ex, 3, 2, 0, 2, 2);
	CHECK_NEAR(y[1], 2 * 0.7f, 1e-7);
	CHECK_NEAR(y[3], 4 * 0.4f, 1e-7);
	float c[2 * 2 * 3 * 1] = { 0 }; /* [B=2][H=2][S=3][hd=1] */
	wl_ref_cache_decay(c, 1, 2, 2, 3, 1, 0);
	CHECK_NEAR(c[6], 0.01, 1e-7); /* b=1, h=0, s=0 */
	CHECK_NEAR(c[0], 0.0, 0);
	CHECK_NEAR(c[7], 0.0, 0);
}

/* attention row against cpu_attention_fwd (p = 0) */
static void test_attention_row(void)
{
	enum { B = 2, T = 5, M = 8, H = 2 };
	float qkv[B * T * 3 * M], out[B * T * M], probs[B * H * T * T];
	double row[M];
	fill(qkv, sizeof qkv / sizeof qkv[0], 1, -1, 1);
	cpu_attention_fwd(out, probs, qkv, B, T, M, H, 0.0f, 0, 0);
	double worst = 0;
	for (int r = 0; r < B * T; r++) {
		wl_ref_attention_row(row, qkv, r, T, M, H);
		for (int i = 0; i < M; i++)
			worst = fmax(worst, fabs(row[i] - out[r * M + i]));
	}
	CHECK(worst < 1e-5);
}

/* one block row against a composition of the cpu_* operations */
static void block_case(int flags)
{
	enum { B = 2, T = 4, M = 8, H = 2, F = 16, N = B * T };
	static float p[4 * M * M + 2 * F * M + 9 * M + F], x[N * M], qkv[N * 3 * M], att[N * M], probs[B * H * T * T];
	static float h[N * M], x1[N * M], r2[N * M], f[N * F], y[N * M], mean[N], rstd[N];
	struct wl_block w;
	CHECK_EQ_I(wl_ref_block_param_floats(M, F), sizeof p / sizeof p[0]);
	wl_ref_block_carve(&w, p, M, F);
	fill(p, sizeof p / sizeof p[0], 2, -0.5f, 0.5f);
	for (int i = 0; i < M; i++) {
		w.ln1_g[i] = 1.0f + 0.1f * (float)i;
		w.ln2_g[i] = 0.9f;
	}
	fill(x, sizeof x / sizeof x[0], 3, -1, 1);
	int pre = flags & WL_BLOCK_PRE_LN;
	const float *in = x;
	if (pre) {
		cpu_layernorm_fwd(h, mean, rstd, x, w.ln1_g, w.ln1_b, N, M, WL_LN_EPS);
		in = h;
	}
	cpu_linear_fwd(qkv, in, w.wqkv, w.bqkv, N, M, 3 * M);
	cpu_attention_fwd(att, probs, qkv, B, T, M, H, 0.0f, 0, 0);
	cpu_linear_fwd(x1, att, w.wo, w.bo, N, M, M);
	cpu_add(x1, x1, x, N * M);
	if (!pre) {
		cpu_layernorm_fwd(r2, mean, rstd, x1, w.ln1_g, w.ln1_b, N, M, WL_LN_EPS);
		for (int i = 0; i < N * M; i++)
			x1[i] = r2[i];
	}
	const float *ffin = x1;
	if (pre) {
		cpu_layernorm_fwd(h, mean, rstd, x1, w.ln2_g, w.ln2_b, N, M, WL_LN_EPS);
		ffin = h;
	}
	cpu_linear_fwd(f, ffin, w.w1, w.b1, N, M, F);
	if (flags & WL_BLOCK_GELU)
		cpu_gelu_fwd(f, f, N * F);
	else
		wl_ref_relu(f, f, N * F);
	cpu_linear_fwd(r2, f, w.w2, w.b2, N, F, M);
	cpu_add(r2, r2, x1, N * M);
	if (pre)
		for (int i = 0; i < N * M; i++)
			y[i] = r2[i];
	else
		cpu_layernorm_fwd(y, mean, rstd, r2, w.ln2_g, w.ln2_b, N, M, WL_LN_EPS);
	struct wl_err eq = { 0 }, ey = { 0 };
	double yr[M], qr[3 * M];
	for (int r = 0; r < N; r++) {
		wl_ref_block_row(yr, qr, &w, x, qkv, r, T, M, H, F, flags);
		for (int i = 0; i < 3 * M; i++)
			wl_err_add(&eq, qkv[r * 3 * M + i], qr[i]);
		for (int i = 0; i < M; i++)
			wl_err_add(&ey, y[r * M + i], yr[i]);
	}
	CHECK(wl_err_rel(&eq) < 1e-5);
	CHECK(wl_err_rel(&ey) < 1e-5);
	CHECK(ey.scale > 0.1);
}

static void test_block_row(void)
{
	block_case(WL_BLOCK_FF);                                   /* nn.TransformerEncoderLayer */
	block_case(WL_BLOCK_PRE_LN | WL_BLOCK_FF | WL_BLOCK_GELU); /* fsdp_tp's block */
}

/* conv at a pixel against im2col + cpu_linear_fwd */
static void test_conv_pixel(void)
{
	enum { H = 5, W = 5, C = 3, CO = 4 };
	static float x[H * W * C], w[CO * 9 * C], b[CO], col[H * W * 9 * C], y[H * W * CO];
	fill(x, sizeof x / sizeof x[0], 4, -1, 1);
	fill(w, sizeof w / sizeof w[0], 5, -1, 1);
	fill(b, CO, 6, -1, 1);
	wl_ref_im2col3x3(col, x, H, W, C);
	cpu_linear_fwd(y, col, w, b, H * W, 9 * C, CO);
	double out[CO], worst = 0;
	for (int py = 0; py < H; py++)
		for (int px = 0; px < W; px++) {
			wl_ref_conv3x3_pixel(out, x, w, b, H, W, C, CO, py, px);
			for (int o = 0; o < CO; o++)
				worst = fmax(worst, fabs(out[o] - y[(py * W + px) * CO + o]));
		}
	CHECK(worst < 1e-5);
	/* the corner's im2col row: taps outside the image are zero */
	CHECK_NEAR(col[0], 0.0, 0);
	CHECK_NEAR(col[4 * C], x[0], 0); /* tap (1,1) of pixel (0,0) is the pixel itself */
}

static void test_err_split(void)
{
	struct wl_err e = { 0 };
	wl_err_add(&e, 1.0, 2.0);
	wl_err_add(&e, -4.0, -4.1);
	CHECK_NEAR(e.max_abs, 1.0, 1e-12);
	CHECK_NEAR(wl_err_rel(&e), 1.0 / 4.1, 1e-12);
	wl_err_add(&e, NAN, 1.0);
	CHECK(isinf(e.max_abs));
	int lo, hi, total = 0;
	for (int i = 0; i < 3; i++) {
		wl_split(10, 3, i, &lo, &hi);
		CHECK(hi > lo);
		total += hi - lo;
	}
	CHECK_EQ_I(total, 10);
	CHECK(wl_ref_uniform(1, 2, 3) == wl_ref_uniform(1, 2, 3));
	CHECK(wl_ref_uniform(1, 2, 3) != wl_ref_uniform(1, 2, 4));
}

static void test_mem(void)
{
	/* graph_subgraphs: worked by hand (floats) */
	uint64_t mlp = 2048ull * 1024 + 2048 + 2048ull * 2048 + 2048 + 512ull * 2048 + 512 + 2 * 32 * 2048 + 32 * 512;
	uint64_t want = 4 * (2 * 32 * 1024 + 8 * mlp + 32 * 4096 + 512ull * 4096 + 512 + 32 * 512);
	CHECK_EQ_I(hwq_mem_graph_subgraphs(8), want);
	/* stream-dependent ones grow with the roles that own buffers */
	CHECK(hwq_mem_grad_accum(16) > hwq_mem_grad_accum(8));  /* 8 vs 4 gradient sets */
	CHECK_EQ_I(hwq_mem_grad_accum(8), hwq_mem_grad_accum(6)); /* both 4 items */
	CHECK(hwq_mem_zero_offload(12) > hwq_mem_zero_offload(4));
	CHECK(hwq_mem_async_dataload(12) > hwq_mem_async_dataload(4));
	/* the KV cache of continuous_batch alone is 2.4 GB */
	CHECK(hwq_mem_continuous_batch(8) > 8ull * 2 * 18 * 8 * 2048 * 128 * 4);
	uint64_t all[] = { hwq_mem_fsdp_tp(10), hwq_mem_moe(16), hwq_mem_speculative_decode(6),
			   hwq_mem_activation_ckpt(6), hwq_mem_rag_pipeline(8), hwq_mem_torch_compile(8) };
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
		CHECK(all[i] > (64ull << 20) && all[i] < (16ull << 30));
}

int main(void)
{
	TEST(test_topk_softmax);
	TEST(test_topk_by_definition);
	TEST(test_sort_cumprod_argmax);
	TEST(test_gathers_pools);
	TEST(test_attention_row);
	TEST(test_block_row);
	TEST(test_conv_pixel);
	TEST(test_err_split);
	TEST(test_mem);
	return test_report();
}
