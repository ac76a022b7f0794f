/* Reads of compressed blocks into device memory on the device (docs/compression.md, "The GPU
 * path"): the operator buffer goes up through the pinned pool, its chunk headers and stream
 * sizes are parsed on the host, the device codec decodes every codec stream of the block — or
 * of a group of blocks of one get whose destinations follow each other — as one batch, the
 * assembly kernel places copies and runs, the unshuffle kernel writes the user's buffer. What
 * the device does not decode goes to the CPU decoder (gbp_zdev_read returns 0). */
#include "engine/zdev_read.h"

#include "compress/blosczlib.h"
#include "engine/zdev.h"
#include "io/fileio.h"
#include "memspace/box.h"
#include "memspace/mem_dz.h"

#include <stdatomic.h>
#include <string.h>

static atomic_size_t n_groups; /* groups of several blocks decoded (gbp_zdev_read_groups) */

typedef struct zchunk {
    size_t out, nbytes, bsz, ts;
    int filter; /* 0: the chunk's bytes are final once decoded */
} zchunk;

typedef struct zparse {
    gbp_dz_dstream *s;
    size_t ns, cap;
    zchunk *c;
    size_t nc, capc;
    int codec; /* the device codec code of the coded streams (-1: none yet) */
} zparse;

static int add_stream(zparse *p, int kind, uint64_t src, uint64_t dst, size_t clen, size_t len,
                      int run)
{
    if (p->ns == p->cap) {
        size_t c = p->cap ? 2 * p->cap : 256;
        gbp_dz_dstream *q = gbp_realloc(p->s, c * sizeof *q);
        if (!q) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (%zu streams)", c);
        p->s = q;
        p->cap = c;
    }
    gbp_dz_dstream *d = &p->s[p->ns++];
    memset(d, 0, sizeof *d);
    d->kind = (uint8_t)kind;
    d->src = src;
    d->dst = dst;
    d->clen = (uint32_t)clen;
    d->len = (uint32_t)len;
    d->run = (uint8_t)run;
    return GPUBP_OK;
}

/* A run of len bytes of value v, in pieces a stream length holds. */
static int add_run(zparse *p, uint64_t dst, size_t len, int v)
{
    for (size_t done = 0; done < len; done += (size_t)1 << 30) {
        size_t k = len - done < ((size_t)1 << 30) ? len - done : (size_t)1 << 30;
        GBP_FORWARD_IF_ERROR(add_stream(p, GBP_DSTREAM_RUN, 0, dst + done, 0, k, v));
    }
    return GPUBP_OK;
}

#define NOT_HERE GPUBP_ERR_CODEC /* the device does not decode this: the CPU decoder does */

/* The device codec code of a chunk's codec format (flags bits 5-7), -1 for others. */
static int device_codec(int fmt)
{
    return fmt == 1 ? GBP_BLOSC_LZ4 : fmt == 3 ? GBP_BLOSC_ZLIB : fmt == 4 ? GBP_BLOSC_ZSTD : -1;
}

