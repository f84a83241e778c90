/*
 * fuzz_optable.c - libFuzzer target for ingest_optable_mem (body in fuzz_reader.h).
 * Seeds: tests/fuzz/corpus_optable/ (hand-written, small).
 */
#define FUZZ_READER ingest_optable_mem
#include "fuzz_reader.h"
