/*
 * comm_cache.h - the cache of SM-limited NCCL communicators: one set of
 * per-rank communicators for each (max_ctas, cga) key, at most
 * COMM_CACHE_MAX sets, the oldest made replaced first (round robin) when
 * full.  This is the bookkeeping only (host code, tested in CI): the
 * caller opens and closes the communicators of a slot (each rank on its
 * own thread, comm_nccl_raw_open / comm_nccl_raw_close) where
 * comm_cache_slot says so.  tune-tp keeps one per session.
 */
#ifndef AORTA_COMM_CACHE_H
#define AORTA_COMM_CACHE_H

#define COMM_CACHE_MAX 16
#define COMM_CACHE_RANKS 8

struct comm_cache {
	struct comm_cache_entry {
		int max_ctas, cga;          /* the key */
		void *c[COMM_CACHE_RANKS];  /* ncclComm_t per rank; NULL: not open */
	} e[COMM_CACHE_MAX];
	int n;                              /* slots in use */
	int next_evict;                     /* the slot replaced next when full */
};

enum comm_cache_how {
	COMM_CACHE_HIT,    /* the key's communicators exist: use them */
	COMM_CACHE_NEW,    /* a free slot: open them */
	COMM_CACHE_EVICT,  /* the oldest slot: close its communicators, then open */
};

/* The slot of (max_ctas, cga) into *slot, and what the caller must do
 * there.  For NEW and EVICT the key is recorded in the slot. */
enum comm_cache_how comm_cache_slot(struct comm_cache *c, int max_ctas, int cga, int *slot);

#endif
