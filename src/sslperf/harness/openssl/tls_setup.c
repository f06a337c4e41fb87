/* TLS cases: parsing the name, making the CA and the server certificate in
 * memory, the CA bundle file a curl-like client loads, the two SSL_CTXs,
 * and checking what a handshake negotiated. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compat.h"
#include "harness.h"
#include "families.h"
#include "tls.h"
#include "tls_names.h"

#include <openssl/ec.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#if SP_OSSL_QUIC
#include <openssl/quic.h>
#endif

/* OpenSSL's names for the rows of tls_names.h's tables, in their order. */
static const struct {
    const char *list_name;    /* for SSL_CTX_set1_groups_list (NULL: the library's default list) */
    int nid;                  /* what OpenSSL 3 reports for it, when it has a NID */
} GROUPS[] = {
    {NULL, NID_undef}, {"X25519", NID_X25519}, {"P-256", NID_X9_62_prime256v1}, {"P-384", NID_secp384r1},
    {"X25519MLKEM768", NID_undef}, {"SecP256r1MLKEM768", NID_undef}, {"MLKEM768", NID_undef},
};
SP_TLS_SAME_ROWS(GROUPS, GROUPS);

static const struct {
    int type, param;        /* EVP_PKEY_RSA bits / EVP_PKEY_EC curve / EVP_PKEY_ED25519 / EVP_PKEY_NONE: by name */
    const char *name;       /* OpenSSL 3.5+'s name of a key it makes by name (ML-DSA) */
} CERTS[] = {
    {EVP_PKEY_RSA, 2048, NULL}, {EVP_PKEY_RSA, 3072, NULL}, {EVP_PKEY_EC, NID_X9_62_prime256v1, NULL},
    {EVP_PKEY_EC, NID_secp384r1, NULL}, {EVP_PKEY_ED25519, 0, NULL}, {EVP_PKEY_NONE, 0, "ML-DSA-44"},
    {EVP_PKEY_NONE, 0, "ML-DSA-65"}, {EVP_PKEY_NONE, 0, "ML-DSA-87"},
};
SP_TLS_SAME_ROWS(CERTS, CERTS);

/* The TLS 1.3 suite, and the TLS 1.2 ones for an ECDSA and an RSA certificate. */
static const struct {
    const char *tls13, *tls12_ecdsa, *tls12_rsa;     /* NULL: the library's default lists */
} SUITES[] = {
    {NULL, NULL, NULL},
    {"TLS_AES_128_GCM_SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256"},
    {"TLS_AES_256_GCM_SHA384", "ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-RSA-AES256-GCM-SHA384"},
    {"TLS_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305"},
};
SP_TLS_SAME_ROWS(SUITES, SUITES);

static void from_case(const sp_tls_case *c, tls_config *cfg)
{
#ifdef DTLS1_3_VERSION
    cfg->proto = c->dtls ? (c->tls13 ? DTLS1_3_VERSION : DTLS1_2_VERSION) : c->tls13 ? TLS1_3_VERSION : TLS1_2_VERSION;
#else
    cfg->proto = c->dtls ? (c->tls13 ? 0 : DTLS1_2_VERSION) : c->tls13 ? TLS1_3_VERSION : TLS1_2_VERSION;
#endif
    cfg->group_row = c->group;
    cfg->cert_row = c->cert;
    cfg->suite_row = c->suite;
    cfg->group = SP_TLS_GROUPS[c->group].name;
    cfg->cert = SP_TLS_CERTS[c->cert].name;
    cfg->new_ctx = c->new_ctx;
    cfg->resume = c->resume;
    cfg->dtls = c->dtls;
}

prep_status tls_parse(const case_name *name, tls_config *cfg, prep_result *res)
{
    sp_tls_case c;
    prep_status status = sp_tls_parse(name, &c, res);
    if (status == PREP_OK)
        from_case(&c, cfg);
    if (status == PREP_OK && cfg->proto == 0)        /* OpenSSL up to 4.0 has no DTLS1_3_VERSION */
        return prep_na(res, "this library has no DTLS 1.3 (its headers define no DTLS1_3_VERSION)");
    return status;
}

