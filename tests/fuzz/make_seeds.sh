#!/bin/sh
# Builds the seed corpora of the fuzz targets from the ADIOS2-written golden files of tests/golden
# (BP4 and BP5; the blosc buffers of codecs/ for the codec_* targets) and datasets libgpubp wrote
# (any *.bp folders given as arguments). BP5 datasets seed bp5_idx (md.idx), bp5_ffs (mmd.0),
# bp5_meta (mmd.0, md.idx, md.0), bp5_attr (mmd.0 and each attribute block of md.0) and open
# (md.idx, md.0, data.0, mmd.0).
# Usage: tests/fuzz/make_seeds.sh [DATASET.bp ...]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
golden=$(cd "$here/../golden" && pwd)
sep='#GBPSPLIT#'
mkdir -p "$here/corpus/idx" "$here/corpus/md0" "$here/corpus/open" "$here/corpus/data"
seed() { # dataset name
    d=$1 n=$2
    [ -f "$d/md.idx" ] || return 0
    if [ -f "$d/mmd.0" ]; then seed_bp5 "$d" "$n"; return 0; fi
    cp "$d/md.idx" "$here/corpus/idx/$n.idx"
    { cat "$d/md.idx"; printf '%s' "$sep"; cat "$d/md.0"; } > "$here/corpus/idx/$n.idx_md0"
    { cat "$d/md.idx"; printf '%s' "$sep"; cat "$d/md.0"; } > "$here/corpus/md0/$n"
    cp "$d/md.0" "$here/corpus/md0/$n.md0"
    # data.0 capped at 16 KiB: the metadata paths matter more than big payloads
    { cat "$d/md.idx"; printf '%s' "$sep"; cat "$d/md.0"; printf '%s' "$sep";
      head -c 16384 "$d/data.0" 2>/dev/null || true; } > "$here/corpus/open/$n"
}
# BP5: a flags byte (0: little-endian lengths, whole records) before md.idx and mmd.0
seed_bp5() {
    d=$1 n=$2
    mkdir -p "$here/corpus/bp5_idx" "$here/corpus/bp5_ffs" "$here/corpus/bp5_meta" "$here/corpus/bp5_attr"
    { printf '\000'; cat "$d/md.idx"; } > "$here/corpus/bp5_idx/$n"
    { printf '\000'; cat "$d/mmd.0"; } > "$here/corpus/bp5_ffs/$n"
    { cat "$d/mmd.0"; printf '%s' "$sep"; cat "$d/md.idx"; printf '%s' "$sep"; cat "$d/md.0"; } \
        > "$here/corpus/bp5_meta/$n"
    { cat "$d/md.idx"; printf '%s' "$sep"; cat "$d/md.0"; printf '%s' "$sep";
      head -c 16384 "$d/data.0" 2>/dev/null || true; printf '%s' "$sep"; cat "$d/mmd.0"; } \
        > "$here/corpus/open/$n"
    # the attribute blocks of every step (md.0: u64 total, W metadata sizes, W attribute sizes,
    # the blocks), each after the flags byte, mmd.0 and the separator
    python3 - "$d" "$here/corpus/bp5_attr/$n" "$sep" <<'PY'
import struct, sys
d, out, sep = sys.argv[1], sys.argv[2], sys.argv[3].encode()
idx, md0, mmd = (open(d + '/' + f, 'rb').read() for f in ('md.idx', 'md.0', 'mmd.0'))
at, w, k, seen = 64, 0, 0, set()
while at + 9 <= len(idx):
    t, ln = idx[at], struct.unpack_from('<Q', idx, at + 1)[0]
    body = idx[at + 9:at + 9 + ln]
    if t == ord('w'):
        w = struct.unpack_from('<Q', body, 0)[0]
    elif t == ord('s'):
        pos = struct.unpack_from('<Q', body, 0)[0]
        sizes = struct.unpack_from('<%dQ' % (2 * w), md0, pos + 8)
        o = pos + 8 + 16 * w + sum(sizes[:w])
        for sz in sizes[w:]:
            blk = md0[o:o + sz]
            o += sz
            if sz and blk not in seen:
                seen.add(blk)
                open('%s_%d' % (out, k), 'wb').write(b'\0' + mmd + sep + blk)
                k += 1
    at += 9 + ln
PY
}
for d in $(find "$golden" -name '*.bp' -type d | sort); do
    seed "$d" "adios2_$(echo "$d" | sed "s|$golden/||; s|/|_|g")"
