/* API misuse: a table of every public call of gpubp.h (and gpubp/cuda.h) with NULLs, calls in the
 * wrong order or mode, wrong ndims, selections outside the shape, unknown names and type
 * mismatches. Each row expects one specific status and a non-empty gpubp_last_error(); none may
 * crash or abort. Every row runs on fresh handles (ctx), so rows are independent. */
#include "support/rel_util.h"
#include "gpubp/cuda.h"
#define SKIPPED_ROW 1000

typedef struct ctx {
    gpubp_file *w;   /* WRITE, a step open: wg (global 4x6 float), wl (local int32[3]), wn (int32
                        value), ws (string) */
    gpubp_variable *wg, *wl, *wn, *ws;
    gpubp_file *w0;  /* WRITE, no step open: w0g */
    gpubp_variable *w0g;
    gpubp_file *ra;  /* RANDOM_ACCESS on the fixture: rg, rl, rn, rs */
    gpubp_variable *rg, *rl, *rn, *rs;
    gpubp_file *rd;  /* READ, step 0 open: dg */
    gpubp_variable *dg;
    gpubp_file *wd;  /* WRITE with the simulated device, a step open: wdh (host), wdd (GPU) */
    gpubp_variable *wdh, *wdd;
    void *dev;       /* 4096 bytes of simulated device memory */
    float buf[4096];
} ctx;

static const char *g_fixture;
static const size_t SH[2] = {4, 6}, Z[2] = {0, 0}, HALF[2] = {2, 6}, BIGC[2] = {5, 6};
static const size_t ONE[2] = {1, 1}, L3[1] = {3};

static void make_fixture(void)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s", ts_path("misuse_fixture.bp"));
    g_fixture = path;
    gpubp_file *w;
    TS_OK(gpubp_open(&w, path, GPUBP_MODE_WRITE, NULL));
    gpubp_variable *g, *n, *s, *l;
    TS_OK(gpubp_define_variable(&g, w, "g", GPUBP_TYPE_FLOAT, 2, SH, Z, HALF));
    TS_OK(gpubp_define_variable(&n, w, "n", GPUBP_TYPE_INT32, 0, NULL, NULL, NULL));
    TS_OK(gpubp_define_variable(&s, w, "s", GPUBP_TYPE_STRING, 0, NULL, NULL, NULL));
    TS_OK(gpubp_define_variable(&l, w, "loc", GPUBP_TYPE_INT32, 1, NULL, NULL, L3));
    TS_OK(gpubp_define_attribute(w, "unit", GPUBP_TYPE_STRING, "m", 1));
    double nums[3] = {1, 2, 3};
    TS_OK(gpubp_define_attribute(w, "nums", GPUBP_TYPE_DOUBLE, nums, 3));
    for (int step = 0; step < 2; step++) {
        float b[12] = {0};
        int32_t x = step, lv[3] = {1, 2, 3};
        TS_OK(gpubp_begin_step(w));
        for (size_t k = 0; k < 2; k++) {
            size_t st[2] = {2 * k, 0};
            TS_OK(gpubp_set_selection(g, 2, st, HALF));
            TS_OK(gpubp_put(w, g, b, GPUBP_SYNC));
        }
        TS_OK(gpubp_put(w, n, &x, GPUBP_SYNC));
        TS_OK(gpubp_put(w, s, "text", GPUBP_SYNC));
        TS_OK(gpubp_put(w, l, lv, GPUBP_SYNC));
        TS_OK(gpubp_end_step(w));
    }
    TS_OK(gpubp_close(w));
}

static void ctx_open(ctx *c)
{
    memset(c, 0, sizeof *c);
    TS_OK(gpubp_open(&c->w, ts_path("misuse_w.bp"), GPUBP_MODE_WRITE, NULL));
    TS_OK(gpubp_define_variable(&c->wg, c->w, "g", GPUBP_TYPE_FLOAT, 2, SH, Z, HALF));
    TS_OK(gpubp_define_variable(&c->wl, c->w, "loc", GPUBP_TYPE_INT32, 1, NULL, NULL, L3));
    TS_OK(gpubp_define_variable(&c->wn, c->w, "n", GPUBP_TYPE_INT32, 0, NULL, NULL, NULL));
    TS_OK(gpubp_define_variable(&c->ws, c->w, "s", GPUBP_TYPE_STRING, 0, NULL, NULL, NULL));
    TS_OK(gpubp_begin_step(c->w));
    TS_OK(gpubp_open(&c->w0, ts_path("misuse_w0.bp"), GPUBP_MODE_WRITE, NULL));
    TS_OK(gpubp_define_variable(&c->w0g, c->w0, "g", GPUBP_TYPE_FLOAT, 2, SH, Z, HALF));
    TS_OK(gpubp_open(&c->ra, g_fixture, GPUBP_MODE_READ_RANDOM_ACCESS, NULL));
    TS_OK(gpubp_inquire_variable(&c->rg, c->ra, "g"));
    TS_OK(gpubp_inquire_variable(&c->rl, c->ra, "loc"));
    TS_OK(gpubp_inquire_variable(&c->rn, c->ra, "n"));
    TS_OK(gpubp_inquire_variable(&c->rs, c->ra, "s"));
    TS_OK(gpubp_open(&c->rd, g_fixture, GPUBP_MODE_READ, NULL));
    TS_OK(gpubp_begin_step(c->rd));
    TS_OK(gpubp_inquire_variable(&c->dg, c->rd, "g"));
    TS_OK(gpubp_open(&c->wd, ts_path("misuse_wd.bp"), GPUBP_MODE_WRITE, "device=simulated"));
    TS_OK(gpubp_define_variable(&c->wdh, c->wd, "h", GPUBP_TYPE_FLOAT, 2, SH, Z, HALF));
    TS_OK(gpubp_define_variable(&c->wdd, c->wd, "d", GPUBP_TYPE_FLOAT, 2, SH, Z, HALF));
    TS_OK(gpubp_set_memory_space(c->wdh, GPUBP_MEM_HOST));
    TS_OK(gpubp_set_memory_space(c->wdd, GPUBP_MEM_GPU));
    TS_OK(gpubp_begin_step(c->wd));
    c->dev = gbp_sim_alloc(4096);
    assert_non_null(c->dev);
}

static void ctx_close(ctx *c)
{
    gpubp_close(c->w);
    gpubp_close(c->w0);
    gpubp_close(c->ra);
    gpubp_close(c->rd);
    gpubp_close(c->wd);
    gbp_sim_free(c->dev);
}

typedef struct row {
    const char *call;   /* the public function */
    const char *what;   /* the misuse */
    int status;
    int (*fn)(ctx *c);
} row;

#define R(id, ...) static int id(ctx *c) { (void)c; __VA_ARGS__ }

