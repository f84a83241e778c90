#!/usr/bin/env python3
"""make_fixtures.py - what-if validation pairs: the same job run twice on 4
GPUs, with and without a planted slowdown, profiled by the PyTorch profiler.

Each case is a folder OUT/<case>/ with base/rank{0..3}.json.gz,
slowed/rank{0..3}.json.gz (Kineto JSON, ProfilerStep#N annotations) and
truth.json: what was planted (rank or stage, where, how much) and the step
time of both runs as measured on every rank by CUDA events (and host
wall-clock), never read from the traces.  The base run is the slowed run with
the target (a rank or a stage) fixed, so base's measured step is what a
what-if for that target should predict from the slowed run's traces.

Jobs (one process per GPU, NCCL, each on its own quarter of the cores, Python's
garbage collector off while stepping; every step ends with a device sync, as
a loop that logs the loss does):
  ddp    DDP, GPU-bound: 8 x (Linear 4096 + GELU), bf16, 12288 tokens
  fsdp   FSDP2, host-bound: 6 x (Linear 1024 + GELU) each fully_shard-ed,
         fp32, 32 rows (many small kernels; the GPU waits for launches)
  pp     2-stage x 2-replica pipeline: ranks 0,1 = stage 0, ranks 2,3 =
         stage 1 (replica r = ranks r, r+2); each stage 4 x (Linear 4096 +
         GELU), bf16; GPipe, 4 micro-batches of 4096 tokens, activations and
         their gradients over NCCL isend/irecv (stage 0 rank r <-> stage 1
         rank r+2), then each stage's DP all-reduce of its gradients between
         its 2 replicas, then AdamW.
Plants (kind at where on rank):
  host_sleep  time.sleep on the host
  gpu_sleep   torch.cuda._sleep (one spin kernel) calibrated to ms
  gpu_matmul  extra 4096^3 bf16 matmuls (count calibrated to ms)
  layers      (where "build") the rank's stage runs this many of the pipeline's 8
              layers instead of 4 (the value, in the ms field)
  where: before_fwd (before the step's forward; in pp before each
  micro-batch's forward) or in_bwd (a gradient hook in the middle of the
  model: once per backward, i.e. per micro-batch in pp).

  python3 bench/whatif/make_fixtures.py OUTDIR --job ddp|fsdp|pp [CASE...]
  python3 bench/whatif/make_fixtures.py OUTDIR --cpu ...   (gloo, tiny sizes:
      tests the script without GPUs; the figures mean nothing)
  --active N    profiled steps per run (default 4)
  --repeats N   runs of each of base and slowed, interleaved (base, slowed, base,
                slowed, ...; default 2); run 1's traces are the fixture, run k's
                go to OUTDIR/.repeat (k = 2) or OUTDIR/.repeatK; truth.json keeps
                every run's figures (measured.*.runs) and their median step
                (measured.*.median_of_runs_ms)
  --cores-from N  each rank's cores taken from the N-th core on (default 0;
                1 leaves core 0, which takes the interrupts, to the system)
  --world N     ranks (GPUs): 4 (default) or 2 (DDP and FSDP cases whose
                plants are on ranks 0 and 1 only)
  --same-run    base and slowed as profiled blocks of one run, the plants
                switched between them: base, slowed, base (each block PRE
                unprofiled steps, the profiler's warm-up step, then --active
                profiled ones).  The first base block's traces are the base
                run's, the slowed block's the slowed run's; the truth
                (expected_step_ms_if_fixed) is the median over both base
                blocks' steps (measured.base and measured.base_after), so a
                host-bound job's run-to-run spread (a whole run slower or
                faster by several ms) drops out of the comparison.  Not for
                plants that change the model (layers).
  --sync-events profile with CUDA sync events and cudaEventRecord's records, so the traces
                record their stream waits (docs/metrics.md "Where a dependency comes from")
Keeps NVLink multicast off (NCCL_NVLS_ENABLE=0 etc.).
"""
import argparse
import datetime
import gc
import gzip
import json
import os
import shutil
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, schedule

from cupti_events import record_events

WORLD = 4
PRE, WARMUP, ACTIVE, POST = 3, 1, 4, 4  # unprofiled, profiler warm-up, profiled, unprofiled after
FIRST = PRE + WARMUP                     # ProfilerStep number of the first profiled step
PROFILED = list(range(FIRST, FIRST + ACTIVE))
STAGES = [[0, 1], [2, 3]]                # pp: stage s = these ranks
REPLICAS = [[0, 2], [1, 3]]              # pp: replica r = stage 0 rank r, stage 1 rank r + 2


