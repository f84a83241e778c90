/*
 * launch_gpu.c - the ways a GPU job runs its ranks (see launch.h): a
 * thread per visible GPU in one process; a process per GPU under mpirun /
 * srun with NCCL bootstrapped through MPI; or a process per GPU under
 * torchrun (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT), with
 * NCCL bootstrapped through NCCL_COMM_ID: rank 0's ncclCommInitRank opens
 * the bootstrap root at MASTER_ADDR:MASTER_PORT+1 (torchrun's own store
 * holds MASTER_PORT) and every rank derives the same unique id from that
 * address (NCCL's bootstrapGetUniqueId / ncclCommInitRankDev; an
 * NCCL_COMM_ID already set wins).  Under torchrun a failing rank exits
 * non-zero and torchrun ends the others, as it does for PyTorch jobs.
 *
 * Design.  Both modes end in the same per-rank sequence: make the GPU
 * current, comm_nccl_create_rank, the rank function, comm_destroy.  What
 * differs is how the unique id travels (memory or MPI_Bcast) and how a
 * failure reaches the other ranks:
 *   threads  an atomic "first failed rank" that every comm wait polls
 *            (comm_nccl_opts.abort_check), plus a watchdog in the calling
 *            thread that aborts the communicators of ranks still running
 *            10 s after a failure (a rank blocked in a stream synchronize
 *            behind a collective that cannot finish never polls);
 *   MPI      the failing rank sends its number to every rank on a
 *            duplicate of MPI_COMM_WORLD; each rank keeps one MPI_Irecv
 *            posted and its comm waits MPI_Test it.  MPI is only touched by
 *            the thread that called MPI_Init (MPI_THREAD_FUNNELED).
 * No MPI_Abort and no exit: every rank returns its error, the command
 * prints it, and mpirun sees the non-zero exit codes.
 *
 * MPI is optional at build time: the Makefile adds -DAORTA_MPI=1 and
 * Open MPI's flags (mpicc --showme) when mpicc is found; without them the
 * launcher mode is an error naming the fix.  libaorta-gpu.so is dlopen'ed
 * RTLD_LOCAL, so libmpi is re-opened RTLD_GLOBAL before MPI_Init: Open MPI
 * loads its components as plug-ins that expect its symbols global.
 */
#include "comm/launch.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/plugin.h"
#include "comm/nccl_comm.h"
#include "gpu/gpu.h"

#ifdef AORTA_MPI
#include <mpi.h>
#endif


#define LAUNCH_MAX_THREADS 64
#define WATCHDOG_GRACE_NS (10LL * 1000000000LL)

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* torchrun / torch.distributed.run: RANK and WORLD_SIZE with a rendezvous
 * address, and no MPI launcher around it. */
static int torchrun_world(void)
{
	int n = env_positive_int("WORLD_SIZE");
	const char *r = getenv("RANK");
	if (n < 1 || !r || !*r || !getenv("MASTER_ADDR") || !getenv("MASTER_PORT"))
		return 0;
	return n;
}

int launch_env_world_size(void)
{
	int n = mpi_launcher_world_size();
	if (n > 1)
		return n;
	if ((n = torchrun_world()) > 0)
		return n;
	return 1;
}

/* The job's error: the failing rank's, "rank R: " prefixed unless the
 * message names a rank already. */
static enum aorta_status job_error(struct aorta_error *e, const struct aorta_error *src, enum aorta_status st,
				   int rank)
{
	if (!e)
		return st;
	*e = *src;
	e->code = st;
	if (strncmp(src->msg, "rank ", 5) != 0)
		snprintf(e->msg, sizeof(e->msg), "rank %d: %.1000s", rank, src->msg);
	return st;
}

/* ---- thread per GPU ------------------------------------------------------- */

struct tshared {
	ncclUniqueId id;
	int world;
	struct comm_nccl_opts copts;
	launch_rank_fn fn;
	void *arg;
	char *results;
	size_t result_size;
	atomic_int failed;            /* first failed rank, -1 none */
	atomic_int ndone;
	pthread_mutex_t mu;           /* guards comms[] against the watchdog */
	struct comm *comms[LAUNCH_MAX_THREADS];
	struct aorta_error errs[LAUNCH_MAX_THREADS];
	enum aorta_status sts[LAUNCH_MAX_THREADS];
	int devices[LAUNCH_MAX_THREADS];
};

struct tctx {
	struct tshared *sh;
	int rank;
};

static int thread_abort_check(void *arg)
{
	const struct tctx *t = arg;
	int f = atomic_load(&t->sh->failed);
	return f >= 0 && f != t->rank ? f : -1;
}

