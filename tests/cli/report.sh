#!/usr/bin/env bash
# CLI tests of `aorta report`: golden summary.json on fixed inputs (the
# upstream-format JSONL of data/h200x4/aorta_ddp and the fixture runs of
# tests/data/report, made by tests/data/make_report.py), inputs that are
# analyses or traces, exit codes and messages for bad usage and bad input,
# the whole-folder replacement, and a report without the plot plug-in.
# UPDATE_GOLDEN=1 rewrites the golden files.  Ends with "N passed, N failed".
. "$(dirname "$0")/lib.sh"

golden() { # NAME FILE (the tool version is masked)
	sed -E 's/("version": )"[^"]*"/\1"X"/' "$2" >"$T/golden.tmp"
	if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then cp "$T/golden.tmp" "$G/$1"; ok; return; fi
	if diff -u "$G/$1" "$T/golden.tmp" >"$T/diff" 2>&1; then ok; else bad "golden $1 differs:"; head -n 30 "$T/diff"; fi
}

# --- golden summaries ---------------------------------------------------------
expect "report upstream JSONL" 0 "ddp +4 ranks, 240 rank-steps used" -- \
	$A report --log-dir 'data/h200x4/aorta_ddp/rank_*_metrics.jsonl' --label ddp --output "$T/ddp"
golden report_ddp_summary.json "$T/ddp/summary.json"
for f in index.html ddp_timeline.png ddp_timeline.svg ddp_gantt.png .aorta-report; do
	[ -s "$T/ddp/$f" ] && ok || bad "report upstream JSONL: no $f"
done
expect "report compare, cut line warned" 0 "the last line, cut short" -- \
	$A report --log-dir tests/data/report/base --label base --log-dir tests/data/report/cand --label cand \
	--reference base --candidate cand --output "$T/cmp"
golden report_compare_summary.json "$T/cmp/summary.json"
has "upstream comparison block, as overlap_report.py: every record, no warm-up skip" "$T/cmp/summary.json" '"ratio_delta": 0.12494777866197948'
# every table header and row label of the page names its unit
has "summary rows carry units" "$T/cmp/index.html" '<td class=l>step \(ms\)</td>'
has "comparison header carries units" "$T/cmp/index.html" '<th>change \(unit of the figure\)</th><th>change \(%\)</th>'
has "comparison rows carry units" "$T/cmp/index.html" '<td class=l>overlapped comm / compute \(ratio\)</td>'
for f in compare_change compare_absolute compare_by_rank compare_heatmap_cand base_timeline cand_gantt; do
	[ -s "$T/cmp/$f.png" ] && [ -s "$T/cmp/$f.svg" ] && ok || bad "report compare: no $f.png/.svg"
done
expect "skip-steps 0" 0 "base +2 ranks, 24 rank-steps used" -- \
	$A report --log-dir tests/data/report/base --label base --skip-steps 0 --no-plots --output "$T/s0"
has "no comparison without --reference and --candidate" "$T/s0/summary.json" '"comparisons": \[\]'

# --- analyses and traces as inputs -------------------------------------------
$A analyze -q --json "$T/tiny.json" tests/data/tiny >/dev/null 2>&1
expect "analysis JSON and trace inputs" 0 "report: " -- \
	$A report --log-dir "$T/tiny.json" --label analysed --log-dir tests/data/tiny --label traced \
	--skip-steps 0 --output "$T/tr"
has "analysis format recorded" "$T/tr/summary.json" '"format": "aorta-analysis"'
has "collectives from traces" "$T/tr/summary.json" '"busbw_gbps"'
[ -s "$T/tr/collectives.png" ] && ok || bad "trace input: no collectives chart"
[ -s "$T/tr/traced_gantt.png" ] && ok || bad "trace input: no Gantt chart of its streams"
[ ! -e "$T/tr/analysed_gantt.png" ] && ok || bad "an analysis has no spans, yet a Gantt chart was drawn"

# --- usage errors: exit 2 -----------------------------------------------------
expect "no --log-dir" 2 "at least one --log-dir" -- $A report --output "$T/x"
expect "no --output" 2 "needs --output" -- $A report --log-dir tests/data/report/base
expect "label count mismatch" 2 "--log-dir given 2 times but --label 1 times" -- \
	$A report --log-dir tests/data/report/base --log-dir tests/data/report/cand --label a --output "$T/x"
expect "unknown reference" 2 "unknown label 'nope' in --reference" -- \
	$A report --log-dir tests/data/report/base --label a --reference nope --output "$T/x"
expect "unknown candidate" 2 "unknown label 'zz' in --candidate" -- \
	$A report --log-dir tests/data/report/base --label a --log-dir tests/data/report/cand --label b \
	--reference a --candidate zz --output "$T/x"
expect "duplicate label" 2 "given twice" -- \
	$A report --log-dir tests/data/report/base --label a --log-dir tests/data/report/cand --label a --output "$T/x"
expect "negative skip" 2 "must be >= 0" -- \
	$A report --log-dir tests/data/report/base --label a --skip-steps -1 --output "$T/x"
