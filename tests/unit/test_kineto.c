/*
 * test_kineto.c - the Kineto JSON reader on real traces and on hand-written
 * snippets.
 *
 * Real-trace figures are hard-coded from an independent computation made
 * with Python's json and gzip modules (json.load(..., parse_float=Decimal),
 * ns = round_half_up(Decimal(us) * 1000)), counting ph "X" events by cat:
 * kernel/Kernel, gpu_memcpy/Memcpy, gpu_memset/Memset as device spans;
 * cuda_sync with args.stream >= 0 as sync spans; gpu_user_annotation
 * ProfilerStep#N as GPU steps; every other X event as a host event, among
 * them user_annotation/cpu_op ProfilerStep#N (steps) and cuda_runtime/
 * cuda_driver/Runtime events with args.correlation (launches).  "dev_ts_sum"
 * is the sum of device-span starts in ns modulo 2^64; "with launch" counts
 * device spans whose args.correlation matches a runtime event's.
 *
 * Snippet tests run each input through several window sizes (down to 16
 * bytes) so the refill/retry path is exercised at every byte boundary.
 */
#include "ingest/ingest.h"
#include "ingest/kineto_fast.h"
#include "testing.h"

#include <stdint.h>
#include <unistd.h>
#include <zlib.h>

/* ------------------------------------------------------------------ */
/* helpers                                                             */
/* ------------------------------------------------------------------ */

static char path_buf[1024];

static const char *data(const char *rel)
{
	snprintf(path_buf, sizeof(path_buf), "%s/kineto/%s", shared_data(), rel);
	return access(path_buf, R_OK) == 0 ? path_buf : NULL;
}

/* First file of a folder whose name starts with prefix. */
static const char *data_glob(const char *dir, const char *prefix)
{
	static char out[1024];
	char cmd[1200];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "ls %s/kineto/%s/%s* 2>/dev/null | head -1", shared_data(), dir, prefix);
	f = popen(cmd, "r");
	if (!f)
		return NULL;
	if (!fgets(out, sizeof(out), f)) {
		pclose(f);
		return NULL;
	}
	pclose(f);
	out[strcspn(out, "\n")] = '\0';
	return out[0] ? out : NULL;
}

static enum aorta_status load_file(const char *path, struct trace_set *ts, struct aorta_error *e)
{
	struct ingest_opts o = { .rules = NULL, .rank_hint = -1 };

	memset(ts, 0, sizeof(*ts));
	return ingest_kineto(path, &o, ts, e);
}

static enum aorta_status load_mem(const char *json, struct trace_set *ts, struct aorta_error *e)
{
	struct ingest_opts o = { .rules = NULL, .rank_hint = 7 };

	memset(ts, 0, sizeof(*ts));
	memset(e, 0, sizeof(*e));
	return ingest_kineto_mem("snippet", json, strlen(json), &o, ts, e);
}

static void set_window(long n)
{
	char b[32];

	if (n <= 0) {
		unsetenv("AORTA_KINETO_WINDOW");
		return;
	}
	snprintf(b, sizeof(b), "%ld", n);
	setenv("AORTA_KINETO_WINDOW", b, 1);
}

struct counts {
	size_t n, kern, memcpy, memset, sync, with_launch;
	int64_t kern_dur;
	uint64_t ts_sum;
};

static struct counts count(const struct trace *t)
{
	struct counts c;

	memset(&c, 0, sizeof(c));
	c.n = t->n;
	for (size_t i = 0; i < t->n; i++) {
		switch (t->hint[i]) {
		case R_KERNEL:
			c.kern++;
			c.kern_dur += t->end_ns[i] - t->start_ns[i];
			break;
		case R_MEMCPY: c.memcpy++; break;
		case R_MEMSET: c.memset++; break;
		default: c.sync++; break;
		}
		if (t->hint[i] != R_SYNC)
			c.ts_sum += (uint64_t)t->start_ns[i];
		if (t->launch_ns[i] != INT64_MIN)
			c.with_launch++;
	}
	return c;
}

static size_t on_stream(const struct trace *t, int32_t s)
{
	size_t k = 0;

	for (size_t i = 0; i < t->n; i++)
		k += t->stream[i] == s;
	return k;
}

/* ------------------------------------------------------------------ */
/* real traces                                                          */
/* ------------------------------------------------------------------ */

static void test_real_ddp12_rank0_counts_match_python(void)
{
	const char *p = data_glob("h200_torch2.11/ddp_4rank_12steps", "rank0.");
	struct trace_set ts;
	struct aorta_error e;

	if (!p)
		SKIP("shared data not found");
	CHECK_EQ_I(load_file(p, &ts, &e), AORTA_OK);
	if (ts.n != 1)
		return;
	struct trace *t = ts.t[0];
	struct counts c = count(t);
	/* python: rank 0 world 4; k 8905, c 1476, s 888, coll 156, step 12,
	 * gstep 12, host 83529, kernel_dur_sum_ns 176501430,
	 * dev_ts_sum 13168011507187881677, streams {7: 11113, 19: 156},
	 * dev with launch 11268, In msg nelems sum 1221832704 */
	CHECK_STR(t->format, "kineto");
	CHECK_EQ_I(t->rank, 0);
	CHECK_EQ_I(t->world_size, 4);
	CHECK_EQ_I(t->device, 0);
	CHECK_EQ_I(c.n, 11269);
	CHECK_EQ_I(c.kern, 8905);
	CHECK_EQ_I(c.memcpy, 1476);
	CHECK_EQ_I(c.memset, 888);
	CHECK_EQ_I(c.sync, 0);
	CHECK_EQ_I(c.kern_dur, 176501430);
	CHECK(c.ts_sum == UINT64_C(13168011507187881677));
	CHECK_EQ_I(t->ncoll, 156);
	CHECK_EQ_I(t->nsteps, 12);
	CHECK_EQ_I(t->ngsteps, 12);
	CHECK_EQ_I(t->host_events, 83529);
	CHECK_EQ_I(t->skipped, 0);
	CHECK_EQ_I(on_stream(t, 7), 11113);
	CHECK_EQ_I(on_stream(t, 19), 156);
	CHECK_EQ_I(c.with_launch, 11268);
	int64_t in = 0;
	for (size_t i = 0; i < t->ncoll; i++) {
		in += t->coll[i].in_nelems;
		CHECK_STR(strtab_get(&t->names, t->coll[i].coll_name), "allreduce");
		CHECK_STR(strtab_get(&t->names, t->coll[i].dtype), "Float");
		CHECK_STR(strtab_get(&t->names, t->coll[i].pg_desc), "default_pg");
		CHECK_EQ_I(t->coll[i].group_size, 4);
		CHECK_EQ_I(t->coll[i].dtype_bytes, 4);
	}
	CHECK_EQ_I(in, 1221832704);
	trace_set_release(&ts);
}

static void test_real_ddp12_small_window_gives_same_result(void)
{
	const char *p = data_glob("h200_torch2.11/ddp_4rank_12steps", "rank0.");
	struct trace_set ts;
	struct aorta_error e;

	if (!p)
		SKIP("shared data not found");
	set_window(4096);
	CHECK_EQ_I(load_file(p, &ts, &e), AORTA_OK);
	set_window(0);
	if (ts.n != 1)
		return;
	struct counts c = count(ts.t[0]);
	CHECK_EQ_I(c.n, 11269);
	CHECK_EQ_I(c.kern_dur, 176501430);
	CHECK(c.ts_sum == UINT64_C(13168011507187881677));
	CHECK_EQ_I(ts.t[0]->host_events, 83529);
	CHECK_EQ_I(ts.t[0]->ncoll, 156);
	trace_set_release(&ts);
}

