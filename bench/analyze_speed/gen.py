#!/usr/bin/env python3
"""Scale real Kineto traces up into a large multi-rank benchmark set, streaming.

Input : the 4 ranks of /work/shared/data/kineto/h200_torch2.11/ddp_4rank_56steps_large
        (204 MB of JSON each, 56 ProfilerSteps #3..#58).
Output: OUT/plain/rank{0..7}.bench.pt.trace.json and OUT/gz/rank{0..7}.bench.pt.trace.json.gz
  * rank r (0..3) = source rank r + a copy of its first STEPS ProfilerSteps appended after the
    trace end: every `ts` shifted by the trace span (integer ns arithmetic, 3 decimals kept),
    `correlation`/ac2g flow ids, `External id` and fwdbwd flow ids bumped past the file's maxima,
    and ProfilerStep#N renumbered to follow the last step (#59, #60, ...). GPU events (and their
    ac2g flows) are copied when their launching runtime event is, so launch/kernel pairs stay whole.
  * rank r+4 = rank r with distributedInfo.rank rewritten to r+4 (byte-identical otherwise).
  * gz copies: `gzip -6` of the plain files (2 in parallel).
Only one event is held in memory at a time (two streaming passes over each source); the copied
events are rewritten at text level, so the original formatting is kept.

Usage: gen.py [--out bench/data/analyze_speed] [--steps 20] [--src DIR] [--ranks 8]
"""
import argparse
import glob
import gzip
import os
import re
import subprocess
import sys
import time

SRC = "/work/shared/data/kineto/h200_torch2.11/ddp_4rank_56steps_large"

RE_CAT = re.compile(r'"cat": "([^"]*)"')
RE_PH = re.compile(r'"ph": "([^"]*)"')
RE_TS = re.compile(r'"ts": (-?\d+)(?:\.(\d+))?')
RE_DUR = re.compile(r'"dur": (\d+)(?:\.(\d+))?')
RE_CORR = re.compile(r'"correlation": (\d+)')
RE_EXT = re.compile(r'"External id": (\d+)')
RE_ID = re.compile(r'"id": (\d+)')
RE_STEP = re.compile(r'ProfilerStep#(\d+)')
RE_NAME = re.compile(r'"name": "([^"]*)"')

GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}
LAUNCH_CATS = {"cuda_runtime", "cuda_driver"}


def to_ns(m):
    """ts/dur regex match -> integer ns (µs with up to 3 decimals)."""
    frac = (m.group(2) or "").ljust(3, "0")[:3]
    v = int(m.group(1))
    return v * 1000 + (int(frac) if v >= 0 else -int(frac))


def fmt_us(ns):
    return f"{ns // 1000}.{ns % 1000:03d}"


def events(path):
    """Yield ('head', text) once, then ('ev', block) per event, then ('tail', text).

    Relies on Kineto's layout: `"traceEvents": [` on its own line, each event opening with a
    line `  {` and closing with `  }` or `  },` (2-space indent)."""
    with gzip.open(path, "rt") if path.endswith(".gz") else open(path) as f:
        head = []
        for line in f:
            head.append(line)
            if line.strip() == '"traceEvents": [':
                break
        else:
            raise SystemExit(f"{path}: no traceEvents line")
        yield "head", "".join(head)
        block = []
        for line in f:
            s = line.rstrip("\n")
            if not block:
                if s == "  {":
                    block.append(s)
                    continue
                # end of the event list
                tail = [line] + list(f)
                yield "tail", "".join(tail)
                return
            if s in ("  }", "  },"):
                block.append("  }")
                yield "ev", "\n".join(block)
                block = []
            else:
                block.append(s)
        raise SystemExit(f"{path}: truncated")


