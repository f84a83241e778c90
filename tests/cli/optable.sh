#!/usr/bin/env bash
# The op table (aorta.optable/1, docs/formats.md) through `aorta analyze`:
# the CSV fixture and the same table as JSON lines give the same analysis;
# the figures are the hand-computed ones of tests/unit/test_optable.c
# (rank 0 waits 70 us for rank 1 in step 1's all-reduce, rank 1's recv
# waits 10 us for rank 0's send: late rank 1 with 87.5 % of the waiting);
# bad tables exit 3 naming file and line.
# Ends with "N passed, N failed, 0 skipped".
. "$(dirname "$0")/lib.sh"
F=tests/fixtures/optable/two_ranks.csv

expect "analyze table.csv" 0 "late rank \(caused >= 60% of the waiting[^)]*\): 1 \(87.5%\)" -- "$A" analyze "$F"
expect "format named" 0 "optable" -- "$A" analyze "$F"
expect "json" 0 "" -- "$A" analyze -q --json "$T/csv.json" "$F"
got=$(jq -r '[.across_ranks.late_rank, .across_ranks.late_share, .across_ranks.clock.method,
	(.ranks[] | .format), (.ranks[] | .step_stats.compute_ms.mean)] | @tsv' "$T/csv.json" 2>&1)
if [ "$got" = "$(printf '1\t0.875\tone-host\toptable\toptable\t0.1\t0.11')" ]; then ok; else bad "json figures: $got"; fi

# the same rows as JSON lines (via jq from the CSV), through a pipe
{
	echo '{"schema": "aorta.optable/1"}'
	grep -v '^#' "$F" | tail -n +2 | while IFS=, read -r rank step op kind stream s d g p b h; do
		printf '{"rank":%s,"step":%s,"op":"%s","kind":"%s","stream":%s,"start_us":%s,"dur_us":%s' \
			"$rank" "$step" "$op" "$kind" "$stream" "$s" "$d"
		[ -n "$g" ] && printf ',"group":"%s"' "$g"
		[ -n "$p" ] && printf ',"peer":%s' "$p"
		[ -n "$b" ] && printf ',"bytes":%s' "$b"
		printf ',"host":"%s"}\n' "$h"
	done
} >"$T/t.jsonl"
expect "json lines" 0 "" -- "$A" analyze -q --json "$T/jsonl.json" "$T/t.jsonl"
if diff <(jq 'del(.inputs, .command, .ranks[].path, .generated, .run)' "$T/csv.json" 2>/dev/null) \
	<(jq 'del(.inputs, .command, .ranks[].path, .generated, .run)' "$T/jsonl.json" 2>/dev/null) >"$T/d" \
	&& [ -s "$T/csv.json" ]; then ok; else bad "CSV and JSONL differ: $(head -n 6 "$T/d")"; fi
expect "from a pipe" 0 "late rank .*: 1 " -- bash -c "cat '$T/t.jsonl' | '$A' analyze -"

# the OSDI'25 artifact's ST trace, 2 steps (dp 2 x pp 4; tests/fixtures/optable/NOTICE):
# per step 3 stage links x 2 replicas x (4 forward + 4 backward) send/recv
# pairs, 4 all-gathers, 4 reduce-scatters, 2 embedding all-reduces, 1
# clip all-reduce = 59 matched; the 8 layernorm all-reduces (TP, whose
# other ranks the artifact dropped) match nothing
S=tests/fixtures/optable/artifact_st_2steps.csv
expect "artifact table" 0 "" -- "$A" analyze -q --json "$T/st.json" "$S"
got=$(jq -r '[.across_ranks.matched_collectives, .across_ranks.unmatched_calls, (.ranks | length),
	([.ranks[].skipped_events] | add)] | @tsv' "$T/st.json" 2>&1)
if [ "$got" = "$(printf '118\t16\t8\t0')" ]; then ok; else bad "artifact matching: $got"; fi

