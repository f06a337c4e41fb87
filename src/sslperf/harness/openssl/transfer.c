/* Bulk transfer in memory: after one handshake, the client SSL_writes and the
 * server SSL_reads over a BIO pair.
 *
 *   tls/transfer/PROTO/SUITE/SIZE    PROTO tls1.2 | tls1.3;
 *                                    SUITE aes-128-gcm | aes-256-gcm | chacha20-poly1305;
 *                                    SIZE the application's write, in bytes
 *
 * One operation is one SSL_write of SIZE bytes and the SSL_reads that take
 * them in, so the rate is the application's throughput with every copy a
 * TLS stack makes in memory (into records, through the BIO pair, out to the
 * reader's buffer). Each write is read at once, as an application that
 * answers what it reads would do. The writer's and the reader's time are
 * kept apart (reported as client = send and server = receive): every
 * SPLIT_EVERY-th operation is timed side by side, and the batches' whole
 * time is divided between the sides in that proportion (reading a clock
 * three times per write would cost 4% of a 1 KiB one, and more of a
 * 16-byte one, whose timed operations would then overstate both sides).
 * The monotonic clock serves: one thread that never waits, so each side's
 * wall time is its CPU time.
 * Before timing, one write is checked: version and suite as asked, and the
 * reader gets exactly the bytes written. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat.h"
#include "harness.h"
#include "families.h"
#include "tls.h"

#include <openssl/ssl.h>

#define SPLIT_EVERY 16                 /* operations per one whose two sides are timed */
#define MAX_TRANSFER (16u * 1024 * 1024)

struct transfer_state {
    tls_config cfg;
    SSL_CTX *server_ctx, *client_ctx;
    SSL *client, *server;
    unsigned char *out, *in;
    size_t size;
    sp_sampled_split split;              /* a: send, b: receive */
    char ca_file[600];
};

static int write_all(SSL *ssl, const unsigned char *buf, size_t len)
{
    while (len > 0) {
        int n = SSL_write(ssl, buf, len > 0x40000000 ? 0x40000000 : (int)len);
        if (n <= 0)
            return 0;
        buf += n;
        len -= (size_t)n;
    }
    return 1;
}

static int read_all(SSL *ssl, unsigned char *buf, size_t cap, uint64_t len)
{
    while (len > 0) {
        int n = SSL_read(ssl, buf, (int)(len < cap ? len : cap));
        if (n <= 0)
            return 0;
        len -= (uint64_t)n;
    }
    return 1;
}

/* Every SPLIT_EVERY-th write and its reads timed apart; the rest untimed, so clock reads cost them nothing. */
static int run_transfer(void *p, uint64_t iters)
{
    struct transfer_state *s = p;
    uint64_t start = sp_now_ns(SP_WALL);
    for (uint64_t i = 0; i < iters; i++) {
        if ((s->split.ops + i) % SPLIT_EVERY) {
            if (!write_all(s->client, s->out, s->size) || !read_all(s->server, s->in, s->size, s->size))
                return 0;
            continue;
        }
        uint64_t t0 = sp_now_ns(SP_WALL);
        if (!write_all(s->client, s->out, s->size))
            return 0;
        uint64_t t1 = sp_now_ns(SP_WALL);
        if (!read_all(s->server, s->in, s->size, s->size))
            return 0;
        s->split.a_ns += t1 - t0;
        s->split.b_ns += sp_now_ns(SP_WALL) - t1;
    }
    s->split.ops += iters;
    s->split.batch_ns += sp_now_ns(SP_WALL) - start;
    return 1;
}

static void split_times(void *p, uint64_t *send, uint64_t *receive)
{
    struct transfer_state *s = p;
    sp_split_sampled(&s->split, send, receive);
}

static void release_transfer(void *p)
{
    struct transfer_state *s = p;
    SSL_free(s->client);
    SSL_free(s->server);
    SSL_CTX_free(s->client_ctx);
    SSL_CTX_free(s->server_ctx);
    free(s->out);
    free(s->in);
    free(s);
}

