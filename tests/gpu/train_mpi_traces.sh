#!/usr/bin/env bash
# train_mpi_traces.sh [BUILD] - on the device: `aorta train` under
# `mpirun -np 2` records a CUPTI trace on every rank (one process per rank),
# and the planted host delay (debug.host_delay_ms / _rank / _period) is where
# it is said to be.  A tiny full_shard model, 2 profiler cycles of 4 steps (1
# unprofiled, 1 warm-up, 2 traced); rank 1 spins 3 ms before each step's
# forward in the second cycle only (debug.host_delay_period=4).  Checks:
#  - each rank wrote one trace per cycle (torch_profiler/rank0, rank1);
#  - `aorta analyze` reads each cycle's two traces as 2 ranks, with its steps;
#  - in every traced step of the second cycle rank 1's first launch comes at
#    least 3 ms after its ProfilerStep begins, and in the first cycle within
#    1 ms; rank 0's first launch within 1 ms in both.
# Skips (exit 0, "0 passed, 0 failed, 1 skipped") without 2 GPUs, nvidia-smi or mpirun.
set -u
B=${1:-build}
A=$B/aorta
say_skip() { echo "skipped: $1"; echo "0 passed, 0 failed, 1 skipped"; exit 0; }
command -v mpirun >/dev/null 2>&1 || say_skip "no mpirun"
command -v nvidia-smi >/dev/null 2>&1 || say_skip "no nvidia-smi (no NVIDIA driver)"
n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
[ "${n:-0}" -ge 2 ] || say_skip "fewer than 2 GPUs"
[ -f "$B/libaorta-mpi.so" ] || say_skip "no MPI plug-in in $B"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-/usr/local/cuda/lib64} NCCL_NVLS_ENABLE=0 AORTA_COMM_TIMEOUT_MS=60000
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
timeout -k 10 120 mpirun --allow-run-as-root --bind-to none -np 2 -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE \
	-x AORTA_COMM_TIMEOUT_MS "$A" train -q --override model.model_dim=64 model.num_heads=2 model.num_layers=2 \
	model.mlp_hidden_dim=128 model.embedding_dim=32 model.vocab_size=1000 dataset.vocab_size=1000 \
	model.dense_dim=32 dataset.dense_dim=32 dataset.sequence_length=16 training.batch_size=2 \
	training.max_steps=9 profiling.enabled=true profiling.wait=1 profiling.warmup=1 profiling.active=2 \
	profiling.repeat=2 profiling.chrome_trace=true training.output_dir="$T/run" debug.host_delay_ms=3 \
	debug.host_delay_rank=1 debug.host_delay_period=4 >"$T/out.txt" 2>&1 ||
	bad "mpirun aorta train: exit $? ($(tail -2 "$T/out.txt" | tr '\n' ' '))"
for r in 0 1; do
	c=$(ls "$T/run/torch_profiler/rank$r" 2>/dev/null | grep -c '\.pt\.trace\.json')
	[ "$c" = 2 ] && ok || bad "rank $r wrote $c traces, expected 2 (one per cycle)"
done
for last in 3 7; do
	mkdir -p "$T/c$last"
	for r in 0 1; do
		f=$(ls "$T/run/torch_profiler/rank$r"/*."$last".pt.trace.json 2>/dev/null | head -1)
		[ -n "$f" ] && ln -s "$f" "$T/c$last/rank$r.json"
	done
	if "$A" analyze -q --json "$T/a$last.json" "$T/c$last" 2>"$T/err$last"; then
		python3 - "$T/a$last.json" <<'PY' && ok || bad "cycle ending at step $last: $(tail -1 "$T/err$last")"
import json, sys
a = json.load(open(sys.argv[1]))
assert [r["rank"] for r in a["ranks"]] == [0, 1], [r["rank"] for r in a["ranks"]]
assert all(len(r["steps"]) == 2 for r in a["ranks"]), "2 traced steps per rank"
PY
	else
		bad "analyze of the cycle ending at step $last: $(tail -1 "$T/err$last")"
	fi
done
python3 - "$T/c3" "$T/c7" <<'PY' && ok || bad "the planted delay is not where it was planted"
import json, os, sys
def first_launch(path):
    ev = json.load(open(path))["traceEvents"]
    steps = sorted((e["ts"], e["ts"] + e["dur"]) for e in ev
                   if e.get("cat") == "user_annotation" and e.get("name", "").startswith("ProfilerStep#"))
    rt = sorted(e["ts"] for e in ev if e.get("cat") == "cuda_runtime")
    return [(next(t for t in rt if t >= s0) - s0) / 1e3 for s0, s1 in steps]
base, slowed = sys.argv[1], sys.argv[2]
for r in (0, 1):
    b, s = first_launch(os.path.join(base, f"rank{r}.json")), first_launch(os.path.join(slowed, f"rank{r}.json"))
    print(f"rank {r}: first launch after the step begins, base cycle {b} ms, planted cycle {s} ms")
    assert all(x < 1.0 for x in b), f"rank {r}: base cycle {b}"
    if r == 1:
        assert all(x >= 3.0 for x in s), f"rank 1: planted cycle {s}"
    else:
        assert all(x < 1.0 for x in s), f"rank 0: planted cycle {s}"
PY
echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