static void test_real_rocm62_hex_stream_no_distinfo(void)
{
	const char *p = data("hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz");
	struct trace_set ts;
	struct aorta_error e;

	if (!p)
		SKIP("shared data not found");
	/* python: no distributedInfo; k 14, c 2, launch 21 (args.stream
	 * "0x0" strings on runtime events), step 2, gstep 1, host 95,
	 * kernel_dur_sum_ns 110881, streams {0: 16}, device 2 */
	CHECK_EQ_I(load_file(p, &ts, &e), AORTA_OK);
	if (ts.n != 1)
		return;
	struct trace *t = ts.t[0];
	struct counts c = count(t);
	CHECK_EQ_I(t->rank, -1);
	CHECK_EQ_I(t->world_size, -1);
	CHECK_EQ_I(t->device, 2);
	CHECK_EQ_I(c.kern, 14);
	CHECK_EQ_I(c.memcpy, 2);
	CHECK_EQ_I(c.kern_dur, 110881);
	CHECK(c.ts_sum == UINT64_C(67258713693752941));
	CHECK_EQ_I(on_stream(t, 0), 16);
	CHECK_EQ_I(t->nsteps, 2);
	CHECK_EQ_I(t->ngsteps, 1);
	CHECK_EQ_I(t->host_events, 95);
	CHECK_EQ_I(c.with_launch, 16);
	trace_set_release(&ts);
}

static void test_real_ns_resolution_fixed_point(void)
{
	const char *p = data("hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz");
	struct trace_set ts;
	struct aorta_error e;

	if (!p)
		SKIP("shared data not found");
	/* python: rank 0 world 1; k 4350, c 1600, s 145, step 5, host 39310,
	 * kernel_dur_sum_ns 468153602, dev_ts_sum 13421144908676027174 */
	CHECK_EQ_I(load_file(p, &ts, &e), AORTA_OK);
	if (ts.n != 1)
		return;
	struct trace *t = ts.t[0];
	struct counts c = count(t);
	CHECK_EQ_I(t->rank, 0);
	CHECK_EQ_I(t->world_size, 1);
	CHECK_EQ_I(c.kern, 4350);
	CHECK_EQ_I(c.memcpy, 1600);
	CHECK_EQ_I(c.memset, 145);
	CHECK_EQ_I(c.kern_dur, 468153602);
	CHECK(c.ts_sum == UINT64_C(13421144908676027174));
	CHECK_EQ_I(t->nsteps, 5);
	CHECK_EQ_I(t->host_events, 39310);
	trace_set_release(&ts);
}

static void test_real_legacy_categories(void)
{
	const char *p = data("hta/trace_file_list/inference_rank_1.json.gz");
	struct trace_set ts;
	struct aorta_error e;

	if (!p)
		SKIP("shared data not found");
	/* python: distributedInfo {"rank": 1} only; cat "Kernel" x4 on stream 7,
	 * "Runtime" launches 8, host 9, kernel_dur_sum_ns 30000 (integer us) */
	CHECK_EQ_I(load_file(p, &ts, &e), AORTA_OK);
	if (ts.n != 1)
		return;
	struct trace *t = ts.t[0];
	struct counts c = count(t);
	CHECK_EQ_I(t->rank, 1);
	CHECK_EQ_I(t->world_size, -1);
	CHECK_EQ_I(c.kern, 4);
	CHECK_EQ_I(c.kern_dur, 30000);
	CHECK(c.ts_sum == UINT64_C(6662145494920978000));
	CHECK_EQ_I(on_stream(t, 7), 4);
	CHECK_EQ_I(t->host_events, 9);
	CHECK_EQ_I(c.with_launch, 4);
	trace_set_release(&ts);
}

static void test_real_cpu_only_is_ok_with_no_spans(void)
{
	const char *p = data("hta/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz");
	struct trace_set ts;
	struct aorta_error e;

	if (!p)
		SKIP("shared data not found");
	/* python: rank 34 world 300; 30 events, no device events, step 1,
	 * host 16.  Decision: a trace with events but no GPU spans is read
	 * (n == 0); only an empty traceEvents array is an error. */
	CHECK_EQ_I(load_file(p, &ts, &e), AORTA_OK);
	if (ts.n != 1)
		return;
	CHECK_EQ_I(ts.t[0]->n, 0);
	CHECK_EQ_I(ts.t[0]->rank, 34);
	CHECK_EQ_I(ts.t[0]->world_size, 300);
	CHECK_EQ_I(ts.t[0]->nsteps, 1);
	CHECK_EQ_I(ts.t[0]->host_events, 16);
	trace_set_release(&ts);
}

static void test_real_cuda_sync_on_stream_only(void)
{
	const char *p = data("hta/critical_path/cuda_event_sync_multi_stream/event_sync_trace.json.gz");
	struct trace_set ts;
	struct aorta_error e;

	if (!p)
		SKIP("shared data not found");
	/* python: 5 cuda_sync events, 1 with args.stream >= 0; k 3, s 3 */
	CHECK_EQ_I(load_file(p, &ts, &e), AORTA_OK);
	if (ts.n != 1)
		return;
	struct counts c = count(ts.t[0]);
	CHECK_EQ_I(c.sync, 1);
	CHECK_EQ_I(c.kern, 3);
	CHECK_EQ_I(c.memset, 3);
	CHECK_EQ_I(c.kern_dur, 369000);
	trace_set_release(&ts);
}

/* The op of trace t with correlation c (-1: none). */
static long span_of_corr(const struct trace *t, int64_t c)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->corr[i] == c && t->hint[i] != R_SYNC)
			return (long)i;
	return -1;
}

static void test_real_stream_wait_paired(void)
{
	const char *p = data("hta/critical_path/cuda_event_sync_multi_stream/event_sync_trace.json.gz");
	struct trace_set ts;
	struct aorta_error e;

	if (!p)
		SKIP("shared data not found");
	/* by hand from the file: of its 5 cuda_sync records one is a stream
	 * wait ("Stream Wait Event", stream 24, wait_on_stream 20, record corr
	 * 1385, corr 1389); the others wait on the host (stream -1).  Launched
	 * on stream 20 before the cudaEventRecord of corr 1385 (ts +19377 us):
	 * the memset of corr 25 (+354) and the sgemm of corr 27 (+381): the op
	 * waited for is the sgemm.  Launched on stream 24 after the
	 * cudaStreamWaitEvent of corr 1389 (+19393): the memset of corr 1411
	 * (+19731), then the sgemm of corr 1413: the memset waits.  1 pair. */
	CHECK_EQ_I(load_file(p, &ts, &e), AORTA_OK);
	if (ts.n != 1)
		return;
	const struct trace *t = ts.t[0];
	CHECK_EQ_I((long long)t->ndeps, 1);
	if (t->ndeps == 1) {
		CHECK_EQ_I(t->deps[0].op, span_of_corr(t, 1411));
		CHECK_EQ_I(t->deps[0].to, span_of_corr(t, 27));
		CHECK_EQ_I(t->deps[0].how, DEP_RECORD);
		CHECK_EQ_I(t->stream[t->deps[0].op], 24);
		CHECK_EQ_I(t->stream[t->deps[0].to], 20);
	}
	trace_set_release(&ts);

	/* alexnet: 20 stream waits; 14 wait on streams 21-27, where nothing was
	 * launched before their record (cuDNN's stream pool joining): 6 pairs
	 * (an independent Python pairing of the file), each waiting op starting
	 * after the op it waits for ends */
	const char *a = data_glob("hta/critical_path/alexnet", "benchmark_result");
	if (!a)
		return;
	CHECK_EQ_I(load_file(a, &ts, &e), AORTA_OK);
	if (ts.n != 1)
		return;
	t = ts.t[0];
	CHECK_EQ_I((long long)t->ndeps, 6);
	int after = 0;
	for (size_t k = 0; k < t->ndeps; k++)
		after += t->start_ns[t->deps[k].op] >= t->end_ns[t->deps[k].to] && t->deps[k].how == DEP_RECORD;
	CHECK_EQ_I(after, 6);
	trace_set_release(&ts);
}

