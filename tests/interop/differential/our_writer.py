# Differential run, random files written by libgpubp (Python package; subfiles, every codec,
# shuffle and level, split puts), checked by ADIOS2's bpls against gpubpls (-la, -d, -D, -laD,
# -dD, -lA, byte for byte) and read back by libgpubp against the values written.
#   BPLS=/path/to/bpls DIFF_OUT=DIR python3 our_writer.py FIRST_SEED END_SEED
import sys, os, shutil, random, subprocess
import numpy as np
from diffenv import BPLS, DT, G, OUT
import gpubp

def rvals(dt, shape, rng, smooth):
    n = int(np.prod(shape)) if len(shape) else 1
    k = np.dtype(dt).kind
    base = np.sin(np.arange(n) * 0.01) * 500 if smooth else rng.standard_normal(n) * 300
    if k == 'c': a = (base + 1j * base[::-1]).astype(dt)
    elif k == 'f': a = base.astype(dt)
    else:
        info = np.iinfo(dt); a = np.clip(np.round(base), max(info.min, -1000), min(info.max, 1000)).astype(dt)
    return a.reshape(shape) if len(shape) else a

def gen(path, seed):
    R = random.Random(seed); rng = np.random.default_rng(seed)
    params = {}
    if R.random() < 0.5: params["subfiles"] = R.randint(1, 4)
    comp = R.choice(["none", "none", "blosclz", "lz4", "lz4hc", "zlib", "zstd"])
    if comp != "none":
        params["compress"] = comp
        params["compress_shuffle"] = R.choice(["none", "byte", "bit"])
        params["compress_level"] = R.randint(0, 9)
    if R.random() < 0.2: params["split_mib"] = 1
    nsteps = R.randint(1, 4)
    vars_ = []
    for i in range(R.randint(1, 6)):
        kind = R.choice(["gv", "ga", "ga", "la", "lv", "str", "gc"])
        dt = R.choice(DT); name = ("grp/" if R.random() < 0.3 else "") + "v%d_%s" % (i, kind)
        if kind == "ga":
            nd = R.randint(1, 3)
            big = R.random() < 0.15
            shape = [R.randint(1, 7) for _ in range(nd)]
            if big: shape[0] = R.randint(20000, 200000)
            cuts = sorted(R.sample(range(1, shape[0]), min(R.randint(0, 2), shape[0] - 1))) if shape[0] > 1 else []
            edges = [0] + cuts + [shape[0]]
            boxes = [([a] + [0] * (nd - 1), [c - a] + shape[1:]) for a, c in zip(edges, edges[1:])]
            vars_.append((kind, name, dt, (shape, boxes)))
        elif kind == "la":
            nd = R.randint(1, 2)
            vars_.append((kind, name, dt, [[R.randint(1, 6) for _ in range(nd)] for _ in range(R.randint(1, 3))]))
        elif kind == "lv":
            vars_.append((kind, name, dt, R.randint(1, 3)))
        else:
            vars_.append((kind, name, dt, R.randint(1, 2)))
    truth = {}
    shutil.rmtree(path, ignore_errors=True)
    with gpubp.Stream(path, "w", params) as f:
        for s in range(nsteps):
            f.begin_step()
            for kind, name, dt, extra in vars_:
                if s > 0 and R.random() < 0.2: continue
                smooth = R.random() < 0.6
                if kind == "gv":
                    a = rvals(dt, [1], rng, smooth)[0]; f.write(name, a); truth[(name, s)] = a
                elif kind == "str":
                    t = R.choice(["", "abc", "x" * R.randint(1, 30), "caf\u00e9"]); f.write(name, t); truth[(name, s)] = t
                elif kind == "lv":
                    vals = [rvals(dt, [1], rng, smooth)[0] for _ in range(extra)]
                    for x in vals: f.write(name, x, local_value=True)
                    truth[(name, s)] = np.array(vals, dtype=dt)
                elif kind == "ga":
                    shape, boxes = extra
                    full = np.zeros(shape, dtype=dt)
                    for st, ct in boxes:
                        a = rvals(dt, ct, rng, smooth)
                        f.write(name, a, start=st, count=ct, shape=shape)
                        full[tuple(slice(x, x + c) for x, c in zip(st, ct))] = a
                    truth[(name, s)] = full
                elif kind == "gc":
                    shape = [R.randint(1, 6) for _ in range(extra)]
                    a = rvals(dt, shape, rng, smooth); f.write(name, a, start=[0] * extra, count=shape, shape=shape)
                    truth[(name, s)] = a
                elif kind == "la":
                    blocks = [rvals(dt, ct, rng, smooth) for ct in extra]
                    for a in blocks: f.write(name, a, local=True)
                    truth[(name, s)] = blocks
            if R.random() < 0.3: f.write_attribute("att%d" % s, R.choice([1.5, "text", [1, 2, 3]]))
            f.end_step()
    return params, truth

def main():
    n0, n1 = int(sys.argv[1]), int(sys.argv[2])
    for seed in range(n0, n1):
        os.makedirs(OUT, exist_ok=True)
        p = os.path.join(OUT, "w%d.bp" % seed)
        try:
            params, truth = gen(p, seed)
        except Exception as ex:
            print("seed %d: gen failed %r" % (seed, ex), flush=True); continue
        with gpubp.Stream(p, "rra") as f:
            av = f.available_variables()
            steps = {}
            for (name, s), want in sorted(truth.items(), key=lambda kv: (kv[0][0], kv[0][1])):
                k = steps.setdefault(name, 0); steps[name] += 1
                if isinstance(want, list):
                    got = [f.read(name, block=b, step=k) for b in range(len(want))]
                    ok = all(g.dtype == w.dtype and np.array_equal(g, w) for g, w in zip(got, want))
                else:
                    got = f.read(name, step=k)
                    ok = (got == want) if isinstance(want, str) else (np.asarray(got).dtype == np.asarray(want).dtype and np.array_equal(got, want))
                if not ok: print("seed %d %r: %s step %d read back differs" % (seed, params, name, s), flush=True)
        d, n = os.path.dirname(p), os.path.basename(p)
        for o in ["-la", "-d", "-D", "-laD", "-dD", "-lA"]:
            r1 = subprocess.run([BPLS, o, n], cwd=d, capture_output=True)
            r2 = subprocess.run([G, o, n], cwd=d, capture_output=True)
            if r1.stdout != r2.stdout or r1.returncode != r2.returncode:
                print("seed %d %r: %s differs (rc %d/%d)" % (seed, params, o, r1.returncode, r2.returncode), flush=True)
            if b"caught an exception" in r1.stdout or r1.returncode:
                print("seed %d %r: bpls %s failed: %s" % (seed, params, o, r1.stdout[-300:]), flush=True)
    print("done", n0, n1)

if __name__ == "__main__":
    main()