/* ---- library ---- */
/* ---- open ---- */
R(open_out_null, return gpubp_open(NULL, g_fixture, GPUBP_MODE_READ, NULL);)
R(open_path_null, gpubp_file *f; return gpubp_open(&f, NULL, GPUBP_MODE_READ, NULL);)
R(open_path_empty, gpubp_file *f; return gpubp_open(&f, "", GPUBP_MODE_READ, NULL);)
R(open_mode_bad, gpubp_file *f; return gpubp_open(&f, g_fixture, (gpubp_mode)99, NULL);)
R(open_mode_neg, gpubp_file *f; return gpubp_open(&f, g_fixture, (gpubp_mode)-1, NULL);)
R(open_param_unknown, gpubp_file *f; return gpubp_open(&f, g_fixture, GPUBP_MODE_READ, "no_such_key=1");)
R(open_param_value, gpubp_file *f; return gpubp_open(&f, g_fixture, GPUBP_MODE_READ, "timeout=abc");)
R(open_param_noeq, gpubp_file *f; return gpubp_open(&f, g_fixture, GPUBP_MODE_READ, "garbage");)
R(open_param_range, gpubp_file *f; return gpubp_open(&f, g_fixture, GPUBP_MODE_READ, "pool_slots=-5");)
R(open_missing, gpubp_file *f; return gpubp_open(&f, ts_path("no_such.bp"), GPUBP_MODE_READ, NULL);)
R(open_missing_ra, gpubp_file *f; return gpubp_open(&f, ts_path("no_such.bp"), GPUBP_MODE_READ_RANDOM_ACCESS, NULL);)
R(open_plain_file, gpubp_file *f; ts_write_file(ts_path("plain"), "x", 1); return gpubp_open(&f, ts_path("plain"), GPUBP_MODE_READ, NULL);)
R(open_write_plain_file, gpubp_file *f; ts_write_file(ts_path("plain"), "x", 1); return gpubp_open(&f, ts_path("plain"), GPUBP_MODE_WRITE, NULL);)
/* a BP5 dataset of a BP5 minor version other than 2 (md.idx byte 38) */
R(open_bp5, gpubp_file *f; char p[4200]; snprintf(p, sizeof p, "%s/BP5/local.bp", ts_golden_dir()); char q[4200]; snprintf(q, sizeof q, "%s", ts_path("bp5minor.bp")); ts_copy_dataset(p, q); FILE *x = fopen(ts_join(q, "md.idx"), "r+b"); if (!x) return -1; fseek(x, 38, SEEK_SET); fputc(3, x); fclose(x); return gpubp_open(&f, q, GPUBP_MODE_READ, NULL);)
R(open_bp5_append, gpubp_file *f; char p[4200]; snprintf(p, sizeof p, "%s/BP5/local.bp", ts_golden_dir()); char q[4200]; snprintf(q, sizeof q, "%s", ts_path("bp5copy.bp")); ts_copy_dataset(p, q); return gpubp_open(&f, q, GPUBP_MODE_APPEND, NULL);)
R(open_no_parent, gpubp_file *f; return gpubp_open(&f, ts_path("nodir/sub/x.bp"), GPUBP_MODE_WRITE, NULL);)
R(open_foreign_idx, gpubp_file *f; const char *d = ts_path("foreign.bp"); mkdir(d, 0777); char z[200] = "NOT A BP FILE AT ALL"; ts_write_file(ts_join(d, "md.idx"), z, sizeof z); return gpubp_open(&f, d, GPUBP_MODE_READ, NULL);)
/* ---- steps ---- */
R(begin_null, return gpubp_begin_step(NULL);)
R(begin_twice_write, return gpubp_begin_step(c->w);)
R(begin_twice_read, return gpubp_begin_step(c->rd);)
R(begin_random_access, return gpubp_begin_step(c->ra);)
R(end_null, return gpubp_end_step(NULL);)
R(end_write_no_step, return gpubp_end_step(c->w0);)
R(end_read_no_step, gpubp_end_step(c->rd); return gpubp_end_step(c->rd);)
R(end_random_access, return gpubp_end_step(c->ra);)
R(steps_null_f, size_t n; return gpubp_steps(NULL, &n);)
R(steps_null_n, return gpubp_steps(c->ra, NULL);)
R(current_null_f, size_t n; return gpubp_current_step(NULL, &n);)
R(current_null_n, return gpubp_current_step(c->w, NULL);)
R(current_random_access, size_t n; return gpubp_current_step(c->ra, &n);)
R(current_read_no_step, size_t n; gpubp_end_step(c->rd); return gpubp_current_step(c->rd, &n);)
/* ---- define_variable ---- */
R(def_out_null, return gpubp_define_variable(NULL, c->w, "x", GPUBP_TYPE_FLOAT, 0, NULL, NULL, NULL);)
R(def_f_null, gpubp_variable *v; return gpubp_define_variable(&v, NULL, "x", GPUBP_TYPE_FLOAT, 0, NULL, NULL, NULL);)
R(def_name_null, gpubp_variable *v; return gpubp_define_variable(&v, c->w, NULL, GPUBP_TYPE_FLOAT, 0, NULL, NULL, NULL);)
R(def_name_empty, gpubp_variable *v; return gpubp_define_variable(&v, c->w, "", GPUBP_TYPE_FLOAT, 0, NULL, NULL, NULL);)
R(def_type_bad, gpubp_variable *v; return gpubp_define_variable(&v, c->w, "x", (gpubp_type)99, 0, NULL, NULL, NULL);)
R(def_type_neg, gpubp_variable *v; return gpubp_define_variable(&v, c->w, "x", (gpubp_type)-3, 0, NULL, NULL, NULL);)
R(def_read_mode, gpubp_variable *v; return gpubp_define_variable(&v, c->ra, "x", GPUBP_TYPE_FLOAT, 0, NULL, NULL, NULL);)
R(def_twice, gpubp_variable *v; return gpubp_define_variable(&v, c->w, "g", GPUBP_TYPE_FLOAT, 2, SH, Z, HALF);)
R(def_ndims_33, gpubp_variable *v; size_t d[33] = {1}; return gpubp_define_variable(&v, c->w, "x", GPUBP_TYPE_FLOAT, 33, d, d, d);)
R(def_string_array, gpubp_variable *v; return gpubp_define_variable(&v, c->w, "x", GPUBP_TYPE_STRING, 1, NULL, NULL, L3);)
R(def_count_null, gpubp_variable *v; return gpubp_define_variable(&v, c->w, "x", GPUBP_TYPE_FLOAT, 2, SH, Z, NULL);)
R(def_start_null, gpubp_variable *v; return gpubp_define_variable(&v, c->w, "x", GPUBP_TYPE_FLOAT, 2, SH, NULL, HALF);)
R(def_outside_shape, gpubp_variable *v; size_t st[2] = {3, 0}; return gpubp_define_variable(&v, c->w, "x", GPUBP_TYPE_FLOAT, 2, SH, st, HALF);)
R(def_start_past_shape, gpubp_variable *v; size_t st[2] = {9, 0}, ct[2] = {0, 1}; return gpubp_define_variable(&v, c->w, "x", GPUBP_TYPE_FLOAT, 2, SH, st, ct);)
/* ---- inquire_variable / name ---- */
R(inq_out_null, return gpubp_inquire_variable(NULL, c->ra, "g");)
R(inq_f_null, gpubp_variable *v; return gpubp_inquire_variable(&v, NULL, "g");)
R(inq_name_null, gpubp_variable *v; return gpubp_inquire_variable(&v, c->ra, NULL);)
R(inq_unknown_ra, gpubp_variable *v; return gpubp_inquire_variable(&v, c->ra, "nope");)
R(inq_unknown_read, gpubp_variable *v; return gpubp_inquire_variable(&v, c->rd, "nope");)
R(inq_unknown_write, gpubp_variable *v; return gpubp_inquire_variable(&v, c->w, "nope");)
R(inq_read_no_step, gpubp_variable *v; gpubp_end_step(c->rd); return gpubp_inquire_variable(&v, c->rd, "g");)
R(name_null_v, const char *s; return gpubp_variable_name(NULL, &s);)
R(name_null_out, return gpubp_variable_name(c->rg, NULL);)
/* ---- set_shape ---- */
R(shape_null_v, return gpubp_set_shape(NULL, 2, SH);)
R(shape_read, return gpubp_set_shape(c->rg, 2, SH);)
R(shape_local, return gpubp_set_shape(c->wl, 1, L3);)
R(shape_value, return gpubp_set_shape(c->wn, 0, NULL);)
R(shape_ndims, return gpubp_set_shape(c->wg, 3, SH);)
R(shape_null, return gpubp_set_shape(c->wg, 2, NULL);)
/* ---- set_selection ---- */
R(sel_null_v, return gpubp_set_selection(NULL, 2, Z, HALF);)
R(sel_ndims, return gpubp_set_selection(c->wg, 1, Z, HALF);)
R(sel_ndims_read, return gpubp_set_selection(c->rg, 3, Z, HALF);)
R(sel_value, return gpubp_set_selection(c->wn, 0, NULL, NULL);)
R(sel_count_null, return gpubp_set_selection(c->wg, 2, Z, NULL);)
R(sel_start_null, return gpubp_set_selection(c->wg, 2, NULL, HALF);)
R(sel_outside_write, size_t st[2] = {3, 0}; return gpubp_set_selection(c->wg, 2, st, HALF);)
R(sel_overflow, size_t st[2] = {SIZE_MAX, 0}; return gpubp_set_selection(c->rg, 2, st, HALF);)
R(sel_outside_read_get, int rc = gpubp_set_selection(c->rg, 2, Z, BIGC); return rc ? rc : gpubp_get(c->ra, c->rg, c->buf, GPUBP_SYNC);)
R(sel_outside_read_size, size_t b; int rc = gpubp_set_selection(c->rg, 2, Z, BIGC); return rc ? rc : gpubp_selection_size(c->rg, &b);)
R(sel_outside_step_get, int rc = gpubp_set_selection(c->dg, 2, Z, BIGC); return rc ? rc : gpubp_get(c->rd, c->dg, c->buf, GPUBP_SYNC);)
/* deferred: the box is checked at the get or, at the latest, when the gets are performed */
R(sel_outside_deferred, int rc = gpubp_set_selection(c->dg, 2, Z, BIGC); if (!rc) rc = gpubp_get(c->rd, c->dg, c->buf, GPUBP_DEFERRED); return rc ? rc : gpubp_perform_gets(c->rd);)
R(sel_outside_deferred_end, int rc = gpubp_set_selection(c->dg, 2, Z, BIGC); if (!rc) rc = gpubp_get(c->rd, c->dg, c->buf, GPUBP_DEFERRED); return rc ? rc : gpubp_end_step(c->rd);)
R(sel_local_outside_block, size_t ct[1] = {4}; int rc = gpubp_set_selection(c->rl, 1, NULL, ct); return rc ? rc : gpubp_get(c->ra, c->rl, c->buf, GPUBP_SYNC);)
/* ---- block / step selections ---- */
R(blk_null, return gpubp_set_block_selection(NULL, 0);)
R(blk_write, return gpubp_set_block_selection(c->wg, 0);)
R(blk_missing_get, int rc = gpubp_set_block_selection(c->rl, 99); return rc ? rc : gpubp_get(c->ra, c->rl, c->buf, GPUBP_SYNC);)
R(blk_missing_global, int rc = gpubp_set_block_selection(c->rg, 99); return rc ? rc : gpubp_get(c->ra, c->rg, c->buf, GPUBP_SYNC);)
R(stepsel_null, return gpubp_set_step_selection(NULL, 0, 1);)
R(stepsel_write, return gpubp_set_step_selection(c->wg, 0, 1);)
R(stepsel_read, return gpubp_set_step_selection(c->dg, 0, 1);)
R(stepsel_zero, return gpubp_set_step_selection(c->rg, 0, 0);)
R(stepsel_past, return gpubp_set_step_selection(c->rg, 2, 1);)
R(stepsel_overflow, return gpubp_set_step_selection(c->rg, 1, SIZE_MAX);)
/* ---- memory space ---- */
R(ms_null, return gpubp_set_memory_space(NULL, GPUBP_MEM_HOST);)
R(ms_bad, return gpubp_set_memory_space(c->wg, (gpubp_memory_space)7);)
R(ms_gpu_no_device, return gpubp_set_memory_space(c->wg, GPUBP_MEM_GPU);)
R(ms_switch, return gpubp_set_memory_space(c->wdh, GPUBP_MEM_GPU);)
R(ms_get_null_v, gpubp_memory_space s; return gpubp_variable_memory_space(NULL, &s);)
R(ms_get_null_out, return gpubp_variable_memory_space(c->wg, NULL);)
R(put_device_ptr_host_var, return gpubp_put(c->wd, c->wdh, c->dev, GPUBP_SYNC);)
R(put_host_ptr_gpu_var, return gpubp_put(c->wd, c->wdd, c->buf, GPUBP_SYNC);)
/* ---- queries ---- */
R(vshape_null, size_t d[2]; return gpubp_variable_shape(NULL, GPUBP_MEM_HOST, d);)
R(vshape_space, size_t d[2]; return gpubp_variable_shape(c->rg, (gpubp_memory_space)9, d);)
R(vshape_dims_null, return gpubp_variable_shape(c->rg, GPUBP_MEM_HOST, NULL);)
R(vshape_read_no_step, size_t d[2]; gpubp_end_step(c->rd); return gpubp_variable_shape(c->dg, GPUBP_MEM_HOST, d);)
R(ndims_null_v, size_t n; return gpubp_variable_ndims(NULL, &n);)
R(ndims_null_out, return gpubp_variable_ndims(c->rg, NULL);)
R(type_null_v, gpubp_type t; return gpubp_variable_type(NULL, &t);)
R(type_null_out, return gpubp_variable_type(c->rg, NULL);)
R(kind_null_v, gpubp_shape_kind k; return gpubp_variable_shape_kind(NULL, &k);)
R(kind_null_out, return gpubp_variable_shape_kind(c->rg, NULL);)
R(vsteps_null_v, size_t n; return gpubp_variable_steps(NULL, &n);)
R(vsteps_null_out, return gpubp_variable_steps(c->rg, NULL);)
R(dstep_null_v, size_t s; return gpubp_variable_dataset_step(NULL, 0, &s);)
R(dstep_null_out, return gpubp_variable_dataset_step(c->rg, 0, NULL);)
R(dstep_write, size_t s; return gpubp_variable_dataset_step(c->wg, 0, &s);)
R(dstep_past, size_t s; return gpubp_variable_dataset_step(c->rg, 2, &s);)
R(blocks_null_v, size_t n; return gpubp_variable_blocks(NULL, 0, &n);)
R(blocks_null_out, return gpubp_variable_blocks(c->rg, 0, NULL);)
R(blocks_write, size_t n; return gpubp_variable_blocks(c->wg, 0, &n);)
R(blocks_step_past, size_t n; return gpubp_variable_blocks(c->rg, 2, &n);)
R(blocks_read_no_step, size_t n; gpubp_end_step(c->rd); return gpubp_variable_blocks(c->dg, 0, &n);)
R(minmax_null, float a, b; return gpubp_variable_minmax(NULL, &a, &b);)
R(minmax_string, char a[16], b[16]; return gpubp_variable_minmax(c->rs, a, b);)
R(minmax_write, float a, b; return gpubp_variable_minmax(c->wg, &a, &b);)
R(mm_missing_null, int m; return gpubp_variable_minmax_missing(NULL, &m);)
R(mm_missing_string, int m; return gpubp_variable_minmax_missing(c->rs, &m);)
R(mm_missing_write, int m; return gpubp_variable_minmax_missing(c->wg, &m);)
R(writer_null, size_t w; return gpubp_variable_block_writer(NULL, 0, 0, &w);)
R(writer_bp4, size_t w; return gpubp_variable_block_writer(c->rg, 0, 0, &w);)
R(writer_write, size_t w; return gpubp_variable_block_writer(c->wg, 0, 0, &w);)
R(binfo_null, return gpubp_variable_block_info(NULL, 0, 0, NULL, NULL, NULL, NULL);)
R(binfo_write, return gpubp_variable_block_info(c->wg, 0, 0, NULL, NULL, NULL, NULL);)
R(binfo_step_past, return gpubp_variable_block_info(c->rg, 5, 0, NULL, NULL, NULL, NULL);)
R(binfo_block_past, return gpubp_variable_block_info(c->rg, 0, 7, NULL, NULL, NULL, NULL);)
R(selsize_null_v, size_t b; return gpubp_selection_size(NULL, &b);)
R(selsize_null_out, return gpubp_selection_size(c->rg, NULL);)
/* ---- memory selection ---- */
R(msel_null, return gpubp_set_memory_selection(NULL, 2, Z, SH);)
R(msel_ndims, return gpubp_set_memory_selection(c->wg, 3, Z, SH);)
R(msel_start_null, return gpubp_set_memory_selection(c->wg, 2, NULL, SH);)
R(msel_count_null, return gpubp_set_memory_selection(c->wg, 2, Z, NULL);)
R(msel_small_put, int rc = gpubp_set_memory_selection(c->wg, 2, Z, ONE); return rc ? rc : gpubp_put(c->w, c->wg, c->buf, GPUBP_SYNC);)
R(msel_small_get, int rc = gpubp_set_memory_selection(c->rg, 2, Z, ONE); return rc ? rc : gpubp_get(c->ra, c->rg, c->buf, GPUBP_SYNC);)
R(msel_offset_get, size_t st[2] = {1, 1}; int rc = gpubp_set_memory_selection(c->rg, 2, st, SH); return rc ? rc : gpubp_get(c->ra, c->rg, c->buf, GPUBP_SYNC);)
/* ---- listings ---- */
R(avars_null_f, size_t n; const char *const *s; return gpubp_available_variables(NULL, &n, &s);)
R(avars_null_n, const char *const *s; return gpubp_available_variables(c->ra, NULL, &s);)
R(avars_null_names, size_t n; return gpubp_available_variables(c->ra, &n, NULL);)
R(aattrs_null_f, size_t n; const char *const *s; return gpubp_available_attributes(NULL, &n, &s);)
R(aattrs_null_n, const char *const *s; return gpubp_available_attributes(c->ra, NULL, &s);)
R(aattrs_null_names, size_t n; return gpubp_available_attributes(c->ra, &n, NULL);)
/* ---- put ---- */
R(put_null_f, return gpubp_put(NULL, c->wg, c->buf, GPUBP_SYNC);)
R(put_null_v, return gpubp_put(c->w, NULL, c->buf, GPUBP_SYNC);)
R(put_null_data, return gpubp_put(c->w, c->wg, NULL, GPUBP_SYNC);)
R(put_other_file, return gpubp_put(c->w, c->w0g, c->buf, GPUBP_SYNC);)
R(put_read_file, return gpubp_put(c->ra, c->rg, c->buf, GPUBP_SYNC);)
R(put_outside_step, return gpubp_put(c->w0, c->w0g, c->buf, GPUBP_SYNC);)
R(put_launch_bad, return gpubp_put(c->w, c->wg, c->buf, (gpubp_launch)5);)
R(put_string_long, static char s[70001]; memset(s, 'a', 70000); return gpubp_put(c->w, c->ws, s, GPUBP_SYNC);)
R(put_shape_shrunk, size_t sh[2] = {1, 1}; int rc = gpubp_set_shape(c->wg, 2, sh); return rc ? rc : gpubp_put(c->w, c->wg, c->buf, GPUBP_SYNC);)
R(put_after_end_step, gpubp_end_step(c->w); return gpubp_put(c->w, c->wg, c->buf, GPUBP_SYNC);)
R(perform_puts_null, return gpubp_perform_puts(NULL);)
R(perform_puts_read, return gpubp_perform_puts(c->ra);)
/* ---- get ---- */
R(get_null_f, return gpubp_get(NULL, c->rg, c->buf, GPUBP_SYNC);)
R(get_null_v, return gpubp_get(c->ra, NULL, c->buf, GPUBP_SYNC);)
R(get_null_data, return gpubp_get(c->ra, c->rg, NULL, GPUBP_SYNC);)
R(get_write_file, return gpubp_get(c->w, c->wg, c->buf, GPUBP_SYNC);)
R(get_other_file, return gpubp_get(c->ra, c->dg, c->buf, GPUBP_SYNC);)
R(get_read_no_step, gpubp_end_step(c->rd); return gpubp_get(c->rd, c->dg, c->buf, GPUBP_SYNC);)
R(get_launch_bad, return gpubp_get(c->ra, c->rg, c->buf, (gpubp_launch)7);)
R(get_gpu_no_device, int rc = gpubp_set_memory_space(c->rg, GPUBP_MEM_GPU); return rc ? rc : gpubp_get(c->ra, c->rg, c->buf, GPUBP_SYNC);)
R(perform_gets_null, return gpubp_perform_gets(NULL);)
R(perform_gets_write, return gpubp_perform_gets(c->w);)
/* ---- attributes ---- */
R(dattr_null_f, double x = 1; return gpubp_define_attribute(NULL, "a", GPUBP_TYPE_DOUBLE, &x, 1);)
R(dattr_null_name, double x = 1; return gpubp_define_attribute(c->w, NULL, GPUBP_TYPE_DOUBLE, &x, 1);)
R(dattr_null_data, return gpubp_define_attribute(c->w, "a", GPUBP_TYPE_DOUBLE, NULL, 1);)
R(dattr_read, double x = 1; return gpubp_define_attribute(c->ra, "a", GPUBP_TYPE_DOUBLE, &x, 1);)
R(dattr_empty_name, double x = 1; return gpubp_define_attribute(c->w, "", GPUBP_TYPE_DOUBLE, &x, 1);)
R(dattr_zero, double x = 1; return gpubp_define_attribute(c->w, "a", GPUBP_TYPE_DOUBLE, &x, 0);)
R(dattr_type_bad, double x = 1; return gpubp_define_attribute(c->w, "a", (gpubp_type)77, &x, 1);)
R(dattr_strings_null, const char *s[2] = {"a", NULL}; return gpubp_define_attribute(c->w, "a", GPUBP_TYPE_STRING, s, 2);)
R(dvattr_null_var, double x = 1; return gpubp_define_variable_attribute(c->w, NULL, "u", GPUBP_TYPE_DOUBLE, &x, 1);)
R(dvattr_null_name, double x = 1; return gpubp_define_variable_attribute(c->w, "g", NULL, GPUBP_TYPE_DOUBLE, &x, 1);)
R(dvattr_null_f, double x = 1; return gpubp_define_variable_attribute(NULL, "g", "u", GPUBP_TYPE_DOUBLE, &x, 1);)
R(dvattr_read, double x = 1; return gpubp_define_variable_attribute(c->ra, "g", "u", GPUBP_TYPE_DOUBLE, &x, 1);)
R(iattr_null_f, gpubp_type t; size_t n; return gpubp_inquire_attribute(NULL, "unit", &t, &n, NULL);)
R(iattr_null_name, gpubp_type t; size_t n; return gpubp_inquire_attribute(c->ra, NULL, &t, &n, NULL);)
R(iattr_unknown, gpubp_type t; size_t n; return gpubp_inquire_attribute(c->ra, "nope", &t, &n, NULL);)
R(iattr_write, gpubp_type t; size_t n; return gpubp_inquire_attribute(c->w, "unit", &t, &n, NULL);)
R(adata_null_f, double x[3]; return gpubp_attribute_data(NULL, "nums", x);)
R(adata_null_name, double x[3]; return gpubp_attribute_data(c->ra, NULL, x);)
R(adata_null_data, return gpubp_attribute_data(c->ra, "nums", NULL);)
R(adata_string, char x[64]; return gpubp_attribute_data(c->ra, "unit", x);)
R(adata_unknown, double x[3]; return gpubp_attribute_data(c->ra, "nope", x);)
R(astr_null_f, const char *s; return gpubp_attribute_string(NULL, "unit", 0, &s);)
R(astr_null_name, const char *s; return gpubp_attribute_string(c->ra, NULL, 0, &s);)
R(astr_null_out, return gpubp_attribute_string(c->ra, "unit", 0, NULL);)
R(astr_numeric, const char *s; return gpubp_attribute_string(c->ra, "nums", 0, &s);)
R(astr_index, const char *s; return gpubp_attribute_string(c->ra, "unit", 1, &s);)
R(astr_unknown, const char *s; return gpubp_attribute_string(c->ra, "nope", 0, &s);)
/* ---- operators (compression) ---- */
R(op_null_v, return gpubp_variable_add_operation(NULL, "zlib", NULL);)
R(op_null_op, return gpubp_variable_add_operation(c->wg, NULL, NULL);)
R(op_unknown, return gpubp_variable_add_operation(c->wg, "lz77x", NULL);)
R(op_bad_param, return gpubp_variable_add_operation(c->wg, "zlib", "level=99");)
R(op_unknown_param, return gpubp_variable_add_operation(c->wg, "zlib", "speed=3");)
R(op_read, return gpubp_variable_add_operation(c->rg, "zlib", NULL);)
R(op_string, return gpubp_variable_add_operation(c->ws, "zlib", NULL);)
R(op_after_put, int rc = gpubp_put(c->w, c->wg, c->buf, GPUBP_SYNC); return rc ? rc : gpubp_variable_add_operation(c->wg, "zlib", NULL);)
/* ---- CUDA stream (gpubp/cuda.h) ---- */
R(stream_null_f, return gpubp_set_stream(NULL, NULL);)
R(stream_no_device, return gpubp_set_stream(c->w, (void *)0x1234);)

