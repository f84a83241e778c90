#!/usr/bin/env python3
"""Independent reference figures for the public traces (docs/metrics.md definitions).

Shares no code with aorta: plain Python (json, gzip, sqlite3, csv), written from the
definitions, not from aorta's sources.  For every set it computes

  per rank (one GPU of one process; whole trace):
    span_ms        last device-event end - first device-event start
    busy_ms        |union of every device event (kernels, copies, fills)|
    compute_ms     |union of compute kernels|          (K)
    comm_ms        |union of communication kernels|    (C)
    overlapped_ms  |C intersect K|
    exposed_ms     |C| - |C intersect K|
    memcpy_ms      |union of copies|
    idle_ms        span - busy
  across ranks (sets of two or more ranks):
    matched        collectives matched across ranks
    wait_ms        per rank: sum over matched collectives of
                   min(max(last arrival - own start, 0), own duration)
    wait_total_ms  the sum over ranks

Times are integer nanoseconds (Kineto's microsecond decimals read as Decimal, never
float).  Classes: a kernel is communication when its name says so (NCCL/RCCL
kernels of every version, symmetric-memory, custom all-reduce, userbuffers, DeepEP,
NVSHMEM: COMM_RE below); copies and fills are the copy/fill records (and ROCm's
blit kernels); every other kernel is compute.

A communication kernel's collective comes from, in this order: its own "Collective
name" argument; its kernel name when that names a collective other than send/recv;
the host calls around its launch on the launching thread (Kineto cpu ops nccl:*,
c10d::*, record_param_comms, found through the runtime event of its correlation id;
Nsight Systems' NCCL NVTX ranges, a group's ops when the launch is in ncclGroupEnd);
its kernel name's send/recv.  Collectives are matched by order: per rank, the calls
of one (process group, type) in start order, the k-th of every rank that calls it
(only when every such rank has as many, and every listed member of the group that
was read calls it); a send and a recv naming each other's ranks by (source,
destination, order); send/recv without peers only in a job of two ranks.  Clocks:
each rank's offset against the first is the median difference of its matched
blocking collectives' ends (all-reduce, all-gather, reduce-scatter, all-to-all),
through an already aligned rank where needed; a blocking collective whose aligned
ends spread over max(20 x the median spread, 0.5 ms, a quarter of its shortest
call) is no collective; a median
spread over 1 ms means no cross-rank figure at all.

usage: reference.py [--data DIR] [--out DIR] [--extra NAME=FORMAT:GLOB] [SET ...]
writes DIR/<set>.json (default tests/data/public) and prints a summary.
"""
import argparse
import csv
import glob
import gzip
import io
import json
import os
import re
import sqlite3
import statistics
import sys
from decimal import Decimal, ROUND_HALF_UP

