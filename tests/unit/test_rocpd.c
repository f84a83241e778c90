/*
 * test_rocpd.c - the rocpd (rocprofv3 SQLite) reader on the fixture
 * tests/data/rocpd/small_results.db (built by make_fixture.py from the
 * documented schema; its docstring lists the contents the figures below
 * follow from) and on partial databases built here in /tmp.
 */
#include "testing.h"

#include <stdint.h>
#include <unistd.h>

#include <sqlite3.h>

#include "ingest/ingest.h"
#include "timeline/timeline.h"

#define FIXTURE "tests/data/rocpd/small_results.db"

static const struct ingest_opts opts = { .rules = NULL, .rank_hint = -1 };

static size_t count_name(const struct trace *t, const char *prefix, enum span_kind *kind)
{
	size_t c = 0;

	for (size_t i = 0; i < t->n; i++) {
		if (strncmp(strtab_get(&t->names, t->name[i]), prefix, strlen(prefix)) == 0) {
			c++;
			if (kind)
				*kind = (enum span_kind)t->kind[i];
		}
	}
	return c;
}

static size_t count_kind(const struct trace *t, enum span_kind k, uint64_t *bytes)
{
	size_t c = 0;

	*bytes = 0;
	for (size_t i = 0; i < t->n; i++)
		if (t->kind[i] == k) {
			c++;
			*bytes += t->bytes[i];
		}
	return c;
}

static long long kernel_ns(const struct trace *t, size_t *n, size_t *launched)
{
	long long s = 0;

	*n = *launched = 0;
	for (size_t i = 0; i < t->n; i++)
		if (t->hint[i] == R_KERNEL) {
			s += t->end_ns[i] - t->start_ns[i];
			(*n)++;
			*launched += t->launch_ns[i] != INT64_MIN;
		}
	return s;
}

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

static void test_fixture_one_rank_per_gpu_agent(void)
{
	struct trace_set s = { 0 };
	struct aorta_error e = { 0 };
	size_t n, launched;
	enum span_kind k = K_UNKNOWN;

	CHECK_EQ_I(ingest_rocpd(FIXTURE, &opts, &s, &e), AORTA_OK);
	CHECK_EQ_I(s.n, 2);
	if (s.n != 2) {
		fprintf(stderr, "  error: %s\n", e.msg);
		goto out;
	}
	for (int r = 0; r < 2; r++) {
		CHECK_STR(s.t[r]->format, "rocpd");
		CHECK_EQ_I(s.t[r]->pid, 4242); /* the OS pid, not the process row id */
		CHECK_EQ_I(s.t[r]->device, r);  /* the agent's GPU ordinal */
		CHECK_EQ_I(s.t[r]->rank, r);
		CHECK_EQ_I(s.t[r]->world_size, 2);
	}
	/* GPU 0: 3 steps x (GEMM 300 us + RCCL 400 us + fill 10 us) */
	CHECK_EQ_I(kernel_ns(s.t[0], &n, &launched), 3 * (300000 + 400000 + 10000));
	CHECK_EQ_I(n, 9);
	CHECK_EQ_I(launched, 9);
	/* GPU 1: 3 x (GEMM 250 us + RCCL 300 us); one dispatch ends before it starts */
	CHECK_EQ_I(kernel_ns(s.t[1], &n, &launched), 3 * (250000 + 300000));
	CHECK_EQ_I(n, 6);
	CHECK_EQ_I(launched, 6);
	CHECK_EQ_I(s.t[0]->skipped, 0);
	CHECK_EQ_I(s.t[1]->skipped, 1);
	/* names come from display_name */
	CHECK_EQ_I(count_name(s.t[0], "ncclDevKernel_Generic_1", &k), 3);
	CHECK_EQ_I(k, K_COMM);
	CHECK_EQ_I(count_name(s.t[0], "Cijk_Alik_Bljk_BBS_BH_MT256x256x64", &k), 3);
	CHECK_EQ_I(k, K_GEMM);
	CHECK_EQ_I(count_name(s.t[0], "void at::native::vectorized_elementwise_kernel<4", NULL), 3);
	CHECK_EQ_I(count_name(s.t[0], ".kd", NULL), 0);
	/* RCCL kernels on their own stream (stream row 3) */
	for (size_t i = 0; i < s.t[0]->n; i++)
		if (s.t[0]->kind[i] == K_COMM)
			CHECK_EQ_I(s.t[0]->stream[i], 3);
out:
	trace_set_release(&s);
}

