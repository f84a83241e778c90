#!/usr/bin/env bash
# CLI tests: -h on every command, exit codes and messages for bad usage and
# bad input, golden outputs on the tiny fixture, compare verdicts, and the
# shapes of --csv and --trace-out.  UPDATE_GOLDEN=1 rewrites the golden files.
. "$(dirname "$0")/lib.sh"

# golden NAME FILE: compare FILE with $G/NAME
golden() {
	if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then cp "$2" "$G/$1"; ok; return; fi
	if diff -u "$G/$1" "$2" >"$T/diff" 2>&1; then ok; else bad "golden $1 differs:"; head -n 30 "$T/diff"; fi
}

# --- help and usage -----------------------------------------------------------
expect "aorta -h" 0 "^usage: aorta COMMAND" -- $A -h
expect "aorta with no command" 2 "usage" -- $A
expect "unknown command" 2 "unknown command 'frobnicate'" -- $A frobnicate
cmds=$($A -h | awk '/^commands:/{f=1;next} f&&/^    [a-z]/{print $1}')
[ -n "$cmds" ] && ok || bad "aorta -h lists no commands"
for c in $cmds; do
	expect "$c -h" 0 "^usage: aorta $c" -- $A "$c" -h
	expect "$c --bogus" 2 "unknown option '--bogus'" -- $A "$c" --bogus
done
expect "analyze without input" 2 "needs at least one" -- $A analyze
expect "analyze bad integer" 2 "expects an integer" -- $A analyze --top x tests/data/tiny
expect "compare one input" 2 "at least two" -- $A compare tests/data/tiny

# --- bad input: exit 3, the file named ----------------------------------------
expect "missing file" 3 "'$T/nope.json': no such file" -- $A analyze -q --json "$T/q.json" "$T/nope.json"
: >"$T/empty.json"
expect "empty file" 3 "'$T/empty.json'" -- $A analyze -q --json "$T/q.json" "$T/empty.json"
printf 'hello, world\n' >"$T/garbage.txt"
expect "unknown format" 3 "'$T/garbage.txt'.*unknown trace format" -- $A analyze -q --json "$T/q.json" "$T/garbage.txt"
head -c 2000 tests/data/tiny/rank0.json >"$T/trunc.json"
expect "truncated JSON" 3 "'$T/trunc.json': byte [0-9]+" -- $A analyze -q --json "$T/q.json" "$T/trunc.json"
sed 's/"ts": 100,/"ts": 100,,/' tests/data/tiny/rank0.json >"$T/invalid.json"
expect "invalid JSON" 3 "'$T/invalid.json': .*byte [0-9]+" -- $A analyze -q --json "$T/q.json" "$T/invalid.json"
gzip -c tests/data/tiny/rank0.json >"$T/ok.json.gz"
head -c 600 "$T/ok.json.gz" >"$T/trunc.json.gz"
expect "truncated gzip" 3 "'$T/trunc.json.gz'" -- $A analyze -q --json "$T/q.json" "$T/trunc.json.gz"
python3 - "$T/ok.json.gz" "$T/corrupt.json.gz" <<'PY'
import sys
b = bytearray(open(sys.argv[1], 'rb').read())
for i in range(40, min(len(b) - 8, 400), 7):
    b[i] ^= 0x5a
