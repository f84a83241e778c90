/*
 * comm.c - the backend-neutral half of comm.h: argument checks, the
 * collective wrappers, the timed wait, abort, and the one-process backend.
 *
 * Design.  Each wrapper checks what every backend would otherwise check
 * differently (sizes, in-place rules, an active request), records the phase
 * for messages and calls ops->start.  comm_wait polls ops->test: spinning
 * (sched_yield) for the first ~50 us, then sleeping 20 us between polls,
 * so oversubscribed CPU ranks (4 ranks on 2 cores in CI) let each other
 * run; the deadline is checked on every poll.  The local backend completes
 * every collective at start (a copy where the result must land elsewhere),
 * which keeps the executor's code path identical at world 1.
 *
 * The threads backend (comm_threads_create) is world N in one process:
 * every group instance (world; each node; each cross group) keeps a list
 * of the collectives in flight, matched by their ordinal on that group.
 * start deposits the rank's buffers under one mutex; the last rank to
 * arrive computes the result for every rank (so a started collective
 * needs no progress thread) and marks it done; each rank's test sees it,
 * and the last to see it frees it.  Sums run in rank order: fp32 as
 * plain float additions, bf16 with one rounding per step
 * (comm_bf16_sum_into), as comm.h's "bf16 semantics" says.  Cost: one
 * pass over the data per collective, under the mutex (tests only).
 */
#include "comm/comm.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *coll_names[] = { "all_gather", "reduce_scatter", "all_reduce", "broadcast", "barrier" };
static const char *pg_names[] = { "world", "node", "cross" };

const char *comm_coll_name(enum comm_coll c)
{
	return (unsigned)c < 5 ? coll_names[c] : "?";
}

const char *comm_pg_name(enum comm_pg g)
{
	return (unsigned)g < COMM_PG_COUNT ? pg_names[g] : "?";
}

const char *comm_dtype_name(enum comm_dtype t)
{
	return t == COMM_BF16 ? "bf16" : t == COMM_F32 ? "fp32" : "?";
}

size_t comm_dtype_size(enum comm_dtype t)
{
	return t == COMM_BF16 ? 2 : 4;
}

size_t comm_coll_bytes(enum comm_coll c, enum comm_dtype t, size_t count, int group_size)
{
	size_t es = comm_dtype_size(t);
	switch (c) {
	case COMM_ALL_GATHER:
	case COMM_REDUCE_SCATTER:
		return (size_t)(group_size > 0 ? group_size : 1) * count * es;
	case COMM_ALL_REDUCE:
	case COMM_BROADCAST:
		return count * es;
	case COMM_BARRIER:
		break;
	}
	return 0;
}

void comm_f32_to_bf16_n(uint16_t *dst, const float *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] = comm_f32_to_bf16(src[i]);
}

void comm_bf16_to_f32_n(float *dst, const uint16_t *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] = comm_bf16_to_f32(src[i]);
}

void comm_bf16_sum_into(uint16_t *inout, const uint16_t *in, size_t n)
{
	for (size_t i = 0; i < n; i++)
		inout[i] = comm_f32_to_bf16(comm_bf16_to_f32(inout[i]) + comm_bf16_to_f32(in[i]));
}

void comm_init_groups(struct comm *c, int rank, int size, int node_size)
{
	c->rank = rank;
	c->size = size;
	c->node_size = node_size;
	c->timeout_ms = 300000;
	c->groups[COMM_PG_WORLD] = (struct comm_group){ .rank = rank, .size = size, .id = COMM_PG_WORLD, .comm = c };
	c->groups[COMM_PG_NODE] = (struct comm_group){ .rank = rank % node_size, .size = node_size,
						       .id = COMM_PG_NODE, .comm = c };
	c->groups[COMM_PG_CROSS] = (struct comm_group){ .rank = rank / node_size, .size = size / node_size,
							.id = COMM_PG_CROSS, .comm = c };
}

void comm_destroy(struct comm *c)
{
	if (c)
		c->ops->destroy(c);
}

void comm_set_timeout_ms(struct comm *c, long long ms)
{
	c->timeout_ms = ms > 0 ? ms : 1;
}

