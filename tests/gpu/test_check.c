/*
 * test_check.c - the checked-call macros of src/gpu/check.h (and gpu.h's
 * GPU_CHECK_GOTO): each failure fills the error record with file:line, the
 * call as written and the library's own name and message, sets the status
 * and jumps to the one cleanup label; success passes through.  The library
 * codes are fed as values, so no device is needed: these run wherever the
 * GPU tests build (CI included).
 */
#include <string.h>

#include "gpu/blas.h"
#include "gpu/ccl.h"
#include "gpu/check.h"
#include "testing.h"

static int cleanups;

static cublasStatus_t blas_ret(cublasStatus_t s) { return s; }
static ncclResult_t nccl_ret(ncclResult_t r) { return r; }
static gpuError_t rt_ret(gpuError_t r) { return r; }

static enum aorta_status blas_goto(cublasStatus_t s, int *after, struct aorta_error *e)
{
	enum aorta_status st = AORTA_OK;
	*after = 0;
	GPU_BLAS_GOTO(e, st, blas_ret(s), out);
	*after = 1;
out:
	cleanups++;
	return st;
}

static enum aorta_status nccl_goto(ncclResult_t r, int *after, struct aorta_error *e)
{
	enum aorta_status st = AORTA_OK;
	*after = 0;
	GPU_NCCL_GOTO(e, st, NULL, nccl_ret(r), out);
	*after = 1;
out:
	cleanups++;
	return st;
}

static enum aorta_status rt_goto(gpuError_t r, int *after, struct aorta_error *e)
{
	enum aorta_status st = AORTA_OK;
	*after = 0;
	GPU_CHECK_GOTO(e, st, rt_ret(r), out);
	*after = 1;
out:
	cleanups++;
	return st;
}

static enum aorta_status try_goto(enum aorta_status inner, int *after)
{
	enum aorta_status st = AORTA_OK;
	*after = 0;
	AORTA_TRY_GOTO(st, inner, out);
	*after = 1;
out:
	cleanups++;
	return st;
}

static void test_blas_failure_names_the_call_and_jumps_to_cleanup(void)
{
	struct aorta_error e;
	int after, c0 = cleanups;
	memset(&e, 0, sizeof(e));
	CHECK_EQ_I(blas_goto(CUBLAS_STATUS_SUCCESS, &after, &e), AORTA_OK);
	CHECK_EQ_I(after, 1);
	CHECK_EQ_I(e.msg[0], 0);
	CHECK_EQ_I(blas_goto(CUBLAS_STATUS_INVALID_VALUE, &after, &e), AORTA_EGPU);
	CHECK_EQ_I(after, 0);
	CHECK_EQ_I(cleanups - c0, 2);
	CHECK_EQ_I(e.code, AORTA_EGPU);
	CHECK(strstr(e.msg, "test_check.c:") != NULL);
	CHECK(strstr(e.msg, "blas_ret(s)") != NULL);
	CHECK(strstr(e.msg, "CUBLAS_STATUS_INVALID_VALUE") != NULL);
	CHECK_EQ_I(GPU_BLAS(NULL, CUBLAS_STATUS_NOT_SUPPORTED), AORTA_EGPU); /* e may be NULL */
}

static void test_nccl_failure_and_in_progress(void)
{
	struct aorta_error e;
	int after;
	memset(&e, 0, sizeof(e));
	/* a non-blocking communicator's call still running is not a failure */
	CHECK_EQ_I(nccl_goto(ncclInProgress, &after, &e), AORTA_OK);
	CHECK_EQ_I(after, 1);
	CHECK_EQ_I(nccl_goto(ncclInvalidArgument, &after, &e), AORTA_EGPU);
	CHECK_EQ_I(after, 0);
	CHECK(strstr(e.msg, "nccl_ret(r)") != NULL);
	CHECK(strstr(e.msg, ncclGetErrorString(ncclInvalidArgument)) != NULL);
	CHECK_EQ_I(GPU_NCCL_RESULT(&e, NULL, "ncclCommSplit", ncclSystemError), AORTA_EGPU);
	CHECK(strstr(e.msg, ": ncclCommSplit: ") != NULL);
	/* the strict form fails even on ncclInProgress */
	CHECK_EQ_I(GPU_NCCL_FAIL(&e, NULL, "ncclCommGetAsyncError", ncclInProgress), AORTA_EGPU);
	CHECK(strstr(e.msg, ": ncclCommGetAsyncError: ") != NULL);
}

static void test_runtime_failure_has_the_error_name(void)
{
	struct aorta_error e;
	int after;
	memset(&e, 0, sizeof(e));
	CHECK_EQ_I(rt_goto(gpuSuccess, &after, &e), AORTA_OK);
	CHECK_EQ_I(after, 1);
	CHECK_EQ_I(rt_goto(gpuErrorInvalidValue, &after, &e), AORTA_EGPU);
	CHECK_EQ_I(after, 0);
	CHECK(strstr(e.msg, "rt_ret(r)") != NULL);
	CHECK(strstr(e.msg, gpuGetErrorName(gpuErrorInvalidValue)) != NULL);
	CHECK_EQ_I(GPU_RESULT(&e, "gpuEventQuery", gpuErrorInvalidValue), AORTA_EGPU);
	CHECK(strstr(e.msg, ": gpuEventQuery: ") != NULL);
}

static void test_try_goto_keeps_the_inner_status(void)
{
	int after;
	CHECK_EQ_I(try_goto(AORTA_OK, &after), AORTA_OK);
	CHECK_EQ_I(after, 1);
	CHECK_EQ_I(try_goto(AORTA_EINPUT, &after), AORTA_EINPUT);
	CHECK_EQ_I(after, 0);
}

static void test_rank_prefix_only_on_failure(void)
{
	struct aorta_error e;
	memset(&e, 0, sizeof(e));
	aorta_fail(&e, AORTA_EGPU, "", 0, -1, "x.c:1: call: boom");
	CHECK_EQ_I(gpu_error_rank(&e, AORTA_EGPU, 3), AORTA_EGPU);
	CHECK_STR(e.msg, "rank 3: x.c:1: call: boom");
	CHECK_EQ_I(gpu_error_rank(&e, AORTA_OK, 5), AORTA_OK);
	CHECK_STR(e.msg, "rank 3: x.c:1: call: boom");
	CHECK_EQ_I(gpu_error_rank(NULL, AORTA_EGPU, 1), AORTA_EGPU);
}

int main(void)
{
	TEST(test_blas_failure_names_the_call_and_jumps_to_cleanup);
	TEST(test_nccl_failure_and_in_progress);
	TEST(test_runtime_failure_has_the_error_name);
	TEST(test_try_goto_keeps_the_inner_status);
	TEST(test_rank_prefix_only_on_failure);
	return test_report();
}
