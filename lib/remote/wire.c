/* The socket loops of the remote protocol (wire.h): sendmsg until a vector is out, recv until a
 * buffer is full. */
#include "remote/wire.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>

int gbp_wire_send_all(int fd, struct iovec *iov, int n)
{
    while (n > 0) {
        struct msghdr m;
        memset(&m, 0, sizeof m);
        m.msg_iov = iov;
        m.msg_iovlen = (size_t)n;
        ssize_t k = sendmsg(fd, &m, MSG_NOSIGNAL);
        if (k < 0) {
            if (errno == EINTR) continue;
            return errno ? errno : EIO;
        }
        /* drop the buffers that went out whole, then advance into the first partial one */
        size_t done = (size_t)k;
        while (n > 0 && done >= iov->iov_len) {
            done -= iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + done;
            iov->iov_len -= done;
        }
    }
    return 0;
}

int gbp_wire_recv_all(int fd, void *buf, size_t n, size_t *got)
{
    uint8_t *p = buf;
    size_t have = 0;
    int rc = 0;
    while (have < n) {
        ssize_t k = recv(fd, p + have, n - have, 0);
        if (k == 0) {
            rc = GBP_WIRE_EOF;
            break;
        }
        if (k < 0) {
            if (errno == EINTR) continue;
            rc = errno ? errno : EIO;
            break;
        }
        have += (size_t)k;
    }
    if (got) *got = have;
    return rc;
}