done
for d in "$@"; do
    seed "$d" "gpubp_$(basename "$d" .bp)"
done
# codec_<c>: ADIOS2 blosc operator buffers of the golden codecs/ datasets (mode 0: the buffer) and
# the first stream of each one's first block (mode 1: a raw stream), per codec (lz4hc with lz4)
python3 - "$golden" "$here/corpus" <<'PY'
import glob, os, struct, sys
golden, out = sys.argv[1], sys.argv[2]
fmts = {0: 'blosclz', 1: 'lz4', 3: 'zlib', 4: 'zstd'}
count = {}
for path in sorted(glob.glob(golden + '/codecs/*/*.bp/data.*')):
    d = open(path, 'rb').read()
    tag = path[len(golden) + 1:].replace('/', '_')
    i, infile = 0, 0
    while i + 23 + 32 <= len(d):
        c = i + 23
        if d[i:i + 4] != b'\0\1\0\0' or d[c] not in (3, 4, 5) or d[c + 1] != 1:
            i += 1
            continue
        size = struct.unpack_from('<Q', d, i + 4)[0]
        nchunks = struct.unpack_from('<I', d, i + 19)[0]
        flags, ts = d[c + 2], d[c + 3]
        nbytes, bsize, cbytes = struct.unpack_from('<iii', d, c + 4)
        fmt = flags >> 5
        if not (0 < size <= 1 << 24 and 0 < nchunks < 64 and 32 <= cbytes <= len(d) - c
                and fmt in fmts and 0 < nbytes <= size and 0 < bsize <= nbytes):
            i += 1
            continue
        end, ok = c, True
        for k in range(nchunks):
            if end + 16 > len(d):
                ok = False
                break
            end += struct.unpack_from('<i', d, end + 12)[0]
        name = fmts[fmt]
        n = count.get(name, 0)
        if ok and n < 48 and infile < 3:
            os.makedirs('%s/codec_%s' % (out, name), exist_ok=True)
            open('%s/codec_%s/%s_%d' % (out, name, tag, i), 'wb').write(
                b'\0' + struct.pack('<I', size) + d[i:end])
            # block 0's first stream, when it is compressed (not memcpyed, not a run)
            if not flags & 0x02 and c + 36 <= len(d):
                b0 = c + struct.unpack_from('<i', d, c + 32)[0]
                want = min(bsize, nbytes) // (1 if flags & 0x10 else max(ts, 1))
                if b0 + 4 <= len(d):
                    cs = struct.unpack_from('<i', d, b0)[0]
                    if 0 < cs < want and b0 + 4 + cs <= len(d):
                        open('%s/codec_%s/%s_%d_stream' % (out, name, tag, i), 'wb').write(
                            b'\1' + struct.pack('<I', want) + d[b0 + 4:b0 + 4 + cs])
            count[name] = n + 1
            infile += 1
        i = end if ok else i + 1
print('codec seeds:', count)
PY
# data: each input is a recipe (type, dims, blocks, flags, steps, selection, damage)
i=0
for b in 00 01 02 03 04 05 06 07 08 09 0a 0b; do
    for f in 00 01 07 0d 13 1f 2b 3f 41 7f; do
        printf "\\x$b\\x02\\x03\\x04\\x05\\x03\\x$f\\x02\\x01\\x02\\x00\\x01\\x01\\x02\\x00\\x01\\x01\\x02\\x00\\x01\\x03\\x10\\x00\\x41\\x03" \
            > "$here/corpus/data/seed_$b$f"
        i=$((i + 1))
    done
