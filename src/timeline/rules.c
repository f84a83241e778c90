/*
 * rules.c - the built-in classification table and user rule files.
 *
 * The table below is the project's knowledge of kernel names (TRACES.md
 * section 7 lists where each name was seen).  Order matters: communication
 * first (an NCCL kernel name may contain "Reduce" or "gemm"-like words),
 * then copies and fills done by kernels, attention before GEMM (cuDNN SDPA
 * kernels mention gemm), then GEMM; anything else is other compute.
 * Memcpy and memset records (hint R_MEMCPY / R_MEMSET) are classified by the
 * record type, with the direction read from the name.
 */
#include "timeline/rules.h"

#include <ctype.h>
#include <pthread.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "base/zread.h"

#define RULE_RE_MAX 1024 /* bytes of one rule's regular expression */

struct rule {
	enum span_kind kind;
	enum coll_type coll; /* COLL_NONE: derive from the name */
	regex_t re;
};

struct rules {
	struct rule *r;
	size_t n, cap;
	const struct rules *next; /* the table tried after this one */
};

static const struct { const char *kind, *re; } builtin_src[] = {
	/* collectives and other communication kernels */
	{ "comm", "^(void )?(nccl|rccl)[A-Za-z]*Kernel" },
	{ "comm", "ncclKernel|ncclDevKernel|rcclGenericKernel" },
	{ "comm", "^(void )?k?userbuffers_" },
	{ "comm", "(one|two)_shot_all_reduce_kernel|multimem_all_reduce|multimem_all_gather" },
	{ "all_reduce", "cross_device_reduce_|allreduce_fusion|custom_all_reduce" },
	/* DeepEP's expert-parallel all-to-all (and DeepSeek's own build of it,
	 * dpsk::ep::): its intranode / internode / internode_ll kernels move
	 * tokens between ranks; its layout kernels (get_dispatch_layout) count
	 * them locally and stay compute */
	{ "all_to_all", "(deep_ep|dpsk::ep)::(intranode|internode|internode_ll)::" },
	{ "comm", "^(void )?nvshmem|nvshmemi_" },
	{ "all_reduce", "^aorta:all_reduce:" },
	{ "reduce_scatter", "^aorta:reduce_scatter:" },
	{ "all_gather", "^aorta:all_gather:" },
	{ "comm", "^aorta:comm:" },
	{ "compute", "^aorta:compute:" },
	/* copies and fills done by kernels (ROCm blit kernels) */
	{ "memcpy_h2d", "^MEMORY_COPY_HOST_TO_DEVICE" },
	{ "memcpy_d2h", "^MEMORY_COPY_DEVICE_TO_HOST" },
	{ "memcpy_d2d", "^MEMORY_COPY_DEVICE_TO_DEVICE" },
	{ "memcpy", "^__amd_rocclr_copyBuffer" },
	{ "memset", "^__amd_rocclr_fillBuffer" },
	/* attention */
	{ "attention", "flash_fwd|flash_bwd|flash::|[Ff]lash[Aa]ttn|fmha|Fmha|FMHA|_sdpa_|sdpa_|attn_fwd|attn_bwd|_attention_|attention_kernel|cudnn_generated_fort_native_sdpa|xformers" },
	/* GEMM: cuBLAS/cuBLASLt, CUTLASS, hipBLASLt/Tensile, rocBLAS, gemv */
	{ "gemm", "^nvjet_|gemm|Gemm|GEMM|^(void )?sm[0-9]+_xmma|xmma_gemm|cutlass|^Cijk_|cublasLt|cublas|gemv|Gemv|rocblas|hipblaslt|matmul|_mma_|wgmma" },
};

static struct rules *builtin;
static pthread_once_t builtin_once = PTHREAD_ONCE_INIT;

