/* libssl on a connected socket, for the HTTPS commands over loopback TCP (core/https.c: https-server, https-get).
 * Its contexts are shared across server workers and client threads. The checked connection's negotiation is
 * recorded from its handshake to its close (tls_watch.h): the messages it received, the records each side sent
 * for the handshake and the records carrying a TLS 1.3 server's tickets, which come before the response.
 * (Handshakes across threads on one shared SSL_CTX pair: `harness threads CASE N MS shared`, threads.c.) */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat.h"
#include "harness.h"
#include "families.h"
#include "loopback.h"
#include "tls.h"
#include "tls_watch.h"

#include <openssl/ssl.h>

/* The one connection a client process records (its first thread's first request): past its handshake. */
static tls_after watched_after;

static prep_status parse(const case_name *name, void *config, prep_result *res)
{
    return tls_parse(name, config, res);
}

static void *server_new(void *config, char *ca_file, size_t ca_file_len, prep_result *res)
{
    SSL_CTX *server = NULL, *unused = NULL;
    prep_status status = tls_make_ctxs(config, &server, &unused, ca_file, ca_file_len, res);
    SSL_CTX_free(unused);
    if (status == PREP_OK)
        return server;
    SSL_CTX_free(server);
    return NULL;
}

static void context_free(void *ctx)
{
    SSL_CTX_free(ctx);
}

static int accept_tls(void *server, sp_tls_socket *conn)
{
    SSL *ssl = conn->tls = SSL_new(server);
    if (ssl && SSL_set_fd(ssl, conn->fd) && SSL_accept(ssl) == 1)
        return 1;
    SSL_free(ssl);
    return 0;
}

static void *client_context(const void *config, const char *ca_file, prep_result *res)
{
    SSL_CTX *ctx = tls_client_ctx(config, ca_file);
    if (!ctx)
        prep_error(res, "no client SSL_CTX");
    return ctx;
}

static void close_tls(sp_tls_socket *conn, int server)
{
    (void)server;
    if (conn->tls && conn->negotiated)
        tls_watched(conn->tls, conn->negotiated);      /* before the close_notify: the record ends here */
    if (conn->tls) {
        SSL_shutdown(conn->tls);
        SSL_free(conn->tls);
    }
    ERR_clear_error();
}

static int connect_tls(void *context, sp_tls_socket *conn, char *why, size_t why_len)
{
    SSL *ssl = conn->tls = SSL_new(context);
    if (ssl && conn->negotiated)
        tls_watch(ssl, conn->negotiated);
    if (ssl && SSL_set_fd(ssl, conn->fd) && SSL_set_tlsext_host_name(ssl, "localhost") && SSL_connect(ssl) == 1) {
        if (conn->negotiated)
            tls_watch_after(ssl, &watched_after, conn->negotiated);
        return 1;
    }
    snprintf(why, why_len, "handshake failed: ");
    ERR_error_string_n(ERR_get_error(), why + strlen(why), why_len - strlen(why));
    close_tls(conn, 0);
    return 0;
}

/* What the first handshake negotiated, against what was asked (the server may be another library). */
static void check_negotiated(const void *config, sp_tls_socket *conn, char *problem, size_t problem_len,
                             char *checked, size_t checked_len)
{
    const tls_config *cfg = config;
    const SSL *ssl = conn->tls;
    char group[64];
    tls_group_name(ssl, group, sizeof(group));
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

static int send_tls(sp_tls_socket *conn, const char *buf, size_t len)
{
    return SSL_write(conn->tls, buf, (int)len) > 0;
}

static int recv_tls(sp_tls_socket *conn, char *buf, size_t len)
{
    return SSL_read(conn->tls, buf, (int)len);
}

const sp_https_backend SP_HTTPS = {
    .concurrent = 1, .config_size = sizeof(tls_config), .parse = parse, .server_new = server_new,
    .server_free = context_free, .accept = accept_tls, .client_context = client_context,
    .context_free = context_free, .connect = connect_tls, .check = check_negotiated, .send = send_tls,
    .recv = recv_tls, .close = close_tls,
};
