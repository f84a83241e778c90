#!/usr/bin/env bash
# The dependency guard (tests/deps_guard.sh): passes on this tree with
# scripts/deps.sh's list, and fails, naming the header or library and its
# package, when a package is dropped from the list, when a source includes
# a header of a package that is not listed, and when a header is missing;
# the same for the commands and Python modules scripts run (a listed package
# dropped, an unlisted or missing command, an optional one called unchecked,
# a missing module).
. "$(dirname "$0")/lib.sh"
if ! command -v dpkg >/dev/null 2>&1; then
	echo "  skipped: no dpkg"; echo "0 passed, 0 failed, 1 skipped"; exit 0
fi
bash scripts/deps.sh --list > "$T/pkgs"
expect "guard passes with deps.sh's list" 0 "deps_guard: ok" -- bash tests/deps_guard.sh

# libisal-dev dropped: zread.c's <isa-l/igzip_lib.h> is named with it
grep -vx libisal-dev "$T/pkgs" > "$T/no_isal"
expect "dropping libisal-dev fails naming the header" 1 \
	"<isa-l/igzip_lib.h> comes from package libisal-dev" -- bash tests/deps_guard.sh --pkgs "$T/no_isal"
# libyajl-dev dropped: both its headers and -lyajl_s are named
grep -vx libyajl-dev "$T/pkgs" > "$T/no_yajl"
out=$(bash tests/deps_guard.sh --pkgs "$T/no_yajl" 2>&1)
if printf '%s' "$out" | grep -q "<yajl/yajl_tree.h> comes from package libyajl-dev" &&
   printf '%s' "$out" | grep -q -- "-lyajl_s comes from package libyajl-dev"; then ok; else
	bad "dropping libyajl-dev: header and library not both named: $(echo "$out" | head -3)"; fi

# a header owned by an installed package that is not in the list
hdr="" hpkg=""
for h in expat.h png.h uuid/uuid.h X11/Xlib.h pcre.h ffi.h bzlib.h lzma.h gmp.h; do
	[ -f "/usr/include/$h" ] || [ -f "/usr/include/x86_64-linux-gnu/$h" ] || continue
	f=/usr/include/$h; [ -f "$f" ] || f=/usr/include/x86_64-linux-gnu/$h
	p=$(dpkg -S "$f" 2>/dev/null | head -1 | sed 's/: .*//; s/:[a-z0-9_]*$//')
	[ -n "$p" ] && ! grep -qx "$p" "$T/pkgs" && { hdr=$h; hpkg=$p; break; }
done
if [ -n "$hdr" ]; then
	mkdir -p "$T/src"; printf '#include <%s>\nint f(void);\nint f(void) { return 0; }\n' "$hdr" > "$T/src/uses.c"
	expect "a header of an unlisted package ($hpkg) fails" 1 "<$hdr> comes from package $hpkg" -- \
		bash tests/deps_guard.sh --src "$T/src/uses.c"
else
	bad "no installed header of an unlisted package found to test with"
fi
# a header that no installed package provides
printf '#include <aorta_no_such_lib/none.h>\n' > "$T/missing.c"
expect "a missing header fails naming it" 1 "<aorta_no_such_lib/none.h> \\(included by .*missing.c\\) is not installed" -- \
	bash tests/deps_guard.sh --src "$T/missing.c"
# ---- tools: the commands and Python modules scripts run ----
# jq dropped: tests/cli/onetruth.sh's jq is named with its package
grep -vx jq "$T/pkgs" > "$T/no_jq"
expect "dropping jq fails naming the tool and its caller" 1 \
	"tool jq comes from package jq \(/usr/bin/jq, called by tests/cli/onetruth.sh:[0-9]+\)" -- bash tests/deps_guard.sh --pkgs "$T/no_jq"
# a command of an installed package that neither the list (with what its
# packages depend on) nor the base system accounts for; where everything
# installed came from deps.sh (a clean machine) there is none to test with
python3 tests/deps_tools.py --allowed "$T/pkgs" > "$T/allowed"
tool="" tpkg="" skipped=0
for c in curl wget file less strace gdb unzip zip rsync vim.tiny nano ssh patch lsof tree htop; do
	f=$(PATH=/usr/sbin:/usr/bin:/sbin:/bin command -v "$c") || continue
	p=$(dpkg -S "$f" 2>/dev/null | head -1 | sed 's/: .*//; s/:[a-z0-9_]*$//')
	[ -z "$p" ] && p=$(dpkg -S "${f#/usr}" 2>/dev/null | head -1 | sed 's/: .*//; s/:[a-z0-9_]*$//')
	[ -n "$p" ] && ! grep -qx "$p" "$T/allowed" && { tool=$c; tpkg=$p; break; }
done
if [ -n "$tool" ]; then
	printf '#!/bin/bash\nout=$(timeout 5 %s --version 2>&1 | head -1)\n' "$tool" > "$T/uses_tool.sh"
	expect "a script calling $tool (package $tpkg, not listed) fails" 1 \
		"tool $tool comes from package $tpkg .*called by $T/uses_tool.sh:2" -- bash tests/deps_guard.sh --script "$T/uses_tool.sh"
else
	echo "  skipped: no installed command outside deps.sh's packages and the base system to test an unlisted one with"
	skipped=1
fi
# a command that is not installed; an optional one called without a check;
# the same with a check; a Python module that is not installed
printf 'if true; then\n\taorta_no_such_tool -x | sort\nfi\n' > "$T/missing_tool.sh"
expect "a missing command fails naming it and its caller" 1 \
	"tool aorta_no_such_tool \(called by $T/missing_tool.sh:2\) is not installed" -- \
	bash tests/deps_guard.sh --script "$T/missing_tool.sh"
printf 'nsys profile -o x true\n' > "$T/optional.sh"
expect "an optional tool called without a check fails" 1 \
	"nsys \(called by $T/optional.sh:1\) is optional .* does not check for it" -- bash tests/deps_guard.sh --script "$T/optional.sh"
printf 'command -v nsys >/dev/null || { echo "skipped: no nsys"; exit 0; }\nnsys profile -o x true\n' > "$T/optional_ok.sh"
expect "an optional tool called after command -v passes" 0 "deps_guard: ok" -- bash tests/deps_guard.sh --script "$T/optional_ok.sh"
printf 'python3 - <<PY\nimport json, aorta_no_such_module\nPY\n' > "$T/module.sh"
expect "a Python module that is not installed fails" 1 \
	"python3 module aorta_no_such_module \(imported by $T/module.sh:1\) is not installed" -- \
	bash tests/deps_guard.sh --script "$T/module.sh"
echo "$pass passed, $fail failed, $skipped skipped"
[ "$fail" -eq 0 ]