def scan(path, nsteps):
    """Pass 1: the step window, launch correlations inside it, id maxima, trace end."""
    steps = {}
    max_corr = max_ext = max_fid = 0
    end = None
    for kind, b in events(path):
        if kind != "ev":
            continue
        cat = RE_CAT.search(b)
        cat = cat.group(1) if cat else ""
        if cat == "user_annotation":
            m = RE_STEP.search(b)
            if m:
                steps[int(m.group(1))] = to_ns(RE_TS.search(b))
        m = RE_CORR.search(b)
        if m:
            max_corr = max(max_corr, int(m.group(1)))
        m = RE_EXT.search(b)
        if m:
            max_ext = max(max_ext, int(m.group(1)))
        if cat in ("fwdbwd", "ac2g"):
            m = RE_ID.search(b)
            if m:
                max_fid = max(max_fid, int(m.group(1)))
        ts = RE_TS.search(b)
        if ts and cat != "Trace" and RE_PH.search(b).group(1) == "X":
            d = RE_DUR.search(b)
            e = to_ns(ts) + (to_ns(d) if d else 0)
            end = e if end is None or e > end else end
    nums = sorted(steps)
    if len(nums) <= nsteps:
        raise SystemExit(f"{path}: only {len(nums)} steps, need more than {nsteps}")
    w0, w1 = steps[nums[0]], steps[nums[nsteps]]
    return dict(first_step=nums[0], last_step=nums[-1], w0=w0, w1=w1, max_corr=max_corr,
                max_ext=max_ext, max_fid=max_fid, end=end)


def launches_in_window(path, w0, w1):
    corr = set()
    for kind, b in events(path):
        if kind != "ev":
            continue
        cat = RE_CAT.search(b)
        if cat and cat.group(1) in LAUNCH_CATS:
            t = to_ns(RE_TS.search(b))
            if w0 <= t < w1:
                m = RE_CORR.search(b)
                if m:
                    corr.add(int(m.group(1)))
    return corr


def generate_rank(src, dst, nsteps):
    t0 = time.time()
    info = scan(src, nsteps)
    corr = launches_in_window(src, info["w0"], info["w1"])
    w0, w1 = info["w0"], info["w1"]
    shift = info["end"] - w0 + 1_000_000            # 1 ms gap after the original trace end
    shift = (shift + 999) // 1000 * 1000             # whole µs
    new_end = w1 + shift
    c_off = info["max_corr"] + 1
    e_off = info["max_ext"] + 1
    f_off = info["max_fid"] + c_off                  # fwdbwd flow ids: past both id ranges
    s_off = info["last_step"] - info["first_step"] + 1

    def shift_ts(m):
        return f'"ts": {fmt_us(to_ns(m) + shift)}'

    def rewrite(b, cat):
        b = RE_TS.sub(shift_ts, b, count=1)
        b = RE_CORR.sub(lambda m: f'"correlation": {int(m.group(1)) + c_off}', b)
        b = RE_EXT.sub(lambda m: f'"External id": {int(m.group(1)) + e_off}', b)
        if cat == "ac2g":
            b = RE_ID.sub(lambda m: f'"id": {int(m.group(1)) + c_off}', b)
        elif cat == "fwdbwd":
            b = RE_ID.sub(lambda m: f'"id": {int(m.group(1)) + f_off}', b)
        if "ProfilerStep#" in b:
            b = RE_STEP.sub(lambda m: f"ProfilerStep#{int(m.group(1)) + s_off}", b)
        return b

    n_in = n_copy = 0
    with open(dst + ".tmp", "w") as out, open(dst + ".copies.tmp", "w") as cp:
        first = True
        first_cp = True
        tail = None
        for kind, b in events(src):
            if kind == "head":
                out.write(b)
                continue
            if kind == "tail":
                tail = b
                continue
            n_in += 1
            cat_m = RE_CAT.search(b)
            cat = cat_m.group(1) if cat_m else ""
            ph = RE_PH.search(b)
            ph = ph.group(1) if ph else ""
            if cat == "Trace":                       # the profiler span: stretch it to the new end
                ts = to_ns(RE_TS.search(b))
                b = RE_DUR.sub(f'"dur": {fmt_us(new_end - ts)}', b, count=1)
            elif '"name": "Record Window End"' in b:
                b = RE_TS.sub(f'"ts": {fmt_us(new_end)}', b, count=1)
            out.write(b if first else ",\n" + b)
            first = False
            # copy?
            dup = False
            if ph == "M" or cat in ("Trace", "") or ph == "i":
                dup = False
            elif cat in GPU_CATS:
                m = RE_CORR.search(b)
                dup = bool(m) and int(m.group(1)) in corr
            elif cat == "ac2g":
                m = RE_ID.search(b)
                dup = bool(m) and int(m.group(1)) in corr
            else:
                m = RE_TS.search(b)
                dup = bool(m) and w0 <= to_ns(m) < w1
            if dup:
                cp.write(("" if first_cp else ",\n") + rewrite(b, cat))
                first_cp = False
                n_copy += 1
        # append the copies (streamed back from the side file)
    with open(dst + ".tmp", "a") as out, open(dst + ".copies.tmp") as cp:
        out.write(",\n")
        while True:
            chunk = cp.read(1 << 22)
            if not chunk:
                break
            out.write(chunk)
        out.write("\n" + tail)
    os.unlink(dst + ".copies.tmp")
    os.replace(dst + ".tmp", dst)
    print(f"  {os.path.basename(dst)}: {n_in} events + {n_copy} copied (steps #{info['first_step']}.."
          f"#{info['first_step'] + nsteps - 1} -> #{info['first_step'] + s_off}..), "
          f"{os.path.getsize(dst) / 1e6:.1f} MB, {time.time() - t0:.1f}s", flush=True)


