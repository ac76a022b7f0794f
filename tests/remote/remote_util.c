#include "remote/remote_util.h"

#include <errno.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "remote/proto.h"

double ru_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

int ru_fixture_port(void)
{
    const char *pf = getenv("GPUBP_REMOTE_PORT_FILE");
    if (!pf) return -1;
    FILE *f = fopen(pf, "r");
    if (!f) return -1;
    int port = -1;
    if (fscanf(f, "%d", &port) != 1) port = -1;
    fclose(f);
    return port;
}

const char *ru_url(int port, const char *rel)
{
    static _Thread_local char slots[8][4400]; /* per thread: the concurrency test uses it */
    static _Thread_local int k;
    char *s = slots[k++ % 8];
    snprintf(s, sizeof slots[0], "gpubp://127.0.0.1:%d/%s", port, rel);
    return s;
}

const char *ru_serve_bin(void)
{
    const char *b = getenv("GPUBP_SERVE");
    return b ? b : "gpubp-serve";
}

const char *ru_token(void)
{
    const char *t = getenv("GPUBP_TOKEN");
    return t ? t : "";
}

int ru_free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    socklen_t l = sizeof a;
    int port = -1;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &l) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0) close(fd);
    return port;
}

int ru_connect(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((uint16_t)port);
    struct timeval tv = {10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

int ru_port_open(int port)
{
    int fd = ru_connect(port);
    if (fd < 0) return 0;
    close(fd);
    return 1;
}

/* Servers started here and not stopped yet: killed at exit, so that a failed test leaves no
 * process behind (ctest would wait for it). */
static pid_t spawned[64];

static void kill_leftovers(void)
{
    for (int i = 0; i < 64; i++)
        if (spawned[i] > 0) {
            kill(spawned[i], SIGKILL);
            waitpid(spawned[i], NULL, 0);
            spawned[i] = 0;
        }
}

void ru_track(pid_t pid)
{
    static int registered;
    if (!registered) atexit(kill_leftovers);
    registered = 1;
    for (int i = 0; i < 64; i++)
        if (spawned[i] <= 0) {
            spawned[i] = pid;
            return;
        }
}

static void untrack(pid_t pid)
{
    for (int i = 0; i < 64; i++)
        if (spawned[i] == pid) spawned[i] = 0;
}

pid_t ru_spawn_server(int port, const char *root, const char *const *args)
{
    char listen[64];
    snprintf(listen, sizeof listen, "127.0.0.1:%d", port);
    const char *argv[40];
    int n = 0;
    argv[n++] = ru_serve_bin();
    argv[n++] = "--listen";
    argv[n++] = listen;
    argv[n++] = "--root";
    argv[n++] = root;
    for (int i = 0; args && args[i] && n < 38; i++) argv[n++] = args[i];
    argv[n] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    if (pid > 0) ru_track(pid);
    return pid;
}

pid_t ru_start_server(int port, const char *root, const char *const *args)
{
    pid_t pid = ru_spawn_server(port, root, args);
    if (pid < 0) return -1;
    for (int i = 0; i < 1000; i++) { /* 10 s */
        if (ru_port_open(port)) return pid;
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) return -1;
        sleep_ms(10);
    }
    ru_stop_server(pid, SIGKILL);
    return -1;
}

int ru_stop_server(pid_t pid, int sig)
{
    if (pid <= 0) return -1;
    untrack(pid);
    kill(pid, sig);
    for (int i = 0; i < 1000; i++) { /* 10 s */
        int st;
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) return st;
        if (w < 0) return -1;
        sleep_ms(10);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
}

int ru_send_frame(int fd, uint16_t type, uint32_t id, const void *body, size_t len)
{
    uint8_t h[GBPR_HEADER_SIZE];
    gbpr_put_header(h, type, id, (uint32_t)len);
    if (send(fd, h, sizeof h, MSG_NOSIGNAL) != (ssize_t)sizeof h) return -1;
    const uint8_t *p = body;
    while (len > 0) {
        ssize_t k = send(fd, p, len, MSG_NOSIGNAL);
        if (k <= 0) return -1;
        p += k;
        len -= (size_t)k;
    }
    return 0;
}

static int recv_n(int fd, void *buf, size_t n)
{
    uint8_t *p = buf;
    while (n > 0) {
        ssize_t k = recv(fd, p, n, 0);
        if (k <= 0) {
            if (k < 0 && errno == EINTR) continue;
            return -1;
        }
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

int ru_recv_frame(int fd, uint16_t *type, uint32_t *id, void *body, size_t cap, uint32_t *len)
{
    uint8_t hb[GBPR_HEADER_SIZE];
    gbpr_header h;
    if (recv_n(fd, hb, sizeof hb) || gbpr_get_header(hb, &h)) return -1;
    *type = h.type;
    *id = h.id;
    *len = h.len;
    size_t take = h.len < cap ? h.len : cap;
    if (take && recv_n(fd, body, take)) return -1;
    uint8_t tmp[4096];
    for (size_t rest = h.len - take; rest > 0;) {
        size_t k = rest < sizeof tmp ? rest : sizeof tmp;
        if (recv_n(fd, tmp, k)) return -1;
        rest -= k;
    }
    return 0;
}

size_t ru_hello_body(uint8_t *out, const char *token)
{
    size_t tl = strlen(token);
    gbpr_st32(out, GBPR_VERSION);
    gbpr_st32(out + 4, (uint32_t)tl);
    memcpy(out + 8, token, tl);
    return 8 + tl;
}

int ru_server_alive(int port)
{
    int fd = ru_connect(port);
    if (fd < 0) return 0;
    uint8_t b[8 + GBPR_MAX_TOKEN], r[GBPR_MAX_MESSAGE];
    uint16_t t;
    uint32_t id, len;
    int ok = ru_send_frame(fd, GBPR_HELLO, 1, b, ru_hello_body(b, ru_token())) == 0 &&
             ru_recv_frame(fd, &t, &id, r, sizeof r, &len) == 0 && t == (GBPR_HELLO | GBPR_REPLY) &&
             ru_send_frame(fd, GBPR_STATUS, 2, NULL, 0) == 0 &&
             ru_recv_frame(fd, &t, &id, r, sizeof r, &len) == 0 &&
             t == (GBPR_STATUS | GBPR_REPLY) && id == 2;
    close(fd);
    return ok;
}
