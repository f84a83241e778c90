/*
 * test_sdma.c - aorta sdma on a real device: every direction (p2p only with
 * two GPUs that can reach each other) with both engines at small sizes.
 * Each run must verify (copy byte for byte in all three copying phases,
 * the GEMM against the CPU on sampled entries), every measured time must
 * be positive, and the event structure must hold (an overlapped iteration
 * ends after both sides; a sequential one lasts at least its two parts).
 * Whether overlapping is faster than sequential is printed, not asserted:
 * at these sizes it is a measurement, not a property.  The device query
 * and the machine checks are also exercised: a device that does not exist
 * and a matrix that cannot fit are refused before any allocation.
 *
 * Without a device every test is skipped with the reason and the program
 * exits 0.  Last line: "N passed, N failed, N skipped".
 */
#include "testing.h"

#include <stdint.h>

#include "gpu/gpu.h"
#include "sdma/sdma.h"

static int ndev;

#define NEED_GPU() do { if (ndev == 0) SKIP("no GPU visible to this process"); } while (0)
#define TOL_NS 2000 /* two event resolutions and then some */

static struct sdma_config small(enum sdma_dir d, enum sdma_engine g)
{
	struct sdma_config c;
	sdma_config_defaults(&c);
	c.matrix_size = 512;
	c.copy_mb = 4;
	c.iterations = 4;
	c.cold_iters = 1;
	c.dir = d;
	c.engine = g;
	c.peer = d == SDMA_P2P ? 1 : -1;
	c.seed = 11;
	c.gemm_samples = 64;
	c.quiet = 1;
	return c;
}

static void run_one(enum sdma_dir d, enum sdma_engine g)
{
	struct sdma_config c = small(d, g);
	struct sdma_gpu_info info;
	struct sdma_result r;
	struct sdma_summary s;
	struct aorta_error e;

	memset(&e, 0, sizeof(e));
	if (sdma_query_gpu(&c, &info, &e) != AORTA_OK) {
		fprintf(stderr, "  FAIL %s: query: %s\n", t_cur, e.msg);
		t_cur_failed = 1;
		return;
	}
	enum aorta_status st = sdma_check_machine(&c, &info, &e);
	if (d == SDMA_P2P && st == AORTA_EUSAGE) {
		/* refused before GPU work: exactly the case the command reports */
		fprintf(stderr, "  (p2p refused as it should be here: %s)\n", e.msg);
		SKIP("p2p needs two GPUs with peer access");
	}
	CHECK_EQ_I(st, AORTA_OK);
	if (st)
		return;
	sdma_result_init(&r, &c);
	st = sdma_run_gpu(&c, &r, &e);
	CHECK_EQ_I(st, AORTA_OK);
	if (st) {
		fprintf(stderr, "  %s\n", e.msg);
		sdma_result_release(&r);
		return;
	}
	CHECK_EQ_I(r.copy_checked, 3);
	CHECK(r.copy_ok);
	CHECK_EQ_I(r.copy_mismatch_offset, -1);
	CHECK_EQ_I(r.copy_bytes_compared, sdma_copy_bytes(&c));
	CHECK(r.gemm_checked && r.gemm_ok);
	CHECK_EQ_I(r.gemm_samples, 64);
	CHECK(r.copy_priority < r.compute_priority); /* the copy stream outranks compute */
	if (g == SDMA_ENG_KERNEL)
		CHECK(r.kernel_grid > 0 && r.kernel_block > 0);
	for (int i = 0; i < r.n; i++) {
		CHECK(r.t[SDMA_T_GEMM_ALONE][i] > 0);
		CHECK(r.t[SDMA_T_COPY_ALONE][i] > 0);
		CHECK(r.t[SDMA_T_SEQ_GEMM][i] > 0);
		CHECK(r.t[SDMA_T_SEQ_COPY][i] > 0);
		CHECK(r.t[SDMA_T_SEQ][i] + TOL_NS >= r.t[SDMA_T_SEQ_GEMM][i] + r.t[SDMA_T_SEQ_COPY][i]);
		CHECK(r.t[SDMA_T_OVL][i] > 0);
		CHECK(r.t[SDMA_T_OVL_GEMM_END][i] > r.t[SDMA_T_OVL_GEMM_START][i]);
		CHECK(r.t[SDMA_T_OVL_COPY_END][i] > r.t[SDMA_T_OVL_COPY_START][i]);
		CHECK(r.t[SDMA_T_OVL][i] + TOL_NS >= r.t[SDMA_T_OVL_GEMM_END][i]);
		CHECK(r.t[SDMA_T_OVL][i] + TOL_NS >= r.t[SDMA_T_OVL_COPY_END][i]);
	}
	sdma_summarise(&c, &r, &s);
	CHECK(s.seq_ms > 0 && s.ovl_ms > 0);
	CHECK(s.gemm_alone_tflops > 0 && s.copy_alone_gbps > 0);
	CHECK(s.gemm_together_tflops > 0 && s.copy_together_gbps > 0);
	CHECK(s.overlap_ms >= 0 && s.overlap_ms <= s.copy_together_ms + 1e-6);
	printf("  %s/%s: seq %.3f ms, ovl %.3f ms (%s), savings %.1f%%; GEMM %.1f -> %.1f "
	       "TFLOP/s, copy %.2f -> %.2f GB/s, hidden %.0f%%\n",
	       sdma_dir_name(d), sdma_engine_name(g), s.seq_ms, s.ovl_ms,
	       s.ovl_ms <= s.seq_ms + 0.05 ? "overlapped <= sequential + 0.05 ms"
					   : "NOTE: overlapped slower than sequential",
	       s.savings_pct, s.gemm_alone_tflops, s.gemm_together_tflops, s.copy_alone_gbps,
	       s.copy_together_gbps, s.copy_hidden_pct);
	sdma_result_release(&r);
}

