/*
 * nccl_comm.c - the NCCL backend of comm.h (see nccl_comm.h for the
 * design: non-blocking communicators, one per group, completion events
 * from a pool, abort from any thread).
 *
 * Polling.  Every wait on NCCL's state (creation, an enqueue that returns
 * ncclInProgress, finalization) goes through poll_ready: it takes the
 * comm's mutex for one ncclCommGetAsyncError, releases it, checks the
 * abort hook and the deadline, and sleeps 20 us (spinning with
 * sched_yield for the first 50 us, as comm.c does).  Holding the mutex
 * only per call lets comm_nccl_abort, from another thread, get in between.
 * A non-blocking ncclCommSplit runs as a job of the parent communicator:
 * the parent reads ncclInProgress until it ends, and only then does NCCL
 * write the child's handle (NULL before), so creation polls the parent
 * first and the child second.  The abort hook is checked before NCCL's
 * state, so a job whose peer failed reports that failure rather than the
 * connection error it causes.
 *
 * Cost: a collective is one NCCL call plus one cudaEventRecord; a test is
 * one ncclCommGetAsyncError plus one cudaEventQuery.  Three communicators
 * per rank cost three sets of NCCL buffers (a few tens of MB each at the
 * defaults).
 */
#include "comm/nccl_comm.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu/check.h"
#include "gpu/gpu.h"

struct nccl_impl {
	pthread_mutex_t mu;
	int aborted;
	int device;
	struct comm_nccl_opts opts;
	ncclComm_t nc[COMM_PG_COUNT];
	gpuStream_t own_stream;     /* for collectives whose kind has no stream set */
	float *scratch;             /* one device float for barriers */
	gpuEvent_t *events;         /* every event made (destroyed at the end) */
	size_t nevents, cap_events;
	gpuEvent_t *free_ev;        /* the pool */
	size_t nfree, cap_free;
};

static const struct comm_ops nccl_ops;

static struct nccl_impl *impl_of(const struct comm *c)
{
	return c->impl;
}

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void pause_poll(long long waited_ns)
{
	if (waited_ns < 50000) {
		sched_yield();
	} else {
		struct timespec ts = { 0, 20000 };
		nanosleep(&ts, NULL);
	}
}

/* rc, which the caller found to be a failure, as AORTA_EGPU with
 * "rank R: file:line: what: <NCCL's message>: <comm's last error>" */
#define nccl_fail(e, rank, what, rc, nc) \
	gpu_error_rank((e), GPU_NCCL_FAIL((e), (nc), (what), (rc)), (rank))

/* Prefixes e's message (already filled) with "rank R: ". */
static enum aorta_status with_rank(struct aorta_error *e, enum aorta_status st, int rank)
{
	if (e) {
		char msg[sizeof(e->msg)];
		snprintf(msg, sizeof(msg), "%s", e->msg);
		aorta_fail(e, st, NULL, 0, -1, "rank %d: %.1000s", rank, msg);
	}
	return st;
}

/* ---- settings ------------------------------------------------------------ */

static int env_int(const char *name, int dflt)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return dflt;
	char *end;
	long x = strtol(v, &end, 10);
	return *end == '\0' && x >= 0 && x <= 1 << 20 ? (int)x : dflt;
}

static const char *const cta_policy_names[] = { "default", "efficiency", "zero" };

/* -1 unset, NCCL_CTA_POLICY_* (0, 1, 2), -2 anything else */
static int cta_policy_parse(const char *v)
{
	if (!v || !*v)
		return -1;
	for (int i = 0; i < 3; i++)
		if (!strcmp(v, cta_policy_names[i]) || (v[0] == '0' + i && !v[1]))
			return i;
	return -2;
}

const char *comm_nccl_cta_policy_name(int policy)
{
	if (policy == -1)
		return "nccl";
	return policy >= 0 && policy < 3 ? cta_policy_names[policy] : "bad";
}

