/*
 * sdma.c - aorta sdma: does a copy overlap a bf16 GEMM, and what does each
 * side lose while they share the GPU?  (Upstream AORTA's SDMA prototype,
 * on CUDA, with its defects fixed: docs/sdma.md.)
 *
 *   aorta sdma [--device 0] [--matrix-size 4096] [--copy-mb 64]
 *              [--iterations 20] [--cold-iters 3] [--direction d2h|h2d|d2d|p2p]
 *              [--engine copy|kernel] [--json FILE] [-q]
 *
 * Order of business: every option value is checked, the --json output is
 * opened (so an unwritable path fails now), the plug-in is loaded and its
 * device query says what the machine has; a device that does not exist,
 * a p2p run without a reachable peer, or sizes that do not fit the free
 * memory are refused (exit 2) before anything is allocated on a GPU.  Only
 * then does the plug-in run (src/sdma/sdma_gpu.c).  A copy or GEMM that
 * verifies wrong exits 1 after the results are printed and written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/options.h"
#include "base/output.h"
#include "base/plugin.h"
#include "cmd/cmds.h"
#include "sdma/sdma.h"

/* The options into cfg, checked (json: --json); 0, or the exit code (-1:
 * help printed). */
static int parse_args(int argc, char **argv, struct sdma_config *cfg, const char **json)
{
	const char *dir = "d2h", *engine = "copy";
	int seed = 1, quiet = 0;
	sdma_config_defaults(cfg);
	struct opt opts[] = {
		OPT_INT(0, "device", &cfg->device, "N", "GPU that computes and issues the copy (default 0)"),
		OPT_INT(0, "matrix-size", &cfg->matrix_size, "S", "GEMM of S x S bf16 matrices (default 4096)"),
		OPT_INT(0, "copy-mb", &cfg->copy_mb, "M", "MiB copied per iteration, exactly M * 1048576 bytes (default 64)"),
		OPT_INT(0, "iterations", &cfg->iterations, "I", "measured iterations per phase (default 20)"),
		OPT_INT(0, "cold-iters", &cfg->cold_iters, "C", "warm-up iterations before them, excluded from every figure (default 3)"),
		OPT_STRING(0, "direction", &dir, "DIR", "d2h (device -> pinned host, default), h2d, d2d (same device), p2p (device -> device+1)"),
		OPT_STRING(0, "engine", &engine, "E", "copy: cudaMemcpyAsync on the copy engines (default); kernel: an SM copy kernel"),
		OPT_INT(0, "seed", &seed, "N", "seed of the GEMM inputs and the copy pattern (default 1)"),
		OPT_INT(0, "gemm-samples", &cfg->gemm_samples, "N", "GEMM output entries checked against the CPU (default 256)"),
		OPT_STRING(0, "json", json, "FILE", "write the results as JSON (schema aorta.sdma/1)"),
		OPT_BOOL('q', "quiet", &quiet, "print no results and no progress (use with --json)"),
		OPT_END(),
	};
	int nargs = 0;
	int rc = opt_parse(argc, argv, opts,
			   "aorta sdma [--device N] [--matrix-size S] [--copy-mb M] [--iterations I] "
			   "[--cold-iters C] [--direction d2h|h2d|d2d|p2p] [--engine copy|kernel] "
			   "[--json FILE] [-q]",
			   "Copy/compute overlap: a bf16 GEMM + relu on a normal-priority stream and a\n"
			   "copy on a high-priority stream, run alone, one after the other, and together.\n"
			   "Prints the sequential and overlapped time per iteration, the savings, and\n"
			   "each side's slowdown under contention; verifies the copied bytes and the GEMM.",
			   &nargs);
	if (rc)
		return rc;
	if (nargs > 0) {
		fprintf(stderr, "aorta: error: unexpected argument '%s' (aorta sdma takes options only)\n",
			argv[0]);
		return AORTA_EUSAGE;
	}
	int d = sdma_dir_parse(dir), g = sdma_engine_parse(engine);
	if (d < 0) {
		fprintf(stderr, "aorta: error: --direction '%s': expected d2h, h2d, d2d or p2p\n", dir);
		return AORTA_EUSAGE;
	}
	if (g < 0) {
		fprintf(stderr, "aorta: error: --engine '%s': expected copy or kernel\n", engine);
		return AORTA_EUSAGE;
	}
	if (seed < 0) {
		fprintf(stderr, "aorta: error: --seed %d: expected a number >= 0\n", seed);
		return AORTA_EUSAGE;
	}
	cfg->dir = (enum sdma_dir)d;
	cfg->engine = (enum sdma_engine)g;
	cfg->seed = (uint64_t)seed;
	cfg->peer = cfg->dir == SDMA_P2P ? cfg->device + 1 : -1;
	cfg->quiet = quiet;
	aorta_quiet = quiet;
	return 0;
}

