/* The serial writer's blocks of a step: put -> block, stripes and offsets, payloads, [VMD
 * headers, perform, discard. */
#include "engine/writer.h"

#include "engine/zdev.h"

#include "engine/dataset.h"
#include "engine/handles.h"
#include "engine/zblock.h"

#include "common/params.h"
#include "compress/blosczlib.h"
#include "format/bp4_encode.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* subfiles=auto: as many subfiles as I/O threads (io_threads, else pool_slots), at most this */
#define GBP_AUTO_SUBFILES_MAX 64

void gbp_writer_layout(gpubp_file *f)
{
    const gbp_params *p = &f->params;
    /* parallel writers: one subfile per group unless asked (the groups spread the ranks) */
    int nauto = gbp_params_io_threads(p);
    if (nauto > GBP_AUTO_SUBFILES_MAX) nauto = GBP_AUTO_SUBFILES_MAX;
    f->wr.sub_auto = p->subfiles <= 0 && !f->comm && nauto > 1;
    f->wr.nsub = p->subfiles > 0 ? p->subfiles : f->wr.sub_auto ? nauto : 1;
}

int gbp_writer_open(gpubp_file *f)
{
    f->wr.async = f->params.async_commit;
    int have;
    GBP_FORWARD_IF_ERROR(gbp_writer_open_metadata(f, &have));
    return gbp_open_subfiles(f, !have, 1);
}

void gbp_writer_free(gpubp_file *f)
{
    for (int k = 0; f->wr.data_fd && k < f->wr.nsub; k++)
        if (f->wr.data_fd[k] >= 0) close(f->wr.data_fd[k]);
    if (f->md0_fd >= 0) close(f->md0_fd);
    if (f->wr.idx_fd >= 0) close(f->wr.idx_fd);
    gbp_free(f->wr.data_fd);
    gbp_free(f->wr.data_size);
    gbp_free(f->wr.pg_start);
    gbp_free(f->wr.cursor);
    gbp_free(f->wr.pg_nvars);
    gbp_free(f->wr.data_has_header);
    gbp_discard_step(f);
    gbp_buf_free(&f->wr.defer);
    gbp_free(f->wr.dspans);
    gbp_free(f->wr.zout);
    gbp_free(f->wr.blocks);
    for (size_t i = 0; i < f->wr.nattrs; i++) {
        gbp_attr_def *a = &f->wr.attrs[i];
        gbp_free(a->name);
        gbp_free(a->data);
        for (size_t j = 0; a->strings && j < a->n; j++) gbp_free(a->strings[j]);
        gbp_free(a->strings);
    }
    gbp_free(f->wr.attrs);
}

size_t gbp_assign_block(gpubp_file *f, gbp_wblock *wb)
{
    gpubp_variable *v = wb->var;
    wb->meta.dims = wb->dimstore;
    /* the subfile with the least data in this step; subfiles=auto: data.0 and those holding
     * data in this step only, unless the block is large enough to go to a file of its own (a
     * sub-block of a split put always is) */
    int k = 0, wide = !f->wr.sub_auto || wb->payload_len >= GBP_STRIPE_MIN || wb->meta.split;
    for (int j = 1; j < f->wr.nsub; j++)
        if ((wide || f->wr.pg_nvars[j] > 0) &&
            f->wr.cursor[j] - f->wr.pg_start[j] < f->wr.cursor[k] - f->wr.pg_start[k])
            k = j;
    size_t hs = bp4_vmd_header_size(strlen(v->name), v->type, wb->meta.ndims, wb->meta.has_minmax);
    wb->subfile = (uint32_t)k;
    wb->meta.subfile = (uint32_t)(f->wr.sub_base + k);
    wb->meta.vmd_offset = f->wr.cursor[k];
    wb->meta.payload_offset = f->wr.cursor[k] + hs;
    return hs;
}

void gbp_advance_block(gpubp_file *f, gbp_wblock *wb, size_t hs)
{
    f->wr.cursor[wb->subfile] += hs + wb->payload_len;
    f->wr.pg_nvars[wb->subfile]++;
    wb->performed = 1;
}

