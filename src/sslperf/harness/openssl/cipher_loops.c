/* The cipher family's records and timed loops (cipher.c prepares the state and picks the loop). */
#include <string.h>

#include "cipher.h"
#include "compat.h"
#include "harness.h"

static void next_nonce(cipher_state *s)
{
    /* TLS 1.3 style: a fixed IV XORed with the record sequence number. */
    uint64_t seq = ++s->counter;
    memcpy(s->nonce, s->base_nonce, NONCE_LEN);
    for (int i = 0; i < 8; i++)
        s->nonce[NONCE_LEN - 1 - i] ^= (unsigned char)(seq >> (8 * i));
}

/* ---- record workload, EVP_CIPHER -------------------------------------- */

/* Seal one record on `ctx` (keyed for encryption). */
int cipher_seal(const cipher_state *s, EVP_CIPHER_CTX *ctx, const unsigned char *nonce, unsigned char *out,
                unsigned char *tag)
{
    int n, m;
    if (!EVP_EncryptInit_ex(ctx, NULL, NULL, NULL, nonce))
        return 0;
    if (s->alg->mode == M_CCM && !EVP_EncryptUpdate(ctx, NULL, &n, NULL, (int)s->len))
        return 0;
    if (!EVP_EncryptUpdate(ctx, NULL, &n, s->aad, AAD_LEN) || !EVP_EncryptUpdate(ctx, out, &n, s->in, (int)s->len)
        || !EVP_EncryptFinal_ex(ctx, out + n, &m))
        return 0;
    return EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, TAG_LEN, tag) > 0;
}

/* Open one record on `ctx` (keyed for decryption); 1 only if the tag verifies. */
int cipher_open(const cipher_state *s, EVP_CIPHER_CTX *ctx, const unsigned char *nonce, const unsigned char *ct,
                const unsigned char *tag, unsigned char *out)
{
    int n, m;
    if (!EVP_DecryptInit_ex(ctx, NULL, NULL, NULL, nonce)
        || EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, TAG_LEN, (void *)tag) <= 0)
        return 0;
    if (s->alg->mode == M_CCM) {
        /* CCM verifies the tag in the data update; there is no final. */
        return EVP_DecryptUpdate(ctx, NULL, &n, NULL, (int)s->len) && EVP_DecryptUpdate(ctx, NULL, &n, s->aad, AAD_LEN)
               && EVP_DecryptUpdate(ctx, out, &n, ct, (int)s->len) > 0;
    }
    return EVP_DecryptUpdate(ctx, NULL, &n, s->aad, AAD_LEN) && EVP_DecryptUpdate(ctx, out, &n, ct, (int)s->len)
           && EVP_DecryptFinal_ex(ctx, out + n, &m) > 0;
}

/* CBC/CTR: a fresh IV on a context keyed once for one direction. */
int cipher_plain(EVP_CIPHER_CTX *ctx, size_t len, const unsigned char *iv, const unsigned char *in,
                 unsigned char *out)
{
    int n, m;
    return EVP_CipherInit_ex(ctx, NULL, NULL, NULL, iv, -1)
           && EVP_CipherUpdate(ctx, out, &n, in, (int)len)
           && EVP_CipherFinal_ex(ctx, out + n, &m);
}

int cipher_run_evp_seal(void *p, uint64_t iters)
{
    cipher_state *s = p;
    for (uint64_t i = 0; i < iters; i++) {
        next_nonce(s);
        if (!cipher_seal(s, s->ctx, s->nonce, s->out, s->tag))
            return 0;
    }
    return 1;
}

int cipher_run_evp_open(void *p, uint64_t iters)
{
    cipher_state *s = p;
    for (uint64_t i = 0; i < iters; i++)
        if (!cipher_open(s, s->ctx, s->nonce, s->ct, s->tag, s->out))
            return 0;
    return 1;
}

int cipher_run_evp_encrypt(void *p, uint64_t iters)
{
    cipher_state *s = p;
    for (uint64_t i = 0; i < iters; i++) {
        next_nonce(s);
        if (!cipher_plain(s->ctx, s->len, s->nonce, s->in, s->out))
            return 0;
    }
    return 1;
}

int cipher_run_evp_decrypt(void *p, uint64_t iters)
{
    cipher_state *s = p;
    for (uint64_t i = 0; i < iters; i++)
        if (!cipher_plain(s->ctx, s->len, s->nonce, s->ct, s->out))
            return 0;
    return 1;
}