done
# bp3: each golden BP3 metadata file D.bp of tests/golden/bp3, alone and followed by its data
# sub-file D.bp.dir/D.bp.0 (capped at 16 KiB), then hand-damaged variants of bp3_basic and
# bp3_nostats: footers (ADIOS 1.x, big-endian, offsets out of order, data in the file itself),
# two PGs of one step (the sets of another step then have none), PG steps swapped, entry and set
# lengths past their index, a variable name with a NUL byte, an attribute of an unknown type or
# cut short, bytes cut from the index
mkdir -p "$here/corpus/bp3"
python3 - "$golden/bp3" "$here/corpus/bp3" "$sep" <<'PY'
import glob, os, struct, sys
src, out, sep = sys.argv[1], sys.argv[2], sys.argv[3].encode()

def index(d):
    """The BP3 index of file bytes d: footer offsets, PG entries (offset, length, step offset),
    variable and attribute entries (offset, length, name offset, type offset, sets)."""
    pg, var, attr = struct.unpack_from('<3Q', d, len(d) - 28)
    pgs, at = [], pg + 16
    while at < var:
        ln = struct.unpack_from('<H', d, at)[0] + 2
        nl = struct.unpack_from('<H', d, at + 2)[0]
        sn = struct.unpack_from('<H', d, at + 9 + nl)[0]
        pgs.append((at, ln, at + 11 + nl + sn))
        at += ln
    def entries(lo, hi):
        ents, at = [], lo + 12
        while at < hi:
            el = struct.unpack_from('<I', d, at)[0]
            gl = struct.unpack_from('<H', d, at + 8)[0]
            nl = struct.unpack_from('<H', d, at + 10 + gl)[0]
            t = at + 12 + gl + nl + 2
            sets, s = [], t + 9
            while s < at + 4 + el:
                sets.append(s)
                s += 5 + struct.unpack_from('<I', d, s + 1)[0]
            ents.append((at, el, at + 12 + gl, t, sets))
            at += 4 + el
        return ents
    return pg, var, attr, pgs, entries(var, attr), entries(attr, len(d) - 56)

def put(name, b):
    open(os.path.join(out, name), 'wb').write(bytes(b))

for path in sorted(glob.glob(src + '/*.bp')):
    base = os.path.basename(path)
    name = 'adios2_' + base[:-3]
    d = open(path, 'rb').read()
    put(name, d)
    data = path + '.dir/' + base + '.0'
    if os.path.exists(data):
        put(name + '.data', d + sep + open(data, 'rb').read()[:16384])
    if base not in ('bp3_basic.bp', 'bp3_nostats.bp'):
        continue

    def damaged(what, fn):
        b = bytearray(d)
        fn(b)
        put('%s.%s' % (name, what), b)
    pg, var, attr, pgs, vents, aents = index(d)
    f = len(d) - 56
    damaged('adios1', lambda b: b.__setitem__(f + 55, 2))
    damaged('bigendian', lambda b: b.__setitem__(f + 52, 1))
    damaged('offsets-swapped', lambda b: struct.pack_into('<2Q', b, f + 28, var, pg))
    damaged('in-file', lambda b: b.__setitem__(f + 54, 0))
    # bytes cut from the middle of the variable index (the footer kept)
    put('%s.cut' % name, d[:(var + attr) // 2] + d[(var + attr) // 2 + 7:])
    first, last = pgs[0][2], pgs[-1][2]
    damaged('pg-length-past', lambda b: struct.pack_into('<H', b, pgs[-1][0], 0xfff0))
    s0, s1 = struct.unpack_from('<I', d, first)[0], struct.unpack_from('<I', d, last)[0]

    def swap(b):
        struct.pack_into('<I', b, first, s1)
        struct.pack_into('<I', b, last, s0)
    damaged('pg-steps-swapped', swap)
    damaged('pg-step-twice', lambda b: struct.pack_into('<I', b, last, s0))
    e = vents[0]
    damaged('var-length-past', lambda b: struct.pack_into('<I', b, e[0], 0x7ffffff0))
    damaged('var-name-nul', lambda b: b.__setitem__(e[2], 0))
    damaged('var-set-length-past', lambda b: struct.pack_into('<I', b, e[4][0] + 1, 0xfffff))
    if aents:
        a = aents[0]
        damaged('attr-unknown-type', lambda b: b.__setitem__(a[3], 99))
        damaged('attr-length-short', lambda b: struct.pack_into('<I', b, a[0], a[1] - 3))
PY
