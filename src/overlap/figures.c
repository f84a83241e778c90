/*
 * figures.c - the figure table (docs/metrics.md documents each entry).
 *
 * One name per figure, for people too: a label names one quantity in every
 * front end (terminal, report page, charts), and a quantity has one label
 * (the terminal only indents a part under its whole): FIGURES and REP_FIGS
 * give the same label to the same struct ov_figures field
 * (tests/tools/figure_keys.py checks the outputs).
 */
#include "overlap/figures.h"

#include <math.h>

#define F(k, l, field, b) { k, l, offsetof(struct ov_figures, field), b }
const struct figure FIGURES[] = {
	F("step_ms", "step", window_ns, 1),
	F("busy_ms", "GPU busy", busy_ns, 0),
	F("compute_ms", "compute", compute_ns, 0),
	F("gemm_ms", "  gemm", gemm_ns, 0),
	F("attention_ms", "  attention", attention_ns, 0),
	F("comm_ms", "communication", comm_ns, 1),
	F("overlapped_comm_ms", "  overlapped comm", overlap_ns, -1),
	F("exposed_comm_ms", "  exposed comm", exposed_comm_ns, 1),
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

#define R(k, l, field, c, r) { k, l, offsetof(struct ov_figures, field), c, r }
const struct rep_fig_def REP_FIGS[RF__COUNT] = {
	[RF_STEP] = R("step_ms", "step", window_ns, -1, SR_STEP),
	[RF_COMPUTE] = R("compute_ms", "compute", compute_ns, -1, SR_COMPUTE),
	[RF_OVERLAP] = R("overlap_ms", "overlapped comm", overlap_ns, -1, SR_OVERLAP),
	[RF_AR_OVERLAP] = R("allreduce_overlap_ms", "all-reduce overlap", overlap_ns, COLL_ALL_REDUCE, SR_AR_OVERLAP),
	[RF_RS_OVERLAP] = R("reducescatter_overlap_ms", "reduce-scatter overlap", overlap_ns, COLL_REDUCE_SCATTER,
			    SR_RS_OVERLAP),
	[RF_AG_OVERLAP] = R("allgather_overlap_ms", "all-gather overlap", overlap_ns, COLL_ALL_GATHER, SR_AG_OVERLAP),
	[RF_COMM] = R("comm_ms", "communication", comm_ns, -1, SR_COMM),
	[RF_EXPOSED] = R("exposed_comm_ms", "exposed comm", exposed_comm_ns, -1, SR_EXPOSED),
	[RF_AUX] = R("aux_ms", "memcpy", memcpy_ns, -1, SR_AUX),
	[RF_IDLE] = R("idle_ms", "idle", idle_ns, -1, SR_IDLE),
};

double rep_fig_ms(const struct rep_fig_def *f, const struct ov_figures *x)
{
	int64_t v = f->coll >= 0 ? x->coll_ns[f->coll] - x->coll_exposed_ns[f->coll]
				 : *(const int64_t *)((const char *)x + f->off);
	return (double)v * 1e-6;
}

int rep_fig_dir(const struct rep_fig_def *f)
{
	for (size_t k = 0; k < NFIGURES; k++)
		if (FIGURES[k].off == f->off)
			return FIGURES[k].lower_is_better;
	return 0;
}

void coll_bw_add(struct coll_bw *b, const struct coll_row *c)
{
	double f = coll_busbw_factor((enum coll_type)c->type, c->group_size);
	if (!c->bytes)
		return;
	if (!b->rows++) {
		b->type = c->type;
		b->group_size = c->group_size;
	} else if (c->group_size != b->group_size) {
		b->mixed = 1;
	}
	if (c->matched && c->xfer_ns > 0) {
		double m = (double)c->bytes * (double)c->matched;
		b->moved_matched += m;
		b->moved_matched_f += m * f;
		b->xfer_ns += (double)c->xfer_ns;
	}
	if (c->total_ns > 0) {
		double m = (double)c->bytes * (double)c->count;
		b->moved += m;
		b->moved_f += m * f;
		b->kernel_ns += (double)c->total_ns;
	}
}

static double bw_of(const struct coll_bw *b, double moved, double moved_f, double ns)
{
	if (!b->rows || ns <= 0)
		return NAN;
	if (b->mixed) /* rows of several group sizes: each with its own factor */
		return moved_f / ns;
	return moved / ns * coll_busbw_factor((enum coll_type)b->type, b->group_size);
}

double coll_bw_busbw_gbps(const struct coll_bw *b)
{
	return bw_of(b, b->moved_matched, b->moved_matched_f, b->xfer_ns);
}

double coll_bw_busbw_kernel_gbps(const struct coll_bw *b)
{
	return bw_of(b, b->moved, b->moved_f, b->kernel_ns);
}
