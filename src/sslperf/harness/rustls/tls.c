/* TLS through rustls-ffi, in memory: client and server in one process,
 * each connection's records carried by two byte pipes.
 *
 *   tls/handshake/PROTO/GROUP/CERT/CTX    CTX: shared (one client config) or
 *                                         new (a client config, root store and
 *                                         verifier made per connection)
 *   tls/resume/PROTO/HOW/GROUP/CERT       HOW: ticket (TLS 1.3) | session-id (TLS 1.2)
 *   tls/transfer/PROTO/SUITE/SIZE         bulk transfer after one handshake (transfer.c)
 *
 * The names, and what one operation is, are those of the OpenSSL backend
 * (openssl/tls.c): one complete handshake with the client verifying the
 * server's chain against a CA file of ~150 certificates, connection set-up
 * and free included, client and server CPU apart. The certificates are the
 * OpenSSL backend's (`harness pem-certs`, SSLPERF_TLS_PEM_DIR), so every
 * library verifies the same chain. Full handshakes leave nothing to resume
 * (the server stores no session and sends no ticket), as rustls' own
 * benchmarks do: rustls-ffi cannot turn a client's resumption off. rustls-ffi
 * cannot choose a key-exchange group either; a case whose group is not the
 * one the build negotiates is n/a and says which one it is. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "harness.h"
#include "rustls_cases.h"
#include "tls_names.h"

#define HANDSHAKE_ROUNDS 16

/* rustls' names for tls_names.h's groups, in their order. */
static const char *const GROUP_NAMES[] = {"X25519", "secp256r1", "secp384r1", "X25519MLKEM768"};
SP_TLS_SAME_ROWS(GROUP_NAMES, GROUPS);

prep_status rtls_fail(prep_result *res, unsigned int result, const char *what)
{
    char text[160];
    size_t n = 0;
    rustls_error(result, text, sizeof(text) - 1, &n);
    text[n] = '\0';
    return prep_error(res, "%s: %s", what, text);
}

static void from_case(const sp_tls_case *c, rtls_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->version = c->tls13 ? RUSTLS_TLS_VERSION_TLSV1_3 : RUSTLS_TLS_VERSION_TLSV1_2;
    cfg->proto = c->proto;
    cfg->group_row = c->group;
    cfg->cert_row = c->cert;
    cfg->suite_row = c->suite;
    cfg->new_config = c->new_ctx;
    cfg->resume = c->resume;
}

prep_status rtls_parse(const case_name *name, rtls_config *cfg, prep_result *res)
{
    sp_tls_case c;
    prep_status status = sp_tls_parse(name, &c, res);
    from_case(&c, cfg);
    if (status == PREP_OK && c.resume == SP_RESUME_TICKET && !c.tls13)
        return prep_na(res, "rustls-ffi offers no TLS 1.2 ticketer (stateless tickets); "
                            "its TLS 1.2 servers resume by session id");
    return status;
}

prep_status rtls_transfer_config(const char *proto, const char *suite, rtls_config *cfg, prep_result *res)
{
    sp_tls_case c;
    prep_status status = sp_tls_parse_transfer(proto, suite, &c, res);
    from_case(&c, cfg);
    return status;
}

static uint16_t suite_id(const rtls_config *cfg)
{
    sp_tls_case c = {.tls13 = cfg->version == RUSTLS_TLS_VERSION_TLSV1_3, .cert = cfg->cert_row,
                     .suite = cfg->suite_row};
    return sp_tls_suite_id(&c);
}

