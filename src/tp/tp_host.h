/*
 * tp_host.h - the host side of aorta tune-tp: models, shapes, the
 * configuration space with TransformerEngine's rejection rules, the adaptive
 * search, the TP scaling verdict, the outputs, and the overlap ratio read
 * from a measured trace.  No CUDA here: every measurement goes through a
 * struct tp_backend (the plug-in's entry points of tp.h, or a fake in the
 * unit tests only: tests/unit/test_tp.c models times with the ideal-time
 * model of TP.md section 5 so the search, pruning, early stop, ranking,
 * verdict and outputs are tested on the CPU).
 *
 * Ownership: struct tp_tune owns its result arrays (tp_tune_release);
 * everything else is plain values.  Not thread safe (one tuning run per
 * process, from the command's main thread).
 */
#ifndef AORTA_TP_HOST_H
#define AORTA_TP_HOST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tp/tp.h"

#define TP_SCHEMA "aorta.tune_tp/1"
#define TP_UB_MAX_SM 32           /* TE's UB_MAX_SM: comm kernels never use more */
#define TP_TOLERANCE_DEFAULT 0.2  /* TP scaling: time(n) <= (1 + tol) time(1) / n */

/* ---- names --------------------------------------------------------------- */
const char *tp_coll_name(enum tp_coll c);          /* "all_gather" / "reduce_scatter" */
/* Parses TE's spellings; returns 0 on success, -1 if unknown. */
int tp_op_parse(const char *s, enum tp_op *o);
int tp_dtype_parse(const char *s, enum tp_dtype *d);
int tp_dtype_bytes(enum tp_dtype d);
/* TE's layer name "qkv_fprop" ... into buf. */
void tp_layer_name(enum tp_op o, enum tp_phase p, char *buf, size_t len);

/* ---- models (models.c, hf.c) ------------------------------------------- */
/* The built-in table: count and entry i (static storage). */
size_t tp_model_builtin_count(void);
const struct tp_model *tp_model_builtin_at(size_t i);
/* Finds a built-in model by name, case-insensitive; "org/Name" also matches
 * by "Name".  Returns NULL if absent. */
const struct tp_model *tp_model_builtin_find(const char *name);
/* Reads a Hugging Face config.json (llama/qwen/mistral style, or GPT-2
 * style n_embd/n_head/n_inner).  EINPUT naming the file and the missing or
 * malformed field. */
enum aorta_status tp_model_from_config(const char *path, const char *name, struct tp_model *m,
				       struct aorta_error *e);
/* Looks for $HF_HUB_CACHE, $HF_HOME/hub, ~/.cache/huggingface/hub
 * models--ORG--NAME/snapshots/SNAPSHOT/config.json; 1 and the path if found. */
int tp_hf_cache_find(const char *name, char *path, size_t len);
/* --model-config PATH, else the HF cache, else the built-in table, else
 * EINPUT "unknown model" (never a guess).  Checks the dims are usable. */
enum aorta_status tp_model_resolve(const char *name, const char *config_path, struct tp_model *m,
				   struct aorta_error *e);

/* ---- shapes (shapes.c) -------------------------------------------------- */
/* Phases tuned per operator: qkv/fc1 fprop dgrad wgrad; proj/fc2 fprop dgrad
 * (their wgrad is TE's `external`, not tuned). */
int tp_phase_tuned(enum tp_op o, enum tp_phase p);
/* The per-rank problem of tp.h's table; EINPUT if S, heads, kv_heads or the
 * widths are not divisible by tp. */
enum aorta_status tp_shape_make(const struct tp_model *m, enum tp_op o, enum tp_phase p, int tp,
				long long tokens, enum tp_dtype dt, struct tp_shape *out,
				struct aorta_error *e);
/* Largest operand (elements per rank) of a shape: max of m k, k n, m n and
 * the full collective tensor. */
long long tp_shape_max_elems(const struct tp_shape *s);
double tp_shape_flops(const struct tp_shape *s);     /* 2 m n k */
double tp_shape_coll_bytes(const struct tp_shape *s); /* full tensor bytes */

/* ---- the configuration space (space.c) ---------------------------------- */
enum tp_verdict { TP_VALID = 0, TP_REJECTED, TP_CANNOT_WIN };
/* TE's defaults for a method (TP.md 2.2). */
void tp_cfg_default(enum tp_method m, int tp, struct tp_cfg *c);
/* Whether TE would accept cfg for sh (TP_REJECTED, with the rule in why),
 * whether it cannot overlap anything (TP_CANNOT_WIN), else TP_VALID.
 * sm_count 0 means unknown (no upper check beside TP_UB_MAX_SM). */
enum tp_verdict tp_cfg_check(const struct tp_shape *sh, const struct tp_cfg *c, int sm_count,
			     char *why, size_t len);
/* Upstream-style id: tp2_fc1_fprop_ring_agg0, tp2_fc1_dgrad_bulk_sm8, ... */
void tp_cfg_id(const struct tp_shape *sh, const struct tp_cfg *c, char *buf, size_t len);

/* ---- the measurement backend -------------------------------------------- */
struct tp_backend {
	tp_gpu_count_fn count;
	tp_gpu_open_fn open;
	tp_gpu_measure_fn measure;
	tp_gpu_close_fn close;
};

