#!/usr/bin/env python3
"""torch_peer.py - the PyTorch peer of aorta's tune-tp operators.

Llama-3-8B (h 4096, intermediate 14336, SwiGLU) at S tokens, TP 2:
  fc1 fprop: all-gather of X [S/2, 4096] bf16, then X W with W [4096, 14336]
  fc2 fprop: X W with X [S, 7168], W [7168, 4096], then reduce-scatter of Y
For each: the GEMM alone, the collective alone (NCCL), serial (collective
then GEMM / GEMM then collective) and PyTorch's async-TP fused operator
(torch.ops.symm_mem.fused_all_gather_matmul / fused_matmul_reduce_scatter,
symmetric memory enabled for the group).  Every figure is the median over
--iters iterations (after --warmup) of the per-iteration maximum over the
ranks, each iteration timed by CUDA events after a barrier.  The fused
outputs are checked against the serial ones.  Rank 0 prints one JSON
object ("schema": "aorta.tp_torch_peer/1") and writes it to --out.

Run: python3 -m torch.distributed.run --standalone --nproc-per-node 2 \
         bench/tune_tp/torch_peer.py --out torch_peer.json
"""
import argparse
import json
import os
import statistics

import torch
import torch.distributed as dist


def timed(fn, warmup, iters, dev):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize(dev)
    times = []
    for _ in range(iters):
        dist.barrier()
        torch.cuda.synchronize(dev)
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    t = torch.tensor(times, device=dev, dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return statistics.median(t.tolist())


def rel_err(x, ref):
    return float((x.float() - ref.float()).abs().max() / ref.float().abs().max())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=8192)
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--intermediate", type=int, default=14336)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--out", default="")
    args = ap.parse_args()

    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    dist.init_process_group("nccl", device_id=dev)
    group = dist.group.WORLD
    gname = group.group_name
    notes = []
    try:
        import torch.distributed._symmetric_memory as symm_mem

        if hasattr(symm_mem, "enable_symm_mem_for_group"):
            symm_mem.enable_symm_mem_for_group(gname)
    except Exception as ex:  # the fused ops report their own error below
        notes.append("enable_symm_mem_for_group: %s" % ex)

    S, h, inter, tp = args.tokens, args.hidden, args.intermediate, world
    torch.manual_seed(1234 + rank)
    bf = torch.bfloat16
    res = {"schema": "aorta.tp_torch_peer/1", "torch": torch.__version__, "tp": tp, "tokens": S,
           "device": torch.cuda.get_device_name(dev), "warmup": args.warmup, "iters": args.iters}

    # fc1 fprop: AG of X [S/tp, h], then X W, W [h, 2 inter / tp]
    xs = torch.randn(S // tp, h, device=dev, dtype=bf)
    w1 = torch.randn(h, 2 * inter // tp, device=dev, dtype=bf) / h ** 0.5
    xg = torch.empty(S, h, device=dev, dtype=bf)
    dist.all_gather_into_tensor(xg, xs)
    y1 = torch.empty(S, 2 * inter // tp, device=dev, dtype=bf)

    def fc1_serial():
        dist.all_gather_into_tensor(xg, xs)
        torch.mm(xg, w1, out=y1)

    fc1 = {"m": S, "n": 2 * inter // tp, "k": h,
           "gemm_ms": timed(lambda: torch.mm(xg, w1, out=y1), args.warmup, args.iters, dev),
           "comm_ms": timed(lambda: dist.all_gather_into_tensor(xg, xs), args.warmup, args.iters, dev),
           "serial_ms": timed(fc1_serial, args.warmup, args.iters, dev)}
    try:
        op = torch.ops.symm_mem.fused_all_gather_matmul
        _, outs = op(xs, [w1], 0, gname, return_A=False)
        fc1_serial()
        fc1["fused_rel_err"] = rel_err(outs[0], y1)
        fc1["fused_ms"] = timed(lambda: op(xs, [w1], 0, gname, return_A=False), args.warmup, args.iters, dev)
    except Exception as ex:
        fc1["fused_error"] = str(ex)[:300]
    res["fc1"] = fc1

    # fc2 fprop: X W, X [S, inter / tp], W [inter / tp, h], then RS of Y
    x2 = torch.randn(S, inter // tp, device=dev, dtype=bf)
    w2 = torch.randn(inter // tp, h, device=dev, dtype=bf) / (inter // tp) ** 0.5
    y2 = torch.empty(S, h, device=dev, dtype=bf)
    o2 = torch.empty(S // tp, h, device=dev, dtype=bf)

    def fc2_serial():
        torch.mm(x2, w2, out=y2)
        dist.reduce_scatter_tensor(o2, y2)

    torch.mm(x2, w2, out=y2)
    fc2 = {"m": S, "n": h, "k": inter // tp,
           "gemm_ms": timed(lambda: torch.mm(x2, w2, out=y2), args.warmup, args.iters, dev),
           "comm_ms": timed(lambda: dist.reduce_scatter_tensor(o2, y2), args.warmup, args.iters, dev),
           "serial_ms": timed(fc2_serial, args.warmup, args.iters, dev)}
    try:
        op = torch.ops.symm_mem.fused_matmul_reduce_scatter
        out = op(x2, w2, "sum", 0, gname)
        fc2_serial()
        fc2["fused_rel_err"] = rel_err(out, o2)
        fc2["fused_ms"] = timed(lambda: op(x2, w2, "sum", 0, gname), args.warmup, args.iters, dev)
    except Exception as ex:
        fc2["fused_error"] = str(ex)[:300]
    res["fc2"] = fc2
    if notes:
        res["notes"] = notes

    if rank == 0:
        text = json.dumps(res)
        print(text, flush=True)
        if args.out:
            with open(args.out + ".tmp", "w") as f:
                f.write(text + "\n")
            os.replace(args.out + ".tmp", args.out)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