/* The streams of one normal chunk at c (cb bytes, at offset base of the buffer). */
static int parse_blocks(zparse *p, const uint8_t *c, size_t cb, size_t base, size_t out,
                        size_t nb, size_t bs, size_t ts, int split)
{
    size_t nblocks = nb / bs + (nb % bs != 0);
    if (nblocks > (cb - 32) / 4) return NOT_HERE;
    for (size_t j = 0; j < nblocks; j++) {
        int32_t bstart = (int32_t)gbp_ld32(c + 32 + 4 * j);
        if (bstart <= 0 || (size_t)bstart >= cb) return NOT_HERE;
        size_t len = nb - j * bs < bs ? nb - j * bs : bs;
        size_t nst = split && len == bs ? ts : 1, neblock = len / nst;
        if (neblock == 0 || neblock * nst != len) return NOT_HERE;
        size_t q = (size_t)bstart;
        for (size_t s = 0; s < nst; s++) {
            uint64_t dst = out + j * bs + s * neblock;
            if (cb - q < 4) return NOT_HERE;
            int32_t cs = (int32_t)gbp_ld32(c + q);
            q += 4;
            if (cs <= 0) {
                if (cs < 0 && (q >= cb || !(c[q] & 1) || cs < -255)) return NOT_HERE;
                if (cs < 0) q++;
                GBP_FORWARD_IF_ERROR(add_run(p, dst, neblock, -cs));
                continue;
            }
            if ((size_t)cs > cb - q) return NOT_HERE;
            if ((size_t)cs == neblock) {
                GBP_FORWARD_IF_ERROR(
                    add_stream(p, GBP_DSTREAM_COPY, base + q, dst, neblock, neblock, 0));
            } else {
                /* zlib: an RFC 1950 header without a dictionary, and room for the Adler-32 */
                if (p->codec == GBP_BLOSC_ZLIB &&
                    (cs <= 6 || (c[q] & 0x0f) != 8 || (c[q] >> 4) > 7 || (c[q + 1] & 0x20) ||
                     ((unsigned)c[q] * 256 + c[q + 1]) % 31 != 0))
                    return NOT_HERE;
                GBP_FORWARD_IF_ERROR(
                    add_stream(p, GBP_DSTREAM_CODEC, base + q, dst, (size_t)cs, neblock, 0));
            }
            q += (size_t)cs;
        }
    }
    return GPUBP_OK;
}

/* Cuts the operator buffer into streams for the device; NOT_HERE (no message) for anything the
 * device path does not take, damaged input included: the CPU decoder then reports it. */
static int parse(zparse *p, const uint8_t *z, size_t zlen, size_t raw)
{
    if (zlen < GBP_BLOSC_PREFIX || z[0] != 0 || z[1] != 1 || gbp_ld64(z + 4) != raw ||
        gbp_ld32(z + 15) != 0)
        return NOT_HERE;
    size_t count = gbp_ld32(z + 19), at = GBP_BLOSC_PREFIX, out = 0;
    if (count == 0) {
        if (zlen != GBP_BLOSC_PREFIX + raw || raw > UINT32_MAX) return NOT_HERE;
        return raw ? add_stream(p, GBP_DSTREAM_COPY, at, 0, raw, raw, 0) : GPUBP_OK;
    }
    for (size_t k = 0; k < count; k++) {
        const uint8_t *c = z + at;
        if (zlen - at < 32) return NOT_HERE;
        int version = c[0], flags = c[2], b2 = c[31];
        size_t ts = c[3];
        int32_t nb = (int32_t)gbp_ld32(c + 4), bs = (int32_t)gbp_ld32(c + 8),
                cb = (int32_t)gbp_ld32(c + 12);
        /* Blosc2 chunks (3..5) with the 32-byte header; no dictionary, lazy or instrumented */
        if (version < 3 || version > 5 || (flags & 0x05) != 0x05 || ts == 0 || cb < 32 ||
            (size_t)cb > zlen - at || nb < 0 || (size_t)nb > raw - out || bs <= 0 ||
            (nb > 0 && bs > nb) || (b2 & 0x89))
            return NOT_HERE;
        int special = (b2 >> 4) & 7;
        if (special == 1 || special == 4) { /* zeros (uninitialised reads as zeros) */
            GBP_FORWARD_IF_ERROR(add_run(p, out, (size_t)nb, 0));
        } else if (special) {
            return NOT_HERE; /* NaN, repeated value */
        } else if (flags & 0x02) { /* memcpyed */
            if (cb != nb + 32) return NOT_HERE;
            if (nb) GBP_FORWARD_IF_ERROR(add_stream(p, GBP_DSTREAM_COPY, at + 32, out, (size_t)nb, (size_t)nb, 0));
        } else if (nb == 0) {
            if (cb != 32) return NOT_HERE;
        } else {
            for (int f = 0; f < 5; f++)
                if (c[16 + f] != 0 && c[16 + f] != 4) return NOT_HERE;
            int filter = c[21];
            if (filter > 2) return NOT_HERE;
            if (filter == 1 && ts == 1) filter = 0; /* byte shuffle of bytes: nothing */
            if (filter == 1 && bs % (int32_t)ts != 0) return NOT_HERE; /* the kernel's rule */
            int codec = device_codec(flags >> 5);
            if (codec < 0 || (p->codec >= 0 && codec != p->codec)) return NOT_HERE;
            p->codec = codec;
            GBP_FORWARD_IF_ERROR(parse_blocks(p, c, (size_t)cb, at, out, (size_t)nb, (size_t)bs,
                                              ts, !(flags & 0x10)));
            if (filter) {
                if (p->nc == p->capc) {
                    size_t n2 = p->capc ? 2 * p->capc : 8;
                    zchunk *q = gbp_realloc(p->c, n2 * sizeof *q);
                    if (!q) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (chunks)");
                    p->c = q;
                    p->capc = n2;
                }
                p->c[p->nc++] = (zchunk){out, (size_t)nb, (size_t)bs, ts, filter};
            }
        }
        at += (size_t)cb;
        out += (size_t)nb;
    }
    return at == zlen && out == raw ? GPUBP_OK : NOT_HERE;
}