prep_status tls_transfer_config(const char *proto, const char *suite, tls_config *cfg, prep_result *res)
{
    sp_tls_case c;
    prep_status status = sp_tls_parse_transfer(proto, suite, &c, res);
    if (status == PREP_OK)
        from_case(&c, cfg);
    return status;
}

static EVP_PKEY *make_key(int c)
{
    if (CERTS[c].name) {
#if SP_OSSL_PQC
        return EVP_PKEY_Q_keygen(NULL, NULL, CERTS[c].name);
#else
        return NULL;     /* answered n/a: "cannot make ml-dsa-65 keys" */
#endif
    }
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_id(CERTS[c].type, NULL);
    EVP_PKEY *key = NULL;
    int ok = ctx && EVP_PKEY_keygen_init(ctx) > 0
             && (CERTS[c].type != EVP_PKEY_RSA || EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, CERTS[c].param) > 0)
             && (CERTS[c].type != EVP_PKEY_EC || EVP_PKEY_CTX_set_ec_paramgen_curve_nid(ctx, CERTS[c].param) > 0)
             && EVP_PKEY_keygen(ctx, &key) > 0;
    EVP_PKEY_CTX_free(ctx);
    return ok ? key : NULL;
}

/* A leaf's key: RSA ones made once per row and thread (seconds at 4096 bits, setup that every case with that
 * certificate would otherwise repeat), the others anew. */
static EVP_PKEY *leaf_key(int c)
{
    static _Thread_local EVP_PKEY *made[SP_TLS_N_CERTS];
    if (CERTS[c].type != EVP_PKEY_RSA)
        return make_key(c);
    if (!made[c])
        made[c] = make_key(c);
    return made[c] && EVP_PKEY_up_ref(made[c]) ? made[c] : NULL;
}

/* A certificate for `key` named `cn`, signed by `issuer_key` (self-signed when
 * `issuer` is NULL). */
static X509 *certificate(EVP_PKEY *key, const char *cn, X509 *issuer, EVP_PKEY *issuer_key, int ca)
{
    X509 *cert = X509_new();
    X509_NAME *name = X509_NAME_new();
    X509_EXTENSION *ext = NULL;
    int ok = cert && name && X509_set_version(cert, 2) && ASN1_INTEGER_set(X509_get_serialNumber(cert), ca ? 1 : 2)
             && X509_gmtime_adj(X509_getm_notBefore(cert), -3600)
             && X509_gmtime_adj(X509_getm_notAfter(cert), 3600L * 24 * 30)
             && X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0)
             && X509_set_subject_name(cert, name)
             && X509_set_issuer_name(cert, issuer ? X509_get_subject_name(issuer) : name)
             && X509_set_pubkey(cert, key);
    if (ok) {
        ext = ca ? X509V3_EXT_nconf_nid(NULL, NULL, NID_basic_constraints, "critical,CA:TRUE")
                 : X509V3_EXT_nconf_nid(NULL, NULL, NID_subject_alt_name, "DNS:localhost");
        ok = ext && X509_add_ext(cert, ext, -1);
    }
    ok = ok && X509_sign(cert, issuer_key, EVP_sha256()) > 0;
    X509_EXTENSION_free(ext);
    X509_NAME_free(name);
    if (!ok) {
        X509_free(cert);
        return NULL;
    }
    return cert;
}

/* The CA bundle a curl-like client loads: the ~150 certificates that
 * `sslperf` made (SSLPERF_CERT_DIR/ca-bundle.pem) plus this run's CA. */
