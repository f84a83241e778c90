#!/usr/bin/env bash
# tests/cli/report_upstream.sh - aorta report as upstream overlap_report.py's
# drop-in: on the same runs and flags, summary.json's upstream keys
# (datasets.*.{count, mean_loss, mean_overlap_ms, mean_compute_ms,
# mean_allreduce_overlap_ms, mean_reducescatter_overlap_ms, overlap_ratio}
# and comparison.*) equal upstream's output (tests/data/upstream, produced
# by bench/upstream_report/run.sh) exactly, whether aorta's own keys read
# the traces beside the JSONL (default) or the JSONL (--prefer jsonl), and
# the output names the choice.
. "$(dirname "$0")/lib.sh"
F=tests/data/upstream/overlap_report_summary.json
python3 bench/report_speed/gen.py "$T/gen3x40" 3 40
python3 bench/report_speed/gen.py "$T/gen2x25" 2 25
same_as_upstream() { # NAME SUMMARY
	python3 - "$F" "$2" <<'PY' && ok || bad "$1: upstream's keys differ from overlap_report.py's"
import json, sys
u, a = (json.load(open(p)) for p in sys.argv[1:3])
bad = [(l, k, v, a["datasets"][l].get(k)) for l, d in u["datasets"].items() for k, v in d.items()
       if a["datasets"][l].get(k) != v]
bad += [("comparison", k, v, a.get("comparison", {}).get(k)) for k, v in u["comparison"].items()
        if a.get("comparison", {}).get(k) != v]
for b in bad:
    print("  %s.%s: upstream %r, aorta %r" % b)
sys.exit(1 if bad else 0)
PY
}
for prefer in traces jsonl; do
	$A report --log-dir data/h200x4/aorta_ddp --label ddp --log-dir "$T/gen3x40" --label gen3x40 \
		--log-dir "$T/gen2x25" --label gen2x25 --reference gen3x40 --candidate gen2x25 \
		--prefer $prefer --no-plots --output "$T/r_$prefer" >"$T/out_$prefer" 2>&1 || bad "report --prefer $prefer"
	same_as_upstream "--prefer $prefer" "$T/r_$prefer/summary.json"
done
# the choice is named, in summary.json and on stderr
[ "$(jq -r '.datasets.ddp.sources.analysis' "$T/r_traces/summary.json")" = traces ] && ok || bad "sources.analysis is not traces"
[ "$(jq -r '.datasets.ddp.sources.analysis' "$T/r_jsonl/summary.json")" = jsonl ] && ok || bad "--prefer jsonl: sources.analysis is not jsonl"
[ "$(jq -r '.datasets.ddp.sources.upstream_records' "$T/r_traces/summary.json")" = 240 ] && ok || bad "upstream_records is not 240"
grep -q "'ddp': upstream's keys .* from 4 rank_\*_metrics.jsonl files (240 records) as overlap_report.py computes them; aorta's keys from the traces" "$T/out_traces" && ok || bad "stderr does not name the sources"
# the JSONL read for upstream's keys is not called left out; one that is not
# a rank_*_metrics.jsonl (overlap_report.py does not read it either) is
! grep -q "JSONL files\? beside them left out" "$T/out_traces" && ok || bad "report calls the JSONL it read left out"
mkdir -p "$T/ddp_extra" && cp -r data/h200x4/aorta_ddp/* "$T/ddp_extra/" && cp "$T/gen2x25/rank_00_metrics.jsonl" "$T/ddp_extra/other.jsonl"
expect "a JSONL beside traces that report does not read" 0 "1 aorta metrics JSONL file beside them left out" -- \
	$A report --log-dir "$T/ddp_extra" --label x --no-plots --output "$T/extra"
# overlap_ratio is one quantity in the whole summary: upstream's, for the
# dataset, its ranks (upstream's sums per rank file) and the comparison of
# two runs that both have JSONL; aorta's own overlapped comm / compute is
# overlap_compute_ratio, in the dataset and in the comparisons' figures
jq -e '(.datasets.gen3x40.overlap_ratio) as $r | (.datasets.gen3x40.overlap_compute_ratio) as $a |
	(.comparisons[0].reference_overlap_ratio == ($r * 1e8 | round / 1e8)) and
	(.comparisons[0].overlap_ratio_from == "upstream JSONL") and
	((.comparisons[0].figures[] | select(.figure == "overlap_compute_ratio") | .reference) == ($a * 1e6 | round / 1e6)) and
	([.comparisons[0].figures[] | select(.figure == "overlap_ratio")] | length == 0)' \
	"$T/r_traces/summary.json" >/dev/null && ok || bad "overlap_ratio differs within summary.json"
jq -e '[.datasets.gen3x40.per_rank[] | .overlap_ratio > 0.16 and .overlap_ratio < 0.18] | all' "$T/r_traces/summary.json" \
	>/dev/null && ok || bad "per-rank overlap_ratio is not upstream's"
# aorta's keys still come from the traces: the diagnosis of waiting is there
[ "$(jq -r '.datasets.ddp.diagnosis' "$T/r_traces/summary.json")" = waiting ] && ok || bad "traces' diagnosis missing"
expect "--prefer bogus" 2 "--prefer takes 'traces' or 'jsonl'" -- $A report --log-dir "$T/gen2x25" --label x --prefer bogus --output "$T/x"
# a line that is not an upstream record is left out, counted and named (file, line)
mkdir -p "$T/badrun" && head -n 3 "$T/gen2x25/rank_00_metrics.jsonl" >"$T/badrun/rank_00_metrics.jsonl"
echo '{"rank": 0, "loss": 1.0, "profile": {"total_ms": 3.0}}' >>"$T/badrun/rank_00_metrics.jsonl"
echo '{"rank": 0, "loss": 1.0, "prof' >>"$T/badrun/rank_00_metrics.jsonl"
expect "lines left out are named" 0 "'bad': 2 JSONL lines left out of upstream's keys \(first: .*rank_00_metrics.jsonl: line 4: not an upstream record" -- \
	$A report --log-dir "$T/badrun" --label bad --no-plots --output "$T/bad"
[ "$(jq '.datasets.bad.count' "$T/bad/summary.json")" = 3 ] && ok || bad "the three good records are not counted"
echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
