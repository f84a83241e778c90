/*
 * test_engine.c - the interval algebra and the overlap engine on hand-made
 * spans whose answers are worked out by hand in the comments.
 */
#include "testing.h"

#include "overlap/analysis.h"
#include "overlap/engine.h"
#include "overlap/ivset.h"
#include "timeline/rules.h"

static const char *GEMM = "nvjet_sm90_tst_256x128";
static const char *AR = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
static const char *OTHER = "vectorized_elementwise_kernel";

static void add(struct trace *t, const char *name, int64_t s, int64_t e, int stream)
{
	trace_add_device(t, s, e, name, strlen(name), R_KERNEL, stream, -1, 0);
}

static void build(struct ivset *v, const int64_t *s, const int64_t *e, size_t n)
{
	ivset_init(v);
	ivset_build(v, s, e, NULL, n);
}

static void test_ivset_union_merges_nested_overlapping_and_touching(void)
{
	/* [0,10) contains [2,5); [8,12) overlaps it; [12,15) touches -> one [0,15);
	 * [20,20) is empty; [30,31) stands alone */
	int64_t s[] = { 0, 2, 8, 12, 20, 30 }, e[] = { 10, 5, 12, 15, 20, 31 };
	struct ivset v;
	build(&v, s, e, 6);
	CHECK_EQ_I(v.n, 2);
	CHECK_EQ_I(v.s[0], 0);
	CHECK_EQ_I(v.e[0], 15);
	CHECK_EQ_I(ivset_len(&v), 16);
	CHECK_EQ_I(ivset_len_in(&v, 5, 31), 11);  /* [5,15) + [30,31) */
	CHECK_EQ_I(ivset_len_in(&v, 15, 30), 0);  /* the gap */
	CHECK_EQ_I(ivset_len_in(&v, -100, 100), 16);
	CHECK_EQ_I(ivset_len_in(&v, 7, 7), 0);
	ivset_release(&v);
}

/* ivset_len_in_from: the same lengths as ivset_len_in whatever order the
 * windows come in (ascending, touching, backwards, far ahead), the cursor
 * only a hint: 40 intervals [10i, 10i+4), windows checked by hand and
 * against ivset_len_in */
static void test_ivset_len_in_from_any_order(void)
{
	int64_t s[40], e[40];
	for (int i = 0; i < 40; i++)
		s[i] = 10 * i, e[i] = 10 * i + 4;
	struct ivset v;
	build(&v, s, e, 40);
	size_t at = 0;
	CHECK_EQ_I(ivset_len_in_from(&v, &at, 2, 12), 4);    /* [2,4) + [10,12) */
	CHECK_EQ_I(ivset_len_in_from(&v, &at, 12, 33), 9);   /* [12,14) + [20,24) + [30,33) */
	CHECK_EQ_I(ivset_len_in_from(&v, &at, 0, 5), 4);     /* backwards: searched whole */
	CHECK_EQ_I(ivset_len_in_from(&v, &at, 300, 395), 40); /* far ahead: [300..394) 10 intervals */
	CHECK_EQ_I(ivset_len_in_from(&v, &at, 395, 1000), 0);
	CHECK_EQ_I(ivset_len_in_from(&v, &at, -5, 1000), 160);
	int64_t lo = -7;
	for (int k = 0; k < 200; k++) { /* a walk with steps forward and back */
		int64_t a = lo, b = lo + (k % 7) * 3;
		CHECK_EQ_I(ivset_len_in_from(&v, &at, a, b), ivset_len_in(&v, a, b));
		lo += k % 5 == 4 ? -11 : 3;
	}
	ivset_release(&v);
}

static void test_ivset_unsorted_input_and_zero_length_only(void)
{
	int64_t s[] = { 50, 10, 5, 5 }, e[] = { 60, 20, 5, 5 };
	struct ivset v;
	build(&v, s, e, 4);
	CHECK_EQ_I(v.n, 2);
	CHECK_EQ_I(ivset_len(&v), 20);
	ivset_release(&v);
	int64_t z[] = { 7 };
	build(&v, z, z, 1);
	CHECK_EQ_I(v.n, 0);
	CHECK_EQ_I(ivset_len(&v), 0);
	CHECK_EQ_I(ivset_len_in(&v, 0, 100), 0);
	ivset_release(&v);
}

