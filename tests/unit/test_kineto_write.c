/*
 * test_kineto_write.c - the Kineto writer round-trips through aorta's own
 * Kineto reader: a synthetic two-step trace (runtime launches, kernels on
 * two streams, a copy, a fill, host and GPU ProfilerStep annotations, times
 * with sub-microsecond digits and times before the base) is written, plain
 * and gzip, then read back with ingest_kineto(); every span's start and end
 * must come back to the nanosecond, with its stream, bytes, launch time
 * (the correlation join) and step.  Also: the fixed-point printer, the
 * upstream path layout, and an injected write failure leaving no file.
 */
#include "timeline/kineto_write.h"

#include "base/output.h"
#include "ingest/ingest.h"
#include "testing.h"

#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#define BASE INT64_C(1700000000123456789)

static char tmpdir[256];

static void make_tmpdir(void)
{
	if (tmpdir[0])
		return;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/aorta_kw_XXXXXX");
	if (!mkdtemp(tmpdir))
		tmpdir[0] = '\0';
}

/* The synthetic trace: step k (k = 1, 2) spans [k*100000, k*100000+90000)
 * ns after BASE on the host; each step launches a gemm on stream 7, an
 * all-reduce on stream 19 that overlaps it, a 4 KiB copy and a memset. */
#define NEV 22
static struct kw_event ev[NEV];
static size_t nev;

static void add(enum kw_cat c, const char *name, int64_t s, int64_t e, int64_t pid, int64_t tid,
		int64_t corr, uint64_t bytes)
{
	struct kw_event *v = &ev[nev++];

	memset(v, 0, sizeof(*v));
	v->cat = c;
	v->name = name;
	v->start_ns = BASE + s;
	v->end_ns = BASE + e;
	v->pid = pid;
	v->tid = tid;
	v->correlation = corr;
	v->bytes = bytes;
	v->regs_per_thread = c == KW_KERNEL ? 128 : -1;
	v->shared_mem_bytes = c == KW_KERNEL ? 0 : -1;
	v->cbid = c == KW_RUNTIME ? 211 : -1;
	if (c == KW_KERNEL) {
		v->grid[0] = 132; v->grid[1] = 1; v->grid[2] = 1;
		v->block[0] = 256; v->block[1] = 1; v->block[2] = 1;
	}
}

static void build(struct kw_trace *t, struct kw_device *d)
{
	nev = 0;
	for (int k = 1; k <= 2; k++) {
		int64_t s0 = k * 100000, c = k * 10;
		add(KW_USER_ANNOTATION, k == 1 ? "ProfilerStep#1" : "ProfilerStep#2", s0, s0 + 90000,
		    4242, 4243, -1, 0);
		add(KW_RUNTIME, "cudaLaunchKernel", s0 + 1001, s0 + 4999, 4242, 4243, c + 1, 0);
		add(KW_RUNTIME, "cudaLaunchKernel", s0 + 5003, s0 + 7777, 4242, 4243, c + 2, 0);
		add(KW_RUNTIME, "cudaMemcpyAsync", s0 + 8001, s0 + 9001, 4242, 4243, c + 3, 0);
		add(KW_RUNTIME, "cudaMemsetAsync", s0 + 9101, s0 + 9201, 4242, 4243, c + 4, 0);
		add(KW_GPU_USER_ANNOTATION, k == 1 ? "ProfilerStep#1" : "ProfilerStep#2", s0 + 6000,
		    s0 + 80000, 0, 7, -1, 0);
		add(KW_KERNEL, "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", s0 + 6001, s0 + 50123,
		    0, 7, c + 1, 0);
		add(KW_KERNEL, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
		    s0 + 9999, s0 + 70001, 0, 19, c + 2, 0);
		add(KW_MEMCPY, "Memcpy HtoD (Pinned -> Device)", s0 + 70002, s0 + 70503, 0, 7, c + 3, 4096);
		add(KW_MEMSET, "Memset (Device)", s0 + 70600, s0 + 70601, 0, 7, c + 4, 64);
	}
	/* a host op before the base (negative ts) and a runtime call with no GPU work */
	add(KW_CPU_OP, "aten::empty", -2500, -1, 4242, 4243, -1, 0);
	add(KW_RUNTIME, "cudaStreamSynchronize", 300000, 300100, 4242, 4243, 99, 0);

	memset(d, 0, sizeof(*d));
	d->id = 0;
	d->name = "Test \"GPU\" 80GB";
	d->total_global_mem = 85520809984ull;
	d->compute_major = 9;
	d->num_sms = 132;
	d->max_threads_per_block = 1024;
	d->warp_size = 32;

	memset(t, 0, sizeof(*t));
	t->backend = "nccl";
	t->rank = 3;
	t->world_size = 8;
	t->devices = d;
	t->ndevices = 1;
	t->ev = ev;
	t->nev = nev;
	t->base_ns = BASE;
	t->cupti_version = 130001;
	t->cuda_runtime_version = 13000;
	t->cuda_driver_version = -1;
	t->host_pid = -1;
}

