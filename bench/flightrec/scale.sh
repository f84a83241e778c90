#!/usr/bin/env bash
# aorta analyze on synthetic Flight Recorder hangs of growing jobs
# (bench/flightrec/gen.py: ranks x ring entries, pickle, one rank missing
# from its DATA_PARALLEL all_reduce): wall time and peak memory, one thread
# and all cores, and the verdict names the missing rank.
#   bash bench/flightrec/scale.sh [RANKS...]     (default 64 512 2048; ENTRIES=500)
set -euo pipefail
cd "$(dirname "$0")/../.."
A=${AORTA_BIN:-./build/aorta}
ENTRIES=${ENTRIES:-500}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
echo "| ranks | entries per rank | dumps (MB) | threads | wall s | peak RSS MB | verdict names rank 5 |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for n in "${@:-64 512 2048}"; do
	for nn in $n; do
		python3 bench/flightrec/gen.py "$T/d$nn" "$nn" --entries "$ENTRIES"
		mb=$(du -sm "$T/d$nn" | cut -f1)
		for j in 1 0; do
			/usr/bin/time -f '%e %M' -o "$T/time" "$A" analyze -q -j "$j" --json "$T/a.json" "$T/d$nn" 2>/dev/null
			read -r wall kb <"$T/time"
			ok=$(python3 -c "import json,sys; v=json.load(open('$T/a.json'))['flight_recorder']['verdict']; print('yes' if 'rank 5 never called' in v else 'NO: '+v[:80])")
			echo "| $nn | $ENTRIES | $mb | $([ $j = 0 ] && nproc || echo 1) | $wall | $((kb / 1024)) | $ok |"
		done
		rm -rf "$T/d$nn"
	done
done