# ---- the sets ---------------------------------------------------------------------
# name -> (format, globs relative to the data folder)
SETS = {
    "param-dlrm-8rank": ("kineto", ["public/param-dlrm-8rank/*.json.gz"]),
    "param-single-linear": ("kineto", ["public/param-single/linear_kineto.json.gz"]),
    "param-single-resnet": ("kineto", ["public/param-single/resnet_kineto.json.gz"]),
    "tracelens-b200": ("kineto", ["public/tracelens-b200/eager_trace.json.gz"]),
    "hta-trace-filter-2of128": ("kineto", ["kineto/hta/trace_filter/sampled_rank-*.json.gz"]),
    "hta-nccl-parser-config": ("kineto", ["kineto/hta/nccl_parser_config/nccl_data.json.gz"]),
    "hta-df-index-resolver": ("kineto", ["kineto/hta/df_index_resolver/df_index_resolver.json.gz"]),
    "hta-trace-diff-control": ("kineto", ["kineto/hta/trace_diff/control/control.json.gz"]),
    "hta-trace-diff-test": ("kineto", ["kineto/hta/trace_diff/test/test.json.gz"]),
    "hta-negative-queue": ("kineto", ["kineto/hta/negative_queue_length_values_check/rank0.json.gz"]),
    "hta-ns-resolution": ("kineto", ["kineto/hta/ns_resolution_trace/*.json.gz"]),
    "hta-amd-mi250": ("kineto", ["kineto/hta/amd_trace/*.json.gz"]),
    "hta-triton": ("kineto", ["kineto/hta/triton_example/*.json.gz"]),
    "hta-event-sync": ("kineto", ["kineto/hta/critical_path/cuda_event_sync_multi_stream/*.json.gz"]),
    "hta-alexnet": ("kineto", ["kineto/hta/critical_path/alexnet/*.json.gz"]),
    "tracelens-mi300-resnet": ("kineto", ["kineto/tracelens/mi300/resnet_act_checkpoint.json.gz"]),
    "tracelens-h100-qwen": ("kineto", ["kineto/tracelens/h100/Qwen_*.json.gz"]),
    "tracelens-mi300-qwen": ("kineto", ["kineto/tracelens/mi300/Qwen_*.json.gz"]),
    "tracelens-h100-bert": ("kineto", ["kineto/tracelens/h100/gaunernst_*.json.gz"]),
    "tracelens-mi300-bert": ("kineto", ["kineto/tracelens/mi300/gaunernst_*.json.gz"]),
    "tracelens-h100-owlv2": ("kineto", ["kineto/tracelens/h100/google_*.json.gz"]),
    "tracelens-mi300-owlv2": ("kineto", ["kineto/tracelens/mi300/google_*.json.gz"]),
    "tracelens-mi210-gpu-only": ("kineto", ["kineto/tracelens/mi210/gpu_only_trace/*.json.gz"]),
    "tracelens-torch-compile": ("kineto", ["kineto/tracelens/torch_compile_triton/*.json.gz"]),
    "tracelens-sglang-decode": ("kineto", ["kineto/tracelens/inference/sglang_decode/*.json.gz"]),
    "tracelens-xdit-sd35": ("kineto", ["kineto/tracelens/inference/xdit_sd_3.5/*.json.gz"]),
    "whatif-artifact-AR": ("kineto", ["whatif-artifact/AR/*.json.gz"]),
    "whatif-artifact-SE": ("kineto", ["whatif-artifact/SE/*.json.gz"]),
    "whatif-artifact-ST": ("kineto", ["whatif-artifact/ST/*.json.gz"]),
    "nsys-mfu-before": ("nsys", ["nsys/nsys-ai/mfu_2gpu_before.sqlite"]),
    "nsys-mfu-after": ("nsys", ["nsys/nsys-ai/mfu_2gpu_after.sqlite"]),
    "nsys-h100-2gpu": ("nsys", ["nsys/nsys-ai/h100_2gpu_1s.sqlite"]),
    "rocprofv3-908-json": ("rocprof-json", ["rocprofv3/tracelens/908_results.json.gz"]),
    "rocprofv3-docs-2025-kernels": ("rocprof-csv", ["rocprofv3/rocprofiler-sdk-docs-2025/kernel_trace.csv"]),
    "rocprofv3-docs-2024-kernels": ("rocprof-csv", ["rocprofv3/rocprofiler-sdk-docs-2024/kernel_trace.csv"]),
}

COMM_RE = re.compile(r"nccl|rccl|multimem_all_(reduce|gather)|(one|two)_shot_all_reduce|cross_device_reduce|"
                     r"allreduce_fusion|custom_all_reduce|userbuffers|(deep_ep|dpsk::ep)::(intranode|internode|internode_ll)::|"
                     r"nvshmem", re.I)
COPY_KERNEL_RE = re.compile(r"^(__amd_rocclr_copyBuffer|MEMORY_COPY_)")
FILL_KERNEL_RE = re.compile(r"^__amd_rocclr_fillBuffer")
HOST_OP_RE = re.compile(r"^(nccl:|rccl:|gloo:|c10d::|c10d_functional::|_c10d_functional::|record_param_comms)")
BLOCKING = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"}


def coll_of(name):
    """The collective a name says, or None (written for this script)."""
    if not name:
        return None
    if re.search(r"(deep_ep|dpsk::ep)::(intranode|internode|internode_ll)::", name):
        return "all_to_all"  # DeepEP's dispatch / combine / notify: the expert-parallel all-to-all
    n = re.sub(r"[_\- ]", "", name.lower())
    for key, t in (("reducescatter", "reduce_scatter"), ("crossdevicereduce", "all_reduce"),
                   ("allreduce", "all_reduce"), ("allgather", "all_gather"), ("alltoall", "all_to_all"),
                   ("broadcast", "broadcast"), ("bcast", "broadcast"), ("sendrecv", "send_recv"),
                   ("send", "send_recv"), ("recv", "send_recv"), ("gather", "gather"),
                   ("scatter", "scatter"), ("reduce", "reduce")):
        if key in n:
            return t
    words = re.split(r"[_:( <]", name)
    if "rs" in words:
        return "reduce_scatter"
    if "ag" in words:
        return "all_gather"
    return None


