/*
 * test_sdma.c - the host side of aorta sdma, without a GPU: averages that
 * exclude the cold iterations from sums and divisor, savings, throughputs
 * and slowdowns, the overlapped time from the interval algebra, the
 * option and machine checks (no GPU, missing device, p2p without a peer,
 * sizes that do not fit), the CPU references (bf16 rounding, the copy
 * pattern, the first-mismatch scan, the GEMM check), and the aorta.sdma/1
 * document written atomically and parsed back.
 */
#include "testing.h"

#include <stdint.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "base/output.h"
#include "sdma/sdma.h"

#define US INT64_C(1000)
#define MS INT64_C(1000000)

static struct sdma_config small_cfg(void)
{
	struct sdma_config c;
	sdma_config_defaults(&c);
	c.matrix_size = 1024;
	c.copy_mb = 8;
	c.iterations = 2;
	c.cold_iters = 1;
	return c;
}

/* Iteration 0 is cold and absurd (it must not count); iterations 1 and 2:
 *   gemm alone 1.0 / 1.2 ms, copy alone 2.0 / 2.2 ms
 *   sequential 3.2 / 3.6 ms (gemm 1.0 / 1.2, copy 2.1 / 2.3)
 *   overlapped 2.5 / 2.7 ms: gemm [0, 1.5) / [0, 1.5) ms,
 *                           copy [0.5, 2.5) / [1.0, 2.7) ms
 * -> overlap 1.0 and 0.5 ms: mean 0.75 ms; copy together 2.0 / 1.7 = 1.85 ms */
static void fill_result(struct sdma_result *r, const struct sdma_config *c)
{
	sdma_result_init(r, c);
	int64_t *const *t = r->t;
	for (int k = 0; k < SDMA_T__COUNT; k++)
		t[k][0] = 1000 * MS;
	t[SDMA_T_OVL_GEMM_START][0] = 0;
	t[SDMA_T_OVL_COPY_START][0] = 0;
	const int64_t ga[] = { 1000 * US, 1200 * US }, ca[] = { 2000 * US, 2200 * US };
	const int64_t sq[] = { 3200 * US, 3600 * US }, sg[] = { 1000 * US, 1200 * US };
	const int64_t sc[] = { 2100 * US, 2300 * US }, ov[] = { 2500 * US, 2700 * US };
	const int64_t gs[] = { 0, 0 }, ge[] = { 1500 * US, 1500 * US };
	const int64_t cs[] = { 500 * US, 1000 * US }, ce[] = { 2500 * US, 2700 * US };
	for (int i = 0; i < 2; i++) {
		t[SDMA_T_GEMM_ALONE][i + 1] = ga[i];
		t[SDMA_T_COPY_ALONE][i + 1] = ca[i];
		t[SDMA_T_SEQ][i + 1] = sq[i];
		t[SDMA_T_SEQ_GEMM][i + 1] = sg[i];
		t[SDMA_T_SEQ_COPY][i + 1] = sc[i];
		t[SDMA_T_OVL][i + 1] = ov[i];
		t[SDMA_T_OVL_GEMM_START][i + 1] = gs[i];
		t[SDMA_T_OVL_GEMM_END][i + 1] = ge[i];
		t[SDMA_T_OVL_COPY_START][i + 1] = cs[i];
		t[SDMA_T_OVL_COPY_END][i + 1] = ce[i];
	}
	r->copy_checked = 3;
	r->copy_ok = 1;
	r->copy_bytes_compared = sdma_copy_bytes(c);
	r->gemm_checked = 1;
	r->gemm_ok = 1;
	r->gemm_samples = 256;
	r->compute_priority = 0;
	r->copy_priority = -5;
}

static void test_mean_excludes_cold_iterations_from_sum_and_divisor(void)
{
	const int64_t v[] = { 1000, 900, 10, 20, 30 };
	CHECK_NEAR(sdma_mean_ns(v, 5, 2), 20.0, 1e-12);
	CHECK_NEAR(sdma_mean_ns(v, 5, 0), 392.0, 1e-12);
	CHECK_NEAR(sdma_mean_ns(v, 5, 4), 30.0, 1e-12);
	CHECK_NEAR(sdma_mean_ns(v, 5, 5), 0.0, 0);
	CHECK_NEAR(sdma_mean_ns(v, 2, 3), 0.0, 0);
}

