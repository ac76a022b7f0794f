#!/usr/bin/env python3
"""The project's own checkers checked: bp4verify.py accepts every ADIOS2-written BP4 dataset of
tests/golden and rejects each kind of damage below with the message that names it;
bloscverify.py decodes every blosc block of the ADIOS2-written zlib datasets to values whose
min/max equal the block's stored minmax, and rejects a damaged stream.

  test_checkers.py [unittest options]     (ctest: test_support_checkers, label support)
"""
import array
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.environ.get("GPUBP_GOLDEN_DIR") or os.path.join(HERE, "..", "golden")
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True
import bloscverify  # noqa: E402
import bp4verify  # noqa: E402

TOOL = os.path.join(HERE, "bp4verify.py")


def verify(path, *flags):
    p = subprocess.run([sys.executable, TOOL] + list(flags) + [path], capture_output=True,
                       text=True, timeout=120)
    return p.returncode, p.stdout + p.stderr


def datasets(*subs):
    for sub in subs:
        d = os.path.join(GOLDEN, sub)
        for name in sorted(os.listdir(d)):
            if name.endswith(".bp") and os.path.isdir(os.path.join(d, name)):
                yield os.path.join(d, name)


def slurp(path):
    with open(path, "rb") as f:
        return f.read()


def patch(path, offset, data):
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(data)


def u64(path, offset):
    with open(path, "rb") as f:
        f.seek(offset)
        return struct.unpack("<Q", f.read(8))[0]


