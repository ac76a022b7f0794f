# Shared settings of the differential programs: the paths (environment BPLS, GPUBPLS, DIFF_OUT),
# the numeric dtypes they write, random values of them (rvals), and libgpubp's Python package of this checkout on sys.path.
import os
import sys

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
BPLS = os.environ.get("BPLS", "bpls")  # ADIOS2's bpls (an oracle built outside the project)
G = os.environ.get("GPUBPLS", os.path.join(ROOT, "build", "tools", "gpubpls"))
OUT = os.environ.get("DIFF_OUT", "/tmp/gpubp-differential")
DT = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
      np.float32, np.float64, np.complex64, np.complex128]
sys.path.insert(0, os.path.join(ROOT, "bindings", "python"))


def rvals(dt, shape, rng):
    """Random values of dtype dt and shape (a list; [] for one value) from numpy Generator rng."""
    n = int(np.prod(shape)) if len(shape) else 1
    k = np.dtype(dt).kind
    if k == 'c':
        a = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dt)
    elif k == 'f':
        a = (rng.standard_normal(n) * 100).astype(dt)
    else:
        info = np.iinfo(dt)
        a = rng.integers(max(info.min, -1000), min(info.max, 1000), n, endpoint=True).astype(dt)
    return a.reshape(shape) if len(shape) else a


def cut_boxes(R, shape):
    """Blocks covering a global array of shape (a list): dimension 0 cut in up to 3 pieces, some
    pieces also cut in two along dimension 1; [(start, count), ...]. R: a random.Random."""
    nd = len(shape)
    cuts = sorted(R.sample(range(1, shape[0]), min(R.randint(0, 2), shape[0] - 1))) \
        if shape[0] > 1 else []
    edges = [0] + cuts + [shape[0]]
    boxes = []
    for a, c in zip(edges, edges[1:]):
        if nd > 1 and shape[1] > 1 and R.random() < 0.3:
            m = R.randint(1, shape[1] - 1)
            boxes.append(([a, 0] + [0] * (nd - 2), [c - a, m] + shape[2:]))
            boxes.append(([a, m] + [0] * (nd - 2), [c - a, shape[1] - m] + shape[2:]))
        else:
            boxes.append(([a] + [0] * (nd - 1), [c - a] + shape[1:]))
    return boxes


def a2_whole_and_box(b, e, var, dt, shape, R, out, name, s):
    """ADIOS2 (low-level bindings b, engine e) reads global array var whole and a random box of
    it into out[(name, s, "all")] and out[(name, s, "box", start, count)]."""
    a = np.zeros(shape, dt)
    var.SetSelection([[0] * len(shape), list(shape)])
    if a.size: e.Get(var, a, b.Mode.Sync)
    out[(name, s, "all")] = a
    st = [R.randint(0, max(0, d - 1)) for d in shape]
    ct = [R.randint(1, d - x) if d - x > 0 else 0 for d, x in zip(shape, st)]
    a = np.zeros(ct, dt)
    var.SetSelection([st, ct])
    if a.size: e.Get(var, a, b.Mode.Sync)
    out[(name, s, "box", tuple(st), tuple(ct))] = a
