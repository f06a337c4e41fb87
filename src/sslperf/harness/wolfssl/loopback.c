/* wolfSSL on a connected socket, for the HTTPS commands over loopback TCP (core/https.c: https-server,
 * https-get), through wolfSSL's own socket I/O. One server worker and one client thread. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "loopback.h"
#include "wolfssl_tls.h"

/* The case's configuration for wolfSSL's socket I/O (not the in-memory pipes). */
static prep_status parse(const case_name *name, void *config, prep_result *res)
{
    wtls_config *cfg = config;
    prep_status status = wtls_parse(name, cfg, res);
    cfg->sockets = 1;
    return status;
}

static void *server_new(void *config, char *ca_file, size_t ca_file_len, prep_result *res)
{
    WOLFSSL_CTX *server = NULL, *unused = NULL;
    const char *roots = sp_roots_file();
    if (!roots) {
        prep_error(res, "no certificate directories");
        return NULL;
    }
    snprintf(ca_file, ca_file_len, "%s", roots);
    if (wtls_make_ctxs(config, &server, &unused, res) == PREP_OK)
        return server;
    wolfSSL_CTX_free(server);
    return NULL;
}

static void context_free(void *ctx)
{
    wolfSSL_CTX_free(ctx);
}

static int accept_tls(void *server, sp_tls_socket *conn)
{
    WOLFSSL *ssl = conn->tls = wolfSSL_new(server);
    if (ssl && wolfSSL_set_fd(ssl, conn->fd) == WOLFSSL_SUCCESS && wolfSSL_accept(ssl) == WOLFSSL_SUCCESS)
        return 1;
    wolfSSL_free(ssl);
    return 0;
}

static void *client_context(const void *config, const char *ca_file, prep_result *res)
{
    WOLFSSL_CTX *ctx = wtls_client_ctx(config, ca_file);
    if (!ctx)
        prep_error(res, "no client context");
    return ctx;
}

static void close_tls(sp_tls_socket *conn, int server)
{
    if (server)
        wolfSSL_shutdown(conn->tls);
    wolfSSL_free(conn->tls);
}

static int connect_tls(void *context, sp_tls_socket *conn, char *why, size_t why_len)
{
    WOLFSSL *ssl = conn->tls = wolfSSL_new(context);
    if (ssl && wolfSSL_UseSNI(ssl, WOLFSSL_SNI_HOST_NAME, "localhost", 9) == WOLFSSL_SUCCESS
        && wolfSSL_check_domain_name(ssl, "localhost") == WOLFSSL_SUCCESS
        && wolfSSL_set_fd(ssl, conn->fd) == WOLFSSL_SUCCESS && wolfSSL_connect(ssl) == WOLFSSL_SUCCESS)
        return 1;
    char reason[80] = "";
    if (ssl)
        wolfSSL_ERR_error_string_n((unsigned long)wolfSSL_get_error(ssl, 0), reason, sizeof(reason));
    snprintf(why, why_len, "handshake failed%s%s", reason[0] ? ": " : "", reason);
    close_tls(conn, 0);
    return 0;
}

static void check(const void *config, sp_tls_socket *conn, char *problem, size_t problem_len, char *checked,
                  size_t checked_len)
{
    wtls_check(config, conn->tls, 0, problem, problem_len, checked, checked_len);
    if (conn->negotiated && !problem[0]) {         /* wolfSSL's own socket I/O: its getters, no byte counts */
        pipe_buf none = {0};
        wtls_negotiated(conn->tls, &none, &none, conn->negotiated);
        conn->negotiated->client_bytes = conn->negotiated->server_bytes = SP_UNKNOWN;
    }
}

static int send_tls(sp_tls_socket *conn, const char *buf, size_t len)
{
    return wolfSSL_write(conn->tls, buf, (int)len) == (int)len;
}

static int recv_tls(sp_tls_socket *conn, char *buf, size_t len)
{
    return wolfSSL_read(conn->tls, buf, (int)len);
}

const sp_https_backend SP_HTTPS = {
    .config_size = sizeof(wtls_config), .parse = parse, .server_new = server_new, .server_free = context_free,
    .accept = accept_tls, .client_context = client_context, .context_free = context_free, .connect = connect_tls,
    .check = check, .send = send_tls, .recv = recv_tls, .close = close_tls,
};
