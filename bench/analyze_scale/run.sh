#!/usr/bin/env bash
# run.sh [RANKS...] - how `aorta analyze` scales with the number of ranks
# (bench/RESULTS.md, "analyze at scale").  For each rank count (default 8 64
# 256 1024 4096) a synthetic FSDP rank set (gen.py: 3 steps, 8 layers, 1,537
# GPU kernels and 72 collectives per rank, one planted late rank, a clock
# offset per node of 8 ranks) is generated once into bench/data/analyze_scale/
# (git-ignored), then analysed by one process and, where Open MPI and the MPI
# plug-in are built, by mpirun -np 2, 4 and 8 on this machine.  Prints
# wall time, peak memory (the largest process: GNU time's maximum resident
# set over the process and its waited-for children), the join's time
# (AORTA_TIMING=1) and whether every run's --json equals the one-process run's.
#   AORTA_BIN=...   the binary (default build/aorta)
set -euo pipefail
cd "$(dirname "$0")/../.."
A=${AORTA_BIN:-./build/aorta}
D=bench/data/analyze_scale
OUT=bench/out/analyze_scale
mkdir -p "$D" "$OUT"
RANKS=${*:-8 64 256 1024 4096}
mpiflags=(--oversubscribe)
[ "$(id -u)" -ne 0 ] || mpiflags+=(--allow-run-as-root)
printf '%-7s %-16s %10s %14s %12s %s\n' ranks processes "wall (s)" "peak RSS (MB)" "join (ms)" "json = 1 process"
for n in $RANKS; do
	[ -f "$D/r$n/rank$((n - 1)).json.gz" ] || python3 bench/analyze_scale/gen.py "$D/r$n" "$n"
	AORTA_TIMING=1 /usr/bin/time -f "%e %M" -o "$OUT/t" "$A" analyze -q --json "$OUT/one_$n.json" "$D/r$n" 2>"$OUT/one_$n.log"
	read -r wall kb < "$OUT/t"
	join=$(sed -n 's/.*collective calls: \([0-9.]*\) ms/\1/p' "$OUT/one_$n.log")
	printf '%-7s %-16s %10s %14d %12s %s\n' "$n" 1 "$wall" $((kb / 1024)) "$join" "-"
	if command -v mpirun >/dev/null 2>&1 && [ -f "$(dirname "$A")/libaorta-mpi.so" ]; then
		for np in 2 4 8; do
			AORTA_TIMING=1 OMPI_MCA_btl_vader_single_copy_mechanism=none /usr/bin/time -f "%e %M" -o "$OUT/t" \
				mpirun "${mpiflags[@]}" -np $np "$A" analyze -q --json "$OUT/mpi_$n.json" "$D/r$n" 2>"$OUT/mpi_$n.log"
			read -r wall kb < "$OUT/t"
			join=$(sed -n 's/.*collective calls: \([0-9.]*\) ms/\1/p' "$OUT/mpi_$n.log")
			same=no; cmp -s "$OUT/one_$n.json" "$OUT/mpi_$n.json" && same=yes
			printf '%-7s %-16s %10s %14d %12s %s\n' "$n" "mpirun -np $np" "$wall" $((kb / 1024)) "$join" "$same"
		done
	fi
done
