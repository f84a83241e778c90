#!/usr/bin/env bash
# README.md's example output is what aorta prints today
# (scripts/readme_example.sh --check), and the check fails on a README whose
# example was edited by hand.
. "$(dirname "$0")/lib.sh"
expect "README.md's example matches aorta's output" 0 "example is what" -- bash scripts/readme_example.sh --check
# a copy of the tree's README with one line of the example changed
mkdir -p "$T/tree/scripts" "$T/tree/build"
cp scripts/readme_example.sh "$T/tree/scripts/"
ln -s "$PWD/data" "$T/tree/data"
sed '/^<!-- example:/,/^<!-- end of example -->/ s/^== across ranks$/== across ranks (edited by hand)/' README.md > "$T/tree/README.md"
if cmp -s README.md "$T/tree/README.md"; then
	bad "the README's example has no '== across ranks' line to alter"
else
	expect "a hand-edited example fails with a diff" 1 "^-== across ranks \\(edited by hand\\)$" -- \
		env AORTA_BIN="$(cd "$(dirname "$A")" && pwd)/$(basename "$A")" bash "$T/tree/scripts/readme_example.sh" --check
fi
echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