/* The n operator buffers of g, back to back in z (block k's after those before it): parsed
 * one after the other into p, each one's streams and chunks moved to its place in the group's
 * buffer and output. */
static int parse_group(zparse *p, const uint8_t *z, const gbp_zblk *g, size_t n)
{
    size_t zo = 0, ro = 0;
    for (size_t k = 0; k < n; k++) {
        size_t s0 = p->ns, c0 = p->nc;
        GBP_FORWARD_IF_ERROR(parse(p, z + zo, g[k].zlen, g[k].raw));
        for (size_t i = s0; i < p->ns; i++) {
            if (p->s[i].kind != GBP_DSTREAM_RUN) p->s[i].src += zo;
            p->s[i].dst += ro;
        }
        for (size_t j = c0; j < p->nc; j++) p->c[j].out += ro;
        zo += g[k].zlen;
        ro += g[k].raw;
    }
    return GPUBP_OK;
}

/* The operator buffers up to the device through the pinned slots: out of z (host memory), or
 * (fd >= 0) read from the file into the slot, then copied into z. */
typedef struct zup {
    uint8_t *z;
    int fd;
    uint64_t off;
} zup;

static int upload_fill(void *ctx, uint8_t *slot, size_t off, size_t len)
{
    const zup *u = ctx;
    if (u->fd < 0) {
        memcpy(slot, u->z + off, len);
        return GPUBP_OK;
    }
    GBP_FORWARD_IF_ERROR(gbp_pread_all(u->fd, slot, len, u->off + off, "data file"));
    memcpy(u->z + off, slot, len);
    return GPUBP_OK;
}

/* In pieces, each a job of its own, so that the I/O threads read (and copy) one group at once:
 * one piece per thread, of GBP_ZDEV_UPLOAD_MIN to GBP_ZDEV_UPLOAD bytes (a sub-block of 16 MiB
 * stores ~12 MiB of lz4, three 4 MiB pieces: three threads of sixteen). */
#define GBP_ZDEV_UPLOAD ((size_t)4 << 20)
#define GBP_ZDEV_UPLOAD_MIN ((size_t)512 << 10)

static size_t upload_piece(const gbp_params *p, size_t zlen)
{
    size_t t = (size_t)gbp_params_io_threads(p), q = (zlen + t - 1) / t; /* t >= 1 */
    q = (q + 65535) / 65536 * 65536;
    if (q < GBP_ZDEV_UPLOAD_MIN) return GBP_ZDEV_UPLOAD_MIN;
    return q > GBP_ZDEV_UPLOAD ? GBP_ZDEV_UPLOAD : q;
}

static size_t group_zlen(const gbp_zblk *g, size_t n, size_t *raw)
{
    size_t z = 0, r = 0;
    for (size_t k = 0; k < n; k++) {
        z += g[k].zlen;
        r += g[k].raw;
    }
    if (raw) *raw = r;
    return z;
}

/* Queues the pieces of the n buffers g, into z (host) and din (device) back to back (their
 * arguments in *pieces, to be freed once the jobs are done). */
