#!/usr/bin/env bash
# Hostile input and faults (issue 20): every case gives a correct result or a
# clear error naming the file, nothing on disk is destroyed or left behind,
# nothing hangs.  Inputs are generated here (nothing large is committed).
# Runs on build/aorta and, from tests/run.sh, on the ASan+UBSan build.
# Outputs go to files under $T, never to /dev/null: a regression in output
# handling must not be able to replace a system device.
. "$(dirname "$0")/lib.sh"

tiny=tests/data/tiny
# every command that could block gets a bound: a hang is a failure, not a stall
TO="timeout 60"

# --- 1. output paths: through symlinks, devices and FIFOs in place -------------
mkdir -p "$T/o"
ln -s target.json "$T/o/link.json"
expect "output through a dangling symlink" 0 "" -- $A analyze -q --json "$T/o/link.json" $tiny
[ -L "$T/o/link.json" ] && ok || bad "the symlink given as output was replaced by a file"
has "symlink target written" "$T/o/target.json" '"schema": "aorta.analysis/[0-9]+"'
ln -s "$T/o/target.json" "$T/o/abs.json"
expect "output through an absolute symlink" 0 "" -- $A analyze -q --csv "$T/o/csvdir" --json "$T/o/abs.json" $tiny
[ -L "$T/o/abs.json" ] && ok || bad "absolute symlink replaced"
if mknod "$T/o/null" c 1 3 2>/dev/null; then
	expect "output to a character device" 0 "" -- $A analyze -q --json "$T/o/null" $tiny
	[ -c "$T/o/null" ] && ok || bad "the character device given as output was replaced by a file"
fi
mkfifo "$T/o/fifo"
(sleep 1; timeout 30 cat "$T/o/fifo" >"$T/o/fromfifo.json") & # a reader that comes late
expect "output to a FIFO" 0 "" -- $TO $A analyze -q --json "$T/o/fifo" $tiny
wait
[ -p "$T/o/fifo" ] && ok || bad "the FIFO given as output was replaced"
has "FIFO output read by the other end" "$T/o/fromfifo.json" '"schema": "aorta.analysis/[0-9]+"'
mkfifo "$T/o/deadfifo"
expect "output to a FIFO nobody reads: an error, not a hang" 3 "'$T/o/deadfifo'.*no process reads" -- \
	$TO $A analyze -q --json "$T/o/deadfifo" $tiny
# the process's own descriptors: a pipe and a redirect (via /proc and /dev/fd,
# which a rename could not replace even if this regressed)
$A analyze -q --json /proc/self/fd/1 $tiny | python3 -c 'import json,sys; json.load(sys.stdin)' && ok ||
	bad "--json /proc/self/fd/1 into a pipe is not the analysis"
$A analyze -q --json /dev/fd/1 $tiny >"$T/o/redirected.json" && ok || bad "--json /dev/fd/1 with a redirect failed"
has "--json /dev/fd/1 written into the redirect" "$T/o/redirected.json" '"schema": "aorta.analysis/[0-9]+"'
mkdir -p "$T/o/adir"
expect "output that is a directory" 3 "'$T/o/adir'.*a directory" -- $A analyze -q --json "$T/o/adir" $tiny
left=$(find "$T/o" -name '*aorta-tmp*' -o -name '*.tmp??????' | wc -l)
[ "$left" = 0 ] && ok || bad "$left temporary files left in $T/o"

# --- 2. files of a directory that are not traces are named; missing ranks ------
mkdir -p "$T/d2"
cp $tiny/rank0.json $tiny/rank1.json "$T/d2/"
sed 's/"rank": 0/"rank": 2/' $tiny/rank0.json >"$T/d2/rank2.json"
for kind in empty zeros random html; do
	case $kind in
	empty) : >"$T/d2/rank3.json" ;;
	zeros) head -c 4096 /dev/zero >"$T/d2/rank3.json" ;;
	random) head -c 4096 /dev/urandom >"$T/d2/rank3.json" ;;
	html) printf '<!DOCTYPE html>\n<html><body>404</body></html>\n' >"$T/d2/rank3.json" ;;
	esac
	expect "unrecognised rank file ($kind) is named" 0 "warning: '$T/d2/rank3.json': skipped" -- \
		$A analyze -q --json "$T/d2.json" "$T/d2"
	expect "unrecognised rank file ($kind) with --strict" 3 "skipped.*--strict" -- \
		$A analyze -q --strict --json "$T/d2.json" "$T/d2"
