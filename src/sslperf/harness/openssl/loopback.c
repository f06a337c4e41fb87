/* TLS over real loopback TCP connections.
 *
 *   harness https-server DIR PROTO GROUP CERT MAX_CONNECTIONS [WORKERS]
 *       listens on 127.0.0.1 (ephemeral port), prints {"type":"listening",...}
 *       with the port and the CA file the client must trust, then answers
 *       each connection's GET with a small response; exits after
 *       MAX_CONNECTIONS, or after 30 s without a connection. WORKERS threads
 *       (default 1) serve connections at once.
 *   harness https-get PORT CA_FILE PROTO GROUP CERT new|shared COUNT [THREADS]
 *       COUNT sequential HTTPS GETs, curl's way: connect, handshake
 *       ("pretransfer"), request, read to the end; with `new`, a new SSL_CTX
 *       with the CA loaded per request, as curl did. Prints the connect,
 *       pretransfer and total nanoseconds of each request. THREADS client
 *       threads (default 1) make COUNT each, at once.
 * (Handshakes across threads on one shared SSL_CTX pair: `harness threads CASE N MS shared`, threads.c.) */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "compat.h"
#include "harness.h"
#include "families.h"
#include "loopback.h"
#include "tls.h"

#include <openssl/ssl.h>


static int parse_config(const char *proto, const char *group, const char *cert, const char *ctx, tls_config *cfg,
                        prep_result *res)
{
    case_name name;
    return sp_handshake_name(&name, proto, group, cert, ctx) && tls_parse(&name, cfg, res) == PREP_OK;
}

/* One accepted connection: handshake, read the request head, answer. */
static void serve_one(void *ctx, int conn)
{
    SSL *ssl = SSL_new(ctx);
    char request[4096];
    int n = 0;
    if (ssl && SSL_set_fd(ssl, conn) && SSL_accept(ssl) == 1) {
        int got;
        while (n < (int)sizeof(request) - 1 && (got = SSL_read(ssl, request + n, sizeof(request) - 1 - n)) > 0) {
            n += got;
            request[n] = '\0';
            if (strstr(request, "\r\n\r\n"))
                break;
        }
        SSL_write(ssl, SP_HTTP_RESPONSE, (int)strlen(SP_HTTP_RESPONSE));
        SSL_shutdown(ssl);
    }
    SSL_free(ssl);
}

int https_server(int argc, char **argv)
{
    tls_config cfg = {0};
    prep_result res = {0};
    SSL_CTX *server = NULL, *unused = NULL;
    char ca_file[600];
    int workers = argc == 6 ? sp_concurrency(argv[5]) : 1;
    if ((argc != 5 && argc != 6) || !workers || !parse_config(argv[1], argv[2], argv[3], "shared", &cfg, &res)) {
        sp_loopback_fail("bad https-server arguments", res.reason);
        return 2;
    }
    setenv("SSLPERF_CERT_DIR", argv[0], 1);
    if (tls_make_ctxs(&cfg, &server, &unused, ca_file, sizeof(ca_file), &res) != PREP_OK) {
        (res.status == PREP_NA ? sp_loopback_na : sp_loopback_fail)("cannot set up the server", res.reason);
        return 1;
    }
    SSL_CTX_free(unused);
    int rc = sp_https_serve_workers(atoi(argv[4]), workers, ca_file, serve_one, server);
    SSL_CTX_free(server);
    unlink(ca_file);
    return rc;
}

/* What the first handshake negotiated, against what was asked (the server may be another library):
 * "" and `checked` filled, or the problem. */
