#!/usr/bin/env python3
"""sync_events_trace.py OUT [WORLD] [--one-gpu] [--no-cuda-event] - a DDP job profiled with CUDA sync
events, so the Kineto traces carry `cuda_sync` records (stream waits with
wait_on_stream and wait_on_cuda_event_record_corr_id): the input on which
`aorta analyze` reads the what-if's dependencies as recorded, not guessed
(docs/metrics.md "Where a dependency comes from").  One process per GPU
(NCCL, NVLS off); 8 transformer layers, batch 8 x 256, AdamW, bf16
autocast; profile(wait=1, warmup=1, active=3) with
_ExperimentalConfig(enable_cuda_sync_events=True); traces in OUT/rank<r>/.
CUPTI 13 no longer delivers cudaEventRecord's records (CUPTI_ACTIVITY_KIND_
CUDA_EVENT, 36) with the synchronisation records Kineto enables, so without
more Kineto leaves every stream wait's wait_on_stream and
wait_on_cuda_event_record_corr_id at -1 (pytorch/kineto#1552, open): each
active step enables kind 36 on the libcupti torch has loaded (ctypes:
cupti_events.py), and the waits come out paired.  --no-cuda-event leaves it off (the -1 traces).
--one-gpu (a machine with one GPU): every rank on GPU 0, gloo on the host
for a barrier a step, and the stream waits made explicit: a side stream
runs a GEMM and records an event, the default stream waits for it
(Stream.wait_event: cudaStreamWaitEvent) before its own layers; analyse
with --no-clock-align (one host, one clock), as the ranks share no GPU
collective to align on.
"""
import os
import sys


def profiler(out, rank):
    """profile(wait=1, warmup=1, active=3) with CUDA sync events, traces in OUT/rank<r>/."""
    import torch
    from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler
    cfg = torch._C._profiler._ExperimentalConfig(enable_cuda_sync_events=True)
    return profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], schedule=schedule(wait=1, warmup=1, active=3),
                   on_trace_ready=tensorboard_trace_handler(os.path.join(out, f"rank{rank}"), worker_name=f"rank{rank}"),
                   experimental_config=cfg)


def run_one_gpu(rank, world, out, events):
    import torch
    import torch.distributed as dist
    import torch.nn as nn
    from cupti_events import record_events

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29572")
    torch.cuda.set_device(0)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    m = nn.Sequential(*[nn.Linear(2048, 2048) for _ in range(6)]).cuda()
    side = torch.cuda.Stream()
    a = torch.randn(2048, 2048, device="cuda")
    x = torch.randn(64, 2048, device="cuda")
    flag = torch.zeros(1)
    with profiler(out, rank) as p:
        for _ in range(6):
            if events:
                record_events(p)
            with torch.cuda.stream(side):
                b = a @ a
                for _ in range(rank + 1):  # rank 1's side work is twice rank 0's
                    b = b @ a
                ev = torch.cuda.Event()
                ev.record(side)
            torch.cuda.current_stream().wait_event(ev)
            y = m(x + b[:64])
            y.sum().item()
            dist.all_reduce(flag)  # gloo, host: the ranks in step
            p.step()
    dist.destroy_process_group()


def run(rank, world, out, events):
    import torch
    import torch.distributed as dist
    import torch.nn as nn
    from cupti_events import record_events

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29571", NCCL_NVLS_ENABLE="0")
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", rank))
    layers = [nn.TransformerEncoderLayer(512, 8, 2048, batch_first=True) for _ in range(8)]
    m = nn.parallel.DistributedDataParallel(nn.Sequential(*layers).cuda(), device_ids=[rank], bucket_cap_mb=4)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
    x = torch.randn(8, 256, 512, device="cuda")
    with profiler(out, rank) as p:
        for _ in range(6):
            if events:
                record_events(p)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = m(x).float().pow(2).mean()
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            p.step()
    torch.cuda.synchronize()
    dist.destroy_process_group()


if __name__ == "__main__":
    import torch.multiprocessing as mp
    out = sys.argv[1]
    args = [a for a in sys.argv[2:] if not a.startswith("--")]
    world = int(args[0]) if args else 2
    mp.spawn(run_one_gpu if "--one-gpu" in sys.argv else run, args=(world, out, "--no-cuda-event" not in sys.argv),
             nprocs=world)
