/*
 * test_optable.c - the op table reader (ingest/optable.c, aorta.optable/1):
 * columns and units, kinds, steps, groups and order, send/recv peers, one
 * trace per rank, the figures and the join on a table whose answer is
 * computed by hand, and hostile rows (bad numbers, negative durations,
 * missing columns, a second host, another version).
 */
#include "testing.h"

#include "ingest/ingest.h"
#include "ingest/ingest_mem.h"
#include "overlap/analysis.h"

/* Two ranks, two steps, microseconds.  Step 1: rank 0 computes [0,100) and
 * starts its all-reduce at 50 (overlapped 50 us); rank 1 computes [0,120)
 * and reaches the all-reduce at 120, which ends at 150 on both: rank 0
 * waits 70 us, transfer 30 us.  Rank 0 then sends to rank 1 at [200,210);
 * rank 1's recv starts at 190: it waits 10 us for the send.  Step 2: both
 * compute [1000,1100) and all-reduce [1100,1200) (no wait, transfer 100). */
static const char table_csv[] =
	"# aorta.optable/1 two ranks, two steps\n"
	"rank,step,op,kind,stream,start_us,dur_us,group,peer,bytes,host\n"
	"0,1,fwd,gemm,0,0,100,,,,h0\n"
	"0,1,ar,all_reduce,1,50,100,dp,,1048576,h0\n"
	"1,1,fwd,gemm,0,0,120,,,,h0\n"
	"1,1,ar,all_reduce,1,120,30,dp,,1048576,h0\n"
	"0,1,\"send, to 1\",send,2,200,10,,1,4096,h0\n"
	"1,1,recv,recv,2,190,20,,0,4096,h0\n"
	"\n"
	"# step 2\n"
	"0,2,fwd,gemm,0,1000,100,,,,h0\n"
	"0,2,ar,all_reduce,1,1100,100,dp,,1048576,h0\n"
	"1,2,fwd,gemm,0,1000,100,,,,h0\n"
	"1,2,ar,all_reduce,1,1100,100,dp,,1048576,h0\n";

/* The same table as JSON lines, with end_ns instead of dur_us. */
static const char table_jsonl[] =
	"{\"schema\": \"aorta.optable/1\"}\n"
	"{\"rank\":0,\"step\":1,\"op\":\"fwd\",\"kind\":\"gemm\",\"stream\":0,\"start_ns\":0,\"end_ns\":100000,\"host\":\"h0\"}\n"
	"{\"rank\":0,\"step\":1,\"op\":\"ar\",\"kind\":\"all_reduce\",\"stream\":1,\"start_ns\":50000,\"end_ns\":150000,\"group\":\"dp\",\"bytes\":1048576,\"host\":\"h0\"}\n"
	"{\"rank\":1,\"step\":1,\"op\":\"fwd\",\"kind\":\"gemm\",\"stream\":0,\"start_ns\":0,\"end_ns\":120000,\"host\":\"h0\"}\n"
	"{\"rank\":1,\"step\":1,\"op\":\"ar\",\"kind\":\"all_reduce\",\"stream\":1,\"start_ns\":120000,\"end_ns\":150000,\"group\":\"dp\",\"bytes\":1048576,\"host\":\"h0\"}\n"
	"{\"rank\":0,\"step\":1,\"op\":\"send, to 1\",\"kind\":\"send\",\"stream\":2,\"start_ns\":200000,\"end_ns\":210000,\"peer\":1,\"bytes\":4096,\"host\":\"h0\"}\n"
	"{\"rank\":1,\"step\":1,\"op\":\"recv\",\"kind\":\"recv\",\"stream\":2,\"start_ns\":190000,\"end_ns\":210000,\"peer\":0,\"bytes\":4096,\"host\":\"h0\"}\n"
	"{\"rank\":0,\"step\":2,\"op\":\"fwd\",\"kind\":\"gemm\",\"stream\":0,\"start_ns\":1000000,\"end_ns\":1100000,\"host\":\"h0\"}\n"
	"{\"rank\":0,\"step\":2,\"op\":\"ar\",\"kind\":\"all_reduce\",\"stream\":1,\"start_ns\":1100000,\"end_ns\":1200000,\"group\":\"dp\",\"bytes\":1048576,\"host\":\"h0\"}\n"
	"{\"rank\":1,\"step\":2,\"op\":\"fwd\",\"kind\":\"gemm\",\"stream\":0,\"start_ns\":1000000,\"end_ns\":1100000,\"host\":\"h0\"}\n"
	"{\"rank\":1,\"step\":2,\"op\":\"ar\",\"kind\":\"all_reduce\",\"stream\":1,\"start_ns\":1100000,\"end_ns\":1200000,\"group\":\"dp\",\"bytes\":1048576,\"host\":\"h0\"}\n";

