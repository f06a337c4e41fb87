/* Kernel crypto through AF_ALG against the library, per algorithm and size:
 *
 *   harness afalg-bench [--side both|user] [--seconds S] [--sizes N,N,...] [ALG...]
 *
 * ALG is the library's name (aes-128-cbc, aes-256-ctr, aes-128-gcm, sha256 …;
 * default: all of them). For each algorithm the kernel socket is bound and
 * keyed once, outside any timed loop; then per size the kernel's output is
 * checked against the library's for the same key, IV and input, and both are
 * timed for about --seconds: one request per operation (sendmsg with the
 * operation and IV, then read) against one EVP init/update/final. --side user
 * times only the library (what can be done where AF_ALG is missing).
 *
 * One JSON line each: a header ("afalg-bench", with whether AF_ALG sockets
 * can be opened and, if not, the errno), then "afalg-result" (ops, wall,
 * process CPU and its user/system split), "afalg-na" (the kernel or the
 * library lacks the algorithm) or "afalg-error" (a failure or a mismatch).
 * Exit status: 0, 1 if an algorithm failed, 2 usage, 3 AF_ALG unavailable
 * with --side both (nothing can be compared). */
#define _DEFAULT_SOURCE
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "compat.h"
#include "harness.h"

#if defined(__linux__) && defined(__has_include)
#if __has_include(<linux/if_alg.h>)
#define SP_HAVE_AF_ALG 1
#endif
#endif
#ifndef SP_HAVE_AF_ALG
#define SP_HAVE_AF_ALG 0
#endif

#if SP_HAVE_AF_ALG
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include <linux/if_alg.h>
#ifndef AF_ALG
#define AF_ALG 38
#endif
#ifndef SOL_ALG
#define SOL_ALG 279
#endif
#endif

#define MAX_SIZES 32
#define MAX_REQUEST (64 * 1024)   /* one sendmsg; larger would need send and read interleaved */
#define IV_LEN 16
#define GCM_IV_LEN 12
#define AAD_LEN 13
#define TAG_LEN 16

typedef enum { K_SKCIPHER, K_AEAD, K_HASH } alg_kind;
static const char *const KINDS[] = {"skcipher", "aead", "hash"};   /* the AF_ALG socket types */

typedef struct {
    const char *name;         /* the library's name, lower case */
    const char *fetch_name;   /* OpenSSL 3 fetch name */
    const char *kernel_name;  /* /proc/crypto name, bound through AF_ALG */
    alg_kind kind;
    int key_len;
    const EVP_CIPHER *(*cipher)(void);
    const EVP_MD *(*md)(void);
} offload_alg;

/* What the afalg and devcrypto engines can take over (CBC, CTR, digests),
 * plus GCM to see whether an AEAD would be worth it. Listed by `harness
 * list` on every platform, with or without AF_ALG. */
static const offload_alg ALGS[] = {
    {"aes-128-cbc", "AES-128-CBC", "cbc(aes)", K_SKCIPHER, 16, EVP_aes_128_cbc, NULL},
    {"aes-256-cbc", "AES-256-CBC", "cbc(aes)", K_SKCIPHER, 32, EVP_aes_256_cbc, NULL},
    {"aes-128-ctr", "AES-128-CTR", "ctr(aes)", K_SKCIPHER, 16, EVP_aes_128_ctr, NULL},
    {"aes-256-ctr", "AES-256-CTR", "ctr(aes)", K_SKCIPHER, 32, EVP_aes_256_ctr, NULL},
    {"aes-128-gcm", "AES-128-GCM", "gcm(aes)", K_AEAD, 16, EVP_aes_128_gcm, NULL},
    {"aes-256-gcm", "AES-256-GCM", "gcm(aes)", K_AEAD, 32, EVP_aes_256_gcm, NULL},
    {"sha1", "SHA1", "sha1", K_HASH, 0, NULL, EVP_sha1},
    {"sha256", "SHA256", "sha256", K_HASH, 0, NULL, EVP_sha256},
    {"sha512", "SHA512", "sha512", K_HASH, 0, NULL, EVP_sha512},
};

