/*
 * test_aorta_jsonl.c - aorta / upstream per-rank metrics JSONL reader, on
 * the real 4-rank DDP run in ../shared/data/h200x4/aorta_ddp and on small
 * in-memory inputs (names, streams, rounding, bad lines).
 *
 * Expected numbers for the real files were derived independently with
 * python3: iterations laid end to end, base += round_half_away(total_ms*1e6),
 * each range [base + round(start_ms*1e6), base + round(end_ms*1e6)]; summed
 * per rank.  Tests do not rely on span order.
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

static const struct ingest_opts opts = { .rules = NULL, .rank_hint = -1 };


static size_t count_stream(const struct trace *t, int32_t s)
{
	size_t c = 0;

	for (size_t i = 0; i < t->n; i++)
		c += t->stream[i] == s;
	return c;
}

/* Index of the span named name, or -1. */
static long find(const struct trace *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(strtab_get(&t->names, t->name[i]), name) == 0)
			return (long)i;
	return -1;
}

static void test_real_ddp_four_ranks(void)
{
	/* python over rank_0{r}_metrics.jsonl: spans, sum of durations (ns),
	 * end of the synthetic timeline (ns) */
	static const long long want_sum[4] = { 2504967112LL, 2911388218LL, 2664942922LL,
					       2744410634LL };
	static const long long want_end[4] = { 2511706231LL, 2599433001LL, 2487692166LL,
					       2591220668LL };
	char p[1024];

	for (int r = 0; r < 4; r++) {
		struct trace_set s = { 0 };
		struct aorta_error e;
		struct trace *t;

		snprintf(p, sizeof(p), "%s/h200x4/aorta_ddp/rank_%02d_metrics.jsonl", shared_data(), r);
		if (access(p, R_OK) != 0)
			SKIP("shared data not found");
		CHECK_EQ_I(ingest_aorta_jsonl(p, &opts, &s, &e), AORTA_OK);
		CHECK_EQ_I(s.n, 1);
		if (s.n != 1) {
			trace_set_release(&s);
			continue;
		}
		t = s.t[0];
		CHECK_STR(t->format, "aorta-jsonl");
		CHECK_EQ_I(t->rank, r);
		CHECK_EQ_I(t->world_size, 4);
		/* 60 lines x 5 ranges: aux x180 (prefetch, grad_clip, optimizer), compute x120 */
		CHECK_EQ_I(t->n, 300);
		CHECK_EQ_I(span_sum(t), want_sum[r]);
		CHECK_EQ_I(count_stream(t, 3), 180);
		CHECK_EQ_I(count_stream(t, 0), 120);
		CHECK_EQ_I(count_name(t, "Memcpy HtoD (aorta prefetch)"), 60);
		CHECK_EQ_I(count_name(t, "aorta:compute:forward"), 60);
		CHECK_EQ_I(count_name(t, "aorta:compute:backward"), 60);
		CHECK_EQ_I(count_name(t, "aorta:compute:grad_clip"), 60);
		CHECK_EQ_I(count_name(t, "aorta:compute:optimizer"), 60);
		CHECK_EQ_I(t->nsteps, 60);
		CHECK_EQ_I(t->ngsteps, 60);
		if (t->nsteps == 60) {
			CHECK_EQ_I(t->steps[0].number, 0);
			CHECK_EQ_I(t->steps[0].start_ns, 0);
			CHECK_EQ_I(t->steps[59].number, 59);
			CHECK_EQ_I(t->steps[59].end_ns, want_end[r]);
		}
		CHECK_EQ_I(t->skipped, 0);
		trace_set_release(&s);
	}
}

