/* Public-key operations through EVP_PKEY:
 *
 *   sig/ALG/sign|verify        rsa-2048/3072/4096 (PKCS#1 v1.5, SHA-256 digest),
 *                              ecdsa-p256/p384/p521 (SHA-256 digest), ed25519, ed448,
 *                              ml-dsa-44/65/87 (a 32-byte message)
 *   kex/ALG/derive             x25519, x448, ecdh-p256/p384/p521, ffdh-2048/3072
 *   kem/ALG/keygen|encaps|decaps   ml-kem-512/768/1024
 *   keygen/ALG                 a new key pair of any of the above
 *
 * Keys are made in set-up; each case is checked once (the signature verifies
 * and a changed message does not; both sides derive the same secret; decaps
 * gives the encapsulated secret). BoringSSL's ML-KEM/ML-DSA have their own
 * API, in pqc_boringssl.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat.h"
#include "harness.h"
#include "families.h"
#include "pkey.h"

#include <openssl/ec.h>
#include <openssl/rsa.h>
#if !SP_BORINGSSL && !SP_LIBRESSL && !defined(OPENSSL_NO_DH)
#include <openssl/dh.h>
#endif

/* LibreSSL has neither Ed448/X448 nor the RFC 7919 groups by NID. */
#if defined(EVP_PKEY_ED448) && defined(EVP_PKEY_X448)
#define ID_ED448 EVP_PKEY_ED448
#define ID_X448 EVP_PKEY_X448
#else
#define ID_ED448 NID_undef
#define ID_X448 NID_undef
#endif

#define SIG_KEY (FOR_SIG | FOR_KEYGEN)
#define KEX_KEY (FOR_KEX | FOR_KEYGEN)
#define KEM_KEY (FOR_KEM | FOR_KEYGEN)
#define NEEDS_PQC "OpenSSL 3.5+, AWS-LC or BoringSSL"
#define NEEDS_448 "not in BoringSSL, AWS-LC or LibreSSL"

/* Every row is in every build (a library that lacks one answers n/a). */
static const key_alg KEYS[] = {
    {"rsa-2048", K_RSA, 2048, "RSA", SIG_KEY, NULL},
    {"rsa-3072", K_RSA, 3072, "RSA", SIG_KEY, NULL},
    {"rsa-4096", K_RSA, 4096, "RSA", SIG_KEY, NULL},
    {"ecdsa-p256", K_EC, NID_X9_62_prime256v1, "P-256", SIG_KEY, NULL},
    {"ecdsa-p384", K_EC, NID_secp384r1, "P-384", SIG_KEY, NULL},
    {"ecdsa-p521", K_EC, NID_secp521r1, "P-521", SIG_KEY, NULL},
    {"ed25519", K_ED, EVP_PKEY_ED25519, "ED25519", SIG_KEY, NULL},
    {"ed448", K_ED, ID_ED448, "ED448", SIG_KEY, NEEDS_448},
    {"x25519", K_X, EVP_PKEY_X25519, "X25519", KEX_KEY, NULL},
    {"x448", K_X, ID_X448, "X448", KEX_KEY, NEEDS_448},
    {"ecdh-p256", K_EC, NID_X9_62_prime256v1, "P-256", KEX_KEY, NULL},
    {"ecdh-p384", K_EC, NID_secp384r1, "P-384", KEX_KEY, NULL},
    {"ecdh-p521", K_EC, NID_secp521r1, "P-521", KEX_KEY, NULL},
    {"ffdh-2048", K_DH, 2048, "ffdhe2048", KEX_KEY, "not in BoringSSL or LibreSSL"},
    {"ffdh-3072", K_DH, 3072, "ffdhe3072", KEX_KEY, "not in BoringSSL or LibreSSL"},
    {"ml-dsa-44", K_MLDSA, 44, "ML-DSA-44", SIG_KEY, NEEDS_PQC},
    {"ml-dsa-65", K_MLDSA, 65, "ML-DSA-65", SIG_KEY, NEEDS_PQC},
    {"ml-dsa-87", K_MLDSA, 87, "ML-DSA-87", SIG_KEY, NEEDS_PQC},
    {"ml-kem-512", K_MLKEM, 512, "ML-KEM-512", KEM_KEY, "OpenSSL 3.5+ or AWS-LC"},   /* BoringSSL: 768 and 1024 */
    {"ml-kem-768", K_MLKEM, 768, "ML-KEM-768", KEM_KEY, NEEDS_PQC},
    {"ml-kem-1024", K_MLKEM, 1024, "ML-KEM-1024", KEM_KEY, NEEDS_PQC},
};