void comm_nccl_opts_from_env(struct comm_nccl_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->min_ctas = env_int("NCCL_MIN_CTAS", env_int("NCCL_MIN_NCHANNELS", 0));
	o->max_ctas = env_int("NCCL_MAX_CTAS", env_int("NCCL_MAX_NCHANNELS", 0));
	o->cga_cluster_size = env_int("NCCL_CGA_CLUSTER_SIZE", -1);
	o->cta_policy = cta_policy_parse(getenv("NCCL_CTA_POLICY"));
	int ms = env_int("AORTA_COMM_TIMEOUT_MS", 0);
	if (ms > 0)
		o->timeout_ms = ms;
	else if (env_int("HANG_TIMEOUT", 0) > 0)
		o->timeout_ms = 1000LL * env_int("HANG_TIMEOUT", 0);
}

void comm_nccl_env_defaults(void)
{
	setenv("NCCL_NVLS_ENABLE", "0", 0);
	int p = cta_policy_parse(getenv("NCCL_CTA_POLICY"));
	if (p >= 0) {
		char num[2] = { (char)('0' + p), 0 };
		setenv("NCCL_CTA_POLICY", num, 1);
	}
}

enum aorta_status comm_nccl_unique_id(ncclUniqueId *id, struct aorta_error *e)
{
	return GPU_NCCL(e, NULL, ncclGetUniqueId(id));
}

enum aorta_status comm_nccl_share_id(struct comm *c, ncclUniqueId *id, struct aorta_error *e)
{
	size_t nf = (sizeof(*id) + 3) / 4;
	float *d = NULL;
	enum aorta_status st = AORTA_OK;

	GPU_CHECK(e, gpuMalloc((void **)&d, nf * 4));
	if (c->rank == 0)
		GPU_CHECK_GOTO(e, st, gpuMemcpy(d, id, sizeof(*id), gpuMemcpyHostToDevice), out);
	AORTA_TRY_GOTO(st, comm_broadcast(comm_group(c, COMM_PG_WORLD), d, nf, 0, NULL, "nccl id", e), out);
	GPU_CHECK_GOTO(e, st, gpuMemcpy(id, d, sizeof(*id), gpuMemcpyDeviceToHost), out);
out:
	gpuFree(d);
	return st;
}

enum aorta_status comm_nccl_raw_open(ncclComm_t *nc, int size, const ncclUniqueId *id, int rank,
				     const struct comm_nccl_opts *o, struct aorta_error *e)
{
	enum aorta_status st;

	*nc = NULL;
	if (!o) {
		st = GPU_NCCL(e, NULL, ncclCommInitRank(nc, size, *id, rank));
	} else {
		ncclConfig_t cf = NCCL_CONFIG_INITIALIZER; /* blocking */
		if (o->min_ctas > 0)
			cf.minCTAs = o->min_ctas;
		if (o->max_ctas > 0)
			cf.maxCTAs = o->max_ctas;
		if (o->cga_cluster_size >= 0)
			cf.cgaClusterSize = o->cga_cluster_size;
		if (o->cta_policy >= 0)
			cf.CTAPolicy = o->cta_policy;
		st = GPU_NCCL(e, NULL, ncclCommInitRankConfig(nc, size, *id, rank, &cf));
	}
	if (st)
		*nc = NULL;
	return st;
}

void comm_nccl_raw_close(ncclComm_t nc, int abort)
{
	if (!nc)
		return;
	if (abort) {
		ncclCommAbort(nc);
		return;
	}
	ncclCommFinalize(nc);
	ncclCommDestroy(nc);
}

void comm_nccl_raw_finalize(ncclComm_t nc)
{
	if (nc)
		ncclCommFinalize(nc);
}

void comm_nccl_raw_destroy(ncclComm_t nc)
{
	if (nc)
		ncclCommDestroy(nc);
}

/* ---- polling ------------------------------------------------------------- */

/* Polls nc until its pending operation (creation, enqueue, finalize) is
 * done.  what names the operation for messages; c gives rank and timeout. */