static void test_ivset_intersection_and_difference(void)
{
	int64_t as[] = { 0, 20 }, ae[] = { 10, 30 };  /* A = [0,10) [20,30) */
	int64_t bs[] = { 5, 25 }, be[] = { 22, 26 };  /* B = [5,22) [25,26) */
	struct ivset a, b, x, d, u;
	build(&a, as, ae, 2);
	build(&b, bs, be, 2);
	ivset_init(&x);
	ivset_init(&d);
	ivset_init(&u);
	ivset_inter(&x, &a, &b); /* [5,10) [20,22) [25,26) = 5+2+1 */
	CHECK_EQ_I(ivset_len(&x), 8);
	CHECK_EQ_I(x.n, 3);
	ivset_diff(&d, &a, &b);  /* [0,5) [22,25) [26,30) = 5+3+4 */
	CHECK_EQ_I(ivset_len(&d), 12);
	CHECK_EQ_I(d.n, 3);
	ivset_union(&u, &a, &b); /* [0,30) */
	CHECK_EQ_I(ivset_len(&u), 30);
	CHECK_EQ_I(u.n, 1);
	/* |A| = |A∩B| + |A\B| always */
	CHECK_EQ_I(ivset_len(&a), ivset_len(&x) + ivset_len(&d));
	ivset_release(&a);
	ivset_release(&b);
	ivset_release(&x);
	ivset_release(&d);
	ivset_release(&u);
}

static void test_ivset_matches_brute_force_on_random_spans(void)
{
	/* a bitmap over [0, 2000) is the independent oracle */
	unsigned seed = 12345;
	for (int round = 0; round < 50; round++) {
		int64_t s[64], e[64];
		unsigned char bits[2000] = { 0 };
		size_t n = 1 + (size_t)(round % 60);
		for (size_t i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			s[i] = (seed >> 8) % 1900;
			seed = seed * 1103515245u + 12345u;
			e[i] = s[i] + (seed >> 8) % 100;
			for (int64_t k = s[i]; k < e[i]; k++)
				bits[k] = 1;
		}
		struct ivset v;
		build(&v, s, e, n);
		int64_t want = 0, want_in = 0;
		for (int k = 0; k < 2000; k++) {
			want += bits[k];
			if (k >= 300 && k < 1200)
				want_in += bits[k];
		}
		CHECK_EQ_I(ivset_len(&v), want);
		CHECK_EQ_I(ivset_len_in(&v, 300, 1200), want_in);
		ivset_release(&v);
	}
}

/* compute [0,100) on stream 7 with a nested GEMM [10,30) and an overlapping
 * kernel [90,120); all-reduce [100,200) and [150,160) (nested, same stream
 * 19); a zero-length kernel at 300; memcpy [250,260).
 *   compute K = [0,120) = 120; comm C = [100,200) = 100
 *   overlap C∩K = [100,120) = 20; exposed = 80; busy = [0,200)+[250,260) = 210
 *   window = [0,260) = 260 -> idle 50; exposed memcpy = 10 */
static struct trace *fixture(void)
{
	struct trace *t = trace_new("fixture", "test");
	add(t, OTHER, 0, 100, 7);
	add(t, GEMM, 10, 30, 7);
	add(t, OTHER, 90, 120, 8);
	add(t, AR, 100, 200, 19);
	add(t, AR, 150, 160, 19);
	add(t, OTHER, 300, 300, 7);
	trace_add_device(t, 250, 260, "Memcpy HtoD (Pinned -> Device)", 30, R_MEMCPY, 7, -1, 4096);
	trace_finish(t, NULL);
	return t;
}