/* ---- record workload, EVP_AEAD (BoringSSL, AWS-LC) --------------------- */

#if SP_BSSL
int cipher_aead_seal(cipher_state *s, const unsigned char *nonce, unsigned char *out)
{
    size_t out_len;
    return EVP_AEAD_CTX_seal(s->aead_ctx, out, &out_len, s->len + TAG_LEN, nonce, NONCE_LEN, s->in, s->len,
                             s->aad, AAD_LEN);
}

int cipher_aead_open(cipher_state *s, const unsigned char *nonce, const unsigned char *sealed, unsigned char *out)
{
    size_t out_len;
    return EVP_AEAD_CTX_open(s->aead_ctx, out, &out_len, s->len, nonce, NONCE_LEN, sealed, s->len + TAG_LEN,
                             s->aad, AAD_LEN);
}

int cipher_run_aead_seal(void *p, uint64_t iters)
{
    cipher_state *s = p;
    for (uint64_t i = 0; i < iters; i++) {
        next_nonce(s);
        if (!cipher_aead_seal(s, s->nonce, s->out))
            return 0;
    }
    return 1;
}

int cipher_run_aead_open(void *p, uint64_t iters)
{
    cipher_state *s = p;
    for (uint64_t i = 0; i < iters; i++)
        if (!cipher_aead_open(s, s->nonce, s->ct, s->out))
            return 0;
    return 1;
}

/* `bssl speed`'s AEAD loop: seal with one fixed nonce and 13 bytes of AD. */
int cipher_run_bssl_speed_seal(void *p, uint64_t iters)
{
    cipher_state *s = p;
    for (uint64_t i = 0; i < iters; i++)
        if (!cipher_aead_seal(s, s->nonce, s->out))
            return 0;
    return 1;
}
#endif

/* ---- speed-compat workload (OpenSSL's apps/speed.c) ----------------- */

/* EVP_Update_loop: one in-place update per call on a context keyed once;
 * the final comes once, after the loop. */
int cipher_run_speed_stream(void *p, uint64_t iters)
{
    static const unsigned char zero_iv[32];
    cipher_state *s = p;
    int n;
    /* speed.c finalises once per run; a finalised GCM context needs its IV
     * again before the next run (once per batch, not per call). */
    if (!EVP_CipherInit_ex(s->ctx, NULL, NULL, NULL, zero_iv, -1))
        return 0;
    for (uint64_t i = 0; i < iters; i++)
        if (!EVP_EncryptUpdate(s->ctx, s->out, &n, s->out, (int)s->len))
            return 0;
    return EVP_EncryptFinal_ex(s->ctx, s->out, &n) > 0 || s->alg->mode == M_CCM;
}

/* EVP_Update_loop_ccm (before 3.0.16): length, then data, per call. */
int cipher_run_speed_ccm(void *p, uint64_t iters)
{
    cipher_state *s = p;
    int n;
    for (uint64_t i = 0; i < iters; i++)
        if (!EVP_EncryptUpdate(s->ctx, NULL, &n, NULL, (int)s->len)
            || !EVP_EncryptUpdate(s->ctx, s->out, &n, s->out, (int)s->len))
            return 0;
    return 1;
}

/* EVP_Update_loop_aead_enc (3.0.16+, 3.4.1+): every call re-keys with the
 * same all-zero IV, and the final computes the tag (never read). */
int cipher_run_speed_aead_rekey(void *p, uint64_t iters)
{
    cipher_state *s = p;
    static const unsigned char zero_iv[NONCE_LEN];
    cipher_mode m = s->alg->mode;
    int n;
    for (uint64_t i = 0; i < iters; i++) {
        if (EVP_CIPHER_CTX_ctrl(s->ctx, EVP_CTRL_AEAD_SET_IVLEN, NONCE_LEN, NULL) <= 0)
            return 0;
        if ((m == M_CCM || m == M_OCB) && EVP_CIPHER_CTX_ctrl(s->ctx, EVP_CTRL_AEAD_SET_TAG, TAG_LEN, NULL) <= 0)
            return 0;
        if (!EVP_CipherInit_ex(s->ctx, NULL, NULL, s->key, zero_iv, -1))
            return 0;
        if (m == M_CCM && !EVP_EncryptUpdate(s->ctx, NULL, &n, NULL, (int)s->len))
            return 0;
        if (!EVP_EncryptUpdate(s->ctx, s->out, &n, s->out, (int)s->len) || !EVP_EncryptFinal_ex(s->ctx, s->out, &n))
            return 0;
    }
    return 1;
}