static void test_names_streams_and_rounding(void)
{
	static const char text[] =
		"{\"rank\":2,\"world_size\":8,\"global_step\":10,\"profile\":{\"total_ms\":1.0000004,\"ranges\":["
		"{\"stream\":\"allreduce\",\"tag\":\"epoch0_step10_grads\",\"start_ms\":-0.0015,\"end_ms\":2.6e-6,\"metadata\":{}},"
		"{\"stream\":\"reducescatter\",\"tag\":\"rs\",\"start_ms\":0,\"end_ms\":0.5,\"metadata\":{\"bytes\":1000000,\"dtype\":\"bf16\"}},"
		"{\"stream\":\"aux\",\"tag\":\"epoch0_step10_ag\",\"start_ms\":0.1,\"end_ms\":0.2,"
		"\"metadata\":{\"function\":\"all_gather_into_tensor\"}},"
		"{\"stream\":\"aux\",\"tag\":\"epoch0_step10_prefetch\",\"start_ms\":0,\"end_ms\":0.25,\"metadata\":{}},"
		"{\"stream\":\"side\",\"tag\":\"epoch0_step10_grad_clip\",\"start_ms\":0.5,\"end_ms\":0.75}]}}\n"
		"\n"
		"{\"rank\":2,\"global_step\":11,\"profile\":{\"total_ms\":2,\"ranges\":["
		"{\"stream\":\"other\",\"tag\":\"x\",\"start_ms\":3.5e-6,\"end_ms\":1}]}}";
	struct trace_set s = { 0 };
	struct aorta_error e;
	struct trace *t;
	long i;

	CHECK_EQ_I(ingest_aorta_jsonl_mem("m.jsonl", text, strlen(text), &opts, &s, &e), AORTA_OK);
	CHECK_EQ_I(s.n, 1);
	if (s.n != 1)
		goto out;
	t = s.t[0];
	CHECK_EQ_I(t->rank, 2);
	CHECK_EQ_I(t->world_size, 8);
	CHECK_EQ_I(t->n, 6);
	i = find(t, "aorta:all_reduce:grads");
	CHECK(i >= 0);
	if (i >= 0) {
		CHECK_EQ_I(t->start_ns[i], -1500);
		CHECK_EQ_I(t->end_ns[i], 3); /* 2.6 ns rounds to 3 */
		CHECK_EQ_I(t->stream[i], 1);
		CHECK_EQ_I(t->hint[i], R_KERNEL);
	}
	i = find(t, "aorta:reduce_scatter:rs");
	CHECK(i >= 0 && t->stream[i] == 2);
	/* metadata.bytes (aorta train's message size) becomes the span's bytes */
	CHECK(i >= 0 && t->bytes[i] == 1000000);
	i = find(t, "aorta:all_gather:ag");
	CHECK(i >= 0 && t->bytes[i] == 0);
	i = find(t, "aorta:all_gather:ag");
	CHECK(i >= 0 && t->stream[i] == 3);
	i = find(t, "Memcpy HtoD (aorta prefetch)");
	CHECK(i >= 0 && t->hint[i] == R_MEMCPY && t->end_ns[i] == 250000);
	i = find(t, "aorta:compute:grad_clip");
	CHECK(i >= 0 && t->stream[i] == 4);
	/* second iteration starts at round(1.0000004 ms) = 1000000 ns; 3.5 ns -> 4 */
	i = find(t, "aorta:compute:x");
	CHECK(i >= 0);
	if (i >= 0) {
		CHECK_EQ_I(t->start_ns[i], 1000004);
		CHECK_EQ_I(t->end_ns[i], 2000000);
		CHECK_EQ_I(t->stream[i], 5);
	}
	CHECK_EQ_I(t->nsteps, 2);
	if (t->nsteps == 2) {
		CHECK_EQ_I(t->steps[1].number, 11);
		CHECK_EQ_I(t->steps[1].start_ns, 1000000);
		CHECK_EQ_I(t->steps[1].end_ns, 3000000);
	}
out:
	trace_set_release(&s);
}

