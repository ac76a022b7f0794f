#!/usr/bin/env python3
"""bench/issue23_summary.py checked on logs in the format of bench/run_device.sh MODE=issue23:
one log gives each row's ratios and verdicts; several logs (rounds) give the median of each
ratio with the rounds' values, the verdict of the median, the largest RSS growth, and rows that
only some rounds ran; a wrong command line exits 2.

  test_bench_summary.py [unittest options]     (ctest: test_bench_summary, label support)
"""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "bench", "issue23_summary.py")


def gpu_row(n, label, write, read, wbest, rbest, rss=257.5, sub=None):
    """The lines gpubp-bench --baseline prints for one row (the ones the summary reads)."""
    return "\n".join([
        "=== 2026-12-06T02:0%d:00Z (+%ds) row %d: gpu %s" % (n % 10, 10 * n, n, label),
        "ratios_best: write/raw_best=%.2f read/raw_best_warm=%.2f (library medians)" % (wbest, rbest),
        "gpubp: sub_read_GBps=%.2f rss_growth_MiB=%.1f pool_MiB=256" % (sub or read / 2, rss),
        "ratios: write/raw=0.90 write/loop=0.95 read/raw=0.90",
        "write_GBps=%.2f read_GBps=%.2f" % (write, read)])


def adios2_row(n, blocks, write, sub):
    return "\n".join([
        "=== 2026-12-06T02:09:00Z (+%ds) row %d: gpu adios2: %d blocks" % (10 * n, n, blocks),
        "adios2 engine=BP4 write_GBps=%.2f read_GBps=2.00 sub_read_GBps=%.2f" % (write, sub),
        "adios2 engine=BP5 write_GBps=1.80 read_GBps=3.00 sub_read_GBps=1.70"])


def log(*rows):
    return "\n".join(rows) + "\n=== 2026-12-06T02:10:00Z (+200s) done\n"


class Summary(unittest.TestCase):
    def run_script(self, *texts):
        paths = []
        with tempfile.TemporaryDirectory() as d:
            for i, t in enumerate(texts):
                p = os.path.join(d, "issue23-%d.log" % i)
                with open(p, "w") as f:
                    f.write(t)
                paths.append(p)
            r = subprocess.run([sys.executable, SCRIPT] + paths, capture_output=True, text=True,
                               timeout=60)
        return r.returncode, r.stdout, r.stderr

    def line(self, out, row, what):
        for ln in out.splitlines():
            if ln[:3].strip() == str(row) and what in ln:
                return ln
        self.fail("no line for row %s %r in:\n%s" % (row, what, out))

    def test_one_log(self):
        rc, out, _ = self.run_script(log(gpu_row(1, "1 block, defaults (split on)", 25.0, 36.0,
                                                 0.74, 0.81),
                                         gpu_row(2, "4 blocks, defaults", 24.0, 37.0, 0.85, 0.99,
                                                 rss=330.0)))
        self.assertEqual(rc, 0)
        ln = self.line(out, 1, "write / raw_best")
        self.assertIn("0.74", ln)
        self.assertTrue(ln.rstrip().endswith("LOW"), ln)
        self.assertTrue(self.line(out, 1, "warm read").rstrip().endswith("ok"))
        self.assertIn("25.00 / 36.00", self.line(out, 1, "write / read GB/s"))
        self.assertTrue(self.line(out, 2, "RSS growth").rstrip().endswith("HIGH"))
        self.assertIn("targets missed: 2", out)

    def test_rounds_give_medians(self):
        r1 = log(gpu_row(1, "1 block, defaults (split on)", 25.5, 40.8, 0.74, 0.81),
                 gpu_row(3, "16 blocks, defaults", 26.2, 37.5, 0.80, 0.91, rss=257.6),
                 adios2_row(15, 16, 1.00, 1.70))
        r2 = log(gpu_row(1, "1 block, defaults (split on)", 25.5, 36.7, 0.81, 0.78),
                 gpu_row(3, "16 blocks, defaults", 25.2, 40.4, 0.63, 0.82, rss=300.0))
        r3 = log(gpu_row(1, "1 block, defaults (split on)", 24.6, 37.5, 0.85, 1.00),
                 gpu_row(3, "16 blocks, defaults", 23.7, 35.9, 0.76, 0.93, rss=257.7))
        rc, out, _ = self.run_script(r1, r2, r3)
        self.assertEqual(rc, 0)
        ln = self.line(out, 1, "write / raw_best")
        self.assertIn("0.81 (0.74 0.81 0.85)", ln)  # the median, not the first or the mean
        self.assertTrue(ln.rstrip().endswith("ok"), ln)
        ln = self.line(out, 3, "write / raw_best")
        self.assertIn("0.76 (0.80 0.63 0.76)", ln)
        self.assertTrue(ln.rstrip().endswith("LOW"), ln)
        self.assertIn("0.91 (0.91 0.82 0.93)", self.line(out, 3, "warm read"))
        self.assertIn("300.0 (256)", self.line(out, 3, "RSS growth"))  # the largest round
        self.assertIn("25.50 / 40.80, 25.50 / 36.70, 24.60 / 37.50",
                      self.line(out, 1, "write / read GB/s"))
        # row 15 ran once: its ratio against the first log's row 3 (26.2 / 1.00), no parentheses
        ln = self.line(out, 15, "libgpubp write / ADIOS2 BP4 (row 3)")
        self.assertIn("26.20", ln)
        self.assertNotIn("(26", ln)
        self.assertIn("targets missed: 2", out)  # row 3's write, row 15's half box (11.0x)
        self.assertEqual(out.count("rows: "), 3)

    def test_usage(self):
        r = subprocess.run([sys.executable, SCRIPT], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 2)
        self.assertIn("issue23_summary.py", r.stderr)


if __name__ == "__main__":
    unittest.main()
