/*
 * test_rocprof.c - rocprofv3 CSV and JSON readers, on the real files in
 * ../shared/data/rocprofv3 and on small in-memory inputs for quoting, both
 * header versions, bad rows, bad JSON and wrong types.
 *
 * Expected numbers for the real files were derived independently with
 * python3 (csv.DictReader / json.load over gzip), e.g.
 *   sum(int(r['End_Timestamp']) - int(r['Start_Timestamp']) for r in rows)
 * and are hard-coded here.  Tests do not rely on span order, on corr (cleared
 * by trace_finish) or on the launch array (freed by trace_finish).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ingest/ingest.h"
#include "ingest/ingest_mem.h"
#include "testing.h"
#include "trace_util.h"

static char *data_path(const char *rel)
{
	static char buf[4][1024];
	static int k;
	char *b = buf[k++ & 3];

	snprintf(b, 1024, "%s/%s", shared_data(), rel);
	return b;
}

static int exists(const char *p)
{
	return access(p, R_OK) == 0;
}


static size_t count_prefix(const struct trace *t, const char *pre)
{
	size_t c = 0, n = strlen(pre);

	for (size_t i = 0; i < t->n; i++)
		c += strncmp(strtab_get(&t->names, t->name[i]), pre, n) == 0;
	return c;
}

static size_t count_hint(const struct trace *t, enum record_hint h)
{
	size_t c = 0;

	for (size_t i = 0; i < t->n; i++)
		c += t->hint[i] == h;
	return c;
}

static size_t count_stream(const struct trace *t, int32_t s)
{
	size_t c = 0;

	for (size_t i = 0; i < t->n; i++)
		c += t->stream[i] == s;
	return c;
}

static int has_name(const struct trace *t, const char *name)
{
	return count_name(t, name) > 0;
}

/* Host launches seen: the launch array while it exists (before or without
 * trace_finish freeing it), else spans whose launch was resolved. */
static size_t launches_seen(const struct trace *t)
{
	size_t c = 0;

	if (t->nlaunch)
		return t->nlaunch;
	for (size_t i = 0; i < t->n; i++)
		c += t->launch_ns[i] != INT64_MIN;
	return c;
}

static const struct ingest_opts opts = { .rules = NULL, .rank_hint = -1 };

static char *write_tmp(const char *dir, const char *name, const char *text)
{
	static char p[8][1024];
	static int k;
	char *b = p[k++ & 7];
	FILE *f;

	snprintf(b, 1024, "%s/%s", dir, name);
	f = fopen(b, "wb");
	if (!f)
		return NULL;
	fputs(text, f);
	fclose(f);
	return b;
}

/* ------------------------------------------------------------------------ */
/* CSV                                                                        */

static const char hdr70[] =
	"\"Kind\",\"Agent_Id\",\"Queue_Id\",\"Stream_Id\",\"Thread_Id\",\"Dispatch_Id\",\"Kernel_Id\","
	"\"Kernel_Name\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\",\"LDS_Block_Size\","
	"\"Scratch_Size\",\"VGPR_Count\",\"Accum_VGPR_Count\",\"SGPR_Count\",\"Workgroup_Size_X\","
	"\"Workgroup_Size_Y\",\"Workgroup_Size_Z\",\"Grid_Size_X\",\"Grid_Size_Y\",\"Grid_Size_Z\"";

