/*
 * space.c - TransformerEngine's configuration keys, its defaults and the
 * rules by which it rejects a configuration (TP.md 2.1-2.2), plus the
 * configurations that cannot overlap anything.  The search (search.c) asks
 * tp_cfg_check before every measurement, so nothing TE would refuse is
 * ever measured or recommended; each refusal is kept with its rule for the
 * report.
 *
 * Rules (REJECTED: TE raises or the launch cannot work):
 *  - atomic_gemm needs FP8 (this tuner measures bf16/fp16/fp32)
 *  - all-gather layers reject pipeline (ValueError in initialize_ub)
 *  - bulk needs a collective independent of the GEMM: only qkv/fc1 dgrad
 *    (AG of X for wgrad) and wgrad (RS of dgrad's output)
 *  - qkv/fc1 dgrad with a non-bulk method is TE's RS-dgrad mode
 *    (ub_overlap_rs_dgrad): it moves the layer to the RS list and drops the
 *    bulk wgrad, a different schedule; qkv/fc1 wgrad is bulk only
 *  - num_sm in 1..32 (UB_MAX_SM) and below the GPU's SMs; cga_size in
 *    1, 2, 4, 8 dividing num_sm (cluster launches need whole clusters)
 *  - pipeline: num_splits >= 2 with S divisible by tp x num_splits
 *  - ring_exchange aggregate: tp even
 *  - TP = 1: only method none
 * CANNOT_WIN (valid for TE, skipped): ring_exchange aggregate at TP 2 (one
 * exposed exchange, then a single 2-chunk GEMM: nothing left to overlap).
 */
#include <stdio.h>
#include <string.h>

#include "tp/tp_host.h"

void tp_cfg_default(enum tp_method m, int tp, struct tp_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->method = m;
	c->use_ce = 1;
	if (m == TP_RING_EXCHANGE) {
		c->num_sm = 1;
		c->cga_size = 1;
		c->set_sm_margin = 0;
		c->num_splits = tp;
	} else {
		c->num_sm = 16;
		c->cga_size = 2;
		c->set_sm_margin = 1;
		c->num_splits = 4;
	}
	if (m == TP_NONE) {
		c->num_sm = 0;
		c->set_sm_margin = 0;
		c->cga_size = 1;
	}
}

static enum tp_verdict no(char *why, size_t len, enum tp_verdict v, const char *fmt, const char *a)
{
	if (why && len)
		snprintf(why, len, fmt, a);
	return v;
}

enum tp_verdict tp_cfg_check(const struct tp_shape *sh, const struct tp_cfg *c, int sm_count,
			     char *why, size_t len)
{
	char buf[160];

	if (why && len)
		why[0] = 0;
	if ((unsigned)c->method >= TP__NMETHODS)
		return no(why, len, TP_REJECTED, "unknown method%s", "");
	if (c->method == TP_NONE)
		return TP_VALID;
	if (sh->tp == 1)
		return no(why, len, TP_REJECTED, "TP 1 has no communication to overlap%s", "");
	if (c->atomic_gemm)
		return no(why, len, TP_REJECTED, "atomic_gemm needs FP8 (dtype %s)", tp_dtype_name(sh->dtype));
	if (sh->coll == TP_AG && c->method == TP_PIPELINE)
		return no(why, len, TP_REJECTED, "TE rejects pipeline for all-gather layers%s", "");
	if (c->method == TP_BULK && !sh->bulk_only)
		return no(why, len, TP_REJECTED,
			  "bulk needs a collective independent of the GEMM (only qkv/fc1 dgrad and wgrad)%s", "");
	if (sh->bulk_only && c->method != TP_BULK)
		return no(why, len, TP_REJECTED,
			  sh->phase == TP_DGRAD ? "a non-bulk method on %s dgrad is TE's RS-dgrad mode "
						  "(ub_overlap_rs_dgrad, drops the bulk wgrad): not tuned"
						: "%s wgrad overlaps only as bulk",
			  tp_op_name(sh->op));
	int sm_used = c->method == TP_BULK || c->method == TP_PIPELINE ||
		      (c->method == TP_RING_EXCHANGE && !c->use_ce);
	if (sm_used || c->num_sm) {
		if (c->num_sm < 1 || c->num_sm > TP_UB_MAX_SM) {
			snprintf(buf, sizeof(buf), "num_sm %d outside 1..%d (TE's UB_MAX_SM)", c->num_sm, TP_UB_MAX_SM);
			return no(why, len, TP_REJECTED, "%s", buf);
		}
		if (sm_count > 0 && c->num_sm >= sm_count) {
			snprintf(buf, sizeof(buf), "num_sm %d leaves no SM of %d for the GEMM", c->num_sm, sm_count);
			return no(why, len, TP_REJECTED, "%s", buf);
		}
	}
	if (c->cga_size != 1 && c->cga_size != 2 && c->cga_size != 4 && c->cga_size != 8) {
		snprintf(buf, sizeof(buf), "cga_size %d is not 1, 2, 4 or 8", c->cga_size);
		return no(why, len, TP_REJECTED, "%s", buf);
	}
	if (sm_used && c->num_sm % c->cga_size) {
		snprintf(buf, sizeof(buf), "num_sm %d is not a multiple of cga_size %d", c->num_sm, c->cga_size);
		return no(why, len, TP_REJECTED, "%s", buf);
	}
	if (c->method == TP_PIPELINE) {
		if (c->num_splits < 2) {
			snprintf(buf, sizeof(buf), "num_splits %d: pipeline needs at least 2 chunks", c->num_splits);
			return no(why, len, TP_REJECTED, "%s", buf);
		}
		if (sh->coll_rows % ((long long)sh->tp * c->num_splits)) {
			snprintf(buf, sizeof(buf), "%lld tokens are not divisible by tp %d x num_splits %d",
				 sh->coll_rows, sh->tp, c->num_splits);
			return no(why, len, TP_REJECTED, "%s", buf);
		}
	}
	if (c->method == TP_RING_EXCHANGE && c->aggregate) {
		if (sh->tp % 2) {
			snprintf(buf, sizeof(buf), "aggregate needs an even TP size (tp %d)", sh->tp);
			return no(why, len, TP_REJECTED, "%s", buf);
		}
		if (sh->tp == 2)
			return no(why, len, TP_CANNOT_WIN,
				  "aggregate at TP 2 is one exposed exchange and one GEMM: nothing overlaps%s", "");
	}
	return TP_VALID;
}

void tp_cfg_id(const struct tp_shape *sh, const struct tp_cfg *c, char *buf, size_t len)
{
	char head[48];

	snprintf(head, sizeof(head), "tp%d_%s_%s", sh->tp, tp_op_name(sh->op), tp_phase_name(sh->phase));
	switch (c->method) {
	case TP_BULK:
		snprintf(buf, len, "%s_bulk_sm%d%s", head, c->num_sm, c->set_sm_margin ? "" : "_nomargin");
		break;
	case TP_RING_EXCHANGE:
		if (c->use_ce)
			snprintf(buf, len, "%s_ring_agg%d", head, c->aggregate ? 1 : 0);
		else
			snprintf(buf, len, "%s_ring_agg%d_sm%d", head, c->aggregate ? 1 : 0, c->num_sm);
		break;
	case TP_PIPELINE:
		snprintf(buf, len, "%s_pipeline_sm%d_split%d%s", head, c->num_sm, c->num_splits,
			 c->set_sm_margin ? "" : "_nomargin");
		break;
	default:
		snprintf(buf, len, "%s_none", head);
		break;
	}
}
