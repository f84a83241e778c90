/*
 * test_nsys.c - the Nsight Systems SQLite reader on real exports
 * (../shared/data/nsys/nsys-ai) and on small databases the tests build
 * themselves in /tmp (old schemas, steps, malformed rows, wrong files).
 *
 * Expected figures on the real files were computed independently with the
 * sqlite3 command-line tool, e.g. for mfu_2gpu_before.sqlite:
 *   SELECT (globalPid>>24)&16777215, deviceId, count(*), sum("end"-start),
 *          sum(s.value LIKE 'ncclDevKernel_SendRecv%')
 *   FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName
 *   GROUP BY 1, 2;
 * and the same GROUP BY over CUPTI_ACTIVITY_KIND_MEMCPY (copyKind, count,
 * sum(bytes)) and CUPTI_ACTIVITY_KIND_MEMSET; launches: kernels whose
 * correlationId has a CUPTI_ACTIVITY_KIND_RUNTIME row of the same process.
 */
#include "testing.h"

#include <stdint.h>
#include <unistd.h>

#include <sqlite3.h>

#include "ingest/ingest.h"
#include "overlap/analysis.h"
#include "ingest/sqlite_util.h"
#include "timeline/timeline.h"

static const struct ingest_opts opts = { .rules = NULL, .rank_hint = -1 };

static int have(const char *path)
{
	return access(path, R_OK) == 0;
}

static void nsys_path(char *buf, size_t cap, const char *name)
{
	snprintf(buf, cap, "%s/nsys/nsys-ai/%s", shared_data(), name);
}

static size_t count_hint(const struct trace *t, enum record_hint h)
{
	size_t c = 0;

	for (size_t i = 0; i < t->n; i++)
		c += t->hint[i] == h;
	return c;
}

static long long dur_hint(const struct trace *t, enum record_hint h)
{
	long long s = 0;

	for (size_t i = 0; i < t->n; i++)
		if (t->hint[i] == h)
			s += t->end_ns[i] - t->start_ns[i];
	return s;
}

static size_t count_prefix(const struct trace *t, const char *p, enum span_kind *kind_seen)
{
	size_t c = 0;

	for (size_t i = 0; i < t->n; i++) {
		if (strncmp(strtab_get(&t->names, t->name[i]), p, strlen(p)) == 0) {
			c++;
			if (kind_seen)
				*kind_seen = (enum span_kind)t->kind[i];
		}
	}
	return c;
}

static size_t count_kind(const struct trace *t, enum span_kind k, uint64_t *bytes)
{
	size_t c = 0;

	*bytes = 0;
	for (size_t i = 0; i < t->n; i++) {
		if (t->kind[i] == k) {
			c++;
			*bytes += t->bytes[i];
		}
	}
	return c;
}

static size_t count_launched(const struct trace *t, enum record_hint h)
{
	size_t c = 0;

	for (size_t i = 0; i < t->n; i++)
		c += t->hint[i] == h && t->launch_ns[i] != INT64_MIN;
	return c;
}

/* Builds a database at path from SQL text; 0 on success. */
static int make_db(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	int rc;

	unlink(path);
	rc = sqlite3_open(path, &db);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	sqlite3_close(db);
	return rc;
}

/* ------------------------------------------------------------ real files */