typedef struct {
    const offload_alg *alg;
    size_t len;
    unsigned char key[32], iv[IV_LEN], aad[AAD_LEN];
    unsigned char *in, *out;        /* the kernel reads and writes AAD || data || tag for AEADs */
    /* library */
    EVP_CIPHER *owned_cipher;
    EVP_MD *owned_md;
    const EVP_CIPHER *cipher;
    const EVP_MD *md;
    EVP_CIPHER_CTX *cctx;
    EVP_MD_CTX *mctx;
    /* kernel: the bound, keyed socket and the operation socket accepted from it */
    int tfm, op;
} offload_state;

typedef struct {
    uint64_t ops, wall_ns, cpu_ns, user_ns, sys_ns;
} timing;

/* ---- output ---------------------------------------------------------------- */

static void emit_status(const char *type, const offload_alg *alg, const char *side, size_t size, int err,
                        const char *reason)
{
    printf("{\"type\":\"%s\",\"alg\":", type);
    json_string(alg->name);
    printf(",\"kernel_name\":");
    json_string(alg->kernel_name);
    printf(",\"side\":\"%s\"", side);
    if (size)
        printf(",\"size\":%zu", size);
    if (err)
        printf(",\"errno\":%d", err);
    printf(",\"reason\":");
    json_string(reason);
    printf("}\n");
    fflush(stdout);
}

static void emit_timing(const offload_alg *alg, const char *side, size_t size, const timing *t)
{
    printf("{\"type\":\"afalg-result\",\"alg\":");
    json_string(alg->name);
    printf(",\"kernel_name\":");
    json_string(alg->kernel_name);
    printf(",\"kind\":\"%s\",\"side\":\"%s\",\"size\":%zu,\"ops\":%llu,\"wall_ns\":%llu,\"cpu_ns\":%llu,"
           "\"user_ns\":%llu,\"sys_ns\":%llu}\n",
           KINDS[alg->kind], side, size, (unsigned long long)t->ops, (unsigned long long)t->wall_ns,
           (unsigned long long)t->cpu_ns, (unsigned long long)t->user_ns, (unsigned long long)t->sys_ns);
    fflush(stdout);
}

/* ---- the library side --------------------------------------------------------- */

static int user_op(void *p)
{
    offload_state *s = p;
    int n, m;
    unsigned int md_len;
    switch (s->alg->kind) {
    case K_SKCIPHER:
        return EVP_CipherInit_ex(s->cctx, NULL, NULL, NULL, s->iv, 1)
               && EVP_CipherUpdate(s->cctx, s->out, &n, s->in, (int)s->len)
               && EVP_CipherFinal_ex(s->cctx, s->out + n, &m);
    case K_AEAD:
        /* out: ciphertext || tag, laid out as the kernel writes it after the AAD */
        return EVP_EncryptInit_ex(s->cctx, NULL, NULL, NULL, s->iv)
               && EVP_EncryptUpdate(s->cctx, NULL, &n, s->aad, AAD_LEN)
               && EVP_EncryptUpdate(s->cctx, s->out, &n, s->in + AAD_LEN, (int)s->len)
               && EVP_EncryptFinal_ex(s->cctx, s->out + n, &m)
               && EVP_CIPHER_CTX_ctrl(s->cctx, EVP_CTRL_AEAD_GET_TAG, TAG_LEN, s->out + s->len) > 0;
    case K_HASH:
        return EVP_DigestInit_ex(s->mctx, s->md, NULL) && EVP_DigestUpdate(s->mctx, s->in, s->len)
               && EVP_DigestFinal_ex(s->mctx, s->out, &md_len);
    }
    return 0;
}

