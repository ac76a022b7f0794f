#!/usr/bin/env python3
"""Metadata-at-scale curves (docs/performance.md): runs `gpubp-bench --meta` over a range of
step counts (20 variables, 1 block) and of block counts (20 variables, 100 blocks), prints a
markdown table and, when matplotlib is importable, writes a PNG plot (steps on the x axis).

  meta_curve.py --bench build/bench/gpubp-bench --dir /tmp/meta --png docs/meta-scaling.png
               [--compare 'PROGRAM {path}'] [--repeat 3]

--compare runs another reader on each dataset the bench wrote (the program must print
`open_inquire_s=<x> read_last_s=<y>` and may print `list_s=<z>`, `rss_kb=`,
`open_inquire_cpu_s=`); its times are put beside ours.
--writer 'PROGRAM write {path} {steps} {vars} {blocks}' writes each dataset with another writer
(e.g. bench/adios2_meta.cpp with ADIOS2's BP5 engine: `adios2_meta write ... BP5`); the bench then
reads it (gpubp-bench --meta --path) and write_s is the writer's wall time.
"""
import argparse
import os
import re
import shlex
import statistics
import subprocess
import sys
import time

KEYS = ("write_s", "open_inquire_s", "read_last_s", "list_s", "rss_kb", "open_inquire_cpu_s")


def run(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return {k: float(v) for k, v in re.findall(r"(\w+)=([0-9.eE+-]+)", out)}


def median_runs(cmd, repeat):
    runs = [run(cmd) for _ in range(repeat)]
    return {k: statistics.median(r[k] for r in runs if k in r) for k in runs[0]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--png")
    ap.add_argument("--compare")
    ap.add_argument("--writer")
    ap.add_argument("--blocks", default="1,100", help="block counts of the two series")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--steps", default="1000,3000,10000,30000,100000")
    ap.add_argument("--block-steps", default="100,300,1000")
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    series = []
    nb = [int(x) for x in a.blocks.split(",")]
    for blocks, steps in ((nb[0], a.steps), (nb[-1], a.block_steps)):
        for s in [int(x) for x in steps.split(",") if x]:
            path = os.path.join(a.dir, "meta_%d_20_%d.bp" % (s, blocks))
            base = [a.bench, "--meta", "--steps", str(s), "--vars", "20", "--blocks", str(blocks),
                    "--dir", a.dir]
            if a.writer:
                cmd = shlex.split(a.writer.format(path=path, steps=s, vars=20, blocks=blocks))
                t0 = time.monotonic()
                subprocess.run(cmd, check=True, capture_output=True)
                first = {"write_s": time.monotonic() - t0}
                base = [a.bench, "--meta", "--path", path]
                rest = median_runs(base, a.repeat)
            else:
                first = run(base)  # writes the dataset
                rest = median_runs(base + ["--no-write"], a.repeat)
            rest["write_s"] = first["write_s"]
            row = {"steps": s, "blocks": blocks, **rest}
            if a.compare:
                cmd = shlex.split(a.compare.replace("{path}", path))
                other = median_runs(cmd, a.repeat)
                row.update({"cmp_" + k: v for k, v in other.items()})
            series.append(row)
            print(row, file=sys.stderr)
    cols = ["steps", "blocks"] + list(KEYS)
    if a.compare:
        cols += ["cmp_open_inquire_s", "cmp_read_last_s", "cmp_open_inquire_cpu_s", "cmp_rss_kb"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in series:
        print("| " + " | ".join(("%g" % r[c]) if c in r else "" for c in cols) + " |")
    if a.png:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("matplotlib missing: no plot", file=sys.stderr)
            return 0
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for blocks, style in ((nb[0], "o-"), (nb[-1], "s--")):
            pts = [r for r in series if r["blocks"] == blocks]
            xs = [r["steps"] for r in pts]
            for key, label in (("open_inquire_s", "open+inquire"), ("list_s", "list (-l)")):
                ax.plot(xs, [r[key] for r in pts], style,
                        label="libgpubp %s, 20 vars x %d block(s)" % (label, blocks))
            if a.compare:
                ax.plot(xs, [r.get("cmp_open_inquire_s", float("nan")) for r in pts], style,
                        alpha=0.5, label="comparison open+inquire, %d block(s)" % blocks)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("steps")
        ax.set_ylabel("seconds (median)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(a.png, dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
