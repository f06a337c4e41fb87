/* TLS handshakes in memory: client and server in one process over a BIO pair.
 *
 *   tls/handshake/PROTO/GROUP/CERT/CTX    CTX: shared (one client SSL_CTX) or
 *                                         new (SSL_CTX_new + CA file load per
 *                                         connection, as curl did; seed 001)
 *   tls/resume/PROTO/HOW/GROUP/CERT       HOW: ticket | session-id (TLS 1.2)
 *   tls/transfer/PROTO/SUITE/SIZE         bulk transfer after one handshake (transfer.c)
 *
 *   PROTO tls1.2 | tls1.3 | dtls1.2 (over datagram pipes, dgram_pipe.c; dtls1.3: n/a, OpenSSL has none);  GROUP default | x25519 | p-256 | p-384 | x25519mlkem768 |
 *   secp256r1mlkem768 | mlkem768;  CERT rsa-2048 | rsa-3072 | ecdsa-p256 | ecdsa-p384 | ed25519 | ml-dsa-44/65/87
 *
 * One operation is one complete handshake (the client verifies the server's
 * chain against the CA) including SSL_new/SSL_free. The client's and the
 * server's CPU time are kept apart. The first handshake is checked: version,
 * group and cipher as asked (`default`: whatever the two sides agree on), and
 * resumption really resumed; what it negotiated is recorded (core/wire.c). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat.h"
#include "harness.h"
#include "families.h"
#include "tls.h"

#include <openssl/ssl.h>
#include <openssl/x509.h>

struct tls_state {
    tls_config cfg;
    SSL_CTX *server_ctx, *client_ctx;
    SSL_SESSION *session;
    SSL_SESSION *ticket;      /* the first session a ticket brought, before `session` is set */
    uint64_t client_ns, server_ns;
    char ca_file[600];
    sp_latencies latencies;   /* each handshake's wall time, for the percentiles */
    sp_negotiated *watch;     /* while checking: where the handshake's negotiation is recorded */
};

/* A TLS 1.3 session comes after the handshake, one per ticket. BoringSSL and
 * AWS-LC hand it only to this callback (SSL_get1_session gives the handshake's
 * own session, which TLS 1.3 cannot resume); OpenSSL's SSL_get1_session gives
 * the last ticket's. (Through the callback, OpenSSL 3.0's client stopped
 * resuming after the first resumption, so OpenSSL keeps its own way.)
 * Returning 1 keeps the session. */
#if SP_BSSL
static int keep_ticket(SSL *client, SSL_SESSION *session)
{
    struct tls_state *s = SSL_get_app_data(client);
    if (!s || s->session || s->ticket)
        return 0;
    s->ticket = session;
    return 1;
}
#endif

static int step(SSL *ssl, int *done, uint64_t *spent)
{
    uint64_t t0 = sp_now_ns(SP_THREAD_CPU);
    int rc = SSL_do_handshake(ssl);
    *spent += sp_now_ns(SP_THREAD_CPU) - t0;
    if (rc == 1) {
        *done = 1;
        return 1;
    }
    int err = SSL_get_error(ssl, rc);
    return err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE;
}

