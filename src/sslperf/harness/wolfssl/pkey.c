/* wolfCrypt public-key operations under the OpenSSL backend's names (see
 * crypto.c for the list). Keys are made before timing; each case is checked
 * once: a signature verifies and one over a changed message does not, both
 * sides derive the same secret, decapsulation gives the encapsulated secret. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <wolfssl/options.h>
#include <wolfssl/wolfcrypt/curve25519.h>
#include <wolfssl/wolfcrypt/ecc.h>
#include <wolfssl/wolfcrypt/ed25519.h>
#include <wolfssl/wolfcrypt/random.h>
#include <wolfssl/wolfcrypt/rsa.h>
#include <wolfssl/wolfcrypt/signature.h>
#include <wolfssl/wolfcrypt/wc_mlkem.h>
#if defined(WOLFSSL_HAVE_MLDSA)
#include <wolfssl/wolfcrypt/wc_mldsa.h>
#endif

#include "harness.h"
#include "wolfssl_cases.h"

#define MSG_LEN 32

typedef enum { K_RSA, K_ECC, K_ED25519, K_X25519, K_MLKEM, K_MLDSA } key_kind;

#if !defined(WOLFSSL_HAVE_MLDSA)        /* the rows stay; a build without ML-DSA answers n/a */
#define WC_ML_DSA_44 0
#define WC_ML_DSA_65 0
#define WC_ML_DSA_87 0
#endif

static const struct {
    const char *name;
    key_kind kind;
    int param;     /* RSA bits, ECC curve id, ML-KEM type */
} KEYS[] = {
    {"rsa-2048", K_RSA, 2048},           {"rsa-3072", K_RSA, 3072},
    {"ecdsa-p256", K_ECC, ECC_SECP256R1}, {"ecdsa-p384", K_ECC, ECC_SECP384R1},
    {"ed25519", K_ED25519, 0},           {"x25519", K_X25519, 0},
    {"ecdh-p256", K_ECC, ECC_SECP256R1},  {"ecdh-p384", K_ECC, ECC_SECP384R1},
    {"ml-kem-512", K_MLKEM, WC_ML_KEM_512}, {"ml-kem-768", K_MLKEM, WC_ML_KEM_768},
    {"ml-kem-1024", K_MLKEM, WC_ML_KEM_1024},
    {"ml-dsa-44", K_MLDSA, WC_ML_DSA_44}, {"ml-dsa-65", K_MLDSA, WC_ML_DSA_65},
    {"ml-dsa-87", K_MLDSA, WC_ML_DSA_87},
};

typedef struct {
    int row, op;                 /* op: the operation's index in its family's names */
    WC_RNG rng;
    union {
        RsaKey rsa;
        ecc_key ecc;
        ed25519_key ed;
        curve25519_key x;
        MlKemKey kem;
#if defined(WOLFSSL_HAVE_MLDSA)
        wc_MlDsaKey dsa;
#endif
    } key, peer;
    int has_key, has_peer;
    unsigned char msg[MSG_LEN], sig[5000], secret[128], ct[2048];   /* sig: ML-DSA-87's 4,627 bytes */
    word32 sig_len, ct_len, secret_len;
} pkey_state;

static void free_key(pkey_state *s, int peer)
{
    void *k = peer ? (void *)&s->peer : (void *)&s->key;
    switch (KEYS[s->row].kind) {
    case K_RSA: wc_FreeRsaKey(k); break;
    case K_ECC: wc_ecc_free(k); break;
    case K_ED25519: wc_ed25519_free(k); break;
    case K_X25519: wc_curve25519_free(k); break;
    case K_MLKEM: wc_MlKemKey_Free(k); break;
    case K_MLDSA:
#if defined(WOLFSSL_HAVE_MLDSA)
        wc_MlDsaKey_Free(k);
#endif
        break;
    }
}

