/* TLS through wolfSSL's own API, in memory, under the OpenSSL backend's case
 * names and with its meaning of one operation (openssl/tls.c, transfer.c):
 *
 *   tls/handshake/PROTO/GROUP/CERT/shared|new   one complete handshake, both connections made and freed;
 *                                               new: a client WOLFSSL_CTX with the CA file loaded per connection
 *   tls/resume/PROTO/ticket|session-id/GROUP/CERT
 *   tls/transfer/PROTO/SUITE/SIZE               the client writes SIZE bytes, the server reads them
 *
 * Records move through two in-memory pipes (the I/O callbacks). The client
 * verifies the server's chain and name against the CA file of ~150
 * certificates every backend loads (the certificates are the OpenSSL
 * backend's, SSLPERF_TLS_PEM_DIR). The first handshake is checked: version,
 * suite and group as asked, and resumption resumed; a transfer's bytes
 * arrive as written. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <wolfssl/options.h>
#include <wolfssl/ssl.h>

#include "harness.h"
#include "wolfssl_cases.h"
#include "wolfssl_tls.h"
#include "tls_names.h"
#include "transfer.h"

#define SPLIT_EVERY 8      /* handshakes per one whose client and server sides are timed apart */

/* wolfSSL's constants for tls_names.h's rows, in their order (0 and NULL: `default`, nothing set). */
static const struct {
    int group;
    const char *reported;    /* wolfSSL_get_curve_name's name for it */
} GROUPS[] = {
    {0, NULL},
    {WOLFSSL_ECC_X25519, "X25519"},
    {WOLFSSL_ECC_SECP256R1, "SECP256R1"},
    {WOLFSSL_ECC_SECP384R1, "SECP384R1"},
    {WOLFSSL_X25519MLKEM768, "X25519MLKEM768"},
    {WOLFSSL_SECP256R1MLKEM768, "SecP256r1MLKEM768"},
    {WOLFSSL_ML_KEM_768, "ML_KEM_768"},
};
SP_TLS_SAME_ROWS(GROUPS, GROUPS);

static const struct {
    const char *tls13, *tls12_ecdsa, *tls12_rsa;
} SUITES[] = {
    {NULL, NULL, NULL},
    {"TLS13-AES128-GCM-SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256"},
    {"TLS13-AES256-GCM-SHA384", "ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-RSA-AES256-GCM-SHA384"},
    {"TLS13-CHACHA20-POLY1305-SHA256", "ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305"},
};
SP_TLS_SAME_ROWS(SUITES, SUITES);

/* ---- the transport: a pipe per direction, read through wolfSSL's I/O callbacks ---- */

#define DATAGRAM_HEADER sizeof(uint32_t)

int wtls_pipe_send(WOLFSSL *ssl, char *buf, int sz, void *ctx)
{
    (void)ssl;
    pipe_buf *p = ctx;
    size_t need = (size_t)sz + (p->datagrams ? DATAGRAM_HEADER : 0);
    if (p->off == p->len)
        p->off = p->len = 0;
    if (p->len + need > p->cap) {
        size_t cap = p->cap ? p->cap : 32768;
        while (cap < p->len + need)
            cap *= 2;
        unsigned char *grown = realloc(p->data, cap);
        if (!grown)
            return WOLFSSL_CBIO_ERR_GENERAL;
        p->data = grown;
        p->cap = cap;
    }
    if (p->datagrams) {
        uint32_t length = (uint32_t)sz;
        memcpy(p->data + p->len, &length, DATAGRAM_HEADER);
        p->len += DATAGRAM_HEADER;
    }
    memcpy(p->data + p->len, buf, (size_t)sz);
    p->len += (size_t)sz;
    p->sent += (uint64_t)sz;
    return sz;
}

