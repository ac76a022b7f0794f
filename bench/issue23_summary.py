#!/usr/bin/env python3
"""The table of issue 23's targets from a bench/run_device.sh MODE=issue23 log (issue23.log).

    python3 bench/issue23_summary.py OUT/issue23.log

Each row of the log starts with "=== <time> (+Ns) row N: gpu <label>" and holds gpubp-bench's
lines (ratios_best, ratios_direct, gpubp: ..., write_GBps=...) or gpubp-adios2-cmp's
("adios2 engine=BP4 ... write_GBps=... read_GBps=... sub_read_GBps=..."). The table gives, per row,
the measured ratio of each target, the target and whether it is met (ok / LOW); ADIOS2 rows are
compared with the gpubp row of the same block count at the defaults (rows "B block(s), defaults"):
write and strided half-box read, libgpubp over ADIOS2 BP4. Exit status 0 (a report, not a test).
"""
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


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    rows = parse(argv[1])
    out = []

    def add(row, what, value, target, unit="x"):
        if value is None:
            out.append((row["n"], row["label"], what, "-", "" if target is None else ">= %.2f" % target, "not measured"))
            return
        verdict = "" if target is None else ("ok" if value >= target else "LOW")
        out.append((row["n"], row["label"], what, "%.2f%s" % (value, unit if unit != "x" else ""),
                    "-" if target is None else ">= %.2f" % target, verdict))

    gp_default = {}
    for r in rows:
        kv, lab = r["kv"], r["label"]
        if r["adios2"]:
            continue
        if "defaults" in lab and "cold" not in lab and "GiB" not in lab and "variables" not in lab:
            b = blocks_of(lab)
            if b:
                gp_default[b] = r
        w, rd = num(kv, "write_GBps"), num(kv, "read_GBps")
        out.append((r["n"], lab, "write / read GB/s", "%s / %s" % (kv.get("write_GBps", "-"),
                    kv.get("read_GBps", "-")), "", ""))
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
            out.append((r["n"], lab, "RSS growth MiB (pool)", "%.1f (%d)" % (rss, pool),
                        "<= pool + 64", "ok" if rss <= pool + 64 else "HIGH"))
    for r in rows:
        if not r["adios2"]:
            continue
        bp4 = r["adios2"].get("BP4", {})
        g = gp_default.get(blocks_of(r["label"]))
        gw = num(g["kv"], "write_GBps") if g else None
        gs = num(g["kv"], "sub_read_GBps") if g else None
        aw, asub = num(bp4, "write_GBps"), num(bp4, "sub_read_GBps")
        out.append((r["n"], r["label"], "ADIOS2 BP4 write / read / half-box GB/s", "%s / %s / %s" % (
            bp4.get("write_GBps", "-"), bp4.get("read_GBps", "-"), bp4.get("sub_read_GBps", "-")),
            "", ""))
        bp5 = r["adios2"].get("BP5", {})
        if bp5:
            out.append((r["n"], r["label"], "ADIOS2 BP5 write / read / half-box GB/s", "%s / %s / %s" % (
                bp5.get("write_GBps", "-"), bp5.get("read_GBps", "-"), bp5.get("sub_read_GBps", "-")),
                "", ""))
        add(r, "libgpubp write / ADIOS2 BP4 (row %s)" % (g["n"] if g else "?"),
            gw / aw if gw and aw else None, 15.0)
        add(r, "libgpubp half-box read / ADIOS2 BP4", gs / asub if gs and asub else None, 20.0)
    w = [max(len(str(x[i])) for x in out) if out else 0 for i in range(6)]
    w[1] = min(w[1], 40)
    print("issue 23 targets (%s)" % argv[1])
    for row in out:
        print("%3s  %-*s  %-*s  %-*s  %-*s  %s" % (row[0], w[1], str(row[1])[:40], w[2], row[2],
                                                    w[3], row[3], w[4], row[4], row[5]))
    secs = [r.get("end", r["t"]) - r["t"] for r in rows]
    if rows:
        print("rows: %d, %s s in all (row seconds: %s)" % (len(rows), rows[-1].get("end", rows[-1]["t"]) - rows[0]["t"],
                                                          " ".join(str(s) for s in secs)))
    low = sum(1 for x in out if x[5] in ("LOW", "HIGH"))
    print("targets missed: %d" % low)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
