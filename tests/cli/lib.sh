# tests/cli/lib.sh - the harness the CLI test scripts share (sourced):
# A (the binary, $AORTA_BIN or ./build/aorta), G (golden files), T (a
# temporary folder removed at exit), the pass/fail counters, and
#   ok | bad MESSAGE
#   expect NAME RC PATTERN -- CMD...   exit code RC, output matching PATTERN
#   has NAME FILE PATTERN              FILE contains PATTERN
# A script ends with: echo "$pass passed, $fail failed, 0 skipped"; [ "$fail" -eq 0 ]
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
A=${AORTA_BIN:-./build/aorta}
G=tests/cli/golden
T=$(mktemp -d)
trap '[ -n "${KEEP_T:-}" ] || rm -rf "$T"' EXIT
pass=0 fail=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "  FAIL $*"; }

expect() {
	local name=$1 rc=$2 pat=$3; shift 4
	local out got
	out=$("$@" 2>&1); got=$?
	if [ "$got" != "$rc" ]; then bad "$name: exit $got, expected $rc: $(echo "$out" | tail -n 3)"; return; fi
	if [ -n "$pat" ] && ! printf '%s' "$out" | grep -qE -- "$pat"; then
		bad "$name: output does not match /$pat/: $(echo "$out" | tail -n 3)"; return
	fi
	ok
}

has() {
	if grep -qE -- "$3" "$2" 2>/dev/null; then ok; else bad "$1: '$2' lacks /$3/"; fi
}
