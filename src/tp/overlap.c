/*
 * overlap.c - the trace-intersection overlap ratio of one measured
 * configuration, and the wall-clock hidden fraction.
 *
 * The GPU side leaves tp_meas.overlap_ratio NaN and writes a Kineto trace
 * (CUPTI spans of the measured iterations of every rank: one process drives
 * the tp GPUs, so one file holds several devices, told apart by each
 * event's args.device, else its pid).  The project's Kineto reader
 * (ingest_kineto) splits such a file into one struct trace (the timeline
 * model) per device, and this file computes, with the shared overlap
 * engine (ov_sets_build; unions on both sides, so concurrent chunks on
 * several streams count once):
 *     ratio = |(U GEMM spans) n (U comm spans)| / |U comm spans|
 * pooled over devices (sums of both lengths): the engine's gemm n comm set
 * over its comm set.  Span names are classified by the project's rule
 * table (trace_finish with the built-in rules): GEMM =
 * kind gemm (nvjet_*, sm90_xmma*, *gemm*, cutlass*, cublas*); comm = kind
 * comm (nccl*, userbuffers_*, kuserbuffers_*), peer and device-to-device
 * copies (Memcpy PtoP / DtoD: copy-engine ring exchanges), and kernels
 * named tp_comm_* / tp_ring_copy* or containing "userbuffers" (the
 * plug-in's SM-driven ring copies).  Everything else (reduce kernels,
 * barrier, signal and wait kernels) is in neither set.
 *
 * Per device matters: CUDA stream ids repeat across devices (each
 * context's default stream), so one timeline for the file would count a
 * GEMM on GPU 0 as overlapping a transfer on GPU 1.
 *
 * The ratio is reported, never used to rank: a configuration can hide all
 * of a slower collective and still lose to the serial baseline.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ingest/ingest.h"
#include "overlap/engine.h"
#include "timeline/timeline.h"
#include "tp/tp_host.h"

double tp_hidden_fraction(double gemm_ms, double comm_ms, double e2e_ms)
{
	double lo = gemm_ms < comm_ms ? gemm_ms : comm_ms;
	if (!(gemm_ms > 0) || !(comm_ms > 0) || !(e2e_ms > 0))
		return NAN;
	return (gemm_ms + comm_ms - e2e_ms) / lo;
}

static int comm_name(enum span_kind k, const char *name)
{
	if (k == K_COMM || k == K_MEMCPY_P2P || k == K_MEMCPY_D2D)
		return 1;
	if (k == K_GEMM)
		return 0;
	return strncmp(name, "tp_comm_", 8) == 0 || strstr(name, "tp_ring_copy") != NULL ||
	       strstr(name, "userbuffers") != NULL;
}

static int trace_name(const char *n)
{
	size_t l = strlen(n);
	return (l > 5 && !strcmp(n + l - 5, ".json")) || (l > 8 && !strcmp(n + l - 8, ".json.gz"));
}

enum aorta_status tp_trace_overlap(const char *path, double *ratio, int64_t *inter_ns,
				   int64_t *comm_ns, struct aorta_error *e)
{
	struct trace_set set = { 0 };
	enum aorta_status st = AORTA_OK;
	struct stat sb;

	*ratio = NAN;
	if (stat(path, &sb))
		return aorta_fail(e, AORTA_EINPUT, path, 0, -1, "no such file or directory");
	if (S_ISDIR(sb.st_mode)) {
		DIR *dir = opendir(path);
		struct dirent *de;
		int files = 0;
		if (!dir)
			return aorta_fail(e, AORTA_EINPUT, path, 0, -1, "cannot open directory");
		while (!st && (de = readdir(dir))) {
			if (!trace_name(de->d_name))
				continue;
			char f[2048];
			snprintf(f, sizeof(f), "%s/%s", path, de->d_name);
			st = ingest_kineto(f, NULL, &set, e);
			files++;
		}
		closedir(dir);
		if (!st && !files)
			st = aorta_fail(e, AORTA_EINPUT, path, 0, -1, "no trace files (*.json, *.json.gz)");
	} else {
		st = ingest_kineto(path, NULL, &set, e);
	}
	/* one timeline per device and file (the captures of one device in
	 * several files do not overlap in time, so sums over the timelines
	 * are the per-device figures pooled) */
	int64_t inter = 0, comm = 0;
	for (size_t j = 0; !st && j < set.n; j++) {
		/* the rule table classified the spans (trace_finish); our classes
		 * make S_COMM the transfers, and the engine's S_GEMM_COMM is
		 * (U GEMM) n (U comm) */
		struct trace *t = set.t[j];
		struct ov_sets os;
		uint8_t *cls = xmalloc(t->n + 1);
		for (size_t i = 0; i < t->n; i++) {
			enum span_kind k = (enum span_kind)t->kind[i];
			cls[i] = k == K_GEMM ? C_COMPUTE
				 : comm_name(k, strtab_get(&t->names, t->name[i])) ? C_COMM : C_NONE;
		}
		ov_sets_build(&os, t, cls, NULL, 0);
		inter += ivset_len(&os.set[S_GEMM_COMM]);
		comm += ivset_len(&os.set[S_COMM]);
		ov_sets_release(&os);
		free(cls);
	}
	trace_set_release(&set);
	if (st)
		return st;
	if (comm > 0)
		*ratio = (double)inter / (double)comm;
	if (inter_ns)
		*inter_ns = inter;
	if (comm_ns)
		*comm_ns = comm;
	return AORTA_OK;
}
