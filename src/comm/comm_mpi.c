/*
 * comm_mpi.c - the MPI backend of comm.h (Open MPI on the CPU): what CI
 * runs the distributed FSDP/DDP path on, under `mpirun -np 2` and `-np 4`.
 *
 * Design.  The world group is a duplicate of MPI_COMM_WORLD (so aorta's
 * collectives never match a caller's); node and cross are MPI_Comm_split of
 * it by rank / node_size and rank % node_size, keyed by rank, so group
 * ranks follow world ranks.  Every collective is nonblocking
 * (MPI_Iallgather, MPI_Ireduce_scatter_block, MPI_Iallreduce, MPI_Ibcast,
 * MPI_Ibarrier); the request lives in a malloc'd MPI_Request in
 * comm_req.impl until MPI_Test reports completion, and comm.c's wait turns
 * a hang into a timeout error.  Open MPI progresses nonblocking
 * collectives inside MPI calls, so on the CPU the overlap is only as good
 * as the polling; the point here is the semantics, which the GPU backend
 * shares.  Counts are passed as int: a buffer over INT_MAX floats is an
 * error (the CPU tests use tiny models).
 *
 * bf16 (comm.h's reduce dtype): MPI has no bf16 type, so a bf16 buffer
 * travels as MPI_UINT16_T and is summed by a user-defined, commutative
 * op whose every application adds two operands in fp32 and rounds once
 * (comm_bf16_sum_into), the semantics of NCCL's bf16 sum per step.  The
 * op is created once per process at the first comm_mpi_create and left to
 * MPI_Finalize.
 *
 * Built only with mpicc (make mpi-tests); the main build does not link MPI.
 */
#include "comm/comm.h"

#include <limits.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

static enum aorta_status mpi_err(struct aorta_error *e, int rc, const char *what, int rank)
{
	char msg[MPI_MAX_ERROR_STRING];
	int len = 0;
	if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS)
		snprintf(msg, sizeof(msg), "error %d", rc);
	return aorta_fail(e, AORTA_EGPU, NULL, 0, -1, "rank %d: %s: %s", rank, what, msg);
}

static MPI_Op bf16_sum_op = MPI_OP_NULL;

static void bf16_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	(void)dt;
	comm_bf16_sum_into(inout, in, (size_t)*len);
}

static MPI_Comm group_comm(const struct comm_group *g)
{
	return *(MPI_Comm *)g->impl;
}

static enum aorta_status mpi_start(struct comm_group *g, enum comm_coll coll, const void *send, void *recv,
				   size_t count, int root, struct comm_req *r, struct aorta_error *e)
{
	int rank = g->comm->rank;
	if (count > (size_t)INT_MAX || (coll == COMM_ALL_GATHER && count * (size_t)g->size > (size_t)INT_MAX))
		return aorta_fail(e, AORTA_EINTERNAL, NULL, 0, -1, "rank %d: %s of %zu floats at '%s' is too large for MPI",
				  rank, comm_coll_name(coll), count, r->phase);
	MPI_Request *req = xmalloc(sizeof(*req));
	MPI_Comm mc = group_comm(g);
	int n = (int)count, rc = MPI_SUCCESS;
	const int bf = r->dtype == COMM_BF16;
	MPI_Datatype rt = bf ? MPI_UINT16_T : MPI_FLOAT;
	MPI_Op sum = bf ? bf16_sum_op : MPI_SUM;
	switch (coll) {
	case COMM_ALL_GATHER:
		if (send == (const float *)recv + (size_t)g->rank * count)
			rc = MPI_Iallgather(MPI_IN_PLACE, 0, MPI_FLOAT, recv, n, MPI_FLOAT, mc, req);
		else
			rc = MPI_Iallgather(send, n, MPI_FLOAT, recv, n, MPI_FLOAT, mc, req);
		break;
	case COMM_REDUCE_SCATTER:
		rc = MPI_Ireduce_scatter_block(send, recv, n, rt, sum, mc, req);
		break;
	case COMM_ALL_REDUCE:
		rc = MPI_Iallreduce(send == recv ? MPI_IN_PLACE : send, recv, n, rt, sum, mc, req);
		break;
	case COMM_BROADCAST:
		rc = MPI_Ibcast(recv, n, MPI_FLOAT, root, mc, req);
		break;
	case COMM_BARRIER:
		rc = MPI_Ibarrier(mc, req);
		break;
	}
	if (rc != MPI_SUCCESS) {
		free(req);
		return mpi_err(e, rc, comm_coll_name(coll), rank);
	}
	r->impl = req;
	return AORTA_OK;
}

