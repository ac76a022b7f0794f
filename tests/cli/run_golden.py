#!/usr/bin/env python3
"""Golden test of gpubpls: its output for one dataset and one mode must equal, byte for byte, what
ADIOS2's bpls printed (the DATASET.MODE.txt file beside the dataset).

usage: run_golden.py GPUBPLS DATASET MODE [--skip-codec]
  MODE: la (bpls -la), d (bpls -d), blocks (bpls -D), laD (bpls -laD), or any other name whose
        bpls arguments are in DATASET.MODE.args beside the output: one argument a line, the
        line DATASET standing for the dataset's path
  --skip-codec: exit 77 (skipped) when libgpubp lacks the dataset's compression codec
gpubpls must exit 0, or 1 where bpls's output ends with the report of an exception it caught
(bpls exits 1 then: e.g. the data of a BP5 variable written as statistics only).
"""
import difflib
import re
import subprocess
import sys

FLAGS = {"la": ["-la"], "d": ["-d"], "blocks": ["-D"], "laD": ["-laD"]}
SKIP = 77
# bpls's last words when it catches an exception (it then exits 1)
EXCEPTION = re.compile(rb"\nbpls caught an exception\n[^\n]*\n\Z")


def command(gpubpls, dataset, mode):
    if mode in FLAGS:
        return [gpubpls] + FLAGS[mode] + [dataset]
    with open(f"{dataset}.{mode}.args") as f:
        args = f.read().splitlines()
    if "DATASET" not in args:
        raise SystemExit(f"{dataset}.{mode}.args names no DATASET")
    return [gpubpls] + [dataset if a == "DATASET" else a for a in args]


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    skip_codec = "--skip-codec" in sys.argv
    if len(args) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    gpubpls, dataset, mode = args
    with open(f"{dataset}.{mode}.txt", "rb") as f:
        expected = f.read()
    cmd = command(gpubpls, dataset, mode)
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=120)
    except subprocess.TimeoutExpired:
        print(f"FAIL: {' '.join(cmd)} did not finish in 120 s", file=sys.stderr)
        return 1
    err = p.stderr.decode(errors="replace")
    if skip_codec and p.returncode != 0 and "compression" in err:
        print(f"SKIP: libgpubp cannot decompress {dataset}: {err.strip()}")
        return SKIP
    ok = True
    want_rc = 1 if EXCEPTION.search(expected) else 0
    if p.returncode != want_rc:
        print(f"FAIL: {' '.join(cmd)} exited {p.returncode} ({want_rc} expected): {err}",
              file=sys.stderr)
        ok = False
    if p.stdout != expected:
        diff = difflib.unified_diff(
            expected.decode(errors="replace").splitlines(keepends=True),
            p.stdout.decode(errors="replace").splitlines(keepends=True),
            fromfile=f"{dataset}.{mode}.txt (bpls)", tofile="gpubpls")
        sys.stderr.writelines(list(diff)[:80])
        print(f"FAIL: {' '.join(cmd)} differs from {dataset}.{mode}.txt", file=sys.stderr)
        ok = False
    if ok:
        print(f"PASS: {' '.join(cmd)} ({len(expected)} bytes)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
