# Writes tests/golden/bp5/wheel3/widths.bp with the ADIOS2 2.12.1 Python wheel (bindings API):
# a BP5 local array whose block counts have different numbers of digits from step to step (bpls
# -d / -dD print each step's block bounds with the width of the count of the last piece it read
# before that step), a 2-D one, and a global array for reference.
#   python3 gen_wheel5.py OUTDIR
import os, shutil, sys
import numpy as np
import adios2.bindings as b

OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)
A = b.ADIOS()
io = A.DeclareIO("widths")
io.SetEngine("BP5")
la = io.DefineVariable("la", np.zeros(8, dtype=np.uint8), [], [], [8], False)
l2 = io.DefineVariable("l2", np.zeros((2, 3), dtype=np.int16), [], [], [2, 3], False)
g = io.DefineVariable("g", np.zeros(4, dtype=np.float32), [1200], [0], [4], False)
path = os.path.join(OUT, "widths.bp")
shutil.rmtree(path, ignore_errors=True)
e = io.Open(path, b.Mode.Write)
for s, (counts, rows) in enumerate([([8, 120], [2, 12]), ([15, 3], [110, 1]), ([1000, 7], [5, 9])]):
    e.BeginStep()
    for k, n in enumerate(counts):
        la.SetSelection([[], [n]])
        e.Put(la, ((np.arange(n) + 10 * k + 50 * s) % 251).astype(np.uint8), b.Mode.Sync)
    for k, r in enumerate(rows):
        l2.SetSelection([[], [r, 3]])
        e.Put(l2, (np.arange(3 * r) + 1000 * s + 100 * k).astype(np.int16).reshape(r, 3), b.Mode.Sync)
    g.SetSelection([[100 * s], [4]])
    e.Put(g, np.arange(4, dtype=np.float32) + s, b.Mode.Sync)
    e.EndStep()
e.Close()