static void test_missing_profile_and_wrong_types_are_skipped(void)
{
	static const char text[] =
		"{\"rank\":1,\"global_step\":0}\n"
		"[1,2]\n"
		"{\"rank\":1,\"global_step\":1,\"profile\":{\"total_ms\":\"5\"}}\n"
		"{\"rank\":1,\"global_step\":2,\"profile\":{\"total_ms\":5,\"ranges\":["
		"{\"stream\":\"compute\",\"tag\":\"a\",\"start_ms\":\"1\",\"end_ms\":2},"
		"{\"stream\":7,\"tag\":\"b\",\"start_ms\":1,\"end_ms\":2},"
		"{\"stream\":\"compute\",\"tag\":\"c\",\"start_ms\":3,\"end_ms\":2},"
		"5,"
		"{\"stream\":\"compute\",\"tag\":\"ok\",\"start_ms\":1,\"end_ms\":2}]}}\n";
	struct trace_set s = { 0 };
	struct aorta_error e;

	CHECK_EQ_I(ingest_aorta_jsonl_mem("w.jsonl", text, strlen(text), &opts, &s, &e), AORTA_OK);
	CHECK_EQ_I(s.n, 1);
	if (s.n == 1) {
		CHECK_EQ_I(s.t[0]->n, 1);
		CHECK_EQ_I(s.t[0]->nsteps, 1);
		/* line 1 (no profile), line 2 (array), line 3 (string total_ms),
		 * four bad ranges on line 4 */
		CHECK_EQ_I(s.t[0]->skipped, 7);
		CHECK(strstr(s.t[0]->skipped_first, "line 1") != NULL);
		CHECK_EQ_I(s.t[0]->rank, 1);
	}
	trace_set_release(&s);
}

static void test_invalid_json_names_line_and_offset(void)
{
	static const char good[] = "{\"rank\":0,\"profile\":{\"total_ms\":1,\"ranges\":[]}}\n";
	static const char cut[] = "{\"rank\":0,\"profile\":{\"total_ms\":1,\"ran";
	static const char junk[] = "{\"rank\":0,,}";
	char buf[512];
	struct trace_set s = { 0 };
	struct aorta_error e;
	size_t n;

	/* a cut line in the middle (another follows): offset = end of that line */
	n = (size_t)snprintf(buf, sizeof(buf), "%s%s%s\n%s", good, good, cut, good);
	memset(&e, 0, sizeof(e));
	CHECK_EQ_I(ingest_aorta_jsonl_mem("c.jsonl", buf, n, &opts, &s, &e), AORTA_EINPUT);
	CHECK_EQ_I(s.n, 0);
	CHECK_EQ_I(e.line, 3);
	CHECK_EQ_I(e.offset, (long long)(2 * strlen(good) + strlen(cut)));
	CHECK_STR(e.path, "c.jsonl");
	/* a syntax error inside a line: the offset points at it */
	n = (size_t)snprintf(buf, sizeof(buf), "%s%s\n%s", good, junk, good);
	CHECK_EQ_I(ingest_aorta_jsonl_mem("j.jsonl", buf, n, &opts, &s, &e), AORTA_EINPUT);
	CHECK_EQ_I(e.line, 2);
	CHECK(e.offset > (long long)strlen(good) + 8 && e.offset <= (long long)n);
	CHECK_EQ_I(s.n, 0);
	/* the same lines last (a run cut mid-write): skipped with a note */
	n = (size_t)snprintf(buf, sizeof(buf), "%s%s%s\n\n", good, good, cut);
	CHECK_EQ_I(ingest_aorta_jsonl_mem("c.jsonl", buf, n, &opts, &s, &e), AORTA_OK);
	CHECK_EQ_I(s.n, 1);
	if (s.n) {
		CHECK_EQ_I(s.t[0]->skipped, 1);
		CHECK(strstr(s.t[0]->skipped_first, "line 3") != NULL);
		CHECK_EQ_I(s.t[0]->nsteps, 2);
		CHECK_EQ_I(s.t[0]->nrec, 2);
	}
	trace_set_release(&s);
	/* a file whose only line is invalid holds nothing: an error */
	n = (size_t)snprintf(buf, sizeof(buf), "%s", junk);
	CHECK_EQ_I(ingest_aorta_jsonl_mem("o.jsonl", buf, n, &opts, &s, &e), AORTA_EINPUT);
	CHECK_EQ_I(s.n, 0);
	CHECK_EQ_I(e.line, 1);
}

