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

def write(engine, name, plan):
    """plan: {variable: [blocks of step 0, blocks of step 1, ...]}, each a list of row counts
    (an empty list: the variable is not written in that step); x is written in every step."""
    io = A.DeclareIO(name)
    io.SetEngine(engine)
    nsteps = max(len(p) for p in plan.values())
    vars_ = {v: io.DefineVariable(v, np.zeros((1, 2), dtype=np.float64), [JOINED, 2], [], [1, 2],
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
                vars_[vn].SetSelection([[], [n, 2]])
                e.Put(vars_[vn], np.arange(2 * n, dtype=np.float64).reshape(n, 2) + 1000 * k +
                      100 * s + 10 * blk, b.Mode.Sync)
        e.EndStep()
    e.Close()

# gone: not in the last step (ADIOS2 BP5 reports its first step's shape, {7, 2}); ends: in the
# last step (its shape, {3, 2}, in every step); late: from step 1 on, absent in step 2
PLAN = {"gone": [[3, 1, 3], [1], []], "ends": [[2], [5], [1, 2]], "late": [[], [4], [], [2, 1]]}
PLAN["gone"].append([])
write("BP5", "joined_bp5", PLAN)
write("BP4", "joined_bp4", {"grows": [[2], [5], [3]], "gap": [[3, 1], [], [2]]})
