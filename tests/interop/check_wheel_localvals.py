"""ADIOS2's own Python bindings (the adios2 wheel) read what gpubp_write_localvals writes, value
for value: local values (numbers and strings, block counts changing between steps), long double
arrays, values and attributes, single strings and one-element string arrays.
Usage: check_wheel_localvals.py WRITER OUTDIR. Exits 77 (skipped) when adios2 is not importable:
CI does not depend on the wheel."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from run_writer import prelude  # noqa: E402

np, ab, outdir = prelude("numpy", "adios2.bindings")
ad = ab.ADIOS()
bad = []


def check(what, got, want):
    if not (np.array_equal(np.asarray(got), np.asarray(want)) if not isinstance(want, str)
            else got == want):
        bad.append("%s: got %r, want %r" % (what, got, want))


def open_ra(name):
    io = ad.DeclareIO(name)
    io.SetEngine("BP4")
    return io, io.Open("%s/%s" % (outdir, name), ab.Mode.ReadRandomAccess)


io, e = open_ra("localvals.bp")
v = io.InquireVariable("lv_i32")
check("lv_i32 shape", v.Shape(), [4])
for s in range(3):
    v.SetStepSelection([s, 1])
    v.SetSelection([[0], [4]])  # a box replaces the block selection of the step before
    a = np.zeros(4, np.int32)
    e.Get(v, a, ab.Mode.Sync)
    check("lv_i32 step %d" % s, a, [100 * (s + 1) + 7 * b - 13 for b in range(4)])
    for b in range(4):
        v.SetBlockSelection(b)
        one = np.zeros(1, np.int32)
        e.Get(v, one, ab.Mode.Sync)
        check("lv_i32 step %d block %d" % (s, b), one, [100 * (s + 1) + 7 * b - 13])
vd = io.InquireVariable("lv_f64")
vd.SetStepSelection([0, 3])
d = np.zeros(12)
e.Get(vd, d, ab.Mode.Sync)
check("lv_f64", d, [0.5 * s - 1.25 * b + 1e-3 for s in range(3) for b in range(4)])
vs = io.InquireVariable("lv_str")
check("lv_str type", vs.Type(), "string")
vp = io.InquireVariable("lv_sparse")
check("lv_sparse steps", vp.Steps(), 2)
vp.SetStepSelection([1, 1])
p = np.zeros(2, np.int64)
e.Get(vp, p, ab.Mode.Sync)
check("lv_sparse dataset step 2", p, [-1000000000000 * (b + 1) + 2 for b in range(2)])
e.Close()

io, e = open_ra("longdouble.bp")
vars_ = io.AvailableVariables()
check("ld_arr type", vars_["ld_arr"]["Type"], "long double")
check("ld_arr max", vars_["ld_arr"]["Max"], "inf")
check("ld_arr min", vars_["ld_arr"]["Min"], "-2.500000e+00")
attrs = io.AvailableAttributes()
check("ld_attr", attrs["ld_attr"]["Value"], "1.000000e-01")
check("ld_attr_arr", attrs["ld_attr_arr"]["Value"], "{ 0, 0.5, 0.333333 }")
check("position", attrs["ld_arr/position"]["Type"], "long double")
e.Close()

io, e = open_ra("strattrs.bp")
for name, single, value in [("single", True, ["one string"]), ("array1", False, ["only element"]),
                            ("array2", False, ["first", "second"]),
                            ("x/unitSI_names", False, ["only element"])]:
    at = io.InquireAttribute(name)
    check(name + " single", at.SingleValue(), single)
    check(name + " value", at.DataString(), value)
e.Close()

for b in bad:
    print("DIFF " + b)
print("%d differences" % len(bad))
sys.exit(1 if bad else 0)
