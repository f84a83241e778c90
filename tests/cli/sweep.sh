#!/usr/bin/env bash
# CLI tests of aorta sweep and aorta env, without a GPU: a fake workload
# (tests/cli/sweep/fake_train.sh) writes aorta JSONL whose step times the
# tests plant, so ranking, the noise rule, the confound check, failures,
# timeouts, crashes, Ctrl-C and --resume, bad recipes (each error naming its
# recipe line), the replayable recipe.resolved.yaml and the report are
# checked against known answers.
. "$(dirname "$0")/lib.sh"
S=tests/cli/sweep
B=$S/bad

# --- help and usage -------------------------------------------------------------
expect "sweep -h" 0 "^usage: aorta sweep VERB" -- $A sweep -h
expect "sweep without verb" 2 "usage: aorta sweep" -- $A sweep
expect "sweep unknown verb" 2 "unknown sweep verb 'frob'" -- $A sweep frob
expect "sweep run -h" 0 "^usage: aorta sweep run --recipe FILE" -- $A sweep run -h
expect "sweep run -h lists --resume" 0 "--resume" -- $A sweep run -h
expect "sweep report -h" 0 "^usage: aorta sweep report DIR" -- $A sweep report -h
expect "sweep run without recipe" 2 "--recipe FILE is required" -- $A sweep run
expect "sweep run --bogus" 2 "unknown option '--bogus'" -- $A sweep run --bogus
expect "sweep run -- without command" 2 "must be followed by the workload command" -- $A sweep run --recipe $S/cli.yaml --
expect "sweep run missing recipe" 3 "no-such.yaml" -- $A sweep run --recipe $T/no-such.yaml
expect "env -h" 0 "^usage: aorta env" -- $A env -h
expect "help lists sweep" 0 "sweep +run a configuration" -- $A --help

# --- bad recipes: exit 3 before anything runs, naming the line -------------------
expect "unknown axis" 3 "unknown_axis.yaml': line 4: unknown axis 'nccl_min_nchannels': did you mean 'NCCL_MIN_NCHANNELS'" -- $A sweep run --recipe $B/unknown_axis.yaml -o $T/bad
expect "unknown axis in a cell" 3 "line 5: unknown axis 'NCCL_NTHREAD' in a cell: did you mean 'NCCL_NTHREADS'" -- $A sweep run --recipe $B/unknown_cell_axis.yaml -o $T/bad
expect "bad value" 3 "line 2: bad value '300' for NCCL_NTHREADS" -- $A sweep run --recipe $B/bad_value.yaml -o $T/bad
expect "bad value (a list)" 3 "line 2: bad value in axis 'NCCL_NTHREADS': expected a number or a word, got a list" -- $A sweep run --recipe $B/bad_value_list.yaml -o $T/bad
expect "empty axis" 3 "line 3: empty matrix: axis 'CUDA_DEVICE_MAX_CONNECTIONS' has no values" -- $A sweep run --recipe $B/empty_axis.yaml -o $T/bad
expect "empty cells" 3 "line 3: empty matrix: 'cells' is an empty list" -- $A sweep run --recipe $B/empty_cells.yaml -o $T/bad
expect "duplicate cells" 3 "line 6: duplicate cells: lines 4 and 6 are the same cell" -- $A sweep run --recipe $B/duplicate_cells.yaml -o $T/bad
expect "duplicate value" 3 "line 2: duplicate cells: axis 'NCCL_NTHREADS' lists '256' twice" -- $A sweep run --recipe $B/duplicate_value.yaml -o $T/bad
expect "unknown key" 3 "line 1: unknown key 'trails': did you mean 'trials'" -- $A sweep run --recipe $B/unknown_key.yaml -o $T/bad
expect "unknown placeholder" 3 "line 4: workload command: unknown placeholder '\{outdir\}'" -- $A sweep run --recipe $B/placeholder.yaml -o $T/bad
expect "override axis unused by a command" 3 "line 2: axis 'training.batch_size' sets an aorta train key" -- $A sweep run --recipe $B/unused_override.yaml -o $T/bad
expect "train refuses an override" 3 "line 3: cell c02 \(training.batch_size=abc\): aorta train refuses" -- $A sweep run --recipe $B/train_override.yaml -o $T/bad
expect "required variable unset" 3 "line 2: .*needs the environment variable AORTA_TEST_SURELY_UNSET_VAR" -- $A sweep run --recipe $B/unset_var.yaml -o $T/bad
expect "one variable, two axes" 3 "line 3: 'NCCL_MIN_NCHANNELS' is set by axis 'NCCL_MIN_NCHANNELS' \(line 2\) and axis 'channels'" -- $A sweep run --recipe $B/twice.yaml -o $T/bad
[ -e "$T/bad" ] && bad "a bad recipe created the output folder" || ok