static void test_before_splits_two_processes_into_two_ranks(void)
{
	char p[1024];
	struct trace_set s = { 0 };
	struct aorta_error e = { 0 };
	enum span_kind k = K_UNKNOWN;

	nsys_path(p, sizeof(p), "mfu_2gpu_before.sqlite");
	if (!have(p))
		SKIP("shared nsys data not found");
	CHECK_EQ_I(ingest_nsys(p, &opts, &s, &e), AORTA_OK);
	CHECK_EQ_I(s.n, 2);
	if (s.n != 2)
		goto out;
	CHECK_STR(s.t[0]->format, "nsys");
	CHECK_EQ_I(s.t[0]->pid, 144);
	CHECK_EQ_I(s.t[0]->device, 0);
	CHECK_EQ_I(s.t[0]->rank, 0);
	CHECK_EQ_I(s.t[1]->pid, 145);
	CHECK_EQ_I(s.t[1]->device, 1);
	CHECK_EQ_I(s.t[1]->rank, 1);
	CHECK_EQ_I(s.t[0]->world_size, 2);
	/* 4010 kernels in all (data README), 1993 + 2017 by process */
	CHECK_EQ_I(count_hint(s.t[0], R_KERNEL), 1993);
	CHECK_EQ_I(count_hint(s.t[1], R_KERNEL), 2017);
	CHECK_EQ_I(dur_hint(s.t[0], R_KERNEL), 270875926);
	CHECK_EQ_I(dur_hint(s.t[1], R_KERNEL), 264324724);
	/* 66 ncclDevKernel_SendRecv in all, classified as communication */
	CHECK_EQ_I(count_prefix(s.t[0], "ncclDevKernel_SendRecv", &k), 33);
	CHECK_EQ_I(k, K_COMM);
	CHECK_EQ_I(count_prefix(s.t[1], "ncclDevKernel_SendRecv", NULL), 33);
	/* demangled names are kept whole */
	CHECK_EQ_I(count_prefix(s.t[0], "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<", NULL), 33);
	/* launches resolved per process (correlation ids repeat across processes) */
	CHECK_EQ_I(count_launched(s.t[0], R_KERNEL), 1981);
	CHECK_EQ_I(count_launched(s.t[1], R_KERNEL), 2005);
	CHECK_EQ_I(s.t[0]->skipped, 0);
	CHECK_EQ_I(s.t[0]->nsteps, 0); /* no step ranges in this export's NVTX */
	for (size_t i = 1; i < s.t[0]->n; i++)
		if (s.t[0]->start_ns[i] < s.t[0]->start_ns[i - 1]) {
			CHECK(!"spans sorted by start");
			break;
		}
out:
	trace_set_release(&s);
}

static void test_before_memcpy_kinds_and_memsets(void)
{
	char p[1024];
	struct trace_set s = { 0 };
	struct aorta_error e = { 0 };
	uint64_t b;

	nsys_path(p, sizeof(p), "mfu_2gpu_before.sqlite");
	if (!have(p))
		SKIP("shared nsys data not found");
	CHECK_EQ_I(ingest_nsys(p, &opts, &s, &e), AORTA_OK);
	if (s.n != 2)
		goto out;
	CHECK_EQ_I(count_kind(s.t[0], K_MEMCPY_H2D, &b), 17); /* copyKind 1 */
	CHECK_EQ_I(b, 136);
	CHECK_EQ_I(count_kind(s.t[0], K_MEMCPY_D2D, &b), 493); /* copyKind 8 */
	CHECK_EQ_I(b, 4023067136LL);
	CHECK_EQ_I(count_kind(s.t[0], K_MEMCPY_D2H, &b), 0);
	CHECK_EQ_I(count_kind(s.t[0], K_MEMSET, &b), 133);
	CHECK_EQ_I(b, 532);
	CHECK_EQ_I(count_kind(s.t[1], K_MEMSET, &b), 136);
	CHECK_EQ_I(count_prefix(s.t[0], "Memcpy HtoD (Pageable -> Device)", NULL), 17);
	CHECK_EQ_I(count_prefix(s.t[0], "Memcpy DtoD (Device -> Device)", NULL), 493);
	CHECK_EQ_I(count_prefix(s.t[0], "Memset (Device)", NULL), 133);
out:
	trace_set_release(&s);
}

