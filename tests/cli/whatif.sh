#!/usr/bin/env bash
# The what-if (overlap/whatif.c) through the CLI: across_ranks.what_if
# survives a saved analysis read back (byte for byte), the replay of every
# real straggler fixture (tests/data/straggler) reproduces its measured step
# within 3 %, the planted late rank leads by_rank where a rank was slowed
# every step, compare and report show it, and the device pairs of
# tests/data/whatif (a base run and a slowed run, truth.json) are checked:
# the replay within 3 % of each run's measured step, and the step predicted
# from the slowed run's fix within max(1.5 ms, 5 %) of the base run.
. "$(dirname "$0")/lib.sh"
# round trip: analyze's JSON read back and written again is the same bytes
for d in tests/data/straggler/ddp_const_r1 tests/data/tiny; do
	"$A" analyze -q --json "$T/a.json" "$d" 2>/dev/null || { bad "analyze $d failed"; continue; }
	"$A" analyze -q --json "$T/b.json" "$T/a.json" 2>/dev/null || { bad "analyze of the saved $d failed"; continue; }
	if cmp -s <(jq 'del(.tool, .inputs, .ranks[].path)' "$T/a.json") <(jq 'del(.tool, .inputs, .ranks[].path)' "$T/b.json"); then
		ok; else bad "the saved analysis of $d does not read back to the same JSON"; fi
done
for d in tests/data/straggler/*/; do
	d=${d%/}
	"$A" analyze -q --json "$T/s.json" "$d" 2>/dev/null || { bad "analyze $d failed"; continue; }
	jq -e '.across_ranks.what_if.ok and .across_ranks.what_if.reproduced and
	       .across_ranks.what_if.replay_error_pct <= 3' "$T/s.json" >/dev/null &&
		ok || bad "$d: replay not within 3 %: $(jq -c '.across_ranks.what_if | {replay_error_pct, reason}' "$T/s.json")"
	case $d in *_const_r1)
		jq -e '.across_ranks.what_if.by_rank | max_by(.gain_ms) | .rank == 1' "$T/s.json" >/dev/null &&
			ok || bad "$d: rank 1 (slowed every step) is not the best fix";;
	esac
done
# --no-what-if: the what-if says it was skipped (terminal and JSON), the
# other figures are those of a run with it, and compare shows the other side
d=tests/data/straggler/ddp_const_r1
"$A" analyze --no-what-if --json "$T/n.json" "$d" >"$T/n.txt" 2>/dev/null || bad "analyze --no-what-if $d failed"
grep -q "not replayed: skipped (--no-what-if)" "$T/n.txt" && ok || bad "--no-what-if: the summary does not say it skipped"
jq -e '.across_ranks.what_if == {"ok": false, "reason": "skipped (--no-what-if)"}' "$T/n.json" >/dev/null &&
	ok || bad "--no-what-if: what_if is $(jq -c '.across_ranks.what_if' "$T/n.json")"
"$A" analyze -q --json "$T/y.json" "$d" 2>/dev/null
cmp -s <(jq -S 'del(.tool, .inputs, .across_ranks.what_if, .diagnosis)' "$T/n.json") \
	<(jq -S 'del(.tool, .inputs, .across_ranks.what_if, .diagnosis)' "$T/y.json") &&
	ok || bad "--no-what-if changes a figure besides the what-if's"
"$A" compare "$T/y.json" "$T/n.json" 2>/dev/null | grep -q "rank 1 .* n/a" && ok ||
	bad "compare against a run without the what-if shows no 'n/a' side"
# compare: the what-ifs side by side
"$A" compare --json "$T/c.json" tests/data/straggler/ddp_none tests/data/straggler/ddp_const_r1 >"$T/c.txt" 2>/dev/null
grep -q "what-if (gain if fixed" "$T/c.txt" && ok || bad "compare shows no what-if"
jq -e '.comparisons[0].what_if.this.best_fix == "rank 1" and (.comparisons[0].what_if.this.slowdown > .comparisons[0].what_if.baseline.slowdown)' \
	"$T/c.json" >/dev/null && ok || bad "compare's what_if: $(jq -c '.comparisons[0].what_if.this' "$T/c.json")"
# report: a chart of the gains per run (where charts are drawn at all)
"$A" report --log-dir tests/data/straggler/ddp_const_r1 --label slowed --skip-steps 0 -o "$T/rep" >/dev/null 2>&1 ||
	bad "report on ddp_const_r1 failed"
if [ -f "$T/rep/slowed_timeline.png" ]; then
	[ -f "$T/rep/slowed_whatif.png" ] && grep -q "What-if: the step if fixed" "$T/rep/index.html" && ok ||
		bad "report draws no what-if chart"
fi
# device pairs (tests/data/whatif/CASE/{base,slowed}/ and truth.json, made on 4 H200s or 2: target
# {"rank": R} or {"group": ..., "ranks": [...]}): the replay of both runs within 3 %, and the slowed
# run's fix of the target within max(1.5 ms, 5 %) of the base run's step as the engine measures one
# (per profiled step the mean over ranks of the CUDA-event steps, then the mean; for a --same-run
# pair both base blocks'), as bench/whatif/validate.sh checks it.  A miss must be reported, not
# hidden: either the target's ideal is unknown (pp_stage1_gpu_fwd: both ranks of stage 1 carry the
# slowdown, no peer of the stage runs its ops; the fix carries ideal_unknown and the verdict says so)
# or its gain is within 2 standard errors of its per-step gains (gain_sem_ms: host-bound FSDP2
# pairs, fsdp_host_bwd_r3 and fsdp_host_bwd_r1, whose hosts' speed moves from step to step and run
# to run by more than the fix), and the summary says one run cannot tell it from noise.
if [ -d tests/data/whatif ]; then
	for c in tests/data/whatif/*/; do
		c=${c%/}
		n=$(basename "$c")
		[ -f "$c/truth.json" ] && [ -d "$c/base" ] && [ -d "$c/slowed" ] || continue
		"$A" analyze -q --json "$T/base.json" "$c/base" 2>/dev/null &&
		"$A" analyze --summary --json "$T/slow.json" "$c/slowed" >"$T/slow.txt" 2>/dev/null || { bad "analyze $c failed"; continue; }
		python3 - "$c/truth.json" "$T/base.json" "$T/slow.json" "$T/slow.txt" >"$T/pair.log" 2>&1 <<'PY'
