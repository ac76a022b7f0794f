/* lib/remote: the client side of remote reads. A gbp_remote is one connection to a gpubp-serve
 * daemon with one dataset open on it; the reader (lib/engine: reader.c, dataset.c) reads md.idx,
 * md.0 and data.K through it instead of through local files. The wire protocol is proto.h and
 * docs/remote-protocol.md. Depends on lib/common and POSIX sockets only.
 *
 * Every call is thread-safe: calls on one handle serialise on its connection (one pread is
 * itself pipelined, so a single large read already keeps the connection busy). Failures set the
 * thread's error record (gbp_error) with a message that names the URL.
 *
 * A broken connection (server killed, reset, I/O timeout) fails the call that sees it with
 * GPUBP_ERR_IO and every later call on the handle at once; it never hangs longer than the I/O
 * timeout (60 s, or the environment variable GPUBP_REMOTE_IO_TIMEOUT in seconds).
 *
 * The token: the open parameter token_file (a file whose first line is the token) when the
 * build's gbp_params has it (GBP_PARAMS_HAVE_TOKEN_FILE), else the environment variable
 * GPUBP_TOKEN, else the file named by GPUBP_TOKEN_FILE; no token when none is set.
 * GPUBP_REMOTE_VERBOSE=1 prints connection retries on stderr (otherwise retries are silent). */
#ifndef GBP_REMOTE_H
#define GBP_REMOTE_H

#include <stddef.h>
#include <stdint.h>

#include "common/common.h"

typedef struct gbp_remote gbp_remote;

/* Parses "gpubp://HOST:PORT/REL/PATH.bp" (HOST may be [v6]; PORT defaults to 7390), connects
 * (retrying refused, reset and timed-out connections: 1 + params->retries attempts, each
 * bounded by params->connect_timeout, with pauses of params->retry_delay doubling up to 1 s;
 * with the defaults this lasts about 17 s), presents the token and opens the dataset on the
 * server. params may be NULL (the defaults). On success *out is a new handle the caller closes
 * with gbp_remote_close.
 * Errors: GPUBP_ERR_INVALID_ARG for a malformed URL; GPUBP_ERR_IO naming the address when the
 * retries run out, when the server refuses the token (native EACCES) or the path (outside its
 * root, native EACCES), or when the connection breaks; GPUBP_ERR_NOT_FOUND / GPUBP_ERR_NOT_BP4 /
 * GPUBP_ERR_BP5 as the server reports them; GPUBP_ERR_FORMAT for a malformed reply;
 * GPUBP_ERR_NOMEM. */
int gbp_remote_open(gbp_remote **out, const char *url, const gbp_params *params);

/* Reads a whole file of the dataset ("md.idx") into a new buffer the caller frees with gbp_free
 * (*data may be NULL when *len is 0). GPUBP_ERR_NOT_FOUND (no message needed) when the file does
 * not exist; other errors as gbp_remote_pread. */
int gbp_remote_read_file(gbp_remote *r, const char *name, uint8_t **data, size_t *len);

/* Current size of a file of the dataset ("md.0", "data.3"); GPUBP_ERR_NOT_FOUND when it does
 * not exist. */
int gbp_remote_size(gbp_remote *r, const char *name, uint64_t *size);

/* Reads exactly n bytes at off of a file of the dataset into buf (host memory). Large reads are
 * split into chunks with several requests in flight. A file that ends first is GPUBP_ERR_FORMAT
 * ("... run past its end"); a missing file GPUBP_ERR_NOT_FOUND; a lost connection GPUBP_ERR_IO.
 * On failure the contents of buf are unspecified. */
int gbp_remote_pread(gbp_remote *r, const char *name, void *buf, size_t n, uint64_t off);

/* Closes the dataset and the connection and frees the handle. Accepts NULL. */
void gbp_remote_close(gbp_remote *r);

/* 1 when path starts with "gpubp://", else 0 (NULL gives 0). */
int gbp_is_remote_url(const char *path);

/* The URL the handle was opened with ("gpubp://host:port/path"), for messages. Borrowed: valid
 * until gbp_remote_close. */
const char *gbp_remote_url(const gbp_remote *r);

#endif /* GBP_REMOTE_H */
