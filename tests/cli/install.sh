#!/usr/bin/env bash
# make install into a temporary DESTDIR: the installed aorta runs from
# outside the tree (analyze on the bundled traces, report with the plot
# plug-in from PREFIX/lib/aorta, train's default configuration from
# PREFIX/share/aorta, the GPU plug-in found), the man pages and the bash
# completion list exactly the options each command's (and verb's) -h lists,
# and make uninstall leaves no file behind, and no folder it made.
. "$(dirname "$0")/lib.sh"
ROOT=$PWD
D=$T/dest
P=/usr/local
if ! make -s --no-print-directory install DESTDIR="$D" PREFIX=$P > "$T/install.log" 2>&1; then
	bad "make install DESTDIR=$D failed: $(tail -n 3 "$T/install.log")"
	echo "$pass passed, $fail failed, 0 skipped"; exit 1
fi
I=$D$P/bin/aorta
[ -x "$I" ] && ok || bad "no executable $I"
for p in libaorta-plot.so libaorta-mpi.so libaorta-gpu.so; do
	[ -f "build/$p" ] || continue
	[ -f "$D$P/lib/aorta/$p" ] && ok || bad "$p not installed in $P/lib/aorta/"
done

# from another folder, with no AORTA_*_LIB: what it needs is found from the
# installed binary's own location
mkdir -p "$T/elsewhere"
cd "$T/elsewhere"
clean_env=(env -u AORTA_GPU_LIB -u AORTA_PLOT_LIB -u AORTA_MPI_LIB)
expect "installed aorta analyze on the bundled traces from another folder" 0 "^== across ranks" -- \
	"${clean_env[@]}" "$I" analyze "$ROOT/data/h200x4/fsdp2_bs8"
# the same figures as the build tree's binary
"$I" analyze -q --json inst.json "$ROOT/data/h200x4/fsdp2_bs8" 2>/dev/null
"$ROOT/build/aorta" analyze -q --json "$T/tree.json" "$ROOT/data/h200x4/fsdp2_bs8" 2>/dev/null
if [ -s inst.json ] && cmp -s inst.json "$T/tree.json"; then ok; else
	bad "the installed aorta's analysis JSON differs from the build tree's"; fi
if [ -f "$ROOT/build/libaorta-plot.so" ]; then
	expect "installed aorta report loads the plot plug-in from lib/aorta" 0 "[1-9][0-9]* charts \\(PNG and SVG\\)" -- \
		"${clean_env[@]}" "$I" report --log-dir "$ROOT/data/h200x4/aorta_ddp/torch_profiler" --label ddp --output rep
fi
expect "installed aorta train --check-config reads share/aorta/config/default.yaml" 0 \
	"\"source\": \"$D$P/bin/../share/aorta/config/default.yaml\"" -- "$I" train --check-config
if [ -f "$ROOT/build/libaorta-gpu.so" ]; then
	out=$("${clean_env[@]}" "$I" train --override training.max_steps=1 2>&1)
	if printf '%s' "$out" | grep -q "cannot load the GPU code"; then bad "installed aorta train does not find lib/aorta/libaorta-gpu.so: $out"; else ok; fi
fi
cd "$ROOT"

