/* API usage patterns (seed 000): the same work done in different ways.
 *
 *   api/digest/sha256/PATTERN/SIZE     implicit-fetch | explicit-fetch | explicit-fetch-reuse-ctx
 *   api/cipher/aes-256-cbc/PATTERN/SIZE   full-init | iv-only
 *   api/mac/hmac-sha256/PATTERN/SIZE   init-each-call | dup-template | dup-template-new-key
 *   api/fetch/ALG                      sha256 | aes-256-cbc | hmac: one fetch + free
 *   api/ssl-ctx/new                    SSL_CTX_new + free
 *   api/ca-load/file|dir               SSL_CTX_new + load a ~150-certificate CA store + free
 *   api/pem/private-key|certificate    parse one PEM object
 *
 * The TOPICS and CASES tables below are the suite: prepare and `harness
 * list` both read them, and sslperf takes the ids and titles from the list.
 * Libraries without the 3.x API (1.1.1, BoringSSL, AWS-LC, LibreSSL) run the
 * closest equivalent and say so in the case note, or n/a with the reason.
 * The CA store and PEM inputs come from `sslperf` (SSLPERF_CERT_DIR), made
 * per run in a private temporary directory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat.h"
#include "harness.h"
#include "families.h"

#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

typedef struct {
    int pattern;
    size_t len;
    unsigned char *in, out[1024 + 64], key[32], iv[16], mac[64];
    EVP_MD *md_fetched;
    const EVP_MD *md;
    EVP_MD_CTX *mctx;
    EVP_CIPHER *cipher_fetched;
    const EVP_CIPHER *cipher;
    EVP_CIPHER_CTX *cctx;
#if SP_OSSL3
    EVP_MAC *mac_alg;
    EVP_MAC_CTX *mac_ctx, *mac_tpl;
    OSSL_PARAM params[2];
#else
    HMAC_CTX *hmac, *hmac_tpl;
#endif
    char path[512];
    char *pem;
    size_t pem_len;
} api_state;

enum { D_IMPLICIT, D_EXPLICIT, D_REUSE, C_FULL, C_IV, M_INIT, M_DUP, M_DUP_NEWKEY, F_MD, F_CIPHER, F_MAC, CTX_NEW,
       CA_FILE, CA_DIR, PEM_KEY, PEM_CERT };

/* The suite, read by prepare and by `harness list` (which sslperf's api
 * command and tables take it from). Per topic, the naive way first. */
typedef enum { T_DIGEST, T_CIPHER, T_MAC, T_FETCH, T_SSL_CTX, T_CA_LOAD, T_PEM } api_topic;

static const struct {
    const char *name;     /* api/NAME/... */
    const char *alg;      /* sized topics, api/NAME/ALG/PATTERN/SIZE; else api/NAME/PATTERN */
    size_t size;          /* the suite's size (any 1..1024 is accepted) */
    const char *title;    /* its results table */
    int alternatives;     /* 1: the rows are ways of doing the same work; 0: each is a cost */
} TOPICS[] = {
    [T_DIGEST] = {"digest", "sha256", 64, "SHA-256 of 64 bytes", 1},
    [T_CIPHER] = {"cipher", "aes-256-cbc", 1024, "AES-256-CBC of 1 KiB", 1},
    [T_MAC] = {"mac", "hmac-sha256", 200, "HMAC-SHA256 of 200 bytes", 1},
    [T_FETCH] = {"fetch", NULL, 0, "one fetch + free", 0},
    [T_SSL_CTX] = {"ssl-ctx", NULL, 0, "SSL_CTX_new + free", 0},
    [T_CA_LOAD] = {"ca-load", NULL, 0, "CA store of 150 certificates", 1},
    [T_PEM] = {"pem", NULL, 0, "PEM parsing", 0},
};