static void test_engine_figures_on_hand_made_spans(void)
{
	struct trace *t = fixture();
	uint8_t *cls = classes_aorta(t);
	struct ov_sets o;
	struct ov_figures f;
	ov_sets_build(&o, t, cls, NULL, 0);
	ov_figures_in(&o, o.first_ns, o.last_ns, &f);
	CHECK_EQ_I(f.window_ns, 300); /* first start 0, last end 300 (zero-length span at 300) */
	CHECK_EQ_I(f.compute_ns, 120);
	CHECK_EQ_I(f.gemm_ns, 20);
	CHECK_EQ_I(f.comm_ns, 100);
	CHECK_EQ_I(f.overlap_ns, 20);
	CHECK_EQ_I(f.exposed_comm_ns, 80);
	CHECK_EQ_I(f.memcpy_ns, 10);
	CHECK_EQ_I(f.exposed_memcpy_ns, 10);
	CHECK_EQ_I(f.busy_ns, 210);
	CHECK_EQ_I(f.idle_ns, 90);
	CHECK_EQ_I(f.coll_ns[COLL_ALL_REDUCE], 100);
	CHECK_EQ_I(f.coll_exposed_ns[COLL_ALL_REDUCE], 80);
	/* a window crossing the spans: [110,155) -> compute [110,120)=10, comm 45 */
	ov_figures_in(&o, 110, 155, &f);
	CHECK_EQ_I(f.window_ns, 45);
	CHECK_EQ_I(f.compute_ns, 10);
	CHECK_EQ_I(f.comm_ns, 45);
	CHECK_EQ_I(f.overlap_ns, 10);
	CHECK_EQ_I(f.exposed_comm_ns, 35);
	CHECK_EQ_I(f.idle_ns, 0);
	/* per stream: 7 -> [0,100)+[250,260) = 110; 19 -> 100 (nested counted once) */
	CHECK_EQ_I(o.nstreams, 3);
	for (size_t k = 0; k < o.nstreams; k++) {
		if (o.stream_id[k] == 7)
			CHECK_EQ_I(ivset_len(&o.stream[k]), 110);
		if (o.stream_id[k] == 19)
			CHECK_EQ_I(ivset_len(&o.stream[k]), 100);
	}
	ov_sets_release(&o);
	free(cls);
	trace_free(t);
}

static void test_engine_empty_trace_and_empty_window(void)
{
	struct trace *t = trace_new("empty", "test");
	trace_finish(t, NULL);
	uint8_t *cls = classes_aorta(t);
	struct ov_sets o;
	struct ov_figures f;
	ov_sets_build(&o, t, cls, NULL, 0);
	ov_figures_in(&o, o.first_ns, o.last_ns, &f);
	CHECK_EQ_I(f.window_ns, 0);
	CHECK_EQ_I(f.busy_ns, 0);
	CHECK_EQ_I(f.idle_ns, 0);
	ov_figures_in(&o, 50, 10, &f); /* reversed window is empty, not negative */
	CHECK_EQ_I(f.window_ns, 0);
	ov_sets_release(&o);
	free(cls);
	trace_free(t);
}

/* Two steps by correlation: step 1's host range [0,1000) launches work at
 * GPU [100,300) and a comm [250,600) that crosses into step 2's GPU window;
 * step 2 launches [500,700); step 3 launches nothing (an empty step).
 * Windows: step 1 [100,500), step 2 [500,700).  Per step the figures are
 * clipped: step 1 comm [250,500)=250, overlap [250,300)=50; step 2 comm
 * [500,600)=100, overlap 100.  Sum of windows = 600 = whole span. */
