/* Install-test consumer: built only from the installed libgpubp (pkg-config or find_package), it
 * writes a small dataset through the public API, reads it back step by step and prints one line
 * that run_install_test.cmake compares. Usage: consumer DIR.bp */
#include <gpubp.h>

#include <stdio.h>
#include <string.h>

#define NSTEPS 3
#define NX 4
#define NY 3

#define CHECK(call)                                                                        \
    do {                                                                                   \
        int rc_ = (call);                                                                  \
        if (rc_ != GPUBP_OK) {                                                             \
            fprintf(stderr, "consumer: %s -> %s: %s\n", #call, gpubp_strerror(rc_),        \
                    gpubp_last_error());                                                   \
            return 1;                                                                      \
        }                                                                                  \
    } while (0)

#define EXPECT(cond)                                                                       \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "consumer: line %d: %s is false\n", __LINE__, #cond);          \
            return 1;                                                                      \
        }                                                                                  \
    } while (0)

static double value(int step, size_t i) { return 100.0 * step + (double)i + 0.5; }

static int write_dataset(const char *path)
{
    const size_t shape[2] = {NX, NY}, start[2] = {0, 0}, count[2] = {NX / 2, NY};
    gpubp_file *w;
    gpubp_variable *vx, *vs;
    CHECK(gpubp_open(&w, path, GPUBP_MODE_WRITE, NULL));
    CHECK(gpubp_define_variable(&vx, w, "x", GPUBP_TYPE_DOUBLE, 2, shape, start, count));
    CHECK(gpubp_define_variable(&vs, w, "step", GPUBP_TYPE_INT32, 0, NULL, NULL, NULL));
    CHECK(gpubp_define_attribute(w, "unit", GPUBP_TYPE_STRING, "m/s", 1));
    for (int s = 0; s < NSTEPS; s++) {
        double x[NX * NY];
        for (size_t i = 0; i < NX * NY; i++) x[i] = value(s, i);
        CHECK(gpubp_begin_step(w));
        for (size_t b = 0; b < 2; b++) { /* two blocks of NX/2 rows */
            const size_t bstart[2] = {b * (NX / 2), 0};
            CHECK(gpubp_set_selection(vx, 2, bstart, count));
            CHECK(gpubp_put(w, vx, x + b * (NX / 2) * NY, GPUBP_SYNC));
        }
        const int step = s;
        CHECK(gpubp_put(w, vs, &step, GPUBP_SYNC));
        CHECK(gpubp_end_step(w));
    }
    return gpubp_close(w) == GPUBP_OK ? 0 : 1;
}

static int read_dataset(const char *path, int *nsteps, size_t *nvalues)
{
    gpubp_file *r;
    int rc;
    CHECK(gpubp_open(&r, path, GPUBP_MODE_READ, NULL));
    while ((rc = gpubp_begin_step(r)) == GPUBP_OK) {
        gpubp_variable *vx, *vs;
        size_t ndims, dims[2], nblocks;
        double x[NX * NY];
        int step = -1;
        CHECK(gpubp_inquire_variable(&vx, r, "x"));
        CHECK(gpubp_variable_ndims(vx, &ndims));
        EXPECT(ndims == 2);
        CHECK(gpubp_variable_shape(vx, GPUBP_MEM_HOST, dims));
        EXPECT(dims[0] == NX && dims[1] == NY);
        CHECK(gpubp_variable_blocks(vx, 0, &nblocks));
        EXPECT(nblocks == 2);
        CHECK(gpubp_get(r, vx, x, GPUBP_SYNC));
        for (size_t i = 0; i < NX * NY; i++) EXPECT(x[i] == value(*nsteps, i));
        CHECK(gpubp_inquire_variable(&vs, r, "step"));
        CHECK(gpubp_get(r, vs, &step, GPUBP_SYNC));
        EXPECT(step == *nsteps);
        const char *unit = NULL;
        CHECK(gpubp_attribute_string(r, "unit", 0, &unit));
        EXPECT(unit && strcmp(unit, "m/s") == 0);
        CHECK(gpubp_end_step(r));
        *nvalues += NX * NY + 1;
        ++*nsteps;
    }
    EXPECT(rc == GPUBP_END_OF_STREAM);
    return gpubp_close(r) == GPUBP_OK ? 0 : 1;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "consumer.bp";
    int nsteps = 0;
    size_t nvalues = 0;
    if (write_dataset(path) || read_dataset(path, &nsteps, &nvalues)) return 1;
    EXPECT(nsteps == NSTEPS);
    printf("consumer: libgpubp %s (header %s): %d steps written and read back, %zu values ok\n",
           gpubp_version(), GPUBP_VERSION_STRING, nsteps, nvalues);
    return 0;
}