/* The payload of an assigned block, at its payload offset - delta of fd. */
int gbp_write_payload(gpubp_file *f, gbp_wblock *wb, int fd, uint64_t delta, const char *p)
{
    gpubp_variable *v = wb->var;
    uint64_t at = wb->meta.payload_offset - delta;
    if (gbp_kind_is_value(v->kind)) {
        if (v->type == GPUBP_TYPE_STRING) {
            uint8_t *tmp = gbp_malloc(2 + (size_t)wb->meta.str_len);
            GBP_CHECK_ALLOC(tmp);
            uint16_t l = (uint16_t)wb->meta.str_len;
            memcpy(tmp, &l, 2);
            memcpy(tmp + 2, wb->meta.str, wb->meta.str_len);
            int rc = gbp_pwrite_all(fd, tmp, 2 + (size_t)l, at, p);
            gbp_free(tmp);
            return rc;
        }
        return gbp_pwrite_all(fd, wb->meta.mm, gbp_type_size(v->type), at, p);
    }
    if (wb->payload_len == 0) return GPUBP_OK;
    /* copied aside (parallel writers): bytes and min/max are final */
    if (wb->owned) return gbp_pwrite_all(fd, wb->owned, wb->payload_len, at, p);
    return gbp_mem_write(f->mem, wb->space, fd, at, wb->data, v->type, &wb->box, wb->meta.has_minmax ? wb->meta.mm : NULL,
                         wb->meta.has_minmax ? wb->meta.mm + 16 : NULL);
}

static int gbp_writer_perform_block(gpubp_file *f, gbp_wblock *wb)
{
    gpubp_variable *v = wb->var;
    size_t hs = gbp_assign_block(f, wb);
    int k = (int)wb->subfile;
    GBP_FORWARD_IF_ERROR(gbp_dataset_use_subfile(f, k));
    char p[4200];
    gbp_sub_name(f, k, p, sizeof p);
    if (v->op && wb->payload_len > 0 && !gbp_kind_is_value(v->kind)) {
        /* The compressed length is known only once the payload is written. */
        int rc = gbp_write_compressed(f, wb, f->wr.data_fd[k], p);
        if (rc != GPUBP_OK) return rc;
        gbp_advance_block(f, wb, hs);
        return GPUBP_OK;
    }
    gbp_advance_block(f, wb, hs);
    return gbp_write_payload(f, wb, f->wr.data_fd[k], 0, p);
}

int gbp_writer_data_bytes(gpubp_file *f, int k, uint64_t off, const void *p, size_t n)
{
    if (!f->wr.async) {
        char name[4200];
        return gbp_pwrite_all(f->wr.data_fd[k], p, n, off, gbp_sub_name(f, k, name, sizeof name));
    }
    GBP_FORWARD_IF_ERROR(gbp_grow((void **)&f->wr.dspans, &f->wr.cap_dspans, f->wr.ndspans + 1,
                                  sizeof *f->wr.dspans));
    gbp_deferred *d = &f->wr.dspans[f->wr.ndspans];
    d->fd = f->wr.data_fd[k];
    d->num = f->wr.sub_base + k;
    d->off = off;
    d->at = f->wr.defer.len;
    d->len = n;
    gbp_buf_put(&f->wr.defer, p, n);
    if (!gbp_buf_ok(&f->wr.defer)) return gbp_nomem();
    f->wr.ndspans++;
    return GPUBP_OK;
}

/* After gbp_mem_sync: min/max are known, so the [VMD headers can be written (to fd[k] at
 * offset - delta[k] for stripe k; delta NULL: the serial writer's subfiles,
 * through gbp_writer_data_bytes). */
int gbp_write_headers(gpubp_file *f, const int *fd, const uint64_t *delta)
{
    gbp_buf b;
    gbp_buf_init(&b);
    int rc = GPUBP_OK;
    for (size_t i = 0; i < f->wr.nblocks && rc == GPUBP_OK; i++) {
        gbp_wblock *wb = &f->wr.blocks[i];
        if (!wb->performed || wb->header_written) continue;
        wb->meta.dims = wb->dimstore;
        wb->meta.op = wb->meta.op ? &wb->opstore : NULL;
        gbp_buf_reset(&b);
        bp4_put_vmd_header(&b, wb->var->member_id, wb->var->name, wb->var->type, &wb->meta,
                           wb->var->kind == GPUBP_SHAPE_LOCAL_ARRAY, wb->payload_len);
        if (!gbp_buf_ok(&b)) {
            rc = gbp_nomem();
            break;
        }
        char p[4200];
        uint64_t d = delta ? delta[wb->subfile] : 0;
        if (!delta) /* the serial writer's subfiles */
            rc = gbp_writer_data_bytes(f, (int)wb->subfile, wb->meta.vmd_offset, b.data, b.len);
        else
            rc = gbp_pwrite_all(fd[wb->subfile], b.data, b.len, wb->meta.vmd_offset - d,
                                gbp_sub_name(f, (int)wb->subfile, p, sizeof p));
        wb->header_written = 1;
    }
    gbp_buf_free(&b);
    return rc;
}

