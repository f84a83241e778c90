/*
 * sdma.h - aorta sdma: copy-engine / compute overlap, shared between the
 * host command (src/cmd/sdma.c, src/sdma/sdma.c, src/sdma/output.c) and the
 * GPU plug-in (src/sdma/sdma_gpu.c, src/sdma/sdma_kernels.cu).
 *
 * Design.  The plug-in only measures: it runs four phases of
 * cold_iters + iterations iterations each (GEMM alone, copy alone,
 * sequential, overlapped), reads every iteration's CUDA events back as
 * integer nanoseconds into arrays the host allocated (struct sdma_result),
 * and verifies the copied bytes and a sample of the GEMM output.  Every
 * figure printed or written (averages without the cold iterations,
 * savings, throughputs, slowdowns, the overlapped time from the interval
 * algebra) is computed on the host by sdma_summarise, which the unit tests
 * exercise without a GPU.  So no figure is computed in two places.
 *
 * This header holds plain C types only (no CUDA header), so host code can
 * include it.
 *
 * "MB" on the command line is a mebibyte (2^20 bytes), as upstream's
 * prototype meant it (copy_mb * 1024 * 1024); the copy moves exactly
 * copy_mb * 2^20 bytes.  Throughputs use decimal units (GB/s = 1e9 B/s,
 * TFLOP/s = 1e12 FLOP/s).
 */
#ifndef AORTA_SDMA_H
#define AORTA_SDMA_H

#include <stdint.h>
#include <stdio.h>

#include "base/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SDMA_SCHEMA "aorta.sdma/1"
#define SDMA_MIB (UINT64_C(1) << 20)

/* Limits of the command line (checked before any GPU work). */
#define SDMA_MAX_MATRIX 65536        /* 3 bf16 matrices of 8 GiB each */
#define SDMA_MAX_COPY_MB (1 << 20)   /* 1 TiB: the fit check decides below */
#define SDMA_MAX_ITERS 1000000
#define SDMA_MAX_SAMPLES 100000

/* cuBLAS workspace the plug-in allocates itself (so the fit check is exact),
 * and the headroom kept free on every device for the runtime, cuBLAS
 * kernels and fragmentation. */
#define SDMA_CUBLAS_WS_BYTES (UINT64_C(32) << 20)
#define SDMA_DEVICE_MARGIN_BYTES (UINT64_C(512) << 20)
#define SDMA_HOST_MARGIN_BYTES (UINT64_C(256) << 20)

enum sdma_dir { SDMA_D2H = 0, SDMA_H2D, SDMA_D2D, SDMA_P2P, SDMA_DIR__COUNT };
enum sdma_engine { SDMA_ENG_COPY = 0, SDMA_ENG_KERNEL, SDMA_ENG__COUNT };

struct sdma_config {
	int device;          /* GPU that computes and issues the copy */
	int peer;            /* destination GPU of p2p (device + 1), else -1 */
	int matrix_size;     /* S: the GEMM is S x S x S */
	int copy_mb;         /* MiB copied per iteration */
	int iterations;      /* measured iterations */
	int cold_iters;      /* warm-up iterations before them, excluded */
	enum sdma_dir dir;
	enum sdma_engine engine;
	uint64_t seed;       /* inputs and the copy pattern */
	int gemm_samples;    /* GEMM output entries checked on the CPU */
	int quiet;           /* no progress notes on stderr */
};

/* What the plug-in's query says about the machine (sdma_query_gpu). */
struct sdma_dev_desc {
	int index;
	char name[256];
	char pci_bus_id[32];
	int cc_major, cc_minor, sm_count;
	uint64_t total_bytes, free_bytes;
};

struct sdma_gpu_info {
	int count;                  /* visible devices; 0: no GPU */
	int runtime_version, driver_version;
	struct sdma_dev_desc dev;   /* valid when cfg->device < count */
	int peer_valid;             /* p2p and peer < count: peer filled */
	int peer_access;            /* device can access peer's memory */
	struct sdma_dev_desc peer;
	uint64_t host_avail_bytes;  /* MemAvailable of /proc/meminfo (0: unknown) */
};

/* Memory a configuration needs (sdma_need). */
struct sdma_need {
	uint64_t device_bytes;  /* on cfg->device: matrices, workspace, copy buffers */
	uint64_t peer_bytes;    /* on the peer (p2p destination) */
	uint64_t pinned_bytes;  /* page-locked host memory (d2h dst, h2d src) */
	uint64_t host_bytes;    /* ordinary host memory: pattern, readback, GEMM check */
};