/* upstream's active_segments are stepped over: the same spans and figures
 * with or without them, wherever the member sits, with brackets and quotes
 * inside its strings; a string VALUE "active_segments" is read as any
 * other; a damaged array makes its line invalid JSON like any other damage
 * (named by line and the offset inside the array). */
static void test_active_segments_do_not_change_what_is_read(void)
{
	static const char plain[] =
		"{\"rank\":1,\"profile\":{\"total_ms\":10,\"ranges\":[{\"stream\":\"compute\",\"tag\":\"active_segments\","
		"\"start_ms\":0,\"end_ms\":4,\"metadata\":{}}],\"overlap\":{\"per_stream_ms\":{\"compute\":4}}}}\n";
	static const char seg_last[] =
		"{\"rank\":1,\"profile\":{\"total_ms\":10,\"ranges\":[{\"stream\":\"compute\",\"tag\":\"active_segments\","
		"\"start_ms\":0,\"end_ms\":4,\"metadata\":{}}],\"overlap\":{\"per_stream_ms\":{\"compute\":4},"
		" \"active_segments\" : [{\"start_ms\":0,\"end_ms\":4,\"active_streams\":[\"co]m\\\"pute\"]},{}]}}}\n";
	static const char seg_first[] =
		"{\"rank\":1,\"profile\":{\"total_ms\":10,\"ranges\":[{\"stream\":\"compute\",\"tag\":\"active_segments\","
		"\"start_ms\":0,\"end_ms\":4,\"metadata\":{}}],\"overlap\":{\"active_segments\":[[\"}\"]] ,"
		"\"per_stream_ms\":{\"compute\":4}}}}\n";
	static const char seg_broken[] =
		"{\"rank\":1,\"profile\":{\"total_ms\":10,\"overlap\":{\"active_segments\":[{\"a\":}]}}}\n"
		"{\"rank\":1,\"profile\":{\"total_ms\":10}}\n";
	const char *const v[3] = { plain, seg_last, seg_first };
	struct trace_set s[3];
	struct aorta_error e;
	memset(s, 0, sizeof(s));
	for (int k = 0; k < 3; k++) {
		CHECK_EQ_I(ingest_aorta_jsonl_mem("s.jsonl", v[k], strlen(v[k]), &opts, &s[k], &e), AORTA_OK);
		CHECK_EQ_I(s[k].n, 1);
	}
	if (s[0].n && s[1].n && s[2].n)
		for (int k = 1; k < 3; k++) {
			CHECK_EQ_I(s[k].t[0]->n, s[0].t[0]->n);
			CHECK_EQ_I(s[k].t[0]->skipped, 0);
			CHECK_EQ_I(s[k].t[0]->nrec, 1);
			CHECK_NEAR(s[k].t[0]->rec[0].v[SR_COMPUTE], 4, 0);
			CHECK_STR(strtab_get(&s[k].t[0]->names, s[k].t[0]->name[0]), "aorta:compute:active_segments");
		}
	for (int k = 0; k < 3; k++)
		trace_set_release(&s[k]);
	struct trace_set b = { 0 };
	CHECK_EQ_I(ingest_aorta_jsonl_mem("b.jsonl", seg_broken, strlen(seg_broken), &opts, &b, &e), AORTA_EINPUT);
	CHECK_EQ_I(e.line, 1);
	CHECK_EQ_I(e.offset, (long long)(strstr(seg_broken, ":}") - seg_broken) + 2); /* just past the "}" yajl stopped on */
	CHECK(strstr(e.msg, "invalid json (") != NULL);
	trace_set_release(&b);
}

/* The values nobody reads (active_segments, markers, utilization) are
 * stepped over when plain and parsed when not (an escape, a byte above
 * 0x7e, an exponent, a long integer, nesting beyond 32, a duplicate key):
 * either way the line gives what it gives without them; damage inside one
 * is the parser's error at the parser's offset. */