# --- dry run ----------------------------------------------------------------------
$A sweep run --recipe $S/nccl.yaml --dry-run -o $T/dry >"$T/dry.txt" 2>&1; rc=$?
[ "$rc" = 0 ] && ok || bad "dry run exit $rc"
has "dry run: 8 cells x 3 trials" "$T/dry.txt" "^sweep 'fake-nccl': 8 cells x 3 trials = 24 runs \+ 1 confound"
has "dry run: environment outermost, baseline" "$T/dry.txt" "^c01  environment=old NCCL_NTHREADS=256 channels=2   \[baseline\]"
has "dry run: last cell" "$T/dry.txt" "^c08  environment=new NCCL_NTHREADS=512 channels=4$"
has "dry run: tied axis sets both variables" "$T/dry.txt" "NCCL_MIN_NCHANNELS=4 NCCL_MAX_NCHANNELS=4"
has "dry run: environment variables" "$T/dry.txt" "env: FAKE_LIB=new LD_LIBRARY_PATH=/nonexistent/new-nccl/lib"
[ -e "$T/dry" ] && bad "dry run created the output folder" || ok
$A sweep run --recipe $B/../cli.yaml --dry-run -o $T/dry2 >"$T/dry2.txt" 2>&1
has "dry run: default workload is aorta train" "$T/dry2.txt" "run: .*aorta train -q --override training.output_dir=$T/dry2/cells/c01/t1/out"

expect "--trials and --timeout replace the recipe's" 0 "^sweep 'fake-cli': 2 cells x 5 trials = 10 runs, timeout 7 s each" -- $A sweep run --recipe $S/cli.yaml --trials 5 --timeout 7 --dry-run -o $T/dry3

# --- a full sweep: ranking and the noise rule -------------------------------------
# A trial's step is the step every command states (analyze's summary: the
# mean over ranks of each rank's mean kept step).  fake_train.sh plants a
# step of s ms on 10 steps laid end to end; the last window ends at its
# last range (0.8 s after its start), so over the 8 steps kept (skip_steps
# 2) the step is (7 s + 0.8 s) / 8 = 0.975 s: 16.5 ms -> 16.0875 ms.
W=$T/nccl
FAKE_NOISY_CELL=c02 $A sweep run --recipe $S/nccl.yaml -o $W >"$T/run.txt" 2>&1; rc=$?
[ "$rc" = 0 ] && ok || bad "sweep run exit $rc: $(tail -n 3 "$T/run.txt")"
has "progress per trial" "$T/run.txt" "^aorta: \[1/25\] c01 t1 \(old NCCL_NTHREADS=256 channels=2\): ok"
has "matrix.json schema" "$W/matrix.json" '"schema": "aorta.sweep/2"'
has "matrix.json overhead" "$W/matrix.json" '"overhead_pct": [0-9]'
has "fastest first: c07 at 0.975 x 16.5 ms" "$W/matrix.md" "^\| 1 \| c07 \| new NCCL_NTHREADS=512 channels=2 \| 16.08[78] \| 15.990–16.185 \|"
has "c08 second" "$W/matrix.md" "^\| 2 \| c08 \|"
has "512 threads better on the old library" "$W/matrix.md" "^\| 3 \| c03 \| .* \| 17.550 \| .* \| 3/3 \| better \(-10.0 %\)"
has "noisy cell is similar, not better" "$W/matrix.md" "^\| 7 \| c02 \| .* \| 18.574 \| 16.624–20.524 \| 21.0 \(noisy\) \| 3/3 \| similar"
has "baseline last" "$W/matrix.md" "^\| 8 \| c01 \| .* \| 19.500 \| .* \| baseline \|"
has "busbw table in matrix.md" "$W/matrix.md" "^\| cell \| all_reduce 4194304 B \|$"
has "best is c07" "$W/matrix.md" "^\*\*Best:\*\* c07"
has "confound: no drift" "$W/matrix.md" "Confound check:.*19.500 ms.*no drift"
has "environments side by side: similar for the noisy one" "$W/matrix.md" "^\| NCCL_NTHREADS=256 channels=4 \| old \(c02\) \| new \(c06\) \| 18.574 → 18.086 .* \| similar \|"
has "environments side by side: better" "$W/matrix.md" "^\| NCCL_NTHREADS=512 channels=2 \| old \(c03\) \| new \(c07\) \| .* \| better \|"
has "env snapshot per environment" "$W/env/new.json" '"env.LD_LIBRARY_PATH": "/nonexistent/new-nccl/lib"'
has "env snapshot schema" "$W/env/old.json" '"schema": "aorta.env/1"'
has "per-trial result" "$W/cells/c05/t2/result.json" '"step_ms": 18.135000'
has "per-trial busbw" "$W/cells/c05/t2/result.json" '"type": "all_reduce"'
[ -f "$W/cells/c05/t2/log.txt" ] && ok || bad "no per-trial log"
# recipe.resolved.yaml replays the same cells
$A sweep run --recipe "$W/recipe.resolved.yaml" --dry-run -o $T/replay >"$T/replay.txt" 2>&1; rc=$?
[ "$rc" = 0 ] && ok || bad "recipe.resolved.yaml does not load: $(tail -n 2 "$T/replay.txt")"
if diff <(grep -E '^c[0-9]+  ' "$T/dry.txt") <(grep -E '^c[0-9]+  ' "$T/replay.txt") >/dev/null; then ok; else bad "recipe.resolved.yaml expands to other cells"; fi
if diff <(grep -E 'env:' "$T/dry.txt") <(grep -E 'env:' "$T/replay.txt") >/dev/null; then ok; else bad "recipe.resolved.yaml sets other variables"; fi
expect "a second run into the same folder is refused" 2 "already holds a sweep: --resume continues it" -- $A sweep run --recipe $S/nccl.yaml -o $W
expect "resume of a finished sweep runs nothing" 0 "resuming: 25 of 25 runs already done" -- $A sweep run --recipe $S/nccl.yaml -o $W --resume
expect "resume with other cells is refused" 2 "cells differ" -- $A sweep run --recipe $S/slow.yaml -o $W --resume