static enum aorta_status thread_rank(struct tctx *t, struct aorta_error *e)
{
	struct tshared *sh = t->sh;
	int r = t->rank, dev = sh->devices[r];
	struct comm_nccl_opts co = sh->copts;
	struct comm *c = NULL;

	co.abort_check = thread_abort_check;
	co.abort_arg = t;
	enum aorta_status st = comm_nccl_create_rank(r, sh->world, sh->world, &sh->id, dev, &co, &c, e);
	if (st)
		return st;
	pthread_mutex_lock(&sh->mu);
	sh->comms[r] = c;
	pthread_mutex_unlock(&sh->mu);

	struct launch_rank lr = { r, sh->world, sh->world, dev, 0 };
	st = sh->fn(sh->arg, c, &lr, sh->results + (size_t)r * sh->result_size, e);
	if (st) {
		int none = -1;
		atomic_compare_exchange_strong(&sh->failed, &none, r);
		comm_nccl_abort(c); /* the others stop waiting for this rank */
	}
	pthread_mutex_lock(&sh->mu);
	sh->comms[r] = NULL;
	pthread_mutex_unlock(&sh->mu);
	comm_destroy(c);
	return st;
}

static void *thread_main(void *p)
{
	struct tctx *t = p;
	struct tshared *sh = t->sh;
	int r = t->rank;
	enum aorta_status st = thread_rank(t, &sh->errs[r]);
	sh->sts[r] = st;
	if (st) {
		int none = -1;
		atomic_compare_exchange_strong(&sh->failed, &none, r);
	}
	atomic_fetch_add(&sh->ndone, 1);
	return NULL;
}

static enum aorta_status launch_threads(int device, const struct comm_nccl_opts *copts, launch_rank_fn fn,
					void *arg, void *result, size_t result_size, struct aorta_error *e)
{
	int ndev = 0;
	enum aorta_status st = gpu_device_count(&ndev, e);
	if (st)
		return st;
	if (ndev == 0)
		return aorta_fail(e, AORTA_EGPU, NULL, 0, -1, "no GPU visible (CUDA_VISIBLE_DEVICES %s%s%s)",
				  getenv("CUDA_VISIBLE_DEVICES") ? "='" : "unset",
				  getenv("CUDA_VISIBLE_DEVICES") ? getenv("CUDA_VISIBLE_DEVICES") : "",
				  getenv("CUDA_VISIBLE_DEVICES") ? "'" : "");
	if (device >= ndev)
		return aorta_fail(e, AORTA_EUSAGE, NULL, 0, -1, "--device %d: only %d GPU%s visible", device, ndev,
				  ndev == 1 ? "" : "s");
	int world = device >= 0 ? 1 : ndev;
	if (world > LAUNCH_MAX_THREADS)
		world = LAUNCH_MAX_THREADS;

	struct tshared *sh = xcalloc(1, sizeof(*sh));
	struct tctx ctx[LAUNCH_MAX_THREADS];
	pthread_t th[LAUNCH_MAX_THREADS];
	int started = 0;

	if ((st = comm_nccl_unique_id(&sh->id, e)))
		goto out;
	sh->world = world;
	sh->copts = *copts;
	sh->fn = fn;
	sh->arg = arg;
	sh->result_size = result_size;
	sh->results = xcalloc((size_t)world, result_size ? result_size : 1);
	atomic_init(&sh->failed, -1);
	atomic_init(&sh->ndone, 0);
	pthread_mutex_init(&sh->mu, NULL);
	for (int r = 0; r < world; r++)
		sh->devices[r] = device >= 0 ? device : r;

	for (int r = 0; r < world; r++) {
		ctx[r] = (struct tctx){ sh, r };
		if (pthread_create(&th[r], NULL, thread_main, &ctx[r]) != 0) {
			/* the started ranks wait for this one in ncclCommInitRank:
			 * fail it so they give up at their next poll */
			sh->sts[r] = aorta_fail(&sh->errs[r], AORTA_EINTERNAL, NULL, 0, -1,
						"rank %d: cannot start a thread", r);
			int none = -1;
			atomic_compare_exchange_strong(&sh->failed, &none, r);
			break;
		}
		started++;
	}

	/* watchdog: wait for the ranks; abort what still runs well after a failure */
	long long t_fail = 0;
	int killed = 0;
	while (atomic_load(&sh->ndone) < started) {
		if (!killed && atomic_load(&sh->failed) >= 0) {
			long long t = now_ns();
			if (!t_fail)
				t_fail = t;
			else if (t - t_fail > WATCHDOG_GRACE_NS) {
				pthread_mutex_lock(&sh->mu);
				for (int r = 0; r < world; r++)
					if (sh->comms[r])
						comm_nccl_abort(sh->comms[r]);
				pthread_mutex_unlock(&sh->mu);
				killed = 1;
			}
		}
		struct timespec ts = { 0, 5000000 };
		nanosleep(&ts, NULL);
	}
	for (int r = 0; r < started; r++)
		pthread_join(th[r], NULL);

	int f = atomic_load(&sh->failed);
	if (f >= 0) {
		st = job_error(e, &sh->errs[f], sh->sts[f] ? sh->sts[f] : AORTA_EINTERNAL, f);
	} else {
		st = AORTA_OK;
		if (result && result_size)
			memcpy(result, sh->results, result_size);
	}
	pthread_mutex_destroy(&sh->mu);
out:
	free(sh->results);
	free(sh);
	return st;
}

