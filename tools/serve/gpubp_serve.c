/* gpubp-serve: serves the BP4 datasets below one root directory to gpubp:// clients (protocol:
 * lib/remote/proto.h, docs/remote-protocol.md). Outline:
 *   main thread: parse options, resolve the root, bind (loopback by default), optionally go to the
 *                background, then poll the listening socket and a self-pipe that SIGTERM/SIGINT
 *                write to; each accepted connection gets a slot and a thread (at most
 *                --max-clients; one more is told "busy" and closed). On a signal it stops
 *                accepting, shuts every connection down, joins the threads and removes its pid
 *                file.
 *   connection thread: HELLO (token) first, then OPEN / READ_FILE / SIZE / PREAD / CLOSE / STATUS
 *                      in order, one reply per request. A message that breaks the protocol gets an
 *                      ERROR reply and closes that connection only.
 * Only md.idx, md.0 and data.N of a dataset below the root are served: paths with ".." are
 * refused, and every dataset and file is resolved with realpath() and checked to lie below the
 * root (symbolic links that lead out are refused). Needs only libc and POSIX threads.
 * Files: this one (main, options, start-up, listening, signals, reaping); serve_conn.c (the
 * protocol handlers and the connection thread); serve_root.c (the sandbox and the file cache);
 * serve_state.c (the server state and the log); lib/remote/wire.c (the socket loops, shared
 * with the client). */
#include "serve/serve_state.h"
#include "serve/serve_conn.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_LISTEN "127.0.0.1:7390"

/* Joins finished connection threads and frees their slots (main thread). */
static void reap(void)
{
    for (int i = 0; i < S.max_clients; i++) {
        conn *c = &S.conns[i];
        pthread_mutex_lock(&S.lock);
        int fin = c->used && c->done;
        pthread_mutex_unlock(&S.lock);
        if (!fin) continue;
        pthread_join(c->th, NULL);
        close(c->fd);
        pthread_mutex_lock(&S.lock);
        c->used = c->done = 0;
        c->fd = -1;
        pthread_mutex_unlock(&S.lock);
    }
}

/* ---- start-up ------------------------------------------------------------------------------- */

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    int e = errno;
    stop_flag = 1;
    char b = 's';
    ssize_t w = write(S.sigpipe[1], &b, 1);
    (void)w;
    errno = e;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: gpubp-serve [options]\n"
            "Serves the BP4 datasets below --root to gpubp://HOST:PORT/PATH.bp readers.\n"
            "  --listen ADDR:PORT   address to listen on (default %s; [::1]:PORT for IPv6;\n"
            "                       port 0 picks a free one, see --port-file)\n"
            "  --root DIR           directory the URL paths are relative to (default: .)\n"
            "  --token-file FILE    clients must present the first line of FILE as the token\n"
            "  --max-clients N      concurrent connections (default 64)\n"
            "  --idle-timeout S     close a connection silent for S seconds (default 300)\n"
            "  --background         detach once listening (with --pid-file for fixtures)\n"
            "  --pid-file FILE      write the server's pid to FILE; removed at exit\n"
            "  --port-file FILE     write the port it listens on to FILE\n"
            "  --log-file FILE      append log lines to FILE instead of stderr\n"
            "  -v, --verbose        log one line per request\n"
            "  --stop               stop the server of --pid-file (SIGTERM, wait up to 10 s)\n"
            "  --version, -h/--help\n",
            DEFAULT_LISTEN);
}

static int write_file_atomic(const char *path, const char *text)
{
    char tmp[PATH_MAX + 16];
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) return -1;
    int ok = fputs(text, f) >= 0;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

