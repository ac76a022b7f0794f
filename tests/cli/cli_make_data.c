/*
 * Writes sel.bp, the dataset of the gpubpls selection tests (tests/cli/test_cli.py), whose
 * expected outputs are derived by hand from the values below.
 *
 *   cli_make_data DIR.bp
 *   cli_make_data --live DIR.bp     (see write_live)
 *
 *   a     int32  global (4,5), 3 steps, two blocks of two rows;  a[step][i][j] = 100*step + 10*i + j
 *   s     double value, 3 steps;                                 s[step] = step + 0.5
 *   loc   int16  local 1-D array, 3 steps, two blocks of 3 and 4; loc[step][b][k] = 100*step + 10*b + k
 *   one   float  global (8), step 0 only;                        one[k] = 0.25*k
 *   late  int8   value, steps 1 and 2 only;                      late[step] = 6 + step
 *   huge  double value, step 0 only;                             1e6
 *   txt   uint8  global (2,6), step 0 only;                      "hello\0" and "abc   "
 *   attributes: "pi" double 3.14159, "tags" string array {"x", "y"}, "a/units" string "m"
 */
#include <gpubp.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(call)                                                                                \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ < 0) {                                                                             \
            fprintf(stderr, "cli_make_data: %s failed: %s: %s\n", #call, gpubp_strerror(rc_),      \
                    gpubp_last_error());                                                           \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* --live: three steps of a scalar "n" (n = step), committed 0.7 s apart, so that a reader
 * following the dataset (gpubpls -t) sees a writer that is still active. */
static int write_live(const char *path)
{
    gpubp_file *f;
    gpubp_variable *n;
    CHECK(gpubp_open(&f, path, GPUBP_MODE_WRITE, NULL));
    CHECK(gpubp_define_variable(&n, f, "n", GPUBP_TYPE_INT32, 0, NULL, NULL, NULL));
    for (int32_t step = 0; step < 3; step++) {
        if (step > 0) {
            struct timespec ts = {0, 700 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        CHECK(gpubp_begin_step(f));
        CHECK(gpubp_put(f, n, &step, GPUBP_SYNC));
        CHECK(gpubp_end_step(f));
    }
    CHECK(gpubp_close(f));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--live") == 0)
        return write_live(argv[2]);
    if (argc != 2) {
        fprintf(stderr, "usage: cli_make_data [--live] DIR.bp\n");
        return 2;
    }
    const size_t shape[2] = {4, 5}, bcount[2] = {2, 5}, zero[2] = {0, 0};
    const size_t one_shape[1] = {8}, loc_count[1] = {3};
    const double pi = 3.14159, huge = 1e6;
    const char *tags[2] = {"x", "y"};
    gpubp_file *f;
    gpubp_variable *a, *s, *loc, *one, *late, *hv, *txt;
    const size_t txt_shape[2] = {2, 6};
    const unsigned char text[2][6] = {{'h', 'e', 'l', 'l', 'o', 0}, {'a', 'b', 'c', ' ', ' ', ' '}};

    CHECK(gpubp_open(&f, argv[1], GPUBP_MODE_WRITE, NULL));
    CHECK(gpubp_define_variable(&a, f, "a", GPUBP_TYPE_INT32, 2, shape, zero, bcount));
    CHECK(gpubp_define_variable(&s, f, "s", GPUBP_TYPE_DOUBLE, 0, NULL, NULL, NULL));
    CHECK(gpubp_define_variable(&loc, f, "loc", GPUBP_TYPE_INT16, 1, NULL, NULL, loc_count));
    CHECK(gpubp_define_variable(&one, f, "one", GPUBP_TYPE_FLOAT, 1, one_shape, zero, one_shape));
    CHECK(gpubp_define_variable(&late, f, "late", GPUBP_TYPE_INT8, 0, NULL, NULL, NULL));
    CHECK(gpubp_define_variable(&hv, f, "huge", GPUBP_TYPE_DOUBLE, 0, NULL, NULL, NULL));
    CHECK(gpubp_define_variable(&txt, f, "txt", GPUBP_TYPE_UINT8, 2, txt_shape, zero, txt_shape));
    CHECK(gpubp_define_attribute(f, "pi", GPUBP_TYPE_DOUBLE, &pi, 1));
    CHECK(gpubp_define_attribute(f, "tags", GPUBP_TYPE_STRING, tags, 2));
    CHECK(gpubp_define_variable_attribute(f, "a", "units", GPUBP_TYPE_STRING, "m", 1));

    for (int step = 0; step < 3; step++) {
        CHECK(gpubp_begin_step(f));
        for (size_t b = 0; b < 2; b++) {
            int32_t rows[2][5];
            for (size_t i = 0; i < 2; i++)
                for (size_t j = 0; j < 5; j++)
                    rows[i][j] = (int32_t)(100 * step + 10 * (2 * b + i) + j);
            const size_t start[2] = {2 * b, 0};
            CHECK(gpubp_set_selection(a, 2, start, bcount));
            CHECK(gpubp_put(f, a, rows, GPUBP_SYNC));

            int16_t l[4];
            const size_t n[1] = {3 + b};
            for (size_t k = 0; k < n[0]; k++)
                l[k] = (int16_t)(100 * step + 10 * b + k);
            CHECK(gpubp_set_selection(loc, 1, NULL, n));
            CHECK(gpubp_put(f, loc, l, GPUBP_SYNC));
        }
        const double sv = step + 0.5;
        CHECK(gpubp_put(f, s, &sv, GPUBP_SYNC));
        if (step == 0) {
            float o[8];
            for (int k = 0; k < 8; k++)
                o[k] = 0.25f * (float)k;
            CHECK(gpubp_put(f, one, o, GPUBP_SYNC));
            CHECK(gpubp_put(f, hv, &huge, GPUBP_SYNC));
            CHECK(gpubp_put(f, txt, text, GPUBP_SYNC));
        } else {
            const int8_t lv = (int8_t)(6 + step);
            CHECK(gpubp_put(f, late, &lv, GPUBP_SYNC));
        }
        CHECK(gpubp_end_step(f));
    }
    CHECK(gpubp_close(f));
    return 0;
}
