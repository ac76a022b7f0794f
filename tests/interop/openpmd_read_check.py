"""openpmd-api reads the openPMD series that gpubp_write_openpmd writes through libgpubp's C API
(x_%T.bp, BP4): opened read_only, its iterations, meshes, particles, every record component's
attributes (long double positions, string arrays) and every array value as written.
Usage: openpmd_read_check.py WRITER OUTDIR. Exits 77 (skipped) when openpmd_api is not
importable: CI does not depend on it."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from run_writer import prelude  # noqa: E402

np, io, outdir = prelude("numpy", "openpmd_api")
bad = []


def check(what, got, want):
    if isinstance(want, str):
        ok = got == want
    else:
        got, want = np.asarray(got), np.asarray(want)
        ok = got.shape == want.shape and np.array_equal(got, want)
    if not ok:
        bad.append("%s: got %r, want %r" % (what, got, want))


s = io.Series(os.path.join(outdir, "x_%T.bp"), io.Access.read_only)
check("software", s.software, "libgpubp")
check("openPMD", s.openPMD, "1.1.0")
check("iterationEncoding", str(s.iteration_encoding), str(io.Iteration_Encoding.file_based))
check("iterations", sorted(s.iterations), [0, 1])
for step in (0, 1):
    it = s.iterations[step]
    check("time %d" % step, it.time, 0.5 * step)
    check("dt %d" % step, it.dt, 0.5)
    check("meshes %d" % step, sorted(it.meshes), ["B", "E", "rho"])
    check("particles %d" % step, sorted(it.particles), ["e"])
    loads = []
    for name in ("E", "B"):
        m = it.meshes[name]
        check(name + " axis_labels", list(m.axis_labels), ["x", "y", "z"])
        check(name + " grid_spacing", list(m.grid_spacing), [1.0, 0.5, 0.25])
        check(name + " geometry", str(m.geometry), str(io.Geometry.cartesian))
        for k, c in enumerate("xyz"):
            rc_ = m[c]
            # openpmd-api's Python layer gives positions as float (its own long double ones too)
            check("%s/%s position" % (name, c), list(rc_.position), [0.5 * (k == j) for j in range(3)])
            check("%s/%s shape" % (name, c), list(rc_.shape), [2, 3, 4])
            want = (np.arange(24, dtype=np.float64).reshape(2, 3, 4) - 7.5) * (k + 1) + 100 * step
            loads.append(("%s/%s" % (name, c), rc_.load_chunk(), want))
    rho = it.meshes["rho"]
    rc_ = rho[io.Mesh_Record_Component.SCALAR]
    check("rho axis_labels", list(rho.axis_labels), ["x", "y"])
    loads.append(("rho", rc_.load_chunk(), (np.arange(6, dtype=np.float32) * 0.5 + step).reshape(2, 3)))
    e = it.particles["e"]
    check("e records", sorted(e), ["charge", "mass", "momentum", "position", "positionOffset", "weighting"])
    for k, c in enumerate("xyz"):
        loads.append(("position/" + c, e["position"][c].load_chunk(), np.linspace(0, 1, 5) + k + step))
        loads.append(("momentum/" + c, e["momentum"][c].load_chunk(),
                      (np.arange(5, dtype=np.float32) - 2) * (k + 1) * 1e-3))
        check("positionOffset/%s constant" % c, e["positionOffset"][c].constant, True)
    loads.append(("weighting", e["weighting"][io.Record_Component.SCALAR].load_chunk(), np.full(5, 2.5)))
    for name, val in (("charge", -1.602176634e-19), ("mass", 9.1093837e-31)):
        r = e[name][io.Record_Component.SCALAR]
        check(name + " constant", r.constant, True)
        check(name + " shape", list(r.shape), [5])
        check(name + " unit_dimension", list(e[name].unit_dimension), [0.0] * 7)
    s.flush()
    for what, got, want in loads:
        check("iteration %d %s" % (step, what), got, want)
        check("iteration %d %s dtype" % (step, what), str(got.dtype), str(want.dtype))
    it.close()
s.close()
for b in bad:
    print("DIFF", b)
print("openpmd-api %s read %s: %s" % (io.__version__, outdir, "%d differences" % len(bad) if bad else "every attribute and array as written"))
sys.exit(1 if bad else 0)