static int write_ca_file(X509 *ca, char *path, size_t len)
{
    const char *dir = getenv("SSLPERF_CERT_DIR");
    char filler[700];
    if (!dir || !*dir)
        return 0;
    int used = snprintf(path, len, "%s/tls-ca-", dir);
    if (used < 0 || (size_t)used + 7 > len)
        return 0;
    memset(path + used, 'X', 6);              /* mkstemp's template: six letters it replaces */
    path[used + 6] = '\0';
    int fd = mkstemp(path);
    FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!out)
        return 0;
    snprintf(filler, sizeof(filler), "%s/ca-bundle.pem", dir);
    FILE *in = fopen(filler, "r");
    if (in) {
        char buf[8192];
        size_t n;
        while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
            fwrite(buf, 1, n, out);
        fclose(in);
    }
    int ok = PEM_write_X509(out, ca);
    return fclose(out) == 0 && ok;
}

static int configure(SSL_CTX *ctx, const tls_config *cfg, int server)
{
    const char *list = GROUPS[cfg->group_row].list_name;   /* NULL: `default`, the library's own list */
    int rsa = SP_TLS_CERTS[cfg->cert_row].rsa, curve_row = SP_TLS_CERTS[cfg->cert_row].curve_group;
    char both[64];
    /* TLS 1.2 uses the group list for the ECDSA certificate's curve too. */
    const char *cert_curve = curve_row >= 0 ? GROUPS[curve_row].list_name : NULL;
    int tls12 = cfg->proto == TLS1_2_VERSION || cfg->proto == DTLS1_2_VERSION;
    if (list && tls12 && cert_curve && strcmp(cert_curve, list) != 0) {
        snprintf(both, sizeof(both), "%s:%s", list, cert_curve);
        list = both;
    }
    int ok = SSL_CTX_set_min_proto_version(ctx, cfg->proto) && SSL_CTX_set_max_proto_version(ctx, cfg->proto)
             && (!list || SSL_CTX_set1_groups_list(ctx, list));
    const char *suites12 = rsa ? SUITES[cfg->suite_row].tls12_rsa : SUITES[cfg->suite_row].tls12_ecdsa;
    if (ok && tls12 && suites12)
        ok = SSL_CTX_set_cipher_list(ctx, suites12);
#if !SP_BORINGSSL
    if (ok && cfg->proto == TLS1_3_VERSION && SUITES[cfg->suite_row].tls13)
        ok = SSL_CTX_set_ciphersuites(ctx, SUITES[cfg->suite_row].tls13);
#endif
    if (ok && server && cfg->resume == 2)
        SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
    if (cfg->dtls)             /* no socket to ask: every connection gets DTLS_MTU (tls_bio_pair's caller sets it) */
        SSL_CTX_set_options(ctx, SSL_OP_NO_QUERY_MTU);
    return ok;
}

static const SSL_METHOD *method(const tls_config *cfg, int server)
{
#if SP_OSSL_QUIC
    if (cfg->quic)
        return server ? OSSL_QUIC_server_method() : OSSL_QUIC_client_method();
#endif
    if (cfg->dtls)             /* no cookie exchange (SSL_OP_COOKIE_EXCHANGE): in memory nobody spoofs an address */
        return server ? DTLS_server_method() : DTLS_client_method();
    return cfg->quic ? NULL : server ? TLS_server_method() : TLS_client_method();
}

SSL_CTX *tls_client_ctx(const tls_config *cfg, const char *ca_file)
{
    const SSL_METHOD *client = method(cfg, 0);
    SSL_CTX *ctx = client ? SSL_CTX_new(client) : NULL;
    if (ctx && configure(ctx, cfg, 0) && SSL_CTX_load_verify_locations(ctx, ca_file, NULL)) {
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
        return ctx;
    }
    SSL_CTX_free(ctx);
    return NULL;
}

