/* lib/memspace: reads cut into jobs (mem_read.c): device reads into chunks the I/O threads read
 * and copy to the device, large host runs into pieces they pread in place, strided host boxes
 * run by run (runs far apart: gbp_box_sparse_pays) or through the bounce buffer; and the
 * synchronous small copies (scatter, copy out). Internal to lib/memspace; its calls
 * (gbp_mem_read, gbp_mem_read_fill, gbp_mem_scatter, gbp_mem_copy_out) are the module's,
 * declared in memspace.h. */
#ifndef GBP_MEM_READ_H
#define GBP_MEM_READ_H

#include "memspace/mem_internal.h"

#endif /* GBP_MEM_READ_H */