static enum aorta_status rd(const char *text, struct trace_set *s, struct aorta_error *e)
{
	struct ingest_opts o = { NULL, -1 };
	memset(s, 0, sizeof(*s));
	memset(e, 0, sizeof(*e));
	return ingest_optable_mem("t.csv", text, strlen(text), &o, s, e);
}

/* The span of trace t named n (the k-th such in time order). */
static long find(const struct trace *t, const char *n, int k)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(strtab_get(&t->names, t->name[i]), n) && k-- == 0)
			return (long)i;
	return -1;
}

static void check_table(const char *text)
{
	struct trace_set s;
	struct aorta_error e;

	CHECK_EQ_I(rd(text, &s, &e), AORTA_OK);
	CHECK_EQ_I(s.n, 2);
	if (s.n != 2)
		return;
	const struct trace *t0 = s.t[0], *t1 = s.t[1];
	CHECK_EQ_I(t0->rank, 0);
	CHECK_EQ_I(t1->rank, 1);
	CHECK_EQ_I(t0->world_size, 2);
	CHECK_STR(t0->format, "optable");
	CHECK_STR(t0->host, "h0");
	CHECK_EQ_I(t0->n, 5);
	CHECK_EQ_I(t1->n, 5);
	CHECK_EQ_I(t0->nsteps, 2);
	CHECK_EQ_I(t0->skipped, 0);
	/* step windows: from the step's first row to the next step's first
	 * (they tile; the last ends at its last row's end) */
	CHECK_EQ_I(t0->steps[0].number, 1);
	CHECK_EQ_I(t0->steps[0].start_ns, 0);
	CHECK_EQ_I(t0->steps[0].end_ns, 1000000);
	CHECK_EQ_I(t0->steps[1].start_ns, 1000000);
	long ar = find(t1, "ar", 0), f = find(t0, "fwd", 1), sd = find(t0, "send, to 1", 0);
	long rv = find(t1, "recv", 0), ar2 = find(t1, "ar", 1);
	CHECK(ar >= 0 && f >= 0 && sd >= 0 && rv >= 0 && ar2 >= 0);
	if (ar < 0 || f < 0 || sd < 0 || rv < 0 || ar2 < 0)
		goto out;
	CHECK_EQ_I(t1->start_ns[ar], 120000);
	CHECK_EQ_I(t1->end_ns[ar], 150000);
	CHECK_EQ_I(t1->kind[ar], K_COMM);
	CHECK_EQ_I(t1->coll_type[ar], COLL_ALL_REDUCE);
	CHECK_EQ_I(t1->bytes[ar], 1048576);
	CHECK_EQ_I(t1->stream[ar], 1);
	CHECK_EQ_I(t1->steps[t1->step[ar]].number, 1);
	CHECK_EQ_I(t1->steps[t1->step[ar2]].number, 2);
	CHECK_EQ_I(t0->kind[f], K_GEMM);
	CHECK_EQ_I(t0->steps[t0->step[f]].number, 2);
	/* the group; no seq column, so no sequence number: the join matches
	 * by step, group, type and order within the step */
	const struct coll_meta *m = &t1->coll[t1->meta[ar]];
	CHECK_STR(strtab_get(&t1->names, m->pg_name), "dp");
	CHECK_EQ_I(m->seq, -1);
	CHECK_EQ_I(t1->coll[t1->meta[ar2]].seq, -1);
	CHECK_EQ_I(m->p2p, P2P_NONE);
	CHECK_EQ_I(m->peer, -1);
	/* send/recv: peers, direction, a group per (source, destination) */
	const struct coll_meta *ms = &t0->coll[t0->meta[sd]], *mr = &t1->coll[t1->meta[rv]];
	CHECK_EQ_I(t0->coll_type[sd], COLL_SEND_RECV);
	CHECK_EQ_I(ms->p2p, P2P_SEND);
	CHECK_EQ_I(ms->peer, 1);
	CHECK_EQ_I(mr->p2p, P2P_RECV);
	CHECK_EQ_I(mr->peer, 0);
	CHECK_STR(strtab_get(&t0->names, ms->pg_name), "p2p:0->1");
	CHECK_STR(strtab_get(&t1->names, mr->pg_name), "p2p:0->1");
	CHECK_EQ_I(ms->seq, -1);
	CHECK_EQ_I(t0->launch_ns[sd], INT64_MIN);
out:
	trace_set_release(&s);
}