static void test_savings_is_clamped_at_zero(void)
{
	CHECK_NEAR(sdma_savings_pct(10.0, 4.0), 60.0, 1e-12);
	CHECK_NEAR(sdma_savings_pct(21.873, 3.535), (21.873 - 3.535) / 21.873 * 100, 1e-9);
	CHECK_NEAR(sdma_savings_pct(10.0, 12.0), 0.0, 0);
	CHECK_NEAR(sdma_savings_pct(0.0, 1.0), 0.0, 0);
}

static void test_summary_figures_from_the_measured_iterations(void)
{
	struct sdma_config c = small_cfg();
	struct sdma_result r;
	struct sdma_summary s;
	fill_result(&r, &c);
	sdma_summarise(&c, &r, &s);
	CHECK_NEAR(s.seq_ms, 3.4, 1e-12);
	CHECK_NEAR(s.ovl_ms, 2.6, 1e-12);
	CHECK_NEAR(s.savings_pct, (3.4 - 2.6) / 3.4 * 100, 1e-9);
	CHECK_NEAR(s.gemm_alone_ms, 1.1, 1e-12);
	CHECK_NEAR(s.gemm_seq_ms, 1.1, 1e-12);
	CHECK_NEAR(s.gemm_together_ms, 1.5, 1e-12);
	CHECK_NEAR(s.copy_alone_ms, 2.1, 1e-12);
	CHECK_NEAR(s.copy_seq_ms, 2.2, 1e-12);
	CHECK_NEAR(s.copy_together_ms, 1.85, 1e-12);
	/* 2 * 1024^3 FLOP in 1.1 ms */
	CHECK_NEAR(s.gemm_flop, 2147483648.0, 0);
	CHECK_NEAR(s.gemm_alone_tflops, 2147483648.0 / 1.1e-3 / 1e12, 1e-9);
	CHECK_NEAR(s.gemm_together_tflops, 2147483648.0 / 1.5e-3 / 1e12, 1e-9);
	/* 8 MiB = 8388608 bytes in 2.1 ms, decimal GB/s */
	CHECK_EQ_I(s.copy_bytes, 8388608);
	CHECK_NEAR(s.copy_alone_gbps, 8388608.0 / 2.1e-3 / 1e9, 1e-9);
	CHECK_NEAR(s.copy_together_gbps, 8388608.0 / 1.85e-3 / 1e9, 1e-9);
	CHECK_NEAR(s.gemm_slowdown, 1.5 / 1.1, 1e-12);
	CHECK_NEAR(s.copy_slowdown, 1.85 / 2.1, 1e-12);
	CHECK_NEAR(s.ideal_ms, 2.1, 1e-12);
	CHECK_NEAR(s.overlap_ms, 0.75, 1e-12);
	CHECK_NEAR(s.copy_hidden_pct, 0.75 / 1.85 * 100, 1e-9);
	CHECK_NEAR(s.seq_gap_ms, 3.4 - 1.1 - 2.2, 1e-12);
	CHECK(sdma_verified(&r));
	r.gemm_ok = 0;
	CHECK(!sdma_verified(&r));
	sdma_result_release(&r);
}

static void test_zero_cold_iterations_counts_everything(void)
{
	struct sdma_config c = small_cfg();
	struct sdma_result r;
	struct sdma_summary s;
	c.cold_iters = 0;
	c.iterations = 3;
	fill_result(&r, &c);
	sdma_summarise(&c, &r, &s);
	CHECK_NEAR(s.seq_ms, (1000.0 + 3.2 + 3.6) / 3, 1e-9);
	/* the 1000 ms first iteration: gemm [0,1000) copy [0,1000) overlaps fully */
	CHECK_NEAR(s.overlap_ms, (1000.0 + 1.0 + 0.5) / 3, 1e-9);
	sdma_result_release(&r);
}