def P(rank, where, kind, ms, steps=None):
    """A plant; steps: the profiled steps (0-based, of each block) it fires
    in, None: every step."""
    p = {"rank": rank, "where": where, "kind": kind, "ms": ms}
    if steps is not None:
        p["steps"] = list(steps)
    return p


# case: (job, target, plants of the slowed run, plants of the base run, what the truth is)
CASES = {
    # DDP, GPU-bound
    "ddp_gpu_fwd_r1": ("ddp", {"rank": 1}, [P(1, "before_fwd", "gpu_sleep", 8.0)], [],
                       "rank 1's GPU is 8 ms slower before forward; fixing it gives the base step"),
    "ddp_matmul_bwd_r2": ("ddp", {"rank": 2}, [P(2, "in_bwd", "gpu_matmul", 6.0)], [],
                          "rank 2 runs ~6 ms of extra matmuls inside backward; the all-reduces wait for it"),
    "ddp_host_bwd_absorbed_r1": ("ddp", {"rank": 1}, [P(1, "in_bwd", "host_sleep", 4.0)], [],
                                 "rank 1's host sleeps 4 ms inside backward while its GPU still has"
                                 " >4 ms of queued work: absorbed, base and slowed steps nearly equal"),
    "ddp2_matmul_fwd_r1": ("ddp", {"rank": 1}, [P(1, "before_fwd", "gpu_matmul", 5.0)], [],
                           "rank 1 runs ~5 ms of extra matmuls before forward every step (GPU-bound;"
                           " --world 2)"),
    "ddp2_late_2of8_r1": ("ddp", {"rank": 1}, [P(1, "before_fwd", "gpu_sleep", 8.0, steps=[2, 5])], [],
                          "rank 1's GPU is 8 ms late before forward in 2 of 8 profiled steps only"
                          " (--world 2 --active 8)"),
    "ddp_next_slowest_r1": ("ddp", {"rank": 1},
                            [P(1, "before_fwd", "gpu_sleep", 8.0), P(3, "before_fwd", "gpu_sleep", 7.0)],
                            [P(3, "before_fwd", "gpu_sleep", 7.0)],
                            "rank 1 (8 ms) causes most of the waiting but rank 3 (7 ms) is next-slowest:"
                            " fixing rank 1 gains ~1 ms only"),
    # FSDP2, host-bound
    "fsdp_host_fwd_r0": ("fsdp", {"rank": 0}, [P(0, "before_fwd", "host_sleep", 6.0)], [],
                         "rank 0's host sleeps 6 ms before forward; host-bound, every rank waits"),
    "fsdp_host_bwd_r3": ("fsdp", {"rank": 3}, [P(3, "in_bwd", "host_sleep", 5.0)], [],
                         "rank 3's host sleeps 5 ms inside backward; host-bound, not absorbed"),
    "fsdp_host_bwd_r1": ("fsdp", {"rank": 1}, [P(1, "in_bwd", "host_sleep", 5.0)], [],
                         "rank 1's host sleeps 5 ms inside backward (a case for --world 2 too)"),
    "fsdp_next_slowest_r2": ("fsdp", {"rank": 2},
                             [P(2, "before_fwd", "host_sleep", 6.0), P(0, "before_fwd", "host_sleep", 5.0)],
                             [P(0, "before_fwd", "host_sleep", 5.0)],
                             "rank 2 (6 ms) is the latest host but rank 0 (5 ms) next-slowest:"
                             " fixing rank 2 gains ~1 ms only"),
    # 2-stage x 2-replica pipeline
    "pp_stage1_gpu_fwd": ("pp", {"group": "stage", "index": 1, "ranks": [2, 3]},
                          [P(2, "before_fwd", "gpu_sleep", 1.0), P(3, "before_fwd", "gpu_sleep", 1.0)], [],
                          "the whole of stage 1 is 1 ms slower before each micro-batch's forward"),
    "pp_host_fwd_r0": ("pp", {"rank": 0}, [P(0, "before_fwd", "host_sleep", 1.5)], [],
                       "rank 0 (stage 0, replica 0) host sleeps 1.5 ms before each micro-batch's forward;"
                       " rank 2 waits through recv, rank 1 through the DP all-reduce"),
    "pp_matmul_bwd_r3": ("pp", {"rank": 3}, [P(3, "in_bwd", "gpu_matmul", 1.0)], [],
                         "rank 3 (stage 1, replica 1) runs ~1 ms of extra matmuls in each micro-batch's"
                         " backward; rank 1 waits through recv, rank 2 through the DP all-reduce"),
    "pp_stage_imbalance": ("pp", {"fix": "the stage balance"},
                           [P(0, "build", "layers", 2), P(1, "build", "layers", 2),
                            P(2, "build", "layers", 6), P(3, "build", "layers", 6)], [],
                           "stage 0 runs 2 of the 8 layers and stage 1 runs 6 (the base run: 4 and 4):"
                           " the partition, not a rank, is slow; the stage balance gives the base step"),
}