/* ---- overlap from a trace (overlap.c) ----------------------------------- */
/* Reads a Kineto trace file (plain or gzip), or every *.json[.gz] of a
 * directory, splits its spans by device (args.device, else pid: one
 * process drives all tp GPUs), and returns |(U GEMM) n (U comm)| / |U comm|
 * from the overlap engine, pooled over devices (overlap.c says which spans
 * are GEMM and which are comm).  *ratio is NaN when the trace has no comm
 * span.  inter_ns / comm_ns (totals over the whole trace) may be NULL. */
enum aorta_status tp_trace_overlap(const char *path, double *ratio, int64_t *inter_ns,
				   int64_t *comm_ns, struct aorta_error *e);
/* hidden fraction (T_gemm + T_comm - T_e2e) / min(T_gemm, T_comm); NaN if
 * either is <= 0 */
double tp_hidden_fraction(double gemm_ms, double comm_ms, double e2e_ms);

/* ---- the tuning run (search.c) ------------------------------------------ */
struct tp_tune_opts {
	struct tp_model model;
	unsigned ops;            /* bit (1 << enum tp_op) */
	int max_tp;              /* --max-tp-size */
	int max_tp_given;        /* the user set it: non-divisible sizes are errors, not skipped */
	long long tokens;        /* --max-token-len */
	int min_sm, max_sm;      /* SM search range */
	int sm_points;           /* measurement budget of one SM search (default 7) */
	double overlap_threshold;/* hidden fraction that counts as effective overlap */
	double tolerance;        /* TP scaling tolerance (0.2) */
	double min_gain;         /* skip overlap when serial - max(gemm, comm) < min_gain * serial (0.01) */
	enum tp_dtype dtype;
	int warmup, iters;
	int check;               /* correctness check the first time a shape+method is seen */
	const char *trace_dir;   /* per-configuration traces under it, NULL: none */
	uint64_t seed;
	int progress;            /* notes on stderr */
};
void tp_tune_opts_default(struct tp_tune_opts *o);

/* One measured (or pruned) configuration. */
struct tp_result {
	struct tp_shape sh;
	struct tp_cfg cfg;
	struct tp_meas m;
	char id[96];
	int measured;            /* 0: pruned / skipped (reason in why) */
	enum tp_verdict verdict; /* for pruned ones */
	int skip_scaling;        /* skipped because TP scaling already failed */
	char why[192];
	double hidden_fraction, exposed_ms;
	int64_t overlap_inter_ns, overlap_comm_ns; /* from the trace, -1 if none */
	int rank;                /* 1 = fastest of its (tp, op, phase); 0 if not ranked */
	int checked;             /* the output check ran (every measurement unless --no-check) */
};

struct tp_scaling {
	int tested[4];           /* TP sizes 1, 2, 4, 8 (index log2) */
	double time_ms[4];       /* sum over tuned phases of the best e2e */
	double ratio[4];         /* time(n) / (time(1) / n) */
	int efficient[4];
	int optimal_tp;
	char reason[512];
};

struct tp_tune {
	struct tp_result *r;
	size_t n, cap;
	int tp_sizes[4], ntp;    /* tuned, TP=1 first */
	int gpus, sm_count;
	long long nmeas;         /* measurements made */
	long long nexhaustive;   /* what an exhaustive sweep of the same space would have made */
	struct tp_scaling scaling[TP__NOPS];
	int optimal_tp;
	int best[4][TP__NOPS][TP__NPHASES]; /* index into r, -1 if none */
};

/* The TP sizes to tune: 2, 4, 8 up to max_tp and gpus, each checked
 * against the model's divisibility (errors if max_tp_given, else dropped
 * with a note).  Host only; call before any GPU work. */
enum aorta_status tp_plan_sizes(const struct tp_tune_opts *o, int gpus, int *sizes, int *n,
				struct aorta_error *e);
enum aorta_status tp_tune_run(const struct tp_backend *b, const struct tp_tune_opts *o,
			      struct tp_tune *t, struct aorta_error *e);
void tp_tune_release(struct tp_tune *t);
/* TP scaling verdict for every operator from the best results (fills
 * t->scaling and t->optimal_tp; used by tp_tune_run, public for tests). */
void tp_tune_scaling(struct tp_tune *t, const struct tp_tune_opts *o);
int tp_log2i(int tp);
/* mkdir -p; 0 or -1 with errno */
int tp_mkdir_p(const char *path);

/* ---- outputs (report.c) -------------------------------------------------- */
/* tuning_report.json, summary.txt, optimal_tp_comm_overlap_cfg.yaml and
 * optimal_tp_comm_overlap_cfg_tp{N}.yaml in dir (created), each atomic. */
enum aorta_status tp_report_write(const struct tp_tune *t, const struct tp_tune_opts *o,
				  const char *dir, struct aorta_error *e);
/* The YAML of one TP size (TE's --tp-comm-overlap-cfg layout) to f. */
void tp_yaml_print(FILE *f, const struct tp_tune *t, const struct tp_tune_opts *o, int tp);

#endif