static const struct {
    const char *pattern;
    api_topic topic;
    int code;             /* what the run function does */
    const char *needs;    /* for `harness list` */
} CASES[] = {
    {"implicit-fetch", T_DIGEST, D_IMPLICIT, NULL},
    {"explicit-fetch", T_DIGEST, D_EXPLICIT, NULL},
    {"explicit-fetch-reuse-ctx", T_DIGEST, D_REUSE, NULL},
    {"full-init", T_CIPHER, C_FULL, NULL},
    {"iv-only", T_CIPHER, C_IV, NULL},
    {"init-each-call", T_MAC, M_INIT, NULL},
    {"dup-template", T_MAC, M_DUP, NULL},
    {"dup-template-new-key", T_MAC, M_DUP_NEWKEY, NULL},
    {"sha256", T_FETCH, F_MD, "OpenSSL 3.0+"},
    {"aes-256-cbc", T_FETCH, F_CIPHER, "OpenSSL 3.0+"},
    {"hmac", T_FETCH, F_MAC, "OpenSSL 3.0+"},
    {"new", T_SSL_CTX, CTX_NEW, NULL},
    {"file", T_CA_LOAD, CA_FILE, NULL},
    {"dir", T_CA_LOAD, CA_DIR, NULL},
    {"private-key", T_PEM, PEM_KEY, NULL},
    {"certificate", T_PEM, PEM_CERT, NULL},
};
#define N_CASES (sizeof(CASES) / sizeof(CASES[0]))

/* The row of `pattern` in `topic`, or -1. */
static int find_case(api_topic topic, const char *pattern)
{
    for (size_t i = 0; i < N_CASES; i++)
        if (CASES[i].topic == topic && strcmp(CASES[i].pattern, pattern) == 0)
            return (int)i;
    return -1;
}

/* A topic's patterns joined by `sep`, for messages. */
static const char *patterns(api_topic topic, const char *sep, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < N_CASES && used < len; i++) {
        if (CASES[i].topic != topic)
            continue;
        int w = snprintf(buf + used, len - used, "%s%s", used ? sep : "", CASES[i].pattern);
        used += w > 0 ? (size_t)w : 0;
    }
    return buf;
}

/* ---- digests ----------------------------------------------------------- */

static int run_digest(void *p, uint64_t iters)
{
    api_state *s = p;
    unsigned int n;
    for (uint64_t i = 0; i < iters; i++) {
        EVP_MD_CTX *ctx = s->pattern == D_REUSE ? s->mctx : EVP_MD_CTX_new();
        /* implicit: EVP_sha256() names the algorithm and 3.x fetches it inside every init */
        const EVP_MD *md = s->pattern == D_IMPLICIT ? EVP_sha256() : s->md;
        int ok = ctx && EVP_DigestInit_ex(ctx, md, NULL) && EVP_DigestUpdate(ctx, s->in, s->len)
                 && EVP_DigestFinal_ex(ctx, s->out, &n);
        if (s->pattern != D_REUSE)
            EVP_MD_CTX_free(ctx);
        if (!ok)
            return 0;
    }
    return 1;
}

/* ---- AES-256-CBC: full init vs keeping the key schedule ----------------- */

static int run_cipher(void *p, uint64_t iters)
{
    api_state *s = p;
    int n, m;
    for (uint64_t i = 0; i < iters; i++) {
        int ok = s->pattern == C_FULL ? EVP_EncryptInit_ex(s->cctx, s->cipher, NULL, s->key, s->iv)
                                      : EVP_EncryptInit_ex(s->cctx, NULL, NULL, NULL, s->iv);
        if (!ok || !EVP_EncryptUpdate(s->cctx, s->out, &n, s->in, (int)s->len)
            || !EVP_EncryptFinal_ex(s->cctx, s->out + n, &m))
            return 0;
    }
    return 1;
}

/* ---- HMAC-SHA256: init with the key each call vs dup of a keyed template - */

static int mac_final(api_state *s, void *ctx)
{
#if SP_OSSL3
    size_t n;
    return EVP_MAC_update(ctx, s->in, s->len) && EVP_MAC_final(ctx, s->mac, &n, sizeof(s->mac));
#else
    unsigned int n;
    return HMAC_Update(ctx, s->in, s->len) && HMAC_Final(ctx, s->mac, &n);
#endif
}

