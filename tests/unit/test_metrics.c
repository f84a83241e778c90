/*
 * test_metrics.c - the training JSONL: upstream fields, overlap from the
 * interval engine (nested ranges counted once, idle tail kept), and a
 * round trip through aorta's own JSONL reader.
 */
#include "testing.h"

#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "ingest/ingest.h"
#include "train/metrics.h"

#define MS 1000000LL

/* compute: forward [1,10) ms and a nested range [2,4) (counted once), backward [10,20)
 * allreduce: [15,25)   aux: prefetch [0,1)   total 30 ms
 * per_stream: compute 19, allreduce 10, aux 1; compute∩allreduce = [15,20) = 5
 * union = [0,25) = 25 -> idle 5 (the tail after 25 ms counts) */
static const struct prof_range ranges[] = {
	{ "aux", "epoch0_step3_prefetch", 0, 1 * MS, NULL },
	{ "compute", "epoch0_step3_forward", 1 * MS, 10 * MS, NULL },
	{ "compute", "epoch0_step3_nested", 2 * MS, 4 * MS, "{\"k\":1}" },
	{ "compute", "epoch0_step3_backward", 10 * MS, 20 * MS, NULL },
	{ "allreduce", "epoch0_step3_allreduce", 15 * MS, 25 * MS, "{\"function\":\"all_reduce\"}" },
};
static const struct prof_marker markers[] = { { "compute", "epoch0_step3_end", 25 * MS, NULL } };

static struct step_record record(void)
{
	struct step_record r = { 0 };
	r.rank = 1;
	r.world_size = 2;
	r.step = 3;
	r.global_step = 3;
	r.loss = 0.5;
	r.grad_norm = 1.25;
	r.lr = 1e-4;
	r.total_ns = 30 * MS;
	r.ranges = ranges;
	r.nranges = sizeof(ranges) / sizeof(ranges[0]);
	r.markers = markers;
	r.nmarkers = 1;
	return r;
}

static double num_at(yajl_val v, const char **path)
{
	yajl_val x = yajl_tree_get(v, path, yajl_t_number);
	return x ? YAJL_GET_DOUBLE(x) : -12345;
}

static void test_overlap_counts_nested_ranges_once_and_keeps_the_idle_tail(void)
{
	struct step_record r = record();
	struct step_overlap o;
	metrics_overlap(&r, &o);
	CHECK_EQ_I(o.compute_ns, 19 * MS);
	CHECK_EQ_I(o.compute_allreduce_ns, 5 * MS);
	CHECK_EQ_I(o.compute_comm_ns, 5 * MS);
	CHECK_EQ_I(o.compute_reducescatter_ns, 0);
	CHECK_EQ_I(o.union_ns, 25 * MS);
	CHECK_EQ_I(o.idle_ns, 5 * MS);
}

static void test_line_has_the_upstream_fields(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct step_record r = record();
	struct telemetry_sample t = { 1, 1980, 3201, 512.5, 61, 97, 40 };
	r.telemetry = &t;
	CHECK_EQ_I(metrics_write(f, &r), 0);
	fclose(f);
	CHECK(len > 0 && buf[len - 1] == '\n');
	CHECK(memchr(buf, '\n', len) == buf + len - 1); /* exactly one line */
	char err[256];
	yajl_val v = yajl_tree_parse(buf, err, sizeof(err));
	CHECK(v != NULL);
	if (!v) {
		free(buf);
		return;
	}
	const char *p_rank[] = { "rank", NULL }, *p_total[] = { "profile", "total_ms", NULL },
		   *p_ps[] = { "profile", "overlap", "per_stream_ms", "compute", NULL },
		   *p_ar[] = { "profile", "overlap", "overlap_ms", "compute_allreduce", NULL },
		   *p_idle[] = { "profile", "overlap", "overlap_ms", "idle", NULL },
		   *p_util[] = { "profile", "overlap", "utilization", "compute", NULL },
		   *p_pw[] = { "telemetry", "power_w", NULL }, *p_gs[] = { "global_step", NULL };
	CHECK_NEAR(num_at(v, p_rank), 1, 0);
	CHECK_NEAR(num_at(v, p_gs), 3, 0);
	CHECK_NEAR(num_at(v, p_total), 30.0, 1e-9);
	CHECK_NEAR(num_at(v, p_ps), 19.0, 1e-9);
	CHECK_NEAR(num_at(v, p_ar), 5.0, 1e-9);
	CHECK_NEAR(num_at(v, p_idle), 5.0, 1e-9);
	CHECK_NEAR(num_at(v, p_util), 19.0 / 30.0, 1e-6);
	CHECK_NEAR(num_at(v, p_pw), 512.5, 1e-9);
	const char *p_seg[] = { "profile", "overlap", "active_segments", NULL };
	yajl_val seg = yajl_tree_get(v, p_seg, yajl_t_array);
	CHECK(seg != NULL);
	/* boundaries 0,1,2,4,10,15,20,25,30 -> 8 segments; [15,20) has compute and allreduce */
	if (seg) {
		CHECK_EQ_I(seg->u.array.len, 8);
		yajl_val s5 = seg->u.array.values[5];
		const char *p_act[] = { "active_streams", NULL };
		yajl_val act = yajl_tree_get(s5, p_act, yajl_t_array);
		CHECK(act && act->u.array.len == 2);
	}
	const char *p_md[] = { "profile", "ranges", NULL };
	yajl_val rg = yajl_tree_get(v, p_md, yajl_t_array);
	CHECK(rg && rg->u.array.len == 5);
	yajl_tree_free(v);
	free(buf);
}

static void test_round_trip_through_the_jsonl_reader(void)
{
	char path[] = "/tmp/aorta_metrics_XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");
	struct step_record r = record();
	for (int s = 0; s < 3; s++) {
		r.step = s;
		r.global_step = s;
		CHECK_EQ_I(metrics_write(f, &r), 0);
	}
	fclose(f);
	struct trace_set ts = { 0 };
	struct aorta_error e = { 0 };
	struct ingest_opts io = { .rules = NULL, .rank_hint = -1 };
	CHECK_EQ_I(ingest_sniff(path, &e), FMT_AORTA_JSONL);
	CHECK_EQ_I(ingest_file(path, &io, &ts, &e), AORTA_OK);
	CHECK_EQ_I(ts.n, 1);
	if (ts.n == 1) {
		CHECK_EQ_I(ts.t[0]->rank, 1);
		CHECK_EQ_I(ts.t[0]->n, 15);
		CHECK_EQ_I(ts.t[0]->nsteps, 3);
	}
	trace_set_release(&ts);
	unlink(path);
}

int main(void)
{
	TEST(test_overlap_counts_nested_ranges_once_and_keeps_the_idle_tail);
	TEST(test_line_has_the_upstream_fields);
	TEST(test_round_trip_through_the_jsonl_reader);
	return test_report();
}
