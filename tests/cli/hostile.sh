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
# a trace committed with Git LFS and not pulled: its pointer is named as one, with what to run
printf 'version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345678\n' \
	>"$T/d2/rank3.json"
expect "a Git LFS pointer in a folder is named one" 0 \
	"'$T/d2/rank3.json': skipped, a Git LFS pointer, not the trace \\(the trace is 12345678 bytes\\): run 'git lfs pull'" -- \
	$A analyze -q --json "$T/d2.json" "$T/d2"
expect "a Git LFS pointer given as a trace is named one (exit 3)" 3 \
	"'$T/d2/rank3.json': byte 0: a Git LFS pointer, not the trace .*git lfs pull" -- \
	$A analyze -q --json "$T/d2.json" "$T/d2/rank3.json"
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

# ===== issue 28: the second round ===================================================
R="python3 tests/cli/hostile_ranks.py"
same() { cmp -s "$1" "$2" && ok || bad "$3"; }

# --- 11. inputs are never outputs (one guard: resolved path, device, inode) --------
mkdir -p "$T/g"
cp $tiny/rank0.json $tiny/rank1.json "$T/g/"
expect "--json onto a trace of the input folder" 2 "'$T/g/rank0.json'.*also the output of --json" -- \
	$A analyze -q "$T/g" --json "$T/g/rank0.json"
same "$T/g/rank0.json" $tiny/rank0.json "the input trace was replaced by --json"
expect "--json and --trace-out one file" 2 "output of --trace-out is also the output of --json" -- \
	$A analyze -q --json "$T/g.out.json" --trace-out "$T/g.out.json" "$T/g"
[ ! -e "$T/g.out.json" ] && ok || bad "an output was written although two outputs alias"
ln -s rank1.json "$T/g/out-alias.json"
expect "--json through a symlink to an input" 2 "also the output of --json" -- \
	$A analyze -q --json "$T/g/out-alias.json" "$T/g/rank0.json" "$T/g/rank1.json"
same "$T/g/rank1.json" $tiny/rank1.json "the input behind a symlink was replaced"
rm "$T/g/out-alias.json"
ln "$T/g/rank1.json" "$T/g.hard.json"
expect "--json onto a hard link of an input (same inode)" 2 "also the output of --json" -- \
	$A analyze -q --json "$T/g.hard.json" "$T/g"
same "$T/g/rank1.json" $tiny/rank1.json "the input behind a hard link was replaced"
expect "--csv folder holding an input named like a table" 2 "'$T/gc/ranks.csv'.*--csv" -- \
	bash -c "mkdir -p '$T/gc' && cp $tiny/rank0.json '$T/gc/ranks.csv' && $A analyze -q --csv '$T/gc' '$T/gc/ranks.csv'"
same "$T/gc/ranks.csv" $tiny/rank0.json "the input named ranks.csv was replaced by --csv"
$A analyze -q --json "$T/g.saved.json" "$T/g" || bad "analyze for a saved analysis"
cp "$T/g.saved.json" "$T/g.saved.orig"
expect "compare --json onto one of its inputs" 2 "also the output of --json" -- \
	$A compare --json "$T/g.saved.json" "$T/g.saved.json" "$T/g"
same "$T/g.saved.json" "$T/g.saved.orig" "compare replaced its input"
expect "--rules file as --json" 2 "also" -- $A analyze -q --rules "$T/g.saved.orig" --json "$T/g.saved.orig" "$T/g"
same "$T/g.saved.json" "$T/g.saved.orig" "--rules file replaced"
$A report --no-plots --skip-steps 0 --log-dir "$T/g" --label a -o "$T/grep" >/dev/null 2>&1 || bad "report into a new folder"
mkdir -p "$T/grep/run" && cp $tiny/rank*.json "$T/grep/run/"
expect "report --output holding its --log-dir" 2 "is inside the --output folder" -- \
	$A report --no-plots --skip-steps 0 --log-dir "$T/grep/run" --label a -o "$T/grep"
[ -f "$T/grep/run/rank0.json" ] && ok || bad "report --output replaced the folder holding its input"

# --- 12. one folder walk: a visited set, inputs deduplicated -----------------------
mkdir -p "$T/w"
cp $tiny/rank0.json $tiny/rank1.json "$T/w/"
ln -s . "$T/w/loop1"; ln -s . "$T/w/loop2"; ln -s "$T/w" "$T/w/abs"; mkdir -p "$T/w/sub"; ln -s .. "$T/w/sub/up"
expect "symlinked folders are read once, never loop" 0 "aorta analyze: 2 ranks" -- $TO $A analyze "$T/w"
ln -s rank1.json "$T/w/latest.json"
expect "a link to a rank file is the same rank" 0 "latest.json': the same file as '$T/w/rank1.json'" -- \
	$TO $A analyze --json "$T/wl.json" "$T/w"
expect "a link to a rank file: still 2 ranks" 0 "aorta analyze: 2 ranks" -- $TO $A analyze "$T/w"
expect "a folder and its member both named" 0 "rank0.json': named twice" -- \
	$TO $A analyze --json "$T/wl.json" "$T/w" "$T/w/rank0.json"
python3 - "$T/wl.json" <<'PY' && ok || bad "a folder and its member: not 2 distinct ranks"
import json, sys
d = json.load(open(sys.argv[1]))
assert sorted(r["rank"] for r in d["ranks"]) == [0, 1], [r["rank"] for r in d["ranks"]]
PY
expect "standard input named twice" 2 "standard input can be read once" -- \
	bash -c "$A analyze -q --json '$T/s2.json' - - <$tiny/rank0.json"
printf '%s\n' "$T/w/rank0.json" "@$T/empty.list" >"$T/nested.list"
expect "a list naming a list" 2 "lists do not nest" -- $A analyze -q --json "$T/sink.json" "@$T/nested.list"
mkdir -p "$T/sw"
printf 'name: loops\ntrials: 1\nskip_steps: 0\nconfound: false\naxes:\n  X: [1]\n' >"$T/sw/r.yaml"
expect "sweep: a trial output with folder loops is analysed, not walked for ever" 0 "" -- \
	$TO $A sweep run --recipe "$T/sw/r.yaml" -o "$T/sw/o" -- sh -c \
	"cp $PWD/$tiny/rank0.json $PWD/$tiny/rank1.json {out}/ && ln -s . {out}/a && ln -s . {out}/b && ln -s . {out}/c"
has "sweep's trial analysed" "$T/sw/o/cells/c01/t1/result.json" '"status": "ok"'
has "sweep's trial analysed with its 2 ranks" "$T/sw/o/cells/c01/t1/result.json" '"ranks": 2,'

# --- 13. collectives matched on part of their group ---------------------------------
$R "$T/c3" 3 2 pg=2:7
expect "a rank under another group name: the collectives are incomplete, its rank named" 0 \
	"4 collectives matched on part of their group.*all_reduce in group '0'.*: 2 of 3 ranks, missing 2\)" -- \
	$A analyze --json "$T/c3.json" "$T/c3"