# bad tables: exit 3, file and line, what was expected
printf '# aorta.optable/1\nrank,op,kind,start,dur_ns\n0,a,gemm,0,1\n' >"$T/nounit.csv"
expect "time column without unit" 3 "nounit.csv.*line 2.*start_ns" -- "$A" analyze "$T/nounit.csv"
printf '# aorta.optable/1\nrank,op,kind,dur_ns\n' >"$T/nostart.csv"
expect "missing column" 3 "nostart.csv.*line 2.*start_<unit>" -- "$A" analyze "$T/nostart.csv"
printf '# aorta.optable/9\nrank,op,kind,start_ns,dur_ns\n' >"$T/v9.csv"
expect "other version" 3 "v9.csv.*line 1.*aorta.optable/1" -- "$A" analyze "$T/v9.csv"
printf '# aorta.optable/1\nrank,op,kind,start_ns,dur_ns\n0,a,gemm,0,-5\n' >"$T/neg.csv"
expect "only a negative duration" 3 "neg.csv.*line 3: negative duration" -- "$A" analyze "$T/neg.csv"
printf '# aorta.optable/1\nrank,op,kind,start_ns,dur_ns\n0,a,gemm,0,5\n0,b,gemm,1x,5\n' >"$T/skip.csv"
expect "a bad row is skipped and counted" 0 "skip.*1.*line 4" -- "$A" analyze "$T/skip.csv"

# the stage balance (docs/metrics.md "What-if"): two stages, 4 microbatches a
# step, stage 0's forward 1 ms, stage 1's 3 ms, an all-reduce of 1 ms
# transfer closing each step: 3 x 3 + 1 + 1 = 14 ms a step (measured).  Balanced,
# each forward is (1 + 3) / 2 = 2 ms: 3 x 2 + 2 + 2 + 1 = 11 ms, a gain of 3 ms
# (21.4 %) that no rank or stage fix has (each stage is alone in its class)
P=tests/fixtures/optable/pipeline_imbalance.csv
"$A" analyze -q --json "$T/pi.json" "$P" 2>/dev/null || bad "analyze $P failed"
jq -e '.across_ranks.what_if | .measured_step_ms == 14 and .replay_step_ms == 14 and
	([.by_group[] | select(.fix == "the stage balance") | .step_ms_if_fixed == 11 and .gain_ms == 3 and .ranks == "0,1"] == [true]) and
	([.by_rank[].gain_ms] | max) == 0 and (.verdict | startswith("fixing the stage balance would make the step 21 % faster"))' \
	"$T/pi.json" >/dev/null && ok || bad "stage balance: $(jq -c '.across_ranks.what_if | {by_group, verdict}' "$T/pi.json")"
# a balanced pipeline has nothing to balance: the same table with both forwards at 2 ms
awk -F, 'BEGIN { OFS = "," } /^[0-9]/ && $3 == "fwd" { $6 = ($1 == 0 ? $2 * 14 + ($6 - $2 * 14) * 2 : $2 * 14 + 2 + ($6 - $2 * 14 - 1) / 3 * 2); $7 = 2 } { print }' "$P" >"$T/bal.csv"
"$A" analyze -q --json "$T/bal.json" "$T/bal.csv" 2>/dev/null || bad "analyze the balanced table failed"
jq -e '[.across_ranks.what_if.by_group[] | select(.fix == "the stage balance") | .gain_ms | fabs < 0.001] == [true]' "$T/bal.json" >/dev/null &&
	ok || bad "a balanced pipeline gains by balancing: $(jq -c '.across_ranks.what_if.by_group' "$T/bal.json")"

