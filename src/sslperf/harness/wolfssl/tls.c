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

#define MAX_TRANSFER (16u * 1024 * 1024)
#define SPLIT_EVERY 16

/* wolfSSL's constants for tls_names.h's rows, in their order. */
static const struct {
    int group;
    const char *reported;    /* wolfSSL_get_curve_name's name for it */
} GROUPS[] = {
    {WOLFSSL_ECC_X25519, "X25519"},
    {WOLFSSL_ECC_SECP256R1, "SECP256R1"},
    {WOLFSSL_ECC_SECP384R1, "SECP384R1"},
    {WOLFSSL_X25519MLKEM768, "X25519MLKEM768"},
};
SP_TLS_SAME_ROWS(GROUPS, GROUPS);

static const struct {
    const char *tls13, *tls12_ecdsa, *tls12_rsa;
} SUITES[] = {
    {"TLS13-AES128-GCM-SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256"},
    {"TLS13-AES256-GCM-SHA384", "ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-RSA-AES256-GCM-SHA384"},
    {"TLS13-CHACHA20-POLY1305-SHA256", "ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305"},
};
SP_TLS_SAME_ROWS(SUITES, SUITES);

/* ---- the transport: a pipe per direction, read through wolfSSL's I/O callbacks ---- */

int wtls_pipe_send(WOLFSSL *ssl, char *buf, int sz, void *ctx)
{
    (void)ssl;
    pipe_buf *p = ctx;
    if (p->off == p->len)
        p->off = p->len = 0;
    if (p->len + (size_t)sz > p->cap) {
        size_t cap = p->cap ? p->cap : 32768;
        while (cap < p->len + (size_t)sz)
            cap *= 2;
        unsigned char *grown = realloc(p->data, cap);
        if (!grown)
            return WOLFSSL_CBIO_ERR_GENERAL;
        p->data = grown;
        p->cap = cap;
    }
    memcpy(p->data + p->len, buf, (size_t)sz);
    p->len += (size_t)sz;
    return sz;
}

int wtls_pipe_recv(WOLFSSL *ssl, char *buf, int sz, void *ctx)
{
    (void)ssl;
    pipe_buf *p = ctx;
    size_t left = p->len - p->off;
    if (left == 0)
        return WOLFSSL_CBIO_ERR_WANT_READ;
    size_t n = (size_t)sz < left ? (size_t)sz : left;
    memcpy(buf, p->data + p->off, n);
    p->off += n;
    return (int)n;
}

/* ---- configuration ------------------------------------------------------------- */

static void from_case(const sp_tls_case *c, wtls_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->tls13 = c->tls13;
    cfg->group_row = c->group;
    cfg->cert_row = c->cert;
    cfg->suite_row = c->suite;
    cfg->new_ctx = c->new_ctx;
    cfg->resume = c->resume;
}

prep_status wtls_parse(const case_name *name, wtls_config *cfg, prep_result *res)
{
    sp_tls_case c;
    prep_status status = sp_tls_parse(name, &c, res);
    from_case(&c, cfg);
    return status;
}

static const char *suite_name(const wtls_config *cfg)
{
    if (cfg->tls13)
        return SUITES[cfg->suite_row].tls13;
    return SP_TLS_CERTS[cfg->cert_row].rsa ? SUITES[cfg->suite_row].tls12_rsa : SUITES[cfg->suite_row].tls12_ecdsa;
}

/* Version, the one suite, and the group (with, for TLS 1.2, an ECDSA certificate's curve). */
static int configure(WOLFSSL_CTX *ctx, const wtls_config *cfg, int server)
{
    int ok = wolfSSL_CTX_set_cipher_list(ctx, suite_name(cfg)) == WOLFSSL_SUCCESS;
    int curve_row = SP_TLS_CERTS[cfg->cert_row].curve_group;
    int groups[2] = {GROUPS[cfg->group_row].group, curve_row >= 0 ? GROUPS[curve_row].group : 0};
    int count = !cfg->tls13 && groups[1] && groups[1] != groups[0] ? 2 : 1;
    if (ok && cfg->tls13)
        ok = wolfSSL_CTX_set_groups(ctx, groups, count) == WOLFSSL_SUCCESS;
    for (int i = 0; ok && !cfg->tls13 && !server && i < count; i++)
        ok = wolfSSL_CTX_UseSupportedCurve(ctx, (word16)groups[i]) == WOLFSSL_SUCCESS;
    if (ok && server && cfg->resume == 2)
        ok = wolfSSL_CTX_NoTicketTLSv12(ctx) == WOLFSSL_SUCCESS;
    if (!cfg->sockets) {                 /* else wolfSSL's own socket I/O, on each connection's fd */
        wolfSSL_CTX_SetIORecv(ctx, wtls_pipe_recv);
        wolfSSL_CTX_SetIOSend(ctx, wtls_pipe_send);
    }
    return ok;
}

