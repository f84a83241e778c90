#!/usr/bin/env bash
# bench/experiments/tp_ring_variants.sh - variants of the ring-exchange all-gather
# (fc1, Llama-3-8B, 8192 tokens) at TP 4 and 2, two repeats.  Needs a build with
# tp_ring_variants.patch applied; AORTA_TP_EXP bits: 1 no copies (timing only,
# output wrong), 2 copies on three streams, 4 one compute stream; second part:
# AORTA_TP_NHEUR cuBLASLt candidates timed per plan (8, 32, 64).  See README.md.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64 NCCL_NVLS_ENABLE=0
for rep in 1 2; do
for tp in 4 2; do
for ex in 0 1 2 4 6 5; do
	AORTA_TP_EXP=$ex CUDA_VISIBLE_DEVICES=0,1,2,3 timeout -s KILL 60 ./build/gpu-tests/tp_bench --tp $tp --tokens 8192 --iters 30 --warmup 5 > /tmp/tpx_${tp}_$ex.jsonl 2>/tmp/tpx_${tp}_$ex.log || echo "tp $tp ex $ex rc=$?"
	python3 - /tmp/tpx_${tp}_$ex.jsonl "$rep tp$tp ex$ex" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
out = []
for r in rows:
    if r["op"] == "fc1" and r["method"] in ("ring_exchange", "none"):
        out.append("%s%s%s %.3f%s" % (r["method"][:4], "ce" if r["use_ce"] else "sm%d" % r["num_sm"], " agg" if r["aggregate"] else "", r["e2e_ms"], "" if r["check_ok"] else "!"))
g = [r for r in rows if r["op"] == "fc1"]
print(sys.argv[2], "gemm %.3f comm %.3f |" % (g[0]["gemm_ms"], g[0]["comm_ms"]), " ; ".join(out))
PY
done
done
done
for rep in 1 2; do
for tp in 4 2; do
for nh in 8 32 64; do
	AORTA_TP_NHEUR=$nh timeout -s KILL 90 ./build/gpu-tests/tp_bench --tp $tp --tokens 8192 --iters 30 --warmup 5 > /tmp/tpn_${tp}_$nh.jsonl 2>/tmp/tpn_${tp}_$nh.log || echo "tp $tp nh $nh rc=$?"
	python3 - /tmp/tpn_${tp}_$nh.jsonl "$rep tp$tp nheur$nh" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
for op in ("fc1", "fc2"):
    g = [r for r in rows if r["op"] == op and r["check_ok"]]
    b = min(g, key=lambda r: r["e2e_ms"])
    print(sys.argv[2], op, "gemm %.3f comm %.3f serial %.3f | best %s split%d agg%d ce%d %.3f (%.3f of max)" % (
        b["gemm_ms"], b["comm_ms"], b["serial_ms"], b["method"], b["num_splits"], b["aggregate"], b["use_ce"], b["e2e_ms"],
        b["e2e_ms"] / max(b["gemm_ms"], b["comm_ms"])))
PY
done
done
done
