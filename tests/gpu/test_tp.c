/*
 * test_tp.c - the tune-tp GPU side (src/tp/tp_*_gpu.c, tp_kern.cu) on real
 * GPUs: every operator class (AG fprop, RS fprop, bulk AG of dgrad, bulk
 * RS of wgrad) with every method it supports, at TP 1 and TP 2, on small
 * shapes and on Llama-3-8B fc1/fc2 at 8192 tokens (TP 2), in bf16 plus
 * one fp16 and one fp32 case.  Each case asserts that the configuration's
 * output on every rank equals the reference (unsplit GEMM on NCCL's all-
 * gather, NCCL's reduce-scatter of the unsplit GEMM) within the bound the
 * measurement states, and that its times are positive and sane:
 * e2e >= 0.5 max(gemm, comm) where the parts take 0.1 ms or more (an
 * overlapped operator cannot beat the slower of its two parts by 2x; a
 * broken timer or a skipped GEMM would;
 * for ring exchange, whose transfers are copy-engine copies rather than
 * NCCL's collective, e2e >= 0.5 gemm).
 * Also: inputs that cannot run are rejected before any GPU work, a traced
 * run writes its Kineto file, and overlap_ratio stays NaN (the host
 * computes it).
 *
 * Without a GPU every test is skipped; TP 2 cases skip with fewer than
 * two GPUs.  Times are printed, never asserted against targets (the bench
 * bench/tune_tp/run.sh does that comparison).  Last line: "N passed, N
 * failed, N skipped".
 */
#include "gpu/cupti.h"
#include "tp/tp_gpu.h"
#include "tp/tp_host.h"
#include "testing.h"

#include <execinfo.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

static int ndev;

#define NEED(n) do { if (ndev < (n)) { char why_[64]; \
	snprintf(why_, sizeof(why_), "needs %d GPU(s), %d visible", (n), ndev); SKIP(why_); } } while (0)

static struct tp_session *open_tp(int tp, long long max_elems)
{
	struct tp_session *s = NULL;
	struct aorta_error e;
	int sms = 0;

	memset(&e, 0, sizeof(e));
	if (tp_gpu_open(tp, max_elems, &s, &sms, &e) != AORTA_OK) {
		fprintf(stderr, "  FAIL %s: tp_gpu_open(%d): %s\n", t_cur, tp, e.msg);
		t_cur_failed = 1;
		return NULL;
	}
	CHECK(sms > 0);
	return s;
}

static struct tp_shape shape(int tp, enum tp_coll coll, int bulk, long long m, long long n, long long k,
			     long long crows, long long ccols)
{
	struct tp_shape sh;

	memset(&sh, 0, sizeof(sh));
	sh.op = coll == TP_AG ? TP_FC1 : TP_FC2;
	sh.phase = bulk ? (coll == TP_AG ? TP_DGRAD : TP_WGRAD) : TP_FPROP;
	sh.coll = coll;
	sh.bulk_only = bulk;
	sh.tp = tp;
	sh.m = m, sh.n = n, sh.k = k;
	sh.coll_rows = crows ? crows : m;
	sh.coll_cols = ccols ? ccols : (coll == TP_AG ? k : n);
	sh.dtype = TP_BF16;
	return sh;
}

static struct tp_cfg cfg_of(enum tp_method m, int num_sm, int margin, int agg, int splits, int ce)
{
	struct tp_cfg c;

	memset(&c, 0, sizeof(c));
	c.method = m;
	c.num_sm = num_sm;
	c.cga_size = m == TP_RING_EXCHANGE ? 1 : 2;
	c.set_sm_margin = margin;
	c.aggregate = agg;
	c.num_splits = splits;
	c.use_ce = ce;
	return c;
}

static const char *mname(enum tp_method m)
{
	static const char *const n[] = { "none", "bulk", "ring_exchange", "pipeline" };
	return n[m];
}

