/* Memory per TLS connection through libssl (core/memory.c drives it): N client/server SSL pairs over BIO pairs
 * (DTLS: datagram pipes, dgram_pipe.c).
 *
 *   harness memory tls/handshake/PROTO/GROUP/CERT/shared N
 *
 * Bytes are counted through the library's allocator hooks (CRYPTO_set_mem_functions, installed before anything
 * is allocated) where it has them; BoringSSL, AWS-LC and LibreSSL have none, and glibc's statistics count
 * there. The BIO pairs are made before the baseline and outlive the connections, so their buffers are not
 * counted: only what SSL_new and the handshake add. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>

#include "compat.h"
#include "harness.h"
#include "families.h"
#include "memory.h"
#include "tls.h"

#include <openssl/crypto.h>
#include <openssl/ssl.h>

#define HOOKS (!SP_BSSL && !SP_LIBRESSL)

#if HOOKS
static void *hook_malloc(size_t n, const char *file, int line)
{
    (void)file, (void)line;
    return sp_counted_malloc(n);
}

static void *hook_realloc(void *p, size_t n, const char *file, int line)
{
    (void)file, (void)line;
    return sp_counted_realloc(p, n);
}

static void hook_free(void *p, const char *file, int line)
{
    (void)file, (void)line;
    sp_counted_free(p);
}
#endif

void memory_hooks_install(void)
{
#if HOOKS
    if (CRYPTO_set_mem_functions(hook_malloc, hook_realloc, hook_free) == 1)
        sp_memory_hooked("allocator hooks (CRYPTO_set_mem_functions)");
#endif
}

typedef struct {
    tls_config cfg;
    SSL_CTX *server_ctx, *client_ctx;
    char ca_file[600];
    long n;
    SSL **ends[2];                  /* [0]: the clients, [1]: the servers */
    BIO **bios[2];                  /* their halves of each BIO pair */
    sp_negotiated negotiated;       /* the first connection's, recorded by its message callback */
} tls_memory;

static void *open_case(const case_name *name, prep_result *res)
{
    tls_memory *m = calloc(1, sizeof(*m));
    if (m && tls_parse(name, &m->cfg, res) == PREP_OK)
        return m;
    free(m);
    return NULL;
}

static prep_status make_contexts(void *p, prep_result *res)
{
    tls_memory *m = p;
    return tls_make_ctxs(&m->cfg, &m->server_ctx, &m->client_ctx, m->ca_file, sizeof(m->ca_file), res);
}

static int transports(void *p, long n, char *why, size_t why_len)
{
    (void)why, (void)why_len;
    tls_memory *m = p;
    int ok = 1;
    m->n = n;
    for (int side = 0; side < 2; side++) {
        ok = ok && (m->ends[side] = calloc((size_t)n, sizeof(SSL *))) != NULL;
        ok = ok && (m->bios[side] = calloc((size_t)n, sizeof(BIO *))) != NULL;
    }
    for (long i = 0; ok && i < n; i++)      /* an extra reference each: the BIOs outlive their SSLs */
        ok = tls_bio_pair(&m->cfg, &m->bios[0][i], &m->bios[1][i]) && BIO_up_ref(m->bios[0][i])
             && BIO_up_ref(m->bios[1][i]);
    return ok;
}

static int make_pair(void *p, long i, char *why, size_t why_len)
{
    (void)why, (void)why_len;
    tls_memory *m = p;
    SSL *client = m->ends[0][i] = SSL_new(m->client_ctx), *server = m->ends[1][i] = SSL_new(m->server_ctx);
    if (!client || !server)
        return 0;
    SSL_set_bio(client, m->bios[0][i], m->bios[0][i]);    /* each SSL holds one reference of its half */
    SSL_set_bio(server, m->bios[1][i], m->bios[1][i]);
    if (m->cfg.dtls && !(SSL_set_mtu(client, DTLS_MTU) && SSL_set_mtu(server, DTLS_MTU)))
        return 0;
    SSL_set_connect_state(client);
    SSL_set_accept_state(server);
    SSL_set_tlsext_host_name(client, "localhost");
    if (i == 0)
        tls_watch(client, &m->negotiated);
    return 1;
}

static void first_negotiated(void *p, sp_negotiated *n)
{
    tls_memory *m = p;
    tls_watched(m->ends[0][0], &m->negotiated);
    *n = m->negotiated;
}

static int step(void *p, long i, int server, int *done, char *why, size_t why_len)
{
    (void)why, (void)why_len;
    return tls_handshake_step(((tls_memory *)p)->ends[server][i], done);
}

/* TLS 1.3: the clients take their session tickets. */
static int take_tickets(void *p, long n, char *checked, size_t checked_len, char *why, size_t why_len)
{
    (void)checked, (void)checked_len, (void)why, (void)why_len;
    tls_memory *m = p;
    int ok = 1;
    for (long i = 0; ok && i < n; i++) {
        unsigned char byte;
        int rc = SSL_read(m->ends[0][i], &byte, 1);
        ok = rc <= 0 && SSL_get_error(m->ends[0][i], rc) == SSL_ERROR_WANT_READ;
    }
    return ok;
}

static void free_end(void *p, long i, int server)
{
    tls_memory *m = p;
    SSL_free(m->ends[server][i]);
    m->ends[server][i] = NULL;
}

static void close_case(void *p)
{
    tls_memory *m = p;
    for (int side = 0; side < 2; side++) {
        for (long i = 0; m->bios[side] && i < m->n; i++)
            BIO_free(m->bios[side][i]);
        free(m->bios[side]);
        free(m->ends[side]);
    }
    SSL_CTX_free(m->client_ctx);
    SSL_CTX_free(m->server_ctx);
    free(m);
}

const sp_memory_backend SP_MEMORY = {
    "SSL_CTXs", open_case, make_contexts, close_case,
    {.max_rounds = 64, .transports = transports, .make = make_pair, .step = step, .settle = take_tickets,
     .negotiated = first_negotiated, .free_end = free_end},
};