static int stop_server(const char *pidfile)
{
    FILE *f = fopen(pidfile, "r");
    if (!f) {
        fprintf(stderr, "gpubp-serve --stop: no pid file %s (not running)\n", pidfile);
        return 0;
    }
    long pid = 0;
    int got = fscanf(f, "%ld", &pid);
    fclose(f);
    if (got != 1 || pid <= 1) {
        fprintf(stderr, "gpubp-serve --stop: %s does not hold a pid\n", pidfile);
        return 1;
    }
    if (kill((pid_t)pid, SIGTERM) != 0) {
        unlink(pidfile);
        return 0;
    }
    /* bounded wait: the server removes its pid file when it has shut down */
    for (int i = 0; i < 500; i++) {
        if (kill((pid_t)pid, 0) != 0 || access(pidfile, F_OK) != 0) return 0;
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    fprintf(stderr, "gpubp-serve --stop: pid %ld did not stop in 10 s; killing it\n", pid);
    kill((pid_t)pid, SIGKILL);
    unlink(pidfile);
    return 1;
}

static int listen_on(const char *spec, int *port_out)
{
    char host[300];
    const char *colon, *h = spec;
    size_t hl;
    if (spec[0] == '[') {
        const char *e = strchr(spec, ']');
        if (!e || e[1] != ':') return -1;
        h = spec + 1;
        hl = (size_t)(e - h);
        colon = e + 1;
    } else {
        colon = strrchr(spec, ':');
        if (!colon) return -1;
        hl = (size_t)(colon - spec);
    }
    if (hl >= sizeof host) return -1;
    memcpy(host, h, hl);
    host[hl] = '\0';
    if (hl == 0) strcpy(host, "127.0.0.1");
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    int g = getaddrinfo(host, colon + 1, &hints, &res);
    if (g) {
        fprintf(stderr, "gpubp-serve: --listen %s: %s\n", spec, gai_strerror(g));
        return -2;
    }
    int fd = -1;
    for (struct addrinfo *a = res; a; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) continue;
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 128) == 0) break;
        fprintf(stderr, "gpubp-serve: cannot listen on %s: %s\n", spec, strerror(errno));
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) return -2;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    *port_out = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                                         : ntohs(((struct sockaddr_in *)&ss)->sin_port);
    return fd;
}

static void peer_name(const struct sockaddr_storage *ss, socklen_t sl, char *out, size_t n)
{
    char h[64] = "?", p[16] = "?";
    getnameinfo((const struct sockaddr *)ss, sl, h, sizeof h, p, sizeof p,
                NI_NUMERICHOST | NI_NUMERICSERV);
    snprintf(out, n, "%s:%s", h, p);
}

/* Closes a connection that was refused, after reading what the client already sent (up to
 * 100 ms), so that the refusal arrives rather than a reset. */
static void linger_close(int fd)
{
    shutdown(fd, SHUT_WR);
    struct timeval tv = {0, 100000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char b[512];
    for (int i = 0; i < 64 && recv(fd, b, sizeof b, 0) > 0; i++) {
    }
    close(fd);
}

static void accept_one(int lfd)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    int cfd = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC);
    if (cfd < 0) return;
    conn *c = NULL;
    pthread_mutex_lock(&S.lock);
    for (int i = 0; i < S.max_clients && !c; i++)
        if (!S.conns[i].used) c = &S.conns[i];
    if (c) {
        c->used = 1;
        c->done = 0;
        c->fd = cfd;
        c->id = ++S.next_id;
        S.total_conns++;
    }
    pthread_mutex_unlock(&S.lock);
    char peer[80];
    peer_name(&ss, sl, peer, sizeof peer);
    if (!c) {
        VLOG("%s: refused, %d connections already", peer, S.max_clients);
        serve_reply_error(cfd, 0, GBPR_E_BUSY, 0, "the server has %d connections; retry later",
                    S.max_clients);
        linger_close(cfd);
        return;
    }
    snprintf(c->peer, sizeof c->peer, "%s", peer);
    c->authed = 0;
    c->dirfd = -1;
    c->nfiles = c->next_evict = 0;
    if (pthread_create(&c->th, NULL, serve_conn_main, c) != 0) {
        logmsg("cannot start a thread for %s: %s", peer, strerror(errno));
        serve_reply_error(cfd, 0, GBPR_E_BUSY, 0, "the server cannot start a thread; retry later");
        close(cfd);
        pthread_mutex_lock(&S.lock);
        c->used = 0;
        c->fd = -1;
        pthread_mutex_unlock(&S.lock);
    }
}

