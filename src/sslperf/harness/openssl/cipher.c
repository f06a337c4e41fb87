/* Ciphers and AEADs: cipher/ALG/OP/SIZE[/WORKLOAD]
 *
 *   OP        encrypt | decrypt
 *   WORKLOAD  record (default): what a TLS stack does, one record per call.
 *               AEADs seal with a fresh nonce, 13 bytes of AAD and the tag,
 *               or open and verify the tag; CBC/CTR encrypt one buffer
 *               with a fresh IV on a key schedule that is kept.
 *             speed-compat: the loop of this version's own `openssl speed
 *               -evp ALG -bytes SIZE` (or `bssl speed` for BoringSSL/AWS-LC),
 *               so a version difference can be split into library and tool.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat.h"
#include "harness.h"
#include "families.h"

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

#if SP_BSSL
#define AEAD(fn) , fn
#define NO_AEAD , NULL
#else
#define AEAD(fn)
#define NO_AEAD
#endif

#if SP_BSSL || SP_LIBRESSL || defined(OPENSSL_NO_OCB)
#define OCB(fn) NULL
#else
#define OCB(fn) fn
#endif
#if SP_BORINGSSL
#define CCM(fn) NULL
#else
#define CCM(fn) fn
#endif
#if SP_BORINGSSL || defined(OPENSSL_NO_CHACHA) || defined(OPENSSL_NO_POLY1305)
#define CHACHAPOLY(fn) NULL
#else
#define CHACHAPOLY(fn) fn
#endif

#define NEEDS_OCB "not in BoringSSL, AWS-LC or LibreSSL"

/* Every row is in every build (a library that lacks one answers n/a), so
 * the names, which `harness list` prints, never depend on the library. */
static const cipher_alg CIPHERS[] = {
    {"aes-128-gcm", "AES-128-GCM", M_GCM, 16, EVP_aes_128_gcm AEAD(EVP_aead_aes_128_gcm), NULL, "gcm(aes)"},
    {"aes-256-gcm", "AES-256-GCM", M_GCM, 32, EVP_aes_256_gcm AEAD(EVP_aead_aes_256_gcm), NULL, "gcm(aes)"},
    {"aes-128-ccm", "AES-128-CCM", M_CCM, 16, CCM(EVP_aes_128_ccm) NO_AEAD, "not in BoringSSL", NULL},
    {"aes-256-ccm", "AES-256-CCM", M_CCM, 32, CCM(EVP_aes_256_ccm) NO_AEAD, "not in BoringSSL", NULL},
    {"aes-128-ocb", "AES-128-OCB", M_OCB, 16, OCB(EVP_aes_128_ocb) NO_AEAD, NEEDS_OCB, NULL},
    {"aes-256-ocb", "AES-256-OCB", M_OCB, 32, OCB(EVP_aes_256_ocb) NO_AEAD, NEEDS_OCB, NULL},
    {"chacha20-poly1305", "ChaCha20-Poly1305", M_CHACHAPOLY, 32,
     CHACHAPOLY(EVP_chacha20_poly1305) AEAD(EVP_aead_chacha20_poly1305), NULL, NULL},
    {"aes-128-cbc", "AES-128-CBC", M_CBC, 16, EVP_aes_128_cbc NO_AEAD, NULL, "cbc(aes)"},
    {"aes-256-cbc", "AES-256-CBC", M_CBC, 32, EVP_aes_256_cbc NO_AEAD, NULL, "cbc(aes)"},
    {"aes-128-ctr", "AES-128-CTR", M_CTR, 16, EVP_aes_128_ctr NO_AEAD, NULL, "ctr(aes)"},
    {"aes-256-ctr", "AES-256-CTR", M_CTR, 32, EVP_aes_256_ctr NO_AEAD, NULL, "ctr(aes)"},
};

static const char *const OPERATIONS[] = {"encrypt", "decrypt"};   /* index: decrypt */

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

