# Differential run, random files written by the ADIOS2 Python wheel (adios2.bindings, engines BP4
# and BP5: global/local arrays and values, strings, joined arrays, changing shapes, holes, null
# operators, attributes, appends), read by ADIOS2 (random access: whole, box and block reads;
# streaming) and by libgpubp's Python package; prints each seed whose values differ.
#   DIFF_OUT=DIR python3 wheel_reads.py FIRST_SEED END_SEED
# Needs the adios2 wheel and numpy; each stage runs in its own process (ADIOS2 crashes on some
# of its own files). Not a test: the project's tests never need ADIOS2 (docs/interop.md).
import sys, os, shutil, random, subprocess, traceback
import numpy as np
import adios2.bindings as b
from diffenv import BPLS, DT, G, OUT, a2_whole_and_box, cut_boxes, rvals
import gpubp

A = b.ADIOS()
nio = [0]

def gen(path, seed):
    R = random.Random(seed); rng = np.random.default_rng(seed)
    eng = R.choice(["BP4", "BP5"])
    nio[0] += 1
    io = A.DeclareIO("io%d" % nio[0]); io.SetEngine(eng)
    if R.random() < 0.2: io.SetParameter("StatsLevel", "0")
    if eng == "BP5" and R.random() < 0.2: io.SetParameter("UseOneTimeAttributes", "false")
    nsteps = R.randint(1, 4)
    vars_ = []
    for i in range(R.randint(1, 6)):
        kind = R.choice(["gv", "ga", "ga", "la", "lv", "str", "ja", "gc"])
        dt = R.choice(DT)
        name = "v%d_%s" % (i, kind)
        if R.random() < 0.3: name = "grp/" + name
        if kind == "gv":
            v = io.DefineVariable(name, np.zeros(1, dtype=dt))
            vars_.append((kind, name, dt, v, None))
        elif kind == "str":
            v = io.DefineVariable(name)
            vars_.append((kind, name, dt, v, None))
        elif kind == "lv":
            v = io.DefineVariable(name, np.zeros(1, dtype=dt), [b.LocalValueDim], [], [], False)
            vars_.append((kind, name, dt, v, R.randint(1, 3)))
        elif kind == "ga":
            nd = R.randint(1, 3)
            shape = [R.randint(1, 7) for _ in range(nd)]
            # cut dim 0 into pieces; some may be skipped (holes)
            boxes = cut_boxes(R, shape)
            v = io.DefineVariable(name, np.zeros(boxes[0][1], dtype=dt), shape, boxes[0][0], boxes[0][1], False)
            if R.random() < 0.15:
                v.AddOperation(A.DefineOperator("null%d_%d" % (nio[0], i), "null", {}), {})
            vars_.append((kind, name, dt, v, (shape, boxes)))
        elif kind == "gc":
            nd = R.randint(1, 2)
            v = io.DefineVariable(name, np.zeros([1] * nd, dtype=dt), [1] * nd, [0] * nd, [1] * nd, False)
            vars_.append((kind, name, dt, v, nd))
        elif kind == "la":
            nd = R.randint(1, 2)
            counts = [[R.randint(0 if R.random() < 0.15 else 1, 5) for _ in range(nd)] for _ in range(R.randint(1, 3))]
            v = io.DefineVariable(name, np.zeros(max(1, int(np.prod(counts[0]))), dtype=dt), [], [], counts[0], False)
            vars_.append((kind, name, dt, v, counts))
        elif kind == "ja":
            cols = R.randint(1, 3)
            v = io.DefineVariable(name, np.zeros((1, cols), dtype=dt), [18446744073709551614, cols], [], [1, cols], False)
            vars_.append((kind, name, dt, v, cols))
    for j in range(R.randint(0, 3)):
        t = R.choice(["num", "arr", "str", "strs"])
        if t == "num": io.DefineAttribute("att%d" % j, rvals(R.choice(DT), [1], rng))
        elif t == "arr": io.DefineAttribute("att%d" % j, rvals(R.choice(DT), [R.randint(1, 4)], rng))
        elif t == "str": io.DefineAttribute("att%d" % j, "text%d" % R.randint(0, 99))
        else: io.DefineAttribute("att%d" % j, ["s%d" % k for k in range(R.randint(1, 3))])
    shutil.rmtree(path, ignore_errors=True)
    sessions = [nsteps] + ([R.randint(1, 2)] if R.random() < 0.25 else [])
    for si, ns in enumerate(sessions):
      e = io.Open(path, b.Mode.Write if si == 0 else b.Mode.Append)
      for s in range(ns):
          e.BeginStep()
          for kind, name, dt, v, extra in vars_:
              if s > 0 and R.random() < 0.25: continue
              if kind == "gv":
                  e.Put(v, rvals(dt, [1], rng), b.Mode.Sync)
              elif kind == "str":
                  e.Put(v, R.choice(["", "abc", "x" * R.randint(1, 40), "caf\u00e9"]))
              elif kind == "lv":
                  for _ in range(extra): e.Put(v, rvals(dt, [1], rng), b.Mode.Sync)
              elif kind == "ga":
                  shape, boxes = extra
                  for st, ct in boxes:
                      if R.random() < 0.15: continue  # hole
                      v.SetSelection([st, ct]); e.Put(v, rvals(dt, ct, rng), b.Mode.Sync)
              elif kind == "la":
                  for ct in extra:
                      v.SetSelection([[], ct])
                      a = rvals(dt, ct, rng)
                      e.Put(v, a if a.size else np.zeros(1, dtype=dt), b.Mode.Sync)
              elif kind == "gc":
                  shape = [R.randint(1, 5) for _ in range(extra)]
                  v.SetShape(shape)
                  h = R.randint(1, shape[0]) if shape[0] > 1 else 1
                  v.SetSelection([[0] * extra, [h] + shape[1:]]); e.Put(v, rvals(dt, [h] + shape[1:], rng), b.Mode.Sync)
                  if h < shape[0]:
                      v.SetSelection([[h] + [0] * (extra - 1), [shape[0] - h] + shape[1:]]); e.Put(v, rvals(dt, [shape[0] - h] + shape[1:], rng), b.Mode.Sync)
              elif kind == "ja":
                  for _ in range(R.randint(1, 3)):
                      n = R.randint(1, 3)
                      v.SetSelection([[], [n, extra]]); e.Put(v, rvals(dt, [n, extra], rng), b.Mode.Sync)
          e.EndStep()
      e.Close()
    return eng

