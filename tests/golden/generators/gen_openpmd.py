# Writes an openPMD series (file-based, BP4) with openpmd-api 0.17.1 from PyPI (ADIOS2 backend):
# usage: gen_openpmd.py OUTDIR  -> OUTDIR/x_0.bp, OUTDIR/x_1.bp
# Two iterations; meshes E and B (x, y, z; 3-D float64, their positions long double), rho
# (float32); particles e with position (x, y, z), constant positionOffset, momentum (float32),
# weighting, constant charge and mass. The date is fixed so that the series is reproducible;
# everything else is what openpmd-api writes by default (statistics off: no min/max).
import sys
import numpy as np
import openpmd_api as io

series = io.Series(sys.argv[1] + "/x_%T.bp", io.Access.create,
                   '{"adios2":{"engine":{"type":"bp4"}}}')
series.set_date("2026-12-04 00:00:00 +0000")
for step in range(2):
    it = series.iterations[step]
    it.time = 0.5 * step
    it.dt = 0.5
    for name, unit in (("E", {io.Unit_Dimension.M: 1, io.Unit_Dimension.L: 1, io.Unit_Dimension.I: -1, io.Unit_Dimension.T: -3}),
                       ("B", {io.Unit_Dimension.M: 1, io.Unit_Dimension.I: -1, io.Unit_Dimension.T: -2})):
        m = it.meshes[name]
        m.grid_spacing = [1.0, 0.5, 0.25]
        m.grid_global_offset = [0.0, 0.0, 0.0]
        m.axis_labels = ["x", "y", "z"]
        m.unit_dimension = unit
        for k, comp in enumerate(["x", "y", "z"]):
            rc = m[comp]
            d = (np.arange(24, dtype=np.float64).reshape(2, 3, 4) - 7.5) * (k + 1) + 100 * step
            rc.reset_dataset(io.Dataset(d.dtype, d.shape))
            rc.position = np.array([0.5 * (k == 0), 0.5 * (k == 1), 0.5 * (k == 2)], dtype=np.longdouble)
            rc.store_chunk(d)
    rho = it.meshes["rho"]
    d = (np.arange(6, dtype=np.float32) * 0.5 + step).reshape(2, 3)
    rho.reset_dataset(io.Dataset(d.dtype, d.shape))
    rho.axis_labels = ["x", "y"]
    rho.grid_spacing = [1.0, 1.0]
    rho.grid_global_offset = [0.0, 0.0]
    rho.store_chunk(d)
    e = it.particles["e"]
    n = 5
    for k, c in enumerate(["x", "y", "z"]):
        pos = e["position"][c]
        pos.reset_dataset(io.Dataset(np.dtype("float64"), [n]))
        pos.store_chunk(np.linspace(0, 1, n) + k + step)
        off = e["positionOffset"][c]
        off.reset_dataset(io.Dataset(np.dtype("int32"), [n]))
        off.make_constant(0)
        mom = e["momentum"][c]
        mom.reset_dataset(io.Dataset(np.dtype("float32"), [n]))
        mom.store_chunk((np.arange(n, dtype=np.float32) - 2) * (k + 1) * 1e-3)
    w = e["weighting"][io.Record_Component.SCALAR]
    w.reset_dataset(io.Dataset(np.dtype("float64"), [n]))
    w.store_chunk(np.full(n, 2.5))
    for name, val in (("charge", -1.602176634e-19), ("mass", 9.1093837e-31)):
        r = e[name][io.Record_Component.SCALAR]
        r.reset_dataset(io.Dataset(np.dtype("float64"), [n]))
        r.make_constant(val)
    it.close()
series.close()
