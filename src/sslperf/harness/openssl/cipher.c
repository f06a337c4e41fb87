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

#include "cipher.h"
#include "compat.h"
#include "harness.h"
#include "families.h"

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
    int ok = cipher_plain(decrypt ? other : s->ctx, s->len, s->nonce, s->in, s->ct)
             && cipher_plain(decrypt ? s->ctx : other, s->len, s->nonce, s->ct, s->out)
             && memcmp(s->out, s->in, s->len) == 0 && memcmp(s->ct, s->in, s->len) != 0;
    EVP_CIPHER_CTX_free(other);
    if (!ok)
        return prep_error(res, "%s round trip failed", s->alg->name);
    out->run = decrypt ? cipher_run_evp_decrypt : cipher_run_evp_encrypt;
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
    else if (!cipher_seal(s, enc, s->nonce, s->ct, s->tag))
        failure = "%s seal failed";
    else if (!cipher_open(s, dec, s->nonce, s->ct, s->tag, s->out) || memcmp(s->out, s->in, s->len) != 0)
        failure = "%s open did not give back the plaintext";
    else {
        s->tag[0] ^= 1;
        if (cipher_open(s, dec, s->nonce, s->ct, s->tag, s->out))
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
    out->run = decrypt ? cipher_run_evp_open : cipher_run_evp_seal;
    return PREP_OK;
}

#if SP_BSSL
static prep_status setup_aead_record(cipher_state *s, int decrypt, bench_case *out, prep_result *res)
{
    s->aead_ctx = EVP_AEAD_CTX_new(s->alg->aead(), s->key, (size_t)s->alg->key_len, TAG_LEN);
    if (!s->aead_ctx)
        return prep_error(res, "EVP_AEAD_CTX_new failed for %s", s->alg->name);
    if (!cipher_aead_seal(s, s->nonce, s->ct) || !cipher_aead_open(s, s->nonce, s->ct, s->out)
        || memcmp(s->out, s->in, s->len) != 0)
        return prep_error(res, "%s seal/open round trip failed", s->alg->name);
    s->ct[s->len] ^= 1;
    if (cipher_aead_open(s, s->nonce, s->ct, s->out))
        return prep_error(res, "%s accepted a damaged tag", s->alg->name);
    s->ct[s->len] ^= 1;
    ERR_clear_error();
    out->run = decrypt ? cipher_run_aead_open : cipher_run_aead_seal;
    snprintf(out->note, sizeof(out->note), "EVP_AEAD API (as BoringSSL's TLS stack uses it)");
    return PREP_OK;
}
#endif

#if SP_BSSL
static prep_status setup_bssl_speed(cipher_state *s, bench_case *out, prep_result *res)
{
    s->aead_ctx = EVP_AEAD_CTX_new(s->alg->aead(), s->key, (size_t)s->alg->key_len, TAG_LEN);
    if (!s->aead_ctx || !cipher_aead_seal(s, s->nonce, s->ct))
        return prep_error(res, "EVP_AEAD set-up failed for %s", s->alg->name);
    out->run = cipher_run_bssl_speed_seal;
    snprintf(out->note, sizeof(out->note), "bssl speed loop: EVP_AEAD_CTX_seal, fixed nonce, 13-byte AD");
    return PREP_OK;
}
#endif

static prep_status setup_speed_compat(cipher_state *s, bench_case *out, prep_result *res)
{
    static const unsigned char zero_iv[32];
    cipher_mode m = s->alg->mode;
    if (SP_SPEED_AEAD_REKEY && (m == M_GCM || m == M_CCM || m == M_OCB)) {
        if (!EVP_CipherInit_ex(s->ctx, s->cipher, NULL, NULL, NULL, 1) || !cipher_run_speed_aead_rekey(s, 1))
            return prep_error(res, "speed-compat set-up failed for %s", s->alg->name);
        out->run = cipher_run_speed_aead_rekey;
        snprintf(out->note, sizeof(out->note), "openssl speed loop: re-key, zero IV, update, final per call");
        return PREP_OK;
    }
    /* Older speed.c: IV in the first init (default CCM nonce/tag), key in the second. */
    if (!EVP_CipherInit_ex(s->ctx, s->cipher, NULL, NULL, zero_iv, 1) || !EVP_CIPHER_CTX_set_padding(s->ctx, 0)
        || !EVP_CipherInit_ex(s->ctx, NULL, NULL, s->key, NULL, -1))
        return prep_error(res, "speed-compat set-up failed for %s", s->alg->name);
    out->run = m == M_CCM ? cipher_run_speed_ccm : cipher_run_speed_stream;
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
    else if (is_aead(s.alg->mode) ? !(ctx = aead_ctx(&s, 1)) || !cipher_seal(&s, ctx, iv, out, out + len)
                                  : !(ctx = keyed_ctx(&s, 1)) || !cipher_plain(ctx, len, iv, in, out))
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
