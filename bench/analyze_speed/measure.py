#!/usr/bin/env python3
"""Time / peak-memory harness.

    measure.py [--limit-gb G] [--interval S] --out RESULT.json -- CMD ARGS...

Runs CMD under GNU `/usr/bin/time -v` and, at the same time, samples the whole process tree from
/proc every --interval seconds. Writes RESULT.json with:
  wall_s, user_s, sys_s, rc                  from /usr/bin/time -v
  maxrss_kb                                  /usr/bin/time's "Maximum resident set size": the
                                             largest single process of the tree (fork pools are
                                             not summed)
  tree_peak_rss_kb, tree_peak_pss_kb         sampled peak of the SUM over the tree (PSS counts
                                             copy-on-write pages shared by forked workers once)
  killed_for_memory                          true if the tree's PSS passed --limit-gb and the tree
                                             was killed
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time


def children_map():
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                s = f.read()
            ppid = int(s[s.rindex(")") + 2:].split()[1])
            kids.setdefault(ppid, []).append(int(d))
        except (OSError, ValueError):
            pass
    return kids


def tree(pid):
    kids = children_map()
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def mem_kb(pid):
    rss = pss = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Rss:"):
                    rss = int(line.split()[1])
                elif line.startswith("Pss:"):
                    pss = int(line.split()[1])
    except OSError:
        pass
    return rss, pss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--limit-gb", type=float, default=0)
    ap.add_argument("--interval", type=float, default=0.1)
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    tf = tempfile.NamedTemporaryFile(prefix="time-v.", delete=False)
    tf.close()
    p = subprocess.Popen(["/usr/bin/time", "-v", "-o", tf.name] + cmd, start_new_session=True)
    peak_rss = peak_pss = 0
    killed = False
    while p.poll() is None:
        rss = pss = 0
        for q in tree(p.pid)[1:]:        # skip /usr/bin/time itself
            r, s = mem_kb(q)
            rss += r
            pss += s
        peak_rss = max(peak_rss, rss)
        peak_pss = max(peak_pss, pss)
        if a.limit_gb and pss > a.limit_gb * 1024 * 1024 and not killed:
            killed = True
            print(f"measure: tree PSS {pss / 1048576:.1f} GB > {a.limit_gb} GB, killing", file=sys.stderr)
            os.killpg(p.pid, signal.SIGKILL)
        time.sleep(a.interval)
    txt = open(tf.name).read()
    os.unlink(tf.name)

    def grab(pat, conv=float):
        m = re.search(pat, txt)
        return conv(m.group(1)) if m else None

    wall = None
    m = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", txt)
    if m:
        parts = [float(x) for x in m.group(1).split(":")]
        wall = sum(v * 60 ** i for i, v in enumerate(reversed(parts)))
    res = dict(cmd=cmd, rc=p.returncode, wall_s=wall,
               user_s=grab(r"User time \(seconds\): (\S+)"),
               sys_s=grab(r"System time \(seconds\): (\S+)"),
               maxrss_kb=grab(r"Maximum resident set size \(kbytes\): (\d+)", int),
               tree_peak_rss_kb=peak_rss, tree_peak_pss_kb=peak_pss, killed_for_memory=killed)
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1)
    print(f"measure: wall {wall:.2f}s user {res['user_s']}s sys {res['sys_s']}s maxrss "
          f"{(res['maxrss_kb'] or 0) / 1024:.0f} MB tree-peak PSS {peak_pss / 1024:.0f} MB rc {p.returncode}",
          file=sys.stderr)
    sys.exit(0 if p.returncode == 0 else 1)


if __name__ == "__main__":
    main()
