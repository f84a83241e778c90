/*
 * ivset.h - the interval algebra every figure in aorta comes from.
 *
 * An ivset is a sorted list of disjoint, non-touching half-open intervals
 * [s, e) with e > s, in int64 nanoseconds, plus prefix sums of their lengths
 * so that |set ∩ [lo, hi)| costs O(log n).  Sets are built from spans (any
 * order, nesting, overlap, zero length), then combined by union,
 * intersection and difference in linear time.  Zero-length spans contribute
 * nothing; touching intervals ([0,5) and [5,9)) merge into one.
 * Ownership: an ivset owns its arrays; ivset_release frees them.
 */
#ifndef AORTA_IVSET_H
#define AORTA_IVSET_H

#include <stddef.h>
#include <stdint.h>

struct ivset {
	int64_t *s, *e;  /* n intervals */
	int64_t *cum;    /* cum[i] = total length of intervals 0..i-1 (n+1 entries) */
	size_t n, cap;
};

void ivset_init(struct ivset *v);
void ivset_release(struct ivset *v);

/* Union of [start[i], end[i]) for the i in idx[0..m) (or 0..m) if idx is NULL),
 * replacing v's contents.  Unsorted input is sorted (a copy). */
void ivset_build(struct ivset *v, const int64_t *start, const int64_t *end,
		 const uint32_t *idx, size_t m);
/* Appends an interval known to start at or after every interval so far
 * (merges if it touches the last); call ivset_seal when done. */
void ivset_push(struct ivset *v, int64_t s, int64_t e);
void ivset_seal(struct ivset *v);

int64_t ivset_len(const struct ivset *v);
/* |v ∩ [lo, hi)| in O(log n). */
int64_t ivset_len_in(const struct ivset *v, int64_t lo, int64_t hi);
/* ivset_len_in, searching from *at (0 at first; updated) forward: windows
 * visited in ascending order cost a step or two instead of a search; any
 * order gives the same result (a window behind *at is searched whole). */
int64_t ivset_len_in_from(const struct ivset *v, size_t *at, int64_t lo, int64_t hi);

/* out = a ∪ b, a ∩ b, a \ b (out must differ from a and b). */
void ivset_union(struct ivset *out, const struct ivset *a, const struct ivset *b);
void ivset_inter(struct ivset *out, const struct ivset *a, const struct ivset *b);
void ivset_diff(struct ivset *out, const struct ivset *a, const struct ivset *b);

#endif
