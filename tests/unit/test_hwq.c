/*
 * test_hwq.c - aorta hwq's host side on known inputs: percentiles and
 * sample std, switch latency from spans and from a hand-made Kineto trace
 * (read with the project's reader), per-stream busy time, sweep
 * efficiency/peak/inflection, result JSON round trip, compare with both
 * latency spellings and on malformed input, and the workload table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <yajl/yajl_tree.h>

#include "base/output.h"
#include "hwq/hwq_host.h"
#include "testing.h"

static char tmpdir[] = "/tmp/aorta-test-hwq-XXXXXX";

static void test_percentiles_interpolate_at_n_minus_1_p(void)
{
	double v[] = { 5, 1, 4, 2, 3 };
	struct hwq_stats s;
	hwq_stats_of(v, 5, &s);
	CHECK_NEAR(s.mean, 3.0, 1e-12);
	CHECK_NEAR(s.p50, 3.0, 1e-12);
	CHECK_NEAR(s.p95, 4.8, 1e-12);  /* index 3.8 */
	CHECK_NEAR(s.p99, 4.96, 1e-12); /* index 3.96 */
	CHECK_NEAR(s.min, 1.0, 0);
	CHECK_NEAR(s.max, 5.0, 0);
	CHECK_NEAR(s.std, 1.5811388300841898, 1e-12); /* sample std: sqrt(2.5) */
	CHECK_NEAR(v[0], 5.0, 0);                     /* input untouched */
	double one = 7;
	hwq_stats_of(&one, 1, &s);
	CHECK_NEAR(s.p99, 7.0, 0);
	CHECK_NEAR(s.std, 0.0, 0);
}

static void test_switch_latency_inter_vs_intra(void)
{
	/* ms-scale spans in ns: s0 [0,10] [12,20] [40,50]; s1 [25,30]
	 * sorted by end: gaps 2 (intra), 5 (inter), 10 (inter) */
	const int64_t M = 1000000;
	int64_t st[] = { 40 * M, 0, 25 * M, 12 * M };
	int64_t en[] = { 50 * M, 10 * M, 30 * M, 20 * M };
	int32_t sid[] = { 0, 0, 1, 0 };
	struct hwq_switch sw;
	hwq_switch_of(st, en, sid, 4, &sw);
	CHECK_EQ_I(sw.intra_n, 1);
	CHECK_EQ_I(sw.inter_n, 2);
	CHECK_NEAR(sw.intra_ms, 2.0, 1e-9);
	CHECK_NEAR(sw.inter_ms, 7.5, 1e-9);
	CHECK_NEAR(sw.overhead_ms, 5.5, 1e-9);
	/* overlapping kernels (gap <= 0) count nowhere; overhead never < 0 */
	int64_t st2[] = { 0, 5 * M, 30 * M };
	int64_t en2[] = { 10 * M, 20 * M, 40 * M };
	int32_t sid2[] = { 0, 1, 1 };
	hwq_switch_of(st2, en2, sid2, 3, &sw);
	CHECK_EQ_I(sw.inter_n, 0);
	CHECK_EQ_I(sw.intra_n, 1);
	CHECK_NEAR(sw.overhead_ms, 0.0, 0);
}

static void put_kernel(FILE *f, int first, const char *name, int stream, double ts_us, double dur_us, int corr)
{
	fprintf(f,
		"%s  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, \"tid\": %d, \"ts\": %.3f, "
		"\"dur\": %.3f, \"args\": {\"device\": 0, \"stream\": %d, \"correlation\": %d}}\n",
		first ? "" : ",", name, stream, ts_us, dur_us, stream, corr);
}