static int read_token_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "gpubp-serve: --token-file %s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t n = fread(S.token, 1, sizeof S.token, f);
    fclose(f);
    size_t e = 0; /* the first line is the token */
    while (e < n && S.token[e] != '\n' && S.token[e] != '\r') e++;
    if (e > GBPR_MAX_TOKEN) {
        fprintf(stderr, "gpubp-serve: --token-file %s: the token is longer than %u bytes\n", path,
                GBPR_MAX_TOKEN);
        return -1;
    }
    if (e == 0) {
        fprintf(stderr, "gpubp-serve: --token-file %s: the first line is empty\n", path);
        return -1;
    }
    S.toklen = e;
    S.have_token = 1;
    return 0;
}

int main(int argc, char **argv)
{
    const char *listen_spec = DEFAULT_LISTEN, *root = ".", *token_file = NULL, *pid_file = NULL;
    const char *port_file = NULL, *log_file = NULL;
    int background = 0, stop = 0;
    S.max_clients = 64;
    S.idle_timeout = 300;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEEDV()                                                                  \
    do {                                                                         \
        if (!v) {                                                                \
            fprintf(stderr, "gpubp-serve: %s needs a value\n", a);               \
            return 2;                                                            \
        }                                                                        \
        i++;                                                                     \
    } while (0)
        if (!strcmp(a, "--listen")) { NEEDV(); listen_spec = v; }
        else if (!strcmp(a, "--root")) { NEEDV(); root = v; }
        else if (!strcmp(a, "--token-file")) { NEEDV(); token_file = v; }
        else if (!strcmp(a, "--pid-file")) { NEEDV(); pid_file = v; }
        else if (!strcmp(a, "--port-file")) { NEEDV(); port_file = v; }
        else if (!strcmp(a, "--log-file")) { NEEDV(); log_file = v; }
        else if (!strcmp(a, "--max-clients")) {
            NEEDV();
            S.max_clients = atoi(v);
            if (S.max_clients < 1 || S.max_clients > 4096) {
                fprintf(stderr, "gpubp-serve: --max-clients must be 1..4096\n");
                return 2;
            }
        } else if (!strcmp(a, "--idle-timeout")) {
            NEEDV();
            S.idle_timeout = atof(v);
            if (!(S.idle_timeout >= 1 && S.idle_timeout <= 1e6)) {
                fprintf(stderr, "gpubp-serve: --idle-timeout must be 1..1e6 seconds\n");
                return 2;
            }
        } else if (!strcmp(a, "--background")) background = 1;
        else if (!strcmp(a, "--stop")) stop = 1;
        else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) S.verbose = 1;
        else if (!strcmp(a, "--version")) {
            printf("gpubp-serve %s (protocol %u)\n", SERVE_VERSION, GBPR_VERSION);
            return 0;
        }
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return 0; }
        else { fprintf(stderr, "gpubp-serve: unknown option '%s'\n", a); usage(stderr); return 2; }
