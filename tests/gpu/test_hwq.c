/*
 * test_hwq.c - every hwq workload built into the plug-in, on a real GPU:
 * at its minimum and recommended stream counts, a few iterations in each
 * sync mode, and in graph mode where its row allows; each run must pass
 * its check against the CPU reference, have non-zero iteration times and
 * kernel counts, and (per_iteration and graph runs) a timing-pass trace,
 * read with the project's Kineto reader, with kernels on every stream.
 * tiny_kernel_stress's trace must hold exactly kernels/iteration x timing
 * iterations kernels.  comms_compute_overlap runs its three modes (and
 * sync mode none) on every visible GPU.  Distributed workloads (the
 * table's flag) run on every visible GPU (one rank each, as `aorta hwq
 * run` does by default), and the result must say so (world = the device
 * count); fsdp_tp and grad_accum, whose collectives are NCCL at world > 1
 * and local mocks at world 1, also run once with --world 1 when more than
 * one GPU is visible, and their check message must name the world it ran.
 *
 * The runs of a workload share a child process (fork; at most two per
 * workload: the runs with NCCL ranks as threads apart from the traced
 * one-GPU runs), as `aorta hwq sweep` runs several in one process: the
 * CUDA context, module load and cuBLAS set-up are paid once per child, not
 * once per run (AORTA_HWQ_TEST_FORK=run restores a child per run); the
 * parent never initialises CUDA.  One more test does three traced runs in
 * one process with different stream counts, since CUPTI's stream ids
 * drift once streams are re-created; the marker kernels must still map
 * every stream.
 *
 * AORTA_HWQ_TEST_ONLY=a,b,c limits the workloads.  Without a device
 * every test is skipped and the program exits 0.  Last line:
 * "N passed, N failed, N skipped".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu/gpu.h"
#include "hwq/hwq_gpu.h"
#include "hwq/hwq_host.h"
#include "testing.h"

static int ndev;
static char tmpdir[] = "/tmp/aorta-gpu-test-hwq-XXXXXX";

static int wanted(const char *name)
{
	const char *only = getenv("AORTA_HWQ_TEST_ONLY");
	if (!only || !*only)
		return 1;
	size_t n = strlen(name);
	for (const char *p = only; (p = strstr(p, name)); p += n)
		if ((p == only || p[-1] == ',') && (p[n] == 0 || p[n] == ','))
			return 1;
	return 0;
}

/* one run; 0 ok, else failures were recorded */
static void one_run(const struct hwq_workload_info *w, int streams, enum hwq_sync sync, int graph, const char *mode,
		    int world)
{
	struct hwq_result r;
	memset(&r, 0, sizeof(r));
	r.w = w;
	struct hwq_run_config *c = &r.cfg;
	c->workload = w->name;
	c->streams = streams;
	c->iters = 3;
	c->warmup = 1;
	c->device = 0;
	c->sync = sync;
	c->graph = graph;
	int traced = sync == HWQ_SYNC_PER_ITERATION;
	c->timing_iters = traced ? 2 : 0;
	c->trace_dir = tmpdir;
	c->mode = mode;
	c->seed = 99;
	c->quiet = 1;
	c->world = world;
	struct aorta_error e = { 0 };
	enum aorta_status st = hwq_run_gpu(c, &r.raw, &e);
	char what[200];
	snprintf(what, sizeof(what), "%s s=%d %s%s%s%s%s", w->name, streams, hwq_sync_name(sync), graph ? " graph" : "",
		 mode ? " " : "", mode ? mode : "", world == 1 && w->distributed ? " world 1" : "");
	if (st) {
		fprintf(stderr, "  FAIL %s: %s: run: %s\n", t_cur, what, e.msg);
		t_cur_failed = 1;
		hwq_raw_release(&r.raw);
		return;
	}
	hwq_result_derive(&r);
	int bad = 0;
	if (!r.raw.check_ok) {
		fprintf(stderr, "  FAIL %s: %s: check: %s\n", t_cur, what, r.raw.check_msg);
		bad = 1;
	}
	int want_world = w->distributed && world != 1 ? ndev : 1;
	if (r.raw.world != want_world) {
		fprintf(stderr, "  FAIL %s: %s: ran on world %d, expected %d\n", t_cur, what, r.raw.world, want_world);
		bad = 1;
	}
	if (!strcmp(w->name, "fsdp_tp") || !strcmp(w->name, "grad_accum")) {
		/* the check says which collectives ran: NCCL at world > 1 */
		char tag[64];
		snprintf(tag, sizeof(tag), "world %d: %s", r.raw.world, r.raw.world > 1 ? "NCCL" : "mock");
		if (!strstr(r.raw.check_msg, tag)) {
			fprintf(stderr, "  FAIL %s: %s: check message lacks '%s': %s\n", t_cur, what, tag,
				r.raw.check_msg);
			bad = 1;
		}
	}
	for (int i = 0; i < r.raw.iters; i++)
		if (!(r.raw.iter_ms[i] > 0)) {
			fprintf(stderr, "  FAIL %s: %s: iteration %d took %g ms\n", t_cur, what, i, r.raw.iter_ms[i]);
			bad = 1;
		}
	if (r.raw.kernels_per_iter <= 0 || !(r.throughput > 0) || !(r.raw.work_per_iter > 0)) {
		fprintf(stderr, "  FAIL %s: %s: kernels/iteration %lld, throughput %g\n", t_cur, what,
			r.raw.kernels_per_iter, r.throughput);
		bad = 1;
	}
	if (traced && !r.raw.trace_path[0] && r.raw.world > 1 && strstr(r.raw.trace_note, "mpirun")) {
		/* ranks as threads: no CUPTI by design (the note says why) */
		printf("  (%s)\n", r.raw.trace_note);
	} else if (traced) {
		if (!r.raw.trace_path[0]) {
			fprintf(stderr, "  FAIL %s: %s: no timing-pass trace (%s)\n", t_cur, what, r.raw.trace_note);
			bad = 1;
		} else if (hwq_trace_metrics(&r, r.raw.trace_path, &e)) {
			fprintf(stderr, "  FAIL %s: %s: trace unreadable: %s\n", t_cur, what, e.msg);
			bad = 1;
		} else {
			if (r.trace_by_appearance)
				printf("  (graph replay: kernels on the graph's own streams)\n");
			/* comms_compute_overlap's compute_only / comms_only leave
			 * the other role's streams idle by design */
			int every = !(mode && strcmp(mode, "comms_compute"));
			for (int i = 0; i < streams && every && !r.trace_by_appearance; i++)
				if (r.kernels_per_stream[i] <= 0) {
					fprintf(stderr, "  FAIL %s: %s: no kernel, copy or fill on stream %d in the trace\n", t_cur, what, i);
					bad = 1;
				}
			long long want = r.raw.kernels_per_iter * r.raw.timing_iters;
			if (!strcmp(w->name, "tiny_kernel_stress") ? r.trace_kernels != want : r.trace_kernels < want / 2) {
				fprintf(stderr, "  FAIL %s: %s: %lld kernels in the trace, expected %s%lld\n", t_cur, what,
					r.trace_kernels, strcmp(w->name, "tiny_kernel_stress") ? ">= " : "", want);
				bad = 1;
			}
		}
	}
	printf("  %-44s %9.3f %-9s p50 %8.3f ms  %6lld k/it  %7lld traced  sw %.4f ms  %s\n", what, r.throughput,
	       w->unit, r.lat.p50, r.raw.kernels_per_iter, r.trace_kernels, r.sw.overhead_ms, bad ? "BAD" : "ok");
	if (bad)
		t_cur_failed = 1;
	hwq_result_release(&r);
}