static void test_csv_rocm70_real_kernel_and_sibling_copies(void)
{
	const char *p = data_path("rocprofv3/rocprofiler-sdk-docs-2025/kernel_trace.csv");
	struct trace_set s = { 0 };
	struct aorta_error e;
	struct trace *t;

	if (!exists(p))
		SKIP("shared data not found");
	CHECK_EQ_I(ingest_rocprof_csv(p, &opts, &s, &e), AORTA_OK);
	CHECK_EQ_I(s.n, 1);
	if (s.n != 1)
		goto out;
	t = s.t[0];
	CHECK_STR(t->format, "rocprof-csv");
	/* python: 9 kernel rows (sum 96160 ns) + 4 memory_copy rows (sum 329162 ns) */
	CHECK_EQ_I(t->n, 13);
	CHECK_EQ_I(span_sum(t), 96160 + 329162);
	CHECK_EQ_I(count_hint(t, R_KERNEL), 9);
	CHECK_EQ_I(count_hint(t, R_MEMCPY), 4);
	CHECK_EQ_I(count_name(t, "Memcpy HtoD (Host -> Device)"), 2);
	CHECK_EQ_I(count_name(t, "Memcpy DtoH (Device -> Host)"), 2);
	CHECK_EQ_I(count_name(t, "void addition_kernel<float>(float*, float const*, float const*, int, int)"), 3);
	/* Stream_Id: 1 x4, 2 x2, 3 x2, 4 x1; copies on stream 0 */
	CHECK_EQ_I(count_stream(t, 1), 4);
	CHECK_EQ_I(count_stream(t, 3), 2);
	CHECK_EQ_I(count_stream(t, 0), 4);
	CHECK_EQ_I(t->device, 4); /* "Agent 4" */
	CHECK_EQ_I(t->rank, 0);
	CHECK_EQ_I(t->skipped, 0);
	/* hip_trace.csv beside it: 17 rows, correlation ids 1..17 cover the kernels' 1..13 */
	CHECK(launches_seen(t) > 0);
out:
	trace_set_release(&s);
}

static void test_csv_rocm62_real_18_columns_numeric_agent(void)
{
	const char *p = data_path("rocprofv3/rocprofiler-sdk-docs-2024/kernel_trace.csv");
	struct trace_set s = { 0 };
	struct aorta_error e;
	struct trace *t;

	if (!exists(p))
		SKIP("shared data not found");
	CHECK_EQ_I(ingest_rocprof_csv(p, &opts, &s, &e), AORTA_OK);
	CHECK_EQ_I(s.n, 1);
	if (s.n != 1)
		goto out;
	t = s.t[0];
	/* python: 7 kernel rows, sum 795453 ns; 2 copies (no Stream_Id), sum 1145680 ns */
	CHECK_EQ_I(t->n, 9);
	CHECK_EQ_I(span_sum(t), 795453 + 1145680);
	CHECK_EQ_I(count_hint(t, R_MEMCPY), 2);
	CHECK_EQ_I(t->device, 1);
	/* no Stream_Id: kernels take Queue_Id (1 x3, 2 x2, 3, 4), copies 0 */
	CHECK_EQ_I(count_stream(t, 1), 3);
	CHECK_EQ_I(count_stream(t, 2), 2);
	CHECK_EQ_I(count_stream(t, 0), 2);
	CHECK_EQ_I(t->skipped, 0);
out:
	trace_set_release(&s);
}

static void test_csv_quoting_rfc4180(void)
{
	static const char body[] =
		"\r\n\"KERNEL_DISPATCH\",\"Agent 4\",1,7,9,1,10,\"void f<a, b>(int, \"\"q\"\")\",1,100,200,0,0,8,0,16,64,1,1,1,1,1\r\n"
		"\"KERNEL_DISPATCH\",\"Agent 4\",1,7,9,2,10,\"multi\nline, name\",2,300,450,0,0,8,0,16,64,1,1,1,1,1\r\n"
		"\r\n"
		"KERNEL_DISPATCH,Agent 4,1,7,9,3,10,plain,3,500,510,0,0,8,0,16,64,1,1,1,1,1\n"
		"\"KERNEL_DISPATCH\",\"Agent 4\",1,7,9,4,10,\"\",4,600,601,0,0,8,0,16,64,1,1,1,1,1";
	char *buf = malloc(sizeof(hdr70) + sizeof(body));
	struct trace_set s = { 0 };
	struct aorta_error e;
	struct trace *t;

	strcpy(buf, hdr70);
	strcat(buf, body);
	CHECK_EQ_I(ingest_rocprof_csv_mem("q.csv", buf, strlen(buf), &opts, &s, &e), AORTA_OK);
	CHECK_EQ_I(s.n, 1);
	if (s.n == 1) {
		t = s.t[0];
		CHECK_EQ_I(t->n, 4);
		CHECK_EQ_I(t->skipped, 0);
		CHECK(has_name(t, "void f<a, b>(int, \"q\")"));
		CHECK(has_name(t, "multi\nline, name"));
		CHECK(has_name(t, "plain"));
		CHECK(has_name(t, ""));
		CHECK_EQ_I(span_sum(t), 100 + 150 + 10 + 1);
		CHECK_EQ_I(count_stream(t, 7), 4);
	}
	trace_set_release(&s);
	free(buf);
}

