#!/usr/bin/env python3
"""gen.py OUT RANKS [--steps S] [--layers L] [--per-node P] [--late R|none] [--delay-ms D]
[--late-where fwd|bwd] [--host timed|synced] - a realistic synthetic FSDP rank set for the
scale benchmark of `aorta analyze` and the ground truth of the what-if (tests/cli/whatif_synthetic.sh).

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
rank arrived. Rank --late (default the last; `none`: no rank) sleeps --delay-ms (default 3 ms)
on the host before every forward (--late-where fwd, the default) or before the backward of the
middle layer (bwd): the planted straggler.

The host (--host): `timed` (the default) starts step k at 1 ms + k x 30 ms whatever its GPU
did (a time-triggered host: the GPU idles most of each step); `synced` is paced by its GPU as a
training loop that reads the loss is: at the end of each step the host calls
cudaDeviceSynchronize, which returns when its GPU's last kernel ends, and starts the next step
50 us later. The same arguments with and without --late give the step with the late rank fixed:
the ground truth of a what-if. Ranks of one node (--per-node, default 8) share a
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
SYNC_GAP = 50_000  # ns: host time from the end of a step's sync to the next step (--host synced)


def program(steps, layers, where="fwd", synced=False):
    """The op sequence of one rank: ("k", name, dur_ns, host_cost_ns), ("c", kind), ("late",)
    (the late rank's delay inside backward) or ("sync",) (the end-of-step synchronisation)."""
    ops = []
    for st in range(steps):
        ops.append(("step", st))
        for _ in range(layers):
            ops.append(("c", "ag"))
            ops += [("k", GEMM_F, 90_000, 10_000)] * 4 + [("k", ELEM, 8_000, 5_000)] * 6
        for li in range(layers):
            if where == "bwd" and li == layers // 2:
                ops.append(("late",))
            ops.append(("c", "ag"))
            ops += [("k", GEMM_B, 90_000, 10_000)] * 8 + [("k", ELEM, 8_000, 5_000)] * 10
            ops.append(("c", "rs"))
        ops += [("k", OPT, 5_000, 4_000)] * 20
        if synced:
            ops.append(("sync",))
    return ops


class Rank:
    def __init__(self, r, late, delay=3_000_000, where="fwd", synced=False):
        self.rnd = random.Random(1000 + r)
        self.late = r == late
        self.delay = delay if self.late else 0
        self.where = where
        self.synced = synced
        self.h = 0          # host clock (ns)
        self.g = 0          # compute stream free at
        self.c = 0          # comm stream free at
        self.need = 0       # compute waits for the last all-gather

    def advance(self, op, st_start):
        """Host work before op; returns the arrival time for a collective (for a sync: its start)."""
        if op[0] == "step":
            base = self.h + SYNC_GAP if self.synced and self.h else st_start
            self.h = base + (self.delay if self.where == "fwd" else 0)
            return None
        if op[0] == "late":
            self.h += self.delay
            return None
        if op[0] == "sync":  # cudaDeviceSynchronize: returns when the GPU's last kernel ends
            self.h += 5_000
            s = self.h
            self.h = max(self.h, self.g, self.c)
            return s
        if op[0] == "k":
            self.h += op[3]
            return None
        self.h += 20_000
        return max(self.h, self.c)


def simulate(world, steps, layers, late, delay=3_000_000, where="fwd", synced=False):
    """Collective end times, by sequence number (all ranks together)."""
    ops = program(steps, layers, where, synced)
    ranks = [Rank(r, late, delay, where, synced) for r in range(world)]
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


def rank_trace(r, world, steps, layers, per_node, late, ends, delay=3_000_000, where="fwd", synced=False):
    node = r // per_node
    off = (node * 1_370_000) % 4_000_000
    dev = r % per_node
    rk = Rank(r, late, delay, where, synced)
    ev, corr, seq, st = [], 0, 0, -1
    prof = None  # synced: the open ProfilerStep range, closed when the next step starts

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

    for op in program(steps, layers, where, synced):
        if op[0] == "step":
            st = op[1]
            if synced:  # the step runs from the host's start of it to its start of the next
                h0 = rk.h + SYNC_GAP if rk.h else 1_000_000
                if prof is not None:
                    prof[0]["dur"] = round((h0 - 1000 - prof[1]) / 1000.0, 3)
                prof = ({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{3 + st}",
                         "pid": 1000 + r, "tid": 1000 + r, "ts": us(h0), "dur": 0.0, "args": {}}, h0)
                ev.append(prof[0])
            else:
                ev.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{3 + st}",
                           "pid": 1000 + r, "tid": 1000 + r, "ts": us(1_000_000 + st * STEP_NS),
                           "dur": (STEP_NS - 1000) / 1000.0, "args": {}})
        arr = rk.advance(op, 1_000_000 + st * STEP_NS)
        if op[0] == "sync":
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaDeviceSynchronize", "pid": 1000 + r,
                       "tid": 1000 + r, "ts": us(arr), "dur": round((rk.h - arr) / 1000.0, 3), "args": {}})
            prof[0]["dur"] = round((rk.h + 1000 - prof[1]) / 1000.0, 3)
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
    ap.add_argument("--late", default=-1, type=lambda v: -2 if v == "none" else int(v),
                    help="the late rank (default the last), or none")
    ap.add_argument("--delay-ms", type=float, default=3.0, help="the late rank's host delay per step")
    ap.add_argument("--late-where", choices=("fwd", "bwd"), default="fwd",
                    help="before every forward, or before the middle layer's backward")
    ap.add_argument("--host", choices=("timed", "synced"), default="timed",
                    help="timed: step k starts at 1 ms + k x 30 ms; synced: after a device sync + 50 us")
    a = ap.parse_args()
    late = a.late if a.late >= 0 else -1 if a.late == -2 else a.ranks - 1
    delay, synced = round(a.delay_ms * 1e6), a.host == "synced"
    os.makedirs(a.out, exist_ok=True)
    ends = simulate(a.ranks, a.steps, a.layers, late, delay, a.late_where, synced)
    for r in range(a.ranks):
        d = rank_trace(r, a.ranks, a.steps, a.layers, a.per_node, late, ends, delay, a.late_where, synced)
        with gzip.GzipFile(os.path.join(a.out, f"rank{r}.json.gz"), "wb", 6, mtime=0) as f:
            f.write(json.dumps(d, separators=(",", ":")).encode())


if __name__ == "__main__":
    main()