int wtls_pipe_recv(WOLFSSL *ssl, char *buf, int sz, void *ctx)
{
    (void)ssl;
    pipe_buf *p = ctx;
    size_t left = p->len - p->off, n;
    if (left == 0)
        return WOLFSSL_CBIO_ERR_WANT_READ;
    if (p->datagrams) {            /* one datagram; what does not fit is lost, as a socket would lose it */
        uint32_t length;
        memcpy(&length, p->data + p->off, DATAGRAM_HEADER);
        p->off += DATAGRAM_HEADER;
        n = length < (size_t)sz ? length : (size_t)sz;
        memcpy(buf, p->data + p->off, n);
        p->off += length;
        return (int)n;
    }
    n = (size_t)sz < left ? (size_t)sz : left;
    memcpy(buf, p->data + p->off, n);
    p->off += n;
    return (int)n;
}

/* ---- configuration ------------------------------------------------------------- */

prep_status wtls_parse(const case_name *name, wtls_config *cfg, prep_result *res)
{
    memset(cfg, 0, sizeof(*cfg));
    return sp_tls_parse(name, &cfg->tls, res);
}

/* The case's one suite, or NULL for `default` (the library's own list). */
static const char *suite_name(const wtls_config *cfg)
{
    if (cfg->tls.tls13)
        return SUITES[cfg->tls.suite].tls13;
    return SP_TLS_CERTS[cfg->tls.cert].rsa ? SUITES[cfg->tls.suite].tls12_rsa : SUITES[cfg->tls.suite].tls12_ecdsa;
}

/* The protocol's method: (D)TLS 1.2 or 1.3, client or server; NULL where this build has no DTLS of that version. */
static WOLFSSL_METHOD *method(const wtls_config *cfg, int server)
{
    if (!cfg->tls.dtls)
        return cfg->tls.tls13 ? (server ? wolfTLSv1_3_server_method() : wolfTLSv1_3_client_method())
                              : (server ? wolfTLSv1_2_server_method() : wolfTLSv1_2_client_method());
#if defined(WOLFSSL_DTLS13)
    if (cfg->tls.tls13)
        return server ? wolfDTLSv1_3_server_method() : wolfDTLSv1_3_client_method();
#endif
#if defined(WOLFSSL_DTLS)
    if (!cfg->tls.tls13)
        return server ? wolfDTLSv1_2_server_method() : wolfDTLSv1_2_client_method();
#endif
    return NULL;
}

/* Version, the one suite, and the group (with, for TLS 1.2, an ECDSA certificate's curve); `default` sets none. */
static int configure(WOLFSSL_CTX *ctx, const wtls_config *cfg, int server)
{
    int ok = !suite_name(cfg) || wolfSSL_CTX_set_cipher_list(ctx, suite_name(cfg)) == WOLFSSL_SUCCESS;
    int curve_row = SP_TLS_CERTS[cfg->tls.cert].curve_group;
    int groups[2] = {GROUPS[cfg->tls.group].group, curve_row >= 0 ? GROUPS[curve_row].group : 0};
    int count = !cfg->tls.tls13 && groups[1] && groups[1] != groups[0] ? 2 : 1;
    if (cfg->tls.group == SP_TLS_DEFAULT)
        count = 0;
    if (ok && cfg->tls.tls13 && count)
        ok = wolfSSL_CTX_set_groups(ctx, groups, count) == WOLFSSL_SUCCESS;
    for (int i = 0; ok && !cfg->tls.tls13 && !server && i < count; i++)
        ok = wolfSSL_CTX_UseSupportedCurve(ctx, (word16)groups[i]) == WOLFSSL_SUCCESS;
    if (ok && server && cfg->tls.resume == 2)
        ok = wolfSSL_CTX_NoTicketTLSv12(ctx) == WOLFSSL_SUCCESS;
    if (!cfg->sockets) {                 /* else wolfSSL's own socket I/O, on each connection's fd */
        wolfSSL_CTX_SetIORecv(ctx, wtls_pipe_recv);
        wolfSSL_CTX_SetIOSend(ctx, wtls_pipe_send);
    }
    return ok;
}