/* Compressed sub-blocks: GBP_ZSPLIT_MIN bytes at least (GPUBP_ZDEV_SPLIT_MIB: MiB, 1 or more).
 * 32 MiB: on the H200 (run 50, 256 MiB steps, lz4 / zstd / zlib), 32 MiB sub-blocks wrote
 * 1.12-1.23x as fast as 64 MiB ones and read as fast or faster (the device codes consecutive
 * sub-blocks in one batch, zdev.c launch_group, so smaller ones cost no coding rate; more of
 * them spread a step's writes over more files); 16 MiB ones wrote no faster than 32 and read
 * slower (each block is read and decoded on its own). At 1 GiB steps the subfiles cap the count
 * first (16 sub-blocks of 64 MiB either way). */
#define GBP_ZSPLIT_MIN ((uint64_t)32 << 20)

static uint64_t zsplit_min(void)
{
    return gbp_env_mib("GPUBP_ZDEV_SPLIT_MIB", GBP_ZDEV_ENV_MAX_MIB, (size_t)GBP_ZSPLIT_MIN);
}

/* Tapered compressed sub-blocks (a tuning knob, off by default): with GPUBP_ZDEV_TAPER=P (1-99)
 * each sub-block of a split compressed device put is P % of the one before, the last one
 * GPUBP_ZDEV_TAPER_MIB (16) MiB at least. The device codes the sub-blocks in order and each is
 * written into its file (one file: ~4.8 GB/s on the H200) once coded, so a step ends with the
 * write of its last sub-blocks after the device has coded everything: with equal sub-blocks that
 * tail is a whole sub-block's write (10 ms of a 256 MiB step's ~33 ms for lz4). Sub-blocks that
 * shrink as q = P/100 = 1 - code/(code + write) (time per input byte; ~70 for lz4, ~60 for zstd
 * on the H200) end their writes together. */
static double ztaper(void)
{
    return (double)gbp_env_long("GPUBP_ZDEV_TAPER", 1, 99, 100) / 100.0;
}

/* Whether block wb is a compressed put from device memory (the GPU codec path's input: one
 * contiguous run), whose sub-blocks follow the compressed rules. */
static int zsplit_block(const gbp_wblock *wb)
{
    return wb->var->op && wb->space == GPUBP_MEM_GPU && gbp_box_is_contiguous(&wb->box);
}

/* Of the n sub-blocks of a split compressed device put, how many (the first ones) are coded on
 * the CPU while the device codes the others (GPUBP_ZDEV_CPU_SUBBLOCKS=K, a tuning knob, 0 by
 * default: docs/compression.md, "Runs 113-115"): K, at most n - 1, so that one is the device's.
 * The device's first batches are launched before them (zblock.c lane_prelaunch), so that both
 * code at once; the files are those the CPU path writes for the lanes and the device for the
 * rest, in the same subfiles and order as without lanes. */
static size_t zcpu_lanes(const gbp_wblock *wb, size_t n)
{
    if (!zsplit_block(wb) || n < 2) return 0;
    size_t k = (size_t)gbp_env_long("GPUBP_ZDEV_CPU_SUBBLOCKS", 0, 4096, 0);
    return k < n ? k : n - 1;
}

/* The ratio of consecutive sub-blocks of block wb: q of ztaper for a compressed device put,
 * else 1 (equal sub-blocks). */
static double split_q(const gbp_wblock *wb) { return zsplit_block(wb) ? ztaper() : 1.0; }

/* Tapered: the most sub-blocks, at most n, whose last is `floor` bytes or more (0: none). */
static size_t taper_count(uint64_t bytes, double q, uint64_t floor, uint64_t n)
{
    size_t best = 0;
    double qk = 1.0; /* q^(k-1) */
    for (uint64_t k = 1; k <= n; k++) {
        double sum = (1.0 - qk * q) / (1.0 - q); /* 1 + q + ... + q^(k-1) */
        if ((double)bytes * qk / sum >= (double)floor) best = (size_t)k;
        qk *= q;
    }
    return best;
}