out=$($A analyze "$T/c3" 2>&1)
echo "$out" | grep -q 'late rank (caused' && bad "a late rank named from a partial group: $(echo "$out" | grep 'late rank')" || ok
python3 - "$T/c3.json" <<'PY' && ok || bad "incomplete collectives charged waiting"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["across_ranks"]["incomplete_collectives"] == 4, d["across_ranks"]
for r in d["ranks"]:
    assert r["wait"]["caused_ms"] == 0 and r["wait"]["wait_ms"] == 0, r["wait"]
PY
$R "$T/c3ok" 3 2
expect "the same ranks in one group: rank 2 named late" 0 "late rank \(caused >= 60% of the waiting[^)]*\): 2" -- $A analyze "$T/c3ok"

# --- 14. values no run can produce --------------------------------------------------
$R "$T/p0" 3 2 zero=1
expect "zero-length communication kernels are malformed" 0 \
	"rank1.json': 4 malformed events skipped \(first: zero-length communication kernel" -- $A analyze --json "$T/sink.json" "$T/p0"
$R "$T/p1" 3 2 huge=0
expect "a 27-hour kernel in a 3 ms trace" 0 "rank0.json': 1 malformed event skipped \(first: implausibly long span: 'gemm_kernel' lasts 27.8 h" -- \
	$A analyze --json "$T/p1.json" "$T/p1"
python3 - "$T/p1.json" <<'PY' && ok || bad "the 27-hour kernel still counts"
import json, sys
d = json.load(open(sys.argv[1]))
r0 = [r for r in d["ranks"] if r["rank"] == 0][0]
assert r0["total"]["compute_ms"] < 1000, r0["total"]
PY
$R "$T/p2" 3 2 dupstep=1
expect "a step number twice on disjoint ranges" 0 "step 7 appears twice.*the later one left out" -- $A analyze --json "$T/sink.json" "$T/p2"
$R "$T/p3" 3 2 back=1
expect "a clock going back inside a rank" 0 "step 7 starts 1.400 ms before step 6 ends \(the clock went backwards" -- \
	$A analyze --json "$T/sink.json" "$T/p3"
$R "$T/p4" 3 2 nelems=1:5
expect "In msg nelems disagreeing across one collective" 0 \
	"4 calls disagree with their collective's other ranks.*rank 0 says 4194304 bytes, rank 1 20 bytes" -- $A analyze --json "$T/sink.json" "$T/p4"
$R "$T/p5" 3 2 allnelems=1000000000000
expect "bus bandwidth above any interconnect" 0 "3 collective rows with a bus bandwidth above any interconnect" -- \
	$A analyze --json "$T/p5.json" "$T/p5"
python3 - "$T/p5.json" <<'PY' && ok || bad "an impossible bus bandwidth printed as a figure"
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["ranks"]:
    for c in r["collectives"]:
        assert c["busbw_gbps"] is None and c["busbw_kernel_gbps"] is None, c
PY
# a re-run appended to a JSONL: its lines are left out, in analyze and in report alike
python3 - "$T/g1.jsonl" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    for step in range(3):
        f.write(json.dumps({"rank": 0, "world_size": 1, "global_step": step, "profile": {"total_ms": 10.0 + step,
            "ranges": [{"stream": "compute", "tag": "epoch0_step%d_forward" % step, "start_ms": 0.0, "end_ms": 4.0,
                        "duration_ms": 4.0, "metadata": {}}]}}) + "\n")
PY
cat "$T/g1.jsonl" "$T/g1.jsonl" >"$T/g2.jsonl"
expect "JSONL step lines appended twice" 0 "3 malformed events skipped \(first: line 4: step 0 again \(first on line 1" -- \
	$A analyze --json "$T/g2.json" "$T/g2.jsonl"
$A analyze -q --json "$T/g1.json" "$T/g1.jsonl" || bad "analyze the JSONL"
python3 - "$T/g1.json" "$T/g2.json" <<'PY' && ok || bad "a JSONL re-run appended changed the analysis"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
sa, sb = a["ranks"][0]["steps"], b["ranks"][0]["steps"]
assert len(sa) == len(sb) == 3, (len(sa), len(sb))
assert [s["step_ms"] for s in sa] == [s["step_ms"] for s in sb], (sa, sb)
assert [s["step_ms"] for s in sb][:2] == [10.0, 11.0], sb
PY
$A report --no-plots --skip-steps 0 --log-dir "$T/g2.jsonl" --label r -o "$T/g2rep" >/dev/null 2>&1 || bad "report on the appended JSONL"
python3 - "$T/g2rep/summary.json" "$T/g1.json" <<'PY' && ok || bad "report and analyze disagree on the appended JSONL"
import json, sys
r = json.load(open(sys.argv[1]))["datasets"]["r"]
a = [s["step_ms"] for s in json.load(open(sys.argv[2]))["ranks"][0]["steps"]]
assert r["steps_read"] == 3 and r["count"] == 3, r
assert abs(r["mean_step_ms"] - sum(a) / len(a)) < 1e-6, (r["mean_step_ms"], a)
PY

# --- 15. limits and signals --------------------------------------------------------
mkdir -p "$T/fz"
expect "past the file-size limit: exit 5 naming the file, not a silent kill" 5 "'$T/fz/o.json': write failed: File too large" -- \
	bash -c "ulimit -f 8; exec $A analyze -q --json '$T/fz/o.json' $tiny"
left=$(find "$T/fz" -name '*aorta-tmp*' | wc -l)
[ "$left" = 0 ] && ok || bad "$left temporary files left after the file-size limit"
mkdir -p "$T/em/a/b/c/d/e"
cp $tiny/rank0.json "$T/em/"; cp $tiny/rank1.json "$T/em/a/b/c/d/e/"
n5=0
for n in 6 7 8 9 10 11 12 14 16; do
	out=$(ulimit -n $n; $A analyze -q --json "$T/em.json" "$T/em" 2>&1); rc=$?
	case $rc in
	5) echo "$out" | grep -q 'Too many open files' && n5=$((n5 + 1)) || bad "exit 5 without the errno: $out" ;;
	0) python3 -c "import json,sys; assert len(json.load(open(sys.argv[1]))['ranks']) == 2" "$T/em.json" ||
		bad "ulimit -n $n: exit 0 without both ranks: $out" ;;
	*) bad "ulimit -n $n: exit $rc: $out" ;;
	esac
done
[ "$n5" -gt 0 ] && ok || bad "no descriptor limit gave exit 5"
printf '0 9223372036854775807\n1 0\n' >"$T/off1"
expect "--clock-offsets INT64_MAX" 3 "'$T/off1': line 1: offset '9223372036854775807' ns is out of range" -- \
	$A analyze -q --json "$T/sink.json" --clock-offsets "$T/off1" $tiny