WOLFSSL_CTX *wtls_client_ctx(const wtls_config *cfg, const char *roots)
{
    WOLFSSL_METHOD *client = method(cfg, 0);
    WOLFSSL_CTX *ctx = client ? wolfSSL_CTX_new(client) : NULL;
    if (ctx && configure(ctx, cfg, 0) && wolfSSL_CTX_load_verify_locations(ctx, roots, NULL) == WOLFSSL_SUCCESS
        && (cfg->tls.tls13 || cfg->tls.resume != 1 || wolfSSL_CTX_UseSessionTicket(ctx) == WOLFSSL_SUCCESS)) {
        wolfSSL_CTX_set_verify(ctx, WOLFSSL_VERIFY_PEER, NULL);   /* TLS 1.2 tickets: the client asks for one */
        return ctx;
    }
    wolfSSL_CTX_free(ctx);
    return NULL;
}

prep_status wtls_make_ctxs(const wtls_config *cfg, WOLFSSL_CTX **server, WOLFSSL_CTX **client, prep_result *res)
{
    char cert[600], key[600];
    const char *roots = sp_roots_file();
    *server = *client = NULL;
    if (!sp_pem_dir() || !roots)
        return prep_na(res, "no certificate directories (SSLPERF_CERT_DIR and SSLPERF_TLS_PEM_DIR are set by "
                            "`sslperf tls`)");
    snprintf(cert, sizeof(cert), "%s/%s.pem", sp_pem_dir(), SP_TLS_CERTS[cfg->tls.cert].name);
    snprintf(key, sizeof(key), "%s/%s.key", sp_pem_dir(), SP_TLS_CERTS[cfg->tls.cert].name);
    if (!method(cfg, 1))
        return prep_na(res, "this wolfSSL build has no %s (configure --enable-dtls%s)", cfg->tls.proto,
                       cfg->tls.tls13 ? " --enable-dtls13" : "");
    if (SP_TLS_CERTS[cfg->tls.cert].mldsa && access(cert, R_OK) != 0)
        return prep_na(res, "no %s certificate: they are made by OpenSSL 3.5 or later, and the library that made "
                       "this run's certificates is older", SP_TLS_CERTS[cfg->tls.cert].name);
    *server = wolfSSL_CTX_new(method(cfg, 1));
    if (!*server || !configure(*server, cfg, 1))
        return prep_na(res, "the server cannot be set up for %s with %s", cfg->tls.proto,
                       SP_TLS_GROUPS[cfg->tls.group].name);
    if (wolfSSL_CTX_use_certificate_file(*server, cert, WOLFSSL_FILETYPE_PEM) != WOLFSSL_SUCCESS
        || wolfSSL_CTX_use_PrivateKey_file(*server, key, WOLFSSL_FILETYPE_PEM) != WOLFSSL_SUCCESS)
        return prep_na(res, "this wolfSSL build does not take the %s certificate and key",
                       SP_TLS_CERTS[cfg->tls.cert].name);
    if (!cfg->tls.new_ctx && !(*client = wtls_client_ctx(cfg, roots)))
        return prep_na(res, "the client cannot be set up for group %s", SP_TLS_GROUPS[cfg->tls.group].name);
    return PREP_OK;
}

/* ---- connections -------------------------------------------------------------------- */

typedef struct {
    wtls_config cfg;
    WOLFSSL_CTX *server_ctx, *client_ctx;
    WOLFSSL_SESSION *session;
    WOLFSSL *client, *server;
    pipe_buf to_server, to_client;
    uint64_t client_ns, server_ns;   /* of the handshakes timed side by side */
    uint64_t ops, batch_ns;          /* handshakes and their batches' whole CPU time, since the last split */
    int timed;
} wtls_state;

/* The thread's CPU clock while the handshake is timed side by side, else 0: a clock read is a system call, and
 * reading it around every step costs 5% of a handshake, so every SPLIT_EVERY-th handshake is timed apart. */
static uint64_t now(const wtls_state *s)
{
    return s->timed ? sp_now_ns(SP_THREAD_CPU) : 0;
}