static void test_csv_bad_rows_skipped_with_line(void)
{
	static const char text[] =
		"Kind,Agent_Id,Queue_Id,Thread_Id,Dispatch_Id,Kernel_Id,Kernel_Name,Correlation_Id,"
		"Start_Timestamp,End_Timestamp,Private_Segment_Size,Group_Segment_Size,"
		"Workgroup_Size_X,Workgroup_Size_Y,Workgroup_Size_Z,Grid_Size_X,Grid_Size_Y,Grid_Size_Z\n"
		"KERNEL_DISPATCH,1,1,69,1,16,good,1,1000,2000,0,0,64,1,1,1024,1024,1\n"
		"KERNEL_DISPATCH,1,1,69,1,16,short,1,1000,2000\n"                       /* line 3 */
		"KERNEL_DISPATCH,1,1,69,1,16,nonnum,1,12x,2000,0,0,64,1,1,1024,1024,1\n" /* line 4 */
		"KERNEL_DISPATCH,1,1,69,1,16,backwards,1,3000,2000,0,0,64,1,1,1024,1024,1\n"
		"KERNEL_DISPATCH,1,1,69,1,16,\"unterminated,1,1,2,0,0,64,1,1,1024,1024,1\n";
	struct trace_set s = { 0 };
	struct aorta_error e;

	CHECK_EQ_I(ingest_rocprof_csv_mem("bad.csv", text, strlen(text), &opts, &s, &e), AORTA_OK);
	CHECK_EQ_I(s.n, 1);
	if (s.n == 1) {
		CHECK_EQ_I(s.t[0]->n, 1);
		CHECK_EQ_I(s.t[0]->skipped, 4);
		CHECK(strstr(s.t[0]->skipped_first, "line 3") != NULL);
		CHECK(strstr(s.t[0]->skipped_first, "bad.csv") != NULL);
	}
	trace_set_release(&s);
}

static void test_csv_unknown_header_is_input_error(void)
{
	const char *p = data_path("rocprofv3/rocprofiler-sdk-docs-2025/hip_trace.csv");
	static const char text[] = "a,b,c\n1,2,3\n";
	struct trace_set s = { 0 };
	struct aorta_error e;

	memset(&e, 0, sizeof(e));
	CHECK_EQ_I(ingest_rocprof_csv_mem("x.csv", text, strlen(text), &opts, &s, &e),
		   AORTA_EINPUT);
	CHECK_EQ_I(s.n, 0);
	CHECK_EQ_I(e.line, 1);
	CHECK_STR(e.path, "x.csv");
	CHECK(strstr(e.msg, "Kernel_Name") != NULL);
	/* empty input: no header at all */
	CHECK_EQ_I(ingest_rocprof_csv_mem("e.csv", "", 0, &opts, &s, &e), AORTA_EINPUT);
	CHECK_EQ_I(s.n, 0);
	if (!exists(p))
		SKIP("shared data not found");
	/* a real rocprof CSV of another kind (host api trace) is not a device trace */
	CHECK_EQ_I(ingest_rocprof_csv(p, &opts, &s, &e), AORTA_EINPUT);
	CHECK_EQ_I(s.n, 0);
	CHECK(strstr(e.path, "hip_trace.csv") != NULL);
}