static void test_after_counts(void)
{
	char p[1024];
	struct trace_set s = { 0 };
	struct aorta_error e = { 0 };

	nsys_path(p, sizeof(p), "mfu_2gpu_after.sqlite");
	if (!have(p))
		SKIP("shared nsys data not found");
	CHECK_EQ_I(ingest_nsys(p, &opts, &s, &e), AORTA_OK);
	CHECK_EQ_I(s.n, 2);
	if (s.n != 2)
		goto out;
	/* 3587 kernels, SendRecv x62 (data README) */
	CHECK_EQ_I(count_hint(s.t[0], R_KERNEL) + count_hint(s.t[1], R_KERNEL), 3587);
	CHECK_EQ_I(count_prefix(s.t[0], "ncclDevKernel_SendRecv", NULL) +
		   count_prefix(s.t[1], "ncclDevKernel_SendRecv", NULL), 62);
	CHECK_EQ_I(s.t[0]->pid, 148);
	CHECK_EQ_I(dur_hint(s.t[0], R_KERNEL), 237473368);
	CHECK_EQ_I(dur_hint(s.t[1], R_KERNEL), 251362038);
out:
	trace_set_release(&s);
}

static void test_mock_single_rank_takes_rank_hint(void)
{
	char p[1024];
	struct trace_set s = { 0 };
	struct aorta_error e = { 0 };
	struct ingest_opts o = { .rules = NULL, .rank_hint = 3 };
	uint64_t b;

	nsys_path(p, sizeof(p), "mock.sqlite");
	if (!have(p))
		SKIP("shared nsys data not found");
	/* schema 3.24.14, no NVTX_EVENTS and no MEMSET table */
	CHECK_EQ_I(ingest_nsys(p, &o, &s, &e), AORTA_OK);
	CHECK_EQ_I(s.n, 1);
	if (s.n != 1)
		goto out;
	CHECK_EQ_I(s.t[0]->rank, 3);
	CHECK_EQ_I(s.t[0]->world_size, -1);
	CHECK_EQ_I(s.t[0]->pid, 91186);
	CHECK_EQ_I(count_hint(s.t[0], R_KERNEL), 2);
	CHECK_EQ_I(dur_hint(s.t[0], R_KERNEL), 4129);
	CHECK_EQ_I(count_launched(s.t[0], R_KERNEL), 2);
	CHECK_EQ_I(count_kind(s.t[0], K_MEMCPY_D2H, &b), 1);
	CHECK_EQ_I(b, 4);
	CHECK_EQ_I(count_prefix(s.t[0], "Memcpy DtoH (Device -> Pinned)", NULL), 1);
	CHECK_EQ_I(count_prefix(s.t[0], "void at::native::reduce_kernel<(int)512", NULL), 1);
out:
	trace_set_release(&s);
}

/* ------------------------------------------------------- built databases */

/* An old-style export: no globalPid, no correlationId, no demangledName; a
 * kernel that ends before it starts; NVTX step ranges in several spellings
 * beside NCCL's own ranges; a push/pop mark without end. */
static const char *old_sql =
	"CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
	"INSERT INTO StringIds VALUES (1, 'gemm_kernel'), (2, 'ncclKernel_AllReduce_RING_LL_Sum_float'),"
	" (3, 'ProfilerStep#7');"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, \"end\" INTEGER NOT NULL,"
	" deviceId INTEGER NOT NULL, streamId INTEGER NOT NULL, shortName INTEGER NOT NULL);"
	"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000, 2000, 0, 7, 1), (1500, 4000, 0, 13, 2),"
	" (5000, 4000, 0, 7, 1), (6000, 7000, 0, 7, 99);"
	"CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, \"end\" INTEGER, eventType INTEGER NOT NULL,"
	" text TEXT, textId INTEGER, globalTid INTEGER);"
	"INSERT INTO NVTX_EVENTS VALUES (900, 3000, 59, NULL, 3, NULL),"
	" (3000, 5000, 59, 'step 8', NULL, NULL), (5000, 9000, 60, 'Iteration_9', NULL, NULL),"
	" (900, 1200, 59, 'ncclAllReduce', NULL, NULL), (900, 1200, 59, 'stepper', NULL, NULL),"
	" (900, NULL, 34, 'step 11', NULL, NULL), (9000, 8000, 59, 'step 10', NULL, NULL);";

