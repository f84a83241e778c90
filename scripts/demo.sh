#!/usr/bin/env bash
# make demo: the main job on an embedded default.
# With a GPU and 'aorta train' built: a short training run and its report
# (arrives with the train issue).  Without one: analysis of the real 4-rank
# H200 traces bundled in data/ (an FSDP2 run and the upstream AORTA DDP run).
set -euo pipefail
cd "$(dirname "$0")/.."
A=./build/aorta
echo "aorta demo: no training command in this build yet; analysing the bundled real traces" >&2
echo "== FSDP2, 4 x H200, batch 8 (data/h200x4/fsdp2_bs8)"
$A analyze --skip-steps 0 data/h200x4/fsdp2_bs8
echo
echo "== upstream AORTA train.py, DDP, 4 x H200 (data/h200x4/aorta_ddp/torch_profiler)"
$A analyze data/h200x4/aorta_ddp/torch_profiler --json build/demo_aorta_ddp.json
echo
echo "analysis JSON written to build/demo_aorta_ddp.json" >&2
