#!/usr/bin/env bash
# tests/cli/summary.sh - the answer first (docs/cli.md "The summary"): on
# every bundled run and the public traces under ../shared/data, the first
# screen of `aorta analyze` (50 lines) holds the verdict, the fixes with
# their worth (ms and %) or that none clears the noise floor, and the reason
# (the late rank and why, or the rank rows); the summary stays within its
# line budget for any number of ranks; no gain is printed as a loss; the
# rank rows carry the JSON's figures (what_if.ranks[].host_launch_ms, the
# join's caused_ms); --summary prints it alone, -v extends the detail, -q
# keeps its meaning; compare leads with its own summary.
. "$(dirname "$0")/lib.sh"
S=${AORTA_SHARED_DATA:-../shared/data}

runs="data/h200x4/fsdp2_bs8 data/h200x4/aorta_ddp tests/data/tiny $(ls -d tests/data/straggler/*/ 2>/dev/null)"
for d in kineto/h200_torch2.11/ddp_4rank_12steps kineto/h200_torch2.11/fsdp2_4rank_6steps \
	kineto/h200_torch2.11/ddp_4rank_56steps_large public/param-dlrm-8rank whatif-artifact/AR; do
	if [ -e "$S/$d" ]; then runs="$runs $S/$d"; else echo "  note: $S/$d not found: not checked"; fi
done
i=0
for in in $runs; do
	i=$((i + 1))
	$A analyze --json "$T/a$i.json" "$in" >"$T/a$i.txt" 2>/dev/null || { bad "analyze $in failed"; continue; }
	head -n 50 "$T/a$i.txt" >"$T/s$i.txt"
	# the summary is first and within its budget
	sed -n 3p "$T/s$i.txt" | grep -q '^== summary: ' && ok || bad "$in: the summary is not first: $(sed -n 3p "$T/s$i.txt")"
	n=$(awk '/^== summary/ { p = 1; next } /^== detail/ { exit } p && NF' "$T/a$i.txt" | wc -l)
	[ "$n" -le 18 ] && ok || bad "$in: the summary takes $n lines (at most 18)"
	# on the first screen: the step and its noise floor, the verdict, the fixes' worth, the reason
	grep -qE '^   step       [0-9.]+ ms: ' "$T/s$i.txt" && ok || bad "$in: no step on the first screen"
	grep -qE '^   verdict    .+' "$T/s$i.txt" && ok || bad "$in: no verdict on the first screen"
	if jq -e '.across_ranks.what_if.ok == true' "$T/a$i.json" >/dev/null 2>&1; then
		grep -q 'noise floor [0-9.]* ms' "$T/s$i.txt" && ok || bad "$in: no noise floor on the first screen"
		grep -qE '^   fix 1      .+: [0-9.]+ ms a step \([0-9.]+ %\): ' "$T/s$i.txt" ||
			grep -q '^   fixes      none is worth more than the [0-9.]* ms noise floor' "$T/s$i.txt" && ok ||
			bad "$in: neither a fix with its worth nor 'none' on the first screen"
		# the fix the verdict names is fix 1 with the same gain
		best=$(jq -r '.across_ranks.what_if.verdict | capture("^fixing (?<f>.+) would make the step").f // empty' "$T/a$i.json")
		if [ -n "$best" ]; then
			grep -qF "   fix 1      $best: " "$T/s$i.txt" && ok || bad "$in: fix 1 is not the verdict's '$best'"
		fi
		# every rank row's host launch time and caused waiting are the JSON's figures
		out=$(python3 - "$T/a$i.txt" "$T/a$i.json" <<'PY'
import json, re, sys
txt = open(sys.argv[1]).read().split("\n")
d = json.load(open(sys.argv[2]))
host = {r["rank"]: r.get("host_launch_ms") for r in d["across_ranks"]["what_if"].get("ranks", [])}
caused = {r["rank"]: r.get("wait", {}).get("caused_ms") for r in d["ranks"]}
row = re.compile(r"^   (\d+) +(?:([\d.]+) ms(?: \([\d.]+-[\d.]+\))?|n/a) +(?:[\d.]+ ms|n/a) +(?:([\d.]+) ms \([\d.]+ %\)|n/a) ")
rows, bad = 0, []
for i, l in enumerate(txt):
    if l.startswith("   rank   host launch"):
        for m in map(row.match, txt[i + 1:]):
            if not m:
                break
            rows += 1
            r, h, c = int(m.group(1)), m.group(2), m.group(3)
            jh = host.get(r)
            if (h is None) != (jh is None) or (h is not None and "%.2f" % jh != h):
                bad.append("rank %d host launch %s, JSON %s" % (r, h, jh))
            jc = caused.get(r)
            if (c is None) != (jc is None) or (c is not None and "%.3f" % jc != c):
                bad.append("rank %d caused %s, JSON %s" % (r, c, jc))
        break
print("rows %d" % rows if not bad else "; ".join(bad))
PY
)
		case $out in "rows "[1-9]*) ok ;; *) bad "$in: rank rows: $out" ;; esac
	fi
	if jq -e '.across_ranks.late_rank != null' "$T/a$i.json" >/dev/null 2>&1; then
		r=$(jq -r '.across_ranks.late_rank' "$T/a$i.json")
		grep -qE "^   late rank  $r: caused [0-9.]+ % of the waiting" "$T/s$i.txt" && ok ||
			bad "$in: the late rank $r and why are not on the first screen"
	fi
	# never a loss: a gain within the noise floor is "nothing"
	grep -nE '\(gain -|gain -[0-9]|-[0-9.]+ ms a step' "$T/a$i.txt" && bad "$in: a negative gain is printed" || ok
