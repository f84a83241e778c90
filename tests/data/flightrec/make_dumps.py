#!/usr/bin/env python3
"""Flight Recorder dumps of planted hangs, made by PyTorch itself.

Four ranks (processes) run a small program of collectives over three kinds of
process group: the world, two TENSOR_PARALLEL pairs ([0, 1], [2, 3]) and two
DATA_PARALLEL pairs ([0, 2], [1, 3]).  Each step is

    all_reduce on its TENSOR_PARALLEL pair,
    all_gather on its DATA_PARALLEL pair,
    broadcast from rank 0 on the world.

A scenario plants one fault at step FAULT_STEP.  Which op each rank then
blocks on is worked out first (an op completes only when every member of its
group reaches it with the same call), so every rank calls the ops that
complete as usual and issues the op it would block on with async_op=True and
stops there, which is the state of a real hang; then every rank that is
still alive dumps its Flight Recorder (pickle: _dump_fr_trace() or, NCCL,
_dump_nccl_trace(); JSON: _dump_fr_trace_json() / _dump_nccl_trace_json())
and exits without waiting.  Scenarios:

  healthy   no fault: every op completes
  skip      rank 3 skips its DATA_PARALLEL all_gather
  size      rank 1 calls its TENSOR_PARALLEL all_reduce with another size:
            8 elements, not 4 (NCCL: it hangs); shape [2, 2], not [4] (gloo,
            which aborts a process on a transfer of another byte count: the
            same bytes, so it completes, and the dump shows the mismatch)
  dtype     rank 2 calls the world broadcast with another dtype: float64, not
            float32 (NCCL); int32, not float32 (gloo: the same width)
  killed    rank 2 stops dead before the step (SIGSTOP, as a node that
            vanished: its peers block instead of seeing a closed socket) and
            leaves no dump; it is killed once the others have dumped
  wrap      as skip, with a ring buffer of 8 entries and 10 steps (it wraps)
  hostnames as skip, the dumps named <host>_fr_<rank> with digits in the host
  p2p       (NCCL only: gloo records no send/recv) rank 0 sends to 1, rank 1
            receives from 3

Usage (CPU, gloo; torch installed, e.g. python3 -m venv /tmp/venv-torch &&
/tmp/venv-torch/bin/pip install torch):

    python3 make_dumps.py --out tests/data/flightrec

NCCL, on a machine with 4 GPUs (2 or more: --world 2 runs the pairs only):

    python3 make_dumps.py --backend nccl --world 4 --out /tmp/fr-nccl

Each scenario gets <out>/<scenario>/pickle/ and <out>/<scenario>/json/, one
file per rank; the program and the planted fault are in <out>/<scenario>/plan.json
(the truth the tests compare the diagnosis with).
"""
import argparse
import datetime
import json
import os
import signal
import sys
import time

FAULT_STEP = 3
SCENARIOS = ["healthy", "skip", "size", "dtype", "killed", "wrap", "hostnames", "p2p"]
HOSTS = ["gpu-node07.dc2", "gpu-node07.dc2", "gpu-node12.dc3", "gpu-node12.dc3"]