static void test_steps_by_correlation_cross_boundaries_and_empty_step(void)
{
	struct trace *t = trace_new("steps", "test");
	trace_add_step(t, 1, 0, 1000);
	trace_add_step(t, 2, 1000, 2000);
	trace_add_step(t, 3, 2000, 3000);
	trace_add_launch(t, 11, 10, 20);
	trace_add_launch(t, 12, 30, 40);
	trace_add_launch(t, 13, 1100, 1110);
	trace_add_device(t, 100, 300, GEMM, strlen(GEMM), R_KERNEL, 7, 11, 0);
	trace_add_device(t, 250, 600, AR, strlen(AR), R_KERNEL, 19, 12, 0);
	trace_add_device(t, 500, 700, GEMM, strlen(GEMM), R_KERNEL, 7, 13, 0);
	trace_finish(t, NULL);
	struct trace_set s = { 0 };
	trace_set_add(&s, t);
	struct analysis a;
	struct analysis_opts o = ANALYSIS_OPTS_INIT;
	o.threads = 1;
	analysis_from_set(&s, &o, &a);
	CHECK_EQ_I(a.n, 1);
	struct rank_result *r = &a.r[0];
	CHECK_EQ_I(r->nsteps, 2); /* step 3 launched nothing: no GPU window */
	CHECK_EQ_I(r->steps[0].number, 1);
	CHECK_EQ_I(r->steps[0].start_ns, 100);
	CHECK_EQ_I(r->steps[0].end_ns, 500);
	CHECK_EQ_I(step_fig(r, 0, offsetof(struct ov_figures, comm_ns)), 250);
	CHECK_EQ_I(step_fig(r, 0, offsetof(struct ov_figures, overlap_ns)), 50);
	CHECK_EQ_I(r->steps[1].start_ns, 500);
	CHECK_EQ_I(r->steps[1].end_ns, 700);
	CHECK_EQ_I(step_fig(r, 1, offsetof(struct ov_figures, comm_ns)), 100);
	CHECK_EQ_I(step_fig(r, 1, offsetof(struct ov_figures, overlap_ns)), 100);
	CHECK_EQ_I(step_fig(r, 0, offsetof(struct ov_figures, window_ns)) + step_fig(r, 1, offsetof(struct ov_figures, window_ns)), r->total.window_ns);
	CHECK_EQ_I(step_fig(r, 0, offsetof(struct ov_figures, exposed_comm_ns)) +
			   step_fig(r, 1, offsetof(struct ov_figures, exposed_comm_ns)),
		   r->total.exposed_comm_ns);
	/* per collective, kept beside the steps for the one type there is:
	 * step 1 all-reduce [250,500) = 250, exposed [300,500) = 200 (the GEMM
	 * covers [250,300)); step 2 [500,600) = 100, exposed 0 */
	CHECK_EQ_I(step_coll_ns(r, 0, COLL_ALL_REDUCE, 0), 250);
	CHECK_EQ_I(step_coll_ns(r, 0, COLL_ALL_REDUCE, 1), 200);
	CHECK_EQ_I(step_coll_ns(r, 1, COLL_ALL_REDUCE, 0), 100);
	CHECK_EQ_I(step_coll_ns(r, 1, COLL_ALL_REDUCE, 1), 0);
	CHECK_EQ_I(step_coll_ns(r, 0, COLL_ALL_GATHER, 0), 0);
	CHECK_EQ_I(step_fig(r, 0, offsetof(struct ov_figures, coll_ns) + COLL_ALL_REDUCE * sizeof(int64_t)), 250);
	CHECK_EQ_I(step_fig(r, 0, offsetof(struct ov_figures, coll_exposed_ns) + COLL_ALL_REDUCE * sizeof(int64_t)),
		   200);
	analysis_free(&a);
}

/* Host wait: the kernel after a gap was launched after the gap began. */
static void test_host_wait_counts_gaps_the_host_caused(void)
{
	struct trace *t = trace_new("hw", "test");
	trace_add_launch(t, 1, 0, 5);
	trace_add_launch(t, 2, 5, 8);    /* launched before the gap: kernel_wait, not host */
	trace_add_launch(t, 3, 400, 410); /* launched during the gap [200,500): host wait */
	trace_add_device(t, 10, 100, GEMM, strlen(GEMM), R_KERNEL, 7, 1, 0);
	trace_add_device(t, 150, 200, GEMM, strlen(GEMM), R_KERNEL, 7, 2, 0);
	trace_add_device(t, 500, 600, GEMM, strlen(GEMM), R_KERNEL, 7, 3, 0);
	trace_finish(t, NULL);
	uint8_t *cls = classes_aorta(t);
	struct ov_sets o;
	struct ov_figures f;
	ov_sets_build(&o, t, cls, NULL, 0);
	ov_figures_in(&o, o.first_ns, o.last_ns, &f);
	CHECK_EQ_I(f.idle_ns, 50 + 300);
	CHECK_EQ_I(f.host_wait_ns, 300);
	ov_sets_release(&o);
	free(cls);
	trace_free(t);
}

/* Two ranks of one all-reduce: rank 1 arrives 40 ns late.  Rank 0 waits 40
 * of its 100 ns; rank 1 waits 0 and is the late rank. */
