/* rustls on a connected socket, for the HTTPS commands over loopback TCP (core/https.c: https-server,
 * https-get), through rustls-ffi's read and write callbacks on the socket. One server worker and one client
 * thread. A client connection the core asks to record (conn->negotiated) has its bytes read on their way from its
 * handshake to its close (watch.c). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "loopback.h"
#include "rustls_cases.h"

/* The watch of the connection being recorded: one at a time in a client thread, from connect to close. */
static _Thread_local rtls_watch *watching;

/* A socket, and the watch its bytes go through (NULL: none). */
typedef struct {
    int fd;
    rtls_watch *watch;
} socket_io;

static socket_io io_of(const sp_tls_socket *conn)
{
    return (socket_io){conn->fd, conn->negotiated ? watching : NULL};
}

static rustls_io_result fd_read(void *userdata, uint8_t *buf, size_t n, size_t *out_n)
{
    socket_io *io = userdata;
    ssize_t got = read(io->fd, buf, n);
    if (got < 0)
        return errno;
    *out_n = (size_t)got;
    if (io->watch)
        rtls_watch_bytes(io->watch, 0, buf, *out_n);
    return 0;
}

static rustls_io_result fd_write(void *userdata, const uint8_t *buf, size_t n, size_t *out_n)
{
    socket_io *io = userdata;
    ssize_t put = write(io->fd, buf, n);
    if (put < 0)
        return errno;
    *out_n = (size_t)put;
    if (io->watch)
        rtls_watch_bytes(io->watch, 1, buf, *out_n);
    return 0;
}

static int flush_fd(struct rustls_connection *conn, socket_io io)
{
    while (rustls_connection_wants_write(conn)) {
        size_t n = 0;
        if (rustls_connection_write_tls(conn, fd_write, &io, &n) != 0)
            return 0;
    }
    return 1;
}

/* What arrives on the socket, read and processed: 1, 0 on a failure, -1 at the end of the stream. */
static int take_fd(struct rustls_connection *conn, socket_io io)
{
    size_t n = 0;
    if (rustls_connection_read_tls(conn, fd_read, &io, &n) != 0)
        return 0;
    if (n == 0)
        return -1;
    return rustls_connection_process_new_packets(conn) == RUSTLS_RESULT_OK;
}

static int handshake_fd(struct rustls_connection *conn, socket_io io)
{
    while (rustls_connection_is_handshaking(conn)) {
        if (!flush_fd(conn, io))
            return 0;
        if (rustls_connection_is_handshaking(conn) && take_fd(conn, io) != 1)
            return 0;
    }
    return flush_fd(conn, io);
}

static prep_status parse(const case_name *name, void *config, prep_result *res)
{
    return rtls_parse(name, config, res);
}

static void *server_new(void *config, char *ca_file, size_t ca_file_len, prep_result *res)
{
    const struct rustls_server_config *server = NULL;
    const struct rustls_client_config *unused = NULL;
    const char *roots = rtls_roots_file(res);
    if (!roots)
        return NULL;
    snprintf(ca_file, ca_file_len, "%s", roots);
    return rtls_make_configs(config, &server, &unused, res) == PREP_OK ? (void *)server : NULL;
}

static void server_free(void *server)
{
    rustls_server_config_free(server);
}

static int accept_tls(void *server, sp_tls_socket *conn)
{
    struct rustls_connection *tls = NULL;
    if (rustls_server_connection_new(server, &tls) == RUSTLS_RESULT_OK && handshake_fd(tls, io_of(conn))) {
        conn->tls = tls;
        return 1;
    }
    rustls_connection_free(tls);
    return 0;
}

static void *client_context(const void *config, const char *ca_file, prep_result *res)
{
    return (void *)rtls_client_config_trusting(config, ca_file, res);
}

static void context_free(void *config)
{
    rustls_client_config_free(config);
}

/* The recorded connection's watch done with: what its bytes did not say, from rustls-ffi's getters. */
static void watched(sp_tls_socket *conn, struct rustls_connection *tls)
{
    if (conn->negotiated && watching) {
        if (tls)
            rtls_watch_end(watching, tls);
        free(watching);
        watching = NULL;
    }
}

/* A server's close_notify goes out with its answer, in one write. */
static void close_tls(sp_tls_socket *conn, int server)
{
    if (server) {
        rustls_connection_send_close_notify(conn->tls);
        flush_fd(conn->tls, io_of(conn));
    }
    watched(conn, conn->tls);
    rustls_connection_free(conn->tls);
}

static int connect_tls(void *context, sp_tls_socket *conn, char *why, size_t why_len)
{
    struct rustls_connection *tls = NULL;
    if (conn->negotiated && (watching = malloc(sizeof(*watching))) != NULL)
        rtls_watch_start(watching, conn->negotiated);
    if (rustls_client_connection_new(context, "localhost", &tls) == RUSTLS_RESULT_OK
        && handshake_fd(tls, io_of(conn))) {
        conn->tls = tls;
        return 1;
    }
    snprintf(why, why_len, "handshake failed");
    watched(conn, NULL);
    rustls_connection_free(tls);
    return 0;
}

static void check(const void *config, sp_tls_socket *conn, char *problem, size_t problem_len, char *checked,
                  size_t checked_len)
{
    char found[200];     /* rtls_check's problem: "group:NAME" when only the group differs */
    rtls_pair pair = {.client = conn->tls};
    rtls_check(config, &pair, 0, found, sizeof(found), checked, checked_len);
    if (strncmp(found, "group:", 6) == 0)
        snprintf(problem, problem_len, "negotiated another group than asked: %s", found + 6);
    else
        snprintf(problem, problem_len, "%s", found);
}

/* Queued: it goes out with the next recv_tls or close_tls. */
static int send_tls(sp_tls_socket *conn, const char *buf, size_t len)
{
    size_t n = 0;
    return rustls_connection_write(conn->tls, (const uint8_t *)buf, len, &n) == RUSTLS_RESULT_OK && n == len;
}

static int recv_tls(sp_tls_socket *conn, char *buf, size_t len)
{
    if (!flush_fd(conn->tls, io_of(conn)))
        return 0;
    for (;;) {
        size_t n = 0;
        unsigned int rc = rustls_connection_read(conn->tls, (uint8_t *)buf, len, &n);
        if (rc == RUSTLS_RESULT_OK)
            return (int)n;                             /* 0: close_notify */
        if (rc != RUSTLS_RESULT_PLAINTEXT_EMPTY || take_fd(conn->tls, io_of(conn)) != 1)
            return 0;
    }
}

const sp_https_backend SP_HTTPS = {
    .config_size = sizeof(rtls_config), .parse = parse, .server_new = server_new, .server_free = server_free,
    .accept = accept_tls, .client_context = client_context, .context_free = context_free, .connect = connect_tls,
    .check = check, .send = send_tls, .recv = recv_tls, .close = close_tls,
};
