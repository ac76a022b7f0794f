# Writes BP4 datasets whose variables have no min/max (StatsLevel=0) with the ADIOS2 2.12.1
# Python wheel (bindings API): usage: gen_nostats_bp4.py OUTDIR
#   nostats.bp: every numeric type as a global array (2 steps, 2 blocks a step), a 2-D array, a
#               global value over steps and one of a single step, a string value, a local
#               array (2 blocks), a local value, an array absent from step 1, an attribute
#   mixed.bp:   step 0 written with statistics (StatsLevel=1), step 1 appended without
import sys, os, shutil
import numpy as np
import adios2.bindings as b

OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)
A = b.ADIOS()
DTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
       np.float32, np.float64, np.complex64, np.complex128]


def mkio(name, stats):
    io = A.DeclareIO(name)
    io.SetEngine("BP4")
    io.SetParameter("StatsLevel", str(stats))
    return io


def op(io, name, mode=b.Mode.Write):
    p = os.path.join(OUT, name)
    if mode == b.Mode.Write and os.path.exists(p):
        shutil.rmtree(p)
    return io.Open(p, mode)


def values(dt, k, n, off):
    v = np.arange(n) * 3 - 4 + 10 * k + off
    if np.dtype(dt).kind == 'u':
        v = np.abs(v)
    if np.dtype(dt).kind == 'c':
        return (v + 1j * (v - 2)).astype(dt)
    if np.dtype(dt).kind == 'f':
        v = v * 0.25
    return v.astype(dt)


def define(io):
    vs = {}
    for dt in DTS:
        nm = "a_" + np.dtype(dt).name
        vs[nm] = (dt, io.DefineVariable(nm, np.zeros(3, dtype=dt), [6], [0], [3], False))
    vs["g2"] = io.DefineVariable("g2", np.zeros((2, 3), dtype=np.float64), [4, 3], [0, 0], [2, 3], False)
    vs["sc"] = io.DefineVariable("sc", np.zeros(1, dtype=np.int32))
    vs["str"] = io.DefineVariable("str", "")
    vs["loc"] = io.DefineVariable("loc", np.zeros(2, dtype=np.int16), [], [], [2], False)
    vs["lv"] = io.DefineVariable("lv", np.zeros(1, dtype=np.int64), [b.LocalValueDim], [], [], False)
    vs["early"] = io.DefineVariable("early", np.zeros(2, dtype=np.float32), [2], [0], [2], True)
    return vs


def put_step(e, vs, k):
    for dt in DTS:
        nm = "a_" + np.dtype(dt).name
        var = vs[nm][1]
        for blk in range(2):
            var.SetSelection([[3 * blk], [3]])
            e.Put(var, values(dt, k, 3, 3 * blk), b.Mode.Sync)
    for blk in range(2):
        vs["g2"].SetSelection([[2 * blk, 0], [2, 3]])
        e.Put(vs["g2"], (np.arange(6, dtype=np.float64).reshape(2, 3) + 6 * blk) * (k + 1) - 5, b.Mode.Sync)
    e.Put(vs["sc"], np.array([7 - 3 * k], dtype=np.int32), b.Mode.Sync)
    e.Put(vs["str"], "step %d" % k)
    for blk in range(2):
        e.Put(vs["loc"], np.array([blk - 5 * k, 100 + blk], dtype=np.int16), b.Mode.Sync)
        e.Put(vs["lv"], np.array([-1000 * (k + 1) + blk], dtype=np.int64), b.Mode.Sync)
    if k == 0:
        e.Put(vs["early"], np.array([1.5, -2.5], dtype=np.float32), b.Mode.Sync)


def nostats():
    io = mkio("nostats", 0)
    vs = define(io)
    one = io.DefineVariable("one", np.zeros(1, dtype=np.float64))
    io.DefineAttribute("note", "written with StatsLevel=0")
    e = op(io, "nostats.bp")
    for k in range(2):
        e.BeginStep()
        put_step(e, vs, k)
        if k == 0:
            e.Put(one, np.array([2.75]), b.Mode.Sync)
        e.EndStep()
    e.Close()


def mixed():
    for k, stats in ((0, 1), (1, 0)):
        io = mkio("mixed%d" % k, stats)
        vs = define(io)
        e = op(io, "mixed.bp", b.Mode.Write if k == 0 else b.Mode.Append)
        e.BeginStep()
        put_step(e, vs, k)
        e.EndStep()
        e.Close()


nostats()
mixed()