static void test_csv_columns_units_kinds_steps_groups_peers(void)
{
	check_table(table_csv);
}

static void test_jsonl_gives_the_same_traces(void)
{
	check_table(table_jsonl);
}

/* The figures and the join, by hand (see table_csv). */
static void test_figures_and_join_by_hand(void)
{
	struct trace_set s;
	struct aorta_error e;
	struct analysis a;
	struct analysis_opts o = { NULL, 1, 0, 10, 30.0, 0, 0, NULL, 0, 0, 0 };

	CHECK_EQ_I(rd(table_csv, &s, &e), AORTA_OK);
	analysis_from_set(&s, &o, &a);
	CHECK_EQ_I(a.n, 2);
	if (a.n == 2) {
		/* rank 0: compute 200 us, comm 100+10+100 = 210 us, 50 us of it
		 * under compute */
		CHECK_EQ_I(a.r[0].total.compute_ns, 200000);
		CHECK_EQ_I(a.r[0].total.comm_ns, 210000);
		CHECK_EQ_I(a.r[0].total.overlap_ns, 50000);
		CHECK_EQ_I(a.r[0].total.exposed_comm_ns, 160000);
		CHECK_EQ_I(a.r[1].total.compute_ns, 220000);
		CHECK_EQ_I(a.r[1].total.overlap_ns, 0);
		/* one clock (one host): rank 0 waits 70 us in step 1's all-reduce;
		 * rank 1's recv waits 10 us for rank 0's send */
		CHECK_EQ_I(a.r[0].wait_ns, 70000);
		CHECK_EQ_I(a.r[1].wait_ns, 10000);
		CHECK_EQ_I(a.r[1].caused_ns, 70000);
		CHECK_EQ_I(a.r[0].caused_ns, 10000);
		/* 70 of the 80 us waited were caused by rank 1 (87.5 % >= 60 %) */
		CHECK_EQ_I(a.late_rank, 1);
		CHECK_EQ_I(a.r[0].nsteps, 2);
	}
	analysis_free(&a);
}

/* Exact decimal fixed point: no double on the way. */
static void test_time_units_are_exact(void)
{
	static const char t[] =
		"# aorta.optable/1\n"
		"rank,op,kind,start_s,dur_ms,launch_us\n"
		"0,a,compute,0.000000001,1.5e-3,0.5\n"      /* 1 ns, 1500 ns, 500 ns */
		"0,b,compute,1.000000001,0.0000005,-2\n"   /* 0.5 ns rounds half away: 1 ns */
		"0,c,compute,12345678.123456789,0,12345678123456.789\n";
	struct trace_set s;
	struct aorta_error e;

	CHECK_EQ_I(rd(t, &s, &e), AORTA_OK);
	CHECK_EQ_I(s.n, 1);
	if (s.n == 1) {
		const struct trace *x = s.t[0];
		long a = find(x, "a", 0), b = find(x, "b", 0), c = find(x, "c", 0);
		CHECK(a >= 0 && b >= 0 && c >= 0);
		if (a >= 0 && b >= 0 && c >= 0) {
			CHECK_EQ_I(x->start_ns[a], 1);
			CHECK_EQ_I(x->end_ns[a], 1501);
			CHECK_EQ_I(x->launch_ns[a], 500);
			CHECK_EQ_I(x->start_ns[b], 1000000001);
			CHECK_EQ_I(x->end_ns[b], 1000000002);
			CHECK_EQ_I(x->launch_ns[b], -2000);
			CHECK_EQ_I(x->start_ns[c], INT64_C(12345678123456789));
			CHECK_EQ_I(x->launch_ns[c], INT64_C(12345678123456789));
			CHECK_EQ_I(x->kind[a], K_COMPUTE_OTHER);
			CHECK_EQ_I(x->nsteps, 0); /* no step column: one window */
			CHECK_EQ_I(x->stream[a], 0);
		}
	}
	trace_set_release(&s);
}

