#!/usr/bin/env python3
"""torch_peer.py - the PyTorch peer of aorta hwq's speed bench.

The same kernels as aorta's tiny_kernel_stress and hetero_kernels, launched
from a PyTorch eager loop and from a torch.cuda.CUDAGraph replay of one
captured iteration, with the same fork/join over the streams:

  tiny_kernel_stress: per stream, 100 x clamp(abs(add(mul(t, 1.5), 0.5)), 0, 10)
                      on 256 fp32 elements (400 kernels per stream)
  hetero_kernels:     the first N/2 streams one 4096^3 fp32 mm each; after each,
                      10 x add(mul(t, 2), 1) on 1024 elements round-robin on the
                      other streams

Two figures per configuration and mode, as aorta reports them:
  kernels_per_s: kernels per iteration x iterations / wall time of a loop that
                 enqueues every iteration and synchronises once at the end
                 (aorta --sync-mode end_only)
  latency_ms:    per-iteration time between CUDA events, synchronised each
                 iteration (aorta --sync-mode per_iteration): mean and p50

Prints one JSON object on stdout.  Usage: torch_peer.py [--iters N]
"""
import argparse
import json
import statistics
import sys
import time

import torch


def tiny_setup(n):
    g = torch.Generator(device="cuda").manual_seed(1)
    ts = [torch.rand(256, device="cuda", generator=g) * 16 - 8 for _ in range(n)]
    return ts


def make_tiny(n):
    ts = tiny_setup(n)
    outs = [None] * n

    def body(streams):
        for i, s in enumerate(streams):
            with torch.cuda.stream(s):
                t = ts[i]
                for _ in range(100):
                    outs[i] = torch.clamp(torch.abs(torch.add(torch.mul(t, 1.5), 0.5)), 0, 10)
    return body, 400 * n


def make_hetero(n):
    torch.backends.cuda.matmul.allow_tf32 = False
    l = max(n // 2, 1)
    a = torch.rand(4096, 4096, device="cuda") * 2 - 1
    b = torch.rand(4096, 4096, device="cuda") * 2 - 1
    tin = [torch.rand(1024, device="cuda") for _ in range(10 * l)]
    outs = [None] * (10 * l)
    cs = [None] * l

    def body(streams):
        others = streams[l:]
        rr = 0
        for i in range(l):
            with torch.cuda.stream(streams[i]):
                cs[i] = torch.mm(a, b)
            for k in range(10):
                s = others[rr % len(others)] if others else streams[i]
                rr += 1
                with torch.cuda.stream(s):
                    outs[i * 10 + k] = torch.add(torch.mul(tin[i * 10 + k], 2), 1)
    return body, l + 20 * l


def run(workload, n, iters, warmup):
    body, kpi = (make_tiny if workload == "tiny_kernel_stress" else make_hetero)(n)
    origin = torch.cuda.Stream()
    streams = [torch.cuda.Stream() for _ in range(n)]

    def iteration():
        # fork/join as aorta's harness: every stream waits for origin, origin for every stream
        for s in streams:
            s.wait_stream(origin)
        body(streams)
        for s in streams:
            origin.wait_stream(s)

    res = {}
    with torch.cuda.stream(origin):
        for _ in range(warmup):
            iteration()
    torch.cuda.synchronize()

    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=origin):
        iteration()
    torch.cuda.synchronize()

    for mode in ("eager", "graph"):
        step = iteration if mode == "eager" else graph.replay
        with torch.cuda.stream(origin):
            for _ in range(warmup):
                step()
        torch.cuda.synchronize()
        # rate: enqueue everything, one sync
        t0 = time.perf_counter()
        with torch.cuda.stream(origin):
            for _ in range(iters):
                step()
        torch.cuda.synchronize()
        wall = time.perf_counter() - t0
        # latency: events around each synchronised iteration
        lat = []
        for _ in range(iters):
            e0 = torch.cuda.Event(enable_timing=True)
            e1 = torch.cuda.Event(enable_timing=True)
            with torch.cuda.stream(origin):
                e0.record(origin)
                step()
                e1.record(origin)
            e1.synchronize()
            lat.append(e0.elapsed_time(e1))
        res[mode] = {
            "kernels_per_iter": kpi,
            "iters": iters,
            "wall_s": wall,
            "kernels_per_s": kpi * iters / wall,
            "latency_ms_mean": statistics.fmean(lat),
            "latency_ms_p50": statistics.median(lat),
        }
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=10)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print(json.dumps({"error": "no CUDA device"}))
        return 4
    out = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0), "configs": []}
    for w, n in (("tiny_kernel_stress", 1), ("tiny_kernel_stress", 16), ("hetero_kernels", 8)):
        iters = args.iters if not (w == "tiny_kernel_stress" and n == 1) else args.iters * 4
        r = run(w, n, iters, args.warmup)
        out["configs"].append({"workload": w, "streams": n, **r})
        print(f"torch {w} s={n}: eager {r['eager']['kernels_per_s']:.0f} k/s, graph {r['graph']['kernels_per_s']:.0f} k/s",
              file=sys.stderr)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
