"""Issue 21 through the Python package: ADIOS2's BP5 datasets (tests/golden, written by ADIOS2
itself) read through gpubp.Stream with the values ADIOS2's bpls printed for them (NAME.bp.d.txt
beside each dataset), in random access and step by step; the BP5 files of the corpus read exactly
as their BP4 twins (the same generator, tests/golden/BP4); the 4-writer, sub-filed datasets of
bp5/mpi; attributes of every type; the GPU example's BP5 file into (simulated) device memory is in
test_gpu_sequences.py."""

import os
import re

import numpy as np
import pytest

import gpubp

GOLDEN = os.environ.get("GPUBP_GOLDEN_DIR") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "golden")

# bpls -d's type names of the real numeric types (complex, long double, char (printed as
# characters) and strings are left to the C tests, which parse bpls's formatting of them)
NUMERIC = {"int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t",
           "uint64_t", "float", "double", "signed char", "unsigned char", "short",
           "unsigned short", "int", "unsigned int", "long long int", "unsigned long long int"}
HEADER = re.compile(r"^  (\S.*?)\s{2,}(\S+)\s+(?:(\d+)\*)?(scalar|\{[^}]*\})\s*$")


def parse_d(path):
    """bpls -d's text: {name: (type, steps, shape or None for a scalar, [value tokens])} for the
    variables it prints in one piece (global arrays of a fixed shape and single values)."""
    out, cur = {}, None
    with open(path, encoding="latin-1") as fh:  # char values are printed as raw bytes
        for line in fh:
            line = line.rstrip("\n")
            m = HEADER.match(line)
            if m:
                typ, name, steps, dims = m.groups()
                cur = None
                if typ not in NUMERIC or "__" in dims:
                    continue
                shape = None if dims == "scalar" else \
                    tuple(int(x) for x in dims.strip("{}").split(","))
                cur = out[name] = (typ, int(steps or 1), shape, [])
                continue
            if not line.strip():
                cur = None
                continue
            if cur is not None:
                vals = re.sub(r"^\s*\([\d,\s]*\)\s*", "", line)
                cur[3].extend(vals.split())
    return out


def datasets(*subs):
    found = []
    for sub in subs:
        d = os.path.join(GOLDEN, sub)
        for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            p = os.path.join(d, name)
            if name.endswith(".bp") and os.path.isfile(os.path.join(p, "mmd.0")):
                found.append(p)
    return found


BP5_SETS = datasets("BP5", "gpu/BP5", "codecs/BP5", "bp5/mpi", "bp5/wheel", "bp5/wheel2",
                    "bp5/oracle")
HAVE_BZIP2 = bool(gpubp.lowlevel.gpubp_features() & 64)  # GPUBP_FEATURE_BZIP2
UNREADABLE = {
    # bzip2 blocks in a build without libbz2 (ERR_CODEC) and a variable whose data ADIOS2 did not
    # write (StoreStatsOnly: ERR_NOT_FOUND); both checked below
    "compressed.bp": set() if HAVE_BZIP2 else {"bz", "lbz"}, "statsonly.bp": {"x"},
}


def check_values(path, typ, got, tokens, name):
    got = np.asarray(got).ravel()
    assert got.size == len(tokens), "%s %s: %d values, bpls printed %d" % (path, name, got.size,
                                                                           len(tokens))
    if typ in ("float", "double"):
        want = np.array([float(t) for t in tokens])
        # bpls prints %g (6 significant digits): within that precision
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=6e-6, atol=0,
                                   err_msg="%s %s" % (path, name))
    else:
        assert got.tolist() == [int(t) for t in tokens], "%s %s" % (path, name)


def test_bp5_golden_sets_found():
    assert len(BP5_SETS) >= 6 + 1 + 15 + 6 + 10 + 3 + 3


