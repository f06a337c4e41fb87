/* The cipher family's shared parts: cipher.c (tables, set-up, catalog) and cipher_loops.c (the records and the
 * timed loops). */
#ifndef SSLPERF_OPENSSL_CIPHER_H
#define SSLPERF_OPENSSL_CIPHER_H

#include <stddef.h>
#include <stdint.h>

#include "compat.h"
#include "harness.h"

#define AAD_LEN 13
#define TAG_LEN 16
#define NONCE_LEN 12

typedef enum { M_GCM, M_CCM, M_OCB, M_CHACHAPOLY, M_CBC, M_CTR } cipher_mode;

typedef struct {
    const char *name;        /* as in the case id and `openssl speed -evp` */
    const char *fetch_name;  /* OpenSSL 3 fetch name */
    cipher_mode mode;
    int key_len;
    const EVP_CIPHER *(*legacy)(void);
#if SP_BSSL
    const EVP_AEAD *(*aead)(void);
#endif
    const char *needs;       /* for `harness list`: which libraries lack it */
    const char *kernel;      /* the Linux kernel's name, where AF_ALG offers it (afalg.c) */
} cipher_alg;

typedef struct {
    const cipher_alg *alg;
    EVP_CIPHER *owned;              /* fetched (OpenSSL 3); freed on release */
    const EVP_CIPHER *cipher;
    EVP_CIPHER_CTX *ctx;
#if SP_BSSL
    EVP_AEAD_CTX *aead_ctx;
#endif
    unsigned char key[32], base_nonce[NONCE_LEN], nonce[16], aad[AAD_LEN], tag[TAG_LEN];
    unsigned char *in, *out, *ct;   /* plaintext, output, sealed record (for decrypt) */
    size_t len;
    uint64_t counter;
} cipher_state;

static inline int is_aead(cipher_mode m)
{
    return m == M_GCM || m == M_CCM || m == M_OCB || m == M_CHACHAPOLY;
}

/* One record (cipher_loops.c): sealed on `ctx` keyed for encryption, opened on one keyed for decryption (1 only
 * if the tag verifies), or CBC/CTR with a fresh IV on a context keyed once. */
int cipher_seal(const cipher_state *s, EVP_CIPHER_CTX *ctx, const unsigned char *nonce, unsigned char *out,
                unsigned char *tag);
int cipher_open(const cipher_state *s, EVP_CIPHER_CTX *ctx, const unsigned char *nonce, const unsigned char *ct,
                const unsigned char *tag, unsigned char *out);
int cipher_plain(EVP_CIPHER_CTX *ctx, size_t len, const unsigned char *iv, const unsigned char *in,
                 unsigned char *out);
#if SP_BSSL
int cipher_aead_seal(cipher_state *s, const unsigned char *nonce, unsigned char *out);
int cipher_aead_open(cipher_state *s, const unsigned char *nonce, const unsigned char *sealed, unsigned char *out);
#endif

/* The timed loops (batch_fn), by workload: record (EVP_CIPHER; EVP_AEAD in BoringSSL and AWS-LC), and
 * speed-compat (the tool's own loops). */
int cipher_run_evp_seal(void *p, uint64_t iters);
int cipher_run_evp_open(void *p, uint64_t iters);
int cipher_run_evp_encrypt(void *p, uint64_t iters);
int cipher_run_evp_decrypt(void *p, uint64_t iters);
#if SP_BSSL
int cipher_run_aead_seal(void *p, uint64_t iters);
int cipher_run_aead_open(void *p, uint64_t iters);
int cipher_run_bssl_speed_seal(void *p, uint64_t iters);
#endif
int cipher_run_speed_stream(void *p, uint64_t iters);
int cipher_run_speed_ccm(void *p, uint64_t iters);
int cipher_run_speed_aead_rekey(void *p, uint64_t iters);

#endif
