#!/usr/bin/env bash
# tests/cli/figure_names.sh - one figure, one name: on every bundled run,
# the JSON of analyze --json, report's summary.json, compare --json and
# (for trace runs) sweep's result.json and matrix.json are walked by
# tests/tools/figure_keys.py, which fails when a key has different values
# in two commands for the same collective or rank figure (report's
# busbw_gbps was kernel time averaged over rows while analyze's is the
# join's transfer time: 40.7 vs 154.8 GB/s for one all-gather).  The labels
# a person reads too: analyze's terminal tables, the report page's figures
# and ranks.csv's header, each label one figure over every run and each
# figure one label (report showed upstream's overlap_ratio, 0.0000, under
# aorta's "overlap ratio (overlap / compute)" beside 1.254 / 4.596 ms).
. "$(dirname "$0")/lib.sh"

runs="tests/data/tiny $(ls -d tests/data/straggler/*/) tests/data/report/base tests/data/report/cand"
for d in data/h200x4/fsdp2_bs8 data/h200x4/aorta_ddp ../shared/data/kineto/h200_torch2.11/ddp_4rank_12steps \
	../shared/data/kineto/h200_torch2.11/fsdp2_4rank_6steps; do
	[ -e "$d" ] && runs="$runs $d"
done
i=0
for in in $runs; do
	i=$((i + 1))
	$A analyze --skip-steps 0 --json "$T/a$i.json" --csv "$T/csv$i" "$in" >"$T/t$i.txt" 2>/dev/null || { bad "analyze $in"; continue; }
	$A report --log-dir "$in" --label run --skip-steps 0 --no-plots --output "$T/r$i" >/dev/null 2>&1 ||
		{ bad "report $in"; continue; }
	$A compare --skip-steps 0 --json "$T/c$i.json" "$in" "$in" >/dev/null 2>&1 || { bad "compare $in"; continue; }
	out=$(python3 tests/tools/figure_keys.py analyze="$T/a$i.json" report="$T/r$i/summary.json" \
		compare="$T/c$i.json" 2>&1) && ok || bad "$in: $out"
	# the labels a person reads: analyze's terminal, the report page, the CSV header (pooled over the runs)
	out=$(python3 tests/tools/figure_keys.py analyze="$T/a$i.json" report="$T/r$i/summary.json" terminal="$T/t$i.txt" \
		html="$T/r$i/index.html" csv="$T/csv$i" --labels-state="$T/labels.json" 2>&1) && ok || bad "$in: labels: $out"
done
# one figure per label, one label per figure, over every run
out=$(python3 tests/tools/figure_keys.py --labels-state="$T/labels.json" --labels-check 2>&1) && ok || bad "labels: $out"
n=$(printf '%s' "$out" | sed -n 's/^\([0-9]*\) labels.*/\1/p')
[ "${n:-0}" -ge 12 ] && ok || bad "labels: only ${n:-0} labels seen: $out"
# the label check fails where a figure hides under another's label (upstream's ratio 0.0000 under aorta's)
sed 's|overlapped comm / compute (ratio)</td><td>[0-9.]*|overlapped comm / compute (ratio)</td><td>0.0000|' "$T/r2/index.html" >"$T/bad.html"
out=$(python3 tests/tools/figure_keys.py analyze="$T/a2.json" html="$T/bad.html" 2>&1) &&
	bad "a ratio of 0.0000 under aorta's label passed" || printf '%s' "$out" | grep -q "is 0.0000, but overlapped comm / compute" && ok ||
	bad "the wrong ratio is not named: $out"

# sweep: a workload that writes a bundled run's traces
for in in tests/data/tiny data/h200x4/fsdp2_bs8; do
	[ -e "$in" ] || continue
	i=$((i + 1))
	cat >"$T/sw$i.yaml" <<YAML
name: figure-names
trials: 1
skip_steps: 0
confound: false
axes:
  NCCL_NTHREADS: [256]
workload:
  command: "cp $in/* {out}/"
YAML
	$A sweep run --recipe "$T/sw$i.yaml" -o "$T/sw$i" -q >/dev/null 2>&1 || { bad "sweep of $in"; continue; }
	$A analyze -q --skip-steps 0 --json "$T/a$i.json" "$in" >/dev/null 2>&1
	$A report --log-dir "$in" --label run --skip-steps 0 --no-plots --output "$T/r$i" >/dev/null 2>&1
	out=$(python3 tests/tools/figure_keys.py analyze="$T/a$i.json" report="$T/r$i/summary.json" \
		sweep-result="$T/sw$i/cells/c01/t1/result.json" sweep-matrix="$T/sw$i/matrix.json" 2>&1) &&
		ok || bad "sweep $in: $out"
	grep -q busbw_kernel_gbps "$T/sw$i/cells/c01/t1/result.json" && ok || bad "sweep result lacks busbw_kernel_gbps"
done

# the report's chart says which bandwidth it draws
$A report --log-dir data/h200x4/fsdp2_bs8 --label run --output "$T/rp" >/dev/null 2>&1
if [ -e "$T/rp/index.html" ] && grep -q "Collectives by message size" "$T/rp/index.html"; then
	grep -q "from the transfer time (last arrival to end) of the calls matched across ranks" "$T/rp/index.html" &&
		ok || bad "the collectives chart does not name its bandwidth"
fi

echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
