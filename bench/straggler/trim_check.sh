#!/usr/bin/env bash
# trim_check.sh FULL_DIR TRIMMED_DIR - the analysis JSON of every case is the
# same on the full traces and on the trimmed fixtures (paths aside).  A case
# is a folder TRIM_DEPTH levels below TRIMMED_DIR (default 1: CASE/; the
# what-if fixtures use 2: CASE/RUN/, bench/whatif/trim_check.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
A=${AORTA_BIN:-./build/aorta}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
rc=0
depth=${TRIM_DEPTH:-1}
while IFS= read -r c; do
	n=${c#"$2"/}
	"$A" analyze -q --json "$T/full.json" "$1/$n"
	"$A" analyze -q --json "$T/trim.json" "$c"
	if python3 - "$T/full.json" "$T/trim.json" <<'PY'
import json, sys
def strip(o):
    if isinstance(o, dict):
        return {k: strip(v) for k, v in o.items() if k not in ("path", "inputs", "host_events")}
    if isinstance(o, list):
        return [strip(v) for v in o]
    return o
a, b = (strip(json.load(open(p))) for p in sys.argv[1:3])
sys.exit(0 if a == b else 1)
PY
	then echo "$n: same"; else echo "$n: DIFFERENT"; rc=1; fi
done < <(find "$2" -mindepth "$depth" -maxdepth "$depth" -type d | sort)
exit $rc
