/*
 * pool.h - the project's one way to run work on threads: fn(arg, worker,
 * i) for every i < n on up to nt threads, each thread pulling the next i
 * (an atomic counter), the calling thread one of them (worker 0).  Used by
 * the pipeline (a file per i) and the what-if (a rank, a collective, a
 * block of slots or a fix per i).
 *
 * Which thread runs which i must not change a result: each i writes its
 * own outputs; worker (0 .. nt - 1) indexes per-thread state.  A thread
 * that cannot be started leaves its share to the others, so pool_for
 * always completes every i.  pool_for returns when every i is done.
 */
#ifndef AORTA_POOL_H
#define AORTA_POOL_H

#include <stddef.h>

typedef void (*pool_fn)(void *arg, size_t worker, size_t i);

/* fn(arg, worker, i) for i in [0, n) on min(nt, n) threads (nt 0: 1). */
void pool_for(size_t nt, size_t n, pool_fn fn, void *arg);

/* The threads -j asks for: requested when > 0, else the online cores (at
 * least 1). */
size_t pool_threads(int requested);

#endif
