#!/usr/bin/env bash
# make demo: the main job on an embedded default.
# With a GPU (and a build with GPU support): a short training run of the
# default configuration, then the analysis of its metrics and of its CUPTI
# trace.  Without one: the analysis of the real 4-rank H200 traces bundled
# in data/ (an FSDP2 run and the upstream AORTA DDP run).
set -euo pipefail
cd "$(dirname "$0")/.."
A=./build/aorta
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 && \
	! $A train --check-config --override training.max_steps=1 2>&1 | grep -q 'without GPU'; then
	export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
	OUT=build/demo_run
	rm -rf "$OUT"
	echo "== aorta train: 60 steps of the default configuration (config/default.yaml) on every visible GPU"
	$A train --override training.max_steps=60 training.output_dir="$OUT" training.log_interval=10 \
		profiling.enabled=true profiling.wait=40 profiling.warmup=2 profiling.active=3
	echo
	echo "== its per-step metrics, every rank ($OUT/rank_*_metrics.jsonl)"
	$A analyze --skip-steps 5 "$OUT"/rank_*_metrics.jsonl
	if [ -d "$OUT/torch_profiler" ]; then
		echo
		echo "== its CUPTI trace ($OUT/torch_profiler)"
		$A analyze "$OUT/torch_profiler"
	fi
	exit 0
fi
echo "aorta demo: no GPU here; analysing the bundled real traces" >&2
echo "== FSDP2, 4 x H200, batch 8 (data/h200x4/fsdp2_bs8)"
$A analyze data/h200x4/fsdp2_bs8
echo
echo "== upstream AORTA train.py, DDP, 4 x H200 (data/h200x4/aorta_ddp/torch_profiler)"
$A analyze data/h200x4/aorta_ddp/torch_profiler --json build/demo_aorta_ddp.json
echo
echo "analysis JSON written to build/demo_aorta_ddp.json" >&2
