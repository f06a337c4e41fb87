/* What a TLS or DTLS connection negotiated, read from the handshake messages its client received (RFC 8446 §4,
 * RFC 5246 §7.4, RFC 9147 §5.2): the same reading for every backend whose library hands it the messages, so that
 * a group is named by its codepoint however the library spells it, and a library that cannot say which group it
 * used (OpenSSL 1.1.1) is still heard. Only what is read is set: the rest stays SP_UNKNOWN. */
#include <string.h>

#include "tls_names.h"

enum { SERVER_HELLO = 2, SERVER_KEY_EXCHANGE = 12, CERTIFICATE_VERIFY = 15 };
enum { EXT_SUPPORTED_VERSIONS = 43, EXT_KEY_SHARE = 51 };

/* A HelloRetryRequest is a ServerHello with this random (RFC 8446 §4.1.3). */
static const unsigned char HRR_RANDOM[32] = {
    0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91,
    0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c,
};

typedef struct {
    const unsigned char *p;
    size_t left;
    int ok;
} reader;

static unsigned take(reader *r, size_t n)
{
    unsigned v = 0;
    if (!r->ok || r->left < n) {
        r->ok = 0;
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        v = v << 8 | r->p[i];
    r->p += n;
    r->left -= n;
    return v;
}

static void skip(reader *r, size_t n)
{
    if (!r->ok || r->left < n)
        r->ok = 0;
    else
        r->p += n, r->left -= n;
}

void sp_wire_start(sp_negotiated *n, int dtls)
{
    (void)dtls;
    memset(n, 0, sizeof(*n));
    n->version = n->group = n->suite = n->signature = SP_UNKNOWN;
    n->hello_retry = SP_UNKNOWN;
    n->client_bytes = n->server_bytes = SP_UNKNOWN;     /* until the library reports a record */
}

static void server_hello(sp_negotiated *n, int dtls, reader *r)
{
    unsigned legacy = take(r, 2);
    int retry = r->ok && r->left >= 32 && memcmp(r->p, HRR_RANDOM, 32) == 0;
    skip(r, 32);
    skip(r, take(r, 1));                     /* the session id */
    unsigned suite = take(r, 2);
    skip(r, 1);                              /* compression */
    if (!r->ok)
        return;
    n->known = 1;
    n->hello_retry = retry || n->hello_retry == 1;
    n->suite = (int32_t)suite;
    n->version = (int32_t)legacy;
    /* TLS 1.2: the key exchange, if any, comes in a ServerKeyExchange; no signature until one does. */
    if (!retry)
        n->group = n->signature = 0;
    size_t ext_len = r->left >= 2 ? take(r, 2) : 0;
    reader ext = {r->p, ext_len <= r->left ? ext_len : 0, ext_len <= r->left};
    while (ext.ok && ext.left >= 4) {
        unsigned type = take(&ext, 2), len = take(&ext, 2);
        reader body = {ext.p, len <= ext.left ? len : 0, len <= ext.left};
        skip(&ext, len);
        if (type == EXT_SUPPORTED_VERSIONS && len == 2)
            n->version = (int32_t)take(&body, 2);
        else if (type == EXT_KEY_SHARE && len >= 2)
            n->group = (int32_t)take(&body, 2);      /* a ServerHello's share, or the HRR's selected group */
    }
    (void)dtls;
}

static void server_key_exchange(sp_negotiated *n, reader *r)
{
    /* ECDHE: curve type 3 (named_curve), the group, the public point; then TLS 1.2's SignatureAndHashAlgorithm. */
    if (take(r, 1) != 3)
        return;
    unsigned group = take(r, 2);
    skip(r, take(r, 1));
    unsigned signature = take(r, 2);
    if (r->ok)
        n->group = (int32_t)group, n->signature = (int32_t)signature;
}

void sp_wire_message(sp_negotiated *n, int dtls, const unsigned char *msg, size_t len)
{
    size_t header = dtls ? 12 : 4;           /* type, length (and DTLS's sequence and fragment fields) */
    if (len < header)
        return;
    reader r = {msg + header, len - header, 1};
    switch (msg[0]) {
    case SERVER_HELLO:
        server_hello(n, dtls, &r);
        break;
    case SERVER_KEY_EXCHANGE:
        server_key_exchange(n, &r);
        break;
    case CERTIFICATE_VERIFY: {
        unsigned signature = take(&r, 2);
        if (r.ok)
            n->signature = (int32_t)signature;
        break;
    }
    default:
        break;
    }
}

void sp_wire_record(sp_negotiated *n, int dtls, int sent, const unsigned char *header, size_t len)
{
    /* TLS: type, version, length (5 bytes); DTLS 1.2: type, version, epoch, sequence, length (13). DTLS 1.3's
     * unified headers are reported by libraries in the DTLS 1.2 form or not at all. */
    size_t at = dtls ? 11 : 3;
    if (len < at + 2)
        return;
    int64_t bytes = (int64_t)(at + 2) + (header[at] << 8 | header[at + 1]);
    int64_t *side = sent ? &n->client_bytes : &n->server_bytes;
    *side = (*side < 0 ? 0 : *side) + bytes;
}

void sp_wire_fallback(sp_negotiated *n, int32_t version, int32_t group, int32_t suite, int32_t signature)
{
    n->known = 1;
    if (n->version == SP_UNKNOWN)
        n->version = version;
    if (n->group == SP_UNKNOWN)
        n->group = group;
    if (n->suite == SP_UNKNOWN)
        n->suite = suite;
    if (n->signature == SP_UNKNOWN)
        n->signature = signature;
}