done

# fsdp2_bs8, the case the summary was made for: the reason behind the what-if is printed
F=$T/s1.txt
has "fsdp2: host launch gaps worth 26.89 ms (27.9 %)" "$F" '^   fix 1      host launch gaps: 26\.89 ms a step \(27\.9 %\): every launch gap at the lower median'
has "fsdp2: rank 3 worth 6.09 ms, then rank 0 takes over" "$F" 'rank 3: 6\.09 ms a step \(6\.3 %\).*then rank 0 takes over \(the next-slowest\): fixing ranks 3 and 0 gains 27\.59 ms'
has "fsdp2: rank 3's host launch time beside rank 0's" "$F" '^   3      96\.55 ms .* late rank'
has "fsdp2: rank 0's host nearly as slow" "$F" '^   0      92\.71 ms .*takes over once rank 3 is fixed'
has "fsdp2: the ranks that set the ideal" "$F" 'ranks 2 and 1 set 46 % and 34 % of it'
has "fsdp2: what next for host launch gaps" "$F" '^   next       the host launches too slowly: capture the step in CUDA graphs'
# aorta_ddp: the fixes within the noise floor are nothing, not "-0.2 %"
has "aorta_ddp: ranks 0 and 1 gain nothing" "$T/a2.txt" '^   no gain    .*rank 1, rank 0: within the 0\.63 ms noise floor'
has "aorta_ddp: the detail says nothing too" "$T/a2.txt" 'rank 1 62\.86 ms \(nothing\), rank 0 62\.86 ms \(nothing\)'

# --summary alone; -v extends the detail; -q and the combination
$A analyze --summary data/h200x4/fsdp2_bs8 >"$T/sum.txt" 2>/dev/null
has "--summary: the summary" "$T/sum.txt" '^== summary: 4 ranks'
grep -q '^== detail\|^== rank\|^== what-if' "$T/sum.txt" && bad "--summary printed the detail" || ok
[ "$(wc -l <"$T/sum.txt")" -le 20 ] && ok || bad "--summary printed $(wc -l <"$T/sum.txt") lines"
expect "--summary with -v is a usage error" 2 "give one" -- $A analyze --summary -v data/h200x4/fsdp2_bs8
expect "-q still needs an output" 2 "nothing would come out" -- $A analyze -q data/h200x4/fsdp2_bs8
expect "-q prints nothing" 0 "" -- $A analyze -q --json "$T/q.json" data/h200x4/fsdp2_bs8
[ -s "$T/q.json" ] && [ -z "$($A analyze -q --json "$T/q.json" data/h200x4/fsdp2_bs8 2>&1)" ] && ok || bad "-q printed something"
if [ -d "$S/public/param-dlrm-8rank" ]; then
	$A analyze "$S/public/param-dlrm-8rank" >"$T/d.txt" 2>/dev/null
	has "8 ranks: four rank rows and the rest counted" "$T/d.txt" '^   \.\.\. 4 more ranks \(-v, --csv ranks\.csv, --json\)'