/* Each hostile row is skipped and counted; the first reason names the line. */
static void test_hostile_rows_are_skipped_with_their_line(void)
{
	static const char t[] =
		"# aorta.optable/1\n"
		"rank,step,op,kind,start_ns,dur_ns,peer,stage\n"
		"0,1,ok,gemm,0,10,,0\n"
		"0,1,neg,gemm,20,-5,,0\n"            /* line 4: negative duration */
		"0,1,badnum,gemm,2x0,5,,0\n"         /* bad start */
		"0,1,nan,gemm,nan,5,,0\n"
		"x,1,badrank,gemm,0,5,,0\n"
		"0,1.5,badstep,gemm,0,5,,0\n"
		"0,1,badkind,teleport,0,5,,0\n"
		"0,1,,gemm,0,5,,0\n"                 /* no name */
		"0,1,self,send,0,5,0,0\n"            /* peer = rank */
		"0,1,huge,gemm,99999999999999999999999,5,,0\n"
		"0,1,\"unterminated,gemm,0,5,,0\n"
		"0,1,short,gemm\n"                   /* missing values */
		"1,1,ok,all-reduce,0,10,,0\n";       /* '-' for '_' is fine */
	struct trace_set s;
	struct aorta_error e;

	CHECK_EQ_I(rd(t, &s, &e), AORTA_OK);
	CHECK_EQ_I(s.n, 2);
	if (s.n == 2) {
		CHECK_EQ_I(s.t[0]->n, 1);
		CHECK_EQ_I(s.t[1]->n, 1);
		CHECK_EQ_I(s.t[1]->coll_type[0], COLL_ALL_REDUCE);
		CHECK_EQ_I(s.t[0]->skipped, 11);
		CHECK(strstr(s.t[0]->skipped_first, "t.csv line 4") != NULL);
		CHECK(strstr(s.t[0]->skipped_first, "negative duration") != NULL);
	}
	trace_set_release(&s);
}

/* File-level problems: an error naming file and line, no traces. */
static void test_bad_headers_and_versions_are_errors(void)
{
	static const struct { const char *text; long long line; const char *msg; } c[] = {
		{ "# aorta.optable/1\nrank,op,kind,dur_ns\n0,a,gemm,5\n", 2, "no 'start_<unit>'" },
		{ "# aorta.optable/1\nrank,op,kind,start_ns\n", 2, "neither" },
		{ "# aorta.optable/1\nrank,op,kind,start,dur_ns\n", 2, "without its unit" },
		{ "# aorta.optable/1\nrank,op,kind,start_min,dur_ns\n", 2, "unknown unit" },
		{ "# aorta.optable/1\nrank,rank,op,kind,start_ns,dur_ns\n", 2, "twice" },
		{ "# aorta.optable/1\nrank,op,kind,start_ns,dur_ns,end_ns\n", 2, "both" },
		{ "# aorta.optable/2\nrank,op,kind,start_ns,dur_ns\n", 1, "aorta.optable/1" },
		{ "{\"schema\":\"aorta.optable/7\"}\n", 1, "version" },
		{ "# aorta.optable/1\n", 1, "no header" },
		{ "# aorta.optable/1\nrank,op,kind,start_ns,dur_ns\n", 2, "no operation rows" },
		{ "# aorta.optable/1\nrank,op,kind,start_ns,dur_ns\n0,a,gemm,0,-1\n", 3, "negative duration" },
		{ "# aorta.optable/1\nrank,op,kind,start_ns,dur_ns,host\n0,a,gemm,0,1,x\n0,b,gemm,2,1,y\n", 4,
		  "one host per rank" },
		{ "{\"schema\":\"aorta.optable/1\"}\n{\"rank\":0,\"op\":\"a\",\"kind\":\"gemm\",\"start_us\":1,\"dur_us\":1}\n"
		  "{\"rank\":0,\"op\":\"a\",\"kind\":\"gemm\",\"start_ns\":1,\"dur_us\":1}\n", 3, "another unit" },
		{ "rank,op,kind,start_ns,dur_ns\n", 1, "first line" },
		{ "", 0, "empty" },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct trace_set s;
		struct aorta_error e;
		enum aorta_status st = rd(c[i].text, &s, &e);
		CHECK_EQ_I(st, AORTA_EINPUT);
		CHECK_EQ_I(s.n, 0);
		CHECK_STR(e.path, "t.csv");
		CHECK_EQ_I(e.line, c[i].line);
		if (!strstr(e.msg, c[i].msg)) {
			fprintf(stderr, "  case %zu: '%s' lacks '%s'\n", i, e.msg, c[i].msg);
			CHECK(0);
		}
		trace_set_release(&s);
	}
}

