#!/usr/bin/env bash
# Whether two aorta binaries write the same bytes: report (summary.json,
# SVG and PNG charts, index.html, stdout) and analyze (--json, --csv,
# stdout, --per-step) on the bundled runs, generated JSONL runs and saved
# analyses.  For a change that must not move a figure (e.g. how the steps
# are stored or the JSONL is read): OLD = main's build, NEW = this tree's.
# Prints one line per output that differs and exits 1 if any does.
#   OLD=/work/main/build/aorta [NEW=./build/aorta] bench/report_speed/same_outputs.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
OLD=$(realpath "${OLD:?set OLD to the binary to compare against}")
NEW=$(realpath "${NEW:-./build/aorta}")
DATA=$(realpath ../shared/data/h200x4)
W=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT

# generated upstream JSONL: 4 ranks x 60 steps, and a run with an odd file
python3 bench/report_speed/gen.py "$W/gen" 4 60
python3 bench/report_speed/gen.py "$W/gen2" 3 40
{
	head -n 5 "$W/gen2/rank_02_metrics.jsonl"
	echo '   '
	echo '{"rank": 2, "global_step": 5, "loss": 1e-400, "profile": {"total_ms": 12.5, "ranges": []}}'
	echo '{"rank": 2, "global_step": 6, "loss": -0.0, "profile": {"total_ms": 0.1, "overlap": {"per_stream_ms": {"compute": 3.0000000000000004}}}}'
	sed -n '8,20p' "$W/gen2/rank_02_metrics.jsonl"
	# values nobody reads, of every kind the JSONL reader steps over or parses
	echo '{"rank": 2, "global_step": 20, "loss": 0.5, "profile": {"total_ms": 3.0, "ranges": [{"stream": "compute", "tag": "epoch0_step20_fwd", "start_ms": 0.5, "end_ms": 2.0, "metadata": {"markers": [1]}}], "markers": [{"tag": "caf\u00e9 \"q\"", "t": 1e-5}], "overlap": {"per_stream_ms": {"compute": 1.5, "utilization": 2.0}, "overlap_ms": {"compute_comm": 0.25}, "active_segments": [{"start_ms": 1e999}], "utilization": {"compute": 0.5, "x": [true, false, null, {}, [], -0, 12345678901234567890]}}}}'
	echo '{"rank": 2, "global_step": 21, "loss": 0.25, "profile": {"total_ms": 2.0, "markers": [{"tag": "café"}], "overlap": {"active_segments": [{"start_ms": 0.0, "end_ms": 1.0, "active_streams": ["compute"]}], "utilization": {"compute": 0.5}, "per_stream_ms": {"compute": 1.0, "allreduce": 0.5}, "overlap_ms": {"compute_comm": 0.5, "compute_allreduce": 0.5}, "active_segments": [1e999]}, "active_segments": {"a": [1, 2.5, "b", true]}}}'
	sed -n '23,40p' "$W/gen2/rank_02_metrics.jsonl"
	printf '{"rank": 2, "global_step": 99, "profile": {"total_'
} >"$W/odd.jsonl"
mv "$W/odd.jsonl" "$W/gen2/rank_02_metrics.jsonl"
# damage inside a value the reader steps over: the error (line, offset) as the parser's
python3 bench/report_speed/gen.py "$W/gen3" 2 10
sed -i '4s/"active_streams": \["aux"\]/"active_streams": ["aux",]/' "$W/gen3/rank_01_metrics.jsonl"
sed -i '6s/"utilization": {"compute"/"utilization": {"compute" 1, "c"/' "$W/gen3/rank_00_metrics.jsonl"

run() { # NAME ARGS...: both binaries, from directories of the same depth
	local name=$1
	shift
	for b in OLD NEW; do
		mkdir -p "$W/$b/$name"
		(cd "$W/$b/$name" && "${!b}" "$@" >stdout 2>stderr.all; echo "exit $?" >>stdout)
		# the reader threads' progress lines come in any order
		grep -Ev '^aorta: read [0-9]+/[0-9]+: ' "$W/$b/$name/stderr.all" >"$W/$b/$name/stderr"
		rm "$W/$b/$name/stderr.all"
	done
}

for b in OLD NEW; do mkdir -p "$W/$b"; done
run ddp report --log-dir "$DATA/aorta_ddp" --label ddp --output out
run ddp_jsonl report --log-dir "$DATA/aorta_ddp" --label ddp --prefer jsonl --output out
run ddp_fsdp report --log-dir "$DATA/aorta_ddp" --label ddp --log-dir "$DATA/fsdp2_bs8" --label fsdp \
	--reference ddp --candidate fsdp --output out
run report_data report --log-dir "$ROOT/tests/data/report/base" --label base \
	--log-dir "$ROOT/tests/data/report/cand" --label cand --reference base --candidate cand --output out
run gen report --log-dir "$W/gen" --label gen --output out
run gen_skip_all report --log-dir "$W/gen" --label gen --skip-steps 100 --output out
run gen3 report --log-dir "$W/gen3" --label g --output out
run an_gen3_0 analyze "$W/gen3/rank_00_metrics.jsonl"
run an_gen3_1 analyze "$W/gen3/rank_01_metrics.jsonl"
run gen_two report --log-dir "$W/gen" --label a --log-dir "$W/gen2" --label b --reference a --candidate b \
	--output out
for d in tiny; do
	run "an_$d" analyze "$ROOT/tests/data/$d" --json a.json --csv csv --per-step
done
run an_jsonl analyze "$DATA/aorta_ddp/rank_00_metrics.jsonl" "$DATA/aorta_ddp/rank_01_metrics.jsonl" \
	--json a.json --csv csv --per-step
run an_gen2 analyze "$W/gen2" --json a.json --csv csv --per-step
run an_fsdp analyze "$DATA/fsdp2_bs8" --json a.json --csv csv
run an_straggler analyze "$ROOT/tests/data/straggler/ddp_const_r1" --json a.json --csv csv --per-step
for d in "$ROOT"/tests/data/whatif/*/slowed; do
	n=$(basename "$(dirname "$d")")
	run "an_wi_$n" analyze "$d" --json a.json --csv csv
done
# saved analyses read back: by report, and written again by analyze
for s in an_jsonl an_fsdp an_gen2; do
	run "saved_$s" report --log-dir "$W/NEW/$s/a.json" --label saved --output out
	run "resaved_$s" analyze "$W/NEW/$s/a.json" --json a.json --csv csv
done

bad=0
while read -r f; do
	rel=${f#"$W/OLD/"}
	if [ ! -f "$W/NEW/$rel" ]; then
		echo "only in OLD: $rel"
		bad=1
	elif ! cmp -s "$f" "$W/NEW/$rel"; then
		echo "differs: $rel"
		bad=1
	fi
done < <(find "$W/OLD" -type f | sort)
while read -r f; do
	rel=${f#"$W/NEW/"}
	[ -f "$W/OLD/$rel" ] || { echo "only in NEW: $rel"; bad=1; }
done < <(find "$W/NEW" -type f | sort)
n=$(find "$W/OLD" -type f | wc -l)
if [ "$bad" = 0 ]; then
	echo "same: all $n files (stdout, stderr, summary.json, charts, index.html, JSON, CSV)"
fi
exit "$bad"
