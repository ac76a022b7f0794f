#!/usr/bin/env python3
"""bloscverify.py: the project's own decoder of ADIOS2 blosc operator buffers (zlib codec).

Written from the blosc container description (docs/format/) with the Python standard library
only, independent of lib/compress: a second reading of the format to check libgpubp's encoder
against. It decodes the ADIOS2 buffer (version 1: 4-byte operator header, u64 size, Blosc2
version, DataHeader, chunks; the memcpy fallback; the legacy single chunk; pre-2.8 payloads
without the 15-byte prefix) and Blosc2 chunks (16-byte and extended headers, memcpyed and special
chunks, split and unsplit blocks, zero and value runs, raw streams, zlib streams, byte shuffle and
bit shuffle).

  bloscverify.py BUFFER SIZE [--pre28]   decodes BUFFER, prints its layout, writes nothing;
                                         exit 0 when it decodes to SIZE bytes, 1 otherwise.
As a module: decode_adios(buf, size, pre28=False) -> (bytes, info), raises BloscError.
"""
import struct
import sys
import zlib

MAX_PIECE = 2**31 - 1 - 32  # the largest piece of a block that one chunk holds


class BloscError(Exception):
    pass


def _i32(b, off):
    if off + 4 > len(b):
        raise BloscError("truncated at %d" % off)
    return struct.unpack_from("<i", b, off)[0]


def unshuffle(data, ts):
    """Inverse of the byte shuffle of one block: byte j*n+i goes back to i*ts+j."""
    n = len(data) // ts
    if ts <= 1 or n == 0:
        return bytes(data)
    out = bytearray(len(data))
    for j in range(ts):
        out[j:n * ts:ts] = data[j * n:(j + 1) * n]
    out[n * ts:] = data[n * ts:]
    return bytes(out)


# byte value -> its 8 bits as 8 bytes of 0 or 1, least significant bit first
_SPREAD = [bytes((v >> k) & 1 for k in range(8)) for v in range(256)]


def bitunshuffle(data, ts):
    """Inverse of the bit shuffle of one block: the first n elements (n = elements rounded down
    to a multiple of 8) are 8*ts bit planes of n/8 bytes; plane 8*j+k holds bit k of byte j of
    each element, element i at bit i % 8 of byte i // 8. The rest is copied."""
    m = len(data) // ts
    n = m - m % 8
    if n == 0:
        return bytes(data)
    out = bytearray(n * ts)
    plane = n // 8
    for j in range(ts):
        col = 0
        for k in range(8):
            p = 8 * j + k
            bits = b"".join(_SPREAD[v] for v in data[p * plane:(p + 1) * plane])
            col += int.from_bytes(bits, "little") << k  # distinct bits: no carries
        out[j::ts] = col.to_bytes(n, "little")
    return bytes(out) + bytes(data[n * ts:])