static int upload_queue(gpubp_file *f, uint8_t *z, const gbp_zblk *g, size_t n, uint8_t *din,
                        zup **pieces)
{
    gbp_mem *m = f->mem;
    size_t piece = upload_piece(&f->params, group_zlen(g, n, NULL)), np = 0;
    for (size_t k = 0; k < n; k++) np += g[k].zlen / piece + 1;
    zup *pc = *pieces = gbp_malloc(np * sizeof *pc);
    if (!pc) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (%zu pieces)", np);
    int rc = GPUBP_OK;
    size_t i = 0, zo = 0;
    for (size_t k = 0; rc == GPUBP_OK && k < n; zo += g[k].zlen, k++) {
        for (size_t o = 0; rc == GPUBP_OK && o < g[k].zlen; i++, o += piece) {
            size_t len = g[k].zlen - o < piece ? g[k].zlen - o : piece;
            pc[i] = (zup){z + zo + o, g[k].fd, g[k].off + o};
            gbp_box b;
            gbp_box_dense(&b, 1, &len);
            rc = gbp_mem_read_fill(m, upload_fill, &pc[i], 1, &b, din + zo + o, &b);
        }
    }
    return rc;
}

static int upload(gpubp_file *f, uint8_t *z, const gbp_zblk *g, size_t n, uint8_t *din)
{
    zup *pc = NULL;
    int rc = upload_queue(f, z, g, n, din, &pc);
    int rc2 = pc ? gbp_mem_sync(f->mem) : GPUBP_OK; /* pc is read until every fill is done */
    gbp_free(pc);
    return rc != GPUBP_OK ? rc : rc2;
}

/* Decodes the parsed buffers on the device into dst; din: the buffers on the device already
 * (scratch 0), else NULL: uploaded here out of z. */
static int zdev_decode(gpubp_file *f, const gbp_dzops *ops, void *dctx, const zparse *p,
                       uint8_t *z, size_t zlen, size_t raw, uint8_t *dst, uint8_t *din)
{
    void *zc = NULL;
    uint8_t *scratch = NULL;
    double t = gbp_zdev_lap_start(f->mem);
    int rc = gbp_mem_dz_state(f->mem, ops, dctx, &zc);
    if (rc == GPUBP_OK) rc = ops->begin(zc);
    if (rc == GPUBP_OK && p->nc) rc = gbp_mem_dz_scratch(f->mem, 1, raw, (void **)&scratch);
    if (rc == GPUBP_OK && !din) { /* the compressed bytes up through the pinned pool */
        gbp_zblk u = {-1, 0, zlen, raw, 0};
        rc = gbp_mem_dz_scratch(f->mem, 0, zlen, (void **)&din);
        if (rc == GPUBP_OK) rc = upload(f, z, &u, 1, din);
    }
    gbp_zdev_lap(f->mem, GBP_DZT_R_UPLOAD, &t);
    uint8_t *to = p->nc ? scratch : dst;
    if (rc == GPUBP_OK) rc = ops->decode(zc, p->codec < 0 ? GBP_BLOSC_LZ4 : p->codec, din, to, p->s, p->ns);
    gbp_zdev_lap(f->mem, GBP_DZT_R_DECODE, &t);
    if (rc == GPUBP_OK && p->nc) { /* unshuffle the filtered chunks, copy the others */
        size_t out = 0;
        for (size_t k = 0; rc == GPUBP_OK && k <= p->nc; k++) {
            size_t end = k < p->nc ? p->c[k].out : raw;
            for (size_t done = out; rc == GPUBP_OK && done < end; done += (size_t)1 << 30) {
                size_t n = end - done < ((size_t)1 << 30) ? end - done : (size_t)1 << 30;
                gbp_dz_seg g = {.dst = done, .src = (uint64_t)(uintptr_t)(scratch + done),
                                .len = (uint32_t)n, .kind = GBP_SEG_DEV};
                rc = ops->assemble(zc, dst, &g, 1);
            }
            if (k == p->nc || rc != GPUBP_OK) break;
            const zchunk *c = &p->c[k];
            rc = ops->filter(zc, c->filter, 1, scratch + c->out, dst + c->out, c->nbytes, c->bsz, c->ts);
            out = c->out + c->nbytes;
        }
    }
    int rc2 = gbp_mem_dev_sync(f->mem); /* nothing may still use the scratch */
    gbp_zdev_lap(f->mem, GBP_DZT_R_PLACE, &t);
    return rc == GPUBP_OK ? rc2 : rc;
}