/* measures with the check and asserts correctness and sane times */
static void run_case(struct tp_session *s, const struct tp_shape *sh, const struct tp_cfg *c, const char *trace_dir)
{
	struct tp_measure_opts o;
	struct tp_meas m;
	struct aorta_error e;
	enum aorta_status st;

	memset(&o, 0, sizeof(o));
	memset(&e, 0, sizeof(e));
	o.warmup = 3;
	o.iters = 10;
	o.check = 1;
	o.seed = 42;
	o.trace_dir = trace_dir;
	st = tp_gpu_measure(s, sh, c, &o, &m, &e);
	if (st != AORTA_OK) {
		fprintf(stderr, "  FAIL %s: %s m=%lld n=%lld k=%lld: %s\n", t_cur, mname(c->method), sh->m, sh->n, sh->k,
			e.msg);
		t_cur_failed = 1;
		return;
	}
	printf("  tp%d %s%s %-13s sm %2d split %d agg %d ce %d m%lld n%lld k%lld: e2e %.3f ms (gemm %.3f, comm %.3f, "
	       "serial %.3f) err %.2g %s\n",
	       sh->tp, sh->bulk_only ? "bulk-" : "", sh->coll == TP_AG ? "AG" : "RS", mname(c->method), c->num_sm,
	       c->num_splits, c->aggregate, c->use_ce, sh->m, sh->n, sh->k, m.e2e_ms, m.gemm_ms, m.comm_ms,
	       m.serial_ms, m.max_rel_err, m.check_ok ? "ok" : "MISMATCH");
	if (!m.check_ok)
		fprintf(stderr, "  FAIL %s: %s: %s\n", t_cur, mname(c->method), m.check_msg);
	CHECK(m.check_ok);
	CHECK(m.max_rel_err >= 0 && m.max_rel_err < 0.05);
	CHECK(m.e2e_ms > 0 && m.gemm_ms > 0 && m.serial_ms > 0 && m.comm_ms >= 0);
	if (sh->tp > 1)
		CHECK(m.comm_ms > 0);
	CHECK(m.e2e_min_ms <= m.e2e_ms && m.e2e_ms <= m.e2e_max_ms);
	/* the GEMM's work is all there; so is NCCL's collective for the
	 * methods that call it with the same bytes (ring exchange moves the
	 * data with copy-engine copies instead, which on small shapes beat
	 * NCCL's latency floor, so only the GEMM bounds it).  Only where the
	 * parts take 0.1 ms or more: below, each figure is a few launches'
	 * latency (the small shapes' GEMM is ~1 us of work measured as 8-50 us)
	 * and a slow host makes one part's median exceed the whole's (seen
	 * once in 40 runs under ASan: gemm 0.047 ms, serial 0.021 ms) */
	if ((m.gemm_ms > m.comm_ms ? m.gemm_ms : m.comm_ms) >= 0.1) {
		if (c->method == TP_RING_EXCHANGE)
			CHECK(m.e2e_ms >= 0.5 * m.gemm_ms);
		else
			CHECK(m.e2e_ms >= 0.5 * (m.gemm_ms > m.comm_ms ? m.gemm_ms : m.comm_ms));
		CHECK(m.serial_ms >= 0.5 * (m.gemm_ms > m.comm_ms ? m.gemm_ms : m.comm_ms));
	}
	CHECK(isnan(m.overlap_ratio));
	if (!trace_dir)
		CHECK(m.trace_path[0] == 0);
}

/* AG fprop: none, ring (copy engine), ring aggregate, ring with SM copies */
static void ag_fprop(int tp)
{
	struct tp_session *s = open_tp(tp, 1024 * 768);
	struct tp_shape sh = shape(tp, TP_AG, 0, 1024, 768, 512, 0, 0);
	struct tp_cfg cs[] = {
		cfg_of(TP_NONE, 0, 0, 0, 1, 1),
		cfg_of(TP_RING_EXCHANGE, 1, 0, 0, tp, 1),
		cfg_of(TP_RING_EXCHANGE, 1, 0, 1, tp, 1),
		cfg_of(TP_RING_EXCHANGE, 4, 1, 0, tp, 0),
	};

	if (!s)
		return;
	for (size_t i = 0; i < sizeof(cs) / sizeof(cs[0]); i++)
		run_case(s, &sh, &cs[i], NULL);
	tp_gpu_close(s);
}

