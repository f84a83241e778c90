/*
 * tp.h - aorta tune-tp: the interface between the host side (src/cmd/
 * tune_tp.c, src/tp/<name>.c: models, shapes, the configuration space and its
 * pruning, the adaptive search, the outputs; no CUDA) and the GPU side in
 * libaorta-gpu.so (src/tp/<name>_gpu.c, <name>.cu: the overlapped operators, their
 * checks and their timing on TP GPUs driven from one process).
 *
 * Shapes.  Megatron sequence parallelism with S tokens (--max-token-len,
 * micro-batch 1) and hidden size h; per rank (TE's layer names, TP.md 2.1):
 *   qkv/fc1 fprop  AG of X [S/tp, h] -> [S, h], then Y = X W: m = S, k = h,
 *                  n = qkv: (heads + 2 kv_heads) head_dim / tp,
 *                      fc1: intermediate (x2 when gated) / tp
 *   proj/fc2 fprop Y = X W: m = S, k = (heads head_dim | intermediate) / tp,
 *                  n = h, then RS of Y [S, h] -> [S/tp, h]
 *   proj/fc2 dgrad AG of dY [S/tp, h] -> [S, h], then dX = dY W^T:
 *                  m = S, k = h, n = (heads head_dim | intermediate)/tp
 *   qkv/fc1 dgrad  dX = dY W^T: m = S, k = n_fprop, n = h, with an
 *                  INDEPENDENT AG of X [S/tp, h] (for wgrad) alongside (bulk)
 *   qkv/fc1 wgrad  dW = X^T dY: m = h, k = S, n = n_fprop, with an
 *                  independent RS of dgrad's output [S, h] alongside (bulk)
 * (proj/fc2 wgrad is TE's `external` method, not tuned.)  GEMMs are row-
 * major, dtype bf16 with fp32 accumulation unless --dtype says otherwise.
 *
 * Time.  Every figure is measured: tp_measure runs, on every rank at once,
 * the configuration's operator (warm-up, then `iters` timed iterations,
 * median by events on the rank's main stream; the job's time of an
 * iteration is the slowest rank's), and in the same call the GEMM alone
 * (unsplit, all SMs) and the collective alone (NCCL, same bytes), so the
 * hidden fraction (T_gemm + T_comm - T_e2e) / min(T_gemm, T_comm) and the
 * exposed communication T_e2e - T_gemm compare figures taken together.
 */
#ifndef AORTA_TP_H
#define AORTA_TP_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

enum tp_op { TP_QKV = 0, TP_PROJ, TP_FC1, TP_FC2, TP__NOPS };
enum tp_phase { TP_FPROP = 0, TP_DGRAD, TP_WGRAD, TP__NPHASES };
enum tp_coll { TP_AG = 0, TP_RS };
enum tp_method { TP_NONE = 0, TP_BULK, TP_RING_EXCHANGE, TP_PIPELINE, TP__NMETHODS };
enum tp_dtype { TP_BF16 = 0, TP_FP16, TP_FP32 };

/* "qkv", "fprop", "ring_exchange", ... (TE's spellings) */
const char *tp_op_name(enum tp_op o);
const char *tp_phase_name(enum tp_phase p);
const char *tp_method_name(enum tp_method m);
const char *tp_dtype_name(enum tp_dtype d);

struct tp_model {
	char name[128];
	long long hidden, intermediate, heads, kv_heads, head_dim;
	int gated;              /* SwiGLU-style fc1 (two projections) */
	char source[512];       /* "built-in", or the config.json path */
};

/* One tuned problem: an operator's phase at a TP size, per-rank GEMM dims
 * (Y[m][n] = A[m][k] B[k][n]) and its collective on coll_elems elements of
 * the full (gathered / unreduced) tensor [coll_rows][coll_cols]. */
struct tp_shape {
	enum tp_op op;
	enum tp_phase phase;
	enum tp_coll coll;
	int bulk_only;          /* dgrad/wgrad of qkv/fc1: the collective is independent of the GEMM */
	int tp;
	long long m, n, k;
	long long coll_rows, coll_cols;
	enum tp_dtype dtype;
};

/* TE's userbuffers keys (TP.md 2.2) */
struct tp_cfg {
	enum tp_method method;
	int num_sm;             /* SMs (CTAs) of the comm kernels (bulk, pipeline; ring with use_ce 0) */
	int cga_size;
	int set_sm_margin;      /* the GEMM gets sm_count - num_sm SMs */
	int aggregate;          /* ring_exchange: 2-chunk GEMMs */
	int num_splits;         /* pipeline: GEMM chunks */
	int use_ce;             /* ring_exchange: copy engine (1) or SM kernels (0) */
	int atomic_gemm;        /* FP8 only: always 0 here */
};

struct tp_meas {
	double e2e_ms;          /* median end-to-end of the configuration (slowest rank) */
	double e2e_min_ms, e2e_max_ms;
	double gemm_ms;         /* the unsplit GEMM alone, all SMs, same run */
	double comm_ms;         /* the collective alone (NCCL), same run */
	double serial_ms;       /* method none: collective then GEMM, same run */
	double overlap_ratio;   /* trace intersection (CUPTI spans, unions both sides) / comm union; NaN if no trace */
	int check_ok;           /* output equals the unsplit GEMM + collective within dtype tolerance */
	double max_rel_err;
	char check_msg[256];
	char trace_path[1024];  /* Kineto trace of the measured iterations ("" if none) */
};

struct tp_measure_opts {
	int warmup, iters;      /* defaults 5, 20 */
	int check;              /* run the correctness check (first time a shape+method is seen) */
	const char *trace_dir;  /* NULL: no CUPTI trace */
	uint64_t seed;
};

struct tp_session;

/* Entry points in libaorta-gpu.so (symbols of the same names):
 * tp_gpu_count    visible GPUs (0 without a driver; not an error)
 * tp_gpu_open     starts one worker thread per rank on GPUs 0..tp-1 (NCCL
 *                 communicator, peer access, cuBLAS, streams), sized for the
 *                 largest shape it will be asked for (max_elems of any
 *                 operand per rank); sm_count receives the GPU's SMs
 * tp_gpu_measure  one configuration (see "Time" above); called from the
 *                 thread that opened the session
 * tp_gpu_close    stops the workers, frees everything (NULL: no-op) */
typedef int (*tp_gpu_count_fn)(void);
typedef enum aorta_status (*tp_gpu_open_fn)(int tp, long long max_elems, struct tp_session **out, int *sm_count,
					    struct aorta_error *e);
typedef enum aorta_status (*tp_gpu_measure_fn)(struct tp_session *s, const struct tp_shape *sh,
					       const struct tp_cfg *cfg, const struct tp_measure_opts *o,
					       struct tp_meas *out, struct aorta_error *e);
typedef void (*tp_gpu_close_fn)(struct tp_session *s);

#endif