/* A torch 2.11 / CUDA 13 job (bench/whatif/sync_events_trace.py --one-gpu
 * on the H200, rank 0: tests/data/kineto_sync): three steps, each a side
 * stream's GEMM (stream 13) recorded by an event the default stream (7)
 * waits for.  CUPTI 13 delivers cudaEventRecord's records only when their
 * activity kind is on: with it (the script's default) every stream wait
 * names its event record (corr 311, 562, 813), and each pairs (by an
 * independent pairing of the file, bench/whatif/pair_waits.py) the first
 * op launched on stream 7 after the wait, of corr 333, 584 and 835, with
 * the last launched on stream 13 before the record, of corr 297, 548 and
 * 799, each starting 2-3 us after that op ends.  Without it
 * (--no-cuda-event) Kineto writes -1 for the stream and the record; paired
 * by host order (the last
 * cudaEventRecord call of the wait's thread before it, the last op that
 * thread launched before that on another stream), the run gives the same
 * records and the same three pairs (bench/whatif/pair_waits.py on that
 * file by the same rule). */
static void test_torch211_stream_waits(void)
{
	static const int32_t op[3] = { 333, 584, 835 }, to[3] = { 297, 548, 799 };
	static const char *const file[2] = { "tests/data/kineto_sync/paired_rank0.json.gz",
					      "tests/data/kineto_sync/unpaired_rank0.json.gz" };
	for (int f = 0; f < 2; f++) {
		struct trace_set ts;
		struct aorta_error e;
		CHECK_EQ_I(load_file(file[f], &ts, &e), AORTA_OK);
		if (ts.n != 1)
			continue;
		const struct trace *t = ts.t[0];
		CHECK_EQ_I((long long)t->ndeps, 3);
		for (size_t k = 0; k < t->ndeps && k < 3; k++) {
			CHECK_EQ_I(t->deps[k].how, DEP_RECORD);
			CHECK_EQ_I(t->deps[k].op, span_of_corr(t, op[k]));
			CHECK_EQ_I(t->deps[k].to, span_of_corr(t, to[k]));
			CHECK_EQ_I(t->stream[t->deps[k].op], 7);
			CHECK_EQ_I(t->stream[t->deps[k].to], 13);
		}
		trace_set_release(&ts);
	}
}

static void test_real_nccl_meta_a100(void)
{
	const char *p = data("hta/nccl_parser_config/nccl_data.json.gz");
	struct trace_set ts;
	struct aorta_error e;

	if (!p)
		SKIP("shared data not found");
	/* python: rank 0 world 2; coll 21, In msg nelems sum 76830615; first
	 * collective kernel: allreduce, 6637568 elems, group 2, Float, pg "0",
	 * "default_pg"; k 2700 with kernel_dur_sum_ns 162532340 */
	CHECK_EQ_I(load_file(p, &ts, &e), AORTA_OK);
	if (ts.n != 1)
		return;
	struct trace *t = ts.t[0];
	int64_t in = 0;
	int found = 0;
	CHECK_EQ_I(t->ncoll, 21);
	for (size_t i = 0; i < t->ncoll; i++)
		in += t->coll[i].in_nelems;
	CHECK_EQ_I(in, 76830615);
	CHECK_EQ_I(count(t).kern_dur, 162532340);
	for (size_t i = 0; i < t->n && !found; i++) {
		if (t->meta[i] == UINT32_MAX || t->start_ns[i] != INT64_C(4458677009853422))
			continue;
		const struct coll_meta *m = &t->coll[t->meta[i]];
		found = 1;
		CHECK_EQ_I(t->end_ns[i] - t->start_ns[i], 2636669);
		CHECK_STR(strtab_get(&t->names, m->coll_name), "allreduce");
		CHECK_EQ_I(m->in_nelems, 6637568);
		CHECK_EQ_I(m->out_nelems, 6637568);
		CHECK_EQ_I(m->group_size, 2);
		CHECK_STR(strtab_get(&t->names, m->pg_name), "0");
		CHECK_STR(strtab_get(&t->names, m->pg_desc), "default_pg");
		CHECK_EQ_I(m->seq, -1);
	}
	CHECK(found);
	trace_set_release(&ts);
}

static void test_real_every_kineto_file_reads(void)
{
	char cmd[1200], line[1024];
	FILE *f;
	int n = 0, bad = 0;

	snprintf(cmd, sizeof(cmd), "find %s/kineto -name '*.json' -o -name '*.json.gz' 2>/dev/null",
		 shared_data());
	f = popen(cmd, "r");
	if (!f)
		SKIP("popen failed");
	while (fgets(line, sizeof(line), f)) {
		struct trace_set ts;
		struct aorta_error e;
		line[strcspn(line, "\n")] = '\0';
		if (strstr(line, "ddp_4rank_56steps_large"))
			continue; /* big: the benchmark covers it */
		n++;
		if (load_file(line, &ts, &e) != AORTA_OK) {
			fprintf(stderr, "  %s: %s\n", line, e.msg);
			bad++;
			continue;
		}
		CHECK_EQ_I(ts.t[0]->skipped, 0);
		trace_set_release(&ts);
	}
	pclose(f);
	if (n == 0)
		SKIP("shared data not found");
	CHECK_EQ_I(bad, 0);
}

/* ------------------------------------------------------------------ */
/* snippets                                                             */
/* ------------------------------------------------------------------ */

#define EV(ts_, dur_, extra) "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":" ts_ \
	",\"dur\":" dur_ extra "}"

/* Loads json under several window sizes; every run must give the same
 * status, span count, first span and skip count.  Returns the trace of
 * the default-window run (caller releases ts). */
static enum aorta_status load_all_windows(const char *json, struct trace_set *ts, struct aorta_error *e)
{
	static const long win[] = { 16, 17, 19, 23, 31, 64, 100, 0 };
	enum aorta_status ref = AORTA_OK;
	long long ref_off = 0;
	size_t ref_n = 0;
	uint64_t ref_skip = 0;
	int64_t ref_s = 0;

	for (size_t w = 0; w < sizeof(win) / sizeof(win[0]); w++) {
		set_window(win[w]);
		enum aorta_status st = load_mem(json, ts, e);
		set_window(0);
		size_t n = st == AORTA_OK ? ts->t[0]->n : 0;
		uint64_t sk = st == AORTA_OK ? ts->t[0]->skipped : 0;
		int64_t s0 = n ? ts->t[0]->start_ns[0] : 0;
		if (w == 0) {
			ref = st;
			ref_off = st ? e->offset : 0;
			ref_n = n;
			ref_skip = sk;
			ref_s = s0;
		} else {
			CHECK_EQ_I(st, ref);
			if (st)
				CHECK_EQ_I(e->offset, ref_off);
			CHECK_EQ_I(n, ref_n);
			CHECK_EQ_I(sk, ref_skip);
			CHECK_EQ_I(s0, ref_s);
		}
		if (win[w] != 0 && st == AORTA_OK)
			trace_set_release(ts);
	}
	return ref;
}

