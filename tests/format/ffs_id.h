/* tests/format: FFS format ids (the BP5 format description's section 5.4), for the dataset
 * converters, whose rewritten descriptions get the ids a writer of them would give them. */
#ifndef GBP_TEST_FFS_ID_H
#define GBP_TEST_FFS_ID_H

#include <stddef.h>
#include <stdint.h>

/* The 12-byte id of the FFS description desc (len: its own length, from its top header): version
 * 2, bits 18-25 of len, u16be len >> 2, then the two words of Bob Jenkins' lookup3 hashlittle2 of
 * the description (initial values 0, 0), big-endian. */
void ffs_format_id(const uint8_t *desc, size_t len, uint8_t id[12]);

/* Old ids and the new ones that replaced them. */
typedef struct ffs_idmap {
    uint8_t (*from)[12], (*to)[12];
    size_t n;
} ffs_idmap;

/* Every entry of mmd.0 (n bytes; entry lengths big-endian when be) gets the id of its
 * description as it now is; *m records old -> new. Returns 0, or -1 when an entry is cut. */
int ffs_rehash_mmd(uint8_t *mmd, size_t n, int be, ffs_idmap *m);
/* 0 when every id of the little-endian mmd.0 (n bytes) is the one its description hashes to, as
 * an ADIOS2 writer made it; -1 otherwise (the converters check their source with it). */
int ffs_check_mmd(const uint8_t *mmd, size_t n);
/* The id at p replaced by its new one (unchanged when not in m). */
void ffs_idmap_apply(const ffs_idmap *m, uint8_t *p);
void ffs_idmap_free(ffs_idmap *m);

#endif