static int make_key(pkey_state *s, int peer)
{
    int kind = KEYS[s->row].kind, param = KEYS[s->row].param, rc = -1;
    void *k = peer ? (void *)&s->peer : (void *)&s->key;
    switch (kind) {
    case K_RSA:
        rc = wc_InitRsaKey(k, NULL);
        rc = rc ? rc : wc_MakeRsaKey(k, param, WC_RSA_EXPONENT, &s->rng);
        rc = rc ? rc : wc_RsaSetRNG(k, &s->rng);
        break;
    case K_ECC:
        rc = wc_ecc_init(k);
        rc = rc ? rc : wc_ecc_make_key_ex(&s->rng, wc_ecc_get_curve_size_from_id(param), k, param);
        rc = rc ? rc : wc_ecc_set_rng(k, &s->rng);
        break;
    case K_ED25519:
        rc = wc_ed25519_init(k);
        rc = rc ? rc : wc_ed25519_make_key(&s->rng, ED25519_KEY_SIZE, k);
        break;
    case K_X25519:
        rc = wc_curve25519_init(k);
        rc = rc ? rc : wc_curve25519_make_key(&s->rng, CURVE25519_KEYSIZE, k);
#if defined(WOLFSSL_CURVE25519_BLINDING)
        rc = rc ? rc : wc_curve25519_set_rng(k, &s->rng);
#endif
        break;
    case K_MLKEM:
        rc = wc_MlKemKey_Init(k, param, NULL, INVALID_DEVID);
        rc = rc ? rc : wc_MlKemKey_MakeKey(k, &s->rng);
        break;
    case K_MLDSA:
#if defined(WOLFSSL_HAVE_MLDSA)
        rc = wc_MlDsaKey_Init(k, NULL, INVALID_DEVID);
        rc = rc ? rc : wc_MlDsaKey_SetParams(k, (byte)param);
        rc = rc ? rc : wc_MlDsaKey_MakeKey(k, &s->rng);
#endif
        break;
    }
    if (peer)
        s->has_peer = 1;
    else
        s->has_key = 1;
    return rc == 0;
}

static enum wc_SignatureType sig_type(const pkey_state *s)
{
    return KEYS[s->row].kind == K_RSA ? WC_SIGNATURE_TYPE_RSA_W_ENC : WC_SIGNATURE_TYPE_ECC;
}

/* wc_Signature* want the key's exact size (RsaKey or ecc_key), not the union's. */
static word32 key_size(const pkey_state *s)
{
    return KEYS[s->row].kind == K_RSA ? (word32)sizeof(RsaKey) : (word32)sizeof(ecc_key);
}

/* Pure ML-DSA with an empty context and hedged (random) signing, as OpenSSL's EVP_PKEY_sign does by default. */
static int sign(pkey_state *s)
{
    int kind = KEYS[s->row].kind;
    s->sig_len = kind == K_ED25519 || kind == K_MLDSA ? (word32)sizeof(s->sig)
                 : (word32)wc_SignatureGetSize(sig_type(s), &s->key, key_size(s));
#if defined(WOLFSSL_HAVE_MLDSA)
    if (kind == K_MLDSA)
        return wc_MlDsaKey_SignCtx(&s->key.dsa, NULL, 0, s->sig, &s->sig_len, s->msg, MSG_LEN, &s->rng) == 0;
#endif
    if (kind == K_ED25519)
        return wc_ed25519_sign_msg(s->msg, MSG_LEN, s->sig, &s->sig_len, &s->key.ed) == 0;
    /* _ex with verify 0: wc_SignatureGenerate verifies every signature it makes (a fault check that OpenSSL's
     * EVP_DigestSign, and wolfSSL's own TLS signing, do not do), which made ECDSA "sign" a sign plus a verify. */
    return wc_SignatureGenerate_ex(WC_HASH_TYPE_SHA256, sig_type(s), s->msg, MSG_LEN, s->sig, &s->sig_len, &s->key,
                                   key_size(s), &s->rng, 0) == 0;
}