/* Keyed once for encryption; the IV is set again on every operation. */
static prep_status user_setup(offload_state *s, prep_result *res)
{
    const offload_alg *a = s->alg;
    if (a->kind == K_HASH) {
#if SP_OSSL3
        s->md = s->owned_md = EVP_MD_fetch(NULL, a->fetch_name, NULL);
#else
        s->md = a->md();
#endif
        if (!s->md)
            return prep_na(res, "%s does not offer %s", sp_flavor(), a->fetch_name);
        if (!(s->mctx = EVP_MD_CTX_new()))
            return prep_error(res, "out of memory");
        return PREP_OK;
    }
#if SP_OSSL3
    s->cipher = s->owned_cipher = EVP_CIPHER_fetch(NULL, a->fetch_name, NULL);
#else
    s->cipher = a->cipher();
#endif
    if (!s->cipher)
        return prep_na(res, "%s does not offer %s", sp_flavor(), a->fetch_name);
    if (!(s->cctx = EVP_CIPHER_CTX_new()))
        return prep_error(res, "out of memory");
    if (a->kind == K_AEAD) {
        if (!EVP_EncryptInit_ex(s->cctx, s->cipher, NULL, NULL, NULL)
            || EVP_CIPHER_CTX_ctrl(s->cctx, EVP_CTRL_AEAD_SET_IVLEN, GCM_IV_LEN, NULL) <= 0
            || !EVP_EncryptInit_ex(s->cctx, NULL, NULL, s->key, NULL))
            return prep_error(res, "cannot key %s with a 12-byte IV", a->fetch_name);
    } else if (!EVP_CipherInit_ex(s->cctx, s->cipher, NULL, s->key, s->iv, 1)
               || !EVP_CIPHER_CTX_set_padding(s->cctx, 0)) {
        return prep_error(res, "cannot key %s", a->fetch_name);
    }
    return PREP_OK;
}

/* ---- the kernel side ------------------------------------------------------------ */

#if SP_HAVE_AF_ALG
static int read_full(int fd, unsigned char *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = read(fd, buf + got, len - got);
        if (n <= 0)
            return 0;
        got += (size_t)n;
    }
    return 1;
}

static void put_cmsg(struct cmsghdr *c, int type, const void *data, size_t len)
{
    c->cmsg_level = SOL_ALG;
    c->cmsg_type = type;
    c->cmsg_len = CMSG_LEN(len);
    memcpy(CMSG_DATA(c), data, len);
}

/* One request: the operation, the IV (and the AAD length) as control
 * messages, the data in the same sendmsg, then read the result. */
static int kernel_cipher_op(offload_state *s)
{
    union {   /* aligned for cmsghdr */
        struct cmsghdr align;
        unsigned char buf[CMSG_SPACE(sizeof(uint32_t)) * 2 + CMSG_SPACE(sizeof(struct af_alg_iv) + IV_LEN)];
    } control;
    int aead = s->alg->kind == K_AEAD;
    size_t iv_len = aead ? GCM_IV_LEN : IV_LEN, in_len = aead ? AAD_LEN + s->len : s->len;
    size_t out_len = aead ? AAD_LEN + s->len + TAG_LEN : s->len;
    unsigned char ivbuf[sizeof(struct af_alg_iv) + IV_LEN];
    uint32_t op = ALG_OP_ENCRYPT, assoc = AAD_LEN, iv_len32 = (uint32_t)iv_len;
    struct iovec iov = {s->in, in_len};
    struct msghdr msg;

    memset(&control, 0, sizeof(control));
    memset(&msg, 0, sizeof(msg));
    memcpy(ivbuf, &iv_len32, sizeof(iv_len32));   /* struct af_alg_iv: __u32 ivlen, then the IV */
    memcpy(ivbuf + sizeof(struct af_alg_iv), s->iv, iv_len);
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.buf;
    msg.msg_controllen = CMSG_SPACE(sizeof(uint32_t)) + CMSG_SPACE(sizeof(struct af_alg_iv) + iv_len)
                         + (aead ? CMSG_SPACE(sizeof(uint32_t)) : 0);
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    put_cmsg(c, ALG_SET_OP, &op, sizeof(op));
    c = CMSG_NXTHDR(&msg, c);
    put_cmsg(c, ALG_SET_IV, ivbuf, sizeof(struct af_alg_iv) + iv_len);
    if (aead) {
        c = CMSG_NXTHDR(&msg, c);
        put_cmsg(c, ALG_SET_AEAD_ASSOCLEN, &assoc, sizeof(assoc));
    }
    if (sendmsg(s->op, &msg, 0) != (ssize_t)in_len)
        return 0;
    return read_full(s->op, s->out, out_len);
}

static int kernel_op(void *p)
{
    offload_state *s = p;
    if (s->alg->kind != K_HASH)
        return kernel_cipher_op(s);
    /* Without MSG_MORE one send is a whole init + update + final. */
    if (send(s->op, s->in, s->len, 0) != (ssize_t)s->len)
        return 0;
    return read_full(s->op, s->out, (size_t)EVP_MD_size(s->md));
}

