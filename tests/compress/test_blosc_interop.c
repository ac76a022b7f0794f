/* lib/compress against the outside world:
 *  - every blosc block of the ADIOS2-written files in tests/golden/compressed decodes to
 *    the values of their `bpls -d` dumps, and our encoder, given the same data, level and
 *    shuffle, reproduces ADIOS2's payloads (byte for byte with zlib 1.2.13; size ratio printed);
 *  - the project's independent decoder, tests/support/bloscverify.py, decodes our encoder's
 *    output;
 *  - layouts our writer never produces but a reader must accept (split streams, user block
 *    sizes, the legacy single chunk, pre-2.8 payloads, many chunks), made by Blosc2 2.19.1
 *    (tests/golden/blosc_layouts), decode.
 * usage: test_compress_interop PYTHON blosc_helper.py TESTS (the tests/ folder) */
#include "support/test_support.h"
#include "support/values.h"
#include "compress/blosczlib.h"

#include <stdio.h>
#include <sys/stat.h>
#include <zlib.h>

static const char *python, *helper, *tools;

static int same_zlib(void) { return strcmp(zlibVersion(), "1.2.13") == 0; }

/* Runs the helper; its stdout is returned (caller frees), NULL on failure; *status = exit code. */
static char *run_helper(const char *args, int *status)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' '%s' '%s' %s", python, helper, tools, args);
    FILE *f = popen(cmd, "r");
    if (!f) return NULL;
    size_t cap = 1 << 16, len = 0;
    char *out = malloc(cap);
    size_t got;
    while ((got = fread(out + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (cap - len < 1024) out = realloc(out, cap *= 2);
    }
    out[len] = '\0';
    int st = pclose(f);
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return out;
}

/* ---- the ADIOS2 files ------------------------------------------------------------------------ */

typedef struct zvar {
    char name[64];
    int type;
    size_t elsize, ndims, shape[4], nsteps;
    uint8_t *data; /* nsteps x shape */
    char **tok;    /* from the dump */
    size_t ntok, captok;
} zvar;

static size_t type_size(int t) { return t == 2 || t == 5 ? 4 : t == 6 ? 8 : 0; }

static void format_elem(int type, const uint8_t *p, char *out, size_t n)
{
    if (type == 2) {
        int32_t v;
        memcpy(&v, p, 4);
        snprintf(out, n, "%d", v);
    } else if (type == 5) {
        float v;
        memcpy(&v, p, 4);
        snprintf(out, n, "%g", (double)v);
    } else {
        double v;
        memcpy(&v, p, 8);
        snprintf(out, n, "%g", v);
    }
}

/* The values of each variable in a bpls -d dump, in order (all steps). */
static void load_dump(const char *path, zvar *vars, size_t nv)
{
    char *text = ts_read_text(path);
    assert_non_null(text);
    zvar *cur = NULL;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char *paren = strchr(line, ')');
        if (line[0] == ' ' && line[1] == ' ' && line[2] != ' ') { /* "  type name N*{...}" */
            char type[32], name[64];
            cur = NULL;
            if (sscanf(line, "%31s %63s", type, name) == 2)
                for (size_t i = 0; i < nv; i++)
                    if (!strcmp(vars[i].name, name)) cur = &vars[i];
        } else if (cur && paren && strchr(line, '(')) {
            for (char *t = strtok_r(paren + 1, " ", &paren); t; t = strtok_r(NULL, " ", &paren)) {
                if (cur->ntok == cur->captok)
                    cur->tok = realloc(cur->tok, (cur->captok = cur->captok * 2 + 64) *
                                                     sizeof *cur->tok);
                cur->tok[cur->ntok++] = strdup(t);
            }
        }
    }
    free(text);
}

