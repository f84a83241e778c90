#!/usr/bin/env bash
# CLI tests of aorta hwq: -h of every verb, list output, bad input exit
# codes and messages before any GPU work (unknown workload, -s out of
# range, -d 99, bad sync mode, too big for memory), compare verdicts on
# fixtures (regression -> exit 1 and RESULT line; none -> 0; malformed ->
# exit 3 naming the file).  Runs without a GPU.
. "$(dirname "$0")/lib.sh"

# --- help ---------------------------------------------------------------------
expect "hwq -h" 0 "^usage: aorta hwq VERB" -- $A hwq -h
expect "hwq without verb" 2 "usage: aorta hwq" -- $A hwq
expect "hwq unknown verb" 2 "unknown hwq verb 'frob'" -- $A hwq frob
expect "hwq --bogus" 2 "unknown option '--bogus'" -- $A hwq --bogus
for v in list run sweep run-priority compare info; do
	expect "hwq $v -h" 0 "^usage: aorta hwq $v" -- $A hwq "$v" -h
	expect "hwq $v --bogus" 2 "unknown option '--bogus'" -- $A hwq "$v" --bogus
done
expect "run -h lists --sync-mode" 0 "--sync-mode" -- $A hwq run -h
expect "run -h lists --graph" 0 "--graph" -- $A hwq run -h

# --- list ---------------------------------------------------------------------
expect "list" 0 "^Available workloads \(15\):" -- $A hwq list
$A hwq list >"$T/list.txt" 2>&1
has "list row format" "$T/list.txt" "^  hetero_kernels            \[latency_sensitive\] "
has "list has comms_compute_overlap" "$T/list.txt" "^  comms_compute_overlap     \[distributed\]"
sort -c <(sed -n 's/^  \([a-z_]*\) .*/\1/p' "$T/list.txt") 2>/dev/null && ok || bad "list is not sorted"
expect "list -c inference" 0 "^Available workloads \(3\):" -- $A hwq list -c inference
expect "list -v" 0 "streams: 2-64 \(recommended: 8\), switch sensitivity: critical" -- $A hwq list -v
expect "list -c bogus" 2 "unknown category 'bogus'" -- $A hwq list -c bogus

# --- bad input before GPU work: exit 2, a clear message -------------------------
expect "unknown workload" 2 "unknown workload 'nope'" -- $A hwq run nope
expect "streams above range" 2 "tiny_kernel_stress runs with 1 to 64 streams, not 65" -- $A hwq run tiny_kernel_stress -s 65
expect "streams below range" 2 "hetero_kernels runs with 2 to 64 streams, not 1" -- $A hwq run hetero_kernels -s 1
expect "bad sync mode" 2 "unknown sync mode 'sometimes'" -- $A hwq run tiny_kernel_stress --sync-mode sometimes
expect "zero iterations" 2 "iterations must be >= 1" -- $A hwq run tiny_kernel_stress -i 0
expect "bad mode" 2 "unknown mode 'x'" -- $A hwq run comms_compute_overlap --mode x
expect "graph not allowed" 2 "cannot be captured" -- $A hwq run zero_offload --graph
expect "sweep unknown" 2 "unknown workload 'nope'" -- $A hwq sweep nope
expect "sweep bad list" 2 "bad stream list" -- $A hwq sweep tiny_kernel_stress -s 1,x
expect "sweep nothing in range" 2 "no stream count in range" -- $A hwq sweep large_gemm_only -s 32,64
expect "run-priority bad group" 2 "unknown priority group 'P9'" -- $A hwq run-priority P9
# a device that does not exist: exit 2 on a GPU machine, 4 (no GPU) here; never a crash
out=$($A hwq run tiny_kernel_stress -d 99 2>&1); rc=$?
if { [ $rc = 2 ] && echo "$out" | grep -q "device 99 does not exist"; } ||
   { [ $rc = 4 ] && echo "$out" | grep -qiE "no GPU|cannot load"; }; then ok; else bad "-d 99: exit $rc: $out"; fi
expect "negative device" 2 "device -1 does not exist" -- $A hwq run tiny_kernel_stress -d -1

# --- compare ------------------------------------------------------------------
cat >"$T/base.json" <<'J'
{"schema": "aorta.hwq.result/1", "throughput": 100.0, "throughput_unit": "GFLOPS", "stream_count": 4,
 "latency_ms": {"mean": 1.0, "p50": 1.0, "p95": 1.2, "p99": 1.5, "min": 0.9, "max": 1.6, "std": 0.1}}
J
# upstream's latency spelling, 20% slower
cat >"$T/slow.json" <<'J'
{"throughput": 80.0, "stream_count": 4, "latency": {"p50_ms": 1.25, "p95_ms": 1.2, "p99_ms": 1.5}}
J
cat >"$T/same.json" <<'J'
{"throughput": 101.0, "stream_count": 4, "latency_ms": {"p50": 1.01, "p95": 1.2, "p99": 1.5}}
J
cat >"$T/sweep_a.json" <<'J'
{"schema": "aorta.hwq.sweep/1", "workload": "tiny_kernel_stress",
 "results": [{"throughput": 10, "stream_count": 1, "latency_ms": {"p50": 1}},
             {"throughput": 20, "stream_count": 2, "latency_ms": {"p50": 1}}]}
J
cat >"$T/sweep_b.json" <<'J'
{"schema": "aorta.hwq.sweep/1", "workload": "tiny_kernel_stress",
 "results": [{"throughput": 10, "stream_count": 1, "latency_ms": {"p50": 1}},
             {"throughput": 15, "stream_count": 2, "latency_ms": {"p50": 1}}]}
J
printf '{"throughput": 1,,}' >"$T/broken.json"
expect "compare regression" 1 "RESULT: REGRESSIONS DETECTED" -- $A hwq compare -b "$T/base.json" -t "$T/slow.json"
expect "compare latency from upstream keys" 1 "p50_ms .*REGRESSION" -- $A hwq compare -b "$T/base.json" -t "$T/slow.json"
expect "compare no regression" 0 "RESULT: NO REGRESSIONS" -- $A hwq compare -b "$T/base.json" -t "$T/same.json"
expect "compare looser threshold" 0 "RESULT: NO REGRESSIONS" -- $A hwq compare -b "$T/base.json" -t "$T/slow.json" --threshold 0.3
expect "compare looser threshold in percent" 0 "RESULT: NO REGRESSIONS" -- $A hwq compare -b "$T/base.json" -t "$T/slow.json" --threshold-pct 30
expect "compare: a percent given as --threshold is refused" 2 "is a fraction .* --threshold-pct 5" -- \
	$A hwq compare -b "$T/base.json" -t "$T/slow.json" --threshold 5
expect "compare sweeps" 1 "REGRESSIONS DETECTED" -- $A hwq compare -b "$T/sweep_a.json" -t "$T/sweep_b.json"
expect "compare sweep same" 0 "NO REGRESSIONS" -- $A hwq compare -b "$T/sweep_a.json" -t "$T/sweep_a.json"
expect "compare malformed" 3 "'$T/broken.json'" -- $A hwq compare -b "$T/base.json" -t "$T/broken.json"
expect "compare missing file" 3 "'$T/nope.json'" -- $A hwq compare -b "$T/nope.json" -t "$T/base.json"
expect "compare without -t" 2 "needs -b BASE and -t TEST" -- $A hwq compare -b "$T/base.json"

echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