class Bp4Verify(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="gpubp-checkers-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def copy(self, sub):
        dst = os.path.join(self.tmp, os.path.basename(sub))
        shutil.copytree(os.path.join(GOLDEN, sub), dst)
        return dst

    def checked(self, sub):
        """A copy of a golden dataset and the checker's reading of it (consistent)."""
        ds = self.copy(sub)
        ck = bp4verify.Checker(ds, False, False)
        ck.run()
        self.assertEqual(ck.errors, [])
        return ds, ck

    def rejects(self, ds, needle, status=1):
        rc, out = verify(ds)
        self.assertEqual(rc, status, out)
        self.assertIn(needle, out)

    def test_golden_accepted(self):
        n = 0
        for ds in datasets("BP4", "gpu/BP4", "compressed", "codecs/BP4"):
            rc, out = verify(ds, "-v")
            self.assertEqual(rc, 0, out)
            self.assertIn("consistent", out)
            n += 1
        self.assertGreaterEqual(n, 25)

    def test_bp5_is_not_bp4(self):
        rc, out = verify(os.path.join(GOLDEN, "BP5", "types.bp"))
        self.assertEqual(rc, 2, out)
        self.assertIn("BP5", out)

    def test_bp_version_byte(self):
        ds = self.copy("BP4/steps_2d.bp")
        patch(os.path.join(ds, "md.idx"), 37, b"\x03")
        self.rejects(ds, "byte 37 (BP version) is 3")

    def test_writer_active(self):
        ds = self.copy("BP4/steps_2d.bp")
        patch(os.path.join(ds, "md.idx"), 38, b"\x01")
        self.rejects(ds, "writer is still active")
        self.assertEqual(verify(ds, "--allow-active")[0], 0)

    def test_step_number(self):
        ds = self.copy("BP4/steps_2d.bp")
        patch(os.path.join(ds, "md.idx"), 64 + 64, struct.pack("<Q", 7))
        self.rejects(ds, "md.idx record 2: step 7")

    def test_variable_index_pointer(self):
        ds = self.copy("BP4/steps_2d.bp")
        idx = os.path.join(ds, "md.idx")
        patch(idx, 64 + 24, struct.pack("<Q", u64(idx, 64 + 24) + 1))
        self.rejects(ds, "md.0 step 1: PG index of")

    def test_md0_truncated(self):
        ds = self.copy("BP4/types.bp")
        md = os.path.join(ds, "md.0")
        os.truncate(md, os.path.getsize(md) - 1)
        self.rejects(ds, "past md.0")

    def test_md0_trailing_bytes(self):
        ds = self.copy("BP4/types.bp")
        with open(os.path.join(ds, "md.0"), "ab") as f:
            f.write(b"\0" * 5)
        self.rejects(ds, "the last step ends at")

    def test_entry_length(self):
        ds = self.copy("BP4/types.bp")
        idx, md = os.path.join(ds, "md.idx"), os.path.join(ds, "md.0")
        first = u64(idx, 64 + 24) + 12  # the first variable entry of step 1
        with open(md, "rb") as f:
            f.seek(first)
            n = struct.unpack("<I", f.read(4))[0]
        patch(md, first, struct.pack("<I", n + 1))
        rc, out = verify(ds)
        self.assertEqual(rc, 1, out)

    def test_payload_changed(self):
        """A flipped payload byte of an uncompressed float array: its minmax no longer holds."""
        ds, ck = self.checked("BP4/steps_2d.bp")
        blk = [ch for name, tid, step, ch in ck.blocks if tid == 6 and 12 in ch and 11 not in ch]
        self.assertTrue(blk)
        patch(os.path.join(ds, "data.%d" % blk[0][7]), blk[0][6] + 7, b"\x7f")
        self.rejects(ds, "minmax")

    def test_data_truncated(self):
        ds = self.copy("BP4/steps_2d.bp")
        data = os.path.join(ds, "data.0")
        os.truncate(data, os.path.getsize(data) - 40)
        rc, out = verify(ds)
        self.assertEqual(rc, 1, out)

    def test_record_tag(self):
        ds, ck = self.checked("BP4/local.bp")
        ch = ck.blocks[-1][3]
        patch(os.path.join(ds, "data.%d" % ch[7]), ch[3], b"[XMD")
        self.rejects(ds, "is not a [VMD record")

    def test_missing_data_file(self):
        ds = self.copy("BP4/local.bp")
        os.remove(os.path.join(ds, "data.0"))
        self.rejects(ds, "data.0: cannot be read")

    def test_compressed_size(self):
        """The operator's compressed size no longer matches the payload record."""
        ds, ck = self.checked("compressed/zlib_shuffle.bp")
        md = os.path.join(ds, "md.0")
        size = [ch[11]["size"] for _, _, _, ch in ck.blocks if 11 in ch][0]
        at = slurp(md).index(struct.pack("<Q", size))
        patch(md, at, struct.pack("<Q", size + 1))
        self.rejects(ds, "bytes compressed")


class BloscVerify(unittest.TestCase):
    def test_adios2_blocks_decode(self):
        n = 0
        for ds in datasets("compressed", "codecs/BP4"):
            if "zlib" not in os.path.basename(ds):
                continue
            ck = bp4verify.Checker(ds, False, False)
            ck.run()
            self.assertEqual(ck.errors, [])
            data = slurp(os.path.join(ds, "data.0"))
            for name, tid, step, ch in ck.blocks:
                if 11 not in ch:
                    continue
                op = ch[11]
                buf = data[ch[6]:ch[6] + op["size"]]
                out, info = bloscverify.decode_adios(buf, op["raw"])
                code = bp4verify.TYPES[tid][2]
                vals = array.array(code)
                vals.frombytes(out)
                self.assertEqual((min(vals), max(vals)), ch[12], "%s %s step %d" %
                                 (ds, name, step))
                n += 1
        self.assertGreaterEqual(n, 40)

    def test_damaged_stream_rejected(self):
        ds = os.path.join(GOLDEN, "compressed", "zlib_noshuffle.bp")
        ck = bp4verify.Checker(ds, False, False)
        ck.run()
        ch = [c for _, _, _, c in ck.blocks if 11 in c and c[11]["raw"] > 1000][0]
        data = slurp(os.path.join(ds, "data.0"))
        buf = bytearray(data[ch[6]:ch[6] + ch[11]["size"]])
        buf[len(buf) // 2] ^= 0x55
        # zlib streams end with an Adler-32 of their content: a flipped byte is caught
        with self.assertRaises(bloscverify.BloscError):
            bloscverify.decode_adios(bytes(buf), ch[11]["raw"])
        with self.assertRaises(bloscverify.BloscError):
            bloscverify.decode_adios(bytes(buf[:-3]), ch[11]["raw"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