mkdir -p "$T/precious" && echo keep >"$T/precious/notes.txt"
expect "refuses a foreign folder" 2 "is not an earlier aorta report" -- \
	$A report --log-dir tests/data/report/base --label a --output "$T/precious"
[ -f "$T/precious/notes.txt" ] && ok || bad "a foreign --output folder was touched"

# --- bad input: exit 3 ----------------------------------------------------------
expect "missing directory" 3 "'$T/none': no such file or directory" -- \
	$A report --log-dir "$T/none" --label a --output "$T/x"
mkdir -p "$T/nothing"
expect "folder with nothing readable" 3 "'$T/nothing'" -- \
	$A report --log-dir "$T/nothing" --label a --output "$T/x"
[ ! -e "$T/x" ] && ok || bad "a failed report left '$T/x' behind"
mkdir -p "$T/emptyrun" && : >"$T/emptyrun/rank_00_metrics.jsonl"
expect "empty JSONL: nothing to report, exit 3" 3 "'$T/emptyrun'" -- \
	$A report --log-dir "$T/emptyrun" --label e --output "$T/e"
[ ! -e "$T/e" ] && ok || bad "an empty run left a report of zeros"

# --- one way in: a folder of traces and JSONL is read as analyze reads it -------
expect "traces beside JSONL: the choice is said" 0 "from 4 rank_\\*_metrics.jsonl files .*aorta's keys from the traces \\(--prefer jsonl reads the JSONL instead\\)" -- \
	$A report --log-dir data/h200x4/aorta_ddp --label ddp --skip-steps 0 --no-plots --output "$T/both"
has "traces chosen, as analyze does" "$T/both/summary.json" '"format": "kineto"'
# --skip-steps beyond the steps: adapted and said, never a report of zeros
expect "--skip-steps 5 on 3-step traces: adapted" 0 "would leave none of the 3 steps" -- \
	$A report --skip-steps 5 --log-dir data/h200x4/fsdp2_bs8 --label fsdp2 --no-plots --output "$T/f2"
# one warm-up default for every command (0): a usual 3-step capture is used whole, without a warning
$A report --log-dir data/h200x4/fsdp2_bs8 --label fsdp2 --no-plots --output "$T/f2d" >"$T/f2d.txt" 2>&1
grep -q "skip-steps" "$T/f2d.txt" && bad "the default skip warns on a 3-step capture: $(grep skip-steps "$T/f2d.txt")" || ok
has "default skip: every step used" "$T/f2d/summary.json" '"count": 12'
# a log from the first step: its warm-up is named in the summary, with the skip that leaves it out
has "warm-up left in, named" "$T/ddp/index.html" "warm-up left in: the first 2 kept steps of a rank take more than twice its median \(rank 0: 555.94 ms against 29.75 ms\); --skip-steps 2 leaves them out"
has "adapted: steps used" "$T/f2/summary.json" '"count": 12'
has "late rank named in the report" "$T/f2/index.html" "rank 3 was late"
has "host named in the report" "$T/f2/index.html" "because its host was busy"
has "waiting named in the report" "$T/f2/index.html" "waiting for a late peer"
has "diagnosis in summary.json" "$T/f2/summary.json" '"diagnosis": "late_rank"'
# DDP -> FSDP2: the step got slower, so less idle is not 'better'
expect "ddp -> fsdp2" 0 "report: " -- \
	$A report --log-dir data/h200x4/aorta_ddp --label ddp --log-dir data/h200x4/fsdp2_bs8 --label fsdp2 \
	--skip-steps 0 --no-plots --output "$T/d2f"
has "step slower leads" "$T/d2f/index.html" "fsdp2 against ddp: The step is slower"
if jq -e '.comparisons[0].figures[] | select(.verdict == "better")' "$T/d2f/summary.json" >/dev/null; then
	bad "a figure is 'better' although the step got slower"
else ok; fi
if grep -q -E 'nan|inf' "$T/d2f/index.html" "$T/d2f/summary.json"; then bad "nan/inf in the report"; else ok; fi

# --- a rerun replaces the folder whole -----------------------------------------
echo stale >"$T/ddp/stale.png"
expect "rerun" 0 "report: " -- $A report --log-dir tests/data/report/base --label base --output "$T/ddp"
[ ! -e "$T/ddp/stale.png" ] && [ ! -e "$T/ddp/ddp_timeline.png" ] && [ -s "$T/ddp/base_timeline.png" ] && ok ||
	bad "rerun left old files beside new ones"
ls -d "$T"/ddp.* >/dev/null 2>&1 && bad "rerun left a temporary folder" || ok

# --- without the plot plug-in ---------------------------------------------------
expect "no plug-in: warned, exit 0" 0 "charts not drawn" -- \
	env AORTA_PLOT_LIB="$T/missing.so" $A report --log-dir tests/data/report/base --label base --output "$T/np"
[ -s "$T/np/summary.json" ] && [ -s "$T/np/index.html" ] && ! ls "$T"/np/*.png >/dev/null 2>&1 && ok ||
	bad "no plug-in: expected summary.json and index.html only"
has "no plug-in: the page says why" "$T/np/index.html" "Charts were not drawn"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