open(sys.argv[2], 'wb').write(bytes(b))
PY
expect "corrupt gzip" 3 "'$T/corrupt.json.gz'" -- $A analyze -q --json "$T/q.json" "$T/corrupt.json.gz"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('create table t(x)'); c.commit()" "$T/wrong.sqlite"
expect "SQLite of the wrong schema" 3 "'$T/wrong.sqlite'.*SQLite" -- $A analyze -q --json "$T/q.json" "$T/wrong.sqlite"
printf '{"schemaVersion": 1, "traceEvents": []}' >"$T/noevents.json"
expect "trace with no events" 3 "'$T/noevents.json'" -- $A analyze -q --json "$T/q.json" "$T/noevents.json"
mkdir -p "$T/emptydir"
expect "directory without traces" 3 "no trace files" -- $A analyze -q --json "$T/q.json" "$T/emptydir"
sed 's/"dur": 300,/"dur": -5,/' tests/data/tiny/rank0.json >"$T/negdur.json"
expect "negative duration is skipped and counted" 0 "malformed events skipped" -- $A analyze -q --json "$T/q.json" "$T/negdur.json"
printf 'bogus ^x\n' >"$T/bad.rules"
expect "bad rules file" 3 "'$T/bad.rules': line 1: unknown kind" -- $A analyze -q --json "$T/q.json" --rules "$T/bad.rules" tests/data/tiny
expect "unwritable --json" 5 "cannot create" -- $A analyze -q --json /nonexistent-dir/x.json tests/data/tiny

# --- golden outputs on the tiny fixture ----------------------------------------
$A analyze --per-step tests/data/tiny >"$T/summary.txt" 2>/dev/null && ok || bad "analyze tiny"
golden tiny_summary.txt "$T/summary.txt"
$A analyze -q --json "$T/tiny.json" tests/data/tiny && ok || bad "analyze --json"
golden tiny_analysis.json "$T/tiny.json"
# figures worked out by hand in tests/data/make_tiny.py
python3 - "$T/tiny.json" <<'PY' && ok || bad "tiny figures"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "aorta.analysis/4"
r0, r1 = d["ranks"]
assert (r0["rank"], r1["rank"]) == (0, 1)
assert r1["total"]["overlapped_comm_ms"] == 0.2 and r0["total"]["overlapped_comm_ms"] == 0.0
assert r0["total"]["exposed_comm_ms"] == 0.4 and r1["total"]["comm_ms"] == 0.6
assert [s["step"] for s in r0["steps"]] == [5, 6]
assert r1["wait"]["wait_ms"] == 0.2 and r0["wait"]["wait_ms"] == 0.0
assert d["across_ranks"]["late_rank"] == 0
assert r0["collectives"][0]["bytes"] == 4194304 and r0["collectives"][0]["count"] == 2
# the 390 us gap before step 6 lies in step 5's window: step 5 is host-bound
assert r0["steps"][0]["host_bound"] is True and r0["steps"][1]["host_bound"] is False
PY

# --- a one-process multi-GPU Kineto trace: one timeline per device -------------------
expect "two-device trace: one rank per device" 0 "aorta analyze: 2 ranks" -- $A analyze tests/fixtures/tp/two-devices.trace.json
$A analyze -q --json "$T/two.json" tests/fixtures/tp/two-devices.trace.json >/dev/null 2>&1
python3 - "$T/two.json" <<'PY' && ok || bad "two-device trace: ranks/devices/events in the JSON"
import json, sys
r = json.load(open(sys.argv[1]))["ranks"]
assert [(x["rank"], x["device"], x["device_events"]) for x in r] == [(0, 0, 1), (1, 1, 4)], r
assert all("other_device_events" not in x for x in r), r
PY
$A analyze tests/fixtures/tp/two-devices.trace.json >"$T/two.txt" 2>&1
if grep -q "WARNING" "$T/two.txt"; then bad "two-device trace: a warning about mixed devices"; else ok; fi

# --- user rules reclassify copies: NCCL's copy-engine all-gathers as communication ----
printf 'all_gather ^Memcpy PtoP\n' >"$T/ce.rules"
$A analyze -q --json "$T/plain.json" tests/fixtures/tp/overlap/rank0.json >/dev/null 2>&1
$A analyze -q --rules "$T/ce.rules" --json "$T/ce.json" tests/fixtures/tp/overlap/rank0.json >/dev/null 2>&1
python3 - "$T/plain.json" "$T/ce.json" <<'PY' && ok || bad "rules on copies: the PtoP copy did not move from memcpy to comm"
import json, sys
a, b = (json.load(open(f))["ranks"][0]["total"] for f in sys.argv[1:3])
assert abs(a["memcpy_ms"] - 0.15) < 1e-9 and abs(b["memcpy_ms"]) < 1e-9, (a, b)
assert abs(b["comm_ms"] - a["comm_ms"] - 0.15) < 1e-9, (a, b)
PY

