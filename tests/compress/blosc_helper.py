#!/usr/bin/env python3
# Test helper for tests/compress, built on the project's own independent checkers in
# tests/support (bp4verify.py: a BP4 reader; bloscverify.py: a blosc/zlib decoder) and the golden
# buffers of tests/golden/blosc_layouts (made by the real Blosc2 2.19.1, tests/golden/README.md).
#   blosc_helper.py TESTS list DIR.bp      one line per array block of a BP4 dataset:
#       name typeid step payload_offset input_size output_size ndims count.. start.. shape..
#       (output_size 0 and no operator: the block is not compressed)
#   blosc_helper.py TESTS check MANIFEST   each line "data ours typesize level shuffle max_chunk":
#       decodes `ours` with bloscverify.decode_adios and compares it with `data`. Prints one line
#       per case; exit 1 on any mismatch. (--exact is accepted and changes nothing: there is no
#       second encoder to compare bytes with; test_compress_interop compares our encoder's bytes
#       with ADIOS2's own payloads.)
#   blosc_helper.py TESTS gen OUTDIR       writes the reader-acceptance buffers our writer never
#       makes (split streams, user block size, legacy single chunk, pre-2.8 payload, many chunks)
#       and OUTDIR/list: "name layout(normal|pre28) typesize"; NAME.data is the input, NAME.buf
#       the buffer.
# TESTS is the tests/ folder of the source tree.
import os
import shutil
import sys

sys.dont_write_bytecode = True


def main(argv):
    tests, mode = argv[1], argv[2]
    sys.path.insert(0, os.path.join(tests, "support"))
    if mode == 'list':
        import bp4verify
        ck = bp4verify.Checker(argv[3], False, False)
        ck.run()
        if ck.errors:
            print("\n".join(ck.errors), file=sys.stderr)
            return 1
        for line in bp4verify.block_lines(ck):
            print(line)
        return 0
    if mode == 'check':
        import bloscverify as bv
        bad = n = 0
        for line in open(argv[3]):
            f = line.split()
            if not f:
                continue
            data, ours = open(f[0], 'rb').read(), open(f[1], 'rb').read()
            ts, lv, sh, mc = (int(x) for x in f[2:6])
            n += 1
            try:
                back, info = bv.decode_adios(ours, len(data))
                ok = back == data
            except bv.BloscError as e:
                ok, info = False, {'layout': 'error: %s' % e}
            bad += not ok
            print('%s %s ts=%d level=%d shuffle=%d max_chunk=%d n=%d ours=%d %s'
                  % ('ok  ' if ok else 'FAIL', os.path.basename(f[1]), ts, lv, sh, mc, len(data),
                     len(ours), info.get('layout')))
        print('%d case(s): %d decode failure(s)' % (n, bad))
        return 1 if bad else 0
    if mode == 'gen':
        src = os.path.join(tests, "golden", "blosc_layouts")
        out = argv[3]
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, 'list'), 'w') as lst:
            for line in open(os.path.join(src, 'list')):
                name, layout, ts, datafile = line.split()
                shutil.copyfile(os.path.join(src, datafile), os.path.join(out, name + '.data'))
                shutil.copyfile(os.path.join(src, name + '.buf'), os.path.join(out, name + '.buf'))
                lst.write('%s %s %s\n' % (name, layout, ts))
        return 0
    print('unknown mode', file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv))
