#!/usr/bin/env python3
"""A synthetic hang of a large job, as c10d's NCCL Flight Recorder would dump
it, for timing aorta's reader and matcher (bench/flightrec/scale.sh): RANKS
ranks in TENSOR_PARALLEL groups of 8 (consecutive ranks) and DATA_PARALLEL
groups (stride 8), each step an all_gather and a reduce_scatter on the TP
group and an all_reduce on the DP group; rank 5 never calls the DP
all_reduce of the last step, so its DP group hangs there, and every other DP
group with it at the next step's first op... kept simple: every rank stops
after the last step, the ranks of rank 5's DP group wait in that all_reduce.
Each rank's ring holds its last ENTRIES ops (wrapped), all completed but the
last; pickle protocol 2 (Python's own pickler: dicts, lists, tuples, str,
int, bool, None, the subset c10d writes), format 2.9, one file per rank
named _dump_<rank>.

    python3 gen.py OUT RANKS [--entries 2000] [--json]
"""
import argparse
import json
import os
import pickle


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("ranks", type=int)
    ap.add_argument("--entries", type=int, default=2000)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    n, tp = a.ranks, 8
    steps = a.entries // 3 + 2
    os.makedirs(a.out, exist_ok=True)
    ndp = n // tp
    for r in range(n):
        t, d = r // tp, r % tp
        tp_ranks = list(range(t * tp, t * tp + tp))
        dp_ranks = list(range(d, n, tp))
        gname = {"world": "0", "tp": str(1 + t), "dp": str(1 + ndp + d)}
        desc = {"world": "default_pg", "tp": "TENSOR_MODEL_PARALLEL_GROUP", "dp": "DATA_PARALLEL_GROUP"}
        pgid = {"world": 0, "tp": 1, "dp": 2}
        seq = {"world": 0, "tp": 0, "dp": 0}
        ops = []
        skip_dp = r % tp == 5 % tp  # rank 5's DP group: rank 5 skips, the others wait
        for s in range(steps):
            for kind, op in (("tp", "_all_gather_base"), ("tp", "_reduce_scatter_base"), ("dp", "all_reduce")):
                last = s == steps - 1 and kind == "dp"
                if last and r == 5:
                    continue
                seq[kind] += 1
                ops.append((kind, op, seq[kind], last and skip_dp))
        ops = ops[-a.entries:]
        first_rec = (steps * 3) - len(ops)
        entries = []
        for i, (kind, op, sq, waiting) in enumerate(ops):
            done = not waiting
            entries.append({
                "record_id": first_rec + i, "pg_id": pgid[kind], "process_group": (gname[kind], desc[kind]),
                "collective_seq_id": sq, "p2p_seq_id": 0, "op_id": sq, "profiling_name": "nccl:" + op,
                "time_created_ns": 1_700_000_000_000_000_000 + (first_rec + i) * 1000,
                "input_sizes": [[4096, 1024]], "input_dtypes": ["BFloat16"],
                "output_sizes": [[4096 * (8 if "gather" in op else 1), 1024]], "output_dtypes": ["BFloat16"],
                "state": "completed" if done else "scheduled",
                "time_discovered_started_ns": 1 if done else None, "time_discovered_completed_ns": 2 if done else None,
                "retired": done, "timeout_ms": 600000, "is_p2p": False, "thread_id": "1", "thread_name": "python",
                "frames": [{"name": "train_step", "filename": "/job/train.py", "line": 88}]})
        pg_config = {gname[k]: {"name": gname[k], "desc": desc[k], "ranks": str(rk)}
                     for k, rk in (("world", list(range(n))), ("tp", tp_ranks), ("dp", dp_ranks))}
        pg_status = {}
        for k in ("world", "tp", "dp"):
            last = max([e["collective_seq_id"] for e in entries if e["process_group"][0] == gname[k]] or [0])
            done = max([e["collective_seq_id"] for e in entries if e["process_group"][0] == gname[k] and e["retired"]] or [0])
            pg_status[str(pgid[k])] = {"last_enqueued_collective": last, "last_started_collective": -1,
                                       "last_completed_collective": done}
        dump = {"version": "2.9", "pg_config": pg_config, "nccl_version": "2.27.3", "pg_status": pg_status,
                "entries": entries}
        path = os.path.join(a.out, f"_dump_{r}")
        if a.json:
            dump["pg_status"] = {k: {kk: str(vv) for kk, vv in v.items()} for k, v in pg_status.items()}
            for e in entries:
                e["process_group"] = list(e["process_group"])
                e["time_discovered_started_ns"] = e["time_discovered_started_ns"] or 0
                e["time_discovered_completed_ns"] = e["time_discovered_completed_ns"] or 0
                del e["frames"]
            with open(path + ".json", "w") as f:
                json.dump(dump, f)
        else:
            with open(path, "wb") as f:
                pickle.dump(dump, f, protocol=2)


if __name__ == "__main__":
    main()