static int verify(pkey_state *s)
{
#if defined(WOLFSSL_HAVE_MLDSA)
    if (KEYS[s->row].kind == K_MLDSA) {
        int ok = 0;
        return wc_MlDsaKey_VerifyCtx(&s->key.dsa, s->sig, s->sig_len, NULL, 0, s->msg, MSG_LEN, &ok) == 0 && ok;
    }
#endif
    if (KEYS[s->row].kind == K_ED25519) {
        int ok = 0;
        return wc_ed25519_verify_msg(s->sig, s->sig_len, s->msg, MSG_LEN, &ok, &s->key.ed) == 0 && ok;
    }
    return wc_SignatureVerify(WC_HASH_TYPE_SHA256, sig_type(s), s->msg, MSG_LEN, s->sig, s->sig_len, &s->key,
                              key_size(s)) == 0;
}

static int derive(pkey_state *s, int reverse, unsigned char *out, word32 *len)
{
    *len = sizeof(s->secret);
    void *priv = reverse ? (void *)&s->peer : (void *)&s->key, *pub = reverse ? (void *)&s->key : (void *)&s->peer;
    if (KEYS[s->row].kind == K_X25519)
        return wc_curve25519_shared_secret(priv, pub, out, len) == 0;
    return wc_ecc_shared_secret(priv, pub, out, len) == 0;
}

static int encaps(pkey_state *s)
{
    return wc_MlKemKey_Encapsulate(&s->key.kem, s->ct, s->secret, &s->rng) == 0;
}

static int decaps(pkey_state *s, unsigned char *out)
{
    return wc_MlKemKey_Decapsulate(&s->key.kem, out, s->ct, s->ct_len) == 0;
}

enum { OP_SIGN, OP_VERIFY, OP_DERIVE, OP_KEYGEN, OP_ENCAPS, OP_DECAPS };

static int run_pkey(void *p, uint64_t iters)
{
    pkey_state *s = p;
    unsigned char out[128];
    word32 len;
    for (uint64_t i = 0; i < iters; i++) {
        int ok = 0;
        switch (s->op) {
        case OP_SIGN: ok = sign(s); break;
        case OP_VERIFY: ok = verify(s); break;
        case OP_DERIVE: ok = derive(s, 0, out, &len); break;
        case OP_KEYGEN: free_key(s, 1); ok = make_key(s, 1); break;
        case OP_ENCAPS: ok = encaps(s); break;
        case OP_DECAPS: ok = decaps(s, out); break;
        }
        if (!ok)
            return 0;
    }
    return 1;
}

static void release_pkey(void *p)
{
    pkey_state *s = p;
    if (s->has_key)
        free_key(s, 0);
    if (s->has_peer)
        free_key(s, 1);
    wc_FreeRng(&s->rng);
    free(s);
}

/* The one check of each operation before timing. */
static prep_status check(pkey_state *s, prep_result *res)
{
    const char *name = KEYS[s->row].name;
    unsigned char a[128], b[128];
    word32 la, lb;
    switch (KEYS[s->row].kind) {
    case K_RSA:
    case K_ECC:
        if (s->op == OP_DERIVE) {
            if (!make_key(s, 1) || !derive(s, 0, a, &la) || !derive(s, 1, b, &lb) || la != lb || memcmp(a, b, la))
                return prep_error(res, "the two sides of %s derived different secrets", name);
            return PREP_OK;
        }
        /* a signature: falls through */
        /* falls through */
    case K_ED25519:
    case K_MLDSA:
        if (!sign(s) || !verify(s))
            return prep_error(res, "a %s signature does not verify", name);
        s->msg[0] ^= 1;
        int forged = verify(s);
        s->msg[0] ^= 1;
        return forged ? prep_error(res, "%s verified a signature over a different message", name) : PREP_OK;
    case K_X25519:
        if (!make_key(s, 1) || !derive(s, 0, a, &la) || !derive(s, 1, b, &lb) || la != lb || memcmp(a, b, la))
            return prep_error(res, "the two sides of %s derived different secrets", name);
        return PREP_OK;
    case K_MLKEM:
        if (wc_MlKemKey_CipherTextSize(&s->key.kem, &s->ct_len) != 0
            || wc_MlKemKey_SharedSecretSize(&s->key.kem, &s->secret_len) != 0 || !encaps(s) || !decaps(s, a)
            || memcmp(a, s->secret, s->secret_len) != 0)
            return prep_error(res, "%s decapsulation did not give the encapsulated secret", name);
        return PREP_OK;
    }
    return PREP_OK;
}