/* The build's provider with only the case's suite: what both ends may negotiate. */
static const struct rustls_crypto_provider *provider_for(const rtls_config *cfg, prep_result *res)
{
    struct rustls_crypto_provider_builder *builder = NULL;
    const struct rustls_crypto_provider *provider = NULL;
    const struct rustls_supported_ciphersuite *suite = NULL;
    unsigned int rc = rustls_crypto_provider_builder_new_from_default(&builder);
    if (rc != RUSTLS_RESULT_OK) {
        rtls_fail(res, rc, "no crypto provider");
        return NULL;
    }
    for (size_t i = 0; i < rustls_default_crypto_provider_ciphersuites_len(); i++) {
        const struct rustls_supported_ciphersuite *s = rustls_default_crypto_provider_ciphersuites_get(i);
        if (rustls_supported_ciphersuite_get_suite(s) == suite_id(cfg))
            suite = s;
    }
    if (!suite) {
        rustls_crypto_provider_builder_free(builder);
        prep_na(res, "this build's crypto provider has no cipher suite 0x%04x", suite_id(cfg));
        return NULL;
    }
    rc = rustls_crypto_provider_builder_set_cipher_suites(builder, &suite, 1);
    if (rc == RUSTLS_RESULT_OK)
        rc = rustls_crypto_provider_builder_build(builder, &provider);
    else
        rustls_crypto_provider_builder_free(builder);
    if (rc != RUSTLS_RESULT_OK) {
        rtls_fail(res, rc, "cannot build the crypto provider");
        return NULL;
    }
    return provider;
}

static char *read_file(const char *path, size_t *len)
{
    FILE *in = fopen(path, "rb");
    char *buf = NULL;
    long size;
    if (in && fseek(in, 0, SEEK_END) == 0 && (size = ftell(in)) >= 0 && fseek(in, 0, SEEK_SET) == 0
        && (buf = malloc((size_t)size + 1)) != NULL && fread(buf, 1, (size_t)size, in) == (size_t)size) {
        buf[size] = '\0';
        *len = (size_t)size;
    } else {
        free(buf);
        buf = NULL;
    }
    if (in)
        fclose(in);
    return buf;
}

/* The roots a client loads (sp_roots_file), or n/a when `sslperf tls` did not set the directories up. */
static const char *roots_file(prep_result *res)
{
    const char *roots = sp_roots_file();
    if (!roots)
        prep_na(res, "no certificate directories (SSLPERF_CERT_DIR and SSLPERF_TLS_PEM_DIR are set by `sslperf tls`)");
    return roots;
}

const struct rustls_client_config *rtls_client_config(const rtls_config *cfg, prep_result *res)
{
    const char *roots = roots_file(res);
    return roots ? rtls_client_config_trusting(cfg, roots, res) : NULL;
}

const char *rtls_roots_file(prep_result *res)
{
    return roots_file(res);
}

const struct rustls_client_config *rtls_client_config_trusting(const rtls_config *cfg, const char *roots,
                                                               prep_result *res)
{
    const struct rustls_crypto_provider *provider = provider_for(cfg, res);
    struct rustls_root_cert_store_builder *store_builder = rustls_root_cert_store_builder_new();
    const struct rustls_root_cert_store *store = NULL;
    struct rustls_web_pki_server_cert_verifier_builder *verifier_builder = NULL;
    struct rustls_server_cert_verifier *verifier = NULL;
    struct rustls_client_config_builder *builder = NULL;
    const struct rustls_client_config *config = NULL;
    uint16_t version = cfg->version;
    unsigned int rc = provider ? rustls_root_cert_store_builder_load_roots_from_file(store_builder, roots, false)
                               : RUSTLS_RESULT_OK;
    if (provider && rc == RUSTLS_RESULT_OK)
        rc = rustls_root_cert_store_builder_build(store_builder, &store);
    if (provider && rc == RUSTLS_RESULT_OK) {
        verifier_builder = rustls_web_pki_server_cert_verifier_builder_new(store);
        rc = rustls_web_pki_server_cert_verifier_builder_build(verifier_builder, &verifier);
    }
    if (provider && rc == RUSTLS_RESULT_OK)
        rc = rustls_client_config_builder_new_custom(provider, &version, 1, &builder);
    if (provider && rc == RUSTLS_RESULT_OK) {
        rustls_client_config_builder_set_server_verifier(builder, verifier);
        rc = rustls_client_config_builder_build(builder, &config);
        builder = NULL;   /* consumed by build */
    }
    if (provider && rc != RUSTLS_RESULT_OK)
        rtls_fail(res, rc, "cannot make the client config");
    rustls_client_config_builder_free(builder);
    rustls_server_cert_verifier_free(verifier);
    rustls_web_pki_server_cert_verifier_builder_free(verifier_builder);
    rustls_root_cert_store_free(store);
    rustls_root_cert_store_builder_free(store_builder);
    rustls_crypto_provider_free(provider);
    return config;
}