done
expect "an HTML page is called one" 0 "an HTML page" -- $A analyze -q --json "$T/d2.json" "$T/d2"
rm "$T/d2/rank3.json"
printf '# notes\n' >"$T/d2/README.md"
expect "a non-trace file is a note, not a warning" 0 "" -- $A analyze -q --strict --json "$T/d2.json" "$T/d2"
mkdir -p "$T/d3"
for r in 0 1; do sed 's/"world_size": 2/"world_size": 4/' $tiny/rank$r.json >"$T/d3/rank$r.json"; done
expect "missing ranks of the world are named" 0 "world of 4 ranks but ranks 2-3 are missing" -- \
	$A analyze -q --json "$T/d3.json" "$T/d3"
expect "missing ranks with --strict" 3 "ranks 2-3 are missing" -- $A analyze -q --strict --json "$T/d3.json" "$T/d3"
sed 's/"rank": 0/"rank": 6/' $tiny/rank0.json >"$T/d3/rank6.json"
expect "a rank outside the world is named" 0 "rank6.json': rank 6 is outside the world of 4 ranks" -- \
	$A analyze -q --json "$T/d3.json" "$T/d3"
rm "$T/d3/rank6.json"
expect "compare --strict" 3 "missing" -- $A compare --strict "$T/d3" "$T/d3"
expect "report --strict on traces" 3 "missing" -- \
	$A report --strict --no-plots --skip-steps 0 --log-dir "$T/d3" --label a -o "$T/rep3"

mkdir -p "$T/rp"
cp tests/fuzz/corpus_rocprof_csv/k70.csv "$T/rp/kernel_trace.csv"
cp tests/fuzz/corpus_rocprof_csv/copy.csv "$T/rp/memory_copy_trace.csv"
expect "rocprofv3 memory copies are read with their kernels" 0 \
	"memory_copy_trace.csv': read with its kernel_trace.csv" -- $A analyze --json "$T/sink.json" "$T/rp"
expect "rocprofv3 memory copies are not a second rank" 0 "aorta analyze: 1 rank" -- $A analyze --json "$T/sink.json" "$T/rp"

: >"$T/empty.list"
expect "an empty @LIST" 3 "no input files" -- $A analyze -q --json "$T/sink.json" "@$T/empty.list"

# --- 3. FIFOs, process substitution, standard input -----------------------------
mkfifo "$T/in.fifo"
(cat $tiny/rank0.json >"$T/in.fifo") &
expect "a FIFO as input" 0 "" -- $TO $A analyze -q --json "$T/f.json" "$T/in.fifo"
wait
gzip -c $tiny/rank0.json >"$T/r0.json.gz"
expect "process substitution" 0 "" -- $TO bash -c "$A analyze -q --json '$T/p.json' <(zcat '$T/r0.json.gz')"
expect "gzip on standard input" 0 "" -- $TO bash -c "$A analyze -q --json '$T/s.json' - <'$T/r0.json.gz'"
python3 - "$T/f.json" "$T/s.json" <<'PY' && ok || bad "the FIFO and stdin analyses differ"
import json, sys
def strip(d):
    d.pop("inputs", None)
    for r in d["ranks"]:
        r.pop("path", None)
    return d
a, b = (strip(json.load(open(p))) for p in sys.argv[1:3])
assert a == b
PY
mkdir -p "$T/dfifo"
cp $tiny/rank0.json $tiny/rank1.json "$T/dfifo/"
mkfifo "$T/dfifo/rank2.json"
expect "a FIFO inside a directory is skipped, not opened" 0 "rank2.json': skipped, not a regular file" -- \
	$TO $A analyze -q --json "$T/df.json" "$T/dfifo"