/* Bind and key the algorithm; PREP_NA when the kernel does not offer it. */
static prep_status kernel_setup(offload_state *s, prep_result *res, int *err)
{
    const offload_alg *a = s->alg;
    struct sockaddr_alg sa;

    memset(&sa, 0, sizeof(sa));
    sa.salg_family = AF_ALG;
    snprintf((char *)sa.salg_type, sizeof(sa.salg_type), "%s", KINDS[a->kind]);
    snprintf((char *)sa.salg_name, sizeof(sa.salg_name), "%s", a->kernel_name);
    *err = 0;
    if ((s->tfm = socket(AF_ALG, SOCK_SEQPACKET, 0)) < 0) {
        *err = errno;
        return prep_error(res, "socket(AF_ALG): %s", strerror(errno));
    }
    if (bind(s->tfm, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        *err = errno;
        if (errno == ENOENT)
            return prep_na(res, "the kernel offers no %s %s (bind: %s)", KINDS[a->kind], a->kernel_name,
                           strerror(errno));
        return prep_error(res, "bind(%s %s): %s", KINDS[a->kind], a->kernel_name, strerror(errno));
    }
    if (a->kind != K_HASH && setsockopt(s->tfm, SOL_ALG, ALG_SET_KEY, s->key, (socklen_t)a->key_len) != 0) {
        *err = errno;
        return prep_error(res, "setting a %d-byte %s key: %s", a->key_len, a->kernel_name, strerror(errno));
    }
    if (a->kind == K_AEAD && setsockopt(s->tfm, SOL_ALG, ALG_SET_AEAD_AUTHSIZE, NULL, TAG_LEN) != 0) {
        *err = errno;
        return prep_error(res, "setting a %d-byte %s tag: %s", TAG_LEN, a->kernel_name, strerror(errno));
    }
    if ((s->op = accept(s->tfm, NULL, 0)) < 0) {
        *err = errno;
        return prep_error(res, "accept(%s): %s", a->kernel_name, strerror(errno));
    }
    return PREP_OK;
}

/* 0 when AF_ALG sockets can be opened, else the errno. */
static int af_alg_errno(void)
{
    int fd = socket(AF_ALG, SOCK_SEQPACKET, 0);
    if (fd < 0)
        return errno ? errno : EINVAL;
    close(fd);
    return 0;
}
#else
static int kernel_op(void *p)
{
    (void)p;
    return 0;
}

static prep_status kernel_setup(offload_state *s, prep_result *res, int *err)
{
    (void)s;
    *err = EAFNOSUPPORT;
    return prep_error(res, "this harness was built without AF_ALG (not Linux, or no linux/if_alg.h)");
}

static int af_alg_errno(void)
{
    return EAFNOSUPPORT;
}
#endif

/* ---- timing -------------------------------------------------------------------- */

static int run_user(void *state, uint64_t iters)
{
    for (uint64_t i = 0; i < iters; i++)
        if (!user_op(state))
            return 0;
    return 1;
}

static int run_kernel(void *state, uint64_t iters)
{
    for (uint64_t i = 0; i < iters; i++)
        if (!kernel_op(state))
            return 0;
    return 1;
}

static uint64_t rusage_ns(const struct timeval *tv)
{
    return (uint64_t)tv->tv_sec * 1000000000ull + (uint64_t)tv->tv_usec * 1000ull;
}

/* Batches for at least `target_ns` wall time, their size found by a short
 * calibration that is also the warm-up (pages in the buffers, lets the
 * clock speed settle). Kernel work done on behalf of the process is system
 * CPU time; an asynchronous driver's hardware time is in the wall time only. */
static int time_ops(batch_fn run, void *state, uint64_t target_ns, timing *t)
{
    struct rusage r0, r1;
    uint64_t batch, wall, cpu;
    int ok = 1;

    memset(t, 0, sizeof(*t));
    if (!sp_calibrate(run, state, target_ns, SP_SHORT_PROBE(target_ns), &batch))
        return 0;
    getrusage(RUSAGE_SELF, &r0);
    while (ok && t->wall_ns < target_ns) {
        ok = sp_timed_batch(run, state, batch, &wall, &cpu);
        t->ops += batch;
        t->wall_ns += wall;
        t->cpu_ns += cpu;
    }
    getrusage(RUSAGE_SELF, &r1);
    t->user_ns = rusage_ns(&r1.ru_utime) - rusage_ns(&r0.ru_utime);
    t->sys_ns = rusage_ns(&r1.ru_stime) - rusage_ns(&r0.ru_stime);
    return ok;
}

/* ---- per algorithm ----------------------------------------------------------------- */

static void release_state(offload_state *s)
{
    EVP_CIPHER_CTX_free(s->cctx);
    EVP_MD_CTX_free(s->mctx);
#if SP_OSSL3
    EVP_CIPHER_free(s->owned_cipher);
    EVP_MD_free(s->owned_md);
#endif
#if SP_HAVE_AF_ALG
    if (s->op >= 0)
        close(s->op);
    if (s->tfm >= 0)
        close(s->tfm);
#endif
    free(s->in);
    free(s->out);
}

/* Input laid out as the kernel takes it: the AAD first for AEADs. */
static size_t input_offset(const offload_alg *a)
{
    return a->kind == K_AEAD ? AAD_LEN : 0;
}

/* Both sides give the same bytes for the same key, IV and input (the
 * kernel writes the AAD back in front of an AEAD's output). */
static int outputs_agree(offload_state *s, unsigned char *user_out)
{
    size_t len = s->alg->kind == K_HASH ? (size_t)EVP_MD_size(s->md)
                                        : s->len + (s->alg->kind == K_AEAD ? TAG_LEN : 0);
    if (!user_op(s))
        return 0;
    memcpy(user_out, s->out, len);
    return kernel_op(s) && memcmp(s->out + input_offset(s->alg), user_out, len) == 0;
}

/* Returns 0 if the algorithm failed (an error line was printed). */
static int bench_alg(const offload_alg *a, const size_t *sizes, int n_sizes, int kernel_too, uint64_t target_ns)
{
    offload_state s;
    prep_result res;
    int err = 0, ok = 1;
    size_t max = 0;

    for (int i = 0; i < n_sizes; i++)
        max = sizes[i] > max ? sizes[i] : max;
    memset(&s, 0, sizeof(s));
    s.alg = a;
    s.tfm = s.op = -1;
    fill_pattern(s.key, sizeof(s.key), 1);
    fill_pattern(s.iv, sizeof(s.iv), 2);
    fill_pattern(s.aad, sizeof(s.aad), 3);
    s.in = malloc(max + AAD_LEN + TAG_LEN);
    s.out = malloc(max + AAD_LEN + TAG_LEN + EVP_MAX_MD_SIZE);
    unsigned char *user_out = malloc(max + TAG_LEN + EVP_MAX_MD_SIZE);
    if (!s.in || !s.out || !user_out) {
        emit_status("afalg-error", a, "user", 0, 0, "out of memory");
        release_state(&s);
        free(user_out);
        return 0;
    }
    memcpy(s.in, s.aad, AAD_LEN);
    fill_pattern(s.in + input_offset(a), max, 4);

    prep_status st = user_setup(&s, &res);
    if (st != PREP_OK) {
        emit_status(st == PREP_NA ? "afalg-na" : "afalg-error", a, "user", 0, 0, res.reason);
        ok = st == PREP_NA;
    } else if (kernel_too && (st = kernel_setup(&s, &res, &err)) != PREP_OK) {
        emit_status(st == PREP_NA ? "afalg-na" : "afalg-error", a, "kernel", 0, err, res.reason);
        ok = st == PREP_NA;
    }
    for (int i = 0; ok && st == PREP_OK && i < n_sizes; i++) {
        timing t;
        s.len = sizes[i];
        if (a->kind == K_SKCIPHER && strstr(a->name, "cbc") && s.len % 16) {
            emit_status("afalg-na", a, kernel_too ? "both" : "user", s.len, 0,
                        "CBC without padding needs a multiple of 16 bytes");
            continue;
        }
        if (kernel_too && !outputs_agree(&s, user_out)) {
            emit_status("afalg-error", a, "kernel", s.len, 0,
                        "the kernel's output differs from the library's for the same key, IV and input "
                        "(or a request failed)");
            ok = 0;
            break;
        }
        if (kernel_too) {
            if (!time_ops(run_kernel, &s, target_ns, &t)) {
                emit_status("afalg-error", a, "kernel", s.len, errno, "a request failed while timing");
                ok = 0;
                break;
            }
            emit_timing(a, "kernel", s.len, &t);
        }
        if (!time_ops(run_user, &s, target_ns, &t)) {
            prep_error(&res, "an operation failed while timing");
            emit_status("afalg-error", a, "user", s.len, 0, res.reason);
            ok = 0;
            break;
        }
        emit_timing(a, "user", s.len, &t);
    }
    release_state(&s);
    free(user_out);
    return ok;
}

/* ---- the command ------------------------------------------------------------------- */

static int parse_sizes(const char *text, size_t *sizes, int *n)
{
    char buf[512], *save = NULL;
    snprintf(buf, sizeof(buf), "%s", text);
    *n = 0;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (*n == MAX_SIZES || !parse_size(tok, &sizes[*n]) || sizes[*n] > MAX_REQUEST)
            return 0;
        (*n)++;
    }
    return *n > 0;
}

