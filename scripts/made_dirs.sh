#!/usr/bin/env bash
# made_dirs.sh - the folders `make install` makes, so `make uninstall`
# removes them (when empty) and no other:
#   made_dirs.sh record RECORD DIR...   before `install -d DIR...`: appends to
#                                       RECORD (kept across installs) every DIR
#                                       or parent of one that does not exist yet
#   made_dirs.sh remove RECORD          after the files are gone: removes the
#                                       folders RECORD lists, deepest first,
#                                       each only when empty, then RECORD
# A folder that existed before the first install (/usr/local/bin) is never
# listed, so never removed.
set -euo pipefail
what=$1 rec=$2
shift 2
case $what in
record)
	tmp=$(mktemp)
	[ -f "$rec" ] && cat "$rec" >> "$tmp"
	for d in "$@"; do
		while [ -n "$d" ] && [ "$d" != / ] && [ ! -e "$d" ]; do
			echo "$d" >> "$tmp"
			d=$(dirname "$d")
		done
	done
	mkdir -p "$(dirname "$rec")"
	sort -u "$tmp" > "$rec.new" && mv "$rec.new" "$rec"
	rm -f "$tmp"
	;;
remove)
	[ -f "$rec" ] || exit 0
	list=$(awk '{ print gsub("/", "/") "\t" $0 }' "$rec" | sort -rn | cut -f2-)
	rm -f "$rec"
	while IFS= read -r d; do
		[ -n "$d" ] && [ -d "$d" ] && rmdir "$d" 2>/dev/null || true
	done <<< "$list"
	;;
*)
	echo "made_dirs.sh: record or remove, not '$what'" >&2
	exit 2
	;;
esac
