#!/usr/bin/env python3
"""make_fixtures.py - held-out straggler traces with a planted ground truth.

Runs a small PyTorch model on 2 GPUs (one process per GPU, NCCL), DDP or
FSDP2, profiles a few steps with the PyTorch profiler (Kineto JSON, gzip) and
injects known delays on chosen ranks:
  host_fwd   time.sleep(delay) on the host before forward
  in_bwd     time.sleep(delay) inside backward (a hook on a middle layer)
Cases (each a folder OUT/<case>/ with rank0.json.gz, rank1.json.gz and
truth.json):
  ddp_none            no delay: same-host clocks, offsets near 0
  ddp_const_r1        rank 1, host_fwd 20 ms, every profiled step
  ddp_intermittent_r1 rank 1, host_fwd 20 ms, in 3 of the profiled steps
  ddp_alternating     rank (step % 2), host_fwd 15 ms, every step
  ddp_bwd_r0          rank 0, in_bwd 15 ms, every step
  fsdp_const_r1       FSDP2, rank 1, host_fwd 20 ms, every step
  fsdp_intermittent_r0  FSDP2, rank 0, host_fwd 20 ms, in 2 of the steps
truth.json: {"case", "mode", "world_size", "delays": [{"step": N (the
ProfilerStep#N of the trace), "rank": R, "where": ..., "delay_ms": D}],
"late_rank": the rank that caused the most delay (or null when it is
balanced), "gpu": the device name}.

  python3 bench/straggler/make_fixtures.py OUTDIR [CASE...]
Needs >= 2 GPUs.  Keeps NVLink multicast off (NCCL_NVLS_ENABLE=0).
"""
import gzip
import json
import os
import shutil
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, schedule

WAIT, WARMUP, ACTIVE = 1, 2, 6
FIRST = WAIT + WARMUP  # ProfilerStep number of the first profiled step

CASES = {
    "ddp_none": ("ddp", []),
    "ddp_const_r1": ("ddp", [(s, 1, "host_fwd", 20.0) for s in range(ACTIVE)]),
    "ddp_intermittent_r1": ("ddp", [(s, 1, "host_fwd", 20.0) for s in (1, 3, 4)]),
    "ddp_alternating": ("ddp", [(s, s % 2, "host_fwd", 15.0) for s in range(ACTIVE)]),
    "ddp_bwd_r0": ("ddp", [(s, 0, "in_bwd", 15.0) for s in range(ACTIVE)]),
    "fsdp_const_r1": ("fsdp", [(s, 1, "host_fwd", 20.0) for s in range(ACTIVE)]),
    "fsdp_intermittent_r0": ("fsdp", [(s, 0, "host_fwd", 20.0) for s in (2, 5)]),
}


def late_rank(delays, world):
    tot = [0.0] * world
    for _, r, _, d in delays:
        tot[r] += d
    s = sum(tot)
    if s == 0:
        return None
    best = max(range(world), key=lambda r: tot[r])
    return best if tot[best] >= 0.6 * s else None


def run(rank, world, case, out):
    mode, delays = CASES[case]
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(29600 + sorted(CASES).index(case)),
                      NCCL_NVLS_ENABLE="0", TORCH_SYMM_MEM_DISABLE_MULTICAST="1", NVSHMEM_DISABLE_NVLS="1")
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", rank))
    torch.manual_seed(0)
    layers = [nn.TransformerEncoderLayer(512, 8, 2048, batch_first=True) for _ in range(4)]
    m = nn.Sequential(*layers, nn.Linear(512, 512)).cuda()
    # a delay inside backward: the hook runs on the host when the middle layer's grads are computed
    pending = {"bwd": 0.0}

    def bwd_hook(mod, gin, gout):
        if pending["bwd"] > 0:
            time.sleep(pending["bwd"])
            pending["bwd"] = 0.0
    layers[2].register_full_backward_hook(bwd_hook)
    if mode == "ddp":
        m = nn.parallel.DistributedDataParallel(m, device_ids=[rank], bucket_cap_mb=4)
    else:
        from torch.distributed.fsdp import fully_shard
        for l in layers:
            fully_shard(l)
        fully_shard(m)
    opt = torch.optim.AdamW(m.parameters(), 1e-4)
    x = torch.randn(8, 256, 512, device="cuda")
    mine = {}
    for s, r, where, d in delays:
        if r == rank:
            mine[FIRST + s] = (where, d / 1000.0)
    tmp = os.path.join(out, case, f".tmp{rank}")
    os.makedirs(tmp, exist_ok=True)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=WAIT, warmup=WARMUP, active=ACTIVE),
                 on_trace_ready=lambda p: p.export_chrome_trace(os.path.join(tmp, "trace.json")),
                 record_shapes=True) as p:
        for i in range(FIRST + ACTIVE):
            where, d = mine.get(i, (None, 0.0))
            if where == "host_fwd":
                time.sleep(d)
            elif where == "in_bwd":
                pending["bwd"] = d
            with torch.autocast("cuda", torch.bfloat16):
                y = m(x).float().pow(2).mean()
            y.backward()
            opt.step()
            opt.zero_grad()
            p.step()
    torch.cuda.synchronize()
    dist.barrier()
    dist.destroy_process_group()
    src = os.path.join(tmp, "trace.json")
    with open(src, "rb") as f, gzip.open(os.path.join(out, case, f"rank{rank}.json.gz"), "wb", 6) as g:
        shutil.copyfileobj(f, g)
    shutil.rmtree(tmp)


def main():
    out = sys.argv[1]
    cases = sys.argv[2:] or sorted(CASES)
    world = 2
    for case in cases:
        os.makedirs(os.path.join(out, case), exist_ok=True)
        t0 = time.time()
        mp.spawn(run, args=(world, case, out), nprocs=world)
        mode, delays = CASES[case]
        truth = {
            "case": case, "mode": mode, "world_size": world, "gpu": torch.cuda.get_device_name(0),
            "torch": torch.__version__, "nccl": ".".join(map(str, torch.cuda.nccl.version())),
            "profiled_steps": [FIRST + s for s in range(ACTIVE)],
            "delays": [{"step": FIRST + s, "rank": r, "where": w, "delay_ms": d} for s, r, w, d in delays],
            "late_rank": late_rank(delays, world),
        }
        with open(os.path.join(out, case, "truth.json"), "w") as f:
            json.dump(truth, f, indent=1)
        print(f"{case}: {time.time() - t0:.1f} s", flush=True)


if __name__ == "__main__":
    main()
