#!/usr/bin/env python3
"""Writes tests/data/tiny/rank{0,1}.json: a hand-made two-rank Kineto trace
with known figures (the CLI golden tests use it).

Per rank and step s (0-based, step period 1000 us, steps ProfilerStep#5, #6):
  host  ProfilerStep#(5+s) [s*1000, s*1000+900) us, launches at +10, +20, +30
  GPU   gemm      stream 7  [s*1000+100, +400)           (300 us)
        allreduce stream 19 [s*1000+300+d, s*1000+600)   d = 0 on rank 1, 100 on rank 0
        memcpy    stream 7  [s*1000+700, +710)
Rank 1 reaches the collective first (d = 0) and waits 100 us for rank 0.
"""
import json, os

def rank(r):
    ev = []
    d = 100 if r == 0 else 0
    for s in range(2):
        b = s * 1000
        ev.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{5+s}",
                   "pid": 10 + r, "tid": 10 + r, "ts": b, "dur": 900})
        for k, c in enumerate((101, 102, 103)):
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                       "pid": 10 + r, "tid": 10 + r, "ts": b + 10 * (k + 1), "dur": 5,
                       "args": {"correlation": c + 10 * s}})
        ev.append({"ph": "X", "cat": "kernel", "name": "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT",
                   "pid": r, "tid": 7, "ts": b + 100, "dur": 300,
                   "args": {"device": r, "stream": 7, "correlation": 101 + 10 * s}})
        ev.append({"ph": "X", "cat": "kernel",
                   "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                   "pid": r, "tid": 19, "ts": b + 300 + d, "dur": 300 - d,
                   "args": {"device": r, "stream": 19, "correlation": 102 + 10 * s,
                            "Collective name": "allreduce", "In msg nelems": 1048576,
                            "Out msg nelems": 1048576, "Group size": 2, "dtype": "Float",
                            "Process Group Name": "0", "Process Group Description": "default_pg",
                            "Process Group Ranks": "[0, 1]"}})
        ev.append({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pinned -> Device)",
                   "pid": r, "tid": 7, "ts": b + 700, "dur": 10,
                   "args": {"device": r, "stream": 7, "correlation": 103 + 10 * s, "bytes": 4096}})
    return {"schemaVersion": 1,
            "distributedInfo": {"backend": "nccl", "rank": r, "world_size": 2},
            "displayTimeUnit": "ms", "traceEvents": ev}

here = os.path.dirname(os.path.abspath(__file__))
for r in (0, 1):
    with open(os.path.join(here, "tiny", f"rank{r}.json"), "w") as f:
        json.dump(rank(r), f, indent=1)