printf '0 5\n1 0\n0 7\n' >"$T/off2"
expect "--clock-offsets with a rank twice" 3 "'$T/off2': line 3: rank '0' is given a second time" -- \
	$A analyze -q --json "$T/sink.json" --clock-offsets "$T/off2" $tiny
printf 'comm ^(a|aa)+\\1$\n' >"$T/backref.rules"
expect "--rules with a back-reference: refused, not a hang" 3 "line 1: .*back-reference" -- \
	$TO $A analyze -q --json "$T/sink.json" --rules "$T/backref.rules" $tiny
long=$(printf 'x%.0s' $(seq 245))
expect "a 245-character output name" 0 "" -- $A analyze -q --json "$T/$long.json" $tiny
[ -s "$T/$long.json" ] && ok || bad "the 245-character output is missing"

# --- 16. smaller ---------------------------------------------------------------------
expect "report labels with one file-name stem" 2 "labels 'a b' and 'a_b' both become the chart file name 'a_b_\*'" -- \
	$A report --no-plots --skip-steps 0 --log-dir $tiny --label 'a b' --log-dir "$T/g" --label a_b -o "$T/rstem"
printf 'name: quoting\ntrials: 1\nskip_steps: 0\nconfound: false\naxes:\n  TAG: ["a b", "x; touch %s/PWNED", "it'"'"'s $(touch %s/PWNED2)"]\n' "$T" "$T" >"$T/q.yaml"
$TO $A sweep run --recipe "$T/q.yaml" -o "$T/q" -- sh -c \
	'echo {TAG} >{out}/tag.txt; echo "[{TAG}]" >>{out}/tag.txt; echo '"'"'<{TAG}>'"'"' >>{out}/tag.txt' >/dev/null 2>&1
[ ! -e "$T/PWNED" ] && [ ! -e "$T/PWNED2" ] && ok || bad "a sweep axis value ran as shell code"
has "an axis value stays one word, unquoted or in quotes" "$T/q/cells/c02/t1/out/tag.txt" "^x; touch $T/PWNED$"
has "an axis value inside double quotes" "$T/q/cells/c03/t1/out/tag.txt" "^\[it's \\\$\(touch $T/PWNED2\)\]$"
has "an axis value inside single quotes" "$T/q/cells/c03/t1/out/tag.txt" "^<it's \\\$\(touch $T/PWNED2\)>$"
expect "SQLite redirected to standard input: name the file" 3 "SQLite opens its file by name" -- \
	bash -c "$A analyze -q --json '$T/sink.json' - <'$T/text.sqlite'"

# --- 17. op tables: matched by (group, step, order in the step), step windows from
#     their own work, the plausibility layer, checked arithmetic, the size cap --------
O="python3 tests/cli/hostile_optable.py"
# owait FILE.json W0 W1: rank 0 waited W0 ms and rank 1 W1 ms (+- 1 us), clocks agree
owait() {
	python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
w = [r["wait"]["wait_ms"] for r in d["ranks"]]
off = [r["clock"]["offset_ms"] for r in d["ranks"]]
assert abs(w[0] - float(sys.argv[2])) < 0.001 and abs(w[1] - float(sys.argv[3])) < 0.001, w
assert all(abs(o) < 0.001 for o in off), off
PY
}
mkdir -p "$T/ot"
$O "$T/ot/base.csv"
$A analyze -q --json "$T/ot/base.json" "$T/ot/base.csv" && owait "$T/ot/base.json" 0.540 0 && ok || bad "the op table without a fault"
$O "$T/ot/missing.csv" missing=1:3:1
expect "op table: a timer row missing is named with its step, group and counts" 0 \
	"1 step where ranks made different numbers of calls .*step 3, all_reduce in group 'dp': rank 0 made 3 calls, rank 1 2" -- \
	$A analyze --json "$T/ot/missing.json" "$T/ot/missing.csv"
# 16 calls of 30 us and the step's mispaired one (50 us): the clock stays, no step shifts
owait "$T/ot/missing.json" 0.530 0 && ok || bad "a missing row moved the clock or the waiting beyond its step"
$O "$T/ot/dup.csv" dup=1:3:1
expect "op table: a timer row written twice is named" 0 "step 3, all_reduce in group 'dp': rank 1 made 4 calls, rank 0 3" -- \
	$A analyze --json "$T/ot/dup.json" "$T/ot/dup.csv"
owait "$T/ot/dup.json" 0.510 0.020 && ok || bad "a duplicated row moved the clock or the waiting beyond its step"
$O "$T/ot/from.csv" from=1:2
expect "op table: a rank whose table starts a step later is named" 0 "step 1, all_reduce in group 'dp': rank 0 made 3 calls, rank 1 0" -- \
	$A analyze --json "$T/ot/from.json" "$T/ot/from.csv"
owait "$T/ot/from.json" 0.450 0 && ok || bad "a table starting a step later shifted that rank's clock by a step"
$O "$T/ot/prefetch.csv" prefetch
expect "op table: a prefetch row of the next step drops no step" 0 "" -- $A analyze -q --strict --json "$T/ot/prefetch.json" "$T/ot/prefetch.csv"
python3 - "$T/ot/prefetch.json" <<'PY' && ok || bad "a prefetch row of the next step changed the step windows"
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["ranks"]:
    assert r["skipped_events"] == 0, r["skipped_first"]
    assert [s["step"] for s in r["steps"]] == [1, 2, 3, 4, 5, 6], [s["step"] for s in r["steps"]]
    assert [s["step_ms"] for s in r["steps"]] == [1.0] * 5 + [0.85], [s["step_ms"] for s in r["steps"]]
PY
$O "$T/ot/seqdup.csv" seq seqdup=1:2:1
expect "op table: a repeated seq is refused with its line" 0 \
	"seqdup.csv line 41: seq 3 of group 'dp' on rank 1 again \(first on line 40\): a repeated seq would merge two calls" -- \
	$A analyze --json "$T/ot/seqdup.json" "$T/ot/seqdup.csv"
owait "$T/ot/seqdup.json" 0.510 0 && ok || bad "a repeated seq merged two calls"
$O "$T/ot/late.csv" launch=100 late_launch=1:3
$O "$T/ot/nolaunch.csv" launch=100 nolaunch=1:3
expect "op table: a launch after its op's start is named and left out" 0 \
	"late.csv': 1 malformed event skipped \(first: 'fwd' starts 0.040 ms before it is launched .*the launch left out" -- \
	$A analyze --json "$T/ot/late.json" "$T/ot/late.csv"
$A analyze -q --json "$T/ot/nolaunch.json" "$T/ot/nolaunch.csv" 2>/dev/null
python3 - "$T/ot/late.json" "$T/ot/nolaunch.json" <<'PY' && ok || bad "a launch after its op's start still counts"
import json, sys
def strip(d):
    d.pop("inputs", None)
    for r in d["ranks"]:
        for k in ("path", "skipped_events", "skipped_first"):
            r.pop(k, None)
    return d
