/* Memory per TLS connection: N client/server pairs taken through the
 * handshake in lockstep (every connection one step per round, as rustls
 * measures it), then the bytes the library holds per established
 * connection, each side apart, and the peak during the handshakes.
 *
 *   harness memory tls/handshake/PROTO/GROUP/CERT/shared N
 *
 * Bytes are counted through the library's allocator hooks
 * (CRYPTO_set_mem_functions, installed before anything is allocated) where
 * it has them, else from the C allocator's statistics (glibc mallinfo2:
 * bytes in use, the peak sampled after each round); the reply says which.
 * The transports (BIO pairs) are made before the baseline and outlive the
 * connections, so their buffers are not counted: only what SSL_new and the
 * handshake add. The server side is what freeing the servers gives back,
 * the client side what freeing the clients gives back. */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat.h"
#include "harness.h"
#include "families.h"
#include "memory.h"
#include "tls.h"

#include <openssl/crypto.h>
#include <openssl/ssl.h>

#define MAX_CONNECTIONS 100000
#define HOOKS (!SP_BSSL && !SP_LIBRESSL)

static size_t live_bytes, peak_bytes;
static int hooked;

#if HOOKS
typedef struct {
    size_t size;
    size_t pad;                 /* keeps what follows 16-byte aligned */
} block_header;

static void note(size_t added, size_t removed)
{
    live_bytes = live_bytes + added - removed;
    if (live_bytes > peak_bytes)
        peak_bytes = live_bytes;
}

static void *hook_malloc(size_t n, const char *file, int line)
{
    (void)file, (void)line;
    block_header *h = malloc(sizeof(*h) + n);
    if (!h)
        return NULL;
    h->size = n;
    note(n, 0);
    return h + 1;
}

static void *hook_realloc(void *p, size_t n, const char *file, int line)
{
    if (!p)
        return hook_malloc(n, file, line);
    block_header *old = (block_header *)p - 1, *h;
    size_t before = old->size;
    if (!(h = realloc(old, sizeof(*h) + n)))
        return NULL;
    h->size = n;
    note(n, before);
    return h + 1;
}

static void hook_free(void *p, const char *file, int line)
{
    (void)file, (void)line;
    if (!p)
        return;
    block_header *h = (block_header *)p - 1;
    note(0, h->size);
    free(h);
}
#endif

void memory_hooks_install(void)
{
#if HOOKS
    hooked = CRYPTO_set_mem_functions(hook_malloc, hook_realloc, hook_free) == 1;
#endif
}

size_t memory_in_use(void)
{
    if (hooked)
        return live_bytes;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
    struct mallinfo2 info = mallinfo2();
#else
    struct mallinfo info = mallinfo();      /* int fields: right up to 2 GiB */
#endif
    return (size_t)info.uordblks + (size_t)info.hblkhd;
}

void memory_sample_peak(void)
{
    size_t now = memory_in_use();
    if (now > peak_bytes)
        peak_bytes = now;
}

size_t memory_start(void)
{
    peak_bytes = memory_in_use();
    return peak_bytes;
}

void memory_reply(const char *case_id, long n, size_t baseline, size_t all, size_t without_servers,
                  size_t without_clients, const char *checked)
{
    printf("{\"type\":\"memory\",\"case\":");
    json_string(case_id);
    printf(",\"connections\":%ld,\"method\":\"%s\",\"baseline\":%zu,\"established\":%zu,\"peak\":%zu,"
           "\"server_bytes\":%zu,\"client_bytes\":%zu", n,
           hooked ? "allocator hooks (CRYPTO_set_mem_functions)" : "C allocator statistics (mallinfo2)",
           baseline, all, peak_bytes, all - without_servers, without_servers - without_clients);
    if (checked && *checked) {
        printf(",\"checked\":");
        json_string(checked);
    }
    printf("}\n");
}