WOLFSSL_CTX *wtls_client_ctx(const wtls_config *cfg, const char *roots)
{
    WOLFSSL_CTX *ctx = wolfSSL_CTX_new(cfg->tls13 ? wolfTLSv1_3_client_method() : wolfTLSv1_2_client_method());
    if (ctx && configure(ctx, cfg, 0) && wolfSSL_CTX_load_verify_locations(ctx, roots, NULL) == WOLFSSL_SUCCESS
        && (cfg->tls13 || cfg->resume != 1 || wolfSSL_CTX_UseSessionTicket(ctx) == WOLFSSL_SUCCESS)) {
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
    snprintf(cert, sizeof(cert), "%s/%s.pem", sp_pem_dir(), SP_TLS_CERTS[cfg->cert_row].name);
    snprintf(key, sizeof(key), "%s/%s.key", sp_pem_dir(), SP_TLS_CERTS[cfg->cert_row].name);
    *server = wolfSSL_CTX_new(cfg->tls13 ? wolfTLSv1_3_server_method() : wolfTLSv1_2_server_method());
    if (!*server || !configure(*server, cfg, 1))
        return prep_na(res, "the server cannot be set up for %s with %s", cfg->tls13 ? "TLS 1.3" : "TLS 1.2",
                       SP_TLS_GROUPS[cfg->group_row].name);
    if (wolfSSL_CTX_use_certificate_file(*server, cert, WOLFSSL_FILETYPE_PEM) != WOLFSSL_SUCCESS
        || wolfSSL_CTX_use_PrivateKey_file(*server, key, WOLFSSL_FILETYPE_PEM) != WOLFSSL_SUCCESS)
        return prep_na(res, "this wolfSSL build does not take the %s certificate and key", SP_TLS_CERTS[cfg->cert_row].name);
    if (!cfg->new_ctx && !(*client = wtls_client_ctx(cfg, roots)))
        return prep_na(res, "the client cannot be set up for group %s", SP_TLS_GROUPS[cfg->group_row].name);
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
    WOLFSSL_CTX *cctx = s->cfg.new_ctx ? wtls_client_ctx(&s->cfg, sp_roots_file()) : s->client_ctx;
    s->client = cctx ? wolfSSL_new(cctx) : NULL;
    int ok = s->client && wolfSSL_UseSNI(s->client, WOLFSSL_SNI_HOST_NAME, "localhost", 9) == WOLFSSL_SUCCESS
             && wolfSSL_check_domain_name(s->client, "localhost") == WOLFSSL_SUCCESS
             && (!s->session || wolfSSL_set_session(s->client, s->session) == WOLFSSL_SUCCESS);
    if (s->cfg.new_ctx)
        wolfSSL_CTX_free(cctx);     /* the WOLFSSL holds its context */
    uint64_t t1 = now(s);
    s->client_ns += t1 - t0;
    s->server = wolfSSL_new(s->server_ctx);
    s->server_ns += now(s) - t1;
    s->to_server.len = s->to_server.off = s->to_client.len = s->to_client.off = 0;
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
    if (ok && s->cfg.tls13) {
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
        s->timed = (s->ops + i) % 8 == 0;
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

static void release_state(void *p)
{
    wtls_state *s = p;
    if (s->client || s->server)
        close_pair(s);
    wolfSSL_SESSION_free(s->session);
    wolfSSL_CTX_free(s->client_ctx);
    wolfSSL_CTX_free(s->server_ctx);
    free(s->to_server.data);
    free(s->to_client.data);
    free(s);
}

/* What the pair negotiated against what was asked: "" and `checked` filled, or the problem. */
void wtls_check(const wtls_config *cfg, WOLFSSL *client, int expect_resumed, char *problem, size_t plen,
                char *checked, size_t clen)
{
    const char *version = wolfSSL_get_version(client), *suite = wolfSSL_get_cipher_name(client);
    const char *group = wolfSSL_get_curve_name(client);
    int resumed = wolfSSL_session_reused(client) == 1;
    problem[0] = '\0';
    if (strcmp(version, cfg->tls13 ? "TLSv1.3" : "TLSv1.2") != 0)
        snprintf(problem, plen, "negotiated %s, not the version asked", version);
    else if (!suite || strstr(suite_name(cfg), suite) == NULL)
        snprintf(problem, plen, "negotiated cipher suite %s", suite ? suite : "(none)");
    else if (expect_resumed != resumed)
        snprintf(problem, plen, expect_resumed ? "the session was not resumed" : "a full handshake resumed");
    else if (!(resumed && !cfg->tls13) && (!group || strcmp(group, GROUPS[cfg->group_row].reported) != 0))
        snprintf(problem, plen, "negotiated another group than %s: %s", SP_TLS_GROUPS[cfg->group_row].name,
                 group ? group : "(none)");
    else
        snprintf(checked, clen, "%s %s group %s%s", version, suite, resumed && !cfg->tls13 ? "(none: resumed)"
                 : group, resumed ? " resumed" : "");
}

static prep_status check_first(wtls_state *s, int expect_resumed, prep_result *res, char *checked, size_t clen)
{
    char problem[200];
    if (!handshake(s)) {
        close_pair(s);
        return prep_error(res, "the handshake failed");
    }
    wtls_check(&s->cfg, s->client, expect_resumed, problem, sizeof(problem), checked, clen);
    if (!problem[0] && s->cfg.resume && !s->session && !(s->session = wolfSSL_get1_session(s->client)))
        snprintf(problem, sizeof(problem), "the server gave no resumable session");
    close_pair(s);
    return problem[0] ? prep_error(res, "%s", problem) : PREP_OK;
}

/* ---- transfer ------------------------------------------------------------------------- */

typedef struct {
    wtls_state pair;
    unsigned char *out, *in;
    size_t size;
    sp_sampled_split split;      /* a: send, b: receive */
} transfer_state;

static int write_all(WOLFSSL *ssl, const unsigned char *buf, size_t len)
{
    while (len > 0) {
        int n = wolfSSL_write(ssl, buf, len > 0x40000000 ? 0x40000000 : (int)len);
        if (n <= 0)
            return 0;
        buf += n;
        len -= (size_t)n;
    }
    return 1;
}

static int read_all(WOLFSSL *ssl, unsigned char *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        int n = wolfSSL_read(ssl, buf + got, (int)(len - got));
        if (n <= 0)
            return 0;
        got += (size_t)n;
    }
    return 1;
}

/* Every SPLIT_EVERY-th write and its reads timed apart; the rest untimed, so clock reads cost them nothing. */
static int run_transfer(void *p, uint64_t iters)
{
    transfer_state *s = p;
    uint64_t start = sp_now_ns(SP_WALL);
    for (uint64_t i = 0; i < iters; i++) {
        if ((s->split.ops + i) % SPLIT_EVERY) {
            if (!write_all(s->pair.client, s->out, s->size) || !read_all(s->pair.server, s->in, s->size))
                return 0;
            continue;
        }
        uint64_t t0 = sp_now_ns(SP_WALL);
        if (!write_all(s->pair.client, s->out, s->size))
            return 0;
        uint64_t t1 = sp_now_ns(SP_WALL);
        if (!read_all(s->pair.server, s->in, s->size))
            return 0;
        s->split.a_ns += t1 - t0;
        s->split.b_ns += sp_now_ns(SP_WALL) - t1;
    }
    s->split.ops += iters;
    s->split.batch_ns += sp_now_ns(SP_WALL) - start;
    return 1;
}

static void split_transfer(void *p, uint64_t *send, uint64_t *receive)
{
    transfer_state *s = p;
    sp_split_sampled(&s->split, send, receive);
}

static void release_transfer(void *p)
{
    transfer_state *s = p;
    if (s->pair.client || s->pair.server)
        close_pair(&s->pair);
    wolfSSL_CTX_free(s->pair.client_ctx);
    wolfSSL_CTX_free(s->pair.server_ctx);
    free(s->pair.to_server.data);
    free(s->pair.to_client.data);
    free(s->out);
    free(s->in);
    free(s);
}

static prep_status prepare_transfer(const case_name *name, bench_case *out, prep_result *res)
{
    char problem[200], seen[REASON_MAX];
    transfer_state *s = calloc(1, sizeof(*s));
    prep_status status = PREP_OK;
    if (!s)
        return prep_error(res, "out of memory");
    wtls_config *cfg = &s->pair.cfg;
    sp_tls_case c;
    if (name->n != 5)
        status = prep_unknown(res, "transfer cases are tls/transfer/PROTO/SUITE/SIZE");
    else
        status = sp_tls_parse_transfer(name->part[2], name->part[3], &c, res);
    if (status == PREP_OK && (!parse_size(name->part[4], &s->size) || s->size > MAX_TRANSFER))
        status = prep_unknown(res, "the write size must be 1 to %u bytes, not \"%s\"", MAX_TRANSFER, name->part[4]);
    if (status == PREP_OK) {
        from_case(&c, cfg);
        status = wtls_make_ctxs(cfg, &s->pair.server_ctx, &s->pair.client_ctx, res);
    }
    if (status == PREP_OK) {
        s->out = malloc(s->size);
        s->in = malloc(s->size);
        if (!s->out || !s->in)
            status = prep_error(res, "out of memory for %zu-byte buffers", s->size);
        else if (!handshake(&s->pair))
            status = prep_error(res, "the handshake failed");
    }
    if (status == PREP_OK) {
        wtls_check(&s->pair.cfg, s->pair.client, 0, problem, sizeof(problem), seen, sizeof(seen));
        fill_pattern(s->out, s->size, 7);
        memset(s->in, 0, s->size);
        if (problem[0])
            status = prep_error(res, "%s", problem);
        else if (!write_all(s->pair.client, s->out, s->size) || !read_all(s->pair.server, s->in, s->size))
            status = prep_error(res, "the server did not read back %zu bytes", s->size);
        else if (getenv("SSLPERF_TRANSFER_FLIP_A_BYTE"))     /* lets a test see that the comparison catches it */
            s->in[s->size / 2] ^= 1;
        if (status == PREP_OK && memcmp(s->in, s->out, s->size) != 0)
            status = prep_error(res, "the reader got other bytes than the writer wrote");
    }
    if (sp_take(status, out, s, release_transfer, UNIT_BYTES, s->size) != PREP_OK)
        return status;
    snprintf(out->checked, sizeof(out->checked), "%.200s, %zu bytes received as written", seen, s->size);
    out->run = run_transfer;
    out->split = split_transfer;
    snprintf(out->note, sizeof(out->note), "client writes, server reads; copies in memory included");
    return PREP_OK;
}

prep_status prepare_wolf_tls(const case_name *name, bench_case *out, prep_result *res)
{
    if (name->n >= 2 && strcmp(name->part[1], "transfer") == 0)
        return prepare_transfer(name, out, res);
    wtls_state *s = calloc(1, sizeof(*s));
    if (!s)
        return prep_error(res, "out of memory");
    prep_status status = wtls_parse(name, &s->cfg, res);
    if (status == PREP_OK)
        status = wtls_make_ctxs(&s->cfg, &s->server_ctx, &s->client_ctx, res);
    if (status == PREP_OK)
        status = check_first(s, 0, res, out->checked, sizeof(out->checked));
    if (status == PREP_OK && s->cfg.resume)
        status = check_first(s, 1, res, out->checked, sizeof(out->checked));   /* now resuming: check that it does */
    if (sp_take(status, out, s, release_state, UNIT_OPS, 0) != PREP_OK)
        return status;
    s->client_ns = s->server_ns = s->ops = s->batch_ns = 0;
    out->run = run_handshakes;
    out->split = split_times;
    snprintf(out->note, sizeof(out->note), "client verifies a %s chain against a CA file of ~150 certificates",
             SP_TLS_CERTS[s->cfg.cert_row].name);
    return PREP_OK;
}
