/*
 * kineto_waits.h - the Kineto reader's recorded stream waits
 * (kineto_waits.c): what the scanner keeps of them (kineto.c) and the
 * trace_finish that pairs them with the ops they link.
 */
#ifndef AORTA_INGEST_KINETO_WAITS_H
#define AORTA_INGEST_KINETO_WAITS_H

#include <stddef.h>
#include <stdint.h>

struct trace;
struct ingest_opts;

/* A stream wait the trace records (cuda_sync "Stream Wait Event"). */
struct kwait {
	struct trace *t;            /* the device's timeline */
	int64_t start, corr;        /* the sync record's start and correlation */
	int64_t stream, on_stream, rec_corr; /* on_stream, rec_corr -1: the profiler left them
	                                      * out (CUPTI 13 without its event records) */
};

/* A host cudaEventRecord call (what a wait the profiler left unresolved is
 * paired with, by host order on its thread). */
struct krec { int64_t corr, start, tid; };

/* trace_finish of t, then t's stream waits (waits[0..nwait) whose t it
 * is) as its DEP_RECORD dependencies, recs[0..nrec) the host's record
 * calls. */
void kineto_finish_waits(const struct kwait *waits, size_t nwait, const struct krec *recs, size_t nrec, struct trace *t,
			 const struct ingest_opts *o);

#endif
