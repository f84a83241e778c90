/*
 * pipeline.h - the one way in: inputs -> readers -> per-rank engine ->
 * struct analysis, used by analyze, report and compare.
 *
 * Layering: pipeline sits above ingest (inputs, readers) and overlap (the
 * engine), so the engine never includes a reader.
 */
#ifndef AORTA_PIPELINE_H
#define AORTA_PIPELINE_H

#include "ingest/inputs.h"
#include "overlap/analysis.h"

/* Expands inputs (files, directories, globs, @LIST, "-" for standard input;
 * ingest/inputs.h), reads them in parallel on o->threads cores (0: all), one
 * file per worker, and analyses every rank.  After the ranks are in, ranks
 * of distributedInfo's world_size that no file holds are named in a warning;
 * with aorta_strict (--strict), that or a skipped file is AORTA_EINPUT.  Errors name the
 * file (the first failing one in input order).  a is always initialised and
 * must be freed with analysis_free, on failure too. */
enum aorta_status analysis_run(char *const *inputs, size_t n, const struct analysis_opts *o,
			       struct analysis *a, struct aorta_error *e);

/* analysis_run that also gathers overlap_report.py's records of every
 * rank_*_metrics.jsonl it reads as aorta JSONL, in the same pass (the
 * reader takes them with the spans), folded into up (up_sums_init'ed by
 * the caller) in file order: up->paths names the files folded; a file read
 * otherwise than overlap_report.py reads it sets up->inexact. */
struct up_sums;
enum aorta_status analysis_run_upstream(char *const *inputs, size_t n, const struct analysis_opts *o,
					struct up_sums *up, struct analysis *a, struct aorta_error *e);

/* The same in two halves, for analyze under MPI (src/mpi/analyze_mpi.c),
 * which shares the expanded files out between processes: the expansion as
 * a path list (*files and its strings are the caller's; formats are then
 * sniffed by the readers), and the per-rank pass over such a list (one
 * rank_result per rank found, sorted by cmp_path_device, no cross-rank
 * figures yet; *res is the caller's). */
enum aorta_status analysis_expand(char *const *inputs, size_t n, char ***files, size_t *nfiles,
				  struct aorta_error *e);
struct fr_run;
enum aorta_status analysis_read_files(char **files, size_t nfiles, const struct analysis_opts *o,
				     struct rank_result **res, size_t *nres, struct fr_run **fr,
				     struct aorta_error *e);
/* After analysis_finish: the Flight Recorder dumps read (a->fr, if any)
 * numbered by rank, matched across ranks and joined with the traces
 * (flightrec/fr.h); AORTA_EINPUT when two dumps claim one rank. */
enum aorta_status analysis_finish_fr(struct analysis *a, struct aorta_error *e);
/* After analysis_finish: warns on dropped events (count and first example)
 * and on ranks of the reported world that are missing or out of it; with
 * aorta_strict a missing rank is AORTA_EINPUT.  analysis_run ends with it. */
enum aorta_status analysis_check_gaps(const struct analysis *a, struct aorta_error *e);

/* Ranks in [0, world_size) absent from a (world_size: the largest any rank
 * reports); writes "1, 3-5" into buf and returns how many, 0 when none or the
 * world size is unknown. */
size_t analysis_missing_ranks(const struct analysis *a, char *buf, size_t cap, int *world_size);

#endif
