/*
 * tp_bench.c - a standalone driver of the tune-tp GPU side (not a test:
 * the GPU test runner runs only test_*): Llama-3-8B fc1 fprop (AG then
 * GEMM) and fc2 fprop (GEMM then RS) at S tokens and TP 2 (or --tp), for
 * every method each supports over a small grid of TE's keys, each
 * configuration measured with the check by tp_gpu_measure (median of
 * --iters after --warmup).  Prints one JSON object per configuration on
 * stdout ("schema": "aorta.tp_bench/1") and a table on stderr; exit 1 if
 * any check failed, 4 on a GPU error.
 *
 * Usage: tp_bench [--tp N] [--tokens S] [--iters N] [--warmup N]
 *                 [--trace-dir DIR]
 */
#include "tp/tp_gpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *mname(enum tp_method m)
{
	static const char *const n[] = { "none", "bulk", "ring_exchange", "pipeline" };
	return n[m];
}

static struct tp_cfg cfg_of(enum tp_method m, int num_sm, int margin, int agg, int splits, int ce)
{
	struct tp_cfg c;

	memset(&c, 0, sizeof(c));
	c.method = m;
	c.num_sm = num_sm;
	c.cga_size = m == TP_RING_EXCHANGE ? 1 : 2;
	c.set_sm_margin = margin;
	c.aggregate = agg;
	c.num_splits = splits;
	c.use_ce = ce;
	return c;
}