import json, statistics, sys
truth, base, slow = (json.load(open(p)) for p in sys.argv[1:4])
summary = open(sys.argv[4]).read()
wb, ws = base["across_ranks"]["what_if"], slow["across_ranks"]["what_if"]
for name, w in (("base", wb), ("slowed", ws)):
    if not w.get("ok") or w["replay_error_pct"] > 3:
        print(f"REPLAY {name}: {w.get('replay_error_pct')} % off ({w.get('reason')})")
def mean_ms(m):
    steps = m.get("profiled_steps") or sorted(int(s) for s in m["by_rank"][0]["steps"])
    return statistics.mean(statistics.mean(r["steps"][str(s)] for r in m["by_rank"]) for s in steps)
measured = statistics.mean(mean_ms(truth["measured"][r]) for r in ("base", "base_after") if r in truth["measured"])
t = truth["target"]
fixes = ws.get("by_rank", []) + ws.get("by_group", [])
if "fix" in t:  # a fix by its name (the stage balance)
    want = [f for f in fixes if f.get("fix") == t["fix"]]
elif "rank" in t:
    want = [f for f in fixes if f.get("rank") == t["rank"]]
else:
    ranks = ",".join(str(r) for r in sorted(t.get("ranks", [])))
    want = [f for f in fixes if f.get("ranks") == ranks]
if not want:
    print(f"PREDICT no fix for the target {t}")
