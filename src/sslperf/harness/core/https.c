/* HTTPS over loopback TCP, the commands every backend answers alike (loopback.h; each backend's loopback.c is
 * its TLS on a connected socket, SP_HTTPS), so either end of a `tls loopback --server-lib` pair can be any
 * library:
 *
 *   harness https-server DIR PROTO GROUP CERT MAX_CONNECTIONS [WORKERS]
 *       listens on 127.0.0.1 (ephemeral port), prints {"type":"listening",...} with the port and the CA file the
 *       client must trust, then answers each connection's GET with a small response; exits after
 *       MAX_CONNECTIONS, or after 30 s without a connection. WORKERS threads (default 1) serve at once.
 *   harness https-get PORT CA_FILE PROTO GROUP CERT new|shared COUNT [THREADS]
 *       COUNT sequential HTTPS GETs, curl's way: connect, handshake ("pretransfer"), request, read to the end;
 *       with `new`, a new client context with the CA loaded per request, as curl did. Prints the connect,
 *       pretransfer and total nanoseconds of each request. THREADS client threads (default 1) make COUNT each.
 *
 * WORKERS and THREADS are for a backend whose contexts may be shared across threads (SP_HTTPS.concurrent). The
 * client's first handshake is checked before its request is sent: version, suite and group as asked, whoever the
 * server is; what that connection negotiated is recorded in the reply ("negotiated", where the backend can). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "loopback.h"
#include "tls_names.h"

/* The backend's configuration of the handshake case the arguments name (freed with free()); NULL when they do
 * not name one, with why in `res`. `new_ctx` says whether each request makes its own client context. */
static void *handshake_config(const char *proto, const char *group, const char *cert, const char *ctx,
                              int *new_ctx, prep_result *res)
{
    case_name name;
    sp_tls_case c = {0};
    void *config = NULL;
    if (sp_handshake_name(&name, proto, group, cert, ctx) && sp_tls_parse(&name, &c, res) == PREP_OK
        && (config = calloc(1, SP_HTTPS.config_size)) != NULL && SP_HTTPS.parse(&name, config, res) != PREP_OK) {
        free(config);
        config = NULL;
    }
    *new_ctx = config && c.new_ctx;
    return config;
}

/* Plaintext into `buf` until the request head has come (`until_head`), the buffer is full or the peer closes;
 * the bytes read. */
static size_t read_plain(sp_tls_socket *conn, char *buf, size_t cap, int until_head)
{
    size_t total = 0;
    buf[0] = '\0';
    while (total + 1 < cap) {
        int n = SP_HTTPS.recv(conn, buf + total, cap - 1 - total);
        if (n <= 0)
            break;
        total += (size_t)n;
        buf[total] = '\0';
        if (until_head && strstr(buf, "\r\n\r\n"))
            break;
    }
    return total;
}

/* One accepted connection: handshake, read the request head, answer, close. */
static void serve_one(void *server, int fd)
{
    sp_tls_socket conn = {.fd = fd};
    char request[4096];
    if (!SP_HTTPS.accept(server, &conn))
        return;
    if (read_plain(&conn, request, sizeof(request), 1) > 0)
        SP_HTTPS.send(&conn, SP_HTTP_RESPONSE, strlen(SP_HTTP_RESPONSE));
    SP_HTTPS.close(&conn, 1);
}

int sp_https_server_mode(int argc, char **argv)
{
    prep_result res = {0};
    char ca_file[600] = "";
    int workers = argc == 6 && SP_HTTPS.concurrent ? sp_concurrency(argv[5]) : 1, new_ctx = 0;
    void *config = (argc == 5 || (argc == 6 && SP_HTTPS.concurrent)) && workers
                       ? handshake_config(argv[1], argv[2], argv[3], "new", &new_ctx, &res) : NULL;
    if (!config) {
        sp_loopback_fail("bad https-server arguments", res.reason);
        return 2;
    }
    setenv("SSLPERF_CERT_DIR", argv[0], 1);
    void *server = SP_HTTPS.server_new(config, ca_file, sizeof(ca_file), &res);
    int rc = 1;
    if (server) {
        rc = sp_https_serve_workers(atoi(argv[4]), workers, ca_file, serve_one, server);
        SP_HTTPS.server_free(server);
    } else {
        (res.status == PREP_NA ? sp_loopback_na : sp_loopback_fail)("cannot set up the server", res.reason);
    }
    if (ca_file[0])
        unlink(ca_file);
    free(config);
    return rc;
}

