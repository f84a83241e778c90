#!/usr/bin/env bash
# The what-if on the OSDI'25 What-if paper's measured traces (../shared/data/
# whatif-artifact/{AR,SE}: converted to Kineto with the artifact's streams,
# groups and send/recv peers and no host launches; the artifact's own
# result-<T>.json beside them), read in place; skipped with a message when
# absent.  Against the artifact's figures, read from result-<T>.json:
#  - the step the replay cannot explain (unexplained_step_share: measured
#    less the step replayed without unexplained delays) under 5 % of the
#    step on AR and SE, and every dependency of these launch-less traces
#    from the pipeline schedule, none guessed;
#  - the pooled ideal's S (slowdown_pooled: measured / the step replayed
#    with every op at the job's mean of its name and every transfer at its
#    type's median, the artifact's ideal) within 5 % of the artifact's S
#    with launch delays (blocking_slowdown x launch_slowdown: AR 1.986, SE
#    1.545; aorta AR 2.008, SE 1.542), and aorta's own S (the median of an
#    op's peers, never longer than it took: a fix's ideal) within 10 %;
#  - ST (the partition: the last stage's forward twice the others')
#    conclusive, its verdict the stage balance, its pooled S within 10 %
#    (1.125 against 1.201: the converted trace has the gradient clip as a
#    compute kernel whose time holds the world's wait, the artifact a
#    world all-reduce at its median; bench/RESULTS.md);
#  - AR's straggler named as the artifact names it: the largest gain of a
#    rank fix is rank 0's, of a group fix replica 0's or stage 0's (the
#    artifact's DP rank 0 and stage 0), of an op fix compute (the artifact's
#    backward-compute: aorta's op classes do not split forward and backward)
#    and the verdict names rank 0; on SE the largest stage gain is stage 1's
#    (the artifact's stage 1).
. "$(dirname "$0")/lib.sh"
D=${AORTA_SHARED_DATA:-../shared/data}/whatif-artifact
if [ ! -f "$D/result-AR.json" ] || [ ! -d "$D/AR" ] || [ ! -f "$D/result-SE.json" ] || [ ! -d "$D/SE" ] ||
	[ ! -f "$D/result-ST.json" ] || [ ! -d "$D/ST" ]; then
	echo "  skipped: $D lacks AR/, SE/ and ST/ with their result-<T>.json (the converted OSDI'25 What-if traces; ../shared/data/README.md)"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
fi
for t in AR SE; do
	if ! "$A" analyze -q -j 2 --json "$T/$t.json" "$D/$t" 2>"$T/$t.err"; then
		bad "$t: analyze failed: $(tail -n 2 "$T/$t.err")"
		continue
	fi
	W=".across_ranks.what_if"
	jq -e "$W.ok and $W.unexplained_step_share < 0.05" "$T/$t.json" >/dev/null && ok ||
		bad "$t: unexplained share of the step $(jq -c "$W.unexplained_step_share" "$T/$t.json"), expected < 0.05"
	jq -e "$W.deps_guessed == 0 and $W.deps_schedule > 0 and $W.launch_delays_out" "$T/$t.json" >/dev/null && ok ||
		bad "$t: dependencies $(jq -c "$W | {deps_guessed, deps_schedule, launch_delays_out}" "$T/$t.json")"
	jq -e --slurpfile r "$D/result-$t.json" \
		"($W.slowdown_pooled / (\$r[0].blocking_slowdown * \$r[0].launch_slowdown) - 1) | fabs < 0.05" "$T/$t.json" >/dev/null && ok ||
		bad "$t: pooled S $(jq -c "$W.slowdown_pooled" "$T/$t.json"), the artifact's $(jq -c '.blocking_slowdown * .launch_slowdown' "$D/result-$t.json") (band 5 %)"
	jq -e --slurpfile r "$D/result-$t.json" \
		"($W.slowdown / (\$r[0].blocking_slowdown * \$r[0].launch_slowdown) - 1) | fabs < 0.10" "$T/$t.json" >/dev/null && ok ||
		bad "$t: S $(jq -c "$W.slowdown" "$T/$t.json"), the artifact's $(jq -c '.blocking_slowdown * .launch_slowdown' "$D/result-$t.json") (band 10 %)"
done
if "$A" analyze -q -j 2 --json "$T/ST.json" "$D/ST" 2>"$T/ST.err"; then
	W=".across_ranks.what_if"
	jq -e "$W.unexplained_step_share < 0.05 and $W.launch_delays_out and ($W.verdict | startswith(\"fixing the stage balance \"))" \
		"$T/ST.json" >/dev/null && ok || bad "ST: $(jq -c "$W | {unexplained_step_share, verdict}" "$T/ST.json")"
	jq -e --slurpfile r "$D/result-ST.json" \
		"($W.slowdown_pooled / (\$r[0].blocking_slowdown * \$r[0].launch_slowdown) - 1) | fabs < 0.10" "$T/ST.json" >/dev/null && ok ||
		bad "ST: pooled S $(jq -c "$W.slowdown_pooled" "$T/ST.json"), the artifact's $(jq -c '.blocking_slowdown * .launch_slowdown' "$D/result-ST.json") (band 10 %)"
else
	bad "ST: analyze failed: $(tail -n 2 "$T/ST.err")"
fi
top() { # FILE LIST: the fix of LIST with the largest gain
	jq -r ".across_ranks.what_if.$2 | max_by(.gain_ms) | .fix" "$1"
}
if [ -f "$T/AR.json" ]; then
	[ "$(top "$T/AR.json" by_rank)" = "rank 0" ] && ok || bad "AR: top rank fix $(top "$T/AR.json" by_rank), expected rank 0"
	jq -e '[.across_ranks.what_if.by_group[] | select(.fix | startswith("stage"))] | max_by(.gain_ms) | .fix == "stage 0"' \
		"$T/AR.json" >/dev/null && ok || bad "AR: the largest stage gain is not stage 0's"
	jq -e '[.across_ranks.what_if.by_group[] | select(.fix | startswith("replica"))] | max_by(.gain_ms) | .fix == "replica 0"' \
		"$T/AR.json" >/dev/null && ok || bad "AR: the largest replica gain is not replica 0's"
	top "$T/AR.json" by_op | grep -q "compute" && ok || bad "AR: top op fix $(top "$T/AR.json" by_op), expected compute"
	jq -e '.across_ranks.what_if.verdict | startswith("fixing rank 0 ")' "$T/AR.json" >/dev/null && ok ||
		bad "AR: verdict $(jq -c '.across_ranks.what_if.verdict' "$T/AR.json")"
fi
if [ -f "$T/SE.json" ]; then
	jq -e '[.across_ranks.what_if.by_group[] | select(.fix | startswith("stage"))] | max_by(.gain_ms) | .fix == "stage 1"' \
		"$T/SE.json" >/dev/null && ok || bad "SE: the largest stage gain is not stage 1's"
fi
echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
