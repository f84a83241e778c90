#!/usr/bin/env bash
# tests/cli/report_page.sh - the report page as a person reads it, in a real
# browser: headless Chromium (Debian's chromium; skipped, saying so, where it
# is not installed) lays out index.html 1400 px wide, and a probe script
# added to a copy of the page reads where each part landed:
#   - the summary is the first block after the title (section#summary);
#   - its verdict is on the first screen;
#   - the what-if chart (its image loaded and drawn) starts within the first
#     two screens, with the per-rank rows under it;
#   - then the late rank beside a healthy rank, then the rest.
# On the bundled runs (one run, two runs compared, a run without a what-if)
# and the public 8-rank trace where ../shared/data has it.
. "$(dirname "$0")/lib.sh"
browser=""
if command -v chromium >/dev/null 2>&1; then
	browser=chromium
elif command -v chromium-browser >/dev/null 2>&1; then
	browser=chromium-browser
fi
if [ -z "$browser" ]; then
	echo "  skipped: chromium not found (scripts/deps.sh installs Debian's chromium): the page's order is not checked"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
fi

# The probe: positions in CSS px from the top of the page, one "key=value" per field.
cat >"$T/probe.js" <<'JS'
window.addEventListener("load", function () {
	function top(e) { return e ? Math.round(e.getBoundingClientRect().top + window.scrollY) : -1; }
	var o = [], kids = document.body.children, first = "";
	for (var i = 0; i < kids.length; i++) {
		var t = kids[i].tagName.toLowerCase();
		if (t === "h1" || (t === "p" && kids[i].className === "meta"))
			continue;
		first = t + "#" + (kids[i].id || "");
		break;
	}
	o.push("first=" + first, "vh=" + window.innerHeight, "vw=" + window.innerWidth);
	var s = document.getElementById("summary");
	o.push("summary=" + top(s));
	var v = null, ths = s ? s.querySelectorAll("th") : [];
	for (var k = 0; k < ths.length && !v; k++)
		if (ths[k].textContent === "verdict")
			v = ths[k];
	o.push("verdict=" + top(v));
	var w = document.querySelector("#whatif figure.whatif img");
	o.push("whatif=" + top(w), "whatif_w=" + (w ? Math.round(w.getBoundingClientRect().width) : 0),
	       "whatif_loaded=" + (w && w.complete && w.naturalWidth > 0 ? 1 : 0));
	o.push("ranks=" + top(document.querySelector("#whatif table.ranks")));
	var p = document.querySelector("#pair figure img");
	o.push("pair=" + top(p), "pair_loaded=" + (p && p.complete && p.naturalWidth > 0 ? 1 : 0));
	o.push("detail=" + top(document.getElementById("detail")));
	var pre = document.createElement("pre");
	pre.id = "aorta-probe";
	pre.textContent = o.join(" ");
	document.body.appendChild(pre);
});
JS

# field NAME: its value in the probe's line
field() { printf '%s\n' "$probe" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

# page NAME WHATIF(1: a what-if chart is expected) PAIR(1: a pair chart) REPORT-ARGS...
page() {
	local name=$1 want_w=$2 want_p=$3
	shift 3
	$A report --output "$T/$name" "$@" >"$T/$name.log" 2>&1 || { bad "$name: report failed: $(tail -n 2 "$T/$name.log")"; return; }
	# the page and the probe, one file (no script in the page itself)
	awk -v js="$T/probe.js" '/<\/body><\/html>/ { printf "<script>\n"; while ((getline l < js) > 0) print l; print "</script>" } { print }' \
		"$T/$name/index.html" >"$T/$name/probe.html"
	timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$T/chr" \
		--window-size=1400,900 --virtual-time-budget=10000 --dump-dom "file://$T/$name/probe.html" \
		>"$T/$name.dom" 2>"$T/$name.chromium.log"
	probe=$(sed -n 's/.*<pre id="aorta-probe">\([^<]*\)<\/pre>.*/\1/p' "$T/$name.dom")
	if [ -z "$probe" ]; then
		bad "$name: the browser gave no layout (see $name.chromium.log: $(tail -n 1 "$T/$name.chromium.log"))"
		return
	fi
	local vh summary verdict whatif ranks pair detail
	vh=$(field vh) summary=$(field summary) verdict=$(field verdict) whatif=$(field whatif)
	ranks=$(field ranks) pair=$(field pair) detail=$(field detail)
	[ "$(field vw)" -ge 1380 ] && ok || bad "$name: the page is $(field vw) px wide, not 1400"
	[ "$(field first)" = "section#summary" ] && ok || bad "$name: the first block is $(field first), not the summary"
	[ "$verdict" -ge 0 ] && [ "$verdict" -lt "$vh" ] && ok ||
		bad "$name: the verdict is at $verdict px, not on the first screen ($vh px)"
	if [ "$want_w" = 1 ]; then
		[ "$(field whatif_loaded)" = 1 ] && [ "$(field whatif_w)" -gt 600 ] && ok ||
			bad "$name: the what-if chart is not drawn (loaded $(field whatif_loaded), $(field whatif_w) px wide)"
		[ "$whatif" -gt "$summary" ] && [ "$whatif" -lt $((2 * vh)) ] && ok ||
			bad "$name: the what-if chart starts at $whatif px, not within the first two screens ($((2 * vh)) px) after the summary"
		[ "$ranks" -gt "$whatif" ] && ok || bad "$name: the per-rank rows ($ranks px) are not under the what-if chart ($whatif px)"
	else
		[ "$whatif" = -1 ] && [ "$ranks" = -1 ] && ok || bad "$name: a what-if chart or rank rows where none was expected"
	fi
	if [ "$want_p" = 1 ]; then
		[ "$(field pair_loaded)" = 1 ] && [ "$pair" -gt "$ranks" ] && [ "$pair" -lt "$detail" ] && ok ||
			bad "$name: the late rank beside a healthy rank is at $pair px (rows $ranks, detail $detail; loaded $(field pair_loaded))"
	fi
	[ "$detail" -gt "$summary" ] && [ "$detail" -gt "$whatif" ] && ok || bad "$name: the rest ($detail px) comes before the summary or the what-if"
	echo "  $name: $probe"
}

page fsdp2 1 1 --log-dir data/h200x4/fsdp2_bs8 --label fsdp2
page two_runs 1 1 --log-dir data/h200x4/fsdp2_bs8 --label fsdp2 --log-dir data/h200x4/aorta_ddp --label ddp
page jsonl 0 0 --log-dir tests/data/report/base --label base
grep -q "Rank 3 beside rank 1" "$T/fsdp2/index.html" && ok || bad "fsdp2: the late rank (3) is not shown beside a healthy rank (1)"
S=${AORTA_SHARED_DATA:-../shared/data}
if [ -d "$S/public/param-dlrm-8rank" ]; then
	page dlrm8 1 1 --log-dir "$S/public/param-dlrm-8rank" --label dlrm
else
	echo "  note: $S/public/param-dlrm-8rank not found: the 8-rank page not checked"
fi
echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