#define E(call, id, st) {call, #id, st, id}
static const row rows[] = {
    E("gpubp_open", open_out_null, GPUBP_ERR_INVALID_ARG),
    E("gpubp_open", open_path_null, GPUBP_ERR_INVALID_ARG),
    E("gpubp_open", open_path_empty, GPUBP_ERR_INVALID_ARG),
    E("gpubp_open", open_mode_bad, GPUBP_ERR_INVALID_ARG),
    E("gpubp_open", open_mode_neg, GPUBP_ERR_INVALID_ARG),
    E("gpubp_open", open_param_unknown, GPUBP_ERR_PARAM),
    E("gpubp_open", open_param_value, GPUBP_ERR_PARAM),
    E("gpubp_open", open_param_noeq, GPUBP_ERR_PARAM),
    E("gpubp_open", open_param_range, GPUBP_ERR_PARAM),
    E("gpubp_open", open_missing, GPUBP_ERR_NOT_BP4),
    E("gpubp_open", open_missing_ra, GPUBP_ERR_NOT_BP4),
    E("gpubp_open", open_plain_file, GPUBP_ERR_NOT_BP4),
    E("gpubp_open", open_write_plain_file, GPUBP_ERR_NOT_BP4),
    E("gpubp_open", open_bp5, GPUBP_ERR_NOT_SUPPORTED),
    E("gpubp_open", open_bp5_append, GPUBP_ERR_BP5),
    E("gpubp_open", open_no_parent, GPUBP_ERR_IO),
    E("gpubp_open", open_foreign_idx, GPUBP_ERR_NOT_BP4),
    E("gpubp_begin_step", begin_null, GPUBP_ERR_INVALID_ARG),
    E("gpubp_begin_step", begin_twice_write, GPUBP_ERR_WRONG_MODE),
    E("gpubp_begin_step", begin_twice_read, GPUBP_ERR_WRONG_MODE),
    E("gpubp_begin_step", begin_random_access, GPUBP_ERR_WRONG_MODE),
    E("gpubp_end_step", end_null, GPUBP_ERR_INVALID_ARG),
    E("gpubp_end_step", end_write_no_step, GPUBP_ERR_WRONG_MODE),
    E("gpubp_end_step", end_read_no_step, GPUBP_ERR_WRONG_MODE),
    E("gpubp_end_step", end_random_access, GPUBP_ERR_WRONG_MODE),
    E("gpubp_steps", steps_null_f, GPUBP_ERR_INVALID_ARG),
    E("gpubp_steps", steps_null_n, GPUBP_ERR_INVALID_ARG),
    E("gpubp_current_step", current_null_f, GPUBP_ERR_INVALID_ARG),
    E("gpubp_current_step", current_null_n, GPUBP_ERR_INVALID_ARG),
    E("gpubp_current_step", current_random_access, GPUBP_ERR_WRONG_MODE),
    E("gpubp_current_step", current_read_no_step, GPUBP_ERR_WRONG_MODE),
    E("gpubp_define_variable", def_out_null, GPUBP_ERR_INVALID_ARG),
    E("gpubp_define_variable", def_f_null, GPUBP_ERR_INVALID_ARG),
    E("gpubp_define_variable", def_name_null, GPUBP_ERR_INVALID_ARG),
    E("gpubp_define_variable", def_name_empty, GPUBP_ERR_INVALID_ARG),
    E("gpubp_define_variable", def_type_bad, GPUBP_ERR_INVALID_ARG),
    E("gpubp_define_variable", def_type_neg, GPUBP_ERR_INVALID_ARG),
    E("gpubp_define_variable", def_read_mode, GPUBP_ERR_WRONG_MODE),
    E("gpubp_define_variable", def_twice, GPUBP_ERR_EXISTS),
    E("gpubp_define_variable", def_ndims_33, GPUBP_ERR_INVALID_DIMS),
    E("gpubp_define_variable", def_string_array, GPUBP_ERR_INVALID_DIMS),
    E("gpubp_define_variable", def_count_null, GPUBP_ERR_INVALID_ARG),
    E("gpubp_define_variable", def_start_null, GPUBP_ERR_INVALID_ARG),
    E("gpubp_define_variable", def_outside_shape, GPUBP_ERR_INVALID_SELECTION),
    E("gpubp_define_variable", def_start_past_shape, GPUBP_ERR_INVALID_SELECTION),
    E("gpubp_inquire_variable", inq_out_null, GPUBP_ERR_INVALID_ARG),
    E("gpubp_inquire_variable", inq_f_null, GPUBP_ERR_INVALID_ARG),
    E("gpubp_inquire_variable", inq_name_null, GPUBP_ERR_INVALID_ARG),
    E("gpubp_inquire_variable", inq_unknown_ra, GPUBP_ERR_NOT_FOUND),
    E("gpubp_inquire_variable", inq_unknown_read, GPUBP_ERR_NOT_FOUND),
    E("gpubp_inquire_variable", inq_unknown_write, GPUBP_ERR_NOT_FOUND),
    E("gpubp_inquire_variable", inq_read_no_step, GPUBP_ERR_WRONG_MODE),
    E("gpubp_variable_name", name_null_v, GPUBP_ERR_INVALID_ARG),
    E("gpubp_variable_name", name_null_out, GPUBP_ERR_INVALID_ARG),
    E("gpubp_set_shape", shape_null_v, GPUBP_ERR_INVALID_ARG),
    E("gpubp_set_shape", shape_read, GPUBP_ERR_WRONG_MODE),
    E("gpubp_set_shape", shape_local, GPUBP_ERR_WRONG_MODE),
    E("gpubp_set_shape", shape_value, GPUBP_ERR_WRONG_MODE),
    E("gpubp_set_shape", shape_ndims, GPUBP_ERR_INVALID_DIMS),
    E("gpubp_set_shape", shape_null, GPUBP_ERR_INVALID_ARG),
    E("gpubp_set_selection", sel_null_v, GPUBP_ERR_INVALID_ARG),
    E("gpubp_set_selection", sel_ndims, GPUBP_ERR_INVALID_DIMS),
    E("gpubp_set_selection", sel_ndims_read, GPUBP_ERR_INVALID_DIMS),
    E("gpubp_set_selection", sel_value, GPUBP_ERR_INVALID_DIMS),
    E("gpubp_set_selection", sel_count_null, GPUBP_ERR_INVALID_ARG),
    E("gpubp_set_selection", sel_start_null, GPUBP_ERR_INVALID_ARG),
    E("gpubp_set_selection", sel_outside_write, GPUBP_ERR_INVALID_SELECTION),
    E("gpubp_set_selection", sel_overflow, GPUBP_ERR_INVALID_SELECTION),
    E("gpubp_get", sel_outside_read_get, GPUBP_ERR_INVALID_SELECTION),
    E("gpubp_selection_size", sel_outside_read_size, GPUBP_ERR_INVALID_SELECTION),
    E("gpubp_get", sel_outside_step_get, GPUBP_ERR_INVALID_SELECTION),
    E("gpubp_get", sel_outside_deferred, GPUBP_ERR_INVALID_SELECTION),
    E("gpubp_end_step", sel_outside_deferred_end, GPUBP_ERR_INVALID_SELECTION),
    E("gpubp_get", sel_local_outside_block, GPUBP_ERR_INVALID_SELECTION),
    E("gpubp_set_block_selection", blk_null, GPUBP_ERR_INVALID_ARG),
    E("gpubp_set_block_selection", blk_write, GPUBP_ERR_WRONG_MODE),
    E("gpubp_get", blk_missing_get, GPUBP_ERR_INVALID_SELECTION),
    E("gpubp_get", blk_missing_global, GPUBP_ERR_INVALID_SELECTION),
    E("gpubp_set_step_selection", stepsel_null, GPUBP_ERR_INVALID_ARG),
    E("gpubp_set_step_selection", stepsel_write, GPUBP_ERR_WRONG_MODE),
    E("gpubp_set_step_selection", stepsel_read, GPUBP_ERR_WRONG_MODE),
    E("gpubp_set_step_selection", stepsel_zero, GPUBP_ERR_INVALID_STEP),
    E("gpubp_set_step_selection", stepsel_past, GPUBP_ERR_INVALID_STEP),
    E("gpubp_set_step_selection", stepsel_overflow, GPUBP_ERR_INVALID_STEP),
    E("gpubp_set_memory_space", ms_null, GPUBP_ERR_INVALID_ARG),
    E("gpubp_set_memory_space", ms_bad, GPUBP_ERR_INVALID_ARG),
    E("gpubp_set_memory_space", ms_gpu_no_device, GPUBP_ERR_NOT_SUPPORTED),
    E("gpubp_set_memory_space", ms_switch, GPUBP_ERR_MEMORY_SPACE),
    E("gpubp_variable_memory_space", ms_get_null_v, GPUBP_ERR_INVALID_ARG),
    E("gpubp_variable_memory_space", ms_get_null_out, GPUBP_ERR_INVALID_ARG),
    E("gpubp_put", put_device_ptr_host_var, GPUBP_ERR_MEMORY_SPACE),
    E("gpubp_put", put_host_ptr_gpu_var, GPUBP_ERR_MEMORY_SPACE),
    E("gpubp_variable_shape", vshape_null, GPUBP_ERR_INVALID_ARG),
    E("gpubp_variable_shape", vshape_space, GPUBP_ERR_INVALID_ARG),
    E("gpubp_variable_shape", vshape_dims_null, GPUBP_ERR_INVALID_ARG),
    E("gpubp_variable_shape", vshape_read_no_step, GPUBP_ERR_WRONG_MODE),
    E("gpubp_variable_ndims", ndims_null_v, GPUBP_ERR_INVALID_ARG),
    E("gpubp_variable_ndims", ndims_null_out, GPUBP_ERR_INVALID_ARG),
    E("gpubp_variable_type", type_null_v, GPUBP_ERR_INVALID_ARG),
    E("gpubp_variable_type", type_null_out, GPUBP_ERR_INVALID_ARG),
    E("gpubp_variable_shape_kind", kind_null_v, GPUBP_ERR_INVALID_ARG),
    E("gpubp_variable_shape_kind", kind_null_out, GPUBP_ERR_INVALID_ARG),
    E("gpubp_variable_steps", vsteps_null_v, GPUBP_ERR_INVALID_ARG),
    E("gpubp_variable_steps", vsteps_null_out, GPUBP_ERR_INVALID_ARG),
    E("gpubp_variable_dataset_step", dstep_null_v, GPUBP_ERR_INVALID_ARG),
    E("gpubp_variable_dataset_step", dstep_null_out, GPUBP_ERR_INVALID_ARG),
    E("gpubp_variable_dataset_step", dstep_write, GPUBP_ERR_WRONG_MODE),
    E("gpubp_variable_dataset_step", dstep_past, GPUBP_ERR_INVALID_STEP),
    E("gpubp_variable_blocks", blocks_null_v, GPUBP_ERR_INVALID_ARG),
    E("gpubp_variable_blocks", blocks_null_out, GPUBP_ERR_INVALID_ARG),
    E("gpubp_variable_blocks", blocks_write, GPUBP_ERR_WRONG_MODE),
    E("gpubp_variable_blocks", blocks_step_past, GPUBP_ERR_INVALID_STEP),
    E("gpubp_variable_blocks", blocks_read_no_step, GPUBP_ERR_WRONG_MODE),
    E("gpubp_variable_minmax", minmax_null, GPUBP_ERR_INVALID_ARG),
    E("gpubp_variable_minmax", minmax_string, GPUBP_ERR_NOT_SUPPORTED),
    E("gpubp_variable_minmax", minmax_write, GPUBP_ERR_WRONG_MODE),
    E("gpubp_variable_minmax_missing", mm_missing_null, GPUBP_ERR_INVALID_ARG),
    E("gpubp_variable_minmax_missing", mm_missing_string, GPUBP_ERR_NOT_SUPPORTED),
    E("gpubp_variable_minmax_missing", mm_missing_write, GPUBP_ERR_WRONG_MODE),
    E("gpubp_variable_block_writer", writer_null, GPUBP_ERR_INVALID_ARG),
    E("gpubp_variable_block_writer", writer_bp4, GPUBP_ERR_NOT_SUPPORTED),
    E("gpubp_variable_block_writer", writer_write, GPUBP_ERR_WRONG_MODE),
    E("gpubp_variable_block_info", binfo_null, GPUBP_ERR_INVALID_ARG),
    E("gpubp_variable_block_info", binfo_write, GPUBP_ERR_WRONG_MODE),
    E("gpubp_variable_block_info", binfo_step_past, GPUBP_ERR_INVALID_STEP),
    E("gpubp_variable_block_info", binfo_block_past, GPUBP_ERR_INVALID_SELECTION),
    E("gpubp_selection_size", selsize_null_v, GPUBP_ERR_INVALID_ARG),
    E("gpubp_selection_size", selsize_null_out, GPUBP_ERR_INVALID_ARG),
    E("gpubp_set_memory_selection", msel_null, GPUBP_ERR_INVALID_ARG),
    E("gpubp_set_memory_selection", msel_ndims, GPUBP_ERR_INVALID_DIMS),
    E("gpubp_set_memory_selection", msel_start_null, GPUBP_ERR_INVALID_ARG),
    E("gpubp_set_memory_selection", msel_count_null, GPUBP_ERR_INVALID_ARG),
    E("gpubp_put", msel_small_put, GPUBP_ERR_INVALID_SELECTION),
    E("gpubp_get", msel_small_get, GPUBP_ERR_INVALID_SELECTION),
    E("gpubp_get", msel_offset_get, GPUBP_ERR_INVALID_SELECTION),
    E("gpubp_available_variables", avars_null_f, GPUBP_ERR_INVALID_ARG),
    E("gpubp_available_variables", avars_null_n, GPUBP_ERR_INVALID_ARG),
    E("gpubp_available_variables", avars_null_names, GPUBP_ERR_INVALID_ARG),
    E("gpubp_available_attributes", aattrs_null_f, GPUBP_ERR_INVALID_ARG),
    E("gpubp_available_attributes", aattrs_null_n, GPUBP_ERR_INVALID_ARG),
    E("gpubp_available_attributes", aattrs_null_names, GPUBP_ERR_INVALID_ARG),
    E("gpubp_put", put_null_f, GPUBP_ERR_INVALID_ARG),
    E("gpubp_put", put_null_v, GPUBP_ERR_INVALID_ARG),
    E("gpubp_put", put_null_data, GPUBP_ERR_INVALID_ARG),
    E("gpubp_put", put_other_file, GPUBP_ERR_INVALID_ARG),
    E("gpubp_put", put_read_file, GPUBP_ERR_WRONG_MODE),
    E("gpubp_put", put_outside_step, GPUBP_ERR_WRONG_MODE),
    E("gpubp_put", put_launch_bad, GPUBP_ERR_INVALID_ARG),
    E("gpubp_put", put_string_long, GPUBP_ERR_INVALID_ARG),
    E("gpubp_put", put_shape_shrunk, GPUBP_ERR_INVALID_SELECTION),
    E("gpubp_put", put_after_end_step, GPUBP_ERR_WRONG_MODE),
    E("gpubp_perform_puts", perform_puts_null, GPUBP_ERR_INVALID_ARG),
    E("gpubp_perform_puts", perform_puts_read, GPUBP_ERR_WRONG_MODE),
    E("gpubp_get", get_null_f, GPUBP_ERR_INVALID_ARG),
    E("gpubp_get", get_null_v, GPUBP_ERR_INVALID_ARG),
    E("gpubp_get", get_null_data, GPUBP_ERR_INVALID_ARG),
    E("gpubp_get", get_write_file, GPUBP_ERR_WRONG_MODE),
    E("gpubp_get", get_other_file, GPUBP_ERR_INVALID_ARG),
    E("gpubp_get", get_read_no_step, GPUBP_ERR_WRONG_MODE),
    E("gpubp_get", get_launch_bad, GPUBP_ERR_INVALID_ARG),
    E("gpubp_get", get_gpu_no_device, GPUBP_ERR_NOT_SUPPORTED),
    E("gpubp_perform_gets", perform_gets_null, GPUBP_ERR_INVALID_ARG),
    E("gpubp_perform_gets", perform_gets_write, GPUBP_ERR_WRONG_MODE),
    E("gpubp_define_attribute", dattr_null_f, GPUBP_ERR_INVALID_ARG),
    E("gpubp_define_attribute", dattr_null_name, GPUBP_ERR_INVALID_ARG),
    E("gpubp_define_attribute", dattr_null_data, GPUBP_ERR_INVALID_ARG),
    E("gpubp_define_attribute", dattr_read, GPUBP_ERR_WRONG_MODE),
    E("gpubp_define_attribute", dattr_empty_name, GPUBP_ERR_INVALID_ARG),
    E("gpubp_define_attribute", dattr_zero, GPUBP_ERR_INVALID_ARG),
    E("gpubp_define_attribute", dattr_type_bad, GPUBP_ERR_INVALID_ARG),
    E("gpubp_define_attribute", dattr_strings_null, GPUBP_ERR_INVALID_ARG),
    E("gpubp_define_variable_attribute", dvattr_null_var, GPUBP_ERR_INVALID_ARG),
    E("gpubp_define_variable_attribute", dvattr_null_name, GPUBP_ERR_INVALID_ARG),
    E("gpubp_define_variable_attribute", dvattr_null_f, GPUBP_ERR_INVALID_ARG),
    E("gpubp_define_variable_attribute", dvattr_read, GPUBP_ERR_WRONG_MODE),
    E("gpubp_inquire_attribute", iattr_null_f, GPUBP_ERR_INVALID_ARG),
    E("gpubp_inquire_attribute", iattr_null_name, GPUBP_ERR_INVALID_ARG),
    E("gpubp_inquire_attribute", iattr_unknown, GPUBP_ERR_NOT_FOUND),
    E("gpubp_inquire_attribute", iattr_write, GPUBP_ERR_WRONG_MODE),
    E("gpubp_attribute_data", adata_null_f, GPUBP_ERR_INVALID_ARG),
    E("gpubp_attribute_data", adata_null_name, GPUBP_ERR_INVALID_ARG),
    E("gpubp_attribute_data", adata_null_data, GPUBP_ERR_INVALID_ARG),
    E("gpubp_attribute_data", adata_string, GPUBP_ERR_TYPE_MISMATCH),
    E("gpubp_attribute_data", adata_unknown, GPUBP_ERR_NOT_FOUND),
    E("gpubp_attribute_string", astr_null_f, GPUBP_ERR_INVALID_ARG),
    E("gpubp_attribute_string", astr_null_name, GPUBP_ERR_INVALID_ARG),
    E("gpubp_attribute_string", astr_null_out, GPUBP_ERR_INVALID_ARG),
    E("gpubp_attribute_string", astr_numeric, GPUBP_ERR_TYPE_MISMATCH),
    E("gpubp_attribute_string", astr_index, GPUBP_ERR_INVALID_SELECTION),
    E("gpubp_attribute_string", astr_unknown, GPUBP_ERR_NOT_FOUND),
    E("gpubp_variable_add_operation", op_null_v, GPUBP_ERR_INVALID_ARG),
    E("gpubp_variable_add_operation", op_null_op, GPUBP_ERR_INVALID_ARG),
    E("gpubp_variable_add_operation", op_unknown, GPUBP_ERR_CODEC),
    E("gpubp_variable_add_operation", op_bad_param, GPUBP_ERR_PARAM),
    E("gpubp_variable_add_operation", op_unknown_param, GPUBP_ERR_PARAM),
    E("gpubp_variable_add_operation", op_read, GPUBP_ERR_WRONG_MODE),
    E("gpubp_variable_add_operation", op_string, GPUBP_ERR_NOT_SUPPORTED),
    E("gpubp_variable_add_operation", op_after_put, GPUBP_ERR_WRONG_MODE),
    E("gpubp_set_stream", stream_null_f, GPUBP_ERR_INVALID_ARG),
    E("gpubp_set_stream", stream_no_device, GPUBP_ERR_NOT_SUPPORTED),
};