/* fn(arg) in a child process; its failures become the current test's */
static void in_child(void (*fn)(void *), void *arg)
{
	fflush(stdout);
	fflush(stderr);
	pid_t p = fork();
	if (p == 0) {
		t_cur_failed = 0;
		fn(arg);
		fflush(stdout);
		fflush(stderr);
		_exit(t_cur_failed ? 1 : 0);
	}
	int ws = 0;
	if (p < 0 || waitpid(p, &ws, 0) < 0) {
		fprintf(stderr, "  FAIL %s: cannot fork\n", t_cur);
		t_cur_failed = 1;
		return;
	}
	if (WIFSIGNALED(ws)) {
		fprintf(stderr, "  FAIL %s: child killed by signal %d\n", t_cur, WTERMSIG(ws));
		t_cur_failed = 1;
	} else if (WEXITSTATUS(ws) != 0) {
		t_cur_failed = 1;
	}
}

/* The runs of one workload, queued by run_workload and run in as few
 * child processes as is safe: every run that opens NCCL with ranks as
 * threads (a distributed workload on more than one GPU) in one child, the
 * rest (one-GPU runs, traced with CUPTI) in another, since CUPTI, once
 * opened in a process, can deadlock with NCCL kernels of ranks as threads
 * (harness_gpu.c).  A child per run (AORTA_HWQ_TEST_FORK=run) costs a CUDA
 * context, cuBLAS handle and module load per run: most of the suite's time
 * on 2 GPUs. */