static void test_option_values_are_range_checked(void)
{
	struct sdma_config c;
	struct aorta_error e;
	sdma_config_defaults(&c);
	CHECK_EQ_I(sdma_config_check(&c, &e), AORTA_OK);
	CHECK_EQ_I(sdma_copy_bytes(&c), 64 * 1048576);
	c.copy_mb = 0;
	CHECK_EQ_I(sdma_config_check(&c, &e), AORTA_EUSAGE);
	CHECK(strstr(e.msg, "--copy-mb 0") != NULL);
	sdma_config_defaults(&c);
	c.matrix_size = 0;
	CHECK_EQ_I(sdma_config_check(&c, &e), AORTA_EUSAGE);
	CHECK(strstr(e.msg, "--matrix-size") != NULL);
	sdma_config_defaults(&c);
	c.iterations = 0;
	CHECK_EQ_I(sdma_config_check(&c, &e), AORTA_EUSAGE);
	sdma_config_defaults(&c);
	c.cold_iters = -1;
	CHECK_EQ_I(sdma_config_check(&c, &e), AORTA_EUSAGE);
	sdma_config_defaults(&c);
	c.device = -1;
	CHECK_EQ_I(sdma_config_check(&c, &e), AORTA_EUSAGE);
	CHECK(strstr(e.msg, "--device -1") != NULL);
	sdma_config_defaults(&c);
	c.dir = SDMA_P2P;
	c.peer = 1;
	CHECK_EQ_I(sdma_config_check(&c, &e), AORTA_OK);
	CHECK_EQ_I(sdma_dir_parse("p2p"), SDMA_P2P);
	CHECK_EQ_I(sdma_dir_parse("P2P"), -1);
	CHECK_EQ_I(sdma_engine_parse("kernel"), SDMA_ENG_KERNEL);
	CHECK_EQ_I(sdma_engine_parse("dma"), -1);
}

static struct sdma_gpu_info machine(int count, uint64_t free_bytes)
{
	struct sdma_gpu_info g;
	memset(&g, 0, sizeof(g));
	g.count = count;
	g.dev.free_bytes = g.dev.total_bytes = free_bytes;
	g.peer.free_bytes = g.peer.total_bytes = free_bytes;
	g.host_avail_bytes = UINT64_C(64) << 30;
	return g;
}

static void test_machine_checks_refuse_before_gpu_work(void)
{
	struct sdma_config c;
	struct aorta_error e;
	struct sdma_gpu_info g = machine(0, 0);
	struct sdma_need n;
	sdma_config_defaults(&c);

	CHECK_EQ_I(sdma_check_machine(&c, &g, &e), AORTA_EGPU);
	CHECK(strstr(e.msg, "no GPU visible") != NULL);

	g = machine(2, UINT64_C(80) << 30);
	c.device = 2;
	CHECK_EQ_I(sdma_check_machine(&c, &g, &e), AORTA_EUSAGE);
	CHECK(strstr(e.msg, "--device 2: no such device (2 visible") != NULL);
	c.device = 0;
	CHECK_EQ_I(sdma_check_machine(&c, &g, &e), AORTA_OK);

	/* defaults: 3 x 32 MiB matrices + 32 MiB workspace + 64 MiB source */
	sdma_need(&c, &n);
	CHECK_EQ_I(n.device_bytes, (3 * 32 + 32 + 64) * SDMA_MIB);
	CHECK_EQ_I(n.pinned_bytes, 64 * SDMA_MIB);
	c.dir = SDMA_D2D;
	sdma_need(&c, &n);
	CHECK_EQ_I(n.device_bytes, (3 * 32 + 32 + 128) * SDMA_MIB);
	CHECK_EQ_I(n.pinned_bytes, 0);

	/* S = 65536: 3 x 8 GiB; does not fit in 20 GiB */
	c.dir = SDMA_D2H;
	c.matrix_size = 65536;
	g = machine(1, UINT64_C(20) << 30);
	CHECK_EQ_I(sdma_check_machine(&c, &g, &e), AORTA_EUSAGE);
	CHECK(strstr(e.msg, "need 24.09 GiB on device 0") != NULL);
	c.matrix_size = 4096;
	c.copy_mb = 30 * 1024;
	CHECK_EQ_I(sdma_check_machine(&c, &g, &e), AORTA_EUSAGE);
	/* host memory: 30 GiB pinned + pattern does not fit in 40 GiB */
	g = machine(1, UINT64_C(80) << 30);
	g.host_avail_bytes = UINT64_C(40) << 30;
	CHECK_EQ_I(sdma_check_machine(&c, &g, &e), AORTA_EUSAGE);
	CHECK(strstr(e.msg, "of host memory") != NULL);

	/* p2p: one GPU, the last GPU, no peer access, then fine */
	c.copy_mb = 64;
	c.dir = SDMA_P2P;
	c.peer = 1;
	g = machine(1, UINT64_C(80) << 30);
	CHECK_EQ_I(sdma_check_machine(&c, &g, &e), AORTA_EUSAGE);
	CHECK(strstr(e.msg, "needs two GPUs") != NULL);
	g = machine(2, UINT64_C(80) << 30);
	c.device = 1;
	c.peer = 2;
	CHECK_EQ_I(sdma_check_machine(&c, &g, &e), AORTA_EUSAGE);
	CHECK(strstr(e.msg, "device 2, which does not exist") != NULL);
	c.device = 0;
	c.peer = 1;
	g.peer_valid = 1;
	CHECK_EQ_I(sdma_check_machine(&c, &g, &e), AORTA_EUSAGE);
	CHECK(strstr(e.msg, "no peer access") != NULL);
	g.peer_access = 1;
	CHECK_EQ_I(sdma_check_machine(&c, &g, &e), AORTA_OK);
	g.peer.free_bytes = 100 * SDMA_MIB;
	CHECK_EQ_I(sdma_check_machine(&c, &g, &e), AORTA_EUSAGE);
	CHECK(strstr(e.msg, "on device 1") != NULL);
}