# man pages and completion: exactly the options -h lists
M=$D$P/share/man/man1
C=$D$P/share/bash-completion/completions/aorta
help_opts() { # the option names an -h lists (its table's lines)
	"$@" -h 2>&1 | grep -oE '^ +(-[A-Za-z0-9], )?--[a-z0-9-]+' | grep -oE -- '--?[A-Za-z0-9-]+' | sort -u
}
man_opts() { # FILE [SECTION]: the options of the man page's OPTIONS (of one verb's section)
	awk -v sec="${2:-}" 'sec == "" && $0 == ".SH OPTIONS" { on = 1; next }
		sec != "" && $0 == ".SH \"" sec "\"" { on = 1; next } /^\.SH / { on = 0 } on' "$1" |
		grep -oE '\\fB\\-(\\-)?[A-Za-z0-9\\-]+\\fR' | sed 's/\\fB//; s/\\fR//; s/\\-/-/g' | sort -u
}
# deps_guard: functions _aorta (defined by the completion script sourced below)
comp_opts() { # CMD [VERB]: the completion's options
	# shellcheck disable=SC1090
	( . "$C"; COMP_WORDS=(aorta "$@" -); COMP_CWORD=$(($# + 1)); _aorta; printf '%s\n' "${COMPREPLY[@]}" | sort -u )
}
[ -f "$M/aorta.1" ] && [ -f "$C" ] || bad "man page aorta.1 or completion not installed"
ncheck=0
mapfile -t cmds < <(./build/aorta help --man aorta | cut -f1)
for c in "${cmds[@]}"; do
	mapfile -t verbs < <(./build/aorta "$c" -h 2>/dev/null | awk '/^verbs:/ { v = 1; next } v && /^$/ { exit } v { print $1 }')
	[ -f "$M/aorta-$c.1" ] && ok || bad "no man page aorta-$c.1"
	# what it prints and why it exits as it does, from docs/cli.md, not only its options
	grep -q '^\.SH OUTPUT$' "$M/aorta-$c.1" && ok || bad "aorta-$c.1 does not describe the output"
	st=$(awk '/^\.SH EXIT STATUS$/ { on = 1; next } /^\.SH / { on = 0 } on' "$M/aorta-$c.1")
	printf '%s' "$st" | grep -q "^0 " && ! printf '%s' "$st" | grep -q '^\.TP' && ok ||
		bad "aorta-$c.1's exit status is not the command's own: $(printf '%s' "$st" | head -n 2)"
	grep -q "aorta-$c" "$M/aorta.1" && ok || bad "aorta.1 does not list aorta-$c"
	if [ ${#verbs[@]} -eq 0 ]; then
		units=("$c")
	else
		units=(); for v in "${verbs[@]}"; do units+=("$c $v"); done
	fi
	for u in "${units[@]}"; do
		# shellcheck disable=SC2086
		h=$(help_opts ./build/aorta $u)
		[ -n "$h" ] || { bad "aorta $u -h lists no options"; continue; }
		if [ "$u" = "$c" ]; then m=$(man_opts "$M/aorta-$c.1"); else m=$(man_opts "$M/aorta-$c.1" "aorta $u"); fi
		# shellcheck disable=SC2086
		k=$(comp_opts $u)
		[ "$h" = "$m" ] && ok || bad "man page of aorta $u: options differ from -h: $(diff <(echo "$h") <(echo "$m") | grep '^[<>]' | tr '\n' ' ')"
		[ "$h" = "$k" ] && ok || bad "completion of aorta $u: options differ from -h: $(diff <(echo "$h") <(echo "$k") | grep '^[<>]' | tr '\n' ' ')"
		ncheck=$((ncheck + 1))
	done
done
[ "$ncheck" -ge 9 ] && ok || bad "only $ncheck commands and verbs checked"
# the completion completes commands and verbs too
out=$( . "$C"; COMP_WORDS=(aorta an); COMP_CWORD=1; _aorta; echo "${COMPREPLY[*]}")
[ "$out" = analyze ] && ok || bad "completion of 'aorta an' gives '$out'"
out=$( . "$C"; COMP_WORDS=(aorta hwq run-); COMP_CWORD=2; _aorta; echo "${COMPREPLY[*]}")
[ "$out" = run-priority ] && ok || bad "completion of 'aorta hwq run-' gives '$out'"
# a man page renders (where man is installed)
if command -v man >/dev/null 2>&1; then
	MANWIDTH=80 man -l "$M/aorta-analyze.1" 2>/dev/null | grep -q -- "--skip-steps" && ok || bad "man -l aorta-analyze.1 does not render --skip-steps"
fi

if make -s --no-print-directory uninstall DESTDIR="$D" PREFIX=$P > "$T/uninstall.log" 2>&1; then
	left=$(find "$D" -type f 2>/dev/null)
	[ -z "$left" ] && ok || bad "make uninstall left: $left"
	# the folders install made are gone too (DESTDIR itself was made by it)
	[ ! -e "$D" ] && ok || bad "make uninstall left folders: $(find "$D" | head -n 5)"
else
	bad "make uninstall failed: $(tail -n 3 "$T/uninstall.log")"
fi
# folders that were there before the install stay, empty or not
D2=$T/dest2
mkdir -p "$D2$P/share/man/man1" "$D2$P/bin"
touch "$D2$P/bin/other-tool"
if make -s --no-print-directory install DESTDIR="$D2" PREFIX=$P >"$T/install2.log" 2>&1 &&
	make -s --no-print-directory uninstall DESTDIR="$D2" PREFIX=$P >"$T/uninstall2.log" 2>&1; then
	[ -d "$D2$P/share/man/man1" ] && [ -f "$D2$P/bin/other-tool" ] && ok ||
		bad "make uninstall removed a folder it did not make"
	[ ! -e "$D2$P/lib" ] && [ ! -e "$D2$P/share/aorta" ] && [ ! -e "$D2$P/share/bash-completion" ] &&
		[ ! -e "$D2$P/share/doc" ] && ok || bad "make uninstall left folders it made: $(find "$D2" -type d | head -n 8)"
else
	bad "install/uninstall into a root with folders already there failed: $(tail -n 3 "$T/uninstall2.log")"
fi
# the Debian package: bash-completion recommended (it loads the completion), no install record inside
if command -v dpkg-deb >/dev/null 2>&1 && command -v objdump >/dev/null 2>&1; then
	if bash scripts/make_deb.sh build >"$T/deb.log" 2>&1; then
		deb=$(ls build/aorta_*.deb | head -n 1)
		dpkg-deb -f "$deb" Recommends | grep -q "bash-completion" && ok || bad "the package does not recommend bash-completion"
		dpkg-deb -c "$deb" >"$T/deb.list"
		grep -q "made-dirs" "$T/deb.list" && bad "the package holds make install's record" || ok
		grep -q "usr/share/bash-completion/completions/aorta$" "$T/deb.list" && ok || bad "the package lacks the completion"
	else
		bad "make deb failed: $(tail -n 3 "$T/deb.log")"
	fi
fi
echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
