/*
 * vocab.c - the timeline's vocabulary (vocab.h): names of kinds and
 * collective types, their classes, collective types from names, dtype
 * sizes and the nccl-tests bus-bandwidth factors.  Pure tables and
 * functions, no state: the bottom of the timeline, used by timeline.c,
 * rules.c and the peer rules alike.
 */
#include "timeline/vocab.h"

#include <string.h>

enum span_class kind_class(enum span_kind k)
{
	switch (k) {
	case K_GEMM: case K_ATTENTION: case K_COMPUTE_OTHER: case K_UNKNOWN:
		return C_COMPUTE;
	case K_COMM:
		return C_COMM;
	case K_MEMCPY_H2D: case K_MEMCPY_D2H: case K_MEMCPY_D2D: case K_MEMCPY_P2P:
	case K_MEMCPY_OTHER:
		return C_MEMCPY;
	case K_MEMSET:
		return C_MEMSET;
	default:
		return C_NONE;
	}
}

const char *kind_name(enum span_kind k)
{
	static const char *const n[K__COUNT] = {
		"unknown", "gemm", "attention", "compute", "comm", "memcpy_h2d",
		"memcpy_d2h", "memcpy_d2d", "memcpy_p2p", "memcpy", "memset", "sync",
	};
	return (unsigned)k < K__COUNT ? n[k] : "unknown";
}

const char *coll_type_name(enum coll_type c)
{
	static const char *const n[COLL__COUNT] = {
		"none", "all_reduce", "all_gather", "reduce_scatter", "broadcast",
		"reduce", "all_to_all", "send_recv", "other",
	};
	return (unsigned)c < COLL__COUNT ? n[c] : "other";
}

/* Bus bandwidth factors from nccl-tests doc/PERFORMANCE.md: all-reduce moves
 * 2(n-1)/n of the buffer through the slowest link, all-gather and
 * reduce-scatter (n-1)/n, all-to-all (n-1)/n; broadcast, reduce and
 * send/recv 1. */
double coll_busbw_factor(enum coll_type c, int n)
{
	if (n <= 1)
		return 1.0;
	switch (c) {
	case COLL_ALL_REDUCE:
		return 2.0 * (n - 1) / n;
	case COLL_ALL_GATHER: case COLL_REDUCE_SCATTER: case COLL_ALL_TO_ALL:
		return (double)(n - 1) / n;
	default:
		return 1.0;
	}
}

static int has_ci(const char *s, const char *sub)
{
	return strcasestr(s, sub) != NULL;
}

enum coll_type coll_type_from_name(const char *s)
{
	if (!s || !*s)
		return COLL_NONE;
	if (has_ci(s, "reducescatter") || has_ci(s, "reduce_scatter") || has_ci(s, "_rs") ||
	    has_ci(s, "rr_rs"))
		return COLL_REDUCE_SCATTER;
	if (has_ci(s, "allreduce") || has_ci(s, "all_reduce") || has_ci(s, "cross_device_reduce"))
		return COLL_ALL_REDUCE;
	if (has_ci(s, "allgather") || has_ci(s, "all_gather") || has_ci(s, "_ag"))
		return COLL_ALL_GATHER;
	if (has_ci(s, "alltoall") || has_ci(s, "all_to_all") || has_ci(s, "dispatch") ||
	    has_ci(s, "combine"))
		return COLL_ALL_TO_ALL;
	if (has_ci(s, "broadcast"))
		return COLL_BROADCAST;
	if (has_ci(s, "sendrecv") || has_ci(s, "send") || has_ci(s, "recv"))
		return COLL_SEND_RECV;
	if (has_ci(s, "reduce"))
		return COLL_REDUCE;
	return COLL_OTHER;
}

int dtype_bytes(const char *s)
{
	static const struct { const char *n; int b; } tab[] = {
		{ "Float", 4 }, { "float", 4 }, { "float32", 4 }, { "f32", 4 }, { "Int", 4 },
		{ "int32", 4 }, { "BFloat16", 2 }, { "bfloat16", 2 }, { "bf16", 2 },
		{ "Half", 2 }, { "float16", 2 }, { "f16", 2 }, { "Double", 8 }, { "double", 8 },
		{ "Long", 8 }, { "int64", 8 }, { "Byte", 1 }, { "Char", 1 }, { "Bool", 1 },
		{ "uint8", 1 }, { "int8", 1 }, { "Short", 2 }, { "Float8_e4m3fn", 1 },
		{ "Float8_e5m2", 1 },
	};
	if (!s)
		return 0;
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (strcmp(s, tab[i].n) == 0)
			return tab[i].b;
	return 0;
}


enum span_class stream_role(const char *stream, enum coll_type *coll)
{
	static const struct { const char *name; enum coll_type c; } comm[] = {
		{ "allreduce", COLL_ALL_REDUCE }, { "reducescatter", COLL_REDUCE_SCATTER },
		{ "allgather", COLL_ALL_GATHER },
	};
	if (coll)
		*coll = COLL_NONE;
	if (!stream)
		return C_OTHER;
	if (!strcmp(stream, "compute"))
		return C_COMPUTE;
	for (size_t i = 0; i < sizeof(comm) / sizeof(comm[0]); i++)
		if (!strcmp(stream, comm[i].name)) {
			if (coll)
				*coll = comm[i].c;
			return C_COMM;
		}
	return C_OTHER;
}
