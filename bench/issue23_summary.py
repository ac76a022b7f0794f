#!/usr/bin/env python3
"""The table of issue 23's targets from a bench/run_device.sh MODE=issue23 log (issue23.log).

    python3 bench/issue23_summary.py OUT/issue23.log [MORE/issue23.log ...]

Each row of the log starts with "=== <time> (+Ns) row N: gpu <label>" and holds gpubp-bench's
lines (ratios_best, ratios_direct, gpubp: ..., write_GBps=...) or gpubp-adios2-cmp's
("adios2 engine=BP4 ... write_GBps=... read_GBps=... sub_read_GBps=..."). The table gives, per row,
the measured ratio of each target, the target and whether it is met (ok / LOW); ADIOS2 rows are
compared with the gpubp row of the same block count at the defaults (rows "B block(s), defaults"):
write and strided half-box read, libgpubp over ADIOS2 BP4. With several logs (rounds of the same
rows, e.g. calls on one warm machine), each ratio is the median over the logs that have the row,
the rounds' values in parentheses, and the verdict is the median's; RSS growth is the largest of
the rounds. Exit status 0 (a report, not a test), 2 for a wrong command line.
"""
import statistics
import re
import sys

ROW_RE = re.compile(r"^=== \S+ \(\+(\d+)s\) row (\d+): gpu (.*)$")
KV_RE = re.compile(r"([A-Za-z_/()*]+)=([0-9.]+)")


def parse(path):
    rows, cur = [], None
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = ROW_RE.match(line)
            if m:
                cur = {"n": int(m.group(2)), "label": m.group(3), "t": int(m.group(1)),
                       "kv": {}, "adios2": {}, "lines": []}
                rows.append(cur)
                continue
            if line.startswith("=== ") and cur is not None:  # "done": the last row's end
                m2 = re.match(r"^=== \S+ \(\+(\d+)s\)", line)
                if m2:
                    cur["end"] = int(m2.group(1))
                cur = None
                continue
            if cur is None:
                continue
            cur["lines"].append(line)
            if line.startswith("adios2 engine="):
                eng = re.search(r"engine=(\w+)", line).group(1)
                cur["adios2"][eng] = dict(KV_RE.findall(line))
                continue
            for k, v in KV_RE.findall(line):
                cur["kv"].setdefault(k, v)
    for a, b in zip(rows, rows[1:]):
        a.setdefault("end", b["t"])
    return rows


def num(d, k):
    try:
        return float(d[k])
    except (KeyError, ValueError):
        return None


def blocks_of(label):
    m = re.match(r"(?:adios2: )?(\d+) blocks?\b", label)
    return int(m.group(1)) if m else None