static void test_snippet_escapes_in_names_and_keys(void)
{
	const char *j = "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\","
			"\"n\\u0061me\":\"a\\\"b\\\\c\\/\\u00e9\\ud83d\\ude00\\n\","
			"\"pid\":0,\"tid\":7,\"ts\":1,\"dur\":2}]}";
	struct trace_set ts;
	struct aorta_error e;

	CHECK_EQ_I(load_all_windows(j, &ts, &e), AORTA_OK);
	if (ts.n != 1)
		return;
	CHECK_EQ_I(ts.t[0]->n, 1);
	CHECK_STR(strtab_get(&ts.t[0]->names, ts.t[0]->name[0]), "a\"b\\c/\xc3\xa9\xf0\x9f\x98\x80\n");
	trace_set_release(&ts);
}

static void test_snippet_any_key_order_and_whitespace(void)
{
	const char *j = " \n{ \"distributedInfo\" : { \"world_size\" :8 , \"rank\": 3 } ,\r\n"
			"\t\"traceEvents\" : [ { \"args\" : { \"stream\" : 5 , \"correlation\" : 9 } ,"
			" \"dur\" : 2.5 , \"ts\" : 10 , \"name\" : \"g\" , \"tid\" : 1 , \"cat\" : \"kernel\" ,"
			" \"pid\" : 1 , \"ph\" : \"X\" } ] , \"schemaVersion\" : 1 } \n ";
	const char *j2 = "{\"traceEvents\":[" EV("10", "2.5", "") "],\"distributedInfo\":{\"rank\":2,\"world_size\":4}}";
	struct trace_set ts;
	struct aorta_error e;

	CHECK_EQ_I(load_all_windows(j, &ts, &e), AORTA_OK);
	if (ts.n == 1) {
		struct trace *t = ts.t[0];
		CHECK_EQ_I(t->rank, 3);
		CHECK_EQ_I(t->world_size, 8);
		CHECK_EQ_I(t->n, 1);
		CHECK_EQ_I(t->stream[0], 5);
		CHECK_EQ_I(t->device, 1);
		CHECK_EQ_I(t->start_ns[0], 10000);
		CHECK_EQ_I(t->end_ns[0], 12500);
		trace_set_release(&ts);
	}
	/* distributedInfo after traceEvents */
	CHECK_EQ_I(load_all_windows(j2, &ts, &e), AORTA_OK);
	if (ts.n == 1) {
		CHECK_EQ_I(ts.t[0]->rank, 2);
		CHECK_EQ_I(ts.t[0]->world_size, 4);
		CHECK_EQ_I(ts.t[0]->stream[0], 7); /* from tid */
		trace_set_release(&ts);
	}
}

static void test_snippet_nested_args_are_skipped(void)
{
	const char *j = "{\"traceEvents\":[" EV("1", "1", ",\"args\":{\"grid\":[1,[2,{\"stream\":99}],{}],"
			"\"x\":{\"stream\":98,\"y\":[true,false,null,-0.5e-3,\"}\"]},\"stream\":3,"
			"\"device\":4,\"e\":[]}") "]}";
	struct trace_set ts;
	struct aorta_error e;

	CHECK_EQ_I(load_all_windows(j, &ts, &e), AORTA_OK);
	if (ts.n != 1)
		return;
	CHECK_EQ_I(ts.t[0]->stream[0], 3);
	CHECK_EQ_I(ts.t[0]->device, 4);
	trace_set_release(&ts);
}

static int64_t ts_of(const char *num)
{
	char j[256];
	struct trace_set ts;
	struct aorta_error e;
	int64_t v = INT64_MIN;

	snprintf(j, sizeof(j), "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\","
		 "\"ts\":%s,\"dur\":0}]}", num);
	if (load_mem(j, &ts, &e) != AORTA_OK)
		return INT64_MIN + 1;
	if (ts.t[0]->n == 1)
		v = ts.t[0]->start_ns[0];
	trace_set_release(&ts);
	return v;
}

static void test_snippet_fixed_point_times(void)
{
	CHECK_EQ_I(ts_of("4442407985488.257"), INT64_C(4442407985488257));
	CHECK_EQ_I(ts_of("1712195495519689.0"), INT64_C(1712195495519689000));
	CHECK_EQ_I(ts_of("1665536373729077"), INT64_C(1665536373729077000));
	CHECK_EQ_I(ts_of("0.0005"), 1);        /* half away from zero */
	CHECK_EQ_I(ts_of("0.00049999"), 0);
	CHECK_EQ_I(ts_of("1.0015"), 1002);
	CHECK_EQ_I(ts_of("-1.0015"), -1002);
	CHECK_EQ_I(ts_of("12.3456789"), 12346);
	CHECK_EQ_I(ts_of("1.5e3"), 1500000);
	CHECK_EQ_I(ts_of("2E-3"), 2);
	CHECK_EQ_I(ts_of("25e-5"), 0);         /* 0.25 ns */
	CHECK_EQ_I(ts_of("0"), 0);
	CHECK_EQ_I(ts_of("0.000"), 0);
	CHECK_EQ_I(ts_of("4442407985488.2570000000000000000001"), INT64_C(4442407985488257));
	/* 16 integer digits + 4 decimals: the 20th digit rounds */
	CHECK_EQ_I(ts_of("1712195495519695.8755"), INT64_C(1712195495519695876));
	CHECK_EQ_I(ts_of("1712195495519695.8754"), INT64_C(1712195495519695875));
	CHECK_EQ_I(ts_of("1712195495519695.875"), INT64_C(1712195495519695875));
	CHECK_EQ_I(ts_of("-1712195495519695.8755"), -INT64_C(1712195495519695876));
	/* out of int64 range: skipped, not an error */
	CHECK_EQ_I(ts_of("1e30"), INT64_MIN);
}

static void test_snippet_wrong_types_are_skipped_and_counted(void)
{
	const char *j = "{\"traceEvents\":["
			EV("\"12\"", "1", "") ","          /* ts a string */
			EV("12", "null", "") ","           /* dur null */
			"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1}," /* dur missing */
			EV("12", "-1", "") ","             /* negative */
			EV("12", "2e12", "") ","           /* 2e6 s: absurd */
			"5,"                               /* not an object */
			"{\"cat\":\"kernel\",\"ts\":1,\"dur\":1}," /* no ph */
			EV("12", "1", ",\"args\":{\"stream\":\"zz\",\"correlation\":[1]}") "," /* kept, bad args ignored */
			"{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":\"Spans\"}"
			"]}";
	struct trace_set ts;
	struct aorta_error e;

	CHECK_EQ_I(load_all_windows(j, &ts, &e), AORTA_OK);
	if (ts.n != 1)
		return;
	CHECK_EQ_I(ts.t[0]->skipped, 7);
	CHECK_EQ_I(ts.t[0]->n, 1);
	CHECK_EQ_I(ts.t[0]->stream[0], 7); /* falls back to tid */
	CHECK(strstr(ts.t[0]->skipped_first, "ts") != NULL);
	trace_set_release(&ts);
}