static void test_unread_values_are_stepped_over_or_parsed_alike(void)
{
#define HEAD "{\"rank\":1,\"loss\":0.5,\"profile\":{\"total_ms\":10,\"ranges\":[{\"stream\":\"compute\",\"tag\":\"f\"," \
	     "\"start_ms\":1,\"end_ms\":4,\"metadata\":{%s}}],%s\"overlap\":{\"per_stream_ms\":{\"compute\":4.5}," \
	     "\"overlap_ms\":{\"compute_comm\":0.25}%s}}}\n"
	static const char *const unread[][3] = {
		{ "", "", "" },
		{ "\"markers\":[1]", "\"markers\": [{\"t\": 1.5, \"m\": {}}], ",
		  ", \"active_segments\": [{\"start_ms\": 0.0, \"end_ms\": 1.0, \"active_streams\": [\"compute\"]}], "
		  "\"utilization\": {\"compute\": 0.45, \"x\": [true, false, null, [], -0, 12]}" },
		{ "", "\"markers\": [\"caf\\u00e9 \\\"q\\\"\"], ",
		  ", \"active_segments\": [1e999, 1E-400], \"utilization\": {\"c\": \"caf\xc3\xa9\", \"n\": 123456789012345678901}" },
		{ "", "\"markers\": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]], ",
		  ", \"active_segments\": [], \"active_segments\": {}, \"utilization\":{}" },
	};
	enum { NV = sizeof(unread) / sizeof(unread[0]) };
	struct trace_set s[NV];
	struct aorta_error e;
	char buf[1024];
	memset(s, 0, sizeof(s));
	for (int k = 0; k < NV; k++) {
		int n = snprintf(buf, sizeof(buf), HEAD, unread[k][0], unread[k][1], unread[k][2]);
		CHECK(n > 0 && n < (int)sizeof(buf));
		CHECK_EQ_I(ingest_aorta_jsonl_mem("u.jsonl", buf, (size_t)n, &opts, &s[k], &e), AORTA_OK);
		CHECK_EQ_I(s[k].n, 1);
		if (!s[k].n)
			continue;
		const struct trace *t = s[k].t[0];
		CHECK_EQ_I(t->skipped, 0);
		CHECK_EQ_I(t->n, 1);
		CHECK_EQ_I(t->nrec, 1);
		if (t->n && t->nrec) {
			CHECK_STR(strtab_get(&t->names, t->name[0]), "aorta:compute:f");
			CHECK_EQ_I(t->end_ns[0] - t->start_ns[0], 3000000);
			CHECK_NEAR(t->rec[0].v[SR_COMPUTE], 4.5, 0);
			CHECK_NEAR(t->rec[0].v[SR_OVERLAP], 0.25, 0);
			CHECK_NEAR(t->rec[0].v[SR_LOSS], 0.5, 0);
		}
		trace_set_release(&s[k]);
	}
	/* a missing value inside markers: named at the parser's offset, just past the "}" */
	int n = snprintf(buf, sizeof(buf), HEAD "{\"rank\":1,\"profile\":{\"total_ms\":10}}\n", "",
			 "\"markers\": [{\"a\":}], ", "");
	struct trace_set b = { 0 };
	CHECK_EQ_I(ingest_aorta_jsonl_mem("m.jsonl", buf, (size_t)n, &opts, &b, &e), AORTA_EINPUT);
	CHECK_EQ_I(e.line, 1);
	CHECK_EQ_I(e.offset, (long long)(strstr(buf, ":}") - buf) + 2);
	CHECK(strstr(e.msg, "invalid json (") != NULL);
	trace_set_release(&b);
#undef HEAD
}

/* The trainer's explicit collective field names the span; the recorded
 * figures are kept per step as upstream reads them. */
