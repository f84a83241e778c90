/*
 * streams.c - the named streams every workload uses: compute, allreduce,
 * reducescatter, aux, allgather.
 *
 * Design.  Upstream AORTA makes four torch streams at priority 0 and puts
 * FSDP all-gathers on aux; aorta adds a fifth, allgather, so all-gathers
 * count as communication.  Streams are non-blocking (no implicit ordering
 * against the legacy default stream): every dependency in a workload is an
 * explicit event wait, so what the recorder measures is what the code asks
 * for.  Priorities come from cudaDeviceGetStreamPriorityRange; with
 * high_priority the comm streams take the device's greatest priority, so
 * their kernels are scheduled ahead of compute blocks waiting for SMs
 * (the hardware-queue experiment upstream calls run-priority).
 */
#include "gpu/gpu.h"

#include <string.h>

static const char *const names[GS__COUNT] = {
	"compute", "allreduce", "reducescatter", "aux", "allgather",
};

const char *gpu_stream_name(int id)
{
	return id >= 0 && id < GS__COUNT ? names[id] : NULL;
}

int gpu_stream_from_name(const char *name)
{
	for (int i = 0; name && i < GS__COUNT; i++)
		if (strcmp(name, names[i]) == 0)
			return i;
	return -1;
}

static int is_comm(int id)
{
	return id == GS_ALLREDUCE || id == GS_REDUCESCATTER || id == GS_ALLGATHER;
}

enum aorta_status gpu_streams_init(struct gpu_streams *g, int high_priority, struct aorta_error *e)
{
	enum aorta_status st = AORTA_OK;
	int i;

	memset(g, 0, sizeof(*g));
	GPU_CHECK(e, gpuGetDevice(&g->device));
	GPU_CHECK(e, gpuDeviceGetStreamPriorityRange(&g->least, &g->greatest));
	g->high_priority = high_priority != 0;
	for (i = 0; i < GS__COUNT; i++) {
		int prio = g->high_priority && is_comm(i) ? g->greatest : g->least;
		GPU_CHECK_GOTO(e, st, gpuStreamCreateWithPriority(&g->s[i], gpuStreamNonBlocking, prio), fail);
		GPU_CHECK_GOTO(e, st, gpuStreamGetPriority(g->s[i], &g->priority[i]), fail);
	}
	return AORTA_OK;
fail:
	for (int k = 0; k < GS__COUNT; k++)
		if (g->s[k])
			(void)gpuStreamDestroy(g->s[k]); /* already failing: the first error is kept */
	memset(g, 0, sizeof(*g));
	return st;
}

enum aorta_status gpu_streams_sync(const struct gpu_streams *g, struct aorta_error *e)
{
	for (int i = 0; i < GS__COUNT; i++)
		if (g->s[i])
			GPU_CHECK(e, gpuStreamSynchronize(g->s[i]));
	return AORTA_OK;
}

enum aorta_status gpu_streams_release(struct gpu_streams *g, struct aorta_error *e)
{
	enum aorta_status st = AORTA_OK;

	for (int i = 0; i < GS__COUNT; i++) {
		if (!g->s[i])
			continue;
		enum aorta_status s1 = GPU_CALL(st == AORTA_OK ? e : NULL, gpuStreamDestroy(g->s[i]));
		if (st == AORTA_OK)
			st = s1;
		g->s[i] = NULL;
	}
	return st;
}