def us_to_ns(v):
    """Kineto microseconds (int or Decimal) to integer ns, half away from zero."""
    return int((Decimal(v) * 1000).quantize(Decimal(1), rounding=ROUND_HALF_UP))


# ---- interval algebra ---------------------------------------------------------------
def union(iv):
    out = []
    for s, e in sorted(iv):
        if out and s <= out[-1][1]:
            if e > out[-1][1]:
                out[-1][1] = e
        else:
            out.append([s, e])
    return out


def length(u):
    return sum(e - s for s, e in u)


def intersect(a, b):
    i = j = 0
    out = []
    while i < len(a) and j < len(b):
        s, e = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if s < e:
            out.append([s, e])
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


# ---- a rank -------------------------------------------------------------------------
class Rank:
    def __init__(self, key, label, rank):
        self.key = key        # (file, device) as aorta names a rank
        self.label = label
        self.rank = rank      # the trace's rank, None if it says none
        self.world = None
        self.ev = []          # (start, end, cls) cls in comm/compute/memcpy/memset
        self.streams = {}     # stream -> the classes of its events (Kineto, nsys)
        self.calls = []       # communication kernels: dict(start, end, type, pg, members, peer, dir, stream)

    def figures(self):
        if not self.ev:
            return None
        first = min(s for s, e, c in self.ev)
        last = max(e for s, e, c in self.ev)
        sets = {c: union([(s, e) for s, e, k in self.ev if k == c]) for c in ("comm", "compute", "memcpy", "memset")}
        busy = union([(s, e) for s, e, c in self.ev])
        ov = length(intersect(sets["comm"], sets["compute"]))
        ms = lambda ns: round(ns / 1e6, 6)
        return {"span_ms": ms(last - first), "busy_ms": ms(length(busy)), "compute_ms": ms(length(sets["compute"])),
                "comm_ms": ms(length(sets["comm"])), "overlapped_ms": ms(ov),
                "exposed_ms": ms(length(sets["comm"]) - ov), "memcpy_ms": ms(length(sets["memcpy"])),
                "idle_ms": ms(last - first - length(busy)), "device_events": len(self.ev)}


def classify(name, kind):
    if kind == "memcpy":
        return "memcpy"
    if kind == "memset":
        return "memset"
    if COPY_KERNEL_RE.search(name):
        return "memcpy"
    if FILL_KERNEL_RE.search(name):
        return "memset"
    return "comm" if COMM_RE.search(name) else "compute"


def identify(kernel_args, kname, host):
    """(type, pg, members, peer, dir) of a communication kernel; host: the host calls
    around its launch, innermost first, as (name, args)."""
    own = coll_of(kernel_args.get("Collective name"))
    by_name = coll_of(kname)
    t = None
    if own:
        t = own
    elif by_name and by_name != "send_recv":
        t = by_name
    else:
        for hn, ha in host:
            t = coll_of(ha.get("Collective name")) or coll_of(hn)
            if t:
                break
        if not t:
            t = by_name
    args = [kernel_args] + [ha for hn, ha in host]
    pick = lambda k: next((a[k] for a in args if a.get(k) not in (None, "", "[]")), None)
    pg = pick("Process Group Name") or ""
    members = pick("Process Group Ranks")
    cname = pick("Collective name") or ""
    peer, d = None, None
    if cname in ("send", "isend") and isinstance(pick("Dst Rank"), int):
        peer, d = pick("Dst Rank"), "send"
    if cname in ("recv", "irecv") and isinstance(pick("Src Rank"), int):
        peer, d = pick("Src Rank"), "recv"
    if isinstance(members, str):
        try:
            members = [int(x) for x in members.strip().strip("[]").split(",") if x.strip()]
        except ValueError:
            members = None
    return t or "unknown", str(pg), members or None, peer, d