def copy_with_rank(src, dst, old_rank, new_rank):
    """Stream-copy a generated rank file, rewriting distributedInfo.rank in the header only."""
    old = f'"distributedInfo": {{"backend": "nccl", "rank": {old_rank},'
    new = f'"distributedInfo": {{"backend": "nccl", "rank": {new_rank},'
    with open(src) as f, open(dst + ".tmp", "w") as o:
        head = f.read(1 << 16)
        if old not in head:
            raise SystemExit(f"{src}: distributedInfo rank {old_rank} not found in header")
        o.write(head.replace(old, new, 1))
        while True:
            c = f.read(1 << 22)
            if not c:
                break
            o.write(c)
    os.replace(dst + ".tmp", dst)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", default=SRC)
    ap.add_argument("--out", default="bench/data/analyze_speed")
    ap.add_argument("--steps", type=int, default=20, help="ProfilerSteps copied per rank")
    ap.add_argument("--ranks", type=int, default=8, help="4 or 8")
    args = ap.parse_args()
    srcs = sorted(glob.glob(os.path.join(args.src, "rank[0-9]*.json*")))
    if len(srcs) != 4:
        raise SystemExit(f"expected 4 source ranks in {args.src}, found {len(srcs)}")
    plain = os.path.join(args.out, "plain")
    gzd = os.path.join(args.out, "gz")
    os.makedirs(plain, exist_ok=True)
    os.makedirs(gzd, exist_ok=True)
    t0 = time.time()
    outs = []
    for src in srcs:
        r = int(re.search(r"rank(\d+)", os.path.basename(src)).group(1))
        dst = os.path.join(plain, f"rank{r}.bench.pt.trace.json")
        generate_rank(src, dst, args.steps)
        outs.append(dst)
        for k in range(1, args.ranks // 4):
            d2 = os.path.join(plain, f"rank{r + 4 * k}.bench.pt.trace.json")
            copy_with_rank(dst, d2, r, r + 4 * k)
            outs.append(d2)
    # gzip, two at a time
    procs = []
    for p in sorted(outs):
        g = os.path.join(gzd, os.path.basename(p) + ".gz")
        while len([q for q in procs if q.poll() is None]) >= 2:
            time.sleep(0.2)
        procs.append(subprocess.Popen(f"gzip -6 -c '{p}' > '{g}.tmp' && mv '{g}.tmp' '{g}'", shell=True))
    rc = [q.wait() for q in procs]
    if any(rc):
        raise SystemExit("gzip failed")
    tot = sum(os.path.getsize(p) for p in outs)
    totg = sum(os.path.getsize(os.path.join(gzd, os.path.basename(p) + ".gz")) for p in outs)
    print(f"generated {len(outs)} ranks: {tot / 1e9:.3f} GB plain JSON (largest "
          f"{max(os.path.getsize(p) for p in outs) / 1e6:.1f} MB), {totg / 1e9:.3f} GB gz, "
          f"in {time.time() - t0:.0f}s")


if __name__ == "__main__":
    main()