void comm_abort(struct comm *c, const struct aorta_error *e, int code)
{
	if (e && e->msg[0])
		fprintf(stderr, "aorta: error: rank %d: %s\n", c->rank, e->msg);
	fflush(stderr);
	c->ops->abort(c, code);
	exit(code); /* a backend's abort does not return; this is for the compiler */
}

/* ---- wrappers ----------------------------------------------------------- */

/* Do [a, a + na) and [b, b + nb) (bytes) overlap? */
static int overlaps(const void *a, size_t na, const void *b, size_t nb)
{
	const char *x = a, *y = b;
	return x < y + nb && y < x + na;
}

static enum aorta_status start(struct comm_group *g, enum comm_coll coll, enum comm_dtype dt, const void *send,
			       void *recv, size_t count, int root, struct comm_req *req, const char *phase,
			       struct aorta_error *e)
{
	struct comm *c = g->comm;
	struct comm_req local;
	struct comm_req *r = req ? req : &local;

	if (req && req->active)
		return aorta_fail(e, AORTA_EINTERNAL, NULL, 0, -1,
				  "rank %d: %s at '%s': request still holds %s from '%s'", c->rank,
				  comm_coll_name(coll), phase ? phase : "", comm_coll_name(req->coll), req->phase);
	memset(r, 0, sizeof(*r));
	r->coll = coll;
	r->group = g;
	r->count = count;
	r->dtype = dt;
	snprintf(r->phase, sizeof(r->phase), "%s", phase ? phase : "");
	enum aorta_status st = c->ops->start(g, coll, send, recv, count, root, r, e);
	if (st)
		return st;
	r->active = 1;
	c->nstarted[coll]++;
	c->nbytes[coll] += (long long)comm_coll_bytes(coll, dt, count, g->size);
	return req ? AORTA_OK : comm_wait(r, e);
}

enum aorta_status comm_all_gather(struct comm_group *g, const float *send, float *recv, size_t count,
				  struct comm_req *req, const char *phase, struct aorta_error *e)
{
	size_t n = (size_t)g->size * count;
	if (send != recv + (size_t)g->rank * count && overlaps(send, count * 4, recv, n * 4))
		return aorta_fail(e, AORTA_EINTERNAL, NULL, 0, -1,
				  "all_gather at '%s': send overlaps recv but is not this rank's part", phase);
	return start(g, COMM_ALL_GATHER, COMM_F32, send, recv, count, 0, req, phase, e);
}

static enum aorta_status check_dtype(enum comm_coll coll, enum comm_dtype t, const char *phase,
				     struct aorta_error *e)
{
	if (t == COMM_F32 || t == COMM_BF16)
		return AORTA_OK;
	return aorta_fail(e, AORTA_EINTERNAL, NULL, 0, -1, "%s at '%s': unknown element type %d", comm_coll_name(coll),
			  phase ? phase : "", (int)t);
}

enum aorta_status comm_reduce_scatter_ex(struct comm_group *g, const void *send, void *recv, size_t count,
					 enum comm_dtype t, struct comm_req *req, const char *phase,
					 struct aorta_error *e)
{
	enum aorta_status st = check_dtype(COMM_REDUCE_SCATTER, t, phase, e);
	if (st)
		return st;
	size_t es = comm_dtype_size(t);
	if (overlaps(send, (size_t)g->size * count * es, recv, count * es))
		return aorta_fail(e, AORTA_EINTERNAL, NULL, 0, -1,
				  "reduce_scatter at '%s': send and recv overlap", phase);
	return start(g, COMM_REDUCE_SCATTER, t, send, recv, count, 0, req, phase, e);
}

enum aorta_status comm_reduce_scatter(struct comm_group *g, const float *send, float *recv, size_t count,
				      struct comm_req *req, const char *phase, struct aorta_error *e)
{
	return comm_reduce_scatter_ex(g, send, recv, count, COMM_F32, req, phase, e);
}

enum aorta_status comm_all_reduce_ex(struct comm_group *g, const void *send, void *recv, size_t count,
				     enum comm_dtype t, struct comm_req *req, const char *phase,
				     struct aorta_error *e)
{
	enum aorta_status st = check_dtype(COMM_ALL_REDUCE, t, phase, e);
	if (st)
		return st;
	size_t es = comm_dtype_size(t);
	if (send != recv && overlaps(send, count * es, recv, count * es))
		return aorta_fail(e, AORTA_EINTERNAL, NULL, 0, -1,
				  "all_reduce at '%s': send and recv partly overlap", phase);
	return start(g, COMM_ALL_REDUCE, t, send, recv, count, 0, req, phase, e);
}

