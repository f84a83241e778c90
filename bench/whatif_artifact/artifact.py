#!/usr/bin/env python3
"""What-if against the OSDI'25 artifact (Lin et al., "Understanding Stragglers
in Large Model Training Using What-if Analysis"; ByteDance-Seed/StragglerAnalysis,
Apache-2.0).

For each of the artifact's three traces (SE, ST, AR: data/trace-<T>.parquet
with data/meta-<T>.yaml) this
  1. converts the parquet into an aorta op table (aorta.optable/1, docs/formats.md),
  2. runs `aorta analyze -q --json` on it,
  3. compares across_ranks.what_if with the artifact's expected result
     (data/result-<T>.json): slowdown S, measured and ideal step, and the top
     DP rank, stage and operation type,
and prints agreement and every difference.  bench/RESULTS.md ("What-if
against the OSDI'25 artifact") records the figures and the reasons.

Set-up (the artifact is not committed here):
    git clone https://github.com/ByteDance-Seed/StragglerAnalysis /tmp/StragglerAnalysis
    python3 -m venv bench/.venv && bench/.venv/bin/pip install pyarrow
    bench/.venv/bin/python bench/whatif_artifact/artifact.py \
        --artifact /tmp/StragglerAnalysis [--aorta build/aorta] [--out bench/out/whatif_artifact]
        [--timeline trace|nodelay] [--only ST] [--steps N] [--convert-only]

Conversion (one row of the parquet -> one op-table row):
  rank     = dp_rank * pp + stage (a compact worker index: the artifact keeps
             one worker per TP group, its own `rank` column counts TP ranks)
  step     = step; each step's start_ts is relative to the step, so steps are
             laid end to end (step k starts where step k-1's last op ended)
  times    = start_ts and end_ts (start_ts + duration) as start_ms / end_ms, so
             an op that starts where another ends starts on the same
             nanosecond after rounding (with a duration column the two
             roundings can leave it 1 ns apart); the artifact does not
             state its unit; calling it ms makes aorta's *_ms figures read as
             the artifact's numbers (every comparison below is a ratio or a
             ranking, which no unit changes)
  host     = one host for all: the artifact's timestamps share one clock
  streams  = the artifact's dependency model's streams: compute 0 (forward,
             backward, gc, optimizer and the post-backward chain), forward-send
             1, forward-recv 2, backward-send 3, backward-recv 4, DP
             communication (params-all-gather, grads-reduce-scatter,
             separate-grads-all-reduce) 5
  kinds    = forward-/backward-compute, gc, optimizer: compute;
             params-all-gather: all_gather; grads-reduce-scatter: reduce_scatter;
             *-all-reduce and optimizer-clip-main-grad: all_reduce;
             forward-/backward-send: send; -recv: recv
  groups   = DP communication: "dp:stage<s>" (the DP ranks of a stage);
             embedding-grads-all-reduce: "embed:dp<d>" (first and last stage);
             optimizer-clip-main-grad: "world"; layernorm-grads-all-reduce:
             "tp:<rank>" (a TP all-reduce whose other ranks the artifact
             dropped: it matches nothing); send/recv: peer = the next stage
             (forward-send, backward-recv) or the previous one (forward-recv,
             backward-send) of the same DP rank, no group (the reader names
             it p2p:<src>-><dst>)
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

try:
    import pyarrow.parquet as pq
except ImportError:
    sys.exit("artifact.py: needs pyarrow (python3 -m venv bench/.venv && bench/.venv/bin/pip install pyarrow)")

TRACES = ["SE", "ST", "AR"]

STREAM = {
    "forward-send": 1, "forward-recv": 2, "backward-send": 3, "backward-recv": 4,
    "params-all-gather": 5, "grads-reduce-scatter": 5, "separate-grads-all-reduce": 5,
}
KIND = {
    "forward-compute": "compute", "backward-compute": "compute", "gc": "compute",
    "optimizer": "compute", "params-all-gather": "all_gather",
    "grads-reduce-scatter": "reduce_scatter", "separate-grads-all-reduce": "all_reduce",
    "layernorm-grads-all-reduce": "all_reduce", "embedding-grads-all-reduce": "all_reduce",
    "optimizer-clip-main-grad": "all_reduce", "forward-send": "send", "backward-send": "send",
    "forward-recv": "recv", "backward-recv": "recv",
}
# the artifact's op types as aorta's operation types (the what-if's by_op
# names: aorta groups by kind, so forward and backward compute are one type)
AORTA_OP = {
    "forward-compute": "compute", "backward-compute": "compute", "gc": "compute",
    "optimizer": "compute", "params-all-gather": "all_gather",
    "grads-reduce-scatter": "reduce_scatter", "separate-grads-all-reduce": "all_reduce",
    "layernorm-grads-all-reduce": "all_reduce", "embedding-grads-all-reduce": "all_reduce",
    "optimizer-clip-main-grad": "all_reduce", "forward-pp-comm": "send_recv",
    "backward-pp-comm": "send_recv",
}


def read_meta(path):
    meta = {}
    with open(path) as f:
        for line in f:
            if ":" in line:
                k, v = line.split(":", 1)
                v = v.strip()
                meta[k.strip()] = int(v) if v.lstrip("-").isdigit() else v
    return meta


def load(parquet):
    """The rows of an artifact trace, or of a timeline its wia.py dumped
    (dataframe/<T>-0-no-delay.parquet: end_ts instead of duration for the
    simulated communication, seq_id inside optype_seq_id)."""
    tb = pq.read_table(parquet)
    cols = set(tb.schema.names)
    rows = tb.to_pylist()
    for r in rows:
        if "end_ts" not in cols:
            r["end_ts"] = r["start_ts"] + r["duration"]
        if "seq_id" not in cols:
            r["seq_id"] = int(str(r["optype_seq_id"]).rsplit("_", 1)[1])
        r["optype"] = str(r["optype"])
    return rows


def convert(rows, meta, out, max_steps=None, only_step=None, source=""):
    """Writes the op table of rows (load()); returns (rows, workers, steps)."""
    pp = meta["pp_size"]
    steps = sorted({r["step"] for r in rows})
    if max_steps:
        steps = steps[:max_steps]
    if only_step is not None:
        steps = [only_step]
    keep = set(steps)
    rows = [r for r in rows if r["step"] in keep]
    span = {}
    for r in rows:
        e = r["end_ts"]
        if e > span.get(r["step"], 0.0):
            span[r["step"]] = e
    base, t = {}, 0.0
    for s in steps:
        base[s] = t
        t += span[s]
    rows.sort(key=lambda r: (r["step"], r["dp_rank"], r["stage"], r["start_ts"]))
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write("# aorta.optable/1 converted from ByteDance-Seed/StragglerAnalysis "
                f"{source} (Apache-2.0; bench/whatif_artifact/artifact.py)\n")
        f.write("rank,step,op,kind,stream,start_ms,end_ms,group,peer,host,dp_rank,stage\n")
        for r in rows:
            d, s, o = r["dp_rank"], r["stage"], r["optype"]
            w = d * pp + s
            kind = KIND[o]
            group, peer = "", ""
            if o in ("params-all-gather", "grads-reduce-scatter", "separate-grads-all-reduce"):
                group = f"dp:stage{s}"
            elif o == "embedding-grads-all-reduce":
                group = f"embed:dp{d}"
            elif o == "optimizer-clip-main-grad":
                group = "world"
            elif o == "layernorm-grads-all-reduce":
                group = f"tp:{w}"
            elif kind in ("send", "recv"):
                ps = s + 1 if o in ("forward-send", "backward-recv") else s - 1
                if 0 <= ps < pp:
                    peer = str(d * pp + ps)
                else:
                    group = f"noop:{w}"
            name = f"{o}#{r['seq_id']}"
            start = base[r["step"]] + r["start_ts"]
            end = max(start, base[r["step"]] + r["end_ts"])
            f.write(f"{w},{r['step']},{name},{kind},{STREAM.get(o, 0)},{start!r},"
                    f"{end!r},{group},{peer},artifact,{d},{s}\n")
    os.replace(tmp, out)
    return len(rows), len({(r['dp_rank'], r['stage']) for r in rows}), len(steps)


def top(d):
    return max(d.items(), key=lambda kv: kv[1]) if d else (None, None)


def group_of(ranks, pp, workers):
    """'dp d' or 'stage s' when the rank set is one DP replica or one stage."""
    rs = sorted(ranks)
    ndp = workers // pp
    for d in range(ndp):
        if rs == list(range(d * pp, d * pp + pp)):
            return ("dp", d)
    for s in range(pp):
        if rs == [d * pp + s for d in range(ndp)]:
            return ("stage", s)
    return (None, None)


def parse_ranks(v):
    if isinstance(v, list):
        return [int(x) for x in v]
    if isinstance(v, str):
        return [int(x) for x in v.replace(" ", "").split(",") if x]
    return []


def compare(name, meta, res, an, workers):
    pp = meta["pp_size"]
    wi = an.get("across_ranks", {}).get("what_if")
    out = {"trace": name, "workers": workers}
    art_meas = statistics.mean(res["step_t_base"].values())
    art_nodelay = statistics.mean(res["step_t_nodelay"].values())
    art_ideal = statistics.mean(res["step_t_noblk"].values())
    out["artifact"] = {
        "measured_step": art_meas, "nodelay_step": art_nodelay, "ideal_step": art_ideal,
        "S": res["blocking_slowdown"], "S_with_launch": art_meas / art_ideal,
        "launch_slowdown": res["launch_slowdown"],
        "top_dp_rank": top({int(k): v for k, v in (res["blocking_decompose_by_dp_rank"] or {}).items()}),
        "top_stage": top({int(k): v for k, v in (res["blocking_decompose_by_stage"] or {}).items()}),
        "top_optype": top(res["blocking_decompose_by_optype"] or {}),
        "by_dp_rank": res["blocking_decompose_by_dp_rank"],
        "by_stage": res["blocking_decompose_by_stage"],
        "by_optype": res["blocking_decompose_by_optype"],
    }
    if not wi:
        out["aorta"] = None
        out["why"] = an.get("across_ranks", {}).get("no_cross_rank_reason") or "no across_ranks.what_if"
        return out
    a = {k: wi.get(k) for k in ("measured_step_ms", "replay_step_ms", "ideal_step_ms", "slowdown",
                                 "pooled_step_ms", "slowdown_pooled")}
    by_dp, by_stage = {}, {}
    for g in wi.get("by_group") or []:
        kind, idx = group_of(parse_ranks(g.get("ranks")), pp, workers)
        if kind == "dp":
            by_dp[idx] = g
        elif kind == "stage":
            by_stage[idx] = g
    by_rank = {r["rank"]: r for r in wi.get("by_rank") or []}
    # a DP replica or stage the engine did not report as a group: the best of its ranks
    a["by_dp_gain_ms"] = {d: g["gain_ms"] for d, g in by_dp.items()}
    a["by_stage_gain_ms"] = {s: g["gain_ms"] for s, g in by_stage.items()}
    a["by_rank_gain_ms"] = {r: x["gain_ms"] for r, x in by_rank.items()}
    a["by_op_gain_ms"] = {o.get("fix", o.get("what")): o["gain_ms"] for o in wi.get("by_op") or []}
    a["top_dp_rank"] = top(a["by_dp_gain_ms"])
    a["top_stage"] = top(a["by_stage_gain_ms"])
    tr = top(a["by_rank_gain_ms"])
    a["top_rank"] = (tr[0], tr[1], (tr[0] // pp, tr[0] % pp) if tr[0] is not None else None)
    a["top_op"] = top(a["by_op_gain_ms"])
    a["groups_seen"] = [g.get("fix", g.get("what")) for g in wi.get("by_group") or []]
    # the stage balance (docs/metrics.md "What-if"): the artifact's ideal
    # includes balancing the stages (the mean per op type over all stages)
    bal = [g for g in wi.get("by_group") or [] if g.get("fix") == "the stage balance"]
    a["stage_balance"] = None if not bal else {
        "step_ms_if_fixed": bal[0]["step_ms_if_fixed"], "gain_ms": bal[0]["gain_ms"],
        "S_balance": wi["replay_step_ms"] / bal[0]["step_ms_if_fixed"] if bal[0]["step_ms_if_fixed"] else None}
    a["replay_error_pct"] = wi.get("replay_error_pct")
    a["verdict"] = wi.get("verdict")
    out["aorta"] = a
    return out


def report(c):
    art, a = c["artifact"], c["aorta"]
    print(f"== {c['trace']} ({c['workers']} workers)")
    print(f"   artifact: measured {art['measured_step']:.3f}, without launch delays "
          f"{art['nodelay_step']:.3f}, ideal {art['ideal_step']:.3f}; S = {art['S']:.4f} "
          f"(with launch delays {art['S_with_launch']:.4f})")
    print(f"   artifact: top DP rank {art['top_dp_rank']}, top stage {art['top_stage']}, "
          f"top op type {art['top_optype']}")
    if a is None:
        print(f"   aorta: no what-if ({c.get('why')})")
        return
    print(f"   aorta:    measured {a['measured_step_ms']}, replay {a['replay_step_ms']}, "
          f"ideal {a['ideal_step_ms']}; S = {a['slowdown']}; pooled ideal {a['pooled_step_ms']}, "
          f"S = {a['slowdown_pooled']}")
    print(f"   aorta:    top DP replica {a['top_dp_rank']}, top stage {a['top_stage']}, "
          f"top rank {a['top_rank']}, top op {a['top_op']}")
    print(f"   aorta:    groups reported: {a['groups_seen']}")
    if a.get("stage_balance"):
        b = a["stage_balance"]
        print(f"   aorta:    the stage balance: {a['replay_step_ms']:.4f} -> {b['step_ms_if_fixed']:.4f} "
              f"(gain {b['gain_ms']:.4f}); replay / balanced = {b['S_balance']:.4f} "
              f"vs the artifact's S {art['S']:.4f}")
    agree = []
    if a["slowdown"]:
        d = (a["slowdown"] - art["S"]) / art["S"] * 100
        agree.append(f"S {a['slowdown']:.4f} vs {art['S']:.4f} ({d:+.1f} %)")
    if a.get("slowdown_pooled"):  # the artifact's ideal: every op at the job's mean of its name
        d = (a["slowdown_pooled"] - art["S"]) / art["S"] * 100
        agree.append(f"pooled S {a['slowdown_pooled']:.4f} vs {art['S']:.4f} ({d:+.1f} %)")
    agree.append("top DP rank " + ("agrees" if a["top_dp_rank"][0] == art["top_dp_rank"][0] else
                                   f"differs ({a['top_dp_rank'][0]} vs {art['top_dp_rank'][0]})"))
    agree.append("top stage " + ("agrees" if a["top_stage"][0] == art["top_stage"][0] else
                                 f"differs ({a['top_stage'][0]} vs {art['top_stage'][0]})"))
    ao = AORTA_OP.get(art["top_optype"][0], art["top_optype"][0])
    agree.append("top op type " + ("agrees" if a["top_op"][0] and ao in str(a["top_op"][0]) else
                                   f"differs ({a['top_op'][0]} vs {art['top_optype'][0]} = {ao})"))
    print("   " + "; ".join(agree))


def run_artifact(artifact, name, root):
    """Runs the artifact's own analysis (analyzer/wia.py, as its run_all.sh
    does) with --root, so it dumps its timelines; returns (the no-delay
    timeline's parquet, whether its result equals data/result-<T>.json)."""
    os.makedirs(root, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=os.path.abspath(artifact))
    log = os.path.join(root, f"{name}.log")
    with open(log, "w") as f:
        p = subprocess.run([sys.executable, "analyzer/wia.py", "--metadata", f"data/meta-{name}.yaml",
                            "--trace", f"data/trace-{name}.parquet", "--dump-dir", os.path.abspath(root),
                            "--root", os.path.abspath(root)], cwd=artifact, env=env, stdout=f,
                           stderr=subprocess.STDOUT)
    if p.returncode != 0:
        sys.exit(f"artifact.py: the artifact's wia.py failed on {name} (see {log}; it needs pandas 2.x, "
                 "numpy, tqdm, pyyaml)")
    with open(os.path.join(root, f"{name}.json")) as f:
        got = json.load(f)
    with open(os.path.join(artifact, "data", f"result-{name}.json")) as f:
        want = json.load(f)
    return os.path.join(root, "dataframe", f"{name}-0-no-delay.parquet"), got == want


def analyze(aorta, table, js):
    p = subprocess.run([aorta, "analyze", "-q", "--json", js, table], capture_output=True, text=True)
    if p.returncode != 0:
        print(f"   aorta analyze failed ({p.returncode}): {p.stderr.strip()[-400:]}")
        return None
    with open(js) as f:
        return json.load(f)


def per_step(args, name, rows, meta):
    """Each step alone; what_if averaged over the steps: measured, replay and
    ideal step and every fix's step_ms_if_fixed are means, gains the mean
    measured minus the mean fixed, S the mean measured over the mean ideal."""
    steps = sorted({r["step"] for r in rows})
    if args.steps:
        steps = steps[:args.steps]
    d = os.path.join(args.out, f"per_step-{name}-{args.timeline}")
    os.makedirs(d, exist_ok=True)
    acc = {"measured_step_ms": [], "replay_step_ms": [], "ideal_step_ms": []}
    fixes = {"by_rank": {}, "by_group": {}, "by_op": {}}
    keep = {}
    for st in steps:
        table = os.path.join(d, f"step{st}.csv")
        convert(rows, meta, table, only_step=st, source=f"{name} step {st}")
        an = analyze(args.aorta, table, os.path.join(d, f"step{st}.json"))
        wi = an and an.get("across_ranks", {}).get("what_if")
        if not wi or not wi.get("ok", True) or wi.get("measured_step_ms") is None:
            print(f"   step {st}: no what-if")
            continue
        for k in acc:
            acc[k].append(wi[k])
        for part in fixes:
            for x in wi.get(part) or []:
                key = x.get("fix", x.get("what"))
                fixes[part].setdefault(key, []).append(x["step_ms_if_fixed"])
                keep[(part, key)] = x
    if not acc["measured_step_ms"]:
        return None
    m = {k: statistics.mean(v) for k, v in acc.items()}
    wi = dict(m)
    wi["slowdown"] = m["measured_step_ms"] / m["ideal_step_ms"]
    wi["steps"] = len(acc["measured_step_ms"])
    for part, by in fixes.items():
        wi[part] = []
        for key, v in by.items():
            x = dict(keep[(part, key)])
            x["step_ms_if_fixed"] = statistics.mean(v)
            x["gain_ms"] = m["measured_step_ms"] - x["step_ms_if_fixed"]
            x["gain_pct"] = x["gain_ms"] / m["measured_step_ms"] * 100
            x["steps"] = len(v)
            wi[part].append(x)
    return {"across_ranks": {"what_if": wi}}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--artifact", required=True, help="checkout of ByteDance-Seed/StragglerAnalysis")
    ap.add_argument("--aorta", default="build/aorta")
    ap.add_argument("--out", default="bench/out/whatif_artifact")
    ap.add_argument("--only", action="append", help="trace name (SE, ST, AR); repeatable")
    ap.add_argument("--steps", type=int, default=None, help="first N steps only")
    ap.add_argument("--timeline", choices=["trace", "nodelay"], default="trace",
                    help="trace: the measured parquet (default); nodelay: the artifact's own "
                    "replay of it without launch delays (runs its analyzer/wia.py, which needs "
                    "pandas 2.x, numpy, tqdm and pyyaml), the timeline its S is measured against")
    ap.add_argument("--per-step", action="store_true",
                    help="analyse each step alone (one op table per step) and average, as the artifact "
                    "simulates each step from its own start; without it the whole trace is one run")
    ap.add_argument("--convert-only", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    allc = []
    for name in args.only or TRACES:
        d = os.path.join(args.artifact, "data")
        meta = read_meta(os.path.join(d, f"meta-{name}.yaml"))
        src = os.path.join(d, f"trace-{name}.parquet")
        if args.timeline == "nodelay":
            src, same = run_artifact(args.artifact, name, os.path.join(args.out, "wia"))
            print(f"{name}: the artifact's wia.py here gives {'exactly' if same else 'NOT'} "
                  f"its expected result-{name}.json")
        rows = load(src)
        table = os.path.join(args.out, f"optable-{name}-{args.timeline}.csv")
        n, workers, steps = convert(rows, meta, table, args.steps, source=os.path.basename(src))
        print(f"{name}: {n} rows, {workers} workers (dp {meta['dp_size']} x pp {meta['pp_size']}; "
              f"tp {meta['tp_size']} and dsp {meta['dsp_size']} folded), {steps} steps -> {table}")
        if args.convert_only:
            continue
        with open(os.path.join(d, f"result-{name}.json")) as f:
            res = json.load(f)
        if args.per_step:
            an = per_step(args, name, rows, meta)
        else:
            js = os.path.join(args.out, f"analysis-{name}-{args.timeline}.json")
            an = analyze(args.aorta, table, js)
        if an is None:
            continue
        c = compare(name, meta, res, an, workers)
        c["timeline"] = args.timeline
        c["per_step"] = args.per_step
        report(c)
        allc.append(c)
    if allc:
        mode = "-per-step" if args.per_step else ""
        with open(os.path.join(args.out, f"comparison-{args.timeline}{mode}.json"), "w") as f:
            json.dump(allc, f, indent=1, default=str)
        print(f"comparison: {os.path.join(args.out, f'comparison-{args.timeline}{mode}.json')}")


if __name__ == "__main__":
    main()
