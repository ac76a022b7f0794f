# Writes tests/golden/bp4wheel/ with the ADIOS2 2.12.1 Python wheel (bindings API), engine BP4:
# local values put several times in a step (bpls -dD prints each step's first value for every
# block of them), a local array of blocks of different sizes, and a value absent
# from a step.
#   python3 gen_bp4wheel.py OUTDIR
import os, shutil, sys
import numpy as np
import adios2.bindings as b

OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)
A = b.ADIOS()


def bp4(name):
    """A BP4 IO named name and the path of OUT/name_bp4.bp, removed"""
    io = A.DeclareIO(name)
    io.SetEngine("BP4")
    path = os.path.join(OUT, name + "_bp4.bp")
    shutil.rmtree(path, ignore_errors=True)
    return io, path


io, path = bp4("localvals")
lv = io.DefineVariable("lv", np.zeros(1, dtype=np.int32), [b.LocalValueDim], [], [], False)
ld = io.DefineVariable("ld", np.zeros(1, dtype=np.float64), [b.LocalValueDim], [], [], False)
la = io.DefineVariable("la", np.zeros(2, dtype=np.int16), [], [], [2], False)
sc = io.DefineVariable("sc", np.zeros(1, dtype=np.uint8))
e = io.Open(path, b.Mode.Write)
for s in range(3):
    e.BeginStep()
    for k in range(3):
        e.Put(lv, np.array([100 * s + 10 * k + 1], dtype=np.int32), b.Mode.Sync)
    for k in range(2):
        e.Put(ld, np.array([s + 0.25 * (k + 1)]), b.Mode.Sync)
    for k, n in enumerate([2, 1, 3]):
        la.SetSelection([[], [n]])
        e.Put(la, (np.arange(n, dtype=np.int16) + 10 * k + 100 * s) if n else np.zeros(1, np.int16),
              b.Mode.Sync)
    if s != 1:
        e.Put(sc, np.array([7 + s], dtype=np.uint8), b.Mode.Sync)
    e.EndStep()
e.Close()

# nullop_bp4: ADIOS2's null operator on a global and a local array, BP4 (ADIOS2 2.12.1 cannot
# read their data back itself: bpls -d stops with an exception; only listings are kept)
io, path = bp4("nullop")
op = A.DefineOperator("nullop", "null", {})
x = io.DefineVariable("x", np.zeros(4, dtype=np.int32), [8], [0], [4], False)
x.AddOperation(op, {})
y = io.DefineVariable("y", np.zeros(3, dtype=np.float64), [], [], [3], False)
y.AddOperation(op, {})
e = io.Open(path, b.Mode.Write)
for s in range(2):
    e.BeginStep()
    for k in range(2):
        x.SetSelection([[4 * k], [4]])
        e.Put(x, np.arange(4, dtype=np.int32) + 10 * k + 100 * s, b.Mode.Sync)
    e.Put(y, np.arange(3, dtype=np.float64) / 2 + s, b.Mode.Sync)
    e.EndStep()
e.Close()
