/* Helpers of the remote tests: the fixture server's address, private servers started and killed
 * by a test, free loopback ports, and raw protocol frames for the malformed-message cases.
 * Every wait here is bounded in time. */
#ifndef GPUBP_TEST_REMOTE_UTIL_H
#define GPUBP_TEST_REMOTE_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The port of the fixture server (env GPUBP_REMOTE_PORT_FILE), or -1. */
int ru_fixture_port(void);
/* "gpubp://127.0.0.1:PORT/" + rel into a rotating buffer (8 slots per thread). */
const char *ru_url(int port, const char *rel);
/* The gpubp-serve binary (env GPUBP_SERVE). */
const char *ru_serve_bin(void);
/* A loopback port that was free a moment ago. */
int ru_free_port(void);
/* Starts gpubp-serve in the foreground as a child (args: NULL-terminated extra options; the
 * listen address is 127.0.0.1:port) and waits up to 10 s until it accepts connections.
 * Returns the pid, or -1. */
pid_t ru_start_server(int port, const char *root, const char *const *args);
/* Forks gpubp-serve without waiting for it (the client-first test). */
pid_t ru_spawn_server(int port, const char *root, const char *const *args);
/* Kills pid (SIGKILL) at exit unless ru_stop_server stopped it first. */
void ru_track(pid_t pid);
/* SIGTERM (or sig) and a bounded wait (10 s, then SIGKILL); returns the exit status as from
 * waitpid, or -1 if it had to be killed. */
int ru_stop_server(pid_t pid, int sig);
/* 1 when something accepts on 127.0.0.1:port. */
int ru_port_open(int port);
/* A raw TCP connection to 127.0.0.1:port with 10 s send/receive timeouts, or -1. */
int ru_connect(int port);
/* Sends a frame (header + body). 0 on success. */
int ru_send_frame(int fd, uint16_t type, uint32_t id, const void *body, size_t len);
/* Receives one frame: type, id and up to cap body bytes into body (the rest discarded);
 * *len gets the body length. 0 on success, -1 on EOF/error/timeout. */
int ru_recv_frame(int fd, uint16_t *type, uint32_t *id, void *body, size_t cap, uint32_t *len);
/* A HELLO frame body with the token into out; returns its length. */
size_t ru_hello_body(uint8_t *out, const char *token);
/* Opens a fresh connection, says HELLO with the fixture token and asks STATUS: 1 when the server
 * answers properly. */
int ru_server_alive(int port);
/* The token of the fixture server (env GPUBP_TOKEN). */
const char *ru_token(void);
double ru_now(void);

#endif