# ---- Kineto -------------------------------------------------------------------------
def read_kineto(path, label):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        doc = json.load(f, parse_float=Decimal)
    di = doc.get("distributedInfo") or {}
    rank = di.get("rank") if isinstance(di.get("rank"), int) else None
    world = di.get("world_size") if isinstance(di.get("world_size"), int) else None
    evs = [e for e in doc.get("traceEvents", []) if isinstance(e, dict) and e.get("ph") == "X"]
    runtime = {}
    hostops = {}
    for e in evs:
        cat = e.get("cat")
        a = e.get("args") or {}
        if cat in ("cuda_runtime", "cuda_driver", "Runtime", "Driver") and "correlation" in a:
            runtime[a["correlation"]] = (e.get("pid"), e.get("tid"), us_to_ns(e["ts"]))
        elif cat in ("cpu_op", "user_annotation") and HOST_OP_RE.search(e.get("name", "")):
            ts = us_to_ns(e["ts"])
            hostops.setdefault((e.get("pid"), e.get("tid")), []).append((ts, ts + us_to_ns(e.get("dur", 0)),
                                                                          e["name"], a))
    for v in hostops.values():
        v.sort(key=lambda x: (x[0], -x[1]))
    ranks = {}
    for e in evs:
        cat = e.get("cat")
        kind = {"kernel": "kernel", "Kernel": "kernel", "gpu_memcpy": "memcpy", "Memcpy": "memcpy",
                "gpu_memset": "memset", "Memset": "memset"}.get(cat)
        if not kind or "dur" not in e or "ts" not in e:
            continue
        if not isinstance(e["ts"], (int, Decimal)) or not isinstance(e["dur"], (int, Decimal)) or e["dur"] < 0:
            continue
        a = e.get("args") or {}
        dev = a.get("device", e.get("pid"))
        if not isinstance(dev, int):
            dev = -1
        r = ranks.get(dev)
        if r is None:
            r = ranks[dev] = Rank((os.path.basename(path), dev), label, rank)
            r.world = world
        s = us_to_ns(e["ts"])
        en = s + us_to_ns(e["dur"])
        name = e.get("name", "")
        c = classify(name, kind)
        r.ev.append((s, en, c))
        r.streams.setdefault(a.get("stream", e.get("tid")), set()).add(c)
        if c == "comm":
            host = []
            rt = runtime.get(a.get("correlation"))
            if rt:
                ops = hostops.get((rt[0], rt[1]), [])
                host = [(n, ha) for hs, he, n, ha in ops if hs <= rt[2] <= he]
                host.reverse()  # innermost (latest start) first
            t, pg, mem, peer, d = identify(a, name, host)
            stream = a.get("stream", e.get("tid"))
            r.calls.append({"start": s, "end": en, "type": t, "pg": pg, "members": mem, "peer": peer,
                            "dir": d, "stream": stream})
    if len(ranks) > 1:  # one process, several GPUs: only the first device keeps the trace's rank
        first = min(ranks, key=lambda d: min(x[0] for x in ranks[d].ev))
        for d in ranks:
            if d != first:
                ranks[d].rank = None
    return list(ranks.values())


