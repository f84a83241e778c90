/*
 * check.c - the text of cuBLAS/cuBLASLt and NCCL return codes for the
 * checked-call macros of check.h.
 */
#include <stdio.h>

#include "gpu/blas.h"
#include "gpu/ccl.h"
#include "gpu/check.h"

enum aorta_status gpu_blas_status_(int status, struct aorta_error *e, const char *what, const char *file,
				   int line)
{
	if (status == 0) /* CUBLAS_STATUS_SUCCESS, HIPBLAS_STATUS_SUCCESS */
		return AORTA_OK;
#ifdef AORTA_HIP
	const char *msg = hipblasStatusToString((hipblasStatus_t)status);
	const char *name = "";
#else
	const char *msg = cublasGetStatusString((cublasStatus_t)status);
	const char *name = cublasGetStatusName((cublasStatus_t)status);
#endif
	return aorta_fail(e, AORTA_EGPU, "", 0, -1, "%s:%d: %s: %s%s%s", file, line, what, name, *name ? ": " : "",
			  msg ? msg : "unknown status");
}

enum aorta_status gpu_nccl_status_(int result, void *comm, struct aorta_error *e, const char *what,
				   const char *file, int line)
{
	if (result == ncclSuccess || result == ncclInProgress)
		return AORTA_OK;
	return gpu_nccl_fail_(result, comm, e, what, file, line);
}

enum aorta_status gpu_nccl_fail_(int result, void *comm, struct aorta_error *e, const char *what,
				 const char *file, int line)
{
	const char *last = comm ? ncclGetLastError((ncclComm_t)comm) : NULL;
	return aorta_fail(e, AORTA_EGPU, "", 0, -1, "%s:%d: %s: %s%s%.600s", file, line, what,
			  ncclGetErrorString((ncclResult_t)result), last && *last ? ": " : "", last ? last : "");
}

enum aorta_status gpu_error_rank(struct aorta_error *e, enum aorta_status st, int rank)
{
	if (e && st != AORTA_OK) {
		char msg[sizeof(e->msg)], path[sizeof(e->path)];
		snprintf(msg, sizeof(msg), "%s", e->msg);
		snprintf(path, sizeof(path), "%s", e->path);
		aorta_fail(e, st, path, e->line, e->offset, "rank %d: %.1000s", rank, msg);
	}
	return st;
}
