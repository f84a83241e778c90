#!/usr/bin/env bash
# streams.sh [AORTA_BIN] - does analyze's cost follow events alone?  The same
# 100,000 kernels (2 us each, a third NCCL) spread over 100 and over 10,000
# streams of one rank: time and peak memory of `aorta analyze --json` on
# each (bench/RESULTS.md, "Cost against the number of streams").
set -euo pipefail
cd "$(dirname "$0")/../.."
A=${1:-./build/aorta}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
python3 - "$T" <<'PY'
import json, sys
for ns in (100, 10000):
    ev = [{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce" if i % 3 == 0 else "gemm_kernel",
           "pid": 0, "tid": 7 + i % ns, "ts": i, "dur": 2.0,
           "args": {"device": 0, "stream": 7 + i % ns, "correlation": i}} for i in range(100000)]
    json.dump({"traceEvents": ev}, open(f"{sys.argv[1]}/streams{ns}.json", "w"))
PY
for ns in 100 10000; do
	/usr/bin/time -f "$ns streams, 100000 kernels: %e s, %M KB peak" "$A" analyze -q --json "$T/a.json" "$T/streams$ns.json"
done
