/*
 * metrics.h - the per-rank JSONL metrics of a training run
 * (<output_dir>/rank_NN_metrics.jsonl), one line per step, in the upstream
 * AORTA schema (UPSTREAM.md section 2) plus "schema": "aorta.metrics/1" and
 * optional telemetry.  The profile.overlap block is computed by the shared
 * interval engine (src/overlap/ivset.h), not by upstream's sweep, so nested
 * ranges on one stream count once and the idle tail is kept.
 * metrics_write flushes after every line: a crash loses at most the step in
 * progress.
 */
#ifndef AORTA_TRAIN_METRICS_H
#define AORTA_TRAIN_METRICS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define METRICS_SCHEMA "aorta.metrics/1"

struct prof_range {
	const char *stream;    /* compute, allreduce, reducescatter, allgather, aux, ... */
	const char *tag;       /* epoch{e}_step{s}_{what} */
	int64_t start_ns, end_ns; /* relative to the step's start event; may be negative */
	const char *metadata;  /* a JSON object's text, or NULL for {} */
};

struct prof_marker {
	const char *stream, *tag;
	int64_t t_ns;
	const char *metadata;
};

struct telemetry_sample {
	int valid;
	double sm_clock_mhz, mem_clock_mhz, power_w, temperature_c, gpu_util_pct, mem_util_pct;
};

struct step_record {
	int rank, world_size, epoch, step;
	long global_step;
	double loss, grad_norm, lr;   /* grad_norm NaN -> null */
	int64_t total_ns;             /* start event to end event of the step */
	const struct prof_range *ranges;
	size_t nranges;
	const struct prof_marker *markers;
	size_t nmarkers;
	const struct telemetry_sample *telemetry; /* NULL: not written */
};

/* Overlap figures of one step (also used by the trainer's log line). */
struct step_overlap {
	int64_t union_ns, idle_ns;
	int64_t compute_ns, comm_ns;          /* compute stream; union of comm streams */
	int64_t compute_comm_ns, compute_allreduce_ns, compute_reducescatter_ns, compute_allgather_ns;
};
void metrics_overlap(const struct step_record *r, struct step_overlap *o);

/* Writes one JSON line and flushes; returns 0 or -1 if the write failed. */
int metrics_write(FILE *f, const struct step_record *r);

#endif