#undef NEEDV
    }
    if (stop) {
        if (!pid_file) { fprintf(stderr, "gpubp-serve: --stop needs --pid-file\n"); return 2; }
        return stop_server(pid_file);
    }
    if (!realpath(root, S.root)) {
        fprintf(stderr, "gpubp-serve: --root %s: %s\n", root, strerror(errno));
        return 1;
    }
    struct stat st;
    if (stat(S.root, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "gpubp-serve: --root %s is not a directory\n", root);
        return 1;
    }
    S.rootlen = strlen(S.root);
    if (token_file && read_token_file(token_file)) return 1;
    if (log_file && !freopen(log_file, "a", stderr)) return 1;
    if (log_file) setvbuf(stderr, NULL, _IOLBF, 0);
    int port = 0;
    int lfd = listen_on(listen_spec, &port);
    if (lfd == -1) {
        fprintf(stderr, "gpubp-serve: --listen %s: expected ADDR:PORT\n", listen_spec);
        return 2;
    }
    if (lfd < 0) return 1;
    if (pipe(S.sigpipe) != 0) { perror("gpubp-serve: pipe"); return 1; }
    fcntl(S.sigpipe[0], F_SETFL, O_NONBLOCK);
    fcntl(S.sigpipe[1], F_SETFL, O_NONBLOCK);
    S.conns = calloc((size_t)S.max_clients, sizeof *S.conns);
    if (!S.conns) { fprintf(stderr, "gpubp-serve: out of memory\n"); return 1; }
    for (int i = 0; i < S.max_clients; i++) S.conns[i].fd = -1;

    /* handlers first: a SIGTERM that comes as soon as the pid file exists is a clean stop */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    if (background) {
        /* the socket is listening already, so clients can connect as soon as the parent returns */
        int ready[2];
        if (pipe(ready) != 0) { perror("gpubp-serve: pipe"); return 1; }
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0) { perror("gpubp-serve: fork"); return 1; }
        if (pid > 0) {
            close(ready[1]);
            char b = 0;
            ssize_t k;
            do k = read(ready[0], &b, 1);
            while (k < 0 && errno == EINTR);
            return k == 1 && b == 'y' ? 0 : 1;
        }
        close(ready[0]);
        setsid();
        int dn = open("/dev/null", O_RDWR);
        if (dn >= 0) {
            dup2(dn, 0);
            dup2(dn, 1);
            if (dn > 2) close(dn);
        }
        char pidtext[32];
        snprintf(pidtext, sizeof pidtext, "%ld\n", (long)getpid());
        if (pid_file && write_file_atomic(pid_file, pidtext)) {
            fprintf(stderr, "gpubp-serve: cannot write %s: %s\n", pid_file, strerror(errno));
            return 1;
        }
        if (port_file) {
            char pt[16];
            snprintf(pt, sizeof pt, "%d\n", port);
            if (write_file_atomic(port_file, pt)) return 1;
        }
        ssize_t w = write(ready[1], "y", 1);
        (void)w;
        close(ready[1]);
    } else {
        char t[32];
        snprintf(t, sizeof t, "%ld\n", (long)getpid());
        if (pid_file && write_file_atomic(pid_file, t)) {
            fprintf(stderr, "gpubp-serve: cannot write %s: %s\n", pid_file, strerror(errno));
            return 1;
        }
        snprintf(t, sizeof t, "%d\n", port);
        if (port_file && write_file_atomic(port_file, t)) return 1;
    }

    S.started = time(NULL);
    if (S.verbose)
        logmsg("listening on %s (port %d), root %s, token %s, pid %ld", listen_spec, port, S.root,
               S.have_token ? "required" : "none", (long)getpid());

    while (!stop_flag) {
        struct pollfd p[2] = {{lfd, POLLIN, 0}, {S.sigpipe[0], POLLIN, 0}};
        int pr = poll(p, 2, 1000);
        if (pr < 0 && errno != EINTR) break;
        if (p[1].revents & POLLIN) {
            char b[64];
            while (read(S.sigpipe[0], b, sizeof b) > 0) {
            }
        }
        reap();
        if (!stop_flag && (p[0].revents & POLLIN)) accept_one(lfd);
    }
    /* clean shutdown: no new connections, wake every connection thread, join them */
    close(lfd);
    pthread_mutex_lock(&S.lock);
    for (int i = 0; i < S.max_clients; i++)
        if (S.conns[i].used) shutdown(S.conns[i].fd, SHUT_RDWR);
    pthread_mutex_unlock(&S.lock);
    for (int i = 0; i < S.max_clients; i++) {
        if (!S.conns[i].used) continue;
        pthread_join(S.conns[i].th, NULL);
        close(S.conns[i].fd);
    }
    if (S.verbose) logmsg("stopped (%lu connections, %lu requests)", S.total_conns, S.requests);
    free(S.conns);
    if (pid_file) unlink(pid_file);
    return 0;
}