# the after column (docs/formats.md; docs/metrics.md "What-if"): each rank's
# forward (stream 0) waits for its all-gather (stream 1, 0-100 us); rank 0's
# pre-processing takes 30 us, rank 1's 150 us.  Measured windows: rank 0
# fwd 100-200 (the link delays it: its stream is free at 30), rank 1 fwd
# 150-250: step (200 + 250) / 2 = 225 us, replayed exactly, 2 table
# dependencies, none guessed.  Fixing rank 1 (pre 150 -> rank 0's 30 us):
# its fwd still waits for the all-gather, 100-200: step (200 + 200) / 2 =
# 200 us, a gain of 25 us.  Without the column the guess finds rank 0's link
# (a launch-less gap of 70 us) but rank 1's fwd, started right after pre,
# has none: fixed it runs 30-130, step (200 + 130) / 2 = 165 us, 60 us gained
L=tests/fixtures/optable/after_link.csv
"$A" analyze -q --json "$T/al.json" "$L" 2>/dev/null || bad "analyze $L failed"
jq -e '.across_ranks.what_if | .measured_step_ms == 0.225 and .replay_step_ms == 0.225 and .deps_table == 2 and
	.deps_guessed == 0 and ([.by_rank[] | select(.rank == 1) | .step_ms_if_fixed == 0.2 and .gain_ms == 0.025] == [true])' \
	"$T/al.json" >/dev/null && ok || bad "after link: $(jq -c '.across_ranks.what_if | {replay_step_ms, deps_table, deps_guessed, by_rank}' "$T/al.json")"
cut -d, -f1-8 "$L" >"$T/noafter.csv"
"$A" analyze -q --json "$T/na.json" "$T/noafter.csv" 2>/dev/null || bad "analyze without after failed"
jq -e '.across_ranks.what_if | .deps_table == 0 and .deps_guessed == 1 and
	([.by_rank[] | select(.rank == 1) | .step_ms_if_fixed == 0.165 and .gain_ms == 0.06] == [true])' \
	"$T/na.json" >/dev/null && ok || bad "without after: $(jq -c '.across_ranks.what_if | {deps_table, deps_guessed, by_rank}' "$T/na.json")"
# bad after values: exit 3, file, line, what was expected
H='# aorta.optable/1\nrank,op,kind,stream,start_us,dur_us,id,after\n'
printf "$H"'0,a,gemm,0,0,10,a,\n0,b,gemm,1,10,5,b,zz\n' >"$T/unknown.csv"
expect "after: unknown id" 3 "unknown.csv.*line 4: after 'zz' is no row's id \(expected the id of a row of rank 0\)" -- "$A" analyze "$T/unknown.csv"
printf "$H"'0,a,gemm,0,0,10,a,a\n' >"$T/self.csv"
expect "after: itself" 3 "self.csv.*line 3: after 'a' is the row's own id" -- "$A" analyze "$T/self.csv"
printf "$H"'0,a,gemm,0,0,10,a,\n1,b,gemm,0,20,10,b,a\n' >"$T/other.csv"
expect "after: another rank" 3 "other.csv.*line 4: after 'a' is the id of a row of rank 0 \(line 3\); expected the id of a row of rank 1" -- "$A" analyze "$T/other.csv"
printf "$H"'0,a,gemm,0,0,0,a,b\n0,b,gemm,1,0,0,b,a\n' >"$T/cycle.csv"
expect "after: a cycle" 3 "cycle.csv.*line [34]: after '[ab]' closes a cycle" -- "$A" analyze "$T/cycle.csv"
printf "$H"'0,a,gemm,0,0,10,a,\n0,b,gemm,1,5,10,b,a\n' >"$T/early.csv"
expect "after: starts before" 3 "early.csv.*line 4: the op starts at 5000 ns, before the op it waits for \(after 'a', line 3\) ends at 10000 ns" -- "$A" analyze "$T/early.csv"
printf "$H"'0,a,gemm,0,0,10,a,\n0,b,gemm,1,10,10,a,a\n' >"$T/twice.csv"
expect "id twice" 3 "twice.csv.*line 4: id 'a' again on rank 0 \(first on line 3" -- "$A" analyze "$T/twice.csv"

echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