/* Full handshakes: a server that keeps no session (so there is nothing to resume). */
static uint32_t no_session(void *userdata, const struct rustls_slice_bytes *key, int remove_after, uint8_t *buf,
                           size_t count, size_t *out_n)
{
    (void)userdata, (void)key, (void)remove_after, (void)buf, (void)count, (void)out_n;
    return RUSTLS_RESULT_NOT_FOUND;
}

static uint32_t keep_nothing(void *userdata, const struct rustls_slice_bytes *key, const struct rustls_slice_bytes *val)
{
    (void)userdata, (void)key, (void)val;
    return RUSTLS_RESULT_NOT_FOUND;
}

prep_status rtls_make_configs(const rtls_config *cfg, const struct rustls_server_config **server,
                              const struct rustls_client_config **client, prep_result *res)
{
    char cert_path[600], key_path[600];
    size_t cert_len = 0, key_len = 0;
    *server = NULL;
    *client = NULL;
    if (!sp_pem_dir())
        return prep_na(res, "no certificate directory (SSLPERF_TLS_PEM_DIR is set by `sslperf tls`)");
    snprintf(cert_path, sizeof(cert_path), "%s/%s.pem", sp_pem_dir(), SP_TLS_CERTS[cfg->cert_row].name);
    snprintf(key_path, sizeof(key_path), "%s/%s.key", sp_pem_dir(), SP_TLS_CERTS[cfg->cert_row].name);
    char *cert = read_file(cert_path, &cert_len), *key = read_file(key_path, &key_len);
    const struct rustls_certified_key *certified = NULL;
    const struct rustls_crypto_provider *provider = NULL;
    struct rustls_server_config_builder *builder = NULL;
    uint16_t version = cfg->version;
    prep_status status = PREP_OK;
    unsigned int rc;
    if (!cert || !key)
        status = prep_error(res, "cannot read %s and its key", cert_path);
    else if ((rc = rustls_certified_key_build((const uint8_t *)cert, cert_len, (const uint8_t *)key, key_len,
                                              &certified)) != RUSTLS_RESULT_OK)
        status = rc == RUSTLS_RESULT_OK ? PREP_OK : prep_na(res, "rustls does not take the %s key", SP_TLS_CERTS[cfg->cert_row].name);
    if (status == PREP_OK && !(provider = provider_for(cfg, res)))
        status = res->status;
    if (status == PREP_OK && (rc = rustls_server_config_builder_new_custom(provider, &version, 1, &builder))
                                 != RUSTLS_RESULT_OK)
        status = rtls_fail(res, rc, "cannot make the server config");
    if (status == PREP_OK && (rc = rustls_server_config_builder_set_certified_keys(builder, &certified, 1))
                                 != RUSTLS_RESULT_OK)
        status = rtls_fail(res, rc, "the server does not take the certificate");
    if (status == PREP_OK && !cfg->resume) {
        rustls_server_config_builder_set_persistence(builder, no_session, keep_nothing);
        rustls_server_config_builder_set_send_tls13_tickets(builder, 0);
    }
    if (status == PREP_OK) {
        rc = rustls_server_config_builder_build(builder, server);
        builder = NULL;
        if (rc != RUSTLS_RESULT_OK)
            status = rtls_fail(res, rc, "cannot make the server config");
    }
    if (status == PREP_OK && !cfg->new_config && !(*client = rtls_client_config(cfg, res)))
        status = res->status;
    rustls_server_config_builder_free(builder);
    rustls_crypto_provider_free(provider);
    rustls_certified_key_free(certified);
    free(cert);
    free(key);
    if (status != PREP_OK) {
        rustls_server_config_free(*server);
        *server = NULL;
    }
    return status;
}

/* ---- the transport ------------------------------------------------------- */

rustls_io_result rtls_pipe_write(void *userdata, const uint8_t *buf, size_t n, size_t *out_n)
{
    rtls_pipe *pipe = userdata;
    if (pipe->len + n > pipe->cap) {
        size_t cap = pipe->cap ? pipe->cap : 16384;
        while (cap < pipe->len + n)
            cap *= 2;
        uint8_t *grown = realloc(pipe->data, cap);
        if (!grown)
            return 12;   /* ENOMEM */
        pipe->data = grown;
        pipe->cap = cap;
    }
    memcpy(pipe->data + pipe->len, buf, n);
    pipe->len += n;
    *out_n = n;
    return 0;
}

