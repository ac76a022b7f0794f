/* Fuzz target: the whole read path through the public API, on a dataset directory built from
 * the input: md.idx SEP md.0 SEP data.0 [SEP mmd.0] (a missing part is a missing file; with mmd.0
 * the dataset is BP5). Opens it in random access and in step mode, lists variables and
 * attributes, queries every variable's steps, blocks, shapes and min/max, and gets every
 * selection up to a size cap (fuzz_read.h, shared with fuzz_bp3). A damaged file must give an
 * error status with a message, never a crash, a hang or a huge allocation. */
#include "fuzz/fuzz_read.h"
#include "fuzz/fuzz_util.h"
#include "gpubp.h"
#include "fuzz/fuzz_target.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_part parts[FZ_MAX_PARTS];
    fz_split(data, size, parts);
    const char *dir = fz_tmpdir();
    char ds[600];
    snprintf(ds, sizeof ds, "%s/o.bp", dir);
    mkdir(ds, 0777);
    fz_put_file(ds, "md.idx", &parts[0]);
    fz_put_file(ds, "md.0", &parts[1]);
    fz_put_file(ds, "data.0", &parts[2]);
    fz_put_file(ds, "mmd.0", &parts[3]);

    size_t nsteps;
    (void)fz_read_dataset(ds, &nsteps);
    return 0;
}
