# Shared settings of the differential programs: the paths (environment BPLS, GPUBPLS, DIFF_OUT),
# the numeric dtypes they write, and libgpubp's Python package of this checkout on sys.path.
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