static void test_snippet_second_device_is_split(void)
{
	/* one process driving two GPUs (tune-tp's traces): kernels on pid 0
	 * and pid 1 with the same stream id become two timelines, one per
	 * device, each with the process's launches and steps; the second
	 * device's collective metadata is interned in its own trace */
	const char *j = "{\"traceEvents\":["
			"{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#3\",\"pid\":9,\"tid\":1,"
			"\"ts\":0,\"dur\":10},"
			"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":9,\"tid\":1,"
			"\"ts\":1,\"dur\":1,\"args\":{\"correlation\":77}},"
			EV("1", "1", "") ","
			"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":1,\"tid\":7,\"ts\":2,\"dur\":1,"
			"\"args\":{\"correlation\":77,\"Collective name\":\"allreduce\",\"dtype\":\"Float\"}},"
			"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":1,\"tid\":7,\"ts\":4,\"dur\":1},"
			EV("6", "1", "") "]}";
	struct trace_set ts;
	struct aorta_error e;

	CHECK_EQ_I(load_all_windows(j, &ts, &e), AORTA_OK);
	CHECK_EQ_I((long long)ts.n, 2);
	if (ts.n != 2)
		return;
	CHECK_EQ_I(ts.t[0]->device, 0);
	CHECK_EQ_I(ts.t[1]->device, 1);
	CHECK_EQ_I(ts.t[0]->n, 2);
	CHECK_EQ_I(ts.t[1]->n, 2);
	CHECK_EQ_I(ts.t[0]->other_device, -1);
	CHECK_EQ_I((long long)ts.t[0]->other_device_spans, 0);
	CHECK_EQ_I((long long)ts.t[0]->host_events, 2);
	CHECK_EQ_I((long long)ts.t[1]->host_events, 0);
	/* both timelines know the host step; device 1's kernel found its launch */
	CHECK_EQ_I((long long)ts.t[1]->nsteps, 1);
	CHECK_EQ_I((long long)ts.t[0]->nsteps, 1);
	int launched = 0, meta = 0;
	for (size_t i = 0; i < ts.t[1]->n; i++) {
		launched += ts.t[1]->launch_ns[i] == 1000;
		if (ts.t[1]->meta[i] != UINT32_MAX) {
			const struct coll_meta *m = &ts.t[1]->coll[ts.t[1]->meta[i]];
			meta += m->dtype_bytes == 4 && !strcmp(strtab_get(&ts.t[1]->names, m->coll_name), "allreduce");
		}
	}
	CHECK_EQ_I(launched, 1);
	CHECK_EQ_I(meta, 1);
	trace_set_release(&ts);

	/* a single-device trace counts none */
	const char *k = "{\"traceEvents\":[" EV("1", "1", "") "," EV("3", "1", "") "]}";
	CHECK_EQ_I(load_all_windows(k, &ts, &e), AORTA_OK);
	if (ts.n == 1) {
		CHECK_EQ_I(ts.t[0]->other_device, -1);
		CHECK_EQ_I((long long)ts.t[0]->other_device_spans, 0);
	}
	trace_set_release(&ts);
}

static void test_snippet_stream_wait(void)
{
	/* stream 7: k1 launched at 1 us, k2 at 3; the event recorded at 4
	 * (corr 50); k3 launched on stream 7 at 6 (after the record: not waited
	 * for); the wait call at 7 (corr 60): stream 8 waits on stream 7's
	 * event; k4 launched on stream 8 at 5 (before the wait: free), k5 at 8
	 * (the first after it): k5 waits for k2 */
#define RT(nm, ts_, c) "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"" nm "\",\"pid\":9,\"tid\":1," \
	"\"ts\":" ts_ ",\"dur\":0.5,\"args\":{\"correlation\":" c "}}"
#define KN(nm, st, ts_, dur_, c) "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" nm "\",\"pid\":0,\"tid\":" st "," \
	"\"ts\":" ts_ ",\"dur\":" dur_ ",\"args\":{\"stream\":" st ",\"correlation\":" c "}}"
	const char *j = "{\"traceEvents\":["
			RT("cudaLaunchKernel", "1", "11") "," RT("cudaLaunchKernel", "3", "12") ","
			RT("cudaEventRecord", "4", "50") "," RT("cudaLaunchKernel", "5", "14") ","
			RT("cudaLaunchKernel", "6", "13") "," RT("cudaStreamWaitEvent", "7", "60") ","
			RT("cudaLaunchKernel", "8", "15") ","
			"{\"ph\":\"X\",\"cat\":\"cuda_sync\",\"name\":\"Stream Wait Event\",\"pid\":0,\"tid\":8,"
			"\"ts\":7.1,\"dur\":0.2,\"args\":{\"cuda_sync_kind\":\"Stream Wait Event\",\"wait_on_stream\":7,"
			"\"wait_on_cuda_event_record_corr_id\":50,\"stream\":8,\"correlation\":60}},"
			KN("k1", "7", "10", "10", "11") "," KN("k2", "7", "20", "10", "12") ","
			KN("k3", "7", "30", "10", "13") "," KN("k4", "8", "10", "5", "14") ","
			KN("k5", "8", "30", "5", "15") "]}";
#undef RT
#undef KN
	struct trace_set ts;
	struct aorta_error e;

	CHECK_EQ_I(load_all_windows(j, &ts, &e), AORTA_OK);
	if (ts.n != 1)
		return;
	const struct trace *t = ts.t[0];
	CHECK_EQ_I((long long)t->ndeps, 1);
	if (t->ndeps == 1) {
		CHECK_EQ_I(t->deps[0].op, span_of_corr(t, 15));
		CHECK_EQ_I(t->deps[0].to, span_of_corr(t, 12));
		CHECK_EQ_I(t->deps[0].how, DEP_RECORD);
	}
	trace_set_release(&ts);
}

/* The wait of test_snippet_stream_wait as CUPTI 13 leaves it without
 * cudaEventRecord's records: wait_on_stream and the record's correlation
 * -1.  Paired by host order: the last cudaEventRecord call of the wait
 * call's thread before it (corr 50, at 4 us), then the last op that
 * thread launched before the record (k2, stream 7): k5 waits for k2, as
 * with the ids.  Nothing is invented: a record made on another thread
 * (tid 2) pairs nothing, nor does a record whose thread last launched on
 * the waiting stream (k0 on stream 8 at 3.5 us). */
