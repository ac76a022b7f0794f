/* lib/memspace: reads cut into jobs (mem_read.c): device reads into chunks the I/O threads read
 * and copy to the device, large host runs into pieces they pread in place, strided host boxes
 * through the bounce buffer; and the synchronous small copies (scatter, copy out). Internal to
 * lib/memspace; its calls (gbp_mem_read, gbp_mem_read_fill, gbp_mem_scatter, gbp_mem_copy_out)
 * are the module's, declared in memspace.h. */
#ifndef GBP_MEM_READ_H
#define GBP_MEM_READ_H

#include "memspace/mem_internal.h"

/* A strided host box is read span by span through the bounce buffer when a span holds at most
 * this many times the bytes wanted; sparser boxes are read run by run. */
#define GBP_READ_SPAN_WASTE 4

#endif /* GBP_MEM_READ_H */