static int parse_kind(const char *s, enum span_kind *k, enum coll_type *c)
{
	static const struct { const char *n; enum span_kind k; enum coll_type c; } tab[] = {
		{ "gemm", K_GEMM, COLL_NONE }, { "attention", K_ATTENTION, COLL_NONE },
		{ "compute", K_COMPUTE_OTHER, COLL_NONE }, { "comm", K_COMM, COLL_NONE },
		{ "all_reduce", K_COMM, COLL_ALL_REDUCE }, { "all_gather", K_COMM, COLL_ALL_GATHER },
		{ "reduce_scatter", K_COMM, COLL_REDUCE_SCATTER },
		{ "broadcast", K_COMM, COLL_BROADCAST }, { "reduce", K_COMM, COLL_REDUCE },
		{ "all_to_all", K_COMM, COLL_ALL_TO_ALL }, { "send_recv", K_COMM, COLL_SEND_RECV },
		{ "gather", K_COMM, COLL_GATHER }, { "scatter", K_COMM, COLL_SCATTER },
		{ "comm_other", K_COMM, COLL_OTHER }, { "memcpy", K_MEMCPY_OTHER, COLL_NONE },
		{ "memcpy_h2d", K_MEMCPY_H2D, COLL_NONE }, { "memcpy_d2h", K_MEMCPY_D2H, COLL_NONE },
		{ "memcpy_d2d", K_MEMCPY_D2D, COLL_NONE }, { "memcpy_p2p", K_MEMCPY_P2P, COLL_NONE },
		{ "memset", K_MEMSET, COLL_NONE }, { "sync", K_SYNC, COLL_NONE },
	};
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (strcmp(s, tab[i].n) == 0) {
			*k = tab[i].k;
			*c = tab[i].c;
			return 0;
		}
	return -1;
}

static int add_rule(struct rules *r, const char *kind, const char *re, char *why, size_t whylen)
{
	enum span_kind k;
	enum coll_type c;

	if (parse_kind(kind, &k, &c) < 0) {
		snprintf(why, whylen, "unknown kind '%s' (expected gemm, attention, compute, comm, "
			 "all_reduce, all_gather, reduce_scatter, broadcast, reduce, all_to_all, "
			 "send_recv, gather, scatter, comm_other, memcpy, memcpy_h2d, memcpy_d2h, memcpy_d2d, "
			 "memcpy_p2p, memset or sync)", kind);
		return -1;
	}
	GROW(r->r, r->cap, r->n + 1);
	struct rule *x = &r->r[r->n];
	/* bounded cost: POSIX extended expressions without back-references
	 * (glibc's \1..\9, whose matching can take exponential time) and
	 * of bounded length; the check runs on every rule, built-in or given */
	if (strlen(re) > RULE_RE_MAX) {
		snprintf(why, whylen, "regular expression of %zu bytes: at most %d", strlen(re), RULE_RE_MAX);
		return -1;
	}
	for (const char *q = re; *q; q++)
		if (*q == '\\' && q[1]) {
			if (q[1] >= '1' && q[1] <= '9') {
				snprintf(why, whylen, "regular expression '%.200s' has a back-reference '\\%c': "
					 "not supported (its matching cost can grow exponentially)", re, q[1]);
				return -1;
			}
			q++;
		}
	int rc = regcomp(&x->re, re, REG_EXTENDED | REG_NOSUB);
	if (rc) {
		char buf[256];
		regerror(rc, &x->re, buf, sizeof(buf));
		snprintf(why, whylen, "bad regular expression '%s': %s", re, buf);
		return -1;
	}
	x->kind = k;
	x->coll = c;
	r->n++;
	return 0;
}

static void init_builtin(void)
{
	char why[512];

	builtin = xcalloc(1, sizeof(*builtin));
	for (size_t i = 0; i < sizeof(builtin_src) / sizeof(builtin_src[0]); i++)
		if (add_rule(builtin, builtin_src[i].kind, builtin_src[i].re, why, sizeof(why)) < 0) {
			fprintf(stderr, "aorta: internal error: built-in rule %zu: %s\n", i, why);
			abort();
		}
}

const struct rules *rules_builtin(void)
{
	pthread_once(&builtin_once, init_builtin);
	return builtin;
}

