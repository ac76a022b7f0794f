#!/usr/bin/env python3
"""Golden test of gpubpls: its output for one dataset and one mode must equal, byte for byte, what
ADIOS2's bpls printed (the DATASET.MODE.txt file beside the dataset).

usage: run_golden.py GPUBPLS DATASET MODE [--skip-codec]
  MODE: la (bpls -la), d (bpls -d), blocks (bpls -D)
  --skip-codec: exit 77 (skipped) when libgpubp lacks the dataset's compression codec
"""
import difflib
import subprocess
import sys

FLAGS = {"la": ["-la"], "d": ["-d"], "blocks": ["-D"]}
SKIP = 77


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    skip_codec = "--skip-codec" in sys.argv
    if len(args) != 3 or args[2] not in FLAGS:
        print(__doc__, file=sys.stderr)
        return 2
    gpubpls, dataset, mode = args
    with open(f"{dataset}.{mode}.txt", "rb") as f:
        expected = f.read()
    cmd = [gpubpls] + FLAGS[mode] + [dataset]
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
    if p.returncode != 0:
        print(f"FAIL: {' '.join(cmd)} exited {p.returncode}: {err}", file=sys.stderr)
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