rustls_io_result rtls_pipe_read(void *userdata, uint8_t *buf, size_t n, size_t *out_n)
{
    rtls_reader *r = userdata;
    size_t left = r->pipe->len - r->off;
    *out_n = n < left ? n : left;
    memcpy(buf, r->pipe->data + r->off, *out_n);
    r->off += *out_n;
    return 0;
}

int rtls_flush(struct rustls_connection *conn, rtls_pipe *pipe, int *moved)
{
    while (rustls_connection_wants_write(conn)) {
        size_t n = 0;
        if (rustls_connection_write_tls(conn, rtls_pipe_write, pipe, &n) != 0)
            return 0;
        if (n == 0)
            break;
        *moved = 1;
    }
    return 1;
}

/* Everything in `pipe`, read and processed by `conn`. */
static unsigned int feed(struct rustls_connection *conn, rtls_pipe *pipe)
{
    rtls_reader reader = {pipe, 0};
    while (reader.off < pipe->len) {
        size_t n = 0;
        if (rustls_connection_read_tls(conn, rtls_pipe_read, &reader, &n) != 0 || n == 0)
            return RUSTLS_RESULT_IO;
        unsigned int rc = rustls_connection_process_new_packets(conn);
        if (rc != RUSTLS_RESULT_OK)
            return rc;
    }
    pipe->len = 0;
    return RUSTLS_RESULT_OK;
}

int rtls_connect(rtls_pair *pair, const struct rustls_client_config *client, const struct rustls_server_config *server,
                 prep_result *res)
{
    uint64_t t0 = rtls_now(pair);
    unsigned int rc = rustls_client_connection_new(client, "localhost", &pair->client);
    uint64_t t1 = rtls_now(pair);
    pair->client_ns += t1 - t0;
    if (rc == RUSTLS_RESULT_OK)
        rc = rustls_server_connection_new(server, &pair->server);
    pair->server_ns += rtls_now(pair) - t1;
    pair->to_server.len = pair->to_client.len = 0;
    if (rc != RUSTLS_RESULT_OK) {
        rtls_fail(res, rc, "cannot make a connection");
        return 0;
    }
    return 1;
}

unsigned int rtls_step(rtls_pair *pair, int *moved)
{
    unsigned int rc = RUSTLS_RESULT_OK;
    uint64_t t0 = rtls_now(pair);
    int ok = rtls_flush(pair->client, &pair->to_server, moved);
    uint64_t t1 = rtls_now(pair);
    if (ok && pair->to_server.len)
        rc = feed(pair->server, &pair->to_server);
    ok = ok && rc == RUSTLS_RESULT_OK && rtls_flush(pair->server, &pair->to_client, moved);
    uint64_t t2 = rtls_now(pair);
    if (ok && pair->to_client.len)
        rc = feed(pair->client, &pair->to_client);
    uint64_t t3 = rtls_now(pair);
    pair->client_ns += (t1 - t0) + (t3 - t2);
    pair->server_ns += t2 - t1;
    return !ok && rc == RUSTLS_RESULT_OK ? RUSTLS_RESULT_IO : rc;
}

int rtls_exchange(rtls_pair *pair, int rounds, prep_result *res)
{
    for (int r = 0; r < rounds; r++) {
        int moved = 0;
        unsigned int rc = rtls_step(pair, &moved);
        if (rc != RUSTLS_RESULT_OK) {
            if (res)
                rtls_fail(res, rc, "the handshake failed");
            return 0;
        }
        if (!moved)
            return !rustls_connection_is_handshaking(pair->client) && !rustls_connection_is_handshaking(pair->server);
    }
    if (res)
        prep_error(res, "the handshake did not finish in %d exchanges", rounds);
    return 0;
}

void rtls_close(rtls_pair *pair)
{
    uint64_t t0 = rtls_now(pair);
    rustls_connection_free(pair->client);
    uint64_t t1 = rtls_now(pair);
    rustls_connection_free(pair->server);
    pair->server_ns += rtls_now(pair) - t1;
    pair->client_ns += t1 - t0;
    pair->client = pair->server = NULL;
}

