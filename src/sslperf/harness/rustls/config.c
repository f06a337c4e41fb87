/* What a rustls TLS case asks of rustls-ffi, shared by tls.c, transfer.c, memory.c and loopback.c: the case's
 * configuration, the crypto provider with its one suite (all of them for an as-deployed case), the client and
 * server configs (the certificates are the OpenSSL backend's, SSLPERF_TLS_PEM_DIR), and the check of what a
 * connection negotiated. rustls-ffi 0.15 offers no way to choose key-exchange groups or signature schemes: every
 * connection offers its provider's defaults, so a case names a group only to check that it is the one negotiated. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "harness.h"
#include "rustls_cases.h"
#include "tls_names.h"

/* What the crypto providers rustls-ffi builds with (its cargo features) can do beyond TLS 1.2/1.3's classics. */
static const struct {
    const char *name;          /* as rustls_version() ends: rustls-ffi/0.15.7/rustls/0.23.46/PROVIDER */
    int mlkem, mldsa;          /* has ML-KEM key exchange; signs and verifies with ML-DSA */
} PROVIDERS[] = {
    {"ring", 0, 0},
    {"aws-lc-rs", 1, 1},
};

/* What tls_names.h's groups, in their order, need of a build, and why the aws-lc-rs provider (which has all of them)
 * may still negotiate another: rustls-ffi offers only the provider's DEFAULT_KX_GROUPS, in their order. */
static const struct {
    int mlkem;                 /* ring has no ML-KEM */
    const char *why;           /* NULL: a classic group, negotiated when it is the provider's first (or `default`) */
} GROUPS[] = {
    {0, NULL},
    {0, NULL},
    {0, NULL},
    {0, NULL},
    {1, "aws-lc-rs offers it after X25519 (a rustls+pq-first build negotiates it)"},
    {1, "aws-lc-rs has it, but not among the default groups rustls-ffi offers"},
    {1, "aws-lc-rs has it, but not among the default groups rustls-ffi offers (ML-KEM only in hybrid)"},
};
SP_TLS_SAME_ROWS(GROUPS, GROUPS);

/* The row of PROVIDERS this build has, -1 if another. */
static int provider_row(void)
{
    const char *name = strrchr(sp_library_version(), '/');
    for (size_t p = 0; name && p < sizeof(PROVIDERS) / sizeof(PROVIDERS[0]); p++)
        if (strcmp(name + 1, PROVIDERS[p].name) == 0)
            return (int)p;
    return -1;
}

void rtls_group_na(const rtls_config *cfg, const char *negotiated, prep_result *res)
{
    int p = provider_row(), g = cfg->tls.group;
    char why[200] = "";
    if (GROUPS[g].mlkem && p >= 0 && !PROVIDERS[p].mlkem)
        snprintf(why, sizeof(why), "; the %s provider has no ML-KEM", PROVIDERS[p].name);
    else if (GROUPS[g].why)
        snprintf(why, sizeof(why), "; %s", GROUPS[g].why);
    prep_na(res, "rustls-ffi cannot be told which key-exchange group to use, and this build negotiates %s (its "
                 "crypto provider's first choice)%s", negotiated, why);
}

/* rustls' words for `result`. */
static const char *result_text(unsigned int result, char *text, size_t len)
{
    size_t n = 0;
    rustls_error(result, text, len - 1, &n);
    text[n] = '\0';
    return text;
}

prep_status rtls_fail(prep_result *res, unsigned int result, const char *what)
{
    char text[160];
    return prep_error(res, "%s: %s", what, result_text(result, text, sizeof(text)));
}

/* The case's parts (parsed into cfg->tls by `status`'s call), and its protocol as rustls names it. */
static prep_status with_version(prep_status status, rtls_config *cfg)
{
    cfg->version = cfg->tls.tls13 ? RUSTLS_TLS_VERSION_TLSV1_3 : RUSTLS_TLS_VERSION_TLSV1_2;
    return status;
}