# ---- Nsight Systems -----------------------------------------------------------------
def read_nsys(path, label):
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    q = lambda sql: db.execute(sql).fetchall()
    tables = {r[0] for r in q("SELECT name FROM sqlite_master WHERE type='table'")}
    strings = dict(q("SELECT id, value FROM StringIds")) if "StringIds" in tables else {}
    cols = lambda t: {r[1] for r in q("PRAGMA table_info(%s)" % t)}
    ranks = {}

    def rank_of(gpid, dev):
        pid = (gpid >> 24) & 0xFFFFFF if gpid is not None else -1
        k = (pid, dev)
        if k not in ranks:
            ranks[k] = Rank((os.path.basename(path), dev), label, None)
        return ranks[k]
    runtime = {}
    if "CUPTI_ACTIVITY_KIND_RUNTIME" in tables:
        for corr, gtid, st, pidg in q("SELECT correlationId, globalTid, start, globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME"):
            runtime[(((pidg or 0) >> 24) & 0xFFFFFF, corr)] = (gtid, st)
    nvtx = {}
    if "NVTX_EVENTS" in tables:
        for st, en, text, tid, gtid in q("SELECT start, end, text, textId, globalTid FROM NVTX_EVENTS "
                                         "WHERE end IS NOT NULL"):
            name = text if text is not None else strings.get(tid, "")
            if name.startswith("nccl"):
                nvtx.setdefault(gtid, []).append((st, en, name))
        for v in nvtx.values():
            v.sort()
    if "CUPTI_ACTIVITY_KIND_KERNEL" in tables:
        kc = cols("CUPTI_ACTIVITY_KIND_KERNEL")
        nm = "demangledName" if "demangledName" in kc else "shortName"
        for st, en, dev, gpid, corr, nid, sid in q("SELECT start, end, deviceId, globalPid, correlationId, %s, "
                                                   "streamId FROM CUPTI_ACTIVITY_KIND_KERNEL" % nm):
            r = rank_of(gpid, dev)
            name = strings.get(nid, "")
            c = classify(name, "kernel")
            r.ev.append((st, en, c))
            r.streams.setdefault(sid, set()).add(c)
            if c == "comm":
                host = []
                rt = runtime.get(((gpid >> 24) & 0xFFFFFF, corr))
                if rt:
                    rs = nvtx.get(rt[0], [])
                    inside = [x for x in rs if x[0] <= rt[1] <= x[1]]
                    if inside:
                        inner = inside[-1]
                        if inner[2] == "ncclGroupEnd":  # the group's ops, since its ncclGroupStart
                            before = [x for x in rs if x[1] <= inner[0]]
                            ops = []
                            for x in reversed(before):
                                if x[2] == "ncclGroupStart":
                                    break
                                ops.append(x[2])
                            types = {coll_of(o) for o in ops} - {None}
                            host = [(types.pop(), {})] if len(types) == 1 else []
                        else:
                            host = [(inner[2], {})]
                t, pg, mem, peer, d = identify({}, name, host)
                r.calls.append({"start": st, "end": en, "type": t, "pg": pg, "members": mem, "peer": peer,
                                "dir": d, "stream": sid})
    for table, kind in (("CUPTI_ACTIVITY_KIND_MEMCPY", "memcpy"), ("CUPTI_ACTIVITY_KIND_MEMSET", "memset")):
        if table in tables:
            for st, en, dev, gpid in q("SELECT start, end, deviceId, globalPid FROM %s" % table):
                rank_of(gpid, dev).ev.append((st, en, kind))
    db.close()
    out = [r for r in ranks.values() if r.ev]
    for r in out:
        r.world = len(out)
    return out


# ---- rocprofv3 ------------------------------------------------------------------------
def read_rocprof_json(path, label):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        doc = json.load(f)
    tool = doc["rocprofiler-sdk-tool"][0]
    syms = {}
    for s in tool.get("kernel_symbols", []):
        syms[s["kernel_id"]] = (s.get("formatted_kernel_name") or s.get("demangled_kernel_name")
                                or s.get("kernel_name") or s.get("truncated_kernel_name"))
    gpus = sorted([a for a in tool.get("agents", []) if a.get("type") == 2],
                  key=lambda a: (a.get("logical_node_id", a.get("node_id", 0))))
    ordinal = {a["id"]["handle"]: i for i, a in enumerate(gpus)}
    ranks = {}
    br = tool.get("buffer_records", {})
    for k in br.get("kernel_dispatch", []):
        h = k["dispatch_info"]["agent_id"]["handle"]
        r = ranks.setdefault(h, Rank((os.path.basename(path), ordinal.get(h, h)), label, None))
        name = syms.get(k["dispatch_info"]["kernel_id"], "")
        c = classify(name, "kernel")
        r.ev.append((k["start_timestamp"], k["end_timestamp"], c))
        if c == "comm":  # rocprofv3's kernel records carry no collective: the name's, else unknown
            r.calls.append({"start": k["start_timestamp"], "end": k["end_timestamp"],
                            "type": coll_of(name) or "unknown", "pg": "", "members": None, "peer": None,
                            "dir": None, "stream": (k.get("stream_id") or {}).get("handle")})
    for m in br.get("memory_copy", []):
        h = m["dst_agent_id"]["handle"] if m.get("operation") == 2 else m["src_agent_id"]["handle"]
        r = ranks.setdefault(h, Rank((os.path.basename(path), ordinal.get(h, h)), label, None))
        r.ev.append((m["start_timestamp"], m["end_timestamp"], "memcpy"))
    return list(ranks.values())


