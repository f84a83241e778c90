/*
 * test_runtime.c - the GPU runtime layer on a real device: device
 * selection, stream priorities, the span recorder (overlap, durations,
 * pool reuse, overhead), NVML telemetry and a CUPTI capture read back by
 * aorta's own Kineto reader.
 *
 * Without a device every test is skipped with the reason and the program
 * exits 0.  Timing figures (recorder overhead) are printed, never asserted;
 * durations are asserted against kernels that spin on the GPU's global
 * timer for a known time, with a tolerance of 10% + 0.5 ms.
 *
 * Build: `make gpu-tests` (build/gpu-tests/test_runtime; `make check-gpu`
 * runs it), or tests/gpu/build.sh, which compiles only what this test
 * needs.  Last line: "N passed, N failed, N skipped".
 */
#include "gpu/cupti.h"
#include "gpu/gpu.h"
#include "gpu/recorder.h"
#include "gpu/telemetry.h"
#include "spin.h"
#include "testing.h"

#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "base/output.h"
#include "ingest/ingest.h"
#include "overlap/engine.h"
#include "timeline/timeline.h"

#define MS INT64_C(1000000)

static int ndev;
static struct gpu_device_info dev;
static struct gpu_streams gs;
static int have_streams;

#define NEED_GPU() do { if (ndev == 0) SKIP("no GPU visible to this process"); } while (0)
#define OK(call) do { struct aorta_error e_; memset(&e_, 0, sizeof(e_)); \
	enum aorta_status s_ = (call); if (s_ != AORTA_OK) { \
		fprintf(stderr, "  FAIL %s: %s:%d: %s: %s\n", t_cur, __FILE__, __LINE__, #call, e_.msg); \
		t_cur_failed = 1; return; } } while (0)
/* Calls that take the error record as their last argument use E. */
#define E (&e_)

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int near_ns(int64_t got, int64_t want)
{
	int64_t tol = want / 10 + MS / 2;

	return got >= want - tol && got <= want + tol;
}

/* ------------------------------------------------------------------ */

static void test_device_selection_by_local_rank(void)
{
	NEED_GPU();
	OK(gpu_select_device(-1, &dev, E));
	printf("  device %d of %d: %s, sm_%d%d, %d SMs, %.1f GiB, bus %s, runtime %d, driver %d\n",
	       dev.index, dev.count, dev.name, dev.cc_major, dev.cc_minor, dev.sm_count,
	       (double)dev.total_mem_bytes / (1u << 30), dev.pci_bus_id, dev.runtime_version,
	       dev.driver_version);
	CHECK(dev.cc_major >= 1);
	CHECK(dev.sm_count > 0);
	CHECK(dev.total_mem_bytes > 0);
	CHECK(dev.pci_bus_id[0] != '\0');

	/* LOCAL_RANK = count selects device 0 (modulo), an explicit index wins */
	char b[16];
	snprintf(b, sizeof(b), "%d", ndev);
	setenv("LOCAL_RANK", b, 1);
	CHECK_EQ_I(gpu_local_rank(), ndev);
	struct gpu_device_info d2;
	OK(gpu_select_device(-1, &d2, E));
	CHECK_EQ_I(d2.index, 0);
	unsetenv("LOCAL_RANK");
	struct aorta_error e;
	CHECK_EQ_I(gpu_select_device(ndev, NULL, &e), AORTA_EGPU);
	CHECK(strstr(e.msg, "requested") != NULL);
	OK(gpu_select_device(0, NULL, E));
}

static void test_streams_get_priorities_from_the_device_range(void)
{
	struct gpu_streams hp;

	NEED_GPU();
	OK(gpu_streams_init(&hp, 1, E));
	printf("  priority range: least %d, greatest %d\n", hp.least, hp.greatest);
	CHECK(hp.greatest <= hp.least);
	CHECK_EQ_I(hp.priority[GS_COMPUTE], hp.least);
	CHECK_EQ_I(hp.priority[GS_AUX], hp.least);
	CHECK_EQ_I(hp.priority[GS_ALLREDUCE], hp.greatest);
	CHECK_EQ_I(hp.priority[GS_REDUCESCATTER], hp.greatest);
	CHECK_EQ_I(hp.priority[GS_ALLGATHER], hp.greatest);
	OK(gpu_streams_release(&hp, E));
	OK(gpu_streams_init(&gs, 0, E));
	have_streams = 1;
	for (int i = 0; i < GS__COUNT; i++)
		CHECK_EQ_I(gs.priority[i], gs.least);
	CHECK_EQ_I(gpu_stream_from_name("allgather"), GS_ALLGATHER);
	CHECK_STR(gpu_stream_name(GS_REDUCESCATTER), "reducescatter");
}