static void test_old_schema_steps_and_bad_rows(void)
{
	const char *p = "/tmp/aorta_test_nsys_old.sqlite";
	struct trace_set s = { 0 };
	struct aorta_error e = { 0 };
	const struct trace *t;

	if (make_db(p, old_sql) != SQLITE_OK)
		SKIP("cannot build a database in /tmp");
	CHECK_EQ_I(ingest_nsys(p, &opts, &s, &e), AORTA_OK);
	CHECK_EQ_I(s.n, 1);
	if (s.n != 1)
		goto out;
	t = s.t[0];
	CHECK_EQ_I(t->pid, -1);
	CHECK_EQ_I(t->rank, 0);
	CHECK_EQ_I(t->n, 2);
	/* the kernel and the step that end before they start, and the kernel
	 * whose name id 99 is not in StringIds (counted, never "(unnamed kernel)"
	 * counted as compute: it could be an NCCL kernel) */
	CHECK_EQ_I(t->skipped, 3);
	CHECK_EQ_I(count_prefix(t, "gemm_kernel", NULL), 1);
	CHECK_EQ_I(count_prefix(t, "(unnamed kernel)", NULL), 0);
	CHECK_EQ_I(t->nsteps, 3);
	if (t->nsteps == 3) {
		CHECK_EQ_I(t->steps[0].number, 7);
		CHECK_EQ_I(t->steps[0].start_ns, 900);
		CHECK_EQ_I(t->steps[0].end_ns, 3000);
		CHECK_EQ_I(t->steps[1].number, 8);
		CHECK_EQ_I(t->steps[2].number, 9);
	}
	if (t->n == 2) {
		CHECK_EQ_I(t->stream[1], 13);
		CHECK_EQ_I(t->kind[1], K_COMM);
	}
out:
	trace_set_release(&s);
	unlink(p);
}

static void expect_einput(const char *p, const char *msg_part)
{
	struct trace_set s = { 0 };
	struct aorta_error e = { 0 };

	CHECK_EQ_I(ingest_nsys(p, &opts, &s, &e), AORTA_EINPUT);
	CHECK_EQ_I(s.n, 0);
	CHECK_EQ_I(e.code, AORTA_EINPUT);
	CHECK_STR(e.path, p);
	if (!strstr(e.msg, msg_part)) {
		fprintf(stderr, "  message: %s\n", e.msg);
		CHECK(!"message names the problem");
	}
	trace_set_release(&s);
}

static void test_bad_inputs_are_input_errors_naming_the_file(void)
{
	const char *txt = "/tmp/aorta_test_nsys_text.sqlite";
	const char *empty = "/tmp/aorta_test_nsys_empty.sqlite";
	const char *other = "/tmp/aorta_test_nsys_other.sqlite";
	const char *nostr = "/tmp/aorta_test_nsys_nostr.sqlite";
	const char *nokern = "/tmp/aorta_test_nsys_nokern.sqlite";
	FILE *f;

	f = fopen(txt, "w");
	if (!f)
		SKIP("cannot write /tmp");
	fputs("{\"traceEvents\": []} this is not a database, it is long enough to have a header\n"
	      "and a second line so that sqlite reads a whole page header of it\n", f);
	fclose(f);
	expect_einput(txt, "not an sqlite database");

	f = fopen(empty, "w");
	if (f)
		fclose(f);
	expect_einput(empty, "not an nsys export: missing table 'CUPTI_ACTIVITY_KIND_KERNEL'");

	CHECK_EQ_I(make_db(other, "CREATE TABLE rocpd_kernel_dispatch (id INTEGER);"), SQLITE_OK);
	expect_einput(other, "rocpd");

	CHECK_EQ_I(make_db(nostr, "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, \"end\" INTEGER);"),
		   SQLITE_OK);
	expect_einput(nostr, "missing table 'StringIds'");

	CHECK_EQ_I(make_db(nokern, "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
				   "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, deviceId INTEGER);"),
		   SQLITE_OK);
	expect_einput(nokern, "has no column 'end'");

	expect_einput("/tmp/aorta_test_nsys_does_not_exist.sqlite", "cannot open");
	unlink(txt);
	unlink(empty);
	unlink(other);
	unlink(nostr);
	unlink(nokern);
}