def planted(world):
    """The rank each fault is planted on: at world 4 rank 3 skips, rank 2
    calls another dtype or is killed, rank 1 another size; at world 2 (one
    pair) rank 1 does each."""
    return {"skip": world - 1, "dtype": world // 2, "killed": world // 2, "size": 1}


def groups_of(world):
    tp = [[0, 1], [2, 3]] if world == 4 else [[0, 1]]
    dp = [[0, 2], [1, 3]] if world == 4 else [[0, 1]]
    return tp, dp


def program(world, steps, scenario):
    """The ops every rank would call, in order: (step, group kind, op)."""
    ops = []
    for s in range(steps):
        ops += [(s, "tp", "all_reduce"), (s, "dp", "all_gather"), (s, "world", "broadcast")]
        if scenario == "p2p" and s == FAULT_STEP:
            ops.append((s, "world", "p2p"))
    return ops


def members(world, kind, rank):
    tp, dp = groups_of(world)
    if kind == "world":
        return list(range(world))
    for g in (tp if kind == "tp" else dp):
        if rank in g:
            return g
    raise ValueError(kind)


def call_of(scenario, step, kind, op, rank, backend="gloo", world=4):
    """What rank calls for this op: None (it skips it), or (shape, dtype).
    gloo aborts the process on a transfer of another byte count, so under
    gloo the odd call keeps the bytes (another shape, another dtype of the
    same width) and completes; NCCL gets the mismatch that hangs."""
    fault = step == FAULT_STEP
    at = planted(world)
    if fault and scenario in ("skip", "wrap", "hostnames") and rank == at["skip"] and kind == "dp":
        return None
    if fault and scenario == "size" and rank == 1 and kind == "tp":
        return ((2, 2), "float32") if backend == "gloo" else ((8,), "float32")
    if fault and scenario == "dtype" and rank == at["dtype"] and kind == "world":
        return ((4,), "int32") if backend == "gloo" else ((4,), "float64")
    return ((4,), "float32")


def completes(calls, backend):
    """Whether one collective's calls (one per member) complete."""
    if backend == "gloo":  # the same bytes on every member
        import math
        width = {"float32": 4, "int32": 4, "float64": 8}
        return len({math.prod(sh) * width[dt] for sh, dt in calls}) == 1
    return len(set(calls)) == 1


def plan(world, steps, scenario, backend="gloo"):
    """Each rank's ops (indices into the program) and the one it blocks on.
    An op completes when every member of its group has reached it with the
    same call; ranks advance until nothing can.  A dead rank calls nothing
    from FAULT_STEP on; the p2p op (rank 0 sends to 1, 1 receives from 3)
    never completes."""
    ops = program(world, steps, scenario)
    dead = {planted(world)["killed"]} if scenario == "killed" else set()
    seq = {}
    for r in range(world):
        seq[r] = [i for i, (s, k, o) in enumerate(ops)
                  if (o != "p2p" or r in (0, 1)) and call_of(scenario, s, k, o, r, backend, world) is not None
                  and not (r in dead and s >= FAULT_STEP)]
    pos = {r: 0 for r in range(world)}
    moved = True
    while moved:
        moved = False
        for r in range(world):
            if pos[r] >= len(seq[r]):
                continue
            i = seq[r][pos[r]]
            s, kind, op = ops[i]
            if op == "p2p":
                continue
            mem = members(world, kind, r)
            if all(pos[m] < len(seq[m]) and seq[m][pos[m]] == i for m in mem) and \
                    completes([call_of(scenario, s, kind, op, m, backend, world) for m in mem], backend):
                for m in mem:
                    pos[m] += 1
                moved = True
    blocked = {}
    for r in range(world):
        if r in dead:
            blocked[r] = "dead"
        elif pos[r] < len(seq[r]):
            blocked[r] = seq[r][pos[r]]
    return ops, seq, pos, blocked


def expect(scenario, backend, world=4):
    """The diagnosis the planted fault calls for (the tests hold aorta to it):
    the group (by description and members), the op and its sequence number
    (collective_seq_id counts from 1 in each group; the fault is at step
    FAULT_STEP, numbered from 0), the mismatch and the ranks it names."""
    seq = FAULT_STEP + 1
    at = planted(world)
    dp = [g for g in groups_of(world)[1] if at["skip"] in g][0]
    if scenario == "healthy":
        return {"kind": "healthy"}
    if scenario in ("skip", "wrap", "hostnames"):
        return {"kind": "hang", "pg_name": "DATA_PARALLEL", "ranks": dp, "op": "all_gather",
                "collective_seq_id": seq, "mismatch": "missing", "missing_ranks": [at["skip"]],
                "culprits": [at["skip"]]}
    if scenario == "size":
        return {"kind": "mismatch" if backend == "gloo" else "hang", "pg_name": "TENSOR_PARALLEL", "ranks": [0, 1],
                "op": "all_reduce", "collective_seq_id": seq, "mismatch": "size", "mismatched_ranks": [1],
                "culprits": [1]}
    if scenario == "dtype":
        return {"kind": "mismatch" if backend == "gloo" else "hang", "pg_name": "default_pg",
                "ranks": list(range(world)), "op": "broadcast", "collective_seq_id": seq, "mismatch": "dtype",
                "mismatched_ranks": [at["dtype"]], "culprits": [at["dtype"]]}
    if scenario == "killed":
        # the killed rank's peers wait in its TENSOR_PARALLEL and DATA_PARALLEL pairs
        k = at["killed"]
        return {"kind": "hang", "pg_name": ["TENSOR_PARALLEL", "DATA_PARALLEL"], "mismatch": "missing",
                "collective_seq_id": seq, "missing_ranks": [k], "culprits": [k], "ranks_without_dump": [k]}
    if scenario == "p2p":
        return {"kind": "hang", "pg_name": "default_pg", "op": ["send", "recv"], "mismatch": "missing",
                "missing_ranks_any_of": [[1], [3]]}
    raise ValueError(scenario)


def worker(rank, args, scenario, outdir):
    import torch
    import torch.distributed as dist

    world = args.world
    steps = 10 if scenario == "wrap" else args.steps
    ops, seq, pos, blocked = plan(world, steps, scenario, args.backend)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(args.port)
    dev = torch.device("cuda", rank) if args.backend == "nccl" else torch.device("cpu")
    if args.backend == "nccl":
        torch.cuda.set_device(rank)
    kw = {"device_id": dev} if args.backend == "nccl" else {}  # NCCL: eager communicators (p2p on them)
    dist.init_process_group(args.backend, rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=args.timeout), **kw)
    tp, dp = groups_of(world)
    # every rank creates every group, in the same order
    tpg = [dist.new_group(g, group_desc="TENSOR_PARALLEL") for g in tp]
    dpg = [dist.new_group(g, group_desc="DATA_PARALLEL") for g in dp]
    pick = {"tp": next(g for g, m in zip(tpg, tp) if rank in m),
            "dp": next(g for g, m in zip(dpg, dp) if rank in m), "world": None}
    stop = blocked.get(rank)
    for i in seq[rank]:
        s, kind, op = ops[i]
        last = stop == i
        shape, dtype = call_of(scenario, s, kind, op, rank, args.backend, world)
        t = torch.ones(shape, dtype=getattr(torch, dtype), device=dev)
        g = pick[kind]
        if op == "all_reduce":
            w = dist.all_reduce(t, group=g, async_op=last)
        elif op == "all_gather":
            out = [torch.empty_like(t) for _ in members(world, kind, rank)]
            w = dist.all_gather(out, t, group=g, async_op=last)
        elif op == "broadcast":
            w = dist.broadcast(t, 0, group=g, async_op=last)
        else:  # p2p, NCCL only
            w = dist.isend(t, 1) if rank == 0 else dist.irecv(t, 3)
        if last:
            break
    if stop == "dead":
        os.kill(os.getpid(), signal.SIGSTOP)  # frozen: no dump; the parent kills it
        os._exit(1)
    if args.backend == "nccl":
        torch.cuda.synchronize(dev) if stop is None else None
    time.sleep(args.settle)  # let the watchdog see what completed
    c10d = torch._C._distributed_c10d
    if args.backend == "nccl":
        pk, js = c10d._dump_nccl_trace(), c10d._dump_nccl_trace_json()
    else:
        pk, js = c10d._dump_fr_trace(), c10d._dump_fr_trace_json()
    name = f"{HOSTS[rank]}_fr_{rank}" if scenario == "hostnames" else f"fr_trace_rank_{rank}"
    for sub, data, ext in (("pickle", pk, ""), ("json", js, ".json")):
        d = os.path.join(outdir, sub)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, name + ext), "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode())
    # nobody exits before everyone has dumped: a peer's closed socket would
    # end the blocked ops (gloo retires an op that failed)
    store = dist.distributed_c10d._get_default_store()
    alive = world - (1 if scenario == "killed" else 0)
    store.add("fr_dumped", 1)
    while store.add("fr_dumped", 0) < alive:
        time.sleep(0.05)
    time.sleep(0.5)
    sys.stdout.flush()
    os._exit(0)  # never wait on the blocked op