static void test_sniff_finds_both_forms(void)
{
	struct aorta_error e;

	CHECK_EQ_I(ingest_sniff_buf("x", table_csv, strlen(table_csv), &e), FMT_OPTABLE);
	CHECK_EQ_I(ingest_sniff_buf("x", table_jsonl, strlen(table_jsonl), &e), FMT_OPTABLE);
	CHECK_STR(format_name(FMT_OPTABLE), "optable");
	/* a JSON line that is not the schema line is not an op table */
	static const char other[] = "{\"rank\":0,\"op\":\"a\"}\n";
	CHECK(ingest_sniff_buf("x", other, strlen(other), &e) != FMT_OPTABLE);
}

/* A user's seq column is the sequence; a given group keeps send/recv's name. */
static void test_seq_and_group_columns(void)
{
	static const char t[] =
		"# aorta.optable/1\n"
		"rank,op,kind,start_ns,dur_ns,group,seq,peer,group_size\n"
		"0,ag,all_gather,0,10,tp,7,,4\n"
		"0,ag,all_gather,20,10,tp,3,,4\n"
		"0,s,send,40,10,pp,,2,\n";
	struct trace_set s;
	struct aorta_error e;

	CHECK_EQ_I(rd(t, &s, &e), AORTA_OK);
	if (s.n == 1 && s.t[0]->n == 3) {
		const struct trace *x = s.t[0];
		CHECK_EQ_I(x->coll[x->meta[0]].seq, 7);
		CHECK_EQ_I(x->coll[x->meta[1]].seq, 3);
		CHECK_EQ_I(x->coll[x->meta[0]].group_size, 4);
		CHECK_STR(strtab_get(&x->names, x->coll[x->meta[2]].pg_name), "pp");
		CHECK_EQ_I(x->coll[x->meta[2]].seq, -1); /* no seq given: none made up */
		CHECK_EQ_I(x->coll[x->meta[2]].peer, 2);
		CHECK_EQ_I(x->world_size, 1);
	} else {
		CHECK(0);
	}
	trace_set_release(&s);
}


/* A seq given twice in one group of a rank is refused (the later line,
 * counted, naming both lines): it would merge two calls into one. */
static void test_repeated_seq_refused(void)
{
	static const char t[] =
		"# aorta.optable/1\n"
		"rank,op,kind,start_ns,dur_ns,group,seq\n"
		"0,ag,all_gather,0,10,tp,1\n"
		"0,ag,all_gather,20,10,tp,1\n"
		"0,ag,all_gather,40,10,dp,1\n";
	struct trace_set s;
	struct aorta_error e;
	CHECK_EQ_I(rd(t, &s, &e), AORTA_OK);
	if (s.n == 1) {
		CHECK_EQ_I(s.t[0]->n, 2); /* tp's second and dp's first */
		CHECK_EQ_I(s.t[0]->skipped, 1);
		CHECK(strstr(s.t[0]->skipped_first, "line 4: seq 1 of group 'tp' on rank 0 again (first on line 3)") != NULL);
	}
	trace_set_release(&s);
}

/* A step's window from its own work: a prefetch row of step 2 during step 1
 * neither starts step 2 early nor drops it (the layer would call an overlap
 * a clock going backwards); windows tile. */
