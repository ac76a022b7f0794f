#!/usr/bin/env python3
"""Issue 22's verdict from gpubp_blosc2_cmp logs: each codec against Blosc2, over rounds.

    python3 bench/blosc_summary.py [--min 0.90] LOG [LOG ...]

A log holds gpubp_blosc2_cmp's result lines ("data=smooth codec=zstd shuffle=byte threads=4 ...
c_speed=0.97 d_speed=1.02 size=1.0000 ...") in sections that start with a line "=== LABEL"
(bench/run_device.sh's stamps "=== <time> (+Ns) LABEL" too). Sections of one label are rounds
of the same cells: a leading "round N " is dropped from the label, and the same label in
several logs counts as several rounds. Per label and codec the report gives how many cells
(data x shuffle x threads) compress at MIN (0.90) of Blosc2's speed or more, taking each cell's
median over the rounds, the median and lowest of those cells, the lowest decompression, the
size range (ours / Blosc2's), the mean per thread count, and the cells under MIN with the
rounds' values. Exit status 0 (a report, not a test), 2 for a wrong command line or no result
line.
"""
import re
import statistics
import sys

STAMP_RE = re.compile(r"^\S+Z \(\+\d+s\) ")
ROUND_RE = re.compile(r"^round \d+ ")
KV_RE = re.compile(r"(\w+)=(\S+)")


def label_of(line):
    label = STAMP_RE.sub("", line[4:].strip())
    return ROUND_RE.sub("", label).strip() or "(no label)"


def parse(paths):
    """{(label, codec): {(data, shuffle, threads): [(c, d, size), ...]}} in file order."""
    out = {}
    for path in paths:
        label = "(no label)"
        with open(path, errors="replace") as f:
            for line in f:
                if line.startswith("=== "):
                    label = label_of(line)
                    continue
                kv = dict(KV_RE.findall(line))
                if "c_speed" not in kv or "codec" not in kv:
                    continue
                try:
                    cell = (kv["data"], kv["shuffle"], int(kv["threads"]))
                    val = (float(kv["c_speed"]), float(kv["d_speed"]), float(kv["size"]))
                except (KeyError, ValueError):
                    continue
                out.setdefault((label, kv["codec"]), {}).setdefault(cell, []).append(val)
    return out


def report(groups, lo):
    lines = []
    for (label, codec), cells in groups.items():
        med = {k: statistics.median(v[0] for v in vals) for k, vals in cells.items()}
        dmed = {k: statistics.median(v[1] for v in vals) for k, vals in cells.items()}
        sizes = [v[2] for vals in cells.values() for v in vals]
        rounds = max(len(v) for v in cells.values())
        under = sorted(k for k in cells if med[k] < lo)
        per_t = {}
        for k, m in med.items():
            per_t.setdefault(k[2], []).append(m)
        lines.append("%s | %s: %d of %d cells >= %.2f of Blosc2's compression speed (median of "
                     "%d round%s per cell); median %.2f, lowest %.2f; decompression median %.2f, "
                     "lowest %.2f; size %.4f-%.4f"
                     % (label, codec, len(cells) - len(under), len(cells), lo, rounds,
                        "" if rounds == 1 else "s", statistics.median(med.values()),
                        min(med.values()), statistics.median(dmed.values()),
                        min(dmed.values()), min(sizes), max(sizes)))
        lines.append("    mean per thread count: " + ", ".join(
            "%d: %.2f" % (t, statistics.mean(v)) for t, v in sorted(per_t.items())))
        for k in under:
            lines.append("    under: %s %s %d threads: %.2f (%s)" % (
                k[0], k[1], k[2], med[k], " ".join("%.2f" % v[0] for v in cells[k])))
    return lines


def main(argv):
    args, lo = list(argv[1:]), 0.90
    if len(args) >= 2 and args[0] == "--min":
        try:
            lo = float(args[1])
        except ValueError:
            args = []
        args = args[2:]
    if not args:
        sys.stderr.write("usage: blosc_summary.py [--min 0.90] LOG [LOG ...]\n")
        return 2
    groups = parse(args)
    if not groups:
        sys.stderr.write("blosc_summary.py: no gpubp_blosc2_cmp result line in %s\n"
                         % " ".join(args))
        return 2
    print("\n".join(report(groups, lo)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
