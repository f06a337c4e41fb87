/* Memory per wolfSSL connection, as openssl/memory.c and rustls/memory.c
 * measure it: N client and server connections taken through the handshake in
 * lockstep (every connection one step per round), then the bytes held per
 * established connection, each side apart, and the peak during the
 * handshakes.
 *
 *   harness memory tls/handshake/PROTO/GROUP/CERT/shared N
 *
 * wolfSSL allocates through malloc (XMALLOC), so the bytes are glibc's
 * statistics (mallinfo2: in use, the peak sampled after each round), as for
 * rustls. Each connection's two pipes are made before the baseline, large
 * enough for any flight, so transports are not counted; a flight that would
 * grow one is an error rather than a wrong figure. The server side is what
 * freeing the servers gives back, the client side what freeing the clients
 * does. */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "wolfssl_cases.h"
#include "wolfssl_tls.h"

#define MAX_CONNECTIONS 100000
#define PIPE_BYTES (32 * 1024)

typedef struct {
    WOLFSSL *client, *server;
    pipe_buf to_server, to_client;
    int client_done, server_done;
} connection;

static size_t in_use(void)
{
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}

static int make_pipes(connection *c)
{
    c->to_server.data = malloc(PIPE_BYTES);
    c->to_client.data = malloc(PIPE_BYTES);
    c->to_server.cap = c->to_client.cap = PIPE_BYTES;
    return c->to_server.data && c->to_client.data;
}

static int connect_pair(connection *c, WOLFSSL_CTX *client_ctx, WOLFSSL_CTX *server_ctx)
{
    c->client = wolfSSL_new(client_ctx);
    c->server = wolfSSL_new(server_ctx);
    if (!c->client || !c->server || wolfSSL_UseSNI(c->client, WOLFSSL_SNI_HOST_NAME, "localhost", 9) != WOLFSSL_SUCCESS
        || wolfSSL_check_domain_name(c->client, "localhost") != WOLFSSL_SUCCESS)
        return 0;
    wolfSSL_SetIOWriteCtx(c->client, &c->to_server);
    wolfSSL_SetIOReadCtx(c->client, &c->to_client);
    wolfSSL_SetIOWriteCtx(c->server, &c->to_client);
    wolfSSL_SetIOReadCtx(c->server, &c->to_server);
    return 1;
}

/* A reply for a case this command does not take, or 0 for one it does. */
static int refuse(const char *case_id, long n, wtls_config *cfg)
{
    case_name name;
    prep_result res = {0};
    if (n < 1 || n > MAX_CONNECTIONS)
        return json_refusal("error", case_id, "the number of connections must be 1 to 100000");
    if (!sp_split_name(case_id, &name) || wtls_parse(&name, cfg, &res) != PREP_OK || cfg->resume || cfg->new_ctx)
        return json_refusal(res.status == PREP_NA ? "na" : "error", case_id, res.reason[0] ? res.reason
                            : "memory is measured on full handshakes with shared contexts: "
                              "tls/handshake/PROTO/GROUP/CERT/shared");
    return 0;
}

int wolf_memory(int argc, char **argv)
{
    (void)argc;
    const char *case_id = argv[0];
    long n = atol(argv[1]);
    wtls_config cfg;
    prep_result res = {0};
    WOLFSSL_CTX *server_ctx = NULL, *client_ctx = NULL;
    int refused = refuse(case_id, n, &cfg);
    if (refused)
        return refused;
    if (wtls_make_ctxs(&cfg, &server_ctx, &client_ctx, &res) != PREP_OK) {
        wolfSSL_CTX_free(server_ctx);
        wolfSSL_CTX_free(client_ctx);
        return json_refusal(res.status == PREP_NA ? "na" : "error", case_id, res.reason);
    }

    connection *conns = calloc((size_t)n, sizeof(*conns));
    int ok = conns != NULL;
    for (long i = 0; ok && i < n; i++)          /* transports first: not counted */
        ok = make_pipes(&conns[i]);
    size_t baseline = in_use(), peak = baseline;
    for (long i = 0; ok && i < n; i++)
        ok = connect_pair(&conns[i], client_ctx, server_ctx);
    long established = 0;
    for (int round = 0; ok && established < n && round < 64; round++) {
        for (long i = 0; ok && i < n; i++)
            ok = conns[i].client_done || wtls_step(conns[i].client, 0, &conns[i].client_done);
        for (long i = 0; ok && i < n; i++)
            ok = conns[i].server_done || wtls_step(conns[i].server, 1, &conns[i].server_done);
        size_t now = in_use();
        if (now > peak)
            peak = now;
        established = 0;
        for (long i = 0; i < n; i++)
            established += conns[i].client_done && conns[i].server_done;
    }
    ok = ok && established == n;
    for (long i = 0; ok && cfg.tls13 && i < n; i++) {     /* TLS 1.3: the clients take their session tickets */
        char byte;
        int rc = wolfSSL_read(conns[i].client, &byte, 1);
        ok = rc < 0 && wolfSSL_get_error(conns[i].client, rc) == WOLFSSL_ERROR_WANT_READ;
    }
    size_t all = in_use();
    if (all > peak)
        peak = all;
    int grown = 0;
    for (long i = 0; conns && i < n; i++)
        grown |= conns[i].to_server.cap != PIPE_BYTES || conns[i].to_client.cap != PIPE_BYTES;
    for (long i = 0; conns && i < n; i++)
        wolfSSL_free(conns[i].server);
    size_t without_servers = in_use();
    for (long i = 0; conns && i < n; i++)
        wolfSSL_free(conns[i].client);
    size_t without_clients = in_use();
    if (ok && !grown) {
        printf("{\"type\":\"memory\",\"case\":");
        json_string(case_id);
        printf(",\"connections\":%ld,\"method\":\"C allocator statistics (mallinfo2)\",\"baseline\":%zu,"
               "\"established\":%zu,\"peak\":%zu,\"server_bytes\":%zu,\"client_bytes\":%zu}\n",
               n, baseline, all, peak, all - without_servers, without_servers - without_clients);
    }
    for (long i = 0; conns && i < n; i++) {
        free(conns[i].to_server.data);
        free(conns[i].to_client.data);
    }
    free(conns);
    wolfSSL_CTX_free(client_ctx);
    wolfSSL_CTX_free(server_ctx);
    if (grown)
        return json_refusal("error", case_id, "a flight outgrew its pre-made pipe; the figures would count it");
    return ok ? 0 : json_refusal("error", case_id, "a handshake failed");
}