# --- the report -------------------------------------------------------------------
expect "sweep report" 0 "wrote $W/report/index.html" -- $A sweep report $W
has "report: best cell" "$W/report/index.html" "Best: c07"
has "report: noisy row" "$W/report/index.html" "<tr class=noisy>"
has "report: environments side by side" "$W/report/index.html" "Environments side by side"
has "report: snapshot" "$W/report/index.html" "environment snapshot: new"
if [ -f "$(dirname "$A")/libaorta-plot.so" ]; then
	n=$(grep -o 'data:image/png;base64' "$W/report/index.html" | wc -l)
	[ "$n" -ge 6 ] && ok || bad "report embeds $n charts, expected 6 (rank, 3 heatmaps, busbw, gantt)"
fi
expect "report of a folder that is not a sweep" 3 "not a sweep folder" -- $A sweep report $T
expect "report of two sweeps" 0 "wrote $T/two/index.html" -- $A sweep report $W $W -o $T/two
n=$(grep -c '<h2>Sweep ' "$T/two/index.html"); [ "$n" = 2 ] && ok || bad "two sweeps give $n sections"

# --- confound: a drift is flagged -------------------------------------------------
FAKE_DRIFT=1 $A sweep run --recipe $S/drift.yaml -o $T/drift >"$T/drift.txt" 2>&1
has "drift flagged" "$T/drift/matrix.md" "DRIFT: outside the baseline's first range"
has "drift on stdout" "$T/drift.txt" "^confound: the baseline re-run measured 21.450 ms \\(\\+10.0 %\\): DRIFT" 
grep -q '"drift": false' "$T/drift/matrix.json" && bad "matrix.json says no drift" || ok

# --- failures, timeout, crash, no data: recorded, and the sweep goes on -----------
t0=$(date +%s)
$A sweep run --recipe $S/modes.yaml -o $T/modes >"$T/modes.txt" 2>&1; rc=$?
t1=$(date +%s)
[ "$rc" = 0 ] && ok || bad "modes sweep exit $rc"
[ $((t1 - t0)) -lt 20 ] && ok || bad "the hanging cell was not stopped by the 2 s timeout ($((t1 - t0)) s)"
has "ok cell ranked" "$T/modes/matrix.md" "^\| 1 \| c01 \| FAKE_MODE=ok \|"
has "failed cell" "$T/modes/matrix.md" "^\| c02 \| 1 \| failed \| exit status 3 \|"
has "timeout cell" "$T/modes/matrix.md" "^\| c03 \| 1 \| timeout \| still running after 2.0 s"
has "crashed cell" "$T/modes/matrix.md" "^\| c04 \| 1 \| crashed \| .*signal 11"
has "no-data cell" "$T/modes/matrix.md" "^\| c05 \| 1 \| no_data \| the workload exited 0 but its output cannot be analysed"
has "failure log kept" "$T/modes/cells/c02/t1/log.txt" "fake: failing on purpose"
pid=$(cat "$T/modes/cells/c03/t1/out/child.pid" 2>/dev/null)
sleep 0.2 # an orphan killed with its group may wait a moment for its reaper
st=$(ps -o stat= -p "$pid" 2>/dev/null)
if [ -n "$pid" ] && { [ -z "$st" ] || [ "${st#Z}" != "$st" ]; }; then ok; else bad "the hanging cell's child ($pid) survived its process group kill"; fi

