/* Kernel crypto through AF_ALG: afalg/ALG/OP/SIZE/WORKLOAD
 *
 *   ALG       a row of CIPHERS (cipher.c) or DIGESTS (digest.c) that names the kernel's algorithm
 *             (aes-128-cbc is cbc(aes), sha256 is sha256): the one table of facts
 *   OP        encrypt (ciphers) | hash (digests)
 *   WORKLOAD  kernel: one AF_ALG request per operation (sendmsg with the operation and IV, then read) on
 *               a socket bound and keyed once;
 *             user: the library through EVP, which is the cipher or digest family's record case of the
 *               same size, prepared and checked by that family.
 *
 * Before a kernel case is timed, the kernel's output is checked against the library's for the same key, IV
 * and input; a mismatch is an error, not a figure. A case AF_ALG cannot run — no AF_ALG socket (many
 * containers and VMs), or the kernel lacks the algorithm — is n/a with the errno named. Kernel work done
 * for the process is system time, which the runner's CPU time includes; an asynchronous driver's hardware
 * time shows in wall time only. Which driver serves the algorithm is /proc/crypto's to say (sslperf's
 * offload scan), not the socket's. */
#define _DEFAULT_SOURCE
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat.h"
#include "harness.h"
#include "families.h"

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

#define MAX_ALGS 32
#define MAX_REQUEST (64 * 1024)   /* one sendmsg; larger would need send and read interleaved */
#define IV_LEN 16
#define GCM_IV_LEN 12
#define AAD_LEN 13
#define TAG_LEN 16

static const char *const OPERATIONS[] = {"encrypt", "hash"};   /* index: a digest */
static const char *const SIDES[] = {"kernel", "user"};          /* the workloads */

/* The rows of the cipher and digest tables the kernel also offers. */
static size_t kernel_algs(kernel_alg *out)
{
    size_t n = cipher_kernel_algs(out, MAX_ALGS);
    return n + digest_kernel_algs(out + n, MAX_ALGS - n);
}

static int is_hash(const kernel_alg *a)
{
    return a->key_len == 0;
}

/* ---- the library's side ----------------------------------------------------- */

static prep_status prepare_user(const kernel_alg *a, size_t len, bench_case *out, prep_result *res)
{
    char id[CASE_ID_MAX];
    case_name name;
    if (is_hash(a))
        snprintf(id, sizeof(id), "digest/%s/%zu", a->name, len);
    else
        snprintf(id, sizeof(id), "cipher/%s/encrypt/%zu", a->name, len);
    if (!sp_split_name(id, &name))
        return prep_error(res, "cannot name the library's case %s", id);
    prep_status status = is_hash(a) ? prepare_digest(&name, out, res) : prepare_cipher(&name, out, res);
    if (status == PREP_OK && !out->note[0])
        snprintf(out->note, sizeof(out->note), "the library through EVP: %s", id);
    return status;
}

/* ---- the kernel's side ---------------------------------------------------------- */

typedef struct {
    kernel_alg alg;
    int aead;
    size_t len, iv_len, in_len, out_len;   /* AEAD requests are AAD || data; replies AAD || data || tag */
    unsigned char key[32], iv[IV_LEN], aad[AAD_LEN];
    unsigned char *in, *out;
    int tfm, op;                           /* the bound, keyed socket and the operation socket from it */
} kernel_state;

static const char *errno_name(int code)
{
    static const struct {
        const char *name;
        int code;
    } NAMES[] = {{"EAFNOSUPPORT", EAFNOSUPPORT}, {"EPROTONOSUPPORT", EPROTONOSUPPORT}, {"EPERM", EPERM},
                 {"EACCES", EACCES}, {"ENOENT", ENOENT}, {"EINVAL", EINVAL}, {"ENOMEM", ENOMEM},
                 {"EBUSY", EBUSY}, {"EOPNOTSUPP", EOPNOTSUPP}, {"EMSGSIZE", EMSGSIZE}, {"EBADMSG", EBADMSG}};
    static _Thread_local char other[24];
    for (size_t i = 0; i < sizeof(NAMES) / sizeof(NAMES[0]); i++)
        if (NAMES[i].code == code)
            return NAMES[i].name;
    snprintf(other, sizeof(other), "errno %d", code);
    return other;
}