static void test_collective_field_and_recorded_figures(void)
{
	static const char text[] =
		"{\"rank\":2,\"loss\":0.5,\"global_step\":7,\"profile\":{\"total_ms\":10,\"ranges\":["
		"{\"stream\":\"comm7\",\"tag\":\"epoch0_step7_grads\",\"start_ms\":1,\"end_ms\":4,"
		"\"collective\":\"all_gather\",\"metadata\":{}},"
		"{\"stream\":\"compute\",\"tag\":\"epoch0_step7_fwd\",\"start_ms\":0,\"end_ms\":5,\"metadata\":{}}],"
		"\"overlap\":{\"per_stream_ms\":{\"compute\":5,\"allgather\":3,\"aux\":1},"
		"\"overlap_ms\":{\"compute_comm\":3,\"compute_allgather\":3,\"idle\":5}}}}\n";
	struct trace_set s = { 0 };
	struct aorta_error e;
	CHECK_EQ_I(ingest_aorta_jsonl_mem("f.jsonl", text, strlen(text), &opts, &s, &e), AORTA_OK);
	CHECK_EQ_I(s.n, 1);
	if (!s.n)
		return;
	const struct trace *t = s.t[0];
	int comm = 0;
	for (size_t i = 0; i < t->n; i++)
		if (t->kind[i] == K_COMM) {
			comm++;
			CHECK_EQ_I(t->coll_type[i], COLL_ALL_GATHER);
			CHECK_STR(strtab_get(&t->names, t->name[i]), "aorta:all_gather:grads");
		}
	CHECK_EQ_I(comm, 1);
	CHECK_EQ_I(t->nrec, 1);
	CHECK_EQ_I(t->rec[0].number, 7);
	CHECK_NEAR(t->rec[0].v[SR_STEP], 10, 0);
	CHECK_NEAR(t->rec[0].v[SR_COMPUTE], 5, 0);
	CHECK_NEAR(t->rec[0].v[SR_COMM], 3, 0);
	CHECK_NEAR(t->rec[0].v[SR_AG_OVERLAP], 3, 0);
	CHECK_NEAR(t->rec[0].v[SR_AR_OVERLAP], 0, 0);
	CHECK_NEAR(t->rec[0].v[SR_EXPOSED], 0, 0);
	CHECK_NEAR(t->rec[0].v[SR_AUX], 1, 0);
	CHECK_NEAR(t->rec[0].v[SR_IDLE], 5, 0);
	CHECK_NEAR(t->rec[0].v[SR_LOSS], 0.5, 0);
	trace_set_release(&s);
}

static void test_file_reader_matches_memory_reader(void)
{
	static const char text[] =
		"{\"rank\":3,\"global_step\":4,\"profile\":{\"total_ms\":1.5,\"ranges\":["
		"{\"stream\":\"compute\",\"tag\":\"f\",\"start_ms\":0.25,\"end_ms\":1}]}}\r\n"
		"{\"rank\":3,\"global_step\":5,\"profile\":{\"total_ms\":1,\"ranges\":["
		"{\"stream\":\"allreduce\",\"tag\":\"g\",\"start_ms\":0,\"end_ms\":1}]}}";
	char path[] = "/tmp/aorta_jsonl_XXXXXX";
	struct trace_set s = { 0 };
	struct aorta_error e;
	int fd = mkstemp(path);
	FILE *f;

	if (fd < 0)
		SKIP("mkstemp failed");
	f = fdopen(fd, "wb");
	fputs(text, f);
	fclose(f);
	CHECK_EQ_I(ingest_aorta_jsonl(path, &opts, &s, &e), AORTA_OK);
	CHECK_EQ_I(s.n, 1);
	if (s.n == 1) {
		CHECK_EQ_I(s.t[0]->n, 2);
		CHECK_EQ_I(s.t[0]->rank, 3);
		CHECK_EQ_I(span_sum(s.t[0]), 750000 + 1000000);
		CHECK_EQ_I(count_name(s.t[0], "aorta:all_reduce:g"), 1);
		CHECK_EQ_I(s.t[0]->nsteps, 2);
	}
	trace_set_release(&s);
	unlink(path);
}

int main(void)
{
	TEST(test_real_ddp_four_ranks);
	TEST(test_names_streams_and_rounding);
	TEST(test_missing_profile_and_wrong_types_are_skipped);
	TEST(test_invalid_json_names_line_and_offset);
	TEST(test_collective_field_and_recorded_figures);
	TEST(test_active_segments_do_not_change_what_is_read);
	TEST(test_unread_values_are_stepped_over_or_parsed_alike);
	TEST(test_file_reader_matches_memory_reader);
	return test_report();
}