else:
    f = want[0]
    pred = f["step_ms_if_fixed"]
    if abs(pred - measured) > max(1.5, 0.05 * measured):
        print(f"PREDICT fixing {f['fix']}: {pred:.2f} ms, the base run measured {measured:.2f} ms")
        if f.get("ideal_unknown") and "ideal is unknown" in ws.get("verdict", ""):
            print(f"UNKNOWN {f['fix']}: {ws['verdict']}")
        elif f.get("gain_sem_ms") and f["gain_ms"] <= 2 * f["gain_sem_ms"] and \
                f"{f['fix']}: " in summary and "one run cannot tell it from noise" in summary:
            print(f"NOISE {f['fix']}: gain {f['gain_ms']:.2f} ms, standard error {f['gain_sem_ms']:.2f} ms")
PY
		if grep -q '^REPLAY' "$T/pair.log"; then bad "$n: $(cat "$T/pair.log")"; else ok; fi
		if grep -q '^PREDICT' "$T/pair.log"; then
			if grep -qE '^(UNKNOWN|NOISE)' "$T/pair.log"; then
				ok; echo "  miss reported $n: $(grep -E '^(PREDICT|UNKNOWN|NOISE)' "$T/pair.log" | tr '\n' ' ')"
			else
				bad "$n: $(grep '^PREDICT' "$T/pair.log"), and the engine does not say why"
			fi
		else
			ok
		fi
	done
fi
# a stream wait the trace records (tests/fixtures/kineto/stream_wait, made by
# its make.py; docs/metrics.md "What-if"): per rank k_a on stream 7 from 10
# us (100 us on rank 0, 300 on rank 1), k_e 10-300 and k_d 300-312 on
# stream 9, k_c (50 us) on stream 8 waits for k_a's event and starts 2 us
# after k_a ends: rank 0's window 10-312 (k_d ends last) = 302 us, rank 1's
# 10-362 = 352 us, step 327 us; 2 recorded dependencies, none guessed.
# Fixing rank 1 (k_a -> 100 us): k_c 112-162, window 302 us: step 302, a
# gain of 25 us.  Without the cuda_sync record the 20 us guess takes k_d
# (ended at 312, when rank 1's k_c started) for what k_c waited for: fixed,
# k_c stays at 312-362 and the fix gains nothing
W=tests/fixtures/kineto/stream_wait
"$A" analyze -q --json "$T/sw.json" "$W" 2>/dev/null || bad "analyze $W failed"
jq -e '.across_ranks.what_if | .measured_step_ms == 0.327 and .replay_step_ms == 0.327 and .deps_recorded == 2 and
	.deps_guessed == 0 and ([.by_rank[] | select(.rank == 1) | .step_ms_if_fixed == 0.302 and .gain_ms == 0.025] == [true])' \
	"$T/sw.json" >/dev/null && ok || bad "recorded wait: $(jq -c '.across_ranks.what_if | {replay_step_ms, deps_recorded, deps_guessed, by_rank}' "$T/sw.json")"
# no guess on a stream whose waits are recorded: k_f, added on rank 0's stream 8
# (launched at 6.5 us, run 312-317, 150 us after k_c ends, when k_d ends),
# is not guessed to wait for k_d (without the records: 3 guesses)
mkdir -p "$T/kf" "$T/kfns"
cp "$W/rank1.json" "$T/kf/"
jq '.traceEvents += [{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 1, "ts": 6.5,
	"dur": 0.4, "args": {"correlation": 108}}, {"ph": "X", "cat": "kernel", "name": "k_f", "pid": 0, "tid": 8,
	"ts": 312, "dur": 5, "args": {"stream": 8, "correlation": 108, "device": 0}}]' "$W/rank0.json" >"$T/kf/rank0.json"
for r in 0 1; do jq '.traceEvents |= map(select(.cat != "cuda_sync"))' "$T/kf/rank$r.json" >"$T/kfns/rank$r.json"; done
"$A" analyze -q --json "$T/kf.json" "$T/kf" 2>/dev/null && "$A" analyze -q --json "$T/kfns.json" "$T/kfns" 2>/dev/null ||
	bad "analyze with k_f failed"
