/* tools/serve/serve_conn.h: the protocol side of gpubp-serve (lib/remote/proto.h,
 * docs/remote-protocol.md). */
#ifndef SERVE_CONN_H
#define SERVE_CONN_H

#include "serve/serve_state.h"

/* The thread of one accepted connection (pthread_create's start routine; arg is its conn slot,
 * with fd, id and peer set and the rest reset). Serves requests until the client closes, the
 * idle timeout or a protocol error; then closes the dataset, shuts the socket down (the main
 * thread closes it), marks the slot done and wakes the main loop through S.sigpipe. */
void *serve_conn_main(void *arg);

/* Sends an ERROR message (code, native errno value, the printf-style message cut to 511 bytes)
 * for request id on fd. Returns 0, or the errno value of the failed send. Any thread. */
int serve_reply_error(int fd, uint32_t id, uint32_t code, int native, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

#endif /* SERVE_CONN_H */