/* ------------------------------------------------------------------ */
/* the recorder's step as spans and as upstream's profile fields: only   */
/* this test uses them (the trainer writes the JSONL through metrics.c)  */
/* ------------------------------------------------------------------ */

/* "epoch3_step12_forward" -> "forward" (upstream's tag prefix). */
static const char *short_tag(const char *t)
{
	const char *p = t;

	if (strncmp(p, "epoch", 5) != 0)
		return t;
	p += 5;
	if (*p < '0' || *p > '9')
		return t;
	while (*p >= '0' && *p <= '9')
		p++;
	if (strncmp(p, "_step", 5) != 0)
		return t;
	p += 5;
	if (*p < '0' || *p > '9')
		return t;
	while (*p >= '0' && *p <= '9')
		p++;
	return *p == '_' && p[1] ? p + 1 : t;
}

static void rec_to_trace(const struct rec_step *s, struct trace *t, int64_t base_ns)
{
	char name[512];

	for (size_t i = 0; i < s->nranges; i++) {
		const struct rec_range *g = &s->ranges[i];
		const char *tag = short_tag(g->tag);
		enum record_hint h = R_KERNEL;
		int n;
		switch (g->kind) {
		case REC_MEMCPY_H2D: n = snprintf(name, sizeof(name), "Memcpy HtoD (%s)", tag); h = R_MEMCPY; break;
		case REC_MEMCPY_D2H: n = snprintf(name, sizeof(name), "Memcpy DtoH (%s)", tag); h = R_MEMCPY; break;
		case REC_MEMCPY_D2D: n = snprintf(name, sizeof(name), "Memcpy DtoD (%s)", tag); h = R_MEMCPY; break;
		case REC_MEMSET: n = snprintf(name, sizeof(name), "Memset (%s)", tag); h = R_MEMSET; break;
		default: n = snprintf(name, sizeof(name), "aorta:%s:%s", rec_kind_name(g->kind), tag); break;
		}
		size_t len = n < 0 ? 0 : (size_t)n >= sizeof(name) ? sizeof(name) - 1 : (size_t)n;
		int64_t a = base_ns + g->start_ns, b = base_ns + g->end_ns;
		if (b < a) {
			trace_skip(t, "recorder range '%s' ends before it starts", g->tag);
			continue;
		}
		trace_add_device(t, a, b, name, len, h, g->stream, -1, 0);
	}
	trace_add_step(t, s->step, base_ns, base_ns + s->total_ns);
	trace_add_gpu_step(t, s->step, base_ns, base_ns + s->total_ns);
}

static void stream_label(char *buf, size_t cap, int id)
{
	const char *n = gpu_stream_name(id);

	if (n)
		snprintf(buf, cap, "%s", n);
	else
		snprintf(buf, cap, "stream%d", id);
}

