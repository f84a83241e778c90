/*
 * check.h - the one checked-call style for the GPU libraries, after NCCL's
 * own checks.h: every CUDA runtime, cuBLAS/cuBLASLt and NCCL call whose
 * return code matters goes through one of these macros, which fill the
 * error record (base/error.h) with
 *   "src/x.c:42: <the call as written>: <the library's name and message>"
 * and either give the status back (expression), return it, or set a status
 * variable and jump to the function's one cleanup label.
 *
 *                 expression              return on failure         goto label on failure
 *   runtime       GPU_CALL(e, call)       GPU_CHECK(e, call)        GPU_CHECK_GOTO(e, st, call, label)   (gpu.h)
 *   cuBLAS(Lt)    GPU_BLAS(e, call)       GPU_BLAS_CHECK(e, call)   GPU_BLAS_GOTO(e, st, call, label)
 *   NCCL          GPU_NCCL(e, nc, call)   GPU_NCCL_CHECK(e, nc, call) GPU_NCCL_GOTO(e, st, nc, call, label)
 *   aorta_status  -                       AORTA_TRY(call)           AORTA_TRY_GOTO(st, call, label)
 * and, for a return code already in hand, GPU_RESULT(e, what, err) and
 * GPU_NCCL_RESULT(e, comm, what, result) (expressions).
 *
 * The NCCL forms take the communicator the call concerns (or NULL): its
 * ncclGetLastError text, when there is one, is appended.  ncclInProgress (a
 * non-blocking communicator's call still running) counts as success; the
 * caller waits on ncclCommGetAsyncError where it needs completion.
 * e may be NULL everywhere (the status still comes back).  Nothing prints.
 *
 * The library codes travel as int so this header needs neither cublas_v2.h
 * nor nccl.h; gpu/check.c turns them into text.  A HIP build maps them to
 * hipBLAS and RCCL there.
 */
#ifndef AORTA_GPU_CHECK_H
#define AORTA_GPU_CHECK_H

#include "gpu/gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* AORTA_OK for CUBLAS_STATUS_SUCCESS; else fills e with
 * "file:line: what: CUBLAS_STATUS_X: <message>" and returns AORTA_EGPU. */
enum aorta_status gpu_blas_status_(int status, struct aorta_error *e, const char *what, const char *file,
				   int line);
/* AORTA_OK for ncclSuccess and ncclInProgress; else fills e with
 * "file:line: what: <ncclGetErrorString>[: <ncclGetLastError(comm)>]"
 * (comm: an ncclComm_t or NULL) and returns AORTA_EGPU. */
enum aorta_status gpu_nccl_status_(int result, void *comm, struct aorta_error *e, const char *what,
				   const char *file, int line);
/* As gpu_nccl_status_, but always a failure (ncclInProgress included): for
 * code that has already decided the result is an error. */
enum aorta_status gpu_nccl_fail_(int result, void *comm, struct aorta_error *e, const char *what,
				 const char *file, int line);
/* Prefixes e's message (already filled) with "rank R: " and returns st
 * (nothing changes when st is AORTA_OK); for errors raised on one rank of
 * several. */
enum aorta_status gpu_error_rank(struct aorta_error *e, enum aorta_status st, int rank);

#define GPU_BLAS(e, call) gpu_blas_status_((int)(call), (e), #call, __FILE__, __LINE__)
#define GPU_BLAS_CHECK(e, call) do { \
	if (GPU_BLAS((e), call) != AORTA_OK) \
		return AORTA_EGPU; } while (0)
#define GPU_BLAS_GOTO(e, st, call, label) do { \
	if (GPU_BLAS((e), call) != AORTA_OK) { \
		(st) = AORTA_EGPU; goto label; } } while (0)

#define GPU_NCCL(e, comm, call) gpu_nccl_status_((int)(call), (void *)(comm), (e), #call, __FILE__, __LINE__)
#define GPU_NCCL_CHECK(e, comm, call) do { \
	if (GPU_NCCL((e), (comm), call) != AORTA_OK) \
		return AORTA_EGPU; } while (0)
#define GPU_NCCL_GOTO(e, st, comm, call, label) do { \
	if (GPU_NCCL((e), (comm), call) != AORTA_OK) { \
		(st) = AORTA_EGPU; goto label; } } while (0)

/* a runtime result already in hand (code that first branches on, say,
 * gpuErrorNotReady), the call named in `what` */
#define GPU_RESULT(e, what, err) gpu_status_((err), (e), (what), __FILE__, __LINE__)

/* an NCCL result already in hand (code that first branches on
 * ncclInProgress), the call named in `what` */
#define GPU_NCCL_RESULT(e, comm, what, result) \
	gpu_nccl_status_((int)(result), (void *)(comm), (e), (what), __FILE__, __LINE__)
/* the same, always AORTA_EGPU (the caller has decided it failed) */
#define GPU_NCCL_FAIL(e, comm, what, result) \
	gpu_nccl_fail_((int)(result), (void *)(comm), (e), (what), __FILE__, __LINE__)

/* calls that already return enum aorta_status (and fill e themselves) */
#define AORTA_TRY(call) do { \
	enum aorta_status t_ = (call); \
	if (t_ != AORTA_OK) \
		return t_; } while (0)
#define AORTA_TRY_GOTO(st, call, label) do { \
	if (((st) = (call)) != AORTA_OK) \
		goto label; } while (0)

#ifdef __cplusplus
}
#endif

#endif