#define MAX_RUNS 32
struct one_args {
	const struct hwq_workload_info *w;
	int streams, graph;
	enum hwq_sync sync;
	const char *mode;
	int world; /* 0: every visible GPU (distributed workloads) */
};
static struct one_args queue[MAX_RUNS];
static int nqueue;

/* ranks as threads with NCCL: a distributed run on every visible GPU */
static int nccl_threads(const struct one_args *a)
{
	return a->w->distributed && a->world != 1 && ndev > 1;
}

struct batch_args {
	int threads; /* run the queued runs with nccl_threads() == threads; -1: the one run `only` */
	int only;
};

static void batch_child(void *p)
{
	const struct batch_args *b = p;
	for (int i = 0; i < nqueue; i++) {
		const struct one_args *a = &queue[i];
		if (b->threads < 0 ? i != b->only : nccl_threads(a) != b->threads)
			continue;
		one_run(a->w, a->streams, a->sync, a->graph, a->mode, a->world);
	}
}

static void one_world(const struct hwq_workload_info *w, int streams, enum hwq_sync sync, int graph, const char *mode,
		      int world)
{
	if (nqueue == MAX_RUNS) {
		fprintf(stderr, "  FAIL %s: more than %d runs queued\n", t_cur, MAX_RUNS);
		t_cur_failed = 1;
		return;
	}
	queue[nqueue++] = (struct one_args){ w, streams, graph, sync, mode, world };
}

static void one(const struct hwq_workload_info *w, int streams, enum hwq_sync sync, int graph, const char *mode)
{
	one_world(w, streams, sync, graph, mode, 0);
}

/* the queued runs: a child per group (or per run, AORTA_HWQ_TEST_FORK=run) */
static void run_queue(void)
{
	const char *f = getenv("AORTA_HWQ_TEST_FORK");
	if (f && !strcmp(f, "run")) {
		for (int i = 0; i < nqueue; i++) {
			struct batch_args b = { -1, i };
			in_child(batch_child, &b);
		}
	} else {
		int has[2] = { 0, 0 };
		for (int i = 0; i < nqueue; i++)
			has[nccl_threads(&queue[i])] = 1;
		for (int t = 0; t < 2; t++)
			if (has[t]) {
				struct batch_args b = { t, -1 };
				in_child(batch_child, &b);
			}
	}
	nqueue = 0;
}