static void test_empty_export_has_no_ranks(void)
{
	const char *p = "/tmp/aorta_test_nsys_norows.sqlite";

	CHECK_EQ_I(make_db(p, "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
			      "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, \"end\" INTEGER,"
			      " deviceId INTEGER, streamId INTEGER, shortName INTEGER);"), SQLITE_OK);
	expect_einput(p, "no kernel, memcpy or memset");
	unlink(p);
}

static void test_step_name_rule(void)
{
	int64_t n = -1;

#define STEP(s) sqlu_step_number(s, strlen(s), &n)
	CHECK(STEP("ProfilerStep#12") && n == 12);
	CHECK(STEP("step 3") && n == 3);
	CHECK(STEP("Step3") && n == 3);
	CHECK(STEP("STEP_#4") && n == 4);
	CHECK(STEP("iteration 5") && n == 5);
	CHECK(STEP("iter#6") && n == 6);
	CHECK(STEP("Iteration__0") && n == 0);
	CHECK(!STEP("ProfilerStep#"));
	CHECK(!STEP("ProfilerStep#1a"));
	CHECK(!STEP("profilerstep#1"));
	CHECK(!STEP("step"));
	CHECK(!STEP("stepper 1"));
	CHECK(!STEP("step 1 of 3"));
	CHECK(!STEP("ncclAllReduce"));
	CHECK(!STEP("iterate 1"));
	CHECK(!STEP("step 1234567890123456789")); /* would overflow */
#undef STEP
}

/* NCCL's NVTX ranges name the collective of the kernels launched inside
 * them (docs/metrics.md "Collective identity"): two processes, an
 * ncclDevKernel_Generic launched in ncclAllReduce is an all-reduce; a group
 * ncclGroupStart, ncclSend (ncclRecv on the other rank), ncclGroupEnd
 * launches a SendRecv kernel at its end.  The ranges' payloads, exported as
 * JSON text, give the communicator (process group), size, peer and NCCL
 * 2.28's seqNumber: the all-reduces are matched by sequence number (rank 1
 * lists them in another order), the send with its recv by peer. */
#define GT(pid) ((INT64_C(pid) << 24) | 1)
static const char *nccl_sql =
	"CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
	"INSERT INTO StringIds VALUES (1, 'ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)'),"
	" (2, 'ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)'), (3, 'ncclAllReduce'),"
	" (4, '{\"NCCL communicator ID\": 18446744073709551000, \"Message size [bytes]\": 8192, \"seqNumber\": 6}');"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, \"end\" INTEGER NOT NULL,"
	" deviceId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,"
	" demangledName INTEGER, shortName INTEGER);"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, \"end\" INTEGER NOT NULL,"
	" correlationId INTEGER, globalTid INTEGER);"
	"CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, \"end\" INTEGER, eventType INTEGER NOT NULL,"
	" text TEXT, textId INTEGER, globalTid INTEGER, jsonText TEXT, jsonTextId INTEGER);";