/* The families' operations; keygen/ALG has none. */
static const char *const SIG_OPS[] = {"sign", "verify"};
static const char *const KEX_OPS[] = {"derive"};
static const char *const KEM_OPS[] = {"keygen", "encaps", "decaps"};
#define OPS(a) a, sizeof(a) / sizeof(a[0])

static const struct {
    const char *name;
    unsigned bit;              /* FOR_*: the keys it takes */
    const char *const *ops;
    size_t n_ops;
    id_template ids[1];
} FAMILIES[] = {
    {"sig", FOR_SIG, OPS(SIG_OPS), {{"sig/{algorithm}/{operation}[/{workload}]", NULL, NULL, NULL}}},
    {"kex", FOR_KEX, OPS(KEX_OPS), {{"kex/{algorithm}/{operation}[/{workload}]", NULL, NULL, NULL}}},
    {"kem", FOR_KEM, OPS(KEM_OPS), {{"kem/{algorithm}/{operation}[/{workload}]", NULL, NULL, NULL}}},
    {"keygen", FOR_KEYGEN, NULL, 0, {{"keygen/{algorithm}[/{workload}]", NULL, NULL, "keygen"}}},
};

typedef struct {
    const key_alg *alg;
    EVP_PKEY *key, *peer;
    EVP_PKEY_CTX *ctx;          /* sign/verify/derive/encaps/decaps or keygen context */
    EVP_MD_CTX *mctx;           /* one-shot signatures (EdDSA, ML-DSA) */
    unsigned char msg[32], sig[8192], secret[1024], ct[2048];
    size_t sig_len, secret_len, ct_len;
} pkey_state;

/* ---- keys --------------------------------------------------------------- */

#if SP_AWSLC
static int awslc_pq_nid(const key_alg *a)
{
    switch (a->param) {
    case 512: return NID_MLKEM512;
    case 768: return NID_MLKEM768;
    case 1024: return NID_MLKEM1024;
    case 44: return NID_MLDSA44;
    case 65: return NID_MLDSA65;
    case 87: return NID_MLDSA87;
    }
    return NID_undef;
}
#endif

/* A context ready for EVP_PKEY_keygen, or NULL when the lib cannot make `a`. */
static EVP_PKEY_CTX *keygen_ctx(const key_alg *a)
{
    EVP_PKEY_CTX *ctx = NULL;
    int ok = 0;
    switch (a->kind) {
    case K_RSA:
        ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_RSA, NULL);
        ok = ctx && EVP_PKEY_keygen_init(ctx) > 0 && EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, a->param) > 0;
        break;
    case K_EC:
        ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, NULL);
        ok = ctx && EVP_PKEY_keygen_init(ctx) > 0 && EVP_PKEY_CTX_set_ec_paramgen_curve_nid(ctx, a->param) > 0;
        break;
    case K_ED:
    case K_X:
        ctx = a->param == NID_undef ? NULL : EVP_PKEY_CTX_new_id(a->param, NULL);
        ok = ctx && EVP_PKEY_keygen_init(ctx) > 0;
        break;
    case K_DH:
#if SP_OSSL3
        ctx = EVP_PKEY_CTX_new_from_name(NULL, "DH", NULL);
        if (ctx && EVP_PKEY_keygen_init(ctx) > 0) {
            OSSL_PARAM params[2] = {OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, (char *)a->ossl_name, 0),
                                    OSSL_PARAM_END};
            ok = EVP_PKEY_CTX_set_params(ctx, params) > 0;
        }