static void test_bf16_rounds_to_nearest_even(void)
{
	CHECK_EQ_I(sdma_bf16_from_float(1.0f), 0x3f80);
	CHECK_EQ_I(sdma_bf16_from_float(-2.0f), 0xc000);
	/* 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1) */
	CHECK_EQ_I(sdma_bf16_from_float(1.0f + 1.0f / 256), 0x3f80);
	/* 1 + 3 * 2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6: to even (0x3f82) */
	CHECK_EQ_I(sdma_bf16_from_float(1.0f + 3.0f / 256), 0x3f82);
	CHECK_EQ_I(sdma_bf16_from_float(1.0f + 1.5f / 256), 0x3f81);
	CHECK_NEAR(sdma_bf16_to_float(0x3f81), 1.0 + 1.0 / 128, 0);
	CHECK(isnan(sdma_bf16_to_float(sdma_bf16_from_float(NAN))));
}

static void test_copy_pattern_is_random_and_mismatches_are_found(void)
{
	const uint64_t n = 200000 + 5; /* crosses the scan's 64 KiB chunks, odd tail */
	unsigned char *a = malloc(n), *b = malloc(n), *z = calloc(n, 1);
	sdma_fill_pattern(a, n, 7);
	sdma_fill_pattern(b, n, 7);
	CHECK(memcmp(a, b, n) == 0);
	CHECK_EQ_I(sdma_first_mismatch(a, b, n), -1);
	CHECK(sdma_first_mismatch(a, z, n) >= 0 && sdma_first_mismatch(a, z, n) < 8);
	sdma_fill_pattern(b, n, 8);
	CHECK(memcmp(a, b, n) != 0);
	sdma_fill_pattern(b, n, 7);
	b[n - 1] ^= 1;
	CHECK_EQ_I(sdma_first_mismatch(a, b, n), (long long)n - 1);
	b[65536] ^= 0x80;
	CHECK_EQ_I(sdma_first_mismatch(a, b, n), 65536);
	b[0] ^= 0xff;
	CHECK_EQ_I(sdma_first_mismatch(a, b, n), 0);
	/* roughly uniform bytes: about n/256 zeros, never a run of them */
	uint64_t zeros = 0;
	for (uint64_t i = 0; i < n; i++)
		zeros += a[i] == 0;
	CHECK(zeros > n / 512 && zeros < n / 128);
	free(a);
	free(b);
	free(z);
}