fi
if [ -d "$S/whatif-artifact/AR" ]; then # 16 ranks: a few sections by default, every one with -v
	$A analyze "$S/whatif-artifact/AR" >"$T/d.txt" 2>/dev/null
	$A analyze -v "$S/whatif-artifact/AR" >"$T/v.txt" 2>/dev/null
	nd=$(grep -c '^== rank ' "$T/d.txt"); nv=$(grep -c '^== rank ' "$T/v.txt")
	[ "$nv" = 16 ] && [ "$nd" -lt 16 ] && ok || bad "-v: $nv rank sections (expected 16), default $nd (expected fewer)"
	grep -q '^   step  *window ' "$T/v.txt" && ok || bad "-v has no per-step rows"
	grep -q '^   by rank:  .*\.\.\. (' "$T/v.txt" && bad "-v still cuts the what-if's fixes" || ok
fi

# the what-if's detail says how much of the ideal's gain rests on guessed
# dependencies, the JSON's guessed_ms and counts (a device pair without
# recorded stream waits); nothing where no dependency is guessed (AR)
G=tests/data/whatif/ddp_gpu_fwd_r1/slowed
$A analyze --json "$T/g.json" "$G" >"$T/g.txt" 2>/dev/null
want=$(jq -r '.across_ranks.what_if | "   dependencies: \(.deps_guessed) guessed from the times, \(.deps_recorded) recorded, \(.deps_table) from the op table, \(.deps_schedule) from the pipeline schedule; replayed without the guesses the ideal'"'"'s gain (\(.replay_step_ms - .ideal_step_ms | . * 1000 | round / 1000) ms) differs by \(.guessed_ms | . * 1000 | round / 1000) ms"' "$T/g.json")
grep -F "$want" "$T/g.txt" >/dev/null && ok || bad "$G: no dependencies line '$want': $(grep 'dependencies:' "$T/g.txt")"
if [ -e "$S/whatif-artifact/AR" ]; then
	for k in $(seq 1 "$i"); do
		grep -q "whatif-artifact/AR" "$T/a$k.txt" 2>/dev/null || continue
		grep -q '^   dependencies: ' "$T/a$k.txt" && bad "AR: a dependencies line, yet nothing is guessed" || ok
	done
fi

# compare leads with its summary; --summary keeps the JSON and the exit code
$A compare data/h200x4/fsdp2_bs8 data/h200x4/aorta_ddp >"$T/c.txt" 2>/dev/null
sed -n 2p "$T/c.txt" | grep -q '^== summary: data/h200x4/aorta_ddp against the baseline data/h200x4/fsdp2_bs8' && ok ||
	bad "compare: the summary is not first: $(sed -n 2p "$T/c.txt")"
has "compare: the step change against the noise floors" "$T/c.txt" '^   step       96\.27 -> 62\.76 ms a step \(-33\.51 ms, -34\.8 %\): faster; noise floors 0\.96 and 0\.63 ms: the change is beyond them'
has "compare: the fixes side by side" "$T/c.txt" '^   fixes      host launch gaps 26\.89 ms -> 7\.96 ms; rank 3 6\.09 ms -> 1\.03 ms; rank 2 nothing -> 2\.14 ms'
$A compare --summary --json "$T/c.json" data/h200x4/aorta_ddp data/h200x4/fsdp2_bs8 --fail-on-regression 5 >"$T/cs.txt" 2>&1
rc=$?
[ "$rc" = 1 ] && ok || bad "compare --summary --fail-on-regression: exit $rc, expected 1"
grep -q 'vs baseline' "$T/cs.txt" && bad "compare --summary printed the detail" || ok
jq -e '.comparisons[0].figures | length > 5' "$T/c.json" >/dev/null && ok || bad "compare --summary wrote no JSON figures"
echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
