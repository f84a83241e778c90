/*
 * fuzz_aorta_jsonl.c - libFuzzer target for ingest_aorta_jsonl_mem (body in fuzz_reader.h).
 * Seeds: tests/fuzz/corpus_aorta_jsonl/ (hand-written, small).
 */
#define FUZZ_READER ingest_aorta_jsonl_mem
#include "fuzz_reader.h"