/* ---- a process per GPU under MPI ---------------------------------------- */

#ifdef AORTA_MPI
#define NOTIFY_TAG 7301

struct mpi_watch {
	MPI_Comm comm;        /* a duplicate of MPI_COMM_WORLD for failure notices */
	MPI_Request rq;
	int who;              /* the notice's payload: the failed rank */
	int failed;           /* -1, or the rank that failed (cached) */
};

static int mpi_abort_check(void *arg)
{
	struct mpi_watch *w = arg;
	if (w->failed < 0 && w->rq != MPI_REQUEST_NULL) {
		int flag = 0;
		if (MPI_Test(&w->rq, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && flag)
			w->failed = w->who;
	}
	return w->failed;
}

static enum aorta_status mpi_fail(struct aorta_error *e, int rc, int rank, const char *what)
{
	char msg[MPI_MAX_ERROR_STRING];
	int len = 0;
	if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS)
		snprintf(msg, sizeof(msg), "error %d", rc);
	return aorta_fail(e, AORTA_EGPU, NULL, 0, -1, "rank %d: %s: %s", rank, what, msg);
}

/* libaorta-gpu.so and with it libmpi were loaded RTLD_LOCAL: make libmpi's
 * symbols global so Open MPI's own plug-ins resolve them. */
