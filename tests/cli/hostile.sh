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

# --- 17. hostile Flight Recorder dumps: refused at their byte offset, never run ---------
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

echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