static void rs_fprop(int tp)
{
	struct tp_session *s = open_tp(tp, 1024 * 768);
	struct tp_shape sh = shape(tp, TP_RS, 0, 1024, 768, 512, 0, 0);
	struct tp_cfg cs[] = {
		cfg_of(TP_NONE, 0, 0, 0, 1, 1),
		cfg_of(TP_RING_EXCHANGE, 1, 0, 0, tp, 1),
		cfg_of(TP_RING_EXCHANGE, 8, 0, 0, tp, 0),
		cfg_of(TP_RING_EXCHANGE, 1, 0, 0, 4 * tp, 1),  /* TP 2: sub-chunks, sum in the GEMM epilogue */
		cfg_of(TP_RING_EXCHANGE, 8, 0, 0, 8 * tp, 0),
		cfg_of(TP_PIPELINE, 16, 1, 0, 4, 1),
		cfg_of(TP_PIPELINE, 0, 0, 0, 2, 1),
	};

	if (!s)
		return;
	for (size_t i = 0; i < sizeof(cs) / sizeof(cs[0]); i++)
		run_case(s, &sh, &cs[i], NULL);
	tp_gpu_close(s);
}

/* dgrad with an independent AG of X [S/tp, h] -> [S, h]; wgrad with an
 * independent RS of [S, h] */
static void bulk_ops(int tp)
{
	struct tp_session *s = open_tp(tp, 1024 * 768);
	struct tp_shape ag = shape(tp, TP_AG, 1, 1024, 512, 768, 1024, 512);
	struct tp_shape rs = shape(tp, TP_RS, 1, 512, 768, 1024, 1024, 512);
	struct tp_cfg none = cfg_of(TP_NONE, 0, 0, 0, 1, 1);
	struct tp_cfg bulk = cfg_of(TP_BULK, 8, 1, 0, 1, 1);
	struct tp_cfg bulk2 = cfg_of(TP_BULK, 2, 0, 0, 1, 1);

	if (!s)
		return;
	run_case(s, &ag, &none, NULL);
	run_case(s, &ag, &bulk, NULL);
	run_case(s, &rs, &none, NULL);
	run_case(s, &rs, &bulk, NULL);
	run_case(s, &rs, &bulk2, NULL);
	tp_gpu_close(s);
}

static void test_tp1_ag_fprop(void) { NEED(1); ag_fprop(1); }
static void test_tp1_rs_fprop(void) { NEED(1); rs_fprop(1); }
static void test_tp1_bulk(void) { NEED(1); bulk_ops(1); }
static void test_tp2_ag_fprop(void) { NEED(2); ag_fprop(2); }
static void test_tp2_rs_fprop(void) { NEED(2); rs_fprop(2); }
static void test_tp2_bulk(void) { NEED(2); bulk_ops(2); }

/* Llama-3-8B (h 4096, intermediate 14336, SwiGLU) at 8192 tokens, TP 2 */
static void test_tp2_llama8b_fc1_fc2(void)
{
	struct tp_session *s;
	struct tp_shape fc1, fc2;
	struct tp_cfg c;

	NEED(2);
	s = open_tp(2, 8192LL * 14336);
	if (!s)
		return;
	fc1 = shape(2, TP_AG, 0, 8192, 2 * 14336 / 2, 4096, 0, 0);
	fc2 = shape(2, TP_RS, 0, 8192, 4096, 14336 / 2, 0, 0);
	c = cfg_of(TP_NONE, 0, 0, 0, 1, 1);
	run_case(s, &fc1, &c, NULL);
	c = cfg_of(TP_RING_EXCHANGE, 1, 0, 0, 2, 1);
	run_case(s, &fc1, &c, NULL);
	c = cfg_of(TP_NONE, 0, 0, 0, 1, 1);
	run_case(s, &fc2, &c, NULL);
	c = cfg_of(TP_RING_EXCHANGE, 1, 0, 0, 2, 1);
	run_case(s, &fc2, &c, NULL);
	c = cfg_of(TP_RING_EXCHANGE, 1, 0, 0, 8, 1);
	run_case(s, &fc2, &c, NULL);
	c = cfg_of(TP_PIPELINE, 16, 1, 0, 4, 1);
	run_case(s, &fc2, &c, NULL);
	tp_gpu_close(s);
}

static void test_fp16_and_fp32(void)
{
	int tp = ndev >= 2 ? 2 : 1;
	struct tp_session *s;
	struct tp_shape sh;
	struct tp_cfg c = cfg_of(TP_RING_EXCHANGE, 1, 0, 0, tp, 1);

	NEED(1);
	s = open_tp(tp, 1024 * 768);
	if (!s)
		return;
	sh = shape(tp, TP_AG, 0, 1024, 768, 512, 0, 0);
	sh.dtype = TP_FP16;
	run_case(s, &sh, &c, NULL);
	sh = shape(tp, TP_RS, 0, 1024, 768, 512, 0, 0);
	sh.dtype = TP_FP32;
	run_case(s, &sh, &c, NULL);
	tp_gpu_close(s);
}

