/* Bulk transfer in memory through libssl (core/transfer.c times it): after one handshake over a BIO pair, the
 * client SSL_writes and the server SSL_reads.
 *
 *   tls/transfer/PROTO/SUITE/SIZE
 *
 * What was negotiated is recorded on a first connection of the same contexts (handshake and tickets, tls_watch):
 * a record layer made while a message callback is set calls into libssl for every record (OpenSSL 3.2+), which
 * the timed one must not. The measured connection is checked to agree with it (tls_same_negotiation). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>

#include "compat.h"
#include "harness.h"
#include "families.h"
#include "tls.h"
#include "tls_watch.h"
#include "transfer.h"

#include <openssl/ssl.h>

struct ssl_pair {
    tls_config cfg;
    SSL_CTX *server_ctx, *client_ctx;
    SSL *client, *server;
    char ca_file[600];
    sp_negotiated negotiated;      /* what the first connection negotiated */
};

static int write_some(void *p, const unsigned char *buf, int len)
{
    return SSL_write(((struct ssl_pair *)p)->client, buf, len);
}

static int read_some(void *p, unsigned char *buf, int len)
{
    return SSL_read(((struct ssl_pair *)p)->server, buf, len);
}

static void release_pair(void *p)
{
    struct ssl_pair *s = p;
    SSL_free(s->client);
    SSL_free(s->server);
    SSL_CTX_free(s->client_ctx);
    SSL_CTX_free(s->server_ctx);
}

/* A BIO pair that holds a whole write's records, and one handshake (recorded in `watch` unless NULL). */
static int handshake(struct ssl_pair *s, size_t size, sp_negotiated *watch)
{
    size_t records = (size + 16383) / 16384;
    size_t buffer = size + records * 64 + 64 * 1024;     /* one write's records: each adds under 64 bytes */
    BIO *cbio = NULL, *sbio = NULL;
    s->client = SSL_new(s->client_ctx);
    s->server = SSL_new(s->server_ctx);
    if (!s->client || !s->server || !BIO_new_bio_pair(&cbio, buffer, &sbio, buffer))
        return 0;
    if (watch)
        tls_watch(s->client, watch);
    SSL_set_bio(s->client, cbio, cbio);
    SSL_set_bio(s->server, sbio, sbio);
    SSL_set_connect_state(s->client);
    SSL_set_accept_state(s->server);
    SSL_set_tlsext_host_name(s->client, "localhost");
    int client_done = 0, server_done = 0, ok = 1;
    for (int rounds = 0; ok && !(client_done && server_done) && rounds < 64; rounds++) {
        if (!client_done)
            ok = tls_handshake_step(s->client, &client_done);
        if (ok && !server_done)
            ok = tls_handshake_step(s->server, &server_done);
    }
    if (!(client_done && server_done))
        return 0;
    /* TLS 1.3: the client takes the server's session tickets now, not in the timed loop. */
    unsigned char byte;
    int rc = SSL_read(s->client, &byte, 1);
    if (watch)
        tls_watched(s->client, watch);
    return rc <= 0 && SSL_get_error(s->client, rc) == SSL_ERROR_WANT_READ;
}

/* The recorded connection: another pair of the same contexts, freed once its handshake is read. */
static int record_negotiation(struct ssl_pair *s)
{
    struct ssl_pair first = *s;
    first.client = first.server = NULL;
    int ok = handshake(&first, 0, &s->negotiated);
    SSL_free(first.client);
    SSL_free(first.server);
    return ok;
}

static prep_status connect_pair(void *p, const char *proto, const char *suite, size_t size, prep_result *res)
{
    struct ssl_pair *s = p;
    prep_status status = tls_transfer_config(proto, suite, &s->cfg, res);
    if (status == PREP_OK)
        status = tls_make_ctxs(&s->cfg, &s->server_ctx, &s->client_ctx, s->ca_file, sizeof(s->ca_file), res);
    if (status == PREP_OK && !record_negotiation(s))
        return prep_error(res, "the handshake failed");
    return status == PREP_OK && !handshake(s, size, NULL) ? prep_error(res, "the handshake failed") : status;
}

static prep_status check(void *p, prep_result *res, char *seen, size_t seen_len)
{
    struct ssl_pair *s = p;
    const char *cipher = SSL_CIPHER_get_name(SSL_get_current_cipher(s->client));
    if (SSL_version(s->client) != s->cfg.proto)
        return prep_error(res, "negotiated %s, not the version asked", SSL_get_version(s->client));
    if (!tls_cipher_ok(&s->cfg, s->client)) {
        if (SP_BORINGSSL && s->cfg.proto == TLS1_3_VERSION)
            return prep_na(res, "BoringSSL chooses the TLS 1.3 cipher suite itself (it negotiated %s)", cipher);
        return prep_error(res, "negotiated cipher %s", cipher);
    }
    char differs[REASON_MAX];
    tls_same_negotiation(s->client, &s->negotiated, differs, sizeof(differs));
    if (differs[0])
        return prep_error(res, "%s", differs);
    snprintf(seen, seen_len, "%s %s", SSL_get_version(s->client), cipher);
    return PREP_OK;
}

static void negotiated(void *p, sp_negotiated *n)
{
    *n = ((struct ssl_pair *)p)->negotiated;
}

static const sp_transfer_ops SSL_TRANSFER = {
    "SSL_write", sizeof(struct ssl_pair), connect_pair, check, write_some, read_some, release_pair, negotiated,
};

prep_status prepare_transfer(const case_name *name, bench_case *out, prep_result *res)
{
    return sp_prepare_transfer(name, &SSL_TRANSFER, out, res);
}