static enum aorta_status poll_ready(struct comm *c, ncclComm_t nc, const char *what, struct aorta_error *e)
{
	struct nccl_impl *im = impl_of(c);
	long long t0 = now_ns(), deadline = t0 + c->timeout_ms * 1000000LL;
	for (;;) {
		ncclResult_t st = ncclSuccess, rc;
		/* first: a peer that failed explains any NCCL error that follows */
		if (im->opts.abort_check) {
			int who = im->opts.abort_check(im->opts.abort_arg);
			if (who >= 0)
				return aorta_fail(e, AORTA_EGPU, NULL, 0, -1, "rank %d: %s abandoned: rank %d failed",
						  c->rank, what, who);
		}
		pthread_mutex_lock(&im->mu);
		if (im->aborted) {
			pthread_mutex_unlock(&im->mu);
			return aorta_fail(e, AORTA_EGPU, NULL, 0, -1, "rank %d: %s: communicator aborted", c->rank, what);
		}
		rc = ncclCommGetAsyncError(nc, &st);
		pthread_mutex_unlock(&im->mu);
		if (rc != ncclSuccess)
			return nccl_fail(e, c->rank, what, rc, nc);
		if (st == ncclSuccess)
			return AORTA_OK;
		if (st != ncclInProgress)
			return nccl_fail(e, c->rank, what, st, nc);
		long long t = now_ns();
		if (t >= deadline)
			return aorta_fail(e, AORTA_EGPU, NULL, 0, -1, "rank %d: comm timeout after %lld ms in %s",
					  c->rank, c->timeout_ms, what);
		pause_poll(t - t0);
	}
}

/* ---- events ---------------------------------------------------------------- */

static enum aorta_status event_get(struct comm *c, gpuEvent_t *ev, struct aorta_error *e)
{
	struct nccl_impl *im = impl_of(c);
	if (im->nfree) {
		*ev = im->free_ev[--im->nfree];
		return AORTA_OK;
	}
	gpuEvent_t x;
	enum aorta_status st = GPU_CALL(e, gpuEventCreateWithFlags(&x, gpuEventDisableTiming));
	if (st)
		return with_rank(e, st, c->rank);
	GROW(im->events, im->cap_events, im->nevents + 1);
	im->events[im->nevents++] = x;
	*ev = x;
	return AORTA_OK;
}

static void event_put(struct comm *c, gpuEvent_t ev)
{
	struct nccl_impl *im = impl_of(c);
	GROW(im->free_ev, im->cap_free, im->nfree + 1);
	im->free_ev[im->nfree++] = ev;
}

/* ---- comm_ops ------------------------------------------------------------ */

static enum aorta_status nccl_start(struct comm_group *g, enum comm_coll coll, const void *send, void *recv,
				    size_t count, int root, struct comm_req *r, struct aorta_error *e)
{
	struct comm *c = g->comm;
	struct nccl_impl *im = impl_of(c);
	ncclComm_t nc = im->nc[g->id];
	gpuStream_t s = c->stream[coll] ? (gpuStream_t)c->stream[coll] : im->own_stream;
	char what[192];
	/* bf16: ncclBfloat16, summed by NCCL in fp32 and rounded once per
	 * reduction step (comm.h's "bf16 semantics") */
	ncclDataType_t dt = r->dtype == COMM_BF16 ? ncclBfloat16 : ncclFloat;
	snprintf(what, sizeof(what), "%s (group %s, %zu %s) at '%s'", comm_coll_name(coll), comm_pg_name(g->id),
		 count, r->dtype == COMM_BF16 ? "bf16 values" : "floats", r->phase);

	pthread_mutex_lock(&im->mu);
	if (im->aborted) {
		pthread_mutex_unlock(&im->mu);
		return aorta_fail(e, AORTA_EGPU, NULL, 0, -1, "rank %d: %s: communicator aborted", c->rank, what);
	}
	ncclResult_t rc = ncclSuccess;
	switch (coll) {
	case COMM_ALL_GATHER:
		rc = ncclAllGather(send, recv, count, ncclFloat, nc, s);
		break;
	case COMM_REDUCE_SCATTER:
		rc = ncclReduceScatter(send, recv, count, dt, ncclSum, nc, s);
		break;
	case COMM_ALL_REDUCE:
		rc = ncclAllReduce(send, recv, count, dt, ncclSum, nc, s);
		break;
	case COMM_BROADCAST:
		rc = ncclBroadcast(send, recv, count, ncclFloat, root, nc, s);
		break;
	case COMM_BARRIER:
		rc = ncclAllReduce(im->scratch, im->scratch, 1, ncclFloat, ncclSum, nc, s);
		break;
	}
	pthread_mutex_unlock(&im->mu);
	if (rc == ncclInProgress) {
		/* the enqueue goes on in NCCL's background (lazy connection
		 * setup, which needs the peers): wait for it before touching s */
		enum aorta_status st = poll_ready(c, nc, what, e);
		if (st)
			return st;
	} else if (rc != ncclSuccess) {
		return nccl_fail(e, c->rank, what, rc, nc);
	}
	gpuEvent_t ev;
	enum aorta_status st = event_get(c, &ev, e);
	if (st)
		return st;
	st = GPU_CALL(e, gpuEventRecord(ev, s));
	if (st) {
		event_put(c, ev);
		return with_rank(e, st, c->rank);
	}
	r->impl = (void *)ev;
	return AORTA_OK;
}