/* C = relu(A B), column-major, computed independently in float */
static void ref_gemm(uint16_t *C, const uint16_t *A, const uint16_t *B, int S)
{
	for (int j = 0; j < S; j++)
		for (int i = 0; i < S; i++) {
			float acc = 0;
			for (int k = 0; k < S; k++)
				acc += sdma_bf16_to_float(A[i + k * S]) * sdma_bf16_to_float(B[k + j * S]);
			C[i + j * S] = sdma_bf16_from_float(acc > 0 ? acc : 0);
		}
}

static void test_gemm_check_accepts_bf16_and_catches_wrong_results(void)
{
	enum { S = 48 };
	uint16_t *A = malloc(S * S * 2), *B = malloc(S * S * 2), *C = malloc(S * S * 2),
		 *T = malloc(S * S * 2);
	struct sdma_gemm_check g;
	sdma_fill_gemm_inputs(A, B, S, 3);
	int neg = 0;
	for (int i = 0; i < S * S; i++)
		neg += sdma_bf16_to_float(A[i]) < 0;
	CHECK(neg > S * S / 4 && neg < 3 * S * S / 4); /* values in [-1, 1) */
	ref_gemm(C, A, B, S);
	CHECK(sdma_gemm_check(A, B, C, S, 300, 3, &g));
	CHECK_EQ_I(g.samples, 300);
	CHECK_EQ_I(g.failed, 0);
	CHECK(g.max_err_ratio <= 1.0);
	/* relu applied: some outputs are exactly zero */
	int zeros = 0;
	for (int i = 0; i < S * S; i++)
		zeros += C[i] == 0;
	CHECK(zeros > S * S / 4);
	/* a corner entry off by 10% (of a positive value) or not relu'd */
	memcpy(T, C, S * S * 2);
	int idx = -1;
	for (int i = 0; i < S * S && idx < 0; i++)
		if ((i == 0 || i == S * S - 1 || i == S - 1 || i == S * (S - 1)) &&
		    sdma_bf16_to_float(C[i]) > 1.0f)
			idx = i;
	CHECK(idx >= 0); /* seed 3 has a corner above 1 */
	if (idx >= 0) {
		T[idx] = sdma_bf16_from_float(sdma_bf16_to_float(C[idx]) * 1.1f);
		CHECK(!sdma_gemm_check(A, B, T, S, 300, 3, &g));
		CHECK_EQ_I(g.failed, 1);
		CHECK_EQ_I(g.worst_i + g.worst_j * S, idx);
	}
	/* the transposed result (a row-major mix-up) fails */
	for (int j = 0; j < S; j++)
		for (int i = 0; i < S; i++)
			T[i + j * S] = C[j + i * S];
	CHECK(!sdma_gemm_check(A, B, T, S, 300, 3, &g));
	CHECK(g.failed > 10);
	free(A);
	free(B);
	free(C);
	free(T);
}