static void test_cross_rank_wait_and_late_rank(void)
{
	struct trace_set s = { 0 };
	for (int rk = 0; rk < 2; rk++) {
		struct trace *t = trace_new(rk ? "r1" : "r0", "test");
		t->rank = rk;
		t->world_size = 2;
		for (int c = 0; c < 3; c++) {
			int64_t st = 1000 * c + (rk ? 40 : 0);
			size_t i = trace_add_device(t, st, 1000 * c + 100, AR, strlen(AR), R_KERNEL, 19, -1, 0);
			struct coll_meta m = { 0 };
			m.pg_name = strtab_intern(&t->names, "0", 1);
			m.in_nelems = m.out_nelems = 256;
			m.dtype_bytes = 4;
			m.group_size = 2;
			m.seq = -1;
			trace_set_coll(t, i, &m);
		}
		trace_finish(t, NULL);
		trace_set_add(&s, t);
	}
	struct analysis a;
	struct analysis_opts o = ANALYSIS_OPTS_INIT;
	o.threads = 1;
	analysis_from_set(&s, &o, &a);
	CHECK_EQ_I(a.matched_groups, 3);
	CHECK_EQ_I(a.late_rank, 1);
	CHECK_EQ_I(a.r[0].wait_ns, 3 * 40);
	CHECK_EQ_I(a.r[0].transfer_ns, 3 * 60);
	CHECK_EQ_I(a.r[1].wait_ns, 0);
	CHECK_EQ_I(a.r[1].times_last, 3);
	CHECK_EQ_I(a.r[0].colls[0].bytes, 1024);
	CHECK_EQ_I(a.skew_max_ns, 40);
	analysis_free(&a);
}


/* Per-stream sets built in one sort match a brute-force union per stream,
 * with many streams (negative ids too) and spans of every stream interleaved. */
static void test_stream_sets_match_brute_force_with_many_streams(void)
{
	struct trace *t = trace_new("many_streams", "test");
	uint64_t x = 88172645463325252ull;
	const int NS = 700;
	for (int i = 0; i < 5000; i++) {
		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		int64_t s0 = (int64_t)(x % 1000000);
		int64_t len = (int64_t)((x >> 20) % 5000);
		int st = (int)((x >> 40) % NS) - 50;
		add(t, (x >> 33) % 3 ? GEMM : AR, s0, s0 + len, st);
	}
	trace_finish(t, NULL);
	uint8_t *cls = classes_aorta(t);
	struct ov_sets o;
	ov_sets_build(&o, t, cls, NULL, 0);
	size_t total = 0;
	for (size_t k = 0; k < o.nstreams; k++) {
		if (k)
			CHECK(o.stream_id[k - 1] < o.stream_id[k]);
		uint32_t *idx = xmalloc(t->n * sizeof(*idx));
		size_t m = 0;
		for (size_t i = 0; i < t->n; i++)
			if (t->stream[i] == o.stream_id[k])
				idx[m++] = (uint32_t)i;
		struct ivset v;
		ivset_init(&v);
		ivset_build(&v, t->start_ns, t->end_ns, idx, m);
		CHECK_EQ_I(ivset_len(&o.stream[k]), ivset_len(&v));
		CHECK_EQ_I(o.stream_spans[k], m);
		total += o.stream_spans[k];
		ivset_release(&v);
		free(idx);
	}
	CHECK_EQ_I(total, t->n);
	CHECK(o.nstreams > 600);
	ov_sets_release(&o);
	free(cls);
	trace_free(t);
}

int main(void)
{
	TEST(test_ivset_union_merges_nested_overlapping_and_touching);
	TEST(test_ivset_len_in_from_any_order);
	TEST(test_ivset_unsorted_input_and_zero_length_only);
	TEST(test_ivset_intersection_and_difference);
	TEST(test_ivset_matches_brute_force_on_random_spans);
	TEST(test_engine_figures_on_hand_made_spans);
	TEST(test_stream_sets_match_brute_force_with_many_streams);
	TEST(test_engine_empty_trace_and_empty_window);
	TEST(test_steps_by_correlation_cross_boundaries_and_empty_step);
	TEST(test_host_wait_counts_gaps_the_host_caused);
	TEST(test_cross_rank_wait_and_late_rank);
	return test_report();
}