# --- Ctrl-C keeps finished trials; --resume runs only the rest ---------------------
R=$T/slow
export FAKE_COUNTER=$T/counter
: >"$FAKE_COUNTER"
$A sweep run --recipe $S/slow.yaml -o $R >"$T/slow1.txt" 2>&1 &
pid=$!
for _ in $(seq 100); do
	[ "$(find "$R/cells" -name result.json 2>/dev/null | wc -l)" -ge 2 ] && break
	sleep 0.1
done
kill -INT "$pid"
wait "$pid"; rc=$?
[ "$rc" = 130 ] && ok || bad "interrupted sweep exit $rc, expected 130"
n1=$(find "$R/cells" -name result.json | wc -l)
[ "$n1" -ge 2 ] && [ "$n1" -lt 9 ] && ok || bad "$n1 trials done after Ctrl-C"
has "interrupted: message" "$T/slow1.txt" "interrupted: .* add --resume to continue"
has "interrupted: matrix written" "$R/matrix.json" '"schema": "aorta.sweep/2"'
$A sweep run --recipe $S/slow.yaml -o $R --resume >"$T/slow2.txt" 2>&1; rc=$?
[ "$rc" = 0 ] && ok || bad "resume exit $rc"
has "resume says how many were done" "$T/slow2.txt" "resuming: $n1 of 9 runs already done"
n2=$(find "$R/cells" -name result.json | wc -l)
[ "$n2" = 9 ] && ok || bad "$n2 trials after resume, expected 9 (8 + confound)"
uniq_runs=$(sort -u "$FAKE_COUNTER" | wc -l); all_runs=$(wc -l <"$FAKE_COUNTER")
[ "$uniq_runs" = 9 ] && ok || bad "$uniq_runs distinct trials ran, expected 9"
[ $((all_runs - uniq_runs)) -le 1 ] && ok || bad "resume re-ran finished trials ($all_runs runs for 9 trials)"
unset FAKE_COUNTER

# --- the command after -- and its placeholders -------------------------------------
$A sweep run --recipe $S/cli.yaml -o $T/cli -- sh -c 'echo {NCCL_NTHREADS} {cell} {trial} > {out}/args.txt; exec tests/cli/sweep/fake_train.sh' >/dev/null 2>&1; rc=$?
[ "$rc" = 0 ] && ok || bad "sweep with -- COMMAND exit $rc"
has "placeholders substituted" "$T/cli/cells/c02/t1/out/args.txt" "^512 c02 1$"
has "resolved recipe keeps the command" "$T/cli/recipe.resolved.yaml" 'command: \["sh", "-c", "echo \{NCCL_NTHREADS\}'

# --- Kineto traces from a shell command: the same figures as aorta analyze ----------
expect "kineto sweep" 0 "" -- $A sweep run --recipe $S/kineto.yaml -o $T/kin -q
has "kineto: analyze's step (the mean of the steps 1.000 and 0.610 ms)" "$T/kin/cells/c01/t1/result.json" '"step_ms": 0.805000'
has "kineto: overlap" "$T/kin/cells/c01/t1/result.json" '"overlap_pct": 20.000'
# busbw is the join's (transfer time, the same on both ranks): what analyze --json says
$A analyze -q --json "$T/kin_a.json" "$T/kin/cells/c01/t1/out"
want=$(python3 -c "import json,sys; print('%.4f' % json.load(open(sys.argv[1]))['ranks'][0]['collectives'][0]['busbw_gbps'])" "$T/kin_a.json")
has "kineto: all-reduce busbw = analyze's ($want GB/s)" "$T/kin/cells/c01/t1/result.json" "\"busbw_gbps\": $want"

# --- aorta env --------------------------------------------------------------------
expect "env lists the NCCL version" 0 "^nccl.version " -- $A env
expect "env --field of a set variable" 0 "^value-42$" -- env NCCL_DEBUG=value-42 $A env --field env.NCCL_DEBUG
expect "env --field of an unset variable" 1 "" -- env -u NCCL_ALGO $A env --field env.NCCL_ALGO
expect "env --field unknown" 2 "unknown field 'bogus'" -- $A env --field bogus
expect "env --json" 0 "" -- $A env --json "$T/env.json"
has "env --json schema" "$T/env.json" '"schema": "aorta.env/1"'
has "env --json driver key" "$T/env.json" '"driver.version": '

echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