static enum aorta_status mpi_test(struct comm_req *r, int *done, struct aorta_error *e)
{
	MPI_Request *req = r->impl;
	int flag = 0, rc = MPI_Test(req, &flag, MPI_STATUS_IGNORE);
	if (rc != MPI_SUCCESS) {
		free(req);
		r->impl = NULL;
		return mpi_err(e, rc, comm_coll_name(r->coll), r->group->comm->rank);
	}
	if (flag) {
		free(req);
		r->impl = NULL;
	}
	*done = flag;
	return AORTA_OK;
}

static void mpi_abort(struct comm *c, int code)
{
	(void)c;
	MPI_Abort(MPI_COMM_WORLD, code);
}

static void mpi_destroy(struct comm *c)
{
	for (int i = 0; i < COMM_PG_COUNT; i++) {
		MPI_Comm *mc = c->groups[i].impl;
		if (mc) {
			MPI_Comm_free(mc);
			free(mc);
		}
	}
	free(c);
}

static const struct comm_ops mpi_ops = {
	.name = "mpi", .start = mpi_start, .test = mpi_test, .abort = mpi_abort, .destroy = mpi_destroy,
};

enum aorta_status comm_mpi_create(int node_size, struct comm **out, struct aorta_error *e)
{
	int inited = 0, rank = 0, size = 0, rc;
	*out = NULL;
	MPI_Initialized(&inited);
	if (!inited)
		return aorta_fail(e, AORTA_EINTERNAL, NULL, 0, -1, "comm_mpi_create: MPI is not initialized");
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	/* errors come back as codes, not as MPI's default abort */
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	if (bf16_sum_op == MPI_OP_NULL && (rc = MPI_Op_create(bf16_sum, 1, &bf16_sum_op)))
		return mpi_err(e, rc, "MPI_Op_create (bf16 sum)", rank);

	if (node_size <= 0) {
		MPI_Comm shm;
		if ((rc = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shm)))
			return mpi_err(e, rc, "MPI_Comm_split_type", rank);
		int local = 0;
		MPI_Comm_size(shm, &local);
		MPI_Comm_free(&shm);
		/* every rank must agree: take rank 0's node size */
		MPI_Bcast(&local, 1, MPI_INT, 0, MPI_COMM_WORLD);
		node_size = local;
	}
	if (size % node_size != 0)
		return aorta_fail(e, AORTA_EUSAGE, NULL, 0, -1,
				  "rank %d: node size %d does not divide the world size %d", rank, node_size, size);

	struct comm *c = xcalloc(1, sizeof(*c));
	c->ops = &mpi_ops;
	comm_init_groups(c, rank, size, node_size);
	for (int i = 0; i < COMM_PG_COUNT; i++)
		c->groups[i].impl = xcalloc(1, sizeof(MPI_Comm));
	/* world, node, cross, in that order; made counts those that exist */
	int made = 0;
	MPI_Comm *world = c->groups[COMM_PG_WORLD].impl;
	rc = MPI_Comm_dup(MPI_COMM_WORLD, world);
	if (!rc && ++made)
		rc = MPI_Comm_split(*world, rank / node_size, rank, c->groups[COMM_PG_NODE].impl);
	if (!rc && ++made)
		rc = MPI_Comm_split(*world, rank % node_size, rank, c->groups[COMM_PG_CROSS].impl);
	if (!rc)
		made++;
	if (rc) {
		enum aorta_status st = mpi_err(e, rc, "creating the process groups", rank);
		for (int i = 0; i < COMM_PG_COUNT; i++) {
			if (i < made)
				MPI_Comm_free(c->groups[i].impl);
			free(c->groups[i].impl);
		}
		free(c);
		return st;
	}
	for (int i = 0; i < COMM_PG_COUNT; i++)
		MPI_Comm_set_errhandler(*(MPI_Comm *)c->groups[i].impl, MPI_ERRORS_RETURN);
	*out = c;
	return AORTA_OK;
}
