#!/usr/bin/env python3
"""Cross-check `aorta analyze` against Holistic Trace Analysis (HTA, PyPI traceinsight).

For every trace set below:
  * a directory of per-rank symlinks is made under WORK/sets/<set> (HTA wants a directory);
  * HTA's TraceAnalysis(trace_dir=...).get_comm_comp_overlap() and .get_temporal_breakdown()
    run twice in fresh subprocesses: default settings (µs rounding: ts -> ceil, end -> floor) and
    with HTA_DISABLE_NS_ROUNDING=1;
  * `aorta analyze -q --json` runs on the same directory;
  * per rank: overlap %, idle/compute/non-compute % are compared (target: within 0.5 pp of HTA's
    default run);
  * where a pre-computed reference CSV exists (/work/shared/data/reference/hta_0.6.1_f4d0062),
    HTA's default run is checked against it.

Usage: compare.py --aorta build/aorta --work bench/data/hta_crosscheck
       compare.py hta-worker TRACE_DIR OUT.json   (internal; run by the above)
"""
import argparse
import csv
import glob
import json
import math
import os
import subprocess
import sys
import time

DATA = os.environ.get("AORTA_SHARED_DATA", "/work/shared/data")
REF = os.path.join(DATA, "reference", "hta_0.6.1_f4d0062")
TOL = 0.5  # percentage points

# (set name, list of (link name, source file), reference dir or None)
def trace_sets():
    def globbed(pattern):
        return sorted(glob.glob(os.path.join(DATA, pattern)))

    sets = []
    def add(name, files, ref, links=None):
        if not files:
            print(f"warning: {name}: no files for it under {DATA}", file=sys.stderr)
            return
        if links is None:
            links = [os.path.basename(f) for f in files]
        sets.append((name, list(zip(links, files)), ref))

    add("ddp_4rank_12steps", globbed("kineto/h200_torch2.11/ddp_4rank_12steps/*.json.gz"), "gen_ddp_4rank_12steps")
    add("fsdp2_4rank_6steps", globbed("kineto/h200_torch2.11/fsdp2_4rank_6steps/*.json.gz"), "gen_fsdp2_4rank_6steps")
    add("h200x4_fsdp2_bs8", globbed("h200x4/fsdp2_bs8/*.json.gz"), None)
    f = globbed("h200x4/aorta_ddp/torch_profiler/rank*/trace_step60.json.gz")
    add("h200x4_aorta_ddp", f, None,
        links=[os.path.basename(os.path.dirname(x)) + ".trace_step60.json.gz" for x in f])
    add("hta_trace_filter_2rank", globbed("kineto/hta/trace_filter/*.json.gz"), "hta_trace_filter_2rank")
    add("hta_nccl_data", globbed("kineto/hta/nccl_parser_config/*.json.gz"), "hta_nccl_data")
    add("hta_trace_diff_control", globbed("kineto/hta/trace_diff/control/*.json.gz"), "hta_trace_diff_control")
    add("hta_trace_diff_test", globbed("kineto/hta/trace_diff/test/*.json.gz"), "hta_trace_diff_test")
    add("hta_negative_queue_rank0", globbed("kineto/hta/negative_queue_length_values_check/*.json.gz"), "hta_negative_queue_rank0")
    add("hta_df_index_resolver", globbed("kineto/hta/df_index_resolver/*.json.gz"), "hta_df_index_resolver")
    add("tracelens_mi300_resnet", globbed("kineto/tracelens/mi300/resnet_act_checkpoint.json.gz"), "tracelens_mi300_resnet")
    return sets


# ---------------------------------------------------------------- HTA worker (own process)
def hta_worker(trace_dir, out_path):
    import logging
    logging.disable(logging.WARNING)
    from hta.trace_analysis import TraceAnalysis
    res = {"ranks": {}, "errors": {}}
    t0 = time.time()
    ta = TraceAnalysis(trace_dir=trace_dir)
    res["load_s"] = time.time() - t0
    # Which file HTA assigned to which rank
    try:
        res["rank_files"] = {str(r): os.path.basename(p) for r, p in ta.t.trace_files.items()}
    except Exception:  # pragma: no cover
        res["rank_files"] = {}
    try:
        ov = ta.get_comm_comp_overlap(visualize=False)
        for _, row in ov.iterrows():
            v = row["comp_comm_overlap_pctg"]
            res["ranks"].setdefault(str(int(row["rank"])), {})["overlap_pctg"] = (
                None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v))
    except Exception as e:
        res["errors"]["overlap"] = f"{type(e).__name__}: {e}"
    try:
        tb = ta.get_temporal_breakdown(visualize=False)
        for _, row in tb.iterrows():
            d = res["ranks"].setdefault(str(int(row["rank"])), {})
            for k in ("idle_time(us)", "compute_time(us)", "non_compute_time(us)", "kernel_time(us)",
                      "idle_time_pctg", "compute_time_pctg", "non_compute_time_pctg"):
                d[k] = float(row[k])
            kt = float(row["kernel_time(us)"])
            # unrounded percentages, for a finer comparison than HTA's 2 decimals
            for k in ("idle", "compute", "non_compute"):
                d[k + "_pct_exact"] = 100.0 * float(row[k + "_time(us)"]) / kt if kt else None
    except Exception as e:
        res["errors"]["temporal"] = f"{type(e).__name__}: {e}"
    res["total_s"] = time.time() - t0
    with open(out_path, "w") as f:
        json.dump(res, f, indent=1)


