#!/usr/bin/env python3
"""gen.py OUT RANKS [--steps S] [--layers L] [--per-node P] [--late R] - a realistic
synthetic FSDP rank set for the scale benchmark of `aorta analyze`.

Each rank is one PyTorch-profiler (Kineto) trace, gzip, in the modern format of
../shared/data/kineto/h200_torch2.11 (distributedInfo, ProfilerStep#N host ranges,
cuda_runtime launches with correlation ids, kernels on a compute stream, NCCL kernels
with collective metadata on a communication stream), with the event mix of an FSDP
step: per layer, forward = all-gather + 4 GEMMs + 6 elementwise kernels; backward =
all-gather + 8 GEMMs + 10 elementwise kernels + reduce-scatter; then 20 optimizer
kernels. Collectives carry "Seq" and "Process Group Name" and every rank issues them
in the same order, as FSDP does.

Timing is simulated for all ranks together: a rank's host launches at its own pace,
its compute stream runs when the host has launched and the all-gather it needs is
done, a collective starts on a rank when that rank's host has launched it and its
stream is free, and ends on every rank 150 us + 16 MiB / 200 GB/s after the last
rank arrived. Rank --late (default the last) sleeps 3 ms on the host before every
forward: the planted straggler. Ranks of one node (--per-node, default 8) share a
hostname and a clock; each node's clock carries its own offset (0..4 ms), so the
clock alignment has work to do. Deterministic: the same arguments give the same bytes.
"""
import argparse
import gzip
import json
import os
import random

GEMM_F = "nvjet_sm90_tst_256x128_64x4_2x1_v_bz_coopA_NTN"
GEMM_B = "nvjet_sm90_tst_128x256_64x4_1x2_h_bz_coopB_TNT"
ELEM = "void at::native::vectorized_elementwise_kernel<4>"
OPT = "void at::native::multi_tensor_apply_kernel"
XFER = 150_000 + 16 * 1024 * 1024 // 200  # ns: 16 MiB at 200 GB/s plus latency
STEP_NS = 30_000_000


def program(steps, layers):
    """The op sequence of one rank: ("k", name, dur_ns, host_cost_ns) or ("c", kind)."""
    ops = []
    for st in range(steps):
        ops.append(("step", st))
        for _ in range(layers):
            ops.append(("c", "ag"))
            ops += [("k", GEMM_F, 90_000, 10_000)] * 4 + [("k", ELEM, 8_000, 5_000)] * 6
        for _ in range(layers):
            ops.append(("c", "ag"))
            ops += [("k", GEMM_B, 90_000, 10_000)] * 8 + [("k", ELEM, 8_000, 5_000)] * 10
            ops.append(("c", "rs"))
        ops += [("k", OPT, 5_000, 4_000)] * 20
    return ops


class Rank:
    def __init__(self, r, late):
        self.rnd = random.Random(1000 + r)
        self.late = r == late
        self.h = 0          # host clock (ns)
        self.g = 0          # compute stream free at
        self.c = 0          # comm stream free at
        self.need = 0       # compute waits for the last all-gather

    def advance(self, op, st_start):
        """Host work before op; returns the arrival time for a collective."""
        if op[0] == "step":
            self.h = st_start + (3_000_000 if self.late else 0)
            return None
        if op[0] == "k":
            self.h += op[3]
            return None
        self.h += 20_000
        return max(self.h, self.c)


def simulate(world, steps, layers, late):
    """Collective end times, by sequence number (all ranks together)."""
    ops = program(steps, layers)
    ranks = [Rank(r, late) for r in range(world)]
    ends, seq, st = {}, 0, -1
    for op in ops:
        if op[0] == "step":
            st = op[1]
        arr = [rk.advance(op, 1_000_000 + st * STEP_NS) for rk in ranks]
        if op[0] == "k":
            for rk in ranks:
                d = op[2] + rk.rnd.randint(-op[2] // 30, op[2] // 30)
                s = max(rk.h, rk.g, rk.need)
                rk.g = s + d
        elif op[0] == "c":
            seq += 1
            end = max(arr) + XFER
            ends[seq] = end
            for rk in ranks:
                rk.c = end
                if op[1] == "ag":
                    rk.need = end
    return ends


def rank_trace(r, world, steps, layers, per_node, late, ends):
    node = r // per_node
    off = (node * 1_370_000) % 4_000_000
    dev = r % per_node
    rk = Rank(r, late)
    ev, corr, seq, st = [], 0, 0, -1

    def us(ns):
        return round((ns + off) / 1000.0, 3)

    def launch(name, s, e, stream, args=None):
        nonlocal corr
        corr += 1
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1000 + r,
                   "tid": 1000 + r, "ts": us(rk.h - 4000), "dur": 4.0, "args": {"correlation": corr}})
        a = {"device": dev, "stream": stream, "correlation": corr}
        a.update(args or {})
        ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": dev, "tid": stream, "ts": us(s),
                   "dur": round((e - s) / 1000.0, 3), "args": a})

    for op in program(steps, layers):
        if op[0] == "step":
            st = op[1]
            ev.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{3 + st}",
                       "pid": 1000 + r, "tid": 1000 + r, "ts": us(1_000_000 + st * STEP_NS),
                       "dur": (STEP_NS - 1000) / 1000.0, "args": {}})
        arr = rk.advance(op, 1_000_000 + st * STEP_NS)
        if op[0] == "k":
            d = op[2] + rk.rnd.randint(-op[2] // 30, op[2] // 30)
            s = max(rk.h, rk.g, rk.need)
            rk.g = s + d
            launch(op[1], s, s + d, 7)
        elif op[0] == "c":
            seq += 1
            end = ends[seq]
            ag = op[1] == "ag"
            nel = 16 * 1024 * 1024 // 2
            launch("ncclDevKernel_AllGather_RING_LL" if ag else "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL",
                   arr, end, 20, {
                       "Collective name": "_allgather_base" if ag else "_reduce_scatter_base",
                       "In msg nelems": nel // world if ag else nel, "Out msg nelems": nel if ag else nel // world,
                       "dtype": "BFloat16", "Group size": world, "Process Group Name": "0",
                       "Process Group Description": "default_pg", "Seq": seq})
            rk.c = end
            if ag:
                rk.need = end
    return {"schemaVersion": 1,
            "deviceProperties": [{"id": dev, "name": "NVIDIA H100 80GB HBM3"}],
            "distributedInfo": {"backend": "nccl", "rank": r, "world_size": world, "pg_count": 1,
                                "nccl_version": "2.28.9"},
            "hostname": f"node{node:04d}", "traceEvents": ev, "displayTimeUnit": "ms"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("ranks", type=int)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--per-node", type=int, default=8)
    ap.add_argument("--late", type=int, default=-1)
    a = ap.parse_args()
    late = a.late if a.late >= 0 else a.ranks - 1
    os.makedirs(a.out, exist_ok=True)
    ends = simulate(a.ranks, a.steps, a.layers, late)
    for r in range(a.ranks):
        d = rank_trace(r, a.ranks, a.steps, a.layers, a.per_node, late, ends)
        with gzip.GzipFile(os.path.join(a.out, f"rank{r}.json.gz"), "wb", 6, mtime=0) as f:
            f.write(json.dumps(d, separators=(",", ":")).encode())


if __name__ == "__main__":
    main()
