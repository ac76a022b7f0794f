/* tools/serve/serve_root.h: the sandbox and the per-connection file cache of gpubp-serve.
 * Called from a connection's thread only, on that connection's fields (no lock). Errors come back
 * as a GBPR_E_* code with a message for the client in msg and the errno value, if any, in
 * *native (0 otherwise). */
#ifndef SERVE_ROOT_H
#define SERVE_ROOT_H

#include "serve/serve_state.h"

/* Makes the client's path (n bytes, not NUL-terminated) the connection's open dataset: relative,
 * no "..", resolving below the root, a directory with md.idx, md.0, mmd.0 (BP5) or data.0. The dataset open before is closed on success only. Returns 0 or an error code. */
uint32_t serve_resolve_dataset(conn *c, const char *path, size_t n, char *msg, size_t msz,
                               int *native);

/* Closes the open dataset and every cached descriptor of it; nothing when none is open. */
void serve_close_dataset(conn *c);

/* Opens the regular file `name` of the open dataset, checked to lie below the root: *fd is a
 * fresh descriptor the caller closes. Returns 0 or an error code. */
uint32_t serve_open_file(conn *c, const char *name, char *msg, size_t msz, int *fd, int *native);

/* Like serve_open_file, but the descriptor stays cached by the connection (md.0 and data.N stay
 * open, as in a local reader; at most MAX_OPEN_FILES, the oldest evicted): the caller does not
 * close it, and it is valid until the next call or serve_close_dataset. */
uint32_t serve_cached_file(conn *c, const char *name, char *msg, size_t msz, int *fd, int *native);

#endif /* SERVE_ROOT_H */