enum aorta_status rules_load(const char *path, struct rules **out, struct aorta_error *e)
{
	char *buf = NULL, why[512];
	size_t len;
	enum aorta_status st = zread_all(path, 1u << 24, &buf, &len, e);

	if (st)
		return st;
	struct rules *r = xcalloc(1, sizeof(*r));
	r->next = rules_builtin();
	long long line = 0;
	char *save = NULL;
	for (char *ln = strtok_r(buf, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
		line++;
		while (isspace((unsigned char)*ln))
			ln++;
		size_t l = strlen(ln);
		while (l && isspace((unsigned char)ln[l - 1]))
			ln[--l] = '\0';
		if (!*ln || *ln == '#')
			continue;
		char *sp = ln;
		while (*sp && !isspace((unsigned char)*sp))
			sp++;
		if (!*sp) {
			st = aorta_fail(e, AORTA_EINPUT, path, line, -1,
					"expected 'KIND REGEX', found only '%s'", ln);
			goto fail;
		}
		*sp++ = '\0';
		while (isspace((unsigned char)*sp))
			sp++;
		if (add_rule(r, ln, sp, why, sizeof(why)) < 0) {
			st = aorta_fail(e, AORTA_EINPUT, path, line, -1, "%s", why);
			goto fail;
		}
	}
	free(buf);
	*out = r;
	return AORTA_OK;
fail:
	free(buf);
	rules_free(r);
	return st;
}

void rules_free(struct rules *r)
{
	if (!r || r == builtin)
		return;
	for (size_t i = 0; i < r->n; i++)
		regfree(&r->r[i].re);
	free(r->r);
	free(r);
}

static enum span_kind memcpy_dir(const char *name)
{
	if (strstr(name, "HtoD") || strstr(name, "Host -> Device") || strstr(name, "HOST_TO_DEVICE"))
		return K_MEMCPY_H2D;
	if (strstr(name, "DtoH") || strstr(name, "Device -> Host") || strstr(name, "DEVICE_TO_HOST"))
		return K_MEMCPY_D2H;
	if (strstr(name, "PtoP") || strstr(name, "Peer") || strstr(name, "PEER"))
		return K_MEMCPY_P2P;
	if (strstr(name, "DtoD") || strstr(name, "Device -> Device") || strstr(name, "DEVICE_TO_DEVICE"))
		return K_MEMCPY_D2D;
	return K_MEMCPY_OTHER;
}

/* The first rule of the chain from t up to (not including) stop that
 * matches name: its kind (*coll set for comm kinds), or -1. */
static int match_chain(const struct rules *t, const struct rules *stop, const char *name, enum coll_type *coll)
{
	for (; t && t != stop; t = t->next) {
		for (size_t i = 0; i < t->n; i++) {
			if (regexec(&t->r[i].re, name, 0, NULL, 0) != 0)
				continue;
			enum span_kind k = t->r[i].kind;
			if (k == K_COMM) {
				*coll = t->r[i].coll != COLL_NONE ? t->r[i].coll
								  : coll_type_from_name(name);
				if (*coll == COLL_NONE)
					*coll = COLL_OTHER;
			} else if (k == K_MEMCPY_OTHER) {
				k = memcpy_dir(name);
			}
			return (int)k;
		}
	}
	return -1;
}

enum span_kind rules_classify(const struct rules *r, const char *name,
			      enum record_hint hint, enum coll_type *coll)
{
	*coll = COLL_NONE;
	if (hint == R_SYNC)
		return K_SYNC;
	if (hint == R_MEMSET)
		return K_MEMSET;
	if (hint == R_MEMCPY) {
		/* user rules may reclassify copies (NCCL's copy-engine
		 * collectives are "Memcpy PtoP" records); the built-in table is
		 * for kernel names */
		int k = match_chain(r, rules_builtin(), name, coll);
		return k >= 0 ? (enum span_kind)k : memcpy_dir(name);
	}
	int k = match_chain(r ? r : rules_builtin(), NULL, name, coll);
	return k >= 0 ? (enum span_kind)k : K_COMPUTE_OTHER;
}
