#!/usr/bin/env bash
# CLI tests of aorta sdma: help, usage errors (exit 2, the option named),
# an unwritable --json (exit 5) and, on any machine, the GPU-less paths:
# no plug-in and no visible GPU both exit 4 with a clear message before any
# GPU work and leave no JSON behind.  Where a GPU and the plug-in are
# present, the machine checks (a device that does not exist, sizes that do
# not fit) and one small verified run with --json are tested too.
. "$(dirname "$0")/lib.sh"

expect "sdma -h" 0 "^usage: aorta sdma" -- $A sdma -h
expect "sdma -h lists --engine" 0 "--engine E" -- $A sdma -h
expect "sdma --bogus" 2 "unknown option '--bogus'" -- $A sdma --bogus
expect "sdma positional" 2 "unexpected argument 'extra'" -- $A sdma extra
expect "sdma bad direction" 2 "--direction 'sideways': expected d2h, h2d, d2d or p2p" -- $A sdma --direction sideways
expect "sdma bad engine" 2 "--engine 'dma': expected copy or kernel" -- $A sdma --engine dma
expect "sdma non-integer size" 2 "integer" -- $A sdma --matrix-size big
expect "sdma zero copy" 2 "--copy-mb 0: expected 1\.\." -- $A sdma --copy-mb 0
expect "sdma huge copy" 2 "--copy-mb 2000000: expected 1\.\." -- $A sdma --copy-mb 2000000
expect "sdma negative size" 2 "--matrix-size -5: expected 1\.\." -- $A sdma --matrix-size -5
expect "sdma zero iterations" 2 "--iterations 0" -- $A sdma --iterations 0
expect "sdma negative cold" 2 "--cold-iters -1" -- $A sdma --cold-iters -1
expect "sdma negative device" 2 "--device -1" -- $A sdma --device -1
expect "sdma zero samples" 2 "--gemm-samples 0" -- $A sdma --gemm-samples 0
expect "sdma unwritable --json" 5 "cannot create" -- $A sdma -q --json /nonexistent-dir/x.json

# no plug-in: exit 4, says why, writes nothing
AORTA_GPU_LIB=/nonexistent/libaorta-gpu.so expect "sdma without the plug-in" 4 \
	"cannot load the GPU code.*aorta sdma needs it" -- $A sdma --json "$T/noplugin.json"
[ ! -e "$T/noplugin.json" ] && ok || bad "sdma without the plug-in left $T/noplugin.json"
# no visible GPU (CUDA_VISIBLE_DEVICES empty hides every device; on a
# machine without the plug-in the loader's message comes instead)
CUDA_VISIBLE_DEVICES= expect "sdma without a GPU" 4 \
	"no GPU visible to this process|cannot load the GPU code" -- $A sdma --json "$T/nogpu.json"
[ ! -e "$T/nogpu.json" ] && ok || bad "sdma without a GPU left $T/nogpu.json"
CUDA_VISIBLE_DEVICES= expect "sdma p2p without a GPU" 4 "" -- $A sdma --direction p2p

# with a GPU and the plug-in: the machine checks and one small run
out=$($A sdma -q --device 99 2>&1); rc=$?
if [ "$rc" = 2 ]; then
	printf '%s' "$out" | grep -q -- "--device 99: no such device" && ok || bad "sdma --device 99: $out"
	expect "sdma too big for the GPU" 2 "GiB free of" -- $A sdma --matrix-size 65536 --copy-mb 1048576
	ngpu=$(printf '%s' "$out" | sed -nE 's/.*\(([0-9]+) visible.*/\1/p')
	if [ "${ngpu:-1}" = 1 ]; then
		expect "sdma p2p on one GPU" 2 "needs two GPUs" -- $A sdma --direction p2p
	fi
	expect "sdma small run" 0 "^SDMA overlap benchmark" -- $A sdma --matrix-size 256 --copy-mb 2 \
		--iterations 3 --cold-iters 1 --json "$T/run.json"
	python3 - "$T/run.json" <<'PY' && ok || bad "sdma --json contents"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "aorta.sdma/1"
assert d["config"]["copy_bytes"] == 2 * 1048576
assert d["verification"]["passed"] is True
assert d["sequential_avg_ms"] > 0 and d["overlapped_avg_ms"] > 0
assert len(d["iterations_ms"]["overlapped"]) == 4
PY
else
	echo "  (no GPU or no plug-in here: exit $rc; GPU cases skipped)"
fi

echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