static int is_aead(cipher_mode m)
{
    return m == M_GCM || m == M_CCM || m == M_OCB || m == M_CHACHAPOLY;
}

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
static int evp_seal(const cipher_state *s, EVP_CIPHER_CTX *ctx, const unsigned char *nonce, unsigned char *out,
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
static int evp_open(const cipher_state *s, EVP_CIPHER_CTX *ctx, const unsigned char *nonce, const unsigned char *ct,
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
static int evp_plain(EVP_CIPHER_CTX *ctx, size_t len, const unsigned char *iv, const unsigned char *in,
                     unsigned char *out)
{
    int n, m;
    return EVP_CipherInit_ex(ctx, NULL, NULL, NULL, iv, -1)
           && EVP_CipherUpdate(ctx, out, &n, in, (int)len)
           && EVP_CipherFinal_ex(ctx, out + n, &m);
}

static int run_evp_seal(void *p, uint64_t iters)
{
    cipher_state *s = p;
    for (uint64_t i = 0; i < iters; i++) {
        next_nonce(s);
        if (!evp_seal(s, s->ctx, s->nonce, s->out, s->tag))
            return 0;
    }
    return 1;
}

static int run_evp_open(void *p, uint64_t iters)
{
    cipher_state *s = p;
    for (uint64_t i = 0; i < iters; i++)
        if (!evp_open(s, s->ctx, s->nonce, s->ct, s->tag, s->out))
            return 0;
    return 1;
}

static int run_evp_encrypt(void *p, uint64_t iters)
{
    cipher_state *s = p;
    for (uint64_t i = 0; i < iters; i++) {
        next_nonce(s);
        if (!evp_plain(s->ctx, s->len, s->nonce, s->in, s->out))
            return 0;
    }
    return 1;
}

static int run_evp_decrypt(void *p, uint64_t iters)
{
    cipher_state *s = p;
    for (uint64_t i = 0; i < iters; i++)
        if (!evp_plain(s->ctx, s->len, s->nonce, s->ct, s->out))
            return 0;
    return 1;
}

/* ---- record workload, EVP_AEAD (BoringSSL, AWS-LC) --------------------- */

#if SP_BSSL
static int aead_seal(cipher_state *s, const unsigned char *nonce, unsigned char *out)
{
    size_t out_len;
    return EVP_AEAD_CTX_seal(s->aead_ctx, out, &out_len, s->len + TAG_LEN, nonce, NONCE_LEN, s->in, s->len,
                             s->aad, AAD_LEN);
}

static int aead_open(cipher_state *s, const unsigned char *nonce, const unsigned char *sealed, unsigned char *out)
{
    size_t out_len;
    return EVP_AEAD_CTX_open(s->aead_ctx, out, &out_len, s->len, nonce, NONCE_LEN, sealed, s->len + TAG_LEN,
                             s->aad, AAD_LEN);
}

static int run_aead_seal(void *p, uint64_t iters)
{
    cipher_state *s = p;
    for (uint64_t i = 0; i < iters; i++) {
        next_nonce(s);
        if (!aead_seal(s, s->nonce, s->out))
            return 0;
    }
    return 1;
}

static int run_aead_open(void *p, uint64_t iters)
{
    cipher_state *s = p;
    for (uint64_t i = 0; i < iters; i++)
        if (!aead_open(s, s->nonce, s->ct, s->out))
            return 0;
    return 1;
}

/* `bssl speed`'s AEAD loop: seal with one fixed nonce and 13 bytes of AD. */
static int run_bssl_speed_seal(void *p, uint64_t iters)
{
    cipher_state *s = p;
    for (uint64_t i = 0; i < iters; i++)
        if (!aead_seal(s, s->nonce, s->out))
            return 0;
    return 1;
}
#endif

/* ---- speed-compat workload (OpenSSL's apps/speed.c) ----------------- */

/* EVP_Update_loop: one in-place update per call on a context keyed once;
 * the final comes once, after the loop. */
static int run_speed_stream(void *p, uint64_t iters)
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
static int run_speed_ccm(void *p, uint64_t iters)
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
static int run_speed_aead_rekey(void *p, uint64_t iters)
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

/* ---- set-up ------------------------------------------------------------ */

/* n/a, with the reason, for a size the mode cannot take (CBC without padding); else PREP_OK. */
static prep_status size_fits(const cipher_alg *alg, size_t len, prep_result *res)
{
    if (alg->mode == M_CBC && len % 16 != 0)
        return prep_na(res, "CBC without padding needs a multiple of 16 bytes");
    return PREP_OK;
}

static void release_cipher(void *p)
{
    cipher_state *s = p;
    EVP_CIPHER_CTX_free(s->ctx);
#if SP_OSSL3
    EVP_CIPHER_free(s->owned);
#endif
#if SP_BSSL
    if (s->aead_ctx)
        EVP_AEAD_CTX_free(s->aead_ctx);
#endif
    free(s->in);
    free(s->out);
    free(s->ct);
    free(s);
}

/* The EVP_CIPHER: fetched explicitly once on OpenSSL 3 (the fast way to use
 * 3.x, which the api suite compares with implicit fetching). */
static int load_evp_cipher(cipher_state *s)
{
#if SP_OSSL3
    s->owned = EVP_CIPHER_fetch(NULL, s->alg->fetch_name, NULL);
    s->cipher = s->owned;
#else
    s->cipher = s->alg->legacy ? s->alg->legacy() : NULL;
#endif
    return s->cipher != NULL;
}

static EVP_CIPHER_CTX *keyed_ctx(const cipher_state *s, int enc)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (ctx && EVP_CipherInit_ex(ctx, s->cipher, NULL, s->key, s->nonce, enc) && EVP_CIPHER_CTX_set_padding(ctx, 0))
        return ctx;
    EVP_CIPHER_CTX_free(ctx);
    return NULL;
}

/* CBC/CTR: the timed context is keyed for its direction (a CBC decryption
 * key schedule differs); a second context checks the round trip. */
static prep_status setup_evp_plain(cipher_state *s, int decrypt, bench_case *out, prep_result *res)
{
    EVP_CIPHER_CTX *other = keyed_ctx(s, decrypt);
    EVP_CIPHER_CTX_free(s->ctx);
    s->ctx = keyed_ctx(s, !decrypt);
    if (!s->ctx || !other) {
        EVP_CIPHER_CTX_free(other);
        return prep_error(res, "cannot key %s", s->alg->name);
    }
    int ok = evp_plain(decrypt ? other : s->ctx, s->len, s->nonce, s->in, s->ct)
             && evp_plain(decrypt ? s->ctx : other, s->len, s->nonce, s->ct, s->out)
             && memcmp(s->out, s->in, s->len) == 0 && memcmp(s->ct, s->in, s->len) != 0;
    EVP_CIPHER_CTX_free(other);
    if (!ok)
        return prep_error(res, "%s round trip failed", s->alg->name);
    out->run = decrypt ? run_evp_decrypt : run_evp_encrypt;
    return PREP_OK;
}

/* An AEAD context keyed for one direction, with a 12-byte nonce and a
 * 16-byte tag. Each direction needs its own (OCB's and CCM's key set-up
 * depends on it). */
static EVP_CIPHER_CTX *aead_ctx(const cipher_state *s, int enc)
{
    cipher_mode m = s->alg->mode;
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (ctx && EVP_CipherInit_ex(ctx, s->cipher, NULL, NULL, NULL, enc)
        && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, NONCE_LEN, NULL) > 0
        && ((m != M_CCM && m != M_OCB) || EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, TAG_LEN, NULL) > 0)
        && EVP_CipherInit_ex(ctx, NULL, NULL, s->key, NULL, enc))
        return ctx;
    EVP_CIPHER_CTX_free(ctx);
    return NULL;
}

