"""The prelude of the scripts that read what one of our writers wrote through another project's
Python package (interop/check_wheel_localvals.py: the adios2 wheel; interop/openpmd_read_check.py:
openpmd-api). Their command line is SCRIPT WRITER OUTDIR."""

import importlib
import os
import subprocess
import sys


def prelude(*modules):
    """Imports `modules` (dotted names: "numpy", "adios2.bindings"), then runs WRITER OUTDIR
    (sys.argv[1:3]) into a created OUTDIR. Returns the modules, then OUTDIR. Exits 77 (ctest:
    skipped) when a module is not importable (CI depends on none of them), and with the writer's
    status when the writer fails."""
    try:
        mods = [importlib.import_module(m) for m in modules]
    except ImportError as e:
        print("skipped: %s" % e)
        sys.exit(77)
    writer, outdir = sys.argv[1], sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    rc = subprocess.call([writer, outdir])
    if rc:
        sys.exit(rc)
    return mods + [outdir]