static void check_file(const char *name, int level, int shuffle, size_t *ours_total,
                       size_t *adios_total)
{
    char dir[4096], args[4300], path[4200];
    snprintf(dir, sizeof dir, "%s/compressed/%s", ts_golden_dir(), name);
    snprintf(args, sizeof args, "list '%s'", dir);
    int st;
    char *list = run_helper(args, &st);
    assert_non_null(list);
    assert_int_equal(st, 0);
    snprintf(path, sizeof path, "%s/data.0", dir);
    size_t dlen;
    uint8_t *data0 = ts_read_file(path, &dlen);
    assert_non_null(data0);

    zvar vars[8];
    size_t nv = 0, nblosc = 0, identical = 0;
    memset(vars, 0, sizeof vars);
    char *save;
    for (char *line = strtok_r(list, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char vname[64];
        int type, used;
        size_t step, off, insz, outsz, nd, cnt[4], start[4], shape[4];
        assert_int_equal(sscanf(line, "%63s %d %zu %zu %zu %zu %zu%n", vname, &type, &step, &off,
                                &insz, &outsz, &nd, &used), 7);
        assert_true(nd >= 1 && nd <= 2);
        char *p = line + used;
        for (size_t k = 0; k < 3 * nd; k++) {
            size_t v = strtoull(p, &p, 10);
            (k < nd ? cnt : k < 2 * nd ? start : shape)[k % nd] = v;
        }
        zvar *v = NULL;
        for (size_t i = 0; i < nv; i++)
            if (!strcmp(vars[i].name, vname)) v = &vars[i];
        if (!v) {
            v = &vars[nv++];
            snprintf(v->name, sizeof v->name, "%s", vname);
            v->type = type;
            v->elsize = type_size(type);
            assert_true(v->elsize > 0);
            v->ndims = nd;
            memcpy(v->shape, shape, nd * sizeof *shape);
            v->data = calloc(2 * shape[0] * (nd > 1 ? shape[1] : 1), v->elsize);
        }
        if (step > v->nsteps) v->nsteps = step;
        size_t nel = cnt[0] * (nd > 1 ? cnt[1] : 1), bytes = nel * v->elsize;
        assert_true(outsz > 0);                /* every block of these files is compressed */
        assert_int_equal(insz, bytes);
        assert_true(off + outsz <= dlen);
        uint8_t *blk = malloc(bytes), *re = malloc(gbp_blosc_bound(bytes));
        int rc = gbp_blosc_decompress(data0 + off, outsz, blk, bytes, 2);
        if (rc) print_error("%s %s step %zu: %s\n", name, vname, step, gbp_error_message());
        assert_int_equal(rc, GPUBP_OK);
        nblosc++;
        /* place the block in its step's global array (row-major) */
        size_t per_step = shape[0] * (nd > 1 ? shape[1] : 1), rowlen = nd > 1 ? cnt[1] : cnt[0];
        for (size_t r = 0; r < (nd > 1 ? cnt[0] : 1); r++) {
            size_t at = (step - 1) * per_step +
                        (nd > 1 ? (start[0] + r) * shape[1] + start[1] : start[0]);
            memcpy(v->data + at * v->elsize, blk + r * rowlen * v->elsize, rowlen * v->elsize);
        }
        /* our encoder on the same content and settings */
        size_t rlen;
        assert_int_equal(gbp_blosc_compress(blk, bytes, v->elsize, GBP_BLOSC_ZLIB, level, shuffle, 3, re,
                                            gbp_blosc_bound(bytes), &rlen), 0);
        *ours_total += rlen;
        *adios_total += outsz;
        if (rlen == outsz && !memcmp(re, data0 + off, rlen)) identical++;
        else print_message("%s %s step %zu: ours %zu bytes, ADIOS2 %zu bytes, contents differ\n",
                           name, vname, step, rlen, outsz);
        assert_true((double)rlen <= 1.15 * (double)outsz);
        free(blk);
        free(re);
    }
    assert_int_equal(nblosc, 8);
    print_message("%s: %zu blosc blocks decoded, %zu re-encoded byte for byte\n", name, nblosc,
                  identical);
    if (same_zlib()) assert_int_equal(identical, nblosc);

    snprintf(path, sizeof path, "%s.d.txt", dir);
    load_dump(path, vars, nv);
    assert_int_equal(nv, 3);
    for (size_t i = 0; i < nv; i++) {
        zvar *v = &vars[i];
        size_t total = v->nsteps * v->shape[0] * (v->ndims > 1 ? v->shape[1] : 1);
        assert_int_equal(v->nsteps, 2);
        assert_int_equal(v->ntok, total);
        for (size_t k = 0; k < total; k++) {
            char s[64];
            format_elem(v->type, v->data + k * v->elsize, s, sizeof s);
            if (strcmp(s, v->tok[k]))
                fail_msg("%s %s value %zu: decoded %s, dump %s", name, v->name, k, s, v->tok[k]);
        }
        print_message("%s %s: %zu values equal the dump\n", name, v->name, total);
        for (size_t k = 0; k < v->ntok; k++) free(v->tok[k]);
        free(v->tok);
        free(v->data);
    }
    free(data0);
    free(list);
}

static void adios2_files(void **state)
{
    (void)state;
    size_t ours = 0, adios = 0;
    check_file("zlib_shuffle.bp", 1, GBP_BLOSC_SHUFFLE, &ours, &adios);
    check_file("zlib_bitshuffle.bp", 9, GBP_BLOSC_BITSHUFFLE, &ours, &adios);
    check_file("zlib_noshuffle.bp", 1, GBP_BLOSC_NOSHUFFLE, &ours, &adios);
    print_message("all 24 ADIOS2 payloads: ours %zu bytes, ADIOS2 %zu bytes, ratio %.4f\n", ours,
                  adios, (double)ours / (double)adios);
    assert_true((double)ours <= 1.15 * (double)adios);
}

/* ---- our output through bloscverify.py ------------------------------------------------------- */

static void tool_decodes_ours(void **state)
{
    (void)state;
    static const size_t tss[] = {1, 2, 4, 8, 16};
    static const size_t sizes[] = {100, 5003, 70001};
    static const int levels[] = {0, 1, 5, 9};
    char man[4096];
    snprintf(man, sizeof man, "%s", ts_path("manifest")); /* ts_path's buffers rotate */
    FILE *m = fopen(man, "w");
    assert_non_null(m);
    gbp_blosc_set_max_chunk(10007); /* the larger bound: 7 chunks */
    size_t cap = gbp_blosc_bound(70001);
    gbp_blosc_set_max_chunk(0);
    uint8_t *src = malloc(70001), *buf = malloc(cap);
    int ncase = 0;
    for (int mc = 0; mc < 2; mc++) {
        gbp_blosc_set_max_chunk(mc ? 10007 : 0);
        for (size_t t = 0; t < 5; t++)
            for (size_t s = 0; s < 3; s++)
                for (int sh = 0; sh < 3; sh++)
                    for (size_t l = 0; l < 4; l++) {
                        if (mc && (s != 2 || l == 2)) continue;
                        int pat = (int)((t + s + l) % NPAT);
                        size_t n = sizes[s], len;
                        ts_fill_bytes(src, n, tss[t], pat);
                        assert_int_equal(gbp_blosc_compress(src, n, tss[t], GBP_BLOSC_ZLIB, levels[l], sh, 2, buf,
                                                            cap, &len), 0);
                        char dn[32], on[32];
                        snprintf(dn, sizeof dn, "c%d.data", ncase);
                        snprintf(on, sizeof on, "c%d.ours", ncase);
                        assert_int_equal(ts_write_file(ts_path(dn), src, n), 0);
                        assert_int_equal(ts_write_file(ts_path(on), buf, len), 0);
                        fprintf(m, "%s %s %zu %d %d %d\n", ts_path(dn), ts_path(on), tss[t],
                                levels[l], sh, mc ? 10007 : 0);
                        ncase++;
                    }
    }
    gbp_blosc_set_max_chunk(0);
    fclose(m);
    char args[4200];
    snprintf(args, sizeof args, "check '%s' %s", man, same_zlib() ? "--exact" : "");
    int st;
    char *out = run_helper(args, &st);
    assert_non_null(out);
    char *lastline = strrchr(out, '\n');
    while (lastline && lastline > out && lastline[-1] != '\n') lastline--;
    print_message("bloscverify.py: %s", lastline ? lastline : out);
    if (st != 0) print_error("%s\n", out);
    assert_int_equal(st, 0);
    free(out);
    free(src);
    free(buf);
}

/* ---- layouts made by Blosc2 (tests/golden/blosc_layouts) ------------------------------------- */

static void tool_layouts(void **state)
{
    (void)state;
    char dir[4096], args[4200];
    snprintf(dir, sizeof dir, "%s", ts_path("gen"));
    snprintf(args, sizeof args, "gen '%s'", dir);
    int st;
    char *out = run_helper(args, &st);
    assert_non_null(out);
    assert_int_equal(st, 0);
    free(out);
    char *lst = ts_read_text(ts_join(dir, "list"));
    assert_non_null(lst);
    int n = 0;
    char *save;
    for (char *line = strtok_r(lst, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char name[64], layout[16], fn[128];
        size_t ts, dlen, blen;
        assert_int_equal(sscanf(line, "%63s %15s %zu", name, layout, &ts), 3);
        snprintf(fn, sizeof fn, "%s.data", name);
        uint8_t *data = ts_read_file(ts_join(dir, fn), &dlen);
        snprintf(fn, sizeof fn, "%s.buf", name);
        uint8_t *buf = ts_read_file(ts_join(dir, fn), &blen);
        assert_non_null(data);
        assert_non_null(buf);
        uint8_t *back = malloc(dlen);
        for (int th = 1; th <= 4; th += 3) {
            memset(back, 0, dlen);
            int rc = strcmp(layout, "pre28") ? gbp_blosc_decompress(buf, blen, back, dlen, th)
                                             : gbp_blosc_decompress_pre28(buf, blen, back, dlen, th);
            if (rc) print_error("%s: %s\n", name, gbp_error_message());
            assert_int_equal(rc, 0);
            assert_memory_equal(back, data, dlen);
        }
        free(back);
        free(data);
        free(buf);
        n++;
    }
    assert_int_equal(n, 18);
    free(lst);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s PYTHON blosc_helper.py TESTS\n", argv[0]);
        return 2;
    }
    python = argv[1];
    helper = argv[2];
    tools = argv[3];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(adios2_files),
        cmocka_unit_test(tool_decodes_ours),
        cmocka_unit_test(tool_layouts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
