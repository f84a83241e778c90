/*
 * peer_rules.c - the classification rules of the peer tools, beside
 * aorta's own (rules.c), so that figures "as Holistic Trace Analysis / as
 * TraceLens define them" come from the same engine with the peers' classes.
 *
 * Each scheme gives a class per span (enum span_class), cached per distinct
 * (name, record hint), with the peers' regexes compiled once.  HTA's OTHER
 * kernels are the class C_OTHER: busy, neither compute, communication,
 * memcpy nor memset.
 */
#include "timeline/peer_rules.h"

#include <pthread.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

/* Per-name classes under a regex scheme, cached by name id. */
static uint8_t *classes_by_name(const struct trace *t, uint8_t (*fn)(const char *, int))
{
	uint8_t *cache = xmalloc(t->names.n * 4 + 1);
	memset(cache, 0xff, t->names.n * 4 + 1);
	uint8_t *c = xmalloc(t->n ? t->n : 1);
	for (size_t i = 0; i < t->n; i++) {
		size_t key = (size_t)t->name[i] * 4 + t->hint[i];
		if (cache[key] == 0xff)
			cache[key] = fn(strtab_get(&t->names, t->name[i]), t->hint[i]);
		c[i] = cache[key];
	}
	free(cache);
	return c;
}

/* The peers' patterns, compiled once (regcomp costs far more than a match). */
enum { RE_HTA_COMM, RE_HTA_MEM, RE_HTA_OTHER, RE_TL_MEMCPY, RE_TL_COMM, RE__COUNT };
static const struct { const char *re; int icase; } peer_src[RE__COUNT] = {
	[RE_HTA_COMM] = { "^nccl|^hip|^hccl|^.*ncclKernel", 0 },
	[RE_HTA_MEM] = { "^(hip)?Memcpy|^(hip)?Memset|^dma", 0 },
	[RE_HTA_OTHER] = { "^nccl|^.*Memcpy|^.*Memset|^.*dma|^.*Sync|^Stream Wait Event|^cuda.*LaunchKernel|"
			   "^runFunction|^hip|^job_exe|^packet|^pe_exe|^cpum_exe_subgraph|^hccl|"
			   "^collective_subgraph_execution", 0 },
	[RE_TL_MEMCPY] = { "^(MEMORY_COPY_(HOST_TO_DEVICE|DEVICE_TO_HOST|DEVICE_TO_DEVICE)|"
			   "__amd_rocclr_copyBuffer(Rect)?(Aligned)?)(\\.kd)?$", 0 },
	[RE_TL_COMM] = { "nccl|rccl|cross_device_reduce", 1 },
};
static regex_t peer_re[RE__COUNT];
static int peer_ok[RE__COUNT];
static pthread_once_t peer_once = PTHREAD_ONCE_INIT;

static void peer_compile(void)
{
	for (int i = 0; i < RE__COUNT; i++)
		peer_ok[i] = regcomp(&peer_re[i], peer_src[i].re,
				     REG_EXTENDED | REG_NOSUB | (peer_src[i].icase ? REG_ICASE : 0)) == 0;
}

static int rmatch(int which, const char *s)
{
	pthread_once(&peer_once, peer_compile);
	return peer_ok[which] && regexec(&peer_re[which], s, 0, NULL, 0) == 0;
}

/* HTA 0.6.1 hta/common/types.py + utils.get_kernel_type: Python re.match
 * anchors at the start, hence the ^ on each alternative.  MEMORY and OTHER
 * are neither compute nor comm for the overlap; both count in busy. */
static uint8_t hta_class(const char *name, int hint)
{
	if (hint == R_SYNC)
		return C_NONE;
	if (rmatch(RE_HTA_COMM, name))
		return C_COMM;
	if (rmatch(RE_HTA_MEM, name))
		return C_MEMCPY;
	if (rmatch(RE_HTA_OTHER, name))
		return C_OTHER; /* HTA "OTHER": busy, neither compute nor comm */
	return C_COMPUTE;
}

uint8_t *classes_hta(const struct trace *t)
{
	return classes_by_name(t, hta_class);
}

/* TraceLens gpu_event_analyser.py: comm by name (nccl|rccl|
 * cross_device_reduce, any case), memcpy by category (and ROCm blit copy
 * kernels), everything else, memset included, is computation. */
static uint8_t tracelens_class(const char *name, int hint)
{
	if (hint == R_SYNC)
		return C_NONE;
	if (hint == R_MEMCPY || rmatch(RE_TL_MEMCPY, name))
		return C_MEMCPY;
	if (rmatch(RE_TL_COMM, name))
		return C_COMM;
	return C_COMPUTE;
}

uint8_t *classes_tracelens(const struct trace *t)
{
	return classes_by_name(t, tracelens_class);
}