void rtls_pipes_free(rtls_pair *pair)
{
    free(pair->to_server.data);
    free(pair->to_client.data);
    memset(&pair->to_server, 0, sizeof(pair->to_server));
    memset(&pair->to_client, 0, sizeof(pair->to_client));
}

void rtls_check(const rtls_config *cfg, const rtls_pair *pair, int expect_resumed, char *problem, size_t problem_len,
                char *checked, size_t checked_len)
{
    const struct rustls_connection *c = pair->client;
    struct rustls_str group = rustls_connection_get_negotiated_key_exchange_group_name(c);
    struct rustls_str suite = rustls_connection_get_negotiated_ciphersuite_name(c);
    int resumed = rustls_connection_handshake_kind(c) == RUSTLS_HANDSHAKE_KIND_RESUMED;
    char group_name[64];
    snprintf(group_name, sizeof(group_name), "%.*s", (int)group.len, group.data);
    problem[0] = '\0';
    if (rustls_connection_get_protocol_version(c) != cfg->version)
        snprintf(problem, problem_len, "negotiated version 0x%04x, not %s", rustls_connection_get_protocol_version(c),
                 cfg->proto);
    else if (rustls_connection_get_negotiated_ciphersuite(c) != suite_id(cfg))
        snprintf(problem, problem_len, "negotiated cipher suite %.*s", (int)suite.len, suite.data);
    else if (expect_resumed && !resumed)
        snprintf(problem, problem_len, "the session was not resumed");
    else if (!expect_resumed && resumed)
        snprintf(problem, problem_len, "a full handshake resumed a session");
    else if (!(resumed && cfg->version == RUSTLS_TLS_VERSION_TLSV1_2)
             && strcmp(group_name, GROUP_NAMES[cfg->group_row]) != 0)
        snprintf(problem, problem_len, "group:%s", group_name);   /* n/a, not an error: see prepare_tls */
    else
        snprintf(checked, checked_len, "%s %.*s group %s%s", cfg->proto, (int)suite.len, suite.data,
                 resumed && cfg->version == RUSTLS_TLS_VERSION_TLSV1_2 ? "(none: resumed)" : group_name,
                 resumed ? " resumed" : "");
}

/* ---- handshakes -------------------------------------------------------------- */

#define SPLIT_EVERY 8      /* handshakes per one whose client and server sides are timed apart */

const char *rtls_group_name(const rtls_config *cfg)
{
    return GROUP_NAMES[cfg->group_row];
}

struct handshake_state {
    rtls_config cfg;
    const struct rustls_server_config *server;
    const struct rustls_client_config *client;    /* NULL: a new one per connection */
    rtls_pair pair;
    uint64_t ops, batch_ns;    /* handshakes and their batches' whole CPU time, since the last split */
};

static int handshake(struct handshake_state *s, prep_result *res)
{
    const struct rustls_client_config *client = s->client;
    if (!client) {
        uint64_t t0 = rtls_now(&s->pair);
        client = rtls_client_config(&s->cfg, res ? res : &(prep_result){0});
        s->pair.client_ns += rtls_now(&s->pair) - t0;
        if (!client)
            return 0;
    }
    int ok = rtls_connect(&s->pair, client, s->server, res ? res : &(prep_result){0})
             && rtls_exchange(&s->pair, HANDSHAKE_ROUNDS, res);
    if (ok && !s->client)
        rtls_close(&s->pair);     /* before its config goes */
    if (!s->client) {
        uint64_t t0 = rtls_now(&s->pair);
        rustls_client_config_free(client);
        s->pair.client_ns += rtls_now(&s->pair) - t0;
    }
    return ok;
}

static int run_handshakes(void *p, uint64_t iters)
{
    struct handshake_state *s = p;
    uint64_t start = sp_now_ns(SP_THREAD_CPU);
    for (uint64_t i = 0; i < iters; i++) {
        s->pair.timed = (s->ops + i) % SPLIT_EVERY == 0;
        int ok = handshake(s, NULL);
        if (s->pair.client)
            rtls_close(&s->pair);
        if (!ok)
            return 0;
    }
    s->pair.timed = 0;
    s->ops += iters;
    s->batch_ns += sp_now_ns(SP_THREAD_CPU) - start;
    return 1;
}

