#!/usr/bin/env python3
"""trim.py [--repeats] SRC_DIR DST_DIR - makes the what-if fixtures small enough to commit.

Copies SRC_DIR/<case>/{truth.json,base/,slowed/} to DST_DIR, keeping from
every rank's Kineto trace what aorta reads (as bench/straggler/trim.py does:
GPU kernels, copies, fills, runtime and driver calls with their correlation
ids, annotations on host and GPU, metadata and the trace header with
distributedInfo) and dropping flow events (ac2g, fwdbwd), CPU operators
other than ProfilerStep#N and the communication ones (nccl:*, c10d::*,
record_param_comms, which carry the collectives' and send/recv's arguments),
the runtime calls that neither launch, order nor wait for GPU work
(cudaStreamIsCapturing, cudaThreadExchangeStreamCaptureMode, cudaEventQuery:
the caching allocator's and autograd's bookkeeping), and the kernels' launch
geometry and occupancy arguments.  Timestamps and every kept event are
unchanged; bench/whatif/trim_check.sh shows the analysis JSON is the same on
the full and the trimmed traces.  The repeat runs' folders (.repeat*, .after)
are left out unless --repeats is given.
"""
import gzip
import json
import os
import shutil
import sys


NO_GPU_WORK = {"cudaStreamIsCapturing", "cudaThreadExchangeStreamCaptureMode", "cudaEventQuery"}
GEOMETRY = ("registers per thread", "shared memory", "blocks per SM", "warps per SM", "grid", "block",
            "est. achieved occupancy %", "queued", "context")


def keep(e):
    cat = e.get("cat")
    if cat in ("ac2g", "fwdbwd"):
        return False
    if cat == "cuda_runtime" and e.get("name") in NO_GPU_WORK:
        return False
    if cat == "kernel":
        a = e.get("args", {})
        for k in GEOMETRY:
            a.pop(k, None)
    if cat == "cpu_op":
        n = e.get("name", "")
        return (n.startswith("ProfilerStep#") or n.startswith("nccl:") or n.startswith("c10d::")
                or n == "record_param_comms")
    return True


def copy(a, b, hidden=False):
    if os.path.isdir(a):
        os.makedirs(b, exist_ok=True)
        for f in sorted(os.listdir(a)):
            if f.startswith(".") and not hidden:  # .repeat: the repeat runs' traces, not kept
                continue
            copy(os.path.join(a, f), os.path.join(b, f), hidden)
    elif a.endswith(".json.gz"):
        d = json.load(gzip.open(a))
        d["traceEvents"] = [e for e in d["traceEvents"] if keep(e)]
        with gzip.GzipFile(b + ".tmp", "wb", 9, mtime=0) as g:
            g.write(json.dumps(d, separators=(",", ":")).encode())
        os.replace(b + ".tmp", b)
    elif not a.endswith(".tmp"):
        shutil.copy(a, b)


def main():
    repeats = "--repeats" in sys.argv[1:]
    args = [a for a in sys.argv[1:] if a != "--repeats"]
    if len(args) != 2:
        sys.exit("usage: trim.py [--repeats] SRC_DIR DST_DIR   (--repeats: the repeat runs' folders too)")
    copy(args[0], args[1], repeats)


if __name__ == "__main__":
    main()
