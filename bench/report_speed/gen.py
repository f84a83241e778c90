#!/usr/bin/env python3
"""Writes a large run for `aorta report`'s speed test: RANKS ranks x STEPS
steps of per-rank JSONL in the upstream schema (compute, all-reduce,
reduce-scatter and aux ranges, markers, the profile.overlap block with
active_segments), about 2 KB a line like real upstream lines.  Values vary
with rank and step (deterministic, no RNG) so nothing is constant.
usage: gen.py OUT_DIR [RANKS] [STEPS]"""
import os, sys

def main():
    out = sys.argv[1]
    ranks = int(sys.argv[2]) if len(sys.argv) > 2 else 64
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 10000
    os.makedirs(out, exist_ok=True)
    for r in range(ranks):
        with open(os.path.join(out, f"rank_{r:02d}_metrics.jsonl"), "w") as f:
            buf = []
            for s in range(steps):
                c = 25.0 + (s % 97) * 0.05 + r * 0.01
                fw = c * 0.4; bw0 = 0.8 + fw; bw1 = 0.8 + c
                ar0 = bw1 - 2.0 - (s % 5) * 0.2; ar1 = ar0 + 4.0
                rs0 = bw0 + 1.0; rs1 = rs0 + 2.0
                tot = ar1 + 3.2
                ov_ar = bw1 - ar0; ov_rs = rs1 - rs0
                t = f"epoch0_step{s}"
                seg = ",".join(f'{{"start_ms": {a:.6f}, "end_ms": {b:.6f}, "active_streams": [{n}]}}'
                               for a, b, n in ((0.0, 0.1, ''), (0.1, 0.6, '"aux"'), (0.7, bw0, '"compute"'),
                                               (rs0, rs1, '"compute", "reducescatter"'),
                                               (ar0, bw1, '"allreduce", "compute"'), (bw1, ar1, '"allreduce"'),
                                               (ar1 + 0.1, tot - 0.2, '"aux"')))
                buf.append(
                    f'{{"rank": {r}, "world_size": {ranks}, "epoch": 0, "step": {s}, "global_step": {s}, '
                    f'"loss": {1.0 / (1 + s * 0.01):.8f}, "grad_norm": 0.5, "lr": 0.0001, "profile": {{"index": {s}, '
                    f'"total_ms": {tot:.6f}, "ranges": ['
                    f'{{"stream": "aux", "tag": "{t}_prefetch", "start_ms": 0.1, "end_ms": 0.6, "duration_ms": 0.5, "metadata": {{}}}}, '
                    f'{{"stream": "compute", "tag": "{t}_forward", "start_ms": 0.7, "end_ms": {bw0 - 0.1:.6f}, "duration_ms": {fw:.6f}, "metadata": {{}}}}, '
                    f'{{"stream": "compute", "tag": "{t}_backward", "start_ms": {bw0:.6f}, "end_ms": {bw1:.6f}, "duration_ms": {bw1 - bw0:.6f}, "metadata": {{}}}}, '
                    f'{{"stream": "reducescatter", "tag": "{t}_rs", "start_ms": {rs0:.6f}, "end_ms": {rs1:.6f}, "duration_ms": 2.0, "metadata": {{"function": "reduce_scatter_tensor"}}}}, '
                    f'{{"stream": "allreduce", "tag": "{t}_ar", "start_ms": {ar0:.6f}, "end_ms": {ar1:.6f}, "duration_ms": 4.0, "metadata": {{"function": "all_reduce"}}}}, '
                    f'{{"stream": "aux", "tag": "{t}_optimizer", "start_ms": {ar1 + 0.1:.6f}, "end_ms": {tot - 0.2:.6f}, "duration_ms": 2.9, "metadata": {{}}}}], '
                    f'"markers": [{{"stream": "compute", "tag": "{t}_end", "time_ms": {tot - 0.1:.6f}, "metadata": {{}}}}], '
                    f'"overlap": {{"per_stream_ms": {{"allreduce": 4.0, "aux": 3.4, "compute": {c - 0.1:.6f}, "reducescatter": 2.0}}, '
                    f'"overlap_ms": {{"compute_comm": {ov_ar + ov_rs:.6f}, "compute_allreduce": {ov_ar:.6f}, '
                    f'"compute_reducescatter": {ov_rs:.6f}, "idle": 0.4}}, "active_segments": [{seg}], '
                    f'"utilization": {{"compute": {c / tot:.6f}, "allreduce": {4.0 / tot:.6f}, "reducescatter": {2.0 / tot:.6f}, "aux": {3.4 / tot:.6f}}}}}}}}}\n')
                if len(buf) >= 1000:
                    f.write("".join(buf)); buf = []
            f.write("".join(buf))

if __name__ == "__main__":
    main()