static enum aorta_status nccl_test(struct comm_req *r, int *done, struct aorta_error *e)
{
	struct comm *c = r->group->comm;
	struct nccl_impl *im = impl_of(c);
	gpuEvent_t ev = (gpuEvent_t)r->impl;
	ncclComm_t nc = im->nc[r->group->id];
	enum aorta_status st = AORTA_OK;
	ncclResult_t as = ncclSuccess, rc = ncclSuccess;
	int aborted;

	*done = 0;
	if (im->opts.abort_check) {
		int who = im->opts.abort_check(im->opts.abort_arg);
		if (who >= 0) {
			st = aorta_fail(e, AORTA_EGPU, NULL, 0, -1,
					"rank %d: %s (group %s, %zu floats) at '%s' abandoned: rank %d failed", c->rank,
					comm_coll_name(r->coll), comm_pg_name(r->group->id), r->count, r->phase, who);
			goto release;
		}
	}
	pthread_mutex_lock(&im->mu);
	aborted = im->aborted;
	if (!aborted)
		rc = ncclCommGetAsyncError(nc, &as);
	pthread_mutex_unlock(&im->mu);
	if (aborted) {
		st = aorta_fail(e, AORTA_EGPU, NULL, 0, -1, "rank %d: %s (group %s, %zu floats) at '%s': communicator aborted",
				c->rank, comm_coll_name(r->coll), comm_pg_name(r->group->id), r->count, r->phase);
		goto release;
	}
	if (rc == ncclSuccess && as != ncclSuccess && as != ncclInProgress)
		rc = as;
	if (rc != ncclSuccess) {
		char what[192];
		snprintf(what, sizeof(what), "NCCL error in %s (group %s, %zu floats) at '%s'", comm_coll_name(r->coll),
			 comm_pg_name(r->group->id), r->count, r->phase);
		st = nccl_fail(e, c->rank, what, rc, nc);
		goto release;
	}
	gpuError_t q = gpuEventQuery(ev);
	if (q == gpuErrorNotReady)
		return AORTA_OK;
	if (q != gpuSuccess) {
		char what[192];
		snprintf(what, sizeof(what), "rank %d: %s (group %s) at '%s': event query", c->rank,
			 comm_coll_name(r->coll), comm_pg_name(r->group->id), r->phase);
		st = gpu_status_(q, e, what, __FILE__, __LINE__);
		goto release;
	}
	*done = 1;
release:
	event_put(c, ev);
	r->impl = NULL;
	return st;
}

static enum aorta_status nccl_wait_stream(struct comm_req *r, void *stream, struct aorta_error *e)
{
	struct comm *c = r->group->comm;
	gpuError_t q = gpuStreamWaitEvent((gpuStream_t)stream, (gpuEvent_t)r->impl, 0);
	if (q == gpuSuccess)
		return AORTA_OK;
	char what[192];
	snprintf(what, sizeof(what), "rank %d: stream wait for %s (group %s) at '%s'", c->rank,
		 comm_coll_name(r->coll), comm_pg_name(r->group->id), r->phase);
	return gpu_status_(q, e, what, __FILE__, __LINE__);
}