static void test_fixture_copies_by_agent_type(void)
{
	struct trace_set s = { 0 };
	struct aorta_error e = { 0 };
	uint64_t b;

	CHECK_EQ_I(ingest_rocpd(FIXTURE, &opts, &s, &e), AORTA_OK);
	if (s.n != 2)
		goto out;
	CHECK_EQ_I(count_kind(s.t[0], K_MEMCPY_H2D, &b), 1); /* CPU -> GPU 0 */
	CHECK_EQ_I(b, 1 << 20);
	CHECK_EQ_I(count_kind(s.t[0], K_MEMCPY_D2H, &b), 1); /* GPU 0 -> CPU */
	CHECK_EQ_I(b, 4096);
	CHECK_EQ_I(count_kind(s.t[0], K_MEMCPY_P2P, &b), 1); /* GPU 0 -> GPU 1, on the source */
	CHECK_EQ_I(b, 16 << 20);
	CHECK_EQ_I(count_kind(s.t[1], K_MEMCPY_P2P, &b), 0);
	CHECK_EQ_I(count_kind(s.t[1], K_MEMCPY_D2D, &b), 1); /* GPU 1 -> GPU 1 */
	CHECK_EQ_I(b, 8 << 20);
	CHECK_EQ_I(count_name(s.t[0], "Memcpy HtoD (Host -> Device)", NULL), 1);
	CHECK_EQ_I(s.t[0]->n, 12);
	CHECK_EQ_I(s.t[1]->n, 7);
out:
	trace_set_release(&s);
}

static void test_fixture_steps_from_markers(void)
{
	struct trace_set s = { 0 };
	struct aorta_error e = { 0 };

	CHECK_EQ_I(ingest_rocpd(FIXTURE, &opts, &s, &e), AORTA_OK);
	if (s.n != 2)
		goto out;
	for (int r = 0; r < 2; r++) {
		const struct trace *t = s.t[r];
		size_t in_step[3] = { 0, 0, 0 };

		CHECK_EQ_I(t->nsteps, 3);
		if (t->nsteps != 3)
			continue;
		for (int i = 0; i < 3; i++) {
			CHECK_EQ_I(t->steps[i].number, 5 + i);
			CHECK_EQ_I(t->steps[i].end_ns - t->steps[i].start_ns, 1000000);
		}
		/* each kernel is in the step its launch falls in */
		for (size_t i = 0; i < t->n; i++)
			if (t->hint[i] == R_KERNEL && t->step[i] >= 0 && t->step[i] < 3)
				in_step[t->step[i]]++;
		for (int i = 0; i < 3; i++)
			CHECK_EQ_I(in_step[i], r == 0 ? 3 : 2);
	}
out:
	trace_set_release(&s);
}