struct https_client {
    void *config;
    void *shared;            /* the client context every request shares; NULL: each makes its own (new) */
    const char *ca_file;
};

/* One GET (sp_one_get): 1 and the three times, or 0 with `why` set; the first one's negotiation is checked, and
 * recorded by the backend from its handshake to its close. */
static int one_get(void *p, int port, uint64_t times[3], char *why, size_t why_len, char *checked,
                   size_t checked_len, sp_negotiated *negotiated)
{
    const struct https_client *c = p;
    uint64_t start = sp_now_ns(SP_WALL);
    sp_tls_socket conn = {.fd = sp_connect_loopback(port), .negotiated = checked && !checked[0] ? negotiated : NULL};
    char problem[REASON_MAX] = "", buf[4096];
    prep_result res = {0};
    void *own = NULL;
    int ok = 0;
    if (conn.fd < 0) {
        snprintf(why, why_len, "cannot connect to 127.0.0.1:%d", port);
        return 0;
    }
    times[0] = sp_now_ns(SP_WALL) - start;
    void *context = c->shared ? c->shared : (own = SP_HTTPS.client_context(c->config, c->ca_file, &res));
    if (!context)
        snprintf(why, why_len, "handshake failed%s%s", res.reason[0] ? ": " : "", res.reason);
    if (!context || !SP_HTTPS.connect(context, &conn, why, why_len)) {
        SP_HTTPS.context_free(own);
        close(conn.fd);
        return 0;
    }
    times[1] = sp_now_ns(SP_WALL) - start;
    if (checked && !checked[0])
        SP_HTTPS.check(c->config, &conn, problem, sizeof(problem), checked, checked_len);
    if (problem[0]) {
        snprintf(why, why_len, "%s", problem);
        checked[0] = '\0';
    } else if (!SP_HTTPS.send(&conn, SP_HTTP_GET, strlen(SP_HTTP_GET))) {
        snprintf(why, why_len, "cannot send the request");
    } else {
        size_t total = read_plain(&conn, buf, sizeof(buf), 0);
        times[2] = sp_now_ns(SP_WALL) - start;
        ok = total == strlen(SP_HTTP_RESPONSE);
        if (!ok)
            snprintf(why, why_len, "short response (%zu bytes)", total);
    }
    SP_HTTPS.close(&conn, 0);
    SP_HTTPS.context_free(own);
    close(conn.fd);
    return ok;
}

int sp_https_get_mode(int argc, char **argv)
{
    prep_result res = {0};
    int new_ctx = 0;
    struct https_client c = {.ca_file = argc > 1 ? argv[1] : ""};
    if (argc == 7 || (argc == 8 && SP_HTTPS.concurrent))
        c.config = handshake_config(argv[2], argv[3], argv[4], argv[5], &new_ctx, &res);
    if (!c.config) {
        sp_loopback_fail("bad https-get arguments", res.reason);
        return 2;
    }
    int count = sp_request_count(argv[6]), threads = argc == 8 ? sp_concurrency(argv[7]) : 1, rc = 2;
    if (count && threads && !new_ctx && !(c.shared = SP_HTTPS.client_context(c.config, c.ca_file, &res))) {
        sp_loopback_fail("cannot make the client context", res.reason);
        rc = 1;
    } else if (count && threads) {
        rc = sp_https_get_clients(atoi(argv[0]), count, threads, one_get, &c);
    }
    SP_HTTPS.context_free(c.shared);
    free(c.config);
    return rc;
}