#elif !SP_BORINGSSL && !SP_LIBRESSL && !defined(OPENSSL_NO_DH)
        {
            /* 1.1.1 / AWS-LC: the RFC 7919 group as parameters, then keygen. */
            DH *dh = DH_new_by_nid(a->param == 2048 ? NID_ffdhe2048 : NID_ffdhe3072);
            EVP_PKEY *params = EVP_PKEY_new();
            if (dh && params && EVP_PKEY_assign_DH(params, dh) > 0) {
                dh = NULL;
                ctx = EVP_PKEY_CTX_new(params, NULL);
                ok = ctx && EVP_PKEY_keygen_init(ctx) > 0;
            }
            DH_free(dh);
            EVP_PKEY_free(params);
        }
#endif
        break;
    case K_MLDSA:
    case K_MLKEM:
#if SP_OSSL_PQC
        ctx = EVP_PKEY_CTX_new_from_name(NULL, a->ossl_name, NULL);
        ok = ctx && EVP_PKEY_keygen_init(ctx) > 0;
#elif SP_AWSLC
        ctx = EVP_PKEY_CTX_new_id(a->kind == K_MLKEM ? EVP_PKEY_KEM : EVP_PKEY_PQDSA, NULL);
        ok = ctx && (a->kind == K_MLKEM ? EVP_PKEY_CTX_kem_set_params(ctx, awslc_pq_nid(a))
                                        : EVP_PKEY_CTX_pqdsa_set_params(ctx, awslc_pq_nid(a))) > 0
             && EVP_PKEY_keygen_init(ctx) > 0;