/* split_mib: how many sub-blocks a block becomes when performed (1: it stays whole). A serial
 * writer cuts an uncompressed global-array block of the threshold or more (split_mib; auto: one
 * staging chunk, chunk_mib) along its first (slowest) file dimension into sub-blocks of
 * GBP_STRIPE_MIN bytes at least (half the threshold when that is smaller), written in parallel by
 * the I/O threads into different subfiles. How many: n0 (split_target), capped by those sizes
 * and the rows. Local arrays keep the block the user put (their block is what a reader
 * selects); compressed blocks in device memory (one contiguous run: what the GPU codec path
 * takes) are cut too, into sub-blocks of zsplit_min() at least, since one file takes a few GB/s
 * and the device codes several times that; other compressed blocks are compressed whole (the
 * compressor's threads already share one block, and code slower than one file takes); parallel
 * writers spread ranks over subfiles. */
static size_t split_count(const gpubp_file *f, const gbp_wblock *wb, size_t n0)
{
    const gpubp_variable *v = wb->var;
    uint64_t bytes = wb->payload_len, limit = f->params.split_bytes;
    if (limit == GBP_SPLIT_AUTO) limit = f->params.chunk_bytes ? f->params.chunk_bytes : (uint64_t)16 << 20;
    if (f->comm || v->kind != GPUBP_SHAPE_GLOBAL_ARRAY || limit == 0 || bytes < limit ||
        f->wr.nsub < 2 || wb->meta.ndims == 0 || wb->performed || n0 < 2)
        return 1;
    uint64_t piece = limit / 2 < GBP_STRIPE_MIN ? limit / 2 : GBP_STRIPE_MIN;
    if (v->op) {
        if (!zsplit_block(wb)) return 1;
        piece = zsplit_min();
    }
    uint64_t n = n0, rows = GBP_COUNT(&wb->meta)[0];
    double q = split_q(wb);
    if (q < 1.0) { /* tapered: as many as leave the last one the floor's size, and a row */
        uint64_t floor =
            gbp_env_mib("GPUBP_ZDEV_TAPER_MIB", GBP_ZDEV_ENV_MAX_MIB, (size_t)16 << 20);
        if (rows && floor < bytes / rows) floor = bytes / rows; /* so split_row's rows differ */
        n = taper_count(bytes, q, floor, n > rows ? rows : n);
        return n > 1 ? (size_t)n : 1;
    }
    if (n > bytes / piece) n = bytes / piece;
    if (n > rows) n = rows;
    if (n > GBP_SPLIT_COUNT(UINT32_MAX)) n = GBP_SPLIT_COUNT(UINT32_MAX);
    return n > 1 ? (size_t)n : 1;
}