static const struct kw_event *by_start(int64_t rel_start)
{
	for (size_t i = 0; i < nev; i++)
		if (ev[i].start_ns - BASE == rel_start &&
		    (ev[i].cat == KW_KERNEL || ev[i].cat == KW_MEMCPY || ev[i].cat == KW_MEMSET))
			return &ev[i];
	return NULL;
}

static const struct kw_event *runtime_of(int64_t corr)
{
	for (size_t i = 0; i < nev; i++)
		if (ev[i].cat == KW_RUNTIME && ev[i].correlation == corr)
			return &ev[i];
	return NULL;
}

static void check_roundtrip(const char *path)
{
	struct ingest_opts o = { .rules = NULL, .rank_hint = -1 };
	struct trace_set ts;
	struct aorta_error e;

	memset(&ts, 0, sizeof(ts));
	memset(&e, 0, sizeof(e));
	CHECK_EQ_I(ingest_kineto(path, &o, &ts, &e), AORTA_OK);
	if (ts.n != 1) {
		fprintf(stderr, "  reader: %s\n", e.msg);
		CHECK_EQ_I(ts.n, 1);
		trace_set_release(&ts);
		return;
	}
	const struct trace *t = ts.t[0];
	CHECK_EQ_I(t->rank, 3);
	CHECK_EQ_I(t->world_size, 8);
	CHECK_EQ_I(t->device, 0);
	CHECK_EQ_I(t->skipped, 0);
	CHECK_EQ_I(t->n, 8);
	CHECK_EQ_I(t->nsteps, 2);
	CHECK_EQ_I(t->ngsteps, 2);
	for (size_t k = 0; k < t->nsteps && k < 2; k++) {
		CHECK_EQ_I(t->steps[k].number, (int64_t)k + 1);
		CHECK_EQ_I(t->steps[k].start_ns, (int64_t)(k + 1) * 100000);
		CHECK_EQ_I(t->steps[k].end_ns, (int64_t)(k + 1) * 100000 + 90000);
		CHECK_EQ_I(t->gsteps[k].start_ns, (int64_t)(k + 1) * 100000 + 6000);
		CHECK_EQ_I(t->gsteps[k].end_ns, (int64_t)(k + 1) * 100000 + 80000);
	}
	size_t on7 = 0, on19 = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct kw_event *v = by_start(t->start_ns[i]);
		CHECK(v != NULL);
		if (!v)
			continue;
		CHECK_EQ_I(t->end_ns[i], v->end_ns - BASE);
		CHECK_EQ_I(t->stream[i], v->tid);
		CHECK_EQ_I(t->bytes[i], v->bytes);
		CHECK_STR(strtab_get(&t->names, t->name[i]), v->name);
		const struct kw_event *r = runtime_of(v->correlation);
		CHECK(r != NULL);
		if (r)
			CHECK_EQ_I(t->launch_ns[i], r->start_ns - BASE);
		CHECK_EQ_I(t->step[i], t->start_ns[i] < 200000 ? 0 : 1);
		CHECK_EQ_I(t->hint[i], v->cat == KW_KERNEL ? R_KERNEL :
				       v->cat == KW_MEMCPY ? R_MEMCPY : R_MEMSET);
		on7 += t->stream[i] == 7;
		on19 += t->stream[i] == 19;
	}
	CHECK_EQ_I(on7, 6);
	CHECK_EQ_I(on19, 2);
	/* host events: 2 steps + 8 launches + 1 cpu_op + 1 sync call */
	CHECK_EQ_I(t->host_events, 12);
	trace_set_release(&ts);
}

static void test_roundtrip_plain_json_is_ns_exact(void)
{
	struct kw_trace t;
	struct kw_device d;
	struct aorta_error e;
	char path[512];

	make_tmpdir();
	if (!tmpdir[0])
		SKIP("no temporary folder");
	build(&t, &d);
	snprintf(path, sizeof(path), "%s/a/b/plain.pt.trace.json", tmpdir);
	CHECK_EQ_I(kineto_write(path, &t, 0, &e), AORTA_OK);
	check_roundtrip(path);
}

