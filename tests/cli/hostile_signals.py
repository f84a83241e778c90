#!/usr/bin/env python3
"""tests/cli/hostile_signals.py - a command stopped by a signal half-way
leaves its previous outputs whole and no temporary file or folder, for
tests/cli/hostile.sh (the outputs family).  Prints one line per signal,
"SIGNAME ok" or "SIGNAME FAIL why".

  hostile_signals.py AORTA DIR analyze INPUT SIGNAL...
    DIR holds the previous outputs a.json and csv/, and a FIFO named fifo
    that nobody reads.  `aorta analyze --json DIR/a.json --csv DIR/csv
    --trace-out DIR/fifo INPUT` writes its JSON and CSV files under their
    temporary names, then waits for a reader of the FIFO: the signal comes
    while they exist.
  hostile_signals.py AORTA DIR report INPUT SIGNAL...
    DIR/rep holds a previous report of INPUT.  `aorta report` of INPUT into
    DIR/rep is stopped (SIGSTOP) once its temporary folder DIR/rep.tmp-PID
    exists, sent the signal and continued (tried again when the report was
    done before it could be stopped).
The command runs with every signal at its default action (a shell's
background job would ignore SIGINT and SIGQUIT).
"""
import glob
import os
import signal
import subprocess
import sys
import time

aorta, d, mode, inp = sys.argv[1:5]
names = sys.argv[5:]


def defaults():
    for s in range(1, signal.NSIG):
        try:
            signal.signal(s, signal.SIG_DFL)
        except (OSError, ValueError, RuntimeError):
            pass
    signal.pthread_sigmask(signal.SIG_SETMASK, [])


def snapshot(paths):
    out = {}
    for p in paths:
        for f in sorted(glob.glob(p + "/*") + glob.glob(p + "/.*")) if os.path.isdir(p) else [p]:
            with open(f, "rb") as fh:
                out[f] = fh.read()
    return out


def leftovers():
    return [f for f in os.listdir(d) + [os.path.join("csv", x) for x in os.listdir(d + "/csv")]
            if "aorta-tmp" in f or ".tmp-" in f or f.endswith(".old")] if os.path.isdir(d + "/csv") else \
        [f for f in os.listdir(d) if "aorta-tmp" in f or ".tmp-" in f]


def wait_for(pred, proc, limit=20.0):
    t0 = time.time()
    while time.time() - t0 < limit:
        if pred():
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.0005)
    return False


for name in names:
    sig = getattr(signal, "SIG" + name)
    if mode == "analyze":
        before = snapshot([d + "/a.json", d + "/csv"])
        cmd = [aorta, "analyze", "-q", "--json", d + "/a.json", "--csv", d + "/csv", "--trace-out",
               d + "/fifo", inp]
        p = subprocess.Popen(cmd, preexec_fn=defaults, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # the JSON's temporary file and the five CSV ones
        if not wait_for(lambda: sum("aorta-tmp" in f for f in leftovers()) >= 6, p):
            p.kill()
            p.wait()
            print(name, "FAIL the temporary files never appeared (exit %s)" % p.returncode)
            continue
        p.send_signal(sig)
        rc = p.wait(timeout=60)
        after = snapshot([d + "/a.json", d + "/csv"])
    else:
        before = snapshot([d + "/rep"])
        for attempt in range(10):
            cmd = [aorta, "report", "--skip-steps", "0", "-o", d + "/rep"]
            for i in range(4):
                cmd += ["--log-dir", inp, "--label", "run%d" % i]
            p = subprocess.Popen(cmd, preexec_fn=defaults, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            tmp = "%s/rep.tmp-%d" % (d, p.pid)
            seen = wait_for(lambda: os.path.isdir(tmp), p)
            if seen:
                p.send_signal(signal.SIGSTOP)
            if seen and os.path.isdir(tmp):
                break
            p.send_signal(signal.SIGCONT)
            p.wait()
            # it finished first: a new report replaced the old one; take it as the previous
            before = snapshot([d + "/rep"])
        else:
            print(name, "FAIL the report was never stopped while its temporary folder existed")
            continue
        p.send_signal(sig)
        p.send_signal(signal.SIGCONT)
        rc = p.wait(timeout=60)
        after = snapshot([d + "/rep"])
    left = leftovers()
    if rc != -sig:
        print(name, "FAIL exit %s, expected death by the signal" % rc)
    elif left:
        print(name, "FAIL left behind: %s" % " ".join(left))
    elif before != after:
        print(name, "FAIL the previous outputs changed: %s" %
              " ".join(sorted(set(before) ^ set(after)) or [f for f in before if before[f] != after.get(f)]))
    else:
        print(name, "ok")