static void test_trace_metrics_from_kineto_file(void)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/t.pt.trace.json", tmpdir);
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fprintf(f, "{\"schemaVersion\": 1, \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 0, \"world_size\": 1},\n"
		   " \"traceEvents\": [\n");
	/* stream 7 (index 0): [100,110] [112,120] [140,150] and [105,115]
	 * overlapping: union 100..120 + 140..150 = 30 us; stream 9 (index
	 * 1): [125,130]; stream 11 is not the workload's */
	put_kernel(f, 1, "k_a", 7, 100, 10, 1);
	put_kernel(f, 0, "k_b", 7, 112, 8, 2);
	put_kernel(f, 0, "k_c", 9, 125, 5, 3);
	put_kernel(f, 0, "k_d", 7, 140, 10, 4);
	put_kernel(f, 0, "k_e", 7, 105, 10, 5);
	put_kernel(f, 0, "k_other", 11, 200, 10, 6);
	fprintf(f, "]}\n");
	fclose(f);

	struct hwq_result r;
	memset(&r, 0, sizeof(r));
	r.raw.streams = 2;
	r.raw.timing_iters = 2;
	long long ids[2] = { 7, 9 };
	r.raw.stream_ids = ids;
	struct aorta_error e = { 0 };
	CHECK_EQ_I(hwq_trace_metrics(&r, path, &e), AORTA_OK);
	CHECK_EQ_I(r.trace_kernels, 5);
	if (r.kernels_per_stream) {
		CHECK_EQ_I(r.kernels_per_stream[0], 4);
		CHECK_EQ_I(r.kernels_per_stream[1], 1);
	}
	if (r.per_stream_ms) {
		CHECK_NEAR(r.per_stream_ms[0], 0.030 / 2, 1e-9); /* 30 us over 2 iterations */
		CHECK_NEAR(r.per_stream_ms[1], 0.005 / 2, 1e-9);
	}
	/* by end: a(110,s0) e(115,s0: gap<0) b(120,s0: gap -3) c(130,s1: gap 5) d(150,s0: gap 10) */
	CHECK_EQ_I(r.sw.inter_n, 2);
	CHECK_EQ_I(r.sw.intra_n, 0);
	CHECK_NEAR(r.sw.inter_ms, 0.0075, 1e-9);
	CHECK_NEAR(r.sw.overhead_ms, 0.0075, 1e-9);
	r.raw.stream_ids = NULL;
	hwq_result_release(&r);

	CHECK(hwq_trace_metrics(&r, "/nonexistent/x.json", &e) != AORTA_OK);
	hwq_result_release(&r);

	/* the timing pass's trace is the run's own output read back: the next
	 * run of the same process writes that name again (its step count and
	 * pid are the same), which the output guard must not refuse as an
	 * input of the user's */
	struct outfile of = { 0 };
	struct aorta_error we = { 0 };
	CHECK_EQ_I(out_open(&of, path, &we), AORTA_OK);
	if (of.f)
		out_abort(&of);

	/* no kernel on a workload stream (a graph replay's own streams):
	 * the trace's streams are numbered in order of appearance */
	long long other[2] = { 100, 101 };
	memset(&r, 0, sizeof(r));
	r.raw.streams = 2;
	r.raw.timing_iters = 1;
	r.raw.stream_ids = other;
	CHECK_EQ_I(hwq_trace_metrics(&r, path, &e), AORTA_OK);
	CHECK_EQ_I(r.trace_by_appearance, 1);
	CHECK_EQ_I(r.trace_kernels, 6);
	if (r.kernels_per_stream) {
		CHECK_EQ_I(r.kernels_per_stream[0], 4); /* stream 7 first */
		CHECK_EQ_I(r.kernels_per_stream[1], 2); /* 9, and 11 beyond the count */
	}
	r.raw.stream_ids = NULL;
	hwq_result_release(&r);
}

static void test_trace_streams_mapped_by_markers(void)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/m.pt.trace.json", tmpdir);
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fprintf(f, "{\"schemaVersion\": 1, \"traceEvents\": [\n");
	/* markers: index 0 on trace stream 41 (first), index 1 on 40 */
	put_kernel(f, 1, "hwq_stream_marker_kernel(int)", 41, 10, 1, 1);
	put_kernel(f, 0, "hwq_stream_marker_kernel(int)", 40, 20, 1, 2);
	put_kernel(f, 0, "k", 41, 100, 10, 3);
	put_kernel(f, 0, "k", 41, 120, 10, 4);
	put_kernel(f, 0, "k", 40, 140, 10, 5);
	fprintf(f, "]}\n");
	fclose(f);
	struct hwq_result r;
	memset(&r, 0, sizeof(r));
	r.raw.streams = 2;
	r.raw.timing_iters = 1;
	long long wrong[2] = { 40, 41 }; /* what cudaStreamGetId said: not to be trusted */
	r.raw.stream_ids = wrong;
	struct aorta_error e = { 0 };
	CHECK_EQ_I(hwq_trace_metrics(&r, path, &e), AORTA_OK);
	CHECK_EQ_I(r.trace_by_markers, 1);
	CHECK_EQ_I(r.trace_kernels, 3); /* markers left out */
	if (r.kernels_per_stream) {
		CHECK_EQ_I(r.kernels_per_stream[0], 2);
		CHECK_EQ_I(r.kernels_per_stream[1], 1);
	}
	CHECK_EQ_I(r.sw.intra_n, 1);
	CHECK_EQ_I(r.sw.inter_n, 1);
	r.raw.stream_ids = NULL;
	hwq_result_release(&r);
}

