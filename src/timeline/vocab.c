/*
 * vocab.c - the timeline's vocabulary (vocab.h): names of kinds and
 * collective types, their classes, collective types from names, dtype
 * sizes and the nccl-tests bus-bandwidth factors.  Pure tables and
 * functions, no state: the bottom of the timeline, used by timeline.c,
 * rules.c and the peer rules alike.
 */
#include "timeline/vocab.h"

#include <ctype.h>
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
		"reduce", "all_to_all", "send_recv", "other", "gather", "scatter",
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

/*
 * Collective identity: the one table of names to collective types
 * (docs/metrics.md "Collective identity").  Every name a trace gives a
 * collective goes through it: kernel names of every NCCL and RCCL version
 * (ncclKernel_AllReduce_RING_LL_Sum_float, ncclDevKernel_AllGather_RING_LL,
 * ncclSymkDevKernel_AllReduce_*, multimem_all_reduce_kernel, ...), the host
 * op that launched a kernel (nccl:all_to_all, c10d::alltoall_base_,
 * _c10d_functional::all_reduce), PyTorch's "Collective name"
 * (_allgather_base, all_to_allv, reduce_scatter_tensor_coalesced), NCCL's
 * NVTX ranges and RCCL's API calls (ncclAllReduce, ncclSend).  A name is
 * compared lower-case without '_', '-' and ' ' ("all_to_all", "AllToAll",
 * "alltoall_base" are one); the first entry found in it wins, so the longer
 * names come before the names they contain (reducescatter before reduce and
 * scatter, allgather before gather).  WORD entries must be a whole '_'- or
 * ':'-delimited word of the name as written (TransformerEngine userbuffers'
 * _rs and _ag suffixes).  A name none matches says nothing (COLL_NONE):
 * ncclDevKernel_Generic, rcclGenericKernel, nvshmem kernels, "wait",
 * "barrier" (NCCL runs a barrier as a one-element all-reduce, which its
 * kernel then says).  A SendRecv kernel names only the primitive NCCL runs:
 * all-to-alls, gathers and scatters (and in old NCCL versions all-reduces
 * and all-gathers) run as SendRecv kernels, so the launching host op, when
 * the trace has it, names the collective instead (timeline.c).
 */
enum { CN_SUB = 0, CN_WORD = 1 };

static const struct coll_name_rule {
	const char *key;
	unsigned char mode;
	unsigned char type;
} coll_names[] = {
	{ "reducescatter", CN_SUB, COLL_REDUCE_SCATTER },
	{ "crossdevicereduce", CN_SUB, COLL_ALL_REDUCE }, /* vLLM / aiter custom all-reduce */
	{ "allreduce", CN_SUB, COLL_ALL_REDUCE },
	{ "allgather", CN_SUB, COLL_ALL_GATHER },
	{ "alltoall", CN_SUB, COLL_ALL_TO_ALL },
	{ "broadcast", CN_SUB, COLL_BROADCAST },
	{ "bcast", CN_SUB, COLL_BROADCAST },
	{ "sendrecv", CN_SUB, COLL_SEND_RECV },
	{ "send", CN_SUB, COLL_SEND_RECV },
	{ "recv", CN_SUB, COLL_SEND_RECV },
	{ "gather", CN_SUB, COLL_GATHER },
	{ "scatter", CN_SUB, COLL_SCATTER },
	{ "reduce", CN_SUB, COLL_REDUCE },
	{ "rs", CN_WORD, COLL_REDUCE_SCATTER },
	{ "ag", CN_WORD, COLL_ALL_GATHER },
};

/* Whether w is a whole word of s (words split at '_', ':', '(', ' ', '<'),
 * case-insensitively. */
static int has_word(const char *s, const char *w)
{
	size_t n = strlen(w);
	for (const char *p = s; (p = strcasestr(p, w)) != NULL; p++) {
		int lo = p == s || strchr("_:( <", p[-1]);
		int hi = !p[n] || strchr("_:( <", p[n]);
		if (lo && hi)
			return 1;
	}
	return 0;
}

enum coll_type coll_type_from_name(const char *s)
{
	char norm[256];
	size_t o = 0;

	if (!s || !*s)
		return COLL_NONE;
	for (const char *p = s; *p && o + 1 < sizeof(norm); p++)
		if (*p != '_' && *p != '-' && *p != ' ')
			norm[o++] = (char)tolower((unsigned char)*p);
	norm[o] = '\0';
	for (size_t i = 0; i < sizeof(coll_names) / sizeof(coll_names[0]); i++) {
		const struct coll_name_rule *c = &coll_names[i];
		if (c->mode == CN_SUB ? strstr(norm, c->key) != NULL : has_word(s, c->key))
			return (enum coll_type)c->type;
	}
	return COLL_NONE;
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
		/* "Input type" of older PyTorch host ops: C++ type names */
		{ "int", 4 }, { "long int", 8 }, { "long", 8 }, { "long long", 8 },
		{ "unsigned int", 4 }, { "short int", 2 }, { "short", 2 }, { "signed char", 1 },
		{ "unsigned char", 1 }, { "bool", 1 }, { "c10::Half", 2 }, { "c10::BFloat16", 2 },
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
