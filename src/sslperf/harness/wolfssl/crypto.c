/* wolfCrypt primitives, under the case names of the OpenSSL backend:
 *
 *   cipher/ALG/encrypt|decrypt/SIZE[/record]   aes-128-gcm, aes-256-gcm, chacha20-poly1305: one TLS record per
 *                                              call (a fresh nonce, 13 bytes of AAD, the 16-byte tag)
 *   digest/ALG/SIZE[/record]                   sha256, sha384, sha512, sha3-256, sha3-512: init, update, final
 *   mac/ALG/SIZE                               hmac-sha256, hmac-sha512: the key kept, one message per call
 *   sig/ALG/sign|verify                        rsa-2048/3072 (PKCS#1 v1.5, SHA-256), ecdsa-p256/p384 (SHA-256),
 *                                              ed25519, ml-dsa-44/65/87 (pure, empty context); a 32-byte message
 *   kex/ALG/derive                             x25519, ecdh-p256, ecdh-p384
 *   kem/ALG/keygen|encaps|decaps               ml-kem-512/768/1024
 *   keygen/ALG                                 a new key pair of any of the above
 *
 * Keys and contexts are made before timing; each case is checked once first
 * (an AEAD opens what it sealed and refuses a changed tag; digests and MACs
 * give their published answers; a signature verifies and a changed message
 * does not; both sides derive one secret; decaps gives the encapsulated
 * secret). What else the catalog names is n/a with the reason. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <wolfssl/options.h>
#include <wolfssl/wolfcrypt/aes.h>
#include <wolfssl/wolfcrypt/chacha20_poly1305.h>
#include <wolfssl/wolfcrypt/curve25519.h>
#include <wolfssl/wolfcrypt/ecc.h>
#include <wolfssl/wolfcrypt/ed25519.h>
#include <wolfssl/wolfcrypt/hash.h>
#include <wolfssl/wolfcrypt/hmac.h>
#include <wolfssl/wolfcrypt/random.h>
#include <wolfssl/wolfcrypt/rsa.h>
#include <wolfssl/wolfcrypt/sha256.h>
#include <wolfssl/wolfcrypt/sha3.h>
#include <wolfssl/wolfcrypt/sha512.h>
#include <wolfssl/wolfcrypt/signature.h>
#include <wolfssl/wolfcrypt/wc_mlkem.h>

#include "harness.h"
#include "wolfssl_cases.h"

#define AAD_LEN 13
#define TAG_LEN 16
#define NONCE_LEN 12
#define MAX_RECORD (16u * 1024 * 1024)

/* ---- ciphers ------------------------------------------------------------- */

static const struct {
    const char *name;
    int key_len;       /* 0: ChaCha20-Poly1305 */
} AEADS[] = {{"aes-128-gcm", 16}, {"aes-256-gcm", 32}, {"chacha20-poly1305", 0}};

typedef struct {
    int row, decrypt;
    Aes aes;
    unsigned char key[32], nonce[NONCE_LEN], aad[AAD_LEN], tag[TAG_LEN];
    unsigned char *in, *out, *sealed;
    size_t len;
    uint64_t seq;
} aead_state;

static int seal(aead_state *s, unsigned char *out, unsigned char *tag)
{
    s->nonce[NONCE_LEN - 1] ^= (unsigned char)++s->seq;     /* a fresh nonce per record, as TLS 1.3 makes it */
    if (AEADS[s->row].key_len)
        return wc_AesGcmEncrypt(&s->aes, out, s->in, (word32)s->len, s->nonce, NONCE_LEN, tag, TAG_LEN, s->aad,
                                AAD_LEN) == 0;
    return wc_ChaCha20Poly1305_Encrypt(s->key, s->nonce, s->aad, AAD_LEN, s->in, (word32)s->len, out, tag) == 0;
}

static int open_sealed(aead_state *s, const unsigned char *tag)
{
    if (AEADS[s->row].key_len)
        return wc_AesGcmDecrypt(&s->aes, s->out, s->sealed, (word32)s->len, s->nonce, NONCE_LEN, tag, TAG_LEN, s->aad,
                                AAD_LEN) == 0;
    return wc_ChaCha20Poly1305_Decrypt(s->key, s->nonce, s->aad, AAD_LEN, s->sealed, (word32)s->len, tag, s->out) == 0;
}

static int run_aead(void *p, uint64_t iters)
{
    aead_state *s = p;
    for (uint64_t i = 0; i < iters; i++)
        if (!(s->decrypt ? open_sealed(s, s->tag) : seal(s, s->out, s->tag)))
            return 0;
    return 1;
}