void comm_nccl_abort(struct comm *c)
{
	struct nccl_impl *im = impl_of(c);
	pthread_mutex_lock(&im->mu);
	if (!im->aborted) {
		im->aborted = 1;
		for (int i = 0; i < COMM_PG_COUNT; i++) {
			if (im->nc[i])
				(void)ncclCommAbort(im->nc[i]); /* nothing better to do if it fails */
			im->nc[i] = NULL;
		}
	}
	pthread_mutex_unlock(&im->mu);
}

static void nccl_abort_op(struct comm *c, int code)
{
	(void)code;
	comm_nccl_abort(c);
}

/* Frees everything but the communicators (already destroyed or aborted). */
static void impl_free(struct comm *c)
{
	struct nccl_impl *im = impl_of(c);
	if (!im) {
		free(c);
		return;
	}
	for (size_t i = 0; i < im->nevents; i++)
		(void)gpuEventDestroy(im->events[i]);
	free(im->events);
	free(im->free_ev);
	if (im->scratch)
		(void)gpuFree(im->scratch);
	if (im->own_stream)
		(void)gpuStreamDestroy(im->own_stream);
	pthread_mutex_destroy(&im->mu);
	free(im);
	free(c);
}

static void nccl_destroy(struct comm *c)
{
	struct nccl_impl *im = impl_of(c);
	(void)gpuSetDevice(im->device);
	/* finalize (flushes what is pending; needs the peers) under the
	 * timeout; a communicator that does not finish is aborted instead */
	pthread_mutex_lock(&im->mu);
	int ok = !im->aborted;
	pthread_mutex_unlock(&im->mu);
	for (int i = 0; ok && i < COMM_PG_COUNT; i++) {
		if (!im->nc[i])
			continue;
		pthread_mutex_lock(&im->mu);
		ncclResult_t rc = ncclCommFinalize(im->nc[i]);
		pthread_mutex_unlock(&im->mu);
		if ((rc != ncclSuccess && rc != ncclInProgress) || poll_ready(c, im->nc[i], "ncclCommFinalize", NULL))
			ok = 0;
	}
	pthread_mutex_lock(&im->mu);
	for (int i = 0; i < COMM_PG_COUNT; i++) {
		if (!im->nc[i])
			continue;
		if (ok)
			(void)ncclCommDestroy(im->nc[i]);
		else
			(void)ncclCommAbort(im->nc[i]);
		im->nc[i] = NULL;
	}
	pthread_mutex_unlock(&im->mu);
	impl_free(c);
}

/* ---- symmetric windows (comm_sym_alloc) ---------------------------------- */

static enum aorta_status nccl_sym_alloc(struct comm_group *g, size_t bytes, void **p, void **handle,
					struct aorta_error *e)
{
	struct comm *c = g->comm;
	struct nccl_impl *im = impl_of(c);
	ncclComm_t nc = im->nc[g->id];
	if (im->opts.cta_policy != NCCL_CTA_POLICY_ZERO || g->size < 2 || !nc)
		return AORTA_OK;
	char what[160];
	snprintf(what, sizeof(what), "ncclCommWindowRegister (group %s, %zu bytes)", comm_pg_name(g->id), bytes);
	void *buf = NULL;
	ncclResult_t rc = ncclMemAlloc(&buf, bytes ? bytes : 1);
	if (rc != ncclSuccess)
		return nccl_fail(e, c->rank, "ncclMemAlloc (a symmetric window for NCCL_CTA_POLICY=zero)", rc, NULL);
	/* non-blocking: NCCL may write the handle from its own thread when the
	 * registration ends, so `win` must live until poll_ready returns */
	ncclWindow_t win = NULL;
	enum aorta_status st = AORTA_OK;
	pthread_mutex_lock(&im->mu);
	rc = im->aborted ? ncclInvalidUsage : ncclCommWindowRegister(nc, buf, bytes ? bytes : 1, &win,
								     NCCL_WIN_COLL_SYMMETRIC);
	pthread_mutex_unlock(&im->mu);
	/* the handle may stay NULL until ncclCommGetAsyncError reports
	 * success, even when the call itself returned ncclSuccess: poll either way */
	if (rc == ncclInProgress || rc == ncclSuccess)
		st = poll_ready(c, nc, what, e);
	else
		st = nccl_fail(e, c->rank, what, rc, nc);
	win = __atomic_load_n(&win, __ATOMIC_ACQUIRE);
	if (!st && !win)
		st = aorta_fail(e, AORTA_EGPU, NULL, 0, -1,
				"rank %d: %s gave no window: this communicator has no symmetric memory support (NCCL "
				"needs one node, NVLink or PCIe P2P between every pair of its GPUs, NCCL_CUMEM_ENABLE=1 "
				"and NCCL_WIN_ENABLE=1); unset NCCL_CTA_POLICY=zero",
				c->rank, what);
	if (st) {
		(void)ncclMemFree(buf);
		return st;
	}
	*p = buf;
	*handle = win;
	return AORTA_OK;
}