# --- 4. every reader bounded -----------------------------------------------------
printf '{"throughput": 10, "latency_ms": {"p50": 1, "p95": 2, "p99": 3}}\n' >"$T/hb.json"
expect "hwq compare -t /dev/zero" 3 "'/dev/zero'.*limit" -- $TO $A hwq compare -b "$T/hb.json" -t /dev/zero
expect "analyze /dev/zero" 3 "'/dev/zero'.*binary data" -- $TO $A analyze -q --json "$T/sink.json" /dev/zero
expect "analyze /dev/urandom" 3 "'/dev/urandom'" -- $TO $A analyze -q --json "$T/sink.json" /dev/urandom
# a 600 MiB run of whitespace inside one gzip member (about 0.6 MB compressed)
python3 - "$tiny/rank0.json" "$T/ws.json.gz" <<'PY'
import sys, zlib
t = open(sys.argv[1], 'rb').read()
k = t.index(b'},', t.index(b'[', t.index(b'"traceEvents"'))) + 2
c = zlib.compressobj(1, zlib.DEFLATED, 31)
with open(sys.argv[2], 'wb') as o:
    o.write(c.compress(t[:k]))
    blk = b' ' * (1 << 20)
    for _ in range(600):
        o.write(c.compress(blk))
    o.write(c.compress(t[k:]))
    o.write(c.flush())
PY
rss=$(python3 - "$A" "$T/ws.json.gz" <<'PY'
import resource, subprocess, sys
r = subprocess.run([sys.argv[1], 'analyze', '-q', '--json', sys.argv[2] + '.out', sys.argv[2]],
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120)
print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)
PY
)
[ "${rss%% *}" = 0 ] && ok || bad "600 MiB of whitespace in gzip: exit ${rss%% *}"
[ "${rss##* }" -lt 400 ] && ok || bad "600 MiB of whitespace in gzip cost ${rss##* } MiB of memory"

# --- 5. nothing usable is exit 3; some events dropped is a warning -----------------
printf '{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","ts":10,"dur":-5,"pid":0,"tid":7,"args":{"stream":7,"device":0}}]}' >"$T/neg.json"
expect "only kernel has a negative duration" 3 "'$T/neg.json'.*nothing usable.*negative" -- $A analyze -q --json "$T/sink.json" "$T/neg.json"
printf '{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"aten::mm","ts":10,"dur":5,"pid":1,"tid":1}]}' >"$T/host.json"
expect "host-only trace" 3 "'$T/host.json'.*host-only" -- $A analyze -q --json "$T/sink.json" "$T/host.json"
printf 'Kind,Agent_Id,Queue_Id,Kernel_Name,Start_Timestamp,End_Timestamp\n' >"$T/kernel_trace.csv"
expect "header-only rocprof CSV" 3 "'$T/kernel_trace.csv'.*nothing usable" -- $A analyze -q --json "$T/sink.json" "$T/kernel_trace.csv"
expect "header-only rocprof CSV in compare" 3 "nothing usable" -- $A compare "$T/kernel_trace.csv" $tiny
sed '0,/"dur": 300,/s//"dur": -5,/' $tiny/rank0.json >"$T/onebad.json"
expect "one dropped event is a warning with the count and example" 0 \
	"warning: '$T/onebad.json': 1 malformed event skipped \(first: .*negative" -- $A analyze -q --json "$T/sink.json" "$T/onebad.json"

