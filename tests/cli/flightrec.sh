#!/usr/bin/env bash
# Flight Recorder dumps: every planted fault of tests/data/flightrec (made by
# PyTorch's gloo backend, make_dumps.py) is named as its plan.json says
# (group, op, sequence number, missing or mismatched ranks, culprits), from
# the pickle and the JSON dumps alike; the four real hangs of
# ../shared/data/flight-recorder/nvrx name the ranks the faults were
# injected on (nvidia-resiliency-ext's fault_injection.log: 12 and 14, 9 and
# 14, 9 and 14, 10 and 15); the verdict leads the output; a saved analysis
# reads back to the same bytes; dumps given with Kineto traces of the same
# job are joined by group and sequence number; dumps and traces mixed in one
# folder are each read as what they are.
. "$(dirname "$0")/lib.sh"
D=tests/data/flightrec
S=${AORTA_SHARED_DATA:-../shared/data}/flight-recorder/nvrx
skipped=0

check() { # name, analysis JSON, plan.json
	python3 - "$2" "$3" <<'PY' && ok || bad "$1: the diagnosis is not the planted fault's"
import json, sys
fr = json.load(open(sys.argv[1]))["flight_recorder"]
x = json.load(open(sys.argv[2]))["expect"]
def fail(msg):
    print(f"    {msg}\n    verdict: {fr['verdict']}"); sys.exit(1)
if fr["kind"] != x["kind"]:
    fail(f"kind {fr['kind']}, expected {x['kind']}")
if x["kind"] == "healthy":
    if any(g["first_divergent"] for g in fr["groups"]) or fr["culprits"]:
        fail("a healthy run has a divergence")
    sys.exit(0)
g = fr["groups"][0]  # the verdict's group comes first
d = g["first_divergent"]
names = x["pg_name"] if isinstance(x["pg_name"], list) else [x["pg_name"]]
if g["pg_name"] not in names: fail(f"group {g['pg_name']}, expected {names}")
if "ranks" in x and g["ranks"] != x["ranks"]: fail(f"group ranks {g['ranks']}, expected {x['ranks']}")
if "op" in x:
    ops = x["op"] if isinstance(x["op"], list) else [x["op"]]
    if d["profiling_name"].split(":")[-1].split(" ")[0] not in ops: fail(f"op {d['profiling_name']}, expected {ops}")
if "collective_seq_id" in x and d["collective_seq_id"] != x["collective_seq_id"]:
    fail(f"#{d['collective_seq_id']}, expected #{x['collective_seq_id']}")
if d["mismatch"] != x["mismatch"]: fail(f"mismatch {d['mismatch']}, expected {x['mismatch']}")
for k in ("missing_ranks", "mismatched_ranks"):
    if k in x and d[k] != x[k]: fail(f"{k} {d[k]}, expected {x[k]}")
if "missing_ranks_any_of" in x and d["missing_ranks"] not in x["missing_ranks_any_of"]:
    fail(f"missing_ranks {d['missing_ranks']}, expected one of {x['missing_ranks_any_of']}")
if "culprits" in x and [c["rank"] for c in fr["culprits"]] != x["culprits"]:
    fail(f"culprits {[c['rank'] for c in fr['culprits']]}, expected {x['culprits']}")
if "ranks_without_dump" in x and fr["ranks_without_dump"] != x["ranks_without_dump"]:
    fail(f"ranks_without_dump {fr['ranks_without_dump']}, expected {x['ranks_without_dump']}")
PY
}

# --- 1. the planted faults, pickle and JSON ------------------------------------------
# (FR_EXTRA=DIR adds another output folder of make_dumps.py, e.g. NCCL dumps made on a GPU machine)
for sc in "$D"/*/ ${FR_EXTRA:+"$FR_EXTRA"/*/}; do
	sc=${sc%/}
	for f in pickle json; do
		[ -d "$sc/$f" ] || continue
		if "$A" analyze -q --json "$T/fr.json" "$sc/$f" 2>"$T/err"; then
			check "$(basename "$sc")/$f" "$T/fr.json" "$sc/plan.json"
		else
			bad "$(basename "$sc")/$f: analyze failed: $(tail -2 "$T/err")"
		fi
	done
