/*
 * hwq_sizes.h - sizes of the four workloads of the hwq harness group,
 * shared by their GPU files and the host table's memory figures (so the
 * "does not fit" check and the allocations cannot drift apart).  Sizes are
 * upstream's defaults (../shared/UPSTREAM.md section 3).
 */
#ifndef AORTA_HWQ_SIZES_H
#define AORTA_HWQ_SIZES_H

#define HWQ_CUBLAS_WS_BYTES (32ull << 20)  /* per GEMM stream */

#define HWQ_HETERO_DIM 4096                /* one 4096^3 mm per GEMM stream */
#define HWQ_HETERO_TINY_PER_GEMM 10        /* tiny add(mul(t,2),1) after each GEMM */
#define HWQ_HETERO_TINY_ELEMS 1024

#define HWQ_TINY_ELEMS 256                 /* elements per stream */
#define HWQ_TINY_REPS 100                  /* clamp(abs(add(mul(t,1.5),.5)),0,10) per stream */

#define HWQ_LARGE_DIM 8192                 /* one 8192^3 mm per stream */

#define HWQ_OVL_DIM 4096                   /* GEMMs on each compute stream */
#define HWQ_OVL_GEMMS 4                    /* per compute stream per iteration */
#define HWQ_OVL_COMM_FLOATS (64ull << 20)  /* all-reduce of 256 MiB */

#endif