enum aorta_status comm_all_reduce(struct comm_group *g, const float *send, float *recv, size_t count,
				  struct comm_req *req, const char *phase, struct aorta_error *e)
{
	return comm_all_reduce_ex(g, send, recv, count, COMM_F32, req, phase, e);
}

enum aorta_status comm_broadcast(struct comm_group *g, float *buf, size_t count, int root,
				 struct comm_req *req, const char *phase, struct aorta_error *e)
{
	if (root < 0 || root >= g->size)
		return aorta_fail(e, AORTA_EINTERNAL, NULL, 0, -1, "broadcast at '%s': root %d outside group of %d",
				  phase, root, g->size);
	return start(g, COMM_BROADCAST, COMM_F32, buf, buf, count, root, req, phase, e);
}

enum aorta_status comm_barrier(struct comm_group *g, const char *phase, struct aorta_error *e)
{
	return start(g, COMM_BARRIER, COMM_F32, NULL, NULL, 0, 0, NULL, phase, e);
}

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void comm_set_stream(struct comm *c, enum comm_coll coll, void *stream)
{
	if ((unsigned)coll < 5)
		c->stream[coll] = stream;
}

enum aorta_status comm_wait_stream(struct comm_req *r, void *stream, struct aorta_error *e)
{
	if (!r->active)
		return AORTA_OK;
	const struct comm_ops *ops = r->group->comm->ops;
	if (ops->wait_stream)
		return ops->wait_stream(r, stream, e);
	return comm_wait(r, e);
}

enum aorta_status comm_sym_alloc(struct comm_group *g, size_t bytes, void **p, void **handle,
				 struct aorta_error *e)
{
	*p = NULL;
	*handle = NULL;
	const struct comm_ops *ops = g->comm->ops;
	return ops->sym_alloc ? ops->sym_alloc(g, bytes, p, handle, e) : AORTA_OK;
}

void comm_sym_free(struct comm_group *g, void *p, void *handle)
{
	if (p && g->comm->ops->sym_free)
		g->comm->ops->sym_free(g, p, handle);
}

enum aorta_status comm_wait(struct comm_req *r, struct aorta_error *e)
{
	if (!r->active)
		return AORTA_OK;
	struct comm *c = r->group->comm;
	long long t0 = now_ns(), deadline = t0 + c->timeout_ms * 1000000LL;
	for (;;) {
		int done = 0;
		enum aorta_status st = c->ops->test(r, &done, e);
		if (st) {
			r->active = 0;
			return st;
		}
		if (done) {
			r->active = 0;
			return AORTA_OK;
		}
		long long t = now_ns();
		if (t >= deadline)
			return aorta_fail(e, AORTA_EGPU, NULL, 0, -1,
					  "rank %d: comm timeout after %lld ms in %s (group %s, %zu %s) at '%s'",
					  c->rank, c->timeout_ms, comm_coll_name(r->coll), comm_pg_name(r->group->id),
					  r->count, r->dtype == COMM_BF16 ? "bf16 values" : "floats", r->phase);
		if (t - t0 < 50000) {
			sched_yield();
		} else {
			struct timespec ts = { 0, 20000 };
			nanosleep(&ts, NULL);
		}
	}
}

/* ---- the one-process backend -------------------------------------------- */

static enum aorta_status local_start(struct comm_group *g, enum comm_coll coll, const void *send, void *recv,
				     size_t count, int root, struct comm_req *r, struct aorta_error *e)
{
	(void)g;
	(void)root;
	(void)e;
	switch (coll) {
	case COMM_ALL_GATHER:
	case COMM_REDUCE_SCATTER:
	case COMM_ALL_REDUCE:
		if (send != recv && count)
			memmove(recv, send, count * comm_dtype_size(r->dtype));
		break;
	case COMM_BROADCAST:
	case COMM_BARRIER:
		break;
	}
	r->impl = NULL;
	return AORTA_OK;
}