static void test_json_is_written_atomically_and_parses_back(void)
{
	struct sdma_config c = small_cfg();
	struct sdma_result r;
	struct sdma_summary s;
	struct sdma_gpu_info g = machine(2, UINT64_C(80) << 30);
	struct outfile o;
	struct aorta_error e;
	char dir[] = "/tmp/aorta_sdma_XXXXXX", path[300], err[256];

	snprintf(g.dev.name, sizeof(g.dev.name), "Test \"GPU\"");
	g.dev.cc_major = 9;
	fill_result(&r, &c);
	r.copy_ok = 0;
	r.copy_mismatch_offset = 4097;
	r.copy_mismatch_phase = SDMA_T_OVL;
	r.copy_got = 0;
	r.copy_want = 0xab;
	sdma_summarise(&c, &r, &s);
	if (!mkdtemp(dir))
		SKIP("cannot create a temporary folder");
	snprintf(path, sizeof(path), "%s/sdma.json", dir);
	CHECK_EQ_I(out_open(&o, path, &e), AORTA_OK);
	CHECK(access(path, F_OK) != 0); /* not there until committed */
	sdma_write_json(o.f, &c, &g, &r, &s);
	CHECK_EQ_I(out_commit(&o, &e), AORTA_OK);

	FILE *f = fopen(path, "rb");
	CHECK(f != NULL);
	if (!f)
		return;
	static char buf[1 << 16];
	size_t len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = 0;
	yajl_val v = yajl_tree_parse(buf, err, sizeof(err));
	CHECK(v != NULL);
	if (!v) {
		fprintf(stderr, "%s\n", err);
		return;
	}
	const char *p_schema[] = { "schema", NULL }, *p_seq[] = { "sequential_avg_ms", NULL },
		   *p_ovl[] = { "overlapped_avg_ms", NULL }, *p_sav[] = { "estimated_savings_pct", NULL },
		   *p_bytes[] = { "config", "copy_bytes", NULL }, *p_dir[] = { "config", "direction", NULL },
		   *p_peer[] = { "config", "peer_device", NULL },
		   *p_name[] = { "device", "gpu", "name", NULL },
		   *p_gbps[] = { "copy", "alone_gbps", NULL }, *p_slow[] = { "gemm", "slowdown", NULL },
		   *p_it[] = { "iterations_ms", "sequential", NULL },
		   *p_pass[] = { "verification", "passed", NULL },
		   *p_off[] = { "verification", "copy", "first_mismatch_offset", NULL },
		   *p_ph[] = { "verification", "copy", "mismatch_phase", NULL },
		   *p_gpass[] = { "verification", "gemm", "passed", NULL },
		   *p_ovlp[] = { "overlap_ms", NULL };
	yajl_val x = yajl_tree_get(v, p_schema, yajl_t_string);
	CHECK_STR(x ? YAJL_GET_STRING(x) : NULL, "aorta.sdma/1");
	x = yajl_tree_get(v, p_seq, yajl_t_number);
	CHECK(x && fabs(YAJL_GET_DOUBLE(x) - 3.4) < 1e-9);
	x = yajl_tree_get(v, p_ovl, yajl_t_number);
	CHECK(x && fabs(YAJL_GET_DOUBLE(x) - 2.6) < 1e-9);
	x = yajl_tree_get(v, p_sav, yajl_t_number);
	CHECK(x && fabs(YAJL_GET_DOUBLE(x) - 23.5294) < 1e-4);
	x = yajl_tree_get(v, p_bytes, yajl_t_number);
	CHECK(x && YAJL_GET_INTEGER(x) == 8388608);
	x = yajl_tree_get(v, p_dir, yajl_t_string);
	CHECK_STR(x ? YAJL_GET_STRING(x) : NULL, "d2h");
	x = yajl_tree_get(v, p_peer, yajl_t_null);
	CHECK(x != NULL);
	x = yajl_tree_get(v, p_name, yajl_t_string);
	CHECK_STR(x ? YAJL_GET_STRING(x) : NULL, "Test \"GPU\"");
	x = yajl_tree_get(v, p_gbps, yajl_t_number);
	CHECK(x && fabs(YAJL_GET_DOUBLE(x) - 8388608.0 / 2.1e-3 / 1e9) < 1e-3);
	x = yajl_tree_get(v, p_slow, yajl_t_number);
	CHECK(x && fabs(YAJL_GET_DOUBLE(x) - 1.5 / 1.1) < 1e-4);
	x = yajl_tree_get(v, p_ovlp, yajl_t_number);
	CHECK(x && fabs(YAJL_GET_DOUBLE(x) - 0.75) < 1e-9);
	x = yajl_tree_get(v, p_it, yajl_t_array);
	CHECK(x && x->u.array.len == 3);
	if (x && x->u.array.len == 3) {
		CHECK_NEAR(YAJL_GET_DOUBLE(x->u.array.values[0]), 1000.0, 1e-9); /* cold, kept */
		CHECK_NEAR(YAJL_GET_DOUBLE(x->u.array.values[2]), 3.6, 1e-9);
	}
	x = yajl_tree_get(v, p_pass, yajl_t_false);
	CHECK(x != NULL);
	x = yajl_tree_get(v, p_gpass, yajl_t_true);
	CHECK(x != NULL);
	x = yajl_tree_get(v, p_off, yajl_t_number);
	CHECK(x && YAJL_GET_INTEGER(x) == 4097);
	x = yajl_tree_get(v, p_ph, yajl_t_string);
	CHECK_STR(x ? YAJL_GET_STRING(x) : NULL, "overlapped");
	yajl_tree_free(v);
	unlink(path);
	rmdir(dir);
	sdma_result_release(&r);
}