static void test_csv_agents_become_ranks(void)
{
	char *buf = malloc(sizeof(hdr70) + 512);
	struct trace_set s = { 0 };
	struct aorta_error e;

	strcpy(buf, hdr70);
	strcat(buf, "\nKERNEL_DISPATCH,Agent 5,1,1,9,1,10,k,1,100,200,0,0,8,0,16,64,1,1,1,1,1\n"
		    "KERNEL_DISPATCH,Agent 3,1,1,9,1,10,k,1,100,300,0,0,8,0,16,64,1,1,1,1,1\n"
		    "KERNEL_DISPATCH,Agent 5,1,1,9,1,10,k,1,300,400,0,0,8,0,16,64,1,1,1,1,1\n");
	CHECK_EQ_I(ingest_rocprof_csv_mem("m.csv", buf, strlen(buf), &opts, &s, &e), AORTA_OK);
	CHECK_EQ_I(s.n, 2);
	if (s.n == 2) {
		CHECK_EQ_I(s.t[0]->device, 3);
		CHECK_EQ_I(s.t[0]->rank, 0);
		CHECK_EQ_I(s.t[0]->n, 1);
		CHECK_EQ_I(s.t[1]->device, 5);
		CHECK_EQ_I(s.t[1]->rank, 1);
		CHECK_EQ_I(s.t[1]->n, 2);
		CHECK_EQ_I(s.t[1]->world_size, 2);
	}
	trace_set_release(&s);
	free(buf);
}

static void test_csv_prefixed_siblings_steps_and_launches(void)
{
	char dir[] = "/tmp/aorta_rocprof_XXXXXX";
	struct trace_set s = { 0 };
	struct aorta_error e;
	const char *kp, *files[4];
	char *k = malloc(sizeof(hdr70) + 512);

	if (!mkdtemp(dir))
		SKIP("mkdtemp failed");
	strcpy(k, hdr70);
	strcat(k, "\n\"KERNEL_DISPATCH\",\"Agent 4\",1,1,9,1,10,\"ker\",11,1000,2000,0,0,8,0,16,64,1,1,1,1,1\n"
		    "\"KERNEL_DISPATCH\",\"Agent 4\",1,2,9,1,10,\"ker\",12,5000,7000,0,0,8,0,16,64,1,1,1,1,1\n");
	kp = files[0] = write_tmp(dir, "1234_kernel_trace.csv", k);
	files[1] = write_tmp(dir, "1234_memory_copy_trace.csv",
		  "\"Kind\",\"Direction\",\"Stream_Id\",\"Source_Agent_Id\",\"Destination_Agent_Id\","
		  "\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\"\n"
		  "\"MEMORY_COPY\",\"MEMORY_COPY_HOST_TO_DEVICE\",3,\"Agent 0\",\"Agent 4\",13,100,400\n"
		  "\"MEMORY_COPY\",\"MEMORY_COPY_DEVICE_TO_DEVICE\",3,\"Agent 4\",\"Agent 4\",14,8000,8100\n");
	files[2] = write_tmp(dir, "1234_marker_api_trace.csv",
		  "\"Domain\",\"Function\",\"Process_Id\",\"Thread_Id\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\"\n"
		  "\"MARKER_CORE_API\",\"ProfilerStep#5\",1,1,1,0,4000\n"
		  "\"MARKER_CORE_API\",\"step 6\",1,1,2,4000,9000\n"
		  "\"MARKER_CORE_API\",\"forward\",1,1,3,10,20\n");
	files[3] = write_tmp(dir, "1234_hip_trace.csv",
		  "\"Domain\",\"Function\",\"Process_Id\",\"Thread_Id\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\"\n"
		  "\"HIP_RUNTIME_API\",\"hipLaunchKernel\",1,1,11,900,950\n"
		  "\"HIP_RUNTIME_API\",\"hipLaunchKernel\",1,1,12,4900,4950\n");
	free(k);
	if (!files[0] || !files[1] || !files[2] || !files[3])
		SKIP("cannot write temporary files");
	CHECK_EQ_I(ingest_rocprof_csv(kp, &opts, &s, &e), AORTA_OK);
	CHECK_EQ_I(s.n, 1);
	if (s.n == 1) {
		struct trace *t = s.t[0];

		CHECK_EQ_I(t->n, 4);
		CHECK_EQ_I(count_name(t, "Memcpy HtoD (Host -> Device)"), 1);
		CHECK_EQ_I(count_name(t, "Memcpy DtoD (Device -> Device)"), 1);
		CHECK_EQ_I(count_stream(t, 3), 2);
		CHECK_EQ_I(t->nsteps, 2);
		if (t->nsteps == 2) {
			CHECK_EQ_I(t->steps[0].number, 5);
			CHECK_EQ_I(t->steps[1].number, 6);
			CHECK_EQ_I(t->steps[1].end_ns, 9000);
		}
		CHECK_EQ_I(launches_seen(t), 2);
	}
	trace_set_release(&s);
	for (int i = 0; i < 4; i++)
		if (files[i])
			unlink(files[i]);
	rmdir(dir);
}


