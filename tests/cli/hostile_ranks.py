#!/usr/bin/env python3
"""tests/cli/hostile_ranks.py - writes N ranks of a small Kineto trace with
one planted fault, for tests/cli/hostile.sh (issue 28, families 3 and 4).

Each rank: 4 steps (ProfilerStep#5..8, 1000 us apart), a 200 us gemm at
+100 us and an all-reduce of 1,048,576 floats in group "0" (Group size N)
arriving at +300 + 10*rank us (+500 us on rank LATE), ending at +600 us.

  hostile_ranks.py DIR N LATE [fault=ARG ...]
    pg=R:NAME      rank R calls its all-reduces in group NAME
    zero=R         rank R's all-reduce kernels last 0 us
    huge=R         rank R's gemm of step 6 lasts 100,000 s (27.8 h)
    dupstep=R      rank R's last step is numbered 7 again
    back=R         rank R's third step (and its kernels) is 1500 us early
    nelems=R:N     rank R's all-reduces say In/Out msg nelems N
    allnelems=N    every rank's all-reduces say nelems N
"""
import json, os, sys

out, n, late = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
opts = dict(a.split("=", 1) for a in sys.argv[4:])
os.makedirs(out, exist_ok=True)
def ri(k):
    return int(opts[k].split(":")[0]) if k in opts else -1
for r in range(n):
    ev = []
    for s in range(4):
        b = s * 1000
        if ri("back") == r and s == 2:
            b -= 1500
        name = f"ProfilerStep#{5+s}"
        if ri("dupstep") == r and s == 3:
            name = "ProfilerStep#7"
        if ri("nostep") != r:
            ev.append({"ph": "X", "cat": "user_annotation", "name": name,
                       "pid": 10 + r, "tid": 10 + r, "ts": b, "dur": 900})
        ev.append({"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": r, "tid": 7, "ts": b + 100,
                   "dur": 200 if not (ri("huge") == r and s == 1) else 100_000_000_000,
                   "args": {"device": r, "stream": 7}})
        d = 200 if r == late else 10 * r
        pg = opts["pg"].split(":")[1] if ri("pg") == r else "0"
        nel = int(opts["nelems"].split(":")[1]) if ri("nelems") == r else int(opts.get("allnelems", 1048576))
        ev.append({"ph": "X", "cat": "kernel",
                   "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                   "pid": r, "tid": 19, "ts": b + 300 + d, "dur": 0 if ri("zero") == r else 300 - d,
                   "args": {"device": r, "stream": 19, "Collective name": "allreduce",
                            "In msg nelems": nel, "Out msg nelems": nel, "Group size": n,
                            "dtype": "Float", "Process Group Name": pg,
                            "Process Group Ranks": str(list(range(n)))}})
    with open(os.path.join(out, f"rank{r}.json"), "w") as f:
        json.dump({"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": r, "world_size": n},
                   "traceEvents": ev}, f)
