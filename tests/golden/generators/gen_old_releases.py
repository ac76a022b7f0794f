# Golden data written by OLDER ADIOS2 releases (tests/golden/old/<release>/), read by
# tests/api/test_old_releases.c. Run with the Python of a venv holding that release's wheel:
#   /venv-2.9/bin/python gen_old_releases.py OUTDIR            (pip install adios2==2.9.0)
# Writes every dataset below; tests/golden/old/<release> keeps those where the release's files
# differ from 2.12's (docs/interop.md, "Files written by older ADIOS2 releases"): stats_bp5 of
# 2.9.0, chunk_nullop_bp5 of 2.10.0. Fixed values, no seed.
import os, shutil, sys
import numpy as np
try:
    import adios2.bindings as b  # 2.10 and later
except ImportError:
    import adios2 as b  # 2.9: the low-level API is the package itself

A = b.ADIOS()


def stats_bp5(path):
    """BP5 arrays of char and complex (ADIOS2 keeps no min/max of them; 2.9 wrote MinMax fields
    holding its initial values: char 0xFF / 0x00, complex zeros), beside a float array whose
    second block has no elements, over 2 steps."""
    io = A.DeclareIO("stats"); io.SetEngine("BP5")
    c = io.DefineVariable("c", np.zeros(4, np.int8), [4], [0], [2], False)
    z = io.DefineVariable("z", np.zeros(2, np.complex64), [2], [0], [2], False)
    d = io.DefineVariable("d", np.zeros(2, np.complex128), [], [], [2], False)
    f = io.DefineVariable("f", np.zeros(3, np.float32), [], [], [3], False)
    shutil.rmtree(path, ignore_errors=True)
    e = io.Open(path, b.Mode.Write)
    for s in range(2):
        e.BeginStep()
        c.SetSelection([[0], [2]]); e.Put(c, np.array([5, -3], np.int8) + s, b.Mode.Sync)
        c.SetSelection([[2], [2]]); e.Put(c, np.array([7, 100], np.int8) + s, b.Mode.Sync)
        e.Put(z, np.array([1 + 2j, -3 + 1j], np.complex64) * (s + 1), b.Mode.Sync)
        e.Put(d, np.array([0.5 - 1j, 2 + 0j], np.complex128) * (s + 1), b.Mode.Sync)
        f.SetSelection([[], [3]]); e.Put(f, np.array([1.5, -2.5, 4], np.float32) + s, b.Mode.Sync)
        f.SetSelection([[], [0]]); e.Put(f, np.zeros(1, np.float32), b.Mode.Sync)
        e.EndStep()
    e.Close()


def chunk_nullop_bp5(path):
    """BP5 with BufferChunkSize=128: a float array filling most of the first chunk, then a char
    array with the null operator. 2.10.0's chunk buffer records the operator block 24 bytes
    before where it wrote it (at 72, written at 96); 2.10.0 and 2.12 both fail reading it."""
    io = A.DeclareIO("chunk"); io.SetEngine("BP5")
    io.SetParameter("BufferChunkSize", "128")
    f = io.DefineVariable("f", np.zeros(18, np.float32), [18], [0], [18], False)
    g = io.DefineVariable("g", np.zeros(5, np.int8), [5], [0], [5], False)
    g.AddOperation(A.DefineOperator("nop", "null", {}), {})
    shutil.rmtree(path, ignore_errors=True)
    e = io.Open(path, b.Mode.Write)
    e.BeginStep()
    e.Put(f, np.arange(18, dtype=np.float32), b.Mode.Sync)
    e.Put(g, np.arange(5, dtype=np.int8) + 1, b.Mode.Sync)
    e.EndStep()
    e.Close()


if __name__ == "__main__":
    import adios2
    out = os.path.join(sys.argv[1], adios2.__version__)
    os.makedirs(out, exist_ok=True)
    stats_bp5(os.path.join(out, "stats_bp5.bp"))
    chunk_nullop_bp5(os.path.join(out, "chunk_nullop_bp5.bp"))