static void nccl_sym_free(struct comm_group *g, void *p, void *handle)
{
	struct comm *c = g->comm;
	struct nccl_impl *im = impl_of(c);
	ncclComm_t nc = im->nc[g->id];
	pthread_mutex_lock(&im->mu);
	int ok = !im->aborted && nc && handle;
	ncclResult_t rc = ok ? ncclCommWindowDeregister(nc, (ncclWindow_t)handle) : ncclSuccess;
	pthread_mutex_unlock(&im->mu);
	if (ok && (rc == ncclInProgress || rc == ncclSuccess))
		(void)poll_ready(c, nc, "ncclCommWindowDeregister", NULL);  /* before the memory goes */
	(void)ncclMemFree(p);
}

static const struct comm_ops nccl_ops = {
	.name = "nccl",
	.start = nccl_start,
	.test = nccl_test,
	.abort = nccl_abort_op,
	.destroy = nccl_destroy,
	.wait_stream = nccl_wait_stream,
	.sym_alloc = nccl_sym_alloc,
	.sym_free = nccl_sym_free,
};

int comm_is_nccl(const struct comm *c)
{
	return c && c->ops == &nccl_ops;
}

/* ---- creation ------------------------------------------------------------ */

static void fill_config(ncclConfig_t *cf, const struct comm_nccl_opts *o)
{
	ncclConfig_t init = NCCL_CONFIG_INITIALIZER;
	*cf = init;
	cf->blocking = 0;
	if (o->min_ctas > 0)
		cf->minCTAs = o->min_ctas;
	if (o->max_ctas > 0)
		cf->maxCTAs = o->max_ctas;
	if (o->cga_cluster_size >= 0)
		cf->cgaClusterSize = o->cga_cluster_size;
	if (o->cta_policy >= 0)
		cf->CTAPolicy = o->cta_policy;
}