static void release_aead(void *p)
{
    aead_state *s = p;
    if (AEADS[s->row].key_len)
        wc_AesFree(&s->aes);
    free(s->in);
    free(s->out);
    free(s->sealed);
    free(s);
}

prep_status prepare_wolf_cipher(const case_name *name, bench_case *out, prep_result *res)
{
    size_t len;
    if (name->n < 4 || name->n > 5)
        return prep_unknown(res, "cipher cases are cipher/ALG/encrypt|decrypt/SIZE[/record]");
    int row = sp_find(name->part[1], SP_ROWS(AEADS)), decrypt = strcmp(name->part[2], "decrypt") == 0;
    if (!decrypt && strcmp(name->part[2], "encrypt") != 0)
        return prep_unknown(res, "the operation is encrypt or decrypt, not \"%s\"", name->part[2]);
    if (!parse_size(name->part[3], &len) || len > MAX_RECORD)
        return prep_unknown(res, "the size must be 1 to %u bytes, not \"%s\"", MAX_RECORD, name->part[3]);
    if (name->n == 5 && strcmp(name->part[4], "record") != 0)
        return prep_na(res, "the %s workload is a loop of OpenSSL's or BoringSSL's speed tool; wolfSSL measures "
                            "the record workload", name->part[4]);
    if (row < 0)
        return prep_na(res, "sslperf's wolfSSL backend measures the AEADs TLS uses (%s), not %s",
                       "aes-128-gcm, aes-256-gcm, chacha20-poly1305", name->part[1]);
    aead_state *s = calloc(1, sizeof(*s));
    if (!s)
        return prep_error(res, "out of memory");
    s->row = row;
    s->decrypt = decrypt;
    s->len = len;
    s->in = malloc(len);
    s->out = malloc(len);
    s->sealed = malloc(len);
    prep_status status = PREP_OK;
    fill_pattern(s->key, sizeof(s->key), 1);
    fill_pattern(s->nonce, sizeof(s->nonce), 2);
    fill_pattern(s->aad, sizeof(s->aad), 3);
    if (!s->in || !s->out || !s->sealed)
        status = prep_error(res, "out of memory for %zu-byte buffers", len);
    else if (AEADS[row].key_len && (wc_AesInit(&s->aes, NULL, INVALID_DEVID) != 0
                                    || wc_AesGcmSetKey(&s->aes, s->key, (word32)AEADS[row].key_len) != 0))
        status = prep_error(res, "wolfCrypt refused the %s key", AEADS[row].name);
    if (status == PREP_OK) {
        /* Check: what is sealed opens to the plaintext, and a changed tag is refused. */
        fill_pattern(s->in, len, 4);
        unsigned char bad[TAG_LEN];
        if (!seal(s, s->sealed, s->tag) || !open_sealed(s, s->tag) || memcmp(s->out, s->in, len) != 0)
            status = prep_error(res, "%s did not open what it sealed", AEADS[row].name);
        memcpy(bad, s->tag, TAG_LEN);
        bad[0] ^= 1;
        if (status == PREP_OK && open_sealed(s, bad))
            status = prep_error(res, "%s accepted a changed tag", AEADS[row].name);
    }
    if (sp_take(status, out, s, release_aead, UNIT_BYTES, len) != PREP_OK)
        return status;
    out->run = run_aead;
    snprintf(out->note, sizeof(out->note), "%s", AEADS[row].key_len ? "wc_AesGcmEncrypt/Decrypt, key schedule kept"
                                                                     : "wc_ChaCha20Poly1305_Encrypt/Decrypt");
    return PREP_OK;
}

/* ---- digests and MACs ------------------------------------------------------------ */

