/*
 * fuzz_rocprof_json.c - libFuzzer target for ingest_rocprof_json_mem (body in fuzz_reader.h).
 * Seeds: tests/fuzz/corpus_rocprof_json/ (hand-written, small).
 */
#define FUZZ_READER ingest_rocprof_json_mem
#include "fuzz_reader.h"