static void test_nccl_ranges_name_the_collective_with_payloads(void)
{
	const char *p = "/tmp/aorta_test_nsys_nccl.sqlite";
	char sql[8192];
	int o = snprintf(sql, sizeof(sql), "%s", nccl_sql);
	for (int r = 0; r < 2; r++) {
		long long gp = (long long)(r ? 200 : 100) << 24, gt = gp | 1, d = r * 100; /* rank 1 arrives 100 ns later */
		/* the ranges: seqNumber 5, then 6 (jsonTextId 4); rank 0's kernels run
		 * them in that order, rank 1's in the other */
		int s1 = 5;
		o += snprintf(sql + o, sizeof(sql) - (size_t)o,
			      "INSERT INTO NVTX_EVENTS VALUES (100, 200, 59, 'ncclAllReduce', NULL, %lld,"
			      " '{\"NCCL communicator ID\": 18446744073709551000, \"Message size [bytes]\": 4096, \"seqNumber\": %d}', NULL),"
			      " (300, 400, 59, NULL, 3, %lld, NULL, %d),"
			      " (500, 510, 59, 'ncclGroupStart', NULL, %lld, NULL, NULL),"
			      " (510, 520, 59, '%s', NULL, %lld, '{\"NCCL communicator ID\": 7, \"Message size [bytes]\": 1024, \"Peer rank\": %d}', NULL),"
			      " (520, 600, 59, 'ncclGroupEnd', NULL, %lld, NULL, NULL);"
			      "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (150, 160, 1, %lld), (350, 360, 2, %lld), (550, 560, 3, %lld);"
			      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (%lld, 2000, %d, 20, %d, %lld, 1, 1),"
			      " (%lld, 4000, %d, 20, %d, %lld, 1, 1), (%lld, 6000, %d, 21, 3, %lld, 2, 2);",
			      gt, s1, gt, r ? 4 : 4, gt, r ? "ncclRecv" : "ncclSend", gt, r ? 0 : 1, gt, gt, gt, gt,
			      1000 + d, r, r ? 2 : 1, gp, 3000 + d, r, r ? 1 : 2, gp, 5000 + d, r, gp);
	}
	struct trace_set s = { 0 };
	struct aorta_error e = { 0 };
	if (make_db(p, sql) != SQLITE_OK)
		SKIP("cannot build a database in /tmp");
	CHECK_EQ_I(ingest_nsys(p, &opts, &s, &e), AORTA_OK);
	CHECK_EQ_I(s.n, 2);
	if (s.n != 2)
		goto out;
	for (size_t r = 0; r < 2; r++) {
		const struct trace *t = s.t[r];
		CHECK_EQ_I(t->n, 3);
		if (t->n != 3)
			continue;
		CHECK_EQ_I(t->coll_type[0], COLL_ALL_REDUCE);
		CHECK_EQ_I(t->coll_type[1], COLL_ALL_REDUCE);
		CHECK_EQ_I(t->coll_type[2], COLL_SEND_RECV);
		for (size_t i = 0; i < 3; i++)
			CHECK(t->meta[i] != UINT32_MAX);
		if (t->meta[0] != UINT32_MAX) {
			const struct coll_meta *m = &t->coll[t->meta[0]];
			CHECK_STR(strtab_get(&t->names, m->pg_name), "18446744073709551000");
			CHECK_STR(strtab_get(&t->names, m->host_op), "ncclAllReduce");
		}
		CHECK_EQ_I(t->bytes[0], r ? 8192 : 4096); /* rank 1 runs seqNumber 6 first */
		CHECK_EQ_I(t->bytes[1], r ? 4096 : 8192);
		if (t->meta[2] != UINT32_MAX) {
			const struct coll_meta *m = &t->coll[t->meta[2]];
			CHECK_EQ_I(m->peer, r ? 0 : 1);
			CHECK_EQ_I(m->p2p, r ? P2P_RECV : P2P_SEND);
		}
	}
	struct analysis a;
	struct analysis_opts ao = ANALYSIS_OPTS_INIT;
	ao.threads = 1;
	ao.what_if = WHATIF_SKIP;
	analysis_from_set(&s, &ao, &a);
	CHECK_EQ_I(a.matched_groups, 3);
	CHECK_EQ_I(a.matched_by_seq, 2);
	CHECK_EQ_I(a.unmatched_calls, 0);
	analysis_free(&a);
	unlink(p);
	return;
out:
	trace_set_release(&s);
	unlink(p);
}

int main(void)
{
	TEST(test_before_splits_two_processes_into_two_ranks);
	TEST(test_before_memcpy_kinds_and_memsets);
	TEST(test_after_counts);
	TEST(test_mock_single_rank_takes_rank_hint);
	TEST(test_old_schema_steps_and_bad_rows);
	TEST(test_bad_inputs_are_input_errors_naming_the_file);
	TEST(test_empty_export_has_no_ranks);
	TEST(test_step_name_rule);
	TEST(test_nccl_ranges_name_the_collective_with_payloads);
	return test_report();
}