prep_status tls_make_ctxs(tls_config *cfg, SSL_CTX **server, SSL_CTX **client, char *ca_file, size_t ca_file_len,
                          prep_result *res)
{
    EVP_PKEY *ca_key = make_key(sp_find("ecdsa-p256", SP_ROWS(SP_TLS_CERTS))), *key = leaf_key(cfg->cert_row);
    X509 *ca = ca_key ? certificate(ca_key, "sslperf TLS test CA", NULL, ca_key, 1) : NULL;
    X509 *leaf = ca && key ? certificate(key, "localhost", ca, ca_key, 0) : NULL;
    prep_status status = PREP_OK;

    if (!key)
        status = prep_na(res, "%s cannot make %s keys", sp_flavor(), cfg->cert);
    else if (!leaf)
        status = prep_error(res, "cannot make the test certificates");
    else if (!write_ca_file(ca, ca_file, ca_file_len))
        status = prep_na(res, "no certificate directory (SSLPERF_CERT_DIR is set by `sslperf tls`)");
    if (status == PREP_OK) {
        *server = method(cfg, 1) ? SSL_CTX_new(method(cfg, 1)) : NULL;
        if (!*server || !configure(*server, cfg, 1) || !SSL_CTX_use_certificate(*server, leaf)
            || !SSL_CTX_use_PrivateKey(*server, key))
            status = prep_na(res, "the server cannot be set up for %s with %s and %s", cfg->dtls ? "DTLS 1.2"
                             : cfg->proto == TLS1_3_VERSION ? "TLS 1.3" : "TLS 1.2", cfg->group, cfg->cert);
    }
    if (status == PREP_OK && !(*client = tls_client_ctx(cfg, ca_file)))
        status = prep_na(res, "the client cannot be set up for group %s", cfg->group);
    snprintf(cfg->note, sizeof(cfg->note), "client verifies a %s chain against a CA file of %s", cfg->cert,
             getenv("SSLPERF_CERT_DIR") ? "~150 certificates" : "one certificate");
    X509_free(leaf);
    X509_free(ca);
    EVP_PKEY_free(key);
    EVP_PKEY_free(ca_key);
    return status;
}

static int write_pem(const char *dir, const char *name, X509 *cert, EVP_PKEY *key)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *out = fopen(path, "w");
    if (!out)
        return 0;
    int ok = cert ? PEM_write_X509(out, cert) : PEM_write_PrivateKey(out, key, NULL, NULL, 0, NULL, NULL);
    return fclose(out) == 0 && ok;
}

int pem_certs(const char *dir)
{
    /* The certificates this backend's own cases make in memory (an ECDSA P-256 CA, a leaf per row for
     * "localhost"), so every backend verifies the same chain. Keys: readable by their owner only. */
    umask(077);
    EVP_PKEY *ca_key = make_key(sp_find("ecdsa-p256", SP_ROWS(SP_TLS_CERTS)));
    X509 *ca = ca_key ? certificate(ca_key, "sslperf TLS test CA", NULL, ca_key, 1) : NULL;
    int ok = ca && write_pem(dir, "ca.pem", ca, NULL);
    for (size_t c = 0; ok && c < SP_TLS_N_CERTS; c++) {
        char file[64];
        EVP_PKEY *key = make_key((int)c);
        if (!key && SP_TLS_CERTS[c].mldsa)
            continue;    /* a library without ML-DSA (before 3.5): no file, and those cases say n/a */
        X509 *leaf = key ? certificate(key, "localhost", ca, ca_key, 0) : NULL;
        snprintf(file, sizeof(file), "%s.pem", SP_TLS_CERTS[c].name);
        ok = leaf && write_pem(dir, file, leaf, NULL);
        snprintf(file, sizeof(file), "%s.key", SP_TLS_CERTS[c].name);
        ok = ok && write_pem(dir, file, NULL, key);
        X509_free(leaf);
        EVP_PKEY_free(key);
    }
    X509_free(ca);
    EVP_PKEY_free(ca_key);
    if (!ok)
        ERR_print_errors_fp(stderr);
    printf("{\"type\":\"%s\",\"dir\":", ok ? "certs" : "error");
    json_string(dir);
    printf("}\n");
    return ok ? 0 : 1;
}

int tls_handshake_step(SSL *ssl, int *done)
{
    int rc = SSL_do_handshake(ssl);
    if (rc == 1)
        return *done = 1;
    int err = SSL_get_error(ssl, rc);
    return err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE;
}

