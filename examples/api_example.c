/* The API example of the README: write three steps of a 2x3 array, then read them back. */
#include <gpubp.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call) do { if ((call) < 0) { \
    fprintf(stderr, "%s: %s\n", #call, gpubp_last_error()); exit(1); } } while (0)

int main(void)
{
    double t[2][3] = {{1, 2, 3}, {4, 5, 6}}, in[2][3];
    const size_t shape[2] = {2, 3}, start[2] = {0, 0};
    gpubp_file *f;
    gpubp_variable *v;

    CHECK(gpubp_open(&f, "example.bp", GPUBP_MODE_WRITE, NULL));
    CHECK(gpubp_define_variable(&v, f, "T", GPUBP_TYPE_DOUBLE, 2, shape, start, shape));
    for (int step = 0; step < 3; step++) {
        t[0][0] = 10.0 * step;
        CHECK(gpubp_begin_step(f));
        CHECK(gpubp_put(f, v, t, GPUBP_SYNC));     /* SYNC: t may change once this returns */
        CHECK(gpubp_end_step(f));                   /* the step is committed here */
    }
    CHECK(gpubp_close(f));

    CHECK(gpubp_open(&f, "example.bp", GPUBP_MODE_READ, NULL));
    while (gpubp_begin_step(f) == GPUBP_OK) {       /* GPUBP_END_OF_STREAM ends the loop */
        CHECK(gpubp_inquire_variable(&v, f, "T"));
        CHECK(gpubp_get(f, v, in, GPUBP_SYNC));     /* no selection: the whole array */
        printf("T[0][0] = %g, T[1][2] = %g\n", in[0][0], in[1][2]);
        CHECK(gpubp_end_step(f));
    }
    CHECK(gpubp_close(f));
    return 0;
}