int memory_mode(int argc, char **argv)
{
    (void)argc;
    const char *case_id = argv[0];
    long n = atol(argv[1]);
    case_name name;
    prep_result res = {0};
    tls_config cfg;
    SSL_CTX *server_ctx = NULL, *client_ctx = NULL;
    char ca_file[600];
    memset(&cfg, 0, sizeof(cfg));
    snprintf(name.buf, sizeof(name.buf), "%s", case_id);
    name.n = 0;
    for (char *p = strtok(name.buf, "/"); p && name.n < MAX_PARTS; p = strtok(NULL, "/"))
        name.part[name.n++] = p;
    if (n < 1 || n > MAX_CONNECTIONS)
        return json_refusal("error", case_id, "the number of connections must be 1 to 100000");
    if (tls_parse(&name, &cfg, &res) != PREP_OK || cfg.resume || cfg.new_ctx)
        return json_refusal(res.status == PREP_NA ? "na" : "error", case_id, res.reason[0] ? res.reason
                            : "memory is measured on full handshakes with shared SSL_CTXs: "
                              "tls/handshake/PROTO/GROUP/CERT/shared");
    if (tls_make_ctxs(&cfg, &server_ctx, &client_ctx, ca_file, sizeof(ca_file), &res) != PREP_OK)
        return json_refusal(res.status == PREP_NA ? "na" : "error", case_id, res.reason);

    SSL **client = calloc((size_t)n, sizeof(SSL *)), **server = calloc((size_t)n, sizeof(SSL *));
    BIO **cbio = calloc((size_t)n, sizeof(BIO *)), **sbio = calloc((size_t)n, sizeof(BIO *));
    int ok = client && server && cbio && sbio;
    for (long i = 0; ok && i < n; i++)       /* transports first: not counted */
        ok = BIO_new_bio_pair(&cbio[i], 0, &sbio[i], 0) && BIO_up_ref(cbio[i]) && BIO_up_ref(sbio[i]);
    size_t baseline = memory_start();
    for (long i = 0; ok && i < n; i++) {
        client[i] = SSL_new(client_ctx);
        server[i] = SSL_new(server_ctx);
        ok = client[i] && server[i];
        if (ok) {
            SSL_set_bio(client[i], cbio[i], cbio[i]);    /* each SSL holds one reference of its half */
            SSL_set_bio(server[i], sbio[i], sbio[i]);
            SSL_set_connect_state(client[i]);
            SSL_set_accept_state(server[i]);
            SSL_set_tlsext_host_name(client[i], "localhost");
        }
    }
    char *client_done = calloc((size_t)n, 1), *server_done = calloc((size_t)n, 1);
    long established = 0;
    ok = ok && client_done && server_done;
    for (int round = 0; ok && established < n && round < 64; round++) {
        for (long i = 0; ok && i < n; i++) {
            int done = client_done[i];
            if (!done)
                ok = tls_handshake_step(client[i], &done);
            client_done[i] = (char)done;
        }
        for (long i = 0; ok && i < n; i++) {
            int done = server_done[i];
            if (!done)
                ok = tls_handshake_step(server[i], &done);
            server_done[i] = (char)done;
        }
        memory_sample_peak();
        established = 0;
        for (long i = 0; i < n; i++)
            established += client_done[i] && server_done[i];
    }
    ok = ok && established == n;
    for (long i = 0; ok && i < n; i++) {          /* TLS 1.3: the clients take their session tickets */
        unsigned char byte;
        int rc = SSL_read(client[i], &byte, 1);
        ok = rc <= 0 && SSL_get_error(client[i], rc) == SSL_ERROR_WANT_READ;
    }
    memory_sample_peak();
    size_t all = memory_in_use();
    for (long i = 0; i < n; i++)
        SSL_free(server ? server[i] : NULL);
    size_t without_servers = memory_in_use();
    for (long i = 0; i < n; i++)
        SSL_free(client ? client[i] : NULL);
    size_t without_clients = memory_in_use();
    if (ok)
        memory_reply(case_id, n, baseline, all, without_servers, without_clients, NULL);
    for (long i = 0; cbio && sbio && i < n; i++) {
        BIO_free(cbio[i]);
        BIO_free(sbio[i]);
    }
    free(client_done);
    free(server_done);
    free(client);
    free(server);
    free(cbio);
    free(sbio);
    SSL_CTX_free(client_ctx);
    SSL_CTX_free(server_ctx);
    return ok ? 0 : json_refusal("error", case_id, "a handshake failed");
}