/* DTLS: n/a whatever else the case names. */
static prep_status no_dtls(prep_status status, const rtls_config *cfg, prep_result *res)
{
    if (status != PREP_UNKNOWN && cfg->tls.dtls)
        return prep_na(res, "rustls has no DTLS (it implements TLS over reliable streams only)");
    return status;
}

prep_status rtls_parse(const case_name *name, rtls_config *cfg, prep_result *res)
{
    memset(cfg, 0, sizeof(*cfg));
    prep_status status = no_dtls(with_version(sp_tls_parse(name, &cfg->tls, res), cfg), cfg, res);
    if (status == PREP_OK && cfg->tls.resume == SP_RESUME_TICKET && !cfg->tls.tls13)
        return prep_na(res, "rustls-ffi offers no TLS 1.2 ticketer (stateless tickets); "
                            "its TLS 1.2 servers resume by session id");
    return status;
}

prep_status rtls_transfer_config(const char *proto, const char *suite, rtls_config *cfg, prep_result *res)
{
    memset(cfg, 0, sizeof(*cfg));
    return no_dtls(with_version(sp_tls_parse_transfer(proto, suite, &cfg->tls, res), cfg), cfg, res);
}

/* As deployed: a `default` suite, or a `default` group (the library's out-of-the-box configuration: no suites set
 * either) leaves the provider's suites as they are. */
static int any_suite(const rtls_config *cfg)
{
    return cfg->tls.suite == SP_TLS_DEFAULT || cfg->tls.group == SP_TLS_DEFAULT;
}

/* The suite the case asks for, 0 for any. */
static uint16_t suite_id(const rtls_config *cfg)
{
    return any_suite(cfg) ? 0 : sp_tls_suite_id(&cfg->tls);
}

/* The build's provider with only the case's suite (all of its suites when any): what both ends may negotiate. */
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
    for (size_t i = 0; suite_id(cfg) && i < rustls_default_crypto_provider_ciphersuites_len(); i++) {
        const struct rustls_supported_ciphersuite *s = rustls_default_crypto_provider_ciphersuites_get(i);
        if (rustls_supported_ciphersuite_get_suite(s) == suite_id(cfg))
            suite = s;
    }
    if (!suite && suite_id(cfg)) {
        rustls_crypto_provider_builder_free(builder);
        prep_na(res, "this build's crypto provider has no cipher suite 0x%04x", suite_id(cfg));
        return NULL;
    }
    rc = suite ? rustls_crypto_provider_builder_set_cipher_suites(builder, &suite, 1) : RUSTLS_RESULT_OK;
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

