/* rustls over real loopback TCP, speaking the OpenSSL backend's protocol
 * (openssl/loopback.c), so either end of a `tls --loopback --server-lib`
 * pair can be either library:
 *
 *   harness https-server DIR PROTO GROUP CERT MAX_CONNECTIONS
 *   harness https-get PORT CA_FILE PROTO GROUP CERT new|shared COUNT
 *
 * The server listens on 127.0.0.1 only and stops by itself (after
 * MAX_CONNECTIONS, or 30 s without one). The client's first handshake is
 * checked before anything is timed: version, suite and group as asked,
 * whoever the server is. */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "backend.h"
#include "harness.h"
#include "loopback.h"
#include "rustls_cases.h"


static rustls_io_result fd_read(void *userdata, uint8_t *buf, size_t n, size_t *out_n)
{
    ssize_t got = read(*(int *)userdata, buf, n);
    if (got < 0)
        return errno;
    *out_n = (size_t)got;
    return 0;
}

static rustls_io_result fd_write(void *userdata, const uint8_t *buf, size_t n, size_t *out_n)
{
    ssize_t put = write(*(int *)userdata, buf, n);
    if (put < 0)
        return errno;
    *out_n = (size_t)put;
    return 0;
}

static int flush_fd(struct rustls_connection *conn, int fd)
{
    while (rustls_connection_wants_write(conn)) {
        size_t n = 0;
        if (rustls_connection_write_tls(conn, fd_write, &fd, &n) != 0)
            return 0;
    }
    return 1;
}

/* What arrives on `fd`, read and processed: 1, 0 on a failure, -1 at the end of the stream. */
static int take_fd(struct rustls_connection *conn, int fd)
{
    size_t n = 0;
    if (rustls_connection_read_tls(conn, fd_read, &fd, &n) != 0)
        return 0;
    if (n == 0)
        return -1;
    return rustls_connection_process_new_packets(conn) == RUSTLS_RESULT_OK;
}

static int handshake_fd(struct rustls_connection *conn, int fd)
{
    while (rustls_connection_is_handshaking(conn)) {
        if (!flush_fd(conn, fd))
            return 0;
        if (rustls_connection_is_handshaking(conn) && take_fd(conn, fd) != 1)
            return 0;
    }
    return flush_fd(conn, fd);
}

/* Plaintext into `buf` until `done` says so or the peer closes; the bytes read. */
static size_t read_plain(struct rustls_connection *conn, int fd, char *buf, size_t cap, int until_head)
{
    size_t total = 0;
    for (;;) {
        size_t n = 0;
        unsigned int rc = rustls_connection_read(conn, (uint8_t *)buf + total, cap - 1 - total, &n);
        if (rc == RUSTLS_RESULT_OK && n == 0)
            break;                                    /* close_notify */
        if (rc == RUSTLS_RESULT_OK) {
            total += n;
            buf[total] = '\0';
            if ((until_head && strstr(buf, "\r\n\r\n")) || total + 1 >= cap)
                break;
            continue;
        }
        if (rc != RUSTLS_RESULT_PLAINTEXT_EMPTY || take_fd(conn, fd) != 1)
            break;
    }
    return total;
}

static int parse(const char *proto, const char *group, const char *cert, const char *ctx, rtls_config *cfg,
                 prep_result *res)
{
    case_name name;
    return sp_handshake_name(&name, proto, group, cert, ctx) && rtls_parse(&name, cfg, res) == PREP_OK;
}

/* One accepted connection: handshake, read the request head, answer, close_notify. */
static void serve_one(void *ctx, int conn_fd)
{
    struct rustls_connection *conn = NULL;
    char request[4096];
    if (rustls_server_connection_new(ctx, &conn) == RUSTLS_RESULT_OK && handshake_fd(conn, conn_fd)
        && read_plain(conn, conn_fd, request, sizeof(request), 1) > 0) {
        size_t n = 0;
        rustls_connection_write(conn, (const uint8_t *)SP_HTTP_RESPONSE, strlen(SP_HTTP_RESPONSE), &n);
        rustls_connection_send_close_notify(conn);
        flush_fd(conn, conn_fd);
    }
    rustls_connection_free(conn);
}

