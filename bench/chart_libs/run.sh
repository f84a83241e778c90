#!/usr/bin/env bash
# Chart drawing: aorta's cairo plug-in (build/libaorta-plot.so, from
# src/report/plot_cairo.c) against the same entry points written on PLplot
# 5.15 (plot_plplot.c, kept in git history only: it is not a plug-in of the
# build).  Times PNG+SVG per chart kind at large-run sizes (chart_speed.c),
# serially and from 2 threads at once, then draws the report of
# data/h200x4 (ddp against fsdp2) with each plug-in into $OUT/cairo and
# $OUT/plplot to look at side by side.
#   bench/chart_libs/run.sh [REPS] [THREADS]     (OUT=dir to keep the pictures)
# Needs the PLplot packages, which deps.sh does not install (nothing else
# uses them):  apt-get install --no-install-recommends libplplot-dev plplot-driver-cairo
set -euo pipefail
cd "$(dirname "$0")/../.."
REPS=${1:-5} THREADS=${2:-2}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"/{cairo,plplot,draw_cairo,draw_plplot}
make -s all
SRC=bench/chart_libs/plot_plplot.c
if [ ! -f "$SRC" ]; then # removed from the tree once cairo was chosen: taken from history
	REV=$(git log --format=%H -n 1 --diff-filter=A -- "$SRC")
	[ -n "$REV" ] || { echo "plot_plplot.c is in neither the tree nor the history" >&2; exit 1; }
	git show "$REV:$SRC" >"$OUT/plot_plplot.c"
	SRC=$OUT/plot_plplot.c
fi
pkg-config --exists plplot || { echo "PLplot is not installed (see the top of this script)" >&2; exit 1; }
gcc -std=c11 -D_GNU_SOURCE -O2 -fPIC -Isrc $(pkg-config --cflags plplot) -shared -o "$OUT/libplplot-plot.so" \
	"$SRC" $(pkg-config --libs plplot) -lm -pthread
gcc -std=c11 -D_GNU_SOURCE -O2 -Isrc -o "$OUT/chart_speed" bench/chart_libs/chart_speed.c -ldl -lm -pthread
echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -1); commit $(git rev-parse --short HEAD)"
echo "== cairo (build/libaorta-plot.so)"
"$OUT/chart_speed" build/libaorta-plot.so "$OUT/draw_cairo" "$REPS" "$THREADS"
for c in timeline bars heatmap gantt; do # every thread drew the same chart: the same bytes?
	for t in $(seq 1 "$THREADS"); do
		cmp -s "$OUT/draw_cairo/${c}_t0.png" "$OUT/draw_cairo/${c}_t$t.png" ||
			echo "  cairo: $c drawn by thread $t differs from the serial drawing"
	done
done
echo "== PLplot $(pkg-config --modversion plplot) (pngcairo + svgcairo)"
"$OUT/chart_speed" "$OUT/libplplot-plot.so" "$OUT/draw_plplot" "$REPS" "$THREADS"
echo "== aorta report, ddp against fsdp2 (data/h200x4): 9 charts, wall of 3 tries each"
for lib in cairo plplot; do
	so=build/libaorta-plot.so
	[ $lib = plplot ] && so=$OUT/libplplot-plot.so
	for i in 1 2 3; do
		/usr/bin/time -f "  $lib: wall %e s, user %U s, peak RSS %M KiB" env AORTA_PLOT_LIB=$so ./build/aorta report \
			--log-dir data/h200x4/aorta_ddp --label ddp --log-dir data/h200x4/fsdp2_bs8 --label fsdp2 \
			--skip-steps 0 --reference ddp --candidate fsdp2 --output "$OUT/$lib" 2>&1 >/dev/null | grep wall
	done
	echo "  --no-plots: $( { /usr/bin/time -f "wall %e s" ./build/aorta report --log-dir data/h200x4/aorta_ddp \
		--label ddp --log-dir data/h200x4/fsdp2_bs8 --label fsdp2 --skip-steps 0 --no-plots \
		--output "$OUT/np" >/dev/null; } 2>&1 | grep wall)"
done
echo "pictures: $OUT/cairo and $OUT/plplot (report), $OUT/draw_cairo and $OUT/draw_plplot (chart_speed)"
