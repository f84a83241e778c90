/*
 * engine.h - the overlap engine: spans of one rank in, figures out.
 *
 * ov_sets_build turns a rank's device spans (or a subset of them) and a
 * class per span into interval sets, once per rank and per classification
 * scheme: busy, compute, gemm, attention, comm, memcpy, memset, comm∩compute,
 * comm\compute, memcpy\(compute∪comm), gemm∩comm, host-wait gaps, one set
 * per collective type and one per stream.  ov_figures_in then reads any
 * window [lo, hi) off those sets in O(log n) per figure, so per-step figures
 * cost nothing extra and always add up to the whole.  Every figure in every
 * output comes from these two functions; docs/metrics.md defines each one.
 */
#ifndef AORTA_ENGINE_H
#define AORTA_ENGINE_H

#include <stddef.h>

#include "overlap/ivset.h"
#include "timeline/timeline.h"

enum ov_set {
	S_BUSY, S_COMPUTE, S_GEMM, S_ATTENTION, S_COMM, S_MEMCPY, S_MEMSET,
	S_OVERLAP,        /* comm ∩ compute */
	S_EXPOSED_COMM,   /* comm \ compute */
	S_EXPOSED_MEMCPY, /* memcpy \ (compute ∪ comm) */
	S_GEMM_COMM,      /* gemm ∩ comm (the TP tuner's overlap) */
	S_HOST_WAIT,      /* busy-set gaps that end with a span launched after the gap began */
	S__COUNT
};

struct ov_sets {
	struct ivset set[S__COUNT];
	struct ivset coll[COLL__COUNT];
	struct ivset coll_exposed[COLL__COUNT];
	int32_t *stream_id;       /* nstreams stream ids, ascending */
	struct ivset *stream;     /* busy union per stream */
	size_t *stream_spans;     /* spans used per stream */
	size_t nstreams;
	int64_t first_ns, last_ns; /* first start and last end of the spans used */
};

#define OV_SCALAR_FIGURES                                                           \
	int64_t window_ns, busy_ns, compute_ns, gemm_ns, attention_ns, comm_ns,     \
		memcpy_ns, memset_ns, overlap_ns, exposed_comm_ns, exposed_memcpy_ns, \
		idle_ns, gemm_comm_ns, host_wait_ns
struct ov_figures {
	OV_SCALAR_FIGURES;
	int64_t coll_ns[COLL__COUNT], coll_exposed_ns[COLL__COUNT];
};
/* A step's scalar figures: struct ov_figures without the per-collective
 * arrays, the same members at the same offsets, so the figure tables
 * (FIGURES, REP_FIGS' scalar entries) read either (a rank keeps its steps'
 * figures by column: overlap/steps.h). */
struct ov_step_figures {
	OV_SCALAR_FIGURES;
};
_Static_assert(sizeof(struct ov_step_figures) == offsetof(struct ov_figures, coll_ns),
	       "struct ov_step_figures is the scalar head of struct ov_figures");

/* cls[i] is the class (enum span_class) of span i; spans of class C_NONE are
 * ignored.  subset (m indices) restricts the spans used; NULL means all. */
void ov_sets_build(struct ov_sets *o, const struct trace *t, const uint8_t *cls,
		   const uint32_t *subset, size_t m);
void ov_sets_release(struct ov_sets *o);
void ov_figures_in(const struct ov_sets *o, int64_t lo, int64_t hi, struct ov_figures *f);
/* ov_figures_in of windows in turn, the same figures: where each window
 * starts at or after the previous one's end (a rank's steps), the sets are
 * walked forward instead of searched.  Start with struct ov_walk w = { 0 }. */
struct ov_walk {
	size_t at[S__COUNT + 2 * COLL__COUNT];
};
void ov_figures_next(const struct ov_sets *o, struct ov_walk *w, int64_t lo, int64_t hi, struct ov_figures *f);

/* Classes per span under each scheme (caller frees). */
uint8_t *classes_aorta(const struct trace *t);
/* (the peer tools' schemes, classes_hta and classes_tracelens, are in
 * timeline/peer_rules.h) */

/* |exposed part| of [s, e) against a set (s..e minus the set). */
static inline int64_t ov_exposed(const struct ivset *against, int64_t s, int64_t e)
{
	return (e - s) - ivset_len_in(against, s, e);
}

#endif
