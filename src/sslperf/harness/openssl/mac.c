/* MACs: mac/ALG/SIZE
 *
 * HMAC and CMAC keep their key and re-initialise per call (the cheap
 * re-init every API offers); Poly1305 takes a fresh one-time key per call,
 * as in ChaCha20-Poly1305. OpenSSL 3 uses EVP_MAC; 1.1.1, BoringSSL and
 * AWS-LC use HMAC_CTX / CMAC_CTX, and Poly1305 through EVP_PKEY (1.1.1) or
 * CRYPTO_poly1305 (BoringSSL/AWS-LC). Each MAC is checked against a
 * published test vector first (RFC 4231, RFC 4493, RFC 8439). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/cmac.h>
#include <openssl/hmac.h>

#include "compat.h"
#include "harness.h"
#include "families.h"

typedef enum { MAC_HMAC, MAC_CMAC, MAC_POLY1305 } mac_kind;

typedef struct {
    const char *name;
    mac_kind kind;
    const char *sub;     /* digest or cipher */
    const char *kat_key, *kat_msg, *kat_tag;
    const char *needs;       /* for `harness list`: which libraries lack it */
} mac_alg;

/* Every row is in every build (a library that lacks one answers n/a). */
static const mac_alg MACS[] = {
    {"hmac-sha256", MAC_HMAC, "SHA256", "4a656665", "what do ya want for nothing?",
     "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843", NULL},
    {"hmac-sha512", MAC_HMAC, "SHA512", "4a656665", "what do ya want for nothing?",
     "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b6"
     "36e070a38bce737", NULL},
    {"cmac-aes-128", MAC_CMAC, "AES-128-CBC", "2b7e151628aed2a6abf7158809cf4f3c", NULL,
     "070a16b46b4d4144f79bdd9dd04a287c", NULL},
    {"poly1305", MAC_POLY1305, NULL, "85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b",
     "Cryptographic Forum Research Group", "a8061dc1305136c6c22b8baf0c0127a9", "not in LibreSSL"},
};

/* RFC 4493 example 2 message. */
static const unsigned char CMAC_MSG[16] = {0x6b, 0xc1, 0xbe, 0xe2, 0x2e, 0x40, 0x9f, 0x96,
                                           0xe9, 0x3d, 0x7e, 0x11, 0x73, 0x93, 0x17, 0x2a};

typedef struct {
    const mac_alg *alg;
    unsigned char key[64];
    size_t key_len;
    unsigned char *in;
    size_t len;
    unsigned char out[64];
#if SP_OSSL3
    EVP_MAC *mac;
    EVP_MAC_CTX *ctx;
#else
    HMAC_CTX *hmac;
    CMAC_CTX *cmac;
#endif
} mac_state;

/* One MAC of `in` with the state's key; `rekey` sets the key first. */
static int mac_once(mac_state *s, int rekey, const unsigned char *in, size_t len, unsigned char *out, size_t *out_len)
{
#if SP_OSSL3
    return EVP_MAC_init(s->ctx, rekey ? s->key : NULL, rekey ? s->key_len : 0, NULL)
           && EVP_MAC_update(s->ctx, in, len) && EVP_MAC_final(s->ctx, out, out_len, 64);
#else
    switch (s->alg->kind) {
    case MAC_HMAC: {
        unsigned int n = 0;
        const EVP_MD *md = strcmp(s->alg->sub, "SHA256") == 0 ? EVP_sha256() : EVP_sha512();
        int ok = (rekey ? HMAC_Init_ex(s->hmac, s->key, (int)s->key_len, md, NULL)
                        : HMAC_Init_ex(s->hmac, NULL, 0, NULL, NULL))
                 && HMAC_Update(s->hmac, in, len) && HMAC_Final(s->hmac, out, &n);
        *out_len = n;
        return ok;
    }
    case MAC_CMAC:
        /* Restart with the kept key: CMAC_Reset in BoringSSL/AWS-LC, a NULL-key init in OpenSSL. */
        return (rekey ? CMAC_Init(s->cmac, s->key, s->key_len, EVP_aes_128_cbc(), NULL)
#if SP_BSSL
                      : CMAC_Reset(s->cmac))
#else
                      : CMAC_Init(s->cmac, NULL, 0, NULL, NULL))
#endif
               && CMAC_Update(s->cmac, in, len) && CMAC_Final(s->cmac, out, out_len);
    case MAC_POLY1305: {
#if SP_BSSL
        poly1305_state st;
        CRYPTO_poly1305_init(&st, s->key);
        CRYPTO_poly1305_update(&st, in, len);
        CRYPTO_poly1305_finish(&st, out);
        *out_len = 16;
        return 1;
#elif !SP_LIBRESSL && !defined(OPENSSL_NO_POLY1305)
        EVP_PKEY *key = EVP_PKEY_new_raw_private_key(EVP_PKEY_POLY1305, NULL, s->key, 32);
        EVP_MD_CTX *mctx = EVP_MD_CTX_new();
        int ok = key && mctx && EVP_DigestSignInit(mctx, NULL, NULL, NULL, key) > 0
                 && EVP_DigestSignUpdate(mctx, in, len) > 0 && (*out_len = 16, EVP_DigestSignFinal(mctx, out, out_len) > 0);
        EVP_MD_CTX_free(mctx);
        EVP_PKEY_free(key);
        return ok;
#else
        return 0;
#endif
    }
    }
    return 0;