jq -e '.across_ranks.what_if | .deps_recorded == 2 and .deps_guessed == 0' "$T/kf.json" >/dev/null &&
	jq -e '.across_ranks.what_if | .deps_recorded == 0 and .deps_guessed == 3' "$T/kfns.json" >/dev/null && ok ||
	bad "a recorded stream is guessed on: $(jq -c '.across_ranks.what_if | {deps_recorded, deps_guessed}' "$T/kf.json" "$T/kfns.json")"
mkdir -p "$T/nosync"
for r in 0 1; do jq '.traceEvents |= map(select(.cat != "cuda_sync"))' "$W/rank$r.json" >"$T/nosync/rank$r.json"; done
"$A" analyze -q --json "$T/ns.json" "$T/nosync" 2>/dev/null || bad "analyze without cuda_sync failed"
jq -e '.across_ranks.what_if | .replay_step_ms == 0.327 and .deps_recorded == 0 and .deps_guessed == 2 and
	([.by_rank[] | select(.rank == 1) | .gain_ms == 0] == [true])' \
	"$T/ns.json" >/dev/null && ok || bad "guessed wait: $(jq -c '.across_ranks.what_if | {deps_recorded, deps_guessed, by_rank}' "$T/ns.json")"
# compare prints each run's pooled-ideal slowdown beside its slowdown, the
# figures its JSON and each run's own analysis give
P=tests/data/whatif/ddp_gpu_fwd_r1
$A compare --json "$T/cmp.json" "$P/base" "$P/slowed" >"$T/cmp.txt" 2>/dev/null
$A analyze -q --json "$T/pb.json" "$P/base" 2>/dev/null
$A analyze -q --json "$T/ps.json" "$P/slowed" 2>/dev/null
want=$(jq -rn --slurpfile b "$T/pb.json" --slurpfile s "$T/ps.json" \
	'[$b[0], $s[0]] | map(.across_ranks.what_if.slowdown_pooled * 1000 | round / 1000 | tostring) | join(" ")')
got=$(sed -n 's/^ *slowdown, pooled ideal *\([0-9.]*\) *\([0-9.]*\)$/\1 \2/p' "$T/cmp.txt")
jcmp=$(jq -r '.comparisons[0].what_if | [.baseline.slowdown_pooled, .this.slowdown_pooled] | map(. * 1000 | round / 1000 | tostring) | join(" ")' "$T/cmp.json" 2>/dev/null)
[ -n "$want" ] && [ "$(echo "$got" | awk '{printf "%g %g", $1, $2}')" = "$(echo "$want" | awk '{printf "%g %g", $1, $2}')" ] &&
	[ "$jcmp" = "$want" ] && ok || bad "compare's pooled slowdown '$got' (JSON '$jcmp'), the analyses give '$want'"

# a real two-GPU DDP job profiled with CUDA sync events and cudaEventRecord's
# records (bench/whatif/sync_events_trace.py OUT 2, torch 2.11 / CUDA 13, two
# H200s: tests/data/kineto_sync/ddp_2rank): 225 stream waits a rank, 75 on
# an event recorded on a stream nothing was launched on before; the other
# 150 a rank (bench/whatif/pair_waits.py, an independent pairing) are the what-if's
# recorded dependencies, nothing is guessed on the streams they wait on, and
# the replay gives back every step
$A analyze -q --json "$T/ddp2.json" tests/data/kineto_sync/ddp_2rank 2>/dev/null
ref=$(python3 bench/whatif/pair_waits.py tests/data/kineto_sync/ddp_2rank/*.json.gz | sed -n 's/^total \([0-9]*\) paired$/\1/p')
jq -e --argjson ref "${ref:-0}" '.across_ranks.what_if | .ok and .deps_recorded == $ref and $ref == 300 and
	.deps_guessed == 0 and .reproduced and .replay_error_pct < 0.5' "$T/ddp2.json" >/dev/null && ok ||
	bad "recorded DDP waits (the reference pairs ${ref:-none}): $(jq -c '.across_ranks.what_if | {ok, deps_recorded, deps_guessed, reproduced, replay_error_pct}' "$T/ddp2.json")"
echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
