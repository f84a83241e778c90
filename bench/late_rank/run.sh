#!/usr/bin/env bash
# The late-rank rule on every bundled multi-rank run: the top rank's share of
# the waiting caused, all waiting caused over the ranks' summed time
# (across_ranks.waiting_caused_time_share, the materiality test: >= 1 %),
# and the rank named late (docs/metrics.md "Late rank").
#   bench/late_rank/run.sh [AORTA]
set -uo pipefail
cd "$(dirname "$0")/../.."
A=${1:-./build/aorta}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
printf '| run | top rank | its share of the waiting | waiting caused / summed time | late rank |\n| --- | --- | --- | --- | --- |\n'
for d in tests/data/tiny tests/data/straggler/*/ data/h200x4/fsdp2_bs8 data/h200x4/aorta_ddp \
	../shared/data/kineto/h200_torch2.11/ddp_4rank_12steps ../shared/data/kineto/h200_torch2.11/fsdp2_4rank_6steps; do
	[ -e "$d" ] || continue
	"$A" analyze -q --json "$T/a.json" "$d" >/dev/null 2>&1 || continue
	jq -r --arg d "${d%/}" '.across_ranks | "| \($d) | \(.top_rank // "-") | \(if .late_share then (.late_share * 1000 | round / 10 | tostring) + " %" else "-" end) | \(if .waiting_caused_time_share then (.waiting_caused_time_share * 10000 | round / 100 | tostring) + " %" else "-" end) | \(.late_rank // "none") |"' "$T/a.json"
done
