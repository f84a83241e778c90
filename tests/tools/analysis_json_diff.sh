#!/usr/bin/env bash
# analysis_json_diff.sh OLD_AORTA NEW_AORTA [INPUT...]
#
# Runs `aorta analyze -q --json` with two builds on the same inputs (default:
# every trace set under ../shared/data and the repository's data/ and
# tests/data) and compares the two analysis JSON documents figure by figure:
# each leaf is flattened to "path = value" (jq), the tool version and the
# input paths masked, and the lines compared byte for byte.  Prints, per
# input, "same" or the figures that differ (removed "-", added "+"), and a
# final count.  Exit 0 when every figure present in both is byte-identical
# (added fields are listed but allowed: adding keeps the schema version),
# 1 otherwise.  Used to show that a refactor changed no figure's value.
set -u
old=$1 new=$2
shift 2
here=$(cd "$(dirname "$0")/../.." && pwd)
shared=${AORTA_SHARED_DATA:-$here/../shared/data}
if [ $# -eq 0 ]; then
	set -- "$shared"/h200x4/fsdp2_bs8 "$shared"/h200x4/aorta_ddp \
		"$shared"/h200x4/aorta_ddp/rank_0*_metrics.jsonl \
		$(find "$shared"/kineto "$shared"/nsys "$shared"/rocprofv3 -type f \
			\( -name '*.json' -o -name '*.json.gz' -o -name '*.sqlite' -o -name '*.db' -o -name '*kernel_trace.csv' \) 2>/dev/null | sort) \
		"$here"/tests/data/tiny
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
flat() { # FILE -> path = value lines, version and paths masked
	jq -r 'paths(scalars) as $p | "\($p | map(tostring) | join(".")) = \(getpath($p) | tojson)"' "$1" |
		grep -v -E '^(tool\.version|inputs\.[0-9]+|ranks\.[0-9]+\.path) = ' | sort
}
same=0 differ=0 skipped=0 i=0
for in in "$@"; do
	i=$((i + 1))
	"$old" analyze -q --json "$T/old$i.json" $in >"$T/old$i.log" 2>&1; ro=$?
	"$new" analyze -q --json "$T/new$i.json" $in >"$T/new$i.log" 2>&1; rn=$?
	if [ $ro -ne 0 ] || [ $rn -ne 0 ]; then
		if [ $ro -ne $rn ]; then
			echo "DIFFER $in: exit $ro before, $rn after"; tail -n 2 "$T/new$i.log"; differ=$((differ + 1))
		else
			echo "skip   $in: both exit $ro"; skipped=$((skipped + 1))
		fi
		continue
	fi
	flat "$T/old$i.json" >"$T/o"; flat "$T/new$i.json" >"$T/n"
	removed=$(comm -23 "$T/o" "$T/n"); added=$(comm -13 "$T/o" "$T/n")
	# a figure whose path exists on both sides with another value
	changed=$(printf '%s\n' "$removed" | sed 's/ = .*//' | grep -v '^$' | sort -u |
		comm -12 - <(printf '%s\n' "$added" | sed 's/ = .*//' | sort -u))
	gone=$(printf '%s\n' "$removed" | sed 's/ = .*//' | grep -v '^$' | sort -u |
		comm -23 - <(printf '%s\n' "$added" | sed 's/ = .*//' | sort -u))
	if [ -z "$changed" ] && [ -z "$gone" ]; then
		n=$(printf '%s\n' "$added" | grep -c . || true)
		if [ "$n" = 0 ]; then echo "same   $in ($(wc -l <"$T/o") figures byte-identical)"; else echo "same   $in ($(wc -l <"$T/o") figures byte-identical, $n fields added)"; fi
		[ "$n" != 0 ] && printf '%s\n' "$added" | sed 's/ = .*//; s/\.[0-9][0-9]*\./.N./g' | sort -u | head -n 5 | sed 's/^/         + /'
		same=$((same + 1))
	else
		echo "DIFFER $in"
		printf '%s\n' "$removed" | grep -F -f <(printf '%s\n' $changed $gone | sed 's/$/ = /') | head -n 8 | sed 's/^/   - /'
		printf '%s\n' "$added" | grep -F -f <(printf '%s\n' $changed | sed 's/$/ = /') | head -n 8 | sed 's/^/   + /'
		differ=$((differ + 1))
	fi
done
echo "$same same, $differ differ, $skipped skipped"
[ $differ -eq 0 ]