/* RCCL's API calls (rccl_trace.csv beside the kernels) name the collective
 * of the RCCL kernels launched inside them on the same thread (docs/metrics.md
 * "Collective identity"): ncclDevKernel_Generic_1, which names none, launched
 * (hip_trace.csv, correlation 11, thread 9) inside ncclAllReduce on thread 9
 * is an all-reduce; the one launched on thread 8 while thread 9 was in
 * ncclAllGather stays of unknown type. */
static void test_csv_rccl_calls_name_the_collective(void)
{
	char dir[] = "/tmp/aorta_rocprof_XXXXXX";
	struct trace_set s = { 0 };
	struct aorta_error e;
	const char *files[3];
	char *k = malloc(sizeof(hdr70) + 512);

	if (!mkdtemp(dir))
		SKIP("mkdtemp failed");
	strcpy(k, hdr70);
	strcat(k, "\n\"KERNEL_DISPATCH\",\"Agent 4\",1,1,9,1,10,\"ncclDevKernel_Generic_1\",11,1000,2000,0,0,8,0,16,64,1,1,1,1,1\n"
		    "\"KERNEL_DISPATCH\",\"Agent 4\",1,1,8,1,10,\"ncclDevKernel_Generic_1\",12,5000,7000,0,0,8,0,16,64,1,1,1,1,1\n");
	files[0] = write_tmp(dir, "77_kernel_trace.csv", k);
	files[1] = write_tmp(dir, "77_hip_trace.csv",
		  "\"Domain\",\"Function\",\"Process_Id\",\"Thread_Id\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\"\n"
		  "\"HIP_RUNTIME_API\",\"hipExtLaunchKernel\",77,9,11,900,950\n"
		  "\"HIP_RUNTIME_API\",\"hipExtLaunchKernel\",77,8,12,4900,4950\n");
	files[2] = write_tmp(dir, "77_rccl_trace.csv",
		  "\"Domain\",\"Function\",\"Process_Id\",\"Thread_Id\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\"\n"
		  "\"RCCL_API\",\"ncclAllReduce\",77,9,20,800,990\n"
		  "\"RCCL_API\",\"ncclAllGather\",77,9,21,4800,4990\n");
	free(k);
	if (!files[0] || !files[1] || !files[2])
		SKIP("cannot write temporary files");
	CHECK_EQ_I(ingest_rocprof_csv(files[0], &opts, &s, &e), AORTA_OK);
	CHECK_EQ_I(s.n, 1);
	if (s.n == 1 && s.t[0]->n == 2) {
		const struct trace *t = s.t[0];
		CHECK_EQ_I(t->kind[0], K_COMM);
		CHECK_EQ_I(t->coll_type[0], COLL_ALL_REDUCE);
		CHECK_EQ_I(t->kind[1], K_COMM);
		CHECK_EQ_I(t->coll_type[1], COLL_OTHER);
	} else {
		CHECK(0);
	}
	trace_set_release(&s);
	for (int i = 0; i < 3; i++)
		if (files[i])
			unlink(files[i]);
	rmdir(dir);
}

/* ------------------------------------------------------------------------ */
/* JSON                                                                       */