/* n/a before anything is read when this build cannot use the case's certificate, or it was not made. */
static prep_status certificate_usable(const rtls_config *cfg, const char *cert_path, prep_result *res)
{
    const sp_tls_cert *cert = &SP_TLS_CERTS[cfg->tls.cert];
    int p = provider_row();
    if (cert->mldsa && p >= 0 && !PROVIDERS[p].mldsa)
        return prep_na(res, "rustls' %s provider cannot sign or verify with ML-DSA (rustls does ML-DSA with its "
                            "aws-lc-rs provider only)", PROVIDERS[p].name);
    if (cert->mldsa && access(cert_path, R_OK) != 0)
        return prep_na(res, "no %s certificate in SSLPERF_TLS_PEM_DIR: the library that made the certificates has "
                            "no ML-DSA (OpenSSL 3.5 or later has)", cert->name);
    return PREP_OK;
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
    snprintf(cert_path, sizeof(cert_path), "%s/%s.pem", sp_pem_dir(), SP_TLS_CERTS[cfg->tls.cert].name);
    snprintf(key_path, sizeof(key_path), "%s/%s.key", sp_pem_dir(), SP_TLS_CERTS[cfg->tls.cert].name);
    if (certificate_usable(cfg, cert_path, res) != PREP_OK)
        return res->status;
    char *cert = read_file(cert_path, &cert_len), *key = read_file(key_path, &key_len);
    const struct rustls_certified_key *certified = NULL;
    const struct rustls_crypto_provider *provider = NULL;
    struct rustls_server_config_builder *builder = NULL;
    uint16_t version = cfg->version;
    prep_status status = PREP_OK;
    unsigned int rc;
    char text[160];
    if (!cert || !key)
        status = prep_error(res, "cannot read %s and its key", cert_path);
    else if ((rc = rustls_certified_key_build((const uint8_t *)cert, cert_len, (const uint8_t *)key, key_len,
                                              &certified)) != RUSTLS_RESULT_OK)
        status = prep_na(res, "rustls does not take the %s key: %s", SP_TLS_CERTS[cfg->tls.cert].name,
                         result_text(rc, text, sizeof(text)));
    if (status == PREP_OK && !(provider = provider_for(cfg, res)))
        status = res->status;
    if (status == PREP_OK && (rc = rustls_server_config_builder_new_custom(provider, &version, 1, &builder))
                                 != RUSTLS_RESULT_OK)
        status = rtls_fail(res, rc, "cannot make the server config");
    if (status == PREP_OK && (rc = rustls_server_config_builder_set_certified_keys(builder, &certified, 1))
                                 != RUSTLS_RESULT_OK)
        status = rtls_fail(res, rc, "the server does not take the certificate");
    if (status == PREP_OK && !cfg->tls.resume) {
        rustls_server_config_builder_set_persistence(builder, no_session, keep_nothing);
        rustls_server_config_builder_set_send_tls13_tickets(builder, 0);
    }
    if (status == PREP_OK) {
        rc = rustls_server_config_builder_build(builder, server);
        builder = NULL;
        if (rc != RUSTLS_RESULT_OK)
            status = rtls_fail(res, rc, "cannot make the server config");
    }
    if (status == PREP_OK && !cfg->tls.new_ctx && !(*client = rtls_client_config(cfg, res)))
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

void rtls_check(const rtls_config *cfg, const rtls_pair *pair, int expect_resumed, char *problem, size_t problem_len,
                char *checked, size_t checked_len)
{
    const struct rustls_connection *c = pair->client;
    struct rustls_str group = rustls_connection_get_negotiated_key_exchange_group_name(c);
    struct rustls_str suite = rustls_connection_get_negotiated_ciphersuite_name(c);
    int resumed = rustls_connection_handshake_kind(c) == RUSTLS_HANDSHAKE_KIND_RESUMED;
    int no_kx = resumed && cfg->version == RUSTLS_TLS_VERSION_TLSV1_2;     /* resumed by session id: no key exchange */
    uint16_t asked = SP_TLS_GROUPS[cfg->tls.group].codepoint;              /* 0: `default`, any */
    problem[0] = '\0';
    if (rustls_connection_get_protocol_version(c) != cfg->version)
        snprintf(problem, problem_len, "negotiated version 0x%04x, not %s", rustls_connection_get_protocol_version(c),
                 cfg->tls.proto);
    else if (suite_id(cfg) && rustls_connection_get_negotiated_ciphersuite(c) != suite_id(cfg))
        snprintf(problem, problem_len, "negotiated cipher suite %.*s", (int)suite.len, suite.data);
    else if (expect_resumed && !resumed)
        snprintf(problem, problem_len, "the session was not resumed");
    else if (!expect_resumed && resumed)
        snprintf(problem, problem_len, "a full handshake resumed a session");
    else if (!no_kx && asked && rustls_connection_get_negotiated_key_exchange_group(c) != asked)
        snprintf(problem, problem_len, "group:%.*s", (int)group.len, group.data);   /* n/a, not an error: see tls.c */
    else if (no_kx)
        snprintf(checked, checked_len, "%s %.*s group (none: resumed) resumed", cfg->tls.proto, (int)suite.len,
                 suite.data);
    else
        snprintf(checked, checked_len, "%s %.*s group %.*s%s", cfg->tls.proto, (int)suite.len, suite.data,
                 (int)group.len, group.data, resumed ? " resumed" : "");
}