a, b = (strip(json.load(open(p))) for p in sys.argv[1:3])
assert a == b
PY
$O "$T/ot/zero.csv" zerokind
expect "op table: a zero-length collective judged by its kind, not its name" 0 \
	"zero.csv': 1 malformed event skipped \(first: zero-length communication kernel 'fwd_like'" -- \
	$A analyze --json "$T/ot/zero.json" "$T/ot/zero.csv"
has "a zero-length gemm named like NCCL is kept" "$T/ot/zero.json" '"name": "ncclDevKernel_AllReduce_Sum_f32"'
printf '# aorta.optable/1\nrank,op,kind,start_ms,dur_ms\n0,a,gemm,0,0\n0,b,all_reduce,1,0\n0,c,gemm,2,1\n' >"$T/ot/ms.csv"
expect "op table in ms: a 0 ms collective is a rounded short one, kept" 0 "" -- $A analyze -q --strict --json "$T/ot/ms.json" "$T/ot/ms.csv"
# times at the limits: no overflow (UBSan), the row past them named with its line
printf '# aorta.optable/1\nrank,op,kind,start_ns,dur_ns\n0,a,gemm,0,1000\n0,b,gemm,4611686018427387000,1000\n0,c,gemm,2000,1000\n' >"$T/ot/big.csv"
expect "op table: start + duration past 2^62 ns" 0 \
	"big.csv line 4: duration '1000' is beyond the limits of a trace" -- $A analyze --json "$T/ot/big.json" "$T/ot/big.csv"
has "the rows within the limits are analysed" "$T/ot/big.json" '"step_ms": 0.003000,'
printf '# aorta.optable/1\nrank,op,kind,start_ns,end_ns\n0,a,gemm,-2305843009213693952,-2305843009213692952\n0,b,gemm,4611686018427386000,4611686018427387000\n' >"$T/ot/span.csv"
expect "op table: times at both limits, 1.5 x 2^62 ns apart" 0 "" -- $A analyze -q --json "$T/ot/span.json" "$T/ot/span.csv"
$A analyze -q --json "$T/ot/span2.json" "$T/ot/span.json" && ok || bad "analyze wrote an analysis of times at the limits it cannot read back"
printf '# aorta.optable/1\nrank,op,kind,start_ns,dur_ns\n0,a,gemm,0,9223372036854775807\n0,b,gemm,9223372036854775807,1\n0,c,gemm,5,5\n' >"$T/ot/wrap.csv"
expect "op table: int64 values are out of range, not wrapped" 0 "2 malformed events skipped" -- \
	$A analyze --json "$T/ot/wrap.json" "$T/ot/wrap.csv"
printf '{"schema": "aorta.optable/1"}\n{"rank": 0, "op": "a", "kind": "gemm", "start_ns": 100, "end_ns": 200, "launch_ns": -9000000000000000000}\n{"rank": 0, "op": "b", "kind": "gemm", "start_ns": 300, "end_ns": 400}\n' >"$T/ot/launch.jsonl"
expect "op table: a launch beyond the limits" 0 "launch '-9000000000000000000' is beyond the time limits" -- \
	$A analyze --json "$T/ot/launch.json" "$T/ot/launch.jsonl"
# the 1 GiB cap before the read: a sparse plain file is refused at once, a
# gzip stream while it is read, line by line: neither fills the memory
{ printf '# aorta.optable/1\nrank,op,kind,start_ns,dur_ns\n'; } >"$T/ot/huge.csv"
truncate -s 1100M "$T/ot/huge.csv"
python3 - "$T/ot/huge.gz" <<'PY'
import sys, zlib
c = zlib.compressobj(1, zlib.DEFLATED, 31)
with open(sys.argv[1], "wb") as o:
    o.write(c.compress(b"# aorta.optable/1\nrank,op,kind,start_ns,dur_ns\n"))
    blk = b"# a comment line of sixty-four bytes, padding the table......\n" * (1 << 14)
    for _ in range(1100):
        o.write(c.compress(blk))
    o.write(c.flush())
