/*
 * train.c - aorta train: the synthetic ranking transformer of the upstream
 * AORTA toolkit, trained in C and CUDA (src/train/).
 *
 *   aorta train --config config/default.yaml [--override key=value ...]
 *
 * The configuration is upstream's schema (docs/cli.md); it is checked in
 * full before the GPU is touched, so a bad key, type or shape is an error
 * naming the file and line (exit 3) or the override (exit 2).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/options.h"
#include "base/output.h"
#include "base/plugin.h"
#include "cmd/cmds.h"
#include "train/train_config.h"
#include "train/trainer.h"

typedef enum aorta_status (*trainer_run_fn)(const struct train_config *, const struct trainer_opts *,
					     struct trainer_result *, struct aorta_error *);

int cmd_train(int argc, char **argv)
{
	static const char default_config[] = "config/default.yaml";
	const char *config = default_config;
	char found[4096];
	struct opt_list ov = { 0 };
	int rocm_metrics = 0, gpu_metrics = 0, device = -1, quiet = 0, check = 0, data_batches = 0;
	struct opt opts[] = {
		OPT_STRING('c', "config", &config, "FILE", "YAML or JSON configuration (default config/default.yaml)"),
		OPT_LIST(0, "override", &ov, "KEY=VALUE", "set a dotted key, e.g. training.batch_size=64 (repeatable)"),
		OPT_BOOL(0, "enable-gpu-metrics", &gpu_metrics, "record clocks, power, temperature and utilisation per step"),
		OPT_BOOL(0, "enable-rocm-metrics", &rocm_metrics, "upstream's name for --enable-gpu-metrics"),
		OPT_INT(0, "device", &device, "N", "train on this one GPU only (world 1); default: every visible GPU, one rank each"),
		OPT_INT(0, "data-batches", &data_batches, "N", "distinct batches kept in pinned memory (default min(num_samples / batch, 32))"),
		OPT_BOOL(0, "check-config", &check, "validate the configuration, print it resolved, and exit"),
		OPT_BOOL('q', "quiet", &quiet, "no log lines on stderr (the log file is still written)"),
		OPT_END(),
	};
	int nargs = 0;
	int rc = opt_parse(argc, argv, opts, "aorta train [--config FILE] [--override KEY=VALUE ...]",
			   "Trains the synthetic ranking transformer (upstream AORTA's model and config)\n"
			   "on every visible GPU (a thread per GPU; a process per GPU under mpirun, srun\n"
			   "or torchrun), timing every phase with events on the stream where it runs.\n"
			   "Writes <output_dir>/rank_NN_metrics.jsonl per rank (one record per step),\n"
			   "rankN.log, and Kineto traces under <output_dir>/torch_profiler/ when\n"
			   "profiling.enabled.",
			   &nargs);
	if (rc < 0)
		return AORTA_OK;
	if (rc)
		goto out_usage;
	/* upstream's --override takes the words after it (nargs="*") */
	for (int i = 0; i < nargs; i++) {
		if (!strchr(argv[i], '=')) {
			fprintf(stderr, "aorta: error: unexpected argument '%s' (overrides are KEY=VALUE)\n", argv[i]);
			rc = AORTA_EUSAGE;
			goto out_usage;
		}
		if (ov.n == ov.cap) {
			ov.cap = ov.cap ? ov.cap * 2 : 4;
			ov.v = xrealloc(ov.v, (size_t)ov.cap * sizeof(*ov.v));
		}
		ov.v[ov.n++] = argv[i];
	}

	/* the default from any folder: the source tree's or the installed copy */
	if (config == default_config)
		config = aorta_data_file(default_config, found, sizeof(found));
	struct train_config cfg;
	struct aorta_error e = { 0 };
	/* the configuration is an input: no output of the run may replace it */
	enum aorta_status st = out_guard_input(config, &e);
	if (!st)
		st = train_config_load(config, ov.v, ov.n, &cfg, &e);
	free(ov.v);
	ov.v = NULL;
	if (st) {
		aorta_error_print(&e);
		return st;
	}
	for (int i = 0; i < cfg.nwarnings; i++)
		aorta_warn("%s", cfg.warnings[i]);
	if (check) {
		train_config_dump_json(stdout, &cfg);
		train_config_release(&cfg);
		return AORTA_OK;
	}
	char why[1024];
	/* launch_train (train/launch_train.h, over comm/launch.h) starts the ranks: a thread per GPU,
	 * or this process's rank under mpirun/srun */
	trainer_run_fn run;
	*(void **)&run = gpu_plugin_sym("launch_train", why, sizeof(why));
	if (!run) {
		train_config_release(&cfg);
		gpu_plugin_complain("train", why);
		fprintf(stderr, "aorta: note: 'aorta train --check-config' still validates a configuration\n");
		return AORTA_EGPU;
	}
	struct trainer_opts to = { gpu_metrics || rocm_metrics, device, quiet, data_batches, 0 };
	struct trainer_result res;
	st = run(&cfg, &to, &res, &e);
	if (st) {
		aorta_error_print(&e);
	} else {
		printf("trained %ld steps: median step %.3f ms (host wall %.3f ms), mean %.3f ms; "
		       "loss %.5f -> %.5f\nmetrics: %s\n",
		       res.steps, res.median_step_ms, res.median_wall_ms, res.mean_step_ms, res.first_loss,
		       res.last_loss, res.metrics_path);
	}
	train_config_release(&cfg);
	return st;
out_usage:
	free(ov.v);
	return rc;
}
