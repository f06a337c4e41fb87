/* Digests: digest/ALG/SIZE[/WORKLOAD]
 *
 *   record (default): one context reused, init + update + final per call
 *   speed-compat: `openssl speed -evp`'s one-shot EVP_Digest per call
 *                 (a fresh context inside every call)
 * Each digest is checked against its known answer for "abc" first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat.h"
#include "harness.h"
#include "families.h"

typedef struct {
    const char *name, *fetch_name, *abc;
    const EVP_MD *(*legacy)(void);
    const char *needs;       /* for `harness list`: which libraries lack it */
    const char *kernel;      /* the Linux kernel's name, where AF_ALG offers it (afalg.c) */
} digest_alg;

#if defined(OPENSSL_NO_BLAKE2) || SP_BSSL || SP_LIBRESSL
#define BLAKE2B512 NULL
#else
#define BLAKE2B512 EVP_blake2b512
#endif
#if SP_BORINGSSL
#define SHA3(fn) NULL
#else
#define SHA3(fn) fn
#endif

/* Every row is in every build (a library that lacks one answers n/a). */
static const digest_alg DIGESTS[] = {
    {"sha1", "SHA1", "a9993e364706816aba3e25717850c26c9cd0d89d", EVP_sha1, NULL, "sha1"},
    {"sha256", "SHA256", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", EVP_sha256, NULL,
     "sha256"},
    {"sha384", "SHA384",
     "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7", EVP_sha384,
     NULL, "sha384"},
    {"sha512", "SHA512",
     "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2"
     "a9ac94fa54ca49f", EVP_sha512, NULL, "sha512"},
    {"sha3-256", "SHA3-256", "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532", SHA3(EVP_sha3_256),
     "not in BoringSSL", NULL},
    {"sha3-512", "SHA3-512",
     "b751850b1a57168a5693cd924b6b096e08f621827444f70d884f5d0240d2712e10e116e9192af3c91a7ec57647e3934057340b4cf408d5a"
     "56592f8274eec53f0", SHA3(EVP_sha3_512), "not in BoringSSL", NULL},
    {"blake2b512", "BLAKE2B-512",
     "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d17d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925a"
     "b92386edd4009923", BLAKE2B512, "not in BoringSSL, AWS-LC or LibreSSL", NULL},
};

typedef struct {
    EVP_MD *owned;
    const EVP_MD *md;
    EVP_MD_CTX *ctx;
    unsigned char *in;
    size_t len;
    unsigned char out[EVP_MAX_MD_SIZE];
} digest_state;

static int run_digest_reuse(void *p, uint64_t iters)
{
    digest_state *s = p;
    unsigned int n;
    for (uint64_t i = 0; i < iters; i++)
        if (!EVP_DigestInit_ex(s->ctx, s->md, NULL) || !EVP_DigestUpdate(s->ctx, s->in, s->len)
            || !EVP_DigestFinal_ex(s->ctx, s->out, &n))
            return 0;
    return 1;
}

static int run_digest_oneshot(void *p, uint64_t iters)
{
    digest_state *s = p;
    for (uint64_t i = 0; i < iters; i++)
        if (!EVP_Digest(s->in, s->len, s->out, NULL, s->md, NULL))
            return 0;
    return 1;
}

/* The EVP_MD: fetched explicitly once on OpenSSL 3 (freed with `*owned`), the static one before. */
static const EVP_MD *load_md(const digest_alg *alg, EVP_MD **owned)
{
#if SP_OSSL3
    return *owned = EVP_MD_fetch(NULL, alg->fetch_name, NULL);
#else
    *owned = NULL;
    return alg->legacy ? alg->legacy() : NULL;
#endif
}

static void release_digest(void *p)
{
    digest_state *s = p;
    EVP_MD_CTX_free(s->ctx);
#if SP_OSSL3
    EVP_MD_free(s->owned);
#endif
    free(s->in);
    free(s);
}