PY
for f in huge.csv huge.gz; do
	rss=$(python3 - "$A" "$T/ot/$f" <<'PY'
import resource, subprocess, sys
r = subprocess.run([sys.argv[1], "analyze", "-q", "--json", sys.argv[2] + ".out", sys.argv[2]],
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=300)
err = r.stderr.decode()
ok = r.returncode == 3 and "1024 MiB limit for an op table" in err
print(int(ok), resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024, err.strip()[-200:])
PY
)
	[ "${rss%% *}" = 1 ] && ok || bad "$f past the 1 GiB cap: $rss"
	m=${rss#* }; m=${m%% *}
	[ "$m" -lt 200 ] && ok || bad "$f past the 1 GiB cap cost $m MiB of memory"
done
rm -f "$T/ot/huge.csv" "$T/ot/huge.gz"

# --- 18. saved analyses: every field's range and the records' rules, the
#     what-if's included, in analyze, compare and report alike -----------------------
W="$T/w.json"
$A analyze -q --json "$W" tests/data/straggler/ddp_const_r1 2>/dev/null || bad "analyze ddp_const_r1"
# wbad NAME JQ PATTERN: the damaged file is exit 3 naming the field in analyze,
# compare and report, and nothing is written
wbad() {
	local name=$1 filter=$2 pat=$3 out rc cmd
	# (jq writes integers past 2^53 as doubles: a placeholder 777000777 becomes $BIG)
	jq "$filter" "$W" | sed "s/777000777/${BIG:-777000777}/" >"$T/damaged.json" || { bad "$name: jq"; return; }
	for cmd in "analyze -q --json $T/damaged.out.json $T/damaged.json" "compare $W $T/damaged.json" \
		"report --no-plots --skip-steps 0 --log-dir $T/damaged.json --label d -o $T/damaged.rep"; do
		out=$($A $cmd 2>&1); rc=$?
		if [ $rc != 3 ] || ! printf '%s' "$out" | grep -qE -- "$pat"; then
			bad "$name (${cmd%% *}): exit $rc: $(printf '%s' "$out" | tail -n 2)"; return
		fi
		printf '%s' "$out" | grep -q 'nan' && { bad "$name (${cmd%% *}) printed nan"; return; }
	done
	[ ! -e "$T/damaged.out.json" ] && [ ! -e "$T/damaged.rep" ] && ok || bad "$name: an output was written"
}
WI=.across_ranks.what_if
wbad "what-if: a slowdown below 1" "$WI.slowdown = 0.5" "what_if.slowdown: 0.500000 is not measured / ideal"
wbad "what-if: a negative slowdown" "$WI.slowdown = -2" "what_if.slowdown: expected a value > 0, got -2"
wbad "what-if: a 150 % gain" "$WI.by_rank[1].gain_pct = 150" "what_if.by_rank\[1\].gain_pct: expected at most 100 % \(of the step\), got 150"
wbad "what-if: an ideal step longer than the measured one" \
	"$WI.ideal_step_ms = 85.928164 | $WI.slowdown = 0.5" "what_if.ideal_step_ms: the ideal step 85.928164 ms is longer than the replayed one"
wbad "what-if: a rank fix of a rank not in the run" "$WI.by_rank[1].rank = 7" "what_if.by_rank\[1\].rank: rank 7 is not a rank of the run"
wbad "what-if: a group of ranks not in the run" "$WI.by_group = [{\"fix\": \"group x\", \"ranks\": \"0,9\", \"step_ms_if_fixed\": 42.964082, \"gain_ms\": 0, \"gain_pct\": 0}]" \
	"what_if.by_group\[0\].ranks: rank 9 is not a rank of the run"
wbad "what-if: a critical path on a rank not in the run" "$WI.critical_path[0].rank = 9" "what_if.critical_path\[0\].rank: rank 9 is not a rank of the run"
wbad "what-if: a stage of a rank not in the run" "$WI.stages = [{\"rank\": 5, \"stage\": 0}]" "what_if.stages: \[0\]: 5 is not a rank of the analysis"
wbad "what-if: an unexplained share of 500 %" "$WI.unexplained_share = 5" "what_if.unexplained_share: expected a share in \[0, 1\], got 5"
wbad "what-if: a critical-path share of 500 %" "$WI.critical_path[0].share = 5" "what_if.critical_path\[0\].share: expected a share in \[0, 1\], got 5"
wbad "what-if: shares adding up past the path" "$WI.critical_path[1].share = 0.9" "what_if.critical_path: its shares add up to"
wbad "what-if: a missing figure" "del($WI.measured_step_ms)" "what_if.measured_step_ms: missing"
wbad "what-if: a null figure" "$WI.replay_step_ms = null" "what_if.replay_step_ms: expected a number, got null"
wbad "what-if: a 500 ms gain on a 43 ms step" "$WI.by_op[4].gain_ms = 500 | $WI.by_op[4].gain_pct = 1163.76" \
	"what_if.by_op\[4\].gain_pct: expected at most 100 %"
wbad "what-if: a gain that is not replay less fixed" "$WI.by_op[4].gain_ms = 30" "what_if.by_op\[4\].gain_ms: 30.000000 ms is not the replayed step"
wbad "what-if: a step's best gain above its step" "$WI.steps[0].best_gain_ms = 500" "what_if.steps\[0\].best_gain_ms: 500.000000 ms is not"
wbad "what-if: a best fix that is none of the fixes" "$WI.steps[0].best_fix = \"rank 9\"" "what_if.steps\[0\].best_fix: 'rank 9' is none of the fixes"
wbad "what-if: a step no rank has" "$WI.steps[0].step = 99" "what_if.steps\[0\].step: step 99 is not a step of rank 0"
wbad "what-if: fewer steps than used" "$WI.steps |= .[1:]" "what_if.steps: 5 steps, steps_used says 6"
wbad "what-if: reproduced with a step that is not" "$WI.steps[0].reproduced = false | $WI.steps[0].reason = \"x\"" \
	"what_if.reproduced: true, yet a step is not"
wbad "what-if: a step not reproduced without a reason" "$WI.steps[0].reproduced = false" "what_if.steps\[0\].reason: no reason why"
wbad "what-if: a measured step that is not its steps' mean" "$WI.measured_step_ms = 40 | $WI.slowdown = 2.014007" \
	"what_if.measured_step_ms: 40.000000 ms is not the mean of its steps"
wbad "what-if: an empty verdict" "$WI.verdict = \"\"" "what_if.verdict: expected a text, got an empty one"
wbad "what-if: not ok without a reason" "$WI = {\"ok\": false}" "what_if.reason: missing"
wbad "what-if: a worst error that is not its steps'" "$WI.replay_error_pct = 7" "what_if.replay_error_pct: 7.0000 % is not its worst step's"
# the rest of the record: values no run gives, in the same three commands
wbad "a step whose window is not its bounds" ".ranks[0].steps[1].step_ms = 1" "ranks\[0\].steps\[1\].step_ms: 1.000000 ms is not the step's window"
wbad "steps out of time order" ".ranks[0].steps[1] |= (.start_ns -= 1000 | .step_ms += 0.001 | .idle_ms += 0.001)" \
	"ranks\[0\].steps\[1\].start_ns: step [0-9]+ starts before step [0-9]+ ends"
wbad "compute beyond GPU busy" ".ranks[0].total.compute_ms = .ranks[0].total.busy_ms + 1" "ranks\[0\].total.compute_ms: compute .* exceeds GPU busy"
wbad "idle that is not window less busy" ".ranks[0].total.idle_ms += 1" "ranks\[0\].total.idle_ms: idle [0-9.]+ ms is not the window"
wbad "a collective's calls past its total" ".ranks[0].collectives[0].max_ms = 1e6" "ranks\[0\].collectives\[0\].max_ms: the longest call"
wbad "a collective of no call" ".ranks[0].collectives[0].count = 0" "ranks\[0\].collectives\[0\].count: expected an integer >= 1, got 0"
wbad "a world size below -1" ".ranks[1].world_size = -5" "ranks\[1\].world_size: expected an integer >= -1, got -5"
wbad "a stream busy beyond the rank's window" ".ranks[0].streams[0].busy_ms = 1e6" "ranks\[0\].streams: stream [0-9]+ busy"
wbad "waiting caused that is not the ranks'" ".across_ranks.waiting_caused_ms = 1" "across_ranks.waiting_caused_ms: 1.000000 ms is not the ranks'"
wbad "a time figure past the limits" ".ranks[0].total.step_ms = 9e12" "ranks\[0\].total.step_ms: 9e\+12 ms is out of range"
BIG=9000000000000000000 wbad "a step time past the limits" ".ranks[0].steps[0].end_ns = 777000777" \
	"ranks\[0\].steps\[0\].end_ns: expected an integer <= 4611686018427387904"
wbad "host_bound_pct above 100" ".options.host_bound_pct = 500" "options.host_bound_pct: expected a percentage in \[0, 100\], got 500"
# what analyze writes it reads back: a table whose rank starts a step later (the
# ideal replay was longer than the step) and times 1.5 x 2^62 ns apart
$O "$T/ot/from2.csv" from=1:2
$A analyze -q --json "$T/from2.json" "$T/ot/from2.csv" 2>/dev/null && $A analyze -q --json "$T/from2b.json" "$T/from2.json" && ok ||
	bad "analyze wrote a what-if it cannot read back"
jq -e '.across_ranks.what_if | .ideal_step_ms <= .replay_step_ms and .slowdown >= 1' "$T/from2.json" >/dev/null && ok ||
	bad "an ideal step longer than the replayed one: $(jq -c '.across_ranks.what_if | {ideal_step_ms, replay_step_ms, slowdown}' "$T/from2.json")"

# --- 19. every file a command reads is guarded, list files, rules and offsets
#     included, through symlinks; outputs through symlinks stay links ---------------
mkdir -p "$T/gl"
cp $tiny/rank0.json $tiny/rank1.json "$T/gl/"
printf '%s\n' "$T/gl/rank0.json" "$T/gl/rank1.json" >"$T/gl/list.txt"
cp "$T/gl/list.txt" "$T/gl/list.orig"
for o in --json --trace-out; do
	expect "@LIST named as $o" 2 "'$T/gl/list.txt': this input is also the output of $o" -- \
		$A analyze -q $o "$T/gl/list.txt" "@$T/gl/list.txt"
	same "$T/gl/list.txt" "$T/gl/list.orig" "the @LIST was overwritten by $o"
done
expect "@LIST named as compare's --json" 2 "this input is also the output of --json" -- \
	$A compare --json "$T/gl/list.txt" "@$T/gl/list.txt" $tiny
same "$T/gl/list.txt" "$T/gl/list.orig" "the @LIST was overwritten by compare --json"
ln -s list.txt "$T/gl/list.link"
expect "@LIST reached through a symlink named as --json" 2 "this input is also the output of --json \('$T/gl/list.link'\)" -- \
	$A analyze -q --json "$T/gl/list.link" "@$T/gl/list.txt"
same "$T/gl/list.txt" "$T/gl/list.orig" "the @LIST behind a symlink was overwritten"
expect "@LIST named as a --csv table" 2 "this input is also the output of --csv" -- \
	bash -c "cp '$T/gl/list.txt' '$T/gl/kernels.csv' && $A analyze -q --csv '$T/gl' '@$T/gl/kernels.csv'"
printf '0 0\n1 0\n' >"$T/gl/off.txt"
expect "--clock-offsets named as --trace-out" 2 "also the output of --trace-out" -- \
	$A analyze -q --clock-offsets "$T/gl/off.txt" --trace-out "$T/gl/off.txt" "$T/gl/rank0.json" "$T/gl/rank1.json"
printf 'comm ^nothing$\n' >"$T/gl/r.rules"
ln -s r.rules "$T/gl/rules.link"
expect "--rules reached through a symlink named as --json" 2 "also" -- \
	$A analyze -q --rules "$T/gl/rules.link" --json "$T/gl/r.rules" "$T/gl/rank0.json"
has "the rules file is whole" "$T/gl/r.rules" '^comm \^nothing\$$'
$A analyze -q --json "$T/gl/a.json" "$T/gl/rank0.json" "$T/gl/rank1.json" 2>/dev/null
expect "report: a saved analysis as --log-dir and --output" 2 "" -- \
	$A report --no-plots --skip-steps 0 --log-dir "$T/gl/a.json" --label a -o "$T/gl/a.json"
has "the saved analysis is whole" "$T/gl/a.json" '"schema": "aorta.analysis/'
# outputs through symlinks: the link stays, nothing is left beside it
mkdir -p "$T/gl/real" "$T/gl/realcsv"
ln -s real "$T/gl/replink"; ln -s realcsv "$T/gl/csvlink"; ln -s target.json "$T/gl/l1"; ln -s l1 "$T/gl/l2"
for i in 1 2; do
	$A report --no-plots --skip-steps 0 --log-dir "$T/gl/a.json" --label a -o "$T/gl/replink" >/dev/null 2>&1 ||
		bad "report -o through a symlink to a folder (run $i)"
done
[ -L "$T/gl/replink" ] && [ -f "$T/gl/real/index.html" ] && ok || bad "report -o replaced the symlink"
expect "--json through a chain of symlinks, --csv through a symlink to a folder" 0 "" -- \
	$A analyze -q --json "$T/gl/l2" --csv "$T/gl/csvlink" "$T/gl/rank0.json"
[ -L "$T/gl/l2" ] && [ -L "$T/gl/l1" ] && [ -L "$T/gl/csvlink" ] && [ -f "$T/gl/target.json" ] && [ -f "$T/gl/realcsv/ranks.csv" ] && ok ||
	bad "an output through symlinks replaced a link"
left=$(find "$T/gl" -name '*aorta-tmp*' -o -name '*.tmp-*' | wc -l)
[ "$left" = 0 ] && ok || bad "$left temporary files or folders left beside outputs through symlinks"

# --- 20. the folder walk: regular files only, never /proc, /sys or /dev, every
#     entry counted toward the cap -------------------------------------------------------
mkdir -p "$T/wk"
cp $tiny/rank0.json $tiny/rank1.json "$T/wk/"
ln -s /proc "$T/wk/proc"; ln -s /sys "$T/wk/sys"; ln -s /dev "$T/wk/dev"; ln -s /proc/kmsg "$T/wk/kmsg.json"
ln -s /proc/self/root "$T/wk/selfroot"
mknod "$T/wk/null.json" c 1 3 2>/dev/null
expect "links to /proc, /sys and /dev in a trace folder: skipped, no hang" 0 "aorta analyze: 2 ranks" -- $TO $A analyze "$T/wk"
expect "a link to /proc/kmsg named like a trace is named and skipped" 0 "kmsg.json': skipped, a link into /proc" -- \
	$TO $A analyze --json "$T/wk.json" "$T/wk"
expect "a link to /sys is named" 0 "'$T/wk/sys': skipped, a link into /sys" -- $TO $A analyze --json "$T/wk.json" "$T/wk"
expect "a link to a process's root in /proc is named" 0 "selfroot': skipped, a link into /proc" -- $TO $A analyze --json "$T/wk.json" "$T/wk"
[ -c "$T/wk/null.json" ] && expect "a device in a trace folder is not read" 0 "null.json': skipped, not a regular file" -- \
	$TO $A analyze --json "$T/wk.json" "$T/wk"
expect "a folder under /proc named is refused" 3 "'/proc/self': a folder under /proc is not walked" -- $TO $A analyze -q --json "$T/wk.json" /proc/self
expect "--strict: a link into /proc is a skip" 3 "skipped.*--strict" -- $TO $A analyze -q --strict --json "$T/wk.json" "$T/wk"
python3 -c "import sys; sys.stdout.write(('$PWD/$tiny/rank0.json\n') * 200001)" >"$T/wk.list"
expect "a list of 200,001 lines hits the entry cap" 3 "more than 200000 entries" -- $TO $A analyze -q --json "$T/wk.json" "@$T/wk.list"
# 200,001 hidden entries in one folder (on /dev/shm where there is one: fast to make)
big=$(mktemp -d -p /dev/shm 2>/dev/null || mktemp -d -p "$T")
python3 - "$big" <<'PY'
import os, sys
for i in range(200001):
    os.close(os.open(os.path.join(sys.argv[1], ".e%d" % i), os.O_CREAT | os.O_WRONLY, 0o644))
PY
cp $tiny/rank0.json "$big/"
expect "200,001 hidden entries hit the entry cap before any file is read" 3 "'$big': more than 200000 entries" -- \
	$TO $A analyze -q --json "$T/wk.json" "$big"
rm -rf "$big"

# --- 21. the outputs of a command are one unit; every terminating signal cleans up --
mkdir -p "$T/un"
$A analyze -q --json "$T/un/a.json" --csv "$T/un/csv" tests/data/straggler/ddp_none 2>/dev/null
cp "$T/un/a.json" "$T/un/a.orig"; cp -r "$T/un/csv" "$T/un/csv.orig"
unchanged() { # what failed left the previous outputs whole and nothing beside them
	cmp -s "$T/un/a.json" "$T/un/a.orig" && diff -r "$T/un/csv" "$T/un/csv.orig" >/dev/null &&
		[ "$(find "$T/un" -name '*aorta-tmp*' -o -name '*.old' | wc -l)" = 0 ] && ok || bad "$1"
}
# the JSON and four tables of tiny fit in 8 KiB, its steps.csv does not
expect "a full disk during --csv" 5 "write failed: File too large" -- \
	bash -c "ulimit -f 8; exec $A analyze -q --json '$T/un/a.json' --csv '$T/un/csv' $tiny"
unchanged "a full disk during --csv left old and new outputs mixed"
mkdir -p "$T/un/adir"
expect "--trace-out fails after --json and --csv were written" 3 "a directory" -- \
	$A analyze -q --json "$T/un/a.json" --csv "$T/un/csv" --trace-out "$T/un/adir" $tiny
unchanged "a failed --trace-out left the new --json and --csv beside it"
expect "a new --csv folder is not left behind by a failed run" 3 "" -- \
	$A analyze -q --csv "$T/un/newcsv" --trace-out "$T/un/adir" $tiny
[ ! -e "$T/un/newcsv" ] && ok || bad "a failed run left the --csv folder it made"
$A report --skip-steps 0 --log-dir $tiny --label a -o "$T/un/rep" >/dev/null 2>&1
cp -r "$T/un/rep" "$T/un/rep.orig"
expect "a full disk during report" 5 "" -- bash -c "ulimit -f 64; exec $A report --skip-steps 0 --log-dir $tiny --label a --log-dir tests/data/straggler/ddp_none --label b -o '$T/un/rep'"
diff -r "$T/un/rep" "$T/un/rep.orig" >/dev/null && [ -z "$(ls -d "$T"/un/rep.tmp-* 2>/dev/null)" ] && ok ||
	bad "a report that failed half-way changed the previous one or left its folder"
sigs="HUP INT QUIT ILL TRAP ABRT USR1 USR2 PIPE ALRM TERM STKFLT XCPU VTALRM PROF IO PWR SYS RTMIN RTMAX"
case $A in *build-san*) ;; *) sigs="$sigs SEGV BUS FPE" ;; esac # ASan keeps those for itself
mkfifo "$T/un/fifo"
while read -r sig res; do
	[ "$res" = ok ] && ok || bad "analyze stopped by SIG$sig: $res"