static int usage(const char *why)
{
    fprintf(stderr, "afalg-bench: %s\nusage: harness afalg-bench [--side both|user] [--seconds S] "
                    "[--sizes N,N,...] [ALG...]\n", why);
    return 2;
}

int afalg_bench(int argc, char **argv)
{
    size_t sizes[MAX_SIZES] = {16, 64, 256, 1024, 8192, 16384};
    int n_sizes = 6, kernel_too = 1, failures = 0, first_alg = argc;
    double seconds = 0.5;

    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--side") == 0 && i + 1 < argc) {
            const char *side = argv[++i];
            if (strcmp(side, "both") != 0 && strcmp(side, "user") != 0)
                return usage("--side is both or user");
            kernel_too = side[0] == 'b';
        } else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
            seconds = atof(argv[++i]);
            if (!(seconds > 0 && seconds <= 600))
                return usage("--seconds must be above 0 and at most 600");
        } else if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) {
            if (!parse_sizes(argv[++i], sizes, &n_sizes))
                return usage("--sizes is a comma-separated list of 1 to 32 sizes, each 1 to 65536 bytes");
        } else if (argv[i][0] == '-') {
            return usage("unknown option");
        } else {
            first_alg = i;
            break;
        }
    }
    for (int i = first_alg; i < argc; i++) {
        if (sp_find(argv[i], SP_ROWS(ALGS)) < 0) {
            char names[300], why[400];
            snprintf(why, sizeof(why), "unknown algorithm (%s)", sp_join(names, sizeof(names), " ", SP_ROWS(ALGS)));
            return usage(why);
        }
    }

    int err = af_alg_errno();
    printf("{\"type\":\"afalg-bench\",\"library\":");
    json_string(OpenSSL_version(OPENSSL_VERSION));
    printf(",\"flavor\":\"%s\",\"side\":\"%s\",\"seconds\":%g,\"af_alg\":%s", sp_flavor(),
           kernel_too ? "both" : "user", seconds, err ? "false" : "true");
    if (err) {
        printf(",\"errno\":%d,\"reason\":", err);
        json_string(strerror(err));
    }
    printf("}\n");
    fflush(stdout);
    if (err && kernel_too)
        return 3;

    uint64_t target_ns = (uint64_t)(seconds * 1e9);
    for (size_t j = 0; j < sizeof(ALGS) / sizeof(ALGS[0]); j++) {
        int wanted = first_alg == argc;
        for (int i = first_alg; i < argc; i++)
            wanted |= strcmp(ALGS[j].name, argv[i]) == 0;
        if (wanted && !bench_alg(&ALGS[j], sizes, n_sizes, kernel_too, target_ns))
            failures++;
    }
    return failures ? 1 : 0;
}

void list_afalg(void)
{
    printf("\"afalg\":{\"algorithms\":[");
    for (size_t i = 0; i < sizeof(ALGS) / sizeof(ALGS[0]); i++) {
        json_row(i, ALGS[i].name, NULL);
        printf(",\"kernel\":");
        json_string(ALGS[i].kernel_name);
        printf(",\"kind\":\"%s\"}", KINDS[ALGS[i].kind]);
    }
    printf("]}");
}
