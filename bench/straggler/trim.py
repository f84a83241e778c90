#!/usr/bin/env python3
"""trim.py SRC_DIR DST_DIR - makes the straggler fixtures small enough to commit.

Copies each case folder, keeping from every rank's Kineto trace everything
aorta reads (GPU kernels, copies, fills, runtime and driver calls with their
correlation ids, step annotations on host and GPU, metadata events and the
trace header with distributedInfo) and dropping what it does not: flow
events (ac2g, fwdbwd) and CPU operator events other than ProfilerStep#N and
the NCCL / record_param_comms operators.  Timestamps and every kept event are
unchanged, so every figure aorta computes is the same as on the full trace
(checked by bench/straggler/trim_check.sh).
"""
import gzip
import json
import os
import shutil
import sys


def keep(e):
    cat = e.get("cat")
    if cat in ("ac2g", "fwdbwd"):
        return False
    if cat == "cpu_op":
        n = e.get("name", "")
        return n.startswith("ProfilerStep#") or n.startswith("nccl:") or n == "record_param_comms"
    return True


def main():
    src, dst = sys.argv[1], sys.argv[2]
    for case in sorted(os.listdir(src)):
        if not os.path.isdir(os.path.join(src, case)):
            continue
        os.makedirs(os.path.join(dst, case), exist_ok=True)
        for f in sorted(os.listdir(os.path.join(src, case))):
            a, b = os.path.join(src, case, f), os.path.join(dst, case, f)
            if not f.endswith(".json.gz"):
                shutil.copy(a, b)
                continue
            d = json.load(gzip.open(a))
            d["traceEvents"] = [e for e in d["traceEvents"] if keep(e)]
            with gzip.GzipFile(b, "wb", 9, mtime=0) as g:
                g.write(json.dumps(d, separators=(",", ":")).encode())


if __name__ == "__main__":
    main()