int main(int argc, char **argv)
{
	int tp = 2, iters = 20, warmup = 5, nbad = 0;
	long long S = 8192, h = 4096, inter = 14336;
	const char *trace_dir = NULL;
	struct tp_session *s = NULL;
	struct aorta_error e;
	int sms = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--tp") && i + 1 < argc)
			tp = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--tokens") && i + 1 < argc)
			S = atoll(argv[++i]);
		else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
			iters = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--warmup") && i + 1 < argc)
			warmup = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--trace-dir") && i + 1 < argc)
			trace_dir = argv[++i];
		else {
			fprintf(stderr, "usage: tp_bench [--tp N] [--tokens S] [--iters N] [--warmup N] [--trace-dir DIR]\n");
			return 2;
		}
	}
	if (tp_gpu_count() < tp) {
		fprintf(stderr, "tp_bench: needs %d GPUs, %d visible\n", tp, tp_gpu_count());
		return 4;
	}
	memset(&e, 0, sizeof(e));
	if (tp_gpu_open(tp, S * 2 * inter / tp, &s, &sms, &e) != AORTA_OK) {
		fprintf(stderr, "tp_bench: %s\n", e.msg);
		return 4;
	}
	fprintf(stderr, "tp_bench: tp %d, %d SMs, S %lld, Llama-3-8B (h %lld, intermediate %lld, gated)\n", tp, sms,
		S, h, inter);
	fprintf(stderr, "%-4s %-13s %4s %5s %3s %2s %9s %9s %9s %9s %8s %s\n", "op", "method", "sm", "split", "agg",
		"ce", "e2e_ms", "gemm_ms", "comm_ms", "serial_ms", "err", "check");

	for (int op = 0; op < 2; op++) {
		struct tp_shape sh;
		struct tp_cfg cs[40];
		int nc = 0;

		memset(&sh, 0, sizeof(sh));
		sh.tp = tp;
		sh.phase = TP_FPROP;
		sh.dtype = TP_BF16;
		sh.m = S;
		if (op == 0) { /* fc1: AG of X [S/tp, h], Y = X W, W [h, 2 inter / tp] */
			sh.op = TP_FC1;
			sh.coll = TP_AG;
			sh.k = h;
			sh.n = 2 * inter / tp;
			sh.coll_rows = S, sh.coll_cols = h;
			cs[nc++] = cfg_of(TP_NONE, 0, 0, 0, 1, 1);
			cs[nc++] = cfg_of(TP_RING_EXCHANGE, 1, 0, 0, tp, 1);
			cs[nc++] = cfg_of(TP_RING_EXCHANGE, 1, 0, 1, tp, 1);
			cs[nc++] = cfg_of(TP_RING_EXCHANGE, 4, 0, 0, tp, 0);
			cs[nc++] = cfg_of(TP_RING_EXCHANGE, 8, 1, 0, tp, 0);
			cs[nc++] = cfg_of(TP_RING_EXCHANGE, 16, 1, 0, tp, 0);
		} else { /* fc2: Y = X W, X [S, inter / tp], W [inter / tp, h], RS of Y */
			sh.op = TP_FC2;
			sh.coll = TP_RS;
			sh.k = inter / tp;
			sh.n = h;
			sh.coll_rows = S, sh.coll_cols = h;
			cs[nc++] = cfg_of(TP_NONE, 0, 0, 0, 1, 1);
			cs[nc++] = cfg_of(TP_RING_EXCHANGE, 1, 0, 0, tp, 1);
			cs[nc++] = cfg_of(TP_RING_EXCHANGE, 1, 1, 0, tp, 1);
			cs[nc++] = cfg_of(TP_RING_EXCHANGE, 8, 0, 0, tp, 0);
			cs[nc++] = cfg_of(TP_RING_EXCHANGE, 16, 1, 0, tp, 0);
			cs[nc++] = cfg_of(TP_RING_EXCHANGE, 1, 0, 0, 2 * tp, 1);
			cs[nc++] = cfg_of(TP_RING_EXCHANGE, 1, 0, 0, 4 * tp, 1);
			cs[nc++] = cfg_of(TP_RING_EXCHANGE, 1, 0, 0, 8 * tp, 1);
			cs[nc++] = cfg_of(TP_RING_EXCHANGE, 16, 0, 0, 4 * tp, 0);
			int sms_[] = { 8, 16, 32 }, splits[] = { 2, 4, 8 };
			for (int a = 0; a < 3; a++)
				for (int b = 0; b < 3; b++)
					for (int mg = 0; mg < 2; mg++)
						cs[nc++] = cfg_of(TP_PIPELINE, sms_[a], mg, 0, splits[b], 1);
		}
		for (int i = 0; i < nc; i++) {
			struct tp_measure_opts o;
			struct tp_meas m;
			enum aorta_status st;

			memset(&o, 0, sizeof(o));
			o.warmup = warmup;
			o.iters = iters;
			o.check = 1;
			o.seed = 7;
			o.trace_dir = trace_dir;
			st = tp_gpu_measure(s, &sh, &cs[i], &o, &m, &e);
			if (st != AORTA_OK) {
				/* report, then go on with a fresh session (a failed
				 * session is unusable) */
				fprintf(stderr, "tp_bench: %s %s sm %d split %d: %s\n", op ? "fc2" : "fc1",
					mname(cs[i].method), cs[i].num_sm, cs[i].num_splits, e.msg);
				nbad++;
				tp_gpu_close(s);
				s = NULL;
				if (tp_gpu_open(tp, S * 2 * inter / tp, &s, &sms, &e) != AORTA_OK) {
					fprintf(stderr, "tp_bench: %s\n", e.msg);
					return 4;
				}
				continue;
			}
			char errs[32];
			if (isnan(m.max_rel_err))
				snprintf(errs, sizeof(errs), "null");
			else
				snprintf(errs, sizeof(errs), "%.4g", m.max_rel_err);
			nbad += !m.check_ok;
			fprintf(stderr, "%-4s %-13s %4d %5d %3d %2d %9.3f %9.3f %9.3f %9.3f %8.2g %s\n", op ? "fc2" : "fc1",
				mname(cs[i].method), cs[i].num_sm, cs[i].num_splits, cs[i].aggregate, cs[i].use_ce,
				m.e2e_ms, m.gemm_ms, m.comm_ms, m.serial_ms, m.max_rel_err, m.check_ok ? "ok" : "MISMATCH");
			printf("{\"schema\": \"aorta.tp_bench/1\", \"op\": \"%s\", \"tp\": %d, \"m\": %lld, \"n\": %lld, "
			       "\"k\": %lld, \"method\": \"%s\", \"num_sm\": %d, \"set_sm_margin\": %d, \"num_splits\": %d, "
			       "\"aggregate\": %d, \"use_ce\": %d, \"e2e_ms\": %.4f, \"e2e_min_ms\": %.4f, "
			       "\"e2e_max_ms\": %.4f, \"gemm_ms\": %.4f, \"comm_ms\": %.4f, \"serial_ms\": %.4f, "
			       "\"check_ok\": %d, \"max_rel_err\": %s, \"trace\": \"%s\"}\n",
			       op ? "fc2" : "fc1", tp, sh.m, sh.n, sh.k, mname(cs[i].method), cs[i].num_sm,
			       cs[i].set_sm_margin, cs[i].num_splits, cs[i].aggregate, cs[i].use_ce, m.e2e_ms,
			       m.e2e_min_ms, m.e2e_max_ms, m.gemm_ms, m.comm_ms, m.serial_ms, m.check_ok,
			       errs, m.trace_path);
			fflush(stdout);
		}
	}
	tp_gpu_close(s);
	return nbad ? 1 : 0;
}