# --- 6. aorta's own outputs and temp files are not read back as ranks --------------
mkdir -p "$T/d6"
cp $tiny/rank0.json $tiny/rank1.json "$T/d6/"
$A analyze -q --json "$T/d6/a.json" --trace-out "$T/d6/o.json" --csv "$T/d6/csv" "$T/d6" || bad "analyze into its own folder"
$A report --no-plots --skip-steps 0 --log-dir "$T/d6" --label x -o "$T/d6/rep" >/dev/null 2>&1
cp $tiny/rank0.json "$T/d6/rank0.json.tmpAb12Cd"            # left by a killed older run
head -c 100 $tiny/rank0.json >"$T/d6/.rank1.json.aorta-tmp-Xy34Zw" # left by a SIGKILL
expect "own outputs and temp files skipped" 0 "aorta analyze: 2 ranks" -- $A analyze "$T/d6"
expect "own outputs named as such" 0 "o.json': skipped, an aorta overlap trace" -- $A analyze --json "$T/sink.json" "$T/d6"
expect "a leftover temp file named as such" 0 "tmpAb12Cd': skipped, a temporary file" -- $A analyze --json "$T/sink.json" "$T/d6"
expect "own outputs do not trip --strict" 0 "" -- $A analyze -q --strict --json "$T/sink.json" "$T/d6"

# --- 8. NaN and inf never pass a range check; a zero baseline is not "ok" ----------
expect "analyze --host-bound-pct nan" 2 "finite number" -- $A analyze -q --json "$T/sink.json" --host-bound-pct nan $tiny
expect "compare --fail-on-regression nan" 2 "finite number" -- $A compare --fail-on-regression nan $tiny $tiny
expect "compare --threshold inf" 2 "finite number" -- $A compare --threshold inf $tiny $tiny
expect "hwq compare --threshold nan" 2 "finite number" -- $A hwq compare --threshold nan -b "$T/hb.json" -t "$T/hb.json"
printf '{"throughput": 0, "latency_ms": {"p50": 0, "p95": 2, "p99": 3}}\n' >"$T/h0.json"
printf '{"throughput": 5, "latency_ms": {"p50": 3, "p95": 2, "p99": 3}}\n' >"$T/h3.json"
out=$($A hwq compare -b "$T/h0.json" -t "$T/h3.json" 2>&1)
echo "$out" | grep -q 'p50_ms .*no baseline' && ok || bad "zero baseline not said: $out"
echo "$out" | grep -qE 'p50_ms .*\+0\.00%' && bad "zero baseline printed as +0.00 %" || ok

# --- 9. nsys SQLite: hostile values are counted or refused ---------------------------
mk_nsys() { # FILE KERNEL_ROWS [no-stream]
	python3 - "$@" <<'PY'
import sqlite3, sys
path, rows = sys.argv[1], sys.argv[2]
stream = len(sys.argv) < 4
c = sqlite3.connect(path)
c.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL)")
c.execute("INSERT INTO StringIds VALUES (1, 'gemm_kernel'), (2, 'ncclKernel_AllReduce_RING_LL_Sum_float')")
c.execute('CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start, "end", deviceId INTEGER%s, shortName INTEGER)'
          % (", streamId INTEGER" if stream else ""))
if rows.startswith("GEN:"):
    rows = ";".join("%d, %d, 0, 7, 1" % (i * 10, i * 10 + 5) for i in range(int(rows[4:])))
for r in rows.split(";"):
    c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (%s)" % r)
c.commit()
PY
}
mk_nsys "$T/text.sqlite" "1000, 2000, 0, 7, 1; '1500', x'00ff', 0, 7, 2"
expect "nsys text/blob start and end are counted skips" 0 "1 malformed event skipped.*not an integer \(text, blob\)" -- \
	$A analyze -q --json "$T/sink.json" "$T/text.sqlite"
mk_nsys "$T/dangling.sqlite" "1000, 2000, 0, 7, 1; 1500, 2500, 0, 13, 99"
expect "nsys dangling name id is a counted skip" 0 "name id 99 is not in StringIds" -- \
	$A analyze -q --json "$T/dangling.json" "$T/dangling.sqlite"