@pytest.mark.parametrize("path", BP5_SETS, ids=lambda p: os.path.relpath(p, GOLDEN))
def test_bp5_values_as_bpls_random_access(path):
    dump = parse_d(path + ".d.txt") if os.path.exists(path + ".d.txt") else {}
    skip = UNREADABLE.get(os.path.basename(path), set())
    checked = 0
    with gpubp.Stream(path, "rra") as s:
        info = s.available_variables()
        for name, (typ, steps, shape, tokens) in dump.items():
            if name in skip:
                continue
            assert name in info, "%s: %s not presented" % (path, name)
            assert info[name]["steps"] == steps, "%s %s" % (path, name)
            if shape is not None:
                assert tuple(info[name]["shape"]) == shape, "%s %s" % (path, name)
            if info[name]["kind"] in ("local_array",):
                continue
            got = s.read(name, step=0, step_count=steps)
            check_values(path, typ, got, tokens, name)
            checked += 1
        for name in skip & set(info):
            with pytest.raises(gpubp.Error):
                s.read(name)
    if dump:
        assert checked or skip, "%s: nothing compared" % path


@pytest.mark.parametrize("path", BP5_SETS, ids=lambda p: os.path.relpath(p, GOLDEN))
def test_bp5_step_mode_equals_random_access(path):
    """Step by step ("r"), every variable of every step reads what random access reads for that
    step of the variable (relative steps: the k-th step the variable appears in)."""
    skip = UNREADABLE.get(os.path.basename(path), set())
    with gpubp.Stream(path, "rra") as ra:
        seen = {}
        nsteps = 0
        with gpubp.Stream(path, "r") as s:
            for _ in s.steps():
                nsteps += 1
                for name, inf in s.available_variables().items():
                    if name in skip or inf["kind"] == "local_array" or inf["type"] == "string":
                        continue
                    k = seen.get(name, 0)
                    seen[name] = k + 1
                    got = s.read(name)
                    if inf["kind"] == "joined_array":
                        # block by block: random access presents the last step's joined shape,
                        # which an append with fewer writers makes smaller than earlier steps'
                        nb = gpubp.lowlevel.gpubp_variable_blocks(s._inquire(name), 0)
                        for b in range(nb):
                            np.testing.assert_array_equal(
                                s.read(name, block=b), ra.read(name, block=b, step=k),
                                err_msg="%s %s step %d block %d" % (path, name, k, b))
                        continue
                    want = ra.read(name, step=k, count=inf["shape"] or None) \
                        if inf["kind"] == "global_array" else ra.read(name, step=k)
                    np.testing.assert_array_equal(got, want, err_msg="%s %s step %d"
                                                  % (path, name, k))
        assert nsteps >= 1
        info = ra.available_variables()
        for name, k in seen.items():
            assert info[name]["steps"] == k, "%s %s: %d steps in step mode" % (path, name, k)


TWINS = [os.path.basename(p) for p in datasets("BP5") if
         os.path.isdir(os.path.join(GOLDEN, "BP4", os.path.basename(p)))]


def read_all(path, mode):
    """Every variable's every step (block by block for local arrays) and every attribute."""
    out = {}
    with gpubp.Stream(path, mode) as s:
        if mode == "rra":
            for name, inf in s.available_variables().items():
                for k in range(inf["steps"]):
                    out[(name, k)] = read_one(s, name, inf, k)
        else:
            for _ in s.steps():
                for name, inf in s.available_variables().items():
                    out[(name, s.current_step())] = read_one(s, name, inf, None)
        for name in s.available_attributes():
            out[("attr", name)] = s.read_attribute(name)
    return out


def read_one(s, name, inf, k):
    if inf["kind"] == "local_array":
        nb = gpubp.lowlevel.gpubp_variable_blocks(s._inquire(name), k or 0)
        return [s.read(name, block=b, step=k) for b in range(nb)]
    if inf["kind"] == "global_array":
        if k is None:
            return s.read(name)
        shape = gpubp.lowlevel.gpubp_variable_shape(
            select_step(s, name, k), gpubp.lowlevel.MemorySpace.HOST)
        return s.read(name, step=k, count=shape)
    return s.read(name, step=k)


def select_step(s, name, k):
    v = s._inquire(name)
    gpubp.lowlevel.gpubp_set_step_selection(v, k, 1)
    return v


def same(a, b):
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, str):
        return a == b
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)


@pytest.mark.parametrize("mode", ["rra", "r"])
@pytest.mark.parametrize("name", TWINS)
def test_bp5_reads_as_its_bp4_twin(name, mode):
    """make_corpus.c wrote the same content with ADIOS2's BP4 and BP5 engines: every value, every
    attribute reads the same through the package."""
    bp4 = read_all(os.path.join(GOLDEN, "BP4", name), mode)
    bp5 = read_all(os.path.join(GOLDEN, "BP5", name), mode)
    assert sorted(bp4, key=str) == sorted(bp5, key=str)
    for key in bp4:
        assert same(bp4[key], bp5[key]), "%s %s: %r vs %r" % (name, key, bp4[key], bp5[key])