static void test_roundtrip_gzip_is_ns_exact(void)
{
	struct kw_trace t;
	struct kw_device d;
	struct aorta_error e;
	char path[512];

	make_tmpdir();
	if (!tmpdir[0])
		SKIP("no temporary folder");
	build(&t, &d);
	snprintf(path, sizeof(path), "%s/gz/trace.pt.trace.json.gz", tmpdir);
	CHECK_EQ_I(kineto_write(path, &t, 1, &e), AORTA_OK);
	FILE *f = fopen(path, "rb");
	CHECK(f != NULL);
	if (f) {
		unsigned char m[2] = { 0, 0 };
		CHECK_EQ_I(fread(m, 1, 2, f), 2);
		CHECK(m[0] == 0x1f && m[1] == 0x8b);
		fclose(f);
	}
	check_roundtrip(path);
}

static void test_empty_trace_parses_to_the_end(void)
{
	struct kw_trace t;
	struct aorta_error e;
	struct ingest_opts o = { .rules = NULL, .rank_hint = -1 };
	struct trace_set ts;
	char path[512];

	make_tmpdir();
	if (!tmpdir[0])
		SKIP("no temporary folder");
	memset(&t, 0, sizeof(t));
	t.rank = 0;
	t.world_size = 1;
	t.host_pid = t.cupti_version = t.cuda_runtime_version = t.cuda_driver_version = -1;
	snprintf(path, sizeof(path), "%s/empty.json", tmpdir);
	CHECK_EQ_I(kineto_write(path, &t, 0, &e), AORTA_OK);
	/* the reader parses the whole document and then refuses it for having
	 * no events: a syntax error would name a byte offset instead */
	memset(&ts, 0, sizeof(ts));
	memset(&e, 0, sizeof(e));
	CHECK_EQ_I(ingest_kineto(path, &o, &ts, &e), AORTA_EINPUT);
	CHECK(strstr(e.msg, "no trace events") != NULL);
	CHECK_EQ_I(ts.n, 0);
	trace_set_release(&ts);
}

static void test_print_us_is_fixed_point(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		SKIP("open_memstream failed");
	kw_print_us(f, 0);
	fputc(' ', f);
	kw_print_us(f, 1);
	fputc(' ', f);
	kw_print_us(f, -1);
	fputc(' ', f);
	kw_print_us(f, 12345);
	fputc(' ', f);
	kw_print_us(f, -1000);
	fputc(' ', f);
	kw_print_us(f, INT64_MAX);
	fputc(' ', f);
	kw_print_us(f, INT64_MIN);
	fclose(f);
	CHECK_STR(buf, "0.000 0.001 -0.001 12.345 -1.000 9223372036854775.807 -9223372036854775.808");
	free(buf);
}

static void test_upstream_trace_path_layout(void)
{
	char buf[1024], host[256];

	CHECK(kineto_trace_path(buf, sizeof(buf), "out", 2, 777, 5, 0) > 0);
	CHECK(gethostname(host, sizeof(host)) == 0);
	host[sizeof(host) - 1] = '\0';
	char want[1024];
	snprintf(want, sizeof(want), "out/torch_profiler/rank2/%s_777.5.pt.trace.json", host);
	CHECK_STR(buf, want);
	CHECK(kineto_trace_path(buf, sizeof(buf), "out", 0, 1, 0, 1) > 0);
	CHECK(strstr(buf, ".pt.trace.json.gz") != NULL);
	CHECK_EQ_I(kineto_trace_path(buf, 10, "out", 0, 1, 0, 0), -1);
}

static void test_failed_write_leaves_no_file(void)
{
	struct kw_trace t;
	struct kw_device d;
	struct aorta_error e;
	char path[512];

	make_tmpdir();
	if (!tmpdir[0])
		SKIP("no temporary folder");
	build(&t, &d);
	for (int gz = 0; gz < 2; gz++) {
		snprintf(path, sizeof(path), "%s/fail%d.json", tmpdir, gz);
		out_fail_after_bytes = 100;
		memset(&e, 0, sizeof(e));
		CHECK(kineto_write(path, &t, gz, &e) != AORTA_OK);
		out_fail_after_bytes = -1;
		CHECK(access(path, F_OK) != 0);
	}
}

int main(void)
{
	TEST(test_print_us_is_fixed_point);
	TEST(test_upstream_trace_path_layout);
	TEST(test_roundtrip_plain_json_is_ns_exact);
	TEST(test_roundtrip_gzip_is_ns_exact);
	TEST(test_empty_trace_parses_to_the_end);
	TEST(test_failed_write_leaves_no_file);
	if (tmpdir[0] && !getenv("AORTA_KEEP_TMP")) {
		char cmd[300];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			fprintf(stderr, "  note: could not remove %s\n", tmpdir);
	}
	return test_report();
}