class Tap(nn.Module):
    """Identity whose output gradient runs a hook (the in_bwd plants)."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        if x.requires_grad:
            x.register_hook(self.fn)
        return x


def mlp(n, dim, fn, dtype):
    layers = []
    for i in range(n):
        layers += [nn.Linear(dim, dim), nn.GELU()]
        if i == n // 2 - 1:
            layers.append(Tap(fn))
    return nn.Sequential(*layers).to(dtype)


class Planter:
    def __init__(self, rank, plants, dev, cal):
        self.dev, self.cal, self.rank = dev, cal, rank
        self.use(plants)
        self.took = []  # measured durations of this rank's plants (ms)
        self.at = None  # the step's place in its block (one_run), None unprofiled
        if dev.type == "cuda":
            self.a = torch.randn(4096, 4096, device=dev, dtype=torch.bfloat16)
            self.c = torch.empty_like(self.a)

    def use(self, plants):
        """The plants that fire from now on (--same-run switches them per block)."""
        self.mine = [p for p in plants if p["rank"] == self.rank]

    def fire(self, where):
        for p in self.mine:
            if p["where"] != where:
                continue
            if "steps" in p and (self.at is None or self.at not in [PROFILED[k] for k in p["steps"] if k < len(PROFILED)]):
                continue  # a plant of some profiled steps only
            if p["kind"] == "host_sleep":
                t = time.perf_counter()
                time.sleep(p["ms"] / 1e3)
                self.took.append((time.perf_counter() - t) * 1e3)
                continue
            if self.dev.type != "cuda":  # --cpu: stand in for GPU work
                t = time.perf_counter()
                time.sleep(p["ms"] / 1e3)
                self.took.append((time.perf_counter() - t) * 1e3)
                continue
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            if p["kind"] == "gpu_sleep":
                torch.cuda._sleep(int(p["ms"] * self.cal["cycles_per_ms"]))
            else:
                for _ in range(max(1, round(p["ms"] / self.cal["matmul_ms"]))):
                    torch.matmul(self.a, self.a, out=self.c)
            e1.record()
            self.took.append((e0, e1))

    def measured(self):
        out = []
        for t in self.took:
            out.append(t[0].elapsed_time(t[1]) if isinstance(t, tuple) else t)
        self.took = []
        return out


def calibrate(dev):
    if dev.type != "cuda":
        return {"cycles_per_ms": 0, "matmul_ms": 1.0}
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(1000)
    cyc = 2_000_000
    best = []
    for _ in range(5):
        e0.record(); torch.cuda._sleep(cyc); e1.record(); torch.cuda.synchronize()
        best.append(e0.elapsed_time(e1))
    cycles_per_ms = cyc / statistics.median(best)
    a = torch.randn(4096, 4096, device=dev, dtype=torch.bfloat16)
    c = torch.empty_like(a)
    for _ in range(3):
        torch.matmul(a, a, out=c)
    ts = []
    for _ in range(5):
        e0.record()
        for _ in range(10):
            torch.matmul(a, a, out=c)
        e1.record(); torch.cuda.synchronize()
        ts.append(e0.elapsed_time(e1) / 10)
    return {"cycles_per_ms": cycles_per_ms, "matmul_ms": statistics.median(ts)}


def build_ddp(rank, dev, cpu, tap):
    dim, n, tokens = (64, 4, 32) if cpu else (4096, 8, 12288)
    dtype = torch.float32 if cpu else torch.bfloat16
    m = mlp(n, dim, tap, dtype).to(dev)
    m = nn.parallel.DistributedDataParallel(m, device_ids=None if cpu else [rank])
    opt = torch.optim.AdamW(m.parameters(), 1e-4, foreach=True)
    x = torch.randn(tokens, dim, device=dev, dtype=dtype)

    def step(fire):
        fire("before_fwd")
        m(x).float().pow(2).mean().backward()
        opt.step()
        opt.zero_grad(set_to_none=False)
    return step


def build_fsdp(rank, dev, cpu, tap):
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard
    dim, n, rows = (64, 4, 8) if cpu else (1024, 6, 32)
    m = mlp(n, dim, tap, torch.float32).to(dev)
    mesh = init_device_mesh(dev.type, (WORLD,))
    for l in m:
        if isinstance(l, nn.Linear):
            fully_shard(l, mesh=mesh)
    fully_shard(m, mesh=mesh)
    opt = torch.optim.AdamW(m.parameters(), 1e-4, foreach=True)
    x = torch.randn(rows, dim, device=dev)

    def step(fire):
        fire("before_fwd")
        m(x).pow(2).mean().backward()
        opt.step()
        opt.zero_grad(set_to_none=False)
    return step


def build_pp(rank, dev, cpu, tap, groups, layers=None):
    dim, n, tokens, nmb = (64, 4, 16, 4) if cpu else (4096, 4, 4096, 4)
    n = layers or n  # a "layers" plant: this stage's share of the 8 layers
    dtype = torch.float32 if cpu else torch.bfloat16
    stage = 0 if rank in STAGES[0] else 1
    peer = rank + 2 if stage == 0 else rank - 2
    group = groups[stage]
    m = mlp(n, dim, tap, dtype).to(dev)
    for p in m.parameters():  # the two replicas of a stage start equal
        dist.broadcast(p.data, STAGES[stage][0], group=group)
    opt = torch.optim.AdamW(m.parameters(), 1e-4, foreach=True)
    x = torch.randn(nmb, tokens, dim, device=dev, dtype=dtype)
    params = list(m.parameters())

    def step(fire):
        if stage == 0:
            outs, sends = [], []
            for i in range(nmb):
                fire("before_fwd")
                y = m(x[i])
                outs.append(y)
                sends.append(dist.isend(y.detach(), peer))
            for i in range(nmb):
                g = torch.empty_like(outs[i])
                dist.irecv(g, peer).wait()
                outs[i].backward(g)
            for s in sends:
                s.wait()
        else:
            ins, losses, sends = [], [], []
            for i in range(nmb):
                a = torch.empty(tokens, dim, device=dev, dtype=dtype)
                dist.irecv(a, peer).wait()
                a.requires_grad_()
                fire("before_fwd")
                losses.append(m(a).float().pow(2).mean())
                ins.append(a)
            for i in range(nmb):
                losses[i].backward()
                sends.append(dist.isend(ins[i].grad, peer))
            for s in sends:
                s.wait()
        flat = torch.cat([p.grad.reshape(-1) for p in params])
        dist.all_reduce(flat, group=group)
        flat.div_(len(STAGES[stage]))
        off = 0
        for p in params:
            k = p.grad.numel()
            p.grad.copy_(flat[off:off + k].view_as(p.grad))
            off += k
        opt.step()
        opt.zero_grad(set_to_none=False)
    return step


def one_run(rank, dev, cpu, job, blocks, cal, groups):
    """Builds the job afresh and runs it: per block (plants, trace path),
    PRE unprofiled steps, WARMUP and ACTIVE profiled ones (traced into the
    block's path) with the block's plants; then POST unprofiled steps with the
    last block's plants.  Returns per block the measured step times."""
    planter = Planter(rank, blocks[0][0], dev, cal)
    tap = lambda g: planter.fire("in_bwd")
    torch.manual_seed(0)
    if job == "ddp":
        step = build_ddp(rank, dev, cpu, tap)
    elif job == "fsdp":
        step = build_fsdp(rank, dev, cpu, tap)
    else:
        plants = blocks[0][0]
        layers = next((int(p["ms"]) for p in plants if p["rank"] == rank and p["kind"] == "layers"), None)
        step = build_pp(rank, dev, cpu, tap, groups, layers)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    sync()
    dist.barrier()
    cyc = PRE + WARMUP + ACTIVE
    nb = len(blocks)
    n = nb * cyc + POST
    cuda = dev.type == "cuda"
    ev0 = [torch.cuda.Event(enable_timing=True) for _ in range(n)] if cuda else None
    ev1 = [torch.cuda.Event(enable_timing=True) for _ in range(n)] if cuda else None
    w0, w1 = [0.0] * n, [0.0] * n
    plant_ms = {}
    tmps = [path + ".tmp" for _, path in blocks]
    exported = []
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])

    def one(i):
        planter.at = i % cyc if i < nb * cyc else None  # its place in the block (steps-only plants)
        w0[i] = time.perf_counter()
        if cuda:
            ev0[i].record()
        step(planter.fire)
        if cuda:
            ev1[i].record()
        sync()  # the step ends with a device sync, as loss.item() would
        w1[i] = time.perf_counter()
        plant_ms[i] = planter.measured()

    def ready(p):  # the profiler's cycle k ends: block k's trace
        p.export_chrome_trace(tmps[len(exported)])
        exported.append(1)

    # Python's collector off while stepping (as trainers do): a collection in
    # the middle of a host-bound step would be noise no plant put there
    gc.collect()
    gc.disable()
    try:
        sev = os.environ.get("MAKE_FIXTURES_SYNC_EVENTS") == "1" and cuda  # --sync-events
        cfg = {"experimental_config": torch._C._profiler._ExperimentalConfig(enable_cuda_sync_events=True)} if sev else {}
        with profile(activities=acts, schedule=schedule(wait=PRE, warmup=WARMUP, active=ACTIVE, repeat=nb),
                     on_trace_ready=ready, record_shapes=True, **cfg) as prof:
            for i in range(nb * cyc):
                planter.use(blocks[i // cyc][0])
                if sev:
                    record_events(prof)
                one(i)
                prof.step()
        for i in range(nb * cyc, n):  # unprofiled, for the profiler's cost
            one(i)
    finally:
        gc.enable()
    # A step runs from its start to the next step's start (as the trace's GPU
    # windows do); the last profiled step of a block is followed by the trace
    # export, so it gets its own body plus the median gap between the others.
    if cuda:
        body = [ev0[i].elapsed_time(ev1[i]) for i in range(n)]
        start = [0.0] + [ev0[0].elapsed_time(ev0[i]) for i in range(1, n)]
    else:
        body = [(w1[i] - w0[i]) * 1e3 for i in range(n)]
        start = [(w0[i] - w0[0]) * 1e3 for i in range(n)]
    wbody = [(w1[i] - w0[i]) * 1e3 for i in range(n)]
    wstart = [(w0[i] - w0[0]) * 1e3 for i in range(n)]

    def steps(start, body, idx):
        gaps = [start[i + 1] - start[i] - body[i] for i in idx[:-1]]
        g = statistics.median(gaps)
        return {str(i): start[i + 1] - start[i] if i != idx[-1] else body[i] + g for i in idx}, g
    post = list(range(nb * cyc, n))
    post_steps, _ = steps(start, body, post)
    for (_, path), tmp in zip(blocks, tmps):
        with open(tmp, "rb") as f, gzip.GzipFile(path, "wb", 6, mtime=0) as g:
            shutil.copyfileobj(f, g)
        os.remove(tmp)
    dist.barrier()
    r4 = lambda v: round(v, 4)
    out = []
    for b in range(nb):
        prof_idx = [b * cyc + i for i in PROFILED]
        ev_steps, gap = steps(start, body, prof_idx)
        w_steps, wgap = steps(wstart, wbody, prof_idx)
        out.append({
            "rank": rank,
            "steps": {k: r4(v) for k, v in ev_steps.items()},
            "median_ms": r4(statistics.median(ev_steps.values())),
            "source": "cuda_events" if cuda else "wall_clock",
            "gap_ms": r4(gap),
            "wall_steps": {k: r4(v) for k, v in w_steps.items()},
            "wall_median_ms": r4(statistics.median(w_steps.values())),
            "unprofiled_median_ms": r4(statistics.median(post_steps.values())),
            "plant_ms": {str(s): [r4(v) for v in plant_ms[s]] for s in prof_idx if plant_ms[s]},
        })
    return out


def set_active(n, world=4):
    global ACTIVE, PROFILED, WORLD
    ACTIVE = n
    PROFILED = list(range(FIRST, FIRST + ACTIVE))
    WORLD = world


def worker(rank, args, cases, port):
    set_active(args.active, args.world)  # a spawned worker re-imports this module: set it again
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), NCCL_NVLS_ENABLE="0",
                      TORCH_SYMM_MEM_DISABLE_MULTICAST="1", NVSHMEM_DISABLE_NVLS="1")
    if args.cpu:
        dev = torch.device("cpu")
        dist.init_process_group("gloo", rank=rank, world_size=WORLD, timeout=datetime.timedelta(seconds=120))
    else:
        torch.cuda.set_device(rank)
        dev = torch.device("cuda", rank)
        dist.init_process_group("nccl", rank=rank, world_size=WORLD, device_id=dev,
                                timeout=datetime.timedelta(seconds=120))
    # each rank on its own cores, away from the others' threads (less host jitter);
    # --cores-from N leaves the first N cores (interrupts, the system) to others
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) >= 2 * WORLD + args.cores_from:
        cores = cores[args.cores_from:]
        k = len(cores) // WORLD
        os.sched_setaffinity(0, cores[rank * k:(rank + 1) * k])
    groups = [dist.new_group(s) for s in STAGES] if WORLD == 4 else None  # pp only
    cal = calibrate(dev)
    cals = [None] * WORLD
    dist.all_gather_object(cals, cal)
    for case in cases:
        job, target, slowed, base, note = CASES[case]
        res = {}
        # base, slowed, then both again (traces of the repeats kept apart, in
        # OUT/.repeat, .repeat3, ...): the repeats tell how far a run's step
        # moves by itself
        order = []
        for k in range(1, args.repeats + 1):
            sfx = "" if k == 1 else "_repeat" if k == 2 else f"_repeat{k}"
            top = args.out if k == 1 else os.path.join(args.out, ".repeat" if k == 2 else f".repeat{k}")
            if args.same_run:  # one run: base, slowed, base blocks
                order.append([("base" + sfx, base, top), ("slowed" + sfx, slowed, top),
                              ("base_after" + sfx, base, os.path.join(top, ".after"))])
            else:
                order += [[("base" + sfx, base, top)], [("slowed" + sfx, slowed, top)]]
        for runs in order:
            blocks = []
            for run, plants, top in runs:
                d = os.path.join(top, case, "slowed" if run.startswith("slowed") else "base")
                os.makedirs(d, exist_ok=True)
                blocks.append((plants, os.path.join(d, f"rank{rank}.json.gz")))
            t0 = time.time()
            rs = one_run(rank, dev, args.cpu, job, blocks, cal, groups)
            secs = round(time.time() - t0, 1)
            for (run, _, _), r in zip(runs, rs):
                allr = [None] * WORLD
                dist.all_gather_object(allr, r)
                res[run] = {"by_rank": allr, "seconds": secs if run == runs[0][0] else 0.0}
        if rank == 0:
            write_truth(args, case, res, cals)
    dist.barrier()
    dist.destroy_process_group()


