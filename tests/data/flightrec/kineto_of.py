#!/usr/bin/env python3
"""Kineto traces of the same job as a folder of Flight Recorder JSON dumps,
for the test of the join (tests/cli/flightrec.sh): one trace per rank whose
communication kernels are the dump's completed collectives, each with the
"Process Group Name", "Process Group Description" and "Seq" that PyTorch's
record_param_comms gives a collective, one after the other on stream 19,
beside a GEMM on stream 7 (so the trace has device work).  The two accounts
then agree by construction; --wrong RANK makes that rank's first collective
another op in its trace, a disagreement the join must name.

    python3 kineto_of.py DUMP_DIR OUT_DIR [--wrong RANK]
"""
import argparse
import json
import os
import re

KERNEL = {
    "all_reduce": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
    "all_gather": "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
    "broadcast": "ncclDevKernel_Broadcast_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
}
OTHER = {"all_reduce": "broadcast", "all_gather": "all_reduce", "broadcast": "all_gather"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dumps")
    ap.add_argument("out")
    ap.add_argument("--wrong", type=int, default=-1)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    dumps = {}
    for f in sorted(os.listdir(a.dumps)):
        m = re.search(r"(\d+)(\.json)?$", f)
        if m:
            dumps[int(m.group(1))] = json.load(open(os.path.join(a.dumps, f)))
    members = {}
    for r, d in dumps.items():
        for e in d.get("entries", []):
            members.setdefault(e["process_group"][0], set()).add(r)
    for r, d in dumps.items():
        ev, t, corr, wrong = [], 0, 1, r == a.wrong
        for e in d.get("entries", []):
            if not e["retired"] and e["state"] != "completed":
                continue  # it never ran
            op = e["profiling_name"].split(":")[-1]
            if wrong:
                op, wrong = OTHER[op], False
            name, desc = e["process_group"]
            ev.append({"ph": "X", "cat": "kernel", "name": "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT",
                       "pid": r, "tid": 7, "ts": t, "dur": 80,
                       "args": {"device": r, "stream": 7, "correlation": corr}})
            ev.append({"ph": "X", "cat": "kernel", "name": KERNEL[op], "pid": r, "tid": 19, "ts": t + 40,
                       "dur": 100, "args": {"device": r, "stream": 19, "correlation": corr + 1,
                                            "Collective name": op, "Process Group Name": name,
                                            "Process Group Description": desc, "Seq": e["collective_seq_id"],
                                            "In msg nelems": 4, "Out msg nelems": 4, "dtype": "Float",
                                            "Group size": len(members[name])}})
            t += 200
            corr += 2
        with open(os.path.join(a.out, f"rank{r}.json"), "w") as f:
            json.dump({"schemaVersion": 1, "distributedInfo": {"backend": "gloo", "rank": r,
                                                               "world_size": len(dumps)},
                       "traceEvents": ev}, f)


if __name__ == "__main__":
    main()