static enum aorta_status local_test(struct comm_req *r, int *done, struct aorta_error *e)
{
	(void)r;
	(void)e;
	*done = 1;
	return AORTA_OK;
}

static void local_abort(struct comm *c, int code)
{
	(void)c;
	exit(code);
}

static void local_destroy(struct comm *c)
{
	free(c);
}

static const struct comm_ops local_ops = {
	.name = "local", .start = local_start, .test = local_test, .abort = local_abort, .destroy = local_destroy,
};

enum aorta_status comm_local_create(struct comm **out, struct aorta_error *e)
{
	(void)e;
	struct comm *c = xcalloc(1, sizeof(*c));
	c->ops = &local_ops;
	comm_init_groups(c, 0, 1, 1);
	*out = c;
	return AORTA_OK;
}

/* ---- the threads backend -------------------------------------------------- */

/* One collective of one group instance, from the first start to the last
 * rank's test that sees it done. */
struct th_op {
	struct th_op *next;
	long long seq;            /* ordinal on the group instance */
	enum comm_coll coll;
	enum comm_dtype dtype;
	size_t count;
	int root;
	int arrived, observed, done;
	const void **send;        /* per group rank */
	void **recv;
};

/* One group instance (world, node k, cross k): its members' ordinals. */
struct th_inst {
	struct th_op *ops;
	long long *seq;           /* per group rank: collectives started */
};

struct th_shared {
	pthread_mutex_t mu;
	int size, node_size, refs;
	int ninst;
	struct th_inst *inst;     /* world, nodes 0..size/node_size-1, crosses 0..node_size-1 */
};

static void th_compute(struct th_op *op, int n)
{
	const size_t es = comm_dtype_size(op->dtype), cnt = op->count, nb = cnt * es;
	switch (op->coll) {
	case COMM_ALL_GATHER:
		for (int k = 0; k < n; k++)
			for (int j = 0; j < n; j++)
				memmove((char *)op->recv[j] + (size_t)k * nb, op->send[k], nb);
		break;
	case COMM_REDUCE_SCATTER:
	case COMM_ALL_REDUCE: {
		/* rank order; the result in a scratch first (all-reduce may be in
		 * place, and every rank's send must stay intact until the end) */
		const int rs = op->coll == COMM_REDUCE_SCATTER;
		const int parts = rs ? n : 1;
		void *acc = xmalloc((nb ? nb : 1) * (size_t)parts);
		for (int j = 0; j < parts; j++) {
			char *a = (char *)acc + (size_t)j * nb;
			size_t off = (size_t)j * nb;
			memcpy(a, (const char *)op->send[0] + off, nb);
			for (int k = 1; k < n; k++) {
				const char *src = (const char *)op->send[k] + off;
				if (op->dtype == COMM_BF16) {
					comm_bf16_sum_into((uint16_t *)(void *)a, (const uint16_t *)(const void *)src,
							   cnt);
				} else {
					float *fa = (float *)(void *)a;
					const float *fs = (const float *)(const void *)src;
					for (size_t i = 0; i < cnt; i++)
						fa[i] += fs[i];
				}
			}
		}
		for (int j = 0; j < n; j++)
			memcpy(op->recv[j], (char *)acc + (rs ? (size_t)j * nb : 0), nb);
		free(acc);
		break;
	}
	case COMM_BROADCAST:
		for (int j = 0; j < n; j++)
			if (j != op->root)
				memcpy(op->recv[j], op->send[op->root], nb);
		break;
	case COMM_BARRIER:
		break;
	}
}