def a2_read(path):
    """Every variable, every (relative) step: whole, each block, a random box."""
    io = A.DeclareIO("r%d" % (nio[0] + 1000)); nio[0] += 1
    e = io.Open(path, b.Mode.ReadRandomAccess)
    out = {}
    R = random.Random(path)
    vs = io.AvailableVariables()
    for name in sorted(vs):
      snap = dict(out)
      try:
        a2_read_var(io, e, vs, name, out, R)
      except Exception as ex:
        out.clear(); out.update(snap); print("a2 skip", name, repr(ex)[:120])
    e.Close()
    return out

def a2_read_var(io, e, vs, name, out, R):
    if True:
        t = vs[name]["Type"]
        var = io.InquireVariable(name)
        ns = var.Steps()
        if t == "string":
            for s in range(ns):
                var.SetStepSelection([s, 1])
                out[(name, s, "all")] = e.Get(var)
            return
        dt = np.dtype({"int8_t": np.int8, "int16_t": np.int16, "int32_t": np.int32, "int64_t": np.int64,
              "uint8_t": np.uint8, "uint16_t": np.uint16, "uint32_t": np.uint32, "uint64_t": np.uint64,
              "float": np.float32, "double": np.float64, "float complex": np.complex64,
              "double complex": np.complex128, "char": np.int8}[t])
        sv = var.ShapeID()
        for s in range(ns):
            var.SetStepSelection([s, 1])
            abs_step = var.StepsStart() if False else None
            shape = var.Shape()
            if sv == b.ShapeID.GlobalValue:
                a = np.zeros(1, dt); e.Get(var, a, b.Mode.Sync); out[(name, s, "all")] = a[0]
                continue
            if sv == b.ShapeID.GlobalArray:
                a2_whole_and_box(b, e, var, dt, shape, R, out, name, s)
            if sv in (b.ShapeID.LocalArray, b.ShapeID.GlobalArray):
                try:
                    bis = e.BlocksInfo(name, s)
                except Exception as ex:
                    bis = []
                for bi in bis:
                    bid = int(bi["BlockID"])
                    ct = [int(x) for x in bi["Count"].split(",") if x != ""]
                    a = np.zeros(ct, dt)
                    var.SetBlockSelection(bid)
                    if sv == b.ShapeID.GlobalArray:
                        pass
                    if a.size: e.Get(var, a, b.Mode.Sync)
                    out[(name, s, "block", bid)] = a
                    var = io.InquireVariable(name); var.SetStepSelection([s, 1])
            if sv == b.ShapeID.LocalValue:
                a = np.zeros(shape, dt)
                if a.size: e.Get(var, a, b.Mode.Sync)
                out[(name, s, "all")] = a

def gp_read(path, keys):
    out = {}
    with gpubp.Stream(path, "rra") as f:
        for k in keys:
            name, s, what = k[0], k[1], k[2]
            try:
                if what == "block":
                    out[k] = f.read(name, block=k[3], step=s)
                elif what == "all":
                    out[k] = f.read(name, step=s)
                else:
                    out[k] = f.read(name, start=k[3], count=k[4], step=s)
            except Exception as ex:
                out[k] = "ERR " + repr(ex)
        names = sorted(f.available_variables())
    return out, names

