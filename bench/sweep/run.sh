#!/usr/bin/env bash
# bench/sweep/run.sh - the device verification of `aorta sweep` (issue 16),
# from the repository root with build/aorta and build/libaorta-gpu.so built:
#   make -j16 && bash bench/sweep/run.sh
# 1. `aorta env` of the machine, and both recipes checked with --dry-run;
# 2. nccl_train.yaml: NCCL_NTHREADS {256,512} x channels {4,16} x the system
#    NCCL (/usr/lib/x86_64-linux-gnu) and the PyTorch wheel's NCCL
#    (nvidia.nccl), 3 trials each + the confound re-run, on `aorta train`
#    (2 GPUs, 30 steps): 25 runs of ~4 s;
# 3. fsdp2_peer.yaml: the FSDP2 peer under torchrun (python3 -m torch.distributed.run) with its profiler traces,
#    NCCL_NTHREADS {256,512} x 2 trials + the confound: 5 runs of ~15 s;
# 4. `aorta sweep report` of both into one index.html; which NCCL each
#    environment loaded (from the env snapshots and the trials' NCCL_DEBUG=
#    VERSION lines); the sweep's overhead per cell.
# Each sweep runs under `timeout -s INT` (BUDGET1_S, default 190; BUDGET2_S,
# default 130): past it the sweep stops as on Ctrl-C, keeps what finished
# and the report shows it, so the whole script stays under ~6 minutes.
# The sweeps work in W (default /tmp/aorta_sweep); $OUT (default
# /tmp/aorta_sweep_out) gets at most 8 flat files, as the device tool brings
# back: summary.txt (NCCL per environment, overhead, both matrix.md), env.txt,
# index.html (charts embedded), matrix_nccl_train.json,
# matrix_fsdp2_peer.json and results.tar.gz (recipes, env snapshots, every
# trial's result.json and log, aorta train's JSONL; not the peer's traces).
set -u
cd "$(dirname "$0")/../.." || exit 2
O=${OUT:-/tmp/aorta_sweep_out}
W=${W:-/tmp/aorta_sweep}
mkdir -p "$O"
rm -rf "$W"
mkdir -p "$W"
A=./build/aorta
D=bench/sweep
START=$(date +%s)
export SYSTEM_NCCL_LIB=${SYSTEM_NCCL_LIB:-/usr/lib/x86_64-linux-gnu}
WHEEL_NCCL_LIB=${WHEEL_NCCL_LIB:-$(python3 -c 'import nvidia.nccl as m, os; print(os.path.join(list(m.__path__)[0], "lib"))' 2>/dev/null)}
export WHEEL_NCCL_LIB
PEER=${PEER:-.carry/fsdp2_peer.py}
[ -f "$PEER" ] || PEER=../shared/bench/fsdp2_peer.py
{
	echo "== $(date -u +%FT%TZ)"
	nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader 2>&1
	ls -l "$SYSTEM_NCCL_LIB"/libnccl.so* "$WHEEL_NCCL_LIB"/libnccl.so* 2>&1
	echo "== aorta env"
	$A env
} > "$O/env.txt" 2>&1
cat "$O/env.txt"
echo "== dry runs"
$A sweep run --recipe $D/nccl_train.yaml -o "$W/nccl_train" --dry-run > "$W/dry_nccl_train.txt" 2>&1 ||
	{ cat "$W/dry_nccl_train.txt"; exit 3; }
$A sweep run --recipe $D/fsdp2_peer.yaml -o "$W/fsdp2_peer" --dry-run \
	-- env "OUTDIR={out}" python3 -m torch.distributed.run --standalone --nproc_per_node=2 "$PEER" \
	> "$W/dry_fsdp2_peer.txt" 2>&1 || { cat "$W/dry_fsdp2_peer.txt"; exit 3; }
head -n 5 "$W/dry_nccl_train.txt" "$W/dry_fsdp2_peer.txt"
echo "== sweep 1: aorta train ($(( $(date +%s) - START )) s in)"
timeout -s INT "${BUDGET1_S:-190}" $A sweep run --recipe $D/nccl_train.yaml -o "$W/nccl_train"
echo "exit $?"
echo "== sweep 2: the FSDP2 peer ($(( $(date +%s) - START )) s in)"
timeout -s INT "${BUDGET2_S:-130}" $A sweep run --recipe $D/fsdp2_peer.yaml -o "$W/fsdp2_peer" \
	-- env "OUTDIR={out}" python3 -m torch.distributed.run --standalone --nproc_per_node=2 "$PEER"
echo "exit $?"
echo "== report ($(( $(date +%s) - START )) s in)"
$A sweep report "$W/nccl_train" "$W/fsdp2_peer" -o "$W/report"
{
	echo "== which NCCL each environment loaded"
	for e in system wheel; do
		printf '%s: snapshot %s %s; trials logged: %s\n' "$e" \
			"$(grep -o '"nccl.version": [^,]*' "$W/nccl_train/env/$e.json" 2>/dev/null)" \
			"$(grep -o '"nccl.path": [^,]*' "$W/nccl_train/env/$e.json" 2>/dev/null)" \
			"$(for c in $(sed -n 's/^  - {environment: "'"$e"'".*# \(c[0-9]*\)$/\1/p' "$W/nccl_train/recipe.resolved.yaml"); do
				grep -ho 'NCCL version [0-9.]*' "$W/nccl_train/cells/$c"/t*/log.txt 2>/dev/null; done | sort | uniq -c | tr '\n' ' ')"
	done
	echo "== overhead per cell (analysis + bookkeeping / run time, %)"
	for m in "$W/nccl_train/matrix.json" "$W/fsdp2_peer/matrix.json"; do
		echo "$m: mean $(grep -o '"overhead_pct_mean": [^,]*' "$m" 2>/dev/null)"
		grep -o '"overhead_pct": [0-9.]*' "$m" 2>/dev/null | sort -t: -k2 -g | tail -n 1 | sed 's/^/  largest trial: /'
	done
	echo "== matrices"
	cat "$W/nccl_train/matrix.md" "$W/fsdp2_peer/matrix.md" 2>/dev/null
	echo "== done in $(( $(date +%s) - START )) s"
} > "$O/summary.txt" 2>&1
cp "$W/report/index.html" "$O/index.html" 2>/dev/null
cp "$W/nccl_train/matrix.json" "$O/matrix_nccl_train.json" 2>/dev/null
cp "$W/fsdp2_peer/matrix.json" "$O/matrix_fsdp2_peer.json" 2>/dev/null
(cd "$W" && find . -name '*.yaml' -o -name '*.md' -o -name '*.txt' -o -name 'result.json' -o -path '*/env/*.json' \
	-o -name 'rank_*_metrics.jsonl' | tar czf "$O/results.tar.gz" -T -) 2>/dev/null
cat "$O/summary.txt"
ls -l "$O"