def table(rows):
    """The lines of one log's table: (row, label, what, value, text, target, kind), where value is
    the number a verdict compares (None when there is none), text what is printed without one,
    target the threshold (None: context, no verdict) and kind "ratio", "rss" (value the growth,
    target the pool) or "text"."""
    out = []

    def add(row, what, value, target):
        out.append((row["n"], row["label"], what, value, None, target, "ratio"))

    def text(row, what, t):
        out.append((row["n"], row["label"], what, None, t, None, "text"))

    gp_default = {}
    for r in rows:
        kv, lab = r["kv"], r["label"]
        if r["adios2"]:
            continue
        if "defaults" in lab and "cold" not in lab and "GiB" not in lab and "variables" not in lab:
            b = blocks_of(lab)
            if b:
                gp_default[b] = r
        text(r, "write / read GB/s", "%s / %s" % (kv.get("write_GBps", "-"), kv.get("read_GBps", "-")))
        if "split off" in lab:
            v = num(kv, "write/one_file")
            if v is None:
                v = num(kv, "write/(files*one_file)")
            add(r, "write / one-file rate per file", v, 0.90)
            # context, not the target: F files written at once take less than F x the rate of
            # one file alone here; the raw write of the same run into the same F files, but with
            # the library's own threads (gpubp-bench's "ratios: write/raw"), so no verdict
            if not re.search(r"\bfiles=1\b", " ".join(r["lines"])):
                add(r, "write / raw, same files, library's threads", num(kv, "write/raw"), None)
        elif "direct_io" in lab or "fsync" in lab:
            add(r, "write / raw_best O_DIRECT", num(kv, "write/raw_best_direct"),
                0.80 if "direct_io" in lab else None)
        else:
            add(r, "write / raw_best", num(kv, "write/raw_best"), 0.80)
        if "cold" in lab:
            add(r, "cold read / raw_best cold", num(kv, "read/raw_best_cold"), 0.90)
        elif "direct_io" not in lab and "fsync" not in lab:
            add(r, "warm read / raw_best warm", num(kv, "read/raw_best_warm"), 0.80)
        rss, pool = num(kv, "rss_growth_MiB"), num(kv, "pool_MiB")
        if rss is not None and pool is not None:
            out.append((r["n"], lab, "RSS growth MiB (pool)", rss, None, pool, "rss"))
    for r in rows:
        if not r["adios2"]:
            continue
        g = gp_default.get(blocks_of(r["label"]))
        gw = num(g["kv"], "write_GBps") if g else None
        gs = num(g["kv"], "sub_read_GBps") if g else None
        for eng in ("BP4", "BP5"):
            d = r["adios2"].get(eng, {})
            if d or eng == "BP4":
                text(r, "ADIOS2 %s write / read / half-box GB/s" % eng, "%s / %s / %s" % (
                    d.get("write_GBps", "-"), d.get("read_GBps", "-"), d.get("sub_read_GBps", "-")))
        bp4 = r["adios2"].get("BP4", {})
        aw, asub = num(bp4, "write_GBps"), num(bp4, "sub_read_GBps")
        add(r, "libgpubp write / ADIOS2 BP4 (row %s)" % (g["n"] if g else "?"),
            gw / aw if gw and aw else None, 15.0)
        add(r, "libgpubp half-box read / ADIOS2 BP4", gs / asub if gs and asub else None, 20.0)
    return out


def cells(entries):
    """One printed line from the same line of one or more logs: (shown value, target, verdict)."""
    target, kind = entries[0][5], entries[0][6]
    if kind == "text":
        return ", ".join(e[4] for e in entries), "", ""
    vals = [e[3] for e in entries if e[3] is not None]
    if kind == "rss":
        v = max(vals)
        return "%.1f (%d)" % (v, target), "<= pool + 64", "ok" if v <= target + 64 else "HIGH"
    if not vals:
        return "-", "" if target is None else ">= %.2f" % target, "not measured"
    med = statistics.median(vals)
    shown = "%.2f" % med
    if len(entries) > 1:
        shown += " (%s)" % " ".join("-" if e[3] is None else "%.2f" % e[3] for e in entries)
    if target is None:  # context: no verdict
        return shown, "-", ""
    return shown, ">= %.2f" % target, "ok" if med >= target else "LOW"


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    logs = [parse(p) for p in argv[1:]]
    groups, order = {}, []
    for rows in logs:
        for e in table(rows):
            key = (e[0], e[2])
            if key not in groups:
                groups[key] = []
                order.append(key)
            groups[key].append(e)
    out = []
    for key in order:
        es = groups[key]
        out.append((es[0][0], es[0][1], es[0][2]) + cells(es))
    w = [max(len(str(x[i])) for x in out) if out else 0 for i in range(6)]
    w[1] = min(w[1], 40)
    print("issue 23 targets (%s)" % ", ".join(argv[1:]))
    for row in out:
        print("%3s  %-*s  %-*s  %-*s  %-*s  %s" % (row[0], w[1], str(row[1])[:40], w[2], row[2],
                                                    w[3], row[3], w[4], row[4], row[5]))
    for path, rows in zip(argv[1:], logs):
        secs = [r.get("end", r["t"]) - r["t"] for r in rows]
        if rows:
            print("%srows: %d, %s s in all (row seconds: %s)" % (
                path + ": " if len(logs) > 1 else "", len(rows),
                rows[-1].get("end", rows[-1]["t"]) - rows[0]["t"], " ".join(str(x) for x in secs)))
    low = sum(1 for x in out if x[5] in ("LOW", "HIGH"))
    print("targets missed: %d" % low)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