/* AEADs: key once for the record workload, then seal, open and compare; a
 * damaged tag must be refused. */
static prep_status setup_evp_record(cipher_state *s, int decrypt, bench_case *out, prep_result *res)
{
    if (!is_aead(s->alg->mode))
        return setup_evp_plain(s, decrypt, out, res);
    EVP_CIPHER_CTX *enc = aead_ctx(s, 1), *dec = aead_ctx(s, 0);
    const char *failure = NULL;
    if (!enc || !dec)
        failure = "cannot key %s with a 12-byte nonce and 16-byte tag";
    else if (!evp_seal(s, enc, s->nonce, s->ct, s->tag))
        failure = "%s seal failed";
    else if (!evp_open(s, dec, s->nonce, s->ct, s->tag, s->out) || memcmp(s->out, s->in, s->len) != 0)
        failure = "%s open did not give back the plaintext";
    else {
        s->tag[0] ^= 1;
        if (evp_open(s, dec, s->nonce, s->ct, s->tag, s->out))
            failure = "%s accepted a damaged tag";
        s->tag[0] ^= 1;
        ERR_clear_error();
    }
    if (failure) {
        EVP_CIPHER_CTX_free(enc);
        EVP_CIPHER_CTX_free(dec);
        return prep_error(res, failure, s->alg->name);
    }
    EVP_CIPHER_CTX_free(s->ctx);
    s->ctx = decrypt ? dec : enc;
    EVP_CIPHER_CTX_free(decrypt ? enc : dec);
    out->run = decrypt ? run_evp_open : run_evp_seal;
    return PREP_OK;
}