int wtls_step(WOLFSSL *ssl, int server, int *done)
{
    int rc = server ? wolfSSL_accept(ssl) : wolfSSL_connect(ssl);
    if (rc == WOLFSSL_SUCCESS)
        return *done = 1;
    int err = wolfSSL_get_error(ssl, rc);
    return err == WOLFSSL_ERROR_WANT_READ || err == WOLFSSL_ERROR_WANT_WRITE;
}

static int step(wtls_state *s, WOLFSSL *ssl, int server, int *done, uint64_t *spent)
{
    uint64_t t0 = now(s);
    int ok = wtls_step(ssl, server, done);
    *spent += now(s) - t0;
    return ok;
}

/* A connected pair (kept in `s`), or 0. */
static int handshake(wtls_state *s)
{
    uint64_t t0 = now(s);
    WOLFSSL_CTX *cctx = s->cfg.tls.new_ctx ? wtls_client_ctx(&s->cfg, sp_roots_file()) : s->client_ctx;
    s->client = cctx ? wolfSSL_new(cctx) : NULL;
    int ok = s->client && wolfSSL_UseSNI(s->client, WOLFSSL_SNI_HOST_NAME, "localhost", 9) == WOLFSSL_SUCCESS
             && wolfSSL_check_domain_name(s->client, "localhost") == WOLFSSL_SUCCESS
             && (!s->session || wolfSSL_set_session(s->client, s->session) == WOLFSSL_SUCCESS);
    if (s->cfg.tls.new_ctx)
        wolfSSL_CTX_free(cctx);     /* the WOLFSSL holds its context */
    uint64_t t1 = now(s);
    s->client_ns += t1 - t0;
    s->server = wolfSSL_new(s->server_ctx);
    s->server_ns += now(s) - t1;
    s->to_server.len = s->to_server.off = s->to_client.len = s->to_client.off = 0;
    s->to_server.sent = s->to_client.sent = 0;
    s->to_server.datagrams = s->to_client.datagrams = s->cfg.tls.dtls;
    ok = ok && s->server;
    if (ok) {
        wolfSSL_SetIOWriteCtx(s->client, &s->to_server);
        wolfSSL_SetIOReadCtx(s->client, &s->to_client);
        wolfSSL_SetIOWriteCtx(s->server, &s->to_client);
        wolfSSL_SetIOReadCtx(s->server, &s->to_server);
    }
    int client_done = 0, server_done = 0;
    for (int rounds = 0; ok && !(client_done && server_done) && rounds < 64; rounds++) {
        if (!client_done)
            ok = step(s, s->client, 0, &client_done, &s->client_ns);
        if (ok && !server_done)
            ok = step(s, s->server, 1, &server_done, &s->server_ns);
    }
    ok = ok && client_done && server_done;
    if (ok && s->cfg.tls.tls13) {
        /* The client takes the session tickets the server sent. */
        char byte;
        uint64_t t2 = now(s);
        int rc = wolfSSL_read(s->client, &byte, 1);
        ok = rc < 0 && wolfSSL_get_error(s->client, rc) == WOLFSSL_ERROR_WANT_READ;
        s->client_ns += now(s) - t2;
    }
    return ok;
}

static void close_pair(wtls_state *s)
{
    uint64_t t0 = now(s);
    wolfSSL_free(s->client);
    uint64_t t1 = now(s);
    wolfSSL_free(s->server);
    s->server_ns += now(s) - t1;
    s->client_ns += t1 - t0;
    s->client = s->server = NULL;
}

static int run_handshakes(void *p, uint64_t iters)
{
    wtls_state *s = p;
    uint64_t start = sp_now_ns(SP_THREAD_CPU);
    for (uint64_t i = 0; i < iters; i++) {
        s->timed = (s->ops + i) % SPLIT_EVERY == 0;
        int ok = handshake(s);
        close_pair(s);
        if (!ok)
            return 0;
    }
    s->timed = 0;
    s->ops += iters;
    s->batch_ns += sp_now_ns(SP_THREAD_CPU) - start;
    return 1;
}

