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

#include <string.h>

#include "comm/launch.h"

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

enum aorta_status launch_train(const struct train_config *cfg, const struct trainer_opts *o,
			       struct trainer_result *res, struct aorta_error *e)
{
	if (!trainer_rank_run)
		return aorta_fail(e, AORTA_EINTERNAL, NULL, 0, -1,
				  "this libaorta-gpu.so has no trainer_rank_run (the distributed trainer is not built in)");
	struct train_arg a = { cfg, o };
	memset(res, 0, sizeof(*res));
	return launch_ranks(o->device, 0, train_rank, &a, res, sizeof(*res), e);
}