def read_rocprof_csv(path, label):
    """A kernel_trace.csv and, as rocprofv3 writes them, the memory_copy_trace.csv
    of the same prefix beside it (copies on the destination agent of a
    host-to-device copy, else the source)."""
    ranks = {}
    agent = lambda v: int(re.search(r"(\d+)", v).group(1)) if re.search(r"(\d+)", v or "") else -1

    def rank(dev):
        return ranks.setdefault(dev, Rank((os.path.basename(path), dev), label, None))
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            name = row.get("Kernel_Name", "")
            c = classify(name, "kernel")
            r = rank(agent(row.get("Agent_Id")))
            s, e = int(row["Start_Timestamp"]), int(row["End_Timestamp"])
            r.ev.append((s, e, c))
            if c == "comm":
                r.calls.append({"start": s, "end": e, "type": coll_of(name) or "unknown", "pg": "", "members": None,
                                "peer": None, "dir": None, "stream": row.get("Stream_Id", row.get("Queue_Id"))})
    base = os.path.basename(path)
    copies = os.path.join(os.path.dirname(path), base[:-len("kernel_trace.csv")] + "memory_copy_trace.csv")
    if base.endswith("kernel_trace.csv") and os.path.exists(copies):
        with open(copies, newline="") as f:
            for row in csv.DictReader(f):
                h2d = "HOST_TO_DEVICE" in row.get("Direction", "")
                dev = agent(row["Destination_Agent_Id"] if h2d else row["Source_Agent_Id"])
                rank(dev).ev.append((int(row["Start_Timestamp"]), int(row["End_Timestamp"]), "memcpy"))
    return list(ranks.values())


READERS = {"kineto": read_kineto, "nsys": read_nsys, "rocprof-json": read_rocprof_json, "rocprof-csv": read_rocprof_csv}


# ---- across ranks ---------------------------------------------------------------------
def cross_rank(ranks):
    """Matched collectives and each rank's waiting (module docstring)."""
    if len(ranks) < 2:
        return None
    known = [r.rank for r in ranks if r.rank is not None]
    nxt = max(known) + 1 if known else 0
    for r in sorted(ranks, key=lambda r: r.key):
        if r.rank is None:
            r.rank, nxt = nxt, nxt + 1
    byrank = {r.rank: r for r in ranks}
    world = max([r.world or 0 for r in ranks] + [len(ranks)])
    two_rank_job = len(ranks) == 2 and world <= 2
    groups = []  # each: list of (rank, call)
    # point to point with named peers: (src, dst, k)
    p2p = {}
    keyed = {}
    for r in ranks:
        for c in sorted(r.calls, key=lambda c: c["start"]):
            if c["peer"] is not None and c["peer"] != r.rank and 0 <= c["peer"] < world:
                src, dst = (r.rank, c["peer"]) if c["dir"] == "send" else (c["peer"], r.rank)
                p2p.setdefault((src, dst, c["dir"], r.rank), []).append(c)
            elif c["type"] == "send_recv":
                if two_rank_job:
                    keyed.setdefault(("p2p-by-order", ""), {}).setdefault(r.rank, []).append(c)
            elif c["type"] == "unknown":
                streams = keyed.setdefault(("streams", c["pg"], r.rank), {})
                slot = streams.setdefault(c["stream"], len(streams))
                keyed.setdefault(("unknown", c["pg"], slot), {}).setdefault(r.rank, []).append(c)
            else:
                keyed.setdefault((c["type"], c["pg"]), {}).setdefault(r.rank, []).append(c)
    for (src, dst, d, me), calls in p2p.items():
        if d != "send":
            continue
        other = p2p.get((src, dst, "recv", dst), [])
        for k in range(min(len(calls), len(other))):
            groups.append((None, [(src, calls[k]), (dst, other[k])]))
    for key, per in keyed.items():
        if key[0] == "streams" or len(per) < 2:
            continue
        counts = {len(v) for v in per.values()}
        if len(counts) != 1:
            continue  # a call missing somewhere: no order to trust
        members = next((c["members"] for v in per.values() for c in v if c["members"]), None)
        if members and any(m in byrank and m not in per for m in members):
            continue  # a listed member that was read makes no call: incomplete
        n = counts.pop()
        for k in range(n):
            groups.append((key[0], [(rk, v[k]) for rk, v in sorted(per.items())]))
    if not groups:
        return {"matched": 0, "aligned": False, "why": "no collective matched across ranks"}
    # clocks: offsets from blocking collectives' ends
    ref = min(byrank)
    off = {ref: 0}
    blocking = [g for t, g in groups if t in BLOCKING]
    progress = True
    while progress:
        progress = False
        samples = {}
        for g in blocking:
            a = next(((rk, c) for rk, c in g if rk in off), None)
            if not a:
                continue
            for rk, c in g:
                if rk not in off:
                    samples.setdefault(rk, []).append(c["end"] - (a[1]["end"] - off[a[0]]))
        for rk, v in samples.items():
            off[rk] = statistics.median(v)
            progress = True
    for rk in byrank:
        off.setdefault(rk, 0)
    al = lambda rk, t: t - off[rk]
    spreads = [max(al(rk, c["end"]) for rk, c in g) - min(al(rk, c["end"]) for rk, c in g) for g in blocking]
    med = statistics.median(spreads) if spreads else 0
    if med > 1e6:
        return {"matched": 0, "aligned": False, "why": "matched collectives do not end together"}
    lim = max(20 * med, 500000)
    kept = []
    for t, g in groups:
        spread = max(al(rk, c["end"]) for rk, c in g) - min(al(rk, c["end"]) for rk, c in g)
        if t in BLOCKING and spread > lim and spread > min(c["end"] - c["start"] for rk, c in g) / 4:
            continue
        kept.append(g)
    wait = {rk: 0 for rk in byrank}
    for g in kept:
        last = max(al(rk, c["start"]) for rk, c in g)
        for rk, c in g:
            dur = c["end"] - c["start"]
            wait[rk] += min(max(last - al(rk, c["start"]), 0), dur)
    ms = lambda ns: round(ns / 1e6, 6)
    return {"matched": len(kept), "aligned": True, "wait_ms": {str(rk): ms(v) for rk, v in sorted(wait.items())},
            "wait_total_ms": ms(sum(wait.values()))}