/* Per-iteration series, each cold_iters + iterations long (cold first),
 * integer nanoseconds from CUDA events. */
enum sdma_series {
	SDMA_T_GEMM_ALONE = 0, /* GEMM + relu alone */
	SDMA_T_COPY_ALONE,     /* the copy alone */
	SDMA_T_SEQ,            /* sequential iteration: start of GEMM to end of copy */
	SDMA_T_SEQ_GEMM,       /*   its GEMM + relu */
	SDMA_T_SEQ_COPY,       /*   its copy */
	SDMA_T_OVL,            /* overlapped iteration: common start to both done */
	SDMA_T_OVL_GEMM_START, /*   offsets from the iteration's start: GEMM begins, */
	SDMA_T_OVL_GEMM_END,   /*   GEMM + relu ends, */
	SDMA_T_OVL_COPY_START, /*   copy begins, */
	SDMA_T_OVL_COPY_END,   /*   copy ends */
	SDMA_T__COUNT
};

struct sdma_result {
	int n;                      /* cold_iters + iterations */
	int64_t *t[SDMA_T__COUNT];  /* host-owned, n entries each */
	/* streams as created (lower number = higher priority) */
	int compute_priority, copy_priority;
	int kernel_grid, kernel_block;  /* engine kernel: its launch shape */
	/* copy verification: the destination is cleared before each copying
	 * phase and compared byte for byte with the source pattern after it */
	int copy_checked;               /* phases compared (3 when all ran) */
	int copy_ok;
	int64_t copy_mismatch_offset;   /* -1 if none */
	int copy_mismatch_phase;        /* enum sdma_series of the phase, -1 if none */
	unsigned copy_got, copy_want;   /* bytes at the mismatch */
	uint64_t copy_bytes_compared;   /* per phase */
	/* GEMM verification (after the overlapped phase) */
	int gemm_checked;
	int gemm_ok;
	int gemm_samples, gemm_failed;
	double gemm_max_abs_err;
	double gemm_max_err_ratio;      /* max over samples of |err| / tolerance */
	long long gemm_worst_i, gemm_worst_j;
	double gemm_worst_got, gemm_worst_want;
};

/* Figures derived on the host from a result (sdma_summarise). Times in ms
 * (means over the measured iterations), rates in decimal units. */
struct sdma_summary {
	double seq_ms, ovl_ms, savings_pct;
	double gemm_alone_ms, gemm_seq_ms, gemm_together_ms;
	double copy_alone_ms, copy_seq_ms, copy_together_ms;
	double gemm_flop;          /* 2 S^3 per iteration */
	uint64_t copy_bytes;
	double gemm_alone_tflops, gemm_together_tflops;
	double copy_alone_gbps, copy_together_gbps;
	double gemm_slowdown, copy_slowdown;  /* time together / time alone */
	double ideal_ms;           /* max(gemm alone, copy alone) */
	double overlap_ms;         /* mean |GEMM ∩ copy| per overlapped iteration */
	double copy_hidden_pct;    /* overlap / copy together * 100 */
	double seq_gap_ms;         /* seq - seq GEMM - seq copy: host synchronisation */
};

/* ---- names ---------------------------------------------------------------- */
const char *sdma_dir_name(enum sdma_dir d);          /* "d2h", ... */
const char *sdma_dir_desc(enum sdma_dir d);          /* "device -> pinned host", ... */
const char *sdma_engine_name(enum sdma_engine g);    /* "copy", "kernel" */
const char *sdma_series_name(enum sdma_series s);    /* "gemm_alone", ... */
int sdma_dir_parse(const char *s);                   /* -1 if unknown */
int sdma_engine_parse(const char *s);                /* -1 if unknown */

/* ---- configuration ---------------------------------------------------------- */
void sdma_config_defaults(struct sdma_config *c);
uint64_t sdma_copy_bytes(const struct sdma_config *c);
/* Range checks of the values alone (no machine facts): AORTA_OK or
 * AORTA_EUSAGE with the option named in e. */
enum aorta_status sdma_config_check(const struct sdma_config *c, struct aorta_error *e);
void sdma_need(const struct sdma_config *c, struct sdma_need *n);
/* Machine facts: no GPU -> AORTA_EGPU; a device that does not exist, p2p
 * without a reachable peer, or memory that does not fit -> AORTA_EUSAGE. */
