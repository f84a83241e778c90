/*
 * overlap.c - the trace-intersection overlap ratio of one measured
 * configuration, and the wall-clock hidden fraction.
 *
 * The GPU side leaves tp_meas.overlap_ratio NaN and writes a Kineto trace
 * (CUPTI spans of the measured iterations of every rank: one process drives
 * the tp GPUs, so one file holds several devices, told apart by each
 * event's args.device, else its pid).  This file builds one struct trace
 * (the timeline model) per device and computes, with the shared overlap
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
 * Why not ingest_file: the Kineto reader builds one struct trace per file
 * and keeps no per-span device, and CUDA stream ids repeat across devices
 * (each context's default stream), so a GEMM on GPU 0 would count as
 * overlapping a transfer on GPU 1.  The events are few (the timed
 * iterations only), so the file is read whole (zread_all: plain or gzip)
 * and parsed with yajl's tree API into per-device traces; the
 * classification, the timeline and the engine are the shared ones.
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

#include <yajl/yajl_tree.h>

#include "base/zread.h"
#include "overlap/engine.h"
#include "timeline/timeline.h"
#include "tp/tp_host.h"

#define TRACE_MAX_BYTES ((size_t)1 << 30)
#define MAX_DEVICES 64

double tp_hidden_fraction(double gemm_ms, double comm_ms, double e2e_ms)
{
	double lo = gemm_ms < comm_ms ? gemm_ms : comm_ms;
	if (!(gemm_ms > 0) || !(comm_ms > 0) || !(e2e_ms > 0))
		return NAN;
	return (gemm_ms + comm_ms - e2e_ms) / lo;
}

/* the spans of one device (a struct trace of the timeline model) */
struct dev_trace {
	long long dev;
	struct trace *t;
};

static int comm_name(enum span_kind k, const char *name)
{
	if (k == K_COMM || k == K_MEMCPY_P2P || k == K_MEMCPY_D2D)
		return 1;
	if (k == K_GEMM)
		return 0;
	return strncmp(name, "tp_comm_", 8) == 0 || strstr(name, "tp_ring_copy") != NULL ||
	       strstr(name, "userbuffers") != NULL;
}

static yajl_val get(yajl_val o, const char *k)
{
	const char *p[] = { k, NULL };
	return yajl_tree_get(o, p, yajl_t_any);
}

static const char *str(yajl_val v)
{
	return v && YAJL_IS_STRING(v) ? YAJL_GET_STRING(v) : NULL;
}

static int num(yajl_val v, double *x)
{
	if (!v || !YAJL_IS_NUMBER(v))
		return 0;
	*x = YAJL_IS_INTEGER(v) ? (double)YAJL_GET_INTEGER(v) : YAJL_GET_DOUBLE(v);
	return 1;
}

/* adds one file's device spans to d[0..*nd) */
static enum aorta_status read_file(const char *path, struct dev_trace *d, int *nd, struct aorta_error *e)
{
	char *buf = NULL, err[256] = "";
	size_t len = 0;
	enum aorta_status st = zread_all(path, TRACE_MAX_BYTES, &buf, &len, e);
	if (st)
		return st;
	yajl_val root = yajl_tree_parse(buf, err, sizeof(err));
	free(buf);
	if (!root) {
		char *nl = strchr(err, '\n');
		if (nl)
			*nl = 0;
		return aorta_fail(e, AORTA_EINPUT, path, 0, -1, "invalid JSON: %s", err[0] ? err : "parse error");
	}
	yajl_val evs = YAJL_IS_OBJECT(root) ? get(root, "traceEvents") : NULL;
	if (!evs || !YAJL_IS_ARRAY(evs)) {
		yajl_tree_free(root);
		return aorta_fail(e, AORTA_EINPUT, path, 0, -1, "not a Kineto trace (no traceEvents array)");
	}
	for (size_t i = 0; i < YAJL_GET_ARRAY(evs)->len; i++) {
		yajl_val ev = YAJL_GET_ARRAY(evs)->values[i];
		if (!YAJL_IS_OBJECT(ev))
			continue;
		const char *ph = str(get(ev, "ph")), *c = str(get(ev, "cat")), *name = str(get(ev, "name"));
		if (!ph || strcmp(ph, "X") || !c || !name)
			continue;
		enum record_hint hint;
		if (!strcmp(c, "kernel") || !strcmp(c, "Kernel"))
			hint = R_KERNEL;
		else if (!strcmp(c, "gpu_memcpy") || !strcmp(c, "Memcpy"))
			hint = R_MEMCPY;
		else
			continue;
		double ts, dur, dv;
		if (!num(get(ev, "ts"), &ts) || !num(get(ev, "dur"), &dur) || dur < 0)
			continue;
		yajl_val args = get(ev, "args");
		if (!(args && YAJL_IS_OBJECT(args) && num(get(args, "device"), &dv)) && !num(get(ev, "pid"), &dv))
			dv = -1;
		int j;
		for (j = 0; j < *nd && d[j].dev != (long long)dv; j++)
			;
		if (j == *nd) {
			if (*nd == MAX_DEVICES)
				continue;
			d[j].dev = (long long)dv;
			d[j].t = trace_new(path, "kineto");
			d[j].t->device = dv >= 0 && dv <= INT32_MAX ? (int)dv : -1;
			(*nd)++;
		}
		yajl_val sv = args && YAJL_IS_OBJECT(args) ? get(args, "stream") : NULL;
		double stream = -1;
		num(sv, &stream);
		int64_t a = llround(ts * 1000.0), b = a + llround(dur * 1000.0);
		trace_add_device(d[j].t, a, b, name, strlen(name), hint, (int32_t)stream, -1, 0);
	}
	yajl_tree_free(root);
	return AORTA_OK;
}

static int trace_name(const char *n)
{
	size_t l = strlen(n);
	return (l > 5 && !strcmp(n + l - 5, ".json")) || (l > 8 && !strcmp(n + l - 8, ".json.gz"));
}

enum aorta_status tp_trace_overlap(const char *path, double *ratio, int64_t *inter_ns,
				   int64_t *comm_ns, struct aorta_error *e)
{
	struct dev_trace d[MAX_DEVICES];
	int nd = 0;
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
			st = read_file(f, d, &nd, e);
			files++;
		}
		closedir(dir);
		if (!st && !files)
			st = aorta_fail(e, AORTA_EINPUT, path, 0, -1, "no trace files (*.json, *.json.gz)");
	} else {
		st = read_file(path, d, &nd, e);
	}
	int64_t inter = 0, comm = 0;
	for (int j = 0; j < nd; j++) {
		struct trace *t = d[j].t;
		if (!st) {
			/* the rule table classifies (trace_finish); our classes make
			 * S_COMM the transfers, and the engine's S_GEMM_COMM is
			 * (U GEMM) n (U comm) */
			struct ov_sets os;
			trace_finish(t, NULL);
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
		trace_free(t);
	}
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