/* The batches' CPU time, divided between the sides as the handshakes timed side by side divide theirs. */
static void split_times(void *p, uint64_t *client, uint64_t *server)
{
    wtls_state *s = p;
    sp_sampled_split split = {s->client_ns, s->server_ns, s->ops, s->batch_ns};
    sp_split_sampled(&split, client, server);
    s->client_ns = s->server_ns = s->ops = s->batch_ns = 0;
}

/* What a state holds (a transfer's pair is freed by core/transfer.c), then the state itself. */
static void release_pair(void *p)
{
    wtls_state *s = p;
    if (s->client || s->server)
        close_pair(s);
    wolfSSL_SESSION_free(s->session);
    wolfSSL_CTX_free(s->client_ctx);
    wolfSSL_CTX_free(s->server_ctx);
    free(s->to_server.data);
    free(s->to_client.data);
}

static void release_state(void *p)
{
    release_pair(p);
    free(p);
}

/* What the pair negotiated against what was asked: "" and `checked` filled, or the problem. */
void wtls_check(const wtls_config *cfg, WOLFSSL *client, int expect_resumed, char *problem, size_t plen,
                char *checked, size_t clen)
{
    const char *version = wolfSSL_get_version(client), *suite = wolfSSL_get_cipher_name(client);
    const char *group = wolfSSL_get_curve_name(client), *asked_suite = suite_name(cfg);
    int resumed = wolfSSL_session_reused(client) == 1, any_group = cfg->tls.group == SP_TLS_DEFAULT;
    char asked_version[16];
    snprintf(asked_version, sizeof(asked_version), "%sv1.%c", cfg->tls.dtls ? "DTLS" : "TLS", cfg->tls.tls13 ? '3'
             : '2');
    problem[0] = '\0';
    if (strcmp(version, asked_version) != 0)
        snprintf(problem, plen, "negotiated %s, not the version asked", version);
    else if (!suite || (asked_suite && strstr(asked_suite, suite) == NULL))
        snprintf(problem, plen, "negotiated cipher suite %s", suite ? suite : "(none)");
    else if (expect_resumed != resumed)
        snprintf(problem, plen, expect_resumed ? "the session was not resumed" : "a full handshake resumed");
    else if (!(resumed && !cfg->tls.tls13) && !any_group
             && (!group || strcmp(group, GROUPS[cfg->tls.group].reported) != 0))
        snprintf(problem, plen, "negotiated another group than %s: %s", SP_TLS_GROUPS[cfg->tls.group].name,
                 group ? group : "(none)");
    else
        snprintf(checked, clen, "%s %s group %s%s", version, suite, resumed && !cfg->tls.tls13 ? "(none: resumed)"
                 : group, resumed ? " resumed" : "");
}

/* The codepoint of wolfSSL's name for a group, where tls_names.h has a row for it. */
static int32_t group_codepoint(const char *reported)
{
    for (size_t g = 0; reported && g < SP_TLS_N_GROUPS; g++)
        if (GROUPS[g].reported && strcmp(GROUPS[g].reported, reported) == 0)
            return SP_TLS_GROUPS[g].codepoint;
    return SP_UNKNOWN;
}

void wtls_negotiated(WOLFSSL *client, const pipe_buf *to_server, const pipe_buf *to_client, sp_negotiated *n)
{
    /* wolfSSL without its OpenSSL layer has no message callback: its getters, and the bytes the pipes carried.
     * A resumption has no certificate (no signature); TLS 1.2's has no key exchange. */
    int resumed = wolfSSL_session_reused(client) == 1, tls13 = wolfSSL_version(client) == TLS1_3_VERSION
                                                                || wolfSSL_version(client) == DTLS1_3_VERSION;
    sp_wire_start(n, wolfSSL_dtls(client));
    n->client_bytes = (int64_t)to_server->sent;
    n->server_bytes = (int64_t)to_client->sent;
    sp_wire_fallback(n, wolfSSL_version(client), resumed && !tls13 ? 0 : group_codepoint(wolfSSL_get_curve_name(client)),
                     wolfSSL_get_current_cipher_suite(client), resumed ? 0 : SP_UNKNOWN);
}