static int run_mac(void *p, uint64_t iters)
{
    api_state *s = p;
    for (uint64_t i = 0; i < iters; i++) {
#if SP_OSSL3
        EVP_MAC_CTX *ctx = s->pattern == M_INIT ? s->mac_ctx : EVP_MAC_CTX_dup(s->mac_tpl);
        int ok = ctx != NULL;
        if (ok && s->pattern == M_INIT)
            ok = EVP_MAC_init(ctx, s->key, sizeof(s->key), s->params);   /* fetches SHA-256 inside */
        else if (ok && s->pattern == M_DUP_NEWKEY)
            ok = EVP_MAC_init(ctx, s->key, sizeof(s->key), NULL);
        ok = ok && mac_final(s, ctx);
        if (s->pattern != M_INIT)
            EVP_MAC_CTX_free(ctx);
#else
        HMAC_CTX *ctx = s->pattern == M_INIT ? s->hmac : HMAC_CTX_new();
        int ok = ctx != NULL;
        if (ok && s->pattern == M_INIT)
            ok = HMAC_Init_ex(ctx, s->key, sizeof(s->key), EVP_sha256(), NULL);
        else if (ok)
            ok = HMAC_CTX_copy(ctx, s->hmac_tpl)
                 && (s->pattern == M_DUP || HMAC_Init_ex(ctx, s->key, sizeof(s->key), NULL, NULL));
        ok = ok && mac_final(s, ctx);
        if (s->pattern != M_INIT)
            HMAC_CTX_free(ctx);
#endif
        if (!ok)
            return 0;
        s->key[0]++;     /* a different key each call; harmless for the kept-key patterns */
    }
    return 1;
}

/* ---- fetch, SSL_CTX, CA store, PEM ----------------------------------- */

static int run_fetch(void *p, uint64_t iters)
{
#if SP_OSSL3
    api_state *s = p;
    for (uint64_t i = 0; i < iters; i++) {
        if (s->pattern == F_MD) {
            EVP_MD *md = EVP_MD_fetch(NULL, "SHA2-256", NULL);
            if (!md)
                return 0;
            EVP_MD_free(md);
        } else if (s->pattern == F_CIPHER) {
            EVP_CIPHER *c = EVP_CIPHER_fetch(NULL, "AES-256-CBC", NULL);
            if (!c)
                return 0;
            EVP_CIPHER_free(c);
        } else {
            EVP_MAC *m = EVP_MAC_fetch(NULL, "HMAC", NULL);
            if (!m)
                return 0;
            EVP_MAC_free(m);
        }
    }
    return 1;
#else
    (void)p, (void)iters;
    return 0;
#endif
}

static int run_ssl_ctx(void *p, uint64_t iters)
{
    api_state *s = p;
    for (uint64_t i = 0; i < iters; i++) {
        SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
        int ok = ctx != NULL;
        if (ok && s->pattern == CA_FILE)
            ok = SSL_CTX_load_verify_locations(ctx, s->path, NULL);
        else if (ok && s->pattern == CA_DIR)
            ok = SSL_CTX_load_verify_locations(ctx, NULL, s->path);
        SSL_CTX_free(ctx);
        if (!ok)
            return 0;
    }
    return 1;
}

static int run_pem(void *p, uint64_t iters)
{
    api_state *s = p;
    for (uint64_t i = 0; i < iters; i++) {
        BIO *bio = BIO_new_mem_buf(s->pem, (int)s->pem_len);
        int ok;
        if (s->pattern == PEM_KEY) {
            EVP_PKEY *key = bio ? PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL) : NULL;
            ok = key != NULL;
            EVP_PKEY_free(key);
        } else {
            X509 *cert = bio ? PEM_read_bio_X509(bio, NULL, NULL, NULL) : NULL;
            ok = cert != NULL;
            X509_free(cert);
        }
        BIO_free(bio);
        if (!ok)
            return 0;
    }
    return 1;
}

/* ---- set-up ------------------------------------------------------------ */

static void release_api(void *p)
{
    api_state *s = p;
    EVP_MD_CTX_free(s->mctx);
    EVP_CIPHER_CTX_free(s->cctx);
#if SP_OSSL3
    EVP_MD_free(s->md_fetched);
    EVP_CIPHER_free(s->cipher_fetched);
    EVP_MAC_CTX_free(s->mac_ctx);
    EVP_MAC_CTX_free(s->mac_tpl);
    EVP_MAC_free(s->mac_alg);
#else
    HMAC_CTX_free(s->hmac);
    HMAC_CTX_free(s->hmac_tpl);
#endif
    free(s->pem);
    free(s->in);
    free(s);
}