static long g_rows, g_bad;

static void test_misuse_table(void **state)
{
    (void)state;
    make_fixture();
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        ctx c;
        ctx_open(&c);
        gbp_error_clear();
        int rc = rows[i].fn(&c);
        if (rc == SKIPPED_ROW) {
            printf("misuse: row %s of %s skipped\n", rows[i].what, rows[i].call);
            ctx_close(&c);
            continue;
        }
        const char *msg = gpubp_last_error();
        int ok = rc == rows[i].status && msg && msg[0] != '\0';
        if (!ok) {
            print_error("MISUSE %-32s %-26s -> %d (%s), expected %d (%s); message '%s'\n",
                        rows[i].call, rows[i].what, rc, gpubp_strerror(rc), rows[i].status,
                        gpubp_strerror(rows[i].status), msg ? msg : "(null)");
            g_bad++;
        }
        ctx_close(&c);
        g_rows++;
    }
    printf("misuse: %ld rows over the public API, %ld wrong\n", g_rows, g_bad);
    assert_int_equal(g_bad, 0);
}

/* calls that must succeed or be harmless: close(NULL), the pure functions, borrowed strings */
static void test_misuse_harmless(void **state)
{
    (void)state;
    TS_OK(gpubp_close(NULL));
    assert_int_equal(gpubp_type_size((gpubp_type)99), 0);
    assert_non_null(gpubp_type_name((gpubp_type)99));
    assert_non_null(gpubp_strerror(-12345));
    assert_non_null(gpubp_version());
    (void)gpubp_features();
    assert_non_null(gpubp_last_error());
    /* every pinned status has a distinct description */
    for (int s = -18; s <= 2; s++) assert_string_not_equal(gpubp_strerror(s), "unknown status");
    assert_string_not_equal(gpubp_strerror(GPUBP_ERR_INTERNAL), "unknown status");
    /* a failed open leaves *out NULL */
    gpubp_file *f = (gpubp_file *)0x1;
    TS_ERR(gpubp_open(&f, ts_path("nothing_here.bp"), GPUBP_MODE_READ, NULL), GPUBP_ERR_NOT_BP4);
    assert_null(f);
    /* the queries keep this thread's last failure (gpubp_features probes a device context) */
    (void)gpubp_features();
    (void)gpubp_codec_versions();
    assert_non_null(strstr(gpubp_last_error(), "nothing_here"));
    (void)gpubp_last_errno(); /* any value; it must not crash */
    /* an I/O failure keeps errno: a dataset path under a plain file */
    ts_write_file(ts_path("plainfile"), "x", 1);
    TS_ERR(gpubp_open(&f, ts_join(ts_path("plainfile"), "x.bp"), GPUBP_MODE_WRITE, NULL),
           GPUBP_ERR_IO);
    assert_int_not_equal(gpubp_last_errno(), 0);
    gpubp_variable *v = (gpubp_variable *)0x1;
    gpubp_file *r;
    TS_OK(gpubp_open(&r, g_fixture, GPUBP_MODE_READ_RANDOM_ACCESS, NULL));
    TS_ERR(gpubp_inquire_variable(&v, r, "nope"), GPUBP_ERR_NOT_FOUND);
    assert_null(v);
    TS_OK(gpubp_close(r));
}