static const struct {
    const char *name;
    enum wc_HashType type;
    const char *abc;       /* the digest of "abc" (FIPS 180-4, FIPS 202) */
} DIGESTS[] = {
    {"sha256", WC_HASH_TYPE_SHA256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
    {"sha384", WC_HASH_TYPE_SHA384, "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7"},
    {"sha512", WC_HASH_TYPE_SHA512, "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"},
    {"sha3-256", WC_HASH_TYPE_SHA3_256, "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532"},
    {"sha3-512", WC_HASH_TYPE_SHA3_512, "b751850b1a57168a5693cd924b6b096e08f621827444f70d884f5d0240d2712e10e116e9192af3c91a7ec57647e3934057340b4cf408d5a56592f8274eec53f0"},
};

/* RFC 4231 test case 2: key "Jefe", "what do ya want for nothing?". */
static const struct {
    const char *name;
    int type;
    const char *tag;
} MACS[] = {
    {"hmac-sha256", WC_SHA256, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
    {"hmac-sha512", WC_SHA512, "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737"},
};

typedef struct {
    int row, mac;
    wc_HashAlg hash;
    Hmac hmac;
    unsigned char *in, digest[WC_MAX_DIGEST_SIZE];
    size_t len;
} hash_state;

static int hash_once(hash_state *s, const unsigned char *in, size_t len)
{
    if (s->mac)
        return wc_HmacUpdate(&s->hmac, in, (word32)len) == 0 && wc_HmacFinal(&s->hmac, s->digest) == 0;
    enum wc_HashType type = DIGESTS[s->row].type;
    return wc_HashInit(&s->hash, type) == 0 && wc_HashUpdate(&s->hash, type, in, (word32)len) == 0
           && wc_HashFinal(&s->hash, type, s->digest) == 0;
}

static int run_hash(void *p, uint64_t iters)
{
    hash_state *s = p;
    for (uint64_t i = 0; i < iters; i++)
        if (!hash_once(s, s->in, s->len))
            return 0;
    return 1;
}

static void release_hash(void *p)
{
    hash_state *s = p;
    if (s->mac)
        wc_HmacFree(&s->hmac);
    else
        wc_HashFree(&s->hash, DIGESTS[s->row].type);
    free(s->in);
    free(s);
}

static prep_status prepare_hash(const case_name *name, bench_case *out, prep_result *res, int mac)
{
    size_t len;
    const char *family = mac ? "mac" : "digest";
    if (name->n < 3 || name->n > (mac ? 3 : 4))
        return prep_unknown(res, mac ? "mac cases are mac/ALG/SIZE" : "digest cases are digest/ALG/SIZE[/record]");
    if (!parse_size(name->part[2], &len) || len > MAX_RECORD)
        return prep_unknown(res, "the size must be 1 to %u bytes, not \"%s\"", MAX_RECORD, name->part[2]);
    if (!mac && name->n == 4 && strcmp(name->part[3], "record") != 0)
        return prep_na(res, "the %s workload is a loop of OpenSSL's or BoringSSL's speed tool; wolfSSL measures "
                            "the record workload", name->part[3]);
    int row = mac ? sp_find(name->part[1], SP_ROWS(MACS)) : sp_find(name->part[1], SP_ROWS(DIGESTS));
    if (row < 0)
        return prep_na(res, "sslperf's wolfSSL backend does not measure the %s %s", family, name->part[1]);
    hash_state *s = calloc(1, sizeof(*s));
    if (!s)
        return prep_error(res, "out of memory");
    s->row = row;
    s->mac = mac;
    s->len = len;
    s->in = malloc(len);
    prep_status status = s->in ? PREP_OK : prep_error(res, "out of memory for %zu bytes", len);
    if (status == PREP_OK && mac
        && (wc_HmacInit(&s->hmac, NULL, INVALID_DEVID) != 0
            || wc_HmacSetKey(&s->hmac, MACS[row].type, (const byte *)"Jefe", 4) != 0))
        status = prep_error(res, "wolfCrypt refused the %s key", MACS[row].name);
    if (status == PREP_OK) {
        /* The published answer, twice: the second time on the context the first left (as the loop reuses it). */
        static const char what[] = "what do ya want for nothing?";
        const unsigned char *msg = (const unsigned char *)(mac ? what : "abc");
        size_t msg_len = mac ? strlen(what) : 3;
        const char *expected = mac ? MACS[row].tag : DIGESTS[row].abc;
        for (int i = 0; i < 2 && status == PREP_OK; i++)
            if (!hash_once(s, msg, msg_len) || !hex_equal(s->digest, strlen(expected) / 2, expected))
                status = prep_error(res, "%s gave a wrong answer for its test vector", name->part[1]);
    }
    if (sp_take(status, out, s, release_hash, UNIT_BYTES, len) != PREP_OK)
        return status;
    fill_pattern(s->in, len, 5);
    out->run = run_hash;
    return PREP_OK;
}

prep_status prepare_wolf_digest(const case_name *name, bench_case *out, prep_result *res)
{
    return prepare_hash(name, out, res, 0);
}

prep_status prepare_wolf_mac(const case_name *name, bench_case *out, prep_result *res)
{
    return prepare_hash(name, out, res, 1);
}
