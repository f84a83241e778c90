/*
 * rank_io.h - one rank's results (struct rank_result, before the cross-rank
 * join) as bytes and back, so that a rank analysed in one process can be
 * joined in another (`mpirun aorta analyze`: each process reads its share of
 * the files and sends only these bytes to the process that joins).
 *
 * The encoding is a private, versioned byte stream of this build (native
 * endianness and sizes: sender and receiver are the same binary), holding
 * every field the per-rank pass fills: identity, counters, figures, steps,
 * streams, collectives, kernels, the peers' figures and the per-call
 * collective table.  Fields the join fills (waiting, transfer, last
 * arrivals) and timelines (keep_traces) are not sent.  A rank unpacked is
 * equal, field by field, to the rank packed (tests/unit/test_rank_io.c);
 * the join run on unpacked ranks therefore gives the same analysis, byte
 * for byte, as one process.
 *
 * Ownership: rank_pack appends to a buffer the caller frees; rank_unpack
 * fills a zeroed rank_result whose arrays analysis_free releases.
 * Thread-safe.
 */
#ifndef AORTA_RANK_IO_H
#define AORTA_RANK_IO_H

#include <stddef.h>

#include "base/error.h"
#include "overlap/analysis.h"

struct bytes {
	char *p;
	size_t n, cap;
};

void rank_pack(const struct rank_result *r, struct bytes *b);
/* Reads one rank at *off of p[0..n), advancing *off.  AORTA_EINPUT with
 * the offset when the bytes are short or not a packed rank. */
enum aorta_status rank_unpack(const char *p, size_t n, size_t *off, struct rank_result *r,
			      struct aorta_error *e);

#endif