done
# the pickle and the JSON dumps of one hang give one diagnosis
"$A" analyze -q --json "$T/p.json" "$D/skip/pickle" 2>/dev/null
"$A" analyze -q --json "$T/j.json" "$D/skip/json" 2>/dev/null
python3 - "$T/p.json" "$T/j.json" <<'PY' && ok || bad "pickle and JSON dumps of one hang differ in their diagnosis"
import json, sys
a, b = (json.load(open(p))["flight_recorder"] for p in sys.argv[1:3])
strip = lambda fr: [{k: v for k, v in g.items() if k != "last_completed_by_rank"} for g in fr["groups"]]
assert a["verdict"].split(" (make_dumps")[0] == b["verdict"].split(" (make_dumps")[0], (a["verdict"], b["verdict"])
assert strip(a) == strip(b)
PY

# --- 2. the output: the verdict leads the summary; the rank comes from the file name's end ---------
out=$("$A" analyze "$D/skip/pickle" 2>/dev/null)
first=$(printf '%s\n' "$out" | sed -n 4p)
case "$first" in "   hang       hang in group 4 (DATA_PARALLEL, ranks 1, 3): all_gather #4 - rank 3 never called it"*) ok ;;
	*) bad "the hang verdict is not the summary's first line: $first" ;; esac
printf '%s\n' "$out" | sed -n 3p | grep -q '^== summary: 4 Flight Recorder dumps' && ok ||
	bad "the summary does not lead: $(printf '%s\n' "$out" | sed -n 3p)"
expect "host names with digits in the file names: ranks from the number ending them" 0 "^verdict: hang in group 4 .*rank 3 never" -- \
	"$A" analyze "$D/hostnames/pickle"
expect "a dump given alone is read (one rank)" 0 "Flight Recorder, 1 dump" -- "$A" analyze "$D/healthy/pickle/fr_trace_rank_0"
expect "a killed rank is named" 0 "rank 2 left no dump" -- "$A" analyze "$D/killed/json"
expect "a wrapped ring still aligns" 0 "4 rings wrapped.*" -- "$A" analyze "$D/wrap/pickle"
expect "a healthy run says so" 0 "verdict: no hang" -- "$A" analyze "$D/healthy/json"
# two dumps of one rank: an error naming both
mkdir -p "$T/dup"
cp "$D/skip/pickle/fr_trace_rank_1" "$T/dup/a_1"
cp "$D/skip/pickle/fr_trace_rank_1" "$T/dup/b_1"
expect "two dumps of one rank are refused" 3 "second Flight Recorder dump of rank 1" -- "$A" analyze -q --json "$T/x.json" "$T/dup"
[ ! -e "$T/x.json" ] && ok || bad "a refused run left its JSON"

# --- 3. the saved analysis reads back to the same bytes; report's hang section --------
"$A" analyze -q --json "$T/s1.json" "$D/killed/pickle" 2>/dev/null
"$A" analyze -q --json "$T/s2.json" "$T/s1.json" 2>/dev/null
cmp -s "$T/s1.json" "$T/s2.json" && ok || bad "a saved flight_recorder analysis does not read back to the same bytes"
has "schema 4" "$T/s1.json" '"schema": "aorta.analysis/4"'
python3 - "$T/s1.json" <<'PY' && ok || bad "the flight_recorder object lacks the issue's keys"
import json, sys
fr = json.load(open(sys.argv[1]))["flight_recorder"]
assert set(["verdict", "groups"]) <= set(fr)
for g in fr["groups"]:
    assert set(["pg_id", "pg_name", "ranks", "first_divergent", "last_completed_by_rank"]) <= set(g), g.keys()
    assert isinstance(g["pg_id"], str)
    d = g["first_divergent"]
    if d is not None:
        assert set(["collective_seq_id", "p2p_seq_id", "profiling_name", "missing_ranks", "mismatch",
                    "ranks_behind"]) <= set(d)
        assert d["mismatch"] in ("missing", "size", "dtype", "op", "state", None)
