/*
 * figures.c - the figure table (docs/metrics.md documents each entry).
 */
#include "report/figures.h"

#include <math.h>

#define F(k, l, field, b) { k, l, offsetof(struct ov_figures, field), b }
const struct figure FIGURES[] = {
	F("step_ms", "step (window)", window_ns, 1),
	F("busy_ms", "GPU busy", busy_ns, 0),
	F("compute_ms", "compute", compute_ns, 0),
	F("gemm_ms", "  gemm", gemm_ns, 0),
	F("attention_ms", "  attention", attention_ns, 0),
	F("comm_ms", "communication", comm_ns, 1),
	F("overlapped_comm_ms", "  overlapped", overlap_ns, -1),
	F("exposed_comm_ms", "  exposed", exposed_comm_ns, 1),
	F("memcpy_ms", "memcpy", memcpy_ns, 0),
	F("exposed_memcpy_ms", "  exposed memcpy", exposed_memcpy_ns, 1),
	F("memset_ms", "memset", memset_ns, 0),
	F("idle_ms", "idle", idle_ns, 1),
	F("host_wait_ms", "  host wait", host_wait_ns, 1),
	F("gemm_comm_overlap_ms", "gemm-comm overlap", gemm_comm_ns, -1),
};
const size_t NFIGURES = sizeof(FIGURES) / sizeof(FIGURES[0]);

double ratio(int64_t num, int64_t den)
{
	return den ? (double)num / (double)den : NAN;
}

const char *const REC_KEYS[SR__COUNT] = {
	"step_ms", "compute_ms", "overlap_ms", "allreduce_overlap_ms", "reducescatter_overlap_ms",
	"allgather_overlap_ms", "comm_ms", "exposed_comm_ms", "aux_ms", "idle_ms", "loss",
};