static void test_prefetch_row_keeps_the_step_windows(void)
{
	static const char t[] =
		"# aorta.optable/1\n"
		"rank,step,op,kind,stream,start_us,dur_us,group\n"
		"0,1,fwd,gemm,0,0,400,\n"
		"0,1,bwd,gemm,0,400,400,\n"
		"0,2,ag,all_gather,2,500,50,dp\n" /* step 2's prefetch, during step 1 */
		"0,2,fwd,gemm,0,1000,400,\n"
		"0,2,bwd,gemm,0,1400,400,\n";
	struct trace_set s;
	struct aorta_error e;
	CHECK_EQ_I(rd(t, &s, &e), AORTA_OK);
	if (s.n == 1) {
		const struct trace *x = s.t[0];
		CHECK_EQ_I(x->skipped, 0);
		CHECK_EQ_I(x->nsteps, 2);
		if (x->nsteps == 2) {
			CHECK_EQ_I(x->steps[0].start_ns, 0);
			CHECK_EQ_I(x->steps[0].end_ns, 1000000);
			CHECK_EQ_I(x->steps[1].start_ns, 1000000);
			CHECK_EQ_I(x->steps[1].end_ns, 1800000);
		}
		long ag = find(x, "ag", 0);
		CHECK(ag >= 0 && x->steps[x->step[ag]].number == 2); /* still step 2's, for matching */
	}
	trace_set_release(&s);
}

/* The limits: start + duration past 2^62 ns, an int64 that would wrap, a
 * launch after its op's start; the kinds the rows give judge a zero-length
 * collective, where the durations resolve a microsecond. */
static void test_limits_launches_and_kinds(void)
{
	static const char t[] =
		"# aorta.optable/1\n"
		"rank,op,kind,start_ns,dur_ns,launch_ns\n"
		"0,a,gemm,0,1000,-10\n"
		"0,b,gemm,4611686018427387000,1000,\n"
		"0,c,gemm,9223372036854775807,1,\n"
		"0,d,gemm,2000,1000,5000\n"           /* launched 3 us after it starts */
		"0,nccl_like,gemm,4000,0,\n"         /* a zero-length gemm named like NCCL: kept */
		"0,e,all_reduce,5000,0,\n";          /* a zero-length all-reduce: dropped */
	struct trace_set s;
	struct aorta_error e;
	CHECK_EQ_I(rd(t, &s, &e), AORTA_OK);
	if (s.n == 1) {
		const struct trace *x = s.t[0];
		CHECK_EQ_I(x->n, 3);
		CHECK_EQ_I(x->skipped, 4);
		CHECK(strstr(x->skipped_first, "line 4: duration '1000' is beyond the limits") != NULL);
		long d = find(x, "d", 0), a = find(x, "a", 0);
		CHECK(d >= 0 && x->launch_ns[d] == INT64_MIN);
		CHECK(a >= 0 && x->launch_ns[a] == -10);
		CHECK(find(x, "nccl_like", 0) >= 0);
		CHECK(find(x, "e", 0) < 0);
	}
	trace_set_release(&s);
	/* in ms, a 0 is a short op rounded: kept */
	static const char ms[] = "# aorta.optable/1\nrank,op,kind,start_ms,dur_ms\n0,e,all_reduce,1,0\n0,f,gemm,2,1\n";
	CHECK_EQ_I(rd(ms, &s, &e), AORTA_OK);
	if (s.n == 1) {
		CHECK_EQ_I(s.t[0]->n, 2);
		CHECK_EQ_I(s.t[0]->skipped, 0);
	}
	trace_set_release(&s);
}

int main(void)
{
	TEST(test_csv_columns_units_kinds_steps_groups_peers);
	TEST(test_jsonl_gives_the_same_traces);
	TEST(test_figures_and_join_by_hand);
	TEST(test_time_units_are_exact);
	TEST(test_hostile_rows_are_skipped_with_their_line);
	TEST(test_bad_headers_and_versions_are_errors);
	TEST(test_sniff_finds_both_forms);
	TEST(test_seq_and_group_columns);
	TEST(test_repeated_seq_refused);
	TEST(test_prefetch_row_keeps_the_step_windows);
	TEST(test_limits_launches_and_kinds);
	return test_report();
}
