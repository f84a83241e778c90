/*
 * trainer.h - aorta train: the ranking transformer trained on one GPU with
 * every phase timed by events on the stream where it runs (train part 1;
 * part 2 adds communication on the allreduce / reducescatter / allgather
 * streams).  Implemented in trainer_gpu.c (GPU builds only).
 */
#ifndef AORTA_TRAIN_TRAINER_H
#define AORTA_TRAIN_TRAINER_H

#include "base/error.h"
#include "train/train_config.h"

struct trainer_opts {
	int gpu_metrics;   /* --enable-gpu-metrics / --enable-rocm-metrics: telemetry per step */
	int device;        /* -1: from LOCAL_RANK etc. */
	int quiet;         /* no progress line */
	int data_batches;  /* distinct batches kept in pinned memory (0: default) */
};

struct trainer_result {
	long steps;
	double median_step_ms, mean_step_ms, median_wall_ms, first_loss, last_loss;
	char metrics_path[1024];
};

enum aorta_status trainer_run(const struct train_config *cfg, const struct trainer_opts *o,
			      struct trainer_result *res, struct aorta_error *e);

#endif
