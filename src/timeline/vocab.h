/*
 * vocab.h - the vocabulary of the timeline, at the bottom of the layering:
 * span kinds and their classes, collective types, their names, the
 * collective type a name implies, dtype sizes and the nccl-tests bus
 * bandwidth factors.  timeline.c, rules.c (the built-in and peer-tool
 * classification rules) and every output use these; nothing here calls
 * back up.  All functions are pure and thread-safe; returned strings are
 * static.
 */
#ifndef AORTA_VOCAB_H
#define AORTA_VOCAB_H

/* Span kinds.  The classes (compute / comm / memcpy / memset) are what the
 * overlap engine needs; the sub-kinds feed tables and the TP tuner figure. */
enum span_kind {
	K_UNKNOWN = 0,
	K_GEMM, K_ATTENTION, K_COMPUTE_OTHER,            /* compute */
	K_COMM,                                          /* see enum coll_type */
	K_MEMCPY_H2D, K_MEMCPY_D2H, K_MEMCPY_D2D, K_MEMCPY_P2P, K_MEMCPY_OTHER,
	K_MEMSET,
	K_SYNC,     /* cuda_sync records on a device timeline: not busy */
	K__COUNT
};

/* C_OTHER: busy but none of the four (HTA's OTHER kernels); C_NONE: not
 * device work at all (sync records). */
enum span_class { C_COMPUTE = 0, C_COMM, C_MEMCPY, C_MEMSET, C_OTHER, C_NONE, C__COUNT };

enum coll_type {
	COLL_NONE = 0, COLL_ALL_REDUCE, COLL_ALL_GATHER, COLL_REDUCE_SCATTER,
	COLL_BROADCAST, COLL_REDUCE, COLL_ALL_TO_ALL, COLL_SEND_RECV, COLL_OTHER,
	COLL_GATHER, COLL_SCATTER, /* rooted; NCCL runs them as SendRecv kernels */
	COLL__COUNT
};

/* What the record type says before the name is looked at. */
enum record_hint { R_KERNEL = 0, R_MEMCPY, R_MEMSET, R_SYNC };

/* Class of a kind. */
enum span_class kind_class(enum span_kind k);
const char *kind_name(enum span_kind k);
const char *coll_type_name(enum coll_type c);
/* nccl-tests bus bandwidth factor for n ranks (docs/metrics.md). */
double coll_busbw_factor(enum coll_type c, int n);
/* The collective a name says (vocab.c's one table, docs/metrics.md
 * "Collective identity"): a kernel name, a launching host op
 * (nccl:all_to_all, c10d::allreduce_), a PyTorch "Collective name", an NCCL
 * NVTX range or RCCL API call; COLL_NONE when it says none
 * (ncclDevKernel_Generic, "wait", "barrier").  Never COLL_OTHER. */
enum coll_type coll_type_from_name(const char *s);
/* The role of a named stream of aorta's / upstream AORTA's training JSONL
 * (the by-stream classification of its overlap block): "compute" is
 * compute; "allreduce", "reducescatter", "allgather" are communication of
 * that collective type (*coll); any other stream (aux, ...) is busy but
 * neither (C_OTHER).  coll may be NULL. */
enum span_class stream_role(const char *stream, enum coll_type *coll);
/* Bytes per element of a PyTorch / NCCL dtype name, 0 if unknown. */
int dtype_bytes(const char *s);

#endif
