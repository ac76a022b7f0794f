#!/usr/bin/env python3
# Test helper for tests/compress, built on the independent codec shared/tools/blosczlib.py.
#   blosc_helper.py TOOLS list DIR.bp      one line per block of a BP4 dataset:
#       name typeid step payload_offset input_size output_size ndims count.. start.. shape..
#       (output_size 0 and no operator: the block is not compressed)
#   blosc_helper.py TOOLS check MANIFEST   each line "data ours typesize level shuffle max_chunk":
#       decodes `ours` with decode_adios_blosc and compares with `data`; encodes `data` with
#       encode_adios_blosc and compares the bytes with `ours`. Prints one line per case; exit 1 on
#       any decode mismatch (byte differences are reported, counted, and fail only with --exact).
#   blosc_helper.py TOOLS gen OUTDIR       writes reader-acceptance buffers our writer never makes
#       (split streams, user block size, legacy single chunk, pre-2.8 payload) and OUTDIR/list:
#       "name layout(normal|pre28) typesize"; NAME.data is the input, NAME.buf the buffer.
import os
import struct
import sys

sys.dont_write_bytecode = True


def main(argv):
    tools, mode = argv[1], argv[2]
    sys.path.insert(0, tools)
    import blosczlib as bz
    if mode == 'list':
        bp = bz._bp4()
        o = bp.read_bp4(argv[3])
        for st in o['steps']:
            for v in st['vars']:
                for cs in v['sets']:
                    if 'value' in cs:
                        continue
                    insz = outsz = 0
                    if 'op' in cs:
                        insz, outsz = struct.unpack('<QQ', cs['op']['md'][:16])
                    cnt = cs.get('count_', [])
                    print(v['name'], v['type'], st['step'], cs['payload'], insz, outsz, len(cnt),
                          *cnt, *cs.get('start', []), *cs.get('shape', []))
        return 0
    if mode == 'check':
        exact = '--exact' in argv
        bad = diff = n = 0
        for line in open(argv[3]):
            f = line.split()
            if not f:
                continue
            data, ours = open(f[0], 'rb').read(), open(f[1], 'rb').read()
            ts, lv, sh, mc = (int(x) for x in f[2:6])
            n += 1
            try:
                back, info = bz.decode_adios_blosc(ours, len(data))
                dec_ok = back == data
            except bz.BloscError as e:
                dec_ok, info = False, {'layout': 'error: %s' % e}
            ref = bz.encode_adios_blosc(data, ts, lv, sh, max_chunk=mc or bz.MAX_BUFFERSIZE)
            same = ref == ours
            if not same:
                # The tool, like Blosc2 2.19, writes a special-zero chunk for an all-zero piece
                # whose size is not a multiple of typesize, which Blosc2 2.19 (and the tool)
                # cannot read back; libgpubp keeps the zero-run chunk there. Compare only
                # where the tool's own output is readable.
                try:
                    bz.decode_adios_blosc(ref, len(data))
                except bz.BloscError:
                    same = True
            bad += not dec_ok
            diff += not same
            print('%s %s ts=%d level=%d shuffle=%d n=%d ours=%d tool=%d %s%s'
                  % ('ok  ' if dec_ok else 'FAIL', os.path.basename(f[1]), ts, lv, sh, len(data),
                     len(ours), len(ref), info.get('layout'), '' if same else ' BYTES-DIFFER'))
        print('%d case(s): %d decode failure(s), %d differ from the tool encoder' % (n, bad, diff))
        return 1 if bad or (exact and diff) else 0
    if mode == 'gen':
        out = argv[3]
        os.makedirs(out, exist_ok=True)
        ints = struct.pack('<5000i', *[(i * 7) % 97 - 40 for i in range(5000)])
        dbl = struct.pack('<3001d', *[((i % 97) - 40) * 0.25 + i * 1e-3 for i in range(3001)])
        cases = []
        for sh in (0, 1, 2):
            cases.append(('split_%d' % sh, 'normal', ints, 4,
                          bz.encode_adios_blosc(ints, 4, 1, sh, splitmode=bz.ALWAYS_SPLIT)))
            cases.append(('split_odd_%d' % sh, 'normal', dbl, 8,
                          bz.encode_adios_blosc(dbl, 8, 1, sh, blocksize=1000,
                                                splitmode=bz.ALWAYS_SPLIT)))
            cases.append(('userblock_%d' % sh, 'normal', dbl, 8,
                          bz.encode_adios_blosc(dbl, 8, 3, sh, blocksize=1000)))
            b = bz.encode_adios_blosc(ints, 4, 1, sh)
            cases.append(('legacy_%d' % sh, 'normal', ints, 4, b[:15] + b[23:]))
            cases.append(('pre28_%d' % sh, 'pre28', ints, 4, b[15:]))
            cases.append(('multichunk_%d' % sh, 'normal', ints + dbl, 8,
                          bz.encode_adios_blosc(ints + dbl, 8, 1, sh, max_chunk=10007)))
        with open(os.path.join(out, 'list'), 'w') as lst:
            for name, layout, data, ts, buf in cases:
                open(os.path.join(out, name + '.data'), 'wb').write(data)
                open(os.path.join(out, name + '.buf'), 'wb').write(buf)
                lst.write('%s %s %d\n' % (name, layout, ts))
        return 0
    print('unknown mode', file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv))