def run(args, scenario):
    import torch.multiprocessing as mp

    outdir = os.path.join(args.out, scenario)
    os.makedirs(outdir, exist_ok=True)
    steps = 10 if scenario == "wrap" else args.steps
    ops, seq, pos, blocked = plan(args.world, steps, scenario, args.backend)
    truth = {"scenario": scenario, "world": args.world, "backend": args.backend, "steps": steps,
             "expect": expect(scenario, args.backend, args.world),
             "fault_step": FAULT_STEP,
             "blocked": {str(r): (v if v == "dead" else (None if v is None else
                                                         {"step": ops[v][0], "group": ops[v][1], "op": ops[v][2]}))
                         for r, v in ((r, blocked.get(r)) for r in range(args.world))}}
    with open(os.path.join(outdir, "plan.json"), "w") as f:
        json.dump(truth, f, indent=1, sort_keys=True)
        f.write("\n")
    os.environ["TORCH_FR_BUFFER_SIZE"] = "8" if scenario == "wrap" else "200"
    os.environ["TORCH_NCCL_TRACE_BUFFER_SIZE"] = os.environ["TORCH_FR_BUFFER_SIZE"]
    ctx = mp.start_processes(worker, args=(args, scenario, outdir), nprocs=args.world, join=False,
                             start_method="spawn")
    deadline = time.time() + args.timeout + 60
    dead = [r for r, v in blocked.items() if v == "dead"]
    while True:
        procs = ctx.processes
        if all(p.exitcode is not None for r, p in enumerate(procs) if r not in dead):
            for r in dead:
                procs[r].kill()  # stopped dead at the fault: killed now
            for p in procs:
                p.join()
            break
        if time.time() > deadline:
            for p in procs:
                p.kill()
            raise SystemExit(f"{scenario}: the processes did not finish")
        time.sleep(0.2)
    bad = [r for r, p in enumerate(ctx.processes) if r not in dead and p.exitcode != 0]
    if bad:
        raise SystemExit(f"{scenario}: ranks {bad} failed")
    print(f"{scenario}: {outdir}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--backend", default="gloo", choices=["gloo", "nccl"])
    ap.add_argument("--world", type=int, default=4, choices=[2, 4])
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--settle", type=float, default=2.0, help="seconds between the last call and the dump")
    ap.add_argument("--timeout", type=int, default=60, help="the process groups' timeout (s)")
    ap.add_argument("--port", type=int, default=29561)
    ap.add_argument("scenarios", nargs="*", default=None)
    args = ap.parse_args()
    # p2p: rank 1 receives from rank 3, which a world of 2 does not have
    todo = args.scenarios or [s for s in SCENARIOS if s != "p2p" or (args.backend == "nccl" and args.world == 4)]
    for sc in todo:
        if sc == "p2p" and args.backend != "nccl":
            raise SystemExit("p2p: gloo records no send/recv in its Flight Recorder; use --backend nccl")
        run(args, sc)
        args.port += 1


if __name__ == "__main__":
    main()