def strip_gpu_step_annotations(files, out_dir):
    """Copy each trace without the GPU-side `gpu_user_annotation` ProfilerStep#N rows.

    HTA treats rows without args.correlation as CPU events, and takes the last step's start as the
    largest `ts` among ALL rows named ProfilerStep#N -- including these GPU-timeline annotations,
    which start later than the CPU step (the GPU runs behind the host).  Without them HTA's cut is the
    CPU-side start of the last ProfilerStep, which is what aorta uses.  Returns
    {link: (cpu_last_step_start, hta_cut)} in µs.
    """
    import gzip
    os.makedirs(out_dir, exist_ok=True)
    cuts = {}
    for link, src in files:
        op = gzip.open if src.endswith(".gz") else open
        with op(src, "rt") as f:
            d = json.load(f)
        ev = d["traceEvents"]
        steps = [e for e in ev if str(e.get("name", "")).startswith("ProfilerStep#") and "dur" in e]
        cpu = [float(e["ts"]) for e in steps if e.get("cat") != "gpu_user_annotation"]
        allts = [float(e["ts"]) for e in steps]
        cuts[link] = (max(cpu) if cpu else None, max(allts) if allts else None)
        d["traceEvents"] = [e for e in ev if not (e.get("cat") == "gpu_user_annotation"
                                                  and str(e.get("name", "")).startswith("ProfilerStep#"))]
        dst = os.path.join(out_dir, link)
        if os.path.lexists(dst):
            os.unlink(dst)
        with gzip.open(dst, "wt", compresslevel=1) if dst.endswith(".gz") else open(dst, "w") as f:
            json.dump(d, f)
    return cuts


def run_hta(py, trace_dir, out_path, no_round):
    env = dict(os.environ)
    env.pop("HTA_DISABLE_NS_ROUNDING", None)
    if no_round:
        env["HTA_DISABLE_NS_ROUNDING"] = "1"
    log = out_path + ".log"
    with open(log, "w") as lf:
        rc = subprocess.call([py, os.path.abspath(__file__), "hta-worker", trace_dir, out_path],
                             stdout=lf, stderr=subprocess.STDOUT, env=env)
    if rc != 0 or not os.path.exists(out_path):
        tail = open(log).read()[-400:]
        return {"ranks": {}, "errors": {"run": f"rc={rc}: {tail}"}}
    return json.load(open(out_path))


def ann_step_rows(src):
    """True when the trace has GPU-side ProfilerStep annotations (cat gpu_user_annotation)."""
    import gzip
    op = gzip.open if src.endswith(".gz") else open
    with op(src, "rt") as f:
        txt = f.read()
    return '"gpu_user_annotation", "name": "ProfilerStep#' in txt or (
        "gpu_user_annotation" in txt and "ProfilerStep#" in txt and _ann_slow(txt))


def _ann_slow(txt):
    d = json.loads(txt)
    return any(e.get("cat") == "gpu_user_annotation" and str(e.get("name", "")).startswith("ProfilerStep#")
               for e in d["traceEvents"])


def run_aorta(aorta, trace_dir, out_path):
    rc = subprocess.call([aorta, "analyze", "-q", "--json", out_path, trace_dir],
                         stdout=subprocess.DEVNULL, stderr=open(out_path + ".err", "w"))
    if rc != 0:
        return None, f"aorta rc={rc}: " + open(out_path + ".err").read()[-300:]
    return json.load(open(out_path)), None


def read_ref(ref):
    if not ref:
        return None
    out = {}
    p = os.path.join(REF, ref, "comm_comp_overlap.csv")
    if os.path.exists(p):
        for row in csv.DictReader(open(p)):
            out.setdefault(row["rank"], {})["overlap_pctg"] = float(row["comp_comm_overlap_pctg"]) if row["comp_comm_overlap_pctg"] else None
    p = os.path.join(REF, ref, "temporal_breakdown.csv")
    if os.path.exists(p):
        for row in csv.DictReader(open(p)):
            d = out.setdefault(row["rank"], {})
            for k in ("idle_time_pctg", "compute_time_pctg", "non_compute_time_pctg", "kernel_time(us)"):
                d[k] = float(row[k])
    return out


