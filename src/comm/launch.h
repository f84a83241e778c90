/*
 * launch.h - how a GPU job (aorta train, the distributed hwq workloads)
 * becomes ranks, one GPU each (launch_gpu.c; GPU builds only, in
 * libaorta-gpu.so).  aorta train's own entry is train/launch_train.h.
 *
 * Two modes, chosen from the environment:
 *   - under a launcher (mpirun, srun: OMPI_COMM_WORLD_SIZE, PMI_SIZE,
 *     PMIX_SIZE, or SLURM_NTASKS with SLURM_STEP_ID, giving more than one
 *     process): one rank per process over MPI (Open MPI).  MPI_Init; rank 0
 *     makes the NCCL unique id and broadcasts it; each process takes the
 *     GPU of its node-local rank (MPI_COMM_TYPE_SHARED split), and the node
 *     size is the number of ranks sharing memory (the same on every node,
 *     ranks placed by node: mpirun's default --map-by slot).  This is how
 *     users go multi-node.
 *   - otherwise: this process drives every visible GPU (CUDA_VISIBLE_DEVICES
 *     respected) with one thread each; world = node = the device count; the
 *     unique id is shared in memory.  --device N runs world 1 on GPU N.
 * Either way each rank makes its NCCL comm (comm_nccl_create_rank), runs
 * the rank function, and destroys the comm.
 *
 * Errors: a rank's error fails the whole job without a hang.  In thread
 * mode the other ranks' comm waits end with "abandoned: rank R failed" at
 * their next poll, and a watchdog aborts the communicators of ranks that
 * do not return within 10 s (a rank blocked in a stream synchronize on a
 * collective that will never finish).  In MPI mode the failing rank sends
 * its rank number to every other rank, whose comm waits poll for it.  The
 * job's error is the first failing rank's, prefixed with "rank R: " where
 * the message does not name a rank already.
 *
 * Results: thread mode returns rank 0's result; in MPI mode each process
 * returns its own (every process runs the caller's code).
 */
#ifndef AORTA_COMM_LAUNCH_H
#define AORTA_COMM_LAUNCH_H

#include <stddef.h>

#include "base/error.h"

struct comm;

struct launch_rank {
	int rank, size, node_size;   /* the comm's world */
	int device;                  /* GPU ordinal in this process, current for the calling thread */
	int mpi;                     /* 1: one rank per process under MPI */
};

/* A rank's work: `result` is this rank's result slot (result_size bytes). */
typedef enum aorta_status (*launch_rank_fn)(void *arg, struct comm *comm, const struct launch_rank *lr,
					    void *result, struct aorta_error *e);

/* The world size a launcher announces in the environment, 1 if none. */
int launch_env_world_size(void);

/* Runs fn on every rank of the job (mode chosen as above).  device >= 0:
 * thread mode on that one GPU (world 1).  timeout_ms > 0 overrides the
 * comm timeout (else AORTA_COMM_TIMEOUT_MS / HANG_TIMEOUT / 300 s).
 * result (result_size bytes) receives rank 0's result (thread mode) or
 * this process's (MPI mode).  Thread-unsafe (sets environment defaults). */
enum aorta_status launch_ranks(int device, long long timeout_ms, launch_rank_fn fn, void *arg, void *result,
			       size_t result_size, struct aorta_error *e);

#endif