int tls_cipher_ok(const tls_config *cfg, const SSL *client)
{
    const SSL_CIPHER *cipher = SSL_get_current_cipher(client);
    sp_tls_case c = {.tls13 = cfg->proto == TLS1_3_VERSION, .cert = cfg->cert_row, .suite = cfg->suite_row};
    uint16_t asked = sp_tls_suite_id(&c);      /* 0: `default`, whatever the two sides agree on */
    return cipher && (asked == 0 || SSL_CIPHER_get_protocol_id(cipher) == asked);
}

static int32_t group_codepoint(const SSL *client);

int tls_group_ok(const tls_config *cfg, const SSL *client)
{
    if (cfg->group_row == SP_TLS_DEFAULT)
        return 1;         /* whatever the two sides' defaults agree on: recorded, not checked */
    const char *claimed = getenv("SSLPERF_TLS_EXPECT_GROUP");   /* lets a test see that the check catches a mismatch */
    if (claimed)
        return group_codepoint(client) == (int32_t)strtol(claimed, NULL, 0);
#if SP_BSSL
    return SSL_get_group_id(client) == SP_TLS_GROUPS[cfg->group_row].codepoint;
#elif SP_OSSL3
    /* A NID for the groups OpenSSL knows by one, else the codepoint marked unknown. */
    int nid = SSL_get_negotiated_group((SSL *)client);
    if (nid & TLSEXT_nid_unknown)
        return (nid & 0xffff) == SP_TLS_GROUPS[cfg->group_row].codepoint;
    return nid != NID_undef && nid == GROUPS[cfg->group_row].nid;
#else
    /* 1.1.1 cannot say which group TLS 1.3 used; both sides offer only the one asked for. */
    (void)cfg, (void)client;
    return 1;
#endif
}

void tls_group_name(const SSL *client, char *out, size_t len)
{
#if SP_BSSL
    snprintf(out, len, "0x%04x", (unsigned)SSL_get_group_id(client));
#elif SP_OSSL3
    int nid = SSL_get_negotiated_group((SSL *)client);
    const char *name = SSL_group_to_name((SSL *)client, nid);
    if (name)
        snprintf(out, len, "%s", name);
    else
        snprintf(out, len, "0x%04x", (unsigned)(nid & 0xffff));
#else
    (void)client;
    snprintf(out, len, "(not reported by this version)");
#endif
}

int tls_bio_pair(const tls_config *cfg, BIO **client, BIO **server)
{
    return cfg->dtls ? dgram_pair(client, server) : BIO_new_bio_pair(client, 0, server, 0);
}

/* The message callback that hands the client's handshake to core/wire.c (`arg`: the sp_negotiated). */
static void on_message(int sent, int version, int content_type, const void *buf, size_t len, SSL *ssl, void *arg)
{
    (void)version;
    int dtls = SSL_is_dtls(ssl);
    if (content_type == SSL3_RT_HEADER)
        sp_wire_record(arg, dtls, sent, buf, len);
    else if (content_type == SSL3_RT_HANDSHAKE && !sent)
        sp_wire_message(arg, dtls, buf, len);
}

void tls_watch(SSL *client, sp_negotiated *n)
{
    sp_wire_start(n, SSL_is_dtls(client));
    SSL_set_msg_callback(client, on_message);
    SSL_set_msg_callback_arg(client, n);
}

/* The codepoint of the group the library says it used (the message callback's reading comes first). */
static int32_t group_codepoint(const SSL *client)
{
#if SP_BSSL
    return SSL_get_group_id(client);
#elif SP_OSSL3
    int nid = SSL_get_negotiated_group((SSL *)client);
    if (nid & TLSEXT_nid_unknown)
        return nid & 0xffff;
    for (size_t g = 0; g < SP_TLS_N_GROUPS; g++)
        if (GROUPS[g].nid != NID_undef && GROUPS[g].nid == nid)
            return SP_TLS_GROUPS[g].codepoint;
    return SP_UNKNOWN;
#else
    (void)client;
    return SP_UNKNOWN;
#endif
}

