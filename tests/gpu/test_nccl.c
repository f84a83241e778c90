/*
 * test_nccl.c - the NCCL backend of comm.h and the thread-per-GPU
 * launcher on real GPUs: every visible GPU is one rank, driven by a thread.
 *
 * What it proves:
 *   - all_gather, reduce_scatter (sum), all_reduce (sum, in place and out
 *     of place, small and 4 M floats), broadcast and barrier give the exact
 *     numbers on the world, node and cross groups, both with the node =
 *     world layout of one machine and with one-GPU "nodes" (node size 1:
 *     the cross group spans the GPUs), several requests in flight;
 *   - wait_stream orders a second stream after a collective: a kernel on
 *     that stream reads the result while the collective's stream is held
 *     back 50 ms by a spinning kernel (and, as a control, the same read
 *     without the wait sees the old values);
 *   - a collective that one rank never joins fails within the timeout
 *     (1.5 s) with the rank, the collective and the phase in the message,
 *     and comm_nccl_abort returns promptly (no hang);
 *   - launch_ranks runs every rank and returns rank 0's result, and an
 *     error on rank 1 ends rank 0's blocking collective at once and comes
 *     back as rank 1's error.
 * Data are integer-valued floats (exact in fp32 sums), different on every
 * rank and element.  With one GPU the tests run at world 1; the hang and
 * error-propagation tests need two and are skipped.  Without a GPU all are
 * skipped.  Last line: "N passed, N failed, N skipped".
 */
#include "comm/nccl_comm.h"
#include "gpu/gpu.h"
#include "readback.h"
#include "spin.h"
#include "testing.h"
#include "train/launch.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#define MAXR 16

static int ndev;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- a per-rank thread harness -------------------------------------------
 * Rank functions report failures through rfail (thread-safe counter plus a
 * line on stderr); the main thread turns the total into CHECKs. */

struct job;
typedef void (*rank_fn)(struct job *j, struct comm *c, int rank);

struct job {
	int world, node_size;
	long long timeout_ms;
	rank_fn fn;
	ncclUniqueId id;
	pthread_barrier_t bar;
	int nfail;
	pthread_mutex_t mu;
	struct aorta_error create_err[MAXR];
	int create_st[MAXR];
	/* the hang test's findings */
	char hang_msg[1024];
	double hang_wait_s, abort_s;
	int hang_st;
};

struct rctx {
	struct job *j;
	int rank;
};

