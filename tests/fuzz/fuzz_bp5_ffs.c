/* Fuzz target: mmd.0 and the FFS format descriptions in it (lib/format/bp5_ffs.c). Input: one
 * flags byte (bit 0: big-endian entry lengths; bit 1: a partial last entry is allowed), then
 * mmd.0. Every description is also parsed alone (bp5_format_parse), as its entry says. Oracle:
 * FORMAT or OK, a message on failure, never a crash; a parsed format is self-consistent (every
 * field inside its record, every sub-structure index and control field in range), and taken as
 * a struct variable's layout (bp5_struct_def) every member lies inside the record. */
#include "fuzz/fuzz_util.h"

#include "format/bp5_ffs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_format(const bp5_format *f)
{
    if (f->nstructs == 0 || (f->ptr_size != 4 && f->ptr_size != 8)) abort();
    for (size_t i = 0; i < f->nstructs; i++) {
        const bp5_ffs_struct *st = &f->structs[i];
        if (!st->name || st->record_length < 0) abort();
        for (uint32_t j = 0; j < st->nfields; j++) {
            const bp5_ffs_field *fl = &st->fields[j];
            if (!fl->name || !fl->type || fl->offset < 0 || fl->size <= 0) abort();
            if (fl->offset > st->record_length) abort();
            if (fl->base == BP5_FT_SUB && (fl->sub <= (int)i || (size_t)fl->sub >= f->nstructs)) abort();
            for (int k = 0; k < fl->ndims; k++)
                if (fl->ctrl[k] >= (int)st->nfields) abort();
            (void)bp5_ffs_value_type(f, fl);
        }
    }
    for (size_t i = 0; i < f->nvars; i++) {
        const bp5_var_field *v = &f->vars[i];
        if (!v->name || v->field >= f->structs[0].nfields) abort();
        volatile size_t l = strlen(v->name);
        (void)l;
    }
}

/* Any description as a struct variable's layout (records of its own record length): either a
 * layout whose every member lies inside the record, or none with a reason. */
static void check_struct(const bp5_format *f)
{
    gbp_struct_def *d = NULL;
    const char *why = NULL;
    size_t rl = f->structs[0].record_length > 0 ? (size_t)f->structs[0].record_length : 1;
    if (bp5_struct_def(f, rl, &d, &why) != GPUBP_OK) return; /* NOMEM */
    if (!d) {
        if (!why) abort();
        return;
    }
    for (size_t i = 0; i < d->nfields; i++) {
        const gbp_struct_field *fl = &d->fields[i];
        if (!fl->name || fl->count == 0 || gpubp_type_size((gpubp_type)fl->type) == 0 ||
            fl->offset + fl->count * gpubp_type_size((gpubp_type)fl->type) > d->size)
            abort();
    }
    gbp_struct_def_free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    unsigned flags = data[0];
    bp5_formats ft;
    bp5_formats_init(&ft);
    ft.big_endian = flags & 1;
    gbp_error_clear();
    int rc = bp5_formats_parse(&ft, data + 1, size - 1, (flags & 2) != 0, "mmd.0");
    if (rc != GPUBP_OK && rc != GPUBP_ERR_FORMAT && rc != GPUBP_ERR_NOMEM) abort();
    if (rc != GPUBP_OK && gpubp_last_error()[0] == '\0') abort();
    if (ft.parsed > size - 1) abort();
    for (size_t i = 0; i < ft.n; i++) {
        check_format(ft.v[i]);
        if (bp5_formats_find(&ft, ft.v[i]->id) == NULL) abort();
        check_struct(ft.v[i]);
    }
    bp5_formats_free(&ft);
    /* the input as one description */
    if (size > 1 + BP5_ID_LEN) {
        bp5_format f;
        gbp_error_clear();
        rc = bp5_format_parse(&f, data + 1, data + 1 + BP5_ID_LEN, size - 1 - BP5_ID_LEN, 0, "fmt");
        if (rc == GPUBP_OK) {
            check_format(&f);
            bp5_format_free(&f);
        } else if (rc != GPUBP_ERR_FORMAT && rc != GPUBP_ERR_NOMEM) {
            abort();
        }
    }
    return 0;
}