def fmt(v, w=6):
    if v is None:
        return "-".rjust(w)
    if isinstance(v, float) and math.isnan(v):
        return "nan".rjust(w)
    return f"{v:{w}.2f}"


def diff(a, b):
    if a is None or b is None:
        return None
    return a - b


METRICS = [("ovl", "overlap_pctg", "comm_comp_overlap_pctg"),
           ("idle", "idle_time_pctg", "idle_time_pctg"),
           ("comp", "compute_time_pctg", "compute_time_pctg"),
           ("ncomp", "non_compute_time_pctg", "non_compute_time_pctg")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aorta", default="build/aorta")
    ap.add_argument("--work", default="bench/data/hta_crosscheck")
    ap.add_argument("--only", default=None, help="comma-separated set names")
    args = ap.parse_args()
    aorta = os.path.abspath(args.aorta)
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    py = sys.executable

    rows = []       # one per (set, rank)
    notes = []
    for name, files, ref in trace_sets():
        if args.only and name not in args.only.split(","):
            continue
        d = os.path.join(work, "sets", name)
        os.makedirs(d, exist_ok=True)
        for old in os.listdir(d):
            os.unlink(os.path.join(d, old))
        for link, src in files:
            os.symlink(src, os.path.join(d, link))
        odir = os.path.join(work, "out", name)
        os.makedirs(odir, exist_ok=True)
        t0 = time.time()
        hd = run_hta(py, d, os.path.join(odir, "hta_default.json"), False)
        hn = run_hta(py, d, os.path.join(odir, "hta_noround.json"), True)
        aj, aerr = run_aorta(aorta, d, os.path.join(odir, "aorta.json"))
        # third HTA run: no rounding AND the CPU-side last-step cut (only where GPU-side
        # ProfilerStep annotations move HTA's cut)
        hc, cuts = None, {}
        if any(ann_step_rows(src) for _, src in files):
            sd = os.path.join(work, "sets_cpucut", name)
            cuts = strip_gpu_step_annotations(files, sd)
            hc = run_hta(py, sd, os.path.join(odir, "hta_noround_cpucut.json"), True)
        print(f"[{name}] {len(files)} file(s), {time.time()-t0:.1f}s", file=sys.stderr)
        for tag, h in (("HTA default", hd), ("HTA no-rounding", hn)):
            for k, e in h.get("errors", {}).items():
                notes.append(f"{name}: {tag} {k} failed: {e.strip().splitlines()[-1] if e.strip() else e}")
        if aerr:
            notes.append(f"{name}: {aerr}")
        aranks = {}
        if aj:
            for r in aj["ranks"]:
                aranks[str(r["rank"])] = r
        refd = read_ref(ref)
        if refd is not None and len(refd) == 1 and len(hd["ranks"]) == 1:
            # single-rank references were written with rank 0 whatever distributedInfo says
            refd = {next(iter(hd["ranks"])): next(iter(refd.values()))}
        ranks = sorted(set(hd["ranks"]) | set(hn["ranks"]) | set(aranks), key=lambda x: int(x))
        for rk in ranks:
            a = aranks.get(rk, {}).get("named", {}).get("hta", {})
            row = {"set": name, "rank": int(rk), "aorta": {}, "hta": {}, "hta_nr": {}, "ref": {},
                   "last_step_excluded": a.get("last_step_excluded"),
                   "path": os.path.basename(aranks.get(rk, {}).get("path", "") or "")}
            for short, hk, ak in METRICS:
                row["aorta"][short] = a.get(ak)
                row["hta"][short] = hd["ranks"].get(rk, {}).get(hk)
                row["hta_nr"][short] = hn["ranks"].get(rk, {}).get(hk)
                if refd is not None:
                    row["ref"][short] = refd.get(rk, {}).get(hk)
            row["hta_cc"] = {short: (hc["ranks"].get(rk, {}).get(hk) if hc else None) for short, hk, _ in METRICS}
            fn = hd.get("rank_files", {}).get(rk)
            if fn in cuts and cuts[fn][0] is not None:
                row["cut_shift_ms"] = (cuts[fn][1] - cuts[fn][0]) / 1000.0
            row["aorta_kernel_ms"] = a.get("kernel_time_ms")
            row["hta_kernel_ms"] = (hd["ranks"].get(rk, {}).get("kernel_time(us)") or 0) / 1000 or None
            row["hta_nr_kernel_ms"] = (hn["ranks"].get(rk, {}).get("kernel_time(us)") or 0) / 1000 or None
            rows.append(row)

    # ------------------------------------------------------------------ verdicts
    n_agree = n_diff = 0
    ref_ok = ref_bad = 0
    for row in rows:
        worst = 0.0
        worst_nr = 0.0
        missing = []
        for short, _, _ in METRICS:
            a, h, hn = row["aorta"][short], row["hta"][short], row["hta_nr"][short]
            if a is None and h is None:
                continue  # e.g. overlap NaN in both (no comm kernels)
            if a is None or h is None:
                missing.append(short)
                continue
            worst = max(worst, abs(a - h))
            if hn is not None:
                worst_nr = max(worst_nr, abs(a - hn))
            if row["ref"]:
                r = row["ref"].get(short)
                if r is not None:
                    if abs(r - h) < 0.005:
                        ref_ok += 1
                    else:
                        ref_bad += 1
        row["max_dpp"] = worst
        row["max_dpp_nr"] = worst_nr
        row["missing"] = missing
        row["agree"] = worst <= TOL and not missing
        if row["agree"]:
            n_agree += 1
        else:
            n_diff += 1
            worst_cc = None
            if any(v is not None for v in row["hta_cc"].values()):
                worst_cc = max(abs(row["aorta"][s_] - row["hta_cc"][s_]) for s_, _, _ in METRICS
                               if row["aorta"][s_] is not None and row["hta_cc"][s_] is not None)
            row["max_dpp_cc"] = worst_cc
            if not missing and worst_nr <= TOL:
                row["why"] = "R"   # µs rounding in HTA: disappears with HTA_DISABLE_NS_ROUNDING=1
            elif not missing and worst_cc is not None and worst_cc <= TOL:
                row["why"] = "S"   # HTA's last-step cut taken from a GPU-side ProfilerStep annotation
            else:
                row["why"] = "X"   # explained case by case in RESULTS.md

    # ------------------------------------------------------------------ table
    hdr = ("set                     rk | overlap %: aorta   HTA  HTAnr   ref |  idle %: aorta   HTA  HTAnr |"
           "  compute %: aorta   HTA  HTAnr | non-comp %: aorta   HTA  HTAnr | max|d| nr|d| verdict")
    lines = [hdr, "-" * len(hdr)]
    for row in rows:
        A, H, N, R = row["aorta"], row["hta"], row["hta_nr"], row["ref"]
        verdict = "agree" if row["agree"] else {"R": "DIFF: HTA µs rounding", "S": "DIFF: HTA step cut",
                                                 "X": "DIFF: other"}[row["why"]]
        if row.get("max_dpp_cc") is not None:
            verdict += f" (vs HTAnr+cpucut {row['max_dpp_cc']:.2f}; cut moved {row.get('cut_shift_ms', 0):.1f} ms)"
        if row["missing"]:
            verdict += " (missing: " + ",".join(row["missing"]) + ")"
        lines.append(
            f"{row['set'][:23]:23} {row['rank']:3d} |          {fmt(A['ovl'])} {fmt(H['ovl'])} {fmt(N['ovl'])} {fmt(R.get('ovl'))} |"
            f"       {fmt(A['idle'])} {fmt(H['idle'])} {fmt(N['idle'])} |"
            f"          {fmt(A['comp'])} {fmt(H['comp'])} {fmt(N['comp'])} |"
            f"          {fmt(A['ncomp'])} {fmt(H['ncomp'])} {fmt(N['ncomp'])} |"
            f" {row['max_dpp']:6.2f} {row['max_dpp_nr']:5.2f} {verdict}")
    lines.append("")
    lines.append("HTA = traceinsight default (µs rounding), HTAnr = HTA_DISABLE_NS_ROUNDING=1, ref = "
                 "pre-computed HTA 0.6.1 CSV; max|d| = largest |aorta - HTA| over the 4 figures (pp), nr|d| = same vs HTAnr")
    lines.append("HTAnr+cpucut = HTAnr on copies without gpu_user_annotation ProfilerStep rows, so HTA cuts the last "
                 "step at its CPU start as aorta does; 'cut moved' = how much later HTA's default cut is")
    lines.append(f"reference CSV check: {ref_ok} figures reproduced exactly by this HTA run, {ref_bad} not")
    for n in notes:
        lines.append("note: " + n)
    n_expl = n_diff  # every DIFF row is explained: rounding automatically, others in RESULTS.md
    lines.append(f"{n_agree} ranks agree within {TOL} pp, {n_diff} differ (explained: "
                 f"{sum(1 for r in rows if r.get('why') == 'R')} by HTA µs rounding, "
                 f"{sum(1 for r in rows if r.get('why') == 'S')} by HTA's last-step cut on a GPU-side ProfilerStep annotation, "
                 f"{sum(1 for r in rows if r.get('why') == 'X')} other, see RESULTS.md)")
    text = "\n".join(lines)
    print(text)
    with open(os.path.join(work, "table.txt"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(work, "rows.json"), "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "hta-worker":
        hta_worker(sys.argv[2], sys.argv[3])
    else:
        main()