#if SP_BSSL
static prep_status setup_aead_record(cipher_state *s, int decrypt, bench_case *out, prep_result *res)
{
    s->aead_ctx = EVP_AEAD_CTX_new(s->alg->aead(), s->key, (size_t)s->alg->key_len, TAG_LEN);
    if (!s->aead_ctx)
        return prep_error(res, "EVP_AEAD_CTX_new failed for %s", s->alg->name);
    if (!aead_seal(s, s->nonce, s->ct) || !aead_open(s, s->nonce, s->ct, s->out)
        || memcmp(s->out, s->in, s->len) != 0)
        return prep_error(res, "%s seal/open round trip failed", s->alg->name);
    s->ct[s->len] ^= 1;
    if (aead_open(s, s->nonce, s->ct, s->out))
        return prep_error(res, "%s accepted a damaged tag", s->alg->name);
    s->ct[s->len] ^= 1;
    ERR_clear_error();
    out->run = decrypt ? run_aead_open : run_aead_seal;
    snprintf(out->note, sizeof(out->note), "EVP_AEAD API (as BoringSSL's TLS stack uses it)");
    return PREP_OK;
}
#endif

#if SP_BSSL
static prep_status setup_bssl_speed(cipher_state *s, bench_case *out, prep_result *res)
{
    s->aead_ctx = EVP_AEAD_CTX_new(s->alg->aead(), s->key, (size_t)s->alg->key_len, TAG_LEN);
    if (!s->aead_ctx || !aead_seal(s, s->nonce, s->ct))
        return prep_error(res, "EVP_AEAD set-up failed for %s", s->alg->name);
    out->run = run_bssl_speed_seal;
    snprintf(out->note, sizeof(out->note), "bssl speed loop: EVP_AEAD_CTX_seal, fixed nonce, 13-byte AD");
    return PREP_OK;
}
#endif

static prep_status setup_speed_compat(cipher_state *s, bench_case *out, prep_result *res)
{
    static const unsigned char zero_iv[32];
    cipher_mode m = s->alg->mode;
    if (SP_SPEED_AEAD_REKEY && (m == M_GCM || m == M_CCM || m == M_OCB)) {
        if (!EVP_CipherInit_ex(s->ctx, s->cipher, NULL, NULL, NULL, 1) || !run_speed_aead_rekey(s, 1))
            return prep_error(res, "speed-compat set-up failed for %s", s->alg->name);
        out->run = run_speed_aead_rekey;
        snprintf(out->note, sizeof(out->note), "openssl speed loop: re-key, zero IV, update, final per call");
        return PREP_OK;
    }
    /* Older speed.c: IV in the first init (default CCM nonce/tag), key in the second. */
    if (!EVP_CipherInit_ex(s->ctx, s->cipher, NULL, NULL, zero_iv, 1) || !EVP_CIPHER_CTX_set_padding(s->ctx, 0)
        || !EVP_CipherInit_ex(s->ctx, NULL, NULL, s->key, NULL, -1))
        return prep_error(res, "speed-compat set-up failed for %s", s->alg->name);
    out->run = m == M_CCM ? run_speed_ccm : run_speed_stream;
    snprintf(out->note, sizeof(out->note), m == M_CCM ? "openssl speed loop: CCM length + update per call"
                                                       : "openssl speed loop: one streaming update per call");
    return PREP_OK;
}