/* n/a: what AF_ALG would not do here, with the errno it said so with. */
static prep_status kernel_na(prep_result *res, const char *what)
{
    int code = errno;
    return prep_na(res, "%s %s (%s)", what, errno_name(code), strerror(code));
}

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

/* One cipher request: the operation, the IV (and the AAD's length) as control messages, the data in the
 * same sendmsg; then the reply read whole. */
static int cipher_request(kernel_state *s)
{
    union {   /* aligned for cmsghdr */
        struct cmsghdr align;
        unsigned char buf[CMSG_SPACE(sizeof(uint32_t)) * 2 + CMSG_SPACE(sizeof(struct af_alg_iv) + IV_LEN)];
    } control;
    unsigned char ivbuf[sizeof(struct af_alg_iv) + IV_LEN];
    uint32_t op = ALG_OP_ENCRYPT, assoc = AAD_LEN, iv_len = (uint32_t)s->iv_len;
    struct iovec iov = {s->in, s->in_len};
    struct msghdr msg;

    memset(&control, 0, sizeof(control));
    memset(&msg, 0, sizeof(msg));
    memcpy(ivbuf, &iv_len, sizeof(iv_len));   /* struct af_alg_iv: __u32 ivlen, then the IV */
    memcpy(ivbuf + sizeof(struct af_alg_iv), s->iv, s->iv_len);
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.buf;
    msg.msg_controllen = CMSG_SPACE(sizeof(uint32_t)) + CMSG_SPACE(sizeof(struct af_alg_iv) + s->iv_len)
                         + (s->aead ? CMSG_SPACE(sizeof(uint32_t)) : 0);
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    put_cmsg(c, ALG_SET_OP, &op, sizeof(op));
    c = CMSG_NXTHDR(&msg, c);
    put_cmsg(c, ALG_SET_IV, ivbuf, sizeof(struct af_alg_iv) + s->iv_len);
    if (s->aead) {
        c = CMSG_NXTHDR(&msg, c);
        put_cmsg(c, ALG_SET_AEAD_ASSOCLEN, &assoc, sizeof(assoc));
    }
    return sendmsg(s->op, &msg, 0) == (ssize_t)s->in_len && read_full(s->op, s->out, s->out_len);
}

/* One operation; without MSG_MORE one send is a whole hash (init, update, final). */
static int request(kernel_state *s)
{
    if (!is_hash(&s->alg))
        return cipher_request(s);
    return send(s->op, s->in, s->in_len, 0) == (ssize_t)s->in_len && read_full(s->op, s->out, s->out_len);
}

