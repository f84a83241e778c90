/*
 * trainer.h - aorta train: the ranking transformer trained on one GPU with
 * every phase timed by events on the stream where it runs (train part 1),
 * and one rank of a data-parallel job (FSDP / DDP, train part 2) with the
 * communication on the allgather / reducescatter / allreduce streams.
 * Implemented in trainer_gpu.c (GPU builds only).
 *
 * trainer_run is world 1: it makes a one-process communicator
 * (comm_local_create) and calls trainer_rank_run, which then runs the
 * single-GPU loop (CUDA-graph mode included) unless the environment has
 * AORTA_TRAIN_DIST=1, which runs world 1 through the distributed executor
 * too (tests, and `aorta train` for comparison).  A launcher of W ranks (one thread or process
 * per GPU) creates one struct comm per rank and calls trainer_rank_run in
 * each, with the rank's device; at world > 1 the step is the schedule of
 * dist.h executed by dist_gpu.h (eager: compile.enabled is limited to
 * world 1).
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
	int shared_process; /* several ranks are threads of this process (set by the launcher) */
};

struct trainer_result {
	long steps;
	double median_step_ms, mean_step_ms, median_wall_ms, first_loss, last_loss;
	char metrics_path[1024];
};

/* World 1 (see above); device from o->device. */
enum aorta_status trainer_run(const struct train_config *cfg, const struct trainer_opts *o,
			      struct trainer_result *res, struct aorta_error *e);

/* One rank of a job: comm->rank of comm->size, on device `device` (an
 * ordinal; < 0: from LOCAL_RANK etc.; the calling thread's current device
 * becomes it).  training.batch_size is the batch PER RANK: rank r takes
 * samples r*b .. r*b+b-1 of each global batch of W*b, so the union over
 * the ranks is the batch world 1 takes with batch_size W*b, and with
 * dropout 0 the losses equal that run's (dist_cpu.h, "Semantics").
 * Dropout seeds mix in the rank (rank 0 keeps world 1's).  Writes
 * <output_dir>/rank_<NN>_metrics.jsonl and rank<N>.log; only rank 0
 * prints to stderr; with profiling, only rank 0 records a CUPTI trace (the
 * activity API is per process, and a thread launcher shares one).  Every
 * rank stops at the same step on SIGINT/SIGTERM (the flag is summed with
 * the loss).  gradient_accumulation > 1 is refused at world > 1.  On an
 * error at world > 1 the other ranks may wait in a collective: the caller
 * should comm_abort.  comm is borrowed; its streams are set
 * (comm_set_stream) to this rank's. */
struct comm;
enum aorta_status trainer_rank_run(const struct train_config *cfg, const struct trainer_opts *o, struct comm *comm,
				   int device, struct trainer_result *res, struct aorta_error *e);

/* trainer_rank_run in parts, for callers that drive the steps themselves
 * (tests; a launcher that interleaves its own work):
 *   trainer_open   checks, device, model, data, outputs (everything the run
 *                  owns lives in the returned struct trainer)
 *   trainer_more   1 while steps remain and no stop was requested
 *   trainer_step   runs the next step (its JSONL line is written during the
 *                  step after, or by trainer_finish)
 *   trainer_finish the last line, the step-time figures into res
 *   trainer_close  releases everything, after any of the above failed or
 *                  at any step (NULL is fine)
 * A failed open has released what it made; *out is NULL then. */
struct trainer;
enum aorta_status trainer_open(struct trainer **out, const struct train_config *cfg, const struct trainer_opts *o,
			       struct comm *comm, int device, struct aorta_error *e);
int trainer_more(const struct trainer *t);
enum aorta_status trainer_step(struct trainer *t, struct aorta_error *e);
enum aorta_status trainer_finish(struct trainer *t, struct trainer_result *res, struct aorta_error *e);
void trainer_close(struct trainer *t);

#endif