/* Bug 3 (fixed in 771d3f5; src/api_read.c): a multi-step get of a local array whose selected block changes
 * size between steps writes past gpubp_selection_size() bytes (ADIOS2's local.bp). */
static void test_misuse_bug3_multistep_local_overflow(void **state)
{
    (void)state;
    char p[4200];
    snprintf(p, sizeof p, "%s/BP4/local.bp", ts_golden_dir());
    gpubp_file *r;
    TS_OK(gpubp_open(&r, p, GPUBP_MODE_READ_RANDOM_ACCESS, NULL));
    gpubp_variable *v;
    TS_OK(gpubp_inquire_variable(&v, r, "particles"));
    TS_OK(gpubp_set_block_selection(v, 2));
    TS_OK(gpubp_set_step_selection(v, 0, 2));
    size_t bytes = 0;
    int rc = gpubp_selection_size(v, &bytes);
    if (rc == GPUBP_OK) {
        unsigned char *buf = malloc(bytes + 256);
        memset(buf + bytes, 0x5A, 256);
        rc = gpubp_get(r, v, buf, GPUBP_SYNC);
        int over = 0;
        for (size_t i = 0; i < 256; i++) over += buf[bytes + i] != 0x5A;
        free(buf);
        if (over) print_error("gpubp_get wrote %d bytes past the %zu of gpubp_selection_size\n", over, bytes);
        assert_int_equal(over, 0);
    }
    TS_OK(gpubp_close(r));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_misuse_table),
        cmocka_unit_test(test_misuse_harmless),
        cmocka_unit_test(test_misuse_bug3_multistep_local_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