static void test_snippet_unresolved_stream_wait(void)
{
#define RT(nm, tid, ts_, c) "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"" nm "\",\"pid\":9,\"tid\":" tid "," \
	"\"ts\":" ts_ ",\"dur\":0.2,\"args\":{\"correlation\":" c "}}"
#define KN(nm, st, ts_, dur_, c) "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" nm "\",\"pid\":0,\"tid\":" st "," \
	"\"ts\":" ts_ ",\"dur\":" dur_ ",\"args\":{\"stream\":" st ",\"correlation\":" c "}}"
#define WAIT "{\"ph\":\"X\",\"cat\":\"cuda_sync\",\"name\":\"Stream Wait Event\",\"pid\":0,\"tid\":8," \
	"\"ts\":7.1,\"dur\":0.2,\"args\":{\"cuda_sync_kind\":\"Stream Wait Event\",\"wait_on_stream\":-1," \
	"\"wait_on_cuda_event_record_corr_id\":-1,\"wait_on_cuda_event_id\":21,\"stream\":8,\"correlation\":60}}"
#define KERNELS KN("k1", "7", "10", "10", "11") "," KN("k2", "7", "20", "10", "12") "," \
	KN("k3", "7", "30", "10", "13") "," KN("k4", "8", "10", "5", "14") "," KN("k5", "8", "30", "5", "15")
	const char *j[3] = {
		"{\"traceEvents\":[" RT("cudaLaunchKernel", "1", "1", "11") "," RT("cudaLaunchKernel", "1", "3", "12") ","
		RT("cudaEventRecordWithFlags", "1", "4", "50") "," RT("cudaLaunchKernel", "1", "5", "14") ","
		RT("cudaLaunchKernel", "1", "6", "13") "," RT("cudaStreamWaitEvent", "1", "7", "60") ","
		RT("cudaLaunchKernel", "1", "8", "15") "," WAIT "," KERNELS "]}",
		"{\"traceEvents\":[" RT("cudaLaunchKernel", "1", "1", "11") "," RT("cudaLaunchKernel", "1", "3", "12") ","
		RT("cudaEventRecordWithFlags", "2", "4", "50") "," RT("cudaLaunchKernel", "1", "5", "14") ","
		RT("cudaLaunchKernel", "1", "6", "13") "," RT("cudaStreamWaitEvent", "1", "7", "60") ","
		RT("cudaLaunchKernel", "1", "8", "15") "," WAIT "," KERNELS "]}",
		"{\"traceEvents\":[" RT("cudaLaunchKernel", "1", "1", "11") "," RT("cudaLaunchKernel", "1", "3", "12") ","
		RT("cudaLaunchKernel", "1", "3.5", "16") "," RT("cudaEventRecordWithFlags", "1", "4", "50") ","
		RT("cudaLaunchKernel", "1", "5", "14") "," RT("cudaLaunchKernel", "1", "6", "13") ","
		RT("cudaStreamWaitEvent", "1", "7", "60") "," RT("cudaLaunchKernel", "1", "8", "15") "," WAIT ","
		KN("k0", "8", "5", "4", "16") "," KERNELS "]}",
	};
#undef RT
#undef KN
#undef WAIT
#undef KERNELS
	for (int v = 0; v < 3; v++) {
		struct trace_set ts;
		struct aorta_error e;
		CHECK_EQ_I(load_all_windows(j[v], &ts, &e), AORTA_OK);
		if (ts.n != 1)
			continue;
		const struct trace *t = ts.t[0];
		CHECK_EQ_I((long long)t->ndeps, v == 0);
		if (v == 0 && t->ndeps == 1) {
			CHECK_EQ_I(t->deps[0].op, span_of_corr(t, 15));
			CHECK_EQ_I(t->deps[0].to, span_of_corr(t, 12));
			CHECK_EQ_I(t->deps[0].how, DEP_RECORD);
		}
		trace_set_release(&ts);
	}
}

static void test_snippet_hex_stream_and_coll_meta(void)
{
	const char *j = "{\"traceEvents\":[" EV("1", "1", ",\"args\":{\"stream\":\"0x1f\",\"device\":3,"
			"\"Collective name\":\"_allgather_base\",\"In msg nelems\":100,\"Out msg nelems\":400,"
			"\"Group size\":4,\"dtype\":\"BFloat16\",\"Process Group Name\":\"2\","
			"\"Process Group Description\":\"tp\\u005fgroup\",\"Seq\":17}") "]}";
	struct trace_set ts;
	struct aorta_error e;

	CHECK_EQ_I(load_all_windows(j, &ts, &e), AORTA_OK);
	if (ts.n != 1)
		return;
	struct trace *t = ts.t[0];
	CHECK_EQ_I(t->stream[0], 31);
	CHECK_EQ_I(t->device, 3);
	CHECK_EQ_I(t->ncoll, 1);
	if (t->ncoll == 1 && t->meta[0] == 0) {
		const struct coll_meta *m = &t->coll[0];
		CHECK_STR(strtab_get(&t->names, m->coll_name), "_allgather_base");
		CHECK_STR(strtab_get(&t->names, m->dtype), "BFloat16");
		CHECK_STR(strtab_get(&t->names, m->pg_name), "2");
		CHECK_STR(strtab_get(&t->names, m->pg_desc), "tp_group");
		CHECK_EQ_I(m->in_nelems, 100);
		CHECK_EQ_I(m->out_nelems, 400);
		CHECK_EQ_I(m->group_size, 4);
		CHECK_EQ_I(m->seq, 17);
		CHECK_EQ_I(m->dtype_bytes, 2);
	}
	trace_set_release(&ts);
}

/* "Process Group Ranks" (a string "[0, 1, 2, 3]" in PyTorch's traces) is
 * interned as "0,1,2,3"; an empty list and anything that is not a closed
 * list of ranks in 0..2^31-1 are unknown (0), never a partial list. */
static void test_snippet_process_group_ranks(void)
{
	static const struct { const char *in, *want; } c[] = {
		{ "[0, 1, 2, 3]", "0,1,2,3" }, { "[7]", "7" }, { " [ 4 ,5 ] ", "4,5" },
		{ "[]", "" }, { "[0, 1", "" }, { "[0,,1]", "" }, { "[0,]", "" }, { "[a]", "" },
		{ "[1 2]", "" }, { "0, 1", "" }, { "[2147483648]", "" }, { "[-1]", "" }, { "[0] x", "" },
	};
	for (size_t k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		char j[512];
		snprintf(j, sizeof(j), "{\"traceEvents\":[" EV("1", "1", ",\"args\":{\"stream\":7,"
			 "\"Collective name\":\"allreduce\",\"Process Group Name\":\"3\","
			 "\"Process Group Ranks\":\"%s\"}") "]}", c[k].in);
		struct trace_set ts;
		struct aorta_error e;
		CHECK_EQ_I(load_mem(j, &ts, &e), AORTA_OK);
		if (ts.n == 1 && ts.t[0]->ncoll == 1) {
			const struct trace *t = ts.t[0];
			if (strcmp(strtab_get(&t->names, t->coll[0].pg_ranks), c[k].want) != 0)
				fprintf(stderr, "    ranks '%s' read as '%s'\n", c[k].in,
					strtab_get(&t->names, t->coll[0].pg_ranks));
			CHECK_STR(strtab_get(&t->names, t->coll[0].pg_ranks), c[k].want);
			CHECK_EQ_I(t->coll[0].pg_ranks == 0, c[k].want[0] == 0);
		} else {
			CHECK(0);
		}
		trace_set_release(&ts);
	}
}

static void test_snippet_steps_launches_and_rank_hint(void)
{
	const char *j = "{\"traceEvents\":["
			"{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#4\",\"pid\":9,\"tid\":9,\"ts\":0,\"dur\":100},"
			"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":9,\"tid\":9,\"ts\":10,\"dur\":5,\"args\":{\"correlation\":77}},"
			"{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"ProfilerStep#4\",\"pid\":0,\"tid\":7,\"ts\":12,\"dur\":50},"
			"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"ProfilerStep#x\",\"pid\":9,\"tid\":9,\"ts\":1,\"dur\":1},"
			"{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy DtoD\",\"pid\":0,\"tid\":7,\"ts\":20,\"dur\":1,\"args\":{\"correlation\":77,\"bytes\":4096}}"
			"]}";
	struct trace_set ts;
	struct aorta_error e;

	CHECK_EQ_I(load_all_windows(j, &ts, &e), AORTA_OK);
	if (ts.n != 1)
		return;
	struct trace *t = ts.t[0];
	CHECK_EQ_I(t->rank, 7); /* o->rank_hint, no distributedInfo */
	CHECK_EQ_I(t->nsteps, 1);
	CHECK_EQ_I(t->steps[0].number, 4);
	CHECK_EQ_I(t->ngsteps, 1);
	CHECK_EQ_I(t->host_events, 3);
	CHECK_EQ_I(t->pid, 9);
	CHECK_EQ_I(t->n, 1);
	CHECK_EQ_I(t->bytes[0], 4096);
	CHECK_EQ_I(t->hint[0], R_MEMCPY);
	CHECK_EQ_I(t->launch_ns[0], 10000);
	CHECK_EQ_I(t->step[0], 0);
	trace_set_release(&ts);
}