void tls_watched(SSL *client, sp_negotiated *n)
{
    const SSL_CIPHER *cipher = SSL_get_current_cipher(client);
    SSL_set_msg_callback(client, NULL);
    sp_wire_fallback(n, SSL_version(client), group_codepoint(client),
                     cipher ? SSL_CIPHER_get_protocol_id(cipher) : SP_UNKNOWN, SP_UNKNOWN);
}

void list_tls(void)
{
    /* In memory (tls.c, transfer.c), over loopback (loopback.c, transfer_tcp.c, QUIC: quic.c) and memory
     * (memory.c, quic_memory.c). */
    static const id_template IDS[] = {
        {"tls/handshake/{protocol}/{group}/{cert}/{context}", NULL, "{group} {cert}", "handshake-{context}"},
        {"tls/resume/{protocol}/{resumption}/{group}/{cert}", NULL, "{group} {cert}", "resume-{resumption}"},
        {"tls/transfer/{protocol}/{suite}/{size}", NULL, "{suite}", "transfer-{protocol}"},
        {"tls/loopback/{protocol}/{group}/{cert}/{client}", "tls-loopback", "{group} {cert}", "get-{client}"},
        /* QUIC (quic.c, quic_transfer.c); PATH: an emulated path (measure/netpath.py), loopback as it is without */
        {"tls/quic/{group}/{cert}[/{path}]", "tls-loopback", "{group} {cert}", "quic"},
        {"tls/quic-transfer/{suite}/{size}[/{path}]", "tls-loopback", "{suite}", "quic-transfer"},
        {"tls/transfer-tcp/{protocol}/{suite}/{size}/{kernel}", "tls-loopback", "{suite}", "transfer-tcp-{kernel}"},
        {"tls/memory/{protocol}/{group}/{cert}", "tls-memory", "{group} {cert}", "memory-{protocol}"},
        {"tls/quic-memory/{group}/{cert}", "tls-memory", "{group} {cert}", "quic-memory"},   /* quic_memory.c */
        /* Real servers built against the library under load (sslperf/serve_load, driven by wrk, not this harness) */
        {"tls/serve/{server}/{scenario}/{protocol}/{group}/{cert}", "tls-serve", "{server} {group} {cert}",
         "serve-{scenario}"},
    };
    static const char *const SERVERS[] = {"nginx", "haproxy"};
    static const char *const SCENARIOS[] = {"new", "resumed", "keepalive"};   /* per request: handshake, resumed */
    static const char *const CLIENTS[] = {"new", "shared", "curl"};   /* https-get's contexts; a real curl */
    static const char *const KERNELS[] = {"no-ktls", "ktls"};         /* transfer-tcp: kernel TLS off, on */
    printf("\"tls\":{");
    json_ids(SP_IDS(IDS));
    json_names("clients", SP_ROWS(CLIENTS));
    json_names("kernels", SP_ROWS(KERNELS));
    json_names("servers", SP_ROWS(SERVERS));
    json_names("scenarios", SP_ROWS(SCENARIOS));
    json_names("protocols", SP_ROWS(SP_TLS_PROTOCOLS));
    printf(",\"groups\":[");
    for (size_t g = 0; g < SP_TLS_N_GROUPS; g++) {
        json_row(g, SP_TLS_GROUPS[g].name, NULL);
        printf(",\"tls13_only\":%s}", SP_TLS_GROUPS[g].tls13_only ? "true" : "false");
    }
    printf("],\"certs\":[");
    for (size_t c = 0; c < SP_TLS_N_CERTS; c++) {
        json_row(c, SP_TLS_CERTS[c].name, NULL);
        putchar('}');
    }
    printf("]");
    json_names("contexts", SP_ROWS(SP_TLS_CONTEXTS));
    json_names("resumption", SP_ROWS(SP_TLS_RESUMPTION));
    json_names("suites", SP_ROWS(SP_TLS_SUITES));
    putchar('}');
}
