/*
 * tp_gpu_int.h - private to the tune-tp GPU side (src/tp/tp_*_gpu.c): the
 * session's types and the functions its three files share.
 *   tp_session_gpu.c  the session: one worker thread per GPU, the job
 *                     dispatcher, the cross-GPU barrier, communicators,
 *                     tp_gpu_open / tp_gpu_measure / tp_gpu_close
 *   tp_ops_gpu.c      the operators: cross-rank events, the cuBLASLt plan
 *                     cache, GEMMs, collectives, the four methods (body_*)
 *   tp_check_gpu.c    the checks: output poisoning, comparison with the
 *                     unsplit GEMM + NCCL reference, configuration validation
 * tp_session_gpu.c's opening comment describes the design.
 */
#ifndef AORTA_TP_GPU_INT_H
#define AORTA_TP_GPU_INT_H

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "comm/comm_cache.h"
#include "comm/nccl_comm.h"
#include "gpu/blas.h"
#include "gpu/check.h"
#include "gpu/cupti.h"
#include "gpu/gpu.h"
#include "tp/tp.h"
#include "tp/tp_gpu.h"

#define MAXR TPK_MAXR
_Static_assert(MAXR <= COMM_CACHE_RANKS, "the communicator cache holds COMM_CACHE_RANKS ranks");
#define NCOMP 3
#define WS_BYTES ((size_t)32 << 20)
#define MAX_PLANS 48
#define MAX_SPLITS 64
#define NJOIN (NCOMP + 2)
#define XSLOTS 256
#define NHEUR 8 /* cuBLASLt candidates timed per plan */

enum buf_id { B_A, B_B, B_Y, B_P, B_C, B_CO, B_R1, B_R2, NBUF };
enum kind { K_AG, K_RS, K_BULK_AG, K_BULK_RS };
enum job_id { J_SETUP, J_COMMINIT, J_COMMFREE, J_PREP, J_CHECK, J_RUN, J_FINALIZE, J_TEARDOWN };
enum run_what { R_GEMM, R_COMM, R_SERIAL, R_CFG };

/* the problem in elements, derived once per measure */
struct dims {
	enum kind kind;
	int tp, dt;
	size_t esz;
	long long m, n, k, mloc;
	long long cfull, cloc; /* collective elements: full tensor, per rank */
	long long need[NBUF];  /* elements per buffer */
};

struct plan {
	long long rows, n, k;
	int dt, batch, smt;
	long long sa, sc;
	cublasLtMatmulDesc_t desc;
	cublasLtMatrixLayout_t lw, la, lc;
	cublasLtMatmulAlgo_t algo;
	int usable;
};

struct tp_session;

struct rank_ctx {
	struct tp_session *s;
	int rank;
	pthread_t th;
	int started;
	gpuStream_t main, comm, send, comp[NCOMP];
	cublasLtHandle_t lt;
	void *ws[NCOMP + 1];        /* 0: main, 1 + j: comp[j] */
	void *ws_tune;              /* workspace of the plan trials (stream tune) */
	gpuStream_t tune;          /* plan trials only: no dependency on anything */
	gpuEvent_t tt[2];
	void *buf[NBUF];
	size_t cap[NBUF];           /* bytes */
	unsigned *cmp;              /* 2 words per compare */
	ncclComm_t nccl;            /* default communicator (NULL at tp 1) */
	gpuEvent_t fork, done, sent, join[NJOIN], step[MAX_SPLITS];
	gpuEvent_t *tev;           /* 2 per timed iteration */
	int ntev;
	struct plan plans[MAX_PLANS];
	int nplans;
	/* cross-rank events (see "Ordering"): slot n % XSLOTS holds this
	 * rank's n-th posted event; posted = the highest n recorded, cons[q]
	 * = the highest n of this rank's that rank q has waited on */
	gpuEvent_t xev[XSLOTS];
	long long xseq, posted, cons[MAXR];
	float *times;               /* ms per timed iteration */
	double chk_err;             /* max |out - ref| / max |ref| on this rank */
	int finalized;              /* J_FINALIZE ran: teardown only destroys the communicators */
	enum aorta_status st;
	struct aorta_error err;
};


struct job {
	enum job_id id;
	const struct dims *d;
	const struct tp_cfg *cfg;
	int cc;                     /* index into s->cc, -1: default communicator */
	enum run_what what;
	int n, timed;
	uint64_t seed;
	ncclUniqueId uid;
	int num_sm, cga;
	int only;                   /* J_TEARDOWN: the one rank that acts */
};

struct tp_session {
	int tp, sm_count;
	long long max_elems;
	struct rank_ctx r[MAXR];
	pthread_mutex_t mu;
	pthread_cond_t work, finished;
	unsigned gen;
	int ndone, quit;
	struct job job;
	volatile int abort;
	int broken;
	struct comm_cache cc;       /* SM-limited communicators (key max_ctas = num_sm) */
	long long timeout_ns;
};

/* ---- shared between the three files ---------------------------------------- */

long long tpg_now_ns(void);
enum aorta_status tpg_gemm(struct rank_ctx *rc, const struct dims *d, int widx, gpuStream_t st, const void *A,
			      const void *B, void *Y, long long rows, int smt);
enum aorta_status tpg_body(struct rank_ctx *rc, const struct dims *d, enum run_what w, const struct tp_cfg *cfg,
			      int cc);
enum aorta_status tpg_xpost(struct rank_ctx *rc, gpuStream_t st, long long *seq);
char *tpg_bp(struct rank_ctx *rc, enum buf_id b, long long elems, const struct dims *d);
enum aorta_status tpg_xwait(struct rank_ctx *rc, int peer, long long n, gpuStream_t st);
enum aorta_status tpg_gemm_op(struct rank_ctx *rc, const struct dims *d, gpuStream_t st, int widx, void *Y);
enum aorta_status tpg_plan_get(struct rank_ctx *rc, const struct dims *d, long long rows, int batch, long long sa,
				  long long sc, int smt, struct plan **out);
enum aorta_status tpg_coll_rs(struct rank_ctx *rc, const struct dims *d, ncclComm_t c, gpuStream_t st,
				 const void *send, void *recv, long long count);
enum aorta_status tpg_coll_ag(struct rank_ctx *rc, const struct dims *d, ncclComm_t c, gpuStream_t st,
				 const void *send, void *recv, long long count);
void tpg_plan_free(struct plan *p);
enum aorta_status tpg_barrier(struct rank_ctx *rc);
enum aorta_status tpg_wait_gpu(struct rank_ctx *rc);
const char *tpg_method_str(enum tp_method m);
enum aorta_status tpg_validate(const struct tp_session *s, const struct tp_shape *sh, const struct tp_cfg *cfg,
				  struct dims *d, struct aorta_error *e);
enum aorta_status tpg_job_check(struct rank_ctx *rc, const struct job *j);

#endif
