/* wolfSSL over real loopback TCP, speaking the OpenSSL backend's protocol
 * (openssl/loopback.c, core/loopback.c), so either end of a
 * `tls --loopback --server-lib` pair can be wolfSSL:
 *
 *   harness https-server DIR PROTO GROUP CERT MAX_CONNECTIONS
 *   harness https-get PORT CA_FILE PROTO GROUP CERT new|shared COUNT
 *
 * The server listens on 127.0.0.1 only and stops by itself (after
 * MAX_CONNECTIONS, or 30 s without one). The connections use wolfSSL's own
 * socket I/O. The client's first handshake is checked before anything is
 * timed: version, suite and group as asked, whoever the server is. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "harness.h"
#include "loopback.h"
#include "wolfssl_cases.h"
#include "wolfssl_tls.h"

static int parse(const char *proto, const char *group, const char *cert, const char *ctx, wtls_config *cfg,
                 prep_result *res)
{
    case_name name;
    if (!sp_handshake_name(&name, proto, group, cert, ctx) || wtls_parse(&name, cfg, res) != PREP_OK)
        return 0;
    cfg->sockets = 1;
    return 1;
}

/* Plaintext into `buf` until the request head has come (`until_head`), the buffer is full or the peer closes;
 * the bytes read. */
static size_t read_plain(WOLFSSL *ssl, char *buf, size_t cap, int until_head)
{
    size_t total = 0;
    while (total + 1 < cap) {
        int n = wolfSSL_read(ssl, buf + total, (int)(cap - 1 - total));
        if (n <= 0)
            break;
        total += (size_t)n;
        buf[total] = '\0';
        if (until_head && strstr(buf, "\r\n\r\n"))
            break;
    }
    return total;
}

/* One accepted connection: handshake, read the request head, answer, close_notify. */
static void serve_one(void *ctx, int fd)
{
    WOLFSSL *ssl = wolfSSL_new(ctx);
    char request[4096];
    if (ssl && wolfSSL_set_fd(ssl, fd) == WOLFSSL_SUCCESS && wolfSSL_accept(ssl) == WOLFSSL_SUCCESS
        && read_plain(ssl, request, sizeof(request), 1) > 0) {
        wolfSSL_write(ssl, SP_HTTP_RESPONSE, (int)strlen(SP_HTTP_RESPONSE));
        wolfSSL_shutdown(ssl);
    }
    wolfSSL_free(ssl);
}

int wolf_https_server(int argc, char **argv)
{
    wtls_config cfg;
    prep_result res = {0};
    WOLFSSL_CTX *server = NULL, *unused = NULL;
    if (argc != 5 || !parse(argv[1], argv[2], argv[3], "new", &cfg, &res)) {
        sp_loopback_fail("bad https-server arguments", res.reason);
        return 2;
    }
    setenv("SSLPERF_CERT_DIR", argv[0], 1);
    const char *roots = sp_roots_file();
    if (!roots || wtls_make_ctxs(&cfg, &server, &unused, &res) != PREP_OK) {
        (res.status == PREP_NA ? sp_loopback_na : sp_loopback_fail)("cannot set up the server", roots ? res.reason : "no certificate directories");
        wolfSSL_CTX_free(server);
        return 1;
    }
    int rc = sp_https_serve(atoi(argv[4]), roots, serve_one, server);
    wolfSSL_CTX_free(server);
    unlink(roots);
    return rc;
}

struct client {
    WOLFSSL_CTX *shared;            /* NULL: a new context, CA file loaded, per request */
    wtls_config cfg;
    const char *ca_file;
};

/* One GET (sp_one_get); 1 and the three times, or 0 with `why` set. The first one's negotiation is checked. */
static int one_get(void *p, int port, uint64_t times[3], char *why, size_t why_len, char *checked, size_t checked_len)
{
    struct client *c = p;
    uint64_t start = sp_now_ns(SP_WALL);
    int fd = sp_connect_loopback(port), ok = 0;
    WOLFSSL_CTX *ctx = NULL;
    WOLFSSL *ssl = NULL;
    if (fd < 0) {
        snprintf(why, why_len, "cannot connect to 127.0.0.1:%d", port);
        goto done;
    }
    times[0] = sp_now_ns(SP_WALL) - start;
    ctx = c->shared ? c->shared : wtls_client_ctx(&c->cfg, c->ca_file);
    ssl = ctx ? wolfSSL_new(ctx) : NULL;
    if (!ssl || wolfSSL_UseSNI(ssl, WOLFSSL_SNI_HOST_NAME, "localhost", 9) != WOLFSSL_SUCCESS
        || wolfSSL_check_domain_name(ssl, "localhost") != WOLFSSL_SUCCESS
        || wolfSSL_set_fd(ssl, fd) != WOLFSSL_SUCCESS || wolfSSL_connect(ssl) != WOLFSSL_SUCCESS) {
        char reason[80] = "";
        if (ssl)
            wolfSSL_ERR_error_string_n((unsigned long)wolfSSL_get_error(ssl, 0), reason, sizeof(reason));
        snprintf(why, why_len, "handshake failed%s%s", reason[0] ? ": " : "", reason);
        goto done;
    }
    times[1] = sp_now_ns(SP_WALL) - start;
    if (checked && !checked[0]) {
        char problem[200];
        wtls_check(&c->cfg, ssl, 0, problem, sizeof(problem), checked, checked_len);
        if (problem[0]) {
            snprintf(why, why_len, "%s", problem);
            checked[0] = '\0';
            goto done;
        }
    }
    if (wolfSSL_write(ssl, SP_HTTP_GET, (int)strlen(SP_HTTP_GET)) != (int)strlen(SP_HTTP_GET)) {
        snprintf(why, why_len, "cannot send the request");
        goto done;
    }
    char buf[4096];
    size_t total = read_plain(ssl, buf, sizeof(buf), 0);
    times[2] = sp_now_ns(SP_WALL) - start;
    ok = total == strlen(SP_HTTP_RESPONSE);
    if (!ok)
        snprintf(why, why_len, "short response (%zu bytes)", total);
done:
    wolfSSL_free(ssl);
    if (!c->shared)
        wolfSSL_CTX_free(ctx);
    if (fd >= 0)
        close(fd);
    return ok;
}

int wolf_https_get(int argc, char **argv)
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
    if (!c.cfg.new_ctx && !(c.shared = wtls_client_ctx(&c.cfg, argv[1]))) {
        sp_loopback_fail("cannot make the client context", res.reason);
        return 1;
    }
    int rc = sp_https_get_loop(atoi(argv[0]), count, one_get, &c);
    wolfSSL_CTX_free(c.shared);
    return rc;
}