#endif
        break;
    }
    if (!ok) {
        EVP_PKEY_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

static EVP_PKEY *generate(EVP_PKEY_CTX *ctx)
{
    EVP_PKEY *key = NULL;
    return EVP_PKEY_keygen(ctx, &key) > 0 ? key : NULL;
}

/* An RSA key takes up to seconds to make (4096 bits), a case's setup, not what it measures: a thread makes one of
 * each size and every case of that size it prepares (sign, verify, the check before keygen) uses it. Per thread,
 * so that threads never share a key (nor its blinding's lock). */
#define RSA_SIZES 8
static _Thread_local EVP_PKEY *rsa_keys[RSA_SIZES];
static _Thread_local int rsa_key_bits[RSA_SIZES];

static EVP_PKEY *rsa_key(const key_alg *a, EVP_PKEY_CTX *gen)
{
    for (int i = 0; i < RSA_SIZES; i++) {
        if (rsa_keys[i] && rsa_key_bits[i] == a->param)
            return EVP_PKEY_up_ref(rsa_keys[i]) ? rsa_keys[i] : NULL;
        if (!rsa_keys[i]) {
            EVP_PKEY *key = generate(gen);
            if (key && EVP_PKEY_up_ref(key)) {
                rsa_keys[i] = key;
                rsa_key_bits[i] = a->param;
            }
            return key;
        }
    }
    return generate(gen);
}

/* ---- operations -------------------------------------------------------- */

static int one_shot_sig(const key_alg *a)
{
    return a->kind == K_ED || a->kind == K_MLDSA;
}

static int do_sign(pkey_state *s, const unsigned char *msg, unsigned char *sig, size_t *sig_len)
{
    *sig_len = sizeof(s->sig);
    if (one_shot_sig(s->alg))
        return EVP_DigestSignInit(s->mctx, NULL, NULL, NULL, s->key) > 0
               && EVP_DigestSign(s->mctx, sig, sig_len, msg, sizeof(s->msg)) > 0;
    return EVP_PKEY_sign(s->ctx, sig, sig_len, msg, sizeof(s->msg)) > 0;
}

static int do_verify(pkey_state *s, const unsigned char *msg)
{
    if (one_shot_sig(s->alg))
        return EVP_DigestVerifyInit(s->mctx, NULL, NULL, NULL, s->key) > 0
               && EVP_DigestVerify(s->mctx, s->sig, s->sig_len, msg, sizeof(s->msg)) == 1;
    return EVP_PKEY_verify(s->ctx, s->sig, s->sig_len, msg, sizeof(s->msg)) == 1;
}

static int do_derive(EVP_PKEY_CTX *ctx, unsigned char *out, size_t *len)
{
    *len = 1024;
    return EVP_PKEY_derive(ctx, out, len) > 0;
}

static int do_encaps(pkey_state *s, unsigned char *ct, size_t *ct_len, unsigned char *ss, size_t *ss_len)
{
#if SP_OSSL_PQC || SP_AWSLC
    *ct_len = sizeof(s->ct);
    *ss_len = 64;
    return EVP_PKEY_encapsulate(s->ctx, ct, ct_len, ss, ss_len) > 0;
#else
    (void)s, (void)ct, (void)ct_len, (void)ss, (void)ss_len;
    return 0;
#endif
}

static int do_decaps(pkey_state *s, unsigned char *ss, size_t *ss_len)
{
#if SP_OSSL_PQC || SP_AWSLC
    *ss_len = 64;
    return EVP_PKEY_decapsulate(s->ctx, ss, ss_len, s->ct, s->ct_len) > 0;
#else
    (void)s, (void)ss, (void)ss_len;
    return 0;
#endif
}

static int keygen_once(EVP_PKEY_CTX *ctx)
{
    EVP_PKEY *key = generate(ctx);
    EVP_PKEY_free(key);
    return key != NULL;
}

/* An operation's timed loop: `iters` direct calls with their scratch space, the first failure ending it. */
#define TIMED_LOOP(name, scratch, call)                                                                           \
    static int name(void *p, uint64_t iters)                                                                      \
    {                                                                                                             \
        pkey_state *s = p;                                                                                        \
        scratch;                                                                                                  \
        for (uint64_t i = 0; i < iters; i++)                                                                      \
            if (!(call))                                                                                          \
                return 0;                                                                                         \
        return 1;                                                                                                 \
    }
TIMED_LOOP(run_sign, unsigned char sig[8192]; size_t len, do_sign(s, s->msg, sig, &len))
TIMED_LOOP(run_verify, (void)0, do_verify(s, s->msg))
TIMED_LOOP(run_derive, unsigned char out[1024]; size_t len, do_derive(s->ctx, out, &len))
TIMED_LOOP(run_encaps, unsigned char ct[2048]; unsigned char ss[64]; size_t ct_len; size_t ss_len,
           do_encaps(s, ct, &ct_len, ss, &ss_len))
TIMED_LOOP(run_decaps, unsigned char ss[64]; size_t len, do_decaps(s, ss, &len))
TIMED_LOOP(run_keygen, (void)0, keygen_once(s->ctx))

/* ---- set-up ------------------------------------------------------------ */

static void release_pkey(void *p)
{
    pkey_state *s = p;
    EVP_PKEY_CTX_free(s->ctx);
    EVP_MD_CTX_free(s->mctx);
    EVP_PKEY_free(s->key);
    EVP_PKEY_free(s->peer);
    free(s);
}

static prep_status setup_sig(pkey_state *s, int verify, bench_case *out, prep_result *res)
{
    if (one_shot_sig(s->alg)) {
        if (!(s->mctx = EVP_MD_CTX_new()))
            return prep_error(res, "out of memory");
    } else if (!(s->ctx = EVP_PKEY_CTX_new(s->key, NULL)) || EVP_PKEY_sign_init(s->ctx) <= 0
               || EVP_PKEY_CTX_set_signature_md(s->ctx, EVP_sha256()) <= 0) {
        return prep_error(res, "cannot set up %s signing", s->alg->name);
    }
    if (!do_sign(s, s->msg, s->sig, &s->sig_len))
        return prep_error(res, "%s sign failed", s->alg->name);
    if (!one_shot_sig(s->alg)
        && (EVP_PKEY_verify_init(s->ctx) <= 0 || EVP_PKEY_CTX_set_signature_md(s->ctx, EVP_sha256()) <= 0))
        return prep_error(res, "cannot set up %s verification", s->alg->name);
    unsigned char other[32];
    memcpy(other, s->msg, sizeof(other));
    other[0] ^= 1;
    if (!do_verify(s, s->msg))
        return prep_error(res, "%s signature does not verify", s->alg->name);
    if (do_verify(s, other))
        return prep_error(res, "%s verified a signature over a different message", s->alg->name);
    ERR_clear_error();
    if (!verify && !one_shot_sig(s->alg)
        && (EVP_PKEY_sign_init(s->ctx) <= 0 || EVP_PKEY_CTX_set_signature_md(s->ctx, EVP_sha256()) <= 0))
        return prep_error(res, "cannot set up %s signing", s->alg->name);
    out->run = verify ? run_verify : run_sign;
    return PREP_OK;
}

static prep_status setup_derive(pkey_state *s, EVP_PKEY_CTX *gen, bench_case *out, prep_result *res)
{
    unsigned char mine[1024], theirs[1024];
    size_t mine_len, theirs_len;
    EVP_PKEY_CTX *back = NULL;
    if (!(s->peer = generate(gen)))
        return prep_error(res, "cannot make a peer key for %s", s->alg->name);
    if (!(s->ctx = EVP_PKEY_CTX_new(s->key, NULL)) || EVP_PKEY_derive_init(s->ctx) <= 0
        || EVP_PKEY_derive_set_peer(s->ctx, s->peer) <= 0)
        return prep_error(res, "cannot set up %s key agreement", s->alg->name);
    back = EVP_PKEY_CTX_new(s->peer, NULL);
    int ok = back && EVP_PKEY_derive_init(back) > 0 && EVP_PKEY_derive_set_peer(back, s->key) > 0
             && do_derive(s->ctx, mine, &mine_len) && do_derive(back, theirs, &theirs_len)
             && mine_len == theirs_len && mine_len > 0 && memcmp(mine, theirs, mine_len) == 0;
    EVP_PKEY_CTX_free(back);
    if (!ok)
        return prep_error(res, "%s: the two sides did not derive the same secret", s->alg->name);
    out->run = run_derive;
    return PREP_OK;
}

static prep_status setup_kem(pkey_state *s, int decaps, bench_case *out, prep_result *res)
{
    unsigned char ss[64], ss2[64];
    size_t ss_len, ss2_len;
    if (!(s->ctx = EVP_PKEY_CTX_new(s->key, NULL)))
        return prep_error(res, "out of memory");
#if SP_OSSL_PQC
    if (EVP_PKEY_encapsulate_init(s->ctx, NULL) <= 0)
        return prep_error(res, "cannot set up %s encapsulation", s->alg->name);
#endif
    if (!do_encaps(s, s->ct, &s->ct_len, ss, &ss_len))
        return prep_error(res, "%s encapsulation failed", s->alg->name);
#if SP_OSSL_PQC
    if (EVP_PKEY_decapsulate_init(s->ctx, NULL) <= 0)
        return prep_error(res, "cannot set up %s decapsulation", s->alg->name);
#endif
    if (!do_decaps(s, ss2, &ss2_len) || ss_len != ss2_len || memcmp(ss, ss2, ss_len) != 0)
        return prep_error(res, "%s decapsulation did not give the encapsulated secret", s->alg->name);
#if SP_OSSL_PQC
    if (!decaps && EVP_PKEY_encapsulate_init(s->ctx, NULL) <= 0)
        return prep_error(res, "cannot set up %s encapsulation", s->alg->name);
#endif
    out->run = decaps ? run_decaps : run_encaps;
    return PREP_OK;
}

/* Whether family row `f` takes key `a` and operation `op` (NULL for keygen/ALG). */
static int family_accepts(int f, const key_alg *a, const char *op)
{
    if (f < 0 || !(a->families & FAMILIES[f].bit))
        return 0;
    return FAMILIES[f].ops ? sp_find(op, FAMILIES[f].ops, FAMILIES[f].n_ops, sizeof(FAMILIES[f].ops[0])) >= 0
                           : op == NULL;
}

prep_status prepare_pkey(const case_name *name, bench_case *out, prep_result *res)
{
    const char *family = name->part[0];
    const key_alg *alg;
    const char *op;
    prep_status status;
    int keygen_only;

    int f = sp_find(family, SP_ROWS(FAMILIES)), k;
    if (name->n < 2 || name->n > 3 || f < 0 || (FAMILIES[f].ops == NULL) != (name->n == 2))
        return prep_unknown(res, "public-key cases are sig/ALG/sign|verify, kex/ALG/derive, "
                                 "kem/ALG/keygen|encaps|decaps or keygen/ALG");
    if ((k = sp_find(name->part[1], SP_ROWS(KEYS))) < 0)
        return prep_unknown(res, "unknown algorithm \"%s\"", name->part[1]);
    alg = &KEYS[k];
    op = name->n == 3 ? name->part[2] : NULL;
    if (!family_accepts(f, alg, op))
        return prep_unknown(res, "\"%s\" has no %s operation \"%s\"", alg->name, family, op ? op : "");
    keygen_only = op == NULL || strcmp(op, "keygen") == 0;

#if SP_BORINGSSL
    if (alg->kind == K_MLKEM || alg->kind == K_MLDSA)
        return prepare_boringssl_pqc(alg, op ? op : "keygen", out, res);
#endif
    pkey_state *s = calloc(1, sizeof(*s));
    if (!s)
        return prep_error(res, "out of memory");
    s->alg = alg;
    fill_pattern(s->msg, sizeof(s->msg), 8);
    EVP_PKEY_CTX *gen = keygen_ctx(alg);
    if (!gen) {
        release_pkey(s);
        return prep_na(res, "%s cannot make %s keys through EVP_PKEY", sp_flavor(), alg->ossl_name);
    }
    if (!(s->key = alg->kind == K_RSA ? rsa_key(alg, gen) : generate(gen))) {
        status = prep_error(res, "%s key generation failed", alg->name);
    } else if (keygen_only) {
        s->ctx = gen;
        gen = NULL;
        out->run = run_keygen;
        status = PREP_OK;
    } else if (strcmp(family, "sig") == 0) {
        status = setup_sig(s, strcmp(op, "verify") == 0, out, res);
    } else if (strcmp(family, "kex") == 0) {
        status = setup_derive(s, gen, out, res);
    } else {
        status = setup_kem(s, strcmp(op, "decaps") == 0, out, res);
    }
    EVP_PKEY_CTX_free(gen);
    return sp_take(status, out, s, release_pkey, UNIT_OPS, 0);
}

void list_pkey(void)
{
    for (size_t f = 0; f < sizeof(FAMILIES) / sizeof(FAMILIES[0]); f++) {
        size_t shown = 0;
        printf("%s", f ? "," : "");
        json_string(FAMILIES[f].name);
        putchar(':');
        putchar('{');
        json_ids(SP_IDS(FAMILIES[f].ids));
        printf(",\"algorithms\":[");
        for (size_t k = 0; k < sizeof(KEYS) / sizeof(KEYS[0]); k++) {
            if (KEYS[k].families & FAMILIES[f].bit) {
                json_row(shown++, KEYS[k].name, KEYS[k].needs);
                putchar('}');
            }
        }
        putchar(']');
        if (FAMILIES[f].ops)
            json_names("operations", FAMILIES[f].ops, FAMILIES[f].n_ops, sizeof(FAMILIES[f].ops[0]));
        putchar('}');
    }
}