static void test_text_sections_and_flags(void)
{
	struct hwq_result r;
	memset(&r, 0, sizeof(r));
	r.w = hwq_workload_find("hetero_kernels");
	r.cfg.streams = r.raw.streams = 2;
	r.cfg.iters = r.raw.iters = 5;
	r.cfg.sync = HWQ_SYNC_END_ONLY;
	r.raw.iter_ms = xmalloc(5 * sizeof(double));
	double it[] = { 1, 1, 1, 1, 9 }; /* P99/P50 = 8.68: WARNING */
	memcpy(r.raw.iter_ms, it, sizeof(it));
	r.raw.total_wall_ms = 20;
	r.raw.work_per_iter = 1;
	r.raw.work_scale = 1;
	r.raw.check_ok = 1;
	snprintf(r.raw.trace_path, sizeof(r.raw.trace_path), "x.json");
	r.sw.overhead_ms = 0.2;
	hwq_result_derive(&r);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	hwq_print_result(f, &r);
	fclose(f);
	CHECK(strstr(buf, "WORKLOAD: hetero_kernels") != NULL);
	CHECK(strstr(buf, "\nRESULTS\n") != NULL);
	CHECK(strstr(buf, "QUEUE SWITCH ANALYSIS") != NULL);
	CHECK(strstr(buf, "INTERPRETATION") != NULL);
	CHECK(strstr(buf, "WARNING: P99/P50") != NULL);
	CHECK(strstr(buf, "(significant)") != NULL);
	CHECK(strstr(buf, "host enqueue times") != NULL); /* end_only says what it measured */
	free(buf);
	r.raw.iter_ms[4] = 1.6; /* P99/P50 = 1.58: Note */
	r.sw.overhead_ms = 0.05;
	hwq_result_derive(&r);
	f = open_memstream(&buf, &len);
	hwq_print_result(f, &r);
	fclose(f);
	CHECK(strstr(buf, "Note: P99/P50") != NULL && strstr(buf, "WARNING") == NULL);
	CHECK(strstr(buf, "(moderate)") != NULL);
	free(buf);
	hwq_result_release(&r);
}

static void test_sweep_efficiency_peak_inflection(void)
{
	int sc[] = { 1, 2, 4, 8 };
	double tp[] = { 10, 19, 30, 31 };
	struct hwq_sweep_analysis a;
	hwq_sweep_analyze(sc, tp, 4, &a);
	CHECK_NEAR(a.eff[0], 1.0, 1e-12);
	CHECK_NEAR(a.eff[1], 0.95, 1e-12);
	CHECK_NEAR(a.eff[2], 0.75, 1e-12);  /* < 0.8 * 0.95 = 0.76: inflection */
	CHECK_NEAR(a.eff[3], 0.3875, 1e-12);
	CHECK_EQ_I(a.inflection, 2);
	CHECK_EQ_I(a.peak, 3);
	hwq_sweep_analysis_release(&a);
	/* starting above one stream: ideal is tp_0 / sc_0 per stream */
	int sc2[] = { 2, 4 };
	double tp2[] = { 20, 40 };
	hwq_sweep_analyze(sc2, tp2, 2, &a);
	CHECK_NEAR(a.eff[1], 1.0, 1e-12);
	CHECK_EQ_I(a.inflection, -1);
	hwq_sweep_analysis_release(&a);
}

static void fake_result(struct hwq_result *r, double tp_scale)
{
	memset(r, 0, sizeof(*r));
	r->w = hwq_workload_find("tiny_kernel_stress");
	r->cfg.workload = "tiny_kernel_stress";
	r->cfg.streams = 2;
	r->cfg.iters = 4;
	r->cfg.warmup = 1;
	r->cfg.timing_iters = 2;
	r->raw.streams = 2;
	r->raw.iters = 4;
	r->raw.world = 1;
	r->raw.iter_ms = xmalloc(4 * sizeof(double));
	double it[] = { 1.0, 2.0, 3.0, 4.0 };
	for (int i = 0; i < 4; i++)
		r->raw.iter_ms[i] = it[i] / tp_scale;
	r->raw.total_wall_ms = 10.0 / tp_scale;
	r->raw.work_per_iter = 1e6;
	r->raw.work_scale = 1e-6;
	r->raw.kernels_per_iter = 800;
	r->raw.check_ok = 1;
	snprintf(r->raw.check_msg, sizeof(r->raw.check_msg), "fine");
	snprintf(r->raw.dev.name, sizeof(r->raw.dev.name), "Test GPU \"quoted\"");
	r->raw.dev.cc_major = 9;
	r->raw.dev.runtime_version = 13000;
	r->per_stream_ms = xcalloc(2, sizeof(double));
	r->per_stream_ms[1] = 0.25;
	r->sw.overhead_ms = 0.125;
	snprintf(r->timestamp, sizeof(r->timestamp), "2026-01-01T00:00:00.000000");
	hwq_result_derive(r);
}

