/* lib/compress/spare.h: see spare.c: one scratch buffer kept between the encoder's calls. */
#ifndef GBP_COMPRESS_SPARE_H
#define GBP_COMPRESS_SPARE_H

#include <stddef.h>

/* At least n bytes: the kept buffer when it is large enough, else a new one (NULL: no memory).
 * *cap gets the buffer's size, which gbp_spare_give wants back. */
void *gbp_spare_take(size_t n, size_t *cap);
/* Done with p (cap bytes; NULL is fine): kept for the next take when it is the largest seen and
 * at most GBP_SPARE_MAX bytes, else freed. */
void gbp_spare_give(void *p, size_t cap);

#define GBP_SPARE_MAX ((size_t)64 << 20)

#endif /* GBP_COMPRESS_SPARE_H */