static void run_workload(const struct hwq_workload_info *w)
{
	nqueue = 0;
	int counts[2] = { w->min_streams, w->rec_streams };
	for (int k = 0; k < 2; k++) {
		if (k == 1 && counts[1] == counts[0])
			break;
		int s = counts[k];
		if (!strcmp(w->name, "comms_compute_overlap")) {
			/* each run creates NCCL communicators (seconds): the
			 * three modes once, the other sync modes once */
			if (k == 0) {
				one(w, s, HWQ_SYNC_PER_ITERATION, 0, "compute_only");
				/* at world 1 NCCL's all-reduce launches no kernel (a local
				 * copy at most): comms_only has nothing to time or trace */
				if (ndev > 1)
					one(w, s, HWQ_SYNC_PER_ITERATION, 0, "comms_only");
				else
					printf("  comms_only left out: one GPU, NCCL's world-1 all-reduce launches no kernel\n");
			} else {
				one(w, s, HWQ_SYNC_PER_ITERATION, 0, "comms_compute");
				one(w, s, HWQ_SYNC_NONE, 0, "comms_compute");
			}
			continue;
		}
		for (int sync = 0; sync < 3; sync++)
			one(w, s, (enum hwq_sync)sync, 0, NULL);
		if (w->graph_ok)
			one(w, s, HWQ_SYNC_PER_ITERATION, 1, NULL);
		/* the world-1 (mock collective) path too, traced */
		if (w->distributed && ndev > 1)
			one_world(w, s, HWQ_SYNC_PER_ITERATION, 0, NULL, 1);
	}
	run_queue();
}

static const struct hwq_workload_info *cur;

static void test_workload(void)
{
	if (ndev == 0)
		SKIP("no GPU visible to this process");
	if (!hwq_ops_find(cur->name))
		SKIP("not built into this plug-in");
	if (!wanted(cur->name))
		SKIP("left out by AORTA_HWQ_TEST_ONLY");
	run_workload(cur);
}

static void bad_device_child(void *p)
{
	(void)p;
	struct hwq_device d;
	struct aorta_error e = { 0 };
	CHECK_EQ_I(hwq_info_gpu(ndev + 3, &d, &e), AORTA_EUSAGE);
	CHECK(strstr(e.msg, "does not exist") != NULL);
	CHECK_EQ_I(hwq_info_gpu(0, &d, &e), AORTA_OK);
	CHECK(d.sm_count > 0 && d.total_mem_bytes > 0 && d.device_count == ndev);
}

static void test_bad_device_is_rejected(void)
{
	if (ndev == 0)
		SKIP("no GPU visible to this process");
	in_child(bad_device_child, NULL);
}

static void two_runs_child(void *p)
{
	const struct hwq_workload_info *w = hwq_workload_find("tiny_kernel_stress");
	(void)p;
	one_run(w, 4, HWQ_SYNC_PER_ITERATION, 0, NULL, 0);
	one_run(w, 16, HWQ_SYNC_PER_ITERATION, 0, NULL, 0);
	one_run(w, 8, HWQ_SYNC_PER_ITERATION, 0, NULL, 0);
}

static void test_traced_runs_in_one_process_map_every_stream(void)
{
	if (ndev == 0)
		SKIP("no GPU visible to this process");
	if (!hwq_ops_find("tiny_kernel_stress") || !wanted("tiny_kernel_stress"))
		SKIP("tiny_kernel_stress not built or left out");
	in_child(two_runs_child, NULL);
}

static void count_child(void *p)
{
	(void)p;
	struct aorta_error e = { 0 };
	int n = 0;
	if (gpu_device_count(&n, &e))
		n = 0;
	fflush(stdout);
	_exit(n > 200 ? 200 : n);
}

int main(void)
{
	/* the device count from a child: the parent never initialises CUDA,
	 * so every run can be a fresh child process */
	fflush(stdout);
	pid_t p = fork();
	if (p == 0)
		count_child(NULL);
	int ws = 0;
	ndev = (p > 0 && waitpid(p, &ws, 0) > 0 && WIFEXITED(ws)) ? WEXITSTATUS(ws) : 0;
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	TEST(test_bad_device_is_rejected);
	TEST(test_traced_runs_in_one_process_map_every_stream);
	for (int i = 0; i < hwq_nworkloads; i++) {
		cur = &hwq_workloads[i];
		t_cur = cur->name;
		t_cur_failed = t_cur_skipped = 0;
		printf("%s\n", cur->name);
		test_workload();
		if (t_cur_failed)
			t_failed++;
		else if (t_cur_skipped)
			t_skipped++;
		else
			t_passed++;
	}
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd)) {
	}
	return test_report();
}
