/*
 * launch_train.h - `aorta train` as a job of ranks, one GPU each
 * (launch_train_gpu.c, in libaorta-gpu.so; the launcher is comm/launch.h).
 */
#ifndef AORTA_TRAIN_LAUNCH_TRAIN_H
#define AORTA_TRAIN_LAUNCH_TRAIN_H

#include "base/error.h"
#include "train/trainer.h"

/* launch_ranks (comm/launch.h) with trainer_rank_run on every rank; res
 * receives rank 0's result (thread mode) or this process's (MPI, torchrun). */
enum aorta_status launch_train(const struct train_config *cfg, const struct trainer_opts *o,
			       struct trainer_result *res, struct aorta_error *e);

/* Why the training communicators got the NCCL CTA policy they have
 * (distributed.cta_policy, train_config_cta_policy), for the log; "" before
 * the first launch_train. */
const char *launch_train_cta_why(void);

#endif