done < <(python3 tests/cli/hostile_signals.py "$A" "$T/un" analyze $tiny $sigs)
unchanged "signals left analyze's outputs changed or temporary files behind"
while read -r sig res; do
	[ "$res" = ok ] && ok || bad "report stopped by SIG$sig: $res"
done < <(python3 tests/cli/hostile_signals.py "$A" "$T/un" report $tiny $sigs)
$A analyze --json "$T/un/p.json" --per-step tests/data/straggler/ddp_none 2>/dev/null | head -c 1 >/dev/null
[ "$(find "$T/un" -name '*aorta-tmp*' | wc -l)" = 0 ] && ok || bad "a summary piped into head left temporary files"

# --- 22. plug-ins: a handshake refuses a foreign, other or stale one by name --------
cat >"$T/stale.c" <<'C'
struct id { char magic[16]; char kind[8]; char build[48]; };
__attribute__((visibility("default"))) const struct id aorta_plugin_id_mpi = { "aorta-plugin/1", "mpi", "0.0.9+1" };
__attribute__((visibility("default"))) const struct id aorta_plugin_id_plot = { "aorta-plugin/1", "plot", "0.0.9+1" };
int aorta_mpi_analysis_run(void);
int aorta_mpi_analysis_run(void) { *(volatile int *)0 = 1; return 0; } /* what a stale plug-in does */
C
if gcc -shared -fPIC -o "$T/stale.so" "$T/stale.c" 2>/dev/null; then
	expect "a stale MPI plug-in is refused by name" 2 "'$T/stale.so' is a stale mpi plug-in: built for aorta 0.0.9\+1" -- \
		env AORTA_MPI_LIB="$T/stale.so" $A analyze --mpi -q --json "$T/pl.json" $tiny
	expect "a stale plot plug-in: the report without charts, said" 0 "'$T/stale.so' is a stale plot plug-in" -- \
		env AORTA_PLOT_LIB="$T/stale.so" $A report --skip-steps 0 --log-dir $tiny --label a -o "$T/plrep"
