#!/usr/bin/env python3
"""bp4verify.py: the project's own BP4 consistency checker.

Usage: bp4verify.py [-v] [--allow-active] [--list-blocks] DIR.bp

Written from the BP4 format description (docs/format/, the layout ADIOS2 2.12 writes), with the
Python standard library only, and independent of libgpubp's C code: it shares no code with
lib/format. It walks md.idx, md.0 and every data.K of a dataset and checks that they agree:
headers, the step index and its pointers, every PG, variable and attribute entry and their lengths,
every characteristic, that each block's offsets point at the right record in data.K, that the
records there repeat the metadata (name, type, dimensions, value), that payloads lie inside their
file, that the PGs md.0 names are whole and do not overlap, and that the min/max of each
uncompressed block equals the min/max of its payload.

Exit status: 0 consistent, 1 an inconsistency (each printed on stderr), 2 not a BP4 dataset or
bad usage. -v prints what it found on stdout. --list-blocks prints one line per array block of a
consistent dataset: name typeid step payload_offset input_size output_size ndims count.. start..
shape.. (sizes 0 0: not compressed).
"""
import array
import math
import os
import struct
import sys

LOCAL_VALUE_DIM = 2**64 - 3
JOINED_DIM = 2**64 - 2

# type id -> (name, element size, array typecode for the min/max check or None)
TYPES = {
    0: ("int8", 1, "b"), 1: ("int16", 2, "h"), 2: ("int32", 4, "i"), 4: ("int64", 8, "q"),
    50: ("uint8", 1, "B"), 51: ("uint16", 2, "H"), 52: ("uint32", 4, "I"), 54: ("uint64", 8, "Q"),
    5: ("float", 4, "f"), 6: ("double", 8, "d"), 7: ("long double", 16, None),
    55: ("char", 1, "b"), 10: ("complex float", 8, None), 11: ("complex double", 16, None),
    9: ("string", 0, None), 12: ("string array", 0, None),
}
STRUCT_CODE = {"b": "b", "h": "h", "i": "i", "q": "q", "B": "B", "H": "H", "I": "I", "Q": "Q",
               "f": "f", "d": "d"}
OPERATORS = {"unknown", "none", "identity", "bzip2", "sz", "sz3", "zfp", "mgard", "png", "blosc",
             "sirius", "mgardplus", "plugin"}
# the first byte of an operator's buffer (its type enum) for the names we know
OPERATOR_ENUM = {"blosc": 0, "bzip2": 1, "mgard": 3, "png": 4, "sirius": 5, "sz": 6, "zfp": 7,
                 "mgardplus": 8, "sz3": 11}


class Bad(Exception):
    """An inconsistency that stops the walk of the structure it was found in."""


class Cursor:
    """Little-endian reads from a bytes object with bounds checks."""

    def __init__(self, buf, pos, end, what):
        self.buf, self.pos, self.end, self.what = buf, pos, end, what

    def take(self, n):
        if n < 0 or self.pos + n > self.end:
            raise Bad("%s: %d bytes needed at offset %d, only %d left" %
                      (self.what, n, self.pos, self.end - self.pos))
        b = self.buf[self.pos:self.pos + n]
        self.pos += n
        return b

    def u8(self):
        return self.take(1)[0]

    def u16(self):
        return struct.unpack("<H", self.take(2))[0]

    def u32(self):
        return struct.unpack("<I", self.take(4))[0]

    def u64(self):
        return struct.unpack("<Q", self.take(8))[0]

    def bpstr(self):
        return self.take(self.u16()).decode("utf-8", "replace")

    def value(self, tid):
        """One element of type tid (a BP string for strings); returned as a comparable key."""
        if tid == 9 or tid == 12:
            return self.bpstr()
        name, size, code = TYPES[tid]
        raw = self.take(size)
        if code:
            return struct.unpack("<" + STRUCT_CODE[code], raw)[0]
        return raw