static void mpi_promote_global(void)
{
	union {
		int (*f)(int *, char ***);
		void *p;
	} u = { MPI_Init };
	Dl_info di;
	if (dladdr(u.p, &di) && di.dli_fname)
		(void)dlopen(di.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
}

/* Every rank passes its setup status; all learn the worst one and the
 * lowest rank that had it, so no rank goes on into NCCL alone. */
static enum aorta_status mpi_agree(int rank, enum aorta_status mine, struct aorta_error *e, const char *stage)
{
	int in[2] = { (int)mine, -rank }, out[2] = { 0, 0 };
	/* MPI_MAXLOC on (status, -rank): the worst status, lowest rank */
	int rc = MPI_Allreduce(in, out, 1, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD);
	if (rc != MPI_SUCCESS)
		return mine ? mine : mpi_fail(e, rc, rank, "MPI_Allreduce (setup status)");
	if (out[0] == 0 || mine)
		return mine;
	return aorta_fail(e, (enum aorta_status)out[0], NULL, 0, -1, "rank %d: %s: rank %d failed", rank, stage,
			  -out[1]);
}

/* This rank failed: tell the others (their abort checks see it), waiting
 * at most 5 s for the notices to leave. */
static void notify_failure(struct mpi_watch *w, int rank, int size)
{
	MPI_Request *rq = xcalloc((size_t)size, sizeof(*rq));
	int n = 0;
	for (int p = 0; p < size; p++)
		if (p != rank && MPI_Isend(&rank, 1, MPI_INT, p, NOTIFY_TAG, w->comm, &rq[n]) == MPI_SUCCESS)
			n++;
	/* small messages go eagerly; do not wait on a stuck peer for long */
	long long deadline = now_ns() + 5000000000LL;
	int all = 0;
	while (!all && now_ns() < deadline) {
		if (MPI_Testall(n, rq, &all, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
			break;
		if (!all) {
			struct timespec ts = { 0, 100000 };
			nanosleep(&ts, NULL);
		}
	}
	free(rq);
}

static enum aorta_status launch_mpi(const struct comm_nccl_opts *copts, launch_rank_fn fn, void *arg,
				    void *result, struct aorta_error *e)
{
	int inited = 0, own = 0, rank = 0, size = 0, rc, prov = 0;
	enum aorta_status st = AORTA_OK;
	struct mpi_watch w = { MPI_COMM_NULL, MPI_REQUEST_NULL, -1, -1 };
	struct comm *c = NULL;

	mpi_promote_global();
	MPI_Initialized(&inited);
	if (!inited) {
		if ((rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &prov)) != MPI_SUCCESS)
			return aorta_fail(e, AORTA_EGPU, NULL, 0, -1, "MPI_Init_thread failed (error %d)", rc);
		own = 1;
	}
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);

	/* node: the ranks sharing memory with this one */
	MPI_Comm shm = MPI_COMM_NULL;
	int local_rank = 0, local_size = 1, ndev = 0, device = 0;
	if ((rc = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shm))) {
		st = mpi_fail(e, rc, rank, "MPI_Comm_split_type (node-local ranks)");
	} else {
		MPI_Comm_rank(shm, &local_rank);
		MPI_Comm_size(shm, &local_size);
		MPI_Comm_free(&shm);
	}
	int mm[3] = { local_size, -local_size, local_rank == rank % local_size }, agg[3] = { 0, 0, 0 };
	if (!st && (rc = MPI_Allreduce(mm, agg, 3, MPI_INT, MPI_MIN, MPI_COMM_WORLD)))
		st = mpi_fail(e, rc, rank, "MPI_Allreduce (node sizes)");
	if (!st && (agg[0] != -agg[1] || size % local_size))
		st = aorta_fail(e, AORTA_EUSAGE, NULL, 0, -1,
				"rank %d: nodes run different numbers of ranks (%d to %d); run the same number on each",
				rank, agg[0], -agg[1]);
	if (!st && !agg[2])
		st = aorta_fail(e, AORTA_EUSAGE, NULL, 0, -1,
				"rank %d: ranks are not placed node by node (node-local rank %d of %d); "
				"use mpirun's default --map-by slot (or srun's block distribution)",
				rank, local_rank, local_size);
	if (!st)
		st = gpu_device_count(&ndev, e);
	if (!st && ndev < local_size)
		st = aorta_fail(e, AORTA_EGPU, NULL, 0, -1, "rank %d: %d ranks on this node but %d GPU%s visible", rank,
				local_size, ndev, ndev == 1 ? "" : "s");
	device = ndev ? local_rank % ndev : 0;
	if ((st = mpi_agree(rank, st, e, "setup")))
		goto out;

	/* the unique id: rank 0 makes it, with its status, for everyone */
	struct {
		int st;
		ncclUniqueId id;
	} idmsg;
	memset(&idmsg, 0, sizeof(idmsg));
	if (rank == 0)
		idmsg.st = (int)comm_nccl_unique_id(&idmsg.id, e);
	if ((rc = MPI_Bcast(&idmsg, (int)sizeof(idmsg), MPI_BYTE, 0, MPI_COMM_WORLD))) {
		st = mpi_fail(e, rc, rank, "MPI_Bcast (NCCL unique id)");
		goto out;
	}
	if (idmsg.st) {
		st = rank == 0 ? (enum aorta_status)idmsg.st
			       : aorta_fail(e, (enum aorta_status)idmsg.st, NULL, 0, -1,
					    "rank %d: rank 0 could not make the NCCL unique id", rank);
		goto out;
	}

	if ((rc = MPI_Comm_dup(MPI_COMM_WORLD, &w.comm))) {
		st = mpi_fail(e, rc, rank, "MPI_Comm_dup");
		goto out;
	}
	MPI_Comm_set_errhandler(w.comm, MPI_ERRORS_RETURN);
	if ((rc = MPI_Irecv(&w.who, 1, MPI_INT, MPI_ANY_SOURCE, NOTIFY_TAG, w.comm, &w.rq))) {
		st = mpi_fail(e, rc, rank, "MPI_Irecv (failure notices)");
		goto out;
	}

	struct comm_nccl_opts co = *copts;
	co.abort_check = mpi_abort_check;
	co.abort_arg = &w;
	st = comm_nccl_create_rank(rank, size, local_size, &idmsg.id, device, &co, &c, e);
	if (!st) {
		struct launch_rank lr = { rank, size, local_size, device, 1 };
		st = fn(arg, c, &lr, result, e);
	}
	if (st && mpi_abort_check(&w) < 0) /* this rank failed first (as far as it knows) */
		notify_failure(&w, rank, size);
	if (c) {
		if (st)
			comm_nccl_abort(c);
		comm_destroy(c);
	}
out:
	if (w.rq != MPI_REQUEST_NULL) {
		MPI_Cancel(&w.rq);
		MPI_Wait(&w.rq, MPI_STATUS_IGNORE);
	}
	if (w.comm != MPI_COMM_NULL)
		MPI_Comm_free(&w.comm);
	if (own)
		MPI_Finalize();
	return st;
}
#endif

