#!/usr/bin/env bash
# Public traces that are not (yet) in ../shared/data, read from a fetched
# snapshot (the fetch tool puts a repository's snapshot under /work/.mirror;
# files are taken out with git show into a temporary folder and never
# committed), computed by reference.py and checked against aorta exactly as
# make test checks the shared sets (tests/cli/public_traces.py).
#   bench/public_traces/snapshots.sh [MIRROR]    (default /work/.mirror)
# Sets (bench/RESULTS.md "Public traces against an independent reference"):
#   deepseek-train-ep64   deepseek-ai/profile-data train.json: rank 0 of an
#                         EP64 job on H800 whose all-to-all runs on DeepEP
#                         kernels (dpsk::ep::internode::*), no NCCL; no licence
#                         file in the repository: read in place, not copied
set -u
cd "$(dirname "$0")/../.."
M=${1:-/work/.mirror}
A=${AORTA_BIN:-./build/aorta}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
extra=()
if [ -d "$M/deepseek-ai+profile-data/repo" ]; then
	mkdir -p "$T/data/deepseek"
	git --git-dir="$M/deepseek-ai+profile-data/repo" show HEAD:train.json >"$T/data/deepseek/train.json"
	extra+=(--extra "deepseek-train-ep64=kineto:deepseek/train.json")
else
	echo "deepseek-ai/profile-data: no snapshot under $M (fetch github:deepseek-ai/profile-data)"
fi
[ ${#extra[@]} -gt 0 ] || { echo "no snapshot to check"; exit 0; }
python3 bench/public_traces/reference.py --data "$T/data" --out "$T/ref" "${extra[@]}"
for f in "$T"/ref/*.json; do
	echo "== $(basename "$f" .json): reference"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
for r in d["ranks"]: print("   ", {k: r[k] for k in ("span_ms","busy_ms","compute_ms","comm_ms","exposed_ms","comm_types")})' "$f"
done
python3 tests/cli/public_traces.py "$A" "$T/data" "$T/ref" "$T"