enum aorta_status comm_nccl_create_rank(int rank, int size, int node_size, const ncclUniqueId *id, int device,
					const struct comm_nccl_opts *o, struct comm **out, struct aorta_error *e)
{
	enum aorta_status st = AORTA_OK;
	struct comm_nccl_opts none;
	ncclConfig_t cf;
	ncclResult_t rc;

	*out = NULL;
	if (!o) {
		memset(&none, 0, sizeof(none));
		none.cga_cluster_size = -1;
		none.cta_policy = -1;
		o = &none;
	}
	if (o->cta_policy < -1 || o->cta_policy > NCCL_CTA_POLICY_ZERO)
		return aorta_fail(e, AORTA_EUSAGE, NULL, 0, -1,
				  "rank %d: NCCL_CTA_POLICY=%s: expected default, efficiency or zero (or 0, 1, 2)", rank,
				  getenv("NCCL_CTA_POLICY") ? getenv("NCCL_CTA_POLICY") : "?");
	if (size < 1 || rank < 0 || rank >= size || node_size < 1 || size % node_size)
		return aorta_fail(e, AORTA_EUSAGE, NULL, 0, -1,
				  "rank %d: bad NCCL job shape: rank %d of %d, node size %d (must divide the size)", rank,
				  rank, size, node_size);
	if (gpuSetDevice(device) != gpuSuccess) {
		char what[64];
		snprintf(what, sizeof(what), "rank %d: cudaSetDevice(%d)", rank, device);
		return gpu_status_(gpuSetDevice(device), e, what, __FILE__, __LINE__);
	}

	struct comm *c = xcalloc(1, sizeof(*c));
	struct nccl_impl *im = xcalloc(1, sizeof(*im));
	c->ops = &nccl_ops;
	c->impl = im;
	comm_init_groups(c, rank, size, node_size);
	if (o->timeout_ms > 0)
		c->timeout_ms = o->timeout_ms;
	pthread_mutex_init(&im->mu, NULL);
	im->device = device;
	im->opts = *o;

	char what[128];
	GPU_CHECK_GOTO(e, st, gpuStreamCreateWithPriority(&im->own_stream, gpuStreamNonBlocking, 0), fail_gpu);
	GPU_CHECK_GOTO(e, st, gpuMalloc((void **)&im->scratch, sizeof(float)), fail_gpu);
	GPU_CHECK_GOTO(e, st, gpuMemsetAsync(im->scratch, 0, sizeof(float), im->own_stream), fail_gpu);
	GPU_CHECK_GOTO(e, st, gpuStreamSynchronize(im->own_stream), fail_gpu);

	fill_config(&cf, o);
	rc = ncclCommInitRankConfig(&im->nc[COMM_PG_WORLD], size, *id, rank, &cf);
	if (rc != ncclSuccess && rc != ncclInProgress) {
		snprintf(what, sizeof(what), "ncclCommInitRankConfig (world of %d on device %d)", size, device);
		st = nccl_fail(e, rank, what, rc, im->nc[COMM_PG_WORLD]);
		goto fail;
	}
	if (im->nc[COMM_PG_WORLD]) {
		snprintf(what, sizeof(what), "ncclCommInitRankConfig (world of %d on device %d)", size, device);
		if ((st = poll_ready(c, im->nc[COMM_PG_WORLD], what, e)))
			goto fail;
	}
	static const char *const split_names[] = { "", "node", "cross" };
	for (int g = COMM_PG_NODE; g <= COMM_PG_CROSS; g++) {
		int color = g == COMM_PG_NODE ? rank / node_size : rank % node_size;
		fill_config(&cf, o);
		rc = ncclCommSplit(im->nc[COMM_PG_WORLD], color, rank, &im->nc[g], &cf);
		snprintf(what, sizeof(what), "ncclCommSplit (%s group, colour %d)", split_names[g], color);
		if (rc != ncclSuccess && rc != ncclInProgress) {
			st = nccl_fail(e, rank, what, rc, im->nc[COMM_PG_WORLD]);
			goto fail;
		}
		/* non-blocking: the split runs as a job of the PARENT, which
		 * reads ncclInProgress until it ends; NCCL's init thread writes
		 * the child into im->nc[g] only then (NULL before) */
		if ((st = poll_ready(c, im->nc[COMM_PG_WORLD], what, e)))
			goto fail;
		if (!__atomic_load_n(&im->nc[g], __ATOMIC_ACQUIRE)) {
			st = aorta_fail(e, AORTA_EGPU, NULL, 0, -1, "rank %d: %s gave no communicator", rank, what);
			goto fail;
		}
		if ((st = poll_ready(c, im->nc[g], what, e)))
			goto fail;
	}
	*out = c;
	return AORTA_OK;

fail_gpu:
	with_rank(e, st, rank);
fail:
	/* the peers may be gone or stuck: abort, never finalize */
	for (int i = 0; i < COMM_PG_COUNT; i++)
		if (im->nc[i])
			(void)ncclCommAbort(im->nc[i]);
	impl_free(c);
	return st;
}

void comm_nccl_describe(const struct comm *c, char *buf, size_t len)
{
	const struct nccl_impl *im = impl_of(c);
	int v = 0;
	(void)ncclGetVersion(&v);
	snprintf(buf, len,
		 "nccl %d.%d.%d, rank %d of %d (node %d), device %d, min_ctas %d, max_ctas %d, cga %d, cta_policy %s, "
		 "timeout %lld ms",
		 v / 10000, v / 100 % 100, v % 100, c->rank, c->size, c->node_size, im->device, im->opts.min_ctas,
		 im->opts.max_ctas, im->opts.cga_cluster_size, comm_nccl_cta_policy_name(im->opts.cta_policy),
		 c->timeout_ms);
}