static prep_status check_first(wtls_state *s, int expect_resumed, prep_result *res, char *checked, size_t clen,
                               sp_negotiated *negotiated)
{
    char problem[200];
    if (!handshake(s)) {
        close_pair(s);
        return prep_error(res, "the handshake failed");
    }
    wtls_check(&s->cfg, s->client, expect_resumed, problem, sizeof(problem), checked, clen);
    wtls_negotiated(s->client, &s->to_server, &s->to_client, negotiated);
    if (!problem[0] && s->cfg.tls.resume && !s->session && !(s->session = wolfSSL_get1_session(s->client)))
        snprintf(problem, sizeof(problem), "the server gave no resumable session");
    close_pair(s);
    return problem[0] ? prep_error(res, "%s", problem) : PREP_OK;
}

/* ---- transfer (core/transfer.c times it) ---------------------------------------------- */

static int write_some(void *p, const unsigned char *buf, int len)
{
    return wolfSSL_write(((wtls_state *)p)->client, buf, len);
}

static int read_some(void *p, unsigned char *buf, int len)
{
    return wolfSSL_read(((wtls_state *)p)->server, buf, len);
}

static prep_status connect_pair(void *p, const char *proto, const char *suite, size_t size, prep_result *res)
{
    (void)size;     /* the pipes grow to a write's records */
    wtls_state *s = p;
    prep_status status = sp_tls_parse_transfer(proto, suite, &s->cfg.tls, res);
    if (status == PREP_OK)
        status = wtls_make_ctxs(&s->cfg, &s->server_ctx, &s->client_ctx, res);
    return status == PREP_OK && !handshake(s) ? prep_error(res, "the handshake failed") : status;
}

static prep_status check_transfer(void *p, prep_result *res, char *seen, size_t seen_len)
{
    char problem[200];
    wtls_check(&((wtls_state *)p)->cfg, ((wtls_state *)p)->client, 0, problem, sizeof(problem), seen, seen_len);
    return problem[0] ? prep_error(res, "%s", problem) : PREP_OK;
}

static void transfer_negotiated(void *p, sp_negotiated *n)
{
    wtls_state *s = p;
    wtls_negotiated(s->client, &s->to_server, &s->to_client, n);
}

static const sp_transfer_ops WOLF_TRANSFER = {
    "wolfSSL_write", sizeof(wtls_state), connect_pair, check_transfer, write_some, read_some, release_pair,
    transfer_negotiated,
};

prep_status prepare_wolf_tls(const case_name *name, bench_case *out, prep_result *res)
{
    if (name->n >= 2 && strcmp(name->part[1], "transfer") == 0)
        return sp_prepare_transfer(name, &WOLF_TRANSFER, out, res);
    wtls_state *s = calloc(1, sizeof(*s));
    if (!s)
        return prep_error(res, "out of memory");
    prep_status status = wtls_parse(name, &s->cfg, res);
    if (status == PREP_OK)
        status = wtls_make_ctxs(&s->cfg, &s->server_ctx, &s->client_ctx, res);
    if (status == PREP_OK)
        status = check_first(s, 0, res, out->checked, sizeof(out->checked), &out->negotiated);
    if (status == PREP_OK && s->cfg.tls.resume)   /* now resuming: check that it does, and record what it did */
        status = check_first(s, 1, res, out->checked, sizeof(out->checked), &out->negotiated);
    if (sp_take(status, out, s, release_state, UNIT_OPS, 0) != PREP_OK)
        return status;
    s->client_ns = s->server_ns = s->ops = s->batch_ns = 0;
    out->run = run_handshakes;
    out->split = split_times;
    snprintf(out->note, sizeof(out->note), "client verifies a %s chain against a CA file of ~150 certificates",
             SP_TLS_CERTS[s->cfg.tls.cert].name);
    return PREP_OK;
}
