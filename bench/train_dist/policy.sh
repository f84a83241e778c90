#!/usr/bin/env bash
# NCCL CTA policy against overlap: batch 64 and 8, full_shard and ddp, default
# knobs, with NCCL_CTA_POLICY unset (NCCL's choice) / efficiency / zero (passed
# to ncclConfig_t.CTAPolicy by src/comm/nccl_comm.c; with zero the trainer puts
# the parameter shard and the gather buffers in registered symmetric windows,
# so NCCL runs the all-gathers on the copy engines): a normal and a comm-only
# run per setting, one compute-only run per batch and strategy.  Prints
# T_step, T_comm alone, compute busy overlapped / alone, exposed / comm and the
# overlap efficiency (T_compute + T_comm - T_step) / min(T_compute, T_comm).
#   bash bench/train_dist/policy.sh [WORKDIR]      (on the GPU machine)
# BATCHES="64 8" STRATEGIES="full_shard ddp" POLICIES="nccl efficiency zero" STEPS=30
# A policy may carry a CTA cap: zero:8 = NCCL_CTA_POLICY=zero NCCL_MAX_CTAS=8
# (nccl:8 = the cap alone).
set -u
cd "$(dirname "$0")/../.."
. bench/train_dist/common.sh
W=${1:-/tmp/aorta_policy}
STEPS=${STEPS:-30}
mkdir -p "$W"; : > "$W/manifest.tsv"
for B in ${BATCHES:-64 8}; do
	for s in ${STRATEGIES:-full_shard ddp}; do
		unset NCCL_CTA_POLICY
		one_run "$W" "compute_${B}_$s" policy "$B" "$s" compute true BACKWARD_PRE true false "$STEPS"
		for p in ${POLICIES:-nccl efficiency zero}; do
			pol=${p%%:*}; cap=${p#*:}; [ "$cap" = "$p" ] && cap=""
			if [ "$pol" = nccl ]; then unset NCCL_CTA_POLICY; else export NCCL_CTA_POLICY=$pol; fi
			if [ -n "$cap" ]; then export NCCL_MAX_CTAS=$cap; else unset NCCL_MAX_CTAS; fi
			one_run "$W" "n_${B}_${s}_$p" policy "$B" "$s" normal true BACKWARD_PRE true false "$STEPS"
			one_run "$W" "c_${B}_${s}_$p" policy "$B" "$s" comm true BACKWARD_PRE true false "$STEPS"
		done
	done
done
unset NCCL_CTA_POLICY NCCL_MAX_CTAS
python3 - "$W" "${BATCHES:-64 8}" "${STRATEGIES:-full_shard ddp}" "${POLICIES:-nccl efficiency zero}" <<'PY'
import json, sys, os
W = sys.argv[1]
def load(name):
    p = os.path.join(W, name + ".json")
    return json.load(open(p)) if os.path.exists(p) else None
def fig(d, key):
    if not d: return float("nan")
    v = [r["step_stats"][key]["p50"] for r in d["ranks"] if key in r["step_stats"]]
    return sum(v) / len(v) if v else float("nan")
def tot(d, key):
    if not d: return float("nan")
    return sum(r["steps_total"][key] for r in d["ranks"])
print("| batch | strategy | NCCL_CTA_POLICY[:NCCL_MAX_CTAS] | T_step | T_compute alone | T_comm alone | comm busy alone | compute busy overlapped / alone | exposed / comm | efficiency |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for B in sys.argv[2].split():
    for s in sys.argv[3].split():
        dc = load("compute_%s_%s" % (B, s))
        tc, cb = fig(dc, "step_ms"), fig(dc, "compute_ms")
        for p in sys.argv[4].split():
            dn, dm = load("n_%s_%s_%s" % (B, s, p)), load("c_%s_%s_%s" % (B, s, p))
            ts, tm, mb = fig(dn, "step_ms"), fig(dm, "step_ms"), fig(dm, "comm_ms")
            ex = tot(dn, "exposed_comm_ms") / tot(dn, "comm_ms") if dn else float("nan")
            eff = (tc + tm - ts) / min(tc, tm)
            print("| %s | %s | %s | %.3f ms | %.3f ms | %.3f ms | %.3f ms | %.3f / %.3f ms | %.1f %% | %.2f |" % (
                B, s, p, ts, tc, tm, mb, fig(dn, "compute_ms"), cb, 100 * ex, eff))
PY