/* The connection: a BIO pair that holds a whole write's records, and one handshake. */
static int connect_pair(struct transfer_state *s)
{
    size_t records = (s->size + 16383) / 16384;
    size_t buffer = s->size + records * 64 + 64 * 1024;     /* one write's records: each adds under 64 bytes */
    BIO *cbio = NULL, *sbio = NULL;
    s->client = SSL_new(s->client_ctx);
    s->server = SSL_new(s->server_ctx);
    if (!s->client || !s->server || !BIO_new_bio_pair(&cbio, buffer, &sbio, buffer))
        return 0;
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
    return rc <= 0 && SSL_get_error(s->client, rc) == SSL_ERROR_WANT_READ;
}

/* Version and suite as asked, and the reader gets exactly what was written. */
static prep_status check_first(struct transfer_state *s, prep_result *res, char *checked, size_t len)
{
    if (SSL_version(s->client) != s->cfg.proto)
        return prep_error(res, "negotiated %s, not the version asked", SSL_get_version(s->client));
    if (!tls_cipher_ok(&s->cfg, s->client)) {
        const char *got = SSL_CIPHER_get_name(SSL_get_current_cipher(s->client));
        if (SP_BORINGSSL && s->cfg.proto == TLS1_3_VERSION)
            return prep_na(res, "BoringSSL chooses the TLS 1.3 cipher suite itself (it negotiated %s)", got);
        return prep_error(res, "negotiated cipher %s", got);
    }
    fill_pattern(s->out, s->size, 7);
    memset(s->in, 0, s->size);
    size_t got = 0;
    if (!write_all(s->client, s->out, s->size))
        return prep_error(res, "SSL_write of %zu bytes failed", s->size);
    while (got < s->size) {
        int n = SSL_read(s->server, s->in + got, (int)(s->size - got));
        if (n <= 0)
            return prep_error(res, "SSL_read failed after %zu of %zu bytes", got, s->size);
        got += (size_t)n;
    }
    if (getenv("SSLPERF_TRANSFER_FLIP_A_BYTE"))     /* lets a test see that the comparison catches it */
        s->in[s->size / 2] ^= 1;
    if (memcmp(s->in, s->out, s->size) != 0)
        return prep_error(res, "the reader got other bytes than the writer wrote");
    snprintf(checked, len, "%s %s, %zu bytes received as written", SSL_get_version(s->client),
             SSL_CIPHER_get_name(SSL_get_current_cipher(s->client)), s->size);
    return PREP_OK;
}

prep_status prepare_transfer(const case_name *name, bench_case *out, prep_result *res)
{
    struct transfer_state *s = calloc(1, sizeof(*s));
    prep_status status;
    if (!s)
        return prep_error(res, "out of memory");
    if (name->n != 5)
        status = prep_unknown(res, "transfer cases are tls/transfer/PROTO/SUITE/SIZE");
    else if (!parse_size(name->part[4], &s->size) || s->size > MAX_TRANSFER)
        status = prep_unknown(res, "the write size must be 1 to %u bytes, not \"%s\"", MAX_TRANSFER, name->part[4]);
    else
        status = tls_transfer_config(name->part[2], name->part[3], &s->cfg, res);
    if (status == PREP_OK)
        status = tls_make_ctxs(&s->cfg, &s->server_ctx, &s->client_ctx, s->ca_file, sizeof(s->ca_file), res);
    if (status == PREP_OK) {
        s->out = malloc(s->size);
        s->in = malloc(s->size);
        if (!s->out || !s->in)
            status = prep_error(res, "out of memory for %zu-byte buffers", s->size);
        else if (!connect_pair(s))
            status = prep_error(res, "the handshake failed");
    }
    if (status == PREP_OK)
        status = check_first(s, res, out->checked, sizeof(out->checked));
    if (sp_take(status, out, s, release_transfer, UNIT_BYTES, s->size) != PREP_OK)
        return status;
    out->run = run_transfer;
    out->split = split_times;
    snprintf(out->note, sizeof(out->note), "client writes, server reads; copies in memory included");
    return PREP_OK;
}