static void expect_error(const char *json, long long offset, const char *msg_part)
{
	struct trace_set ts;
	struct aorta_error e;

	CHECK_EQ_I(load_all_windows(json, &ts, &e), AORTA_EINPUT);
	CHECK_EQ_I(ts.n, 0);
	if (offset >= -1)
		CHECK_EQ_I(e.offset, offset);
	if (!strstr(e.msg, msg_part)) {
		fprintf(stderr, "  message \"%s\" lacks \"%s\"\n", e.msg, msg_part);
		CHECK(0);
	}
	CHECK_STR(e.path, "snippet");
}

static void test_snippet_structural_errors_name_offset(void)
{
	const char *ok = "{\"traceEvents\":[" EV("1", "1", "") "]}";
	char trunc[256];
	size_t n = strlen(ok);

	/* every proper prefix is truncated input, reported at its end */
	for (size_t k = 1; k + 1 < n; k++) {
		memcpy(trunc, ok, k);
		trunc[k] = '\0';
		expect_error(trunc, (long long)k, "unexpected end of input");
	}
	expect_error("", 0, "unexpected end of input");
	expect_error("{\"traceEvents\" [", 15, "expected ':'");
	expect_error("{\"traceEvents\":[{\"ph\":\"X}]}", 27, "unexpected end of input");
	expect_error("{\"traceEvents\":[{\"ph\":\"\\x\"}]}", 24, "escape");
	expect_error("{\"traceEvents\":[{\"ph\":\"a\001\"}]}", 24, "control character");
	expect_error("{\"traceEvents\":[{\"ts\":01}]}", 23, "expected ',' or '}'");
	expect_error("{\"traceEvents\":[{\"ts\":1.}]}", 24, "digit");
	expect_error("{\"traceEvents\":[{\"x\":tru}]}", 24, "expected a value");
	expect_error("{\"traceEvents\":[{}],}", 20, "key");
	expect_error("{\"traceEvents\":[{},]}", 19, "expected a value");
	expect_error("{\"traceEvents\":[{}]} x", 21, "after the top-level object");
	expect_error("[1,2]", 0, "expected '{'");
	expect_error("{\"traceEvents\":[{\"a\":[1 2]}]}", 24, "expected ',' or ']'");
	expect_error("{\"other\":1}", -1, "no 'traceEvents'");
	expect_error("{\"traceEvents\":[]}", -1, "no trace events");
	expect_error("{\"traceEvents\":{}}", 15, "expected '['");
	{
		/* nesting deeper than 512 */
		static char deep[2200];
		size_t k = (size_t)snprintf(deep, sizeof(deep), "{\"traceEvents\":[{\"a\":");
		for (int i = 0; i < 600; i++)
			deep[k++] = '[';
		for (int i = 0; i < 600; i++)
			deep[k++] = ']';
		memcpy(deep + k, "}]}", 4);
		expect_error(deep, -2, "nesting");
	}
}

static void test_snippet_nul_byte_is_an_error(void)
{
	static const char j[] = "{\"traceEvents\":[{\0}]}";
	struct trace_set ts;
	struct aorta_error e;
	struct ingest_opts o = { .rules = NULL, .rank_hint = -1 };

	memset(&ts, 0, sizeof(ts));
	CHECK_EQ_I(ingest_kineto_mem("nul", j, sizeof(j) - 1, &o, &ts, &e), AORTA_EINPUT);
	CHECK_EQ_I(e.offset, 17);
	CHECK_EQ_I(ts.n, 0);
}

static void test_file_gzip_corrupt_and_truncated(void)
{
	char dir[] = "/tmp/aorta_tk_XXXXXX";
	char p[256];
	const char *j = "{\"traceEvents\":[" EV("1", "1", "") "," EV("2", "1", "") "]}";
	struct trace_set ts;
	struct aorta_error e;
	gzFile g;

	if (!mkdtemp(dir))
		SKIP("mkdtemp failed");
	snprintf(p, sizeof(p), "%s/t.json.gz", dir);
	g = gzopen(p, "wb");
	CHECK(g != NULL);
	if (!g)
		return;
	gzwrite(g, j, (unsigned)strlen(j));
	gzclose(g);
	CHECK_EQ_I(load_file(p, &ts, &e), AORTA_OK);
	if (ts.n == 1) {
		CHECK_EQ_I(ts.t[0]->n, 2);
		trace_set_release(&ts);
	}
	/* corrupt: flip a byte of the CRC trailer */
	FILE *f = fopen(p, "r+b");
	CHECK(f != NULL);
	if (f) {
		fseek(f, -6, SEEK_END);
		int c = fgetc(f);
		fseek(f, -6, SEEK_END);
		fputc(c ^ 0x55, f);
		fclose(f);
	}
	CHECK_EQ_I(load_file(p, &ts, &e), AORTA_EINPUT);
	CHECK_EQ_I(ts.n, 0);
	CHECK(strstr(e.msg, "compressed byte") != NULL);
	/* truncated: the first 30 bytes */
	CHECK_EQ_I(truncate(p, 30), 0);
	CHECK_EQ_I(load_file(p, &ts, &e), AORTA_EINPUT);
	CHECK_EQ_I(ts.n, 0);
	CHECK(strstr(e.msg, "compressed byte 30") != NULL);
	/* missing file */
	unlink(p);
	CHECK_EQ_I(load_file(p, &ts, &e), AORTA_EINPUT);
	CHECK(strstr(e.msg, "cannot open") != NULL);
	rmdir(dir);
}

/* Collective identity from the launching host op (docs/metrics.md
 * "Collective identity"): a kernel launched on a thread inside a host
 * collective call (c10d::*, record_param_comms, nccl:*) learns its
 * collective, size and group from the innermost ones; a launch on another
 * thread, or outside any, does not; a compute kernel stays compute; a peer
 * copy inside a collective call is that collective, a local copy stays a
 * copy.  The events are written in the profiler's own layout (the fast
 * path) and read again with the fast path off and at small windows. */
#define PEV(cat, name, tid, ts, dur, args) "{\n    \"ph\": \"X\", \"cat\": \"" cat "\", \"name\": \"" name \
	"\", \"pid\": 1, \"tid\": " tid ",\n    \"ts\": " ts ", \"dur\": " dur ",\n    \"args\": " args "\n  }"