prep_status prepare_wolf_pkey(const case_name *name, bench_case *out, prep_result *res)
{
    static const char *const SIG_OPS[] = {"sign", "verify"}, *const KEM_OPS[] = {"keygen", "encaps", "decaps"};
    const char *family = name->part[0];
    int is_sig = strcmp(family, "sig") == 0, is_kex = strcmp(family, "kex") == 0, is_kem = strcmp(family, "kem") == 0;
    int is_keygen = strcmp(family, "keygen") == 0;
    if (is_keygen ? name->n != 2 : name->n != 3)
        return prep_unknown(res, is_keygen ? "keygen cases are keygen/ALG" : "%s cases are %s/ALG/OPERATION", family,
                            family);
    int row = sp_find(name->part[1], SP_ROWS(KEYS)), op = -1;
    if (is_keygen) {
        op = OP_KEYGEN;          /* a new key pair of any algorithm the backend has */
    } else if (is_sig) {
        op = sp_find(name->part[2], SP_ROWS(SIG_OPS));
        op = op < 0 ? -1 : op == 0 ? OP_SIGN : OP_VERIFY;
    } else if (is_kex) {
        op = strcmp(name->part[2], "derive") == 0 ? OP_DERIVE : -1;
    } else if (is_kem) {
        op = sp_find(name->part[2], SP_ROWS(KEM_OPS));
        op = op < 0 ? -1 : OP_KEYGEN + op;
    }
    if (op < 0)
        return prep_unknown(res, "no %s operation is called \"%s\"", family, name->part[2]);
    int fits = row >= 0 && (is_keygen || (is_sig && (KEYS[row].kind == K_RSA || KEYS[row].kind == K_ED25519
                                        || KEYS[row].kind == K_MLDSA
                                        || (KEYS[row].kind == K_ECC && strncmp(KEYS[row].name, "ecdsa", 5) == 0)))
                            || (is_kex && (KEYS[row].kind == K_X25519
                                           || (KEYS[row].kind == K_ECC && strncmp(KEYS[row].name, "ecdh", 4) == 0)))
                            || (is_kem && KEYS[row].kind == K_MLKEM));
    if (!fits)
        return prep_na(res, "sslperf's wolfSSL backend does not measure %s %s", family, name->part[1]);
    pkey_state *s = calloc(1, sizeof(*s));
    if (!s)
        return prep_error(res, "out of memory");
    s->row = row;
    s->op = op;
    fill_pattern(s->msg, MSG_LEN, 6);
    prep_status status = PREP_OK;
    if (wc_InitRng(&s->rng) != 0) {
        free(s);
        return prep_error(res, "wolfCrypt's random generator did not start");
    }
    if (!make_key(s, 0))
        status = prep_na(res, "this wolfSSL build cannot make %s keys", KEYS[row].name);
    if (status == PREP_OK)
        status = check(s, res);
    if (status == PREP_OK && op == OP_KEYGEN && !make_key(s, 1))
        status = prep_error(res, "cannot make a second %s key", KEYS[row].name);
    if (sp_take(status, out, s, release_pkey, UNIT_OPS, 0) != PREP_OK)
        return status;
    out->run = run_pkey;
    return PREP_OK;
}