static void test_failed_json_write_leaves_no_file(void)
{
	struct sdma_config c = small_cfg();
	struct sdma_result r;
	struct sdma_summary s;
	struct sdma_gpu_info g = machine(1, UINT64_C(80) << 30);
	struct outfile o;
	struct aorta_error e;
	char dir[] = "/tmp/aorta_sdma_XXXXXX", path[300];

	fill_result(&r, &c);
	sdma_summarise(&c, &r, &s);
	if (!mkdtemp(dir))
		SKIP("cannot create a temporary folder");
	snprintf(path, sizeof(path), "%s/sdma.json", dir);
	CHECK_EQ_I(out_open(&o, path, &e), AORTA_OK);
	out_fail_after_bytes = 200; /* the disk fills part way through the document */
	sdma_write_json(o.f, &c, &g, &r, &s);
	CHECK_EQ_I(out_commit(&o, &e), AORTA_EINTERNAL);
	out_fail_after_bytes = -1;
	CHECK(access(path, F_OK) != 0);
	rmdir(dir);
	CHECK(access(dir, F_OK) != 0); /* no temporary file left beside it either */
	sdma_result_release(&r);
}

static void test_text_keeps_upstream_lines(void)
{
	struct sdma_config c = small_cfg();
	struct sdma_result r;
	struct sdma_summary s;
	struct sdma_gpu_info g = machine(1, UINT64_C(80) << 30);
	char *buf = NULL;
	size_t len = 0;

	snprintf(g.dev.name, sizeof(g.dev.name), "NVIDIA H100");
	fill_result(&r, &c);
	sdma_summarise(&c, &r, &s);
	FILE *f = open_memstream(&buf, &len);
	sdma_print_text(f, &c, &g, &r, &s);
	fclose(f);
	CHECK(strncmp(buf, "SDMA overlap benchmark\nDevice: 0 (NVIDIA H100)\n"
			   "Matrix size: 1024 x 1024\nCopy volume: 8 MB\nIterations: 2 (warm-up 1)\n"
			   "Sequential avg time (ms): 3.400\nOverlapped avg time (ms): 2.600\n"
			   "Estimated savings (%): 23.53\n",
		      strlen("SDMA overlap benchmark\nDevice: 0 (NVIDIA H100)\n"
			     "Matrix size: 1024 x 1024\nCopy volume: 8 MB\nIterations: 2 (warm-up 1)\n"
			     "Sequential avg time (ms): 3.400\nOverlapped avg time (ms): 2.600\n"
			     "Estimated savings (%): 23.53\n")) == 0);
	CHECK(strstr(buf, "Copy bytes: 8388608 per iteration") != NULL);
	CHECK(strstr(buf, "Copy check: passed (8388608 bytes identical in each of 3 phases)") != NULL);
	free(buf);
	sdma_result_release(&r);
}

int main(void)
{
	TEST(test_mean_excludes_cold_iterations_from_sum_and_divisor);
	TEST(test_savings_is_clamped_at_zero);
	TEST(test_summary_figures_from_the_measured_iterations);
	TEST(test_zero_cold_iterations_counts_everything);
	TEST(test_option_values_are_range_checked);
	TEST(test_machine_checks_refuse_before_gpu_work);
	TEST(test_bf16_rounds_to_nearest_even);
	TEST(test_copy_pattern_is_random_and_mismatches_are_found);
	TEST(test_gemm_check_accepts_bf16_and_catches_wrong_results);
	TEST(test_json_is_written_atomically_and_parses_back);
	TEST(test_failed_json_write_leaves_no_file);
	TEST(test_text_keeps_upstream_lines);
	return test_report();
}