/* what cannot run is refused with the right status, and the session
 * still works afterwards (nothing was sent to the GPU) */
static void test_bad_inputs_rejected_before_gpu_work(void)
{
	int tp = ndev >= 2 ? 2 : 1;
	struct tp_session *s;
	struct tp_shape sh;
	struct tp_cfg c;
	struct tp_measure_opts o;
	struct tp_meas m;
	struct aorta_error e;

	NEED(1);
	memset(&o, 0, sizeof(o));
	o.warmup = 1;
	o.iters = 2;
	s = open_tp(tp, 1024 * 768);
	if (!s)
		return;
	sh = shape(tp, TP_AG, 0, 1024, 768, 512, 0, 0);
	c = cfg_of(TP_PIPELINE, 16, 1, 0, 4, 1);
	CHECK_EQ_I(tp_gpu_measure(s, &sh, &c, &o, &m, &e), AORTA_EUSAGE);
	CHECK(strstr(e.msg, "pipeline") != NULL);
	c = cfg_of(TP_BULK, 16, 1, 0, 1, 1);
	CHECK_EQ_I(tp_gpu_measure(s, &sh, &c, &o, &m, &e), AORTA_EUSAGE);
	sh = shape(tp, TP_RS, 1, 512, 768, 1024, 1024, 512);
	c = cfg_of(TP_RING_EXCHANGE, 1, 0, 0, tp, 1);
	CHECK_EQ_I(tp_gpu_measure(s, &sh, &c, &o, &m, &e), AORTA_EUSAGE);
	sh = shape(tp, TP_AG, 0, 1024, 768, 500, 0, 0);
	c = cfg_of(TP_NONE, 0, 0, 0, 1, 1);
	CHECK_EQ_I(tp_gpu_measure(s, &sh, &c, &o, &m, &e), AORTA_EINPUT);
	sh = shape(tp, TP_AG, 0, 4096, 768, 512, 0, 0); /* 4096 x 768 > max_elems */
	CHECK_EQ_I(tp_gpu_measure(s, &sh, &c, &o, &m, &e), AORTA_EUSAGE);
	CHECK(strstr(e.msg, "opened for") != NULL);
	sh = shape(tp + 1, TP_AG, 0, 1024, 768, 512, 0, 0);
	CHECK_EQ_I(tp_gpu_measure(s, &sh, &c, &o, &m, &e), AORTA_EUSAGE);
	sh = shape(tp, TP_RS, 0, 1024, 768, 512, 0, 0);
	c = cfg_of(TP_PIPELINE, 16, 1, 0, 3, 1); /* 3 does not divide 512 or 1024 rows */
	CHECK_EQ_I(tp_gpu_measure(s, &sh, &c, &o, &m, &e), AORTA_EUSAGE);
	c = cfg_of(TP_PIPELINE, 16, 1, 0, 4, 1);
	run_case(s, &sh, &c, NULL); /* still usable */
	tp_gpu_close(s);
	CHECK_EQ_I(tp_gpu_open(ndev + 1, 1000, &s, NULL, &e), ndev + 1 <= 8 ? AORTA_EGPU : AORTA_EUSAGE);
	CHECK(s == NULL);
	CHECK_EQ_I(tp_gpu_open(0, 1000, &s, NULL, &e), AORTA_EUSAGE);
}

