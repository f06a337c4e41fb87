/* Memory per wolfSSL connection (core/memory.c drives it):
 *
 *   harness memory tls/handshake/PROTO/GROUP/CERT/shared N
 *
 * wolfSSL allocates through malloc (XMALLOC), so the bytes are glibc's
 * statistics. Each connection's two pipes are made before the baseline,
 * large enough for any flight, so transports are not counted; a flight that
 * would grow one is an error rather than a wrong figure. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"
#include "memory.h"
#include "wolfssl_cases.h"
#include "wolfssl_tls.h"

#define PIPE_BYTES (32 * 1024)

typedef struct {
    WOLFSSL *end[2];                /* [0]: the client, [1]: the server */
    pipe_buf to_server, to_client;
} connection;

typedef struct {
    wtls_config cfg;
    WOLFSSL_CTX *server_ctx, *client_ctx;
    long n;
    connection *conns;
} wolf_memory;

static void *open_case(const case_name *name, prep_result *res)
{
    wolf_memory *m = calloc(1, sizeof(*m));
    if (m && wtls_parse(name, &m->cfg, res) == PREP_OK)
        return m;
    free(m);
    return NULL;
}

static prep_status make_contexts(void *p, prep_result *res)
{
    wolf_memory *m = p;
    return wtls_make_ctxs(&m->cfg, &m->server_ctx, &m->client_ctx, res);
}

static int transports(void *p, long n, char *why, size_t why_len)
{
    (void)why, (void)why_len;
    wolf_memory *m = p;
    int ok = (m->conns = calloc((size_t)n, sizeof(connection))) != NULL;
    m->n = n;
    for (long i = 0; ok && i < n; i++) {
        connection *c = &m->conns[i];
        c->to_server.data = malloc(PIPE_BYTES);
        c->to_client.data = malloc(PIPE_BYTES);
        c->to_server.cap = c->to_client.cap = PIPE_BYTES;
        ok = c->to_server.data && c->to_client.data;
    }
    return ok;
}

static int make_pair(void *p, long i, char *why, size_t why_len)
{
    (void)why, (void)why_len;
    wolf_memory *m = p;
    connection *c = &m->conns[i];
    WOLFSSL *client = c->end[0] = wolfSSL_new(m->client_ctx), *server = c->end[1] = wolfSSL_new(m->server_ctx);
    if (!client || !server || wolfSSL_UseSNI(client, WOLFSSL_SNI_HOST_NAME, "localhost", 9) != WOLFSSL_SUCCESS
        || wolfSSL_check_domain_name(client, "localhost") != WOLFSSL_SUCCESS)
        return 0;
    c->to_server.datagrams = c->to_client.datagrams = m->cfg.tls.dtls;
    wolfSSL_SetIOWriteCtx(client, &c->to_server);
    wolfSSL_SetIOReadCtx(client, &c->to_client);
    wolfSSL_SetIOWriteCtx(server, &c->to_client);
    wolfSSL_SetIOReadCtx(server, &c->to_server);
    return 1;
}

static int step(void *p, long i, int server, int *done, char *why, size_t why_len)
{
    (void)why, (void)why_len;
    return wtls_step(((wolf_memory *)p)->conns[i].end[server], server, done);
}

/* TLS 1.3: the clients take their session tickets; and no pipe may have grown (it would be counted). */
static int settle(void *p, long n, char *checked, size_t checked_len, char *why, size_t why_len)
{
    (void)checked, (void)checked_len;
    wolf_memory *m = p;
    int ok = 1;
    for (long i = 0; ok && m->cfg.tls.tls13 && i < n; i++) {
        char byte;
        int rc = wolfSSL_read(m->conns[i].end[0], &byte, 1);
        ok = rc < 0 && wolfSSL_get_error(m->conns[i].end[0], rc) == WOLFSSL_ERROR_WANT_READ;
    }
    for (long i = 0; ok && i < n; i++)
        if (m->conns[i].to_server.cap != PIPE_BYTES || m->conns[i].to_client.cap != PIPE_BYTES) {
            snprintf(why, why_len, "a flight outgrew its pre-made pipe; the figures would count it");
            return 0;
        }
    return ok;
}

/* The first connection's: wolfSSL's getters, and the bytes its pipes carried (pre-made, so nothing is allocated). */
static void first_negotiated(void *p, sp_negotiated *n)
{
    connection *c = &((wolf_memory *)p)->conns[0];
    wtls_negotiated(c->end[0], &c->to_server, &c->to_client, n);
}

static void free_end(void *p, long i, int server)
{
    connection *c = &((wolf_memory *)p)->conns[i];
    wolfSSL_free(c->end[server]);
    c->end[server] = NULL;
}

static void close_case(void *p)
{
    wolf_memory *m = p;
    for (long i = 0; m->conns && i < m->n; i++) {
        free(m->conns[i].to_server.data);
        free(m->conns[i].to_client.data);
    }
    free(m->conns);
    wolfSSL_CTX_free(m->client_ctx);
    wolfSSL_CTX_free(m->server_ctx);
    free(m);
}

const sp_memory_backend SP_MEMORY = {
    "contexts", open_case, make_contexts, close_case,
    {.max_rounds = 64, .transports = transports, .make = make_pair, .step = step, .settle = settle,
     .negotiated = first_negotiated, .free_end = free_end},
};