static void rfail(struct job *j, int rank, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void rfail(struct job *j, int rank, const char *fmt, ...)
{
	char buf[1200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&j->mu);
	j->nfail++;
	fprintf(stderr, "  FAIL %s: rank %d: %s\n", t_cur, rank, buf);
	pthread_mutex_unlock(&j->mu);
}

#define R_OK(call) do { struct aorta_error e_ = { 0 }; enum aorta_status s_ = (call); \
	if (s_ != AORTA_OK) { rfail(j, rank, "%s:%d: %s: %s", __FILE__, __LINE__, #call, e_.msg); goto out; } } while (0)
#define R_CUDA(call) do { gpuError_t q_ = (call); if (q_ != gpuSuccess) { \
	rfail(j, rank, "%s:%d: %s: %s", __FILE__, __LINE__, #call, gpuGetErrorString(q_)); goto out; } } while (0)
#define E (&e_)

static void *rank_main(void *p)
{
	struct rctx *x = p;
	struct job *j = x->j;
	struct comm_nccl_opts o;
	struct comm *c = NULL;

	comm_nccl_opts_from_env(&o);
	o.timeout_ms = j->timeout_ms;
	j->create_st[x->rank] = comm_nccl_create_rank(x->rank, j->world, j->node_size, &j->id, x->rank, &o, &c,
						      &j->create_err[x->rank]);
	if (j->create_st[x->rank] == AORTA_OK) {
		j->fn(j, c, x->rank);
		comm_destroy(c);
	}
	return NULL;
}

/* Runs fn on every GPU; returns the number of rank failures (creation
 * failures included). */
static int run_job(struct job *j, int world, int node_size, long long timeout_ms, rank_fn fn)
{
	pthread_t th[MAXR];
	struct rctx x[MAXR];
	struct aorta_error e = { 0 };

	j->world = world;
	j->node_size = node_size;
	j->timeout_ms = timeout_ms;
	j->fn = fn;
	pthread_mutex_init(&j->mu, NULL);
	pthread_barrier_init(&j->bar, NULL, (unsigned)world);
	if (comm_nccl_unique_id(&j->id, &e)) {
		fprintf(stderr, "  FAIL %s: %s\n", t_cur, e.msg);
		return 1;
	}
	for (int r = 0; r < world; r++) {
		x[r] = (struct rctx){ j, r };
		pthread_create(&th[r], NULL, rank_main, &x[r]);
	}
	for (int r = 0; r < world; r++)
		pthread_join(th[r], NULL);
	for (int r = 0; r < world; r++) {
		if (j->create_st[r]) {
			fprintf(stderr, "  FAIL %s: rank %d: comm_nccl_create_rank: %s\n", t_cur, r, j->create_err[r].msg);
			j->nfail++;
		}
	}
	pthread_barrier_destroy(&j->bar);
	pthread_mutex_destroy(&j->mu);
	return j->nfail;
}

static float *dev_alloc(size_t n)
{
	float *p = NULL;
	return gpuMalloc((void **)&p, n * sizeof(float) + 1) == gpuSuccess ? p : NULL;
}

/* ---- collectives on every group ------------------------------------------ */

/* Checks got[0..n) against want(i); reports the first mismatch. */
#define EXPECT_ALL(got, n, want_expr, what) do { for (size_t i = 0; i < (n); i++) { \
	double w_ = (double)(want_expr); if ((double)(got)[i] != w_) { \
		rfail(j, rank, "%s: element %zu is %g, expected %g", what, i, (double)(got)[i], w_); break; } } } while (0)

static void check_group(struct job *j, struct comm *c, int rank, enum comm_pg pg, size_t count)
{
	struct comm_group *g = comm_group(c, pg);
	int gr = g->rank, gs = g->size;
	size_t big = (size_t)gs * count;
	float *h = malloc(big * sizeof(float)), *h2 = malloc(big * sizeof(float));
	float *d_send = dev_alloc(big), *d_recv = dev_alloc(big), *d_ar = dev_alloc(count), *d_ar2 = dev_alloc(count),
	      *d_bc = dev_alloc(count);
	struct comm_req rq[5];
	char what[96];
	memset(rq, 0, sizeof(rq));
	if (!h || !h2 || !d_send || !d_recv || !d_ar || !d_ar2 || !d_bc) {
		rfail(j, rank, "out of memory for %zu floats", big);
		goto out;
	}
	/* all_gather source: this group rank's part, 1000*gr + i mod 997 */
	for (size_t i = 0; i < count; i++)
		h[i] = (float)(1000 * gr + (int)(i % 997));
	R_CUDA(gpuMemcpy(d_send, h, count * sizeof(float), gpuMemcpyHostToDevice));
	/* reduce_scatter source: element k on rank gr is (gr+1) * (k%991 + 1) */
	for (size_t k = 0; k < big; k++)
		h2[k] = (float)((gr + 1) * (int)(k % 991 + 1));
	R_CUDA(gpuMemcpy(d_recv, h2, big * sizeof(float), gpuMemcpyHostToDevice));
	/* all_reduce: (gr+1) + i%13 in place; broadcast: root's i%1009 */
	for (size_t i = 0; i < count; i++)
		h[i] = (float)(gr + 1 + (int)(i % 13));
	R_CUDA(gpuMemcpy(d_ar, h, count * sizeof(float), gpuMemcpyHostToDevice));
	int root = gs - 1;
	for (size_t i = 0; i < count; i++)
		h[i] = gr == root ? (float)(i % 1009) : -7.0f;
	R_CUDA(gpuMemcpy(d_bc, h, count * sizeof(float), gpuMemcpyHostToDevice));
	/* a pageable cudaMemcpy may return before its DMA lands, and the
	 * collectives run on non-blocking streams: settle the copies */
	R_CUDA(gpuDeviceSynchronize());

	/* all in flight together: reduce_scatter reads d_recv into d_ar2,
	 * then all_gather overwrites d_recv, so wait for the first */
	snprintf(what, sizeof(what), "%s count %zu", comm_pg_name(pg), count);
	R_OK(comm_reduce_scatter(g, d_recv, d_ar2, count, &rq[0], what, E));
	R_OK(comm_all_reduce(g, d_ar, d_ar, count, &rq[1], what, E));
	R_OK(comm_broadcast(g, d_bc, count, root, &rq[2], what, E));
	R_OK(comm_wait(&rq[0], E));
	R_OK(comm_all_gather(g, d_send, d_recv, count, &rq[3], what, E));
	for (int k = 1; k < 4; k++)
		R_OK(comm_wait(&rq[k], E));
	R_OK(comm_barrier(g, what, E));

	int S = gs * (gs + 1) / 2;
	R_CUDA(gpuMemcpy(h, d_recv, big * sizeof(float), gpuMemcpyDeviceToHost));
	snprintf(what, sizeof(what), "all_gather on %s (%zu)", comm_pg_name(pg), count);
	EXPECT_ALL(h, big, 1000 * (int)(i / count) + (int)(i % count % 997), what);
	R_CUDA(gpuMemcpy(h, d_ar2, count * sizeof(float), gpuMemcpyDeviceToHost));
	snprintf(what, sizeof(what), "reduce_scatter on %s (%zu)", comm_pg_name(pg), count);
	EXPECT_ALL(h, count, S * (int)(((size_t)gr * count + i) % 991 + 1), what);
	R_CUDA(gpuMemcpy(h, d_ar, count * sizeof(float), gpuMemcpyDeviceToHost));
	snprintf(what, sizeof(what), "all_reduce on %s (%zu)", comm_pg_name(pg), count);
	EXPECT_ALL(h, count, S + gs * (int)(i % 13), what);
	R_CUDA(gpuMemcpy(h, d_bc, count * sizeof(float), gpuMemcpyDeviceToHost));
	snprintf(what, sizeof(what), "broadcast on %s (%zu)", comm_pg_name(pg), count);
	EXPECT_ALL(h, count, i % 1009, what);
out:
	for (int k = 0; k < 5; k++)
		if (rq[k].active)
			(void)comm_wait(&rq[k], NULL);
	free(h);
	free(h2);
	(void)gpuFree(d_send);
	(void)gpuFree(d_recv);
	(void)gpuFree(d_ar);
	(void)gpuFree(d_ar2);
	(void)gpuFree(d_bc);
}

static void rank_collectives(struct job *j, struct comm *c, int rank)
{
	gpuStream_t s_ag = NULL, s_ar = NULL;
	int lo, hi;
	R_CUDA(gpuDeviceGetStreamPriorityRange(&lo, &hi));
	R_CUDA(gpuStreamCreateWithPriority(&s_ag, gpuStreamNonBlocking, lo));
	R_CUDA(gpuStreamCreateWithPriority(&s_ar, gpuStreamNonBlocking, hi));
	/* all_gather and all_reduce on the caller's streams; reduce_scatter,
	 * broadcast and barrier on the backend's own */
	comm_set_stream(c, COMM_ALL_GATHER, s_ag);
	comm_set_stream(c, COMM_ALL_REDUCE, s_ar);
	if (c->rank != rank || c->size != j->world)
		rfail(j, rank, "comm says rank %d of %d", c->rank, c->size);
	for (int pg = 0; pg < COMM_PG_COUNT; pg++) {
		check_group(j, c, rank, (enum comm_pg)pg, 1000);
		check_group(j, c, rank, (enum comm_pg)pg, 4u << 20);
	}
	R_CUDA(gpuStreamSynchronize(s_ag));
out:
	comm_set_stream(c, COMM_ALL_GATHER, NULL);
	comm_set_stream(c, COMM_ALL_REDUCE, NULL);
	if (s_ag)
		(void)gpuStreamDestroy(s_ag);
	if (s_ar)
		(void)gpuStreamDestroy(s_ar);
}

static void test_collectives_on_every_group(void)
{
	if (ndev == 0)
		SKIP("no GPU visible to this process");
	int world = ndev > MAXR ? MAXR : ndev;
	struct job j;
	memset(&j, 0, sizeof(j));
	CHECK_EQ_I(run_job(&j, world, world, 60000, rank_collectives), 0);
	if (world >= 2) {
		/* one GPU per "node": node groups of 1, cross spans the GPUs */
		memset(&j, 0, sizeof(j));
		CHECK_EQ_I(run_job(&j, world, 1, 60000, rank_collectives), 0);
	}
}

/* ---- wait_stream ---------------------------------------------------------- */

static void rank_wait_stream(struct job *j, struct comm *c, int rank)
{
	const size_t n = 1 << 16;
	gpuStream_t sa = NULL, sb = NULL;
	float *d_in = dev_alloc(n), *d_out = dev_alloc(n), *d_read = dev_alloc(n);
	float *h = malloc(n * sizeof(float));
	struct comm_req rq;
	memset(&rq, 0, sizeof(rq));
	if (!d_in || !d_out || !d_read || !h) {
		rfail(j, rank, "out of memory");
		goto out;
	}
	R_CUDA(gpuStreamCreateWithPriority(&sa, gpuStreamNonBlocking, 0));
	R_CUDA(gpuStreamCreateWithPriority(&sb, gpuStreamNonBlocking, 0));
	comm_set_stream(c, COMM_ALL_REDUCE, sa);
	for (size_t i = 0; i < n; i++)
		h[i] = (float)(rank + 1 + (int)(i % 31));
	R_CUDA(gpuMemcpy(d_in, h, n * sizeof(float), gpuMemcpyHostToDevice));
	for (int pass = 0; pass < 2; pass++) {
		int with_wait = pass == 1;
		for (size_t i = 0; i < n; i++)
			h[i] = -1.0f;
		R_CUDA(gpuMemcpy(d_out, h, n * sizeof(float), gpuMemcpyHostToDevice));
		R_CUDA(gpuMemcpy(d_read, h, n * sizeof(float), gpuMemcpyHostToDevice));
		R_CUDA(gpuDeviceSynchronize());
		/* every rank holds its collective's stream back 50 ms */
		R_CUDA(test_spin(sa, 50LL * 1000 * 1000));
		R_OK(comm_all_reduce(comm_group(c, COMM_PG_WORLD), d_in, d_out, n, &rq, "wait_stream test", E));
		if (with_wait)
			R_OK(comm_wait_stream(&rq, sb, E));
		R_CUDA(test_read_copy(sb, d_out, d_read, n));
		R_CUDA(gpuStreamSynchronize(sb));
		R_CUDA(gpuMemcpy(h, d_read, n * sizeof(float), gpuMemcpyDeviceToHost));
		int W = j->world, S = W * (W + 1) / 2;
		if (with_wait) {
			EXPECT_ALL(h, n, S + W * (int)(i % 31), "read after wait_stream");
		} else if (h[0] != -1.0f) {
			/* seen on 2 H200s with NCCL 2.28.3: the non-blocking communicator's
			 * enqueue returned only after the spin, so the unordered read ran
			 * after the collective too; the contrast is then inconclusive, but
			 * the read after wait_stream above is still checked */
			fprintf(stderr, "  note: rank %d: control read already saw %g (enqueue returned after the "
					"spin; ordering shown only by the checked read)\n", rank, (double)h[0]);
		}
		R_OK(comm_wait(&rq, E));
	}
out:
	if (rq.active)
		(void)comm_wait(&rq, NULL);
	comm_set_stream(c, COMM_ALL_REDUCE, NULL);
	if (sa)
		(void)gpuStreamDestroy(sa);
	if (sb)
		(void)gpuStreamDestroy(sb);
	(void)gpuFree(d_in);
	(void)gpuFree(d_out);
	(void)gpuFree(d_read);
	free(h);
}

static void test_wait_stream_orders_a_second_stream(void)
{
	if (ndev == 0)
		SKIP("no GPU visible to this process");
	struct job j;
	memset(&j, 0, sizeof(j));
	CHECK_EQ_I(run_job(&j, ndev > MAXR ? MAXR : ndev, ndev > MAXR ? MAXR : ndev, 60000, rank_wait_stream), 0);
}

/* ---- symmetric windows (NCCL_CTA_POLICY=zero) ------------------------------ */

struct sym_job_extra {
	int want_sym;                 /* 1: the policy is zero, sym_alloc must give memory */
	int got_sym[MAXR];
};
static struct sym_job_extra sym_x;

static void rank_sym(struct job *j, struct comm *c, int rank)
{
	struct comm_group *g = comm_group(c, COMM_PG_WORLD);
	const size_t count = (1u << 20) + 3;   /* 4 MiB + a ragged tail per rank */
	float *send = NULL, *recv = NULL, *h = NULL;
	void *ws = NULL, *wr = NULL;
	R_OK(comm_sym_alloc(g, count * sizeof(float), (void **)&send, &ws, E));
	R_OK(comm_sym_alloc(g, (size_t)g->size * count * sizeof(float), (void **)&recv, &wr, E));
	sym_x.got_sym[rank] = send != NULL && recv != NULL;
	if (sym_x.want_sym != sym_x.got_sym[rank]) {
		rfail(j, rank, "comm_sym_alloc gave %s memory with NCCL_CTA_POLICY %s", send ? "symmetric" : "no",
		      sym_x.want_sym ? "zero" : "unset");
		goto out;
	}
	if (!send) {  /* policy unset: the caller's own memory, as dist_gpu does */
		send = dev_alloc(count);
		recv = dev_alloc((size_t)g->size * count);
	}
	h = malloc((size_t)g->size * count * sizeof(float));
	if (!h || !send || !recv) {
		rfail(j, rank, "out of memory");
		goto out;
	}
	for (int round = 0; round < 3; round++) {
		for (size_t i = 0; i < count; i++)
			h[i] = (float)(round * 100000 + 1000 * g->rank + (int)(i % 991));
		R_CUDA(gpuMemcpy(send, h, count * sizeof(float), gpuMemcpyHostToDevice));
		R_CUDA(gpuMemset(recv, 0xff, (size_t)g->size * count * sizeof(float)));
		R_CUDA(gpuDeviceSynchronize());
		R_OK(comm_all_gather(g, send, recv, count, NULL, "symmetric all-gather", E));
		R_CUDA(gpuDeviceSynchronize());
		R_CUDA(gpuMemcpy(h, recv, (size_t)g->size * count * sizeof(float), gpuMemcpyDeviceToHost));
		EXPECT_ALL(h, (size_t)g->size * count,
			   round * 100000 + 1000 * (int)(i / count) + (int)(i % count % 991), "symmetric all-gather");
	}
out:
	if (ws || wr) {
		comm_sym_free(g, recv, wr);
		comm_sym_free(g, send, ws);
	} else {
		(void)gpuFree(send);
		(void)gpuFree(recv);
	}
	free(h);
}

/* NCCL_CTA_POLICY=zero: comm_sym_alloc gives registered windows and an
 * all-gather between them (NCCL's copy-engine path) is exact; unset, it
 * gives nothing and the same all-gather in plain memory is exact too.  A
 * bad policy is a usage error naming the variable. */
static void test_symmetric_windows_zero_cta(void)
{
	if (ndev < 2)
		SKIP("needs 2 GPUs");
	int world = ndev > MAXR ? MAXR : ndev;
	for (int pass = 0; pass < 2; pass++) {
		struct job j;
		memset(&j, 0, sizeof(j));
		memset(&sym_x, 0, sizeof(sym_x));
		sym_x.want_sym = pass == 0;
		if (pass == 0)
			setenv("NCCL_CTA_POLICY", "zero", 1);
		else
			unsetenv("NCCL_CTA_POLICY");
		comm_nccl_env_defaults();  /* rewrites the name as NCCL's number */
		if (pass == 0)
			CHECK_STR(getenv("NCCL_CTA_POLICY"), "2");
		CHECK_EQ_I(run_job(&j, world, world, 60000, rank_sym), 0);
		for (int r = 0; r < world; r++)
			CHECK_EQ_I(sym_x.got_sym[r], sym_x.want_sym);
	}
	struct comm_nccl_opts o;
	comm_nccl_opts_from_env(&o);
	setenv("NCCL_CTA_POLICY", "bogus", 1);
	comm_nccl_opts_from_env(&o);
	CHECK_EQ_I(o.cta_policy, -2);
	ncclUniqueId id;
	struct comm *c = NULL;
	struct aorta_error e = { 0 };
	CHECK_EQ_I(comm_nccl_unique_id(&id, &e), AORTA_OK);
	CHECK_EQ_I(comm_nccl_create_rank(0, 1, 1, &id, 0, &o, &c, &e), AORTA_EUSAGE);
	CHECK(c == NULL);
	CHECK(strstr(e.msg, "NCCL_CTA_POLICY=bogus: expected default, efficiency or zero") != NULL);
	unsetenv("NCCL_CTA_POLICY");
}

/* ---- a collective one rank never joins ------------------------------------ */

static void rank_hang(struct job *j, struct comm *c, int rank)
{
	const size_t n = 1 << 14;
	float *d = dev_alloc(n);
	struct comm_req rq;
	memset(&rq, 0, sizeof(rq));
	if (!d) {
		rfail(j, rank, "out of memory");
		goto out;
	}
	R_CUDA(gpuMemsetAsync(d, 0, n * sizeof(float), NULL));
	R_CUDA(gpuDeviceSynchronize());
	/* together once, so connections are up */
	R_OK(comm_all_reduce(comm_group(c, COMM_PG_WORLD), d, d, n, NULL, "warm-up", E));
	pthread_barrier_wait(&j->bar);
	if (rank == 0) {
		struct aorta_error e = { 0 };
		double t0 = now_s();
		enum aorta_status st = comm_all_reduce(comm_group(c, COMM_PG_WORLD), d, d, n, &rq, "step 7 backward", &e);
		if (st == AORTA_OK)
			st = comm_wait(&rq, &e);
		j->hang_wait_s = now_s() - t0;
		j->hang_st = (int)st;
		snprintf(j->hang_msg, sizeof(j->hang_msg), "%s", e.msg);
		t0 = now_s();
		comm_nccl_abort(c);
		j->abort_s = now_s() - t0;
		rq.active = 0; /* its event went with the abort; comm_destroy frees it */
	}
	pthread_barrier_wait(&j->bar); /* rank 1 never started its all_reduce */
	if (rank != 0)
		comm_nccl_abort(c);
out:
	(void)gpuFree(d);
}

static void test_hung_collective_times_out_and_aborts(void)
{
	if (ndev < 2)
		SKIP("needs 2 GPUs");
	struct job j;
	memset(&j, 0, sizeof(j));
	double t0 = now_s();
	CHECK_EQ_I(run_job(&j, 2, 2, 1500, rank_hang), 0);
	fprintf(stderr, "  note: hung all_reduce failed after %.2f s: %s; abort took %.3f s; whole test %.2f s\n",
		j.hang_wait_s, j.hang_msg, j.abort_s, now_s() - t0);
	CHECK_EQ_I(j.hang_st, AORTA_EGPU);
	CHECK(strstr(j.hang_msg, "rank 0") != NULL);
	CHECK(strstr(j.hang_msg, "timeout") != NULL);
	CHECK(strstr(j.hang_msg, "all_reduce") != NULL);
	CHECK(strstr(j.hang_msg, "step 7 backward") != NULL);
	CHECK(j.hang_wait_s >= 1.4 && j.hang_wait_s < 4.0);
	CHECK(j.abort_s < 10.0);
}

/* ---- launch_ranks ----------------------------------------------------------- */

struct lres {
	float sum;
	int rank, size;
};

static enum aorta_status launch_sum(void *arg, struct comm *c, const struct launch_rank *lr, void *result,
				    struct aorta_error *e)
{
	(void)arg;
	float *d = NULL, v = (float)(lr->rank + 1);
	struct lres *out = result;
	enum aorta_status st = GPU_CALL(e, gpuMalloc((void **)&d, sizeof(float)));
	if (!st)
		st = GPU_CALL(e, gpuMemcpy(d, &v, sizeof(v), gpuMemcpyHostToDevice));
	if (!st)
		st = GPU_CALL(e, gpuDeviceSynchronize());
	if (!st)
		st = comm_all_reduce(comm_group(c, COMM_PG_WORLD), d, d, 1, NULL, "launcher sum", e);
	if (!st)
		st = GPU_CALL(e, gpuMemcpy(&v, d, sizeof(v), gpuMemcpyDeviceToHost));
	out->sum = v;
	out->rank = lr->rank;
	out->size = lr->size;
	if (d)
		(void)gpuFree(d);
	return st;
}

static void test_launcher_runs_every_gpu(void)
{
	if (ndev == 0)
		SKIP("no GPU visible to this process");
	struct lres r = { 0 };
	struct aorta_error e = { 0 };
	enum aorta_status st = launch_ranks(-1, 60000, launch_sum, NULL, &r, sizeof(r), &e);
	if (st)
		fprintf(stderr, "  launch_ranks: %s\n", e.msg);
	CHECK_EQ_I(st, AORTA_OK);
	CHECK_EQ_I(r.rank, 0);
	CHECK_EQ_I(r.size, ndev);
	CHECK_NEAR(r.sum, ndev * (ndev + 1) / 2, 0);
}

struct fail_arg {
	char rank0_msg[1024];
	double rank0_s;
	atomic_int rank0_in_collective; /* rank 1 fails only once rank 0 is in its all_reduce */
};

static enum aorta_status launch_fail(void *arg, struct comm *c, const struct launch_rank *lr, void *result,
				     struct aorta_error *e)
{
	struct fail_arg *a = arg;
	(void)result;
	if (lr->rank == 1) {
		/* communicators are created without blocking: failing at once can
		 * end rank 0 while its own creation is still polling ("creation
		 * abandoned"), before the collective this test is about */
		double t0 = now_s();
		while (!atomic_load(&a->rank0_in_collective) && now_s() - t0 < 20.0) {
			struct timespec ts = { 0, 1000000 };
			nanosleep(&ts, NULL);
		}
		struct timespec ts = { 0, 50000000 }; /* let rank 0 enter the wait */
		nanosleep(&ts, NULL);
		return aorta_fail(e, AORTA_ECHECK, NULL, 0, -1, "planted failure");
	}
	if (lr->rank != 0)
		return AORTA_OK; /* a third GPU's rank: its collective would hang, skip it */
	float *d = NULL;
	enum aorta_status st = GPU_CALL(e, gpuMalloc((void **)&d, 64 * sizeof(float)));
	if (st) {
		snprintf(a->rank0_msg, sizeof(a->rank0_msg), "gpuMalloc failed before the all_reduce: %.900s", e->msg);
		return st;
	}
	double t0 = now_s();
	atomic_store(&a->rank0_in_collective, 1);
	/* rank 1 never comes: this must end when rank 1 fails, not at the timeout */
	st = comm_all_reduce(comm_group(c, COMM_PG_WORLD), d, d, 64, NULL, "waiting for rank 1", e);
	a->rank0_s = now_s() - t0;
	snprintf(a->rank0_msg, sizeof(a->rank0_msg), "%s", e->msg);
	(void)gpuFree(d);
	return st;
}

static void test_launcher_error_on_one_rank_ends_the_job(void)
{
	if (ndev < 2)
		SKIP("needs 2 GPUs");
	struct fail_arg a;
	memset(&a, 0, sizeof(a));
	atomic_init(&a.rank0_in_collective, 0);
	struct lres r;
	struct aorta_error e = { 0 };
	double t0 = now_s();
	enum aorta_status st = launch_ranks(-1, 120000, launch_fail, &a, &r, sizeof(r), &e);
	double dt = now_s() - t0;
	fprintf(stderr, "  note: job error after %.2f s: '%s'; rank 0 saw after %.2f s: '%s'\n", dt, e.msg, a.rank0_s,
		a.rank0_msg);
	CHECK_EQ_I(st, AORTA_ECHECK);
	CHECK_STR(e.msg, "rank 1: planted failure");
	CHECK(strstr(a.rank0_msg, "rank 1 failed") != NULL);
	CHECK(strstr(a.rank0_msg, "all_reduce") != NULL);
	CHECK(dt < 30.0); /* well under the 120 s timeout */
}

int main(void)
{
	comm_nccl_env_defaults();
	struct aorta_error e = { 0 };
	if (gpu_device_count(&ndev, &e) != AORTA_OK) {
		fprintf(stderr, "test_nccl: %s\n", e.msg);
		ndev = 0;
	}
	if (launch_env_world_size() > 1) {
		fprintf(stderr, "test_nccl: started under a launcher; run it as one plain process\n");
		ndev = 0;
	}
	fprintf(stderr, "test_nccl: %d GPU%s visible\n", ndev, ndev == 1 ? "" : "s");
	TEST(test_collectives_on_every_group);
	TEST(test_wait_stream_orders_a_second_stream);
	TEST(test_symmetric_windows_zero_cta);
	TEST(test_hung_collective_times_out_and_aborts);
	TEST(test_launcher_runs_every_gpu);
	TEST(test_launcher_error_on_one_rank_ends_the_job);
	return test_report();
}
