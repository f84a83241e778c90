/*
 * main.c - the command table (after git.c): aorta COMMAND [options].
 *
 * Each command lives in src/cmd/<name>.c and returns an exit code; main
 * flushes stdout and turns a failed flush (full disk, closed pipe) into an
 * error, so output is never silently lost.
 */
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/options.h"
#include "base/output.h"
#include "base/termsafe.h"
#include "cmd/cmds.h"

#ifndef AORTA_VERSION
#define AORTA_VERSION "0.1.0"
#endif

struct cmd {
	const char *name;
	int (*fn)(int, char **);
	const char *summary;
};

static const struct cmd commands[] = {
	{ "analyze", cmd_analyze, "overlap analysis of GPU traces (Kineto, nsys, rocprofv3, aorta JSONL)" },
	{ "compare", cmd_compare, "compare analyses, traces or runs side by side" },
	{ "report", cmd_report, "summary.json, timeline and comparison charts, an HTML report" },
	{ "train", cmd_train, "train the synthetic ranking transformer on a GPU, timing every stream" },
	{ "hwq", cmd_hwq, "hardware-queue evaluation: 15 multi-stream workloads, sweeps, comparisons" },
	{ "sdma", cmd_sdma, "copy/compute overlap: a GEMM stream against a high-priority copy stream" },
	{ "tune-tp", cmd_tune_tp, "tensor-parallel GEMM/collective overlap tuner (measures what it recommends)" },
	{ "sweep", cmd_sweep, "run a configuration x environment x trial matrix and rank it, noise accounted for" },
	{ "env", cmd_env, "the environment snapshot: driver, CUDA, NCCL, cuBLAS versions, GPUs, variables" },
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fprintf(f, "usage: aorta COMMAND [options] [args]\n\n"
		   "aorta finds out why distributed GPU training does not overlap computation\n"
		   "with communication.\n\ncommands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "    %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'aorta COMMAND -h' shows a command's options; 'aorta --version' the version.\n"
		   "exit codes: 0 ok, 1 a check failed, 2 usage, 3 bad input, 4 GPU/runtime, 5 internal\n");
}

int main(int argc, char **argv)
{
	int rc;

	termsafe_streams(); /* text from inputs reaches the terminal as text */

	if (argc < 2) {
		usage(stderr);
		return AORTA_EUSAGE;
	}
	/* hidden, for the build: `aorta help --man|--options CMD [VERB]` prints
	 * CMD's option table as a man page section or as option names (what
	 * scripts/gen_docs.sh turns into man pages and bash completion) */
	if (argc >= 3 && !strcmp(argv[1], "help") && (!strcmp(argv[2], "--man") || !strcmp(argv[2], "--options"))) {
		if (argc < 4 || argc > 5) {
			fprintf(stderr, "usage: aorta help --man|--options COMMAND [VERB]\n");
			return AORTA_EUSAGE;
		}
		if (!strcmp(argv[3], "aorta")) { /* the command list itself */
			for (size_t i = 0; i < NCOMMANDS; i++)
				printf("%s\t%s\n", commands[i].name, commands[i].summary);
			return AORTA_OK;
		}
		opt_help_format = !strcmp(argv[2], "--man") ? OPT_HELP_MAN : OPT_HELP_WORDS;
		for (size_t i = 0; i < NCOMMANDS; i++)
			if (!strcmp(argv[3], commands[i].name)) {
				char *a[] = { argv[3], argc == 5 ? argv[4] : (char *)"-h", argc == 5 ? (char *)"-h" : NULL, NULL };
				return commands[i].fn(argc == 5 ? 3 : 2, a);
			}
		fprintf(stderr, "aorta: error: unknown command '%s'\n", argv[3]);
		return AORTA_EUSAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		if (argc > 2 && strcmp(argv[1], "help") == 0) {
			for (size_t i = 0; i < NCOMMANDS; i++)
				if (!strcmp(argv[2], commands[i].name)) {
					char *a[] = { argv[2], (char *)"-h", NULL };
					return commands[i].fn(2, a);
				}
		}
		usage(stdout);
		return AORTA_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("aorta %s\n", AORTA_VERSION);
		return AORTA_OK;
	}
	out_init_signals();
	for (size_t i = 0; i < NCOMMANDS; i++) {
		if (strcmp(argv[1], commands[i].name))
			continue;
		rc = commands[i].fn(argc - 1, argv + 1);
		if (fflush(stdout) != 0 || ferror(stdout)) {
			fprintf(stderr, "aorta: error: cannot write standard output\n");
			return AORTA_EINTERNAL;
		}
		return rc;
	}
	fprintf(stderr, "aorta: error: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return AORTA_EUSAGE;
}