static size_t gcd(size_t a, size_t b)
{
    while (b) {
        size_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* How many sub-blocks each large block of the puts being performed should become, so that the
 * subfiles end the step evenly filled: with V blocks of GBP_STRIPE_MIN or more (those that go to
 * a file of their own) and S subfiles, S / gcd(V, S) — the smallest n for which V * n blocks
 * fill the S files alike when the blocks are of one size (1 block: S; 4: S/4 each when 4 divides
 * S; S or a multiple of it: none split; 10 over 16: 8 each, 5 per file). A lone large put (a
 * SYNC put, or one array per step) is cut into one sub-block per subfile. */
static size_t split_target(const gpubp_file *f)
{
    size_t nlarge = 0, S = f->wr.nsub > 0 ? (size_t)f->wr.nsub : 1;
    for (size_t i = 0; i < f->wr.nblocks; i++) {
        const gbp_wblock *wb = &f->wr.blocks[i];
        nlarge += !wb->performed && !gbp_kind_is_value(wb->var->kind) &&
                  wb->payload_len >= GBP_STRIPE_MIN;
    }
    return nlarge ? S / gcd(nlarge, S) : 1;
}

/* The first row of sub-block j of n (j = n: rows): near-equal rows, or (q < 1) rows shrinking
 * by q from one sub-block to the next, each at least one row. */
static uint64_t split_row(uint64_t rows, size_t j, size_t n, double q)
{
    if (q >= 1.0 || j == 0 || j >= n) return j >= n ? rows : rows * j / n;
    double qj = 1.0, qn = 1.0;
    for (size_t k = 0; k < n; k++) {
        if (k < j) qj *= q;
        qn *= q;
    }
    uint64_t lo = (uint64_t)((double)rows * (1.0 - qj) / (1.0 - qn) + 0.5);
    /* each sub-block is a row or more (split_count's floor), so the rounded rows increase */
    if (lo < j) lo = j;
    if (lo > rows - (n - j)) lo = rows - (n - j);
    return lo;
}

/* Cuts the block at wb (room for n blocks there) into n sub-blocks of its first file dimension's
 * rows (split_row): each a block of its own (count, start, its part of the user's buffer box,
 * its own min/max once written), marked j of n (gbp_block.split). */
static void split_block(gbp_wblock *wb, size_t n)
{
    const gbp_wblock whole = *wb;
    uint64_t rows = GBP_COUNT(&whole.meta)[0];
    uint64_t row_bytes = rows ? whole.payload_len / rows : 0;
    double q = split_q(&whole);
    size_t lanes = zcpu_lanes(&whole, n);
    for (size_t j = 0; j < n; j++) {
        gbp_wblock *sb = &wb[j];
        uint64_t lo = split_row(rows, j, n, q), hi = split_row(rows, j + 1, n, q);
        *sb = whole;
        sb->meta.dims = sb->dimstore;
        GBP_COUNT(&sb->meta)[0] = hi - lo;
        GBP_START(&sb->meta)[0] += lo;
        sb->box.start[0] += (size_t)lo;
        sb->box.count[0] = (size_t)(hi - lo);
        sb->payload_len = (hi - lo) * row_bytes;
        sb->meta.split = GBP_SPLIT_MAKE(j, n);
        sb->cpu_lane = j < lanes;
    }
}

/* A block's meta.dims points into the block itself (dimstore), so it is stale once the blocks
 * array has moved (gbp_grow in a put or below, the memmove below): re-pointed before it is read. */
static void repoint_dims(gpubp_file *f)
{
    for (size_t i = 0; i < f->wr.nblocks; i++) f->wr.blocks[i].meta.dims = f->wr.blocks[i].dimstore;
}

/* The puts not performed yet, split as split_count says: the blocks after each split one move
 * up (from the last one down, so that each moves once), keeping put order. */
static int split_pending(gpubp_file *f)
{
    repoint_dims(f);
    size_t n0 = split_target(f), extra = 0;
    for (size_t i = 0; i < f->wr.nblocks; i++) extra += split_count(f, &f->wr.blocks[i], n0) - 1;
    if (extra == 0) return GPUBP_OK;
    GBP_FORWARD_IF_ERROR(gbp_grow((void **)&f->wr.blocks, &f->wr.cap_blocks, f->wr.nblocks + extra,
                                  sizeof *f->wr.blocks));
    repoint_dims(f);
    size_t to = f->wr.nblocks + extra;
    for (size_t i = f->wr.nblocks; i-- > 0;) {
        size_t n = split_count(f, &f->wr.blocks[i], n0);
        to -= n;
        if (to != i) {
            memmove(&f->wr.blocks[to], &f->wr.blocks[i], sizeof *f->wr.blocks);
            f->wr.blocks[to].meta.dims = f->wr.blocks[to].dimstore;
        }
        if (n > 1) split_block(&f->wr.blocks[to], n);
    }
    f->wr.nblocks += extra;
    return GPUBP_OK;
}

int gbp_writer_perform(gpubp_file *f)
{
    int rc = split_pending(f);
    /* while the blocks are queued one after the other, every subfile may still get chunks: the
     * I/O threads leave slots for them (memspace.h); once all are queued, the queue says */
    gbp_mem_set_files(f->mem, f->wr.nsub);
    for (size_t i = 0; i < f->wr.nblocks && rc == GPUBP_OK; i++)
        if (!f->wr.blocks[i].performed) rc = gbp_writer_perform_block(f, &f->wr.blocks[i]);
    gbp_mem_set_files(f->mem, 0);
    gbp_zdev_drain(f); /* what was coded ahead for a sub-block that did not come */
    /* async_commit: the caller's buffers are free once the data left them; the writes go on */
    int rc2 = f->wr.async ? gbp_mem_wait_staged(f->mem) : gbp_mem_sync(f->mem);
    if (rc == GPUBP_OK) rc = rc2;
    if (rc == GPUBP_OK) rc = gbp_write_headers(f, f->wr.data_fd, NULL);
    if (rc != GPUBP_OK) {
        f->failed_step = 1;
        rc = gbp_error_with_path(rc, f->path);
    }
    return rc;
}

int gbp_writer_fail(gpubp_file *f, int rc)
{
    if (!f->failed_step) {
        snprintf(f->failed_msg, sizeof f->failed_msg, "%s", gbp_error_message());
        f->failed_rc = rc;
    }
    f->failed_step = 1;
    return rc;
}

int gbp_writer_put(gpubp_file *f, gpubp_variable *v, const void *data, gpubp_launch mode,
                   gbp_wblock **added)
{
    GBP_CHECK_ARG(v);
    GBP_RETURN_ERROR_IF(v->file != f, GPUBP_ERR_INVALID_ARG,
                        "gpubp_put: variable '%s' belongs to another file", v->name);
    GBP_RETURN_ERROR_IF(!gbp_is_write_mode(f), GPUBP_ERR_WRONG_MODE,
                        "gpubp_put: %s is open for reading", f->path);
    GBP_RETURN_ERROR_IF(!f->in_step, GPUBP_ERR_WRONG_MODE,
                        "gpubp_put: '%s': no step is open (call gpubp_begin_step)", v->name);
    GBP_RETURN_ERROR_IF(mode != GPUBP_SYNC && mode != GPUBP_DEFERRED, GPUBP_ERR_INVALID_ARG,
                        "gpubp_put: invalid launch mode %d", (int)mode);
    const gbp_sel *s = &v->sel;
    size_t nd = s->ndims, elems = 1;
    for (size_t i = 0; i < nd; i++) elems *= s->count[i];
    GBP_RETURN_ERROR_IF(!data && elems > 0, GPUBP_ERR_INVALID_ARG,
                        "gpubp_put: '%s': data is NULL", v->name);
    gpubp_memory_space space = GPUBP_MEM_HOST;
    if (data && v->type != GPUBP_TYPE_STRING) GBP_FORWARD_IF_ERROR(gbp_resolve_space(v, data, &space));
    if (v->type == GPUBP_TYPE_STRING && v->space == GPUBP_MEM_GPU)
        return gbp_error(GPUBP_ERR_MEMORY_SPACE, 0, "gpubp_put: string '%s' must be in host memory",
                         v->name);
    /* the device min/max kernels have no 80-bit arithmetic */
    GBP_RETURN_ERROR_IF(v->type == GPUBP_TYPE_LONG_DOUBLE && space == GPUBP_MEM_GPU &&
                        !gbp_kind_is_value(v->kind), GPUBP_ERR_NOT_SUPPORTED,
                        "gpubp_put: long double array '%s' from device memory is not supported "
                        "(copy it to host memory first)", v->name);
    GBP_FORWARD_IF_ERROR(gbp_grow((void **)&f->wr.blocks, &f->wr.cap_blocks, f->wr.nblocks + 1,
                                  sizeof *f->wr.blocks));
    gbp_wblock *wb = &f->wr.blocks[f->wr.nblocks];
    memset(wb, 0, sizeof *wb);
    wb->var = v;
    wb->data = data;
    wb->space = space;
    wb->meta.dims = wb->dimstore;
    wb->meta.ndims = (uint8_t)nd;
    wb->meta.step = f->wr.step;
    size_t shape[GBP_MAX_DIMS], start[GBP_MAX_DIMS], count[GBP_MAX_DIMS];
    size_t mstart[GBP_MAX_DIMS], mcount[GBP_MAX_DIMS];
    memcpy(shape, s->shape, nd * sizeof *shape);
    memcpy(start, s->start, nd * sizeof *start);
    memcpy(count, s->count, nd * sizeof *count);
    memcpy(mstart, s->mem_start, nd * sizeof *mstart);
    memcpy(mcount, s->mem_count, nd * sizeof *mcount);
    if (gbp_space_reverses(f, space)) {
        gbp_reverse(shape, nd);
        gbp_reverse(start, nd);
        gbp_reverse(count, nd);
        gbp_reverse(mstart, nd);
        gbp_reverse(mcount, nd);
    }
    if (v->kind == GPUBP_SHAPE_LOCAL_VALUE) {
        /* ADIOS2's local value block: count 1, shape LocalValueDim, start 0 */
        shape[0] = GPUBP_LOCAL_VALUE_DIM;
        start[0] = 0;
        count[0] = 1;
    }
    int shaped = v->kind == GPUBP_SHAPE_GLOBAL_ARRAY || v->kind == GPUBP_SHAPE_LOCAL_VALUE;
    if (v->kind == GPUBP_SHAPE_GLOBAL_ARRAY)
        for (size_t i = 0; i < nd; i++)
            if (start[i] > shape[i] || count[i] > shape[i] - start[i])
                return gbp_error(GPUBP_ERR_INVALID_SELECTION, 0,
                                 "gpubp_put: '%s': block start %zu + count %zu exceeds shape %zu "
                                 "in file dimension %zu", v->name, start[i], count[i], shape[i], i);
    for (size_t i = 0; i < nd; i++) {
        GBP_COUNT(&wb->meta)[i] = count[i];
        GBP_SHAPE(&wb->meta)[i] = shaped ? shape[i] : 0;
        GBP_START(&wb->meta)[i] = shaped ? start[i] : 0;
    }
    /* the user's buffer box: the whole block, or the block inside a larger memory box */
    if (s->mem_ndims) {
        for (size_t i = 0; i < nd; i++)
            if (mstart[i] > mcount[i] || count[i] > mcount[i] - mstart[i])
                return gbp_error(GPUBP_ERR_INVALID_SELECTION, 0,
                                 "gpubp_put: '%s': memory selection start %zu + count %zu exceeds "
                                 "the buffer's %zu in dimension %zu", v->name, mstart[i], count[i],
                                 mcount[i], i);
        wb->box.ndims = nd;
        for (size_t i = 0; i < nd; i++) {
            wb->box.dims[i] = mcount[i];
            wb->box.start[i] = mstart[i];
            wb->box.count[i] = count[i];
        }
    } else {
        gbp_box_dense(&wb->box, nd, count);
    }
    size_t es = gbp_type_size(v->type);
    if (gbp_kind_is_value(v->kind)) {
        wb->meta.has_value = 1;
        if (v->type == GPUBP_TYPE_STRING) {
            size_t l = strlen(data);
            GBP_RETURN_ERROR_IF(l > 65535, GPUBP_ERR_INVALID_ARG,
                                "gpubp_put: string '%s' is longer than 65535 bytes", v->name);
            wb->meta.str = gbp_strdup(data);
            GBP_CHECK_ALLOC(wb->meta.str);
            wb->meta.str_len = (uint32_t)l;
            wb->payload_len = 2 + l;
        } else {
            GBP_FORWARD_IF_ERROR(gbp_mem_copy_out(f->mem, space, wb->meta.mm, data, es));
            if (v->type == GPUBP_TYPE_LONG_DOUBLE) memset(wb->meta.mm + 10, 0, 6); /* padding */
            wb->payload_len = es;
        }
    } else {
        wb->meta.has_minmax = 1; /* an empty block records 0 / 0, as ADIOS2 does */
        wb->payload_len = (uint64_t)elems * es;
    }
    f->wr.nblocks++; /* split (split_mib) when performed, with the step's other puts in view */
    v->in_step = 1;
    v->puts++;
    *added = wb;
    return GPUBP_OK;
}

/* ---- the commit ------------------------------------------------------------------------------ */

void gbp_discard_step(gpubp_file *f)
{
    for (size_t i = 0; i < f->wr.nblocks; i++) {
        gbp_free(f->wr.blocks[i].meta.str);
        f->wr.blocks[i].meta.str = NULL;
        gbp_free(f->wr.blocks[i].owned);
        f->wr.blocks[i].owned = NULL;
        gbp_free(f->wr.blocks[i].zahead);
        f->wr.blocks[i].zahead = NULL;
    }
    f->wr.nblocks = 0;
    f->in_step = 0;
    gbp_buf_reset(&f->wr.defer); /* a step not committed: its deferred bytes go */
    f->wr.ndspans = 0;
}

size_t gbp_dirty_attrs(const gpubp_file *f)
{
    size_t n = 0;
    for (size_t i = 0; i < f->wr.nattrs; i++) n += f->wr.attrs[i].dirty;
    return n;
}