/* The plug-in's device query, the machine checked against cfg, then the
 * run into res (initialised here); the status (e says why). */
static enum aorta_status run_plugin(const struct sdma_config *cfg, struct sdma_gpu_info *info, struct sdma_result *res,
				    struct aorta_error *e)
{
	enum aorta_status st;
	char why[1024];
	sdma_query_fn query;
	sdma_run_fn run;
	*(void **)&query = gpu_plugin_sym(SDMA_QUERY_SYM, why, sizeof(why));
	*(void **)&run = query ? gpu_plugin_sym(SDMA_RUN_SYM, why, sizeof(why)) : NULL;
	if (!query || !run) {
		gpu_plugin_complain("sdma", why);
		return AORTA_EGPU;
	}
	if ((st = query(cfg, info, e)) || (st = sdma_check_machine(cfg, info, e))) {
		aorta_error_print(e);
		return st;
	}
	sdma_result_init(res, cfg);
	if ((st = run(cfg, res, e)))
		aorta_error_print(e);
	return st;
}

/* A copy or GEMM that verified wrong: said, AORTA_ECHECK. */
static int verdict(const struct sdma_result *res)
{
	int rc = AORTA_OK;
	if (!(res->copy_checked > 0 && res->copy_ok)) {
		fprintf(stderr,
			"aorta: error: copy verification failed: byte %lld of the destination is 0x%02x, "
			"expected 0x%02x (after the %s phase)\n",
			(long long)res->copy_mismatch_offset, res->copy_got, res->copy_want,
			sdma_series_name((enum sdma_series)res->copy_mismatch_phase));
		rc = AORTA_ECHECK;
	}
	if (!(res->gemm_checked && res->gemm_ok)) {
		fprintf(stderr,
			"aorta: error: GEMM verification failed: %d of %d sampled entries outside the bf16 "
			"tolerance (worst at (%lld, %lld): %.6g, expected %.6g)\n",
			res->gemm_failed, res->gemm_samples, res->gemm_worst_i, res->gemm_worst_j,
			res->gemm_worst_got, res->gemm_worst_want);
		rc = AORTA_ECHECK;
	}
	return rc;
}

int cmd_sdma(int argc, char **argv)
{
	struct sdma_config cfg;
	const char *json = NULL;
	int rc = parse_args(argc, argv, &cfg, &json);
	if (rc)
		return rc < 0 ? AORTA_OK : rc;
	struct aorta_error e = { 0 };
	enum aorta_status st = sdma_config_check(&cfg, &e);
	struct outfile of = { 0 };
	if (st || (json && (st = out_open(&of, json, &e)))) {
		aorta_error_print(&e);
		return st;
	}
	struct sdma_gpu_info info;
	struct sdma_result res;
	struct sdma_summary sum;
	memset(&res, 0, sizeof(res));
	if ((st = run_plugin(&cfg, &info, &res, &e))) {
		if (json)
			out_abort(&of);
		sdma_result_release(&res);
		return st;
	}
	sdma_summarise(&cfg, &res, &sum);
	if (!cfg.quiet)
		sdma_print_text(stdout, &cfg, &info, &res, &sum);
	if (json) {
		sdma_write_json(of.f, &cfg, &info, &res, &sum);
		if ((st = out_commit(&of, &e))) {
			aorta_error_print(&e);
			sdma_result_release(&res);
			return st;
		}
	}
	rc = verdict(&res);
	sdma_result_release(&res);
	return rc;
}