PY
# a hand-damaged saved analysis: the reader names the field
sed 's/"mismatch": "missing"/"mismatch": "bogus"/' "$T/s1.json" >"$T/bad.json"
expect "a bad mismatch in a saved analysis is named" 3 "flight_recorder.groups\[0\].first_divergent.mismatch" -- \
	"$A" analyze -q --json "$T/y.json" "$T/bad.json"
expect "report: a hang section on the page" 0 "" -- "$A" report --no-plots --log-dir "$D/skip/pickle" --label hang -o "$T/rep"
has "report page names the hang" "$T/rep/index.html" "Why it hung"
has "report page carries the verdict" "$T/rep/index.html" "all_gather #4 - rank 3 never called it"

# --- 4. with Kineto traces of the same job: joined by group and sequence number ---------
python3 tests/data/flightrec/kineto_of.py "$D/skip/json" "$T/traces" 2>"$T/err" || bad "kineto_of.py: $(tail -2 "$T/err")"
mkdir -p "$T/both"; cp "$D"/skip/json/* "$T/both/"; cp "$T"/traces/* "$T/both/"
expect "dumps and traces in one folder: both read, joined" 0 "traces of the same job: 4 ranks joined .* [1-9][0-9]* agree" -- \
	"$A" analyze "$T/both"
"$A" analyze -q --json "$T/both.json" "$T/both" 2>/dev/null
python3 - "$T/both.json" <<'PY' && ok || bad "the join of dumps and traces does not agree"
import json, sys
d = json.load(open(sys.argv[1]))
j = d["flight_recorder"]["trace_join"]
assert len(d["ranks"]) == 4 and j["ranks"] == 4, j
assert j["compared"] > 0 and j["agree"] == j["compared"] and j["disagree"] == 0, j
assert j["dumps_only"] == 0 and j["traces_only"] == 0, j
PY
# a trace whose collective is another op than the dump says: a disagreement named
python3 tests/data/flightrec/kineto_of.py "$D/skip/json" "$T/traces2" --wrong 1 2>/dev/null
mkdir -p "$T/both2"; cp "$D"/skip/json/* "$T/both2/"; cp "$T"/traces2/* "$T/both2/"
expect "a disagreement between the accounts is named" 0 "first disagreement: rank 1, group" -- "$A" analyze "$T/both2"

# --- 5. the real hangs ----------------------------------------------------------------------
if [ -d "$S" ]; then
	for h in gpu_error_1st:12,14 gpu_error_2nd:9,14 lock_gil_1st:9,14 lock_gil_2nd:10,15; do
		name=${h%%:*} want=${h#*:}
		"$A" analyze -q --json "$T/h.json" "$S/$name" 2>/dev/null || { bad "$name: analyze failed"; continue; }
		python3 - "$T/h.json" "$want" <<'PY' && ok || bad "$name: the culprits are not the injected fault ranks $want"
import json, sys
fr = json.load(open(sys.argv[1]))["flight_recorder"]
want = [int(x) for x in sys.argv[2].split(",")]
got = [c["rank"] for c in fr["culprits"]]
assert got == want, (got, want, fr["verdict"])
v = fr["verdict"]
assert v.startswith("hang in group "), v
# the verdict names the fault ranks (missing, behind, or said after it)
assert all(f"rank {r}" in v or f"ranks {r}" in v or f" {r} " in v or f" {r};" in v for r in want), v
PY
	done
else
	echo "  skipped: $S not found (the real Flight Recorder dumps)"; skipped=$((skipped + 1))
fi
echo "$pass passed, $fail failed, $skipped skipped"
[ "$fail" -eq 0 ]