static void test_json_real_908_results(void)
{
	const char *p = data_path("rocprofv3/tracelens/908_results.json.gz");
	struct trace_set s = { 0 };
	struct aorta_error e;
	struct trace *t;
	int64_t mn = INT64_MAX, mx = INT64_MIN;
	size_t distinct = 0;
	unsigned char *seen;

	if (!exists(p))
		SKIP("shared data not found");
	CHECK_EQ_I(ingest_rocprof_json(p, &opts, &s, &e), AORTA_OK);
	/* only GPU agent 37946 (the first of 8 MI350X) has dispatches */
	CHECK_EQ_I(s.n, 1);
	if (s.n != 1)
		goto out;
	t = s.t[0];
	CHECK_STR(t->format, "rocprof-json");
	CHECK_EQ_I(t->rank, 0);
	CHECK_EQ_I(t->world_size, 8);
	CHECK_EQ_I(t->pid, 908);
	/* python: len(kernel_dispatch), sum(end - start), min start, max end */
	CHECK_EQ_I(t->n, 43915);
	CHECK_EQ_I(span_sum(t), 4441741378LL);
	for (size_t i = 0; i < t->n; i++) {
		if (t->start_ns[i] < mn)
			mn = t->start_ns[i];
		if (t->end_ns[i] > mx)
			mx = t->end_ns[i];
	}
	CHECK_EQ_I(mn, 63857982592000LL);
	CHECK_EQ_I(mx, 63873104615494LL);
	/* python: names via kernel_symbols[kernel_id].formatted_kernel_name */
	CHECK_EQ_I(count_name(t, "ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)"), 1310);
	CHECK_EQ_I(count_name(t, "__amd_rocclr_copyBuffer"), 3153);
	CHECK_EQ_I(count_prefix(t, "kernel_id "), 0);
	seen = calloc(t->names.n + 1, 1);
	for (size_t i = 0; i < t->n; i++)
		if (!seen[t->name[i]]) {
			seen[t->name[i]] = 1;
			distinct++;
		}
	free(seen);
	CHECK_EQ_I(distinct, 80);
	/* python: stream_id.handle == 5 for 2016 dispatches */
	CHECK_EQ_I(count_stream(t, 5), 2016);
	CHECK_EQ_I(t->skipped, 0);
out:
	trace_set_release(&s);
}

static const char json_small[] =
	"{\"rocprofiler-sdk-tool\":[{\"metadata\":{\"pid\":77,\"command\":[\"x\"]},"
	"\"agents\":[{\"id\":{\"handle\":10},\"type\":1,\"node_id\":0,\"logical_node_id\":0},"
	"{\"id\":{\"handle\":12},\"type\":2,\"node_id\":2,\"logical_node_id\":2},"
	"{\"id\":{\"handle\":11},\"type\":2,\"node_id\":1,\"logical_node_id\":1}],"
	"\"buffer_records\":{\"kernel_dispatch\":["
	"{\"correlation_id\":{\"internal\":1,\"external\":0},\"start_timestamp\":100,\"end_timestamp\":250,"
	"\"dispatch_info\":{\"agent_id\":{\"handle\":12},\"queue_id\":{\"handle\":3},\"kernel_id\":7,"
	"\"workgroup_size\":{\"x\":1,\"y\":1,\"z\":1}},\"stream_id\":{\"handle\":9}},"
	"{\"start_timestamp\":\"300\",\"end_timestamp\":400,\"dispatch_info\":{\"agent_id\":{\"handle\":12},\"kernel_id\":7}},"
	"{\"start_timestamp\":300,\"end_timestamp\":400,\"dispatch_info\":{\"agent_id\":{\"handle\":12}}},"
	"{\"start_timestamp\":500,\"end_timestamp\":400,\"dispatch_info\":{\"agent_id\":{\"handle\":12},\"kernel_id\":7}},"
	"42,"
	"{\"start_timestamp\":600,\"end_timestamp\":700,\"dispatch_info\":{\"agent_id\":{\"handle\":12},\"queue_id\":{\"handle\":4},\"kernel_id\":99}}"
	"],\"memory_copy\":[{\"operation\":2,\"start_timestamp\":10,\"end_timestamp\":30,"
	"\"src_agent_id\":{\"handle\":10},\"dst_agent_id\":{\"handle\":12},\"bytes\":4096}],"
	"\"hip_api\":[]},"
	"\"kernel_symbols\":[{\"kernel_id\":7,\"kernel_name\":\"_Z3fooi.kd\",\"formatted_kernel_name\":\"foo(int)\","
	"\"demangled_kernel_name\":\"foo(int) [clone .kd]\",\"truncated_kernel_name\":\"foo\"}]}]}";