def summary(run):
    """The job's step: per profiled step the slowest rank's, then the median (step_ms); and mean_ms."""
    br = run["by_rank"]
    per = {s: max(r["steps"][s] for r in br) for s in br[0]["steps"]}
    wper = {s: max(r["wall_steps"][s] for r in br) for s in br[0]["wall_steps"]}
    # mean_ms: the step as aorta measures one (per step the mean over ranks,
    # then the mean over steps: wall time per step); bench/whatif/validate.sh's truth
    mean = statistics.mean(statistics.mean(r["steps"][s] for r in br) for s in br[0]["steps"])
    return {"source": br[0]["source"],
            "steps": {s: round(v, 4) for s, v in per.items()},
            "step_ms": round(statistics.median(per.values()), 4),
            "mean_ms": round(mean, 4),
            "wall_step_ms": round(statistics.median(wper.values()), 4),
            "unprofiled_step_ms": round(statistics.median(r["unprofiled_median_ms"] for r in br), 4)}


def write_truth(args, case, res, cals):
    job, target, slowed, base, note = CASES[case]
    info = {"device": "cpu (gloo; --cpu test run)"} if args.cpu else {
        "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
        "nccl": ".".join(map(str, torch.cuda.nccl.version()))}
    truth = {
        "case": case, "job": job, "world_size": WORLD, **info,
        "profiled_steps": PROFILED,
        "groups": {"stage": STAGES, "replica": REPLICAS} if job == "pp" else {},
        "target": target,
        "note": note,
        "planted": {"slowed": slowed, "base": base,
                    "per": "micro-batch (4 per step)" if job == "pp" else "step"},
        "calibration": cals,
        "measured": {run: {**summary(res[run]), **res[run],
                           "profiled_steps": sorted(int(x) for x in res[run]["by_rank"][0]["steps"]),
                           **({"repeat": {k: v for k, v in summary(res[run + "_repeat"]).items() if k != "source"}}
                              if run + "_repeat" in res else {})}
                     for run in ("base", "slowed") + (("base_after",) if args.same_run else ())},
    }
    if args.same_run:
        truth["same_run"] = ("base, slowed and base_after are profiled blocks of one run, the plants switched"
                             " between them; the truth is the median over both base blocks' steps")
    if args.repeats > 2:  # every run's figures, in the order they ran, and their median step
        for run in ("base", "slowed") + (("base_after",) if args.same_run else ()):
            keys = [run] + [k for k in res if k.startswith(run + "_repeat")]
            runs = [{k: v for k, v in summary(res[x]).items() if k != "source"} for x in keys]
            truth["measured"][run]["runs"] = runs
            truth["measured"][run]["median_of_runs_ms"] = round(statistics.median(r["step_ms"] for r in runs), 4)
    truth["expected_step_ms_if_fixed"] = truth["measured"]["base"]["step_ms"]
    if args.same_run:
        both = list(truth["measured"]["base"]["steps"].values()) + list(truth["measured"]["base_after"]["steps"].values())
        truth["expected_step_ms_if_fixed"] = round(statistics.median(both), 4)
    path = os.path.join(args.out, case, "truth.json")
    with open(path + ".tmp", "w") as f:
        json.dump(truth, f, indent=1)
    os.replace(path + ".tmp", path)
    b, s = truth["measured"]["base"], truth["measured"]["slowed"]
    rep = lambda m: " ".join(f"{r['step_ms']:.3f}" for r in m.get("runs", [m] + ([m["repeat"]] if "repeat" in m else [])))
    after = f", base after {rep(truth['measured']['base_after'])} ms" if args.same_run else ""
    print(f"{case}: base {rep(b)} ms, slowed {rep(s)} ms{after}; truth {truth['expected_step_ms_if_fixed']:.3f} ms; unprofiled {b['unprofiled_step_ms']:.3f} / "
          f"{s['unprofiled_step_ms']:.3f}; {sum(r['seconds'] for r in res.values()):.1f} s", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("cases", nargs="*")
    ap.add_argument("--job", choices=["ddp", "fsdp", "pp"])
    ap.add_argument("--cpu", action="store_true")
    ap.add_argument("--port", type=int, default=29711)
    ap.add_argument("--active", type=int, default=ACTIVE)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--same-run", action="store_true")
    ap.add_argument("--sync-events", action="store_true")
    ap.add_argument("--cores-from", type=int, default=0)
    ap.add_argument("--world", type=int, default=WORLD, choices=[2, 4])
    args = ap.parse_intermixed_args()
    if args.sync_events:  # read by the spawned workers (one_run)
        os.environ["MAKE_FIXTURES_SYNC_EVENTS"] = "1"
    if args.active < 2 or args.repeats < 1:
        sys.exit("make_fixtures.py: --active needs at least 2 steps, --repeats at least 1 run")
    set_active(args.active, args.world)
    cases = args.cases or [c for c in CASES if args.job is None or CASES[c][0] == args.job]
    for c in cases:
        if c not in CASES:
            sys.exit(f"make_fixtures.py: unknown case '{c}' (known: {', '.join(CASES)})")
        ranks = [p["rank"] for p in CASES[c][2] + CASES[c][3]] + [CASES[c][1].get("rank", 0)]
        if CASES[c][0] == "pp" and args.world != 4 or max(ranks) >= args.world:
            sys.exit(f"make_fixtures.py: case '{c}' needs 4 ranks (--world {args.world})")
        if args.same_run and any(p["kind"] == "layers" for p in CASES[c][2] + CASES[c][3]):
            sys.exit(f"make_fixtures.py: --same-run: case '{c}' changes the model (a layers plant);"
                     " its base and slowed need runs of their own")
    if not args.cpu:
        n = torch.cuda.device_count()
        if n < WORLD:
            sys.exit(f"make_fixtures.py: {n} GPUs, need {WORLD}")
    t0 = time.time()
    mp.spawn(worker, args=(args, cases, args.port), nprocs=WORLD)
    print(f"{len(cases)} cases in {time.time() - t0:.1f} s", flush=True)


if __name__ == "__main__":
    main()
