#!/usr/bin/env python3
"""bench/blosc_summary.py checked on logs in gpubp_blosc2_cmp's format: rounds of one label give
each cell's median (not the first round, not the mean), the count of cells at the threshold or
above, the lowest cell and decompression, the cells under it with the rounds' values; labels
with "round N " and run_device.sh's stamps group as one; a log without result lines and a wrong
command line exit 2.

  test_blosc_summary.py [unittest options]     (ctest: test_blosc_summary, label support)
"""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "bench", "blosc_summary.py")


def cell(data, codec, shuffle, threads, c, d=1.0, size=1.0):
    return ("data=%s codec=%s shuffle=%s threads=%d ours_c_MBps=100.0 ours_d_MBps=200.0 "
            "ours_ratio=1.2 blosc2_c_MBps=100.0 blosc2_d_MBps=200.0 blosc2_ratio=1.2 "
            "c_speed=%.3f d_speed=%.3f size=%.4f blocksize=32768/32768 flags=95/95 cross=ok"
            % (data, codec, shuffle, threads, c, d, size))


class Summary(unittest.TestCase):
    def run_script(self, *texts, args=()):
        with tempfile.TemporaryDirectory() as d:
            paths = []
            for i, t in enumerate(texts):
                p = os.path.join(d, "blosc-%d.log" % i)
                with open(p, "w") as f:
                    f.write(t)
                paths.append(p)
            r = subprocess.run([sys.executable, SCRIPT] + list(args) + paths,
                               capture_output=True, text=True, timeout=60)
        return r.returncode, r.stdout, r.stderr

    def test_rounds_give_medians(self):
        # three rounds of four zstd cells; cell (smooth, none, 8): 0.95 0.70 0.85 -> median 0.85
        # (the first round says 0.95, the mean 0.833)
        rounds = []
        for r, (a, b) in enumerate([(0.95, 1.10), (0.70, 1.00), (0.85, 0.90)]):
            rounds.append("\n".join([
                "=== round %d libs trixie" % (r + 1),
                cell("smooth", "zstd", "none", 8, a, d=0.80 + 0.05 * r),
                cell("smooth", "zstd", "none", 16, b),
                cell("random", "zstd", "bit", 8, 1.00, size=1.0001),
                cell("random", "zstd", "bit", 16, 0.91),
                "some other line=1"]))
        rc, out, _ = self.run_script("\n".join(rounds) + "\n")
        self.assertEqual(rc, 0, out)
        lines = out.splitlines()
        self.assertEqual(len([ln for ln in lines if " | zstd: " in ln]), 1)  # one label
        head = [ln for ln in lines if ln.startswith("libs trixie | zstd: ")][0]
        self.assertIn("3 of 4 cells >= 0.90", head)
        self.assertIn("median of 3 rounds", head)
        self.assertIn("lowest 0.85", head)
        self.assertIn("decompression median 1.00, lowest 0.85", head)
        self.assertIn("size 1.0000-1.0001", head)
        self.assertIn("under: smooth none 8 threads: 0.85 (0.95 0.70 0.85)", out)
        self.assertIn("8: 0.93", out)  # (0.85 + 1.00) / 2 per thread count

    def test_logs_stamps_and_threshold(self):
        # run_device.sh's stamps; the same label in two logs is two rounds; --min moves the line
        a = ("=== 2026-12-06T05:00:00Z (+3s) gpubp_blosc2_cmp lib 32 3 1\n"
             + cell("smooth", "lz4", "byte", 4, 0.80) + "\n" + cell("smooth", "blosclz", "byte", 4, 1.2)
             + "\n")
        b = ("=== 2026-12-06T05:09:00Z (+9s) gpubp_blosc2_cmp lib 32 3 1\n"
             + cell("smooth", "lz4", "byte", 4, 0.84) + "\n")
        rc, out, _ = self.run_script(a, b)
        self.assertEqual(rc, 0)
        self.assertIn("gpubp_blosc2_cmp lib 32 3 1 | lz4: 0 of 1 cells >= 0.90", out)
        self.assertIn("(0.80 0.84)", out)
        self.assertIn("| blosclz: 1 of 1 cells", out)
        rc, out, _ = self.run_script(a, b, args=("--min", "0.80"))
        self.assertIn("| lz4: 1 of 1 cells >= 0.80", out)

    def test_usage_and_empty(self):
        r = subprocess.run([sys.executable, SCRIPT], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 2)
        self.assertIn("blosc_summary.py", r.stderr)
        rc, _, err = self.run_script("=== nothing here\nno results\n")
        self.assertEqual(rc, 2)
        self.assertIn("no gpubp_blosc2_cmp result line", err)


if __name__ == "__main__":
    unittest.main()