static void test_rank_hint_applies_to_a_single_rank(void)
{
	const char *p = "/tmp/aorta_test_rocpd_min.db";
	struct trace_set s = { 0 };
	struct aorta_error e = { 0 };
	struct ingest_opts o = { .rules = NULL, .rank_hint = 5 };

	/* a bare database: no guid, no process/event/symbol/region views */
	CHECK_EQ_I(make_db(p,
			   "CREATE TABLE rocpd_string_x (id INTEGER PRIMARY KEY, string TEXT);"
			   "CREATE VIEW rocpd_string AS SELECT * FROM rocpd_string_x;"
			   "CREATE TABLE rocpd_info_agent (id INTEGER PRIMARY KEY, type TEXT,"
			   " type_index INTEGER);"
			   "INSERT INTO rocpd_info_agent VALUES (1, 'CPU', 0), (2, 'GPU', 3);"
			   "CREATE TABLE rocpd_kernel_dispatch (id INTEGER PRIMARY KEY, pid INTEGER,"
			   " agent_id INTEGER, kernel_id INTEGER, stream_id INTEGER, start INTEGER,"
			   " \"end\" INTEGER);"
			   "INSERT INTO rocpd_kernel_dispatch VALUES (1, 77, 2, 1, 0, 100, 200),"
			   " (2, 77, 2, 1, 0, 300, 450);"), SQLITE_OK);
	CHECK_EQ_I(ingest_rocpd(p, &o, &s, &e), AORTA_OK);
	CHECK_EQ_I(s.n, 1);
	if (s.n == 1) {
		CHECK_EQ_I(s.t[0]->rank, 5);
		CHECK_EQ_I(s.t[0]->pid, 77);
		CHECK_EQ_I(s.t[0]->device, 3);
		CHECK_EQ_I(s.t[0]->n, 2);
		CHECK_EQ_I(count_name(s.t[0], "(unnamed kernel)", NULL), 2);
	}
	trace_set_release(&s);
	unlink(p);
}

static void expect_einput(const char *p, const char *msg_part)
{
	struct trace_set s = { 0 };
	struct aorta_error e = { 0 };

	CHECK_EQ_I(ingest_rocpd(p, &opts, &s, &e), AORTA_EINPUT);
	CHECK_EQ_I(s.n, 0);
	CHECK_STR(e.path, p);
	if (!strstr(e.msg, msg_part)) {
		fprintf(stderr, "  message: %s\n", e.msg);
		CHECK(!"message names the problem");
	}
	trace_set_release(&s);
}

static void test_bad_inputs_are_input_errors_naming_the_file(void)
{
	const char *txt = "/tmp/aorta_test_rocpd_text.db";
	const char *empty = "/tmp/aorta_test_rocpd_empty.db";
	const char *nsysdb = "/tmp/aorta_test_rocpd_nsys.db";
	const char *noagent = "/tmp/aorta_test_rocpd_noagent.db";
	const char *norows = "/tmp/aorta_test_rocpd_norows.db";
	FILE *f = fopen(txt, "w");

	if (!f)
		SKIP("cannot write /tmp");
	for (int i = 0; i < 64; i++)
		fputs("Kind,Agent_Id,Queue_Id,Kernel_Name,Start_Timestamp,End_Timestamp\n", f);
	fclose(f);
	expect_einput(txt, "not an sqlite database");
	f = fopen(empty, "w");
	if (f)
		fclose(f);
	expect_einput(empty, "not a rocpd database: missing view 'rocpd_kernel_dispatch'");
	CHECK_EQ_I(make_db(nsysdb, "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER);"
				   "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"), SQLITE_OK);
	expect_einput(nsysdb, "nsys export");
	CHECK_EQ_I(make_db(noagent, "CREATE TABLE rocpd_string (id INTEGER, string TEXT);"
				    "CREATE TABLE rocpd_kernel_dispatch (start INTEGER, \"end\" INTEGER,"
				    " pid INTEGER);"), SQLITE_OK);
	expect_einput(noagent, "missing view 'rocpd_info_agent'");
	CHECK_EQ_I(make_db(norows, "CREATE TABLE rocpd_string (id INTEGER, string TEXT);"
				   "CREATE TABLE rocpd_info_agent (id INTEGER, type TEXT);"
				   "CREATE TABLE rocpd_kernel_dispatch (start INTEGER, \"end\" INTEGER,"
				   " pid INTEGER, agent_id INTEGER);"), SQLITE_OK);
	expect_einput(norows, "no kernel dispatch");
	expect_einput("/tmp/aorta_test_rocpd_missing.db", "cannot open");
	unlink(txt);
	unlink(empty);
	unlink(nsysdb);
	unlink(noagent);
	unlink(norows);
}

int main(void)
{
	TEST(test_fixture_one_rank_per_gpu_agent);
	TEST(test_fixture_copies_by_agent_type);
	TEST(test_fixture_steps_from_markers);
	TEST(test_rank_hint_applies_to_a_single_rank);
	TEST(test_bad_inputs_are_input_errors_naming_the_file);
	return test_report();
}