def run_set(name, data):
    fmt, globs = SETS[name]
    files = sorted(f for g in globs for f in glob.glob(os.path.join(data, g)))
    if not files:
        return None
    ranks = []
    for f in files:
        ranks.extend(READERS[fmt](f, name))
    ranks = [r for r in ranks if r.ev]
    cross = cross_rank(ranks)
    out = {"set": name, "format": fmt, "files": [os.path.relpath(f, data) for f in files], "ranks": []}
    for r in sorted(ranks, key=lambda r: (r.rank if r.rank is not None else 1 << 30, r.key)):
        fig = r.figures()
        fig.update({"file": r.key[0], "device": r.key[1], "rank": r.rank,
                    "comm_calls": len(r.calls),
                    "comm_streams": sorted(st for st, cl in r.streams.items() if cl == {"comm"} and isinstance(st, int)),
                    "comm_types": dict(sorted({t: sum(1 for c in r.calls if c["type"] == t)
                                               for t in {c["type"] for c in r.calls}}.items()))})
        out["ranks"].append(fig)
    out["cross"] = cross
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=os.environ.get("AORTA_SHARED_DATA", "../shared/data"))
    ap.add_argument("--out", default="tests/data/public")
    ap.add_argument("--extra", action="append", default=[], metavar="NAME=FORMAT:GLOB",
                    help="one more set (GLOB relative to --data), e.g. a trace read from a fetched snapshot")
    ap.add_argument("sets", nargs="*")
    a = ap.parse_args()
    for x in a.extra:
        name, rest = x.split("=", 1)
        fmt, g = rest.split(":", 1)
        SETS[name] = (fmt, [g])
        a.sets.append(name)
    os.makedirs(a.out, exist_ok=True)
    for name in a.sets or SETS:
        res = run_set(name, a.data)
        if res is None:
            print("%-28s not present under %s: skipped" % (name, a.data))
            continue
        with open(os.path.join(a.out, name + ".json"), "w") as f:
            json.dump(res, f, indent=1, sort_keys=True)
            f.write("\n")
        x = res["cross"]
        print("%-28s %3d rank(s)  %s" % (name, len(res["ranks"]),
              "matched %d, wait %.3f ms" % (x["matched"], x["wait_total_ms"]) if x and x.get("aligned")
              else ("no cross-rank figures" if x else "one rank")))


if __name__ == "__main__":
    main()