static void rec_write_profile(const struct rec_step *s, struct jw *w)
{
	char sn[32];

	jw_ms(w, "total_ms", s->total_ns);
	jw_arr(w, "ranges");
	for (size_t i = 0; i < s->nranges; i++) {
		const struct rec_range *g = &s->ranges[i];
		stream_label(sn, sizeof(sn), g->stream);
		jw_obj(w, NULL);
		jw_str(w, "stream", sn);
		jw_str(w, "tag", g->tag);
		jw_ms(w, "start_ms", g->start_ns);
		jw_ms(w, "end_ms", g->end_ns);
		jw_ms(w, "duration_ms", g->end_ns > g->start_ns ? g->end_ns - g->start_ns : 0);
		jw_obj(w, "metadata");
		if (g->function)
			jw_str(w, "function", g->function);
		jw_str(w, "kind", rec_kind_name(g->kind));
		jw_obj_end(w);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	jw_arr(w, "markers");
	for (size_t i = 0; i < s->nmarks; i++) {
		stream_label(sn, sizeof(sn), s->marks[i].stream);
		jw_obj(w, NULL);
		jw_str(w, "stream", sn);
		jw_str(w, "tag", s->marks[i].tag);
		jw_ms(w, "time_ms", s->marks[i].time_ns);
		jw_obj(w, "metadata");
		jw_obj_end(w);
		jw_obj_end(w);
	}
	jw_arr_end(w);
}

static void test_recorder_overlapping_streams_give_overlapping_spans(void)
{
	struct recorder *r = NULL;
	struct rec_step st;

	NEED_GPU();
	if (!have_streams)
		SKIP("streams not created");
	OK(rec_init(&r, &gs, 8, E));
	rec_step_begin(r, 7);
	int a = rec_begin(r, GS_COMPUTE, "epoch0_step7_forward", REC_COMPUTE);
	CHECK(test_spin(gs.s[GS_COMPUTE], 20 * MS) == gpuSuccess);
	rec_end(r, a);
	int b = rec_begin_fn(r, GS_ALLREDUCE, "epoch0_step7_grad_ar", REC_ALL_REDUCE, "all_reduce");
	CHECK(test_spin(gs.s[GS_ALLREDUCE], 10 * MS) == gpuSuccess);
	rec_end(r, b);
	int c = rec_begin(r, GS_COMPUTE, "epoch0_step7_backward", REC_COMPUTE);
	CHECK(test_spin(gs.s[GS_COMPUTE], 5 * MS) == gpuSuccess);
	rec_end(r, c);
	rec_marker(r, GS_COMPUTE, "epoch0_step7_end");
	OK(rec_collect(r, &st, E));

	CHECK_EQ_I(st.step, 7);
	CHECK_EQ_I(st.nranges, 3);
	CHECK_EQ_I(st.nmarks, 1);
	if (st.nranges == 3) {
		const struct rec_range *A = &st.ranges[0], *B = &st.ranges[1], *C = &st.ranges[2];
		printf("  forward [%.3f, %.3f] ms, all-reduce [%.3f, %.3f] ms, backward [%.3f, %.3f] ms, total %.3f ms\n",
		       A->start_ns / 1e6, A->end_ns / 1e6, B->start_ns / 1e6, B->end_ns / 1e6,
		       C->start_ns / 1e6, C->end_ns / 1e6, st.total_ns / 1e6);
		CHECK(near_ns(A->end_ns - A->start_ns, 20 * MS));
		CHECK(near_ns(B->end_ns - B->start_ns, 10 * MS));
		CHECK(near_ns(C->end_ns - C->start_ns, 5 * MS));
		CHECK(B->start_ns < A->end_ns && A->start_ns < B->end_ns); /* overlap */
		CHECK(C->start_ns >= A->end_ns);                          /* same stream: ordered */
		CHECK(st.total_ns >= C->end_ns);
		CHECK(st.marks[0].time_ns >= C->end_ns);
		CHECK_STR(B->function, "all_reduce");
		CHECK_EQ_I(B->stream, GS_ALLREDUCE);

		/* into the overlap engine: 10 ms of all-reduce hidden under compute */
		struct trace *t = trace_new("recorder", "aorta-recorder");
		rec_to_trace(&st, t, 1000 * MS);
		trace_finish(t, NULL);
		CHECK_EQ_I(t->n, 3);
		CHECK_EQ_I(t->nsteps, 1);
		uint8_t *cls = classes_aorta(t);
		struct ov_sets o;
		struct ov_figures f;
		ov_sets_build(&o, t, cls, NULL, 0);
		ov_figures_in(&o, t->steps[0].start_ns, t->steps[0].end_ns, &f);
		printf("  engine: compute %.3f ms, comm %.3f ms, overlap %.3f ms, exposed comm %.3f ms\n",
		       f.compute_ns / 1e6, f.comm_ns / 1e6, f.overlap_ns / 1e6, f.exposed_comm_ns / 1e6);
		CHECK(near_ns(f.comm_ns, 10 * MS));
		CHECK(near_ns(f.overlap_ns, 10 * MS));
		CHECK(f.exposed_comm_ns < MS);
		CHECK(near_ns(f.coll_ns[COLL_ALL_REDUCE], 10 * MS));
		ov_sets_release(&o);
		free(cls);
		trace_free(t);

		/* upstream JSONL profile fields */
		char *buf = NULL;
		size_t len = 0;
		FILE *mf = open_memstream(&buf, &len);
		struct jw w;
		jw_init(&w, mf, 0);
		jw_obj(&w, NULL);
		rec_write_profile(&st, &w);
		jw_obj_end(&w);
		fclose(mf);
		CHECK(strstr(buf, "\"ranges\":[{\"stream\":\"compute\",\"tag\":\"epoch0_step7_forward\"") != NULL);
		CHECK(strstr(buf, "\"metadata\":{\"function\":\"all_reduce\"") != NULL);
		CHECK(strstr(buf, "\"markers\":[{\"stream\":\"compute\",\"tag\":\"epoch0_step7_end\",\"time_ms\":") != NULL);
		free(buf);
	}
	OK(rec_free(r, E));
}

static void test_recorder_pool_is_reused_every_step(void)
{
	struct recorder *r = NULL;
	struct rec_step st;
	unsigned grown_after_first = 0;

	NEED_GPU();
	if (!have_streams)
		SKIP("streams not created");
	OK(rec_init(&r, &gs, 4, E)); /* too small on purpose: grows in step 0 only */
	for (int step = 0; step < 5; step++) {
		char tag[32];
		rec_step_begin(r, step);
		for (int i = 0; i < 40; i++) {
			snprintf(tag, sizeof(tag), "k%d", i);
			int h = rec_begin(r, i % GS__COUNT, tag, REC_COMPUTE);
			CHECK(test_empty(gs.s[i % GS__COUNT]) == gpuSuccess);
			rec_end(r, h);
		}
		OK(rec_collect(r, &st, E));
		CHECK_EQ_I(st.nranges, 40);
		if (step == 0)
			grown_after_first = st.pool_grown;
	}
	printf("  pool: %u events, grew %u times (all in step 0)\n", st.pool_events, st.pool_grown);
	CHECK(grown_after_first >= 1);
	CHECK_EQ_I(st.pool_grown, grown_after_first);

	/* a range never ended is reported, and the next step works */
	struct aorta_error e;
	rec_step_begin(r, 9);
	(void)rec_begin(r, GS_COMPUTE, "dangling", REC_COMPUTE);
	CHECK_EQ_I(rec_collect(r, &st, &e), AORTA_EINTERNAL);
	CHECK(strstr(e.msg, "never ended") != NULL);
	rec_step_begin(r, 10);
	rec_end(r, rec_begin(r, GS_AUX, "ok", REC_MEMCPY_H2D));
	OK(rec_collect(r, &st, E));
	CHECK_EQ_I(st.nranges, 1);
	OK(rec_free(r, E));
}

static void test_recorder_overhead_per_range(void)
{
	struct recorder *r = NULL;
	struct rec_step st;
	const int n = 20000;

	NEED_GPU();
	if (!have_streams)
		SKIP("streams not created");
	OK(rec_init(&r, &gs, (size_t)n, E));
	/* warm the pool and the tag buffer */
	rec_step_begin(r, 0);
	for (int i = 0; i < n; i++)
		rec_end(r, rec_begin(r, GS_COMPUTE, "warm", REC_COMPUTE));
	OK(rec_collect(r, &st, E));

	rec_step_begin(r, 1);
	double t0 = now_s();
	for (int i = 0; i < n; i++)
		rec_end(r, rec_begin(r, i & 1 ? GS_ALLREDUCE : GS_COMPUTE, "epoch0_step1_range", REC_COMPUTE));
	double t1 = now_s();
	OK(rec_collect(r, &st, E));
	double t2 = now_s();

	/* the same launches with and without ranges around them */
	const int m = 2000;
	double b0 = now_s();
	for (int i = 0; i < m; i++)
		CHECK(test_empty(gs.s[GS_COMPUTE]) == gpuSuccess);
	OK(gpu_streams_sync(&gs, E));
	double b1 = now_s();
	rec_step_begin(r, 2);
	for (int i = 0; i < m; i++) {
		int h = rec_begin(r, GS_COMPUTE, "k", REC_COMPUTE);
		CHECK(test_empty(gs.s[GS_COMPUTE]) == gpuSuccess);
		rec_end(r, h);
	}
	OK(rec_collect(r, &st, E));
	double b2 = now_s();
	printf("  overhead: rec_begin+rec_end %.3f us per range (host, %d ranges); "
	       "rec_collect %.3f us per range (%.3f ms total)\n",
	       (t1 - t0) * 1e6 / n, n, (t2 - t1) * 1e6 / n, (t2 - t1) * 1e3);
	printf("  overhead: %d empty kernels %.3f us each bare, %.3f us each inside a range (launch+sync wall time)\n",
	       m, (b1 - b0) * 1e6 / m, (b2 - b1) * 1e6 / m);
	OK(rec_free(r, E));
}

static void test_telemetry_plausible_or_unavailable(void)
{
	struct gpu_telemetry g;

	NEED_GPU();
	struct telemetry *t = telemetry_open(dev.pci_bus_id, dev.index);
	telemetry_read(t, &g);
	telemetry_close(t);
	if (!g.available) {
		printf("  telemetry unavailable: %s\n", g.why);
		CHECK(g.why[0] != '\0');
		return;
	}
	printf("  telemetry: sm %d MHz, mem %d MHz, %.1f W, %d C, util gpu %d%% mem %d%%, used %.2f GiB of %.2f\n",
	       g.sm_clock_mhz, g.mem_clock_mhz, g.power_w, g.temp_c, g.gpu_util_pct, g.mem_util_pct,
	       g.mem_used_bytes / 1073741824.0, g.mem_total_bytes / 1073741824.0);
	CHECK(g.sm_clock_mhz > 100 && g.sm_clock_mhz < 5000);
	CHECK(g.mem_clock_mhz > 100 && g.mem_clock_mhz < 20000);
	CHECK(g.power_w > 5 && g.power_w < 2000);
	CHECK(g.temp_c > 0 && g.temp_c < 120);
	CHECK(g.gpu_util_pct >= 0 && g.gpu_util_pct <= 100);
	CHECK(g.mem_util_pct >= 0 && g.mem_util_pct <= 100);
	CHECK(g.mem_total_bytes > 0);
}

static void test_cupti_capture_reads_back_with_the_kernel_count(void)
{
	char why[300], dir[] = "/tmp/aorta_cupti_XXXXXX";
	struct cupti_capture *c = NULL;
	struct cupti_stats stats;
	void *dbuf = NULL, *hbuf = NULL;
	const size_t bytes = 1 << 20;

	NEED_GPU();
	if (!have_streams)
		SKIP("streams not created");
	if (!cupti_available(why, sizeof(why))) {
		printf("  cupti: %s\n", why);
		SKIP("libcupti not loadable");
	}
	if (!mkdtemp(dir))
		SKIP("no temporary folder");
	OK(gpuMalloc(&dbuf, bytes) == gpuSuccess ? AORTA_OK : AORTA_EGPU);
	OK(gpuMallocHost(&hbuf, bytes) == gpuSuccess ? AORTA_OK : AORTA_EGPU);
	memset(hbuf, 1, bytes);

	struct cupti_opts o;
	memset(&o, 0, sizeof(o));
	o.output_dir = dir;
	o.rank = 0;
	o.world_size = 1;
	o.device = dev.index;
	o.sched = (struct cupti_schedule){ 0, 1, 1, 2, 1 }; /* wait 1, warmup 1, active 2 */
	OK(cupti_open(&c, &o, E));
	for (int step = 0; step < 5; step++) {
		/* per step: 3 kernels on compute, 2 on allreduce, one copy, one fill */
		for (int k = 0; k < 3; k++)
			CHECK(test_spin(gs.s[GS_COMPUTE], 200000) == gpuSuccess);
		for (int k = 0; k < 2; k++)
			CHECK(test_spin(gs.s[GS_ALLREDUCE], 300000) == gpuSuccess);
		CHECK(gpuMemcpyAsync(dbuf, hbuf, bytes, gpuMemcpyHostToDevice, gs.s[GS_AUX]) == gpuSuccess);
		CHECK(gpuMemsetAsync(dbuf, 0, bytes, gs.s[GS_AUX]) == gpuSuccess);
		OK(gpu_streams_sync(&gs, E));
		OK(cupti_step(c, E));
	}
	cupti_get_stats(c, &stats);
	OK(cupti_close(c, E));
	printf("  cupti: %u trace(s), kept %llu kernels %llu copies %llu fills %llu runtime calls, dropped %llu\n  %s\n",
	       stats.traces_written, (unsigned long long)stats.kernels, (unsigned long long)stats.memcpys,
	       (unsigned long long)stats.memsets, (unsigned long long)stats.runtime,
	       (unsigned long long)stats.dropped, stats.last_path);
	CHECK_EQ_I(stats.traces_written, 1);
	CHECK_EQ_I(stats.dropped, 0);
	CHECK(strstr(stats.last_path, "/torch_profiler/rank0/") != NULL);
	CHECK(strstr(stats.last_path, ".3.pt.trace.json") != NULL);

	struct ingest_opts io = { .rules = NULL, .rank_hint = -1 };
	struct trace_set ts;
	struct aorta_error e;
	memset(&ts, 0, sizeof(ts));
	CHECK_EQ_I(ingest_kineto(stats.last_path, &io, &ts, &e), AORTA_OK);
	if (ts.n == 1) {
		const struct trace *t = ts.t[0];
		size_t kern = 0, cp = 0, fill = 0, launched = 0, in_step = 0;
		int32_t s0 = -1, s1 = -1;
		for (size_t i = 0; i < t->n; i++) {
			kern += t->hint[i] == R_KERNEL;
			cp += t->hint[i] == R_MEMCPY;
			fill += t->hint[i] == R_MEMSET;
			launched += t->launch_ns[i] != INT64_MIN;
			in_step += t->step[i] >= 0;
			if (t->hint[i] == R_KERNEL) {
				if (s0 < 0 || t->stream[i] == s0)
					s0 = t->stream[i];
				else
					s1 = t->stream[i];
			}
		}
		printf("  read back: %zu spans (%zu kernels, %zu copies, %zu fills), %zu with launch, %zu in a step, %zu steps\n",
		       t->n, kern, cp, fill, launched, in_step, t->nsteps);
		CHECK_EQ_I(kern, 10); /* steps 2 and 3 recorded */
		CHECK_EQ_I(cp, 2);
		CHECK_EQ_I(fill, 2);
		CHECK_EQ_I(launched, t->n);
		CHECK_EQ_I(in_step, t->n);
		CHECK(s0 >= 0 && s1 >= 0 && s0 != s1);
		CHECK_EQ_I(t->nsteps, 2);
		CHECK_EQ_I(t->ngsteps >= 2, 1);
		if (t->nsteps == 2) {
			CHECK_EQ_I(t->steps[0].number, 2);
			CHECK_EQ_I(t->steps[1].number, 3);
		}
		CHECK_EQ_I(t->rank, 0);
		CHECK_EQ_I(t->skipped, 0);
	} else {
		fprintf(stderr, "  reader: %s\n", e.msg);
		CHECK_EQ_I(ts.n, 1);
	}
	trace_set_release(&ts);
	OK(gpuFree(dbuf) == gpuSuccess ? AORTA_OK : AORTA_EGPU);
	OK(gpuFreeHost(hbuf) == gpuSuccess ? AORTA_OK : AORTA_EGPU);
	if (!getenv("AORTA_KEEP_TMP")) {
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "  note: could not remove %s\n", dir);
	}
}

int main(void)
{
	struct aorta_error e;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (gpu_device_count(&ndev, &e) != AORTA_OK) {
		fprintf(stderr, "  note: %s\n", e.msg);
		ndev = 0;
	}
	if (ndev == 0)
		printf("no GPU visible: every test below is skipped\n");
	TEST(test_device_selection_by_local_rank);
	TEST(test_streams_get_priorities_from_the_device_range);
	TEST(test_recorder_overlapping_streams_give_overlapping_spans);
	TEST(test_recorder_pool_is_reused_every_step);
	TEST(test_recorder_overhead_per_range);
	TEST(test_telemetry_plausible_or_unavailable);
	TEST(test_cupti_capture_reads_back_with_the_kernel_count);
	if (have_streams && gpu_streams_release(&gs, &e) != AORTA_OK)
		fprintf(stderr, "  note: %s\n", e.msg);
	return test_report();
}
