#!/usr/bin/env bash
# aorta analyze under mpirun: the same analysis JSON, byte for byte, as one
# process, on 2 and 4 processes, for the bundled and the straggler rank sets,
# Flight Recorder dumps (tests/data/flightrec, the nvrx hang when present)
# and a generated 24-rank FSDP set (bench/analyze_scale/gen.py, 3 nodes with
# their own clocks); a bad file ends every process with the file named;
# --trace-out is refused under MPI.  Skipped without mpirun or the plug-in.
. "$(dirname "$0")/lib.sh"
if ! command -v mpirun >/dev/null 2>&1 || [ ! -f "$(dirname "$A")/libaorta-mpi.so" ]; then
	echo "  skipped: no mpirun or no $(dirname "$A")/libaorta-mpi.so"; echo "0 passed, 0 failed, 1 skipped"; exit 0
fi
M=(mpirun --oversubscribe)
[ "$(id -u)" -ne 0 ] || M+=(--allow-run-as-root)
export OMPI_MCA_btl_vader_single_copy_mechanism=none
python3 bench/analyze_scale/gen.py "$T/syn24" 24 --steps 2 --layers 4
sets=(data/h200x4/fsdp2_bs8 data/h200x4/aorta_ddp/torch_profiler "$T/syn24")
for d in tests/data/straggler/*/; do sets+=("${d%/}"); done
# Flight Recorder dumps travel parsed: the same diagnosis as one process
sets+=(tests/data/flightrec/skip/pickle tests/data/flightrec/killed/json)
[ -d "${AORTA_SHARED_DATA:-../shared/data}/flight-recorder/nvrx/lock_gil_1st" ] &&
	sets+=("${AORTA_SHARED_DATA:-../shared/data}/flight-recorder/nvrx/lock_gil_1st")
for d in "${sets[@]}"; do
	"$A" analyze -q --json "$T/one.json" "$d" 2>/dev/null || { bad "one process on $d failed"; continue; }
	for np in 2 4; do
		if timeout 120 "${M[@]}" -np $np "$A" analyze -q --json "$T/mpi.json" "$d" >"$T/mpi.log" 2>&1 &&
		   cmp -s "$T/one.json" "$T/mpi.json"; then ok; else
			bad "mpirun -np $np on $d: JSON differs from one process or failed: $(tail -2 "$T/mpi.log")"; fi
	done
done
# the summary printed by process 0 only, once
out=$(timeout 120 "${M[@]}" -np 2 "$A" analyze data/h200x4/fsdp2_bs8 2>/dev/null)
n=$(printf '%s\n' "$out" | grep -c '^aorta analyze: 4 ranks')
[ "$n" = 1 ] && ok || bad "the summary was printed $n times under mpirun -np 2"
# a bad file on some process: every process ends, the error names the file
mkdir -p "$T/badset"; cp data/h200x4/fsdp2_bs8/*.gz "$T/badset/"; printf '{"traceEvents": [ {"ph": "X", ' > "$T/badset/rank9.json"
expect "a truncated rank file ends the MPI job with exit 3 naming it" 3 "rank9.json" -- \
	timeout 120 "${M[@]}" -np 2 "$A" analyze -q --json "$T/x.json" "$T/badset/rank9.json" data/h200x4/fsdp2_bs8
[ ! -e "$T/x.json" ] && ok || bad "a failed MPI analysis left a JSON file"
expect "--trace-out is refused under MPI" 2 "trace-out needs every rank" -- \
	timeout 60 "${M[@]}" -np 2 "$A" analyze -q --trace-out "$T/t.json" data/h200x4/fsdp2_bs8
echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