prep_status prepare_cipher(const case_name *name, bench_case *out, prep_result *res)
{
    const cipher_alg *alg;
    size_t len;
    int decrypt, compat;
    prep_status status;

    if (name->n < 4 || name->n > 5)
        return prep_unknown(res, "cipher cases are cipher/ALG/encrypt|decrypt/SIZE[/record|speed-compat]");
    int row = sp_find(name->part[1], SP_ROWS(CIPHERS)), op = sp_find(name->part[2], SP_ROWS(OPERATIONS));
    int workload = name->n == 5 ? sp_find(name->part[4], SP_ROWS(WORKLOADS)) : 0;
    if (row < 0)
        return prep_unknown(res, "unknown cipher \"%s\"", name->part[1]);
    alg = &CIPHERS[row];
    if (op < 0)
        return prep_unknown(res, "cipher operation must be encrypt or decrypt, not \"%s\"", name->part[2]);
    if (!parse_size(name->part[3], &len))
        return prep_unknown(res, "bad size \"%s\" (a positive number of bytes, at most 64 MiB)", name->part[3]);
    if (workload < 0)
        return prep_unknown(res, "unknown workload \"%s\" (record or speed-compat)", name->part[4]);
    decrypt = op == 1;
    compat = workload == 1;            /* WORKLOADS[1]: speed-compat */
    if (compat && decrypt)
        return prep_na(res, "the speed-compat workload reproduces `openssl speed`'s default, which encrypts");
    if (size_fits(alg, len, res) != PREP_OK)
        return PREP_NA;

    cipher_state *s = calloc(1, sizeof(*s));
    if (!s)
        return prep_error(res, "out of memory");
    s->alg = alg;
    s->len = len;
    s->in = malloc(len + 64);
    s->out = malloc(len + 64);
    s->ct = malloc(len + 64);
    s->ctx = EVP_CIPHER_CTX_new();
    fill_pattern(s->key, sizeof(s->key), 1);
    fill_pattern(s->base_nonce, sizeof(s->base_nonce), 2);
    memcpy(s->nonce, s->base_nonce, NONCE_LEN);
    fill_pattern(s->aad, sizeof(s->aad), 3);
    if (s->in)
        fill_pattern(s->in, len, 4);
    if (!s->in || !s->out || !s->ct || !s->ctx) {
        release_cipher(s);
        return prep_error(res, "out of memory");
    }
    memcpy(s->out, s->in, len);
#if SP_BSSL
    if (alg->aead)   /* BoringSSL-style libraries seal TLS records through EVP_AEAD */
        status = compat ? setup_bssl_speed(s, out, res) : setup_aead_record(s, decrypt, out, res);
    else
#endif
    if (!load_evp_cipher(s))
        status = prep_na(res, "%s does not offer %s", sp_flavor(), alg->fetch_name);
    else
        status = compat ? setup_speed_compat(s, out, res) : setup_evp_record(s, decrypt, out, res);
    return sp_take(status, out, s, release_cipher, UNIT_BYTES, len);
}

/* ---- the kernel's side (afalg.c) ---------------------------------------- */

size_t cipher_kernel_algs(kernel_alg *out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < sizeof(CIPHERS) / sizeof(CIPHERS[0]) && n < max; i++)
        if (CIPHERS[i].kernel)
            out[n++] = (kernel_alg){CIPHERS[i].name, CIPHERS[i].kernel,
                                    is_aead(CIPHERS[i].mode) ? "aead" : "skcipher", CIPHERS[i].key_len};
    return n;
}

/* One encryption on a context keyed as the record workload keys it: what the kernel must give back. */
prep_status cipher_reference(const char *name, const unsigned char *key, const unsigned char *iv,
                             const unsigned char *aad, unsigned char *in, size_t len, unsigned char *out,
                             prep_result *res)
{
    int row = sp_find(name, SP_ROWS(CIPHERS));
    cipher_state s;
    EVP_CIPHER_CTX *ctx = NULL;
    prep_status status = PREP_OK;

    if (row < 0)
        return prep_unknown(res, "unknown cipher \"%s\"", name);
    memset(&s, 0, sizeof(s));
    s.alg = &CIPHERS[row];
    s.in = in;
    s.len = len;
    memcpy(s.key, key, (size_t)s.alg->key_len);
    memcpy(s.aad, aad, AAD_LEN);
    if (size_fits(s.alg, len, res) != PREP_OK)
        return PREP_NA;
    if (!load_evp_cipher(&s))
        status = prep_na(res, "%s does not offer %s", sp_flavor(), s.alg->fetch_name);
    else if (is_aead(s.alg->mode) ? !(ctx = aead_ctx(&s, 1)) || !evp_seal(&s, ctx, iv, out, out + len)
                                  : !(ctx = keyed_ctx(&s, 1)) || !evp_plain(ctx, len, iv, in, out))
        status = prep_error(res, "%s cannot encrypt %zu bytes with %s", sp_flavor(), len, s.alg->fetch_name);
    EVP_CIPHER_CTX_free(ctx);
#if SP_OSSL3
    EVP_CIPHER_free(s.owned);
#endif
    return status;
}

void list_cipher(void)
{
    static const id_template IDS[] = {{"cipher/{algorithm}/{operation}/{size}[/{workload}]", NULL, NULL, NULL}};
    printf("\"cipher\":{");
    json_ids(SP_IDS(IDS));
    printf(",\"algorithms\":[");
    for (size_t i = 0; i < sizeof(CIPHERS) / sizeof(CIPHERS[0]); i++) {
        json_row(i, CIPHERS[i].name, CIPHERS[i].needs);
        printf(",\"aead\":%s}", is_aead(CIPHERS[i].mode) ? "true" : "false");
    }
    printf("]");
    json_names("operations", SP_ROWS(OPERATIONS));
    json_names("workloads", SP_ROWS(WORKLOADS));
    putchar('}');
}