grep -q 'unnamed kernel' "$T/dangling.json" && bad "dangling name id became (unnamed kernel)" || ok
mk_nsys "$T/nostream.sqlite" "1000, 2000, 0, 1" no-stream
expect "nsys without streamId" 3 "'$T/nostream.sqlite'.*streamId" -- $A analyze -q --json "$T/sink.json" "$T/nostream.sqlite"
mk_nsys "$T/big.sqlite" GEN:20000
head -c $(($(stat -c %s "$T/big.sqlite") / 2)) "$T/big.sqlite" >"$T/trunc.sqlite"
expect "truncated nsys database" 3 "'$T/trunc.sqlite'.*corrupt or truncated" -- $A analyze -q --json "$T/sink.json" "$T/trunc.sqlite"
expect "SQLite from a pipe is refused with the reason" 3 "regular file" -- \
	$TO bash -c "$A analyze -q --json "$T/sink.json" - <'$T/text.sqlite'"

# --- 10. smaller ---------------------------------------------------------------------
printf '\xef\xbb\xbf' | cat - $tiny/rank0.json >"$T/bom.json"
expect "a UTF-8 byte order mark is accepted" 0 "" -- $A analyze -q --json "$T/sink.json" "$T/bom.json"
python3 - "$T/m.jsonl" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    for step in range(3):
        t0 = step * 10.0
        f.write(json.dumps({"rank": 0, "world_size": 1, "step": step, "profile": {"index": step, "total_ms": 10.0,
            "ranges": [{"stream": "compute", "tag": "epoch0_step%d_forward" % step, "start_ms": t0, "end_ms": t0 + 4.0,
                        "duration_ms": 4.0, "metadata": {}}]}}) + "\n")
PY
expect "aorta JSONL as written" 0 "" -- $A analyze -q --json "$T/m.json" "$T/m.jsonl"
printf '\xef\xbb\xbf' | cat - "$T/m.jsonl" >"$T/mbom.jsonl"
expect "a UTF-8 byte order mark before aorta JSONL" 0 "" -- $A analyze -q --json "$T/mbom.json" "$T/mbom.jsonl"
expect "aorta JSONL from a pipe" 0 "" -- $TO bash -c "$A analyze -q --json '$T/mpipe.json' - <'$T/m.jsonl'"
bzip2 -c $tiny/rank0.json >"$T/r.json.bz2" 2>/dev/null && \
	expect "bzip2 input" 3 "'$T/r.json.bz2'.*bzip2 is not supported, decompress first" -- $A analyze -q --json "$T/sink.json" "$T/r.json.bz2"
xz -c $tiny/rank0.json >"$T/r.json.xz" 2>/dev/null && \
	expect "xz input" 3 "'$T/r.json.xz'.*xz is not supported, decompress first" -- $A analyze -q --json "$T/sink.json" "$T/r.json.xz"
sed 's/"In msg nelems": 1048576/"In msg nelems": 4611686018427387905/; s/"Out msg nelems": 1048576/"Out msg nelems": 4611686018427387905/' \
	$tiny/rank0.json >"$T/wrap.json"
$A analyze -q --json "$T/wrap.json.out" "$T/wrap.json" 2>/dev/null
python3 - "$T/wrap.json.out" <<'PY' && ok || bad "nelems x dtype size wrapped into a small byte count"
import json, sys
d = json.load(open(sys.argv[1]))
for c in d["ranks"][0]["collectives"]:
    # 4611686018427387905 x 4 bytes wraps to 4 in 64 bits
    assert c["bytes"] != 4, c
PY
mkdir -p "$T/d10"
for r in $(seq 0 15); do sed "s/\"rank\": 0/\"rank\": $r/; s/\"world_size\": 2/\"world_size\": 16/" $tiny/rank0.json >"$T/d10/rank$r.json"; done
$A analyze -j 8 --json "$T/sink.json" "$T/d10" >/dev/null 2>"$T/progress.txt"
grep -vqE '^aorta: ' "$T/progress.txt" && bad "a progress line does not start with 'aorta: '" || ok
grep -q 'aorta: aorta:' "$T/progress.txt" && bad "progress lines interleaved" || ok
[ "$(grep -c '^aorta: read ' "$T/progress.txt")" = 16 ] && ok || bad "expected 16 progress lines"

echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