# --- csv and trace-out ------------------------------------------------------------
$A analyze -q --csv "$T/csv" --trace-out "$T/trace.json" tests/data/tiny && ok || bad "csv/trace-out"
for f in ranks steps streams collectives kernels; do
	[ -s "$T/csv/$f.csv" ] && ok || bad "missing $f.csv"
done
golden tiny_steps.csv "$T/csv/steps.csv"
python3 - "$T/trace.json" <<'PY' && ok || bad "trace-out is not a valid Chrome trace"
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
names = {e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
assert "exposed communication" in names and "waiting for peers" in names
waits = [e for e in ev if e.get("cat") == "aorta_wait"]
assert len(waits) == 2 and all(abs(e["dur"] - 100.0) < 1e-9 for e in waits), waits
assert sum(1 for e in ev if e.get("args", {}).get("aorta_kind") == "gemm") == 4
PY

# --- cross-rank truth: clock offsets, JSONL without a shared clock, merged trace ----
python3 - "$T/trace.json" <<'PY' && ok || bad "trace-out: a process per rank, streams named"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
procs = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
assert sorted(procs) == [0, 1] and procs[0].startswith("rank 0"), procs
streams = {(e["pid"], e["args"]["name"]) for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
assert (0, "stream 7") in streams and (1, "stream 19") in streams, streams
PY
printf '# rank offset_ns\n0 0\n1 100000\n' >"$T/offsets.txt"
$A analyze -q --clock-offsets "$T/offsets.txt" --json "$T/off.json" tests/data/tiny && ok || bad "--clock-offsets"
python3 - "$T/off.json" <<'PY' && ok || bad "--clock-offsets: method, offsets and the shifted waiting in the JSON"
import json, sys
d = json.load(open(sys.argv[1]))
c = d["across_ranks"]["clock"]
assert c["method"] == "file" and [o["offset_ms"] for o in c["offsets"]] == [0.0, 0.1], c
# rank 1 read 0.1 ms ahead: its calls move 0.1 ms earlier, and the collective ends
# no longer agree by 0.1 ms (the spread says so)
assert c["spread_ms"] == 0.1, c
PY
expect "clock options exclude each other" 2 "exclude each other" -- $A analyze -q --json "$T/x.json" --no-clock-align --clock-offsets "$T/offsets.txt" tests/data/tiny
printf '0 0\n1 soon\n' >"$T/badoff.txt"
expect "bad --clock-offsets file" 3 "badoff.txt': line 2: expected 'RANK OFFSET_NS'" -- $A analyze -q --json "$T/x.json" --clock-offsets "$T/badoff.txt" tests/data/tiny
$A analyze -q --no-clock-align --json "$T/noal.json" tests/data/tiny && ok || bad "--no-clock-align"
python3 -c "import json,sys; c=json.load(open(sys.argv[1]))['across_ranks']; assert c['clock']['method']=='none' and c['late_rank']==0, c" "$T/noal.json" && ok || bad "--no-clock-align: method none"
expect "JSONL: no wait figures, and why" 0 "no wait, late-rank or skew figures: aorta JSONL has no shared clock" -- $A analyze tests/data/report/base/rank_00_metrics.jsonl tests/data/report/base/rank_01_metrics.jsonl
$A analyze -q --json "$T/jl.json" tests/data/report/base/rank_00_metrics.jsonl tests/data/report/base/rank_01_metrics.jsonl && ok || bad "JSONL --json"
python3 -c "
import json,sys; d=json.load(open(sys.argv[1])); c=d['across_ranks']
assert c['late_rank'] is None and c['clocks_aligned'] is False and c['skew_p50_ms'] is None and 'JSONL' in c['no_cross_rank_reason'], c
assert all(r['wait']['wait_ms'] is None for r in d['ranks'])" "$T/jl.json" && ok || bad "JSONL: no cross-rank figures in the JSON"

# a synthetic FSDP run on 4 nodes (bench/analyze_scale/gen.py): each node's clock is
# planted (node x 1.37 ms mod 4 ms) and its ranks share a hostname; rank 15 is late
python3 bench/analyze_scale/gen.py "$T/nodes" 16 --per-node 4 --steps 2 --layers 2 >/dev/null 2>&1 \
	&& $A analyze -q --json "$T/nodes.json" "$T/nodes" && ok || bad "analyze of a 4-node synthetic run"
python3 - "$T/nodes.json" <<'PY' && ok || bad "per-node clock offsets recovered from the collectives"
import json, sys
d = json.load(open(sys.argv[1]))
c = d["across_ranks"]
assert c["clock"]["method"] == "collective-ends" and c["late_rank"] == 15, c
for o in c["clock"]["offsets"]:
    want = (o["rank"] // 4) * 1.37 % 4.0
    assert abs(o["offset_ms"] - want) < 0.002, (o, want)
    assert o["domain"] == (o["rank"] // 4) * 4, o
assert c["clock"]["spread_ms"] < 0.002, c["clock"]
PY
# 16+ ranks: sections for rank 0 and the ranks that caused waiting, the rest summarised
# (the waiting-caused table stops at the first rank that caused none, percentiles, hosts)
$A analyze "$T/nodes" >"$T/nodes.txt" 2>/dev/null && ok || bad "analyze summary of 16 ranks"
[ "$(grep -c '^== rank ' "$T/nodes.txt")" = 2 ] && ok || bad "16 ranks: expected sections for ranks 0 and 15 only: $(grep '^== rank ' "$T/nodes.txt" | tr '\n' ' ')"
has "16 ranks: the rest in tables" "$T/nodes.txt" "^\(16 ranks: sections for rank 0 and the rank that caused the most waiting"
has "16 ranks: waiting caused, most first" "$T/nodes.txt" "^   15 +[0-9.]+ ms +100.00%"
has "16 ranks: the others summarised" "$T/nodes.txt" "\.\.\. 15 more ranks caused no waiting"
has "16 ranks: percentiles across ranks" "$T/nodes.txt" "across the 16 ranks \(p50 / p90 / p99 / max\): waiting"
has "16 ranks: hosts, the late one first" "$T/nodes.txt" "^   host +ranks"
grep -A1 "^   host  " "$T/nodes.txt" | grep -q "node0003  *4 " && ok || bad "16 ranks: node0003 (rank 15's) is not the first host"

# --- compare ---------------------------------------------------------------------
expect "compare identical" 0 "similar" -- $A compare "$T/tiny.json" tests/data/tiny
mkdir -p "$T/slow"
for r in 0 1; do
	python3 - tests/data/tiny/rank$r.json "$T/slow/rank$r.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for e in d["traceEvents"]:
    if e.get("cat") == "kernel" and e["name"].startswith("nccl"):
        e["dur"] = e["dur"] * 2   # communication twice as slow
json.dump(d, open(sys.argv[2], "w"))
PY
done
expect "compare reports worse" 0 "comm_ms .* worse" -- $A compare tests/data/tiny "$T/slow"
expect "fail-on-regression names the figure and its size" 1 "regression in .*comm_ms worse by [+][0-9.]* ms" -- $A compare --fail-on-regression 5 tests/data/tiny "$T/slow"
$A compare --json "$T/cmp.json" tests/data/tiny "$T/slow" >/dev/null && ok || bad "compare --json"
python3 -c "
import json,sys; d=json.load(open(sys.argv[1])); assert d['schema']=='aorta.compare/1'
f={x['figure']:x for x in d['comparisons'][0]['figures']}; assert f['comm_ms']['verdict']=='worse', f['comm_ms']
" "$T/cmp.json" && ok || bad "compare JSON"

echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