static void test_json_small_symbols_after_dispatches_and_bad_records(void)
{
	struct trace_set s = { 0 };
	struct aorta_error e;
	struct trace *t;

	CHECK_EQ_I(ingest_rocprof_json_mem("s.json", json_small, strlen(json_small), &opts, &s, &e),
		   AORTA_OK);
	CHECK_EQ_I(s.n, 1);
	if (s.n != 1)
		goto out;
	t = s.t[0];
	/* good dispatch + unknown-symbol dispatch + one copy */
	CHECK_EQ_I(t->n, 3);
	CHECK_EQ_I(count_name(t, "foo(int)"), 1);
	CHECK_EQ_I(count_name(t, "kernel_id 99"), 1);
	CHECK_EQ_I(count_name(t, "Memcpy HtoD (Host -> Device)"), 1);
	CHECK_EQ_I(count_stream(t, 9), 1); /* stream_id wins over queue_id */
	CHECK_EQ_I(count_stream(t, 4), 1); /* queue_id when stream_id is absent */
	/* string timestamp, missing kernel_id, end < start, non-object record */
	CHECK_EQ_I(t->skipped, 4);
	/* agent 12 is the second GPU by logical_node_id */
	CHECK_EQ_I(t->rank, 1);
	CHECK_EQ_I(t->world_size, 2);
	CHECK_EQ_I(t->pid, 77);
	{
		uint64_t b = 0;

		for (size_t i = 0; i < t->n; i++)
			b += t->bytes[i];
		CHECK_EQ_I(b, 4096);
	}
out:
	trace_set_release(&s);
}

static void test_json_truncated_is_input_error_with_offset(void)
{
	struct trace_set s = { 0 };
	struct aorta_error e;
	size_t cut = 300;

	memset(&e, 0, sizeof(e));
	CHECK_EQ_I(ingest_rocprof_json_mem("t.json", json_small, cut, &opts, &s, &e), AORTA_EINPUT);
	CHECK_EQ_I(s.n, 0);
	CHECK_EQ_I(e.offset, (long long)cut);
	CHECK_STR(e.path, "t.json");
	/* a syntax error in the middle: offset points into the text */
	{
		static const char bad[] = "{\"rocprofiler-sdk-tool\":[{\"agents\":[}]}";

		CHECK_EQ_I(ingest_rocprof_json_mem("b.json", bad, strlen(bad), &opts, &s, &e),
			   AORTA_EINPUT);
		CHECK(e.offset >= 30 && e.offset <= (long long)strlen(bad));
		CHECK_EQ_I(s.n, 0);
	}
	/* valid JSON of another kind */
	{
		static const char other[] = "{\"traceEvents\":[]}";

		CHECK_EQ_I(ingest_rocprof_json_mem("k.json", other, strlen(other), &opts, &s, &e),
			   AORTA_EINPUT);
		CHECK(strstr(e.msg, "rocprofiler-sdk-tool") != NULL);
		CHECK_EQ_I(s.n, 0);
	}
}

static void test_json_empty_records_gives_one_empty_trace(void)
{
	static const char doc[] = "{\"rocprofiler-sdk-tool\":[{\"buffer_records\":{\"kernel_dispatch\":[]}}]}";
	struct trace_set s = { 0 };
	struct aorta_error e;
	struct ingest_opts o = { .rules = NULL, .rank_hint = 3 };

	CHECK_EQ_I(ingest_rocprof_json_mem("z.json", doc, strlen(doc), &o, &s, &e), AORTA_OK);
	CHECK_EQ_I(s.n, 1);
	if (s.n == 1) {
		CHECK_EQ_I(s.t[0]->n, 0);
		CHECK_EQ_I(s.t[0]->rank, 3);
	}
	trace_set_release(&s);
}