def same(a, b_):
    if isinstance(a, (str, list)) or isinstance(b_, (str, list)): return type(a) == type(b_) and a == b_
    a = np.asarray(a); b_ = np.asarray(b_)
    return a.shape == b_.shape and a.dtype == b_.dtype and a.tobytes() == b_.tobytes()


def dtype_of(t):
    return np.dtype({"int8_t": np.int8, "int16_t": np.int16, "int32_t": np.int32, "int64_t": np.int64,
              "uint8_t": np.uint8, "uint16_t": np.uint16, "uint32_t": np.uint32, "uint64_t": np.uint64,
              "float": np.float32, "double": np.float64, "float complex": np.complex64,
              "double complex": np.complex128, "char": np.int8}[t])

def a2_stream(path):
    io = A.DeclareIO("s%d" % (nio[0] + 5000)); nio[0] += 1
    e = io.Open(path, b.Mode.Read)
    out = {}
    while e.BeginStep() == b.StepStatus.OK:
        st = e.CurrentStep()
        vs = io.AvailableVariables()
        for name in sorted(vs):
            t = vs[name]["Type"]
            var = io.InquireVariable(name)
            if t == "string":
                out[("S", st, name)] = e.Get(var); continue
            dt = dtype_of(t); sv = var.ShapeID()
            if sv == b.ShapeID.GlobalValue:
                a = np.zeros(1, dt); e.Get(var, a, b.Mode.Sync); out[("S", st, name)] = a[0]; continue
            if sv in (b.ShapeID.GlobalArray, b.ShapeID.LocalValue):
                shape = var.Shape(); a = np.zeros(shape, dt)
                if sv == b.ShapeID.GlobalArray: var.SetSelection([[0] * len(shape), list(shape)])
                if a.size: e.Get(var, a, b.Mode.Sync)
                out[("S", st, name)] = a
            if sv == b.ShapeID.LocalArray:
                for bi in e.BlocksInfo(name, st):
                    bid = int(bi["BlockID"]); ct = [int(x) for x in bi["Count"].split(",") if x != ""]
                    a = np.zeros(ct, dt); var.SetBlockSelection(bid)
                    if a.size: e.Get(var, a, b.Mode.Sync)
                    out[("S", st, name, bid)] = a
        e.EndStep()
    e.Close()
    return out

def gp_stream(path, keys):
    out = {}
    want = {}
    for k in keys: want.setdefault(k[1], []).append(k)
    with gpubp.Stream(path, "r") as f:
        for _ in f.steps():
            st = f.current_step()
            for k in want.get(st, []):
                try:
                    out[k] = f.read(k[2], block=k[3]) if len(k) > 3 else f.read(k[2])
                except Exception as ex:
                    out[k] = "ERR " + repr(ex)
    for k in keys: out.setdefault(k, "MISSING")
    return out
import pickle
def one(stage, seed):
    os.makedirs(OUT, exist_ok=True)
    p = os.path.join(OUT, "c%d.bp" % seed)
    if stage == "gen":
        print(gen(p, seed))
    elif stage == "a2":
        r = a2_read(p)
        try:
            r.update(a2_stream(p))
        except Exception as ex:
            print("a2 stream failed", repr(ex)[:200])
        pickle.dump(r, open(p + ".a2.pkl", "wb"))
    else:
        ref = pickle.load(open(p + ".a2.pkl", "rb"))
        got, names = gp_read(p, [k for k in ref if k[0] != "S"])
        got.update(gp_stream(p, [k for k in ref if k[0] == "S"]))
        diffs = [k for k in ref if not same(ref[k], got[k])]
        if os.environ.get("NOJA"): diffs = [k for k in diffs if not k[0].endswith("_ja")]
        if diffs:
            print("seed %d: %d differ, e.g. %r: adios2 %r gpubp %r" % (seed, len(diffs), diffs[0], ref[diffs[0]], got[diffs[0]]))
            sys.exit(1)

def main():
    n0, n1 = int(sys.argv[1]), int(sys.argv[2])
    bad = 0
    for seed in range(n0, n1):
        st = []
        for stage in ("gen", "a2", "gp"):
            r = subprocess.run([sys.executable, __file__, "one", stage, str(seed)], capture_output=True, text=True, timeout=120)
            st.append(r)
            if r.returncode: break
        eng = st[0].stdout.strip()
        if r.returncode:
            if stage == "gp": bad += 1
            print("seed %d %s: stage %s rc %d: %s" % (seed, eng, stage, r.returncode, (r.stdout + r.stderr).strip()[-600:]), flush=True)
    print("done %d..%d, %d bad" % (n0, n1, bad))

if __name__ == "__main__":
    if sys.argv[1] == "one": one(sys.argv[2], int(sys.argv[3]))
    else: main()
