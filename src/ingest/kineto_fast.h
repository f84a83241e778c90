/*
 * kineto_fast.h - test hook of the Kineto reader's layout fast path
 * (src/ingest/kineto.c, fast_event()).
 *
 * The reader takes events written in PyTorch's own key order and spacing
 * by a literal-compare fast path and everything else by the full
 * validating scanner; both give identical results.  Tests use the counter
 * below to see which path an event took, and the environment variable
 * AORTA_KINETO_NOFAST (any value) to force the full path, so the two can be
 * compared on the same bytes.
 */
#ifndef AORTA_INGEST_KINETO_FAST_H
#define AORTA_INGEST_KINETO_FAST_H

#include <stdint.h>

/* Events read by the fast path on the calling thread since it started
 * (monotonic; tests take differences). */
uint64_t kineto_fast_events(void);

#endif
