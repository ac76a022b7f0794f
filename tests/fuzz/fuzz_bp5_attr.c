/* Fuzz target: BP5 attribute blocks in both encodings (lib/format/bp5_meta.c, §8). Input: mmd.0
 * SEP attribute block; one flags byte first (bit 0: big-endian mmd.0 lengths). Every attribute
 * the decoder hands over is checked (name, values) and freed. Oracle: FORMAT or OK with a message
 * on failure; never a crash, an overread (ASan) or a leak (LeakSanitizer). */
#include "fuzz/fuzz_util.h"

#include "format/bp5_ffs.h"
#include "format/bp5_meta.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile size_t attr_sum;

static int take_attr(void *ctx, gbp_attr *a)
{
    int *count = ctx;
    if (!a->name) abort();
    attr_sum += strlen(a->name);
    if (a->type == GPUBP_TYPE_STRING) {
        if (a->n && !a->strings) abort();
        for (size_t i = 0; i < a->n; i++) attr_sum += strlen(a->strings[i]);
    } else if (a->n) {
        size_t es = gbp_type_size(a->type);
        if (es == 0 || !a->data) abort();
        for (size_t i = 0; i < a->n * es; i++) attr_sum += ((const uint8_t *)a->data)[i];
    }
    gbp_attr_free(a);
    /* every third attribute refused, as a sink that fails (the decoder frees what it owns) */
    return ++*count % 3 == 0 ? gbp_error(GPUBP_ERR_NOMEM, 0, "refused") : GPUBP_OK;
}

static int no_var(void *ctx, uint64_t w, const bp5_var_field *f, const bp5_array_rec *a,
                  const bp5_value_rec *v)
{
    (void)ctx, (void)w, (void)f, (void)a, (void)v;
    abort(); /* an attribute block has no variables */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    fz_part parts[FZ_MAX_PARTS];
    if (fz_split(data + 1, size - 1, parts) < 2) return 0;
    bp5_formats ft;
    bp5_formats_init(&ft);
    ft.big_endian = data[0] & 1;
    gbp_error_clear();
    int rc = bp5_formats_parse(&ft, parts[0].p, parts[0].n, 1, "mmd.0");
    if (rc != GPUBP_OK && rc != GPUBP_ERR_FORMAT && rc != GPUBP_ERR_NOMEM) abort();
    int count = 0;
    for (int pass = 0; pass < 2; pass++) {
        bp5_md_sink sink = {&count, no_var, take_attr, NULL, NULL};
        count = pass; /* the second pass refuses other attributes */
        gbp_error_clear();
        rc = bp5_decode_attrs(&ft, parts[1].p, parts[1].n, 0, &sink, "md.0");
        if (rc != GPUBP_OK && rc != GPUBP_ERR_FORMAT && rc != GPUBP_ERR_NOMEM) abort();
        if (rc != GPUBP_OK && gpubp_last_error()[0] == '\0') abort();
    }
    bp5_formats_free(&ft);
    return 0;
}
