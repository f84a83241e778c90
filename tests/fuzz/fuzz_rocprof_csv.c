/*
 * fuzz_rocprof_csv.c - libFuzzer target for ingest_rocprof_csv_mem (body in fuzz_reader.h).
 * Seeds: tests/fuzz/corpus_rocprof_csv/ (hand-written, small).
 */
#define FUZZ_READER ingest_rocprof_csv_mem
#include "fuzz_reader.h"