#endif
}

static int run_mac(void *p, uint64_t iters)
{
    mac_state *s = p;
    size_t n;
    int rekey = s->alg->kind == MAC_POLY1305;
    for (uint64_t i = 0; i < iters; i++)
        if (!mac_once(s, rekey, s->in, s->len, s->out, &n))
            return 0;
    return 1;
}

static void release_mac(void *p)
{
    mac_state *s = p;
#if SP_OSSL3
    EVP_MAC_CTX_free(s->ctx);
    EVP_MAC_free(s->mac);
#else
    HMAC_CTX_free(s->hmac);
    CMAC_CTX_free(s->cmac);
#endif
    free(s->in);
    free(s);
}

static size_t unhex(const char *hex, unsigned char *out)
{
    size_t n = strlen(hex) / 2;
    for (size_t i = 0; i < n; i++)
        sscanf(hex + 2 * i, "%2hhx", &out[i]);
    return n;
}

/* Make the MAC object for the library; 0 when it has no such MAC. */
static int load_mac(mac_state *s)
{
#if SP_OSSL3
    OSSL_PARAM params[2] = {OSSL_PARAM_END, OSSL_PARAM_END};
    const char *mac_name = s->alg->kind == MAC_HMAC ? "HMAC" : s->alg->kind == MAC_CMAC ? "CMAC" : "POLY1305";
    if (!(s->mac = EVP_MAC_fetch(NULL, mac_name, NULL)) || !(s->ctx = EVP_MAC_CTX_new(s->mac)))
        return 0;
    if (s->alg->kind != MAC_POLY1305) {
        params[0] = OSSL_PARAM_construct_utf8_string(s->alg->kind == MAC_HMAC ? OSSL_MAC_PARAM_DIGEST
                                                                               : OSSL_MAC_PARAM_CIPHER,
                                                     (char *)s->alg->sub, 0);
        if (!EVP_MAC_CTX_set_params(s->ctx, params))
            return 0;
    }
    return 1;
#else
    if (s->alg->kind == MAC_HMAC)
        return (s->hmac = HMAC_CTX_new()) != NULL;
    if (s->alg->kind == MAC_CMAC)
        return (s->cmac = CMAC_CTX_new()) != NULL;
#if SP_BSSL || (!SP_LIBRESSL && !defined(OPENSSL_NO_POLY1305))
    return 1;
#else
    return 0;
#endif
#endif
}

prep_status prepare_mac(const case_name *name, bench_case *out, prep_result *res)
{
    const mac_alg *alg;
    size_t len, n = 0;

    if (name->n != 3)
        return prep_unknown(res, "mac cases are mac/ALG/SIZE");
    int row = sp_find(name->part[1], SP_ROWS(MACS));
    if (row < 0)
        return prep_unknown(res, "unknown MAC \"%s\"", name->part[1]);
    alg = &MACS[row];
    if (!parse_size(name->part[2], &len))
        return prep_unknown(res, "bad size \"%s\" (a positive number of bytes, at most 64 MiB)", name->part[2]);

    mac_state *s = calloc(1, sizeof(*s));
    if (!s)
        return prep_error(res, "out of memory");
    if (!(s->in = malloc(len))) {
        release_mac(s);
        return prep_error(res, "out of memory");
    }
    s->alg = alg;
    s->len = len;
    fill_pattern(s->in, len, 6);
    if (!load_mac(s)) {
        release_mac(s);
        return prep_na(res, "%s does not offer %s", sp_flavor(), alg->name);
    }
    /* Known answer first, then the benchmark key. */
    s->key_len = unhex(alg->kat_key, s->key);
    const unsigned char *msg = alg->kat_msg ? (const unsigned char *)alg->kat_msg : CMAC_MSG;
    size_t msg_len = alg->kat_msg ? strlen(alg->kat_msg) : sizeof(CMAC_MSG);
    if (!mac_once(s, 1, msg, msg_len, s->out, &n) || !hex_equal(s->out, n, alg->kat_tag)) {
        release_mac(s);
        return prep_error(res, "%s does not give the published test vector", alg->name);
    }
    fill_pattern(s->key, s->key_len, 7);
    if (!mac_once(s, 1, s->in, s->len, s->out, &n)) {
        release_mac(s);
        return prep_error(res, "%s failed", alg->name);
    }
    sp_take(PREP_OK, out, s, release_mac, UNIT_BYTES, len);
    out->run = run_mac;
#if !SP_OSSL3
    if (alg->kind == MAC_POLY1305 && !SP_BSSL)
        snprintf(out->note, sizeof(out->note), "Poly1305 through EVP_PKEY + EVP_DigestSign (1.1.1 has no EVP_MAC)");
#endif
    return PREP_OK;
}

void list_mac(void)
{
    static const id_template IDS[] = {{"mac/{algorithm}/{size}[/{workload}]", NULL, NULL, "mac"}};
    printf("\"mac\":{");
    json_ids(SP_IDS(IDS));
    printf(",\"algorithms\":[");
    for (size_t i = 0; i < sizeof(MACS) / sizeof(MACS[0]); i++) {
        json_row(i, MACS[i].name, MACS[i].needs);
        putchar('}');
    }
    printf("]}");
}
