/* lib/io's mappings of a file range (io/fmap.h, behind read_mmap=1): a range inside the file is
 * mapped and reads the file's bytes at any offset, page-aligned or not; a range that reaches past
 * the end of the file, an empty one and a descriptor not open for reading are declined (0, nothing
 * mapped, no error set) so that the caller's pread reports; closing empties the mapping; the count
 * of mappings moves only for those made. */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/error.h"
#include "io/fileio.h"
#include "io/fmap.h"
#include "support/test_support.h"

#define FILE_BYTES 20000

static int scratch(uint8_t *pattern)
{
    for (size_t i = 0; i < FILE_BYTES; i++) pattern[i] = (uint8_t)(i * 131u + (i >> 8));
    int fd = open(ts_path("fmap.dat"), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(gbp_pwrite_all(fd, pattern, FILE_BYTES, 0, "t"), GPUBP_OK);
    return fd;
}

static void maps_inside(void **state)
{
    (void)state;
    static uint8_t pat[FILE_BYTES];
    int fd = scratch(pat);
    static const struct { uint64_t off; size_t len; } cases[] = {
        {0, FILE_BYTES}, {4096, 4096}, {5000, 3000}, {4097, 1}, {FILE_BYTES - 1, 1}, {12345, 7655}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        size_t before = gbp_fmap_count();
        gbp_fmap m;
        assert_int_equal(gbp_fmap_open(&m, fd, cases[k].off, cases[k].len), 1);
        assert_non_null(m.addr);
        assert_int_equal(gbp_fmap_count(), before + 1);
        assert_memory_equal(gbp_fmap_at(&m, cases[k].off), pat + cases[k].off, cases[k].len);
        /* any offset inside the range */
        uint64_t mid = cases[k].off + cases[k].len / 2;
        assert_int_equal(*gbp_fmap_at(&m, mid), pat[mid]);
        gbp_fmap_close(&m);
        assert_null(m.addr);
        assert_int_equal(m.maplen, 0);
        gbp_fmap_close(&m); /* an empty mapping: nothing */
    }
    close(fd);
}

static void declines(void **state)
{
    (void)state;
    static uint8_t pat[FILE_BYTES];
    int fd = scratch(pat);
    size_t before = gbp_fmap_count();
    gbp_error_clear();
    gbp_fmap m;
    assert_int_equal(gbp_fmap_open(&m, fd, FILE_BYTES - 100, 101), 0); /* one byte past the end */
    assert_null(m.addr);
    assert_int_equal(gbp_fmap_open(&m, fd, FILE_BYTES, 1), 0);
    assert_int_equal(gbp_fmap_open(&m, fd, (uint64_t)1 << 62, 1), 0);
    assert_int_equal(gbp_fmap_open(&m, fd, 0, 0), 0);
    assert_int_equal(gbp_fmap_open(&m, fd, 0, SIZE_MAX), 0);
    assert_int_equal(gbp_fmap_open(&m, -1, 0, 10), 0); /* no descriptor */
    /* cut short after the data was written: what was inside is outside now */
    assert_int_equal(ftruncate(fd, 6000), 0);
    assert_int_equal(gbp_fmap_open(&m, fd, 5000, 3000), 0);
    assert_int_equal(gbp_fmap_open(&m, fd, 5000, 1000), 1);
    gbp_fmap_close(&m);
    close(fd);
    /* open for writing only: a read-only mapping is refused by the system, declined here */
    int wfd = open(ts_path("fmap.dat"), O_WRONLY | O_CLOEXEC);
    assert_true(wfd >= 0);
    assert_int_equal(gbp_fmap_open(&m, wfd, 0, 100), 0);
    assert_null(m.addr);
    close(wfd);
    assert_int_equal(gbp_fmap_count(), before + 1);
    assert_string_equal(gbp_error_message(), ""); /* never an error of its own */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(maps_inside),
        cmocka_unit_test(declines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
