#!/usr/bin/env bash
# Public traces of other people's jobs (../shared/data, read in place; each
# set skipped with a message when absent):
#  - every set against the independent reference figures committed in
#    tests/data/public (bench/public_traces/reference.py; public_traces.py
#    says what is compared, within max(0.01 ms, 1 %));
#  - param's 8-rank DLRM, where the all-to-alls run as SendRecv kernels under
#    nccl:all_to_all: all 8 collectives matched with no --rules, no send/recv
#    of unknown peer, the what-if's verdict from the matched waiting, the
#    lateness a figure of the step's size, the one step said to be poorly
#    defined;
#  - two runs in one call (the same rank from two runs) refused with exit 2,
#    both files named and aorta compare pointed to.
. "$(dirname "$0")/lib.sh"
D=${AORTA_SHARED_DATA:-../shared/data}
out=$(python3 tests/cli/public_traces.py "$A" "$D" tests/data/public "$T" 2>&1)
printf '%s\n' "$out" | grep -v '^[0-9]* passed'
line=$(printf '%s\n' "$out" | tail -n 1)
p=$(echo "$line" | sed -nE 's/^([0-9]+) passed.*/\1/p'); f=$(echo "$line" | sed -nE 's/.* ([0-9]+) failed.*/\1/p')
s=$(echo "$line" | sed -nE 's/.* ([0-9]+) skipped.*/\1/p')
pass=$((pass + ${p:-0})); fail=$((fail + ${f:-1})); skipped=${s:-0}

DLRM=$D/public/param-dlrm-8rank
if [ -d "$DLRM" ]; then
	"$A" analyze --json "$T/dlrm.json" "$DLRM" >"$T/dlrm.txt" 2>"$T/dlrm.err" || bad "analyze of the DLRM set failed"
	jq -e '.across_ranks.matched_collectives == 8 and .across_ranks.unmatched_calls == 0 and
	       (.across_ranks.p2p_peer_unknown // 0) == 0 and
	       ([.ranks[].collectives[] | select(.type == "all_to_all") | .count] | add) == 40' "$T/dlrm.json" >/dev/null &&
		ok || bad "DLRM: $(jq -c '.across_ranks | {matched_collectives, unmatched_calls, p2p_peer_unknown}' "$T/dlrm.json")"
	! grep -q "peer unknown" "$T/dlrm.txt" && ok || bad "DLRM: send/recv of unknown peer said"
	# lateness: a time within the step, never an overflowed sum (was 5.7e12 ms)
	jq -e '[.ranks[].wait.lateness_ms | select(. != null) | (. >= 0 and . < 20)] | all' "$T/dlrm.json" >/dev/null &&
		ok || bad "DLRM lateness: $(jq -c '[.ranks[].wait.lateness_ms]' "$T/dlrm.json")"
	jq -e '.across_ranks.what_if.verdict | test("^fixing host launch gaps would make the step 2[0-9] % faster") and
	       test("poorly defined")' "$T/dlrm.json" >/dev/null &&
		ok || bad "DLRM verdict: $(jq -c '.across_ranks.what_if.verdict' "$T/dlrm.json")"
	grep -q "step windows: the ranks' mean windows differ by 7.50 ms" "$T/dlrm.txt" && ok ||
		bad "DLRM: the poorly defined step is not said beside the what-if's figures"
	jq -e '[.across_ranks.what_if.critical_path[] | select(.stream == 84) | .op] | all(startswith("all_") or
	       startswith("unmatched"))' "$T/dlrm.json" >/dev/null &&
		ok || bad "DLRM critical path on the NCCL stream: $(jq -c '.across_ranks.what_if.critical_path' "$T/dlrm.json")"
	# two runs in one call: the DLRM ranks and the same ranks of a later trace
	mkdir -p "$T/two"
	cp "$DLRM"/worker0_* "$DLRM"/worker1_* "$T/two/"
	python3 - "$DLRM" "$T/two" <<'PY'
import glob, gzip, json, sys
src = glob.glob(sys.argv[1] + "/worker1_*")[0]
d = json.load(gzip.open(src, "rt"))
for e in d["traceEvents"]:
    if isinstance(e.get("ts"), (int, float)):
        e["ts"] += 3600 * 1000000  # an hour later: another run of rank 1
json.dump(d, open(sys.argv[2] + "/later_rank1.json", "w"))
PY
	expect "two runs in one call" 2 "rank 1 is read twice, from '.*later_rank1.json' and '.*worker1_.*'|rank 1 is read twice, from '.*worker1_.*' and '.*later_rank1.json'" \
		-- "$A" analyze -q --json "$T/two.json" "$T/two"
	expect "two runs point to compare" 2 "aorta compare" -- "$A" analyze -q --json "$T/two.json" "$T/two"
	[ ! -e "$T/two.json" ] && ok || bad "a refused call wrote its JSON"
else
	echo "  SKIP DLRM checks: $DLRM not present (set AORTA_SHARED_DATA)"
	skipped=$((skipped + 1))
fi
echo "$pass passed, $fail failed, $skipped skipped"
[ "$fail" -eq 0 ]