def test_bp5_twins_found():
    assert len(TWINS) == 6


def test_bp5_attributes_of_every_type():
    """bp5/wheel/attrs.bp: ADIOS2's wheel wrote attributes of every type, arrays, string arrays,
    variable attributes (bpls -la beside it)."""
    path = os.path.join(GOLDEN, "bp5", "wheel", "attrs.bp")
    want = {}
    with open(path + ".la.txt", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            m = re.match(r"^  (\S.*?)\s{2,}(\S+)\s+attr\s+= (.*)$", line.rstrip("\n"))
            if m and "\ufffd" not in line:  # char attributes print as raw bytes
                want[m.group(2)] = (m.group(1), m.group(3))
    assert len(want) >= 10
    with gpubp.Stream(path, "rra") as s:
        attrs = s.available_attributes()
        assert set(want) <= set(attrs)
        for name, (typ, text) in want.items():
            got = s.read_attribute(name)
            if typ == "string":
                if text.startswith("{"):
                    assert got == re.findall(r'"((?:[^"\\]|\\.)*)"', text), name
                else:
                    assert got == text.strip('"'), name
            elif typ in NUMERIC or typ in ("float", "double"):
                toks = text.strip("{}").split(", ")
                vals = np.atleast_1d(got).ravel()
                assert vals.size == len(toks), name
                if typ in ("float", "double"):
                    np.testing.assert_allclose(vals.astype(np.float64),
                                               [float(t) for t in toks], rtol=6e-6)
                else:
                    assert vals.tolist() == [int(t) for t in toks], name


def test_bp5_struct_variables():
    """structs/structs.bp: ADIOS2's BP5 struct variables (DefineStruct) read as NumPy structured
    arrays with the writer's field names, offsets and record size; the values are the generator's
    (tests/golden/generators/make_structs.cpp), computed here."""
    path = os.path.join(GOLDEN, "structs", "structs.bp")
    with gpubp.Stream(path, "rra") as s:
        info = s.available_variables()
        assert info["particles"]["type"] == "struct"
        dt = s.dtype("particles")
        assert dt.names == ("a", "b", "c") and dt.itemsize == 32
        assert dt.fields["b"][0] == np.dtype((np.int32, (4,))) and dt.fields["c"][1] == 24
        p = s.read("particles", step=2)
        assert p.shape == (10, 2) and p.dtype == dt
        gg = np.arange(20).reshape(10, 2)  # rows 0-4: block 0, 5-9: block 1 (k = 2 * row + col)
        assert p["a"].tolist() == (gg - 6).tolist()
        assert p["b"].tolist() == (2000 + 10 * gg[..., None] + np.arange(4)).tolist()
        assert p["c"].tolist() == (gg * 0.25 - 2).tolist()
        box = s.read("particles", start=(3, 1), count=(5, 1), step=0)
        assert box["c"].ravel().tolist() == [(2 * r + 1) * 0.25 for r in range(3, 8)]
        c = s.read("cplx", step=1)
        assert c["z"].ravel().tolist() == [complex(k + 0.5, -1.25) for k in range(4)]
        assert c["m"].reshape(4, 3).tolist() == [[201 + 10 * j + k for j in range(3)]
                                                for k in range(4)]
        small = s.read("local_small", step=2, block=1)
        assert small["u"].tolist() == [65535 - 200 - 10 - k for k in range(2)]
        assert bytes(small["ch"].astype(np.uint8)) == b"DE"


def test_bp5_derived_variables():
    """derived/derived.bp: ADIOS2's derived variables; stored with data they read as arrays,
    stored without (StatsOnly, ExpressionString) they list and give their expression, and a read
    raises (libgpubp evaluates no expression)."""
    path = os.path.join(GOLDEN, "derived", "derived.bp")
    with gpubp.Stream(path, "rra") as s:
        info = s.available_variables()
        assert {"derived/stats", "derived/expr", "mesh/sum", "mesh/mag"} <= set(info)
        assert info["mesh/sum"]["shape"] == (4, 3) and info["mesh/sum"]["steps"] == 3
        got = s.read("derived/store", step=1)
        assert got.tolist() == [(i + 1) + (2.0 * i - 3) for i in range(6)]
        with pytest.raises(gpubp.Error):
            s.read("derived/expr", step=0)
    f = gpubp.lowlevel.gpubp_open(path, gpubp.lowlevel.Mode.READ_RANDOM_ACCESS, None)
    try:
        v = gpubp.lowlevel.gpubp_inquire_variable(f, "derived/expr")
        assert gpubp.lowlevel.gpubp_variable_expression(v) == "a = sim/x\nb = sim/y\na-b"
        w = gpubp.lowlevel.gpubp_inquire_variable(f, "sim/x")
        assert gpubp.lowlevel.gpubp_variable_expression(w) is None
    finally:
        gpubp.lowlevel.gpubp_close(f)


# ADIOS2's BP3 files (engine "BP3": NAME.bp is the index of every step, the data is in
# NAME.bp.dir/NAME.bp.0), read as BP4 datasets: the same checks against bpls's dumps
BP3_SETS = sorted(os.path.join(GOLDEN, "bp3", n) for n in os.listdir(os.path.join(GOLDEN, "bp3"))
                  if n.endswith(".bp") and os.path.isfile(os.path.join(GOLDEN, "bp3", n)))


@pytest.mark.parametrize("path", BP3_SETS, ids=os.path.basename)
def test_bp3_files(path):
    codec = {"bp3_lz4.bp": 16, "bp3_zstd.bp": 32}.get(os.path.basename(path), 0)
    if codec and not gpubp.lowlevel.gpubp_features() & codec:
        pytest.skip("this build lacks the codec")
    test_bp5_values_as_bpls_random_access(path)
    test_bp5_step_mode_equals_random_access(path)
    with gpubp.Stream(path, "rra") as s:
        assert s.num_steps() == {"bp3_basic.bp": 3, "bp3_types.bp": 1, "bp3_gap101.bp": 3,
                                 "bp3_gap0011.bp": 4}.get(os.path.basename(path), 2)
        if os.path.basename(path) == "bp3_basic.bp":
            assert s.read("a2d", step=2)[3, 4] == 219.5
            assert s.read_attribute("att_strs") == ["one", "two", "three"]


def test_bp3_files_found():
    assert len(BP3_SETS) == 8


def test_select_steps_and_operators():
    """select_steps / ignore_flatten through the package (tests/golden/selsteps: g = 100 step +
    index, z blosc-compressed) and gpubp_variable_block_operator through gpubp.lowlevel."""
    sel = os.path.join(GOLDEN, "selsteps")
    for name in ("steps5.bp", "steps4.bp"):
        with gpubp.Stream(os.path.join(sel, name), "rra", params={"select_steps": "0:n:2"}) as s:
            assert s.num_steps() == 3
            assert [s.read("g", step=k)[0, 1] for k in range(3)] == [1.0, 201.0, 401.0]
            assert "sparse" not in s.available_variables()
        with gpubp.Stream(os.path.join(sel, name), "r", params="select_steps=3 1") as s:
            assert [float(s.read("g")[1, 0]) for _ in s.steps()] == [106.0, 306.0]
    flat = os.path.join(sel, "flat5.bp")
    with gpubp.Stream(flat, "rra") as s:
        assert s.num_steps() == 1
    with gpubp.Stream(flat, "rra", params="ignore_flatten=1,select_steps=2:n") as s:
        assert s.num_steps() == 3
        assert s.read("g", step=0)[0, 0] == 200.0
    f = gpubp.lowlevel.gpubp_open(os.path.join(sel, "steps5.bp"),
                                  gpubp.lowlevel.Mode.READ_RANDOM_ACCESS, None)
    try:
        z = gpubp.lowlevel.gpubp_inquire_variable(f, "z")
        g = gpubp.lowlevel.gpubp_inquire_variable(f, "g")
        assert gpubp.lowlevel.gpubp_variable_block_operator(z, 4, 0) == "blosc"
        assert gpubp.lowlevel.gpubp_variable_block_operator(g, 0, 0) == ""
        with pytest.raises(gpubp.lowlevel.Error):
            gpubp.lowlevel.gpubp_variable_block_operator(z, 5, 0)
    finally:
        gpubp.lowlevel.gpubp_close(f)