/* Decodes the n buffers of g (back to back in z; din: on the device already, else NULL) into
 * dst, which the blocks fill one after the other. */
static int zdev_read(gpubp_file *f, uint8_t *z, const gbp_zblk *g, size_t n, uint8_t *dst,
                     uint8_t *din)
{
    zparse p;
    memset(&p, 0, sizeof p);
    p.codec = -1;
    size_t raw, zlen = group_zlen(g, n, &raw);
    double t = gbp_zdev_lap_start(f->mem);
    int rc = parse_group(&p, z, g, n);
    gbp_zdev_lap(f->mem, GBP_DZT_R_PARSE, &t);
    if (rc == NOT_HERE) {
        gbp_error_clear();
        gbp_mem_dz_note(f->mem, 1, 0, 0, "a compressed block the device does not decode "
                        "(its codec or chunk layout): the CPU decoder");
        rc = 0;
    } else if (rc == GPUBP_OK) {
        const gbp_dzops *ops;
        void *dctx;
        rc = gbp_zdev_choose(f, p.codec < 0 ? GBP_BLOSC_LZ4 : p.codec, 1, 0,
                             "a compressed block read", &ops, &dctx);
        if (rc == 1) {
            rc = zdev_decode(f, ops, dctx, &p, z, zlen, raw, dst, din);
            if (rc == GPUBP_OK) {
                for (size_t k = 0; k < n; k++) {
                    gbp_mem_dz_note(f->mem, 1, g[k].raw, g[k].zlen, NULL);
                    gbp_zdev_count_read();
                }
                if (n > 1) atomic_fetch_add(&n_groups, 1);
                rc = 1;
            } else if (rc == GPUBP_ERR_FORMAT) { /* damaged: the CPU decoder says where */
                gbp_error_clear();
                rc = 0;
            }
        }
    }
    gbp_free(p.s);
    gbp_free(p.c);
    return rc;
}

int gbp_zdev_read(gpubp_file *f, const uint8_t *z, size_t zlen, size_t raw, uint8_t *dst)
{
    if (f->params.compress_device < 0) return 0;
    gbp_zblk one = {-1, 0, zlen, raw, 0};
    return zdev_read(f, (uint8_t *)(uintptr_t)z, &one, 1, dst, NULL);
}

static atomic_size_t n_ahead; /* blocks read ahead and used (gbp_zdev_read_ahead_count) */

size_t gbp_zdev_read_ahead_count(void) { return atomic_load(&n_ahead); }

size_t gbp_zdev_read_groups(void) { return atomic_load(&n_groups); }

/* Off (0: one block a batch) until a GPU has run the groups: GPUBP_ZDEV_READ_GROUP_MIB=N turns
 * them on, N MiB a group (128: the batch of the writes, zdev.c GBP_ZDEV_BATCH). An H100 (run 121)
 * decoded a 32 MiB sub-block of lz4 in ~0.95 ms and a 16 MiB one in ~0.9 ms, zlib 3.3 and 3.0
 * ms: a batch of one sub-block leaves most of the device idle, the time is the slowest stream's. */
size_t gbp_zdev_read_group_bytes(void)
{
    return gbp_env_mib("GPUBP_ZDEV_READ_GROUP_MIB", GBP_ZDEV_ENV_MAX_MIB, 0);
}

/* The next group's operator buffers, read into host buffer 1 and device scratch 2 by the I/O
 * threads while this group decodes; what fails here is left to the group's own read (an error of
 * the jobs is reported by the wait that takes them, and names the data file and offset). */