static void test_snippet_host_op_names_the_collective(void)
{
	const char *j = "{\"traceEvents\": [\n  "
		PEV("user_annotation", "ProfilerStep#3", "5", "0", "1000", "{}") ",\n  "
		PEV("cpu_op", "c10d::alltoall_base_", "5", "10", "90",
		    "{\"Input Dims\": [[6144], [6144], [], [], [], []], \"Input type\": [\"float\", \"float\", \"\", \"\", \"\", \"Scalar\"]}") ",\n  "
		PEV("cpu_op", "record_param_comms", "5", "12", "80",
		    "{\"Input Dims\": [[6144], [], [], [], [], [], []], \"Input type\": [\"float\", \"Scalar\"]}") ",\n  "
		PEV("cpu_op", "nccl:all_to_all", "5", "20", "60", "{\"Input Dims\": [[3, 2048]], \"Input type\": [\"long int\"]}") ",\n  "
		PEV("cuda_runtime", "cudaLaunchKernel", "5", "30", "5", "{\"correlation\": 11}") ",\n  "
		PEV("cuda_runtime", "cudaLaunchKernel", "5", "150", "5", "{\"correlation\": 12}") ",\n  "
		PEV("cuda_runtime", "cudaLaunchKernel", "6", "50", "5", "{\"correlation\": 13}") ",\n  "
		PEV("cuda_runtime", "cudaLaunchKernel", "5", "200", "5", "{\"correlation\": 14}") ",\n  "
		PEV("cpu_op", "c10d::allreduce_", "5", "300", "100", "{\"Input Dims\": [[], [], [], []]}") ",\n  "
		PEV("cpu_op", "record_param_comms", "5", "305", "90",
		    "{\"Collective name\": \"allreduce\", \"Process Group Name\": \"0\", \"Process Group Ranks\": \"[0, 1]\", "
		    "\"In msg nelems\": 10, \"Out msg nelems\": 10, \"dtype\": \"Float\", \"Group size\": 2}") ",\n  "
		PEV("cuda_runtime", "cudaLaunchKernel", "5", "310", "5", "{\"correlation\": 15}") ",\n  "
		PEV("cpu_op", "nccl:all_gather", "5", "500", "100", "{}") ",\n  "
		PEV("cuda_runtime", "cudaMemcpyAsync", "5", "510", "5", "{\"correlation\": 16}") ",\n  "
		PEV("cuda_runtime", "cudaMemcpyAsync", "5", "520", "5", "{\"correlation\": 17}") ",\n  "
		PEV("kernel", "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)", "84",
		    "100", "50", "{\"stream\": 84, \"correlation\": 11}") ",\n  "
		PEV("kernel", "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)", "84",
		    "160", "10", "{\"stream\": 84, \"correlation\": 12}") ",\n  "
		PEV("kernel", "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)", "84",
		    "180", "10", "{\"stream\": 84, \"correlation\": 13}") ",\n  "
		PEV("kernel", "void at::native::vectorized_elementwise_kernel<4>", "7", "210", "10",
		    "{\"stream\": 7, \"correlation\": 14}") ",\n  "
		PEV("kernel", "ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)", "84", "400", "20",
		    "{\"stream\": 84, \"correlation\": 15}") ",\n  "
		PEV("gpu_memcpy", "Memcpy PtoP (Device -> Device)", "84", "600", "20",
		    "{\"stream\": 84, \"correlation\": 16, \"bytes\": 4096}") ",\n  "
		PEV("gpu_memcpy", "Memcpy DtoD (Device -> Device)", "84", "630", "20",
		    "{\"stream\": 84, \"correlation\": 17, \"bytes\": 4096}") "\n]}";
	static const struct { uint8_t kind, coll; uint64_t bytes; } want[] = {
		{ K_COMM, COLL_ALL_TO_ALL, 6144 * 8 }, /* nccl:all_to_all's 3 x 2048 long ints */
		{ K_COMM, COLL_SEND_RECV, 0 },         /* launched outside any host op */
		{ K_COMM, COLL_SEND_RECV, 0 },         /* launched on another thread */
		{ K_COMPUTE_OTHER, COLL_NONE, 0 },
		{ K_COMM, COLL_ALL_REDUCE, 40 },       /* record_param_comms' Collective name */
		{ K_COMM, COLL_ALL_GATHER, 4096 },     /* a peer copy of nccl:all_gather */
		{ K_MEMCPY_D2D, COLL_NONE, 4096 },     /* a local copy stays a copy */
	};
	static const long win[] = { 0, 16, 37, 100 };
	for (int fast = 0; fast < 2; fast++)
		for (size_t w = 0; w < sizeof(win) / sizeof(win[0]); w++) {
			struct trace_set ts;
			struct aorta_error e;
			if (!fast)
				setenv("AORTA_KINETO_NOFAST", "1", 1);
			set_window(win[w]);
			uint64_t f0 = kineto_fast_events();
			enum aorta_status st = load_mem(j, &ts, &e);
			set_window(0);
			unsetenv("AORTA_KINETO_NOFAST");
			CHECK_EQ_I(st, AORTA_OK);
			if (fast && !win[w])
				CHECK_EQ_I(kineto_fast_events() - f0, 21); /* all 21 events by the fast path */
			if (st || ts.n != 1)
				continue;
			const struct trace *t = ts.t[0];
			CHECK_EQ_I(t->n, 7);
			for (size_t i = 0; i < t->n && i < 7; i++) {
				if (t->kind[i] != want[i].kind || t->coll_type[i] != want[i].coll || t->bytes[i] != want[i].bytes)
					fprintf(stderr, "    span %zu: %s/%s %llu bytes\n", i, kind_name((enum span_kind)t->kind[i]),
						coll_type_name((enum coll_type)t->coll_type[i]), (unsigned long long)t->bytes[i]);
				CHECK_EQ_I(t->kind[i], want[i].kind);
				CHECK_EQ_I(t->coll_type[i], want[i].coll);
				CHECK_EQ_I(t->bytes[i], want[i].bytes);
			}
			if (t->n == 7 && t->meta[4] != UINT32_MAX) {
				const struct coll_meta *m = &t->coll[t->meta[4]];
				CHECK_STR(strtab_get(&t->names, m->pg_ranks), "0,1");
				CHECK_STR(strtab_get(&t->names, m->pg_name), "0");
				CHECK_EQ_I(m->group_size, 2);
			} else {
				CHECK(0);
			}
			if (t->n == 7 && t->meta[0] != UINT32_MAX)
				CHECK_STR(strtab_get(&t->names, t->coll[t->meta[0]].host_op), "nccl:all_to_all");
			else
				CHECK(0);
			trace_set_release(&ts);
		}
}

int main(void)
{
	TEST(test_real_ddp12_rank0_counts_match_python);
	TEST(test_real_ddp12_small_window_gives_same_result);
	TEST(test_real_rocm62_hex_stream_no_distinfo);
	TEST(test_real_ns_resolution_fixed_point);
	TEST(test_real_legacy_categories);
	TEST(test_real_cpu_only_is_ok_with_no_spans);
	TEST(test_real_cuda_sync_on_stream_only);
	TEST(test_torch211_stream_waits);
	TEST(test_real_stream_wait_paired);
	TEST(test_real_nccl_meta_a100);
	TEST(test_real_every_kineto_file_reads);
	TEST(test_snippet_escapes_in_names_and_keys);
	TEST(test_snippet_any_key_order_and_whitespace);
	TEST(test_snippet_nested_args_are_skipped);
	TEST(test_snippet_fixed_point_times);
	TEST(test_snippet_wrong_types_are_skipped_and_counted);
	TEST(test_snippet_hex_stream_and_coll_meta);
	TEST(test_snippet_stream_wait);
	TEST(test_snippet_unresolved_stream_wait);
	TEST(test_snippet_process_group_ranks);
	TEST(test_snippet_second_device_is_split);
	TEST(test_snippet_steps_launches_and_rank_hint);
	TEST(test_snippet_structural_errors_name_offset);
	TEST(test_snippet_nul_byte_is_an_error);
	TEST(test_file_gzip_corrupt_and_truncated);
	TEST(test_snippet_host_op_names_the_collective);
	return test_report();
}