/* The batches' CPU time, divided between the sides as the handshakes timed side by side divide theirs. */
static void split_times(void *p, uint64_t *client, uint64_t *server)
{
    struct handshake_state *s = p;
    sp_sampled_split split = {s->pair.client_ns, s->pair.server_ns, s->ops, s->batch_ns};
    sp_split_sampled(&split, client, server);
    s->pair.client_ns = s->pair.server_ns = s->ops = s->batch_ns = 0;
}

/* Another thread's state on the same configs (rustls' configs are shared between threads as they are), with
 * connections, pipes and counters of its own. */
static void *share_handshakes(const void *p)
{
    struct handshake_state *copy = malloc(sizeof(*copy));
    if (copy) {
        *copy = *(const struct handshake_state *)p;
        memset(&copy->pair, 0, sizeof(copy->pair));
        copy->ops = copy->batch_ns = 0;
    }
    return copy;
}

static void release_shared(void *p)
{
    struct handshake_state *s = p;
    if (s->pair.client)
        rtls_close(&s->pair);
    rtls_pipes_free(&s->pair);
    free(s);
}

static void release_handshakes(void *p)
{
    struct handshake_state *s = p;
    if (s->pair.client)
        rtls_close(&s->pair);
    rtls_pipes_free(&s->pair);
    rustls_client_config_free(s->client);
    rustls_server_config_free(s->server);
    free(s);
}

/* One handshake kept and checked; n/a when the build negotiates another group than the case's. */
static prep_status check_first(struct handshake_state *s, int expect_resumed, prep_result *res, char *checked,
                               size_t checked_len)
{
    char problem[200];
    int ok = handshake(s, res);
    if (!ok) {
        if (s->pair.client)
            rtls_close(&s->pair);
        return res->status;
    }
    rtls_check(&s->cfg, &s->pair, expect_resumed, problem, sizeof(problem), checked, checked_len);
    rtls_close(&s->pair);
    if (strncmp(problem, "group:", 6) == 0)
        return prep_na(res, "rustls-ffi cannot be told which key-exchange group to use, and this build negotiates "
                            "%s (its crypto provider's first choice)%s", problem + 6,
                       strcmp(SP_TLS_GROUPS[s->cfg.group_row].name, "x25519mlkem768") == 0
                           ? "; a rustls+pq-first build (aws-lc-rs) negotiates X25519MLKEM768" : "");
    if (problem[0])
        return prep_error(res, "%s", problem);
    return PREP_OK;
}

prep_status prepare_tls(const case_name *name, bench_case *out, prep_result *res)
{
    if (name->n >= 2 && strcmp(name->part[1], "transfer") == 0)
        return prepare_rustls_transfer(name, out, res);
    struct handshake_state *s = calloc(1, sizeof(*s));
    if (!s)
        return prep_error(res, "out of memory");
    prep_status status = rtls_parse(name, &s->cfg, res);
    if (status == PREP_OK)
        status = rtls_make_configs(&s->cfg, &s->server, &s->client, res);
    if (status == PREP_OK && s->cfg.new_config) {
        /* Check what the handshake negotiates on a shared config of the same settings. */
        const struct rustls_client_config *probe = rtls_client_config(&s->cfg, res);
        status = probe ? PREP_OK : res->status;
        s->client = probe;
        if (status == PREP_OK)
            status = check_first(s, 0, res, out->checked, sizeof(out->checked));
        rustls_client_config_free(probe);
        s->client = NULL;
    } else if (status == PREP_OK) {
        status = check_first(s, 0, res, out->checked, sizeof(out->checked));
        if (status == PREP_OK && s->cfg.resume)
            status = check_first(s, 1, res, out->checked, sizeof(out->checked));   /* now resuming: check that it does */
    }
    if (sp_take(status, out, s, release_handshakes, UNIT_OPS, 0) != PREP_OK)
        return status;
    s->pair.client_ns = s->pair.server_ns = s->ops = s->batch_ns = 0;
    out->run = run_handshakes;
    out->split = split_times;
    out->share = share_handshakes;
    out->release_share = release_shared;
    snprintf(out->note, sizeof(out->note), "client verifies a %s chain against a CA file of ~150 certificates%s",
             SP_TLS_CERTS[s->cfg.cert_row].name, s->cfg.resume ? "" : "; the server keeps no session and sends no ticket");
    return PREP_OK;
}
