#!/usr/bin/env bash
# check_sizes.sh [LIMIT_FILE [LIMIT_FN]] - no source file under src/ over
# LIMIT_FILE lines (default 1500) and no function over LIMIT_FN lines
# (default 120), so that every file has one job and every function one
# step.  A function is a body that opens with "{" at column 0 and closes
# with "}" at column 0 (the house style of src/), counted from the
# brace to the brace.  Prints each one over and "N files, N functions
# over"; exit 1 when any is.  tests/run.sh (make test) runs it.
set -u
cd "$(dirname "$0")/.."
LF=${1:-1500}
LN=${2:-120}
files=$(find src -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) | sort)
nf=0
for f in $files; do
	n=$(wc -l <"$f")
	if [ "$n" -gt "$LF" ]; then
		echo "$f: $n lines (over $LF)"
		nf=$((nf + 1))
	fi
done
fns=$(awk -v LIM="$LN" '
	FNR == 1 { inb = 0; prev = "" }
	/^\{/ { if (!inb) { inb = 1; start = FNR; name = prev } }
	inb && /^\}/ { len = FNR - start + 1; if (len > LIM) printf "%s:%d: %s: %d lines (over %d)\n", FILENAME, start, name, len, LIM; inb = 0 }
	!inb && /^[A-Za-z_].*\(/ { prev = $0 }
' $files)
[ -n "$fns" ] && echo "$fns"
nn=$(printf '%s' "$fns" | grep -c . || true)
echo "$nf files, $nn functions over"
[ "$nf" = 0 ] && [ "$nn" = 0 ]