/* Bind and key the algorithm, outside any timed region. */
static prep_status open_kernel(kernel_state *s, prep_result *res)
{
    const kernel_alg *a = &s->alg;
    struct sockaddr_alg sa;
    char what[160];

    memset(&sa, 0, sizeof(sa));
    sa.salg_family = AF_ALG;
    snprintf((char *)sa.salg_type, sizeof(sa.salg_type), "%s", a->type);
    snprintf((char *)sa.salg_name, sizeof(sa.salg_name), "%s", a->kernel);
    if ((s->tfm = socket(AF_ALG, SOCK_SEQPACKET, 0)) < 0)
        return kernel_na(res, "no AF_ALG socket here: socket(AF_ALG) fails with");
    if (bind(s->tfm, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        snprintf(what, sizeof(what), "the kernel offers no %s %s: bind fails with", a->type, a->kernel);
        return kernel_na(res, what);
    }
    if (a->key_len && setsockopt(s->tfm, SOL_ALG, ALG_SET_KEY, s->key, (socklen_t)a->key_len) != 0) {
        snprintf(what, sizeof(what), "the kernel's %s takes no %d-byte key: it fails with", a->kernel, a->key_len);
        return kernel_na(res, what);
    }
    if (s->aead && setsockopt(s->tfm, SOL_ALG, ALG_SET_AEAD_AUTHSIZE, NULL, TAG_LEN) != 0) {
        snprintf(what, sizeof(what), "the kernel's %s takes no %d-byte tag: it fails with", a->kernel, TAG_LEN);
        return kernel_na(res, what);
    }
    if ((s->op = accept(s->tfm, NULL, 0)) < 0) {
        snprintf(what, sizeof(what), "the kernel's %s gives no operation socket: accept fails with", a->kernel);
        return kernel_na(res, what);
    }
    return PREP_OK;
}

static void close_kernel(kernel_state *s)
{
    if (s->op >= 0)
        close(s->op);
    if (s->tfm >= 0)
        close(s->tfm);
}
#else
static int request(kernel_state *s)
{
    (void)s;
    return 0;
}

static prep_status open_kernel(kernel_state *s, prep_result *res)
{
    (void)s;
    errno = EAFNOSUPPORT;
    return kernel_na(res, "no AF_ALG in this harness (built without linux/if_alg.h), as if socket(AF_ALG) failed with");
}

static void close_kernel(kernel_state *s)
{
    (void)s;
}
#endif

static int run_kernel(void *state, uint64_t iters)
{
    for (uint64_t i = 0; i < iters; i++)
        if (!request(state))
            return 0;
    return 1;
}

static void release_kernel(void *p)
{
    kernel_state *s = p;
    close_kernel(s);
    free(s->in);
    free(s->out);
    free(s);
}

/* The library's bytes for the request's key, IV and input; what the kernel's reply must hold. */
static prep_status library_output(kernel_state *s, unsigned char *expected, size_t *expected_len,
                                  prep_result *res)
{
    unsigned char *data = s->in + (s->aead ? AAD_LEN : 0);
    unsigned int md_len = 0;
    if (is_hash(&s->alg)) {
        prep_status status = digest_reference(s->alg.name, data, s->len, expected, &md_len, res);
        *expected_len = md_len;
        return status;
    }
    *expected_len = s->len + (s->aead ? TAG_LEN : 0);
    return cipher_reference(s->alg.name, s->key, s->iv, s->aad, data, s->len, expected, res);
}

static prep_status prepare_kernel(const kernel_alg *a, size_t len, bench_case *out, prep_result *res)
{
    kernel_state *s;
    unsigned char *expected = NULL;
    size_t expected_len = 0;
    prep_status status;

    if (len > MAX_REQUEST)
        return prep_na(res, "one AF_ALG request carries at most %d bytes here", MAX_REQUEST);
    if (!(s = calloc(1, sizeof(*s))))
        return prep_error(res, "out of memory");
    s->alg = *a;
    s->tfm = s->op = -1;
    s->aead = strcmp(a->type, "aead") == 0;
    s->len = len;
    s->iv_len = s->aead ? GCM_IV_LEN : IV_LEN;
    s->in_len = len + (s->aead ? AAD_LEN : 0);
    s->out_len = is_hash(a) ? 0 : s->in_len + (s->aead ? TAG_LEN : 0);
    fill_pattern(s->key, sizeof(s->key), 1);
    fill_pattern(s->iv, sizeof(s->iv), 2);
    fill_pattern(s->aad, sizeof(s->aad), 3);
    s->in = malloc(s->in_len);
    s->out = malloc(s->in_len + TAG_LEN + EVP_MAX_MD_SIZE);
    expected = malloc(len + TAG_LEN + EVP_MAX_MD_SIZE);
    if (!s->in || !s->out || !expected) {
        free(expected);
        release_kernel(s);
        return prep_error(res, "out of memory");
    }
    if (s->aead)
        memcpy(s->in, s->aad, AAD_LEN);      /* the kernel takes an AEAD's AAD in front of the data */
    fill_pattern(s->in + (s->aead ? AAD_LEN : 0), len, 4);
    status = library_output(s, expected, &expected_len, res);   /* before the socket: a size CBC cannot take is n/a */
    if (status == PREP_OK && is_hash(a))
        s->out_len = expected_len;
    if (status == PREP_OK)
        status = open_kernel(s, res);
    errno = 0;
    if (status == PREP_OK && !request(s))
        status = prep_error(res, "an AF_ALG request to %s failed (%s)", a->kernel, errno ? errno_name(errno)
                                                                                        : "a short reply");
    else if (status == PREP_OK && memcmp(s->out + (s->aead ? AAD_LEN : 0), expected, expected_len) != 0)
        status = prep_error(res, "the kernel's %s output differs from the library's for the same key, IV and "
                            "input", a->kernel);
    free(expected);
    if (sp_take(status, out, s, release_kernel, UNIT_BYTES, len) != PREP_OK)
        return status;
    out->run = run_kernel;
    snprintf(out->note, sizeof(out->note), "AF_ALG %s %s: one request (sendmsg, read) per operation", a->type,
             a->kernel);
    snprintf(out->checked, sizeof(out->checked), "the kernel's %s output equals the library's (%zu bytes)",
             a->kernel, expected_len);
    return PREP_OK;
}

/* ---- the family --------------------------------------------------------------------- */

prep_status prepare_afalg(const case_name *name, bench_case *out, prep_result *res)
{
    kernel_alg algs[MAX_ALGS];
    size_t n = kernel_algs(algs), len;
    char list[300];

    if (name->n != 5)
        return prep_unknown(res, "afalg cases are afalg/ALG/encrypt|hash/SIZE/kernel|user");
    int row = sp_find(name->part[1], algs, n, sizeof(algs[0]));
    int op = sp_find(name->part[2], SP_ROWS(OPERATIONS)), side = sp_find(name->part[4], SP_ROWS(SIDES));
    if (row < 0)
        return prep_unknown(res, "no kernel algorithm \"%s\" (%s)", name->part[1],
                            sp_join(list, sizeof(list), ", ", algs, n, sizeof(algs[0])));
    if (op != is_hash(&algs[row]))
        return prep_unknown(res, "%s's operation is %s, not \"%s\"", algs[row].name, OPERATIONS[is_hash(&algs[row])],
                            name->part[2]);
    if (!parse_size(name->part[3], &len))
        return prep_unknown(res, "bad size \"%s\" (a positive number of bytes, at most 64 MiB)", name->part[3]);
    if (side < 0)
        return prep_unknown(res, "unknown workload \"%s\" (kernel or user)", name->part[4]);
    return side == 0 ? prepare_kernel(&algs[row], len, out, res) : prepare_user(&algs[row], len, out, res);
}

void list_afalg(void)
{
    static const id_template IDS[] = {{"afalg/{algorithm}/{operation}/{size}/{workload}", NULL, NULL, NULL}};
    kernel_alg algs[MAX_ALGS];
    size_t n = kernel_algs(algs);
    printf("\"afalg\":{");
    json_ids(SP_IDS(IDS));
    printf(",\"algorithms\":[");
    for (size_t i = 0; i < n; i++) {
        json_row(i, algs[i].name, NULL);
        printf(",\"kernel\":");
        json_string(algs[i].kernel);
        printf(",\"kind\":\"%s\",\"operation\":\"%s\"}", algs[i].type, OPERATIONS[is_hash(&algs[i])]);
    }
    printf("]");
    json_names("operations", SP_ROWS(OPERATIONS));
    json_names("workloads", SP_ROWS(SIDES));
    putchar('}');
}