static int read_file(const char *path, char **out, size_t *len)
{
    FILE *f = fopen(path, "rb");
    long size;
    if (!f)
        return 0;
    fseek(f, 0, SEEK_END);
    size = ftell(f);
    rewind(f);
    *out = malloc((size_t)size + 1);
    *len = *out ? fread(*out, 1, (size_t)size, f) : 0;
    fclose(f);
    return *out && *len == (size_t)size;
}

static const char *api_dir(void)
{
    const char *dir = getenv("SSLPERF_CERT_DIR");
    return dir && *dir ? dir : NULL;
}

static prep_status setup_api(api_state *s, const case_name *name, bench_case *out, prep_result *res)
{
    char list[200];
    int t = sp_find(name->part[1], SP_ROWS(TOPICS)), row;
    if (t < 0)
        return prep_unknown(res, "unknown api case (%s)", sp_join(list, sizeof(list), ", ", SP_ROWS(TOPICS)));
    api_topic topic = (api_topic)t;
    const char *what = TOPICS[topic].name, *alg = TOPICS[topic].alg;
    if (alg) {
        if (name->n != 5 || strcmp(name->part[2], alg) != 0)
            return prep_unknown(res, "api %s cases are api/%s/%s/PATTERN/SIZE", what, what, alg);
        if (!parse_size(name->part[4], &s->len) || s->len > 1024)
            return prep_unknown(res, "bad size \"%s\" (1 to 1024 bytes)", name->part[4]);
        if (!(s->in = malloc(s->len)))
            return prep_error(res, "out of memory");
        fill_pattern(s->in, s->len, 9);
        fill_pattern(s->key, sizeof(s->key), 10);
        fill_pattern(s->iv, sizeof(s->iv), 11);
        if ((row = find_case(topic, name->part[3])) < 0)
            return prep_unknown(res, "%s patterns: %s", what, patterns(topic, ", ", list, sizeof(list)));
    } else if (name->n != 3 || (row = find_case(topic, name->part[2])) < 0) {
        return prep_unknown(res, "%s cases are api/%s/%s", what, what, patterns(topic, "|", list, sizeof(list)));
    }
    s->pattern = CASES[row].code;
    switch (topic) {
    case T_DIGEST:
#if SP_OSSL3
        s->md = s->md_fetched = EVP_MD_fetch(NULL, "SHA2-256", NULL);
#else
        s->md = EVP_sha256();
        if (s->pattern != D_IMPLICIT)
            snprintf(out->note, sizeof(out->note), "no fetch API: EVP_sha256() is used (nothing to fetch)");
#endif
        if (!s->md || !(s->mctx = EVP_MD_CTX_new()))
            return prep_error(res, "cannot set up SHA-256");
        out->run = run_digest;
        break;
    case T_CIPHER:
        if (s->len % 16)
            return prep_na(res, "CBC needs a multiple of 16 bytes");
#if SP_OSSL3
        s->cipher = s->cipher_fetched = EVP_CIPHER_fetch(NULL, "AES-256-CBC", NULL);
#else
        s->cipher = EVP_aes_256_cbc();
#endif
        if (!s->cipher || !(s->cctx = EVP_CIPHER_CTX_new())
            || !EVP_EncryptInit_ex(s->cctx, s->cipher, NULL, s->key, s->iv))
            return prep_error(res, "cannot set up AES-256-CBC");
        out->run = run_cipher;
        break;
    case T_MAC:
#if SP_OSSL3
        s->params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, "SHA2-256", 0);
        s->params[1] = OSSL_PARAM_construct_end();
        if (!(s->mac_alg = EVP_MAC_fetch(NULL, "HMAC", NULL)) || !(s->mac_ctx = EVP_MAC_CTX_new(s->mac_alg))
            || !(s->mac_tpl = EVP_MAC_CTX_new(s->mac_alg)))
            return prep_error(res, "cannot set up HMAC");
        /* The template: digest set, and keyed unless each call brings its own key. */
        if (!(s->pattern == M_DUP_NEWKEY ? EVP_MAC_CTX_set_params(s->mac_tpl, s->params)
                                         : EVP_MAC_init(s->mac_tpl, s->key, sizeof(s->key), s->params)))
            return prep_error(res, "cannot key the HMAC template");
#else
        if (!(s->hmac = HMAC_CTX_new()) || !(s->hmac_tpl = HMAC_CTX_new())
            || !HMAC_Init_ex(s->hmac_tpl, s->key, sizeof(s->key), EVP_sha256(), NULL))
            return prep_error(res, "cannot set up HMAC");
        snprintf(out->note, sizeof(out->note), "HMAC_CTX API: HMAC_Init_ex per call, HMAC_CTX_copy for dup");
#endif
        out->run = run_mac;
        break;
    case T_FETCH:
        if (!SP_OSSL3)
            return prep_na(res, "%s has no fetch API (algorithms are static objects)", sp_flavor());
        out->run = run_fetch;
        break;
    case T_SSL_CTX:
        out->run = run_ssl_ctx;
        break;
    case T_CA_LOAD:
        if (!api_dir())
            return prep_na(res, "no CA store given (SSLPERF_CERT_DIR is set by `sslperf api`)");
        snprintf(s->path, sizeof(s->path), "%s/%s", api_dir(), s->pattern == CA_FILE ? "ca-bundle.pem" : "ca-dir");
        out->run = run_ssl_ctx;
        break;
    case T_PEM: {
        char path[600];
        if (!api_dir())
            return prep_na(res, "no PEM input given (SSLPERF_CERT_DIR is set by `sslperf api`)");
        snprintf(path, sizeof(path), "%s/%s", api_dir(), s->pattern == PEM_KEY ? "key.pem" : "cert.pem");
        if (!read_file(path, &s->pem, &s->pem_len))
            return prep_error(res, "cannot read %s", path);
        out->run = run_pem;
        break;
    }
    }
    /* Check once: the pattern must work before it is timed. */
    if (!out->run(s, 1))
        return prep_error(res, "the pattern failed its first call");
    ERR_clear_error();
    return PREP_OK;
}