def decode_chunk(b, room):
    """One Blosc chunk at the start of b; returns (decoded bytes, cbytes, description)."""
    if len(b) < 16:
        raise BloscError("chunk shorter than its 16-byte header")
    version, _, flags, ts = b[0], b[1], b[2], b[3]
    nbytes, blocksize, cbytes = struct.unpack_from("<iii", b, 4)
    if not 1 <= version <= 5:
        raise BloscError("chunk version %d" % version)
    if ts == 0:
        raise BloscError("typesize 0")
    extended = (flags & 0x05) == 0x05
    hlen = 32 if extended else 16
    if cbytes < hlen or cbytes > len(b):
        raise BloscError("cbytes %d outside [%d, %d]" % (cbytes, hlen, len(b)))
    if nbytes < 0 or nbytes > room:
        raise BloscError("nbytes %d, room %d" % (nbytes, room))
    if nbytes and (blocksize <= 0 or blocksize > nbytes):
        raise BloscError("blocksize %d for nbytes %d" % (blocksize, nbytes))
    if extended:
        filters = list(b[16:22])
        bflags = b[31]
        if bflags & 0x89:
            raise BloscError("blosc2_flags 0x%02x (dictionary, lazy or instrumented)" % bflags)
        special = (bflags >> 4) & 7
    else:
        filters = [0] * 5 + [1 if (flags & 1) and ts > 1 else 2 if flags & 4 else 0]
        special = 0
    if flags & 0x02:  # memcpyed
        if cbytes != nbytes + hlen:
            raise BloscError("memcpyed chunk: cbytes %d for nbytes %d" % (cbytes, nbytes))
        return bytes(b[hlen:hlen + nbytes]), cbytes, "memcpyed"
    if special:
        if special == 1 or special == 4:
            return bytes(nbytes), cbytes, "special-zeros" if special == 1 else "special-uninit"
        if special == 2:
            nan = {4: struct.pack("<f", float("nan")), 8: struct.pack("<d", float("nan"))}.get(ts)
            if nan is None or nbytes % ts:
                raise BloscError("NaN chunk with typesize %d" % ts)
            return nan * (nbytes // ts), cbytes, "special-nan"
        if special == 3:
            val = bytes(b[hlen:cbytes])
            if not val or nbytes % len(val):
                raise BloscError("repeated-value chunk with a %d-byte value" % len(val))
            return val * (nbytes // len(val)), cbytes, "special-repeat"
        raise BloscError("special kind %d" % special)
    if nbytes == 0:
        return b"", cbytes, "empty"
    codec = flags >> 5
    split = not (flags & 0x10)
    nblocks = (nbytes + blocksize - 1) // blocksize
    out = bytearray()
    for j in range(nblocks):
        bsize = min(blocksize, nbytes - j * blocksize)
        leftover = bsize < blocksize
        nstreams = ts if split and not leftover else 1
        neblock = bsize // nstreams
        pos = _i32(b, hlen + 4 * j)
        if pos <= 0 or pos >= cbytes:
            raise BloscError("bstart %d of block %d" % (pos, j))
        block = bytearray()
        for _ in range(nstreams):
            csize = _i32(b, pos)
            pos += 4
            if csize == 0:
                block += bytes(neblock)
            elif csize < 0:
                if csize < -255 or pos >= cbytes or not b[pos] & 1:
                    raise BloscError("bad run stream (csize %d)" % csize)
                block += bytes([-csize]) * neblock
                pos += 1
            else:
                if pos + csize > cbytes:
                    raise BloscError("stream of %d bytes past the chunk" % csize)
                s = bytes(b[pos:pos + csize])
                pos += csize
                if csize == neblock:
                    block += s
                    continue
                if codec != 3:
                    raise BloscError("codec %d is not zlib" % codec)
                try:
                    d = zlib.decompress(s)
                except zlib.error as e:
                    raise BloscError("zlib: %s" % e)
                if len(d) != neblock:
                    raise BloscError("stream inflates to %d bytes, not %d" % (len(d), neblock))
                block += d
        for f in reversed(filters):
            if f == 1:
                block = bytearray(unshuffle(block, ts))
            elif f == 2:
                block = bytearray(bitunshuffle(block, ts))
            elif f != 0:
                raise BloscError("filter %d" % f)
        out += block
    return bytes(out), cbytes, "split" if split else "normal"


def decode_body(b, size):
    """The buffer after the 15-byte prefix: DataHeader + chunks, raw data, or one legacy chunk."""
    if len(b) < 8:
        raise BloscError("no DataHeader")
    fmt, nchunks = struct.unpack_from("<II", b, 0)
    if fmt != 0:
        data, cb, kind = decode_chunk(b, size)
        if cb != len(b) or len(data) != size:
            raise BloscError("legacy chunk: %d bytes of %d, %d decoded of %d" %
                             (cb, len(b), len(data), size))
        return data, {"layout": "legacy " + kind}
    if nchunks == 0:
        if len(b) - 8 != size:
            raise BloscError("raw body of %d bytes for %d" % (len(b) - 8, size))
        return bytes(b[8:]), {"layout": "raw"}
    pos, out, kinds = 8, bytearray(), []
    while pos < len(b):
        data, cb, kind = decode_chunk(memoryview(b)[pos:], min(size - len(out), MAX_PIECE))
        out += data
        pos += cb
        kinds.append(kind)
    if len(out) != size:
        raise BloscError("chunks decode to %d bytes, not %d" % (len(out), size))
    return bytes(out), {"layout": "%d chunk(s) %s" % (len(kinds), ",".join(sorted(set(kinds))))}


def decode_adios(buf, size, pre28=False):
    """An ADIOS2 blosc operator buffer of a block of `size` bytes."""
    if pre28:
        return decode_body(buf, size)
    if len(buf) < 23:
        raise BloscError("buffer of %d bytes" % len(buf))
    if buf[0] != 0 or buf[1] != 1:
        raise BloscError("operator %d version %d, not blosc version 1" % (buf[0], buf[1]))
    n = struct.unpack_from("<Q", buf, 4)[0]
    if n != size:
        raise BloscError("buffer says %d bytes, the block has %d" % (n, size))
    return decode_body(buf[15:], size)


def main(argv):
    if len(argv) not in (2, 3) or (len(argv) == 3 and argv[2] != "--pre28"):
        print(__doc__.split("\n\n")[2], file=sys.stderr)
        return 2
    buf = open(argv[0], "rb").read()
    try:
        data, info = decode_adios(buf, int(argv[1]), len(argv) == 3)
    except BloscError as e:
        print("bloscverify: %s: %s" % (argv[0], e), file=sys.stderr)
        return 1
    print("%s: %d bytes, %s" % (argv[0], len(data), info["layout"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