static void read_ahead(gpubp_file *f, const gbp_zahead *next)
{
    if (!next || next->n == 0 || next->n > GBP_ZGROUP_MAX || f->rd.zahead.pending) return;
    size_t len = group_zlen(next->b, next->n, NULL);
    if (len == 0) return;
    uint8_t *z = gbp_zdev_inbuf(f, len, 1), *din = NULL;
    int rc = z ? gbp_mem_dz_scratch(f->mem, 2, len, (void **)&din) : GPUBP_ERR_NOMEM;
    zup *pc = NULL;
    if (rc == GPUBP_OK) rc = upload_queue(f, z, next->b, next->n, din, &pc);
    if (rc != GPUBP_OK && !pc) { /* nothing queued: the group reads as usual */
        gbp_error_clear();
        return;
    }
    /* queued, or queued in part: the jobs run out, and are waited for, either way */
    f->rd.zahead.pending = 1;
    f->rd.zahead.g = *next;
    if (rc != GPUBP_OK) f->rd.zahead.g.n = 0; /* not to be taken */
    f->rd.zahead.pieces = pc;
    if (rc != GPUBP_OK) gbp_error_clear();
}

int gbp_zdev_read_ahead_wait(gpubp_file *f)
{
    if (!f->rd.zahead.pending) return GPUBP_OK;
    int rc = gbp_mem_sync(f->mem);
    gbp_free(f->rd.zahead.pieces);
    f->rd.zahead.pieces = NULL;
    f->rd.zahead.pending = 0;
    return rc;
}

/* 1: the group g was read ahead, now in host buffer 0 and device scratch 0; 0: it was not
 * (anything read ahead is waited for and dropped); < 0: its read failed. */
static int take_ahead(gpubp_file *f, const gbp_zblk *g, size_t n)
{
    if (!f->rd.zahead.pending) return 0;
    const gbp_zahead *a = &f->rd.zahead.g;
    int match = a->n == n;
    for (size_t k = 0; match && k < n; k++)
        match = a->b[k].fd == g[k].fd && a->b[k].off == g[k].off && a->b[k].zlen == g[k].zlen;
    GBP_FORWARD_IF_ERROR(gbp_zdev_read_ahead_wait(f));
    if (!match) return 0;
    gbp_zdev_inbuf_swap(f);
    gbp_mem_dz_scratch_swap(f->mem, 0, 2);
    atomic_fetch_add(&n_ahead, n);
    return 1;
}

int gbp_zdev_read_group(gpubp_file *f, const gbp_zblk *g, size_t n, uint8_t *dst, uint8_t **zp,
                        const gbp_zahead *next)
{
    void *dctx;
    uint8_t *din = NULL;
    GBP_RETURN_ERROR_IF(n == 0 || n > GBP_ZGROUP_MAX, GPUBP_ERR_INVALID_ARG,
                        "a group of %zu compressed blocks (1 to %d)", n, GBP_ZGROUP_MAX);
    double t = gbp_zdev_lap_start(f->mem);
    int have = take_ahead(f, g, n);
    if (have < 0) return have;
    size_t zlen = group_zlen(g, n, NULL);
    uint8_t *z = *zp = gbp_zdev_inbuf(f, zlen, 0);
    if (!z) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (decompression)");
    if (f->params.compress_device < 0 || gbp_mem_dev_ctx(f->mem, &dctx, NULL) != GPUBP_OK) {
        gbp_error_clear(); /* no device: the CPU decoder says so if it matters */
        for (size_t k = 0, zo = 0; k < n; zo += g[k].zlen, k++)
            GBP_FORWARD_IF_ERROR(gbp_zdev_fetch(f, g[k].fd, g[k].off, g[k].zlen, z + zo));
        return 0;
    }
    int rc = gbp_mem_dz_scratch(f->mem, 0, zlen, (void **)&din);
    if (rc == GPUBP_OK && !have) rc = upload(f, z, g, n, din);
    gbp_zdev_lap(f->mem, GBP_DZT_R_FILE, &t);
    if (rc != GPUBP_OK) return rc;
    read_ahead(f, next);
    return zdev_read(f, z, g, n, dst + g[0].doff, din);
}

int gbp_zdev_fetch(gpubp_file *f, int fd, uint64_t off, size_t n, uint8_t *z)
{
    gbp_box b;
    gbp_box_dense(&b, 1, &n);
    int rc = gbp_mem_read(f->mem, GPUBP_MEM_HOST, fd, off, 1, &b, z, &b);
    int rc2 = gbp_mem_sync(f->mem);
    return rc != GPUBP_OK ? rc : rc2;
}
