/* lib/remote/wire.h: the socket loops of the remote protocol, shared by the client
 * (lib/remote/remote.c) and the server (tools/serve/). They work on plain file descriptors and
 * return errno values, so they need nothing but libc: the server links them without the library.
 *
 * Both loops retry EINTR and nothing else. A socket with SO_SNDTIMEO / SO_RCVTIMEO set reports a
 * timeout as EAGAIN or EWOULDBLOCK; the caller decides what that means. */
#ifndef GBP_WIRE_H
#define GBP_WIRE_H

#include <stddef.h>
#include <sys/uio.h>

/* What gbp_wire_recv_all returns when the peer ended the stream before n bytes arrived. Negative,
 * so that it never equals an errno value. */
#define GBP_WIRE_EOF (-1)

/* Sends every byte of the n buffers iov[0..n) (sendmsg with MSG_NOSIGNAL: a closed peer gives
 * EPIPE, not SIGPIPE). The array is consumed: iov_base and iov_len of its entries are advanced
 * as bytes go out, so the caller passes a scratch copy. Entries of length 0 are allowed.
 * Returns 0 when all bytes are sent, or the errno value of the failed send. */
int gbp_wire_send_all(int fd, struct iovec *iov, int n);

/* Receives exactly n bytes into buf. Returns 0 when all n arrived; GBP_WIRE_EOF when the stream
 * ended first (*got, when not NULL, says how many bytes came before the end: 0 is a clean end
 * between messages); or the errno value of the failed receive. *got is set in every case. */
int gbp_wire_recv_all(int fd, void *buf, size_t n, size_t *got);

#endif /* GBP_WIRE_H */
