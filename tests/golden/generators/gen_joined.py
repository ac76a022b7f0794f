# Writes tests/golden/joined/ with the ADIOS2 2.12.1 Python wheel (bindings API): joined arrays
# whose shape changes from step to step, in BP5 and BP4, some absent from some steps (also from
# the last one). ADIOS2's random-access shape of a joined array differs between the engines
# (BP5: one shape for every step, BP4: each step's own), which these files pin down.
#   python3 gen_joined.py OUTDIR
import os, shutil, sys
import numpy as np
import adios2.bindings as b

OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)
A = b.ADIOS()
JOINED = 18446744073709551614  # adios2::JoinedDim

def write(engine, name, plan, axis=0):
    """plan: {variable: [blocks of step 0, blocks of step 1, ...]}, each a list of counts along
    the joined dimension `axis` of a 2-D array whose other extent is 2 (an empty list: the
    variable is not written in that step); x is written in every step."""
    dims = lambda n: [n, 2] if axis == 0 else [2, n]
    io = A.DeclareIO(name)
    io.SetEngine(engine)
    nsteps = max(len(p) for p in plan.values())
    vars_ = {v: io.DefineVariable(v, np.zeros(dims(1), dtype=np.float64), dims(JOINED), [], dims(1),
                                  False) for v in plan}
    x = io.DefineVariable("x", np.zeros(1, dtype=np.int32))
    path = os.path.join(OUT, name + ".bp")
    shutil.rmtree(path, ignore_errors=True)
    e = io.Open(path, b.Mode.Write)
    for s in range(nsteps):
        e.BeginStep()
        e.Put(x, np.array([s], dtype=np.int32), b.Mode.Sync)
        for k, (vn, p) in enumerate(plan.items()):
            for blk, n in enumerate(p[s] if s < len(p) else []):
                vars_[vn].SetSelection([[], dims(n)])
                e.Put(vars_[vn], np.arange(2 * n, dtype=np.float64).reshape(dims(n)) + 1000 * k +
                      100 * s + 10 * blk, b.Mode.Sync)
        e.EndStep()
    e.Close()

# gone: not in the last step (ADIOS2 BP5 reports its first step's shape, {7, 2}); ends: in the
# last step (its shape, {3, 2}, in every step); late: from step 1 on, absent in step 2
PLAN = {"gone": [[3, 1, 3], [1], []], "ends": [[2], [5], [1, 2]], "late": [[], [4], [], [2, 1]]}
PLAN["gone"].append([])
write("BP5", "joined_bp5", PLAN)
write("BP4", "joined_bp4", {"grows": [[2], [5], [3]], "gap": [[3, 1], [], [2]]})
# joined along the second dimension (ADIOS2's JoinedDim may be any one): {2, 6} in every step
write("BP5", "cols_bp5", {"cols": [[2, 1], [3], [1, 2, 3]]}, axis=1)
