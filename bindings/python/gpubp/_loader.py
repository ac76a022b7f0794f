"""Finding and loading the libgpubp shared library.

The package loads libgpubp.so with ctypes; ``pip install ./bindings/python`` builds the library
from source and puts it beside the Python files (``gpubp/libgpubp.so``). The first of these that
exists wins:

1. ``GPUBP_LIBRARY``: the path of the library file, or of a folder holding it;
2. the copy beside the package (``gpubp/libgpubp.so``), which the wheel carries;
3. the prefix the package was installed into (``pip install --prefix P`` next to
   ``cmake --install --prefix P``) and ``sys.prefix``: their ``lib``, ``lib64`` and multiarch
   ``lib`` folders;
4. the dynamic loader's search (``ctypes.util.find_library``: ``ldconfig`` cache,
   ``LD_LIBRARY_PATH``) and the standard folders (``/usr/local/lib`` ...);
5. a build tree of a source checkout (``build*/src`` at the top of the repository), so the
   package runs from ``bindings/python`` without being installed.
"""

import ctypes
import ctypes.util
import glob
import os
import sys
import sysconfig

_NAMES = ("libgpubp.so", "libgpubp.so.0", "libgpubp.dylib", "gpubp.dll")

_lib = None
_path = None


class LibraryNotFoundError(ImportError):
    """libgpubp's shared library could not be found or loaded."""


def _lib_dirs(prefix):
    dirs = [os.path.join(prefix, "lib"), os.path.join(prefix, "lib64")]
    multiarch = sysconfig.get_config_var("MULTIARCH")
    if multiarch:
        dirs.append(os.path.join(prefix, "lib", multiarch))
    return dirs


def _files_in(folder):
    return [os.path.join(folder, n) for n in _NAMES]


def candidates():
    """The places looked at, in order (paths or bare names for the dynamic loader)."""
    out = []
    env = os.environ.get("GPUBP_LIBRARY")
    if env:
        # An explicit choice is the only one: falling back elsewhere would hide a mistake.
        return _files_in(env) if os.path.isdir(env) else [env]
    here = os.path.dirname(os.path.abspath(__file__))
    out += _files_in(here)
    # site-packages is <prefix>/lib/pythonX.Y/site-packages (or lib64/...), three levels up.
    install_prefix = os.path.abspath(os.path.join(here, "..", "..", "..", ".."))
    for prefix in dict.fromkeys([install_prefix, sys.prefix, sys.base_prefix]):
        for d in _lib_dirs(prefix):
            out += _files_in(d)
    found = ctypes.util.find_library("gpubp")
    if found:
        out.append(found)
    for d in ("/usr/local/lib", "/usr/local/lib64", "/usr/lib", "/usr/lib64"):
        out += _files_in(d)
    # A source checkout: bindings/python/gpubp -> the repository root is three levels up.
    root = os.path.abspath(os.path.join(here, "..", "..", ".."))
    if os.path.isfile(os.path.join(root, "include", "gpubp.h")):
        builds = sorted(glob.glob(os.path.join(root, "build*", "src")),
                        key=lambda p: (os.path.basename(os.path.dirname(p)) != "build", p))
        for d in builds:
            out += _files_in(d)
    return out


def load():
    """Loads the library once and returns the ctypes.CDLL."""
    global _lib, _path
    if _lib is not None:
        return _lib
    tried = []
    for c in candidates():
        if os.sep in c and not os.path.exists(c):
            tried.append(c)
            continue
        try:
            lib = ctypes.CDLL(c)
        except OSError as e:
            tried.append("%s (%s)" % (c, e))
            continue
        if not hasattr(lib, "gpubp_version"):
            tried.append("%s (not libgpubp)" % c)
            continue
        _lib, _path = lib, c
        return lib
    env = os.environ.get("GPUBP_LIBRARY")
    hint = ("GPUBP_LIBRARY=%s does not name a loadable libgpubp" % env if env else
            "set GPUBP_LIBRARY to the path of libgpubp.so, or install libgpubp "
            "(cmake --install) into a standard prefix")
    failed = [t for t in tried if "(" in t]
    folders = list(dict.fromkeys(os.path.dirname(t) for t in tried if "(" not in t))
    raise LibraryNotFoundError("libgpubp shared library not found: %s. Looked in: %s%s"
                               % (hint, ", ".join(folders) or "-",
                                  "; failed to load: " + "; ".join(failed) if failed else ""))


def path():
    """The path or name the library was loaded from (loads it if needed)."""
    load()
    return _path