static void test_trace_written_for_the_measured_iterations(void)
{
	int tp = ndev >= 2 ? 2 : 1;
	char dir[] = "/tmp/aorta_tp_trace_XXXXXX", why[256];
	struct tp_session *s;
	struct tp_shape sh;
	struct tp_cfg c;
	struct tp_measure_opts o;
	struct tp_meas m;
	struct aorta_error e;
	struct stat stt;

	NEED(1);
	if (!cupti_available(why, sizeof(why)))
		SKIP(why);
	if (!mkdtemp(dir))
		SKIP("cannot make a temporary folder");
	s = open_tp(tp, 1024 * 768);
	if (!s)
		return;
	memset(&o, 0, sizeof(o));
	o.warmup = 2;
	o.iters = 4;
	o.trace_dir = dir;
	sh = shape(tp, TP_RS, 0, 1024, 768, 512, 0, 0);
	c = cfg_of(TP_RING_EXCHANGE, 1, 0, 0, tp, 1);
	CHECK_EQ_I(tp_gpu_measure(s, &sh, &c, &o, &m, &e), AORTA_OK);
	printf("  trace: %s\n", m.trace_path);
	CHECK(m.trace_path[0] != 0);
	CHECK(stat(m.trace_path, &stt) == 0 && stt.st_size > 1000);
	CHECK(strstr(m.check_msg, "not checked") != NULL);
	if (tp == 2 && m.trace_path[0]) {
		/* the copy-engine pushes are peer copies (CUPTI kind MEMCPY2):
		 * they are in the trace and the overlap ratio sees them */
		FILE *f = fopen(m.trace_path, "r");
		char *txt = f ? calloc(1, (size_t)stt.st_size + 1) : NULL;
		double ratio = NAN;
		int64_t inter = -1, comm = -1;

		CHECK(txt != NULL);
		if (txt && fread(txt, 1, (size_t)stt.st_size, f) > 0)
			CHECK(strstr(txt, "Memcpy PtoP (Device -> Device)") != NULL);
		free(txt);
		if (f)
			fclose(f);
		CHECK_EQ_I(tp_trace_overlap(m.trace_path, &ratio, &inter, &comm, &e), AORTA_OK);
		printf("  overlap ratio %.3f (comm %lld ns)\n", ratio, (long long)comm);
		CHECK(comm > 0);
		CHECK(ratio >= 0 && ratio <= 1);
	}
	tp_gpu_close(s);
}

/* ring-exchange reduce-scatter at TP 2, every variant, back to back and
 * repeated: the device-spin design hung here one time in a few (rank 1's
 * wait for the peer's flag timed out); the event design must not */
static void test_tp2_ring_rs_repeated(void)
{
	struct tp_session *s;
	struct tp_shape fc2;
	struct tp_cfg c;
	static const int splits[] = { 2, 4, 8, 16 };

	NEED(2);
	s = open_tp(2, 8192LL * 7168);
	if (!s)
		return;
	fc2 = shape(2, TP_RS, 0, 8192, 4096, 14336 / 2, 0, 0);
	for (int rep = 0; rep < 3 && !t_cur_failed; rep++)
		for (int i = 0; i < 4 && !t_cur_failed; i++)
			for (int ce = 1; ce >= 0 && !t_cur_failed; ce--) {
				c = cfg_of(TP_RING_EXCHANGE, ce ? 1 : 16, 0, 0, splits[i], ce);
				run_case(s, &fc2, &c, NULL);
			}
	tp_gpu_close(s);
}

/* A fatal signal (a heap check's abort, a segfault) prints the stack of the
 * thread that took it before the default action: the device has no
 * debugger.  This test died in about 1 run of 20 on 2 GPUs while
 * tp_gpu_close tore every rank down at once (job_teardown ->
 * ncclCommDestroy -> cuMemUnmap in libcuda -> free); it now finalizes
 * every rank at once and tears down one rank after the other
 * (tp_session_gpu.c, above job_finalize). */
static void on_fatal(int sig)
{
	static const char m[] = "test_tp: fatal signal; the stack of the thread that took it:\n";
	void *f[64];
	int n = backtrace(f, 64);

	if (write(2, m, sizeof(m) - 1) < 0)
		n = 0;
	backtrace_symbols_fd(f, n, 2);
	signal(sig, SIG_DFL);
	raise(sig);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	void *warm[1];
	backtrace(warm, 1); /* loads the unwinder now, not inside the handler */
	signal(SIGABRT, on_fatal);
	signal(SIGSEGV, on_fatal);
	ndev = tp_gpu_count();
	if (ndev == 0)
		printf("no GPU visible: every test below is skipped\n");
	TEST(test_tp1_ag_fprop);
	TEST(test_tp1_rs_fprop);
	TEST(test_tp1_bulk);
	TEST(test_tp2_ag_fprop);
	TEST(test_tp2_rs_fprop);
	TEST(test_tp2_bulk);
	TEST(test_fp16_and_fp32);
	TEST(test_bad_inputs_rejected_before_gpu_work);
	TEST(test_trace_written_for_the_measured_iterations);
	TEST(test_tp2_llama8b_fc1_fc2);
	TEST(test_tp2_ring_rs_repeated);
	return test_report();
}
