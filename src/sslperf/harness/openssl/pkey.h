/* Key algorithms shared by pkey.c and pqc_boringssl.c. */
#ifndef SSLPERF_PKEY_H
#define SSLPERF_PKEY_H

#include "harness.h"

typedef enum { K_RSA, K_EC, K_ED, K_X, K_DH, K_MLDSA, K_MLKEM } key_kind;

/* The case families a key serves (sig/ALG/..., kex/ALG/..., kem/ALG/..., keygen/ALG). */
enum { FOR_SIG = 1, FOR_KEX = 2, FOR_KEM = 4, FOR_KEYGEN = 8 };

typedef struct {
    const char *name;        /* as in the case id */
    key_kind kind;
    int param;               /* RSA bits, curve NID, EVP_PKEY id, DH bits, ML-DSA/ML-KEM level */
    const char *ossl_name;   /* OpenSSL 3 name or group */
    unsigned families;       /* FOR_* bits: what prepare accepts and `harness list` shows */
    const char *needs;       /* for `harness list`: which libraries have it, where not all */
} key_alg;

prep_status prepare_boringssl_pqc(const key_alg *alg, const char *op, bench_case *out, prep_result *res);

#endif