fi
zlib=$(ldd "$A" | sed -n 's/.*libz.so.1 => \([^ ]*\).*/\1/p')
[ -n "$zlib" ] && expect "a foreign library as the MPI plug-in" 2 "'$zlib' is not an aorta plug-in \(it has no aorta_plugin_id_mpi\): a foreign library" -- \
	env AORTA_MPI_LIB="$zlib" $A analyze --mpi -q --json "$T/pl.json" $tiny
plot="$(dirname "$A")/libaorta-plot.so"
[ -f "$plot" ] && expect "the plot plug-in as the MPI one" 2 "is aorta's plot plug-in, not its mpi plug-in" -- \
	env AORTA_MPI_LIB="$plot" $A analyze --mpi -q --json "$T/pl.json" $tiny
[ -f "$plot" ] && expect "the plot plug-in as the GPU one" 4 "is aorta's plot plug-in, not its gpu plug-in" -- \
	env AORTA_GPU_LIB="$plot" $A hwq info

# --- 23. text from inputs reaches the terminal and the page as text -----------------
python3 - "$tiny/rank0.json" "$T/esc.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
for e in t["traceEvents"]:
    if e.get("cat") == "kernel":
        e["name"] = "evil\x1b]0;pwned\x07\x1b[2J\u202eabc\x9b31m\u0085\x08kernel"
        if e.get("args", {}).get("Process Group Name"):
            e["args"]["Process Group Name"] = "pg\x1b[31m"
            e["args"]["Process Group Description"] = "desc\x1b[5m"
json.dump(t, open(sys.argv[2], "w"))
PY
sed 's/"dur": 300,/"dur": -5,/' "$T/esc.json" >"$T/esc_bad.json"
for cmd in "analyze --per-step $T/esc.json" "analyze --json $T/esc.out.json $T/esc_bad.json" "compare $T/esc.json $tiny/rank0.json" \
	"report --skip-steps 0 --log-dir $T/esc.json --label l$(printf '\033')[2J -o $T/escrep" "analyze $T/$(printf 'x\033[2Jy').json"; do
	out=$($A $cmd 2>&1)
	if printf '%s' "$out" | LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')"; then
		bad "a control character reached the terminal: $cmd"
	else ok; fi