static yajl_val load_json(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	static char buf[1 << 16];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	return yajl_tree_parse(buf, NULL, 0);
}

static double jnum(yajl_val v, const char *a, const char *b, const char *c)
{
	const char *p[] = { a, b, c, NULL };
	yajl_val x = yajl_tree_get(v, p, yajl_t_number);
	return x ? YAJL_GET_DOUBLE(x) : -12345;
}

static void test_result_json_round_trip(void)
{
	struct hwq_result r;
	fake_result(&r, 1.0);
	/* throughput = 1e6 FLOP * 4 / 10 ms * 1e-6 = 0.4 GFLOPS */
	CHECK_NEAR(r.throughput, 0.4, 1e-12);
	CHECK_NEAR(r.kernels_per_s, 800 * 4 / 10.0 * 1e3, 1e-6);
	char path[512];
	snprintf(path, sizeof(path), "%s/r.json", tmpdir);
	struct aorta_error e = { 0 };
	CHECK_EQ_I(hwq_save_result(&r, path, &e), AORTA_OK);
	yajl_val v = load_json(path);
	CHECK(v != NULL);
	if (v) {
		const char *sp[] = { "schema", NULL };
		yajl_val s = yajl_tree_get(v, sp, yajl_t_string);
		CHECK_STR(s ? YAJL_GET_STRING(s) : NULL, "aorta.hwq.result/1");
		CHECK_NEAR(jnum(v, "throughput", NULL, NULL), 0.4, 1e-9);
		CHECK_NEAR(jnum(v, "latency_ms", "p50", NULL), 2.5, 1e-9);
		CHECK_NEAR(jnum(v, "latency_ms", "max", NULL), 4.0, 1e-9);
		CHECK_NEAR(jnum(v, "stream_count", NULL, NULL), 2, 0);
		CHECK_NEAR(jnum(v, "switch_latency", "estimated_switch_overhead_ms", NULL), 0.125, 1e-9);
		CHECK_NEAR(jnum(v, "metadata", "config", "measurement_iterations"), 4, 0);
		const char *ip[] = { "iteration_times_ms", NULL };
		yajl_val it = yajl_tree_get(v, ip, yajl_t_array);
		CHECK(it && it->u.array.len == 4);
		const char *pp[] = { "per_stream_times_ms", NULL };
		yajl_val ps = yajl_tree_get(v, pp, yajl_t_array);
		CHECK(ps && ps->u.array.len == 2 && YAJL_GET_DOUBLE(ps->u.array.values[1]) == 0.25);
		const char *np[] = { "metadata", "device_info", "name", NULL };
		yajl_val nm = yajl_tree_get(v, np, yajl_t_string);
		CHECK_STR(nm ? YAJL_GET_STRING(nm) : NULL, "Test GPU \"quoted\"");
		const char *wp[] = { "workload_name", NULL };
		yajl_val wn = yajl_tree_get(v, wp, yajl_t_string);
		CHECK_STR(wn ? YAJL_GET_STRING(wn) : NULL, "tiny_kernel_stress");
		yajl_tree_free(v);
	}
	/* a sweep of two */
	struct hwq_result rs[2];
	rs[0] = r;
	fake_result(&rs[1], 1.5);
	rs[1].raw.streams = 4;
	rs[1].per_stream_ms = xrealloc(rs[1].per_stream_ms, 4 * sizeof(double)); /* one per stream */
	rs[1].per_stream_ms[2] = rs[1].per_stream_ms[3] = 0.5;
	snprintf(path, sizeof(path), "%s/s.json", tmpdir);
	CHECK_EQ_I(hwq_save_sweep(rs, 2, path, &e), AORTA_OK);
	v = load_json(path);
	CHECK(v != NULL);
	if (v) {
		const char *ep[] = { "analysis", "efficiencies", NULL };
		yajl_val ef = yajl_tree_get(v, ep, yajl_t_array);
		/* tp 0.4 at 2 streams, 0.6 at 4: eff = 0.6 / (0.2 * 4) = 0.75 */
		CHECK(ef && ef->u.array.len == 2 && fabs(YAJL_GET_DOUBLE(ef->u.array.values[1]) - 0.75) < 1e-9);
		CHECK_NEAR(jnum(v, "analysis", "peak_stream_count", NULL), 4, 0);
		CHECK_NEAR(jnum(v, "analysis", "inflection_point", NULL), 4, 0);
		yajl_tree_free(v);
	}
	hwq_result_release(&rs[1]);
	hwq_result_release(&r);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void test_compare_both_latency_spellings(void)
{
	char b[512], t[512], t2[512], bad[512], sw[512];
	snprintf(b, sizeof(b), "%s/base.json", tmpdir);
	snprintf(t, sizeof(t), "%s/test.json", tmpdir);
	snprintf(t2, sizeof(t2), "%s/test2.json", tmpdir);
	snprintf(bad, sizeof(bad), "%s/bad.json", tmpdir);
	snprintf(sw, sizeof(sw), "%s/sweep.json", tmpdir);
	write_file(b, "{\"throughput\": 100, \"stream_count\": 4, \"latency_ms\": {\"p50\": 1.0, \"p95\": 2.0, \"p99\": 3.0}}");
	/* upstream's spelling; throughput same, p99 up 10%: a latency regression */
	write_file(t, "{\"throughput\": 100, \"stream_count\": 4, \"latency\": {\"p50_ms\": 1.0, \"p95_ms\": 2.0, \"p99_ms\": 3.3}}");
	write_file(t2, "{\"throughput\": 97, \"stream_count\": 4, \"latency_ms\": {\"p50\": 1.005, \"p95\": 2.0, \"p99\": 3.0}}");
	write_file(bad, "{\"throughput\": 1,,}");
	write_file(sw, "{\"results\": [{\"throughput\": 100, \"latency_ms\": {\"p50\": 1}}, "
		       "{\"throughput\": 50, \"latency_ms\": {\"p50\": 1}}]}");
	struct hwq_cmp_opts o = { 0.05 };
	struct aorta_error e = { 0 };
	int nreg = -1;
	FILE *null = fopen("/dev/null", "w");
	CHECK_EQ_I(hwq_compare_files(b, t, &o, null, &nreg, &e), AORTA_OK);
	CHECK_EQ_I(nreg, 1);
	CHECK_EQ_I(hwq_compare_files(b, t2, &o, null, &nreg, &e), AORTA_OK);
	CHECK_EQ_I(nreg, 0); /* within 5% */
	CHECK_EQ_I(hwq_compare_files(t2, b, &o, null, &nreg, &e), AORTA_OK);
	CHECK_EQ_I(nreg, 0);
	o.threshold = 0.01;
	CHECK_EQ_I(hwq_compare_files(b, t2, &o, null, &nreg, &e), AORTA_OK);
	CHECK_EQ_I(nreg, 1); /* throughput -3% beyond 1%; p50 +0.5% not beyond */
	o.threshold = 0.05;
	CHECK_EQ_I(hwq_compare_files(sw, sw, &o, null, &nreg, &e), AORTA_OK);
	CHECK_EQ_I(nreg, 0);
	/* a sweep against a single result: zipped over the shorter */
	CHECK_EQ_I(hwq_compare_files(sw, b, &o, null, &nreg, &e), AORTA_OK);
	CHECK_EQ_I(nreg, 0);
	memset(&e, 0, sizeof(e));
	CHECK_EQ_I(hwq_compare_files(b, bad, &o, null, &nreg, &e), AORTA_EINPUT);
	CHECK_STR(e.path, bad);
	CHECK_EQ_I(hwq_compare_files("/nonexistent.json", b, &o, null, &nreg, &e), AORTA_EINPUT);
	write_file(bad, "[1, 2]");
	CHECK_EQ_I(hwq_compare_files(b, bad, &o, null, &nreg, &e), AORTA_EINPUT);
	fclose(null);
}

static void test_table_has_15_unique_rows_with_upstream_ranges(void)
{
	CHECK_EQ_I(hwq_nworkloads, 15);
	for (int i = 0; i < hwq_nworkloads; i++) {
		const struct hwq_workload_info *w = &hwq_workloads[i];
		CHECK(w->min_streams >= 1 && w->min_streams <= w->rec_streams && w->rec_streams <= w->max_streams);
		CHECK(w->mem_bytes != NULL);
		CHECK(hwq_workload_find(w->name) == w);
		for (int j = 0; j < i; j++)
			CHECK(strcmp(hwq_workloads[j].name, w->name) != 0);
	}
	static const struct { const char *n; int lo, hi, rec; const char *unit, *prio; } up[] = {
		{ "hetero_kernels", 2, 64, 8, "GFLOPS", "P0" },  { "tiny_kernel_stress", 1, 64, 16, "GFLOPS", "P0" },
		{ "large_gemm_only", 1, 16, 4, "TFLOPS", "P0" }, { "graph_subgraphs", 4, 32, 8, "samples/s", "P2" },
		{ "fsdp_tp", 4, 16, 10, "samples/s", "P1" },     { "moe", 4, 32, 16, "tokens/s", "P1" },
		{ "activation_ckpt", 4, 12, 6, "samples/s", "P2" }, { "grad_accum", 2, 16, 6, "samples/s", "P2" },
		{ "speculative_decode", 4, 12, 6, "tokens/s", "P1" }, { "continuous_batch", 4, 16, 8, "tokens/s", "P1" },
		{ "rag_pipeline", 4, 12, 8, "queries/s", "P2" }, { "async_dataload", 4, 12, 6, "images/s", "P3" },
		{ "zero_offload", 4, 12, 6, "samples/s", "P3" }, { "torch_compile", 4, 12, 8, "samples/s", "P3" },
	};
	for (size_t i = 0; i < sizeof(up) / sizeof(up[0]); i++) {
		const struct hwq_workload_info *w = hwq_workload_find(up[i].n);
		CHECK(w != NULL);
		if (!w)
			continue;
		CHECK_EQ_I(w->min_streams, up[i].lo);
		CHECK_EQ_I(w->max_streams, up[i].hi);
		CHECK_EQ_I(w->rec_streams, up[i].rec);
		CHECK_STR(w->unit, up[i].unit);
		CHECK_STR(w->priority, up[i].prio);
	}
	const struct hwq_workload_info *o = hwq_workload_find("comms_compute_overlap");
	CHECK(o && o->distributed && !strcmp(o->category, "distributed") && !o->priority[0]);
	/* exactly three workloads run one rank per GPU with real NCCL
	 * collectives; the others (moe, activation_ckpt included) are single-GPU */
	for (int i = 0; i < hwq_nworkloads; i++) {
		const char *n = hwq_workloads[i].name;
		int want = !strcmp(n, "comms_compute_overlap") || !strcmp(n, "fsdp_tp") || !strcmp(n, "grad_accum");
		if (hwq_workloads[i].distributed != want)
			fprintf(stderr, "    %s: distributed = %d\n", n, hwq_workloads[i].distributed);
		CHECK_EQ_I(hwq_workloads[i].distributed, want);
		if (want)
			CHECK_STR(hwq_workloads[i].category, "distributed");
	}
	CHECK(hwq_workload_find("nope") == NULL);
	CHECK(hwq_workload_find(NULL) == NULL);
	/* memory grows with the stream count; large_gemm_only at 16 streams
	 * holds 18 matrices of 8192^2 fp32 (4.5 GiB) + workspaces */
	const struct hwq_workload_info *l = hwq_workload_find("large_gemm_only");
	CHECK(l->mem_bytes(16) > l->mem_bytes(1));
	CHECK(l->mem_bytes(16) >= 18ull * 8192 * 8192 * 4);
	const struct hwq_workload_info *t = hwq_workload_find("tiny_kernel_stress");
	CHECK_EQ_I(t->mem_bytes(2), 2 * 4 * 256 * 4);
	enum hwq_sync s;
	CHECK_EQ_I(hwq_sync_parse("end_only", &s), 0);
	CHECK_EQ_I(s, HWQ_SYNC_END_ONLY);
	CHECK(hwq_sync_parse("sometimes", &s) != 0);
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	TEST(test_percentiles_interpolate_at_n_minus_1_p);
	TEST(test_switch_latency_inter_vs_intra);
	TEST(test_trace_metrics_from_kineto_file);
	TEST(test_trace_streams_mapped_by_markers);
	TEST(test_text_sections_and_flags);
	TEST(test_sweep_efficiency_peak_inflection);
	TEST(test_result_json_round_trip);
	TEST(test_compare_both_latency_spellings);
	TEST(test_table_has_15_unique_rows_with_upstream_ranges);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd)) {
	}
	return test_report();
}
