/*
 * test_runs.c - the one way in (cmd/runs.c) opens each named input once:
 * the kind is sniffed from the bytes the one open read and the same stream
 * handed to the reader, a trace or a saved analysis alike; a folder's
 * members are sniffed when the folder is walked (to know which to read)
 * and opened again to read.  Counted with base/zread.c's count of opens.
 */
#include "testing.h"

#include <stdio.h>
#include <unistd.h>

#include "analysis_io/analysis_io.h"
#include "base/zread.h"
#include "cmd/cmds.h"

static struct analysis_opts opts(void)
{
	struct analysis_opts o = ANALYSIS_OPTS_INIT;
	o.threads = 1;
	return o;
}

/* run_load of input: its analysis into a, the files it opened. */
static size_t opens_of(const char *input, struct analysis *a, enum aorta_status *st)
{
	struct analysis_opts o = opts();
	struct aorta_error e = { 0 };
	size_t before = zread_opens();
	*st = run_load(input, &o, a, &e);
	return zread_opens() - before;
}

static void test_a_named_trace_is_opened_once(void)
{
	struct analysis a;
	enum aorta_status st;
	CHECK_EQ_I(opens_of("tests/data/tiny/rank0.json", &a, &st), 1);
	CHECK_EQ_I(st, AORTA_OK);
	CHECK_EQ_I(a.n, 1);
	analysis_free(&a);
	/* gzip: the same one open */
	CHECK_EQ_I(opens_of("tests/data/whatif/ddp_gpu_fwd_r1/base/rank0.json.gz", &a, &st), 1);
	CHECK_EQ_I(st, AORTA_OK);
	CHECK(a.n == 1 && a.r[0].nsteps > 0);
	analysis_free(&a);
	/* an op table (one file, several ranks) and aorta JSONL */
	CHECK_EQ_I(opens_of("tests/fixtures/optable/two_ranks.csv", &a, &st), 1);
	CHECK(st == AORTA_OK && a.n == 2);
	analysis_free(&a);
	CHECK_EQ_I(opens_of("tests/data/report/base/rank_00_metrics.jsonl", &a, &st), 1);
	CHECK(st == AORTA_OK && a.n == 1);
	analysis_free(&a);
}

static void test_a_saved_analysis_is_opened_once(void)
{
	struct analysis a, b;
	enum aorta_status st;
	struct aorta_error e = { 0 };
	char path[64];
	snprintf(path, sizeof(path), "/tmp/aorta_test_runs_%d.json", (int)getpid());
	CHECK_EQ_I(opens_of("tests/data/tiny", &a, &st), 4); /* two members: sniffed, then read */
	CHECK_EQ_I(st, AORTA_OK);
	CHECK_EQ_I(analysis_save_json(&a, path, &e), AORTA_OK);
	CHECK_EQ_I(opens_of(path, &b, &st), 1); /* sniffed and read back from the one stream */
	CHECK_EQ_I(st, AORTA_OK);
	CHECK_EQ_I(b.n, a.n);
	CHECK(b.n == 2 && b.r[1].rank == a.r[1].rank && b.r[1].total.busy_ns == a.r[1].total.busy_ns);
	analysis_free(&a);
	analysis_free(&b);
	unlink(path);
}

static void test_an_unknown_file_is_worded_once_opened(void)
{
	struct analysis a;
	enum aorta_status st;
	struct analysis_opts o = opts();
	struct aorta_error e = { 0 };
	size_t before = zread_opens();
	st = run_load("tests/data/config/not_yaml.txt", &o, &a, &e);
	CHECK_EQ_I(zread_opens() - before, 1);
	CHECK_EQ_I(st, AORTA_EINPUT);
	CHECK(strstr(e.msg, "unknown trace format") != NULL);
}

int main(void)
{
	aorta_quiet = 1;
	TEST(test_a_named_trace_is_opened_once);
	TEST(test_a_saved_analysis_is_opened_once);
	TEST(test_an_unknown_file_is_worded_once_opened);
	return test_report();
}
