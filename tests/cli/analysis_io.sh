#!/usr/bin/env bash
# tests/cli/analysis_io.sh - the analysis model's codecs (src/analysis_io/):
#  - every bundled input's analysis JSON, read back and written again, is
#    the same file byte for byte (the writer and the reader walk one table,
#    and the writer checks the values the reader checks: tests/cli/hostile.sh
#    reads back every analysis it makes too);
#  - a saved analysis is checked for values, not only types: negative
#    times, exposed > communication, a late rank or straggler not among the
#    ranks, shares above 1, a rank twice, a step ending before it starts
#    are exit 3 naming the file, the byte offset of the value and its field.
. "$(dirname "$0")/lib.sh"

# round trip on the repository's inputs and, where present, the shared data
# (every bundled input: traces, the what-if fixtures, op tables, rocpd)
inputs="tests/data/tiny $(ls -d tests/data/straggler/*/ tests/data/whatif/*/base tests/data/whatif/*/slowed) tests/data/report/base
	tests/data/report/cand tests/data/rocpd/small_results.db $(ls tests/fixtures/optable/*.csv)"
for d in data/h200x4/fsdp2_bs8 data/h200x4/aorta_ddp; do [ -e "$d" ] && inputs="$inputs $d"; done
i=0
for in in $inputs; do
	i=$((i + 1))
	if ! $A analyze -q --json "$T/a$i.json" "$in" >/dev/null 2>"$T/e"; then bad "analyze $in: $(tail -n 1 "$T/e")"; continue; fi
	if ! $A analyze -q --json "$T/b$i.json" "$T/a$i.json" >/dev/null 2>"$T/e"; then bad "read back $in: $(tail -n 1 "$T/e")"; continue; fi
	# the inputs list names what was read (the first file), the rest is the same
	if diff <(jq 'del(.inputs)' "$T/a$i.json") <(jq 'del(.inputs)' "$T/b$i.json") >/dev/null &&
		cmp -s <(grep -v -A2 '"inputs"' "$T/a$i.json") <(grep -v -A2 '"inputs"' "$T/b$i.json"); then ok
	else bad "round trip of $in is not byte-identical: $(diff "$T/a$i.json" "$T/b$i.json" | head -n 4)"; fi
done

# value checks, on a two-rank run with a late rank
S="$T/s.json"
$A analyze -q --json "$S" tests/data/straggler/ddp_const_r1 >/dev/null 2>&1 || bad "analyze ddp_const_r1"
[ "$(jq '.across_ranks.late_rank' "$S")" = 1 ] && ok || bad "ddp_const_r1 has no late rank 1 to damage"
# bad NAME JQ PATTERN VALUE: exit 3 naming the field, and the byte offset points just past VALUE
damaged() {
	local name=$1 filter=$2 pat=$3 val=$4
	jq "$filter" "$S" >"$T/d.json"
	local out rc off
	out=$($A analyze -q --json "$T/out.json" "$T/d.json" 2>&1); rc=$?
	if [ $rc != 3 ] || ! printf '%s' "$out" | grep -qE -- "$pat"; then bad "$name: exit $rc: $out"; return; fi
	off=$(printf '%s' "$out" | sed -n 's/.*byte \([0-9]*\):.*/\1/p')
	if [ -n "$val" ] && [ "$(head -c "$off" "$T/d.json" | tail -c ${#val})" != "$val" ]; then
		bad "$name: byte $off is not just past '$val'"; return
	fi
	ok
}
damaged "negative step time" '.ranks[0].steps[1].compute_ms = -2.5' \
	"d.json': byte [0-9]+: ranks\[0\].steps\[1\].compute_ms: a negative time, -2.5 ms" "-2.5"
damaged "exposed above communication" '.ranks[1].total.exposed_comm_ms = .ranks[1].total.comm_ms + 1' \
	"ranks\[1\].total.exposed_comm_ms: exposed communication .* ms exceeds communication" ""
damaged "late rank not among the ranks" '.across_ranks.late_rank = 7' \
	"across_ranks.late_rank: rank 7 is not among the ranks" "7"
damaged "straggler not among the ranks" '.across_ranks.steps[0].straggler = 5' \
	"across_ranks.steps\[0\].straggler: rank 5 is not among the ranks" "5"
damaged "late share above 1" '.across_ranks.late_share = 1.25' \
	"across_ranks.late_share: expected a share in \[0, 1\], got 1.25" "1.25"
damaged "wait share above 1" '.ranks[0].collectives[0].wait_share = 3' \
	"ranks\[0\].collectives\[0\].wait_share: expected a share in \[0, 1\], got 3" "3"
damaged "a rank twice" '.ranks[1].rank = 0' "ranks: rank 0 appears twice" ""
damaged "a step ending before it starts" '.ranks[0].steps[0].end_ns = .ranks[0].steps[0].start_ns - 1' \
	"ranks\[0\].steps\[0\].end_ns: the step ends .* before it starts" ""
damaged "negative bandwidth" '.ranks[0].collectives[0].busbw_gbps = -1' \
	"ranks\[0\].collectives\[0\].busbw_gbps: expected a value >= 0" "-1"
damaged "a world size below -1" '.ranks[0].world_size = -3' \
	"ranks\[0\].world_size: expected an integer >= -1, got -3" "-3"
damaged "waiting caused by a rank that is not there" '.across_ranks.steps[0].caused_ms_by_rank = {"9": 1.0}' \
	"caused_ms_by_rank: '9' is not a rank of the analysis" ""
expect "broken JSON names the byte" 3 "byte [0-9]+: invalid analysis JSON" -- \
	sh -c "head -c 500 '$S' >'$T/cut.json'; $A analyze -q --json '$T/out.json' '$T/cut.json'"

echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