static void check_negotiated(const tls_config *cfg, const SSL *ssl, char *problem, size_t problem_len,
                             char *checked, size_t checked_len)
{
    char group[64];
    tls_group_name(ssl, group, sizeof(group));
    problem[0] = '\0';
    if (SSL_version(ssl) != cfg->proto)
        snprintf(problem, problem_len, "negotiated %s, not the version asked", SSL_get_version(ssl));
    else if (!tls_cipher_ok(cfg, ssl))
        snprintf(problem, problem_len, "negotiated cipher %s", SSL_CIPHER_get_name(SSL_get_current_cipher(ssl)));
    else if (!tls_group_ok(cfg, ssl))
        snprintf(problem, problem_len, "negotiated another group than asked: %s", group);
    else
        snprintf(checked, checked_len, "%s %s group %s", SSL_get_version(ssl),
                 SSL_CIPHER_get_name(SSL_get_current_cipher(ssl)), group);
}

struct client {
    SSL_CTX *shared;          /* NULL: a new SSL_CTX, with the CA file loaded, per request */
    tls_config cfg;
    const char *ca_file;
};

/* One GET (sp_one_get): returns 1 and the three times, or 0 with `why` set; the first one's negotiation is
 * checked. */
static int one_get(void *p, int port, uint64_t times[3], char *why, size_t why_len, char *checked, size_t checked_len)
{
    struct client *c = p;
    const tls_config *cfg = &c->cfg;
    uint64_t start = sp_now_ns(SP_WALL);
    int fd = sp_connect_loopback(port), ok = 0;
    SSL_CTX *ctx = NULL;
    SSL *ssl = NULL;
    if (fd < 0) {
        snprintf(why, why_len, "cannot connect to 127.0.0.1:%d", port);
        goto done;
    }
    times[0] = sp_now_ns(SP_WALL) - start;
    ctx = c->shared ? c->shared : tls_client_ctx(cfg, c->ca_file);
    if (!ctx || !(ssl = SSL_new(ctx)) || !SSL_set_fd(ssl, fd) || !SSL_set_tlsext_host_name(ssl, "localhost")
        || SSL_connect(ssl) != 1) {
        snprintf(why, why_len, "handshake failed: ");
        ERR_error_string_n(ERR_get_error(), why + strlen(why), why_len - strlen(why));
        goto done;
    }
    times[1] = sp_now_ns(SP_WALL) - start;
    if (checked && !checked[0]) {
        check_negotiated(cfg, ssl, why, why_len, checked, checked_len);
        if (why[0])
            goto done;
    }
    char buf[4096];
    size_t total = 0;
    int got;
    if (SSL_write(ssl, SP_HTTP_GET, (int)strlen(SP_HTTP_GET)) <= 0) {
        snprintf(why, why_len, "cannot send the request");
        goto done;
    }
    while ((got = SSL_read(ssl, buf, sizeof(buf))) > 0)
        total += (size_t)got;
    times[2] = sp_now_ns(SP_WALL) - start;
    ok = total == strlen(SP_HTTP_RESPONSE);
    if (!ok)
        snprintf(why, why_len, "short response (%zu bytes)", total);
done:
    if (ssl) {
        SSL_shutdown(ssl);
        SSL_free(ssl);
    }
    if (!c->shared)
        SSL_CTX_free(ctx);
    if (fd >= 0)
        close(fd);
    ERR_clear_error();
    return ok;
}

int https_get(int argc, char **argv)
{
    struct client c = {0};
    prep_result res = {0};
    if ((argc != 7 && argc != 8) || !parse_config(argv[2], argv[3], argv[4], argv[5], &c.cfg, &res)) {
        sp_loopback_fail("bad https-get arguments", res.reason);
        return 2;
    }
    int count = sp_request_count(argv[6]), threads = argc == 8 ? sp_concurrency(argv[7]) : 1;
    if (!count || !threads)
        return 2;
    c.ca_file = argv[1];
    c.shared = c.cfg.new_ctx ? NULL : tls_client_ctx(&c.cfg, argv[1]);
    int rc = sp_https_get_clients(atoi(argv[0]), count, threads, one_get, &c);
    SSL_CTX_free(c.shared);
    return rc;
}