static void test_query_describes_the_device(void)
{
	struct sdma_config c;
	struct sdma_gpu_info info;
	struct aorta_error e;
	NEED_GPU();
	sdma_config_defaults(&c);
	CHECK_EQ_I(sdma_query_gpu(&c, &info, &e), AORTA_OK);
	CHECK_EQ_I(info.count, ndev);
	CHECK(info.dev.name[0] != '\0');
	CHECK(info.dev.sm_count > 0);
	CHECK(info.dev.free_bytes > 0 && info.dev.free_bytes <= info.dev.total_bytes);
	CHECK(info.host_avail_bytes > 0);
	printf("  device 0 of %d: %s, %d SMs, %.1f of %.1f GiB free\n", info.count, info.dev.name,
	       info.dev.sm_count, info.dev.free_bytes / 1073741824.0,
	       info.dev.total_bytes / 1073741824.0);
}

static void test_bad_device_and_oversize_are_refused_before_allocation(void)
{
	struct sdma_config c;
	struct sdma_gpu_info info;
	struct aorta_error e;
	NEED_GPU();
	sdma_config_defaults(&c);
	c.device = ndev;
	CHECK_EQ_I(sdma_query_gpu(&c, &info, &e), AORTA_OK);
	CHECK_EQ_I(sdma_check_machine(&c, &info, &e), AORTA_EUSAGE);
	CHECK(strstr(e.msg, "no such device") != NULL);
	sdma_config_defaults(&c);
	c.matrix_size = SDMA_MAX_MATRIX;
	c.copy_mb = SDMA_MAX_COPY_MB;
	CHECK_EQ_I(sdma_query_gpu(&c, &info, &e), AORTA_OK);
	CHECK_EQ_I(sdma_check_machine(&c, &info, &e), AORTA_EUSAGE);
	CHECK(strstr(e.msg, "GiB free") != NULL);
	if (ndev == 1) {
		sdma_config_defaults(&c);
		c.dir = SDMA_P2P;
		c.peer = 1;
		CHECK_EQ_I(sdma_query_gpu(&c, &info, &e), AORTA_OK);
		CHECK_EQ_I(sdma_check_machine(&c, &info, &e), AORTA_EUSAGE);
		CHECK(strstr(e.msg, "needs two GPUs") != NULL);
	}
}

static void test_d2h_copy_engine(void) { NEED_GPU(); run_one(SDMA_D2H, SDMA_ENG_COPY); }
static void test_d2h_kernel(void) { NEED_GPU(); run_one(SDMA_D2H, SDMA_ENG_KERNEL); }
static void test_h2d_copy_engine(void) { NEED_GPU(); run_one(SDMA_H2D, SDMA_ENG_COPY); }
static void test_h2d_kernel(void) { NEED_GPU(); run_one(SDMA_H2D, SDMA_ENG_KERNEL); }
static void test_d2d_copy_engine(void) { NEED_GPU(); run_one(SDMA_D2D, SDMA_ENG_COPY); }
static void test_d2d_kernel(void) { NEED_GPU(); run_one(SDMA_D2D, SDMA_ENG_KERNEL); }

static void test_p2p_copy_engine(void)
{
	NEED_GPU();
	if (ndev < 2)
		SKIP("p2p needs two GPUs");
	run_one(SDMA_P2P, SDMA_ENG_COPY);
}

static void test_p2p_kernel(void)
{
	NEED_GPU();
	if (ndev < 2)
		SKIP("p2p needs two GPUs");
	run_one(SDMA_P2P, SDMA_ENG_KERNEL);
}

/* an odd matrix size (relu's odd tail, unaligned GEMM) and zero cold iterations */
static void test_odd_matrix_and_no_warmup(void)
{
	struct sdma_config c = small(SDMA_D2D, SDMA_ENG_KERNEL);
	struct sdma_gpu_info info;
	struct sdma_result r;
	struct aorta_error e;
	NEED_GPU();
	c.matrix_size = 127;
	c.cold_iters = 0;
	c.iterations = 2;
	c.copy_mb = 1;
	CHECK_EQ_I(sdma_query_gpu(&c, &info, &e), AORTA_OK);
	CHECK_EQ_I(sdma_check_machine(&c, &info, &e), AORTA_OK);
	sdma_result_init(&r, &c);
	CHECK_EQ_I(sdma_run_gpu(&c, &r, &e), AORTA_OK);
	CHECK(r.copy_ok && r.copy_checked == 3);
	CHECK(r.gemm_ok && r.gemm_checked);
	sdma_result_release(&r);
}

int main(void)
{
	struct aorta_error e;
	aorta_quiet = 1;
	if (gpu_device_count(&ndev, &e) != AORTA_OK)
		ndev = 0;
	TEST(test_query_describes_the_device);
	TEST(test_bad_device_and_oversize_are_refused_before_allocation);
	TEST(test_d2h_copy_engine);
	TEST(test_d2h_kernel);
	TEST(test_h2d_copy_engine);
	TEST(test_h2d_kernel);
	TEST(test_d2d_copy_engine);
	TEST(test_d2d_kernel);
	TEST(test_p2p_copy_engine);
	TEST(test_p2p_kernel);
	TEST(test_odd_matrix_and_no_warmup);
	return test_report();
}
