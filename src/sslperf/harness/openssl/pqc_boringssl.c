/* BoringSSL's ML-KEM and ML-DSA, which it offers through their own
 * functions rather than EVP_PKEY. The other libraries use pkey.c. */
#include <stdlib.h>
#include <string.h>

#include "compat.h"
#include "pkey.h"

#if SP_BORINGSSL
#include <openssl/mldsa.h>
#include <openssl/mlkem.h>

/* One state type per parameter set, made by macro so the three ML-DSA and
 * two ML-KEM sets share one implementation. */
#define MLKEM_IMPL(N)                                                                                    \
    typedef struct {                                                                                     \
        struct MLKEM##N##_private_key priv;                                                              \
        struct MLKEM##N##_public_key pub;                                                                \
        uint8_t pub_bytes[MLKEM##N##_PUBLIC_KEY_BYTES], ct[MLKEM##N##_CIPHERTEXT_BYTES];                 \
    } mlkem##N##_state;                                                                                  \
    static int mlkem##N##_keygen(void *p, uint64_t iters)                                                \
    {                                                                                                    \
        mlkem##N##_state *s = p;                                                                         \
        struct MLKEM##N##_private_key priv;                                                              \
        for (uint64_t i = 0; i < iters; i++)                                                             \
            MLKEM##N##_generate_key(s->pub_bytes, NULL, &priv);                                          \
        return 1;                                                                                        \
    }                                                                                                    \
    static int mlkem##N##_encaps(void *p, uint64_t iters)                                                \
    {                                                                                                    \
        mlkem##N##_state *s = p;                                                                         \
        uint8_t ct[MLKEM##N##_CIPHERTEXT_BYTES], ss[MLKEM_SHARED_SECRET_BYTES];                         \
        for (uint64_t i = 0; i < iters; i++)                                                             \
            MLKEM##N##_encap(ct, ss, &s->pub);                                                           \
        return 1;                                                                                        \
    }                                                                                                    \
    static int mlkem##N##_decaps(void *p, uint64_t iters)                                                \
    {                                                                                                    \
        mlkem##N##_state *s = p;                                                                         \
        uint8_t ss[MLKEM_SHARED_SECRET_BYTES];                                                           \
        for (uint64_t i = 0; i < iters; i++)                                                             \
            if (!MLKEM##N##_decap(ss, s->ct, sizeof(s->ct), &s->priv))                                   \
                return 0;                                                                                \
        return 1;                                                                                        \
    }                                                                                                    \
    static prep_status mlkem##N##_prepare(const char *op, bench_case *out, prep_result *res)             \
    {                                                                                                    \
        mlkem##N##_state *s = calloc(1, sizeof(*s));                                                     \
        uint8_t ss[MLKEM_SHARED_SECRET_BYTES], ss2[MLKEM_SHARED_SECRET_BYTES];                          \
        if (!s)                                                                                          \
            return prep_error(res, "out of memory");                                                     \
        MLKEM##N##_generate_key(s->pub_bytes, NULL, &s->priv);                                           \
        MLKEM##N##_public_from_private(&s->pub, &s->priv);                                               \
        MLKEM##N##_encap(s->ct, ss, &s->pub);                                                            \
        if (!MLKEM##N##_decap(ss2, s->ct, sizeof(s->ct), &s->priv) || memcmp(ss, ss2, sizeof(ss)) != 0) { \
            free(s);                                                                                     \
            return prep_error(res, "ML-KEM-" #N " decapsulation did not give the encapsulated secret");  \
        }                                                                                                \
        out->run = strcmp(op, "keygen") == 0   ? mlkem##N##_keygen                                       \
                   : strcmp(op, "encaps") == 0 ? mlkem##N##_encaps                                       \
                                               : mlkem##N##_decaps;                                      \
        out->state = s;                                                                                  \
        return PREP_OK;                                                                                  \
    }

#define MLDSA_IMPL(N)                                                                                    \
    typedef struct {                                                                                     \
        struct MLDSA##N##_private_key priv;                                                              \
        struct MLDSA##N##_public_key pub;                                                                \
        uint8_t pub_bytes[MLDSA##N##_PUBLIC_KEY_BYTES], sig[MLDSA##N##_SIGNATURE_BYTES], msg[32];        \
    } mldsa##N##_state;                                                                                  \
    static int mldsa##N##_keygen(void *p, uint64_t iters)                                                \
    {                                                                                                    \
        mldsa##N##_state *s = p;                                                                         \
        uint8_t seed[MLDSA_SEED_BYTES];                                                                  \
        struct MLDSA##N##_private_key *priv = malloc(sizeof(*priv));                                     \
        int ok = priv != NULL;                                                                           \
        for (uint64_t i = 0; ok && i < iters; i++)                                                       \
            ok = MLDSA##N##_generate_key(s->pub_bytes, seed, priv);                                      \
        free(priv);                                                                                      \
        return ok;                                                                                       \
    }                                                                                                    \
    static int mldsa##N##_sign(void *p, uint64_t iters)                                                  \
    {                                                                                                    \
        mldsa##N##_state *s = p;                                                                         \
        for (uint64_t i = 0; i < iters; i++)                                                             \
            if (!MLDSA##N##_sign(s->sig, &s->priv, s->msg, sizeof(s->msg), NULL, 0))                     \
                return 0;                                                                                \
        return 1;                                                                                        \
    }                                                                                                    \
    static int mldsa##N##_verify(void *p, uint64_t iters)                                                \
    {                                                                                                    \
        mldsa##N##_state *s = p;                                                                         \
        for (uint64_t i = 0; i < iters; i++)                                                             \
            if (!MLDSA##N##_verify(&s->pub, s->sig, sizeof(s->sig), s->msg, sizeof(s->msg), NULL, 0))    \
                return 0;                                                                                \
        return 1;                                                                                        \
    }                                                                                                    \
    static prep_status mldsa##N##_prepare(const char *op, bench_case *out, prep_result *res)             \
    {                                                                                                    \
        mldsa##N##_state *s = calloc(1, sizeof(*s));                                                     \
        uint8_t seed[MLDSA_SEED_BYTES];                                                                  \
        if (!s)                                                                                          \
            return prep_error(res, "out of memory");                                                     \
        fill_pattern(s->msg, sizeof(s->msg), 8);                                                         \
        int ok = MLDSA##N##_generate_key(s->pub_bytes, seed, &s->priv)                                   \
                 && MLDSA##N##_public_from_private(&s->pub, &s->priv)                                    \
                 && MLDSA##N##_sign(s->sig, &s->priv, s->msg, sizeof(s->msg), NULL, 0)                   \
                 && MLDSA##N##_verify(&s->pub, s->sig, sizeof(s->sig), s->msg, sizeof(s->msg), NULL, 0); \
        s->msg[0] ^= 1;                                                                                  \
        ok = ok && !MLDSA##N##_verify(&s->pub, s->sig, sizeof(s->sig), s->msg, sizeof(s->msg), NULL, 0); \
        s->msg[0] ^= 1;                                                                                  \
        if (!ok) {                                                                                       \
            free(s);                                                                                     \
            return prep_error(res, "ML-DSA-" #N " sign/verify check failed");                            \
        }                                                                                                \
        out->run = strcmp(op, "keygen") == 0 ? mldsa##N##_keygen                                         \
                   : strcmp(op, "sign") == 0 ? mldsa##N##_sign                                           \
                                             : mldsa##N##_verify;                                        \
        out->state = s;                                                                                  \
        return PREP_OK;                                                                                  \
    }

MLKEM_IMPL(768)
MLKEM_IMPL(1024)
MLDSA_IMPL(44)
MLDSA_IMPL(65)
MLDSA_IMPL(87)

prep_status prepare_boringssl_pqc(const key_alg *alg, const char *op, bench_case *out, prep_result *res)
{
    prep_status status;
    switch (alg->param) {
    case 768: status = mlkem768_prepare(op, out, res); break;
    case 1024: status = mlkem1024_prepare(op, out, res); break;
    case 44: status = mldsa44_prepare(op, out, res); break;
    case 65: status = mldsa65_prepare(op, out, res); break;
    case 87: status = mldsa87_prepare(op, out, res); break;
    default: return prep_na(res, "BoringSSL offers no %s", alg->ossl_name);
    }
    if (status == PREP_OK) {
        out->unit = UNIT_OPS;
        out->release = free;
        snprintf(out->note, sizeof(out->note), "BoringSSL's own %s API (no EVP_PKEY)", alg->ossl_name);
    }
    return status;
}
#else
typedef int sp_pqc_boringssl_unused; /* ISO C forbids an empty translation unit */
#endif
