#!/usr/bin/env bash
# README.md's example output is what aorta prints today
# (scripts/readme_example.sh --check), the check fails on a README whose
# example was edited by hand, and on prose that quotes a figure the example
# does not print (the README once said 7 % where aorta printed 6.3 %).
. "$(dirname "$0")/lib.sh"
expect "README.md's example matches aorta's output" 0 "example is what .* its prose quotes [0-9]+ of its figures" -- \
	bash scripts/readme_example.sh --check
# a copy of the tree's README with one line of the example changed
mkdir -p "$T/tree/scripts" "$T/tree/build"
cp scripts/readme_example.sh "$T/tree/scripts/"
ln -s "$PWD/data" "$T/tree/data"
AB="$(cd "$(dirname "$A")" && pwd)/$(basename "$A")"
sed '/^<!-- example:/,/^<!-- end of example -->/ s/^== summary: \(.*\)$/== summary: \1 (edited by hand)/' README.md > "$T/tree/README.md"
if cmp -s README.md "$T/tree/README.md"; then
	bad "the README's example has no '== summary' line to alter"
else
	expect "a hand-edited example fails with a diff" 1 "^-== summary: .* \\(edited by hand\\)$" -- \
		env AORTA_BIN="$AB" bash "$T/tree/scripts/readme_example.sh" --check
fi
# prose that quotes a figure the example does not print
sed '/^<!-- prose:/,/^<!-- end of prose -->/ s/gains only 6\.3 %/gains only 7 %/' README.md > "$T/tree/README.md"
if cmp -s README.md "$T/tree/README.md"; then
	bad "the README's prose has no 'gains only 6.3 %' to alter"
else
	expect "prose quoting 7 % where the example prints 6.3 % fails" 1 "quotes figures the example does not print: '7 %'" -- \
		env AORTA_BIN="$AB" bash "$T/tree/scripts/readme_example.sh" --check
fi
echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