enum aorta_status sdma_check_machine(const struct sdma_config *c, const struct sdma_gpu_info *g,
				     struct aorta_error *e);
/* MemAvailable from /proc/meminfo in bytes, 0 if unknown. */
uint64_t sdma_host_avail_bytes(void);

/* ---- results ----------------------------------------------------------------- */
/* Allocates the series for cfg (never fails: xcalloc) and marks every
 * verification "not run". */
void sdma_result_init(struct sdma_result *r, const struct sdma_config *c);
void sdma_result_release(struct sdma_result *r);
/* Mean of v[cold..n) in ns; 0 if that range is empty. */
double sdma_mean_ns(const int64_t *v, int n, int cold);
/* max(0, (seq - ovl) / seq * 100); 0 when seq <= 0. */
double sdma_savings_pct(double seq_ms, double ovl_ms);
void sdma_summarise(const struct sdma_config *c, const struct sdma_result *r, struct sdma_summary *s);
/* Passed means: every check that ran passed and both ran. */
int sdma_verified(const struct sdma_result *r);

/* ---- CPU references ------------------------------------------------------------ */
uint16_t sdma_bf16_from_float(float x);  /* round to nearest even; NaN kept */
float sdma_bf16_to_float(uint16_t h);
/* n bf16 values uniform in [-1, 1) from (seed, site). */
void sdma_fill_bf16(uint16_t *v, uint64_t n, uint64_t seed, uint64_t site);
/* The GEMM operands A and B (S x S each) of a run with this seed. */
void sdma_fill_gemm_inputs(uint16_t *A, uint16_t *B, int S, uint64_t seed);
/* n bytes of the copy pattern from seed (random, never all zeros). */
void sdma_fill_pattern(unsigned char *p, uint64_t n, uint64_t seed);
/* Offset of the first byte where a and b differ, -1 if none. */
int64_t sdma_first_mismatch(const unsigned char *a, const unsigned char *b, uint64_t n);

struct sdma_gemm_check {
	int samples, failed;
	double max_abs_err, max_err_ratio;
	long long worst_i, worst_j;
	double worst_got, worst_want;
};
/* Checks C == relu(A B) (column-major S x S, bf16) on `samples` entries
 * drawn from seed (the corners always included) against a double
 * reference: |got - want| <= 1e-2 * (|want| + sqrt(sum_k (a_ik b_kj)^2))
 * + 1e-6, which covers bf16 output rounding (2^-8 relative) and fp32
 * accumulation in any order.  Returns 1 if all pass. */
int sdma_gemm_check(const uint16_t *A, const uint16_t *B, const uint16_t *C, int S, int samples,
		    uint64_t seed, struct sdma_gemm_check *out);

/* ---- output (output.c) ---------------------------------------------------------- */
void sdma_print_text(FILE *f, const struct sdma_config *c, const struct sdma_gpu_info *g,
		     const struct sdma_result *r, const struct sdma_summary *s);
/* The aorta.sdma/1 document (docs/sdma.md) to f. */
void sdma_write_json(FILE *f, const struct sdma_config *c, const struct sdma_gpu_info *g,
		     const struct sdma_result *r, const struct sdma_summary *s);

/* ---- the plug-in's entry points (sdma_gpu.c), looked up by name ---------------- */
/* Counts the devices and describes cfg->device (and the p2p peer); creates
 * a context to read free memory, allocates nothing.  No device: AORTA_OK
 * with count 0.  Runtime failures: AORTA_EGPU. */
typedef enum aorta_status (*sdma_query_fn)(const struct sdma_config *c, struct sdma_gpu_info *g,
					    struct aorta_error *e);
/* Runs the four phases and the verifications into r (sdma_result_init'd).
 * A failed verification is not an error here (r says so); runtime failures
 * are AORTA_EGPU. */
typedef enum aorta_status (*sdma_run_fn)(const struct sdma_config *c, struct sdma_result *r,
					  struct aorta_error *e);
#define SDMA_QUERY_SYM "sdma_query_gpu"
#define SDMA_RUN_SYM "sdma_run_gpu"

enum aorta_status sdma_query_gpu(const struct sdma_config *c, struct sdma_gpu_info *g,
				 struct aorta_error *e);
enum aorta_status sdma_run_gpu(const struct sdma_config *c, struct sdma_result *r,
			       struct aorta_error *e);

#ifdef __cplusplus
}
#endif

#endif