/* rocprofv3 JSON: an rccl_api record (ncclAllReduce: operation 1 of the
 * RCCL_API operations in strings, which come after the records) around the
 * hip_api launch of an ncclDevKernel_Generic_1 on the same thread names its
 * collective; a launch on another thread does not. */
static const char json_rccl[] =
	"{\"rocprofiler-sdk-tool\":[{\"metadata\":{\"pid\":77},"
	"\"agents\":[{\"id\":{\"handle\":12},\"type\":2,\"node_id\":2,\"logical_node_id\":2}],"
	"\"buffer_records\":{\"kernel_dispatch\":["
	"{\"correlation_id\":{\"internal\":5,\"external\":0},\"start_timestamp\":100,\"end_timestamp\":250,"
	"\"dispatch_info\":{\"agent_id\":{\"handle\":12},\"queue_id\":{\"handle\":3},\"kernel_id\":7}},"
	"{\"correlation_id\":{\"internal\":6,\"external\":0},\"start_timestamp\":300,\"end_timestamp\":450,"
	"\"dispatch_info\":{\"agent_id\":{\"handle\":12},\"queue_id\":{\"handle\":3},\"kernel_id\":7}}],"
	"\"hip_api\":[{\"kind\":1,\"operation\":4,\"thread_id\":3,\"correlation_id\":{\"internal\":5,\"external\":0},"
	"\"start_timestamp\":90,\"end_timestamp\":95},"
	"{\"kind\":1,\"operation\":4,\"thread_id\":4,\"correlation_id\":{\"internal\":6,\"external\":0},"
	"\"start_timestamp\":92,\"end_timestamp\":96}],"
	"\"rccl_api\":[{\"kind\":9,\"operation\":1,\"thread_id\":3,\"correlation_id\":{\"internal\":4,\"external\":0},"
	"\"start_timestamp\":80,\"end_timestamp\":99}]},"
	"\"kernel_symbols\":[{\"kernel_id\":7,\"kernel_name\":\"ncclDevKernel_Generic_1\"}],"
	"\"strings\":{\"buffer_records\":[{\"kind\":\"HIP_RUNTIME_API\",\"operations\":[\"a\",\"b\",\"c\",\"d\",\"hipLaunchKernel\"]},"
	"{\"operations\":[\"ncclAllGather\",\"ncclAllReduce\"],\"kind\":\"RCCL_API\"}]}}]}";

static void test_json_rccl_calls_name_the_collective(void)
{
	struct trace_set s = { 0 };
	struct aorta_error e;

	CHECK_EQ_I(ingest_rocprof_json_mem("r.json", json_rccl, strlen(json_rccl), &opts, &s, &e), AORTA_OK);
	CHECK_EQ_I(s.n, 1);
	if (s.n == 1 && s.t[0]->n == 2) {
		const struct trace *t = s.t[0];
		CHECK_EQ_I(t->kind[0], K_COMM);
		CHECK_EQ_I(t->coll_type[0], COLL_ALL_REDUCE);
		CHECK_EQ_I(t->coll_type[1], COLL_OTHER); /* launched on thread 4 */
		CHECK(t->launch_ns[0] == 90 && t->launch_ns[1] == 92);
	} else {
		CHECK(0);
	}
	CHECK_EQ_I(s.n ? s.t[0]->skipped : 1, 0);
	trace_set_release(&s);
}

int main(void)
{
	TEST(test_json_rccl_calls_name_the_collective);
	TEST(test_csv_rccl_calls_name_the_collective);
	TEST(test_csv_rocm70_real_kernel_and_sibling_copies);
	TEST(test_csv_rocm62_real_18_columns_numeric_agent);
	TEST(test_csv_quoting_rfc4180);
	TEST(test_csv_bad_rows_skipped_with_line);
	TEST(test_csv_unknown_header_is_input_error);
	TEST(test_csv_agents_become_ranks);
	TEST(test_csv_prefixed_siblings_steps_and_launches);
	TEST(test_json_real_908_results);
	TEST(test_json_small_symbols_after_dispatches_and_bad_records);
	TEST(test_json_truncated_is_input_error_with_offset);
	TEST(test_json_empty_records_gives_one_empty_trace);
	return test_report();
}