/* One handshake; on success, `out_client` keeps the client SSL if asked. */
static int handshake(struct tls_state *s, SSL **keep_client)
{
    uint64_t t0 = sp_now_ns(SP_THREAD_CPU);
    SSL_CTX *cctx = s->cfg.new_ctx ? tls_client_ctx(&s->cfg, s->ca_file) : s->client_ctx;
    SSL *client = cctx ? SSL_new(cctx) : NULL;
    s->client_ns += sp_now_ns(SP_THREAD_CPU) - t0;
    if (client && s->watch)
        tls_watch(client, s->watch);
    SSL *server = SSL_new(s->server_ctx);
    BIO *cbio = NULL, *sbio = NULL;
    int ok = client && server && tls_bio_pair(&s->cfg, &cbio, &sbio);
    if (ok) {
        SSL_set_bio(client, cbio, cbio);
        SSL_set_bio(server, sbio, sbio);
        if (s->cfg.dtls)
            ok = SSL_set_mtu(client, DTLS_MTU) && SSL_set_mtu(server, DTLS_MTU);
        SSL_set_connect_state(client);
        SSL_set_accept_state(server);
        SSL_set_tlsext_host_name(client, "localhost");
#if SP_BSSL
        SSL_set_app_data(client, s);      /* for keep_ticket */
#endif
        if (ok && s->session)
            ok = SSL_set_session(client, s->session);
    }
    int client_done = 0, server_done = 0;
    for (int rounds = 0; ok && !(client_done && server_done) && rounds < 64; rounds++) {
        if (!client_done)
            ok = step(client, &client_done, &s->client_ns);
        if (ok && !server_done)
            ok = step(server, &server_done, &s->server_ns);
    }
    ok = ok && client_done && server_done;
    if (ok && s->session && !SSL_session_reused(client))
        ok = 0;                 /* every resumption resumes, not only the checked first one */
    if (ok && s->cfg.proto == TLS1_3_VERSION) {
#if SP_BSSL
        /* BoringSSL and AWS-LC hold a TLS 1.3 server's tickets back until it
         * writes (a real server's first response carries them); an empty
         * write sends them. Full handshakes send none, as before. */
        if (s->cfg.resume) {
            uint64_t t2 = sp_now_ns(SP_THREAD_CPU);
            ok = SSL_write(server, "", 0) >= 0;
            s->server_ns += sp_now_ns(SP_THREAD_CPU) - t2;
        }
#endif
        /* Let the client take the session tickets the server sent. */
        unsigned char byte;
        uint64_t t1 = sp_now_ns(SP_THREAD_CPU);
        ok = SSL_read(client, &byte, 1) <= 0 && SSL_get_error(client, 0) != SSL_ERROR_SSL;
        s->client_ns += sp_now_ns(SP_THREAD_CPU) - t1;
    }
    /* Mark both ends cleanly closed: OpenSSL drops (and makes unresumable) the
     * session of a connection freed without a shutdown. */
    if (client)
        SSL_set_shutdown(client, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
    if (server)
        SSL_set_shutdown(server, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
    t0 = sp_now_ns(SP_THREAD_CPU);
    if (ok && keep_client)
        *keep_client = client;
    else
        SSL_free(client);
    if (s->cfg.new_ctx)
        SSL_CTX_free(cctx);
    s->client_ns += sp_now_ns(SP_THREAD_CPU) - t0;
    SSL_free(server);
    return ok;
}

static int run_handshakes(void *p, uint64_t iters)
{
    struct tls_state *s = p;
    for (uint64_t i = 0; i < iters; i++) {
        uint64_t t0 = sp_now_ns(SP_WALL);
        if (!handshake(s, NULL))
            return 0;
        sp_latency_add(&s->latencies, sp_now_ns(SP_WALL) - t0);
    }
    return 1;
}

static sp_latencies *handshake_times(void *p)
{
    return &((struct tls_state *)p)->latencies;
}

static void split_times(void *p, uint64_t *client, uint64_t *server)
{
    struct tls_state *s = p;
    *client = s->client_ns;
    *server = s->server_ns;
    s->client_ns = s->server_ns = 0;
}

/* Another thread's state on the same SSL_CTX pair and session, with counters of its own. */
static void *share_tls(const void *p)
{
    struct tls_state *copy = malloc(sizeof(*copy));
    if (copy) {
        *copy = *(const struct tls_state *)p;
        copy->client_ns = copy->server_ns = 0;
        sp_latency_reset(&copy->latencies);
    }
    return copy;
}

static void release_tls(void *p)
{
    struct tls_state *s = p;
    SSL_SESSION_free(s->session);
    SSL_SESSION_free(s->ticket);
    SSL_CTX_free(s->client_ctx);
    SSL_CTX_free(s->server_ctx);
    free(s);
}

/* The first handshake, kept and checked: what was asked is what was got. */
static prep_status check_first(struct tls_state *s, prep_result *res, char *checked, size_t checked_len,
                               sp_negotiated *negotiated)
{
    SSL *client = NULL;
    s->watch = negotiated;
    int ok = handshake(s, &client);
    s->watch = NULL;
    if (!ok && s->cfg.dtls && strcmp(s->cfg.cert, "ed25519") == 0) {
        /* 1.1.1 to 3.6 end a DTLS 1.2 handshake with an Ed25519 certificate in "no shared cipher": the library's
         * limit, said as n/a with its own error rather than counted as sslperf's failure. */
        char why[REASON_MAX] = "this library negotiates no DTLS 1.2 handshake with an Ed25519 certificate";
        sp_append_errors(why, sizeof(why));
        return prep_na(res, "%s", why);
    }
    if (!ok)
        return prep_error(res, "the handshake failed");
    tls_watched(client, negotiated);
    char problem[200] = "";
    if (SSL_version(client) != s->cfg.proto)
        snprintf(problem, sizeof(problem), "negotiated %s, not the version asked", SSL_get_version(client));
    else if (!tls_cipher_ok(&s->cfg, client))
        snprintf(problem, sizeof(problem), "negotiated cipher %s", SSL_CIPHER_get_name(SSL_get_current_cipher(client)));
    else if (!tls_group_ok(&s->cfg, client))
        snprintf(problem, sizeof(problem), "negotiated another group than %s", s->cfg.group);
    else if (s->session && !SSL_session_reused(client))
        snprintf(problem, sizeof(problem), "the session was not resumed");
    else {
        char group[64];
        tls_group_name(client, group, sizeof(group));
        snprintf(checked, checked_len, "%s %s group %s%s", SSL_get_version(client),
                 SSL_CIPHER_get_name(SSL_get_current_cipher(client)), group,
                 SSL_session_reused(client) ? " resumed" : "");
    }
    if (!problem[0] && s->cfg.resume && !s->session) {
        /* Later handshakes resume this one. */
        s->session = SP_BSSL && s->cfg.proto == TLS1_3_VERSION ? s->ticket : SSL_get1_session(client);
        s->ticket = NULL;
        if (!s->session || !SSL_SESSION_is_resumable(s->session))
            snprintf(problem, sizeof(problem), "the server gave no resumable session");
    }
    SSL_free(client);
    if (problem[0])
        return prep_error(res, "%s", problem);
    if (s->cfg.resume && s->session == NULL)
        return prep_error(res, "no session to resume");
    return PREP_OK;
}

prep_status prepare_tls(const case_name *name, bench_case *out, prep_result *res)
{
    if (name->n >= 2 && strcmp(name->part[1], "transfer") == 0)
        return prepare_transfer(name, out, res);
    struct tls_state *s = calloc(1, sizeof(*s));
    prep_status status;
    if (!s)
        return prep_error(res, "out of memory");
    status = tls_parse(name, &s->cfg, res);
    if (status == PREP_OK)
        status = tls_make_ctxs(&s->cfg, &s->server_ctx, &s->client_ctx, s->ca_file, sizeof(s->ca_file), res);
#if SP_BSSL
    if (status == PREP_OK && s->cfg.resume && s->cfg.proto == TLS1_3_VERSION) {
        SSL_CTX_set_session_cache_mode(s->client_ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
        SSL_CTX_sess_set_new_cb(s->client_ctx, keep_ticket);
    }
#endif
    if (status == PREP_OK)
        status = check_first(s, res, out->checked, sizeof(out->checked), &out->negotiated);
    if (status == PREP_OK && s->cfg.resume)   /* now resuming: check that it does, and record what it negotiates */
        status = check_first(s, res, out->checked, sizeof(out->checked), &out->negotiated);
    if (sp_take(status, out, s, release_tls, UNIT_OPS, 0) != PREP_OK)
        return status;
    s->client_ns = s->server_ns = 0;
    out->run = run_handshakes;
    out->split = split_times;
    out->latencies = handshake_times;
    out->share = share_tls;
    snprintf(out->note, sizeof(out->note), "%s", s->cfg.note);
    return PREP_OK;
}