static enum aorta_status th_start(struct comm_group *g, enum comm_coll coll, const void *send, void *recv,
				  size_t count, int root, struct comm_req *r, struct aorta_error *e)
{
	struct th_shared *sh = g->comm->impl;
	struct th_inst *in = g->impl;
	enum aorta_status st = AORTA_OK;

	pthread_mutex_lock(&sh->mu);
	long long seq = in->seq[g->rank];
	struct th_op *op = in->ops, *last = NULL;
	while (op && op->seq != seq) {
		last = op;
		op = op->next;
	}
	if (!op) {
		op = xcalloc(1, sizeof(*op));
		op->seq = seq;
		op->coll = coll;
		op->dtype = r->dtype;
		op->count = count;
		op->root = root;
		op->send = xcalloc((size_t)g->size, sizeof(*op->send));
		op->recv = xcalloc((size_t)g->size, sizeof(*op->recv));
		if (last)
			last->next = op;
		else
			in->ops = op;
	} else if (op->coll != coll || op->dtype != r->dtype || op->count != count || op->root != root) {
		st = aorta_fail(e, AORTA_EINTERNAL, NULL, 0, -1,
				"rank %d: %s of %zu %s at '%s' meets %s of %zu %s (collective %lld of group %s)",
				g->comm->rank, comm_coll_name(coll), count, comm_dtype_name(r->dtype), r->phase,
				comm_coll_name(op->coll), op->count, comm_dtype_name(op->dtype), seq,
				comm_pg_name(g->id));
		goto out;
	}
	in->seq[g->rank]++;
	op->send[g->rank] = send;
	op->recv[g->rank] = recv;
	if (++op->arrived == g->size) {
		th_compute(op, g->size);
		op->done = 1;
	}
	r->impl = op;
out:
	pthread_mutex_unlock(&sh->mu);
	return st;
}

static enum aorta_status th_test(struct comm_req *r, int *done, struct aorta_error *e)
{
	(void)e;
	struct comm_group *g = r->group;
	struct th_shared *sh = g->comm->impl;
	struct th_inst *in = g->impl;
	struct th_op *op = r->impl;

	pthread_mutex_lock(&sh->mu);
	*done = op->done;
	if (op->done && ++op->observed == g->size) {
		struct th_op **pp = &in->ops;
		while (*pp != op)
			pp = &(*pp)->next;
		*pp = op->next;
		free(op->send);
		free(op->recv);
		free(op);
	}
	pthread_mutex_unlock(&sh->mu);
	if (*done)
		r->impl = NULL;
	return AORTA_OK;
}

static void th_abort(struct comm *c, int code)
{
	(void)c;
	exit(code);
}

static void th_destroy(struct comm *c)
{
	struct th_shared *sh = c->impl;
	pthread_mutex_lock(&sh->mu);
	int last = --sh->refs == 0;
	pthread_mutex_unlock(&sh->mu);
	free(c);
	if (!last)
		return;
	for (int i = 0; i < sh->ninst; i++) {
		struct th_op *op = sh->inst[i].ops;
		while (op) {
			struct th_op *nx = op->next;
			free(op->send);
			free(op->recv);
			free(op);
			op = nx;
		}
		free(sh->inst[i].seq);
	}
	free(sh->inst);
	pthread_mutex_destroy(&sh->mu);
	free(sh);
}

static const struct comm_ops threads_ops = {
	.name = "threads", .start = th_start, .test = th_test, .abort = th_abort, .destroy = th_destroy,
};

enum aorta_status comm_threads_create(int size, int node_size, struct comm **out, struct aorta_error *e)
{
	if (size < 1 || node_size < 1 || size % node_size)
		return aorta_fail(e, AORTA_EUSAGE, NULL, 0, -1,
				  "threads comm: node size %d does not divide the world size %d", node_size, size);
	struct th_shared *sh = xcalloc(1, sizeof(*sh));
	pthread_mutex_init(&sh->mu, NULL);
	sh->size = size;
	sh->node_size = node_size;
	sh->refs = size;
	const int nodes = size / node_size;
	sh->ninst = 1 + nodes + node_size;
	sh->inst = xcalloc((size_t)sh->ninst, sizeof(*sh->inst));
	for (int i = 0; i < sh->ninst; i++) {
		int members = i == 0 ? size : i <= nodes ? node_size : nodes;
		sh->inst[i].seq = xcalloc((size_t)members, sizeof(long long));
	}
	for (int r = 0; r < size; r++) {
		struct comm *c = xcalloc(1, sizeof(*c));
		c->ops = &threads_ops;
		c->impl = sh;
		comm_init_groups(c, r, size, node_size);
		c->groups[COMM_PG_WORLD].impl = &sh->inst[0];
		c->groups[COMM_PG_NODE].impl = &sh->inst[1 + r / node_size];
		c->groups[COMM_PG_CROSS].impl = &sh->inst[1 + nodes + r % node_size];
		out[r] = c;
	}
	return AORTA_OK;
}