prep_status prepare_digest(const case_name *name, bench_case *out, prep_result *res)
{
    const digest_alg *alg;
    size_t len;
    unsigned int n = 0;
    int compat;

    if (name->n < 3 || name->n > 4)
        return prep_unknown(res, "digest cases are digest/ALG/SIZE[/record|speed-compat]");
    int row = sp_find(name->part[1], SP_ROWS(DIGESTS));
    int workload = name->n == 4 ? sp_find(name->part[3], SP_ROWS(WORKLOADS)) : 0;
    if (row < 0)
        return prep_unknown(res, "unknown digest \"%s\"", name->part[1]);
    alg = &DIGESTS[row];
    if (!parse_size(name->part[2], &len))
        return prep_unknown(res, "bad size \"%s\" (a positive number of bytes, at most 64 MiB)", name->part[2]);
    if (workload < 0)
        return prep_unknown(res, "unknown workload \"%s\" (record or speed-compat)", name->part[3]);
    compat = workload == 1;            /* WORKLOADS[1]: speed-compat */

    digest_state *s = calloc(1, sizeof(*s));
    if (!s)
        return prep_error(res, "out of memory");
    if (!(s->in = malloc(len)) || !(s->ctx = EVP_MD_CTX_new())) {
        release_digest(s);
        return prep_error(res, "out of memory");
    }
    fill_pattern(s->in, len, 5);
    s->len = len;
    s->md = load_md(alg, &s->owned);
    if (!s->md) {
        release_digest(s);
        return prep_na(res, "%s does not offer %s", sp_flavor(), alg->fetch_name);
    }
    if (!EVP_Digest("abc", 3, s->out, &n, s->md, NULL) || !hex_equal(s->out, n, alg->abc)) {
        release_digest(s);
        return prep_error(res, "%s of \"abc\" is not the known answer", alg->fetch_name);
    }
    sp_take(PREP_OK, out, s, release_digest, UNIT_BYTES, len);
    out->run = compat ? run_digest_oneshot : run_digest_reuse;
    if (compat)
        snprintf(out->note, sizeof(out->note), "openssl speed loop: one-shot EVP_Digest per call");
    return PREP_OK;
}

/* ---- the kernel's side (afalg.c) ---------------------------------------- */

size_t digest_kernel_algs(kernel_alg *out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < sizeof(DIGESTS) / sizeof(DIGESTS[0]) && n < max; i++)
        if (DIGESTS[i].kernel)
            out[n++] = (kernel_alg){DIGESTS[i].name, DIGESTS[i].kernel, "hash", 0};
    return n;
}

prep_status digest_reference(const char *name, const unsigned char *in, size_t len, unsigned char *out,
                             unsigned int *out_len, prep_result *res)
{
    int row = sp_find(name, SP_ROWS(DIGESTS));
    EVP_MD *owned = NULL;
    const EVP_MD *md = row < 0 ? NULL : load_md(&DIGESTS[row], &owned);
    prep_status status = PREP_OK;

    if (row < 0)
        return prep_unknown(res, "unknown digest \"%s\"", name);
    if (!md)
        status = prep_na(res, "%s does not offer %s", sp_flavor(), DIGESTS[row].fetch_name);
    else if (!EVP_Digest(in, len, out, out_len, md, NULL))
        status = prep_error(res, "%s cannot hash with %s", sp_flavor(), DIGESTS[row].fetch_name);
#if SP_OSSL3
    EVP_MD_free(owned);
#endif
    return status;
}

void list_digest(void)
{
    static const id_template IDS[] = {{"digest/{algorithm}/{size}[/{workload}]", NULL, NULL, "hash"}};
    printf("\"digest\":{");
    json_ids(SP_IDS(IDS));
    printf(",\"algorithms\":[");
    for (size_t i = 0; i < sizeof(DIGESTS) / sizeof(DIGESTS[0]); i++) {
        json_row(i, DIGESTS[i].name, DIGESTS[i].needs);
        putchar('}');
    }
    printf("]");
    json_names("workloads", SP_ROWS(WORKLOADS));
    putchar('}');
}