/* ---- a process per GPU under torchrun -------------------------------------- */

static int env_int(const char *name, int dflt)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return dflt;
	char *end;
	long x = strtol(v, &end, 10);
	return *end == '\0' && x >= 0 && x < 1 << 24 ? (int)x : -1;
}

static enum aorta_status launch_torchrun(const struct comm_nccl_opts *copts, launch_rank_fn fn, void *arg,
					 void *result, struct aorta_error *e)
{
	int size = torchrun_world(), rank = env_int("RANK", -1), local_rank = env_int("LOCAL_RANK", 0);
	int local_size = env_int("LOCAL_WORLD_SIZE", size), port = env_int("MASTER_PORT", -1), ndev = 0;
	const char *addr = getenv("MASTER_ADDR");
	struct comm *c = NULL;

	if (rank < 0 || rank >= size || local_rank < 0 || local_size < 1 || port < 1 || port > 65534)
		return aorta_fail(e, AORTA_EUSAGE, NULL, 0, -1,
				  "torchrun environment: RANK=%s WORLD_SIZE=%d LOCAL_RANK=%s LOCAL_WORLD_SIZE=%s "
				  "MASTER_PORT=%s: expected 0 <= RANK < WORLD_SIZE, LOCAL_RANK >= 0, a port below 65535",
				  getenv("RANK"), size, getenv("LOCAL_RANK") ? getenv("LOCAL_RANK") : "(unset)",
				  getenv("LOCAL_WORLD_SIZE") ? getenv("LOCAL_WORLD_SIZE") : "(unset)",
				  getenv("MASTER_PORT"));
	enum aorta_status st = gpu_device_count(&ndev, e);
	if (st)
		return st;
	if (ndev < 1)
		return aorta_fail(e, AORTA_EGPU, NULL, 0, -1, "rank %d: no GPU visible (CUDA_VISIBLE_DEVICES %s%s%s)",
				  rank, getenv("CUDA_VISIBLE_DEVICES") ? "='" : "unset",
				  getenv("CUDA_VISIBLE_DEVICES") ? getenv("CUDA_VISIBLE_DEVICES") : "",
				  getenv("CUDA_VISIBLE_DEVICES") ? "'" : "");
	if (local_rank >= ndev && ndev > 1)
		return aorta_fail(e, AORTA_EGPU, NULL, 0, -1, "rank %d: LOCAL_RANK %d but %d GPUs visible", rank,
				  local_rank, ndev);
	int device = ndev > 1 ? local_rank : 0; /* one GPU visible: torchrun users often pin each worker */
	if (!getenv("NCCL_COMM_ID")) {
		char id[320];
		snprintf(id, sizeof(id), "%s:%d", addr, port + 1);
		setenv("NCCL_COMM_ID", id, 1);
	}
	ncclUniqueId uid;
	if ((st = comm_nccl_unique_id(&uid, e)))
		return st;
	st = comm_nccl_create_rank(rank, size, local_size, &uid, device, copts, &c, e);
	if (!st) {
		struct launch_rank lr = { rank, size, local_size, device, 1 };
		st = fn(arg, c, &lr, result, e);
	}
	if (c) {
		if (st)
			comm_nccl_abort(c);
		comm_destroy(c);
	}
	return st;
}

/* ---- entry points -------------------------------------------------------- */

enum aorta_status launch_ranks(int device, long long timeout_ms, launch_rank_fn fn, void *arg, void *result,
			       size_t result_size, struct aorta_error *e)
{
	struct comm_nccl_opts co;

	comm_nccl_env_defaults();
	comm_nccl_opts_from_env(&co);
	if (timeout_ms > 0)
		co.timeout_ms = timeout_ms;
	int world = launch_env_world_size();
	if (world > 1 && mpi_launcher_world_size() <= 1) {
		(void)device;
		return launch_torchrun(&co, fn, arg, result, e);
	}
	if (world > 1) {
#ifdef AORTA_MPI
		(void)device; /* each process takes its node-local rank's GPU */
		(void)result_size;
		return launch_mpi(&co, fn, arg, result, e);
#else
		return aorta_fail(e, AORTA_EUSAGE, NULL, 0, -1,
				  "started by a launcher with %d processes, but this libaorta-gpu.so was built without "
				  "MPI (install Open MPI's mpicc and rebuild); without mpirun, aorta train drives every "
				  "visible GPU from one process",
				  world);
#endif
	}
	return launch_threads(device, &co, fn, arg, result, result_size, e);
}