class Checker:
    def __init__(self, path, allow_active, verbose):
        self.path = path.rstrip("/")
        self.allow_active = allow_active
        self.verbose = verbose
        self.errors = []
        self.data = {}          # K -> bytes of data.K
        self.vmd = {}           # (K, offset) -> parsed [VMD record
        self.amd = {}           # (K, offset) -> parsed [AMD record
        self.pgs = {}           # (K, offset) -> (step, end) of the PG there
        self.used_vmd = set()
        self.blocks = []         # every variable block: (name, type, step, characteristics)
        self.var_types = {}
        self.stats = {"steps": 0, "variables": set(), "blocks": 0, "attributes": set(), "pgs": 0}

    # -- reporting ------------------------------------------------------------------------------
    def err(self, msg):
        if len(self.errors) < 200:
            self.errors.append(msg)

    def check(self, cond, msg):
        if not cond:
            self.err(msg)
        return cond

    def info(self, msg):
        if self.verbose:
            print(msg)

    # -- files ----------------------------------------------------------------------------------
    def read(self, name):
        with open(os.path.join(self.path, name), "rb") as f:
            return f.read()

    def header(self, buf, fname, kind):
        """The 64-byte header every BP4 file starts with."""
        if len(buf) < 64:
            raise Bad("%s: %d bytes, shorter than the 64-byte header" % (fname, len(buf)))
        tag = buf[:32]
        self.check(tag.startswith(b"ADIOS-BP v"), "%s: version tag %r does not start with "
                   "'ADIOS-BP v'" % (fname, tag.rstrip(b"\0")))
        self.check(tag.rstrip(b"\0").endswith(kind.encode()),
                   "%s: version tag %r does not name the kind %r" %
                   (fname, tag.rstrip(b"\0"), kind))
        self.check(buf[36] == 0, "%s: byte 36 (endianness) is %d: only little-endian (0) "
                   "datasets are checked" % (fname, buf[36]))
        self.check(buf[37] == 4, "%s: byte 37 (BP version) is %d, not 4" % (fname, buf[37]))
        self.check(not any(buf[39:64]), "%s: bytes 39-63 of the header are not zero" % fname)
        major, minor, patch = buf[32] - 48, buf[33] - 48, buf[34] - 48
        return major * 1000000 + minor * 1000 + patch

    def data_file(self, k):
        if k not in self.data:
            name = "data.%d" % k
            try:
                buf = self.read(name)
            except OSError as e:
                self.err("%s: cannot be read (%s)" % (name, e.strerror))
                self.data[k] = None
                return None
            self.data[k] = buf
            try:
                self.header(buf, name, "Data")
                self.check(buf[38] == 0, "%s: byte 38 is %d, not 0" % (name, buf[38]))
            except Bad as e:
                self.err(str(e))
        return self.data[k]

    # -- data.K: the PGs that md.0 names ------------------------------------------------------
    def parse_pg(self, k, buf, pos):
        """The PG at pos of data.k: its records are registered; returns its step. Bytes between
        PGs are not looked at: a writer killed in a step leaves a partial PG there, and a later
        append goes on after it."""
        name = "data.%d" % k
        c = Cursor(buf, pos, len(buf), "%s PG at %d" % (name, pos))
        if c.take(4) != b"[PGI":
            raise Bad("%s: no '[PGI' at offset %d" % (name, pos))
        length = c.u64()
        end = pos + 4 + length
        if end > len(buf):
            raise Bad("%s: PG at %d has length %d, past the end of the file (%d)" %
                      (name, pos, length, len(buf)))
        c.end = end
        if buf[end - 4:end] != b"PGI]":
            raise Bad("%s: PG at %d does not end with 'PGI]' at %d" % (name, pos, end - 4))
        cm = c.u8()
        self.check(cm in (ord("y"), ord("n")), "%s: PG at %d: column-major byte %d is "
                   "not 'y' or 'n'" % (name, pos, cm))
        c.bpstr()
        c.u32()
        sstep = c.bpstr()
        step = c.u32()
        self.check(sstep == str(step), "%s: PG at %d: step string %r but step %d" %
                   (name, pos, sstep, step))
        nmeth = c.u8()
        mlen = c.u16()
        self.check(mlen == 3 * nmeth, "%s: PG at %d: %d methods in %d bytes" %
                   (name, pos, nmeth, mlen))
        c.take(mlen)
        nvars = c.u32()
        vlen = c.u64()
        vend = c.pos + vlen
        if vend > end - 4:
            raise Bad("%s: PG at %d: variable records (%d bytes) run past the PG" %
                      (name, pos, vlen))
        seen = 0
        while c.pos < vend:
            c.pos = self.parse_vmd(k, buf, c.pos, vend)
            seen += 1
        self.check(seen == nvars, "%s: PG at %d says %d variable records, holds %d" %
                   (name, pos, nvars, seen))
        c.end = end - 4
        c.u32()  # attribute count: ADIOS may count attributes it did not write again
        alen = c.u64()
        aend = c.pos - 8 + alen
        if c.pos == end - 4 and aend != end - 4:
            # No attribute record follows. ADIOS2 writes 12 zero bytes here in a PG's first
            # flush and leaves them stale (whatever its buffer held) in later steps; its
            # reader never looks at them, so neither do we.
            pass
        elif aend != end - 4:
            raise Bad("%s: PG at %d: attribute records end at %d, the PG at %d" %
                      (name, pos, aend, end - 4))
        else:
            while c.pos < aend:
                c.pos = self.parse_amd(k, buf, c.pos, aend)
        self.pgs[(k, pos)] = (step, end)
        self.stats["pgs"] += 1
        return step

    @staticmethod
    def record_start(name, buf, pos, limit, tag, c_len):
        """The common start of [VMD and [AMD records: tag, length (read by c_len), member id,
        name. Returns (cursor bounded by the record, its end, {member, name})."""
        what = tag.decode()
        c = Cursor(buf, pos, limit, "%s %s at %d" % (name, what, pos))
        if c.take(4) != tag:
            raise Bad("%s: no '%s' at offset %d" % (name, what, pos))
        length = c_len(c)
        end = pos + 4 + length
        if end > limit:
            raise Bad("%s: %s at %d: length %d runs past its PG" % (name, what, pos, length))
        c.end = end
        return c, end, {"member": c.u32(), "name": c.bpstr()}

    def parse_vmd(self, k, buf, pos, limit):
        name = "data.%d" % k
        c, end, rec = self.record_start(name, buf, pos, limit, b"[VMD", c_len=Cursor.u64)
        order, zero, rec["type"], isdim = c.u8(), c.u8(), c.u8(), c.u8()
        self.check(order == ord("K") and zero == 0, "%s: [VMD at %d (%s): order bytes %d %d, "
                   "not 'K' 0" % (name, pos, rec["name"], order, zero))
        self.check(isdim == ord("n"), "%s: [VMD at %d (%s): dimension-variable flag %d" %
                   (name, pos, rec["name"], isdim))
        ndim = c.u8()
        dlen = c.u16()
        self.check(dlen == 27 * ndim, "%s: [VMD at %d (%s): %d dimensions in %d bytes" %
                   (name, pos, rec["name"], ndim, dlen))
        dims = []
        for _ in range(ndim):
            d = c.take(27)
            dims.append(struct.unpack("<xQxQxQ", d))
        rec["dims"] = dims
        c.u8()
        clen = c.u32()
        c.take(clen)
        pad = c.u8()
        if pad < 4:
            raise Bad("%s: [VMD at %d (%s): pad length %d < 4" % (name, pos, rec["name"], pad))
        c.take(pad - 4)
        if c.take(4) != b"VMD]":
            raise Bad("%s: [VMD at %d (%s): no 'VMD]' before the payload" %
                      (name, pos, rec["name"]))
        rec["payload"] = c.pos
        rec["end"] = end
        self.vmd[(k, pos)] = rec
        return end

    def parse_amd(self, k, buf, pos, limit):
        name = "data.%d" % k
        c, end, rec = self.record_start(name, buf, pos, limit, b"[AMD", c_len=Cursor.u32)
        self.check(c.u16() == 0, "%s: [AMD at %d (%s): path is not empty" %
                   (name, pos, rec["name"]))
        self.check(c.u8() == ord("n"), "%s: [AMD at %d (%s): variable flag is not 'n'" %
                   (name, pos, rec["name"]))
        tid = rec["type"] = c.u8()
        rec["payload"] = c.pos
        if tid == 9:
            rec["value"] = [c.take(c.u32()).decode("utf-8", "replace")]
        elif tid == 12:
            vals = []
            for _ in range(c.u32()):
                s = c.take(c.u32())
                if not s or s[-1] != 0:
                    raise Bad("%s: [AMD at %d (%s): string array element without its NUL" %
                              (name, pos, rec["name"]))
                vals.append(s[:-1].decode("utf-8", "replace"))
            rec["value"] = vals
        elif tid in TYPES:
            raw = c.take(c.u32())
            size = TYPES[tid][1]
            if len(raw) % size:
                raise Bad("%s: [AMD at %d (%s): %d value bytes for elements of %d" %
                          (name, pos, rec["name"], len(raw), size))
            vc = Cursor(raw, 0, len(raw), "attribute value")
            rec["value"] = [vc.value(tid) for _ in range(len(raw) // size)]
        else:
            raise Bad("%s: [AMD at %d (%s): unknown type id %d" % (name, pos, rec["name"], tid))
        if c.take(4) != b"AMD]":
            raise Bad("%s: [AMD at %d (%s): no 'AMD]' at its end" % (name, pos, rec["name"]))
        if c.pos != end:
            raise Bad("%s: [AMD at %d (%s): length says %d, content ends at %d" %
                      (name, pos, rec["name"], end, c.pos))
        self.amd[(k, pos)] = rec
        return end

    # -- md.0 -----------------------------------------------------------------------------------
    def characteristics(self, c, tid, what, version):
        """One characteristic set; returns a dict of what it held."""
        count = c.u8()
        length = c.u32()
        start = c.pos
        end = start + length
        if end > c.end:
            raise Bad("%s: characteristic set of %d bytes runs past its entry" % (what, length))
        sub = Cursor(c.buf, start, end, what)
        ch = {}
        seen = 0
        while sub.pos < end:
            cid = sub.u8()
            seen += 1
            if cid in ch and cid != 0:
                self.err("%s: characteristic %d appears twice" % (what, cid))
            if cid == 0:
                if tid == 12 or ("dims" in ch and ch["dims"] and ch["dims"][0][0] > 1):
                    n = ch["dims"][0][0] if "dims" in ch and ch["dims"] else 1
                    ch[0] = [sub.value(tid) for _ in range(n)]
                else:
                    ch[0] = [sub.value(tid)]
            elif cid in (1, 2):
                ch[cid] = sub.value(tid)
            elif cid in (3, 6):
                ch[cid] = sub.u64()
            elif cid == 4:
                ndim = sub.u8()
                sub.u16()
                ch["dims"] = [(sub.u64(), sub.u64(), sub.u64()) for _ in range(ndim)]
                ch[4] = True
            elif cid in (7, 8, 9):
                ch[cid] = sub.u32()
            elif cid == 10:
                bitmap = ch.get(9, 0)
                for bit in range(7):
                    if bitmap & (1 << bit):
                        if bit in (0, 1):
                            sub.value(tid)
                        elif bit == 2:
                            sub.u32()
                        elif bit in (3, 4):
                            sub.take(8)
                        elif bit == 5:
                            raise Bad("%s: stat characteristic with a histogram" % what)
                        else:
                            sub.u8()
                ch[10] = True
            elif cid == 11:
                op = sub.take(sub.u8()).decode("ascii", "replace")
                if op not in OPERATORS:
                    raise Bad("%s: unknown operator %r" % (what, op))
                otid = sub.u8()
                ndim = sub.u8()
                sub.u16()
                odims = [(sub.u64(), sub.u64(), sub.u64()) for _ in range(ndim)]
                mlen = sub.u16()
                meta = sub.take(mlen)
                rec = {"name": op, "type": otid, "dims": odims}
                if version >= 2008000:
                    if mlen < 16:
                        raise Bad("%s: operator metadata of %d bytes, 16 needed" % (what, mlen))
                    rec["raw"], rec["size"] = struct.unpack("<QQ", meta[:16])
                ch[11] = rec
            elif cid == 12:
                m = sub.u16()
                if m < 1:
                    raise Bad("%s: minmax with %d sub-blocks" % (what, m))
                ch[12] = (sub.value(tid), sub.value(tid))
                if m > 1:
                    sub.u8()
                    sub.u64()
                    ndim = len(ch.get("dims", []))
                    sub.take(2 * ndim)
                    for _ in range(2 * m):
                        sub.value(tid)
            elif cid == 5:
                raise Bad("%s: characteristic 5 (var_id), which ADIOS2's reader rejects" % what)
            else:
                raise Bad("%s: unknown characteristic id %d" % (what, cid))
        self.check(seen == count, "%s: characteristic count byte %d, %d present" %
                   (what, count, seen))
        c.pos = end
        return ch

    def element(self, buf, pos, limit, step, is_attr, version):
        """One variable or attribute entry at pos; returns (end, name, tid, blocks)."""
        kind = "attribute" if is_attr else "variable"
        c = Cursor(buf, pos, limit, "md.0 %s entry at %d" % (kind, pos))
        length = c.u32()
        end = pos + 4 + length
        if end > limit:
            raise Bad("md.0 step %d: %s entry at %d has length %d, past its index" %
                      (step, kind, pos, length))
        c.end = end
        c.u32()
        c.bpstr()
        name = c.bpstr()
        what = "md.0 step %d %s %r" % (step, kind, name)
        order, zero, tid = c.u8(), c.u8(), c.u8()
        self.check(order == (0 if is_attr else ord("K")) and zero == 0,
                   "%s: order bytes %d %d" % (what, order, zero))
        if tid not in TYPES or (tid == 12 and not is_attr):
            raise Bad("%s: type id %d is not a BP4 %s type" % (what, tid, kind))
        nsets = c.u64()
        blocks = []
        while c.pos < end:
            blocks.append(self.characteristics(c, tid, "%s block %d" % (what, len(blocks)),
                                               version))
        self.check(len(blocks) == nsets, "%s: entry says %d blocks, holds %d" %
                   (what, nsets, len(blocks)))
        self.check(len(blocks) >= 1, "%s: entry with no block" % what)
        return end, name, tid, blocks

    def check_block(self, name, tid, ch, step, what):
        """A variable block's characteristics against each other and against data.K."""
        for cid, label in ((8, "time_index"), (7, "file_index"), (3, "offset"),
                           (6, "payload_offset")):
            if cid not in ch:
                self.err("%s: no %s characteristic" % (what, label))
                return
        if 4 not in ch and tid != 9:
            self.err("%s: no dimensions characteristic" % what)
            return
        self.check(ch[8] == step, "%s: time_index %d in step %d" % (what, ch[8], step))
        dims = ch.get("dims", [])
        ndim = len(dims)
        single = ndim == 0 or (ndim == 1 and dims[0][1] == LOCAL_VALUE_DIM)
        if ndim == 1 and dims[0][1] == LOCAL_VALUE_DIM:
            self.check(dims[0][0] == 1 and dims[0][2] == 0,
                       "%s: local value with count %d start %d" % (what, dims[0][0], dims[0][2]))
        elif ndim:
            joined = [i for i, d in enumerate(dims) if d[1] == JOINED_DIM]
            local = all(d[1] == 0 and d[2] == 0 for d in dims)
            self.check(len(joined) <= 1, "%s: more than one joined dimension" % what)
            if not local and not joined:
                for i, (cnt, shp, st) in enumerate(dims):
                    self.check(st + cnt <= shp, "%s: dimension %d: start %d + count %d > "
                               "shape %d" % (what, i, st, cnt, shp))
            self.check(tid != 9, "%s: a string variable that is an array" % what)
        if single:
            if not self.check(0 in ch, "%s: single value without its value characteristic" %
                              what):
                return
            self.check(11 not in ch, "%s: a single value with an operator" % what)
        elif tid == 9:
            self.err("%s: string variable with dimensions" % what)
        if tid == 9:
            bad = [k for k in ch if isinstance(k, int) and k not in (0, 3, 4, 6, 7, 8)]
            self.check(not bad, "%s: string block with characteristics %s" % (what, bad))
        buf = self.data_file(ch[7])
        if buf is None:
            return
        rec = self.vmd.get((ch[7], ch[3]))
        if not self.check(rec is not None, "%s: offset %d in data.%d is not a [VMD record of "
                          "a PG" % (what, ch[3], ch[7])):
            return
        if (ch[7], ch[3]) in self.used_vmd:
            self.err("%s: [VMD at %d of data.%d is claimed by two blocks" % (what, ch[3], ch[7]))
        self.used_vmd.add((ch[7], ch[3]))
        self.check(rec["name"] == name, "%s: its [VMD record names %r" % (what, rec["name"]))
        self.check(rec["type"] == tid, "%s: type %d, its [VMD record %d" %
                   (what, tid, rec["type"]))
        self.check(ch[6] == rec["payload"], "%s: payload_offset %d, its [VMD payload at %d" %
                   (what, ch[6], rec["payload"]))
        self.check(len(rec["dims"]) == ndim, "%s: %d dimensions, its [VMD record %d" %
                   (what, ndim, len(rec["dims"])))
        local = ndim and all(d[1] == 0 and d[2] == 0 for d in dims)
        for i, (a, b) in enumerate(zip(dims, rec["dims"])):
            same = a[0] == b[0] if local else a == b
            self.check(same, "%s: dimension %d is %s, its [VMD record says %s" %
                       (what, i, a, b))
        psize = rec["end"] - rec["payload"]
        pc = Cursor(buf, rec["payload"], rec["end"], what + " payload")
        if tid == 9:
            try:
                val = pc.bpstr()
                self.check(pc.pos == rec["end"], "%s: string payload of %d bytes holds %d" %
                           (what, psize, pc.pos - rec["payload"]))
                self.check([val] == ch[0], "%s: value %r, payload %r" % (what, ch[0][0], val))
            except Bad as e:
                self.err(str(e))
            return
        esize = TYPES[tid][1]
        if single:
            self.check(psize == esize, "%s: single-value payload of %d bytes, not %d" %
                       (what, psize, esize))
            if psize == esize:
                self.check(same_value(ch[0][0], pc.value(tid)),
                           "%s: value %r differs from its payload" % (what, ch[0][0]))
            return
        nelem = 1
        for d in dims:
            nelem *= d[0]
        if 11 in ch:
            op = ch[11]
            self.check(op["type"] == tid, "%s: operator says type %d" % (what, op["type"]))
            self.check([d[0] for d in op["dims"]] == [d[0] for d in dims],
                       "%s: operator dimensions %s differ" % (what, op["dims"]))
            if "raw" in op:
                self.check(op["raw"] == nelem * esize, "%s: operator says %d bytes "
                           "uncompressed, the block has %d" % (what, op["raw"], nelem * esize))
                self.check(op["size"] == psize, "%s: operator says %d bytes compressed, the "
                           "payload has %d" % (what, op["size"], psize))
            enum = OPERATOR_ENUM.get(op["name"])
            if enum is not None and psize:
                self.check(buf[rec["payload"]] == enum, "%s: %s buffer starts with operator "
                           "type %d, not %d" % (what, op["name"], buf[rec["payload"]], enum))
            return
        if not self.check(psize == nelem * esize, "%s: payload of %d bytes for %d elements of "
                          "%d" % (what, psize, nelem, esize)):
            return
        code = TYPES[tid][2]
        if 12 in ch and code and nelem:
            vals = array.array(code)
            vals.frombytes(buf[rec["payload"]:rec["end"]])
            if sys.byteorder != "little":
                vals.byteswap()
            if code in "fd" and any(math.isnan(v) for v in vals):
                return
            self.check((min(vals), max(vals)) == ch[12], "%s: minmax %s, its payload %s" %
                       (what, ch[12], (min(vals), max(vals))))

    def check_attr(self, name, tid, ch, step, what):
        for cid, label in ((8, "time_index"), (0, "value")):
            if cid not in ch:
                self.err("%s: no %s characteristic" % (what, label))
                return
        self.check(ch[8] == step, "%s: time_index %d in step %d" % (what, ch[8], step))
        if tid != 9:
            dims = ch.get("dims", [])
            self.check(len(dims) == 1 and dims[0][0] == len(ch[0]),
                       "%s: dimensions %s for %d values" % (what, dims, len(ch[0])))
        if 3 not in ch or 7 not in ch:
            return
        if self.data_file(ch[7]) is None:
            return
        rec = self.amd.get((ch[7], ch[3]))
        if not self.check(rec is not None, "%s: offset %d in data.%d is not an [AMD record" %
                          (what, ch[3], ch[7])):
            return
        self.check(rec["name"] == name, "%s: its [AMD record names %r" % (what, rec["name"]))
        self.check(rec["type"] == tid, "%s: type %d, its [AMD record %d" %
                   (what, tid, rec["type"]))
        if 6 in ch:
            self.check(ch[6] == rec["payload"], "%s: payload_offset %d, [AMD value at %d" %
                       (what, ch[6], rec["payload"]))
        self.check(len(rec["value"]) == len(ch[0]) and
                   all(same_value(a, b) for a, b in zip(rec["value"], ch[0])),
                   "%s: value %r, its [AMD record %r" % (what, ch[0], rec["value"]))

    def step_block(self, md, rec, version):
        step, pgp, varp, attrp, endp = rec
        c = Cursor(md, pgp, endp, "md.0 step %d PG index" % step)
        npg = c.u64()
        pglen = c.u64()
        self.check(npg >= 1, "md.0 step %d: %d PG entries" % (step, npg))
        if c.pos + pglen != varp:
            raise Bad("md.0 step %d: PG index of %d bytes ends at %d, the variable index "
                      "starts at %d" % (step, pglen, c.pos + pglen, varp))
        seen = 0
        while c.pos < varp:
            elen = c.u16()
            eend = c.pos + elen
            if eend > varp:
                raise Bad("md.0 step %d: PG entry at %d runs past the PG index" % (step, c.pos))
            e = Cursor(md, c.pos, eend, "md.0 step %d PG entry" % step)
            e.bpstr()
            cm = e.u8()
            self.check(cm in (ord("y"), ord("n")), "md.0 step %d: column-major byte %d" %
                       (step, cm))
            e.u32()
            sstep = e.bpstr()
            pstep = e.u32()
            off = e.u64()
            self.check(e.pos == eend, "md.0 step %d: PG entry length %d, content %d" %
                       (step, elen, e.pos - c.pos))
            self.check(sstep == str(step) and pstep == step, "md.0 step %d: PG entry says "
                       "step %r / %d" % (step, sstep, pstep))
            here = []
            for k in sorted(self.data):
                buf = self.data[k]
                if buf is None or buf[off:off + 4] != b"[PGI":
                    continue
                if (k, off) not in self.pgs:
                    try:
                        self.parse_pg(k, buf, off)
                    except Bad as e:
                        self.err("md.0 step %d: PG entry: %s" % (step, e))
                        continue
                # the entry does not say which data file: with sub-files another step's PG
                # may sit at the same offset of another file
                if self.pgs[(k, off)][0] == step:
                    here.append(k)
            self.check(here, "md.0 step %d: PG entry offset %d is no [PGI of step %d in any "
                       "data file" % (step, off, step))
            c.pos = eend
            seen += 1
        self.check(seen == npg, "md.0 step %d: PG count %d, %d entries" % (step, npg, seen))
        for is_attr, start, stop in ((False, varp, attrp), (True, attrp, endp)):
            kind = "attribute" if is_attr else "variable"
            c = Cursor(md, start, stop, "md.0 step %d %s index" % (step, kind))
            n = c.u32()
            length = c.u64()
            if c.pos + length != stop:
                raise Bad("md.0 step %d: %s index of %d bytes ends at %d, should end at %d" %
                          (step, kind, length, c.pos + length, stop))
            names = set()
            while c.pos < stop:
                c.pos, name, tid, blocks = self.element(md, c.pos, stop, step, is_attr, version)
                what = "md.0 step %d %s %r" % (step, kind, name)
                self.check(name not in names, "%s: two entries in one step" % what)
                names.add(name)
                if is_attr:
                    self.stats["attributes"].add(name)
                    self.check(len(blocks) == 1, "%s: %d value sets" % (what, len(blocks)))
                    for ch in blocks:
                        self.check_attr(name, tid, ch, step, what)
                    continue
                prev = self.var_types.setdefault(name, tid)
                self.check(prev == tid, "%s: type %d, earlier steps %d" % (what, tid, prev))
                self.stats["variables"].add(name)
                for i, ch in enumerate(blocks):
                    self.stats["blocks"] += 1
                    self.blocks.append((name, tid, step, ch))
                    self.check_block(name, tid, ch, step, "%s block %d" % (what, i))
            self.check(n == len(names), "md.0 step %d: %s count %d, %d entries" %
                       (step, kind, n, len(names)))

    # -- the whole dataset ----------------------------------------------------------------------
    def run(self):
        if not os.path.isdir(self.path):
            raise SystemExit("bp4verify: %s is not a directory" % self.path)
        for f in ("md.idx", "md.0"):
            if not os.path.isfile(os.path.join(self.path, f)):
                raise SystemExit("bp4verify: %s has no %s: not a BP4 dataset" % (self.path, f))
        if os.path.exists(os.path.join(self.path, "mmd.0")):
            raise SystemExit("bp4verify: %s has an mmd.0: a BP5 dataset" % self.path)
        idx = self.read("md.idx")
        md = self.read("md.0")
        version = self.header(idx, "md.idx", "Index Table")
        if idx[38] not in (0, 1):
            self.err("md.idx: byte 38 (writer active) is %d, not 0 or 1" % idx[38])
        elif idx[38] == 1 and not self.allow_active:
            self.err("md.idx: byte 38 says a writer is still active; a closed dataset has 0")
        self.header(md, "md.0", "Metadata")
        self.check(md[38] == 0, "md.0: byte 38 is %d, not 0" % md[38])
        if (len(idx) - 64) % 64:
            self.err("md.idx: %d bytes, not the header plus whole 64-byte records" % len(idx))
        nrec = (len(idx) - 64) // 64
        self.check(nrec >= 1, "md.idx: no step record")
        expect = 64
        records = []
        for i in range(nrec):
            r = struct.unpack_from("<8Q", idx, 64 + 64 * i)
            step, rank, pgp, varp, attrp, endp = r[:6]
            where = "md.idx record %d" % (i + 1)
            self.check(step == i + 1, "%s: step %d" % (where, step))
            self.check(rank == 0, "%s: rank %d" % (where, rank))
            self.check(r[7] == 0, "%s: bytes 56-63 are not zero" % where)
            if not self.check(pgp == expect, "%s: PG index at %d, the previous step ended at %d"
                              % (where, pgp, expect)):
                break
            if not self.check(pgp < varp < attrp < endp <= len(md), "%s: md.0 pointers %d %d "
                              "%d %d out of order or past md.0 (%d bytes)" %
                              (where, pgp, varp, attrp, endp, len(md))):
                break
            records.append((i + 1, pgp, varp, attrp, endp))
            expect = endp
        self.check(expect == len(md), "md.0: %d bytes, the last step ends at %d" %
                   (len(md), expect))
        self.stats["steps"] = len(records)
        k = 0
        while os.path.exists(os.path.join(self.path, "data.%d" % k)):
            self.data_file(k)
            k += 1
        for rec in records:
            try:
                self.step_block(md, rec, version)
            except Bad as e:
                self.err(str(e))
        for k in sorted(self.data):
            if self.data[k] is None:
                continue
            orphans = [o for (kk, o) in self.vmd if kk == k and (kk, o) not in self.used_vmd]
            self.check(not orphans, "data.%d: [VMD records at %s of PGs that md.0 names belong "
                       "to no block of md.0" % (k, orphans[:5]))
            spans = sorted((o, e) for (kk, o), (_, e) in self.pgs.items() if kk == k)
            for (o1, e1), (o2, _) in zip(spans, spans[1:]):
                self.check(e1 <= o2, "data.%d: the PGs at %d and %d overlap" % (k, o1, o2))
            if spans:
                self.check(spans[0][0] == 64, "data.%d: the first PG is at %d, not 64" %
                           (k, spans[0][0]))
        s = self.stats
        self.info("%s: %d steps, %d variables, %d blocks, %d attributes, %d PGs in %d data "
                  "files" % (self.path, s["steps"], len(s["variables"]), s["blocks"],
                             len(s["attributes"]), s["pgs"], len(self.data)))


def block_lines(ck):
    """The --list-blocks lines of a checked dataset: one per array block (single values left out):
    name typeid step payload_offset input_size output_size ndims count.. start.. shape.."""
    for name, tid, step, ch in ck.blocks:
        if 0 in ch:
            continue
        op = ch.get(11, {})
        dims = ch.get("dims", [])
        yield " ".join(str(x) for x in [name, tid, step, ch[6], op.get("raw", 0), op.get("size", 0),
                                        len(dims)] + [d[0] for d in dims] + [d[2] for d in dims] +
                       [d[1] for d in dims])


def same_value(a, b):
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def main(argv):
    args = [a for a in argv if not a.startswith("-")]
    flags = [a for a in argv if a.startswith("-")]
    if len(args) != 1 or any(f not in ("-v", "--allow-active", "--list-blocks") for f in flags):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    ck = Checker(args[0], "--allow-active" in flags, "-v" in flags)
    try:
        ck.run()
    except Bad as e:
        ck.err(str(e))
    except SystemExit as e:
        print(e, file=sys.stderr)
        return 2
    for e in ck.errors:
        print("bp4verify: %s: %s" % (args[0], e), file=sys.stderr)
    if ck.errors:
        print("bp4verify: %s: %d inconsistencies" % (args[0], len(ck.errors)), file=sys.stderr)
        return 1
    ck.info("%s: consistent" % args[0])
    if "--list-blocks" in flags:
        for line in block_lines(ck):
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
