#!/usr/bin/env python3
"""table.py TP_BENCH.jsonl TORCH_PEER.json - side-by-side table of aorta's
tune-tp operators and PyTorch's, with the targets of the task:
best aorta >= 1.15x faster than its serial, within 10% of max(T_gemm,
T_comm) of the same run, and faster than PyTorch's fused operator."""
import json
import sys


def load_rows(path):
    rows = []
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    rows.append(json.loads(line))
    except OSError as ex:
        print("no aorta results: %s" % ex)
    return rows


def cfg_name(r):
    if r["method"] == "pipeline":
        return "pipeline sm%d split%d margin%d" % (r["num_sm"], r["num_splits"], r["set_sm_margin"])
    if r["method"] == "ring_exchange":
        return "ring %s split%d%s%s" % ("ce" if r["use_ce"] else "sm%d" % r["num_sm"], r["num_splits"],
                                        " agg" if r["aggregate"] else "", " margin" if r["set_sm_margin"] else "")
    return r["method"]


def main():
    rows = load_rows(sys.argv[1])
    try:
        with open(sys.argv[2]) as f:
            torch_res = json.load(f)
    except (OSError, ValueError, IndexError) as ex:
        print("no torch results: %s" % ex)
        torch_res = {}
    bad = [r for r in rows if not r.get("check_ok")]
    print("aorta configurations: %d measured, %d failed the check" % (len(rows), len(bad)))
    hdr = "%-4s | %9s %9s %9s %11s | %-30s %9s | %9s %9s %9s %9s | %8s %8s %9s" % (
        "op", "gemm_ms", "comm_ms", "serial_ms", "max(g,c)_ms", "best aorta config", "e2e_ms",
        "t_gemm", "t_comm", "t_serial", "t_fused", "ser/best", "best/max", "fused/best")
    print(hdr)
    print("-" * len(hdr))
    verdicts = []
    for op in ("fc1", "fc2"):
        mine = [r for r in rows if r["op"] == op and r.get("check_ok")]
        if not mine:
            print("%-4s | no checked aorta result" % op)
            continue
        best = min(mine, key=lambda r: r["e2e_ms"])
        mx = max(best["gemm_ms"], best["comm_ms"])
        t = torch_res.get(op, {})
        fused = t.get("fused_ms")
        sp = best["serial_ms"] / best["e2e_ms"]
        rel = best["e2e_ms"] / mx
        fr = fused / best["e2e_ms"] if fused else float("nan")
        f = lambda v: ("%9.3f" % v) if isinstance(v, (int, float)) else "%9s" % "-"
        print("%-4s | %9.3f %9.3f %9.3f %11.3f | %-30s %9.3f | %s %s %s %s | %7.2fx %8.3f %8.2fx" % (
            op, best["gemm_ms"], best["comm_ms"], best["serial_ms"], mx, cfg_name(best), best["e2e_ms"],
            f(t.get("gemm_ms")), f(t.get("comm_ms")), f(t.get("serial_ms")), f(fused), sp, rel, fr))
        verdicts.append("%s: speedup over serial %.2fx (target >= 1.15) %s; e2e / max(gemm, comm) %.3f "
                        "(target <= 1.10) %s; vs torch fused %s" % (
                            op, sp, "MET" if sp >= 1.15 else "MISSED", rel, "MET" if rel <= 1.10 else "MISSED",
                            ("%.2fx %s" % (fr, "MET" if fr > 1 else "MISSED")) if fused else
                            "n/a (%s)" % t.get("fused_error", "no torch result")))
        none = [r for r in mine if r["method"] == "none"]
        if none:
            print("     aorta none (serial) e2e %.3f ms" % none[0]["e2e_ms"])
    for v in verdicts:
        print(v)


if __name__ == "__main__":
    main()
