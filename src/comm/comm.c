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
 */
#include "comm/comm.h"

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

static int overlaps(const float *a, size_t na, const float *b, size_t nb)
{
	return a < b + nb && b < a + na;
}

static enum aorta_status start(struct comm_group *g, enum comm_coll coll, const float *send, float *recv,
			       size_t count, int root, struct comm_req *req, const char *phase,
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
	snprintf(r->phase, sizeof(r->phase), "%s", phase ? phase : "");
	enum aorta_status st = c->ops->start(g, coll, send, recv, count, root, r, e);
	if (st)
		return st;
	r->active = 1;
	c->nstarted[coll]++;
	return req ? AORTA_OK : comm_wait(r, e);
}

enum aorta_status comm_all_gather(struct comm_group *g, const float *send, float *recv, size_t count,
				  struct comm_req *req, const char *phase, struct aorta_error *e)
{
	size_t n = (size_t)g->size * count;
	if (send != recv + (size_t)g->rank * count && overlaps(send, count, recv, n))
		return aorta_fail(e, AORTA_EINTERNAL, NULL, 0, -1,
				  "all_gather at '%s': send overlaps recv but is not this rank's part", phase);
	return start(g, COMM_ALL_GATHER, send, recv, count, 0, req, phase, e);
}

enum aorta_status comm_reduce_scatter(struct comm_group *g, const float *send, float *recv, size_t count,
				      struct comm_req *req, const char *phase, struct aorta_error *e)
{
	if (overlaps(send, (size_t)g->size * count, recv, count))
		return aorta_fail(e, AORTA_EINTERNAL, NULL, 0, -1,
				  "reduce_scatter at '%s': send and recv overlap", phase);
	return start(g, COMM_REDUCE_SCATTER, send, recv, count, 0, req, phase, e);
}

enum aorta_status comm_all_reduce(struct comm_group *g, const float *send, float *recv, size_t count,
				  struct comm_req *req, const char *phase, struct aorta_error *e)
{
	if (send != recv && overlaps(send, count, recv, count))
		return aorta_fail(e, AORTA_EINTERNAL, NULL, 0, -1,
				  "all_reduce at '%s': send and recv partly overlap", phase);
	return start(g, COMM_ALL_REDUCE, send, recv, count, 0, req, phase, e);
}

enum aorta_status comm_broadcast(struct comm_group *g, float *buf, size_t count, int root,
				 struct comm_req *req, const char *phase, struct aorta_error *e)
{
	if (root < 0 || root >= g->size)
		return aorta_fail(e, AORTA_EINTERNAL, NULL, 0, -1, "broadcast at '%s': root %d outside group of %d",
				  phase, root, g->size);
	return start(g, COMM_BROADCAST, buf, buf, count, root, req, phase, e);
}

enum aorta_status comm_barrier(struct comm_group *g, const char *phase, struct aorta_error *e)
{
	return start(g, COMM_BARRIER, NULL, NULL, 0, 0, NULL, phase, e);
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
					  "rank %d: comm timeout after %lld ms in %s (group %s, %zu floats) at '%s'",
					  c->rank, c->timeout_ms, comm_coll_name(r->coll), comm_pg_name(r->group->id),
					  r->count, r->phase);
		if (t - t0 < 50000) {
			sched_yield();
		} else {
			struct timespec ts = { 0, 20000 };
			nanosleep(&ts, NULL);
		}
	}
}

/* ---- the one-process backend -------------------------------------------- */

static enum aorta_status local_start(struct comm_group *g, enum comm_coll coll, const float *send, float *recv,
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
			memmove(recv, send, count * sizeof(float));
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
