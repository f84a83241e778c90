#!/usr/bin/env python3
"""tests/cli/hostile_optable.py - writes an aorta.optable/1 table (CSV,
microseconds) with one planted fault, for tests/cli/hostile.sh (the op
table family).

The table: 2 ranks (ranks=N for more), steps 1..6, 1000 us apart.  Per
rank and step: a forward gemm [b, b+300) and a backward gemm [b+300, b+600)
on stream 0, then 3 all-reduces in group "dp" on stream 1 that end together
on every rank at b+650, b+750, b+850; rank 0 arrives 50 us before the end,
every other rank 20 us before it: rank 0 waits 30 us per call (18 calls,
0.540 ms), the others wait nothing, and the clocks agree (offset 0).

  hostile_optable.py FILE [fault ...]
    ranks=N          N ranks instead of 2
    missing=R:S:K    rank R's all-reduce K (0-2) of step S is missing
    dup=R:S:K        rank R's all-reduce K of step S is written twice
    from=R:S         rank R's table starts at step S (its earlier rows are missing)
    prefetch         every step S >= 2 also has an all-gather of group "dp"
                     tagged S that runs at [b-600, b-550), during step
                     S-1's backward (FSDP's next-layer prefetch)
    seq              a seq column: each all-reduce's number in its group
    seqdup=R:S:K     (with seq) rank R's all-reduce K of step S carries the
                     seq of the call before it (its own is missing)
    launch[=A]       a launch_us column: every row launched A us (default 5) before it starts
    late_launch=R:S  (with launch) rank R's forward gemm of step S is launched
                     late_by=US (default 40) us after it starts
    nolaunch=R:S     (with launch) the same row with an empty launch cell
    zerokind         rank 0's step 2 has an all_reduce named "fwd_like" of
                     0 us (a broken record by its kind) and a gemm named
                     "ncclDevKernel_AllReduce_Sum_f32" of 0 us (a gemm: kept)
"""
import sys

path = sys.argv[1]
opts = {}
for a in sys.argv[2:]:
    k, _, v = a.partition("=")
    opts[k] = v
nranks = int(opts.get("ranks", 2))


def rsk(key):
    return tuple(int(x) for x in opts[key].split(":")) if key in opts else None


cols = ["rank", "step", "op", "kind", "stream", "start_us", "dur_us", "group"]
if "seq" in opts:
    cols.append("seq")
if "launch" in opts:
    cols.append("launch_us")
rows = []
seqs = {}
for r in range(nranks):
    for s in range(1, 7):
        if "from" in opts and rsk("from")[0] == r and s < rsk("from")[1]:
            continue
        b = s * 1000
        ops = [("fwd", "gemm", 0, b, 300, "", -1), ("bwd", "gemm", 0, b + 300, 300, "", -1)]
        if "prefetch" in opts and s >= 2:
            ops.append(("ag_prefetch", "all_gather", 2, b - 600, 50, "dp", -1))
        for k in range(3):
            end = b + 650 + 100 * k
            st = end - (50 if r == 0 else 20)
            if rsk("missing") == (r, s, k):
                continue
            ops.append(("grad_ar", "all_reduce", 1, st, end - st, "dp", k))
            if rsk("dup") == (r, s, k):
                ops.append(("grad_ar", "all_reduce", 1, st, end - st, "dp", k))
        if "zerokind" in opts and r == 0 and s == 2:
            ops.append(("fwd_like", "all_reduce", 1, b + 610, 0, "other", -1))
            ops.append(("ncclDevKernel_AllReduce_Sum_f32", "gemm", 0, b + 620, 0, "", -1))
        for name, kind, stream, st, dur, grp, k in ops:
            row = [r, s, name, kind, stream, st, dur, grp]
            if "seq" in opts:
                if kind == "all_reduce":
                    n = seqs.get(r, 0)
                    # seqdup: the seq of the call before it, again (its own is lost)
                    row.append(n - 1 if rsk("seqdup") == (r, s, k) else n)
                    seqs[r] = n + 1
                else:
                    row.append("")
            if "launch" in opts:
                late = rsk("late_launch") == (r, s) and name == "fwd"
                if rsk("nolaunch") == (r, s) and name == "fwd":
                    row.append("")
                else:
                    row.append(st + int(opts.get("late_by", 40)) if late else st - int(opts["launch"] or 5))
            rows.append(row)
with open(path, "w") as f:
    f.write("# aorta.optable/1 planted: %s\n" % " ".join(sys.argv[2:]))
    f.write(",".join(cols) + "\n")
    for row in rows:
        f.write(",".join(str(x) for x in row) + "\n")
