/*
 * launch_train_gpu.c - aorta train's job: comm/launch.h's launch_ranks
 * with trainer_rank_run as each rank's work (one GPU per rank; thread,
 * MPI or torchrun mode as launch.h chooses).  GPU builds only.
 *
 * trainer_rank_run is referenced weakly until trainer_gpu.c defines it,
 * so the plug-in and the test programs link either way; a build without
 * it fails at run time with a message instead.
 */
#include "train/launch_train.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "comm/launch.h"
#include "gpu/gpu.h"

#pragma weak trainer_rank_run

struct train_arg {
	const struct train_config *cfg;
	const struct trainer_opts *o;
};

static enum aorta_status train_rank(void *arg, struct comm *comm, const struct launch_rank *lr, void *result,
				    struct aorta_error *e)
{
	const struct train_arg *a = arg;
	struct trainer_opts o = *a->o;
	o.device = lr->device;
	o.quiet = o.quiet || lr->rank != 0; /* as upstream: only rank 0 logs to stderr */
	o.shared_process = !lr->mpi && lr->size > 1;
	return trainer_rank_run(a->cfg, &o, comm, lr->device, result, e);
}

/* Whether distributed.cta_policy auto may choose zero: the symmetric
 * windows it needs (comm/nccl_comm.c) exist in NCCL >= 2.28 between GPUs
 * with peer access; checked here for ranks as threads (every visible GPU),
 * where this process sees them all; a launcher's processes (mpirun,
 * torchrun) keep NCCL's choice. */
static int zero_ok(void)
{
	/* the collective library's version through its symbol: the plug-in
	 * links the library, so it is loaded (RTLD_NOLOAD finds it; no header:
	 * this file builds for ROCm too, where RCCL takes NCCL's names) */
	static const char *const libs[] = { "libnccl.so.2", "librccl.so.1" };
	int v = 0, n = 0, got = 0;
	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]) && !got; i++) {
		void *h = dlopen(libs[i], RTLD_LAZY | RTLD_NOLOAD);
		if (!h)
			continue;
		int (*get_version)(int *) = NULL;
		*(void **)&get_version = dlsym(h, "ncclGetVersion");
		got = get_version && get_version(&v) == 0;
		dlclose(h);
	}
	if (launch_env_world_size() > 1 || !got || v < 22800 || gpuGetDeviceCount(&n) != gpuSuccess || n < 2)
		return 0;
	for (int a = 0; a < n; a++)
		for (int b = 0; b < n; b++) {
			int ok = 0;
			if (a != b && (gpuDeviceCanAccessPeer(&ok, a, b) != gpuSuccess || !ok))
				return 0;
		}
	return 1;
}

/* written before the rank threads start, read by them (the log line) */
static char cta_why[128];

const char *launch_train_cta_why(void)
{
	return cta_why;
}

enum aorta_status launch_train(const struct train_config *cfg, const struct trainer_opts *o,
			       struct trainer_result *res, struct aorta_error *e)
{
	if (!trainer_rank_run)
		return aorta_fail(e, AORTA_EINTERNAL, NULL, 0, -1,
				  "this libaorta-gpu.so has no trainer_rank_run (the distributed trainer is not built in)");
	/* distributed.cta_policy: NCCL reads NCCL_CTA_POLICY when each
	 * communicator is created (comm_nccl_opts_from_env), so it is set for
	 * the launch (before the rank threads exist) and restored after */
	const char *old = getenv("NCCL_CTA_POLICY");
	char *saved = old ? strdup(old) : NULL;
	int p = train_config_cta_policy(cfg, cta_why, sizeof(cta_why));
	if (p == 2 /* zero */ && cfg->distributed.cta_policy == TRAIN_CTA_AUTO && !zero_ok()) {
		/* auto never asks for what would fail at start (nccl_sym_alloc) */
		p = TRAIN_CTA_NCCL;
		snprintf(cta_why, sizeof(cta_why), "auto: NCCL's choice (the copy-engine path needs NCCL >= 2.28, "
			 "ranks as threads and peer access between every pair of GPUs)");
	}
	static const char *names[] = { "default", "efficiency", "zero" };
	if (p >= 0 && p < 3)
		setenv("NCCL_CTA_POLICY", names[p], 1);
	else if (cfg->distributed.cta_policy == TRAIN_CTA_NCCL)
		unsetenv("NCCL_CTA_POLICY");
	struct train_arg a = { cfg, o };
	memset(res, 0, sizeof(*res));
	enum aorta_status st = launch_ranks(o->device, 0, train_rank, &a, res, sizeof(*res), e);
	if (saved)
		setenv("NCCL_CTA_POLICY", saved, 1);
	else
		unsetenv("NCCL_CTA_POLICY");
	free(saved);
	return st;
}