done
out=$($A analyze --per-step "$T/esc.json" 2>&1)
printf '%s' "$out" | grep -qF 'evil\x1b]0;pwned\x07\x1b[2J\u202eabc\u009b31m\u0085\x08kernel' && ok ||
	bad "the kernel name is not shown with its escapes: $(printf '%s' "$out" | grep -a evil | head -n 1)"
LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" "$T/escrep/index.html" && bad "a control character in index.html" || ok
python3 - "$T/escrep" <<'PY' && ok || bad "a chart's SVG is not well-formed XML"
import glob, sys, xml.dom.minidom
for f in glob.glob(sys.argv[1] + "/*.svg"):
    xml.dom.minidom.parse(f)
PY

# --- 24. hostile Flight Recorder dumps: refused at their byte offset, never run ---------
fr=tests/data/flightrec/skip/pickle/fr_trace_rank_1
mkdir -p "$T/fr"
head -c 700 "$fr" >"$T/fr/cut_1"
expect "a truncated Flight Recorder pickle: exit 3 with the offset" 3 "cut_1': byte [0-9]+: pickle Flight Recorder dump: truncated" -- \
	$TO $A analyze -q --json "$T/sink.json" "$T/fr/cut_1"
# hostile pickles, each with the byte offset of its bad opcode as Python finds it
python3 - "$T/fr" <<'PY'
import sys
d = sys.argv[1]
def w(name, b, at):
    open(f"{d}/{name}", "wb").write(b)
    open(f"{d}/{name}.at", "w").write(str(at))
# would import and call os.system (GLOBAL, then REDUCE)
b = b"\x80\x02}q\x00(X\x07\x00\x00\x00versionq\x01X\x03\x00\x00\x002.9q\x02X\x09\x00\x00\x00pg_configq\x03cposix\nsystem\nq\x04X\x0a\x00\x00\x00touch PWNDq\x05\x85Rq\x06u."
w("evil_2", b, b.index(b"cposix"))
b = b"\x80\x04}\x94\x8c\x09pg_config\x94\x8c\x02os\x8c\x06system\x93\x94s."
w("stack_3", b, b.index(b"\x93"))
b = b"\x80\x02}q\x00X\x09\x00\x00\x00pg_configq\x01]r\xff\xff\xff\xffs."
w("memo_4", b, b.index(b"r\xff"))
b = b"\x80\x02}q\x00X\x07\x00\x00\x00entriesq\x01X\xff\xff\xff\x7fab."
w("len_7", b, b.index(b"X\xff"))
PY
expect "a pickle with GLOBAL: refused at its offset, nothing run" 3 "evil_2': byte $(cat "$T/fr/evil_2.at"): pickle Flight Recorder dump: opcode GLOBAL \(0x63\) refused" -- \
	$TO bash -c "cd '$T/fr' && '$PWD/$A' analyze -q --json '$T/sink.json' evil_2"
[ ! -e "$T/fr/PWND" ] && ok || bad "a pickle's GLOBAL/REDUCE ran a command"
expect "a pickle with STACK_GLOBAL: refused" 3 "stack_3': byte $(cat "$T/fr/stack_3.at"): .*STACK_GLOBAL" -- $TO $A analyze -q --json "$T/sink.json" "$T/fr/stack_3"
expect "a huge memo index: refused at its offset" 3 "memo_4': byte $(cat "$T/fr/memo_4.at"): .*memo index 4294967295 out of range" -- \
	$TO $A analyze -q --json "$T/sink.json" "$T/fr/memo_4"
python3 -c 'import sys; sys.stdout.buffer.write(b"\x80\x02}q\x00X\x07\x00\x00\x00entriesq\x01" + b"]" * 100000 + b"a" * 99999 + b"s.")' >"$T/fr/deep_5"
expect "nesting 100000 deep: refused, no stack overflow" 3 "deep_5': byte [0-9]+: .*nested deeper than 64 levels" -- \
	$TO $A analyze -q --json "$T/sink.json" "$T/fr/deep_5"
python3 -c 'import sys; sys.stdout.buffer.write(b"\x80\x02}q\x00X\x07\x00\x00\x00entriesq\x01" + b"(" * 100000 + b".")' >"$T/fr/marks_6"
expect "100000 MARKs: refused" 3 "marks_6': byte [0-9]+: .*MARKs nested deeper" -- $TO $A analyze -q --json "$T/sink.json" "$T/fr/marks_6"
expect "a string length beyond the file: refused" 3 "len_7': byte $(cat "$T/fr/len_7.at"): .*truncated: BINUNICODE of 2147483647 bytes" -- \
	$TO $A analyze -q --json "$T/sink.json" "$T/fr/len_7"
printf '{"version": "2.10", "pg_config": {}, "entries": [{"process_group": ["0", "x"], "profiling_name": "nccl:all_reduce", "collective_seq_id": -5}]}' >"$T/fr/neg_8.json"
expect "a negative sequence number: refused with its path" 3 "neg_8.json': byte [0-9]+: entries\[0\].collective_seq_id: negative" -- \
	$A analyze -q --json "$T/sink.json" "$T/fr/neg_8.json"
# in a folder the broken dumps are errors (they are dumps), not skipped files
mkdir -p "$T/frdir"; cp "$fr" "$T/frdir/fr_1"; cp "$T/fr/memo_4" "$T/frdir/fr_4"; rm -f "$T/sink.json"
expect "a broken dump in a folder of dumps: exit 3 naming it" 3 "fr_4': byte $(cat "$T/fr/memo_4.at")" -- $TO $A analyze -q --json "$T/sink.json" "$T/frdir"
[ ! -e "$T/sink.json" ] && ok || bad "a failed dump analysis wrote its JSON"


# --- the round trip: every analysis this suite made is read back and written
#     again, the same bytes but the inputs list (what analyze writes, it reads) --------
nrt=0
while IFS= read -r f; do
	case $f in */damaged*) continue ;; esac # made invalid on purpose
	head -c 200 "$f" | grep -q '"schema": "aorta.analysis/' || continue
	nrt=$((nrt + 1))
	if ! out=$($A analyze -q --json "$f.rt" "$f" 2>&1); then bad "round trip of $f: $out"; continue; fi
	cmp -s <(grep -v -A2 '"inputs"' "$f") <(grep -v -A2 '"inputs"' "$f.rt") && ok ||
		bad "round trip of $f is not the same: $(diff "$f" "$f.rt" | head -n 4)"
done < <(find "$T" -name '*.json' -type f -size -64M)
[ "$nrt" -ge 20 ] && ok || bad "only $nrt analyses to read back"

echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