int rustls_https_server(int argc, char **argv)
{
    rtls_config cfg;
    prep_result res = {0};
    const struct rustls_server_config *server = NULL;
    const struct rustls_client_config *unused = NULL;
    if (argc != 5 || !parse(argv[1], argv[2], argv[3], "new", &cfg, &res)) {
        sp_loopback_fail("bad https-server arguments", res.reason);
        return 2;
    }
    setenv("SSLPERF_CERT_DIR", argv[0], 1);
    const char *roots = rtls_roots_file(&res);
    if (!roots || rtls_make_configs(&cfg, &server, &unused, &res) != PREP_OK) {
        (res.status == PREP_NA ? sp_loopback_na : sp_loopback_fail)("cannot set up the server", res.reason);
        return 1;
    }
    int rc = sp_https_serve(atoi(argv[4]), roots, serve_one, (void *)server);
    rustls_server_config_free(server);
    unlink(roots);
    return rc;
}

struct client {
    const struct rustls_client_config *shared;     /* NULL: a new config, roots loaded, per request */
    rtls_config cfg;
    const char *ca_file;
};

/* One GET (sp_one_get); 1 and the three times, or 0 with `why` set. The first one's negotiation is checked. */
static int one_get(void *p, int port, uint64_t times[3], char *why, size_t why_len, char *checked, size_t checked_len)
{
    struct client *c = p;
    const rtls_config *cfg = &c->cfg;
    const struct rustls_client_config *shared = c->shared;
    const char *ca_file = c->ca_file;
    uint64_t start = sp_now_ns(SP_WALL);
    int fd = sp_connect_loopback(port), ok = 0;
    const struct rustls_client_config *config = NULL;
    struct rustls_connection *conn = NULL;
    prep_result res = {0};
    if (fd < 0) {
        snprintf(why, why_len, "cannot connect to 127.0.0.1:%d", port);
        goto done;
    }
    times[0] = sp_now_ns(SP_WALL) - start;
    config = shared ? shared : rtls_client_config_trusting(cfg, ca_file, &res);
    if (!config || rustls_client_connection_new(config, "localhost", &conn) != RUSTLS_RESULT_OK
        || !handshake_fd(conn, fd)) {
        snprintf(why, why_len, "handshake failed%s%s", res.reason[0] ? ": " : "", res.reason);
        goto done;
    }
    times[1] = sp_now_ns(SP_WALL) - start;
    if (checked && !checked[0]) {
        char problem[200];
        rtls_pair pair = {.client = conn};
        rtls_check(cfg, &pair, 0, problem, sizeof(problem), checked, checked_len);
        if (problem[0]) {
            snprintf(why, why_len, "%s%s", strncmp(problem, "group:", 6) ? "" : "negotiated another group than asked: ",
                     strncmp(problem, "group:", 6) ? problem : problem + 6);
            goto done;
        }
    }
    char buf[4096];
    size_t n = 0;
    if (rustls_connection_write(conn, (const uint8_t *)SP_HTTP_GET, strlen(SP_HTTP_GET), &n) != RUSTLS_RESULT_OK
        || !flush_fd(conn, fd)) {
        snprintf(why, why_len, "cannot send the request");
        goto done;
    }
    size_t total = read_plain(conn, fd, buf, sizeof(buf), 0);
    times[2] = sp_now_ns(SP_WALL) - start;
    ok = total == strlen(SP_HTTP_RESPONSE);
    if (!ok)
        snprintf(why, why_len, "short response (%zu bytes)", total);
done:
    rustls_connection_free(conn);
    if (!shared)
        rustls_client_config_free(config);
    if (fd >= 0)
        close(fd);
    return ok;
}

int rustls_https_get(int argc, char **argv)
{
    struct client c = {0};
    prep_result res = {0};
    if (argc != 7 || !parse(argv[2], argv[3], argv[4], argv[5], &c.cfg, &res)) {
        sp_loopback_fail("bad https-get arguments", res.reason);
        return 2;
    }
    int count = sp_request_count(argv[6]);
    if (!count)
        return 2;
    c.ca_file = argv[1];
    if (!c.cfg.new_config && !(c.shared = rtls_client_config_trusting(&c.cfg, argv[1], &res))) {
        sp_loopback_fail("cannot make the client config", res.reason);
        return 1;
    }
    int rc = sp_https_get_loop(atoi(argv[0]), count, one_get, &c);
    rustls_client_config_free(c.shared);
    return rc;
}