prep_status prepare_api(const case_name *name, bench_case *out, prep_result *res)
{
    api_state *s;
    prep_status status;
    if (name->n < 3)
        return prep_unknown(res, "api cases are api/WHAT/...");
    if (!(s = calloc(1, sizeof(*s))))
        return prep_error(res, "out of memory");
    status = setup_api(s, name, out, res);
    return sp_take(status, out, s, release_api, UNIT_OPS, 0);
}

void list_api(void)
{
    /* Every case is listed below; these say how its name reads (topic/pattern, or topic/alg/pattern/size). */
    static const id_template IDS[] = {
        {"api/{topic}/{operation}", NULL, "{topic}", NULL},
        {"api/{topic}/{algorithm}/{operation}/{size}", NULL, NULL, NULL},
    };
    printf("\"api\":{");
    json_ids(SP_IDS(IDS));
    printf(",\"cases\":[");
    for (size_t i = 0; i < N_CASES; i++) {
        char id[CASE_ID_MAX];
        api_topic t = CASES[i].topic;
        if (TOPICS[t].alg)
            snprintf(id, sizeof(id), "api/%s/%s/%s/%zu", TOPICS[t].name, TOPICS[t].alg, CASES[i].pattern,
                     TOPICS[t].size);
        else
            snprintf(id, sizeof(id), "api/%s/%s", TOPICS[t].name, CASES[i].pattern);
        printf(i ? ",{\"id\":" : "{\"id\":");
        json_string(id);
        printf(",\"topic\":\"api/%s\",\"title\":", TOPICS[t].name);
        json_string(TOPICS[t].title);
        printf(",\"alternatives\":%s", TOPICS[t].alternatives ? "true" : "false");
        if (CASES[i].needs) {
            printf(",\"needs\":");
            json_string(CASES[i].needs);
        }
        putchar('}');
    }
    printf("]}");
}
